//! Reading a byte stream into a buffer: as much as it holds, short only at the stream's end.

use std::io::{self, Read};

/// Reads from `r` until `buf` is full or the stream ends, retrying interrupted reads; returns
/// the bytes read (fewer than `buf.len()` only at the end). Unlike [`Read::read_exact`], a
/// short last piece is data, not an error: the caller decides what a partial record means.
///
/// ```
/// let mut buf = [0u8; 4];
/// assert_eq!(oxsort_io::read_full(&mut &b"abcdef"[..], &mut buf).unwrap(), 4);
/// assert_eq!(oxsort_io::read_full(&mut &b"ab"[..], &mut buf).unwrap(), 2);
/// ```
pub fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

//! Helpers shared by the drop-in `gensort` and `valsort` binaries: the original's command-line
//! conventions (options before operands, values attached to their option), made strict.
//!
//! Each binary includes this file as its own module and uses a different part of it.
#![allow(dead_code)]

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// A command-line problem: the message to print before the usage text (None: usage only).
pub struct UsageError(pub Option<String>);

/// Parses a plain decimal number (digits only) modulo 2^128, as gensort reads `-b`. Anything
/// else (empty, signs, `1e6`, `12abc`) is refused instead of being read up to the first
/// non-digit.
pub fn parse_decimal_wrapping(text: &[u8]) -> Option<u128> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(text.iter().fold(0u128, |v, d| v.wrapping_mul(10).wrapping_add((d - b'0') as u128)))
}

/// Parses a plain decimal number that must fit `u64`.
pub fn parse_decimal_u64(text: &[u8]) -> Option<u64> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// The file options of the multithreaded gensort/valsort build (`FILE,buf`, `FILE,dir`,
/// `FILE,trans=4m`, `FILE,count=4`). oxsort picks its own transfer sizes, so they are accepted
/// and ignored; a name whose suffix is not a list of these options is used as it is.
pub fn strip_file_options(name: OsString) -> PathBuf {
    let bytes = name.as_bytes();
    if let Some(comma) = bytes.iter().position(|&b| b == b',') {
        let opts = &bytes[comma + 1..];
        let known = |o: &[u8]| {
            o == b"buf"
                || o == b"dir"
                || o.strip_prefix(b"trans=").is_some_and(size_value)
                || o.strip_prefix(b"count=").and_then(parse_decimal_u64).is_some()
        };
        if comma > 0 && !opts.is_empty() && opts.split(|&b| b == b',').all(known) {
            return PathBuf::from(OsString::from_vec(bytes[..comma].to_vec()));
        }
    }
    PathBuf::from(name)
}

fn size_value(v: &[u8]) -> bool {
    let digits = match v.last() {
        Some(b'k' | b'm' | b'g' | b'K' | b'M' | b'G') => &v[..v.len() - 1],
        _ => v,
    };
    parse_decimal_u64(digits).is_some()
}

/// Parses `-tN` (N decimal, 0 = one thread per CPU).
pub fn parse_threads(value: &[u8]) -> Result<usize, UsageError> {
    parse_decimal_u64(value).map(|n| n as usize).ok_or_else(|| {
        UsageError(Some(format!(
            "-t needs a thread count attached, like -t4 (got '-t{}')",
            String::from_utf8_lossy(value)
        )))
    })
}

/// Prints `message` (if any) and the usage text to stderr and returns exit status 1.
pub fn usage_exit(program: &str, err: UsageError, usage: &str) -> i32 {
    if let Some(msg) = err.0 {
        eprintln!("{program}: {msg}");
        eprintln!();
    }
    eprint!("{usage}");
    1
}

//! File names that are not UTF-8 on GNU sort's command line.
//!
//! The command line is parsed as text (`&str`, as getopt's rules are written), so an argument
//! that is not UTF-8 is carried through the parser losslessly: each byte of it that is not part
//! of a valid UTF-8 sequence becomes one character of [`RAW_BYTE_BASE`]`..` (the end of Unicode's
//! last private-use plane, which no file name holds in practice), and [`path`] turns the text
//! back into the file's exact bytes where a file is opened.
//!
//! ```text
//!  b"r\xe9sum\xe9.txt" ──encode──▶ "r\u{10ffe9}sum\u{10ffe9}.txt" ──path──▶ b"r\xe9sum\xe9.txt"
//! ```

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// The character standing for the raw byte 0: byte `b` is `RAW_BYTE_BASE + b` (U+10FF00 to
/// U+10FFFF, private use).
const RAW_BYTE_BASE: u32 = 0x10_FF00;

/// `arg` as text: valid UTF-8 as it is, each other byte as its stand-in character.
pub fn encode(arg: &OsStr) -> String {
    let mut bytes = arg.as_bytes();
    let mut out = String::with_capacity(bytes.len());
    while !bytes.is_empty() {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let bad = e.error_len().unwrap_or(rest.len());
                for &b in &rest[..bad] {
                    out.push(char::from_u32(RAW_BYTE_BASE + u32::from(b)).unwrap_or('\u{fffd}'));
                }
                bytes = &rest[bad..];
            }
        }
    }
    out
}

/// The bytes [`encode`] made `s` from.
pub fn bytes(s: &str) -> Vec<u8> {
    if !s.chars().any(|c| u32::from(c) >= RAW_BYTE_BASE) {
        return s.as_bytes().to_vec();
    }
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match u32::from(c).checked_sub(RAW_BYTE_BASE) {
            Some(b) => out.push(b as u8),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

/// The file an encoded argument names.
pub fn path(s: &str) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_bytes_round_trip() {
        for raw in [&b"plain"[..], b"r\xe9sum\xe9", b"\xff", b"a\xc3", b"\xc3\xa4\xff\xfe"] {
            let s = encode(OsStr::from_bytes(raw));
            assert_eq!(bytes(&s), raw, "{s:?}");
        }
        assert_eq!(encode(OsStr::new("ä")), "ä");
    }
}

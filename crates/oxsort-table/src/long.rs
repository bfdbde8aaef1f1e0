//! Rows too long for one of the engine's records (an RDW holds at most 65,535 bytes): their
//! keys stay in the record, their payload goes to a file of its own and the record holds where.
//!
//! ```text
//!   a row that fits:   | RDW | key part (keys, sequence) | payload             | klen |
//!   a long row:        | RDW | key part (keys, sequence) | at | len | crc | klen | FFFF |
//!                                                          └── in the payload file ──┘
//!                                                              u64  u32  u32  u16   u16
//! ```
//!
//! A key part is never longer than [`crate::rows::MAX_ROW_BYTES`], so a closing `FFFF` is
//! never a key part's length: it marks the long form. The engine orders records by their key
//! part (which ends in the row's sequence number), so it never compares the reference. The
//! payload's CRC32 rides in the record and is checked when the payload is read back: the
//! record's own CRC (in the sort's row sum) covers the reference, this one the bytes it names.
//!
//! The payload file is anonymous (made with `O_TMPFILE` where the kernel has it, else removed
//! as soon as it is made) in the sort's first temp directory: nothing is left behind whatever
//! stops the sort. It is made at the first long row, appended to by the encoding lanes and read
//! at random by the decoder, one read per long row (each at least 64 KiB, so a read each costs
//! little beside the bytes).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The closing mark of a long row (in place of its key part's length).
pub(crate) const LONG_MARK: u16 = u16::MAX;

/// Bytes of a long row after its key part: offset, length, CRC32, key part length, mark.
pub(crate) const LONG_TAIL: usize = 8 + 4 + 4 + 2 + 2;

/// Where a long row's payload is: its place in the payload file, its length and CRC32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PayloadRef {
    pub(crate) at: u64,
    pub(crate) len: u32,
    pub(crate) crc: u32,
}

impl PayloadRef {
    /// The tail of a long row with a key part of `key_len` bytes.
    pub(crate) fn tail(self, key_len: usize) -> [u8; LONG_TAIL] {
        let mut t = [0u8; LONG_TAIL];
        t[..8].copy_from_slice(&self.at.to_be_bytes());
        t[8..12].copy_from_slice(&self.len.to_be_bytes());
        t[12..16].copy_from_slice(&self.crc.to_be_bytes());
        t[16..18].copy_from_slice(&(key_len as u16).to_be_bytes());
        t[18..].copy_from_slice(&LONG_MARK.to_be_bytes());
        t
    }

    /// The reference and key part length in a long row's tail.
    pub(crate) fn parse(tail: &[u8; LONG_TAIL]) -> (PayloadRef, usize) {
        let be4 = |i: usize| u32::from_be_bytes(tail[i..i + 4].try_into().expect("4 bytes"));
        let at = u64::from_be_bytes(tail[..8].try_into().expect("8 bytes"));
        let key_len = usize::from(u16::from_be_bytes([tail[16], tail[17]]));
        (PayloadRef { at, len: be4(8), crc: be4(12) }, key_len)
    }
}

/// The payload file of one sort, made at its first long row.
#[derive(Debug)]
pub(crate) struct LongRows {
    dir: PathBuf,
    file: OnceLock<Result<File, String>>,
    /// The end of what is written (or claimed by a write under way).
    end: Mutex<u64>,
    /// Counts the payloads' bytes without writing them (a plan's sample).
    measure: bool,
}

impl LongRows {
    /// Payloads of long rows will go to an anonymous file in `dir`.
    pub(crate) fn in_dir(dir: &Path) -> LongRows {
        LongRows {
            dir: dir.to_path_buf(),
            file: OnceLock::new(),
            end: Mutex::new(0),
            measure: false,
        }
    }

    /// Long rows' payloads counted ([`LongRows::bytes`]) and dropped: for a plan, which
    /// encodes some rows to learn their size and writes nothing.
    pub(crate) fn measuring() -> LongRows {
        LongRows { measure: true, ..LongRows::in_dir(Path::new("")) }
    }

    /// The payloads' bytes put so far.
    pub(crate) fn bytes(&self) -> u64 {
        *self.end.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn file(&self) -> Result<&File, String> {
        self.file
            .get_or_init(|| {
                tempfile::tempfile_in(&self.dir).map_err(|e| {
                    format!(
                        "making the file for rows longer than a record in {}: {}",
                        self.dir.display(),
                        oxsort_io::os_message(&e)
                    )
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Writes `payload`; returns where it is.
    pub(crate) fn put(&self, payload: &[u8]) -> Result<PayloadRef, String> {
        let len = u32::try_from(payload.len())
            .map_err(|_| format!("a row of {} bytes (at most 4 GiB)", payload.len()))?;
        let at = {
            let mut end = self.end.lock().unwrap_or_else(|e| e.into_inner());
            let at = *end;
            *end += u64::from(len);
            at
        };
        if self.measure {
            return Ok(PayloadRef { at, len, crc: 0 });
        }
        let file = self.file()?;
        file.write_all_at(payload, at).map_err(|e| {
            format!(
                "writing a long row's payload in {}: {}",
                self.dir.display(),
                oxsort_io::os_message(&e)
            )
        })?;
        Ok(PayloadRef { at, len, crc: crc32fast::hash(payload) })
    }

    /// Reads back the payload `r` names, checking its CRC32.
    pub(crate) fn get(&self, r: PayloadRef) -> Result<Vec<u8>, String> {
        let file = self.file()?;
        let mut buf = vec![0u8; r.len as usize];
        file.read_exact_at(&mut buf, r.at).map_err(|e| {
            format!(
                "reading a long row's payload at byte {} of its file in {}: {}",
                r.at,
                self.dir.display(),
                oxsort_io::os_message(&e)
            )
        })?;
        if crc32fast::hash(&buf) != r.crc {
            return Err(format!(
                "the payload of a long row ({} bytes at byte {} of its file) is not the one \
                 written",
                r.len, r.at
            ));
        }
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_come_back_as_written_and_a_changed_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = LongRows::in_dir(dir.path());
        let a = vec![7u8; 70_000];
        let b: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let (ra, rb) = (store.put(&a).unwrap(), store.put(&b).unwrap());
        assert_eq!(rb.at, a.len() as u64);
        assert_eq!(store.get(rb).unwrap(), b);
        assert_eq!(store.get(ra).unwrap(), a);
        // Nothing is left in the directory: the file has no name.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let (back, key_len) = PayloadRef::parse(&ra.tail(123));
        assert_eq!((back, key_len), (ra, 123));
        let wrong = PayloadRef { crc: ra.crc ^ 1, ..ra };
        assert!(store.get(wrong).unwrap_err().contains("not the one written"));
        assert_eq!(store.bytes(), (a.len() + b.len()) as u64);
    }

    #[test]
    fn measuring_counts_and_writes_nothing() {
        let m = LongRows::measuring();
        m.put(&[1u8; 70_000]).unwrap();
        let r = m.put(&[2u8; 80_000]).unwrap();
        assert_eq!((r.at, r.len, m.bytes()), (70_000, 80_000, 150_000));
        assert!(m.file.get().is_none());
    }
}

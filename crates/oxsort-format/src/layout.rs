//! Record layouts: how a byte stream splits into records.

use crate::error::SpecError;

/// The largest fixed record size oxsort accepts (`--record-size`).
pub const MAX_RECORD_SIZE: usize = 65_535;

/// The Sort Benchmark record size, the default layout.
pub const BENCHMARK_RECORD_SIZE: usize = 100;

/// How the input splits into records.
///
/// ```text
///  Fixed(4):        |rec0|rec1|rec2|
///  Delimited(b'\n'): rec0\nrec1\nrec2\n      (the final terminator may be missing)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordLayout {
    /// Every record is exactly this many bytes (1 to [`MAX_RECORD_SIZE`]).
    Fixed(usize),
    /// Records end with this byte (`b'\n'` for `--lines`, `0` for `--nul`). The terminator is
    /// not part of the key. As GNU sort does, a last record without its terminator is still a
    /// record, and it is written with the terminator added.
    Delimited(u8),
}

impl Default for RecordLayout {
    fn default() -> Self {
        RecordLayout::BENCHMARK
    }
}

impl RecordLayout {
    /// The 100-byte Sort Benchmark record.
    pub const BENCHMARK: RecordLayout = RecordLayout::Fixed(BENCHMARK_RECORD_SIZE);
    /// Newline-terminated records (`--lines`).
    pub const LINES: RecordLayout = RecordLayout::Delimited(b'\n');
    /// NUL-terminated records (`--nul`).
    pub const NUL: RecordLayout = RecordLayout::Delimited(0);

    /// A fixed layout, checking the size is 1 to [`MAX_RECORD_SIZE`].
    pub fn fixed(size: usize) -> Result<RecordLayout, SpecError> {
        if (1..=MAX_RECORD_SIZE).contains(&size) {
            Ok(RecordLayout::Fixed(size))
        } else {
            Err(SpecError::RecordSize { size })
        }
    }

    /// The fixed record size, if any.
    pub fn fixed_size(self) -> Option<usize> {
        match self {
            RecordLayout::Fixed(n) => Some(n),
            RecordLayout::Delimited(_) => None,
        }
    }

    /// The part of `record` a key is built from: for delimited layouts, the record without a
    /// trailing terminator (if present); for fixed layouts, the record itself.
    pub fn key_bytes(self, record: &[u8]) -> &[u8] {
        match self {
            RecordLayout::Delimited(t) => record.strip_suffix(&[t]).unwrap_or(record),
            RecordLayout::Fixed(_) => record,
        }
    }

    /// The terminator of delimited records, if any.
    pub fn terminator(self) -> Option<u8> {
        match self {
            RecordLayout::Fixed(_) => None,
            RecordLayout::Delimited(t) => Some(t),
        }
    }

    /// The records of `data`, a buffer of whole records (each delimited record with its
    /// terminator; the last one may lack it). Bytes after the last whole fixed record are not
    /// a record and are not returned.
    #[inline]
    pub fn records(self, data: &[u8]) -> Records<'_> {
        match self {
            RecordLayout::Fixed(n) => Records::Fixed(data.chunks_exact(n)),
            RecordLayout::Delimited(t) => Records::Delimited { data, t },
        }
    }
}

/// The records of a buffer of whole records: [`RecordLayout::records`].
#[derive(Debug, Clone)]
pub enum Records<'a> {
    /// Fixed-size records.
    Fixed(std::slice::ChunksExact<'a, u8>),
    /// Records ending with a terminator byte (the last one may lack it).
    Delimited {
        /// What is left.
        data: &'a [u8],
        /// The terminator.
        t: u8,
    },
}

impl<'a> Iterator for Records<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        match self {
            Records::Fixed(c) => c.next(),
            Records::Delimited { data, t } => {
                if data.is_empty() {
                    return None;
                }
                let end = memchr::memchr(*t, data).map_or(data.len(), |i| i + 1);
                let (rec, rest) = data.split_at(end);
                *data = rest;
                Some(rec)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_bounds() {
        assert!(RecordLayout::fixed(0).is_err());
        assert_eq!(RecordLayout::fixed(1), Ok(RecordLayout::Fixed(1)));
        assert_eq!(RecordLayout::fixed(65_535), Ok(RecordLayout::Fixed(65_535)));
        assert_eq!(
            RecordLayout::fixed(65_536).unwrap_err().to_string(),
            "record size must be 1 to 65535 bytes, found 65536"
        );
    }

    #[test]
    fn records_split_fixed_and_delimited_buffers() {
        let fixed: Vec<&[u8]> = RecordLayout::Fixed(2).records(b"abcde").collect();
        assert_eq!(fixed, [b"ab", b"cd"]);
        let lines: Vec<&[u8]> = RecordLayout::LINES.records(b"a\n\nbc").collect();
        assert_eq!(lines, [&b"a\n"[..], b"\n", b"bc"]);
        assert_eq!(RecordLayout::NUL.records(b"").count(), 0);
    }

    #[test]
    fn key_bytes_strip_the_terminator_only() {
        assert_eq!(RecordLayout::LINES.key_bytes(b"ab\n"), b"ab");
        assert_eq!(RecordLayout::LINES.key_bytes(b"ab"), b"ab");
        assert_eq!(RecordLayout::NUL.key_bytes(b"a\n\0"), b"a\n");
        assert_eq!(RecordLayout::Fixed(3).key_bytes(b"a\n\n"), b"a\n\n");
    }
}

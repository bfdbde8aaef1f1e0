//! Record layouts: how a byte stream splits into records.

use crate::error::SpecError;

/// The largest fixed record size oxsort accepts (`--record-size`).
pub const MAX_RECORD_SIZE: usize = 65_535;

/// The Sort Benchmark record size, the default layout.
pub const BENCHMARK_RECORD_SIZE: usize = 100;

/// Bytes of a record descriptor word (RDW): a 2-byte big-endian length that counts the RDW
/// itself, then 2 bytes that must be zero (z/OS `RECFM=V`/`VB`).
pub const RDW_BYTES: usize = 4;

/// How the input splits into records.
///
/// ```text
///  Fixed(4):        |rec0|rec1|rec2|
///  Delimited(b'\n'): rec0\nrec1\nrec2\n      (the final terminator may be missing)
///  Variable(max):    |00 09 00 00 d a t a d|00 06 00 00 x y|...   (each record's RDW
///                     holds its length, RDW included; record = RDW + data, ≤ max bytes)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordLayout {
    /// Every record is exactly this many bytes (1 to [`MAX_RECORD_SIZE`]).
    Fixed(usize),
    /// Records end with this byte (`b'\n'` for `--lines`, `0` for `--nul`). The terminator is
    /// not part of the key. As GNU sort does, a last record without its terminator is still a
    /// record, and it is written with the terminator added.
    Delimited(u8),
    /// Records that each start with a 4-byte RDW ([`RDW_BYTES`]): a big-endian length of the
    /// whole record (RDW included, at least 4) and two zero bytes, as z/OS `RECFM=V`/`VB`
    /// data sets hold them. The value is the longest record allowed (the `LRECL`, RDW
    /// included, 4 to [`MAX_RECORD_SIZE`]). Records keep their RDW: key and condition
    /// positions count it as bytes 1 to 4, so the data starts at position 5.
    Variable(usize),
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

    /// RDW-prefixed records of any length an RDW can hold.
    pub const VARIABLE: RecordLayout = RecordLayout::Variable(MAX_RECORD_SIZE);

    /// An RDW-prefixed layout, checking the longest record (RDW included) is 4 to
    /// [`MAX_RECORD_SIZE`] bytes.
    pub fn variable(max: usize) -> Result<RecordLayout, SpecError> {
        if (RDW_BYTES..=MAX_RECORD_SIZE).contains(&max) {
            Ok(RecordLayout::Variable(max))
        } else {
            Err(SpecError::VariableMax { max })
        }
    }

    /// The longest record of an RDW-prefixed layout (RDW included), if it is one.
    pub fn variable_max(self) -> Option<usize> {
        match self {
            RecordLayout::Variable(max) => Some(max),
            _ => None,
        }
    }

    /// The layout's name in plans and messages: `fixed 100-byte records`, `newline-terminated
    /// records`, `RDW-prefixed variable records (RECFM=VB, at most 300 bytes)`.
    pub fn describe(self) -> String {
        match self {
            RecordLayout::Fixed(n) => format!("fixed {n}-byte records"),
            RecordLayout::Delimited(b'\n') => "newline-terminated records".into(),
            RecordLayout::Delimited(0) => "NUL-terminated records".into(),
            RecordLayout::Delimited(t) => format!("records ending in byte 0x{t:02x}"),
            RecordLayout::Variable(max) => {
                format!(
                    "RDW-prefixed variable records (RECFM=VB, at most {max} bytes with the RDW)"
                )
            }
        }
    }

    /// The length of the record that starts `data`, if `data` holds all of it: for
    /// RDW-prefixed records, the length its RDW gives (read as at least [`RDW_BYTES`], so a
    /// bad RDW never stalls a reader; input records were checked when they were read).
    #[inline]
    pub fn first_len(self, data: &[u8]) -> Option<usize> {
        match self {
            RecordLayout::Fixed(r) => (data.len() >= r).then_some(r),
            RecordLayout::Delimited(t) => memchr::memchr(t, data).map(|i| i + 1),
            RecordLayout::Variable(_) => {
                let n = rdw_len(data)?;
                (data.len() >= n).then_some(n)
            }
        }
    }

    /// How many bytes of `data` to append to `partial` (the start of a record, not yet whole)
    /// to make it whole, or all of `data` when that is not enough.
    #[inline]
    pub fn bytes_to_complete(self, partial: &[u8], data: &[u8]) -> usize {
        match self {
            RecordLayout::Fixed(r) => r.saturating_sub(partial.len()).min(data.len()),
            RecordLayout::Delimited(t) => memchr::memchr(t, data).map_or(data.len(), |i| i + 1),
            RecordLayout::Variable(_) => {
                let need = match partial.len() {
                    0 => rdw_len(data),
                    1 => data.first().map(|&b| rdw_from(partial[0], b)),
                    _ => rdw_len(partial),
                };
                need.map_or(data.len(), |n| n.saturating_sub(partial.len()).min(data.len()))
            }
        }
    }

    /// Whether `partial` is exactly one whole record.
    #[inline]
    pub fn is_whole(self, partial: &[u8]) -> bool {
        match self {
            RecordLayout::Delimited(t) => partial.last() == Some(&t),
            _ => self.first_len(partial) == Some(partial.len()),
        }
    }

    /// Where the last whole record of `data` ends; `data` starts at a record boundary
    /// (RDW-prefixed records are walked from the start; delimited ones are cut after the
    /// last terminator).
    #[inline]
    pub fn whole_end(self, data: &[u8]) -> usize {
        match self {
            RecordLayout::Fixed(r) => data.len() / r * r,
            RecordLayout::Delimited(t) => memchr::memrchr(t, data).map_or(0, |i| i + 1),
            RecordLayout::Variable(_) => {
                let mut at = 0;
                while let Some(n) = self.first_len(&data[at..]) {
                    at += n;
                }
                at
            }
        }
    }

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
            RecordLayout::Delimited(_) | RecordLayout::Variable(_) => None,
        }
    }

    /// The part of `record` a key is built from: for delimited layouts, the record without a
    /// trailing terminator (if present); for fixed and RDW-prefixed layouts, the record itself
    /// (the RDW is bytes 1 to 4).
    pub fn key_bytes(self, record: &[u8]) -> &[u8] {
        match self {
            RecordLayout::Delimited(t) => record.strip_suffix(&[t]).unwrap_or(record),
            RecordLayout::Fixed(_) | RecordLayout::Variable(_) => record,
        }
    }

    /// The terminator of delimited records, if any.
    pub fn terminator(self) -> Option<u8> {
        match self {
            RecordLayout::Fixed(_) | RecordLayout::Variable(_) => None,
            RecordLayout::Delimited(t) => Some(t),
        }
    }

    /// The records of `data`, a buffer of whole records (each delimited record with its
    /// terminator; the last one may lack it). Bytes after the last whole fixed record are not
    /// a record and are not returned, nor are those after the last whole RDW-prefixed record.
    #[inline]
    pub fn records(self, data: &[u8]) -> Records<'_> {
        match self {
            RecordLayout::Fixed(n) => Records::Fixed(data.chunks_exact(n)),
            RecordLayout::Delimited(t) => Records::Delimited { data, t },
            RecordLayout::Variable(_) => Records::Variable { data },
        }
    }
}

/// The record length an RDW at the start of `data` gives (at least [`RDW_BYTES`]), if its
/// length bytes are there.
#[inline]
pub fn rdw_len(data: &[u8]) -> Option<usize> {
    match data {
        [a, b, ..] => Some(rdw_from(*a, *b)),
        _ => None,
    }
}

#[inline]
fn rdw_from(hi: u8, lo: u8) -> usize {
    (u16::from_be_bytes([hi, lo]) as usize).max(RDW_BYTES)
}

/// What is wrong with the RDW at the start of `data` (at least [`RDW_BYTES`] long) for a
/// layout whose records are at most `max` bytes; `None` when it is a good one. The record
/// may still run past the end of `data`.
pub fn rdw_problem(data: &[u8], max: usize) -> Option<String> {
    let len = u16::from_be_bytes([data[0], data[1]]) as usize;
    if len < RDW_BYTES {
        return Some(format!("its RDW gives a length of {len}, less than the RDW's own 4 bytes"));
    }
    if data[2] != 0 || data[3] != 0 {
        return Some(format!(
            "bytes 3-4 of its RDW are X'{:02X}{:02X}', not zero",
            data[2], data[3]
        ));
    }
    if len > max {
        return Some(format!("its RDW gives a length of {len}, more than the {max}-byte maximum"));
    }
    None
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
    /// RDW-prefixed records.
    Variable {
        /// What is left.
        data: &'a [u8],
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
            Records::Variable { data } => {
                let n = rdw_len(data)?;
                if n > data.len() {
                    return None;
                }
                let (rec, rest) = data.split_at(n);
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

    /// RDW-prefixed records from their data.
    fn vb(recs: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in recs {
            out.extend_from_slice(&((r.len() + 4) as u16).to_be_bytes());
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(r);
        }
        out
    }

    #[test]
    fn variable_records_split_by_their_rdw_however_cut() {
        let v = RecordLayout::VARIABLE;
        let data = vb(&[b"abc", b"", b"defgh"]);
        let recs: Vec<&[u8]> = v.records(&data).collect();
        assert_eq!(recs, [&data[..7], &data[7..11], &data[11..]]);
        assert_eq!(v.whole_end(&data), data.len());
        // Cut anywhere: the whole records before the cut, and completing the rest.
        for cut in 0..=data.len() {
            let end = v.whole_end(&data[..cut]);
            assert!([0, 7, 11, 20].contains(&end) && end <= cut, "cut {cut}: {end}");
            let mut partial = data[end..cut].to_vec();
            if partial.is_empty() {
                continue;
            }
            let mut rest = &data[cut..];
            for step in [1usize, 2, 100] {
                let take = v.bytes_to_complete(&partial, &rest[..step.min(rest.len())]);
                partial.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
            }
            assert!(v.is_whole(&partial), "cut {cut}");
            assert_eq!(v.first_len(&data[end..]), Some(partial.len()));
        }
        assert_eq!(v.first_len(&data[..6]), None);
        assert_eq!(v.first_len(&data[..1]), None);
    }

    #[test]
    fn rdw_problems_are_named() {
        assert_eq!(rdw_problem(&[0, 5, 0, 0], 10), None);
        assert_eq!(rdw_problem(&[0, 4, 0, 0], 4), None);
        assert!(rdw_problem(&[0, 3, 0, 0], 10).unwrap().contains("less than"));
        assert!(rdw_problem(&[0, 5, 0, 1], 10).unwrap().contains("X'0001', not zero"));
        assert!(rdw_problem(&[0, 11, 0, 0], 10).unwrap().contains("10-byte maximum"));
        assert!(RecordLayout::variable(3).is_err());
        assert_eq!(RecordLayout::variable(300), Ok(RecordLayout::Variable(300)));
    }

    #[test]
    fn key_bytes_strip_the_terminator_only() {
        assert_eq!(RecordLayout::LINES.key_bytes(b"ab\n"), b"ab");
        assert_eq!(RecordLayout::LINES.key_bytes(b"ab"), b"ab");
        assert_eq!(RecordLayout::NUL.key_bytes(b"a\n\0"), b"a\n");
        assert_eq!(RecordLayout::Fixed(3).key_bytes(b"a\n\n"), b"a\n\n");
    }
}

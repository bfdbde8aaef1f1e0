//! The valsort checksum: the 128-bit sum of the zlib CRC-32 of every 100-byte record.

use std::fmt;
use std::ops::{Add, AddAssign};

use crate::RECORD_LEN;

/// Zlib CRC-32 (IEEE, reflected, as `crc32(0, record, 100)`) of one record.
#[inline(always)]
pub fn record_crc(record: &[u8]) -> u32 {
    crc32fast::hash(record)
}

/// A running valsort checksum: the unsigned 128-bit sum of per-record CRC-32s.
///
/// The sum does not depend on record order, so a sort's input and output must have the same
/// checksum; partial checksums of disjoint pieces [`merge`](Checksum::merge) by addition.
/// It prints the way gensort and valsort print it: lowercase hex without leading zeros; when the
/// high 64 bits are non-zero they come first, then the low 64 bits as 16 zero-padded digits.
///
/// ```
/// use oxsort_gensort::{record_crc, Checksum};
/// let mut sum = Checksum::new();
/// sum.add_records(&[0u8; 300]);
/// assert_eq!(sum.value(), 3 * record_crc(&[0u8; 100]) as u128);
/// assert_eq!(Checksum::from_value(1 << 64 | 5).to_string(), "10000000000000005");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Checksum(u128);

impl Checksum {
    /// The empty sum (0).
    pub const fn new() -> Checksum {
        Checksum(0)
    }

    /// A checksum with the given 128-bit value.
    pub const fn from_value(value: u128) -> Checksum {
        Checksum(value)
    }

    /// The 128-bit value.
    pub const fn value(self) -> u128 {
        self.0
    }

    /// Adds one record (any length is accepted; benchmark records are 100 bytes).
    #[inline(always)]
    pub fn add_record(&mut self, record: &[u8]) {
        self.0 = self.0.wrapping_add(record_crc(record) as u128);
    }

    /// Adds every 100-byte record of `records`.
    ///
    /// # Panics
    /// If `records.len()` is not a multiple of 100.
    pub fn add_records(&mut self, records: &[u8]) {
        assert!(
            records.len() % RECORD_LEN == 0,
            "length {} is not a multiple of 100",
            records.len()
        );
        // A u64 cannot overflow for fewer than 2^32 records, so sum there and widen once.
        let mut sum = 0u64;
        for rec in records.chunks_exact(RECORD_LEN) {
            sum += record_crc(rec) as u64;
        }
        self.0 = self.0.wrapping_add(sum as u128);
    }

    /// Adds another partial checksum (of records disjoint from this one's).
    pub fn merge(&mut self, other: Checksum) {
        self.0 = self.0.wrapping_add(other.0);
    }

    /// The checksum of `records` (a whole number of 100-byte records).
    pub fn of(records: &[u8]) -> Checksum {
        let mut c = Checksum::new();
        c.add_records(records);
        c
    }
}

impl Add for Checksum {
    type Output = Checksum;
    fn add(self, rhs: Checksum) -> Checksum {
        Checksum(self.0.wrapping_add(rhs.0))
    }
}

impl AddAssign for Checksum {
    fn add_assign(&mut self, rhs: Checksum) {
        self.merge(rhs);
    }
}

/// Compares with a raw 128-bit sum (for instance one read from a summary or a report).
impl PartialEq<u128> for Checksum {
    fn eq(&self, other: &u128) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hi = (self.0 >> 64) as u64;
        let lo = self.0 as u64;
        if hi != 0 {
            write!(f, "{hi:x}{lo:016x}")
        } else {
            write!(f, "{lo:x}")
        }
    }
}

impl fmt::LowerHex for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(Checksum::new().to_string(), "0");
        assert_eq!(Checksum::from_value(0x1ea6370b955).to_string(), "1ea6370b955");
        assert_eq!(Checksum::from_value((3 << 64) | 0xab).to_string(), "300000000000000ab");
    }

    #[test]
    fn crc_is_zlib() {
        // Python: zlib.crc32(b"123456789") == 0xcbf43926
        assert_eq!(record_crc(b"123456789"), 0xcbf43926);
    }
}

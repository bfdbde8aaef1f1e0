//! Streaming validation: the order, duplicate and checksum counting of valsort 1.5.

use std::cmp::Ordering;

use crate::{record_crc, Checksum, Error, Summary, KEY_LEN, RECORD_LEN};

/// A key as two integers whose tuple order is the bytewise (`memcmp`) order of the 10 bytes.
#[inline(always)]
fn key_of(rec: &[u8]) -> (u64, u16) {
    let hi = u64::from_be_bytes(rec[..8].try_into().expect("8 bytes"));
    let lo = u16::from_be_bytes(rec[8..KEY_LEN].try_into().expect("2 bytes"));
    (hi, lo)
}

/// Validates records fed in order, in slices of any length (a record may be split between two
/// calls), and produces the same counts as valsort.
///
/// The sort engine feeds its output through one of these as it writes it; file validation runs
/// one per range and merges the resulting [`Summary`]s.
///
/// ```
/// use oxsort_gensort::{generate, Kind, Validator};
/// let mut data = vec![0u8; 100 * 1000];
/// generate(Kind::Binary, 0, &mut data);
/// let mut v = Validator::new();
/// v.feed(&data[..150]);
/// v.feed(&data[150..]);
/// let summary = v.finish().unwrap();
/// assert_eq!(summary.records, 1000);
/// assert_eq!(summary.checksum.to_string(), "1ea6370b955");
/// assert_eq!(summary.first_unordered(), Some(2));
/// ```
#[derive(Clone, Debug)]
pub struct Validator {
    summary: Summary,
    prev_key: (u64, u16),
    /// Bytes of a record split across `feed` calls.
    pending: [u8; RECORD_LEN],
    pending_len: usize,
}

impl Default for Validator {
    fn default() -> Validator {
        Validator::new()
    }
}

impl Validator {
    /// A validator that has seen nothing.
    pub fn new() -> Validator {
        Validator {
            summary: Summary::new(),
            prev_key: (0, 0),
            pending: [0; RECORD_LEN],
            pending_len: 0,
        }
    }

    /// Feeds the next bytes of the record stream.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        if self.pending_len > 0 {
            let take = (RECORD_LEN - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&bytes[..take]);
            self.pending_len += take;
            bytes = &bytes[take..];
            if self.pending_len < RECORD_LEN {
                return;
            }
            let rec = self.pending;
            self.pending_len = 0;
            self.feed_records(&rec);
        }
        let whole = bytes.len() - bytes.len() % RECORD_LEN;
        self.feed_records(&bytes[..whole]);
        let rest = &bytes[whole..];
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    /// Feeds whole records.
    ///
    /// # Panics
    /// If `records.len()` is not a multiple of 100 or a partial record is pending from
    /// [`feed`](Validator::feed).
    pub fn feed_records(&mut self, records: &[u8]) {
        assert!(
            records.len() % RECORD_LEN == 0,
            "length {} is not a multiple of 100",
            records.len()
        );
        assert!(self.pending_len == 0, "feed_records with a partial record pending");
        if records.is_empty() {
            return;
        }
        let s = &mut self.summary;
        let mut rest = records;
        if s.records == 0 {
            s.first_record.copy_from_slice(&records[..RECORD_LEN]);
            s.checksum.add_record(&records[..RECORD_LEN]);
            self.prev_key = key_of(records);
            s.records = 1;
            rest = &records[RECORD_LEN..];
        }
        let mut prev = self.prev_key;
        let mut crc_sum = 0u64;
        let mut dups = 0u64;
        let mut unordered = 0u64;
        // u64 counters cannot overflow within one call (< 2^32 records fit in memory).
        for (i, rec) in rest.chunks_exact(RECORD_LEN).enumerate() {
            crc_sum += record_crc(rec) as u64;
            let k = key_of(rec);
            match prev.cmp(&k) {
                Ordering::Less => {}
                Ordering::Equal => dups += 1,
                Ordering::Greater => {
                    if unordered == 0 && s.unordered == 0 {
                        s.first_unordered = s.records + i as u128;
                    }
                    unordered += 1;
                }
            }
            prev = k;
        }
        self.prev_key = prev;
        s.records += (rest.len() / RECORD_LEN) as u128;
        s.checksum.merge(Checksum::from_value(crc_sum as u128));
        s.duplicates += dups as u128;
        s.unordered += unordered as u128;
        s.last_record.copy_from_slice(&records[records.len() - RECORD_LEN..]);
    }

    /// The counts so far (whole records only).
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Ends the stream. Errors: [`Error::PartialRecord`] if the bytes fed were not a whole
    /// number of records. An empty stream gives an empty summary (valsort's "at least one
    /// record" rule is the caller's to apply; file validation does).
    pub fn finish(self) -> Result<Summary, Error> {
        if self.pending_len != 0 {
            return Err(Error::PartialRecord { first_unordered: self.summary.first_unordered() });
        }
        Ok(self.summary)
    }
}

/// Validates an in-memory buffer of whole records.
///
/// # Panics
/// If `records.len()` is not a multiple of 100.
pub fn validate_records(records: &[u8]) -> Summary {
    let mut v = Validator::new();
    v.feed_records(records);
    v.summary
}

//! The 280-byte partition summary of `valsort -o`, and merging summaries in partition order.

use std::cmp::Ordering;

use crate::{Checksum, KEY_LEN, RECORD_LEN};

/// Size of one serialized [`Summary`].
pub const SUMMARY_LEN: usize = 280;

/// What validation found in one contiguous piece of records, and what is needed to combine it
/// with its neighbours.
///
/// Byte layout (valsort 1.5 on x86-64; each u128 is stored as two little-endian u64s, **high
/// half first**):
///
/// ```text
///   0        16         32      48      64        80              180             280
///   +--------+----------+-------+-------+---------+---------------+---------------+
///   | first_ | unordered| recs  | dups  | checksum| first record  | last record   |
///   | unord. |          |       |       |         | (100 bytes)   | (100 bytes)   |
///   +--------+----------+-------+-------+---------+---------------+---------------+
/// ```
///
/// Merging (`merge`) follows valsort `-s`: the boundary between two pieces compares the last key
/// of the left with the first key of the right, then counts add up. Merging is associative, so
/// summaries can be merged in a tree (hierarchical validation), but never reordered.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Summary {
    /// 0-based index of the first record whose key is smaller than its predecessor's, or 0 if
    /// there is none (record 0 can never be unordered).
    pub first_unordered: u128,
    /// Number of adjacent pairs whose keys descend.
    pub unordered: u128,
    /// Number of records.
    pub records: u128,
    /// Number of adjacent pairs with equal keys.
    pub duplicates: u128,
    /// Sum of the records' CRC-32s.
    pub checksum: Checksum,
    /// The first record (zero when `records == 0`).
    pub first_record: [u8; RECORD_LEN],
    /// The last record (zero when `records == 0`).
    pub last_record: [u8; RECORD_LEN],
}

impl Default for Summary {
    fn default() -> Summary {
        Summary::new()
    }
}

fn put(buf: &mut [u8], at: usize, v: u128) {
    buf[at..at + 8].copy_from_slice(&((v >> 64) as u64).to_le_bytes());
    buf[at + 8..at + 16].copy_from_slice(&(v as u64).to_le_bytes());
}

fn get(buf: &[u8], at: usize) -> u128 {
    let hi = u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"));
    let lo = u64::from_le_bytes(buf[at + 8..at + 16].try_into().expect("8 bytes"));
    ((hi as u128) << 64) | lo as u128
}

impl Summary {
    /// The summary of no records: the identity of [`merge`](Summary::merge).
    pub const fn new() -> Summary {
        Summary {
            first_unordered: 0,
            unordered: 0,
            records: 0,
            duplicates: 0,
            checksum: Checksum::new(),
            first_record: [0; RECORD_LEN],
            last_record: [0; RECORD_LEN],
        }
    }

    /// The first unordered record, if there is one.
    pub fn first_unordered(&self) -> Option<u128> {
        (self.first_unordered != 0).then_some(self.first_unordered)
    }

    /// True when no record is out of order (valsort's exit status 0).
    pub fn is_sorted(&self) -> bool {
        self.unordered == 0
    }

    /// Serializes to valsort's 280-byte format.
    pub fn to_bytes(&self) -> [u8; SUMMARY_LEN] {
        let mut b = [0u8; SUMMARY_LEN];
        put(&mut b, 0, self.first_unordered);
        put(&mut b, 16, self.unordered);
        put(&mut b, 32, self.records);
        put(&mut b, 48, self.duplicates);
        put(&mut b, 64, self.checksum.value());
        b[80..180].copy_from_slice(&self.first_record);
        b[180..280].copy_from_slice(&self.last_record);
        b
    }

    /// Reads valsort's 280-byte format.
    pub fn from_bytes(b: &[u8; SUMMARY_LEN]) -> Summary {
        Summary {
            first_unordered: get(b, 0),
            unordered: get(b, 16),
            records: get(b, 32),
            duplicates: get(b, 48),
            checksum: Checksum::from_value(get(b, 64)),
            first_record: b[80..180].try_into().expect("100 bytes"),
            last_record: b[180..280].try_into().expect("100 bytes"),
        }
    }

    /// Appends the summary of the records that directly follow this one's (valsort `-s`).
    ///
    /// An empty summary (0 records) on either side is the identity; valsort never writes one.
    pub fn merge(&mut self, next: &Summary) {
        if next.records == 0 {
            return;
        }
        if self.records == 0 {
            *self = next.clone();
            return;
        }
        match self.last_record[..KEY_LEN].cmp(&next.first_record[..KEY_LEN]) {
            Ordering::Equal => self.duplicates = self.duplicates.wrapping_add(1),
            Ordering::Greater => {
                self.unordered = self.unordered.wrapping_add(1);
                if self.first_unordered == 0 {
                    self.first_unordered = self.records;
                }
            }
            Ordering::Less => {}
        }
        if self.first_unordered == 0 && next.first_unordered != 0 {
            self.first_unordered = self.records.wrapping_add(next.first_unordered);
        }
        self.unordered = self.unordered.wrapping_add(next.unordered);
        self.records = self.records.wrapping_add(next.records);
        self.duplicates = self.duplicates.wrapping_add(next.duplicates);
        self.checksum += next.checksum;
        self.last_record = next.last_record;
    }

    /// Parses and merges concatenated summaries, in order (the input of `valsort -s`).
    ///
    /// Errors: [`Error::Empty`](crate::Error::Empty) for no bytes,
    /// [`Error::PartialSummary`](crate::Error::PartialSummary) when the length is not a
    /// multiple of 280.
    pub fn merge_all(bytes: &[u8]) -> crate::Result<Summary> {
        if bytes.is_empty() {
            return Err(crate::Error::Empty);
        }
        let mut total = Summary::new();
        let mut chunks = bytes.chunks_exact(SUMMARY_LEN);
        for chunk in &mut chunks {
            total.merge(&Summary::from_bytes(chunk.try_into().expect("280 bytes")));
        }
        if !chunks.remainder().is_empty() {
            return Err(crate::Error::PartialSummary { first_unordered: total.first_unordered() });
        }
        Ok(total)
    }

    /// The text valsort prints for this result (each line ends with `\n`):
    ///
    /// ```text
    /// [First unordered record is record N]
    /// Records: N
    /// Checksum: HEX
    /// ERROR - there are N unordered records      (if any are unordered)
    /// Duplicate keys: N                          (otherwise)
    /// SUCCESS - all records are in order
    /// ```
    pub fn report(&self) -> String {
        let mut out = String::new();
        if let Some(first) = self.first_unordered() {
            out.push_str(&first_unordered_line(first));
        }
        out.push_str(&format!("Records: {}\nChecksum: {}\n", self.records, self.checksum));
        if self.unordered > 0 {
            out.push_str(&format!("ERROR - there are {} unordered records\n", self.unordered));
        } else {
            out.push_str(&format!(
                "Duplicate keys: {}\nSUCCESS - all records are in order\n",
                self.duplicates
            ));
        }
        out
    }
}

/// The line valsort prints when it finds the first unordered record.
pub fn first_unordered_line(index: u128) -> String {
    format!("First unordered record is record {index}\n")
}

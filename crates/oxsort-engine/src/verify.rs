//! Self-verification: every record read is summed into a checksum; every record written is
//! summed again and checked in order against its neighbour. The sort fails unless both sums match
//! and nothing is out of order.
//!
//! The checksum is valsort's: the 128-bit sum of each record's CRC32 (zlib/IEEE), so for
//! Sort Benchmark records it equals `valsort`'s `Checksum:` line and `gensort -c`.

use oxsort_format::{KeyKind, Prefix, RecordLayout, SortKey};

/// The sum of the CRC32 of every record in `data` (whole records of `record_size` bytes).
pub fn checksum_records(data: &[u8], record_size: usize) -> u128 {
    oxsort_kernels::crc32_sum_fixed(data, record_size)
}

/// Records checked per block by [`OrderCheck::of`]: their CRCs are summed in one interleaved
/// call, then their order is checked while they are still in L1 (256 records of 100 bytes are
/// 25.6 KB).
const CHECK_BLOCK_RECORDS: usize = 256;

/// Order facts of a contiguous stretch of output: valsort's counts, for any record format.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OrderCheck {
    /// Records seen.
    pub records: u64,
    /// Bytes they hold.
    pub bytes: u64,
    /// Sum of their CRC32s.
    pub checksum: u128,
    /// Adjacent pairs out of order.
    pub unordered: u64,
    /// Index of the first record that is smaller than the one before it.
    pub first_unordered: Option<u64>,
    /// Adjacent pairs with equal keys.
    pub duplicates: u64,
    /// Whole key of the first record, as compared.
    pub first_key: Vec<u8>,
    /// Whole key of the last record, as compared.
    pub last_key: Vec<u8>,
    /// Records dropped as duplicates before this stretch was written (`unique`).
    pub dropped: u64,
    /// Sum of the CRC32s of the dropped records.
    pub dropped_checksum: u128,
}

impl OrderCheck {
    /// Checks that the records written and dropped are the `records` read (when the caller
    /// checks order and contents itself).
    pub(crate) fn verify_count(&self, records: u64) -> Result<(), crate::error::EngineError> {
        if self.records + self.dropped != records {
            return Err(crate::error::EngineError::Verify(format!(
                "wrote {} records (and dropped {}), read {records}",
                self.records, self.dropped
            )));
        }
        Ok(())
    }

    /// The sort's verdict on its output: what was written (plus the duplicates dropped) is
    /// the `records` read with their `checksum`, in order, and without duplicate keys when
    /// the sort is `unique`.
    pub(crate) fn verify(
        &self,
        records: u64,
        checksum: u128,
        unique: bool,
    ) -> Result<(), crate::error::EngineError> {
        use crate::error::EngineError;
        if self.records + self.dropped != records || self.checksum_differs(checksum) {
            return Err(EngineError::Verify(format!(
                "wrote {} records (and dropped {}) with checksum {}, read {} records with checksum {}",
                self.records,
                self.dropped,
                checksum_hex(self.checksum + self.dropped_checksum),
                records,
                checksum_hex(checksum)
            )));
        }
        if unique && self.duplicates > 0 {
            return Err(EngineError::Verify(format!(
                "{} duplicate keys remain in the output of a unique sort",
                self.duplicates
            )));
        }
        if self.unordered > 0 {
            return Err(EngineError::Verify(format!(
                "{} records out of order in the output, the first at record {}",
                self.unordered,
                self.first_unordered.unwrap_or(0)
            )));
        }
        Ok(())
    }

    /// Whether what was written (plus the duplicates dropped) sums to another checksum than
    /// the `checksum` read.
    pub(crate) fn checksum_differs(&self, checksum: u128) -> bool {
        self.checksum + self.dropped_checksum != checksum
    }

    /// Checks `data` (whole records) on its own, ordered by `keys`.
    pub fn of(data: &[u8], keys: &SortKey) -> OrderCheck {
        let Some(mut fixed) = FixedCheck::new(keys) else {
            // Copy mode, lines, normalized keys: record by record, as the gather checks them.
            let mut b = OrderBuilder::new(keys);
            for rec in keys.records(data) {
                b.push(rec);
            }
            return b.finish();
        };
        for block in data.chunks(CHECK_BLOCK_RECORDS * fixed.record_size) {
            fixed.push_block(block);
        }
        fixed.finish()
    }

    #[inline]
    fn compare_step(&mut self, prev: &[u8], cur: &[u8], i: usize) {
        match prev.cmp(cur) {
            std::cmp::Ordering::Greater => {
                self.unordered += 1;
                self.first_unordered.get_or_insert(i as u64);
            }
            std::cmp::Ordering::Equal => self.duplicates += 1,
            std::cmp::Ordering::Less => {}
        }
    }

    /// Appends the facts of the stretch that follows this one.
    pub fn append(&mut self, next: &OrderCheck) {
        if next.records == 0 {
            self.dropped += next.dropped;
            self.dropped_checksum += next.dropped_checksum;
            return;
        }
        if self.records == 0 {
            let (d, dc) = (self.dropped, self.dropped_checksum);
            *self = next.clone();
            self.dropped += d;
            self.dropped_checksum += dc;
            return;
        }
        match self.last_key.cmp(&next.first_key) {
            std::cmp::Ordering::Greater => {
                self.unordered += 1;
                self.first_unordered.get_or_insert(self.records);
            }
            std::cmp::Ordering::Equal => self.duplicates += 1,
            std::cmp::Ordering::Less => {}
        }
        if self.first_unordered.is_none() {
            self.first_unordered = next.first_unordered.map(|i| i + self.records);
        }
        self.records += next.records;
        self.bytes += next.bytes;
        self.checksum += next.checksum;
        self.dropped += next.dropped;
        self.dropped_checksum += next.dropped_checksum;
        self.unordered += next.unordered;
        self.duplicates += next.duplicates;
        self.last_key.clone_from(&next.last_key);
    }
}

/// [`OrderCheck`] of fixed records, built block by block as the blocks are written (each
/// checked while it is in cache): the CRCs of a block are summed in one interleaved call over
/// its bytes, then its keys are compared: raw keys in place, other keys as [`OrderBuilder`]
/// compares them.
pub(crate) struct FixedCheck<'k> {
    check: OrderCheck,
    record_size: usize,
    order: FixedOrder<'k>,
}

/// How [`FixedCheck`] compares keys.
enum FixedOrder<'k> {
    /// Raw bytes at this range of each record, compared in place.
    Raw(std::ops::Range<usize>),
    /// Built keys (parsed, normalized) or none (copy mode): record by record.
    Built(&'k SortKey),
}

impl<'k> FixedCheck<'k> {
    /// Records the output checks per block (see [`CHECK_BLOCK_RECORDS`]).
    pub(crate) const BLOCK_RECORDS: usize = CHECK_BLOCK_RECORDS;

    /// A check for `keys`, if its records are fixed.
    pub(crate) fn new(keys: &'k SortKey) -> Option<FixedCheck<'k>> {
        let r = keys.record_size()?;
        let order = match keys.kind() {
            KeyKind::RawBytes { offset, len } => FixedOrder::Raw(*offset..offset + len),
            _ => FixedOrder::Built(keys),
        };
        Some(FixedCheck { check: OrderCheck::default(), record_size: r, order })
    }

    /// The next whole records of the stretch.
    pub(crate) fn push_block(&mut self, block: &[u8]) {
        let r = self.record_size;
        let checksum = oxsort_kernels::crc32_sum_fixed(block, r);
        let key = match &self.order {
            FixedOrder::Raw(key) => key.clone(),
            FixedOrder::Built(keys) => {
                let mut b = OrderBuilder::without_checksum(keys);
                for rec in block.chunks_exact(r) {
                    b.push(rec);
                }
                let mut c = b.finish();
                c.checksum = checksum;
                self.check.append(&c);
                return;
            }
        };
        let c = &mut self.check;
        let base = c.records as usize;
        c.records += (block.len() / r) as u64;
        c.bytes += block.len() as u64;
        c.checksum += checksum;
        let mut recs = block.chunks_exact(r);
        let Some(first) = recs.next() else { return };
        let mut prev = &first[key.clone()];
        if base == 0 {
            c.first_key = prev.to_vec();
        } else {
            let last = std::mem::take(&mut c.last_key);
            c.compare_step(&last, prev, base);
            c.last_key = last;
        }
        for (j, rec) in recs.enumerate() {
            let k = &rec[key.clone()];
            c.compare_step(prev, k, base + 1 + j);
            prev = k;
        }
        c.last_key.clear();
        c.last_key.extend_from_slice(prev);
    }

    /// The facts of the blocks pushed.
    pub(crate) fn finish(self) -> OrderCheck {
        self.check
    }
}

/// [`OrderCheck`] built record by record, as records are copied (while they are in cache).
///
/// Built keys (parsed, collated) are compared by their 10-byte prefixes, built from each record
/// again; only records whose prefixes tie build their whole keys. The prefix of a key is its
/// first bytes, so where prefixes differ they order the records as the whole keys do.
pub(crate) struct OrderBuilder<'k, 'a> {
    keys: &'k SortKey,
    check: OrderCheck,
    /// The previous record (with its terminator).
    prev_rec: Option<&'a [u8]>,
    /// Built keys: the previous record's prefix (None if it could not be built).
    prev_prefix: Option<Prefix>,
    /// Records whose CRCs are not summed yet, and their bytes.
    pending: Vec<&'a [u8]>,
    pending_bytes: usize,
    /// Records, and bytes of them, summed in one call at most (what the CPU's CRC kernel is
    /// fastest with: [`oxsort_kernels::crc32_sum_batch`]).
    batch: (usize, usize),
    /// Whether CRCs are summed here (else the caller sums them, [`FixedCheck`]).
    sums: bool,
    /// Whole keys, built on prefix ties.
    prev: Vec<u8>,
    cur: Vec<u8>,
    scratch: Vec<u8>,
}

impl<'k, 'a> OrderBuilder<'k, 'a> {
    pub(crate) fn new(keys: &'k SortKey) -> Self {
        let batch = oxsort_kernels::crc32_sum_batch();
        OrderBuilder {
            keys,
            check: OrderCheck::default(),
            prev_rec: None,
            prev_prefix: None,
            pending: Vec::with_capacity(batch.0),
            pending_bytes: 0,
            batch,
            sums: true,
            prev: Vec::new(),
            cur: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// A builder that leaves the checksum at 0: the caller sums the records' CRCs itself.
    fn without_checksum(keys: &'k SortKey) -> Self {
        OrderBuilder { pending: Vec::new(), sums: false, ..OrderBuilder::new(keys) }
    }

    /// The next record of the stretch (with its terminator, if delimited).
    #[inline]
    pub(crate) fn push(&mut self, rec: &'a [u8]) {
        let i = self.check.records as usize;
        self.check.records += 1;
        self.check.bytes += rec.len() as u64;
        if self.sums {
            self.pending.push(rec);
            self.pending_bytes += rec.len();
            if self.pending.len() == self.batch.0 || self.pending_bytes >= self.batch.1 {
                self.sum_pending();
            }
        }
        if self.keys.is_copy() {
            return;
        }
        let keys = self.keys;
        if keys.is_raw_lines() {
            let k = keys.key_part(rec);
            match self.prev_rec {
                None => self.check.first_key = k.to_vec(),
                Some(p) => self.check.compare_step(keys.key_part(p), k, i),
            }
        } else {
            let prefix = keys.prefix(rec, &mut self.scratch).ok();
            match self.prev_rec {
                None => keys.full_key(rec, &mut self.check.first_key),
                Some(p) => match (self.prev_prefix, prefix) {
                    (Some(a), Some(b)) if a != b => self.check.compare_step(&a, &b, i),
                    _ if keys.collates() => {
                        // The first bytes of collated keys decide unless they tie in full.
                        let n = crate::tuning::TIE_KEY_START;
                        self.prev.clear();
                        self.cur.clear();
                        keys.append_key_start(p, &mut self.prev, n);
                        keys.append_key_start(rec, &mut self.cur, n);
                        if self.prev == self.cur && self.cur.len() == n {
                            keys.full_key(p, &mut self.prev);
                            keys.full_key(rec, &mut self.cur);
                        }
                        self.check.compare_step(&self.prev, &self.cur, i);
                    }
                    _ => {
                        keys.full_key(p, &mut self.prev);
                        keys.full_key(rec, &mut self.cur);
                        self.check.compare_step(&self.prev, &self.cur, i);
                    }
                },
            }
            self.prev_prefix = prefix;
        }
        self.prev_rec = Some(rec);
    }

    fn sum_pending(&mut self) {
        self.check.checksum += oxsort_kernels::crc32_sum(self.pending.iter().copied());
        self.pending.clear();
        self.pending_bytes = 0;
    }

    /// The facts of the records pushed.
    pub(crate) fn finish(mut self) -> OrderCheck {
        self.sum_pending();
        if let (false, Some(p)) = (self.keys.is_copy(), self.prev_rec) {
            self.keys.full_key(p, &mut self.check.last_key);
        }
        self.check
    }
}

/// [`OrderCheck`] over a byte stream cut anywhere (a record may straddle two pieces).
#[derive(Default)]
pub(crate) struct StreamCheck {
    carry: Vec<u8>,
    pub(crate) check: OrderCheck,
}

impl StreamCheck {
    /// Checks the next piece of the stream.
    pub(crate) fn feed(&mut self, mut data: &[u8], keys: &SortKey) {
        let layout = keys.layout();
        if !self.carry.is_empty() {
            // Complete the record the last piece ended inside.
            let need = match layout {
                RecordLayout::Fixed(r) => (r - self.carry.len()).min(data.len()),
                RecordLayout::Delimited(t) => memchr::memchr(t, data).map_or(data.len(), |i| i + 1),
                RecordLayout::Variable(_) => layout.bytes_to_complete(&self.carry, data),
            };
            self.carry.extend_from_slice(&data[..need]);
            data = &data[need..];
            let whole = match layout {
                RecordLayout::Fixed(r) => self.carry.len() == r,
                RecordLayout::Delimited(t) => self.carry.last() == Some(&t),
                RecordLayout::Variable(_) => layout.is_whole(&self.carry),
            };
            if !whole {
                return;
            }
            let rec = std::mem::take(&mut self.carry);
            self.check.append(&OrderCheck::of(&rec, keys));
        }
        let end = match layout {
            RecordLayout::Fixed(r) => data.len() / r * r,
            RecordLayout::Delimited(t) => memchr::memrchr(t, data).map_or(0, |i| i + 1),
            RecordLayout::Variable(_) => layout.whole_end(data),
        };
        if end > 0 {
            self.check.append(&OrderCheck::of(&data[..end], keys));
        }
        self.carry.extend_from_slice(&data[end..]);
    }

    /// Whether the stream so far ends inside a record.
    pub(crate) fn is_inside_record(&self) -> bool {
        !self.carry.is_empty()
    }

    /// The facts of the whole stream; bytes left after the last whole record are counted as
    /// one more record (a stream never ends inside a record when written right).
    pub(crate) fn finish(mut self, keys: &SortKey) -> OrderCheck {
        if !self.carry.is_empty() {
            let rec = std::mem::take(&mut self.carry);
            self.check.append(&OrderCheck::of(&rec, keys));
        }
        self.check
    }
}

/// Valsort's hex rendering of a checksum (as [`oxsort_gensort::Checksum`] displays it).
pub fn checksum_hex(sum: u128) -> String {
    oxsort_gensort::Checksum::from_value(sum).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recs(keys: &[u8]) -> Vec<u8> {
        keys.iter().flat_map(|&k| [k, 0, 0, 0]).collect()
    }

    #[test]
    fn appending_stretches_equals_checking_the_whole() {
        let fmt = SortKey::raw_bytes(4, 0, 1).unwrap();
        let keys = [1u8, 2, 2, 5, 3, 3, 7, 1, 9, 9, 9, 0];
        let all = recs(&keys);
        let whole = OrderCheck::of(&all, &fmt);
        assert_eq!(whole.unordered, 3);
        assert_eq!(whole.first_unordered, Some(4));
        assert_eq!(whole.duplicates, 4);
        for cut in 0..=keys.len() {
            let mut a = OrderCheck::of(&all[..cut * 4], &fmt);
            a.append(&OrderCheck::of(&all[cut * 4..], &fmt));
            assert_eq!(a, whole, "cut at {cut}");
        }
    }

    #[test]
    fn checksum_hex_matches_valsort_rendering() {
        assert_eq!(checksum_hex(0x1ea6370b955), "1ea6370b955");
        assert_eq!(checksum_hex((1u128 << 64) | 5), "10000000000000005");
    }
}

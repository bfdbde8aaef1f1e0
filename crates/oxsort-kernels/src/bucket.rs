//! Entries put in order of key ranges, not sorted: a stable counting scatter by a monotone map
//! of prefixes to buckets ([`Bucketer`]).
//!
//! A load whose chunks are only bucketed, not sorted, can still be cut into parts by value: part
//! `p` is buckets `b_p..b_{p+1}`, a contiguous range of every chunk's entries, and each part is
//! sorted once, whole. Sorting each chunk first and the parts again sorts every entry twice.
//!
//! ```text
//!  prefixes:  lo - margin                                         hi + margin
//!  (80 bits)  |------|------|------|------|-- ... --|------|------|
//!   bucket:   0      1      2      3      4          B-2    B-1
//!             keys below the range go to bucket 0, above it to B-1: the map is monotone
//!             (a <= b => bucket(a) <= bucket(b)) whatever the keys, and balanced when the
//!             sample it was drawn from looks like the rest
//! ```

use crate::entry::{entry_index, Entry, INDEX_BITS, INDEX_MASK, PREFIX_BYTES};
use crate::gather::prefetch_record_for_write;
use crate::tuning::PLACE_PREFETCH_DISTANCE;

/// The largest key prefix (all 80 bits set).
const PREFIX_MAX: u128 = (1 << (PREFIX_BYTES * 8)) - 1;

/// Most buckets a [`Bucketer`] has: 2^16.
pub const MAX_BUCKETS_LOG2: u32 = 16;

/// A monotone map of entries to `2^bits` buckets by their key prefix: equal-width ranges over
/// the span of a sample, widened by a quarter of it on each side (as far as prefixes go);
/// prefixes outside go to the first or last bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucketer {
    /// Lowest prefix of bucket 0's range.
    lo: u128,
    /// A prefix's bucket is `(prefix - lo) >> shift`, at most the last.
    shift: u32,
    bits: u32,
}

impl Bucketer {
    /// The map of `2^bits` buckets (`bits` at most [`MAX_BUCKETS_LOG2`]) drawn from the key
    /// prefixes of a sample (as [`crate::entry_prefix`] gives them). An empty sample or one of
    /// a single prefix spans nothing: every prefix at or below it then goes to bucket 0.
    pub fn from_sample(prefixes: impl IntoIterator<Item = u128>, bits: u32) -> Bucketer {
        let bits = bits.clamp(1, MAX_BUCKETS_LOG2);
        let (mut min, mut max) = (u128::MAX, 0u128);
        for p in prefixes {
            min = min.min(p);
            max = max.max(p);
        }
        if min > max {
            return Bucketer { lo: 0, shift: 0, bits };
        }
        // No prefix is above PREFIX_MAX: a margin past it would only leave buckets empty.
        let margin = (max - min) / 4;
        let lo = min.saturating_sub(margin);
        let span = max.saturating_add(margin).min(PREFIX_MAX.max(max)) - lo;
        // The smallest shift that maps the whole span into 2^bits buckets.
        let width = 128 - span.leading_zeros();
        Bucketer { lo, shift: width.saturating_sub(bits), bits }
    }

    /// How many buckets there are.
    pub fn buckets(&self) -> usize {
        1 << self.bits
    }

    /// The bucket of an entry.
    #[inline(always)]
    pub fn bucket(&self, e: Entry) -> usize {
        let d = ((e >> INDEX_BITS).saturating_sub(self.lo) >> self.shift) as u64;
        d.min((1u64 << self.bits) - 1) as usize
    }

    /// Counts `src`'s entries by bucket and writes where each bucket starts to `starts`
    /// (`buckets() + 1` values, the last `src.len()`). Returns the size of the largest bucket.
    ///
    /// # Panics
    /// If `src` has `2^32` entries or more.
    pub fn count(&self, src: &[Entry], starts: &mut Vec<u32>) -> usize {
        assert!(src.len() < u32::MAX as usize, "bucket count: too many entries");
        let n = self.buckets();
        starts.clear();
        starts.resize(n + 1, 0);
        for &e in src {
            starts[self.bucket(e) + 1] += 1;
        }
        let largest = starts.iter().copied().max().unwrap_or(0) as usize;
        for b in 0..n {
            starts[b + 1] += starts[b];
        }
        largest
    }

    /// Copies `src` into `dst` in bucket order, input order kept within a bucket (with
    /// [`Bucketer::count`] before it, a stable counting sort), given the bucket starts `count`
    /// wrote for the same `src`: bucket `b` is then `dst[starts[b]..starts[b + 1]]`.
    ///
    /// # Panics
    /// If `dst` is shorter than `src`, or `starts` is not `src`'s.
    pub fn place(&self, src: &[Entry], starts: &[u32], dst: &mut [Entry]) {
        assert!(dst.len() >= src.len(), "place: destination shorter than source");
        let mut heads: Vec<u32> = starts[..self.buckets()].to_vec();
        for &e in src {
            let h = &mut heads[self.bucket(e)];
            dst[*h as usize] = e;
            *h += 1;
        }
    }

    /// [`Bucketer::place`] with the records the entries stand for, in one pass: the record of
    /// each entry of `src` (in `records`, of `size` bytes each, the one at slot `index % 2^log2`
    /// of its entry) is copied to the place of its entry in bucket order in `out`, and the entry
    /// is written to `dst` renumbered to that place (`base + place`; its prefix, hence its
    /// order among equal prefixes, kept).
    ///
    /// ```text
    ///  records:  | r0 (b2) | r1 (b0) | r2 (b2) | r3 (b1) |     read front to back
    ///  out:      | r1 | r3 | r0 | r2 |                          written at each bucket's head
    ///  dst:        base+0  base+1  base+2  base+3               renumbered to the new places
    /// ```
    ///
    /// The records are read in the order they were read in, not gathered at random: for
    /// entries in slot order (as taken from a chunk) the source is one stream, and the writes
    /// go to one head per bucket, each fetched for writing [`PLACE_PREFETCH_DISTANCE`] entries
    /// ahead.
    ///
    /// # Panics
    /// If `dst` or `out` is too short, a slot is past `records`, or `starts` is not `src`'s.
    #[allow(clippy::too_many_arguments)]
    pub fn place_records(
        &self,
        src: &[Entry],
        starts: &[u32],
        records: &[u8],
        size: usize,
        log2: u32,
        base: u64,
        dst: &mut [Entry],
        out: &mut [u8],
    ) {
        assert!(dst.len() >= src.len(), "place: destination shorter than source");
        assert!(out.len() >= src.len() * size, "place: record buffer too short");
        let mask = (1u64 << log2) - 1;
        let mut heads: Vec<u32> = starts[..self.buckets()].to_vec();
        for (i, &e) in src.iter().enumerate() {
            // The head a later entry will write to, fetched to be written: each write lands at
            // one of thousands of heads, whose lines have left the cache since its last one.
            if let Some(&ahead) = src.get(i + PLACE_PREFETCH_DISTANCE) {
                let at = heads[self.bucket(ahead)] as usize * size;
                if let Some(place) = out.get(at..at + size) {
                    prefetch_record_for_write(place);
                }
            }
            let h = &mut heads[self.bucket(e)];
            let at = *h as usize;
            *h += 1;
            let from = (entry_index(e) & mask) as usize * size;
            oxsort_bytes::copy_field(
                &records[from..from + size],
                &mut out[at * size..(at + 1) * size],
            );
            dst[at] = (e & !INDEX_MASK) | (base + at as u64) as u128;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::make_entry;

    fn entry(prefix: u64, index: u64) -> Entry {
        let mut p = [0u8; 10];
        p[..8].copy_from_slice(&prefix.to_be_bytes());
        make_entry(&p, index)
    }

    #[test]
    fn the_map_is_monotone_inside_and_outside_the_sampled_span() {
        let b = Bucketer::from_sample((1000..2000u64).map(|k| entry(k, 0) >> INDEX_BITS), 4);
        let keys = [0u64, 1, 500, 999, 1000, 1234, 1500, 1999, 2000, 2600, 9999, u64::MAX];
        let buckets: Vec<usize> = keys.iter().map(|&k| b.bucket(entry(k, 7))).collect();
        assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{buckets:?}");
        assert_eq!((buckets[0], buckets[keys.len() - 1]), (0, 15));
        // The sampled span covers the middle buckets, not only the first or last.
        let inside: std::collections::BTreeSet<usize> =
            (1000..2000u64).step_by(10).map(|k| b.bucket(entry(k, 0))).collect();
        assert!(inside.len() >= 8, "{inside:?}");
    }

    #[test]
    fn a_sample_over_every_prefix_spreads_over_every_bucket() {
        let b = Bucketer::from_sample([0u128, PREFIX_MAX / 3, PREFIX_MAX], 6);
        let used: std::collections::BTreeSet<usize> =
            (0..=255u64).map(|k| b.bucket(entry(k << 56, 0))).collect();
        assert_eq!(used.len(), 64);
    }

    #[test]
    fn a_sample_of_one_prefix_or_none_still_maps_every_entry() {
        for b in [Bucketer::from_sample([], 8), Bucketer::from_sample([5u128], 8)] {
            let all: Vec<usize> =
                [0u64, 5, u64::MAX].iter().map(|&k| b.bucket(entry(k, 0))).collect();
            assert!(all.windows(2).all(|w| w[0] <= w[1]) && all[2] < 256, "{all:?}");
        }
    }

    #[test]
    fn count_then_place_is_a_stable_counting_sort_by_bucket() {
        let b = Bucketer::from_sample((0..64u64).map(|k| (k as u128) << 70), 3);
        // Keys in a scrambled order with many repeats; index = input position.
        let src: Vec<Entry> =
            (0..500u64).map(|i| entry(((i * 37) % 64) << 6, i)).collect::<Vec<_>>();
        let mut dst = vec![0; src.len()];
        let mut starts = Vec::new();
        let largest = b.count(&src, &mut starts);
        b.place(&src, &starts, &mut dst);
        assert_eq!(starts.len(), 9);
        assert_eq!((starts[0], starts[8]), (0, 500));
        let mut sorted_src = src.clone();
        sorted_src.sort_by_key(|&e| (b.bucket(e), entry_index(e)));
        assert_eq!(dst, sorted_src, "bucket order, input order within a bucket");
        for w in 0..8 {
            let bucket = &dst[starts[w] as usize..starts[w + 1] as usize];
            assert!(bucket.iter().all(|&e| b.bucket(e) == w));
        }
        let sizes = starts.windows(2).map(|w| (w[1] - w[0]) as usize);
        assert_eq!(largest, sizes.max().unwrap());
    }

    #[test]
    fn records_are_placed_with_their_entries_and_the_entries_renumbered() {
        let b = Bucketer::from_sample((0..64u64).map(|k| (k as u128) << 70), 3);
        let (size, log2) = (7usize, 10u32);
        let (from_base, to_base) = (3u64 << log2, 9u64 << log2);
        // 300 records of 7 bytes, their key in the first; every fifth dropped (a filter).
        let keys: Vec<u64> = (0..300u64).map(|i| ((i * 37) % 64) << 6).collect();
        let mut records = Vec::new();
        for (i, &k) in keys.iter().enumerate() {
            records.extend_from_slice(&[i as u8; 6]);
            records.push(k as u8);
        }
        let src: Vec<Entry> = (0..300u64)
            .filter(|i| i % 5 != 0)
            .map(|i| entry(keys[i as usize], from_base + i))
            .collect();
        let mut starts = Vec::new();
        b.count(&src, &mut starts);
        let mut dst = vec![0; src.len()];
        let mut out = vec![0u8; src.len() * size];
        b.place_records(&src, &starts, &records, size, log2, to_base, &mut dst, &mut out);
        let mut want = src.clone();
        want.sort_by_key(|&e| (b.bucket(e), entry_index(e)));
        for (at, (&d, &w)) in dst.iter().zip(&want).enumerate() {
            assert_eq!(d >> INDEX_BITS, w >> INDEX_BITS, "entry {at}: the prefix is kept");
            assert_eq!(entry_index(d), to_base + at as u64, "entry {at}: renumbered");
            let slot = (entry_index(w) - from_base) as usize;
            assert_eq!(&out[at * size..(at + 1) * size], &records[slot * size..(slot + 1) * size]);
        }
    }
}

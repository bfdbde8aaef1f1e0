//! oxsort-kernels: the in-memory sort kernels of oxsort. No I/O, no files.
//!
//! The engine turns every record into one [`Entry`]: a `u128` holding the record's first
//! [`PREFIX_BYTES`] key bytes (big-endian, top 80 bits) above its index in input order (low
//! [`INDEX_BITS`] bits). Sorting entries as plain integers orders records by key, and by input
//! order among equal keys: a stable sort with single integer compares.
//!
//! | step | function |
//! |------|----------|
//! | find where delimited records end (the offset after each terminator) | [`line_ends`] |
//! | build entries from a buffer of fixed-size records | [`extract_entries`] |
//! | sort entries (MSD radix, one thread / `threads` threads) | [`sort_entries`], [`par_sort_entries`] |
//! | general keys: prefix ties broken by a comparator | [`sort_entries_with_ties`] |
//! | costly keys: prefix ties broken by keys built once per tied entry | [`sort_entries_with_keyed_ties`] |
//! | cut sorted runs into balanced key ranges | [`split_sorted`] |
//! | put entries in order of key ranges (buckets), not sorted | [`Bucketer`] |
//! | k-way merge of sorted sources | [`LoserTree`], [`EntryTree`], [`merge_entries`], [`par_merge_entries`] |
//! | copy records into sorted order | [`gather`], [`par_gather`] |
//! | valsort checksum (sum of CRC-32s) of many records at once | [`crc32_sum_fixed`], [`crc32_sum`] |
//!
//! Every tuning constant lives in [`tuning`], with what was measured to choose it.
//!
//! # Example
//!
//! ```
//! use oxsort_kernels::{extract_entries, gather, par_sort_entries, entry_index};
//!
//! // Three 12-byte records, key = bytes 2..12.
//! let mut records = Vec::new();
//! for key in [b"kkkkkkkkk3", b"aaaaaaaaa1", b"kkkkkkkkk3"] {
//!     records.extend_from_slice(b"r:");
//!     records.extend_from_slice(key);
//! }
//! let mut entries = Vec::new();
//! extract_entries(&records, 12, 2, 0, &mut entries);
//! par_sort_entries(&mut entries, 2);
//! // Equal keys keep input order: record 0 before record 2.
//! assert_eq!(entries.iter().map(|&e| entry_index(e)).collect::<Vec<_>>(), [1, 0, 2]);
//!
//! let mut out = vec![0u8; records.len()];
//! gather(&entries, 12, |i| &records[i as usize * 12..][..12], &mut out);
//! assert_eq!(&out[2..12], b"aaaaaaaaa1");
//! ```
//!
//! # Threads
//!
//! The `par_*` functions take a thread count and run on a rayon pool of exactly that many
//! threads: when called from inside a rayon pool of that size they run right there; otherwise
//! they use a pool built on first use per thread count and kept for the process (so repeated
//! calls pay no thread start-up).
#![deny(missing_docs)]

mod bucket;
mod crc;
mod entry;
mod gather;
mod lines;
mod loser_tree;
mod merge;
mod pool;
mod radix;
mod ties;
pub mod tuning;

pub use bucket::{Bucketer, MAX_BUCKETS_LOG2};
pub use crc::{crc32_sum, crc32_sum_batch, crc32_sum_fixed};
pub use entry::{
    entry_index, entry_prefix, extract_entries, extract_line_entries, make_entry, Entry,
    INDEX_BITS, INDEX_MASK, MAX_INDEX, PREFIX_BYTES,
};
pub use gather::{
    gather, gather_blocks, gather_var, gather_var_with, par_gather, prefetch_read, prefetch_record,
};
pub use lines::line_ends;
pub use loser_tree::{EntryTree, LoserTree};
pub use merge::{merge_entries, par_merge_entries, par_split_sorted, split_sorted};
pub use ties::{
    sort_entries_with_keyed_ties, sort_entries_with_keyed_ties_prefetched,
    sort_entries_with_staged_ties, sort_entries_with_ties, Touch, TIE_BYTES_PER_ENTRY,
};

/// Sorts entries ascending, in place, on the calling thread.
///
/// Entries are unique (distinct indexes), so this unstable sort orders records stably; any
/// `u128` values are sorted correctly, unique or not.
///
/// Algorithm: MSD radix sort with 8-bit digits ([`tuning::RADIX_BITS`]):
///
/// ```text
///  v (n entries)            histogram of the digit at `shift` (first: the top byte)
///  +------------------------+
///  | 7a 03 c1 03 7a ff ...  |
///  +------------------------+
///     | n > OUT_OF_PLACE_MAX: permute in place (cycle leading), no scratch
///     | n <= OUT_OF_PLACE_MAX: scatter into an L2-sized scratch buffer and back
///     v
///  [ 03 03 .. | 7a 7a .. | c1 .. | ff .. ]   256 buckets, each sorted on the next digit:
///       |          |
///       |          +-- > INSERTION_SORT_CUTOFF entries: recurse (shift -= 8)
///       +------------- <= INSERTION_SORT_CUTOFF entries: insertion sort where it landed
///
///  One bucket holding everything (a shared prefix)? No permutation: one pass ORs
///  `x ^ first` over the slice and the digit jumps to the highest differing bit, so a 6-byte
///  shared prefix costs one extra read, not six passes; an all-equal slice stops there.
/// ```
///
/// Runs in `O(n * d)` for `d` distinguishing bytes and never degrades on skew: a bucket holding
/// most entries just recurses on the next digit. Scratch memory: at most
/// [`tuning::OUT_OF_PLACE_MAX`] entries (1 MiB), whatever `n`.
pub fn sort_entries(v: &mut [Entry]) {
    let mut buf = Vec::new();
    radix::sort_with_buf(v, &mut buf);
}

/// [`sort_entries`] with a caller-provided scratch buffer (grown to at most
/// [`tuning::OUT_OF_PLACE_MAX`] entries), to avoid even that small allocation per call.
pub fn sort_entries_with_buffer(v: &mut [Entry], buf: &mut Vec<Entry>) {
    radix::sort_with_buf(v, buf);
}

/// [`sort_entries`] on `threads` threads (`threads <= 1`: on the calling thread).
///
/// ```text
///  v:    [ chunk 0 (thread 0)     | chunk 1 (thread 1)     ]   histograms in parallel
///             \  \  \               /  /  /                    scatter in parallel: each chunk
///  tmp:  [ b0: c0 c1 | b1: c0 c1 | ... | b255: c0 c1 ]           owns a sub-range per bucket
///            task       task              task                 buckets = work-stealing tasks:
///                                                             <= PAR_GRAIN: sequential sort
///                                                             (in tmp) + copy home;
///                                                             >  PAR_GRAIN: split again the
///                                                             same way, in parallel
/// ```
///
/// So skewed keys (one bucket holding half the entries, or a long shared prefix) keep every
/// thread busy: the split follows the values, never one thread per top byte. Scratch: one
/// buffer of `v.len()` entries, allocated here (huge pages advised) — use
/// [`par_sort_entries_with_buffer`] to reuse one across calls (saves ~25 ms of page zeroing per
/// 1e7 entries). See the crate docs (*Threads*) for which pool runs the work.
pub fn par_sort_entries(v: &mut [Entry], threads: usize) {
    let mut buf = Vec::new();
    par_sort_entries_with_buffer(v, &mut buf, threads);
}

/// [`par_sort_entries`] with a caller-provided scratch buffer, grown to `v.len()` entries if
/// shorter (kept for the next call).
pub fn par_sort_entries_with_buffer(v: &mut [Entry], buf: &mut Vec<Entry>, threads: usize) {
    if threads <= 1 || v.len() <= tuning::PAR_GRAIN {
        radix::sort_with_buf(v, buf);
        return;
    }
    pool::run(threads, || radix::par_sort_with_buf(v, buf, threads));
}

//! Tuning constants of the kernels, in one place.
//!
//! Each constant says what it trades and what was measured to pick it. Machine used for the
//! figures: 2-core AMD EPYC (Zen 3, KVM guest), 2 MiB L2 per core, 32 MiB shared L3; see
//! `BENCH.md` for the runs.

/// Bits per radix digit of the MSD radix sort (256 buckets per pass).
///
/// With 8 bits a histogram is 256 `usize` (2 KiB, fits L1) and the scatter keeps 256 write
/// heads of 16-byte entries, whose cache lines fit L1 as well. Measured on 1e7 random entries:
/// 8 bits gave the fastest single-thread sort; 11 bits (2048 buckets) thrashed L1 during the
/// scatter and was slower overall despite one level less of recursion.
pub const RADIX_BITS: u32 = 8;

/// Number of buckets per radix pass (`1 << RADIX_BITS`).
pub const RADIX_BUCKETS: usize = 1 << RADIX_BITS;

/// Slices of at most this many entries are sorted by the small sort (insertion sort or
/// `sort_unstable`) instead of another radix pass.
///
/// A radix pass has a fixed cost of clearing and prefix-summing 256 counters; below ~100 entries
/// that fixed cost exceeds a comparison sort of the whole bucket. (Measurement: pending.)
pub const SMALL_SORT_CUTOFF: usize = 64;

/// Slices of at most this many entries use insertion sort inside the small sort; larger small
/// slices use `slice::sort_unstable`.
///
/// Insertion sort on `u128` is branch-light and wins below ~20 elements; std's own small-sort
/// threshold is in the same range.
pub const INSERTION_SORT_CUTOFF: usize = 20;

/// Below this many entries a parallel sort runs sequentially, and radix buckets at most this big
/// are sorted by one thread.
///
/// A parallel radix pass costs a few microseconds of task spawning and a second histogram per
/// thread; 65 536 entries (1 MiB of entries, half an L2) take ~1 ms to sort on one core, so the
/// overhead stays under 1 %; a bucket of this size still fits half an L2.
pub const PAR_GRAIN: usize = 1 << 16;

/// How many records ahead `gather` resolves and prefetches (the size of one pointer batch).
///
/// The random reads of a gather are latency-bound: with ~100 ns DRAM latency and ~10 ns of copy
/// work per 100-byte record, ~10-20 records in flight per core are needed. (Measurement:
/// pending.)
pub const GATHER_PREFETCH_DISTANCE: usize = 32;

/// Entries per parallel task of `par_gather` and `par_merge_entries` (work-stealing grain).
///
/// Large enough that the per-task set-up (one pointer batch, one loser tree) is noise, small
/// enough that two threads stay balanced on the tail.
pub const PAR_TASK_ENTRIES: usize = 1 << 16;

/// Slices of more than this many entries are partitioned in place (no scratch memory); smaller
/// ones are radix sorted out of place, ping-ponging with a scratch buffer of their size.
///
/// Out of place is faster once source and scratch both fit in cache (sequential writes per
/// bucket instead of dependent swaps); in place avoids a scratch buffer as big as the input
/// (and its page faults). 2^16 entries = 1 MiB each for data and scratch, which fit the 2 MiB L2.
pub const OUT_OF_PLACE_MAX: usize = 1 << 16;

/// Scratch buffers of at least this many bytes, freshly allocated by a sort, are advised to use
/// transparent huge pages (Linux `madvise(MADV_HUGEPAGE)`).
///
/// Measured on 1e7 random entries (160 MB scratch): faulting the fresh scratch buffer in 4 KiB
/// pages cost ~140 ms of a ~470 ms sort (compare `sort_entries` with `sort_entries_with_buffer`
/// reusing a buffer). Small buffers are left alone: they are reused from the allocator anyway.
pub const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

const _: () = assert!(RADIX_BITS >= 1 && RADIX_BITS <= 16);
const _: () = assert!(INSERTION_SORT_CUTOFF <= SMALL_SORT_CUTOFF);
const _: () = assert!(SMALL_SORT_CUTOFF >= 1);
const _: () = assert!(PAR_GRAIN > SMALL_SORT_CUTOFF);
const _: () = assert!(GATHER_PREFETCH_DISTANCE >= 1);

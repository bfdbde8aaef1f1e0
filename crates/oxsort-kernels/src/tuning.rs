//! Tuning constants of the kernels, in one place.
//!
//! Each constant says what it trades and what was measured to pick it (or that it was set by
//! reasoning and not yet measured). Machine: 2-core AMD EPYC (Zen 3, KVM guest), 2 MiB L2 per
//! core, 32 MiB shared L3, shared with other builds while measuring, so the figures below are
//! CPU times (`CLOCK_PROCESS_CPUTIME_ID`, `examples/timing.rs`, minimum of 3 runs, 1e7 random
//! entries) unless said otherwise; see `BENCH.md` for the criterion runs.

/// Bits per radix digit of the MSD radix sort (256 buckets per pass).
///
/// With 8 bits a histogram is 256 `usize` (2 KiB, fits L1) and a scatter or in-place
/// permutation keeps 256 write heads of 16-byte entries whose cache lines fit L1 as well; 1e7
/// random entries then need 3 levels (39 K, then ~150-entry buckets, then tiny ones).
/// Not yet compared against 11-bit digits (one level less, 8x the write heads).
pub const RADIX_BITS: u32 = 8;

/// Number of buckets per radix pass (`1 << RADIX_BITS`).
pub const RADIX_BUCKETS: usize = 1 << RADIX_BITS;

/// Slices of at most this many entries are sorted by the small sort (`sort_unstable`, or
/// insertion sort below [`INSERTION_SORT_CUTOFF`]) instead of another radix pass.
///
/// A radix pass has a fixed cost of clearing, prefix-summing and walking 256 counters; below
/// ~100 entries that exceeds a comparison sort of the whole slice. Set by that reasoning, not
/// yet measured in isolation.
pub const SMALL_SORT_CUTOFF: usize = 64;

/// Buckets of at most this many entries left by a radix pass are insertion sorted where they
/// landed, with no recursive call; slices this small passed to the small sort use insertion
/// sort too.
///
/// Measured: recursing into every tiny bucket (most of the ~150 buckets of a 150-entry slice
/// hold 0-2 entries) made 1e7 random entries cost 243 ms CPU; sorting them inline, 189 ms
/// (together with the in-place top level below). std's own small-sort threshold is the same
/// order of magnitude.
pub const INSERTION_SORT_CUTOFF: usize = 20;

/// Slices of more than this many entries are partitioned in place (American flag cycle leading,
/// no scratch memory); smaller ones are radix sorted out of place, ping-ponging with a scratch
/// buffer of their size, where both fit in cache.
///
/// Measured on 1e7 random entries: out of place at every level with an input-sized scratch
/// buffer cost 231 ms CPU even when the buffer was reused (364 ms when freshly allocated, the
/// page faults alone ~130 ms); in place above 2^16 entries and out of place below: 176-199 ms,
/// and no scratch beyond 1 MiB. 2^16 entries = 1 MiB each for data and scratch: both fit the
/// 2 MiB L2.
pub const OUT_OF_PLACE_MAX: usize = 1 << 16;

/// Below this many entries a parallel sort runs sequentially, and radix buckets at most this big
/// are sorted by one thread.
///
/// A parallel radix pass costs a few microseconds of task spawning and one histogram per
/// thread; 65 536 entries take ~1 ms to sort on one core, so the overhead stays under 1 %.
/// Equal to [`OUT_OF_PLACE_MAX`] (which that reasoning also lands on) so a sequential bucket
/// task never needs an in-place pass.
pub const PAR_GRAIN: usize = OUT_OF_PLACE_MAX;

/// How many records ahead `gather` resolves and prefetches (the size of one pointer batch).
///
/// The random reads of a gather are latency-bound, so several records must be in flight per
/// core; but each record takes 2-3 cache-line prefetches, and once the core's line fill buffers
/// (10-16) are full a prefetch stalls like a load. Measured on one-pass sorts with the arena on
/// huge pages (no TLB misses left to hide): 4 GB of 10-200 byte lines spent 5.7 s of CPU in the
/// output phase at 32, 5.0 s at 16 and 4.8 s at 8; 100-byte records 3.9 s at 32, 3.8 s at 16
/// and at 8. See `BENCH.md` for the gather against a plain loop.
pub const GATHER_PREFETCH_DISTANCE: usize = 8;

/// Entries ahead whose key starts are prefetched while a big group of tied entries is split by
/// its keys' next bytes (`ties::refine`): each key start is a random read of a record (and,
/// for delimited records, of its offset first); as for the gather, enough to keep several
/// reads in flight without filling the line fill buffers.
pub const REFINE_PREFETCH_DISTANCE: usize = 8;

/// Entries ahead whose bucket head the bucket placement (`Bucketer::place_records`) fetches
/// for writing: a chunk's records go to up to 4096 heads, and a head's lines have left the
/// cache by the time its bucket comes round again, so each store would wait for its line.
///
/// Measured on a Zen 4 host, not the Zen 3 of the figures above (`OXSORT_BENCH_HUGE=1 cargo
/// bench -p oxsort-kernels --bench sort -- place_`, a 16 MiB chunk of 100-byte records to 4096
/// buckets, huge pages, medians of three runs): no prefetch 5.4 ms;
/// read prefetch 16 ahead 4.4 ms; write prefetch 8 ahead 4.2 ms, 16 ahead 3.8 ms, 32 ahead
/// 4.2 ms.
pub const PLACE_PREFETCH_DISTANCE: usize = 16;

/// Entries per parallel task of `par_gather` and `par_merge_entries` (work-stealing grain).
///
/// Large enough that the per-task set-up (one pointer batch, one loser tree) is noise, small
/// enough that two threads stay balanced on the tail.
pub const PAR_TASK_ENTRIES: usize = 1 << 16;

/// Scratch buffers of at least this many bytes, freshly allocated by a parallel sort, are
/// advised to use transparent huge pages (Linux `madvise(MADV_HUGEPAGE)`): one fault per 2 MiB
/// instead of one per 4 KiB.
///
/// Measured with 4 KiB pages: a fresh 160 MB scratch buffer cost ~130 ms of page faults on a
/// 1e7-entry sort; with huge pages the fresh-buffer penalty is the zeroing only (~25 ms CPU,
/// `par_sort_entries` against `par_sort_entries_with_buffer`).
pub const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

const _: () = assert!(RADIX_BITS >= 1 && RADIX_BITS <= 16);
const _: () = assert!(INSERTION_SORT_CUTOFF <= SMALL_SORT_CUTOFF);
const _: () = assert!(SMALL_SORT_CUTOFF >= 1);
const _: () = assert!(OUT_OF_PLACE_MAX > SMALL_SORT_CUTOFF);
const _: () = assert!(PAR_GRAIN > SMALL_SORT_CUTOFF);
const _: () = assert!(GATHER_PREFETCH_DISTANCE >= 1);
const _: () = assert!(PLACE_PREFETCH_DISTANCE >= 1);

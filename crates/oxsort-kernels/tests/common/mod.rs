//! Kernel test support: entries of testkit's key patterns and lengths that straddle every
//! threshold of `tuning`. The generator, seed and patterns are testkit's, shared by every suite.
#![allow(dead_code)]

use oxsort_kernels::tuning::{
    INSERTION_SORT_CUTOFF, OUT_OF_PLACE_MAX, PAR_GRAIN, PAR_TASK_ENTRIES, RADIX_BUCKETS,
    SMALL_SORT_CUTOFF,
};
use oxsort_kernels::{make_entry, Entry, MAX_INDEX};
pub use oxsort_testkit::{pattern_keys, seed, Pattern, Rng};

/// Index of the `i`-th record: a bijection of `0..2^48` that scrambles input order, so that the
/// index bits are not already sorted within equal prefixes.
pub fn scrambled_index(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4B) & MAX_INDEX
}

/// Entries of `pattern`; `scramble` chooses scrambled or input-order indexes.
pub fn entries(pattern: Pattern, n: usize, rng: &mut Rng, scramble: bool) -> Vec<Entry> {
    pattern_keys(pattern, n, rng)
        .iter()
        .zip(0u64..)
        .map(|(k, i)| make_entry(k, if scramble { scrambled_index(i) } else { i }))
        .collect()
}

/// Lengths: the small ones, both sides of every threshold in `tuning`, and a few big ones.
pub fn lengths() -> Vec<usize> {
    let mut v = vec![0, 1, 2, 3, 10];
    for t in [
        INSERTION_SORT_CUTOFF,
        SMALL_SORT_CUTOFF,
        RADIX_BUCKETS,
        SMALL_SORT_CUTOFF * RADIX_BUCKETS,
        PAR_GRAIN,
        OUT_OF_PLACE_MAX,
        4 * OUT_OF_PLACE_MAX,
        PAR_TASK_ENTRIES,
        2 * PAR_GRAIN,
    ] {
        v.extend([t - 1, t, t + 1]);
    }
    v.extend([100_000, 1_000_000]);
    v.sort_unstable();
    v.dedup();
    v
}

/// A shorter list for the more expensive tests.
pub fn short_lengths() -> Vec<usize> {
    lengths().into_iter().filter(|&n| n <= 2 * PAR_GRAIN + 1).collect()
}

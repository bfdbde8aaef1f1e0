//! Shared test support: seeded RNG, key patterns, threshold-straddling lengths.
#![allow(dead_code)]

use oxsort_kernels::tuning::{
    INSERTION_SORT_CUTOFF, OUT_OF_PLACE_MAX, PAR_GRAIN, PAR_TASK_ENTRIES, RADIX_BUCKETS,
    SMALL_SORT_CUTOFF,
};
use oxsort_kernels::{make_entry, Entry, MAX_INDEX};

/// The test seed: `OXSORT_SEED` if set, else a fixed default. Printed so a failure can be rerun.
pub fn seed() -> u64 {
    let s = std::env::var("OXSORT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0C5A_17ED_2024_0001);
    println!("OXSORT_SEED={s}");
    s
}

/// splitmix64.
#[derive(Clone)]
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    pub fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn key(&mut self) -> [u8; 10] {
        let mut k = [0u8; 10];
        k[..8].copy_from_slice(&self.next().to_le_bytes());
        k[8..].copy_from_slice(&self.next().to_le_bytes()[..2]);
        k
    }
}

pub const PATTERNS: &[&str] = &[
    "random",
    "ascending",
    "descending",
    "all_equal_prefix",
    "few_distinct",
    "zipf",
    "sorted_95",
    "sawtooth",
    "equal_first_8",
    "equal_first_9",
    "gensort_skew",
];

fn key_of(x: u64) -> [u8; 10] {
    let mut k = [0u8; 10];
    k[..8].copy_from_slice(&x.to_be_bytes());
    k
}

/// 10-byte keys of pattern `name`.
pub fn keys(name: &str, n: usize, rng: &mut Rng) -> Vec<[u8; 10]> {
    let fixed = rng.key();
    match name {
        "random" => (0..n).map(|_| rng.key()).collect(),
        "ascending" => (0..n as u64).map(|i| key_of(i * 3)).collect(),
        "descending" => (0..n as u64).map(|i| key_of(u64::MAX - i * 3)).collect(),
        "all_equal_prefix" => vec![fixed; n],
        "few_distinct" => {
            let set: Vec<_> = (0..4).map(|_| rng.key()).collect();
            (0..n).map(|_| set[rng.below(4) as usize]).collect()
        }
        "zipf" => {
            // Ranks log-uniform in 1..=1e6 (P(rank) ~ 1/rank), each rank a scattered key.
            (0..n)
                .map(|_| {
                    let rank = (rng.f64() * (1e6f64).ln()).exp() as u64;
                    let mut h = Rng(rank ^ 0xABCD);
                    h.key()
                })
                .collect()
        }
        "sorted_95" => {
            let mut v: Vec<_> = (0..n as u64).map(|i| key_of(i << 20)).collect();
            for _ in 0..n / 20 {
                let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
                v.swap(a, b);
            }
            v
        }
        "sawtooth" => {
            let period = 1 + rng.below(1000);
            (0..n as u64).map(|i| key_of((i % period) << 40)).collect()
        }
        "equal_first_8" => (0..n)
            .map(|_| {
                let mut k = fixed;
                k[8..].copy_from_slice(&rng.next().to_le_bytes()[..2]);
                k
            })
            .collect(),
        "equal_first_9" => (0..n)
            .map(|_| {
                let mut k = fixed;
                k[9] = rng.next() as u8;
                k
            })
            .collect(),
        "gensort_skew" => (0..n)
            .map(|_| {
                let mut k = rng.key();
                if rng.next() & 1 == 0 {
                    k[..6].copy_from_slice(&fixed[..6]);
                }
                k
            })
            .collect(),
        _ => panic!("unknown pattern {name}"),
    }
}

/// Index of the `i`-th record: a bijection of `0..2^48` that scrambles input order, so that the
/// index bits are not already sorted within equal prefixes.
pub fn scrambled_index(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4B) & MAX_INDEX
}

/// Entries of pattern `name`; `scramble` chooses scrambled or input-order indexes.
pub fn entries(name: &str, n: usize, rng: &mut Rng, scramble: bool) -> Vec<Entry> {
    keys(name, n, rng)
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

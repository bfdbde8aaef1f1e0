//! The one seeded generator and the one set of key patterns of oxsort's test suites and
//! benchmarks: [`Rng`], [`seed`], [`Pattern`] and [`pattern_keys`].
//!
//! Every suite draws its inputs from here, so a failure anywhere replays with the printed
//! `OXSORT_SEED`, and every pattern that finds a bug in one layer (kernels, engine, front ends)
//! is tried on the others too.

use std::fmt;
use std::sync::OnceLock;

/// A small, fast, seedable generator (splitmix64): test inputs must be reproducible from the
/// printed seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`; 0 when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// An index below `n` (a position in a slice of `n` items).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// A number in `[0, 1)` with 53 random bits.
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniformly random 10-byte key.
    pub fn key(&mut self) -> [u8; 10] {
        let mut k = [0u8; 10];
        self.fill(&mut k);
        k
    }

    /// One element of `items` (not empty), uniformly.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        assert!(!items.is_empty(), "pick from an empty slice");
        items[self.below(items.len() as u64) as usize]
    }

    /// Fills `out` with random bytes.
    pub fn fill(&mut self, out: &mut [u8]) {
        for c in out.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
    }
}

/// The seed of this test process: `OXSORT_SEED` when set, else taken from the clock. Chosen once
/// per process and printed once to stderr as `OXSORT_SEED=<n>`, so any failure of the process
/// replays with that one variable; failure messages name it too.
pub fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        let s = match std::env::var("OXSORT_SEED") {
            Ok(v) => v
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("OXSORT_SEED must be a decimal number, found {v:?}")),
            Err(_) => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1),
        };
        eprintln!("OXSORT_SEED={s}");
        s
    })
}

/// Key patterns of the test matrices: each stresses a different part of a sort (radix passes
/// over shared prefixes, runs already in order, ties resolved by stability alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Uniformly random keys.
    Random,
    /// Keys strictly ascending.
    Ascending,
    /// Keys strictly descending.
    Descending,
    /// Every key the same (order comes from stability alone).
    AllEqual,
    /// At most five distinct keys, each repeated many times.
    FewDistinct,
    /// Heavy-tailed repetition: key ranks drawn with probability ~ 1/rank from a million ranks,
    /// each rank a scattered key.
    Zipf,
    /// Ascending keys with 5% of the positions swapped in random pairs.
    Sorted95,
    /// Ascending runs of one random period (1..=1000), each starting again from the same key.
    Sawtooth,
    /// Keys equal in their first 8 bytes, random in the last two.
    EqualPrefix8,
    /// Keys equal in their first 9 bytes, random in the last.
    EqualPrefix9,
    /// Skew like `gensort -s`: half the keys share one 6-byte prefix, the rest are random.
    Skewed,
}

impl Pattern {
    /// Every pattern.
    pub const ALL: [Pattern; 11] = [
        Pattern::Random,
        Pattern::Ascending,
        Pattern::Descending,
        Pattern::AllEqual,
        Pattern::FewDistinct,
        Pattern::Zipf,
        Pattern::Sorted95,
        Pattern::Sawtooth,
        Pattern::EqualPrefix8,
        Pattern::EqualPrefix9,
        Pattern::Skewed,
    ];

    /// A short name for failure messages and benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Ascending => "ascending",
            Pattern::Descending => "descending",
            Pattern::AllEqual => "all_equal",
            Pattern::FewDistinct => "few_distinct",
            Pattern::Zipf => "zipf",
            Pattern::Sorted95 => "sorted_95",
            Pattern::Sawtooth => "sawtooth",
            Pattern::EqualPrefix8 => "equal_first_8",
            Pattern::EqualPrefix9 => "equal_first_9",
            Pattern::Skewed => "gensort_skew",
        }
    }

    /// The pattern called `name` (as [`Pattern::name`] gives it).
    pub fn from_name(name: &str) -> Option<Pattern> {
        Pattern::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The number of ranks of [`Pattern::Zipf`].
const ZIPF_RANKS: f64 = 1e6;

/// Distinct keys of [`Pattern::FewDistinct`].
const FEW_DISTINCT: usize = 5;

/// The longest period of [`Pattern::Sawtooth`].
const SAWTOOTH_MAX_PERIOD: u64 = 1000;

/// A key whose first 8 bytes are `v` big-endian and last two are zero: ordered as `v`.
fn be_key(v: u64) -> [u8; 10] {
    let mut k = [0u8; 10];
    k[..8].copy_from_slice(&v.to_be_bytes());
    k
}

/// `n` 10-byte keys following `pattern`, drawn from `rng`.
pub fn pattern_keys(pattern: Pattern, n: usize, rng: &mut Rng) -> Vec<[u8; 10]> {
    let fixed = rng.key();
    match pattern {
        Pattern::Random => (0..n).map(|_| rng.key()).collect(),
        // Gaps of 3 leave room between neighbours; both directions stay clear of overflow.
        Pattern::Ascending => (0..n as u64).map(|i| be_key(i * 3)).collect(),
        Pattern::Descending => (0..n as u64).map(|i| be_key(u64::MAX - i * 3)).collect(),
        Pattern::AllEqual => vec![fixed; n],
        Pattern::FewDistinct => {
            let set: Vec<[u8; 10]> = (0..FEW_DISTINCT).map(|_| rng.key()).collect();
            (0..n).map(|_| rng.pick(&set)).collect()
        }
        Pattern::Zipf => (0..n)
            .map(|_| {
                // log-uniform rank in 1..ZIPF_RANKS: P(rank) ~ 1/rank.
                let rank = (rng.f64() * ZIPF_RANKS.ln()).exp() as u64;
                Rng::new(rank ^ u64::from_le_bytes(fixed[..8].try_into().unwrap_or([0; 8]))).key()
            })
            .collect(),
        Pattern::Sorted95 => {
            let mut v: Vec<[u8; 10]> = (0..n as u64).map(|i| be_key(i << 20)).collect();
            for _ in 0..n / 40 {
                let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
                v.swap(a, b);
            }
            v
        }
        Pattern::Sawtooth => {
            let period = 1 + rng.below(SAWTOOTH_MAX_PERIOD);
            (0..n as u64).map(|i| be_key((i % period) << 40)).collect()
        }
        Pattern::EqualPrefix8 => (0..n)
            .map(|_| {
                let mut k = fixed;
                rng.fill(&mut k[8..]);
                k
            })
            .collect(),
        Pattern::EqualPrefix9 => (0..n)
            .map(|_| {
                let mut k = fixed;
                rng.fill(&mut k[9..]);
                k
            })
            .collect(),
        Pattern::Skewed => (0..n)
            .map(|_| {
                let mut k = rng.key();
                if rng.below(2) == 0 {
                    k[..6].copy_from_slice(&fixed[..6]);
                }
                k
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Sizes for the property checks: empty, tiny, and big enough for the statistics to hold.
    const SIZES: [usize; 5] = [0, 1, 2, 1000, 20_000];

    fn keys(p: Pattern, n: usize, seed: u64) -> Vec<[u8; 10]> {
        pattern_keys(p, n, &mut Rng::new(seed))
    }

    #[test]
    fn every_pattern_gives_n_keys_and_replays_from_its_seed() {
        for p in Pattern::ALL {
            for n in SIZES {
                let a = keys(p, n, 11);
                assert_eq!(a.len(), n, "{p} n={n}");
                assert_eq!(a, keys(p, n, 11), "{p} n={n}: same seed, same keys");
            }
        }
        for p in Pattern::ALL {
            assert_eq!(Pattern::from_name(p.name()), Some(p), "names are distinct");
        }
        assert_eq!(Pattern::from_name("no such pattern"), None);
    }

    #[test]
    fn ascending_and_descending_are_strictly_ordered() {
        for n in SIZES {
            let a = keys(Pattern::Ascending, n, 1);
            assert!(a.windows(2).all(|w| w[0] < w[1]), "ascending n={n}");
            let d = keys(Pattern::Descending, n, 1);
            assert!(d.windows(2).all(|w| w[0] > w[1]), "descending n={n}");
        }
    }

    #[test]
    fn all_equal_is_equal_and_few_distinct_is_few() {
        for n in SIZES {
            let e = keys(Pattern::AllEqual, n, 2);
            assert!(e.windows(2).all(|w| w[0] == w[1]), "all_equal n={n}");
            let f: HashSet<_> = keys(Pattern::FewDistinct, n, 2).into_iter().collect();
            assert!(f.len() <= FEW_DISTINCT, "few_distinct n={n}: {} keys", f.len());
        }
        let f: HashSet<_> = keys(Pattern::FewDistinct, 20_000, 2).into_iter().collect();
        assert!(f.len() > 1, "few_distinct has more than one key");
    }

    #[test]
    fn equal_prefixes_share_exactly_the_promised_bytes() {
        for (p, shared) in [(Pattern::EqualPrefix8, 8), (Pattern::EqualPrefix9, 9)] {
            let k = keys(p, 20_000, 3);
            assert!(k.iter().all(|x| x[..shared] == k[0][..shared]), "{p}: shared prefix");
            let tails: HashSet<&[u8]> = k.iter().map(|x| &x[shared..]).collect();
            assert!(tails.len() > 100, "{p}: the tails differ ({} distinct)", tails.len());
        }
    }

    #[test]
    fn zipf_repeats_its_top_keys_with_a_long_tail() {
        let k = keys(Pattern::Zipf, 20_000, 4);
        let mut counts = std::collections::HashMap::new();
        for x in &k {
            *counts.entry(*x).or_insert(0usize) += 1;
        }
        let top = counts.values().max().copied().unwrap_or(0);
        // Rank 1 has probability ln 2 / ln 1e6 ~ 5%; ranks past 1000 hold half the mass.
        assert!(top > 20_000 / 30, "the most common key is frequent: {top}");
        assert!(counts.len() > 20_000 / 10, "a long tail of rare keys: {}", counts.len());
    }

    #[test]
    fn sorted_95_is_mostly_in_place() {
        for n in SIZES {
            let k = keys(Pattern::Sorted95, n, 5);
            let mut sorted = k.clone();
            sorted.sort_unstable();
            let moved = k.iter().zip(&sorted).filter(|(a, b)| a != b).count();
            assert!(moved <= n / 20, "sorted_95 n={n}: {moved} keys out of place");
            if n >= 1000 {
                assert!(moved > 0, "sorted_95 n={n}: some keys are out of place");
            }
        }
    }

    #[test]
    fn sawtooth_restarts_every_run_from_the_same_key() {
        for seed in 0..20 {
            let k = keys(Pattern::Sawtooth, 5000, seed);
            let restarts: Vec<usize> = (1..k.len()).filter(|&i| k[i] <= k[i - 1]).collect();
            assert!(restarts.iter().all(|&i| k[i] == k[0]), "seed {seed}: restarts at the base");
            // One period: the gaps between restarts are all equal.
            let period = restarts.first().copied().unwrap_or(k.len());
            assert!(restarts.iter().enumerate().all(|(j, &i)| i == (j + 1) * period));
        }
    }

    #[test]
    fn skewed_shares_one_prefix_in_half_the_keys() {
        let k = keys(Pattern::Skewed, 20_000, 6);
        let mut by_prefix = std::collections::HashMap::new();
        for x in &k {
            *by_prefix.entry(&x[..6]).or_insert(0usize) += 1;
        }
        let (prefix, top) = by_prefix.into_iter().max_by_key(|&(_, c)| c).unwrap();
        assert!((9_000..11_000).contains(&top), "half share one 6-byte prefix: {top}");
        // The rest are random: their first bytes spread out.
        let first: HashSet<u8> = k.iter().filter(|x| x[..6] != *prefix).map(|x| x[0]).collect();
        assert!(first.len() > 200, "the other keys are random: {} first bytes", first.len());
    }

    #[test]
    fn rng_helpers_stay_in_range() {
        let mut r = Rng::new(9);
        assert_eq!(r.clone().next_u64(), Rng::new(9).next_u64());
        for _ in 0..10_000 {
            assert!(r.below(10) < 10);
            let x = r.f64();
            assert!((0.0..1.0).contains(&x));
            assert!([1, 2, 3].contains(&r.pick(&[1, 2, 3])));
        }
        assert_eq!(r.below(0), 0);
        let hits: HashSet<u64> = (0..1000).map(|_| r.below(7)).collect();
        assert_eq!(hits.len(), 7, "every value of below(7) comes up");
    }

    #[test]
    fn seed_is_chosen_once_per_process() {
        assert_eq!(seed(), seed());
    }
}

//! Test support shared by oxsort's suites: seeded input patterns, an obviously correct oracle
//! sort, checks that a directory holds no leftovers, and [`EngineTester`], which runs a sort
//! through every path of the engine and checks cleanup and peak memory after each.
//!
//! ```
//! use oxsort_testkit::{make_records, oracle_sort, Pattern, Rng};
//! let data = make_records(Pattern::FewDistinct, 100, 100, &mut Rng::new(7));
//! let sorted = oracle_sort(&data, 100, 0, 10);
//! assert_eq!(sorted.len(), data.len());
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::path::Path;

pub mod engine;
pub use engine::{least_budget, serial, setups, EngineTester, MemoryProbe, Setup};

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
    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// Fills `out` with random bytes.
    pub fn fill(&mut self, out: &mut [u8]) {
        for c in out.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
    }
}

/// The seed of a test run: `OXSORT_SEED` when set, else fresh; printed so a failure can be
/// replayed.
pub fn seed() -> u64 {
    let s = match std::env::var("OXSORT_SEED") {
        Ok(v) => v.parse().expect("OXSORT_SEED must be a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
    };
    eprintln!("OXSORT_SEED={s}");
    s
}

/// Key patterns of the test matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Uniformly random keys.
    Random,
    /// Keys already in order.
    Ascending,
    /// Keys in reverse order.
    Descending,
    /// Every key the same (order comes from stability alone).
    AllEqual,
    /// A handful of distinct keys.
    FewDistinct,
    /// Half the records share one first byte and long prefixes, like `gensort -s`.
    Skewed,
    /// Keys equal in their first 8 bytes, differing after.
    EqualPrefix8,
    /// Keys equal in their first 9 bytes, differing in the last.
    EqualPrefix9,
}

impl Pattern {
    /// Every pattern.
    pub const ALL: [Pattern; 8] = [
        Pattern::Random,
        Pattern::Ascending,
        Pattern::Descending,
        Pattern::AllEqual,
        Pattern::FewDistinct,
        Pattern::Skewed,
        Pattern::EqualPrefix8,
        Pattern::EqualPrefix9,
    ];
}

/// `n` records of `record_size` bytes (≥ 18) with a 10-byte key at offset 0 following `pattern`.
/// Bytes 10..18 hold the record's input position (big-endian), so a stable sort's output can be
/// told apart from an unstable one; the rest is random.
pub fn make_records(pattern: Pattern, n: usize, record_size: usize, rng: &mut Rng) -> Vec<u8> {
    assert!(record_size >= 18, "records need room for a key and a position");
    let mut out = vec![0u8; n * record_size];
    for (i, rec) in out.chunks_exact_mut(record_size).enumerate() {
        rng.fill(rec);
        let key: [u8; 10] = match pattern {
            Pattern::Random => rec[..10].try_into().unwrap_or([0; 10]),
            Pattern::Ascending => be_key(i as u64, 0),
            Pattern::Descending => be_key((n - i) as u64, 0),
            Pattern::AllEqual => [7; 10],
            Pattern::FewDistinct => be_key(rng.below(5), 0),
            Pattern::Skewed => {
                let mut k: [u8; 10] = rec[..10].try_into().unwrap_or([0; 10]);
                if rng.below(2) == 0 {
                    let shared = rng.below(7) as usize;
                    k[..shared].copy_from_slice(&[0x46, 0x17, 0x22, 0x91, 0x05, 0xee][..shared]);
                }
                k
            }
            Pattern::EqualPrefix8 => {
                let mut k = [0xab; 10];
                k[8] = rng.below(256) as u8;
                k[9] = rng.below(256) as u8;
                k
            }
            Pattern::EqualPrefix9 => {
                let mut k = [0xcd; 10];
                k[9] = rng.below(3) as u8;
                k
            }
        };
        rec[..10].copy_from_slice(&key);
        rec[10..18].copy_from_slice(&(i as u64).to_be_bytes());
    }
    out
}

fn be_key(v: u64, tail: u16) -> [u8; 10] {
    let mut k = [0u8; 10];
    k[..8].copy_from_slice(&v.to_be_bytes());
    k[8..].copy_from_slice(&tail.to_be_bytes());
    k
}

/// The obviously correct sort: records ordered by key bytes, stable (`slice::sort_by`).
pub fn oracle_sort(data: &[u8], record_size: usize, key_offset: usize, key_len: usize) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks_exact(record_size).collect();
    recs.sort_by(|a, b| {
        a[key_offset..key_offset + key_len].cmp(&b[key_offset..key_offset + key_len])
    });
    recs.concat()
}

/// Names of entries of `dir` that an oxsort run may leave behind by mistake: private temp
/// directories (`.oxsort-*`) and uncommitted outputs (`*.oxsort-*.tmp`).
pub fn leftovers(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".oxsort"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_have_the_promised_keys() {
        let mut rng = Rng::new(1);
        let asc = make_records(Pattern::Ascending, 50, 20, &mut rng);
        assert_eq!(oracle_sort(&asc, 20, 0, 10), asc);
        let eq = make_records(Pattern::AllEqual, 50, 20, &mut rng);
        // Stable: equal keys keep their positions.
        assert_eq!(oracle_sort(&eq, 20, 0, 10), eq);
        let desc = make_records(Pattern::Descending, 50, 20, &mut rng);
        let sorted = oracle_sort(&desc, 20, 0, 10);
        assert_eq!(&sorted[10..18], &49u64.to_be_bytes());
    }

    #[test]
    fn rng_is_reproducible() {
        let (mut a, mut b) = (Rng::new(9), Rng::new(9));
        assert_eq!(a.next_u64(), b.next_u64());
        assert!(Rng::new(3).below(10) < 10);
    }
}

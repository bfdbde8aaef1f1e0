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

mod random;
pub use random::{pattern_keys, seed, Pattern, Rng};

/// `n` records of `record_size` bytes (≥ 18) with a 10-byte key at offset 0 following `pattern`
/// (see [`pattern_keys`]). Bytes 10..18 hold the record's input position (big-endian), so a
/// stable sort's output can be told apart from an unstable one; the rest is random.
pub fn make_records(pattern: Pattern, n: usize, record_size: usize, rng: &mut Rng) -> Vec<u8> {
    assert!(record_size >= 18, "records need room for a key and a position");
    let keys = pattern_keys(pattern, n, rng);
    let mut out = vec![0u8; n * record_size];
    for ((rec, key), i) in out.chunks_exact_mut(record_size).zip(&keys).zip(0u64..) {
        rec[..10].copy_from_slice(key);
        rec[10..18].copy_from_slice(&i.to_be_bytes());
        rng.fill(&mut rec[18..]);
    }
    out
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
    fn records_carry_the_pattern_keys_and_their_positions() {
        for pattern in Pattern::ALL {
            for (n, size) in [(0, 18), (1, 100), (500, 18), (500, 100), (300, 37)] {
                let data = make_records(pattern, n, size, &mut Rng::new(5));
                assert_eq!(data.len(), n * size, "{pattern} n={n} size={size}");
                let keys = pattern_keys(pattern, n, &mut Rng::new(5));
                for (i, rec) in data.chunks_exact(size).enumerate() {
                    assert_eq!(rec[..10], keys[i], "{pattern} n={n} record {i}: key");
                    assert_eq!(rec[10..18], (i as u64).to_be_bytes(), "{pattern} record {i}");
                }
            }
        }
    }

    #[test]
    fn oracle_sort_is_stable_by_key() {
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
}

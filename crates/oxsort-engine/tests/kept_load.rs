//! A two-pass sort whose budget holds the merge's buffers beside its last load keeps that load
//! in memory and merges it from there: the same output as when every load is a run (stable,
//! duplicates dropped across the runs and the load), the load's records never written to a
//! temp file, and nothing left behind.

use std::path::Path;

use oxsort_engine::{sort, Input, Output, PassChoice, SortConfig, SortSpec, SortStats};
use oxsort_testkit::{least_budget, leftovers, make_records, oracle_sort, seed, Pattern, Rng};

/// Records per chunk: small, so a few thousand records make many chunks and parts.
const CHUNK_LOG2: u32 = 4;
/// Record size; the key is the first 10 bytes.
const RECORD: usize = 100;

/// Sorts `data` in two passes with `memory`; the output and the statistics.
fn two_passes(dir: &Path, data: &[u8], unique: bool, memory: u64) -> (Vec<u8>, SortStats) {
    let (input, output) = (dir.join("in"), dir.join("out"));
    std::fs::write(&input, data).unwrap();
    let spec = SortSpec { unique, ..SortSpec::default() };
    let cfg = SortConfig::builder(vec![Input::Path(input)], Output::Path(output.clone()))
        .spec(spec)
        .memory(memory)
        .threads(2)
        .passes(PassChoice::Two)
        .chunk_records_log2(CHUNK_LOG2)
        .temp_dir(dir)
        .build()
        .unwrap();
    let stats = sort(&cfg).unwrap();
    let got = std::fs::read(&output).unwrap();
    std::fs::remove_file(&output).unwrap();
    (got, stats)
}

/// The first record of each key, in key order.
fn first_of_each_key(sorted: &[u8]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    for r in sorted.chunks(RECORD) {
        if out.len() < RECORD || out[out.len() - RECORD..][..10] != r[..10] {
            out.extend_from_slice(r);
        }
    }
    out
}

#[test]
fn the_last_load_is_merged_from_memory_with_the_runs_on_disk() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    for pattern in Pattern::ALL {
        for n in [40usize, 1000, 5003] {
            let data = make_records(pattern, n, RECORD, &mut rng);
            let sorted = oracle_sort(&data, RECORD, 0, 10);
            for unique in [false, true] {
                let what = format!("{pattern:?} n={n} unique={unique} (seed {seed})");
                let (got, stats) = two_passes(dir.path(), &data, unique, 1 << 30);
                let want = if unique { first_of_each_key(&sorted) } else { sorted.clone() };
                assert!(got == want, "{what}: output differs");
                assert_eq!(stats.passes, 2, "{what}");
                assert!(stats.runs >= 2, "{what}: {} runs", stats.runs);
                // The load kept is the last run formed: the others were written.
                assert!(stats.bytes_spilled < data.len() as u64, "{what}: {stats:?}");
                assert!(stats.bytes_spilled > 0, "{what}: {stats:?}");
                let left = leftovers(dir.path());
                assert!(left.is_empty(), "{what}: left behind: {left:?}");
            }
        }
    }
}

#[test]
fn a_budget_without_room_beside_the_load_writes_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(seed());
    let data = make_records(Pattern::Random, 20_000, RECORD, &mut rng);
    // The least budget two passes need: the loads take all of it.
    let least = least_budget(
        &SortConfig::builder(vec![Input::Stdin], Output::Stdout)
            .memory(1)
            .chunk_records_log2(CHUNK_LOG2)
            .build()
            .unwrap(),
    );
    let (got, stats) = two_passes(dir.path(), &data, false, least);
    assert!(got == oracle_sort(&data, RECORD, 0, 10), "output differs");
    assert_eq!(stats.passes, 2);
    // Every record went to a run: the input's bytes spilled (a merge level may add more).
    assert!(stats.bytes_spilled >= data.len() as u64, "{stats:?}");
    assert!(leftovers(dir.path()).is_empty());
}

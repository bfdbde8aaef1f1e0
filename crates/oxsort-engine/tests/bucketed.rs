//! Loads put in bucket order and sorted once, part by part, against a stable reference: key
//! shapes that spread over the ranges drawn from the first chunk (bucketed) and shapes that do
//! not (presorted, reversed, one key, a first chunk unlike the rest: sorted chunk by chunk),
//! on one pass, two passes and a two-pass sort that keeps its last load in memory.

use std::path::Path;

use oxsort_engine::{sort, Input, Output, PassChoice, SortConfig, SortSpec, SortStats};
use oxsort_testkit::{oracle_sort, seed, Rng};

/// 1024 records per chunk: chunks with room for buckets.
const CHUNK_LOG2: u32 = 10;
const RECORD: usize = 100;

/// `n` records whose 10-byte keys follow `shape`; the rest of each record is its input position
/// (so a reordering of equal keys shows).
fn records(shape: &str, n: usize, rng: &mut Rng) -> Vec<u8> {
    let mut out = vec![0u8; n * RECORD];
    for (i, rec) in out.chunks_exact_mut(RECORD).enumerate() {
        let key: u64 = match shape {
            "random" => rng.next_u64(),
            // Few distinct keys: every bucket a run of ties.
            "few keys" => rng.below(50) << 40,
            // Nine keys in ten in a narrow band, the rest anywhere.
            "narrow band" if rng.below(10) > 0 => (1 << 63) + rng.below(1 << 20),
            "narrow band" => rng.next_u64(),
            "sorted" => i as u64 * 7919,
            "reversed" => u64::MAX - i as u64 * 7919,
            "one key" => 42,
            // The first chunk's keys are small, the rest spread over everything.
            "first chunk apart" if i < 1 << CHUNK_LOG2 => rng.below(1000),
            "first chunk apart" => rng.next_u64(),
            other => panic!("no shape {other}"),
        };
        rec[..8].copy_from_slice(&key.to_be_bytes());
        rec[8..10].copy_from_slice(&(rng.below(3) as u16).to_be_bytes());
        rec[10..18].copy_from_slice(&(i as u64).to_be_bytes());
        rec[18..].fill(b'.');
    }
    out
}

fn run(dir: &Path, data: &[u8], memory: u64, passes: PassChoice) -> (Vec<u8>, SortStats) {
    run_spec(dir, data, SortSpec::default(), memory, passes)
}

fn run_spec(
    dir: &Path,
    data: &[u8],
    spec: SortSpec,
    memory: u64,
    passes: PassChoice,
) -> (Vec<u8>, SortStats) {
    let (input, output) = (dir.join("in"), dir.join("out"));
    std::fs::write(&input, data).unwrap();
    let cfg = SortConfig::builder(vec![Input::Path(input)], Output::Path(output.clone()))
        .spec(spec)
        .memory(memory)
        .threads(2)
        .passes(passes)
        .chunk_records_log2(CHUNK_LOG2)
        .temp_dir(dir)
        .build()
        .unwrap();
    let stats = sort(&cfg).unwrap();
    let got = std::fs::read(&output).unwrap();
    std::fs::remove_file(&output).unwrap();
    (got, stats)
}

#[test]
fn bucketed_loads_and_loads_sorted_by_chunk_give_the_stable_order() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let n = 150_000;
    let setups = [
        ("one pass", 256u64 << 20, PassChoice::Auto),
        ("two passes", 12 << 20, PassChoice::Auto),
        ("two passes, last load kept", 1 << 30, PassChoice::Two),
    ];
    for shape in
        ["random", "few keys", "narrow band", "sorted", "reversed", "one key", "first chunk apart"]
    {
        let data = records(shape, n, &mut rng);
        let want = oracle_sort(&data, RECORD, 0, 10);
        for (name, memory, passes) in setups {
            let what = format!("{shape}, {name} (seed {seed})");
            let (got, stats) = run(dir.path(), &data, memory, passes);
            assert!(got == want, "{what}: output differs");
            assert_eq!(stats.records, n as u64, "{what}");
            // Keys drawn from one spread: every load bucketed (few keys or a narrow band may
            // pile up in a bucket too big for a part). Keys in order or all one: the
            // second chunk trips every load, sorted chunk by chunk. A first chunk unlike the
            // rest trips the first load (a later load samples its own first chunk).
            let loads = stats.runs.max(1);
            match shape {
                "random" => assert_eq!(stats.bucketed_loads, loads, "{what}"),
                "sorted" | "reversed" | "one key" => assert_eq!(stats.bucketed_loads, 0, "{what}"),
                "first chunk apart" => assert!(stats.bucketed_loads < loads, "{what}"),
                _ => {}
            }
        }
    }
}

#[test]
fn records_a_filter_drops_leave_no_trace_in_a_bucketed_load() {
    // A third of the records dropped (byte 10 is 1): a chunk's entries skip slots, and its
    // records are rewritten to their buckets without them.
    let seed = seed();
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let n = 150_000;
    let data = records("random", n, &mut rng);
    let control =
        oxsort_lang::parse_control(" INCLUDE COND=(10,1,BI,NE,X'01')\n SORT FIELDS=(1,10,CH,A)\n")
            .unwrap();
    let kept: Vec<u8> =
        data.chunks_exact(RECORD).filter(|r| r[9] != 1).flatten().copied().collect();
    let want = oracle_sort(&kept, RECORD, 0, 10);
    for (name, memory, passes) in
        [("one pass", 256u64 << 20, PassChoice::Auto), ("two passes", 12 << 20, PassChoice::Auto)]
    {
        let what = format!("{name} (seed {seed})");
        let spec = SortSpec { filter: control.filter.clone(), ..SortSpec::default() };
        let (got, stats) = run_spec(dir.path(), &data, spec, memory, passes);
        assert!(got == want, "{what}: output differs");
        assert_eq!(
            (stats.records, stats.records_written),
            (n as u64, (kept.len() / RECORD) as u64)
        );
        assert_eq!(stats.bucketed_loads, stats.runs.max(1), "{what}");
    }
}

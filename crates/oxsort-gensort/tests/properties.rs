//! Property tests: split generation, multi-threaded generation and validation, summaries.

use std::fs;

use oxsort_gensort::tuning::TASK_RECORDS;
use oxsort_gensort::{
    generate, generate_file, generate_to_writer, validate_file, validate_records, Checksum, Kind,
    Summary,
};
use proptest::prelude::*;

fn kind() -> impl Strategy<Value = Kind> {
    prop::sample::select(Kind::ALL.to_vec())
}

/// Starts near the interesting boundaries: 0, 2^60 (skew quirk), 2^64 (carry), 2^124, 2^128.
fn start() -> impl Strategy<Value = u128> {
    let bases = prop::sample::select(vec![0u128, 1 << 32, 1 << 60, 1 << 64, 1 << 124, 0]);
    (bases, -300i64..300).prop_map(|(b, d)| b.wrapping_add(d as i128 as u128))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn split_generation_concatenates(kind in kind(), start in start(), len in 1usize..400,
                                     cuts in prop::collection::vec(0usize..400, 0..5)) {
        let mut whole = vec![0u8; len * 100];
        generate(kind, start, &mut whole);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (len + 1)).collect();
        cuts.push(0);
        cuts.push(len);
        cuts.sort_unstable();
        let mut pieces = Vec::new();
        for w in cuts.windows(2) {
            let mut piece = vec![0u8; (w[1] - w[0]) * 100];
            generate(kind, start.wrapping_add(w[0] as u128), &mut piece);
            pieces.extend_from_slice(&piece);
        }
        prop_assert!(pieces == whole);
    }

    #[test]
    fn summary_round_trip(fu in any::<u128>(), un in any::<u128>(), rc in any::<u128>(),
                          dup in any::<u128>(), ck in any::<u128>(), seed in any::<u64>()) {
        let mut first = [0u8; 100];
        let mut last = [0u8; 100];
        generate(Kind::Binary, seed as u128, &mut first);
        generate(Kind::Ascii, seed as u128, &mut last);
        let s = Summary { first_unordered: fu, unordered: un, records: rc, duplicates: dup,
                          checksum: Checksum::from_value(ck), first_record: first, last_record: last };
        prop_assert_eq!(Summary::from_bytes(&s.to_bytes()), s);
    }

    #[test]
    fn merged_partitions_equal_whole(keys in prop::collection::vec(0u8..4, 1..300),
                                     cuts in prop::collection::vec(0usize..300, 0..6)) {
        // Few distinct keys: many duplicates and descents, some at partition boundaries.
        let mut data = vec![0u8; keys.len() * 100];
        generate(Kind::Binary, 7, &mut data);
        for (rec, k) in data.chunks_exact_mut(100).zip(&keys) {
            rec[..10].fill(*k);
        }
        let whole = validate_records(&data);
        let n = keys.len();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % n).filter(|&c| c > 0).collect();
        cuts.push(0);
        cuts.push(n);
        cuts.sort_unstable();
        cuts.dedup();
        let mut bytes = Vec::new();
        for w in cuts.windows(2) {
            bytes.extend_from_slice(&validate_records(&data[w[0] * 100..w[1] * 100]).to_bytes());
        }
        prop_assert_eq!(Summary::merge_all(&bytes).unwrap(), whole);
    }
}

#[test]
fn threads_do_not_change_generation() {
    let tmp = tempfile::tempdir().unwrap();
    let count = (2 * TASK_RECORDS + 12_345) as u64;
    for (kind, start) in [(Kind::Binary, 0u128), (Kind::SkewAscii, (1u128 << 64) - 100_000)] {
        let one = tmp.path().join("one.dat");
        let three = tmp.path().join("three.dat");
        let s1 = generate_file(&one, start, count, kind, 1, None).unwrap();
        let s3 = generate_file(&three, start, count, kind, 3, None).unwrap();
        let mut streamed = Vec::new();
        let s4 = generate_to_writer(&mut streamed, start, count, kind, 2, None).unwrap();
        let a = fs::read(&one).unwrap();
        let mut whole = vec![0u8; count as usize * 100];
        generate(kind, start, &mut whole);
        assert!(a == whole, "{kind:?}: 1 thread");
        assert!(fs::read(&three).unwrap() == whole, "{kind:?}: 3 threads");
        assert!(streamed == whole, "{kind:?}: streamed");
        assert_eq!(s1, Checksum::of(&whole));
        assert_eq!((s1, s1), (s3, s4));
        // /dev/null: nothing written, same checksum.
        let null = generate_file("/dev/null".as_ref(), start, count, kind, 2, None).unwrap();
        assert_eq!(null, s1);
    }
    let empty = tmp.path().join("empty.dat");
    fs::write(&empty, b"old contents").unwrap();
    assert_eq!(generate_file(&empty, 0, 0, Kind::Binary, 2, None).unwrap(), Checksum::new());
    assert_eq!(fs::metadata(&empty).unwrap().len(), 0, "output is truncated");
}

/// A change applied to sorted data.
type Disturb = dyn Fn(&mut Vec<u8>);

#[test]
fn parallel_validation_equals_sequential() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("v.dat");
    let n = 3 * TASK_RECORDS + 777;
    let mut data = vec![0u8; n * 100];
    generate(Kind::Skew, 0, &mut data);
    // Sorted data, then disturbances placed at task boundaries and near them.
    let mut recs: Vec<Vec<u8>> = data.chunks_exact(100).map(<[u8]>::to_vec).collect();
    recs.sort_unstable();
    let sorted: Vec<u8> = recs.concat();
    let t = TASK_RECORDS;
    let variants: Vec<Box<Disturb>> = vec![
        Box::new(|_| {}),
        // Duplicate key across a boundary.
        Box::new(move |d| {
            let (a, b) = d.split_at_mut(t * 100);
            b[..10].copy_from_slice(&a[a.len() - 100..a.len() - 90]);
        }),
        // Descent exactly at a boundary (first unordered is a task's first record).
        Box::new(move |d| d[2 * t * 100..2 * t * 100 + 10].fill(0)),
        // Descents inside and at several boundaries, duplicates everywhere.
        Box::new(move |d| {
            for i in [1, t - 1, t, t + 1, 2 * t, 3 * t, 3 * t + 776] {
                d[i * 100..i * 100 + 10].fill(0x11);
            }
        }),
    ];
    for (i, v) in variants.iter().enumerate() {
        let mut d = sorted.clone();
        v(&mut d);
        fs::write(&path, &d).unwrap();
        let seq = validate_records(&d);
        for threads in [1, 2, 3] {
            let par = validate_file(&path, threads, None).unwrap();
            assert_eq!(par, seq, "variant {i}, {threads} threads");
        }
    }
    // Unsorted generator output.
    fs::write(&path, &data).unwrap();
    assert_eq!(validate_file(&path, 2, None).unwrap(), validate_records(&data));
    // A partial record at the end reports the whole records' first unordered record.
    fs::write(&path, &data[..data.len() - 50]).unwrap();
    let err = validate_file(&path, 2, None).unwrap_err();
    assert_eq!(err.to_string(), "partial record found at end");
    assert_eq!(err.first_unordered(), Some(2));
}

/// tmpfs refuses O_DIRECT: generation must fall back to buffered writes there.
#[test]
fn generation_on_tmpfs_falls_back_to_buffered() {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("skipped: no /dev/shm on this machine to probe the tmpfs fallback");
        return;
    }
    let tmp = tempfile::tempdir_in(shm).unwrap();
    let path = tmp.path().join("t.dat");
    let count = (TASK_RECORDS + 4321) as u64;
    let sum = generate_file(&path, 99, count, Kind::Skew, 2, None).unwrap();
    let mut whole = vec![0u8; count as usize * 100];
    generate(Kind::Skew, 99, &mut whole);
    assert!(fs::read(&path).unwrap() == whole);
    assert_eq!(sum, Checksum::of(&whole));
}

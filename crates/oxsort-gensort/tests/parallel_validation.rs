//! Parallel file validation (read-ahead pieces validated by several workers, merged in order)
//! gives exactly the sequential result, also when the interesting records sit on the piece
//! boundaries and when the file ends in a partial record.

use std::fs;

use oxsort_gensort::tuning::TASK_RECORDS;
use oxsort_gensort::{generate, validate_file, Error, Kind, Validator, RECORD_LEN};

fn sequential(data: &[u8]) -> Result<oxsort_gensort::Summary, Error> {
    let mut v = Validator::new();
    v.feed(data);
    v.finish()
}

#[test]
fn piece_boundaries_and_partial_tail_match_sequential() {
    // Two and a half pieces of sorted records.
    let count = TASK_RECORDS * 5 / 2;
    let mut data = vec![0u8; count * RECORD_LEN];
    generate(Kind::Binary, 0, &mut data);
    let mut records: Vec<&[u8]> = data.chunks_exact(RECORD_LEN).collect();
    records.sort_unstable();
    let mut data = records.concat();
    // A duplicate key across the first boundary, a descent across the second one.
    let b1 = TASK_RECORDS * RECORD_LEN;
    let b2 = 2 * b1;
    let prev = data[b1 - RECORD_LEN..b1 - RECORD_LEN + 10].to_vec();
    data[b1..b1 + 10].copy_from_slice(&prev);
    data[b2..b2 + 10].fill(0);

    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("in.dat");
    fs::write(&path, &data).unwrap();
    let want = sequential(&data).unwrap();
    assert_eq!(want.first_unordered(), Some(2 * TASK_RECORDS as u128));
    for threads in [1, 2, 3] {
        let got = validate_file(&path, threads, None).unwrap();
        assert_eq!(got.report(), want.report(), "{threads} threads");
        assert_eq!(got.to_bytes(), want.to_bytes(), "{threads} threads: summary");
    }

    data.extend_from_slice(&[7u8; 37]);
    fs::write(&path, &data).unwrap();
    let err = validate_file(&path, 2, None).unwrap_err();
    assert!(matches!(err, Error::PartialRecord { .. }), "{err}");
    assert_eq!(err.first_unordered(), sequential(&data).unwrap_err().first_unordered());
}

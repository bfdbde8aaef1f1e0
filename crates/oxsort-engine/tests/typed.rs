//! General keys through the engine, against a reference that decodes the fields and
//! stable-sorts the tuples: composite typed keys, keys whose 10-byte prefixes tie, filters,
//! duplicate removal, merge and copy modes, on one and two passes.

use std::cmp::Reverse;
use std::path::Path;

use oxsort_engine::{sort, EngineError, Input, Mode, Output, SortConfig, SortSpec, SortStats};
use oxsort_format::{KeySpec, RecordLayout};
use oxsort_lang::{parse_control, parse_fields};
use oxsort_testkit::{leftovers, seed, setups, EngineTester, Rng, Setup};

const R: usize = 40;

/// Records of 40 bytes: CH key at 0..10 (few distinct values), BI u32 at 10..14 (few distinct),
/// FI i64 at 20..28, the input position at 32..40.
fn records(n: usize, rng: &mut Rng) -> Vec<u8> {
    let mut out = vec![0u8; n * R];
    for (i, rec) in out.chunks_exact_mut(R).enumerate() {
        rng.fill(rec);
        let ch = rng.below(4) as u8;
        rec[..10].copy_from_slice(&[b'a' + ch; 10]);
        rec[10..14].copy_from_slice(&((rng.below(3) as u32) << 30).to_be_bytes());
        let fi: i64 = match rng.below(4) {
            0 => i64::MIN + rng.below(3) as i64,
            1 => -(rng.below(5) as i64),
            2 => rng.below(5) as i64,
            _ => rng.next_u64() as i64,
        };
        rec[20..28].copy_from_slice(&fi.to_be_bytes());
        rec[32..40].copy_from_slice(&(i as u64).to_be_bytes());
    }
    out
}

type Tuple = (Reverse<u32>, i64, [u8; 10]);

fn decode(rec: &[u8]) -> Tuple {
    (
        Reverse(u32::from_be_bytes(rec[10..14].try_into().unwrap())),
        i64::from_be_bytes(rec[20..28].try_into().unwrap()),
        rec[..10].try_into().unwrap(),
    )
}

/// Stable sort by the decoded tuple.
fn reference(data: &[u8], keep: impl Fn(&[u8]) -> bool, unique: bool) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks_exact(R).filter(|r| keep(r)).collect();
    recs.sort_by_key(|r| decode(r));
    if unique {
        recs.dedup_by_key(|r| decode(r));
    }
    recs.concat()
}

/// What is sorted: `R`-byte records by `key`.
fn spec(key: Option<KeySpec>) -> SortSpec {
    SortSpec { layout: RecordLayout::Fixed(R), key, ..SortSpec::default() }
}

/// A one-pass sort of `input` into `out` by `spec`.
fn config(input: &Path, out: &Path, spec: SortSpec) -> oxsort_engine::SortConfigBuilder {
    SortConfig::builder(vec![Input::Path(input.into())], Output::Path(out.into()))
        .spec(spec)
        .memory(64 << 20)
        .chunk_records_log2(CHUNK_LOG2)
}

/// Records per chunk in the tester's setups (2^5): small, so a few thousand records cross
/// chunks and, at the least budget, runs.
const CHUNK_LOG2: u32 = 5;

/// Sorts `input` by `spec` through setup `s` (the engine tester checks cleanup and peak
/// memory) and writes the output to `out`.
fn sort_through(
    s: &Setup,
    spec: SortSpec,
    input: &Path,
    out: &Path,
) -> Result<SortStats, EngineError> {
    let t = EngineTester::new();
    let (bytes, stats) = t.run_inputs(s, &spec, vec![Input::Path(input.into())])?;
    std::fs::write(out, bytes).unwrap();
    Ok(stats)
}

#[test]
fn composite_typed_key_matches_the_decoded_reference() {
    let mut rng = Rng::new(seed());
    let key = parse_fields("11,4,BI,D,21,8,FI,A,1,10,CH,A").unwrap();
    for s in setups(CHUNK_LOG2) {
        let what = s.name;
        for n in [0usize, 1, 31, 32, 33, 1000, 30011] {
            let d = tempfile::tempdir().unwrap();
            let (input, out) = (d.path().join("in.dat"), d.path().join("out.dat"));
            let data = records(n, &mut rng);
            std::fs::write(&input, &data).unwrap();
            let stats = sort_through(&s, spec(Some(key.clone())), &input, &out)
                .unwrap_or_else(|e| panic!("{what} n={n}: {e}"));
            assert!(
                std::fs::read(&out).unwrap() == reference(&data, |_| true, false),
                "{what} n={n}"
            );
            if n == 30011 && s.two_pass() {
                assert_eq!(stats.passes, 2, "{what}");
            }
            assert!(leftovers(d.path()).is_empty());
        }
    }
}

#[test]
fn keys_whose_prefixes_all_tie_are_ordered_by_their_whole_keys() {
    // A 20-byte CH key whose first 12 bytes are shared: every 10-byte prefix ties.
    let mut rng = Rng::new(seed());
    let key = parse_fields("1,20,CH,A").unwrap();
    for s in setups(CHUNK_LOG2) {
        let what = s.name;
        let d = tempfile::tempdir().unwrap();
        let (input, out) = (d.path().join("in.dat"), d.path().join("out.dat"));
        let mut data = records(5000, &mut rng);
        for rec in data.chunks_exact_mut(R) {
            rec[..12].copy_from_slice(b"https://www.");
            let v = rng.below(50) as u8;
            rec[12..20].copy_from_slice(&[
                b'a' + v / 8,
                b'a' + v % 8,
                b'x',
                b'x',
                b'x',
                b'x',
                b'x',
                b'x',
            ]);
        }
        std::fs::write(&input, &data).unwrap();
        sort_through(&s, spec(Some(key.clone())), &input, &out).unwrap();
        let mut want: Vec<&[u8]> = data.chunks_exact(R).collect();
        want.sort_by(|a, b| a[..20].cmp(&b[..20]));
        assert!(std::fs::read(&out).unwrap() == want.concat(), "{what}");
    }
}

#[test]
fn include_omit_and_sum_fields_none_match_the_reference() {
    let mut rng = Rng::new(seed());
    let control = parse_control(
        "* keep records whose BI field is not 0 and whose key is not 'bbbbbbbbbb'\n INCLUDE COND=(11,4,BI,NE,X'00000000',AND,1,10,CH,NE,C'bbbbbbbbbb')\n SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)\n SUM FIELDS=NONE\n",
    )
    .unwrap();
    let keep = |r: &[u8]| r[10..14] != [0, 0, 0, 0] && &r[..10] != b"bbbbbbbbbb";
    for s in setups(CHUNK_LOG2) {
        let what = s.name;
        for unique in [false, true] {
            let d = tempfile::tempdir().unwrap();
            let (input, out) = (d.path().join("in.dat"), d.path().join("out.dat"));
            let data = records(6000, &mut rng);
            std::fs::write(&input, &data).unwrap();
            let sp =
                SortSpec { filter: control.filter.clone(), unique, ..spec(control.key.clone()) };
            let stats = sort_through(&s, sp, &input, &out)
                .unwrap_or_else(|e| panic!("{what} unique={unique}: {e}"));
            let want = reference(&data, keep, unique);
            assert!(std::fs::read(&out).unwrap() == want, "{what} unique={unique}");
            assert_eq!(stats.records, 6000);
            assert_eq!(stats.records_written as usize, want.len() / R);
            assert!(leftovers(d.path()).is_empty());
        }
    }
}

#[test]
fn unique_on_the_fast_path_keeps_the_first_of_each_key() {
    let mut rng = Rng::new(seed());
    for s in setups(CHUNK_LOG2) {
        let what = s.name;
        let d = tempfile::tempdir().unwrap();
        let (input, out) = (d.path().join("in.dat"), d.path().join("out.dat"));
        let data = records(7000, &mut rng);
        std::fs::write(&input, &data).unwrap();
        let sp = SortSpec { unique: true, ..spec(Some(parse_fields("1,10,CH,A").unwrap())) };
        sort_through(&s, sp, &input, &out).unwrap();
        let mut want: Vec<&[u8]> = data.chunks_exact(R).collect();
        want.sort_by(|a, b| a[..10].cmp(&b[..10]));
        want.dedup_by(|b, a| a[..10] == b[..10]);
        assert!(std::fs::read(&out).unwrap() == want.concat(), "{what}");
    }
}

#[test]
fn merge_mode_merges_sorted_inputs_and_names_an_unsorted_one() {
    let mut rng = Rng::new(seed());
    let key = parse_fields("11,4,BI,D,21,8,FI,A,1,10,CH,A").unwrap();
    let d = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    let mut all = Vec::new();
    for i in 0..3 {
        let data = records(700 + i * 300, &mut rng);
        let sorted = reference(&data, |_| true, false);
        let p = d.path().join(format!("sorted{i}.dat"));
        std::fs::write(&p, &sorted).unwrap();
        all.extend_from_slice(&sorted);
        inputs.push(Input::Path(p));
    }
    let out = d.path().join("out.dat");
    for s in setups(CHUNK_LOG2) {
        let what = s.name;
        let sp = SortSpec { mode: Mode::Merge, ..spec(Some(key.clone())) };
        let (got, _) = EngineTester::new()
            .run_inputs(&s, &sp, inputs.clone())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(got == reference(&all, |_| true, false), "{what}");
    }
    // Swap two records of the second input: the error names it and the record.
    let _serial = oxsort_testkit::serial();
    let bad = d.path().join("sorted1.dat");
    let mut data = std::fs::read(&bad).unwrap();
    let (a, b) = (100 * R, 500 * R);
    let tmp = data[a..a + R].to_vec();
    data.copy_within(b..b + R, a);
    data[b..b + R].copy_from_slice(&tmp);
    std::fs::write(&bad, &data).unwrap();
    let cfg = SortConfig::builder(inputs.clone(), Output::Path(out.clone()))
        .spec(SortSpec { mode: Mode::Merge, ..spec(Some(key.clone())) })
        .chunk_records_log2(5)
        .build()
        .unwrap();
    match sort(&cfg) {
        Err(e @ EngineError::Unordered { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("sorted1.dat") && msg.contains("record 10"), "{msg}");
        }
        other => panic!("expected an order error, got {other:?}"),
    }
}

#[test]
fn copy_mode_keeps_input_order_through_the_filter() {
    let mut rng = Rng::new(seed());
    let control =
        parse_control(" OMIT COND=(1,10,CH,EQ,C'aaaaaaaaaa')\n SORT FIELDS=COPY\n").unwrap();
    assert!(control.copy);
    for s in setups(CHUNK_LOG2) {
        let what = s.name;
        let d = tempfile::tempdir().unwrap();
        let (input, out) = (d.path().join("in.dat"), d.path().join("out.dat"));
        let data = records(5000, &mut rng);
        std::fs::write(&input, &data).unwrap();
        let sp = SortSpec { filter: control.filter.clone(), mode: Mode::Copy, ..spec(None) };
        sort_through(&s, sp, &input, &out).unwrap();
        let want: Vec<u8> =
            data.chunks_exact(R).filter(|r| &r[..10] != b"aaaaaaaaaa").flatten().copied().collect();
        assert!(std::fs::read(&out).unwrap() == want, "{what}");
    }
}

#[test]
fn invalid_packed_digits_name_the_record_and_lose_nothing() {
    let _serial = oxsort_testkit::serial();
    let d = tempfile::tempdir().unwrap();
    let (input, out) = (d.path().join("in.dat"), d.path().join("out.dat"));
    let mut data = vec![0u8; 100 * R];
    for (i, rec) in data.chunks_exact_mut(R).enumerate() {
        rec[0..3].copy_from_slice(&[0x00, (i % 10) as u8 * 16, 0x0C]); // +0i, valid packed
    }
    data[57 * R + 1] = 0xA0; // a nibble above 9 in record 58
    std::fs::write(&input, &data).unwrap();
    let cfg = config(&input, &out, spec(Some(parse_fields("1,3,PD,A").unwrap()))).build().unwrap();
    let e = sort(&cfg).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("in.dat") && msg.contains("record 58"), "{msg}");
    assert!(!out.exists());
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn stopaft_with_a_filter_ends_the_input_whichever_load_it_ends_in() {
    // STOPAFT after a filter is found as the records are read; where the n-th accepted record
    // falls in the last chunk of a full load, the reader's look past the load (is the input
    // exhausted?) must stop there too.
    let mut rng = Rng::new(seed());
    let control =
        parse_control(" INCLUDE COND=(1,10,CH,NE,C'bbbbbbbbbb')\n SORT FIELDS=(1,10,CH,A)\n")
            .unwrap();
    let keep = |r: &[u8]| &r[..10] != b"bbbbbbbbbb";
    let data = records(3000, &mut rng);
    let d = tempfile::tempdir().unwrap();
    let (input, out) = (d.path().join("in.dat"), d.path().join("out.dat"));
    std::fs::write(&input, &data).unwrap();
    for s in setups(CHUNK_LOG2).into_iter().filter(|s| s.two_pass()) {
        for stop in (1..2300u64).step_by(9) {
            let sp = SortSpec {
                filter: control.filter.clone(),
                stopaft: Some(stop),
                ..spec(control.key.clone())
            };
            let stats = sort_through(&s, sp, &input, &out)
                .unwrap_or_else(|e| panic!("{} STOPAFT={stop}: {e}", s.name));
            let kept: Vec<&[u8]> =
                data.chunks_exact(R).filter(|r| keep(r)).take(stop as usize).collect();
            let mut want = kept.clone();
            want.sort_by(|a, b| a[..10].cmp(&b[..10]));
            assert!(std::fs::read(&out).unwrap() == want.concat(), "{} STOPAFT={stop}", s.name);
            assert_eq!(stats.records_written, kept.len() as u64, "{} STOPAFT={stop}", s.name);
        }
    }
}

//! A byte range of one input file (`SortConfigBuilder::input_range`), as a cluster's map sorts
//! its share of a large file: the output is the sort of those bytes alone (fixed records and
//! lines), on one pass and two, with the statistics of those records; the plan is sized for
//! the range; ranges the sort cannot read are refused before anything is written, naming the
//! problem.

use std::path::Path;

use oxsort_engine::{error_message, plan, sort, Input, Output, PassChoice, SortConfig};
use oxsort_format::{RecordLayout, SortSpec};
use oxsort_testkit::{leftovers, make_records, oracle_sort, seed, Pattern, Rng};

const RECORD: usize = 100;
const RECORDS: usize = 3_000;
/// Records per chunk (2^4): a range crosses many chunks and, at the small budget, runs.
const CHUNK_LOG2: u32 = 4;

fn config(input: &Path, out: &Path, range: (u64, u64), passes: PassChoice) -> SortConfig {
    SortConfig::builder(vec![Input::Path(input.to_path_buf())], Output::Path(out.to_path_buf()))
        .spec(SortSpec::with_layout(RecordLayout::Fixed(RECORD)))
        .chunk_records_log2(CHUNK_LOG2)
        .memory(64 << 20)
        .passes(passes)
        .input_range(range.0, range.1)
        .build()
        .unwrap()
}

#[test]
fn a_range_sorts_as_its_bytes_alone_would() {
    let _serial = oxsort_testkit::serial();
    let data = make_records(Pattern::FewDistinct, RECORDS, RECORD, &mut Rng::new(seed()));
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("in");
    std::fs::write(&input, &data).unwrap();
    let out = root.path().join("out");
    let r = RECORD as u64;
    let len = data.len() as u64;
    for (start, end) in [(0, 1000 * r), (1000 * r, 2500 * r), (2999 * r, len), (7 * r, 7 * r)] {
        let part = &data[start as usize..end as usize];
        let want = oracle_sort(part, RECORD, 0, 10);
        for passes in [PassChoice::One, PassChoice::Two] {
            let cfg = config(&input, &out, (start, end), passes);
            let p = plan(&cfg).unwrap();
            assert_eq!(p.input_bytes, Some(end - start), "{start}..{end}: {p:?}");
            assert_eq!(p.records, Some((end - start) / r), "{start}..{end}");
            assert!(!p.input_mapped, "{start}..{end}: a range is read, not mapped");
            let st = sort(&cfg).unwrap();
            let got = std::fs::read(&out).unwrap();
            assert!(got == want, "{start}..{end} {passes:?}: not the sort of the range's bytes");
            assert_eq!((st.records, st.bytes), ((end - start) / r, end - start));
            assert_eq!((st.skipped_records, st.unread_records), (0, 0));
            // The input's checksum is of the range's records: the same as its output's.
            assert_eq!(st.input_checksum, st.checksum, "{start}..{end} {passes:?}");
        }
    }
    std::fs::remove_file(&out).unwrap();
    assert_eq!(leftovers(root.path()), Vec::<String>::new());
}

#[test]
fn a_range_of_lines_sorts_as_its_lines_alone_would() {
    let _serial = oxsort_testkit::serial();
    let mut rng = Rng::new(seed());
    let lines: Vec<Vec<u8>> = (0..4000)
        .map(|_| {
            let n = 1 + rng.below(40) as usize;
            let mut l: Vec<u8> = (0..n).map(|_| b'a' + rng.below(4) as u8).collect();
            l.push(b'\n');
            l
        })
        .collect();
    // The file's last line lacks its terminator (the sort adds it, as to any input's).
    let mut data = lines.concat();
    data.pop();
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("in");
    std::fs::write(&input, &data).unwrap();
    let out = root.path().join("out");
    let starts: Vec<u64> = std::iter::once(0)
        .chain(lines.iter().scan(0u64, |at, l| {
            *at += l.len() as u64;
            Some(*at)
        }))
        .collect();
    let len = data.len() as u64;
    for (first, last) in [(0, 1000), (1000, 2500), (2500, 4000), (17, 17)] {
        let (start, end) = (starts[first], starts[last].min(len));
        let mut want: Vec<&Vec<u8>> = lines[first..last].iter().collect();
        want.sort();
        let want = want.into_iter().flatten().copied().collect::<Vec<u8>>();
        for passes in [PassChoice::One, PassChoice::Two] {
            let cfg =
                SortConfig::builder(vec![Input::Path(input.clone())], Output::Path(out.clone()))
                    .spec(SortSpec::with_layout(RecordLayout::LINES))
                    .memory(64 << 20)
                    .passes(passes)
                    .input_range(start, end)
                    .build()
                    .unwrap();
            assert_eq!(plan(&cfg).unwrap().input_bytes, Some(end - start));
            let st = sort(&cfg).unwrap();
            let got = std::fs::read(&out).unwrap();
            assert!(got == want, "lines {first}..{last} {passes:?}: not the sort of those lines");
            assert_eq!(st.records, (last - first) as u64, "lines {first}..{last}");
        }
    }
    // A range whose ends are not where lines start is refused by the plan, naming the byte.
    let cfg = SortConfig::builder(vec![Input::Path(input.clone())], Output::Path(out.clone()))
        .spec(SortSpec::with_layout(RecordLayout::LINES))
        .input_range(starts[10], starts[20] + 1)
        .build()
        .unwrap();
    let e = error_message(&sort(&cfg).unwrap_err());
    let at = format!("no record starts at byte {}", starts[20] + 1);
    assert!(e.contains(&at) && e.contains(&input.display().to_string()), "{e}");
    std::fs::remove_file(&out).unwrap();
    assert_eq!(leftovers(root.path()), Vec::<String>::new());
}

#[test]
fn ranges_the_sort_cannot_read_are_refused_before_anything_is_written() {
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("in");
    std::fs::write(&input, vec![b'a'; 10 * RECORD]).unwrap();
    let out = root.path().join("out");
    let build = |spec: SortSpec, inputs: Vec<Input>, range: (u64, u64)| {
        SortConfig::builder(inputs, Output::Path(out.clone()))
            .spec(spec)
            .input_range(range.0, range.1)
            .build()
            .map(|_| ())
            .map_err(|e| error_message(&e))
    };
    let fixed = || SortSpec::with_layout(RecordLayout::Fixed(RECORD));
    let one = || vec![Input::Path(input.clone())];
    let refused = |got: Result<(), String>, want: &str| {
        let e = got.expect_err(want);
        assert!(e.contains(want), "{e:?} should say {want:?}");
    };
    refused(build(fixed(), one(), (50, 300)), "boundaries of its 100-byte records");
    refused(build(fixed(), one(), (300, 200)), "ends before it starts");
    refused(build(SortSpec::with_layout(RecordLayout::Variable(100)), one(), (0, 100)), "RDW");
    refused(build(fixed(), vec![Input::Path(input.clone()); 2], (0, 100)), "one input file");
    refused(build(fixed(), vec![Input::Stdin], (0, 100)), "one input file");
    let skip = SortSpec { skiprec: Some(1), ..fixed() };
    refused(build(skip, one(), (0, 100)), "SKIPREC");
    // Past the file's end: found by the plan, which names the file.
    let cfg = config(&input, &out, (0, 20 * RECORD as u64), PassChoice::Auto);
    let e = error_message(&sort(&cfg).unwrap_err());
    assert!(e.contains(&input.display().to_string()) && e.contains("holds 1000 bytes"), "{e}");
    assert!(!out.exists());
    assert_eq!(leftovers(root.path()), Vec::<String>::new());
}

//! An input that changes while it is read (truncated, or written to) fails the sort with an
//! error naming it, the planned and the read length, and nothing is left under the output name
//! or in the temp directory; on one pass and two, for fixed records, lines, RDW-prefixed records
//! and a SKIPREC window.
//! The change is made at a chosen read through the I/O fault plan, so it always lands mid-read.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use oxsort_engine::{error_message, sort, EngineError, Input, Output, PassChoice, SortConfig};
use oxsort_format::{RecordLayout, SortSpec};
use oxsort_io::{FaultPlan, IoOptions};
use oxsort_testkit::{leftovers, make_records, seed, Pattern, Rng};

const RECORD: usize = 100;
const RECORDS: usize = 5_000;
/// Records per chunk of fixed records (2^4): small, so the input is read in many transfers.
const CHUNK_LOG2: u32 = 4;
/// Bytes per chunk of lines and RDW-prefixed records (2^12), for the same reason.
const LINES_CHUNK_LOG2: u32 = 12;
/// The read before which the input changes: well after the first, well before the last.
const CHANGE_AT: u64 = 12;

/// What happens to the input before read [`CHANGE_AT`].
#[derive(Clone, Copy, Debug)]
enum Change {
    /// Cut to a third of its length, on a record boundary.
    Shrink,
    /// Records appended.
    Grow,
}

struct Case {
    _root: tempfile::TempDir,
    input: PathBuf,
    out: PathBuf,
    temp: PathBuf,
    len: u64,
}

fn case(data: &[u8]) -> Case {
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("in.dat");
    let temp = root.path().join("temp");
    std::fs::create_dir(&temp).unwrap();
    std::fs::write(&input, data).unwrap();
    Case { out: root.path().join("sorted.dat"), input, temp, len: data.len() as u64, _root: root }
}

/// The fault plan that makes `change` to `path` (of `len` bytes; `unit` bytes per record).
fn plan_of(change: Change, path: &Path, len: u64, unit: u64) -> Arc<FaultPlan> {
    let path = path.to_path_buf();
    Arc::new(FaultPlan::before_read(CHANGE_AT, move || match change {
        Change::Shrink => {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(len / 3 / unit * unit).unwrap();
        }
        Change::Grow => {
            let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
            f.write_all(&vec![b'\n'; unit as usize * 10]).unwrap();
        }
    }))
}

/// Sorts `c` with `spec` and the change made mid-read; checks the error and that nothing is
/// left behind.
fn expect_changed(c: &Case, spec: SortSpec, passes: PassChoice, change: Change, unit: u64) {
    let chunk_log2 = match spec.layout {
        RecordLayout::Fixed(_) => CHUNK_LOG2,
        _ => LINES_CHUNK_LOG2,
    };
    let faults = plan_of(change, &c.input, c.len, unit);
    let cfg = SortConfig::builder(vec![Input::Path(c.input.clone())], Output::Path(c.out.clone()))
        .spec(spec)
        .memory(64 << 20)
        .threads(2)
        .chunk_records_log2(chunk_log2)
        .passes(passes)
        .temp_dir(&c.temp)
        .io(IoOptions { faults: Some(faults.clone()), ..IoOptions::default() })
        .build()
        .unwrap();
    let what = format!("{change:?} {passes:?}");
    let err = sort(&cfg).expect_err(&format!("{what}: the sort must fail"));
    assert!(faults.reads() >= CHANGE_AT, "{what}: the change was made ({} reads)", faults.reads());
    let now = std::fs::metadata(&c.input).unwrap().len();
    match &err {
        EngineError::InputChanged { path, expected, read } => {
            assert_eq!(path, &c.input, "{what}");
            assert_eq!(*expected, c.len, "{what}");
            match change {
                Change::Shrink => assert!(*read < c.len, "{what}: read {read}"),
                Change::Grow => assert_eq!(*read, now, "{what}"),
            }
        }
        e => panic!("{what}: not InputChanged: {}", error_message(e)),
    }
    let msg = error_message(&err);
    assert!(
        msg.contains("in.dat changed while it was read") && msg.contains(&c.len.to_string()),
        "{what}: {msg}"
    );
    assert!(!c.out.exists(), "{what}: an output was left");
    let dir = c.out.parent().unwrap();
    assert_eq!(leftovers(dir), Vec::<String>::new(), "{what}");
    assert_eq!(leftovers(&c.temp), Vec::<String>::new(), "{what}");
}

/// The same sort as [`expect_changed`]'s, with the fault plan's action doing nothing: it
/// succeeds (the check is of the change, not of the setup).
fn expect_unchanged(data: &[u8]) {
    let c = case(data);
    let faults = Arc::new(FaultPlan::before_read(CHANGE_AT, || ()));
    let cfg = SortConfig::builder(vec![Input::Path(c.input.clone())], Output::Path(c.out.clone()))
        .spec(SortSpec::with_layout(RecordLayout::Fixed(RECORD)))
        .memory(64 << 20)
        .chunk_records_log2(CHUNK_LOG2)
        .passes(PassChoice::Two)
        .temp_dir(&c.temp)
        .io(IoOptions { faults: Some(faults.clone()), ..IoOptions::default() })
        .build()
        .unwrap();
    let stats = sort(&cfg).unwrap();
    assert!(faults.reads() >= CHANGE_AT);
    assert_eq!(stats.records, RECORDS as u64);
    assert_eq!(std::fs::metadata(&c.out).unwrap().len(), c.len);
}

#[test]
fn fixed_records_changed_while_read_fail_on_one_pass_and_two() {
    let data = make_records(Pattern::Random, RECORDS, RECORD, &mut Rng::new(seed()));
    expect_unchanged(&data);
    for change in [Change::Shrink, Change::Grow] {
        for passes in [PassChoice::One, PassChoice::Two] {
            let c = case(&data);
            let spec = SortSpec::with_layout(RecordLayout::Fixed(RECORD));
            expect_changed(&c, spec, passes, change, RECORD as u64);
        }
    }
}

#[test]
fn lines_changed_while_read_fail() {
    let mut rng = Rng::new(seed());
    let mut data = Vec::new();
    for _ in 0..20_000 {
        let n = 1 + rng.below(30) as usize;
        data.extend((0..n).map(|_| b'a' + rng.below(26) as u8));
        data.push(b'\n');
    }
    for change in [Change::Shrink, Change::Grow] {
        for passes in [PassChoice::One, PassChoice::Two] {
            let c = case(&data);
            expect_changed(&c, SortSpec::with_layout(RecordLayout::LINES), passes, change, 1);
        }
    }
}

#[test]
fn rdw_records_changed_while_read_fail() {
    // Variable records, each after its 4-byte RDW (length with the RDW, big-endian; two zeros).
    let mut rng = Rng::new(seed());
    let mut data = Vec::new();
    for _ in 0..20_000 {
        let n = 1 + rng.below(40) as usize;
        data.extend_from_slice(&((n + 4) as u16).to_be_bytes());
        data.extend_from_slice(&[0, 0]);
        data.extend((0..n).map(|_| rng.below(256) as u8));
    }
    for change in [Change::Shrink, Change::Grow] {
        for passes in [PassChoice::One, PassChoice::Two] {
            let c = case(&data);
            let spec = SortSpec::with_layout(RecordLayout::Variable(44));
            expect_changed(&c, spec, passes, change, 1);
        }
    }
}

#[test]
fn a_skiprec_window_cut_short_by_a_truncation_fails() {
    // SKIPREC reads a range of the file: a truncation inside it is found too.
    let data = make_records(Pattern::Random, RECORDS, RECORD, &mut Rng::new(seed()));
    let c = case(&data);
    let spec = SortSpec { skiprec: Some(10), ..SortSpec::with_layout(RecordLayout::Fixed(RECORD)) };
    expect_changed(&c, spec, PassChoice::One, Change::Shrink, RECORD as u64);
}

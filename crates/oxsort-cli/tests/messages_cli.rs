//! Error messages in plain words: the file and the problem, no "(os error N)", plurals right,
//! a data error not called a configuration error, and a directory named by what it is for.

mod common;
use common::{oxsort, run, stderr};

/// Runs `oxsort sort ARGS --no-progress` in `dir`; it must fail; returns its stderr.
fn fails(dir: &std::path::Path, args: &[&str]) -> String {
    let o = run(oxsort().current_dir(dir).arg("sort").args(args).arg("--no-progress"));
    assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
    let e = stderr(&o);
    assert!(!e.contains("(os error"), "{args:?}: {e}");
    e
}

#[test]
fn system_errors_are_said_without_their_numbers() {
    let d = tempfile::tempdir().unwrap();
    let e = fails(d.path(), &["nope.dat", "-o", "out.dat"]);
    assert_eq!(e, "oxsort: nope.dat: No such file or directory\n");
    let e = fails(d.path(), &[".", "-o", "out.dat"]);
    assert_eq!(e, "oxsort: .: Is a directory\n");
}

#[test]
fn one_byte_left_over_is_one_byte() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("in.dat"), [b'a'; 101]).unwrap();
    let e = fails(d.path(), &["in.dat", "-o", "out.dat"]);
    assert!(e.contains(": 101 bytes is not a whole number of 100-byte records"), "{e}");
    assert!(e.contains(": 1 byte left over after record 1"), "{e}");
}

#[test]
fn a_record_too_long_is_a_data_error_not_a_configuration_error() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("in.txt"), vec![b'a'; 3 << 20]).unwrap();
    let e = fails(d.path(), &["in.txt", "--lines", "--memory", "4M", "-o", "out.txt"]);
    assert!(e.contains("in.txt: record 1 is longer than"), "{e}");
    assert!(!e.contains("invalid configuration"), "{e}");
}

#[test]
fn directories_are_named_by_what_they_are_for() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("in.txt"), "b\na\n").unwrap();
    let e = fails(d.path(), &["in.txt", "--lines", "-o", "missing/out.txt"]);
    assert_eq!(e, "oxsort: checking the output directory missing: No such file or directory\n");
    let e = fails(
        d.path(),
        &["in.txt", "--lines", "--passes", "two", "--temp-dir", "gone", "-o", "out.txt"],
    );
    assert_eq!(e, "oxsort: checking the temp directory gone: No such file or directory\n");
}

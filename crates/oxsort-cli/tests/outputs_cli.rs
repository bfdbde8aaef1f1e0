//! Outputs that are not plain files, and output mistakes found before any work: `/dev/null`
//! and `/dev/full` are streams (no temp file, no truncation), a directory or an unwritable
//! summary path stops the sort before it reads anything, a reader that stops reading ends the
//! sort quietly, and an operating system error is said once.

mod common;

use std::io::Read;
use std::process::Stdio;

use common::{gen, oxsort, run, stderr};
use oxsort_testkit::leftovers;

#[test]
fn dev_null_is_written_as_a_stream_and_dev_full_fails_at_once() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    gen(&input, 50_000);
    let o = run(oxsort().arg("sort").arg(&input).args(["-o", "/dev/null", "--no-progress"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("SUCCESS"), "{}", stderr(&o));
    // Two passes to /dev/null as well: the merge writes the stream.
    let o = run(oxsort()
        .arg("sort")
        .arg(&input)
        .args(["-o", "/dev/null", "--memory", "2M", "--no-progress"])
        .arg("--temp-dir")
        .arg(d.path()));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(oxsort().arg("sort").arg(&input).args(["-o", "/dev/full", "--no-progress"]));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "oxsort: cannot write the output /dev/full: No space left on device\n");
    assert!(leftovers(d.path()).is_empty(), "{:?}", leftovers(d.path()));
}

#[test]
fn a_directory_output_or_a_bad_summary_path_stops_the_sort_before_it_starts() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    gen(&input, 10_000);
    let cases: [(Vec<String>, String); 3] = [
        (
            vec!["-o".into(), d.path().display().to_string()],
            format!("oxsort: cannot write the output {}: it is a directory\n", d.path().display()),
        ),
        (
            vec![
                "-o".into(),
                d.path().join("out.dat").display().to_string(),
                "--summary".into(),
                d.path().join("missing/x.sum").display().to_string(),
            ],
            format!(
                "oxsort: the summary {}: checking its directory {}: No such file or directory\n",
                d.path().join("missing/x.sum").display(),
                d.path().join("missing").display()
            ),
        ),
        (
            vec![
                "-o".into(),
                d.path().join("out.dat").display().to_string(),
                "--summary".into(),
                d.path().display().to_string(),
            ],
            format!("oxsort: the summary {}: it is a directory\n", d.path().display()),
        ),
    ];
    for (args, want) in cases {
        let o = run(oxsort().arg("sort").arg(&input).args(&args).arg("--no-progress"));
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        // No closing report: the sort never ran.
        assert_eq!(stderr(&o), want, "{args:?}");
        assert!(!d.path().join("out.dat").exists());
        assert!(leftovers(d.path()).is_empty(), "{:?}", leftovers(d.path()));
    }
}

/// As GNU sort: killed by SIGPIPE (141 in the shell), quietly, its temp files removed first.
#[test]
fn a_reader_that_stops_reading_ends_the_sort_quietly() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    gen(&input, 200_000);
    for memory in ["64M", "2M"] {
        let mut child = oxsort()
            .arg("sort")
            .arg(&input)
            .args(["-o", "-", "--no-progress", "--memory", memory])
            .arg("--temp-dir")
            .arg(d.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one record, then close the pipe.
        let mut first = [0u8; 100];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        let out = child.wait_with_output().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "--memory {memory}");
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(leftovers(d.path()).is_empty(), "{:?}", leftovers(d.path()));
    }
}

#[test]
fn an_operating_system_error_is_said_once() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("missing.dat");
    let o = run(oxsort().arg("sort").arg(&missing).args(["-o", "-"]));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("oxsort: {}: No such file or directory\n", missing.display()));
}

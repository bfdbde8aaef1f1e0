//! `oxsort sort` / `explain` as a user runs them: results checked with the valsort library,
//! errors checked for the file they name and for what they leave behind.

use std::io::Write;

use std::process::{Command, Stdio};

mod common;
use common::{assert_sorted_permutation, gen, oxsort, run, stderr};
use oxsort_testkit::leftovers;

#[test]
fn sorts_a_file_and_reports_like_valsort() {
    let d = tempfile::tempdir().unwrap();
    let (input, out) = (d.path().join("in.dat"), d.path().join("out.dat"));
    let sum = gen(&input, 20_000);
    for memory in ["64M", "1M"] {
        let o =
            run(oxsort().args(["sort"]).arg(&input).arg("-o").arg(&out).args(["--memory", memory]));
        assert!(o.status.success(), "{}", stderr(&o));
        assert_sorted_permutation(&out, 20_000, sum);
        let text = stderr(&o);
        assert!(text.contains("Records: 20000\n"), "{text}");
        assert!(text.contains(&format!("Checksum: {sum:x}\n")), "{text}");
        assert!(text.contains("SUCCESS - all records are in order"), "{text}");
        assert!(o.stdout.is_empty());
    }
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn stdin_to_stdout_and_output_over_an_input() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    let sum = gen(&input, 3_000);
    let data = std::fs::read(&input).unwrap();
    let mut child = oxsort()
        .args(["sort", "-", "-o", "-", "--memory", "1M", "--temp-dir"])
        .arg(d.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&data));
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let sorted = d.path().join("sorted.dat");
    std::fs::write(&sorted, &o.stdout).unwrap();
    assert_sorted_permutation(&sorted, 3_000, sum);

    // Two inputs concatenated, the output replacing the first of them.
    let second = d.path().join("second.dat");
    let sum2 =
        oxsort_gensort::generate_file(&second, 3_000, 500, oxsort_gensort::Kind::Binary, 1, None)
            .unwrap()
            .value();
    let o = run(oxsort().args(["sort"]).arg(&input).arg(&second).arg("-o").arg(&input));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_sorted_permutation(&input, 3_500, sum + sum2);
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn summary_equals_valsorts_and_explain_does_nothing() {
    let d = tempfile::tempdir().unwrap();
    let (input, out, sum) =
        (d.path().join("in.dat"), d.path().join("out.dat"), d.path().join("out.sum"));
    gen(&input, 5_000);
    let o = run(oxsort().args(["sort"]).arg(&input).arg("-o").arg(&out).arg("--summary").arg(&sum));
    assert!(o.status.success(), "{}", stderr(&o));
    let want = oxsort_gensort::validate_file(&out, 1, None).unwrap().to_bytes();
    assert_eq!(std::fs::read(&sum).unwrap(), want.to_vec());

    let plan_out = d.path().join("never.dat");
    let o = run(oxsort()
        .args(["explain"])
        .arg(&input)
        .arg("-o")
        .arg(&plan_out)
        .args(["--memory", "1M"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("passes       two:"), "{text}");
    assert!(text.contains("temp"), "{text}");
    assert!(!plan_out.exists());
    let o = run(oxsort().args(["explain", "--json"]).arg(&input).arg("-o").arg(&plan_out));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["records"], 5_000);
    assert_eq!(v["passes"]["kind"], "one");
}

#[test]
fn bad_input_gets_a_clear_error_and_loses_nothing() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out.dat");
    std::fs::write(&out, b"previous contents").unwrap();
    let cases: Vec<(Vec<u8>, Vec<String>, &str)> = vec![
        (vec![7; 1050], vec![], "1050 bytes is not a whole number of 100-byte records: 50 bytes left over after record 10 (at byte offset 1000)"),
        (vec![7; 1000], vec!["--memory".into(), "64K".into()], "is too small: this sort needs at least"),
        (vec![7; 1000], vec!["--threads".into(), "0".into()], "--threads must be at least 1"),
    ];
    for (data, extra, want) in cases {
        let input = d.path().join("in.dat");
        std::fs::write(&input, &data).unwrap();
        let o = run(oxsort().arg("sort").arg(&input).arg("-o").arg(&out).args(&extra));
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains(want), "wanted {want:?} in {}", stderr(&o));
        assert_eq!(std::fs::read(&out).unwrap(), b"previous contents");
        assert_eq!(std::fs::read(&input).unwrap(), data);
    }
    let missing = d.path().join("missing.dat");
    let o = run(oxsort().arg("sort").arg(&missing).arg("-o").arg(&out));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing.dat: No such file or directory"), "{}", stderr(&o));

    let input = d.path().join("in.dat");
    gen(&input, 100);
    let o = run(oxsort().arg("sort").arg(&input).arg("-o").arg(d.path().join("nodir/out.dat")));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("nodir"), "{}", stderr(&o));

    let empty = d.path().join("empty.dat");
    std::fs::write(&empty, b"").unwrap();
    let o = run(oxsort().arg("sort").arg(&empty).arg("-o").arg(&out));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 0);
    assert!(leftovers(d.path()).is_empty(), "{:?}", leftovers(d.path()));
}

#[test]
fn a_signal_mid_sort_leaves_nothing_behind() {
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let d = tempfile::tempdir().unwrap();
        let input = d.path().join("in.dat");
        gen(&input, 20_000);
        let data = std::fs::read(&input).unwrap();
        let out = d.path().join("out.dat");
        // Standard input that stops half-way keeps the sort waiting with runs on disk.
        let mut cmd = oxsort();
        cmd.args(["sort", "-", "--memory", "1M", "-o"])
            .arg(&out)
            .stdin(Stdio::piped())
            .stderr(Stdio::piped());
        // The sort keeps a signal its parent ignored ignored (as GNU sort does): under `nohup`
        // it would never see SIGHUP. It starts with the default dispositions here.
        // SAFETY: between fork and exec only async-signal-safe `signal` calls are made.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                for s in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM] {
                    libc::signal(s, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&data[..data.len() / 2]).unwrap();
        stdin.flush().unwrap();
        // Wait until the sort has spilled at least one run.
        let t0 = std::time::Instant::now();
        while !std::fs::read_dir(d.path()).unwrap().filter_map(|e| e.ok()).any(|e| {
            e.file_name().to_string_lossy().starts_with(".oxsort-")
                && e.path().read_dir().map(|mut r| r.next().is_some()).unwrap_or(false)
        }) {
            assert!(t0.elapsed().as_secs() < 30, "no run appeared");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let st = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(st.success());
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(code), "SIG{signal}");
        assert!(!out.exists());
        assert!(leftovers(d.path()).is_empty(), "SIG{signal}: {:?}", leftovers(d.path()));
    }
}

#[test]
fn without_inputs_and_output_it_reads_stdin_and_writes_stdout() {
    let mut child = oxsort()
        .args(["sort", "--lines"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"b\nc\na\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, b"a\nb\nc\n");
}

#[test]
fn fixed_records_of_a_text_file_warn_and_name_lines() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("words.txt");
    std::fs::write(&input, "pear\napple\nfig\n".repeat(20)).unwrap();
    let o = oxsort()
        .args(["sort", "--record-size", "10", "--fields", "1,3,CH,A"])
        .arg(&input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("looks like text") && err.contains("--lines"), "{err}");
    // Records whose newlines fall on record ends are not flagged.
    let recs = d.path().join("recs.dat");
    std::fs::write(&recs, "abcdefghi\n".repeat(20)).unwrap();
    let o = oxsort()
        .args(["sort", "--record-size", "10", "--fields", "1,3,CH,A", "-o", "-"])
        .arg(&recs)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("looks like text"));
}

#[test]
fn a_dfsort_job_on_lines_of_one_length_is_told_the_record_length() {
    let d = tempfile::tempdir().unwrap();
    // Ten 30-byte lines (29 characters and the newline): 300 bytes, three 100-byte records.
    let lines: String = (0..10).map(|i| format!("EMP{i:03} {:<22}\n", "SALES")).collect();
    assert_eq!(lines.len(), 300);
    let input = d.path().join("emp.dat");
    std::fs::write(&input, &lines).unwrap();
    let ctl = d.path().join("job.ctl");
    std::fs::write(&ctl, " INCLUDE COND=(8,5,CH,EQ,C'SALES')\n SORT FIELDS=(1,6,CH,A)\n").unwrap();
    let o = oxsort()
        .args(["sort", "--no-progress", "-o", "-", "--control"])
        .arg(&ctl)
        .arg(&input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    for want in ["--record-size 30", "RECORD TYPE=F,LENGTH=30", "--lrecl SORTIN=30"] {
        assert!(err.contains(want), "expected {want:?} in {err}");
    }
    // Given the length, every line is a record and the INCLUDE keeps them all.
    let o = oxsort()
        .args(["sort", "--no-progress", "--record-size", "30", "-o", "-", "--control"])
        .arg(&ctl)
        .arg(&input)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, lines.as_bytes());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("looks like text"));
}

#[test]
fn an_empty_control_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    std::fs::write(&input, [b'x'; 200]).unwrap();
    for text in ["", "\n\n", "* only a comment\n"] {
        let ctl = d.path().join("empty.ctl");
        std::fs::write(&ctl, text).unwrap();
        let o = oxsort()
            .args(["sort", "--no-progress", "-o", "-", "--control"])
            .arg(&ctl)
            .arg(&input)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{text:?}: {err}");
        assert!(o.stdout.is_empty(), "{text:?}");
        assert!(err.contains("empty.ctl") && err.contains("holds none"), "{text:?}: {err}");
    }
}

#[test]
fn the_report_after_sum_counts_the_outputs_duplicates_and_says_no_overflow_plainly() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    // Three keys, three records each: 4-byte records, key byte 1, a ZD amount in bytes 2-3.
    std::fs::write(&input, "a01\nb10\nc20\na02\nb11\nc21\na03\nb12\nc22\n").unwrap();
    let ctl = d.path().join("sum.ctl");
    std::fs::write(&ctl, " SORT FIELDS=(1,1,CH,A)\n SUM FIELDS=(2,2,ZD)\n").unwrap();
    let o = oxsort()
        .args(["sort", "--no-progress", "--record-size", "4", "-o", "-", "--control"])
        .arg(&ctl)
        .arg(&input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(o.stdout, b"a06\nb33\nc63\n");
    assert!(err.contains("Duplicate keys: 0\n"), "three distinct keys written: {err}");
    assert!(
        err.contains("6 records added into the first of their key, no sum overflowed"),
        "{err}"
    );
    assert!(!err.contains("0 left unsummed"), "{err}");
}

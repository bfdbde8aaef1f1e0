//! The drop-in `gensort` binary against every stored gensort 1.5 vector: file bytes, stderr
//! text, empty stdout, exit status; plus thread counts, file options and stream outputs.

mod common;
use common::vectors;
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn gensort(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gensort")).args(args).current_dir(dir).output().unwrap()
}

/// (args after `gensort`, expected stderr, expected exit status) of a `.gensort-c.txt`.
fn transcript(text: &str) -> (Vec<String>, String, i32) {
    let lines: Vec<&str> = text.lines().collect();
    let args = lines[0].strip_prefix("$ gensort ").unwrap();
    let status = lines[lines.len() - 1]
        .strip_prefix("[exit status ")
        .and_then(|s| s.strip_suffix(']'))
        .unwrap()
        .parse()
        .unwrap();
    let stderr: String = lines[1..lines.len() - 1].iter().map(|l| format!("{l}\n")).collect();
    (args.split_whitespace().map(str::to_string).collect(), stderr, status)
}

#[test]
fn every_gensort_transcript_reproduced() {
    let dir = vectors();
    let tmp = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let Some(stem) = name.strip_suffix(".gensort-c.txt") else { continue };
        seen += 1;
        let (args, stderr, status) = transcript(&fs::read_to_string(&path).unwrap());
        let want = fs::read(dir.join(format!("{stem}.dat"))).unwrap();
        // As recorded, then with explicit thread counts (output must not depend on them).
        for threads in [None, Some("-t1"), Some("-t2"), Some("-t3")] {
            let mut a: Vec<&str> = Vec::new();
            a.extend(threads);
            a.extend(args.iter().map(String::as_str));
            let out = gensort(tmp.path(), &a);
            assert_eq!(String::from_utf8_lossy(&out.stderr), stderr, "{name} {threads:?}: stderr");
            assert!(out.stdout.is_empty(), "{name}: stdout must stay empty");
            assert_eq!(out.status.code(), Some(status), "{name}: exit status");
            let got = fs::read(tmp.path().join(args.last().unwrap())).unwrap();
            assert!(got == want, "{name} {threads:?}: file bytes differ");
        }
    }
    assert_eq!(seen, 10, "expected the ten stored gensort transcripts");
}

#[test]
fn file_options_pipes_and_dev_null() {
    let dir = vectors();
    let want = fs::read(dir.join("bin-r0-n1000.dat")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // The multithreaded build's file options are accepted and ignored.
    for name in ["o.dat,buf", "o.dat,dir,trans=4m,count=2"] {
        let out = gensort(tmp.path(), &["-c", "1000", name]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(String::from_utf8_lossy(&out.stderr), "1ea6370b955\n");
        assert!(fs::read(tmp.path().join("o.dat")).unwrap() == want);
    }
    // /dev/stdout into a pipe.
    let out = gensort(tmp.path(), &["-c", "1000", "/dev/stdout"]);
    assert!(out.stdout == want, "gensort to a pipe");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "1ea6370b955\n");
    // /dev/null: nothing written, checksum still computed; zero records print 0.
    let out = gensort(tmp.path(), &["-c", "-b123456789", "1000", "/dev/null"]);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "1f013ceee6d\n");
    let out = gensort(tmp.path(), &["-c", "0", "zero.dat"]);
    assert_eq!((out.status.code(), &out.stderr[..]), (Some(0), &b"0\n"[..]));
    assert_eq!(fs::metadata(tmp.path().join("zero.dat")).unwrap().len(), 0);
}

#[test]
fn output_mode_follows_umask() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    for (umask, mode) in [("022", 0o644), ("000", 0o666), ("077", 0o600)] {
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" 10 m{umask}.dat"))
            .arg(env!("CARGO_BIN_EXE_gensort"))
            .current_dir(tmp.path())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let meta = fs::metadata(tmp.path().join(format!("m{umask}.dat"))).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, mode, "umask {umask}");
    }
}

#[test]
fn bad_arguments_print_usage_and_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], Option<&str>)] = &[
        (&[], None),
        (&["1000"], None),
        (&["1000", "a.dat", "extra"], None),
        (&["-x", "1000", "a.dat"], None),
        (&["-", "1000", "a.dat"], None),
        // What the original silently misreads:
        (&["1e6", "a.dat"], Some("NUM_RECS must be a plain decimal integer")),
        (&["-as", "1000", "a.dat"], Some("unknown option '-as'")),
        (&["-b", "123", "1000", "a.dat"], Some("-b needs its record number attached")),
        (&["-b12abc", "1000", "a.dat"], Some("-b needs a plain decimal record number")),
        (&["-tabc", "1000", "a.dat"], Some("-t needs a thread count")),
        (&["18446744073709551616", "a.dat"], Some("NUM_RECS must be a plain decimal integer")),
    ];
    for (args, message) in cases {
        let out = gensort(tmp.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(err.contains("usage: gensort [-a] [-c]"), "{args:?}: {err}");
        for opt in ["-a ", "-c ", "-bN", "-s ", "-tN"] {
            assert!(err.contains(&format!("\n{opt}")), "usage lists {opt}");
        }
        if let Some(m) = message {
            assert!(err.starts_with(&format!("gensort: {m}")), "{args:?}: {err}");
        }
        assert!(!tmp.path().join("a.dat").exists(), "{args:?}: nothing written");
    }
    let out = gensort(tmp.path(), &["10", "no/such/dir/x.dat"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "no/such/dir/x.dat: No such file or directory\n"
    );
}

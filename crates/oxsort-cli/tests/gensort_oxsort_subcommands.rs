//! `oxsort gen` and `oxsort valsort`: friendly flags over the same library.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn oxsort(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxsort")).args(args).current_dir(dir).output().unwrap()
}

fn vector(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors/gensort");
    assert!(dir.is_dir(), "test vectors missing: expected {}", dir.display());
    fs::read(dir.join(name)).unwrap()
}

#[test]
fn gen_matches_gensort() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cases: &[(&[&str], &str, &str)] = &[
        (&["--records", "1000"], "bin-r0-n1000.dat", "1ea6370b955"),
        (&["--records", "1K", "--ascii"], "ascii-r0-n1000.dat", "1f5dfb3631a"),
        (&["--records", "1e3", "--skew"], "skew-r0-n1000.dat", "1e96301166b"),
        (
            &["-n", "1000", "--ascii", "--skew", "--start", "18446744073709551116", "-t", "2"],
            "skewascii-b18446744073709551116-n1000.dat",
            "1e9cc0bd3b6",
        ),
    ];
    for (args, dat, sum) in cases {
        let mut a = vec!["gen", "--checksum"];
        a.extend_from_slice(args);
        a.push("out.dat");
        let out = oxsort(t, &a);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{sum}\n"), "{args:?}");
        assert!(fs::read(t.join("out.dat")).unwrap() == vector(dat), "{args:?}");
    }
    let out = oxsort(t, &["gen", "--records", "1000", "--json", "j.dat"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"], 1000);
    assert_eq!(v["checksum"], "1ea6370b955");
    assert_eq!(oxsort(t, &["gen", "--records", "12abc", "x.dat"]).status.code(), Some(2));
}

#[test]
fn valsort_reports_and_summaries() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    fs::write(t.join("u.dat"), vector("bin-r0-n1000.dat")).unwrap();
    fs::write(t.join("s.dat"), vector("bin-r0-n1000.sorted.dat")).unwrap();
    let out = oxsort(t, &["valsort", "--json", "u.dat"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"], 1000);
    assert_eq!(v["checksum"], "1ea6370b955");
    assert_eq!(v["unordered"], 483);
    assert_eq!(v["first_unordered"], 2);
    assert_eq!(v["duplicates"], 0);
    assert_eq!(v["ok"], false);

    let out = oxsort(t, &["valsort", "--summary", "s.sum", "s.dat"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Records: 1000\nChecksum: 1ea6370b955\nDuplicate keys: 0\nSUCCESS - all records are in order\n"
    );
    assert_eq!(fs::read(t.join("s.sum")).unwrap(), vector("bin-r0-n1000.sorted.sum"));
    let out = oxsort(t, &["valsort", "--summaries", "--json", "s.sum"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["ok"].as_bool(), v["first_unordered"].is_null()), (Some(true), true));
    let out = oxsort(t, &["valsort", "--quiet", "u.dat"]);
    assert_eq!((out.status.code(), out.stdout.len(), out.stderr.len()), (Some(1), 0, 0));
    let out = oxsort(t, &["valsort", "missing.dat"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "missing.dat: No such file or directory\n");
}

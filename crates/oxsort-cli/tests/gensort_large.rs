//! The 1e6-record generations of CHECKSUMS.txt through the drop-in binaries: `gensort -c`
//! text, sha256 of the file, `valsort` text on the generated file, and on the file sorted
//! bytewise by whole record (sha256 and text).

mod common;
use common::vectors;
use std::fs;
use std::path::Path;
use std::process::Command;

use sha2::{Digest, Sha256};

/// The `## name` section of CHECKSUMS.txt as (command, output) pairs.
fn section(name: &str) -> Vec<(String, String)> {
    let text = fs::read_to_string(vectors().join("CHECKSUMS.txt")).unwrap();
    let body = text.split(&format!("## {name}\n")).nth(1).unwrap().split("\n## ").next().unwrap();
    let mut out: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            out.push((cmd.to_string(), String::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    out
}

fn run(bin: &str, args: &[&str], dir: &Path) -> (String, i32) {
    let out = Command::new(bin).args(args).current_dir(dir).output().unwrap();
    assert!(out.stdout.is_empty(), "{args:?}: stdout must stay empty");
    (String::from_utf8(out.stderr).unwrap(), out.status.code().unwrap())
}

fn sha_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn one_million_of_each_kind_through_the_binaries() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    for name in
        ["bin-r0-n1000000", "ascii-r0-n1000000", "skew-r0-n1000000", "skewascii-r0-n1000000"]
    {
        let steps = section(name);
        let file = format!("{name}.dat");
        for (cmd, expected) in &steps {
            let words: Vec<&str> = cmd.split_whitespace().collect();
            match words[0] {
                "gensort" | "valsort" => {
                    let bin = if words[0] == "gensort" {
                        env!("CARGO_BIN_EXE_gensort")
                    } else {
                        env!("CARGO_BIN_EXE_valsort")
                    };
                    let (err, status) = run(bin, &words[1..], t);
                    let want = format!("{err}[exit status {status}]\n");
                    assert_eq!(want, *expected, "{cmd}");
                }
                "sha256sum" => {
                    let want = expected.split_whitespace().next().unwrap();
                    let target = words[1];
                    if target.contains(".sorted.") {
                        // Sort the generated file by whole record, bytewise, as the vectors were.
                        let data = fs::read(t.join(&file)).unwrap();
                        let mut recs: Vec<&[u8]> = data.chunks_exact(100).collect();
                        recs.sort_unstable();
                        fs::write(t.join(target), recs.concat()).unwrap();
                    }
                    assert_eq!(sha_hex(&fs::read(t.join(target)).unwrap()), want, "{cmd}");
                }
                other => panic!("unexpected command {other}"),
            }
        }
        for f in fs::read_dir(t).unwrap() {
            fs::remove_file(f.unwrap().path()).unwrap();
        }
    }
}

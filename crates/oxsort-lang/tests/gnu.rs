//! GNU `-k` semantics checked against the real `LC_ALL=C sort` on small generated inputs.
//!
//! The seed is printed; set `OXSORT_SEED` to replay one. Skips (with a message) if no GNU
//! sort is installed.

use std::io::Write;
use std::process::{Command, Stdio};

use oxsort_format::{parse_gnu_args, GnuSort};
use oxsort_testkit::{seed, Rng};

fn line(rng: &mut Rng) -> String {
    const TOKENS: &[&str] = &[
        "-0", "0", "12", "-3.5", "+5", ".5", "-.5", "007", "1e3", "5.", "-", "10", "9", "-10",
        "ab", "B", "a", "abc", "Ab", "", "x1", "0.50", "-007.0",
    ];
    const SEPS: &[&str] = &[" ", "  ", "\t", ",", ", ", " \t"];
    let mut s = String::new();
    s.push_str(rng.pick(&["", " ", "  ", "\t"]));
    let n = rng.below(5);
    for i in 0..n {
        if i > 0 {
            s.push_str(rng.pick(SEPS));
        }
        s.push_str(rng.pick(TOKENS));
    }
    s
}

fn gnu_sort(flags: &[&str], input: &str) -> Option<String> {
    let mut child = Command::new("sort")
        .args(flags)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    assert!(out.status.success(), "sort {flags:?} failed");
    Some(String::from_utf8(out.stdout).unwrap())
}

fn oxsort_order(g: &GnuSort, lines: &[String]) -> String {
    let mut keyed: Vec<(Vec<u8>, usize)> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut k = Vec::new();
            g.key.normalize(l.as_bytes(), &mut k).unwrap();
            (k, i)
        })
        .collect();
    keyed.sort(); // (key, input index): a stable sort by key
    if g.unique {
        keyed.dedup_by(|b, a| a.0 == b.0);
    }
    keyed.iter().map(|(_, i)| format!("{}\n", lines[*i])).collect()
}

const FLAG_SETS: &[&[&str]] = &[
    &[],
    &["-r"],
    &["-n"],
    &["-nr"],
    &["-b"],
    &["-k2"],
    &["-k2,2"],
    &["-k2,2n"],
    &["-k2,2nr", "-k1,1"],
    &["-t", ",", "-k2,2"],
    &["-t,", "-k2,2n", "-k3r"],
    &["-t", ",", "-k2.2,2.3", "-k1,1r"],
    &["-k1.2,1.3"],
    &["-k2b,2"],
    &["-b", "-k2,2"],
    &["-k2.2b,3.1b"],
    &["-k2.2,3.1b"],
    &["-k2,3.0"],
    &["-k10"],
    &["-k3,2"],
    &["-s", "-k2,2n"],
    &["-u", "-k2,2n"],
    &["-u"],
    &["-un"],
    &["-k3,3", "-r"],
    &["-k2n", "-s", "-r"],
    &["-k2,2", "-n"],
    &["-k2,2b", "-n", "-r"],
    &["--key=1.3", "--numeric-sort"],
    &["-t", "\t", "-k2,2", "-k1n"],
    &["-t", " ", "-k3,3", "-k2.1,2.1"],
];

#[test]
fn matches_gnu_sort() {
    if gnu_sort(&[], "").is_none() {
        eprintln!("skipped: no `sort` on PATH to compare against");
        return;
    }
    let seed = seed();
    let mut rng = Rng::new(seed);
    for round in 0..12 {
        let n = 1 + rng.below(40);
        let lines: Vec<String> = (0..n).map(|_| line(&mut rng)).collect();
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        for flags in FLAG_SETS {
            let args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
            let g = parse_gnu_args(&args).unwrap();
            let want = gnu_sort(flags, &input).unwrap();
            let got = oxsort_order(&g, &lines);
            assert_eq!(
                got, want,
                "OXSORT_SEED={seed} round {round} flags {flags:?}\ninput:\n{input:?}"
            );
        }
    }
}

#[test]
fn missing_final_newline_is_a_record() {
    let g = parse_gnu_args(&[]).unwrap();
    let layout = oxsort_format::RecordLayout::LINES;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    g.key.normalize(layout.key_bytes(b"abc\n"), &mut a).unwrap();
    g.key.normalize(layout.key_bytes(b"abc"), &mut b).unwrap();
    assert_eq!(a, b);
}

#[test]
fn errors() {
    let err = |a: &[&str]| {
        let args: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        parse_gnu_args(&args).unwrap_err().to_string()
    };
    assert_eq!(err(&["-k0"]), "argument 1, column 3: a field number of at least 1, found '0'");
    assert_eq!(
        err(&["-k", "1.0"]),
        "argument 2, column 3: a character position of at least 1, found '0'"
    );
    assert_eq!(
        err(&["-k2,2f"]),
        "argument 1, column 6: a key option oxsort supports (b, n, r), found 'f'"
    );
    assert_eq!(
        err(&["-k2x"]),
        "argument 1, column 4: a key option (b, n, r), ',' or the end of the key, found 'x'"
    );
    assert_eq!(
        err(&["-t", "ab"]),
        "argument 2, column 1: a one-byte separator (or \\0 for NUL), found 'ab'"
    );
    assert_eq!(err(&["-k"]), "argument 1, column 3: a key definition after -k, found end of input");
    assert_eq!(
        err(&["-nf"]),
        "argument 1, column 3: a supported option (-t, -k, -n, -r, -s, -u, -b), found 'f'"
    );
    assert_eq!(
        err(&["file.txt"]),
        "argument 1, column 1: an option (-t, -k, -n, -r, -s, -u, -b), found 'file.txt'"
    );
}

//! GNU sort's command line, read by [`GnuArgs`] and built in the C locale, checked against the
//! real `LC_ALL=C sort` on small generated inputs.
//!
//! The seed is printed; set `OXSORT_SEED` to replay one. Skips (with a message) if no GNU
//! sort is installed.

use std::io::Write;
use std::process::{Command, Stdio};

use oxsort_format::KeySpec;
use oxsort_lang::{GnuArgs, GnuEnv};
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

/// The key and `-u` of a command line, as `oxsort sort -k` builds them.
fn parse(args: &[&str]) -> (KeySpec, bool) {
    let argv: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let opts = GnuArgs::parse(&argv, &GnuEnv::default()).unwrap().c_locale_options();
    opts.check().unwrap();
    (opts.key_spec(), opts.unique)
}

fn oxsort_order(g: &(KeySpec, bool), lines: &[String]) -> String {
    let mut keyed: Vec<(Vec<u8>, usize)> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut k = Vec::new();
            g.0.normalize(l.as_bytes(), &mut k).unwrap();
            (k, i)
        })
        .collect();
    keyed.sort(); // (key, input index): a stable sort by key
    if g.1 {
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
    &["-k2,2g"],
    &["-k2,2h", "-k1,1"],
    &["-k2,2V"],
    &["-k1,1f"],
    &["-k1,1d"],
    &["-fi"],
    &["-k2,2M"],
    &["--sort=general-numeric", "-r"],
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
            let g = parse(flags);
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
    let (key, _) = parse(&[]);
    let layout = oxsort_format::RecordLayout::LINES;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    key.normalize(layout.key_bytes(b"abc\n"), &mut a).unwrap();
    key.normalize(layout.key_bytes(b"abc"), &mut b).unwrap();
    assert_eq!(a, b);
}

#[test]
fn errors_are_gnu_sorts() {
    let err = |a: &[&str]| {
        let args: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        GnuArgs::parse(&args, &GnuEnv::default()).unwrap_err().to_string()
    };
    assert_eq!(err(&["-k0"]), "field number is zero: invalid field specification '0'");
    assert_eq!(err(&["-k", "1.0"]), "character offset is zero: invalid field specification '1.0'");
    assert_eq!(err(&["-k2x"]), "stray character in field spec: invalid field specification '2x'");
    assert_eq!(err(&["-t", "ab"]), "multi-character tab 'ab'");
    assert_eq!(err(&["-k"]), "option requires an argument -- 'k'");
    assert_eq!(err(&["-nQ"]), "invalid option -- 'Q'");
    assert_eq!(err(&["--sort=x"]), "invalid argument 'x' for '--sort'");
    let argv: Vec<String> = ["-gn"].iter().map(|s| s.to_string()).collect();
    let opts = GnuArgs::parse(&argv, &GnuEnv::default()).unwrap().c_locale_options();
    assert_eq!(opts.check().unwrap_err().to_string(), "options '-gn' are incompatible");
}

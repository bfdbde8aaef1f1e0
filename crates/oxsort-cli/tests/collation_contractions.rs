//! The `sort` link in a locale with contractions (Hungarian: "cs", "sz", "dzs", "ssz"...):
//! the output of seeded random Hungarian-like lines is exactly the lines in glibc's `strcoll`
//! order (bytes breaking ties), the order GNU sort compares lines in. (`strxfrm` is not the
//! truth: glibc 2.36's `strcoll` skips a character of a run on a level walked backwards where
//! `strxfrm` keeps it, so "k éeb1á" sorts before "k éeb1 á" by `strcoll` and after it by
//! `strxfrm`.) The letters of the contractions stay out of the primary-weight table, and a key's
//! prefix built from the table must not end inside a contraction ("…bs" before "sz": the
//! weight of "ssz" is not the weight of "s" followed by that of "sz").
//!
//! Skipped, with the reason printed, when hu_HU.UTF-8 is not there (CI generates it under
//! `target/locales`, see `.ci/gnu-conformance`). The seed is printed; `OXSORT_SEED=N` replays
//! a run.

mod common;

use oxsort_testkit::{seed, Rng};
use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Lines per run.
const LINES: usize = 30_000;

/// Pieces of the lines: Hungarian's contractions, their letters alone, vowels, a few others.
const PIECES: &[&str] = &[
    "cs", "sz", "gy", "ny", "ty", "zs", "dz", "dzs", "ccs", "ssz", "ddzs", "ly", "c", "s", "z",
    "d", "y", "a", "á", "e", "é", "o", "ö", "ő", "u", "ü", "ű", "i", "í", "b", "k", "l", "Cs",
    "SZ", "Zs", "1", " ",
];

/// Beginnings of the lines: the letters before a contraction vary in weight length.
const STEMS: &[&str] = &["", "keeb", "k éeb", "kéé", "ab", "aáb", "b", "ő"];

/// glibc's `strcoll` order of `a` and `b` in the process's locale.
fn strcoll(a: &CString, b: &CString) -> std::cmp::Ordering {
    // SAFETY: both are valid NUL-terminated strings; strcoll only reads them and the locale.
    unsafe { libc::strcoll(a.as_ptr(), b.as_ptr()) }.cmp(&0)
}

#[test]
fn order_in_a_locale_with_contractions_is_strcoll_order() {
    let loc = common::locpath("hu_HU.UTF-8");
    if let Some(p) = &loc {
        std::env::set_var("LOCPATH", p);
    }
    // SAFETY: the argument is a valid NUL-terminated string; no other thread of this test
    // process reads the locale yet.
    let set = unsafe { libc::setlocale(libc::LC_ALL, c"hu_HU.UTF-8".as_ptr()) };
    if set.is_null() {
        eprintln!("skipped: the hu_HU.UTF-8 locale is not available (see .ci/gnu-conformance)");
        return;
    }
    let mut rng = Rng::new(seed());
    // The table admits characters in the order a sort meets them: "s" before "z" here (so
    // "z" stays out, as "sz" contracts), then a line whose prefix ends in the "s" of "ssz".
    // Lines share a few stems, so that many keys tie on their first letters and the order is
    // decided where a 10-byte prefix ends.
    let mut lines: Vec<String> = vec!["bs".into(), "k éebsszdzgyőCs".into(), "kee bSZatyís".into()];
    // Pairs that tie but for a run of a digit and a space, which `strcoll` walks otherwise
    // than `strxfrm`: built from the table ("á"), and past it ("zs", "cs").
    lines.extend(
        ["keeb1 zs", "keeb1Zs", "ő1 ccs", "ő1CsCs", "k éeb1 á", "k éeb1á"].map(String::from),
    );
    lines.extend((0..LINES).map(|_| {
        let stem = STEMS[rng.index(STEMS.len())];
        let tail: String = (0..rng.index(10)).map(|_| PIECES[rng.index(PIECES.len())]).collect();
        format!("{stem}{tail}")
    }));
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("in");
    std::fs::write(&file, lines.iter().map(|l| format!("{l}\n")).collect::<String>())
        .expect("write input");

    let mut want: Vec<(CString, &str)> =
        lines.iter().map(|l| (CString::new(l.as_str()).expect("no NUL"), l.as_str())).collect();
    want.sort_by(|(ca, a), (cb, b)| strcoll(ca, cb).then_with(|| a.cmp(b)));
    let want: Vec<&str> = want.into_iter().map(|(_, l)| l).collect();

    let mut c = Command::new(env!("CARGO_BIN_EXE_oxsort"));
    c.arg0("sort").arg(&file);
    c.env_clear().env("LC_ALL", "hu_HU.UTF-8").env("TMPDIR", std::env::temp_dir());
    if let Some(p) = &loc {
        c.env("LOCPATH", p);
    }
    let out = c.output().expect("run sort");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = String::from_utf8(out.stdout).expect("UTF-8 output");
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got.len(), want.len(), "the output is not the input's lines");
    if let Some(at) = got.iter().zip(&want).position(|(g, w)| g != w) {
        panic!(
            "line {at} differs from strcoll order\n  want {:?}\n  got  {:?}",
            &want[at.saturating_sub(1)..(at + 2).min(want.len())],
            &got[at.saturating_sub(1)..(at + 2).min(got.len())]
        );
    }
}

//! Usage errors, odd calls and their messages: oxsort's `sort` link against the system's GNU
//! sort (`/usr/bin/sort`), byte for byte (standard output, standard error, exit status), in
//! the C, C.UTF-8 and en_US.UTF-8 locales.
//!
//! Both programs run with `argv[0]` = `sort`, so GNU names itself `sort:` as the link does.
//! Every case runs in a fresh directory holding the same small files, named relatively, so
//! the messages do not depend on where the test runs. Skipped, with the reason printed, when
//! `/usr/bin/sort` is not GNU sort; en_US.UTF-8 is skipped (and said so) when the locale is
//! not there (CI generates it under `target/locales`, see `.ci/gnu-conformance`).
//!
//! Not here: `--help` and `--version` (oxsort's texts name oxsort), temp directories and
//! signals (their own tests), unreadable files (the tests run as root).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use common::{gnu_sort_available, GNU_SORT};

/// One call: its arguments and what it reads on standard input.
struct Case {
    args: &'static [&'static str],
    stdin: &'static [u8],
}

const fn c(args: &'static [&'static str]) -> Case {
    Case { args, stdin: b"" }
}

const fn s(args: &'static [&'static str], stdin: &'static [u8]) -> Case {
    Case { args, stdin }
}

/// The calls. File names refer to the fixtures of [`fixtures`].
const CASES: &[Case] = &[
    // Keys: every field-specification error, quotes and escapes in the echoed spec.
    c(&["-k0"]),
    c(&["-k", "0"]),
    c(&["-k", "1,1x"]),
    c(&["-k", "1.0"]),
    c(&["-k", "1,1b2"]),
    c(&["-k", "1,1x'y"]),
    c(&["-k", "1,1x\\y"]),
    c(&["-k", "1,1x\ty"]),
    c(&["-k", "1,1x\ny"]),
    c(&["-k", "1,1xé"]),
    c(&["-k", "1,1x\u{2019}"]),
    c(&["-k", "1,1x\u{1}"]),
    c(&["-k", "1,1x\u{85}"]),
    c(&["-k", "1,1x?\"$"]),
    c(&["-t", "\u{2018}"]),
    c(&["-k", ""]),
    c(&["-k", "a"]),
    c(&["-k", ",1"]),
    c(&["-k", "1,"]),
    c(&["-k", "1."]),
    c(&["-k", "1.x"]),
    c(&["-k", "1,0"]),
    c(&["-k", "1,2.x"]),
    c(&["-k", "-1"]),
    c(&["-k", "99999999999999999999"]),
    c(&["-k", "1.99999999999999999999"]),
    c(&["-k", "1,99999999999999999999"]),
    c(&["-k", "1nM"]),
    c(&["-k", "1dn"]),
    c(&["-k", "1gh"]),
    c(&["-k", "1in"]),
    c(&["-k", "1Rn"]),
    c(&["-k", "1V", "-n"]),
    c(&["-n", "-g"]),
    c(&["-M", "-R"]),
    c(&["-d", "-n"]),
    c(&["-i", "-h"]),
    c(&["--sort=numeric", "-g"]),
    // Obsolete keys.
    s(&["+1", "-2"], b"b a\na b\n"),
    c(&["+1x"]),
    c(&["+0.0"]),
    s(&["+0", "-0"], b"b\na\n"),
    // Separators.
    c(&["-t", ""]),
    c(&["-t", "ab"]),
    c(&["-t", "a\\b"]),
    c(&["-t", "'x"]),
    c(&["-t", "é"]),
    c(&["-t", "\\1"]),
    c(&["-t", "a", "-t", "b"]),
    s(&["-t", "\\0"], b"b\na\n"),
    s(&["-t", "a", "-t", "a"], b"b\na\n"),
    // Sizes, counts.
    c(&["-S", "1x"]),
    c(&["-S", "x"]),
    c(&["-S", ""]),
    c(&["-S", "-1"]),
    c(&["-S", "1x'y"]),
    c(&["-S", "1é"]),
    c(&["-S", "99999999999999999999"]),
    c(&["-S", "999999999Q"]),
    c(&["-S", "1%x"]),
    c(&["--buffer-size=1x"]),
    s(&["-S", "1"], b"b\na\n"),
    s(&["-S", " 1K"], b"b\na\n"),
    c(&["--parallel=x"]),
    c(&["--parallel", "0"]),
    c(&["--parallel=-1"]),
    c(&["--parallel=1x"]),
    c(&["--parallel="]),
    c(&["--parallel=x'y"]),
    c(&["--parallel=99999999999999999999"]),
    s(&["--parallel=1"], b"b\na\n"),
    c(&["--batch-size=1"]),
    c(&["--batch-size=0"]),
    c(&["--batch-size=x"]),
    c(&["--batch-size=1x"]),
    c(&["--batch-size=99999999999999999999"]),
    c(&["--batch-size=100000000"]),
    s(&["--batch-size=2"], b"b\na\n"),
    // Words.
    c(&["--sort=bogus"]),
    c(&["--sort="]),
    c(&["--sort=x'y"]),
    s(&["--sort=ge"], b"10\n9\n"),
    s(&["--sort=n"], b"10\n9\n"),
    c(&["--check=bogus"]),
    c(&["--check="]),
    s(&["--check=s"], b"b\na\n"),
    s(&["--check=d"], b"b\na\n"),
    c(&["--check=é"]),
    // Options.
    c(&["--foo"]),
    c(&["--foo=bar"]),
    c(&["-x"]),
    c(&["-é"]),
    c(&["--s"]),
    c(&["--re"]),
    c(&["--debug=x"]),
    c(&["--key"]),
    c(&["-k"]),
    c(&["-t"]),
    c(&["-o"]),
    c(&["--reverse=x"]),
    s(&["--rev"], b"a\nb\n"),
    s(&["-y", "1"], b"b\na\n"),
    c(&["-c", "-C"]),
    c(&["-cC"]),
    c(&["--check=quiet", "-c"]),
    c(&["-c", "-o", "out"]),
    c(&["-C", "-o", "out"]),
    c(&["--debug", "-c"]),
    c(&["--debug", "-C"]),
    c(&["--debug", "-o", "out"]),
    c(&["-o", "a", "-o", "b"]),
    c(&["--compress-program=a", "--compress-program=b"]),
    c(&["--random-source=a", "--random-source=b"]),
    // Checking.
    c(&["-c", "in", "sorted"]),
    c(&["-C", "in", "sorted"]),
    c(&["-c", "in", "a b"]),
    c(&["-c", "in", "it's"]),
    c(&["-c", "nonexistent"]),
    c(&["-c", "unsorted"]),
    c(&["-C", "unsorted"]),
    c(&["-c", "sorted"]),
    c(&["-c", "a b"]),
    c(&["-c", "ä"]),
    c(&["-cu", "dup"]),
    s(&["-c"], b"b\na\n"),
    s(&["-c", "-"], b"a\nb\nb\n"),
    s(&["-cu", "-"], b"a\nb\nb\n"),
    c(&["-c", "dir"]),
    // Inputs and outputs.
    c(&["nonexistent"]),
    c(&["/nonexistent/ä b"]),
    c(&["/nonexistent/a b"]),
    c(&["/nonexistent/it's"]),
    c(&["/nonexistent/a\nb"]),
    c(&["/nonexistent/a\tb"]),
    c(&["/nonexistent/a\\b"]),
    c(&["/nonexistent/$x"]),
    c(&["/nonexistent/~x"]),
    c(&["~x"]),
    c(&["x~"]),
    c(&["#x"]),
    c(&["x#"]),
    c(&["{"]),
    c(&["{x}"]),
    c(&["x?"]),
    c(&["x!"]),
    c(&["x@y"]),
    c(&["\"x\""]),
    c(&[""]),
    c(&["it's ä"]),
    c(&["it's\n"]),
    c(&["it's $x"]),
    c(&["é"]),
    c(&["a\u{85}b"]),
    c(&["a\u{1}b"]),
    c(&["a\u{7f}b"]),
    c(&["\u{2019}x"]),
    c(&["-"]),
    c(&["dir"]),
    c(&["in", "nonexistent"]),
    c(&["in", "--", "-x"]),
    c(&["-o", "/nonexistent/out", "in"]),
    c(&["-o", "/nonexistent/ä", "in"]),
    c(&["-o", "dir", "in"]),
    c(&["--random-sort", "--random-source=nonexistent", "in"]),
    c(&["--random-sort", "--random-source=short", "in"]),
    c(&["--random-sort", "--random-source=dir", "in"]),
    c(&["in", "sorted"]),
    c(&["-m", "sorted", "sorted"]),
    c(&["-u", "dup"]),
    // Lists of files.
    c(&["--files0-from=names", "in"]),
    c(&["--files0-from=names", "in", "sorted"]),
    c(&["--files0-from=nonexistent"]),
    c(&["--files0-from=/nonexistent/ä"]),
    c(&["--files0-from=empty"]),
    c(&["--files0-from=names_zero"]),
    c(&["--files0-from=names_missing"]),
    c(&["--files0-from=names_space"]),
    c(&["--files0-from=dir"]),
    c(&["--files0-from=names"]),
    s(&["--files0-from=-"], b"-\0"),
    s(&["--files0-from=-"], b"in\0"),
    s(&["--files0-from=-"], b""),
    s(&["--files0-from=-"], b"in\0\0"),
    c(&["--files0-from=a b"]),
    // Long forms with `=`, empty values, options that take no value, more conflicts.
    c(&["--key="]),
    c(&["--key=1,1x"]),
    c(&["--field-separator=ab"]),
    c(&["--field-separator="]),
    c(&["--buffer-size="]),
    c(&["--batch-size="]),
    c(&["--parallel=0x"]),
    c(&["--unique=1"]),
    c(&["--zero-terminated=x"]),
    c(&["--ignore-case=x"]),
    c(&["--stable=x"]),
    c(&["--merge=x"]),
    c(&["-h", "-g"]),
    c(&["-h", "-M"]),
    c(&["-V", "-R"]),
    c(&["-k1,1n", "-k2,2", "-g"]),
    c(&["-T", "", "in"]),
    c(&["-o", "", "in"]),
    c(&["-m", "nonexistent", "in"]),
    c(&["--debug", "--files0-from=nonexistent"]),
    c(&["--debug", "nonexistent"]),
    c(&["-k", "1,1", "-k"]),
    c(&["-c", "-m", "unsorted"]),
    // Debug warnings with odd options.
    s(&["--debug", "-k1,1", "-r"], b"b\na\n"),
    s(&["--debug", "-t", ":", "-k", "1bn"], b"b\na\n"),
];

/// The files the cases name, made in `dir`.
fn fixtures(dir: &Path) {
    let w = |name: &str, data: &[u8]| std::fs::write(dir.join(name), data).expect("fixture");
    w("in", b"b\na\n");
    w("sorted", b"a\nb\n");
    w("unsorted", b"a\nc\nb\n");
    w("dup", b"a\nb\nb\n");
    w("a b", b"b\na\n");
    w("it's", b"a\n");
    w("ä", b"b\na\n");
    w("names", b"in\0sorted\0");
    w("empty", b"");
    w("names_zero", b"in\0\0");
    w("names_missing", b"in\0nonexistent\0");
    w("names_space", b"in\0/nonexistent/a b\0");
    w("short", b"abc");
    std::fs::create_dir(dir.join("dir")).expect("fixture dir");
}

/// Whether `lc_all` works for GNU sort (through LOCPATH or installed).
fn locale_works(lc_all: &str, loc: &Option<PathBuf>) -> bool {
    let mut c = Command::new(GNU_SORT);
    c.env_clear().env("LC_ALL", lc_all).arg("--debug").stdin(Stdio::null());
    if let Some(p) = loc {
        c.env("LOCPATH", p);
    }
    c.output()
        .map(|o| !String::from_utf8_lossy(&o.stderr).contains("failed to set locale"))
        .unwrap_or(false)
}

/// Runs one case in a fresh copy of the fixtures: (exit status, stdout, stderr).
fn run(program: &str, case: &Case, lc_all: &str, loc: &Option<PathBuf>) -> (i32, String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    fixtures(dir.path());
    let mut c = Command::new(program);
    c.arg0("sort").args(case.args).current_dir(dir.path());
    c.env_clear().env("LC_ALL", lc_all).env("TMPDIR", std::env::temp_dir());
    if let Some(p) = loc {
        c.env("LOCPATH", p);
    }
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn sort");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = case.stdin.to_vec();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait sort");
    let _ = writer.join();
    let text = |b: &[u8]| String::from_utf8_lossy(b).replace(&format!("{GNU_SORT}:"), "sort:");
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// Every case in one locale; returns the descriptions of the differences.
fn differences(lc_all: &str, loc: &Option<PathBuf>) -> Vec<String> {
    let ox = env!("CARGO_BIN_EXE_oxsort");
    let mut diffs = Vec::new();
    for case in CASES {
        let want = run(GNU_SORT, case, lc_all, loc);
        let got = run(ox, case, lc_all, loc);
        if got != want {
            diffs.push(format!(
                "LC_ALL={lc_all} sort {:?} (stdin {:?})\n  GNU:    {want:?}\n  oxsort: {got:?}",
                case.args,
                String::from_utf8_lossy(case.stdin)
            ));
        }
    }
    diffs
}

fn check_locale(lc_all: &str) {
    if !gnu_sort_available() {
        eprintln!("skipped: {GNU_SORT} is not GNU sort");
        return;
    }
    let loc = common::locpath("en_US.UTF-8");
    if !locale_works(lc_all, &loc) {
        eprintln!("skipped: the {lc_all} locale is not available (see .ci/gnu-conformance)");
        return;
    }
    let diffs = differences(lc_all, &loc);
    assert!(
        diffs.is_empty(),
        "{} of {} calls differ from GNU sort:\n{}",
        diffs.len(),
        CASES.len(),
        diffs.join("\n")
    );
}

#[test]
fn usage_errors_match_gnu_sort_in_c() {
    check_locale("C");
}

#[test]
fn usage_errors_match_gnu_sort_in_c_utf8() {
    check_locale("C.UTF-8");
}

#[test]
fn usage_errors_match_gnu_sort_in_en_us_utf8() {
    check_locale("en_US.UTF-8");
}

/// A file name that is not UTF-8 is quoted from its own bytes, as GNU quotes it (`$'\377'`),
/// in every locale; and a missing one is reported, not sorted as another name.
#[test]
fn names_that_are_not_utf8_are_quoted_from_their_bytes() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    if !gnu_sort_available() {
        eprintln!("skipped: {GNU_SORT} is not GNU sort");
        return;
    }
    let loc = common::locpath("en_US.UTF-8");
    for lc_all in ["C", "C.UTF-8", "en_US.UTF-8"] {
        if !locale_works(lc_all, &loc) {
            eprintln!("skipped {lc_all}: the locale is not available");
            continue;
        }
        let call = |program: &str| {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut c = Command::new(program);
            c.arg0("sort").current_dir(dir.path()).env_clear().env("LC_ALL", lc_all);
            if let Some(p) = &loc {
                c.env("LOCPATH", p);
            }
            c.arg(OsStr::from_bytes(b"no\xffpe")).arg("-o").arg(OsStr::from_bytes(b"out\xe9"));
            let o = c.stdin(Stdio::null()).output().expect("run sort");
            let err = String::from_utf8_lossy(&o.stderr).replace(&format!("{GNU_SORT}:"), "sort:");
            (o.status.code(), err)
        };
        let want = call(GNU_SORT);
        assert!(want.1.contains("$'\\377'"), "GNU sort said {want:?}");
        assert_eq!(call(env!("CARGO_BIN_EXE_oxsort")), want, "LC_ALL={lc_all}");
    }
}

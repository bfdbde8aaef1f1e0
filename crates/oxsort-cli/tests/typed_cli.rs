//! `oxsort sort` with typed keys as a user runs it: `--fields`, `--control` (DFSORT control
//! statements), `--record-size`, `--unique`, the GNU flags, and their errors. Typed outputs are
//! checked byte for byte against an obviously correct reference (decode the fields, stable
//! sort); gensort outputs with the valsort library.

use std::path::Path;
use std::process::Output;

mod common;
use common::{assert_sorted_permutation, gen, oxsort, run, stderr};
use oxsort_testkit::{leftovers, seed, Rng};

/// Runs `oxsort sort IN -o OUT EXTRA...`; panics with stderr on failure.
fn sort_ok(input: &Path, out: &Path, extra: &[&str]) -> Output {
    let o = run(oxsort().arg("sort").arg(input).arg("-o").arg(out).args(extra));
    assert!(o.status.success(), "oxsort sort {extra:?}: {}", stderr(&o));
    o
}

/// Runs `oxsort sort IN -o OUT EXTRA...` expecting failure: exit 1, the message on stderr,
/// no output and nothing left behind. Runs in `dir`, so relative names are as a user types
/// them. Returns stderr.
fn sort_err(dir: &Path, input: &Path, extra: &[&str]) -> String {
    let out = dir.join("never.dat");
    let o = run(oxsort().current_dir(dir).arg("sort").arg(input).arg("-o").arg(&out).args(extra));
    assert_eq!(o.status.code(), Some(1), "oxsort sort {extra:?}: {}", stderr(&o));
    assert!(!out.exists(), "an output was written for {extra:?}");
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
    stderr(&o)
}

// -------------------------------------------------------------------------------------------
// Typed records: 32 bytes.
//
//   offset  0   4            12          17               32
//          | BI | FI (8, BE) | PD (5)    | sequence (ASCII) |
//
// Few distinct values per field, so every field decides some comparisons and many records
// tie on the whole key (stability shows).

const TYPED: usize = 32;

/// Packed decimal of `v` in `len` bytes: digits, then the sign nibble (C or D).
fn packed(v: i64, len: usize) -> Vec<u8> {
    let digits = format!("{:0w$}", v.unsigned_abs(), w = 2 * len - 1);
    let mut nibbles: Vec<u8> = digits.bytes().map(|d| d - b'0').collect();
    nibbles.push(if v < 0 { 0xD } else { 0xC });
    nibbles.chunks(2).map(|p| p[0] << 4 | p[1]).collect()
}

fn unpacked(b: &[u8]) -> i64 {
    let mut v = 0i64;
    for (i, byte) in b.iter().enumerate() {
        v = v * 10 + (byte >> 4) as i64;
        if i + 1 < b.len() {
            v = v * 10 + (byte & 0xF) as i64;
        }
    }
    if b[b.len() - 1] & 0xF == 0xD {
        -v
    } else {
        v
    }
}

fn typed_records(n: usize, rng: &mut Rng) -> Vec<u8> {
    let mut data = Vec::with_capacity(n * TYPED);
    for i in 0..n {
        let bi = [0u32, 7, 0x0100_0000, u32::MAX][rng.below(4) as usize];
        let fi = [i64::MIN, -300, -1, 0, 1, 299, i64::MAX][rng.below(7) as usize];
        let pd = [-99_999i64, -5, 0, 5, 123_456_789][rng.below(5) as usize];
        data.extend_from_slice(&bi.to_be_bytes());
        data.extend_from_slice(&fi.to_be_bytes());
        data.extend_from_slice(&packed(pd, 5));
        data.extend_from_slice(format!("{i:>15}").as_bytes());
    }
    data
}

/// The fields of a typed record, decoded.
fn fields(r: &[u8]) -> (u32, i64, i64) {
    (
        u32::from_be_bytes(r[0..4].try_into().unwrap()),
        i64::from_be_bytes(r[4..12].try_into().unwrap()),
        unpacked(&r[12..17]),
    )
}

/// Stable sort of whole records by `key`.
fn reference<K: Ord>(data: &[u8], size: usize, key: impl Fn(&[u8]) -> K) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks(size).collect();
    recs.sort_by_key(|r| key(r));
    recs.concat()
}

#[test]
fn fields_equals_plain_sort_byte_for_byte() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    let sum = gen(&input, 20_000);
    for memory in ["64M", "1M"] {
        let (plain, typed) = (d.path().join("plain.dat"), d.path().join("typed.dat"));
        sort_ok(&input, &plain, &["--memory", memory]);
        for spec in ["1,10,CH,A", "(1,10,CH,A)", "1,4,CH,A,5,6,BI,A"] {
            sort_ok(&input, &typed, &["--memory", memory, "--fields", spec]);
            assert_sorted_permutation(&typed, 20_000, sum);
            assert!(std::fs::read(&plain).unwrap() == std::fs::read(&typed).unwrap(), "{spec}");
        }
    }
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn control_file_sorts_typed_records_like_a_reference() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let d = tempfile::tempdir().unwrap();
    let (input, out, ctl) =
        (d.path().join("in.dat"), d.path().join("out.dat"), d.path().join("ctl"));
    // 960 kB: one pass in 64 MiB, two in 1 MiB.
    let data = typed_records(30_000, &mut rng);
    std::fs::write(&input, &data).unwrap();
    std::fs::write(
        &ctl,
        "* Typed records: region (binary) descending, then amount, then balance.\n\
         \x20 SORT FIELDS=(1,4,BI,D,     region, newest first\n\
         \x20              5,8,FI,A,     amount\n\
         *  a comment inside the continued statement\n\
         \x20              13,5,PD,A)    balance\n\
         \x20 RECORD TYPE=F,LENGTH=32\n\
         \x20 OPTION EQUALS\n\
         \x20 END\n",
    )
    .unwrap();
    let want = reference(&data, TYPED, |r| {
        let (bi, fi, pd) = fields(r);
        (std::cmp::Reverse(bi), fi, pd)
    });
    for (memory, passes) in [("64M", "1 pass,"), ("1M", "2 passes")] {
        let ctl_arg = ctl.to_str().unwrap();
        let o = sort_ok(&input, &out, &["--memory", memory, "--control", ctl_arg, "--stats"]);
        assert!(stderr(&o).contains(passes), "{}", stderr(&o));
        assert!(std::fs::read(&out).unwrap() == want, "seed {seed}, --memory {memory}");
        // The same key on the command line, the layout given by --record-size.
        sort_ok(
            &input,
            &out,
            &["--memory", memory, "--record-size", "32", "--fields", "1,4,BI,D,5,8,FI,A,13,5,PD,A"],
        );
        assert!(std::fs::read(&out).unwrap() == want, "seed {seed}, --fields, --memory {memory}");
    }
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn sum_fields_none_and_unique_keep_the_first_of_each_key() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let d = tempfile::tempdir().unwrap();
    let (input, out, ctl) =
        (d.path().join("in.dat"), d.path().join("out.dat"), d.path().join("ctl"));
    let data = typed_records(3_000, &mut rng);
    std::fs::write(&input, &data).unwrap();
    let sorted = reference(&data, TYPED, |r| fields(r).1);
    let mut want: Vec<u8> = Vec::new();
    for r in sorted.chunks(TYPED) {
        if want.len() < TYPED || fields(&want[want.len() - TYPED..]).1 != fields(r).1 {
            want.extend_from_slice(r);
        }
    }
    std::fs::write(&ctl, " SORT FIELDS=(5,8,FI,A)\n SUM FIELDS=NONE\n RECORD TYPE=F,LENGTH=32\n")
        .unwrap();
    sort_ok(&input, &out, &["--control", ctl.to_str().unwrap()]);
    assert!(std::fs::read(&out).unwrap() == want, "seed {seed}: SUM FIELDS=NONE");
    for flag in ["--unique", "-u"] {
        sort_ok(&input, &out, &["--record-size", "32", "--fields", "5,8,FI,A", flag]);
        assert!(std::fs::read(&out).unwrap() == want, "seed {seed}: {flag}");
    }
}

#[test]
fn include_and_omit_filter_records() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let d = tempfile::tempdir().unwrap();
    let (input, out, ctl) =
        (d.path().join("in.dat"), d.path().join("out.dat"), d.path().join("ctl"));
    let data = typed_records(3_000, &mut rng);
    std::fs::write(&input, &data).unwrap();
    let key = |r: &[u8]| fields(r).2;
    let keep = |r: &[u8]| fields(r).1 < 0;
    let sorted = reference(&data, TYPED, key);
    for (stmt, kept) in [("INCLUDE COND=(5,8,FI,LT,0)", true), ("OMIT COND=(5,8,FI,LT,0)", false)] {
        std::fs::write(
            &ctl,
            format!(" RECORD TYPE=F,LENGTH=32\n SORT FIELDS=(13,5,PD,A)\n {stmt}\n"),
        )
        .unwrap();
        sort_ok(&input, &out, &["--control", ctl.to_str().unwrap()]);
        let want: Vec<u8> =
            sorted.chunks(TYPED).filter(|r| keep(r) == kept).flatten().copied().collect();
        assert!(std::fs::read(&out).unwrap() == want, "seed {seed}: {stmt}");
    }
}

#[test]
fn copy_keeps_the_input_order() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let d = tempfile::tempdir().unwrap();
    let (input, out, ctl) =
        (d.path().join("in.dat"), d.path().join("out.dat"), d.path().join("ctl"));
    let data = typed_records(2_000, &mut rng);
    std::fs::write(&input, &data).unwrap();
    for text in [
        " SORT FIELDS=COPY\n RECORD TYPE=F,LENGTH=32\n",
        " OPTION COPY\n RECORD TYPE=F,LENGTH=32\n INCLUDE COND=(1,4,BI,EQ,7)\n",
    ] {
        std::fs::write(&ctl, text).unwrap();
        sort_ok(&input, &out, &["--control", ctl.to_str().unwrap()]);
        let want: Vec<u8> = data
            .chunks(TYPED)
            .filter(|r| !text.contains("INCLUDE") || fields(r).0 == 7)
            .flatten()
            .copied()
            .collect();
        assert!(std::fs::read(&out).unwrap() == want, "seed {seed}: {text}");
    }
}

#[test]
fn merge_needs_sorted_inputs_and_names_the_one_that_is_not() {
    let d = tempfile::tempdir().unwrap();
    let (a, b, out, ctl) = (
        d.path().join("a.dat"),
        d.path().join("b.dat"),
        d.path().join("out.dat"),
        d.path().join("ctl"),
    );
    let sum_a = gen(&a, 4_000);
    let sum_b =
        oxsort_gensort::generate_file(&b, 4_000, 3_000, oxsort_gensort::Kind::Binary, 1, None)
            .unwrap()
            .value();
    std::fs::write(&ctl, " MERGE FIELDS=(1,10,CH,A)\n").unwrap();
    let merge =
        || run(oxsort().args(["sort", "--control"]).arg(&ctl).arg(&a).arg(&b).arg("-o").arg(&out));
    // a sorted, b still in generation order.
    sort_ok(&a, &a, &[]);
    let o = merge();
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains(&format!("{}: record ", b.display())), "{e}");
    assert!(e.contains("is out of order"), "{e}");
    assert!(!e.contains(&a.display().to_string()), "{e}");
    assert!(!out.exists());
    assert!(leftovers(d.path()).is_empty());

    // Both sorted, the inputs merge.
    sort_ok(&b, &b, &[]);
    let o = merge();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_sorted_permutation(&out, 7_000, sum_a + sum_b);
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn parse_errors_name_the_file_line_and_column() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    gen(&input, 100);
    let ctl = d.path().join("ctl.txt");
    std::fs::write(&ctl, " SORT FIELDS=(1,10,CH,Q)\n").unwrap();
    let e = sort_err(d.path(), &input, &["--control", "ctl.txt"]);
    assert_eq!(e, "oxsort: ctl.txt: line 1, column 23: order must be A or D, found 'Q'\n");

    std::fs::write(&ctl, "* comment\n SORT FIELDS=(1,10,CH,A,\n               11,4,XX,D)\n")
        .unwrap();
    let e = sort_err(d.path(), &input, &["--control", "ctl.txt"]);
    assert!(e.starts_with("oxsort: ctl.txt: line 3, column 21: "), "{e}");
    assert!(e.contains("found 'XX'"), "{e}");

    std::fs::write(&ctl, " SORT FIELDS=(1,10,CH,A)\n FROB X\n").unwrap();
    let e = sort_err(d.path(), &input, &["--control", "ctl.txt"]);
    assert!(e.starts_with("oxsort: ctl.txt: line 2, column 2: expected a statement"), "{e}");

    let e = sort_err(d.path(), &input, &["--fields", "1,10,CH,Q"]);
    assert_eq!(e, "oxsort: --fields '1,10,CH,Q': column 9: order must be A or D, found 'Q'\n");

    let e = sort_err(d.path(), &input, &["--control", "missing.txt"]);
    assert!(e.contains("missing.txt"), "{e}");

    let e = sort_err(d.path(), &input, &["--record-size", "0"]);
    assert!(e.contains("record size must be 1 to 65535 bytes, found 0"), "{e}");
    let e = sort_err(d.path(), &input, &["--record-size", "65536"]);
    assert!(e.contains("found 65536"), "{e}");

    let e = sort_err(d.path(), &input, &["--lines", "-k", "2,2Q"]);
    assert_eq!(
        e,
        "oxsort: -k '2,2Q': stray character in field spec: invalid field specification '2,2Q'\n"
    );

    // A field past the end of the record, before anything is read.
    let e = sort_err(d.path(), &input, &["--record-size", "20", "--fields", "15,8,FI,A"]);
    assert!(e.contains("past the end of the 20-byte records"), "{e}");
}

#[test]
fn conflicting_flags_are_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    gen(&input, 100);
    let ctl = d.path().join("ctl.txt");
    let c = ctl.to_str().unwrap();

    std::fs::write(&ctl, " SORT FIELDS=(1,10,CH,A)\n").unwrap();
    let e = sort_err(d.path(), &input, &["--control", c, "--fields", "1,10,CH,A"]);
    assert!(e.contains("--fields and the SORT FIELDS= of") && e.contains("keep one"), "{e}");

    std::fs::write(&ctl, " RECORD TYPE=F,LENGTH=50\n").unwrap();
    let e = sort_err(d.path(), &input, &["--control", c, "--record-size", "100"]);
    assert!(e.contains("RECORD LENGTH=50 conflicts with --record-size 100"), "{e}");
    let e = sort_err(d.path(), &input, &["--control", c, "--lines"]);
    assert!(e.contains("conflicts with --lines"), "{e}");
    // The same length twice is fine.
    sort_ok(&input, &d.path().join("ok.dat"), &["--control", c, "--record-size", "50"]);
    std::fs::remove_file(d.path().join("ok.dat")).unwrap();

    for flags in [&["-k", "2"][..], &["-n"], &["-t", ",", "-r"], &["-s"]] {
        let e = sort_err(d.path(), &input, flags);
        assert!(
            e.contains("GNU sort flag") && e.contains("add --lines or --nul"),
            "{flags:?}: {e}"
        );
    }
    let e = sort_err(d.path(), &input, &["--lines", "-k", "2", "--fields", "1,2,CH,A"]);
    assert!(e.contains("-k and --fields both give the key"), "{e}");
    let e = sort_err(d.path(), &input, &["--record-size", "100", "--nul"]);
    assert!(e.contains("cannot go with --lines or --nul"), "{e}");
    std::fs::write(&ctl, " SORT FIELDS=COPY\n").unwrap();
    let e = sort_err(d.path(), &input, &["--control", c, "--fields", "1,10,CH,A"]);
    assert!(e.contains("copy"), "{e}");
}

#[test]
fn lines_with_gnu_flags_sort_like_gnu_sort() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.txt");
    let mut text = String::new();
    let mut x: u64 = 12345;
    for i in 0..3000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let word: String =
            (0..(x >> 60) % 5).map(|k| (b'a' + ((x >> (8 * k)) % 3) as u8) as char).collect();
        text.push_str(&format!("{word},{},{}\n", (x >> 20) % 200, i % 7));
    }
    text.push_str("no final newline,5,5");
    std::fs::write(&input, &text).unwrap();
    let out = d.path().join("out.txt");
    let cases: [(&[&str], &[&str]); 5] = [
        (&["--lines"], &["-s"]),
        (&["--lines", "-t", ",", "-k", "2,2n", "-r", "-s"], &["-t", ",", "-k2,2n", "-r", "-s"]),
        (&["--lines", "-t", ",", "-k", "3,3n", "-k", "1,1"], &["-t", ",", "-k3,3n", "-k1,1"]),
        (&["--lines", "-u", "-t", ",", "-k", "1,1"], &["-u", "-t", ",", "-k1,1"]),
        (&["--lines", "--memory", "1M", "-t", ",", "-k", "2,2n"], &["-t", ",", "-k2,2n"]),
    ];
    for (ours, gnu) in cases {
        let o = run(oxsort().arg("sort").arg(&input).arg("-o").arg(&out).args(ours));
        assert!(o.status.success(), "{ours:?}: {}", stderr(&o));
        let want = std::process::Command::new("sort")
            .env("LC_ALL", "C")
            .args(gnu)
            .arg(&input)
            .output()
            .unwrap()
            .stdout;
        assert!(
            std::fs::read(&out).unwrap() == want,
            "{ours:?} differs from LC_ALL=C sort {gnu:?}"
        );
    }
}

#[test]
fn explain_takes_the_same_flags() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    gen(&input, 1_000);
    let ctl = d.path().join("ctl.txt");
    std::fs::write(&ctl, " SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)\n SUM FIELDS=NONE\n")
        .unwrap();
    let never = d.path().join("never.dat");
    let o =
        run(oxsort().arg("explain").arg(&input).arg("-o").arg(&never).arg("--control").arg(&ctl));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!never.exists());
    let o = run(oxsort()
        .arg("explain")
        .arg(&input)
        .arg("-o")
        .arg(&never)
        .args(["--fields", "1,10,CH,X"]));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--fields '1,10,CH,X': column 9"), "{}", stderr(&o));
}

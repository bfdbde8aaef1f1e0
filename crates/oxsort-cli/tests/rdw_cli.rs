//! RDW-prefixed variable records (z/OS `RECFM=V`/`VB`) through the command line, against a
//! reference written from the definitions, not from oxsort's code:
//!
//! - a record is a 4-byte RDW (2-byte big-endian length counting the RDW, two zero bytes)
//!   and its data; the file is the records back to back; the output keeps each RDW;
//! - DFSORT positions count the RDW as bytes 1-4;
//! - `OPTION VLSHRT`: a control field past a short record's end compares as if padded with
//!   binary zeros; `OPTION VLSCMP`: so does an INCLUDE/OMIT compare field;
//! - `CH`/`BI` fields order by their bytes, `FI` as big-endian two's complement, `PD` as
//!   packed decimal (a digit per nibble, the last nibble the sign: `D` or `B` negative);
//! - the sort is stable.
//!
//! Whole jobs are compared byte for byte in one pass and in two (`--memory` small enough for
//! several runs, `--passes two`). A bad RDW, and a short key field without VLSHRT, are errors
//! naming the file, and nothing is written under the output's name.

mod common;
use common::{oxsort, run, stderr};

use std::cmp::Ordering;
use std::path::Path;

/// SplitMix64: a small seeded generator (the seed is printed by each test).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn seed() -> u64 {
    let s = std::env::var("OXSORT_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20261124);
    eprintln!("seed {s} (set OXSORT_TEST_SEED to repeat another)");
    s
}

/// `n` records of `min_len..=max_len` bytes (RDW included). Data: bytes 5-8 letters from a
/// small alphabet (many ties), 9-10 binary, 11-13 a packed decimal, 14-17 a signed binary
/// integer, then letters; fields the record is too short for are cut off.
fn records(rng: &mut Rng, n: usize, min_len: usize, max_len: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let len = min_len + rng.below((max_len - min_len + 1) as u64) as usize;
            let mut data = Vec::with_capacity(len);
            for _ in 0..4 {
                data.push(b"ABCD"[rng.below(4) as usize]);
            }
            data.extend_from_slice(&(rng.below(6) as u16 * 0x0101).to_be_bytes());
            // Five decimal digits, one per nibble, then the sign nibble.
            let (mut digits, mut packed) = (rng.below(100_000), 0u32);
            for i in 0..5 {
                packed |= ((digits % 10) as u32) << (4 * (i + 1));
                digits /= 10;
            }
            packed |= if rng.below(2) == 0 { 0xC } else { 0xD };
            data.extend_from_slice(&packed.to_be_bytes()[1..]);
            let fi = (rng.next() as i32) >> rng.below(31);
            data.extend_from_slice(&fi.to_be_bytes());
            while data.len() < len - 4 {
                data.push(b'a' + rng.below(26) as u8);
            }
            data.truncate(len - 4);
            let mut rec = ((len) as u16).to_be_bytes().to_vec();
            rec.extend_from_slice(&[0, 0]);
            rec.extend_from_slice(&data);
            rec
        })
        .collect()
}

/// Bytes `p..p+m` (1-based `p`) of `rec`, padded with binary zeros past its end.
fn field(rec: &[u8], p: usize, m: usize) -> Vec<u8> {
    (p - 1..p - 1 + m).map(|i| rec.get(i).copied().unwrap_or(0)).collect()
}

/// The value of a packed decimal field.
fn packed(b: &[u8]) -> i64 {
    let mut v = 0i64;
    for (i, byte) in b.iter().enumerate() {
        v = v * 10 + (byte >> 4) as i64;
        if i + 1 < b.len() {
            v = v * 10 + (byte & 0xF) as i64;
        }
    }
    if matches!(b[b.len() - 1] & 0xF, 0xB | 0xD) {
        -v
    } else {
        v
    }
}

fn fi(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn write_records(path: &Path, recs: &[Vec<u8>]) {
    std::fs::write(path, recs.concat()).unwrap();
}

/// Runs `oxsort sort` with `args`, in one pass and in two, and checks both outputs equal
/// `want`.
fn both_passes(dir: &Path, input: &Path, args: &[&str], want: &[u8]) {
    for (passes, memory) in [("one", "256M"), ("two", "4M")] {
        let out = dir.join(format!("out-{passes}"));
        let o = run(oxsort()
            .args(["sort", "-q", "--stats=json", "--memory", memory, "--passes", passes])
            .args(args)
            .arg(input)
            .arg("-o")
            .arg(&out));
        assert!(o.status.success(), "--passes {passes}: {}", stderr(&o));
        let text = stderr(&o);
        let json = text.lines().rev().find(|l| l.starts_with('{')).expect("a --stats=json line");
        let stats: serde_json::Value = serde_json::from_str(json).unwrap();
        let want_passes = if passes == "one" { 1 } else { 2 };
        assert_eq!(stats["passes"].as_u64(), Some(want_passes), "{json}");
        if passes == "two" {
            assert!(stats["runs"].as_u64().unwrap_or(0) > 1, "one run only: {json}");
        }
        let got = std::fs::read(&out).unwrap();
        assert!(got == want, "--passes {passes}: the output differs from the reference");
    }
}

#[test]
fn short_keys_and_conditions_pad_with_zeros_under_vlshrt_and_vlscmp() {
    let mut rng = Rng(seed());
    let recs = records(&mut rng, 40_000, 5, 300);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.vb");
    write_records(&input, &recs);
    let ctl = dir.path().join("job.ctl");
    std::fs::write(
        &ctl,
        " OPTION VLSHRT,VLSCMP\n SORT FIELDS=(5,4,CH,A,9,2,BI,D)\n \
         INCLUDE COND=(5,1,CH,NE,C'D',AND,16,2,CH,LT,C'm')\n RECORD TYPE=V,LENGTH=300\n",
    )
    .unwrap();
    // The reference: INCLUDE with fields padded with zeros (the constant C'm' padded with a
    // blank to the field's 2 bytes), then a stable sort by the padded key fields.
    let mut kept: Vec<&Vec<u8>> = recs
        .iter()
        .filter(|r| field(r, 5, 1) != b"D" && field(r, 16, 2).as_slice() < b"m ".as_slice())
        .collect();
    assert!(kept.len() > 10_000 && kept.len() < 40_000, "the filter keeps {}", kept.len());
    kept.sort_by(|a, b| {
        field(a, 5, 4).cmp(&field(b, 5, 4)).then_with(|| field(b, 9, 2).cmp(&field(a, 9, 2)))
    });
    let want: Vec<u8> = kept.iter().flat_map(|r| r.iter().copied()).collect();
    let ctl_arg = format!("--control={}", ctl.display());
    both_passes(dir.path(), &input, &[&ctl_arg], &want);
    // --rdw on the command line is the same layout as RECORD TYPE=V.
    let ctl2 = dir.path().join("job2.ctl");
    std::fs::write(
        &ctl2,
        " OPTION VLSHRT,VLSCMP\n SORT FIELDS=(5,4,CH,A,9,2,BI,D)\n \
         INCLUDE COND=(5,1,CH,NE,C'D',AND,16,2,CH,LT,C'm')\n",
    )
    .unwrap();
    let out = dir.path().join("out-flag");
    let o = run(oxsort()
        .args(["sort", "-q", "--rdw=300", "--control"])
        .arg(&ctl2)
        .arg(&input)
        .arg("-o")
        .arg(&out));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&out).unwrap() == want);
}

#[test]
fn typed_keys_of_rdw_records_sort_as_the_reference() {
    let mut rng = Rng(seed() ^ 1);
    let recs = records(&mut rng, 40_000, 17, 300);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.vb");
    write_records(&input, &recs);
    let ctl = dir.path().join("job.ctl");
    std::fs::write(
        &ctl,
        " SORT FIELDS=(11,3,PD,D,14,4,FI,A)\n OMIT COND=(14,4,FI,LT,-50000000)\n \
         RECORD TYPE=V\n",
    )
    .unwrap();
    let mut kept: Vec<&Vec<u8>> = recs.iter().filter(|r| fi(&r[13..17]) >= -50_000_000).collect();
    assert!(kept.len() < recs.len() && kept.len() > recs.len() / 2, "{}", kept.len());
    kept.sort_by(|a, b| {
        let by_pd = packed(&b[10..13]).cmp(&packed(&a[10..13]));
        by_pd.then_with(|| fi(&a[13..17]).cmp(&fi(&b[13..17])))
    });
    let want: Vec<u8> = kept.iter().flat_map(|r| r.iter().copied()).collect();
    let ctl_arg = format!("--control={}", ctl.display());
    both_passes(dir.path(), &input, &[&ctl_arg], &want);
    // OUTREC BUILD starting with 1,4: the RDW is kept and given the rebuilt length; HEX
    // writes each byte as two upper-case hexadecimal digits, X a blank.
    let ctl = dir.path().join("outrec.ctl");
    std::fs::write(
        &ctl,
        " SORT FIELDS=(11,3,PD,D,14,4,FI,A)\n OMIT COND=(14,4,FI,LT,-50000000)\n \
         RECORD TYPE=V\n OUTREC BUILD=(1,4,C'<',11,3,HEX,X,5,4,C'>')\n",
    )
    .unwrap();
    let want: Vec<u8> = kept
        .iter()
        .flat_map(|r| {
            let mut data = b"<".to_vec();
            for b in &r[10..13] {
                data.extend_from_slice(format!("{b:02X}").as_bytes());
            }
            data.push(b' ');
            data.extend_from_slice(&r[4..8]);
            data.push(b'>');
            let mut rec = ((data.len() + 4) as u16).to_be_bytes().to_vec();
            rec.extend_from_slice(&[0, 0]);
            rec.extend_from_slice(&data);
            rec
        })
        .collect();
    let ctl_arg = format!("--control={}", ctl.display());
    both_passes(dir.path(), &input, &[&ctl_arg], &want);
}

#[test]
fn no_key_orders_by_the_data_after_the_rdw() {
    let mut rng = Rng(seed() ^ 2);
    let recs = records(&mut rng, 150_000, 5, 60);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.vb");
    write_records(&input, &recs);
    let mut sorted: Vec<&Vec<u8>> = recs.iter().collect();
    sorted.sort_by(|a, b| a[4..].cmp(&b[4..]));
    let want: Vec<u8> = sorted.iter().flat_map(|r| r.iter().copied()).collect();
    both_passes(dir.path(), &input, &["--rdw"], &want);
    // A copy keeps the input as it is.
    let ctl = dir.path().join("copy.ctl");
    std::fs::write(&ctl, " OPTION COPY\n RECORD TYPE=V,LENGTH=64\n").unwrap();
    let out = dir.path().join("copy.out");
    let o =
        run(oxsort().args(["sort", "-q", "--control"]).arg(&ctl).arg(&input).arg("-o").arg(&out));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&out).unwrap() == recs.concat());
}

/// A failed sort: the message names the file and contains `what`; no output and no other
/// file is left in the directory.
fn fails(dir: &Path, data: &[u8], args: &[&str], what: &[&str]) {
    let input = dir.join("bad.vb");
    std::fs::write(&input, data).unwrap();
    let before = std::fs::read_dir(dir).unwrap().count();
    for memory in ["256M", "4M"] {
        let out = dir.join("out");
        let o = run(oxsort()
            .args(["sort", "-q", "--memory", memory])
            .args(args)
            .arg(&input)
            .arg("-o")
            .arg(&out));
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("bad.vb"), "{e}");
        for w in what {
            assert!(e.contains(w), "{e}\nlacks: {w}");
        }
        assert!(!out.exists(), "an output was left");
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), before, "left files behind");
    }
}

#[test]
fn bad_rdws_and_short_keys_are_errors_that_write_nothing() {
    let mut rng = Rng(seed() ^ 3);
    // Enough records that the bad one lies past the first chunk of a small budget.
    let recs = records(&mut rng, 30_000, 17, 300);
    let at = 20_000;
    let offset: usize = recs[..at].iter().map(Vec::len).sum();
    let dir = tempfile::tempdir().unwrap();
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut data = recs.concat();
        f(&mut data);
        data
    };
    let key = ["--rdw=300", "--fields=5,4,CH,A"];
    let place = format!("record {} at byte offset {offset}", at + 1);
    // A length below 4.
    let d = with(&|d| d[offset..offset + 2].copy_from_slice(&[0, 3]));
    fails(dir.path(), &d, &key, &[&place, "length of 3"]);
    // Nonzero bytes 3-4.
    let d = with(&|d| d[offset + 3] = 1);
    fails(dir.path(), &d, &key, &[&place, "bytes 3-4", "X'0001'"]);
    // Longer than the longest record declared.
    let d = with(&|d| d[offset..offset + 2].copy_from_slice(&301u16.to_be_bytes()));
    fails(dir.path(), &d, &key, &[&place, "length of 301", "300-byte maximum"]);
    // The last record runs past the end of the file.
    let last: usize = recs.iter().map(Vec::len).sum::<usize>() - recs[recs.len() - 1].len();
    let d = with(&|d| {
        d.pop();
    });
    let place_last = format!("record {} at byte offset {last}", recs.len());
    fails(dir.path(), &d, &key, &[&place_last, "past the end of the file"]);
    // A key field past a short record's end, without VLSHRT.
    let mut short = recs.clone();
    short[at] = vec![0, 6, 0, 0, b'A', b'B'];
    let ctl = dir.path().join("k.ctl");
    std::fs::write(&ctl, " SORT FIELDS=(5,4,CH,A)\n RECORD TYPE=V,LENGTH=300\n").unwrap();
    let ctl_arg = format!("--control={}", ctl.display());
    fails(
        dir.path(),
        &short.concat(),
        &[&ctl_arg],
        &[&format!("record {}", at + 1), "bytes 5 to 8", "6-byte record"],
    );
    // A short field past the part of the key an entry carries is found as well.
    fails(
        dir.path(),
        &recs.concat(),
        &["--rdw=300", "--fields=5,10,CH,A,250,2,CH,A"],
        &["bytes 250 to 251"],
    );
    // An INCLUDE field past the end without VLSCMP or VLSHRT.
    std::fs::write(&ctl, " INCLUDE COND=(20,2,CH,EQ,C'ab')\n RECORD TYPE=V\n").unwrap();
    fails(dir.path(), &short.concat(), &[&ctl_arg, "--fields=5,1,CH,A"], &["bytes 20 to 21"]);
}

#[test]
fn a_jcl_step_with_recfm_vb_and_explain_name_the_layout() {
    let mut rng = Rng(seed() ^ 4);
    let recs = records(&mut rng, 3_000, 5, 200);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.vb");
    write_records(&input, &recs);
    let out = dir.path().join("out.vb");
    let job = "//SORTVB  EXEC PGM=SORT\n\
               //SORTIN   DD DSN=PROD.VB.IN,DISP=SHR,\n\
               //            DCB=(RECFM=VB,LRECL=204)\n\
               //SORTOUT  DD DSN=PROD.VB.OUT,DISP=(NEW,CATLG),DCB=(RECFM=VB,LRECL=204)\n\
               //SYSIN    DD *\n  OPTION VLSHRT\n  SORT FIELDS=(6,3,CH,D)\n/*\n";
    let ctl = dir.path().join("vb.jcl");
    std::fs::write(&ctl, job).unwrap();
    let dd = |name: &str, p: &Path| format!("--dd={name}={}", p.display());
    let o = run(oxsort()
        .args(["sort", "-q", "--control"])
        .arg(&ctl)
        .arg(dd("PROD.VB.IN", &input))
        .arg(dd("PROD.VB.OUT", &out)));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut sorted: Vec<&Vec<u8>> = recs.iter().collect();
    sorted.sort_by_key(|r| std::cmp::Reverse(field(r, 6, 3)));
    assert!(std::fs::read(&out).unwrap() == joined(&sorted));
    let o = run(oxsort()
        .args(["explain", "--control"])
        .arg(&ctl)
        .arg(dd("PROD.VB.IN", &input))
        .arg(dd("PROD.VB.OUT", &out)));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.contains("RDW-prefixed variable records") && text.contains("204 bytes"), "{text}");
    // The LRECL is the longest record: a longer one is an error.
    let long = dir.path().join("long.vb");
    let mut data = recs.concat();
    data.extend_from_slice(&records(&mut rng, 1, 205, 205)[0]);
    std::fs::write(&long, data).unwrap();
    let o = run(oxsort()
        .args(["sort", "-q", "--control"])
        .arg(&ctl)
        .arg(dd("PROD.VB.IN", &long))
        .arg(dd("PROD.VB.OUT", &out)));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("204-byte maximum"), "{}", stderr(&o));
}

#[test]
fn gcsort_record_v_sorts_rdw_records() {
    let mut rng = Rng(seed() ^ 5);
    let recs = records(&mut rng, 2_000, 10, 100);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.vb");
    write_records(&input, &recs);
    let out = dir.path().join("out.vb");
    let line = format!(
        "SORT FIELDS=(9,2,BI,A,5,4,CH,D) USE {} ORG SQ RECORD V,5,96 GIVE {} ORG SQ RECORD V,5,96",
        input.display(),
        out.display()
    );
    let o = run(oxsort().args(["gcsort", "--quiet"]).arg(&line));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut sorted: Vec<&Vec<u8>> = recs.iter().collect();
    sorted.sort_by(|a, b| {
        field(a, 9, 2).cmp(&field(b, 9, 2)).then_with(|| field(b, 5, 4).cmp(&field(a, 5, 4)))
    });
    assert!(std::fs::read(&out).unwrap() == joined(&sorted));
    // RECORD V gives the longest data length: 96 data bytes and the RDW.
    let mut data = recs.concat();
    data.extend_from_slice(&records(&mut rng, 1, 101, 101)[0]);
    std::fs::write(&input, data).unwrap();
    let o = run(oxsort().args(["gcsort", "--quiet"]).arg(&line));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("100-byte maximum"), "{}", stderr(&o));
}

#[test]
fn reference_helpers_follow_the_definitions() {
    // The reference's own decoding, checked on hand-made values.
    assert_eq!(packed(&[0x12, 0x34, 0x5C]), 12345);
    assert_eq!(packed(&[0x00, 0x04, 0x2D]), -42);
    assert_eq!(fi(&[0xFF, 0xFF, 0xFF, 0xFE]), -2);
    assert_eq!(field(&[0, 6, 0, 0, b'A', b'B'], 5, 4), b"AB\0\0");
    assert_eq!(b"m ".cmp(b"m\0"), Ordering::Greater);
}

/// Records back to back.
fn joined(recs: &[&Vec<u8>]) -> Vec<u8> {
    recs.iter().flat_map(|r| r.iter().copied()).collect()
}

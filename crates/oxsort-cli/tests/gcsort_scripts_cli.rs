//! Take files written as GCSORT's own test scripts write them: `FL` fields (GnuCOBOL's
//! COMP-1 and COMP-2, in the machine's byte order) in SORT, INCLUDE, OMIT and SUM, remarks
//! after the operands (`32,7,  * the ZD field`), and OUTFIL's `FILES=name`. Every expected
//! output is computed here from the records' fields, independently of oxsort's code.

mod common;
use common::{oxsort, run, stderr};
use std::path::Path;

/// Record length of the test records.
const LEN: usize = 24;

/// A record: bytes 1-4 a name, 5-12 a little-endian `f64`, 13-16 a little-endian `f32`,
/// 17-24 blanks.
fn record(name: &str, double: f64, float: f32) -> Vec<u8> {
    let mut r = format!("{name:<4}").into_bytes();
    r.extend_from_slice(&double.to_le_bytes());
    r.extend_from_slice(&float.to_le_bytes());
    r.extend_from_slice(b"        ");
    assert_eq!(r.len(), LEN);
    r
}

/// The fields of a record.
fn fields(r: &[u8]) -> (&[u8], f64, f32) {
    (
        &r[0..4],
        f64::from_le_bytes(r[4..12].try_into().unwrap()),
        f32::from_le_bytes(r[12..16].try_into().unwrap()),
    )
}

/// Input records: names repeat (for SUM), values negative and positive, some fractional.
fn input() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for i in 0..40i32 {
        let name = ["AAAA", "BBBB", "CCCC", "DDDD"][(i * 7 % 4) as usize];
        let double = f64::from((i * 37) % 61 - 30) / 4.0;
        let float = ((i * 13) % 29 - 14) as f32 * 0.5;
        out.push(record(name, double, float));
    }
    out
}

/// Writes `take` and the input, runs `oxsort gcsort take` with `envs`; returns the GIVE
/// file's records.
fn job(d: &Path, take: &str, envs: &[(&str, &Path)]) -> Vec<Vec<u8>> {
    let inp = d.join("in.dat");
    std::fs::write(&inp, input().concat()).unwrap();
    let out = d.join("out.dat");
    let prm = d.join("job.prm");
    std::fs::write(&prm, take).unwrap();
    let mut cmd = oxsort();
    cmd.args(["gcsort", "-q", "take"]).arg(&prm).env("dd_in", &inp).env("dd_out", &out);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let o = run(&mut cmd);
    assert!(o.status.success(), "gcsort: {}", stderr(&o));
    records(&out)
}

fn records(path: &Path) -> Vec<Vec<u8>> {
    std::fs::read(path).unwrap().chunks(LEN).map(<[u8]>::to_vec).collect()
}

const FILES: &str = "USE dd_in RECORD F,24 ORG SQ\nGIVE dd_out RECORD F,24 ORG SQ\n";

#[test]
fn fl_keys_and_conditions_read_native_floats() {
    let dir = tempfile::tempdir().unwrap();
    let take = format!(
        "SORT FIELDS=(5,8,FL,D,\n             1,4,CH,A)\n\
         INCLUDE COND=(13,4,FL,GT,-3,AND,5,8,FL,LE,5)\n{FILES}"
    );
    let got = job(dir.path(), &take, &[]);
    let mut want: Vec<Vec<u8>> = input()
        .into_iter()
        .filter(|r| {
            let (_, d, f) = fields(r);
            f > -3.0 && d <= 5.0
        })
        .collect();
    // Stable: equal keys keep their input order.
    want.sort_by(|a, b| {
        let (an, ad, _) = fields(a);
        let (bn, bd, _) = fields(b);
        bd.partial_cmp(&ad).unwrap().then(an.cmp(bn))
    });
    assert!(!want.is_empty() && want.len() < input().len());
    assert_eq!(got, want);
}

#[test]
fn omit_on_fl_fields() {
    let dir = tempfile::tempdir().unwrap();
    let take = format!("SORT FIELDS=(1,4,CH,A)\nOMIT COND=(5,8,FL,LT,0,OR,13,4,FL,GE,4)\n{FILES}");
    let got = job(dir.path(), &take, &[]);
    let mut want: Vec<Vec<u8>> = input()
        .into_iter()
        .filter(|r| {
            let (_, d, f) = fields(r);
            !(d < 0.0 || f >= 4.0)
        })
        .collect();
    want.sort_by(|a, b| a[0..4].cmp(&b[0..4]));
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn sum_adds_fl_fields_of_four_and_eight_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let take =
        format!("SORT FIELDS(1,4,CH,A)\nSUM  FIELDS=( 5,8,FL,\n              13,4,FL)\n{FILES}");
    let got = job(dir.path(), &take, &[]);
    // Per name: the first record, its two floats the sums (quarters and halves add exactly).
    let mut want: Vec<Vec<u8>> = Vec::new();
    for name in ["AAAA", "BBBB", "CCCC", "DDDD"] {
        let group: Vec<Vec<u8>> =
            input().into_iter().filter(|r| &r[0..4] == name.as_bytes()).collect();
        let double: f64 = group.iter().map(|r| fields(r).1).sum();
        let float: f64 = group.iter().map(|r| f64::from(fields(r).2)).sum();
        let mut r = group[0].clone();
        r[4..12].copy_from_slice(&double.to_le_bytes());
        r[12..16].copy_from_slice(&(float as f32).to_le_bytes());
        want.push(r);
    }
    assert_eq!(got, want);
}

#[test]
fn remarks_after_operands_are_comments() {
    let dir = tempfile::tempdir().unwrap();
    // GCSORT's scripts annotate each INREC item; the last one right after its `)`.
    let take = format!(
        "SORT FIELDS=(9,4,CH,A)\n{FILES}\
         INREC    FIELDS(5,8,   *   out-fl-field    comp-2     1   8\n\
         \x20               1,4,   *   out-ch-field    pic x(4)   9   4\n\
         \x20              13,12)*   filler\n"
    );
    let got = job(dir.path(), &take, &[]);
    let mut want: Vec<Vec<u8>> =
        input().iter().map(|r| [&r[4..12], &r[0..4], &r[12..24]].concat()).collect();
    want.sort_by(|a, b| a[8..12].cmp(&b[8..12]));
    assert_eq!(got, want);
}

#[test]
fn outfil_files_names_an_output_as_fnames_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (one, two) = (d.join("one.dat"), d.join("two.dat"));
    let take = format!(
        "SORT FIELDS=(1,4,CH,A)\n{FILES}\
         OUTFIL INCLUDE =(1,4,CH,EQ,C'BBBB',AND,5,8,FL,GT,0),\n         FILES=dd_outfil_01\n\
         OUTFIL OMIT =(1,4,CH,EQ,C'BBBB'),\n         FILES=dd_outfil_02\n"
    );
    let all = job(d, &take, &[("dd_outfil_01", &one), ("dd_outfil_02", &two)]);
    let mut sorted = input();
    sorted.sort_by(|a, b| a[0..4].cmp(&b[0..4]));
    assert_eq!(all, sorted);
    let want_one: Vec<Vec<u8>> =
        sorted.iter().filter(|r| &r[0..4] == b"BBBB" && fields(r).1 > 0.0).cloned().collect();
    let want_two: Vec<Vec<u8>> = sorted.iter().filter(|r| &r[0..4] != b"BBBB").cloned().collect();
    assert!(!want_one.is_empty());
    assert_eq!(records(&one), want_one);
    assert_eq!(records(&two), want_two);
}

#[test]
fn dfsort_doors_keep_fl_big_endian_and_sum_refusing_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let inp = d.join("in.dat");
    // Big-endian doubles: 2.0, -1.0, 0.5.
    let recs: Vec<Vec<u8>> = [2.0f64, -1.0, 0.5].iter().map(|v| v.to_be_bytes().to_vec()).collect();
    std::fs::write(&inp, recs.concat()).unwrap();
    let out = d.join("out.dat");
    let sort = |statements: &str| {
        let ctl = d.join("job.ctl");
        std::fs::write(&ctl, statements).unwrap();
        run(oxsort()
            .args(["sort", "-q", "--record-size", "8", "--control"])
            .arg(&ctl)
            .arg("-o")
            .arg(&out)
            .arg(&inp))
    };
    let o = sort(" SORT FIELDS=(1,8,FL,A)\n");
    assert!(o.status.success(), "sort: {}", stderr(&o));
    let want = [recs[1].clone(), recs[2].clone(), recs[0].clone()].concat();
    assert_eq!(std::fs::read(&out).unwrap(), want);
    let o = sort(" SORT FIELDS=(1,1,CH,A)\n SUM FIELDS=(1,8,FL)\n");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("FL"), "{}", stderr(&o));
}

/// A record of GCSORT's signed-digit fields: bytes 1-4 a name, 5-11 `CLO` (zoned, sign over
/// the first digit: zone 7 when negative), 12-19 `CST` (digits then `+`/`-`), 20-27 `CSL`
/// (`+`/`-` then digits).
fn signed_record(name: &str, clo: i64, cst: i64, csl: i64) -> Vec<u8> {
    let mut c = format!("{:07}", clo.abs()).into_bytes();
    if clo < 0 {
        c[0] = 0x70 | (c[0] & 0x0F);
    }
    let sign = |v: i64| if v < 0 { '-' } else { '+' };
    let mut r = format!("{name:<4}").into_bytes();
    r.extend_from_slice(&c);
    r.extend_from_slice(format!("{:07}{}", cst.abs(), sign(cst)).as_bytes());
    r.extend_from_slice(format!("{}{:07}", sign(csl), csl.abs()).as_bytes());
    assert_eq!(r.len(), 27);
    r
}

#[test]
fn clo_cst_csl_fields_are_keys_and_conditions() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let values: Vec<(i64, i64, i64)> =
        (0..30i64).map(|i| ((i * 17) % 41 - 20, (i * 23) % 53 - 26, (i * 31) % 47 - 23)).collect();
    let names = ["ABCD", "GGGG", "HHHH", "XYZW", "OOOO"];
    let recs: Vec<Vec<u8>> = values
        .iter()
        .enumerate()
        .map(|(i, &(a, b, c))| signed_record(names[i % names.len()], a, b, c))
        .collect();
    let (inp, out) = (d.join("in.dat"), d.join("out.dat"));
    std::fs::write(&inp, recs.concat()).unwrap();
    let prm = d.join("job.prm");
    std::fs::write(
        &prm,
        "SORT FIELDS=(5,7,CLO,D,12,8,CST,A)\n\
         INCLUDE COND=(1,4,CH,SS,C'GGGG,HHHH,OOOO',AND,\n\
         \x20             12,8,CST,LE,10,OR,\n\
         \x20             20,8,CSL,GT,-5)\n\
         USE dd_in RECORD F,27 ORG SQ\nGIVE dd_out RECORD F,27 ORG SQ\n",
    )
    .unwrap();
    let o = run(oxsort()
        .args(["gcsort", "-q", "take"])
        .arg(&prm)
        .env("dd_in", &inp)
        .env("dd_out", &out));
    assert!(o.status.success(), "gcsort: {}", stderr(&o));
    // AND binds before OR: (name listed AND cst <= 10) OR csl > -5.
    let listed = ["GGGG", "HHHH", "OOOO"];
    let mut want: Vec<(usize, &Vec<u8>)> = recs
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            let (_, cst, csl) = values[*i];
            (listed.contains(&std::str::from_utf8(&r[0..4]).unwrap()) && cst <= 10) || csl > -5
        })
        .collect();
    want.sort_by_key(|(i, _)| (std::cmp::Reverse(values[*i].0), values[*i].1));
    let want: Vec<u8> = want.into_iter().flat_map(|(_, r)| r.clone()).collect();
    assert!(!want.is_empty() && want.len() < recs.concat().len());
    assert_eq!(std::fs::read(&out).unwrap(), want);
}

#[test]
fn an_unparenthesized_files_list_splits_among_its_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let outs = [d.join("o1.dat"), d.join("o2.dat"), d.join("o3.dat"), d.join("save.dat")];
    let take = format!(
        "SORT FIELDS=(1,4,CH,A)\n{FILES}\
         OUTFIL FILES=dd_o1,dd_o2,dd_o3,SPLIT, \n INCLUDE=(1,4,CH,EQ,C'CCCC')\n\
         OUTFIL FNAMES=dd_save,SAVE\n"
    );
    let envs: Vec<(&str, &Path)> = ["dd_o1", "dd_o2", "dd_o3", "dd_save"]
        .into_iter()
        .zip(outs.iter().map(|p| p.as_path()))
        .collect();
    job(d, &take, &envs);
    let mut sorted = input();
    sorted.sort_by(|a, b| a[0..4].cmp(&b[0..4]));
    let picked: Vec<Vec<u8>> = sorted.iter().filter(|r| &r[0..4] == b"CCCC").cloned().collect();
    assert!(picked.len() >= 6);
    // SPLIT: one record to each output in turn.
    for (k, out) in outs[..3].iter().enumerate() {
        let want: Vec<Vec<u8>> = picked.iter().skip(k).step_by(3).cloned().collect();
        assert_eq!(records(out), want, "output {}", k + 1);
    }
    let rest: Vec<Vec<u8>> = sorted.iter().filter(|r| &r[0..4] != b"CCCC").cloned().collect();
    assert_eq!(records(&outs[3]), rest);
}

/// `SUM 13,3,BI` as GCSORT's test jobs write it: unsigned and signed binary fields of lengths
/// DFSORT does not sum (3 bytes), added per key.
#[test]
fn sum_adds_three_byte_binary_fields() {
    let dir = tempfile::tempdir().unwrap();
    // 10-byte records: a 4-byte name, a 3-byte unsigned BI, a 3-byte signed FI (big-endian).
    let rec = |name: &str, bi: u32, fi: i32| {
        let mut r = name.as_bytes().to_vec();
        r.extend_from_slice(&bi.to_be_bytes()[1..]);
        r.extend_from_slice(&fi.to_be_bytes()[1..]);
        r
    };
    let rows: Vec<(&str, u32, i32)> = (0..30u32)
        .map(|i| (["BBBB", "AAAA", "CCCC"][(i % 3) as usize], i * 1000 + 7, (i as i32 - 15) * 301))
        .collect();
    let inp = dir.path().join("in.dat");
    std::fs::write(&inp, rows.iter().map(|&(n, b, f)| rec(n, b, f)).collect::<Vec<_>>().concat())
        .unwrap();
    let out = dir.path().join("out.dat");
    let prm = dir.path().join("job.prm");
    std::fs::write(
        &prm,
        "SORT FIELDS=(1,4,CH,A)\nSUM FIELDS=(5,3,BI,8,3,FI)\n\
         USE dd_in RECORD F,10 ORG SQ\nGIVE dd_out RECORD F,10 ORG SQ\n",
    )
    .unwrap();
    let o = run(oxsort()
        .args(["gcsort", "-q", "take"])
        .arg(&prm)
        .env("dd_in", &inp)
        .env("dd_out", &out));
    assert!(o.status.success(), "gcsort: {}", stderr(&o));
    let mut want = Vec::new();
    for name in ["AAAA", "BBBB", "CCCC"] {
        let group: Vec<_> = rows.iter().filter(|r| r.0 == name).collect();
        let bi: u32 = group.iter().map(|r| r.1).sum();
        let fi: i32 = group.iter().map(|r| r.2).sum();
        want.extend(rec(name, bi, fi));
    }
    assert_eq!(std::fs::read(&out).unwrap(), want);
}

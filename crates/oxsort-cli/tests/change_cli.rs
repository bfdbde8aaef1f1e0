//! DFSORT lookup items (`p,m,CHANGE=(v,find,set,...)[,NOMATCH=(set)]`) and `p` without a
//! length (the record's tail) through `oxsort sort --control` and `oxsort gcsort`, compared
//! byte for byte with a reference written here from DFSORT's definitions, not oxsort's code:
//!
//! - the field is compared with each find constant in the order written (a `C'..'` find
//!   shorter than the field padded with blanks); the first equal one gives its set: a constant
//!   or an input field, padded with blanks to v bytes; no match: NOMATCH's value;
//! - without NOMATCH, a field no find constant matches stops the job (DFSORT's ICE218A): the
//!   message names the record and the value, and no output is left;
//! - `p` alone last in BUILD (GCSORT: `p,`): the bytes from p to the record's end; on
//!   RDW-prefixed records each record keeps its own tail and its RDW counts it.

use std::path::Path;

mod common;
use common::{oxsort, run, stderr};
use oxsort_testkit::{leftovers, seed, Rng};

// Fixed 16-byte records: | code (2) | name (8) | amount (6) |, codes from a small set.

fn records(rng: &mut Rng, n: usize, codes: &[&[u8; 2]]) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let mut r = codes[rng.index(codes.len())].to_vec();
            r.extend((0..8).map(|_| b'a' + rng.index(26) as u8));
            r.extend(format!("{:06}", rng.below(1_000_000)).bytes());
            r
        })
        .collect()
}

/// DFSORT's lookup of `field` in `table` (find padded with blanks to the field), the set
/// padded with blanks to `v`.
fn lookup(field: &[u8], table: &[(&[u8], Vec<u8>)], nomatch: Option<&[u8]>, v: usize) -> Vec<u8> {
    let padded = |c: &[u8], n: usize| {
        let mut c = c.to_vec();
        c.resize(n, b' ');
        c
    };
    let set = table
        .iter()
        .find(|(find, _)| padded(find, field.len()) == field)
        .map(|(_, set)| set.clone())
        .or(nomatch.map(<[u8]>::to_vec))
        .expect("a match");
    padded(&set, v)
}

fn sort_control(dir: &Path, input: &Path, control: &str, extra: &[&str]) -> (Vec<u8>, String) {
    let ctl = dir.join("job.ctl");
    std::fs::write(&ctl, control).unwrap();
    let out = dir.join("out.dat");
    let o = run(oxsort()
        .arg("sort")
        .arg(input)
        .arg("-o")
        .arg(&out)
        .args(extra)
        .arg("--control")
        .arg(&ctl));
    assert!(o.status.success(), "{control}: {}", stderr(&o));
    let got = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    (got, stderr(&o))
}

#[test]
fn inrec_outrec_and_outfil_look_fields_up() {
    let seed = seed();
    let dir = tempfile::tempdir().unwrap();
    let codes: [&[u8; 2]; 5] = [b"NY", b"CA", b"TX", b"W ", b"ZZ"];
    let recs = records(&mut Rng::new(seed), 5_000, &codes);
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs.concat()).unwrap();
    // INREC puts the state's name (v = 10) before the record; the sort is on the name then the
    // amount; OUTREC keeps the name, the amount, and a one-letter class of the code whose
    // set for CA is the name's first two bytes of the record (an input field, padded).
    let control = " INREC BUILD=(1,2,CHANGE=(10,C'NY',C'NEW YORK',C'CA',C'CALIFORNIA',\n\
                   \x20  C'TX',C'TEXAS',C'W',C'WYOMING'),NOMATCH=(C'OTHER'),1,16)\n\
                   \x20SORT FIELDS=(1,10,CH,A,21,6,CH,A)\n\
                   \x20OUTREC BUILD=(1,10,C'|',21,6,C'|',11,2,CHANGE=(3,C'NY',C'E',\n\
                   \x20  C'CA',13,2,C'NY',C'NVR'),NOMATCH=(X'2D'),C'|',13)\n";
    let states: Vec<(&[u8], Vec<u8>)> = vec![
        (b"NY", b"NEW YORK".to_vec()),
        (b"CA", b"CALIFORNIA".to_vec()),
        (b"TX", b"TEXAS".to_vec()),
        (b"W", b"WYOMING".to_vec()),
    ];
    let mut inrec: Vec<Vec<u8>> = recs
        .iter()
        .map(|r| [lookup(&r[..2], &states, Some(b"OTHER"), 10), r.clone()].concat())
        .collect();
    // A stable sort on name and amount, as the statement's keys.
    inrec.sort_by(|a, b| (&a[..10], &a[20..26]).cmp(&(&b[..10], &b[20..26])));
    let want: Vec<u8> = inrec
        .iter()
        .flat_map(|r| {
            let class = vec![
                (&b"NY"[..], b"E".to_vec()),
                (b"CA", r[12..14].to_vec()),
                (b"NY", b"NVR".to_vec()),
            ];
            [
                &r[..10],
                b"|",
                &r[20..26],
                b"|",
                &lookup(&r[10..12], &class, Some(b"-"), 3),
                b"|",
                &r[12..26],
            ]
            .concat()
        })
        .collect();
    for memory in ["64M", "1M"] {
        let (got, e) =
            sort_control(dir.path(), &input, control, &["--record-size", "16", "--memory", memory]);
        assert_eq!(got.len(), want.len(), "seed {seed}, --memory {memory}: {e}");
        assert!(got == want, "seed {seed}, --memory {memory}: bytes differ");
    }
    // OUTFIL BUILD with the lookup in an IFTHEN clause and one in OVERLAY.
    let control = " OPTION COPY\n OUTFIL IFTHEN=(WHEN=(1,1,CH,EQ,C'N'),\n\
                   \x20 BUILD=(1,2,CHANGE=(2,C'NY',C'ny'),NOMATCH=(1,2),3,14)),\n\
                   \x20 IFTHEN=(WHEN=NONE,OVERLAY=(15:1,2,CHANGE=(2,C'CA',X'4341'),\n\
                   \x20 NOMATCH=(C'..')))\n";
    let want: Vec<u8> = recs
        .iter()
        .flat_map(|r| {
            let mut r = r.clone();
            if r[0] == b'N' {
                if &r[..2] == b"NY" {
                    r[..2].copy_from_slice(b"ny");
                }
            } else {
                let set: &[u8] = if &r[..2] == b"CA" { b"CA" } else { b".." };
                r[14..16].copy_from_slice(set);
            }
            r
        })
        .collect();
    let (got, e) = sort_control(dir.path(), &input, control, &["--record-size", "16"]);
    assert!(got == want, "seed {seed}: OUTFIL bytes differ: {e}");
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn no_match_without_nomatch_stops_naming_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.dat");
    // The third record's code, "TX", is not in the table.
    std::fs::write(&input, b"NYaaaaaaaa000001CAbbbbbbbb000002TXcccccccc000003").unwrap();
    let control = " OPTION COPY\n OUTREC BUILD=(1,2,CHANGE=(1,C'NY',C'1',C'CA',C'2'),3,8)\n";
    let ctl = dir.path().join("job.ctl");
    std::fs::write(&ctl, control).unwrap();
    let out = dir.path().join("out.dat");
    let o = run(oxsort()
        .args(["sort", "--record-size", "16", "--control"])
        .arg(&ctl)
        .arg(&input)
        .arg("-o")
        .arg(&out));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("record 3") && e.contains("C'TX'") && e.contains("ICE218A"), "{e}");
    assert!(!out.exists());
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
    // A mistake in the table names its line and column in the control file.
    std::fs::write(&ctl, " OPTION COPY\n OUTREC BUILD=(1,2,\n  CHANGE=(1,C'NYC',C'1'))\n").unwrap();
    let o = run(oxsort()
        .args(["sort", "--record-size", "16", "--control"])
        .arg(&ctl)
        .arg(&input)
        .arg("-o")
        .arg(&out));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("line 3, column 13") && e.contains("1 to 2 bytes"), "{e}");
    assert!(!out.exists());
}

#[test]
fn variable_records_keep_their_tail() {
    let dir = tempfile::tempdir().unwrap();
    let data: [&[u8]; 4] = [b"A:first record", b"B:x", b"C:", b"A:another one here"];
    let rdw = |d: &[u8]| [&((d.len() + 4) as u16).to_be_bytes()[..], &[0, 0], d].concat();
    let input = dir.path().join("in.dat");
    std::fs::write(&input, data.iter().map(|d| rdw(d)).collect::<Vec<_>>().concat()).unwrap();
    // The RDW, the code looked up (v = 3), '|', then the data from byte 7 (after "X:") on.
    let control = " OPTION COPY\n RECORD TYPE=V,LENGTH=100\n\
                   \x20OUTREC BUILD=(1,4,5,1,CHANGE=(3,C'A',C'one',C'B',C'two'),\n\
                   \x20 NOMATCH=(C'?'),C'|',7)\n";
    let want: Vec<u8> = data
        .iter()
        .flat_map(|d| {
            let name: &[u8] = match d[0] {
                b'A' => b"one",
                b'B' => b"two",
                _ => b"?  ",
            };
            rdw(&[name, b"|", &d[2..]].concat())
        })
        .collect();
    let (got, e) = sort_control(dir.path(), &input, control, &["-q"]);
    assert!(got == want, "{e}\n{got:?}\n{want:?}");
}

#[test]
fn gcsort_jobs_look_up_and_take_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let (inp, out) = (dir.path().join("in.sq"), dir.path().join("out.sq"));
    let recs: [&[u8; 8]; 4] = [b"02banana", b"01apple ", b"03cherry", b"09grape "];
    std::fs::write(&inp, recs.iter().flat_map(|r| r.to_vec()).collect::<Vec<u8>>()).unwrap();
    // Sorted on the code; the code becomes its name (v = 4, NOMATCH the code itself), then
    // GCSORT's `3,`: the bytes from 3 to the record's end (6 bytes). Output: 10 bytes.
    let take = dir.path().join("job.prm");
    std::fs::write(
        &take,
        format!(
            "USE {} ORG SQ RECORD F,8\nGIVE {} ORG SQ RECORD F,10\n\
             SORT FIELDS=(1,2,CH,A)\n\
             OUTREC FIELDS=(1,2,CHANGE=(4,C'01',C'one',C'02',C'two',\n\
             \x20                  C'03',X'F3'),NOMATCH=(1,2),3,)\n",
            inp.display(),
            out.display()
        ),
    )
    .unwrap();
    let o = run(oxsort().args(["gcsort", "-q", "TAKE"]).arg(&take));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut sorted = recs.to_vec();
    sorted.sort();
    let want: Vec<u8> = sorted
        .iter()
        .flat_map(|r| {
            let name: &[u8] = match &r[..2] {
                b"01" => b"one ",
                b"02" => b"two ",
                b"03" => &[0xF3, b' ', b' ', b' '],
                _ => b"09  ",
            };
            [name, &r[2..]].concat()
        })
        .collect();
    assert_eq!(std::fs::read(&out).unwrap(), want);
    // A bad table is named at its line and column in the TAKE file.
    std::fs::remove_file(&out).unwrap();
    std::fs::write(
        &take,
        format!(
            "USE {} ORG SQ RECORD F,8\nGIVE {} ORG SQ RECORD F,10\n\
             SORT FIELDS=(1,2,CH,A)\nOUTREC FIELDS=(1,2,CHANGE=(4,C'01'))\n",
            inp.display(),
            out.display()
        ),
    )
    .unwrap();
    let o = run(oxsort().args(["gcsort", "-q", "TAKE"]).arg(&take));
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("line 4") && e.contains("set value"), "{e}");
    assert!(!out.exists());
}

#[test]
fn a_jcl_step_looks_up_too() {
    let dir = tempfile::tempdir().unwrap();
    let (inp, out) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&inp, "B2xxA1yyC9zz").unwrap();
    let job = "//LOOKUP EXEC PGM=SORT\n\
               //SORTIN DD DSN=CODES.IN,DISP=SHR,RECFM=FB,LRECL=4\n\
               //SORTOUT DD DSN=CODES.OUT,DISP=(NEW,CATLG,DELETE)\n\
               //SYSIN DD *\n\
               \x20 SORT FIELDS=(1,1,CH,A)\n\
               \x20 OUTREC BUILD=(2,1,CHANGE=(5,C'1',C'one',C'2',C'two'),\n\
               \x20               NOMATCH=(3,2),C'|',1)\n\
               /*\n";
    let ctl = dir.path().join("job.jcl");
    std::fs::write(&ctl, job).unwrap();
    let o = run(oxsort()
        .args(["sort", "-q", "--control"])
        .arg(&ctl)
        .arg(format!("--dd=CODES.IN={}", inp.display()))
        .arg(format!("--dd=CODES.OUT={}", out.display())));
    assert!(o.status.success(), "{}", stderr(&o));
    // Sorted A1yy, B2xx, C9zz; '1' -> "one  ", '2' -> "two  ", '9' -> bytes 3-4 + 3 blanks;
    // then '|' and the record from byte 1 to its end.
    let want = "one  |A1yytwo  |B2xxzz   |C9zz";
    assert_eq!(String::from_utf8(std::fs::read(&out).unwrap()).unwrap(), want);
}

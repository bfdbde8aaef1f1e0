//! DFSORT `INREC` / `OUTREC` jobs run through `oxsort sort --control`, compared byte for byte
//! with a reference written here from DFSORT's definitions (not from oxsort's code):
//!
//! - `BUILD`/`FIELDS`: the items side by side, `c:` padding with blanks up to column c, `nX`
//!   blanks, `nZ` binary zeros, `C'..'`/`X'..'` constants;
//! - `OVERLAY`: the record, lengthened with blanks if an item ends past it, each item written
//!   in turn at its column (or after the item before it) onto the record the items before it
//!   left;
//! - `FINDREP`: a left-to-right scan; at each position the first `IN` constant that matches
//!   (wholly inside STARTPOS..ENDPOS) is replaced and the scan resumes after it; SHIFT=YES moves
//!   the rest, the record keeping its length (blanks added or bytes dropped, OVERRUN=TRUNC);
//! - `IFTHEN`: WHEN=INIT clauses on every record, then the first WHEN=(cond) clause that holds
//!   (HIT=NEXT goes on), WHEN=NONE when none held; records padded with blanks to the longest;
//! - INCLUDE before INREC, the sort keys on the INREC record (stable), OUTREC at the end.
//!
//! Every job runs in one pass (64 MiB) and in two (1 MiB, many runs).

use std::path::Path;
use std::process::Output;

mod common;
use common::{oxsort, run, stderr};
use oxsort_testkit::{leftovers, seed, Rng};

// Input records: 40 bytes.
//
//   1     5       9          14      17                   37
//  | code | BI(4) | PD(5)    | region | text (20)          | seq (4) |
const LEN: usize = 40;
const RECORDS: usize = 30_000;

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

fn records(rng: &mut Rng) -> Vec<Vec<u8>> {
    let codes = [b"AAAA", b"ABCD", b"ZZ Z", b"MMMM", b"B  A"];
    let regions = [b"EU ", b"US ", b"XX ", b"AS "];
    let words: [&[u8]; 6] = [b"AM", b"PM", b"LUNCH", b" ", b"APM", b"TEA"];
    (0..RECORDS)
        .map(|i| {
            let mut r = Vec::with_capacity(LEN);
            r.extend_from_slice(codes[rng.below(codes.len() as u64) as usize]);
            r.extend_from_slice(&((rng.below(2000)) as u32).to_be_bytes());
            r.extend_from_slice(&packed(rng.below(2001) as i64 - 1000, 5));
            r.extend_from_slice(regions[rng.below(regions.len() as u64) as usize]);
            let mut text = Vec::new();
            while text.len() < 20 {
                text.extend_from_slice(words[rng.below(words.len() as u64) as usize]);
            }
            text.truncate(20);
            r.extend_from_slice(&text);
            r.extend_from_slice(format!("{:04}", i % 10_000).as_bytes());
            assert_eq!(r.len(), LEN);
            r
        })
        .collect()
}

/// An item of a BUILD or OVERLAY list in the reference.
enum It<'a> {
    /// `p,m` (1-based position).
    F(usize, usize),
    /// A constant.
    K(&'a [u8]),
    /// `c:` before the next item.
    Col(usize),
}

fn build(rec: &[u8], items: &[It]) -> Vec<u8> {
    let mut out = Vec::new();
    for it in items {
        match it {
            It::F(p, m) => out.extend_from_slice(&rec[p - 1..p - 1 + m]),
            It::K(c) => out.extend_from_slice(c),
            It::Col(c) => {
                while out.len() < c - 1 {
                    out.push(b' ');
                }
            }
        }
    }
    out
}

fn overlay(rec: &[u8], items: &[It]) -> Vec<u8> {
    let mut out = rec.to_vec();
    let mut col = 1;
    for it in items {
        let bytes: Vec<u8> = match it {
            It::Col(c) => {
                col = *c;
                continue;
            }
            It::F(p, m) => out[p - 1..p - 1 + m].to_vec(),
            It::K(c) => c.to_vec(),
        };
        while out.len() < col - 1 + bytes.len() {
            out.push(b' ');
        }
        out[col - 1..col - 1 + bytes.len()].copy_from_slice(&bytes);
        col += bytes.len();
    }
    out
}

/// FINDREP with SHIFT=YES, OVERRUN=TRUNC, the record keeping its length.
fn findrep(rec: &[u8], pairs: &[(&[u8], &[u8])], start: usize, end: usize) -> Vec<u8> {
    let mut out = rec[..start - 1].to_vec();
    let mut i = start - 1;
    'scan: while i < end {
        for (find, rep) in pairs {
            if i + find.len() <= end && &rec[i..i + find.len()] == *find {
                out.extend_from_slice(rep);
                i += find.len();
                continue 'scan;
            }
        }
        out.push(rec[i]);
        i += 1;
    }
    out.extend_from_slice(&rec[i..]);
    out.resize(rec.len(), b' ');
    out
}

/// `v` with a comma between each group of three digits.
fn grouped(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn pad(mut r: Vec<u8>, len: usize) -> Vec<u8> {
    r.resize(len, b' ');
    r
}

/// Stable sort of `recs` by `key` (the decoded fields).
fn sorted<K: Ord>(mut recs: Vec<Vec<u8>>, key: impl Fn(&[u8]) -> K) -> Vec<u8> {
    recs.sort_by_key(|r| key(r));
    recs.concat()
}

struct Job {
    name: &'static str,
    control: &'static str,
    want: fn(&[Vec<u8>]) -> Vec<u8>,
}

fn jobs() -> Vec<Job> {
    vec![
        Job {
            name: "include, inrec build, sort on the reshaped record, outrec overlay",
            control: "* positions of INCLUDE are those read; of SORT, those INREC made\n\
                      \x20 INCLUDE COND=(14,3,CH,NE,C'XX ')\n\
                      \x20 INREC BUILD=(14,3,C'|',9,5,2X,5,4,30:1,4,\n\
                      \x20              37,4,X'00FF',2Z)\n\
                      \x20 SORT FIELDS=(1,3,CH,A,5,5,PD,D,12,4,BI,A)\n\
                      \x20 OUTREC OVERLAY=(4:C'#',16:30,4,C'*')\n",
            want: |recs| {
                let built: Vec<Vec<u8>> = recs
                    .iter()
                    .filter(|r| &r[13..16] != b"XX ")
                    .map(|r| {
                        build(
                            r,
                            &[
                                It::F(14, 3),
                                It::K(b"|"),
                                It::F(9, 5),
                                It::K(b"  "),
                                It::F(5, 4),
                                It::Col(30),
                                It::F(1, 4),
                                It::F(37, 4),
                                It::K(&[0x00, 0xFF]),
                                It::K(&[0, 0]),
                            ],
                        )
                    })
                    .collect();
                let key = |r: &[u8]| {
                    let bi = u32::from_be_bytes(r[11..15].try_into().unwrap());
                    (r[..3].to_vec(), std::cmp::Reverse(unpacked(&r[4..9])), bi)
                };
                let s = sorted(built, key);
                s.chunks(41)
                    .flat_map(|r| {
                        overlay(
                            r,
                            &[It::Col(4), It::K(b"#"), It::Col(16), It::F(30, 4), It::K(b"*")],
                        )
                    })
                    .collect()
            },
        },
        Job {
            name: "inrec ifthen (init findrep, hit=next, build, none), sort",
            control: " INREC IFTHEN=(WHEN=INIT,FINDREP=(INOUT=(C'AM',C'MORNING',C'PM',C'P'),\n\
                      \x20       STARTPOS=17,ENDPOS=36,OVERRUN=TRUNC)),\n\
                      \x20 IFTHEN=(WHEN=(14,3,CH,EQ,C'EU '),OVERLAY=(41:C'EUROPE'),HIT=NEXT),\n\
                      \x20 IFTHEN=(WHEN=(5,4,BI,GT,1000,AND,9,5,PD,LT,0),BUILD=(1,40,C'BIG')),\n\
                      \x20 IFTHEN=(WHEN=NONE,OVERLAY=(41:C'none'))\n\
                      \x20SORT FIELDS=(41,6,CH,A,1,4,CH,D)   remarks after the operands\n",
            want: |recs| {
                let out: Vec<Vec<u8>> = recs
                    .iter()
                    .map(|r| {
                        let mut r = findrep(r, &[(b"AM", b"MORNING"), (b"PM", b"P")], 17, 36);
                        let mut hit = false;
                        if &r[13..16] == b"EU " {
                            r = overlay(&r, &[It::Col(41), It::K(b"EUROPE")]);
                            hit = true;
                        }
                        let bi = u32::from_be_bytes(r[4..8].try_into().unwrap());
                        if bi > 1000 && unpacked(&r[8..13]) < 0 {
                            r = build(&r, &[It::F(1, 40), It::K(b"BIG")]);
                            hit = true;
                        }
                        if !hit {
                            r = overlay(&r, &[It::Col(41), It::K(b"none")]);
                        }
                        pad(r, 46)
                    })
                    .collect();
                sorted(out, |r| (r[40..46].to_vec(), std::cmp::Reverse(r[..4].to_vec())))
            },
        },
        Job {
            name: "copy with outrec ifthen and ifoutlen",
            control: " SORT FIELDS=COPY\n\
                      \x20OUTREC IFTHEN=(WHEN=(9,5,PD,LT,-500),BUILD=(C'NEG',9,5,3C'-')),\n\
                      \x20  IFTHEN=(WHEN=NONE,BUILD=(C'POS',1,8,X'C1C2')),IFOUTLEN=12\n",
            want: |recs| {
                recs.iter()
                    .flat_map(|r| {
                        let b = if unpacked(&r[8..13]) < -500 {
                            build(r, &[It::K(b"NEG"), It::F(9, 5), It::K(b"---")])
                        } else {
                            build(r, &[It::K(b"POS"), It::F(1, 8), It::K(&[0xC1, 0xC2])])
                        };
                        let mut b = pad(b, 12);
                        b.truncate(12);
                        b
                    })
                    .collect()
            },
        },
        Job {
            name: "outrec numeric conversions",
            control: " SORT FIELDS=(5,4,BI,A)\n\
                      \x20OUTREC BUILD=(1,4,C'|',5,4,BI,TO=ZD,C'|',9,5,PD,TO=FS,LENGTH=8,\n\
                      \x20  C'|',9,5,PD,ZD,C'|',5,4,BI,TO=PD)\n",
            want: |recs| {
                let conv = |r: &[u8]| -> Vec<u8> {
                    let bi = u32::from_be_bytes(r[4..8].try_into().unwrap()) as i64;
                    let pd = unpacked(&r[8..13]);
                    let mut out = r[..4].to_vec();
                    out.push(b'|');
                    // BI 4 bytes: up to 10 digits; ZD in ASCII digits.
                    out.extend_from_slice(format!("{bi:010}").as_bytes());
                    out.push(b'|');
                    // FS: right-aligned, blanks, a leading minus.
                    out.extend_from_slice(format!("{pd:>8}").as_bytes());
                    out.push(b'|');
                    // PD 5 bytes: up to 9 digits; a negative ZD has zone 7 in its last byte.
                    let mut zd = format!("{:09}", pd.abs()).into_bytes();
                    if pd < 0 {
                        zd[8] = 0x70 | (zd[8] & 0x0F);
                    }
                    out.extend_from_slice(&zd);
                    out.push(b'|');
                    // 10 digits packed: 6 bytes.
                    out.extend_from_slice(&packed(bi, 6));
                    out
                };
                let s = sorted(recs.to_vec(), |r| u32::from_be_bytes(r[4..8].try_into().unwrap()));
                s.chunks(LEN).flat_map(conv).collect()
            },
        },
        Job {
            name: "outrec numeric edits, masks, seqnum, hex and tran",
            control: " SORT FIELDS=(5,4,BI,A)\n\
                      \x20OUTREC BUILD=(1,4,5,4,BI,M12,C'|',9,5,PD,M4,C'|',\n\
                      \x20  9,5,PD,EDIT=(SIIIT.TT),SIGNS=(+,-),C'|',37,4,ZD,M11,C'|',\n\
                      \x20  SEQNUM,5,ZD,START=10,INCR=5,C'|',14,3,HEX,C'|',17,5,TRAN=UTOL)\n",
            want: |recs| {
                let s = sorted(recs.to_vec(), |r| u32::from_be_bytes(r[4..8].try_into().unwrap()));
                s.chunks(LEN)
                    .enumerate()
                    .flat_map(|(i, r)| {
                        let bi = u32::from_be_bytes(r[4..8].try_into().unwrap()) as i64;
                        let pd = unpacked(&r[8..13]);
                        let sign = |v: i64, plus: &str| if v < 0 { "-" } else { plus }.to_string();
                        let mut out = r[..4].to_vec();
                        // M12, BI 4 bytes = 10 digits: 10 + 1 + [9/3] = 14 bytes, thousands
                        // separated, the sign (blank or '-') just before the first digit.
                        let m12 = format!("{}{}", sign(bi, " "), grouped(bi.unsigned_abs()));
                        out.extend_from_slice(format!("{m12:>14}|").as_bytes());
                        // M4, PD 5 bytes = 9 digits: 9 + 1 + [9/3] = 13 bytes, two decimals,
                        // '+' or '-'.
                        let a = pd.unsigned_abs();
                        let m4 = format!("{}{}.{:02}", sign(pd, "+"), grouped(a / 100), a % 100);
                        out.extend_from_slice(format!("{m4:>13}|").as_bytes());
                        // SIIIT.TT: 6 digits, no grouping, 8 bytes.
                        let e =
                            format!("{}{}.{:02}", sign(pd, "+"), (a % 1_000_000) / 100, a % 100);
                        out.extend_from_slice(format!("{e:>8}|").as_bytes());
                        // M11 on a 4-digit ZD: the 4 digits.
                        out.extend_from_slice(&r[36..40]);
                        // SEQNUM: 10, 15, 20... in output order; a number past 5 digits
                        // keeps its low 5 (DFSORT's sequence numbers wrap).
                        out.extend_from_slice(
                            format!("|{:05}|", (10 + 5 * i) % 100_000).as_bytes(),
                        );
                        for b in &r[13..16] {
                            out.extend_from_slice(format!("{b:02X}").as_bytes());
                        }
                        out.push(b'|');
                        out.extend(r[16..21].iter().map(|b| b.to_ascii_lowercase()));
                        out
                    })
                    .collect()
            },
        },
        Job {
            name: "inrec seqnum (restart) in input order, parse in ifthen and with overlay",
            control: " INCLUDE COND=(14,3,CH,NE,C'XX ')\n\
                      \x20INREC IFTHEN=(WHEN=INIT,OVERLAY=(41:SEQNUM,6,ZD)),\n\
                      \x20  IFTHEN=(WHEN=INIT,OVERLAY=(47:SEQNUM,3,ZD,RESTART=(14,3))),\n\
                      \x20  IFTHEN=(WHEN=(1,4,CH,EQ,C'AAAA'),\n\
                      \x20    PARSE=(%01=(STARTAT=C'P',FIXLEN=3)),OVERLAY=(50:%01)),\n\
                      \x20  IFTHEN=(WHEN=NONE,OVERLAY=(50:C'---'))\n\
                      \x20SORT FIELDS=(14,3,CH,A,5,4,BI,D)\n\
                      \x20OUTREC PARSE=(%02=(STARTAFT=C'A',ENDBEFR=C'M',FIXLEN=4)),\n\
                      \x20  OVERLAY=(17:%02)\n",
            want: |recs| {
                // DFSORT's PARSE: a cursor from the record's start; a field starts at (or
                // after) its constant, blank when it is missing; it ends before ENDBEFR's
                // constant or at the record's end, cut or padded to FIXLEN.
                let parsed = |r: &[u8], start: &[u8], after: bool, end: Option<u8>, len: usize| {
                    let found = r.windows(start.len()).position(|w| w == start);
                    let mut f = match found {
                        None => Vec::new(),
                        Some(i) => {
                            let from = if after { i + start.len() } else { i };
                            let to = end
                                .and_then(|e| r[from..].iter().position(|&b| b == e))
                                .map_or(r.len(), |j| from + j);
                            r[from..to].to_vec()
                        }
                    };
                    f.truncate(len);
                    pad(f, len)
                };
                // INREC numbers the records INCLUDE keeps, in input order, before the sort.
                let mut prev_region: Option<Vec<u8>> = None;
                let mut restart = 0;
                let numbered: Vec<Vec<u8>> = recs
                    .iter()
                    .filter(|r| &r[13..16] != b"XX ")
                    .enumerate()
                    .map(|(i, r)| {
                        if prev_region.as_deref() != Some(&r[13..16]) {
                            restart = 0;
                            prev_region = Some(r[13..16].to_vec());
                        }
                        restart += 1;
                        let mut out = r.clone();
                        out.extend_from_slice(
                            format!("{:06}{:03}", i + 1, restart % 1000).as_bytes(),
                        );
                        if &r[..4] == b"AAAA" {
                            let f = parsed(&out, b"P", false, None, 3);
                            out.extend_from_slice(&f);
                        } else {
                            out.extend_from_slice(b"---");
                        }
                        out
                    })
                    .collect();
                let mut s = numbered;
                s.sort_by(|a, b| a[13..16].cmp(&b[13..16]).then_with(|| b[4..8].cmp(&a[4..8])));
                s.into_iter()
                    .flat_map(|mut r| {
                        let f = parsed(&r, b"A", true, Some(b'M'), 4);
                        r[16..20].copy_from_slice(&f);
                        r
                    })
                    .collect()
            },
        },
        Job {
            name: "include ss, altseq and an aq key",
            control: " INCLUDE COND=(17,20,SS,EQ,C'LUNCH',OR,1,2,SS,EQ,C'ZZ,MM')\n\
                      \x20SORT FIELDS=(1,4,AQ,A)\n\
                      \x20ALTSEQ CODE=(5A00,4D7F)\n",
            want: |recs| {
                // 'Z' (5A) collates as 00, 'M' (4D) as 7F: ZZ Z first, MMMM last.
                let kept: Vec<Vec<u8>> = recs
                    .iter()
                    .filter(|r| {
                        let text = String::from_utf8_lossy(&r[16..36]);
                        text.contains("LUNCH")
                            || "ZZ,MM".contains(&*String::from_utf8_lossy(&r[..2]))
                    })
                    .cloned()
                    .collect();
                let tr = |b: u8| match b {
                    0x5A => 0x00,
                    0x4D => 0x7F,
                    b => b,
                };
                sorted(kept, |r| r[..4].iter().map(|&b| tr(b)).collect::<Vec<u8>>())
            },
        },
        Job {
            name: "inrec findrep shortening, sort, outrec fields",
            control: " INREC FINDREP=(IN=(C'LUNCH',C'TEA'),OUT=C'',STARTPOS=17,DO=2)\n\
                      \x20SORT FIELDS=(17,20,CH,A)\n\
                      \x20OUTREC FIELDS=(17,20,C';',1,4)\n",
            want: |recs| {
                let out: Vec<Vec<u8>> = recs
                    .iter()
                    .map(|r| {
                        // DO=2: at most two replacements.
                        let mut out = r[..16].to_vec();
                        let (mut i, mut done) = (16, 0);
                        while i < LEN {
                            if done < 2 && r[i..].starts_with(b"LUNCH") {
                                i += 5;
                                done += 1;
                            } else if done < 2 && r[i..].starts_with(b"TEA") {
                                i += 3;
                                done += 1;
                            } else {
                                out.push(r[i]);
                                i += 1;
                            }
                        }
                        pad(out, LEN)
                    })
                    .collect();
                let s = sorted(out, |r| r[16..36].to_vec());
                s.chunks(LEN)
                    .flat_map(|r| build(r, &[It::F(17, 20), It::K(b";"), It::F(1, 4)]))
                    .collect()
            },
        },
    ]
}

/// Sorts the 40-byte records of `input` with the statements of `ctl` within `memory` (with
/// `--stats`) into `dir/out.dat`; the run and the output's bytes (empty when it failed).
fn run_job(dir: &Path, input: &Path, ctl: &Path, memory: &str) -> (Output, Vec<u8>) {
    let out = dir.join("out.dat");
    let o = run(oxsort()
        .arg("sort")
        .arg(input)
        .arg("-o")
        .arg(&out)
        .args(["--record-size", "40", "--memory", memory, "--stats", "--control"])
        .arg(ctl));
    let got = std::fs::read(&out).unwrap_or_default();
    (o, got)
}

#[test]
fn reformatting_jobs_match_the_reference_in_one_and_two_passes() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let recs = records(&mut rng);
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs.concat()).unwrap();
    for job in jobs() {
        let want = (job.want)(&recs);
        let ctl = dir.path().join("job.ctl");
        std::fs::write(&ctl, job.control).unwrap();
        // A copy streams through its loads at any memory: one pass, no runs.
        let copy = job.control.contains("FIELDS=COPY");
        for (memory, passes) in
            [("64M", "1 pass,"), ("1M", if copy { "1 pass," } else { "2 passes" })]
        {
            let (o, got) = run_job(dir.path(), &input, &ctl, memory);
            assert!(o.status.success(), "{}: {}", job.name, stderr(&o));
            assert!(stderr(&o).contains(passes), "{}: {}", job.name, stderr(&o));
            if copy && memory == "1M" {
                assert!(stderr(&o).contains("  copy "), "{}: {}", job.name, stderr(&o));
            }
            assert_eq!(got.len(), want.len(), "{} (seed {seed}, --memory {memory})", job.name);
            assert!(got == want, "{} (seed {seed}, --memory {memory}): bytes differ", job.name);
        }
    }
    assert!(leftovers(dir.path()).is_empty());
}

/// A one-pass sort past the small-input path maps its input's pages: an INREC that shrinks the
/// records writes them apart from those pages, the file left as it was.
#[test]
fn inrec_over_a_mapped_input_matches_the_reference_and_leaves_the_input_whole() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    // 12 MB: past the small-input path, within one load.
    let recs: Vec<Vec<u8>> = (0..10).flat_map(|_| records(&mut rng)).collect();
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs.concat()).unwrap();
    let shrinking = jobs()
        .into_iter()
        .filter(|j| j.control.contains("INREC BUILD") && !j.control.contains("FIELDS=COPY"));
    let mut ran = 0;
    for job in shrinking {
        let want = (job.want)(&recs);
        let ctl = dir.path().join("job.ctl");
        std::fs::write(&ctl, job.control).unwrap();
        let (o, got) = run_job(dir.path(), &input, &ctl, "256M");
        assert!(o.status.success(), "{}: {}", job.name, stderr(&o));
        assert!(stderr(&o).contains("1 pass,"), "{}: {}", job.name, stderr(&o));
        assert!(got == want, "{} (seed {seed}): bytes differ", job.name);
        assert!(std::fs::read(&input).unwrap() == recs.concat(), "{}: input changed", job.name);
        ran += 1;
    }
    assert!(ran > 0, "no job reshapes records with INREC BUILD");
    assert!(leftovers(dir.path()).is_empty());
}

/// Runs a control text that must fail; returns stderr.
fn control_err(dir: &Path, input: &Path, control: &str) -> String {
    let ctl = dir.join("bad.ctl");
    std::fs::write(&ctl, control).unwrap();
    let out = dir.join("never.dat");
    let o: Output = run(oxsort()
        .arg("sort")
        .arg(input)
        .arg("-o")
        .arg(&out)
        .args(["--record-size", "40", "--control"])
        .arg(&ctl));
    assert_eq!(o.status.code(), Some(1), "{control}: {}", stderr(&o));
    assert!(!out.exists());
    stderr(&o)
}

#[test]
fn bad_and_unsupported_statements_are_named_with_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.dat");
    std::fs::write(&input, records(&mut Rng::new(7)).concat()).unwrap();
    let cases: &[(&str, &[&str])] = &[
        (
            " SORT FIELDS=(1,4,CH,A)\n MODS E15=(X,100)\n",
            &["line 2, column 2", "MODS is not supported", "INREC, OUTREC"],
        ),
        (
            " INREC BUILD=(1,4,ZD,EDIT=(TSTT))\n",
            &["line 1, column 22", "S (a sign) may only be the first or the last", "'EDIT'"],
        ),
        (" INREC BUILD=(1,4,CH,TO=ZD)\n", &["line 1, column 19", "HEX or TRAN=", "'CH'"]),
        (" INREC BUILD=(1,4,PD,M30)\n", &["line 1, column 22", "M0 to M26", "'M30'"]),
        (" INCLUDE COND=(1,4,SS,GE,C'A')\n", &["line 1, column 23", "EQ or NE", "'GE'"]),
        (" ALTSEQ CODE=(ZZ00)\n SORT FIELDS=(1,4,AQ,A)\n", &["line 1, column 15", "ffxx"]),
        (
            " INREC BUILD=(1,9,BI,TO=ZD)\n",
            &["line 1, column 17", "BI field to convert must be 1 to 8"],
        ),
        (
            " INREC IFTHEN=(WHEN=INIT,PARSE=(%01=(FIXLEN=2)),FINDREP=(IN=C'A',OUT=C'B'))\n",
            &["line 1, column 49", "expected BUILD=, FIELDS=, OVERLAY="],
        ),
        (
            " INREC IFTHEN=(WHEN=INIT,PARSE=(%01=(FIXLEN=2)),BUILD=(%01)),\n\
             \x20 IFTHEN=(WHEN=NONE,BUILD=(%01))\n",
            &["line 2, column 28", "%nn field is not defined"],
        ),
        (" INREC BUILD=(1,10,5:C'x')\n", &["line 1, column 20", "column 5 would overlap"]),
        (
            " OUTREC PARSE=(%01=(ENDBEFR=C',')),BUILD=(%01)\n",
            &["line 1, column 16", "a %nn field needs FIXLEN=m", "'%01'"],
        ),
        (" OUTREC PUSH=(1:1,4)\n", &["line 1, column 9", "PARSE=, BUILD=, FIELDS=, OVERLAY="]),
        (" INREC BUILD=(1,4),OVERLAY=(1:C'x')\n", &["line 1, column 20", "only one of BUILD"]),
        (
            " INREC IFTHEN=(WHEN=NONE,BUILD=(1,4)),\n   IFTHEN=(WHEN=INIT,BUILD=(1,4))\n",
            &["line 2", "in this order"],
        ),
        (" INREC FINDREP=(IN=C'A')\n", &["line 1, column 16", "IN= needs OUT="]),
        (" INREC BUILD=(1,4\n", &["expected ',' and another item, or ')'"]),
        (
            " INREC BUILD=(38,4)\n SORT FIELDS=(1,4,CH,A)\n",
            &["INREC item 1 ends at byte 41", "40-byte"],
        ),
        (" INREC BUILD=(1,4)\n SORT FIELDS=(1,5,CH,A)\n", &["ends at byte 5", "4-byte"]),
    ];
    for (control, wants) in cases {
        let err = control_err(dir.path(), &input, control);
        for w in *wants {
            assert!(err.contains(w), "{control:?}: expected {w:?} in: {err}");
        }
    }
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn a_findrep_overrun_names_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.dat");
    let mut data = vec![b' '; 80];
    data[40..45].copy_from_slice(b"AAAAA");
    data[75..80].copy_from_slice(b"ZZZZZ");
    std::fs::write(&input, &data).unwrap();
    let err = control_err(dir.path(), &input, " INREC FINDREP=(IN=C'A',OUT=C'AA')\n");
    assert!(err.contains("record 2") && err.contains("FINDREP shifted non-blank bytes"), "{err}");
}

/// SUM FIELDS=(p,m,f,...) as DFSORT defines it: within each group of equal keys (in sorted,
/// stable order) the fields of each record are added into the group's first record; when a sum
/// would not fit its field, the sum so far is written unchanged and the record that overflowed
/// starts a new sum.
fn sum_reference(sorted: &[Vec<u8>], key: impl Fn(&[u8]) -> Vec<u8>) -> (Vec<Vec<u8>>, u64) {
    // Fields of the INREC record below: BI 5-6, PD 7-8, ZD (ASCII digits) 9-12, FI 13-16.
    let decode = |r: &[u8]| -> [i64; 4] {
        let zd: i64 = std::str::from_utf8(&r[8..12]).unwrap().parse().unwrap();
        [
            u16::from_be_bytes([r[4], r[5]]) as i64,
            unpacked(&r[6..8]),
            zd,
            i32::from_be_bytes(r[12..16].try_into().unwrap()) as i64,
        ]
    };
    let fits = |v: [i64; 4]| {
        (0..=0xFFFF).contains(&v[0])
            && v[1].abs() <= 999
            && (0..=9999).contains(&v[2])
            && (i32::MIN as i64..=i32::MAX as i64).contains(&v[3])
    };
    let encode = |base: &[u8], v: [i64; 4]| -> Vec<u8> {
        let mut r = base.to_vec();
        r[4..6].copy_from_slice(&(v[0] as u16).to_be_bytes());
        r[6..8].copy_from_slice(&packed(v[1], 2));
        r[8..12].copy_from_slice(format!("{:04}", v[2]).as_bytes());
        r[12..16].copy_from_slice(&(v[3] as i32).to_be_bytes());
        r
    };
    let mut out = Vec::new();
    let mut overflows = 0;
    // The group's first record, its sums, and whether anything was added to it (a record
    // nothing was added to is written as it was).
    let mut acc: Option<(Vec<u8>, [i64; 4], bool)> = None;
    let written =
        |a: &[u8], s: [i64; 4], added: bool| if added { encode(a, s) } else { a.to_vec() };
    for r in sorted {
        let v = decode(r);
        if let Some((a, s, added)) = &acc {
            if key(a) == key(r) {
                let t = [s[0] + v[0], s[1] + v[1], s[2] + v[2], s[3] + v[3]];
                if fits(t) {
                    acc = Some((a.clone(), t, true));
                    continue;
                }
                overflows += 1;
            }
            out.push(written(a, *s, *added));
        }
        acc = Some((r.clone(), v, false));
    }
    if let Some((a, s, added)) = acc {
        out.push(written(&a, s, added));
    }
    (out, overflows)
}

#[test]
fn sum_fields_match_the_reference_with_overflows_in_one_and_two_passes() {
    let seed = seed();
    let dir = tempfile::tempdir().unwrap();
    let recs = records(&mut Rng::new(seed));
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs.concat()).unwrap();
    // INREC makes 16-byte records: code | BI(2) | PD(2: the last 3 digits and sign of the
    // 5-byte PD) | ZD(4: the sequence) | FI(4); two small fields overflow often.
    let control = " INREC BUILD=(1,4,7,2,12,2,37,4,5,4)\n\
                   \x20SORT FIELDS=(1,1,CH,A)\n\
                   \x20SUM FIELDS=(5,2,BI,7,2,PD,9,4,ZD,13,4,FI)\n\
                   \x20OUTREC FIELDS=(1,1,C':',5,12)\n";
    let built: Vec<Vec<u8>> = recs
        .iter()
        .map(|r| build(r, &[It::F(1, 4), It::F(7, 2), It::F(12, 2), It::F(37, 4), It::F(5, 4)]))
        .collect();
    let mut by_key = built.clone();
    by_key.sort_by_key(|r| r[0]);
    let (summed, overflows) = sum_reference(&by_key, |r| r[..1].to_vec());
    assert!(overflows > 10, "the job should overflow ({overflows})");
    let want: Vec<u8> =
        summed.iter().flat_map(|r| build(r, &[It::F(1, 1), It::K(b":"), It::F(5, 12)])).collect();
    let ctl = dir.path().join("sum.ctl");
    std::fs::write(&ctl, control).unwrap();
    for (memory, passes) in [("64M", "1 pass,"), ("1M", "2 passes")] {
        let out = dir.path().join("out.dat");
        let o = run(oxsort()
            .arg("sort")
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .args(["--record-size", "40", "--memory", memory, "--stats", "--control"])
            .arg(&ctl));
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        assert!(err.contains(passes), "{err}");
        let note = format!(
            "SUM FIELDS: {} records added into the first of their key, {overflows} left unsummed",
            RECORDS - summed.len()
        );
        assert!(err.contains(&note), "expected {note:?} in {err}");
        let got = std::fs::read(&out).unwrap();
        assert_eq!(got.len(), want.len(), "seed {seed}, --memory {memory}");
        if let Some(i) = (0..want.len() / 14).find(|i| got[i * 14..][..14] != want[i * 14..][..14])
        {
            panic!(
                "seed {seed}, --memory {memory}: record {} is {:02X?}, expected {:02X?}",
                i + 1,
                &got[i * 14..][..14],
                &want[i * 14..][..14]
            );
        }
    }
    // Invalid packed data in a summed field names the sorted record, as DFSORT's S0C7 does.
    let mut bad = recs.clone();
    bad[0][12] = 0xAC;
    std::fs::write(&input, bad.concat()).unwrap();
    let err = control_err(dir.path(), &input, control);
    assert!(err.contains("SUM FIELDS") && err.contains("invalid packed decimal"), "{err}");
}

#[test]
fn a_jcl_step_runs_its_sysin_statements_and_hints_are_noted() {
    let dir = tempfile::tempdir().unwrap();
    let recs = records(&mut Rng::new(11));
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs.concat()).unwrap();
    let jcl = "//SORTJOB  JOB (ACCT),'SORT'\n\
               //STEP1    EXEC PGM=SORT\n\
               //SORTIN   DD DSN=MY.INPUT,DISP=SHR\n\
               //SORTOUT  DD DSN=MY.OUTPUT,DISP=(NEW,CATLG)\n\
               //SYSIN    DD *\n\
               \x20 OPTION DYNALLOC=(SYSDA,3),MAINSIZE=MAX\n\
               \x20 INREC BUILD=(37,4,1,4)\n\
               \x20 SORT FIELDS=(5,4,CH,A)\n\
               /*\n\
               //SYSOUT   DD SYSOUT=*\n";
    let ctl = dir.path().join("job.jcl");
    std::fs::write(&ctl, jcl).unwrap();
    let out = dir.path().join("out.dat");
    let o = run(oxsort()
        .arg("sort")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .args(["--record-size", "40", "--control"])
        .arg(&ctl));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("OPTION DYNALLOC (line 6) is accepted and ignored"), "{err}");
    assert!(err.contains("OPTION MAINSIZE (line 6) is accepted and ignored"), "{err}");
    let built: Vec<Vec<u8>> = recs.iter().map(|r| build(r, &[It::F(37, 4), It::F(1, 4)])).collect();
    assert!(std::fs::read(&out).unwrap() == sorted(built, |r| r[4..8].to_vec()));
    // Errors keep the file's line numbers; a SKIPREC value is read, not misread.
    let err = control_err(dir.path(), &input, &jcl.replace("MAINSIZE=MAX", "SKIPREC=ALL"));
    assert!(err.contains("line 6, column 37") && err.contains("'ALL'"), "{err}");
    let err = control_err(dir.path(), &input, "//STEP1 EXEC PGM=SORT\n SORT FIELDS=COPY\n");
    assert!(err.contains("no //SYSIN DD *"), "{err}");
}

#[test]
fn a_bad_key_after_include_and_inrec_names_the_record_as_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut recs = records(&mut Rng::new(5));
    // Record 101 (1-based) is kept by INCLUDE and has invalid packed data in the key.
    recs[100][13..16].copy_from_slice(b"EU ");
    recs[100][8] = 0xAB;
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs[..200].concat()).unwrap();
    let err = control_err(
        dir.path(),
        &input,
        " INCLUDE COND=(14,3,CH,EQ,C'EU ')\n INREC BUILD=(9,5,1,4)\n SORT FIELDS=(1,5,PD,A)\n",
    );
    assert!(err.contains("record 101:") && err.contains("invalid packed decimal"), "{err}");
}

#[test]
fn invalid_decimal_data_in_an_edit_names_the_record_as_dfsort_s0c7_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut recs = records(&mut Rng::new(3));
    // Record 4 (1-based) has a bad digit nibble in its PD field.
    recs[3][8] = 0xAB;
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs[..50].concat()).unwrap();
    let err =
        control_err(dir.path(), &input, " INREC BUILD=(1,4,9,5,PD,M11)\n SORT FIELDS=(1,4,CH,A)\n");
    assert!(
        err.contains("record 4:") && err.contains("INREC item 2") && err.contains("S0C7"),
        "{err}"
    );
    assert!(err.contains("byte 9"), "{err}");
}

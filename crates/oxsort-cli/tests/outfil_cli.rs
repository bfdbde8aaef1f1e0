//! DFSORT `OUTFIL` jobs run through `oxsort sort --control ... --dd ...`, every output compared
//! byte for byte with a reference written here from DFSORT's definitions (not from oxsort's
//! code):
//!
//! - the records OUTFIL sees are the sorted records (stable on the key), numbered from 1;
//! - each OUTFIL statement considers the records STARTREC..ENDREC, takes those its INCLUDE
//!   holds for (its OMIT does not hold for; all without one), reshapes them (BUILD/OVERLAY),
//!   and writes them to every DD it names; SPLIT deals one record to each DD in turn,
//!   SPLITBY=n blocks of n in turn, SPLIT1R=n blocks of n once with the rest to the last;
//! - a SAVE statement takes the records that no other statement took;
//! - FILES=01 names the DD SORTOF01; a statement without FNAMES/FILES writes SORTOUT;
//! - HEADER1 lines come first, TRAILER1 lines last, blank-padded to the data records' length;
//!   COUNT is the number of data records of that output, 8 characters, leading zeros blank;
//!   COUNT=(TO=ZD,LENGTH=n) is n digits with leading zeros;
//! - COUNT=(Mn|EDIT=(pattern),LENGTH=n) edits the count as a 15-digit number (M11: all its
//!   digits; a pattern's I digits blank the leading zeros and the separators before the first
//!   significant digit, the leading sign floating just before it), LENGTH=n keeping its n
//!   rightmost characters;
//! - without REMOVECC, every record of a report output starts with an ANSI carriage-control
//!   byte: '1' (new page) on the first HEADER1 line and the first TRAILER1 line, ' ' on every
//!   other line and data record;
//! - a SORTOUT that no OUTFIL names gets the sorted records without OUTFIL processing.
//!
//! Every job runs in one pass (64 MiB) and in two (1 MiB, many runs); every failure leaves no
//! output and no temp file.

use std::path::{Path, PathBuf};

mod common;
use common::{oxsort, run, stderr};
use oxsort_testkit::{leftovers, seed, Rng};

// Input records: 30 bytes.
//
//   1        7    9         14                 30
//  | key (6) | ty | ZD (5)  | text (17)         |
const LEN: usize = 30;
const RECORDS: usize = 20_000;

fn records(rng: &mut Rng) -> Vec<Vec<u8>> {
    let types: [&[u8]; 3] = [b"AA", b"BB", b"CC"];
    (0..RECORDS)
        .map(|i| {
            let mut r = Vec::with_capacity(LEN);
            // Few distinct keys: many equal keys test the stable order.
            for _ in 0..6 {
                r.push(b"ABCDEFGH"[rng.below(8) as usize]);
            }
            r.extend_from_slice(types[rng.below(3) as usize]);
            r.extend_from_slice(format!("{:05}", rng.below(100_000)).as_bytes());
            r.extend_from_slice(format!("record {:010}", i).as_bytes());
            assert_eq!(r.len(), LEN);
            r
        })
        .collect()
}

fn sorted(recs: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut v = recs.to_vec();
    v.sort_by(|a, b| a[..6].cmp(&b[..6])); // stable
    v
}

fn amount(r: &[u8]) -> u64 {
    std::str::from_utf8(&r[8..13]).unwrap().parse().unwrap()
}

/// Blank-pads a report line to `len` bytes.
fn line(text: &str, len: usize) -> Vec<u8> {
    let mut l = text.as_bytes().to_vec();
    assert!(l.len() <= len);
    l.resize(len, b' ');
    l
}

/// What each DD of the main job gets, from the definitions above.
fn reference(sorted: &[Vec<u8>]) -> Vec<(&'static str, Vec<u8>)> {
    let mut outa = Vec::new();
    let (mut b1, mut b2) = (Vec::new(), Vec::new());
    let (mut of01, mut of02) = (Vec::new(), Vec::new());
    let (mut lo1, mut lo2, mut lo3) = (Vec::new(), Vec::new(), Vec::new());
    let mut rest_data: Vec<Vec<u8>> = Vec::new();
    let mut rpt_data: Vec<Vec<u8>> = Vec::new();
    let (mut kb, mut k01, mut klo) = (0usize, 0usize, 0usize);
    for (i, r) in sorted.iter().enumerate() {
        let n = i + 1;
        let mut taken = false;
        // OUTFIL FNAMES=OUTA,INCLUDE=(7,2,CH,EQ,C'AA'),BUILD=(1,6,C'|',9,5)
        if &r[6..8] == b"AA" {
            taken = true;
            outa.extend_from_slice(&r[..6]);
            outa.push(b'|');
            outa.extend_from_slice(&r[8..13]);
        }
        // OUTFIL FNAMES=(OUTB1,OUTB2),INCLUDE=(7,2,CH,EQ,C'BB'),SPLIT
        if &r[6..8] == b"BB" {
            taken = true;
            if kb % 2 == 0 { &mut b1 } else { &mut b2 }.extend_from_slice(r);
            kb += 1;
        }
        // OUTFIL FILES=(01,02),STARTREC=5,ENDREC=40,SPLITBY=4
        if (5..=40).contains(&n) {
            taken = true;
            if (k01 / 4) % 2 == 0 { &mut of01 } else { &mut of02 }.extend_from_slice(r);
            k01 += 1;
        }
        // OUTFIL FNAMES=(LO1,LO2,LO3),OMIT=(9,5,ZD,GT,+50000),OVERLAY=(25:C'LOW'),SPLIT1R=1000
        if amount(r) <= 50_000 {
            taken = true;
            let mut o = r.clone();
            o[24..27].copy_from_slice(b"LOW");
            match klo / 1000 {
                0 => &mut lo1,
                1 => &mut lo2,
                _ => &mut lo3,
            }
            .extend_from_slice(&o);
            klo += 1;
        }
        // OUTFIL FNAMES=RPT,INCLUDE=(7,2,CH,EQ,C'CC'),BUILD=(1,6,2X,9,5,10X),HEADER1=...
        if &r[6..8] == b"CC" {
            taken = true;
            rpt_data.push([&r[..6], b"  ", &r[8..13], &[b' '; 10]].concat());
        }
        // OUTFIL FNAMES=REST,SAVE,REMOVECC,HEADER1=(...),TRAILER1=(...)
        if !taken {
            rest_data.push(r.clone());
        }
    }
    let mut rest = line("REST OF THE RECORDS", LEN);
    rest.extend_from_slice(&line("", LEN)); // 2/ : one blank line
    rest.extend_from_slice(&line("     KEY", LEN));
    rest.extend(rest_data.iter().flatten());
    let count = rest_data.len();
    rest.extend_from_slice(&line(&format!("COUNT {count:>8}   {count:06}"), LEN));
    // The report with carriage control: 23-byte lines after the control byte.
    let n = rpt_data.len();
    assert!((1000..100_000).contains(&n), "the test's edit reference assumes 4-5 digits");
    let mut rpt = [b"1".to_vec(), line("CC RECORDS", 23)].concat();
    for d in &rpt_data {
        rpt.push(b' ');
        rpt.extend_from_slice(d);
    }
    let edited = format!("+{},{:03}", n / 1000, n % 1000);
    rpt.push(b'1');
    rpt.extend_from_slice(&line(&format!("N={n:07} {edited:>7}"), 23));
    rpt.push(b' ');
    rpt.extend_from_slice(&line("END", 23));
    vec![
        ("RPT", rpt),
        ("OUTA", outa),
        ("OUTB1", b1),
        ("OUTB2", b2),
        ("SORTOF01", of01),
        ("SORTOF02", of02),
        ("LO1", lo1),
        ("LO2", lo2),
        ("LO3", lo3),
        ("REST", rest),
    ]
}

const JOB: &str = "\
* several outputs from one pass
 SORT FIELDS=(1,6,CH,A)
 RECORD TYPE=F,LENGTH=30
 OUTFIL FNAMES=OUTA,INCLUDE=(7,2,CH,EQ,C'AA'),BUILD=(1,6,C'|',9,5)
 OUTFIL FNAMES=(OUTB1,OUTB2),INCLUDE=(7,2,CH,EQ,C'BB'),SPLIT
 OUTFIL FILES=(01,02),STARTREC=5,ENDREC=40,SPLITBY=4
 OUTFIL FNAMES=(LO1,LO2,LO3),OMIT=(9,5,ZD,GT,+50000),
        OVERLAY=(25:C'LOW'),SPLIT1R=1000
 OUTFIL FNAMES=RPT,INCLUDE=(7,2,CH,EQ,C'CC'),BUILD=(1,6,2X,9,5,10X),
        HEADER1=('CC RECORDS'),
        TRAILER1=('N=',COUNT=(M11,LENGTH=7),X,COUNT=(EDIT=(SII,IIT),SIGNS=(+)),/,'END')
 OUTFIL FNAMES=REST,SAVE,REMOVECC,
        HEADER1=('REST OF THE RECORDS',2/,6:'KEY'),
        TRAILER1=(C'COUNT ',COUNT,3X,COUNT=(TO=ZD,LENGTH=6))
";

/// `--dd NAME=DIR/name.out` for every DD of `names`.
fn dd_args(dir: &Path, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .flat_map(|n| ["--dd".to_string(), format!("{n}={}", dir.join(out_name(n)).display())])
        .collect()
}

fn out_name(dd: &str) -> String {
    format!("{}.out", dd.to_ascii_lowercase())
}

#[test]
fn outfil_outputs_match_the_reference_in_one_and_two_passes() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let recs = records(&mut rng);
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs.concat()).unwrap();
    let ctl = dir.path().join("job.ctl");
    std::fs::write(&ctl, JOB).unwrap();
    let want = reference(&sorted(&recs));
    let names: Vec<&str> = want.iter().map(|(n, _)| *n).collect();
    for (memory, passes) in [("64M", "1 pass,"), ("1M", "2 passes")] {
        let outs = dir.path().join(format!("out-{memory}"));
        std::fs::create_dir(&outs).unwrap();
        let o = run(oxsort()
            .arg("sort")
            .args(["--memory", memory, "--stats", "--control"])
            .arg(&ctl)
            .arg("--dd")
            .arg(format!("SORTIN={}", input.display()))
            .args(dd_args(&outs, &names)));
        assert!(o.status.success(), "--memory {memory}: {}", stderr(&o));
        assert!(stderr(&o).contains(passes), "--memory {memory}: {}", stderr(&o));
        for (dd, bytes) in &want {
            let got = std::fs::read(outs.join(out_name(dd))).unwrap();
            assert_eq!(got.len(), bytes.len(), "{dd} (seed {seed}, --memory {memory})");
            assert!(got == *bytes, "{dd} (seed {seed}, --memory {memory}): bytes differ");
        }
        // Only the OUTFIL outputs were written: no SORTOUT appeared anywhere.
        let mut present: Vec<String> = std::fs::read_dir(&outs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        present.sort();
        let mut expected: Vec<String> = names.iter().map(|n| out_name(n)).collect();
        expected.sort();
        assert_eq!(present, expected);
        assert!(leftovers(&outs).is_empty());
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn sortout_is_the_default_outfil_and_a_plain_sortout_gets_the_sorted_records() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let recs = records(&mut rng);
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs.concat()).unwrap();
    let sorted = sorted(&recs);
    let ctl = dir.path().join("job.ctl");
    for memory in ["64M", "1M"] {
        // An OUTFIL without FNAMES writes SORTOUT (-o).
        std::fs::write(
            &ctl,
            " SORT FIELDS=(1,6,CH,A)\n OUTFIL INCLUDE=(7,2,CH,EQ,C'CC'),BUILD=(9,5,1,6)\n",
        )
        .unwrap();
        let out = dir.path().join("sorted.out");
        let o = run(oxsort()
            .arg("sort")
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .args(["--record-size", "30", "--memory", memory, "--control"])
            .arg(&ctl));
        assert!(o.status.success(), "{}", stderr(&o));
        let want: Vec<u8> = sorted
            .iter()
            .filter(|r| &r[6..8] == b"CC")
            .flat_map(|r| [&r[8..13], &r[..6]].concat())
            .collect();
        assert!(std::fs::read(&out).unwrap() == want, "seed {seed}, --memory {memory}");

        // A SORTOUT no OUTFIL names is written as without OUTFIL, besides the OUTFIL output.
        std::fs::write(
            &ctl,
            " SORT FIELDS=(1,6,CH,A)\n OUTFIL FNAMES=AA,INCLUDE=(7,2,CH,EQ,C'AA')\n",
        )
        .unwrap();
        let aa = dir.path().join("aa.out");
        let o = run(oxsort()
            .arg("sort")
            .args(["--record-size", "30", "--memory", memory, "--control"])
            .arg(&ctl)
            .arg("--dd")
            .arg(format!("SORTIN={}", input.display()))
            .arg("--dd")
            .arg(format!("SORTOUT={}", out.display()))
            .arg("--dd")
            .arg(format!("AA={}", aa.display())));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(std::fs::read(&out).unwrap() == sorted.concat(), "seed {seed}");
        let want: Vec<u8> =
            sorted.iter().filter(|r| &r[6..8] == b"AA").flatten().copied().collect();
        assert!(std::fs::read(&aa).unwrap() == want, "seed {seed}, --memory {memory}");
    }
    assert!(leftovers(dir.path()).is_empty());
}

/// Runs the main job with `extra` arguments and DD mappings; returns the run.
fn run_job(
    dir: &Path,
    input: &Path,
    ctl: &Path,
    dds: &[(String, PathBuf)],
) -> std::process::Output {
    let mut cmd = oxsort();
    cmd.arg("sort").args(["--memory", "1M", "--control"]).arg(ctl);
    cmd.arg("--dd").arg(format!("SORTIN={}", input.display()));
    for (n, p) in dds {
        cmd.arg("--dd").arg(format!("{n}={}", p.display()));
    }
    cmd.current_dir(dir);
    run(&mut cmd)
}

#[test]
fn a_failed_job_leaves_no_output_and_no_temp_file() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let recs = records(&mut rng);
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs.concat()).unwrap();
    let ctl = dir.path().join("job.ctl");
    std::fs::write(&ctl, JOB).unwrap();
    let names =
        ["RPT", "OUTA", "OUTB1", "OUTB2", "SORTOF01", "SORTOF02", "LO1", "LO2", "LO3", "REST"];
    let outs = dir.path().join("outs");
    std::fs::create_dir(&outs).unwrap();
    let mapped = |bad: &str, to: PathBuf| -> Vec<(String, PathBuf)> {
        names
            .iter()
            .map(|n| (n.to_string(), if *n == bad { to.clone() } else { outs.join(out_name(n)) }))
            .collect()
    };
    let nothing_left = |what: &str| {
        let left: Vec<_> =
            std::fs::read_dir(&outs).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{what}: left {left:?}");
        assert!(leftovers(dir.path()).is_empty(), "{what}");
    };

    // An output whose directory does not exist: refused before anything is written.
    let o = run_job(dir.path(), &input, &ctl, &mapped("LO2", dir.path().join("no/such/dir/lo2")));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no/such/dir/lo2"), "{}", stderr(&o));
    nothing_left("missing directory");

    // A disk that fills up while the outputs are written (/dev/full: every write fails with
    // ENOSPC): the outputs written so far are removed too.
    let o = run_job(dir.path(), &input, &ctl, &mapped("REST", PathBuf::from("/dev/full")));
    assert!(!o.status.success());
    assert!(stderr(&o).to_lowercase().contains("no space"), "{}", stderr(&o));
    nothing_left("ENOSPC");

    // A record an OUTFIL condition cannot read (invalid zoned decimal data in the middle of
    // the sorted records): a failure after some records were written.
    let mut bad = recs.clone();
    bad[RECORDS / 2][8..13].copy_from_slice(&[b'1', b'2', 0xFA, b'4', b'5']);
    let bad_input = dir.path().join("bad.dat");
    std::fs::write(&bad_input, bad.concat()).unwrap();
    let o = run_job(dir.path(), &bad_input, &ctl, &mapped("", PathBuf::new()));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("OUTFIL"), "{}", stderr(&o));
    nothing_left("bad data");

    // A DD that is not mapped: named in the error, nothing written.
    let mut some = mapped("", PathBuf::new());
    some.retain(|(n, _)| n != "SORTOF02");
    let o = run_job(dir.path(), &input, &ctl, &some);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--dd SORTOF02=PATH"), "{}", stderr(&o));
    nothing_left("unmapped DD");
}

#[test]
fn unsupported_outfil_operands_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.dat");
    std::fs::write(&input, records(&mut Rng::new(1)).concat()).unwrap();
    let ctl = dir.path().join("job.ctl");
    for (control, expect) in [
        (" OUTFIL FNAMES=A,HEADER2=('X')\n", "HEADER2 is not supported"),
        (" OUTFIL FNAMES=A,TRAILER1=(EDCOUNT)\n", "EDCOUNT is an operand of ICETOOL"),
        (" OUTFIL FNAMES=A,TRAILER1=(COUNT=(M11,TO=ZD))\n", "either converted"),
        (" OUTFIL FNAMES=A,TRAILER1=(COUNT=(M27))\n", "M0 to M26"),
        (
            " OUTFIL FNAMES=A,INCLUDE=(7,2,CH,EQ,C'AA'),SAVE\n",
            "only one of INCLUDE=, OMIT= and SAVE",
        ),
        (" OUTFIL FNAMES=A,REMOVECC,HEADER1=(25:'TOO LONG')\n", "longer than the 30-byte records"),
    ] {
        std::fs::write(&ctl, format!(" SORT FIELDS=(1,6,CH,A)\n{control}")).unwrap();
        let o = run(oxsort()
            .arg("sort")
            .arg(&input)
            .args(["--record-size", "30", "--control"])
            .arg(&ctl)
            .arg("--dd")
            .arg(format!("A={}", dir.path().join("a.out").display())));
        assert!(!o.status.success(), "{control}");
        assert!(stderr(&o).contains(expect), "{control}: {}", stderr(&o));
        assert!(!dir.path().join("a.out").exists());
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn skiprec_stopaft_and_mainsize_as_dfsort_orders_them() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let recs = records(&mut rng);
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs.concat()).unwrap();
    let ctl = dir.path().join("job.ctl");
    let out = dir.path().join("out.dat");
    // SKIPREC first, then INCLUDE, then STOPAFT counts the records INCLUDE accepted.
    let aa: Vec<usize> = (100..RECORDS).filter(|&i| &recs[i][6..8] == b"AA").collect();
    let last = aa[499];
    let filtered = (100..=last).map(|i| recs[i].clone()).filter(|r| &r[6..8] == b"AA");
    let plain = recs[100..800].to_vec();
    for (cond, want, unread) in [
        (
            " INCLUDE COND=(7,2,CH,EQ,C'AA')\n",
            sorted(&filtered.collect::<Vec<_>>()),
            RECORDS - 1 - last,
        ),
        ("", sorted(&plain), RECORDS - 800),
    ] {
        let stopaft = if cond.is_empty() { 700 } else { 500 };
        std::fs::write(
            &ctl,
            format!(
                " SORT FIELDS=(1,6,CH,A)\n OPTION SKIPREC=100,STOPAFT={stopaft},MAINSIZE=1M\n \
                 RECORD TYPE=F,LENGTH=30\n{cond}"
            ),
        )
        .unwrap();
        let o =
            run(oxsort().arg("sort").arg(&input).arg("-o").arg(&out).arg("--control").arg(&ctl));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(std::fs::read(&out).unwrap() == want.concat(), "seed {seed}, {cond}");
        let err = stderr(&o);
        assert!(
            err.contains(&format!("100 skipped (SKIPREC), {unread} not read (STOPAFT)")),
            "{err}"
        );
        assert!(err.contains("MAINSIZE=1048576 bytes: the memory budget"), "{err}");
    }
    // The plan shows MAINSIZE=1M as the budget.
    let o = run(oxsort().arg("explain").arg(&input).arg("-o").arg(&out).arg("--control").arg(&ctl));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("1.00 MiB budget"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn skiprec_and_stopaft_on_standard_input_and_on_lines() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let recs = records(&mut rng);
    let input = dir.path().join("in.dat");
    std::fs::write(&input, recs.concat()).unwrap();
    let lines = dir.path().join("in.txt");
    std::fs::write(&lines, recs.iter().flat_map(|r| [&r[..], b"\n"].concat()).collect::<Vec<u8>>())
        .unwrap();
    let ctl = dir.path().join("job.ctl");
    let out = dir.path().join("out.dat");
    // DFSORT's order: SKIPREC drops the first records read, INCLUDE selects, STOPAFT ends the
    // input after the n-th record INCLUDE accepted.
    for (cond, stopaft) in [(" INCLUDE COND=(7,2,CH,EQ,C'AA')\n", 500), ("", 700)] {
        let kept: Vec<Vec<u8>> = recs[100..]
            .iter()
            .filter(|r| cond.is_empty() || &r[6..8] == b"AA")
            .take(stopaft)
            .cloned()
            .collect();
        let want = sorted(&kept);
        std::fs::write(
            &ctl,
            format!(" SORT FIELDS=(1,6,CH,A)\n OPTION SKIPREC=100,STOPAFT={stopaft}\n{cond}"),
        )
        .unwrap();
        for (from, flags) in [(&input, &["--record-size", "30"][..]), (&lines, &["--lines"][..])] {
            for stdin in [true, false] {
                let mut cmd = oxsort();
                cmd.arg("sort").args(flags).arg("-o").arg(&out).arg("--control").arg(&ctl);
                if stdin {
                    cmd.stdin(std::fs::File::open(from).unwrap());
                } else {
                    cmd.arg(from);
                }
                let o = run(&mut cmd);
                let what = format!("{cond:?} {flags:?} stdin {stdin} (seed {seed})");
                assert!(o.status.success(), "{what}: {}", stderr(&o));
                let got = std::fs::read(&out).unwrap();
                let want: Vec<u8> = if flags[0] == "--lines" {
                    want.iter().flat_map(|r| [&r[..], b"\n"].concat()).collect()
                } else {
                    want.concat()
                };
                assert!(got == want, "{what}: output differs");
                assert!(stderr(&o).contains("100 skipped (SKIPREC)"), "{what}: {}", stderr(&o));
            }
        }
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn explain_lists_each_outfil_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.dat");
    std::fs::write(&input, records(&mut Rng::new(2)).concat()).unwrap();
    let ctl = dir.path().join("job.ctl");
    std::fs::write(&ctl, JOB).unwrap();
    let names =
        ["RPT", "OUTA", "OUTB1", "OUTB2", "SORTOF01", "SORTOF02", "LO1", "LO2", "LO3", "REST"];
    let o = run(oxsort()
        .arg("explain")
        .arg("--control")
        .arg(&ctl)
        .arg("--dd")
        .arg(format!("SORTIN={}", input.display()))
        .args(dd_args(dir.path(), &names)));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", stderr(&o));
    for n in names {
        assert!(text.contains(&format!("outfil       {n} -> ")), "{n}: {text}");
    }
    assert!(text.contains("OUTA -> ") && text.contains("12-byte records"), "{text}");
    // The report output's records carry their carriage-control byte: 23 + 1 bytes.
    assert!(text.contains("RPT -> ") && text.contains("24-byte records"), "{text}");
    assert!(text.contains("SPLIT1R=1000"), "{text}");
    assert!(text.contains("output       none besides the OUTFIL outputs"), "{text}");
    // Nothing is written by explain.
    assert!(!dir.path().join("outa.out").exists());
}

//! `SUM ...,XSUM` from every door: `oxsort sort --control` with `--dd SORTXSUM=...`, a JCL
//! step's `//SORTXSUM DD DSN=...`, and `oxsort gcsort` with an `XSUM file ORG ... RECORD ...`
//! statement. The records SUM deletes go to SORTXSUM as SUM saw them, in sorted order; a record
//! whose sum would overflow stays in SORTOUT; a failed job leaves neither file.
//!
//! Expected outputs come from a naive reference here: a stable sort by the key, then a walk
//! over each group of equal keys adding the 4-digit zoned field while its sum fits 9999.

mod common;
use common::{oxsort, run, stderr};

use std::path::Path;

/// Record length: key (1-4), a 4-digit zoned number (5-8), the input position (9-12).
const LEN: usize = 12;

/// `n` records: keys from a few, values mostly small and sometimes large (sums overflow).
fn records(n: usize) -> Vec<String> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    (0..n)
        .map(|i| {
            let key = ["AAAA", "BBBB", "CCCC", "DDDD", "EEEE"][next(5) as usize];
            let v = if next(4) == 0 { 5000 + next(5000) } else { next(100) };
            format!("{key}{v:04}{i:04}")
        })
        .collect()
}

/// The reference: (SORTOUT, SORTXSUM) of `SUM FIELDS=(5,4,ZD),XSUM` (`summed`) or
/// `SUM FIELDS=NONE,XSUM`.
fn reference(recs: &[String], summed: bool) -> (Vec<String>, Vec<String>) {
    let mut sorted: Vec<&String> = recs.iter().collect();
    sorted.sort_by(|a, b| a[..4].cmp(&b[..4]));
    let (mut out, mut xsum): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    let value = |r: &str| r[4..8].parse::<u32>().unwrap();
    let mut group: Option<(String, u32)> = None;
    let close = |g: (String, u32), out: &mut Vec<String>| {
        let (first, sum) = g;
        out.push(if summed { format!("{}{sum:04}{}", &first[..4], &first[8..]) } else { first });
    };
    for r in sorted {
        if let Some((first, sum)) = &mut group {
            if first[..4] == r[..4] && (!summed || *sum + value(r) <= 9999) {
                *sum += value(r);
                xsum.push(r.clone());
                continue;
            }
            close(group.take().unwrap(), &mut out);
        }
        group = Some((r.clone(), value(r)));
    }
    if let Some(g) = group {
        close(g, &mut out);
    }
    (out, xsum)
}

fn write(path: &Path, recs: &[String]) {
    std::fs::write(path, recs.concat()).unwrap();
}

fn read(path: &Path) -> Vec<String> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(bytes.len() % LEN, 0, "{}", path.display());
    bytes.chunks(LEN).map(|r| String::from_utf8(r.to_vec()).unwrap()).collect()
}

/// What is in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

const CONTROL_FIELDS: &str =
    " RECORD TYPE=F,LENGTH=12\n SORT FIELDS=(1,4,CH,A)\n SUM FIELDS=(5,4,ZD),XSUM\n";
const CONTROL_NONE: &str =
    " RECORD TYPE=F,LENGTH=12\n SORT FIELDS=(1,4,CH,A)\n SUM FIELDS=NONE,XSUM\n";

#[test]
fn control_door_writes_sortxsum_with_fields_and_with_none() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recs = records(3000);
    write(&d.join("in.dat"), &recs);
    for (ctl, summed) in [(CONTROL_FIELDS, true), (CONTROL_NONE, false)] {
        let (want_out, want_xsum) = reference(&recs, summed);
        assert!(want_xsum.len() > 2000, "groups of several duplicates");
        if summed {
            let alone = recs.len() - want_xsum.len();
            assert!(alone > 5, "some sums overflow: {alone} records stay");
        }
        std::fs::write(d.join("job.ctl"), ctl).unwrap();
        for passes in ["one", "two"] {
            let o = run(oxsort()
                .current_dir(d)
                .args(["sort", "-q", "--passes", passes, "--control", "job.ctl"])
                .args(["--dd", "SORTIN=in.dat", "--dd", "SORTOUT=out.dat"])
                .args(["--dd", "SORTXSUM=dups.dat"]));
            assert!(o.status.success(), "{ctl} {passes}: {}", stderr(&o));
            assert_eq!(read(&d.join("out.dat")), want_out, "{ctl} {passes}: SORTOUT");
            assert_eq!(read(&d.join("dups.dat")), want_xsum, "{ctl} {passes}: SORTXSUM");
        }
    }
    assert_eq!(listing(d), ["dups.dat", "in.dat", "job.ctl", "out.dat"]);
}

#[test]
fn a_jcl_step_names_sortxsum_by_its_data_set() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recs = records(500);
    write(&d.join("in.dat"), &recs);
    let step = |sortxsum: &str| {
        format!(
            "//DEDUP EXEC PGM=SORT\n//SYSOUT DD SYSOUT=*\n\
             //SORTIN DD DSN=MY.INPUT,DISP=SHR,DCB=(RECFM=FB,LRECL=12)\n\
             //SORTOUT DD DSN=MY.OUTPUT,DISP=(NEW,CATLG)\n{sortxsum}\
             //SYSIN DD *\n  SORT FIELDS=(1,4,CH,A)\n  SUM FIELDS=NONE,XSUM\n/*\n"
        )
    };
    std::fs::write(d.join("job.jcl"), step("//SORTXSUM DD DSN=MY.DUPS,DISP=(NEW,CATLG)\n"))
        .unwrap();
    let dds = ["--dd=MY.INPUT=in.dat", "--dd=MY.OUTPUT=out.dat", "--dd=MY.DUPS=dups.dat"];
    let o = run(oxsort().current_dir(d).args(["sort", "-q", "--control", "job.jcl"]).args(dds));
    assert!(o.status.success(), "{}", stderr(&o));
    let (want_out, want_xsum) = reference(&recs, false);
    assert_eq!(read(&d.join("out.dat")), want_out);
    assert_eq!(read(&d.join("dups.dat")), want_xsum);
    std::fs::remove_file(d.join("out.dat")).unwrap();
    std::fs::remove_file(d.join("dups.dat")).unwrap();
    // No //SORTXSUM DD: the message names the statement and the DD missing.
    std::fs::write(d.join("job.jcl"), step("")).unwrap();
    let o =
        run(oxsort().current_dir(d).args(["sort", "-q", "--control", "job.jcl"]).args(&dds[..2]));
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains(
            "job.jcl: SUM (line 7) with XSUM writes the records it deletes to the DD SORTXSUM: \
             give --dd SORTXSUM=PATH (or a //SORTXSUM DD statement in the JCL)"
        ),
        "{e}"
    );
    assert_eq!(listing(d), ["in.dat", "job.jcl"]);
}

#[test]
fn a_failed_job_leaves_neither_file_and_sortxsum_needs_xsum() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut recs = records(2000);
    // Invalid zoned data in the summed field of the record that sorts last: both files had
    // records written when the sort fails.
    recs.push("ZZZZ12X40000".to_string());
    write(&d.join("in.dat"), &recs);
    std::fs::write(d.join("job.ctl"), CONTROL_FIELDS).unwrap();
    let o = run(oxsort().current_dir(d).args(["sort", "-q", "--control", "job.ctl"]).args([
        "--dd",
        "SORTIN=in.dat",
        "--dd",
        "SORTOUT=out.dat",
        "--dd",
        "SORTXSUM=dups.dat",
    ]));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("SUM"), "{}", stderr(&o));
    assert_eq!(listing(d), ["in.dat", "job.ctl"], "nothing written is left");
    // SORTXSUM given to a job whose SUM has no XSUM: named, nothing written.
    std::fs::write(d.join("job.ctl"), " SORT FIELDS=(1,4,CH,A)\n SUM FIELDS=NONE\n").unwrap();
    let o = run(oxsort()
        .current_dir(d)
        .args(["sort", "-q", "--record-size", "12", "--control", "job.ctl"])
        .args(["--dd", "SORTIN=in.dat", "--dd", "SORTOUT=out.dat", "--dd", "SORTXSUM=dups.dat"]));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("this job has no DD SORTXSUM"), "{}", stderr(&o));
    assert_eq!(listing(d), ["in.dat", "job.ctl"]);
}

#[test]
fn gcsort_writes_the_xsum_file_as_its_statement_describes_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recs = records(800);
    // Line sequential: one record a line; the XSUM file too, written as GCSORT writes lines.
    std::fs::write(d.join("in.txt"), recs.iter().map(|r| format!("{r}\n")).collect::<String>())
        .unwrap();
    std::fs::write(
        d.join("job.prm"),
        " USE dd_in ORG LS RECORD F,12\n GIVE dd_out ORG LS RECORD F,12\n\
         \x20SORT FIELDS=(1,4,CH,A)\n SUM FIELDS=(5,4,ZD),XSUM\n\
         \x20XSUM dd_dups ORG LS RECORD F,12\n",
    )
    .unwrap();
    let o = run(oxsort()
        .current_dir(d)
        .args(["gcsort", "take", "job.prm"])
        .env("dd_in", "in.txt")
        .env("dd_out", "out.txt")
        .env("dd_dups", "dups.txt"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (want_out, want_xsum) = reference(&recs, true);
    let lines = |v: &[String]| v.iter().map(|r| format!("{r}\n")).collect::<String>();
    assert_eq!(std::fs::read_to_string(d.join("out.txt")).unwrap(), lines(&want_out));
    assert_eq!(std::fs::read_to_string(d.join("dups.txt")).unwrap(), lines(&want_xsum));
    // Fixed records, SUM FIELDS=NONE.
    write(&d.join("in.dat"), &recs);
    let o = run(oxsort().current_dir(d).args([
        "gcsort",
        "SORT FIELDS=(1,4,CH,A) SUM FIELDS=NONE,XSUM USE in.dat ORG SQ RECORD F,12",
        "GIVE out.dat ORG SQ RECORD F,12 XSUM dups.dat ORG SQ RECORD F,12",
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (want_out, want_xsum) = reference(&recs, false);
    assert_eq!(read(&d.join("out.dat")), want_out);
    assert_eq!(read(&d.join("dups.dat")), want_xsum);
    // An XSUM file without XSUM on SUM: the statement named, nothing written.
    std::fs::write(
        d.join("bad.prm"),
        " USE in.dat ORG SQ RECORD F,12\n GIVE new.dat ORG SQ RECORD F,12\n\
         \x20SORT FIELDS=(1,4,CH,A)\n SUM FIELDS=NONE\n   XSUM new-dups.dat ORG SQ RECORD F,12\n",
    )
    .unwrap();
    let o = run(oxsort().current_dir(d).args(["gcsort", "take", "bad.prm"]));
    assert_eq!(o.status.code(), Some(16), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("bad.prm: line 5, column 4: the XSUM statement names the file"), "{e}");
    assert!(!d.join("new.dat").exists() && !d.join("new-dups.dat").exists());
    // The GIVE file cannot be written (its name is a directory): the XSUM file goes too.
    std::fs::create_dir(d.join("adir")).unwrap();
    let o = run(oxsort().current_dir(d).args([
        "gcsort",
        "SORT FIELDS=(1,4,CH,A) SUM FIELDS=NONE,XSUM USE in.dat ORG SQ RECORD F,12",
        "GIVE adir ORG LS RECORD F,12 XSUM late-dups.dat ORG SQ RECORD F,12",
    ]));
    assert_eq!(o.status.code(), Some(16), "{}", stderr(&o));
    assert!(stderr(&o).contains("to adir"), "{}", stderr(&o));
    assert!(!d.join("late-dups.dat").exists(), "the XSUM file outlived the GIVE file");
    let left: Vec<String> = listing(d).into_iter().filter(|n| n.starts_with('.')).collect();
    assert!(left.is_empty(), "staged files left: {left:?}");
}

#[test]
fn a_joinkeys_main_task_writes_sortxsum() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // F1: 8-byte records (key 1-4, a tag); F2: the keys that exist, once each.
    let f1: Vec<String> = records(600).iter().map(|r| format!("{}{}", &r[..4], &r[8..])).collect();
    let f2 = ["AAAAf2", "CCCCf2", "EEEEf2"];
    write(&d.join("f1.dat"), &f1);
    std::fs::write(d.join("f2.dat"), f2.concat()).unwrap();
    std::fs::write(
        d.join("join.ctl"),
        "  JOINKEYS FILE=F1,FIELDS=(1,4,A)\n  JOINKEYS FILE=F2,FIELDS=(1,4,A)\n  \
         REFORMAT FIELDS=(F1:1,8,F2:5,2)\n  SORT FIELDS=(1,4,CH,A)\n  SUM FIELDS=NONE,XSUM\n",
    )
    .unwrap();
    let o = run(oxsort()
        .current_dir(d)
        .args(["sort", "-q", "--control", "join.ctl", "--lrecl", "SORTJNF1=8"])
        .args(["--lrecl", "SORTJNF2=6", "--dd", "SORTJNF1=f1.dat", "--dd", "SORTJNF2=f2.dat"])
        .args(["--dd", "SORTOUT=out.dat", "--dd", "SORTXSUM=dups.dat"]));
    assert!(o.status.success(), "{}", stderr(&o));
    // By hand: the paired F1 records (keys A, C, E) with "f2" appended, in key order and, within
    // a key, F1's order (the join keeps it); the first of each key stays, the rest go to XSUM.
    let mut joined: Vec<String> = f1
        .iter()
        .filter(|r| ["AAAA", "CCCC", "EEEE"].contains(&&r[..4]))
        .map(|r| format!("{r}f2"))
        .collect();
    joined.sort_by(|a, b| a[..4].cmp(&b[..4]));
    let (mut want_out, mut want_xsum) = (Vec::new(), Vec::new());
    for (i, r) in joined.iter().enumerate() {
        let first = i == 0 || joined[i - 1][..4] != r[..4];
        if first { &mut want_out } else { &mut want_xsum }.push(r.clone());
    }
    let read10 = |p: &Path| {
        let b = std::fs::read(p).unwrap();
        b.chunks(10).map(|r| String::from_utf8(r.to_vec()).unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(read10(&d.join("out.dat")), want_out);
    assert_eq!(read10(&d.join("dups.dat")), want_xsum);
}

/// `//X DD DUMMY` in a shell script: every output of a job, SORTOUT, SORTXSUM and an OUTFIL
/// DD, may be `/dev/null`, which has no length to cut and no name to rename to; the outputs
/// that are files are still written whole.
#[test]
fn outputs_may_be_dev_null() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recs = records(500);
    write(&d.join("in.dat"), &recs);
    let (want_out, want_xsum) = reference(&recs, true);
    let with_outfil = format!("{CONTROL_FIELDS} OUTFIL FNAMES=COPY\n");
    std::fs::write(d.join("job.ctl"), with_outfil).unwrap();
    let null = "/dev/null";
    let jobs: [[&str; 3]; 3] = [
        [null, "dups.dat", "copy.dat"],
        ["out.dat", null, "copy.dat"],
        ["out.dat", "dups.dat", null],
    ];
    for [out, dups, copy] in jobs {
        for passes in ["one", "two"] {
            for f in ["out.dat", "dups.dat", "copy.dat"] {
                let _ = std::fs::remove_file(d.join(f));
            }
            let o = run(oxsort()
                .current_dir(d)
                .args(["sort", "-q", "--passes", passes, "--control", "job.ctl"])
                .args(["--dd", "SORTIN=in.dat", "--dd", &format!("SORTOUT={out}")])
                .args(["--dd", &format!("SORTXSUM={dups}"), "--dd", &format!("COPY={copy}")]));
            assert!(o.status.success(), "{out} {dups} {copy} {passes}: {}", stderr(&o));
            if out != null {
                assert_eq!(read(&d.join(out)), want_out, "{passes}: SORTOUT");
            }
            if dups != null {
                assert_eq!(read(&d.join(dups)), want_xsum, "{passes}: SORTXSUM");
            }
            if copy != null {
                assert_eq!(read(&d.join(copy)), want_out, "{passes}: the OUTFIL copy");
            }
        }
    }
    // The last job's files, and no temporary left by any job.
    assert_eq!(listing(d), ["dups.dat", "in.dat", "job.ctl", "out.dat"]);
}

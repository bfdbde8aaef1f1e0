//! GCSORT's habits that its own test table relies on: a JOINKEYS job with no SORT or MERGE
//! statement writes the joined records in the join's order (GCSORT copies them), and the
//! OUTFIL outputs of a job over line sequential files are written as lines (`OUTREC BUILD=`
//! within OUTFIL is its `OUTREC=`), with nothing left behind in the job's directories.
//!
//! The expected outputs are worked out by hand from the join's rule (records in key order,
//! each F1 record with each F2 record of its key, `?` as `B`, `1` or `2`, the missing side
//! blank) and compared line by line up to trailing blanks, and byte for byte where the rule
//! fixes the bytes.

mod common;
use common::{oxsort, run, stderr};

use std::path::Path;

fn write_lines(path: &Path, lines: &[&str]) {
    std::fs::write(path, lines.iter().map(|l| format!("{l}\r\n")).collect::<String>()).unwrap();
}

/// The files in `d`, sorted.
fn listing(d: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn a_join_without_sort_copies_and_its_outfil_outputs_are_lines() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Each side out of key order: the join sorts them on the key (1-2).
    write_lines(&d.join("f1.txt"), &["35 A1 three", "10 A1 one", "20 A1 two"]);
    write_lines(&d.join("f2.txt"), &["30 B2 tres", "20 B2 dos", "15 B2 uno"]);
    std::fs::write(
        d.join("job.prm"),
        " joinkeys files=f1,fields=(1,2,a)\n\
         \x20joinkeys files=f2,fields=(1,2,a)\n\
         \x20reformat fields=(?,f1:1,9,f2:1,9)\n\
         \x20join unpaired,f1,f2\n\
         \x20use f1.txt org ls record f,12\n\
         \x20use f2.txt org ls record f,12\n\
         \x20give out.txt org ls record f,19\n\
         \x20outfil fnames=f1only.txt,include=(1,1,ch,eq,c'1'),outrec build=(2,9,c'|')\n\
         \x20outfil fnames=f2only.txt,include=(1,1,ch,eq,c'2'),outrec build=(11,9,5x)\n",
    )
    .unwrap();
    let o = run(oxsort().current_dir(d).args(["gcsort", "-q", "take", "job.prm"]));
    assert!(o.status.success(), "{}", stderr(&o));
    // By hand, in key order 10 15 20 30 35: 10 and 35 only in F1, 15 and 30 only in F2.
    let blank9 = " ".repeat(9);
    let want = [
        "110 A1 one".to_string(),
        format!("2{blank9}15 B2 uno"),
        "B20 A1 two20 B2 dos".to_string(),
        format!("2{blank9}30 B2 tre"),
        "135 A1 thr".to_string(),
    ];
    let got = std::fs::read_to_string(d.join("out.txt")).unwrap();
    assert_eq!(got, want.iter().map(|l| format!("{l}\n")).collect::<String>());
    // OUTFIL outputs: lines without their trailing blanks, not 10- or 14-byte records.
    assert_eq!(std::fs::read_to_string(d.join("f1only.txt")).unwrap(), "10 A1 one|\n35 A1 thr|\n");
    assert_eq!(std::fs::read_to_string(d.join("f2only.txt")).unwrap(), "15 B2 uno\n30 B2 tre\n");
    assert_eq!(listing(d), ["f1.txt", "f1only.txt", "f2.txt", "f2only.txt", "job.prm", "out.txt"]);
}

#[test]
fn a_join_with_sort_keeps_its_order_and_dfsort_still_asks_for_a_main_task() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_lines(&d.join("f1.txt"), &["10 z", "20 a", "30 m"]);
    write_lines(&d.join("f2.txt"), &["10 q", "20 r", "30 s"]);
    let job = " joinkeys files=f1,fields=(1,2,a)\n joinkeys files=f2,fields=(1,2,a)\n\
               \x20reformat fields=(f1:1,4,f2:4,1)\n\
               \x20use f1.txt org ls record f,4\n use f2.txt org ls record f,4\n\
               \x20give out.txt org ls record f,5\n sort fields=(4,1,ch,a)\n";
    std::fs::write(d.join("job.prm"), job).unwrap();
    let o = run(oxsort().current_dir(d).args(["gcsort", "-q", "take", "job.prm"]));
    assert!(o.status.success(), "{}", stderr(&o));
    // Sorted on byte 4 (F1's letter): a, m, z.
    let got = std::fs::read_to_string(d.join("out.txt")).unwrap();
    assert_eq!(got, "20 ar\n30 ms\n10 zq\n");
    // The DFSORT door keeps DFSORT's rule: a JOINKEYS job needs SORT or OPTION COPY.
    std::fs::write(
        d.join("dfsort.ctl"),
        " JOINKEYS FILES=F1,FIELDS=(1,2,A)\n JOINKEYS FILES=F2,FIELDS=(1,2,A)\n\
         \x20REFORMAT FIELDS=(F1:1,4)\n",
    )
    .unwrap();
    let o = run(oxsort().current_dir(d).args([
        "sort",
        "--control",
        "dfsort.ctl",
        "--record-size",
        "4",
        "--dd",
        "SORTJNF1=f1.txt",
        "--dd",
        "SORTJNF2=f2.txt",
        "-o",
        "x.out",
    ]));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("needs SORT FIELDS=(...) or OPTION COPY"), "{}", stderr(&o));
    // With OPTION COPY, its OUTFIL outputs are written (fixed records: no line ends).
    let mut ctl = std::fs::read_to_string(d.join("dfsort.ctl")).unwrap().replace("1,4)", "1,10)");
    ctl.push_str(" OPTION COPY\n OUTFIL FNAMES=OUT1,INCLUDE=(1,2,CH,GE,C'20')\n");
    std::fs::write(d.join("dfsort.ctl"), ctl).unwrap();
    std::fs::write(d.join("f1.bin"), "10 z      20 a      30 m      ").unwrap();
    std::fs::write(d.join("f2.bin"), "30 s      10 q      ").unwrap();
    let o = run(oxsort().current_dir(d).args([
        "sort",
        "--control",
        "dfsort.ctl",
        "--record-size",
        "10",
        "--dd",
        "SORTJNF1=f1.bin",
        "--dd",
        "SORTJNF2=f2.bin",
        "--dd",
        "OUT1=out1.bin",
        "-o",
        "all.bin",
    ]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(d.join("all.bin")).unwrap(), "10 z      30 m      ");
    assert_eq!(std::fs::read_to_string(d.join("out1.bin")).unwrap(), "30 m      ");
}

#[test]
fn an_sq_give_gets_its_length_after_outrec_and_reformat() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.sq"), "bbbb2222aaaa1111").unwrap();
    // OUTREC builds 6-byte records; the GIVE file's are 10: filled out with blanks.
    let o = run(oxsort().current_dir(d).args(["gcsort", "-q"]).arg(
        "SORT FIELDS=(1,4,CH,A) OUTREC FIELDS=(5,4,C'|',1,1) \
         USE in.sq ORG SQ RECORD F,8 GIVE wide.sq ORG SQ RECORD F,10",
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("wide.sq")).unwrap(), b"1111|a    2222|b    ");
    // A join's 7-byte joined records to a GIVE file of 5: cut.
    std::fs::write(d.join("f1.sq"), "k1AAk2BB").unwrap();
    std::fs::write(d.join("f2.sq"), "k2xyzk1uvw").unwrap();
    let o = run(oxsort().current_dir(d).args(["gcsort", "-q"]).arg(
        "JOINKEYS FILES=F1,FIELDS=(1,2,A) JOINKEYS FILES=F2,FIELDS=(1,2,A) \
         REFORMAT FIELDS=(F1:1,4,F2:3,3) \
         USE f1.sq ORG SQ RECORD F,4 USE f2.sq ORG SQ RECORD F,5 GIVE cut.sq ORG SQ RECORD F,5",
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    // Joined in key order: k1AAuvw, k2BBxyz; cut to 5 bytes.
    assert_eq!(std::fs::read(d.join("cut.sq")).unwrap(), b"k1AAuk2BBx");
    assert_eq!(listing(d), ["cut.sq", "f1.sq", "f2.sq", "in.sq", "wide.sq"]);
}

#[test]
fn a_job_with_a_warning_exits_4_and_still_writes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The second line is longer than the 5-byte record: cut, with a warning (GCSORT's 4).
    write_lines(&d.join("in.txt"), &["bb", "aaaaaaaa"]);
    let o = run(oxsort()
        .current_dir(d)
        .args(["gcsort", "-q"])
        .arg("SORT FIELDS=(1,5,CH,A) USE in.txt ORG LS RECORD F,5 GIVE out.txt ORG LS RECORD F,5"));
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: USE in.txt: 1 lines longer than RECORD F,5"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(d.join("out.txt")).unwrap(), "aaaaa\nbb\n");
}

#[test]
fn a_copy_of_records_shorter_than_the_default_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_lines(&d.join("in.txt"), &["ab", "ba"]);
    // 3-byte records and no key (a copy): the default key (bytes 1-10) plays no part.
    let o = run(oxsort().current_dir(d).args(["gcsort", "-q"]).arg(
        "SORT FIELDS=COPY USE in.txt ORG LS RECORD F,3 GIVE out.txt ORG LS RECORD F,3 \
         OUTREC FINDREP=(IN=C'a',OUT=C'x')",
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(d.join("out.txt")).unwrap(), "xb\nbx\n");
}

#[test]
fn sum_on_gcsort_separate_sign_fields() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Key in byte 1; CSL in bytes 2-5 (sign, 3 digits); CST in bytes 6-8 (2 digits, sign).
    write_lines(&d.join("in.txt"), &["b+00501+", "a-01002-", "b-00203+", "a+00105-"]);
    let o = run(oxsort().current_dir(d).args(["gcsort", "-q"]).arg(
        "SORT FIELDS=(1,1,CH,A) SUM FIELDS=(2,4,CSL,6,3,CST) \
         USE in.txt ORG LS RECORD F,8 GIVE out.txt ORG LS RECORD F,8",
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    // a: -10 + 1 = -9, -2 - 5 = -7; b: 5 - 2 = 3, 1 + 3 = 4.
    assert_eq!(std::fs::read_to_string(d.join("out.txt")).unwrap(), "a-00907-\nb+00304+\n");
    // CLO in bytes 2-4: the sign over the first digit ('p' is a negative 0 in ASCII).
    write_lines(&d.join("clo.txt"), &["a012", "ap05", "b100"]);
    let o = run(oxsort().current_dir(d).args(["gcsort", "-q"]).arg(
        "SORT FIELDS=(1,1,CH,A) SUM FIELDS=(2,3,CLO) \
         USE clo.txt ORG LS RECORD F,4 GIVE clo.out ORG LS RECORD F,4",
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    // a: 12 - 5 = 7.
    assert_eq!(std::fs::read_to_string(d.join("clo.out")).unwrap(), "a007\nb100\n");
}

//! GCSORT's runtime habits through `oxsort gcsort`, where they differ from DFSORT's: FINDREP as
//! GCSORT's source runs it (`STARTPOS=p` an offset, `ENDPOS` the last byte searched, `SHIFT=YES`
//! overlaying a shorter `OUT`, `SHIFT=NO` closing up with binary zeros, `OVERRUN=ERROR` on any
//! longer `OUT`, `IN` lists and `INOUT` pairs applied last first, the record's length kept), and
//! the report GCSORT prints on standard output (its labels, order and counts) for
//! `GCSORT_STATISTICS` unset, 1 and 2, OUTFIL groups' totals included. The DFSORT door keeps DFSORT's FINDREP.
//!
//! Every expected record is worked out by hand from those rules, in the comment beside it.

mod common;
use common::{oxsort, run, stderr};

use std::path::Path;
use std::process::Output;

/// GCSORT's exit status for a job that did not run.
const ERROR: i32 = 16;

/// Runs `oxsort gcsort` on `statements` in `d` (without `-q`: the report is part of the test).
fn gcsort(d: &Path, statements: &str, statistics: Option<&str>) -> Output {
    let mut cmd = oxsort();
    cmd.current_dir(d).args(["gcsort", statements]).env_remove("GCSORT_STATISTICS");
    if let Some(level) = statistics {
        cmd.env("GCSORT_STATISTICS", level);
    }
    run(&mut cmd)
}

/// A copy of the 10-byte records `recs` through `outrec`, as fixed records: the bytes written.
fn copy_fixed(d: &Path, recs: &[&str], outrec: &str) -> (Output, Option<Vec<u8>>) {
    std::fs::write(d.join("in.sq"), recs.concat()).unwrap();
    let _ = std::fs::remove_file(d.join("out.sq"));
    let o = gcsort(
        d,
        &format!(
            "SORT FIELDS=COPY USE in.sq ORG SQ RECORD F,10 GIVE out.sq ORG SQ RECORD F,10 \
             OUTREC {outrec}"
        ),
        None,
    );
    (o, std::fs::read(d.join("out.sq")).ok())
}

fn written(d: &Path, recs: &[&str], outrec: &str) -> String {
    let (o, out) = copy_fixed(d, recs, outrec);
    assert!(o.status.success(), "{outrec}: {}", stderr(&o));
    String::from_utf8(out.unwrap()).unwrap()
}

#[test]
fn findrep_ranges_shift_and_lists_as_gcsort_runs_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recs = ["aaaaaaaaaa", "xABCyABCzz"];
    // STARTPOS=1 is byte 2 on; ENDPOS=6 is through byte 6: bytes 2-6 replaced.
    assert_eq!(
        written(d, &recs, "FINDREP=(IN=C'a',OUT=C'b',STARTPOS=1,ENDPOS=6)"),
        "abbbbbaaaaxABCyABCzz"
    );
    // No STARTPOS: from byte 1; ENDPOS past the end: to the end.
    assert_eq!(written(d, &recs, "FINDREP=(IN=C'a',OUT=C'b',ENDPOS=99)"), "bbbbbbbbbbxABCyABCzz");
    // SHIFT=YES (the default): 'X' overlays 'ABC', whose 'BC' stays.
    assert_eq!(written(d, &recs, "FINDREP=(IN=C'ABC',OUT=C'X')"), "aaaaaaaaaaxXBCyXBCzz");
    // SHIFT=NO: 'xXyXzz' and four binary zeros.
    assert_eq!(
        written(d, &recs, "FINDREP=(IN=C'ABC',OUT=C'X',SHIFT=NO)"),
        "aaaaaaaaaaxXyXzz\0\0\0\0"
    );
    // INOUT=(A,B,B,C): the last pair first (B->C: xACCyACCzz), then A->B: xBCCyBCCzz.
    assert_eq!(written(d, &recs, "FINDREP=(INOUT=(C'A',C'B',C'B',C'C'))"), "aaaaaaaaaaxBCCyBCCzz");
    // IN=(C'AB',C'A'),OUT=C'-': 'A' first (x-BCy-BCzz), then 'AB' finds nothing.
    assert_eq!(written(d, &recs, "FINDREP=(IN=(C'AB',C'A'),OUT=C'-')"), "aaaaaaaaaax-BCy-BCzz");
    // DO=3 over one pair: three replacements in each record.
    assert_eq!(written(d, &recs, "FINDREP=(IN=C'a',OUT=C'b',DO=3)"), "bbbaaaaaaaxABCyABCzz");
}

#[test]
fn findrep_overrun_stops_the_job_unless_trunc() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A longer OUT is an error even with blanks to spare: exit 16, nothing written.
    let (o, out) = copy_fixed(d, &["ab        "], "FINDREP=(IN=C'a',OUT=C'xyz')");
    assert_eq!(o.status.code(), Some(ERROR), "{}", stderr(&o));
    assert!(stderr(&o).contains("OVERRUN=TRUNC cuts the record"), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("\nGCSORT - Copy KO\n\n"));
    assert!(out.is_none(), "no output under the GIVE name");
    // OVERRUN=TRUNC: 'xyzb' and the blanks, cut at 10 bytes; MAXLEN does not lengthen it.
    assert_eq!(
        written(d, &["ab   a   c"], "FINDREP=(IN=C'a',OUT=C'xyz',OVERRUN=TRUNC,MAXLEN=20)"),
        "xyzb   xyz"
    );
}

#[test]
fn findrep_over_line_sequential_records() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.txt"), "k1 a?b\nk0 ??\n").unwrap();
    let o = gcsort(
        d,
        "SORT FIELDS=(1,2,CH,A) USE in.txt ORG LS RECORD F,8 GIVE out.txt ORG LS RECORD F,8 \
         OUTREC FINDREP IN=C'?',OUT=C'!'",
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Records of 8 bytes (filled with blanks), sorted on 1-2, '?' to '!', trailing blanks off.
    assert_eq!(std::fs::read_to_string(d.join("out.txt")).unwrap(), "k0 !!\nk1 a!b\n");
}

#[test]
fn the_dfsort_door_keeps_dfsorts_findrep() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.dat"), "aaaaaaaaaaxABCyABCzz").unwrap();
    std::fs::write(
        d.join("job.ctl"),
        " OPTION COPY\n OUTREC FINDREP=(IN=C'a',OUT=C'b',STARTPOS=1,ENDPOS=6)\n",
    )
    .unwrap();
    let o = run(oxsort()
        .current_dir(d)
        .args(["sort", "-q", "--record-size", "10", "--control", "job.ctl", "-o", "out.dat"])
        .arg("in.dat"));
    assert!(o.status.success(), "{}", stderr(&o));
    // DFSORT's STARTPOS=1 is byte 1: bytes 1-6 replaced.
    assert_eq!(std::fs::read_to_string(d.join("out.dat")).unwrap(), "bbbbbbaaaaxABCyABCzz");
}

/// The lines of `text` with the times (which differ run to run) replaced by `<time>`.
fn layout(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            for head in ["Start    : ", "End      : ", "Elapsed  Time "] {
                if l.starts_with(head) {
                    return format!("{head}<time>");
                }
            }
            if let Some((step, _)) = l.split_once(" - ") {
                if step.starts_with("Before") || step.starts_with("After") {
                    return format!("{step} - <time>");
                }
            }
            if l.starts_with(" Memory size for GCSORT data     :  ") {
                return " Memory size for GCSORT data     :  <bytes>".to_string();
            }
            l.to_string()
        })
        .collect()
}

#[test]
fn the_report_on_standard_output_in_gcsorts_layout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Five records, one dropped by OMIT: 5 read, 4 written.
    std::fs::write(d.join("in.txt"), "c\nz\na\nb\nd\n").unwrap();
    std::fs::write(
        d.join("job.prm"),
        "SORT FIELDS=(1,1,CH,A)\nOMIT COND=(1,1,CH,EQ,C'z')\n\
         USE in.txt ORG LS RECORD F,4\nGIVE out.txt ORG LS RECORD F,4\n",
    )
    .unwrap();
    let rule = "=".repeat(56);
    let totals_rule = "=".repeat(68);
    let head = ["", &rule, &format!("GCSORT Version oxsort {}", env!("CARGO_PKG_VERSION")), &rule]
        .map(String::from);
    let take = ["TAKE file name", "job.prm", &rule].map(String::from);
    let totals = [
        totals_rule.as_str(),
        " Total Records Number       : 5",
        // Written to temporary files: none, the sort ran in memory.
        " Total Records Write Sort   : 0",
        " Total Records Write Output : 4",
        totals_rule.as_str(),
    ]
    .map(String::from);
    let times =
        ["Start    : <time>", "End      : <time>", "Elapsed  Time <time>", ""].map(String::from);
    let ok = ["GCSORT - Sort OK", ""].map(String::from);

    let take_run = |level: Option<&str>| {
        let mut cmd = oxsort();
        cmd.current_dir(d).args(["gcsort", "TAKE", "job.prm"]).env_remove("GCSORT_STATISTICS");
        if let Some(l) = level {
            cmd.env("GCSORT_STATISTICS", l);
        }
        let o = run(&mut cmd);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(d.join("out.txt")).unwrap(), "a\nb\nc\nd\n");
        o
    };

    // Unset and 0: the header, the TAKE name, the totals, the times, the OK line.
    let want: Vec<String> = [&head[..], &take, &totals, &times, &ok].concat();
    for level in [None, Some("0")] {
        let o = take_run(level);
        assert_eq!(layout(&String::from_utf8_lossy(&o.stdout)), want, "{level:?}");
        assert_eq!(stderr(&o), "", "GCSORT writes nothing on stderr");
    }

    // 1: the operation and the echo of the files, fields and condition too.
    let op = [
        "Operation  : SORT",
        "",
        "INPUT FILE :",
        "\tin.txt FIXED (4,4) LS",
        "OUTPUT FILE :",
        "\tout.txt FIXED (4,4) LS",
        "SORT FIELDS : (1,1,CH,A)",
        "OMIT COND : (1,1,CH,EQ,C'z')",
        &rule,
    ]
    .map(String::from);
    let o = take_run(Some("1"));
    let want: Vec<String> = [&head[..], &take, &op, &totals, &times, &ok].concat();
    assert_eq!(layout(&String::from_utf8_lossy(&o.stdout)), want);

    // 2: the steps, the memory; oxsort's own statistics on stderr.
    let steps = ["job_loadFiles", "job_sort", "job_save"]
        .iter()
        .flat_map(|s| [format!("Before  {s:<18} - <time>"), format!("After   {s:<18} - <time>")])
        .collect::<Vec<_>>();
    let memory =
        ["", " Memory size for GCSORT data     :  <bytes>", &"=".repeat(47), ""].map(String::from);
    let o = take_run(Some("2"));
    let want: Vec<String> = [&head[..], &take, &op, &steps, &totals, &memory, &times, &ok].concat();
    assert_eq!(layout(&String::from_utf8_lossy(&o.stdout)), want);
    assert!(stderr(&o).contains("oxsort statistics: 5 records"), "{}", stderr(&o));

    // A level GCSORT does not know: a warning, and level 1 (as GCSORT forces).
    let o = take_run(Some("7"));
    let want: Vec<String> = [&head[..], &take, &op, &totals, &times, &ok].concat();
    assert_eq!(layout(&String::from_utf8_lossy(&o.stdout)), want);
    assert!(stderr(&o).contains("GCSORT_STATISTICS=7: expected 0, 1 or 2; 1 is used"));

    // -q: nothing printed.
    let o = run(oxsort().current_dir(d).args(["gcsort", "-q", "TAKE", "job.prm"]));
    assert!(o.status.success() && o.stdout.is_empty(), "{}", stderr(&o));
}

#[test]
fn a_join_reports_each_side_read_and_sorted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("f1.txt"), "2 a\n1 b\n3 c\n").unwrap();
    std::fs::write(d.join("f2.txt"), "1 x\n2 y\n").unwrap();
    let stmts = "JOINKEYS FILES=F1,FIELDS=(1,1,A) JOINKEYS FILES=F2,FIELDS=(1,1,A),SORTED \
                 REFORMAT FIELDS=(F1:1,3,F2:3,1) USE f1.txt ORG LS RECORD F,3 \
                 USE f2.txt ORG LS RECORD F,3 GIVE out.txt ORG LS RECORD F,4";
    let o = gcsort(d, stmts, Some("1"));
    assert!(o.status.success(), "{}", stderr(&o));
    // Keys 1 and 2 pair: '1 bx', '2 ay'.
    assert_eq!(std::fs::read_to_string(d.join("out.txt")).unwrap(), "1 bx\n2 ay\n");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines = layout(&text);
    let at = lines.iter().position(|l| l == "Operation  : JOIN").expect("operation line");
    // The join as GCSORT describes it.
    assert_eq!(
        lines[at + 1..at + 8],
        [
            "",
            "JOIN F1 FIELDS : (1,1,CH,A) ",
            "JOIN F2 FIELDS : (1,1,CH,A) , SORTED",
            "",
            "REFORMAT FIELDS = (1,3,F2:3,1)",
            "JOIN UNPAIRED  Inner Join (Default) ",
            &"=".repeat(56),
        ]
    );
    // F1 read and sorted 3; F2 is SORTED: no line; 2 joined records written.
    let totals_rule = "=".repeat(68);
    assert_eq!(
        lines[at + 8..at + 12],
        [
            totals_rule.clone(),
            " Total Records file F1 Read : 3  -- Sort :  3".to_string(),
            " Total Records Write Output : 2".to_string(),
            totals_rule,
        ]
    );
    assert!(text.ends_with("GCSORT - Join OK\n\n"), "{text}");
}

#[test]
fn outfil_groups_are_echoed_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.txt"), "c3x\na1y\nb2x\nd4y\na5x\n").unwrap();
    // Three groups: the records starting with `a` (cut and marked), two outputs taking turns,
    // and the rest.
    let statements = "SORT FIELDS=(1,1,CH,A) USE in.txt ORG LS RECORD F,3 \
                      GIVE out.txt ORG LS RECORD F,3 \
                      OUTFIL FNAMES=f_a,INCLUDE=(1,1,CH,EQ,C'a'),OUTREC=(1,2,C'!') \
                      OUTFIL FILES=f_odd,f_even,SPLIT,INCLUDE=(2,1,ZD,LE,2) \
                      OUTFIL FNAMES=f_rest,SAVE";
    let mut cmd = oxsort();
    cmd.current_dir(d).args(["gcsort", statements]).env("GCSORT_STATISTICS", "1");
    for name in ["f_a", "f_odd", "f_even", "f_rest"] {
        cmd.env(name, d.join(format!("{name}.txt")));
    }
    let o = run(&mut cmd);
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |name: &str| std::fs::read_to_string(d.join(format!("{name}.txt"))).unwrap();
    // Sorted: a1y a5x b2x c3x d4y. `a`: a1y a5x. Digit <= 2: a1y b2x, dealt in turn.
    // The rest (in no other group): c3x d4y.
    assert_eq!(read("f_a"), "a1!\na5!\n");
    assert_eq!((read("f_odd").as_str(), read("f_even").as_str()), ("a1y\n", "b2x\n"));
    assert_eq!(read("f_rest"), "c3x\nd4y\n");
    let report = layout(&String::from_utf8_lossy(&o.stdout));
    let echo: Vec<&str> = report
        .iter()
        .map(String::as_str)
        .skip_while(|l| !l.starts_with("OUTFIL : "))
        .take_while(|l| !l.starts_with("====="))
        .collect();
    assert_eq!(
        echo,
        [
            "OUTFIL : ",
            "\tFNAMES/FILES:",
            "\t\tf_a FIXED (3,3) LS",
            "\t\tINCLUDE : (1,1,CH,EQ,C'a')",
            "\t\tOUTREC : (1,2,C'!')",
            "\tFNAMES/FILES:",
            "\t\tf_odd FIXED (3,3) LS",
            "\t\tf_even FIXED (3,3) LS",
            "\t\tINCLUDE : (2,1,ZD,LE,Z'2')",
            "\t\tSPLIT ",
            "\tFNAMES/FILES:",
            "\t\tf_rest FIXED (3,3) LS",
        ]
    );
    let totals: Vec<&str> = report
        .iter()
        .map(String::as_str)
        .skip_while(|l| !l.starts_with(" Total Records Write Output"))
        .skip(2)
        .take_while(|l| !l.starts_with("Start"))
        .collect();
    assert_eq!(
        totals,
        [
            "OUTFIL Total Records Write     :          2",
            "Record Write for file :          2 - File: f_a",
            // The SPLIT group's outputs together.
            "OUTFIL Total Records Write     :          2",
            "Record Write for file :          1 - File: f_odd",
            "Record Write for file :          1 - File: f_even",
            "OUTFIL Total Records Write     :          2",
            "Record Write for file :          2 - SAVE: f_rest",
            "",
        ]
    );
}

#[test]
fn outfil_names_are_looked_up_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.txt"), "b\na\n").unwrap();
    // `fout` could be a DD name; its environment variable is still the one written, in its case.
    let o = run(oxsort()
        .current_dir(d)
        .args([
            "gcsort",
            "-q",
            "SORT FIELDS=(1,1,CH,A) USE in.txt ORG LS RECORD F,1 \
                GIVE out.txt ORG LS RECORD F,1 OUTFIL FNAMES=fout",
        ])
        .env("fout", d.join("lower.txt")));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(d.join("lower.txt")).unwrap(), "a\nb\n");
}

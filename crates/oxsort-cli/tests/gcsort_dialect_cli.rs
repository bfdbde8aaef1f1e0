//! GCSORT's own dialect through `oxsort gcsort`: free-form statements (continuation lines
//! with a leading or trailing comma, blanks around `=` and `,`, FINDREP without parentheses,
//! statements after GIVE), line sequential files as GnuCOBOL reads and writes them (short
//! lines filled with blanks to the record length, trailing blanks taken off when written,
//! CR/LF line ends), names resolved through environment variables, several USE files,
//! JOINKEYS with two USE and one GIVE, GCSORT's exit status and its messages.
//!
//! Expected outputs are worked out here from those rules (filling, sorting, replacing,
//! trimming, joining by hand), and compared line by line up to trailing blanks, as GCSORT's
//! own test harness compares them, and also byte for byte where the rule fixes the bytes.

mod common;
use common::{oxsort, run, stderr};

use std::path::Path;

/// GCSORT's exit status for a job that did not run.
const ERROR: i32 = 16;

/// Names and a key (bytes 11-14), some lines shorter than the 20-byte record, one with a `?`.
const LINES: &[&str] =
    &["Carrie    F101 keep", "David ?   F102", "Frank     F101", "Holly", "Vicky     F102 x?y"];

/// The lines up to trailing blanks.
fn trimmed(text: &str) -> Vec<String> {
    text.lines().map(|l| l.trim_end_matches(' ').to_string()).collect()
}

/// A line filled out with blanks to `n` bytes (GnuCOBOL's read of a line sequential record).
fn filled(line: &str, n: usize) -> String {
    format!("{line:<n$}")
}

fn write_lines(path: &Path, lines: &[&str], end: &str) {
    std::fs::write(path, lines.iter().map(|l| format!("{l}{end}")).collect::<String>()).unwrap();
}

#[test]
fn a_free_form_job_over_line_sequential_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_lines(&d.join("in.txt"), LINES, "\r\n");
    let take = d.join("job.prm");
    // GIVE before the statements; SORT continued by a trailing comma, OUTREC's FINDREP by a
    // leading one; blanks around = and ,.
    std::fs::write(
        &take,
        " USE dd_in ORG LS RECORD F , 20\n\
         \x20GIVE dd_out ORG LS RECORD F,20\n\
         * sort by the key, then by the name descending\n\
         \x20SORT FIELDS = (11,4,CH,A,\n\
         \x20              1,10,CH,D)\n\
         \x20OUTREC FINDREP IN=C'?' , OUT=C'!'\n\
         \x20      ,STARTPOS=1 , ENDPOS = 14\n",
    )
    .unwrap();
    let o = run(oxsort()
        .current_dir(d)
        .args(["gcsort", "-fsign=ASCII", "take"])
        .arg(&take)
        .env("dd_in", "in.txt")
        .env("dd_out", "out.txt"));
    assert!(o.status.success(), "{}", stderr(&o));
    // By hand: records filled to 20 bytes, sorted by (key asc, name desc), stable; '?' in
    // bytes 1-14 only becomes '!'; written without trailing blanks.
    let mut recs: Vec<String> = LINES.iter().map(|l| filled(l, 20)).collect();
    recs.sort_by(|a, b| a[10..14].cmp(&b[10..14]).then(b[..10].cmp(&a[..10])));
    let want: Vec<String> = recs
        .iter()
        .map(|r| format!("{}{}", r[..14].replace('?', "!"), &r[14..]).trim_end().to_string())
        .collect();
    let got = std::fs::read_to_string(d.join("out.txt")).unwrap();
    assert_eq!(trimmed(&got), want);
    // The file itself: LF line ends, no trailing blanks ("Holly" sorts first: its key is blank).
    assert_eq!(got, want.iter().map(|l| format!("{l}\n")).collect::<String>());
    assert_eq!(want[0], "Holly");
    assert!(want.contains(&"Vicky     F102 x?y".to_string()), "{want:?}");
    // Nothing staged is left behind.
    let mut left: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
    left.sort();
    assert_eq!(left, ["in.txt", "job.prm", "out.txt"]);
}

#[test]
fn lsf_keeps_the_blanks_and_several_uses_are_one_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_lines(&d.join("a.txt"), &LINES[..3], "\n");
    // A sequential file of 20-byte records and a line sequential one: one input.
    std::fs::write(d.join("b.sq"), LINES[3..].iter().map(|l| filled(l, 20)).collect::<String>())
        .unwrap();
    let o = run(oxsort().current_dir(d).args(["gcsort", "-q"]).arg(
        "SORT FIELDS=(1,5,CH,A) USE a.txt ORG LS RECORD F,20 USE b.sq ORG SQ RECORD F,20 \
         GIVE out.txt ORG LSF RECORD F,20",
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut want: Vec<String> = LINES.iter().map(|l| filled(l, 20)).collect();
    want.sort_by(|a, b| a[..5].cmp(&b[..5]));
    let got = std::fs::read_to_string(d.join("out.txt")).unwrap();
    assert_eq!(got, want.iter().map(|l| format!("{l}\n")).collect::<String>());
}

#[test]
fn a_join_written_free_form_with_two_uses_and_one_give() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // F1: key in 1-3, sorted; F2: key in 5-7, sorted; both line sequential.
    let f1 = ["001 apple", "002 pear", "004 plum"];
    let f2 = ["red 001", "grn 002", "yel 002", "blu 003"];
    write_lines(&d.join("f1.txt"), &f1, "\n");
    write_lines(&d.join("f2.txt"), &f2, "\n");
    std::fs::write(
        d.join("join.prm"),
        " JOINKEYS FILES=F1 , FIELDS=(1,3,A)\n    ,SORTED\n\
         \x20JOINKEYS FILES=F2,\n   FIELDS=(5,3,A) SORTED\n\
         \x20JOIN UNPAIRED , F1\n\
         \x20REFORMAT FIELDS=(F1:1,10,F2:1,3),FILL=C'-'\n\
         \x20SORT FIELDS=COPY\n\
         \x20USE in1 ORG LS RECORD F,10\n USE in2 ORG LS RECORD F,7\n\
         \x20GIVE out.txt ORG LS RECORD F,13\n",
    )
    .unwrap();
    let o = run(oxsort()
        .current_dir(d)
        .args(["gcsort", "-q", "TAKE", "join.prm"])
        .env("DD_in1", "f1.txt")
        .env("dd_in2", "f2.txt"));
    assert!(o.status.success(), "{}", stderr(&o));
    // By hand: each F1 record with each F2 record of its key, F1 records without one filled
    // with '-' in F2's part; F1 filled to 10 bytes.
    let mut want = Vec::new();
    for a in f1 {
        let pairs: Vec<&str> = f2.iter().copied().filter(|b| b[4..7] == a[..3]).collect();
        if pairs.is_empty() {
            want.push(format!("{}---", filled(a, 10)).trim_end().to_string());
        }
        for b in pairs {
            want.push(format!("{}{}", filled(a, 10), &b[..3]));
        }
    }
    let got = std::fs::read_to_string(d.join("out.txt")).unwrap();
    assert_eq!(trimmed(&got), want);
}

#[test]
fn unsupported_statements_and_mistakes_say_where_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_lines(&d.join("in.txt"), LINES, "\n");
    let job = |body: &str| {
        std::fs::write(
            d.join("job.prm"),
            format!(" USE in.txt ORG LS RECORD F,20\n GIVE out.txt ORG LS RECORD F,20\n{body}"),
        )
        .unwrap();
        let o = run(oxsort().current_dir(d).args(["gcsort", "take", "job.prm"]));
        assert_eq!(o.status.code(), Some(ERROR), "{}", stderr(&o));
        assert!(!d.join("out.txt").exists());
        stderr(&o)
    };
    let e = job(" SORT FIELDS=(1,5,CH,A)\n SUM FIELDS=NONE,XSUM\n");
    assert!(e.contains("job.prm: line 4, column 18: SUM ...,XSUM writes the records"), "{e}");
    let e = job(" SORT FIELDS=(1,5,CH,A)\n  MODS E15=(MYEXIT,1000)\n");
    assert!(e.contains("job.prm: line 4, column 3: MODS is not supported"), "{e}");
    assert!(e.contains("GCSORT statements accepted: USE, GIVE, XSUM, TAKE, SORT"), "{e}");
    // A DFSORT-level mistake on a continuation line: its own line and column.
    let e = job(" SORT FIELDS=(1,5,CH,A,\n   11,4,QQ,A)\n");
    assert!(e.contains("job.prm: line 4, column 9:"), "{e}");
    // A missing USE file names the variable its name came from.
    std::fs::write(
        d.join("job.prm"),
        " SORT FIELDS=COPY USE dd_missing ORG LS RECORD F,20 GIVE out.txt ORG LS RECORD F,20",
    )
    .unwrap();
    let o = run(oxsort()
        .current_dir(d)
        .args(["gcsort", "take", "job.prm"])
        .env("dd_missing", "nowhere.txt"));
    assert_eq!(o.status.code(), Some(ERROR));
    let e = stderr(&o);
    assert!(
        e.contains(
            "USE dd_missing: the input nowhere.txt does not exist (the value of the \
                    environment variable dd_missing)"
        ),
        "{e}"
    );
    assert!(!d.join("out.txt").exists());
}

#[test]
fn a_link_named_gcsort_and_gcsort_statistics_in_detail() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_lines(&d.join("in.txt"), LINES, "\n");
    let link = d.join("gcsort");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_oxsort"), &link).unwrap();
    let stmts = "SORT FIELDS=(1,1,CH,D) USE in.txt ORG LS RECORD F,20 GIVE out.txt ORG LS \
                 RECORD F,20";
    let o = run(std::process::Command::new(&link)
        .current_dir(d)
        .args(["-mt=2", stmts])
        .env("GCSORT_STATISTICS", "2"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("oxsort statistics: 5 records"), "{}", stderr(&o));
    let mut want: Vec<&str> = LINES.to_vec();
    want.sort_by(|a, b| b[..1].cmp(&a[..1]));
    assert_eq!(trimmed(&std::fs::read_to_string(d.join("out.txt")).unwrap()), want);
    let o = run(std::process::Command::new(&link).current_dir(d).args(["-mt=0", stmts]));
    assert_eq!(o.status.code(), Some(ERROR));
    assert!(stderr(&o).contains("-mt=0"), "{}", stderr(&o));
}

#[test]
fn outfil_names_through_the_environment_and_a_test_of_the_command_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recs = ["b 2", "a 1", "b 3", "c 9"];
    std::fs::write(d.join("in.sq"), recs.concat()).unwrap();
    // GCSORT's keyword without its '=' (FIELDS(...)), OUTFIL's FNAMES an environment name.
    let stmts = "SORT FIELDS(1,1,CH,A) USE in.sq ORG SQ RECORD F,3 GIVE all.sq ORG SQ RECORD F,3 \
                 OUTFIL INCLUDE=(1,1,CH,EQ,C'b'),FNAMES=FOUT_B";
    let o = run(oxsort()
        .current_dir(d)
        .args(["gcsort", "-q", stmts])
        .env("GCSORT_TESTCMD", "1")
        .env("FOUT_B", "b.sq"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!d.join("all.sq").exists() && !d.join("b.sq").exists());
    let o = run(oxsort().current_dir(d).args(["gcsort", "-q", stmts]).env("FOUT_B", "b.sq"));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut sorted = recs.to_vec();
    sorted.sort_by(|a, b| a[..1].cmp(&b[..1]));
    assert_eq!(std::fs::read_to_string(d.join("all.sq")).unwrap(), sorted.concat());
    let bs: String = sorted.iter().filter(|r| r.starts_with('b')).copied().collect();
    assert_eq!(std::fs::read_to_string(d.join("b.sq")).unwrap(), bs);
}

#[test]
fn records_are_written_at_the_give_length() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_lines(&d.join("in.txt"), LINES, "\n");
    // GCSORT's example "Input LS output SQ Fix": 20-byte line records to 12-byte ones, then
    // to 16-byte ones filled out with blanks.
    let o = run(oxsort()
        .current_dir(d)
        .args(["gcsort", "-q"])
        .arg("USE in.txt RECORD F,20 ORG LS GIVE cut.sq RECORD F,12 ORG SQ MERGE FIELDS=COPY"));
    assert!(o.status.success(), "{}", stderr(&o));
    let want: String = LINES.iter().map(|l| filled(l, 20)[..12].to_string()).collect();
    assert_eq!(std::fs::read_to_string(d.join("cut.sq")).unwrap(), want);
    let o = run(oxsort()
        .current_dir(d)
        .args(["gcsort", "-q"])
        .arg("SORT FIELDS=COPY USE cut.sq RECORD F,12 ORG SQ GIVE wide.sq RECORD F,16 ORG SQ"));
    assert!(o.status.success(), "{}", stderr(&o));
    let want: String = LINES.iter().map(|l| filled(&filled(l, 20)[..12], 16)).collect();
    assert_eq!(std::fs::read_to_string(d.join("wide.sq")).unwrap(), want);
}

#[test]
fn records_built_shorter_than_the_give_length_are_written_as_lines() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_lines(&d.join("in.txt"), LINES, "\n");
    // INREC builds 10-byte records; GIVE LS F,20 writes them trimmed, LSF F,12 filled to 12.
    for (org, width) in [("LS", 20), ("LSF", 12)] {
        let o = run(oxsort().current_dir(d).args(["gcsort", "-q"]).arg(format!(
            "USE in.txt ORG LS RECORD F,20 GIVE out.txt ORG {org} RECORD F, {width} \
             INREC BUILD=(11,4,C'-',1,5) SORT FIELDS=(6,5,CH,A)"
        )));
        assert!(o.status.success(), "{org}: {}", stderr(&o));
        let mut recs: Vec<String> = LINES
            .iter()
            .map(|l| {
                let r = filled(l, 20);
                format!("{}-{}", &r[10..14], &r[..5])
            })
            .collect();
        recs.sort_by(|a, b| a[5..].cmp(&b[5..]));
        let want: String = recs
            .iter()
            .map(|r| {
                if org == "LS" {
                    format!("{}\n", r.trim_end())
                } else {
                    format!("{}\n", filled(r, width))
                }
            })
            .collect();
        assert_eq!(std::fs::read_to_string(d.join("out.txt")).unwrap(), want, "{org}");
    }
}

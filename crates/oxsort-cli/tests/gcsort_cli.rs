//! GCSORT jobs through `oxsort gcsort`: the command form and TAKE files, fixed (ORG SQ) and
//! line sequential (ORG LS) files, compared with the sort the statements define, done here.

mod common;
use common::{oxsort, run, stderr};

/// 14-byte records, some sharing their sort key (bytes 11-14) so stability shows.
const RECS: &[&str] = &[
    "Carrie    F101",
    "David     F102",
    "Frank     F101",
    "Holly     F104",
    "Vicky     F102",
    "Xavier    F103",
];

#[test]
fn the_command_form_sorts_fixed_records() {
    let dir = tempfile::tempdir().unwrap();
    let (inp, out) = (dir.path().join("in.sq"), dir.path().join("out.sq"));
    std::fs::write(&inp, RECS.concat()).unwrap();
    let o = run(oxsort().args(["gcsort", "-fsign=ASCII", "--quiet"]).arg(format!(
        "SORT FIELDS=(11,4,CH,D) USE {} ORG SQ RECORD F,14 GIVE {} ORG SQ RECORD F,14",
        inp.display(),
        out.display()
    )));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut want = RECS.to_vec();
    want.sort_by(|a, b| b[10..14].cmp(&a[10..14]));
    assert_eq!(String::from_utf8(std::fs::read(&out).unwrap()).unwrap(), want.concat());
}

#[test]
fn a_take_file_with_line_sequential_files_and_an_environment_name() {
    let dir = tempfile::tempdir().unwrap();
    let (inp, out) = (dir.path().join("in.txt"), dir.path().join("out.txt"));
    std::fs::write(&inp, RECS.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
    let take = dir.path().join("job.prm");
    std::fs::write(
        &take,
        format!(
            "   * ---- sort the names by number, leave out X\n\
             USE  dd_infile ORG LS RECORD F,14\n\
             GIVE {}  RECORD F,14 ORG LS\n \
             SORT FIELDS=(11,4,CH,A)\n \
             OMIT COND=(1,1,CH,EQ,C'X')\n",
            out.display()
        ),
    )
    .unwrap();
    let o = run(oxsort().args(["gcsort", "-q", "TAKE"]).arg(&take).env("dd_infile", &inp));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut want: Vec<&str> = RECS.iter().copied().filter(|r| !r.starts_with('X')).collect();
    want.sort_by(|a, b| a[10..14].cmp(&b[10..14]));
    let want: String = want.iter().map(|r| format!("{r}\n")).collect();
    assert_eq!(String::from_utf8(std::fs::read(&out).unwrap()).unwrap(), want);
}

#[test]
fn mistakes_name_the_statement() {
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("in.sq");
    std::fs::write(&inp, RECS.concat()).unwrap();
    let out = dir.path().join("out");
    let try_it = |stmts: String| {
        let o = run(oxsort().args(["gcsort", "-q"]).arg(stmts));
        assert_eq!(o.status.code(), Some(16), "GCSORT's exit status for an error");
        assert!(!out.exists());
        stderr(&o)
    };
    let e = try_it(format!(
        "SORT FIELDS=(1,4,CH,A) USE {} ORG SQ RECORD V,10,20 GIVE {} ORG SQ RECORD F,14",
        inp.display(),
        out.display()
    ));
    // Variable (RDW-prefixed) records in and fixed ones out: no conversion.
    assert!(e.contains("differ in organization") && e.contains("variable"), "{e}");
    let e = try_it(format!("SORT FIELDS=(1,4,CH,A) USE {} ORG SQ RECORD F,14", inp.display()));
    assert!(e.contains("no GIVE"), "{e}");
    let e = try_it(format!(
        "SORT FIELDS=(1,4,XX,A) USE {} ORG SQ RECORD F,14 GIVE {} ORG SQ RECORD F,14",
        inp.display(),
        out.display()
    ));
    assert!(e.contains("gcsort command line: line 1"), "{e}");
}

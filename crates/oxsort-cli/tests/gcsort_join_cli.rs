//! JOINKEYS jobs through `oxsort gcsort`: the first USE file is F1 and the second F2, as
//! GCSORT reads them; the joined output is byte for byte what `oxsort sort --control` with
//! `--dd SORTJNF1/SORTJNF2` writes for the same statements.

mod common;
use common::{oxsort, run, stderr};

/// F1: 20-byte records, key in bytes 1-6 (some keys twice, some F1 only).
const F1: &[&str] = &[
    "000003alpha   F1-a01",
    "000001bravo   F1-b02",
    "000002charlie F1-c03",
    "000003delta   F1-d04",
    "000009echo    F1-e05",
    "000005foxtrot F1-f06",
];

/// F2: 16-byte records, key in bytes 11-16 (some keys twice, some F2 only).
const F2: &[&str] = &[
    "F2-one    000003",
    "F2-two    000002",
    "F2-three  000007",
    "F2-four   000003",
    "F2-five   000005",
];

/// The statements of the job, for both doors (GCSORT's FILES=, its JOIN and REFORMAT).
fn statements(join: &str, main: &str) -> String {
    format!(
        " JOINKEYS FILES=F1,FIELDS=(1,6,A)\n JOINKEYS FILES=F2,FIELDS=(11,6,A)\n{join} \
         REFORMAT FIELDS=(F1:1,20,F2:1,10,?),FILL=C'*'\n {main}\n"
    )
}

/// Runs the job through `oxsort gcsort take FILE` and through `oxsort sort --control`;
/// returns both outputs.
fn both(join: &str, main: &str) -> (Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (f1, f2) = (d.join("f1.dat"), d.join("f2.dat"));
    std::fs::write(&f1, F1.concat()).unwrap();
    std::fs::write(&f2, F2.concat()).unwrap();
    let stmts = statements(join, main);
    let take = d.join("join.prm");
    let gc_out = d.join("gcsort.out");
    std::fs::write(
        &take,
        format!(
            "{stmts} USE {} ORG SQ RECORD F,20\n USE {} ORG SQ RECORD F,16\n \
             GIVE {} ORG SQ RECORD F,31\n",
            f1.display(),
            f2.display(),
            gc_out.display()
        ),
    )
    .unwrap();
    let o = run(oxsort().args(["gcsort", "-q", "take"]).arg(&take));
    assert!(o.status.success(), "gcsort: {}", stderr(&o));
    let ctl = d.join("join.ctl");
    std::fs::write(&ctl, &stmts).unwrap();
    let cli_out = d.join("cli.out");
    let o = run(oxsort()
        .args(["sort", "-q", "--lrecl", "SORTJNF1=20", "--lrecl", "SORTJNF2=16"])
        .arg(format!("--control={}", ctl.display()))
        .arg(format!("--dd=SORTJNF1={}", f1.display()))
        .arg(format!("--dd=SORTJNF2={}", f2.display()))
        .arg(format!("--dd=SORTOUT={}", cli_out.display())));
    assert!(o.status.success(), "sort: {}", stderr(&o));
    (std::fs::read(&gc_out).unwrap(), std::fs::read(&cli_out).unwrap())
}

#[test]
fn an_inner_join_gives_the_cli_bytes() {
    let (gc, cli) = both("", "SORT FIELDS=COPY");
    assert_eq!(gc, cli);
    // Keys 000002, 000003 (2 x 2) and 000005 pair: 6 joined records of 31 bytes.
    assert_eq!(gc.len(), 6 * 31, "{}", String::from_utf8_lossy(&gc));
    assert!(gc.chunks(31).all(|r| r[30] == b'B'), "{}", String::from_utf8_lossy(&gc));
}

#[test]
fn a_full_outer_join_sorted_by_the_main_task_gives_the_cli_bytes() {
    let (gc, cli) = both(" JOIN UNPAIRED,F1,F2\n", "SORT FIELDS=(21,10,CH,D,1,6,CH,A)");
    assert_eq!(gc, cli);
    assert_eq!(gc.len(), (6 + 2 + 1) * 31, "{}", String::from_utf8_lossy(&gc));
}

#[test]
fn a_join_needs_two_fixed_files() {
    let dir = tempfile::tempdir().unwrap();
    let f1 = dir.path().join("f1.dat");
    std::fs::write(&f1, F1.concat()).unwrap();
    let o = run(oxsort().args(["gcsort", "-q"]).arg(format!(
        "{} USE {} ORG SQ RECORD F,20 GIVE {} ORG SQ RECORD F,31",
        statements("", "SORT FIELDS=COPY").replace('\n', " "),
        f1.display(),
        dir.path().join("out").display()
    )));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("give two USE statements"), "{}", stderr(&o));
}

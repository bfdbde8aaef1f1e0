//! A control file that is a JCL step: its DD statements give the job's data sets, resolved
//! through `--dd DSN=PATH` (or as paths), and their DCB the record length.
//!
//! The join case is the DFSORT Application Programming Guide's JOINKEYS "Example 5" (paired
//! and unpaired F1/F2 records, indicator method), with the joined records the guide's
//! explanation lists.

mod common;
use common::{oxsort, run, stderr};

const F1: &[&str] =
    &["Carrie    F101", "David     F102", "Frank     F103", "Holly     F104", "Vicky     F105"];
const F2: &[&str] = &[
    "No    Carrie    F201",
    "Yes   Holly     F202",
    "Yes   Karen     F203",
    "No    Sri Hari  F204",
    "Yes   Vicky     F205",
];

const JOB: &str = "//JKE5  EXEC  PGM=SORT
//SYSOUT    DD  SYSOUT=*
//SORTJNF1 DD DSN=FIRST.FILE,DISP=SHR,
//            DCB=(RECFM=FB,LRECL=14)
//SORTJNF2 DD DSN=SECOND.FILE,DISP=SHR,RECFM=FB,LRECL=20
//SORTOUT DD DSN=JOINED.FILE,DISP=(NEW,CATLG,DELETE)
//SYSIN    DD    *
* Control statements for JOINKEYS application
  JOINKEYS FILE=F1,FIELDS=(1,10,A),SORTED,NOSEQCK
  JOINKEYS FILE=F2,FIELDS=(7,10,A),SORTED,NOSEQCK
  JOIN UNPAIRED,F1,F2
  REFORMAT FIELDS=(F1:1,14,F2:1,20,?)
* Control statements for main task (joined records)
  OPTION COPY
/*
";

fn blank(n: usize) -> String {
    " ".repeat(n)
}

#[test]
fn a_jcl_join_step_runs_with_its_data_sets_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let (p1, p2, out) =
        (dir.path().join("first"), dir.path().join("second"), dir.path().join("joined"));
    std::fs::write(&p1, F1.concat()).unwrap();
    std::fs::write(&p2, F2.concat()).unwrap();
    let ctl = dir.path().join("jke5.jcl");
    std::fs::write(&ctl, JOB).unwrap();
    let dd = |name: &str, p: &std::path::Path| format!("--dd={name}={}", p.display());
    let o = run(oxsort()
        .args(["sort", "-q", "--control"])
        .arg(&ctl)
        .arg(dd("FIRST.FILE", &p1))
        .arg(dd("second.file", &p2))
        .arg(dd("JOINED.FILE", &out)));
    assert!(o.status.success(), "{}", stderr(&o));
    // F1 positions 1-14, F2 positions 1-20, the indicator; FILL blanks the missing side.
    let want = [
        format!("{}{}B", F1[0], F2[0]),
        format!("{}{}1", F1[1], blank(20)),
        format!("{}{}1", F1[2], blank(20)),
        format!("{}{}B", F1[3], F2[1]),
        format!("{}{}2", blank(14), F2[2]),
        format!("{}{}2", blank(14), F2[3]),
        format!("{}{}B", F1[4], F2[4]),
    ]
    .concat();
    assert_eq!(String::from_utf8(std::fs::read(&out).unwrap()).unwrap(), want);

    // A data set the job reads that nothing maps: the DD and the data set are named, and
    // nothing is written.
    std::fs::remove_file(&out).unwrap();
    let o = run(oxsort()
        .args(["sort", "-q", "--control"])
        .arg(&ctl)
        .arg(dd("FIRST.FILE", &p1))
        .arg(dd("JOINED.FILE", &out)));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("//SORTJNF2") && e.contains("SECOND.FILE") && e.contains("line 5"), "{e}");
    assert!(!out.exists());
    // --dd by DD name takes the place of the JCL's data set.
    let o = run(oxsort()
        .args(["sort", "-q", "--control"])
        .arg(&ctl)
        .arg(dd("FIRST.FILE", &p1))
        .arg(dd("SORTJNF2", &p2))
        .arg(dd("SORTOUT", &out)));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8(std::fs::read(&out).unwrap()).unwrap(), want);
}

#[test]
fn sortin_concatenation_and_dcb_lrecl_come_from_the_jcl() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    std::fs::write(&a, F1[..3].concat()).unwrap();
    std::fs::write(&b, F1[3..].concat()).unwrap();
    let out = dir.path().join("sorted.dat");
    // Data set names that are paths: an existing input, an output in an existing directory.
    let job = format!(
        "//S1 EXEC PGM=SORT\n//SORTIN DD DSN={},DISP=SHR,DCB=(RECFM=FB,LRECL=14)\n\
         //       DD DSN={},DISP=SHR\n//SORTOUT DD DSN={},DISP=(NEW,CATLG)\n\
         //SYSIN DD *\n  SORT FIELDS=(11,4,CH,D)\n/*\n",
        a.display(),
        b.display(),
        out.display()
    );
    let ctl = dir.path().join("s1.jcl");
    std::fs::write(&ctl, job).unwrap();
    let o = run(oxsort().args(["sort", "-q", "--control"]).arg(&ctl));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut want: Vec<&str> = F1.to_vec();
    want.sort_by(|x, y| y[10..14].cmp(&x[10..14]));
    assert_eq!(String::from_utf8(std::fs::read(&out).unwrap()).unwrap(), want.concat());

    // A variable-length data set is read as RDW-prefixed records: these fixed records have
    // no RDWs, and the first one's is named.
    let vb = |recfm: &str| {
        format!(
            "//SORTIN DD DSN={},DCB=(RECFM={recfm},LRECL=84)\n//SYSIN DD *\n SORT FIELDS=COPY\n/*\n",
            a.display()
        )
    };
    std::fs::write(&ctl, vb("VB")).unwrap();
    let o = run(oxsort().args(["sort", "-q", "--control"]).arg(&ctl).arg("-o").arg(&out));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("a.dat: record 1 at byte offset 0"), "{}", stderr(&o));
    // Spanned records are refused with the DD named.
    std::fs::write(&ctl, vb("VBS")).unwrap();
    let o = run(oxsort().args(["sort", "-q", "--control"]).arg(&ctl).arg("-o").arg(&out));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("//SORTIN DD (line 1): RECFM=VBS"), "{}", stderr(&o));
}

/// `DD DUMMY` (and `DSN=NULLFILE`), as z/OS reads it: an input DD that is DUMMY is empty, an
/// output DD that is DUMMY discards what is written to it, whichever DD it is.
#[test]
fn dummy_dds_are_empty_inputs_and_discarded_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("in.dat");
    std::fs::write(&input, F1.concat()).unwrap();
    let (out, kept) = (d.join("out.dat"), d.join("kept.dat"));
    let step = |sortin: &str, sortout: &str, outfil: &str| {
        format!(
            "//S1 EXEC PGM=SORT\n//SORTIN DD {sortin},RECFM=FB,LRECL=14\n//SORTOUT DD {sortout}\n\
             //KEPT DD DSN={}\n//GONE DD {outfil}\n//SYSIN DD *\n  SORT FIELDS=(11,4,CH,D)\n\
             \x20 OUTFIL FNAMES=(KEPT,GONE)\n/*\n",
            kept.display()
        )
    };
    let mut want: Vec<&str> = F1.to_vec();
    want.sort_by(|x, y| y[10..14].cmp(&x[10..14]));
    let sortin = format!("DSN={}", input.display());
    let sortout = format!("DSN={}", out.display());
    let ctl = d.join("s1.jcl");
    for (sortin, sortout, outfil, sorted) in [
        (sortin.as_str(), sortout.as_str(), "DUMMY", want.concat()),
        (sortin.as_str(), "DUMMY", "DSN=NULLFILE", want.concat()),
        ("DUMMY", sortout.as_str(), "DUMMY", String::new()),
    ] {
        let _ = std::fs::remove_file(&out);
        let _ = std::fs::remove_file(&kept);
        std::fs::write(&ctl, step(sortin, sortout, outfil)).unwrap();
        let o = run(oxsort().args(["sort", "-q", "--control"]).arg(&ctl));
        assert!(o.status.success(), "{sortin} {sortout} {outfil}: {}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), sorted, "{sortin} {sortout}: KEPT");
        if sortout == "DUMMY" {
            assert!(!out.exists());
        } else {
            assert_eq!(std::fs::read_to_string(&out).unwrap(), sorted, "{sortin}: SORTOUT");
        }
    }
}

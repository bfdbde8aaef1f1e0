//! `--dd NAME=PATH`: a DFSORT job's SORTIN (concatenated when repeated) and SORTOUT given by
//! DD name, checked against the same sort given by positional inputs and `-o`.

mod common;
use common::{gen, oxsort, run, stderr};

#[test]
fn sortin_concatenates_and_sortout_names_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    gen(&a, 3000);
    // A second input with other records: records 3000.. of the same generator.
    oxsort_gensort::generate_file(&b, 3000, 2000, oxsort_gensort::Kind::Binary, 1, None).unwrap();
    let control = dir.path().join("ctl");
    std::fs::write(&control, " SORT FIELDS=(1,10,CH,D)\n").unwrap();
    let by_dd = dir.path().join("by-dd");
    let o = run(oxsort()
        .args(["sort", "-q", "--control"])
        .arg(&control)
        .arg(format!("--dd=sortin={}", a.display()))
        .arg(format!("--dd=SORTIN={}", b.display()))
        .arg(format!("--dd=SORTOUT={}", by_dd.display())));
    assert!(o.status.success(), "{}", stderr(&o));
    let positional = dir.path().join("positional");
    let o = run(oxsort()
        .args(["sort", "-q", "--control"])
        .arg(&control)
        .args([&a, &b])
        .arg("-o")
        .arg(&positional));
    assert!(o.status.success(), "{}", stderr(&o));
    let (x, y) = (std::fs::read(&by_dd).unwrap(), std::fs::read(&positional).unwrap());
    assert_eq!(x.len(), 5000 * 100);
    assert!(x == y, "--dd SORTIN a, b differs from the inputs a b");
}

#[test]
fn mistakes_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    gen(&a, 10);
    let out = dir.path().join("out");
    let try_it = |extra: &[String]| {
        let o = run(oxsort().args(["sort", "-q"]).args(extra));
        assert_eq!(o.status.code(), Some(1));
        assert!(!out.exists(), "an output was written");
        stderr(&o)
    };
    let sortin = format!("--dd=SORTIN={}", a.display());
    let sortout = format!("--dd=SORTOUT={}", out.display());
    let e = try_it(&[a.display().to_string(), sortin.clone(), sortout.clone()]);
    assert!(e.contains("inputs are given twice"), "{e}");
    let e = try_it(&[sortin.clone(), sortout.clone(), "--dd=SORTOT=x".into()]);
    assert!(e.contains("--dd SORTOT=x: this job has no DD SORTOT"), "{e}");
    let e = try_it(&[sortin.clone(), "-o".into(), out.display().to_string(), sortout.clone()]);
    assert!(e.contains("output is given twice"), "{e}");
    let e = try_it(&[sortin, "--dd".into(), "SORTOUT".into()]);
    assert!(e.contains("expected NAME=PATH"), "{e}");
}

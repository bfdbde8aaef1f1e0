//! `oxsort sort --timeline FILE.csv`: a sample every 100 ms with the bytes read and written,
//! CPU per kind of thread, memory and the phase; a timeline that cannot be written stops the
//! sort before it starts.

mod common;

use std::path::PathBuf;

use common::{gen, oxsort, run, stderr};

fn workdir() -> tempfile::TempDir {
    // On disk (direct I/O reaches the block layer, which /proc/self/io counts), not tmpfs.
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

#[test]
fn timeline_of_a_two_pass_sort() {
    let dir = workdir();
    let input = dir.path().join("in.dat");
    let n = 2_000_000u64;
    gen(&input, n);
    let out = dir.path().join("out.dat");
    let csv = dir.path().join("t.csv");
    let o = run(oxsort()
        .args(["sort", "--memory", "64M", "--no-progress", "--timeline"])
        .arg(&csv)
        .arg(&input)
        .arg("-o")
        .arg(&out));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} in {header:?}"))
    };
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let t: Vec<f64> = rows.iter().map(|r| r[col("t_s")].parse().unwrap()).collect();
    // A sample every 100 ms, then the last one at the end. The sampler aims at each tick of a
    // fixed clock (t0 + k x 100 ms), so sample k is never early; on a loaded machine a wake-up
    // can be late (and the next gap shorter), so the typical gap is checked closely and the
    // worst one loosely.
    let ticks = &t[..t.len().saturating_sub(1)];
    assert!(ticks.len() >= 2, "too few samples: {t:?}");
    for (k, tk) in ticks.iter().enumerate() {
        assert!(*tk >= k as f64 * 0.1 - 0.002, "sample {k} at {tk} s is early: {t:?}");
    }
    let mut gaps: Vec<f64> = ticks.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|g| *g < 1.0), "sample gaps {gaps:?}");
    gaps.sort_by(f64::total_cmp);
    let median = gaps[gaps.len() / 2];
    assert!((0.09..0.15).contains(&median), "median gap {median} s: {gaps:?}");
    let phases: Vec<&str> = rows.iter().map(|r| r[col("phase")]).collect();
    let mut seen: Vec<&str> = phases.clone();
    seen.dedup();
    // Two passes go through input (runs), merge, and end at done; no phase comes back.
    assert_eq!(seen.first(), Some(&"start"));
    assert_eq!(seen.last(), Some(&"done"));
    assert!(seen.contains(&"input") && seen.contains(&"merge"), "{seen:?}");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "a phase came back: {seen:?}");
    // Storage I/O: the input read once and the runs read back; the runs and the output written.
    let last = rows.last().unwrap();
    let read: u64 = last[col("read_bytes")].parse().unwrap();
    let written: u64 = last[col("write_bytes")].parse().unwrap();
    let bytes = n * 100;
    assert!(read >= 2 * bytes, "read {read} of {bytes}");
    assert!(written >= 2 * bytes, "wrote {written} of {bytes}");
    let cumulative: Vec<u64> = rows.iter().map(|r| r[col("read_bytes")].parse().unwrap()).collect();
    assert!(cumulative.windows(2).all(|w| w[0] <= w[1]));
    // CPU per kind of thread: the engine's named threads show up, and no kind holds more
    // than the process as a whole.
    let total: f64 = rows
        .iter()
        .map(|r| {
            r[col("cpu_user_s")].parse::<f64>().unwrap()
                + r[col("cpu_sys_s")].parse::<f64>().unwrap()
        })
        .sum();
    assert!(total > 0.0);
    // A kind appears once a sample finds a thread of it alive; short-lived ones (the sort
    // workers of a small run) can fall between samples on a loaded machine, so the test asks
    // for the main thread and for some engine worker kind, not for one in particular.
    assert!(header.contains(&"main_user_s"), "{header:?}");
    let workers = ["sort", "output", "verify", "write", "prefault", "io_uring"];
    assert!(
        workers.iter().any(|w| header.contains(&format!("{w}_user_s").as_str())),
        "no engine worker thread in {header:?}"
    );
    for k in header.iter().filter(|h| h.ends_with("_user_s") && **h != "cpu_user_s") {
        let kind: f64 = rows.iter().map(|r| r[col(k)].parse::<f64>().unwrap()).sum();
        // Each /proc figure is in 10 ms ticks, rounded per thread and per sample.
        let slack = 0.05 + 0.01 * rows.len() as f64;
        assert!(kind <= total + slack, "{k} {kind} > {total}");
    }
    let peak: u64 = rows.iter().map(|r| r[col("memory_bytes")].parse().unwrap()).max().unwrap();
    assert!(peak > 16 << 20 && peak < 1 << 30, "peak memory {peak}");
}

#[test]
fn unwritable_timeline_fails_before_the_sort() {
    let dir = workdir();
    let input = dir.path().join("in.dat");
    gen(&input, 1000);
    let out = dir.path().join("out.dat");
    let bad: PathBuf = dir.path().join("no/such/dir/t.csv");
    let o = run(oxsort().args(["sort", "--timeline"]).arg(&bad).arg(&input).arg("-o").arg(&out));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("timeline") && e.contains("no/such/dir/t.csv"), "{e}");
    assert!(!out.exists(), "the sort ran anyway");
}

/// The values of the timeline `csv`'s column `name`, one per sample (`dedup`: runs of equal
/// values once).
fn column(csv: &std::path::Path, name: &str, dedup: bool) -> Vec<String> {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name}"));
    let mut v: Vec<String> = lines.map(|l| l.split(',').nth(col).unwrap().to_string()).collect();
    if dedup {
        v.dedup();
    }
    v
}

/// A JOINKEYS job takes `--timeline` too: its sides' sorts and the join run at once, as one
/// `join` phase, and the samples count what the whole job read and wrote.
#[test]
fn timeline_of_a_join() {
    let dir = workdir();
    let (f1, f2) = (dir.path().join("f1.dat"), dir.path().join("f2.dat"));
    let n = 300_000u64;
    gen(&f1, n);
    gen(&f2, n);
    let ctl = dir.path().join("join.ctl");
    std::fs::write(
        &ctl,
        " JOINKEYS FILE=F1,FIELDS=(1,10,A)\n JOINKEYS FILE=F2,FIELDS=(1,10,A)\n \
         REFORMAT FIELDS=(F1:1,100)\n OPTION COPY\n",
    )
    .unwrap();
    let (out, csv) = (dir.path().join("out.dat"), dir.path().join("t.csv"));
    let o = run(oxsort()
        .args(["sort", "-q", "--no-progress", "--memory", "64M", "--control"])
        .arg(&ctl)
        .arg("--dd")
        .arg(format!("SORTJNF1={}", f1.display()))
        .arg("--dd")
        .arg(format!("SORTJNF2={}", f2.display()))
        .args(["--lrecl", "SORTJNF1=100", "--lrecl", "SORTJNF2=100", "--timeline"])
        .arg(&csv)
        .arg("-o")
        .arg(&out));
    assert!(o.status.success(), "{}", stderr(&o));
    // Both files hold the same keys: every record pairs once.
    assert_eq!(std::fs::metadata(&out).unwrap().len(), n * 100);
    assert_eq!(column(&csv, "phase", true), ["join", "done"]);
    let written: u64 = column(&csv, "write_bytes", false).last().unwrap().parse().unwrap();
    assert!(written >= n * 100, "wrote {written}");
}

/// A table sort takes `--timeline` too, as one `table` phase.
#[test]
fn timeline_of_a_table_sort() {
    let dir = workdir();
    let (input, out, csv) =
        (dir.path().join("t.csv"), dir.path().join("sorted.csv"), dir.path().join("tl.csv"));
    let mut text = String::from("k,v\n");
    for i in 0..200_000u64 {
        text.push_str(&format!("{},row{i}\n", (i * 7919) % 1000));
    }
    std::fs::write(&input, text).unwrap();
    let o = run(oxsort()
        .args(["sort", "-q", "--no-progress", "--by", "k", "--timeline"])
        .arg(&csv)
        .arg(&input)
        .arg("-o")
        .arg(&out));
    assert!(o.status.success(), "{}", stderr(&o));
    let sorted = std::fs::read_to_string(&out).unwrap();
    let keys: Vec<u64> =
        sorted.lines().skip(1).map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
    assert_eq!(keys.len(), 200_000);
    assert!(keys.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(column(&csv, "phase", true), ["table", "done"]);
}

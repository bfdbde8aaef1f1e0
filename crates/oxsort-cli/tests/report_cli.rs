//! The closing report says what happened to the records: read, written, dropped by the filter
//! and as duplicates, and the checksums that tie them; checked against counts and checksums
//! computed here from the input. `--quiet` prints nothing on success.

mod common;

use std::collections::HashSet;
use std::path::Path;

use common::{oxsort, run, stderr};

/// Bytes of a record: the Sort Benchmark's.
const REC: usize = 100;

/// `n` records whose 10-byte key repeats every `distinct` records; the rest of each record
/// carries its position, so every record (and its CRC32) is different.
fn records(n: usize, distinct: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n * REC);
    for i in 0..n {
        // A multiplicative scatter so equal keys are far apart in the input.
        let key = (i * 7919) % distinct;
        let mut r = format!("{key:010}{i:>88}").into_bytes();
        r.extend_from_slice(b"\r\n");
        assert_eq!(r.len(), REC);
        v.extend_from_slice(&r);
    }
    v
}

/// valsort's checksum of `data` (computed by the gensort crate, independent of the engine).
fn checksum(dir: &Path, data: &[u8]) -> u128 {
    let p = dir.join("checksum-of");
    std::fs::write(&p, data).unwrap();
    oxsort_gensort::validate_file(&p, 1, None).unwrap().checksum.value()
}

/// What the report and `--stats=json` said, checked to agree with each other.
#[derive(Debug, PartialEq)]
struct Said {
    read: u64,
    written: u64,
    filtered: u64,
    duplicates: u64,
    sum_in: String,
    sum_out: String,
    sum_dropped: String,
}

/// Sorts with `args`; returns what the report said and the number of passes.
fn sort_and_read_report(input: &Path, out: &Path, args: &[&str]) -> (Said, u64) {
    let o = run(oxsort()
        .arg("sort")
        .arg(input)
        .arg("-o")
        .arg(out)
        .args(["--no-progress", "--stats=json"])
        .args(args));
    let text = stderr(&o);
    assert!(o.status.success(), "{text}");
    let json = text.lines().rev().find(|l| l.starts_with('{')).expect("statistics");
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let said = Said {
        read: v["records"].as_u64().unwrap(),
        written: v["records_written"].as_u64().unwrap(),
        filtered: v["dropped_by_filter"].as_u64().unwrap(),
        duplicates: v["dropped_duplicates"].as_u64().unwrap(),
        sum_in: v["input_checksum"].as_str().unwrap().to_string(),
        sum_out: v["checksum"].as_str().unwrap().to_string(),
        sum_dropped: v["dropped_checksum"].as_str().unwrap().to_string(),
    };
    let lines = [
        format!(
            "Records read: {}, written: {}, dropped: {} (by the filter: {}, as duplicates: {})",
            said.read,
            said.written,
            said.filtered + said.duplicates,
            said.filtered,
            said.duplicates
        ),
        format!(
            "Checksum in: {} = out {} + dropped {}",
            said.sum_in, said.sum_out, said.sum_dropped
        ),
        format!("Records: {}", said.written),
        format!("Checksum: {}", said.sum_out),
    ];
    for l in lines {
        assert!(text.lines().any(|t| t == l), "{l:?} not in\n{text}");
    }
    (said, v["passes"].as_u64().unwrap())
}

#[test]
fn duplicate_removal_reports_what_it_dropped() {
    let d = tempfile::tempdir().unwrap();
    let (n, distinct) = (30_000, 7_000);
    let data = records(n, distinct);
    let input = d.path().join("in.dat");
    std::fs::write(&input, &data).unwrap();
    // The oracle: the first record of each key stays, every later one is dropped.
    let mut seen = HashSet::new();
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    for r in data.chunks(REC) {
        if seen.insert(&r[..10]) {
            kept.extend_from_slice(r)
        } else {
            dropped.extend_from_slice(r)
        }
    }
    let want = Said {
        read: n as u64,
        written: distinct as u64,
        filtered: 0,
        duplicates: (n - distinct) as u64,
        sum_in: format!("{:x}", checksum(d.path(), &data)),
        sum_out: format!("{:x}", checksum(d.path(), &kept)),
        sum_dropped: format!("{:x}", checksum(d.path(), &dropped)),
    };
    let out = d.path().join("out.dat");
    // One pass, and two passes (duplicates dropped while runs form and while merging).
    for (memory, passes) in [("64M", 1), ("1M", 2)] {
        let (said, got_passes) = sort_and_read_report(&input, &out, &["-u", "--memory", memory]);
        assert_eq!(said, want, "--memory {memory}");
        assert_eq!(got_passes, passes, "--memory {memory}");
        assert_eq!(std::fs::metadata(&out).unwrap().len(), (distinct * REC) as u64);
    }
}

#[test]
fn an_include_filter_reports_what_it_dropped() {
    let d = tempfile::tempdir().unwrap();
    let n = 20_000;
    let data = records(n, n); // no duplicates
    let input = d.path().join("in.dat");
    std::fs::write(&input, &data).unwrap();
    // Keep the records whose key's last digit is below 3.
    let ctl = d.path().join("ctl");
    std::fs::write(&ctl, " SORT FIELDS=(1,10,CH,A)\n INCLUDE COND=(10,1,CH,LT,C'3')\n").unwrap();
    let keep = |r: &[u8]| r[9] < b'3';
    let kept: Vec<u8> = data.chunks(REC).filter(|r| keep(r)).flatten().copied().collect();
    let dropped: Vec<u8> = data.chunks(REC).filter(|r| !keep(r)).flatten().copied().collect();
    let want = Said {
        read: n as u64,
        written: (kept.len() / REC) as u64,
        filtered: (dropped.len() / REC) as u64,
        duplicates: 0,
        sum_in: format!("{:x}", checksum(d.path(), &data)),
        sum_out: format!("{:x}", checksum(d.path(), &kept)),
        sum_dropped: format!("{:x}", checksum(d.path(), &dropped)),
    };
    assert!(want.written > 0 && want.filtered > 0);
    let out = d.path().join("out.dat");
    for (memory, passes) in [("64M", 1), ("1M", 2)] {
        let (said, got_passes) = sort_and_read_report(
            &input,
            &out,
            &["--control", ctl.to_str().unwrap(), "--memory", memory],
        );
        assert_eq!(said, want, "--memory {memory}");
        assert_eq!(got_passes, passes, "--memory {memory}");
    }
}

#[test]
fn quiet_prints_nothing_on_success_and_errors_still_print() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    std::fs::write(&input, records(5_000, 1_000)).unwrap();
    let out = d.path().join("out.dat");
    for extra in [&[][..], &["-u", "--memory", "1M"][..]] {
        let o =
            run(oxsort().arg("sort").arg(&input).arg("-o").arg(&out).arg("--quiet").args(extra));
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!((o.stdout.len(), stderr(&o)), (0, String::new()), "{extra:?}");
        assert!(out.exists());
    }
    let o = run(oxsort().args(["sort", "--quiet", "-o"]).arg(&out).arg(d.path().join("missing")));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing"), "{}", stderr(&o));
}

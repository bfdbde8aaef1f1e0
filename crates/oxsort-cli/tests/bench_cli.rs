//! `oxsort bench` (the README's main job) at a small size: it generates, sorts and validates,
//! measures the disk itself (read, write, both at once), prints the floor of the sort's passes
//! and one verdict line whose ratio is the printed sort time over the printed floor; it leaves
//! nothing in its directory.

mod common;
use common::{oxsort, run, stderr};

/// The first number after `label` at the start of a line (after the two-space indent).
fn figure(text: &str, label: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no line {label:?} in:\n{text}"));
    line.trim_start()[label.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches('x')
        .parse()
        .unwrap()
}

/// The disk line's read, write and both-at-once seconds.
fn disk(text: &str) -> (f64, f64, f64) {
    let line = text.lines().find(|l| l.trim_start().starts_with("disk")).expect("a disk line");
    let nums: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    (nums[0], nums[1], nums[2])
}

fn bench(extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let o = run(oxsort()
        .args(["bench", "--records", "300000", "--runs", "1", "--dir"])
        .arg(dir.path())
        .args(extra));
    let text = stderr(&o);
    assert!(o.status.success(), "{text}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "left files behind");
    assert!(text.contains("SUCCESS - all records are in order"), "{text}");
    text
}

#[test]
fn one_pass_is_judged_against_floor1() {
    let text = bench(&[]);
    let (read, w, m) = disk(&text);
    assert!(read > 0.0 && w > 0.0 && m > 0.0, "{text}");
    let floor1 = figure(&text, "floor1");
    assert!((floor1 - (read + w)).abs() < 0.0015, "floor1 {floor1} is not read {read} + write {w}");
    let sort = figure(&text, "sort");
    let ratio = figure(&text, "verdict:");
    assert!((ratio - sort / floor1).abs() / ratio < 0.05, "verdict {ratio} vs {sort} / {floor1}");
    assert!(text.contains("1 pass"), "{text}");
}

#[test]
fn two_passes_are_judged_against_floor2() {
    // 30 MB with 8 MiB of memory: several runs, merged in a second pass.
    let text = bench(&["--memory", "8M"]);
    assert!(text.contains("2 passes"), "{text}");
    let floor2 = figure(&text, "floor2");
    let (r, w, m) = disk(&text);
    let want = 2.0 * m.min(r + w);
    assert!((floor2 - want).abs() < 0.003, "floor2 {floor2}, want 2 x min({m}, {r} + {w})");
    let ratio = figure(&text, "verdict:");
    assert!((ratio - figure(&text, "sort") / floor2).abs() / ratio < 0.05, "{text}");
    assert!(text.contains("the disk's floor2"), "{text}");
}

#[test]
fn a_missing_dir_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("not").join("yet");
    let o = run(oxsort()
        .args(["bench", "--records", "20000", "--runs", "1", "--no-floor", "--dir"])
        .arg(&data));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0, "left files behind");
}

#[test]
fn the_page_cache_is_said_either_way() {
    let text = bench(&["--no-floor"]);
    let dropped = std::fs::OpenOptions::new().write(true).open("/proc/sys/vm/drop_caches").is_ok();
    let want =
        if dropped { "page cache dropped before each run" } else { "page cache not dropped" };
    assert!(text.contains(want), "expected {want:?} in:\n{text}");
}

//! Limits a sort must not trip over: lines longer than a read chunk (GNU sort reads them; a
//! line longer than the budget allows is refused with the true number), and a thread count far
//! above the cores (capped with a note before any work, nothing left behind).

mod common;

use std::path::Path;

use common::{gen, oxsort, run, stderr};

/// A line longer than the chunks a sort reads (16 MiB at most) by 1 MiB.
const LONG_LINE: usize = 17 << 20;

/// Short lines around two long ones; returns the text and the text sorted as `LC_ALL=C sort`.
fn text_with_long_lines() -> (Vec<u8>, Vec<u8>) {
    let mut lines: Vec<Vec<u8>> = (0..2000u32)
        .map(|i| {
            format!(
                "{:08}{}",
                i.wrapping_mul(2_654_435_761) % 100_000_000,
                "s".repeat((i % 50) as usize)
            )
            .into_bytes()
        })
        .collect();
    let mut long = b"5".to_vec();
    long.resize(LONG_LINE, b'L');
    lines.insert(700, long);
    let mut other = b"2".to_vec();
    other.resize(LONG_LINE / 2 * 3, b'M');
    lines.insert(1500, other);
    let text: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
    lines.sort();
    let sorted = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
    (text, sorted)
}

#[test]
fn lines_longer_than_a_chunk_are_sorted_in_one_pass_and_two() {
    let d = tempfile::tempdir().unwrap();
    let (text, sorted) = text_with_long_lines();
    let input = d.path().join("in.txt");
    std::fs::write(&input, &text).unwrap();
    // 96M holds everything (one pass); at 48M the input (43 MB) takes two.
    for memory in ["96M", "48M"] {
        let out = d.path().join(format!("out-{memory}.txt"));
        let o = run(oxsort()
            .args(["sort", "--lines", "--memory", memory, "--threads", "2", "-q", "--no-progress"])
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .arg("--temp-dir")
            .arg(d.path()));
        assert!(o.status.success(), "--memory {memory}: {}", stderr(&o));
        assert!(std::fs::read(&out).unwrap() == sorted, "--memory {memory}: wrong output");
    }
    // Through GNU's door, as GNU sort reads them.
    let o = run(oxsort().arg("gnu").arg(&input));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == sorted, "oxsort gnu: wrong output");
}

#[test]
fn a_line_longer_than_the_budget_holds_is_refused_with_the_true_numbers() {
    let d = tempfile::tempdir().unwrap();
    let (text, _) = text_with_long_lines();
    let input = d.path().join("in.txt");
    std::fs::write(&input, &text).unwrap();
    let o = run(oxsort()
        .args(["sort", "--lines", "--memory", "16M", "-q", "--no-progress"])
        .arg(&input)
        .arg("-o")
        .arg(d.path().join("out.txt")));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // The 701st line, and the most this budget holds (less than the line's length).
    assert!(err.contains("record 701 is longer than") && err.contains("budget"), "{err}");
    let most: u64 =
        err.split("longer than ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(most < LONG_LINE as u64 && most > (8 << 20), "{err}");
    assert!(!d.path().join("out.txt").exists());
}

#[test]
fn a_thread_count_far_above_the_cores_is_capped_before_any_work() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    gen(&input, 20_000);
    let temp = d.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let out = d.path().join("out.dat");
    let o = run(oxsort()
        .args(["sort", "--threads", "100000", "--memory", "8M", "--no-progress"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .arg("--temp-dir")
        .arg(&temp));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("100000 threads asked for"), "{err}");
    assert!(err.contains("SUCCESS"), "{err}");
    assert_eq!(std::fs::read_dir(&temp).unwrap().count(), 0, "left in the temp directory");
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 2_000_000);
    assert!(Path::new(&out).exists());
}

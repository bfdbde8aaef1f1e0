//! The memory budget holds: a sort's peak memory (resident set plus hugetlb pool pages, as
//! `--stats` reports it) stays within `--memory` plus the process's own code, stacks and rings
//! (16 MiB), at budgets of 32 to 256 MiB (`bench/ab.sh` records 1 GiB), for fixed records, lines and typed keys, in one
//! pass and in two.

mod common;

use std::path::Path;

use common::{gen, oxsort, run, stderr};
use oxsort_testkit::{seed, Rng};

/// What the process itself may hold beyond the budget: code, thread stacks, io_uring rings.
const PROCESS_ALLOWANCE: u64 = 16 << 20;

/// `bytes` of lines of 10 to 200 bytes.
fn write_lines(path: &Path, bytes: u64, rng: &mut Rng) {
    let mut out = Vec::with_capacity(bytes as usize + 256);
    while (out.len() as u64) < bytes {
        let len = 10 + rng.below(191) as usize;
        for _ in 0..len - 1 {
            out.push(b' ' + rng.below(95) as u8);
        }
        out.push(b'\n');
    }
    std::fs::write(path, out).unwrap();
}

/// Sorts with `args` and returns (peak memory, passes) from `--stats=json`.
fn peak_of(args: &[&str], input: &Path, out: &Path) -> (u64, u64) {
    let o = run(oxsort()
        .arg("sort")
        .arg(input)
        .arg("-o")
        .arg(out)
        .args(args)
        .args(["--stats=json", "--no-progress"]));
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let text = stderr(&o);
    let json = text.lines().rev().find(|l| l.starts_with('{')).expect("statistics");
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    (v["peak_rss"].as_u64().unwrap(), v["passes"].as_u64().unwrap())
}

#[test]
fn peak_memory_stays_within_the_budget_at_every_size() {
    let mut rng = Rng::new(seed());
    let d = tempfile::tempdir().unwrap();
    let ctl = d.path().join("typed.ctl");
    std::fs::write(&ctl, " SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)\n").unwrap();
    let ctl = ctl.to_str().unwrap().to_string();
    let out = d.path().join("out");
    let mut checked = 0;
    for mib in [32u64, 64, 128, 256] {
        let budget = mib << 20;
        let memory = format!("{mib}M");
        // A quarter of the budget sorts in one pass; one and a half times it needs two.
        for (share, passes) in [(1u64, 1u64), (6, 2)] {
            let bytes = budget * share / 4;
            let fixed = d.path().join("fixed");
            gen(&fixed, bytes / 100);
            let lines = d.path().join("lines");
            write_lines(&lines, bytes, &mut rng);
            let cases: [(&str, &Path, Vec<&str>); 3] = [
                ("fixed", &fixed, vec!["--memory", &memory]),
                ("typed", &fixed, vec!["--memory", &memory, "--control", &ctl]),
                ("lines", &lines, vec!["--memory", &memory, "--lines"]),
            ];
            for (what, input, args) in cases {
                let (peak, got) = peak_of(&args, input, &out);
                assert_eq!(got, passes, "{what} at {memory}: passes");
                assert!(
                    peak <= budget + PROCESS_ALLOWANCE,
                    "{what} at {memory}, {passes} pass(es): peak {} MiB over the budget's {} MiB",
                    peak >> 20,
                    (budget + PROCESS_ALLOWANCE) >> 20
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 24);
}

#[test]
fn the_least_budget_reported_is_one_that_works() {
    let d = tempfile::tempdir().unwrap();
    let (input, out) = (d.path().join("in"), d.path().join("out"));
    gen(&input, 2000);
    for extra in [&[][..], &["--lines"][..]] {
        let o = run(oxsort()
            .arg("sort")
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .args(["--memory", "1K", "--no-progress"])
            .args(extra));
        assert_eq!(o.status.code(), Some(1));
        let e = stderr(&o);
        let least: u64 = e
            .split("needs at least ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no least budget in {e}"));
        let at = |m: u64| {
            run(oxsort()
                .arg("sort")
                .arg(&input)
                .arg("-o")
                .arg(&out)
                .args(["--memory", &m.to_string(), "--no-progress"])
                .args(extra))
        };
        let o = at(least);
        assert!(o.status.success(), "{extra:?} at the least budget {least}: {}", stderr(&o));
        let below = at(least - 4096);
        assert!(stderr(&below).contains("is too small"), "{extra:?}: {}", stderr(&below));
    }
}

//! The memory budget holds: a sort's peak memory (resident set plus hugetlb pool pages held at
//! the same moment, as `--stats` reports it) stays within `--memory` plus what the process holds
//! whatever it sorts (its code and data, measured as the peak of a sort of one line: some 12 MiB
//! for a debug build) and the runtime's slack beyond that (8 MiB), at budgets of 32 to 256 MiB
//! (`bench/ab.sh` records 1 GiB), for fixed records, lines and typed keys, in one pass and in
//! two; for every key kind when prefixes tie; and `explain` says what a sort uses.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{gen, oxsort, run, stderr};
use oxsort_testkit::{seed, Rng};

/// What a sort may hold beyond its budget and the process's base (see [`base_of`]): its
/// threads' stacks as deep as a big sort takes them, io_uring rings, the C allocator's free
/// lists between phases.
const RUNTIME_SLACK: u64 = 8 << 20;

/// How far a sort's own memory (its peak less the process's base) may exceed what `explain`
/// says it uses: more pieces in flight when a thread waits for a core on a loaded machine.
const EXPLAIN_SLACK: u64 = 8 << 20;

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

/// A file of one 100-byte line in `dir` (a record of every shape the tests sort): its sort's
/// peak is what the process holds whatever it sorts.
fn tiny_input(dir: &Path) -> std::path::PathBuf {
    let tiny = dir.join("tiny");
    std::fs::write(&tiny, format!("{}\n", "a".repeat(99))).unwrap();
    tiny
}

/// The peak of a sort of [`tiny_input`] with `args`: the process's base, its code (11 MiB of a
/// debug build's pages) and data.
fn base_of(args: &[&str], dir: &Path) -> u64 {
    peak_of(args, &tiny_input(dir), &dir.join("tiny.out")).0
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
                let base = base_of(&args, d.path());
                let (peak, got) = peak_of(&args, input, &out);
                assert_eq!(got, passes, "{what} at {memory}: passes");
                assert!(
                    peak <= budget + base + RUNTIME_SLACK,
                    "{what} at {memory}, {passes} pass(es): peak {} MiB over the budget's {} MiB \
                     (the process's base {} MiB and {} MiB of slack)",
                    peak >> 20,
                    (budget + base + RUNTIME_SLACK) >> 20,
                    base >> 20,
                    RUNTIME_SLACK >> 20
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

/// Runs `cmd` (its output to `/dev/null`) and returns its exit status and its peak resident set
/// (`VmHWM`, read from `/proc` every few milliseconds while it runs: it only grows, and a sort
/// peaks while it holds a load, long before it exits). Not `wait4`'s `ru_maxrss`: the kernel
/// folds the spawning process's own high-water mark into the child's at `exec`, and the test
/// process holds big inputs. Hugetlb pool pages are not part of `VmHWM`: the child is kept off
/// the pool.
fn child_peak(cmd: &mut Command) -> (bool, u64) {
    let mut child = cmd
        .env("OXSORT_HUGETLB", "off")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("oxsort runs");
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    loop {
        if let Ok(s) = std::fs::read_to_string(&status) {
            let hwm = s.lines().find_map(|l| l.strip_prefix("VmHWM:"));
            if let Some(kib) = hwm.and_then(|v| v.split_whitespace().next()?.parse().ok()) {
                peak_kib = peak_kib.max(kib);
            }
        }
        if let Some(exit) = child.try_wait().expect("waiting for oxsort") {
            assert!(peak_kib > 0, "no memory reading of {status}");
            return (exit.success(), peak_kib << 10);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// `n` gensort -a records: ten key characters, two blanks, the record number in 32 hex digits
/// (leading zeros), two blanks, filler, CR LF. As lines, every key from the second field on
/// (`-k2`) ties over its first 20-odd bytes; as 100-byte records, so does a key on the number.
fn ascii_records(path: &Path, n: u64) {
    oxsort_gensort::generate_file(path, 0, n, oxsort_gensort::Kind::Ascii, 1, None).unwrap();
}

#[test]
fn every_key_kind_stays_within_the_budget_when_prefixes_tie() {
    let d = tempfile::tempdir().unwrap();
    let (input, out) = (d.path().join("ascii"), d.path().join("out"));
    // 60 MB: two passes at 32 MiB, a load of tied keys in every run.
    ascii_records(&input, 600_000);
    let budget = 32u64 << 20;
    let sort_cases: [&[&str]; 5] = [
        &["--lines", "-k2"],
        &["--lines", "-k2n"],
        &["--lines", "-k2,2"],
        &["--record-size", "100", "--fields", "13,32,CH,A"],
        &["--record-size", "100", "--fields", "13,32,CH,A,1,10,BI,D"],
    ];
    for args in sort_cases {
        let args = [&["--memory", "32M"][..], args].concat();
        let base = base_of(&args, d.path());
        let (peak, passes) = peak_of(&args, &input, &out);
        assert_eq!(passes, 2, "{args:?}");
        assert!(
            peak <= budget + base + RUNTIME_SLACK,
            "{args:?} at 32M: peak {} MiB over {} MiB (base {} MiB)",
            peak >> 20,
            (budget + base + RUNTIME_SLACK) >> 20,
            base >> 20
        );
    }
    // GNU sort's command line, in the C locale and collated where the locale is installed.
    let collated = Command::new("locale").arg("-a").output().is_ok_and(|o| {
        String::from_utf8_lossy(&o.stdout).lines().any(|l| l.eq_ignore_ascii_case("en_US.utf8"))
    });
    let locales: &[&str] = if collated { &["C", "en_US.UTF-8"] } else { &["C"] };
    for locale in locales {
        for args in [&["-k2"][..], &["-f", "-k2"], &["-k2,2", "-k1,1"]] {
            let gnu = |input: &Path| {
                child_peak(
                    oxsort()
                        .arg("gnu")
                        .args(args)
                        .args(["-S", "32M", "-o"])
                        .arg(&out)
                        .arg(input)
                        .env("LC_ALL", locale),
                )
            };
            let (_, base) = gnu(&tiny_input(d.path()));
            let (ok, peak) = gnu(&input);
            assert!(ok, "gnu {args:?} in {locale}");
            assert!(
                peak <= budget + base + RUNTIME_SLACK,
                "gnu {args:?} -S 32M in {locale}: peak {} MiB over {} MiB (base {} MiB)",
                peak >> 20,
                (budget + base + RUNTIME_SLACK) >> 20,
                base >> 20
            );
        }
    }
}

/// Bytes from `oxsort explain`'s "memory use   input phase N UNIT" line.
fn explained_input_memory(text: &str) -> u64 {
    let line = text.lines().find(|l| l.contains("input phase")).expect("a memory line");
    let rest = line.split("input phase ").nth(1).unwrap();
    let mut words = rest.split([' ', ',']);
    let number: f64 = words.next().unwrap().parse().unwrap();
    let unit = match words.next().unwrap() {
        "B" => 1u64,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        u => panic!("unit {u} in {line}"),
    };
    (number * unit as f64) as u64
}

#[test]
fn explain_shows_the_memory_a_small_sort_uses() {
    let mut rng = Rng::new(seed());
    let d = tempfile::tempdir().unwrap();
    let (fixed, lines, out) = (d.path().join("fixed"), d.path().join("lines"), d.path().join("o"));
    gen(&fixed, 300_000);
    write_lines(&lines, 30 << 20, &mut rng);
    // The default budget (a share of the machine's memory) is far above what 30 MB fill.
    // What the process holds besides the sort's buffers (its own code and data, thread stacks,
    // the allocator's arenas), measured as the peak of a sort of one line and taken off each
    // peak below.
    let base = base_of(&["--lines"], d.path());
    let cases: [(&Path, &[&str]); 3] =
        [(&fixed, &[]), (&lines, &["--lines"]), (&lines, &["--lines", "-k2"])];
    for (input, args) in cases {
        let o = run(oxsort().arg("explain").arg(input).args(args));
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let explained = explained_input_memory(&String::from_utf8_lossy(&o.stdout));
        let (peak, _) = peak_of(args, input, &out);
        let sort = peak.saturating_sub(base);
        assert!(
            sort <= explained + EXPLAIN_SLACK && explained <= 2 * peak,
            "{args:?}: explain says {} MiB, the sort peaked at {} MiB over the process's {} MiB",
            explained >> 20,
            sort >> 20,
            base >> 20
        );
    }
}

//! Quick wall-clock timing of the entry sorts (minimum of a few runs), for tuning by hand:
//! `cargo run --release -p oxsort-kernels --example timing -- [n] [pattern] [reps]`,
//! where `pattern` is one of oxsort-testkit's pattern names (default `random`).
#![allow(missing_docs)]

use oxsort_kernels::{
    make_entry, par_sort_entries, par_sort_entries_with_buffer, sort_entries,
    sort_entries_with_buffer, Entry,
};
use oxsort_testkit::{pattern_keys, Pattern, Rng};
use std::time::Instant;
use voracious_radix_sort::RadixSort as _;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000_000);
    let name = args.get(2).map(String::as_str).unwrap_or("random");
    let Some(pattern) = Pattern::from_name(name) else {
        let names: Vec<&str> = Pattern::ALL.iter().map(|p| p.name()).collect();
        eprintln!("unknown pattern {name:?}; one of: {}", names.join(", "));
        std::process::exit(2);
    };
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3);
    let keys = pattern_keys(pattern, n, &mut Rng::new(0x1234_5678_9ABC_DEF1));
    let data: Vec<Entry> = keys.iter().zip(0u64..).map(|(k, i)| make_entry(k, i)).collect();
    drop(keys);
    let mut want = data.clone();
    want.sort_unstable();
    let mut buf = Vec::new();
    let time = |name: &str, f: &mut dyn FnMut(&mut Vec<Entry>)| {
        let (mut best, mut best_cpu) = (f64::MAX, f64::MAX);
        for _ in 0..reps {
            let mut v = data.clone();
            let (t, c) = (Instant::now(), cpu_time());
            f(&mut v);
            best_cpu = best_cpu.min(cpu_time() - c);
            best = best.min(t.elapsed().as_secs_f64());
            assert!(v == want, "{name}: wrong order");
        }
        println!(
            "{name:<24} wall {:8.1} ms ({:5.1} M/s)  cpu {:8.1} ms",
            best * 1e3,
            n as f64 / best / 1e6,
            best_cpu * 1e3
        );
    };
    let only = std::env::var("ONLY").unwrap_or_default();
    let time = |name: &str, f: &mut dyn FnMut(&mut Vec<Entry>)| {
        if only.is_empty() || only.split(',').any(|o| o == name) {
            time(name, f)
        }
    };
    time("oxsort_seq", &mut |v| sort_entries(v));
    time("oxsort_seq_buf", &mut |v| sort_entries_with_buffer(v, &mut buf));
    time("oxsort_par2", &mut |v| par_sort_entries(v, 2));
    time("oxsort_par2_buf", &mut |v| par_sort_entries_with_buffer(v, &mut buf, 2));
    time("voracious_seq", &mut |v| v.voracious_sort());
    time("voracious_mt2", &mut |v| v.voracious_mt_sort(2));
    time("std_sort_unstable", &mut |v| v.sort_unstable());
}

/// CPU time of the whole process (all threads), in seconds.
fn cpu_time() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

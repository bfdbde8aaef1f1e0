//! Micro-benchmark of finding where lines end: GB/s of [`oxsort_kernels::line_ends`] (one
//! compare per 64 bytes, a bit per terminator) against `memchr::memchr_iter` (a search from each
//! line's start), which the engine used before, on lines of 10-200 bytes.
//!
//! `nice -n 19 cargo run --release -p oxsort-kernels --example line_ends -- [MiB] [reps]`
//! (defaults: 16 MiB, a chunk of the input phase, and 9 repetitions). Prints the fastest and
//! the median repetition of each.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (mib, reps) = (arg(1, 16), arg(2, 9));
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    // Printable lines of 10-200 bytes, each ended by '\n' (as `gen_lines` writes them).
    let len = mib << 20;
    let mut data = Vec::with_capacity(len + 256);
    while data.len() < len {
        let n = 9 + (next() % 191) as usize;
        data.extend((0..n).map(|_| b' ' + (next() % 95) as u8));
        data.push(b'\n');
    }
    let want: Vec<u32> = memchr::memchr_iter(b'\n', &data).map(|i| i as u32 + 1).collect();
    println!("{} bytes, {} lines, {reps} repetitions", data.len(), want.len());
    let time_of = |name: &str, f: &dyn Fn(&mut Vec<u32>)| {
        let mut out = Vec::with_capacity(want.len());
        let mut gbs: Vec<f64> = (0..reps)
            .map(|_| {
                out.clear();
                let t = Instant::now();
                f(black_box(&mut out));
                let s = t.elapsed().as_secs_f64();
                assert_eq!(out, want, "{name}: wrong offsets");
                data.len() as f64 / s / 1e9
            })
            .collect();
        gbs.sort_by(|a, b| b.total_cmp(a));
        println!("{name:>12}: best {:6.2} GB/s, median {:6.2} GB/s", gbs[0], gbs[reps / 2]);
    };
    time_of("memchr_iter", &|out| {
        out.extend(memchr::memchr_iter(b'\n', &data).map(|i| i as u32 + 1));
    });
    time_of("line_ends", &|out| oxsort_kernels::line_ends(&data, b'\n', 0, out));
}

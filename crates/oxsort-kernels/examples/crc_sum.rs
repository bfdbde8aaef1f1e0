//! Micro-benchmark of the valsort checksum: ns per record for `crc32fast::hash` called once per
//! record against [`oxsort_kernels::crc32_sum_fixed`] (records in one buffer) and
//! [`oxsort_kernels::crc32_sum`] (a sequence of record slices).
//!
//! `nice -n 19 cargo run --release -p oxsort-kernels --example crc_sum -- [records] [size] [reps]`
//! (defaults: 100000 records of 100 bytes, 7 repetitions; 10 MB, so the data mostly stays in
//! cache and the CRC itself is measured). Prints the fastest and the median repetition of each.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (n, r, reps) = (arg(1, 100_000), arg(2, 100), arg(3, 7));
    // xorshift bytes: contents do not change a CRC's cost, but keep them unpredictable anyway.
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let data: Vec<u8> = (0..n * r).map(|_| next() as u8).collect();
    let want: u128 = data.chunks_exact(r).map(|x| crc32fast::hash(x) as u128).sum();
    println!("{n} records of {r} bytes, {reps} repetitions");
    // `f` sums `count` records whose sum must be `want`.
    let time_of = |name: &str, count: usize, want: u128, f: &dyn Fn() -> u128| {
        let mut ns: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                let got = black_box(f());
                let el = t.elapsed().as_nanos() as f64 / count as f64;
                assert_eq!(got, want, "{name}: wrong sum");
                el
            })
            .collect();
        ns.sort_by(f64::total_cmp);
        println!(
            "{name:<34} min {:6.2} ns/record   median {:6.2} ns/record",
            ns[0],
            ns[ns.len() / 2]
        );
    };
    let time = |name: &str, f: &dyn Fn() -> u128| time_of(name, n, want, f);
    let d = black_box(&data);
    time("crc32fast::hash per record", &|| {
        d.chunks_exact(r).map(|x| crc32fast::hash(x) as u128).sum()
    });
    time("crc32_sum_fixed (interleaved)", &|| oxsort_kernels::crc32_sum_fixed(d, r));
    time("crc32_sum (slices)", &|| oxsort_kernels::crc32_sum(d.chunks_exact(r)));
    // Lines of 10 to 200 bytes (as `bench/gnu.sh` writes them): lengths that change from
    // record to record, about `n` of them over the same bytes.
    let mut cuts = vec![0usize];
    while let Some(&at) = cuts.last().filter(|&&at| at < data.len()) {
        cuts.push((at + 10 + (next() % 191) as usize).min(data.len()));
    }
    let lines: Vec<&[u8]> = cuts.windows(2).map(|w| &data[w[0]..w[1]]).collect();
    let want_lines: u128 = lines.iter().map(|x| crc32fast::hash(x) as u128).sum();
    let name = format!("crc32_sum ({} lines of 10-200 B)", lines.len());
    time_of(&name, lines.len(), want_lines, &|| {
        oxsort_kernels::crc32_sum(black_box(&lines).iter().copied())
    });
}

//! Entry prefixes of a GNU `-k` key over the lines of a file, built two ways: by the column
//! writer the engine uses (`SortKey::prefix`, through `ColumnKey`) and by the general
//! normalizer (`KeySpec::normalize_prefix`, the path before it). Prints nanoseconds per
//! prefix for each, and checks that both build the same bytes.
//!
//! `cargo run --release -p oxsort-lang --example prefix_speed FILE [MAX_BYTES]`, with
//! `KEYS="-t, -k1,1"` in the environment for keys other than `-t, -k2,2n -k1,1` (GNU's last
//! resort included unless `-s`).
use std::time::Instant;

use oxsort_format::{Prefix, RecordLayout, SortSpec, PREFIX_BYTES};
use oxsort_lang::{GnuArgs, GnuEnv};

/// Prefixes built per measurement, at least (the file's lines are gone over again as needed).
const MIN_PREFIXES: usize = 20_000_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: prefix_speed FILE [MAX_BYTES]");
        std::process::exit(2);
    };
    let max: usize = args.get(2).map_or(200 << 20, |s| s.parse().expect("MAX_BYTES: a number"));
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let data = &data[..data.len().min(max)];
    let whole = data.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let lines: Vec<&[u8]> = data[..whole].split_inclusive(|&b| b == b'\n').collect();
    assert!(!lines.is_empty(), "{path}: no whole line in the first {max} bytes");
    let words: Vec<String> = match std::env::var("KEYS") {
        Ok(k) => k.split(' ').map(String::from).collect(),
        Err(_) => ["-t,", "-k2,2n", "-k1,1"].map(String::from).to_vec(),
    };
    let gnu = GnuArgs::parse(&words, &GnuEnv::default()).expect("KEYS: GNU sort key flags");
    let spec = gnu.c_locale_options().key_spec();
    let keys = SortSpec { key: Some(spec.clone()), ..SortSpec::with_layout(RecordLayout::LINES) }
        .compile()
        .expect("the key compiles");
    let mut scratch = Vec::new();
    let column = |l: &[u8], scratch: &mut Vec<u8>| keys.prefix(l, scratch).unwrap();
    let general = |l: &[u8], scratch: &mut Vec<u8>| {
        scratch.clear();
        spec.normalize_prefix(&l[..l.len() - 1], scratch, PREFIX_BYTES).unwrap();
        let mut p = [0; PREFIX_BYTES];
        let n = scratch.len().min(PREFIX_BYTES);
        p[..n].copy_from_slice(&scratch[..n]);
        p
    };
    let repeat = MIN_PREFIXES.div_ceil(lines.len());
    let n = (lines.len() * repeat) as f64;
    for round in 0..3 {
        let mut sums = Vec::new();
        for (name, build) in
            [("column", &column as &dyn Fn(&[u8], &mut Vec<u8>) -> Prefix), ("general", &general)]
        {
            let t = Instant::now();
            let mut sum = 0u64;
            for _ in 0..repeat {
                for l in &lines {
                    let p = build(l, &mut scratch);
                    sum = sum
                        .wrapping_mul(31)
                        .wrapping_add(u64::from_le_bytes(p[..8].try_into().unwrap()));
                }
            }
            let ns = t.elapsed().as_nanos() as f64 / n;
            println!("round {round}: {name:8} {ns:6.1} ns per prefix ({} lines)", lines.len());
            sums.push(sum);
        }
        assert_eq!(sums[0], sums[1], "the two ways built different prefixes");
    }
}

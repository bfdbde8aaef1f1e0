//! Times the entry prefix of `-t, -k2,2n -k1,1` (with GNU's last resort) over the lines of a
//! file: `cargo run --release -p oxsort-format --example prefix_speed FILE [MAX_BYTES]`
//! (`KEYS="-t, -k1,1"` in the environment for other keys).
use std::time::Instant;

use oxsort_format::{parse_gnu_args, RecordLayout, SortSpec};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let max: usize = args.get(2).map_or(200 << 20, |s| s.parse().unwrap());
    let data = std::fs::read(&args[1]).unwrap();
    let data = &data[..data.len().min(max)];
    let data = &data[..=data.iter().rposition(|&b| b == b'\n').unwrap()];
    let words: Vec<String> = match std::env::var("KEYS") {
        Ok(k) => k.split(' ').map(String::from).collect(),
        Err(_) => ["-t,", "-k2,2n", "-k1,1"].map(String::from).to_vec(),
    };
    let gnu = parse_gnu_args(&words).unwrap();
    let spec =
        SortSpec { key: Some(gnu.key), ..SortSpec::with_layout(RecordLayout::Delimited(b'\n')) };
    let keys = spec.compile().unwrap();
    let lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
    let mut scratch = Vec::new();
    for round in 0..3 {
        let t = Instant::now();
        let mut x = 0u64;
        // At least 20 million prefixes a round, for a profile.
        let repeat = (20_000_000 / lines.len()).max(1);
        for _ in 0..repeat {
            for l in &lines {
                let p = keys.prefix(l, &mut scratch).unwrap();
                x = x.wrapping_add(u64::from(p[0]) + u64::from(p[9]));
            }
        }
        let ns = t.elapsed().as_nanos() as f64 / (lines.len() * repeat) as f64;
        println!("round {round}: {} lines, {ns:.1} ns per prefix ({x})", lines.len());
    }
}

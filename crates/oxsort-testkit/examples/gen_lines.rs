//! Writes random text lines of 10 to 200 bytes (uniform length) until BYTES bytes, for the
//! newline-delimited benchmark: `gen_lines BYTES SEED [PERCENT] > FILE`.
//!
//! The characters are printable ASCII (space to `~`); with PERCENT, about that many percent of
//! them are two-byte UTF-8 letters of Latin-1 (`À` to `ÿ`, without `×` and `÷`), as in
//! European text.

use std::io::Write;

use oxsort_testkit::Rng;

/// The two-byte letters of Latin-1: U+00C0 to U+00FF but the two signs among them.
fn latin1_letters() -> Vec<[u8; 2]> {
    (0xC0u32..=0xFF)
        .filter(|&c| c != 0xD7 && c != 0xF7)
        .filter_map(char::from_u32)
        .map(|c| {
            let mut b = [0u8; 2];
            c.encode_utf8(&mut b);
            b
        })
        .collect()
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let bytes: u64 =
        args.next().and_then(|a| a.parse().ok()).expect("usage: gen_lines BYTES [SEED] [PERCENT]");
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let percent: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0).min(100);
    let letters = latin1_letters();
    let mut rng = Rng::new(seed);
    let mut out = std::io::BufWriter::with_capacity(8 << 20, std::io::stdout().lock());
    let mut line = Vec::with_capacity(256);
    let mut written = 0u64;
    while written < bytes {
        let len = 10 + rng.below(191) as usize;
        line.clear();
        while line.len() < len {
            let v = rng.next_u64();
            if percent > 0 {
                // One character per draw: a letter with PERCENT percent odds.
                if line.len() + 2 <= len && v % 100 < percent {
                    line.extend_from_slice(&letters[(v >> 8) as usize % letters.len()]);
                } else {
                    line.push(b' ' + ((v >> 8) as u8 % 95));
                }
                continue;
            }
            for k in 0..8 {
                if line.len() < len {
                    // Printable ASCII: space to '~'.
                    line.push(b' ' + ((v >> (8 * k)) as u8 % 95));
                }
            }
        }
        line.push(b'\n');
        let take = line.len().min((bytes - written) as usize);
        out.write_all(&line[..take])?;
        written += take as u64;
    }
    out.flush()
}

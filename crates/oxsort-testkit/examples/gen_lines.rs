//! Writes random text lines of 10 to 200 printable bytes (uniform length) until BYTES bytes,
//! for the newline-delimited benchmark: `gen_lines BYTES SEED > FILE`.

use std::io::Write;

use oxsort_testkit::Rng;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let bytes: u64 =
        args.next().and_then(|a| a.parse().ok()).expect("usage: gen_lines BYTES [SEED]");
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let mut rng = Rng::new(seed);
    let mut out = std::io::BufWriter::with_capacity(8 << 20, std::io::stdout().lock());
    let mut line = Vec::with_capacity(256);
    let mut written = 0u64;
    while written < bytes {
        let len = 10 + rng.below(191) as usize;
        line.clear();
        while line.len() < len {
            let v = rng.next_u64();
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

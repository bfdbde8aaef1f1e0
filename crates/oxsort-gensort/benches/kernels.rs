//! Per-core kernel speeds: record generation (each kind), CRC-32 per 100-byte record, and
//! validation of in-memory records. A plain timing binary (`cargo bench -p oxsort-gensort`).

use std::hint::black_box;
use std::time::Instant;

use oxsort_gensort::{generate, validate_records, Checksum, Kind};

const RECORDS: usize = 81_920;
const ROUNDS: usize = 40;

fn rate(label: &str, mut f: impl FnMut()) {
    f();
    let t = Instant::now();
    for _ in 0..ROUNDS {
        f();
    }
    let secs = t.elapsed().as_secs_f64();
    let per_sec = (RECORDS * ROUNDS) as f64 / secs;
    println!("{label:<28} {:>8.1} M records/s  {:>6.2} GB/s", per_sec / 1e6, per_sec * 100.0 / 1e9);
}

fn main() {
    let mut buf = vec![0u8; RECORDS * 100];
    for kind in Kind::ALL {
        rate(&format!("generate {kind:?}"), || generate(kind, black_box(12345), &mut buf));
    }
    generate(Kind::Binary, 0, &mut buf);
    rate("crc32 per record (sum)", || {
        black_box(Checksum::of(&buf));
    });
    rate("generate Binary + crc", || {
        generate(Kind::Binary, black_box(12345), &mut buf);
        black_box(Checksum::of(&buf));
    });
    rate("validate (crc + order)", || {
        black_box(validate_records(&buf));
    });
}

//! Entry prefixes of delimited column keys ([`ColumnKey::prefix`]) and of fixed typed keys
//! ([`SortKey::prefix`]), the per-record work a keyed sort does twice (when it reads a record
//! and when it verifies the output's order).
//!
//! Run: `cargo bench -p oxsort-format --bench prefix`. The lines are `TEXT,NUMBER,TEXT` as
//! `bench/gnu.sh` writes them for its keyed case: 12 printable bytes, a number below 1000003,
//! 10-190 more bytes. The fixed records are 100 random bytes with `bench/typed.sh`'s key,
//! `SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)`.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use oxsort_format::{
    ColumnKey, ColumnSpan, Endian, FieldType, GnuKind, GnuOrder, KeyField, KeySpec, RecordLayout,
    SortSpec, PREFIX_BYTES,
};
use oxsort_testkit::Rng;
use std::hint::black_box;

/// Lines in one measured batch: 1.1 MB, one buffer as a chunk's lines are.
const LINES: usize = 10_000;

/// The lines, back to back, and where each starts (and the last ends).
fn lines() -> (Vec<u8>, Vec<usize>) {
    let mut rng = Rng::new(0x5EED_F11E);
    let mut text = |n: usize| -> Vec<u8> {
        (0..n).map(|_| b'!' + rng.below(94) as u8).filter(|&b| b != b',').collect()
    };
    let (mut out, mut starts) = (Vec::new(), vec![0]);
    let mut numbers = Rng::new(7919);
    for _ in 0..LINES {
        let mut line = text(12);
        line.push(b',');
        line.extend_from_slice(numbers.below(1_000_003).to_string().as_bytes());
        line.push(b',');
        let rest = 10 + numbers.index(180);
        line.extend(text(rest));
        out.extend(line);
        starts.push(out.len());
    }
    (out, starts)
}

fn key(fields: &[(usize, GnuOrder)]) -> ColumnKey {
    let fields = fields
        .iter()
        .map(|&(field, order)| {
            let kind = GnuKind { order, ..GnuKind::c_text() };
            KeyField::columns(ColumnSpan::field(field), FieldType::Gnu(kind), false)
        })
        .collect();
    let mut spec = KeySpec::new(fields).expect("key");
    spec.separator = Some(b',');
    ColumnKey::compile(&spec).expect("a column key")
}

fn bench_prefixes(c: &mut Criterion) {
    let (data, starts) = lines();
    let mut group = c.benchmark_group("column_prefix");
    group.throughput(Throughput::Elements(LINES as u64));
    let keys = [
        ("k2n_k1", key(&[(1, GnuOrder::Numeric), (0, GnuOrder::Text)])),
        ("k1", key(&[(0, GnuOrder::Text)])),
        ("k2n", key(&[(1, GnuOrder::Numeric)])),
        ("k3", key(&[(2, GnuOrder::Text)])),
    ];
    for (name, key) in &keys {
        group.bench_function(*name, |b| {
            let mut scratch = Vec::new();
            b.iter(|| {
                let mut x = [0u8; PREFIX_BYTES];
                for w in starts.windows(2) {
                    let p = key.prefix(black_box(&data[w[0]..w[1]]), &mut scratch);
                    x[0] ^= p[0];
                    x[9] ^= p[9];
                }
                x
            })
        });
    }
    group.finish();
}

/// `bench/typed.sh`'s key on 100-byte records, [`LINES`] of random bytes.
fn bench_fixed_prefixes(c: &mut Criterion) {
    let mut rng = Rng::new(0xF1_CED);
    let data: Vec<u8> = (0..LINES * 100).map(|_| rng.below(256) as u8).collect();
    let spec = KeySpec::new(vec![
        KeyField::bytes(10, 4, FieldType::Unsigned(Endian::Big), true),
        KeyField::bytes(20, 8, FieldType::Signed(Endian::Big), false),
        KeyField::bytes(0, 10, FieldType::Char, false),
    ])
    .expect("key");
    let sort = SortSpec { key: Some(spec), ..SortSpec::with_layout(RecordLayout::BENCHMARK) };
    let key = sort.compile().expect("a fixed key");
    let mut group = c.benchmark_group("fixed_prefix");
    group.throughput(Throughput::Elements(LINES as u64));
    group.bench_function("bi_d_fi_ch", |b| {
        let mut scratch = Vec::new();
        b.iter(|| {
            let mut x = [0u8; PREFIX_BYTES];
            for rec in data.chunks_exact(100) {
                let p = key.prefix(black_box(rec), &mut scratch).expect("prefix");
                x[0] ^= p[0];
                x[9] ^= p[9];
            }
            x
        })
    });
    group.finish();
}

criterion_group!(benches, bench_prefixes, bench_fixed_prefixes);
criterion_main!(benches);

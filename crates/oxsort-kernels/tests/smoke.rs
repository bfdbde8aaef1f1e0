//! Quick smoke test of the whole API.
use oxsort_kernels::*;

#[test]
fn smoke() {
    let mut x: u64 = 0x9E3779B97F4A7C15;
    let mut v: Vec<Entry> = (0..300_000u64)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut k = [0u8; 10];
            k[..8].copy_from_slice(&x.to_be_bytes());
            make_entry(&k, i)
        })
        .collect();
    let mut o = v.clone();
    o.sort_unstable();
    let mut p = v.clone();
    sort_entries(&mut v);
    assert!(v == o);
    par_sort_entries(&mut p, 2);
    assert!(p == o);
}

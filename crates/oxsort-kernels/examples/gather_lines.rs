//! The output gather of lines as a one-pass sort of lines does it, timed by hand: `chunks`
//! chunks of `chunk_bytes` of random 10-200 byte lines each, their records laid out as the
//! input phase leaves them, gathered in the order of all their sorted entries, `part` entries
//! at a time (an output part):
//!
//! `cargo run --release -p oxsort-kernels --example gather_lines -- [chunks] [chunk_bytes] [part] [layout]`
//!
//! `layout` is `bucketed` (default: each chunk's records grouped by key range, in read order
//! within a group, as a bucketed load rewrites them), `sorted` (each chunk rewritten in
//! sorted order) or `read` (as read: no rewrite). Rows: `gather_var` (the kernel: pointer
//! batches, offsets hinted a batch ahead), `plain` (a loop without prefetches) and `memcpy`
//! (the same bytes copied in their own order: what the memory does without random reads).
//!
//! On the 2-core EPYC guest of `bench/runs/2026-12-03c`, 240 chunks of 4 MiB (1 GB), runs
//! over an hour: `gather_var` 33-44 ns a line bucketed, 31-37 sorted, 78-108 as read; `plain`
//! 35-59 bucketed, 85-108 as read; `memcpy` 6.3-9.0 ns. Also tried there and no faster than
//! `gather_var` (within the runs' spread): one flat loop with the offsets two distances ahead
//! (distances 4-24), an inline copy by 32-byte blocks instead of `copy_from_slice`, prefetching
//! each chunk's stream 256-2048 bytes past the record copied, a second, far prefetch into L2
//! (24-192 records ahead), and blocks of 2048-16384 entries whose records' span in each chunk
//! is prefetched front to back before the block is gathered (48.7-54.7 ns a line bucketed: the
//! spans hold about twice the bytes the block takes). The gather waits on memory: the lines'
//! random order, not the copy, sets its pace.
#![allow(missing_docs)]

use oxsort_kernels::{entry_index, gather_var, make_entry, prefetch_read, Entry};
use oxsort_testkit::Rng;
use std::time::Instant;

/// Buckets of a bucketed layout: one per MiB of all the chunks, as a bucketed load has them
/// (`BUCKET_PART_BYTES` / 2^`BUCKETS_PER_PART_LOG2` in the engine).
const BUCKET_BYTES: usize = 1 << 20;

/// A zeroed buffer with transparent huge pages asked for, as the engine's arena has them.
fn huge(len: usize) -> Vec<u8> {
    const HUGE: usize = 2 << 20;
    let mut v = Vec::with_capacity(len + HUGE);
    let p = v.as_mut_ptr() as usize;
    let a = (p + HUGE - 1) & !(HUGE - 1);
    // SAFETY: advice on the 2 MiB-aligned part of this vector's own allocation (`len` bytes
    // after `a` lie inside its `len + HUGE` bytes).
    unsafe { libc::madvise(a as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
    v.resize(len, 0);
    v
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let chunks = arg(1, 240);
    let chunk_bytes = arg(2, 4 << 20);
    let part = arg(3, 262_144);
    let layout = args.get(4).map(String::as_str).unwrap_or("bucketed");
    if !["bucketed", "sorted", "read"].contains(&layout) {
        eprintln!("layout: bucketed, sorted or read, not {layout:?}");
        std::process::exit(2);
    }
    let log2 = 64 - (chunk_bytes as u64).leading_zeros();
    let mask = (1u64 << log2) - 1;
    let buckets = (chunks * chunk_bytes / BUCKET_BYTES).max(1);
    // Printable bytes: the first two give the bucket.
    let bucket = |r: &[u8]| ((r[0] - b' ') as usize * 95 + (r[1] - b' ') as usize) * buckets / 9025;
    let mut rng = Rng::new(7);
    let (mut bufs, mut offs, mut entries) = (Vec::new(), Vec::new(), Vec::<Entry>::new());
    for c in 0..chunks {
        let mut recs: Vec<Vec<u8>> = Vec::new();
        let mut total = 0;
        loop {
            let len = 10 + rng.below(191) as usize;
            if total + len > chunk_bytes {
                break;
            }
            let mut r: Vec<u8> = (0..len - 1).map(|_| b' ' + rng.below(95) as u8).collect();
            r.push(b'\n');
            total += len;
            recs.push(r);
        }
        match layout {
            "sorted" => recs.sort(),
            "bucketed" => recs.sort_by_key(|r| bucket(r)),
            _ => {}
        }
        let mut buf = huge(chunk_bytes);
        let mut o = vec![0u32];
        for (i, r) in recs.iter().enumerate() {
            let at = *o.last().unwrap() as usize;
            buf[at..at + r.len()].copy_from_slice(r);
            o.push((at + r.len()) as u32);
            let mut p = [0u8; 10];
            p.copy_from_slice(&r[..10]);
            entries.push(make_entry(&p, ((c as u64) << log2) | i as u64));
        }
        bufs.push(buf);
        offs.push(o);
    }
    entries.sort_unstable();
    let n = entries.len();
    let bytes: usize = offs.iter().map(|o| *o.last().unwrap() as usize).sum();
    println!("{n} lines, {bytes} bytes, {chunks} chunks, laid out {layout}, parts of {part}");
    let locate = |idx: u64| -> &[u8] {
        let (c, i) = ((idx >> log2) as usize, (idx & mask) as usize);
        &bufs[c][offs[c][i] as usize..offs[c][i + 1] as usize]
    };
    let hint = |idx: u64| prefetch_read(&offs[(idx >> log2) as usize][(idx & mask) as usize]);
    let mut out = huge(part * 200 + 4096);
    let mut time = |name: &str, f: &mut dyn FnMut(&[Entry], &mut [u8]) -> usize| {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            let copied: usize = entries.chunks(part).map(|p| f(p, &mut out)).sum();
            best = best.min(t.elapsed().as_secs_f64());
            assert_eq!(copied, bytes, "{name}: every byte once");
        }
        let ns = best * 1e9 / n as f64;
        println!(
            "{name:<12} {:8.1} ms  {ns:6.1} ns a line  {:5.2} GB/s",
            best * 1e3,
            bytes as f64 / best / 1e9
        );
    };
    time("gather_var", &mut |p, out| {
        let (copied, len) = gather_var(p, hint, locate, out);
        assert_eq!(copied, p.len());
        len
    });
    time("plain", &mut |p, out| {
        let mut pos = 0;
        for &e in p {
            let r = locate(entry_index(e));
            out[pos..pos + r.len()].copy_from_slice(r);
            pos += r.len();
        }
        pos
    });
    // The same number of bytes per part, taken from the chunks front to back.
    let sizes: Vec<usize> = entries
        .chunks(part)
        .map(|p| p.iter().map(|&e| locate(entry_index(e)).len()).sum())
        .collect();
    let (mut k, mut c, mut at) = (0usize, 0usize, 0usize);
    time("memcpy", &mut |_, out| {
        let want = sizes[k % sizes.len()];
        k += 1;
        let mut pos = 0;
        while pos < want {
            let end = *offs[c].last().unwrap() as usize;
            let take = (end - at).min(want - pos);
            out[pos..pos + take].copy_from_slice(&bufs[c][at..at + take]);
            (pos, at) = (pos + take, at + take);
            if at == end {
                (c, at) = ((c + 1) % chunks, 0);
            }
        }
        pos
    });
}

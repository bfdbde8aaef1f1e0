//! Record gather: copy records into output order, with batched, prefetched lookups.

use crate::entry::{entry_index, Entry};
use crate::tuning::{GATHER_PREFETCH_DISTANCE, PAR_TASK_ENTRIES};
use rayon::prelude::*;

/// Cache-line size assumed by the prefetcher.
const LINE: usize = 64;

/// Asks the CPU to bring the cache line holding `p` into cache, without waiting for it: to be
/// read, or with `WRITE` to be written (fetched for ownership, `prefetchw`, so a store to it does
/// not wait). Does nothing on targets without a prefetch.
#[inline(always)]
fn prefetch_ptr<const WRITE: bool>(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint that never faults, whatever the address, and has no
        // architectural effect; SSE is baseline on x86_64 (and a CPU without `prefetchw` takes
        // the write hint as a read prefetch).
        unsafe {
            if WRITE {
                _mm_prefetch::<_MM_HINT_ET0>(p.cast::<i8>());
            } else {
                _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Prefetches the cache line holding `*r`: for tables a later lookup will read at random.
#[inline(always)]
pub fn prefetch_read<T>(r: &T) {
    prefetch_ptr::<false>((r as *const T).cast());
}

/// Prefetches every cache line `rec` touches, once each.
#[inline(always)]
pub fn prefetch_record(rec: &[u8]) {
    each_line(rec, prefetch_ptr::<false>);
}

/// Prefetches every cache line of `place`, a record's place about to be written, once each.
#[inline(always)]
pub(crate) fn prefetch_record_for_write(place: &[u8]) {
    each_line(place, prefetch_ptr::<true>);
}

/// Calls `prefetch` with the start of every cache line `rec` touches.
#[inline(always)]
fn each_line(rec: &[u8], prefetch: impl Fn(*const u8)) {
    let p = rec.as_ptr();
    let misalign = p as usize % LINE;
    let lines = (misalign + rec.len()).div_ceil(LINE);
    let first_line = p.wrapping_sub(misalign);
    for i in 0..lines {
        prefetch(first_line.wrapping_add(i * LINE));
    }
}

/// Copies the records into `out` in entry order: record `i` of `out` is
/// `locate(entry_index(entries[i]))`.
///
/// Lookups are batched (OzSort's pointer set): while batch `b` is copied, the
/// [`GATHER_PREFETCH_DISTANCE`] records of batch `b + 1` have already been located and
/// prefetched, so the random reads overlap instead of waiting one by one.
///
/// # Panics
/// If `out.len() != entries.len() * rec_size`, or `locate` returns a slice that is not
/// `rec_size` bytes long.
pub fn gather<'a, L: Fn(u64) -> &'a [u8]>(
    entries: &[Entry],
    rec_size: usize,
    locate: L,
    out: &mut [u8],
) {
    assert_eq!(
        Some(out.len()),
        entries.len().checked_mul(rec_size),
        "gather output must hold exactly entries.len() * rec_size bytes"
    );
    if rec_size == 0 {
        return;
    }
    let mut pos = 0;
    prefetched(
        entries,
        |_| {},
        locate,
        |rec| {
            oxsort_bytes::copy_field(rec, &mut out[pos..pos + rec_size]);
            pos += rec_size;
            true
        },
    );
}

/// [`gather`] that hands `seen` every block of `block_records` records (the last block may be
/// shorter) as soon as it is complete in `out`, while it is still in cache: checks of the output
/// (checksums, order) then cost no second pass over it from memory.
///
/// # Panics
/// As [`gather`], and if `block_records` is 0.
pub fn gather_blocks<'a, L: Fn(u64) -> &'a [u8]>(
    entries: &[Entry],
    rec_size: usize,
    locate: L,
    out: &mut [u8],
    block_records: usize,
    mut seen: impl FnMut(&[u8]),
) {
    assert_eq!(
        Some(out.len()),
        entries.len().checked_mul(rec_size),
        "gather output must hold exactly entries.len() * rec_size bytes"
    );
    assert!(block_records > 0, "blocks of 0 records");
    if rec_size == 0 {
        return;
    }
    let block = block_records * rec_size;
    let (mut pos, mut start) = (0, 0);
    prefetched(
        entries,
        |_| {},
        locate,
        |rec| {
            oxsort_bytes::copy_field(rec, &mut out[pos..pos + rec_size]);
            pos += rec_size;
            if pos - start == block {
                seen(&out[start..pos]);
                start = pos;
            }
            true
        },
    );
    if pos > start {
        seen(&out[start..pos]);
    }
}

/// Calls `each` with the record of every entry, in entry order, until it returns `false`;
/// returns how many records it accepted. Lookups are batched (OzSort's pointer set) in a
/// three-stage pipeline of [`GATHER_PREFETCH_DISTANCE`] entries per batch:
///
/// ```text
///   batch b      each(record)          the records were prefetched one batch ago
///   batch b + 1  locate + prefetch     reads the metadata `hint` prefetched one batch ago
///   batch b + 2  hint(index)           prefetches what `locate` will read (record offsets)
/// ```
///
/// so neither the record nor the table that says where it is (for delimited records, a random
/// offset per record) is waited for one miss at a time.
#[inline]
fn prefetched<'a, H: Fn(u64), L: Fn(u64) -> &'a [u8]>(
    entries: &[Entry],
    hint: H,
    locate: L,
    mut each: impl FnMut(&'a [u8]) -> bool,
) -> usize {
    let d = GATHER_PREFETCH_DISTANCE;
    let batch = |b: usize| &entries[(b * d).min(entries.len())..((b + 1) * d).min(entries.len())];
    let mut cur: Vec<&'a [u8]> = Vec::with_capacity(d);
    let mut next: Vec<&'a [u8]> = Vec::with_capacity(d);
    // A function, not a closure, so it can be marked: left to itself the compiler sometimes
    // calls it once per batch instead of inlining it into the loop (1.2% more instructions).
    #[inline(always)]
    fn resolve<'a>(batch: &[Entry], locate: &impl Fn(u64) -> &'a [u8], into: &mut Vec<&'a [u8]>) {
        into.clear();
        for &e in batch {
            let rec = locate(entry_index(e));
            prefetch_record(rec);
            into.push(rec);
        }
    }
    let hint_batch = |b: usize| batch(b).iter().for_each(|&e| hint(entry_index(e)));
    hint_batch(0);
    hint_batch(1);
    resolve(batch(0), &locate, &mut cur);
    let mut accepted = 0;
    let mut b = 0;
    while !cur.is_empty() {
        hint_batch(b + 2);
        resolve(batch(b + 1), &locate, &mut next);
        for rec in &cur {
            if !each(rec) {
                return accepted;
            }
            accepted += 1;
        }
        std::mem::swap(&mut cur, &mut next);
        b += 1;
    }
    accepted
}

/// Parallel [`gather`]: the entries are cut into tasks of [`PAR_TASK_ENTRIES`], each gathering
/// into its own piece of `out`, on a pool of `threads` threads (see
/// [`crate::par_sort_entries`] for the pool used).
///
/// # Panics
/// As [`gather`].
pub fn par_gather<'a, L: Fn(u64) -> &'a [u8] + Sync>(
    entries: &[Entry],
    rec_size: usize,
    locate: L,
    out: &mut [u8],
    threads: usize,
) {
    assert_eq!(
        Some(out.len()),
        entries.len().checked_mul(rec_size),
        "gather output must hold exactly entries.len() * rec_size bytes"
    );
    if threads <= 1 || entries.len() <= PAR_TASK_ENTRIES || rec_size == 0 {
        gather(entries, rec_size, locate, out);
        return;
    }
    let locate = &locate;
    crate::pool::run(threads, || {
        entries
            .par_chunks(PAR_TASK_ENTRIES)
            .zip(out.par_chunks_mut(PAR_TASK_ENTRIES * rec_size))
            .for_each(|(e, o)| gather(e, rec_size, locate, o));
    });
}

/// [`gather`] for records of varying length (delimited text): copies `locate(index)` of the
/// entries, in entry order, back to back into `out`, as many whole records as fit, and returns
/// how many entries were copied and the bytes written. The records of the next batch are
/// located and prefetched while the current batch is copied, and `hint(index)` is called a
/// batch before `locate(index)`: it should prefetch whatever `locate` reads to find the record
/// (say, its offset in a table), or do nothing. A caller that cannot size `out` in advance grows
/// it and calls again with the remaining entries.
pub fn gather_var<'a, H: Fn(u64), L: Fn(u64) -> &'a [u8]>(
    entries: &[Entry],
    hint: H,
    locate: L,
    out: &mut [u8],
) -> (usize, usize) {
    gather_var_with(entries, hint, locate, out, |_| {})
}

/// [`gather_var`] that also hands every record it copies to `seen`, in order, while the record
/// is still in cache: checks of the output (checksums, order) then cost no second pass over it.
pub fn gather_var_with<'a, H: Fn(u64), L: Fn(u64) -> &'a [u8], S: FnMut(&'a [u8])>(
    entries: &[Entry],
    hint: H,
    locate: L,
    out: &mut [u8],
    mut seen: S,
) -> (usize, usize) {
    let mut pos = 0;
    let copied = prefetched(entries, hint, locate, |rec| {
        if pos + rec.len() > out.len() {
            return false;
        }
        out[pos..pos + rec.len()].copy_from_slice(rec);
        seen(rec);
        pos += rec.len();
        true
    });
    (copied, pos)
}

#[cfg(test)]
mod var_tests {
    use super::*;
    use crate::entry::make_entry;

    #[test]
    fn gather_var_copies_records_of_any_length_in_entry_order() {
        let recs: Vec<Vec<u8>> = (0..300u64).map(|i| vec![i as u8; (i % 7) as usize]).collect();
        let order: Vec<u64> = (0..300u64).map(|i| (i * 113) % 300).collect();
        let entries: Vec<Entry> = order.iter().map(|&i| make_entry(&[0; 10], i)).collect();
        let want: Vec<u8> = order.iter().flat_map(|&i| recs[i as usize].clone()).collect();
        let mut out = vec![0u8; want.len() + 5];
        let (copied, n) = gather_var(&entries, |_| {}, |i| &recs[i as usize], &mut out);
        assert_eq!((copied, n), (entries.len(), want.len()));
        assert_eq!(&out[..n], &want[..]);
        // Too small: whole records only, and the rest follows on a second call.
        let mut small = vec![0u8; want.len() / 2];
        let (c1, n1) = gather_var(&entries, |_| {}, |i| &recs[i as usize], &mut small);
        assert!(c1 < entries.len() && n1 <= small.len());
        assert_eq!(&small[..n1], &want[..n1]);
        let mut rest = vec![0u8; want.len()];
        let (c2, n2) = gather_var(&entries[c1..], |_| {}, |i| &recs[i as usize], &mut rest);
        assert_eq!((c1 + c2, n1 + n2), (entries.len(), want.len()));
        assert_eq!(&rest[..n2], &want[n1..]);
        let mut seen = Vec::new();
        gather_var_with(
            &entries,
            |_| {},
            |i| &recs[i as usize],
            &mut out,
            |r| seen.extend_from_slice(r),
        );
        assert_eq!(seen, want);
    }

    #[test]
    fn gather_blocks_hands_over_every_block_in_order() {
        let r = 5;
        let recs: Vec<u8> = (0..1000u32).map(|i| (i * 31 % 251) as u8).collect();
        let n = recs.len() / r;
        let order: Vec<u64> = (0..n as u64).map(|i| (i * 77) % n as u64).collect();
        let entries: Vec<Entry> = order.iter().map(|&i| make_entry(&[0; 10], i)).collect();
        let want: Vec<u8> =
            order.iter().flat_map(|&i| recs[i as usize * r..][..r].to_vec()).collect();
        for block in [1, 3, 8, 64, n, n + 1] {
            let mut out = vec![0u8; want.len()];
            let mut seen = Vec::new();
            let mut sizes = Vec::new();
            gather_blocks(
                &entries,
                r,
                |i| &recs[i as usize * r..][..r],
                &mut out,
                block,
                |b| {
                    seen.extend_from_slice(b);
                    sizes.push(b.len() / r);
                },
            );
            assert_eq!(out, want, "blocks of {block}");
            assert_eq!(seen, want, "blocks of {block}");
            assert!(sizes.iter().rev().skip(1).all(|&s| s == block), "blocks of {block}");
            assert_eq!(sizes.iter().sum::<usize>(), n);
        }
    }
}

//! MSD radix sort of entries, sequential and parallel. The recursion is drawn in the docs of
//! [`crate::sort_entries`] and [`crate::par_sort_entries`].
//!
//! Out-of-place levels ([`msd`]) ping-pong between a slice and a scratch slice of the same
//! length; each level flips which of the two must hold the sorted result (`dst_is_src`).

use crate::entry::Entry;
use crate::tuning::{
    INSERTION_SORT_CUTOFF, OUT_OF_PLACE_MAX, PAR_GRAIN, RADIX_BITS, RADIX_BUCKETS,
    SMALL_SORT_CUTOFF,
};
use rayon::prelude::*;

/// Shift of the first (most significant) digit.
const TOP_SHIFT: u32 = 128 - RADIX_BITS;
const DIGIT_MASK: u128 = (RADIX_BUCKETS - 1) as u128;

type Hist = [usize; RADIX_BUCKETS];

#[inline(always)]
fn digit(x: Entry, shift: u32) -> usize {
    ((x >> shift) & DIGIT_MASK) as usize
}

/// Sorts `v` on one thread, using (and growing) `buf` as scratch space.
pub(crate) fn sort_with_buf(v: &mut [Entry], buf: &mut Vec<Entry>) {
    if v.len() <= SMALL_SORT_CUTOFF {
        small_sort(v);
        return;
    }
    in_place(v, buf, TOP_SHIFT);
}

/// Sorts `v` on the current rayon pool (parallel), with scratch `buf`.
pub(crate) fn par_sort_with_buf(v: &mut [Entry], buf: &mut Vec<Entry>, threads: usize) {
    if v.len() <= PAR_GRAIN || threads <= 1 {
        sort_with_buf(v, buf);
        return;
    }
    ensure_len(buf, v.len());
    let tmp = &mut buf[..v.len()];
    par_msd(v, tmp, true, TOP_SHIFT, threads);
}

/// Makes `buf` at least `n` long. A fresh buffer comes from `vec![0; n]` (zeroed pages mapped
/// lazily by the allocator) rather than `resize`, which would write every byte up front.
fn ensure_len(buf: &mut Vec<Entry>, n: usize) {
    if buf.len() < n {
        *buf = Vec::new();
        *buf = vec![0; n];
        advise_huge_pages(buf);
    }
}

/// Asks the kernel to back a fresh (untouched) buffer with transparent huge pages: first touch
/// then costs one fault per 2 MiB instead of one per 4 KiB. Only a hint; errors are ignored.
#[cfg(target_os = "linux")]
fn advise_huge_pages(buf: &mut [Entry]) {
    const PAGE: usize = 4096;
    let bytes = std::mem::size_of_val(buf);
    if bytes < crate::tuning::HUGE_PAGE_MIN_BYTES {
        return;
    }
    let start = buf.as_mut_ptr() as usize;
    let aligned = start.next_multiple_of(PAGE);
    let len = (start + bytes - aligned) / PAGE * PAGE;
    // SAFETY: `aligned .. aligned + len` lies inside `buf`, which we own; MADV_HUGEPAGE changes
    // only how the kernel backs those pages, never their contents or validity.
    unsafe { libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_buf: &mut [Entry]) {}

/// Small sort: insertion sort for tiny slices, std's pattern-defeating quicksort above.
#[inline]
pub(crate) fn small_sort(v: &mut [Entry]) {
    if v.len() <= INSERTION_SORT_CUTOFF {
        insertion_sort(v);
    } else {
        v.sort_unstable();
    }
}

fn insertion_sort(v: &mut [Entry]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// OR of `x ^ v[0]` over the slice: its highest set bit is the highest bit where entries differ.
fn diff_bits(v: &[Entry]) -> u128 {
    let first = v[0];
    v.iter().fold(0, |acc, &x| acc | (x ^ first))
}

/// The digit shift whose digit covers the highest differing bit `diff` (non-zero).
fn shift_for_diff(diff: u128) -> u32 {
    (128 - diff.leading_zeros()).saturating_sub(RADIX_BITS)
}

/// A digit extractor; the three impls let the hot loops use one 64-bit shift when the digit lies
/// within one half of the `u128` (the common case) instead of a funnel shift.
trait DigitOf: Copy {
    fn of(self, x: Entry) -> usize;
}

/// Digit within the high 64 bits; field = shift - 64.
#[derive(Clone, Copy)]
struct HiDigit(u32);
impl DigitOf for HiDigit {
    #[inline(always)]
    fn of(self, x: Entry) -> usize {
        (((x >> 64) as u64) >> self.0) as usize & (RADIX_BUCKETS - 1)
    }
}

/// Digit within the low 64 bits; field = shift.
#[derive(Clone, Copy)]
struct LoDigit(u32);
impl DigitOf for LoDigit {
    #[inline(always)]
    fn of(self, x: Entry) -> usize {
        ((x as u64) >> self.0) as usize & (RADIX_BUCKETS - 1)
    }
}

/// Digit straddling the two halves; field = shift.
#[derive(Clone, Copy)]
struct AnyDigit(u32);
impl DigitOf for AnyDigit {
    #[inline(always)]
    fn of(self, x: Entry) -> usize {
        digit(x, self.0)
    }
}

/// Calls `$body` with `$d` bound to the fastest digit extractor for `$shift`.
macro_rules! with_digit {
    ($shift:expr, |$d:ident| $body:expr) => {{
        let shift: u32 = $shift;
        if shift >= 64 {
            let $d = HiDigit(shift - 64);
            $body
        } else if shift + RADIX_BITS <= 64 {
            let $d = LoDigit(shift);
            $body
        } else {
            let $d = AnyDigit(shift);
            $body
        }
    }};
}

fn histogram(v: &[Entry], shift: u32) -> Hist {
    with_digit!(shift, |d| histogram_by(v, d))
}

#[inline(always)]
fn histogram_by(v: &[Entry], d: impl DigitOf) -> Hist {
    let mut h = [0usize; RADIX_BUCKETS];
    for &x in v {
        h[d.of(x)] += 1;
    }
    h
}

/// Exclusive prefix sums of `h`: where each bucket starts.
fn bucket_starts(h: &Hist) -> Hist {
    let mut starts = [0usize; RADIX_BUCKETS];
    let mut sum = 0;
    for (s, &c) in starts.iter_mut().zip(h) {
        *s = sum;
        sum += c;
    }
    starts
}

/// Scatters `src` by digit into `dst`, bucket `b` starting at `heads[b]`.
///
/// # Safety
/// `dst` must be valid for writes of `dst_len` entries, and for every bucket `b`, the range
/// `heads[b] .. heads[b] + (number of entries of src with digit b)` must lie within `0..dst_len`
/// and not be written by anyone else during the call.
#[inline]
unsafe fn scatter(src: &[Entry], dst: *mut Entry, dst_len: usize, heads: &mut Hist, shift: u32) {
    // SAFETY: the caller's contract is passed on unchanged.
    with_digit!(shift, |d| unsafe { scatter_by(src, dst, dst_len, heads, d) })
}

/// [`scatter`] with a given digit extractor.
///
/// # Safety
/// As [`scatter`], with the digits given by `d`.
#[inline(always)]
unsafe fn scatter_by(
    src: &[Entry],
    dst: *mut Entry,
    dst_len: usize,
    heads: &mut Hist,
    d: impl DigitOf,
) {
    for &x in src {
        let b = d.of(x);
        let pos = heads[b];
        debug_assert!(pos < dst_len);
        // SAFETY: by the caller's contract, `pos` is inside the range reserved for bucket `b`,
        // which lies within `dst[..dst_len]` and is ours alone; each position is written once
        // because the head advances after every write.
        unsafe { dst.add(pos).write(x) };
        heads[b] = pos + 1;
    }
}

/// Finds the first digit shift (starting at `shift`) at which `src` splits into at least two
/// buckets, with its histogram; `None` if all entries are equal.
fn split_digit(src: &[Entry], mut shift: u32) -> Option<(u32, Hist)> {
    let n = src.len();
    loop {
        let h = histogram(src, shift);
        if h[digit(src[0], shift)] != n {
            return Some((shift, h));
        }
        // Everything shares this digit: jump straight to the highest bit where entries differ.
        let diff = diff_bits(src);
        if diff == 0 {
            return None;
        }
        let next = shift_for_diff(diff);
        debug_assert!(next < shift || shift == 0);
        shift = next;
    }
}

/// Sorts the entries of `src`; the result ends in `src` if `dst_is_src`, else in `tmp`.
/// Both slices have the same length; `tmp`'s content on entry is ignored. Digits above `shift`
/// (exclusive of the digit at `shift`) are equal across `src`.
fn msd(src: &mut [Entry], tmp: &mut [Entry], dst_is_src: bool, shift: u32) {
    debug_assert_eq!(src.len(), tmp.len());
    let n = src.len();
    if n <= SMALL_SORT_CUTOFF {
        small_sort(src);
        if !dst_is_src {
            tmp.copy_from_slice(src);
        }
        return;
    }
    let Some((shift, h)) = split_digit(src, shift) else {
        if !dst_is_src {
            tmp.copy_from_slice(src);
        }
        return;
    };
    let mut heads = bucket_starts(&h);
    // SAFETY: `heads` are the exclusive prefix sums of the histogram of `src` at `shift`, so the
    // bucket ranges partition `0..n` = `0..tmp.len()`, and `tmp` is exclusively borrowed.
    unsafe { scatter(src, tmp.as_mut_ptr(), n, &mut heads, shift) };
    if shift == 0 {
        // The last digit: every bucket holds equal entries, already sorted.
        if dst_is_src {
            src.copy_from_slice(tmp);
        }
        return;
    }
    let next = shift.saturating_sub(RADIX_BITS);
    let mut start = 0;
    for &c in h.iter() {
        let end = start + c;
        if c <= INSERTION_SORT_CUTOFF {
            // Tiny bucket: sort it where it landed, no recursive call.
            let t = &mut tmp[start..end];
            insertion_sort(t);
            if dst_is_src {
                src[start..end].copy_from_slice(t);
            }
        } else {
            msd(&mut tmp[start..end], &mut src[start..end], !dst_is_src, next);
        }
        start = end;
    }
}

/// Raw pointer that may cross threads; writers keep to disjoint ranges (see uses).
#[derive(Clone, Copy)]
struct SendPtr(*mut Entry);
// SAFETY: the pointer is only dereferenced inside `par_msd`'s scatter, where each task writes a
// disjoint set of positions of a buffer exclusively borrowed for the duration of the scope.
unsafe impl Send for SendPtr {}
// SAFETY: as above; tasks only copy the pointer value.
unsafe impl Sync for SendPtr {}

impl SendPtr {
    /// The pointer (a method, so closures capture the whole `Send` wrapper, not the field).
    #[inline(always)]
    fn get(self) -> *mut Entry {
        self.0
    }
}

/// Parallel version of [`msd`] (same contract), for use inside a rayon pool.
fn par_msd(src: &mut [Entry], tmp: &mut [Entry], dst_is_src: bool, shift: u32, threads: usize) {
    debug_assert_eq!(src.len(), tmp.len());
    let n = src.len();
    if n <= PAR_GRAIN || threads <= 1 {
        msd(src, tmp, dst_is_src, shift);
        return;
    }
    let chunk = n.div_ceil(threads);
    // Find a splitting digit, histogramming the chunks in parallel.
    let mut shift = shift;
    let hists: Vec<Hist> = loop {
        let hists: Vec<Hist> = src.par_chunks(chunk).map(|c| histogram(c, shift)).collect();
        let d0 = digit(src[0], shift);
        if hists.iter().map(|h| h[d0]).sum::<usize>() != n {
            break hists;
        }
        let first = src[0];
        let diff = src
            .par_chunks(chunk)
            .map(|c| c.iter().fold(0, |acc, &x| acc | (x ^ first)))
            .reduce(|| 0, |a, b| a | b);
        if diff == 0 {
            if !dst_is_src {
                tmp.copy_from_slice(src);
            }
            return;
        }
        shift = shift_for_diff(diff);
    };
    // Bucket totals, then each chunk's head inside each bucket: chunk t writes after chunks < t.
    let mut total = [0usize; RADIX_BUCKETS];
    for h in &hists {
        for (t, &c) in total.iter_mut().zip(h) {
            *t += c;
        }
    }
    let mut next_head = bucket_starts(&total);
    let heads: Vec<Hist> = hists
        .iter()
        .map(|h| {
            let mine = next_head;
            for (nh, &c) in next_head.iter_mut().zip(h) {
                *nh += c;
            }
            mine
        })
        .collect();
    let dst = SendPtr(tmp.as_mut_ptr());
    src.par_chunks(chunk).zip(heads).for_each(|(c, mut heads)| {
        // SAFETY: chunk t's range in bucket b is `heads[t][b] .. heads[t][b] + hists[t][b]`;
        // these ranges are consecutive prefix sums over (bucket, chunk), so they partition
        // `0..n` and no two tasks share a position. `tmp` (n entries) is exclusively borrowed by
        // this function and outlives the parallel loop.
        unsafe { scatter(c, dst.get(), n, &mut heads, shift) };
    });
    if shift == 0 {
        if dst_is_src {
            src.copy_from_slice(tmp);
        }
        return;
    }
    let next = shift.saturating_sub(RADIX_BITS);
    // Split both buffers into per-bucket pieces and sort the buckets as independent tasks.
    let mut pieces: Vec<(&mut [Entry], &mut [Entry])> = Vec::with_capacity(RADIX_BUCKETS);
    let (mut rest_t, mut rest_s) = (tmp, src);
    for &c in total.iter() {
        if c == 0 {
            continue;
        }
        let (t, rt) = rest_t.split_at_mut(c);
        let (s, rs) = rest_s.split_at_mut(c);
        pieces.push((t, s));
        rest_t = rt;
        rest_s = rs;
    }
    pieces.into_par_iter().for_each_init(Vec::new, |local, (t, s)| {
        if t.len() > PAR_GRAIN {
            par_msd(t, s, !dst_is_src, next, threads);
        } else {
            // Sort the bucket where it landed, with a small cache-resident scratch buffer, then
            // move it home in one copy: cheaper than ping-ponging through the two big buffers,
            // whose last level would copy back many tiny buckets one by one.
            in_place(t, local, next);
            if dst_is_src {
                s.copy_from_slice(t);
            }
        }
    });
}

/// Sorts `v` (digits above `shift` equal across `v`): slices bigger than [`OUT_OF_PLACE_MAX`]
/// get an in-place radix pass (American flag cycle-leader permutation, no scratch); smaller ones
/// go to the out-of-place [`msd`] with `buf` (grown to at most `OUT_OF_PLACE_MAX` entries) as
/// scratch, where they fit in cache.
fn in_place(v: &mut [Entry], buf: &mut Vec<Entry>, shift: u32) {
    if v.len() <= OUT_OF_PLACE_MAX {
        if v.len() <= SMALL_SORT_CUTOFF {
            small_sort(v);
            return;
        }
        if buf.len() < v.len() {
            buf.resize(v.len().max(OUT_OF_PLACE_MAX.min(4 * v.len())), 0);
        }
        let n = v.len();
        msd(v, &mut buf[..n], true, shift);
        return;
    }
    let Some((shift, h)) = split_digit(v, shift) else { return };
    permute_in_place(v, &h, shift);
    if shift == 0 {
        return;
    }
    let next = shift.saturating_sub(RADIX_BITS);
    let mut rest = v;
    for &c in h.iter() {
        let (bucket, r) = rest.split_at_mut(c);
        rest = r;
        if c > 1 {
            in_place(bucket, buf, next);
        }
    }
}

/// Permutes `v` in place so that entries are grouped by digit at `shift` in ascending digit
/// order (`h` is the histogram of `v` at `shift`), by cycle leading: each misplaced entry is
/// swapped straight into the next free slot of its bucket.
fn permute_in_place(v: &mut [Entry], h: &Hist, shift: u32) {
    with_digit!(shift, |d| permute_in_place_by(v, h, d))
}

#[inline(always)]
fn permute_in_place_by(v: &mut [Entry], h: &Hist, d: impl DigitOf) {
    let mut heads = bucket_starts(h);
    let mut ends = [0usize; RADIX_BUCKETS];
    for (e, (&s, &c)) in ends.iter_mut().zip(heads.iter().zip(h)) {
        *e = s + c;
    }
    for b in 0..RADIX_BUCKETS {
        while heads[b] < ends[b] {
            let mut x = v[heads[b]];
            let mut db = d.of(x);
            // Follow the cycle: drop `x` into its bucket, pick up what was there.
            while db != b {
                let slot = heads[db];
                heads[db] = slot + 1;
                std::mem::swap(&mut x, &mut v[slot]);
                db = d.of(x);
            }
            v[heads[b]] = x;
            heads[b] += 1;
        }
    }
}

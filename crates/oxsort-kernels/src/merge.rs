//! Multi-sequence selection (`split_sorted`) and k-way merging of sorted entry runs.

use crate::entry::Entry;
use crate::loser_tree::LoserTree;
use crate::tuning::PAR_TASK_ENTRIES;
use rayon::prelude::*;

/// Multi-sequence selection: cuts `k` sorted runs into `parts` key ranges of (nearly) equal size.
///
/// Returns one vector per run with `parts + 1` cut positions: `cuts[j][0] == 0`,
/// `cuts[j][parts] == runs[j].len()`, non-decreasing. Part `p` is the union over runs `j` of
/// `runs[j][cuts[j][p]..cuts[j][p + 1]]`.
///
/// Guarantees (runs sorted ascending):
/// - order: every entry of part `p` is `<=` every entry of part `p + 1` (`<` when entries are
///   unique, as entries are); equal entries spread across a boundary are split in run order, so
///   concatenating the merged parts equals a stable merge;
/// - balance: part `p` holds exactly `r(p+1) - r(p)` entries where `r(p) = p * total / parts`
///   (rounded down), i.e. every part has `floor(total/parts)` or `ceil(total/parts)` entries.
///
/// Cost: for each of the `parts - 1` inner cuts, a binary search over the 128-bit value space
/// (at most 128 steps), each step one binary search per run restricted to the window still
/// possible, so typically `O(parts * (128 + k * log n))` comparisons.
///
/// # Panics
/// If `parts == 0`.
pub fn split_sorted(runs: &[&[Entry]], parts: usize) -> Vec<Vec<usize>> {
    par_split_sorted(runs, parts, 1)
}

/// [`split_sorted`] with the cuts found on `threads` threads (each cut is found on its own).
/// The sort engine splits right after the last read, on the critical path.
///
/// # Panics
/// If `parts == 0`.
pub fn par_split_sorted(runs: &[&[Entry]], parts: usize, threads: usize) -> Vec<Vec<usize>> {
    assert!(parts > 0, "split_sorted into zero parts");
    let total: usize = runs.iter().map(|r| r.len()).sum();
    let mut cuts: Vec<Vec<usize>> = runs
        .iter()
        .map(|r| {
            let mut c = vec![0; parts + 1];
            c[parts] = r.len();
            c
        })
        .collect();
    let rank = |p: usize| ((p as u128 * total as u128) / parts as u128) as usize;
    let inner: Vec<usize> = (1..parts).collect();
    let found: Vec<Vec<usize>> = if threads <= 1 || inner.len() < 2 {
        inner.iter().map(|&p| select_cut(runs, rank(p))).collect()
    } else {
        let per = inner.len().div_ceil(threads);
        std::thread::scope(|s| {
            let handles: Vec<_> = inner
                .chunks(per)
                .map(|ps| {
                    s.spawn(move || {
                        ps.iter().map(|&p| select_cut(runs, rank(p))).collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().expect("a split thread panicked")).collect()
        })
    };
    for (p, at) in inner.iter().zip(found) {
        for (c, a) in cuts.iter_mut().zip(at) {
            c[*p] = a;
        }
    }
    cuts
}

/// Cut positions such that exactly `rank` entries lie left of the cuts and every entry left is
/// `<=` every entry right.
fn select_cut(runs: &[&[Entry]], rank: usize) -> Vec<usize> {
    let total: usize = runs.iter().map(|r| r.len()).sum();
    if rank == 0 {
        return vec![0; runs.len()];
    }
    if rank >= total {
        return runs.iter().map(|r| r.len()).collect();
    }
    // Find s = the smallest value with count(<= s) > rank, i.e. the rank-th smallest entry.
    // Invariants: below[j] = count of run j entries < lo; upto[j] = count of entries <= hi.
    let (mut lo, mut hi) = (0u128, u128::MAX);
    let mut below: Vec<usize> = vec![0; runs.len()];
    let mut upto: Vec<usize> = runs.iter().map(|r| r.len()).collect();
    let mut at_mid: Vec<usize> = vec![0; runs.len()];
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let mut count = 0usize;
        for (j, run) in runs.iter().enumerate() {
            let window = &run[below[j]..upto[j]];
            at_mid[j] = below[j] + window.partition_point(|&x| x <= mid);
            count += at_mid[j];
        }
        if count > rank {
            hi = mid;
            upto.copy_from_slice(&at_mid);
        } else {
            lo = mid + 1;
            below.copy_from_slice(&at_mid);
        }
    }
    // Now lo == hi == s: below[j] = count(< s), upto[j] = count(<= s). Take the entries < s and
    // then as many entries equal to s as the rank still needs, in run order.
    let mut need = rank - below.iter().sum::<usize>();
    below
        .iter()
        .zip(&upto)
        .map(|(&b, &u)| {
            let take = need.min(u - b);
            need -= take;
            b + take
        })
        .collect()
}

/// Merges the sorted `runs` into `out` with a [`LoserTree`] (stable across runs: equal entries
/// come out in run order).
///
/// # Panics
/// If `out.len()` differs from the total length of the runs.
pub fn merge_entries(runs: &[&[Entry]], out: &mut [Entry]) {
    let total: usize = runs.iter().map(|r| r.len()).sum();
    assert_eq!(out.len(), total, "merge output length must equal the total run length");
    match runs.iter().filter(|r| !r.is_empty()).count() {
        0 => return,
        1 => {
            let r = runs.iter().find(|r| !r.is_empty()).expect("one non-empty run");
            out.copy_from_slice(r);
            return;
        }
        _ => {}
    }
    let mut pos: Vec<usize> = vec![1; runs.len()];
    let mut tree = LoserTree::new(runs.iter().map(|r| r.first().copied()).collect());
    for slot in out.iter_mut() {
        let (src, key) = tree.top().expect("runs hold as many entries as out");
        *slot = key;
        let p = pos[src];
        tree.replace_top(runs[src].get(p).copied());
        pos[src] = p + 1;
    }
}

/// Parallel [`merge_entries`]: [`split_sorted`] cuts the runs into key ranges, which are merged
/// independently into consecutive pieces of `out` on the current rayon pool (or a pool of
/// `threads` threads, see [`crate::par_sort_entries`]).
///
/// # Panics
/// If `out.len()` differs from the total length of the runs.
pub fn par_merge_entries(runs: &[&[Entry]], out: &mut [Entry], threads: usize) {
    let total: usize = runs.iter().map(|r| r.len()).sum();
    assert_eq!(out.len(), total, "merge output length must equal the total run length");
    if threads <= 1 || total <= PAR_TASK_ENTRIES {
        merge_entries(runs, out);
        return;
    }
    let parts = (total / PAR_TASK_ENTRIES).clamp(threads, threads * 8);
    let cuts = split_sorted(runs, parts);
    let mut pieces: Vec<(Vec<&[Entry]>, &mut [Entry])> = Vec::with_capacity(parts);
    let mut rest = out;
    for p in 0..parts {
        let sub: Vec<&[Entry]> = runs.iter().zip(&cuts).map(|(r, c)| &r[c[p]..c[p + 1]]).collect();
        let len = sub.iter().map(|s| s.len()).sum();
        let (piece, r) = rest.split_at_mut(len);
        rest = r;
        pieces.push((sub, piece));
    }
    crate::pool::run(threads, || {
        pieces.into_par_iter().for_each(|(sub, piece)| merge_entries(&sub, piece));
    });
}

#[cfg(test)]
mod par_split_tests {
    use super::*;

    #[test]
    fn parallel_split_finds_the_same_cuts() {
        let mut x = 7u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x
        };
        let runs: Vec<Vec<Entry>> = (0..9)
            .map(|i| {
                let mut v: Vec<Entry> = (0..(i * 37 + 5))
                    .map(|_| ((next() as u128) << 48) | (next() as u128 & 0xffff))
                    .collect();
                v.sort_unstable();
                v
            })
            .collect();
        let slices: Vec<&[Entry]> = runs.iter().map(|r| r.as_slice()).collect();
        for parts in [1, 2, 3, 17, 64] {
            assert_eq!(
                par_split_sorted(&slices, parts, 3),
                split_sorted(&slices, parts),
                "{parts}"
            );
        }
    }
}

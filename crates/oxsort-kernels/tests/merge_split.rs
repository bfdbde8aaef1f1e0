//! split_sorted, LoserTree and the merges, against sorting the union.

mod common;
use common::*;
use oxsort_kernels::{merge_entries, par_merge_entries, split_sorted, Entry, LoserTree};

/// Cuts `v` into `k` sorted runs of random lengths (some empty).
fn runs_of(v: &[Entry], k: usize, rng: &mut Rng) -> Vec<Vec<Entry>> {
    let mut bounds: Vec<usize> =
        (0..k.saturating_sub(1)).map(|_| rng.below(v.len() as u64 + 1) as usize).collect();
    bounds.push(0);
    bounds.push(v.len());
    bounds.sort_unstable();
    let mut runs: Vec<Vec<Entry>> = bounds.windows(2).map(|w| v[w[0]..w[1]].to_vec()).collect();
    runs.truncate(k);
    for r in &mut runs {
        r.sort_unstable();
    }
    runs
}

fn check_split(runs: &[&[Entry]], parts: usize, what: &str) {
    let cuts = split_sorted(runs, parts);
    let total: usize = runs.iter().map(|r| r.len()).sum();
    assert_eq!(cuts.len(), runs.len(), "{what}: one cut vector per run");
    for (c, r) in cuts.iter().zip(runs) {
        assert_eq!(c.len(), parts + 1, "{what}");
        assert_eq!((c[0], c[parts]), (0, r.len()), "{what}: cuts span the run");
        assert!(c.windows(2).all(|w| w[0] <= w[1]), "{what}: cuts non-decreasing");
    }
    let mut prev_max: Option<Entry> = None;
    for p in 0..parts {
        let size: usize = cuts.iter().map(|c| c[p + 1] - c[p]).sum();
        // Balance: exactly the difference of the rounded-down ranks.
        let want = (p + 1) * total / parts - p * total / parts;
        assert_eq!(size, want, "{what}: part {p} size");
        let part = runs.iter().zip(&cuts).flat_map(|(r, c)| &r[c[p]..c[p + 1]]);
        let (min, max) = part.fold((None, None), |(lo, hi): (Option<Entry>, Option<Entry>), &x| {
            (Some(lo.map_or(x, |l| l.min(x))), Some(hi.map_or(x, |h| h.max(x))))
        });
        if let (Some(pm), Some(mn)) = (prev_max, min) {
            assert!(pm < mn, "{what}: part {p} overlaps the previous part");
        }
        if max.is_some() {
            prev_max = max;
        }
    }
}

#[test]
fn split_sorted_matrix() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    for pat in Pattern::ALL {
        for n in [0usize, 1, 2, 3, 10, 100, 1000, 65_537] {
            let v = entries(pat, n, &mut rng, true);
            for k in [1usize, 2, 3, 17, 100] {
                let runs = runs_of(&v, k, &mut rng);
                let refs: Vec<&[Entry]> = runs.iter().map(|r| r.as_slice()).collect();
                for parts in [1usize, 2, 3, 7, 64] {
                    let what = format!("{pat} n={n} k={k} parts={parts} OXSORT_SEED={seed}");
                    check_split(&refs, parts, &what);
                }
            }
        }
    }
    check_split(&[], 4, "no runs");
}

#[test]
fn split_sorted_with_duplicates_splits_equal_entries_in_run_order() {
    // Not entries (duplicates across runs), but the cut must still be ordered and balanced.
    let runs: Vec<Vec<Entry>> = vec![vec![5; 10], vec![5; 7], vec![1, 5, 9]];
    let refs: Vec<&[Entry]> = runs.iter().map(|r| r.as_slice()).collect();
    let cuts = split_sorted(&refs, 2);
    // 20 entries: 10 per part; part 0 = [1] + nine 5s taken from run 0 first.
    assert_eq!(cuts[0], vec![0, 9, 10]);
    assert_eq!(cuts[1], vec![0, 0, 7]);
    assert_eq!(cuts[2], vec![0, 1, 3]);
}

/// Pops the whole tree, advancing sources, and returns (key, source) in pop order.
fn drain(sources: &[Vec<u64>]) -> Vec<(u64, usize)> {
    let mut pos = vec![1usize; sources.len()];
    let mut t = LoserTree::new(sources.iter().map(|s| s.first().copied()).collect());
    assert_eq!(t.len(), sources.len());
    let mut out = Vec::new();
    while let Some((src, key)) = t.top() {
        out.push((key, src));
        t.replace_top(sources[src].get(pos[src]).copied());
        pos[src] += 1;
    }
    out
}

#[test]
fn loser_tree_merges_like_a_stable_sort() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    for k in [0usize, 1, 2, 3, 17, 1000] {
        for round in 0..4 {
            let sources: Vec<Vec<u64>> = (0..k)
                .map(|_| {
                    // Some empty sources; small key range so equal keys across sources happen.
                    let len = if rng.below(4) == 0 { 0 } else { rng.below(50) as usize };
                    let mut s: Vec<u64> = (0..len)
                        .map(|_| rng.below(if round % 2 == 0 { 20 } else { 1 << 40 }))
                        .collect();
                    s.sort_unstable();
                    s
                })
                .collect();
            let mut want: Vec<(u64, usize)> = sources
                .iter()
                .enumerate()
                .flat_map(|(i, s)| s.iter().map(move |&x| (x, i)))
                .collect();
            want.sort(); // by key, then source: the stable merge order
            assert_eq!(drain(&sources), want, "round {round} k = {k} OXSORT_SEED={seed}");
        }
    }
}

#[test]
fn loser_tree_edge_cases() {
    let t: LoserTree<u32> = LoserTree::new(vec![]);
    assert!(t.is_empty());
    assert_eq!(t.top(), None);
    let mut t = LoserTree::new(vec![None, None, Some(3u32)]);
    assert_eq!(t.top(), Some((2, 3)));
    t.replace_top(None);
    assert_eq!(t.top(), None);
    let mut t = LoserTree::new(vec![Some(1u8)]);
    assert_eq!(t.top(), Some((0, 1)));
    t.replace_top(Some(7));
    assert_eq!(t.top(), Some((0, 7)));
}

#[test]
fn merges_match_sorting_the_union() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    for pat in Pattern::ALL {
        for n in [0usize, 1, 5, 1000, 70_000, 300_000] {
            let v = entries(pat, n, &mut rng, true);
            let mut want = v.clone();
            want.sort_unstable();
            for k in [1usize, 2, 3, 17, 1000] {
                let runs = runs_of(&v, k, &mut rng);
                let refs: Vec<&[Entry]> = runs.iter().map(|r| r.as_slice()).collect();
                let mut out = vec![0; n];
                merge_entries(&refs, &mut out);
                assert!(out == want, "merge_entries: {pat} n={n} k={k} OXSORT_SEED={seed}");
                for threads in [2, 3] {
                    let mut out = vec![0; n];
                    par_merge_entries(&refs, &mut out, threads);
                    assert!(
                        out == want,
                        "par_merge_entries({threads}): {pat} n={n} k={k} OXSORT_SEED={seed}"
                    );
                }
            }
        }
    }
}

//! Property tests (proptest) on arbitrary values.

use oxsort_kernels::{
    merge_entries, par_sort_entries, sort_entries, split_sorted, Entry, LoserTree,
};
use proptest::prelude::*;

/// u128s that often share long prefixes: a few "bases" plus small perturbations.
fn clustered() -> impl Strategy<Value = Vec<u128>> {
    (any::<u128>(), prop::collection::vec((0u32..128, any::<u16>(), any::<bool>()), 0..600))
        .prop_map(|(base, xs)| {
            xs.into_iter()
                .map(|(bit, noise, flip)| {
                    let x = base ^ ((noise as u128) << (bit.min(112)));
                    if flip {
                        !x
                    } else {
                        x
                    }
                })
                .collect()
        })
}

proptest! {
    #[test]
    fn sort_equals_std(v in prop::collection::vec(any::<u128>(), 0..3000)) {
        let mut want = v.clone();
        want.sort_unstable();
        let mut got = v.clone();
        sort_entries(&mut got);
        prop_assert_eq!(&got, &want);
        let mut got = v;
        par_sort_entries(&mut got, 2);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn sort_clustered_equals_std(v in clustered()) {
        let mut want = v.clone();
        want.sort_unstable();
        let mut got = v;
        sort_entries(&mut got);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn split_and_merge(runs in prop::collection::vec(prop::collection::vec(any::<u64>(), 0..200), 0..20),
                       parts in 1usize..10) {
        // Unique entries: value in the high bits, a global counter in the low bits.
        let mut c = 0u128;
        let runs: Vec<Vec<Entry>> = runs.into_iter().map(|r| {
            let mut r: Vec<Entry> = r.into_iter().map(|x| { c += 1; ((x as u128) << 64) | c }).collect();
            r.sort_unstable();
            r
        }).collect();
        let refs: Vec<&[Entry]> = runs.iter().map(|r| r.as_slice()).collect();
        let mut want: Vec<Entry> = runs.concat();
        want.sort_unstable();
        let mut out = vec![0; want.len()];
        merge_entries(&refs, &mut out);
        prop_assert_eq!(&out, &want);
        let cuts = split_sorted(&refs, parts);
        let mut joined = Vec::new();
        for p in 0..parts {
            let mut part: Vec<Entry> = refs.iter().zip(&cuts).flat_map(|(r, c)| r[c[p]..c[p+1]].iter().copied()).collect();
            part.sort_unstable();
            joined.extend(part);
        }
        prop_assert_eq!(joined, want);
    }

    #[test]
    fn loser_tree_pops_sorted(keys in prop::collection::vec(prop::option::of(any::<i16>()), 0..40)) {
        let mut t = LoserTree::new(keys.clone());
        let mut got = Vec::new();
        while let Some((src, k)) = t.top() {
            got.push((k, src));
            t.replace_top(None);
        }
        let mut want: Vec<(i16, usize)> = keys.iter().enumerate().filter_map(|(i, k)| k.map(|k| (k, i))).collect();
        want.sort();
        prop_assert_eq!(got, want);
    }
}

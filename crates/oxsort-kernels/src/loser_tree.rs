//! Loser tree (tournament tree of losers) for k-way merging.

use std::cmp::Ordering;
use std::hint::select_unpredictable;

use crate::entry::{entry_index, Entry, INDEX_BITS, MAX_INDEX};

/// A tournament tree of losers over `k` sorted sources.
///
/// Leaf `i` (source `i`) sits at array position `k + i`; internal node `j` (`1 <= j < k`) has
/// children `2j` and `2j + 1` and stores the *loser* of the match played there. The overall
/// winner is kept apart (`winner`). Any `k` works: every internal node has exactly two children.
///
/// ```text
///                    winner: source 2 (key 3)
///                              |
///                     node 1: loser = 0 (key 5)
///                    /                        \
///        node 2: loser = 1 (9)          node 3: loser = 3 (7)
///          /          \                   /          \
///   leaf 4: src 0   leaf 5: src 1   leaf 6: src 2   leaf 7: src 3
///       key 5           key 9           key 3           key 7
/// ```
///
/// After the winner's source advances ([`LoserTree::replace_top`]), only the path from its leaf
/// to the root is replayed: at each node the stored loser plays the running candidate, the
/// loser stays, the winner climbs. That is `ceil(log2 k)` comparisons per popped key.
///
/// Ordering: smaller key wins; equal keys are won by the smaller source number, so merging runs
/// given in input order is stable. An exhausted source (`None`) loses to every key.
#[derive(Debug, Clone)]
pub struct LoserTree<K> {
    /// Current head key of each source (`None` = exhausted).
    keys: Vec<Option<K>>,
    /// `losers[j]` for internal nodes `1..k`; `losers[0]` unused.
    losers: Vec<u32>,
    /// The source holding the smallest head.
    winner: u32,
}

impl<K: Ord + Copy> LoserTree<K> {
    /// Builds the tree from the first key of every source (`None` for an empty source).
    ///
    /// # Panics
    /// If there are more than `u32::MAX / 2` sources.
    pub fn new(initial: Vec<Option<K>>) -> Self {
        Self::new_by(initial, K::cmp)
    }

    /// Number of sources.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// `true` if the tree has no sources.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Replaces the winner's key by its source's next key (`None` = that source is exhausted)
    /// and replays the winner's path.
    ///
    /// # Panics
    /// If the tree has no sources.
    #[inline]
    pub fn replace_top(&mut self, next: Option<K>) {
        self.replace_top_by(next, K::cmp);
    }
}

/// The same tree ordered by a caller's comparison instead of `Ord`: for keys whose order needs
/// more than the key value (an integer prefix whose ties are broken by comparing the records).
/// `cmp(x, y)` must be a total order; equal keys go to the lower source (stable).
impl<K: Copy> LoserTree<K> {
    /// Builds the tree ordered by `cmp`.
    ///
    /// # Panics
    /// If there are more than `u32::MAX / 2` sources.
    pub fn new_by<C: Fn(&K, &K) -> Ordering>(initial: Vec<Option<K>>, cmp: C) -> Self {
        let k = initial.len();
        assert!(k <= (u32::MAX / 2) as usize, "too many merge sources: {k}");
        let mut tree = LoserTree { keys: initial, losers: vec![0; k.max(1)], winner: 0 };
        if k <= 1 {
            return tree;
        }
        let mut winners = vec![0u32; 2 * k];
        for (i, w) in winners[k..].iter_mut().enumerate() {
            *w = i as u32;
        }
        for j in (1..k).rev() {
            let (a, b) = (winners[2 * j], winners[2 * j + 1]);
            let (win, lose) = if tree.beats_by(a, b, &cmp) { (a, b) } else { (b, a) };
            winners[j] = win;
            tree.losers[j] = lose;
        }
        tree.winner = winners[1];
        tree
    }

    /// The winning source and its key under the tree's order, or `None` when all are exhausted.
    #[inline]
    pub fn top(&self) -> Option<(usize, K)> {
        let w = self.winner as usize;
        self.keys.get(w).copied().flatten().map(|key| (w, key))
    }

    /// [`LoserTree::replace_top`] for a tree built with [`LoserTree::new_by`] (same `cmp`).
    ///
    /// # Panics
    /// If the tree has no sources.
    #[inline]
    pub fn replace_top_by<C: Fn(&K, &K) -> Ordering>(&mut self, next: Option<K>, cmp: C) {
        let k = self.keys.len();
        assert!(k > 0, "replace_top on a loser tree without sources");
        let mut cand = self.winner;
        self.keys[cand as usize] = next;
        let mut node = (cand as usize + k) / 2;
        while node >= 1 {
            let other = self.losers[node];
            if self.beats_by(other, cand, &cmp) {
                self.losers[node] = cand;
                cand = other;
            }
            node /= 2;
        }
        self.winner = cand;
    }

    #[inline(always)]
    fn beats_by<C: Fn(&K, &K) -> Ordering>(&self, a: u32, b: u32, cmp: &C) -> bool {
        match (&self.keys[a as usize], &self.keys[b as usize]) {
            // One comparison per match: the key order, then the source number.
            (Some(x), Some(y)) => cmp(x, y).then(a.cmp(&b)).is_lt(),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => a < b,
        }
    }
}

/// A loser tree over [`Entry`] heads whose index bits are their source's number (the merge of
/// sorted runs keys each run's head as `prefix << 48 | run`): the entries of different sources
/// never tie, so the order is one integer comparison and needs no source numbers beside it.
///
/// Each internal node holds its loser entry itself rather than a source number to look up, and
/// an exhausted source is [`EntryTree::DONE`] (larger than any head), so a replay is a chain of
/// branch-free min/max steps up the path, with no data-dependent jumps to mispredict:
///
/// ```text
///   nodes[0] = winner entry (its index bits name its source)
///   nodes[j] = loser entry of the match at node j (1 <= j < k), children 2j and 2j + 1;
///              leaf of source i at position k + i (implicit: its head is the entry replayed)
///   replay of source w with head h:  node = (w + k) / 2 .. 1:
///       (nodes[node], h) = (max(nodes[node], h), min(nodes[node], h))
/// ```
#[derive(Debug, Clone)]
pub struct EntryTree {
    /// Entries as (high, low) 64-bit halves: a half stored is a half loaded, which the CPU
    /// forwards from its store buffer, where a `u128` load of two 64-bit stores stalls.
    nodes: Vec<[u64; 2]>,
}

/// An entry's halves, high first.
#[inline(always)]
fn halves(e: Entry) -> [u64; 2] {
    [(e >> 64) as u64, e as u64]
}

impl EntryTree {
    /// The head of an exhausted source: above every entry a source can have (a source's index
    /// is below `2^48 - 1`).
    pub const DONE: Entry = Entry::MAX;

    /// Builds the tree from the first head of every source (`None` for an empty source), for
    /// keys whose prefix decides (see [`EntryTree::new_by`]).
    ///
    /// # Panics
    /// If a head's index bits are not its source's number, or there are `2^48 - 1` sources
    /// or more.
    pub fn new(heads: &[Option<Entry>]) -> Self {
        Self::new_by(heads, prefix_decides)
    }

    /// Builds the tree for keys whose equal prefixes may hide different keys: `tie(a, b)`
    /// orders two heads whose prefixes are equal (by their sources' whole keys; equal keys
    /// then go to the lower source). It is called for such pairs only, so heads that differ
    /// in their prefixes still play branch-free.
    ///
    /// # Panics
    /// As [`EntryTree::new`].
    pub fn new_by<T: Fn(Entry, Entry) -> Ordering>(heads: &[Option<Entry>], tie: T) -> Self {
        let k = heads.len();
        assert!((k as u64) < MAX_INDEX, "too many merge sources: {k}");
        let mut winners = vec![Self::DONE; 2 * k.max(1)];
        for (i, h) in heads.iter().enumerate() {
            if let Some(h) = *h {
                assert_eq!(entry_index(h), i as u64, "a head's index must be its source");
                winners[k + i] = h;
            }
        }
        let mut nodes = vec![halves(Self::DONE); k.max(1)];
        for j in (1..k).rev() {
            let (a, b) = (winners[2 * j], winners[2 * j + 1]);
            let (win, lose) = if precedes(a, b, &tie) { (a, b) } else { (b, a) };
            winners[j] = win;
            nodes[j] = halves(lose);
        }
        if k > 0 {
            nodes[0] = halves(winners[1]);
        }
        EntryTree { nodes }
    }

    /// The winning source and its head, or `None` when every source is exhausted.
    #[inline]
    pub fn top(&self) -> Option<(usize, Entry)> {
        let [hi, lo] = self.nodes[0];
        let w = (hi as u128) << 64 | lo as u128;
        (w != Self::DONE).then(|| (entry_index(w) as usize, w))
    }

    /// Replaces the winner's head by its source's next one (`None`: that source is exhausted;
    /// else its index bits must be the source's number) and replays the winner's path, in a
    /// tree built with [`EntryTree::new`].
    ///
    /// # Panics
    /// If every source is exhausted already.
    #[inline]
    pub fn replace_top(&mut self, next: Option<Entry>) {
        self.replace_top_by(next, prefix_decides);
    }

    /// [`EntryTree::replace_top`] in a tree built with [`EntryTree::new_by`] (the same `tie`).
    ///
    /// # Panics
    /// If every source is exhausted already.
    #[inline]
    pub fn replace_top_by<T: Fn(Entry, Entry) -> Ordering>(&mut self, next: Option<Entry>, tie: T) {
        let k = self.nodes.len();
        let (w, _) = self.top().expect("replace_top on an exhausted tree");
        debug_assert!(next.is_none_or(|n| entry_index(n) == w as u64));
        let [mut hi, mut lo] = halves(next.unwrap_or(Self::DONE));
        let mut node = (w + k) / 2;
        while node >= 1 {
            let [ohi, olo] = self.nodes[node];
            let other = (ohi as u128) << 64 | olo as u128;
            let less = precedes(other, (hi as u128) << 64 | lo as u128, &tie);
            // The smaller of the stored loser and the candidate climbs, the larger stays, as
            // selects of 64-bit halves (a `u128` select still compiles to a jump): which one
            // is smaller is a coin toss a jump would mispredict.
            self.nodes[node] =
                [select_unpredictable(less, hi, ohi), select_unpredictable(less, lo, olo)];
            (hi, lo) = (select_unpredictable(less, ohi, hi), select_unpredictable(less, olo, lo));
            node /= 2;
        }
        self.nodes[0] = [hi, lo];
    }
}

/// The tie-break of keys whose prefix decides: none (heads with equal prefixes hold equal
/// keys, and go to the lower source).
#[inline(always)]
fn prefix_decides(_: Entry, _: Entry) -> Ordering {
    Ordering::Equal
}

/// Whether head `a` plays before head `b`: by prefix; equal prefixes by `tie`, then by source
/// (the index bits). [`EntryTree::DONE`] shares its prefix with a head whose prefix is all
/// ones, and still plays after it.
#[inline(always)]
fn precedes<T: Fn(Entry, Entry) -> Ordering>(a: Entry, b: Entry, tie: &T) -> bool {
    if (a ^ b) >> INDEX_BITS == 0 && a != EntryTree::DONE && b != EntryTree::DONE {
        tie(a, b).then(a.cmp(&b)).is_lt()
    } else {
        a < b
    }
}

#[cfg(test)]
mod by_tests {
    use super::LoserTree;

    #[test]
    fn ordered_by_a_comparison_merges_stably() {
        // Keys (value, tag): ordered by value only, so ties must go to the lower source.
        let runs: Vec<Vec<(u32, u32)>> = vec![
            vec![(1, 0), (3, 0), (3, 1), (9, 0)],
            vec![(1, 10), (2, 10), (3, 10)],
            vec![],
            vec![(0, 30), (3, 30), (10, 30)],
        ];
        let cmp = |x: &(u32, u32), y: &(u32, u32)| x.0.cmp(&y.0);
        let mut pos = vec![0usize; runs.len()];
        let mut tree = LoserTree::new_by(runs.iter().map(|r| r.first().copied()).collect(), cmp);
        let mut out = Vec::new();
        while let Some((s, k)) = tree.top() {
            out.push(k);
            pos[s] += 1;
            tree.replace_top_by(runs[s].get(pos[s]).copied(), cmp);
        }
        let mut want: Vec<(u32, u32)> = runs.concat();
        want.sort_by_key(|k| k.0); // stable: source order within equal values
        assert_eq!(out, want);
    }
}

#[cfg(test)]
mod entry_tree_tests {
    use super::EntryTree;
    use crate::entry::{make_entry, Entry};
    use oxsort_testkit::Rng;

    /// Merges `runs` of prefixes through the tree, each entry keyed by its run's number.
    fn merged(runs: &[Vec<[u8; 10]>]) -> Vec<Entry> {
        let head = |r: usize, i: usize| runs[r].get(i).map(|p| make_entry(p, r as u64));
        let mut pos = vec![0usize; runs.len()];
        let heads: Vec<_> = (0..runs.len()).map(|r| head(r, 0)).collect();
        let mut tree = EntryTree::new(&heads);
        let mut out = Vec::new();
        while let Some((s, e)) = tree.top() {
            out.push(e);
            pos[s] += 1;
            tree.replace_top(head(s, pos[s]));
        }
        out
    }

    #[test]
    fn merges_any_number_of_runs_in_order_ties_to_the_lower_run() {
        let mut rng = Rng::new(11);
        let mut next = move || rng.next_u64();
        for k in 0..=19 {
            // Few distinct prefixes, so that equal keys across runs are common; run 3 empty.
            let runs: Vec<Vec<[u8; 10]>> = (0..k)
                .map(|r| {
                    let n = if r == 3 { 0 } else { (next() % 40) as usize };
                    let mut v: Vec<[u8; 10]> = (0..n)
                        .map(|_| {
                            let mut p = [0u8; 10];
                            p[9] = (next() % 7) as u8;
                            p[0] = (next() % 2) as u8 * 0xff;
                            p
                        })
                        .collect();
                    v.sort_unstable();
                    v
                })
                .collect();
            let got = merged(&runs);
            let mut want: Vec<Entry> = runs
                .iter()
                .enumerate()
                .flat_map(|(r, v)| v.iter().map(move |p| make_entry(p, r as u64)))
                .collect();
            // Stable by run: the whole entry orders prefix, then run.
            want.sort_unstable();
            assert_eq!(got, want, "{k} runs");
        }
    }

    #[test]
    fn equal_prefixes_go_to_the_whole_keys_then_to_the_lower_run() {
        use crate::entry::entry_index;
        use std::cell::RefCell;
        let mut rng = Rng::new(5);
        let mut next = move || rng.next_u64();
        // Records (prefix, rest): the whole key is both; prefixes are few (all ones among
        // them, the prefix an exhausted run's head has too), so they tie often.
        for k in 1..=9 {
            let runs: Vec<Vec<([u8; 10], u8)>> = (0..k)
                .map(|_| {
                    let mut v: Vec<([u8; 10], u8)> = (0..next() % 30)
                        .map(|_| {
                            (
                                [(next() % 3) as u8 * 0x7f + (next() % 2) as u8; 10],
                                (next() % 4) as u8,
                            )
                        })
                        .collect();
                    v.sort_unstable();
                    v
                })
                .collect();
            let pos = RefCell::new(vec![0usize; k]);
            let head =
                |r: usize| runs[r].get(pos.borrow()[r]).map(|(p, _)| make_entry(p, r as u64));
            let rest = |e: Entry| {
                let r = entry_index(e) as usize;
                runs[r][pos.borrow()[r]].1
            };
            let tie = |a: Entry, b: Entry| rest(a).cmp(&rest(b));
            let heads: Vec<_> = (0..k).map(head).collect();
            let mut tree = EntryTree::new_by(&heads, tie);
            let mut got = Vec::new();
            while let Some((r, _)) = tree.top() {
                got.push((runs[r][pos.borrow()[r]], r));
                pos.borrow_mut()[r] += 1;
                tree.replace_top_by(head(r), tie);
            }
            let mut want: Vec<(([u8; 10], u8), usize)> = runs
                .iter()
                .enumerate()
                .flat_map(|(r, v)| v.iter().map(move |rec| (*rec, r)))
                .collect();
            want.sort(); // by whole key, then run
            assert_eq!(got, want, "{k} runs");
        }
    }

    #[test]
    fn the_largest_prefix_is_still_below_an_exhausted_source() {
        let top = [0xffu8; 10];
        assert_eq!(merged(&[vec![top, top], vec![top]]).len(), 3);
    }
}

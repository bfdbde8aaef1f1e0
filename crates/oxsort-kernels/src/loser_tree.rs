//! Loser tree (tournament tree of losers) for k-way merging.

use std::cmp::Ordering;

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

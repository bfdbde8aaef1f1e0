//! Sorting entries whose prefixes may tie, with a caller comparator for the ties.

use crate::entry::{entry_index, entry_prefix, Entry};
use std::cmp::Ordering;

/// Sorts by key prefix; entries with equal prefixes are ordered by `tie(index_a, index_b)`, and
/// entries the comparator calls equal keep index order (stable).
///
/// Implementation: [`crate::sort_entries`] (prefix, then index), then a stable
/// comparison sort of each run of equal prefixes by `tie`. A comparator that is not a total
/// order may leave a run in an unspecified order (or panic), never undefined behaviour.
pub fn sort_entries_with_ties<F: Fn(u64, u64) -> Ordering + Sync>(v: &mut [Entry], tie: &F) {
    crate::sort_entries(v);
    let mut start = 0;
    while start < v.len() {
        let p = entry_prefix(v[start]);
        let len = v[start..].iter().position(|&e| entry_prefix(e) != p).unwrap_or(v.len() - start);
        if len > 1 {
            v[start..start + len].sort_by(|&a, &b| tie(entry_index(a), entry_index(b)));
        }
        start += len;
    }
}

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

/// Sorts by key prefix; entries with equal prefixes are ordered by their whole keys, which
/// `key(index, out)` appends to `out`, then by index (stable).
///
/// Each tied entry's key is built exactly once, where [`sort_entries_with_ties`] with a
/// comparator that builds keys builds two per comparison: for keys that cost (a locale's
/// collation transform, a parsed number) this is the difference between one build per record
/// and `2 log2(group)`. Untied entries build nothing.
///
/// ```text
///  group of equal prefixes   v[s..s+n]:  e0 e1 e2 ...
///  keys, built once          arena:      |key e0|key e1|key e2|...   spans[i] = (start, end)
///  order                     positions 0..n sorted by (arena[spans[i]], i); v permuted by it
/// ```
pub fn sort_entries_with_keyed_ties<F: Fn(u64, &mut Vec<u8>) + Sync>(v: &mut [Entry], key: &F) {
    crate::sort_entries(v);
    let mut arena: Vec<u8> = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    let mut group: Vec<Entry> = Vec::new();
    let mut start = 0;
    while start < v.len() {
        let p = entry_prefix(v[start]);
        let len = v[start..].iter().position(|&e| entry_prefix(e) != p).unwrap_or(v.len() - start);
        if len > 1 {
            let g = &mut v[start..start + len];
            arena.clear();
            spans.clear();
            for &e in g.iter() {
                let from = arena.len();
                key(entry_index(e), &mut arena);
                spans.push((from, arena.len()));
            }
            order.clear();
            order.extend(0..len);
            // Entries of a group are in index order already: a stable sort by key keeps it
            // among equal keys.
            order.sort_by(|&a, &b| {
                arena[spans[a].0..spans[a].1].cmp(&arena[spans[b].0..spans[b].1])
            });
            group.clear();
            group.extend(order.iter().map(|&i| g[i]));
            g.copy_from_slice(&group);
        }
        start += len;
    }
}

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

/// Like [`sort_entries_with_keyed_ties`], in two stages for keys whose first bytes are cheap to
/// build and whose whole is not (a collated text: its first bytes come from a table, the whole
/// from the C library's transform). `short(index, out)` appends exactly the first `short_len`
/// bytes of the entry's whole key (all of it when shorter); `whole(index, out)` appends the
/// whole key. Tied entries are ordered by short keys; only those whose short keys are equal and
/// `short_len` long (so their whole keys may still differ) build whole keys.
///
/// ```text
///  group of equal prefixes ──► short keys (short_len bytes) ──► sorted, stable
///                                   runs of equal, full-length short keys ──► whole keys
/// ```
///
/// A short key that is the whole key orders exactly as the whole key does against any other
/// short key (a proper prefix sorts first), so the two stages give the order of whole keys.
pub fn sort_entries_with_staged_ties<S, W>(v: &mut [Entry], short_len: usize, short: &S, whole: &W)
where
    S: Fn(u64, &mut Vec<u8>) + Sync,
    W: Fn(u64, &mut Vec<u8>) + Sync,
{
    crate::sort_entries(v);
    let mut start = 0;
    while start < v.len() {
        let p = entry_prefix(v[start]);
        let len = v[start..].iter().position(|&e| entry_prefix(e) != p).unwrap_or(v.len() - start);
        if len > 1 {
            let g = &mut v[start..start + len];
            let (arena, spans) = sort_by_built_keys(g, short);
            // Runs of equal short keys that are short_len long: their whole keys decide.
            let key = |i: usize| &arena[spans[i].0..spans[i].1];
            let mut i = 0;
            while i < g.len() {
                let n = (i..g.len()).position(|j| key(j) != key(i)).unwrap_or(g.len() - i);
                if n > 1 && key(i).len() >= short_len {
                    sort_by_built_keys(&mut g[i..i + n], whole);
                }
                i += n;
            }
        }
        start += len;
    }
}

/// Orders `g` (in index order) by the keys `key` builds, stably; returns the keys, in the new
/// order (`arena[spans[i].0..spans[i].1]` is the key of `g[i]`).
fn sort_by_built_keys<F: Fn(u64, &mut Vec<u8>)>(
    g: &mut [Entry],
    key: &F,
) -> (Vec<u8>, Vec<(usize, usize)>) {
    let mut arena: Vec<u8> = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(g.len());
    for &e in g.iter() {
        let from = arena.len();
        key(entry_index(e), &mut arena);
        spans.push((from, arena.len()));
    }
    let mut order: Vec<usize> = (0..g.len()).collect();
    order.sort_by(|&a, &b| arena[spans[a].0..spans[a].1].cmp(&arena[spans[b].0..spans[b].1]));
    let sorted: Vec<Entry> = order.iter().map(|&i| g[i]).collect();
    g.copy_from_slice(&sorted);
    let spans = order.iter().map(|&i| spans[i]).collect();
    (arena, spans)
}

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
    let mut built = Built::default();
    let mut start = 0;
    while start < v.len() {
        let p = entry_prefix(v[start]);
        let len = v[start..].iter().position(|&e| entry_prefix(e) != p).unwrap_or(v.len() - start);
        if len > 1 {
            // Entries of a group are in index order already: a stable sort by key keeps it
            // among equal keys.
            sort_by_built_keys(&mut v[start..start + len], key, &mut built);
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
    let (mut shorts, mut wholes) = (Built::default(), Built::default());
    let mut start = 0;
    while start < v.len() {
        let p = entry_prefix(v[start]);
        let len = v[start..].iter().position(|&e| entry_prefix(e) != p).unwrap_or(v.len() - start);
        if len > 1 {
            let g = &mut v[start..start + len];
            sort_by_built_keys(g, short, &mut shorts);
            // Runs of equal short keys that are short_len long: their whole keys decide.
            let mut i = 0;
            while i < g.len() {
                let n = (i..g.len())
                    .position(|j| shorts.key(j) != shorts.key(i))
                    .unwrap_or(g.len() - i);
                if n > 1 && shorts.key(i).len() >= short_len {
                    sort_by_built_keys(&mut g[i..i + n], whole, &mut wholes);
                }
                i += n;
            }
        }
        start += len;
    }
}

/// The buffers [`sort_by_built_keys`] reuses from one group to the next.
#[derive(Default)]
struct Built {
    /// The keys, back to back; `spans[i]` is the key of the group's `i`-th entry once sorted.
    arena: Vec<u8>,
    spans: Vec<(usize, usize)>,
    order: Vec<usize>,
    sorted: Vec<Entry>,
    sorted_spans: Vec<(usize, usize)>,
}

impl Built {
    fn key(&self, i: usize) -> &[u8] {
        &self.arena[self.spans[i].0..self.spans[i].1]
    }
}

/// Orders `g` (in index order) by the keys `key` builds, stably; leaves the keys in `b`, in
/// the new order.
fn sort_by_built_keys<F: Fn(u64, &mut Vec<u8>)>(g: &mut [Entry], key: &F, b: &mut Built) {
    b.arena.clear();
    b.spans.clear();
    for &e in g.iter() {
        let from = b.arena.len();
        key(entry_index(e), &mut b.arena);
        b.spans.push((from, b.arena.len()));
    }
    b.order.clear();
    b.order.extend(0..g.len());
    let (arena, spans) = (&b.arena, &b.spans);
    b.order.sort_by(|&x, &y| arena[spans[x].0..spans[x].1].cmp(&arena[spans[y].0..spans[y].1]));
    b.sorted.clear();
    b.sorted.extend(b.order.iter().map(|&i| g[i]));
    g.copy_from_slice(&b.sorted);
    b.sorted_spans.clear();
    b.sorted_spans.extend(b.order.iter().map(|&i| b.spans[i]));
    std::mem::swap(&mut b.spans, &mut b.sorted_spans);
}

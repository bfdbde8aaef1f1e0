//! Sorting entries whose prefixes may tie, with a caller comparator for the ties.

use crate::entry::{entry_index, entry_prefix, make_entry, Entry, PREFIX_BYTES};
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

/// Bytes of scratch memory a tied entry costs while its group is ordered by built keys,
/// besides its key: its key's span, its place in the order, its entry and span once sorted.
pub const TIE_BYTES_PER_ENTRY: usize =
    2 * std::mem::size_of::<(usize, usize)>() + std::mem::size_of::<usize>() + 16;

/// Sorts by key prefix; entries with equal prefixes are ordered by their whole keys, which
/// `key(index, out)` appends to `out`, then by index (stable). The keys built at once and their
/// bookkeeping take at most about `limit` bytes. `key_start(index, out, n)` appends at least the
/// first `n` bytes of the whole key (all of it when shorter): a group too big for `limit` is
/// split by its keys' next bytes, which need only the keys' starts.
///
/// Each tied entry's key is built exactly once, where [`sort_entries_with_ties`] with a
/// comparator that builds keys builds two per comparison: for keys that cost (a locale's
/// collation transform, a parsed number) this is the difference between one build per record
/// and `2 log2(group)`. Untied entries build nothing. A group whose keys do not fit `limit` is
/// first split by its keys' next bytes, in place (see `refine`), until its pieces fit.
///
/// ```text
///  group of equal prefixes   v[s..s+n]:  e0 e1 e2 ...
///  keys, built once          arena:      |key e0|key e1|key e2|...   spans[i] = (start, end)
///  order                     positions 0..n sorted by (arena[spans[i]], i); v permuted by it
/// ```
pub fn sort_entries_with_keyed_ties<F, S>(v: &mut [Entry], limit: usize, key: &F, key_start: &S)
where
    F: Fn(u64, &mut Vec<u8>) + Sync,
    S: Fn(u64, &mut Vec<u8>, usize) + Sync,
{
    sort_entries_with_keyed_ties_prefetched(v, limit, key, key_start, &no_touch);
}

/// The `touch` of a sort that prefetches nothing.
fn no_touch(_: u64, _: Touch) {}

/// [`sort_entries_with_keyed_ties`] with the reads of key starts overlapped: while a group too
/// big for `limit` is split by its keys' next bytes (one random read of a record per tied
/// entry, the stage's cost on big groups), `touch(index, Touch::Far)` is called
/// [`crate::tuning::REFINE_PREFETCH_DISTANCE`] entries ahead of the next two (for what locating
/// a record reads first, such as an offset table) and `touch(index, Touch::Near)` one distance
/// ahead (to prefetch the record itself). `touch` only prefetches: it changes nothing.
pub fn sort_entries_with_keyed_ties_prefetched<F, S, T>(
    v: &mut [Entry],
    limit: usize,
    key: &F,
    key_start: &S,
    touch: &T,
) where
    F: Fn(u64, &mut Vec<u8>) + Sync,
    S: Fn(u64, &mut Vec<u8>, usize) + Sync,
    T: Fn(u64, Touch) + Sync,
{
    crate::sort_entries(v);
    let mut built = Built::with_limit(limit);
    let mut start = 0;
    while start < v.len() {
        let p = entry_prefix(v[start]);
        let len = v[start..].iter().position(|&e| entry_prefix(e) != p).unwrap_or(v.len() - start);
        if len > 1 {
            // Entries of a group are in index order already: a stable sort by key keeps it
            // among equal keys.
            let g = &mut v[start..start + len];
            if !sort_by_built_keys(g, key, &mut built) {
                refine(g, key_start, touch, &mut |g| sort_by_built_keys(g, key, &mut built));
            }
        }
        start += len;
    }
}

/// How far ahead a prefetch of [`sort_entries_with_keyed_ties_prefetched`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// Two distances ahead: what locating the record reads.
    Far,
    /// One distance ahead: the record's first bytes.
    Near,
}

/// Like [`sort_entries_with_keyed_ties`], in two stages for keys whose first bytes are cheap to
/// build and whose whole is not (a collated text: its first bytes come from a table, the whole
/// from the C library's transform). `short(index, out)` appends exactly the first `short_len`
/// bytes of the entry's whole key (all of it when shorter); `whole(index, out)` appends the
/// whole key. Tied entries are ordered by short keys; only those whose short keys are equal and
/// `short_len` long (so their whole keys may still differ) build whole keys. Keys built at once
/// take at most about `limit` bytes, as in [`sort_entries_with_keyed_ties`].
///
/// ```text
///  group of equal prefixes ──► short keys (short_len bytes) ──► sorted, stable
///                                   runs of equal, full-length short keys ──► whole keys
/// ```
///
/// A short key that is the whole key orders exactly as the whole key does against any other
/// short key (a proper prefix sorts first), so the two stages give the order of whole keys.
pub fn sort_entries_with_staged_ties<S, W>(
    v: &mut [Entry],
    short_len: usize,
    limit: usize,
    short: &S,
    whole: &W,
) where
    S: Fn(u64, &mut Vec<u8>) + Sync,
    W: Fn(u64, &mut Vec<u8>) + Sync,
{
    crate::sort_entries(v);
    let (mut shorts, mut wholes) = (Built::with_limit(limit / 2), Built::with_limit(limit / 2));
    // The first `n` bytes of a whole key: from the short key while it covers them.
    let start_of = |idx: u64, out: &mut Vec<u8>, n: usize| {
        if n <= short_len {
            short(idx, out)
        } else {
            whole(idx, out)
        }
    };
    let mut stage = |g: &mut [Entry]| -> bool {
        if !sort_by_built_keys(g, short, &mut shorts) {
            return false;
        }
        // Runs of equal short keys that are short_len long: their whole keys decide.
        let mut i = 0;
        while i < g.len() {
            let n =
                (i..g.len()).position(|j| shorts.key(j) != shorts.key(i)).unwrap_or(g.len() - i);
            if n > 1 && shorts.key(i).len() >= short_len {
                let run = &mut g[i..i + n];
                if !sort_by_built_keys(run, whole, &mut wholes) {
                    refine(run, &start_of, &no_touch, &mut |g| {
                        sort_by_built_keys(g, whole, &mut wholes)
                    });
                }
            }
            i += n;
        }
        true
    };
    let mut start = 0;
    while start < v.len() {
        let p = entry_prefix(v[start]);
        let len = v[start..].iter().position(|&e| entry_prefix(e) != p).unwrap_or(v.len() - start);
        if len > 1 {
            let g = &mut v[start..start + len];
            if !stage(g) {
                refine(g, &start_of, &no_touch, &mut stage);
            }
        }
        start += len;
    }
}

/// Key bytes one step of [`refine`] orders by; the prefix's last byte tells how many of them
/// the key has (or that it goes on).
const STEP: usize = PREFIX_BYTES - 1;

/// Key bytes [`refine`] reads from a range's depth on to find what all of its keys share, so
/// that its step orders by the bytes just past them. Reading a tied record is a cache miss
/// whatever the few bytes read: table rows tied on a 13-character text key (19 encoded bytes)
/// split in one step, not four, each step reading every key of its range.
const LOOK: usize = 32;

/// Keys of a range [`refine`] reads to guess what the whole range shares.
const LOOK_SAMPLE: usize = 64;

/// Orders a group of entries (in index order) by whole keys without holding their keys: the
/// entries' prefixes are replaced by the keys' next [`STEP`] bytes and a length byte, the
/// group sorted by them (stable), and each run still tied is ordered by `fits` when it can
/// (built keys within their limit), else split again a step further. The group's prefix is put
/// back at the end. `start(index, out, n)` appends at least the first `n` bytes of the entry's
/// whole key (all of it when shorter).
///
/// Each step first moves a range's depth past the bytes all of its keys share (within
/// [`LOOK`]), then sorts by `(key[d..d + STEP] zero-padded, min(len - d, STEP + 1))`: two keys
/// equal in their first `d` bytes compare as these do, and a tie with the length byte at
/// `STEP + 1` means both go on, equal so far.
fn refine<S, T, F>(g: &mut [Entry], start: &S, touch: &T, fits: &mut F)
where
    S: Fn(u64, &mut Vec<u8>, usize),
    T: Fn(u64, Touch),
    F: FnMut(&mut [Entry]) -> bool,
{
    let ahead = crate::tuning::REFINE_PREFETCH_DISTANCE;
    let Some(&first) = g.first() else { return };
    let prefix = entry_prefix(first);
    let (mut key, mut first) = (Vec::new(), Vec::new());
    // Ranges of `g` still tied, with the key bytes known equal in each.
    let mut todo = vec![(0, g.len(), 0usize)];
    while let Some((from, to, depth)) = todo.pop() {
        // The step orders by the bytes past those every key of the range shares from `depth`
        // on (within LOOK of them; gensort -a lines by -k2 share 28). How many are shared is
        // guessed from a sample, then checked on every key as the step reads it: a guess too
        // long is taken back and the step done again, shorter. At most LOOK - STEP - 1 are
        // skipped, so that the step's bytes and whether the keys go on past them are within
        // the look. Each key is read once a step (a cache miss each, in a big range).
        let common = |key: &[u8], first: &[u8]| {
            key.get(depth..).unwrap_or(&[]).iter().zip(first).take_while(|(a, b)| a == b).count()
        };
        key.clear();
        start(entry_index(g[from]), &mut key, depth + LOOK);
        first.clear();
        first.extend_from_slice(key.get(depth..).unwrap_or(&[]));
        let mut skip = first.len();
        for e in g[from..to].iter().step_by(((to - from) / LOOK_SAMPLE).max(1)) {
            key.clear();
            start(entry_index(*e), &mut key, depth + LOOK);
            skip = skip.min(common(&key, &first));
        }
        let depth = loop {
            let skip_now = skip.min(LOOK - STEP - 1);
            let at = depth + skip_now;
            for i in from..to {
                if i + 2 * ahead < to {
                    touch(entry_index(g[i + 2 * ahead]), Touch::Far);
                }
                if i + ahead < to {
                    touch(entry_index(g[i + ahead]), Touch::Near);
                }
                let e = &mut g[i];
                key.clear();
                start(entry_index(*e), &mut key, depth + LOOK);
                skip = skip.min(common(&key, &first));
                let rest = key.get(at..).unwrap_or(&[]);
                let mut p = [0u8; PREFIX_BYTES];
                let n = rest.len().min(STEP);
                p[..n].copy_from_slice(&rest[..n]);
                p[STEP] = rest.len().min(STEP + 1) as u8;
                *e = make_entry(&p, entry_index(*e));
            }
            if skip >= skip_now {
                break at;
            }
        };
        let run = &mut g[from..to];
        crate::sort_entries(run);
        let mut i = 0;
        while i < run.len() {
            let p = entry_prefix(run[i]);
            let n = run[i..].iter().position(|&e| entry_prefix(e) != p).unwrap_or(run.len() - i);
            // A length byte below STEP + 1: the keys end here, equal; index order stays.
            if n > 1 && p & 0xff == (STEP + 1) as u128 {
                todo.push((from + i, from + i + n, depth + STEP));
            }
            i += n;
        }
        // Runs pushed last are handled first; those that fit are ordered by built keys.
        // (A run's entries share their step's prefix, so they are in index order.)
        while let Some(&(f, t, _)) = todo.last() {
            if !fits(&mut g[f..t]) {
                break;
            }
            todo.pop();
        }
    }
    let back = prefix_bytes(prefix);
    for e in g.iter_mut() {
        *e = make_entry(&back, entry_index(*e));
    }
}

/// The bytes of an entry's prefix.
fn prefix_bytes(prefix: u128) -> [u8; PREFIX_BYTES] {
    let b = prefix.to_be_bytes();
    let mut p = [0u8; PREFIX_BYTES];
    p.copy_from_slice(&b[16 - PREFIX_BYTES..]);
    p
}

/// The buffers [`sort_by_built_keys`] reuses from one group to the next, and the most memory
/// they may take.
struct Built {
    /// The keys, back to back; `spans[i]` is the key of the group's `i`-th entry once sorted.
    arena: Vec<u8>,
    spans: Vec<(usize, usize)>,
    order: Vec<usize>,
    sorted: Vec<Entry>,
    sorted_spans: Vec<(usize, usize)>,
    /// One key as it is built, before it goes to `arena`.
    one: Vec<u8>,
    /// Bytes the keys and the per-entry vectors may take together.
    limit: usize,
}

impl Built {
    fn with_limit(limit: usize) -> Self {
        Built {
            arena: Vec::new(),
            spans: Vec::new(),
            order: Vec::new(),
            sorted: Vec::new(),
            sorted_spans: Vec::new(),
            one: Vec::new(),
            limit,
        }
    }

    fn key(&self, i: usize) -> &[u8] {
        &self.arena[self.spans[i].0..self.spans[i].1]
    }
}

/// Bytes of key room first reserved for a group's keys (then doubled as needed).
const MIN_KEY_ROOM: usize = 4096;

/// Empties `v` and gives it room for exactly `n` items when it has less (no doubling past what
/// the group needs).
fn room_for<T>(v: &mut Vec<T>, n: usize) {
    v.clear();
    if v.capacity() < n {
        *v = Vec::with_capacity(n);
    }
}

/// Orders `g` (in index order) by the keys `key` builds, stably; leaves the keys in `b`, in
/// the new order. False, with `g` as it was, when the keys and their bookkeeping would take
/// more than `b.limit` bytes.
fn sort_by_built_keys<F: Fn(u64, &mut Vec<u8>)>(g: &mut [Entry], key: &F, b: &mut Built) -> bool {
    let n = g.len();
    let Some(key_room) =
        n.checked_mul(TIE_BYTES_PER_ENTRY).and_then(|per_entry| b.limit.checked_sub(per_entry))
    else {
        return false;
    };
    b.arena.clear();
    room_for(&mut b.spans, n);
    for &e in g.iter() {
        b.one.clear();
        key(entry_index(e), &mut b.one);
        let need = b.arena.len() + b.one.len();
        if need > key_room {
            return false;
        }
        let cap = b.arena.capacity();
        if need > cap {
            // Grown geometrically; growing copies, so the old and the new room together stay
            // within what the limit leaves.
            let want = (2 * cap).max(need).max(MIN_KEY_ROOM);
            if cap + want > key_room {
                return false;
            }
            b.arena.reserve_exact(want - b.arena.len());
        }
        let from = b.arena.len();
        b.arena.extend_from_slice(&b.one);
        b.spans.push((from, b.arena.len()));
    }
    room_for(&mut b.order, n);
    b.order.extend(0..n);
    let (arena, spans) = (&b.arena, &b.spans);
    b.order.sort_by(|&x, &y| arena[spans[x].0..spans[x].1].cmp(&arena[spans[y].0..spans[y].1]));
    room_for(&mut b.sorted, n);
    b.sorted.extend(b.order.iter().map(|&i| g[i]));
    g.copy_from_slice(&b.sorted);
    room_for(&mut b.sorted_spans, n);
    b.sorted_spans.extend(b.order.iter().map(|&i| b.spans[i]));
    std::mem::swap(&mut b.spans, &mut b.sorted_spans);
    true
}

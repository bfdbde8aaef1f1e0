//! Pattern x length matrix for the entry sorts, against `slice::sort_unstable` as the oracle.

mod common;
use common::*;
use oxsort_kernels::{
    entry_index, entry_prefix, par_sort_entries, par_sort_entries_with_buffer, sort_entries,
    sort_entries_with_buffer, sort_entries_with_keyed_ties,
    sort_entries_with_keyed_ties_prefetched, sort_entries_with_staged_ties, sort_entries_with_ties,
    Entry, Touch,
};

/// Fails naming the sort, the pattern, the length and the seed that replays it.
fn check(what: &str, pat: &dyn std::fmt::Display, n: usize, got: &[Entry], want: &[Entry]) {
    if got != want {
        let i = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
        panic!("{what}: pattern {pat}, n = {n}, OXSORT_SEED={}: first difference at {i}", seed());
    }
}

#[test]
fn sort_entries_matrix() {
    let mut rng = Rng::new(seed());
    for pat in Pattern::ALL {
        for n in lengths() {
            for scramble in [false, true] {
                let v = entries(pat, n, &mut rng, scramble);
                let mut want = v.clone();
                want.sort_unstable();
                let mut got = v.clone();
                sort_entries(&mut got);
                check("sort_entries", &pat, n, &got, &want);
            }
        }
    }
}

#[test]
fn par_sort_entries_matrix() {
    let mut rng = Rng::new(seed());
    for pat in Pattern::ALL {
        for n in lengths() {
            let v = entries(pat, n, &mut rng, true);
            let mut want = v.clone();
            want.sort_unstable();
            for threads in [1, 2, 3] {
                let mut got = v.clone();
                par_sort_entries(&mut got, threads);
                check(&format!("par_sort_entries({threads})"), &pat, n, &got, &want);
            }
        }
    }
}

#[test]
fn buffer_reuse() {
    let mut rng = Rng::new(seed());
    let mut buf = Vec::new();
    for n in [1000, 100, 200_000, 5] {
        let v = entries(Pattern::Random, n, &mut rng, true);
        let mut want = v.clone();
        want.sort_unstable();
        let mut a = v.clone();
        sort_entries_with_buffer(&mut a, &mut buf);
        check("sort_entries_with_buffer", &Pattern::Random, n, &a, &want);
        let mut b = v;
        par_sort_entries_with_buffer(&mut b, &mut buf, 2);
        check("par_sort_entries_with_buffer(2)", &Pattern::Random, n, &b, &want);
    }
}

/// Side data the tie comparator looks at: few distinct values so ties of ties happen.
fn side(index: u64) -> u64 {
    Rng::new(index).below(5)
}

#[test]
fn sort_entries_with_ties_matrix() {
    let mut rng = Rng::new(seed());
    let tie = |a: u64, b: u64| side(a).cmp(&side(b));
    for pat in Pattern::ALL {
        for n in short_lengths() {
            let v = entries(pat, n, &mut rng, true);
            let mut want = v.clone();
            want.sort_by_key(|&e| (entry_prefix(e), side(entry_index(e)), entry_index(e)));
            let mut got = v.clone();
            sort_entries_with_ties(&mut got, &tie);
            check("sort_entries_with_ties", &pat, n, &got, &want);
        }
    }
}

#[test]
fn sort_entries_with_keyed_ties_matrix() {
    let mut rng = Rng::new(seed());
    // Keys of varying length, so one key may be a prefix of another.
    let key = |i: u64, out: &mut Vec<u8>| out.extend(std::iter::repeat_n(b'a', side(i) as usize));
    let builds = std::sync::atomic::AtomicUsize::new(0);
    let counted = |i: u64, out: &mut Vec<u8>| {
        builds.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        key(i, out)
    };
    for pat in Pattern::ALL {
        for n in short_lengths() {
            let v = entries(pat, n, &mut rng, true);
            let mut want = v.clone();
            want.sort_by_key(|&e| (entry_prefix(e), side(entry_index(e)), entry_index(e)));
            let mut got = v.clone();
            builds.store(0, std::sync::atomic::Ordering::Relaxed);
            sort_entries_with_keyed_ties(&mut got, usize::MAX, &counted, &|i, out, _| {
                counted(i, out)
            });
            check("sort_entries_with_keyed_ties", &pat, n, &got, &want);
            let built = builds.load(std::sync::atomic::Ordering::Relaxed);
            assert!(built <= n, "{pat}, {n} entries: {built} keys built, at most one each");
        }
    }
}

/// A whole key from an index: 0 to 6 bytes from a small alphabet, so keys tie, one is often a
/// proper prefix of another, and many share their first bytes.
fn whole_key(index: u64, out: &mut Vec<u8>) {
    let mut r = Rng::new(index ^ 0x5EED);
    let len = r.below(7);
    out.extend((0..len).map(|_| b'a' + r.below(3) as u8));
}

#[test]
fn sort_entries_with_staged_ties_matrix() {
    let mut rng = Rng::new(seed());
    let wholes = std::sync::atomic::AtomicUsize::new(0);
    let whole = |i: u64, out: &mut Vec<u8>| {
        wholes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        whole_key(i, out)
    };
    for short_len in [0, 1, 2, 3, 7] {
        let short = |i: u64, out: &mut Vec<u8>| {
            let start = out.len();
            whole_key(i, out);
            out.truncate(start + short_len);
        };
        for pat in Pattern::ALL {
            for n in short_lengths() {
                let v = entries(pat, n, &mut rng, true);
                let mut want = v.clone();
                let key = |e: Entry| {
                    let mut k = Vec::new();
                    whole_key(entry_index(e), &mut k);
                    (entry_prefix(e), k, entry_index(e))
                };
                want.sort_by_key(|&e| key(e));
                let mut got = v.clone();
                wholes.store(0, std::sync::atomic::Ordering::Relaxed);
                sort_entries_with_staged_ties(&mut got, short_len, usize::MAX, &short, &whole);
                check("sort_entries_with_staged_ties", &pat, n, &got, &want);
                if short_len == 7 {
                    // Short keys of the longest length are whole: no whole key is built.
                    assert_eq!(wholes.load(std::sync::atomic::Ordering::Relaxed), 0);
                }
            }
        }
    }
}

#[test]
fn bad_tie_comparator_does_not_lose_entries() {
    let mut rng = Rng::new(seed());
    let v = entries(Pattern::FewDistinct, 5000, &mut rng, true);
    let mut got = v.clone();
    // Not a total order: a well-defined (if meaningless) result or a panic, never UB.
    let r = std::panic::catch_unwind(move || {
        sort_entries_with_ties(&mut got, &|a: u64, b: u64| (a % 3).cmp(&(b % 7)).reverse());
        got
    });
    if let Ok(mut got) = r {
        got.sort_unstable();
        let mut want = v;
        want.sort_unstable();
        check("a bad tie comparator keeps the entries", &Pattern::FewDistinct, 5000, &got, &want);
    }
}

#[test]
fn arbitrary_u128_values() {
    // sort_entries is a sort of any u128s, not just well-formed entries.
    let mut rng = Rng::new(seed());
    for n in lengths() {
        let v: Vec<u128> = (0..n)
            .map(|_| match rng.below(4) {
                0 => ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128,
                1 => rng.next_u64() as u128,
                2 => u128::MAX - rng.below(3) as u128,
                _ => (rng.below(2) as u128) << 127,
            })
            .collect();
        let mut want = v.clone();
        want.sort_unstable();
        let mut got = v.clone();
        sort_entries(&mut got);
        check("sort_entries(u128)", &"mixed", n, &got, &want);
        let mut got = v;
        par_sort_entries(&mut got, 2);
        check("par_sort_entries(u128)", &"mixed", n, &got, &want);
    }
}

/// A long whole key from an index: a shared run of up to 30 bytes, then up to 12 bytes from
/// {0, 1}, so keys tie far past a prefix, end inside and past every step, and differ by
/// trailing zero bytes.
fn long_key(index: u64, out: &mut Vec<u8>) {
    let mut r = Rng::new(index ^ 0x10C6);
    let shared = r.below(31) as usize;
    out.extend(std::iter::repeat_n(b'k', shared));
    let len = r.below(13);
    out.extend((0..len).map(|_| r.below(2) as u8));
}

#[test]
fn tied_groups_over_the_limit_are_ordered_by_whole_keys_all_the_same() {
    let mut rng = Rng::new(seed());
    for limit in [0, 2000, usize::MAX] {
        for pat in Pattern::ALL {
            for n in short_lengths() {
                let v = entries(pat, n, &mut rng, true);
                let mut want = v.clone();
                let key = |e: Entry| {
                    let mut k = Vec::new();
                    long_key(entry_index(e), &mut k);
                    (entry_prefix(e), k, entry_index(e))
                };
                want.sort_by_key(|&e| key(e));
                let mut got = v.clone();
                // Key starts of exactly the bytes asked for: a split that reads past them
                // orders by bytes it was not given.
                let start = |i: u64, out: &mut Vec<u8>, n: usize| {
                    let at = out.len();
                    long_key(i, out);
                    out.truncate(at + n);
                };
                sort_entries_with_keyed_ties(&mut got, limit, &long_key, &start);
                check("sort_entries_with_keyed_ties (limited)", &pat, n, &got, &want);
                // The prefetching form: the same order, its touches only at entries of the
                // input, near ones before their key starts are read.
                let indices: std::collections::HashSet<u64> =
                    v.iter().map(|&e| entry_index(e)).collect();
                let touched = std::sync::Mutex::new(Vec::new());
                let touch = |i: u64, t: Touch| touched.lock().unwrap().push((i, t));
                let mut got = v.clone();
                sort_entries_with_keyed_ties_prefetched(&mut got, limit, &long_key, &start, &touch);
                check("sort_entries_with_keyed_ties_prefetched", &pat, n, &got, &want);
                let touched = touched.into_inner().unwrap();
                assert!(touched.iter().all(|(i, _)| indices.contains(i)), "{pat:?} {n}");
                if limit == 0 && n > 64 && matches!(pat, Pattern::AllEqual) {
                    assert!(touched.iter().any(|&(_, t)| t == Touch::Near), "{pat:?} {n}");
                    assert!(touched.iter().any(|&(_, t)| t == Touch::Far), "{pat:?} {n}");
                }
                for short_len in [5, 20] {
                    let short = |i: u64, out: &mut Vec<u8>| {
                        let start = out.len();
                        long_key(i, out);
                        out.truncate(start + short_len);
                    };
                    let mut got = v.clone();
                    sort_entries_with_staged_ties(&mut got, short_len, limit, &short, &long_key);
                    check("sort_entries_with_staged_ties (limited)", &pat, n, &got, &want);
                }
            }
        }
    }
}

/// A big tied group whose keys share 20 bytes, but for one key that differs two bytes past
/// the prefix and is not among those a split samples to guess what the group shares: the guess
/// is too long, and the split must notice and order by that byte.
#[test]
fn one_key_differing_early_among_many_that_share_long() {
    use oxsort_kernels::{make_entry, PREFIX_BYTES};
    let n = 10_000u64;
    for odd in [0, 4_321, n - 1] {
        let key = |i: u64, out: &mut Vec<u8>| {
            if i == odd {
                // Smaller at byte PREFIX_BYTES + 2, largest of all past byte 20.
                out.extend(std::iter::repeat_n(b'k', 20));
                out[PREFIX_BYTES + 2] = b'A';
                out.extend_from_slice(&[0xff; 8]);
            } else {
                out.extend(std::iter::repeat_n(b'k', 20));
                out.extend_from_slice(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_be_bytes());
            }
        };
        let start = |i: u64, out: &mut Vec<u8>, len: usize| {
            let at = out.len();
            key(i, out);
            out.truncate(at + len);
        };
        let tied = |i: u64| make_entry(&[b'k'; PREFIX_BYTES], i);
        let v: Vec<Entry> = (0..n).map(tied).collect();
        let mut want = v.clone();
        want.sort_by_key(|&e| {
            let mut k = Vec::new();
            key(entry_index(e), &mut k);
            (k, entry_index(e))
        });
        assert_eq!(entry_index(want[0]), odd, "the odd key sorts first");
        let mut got = v;
        sort_entries_with_keyed_ties(&mut got, 0, &key, &start);
        check("sort_entries_with_keyed_ties (one early difference)", &odd, n as usize, &got, &want);
    }
}

//! GNU key kinds through the public key: the order of their normalized keys against direct
//! comparators written from GNU's definitions (gnulib `filevercmp` for `-V`), `f` and `i`
//! on text, and `-R` grouping equal keys. Descending keys must give the reverse order.

use std::cmp::Ordering;

use oxsort_format::{ColumnSpan, FieldType, GnuIgnore, GnuKind, GnuOrder, KeyField, KeySpec};
use proptest::prelude::*;

/// The normalized key of the whole of `t` as a key of `kind`, ascending or descending.
fn key(kind: &GnuKind, t: &[u8], descending: bool) -> Vec<u8> {
    let field = KeyField::columns(ColumnSpan::whole(), FieldType::Gnu(*kind), descending);
    let mut v = Vec::new();
    KeySpec::new(vec![field]).expect("key").normalize(t, &mut v).expect("normalizes");
    v
}

fn enc(kind: &GnuKind, t: &[u8]) -> Vec<u8> {
    key(kind, t, false)
}

/// Texts made of the bytes that matter to the kind under test.
fn texts(alphabet: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::sample::select(alphabet), 0..12)
}

const VER: &[u8] = b"0012789.~-_abzAZ \x80";

/// gnulib's `verrevcmp`, transcribed from its documented algorithm.
fn verrevcmp(s1: &[u8], s2: &[u8]) -> Ordering {
    fn order(s: &[u8], p: usize) -> i32 {
        if p == s.len() {
            return -1;
        }
        let c = s[p];
        if c.is_ascii_digit() {
            0
        } else if c.is_ascii_alphabetic() {
            i32::from(c)
        } else if c == b'~' {
            -2
        } else {
            i32::from(c) + 256
        }
    }
    let (mut p1, mut p2) = (0, 0);
    while p1 < s1.len() || p2 < s2.len() {
        let mut first_diff = 0i32;
        while (p1 < s1.len() && !s1[p1].is_ascii_digit())
            || (p2 < s2.len() && !s2[p2].is_ascii_digit())
        {
            let (c1, c2) = (order(s1, p1), order(s2, p2));
            if c1 != c2 {
                return c1.cmp(&c2);
            }
            p1 += 1;
            p2 += 1;
        }
        while p1 < s1.len() && s1[p1] == b'0' {
            p1 += 1;
        }
        while p2 < s2.len() && s2[p2] == b'0' {
            p2 += 1;
        }
        while p1 < s1.len() && p2 < s2.len() && s1[p1].is_ascii_digit() && s2[p2].is_ascii_digit() {
            if first_diff == 0 {
                first_diff = i32::from(s1[p1]) - i32::from(s2[p2]);
            }
            p1 += 1;
            p2 += 1;
        }
        if p1 < s1.len() && s1[p1].is_ascii_digit() {
            return Ordering::Greater;
        }
        if p2 < s2.len() && s2[p2].is_ascii_digit() {
            return Ordering::Less;
        }
        if first_diff != 0 {
            return first_diff.cmp(&0);
        }
    }
    Ordering::Equal
}

/// Where the file suffix starts: the first position from which the rest matches
/// `(\.[A-Za-z~][A-Za-z0-9~]*)*$` (the whole name may be the suffix).
fn suffix_start(s: &[u8]) -> usize {
    let matches = |t: &[u8]| {
        let mut p = 0;
        while p < t.len() {
            if t[p] != b'.' || !t.get(p + 1).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'~')
            {
                return false;
            }
            p += 2;
            while p < t.len() && (t[p].is_ascii_alphanumeric() || t[p] == b'~') {
                p += 1;
            }
        }
        true
    };
    (0..=s.len()).find(|&i| matches(&s[i..])).unwrap_or(s.len())
}

/// gnulib's `filenvercmp` as GNU sort 9.1 has it.
fn filevercmp(a: &[u8], b: &[u8]) -> Ordering {
    if a.is_empty() || b.is_empty() {
        return (!a.is_empty()).cmp(&!b.is_empty());
    }
    if a[0] == b'.' {
        if b[0] != b'.' {
            return Ordering::Less;
        }
        let (ad, bd) = (a.len() == 1, b.len() == 1);
        if ad || bd {
            return bd.cmp(&ad);
        }
        let (add, bdd) = (a == b"..", b == b"..");
        if add || bdd {
            return bdd.cmp(&add);
        }
    } else if b[0] == b'.' {
        return Ordering::Greater;
    }
    let (pa, pb) = (suffix_start(a), suffix_start(b));
    let one_pass = pa == a.len() && pb == b.len();
    let r = verrevcmp(&a[..pa], &b[..pb]);
    if r != Ordering::Equal || one_pass {
        r
    } else {
        verrevcmp(a, b)
    }
}

proptest! {
    #[test]
    fn version_order(a in texts(VER), b in texts(VER)) {
        let k = GnuKind { order: GnuOrder::Version, ..GnuKind::c_text() };
        let want = filevercmp(&a, &b);
        prop_assert_eq!(enc(&k, &a).cmp(&enc(&k, &b)), want);
        prop_assert_eq!(key(&k, &a, true).cmp(&key(&k, &b, true)), want.reverse());
    }

    #[test]
    fn text_order_with_fold_and_ignore(a in texts(b"aAbB_[ \x01\x7f\x00"), b in texts(b"aAbB_[ \x01\x7f\x00")) {
        let k = GnuKind { fold: true, ignore: GnuIgnore::NonPrinting, ..GnuKind::c_text() };
        let t = |s: &[u8]| -> Vec<u8> {
            s.iter().filter(|b| (0x20..0x7f).contains(*b)).map(u8::to_ascii_uppercase).collect()
        };
        let (ea, eb) = (enc(&k, &a), enc(&k, &b));
        prop_assert_eq!(ea.cmp(&eb), t(&a).cmp(&t(&b)));
    }

    #[test]
    fn random_groups_equal_keys(a in texts(VER), b in texts(VER)) {
        let k = GnuKind { order: GnuOrder::Random, seed: [7, 9], ..GnuKind::c_text() };
        prop_assert_eq!(enc(&k, &a) == enc(&k, &b), a == b);
    }
}

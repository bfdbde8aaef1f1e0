//! Each encoding against a direct comparator written from GNU's definitions (coreutils
//! `strnumcmp`, `human_numcompare`, `general_numcompare`, `getmonth`; `-V` and text in
//! `tests/gnu_order.rs`):
//! for random texts the byte order of the encodings must be the comparator's order, and
//! complemented encodings the reverse.

use std::cmp::Ordering;

use proptest::prelude::*;

use super::*;

fn enc(kind: &GnuKind, t: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    encode(kind, t, &mut v, usize::MAX);
    v
}

fn kind(order: GnuOrder) -> GnuKind {
    GnuKind { order, ..GnuKind::c_text() }
}

/// `strnumcmp` as GNU documents it: compare numeric values of the leading numbers exactly
/// (decimal strings, so no rounding), `-0` equal to `0`.
fn numcmp(a: &[u8], b: &[u8], sep: Option<u8>) -> Ordering {
    // GNU's reading: blanks (space, tab, newline), '-', digits and separators, '.', digits.
    let parse = |t: &[u8]| {
        let mut it = t.iter().copied().skip_while(|b| b" \t\n".contains(b)).peekable();
        let neg = it.next_if_eq(&b'-').is_some();
        let mut int = Vec::new();
        while let Some(b) = it.next_if(|b| b.is_ascii_digit() || Some(*b) == sep) {
            if b.is_ascii_digit() {
                int.push(b - b'0');
            }
        }
        let mut frac = Vec::new();
        if it.next_if_eq(&b'.').is_some() {
            while let Some(b) = it.next_if(u8::is_ascii_digit) {
                frac.push(b - b'0');
            }
        }
        (neg, int, frac)
    };
    let value = |t: &[u8]| {
        let (neg, int, frac) = parse(t);
        let int: Vec<u8> = int.into_iter().skip_while(|&d| d == 0).collect();
        let mut frac = frac;
        while frac.last() == Some(&0) {
            frac.pop();
        }
        let zero = int.is_empty() && frac.is_empty();
        (neg && !zero, int, frac)
    };
    let mag = |x: &(bool, Vec<u8>, Vec<u8>), y: &(bool, Vec<u8>, Vec<u8>)| {
        x.1.len().cmp(&y.1.len()).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2))
    };
    let (x, y) = (value(a), value(b));
    match (x.0, y.0) {
        (false, false) => mag(&x, &y),
        (true, true) => mag(&y, &x),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    }
}

/// `general_numcompare` on `strtod` values: non-numbers, then NaNs (`nan` before `-nan`, as
/// GNU sort 9.1 compares their bytes), then numbers.
fn gencmp(a: &[u8], b: &[u8]) -> Ordering {
    let rank = |t: &[u8]| {
        let (n, v) = parse_general(t);
        if n == 0 {
            (0, 0, 0.0)
        } else if v.is_nan() {
            (1, i32::from(v.is_sign_negative()), 0.0)
        } else {
            (2, 0, v)
        }
    };
    let (x, y) = (rank(a), rank(b));
    x.0.cmp(&y.0).then(x.1.cmp(&y.1)).then(x.2.partial_cmp(&y.2).unwrap_or(Ordering::Equal))
}

fn humcmp(a: &[u8], b: &[u8]) -> Ordering {
    let k = GnuKind::c_text();
    let (a, b) = (skip_blanks(a), skip_blanks(b));
    unit_order(&k, a).cmp(&unit_order(&k, b)).then_with(|| numcmp(a, b, None))
}

/// Texts made of the bytes that matter to the kind under test.
fn texts(alphabet: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::sample::select(alphabet), 0..12)
}

const NUM: &[u8] = b"0123456789-.,+ \tkKMGx";
const GEN: &[u8] = b"0129.eE+-xXpPinfaINFAn() ";

fn agrees(kind: &GnuKind, cmp: fn(&[u8], &[u8]) -> Ordering, a: &[u8], b: &[u8]) {
    let (ea, eb) = (enc(kind, a), enc(kind, b));
    let want = cmp(a, b);
    assert_eq!(
        ea.cmp(&eb),
        want,
        "{:?} vs {:?}",
        String::from_utf8_lossy(a),
        String::from_utf8_lossy(b)
    );
    let (mut ra, mut rb) = (ea, eb);
    crate::normalize::complement(&mut ra);
    crate::normalize::complement(&mut rb);
    assert_eq!(ra.cmp(&rb), want.reverse());
}

proptest! {
    #[test]
    fn numeric_order(a in texts(NUM), b in texts(NUM)) {
        agrees(&kind(GnuOrder::Numeric), |a, b| numcmp(a, b, None), &a, &b);
    }

    #[test]
    fn numeric_order_with_thousands(a in texts(NUM), b in texts(NUM)) {
        let k = GnuKind { thousands_sep: Some(b','), ..kind(GnuOrder::Numeric) };
        agrees(&k, |a, b| numcmp(a, b, Some(b',')), &a, &b);
    }

    #[test]
    fn human_order(a in texts(NUM), b in texts(NUM)) {
        agrees(&kind(GnuOrder::Human), humcmp, &a, &b);
    }

    #[test]
    fn general_order(a in texts(GEN), b in texts(GEN)) {
        agrees(&kind(GnuOrder::General), gencmp, &a, &b);
    }

}

#[test]
fn months() {
    assert_eq!(month(b"  jan"), 1);
    assert_eq!(month(b"DECEMBER"), 12);
    assert_eq!(month(b"ja"), 0);
    assert_eq!(month(b"x"), 0);
}

#[test]
fn general_syntax() {
    assert_eq!(parse_general(b"0x10"), (4, 16.0));
    assert_eq!(parse_general(b" -1e3x"), (5, -1000.0));
    assert_eq!(parse_general(b"1e"), (1, 1.0));
    assert_eq!(parse_general(b".5"), (2, 0.5));
    assert_eq!(parse_general(b"."), (0, 0.0));
    assert_eq!(parse_general(b"-inf").1, f64::NEG_INFINITY);
    assert!(parse_general(b"nan(12)").1.is_nan());
    assert_eq!(parse_general(b"nan(12)").0, 7);
    assert_eq!(parse_general(b"0x1.8p1"), (7, 3.0));
}

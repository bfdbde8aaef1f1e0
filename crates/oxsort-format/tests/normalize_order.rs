//! Property tests: for every type and direction, normalized keys order exactly as the decoded
//! values do (ties, signed zeros and alternative encodings included), multi-field keys order
//! lexicographically, and variable-length fields do not bleed into each other.

use std::cmp::Ordering;

use oxsort_format::{
    ColumnSpan, Endian, FieldType, GnuIgnore, GnuKind, GnuOrder, KeyField, KeySpec,
};
use oxsort_testkit::Rng;
use proptest::prelude::*;

/// A decoded value, compared the way the key type means.
#[derive(Debug, Clone)]
enum Val {
    Bytes(Vec<u8>),
    Int(i128),
    /// binary64 bits (binary32 values are widened exactly).
    Float(u64),
    /// A decimal scaled by 10^6.
    Scaled(i128),
}

fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap(),
    }
}

fn val_cmp(a: &Val, b: &Val) -> Ordering {
    match (a, b) {
        (Val::Bytes(x), Val::Bytes(y)) => x.cmp(y),
        (Val::Int(x), Val::Int(y)) => x.cmp(y),
        (Val::Scaled(x), Val::Scaled(y)) => x.cmp(y),
        (Val::Float(x), Val::Float(y)) => float_cmp(f64::from_bits(*x), f64::from_bits(*y)),
        _ => unreachable!("values of one field have one variant"),
    }
}

/// GNU `sort -n` in the C locale.
const GNU_C_NUMERIC: FieldType = FieldType::Gnu(GnuKind {
    order: GnuOrder::Numeric,
    ignore: GnuIgnore::None,
    fold: false,
    collate: false,
    decimal_point: b'.',
    thousands_sep: None,
    seed: [0, 0],
});

const ALL_TYPES: [FieldType; 16] = [
    FieldType::Char,
    FieldType::Unsigned(Endian::Big),
    FieldType::Unsigned(Endian::Little),
    FieldType::Signed(Endian::Big),
    FieldType::Signed(Endian::Little),
    FieldType::Float(Endian::Big),
    FieldType::Float(Endian::Little),
    FieldType::Packed,
    FieldType::Zoned,
    FieldType::SignedText,
    FieldType::FreeUnsigned,
    FieldType::FreeSigned,
    FieldType::Decimal,
    GNU_C_NUMERIC,
    // Twice more of the types with many encodings.
    FieldType::Packed,
    FieldType::Zoned,
];

/// Field lengths that suit a type.
fn len_strategy(kind: FieldType) -> BoxedStrategy<usize> {
    match kind {
        FieldType::Char | FieldType::Unsigned(Endian::Big) => (1usize..=12).boxed(),
        FieldType::Unsigned(_) | FieldType::Signed(_) => (1usize..=8).boxed(),
        FieldType::Float(_) => prop_oneof![Just(4usize), Just(8usize)].boxed(),
        FieldType::Packed => (1usize..=16).boxed(),
        FieldType::Zoned => (1usize..=31).boxed(),
        _ => Just(64usize).boxed(),
    }
}

/// An integer with at most `digits` decimal digits, often small so that ties happen.
fn decimal_int(digits: u32, signed: bool) -> BoxedStrategy<i128> {
    let max = 10i128.pow(digits.min(38)) - 1;
    let lo = if signed { -max } else { 0 };
    prop_oneof![
        2 => (-3i128..=3).prop_map(move |v| if signed { v } else { v.abs() }),
        1 => Just(max),
        1 => Just(lo),
        6 => lo..=max,
    ]
    .boxed()
}

fn value_strategy(kind: FieldType, len: usize) -> BoxedStrategy<Val> {
    let bits = 8 * len as u32;
    match kind {
        FieldType::Char | FieldType::Unsigned(Endian::Big) => {
            let byte = prop_oneof![Just(0u8), Just(0xFFu8), Just(b'a'), any::<u8>()];
            proptest::collection::vec(byte, len).prop_map(Val::Bytes).boxed()
        }
        FieldType::Unsigned(_) => {
            let max = if bits == 128 { i128::MAX } else { (1i128 << bits) - 1 };
            prop_oneof![Just(0i128), Just(max), 0..=max, 0i128..3].prop_map(Val::Int).boxed()
        }
        FieldType::Signed(_) => {
            let max = (1i128 << (bits - 1)) - 1;
            let min = -(1i128 << (bits - 1));
            prop_oneof![Just(min), Just(max), Just(0i128), Just(-1i128), min..=max]
                .prop_map(Val::Int)
                .boxed()
        }
        FieldType::Float(_) if len == 4 => {
            let special = prop_oneof![
                Just(0.0f32),
                Just(-0.0f32),
                Just(f32::INFINITY),
                Just(f32::NEG_INFINITY),
                Just(f32::NAN),
                Just(-f32::NAN),
                Just(f32::MIN_POSITIVE / 4.0),
                Just(-f32::MIN_POSITIVE / 4.0),
                Just(f32::MAX),
                Just(f32::MIN),
                Just(1.0f32),
            ];
            prop_oneof![
                special,
                any::<u32>().prop_map(f32::from_bits),
                (-4i8..4).prop_map(f32::from)
            ]
            .prop_map(|x: f32| Val::Float((x as f64).to_bits()))
            .boxed()
        }
        FieldType::Float(_) => {
            let special = prop_oneof![
                Just(0.0f64),
                Just(-0.0f64),
                Just(f64::INFINITY),
                Just(f64::NEG_INFINITY),
                Just(f64::NAN),
                Just(-f64::NAN),
                Just(f64::MIN_POSITIVE / 8.0),
                Just(-f64::MIN_POSITIVE / 8.0),
                Just(f64::MAX),
                Just(f64::MIN),
            ];
            prop_oneof![
                special,
                any::<u64>().prop_map(f64::from_bits),
                (-4i8..4).prop_map(f64::from)
            ]
            .prop_map(|x| Val::Float(x.to_bits()))
            .boxed()
        }
        FieldType::Packed => decimal_int(2 * len as u32 - 1, true).prop_map(Val::Int).boxed(),
        FieldType::Zoned => decimal_int(len as u32, true).prop_map(Val::Int).boxed(),
        FieldType::SignedText | FieldType::FreeSigned => {
            decimal_int(30, true).prop_map(Val::Int).boxed()
        }
        FieldType::FreeUnsigned => decimal_int(30, false).prop_map(Val::Int).boxed(),
        _ => {
            // Decimal text with up to 6 fraction digits, scaled by 10^6.
            let m = decimal_int(24, true);
            (m, 0u32..=6).prop_map(|(m, s)| Val::Scaled(m * 10i128.pow(6 - s))).boxed()
        }
    }
}

fn digits_of(v: i128, width: usize) -> Vec<u8> {
    let s = v.unsigned_abs().to_string();
    let mut d = vec![0u8; width.saturating_sub(s.len())];
    d.extend(s.bytes().map(|b| b - b'0'));
    d
}

/// Encodes `v` as a `len`-byte field of `kind`, choosing among equivalent encodings by `seed`.
fn encode(kind: FieldType, len: usize, v: &Val, seed: u64) -> Vec<u8> {
    // The encoding choices replay from the proptest-chosen `seed`.
    let mut pick = Rng::new(seed);
    match (kind, v) {
        (FieldType::Char | FieldType::Unsigned(Endian::Big), Val::Bytes(b)) => b.clone(),
        (FieldType::Unsigned(e) | FieldType::Signed(e), Val::Int(x)) => {
            let be = (*x as u128).to_be_bytes()[16 - len..].to_vec();
            match e {
                Endian::Big => be,
                Endian::Little => be.into_iter().rev().collect(),
            }
        }
        (FieldType::Float(e), Val::Float(bits)) => {
            let x = f64::from_bits(*bits);
            let be = if len == 4 {
                // Keep the NaN's sign when narrowing.
                let f = x as f32;
                f.to_bits().to_be_bytes().to_vec()
            } else {
                x.to_bits().to_be_bytes().to_vec()
            };
            match e {
                Endian::Big => be,
                Endian::Little => be.into_iter().rev().collect(),
            }
        }
        (FieldType::Packed, Val::Int(x)) => {
            let mut nibbles = digits_of(*x, 2 * len - 1);
            let sign = if *x < 0 || (*x == 0 && pick.below(3) == 0) {
                [0xD, 0xB][pick.below(2) as usize]
            } else {
                [0xC, 0xF, 0xA, 0xE][pick.below(4) as usize]
            };
            nibbles.push(sign);
            nibbles.chunks(2).map(|p| p[0] << 4 | p[1]).collect()
        }
        (FieldType::Zoned, Val::Int(x)) => {
            let digits = digits_of(*x, len);
            let negative = *x < 0 || (*x == 0 && pick.below(3) == 0);
            let style = pick.below(3);
            let mut out: Vec<u8> = digits[..len - 1]
                .iter()
                .map(|d| if style == 0 { 0xF0 | d } else { 0x30 | d })
                .collect();
            let d = digits[len - 1];
            out.push(match (style, negative) {
                (0, false) => [0xC0, 0xF0, 0xA0, 0xE0][pick.below(4) as usize] | d,
                (0, true) => [0xD0, 0xB0][pick.below(2) as usize] | d,
                (1, false) => 0x30 | d,
                (1, true) => 0x70 | d,
                (_, false) => b"{ABCDEFGHI"[d as usize],
                (_, true) => b"}JKLMNOPQR"[d as usize],
            });
            out
        }
        (FieldType::SignedText, Val::Int(x)) => {
            let mut s = " ".repeat(pick.below(3) as usize);
            if *x < 0 {
                s.push('-');
            } else if pick.below(2) == 0 {
                s.push('+');
            }
            s.push_str(&"0".repeat(pick.below(3) as usize));
            s.push_str(&x.unsigned_abs().to_string());
            pad(s, len)
        }
        (FieldType::FreeUnsigned | FieldType::FreeSigned, Val::Int(x)) => {
            let noise = [b' ', b',', b'.', b'$', b'a', b'+'];
            let mut out = Vec::new();
            let digits = x.unsigned_abs().to_string();
            let sign_at = pick.below(digits.len() as u64 + 1) as usize;
            for (i, d) in digits.bytes().enumerate() {
                if i == sign_at && *x < 0 {
                    out.push([b'-', b')'][pick.below(2) as usize]);
                }
                if pick.below(3) == 0 {
                    out.push(noise[pick.below(noise.len() as u64) as usize]);
                }
                out.push(d);
            }
            if sign_at == digits.len() && *x < 0 {
                out.push(b'-');
            }
            pad(String::from_utf8(out).unwrap(), len)
        }
        (FieldType::Decimal | GNU_C_NUMERIC, Val::Scaled(x)) => {
            let int = x.unsigned_abs() / 1_000_000;
            let frac = x.unsigned_abs() % 1_000_000;
            let mut s = " ".repeat(pick.below(2) as usize);
            if *x < 0 || (*x == 0 && pick.below(3) == 0) {
                s.push('-');
            } else if kind == FieldType::Decimal && pick.below(2) == 0 {
                s.push('+');
            }
            s.push_str(&"0".repeat(pick.below(2) as usize));
            if int != 0 || pick.below(2) == 0 {
                s.push_str(&int.to_string());
            }
            let mut f = format!("{frac:06}");
            while f.ends_with('0') && pick.below(4) != 0 {
                f.pop();
            }
            if !f.is_empty() {
                s.push('.');
                s.push_str(&f);
            }
            pad(s, len)
        }
        _ => unreachable!("value variant follows the type"),
    }
}

fn pad(mut s: String, len: usize) -> Vec<u8> {
    assert!(s.len() <= len, "{s:?} longer than {len}");
    while s.len() < len {
        s.push(' ');
    }
    s.into_bytes()
}

fn key(spec: &KeySpec, record: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    spec.normalize(record, &mut out).unwrap();
    out
}

type Case = (FieldType, usize, Val, Val, u64, u64, bool);

fn case() -> impl Strategy<Value = Case> {
    proptest::sample::select(ALL_TYPES.to_vec())
        .prop_flat_map(|kind| (Just(kind), len_strategy(kind)))
        .prop_flat_map(|(kind, len)| {
            (
                Just(kind),
                Just(len),
                value_strategy(kind, len),
                value_strategy(kind, len),
                any::<bool>(),
                any::<u64>(),
                any::<u64>(),
                any::<bool>(),
            )
        })
        .prop_map(|(kind, len, v1, v2, same, s1, s2, desc)| {
            let v2 = if same { v1.clone() } else { v2 };
            (kind, len, v1, v2, s1, s2, desc)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// One field of every type, both directions: key order == value order.
    #[test]
    fn one_field_orders_as_its_values((kind, len, v1, v2, s1, s2, desc) in case()) {
        let spec = KeySpec::new(vec![KeyField::bytes(3, len, kind, desc)]).unwrap();
        let mut r1 = b"pre".to_vec();
        r1.extend(encode(kind, len, &v1, s1));
        r1.extend_from_slice(b"post");
        let mut r2 = b"PRE".to_vec();
        r2.extend(encode(kind, len, &v2, s2));
        r2.extend_from_slice(b"POST");
        let want = val_cmp(&v1, &v2);
        let want = if desc { want.reverse() } else { want };
        prop_assert_eq!(key(&spec, &r1).cmp(&key(&spec, &r2)), want,
            "{:?} {} {:?} vs {:?}", kind, len, r1, r2);
    }

    /// Several fields of random types: keys order lexicographically by field.
    #[test]
    fn fields_compare_lexicographically(cases in proptest::collection::vec(case(), 1..5)) {
        let mut fields = Vec::new();
        let (mut r1, mut r2) = (Vec::new(), Vec::new());
        let mut want = Ordering::Equal;
        for (kind, len, v1, v2, s1, s2, desc) in &cases {
            fields.push(KeyField::bytes(r1.len(), *len, *kind, *desc));
            r1.extend(encode(*kind, *len, v1, *s1));
            r2.extend(encode(*kind, *len, v2, *s2));
            let o = val_cmp(v1, v2);
            want = want.then(if *desc { o.reverse() } else { o });
        }
        // The same fields in reverse positions too, so offsets are not always ascending.
        let spec = KeySpec::new(fields).unwrap();
        prop_assert_eq!(key(&spec, &r1).cmp(&key(&spec, &r2)), want);
    }

    /// The allocation-free form of fixed-width keys writes exactly what `normalize` appends,
    /// whole or cut to any length (the entry prefix), zero-padded past the key's end; it
    /// exists for exactly the fixed-width types, and is refused a record too short. The
    /// fields lie anywhere in the record (at its start, its end, or inside: a field's bytes
    /// are read a word at a time, and a word may not reach past the record).
    #[test]
    fn fixed_keys_write_what_normalize_appends(
        cases in proptest::collection::vec(case(), 1..5),
        cut in 0usize..40,
        pre in proptest::collection::vec(any::<u8>(), 0..12),
        post in proptest::collection::vec(any::<u8>(), 0..12),
    ) {
        let mut fields = Vec::new();
        let mut rec = pre.clone();
        for (kind, len, v1, _, s1, _, desc) in &cases {
            fields.push(KeyField::bytes(rec.len(), *len, *kind, *desc));
            rec.extend(encode(*kind, *len, v1, *s1));
        }
        let key_end = rec.len();
        rec.extend_from_slice(&post);
        let fixed_width = cases.iter().all(|c| matches!(c.0,
            FieldType::Char | FieldType::Unsigned(_) | FieldType::Signed(_) | FieldType::Float(_)));
        let spec = KeySpec::new(fields).unwrap();
        let Some(fixed) = spec.fixed_key() else {
            prop_assert!(!fixed_width);
            return Ok(());
        };
        prop_assert!(fixed_width);
        let want = key(&spec, &rec);
        prop_assert_eq!(fixed.width(), want.len());
        let mut out = vec![0xA5u8; cut];
        prop_assert!(fixed.write(&rec, &mut out).is_some());
        let mut padded = want.clone();
        padded.resize(cut.max(want.len()), 0);
        prop_assert_eq!(&out[..], &padded[..cut]);
        // The entry prefix's form, written into an array.
        padded.resize(padded.len().max(10), 0);
        let prefix: Option<[u8; 10]> = fixed.write_array(&rec);
        prop_assert_eq!(prefix.as_ref().map(|p| &p[..]), Some(&padded[..10]));
        if key_end > pre.len() && !want.is_empty() {
            let mut whole = vec![0u8; want.len()];
            prop_assert!(fixed.write(&rec[..key_end - 1], &mut whole).is_none());
        }
    }

    /// Variable-length columns (bytes including 0x00 and 0xFF, numbers) never bleed into the
    /// next field, in either direction.
    #[test]
    fn columns_do_not_bleed(
        a1 in proptest::collection::vec(prop_oneof![Just(0u8), Just(0xFFu8), Just(b'a'), Just(b'b')], 0..4),
        a2 in proptest::collection::vec(prop_oneof![Just(0u8), Just(0xFFu8), Just(b'a'), Just(b'b')], 0..4),
        n1 in -20i64..20, n2 in -20i64..20,
        b1 in proptest::collection::vec(prop_oneof![Just(0u8), Just(0xFFu8), Just(b'a')], 0..3),
        b2 in proptest::collection::vec(prop_oneof![Just(0u8), Just(0xFFu8), Just(b'a')], 0..3),
        d1: bool, d2: bool, d3: bool,
    ) {
        let mut spec = KeySpec::new(vec![
            KeyField::columns(ColumnSpan::field(0), FieldType::Char, d1),
            KeyField::columns(ColumnSpan::field(1), FieldType::Decimal, d2),
            KeyField::columns(ColumnSpan::field(2), FieldType::Char, d3),
        ]).unwrap();
        spec.separator = Some(b'|');
        let rec = |a: &[u8], n: i64, b: &[u8]| {
            let mut r = a.to_vec();
            r.extend(format!("|{n}|").bytes());
            r.extend_from_slice(b);
            r
        };
        let dir = |o: Ordering, d: bool| if d { o.reverse() } else { o };
        let want = dir(a1.cmp(&a2), d1).then(dir(n1.cmp(&n2), d2)).then(dir(b1.cmp(&b2), d3));
        prop_assert_eq!(key(&spec, &rec(&a1, n1, &b1)).cmp(&key(&spec, &rec(&a2, n2, &b2))), want);
    }

    /// The fast path's raw bytes are exactly the normalized key.
    #[test]
    fn fast_path_bytes_are_the_normalized_key(rec in proptest::collection::vec(any::<u8>(), 100)) {
        let spec = KeySpec::benchmark();
        let fast = spec.fast_path(oxsort_format::RecordLayout::BENCHMARK).unwrap();
        prop_assert_eq!(&rec[fast.offset..fast.offset + fast.len], &key(&spec, &rec)[..]);
    }
}

/// Single encodings and their errors, by hand.
mod encodings {
    use oxsort_format::{Endian, FieldType, KeyField, KeySpec, ShortFields};

    fn key(spec: &KeySpec, rec: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        spec.normalize(rec, &mut v).unwrap();
        v
    }

    #[test]
    fn benchmark_key_is_the_raw_bytes() {
        let rec: Vec<u8> = (0..100).collect();
        assert_eq!(key(&KeySpec::benchmark(), &rec), &rec[..10]);
    }

    #[test]
    fn signed_big_and_little() {
        let fi = KeySpec::new(vec![KeyField::bytes(0, 2, FieldType::Signed(Endian::Big), false)])
            .unwrap();
        assert!(key(&fi, &(-1i16).to_be_bytes()) < key(&fi, &0i16.to_be_bytes()));
        let li =
            KeySpec::new(vec![KeyField::bytes(0, 4, FieldType::Signed(Endian::Little), false)])
                .unwrap();
        assert!(key(&li, &(-300i32).to_le_bytes()) < key(&li, &(-2i32).to_le_bytes()));
        assert!(key(&li, &(2i32).to_le_bytes()) < key(&li, &(256i32).to_le_bytes()));
    }

    #[test]
    fn floats_zero_and_nan() {
        let fl = KeySpec::new(vec![KeyField::bytes(0, 8, FieldType::Float(Endian::Big), false)])
            .unwrap();
        let k = |x: f64| key(&fl, &x.to_be_bytes());
        assert_eq!(k(0.0), k(-0.0));
        assert!(k(f64::NEG_INFINITY) < k(-1.0));
        assert!(k(f64::INFINITY) < k(f64::NAN));
        assert_eq!(k(f64::NAN), k(-f64::NAN));
    }

    #[test]
    fn short_records() {
        let mut spec = KeySpec::new(vec![KeyField::bytes(2, 3, FieldType::Char, true)]).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            spec.normalize(b"abcd", &mut out).unwrap_err().to_string(),
            "key field 1 (bytes 3 to 5, 1-based) lies past the end of the 4-byte record"
        );
        spec.short_fields = ShortFields::SortFirst;
        assert!(key(&spec, b"abcd") < key(&spec, b"abzzz"));
        assert!(key(&spec, b"abzzz") < key(&spec, b"abaaa"));
    }

    #[test]
    fn bad_packed_names_the_field_and_byte() {
        let spec = KeySpec::new(vec![
            KeyField::bytes(0, 1, FieldType::Char, false),
            KeyField::bytes(1, 2, FieldType::Packed, false),
        ])
        .unwrap();
        let mut out = Vec::new();
        assert_eq!(spec.normalize(&[b'x', 0x12, 0x3A], &mut out), Ok(()), "sign A is positive");
        assert_eq!(
            spec.normalize(&[b'x', 0x1B, 0x3C], &mut out).unwrap_err().to_string(),
            "key field 2: invalid packed decimal data at byte 2 (0x1B)"
        );
    }
}

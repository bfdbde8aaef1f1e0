//! Entry prefixes of keys on delimited columns (GNU `-k`, nsort delimited fields), written
//! straight into the prefix.
//!
//! A sort builds every record's [`PREFIX_BYTES`]-byte prefix twice: when it reads the record
//! and when it verifies the output. Through [`KeySpec::normalize_prefix`] that means locating
//! each field from the record's start (twice for a field with an end), pushing every byte of
//! its encoding onto a growable buffer and copying the first bytes out. [`ColumnKey::prefix`]
//! finds the field boundaries once, left to right and only as far as the fields need
//! ([`FieldEnds`]), and writes the two common encodings, C-locale text and `-n` numbers,
//! directly into the prefix, stopping when it is full. Other kinds go through their usual
//! encoder. The bytes are exactly the first [`PREFIX_BYTES`] of [`KeySpec::normalize`]'s.
//!
//! ```text
//!  record   b3x;4|Jc.2\/,7919,P vdR.NGZ#...          -t, -k2,2n -k1,1  (+ last resort)
//!  fields   [ field 1  ] [f2]                         FieldEnds: ends 12, 17
//!  prefix   | 03 04 79 19 00 | 62 33 78 3b 34 |       -n of field 2: class, count, BCD,
//!                                                     fraction end; then field 1's bytes
//! ```

use crate::columns::{ColumnSpan, FieldEnds};
use crate::decimal::{self, ByteSink, TextSyntax};
use crate::normalize::encode_field;
use crate::spec::{Endian, FieldLoc, FieldType, KeySpec, Prefix, PREFIX_BYTES};

/// How one column field is encoded.
#[derive(Debug, Clone, Copy)]
enum Encoding {
    /// Bytes as they are, 0x00 escaped, 0x00 0x00 at the end: C-locale text (GNU text
    /// without `d i f`, DFSORT `CH`/`BI` on a column).
    Bytes,
    /// GNU `-n` in the C locale (decimal point `.`, no thousands separator).
    Numeric,
    /// Any other kind that cannot fail, through [`encode_field`].
    Other(FieldType),
}

#[derive(Debug, Clone, Copy)]
struct ColumnField {
    span: ColumnSpan,
    encoding: Encoding,
    descending: bool,
    /// 1-based field index, for [`encode_field`].
    index: usize,
}

/// The prefix writer of a key made only of column fields: see the module documentation.
#[derive(Debug, Clone)]
pub struct ColumnKey {
    fields: Vec<ColumnField>,
    separator: Option<u8>,
    /// The last field whose end the fields need (see [`FieldEnds::fill`]); `None` when they
    /// need none (keys from the first field to the end of the record).
    last_end: Option<usize>,
}

impl ColumnKey {
    /// The prefix writer of `spec`, if every field is a column field whose encoding cannot
    /// fail, within the columns a field-boundary search tracks (the first 16).
    pub fn compile(spec: &KeySpec) -> Option<ColumnKey> {
        let mut fields = Vec::with_capacity(spec.fields.len());
        for (i, f) in spec.fields.iter().enumerate() {
            let FieldLoc::Columns(span) = f.loc else { return None };
            if !FieldEnds::tracks(&span) {
                return None;
            }
            let encoding = match f.kind {
                FieldType::Packed
                | FieldType::Zoned
                | FieldType::LeadingZoned
                | FieldType::TrailingSign => return None,
                FieldType::Char | FieldType::Unsigned(Endian::Big) => Encoding::Bytes,
                FieldType::Gnu(k) if k.is_raw_text() => Encoding::Bytes,
                FieldType::Gnu(k) if k.is_c_numeric() => Encoding::Numeric,
                kind => Encoding::Other(kind),
            };
            fields.push(ColumnField { span, encoding, descending: f.descending, index: i + 1 });
        }
        // A field with an end needs that field's end; one starting at field k needs k - 1's.
        let last_end = fields
            .iter()
            .flat_map(|f| [f.span.end.map(|e| e.field), f.span.start_field.checked_sub(1)])
            .flatten()
            .max();
        Some(ColumnKey { fields, separator: spec.separator, last_end })
    }

    /// The first [`PREFIX_BYTES`] bytes of the normalized key of `record` (without its
    /// terminator), zero-padded; `scratch` holds the encodings of the kinds without a direct
    /// writer.
    #[inline]
    pub fn prefix(&self, record: &[u8], scratch: &mut Vec<u8>) -> Prefix {
        let mut w = PrefixWriter { acc: 0, n: 0 };
        let mut ends = FieldEnds::new(record, self.separator);
        if let Some(last) = self.last_end {
            ends.fill(last);
        }
        for f in &self.fields {
            if w.n == PREFIX_BYTES {
                break;
            }
            let range = ends.locate(&f.span);
            let start = w.n;
            let text = &record[range.clone()];
            match f.encoding {
                Encoding::Bytes => w.text(text, record.get(range.start..range.start + WIDE)),
                Encoding::Numeric => match decimal::encode_text_head(text, TextSyntax::Gnu) {
                    Some((head, len)) => w.head(head, len),
                    None => decimal::encode_text(&mut w, text, TextSyntax::Gnu),
                },
                Encoding::Other(kind) => {
                    scratch.clear();
                    let room = PREFIX_BYTES - w.n;
                    // Only packed and zoned data can fail, and they never get here.
                    let _ = encode_field(kind, text, true, f.index, range.start + 1, scratch, room);
                    for &b in &scratch[..scratch.len().min(room)] {
                        w.push(b);
                    }
                }
            }
            if f.descending {
                w.complement_from(start);
            }
        }
        w.bytes()
    }
}

/// Record bytes [`PrefixWriter::text`] takes with one load: more than the prefix holds.
const WIDE: usize = 16;

/// A prefix being written, in a register: byte `i` of the prefix is byte `i` of the
/// big-endian `acc`; bytes past [`PREFIX_BYTES`] are dropped. (A prefix written to memory a
/// byte at a time and read back whole showed in the profile as a stall at that read.)
struct PrefixWriter {
    acc: u128,
    n: usize,
}

impl PrefixWriter {
    #[inline]
    fn push(&mut self, b: u8) {
        if self.n < PREFIX_BYTES {
            self.acc |= u128::from(b) << (8 * (15 - self.n));
            self.n += 1;
        }
    }

    /// Appends the first `len` bytes of the left-aligned `head` (the bytes after them zero).
    #[inline]
    fn head(&mut self, head: u128, len: usize) {
        self.acc |= head >> (8 * self.n);
        self.n = (self.n + len).min(PREFIX_BYTES);
    }

    /// Complements bytes `start..n` (a descending field).
    #[inline]
    fn complement_from(&mut self, start: usize) {
        if start < self.n {
            let bits = 8 * (self.n - start) as u32;
            let mask = (u128::MAX >> (128 - bits)) << (8 * (16 - self.n));
            self.acc ^= mask;
        }
    }

    #[inline]
    fn bytes(&self) -> Prefix {
        let all = self.acc.to_be_bytes();
        let mut p = [0; PREFIX_BYTES];
        p.copy_from_slice(&all[..PREFIX_BYTES]);
        p
    }

    /// The escaped bytes of `t`, then 0x00 0x00. `wide`: the [`WIDE`] record bytes from
    /// `t`'s start, when the record has them (`t` may end inside them), to take the bytes the
    /// prefix has room for with one load.
    #[inline]
    fn text(&mut self, t: &[u8], wide: Option<&[u8]>) {
        const ONES: u128 = u128::from_ne_bytes([0x01; 16]);
        const HIGHS: u128 = u128::from_ne_bytes([0x80; 16]);
        let room = PREFIX_BYTES - self.n;
        let k = t.len().min(room);
        let wide = wide.and_then(|w| <[u8; WIDE]>::try_from(w).ok()).map(u128::from_be_bytes);
        if let (Some(v), true) = (wide, k > 0) {
            // The first k bytes (k <= PREFIX_BYTES < 16), the rest cleared.
            let keep = u128::MAX << (8 * (16 - k));
            let v = v & keep;
            // With the other bytes set, a zero byte is one of the first k.
            let probe = v | !keep;
            if probe.wrapping_sub(ONES) & !probe & HIGHS == 0 {
                self.acc |= v >> (8 * self.n);
                self.n += k;
                if k == t.len() {
                    self.n = (self.n + 2).min(PREFIX_BYTES);
                }
                return;
            }
        }
        for &b in t {
            if self.n == PREFIX_BYTES {
                return;
            }
            self.push(b);
            if b == 0 {
                self.push(0xFF);
            }
        }
        // The end mark: the bytes past `n` are still zero.
        self.n = (self.n + 2).min(PREFIX_BYTES);
    }
}

/// What does not fit is dropped.
impl ByteSink for PrefixWriter {
    #[inline]
    fn put(&mut self, b: u8) {
        self.push(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns::ColumnEnd;
    use crate::{GnuIgnore, GnuKind, GnuOrder, KeyField};
    use proptest::prelude::*;

    /// The prefix the general normalizer gives.
    fn reference(spec: &KeySpec, record: &[u8]) -> Prefix {
        let mut key = Vec::new();
        spec.normalize(record, &mut key).unwrap();
        let mut p = [0; PREFIX_BYTES];
        let n = key.len().min(PREFIX_BYTES);
        p[..n].copy_from_slice(&key[..n]);
        p
    }

    fn kind_strategy() -> impl Strategy<Value = FieldType> {
        let c = GnuKind::c_text();
        prop_oneof![
            Just(FieldType::Gnu(c)),
            Just(FieldType::Gnu(GnuKind { order: GnuOrder::Numeric, ..c })),
            Just(FieldType::Char),
            Just(FieldType::Gnu(GnuKind { order: GnuOrder::Month, ..c })),
            Just(FieldType::Gnu(GnuKind { order: GnuOrder::General, ..c })),
            Just(FieldType::Gnu(GnuKind { fold: true, ignore: GnuIgnore::NonDictionary, ..c })),
            Just(FieldType::Gnu(GnuKind {
                order: GnuOrder::Numeric,
                thousands_sep: Some(b','),
                ..c
            })),
        ]
    }

    fn span_strategy() -> impl Strategy<Value = ColumnSpan> {
        (
            0..4usize,
            0..3usize,
            any::<bool>(),
            proptest::option::of((0..4usize, 0..3usize, any::<bool>())),
        )
            .prop_map(|(sf, sc, sb, end)| ColumnSpan {
                start_field: sf,
                start_char: sc,
                skip_start_blanks: sb,
                end: end.map(|(field, char, skip_blanks)| ColumnEnd { field, char, skip_blanks }),
            })
    }

    /// Lines of digits, signs, points, blanks, separators and a few other bytes (NUL too),
    /// so that numbers, empty fields and escapes all occur.
    fn line_strategy() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                4 => b'0'..=b'9',
                1 => Just(b'-'),
                1 => Just(b'.'),
                1 => Just(b' '),
                1 => Just(b'\t'),
                2 => Just(b','),
                1 => Just(0u8),
                2 => b'A'..=b'z',
                1 => any::<u8>(),
            ],
            0..40,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn prefixes_are_the_normalized_keys_first_bytes(
            fields in proptest::collection::vec((span_strategy(), kind_strategy(), any::<bool>()), 1..4),
            separator in prop_oneof![Just(None), Just(Some(b',')), Just(Some(0u8))],
            lines in proptest::collection::vec(line_strategy(), 1..20),
        ) {
            let fields = fields
                .into_iter()
                .map(|(span, kind, desc)| KeyField::columns(span, kind, desc))
                .collect();
            let spec = KeySpec { fields, separator, ..KeySpec::benchmark() };
            let key = ColumnKey::compile(&spec).expect("column fields compile");
            let mut scratch = Vec::new();
            for line in &lines {
                prop_assert_eq!(key.prefix(line, &mut scratch), reference(&spec, line), "{:?}", line);
            }
        }
    }

    #[test]
    fn numbers_long_and_short_match_the_normalizer() {
        let c = GnuKind::c_text();
        let n = FieldType::Gnu(GnuKind { order: GnuOrder::Numeric, ..c });
        for desc in [false, true] {
            let spec = KeySpec {
                fields: vec![
                    KeyField::columns(ColumnSpan::field(0), n, desc),
                    KeyField::columns(ColumnSpan::whole(), FieldType::Gnu(c), false),
                ],
                separator: Some(b':'),
                ..KeySpec::benchmark()
            };
            let key = ColumnKey::compile(&spec).unwrap();
            let long = "9".repeat(300);
            for line in [
                "",
                "0",
                "-0",
                "007",
                "-12.50:x",
                "  3.14159",
                ".5",
                "-.05",
                "12345678901234",
                &long,
                "1.000",
                "-",
                "abc",
            ] {
                assert_eq!(
                    key.prefix(line.as_bytes(), &mut Vec::new()),
                    reference(&spec, line.as_bytes()),
                    "{line}"
                );
            }
        }
    }

    #[test]
    fn fixed_position_and_far_columns_are_left_to_the_normalizer() {
        let bytes = KeySpec::benchmark();
        assert!(ColumnKey::compile(&bytes).is_none());
        let far = ColumnSpan::field(crate::columns::MAX_TRACKED_FIELDS);
        let spec = KeySpec {
            fields: vec![KeyField::columns(far, FieldType::Char, false)],
            separator: Some(b','),
            ..KeySpec::benchmark()
        };
        assert!(ColumnKey::compile(&spec).is_none());
    }
}

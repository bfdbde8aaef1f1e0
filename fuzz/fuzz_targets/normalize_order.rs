//! Normalization order: for a key built from the input, the order of two records' normalized
//! keys must equal the field-by-field order of their normalized fields (no bleeding between
//! fields), and a descending field must reverse its ascending order.
#![no_main]

use std::cmp::Ordering;

use libfuzzer_sys::fuzz_target;
use oxsort_format::{ColumnSpan, Endian, FieldType, GnuIgnore, GnuKind, GnuOrder, KeyField, KeySpec};

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

const TYPES: [FieldType; 14] = [
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
];

fn norm(spec: &KeySpec, rec: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    spec.normalize(rec, &mut out).ok().map(|()| out)
}

fuzz_target!(|data: &[u8]| {
    // Layout of the input: n, then n field descriptors (type, length, flags), then two
    // records split at the middle of the rest.
    let Some((&n, rest)) = data.split_first() else { return };
    let n = (n % 4 + 1) as usize;
    if rest.len() < 3 * n {
        return;
    }
    let (desc, records) = rest.split_at(3 * n);
    let (r1, r2) = records.split_at(records.len() / 2);
    let mut fields = Vec::new();
    let mut offset = 0;
    for d in desc.chunks(3) {
        let kind = TYPES[d[0] as usize % TYPES.len()];
        let len = match kind {
            FieldType::Float(_) => 4 + 4 * (d[1] as usize % 2),
            FieldType::Unsigned(Endian::Little) | FieldType::Signed(_) => 1 + d[1] as usize % 8,
            FieldType::Packed => 1 + d[1] as usize % 16,
            FieldType::Zoned => 1 + d[1] as usize % 31,
            _ => 1 + d[1] as usize % 12,
        };
        let field = if d[2] & 2 != 0 && !matches!(
            kind,
            FieldType::Unsigned(_) | FieldType::Signed(_) | FieldType::Float(_) | FieldType::Packed
        ) {
            KeyField::columns(ColumnSpan::field(fields.len()), kind, d[2] & 1 == 1)
        } else {
            let f = KeyField::bytes(offset, len, kind, d[2] & 1 == 1);
            offset += len;
            f
        };
        fields.push(field);
    }
    let Ok(mut spec) = KeySpec::new(fields.clone()) else { return };
    spec.separator = Some(b'|');
    let (Some(k1), Some(k2)) = (norm(&spec, r1), norm(&spec, r2)) else { return };

    // Field by field, each normalized on its own.
    let mut want = Ordering::Equal;
    for f in &fields {
        let mut one = spec.clone();
        one.fields = vec![*f];
        let (a, b) = (norm(&one, r1).unwrap(), norm(&one, r2).unwrap());
        want = want.then(a.cmp(&b));
        // Descending reverses ascending.
        let mut asc = one.clone();
        asc.fields[0].descending = !f.descending;
        let (x, y) = (norm(&asc, r1).unwrap(), norm(&asc, r2).unwrap());
        assert_eq!(a.cmp(&b), x.cmp(&y).reverse());
    }
    assert_eq!(k1.cmp(&k2), want);
});

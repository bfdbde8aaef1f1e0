//! Key specifications: which bytes of a record form the key, how to read them, which way to
//! order them.

use std::cmp::Ordering;

use crate::columns::ColumnSpan;
use crate::error::{KeyError, SpecError};
use crate::layout::RecordLayout;

/// Byte order of a binary field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Most significant byte first (DFSORT `BI`, `FI`, `FL`).
    Big,
    /// Least significant byte first (oxsort's `LU`, `LI`, `LF`; nsort's binary types).
    Little,
}

/// How a field's bytes are read. DFSORT names in parentheses; the little-endian names
/// (`LU`, `LI`, `LF`) are oxsort's own, as DFSORT has no little-endian formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldType {
    /// Bytes compared unsigned (`CH`, `AC`; nsort `character`).
    Char,
    /// Bytes compared after translation through an alternate collating sequence (`AQ`, with
    /// the table of the `ALTSEQ` statement: byte `b` collates as `table[b]`).
    AltSeq(&'static [u8; 256]),
    /// Unsigned binary integer: big-endian of any length (`BI`), little-endian of 1 to 8
    /// bytes (`LU`; nsort `unsigned`).
    Unsigned(Endian),
    /// Two's-complement signed integer of 1 to 8 bytes: big-endian (`FI`) or little-endian
    /// (`LI`; nsort `integer`).
    Signed(Endian),
    /// IEEE 754 binary32 (4 bytes) or binary64 (8 bytes): big-endian (`FL`) or little-endian
    /// (`LF`; nsort `float`, `double`). `-0` equals `+0`; every NaN sorts after `+inf`
    /// (ascending) and all NaNs are equal.
    Float(Endian),
    /// Packed decimal, 1 to 16 bytes (`PD`; nsort `packed`): two digits per byte, the last
    /// nibble is the sign (C, A, E, F positive; D, B negative).
    Packed,
    /// Zoned decimal, 1 to 31 bytes (`ZD`; nsort `zoned`): one digit per byte, the sign in the
    /// last byte's zone. EBCDIC (zones F, sign C/A/E/F or D/B), ASCII (zones 3, negative
    /// sign zone 7) and the overpunch letters `{A-I` (positive) and `}J-R` (negative) in the
    /// last byte are all accepted.
    Zoned,
    /// Zoned decimal with the sign over the first digit (`CLO`, `OL`; COBOL's `SIGN
    /// LEADING`), 1 to 31 bytes; zones as [`FieldType::Zoned`]'s.
    LeadingZoned,
    /// Digits before a separate trailing sign byte, `+`, `-` or blank (`CST`, `TS`; COBOL's
    /// `SIGN TRAILING SEPARATE`), 2 bytes or more.
    TrailingSign,
    /// Numeric text with an optional leading sign (`CSF`, `FS`): blanks, then `+` or `-`, then
    /// digits; reading stops at the first other byte.
    SignedText,
    /// Free-form unsigned numeric text (`UFF`): the digits wherever they are in the field,
    /// everything else ignored.
    FreeUnsigned,
    /// Free-form signed numeric text (`SFF`): as [`FieldType::FreeUnsigned`], negative when
    /// a `-` or `)` appears anywhere in the field.
    FreeSigned,
    /// Decimal text (nsort `decimal`): blanks, optional `+`/`-`, digits, optional `.` and
    /// fraction digits.
    Decimal,
    /// A GNU sort key of any kind (`-n -g -h -M -V -R`, text with `-d -f -i`, locale
    /// collation): see [`GnuKind`](crate::GnuKind).
    Gnu(crate::gnu_key::GnuKind),
}

impl FieldType {
    /// The DFSORT-style name (`CH`, `BI`, `LU`...), used in messages and `--fields`.
    pub fn name(self) -> &'static str {
        match self {
            FieldType::Char => "CH",
            FieldType::AltSeq(_) => "AQ",
            FieldType::Unsigned(Endian::Big) => "BI",
            FieldType::Unsigned(Endian::Little) => "LU",
            FieldType::Signed(Endian::Big) => "FI",
            FieldType::Signed(Endian::Little) => "LI",
            FieldType::Float(Endian::Big) => "FL",
            FieldType::Float(Endian::Little) => "LF",
            FieldType::Packed => "PD",
            FieldType::Zoned => "ZD",
            FieldType::LeadingZoned => "CLO",
            FieldType::TrailingSign => "CST",
            FieldType::SignedText => "CSF",
            FieldType::FreeUnsigned => "UFF",
            FieldType::FreeSigned => "SFF",
            FieldType::Decimal => "decimal",
            FieldType::Gnu(_) => "gnu",
        }
    }

    /// Parses a DFSORT format name (case-insensitive): `CH AC AQ BI FI PD ZD FL CSF FS CSL LS
    /// CST TS CLO OL UFF SFF` and oxsort's `LU LI LF` (`AQ` with the identity table until an `ALTSEQ` statement
    /// gives one).
    pub fn from_dfsort(name: &str) -> Option<FieldType> {
        Some(match name.to_ascii_uppercase().as_str() {
            "CH" | "AC" => FieldType::Char,
            "AQ" => FieldType::AltSeq(&IDENTITY),
            "BI" => FieldType::Unsigned(Endian::Big),
            "FI" => FieldType::Signed(Endian::Big),
            "FL" => FieldType::Float(Endian::Big),
            "LU" => FieldType::Unsigned(Endian::Little),
            "LI" => FieldType::Signed(Endian::Little),
            "LF" => FieldType::Float(Endian::Little),
            "PD" => FieldType::Packed,
            "ZD" => FieldType::Zoned,
            "CLO" | "OL" => FieldType::LeadingZoned,
            "CST" | "TS" => FieldType::TrailingSign,
            // A leading separate sign reads as numeric text with its sign first.
            "CSF" | "FS" | "CSL" | "LS" => FieldType::SignedText,
            "UFF" => FieldType::FreeUnsigned,
            "SFF" => FieldType::FreeSigned,
            _ => return None,
        })
    }

    /// Checks a fixed field length for this type; on error, the allowed lengths in words.
    pub fn allowed_lengths(self, len: usize) -> Result<(), &'static str> {
        let ok = match self {
            FieldType::Unsigned(Endian::Little) | FieldType::Signed(_) => (1..=8).contains(&len),
            FieldType::Float(_) => len == 4 || len == 8,
            FieldType::Packed => (1..=16).contains(&len),
            FieldType::Zoned | FieldType::LeadingZoned => (1..=31).contains(&len),
            FieldType::TrailingSign => len >= 2,
            _ => len >= 1,
        };
        if ok {
            return Ok(());
        }
        Err(match self {
            FieldType::Unsigned(Endian::Little) | FieldType::Signed(_) => "1 to 8",
            FieldType::Float(_) => "4 or 8",
            FieldType::Packed => "1 to 16",
            FieldType::Zoned | FieldType::LeadingZoned => "1 to 31",
            FieldType::TrailingSign => "at least 2",
            _ => "at least 1",
        })
    }

    /// Whether the type works on variable-length text (a delimited column).
    fn fits_columns(self) -> bool {
        !matches!(
            self,
            FieldType::Unsigned(_) | FieldType::Signed(_) | FieldType::Float(_) | FieldType::Packed
        )
    }
}

/// The alternate collating sequence of `AQ` fields when no `ALTSEQ` statement changes it: each
/// byte collates as itself.
pub static IDENTITY: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as u8;
        i += 1;
    }
    t
};

/// Where a field's bytes are in the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldLoc {
    /// A fixed byte range: `offset` is 0-based (DFSORT position 1 is offset 0).
    Bytes {
        /// 0-based offset of the first byte.
        offset: usize,
        /// Length in bytes (at least 1).
        len: usize,
    },
    /// A range of delimited columns (GNU `-k`, nsort delimited fields), separated as the
    /// key's [`KeySpec::separator`] says.
    Columns(ColumnSpan),
}

/// One field of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyField {
    /// Where the field is.
    pub loc: FieldLoc,
    /// How its bytes are read.
    pub kind: FieldType,
    /// `true` for descending order (DFSORT `D`).
    pub descending: bool,
}

impl KeyField {
    /// A fixed-position field: `offset` 0-based.
    pub fn bytes(offset: usize, len: usize, kind: FieldType, descending: bool) -> KeyField {
        KeyField { loc: FieldLoc::Bytes { offset, len }, kind, descending }
    }

    /// A column field.
    pub fn columns(span: ColumnSpan, kind: FieldType, descending: bool) -> KeyField {
        KeyField { loc: FieldLoc::Columns(span), kind, descending }
    }
}

/// What to do with a variable-length record that ends before a fixed-position field does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ShortFields {
    /// [`KeyError::ShortRecord`] (DFSORT's default).
    #[default]
    Error,
    /// The missing field sorts before every present value, in either direction (`OPTION
    /// VLSHRT`). Costs one presence byte per fixed-position field in the normalized key.
    /// In an `INCLUDE`/`OMIT` condition: a condition with a short field is false.
    SortFirst,
    /// The bytes of a field past the record's end count as binary zeros: `OPTION VLSHRT` on
    /// RDW-prefixed records (DFSORT pads short control fields so), and `OPTION VLSCMP` in
    /// `INCLUDE`/`OMIT` conditions.
    PadZeros,
}

/// The raw key bytes the engine may use as they are, without normalizing: see
/// [`KeySpec::fast_path`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FastKey {
    /// 0-based offset of the key in each record.
    pub offset: usize,
    /// Key length, 1 to [`PREFIX_BYTES`].
    pub len: usize,
}

/// Bytes of a key that a sort entry carries: 10 bytes = 80 bits, which leave 48 bits of a
/// `u128` for the record index (the benchmark key packing). Keys of at most this many raw
/// bytes are compared whole by one integer comparison; longer or normalized keys are compared
/// by this prefix first and by the whole key only when prefixes tie.
pub const PREFIX_BYTES: usize = 10;

/// The first [`PREFIX_BYTES`] bytes of a key, zero-padded.
pub type Prefix = [u8; PREFIX_BYTES];

/// A sort key: fields compared in order, each ascending or descending.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeySpec {
    /// The fields, most significant first.
    pub fields: Vec<KeyField>,
    /// Column separator for [`FieldLoc::Columns`] fields: `Some(byte)` (GNU `-t`), or `None`
    /// for GNU's default (a field is a run of non-blanks with the blanks before it).
    pub separator: Option<u8>,
    /// Records too short for a fixed-position field.
    pub short_fields: ShortFields,
}

impl KeySpec {
    /// A key with these fields, default column separation and short records as errors.
    pub fn new(fields: Vec<KeyField>) -> Result<KeySpec, SpecError> {
        let spec = KeySpec { fields, separator: None, short_fields: ShortFields::Error };
        spec.validate()?;
        Ok(spec)
    }

    /// The Sort Benchmark key, `SORT FIELDS=(1,10,CH,A)`.
    pub fn benchmark() -> KeySpec {
        KeySpec {
            fields: vec![KeyField::bytes(0, 10, FieldType::Char, false)],
            separator: None,
            short_fields: ShortFields::Error,
        }
    }

    /// The whole record, as bytes, ascending: the order when no key is given.
    pub fn whole_record(layout: RecordLayout) -> KeySpec {
        let field = match layout {
            RecordLayout::Fixed(n) => KeyField::bytes(0, n, FieldType::Char, false),
            RecordLayout::Delimited(_) => {
                KeyField::columns(ColumnSpan::whole(), FieldType::Char, false)
            }
            // The data after the RDW, as far as the longest record goes (shorter ones padded).
            RecordLayout::Variable(max) => {
                let data = max.saturating_sub(crate::RDW_BYTES).max(1);
                let field = KeyField::bytes(crate::RDW_BYTES, data, FieldType::Char, false);
                return KeySpec {
                    fields: vec![field],
                    separator: None,
                    short_fields: ShortFields::PadZeros,
                };
            }
        };
        KeySpec { fields: vec![field], separator: None, short_fields: ShortFields::Error }
    }

    /// Checks each field on its own: at least one field, lengths that suit the types, no
    /// binary types on columns.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.fields.is_empty() {
            return Err(SpecError::NoFields);
        }
        for (i, f) in self.fields.iter().enumerate() {
            match f.loc {
                FieldLoc::Bytes { len, .. } => f.kind.allowed_lengths(len).map_err(|allowed| {
                    SpecError::FieldLength { field: i + 1, kind: f.kind.name(), allowed, len }
                })?,
                FieldLoc::Columns(_) => {
                    if !f.kind.fits_columns() {
                        return Err(SpecError::ColumnType { field: i + 1, kind: f.kind.name() });
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks the key against a record layout before any record is read: with fixed records,
    /// every fixed-position field must end inside the record; with RDW-prefixed ones, inside
    /// the longest record.
    pub fn check_layout(&self, layout: RecordLayout) -> Result<(), SpecError> {
        self.validate()?;
        if let RecordLayout::Fixed(record_len) | RecordLayout::Variable(record_len) = layout {
            for (i, f) in self.fields.iter().enumerate() {
                if let FieldLoc::Bytes { offset, len } = f.loc {
                    if offset + len > record_len {
                        return Err(SpecError::FieldPastRecord {
                            field: i + 1,
                            end: offset + len,
                            record_len,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// [`KeySpec::check_layout`], then fits the key to the layout: fixed records are never
    /// short, so [`ShortFields::SortFirst`] is dropped there (no presence bytes). The engine
    /// calls this once and uses the result for every record.
    pub fn for_layout(mut self, layout: RecordLayout) -> Result<KeySpec, SpecError> {
        self.check_layout(layout)?;
        match layout {
            RecordLayout::Fixed(_) => self.short_fields = ShortFields::Error,
            // DFSORT's VLSHRT on RDW-prefixed records: short fields compare as if padded.
            RecordLayout::Variable(_) if self.short_fields == ShortFields::SortFirst => {
                self.short_fields = ShortFields::PadZeros
            }
            _ => {}
        }
        Ok(self)
    }

    /// `Some` when the key is one ascending `CH`/`BI` byte range (or several adjacent ones,
    /// in order) of at most [`PREFIX_BYTES`] bytes inside fixed records. Then the
    /// normalized key is exactly `record[offset..offset + len]`, and the engine may use those
    /// bytes directly (the benchmark key takes this path).
    pub fn fast_path(&self, layout: RecordLayout) -> Option<FastKey> {
        let RecordLayout::Fixed(record_len) = layout else { return None };
        if self.short_fields != ShortFields::Error {
            return None;
        }
        let mut fast: Option<FastKey> = None;
        for f in &self.fields {
            let FieldLoc::Bytes { offset, len } = f.loc else { return None };
            if f.descending || !matches!(f.kind, FieldType::Char | FieldType::Unsigned(Endian::Big))
            {
                return None;
            }
            fast = match fast {
                None => Some(FastKey { offset, len }),
                Some(k) if k.offset + k.len == offset => {
                    Some(FastKey { offset: k.offset, len: k.len + len })
                }
                Some(_) => return None,
            };
        }
        fast.filter(|k| k.len <= PREFIX_BYTES && k.offset + k.len <= record_len)
    }

    /// Compares two records by this key (normalizing both; for tests and small jobs).
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Result<Ordering, KeyError> {
        let (mut ka, mut kb) = (Vec::new(), Vec::new());
        self.normalize(a, &mut ka)?;
        self.normalize(b, &mut kb)?;
        Ok(ka.cmp(&kb))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmark_takes_the_fast_path() {
        let k = KeySpec::benchmark();
        assert_eq!(k.fast_path(RecordLayout::BENCHMARK), Some(FastKey { offset: 0, len: 10 }));
        assert_eq!(k.fast_path(RecordLayout::LINES), None);
        assert_eq!(k.fast_path(RecordLayout::Fixed(5)), None);
    }

    #[test]
    fn adjacent_fields_merge_into_one_fast_key() {
        let k = KeySpec::new(vec![
            KeyField::bytes(2, 4, FieldType::Char, false),
            KeyField::bytes(6, 3, FieldType::Unsigned(Endian::Big), false),
        ])
        .unwrap();
        assert_eq!(k.fast_path(RecordLayout::Fixed(20)), Some(FastKey { offset: 2, len: 7 }));
        let gap = KeySpec::new(vec![
            KeyField::bytes(2, 4, FieldType::Char, false),
            KeyField::bytes(7, 3, FieldType::Char, false),
        ])
        .unwrap();
        assert_eq!(gap.fast_path(RecordLayout::Fixed(20)), None);
        let long = KeySpec::new(vec![KeyField::bytes(0, 11, FieldType::Char, false)]).unwrap();
        assert_eq!(long.fast_path(RecordLayout::Fixed(20)), None);
        let desc = KeySpec::new(vec![KeyField::bytes(0, 4, FieldType::Char, true)]).unwrap();
        assert_eq!(desc.fast_path(RecordLayout::Fixed(20)), None);
    }

    #[test]
    fn layout_checks() {
        let k = KeySpec::new(vec![KeyField::bytes(95, 10, FieldType::Char, false)]).unwrap();
        assert_eq!(
            k.check_layout(RecordLayout::BENCHMARK).unwrap_err().to_string(),
            "key field 1 ends at byte 105 (1-based), past the end of the 100-byte records"
        );
        assert!(k.check_layout(RecordLayout::LINES).is_ok());
        let bad = KeySpec::new(vec![KeyField::bytes(0, 9, FieldType::Signed(Endian::Big), false)]);
        assert_eq!(
            bad.unwrap_err().to_string(),
            "key field 1: a FI field must be 1 to 8 bytes long, found 9"
        );
    }
}

//! Order-preserving key normalization.
//!
//! [`KeySpec::normalize`] turns a record's key into bytes whose plain unsigned byte order
//! (`memcmp`, a proper prefix sorts first) is the order the key asks for. Each field is encoded
//! on its own and the encodings are concatenated, most significant field first:
//!
//! ```text
//!  record ──► | field 1 | field 2 | ... | field n |      (each complemented if descending)
//!
//!  CH, BI (fixed)  raw bytes                                     width = len
//!  LU              bytes reversed                                width = len
//!  FI / LI         big-endian order, top bit flipped             width = len
//!  FL / LF         big-endian bits; negative: all bits flipped,  width = len
//!                  else sign bit set; -0 as +0; NaN = all ones
//!  PD ZD CSF UFF   canonical decimal (see below), prefix-free    variable
//!  SFF decimal -n
//!  CH on a column  bytes with 0x00 -> 0x00 0xFF, then 0x00 0x00  variable
//!
//!  with OPTION VLSHRT every fixed-position field gets a presence byte, never complemented:
//!            | 0x01 | field |     present
//!            | 0x00 |             record too short for the field (sorts first)
//!
//!  canonical decimal:  | class | ndigits | BCD integer digits | fraction nibbles, 0-ended |
//!                      class 0x01 negative (rest complemented), 0x02 zero, 0x03 positive
//! ```
//!
//! Every field encoding is either fixed-width or prefix-free, so field boundaries cannot
//! bleed: the comparison of two keys is decided inside the first field where they differ.
//! Complementing a fixed-width or prefix-free code reverses its order and keeps it
//! prefix-free, which is how descending fields work.

use crate::columns::FieldEnds;
use crate::decimal::{self, TextSyntax};
use crate::error::KeyError;
use crate::float::{float32_key, float64_key};
use crate::spec::{Endian, FieldLoc, FieldType, KeySpec, ShortFields};
use oxsort_bytes::{copy_xor, gather_masked, MaskedPiece};

/// Presence byte of a fixed-position field with [`ShortFields::SortFirst`].
const PRESENT: u8 = 0x01;
/// Presence byte of a missing (short) field with [`ShortFields::SortFirst`].
const MISSING: u8 = 0x00;

impl KeySpec {
    /// Appends the normalized key of `record` to `out`.
    ///
    /// `record` is the record without its terminator (see
    /// [`RecordLayout::key_bytes`](crate::RecordLayout::key_bytes)). The bytes appended
    /// compare with plain unsigned byte order (shorter is smaller) exactly as the records
    /// should sort. On error, `out` may hold part of the key.
    pub fn normalize(&self, record: &[u8], out: &mut Vec<u8>) -> Result<(), KeyError> {
        self.normalize_until(record, out, usize::MAX)
    }

    /// Appends at least the first `limit` bytes of the normalized key of `record` (all of it
    /// when shorter): like [`KeySpec::normalize`], but it stops at the first field boundary
    /// past `limit` bytes when no later field could fail (a fixed-position field of a record
    /// that may be short, packed or zoned data), so an error is found exactly when
    /// [`KeySpec::normalize`] would find it. The sort's 10-byte prefix needs only the first
    /// fields; GNU sort's last-resort comparison of the whole line, the longest field, is
    /// then never encoded for a prefix.
    pub fn normalize_prefix(
        &self,
        record: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<(), KeyError> {
        self.normalize_until(record, out, limit)
    }

    /// Whether a field is text collated by the locale (built with the C library's transform).
    pub fn collates(&self) -> bool {
        self.fields.iter().any(|f| matches!(f.kind, FieldType::Gnu(k) if k.collate))
    }

    /// Whether encoding field `i` of a record can fail.
    fn may_fail(&self, i: usize) -> bool {
        let f = &self.fields[i];
        matches!(
            f.kind,
            FieldType::Packed
                | FieldType::Zoned
                | FieldType::LeadingZoned
                | FieldType::TrailingSign
        ) || (matches!(f.loc, FieldLoc::Bytes { .. }) && self.short_fields == ShortFields::Error)
    }

    fn normalize_until(
        &self,
        record: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<(), KeyError> {
        let base = out.len();
        let mut ends = FieldEnds::new(record, self.separator);
        for (i, field) in self.fields.iter().enumerate() {
            if out.len() - base >= limit && !(i..self.fields.len()).any(|j| self.may_fail(j)) {
                return Ok(());
            }
            let index = i + 1;
            let (range, column) = match field.loc {
                FieldLoc::Bytes { offset, len } => {
                    if offset + len > record.len() {
                        match self.short_fields {
                            ShortFields::Error => {
                                return Err(KeyError::ShortRecord {
                                    field: index,
                                    start: offset + 1,
                                    end: offset + len,
                                    len: record.len(),
                                })
                            }
                            ShortFields::SortFirst => {
                                out.push(MISSING);
                                continue;
                            }
                            ShortFields::PadZeros => {
                                // The bytes past the record's end count as binary zeros.
                                let mut padded = record.get(offset..).unwrap_or(&[]).to_vec();
                                padded.resize(len, 0);
                                let start = out.len();
                                encode_field(
                                    field.kind,
                                    &padded,
                                    false,
                                    index,
                                    offset + 1,
                                    out,
                                    usize::MAX,
                                )?;
                                if field.descending {
                                    complement(&mut out[start..]);
                                }
                                continue;
                            }
                        }
                    }
                    if self.short_fields == ShortFields::SortFirst {
                        out.push(PRESENT);
                    }
                    (offset..offset + len, false)
                }
                FieldLoc::Columns(span) if FieldEnds::tracks(&span) => (ends.locate(&span), true),
                FieldLoc::Columns(span) => (span.locate(record, self.separator), true),
            };
            let start = out.len();
            let position = range.start + 1;
            let want = match limit {
                usize::MAX => usize::MAX,
                l => l.saturating_sub(start - base),
            };
            encode_field(field.kind, &record[range], column, index, position, out, want)?;
            if field.descending {
                complement(&mut out[start..]);
            }
        }
        Ok(())
    }
}

/// Flips every bit: reverses the order of a fixed-width or prefix-free code.
pub(crate) fn complement(bytes: &mut [u8]) {
    for b in bytes {
        *b = !*b;
    }
}

/// Appends one field's ascending encoding. `position` is the 1-based record position of
/// `bytes[0]`, for error messages. Only its first `want` bytes are needed (`usize::MAX`: all):
/// a collated text field may append just those (see [`KeySpec::normalize_prefix`]).
pub(crate) fn encode_field(
    kind: FieldType,
    bytes: &[u8],
    column: bool,
    index: usize,
    position: usize,
    out: &mut Vec<u8>,
    want: usize,
) -> Result<(), KeyError> {
    match kind {
        FieldType::Char | FieldType::Unsigned(Endian::Big) if column => escape(bytes, out),
        FieldType::AltSeq(table) if column => {
            let translated: Vec<u8> = bytes.iter().map(|&b| table[b as usize]).collect();
            escape(&translated, out);
        }
        FieldType::Char
        | FieldType::AltSeq(_)
        | FieldType::Unsigned(_)
        | FieldType::Signed(_)
        | FieldType::Float(_) => {
            let start = out.len();
            out.resize(start + fixed_width(kind, bytes.len()), 0);
            write_fixed(kind, bytes, &mut out[start..]);
        }
        FieldType::Packed => {
            if bytes.is_empty() {
                decimal::encode(out, false, std::iter::empty(), std::iter::empty());
            } else {
                let negative = decimal::packed_sign(bytes, index, position)?;
                decimal::encode(out, negative, decimal::packed_digits(bytes), std::iter::empty());
            }
        }
        FieldType::Zoned => {
            if bytes.is_empty() {
                decimal::encode(out, false, std::iter::empty(), std::iter::empty());
            } else {
                let (negative, last) = decimal::zoned_sign(bytes, index, position)?;
                let body = bytes[..bytes.len() - 1].iter().map(|b| b & 0x0F);
                let digits = body.chain(std::iter::once(last));
                decimal::encode(out, negative, digits, std::iter::empty());
            }
        }
        FieldType::LeadingZoned | FieldType::TrailingSign => {
            let (negative, digits) = decimal::signed_digits(kind, bytes, index, position)?;
            decimal::encode(out, negative, digits.into_iter(), std::iter::empty());
        }
        FieldType::SignedText => decimal::encode_text(out, bytes, TextSyntax::LeadingSign),
        FieldType::Decimal => decimal::encode_text(out, bytes, TextSyntax::Decimal),
        FieldType::Gnu(kind) => crate::gnu_key::encode(&kind, bytes, out, want),
        FieldType::FreeUnsigned => decimal::encode_free(out, bytes, false),
        FieldType::FreeSigned => decimal::encode_free(out, bytes, true),
    }
    Ok(())
}

/// Variable-length bytes, prefix-free: 0x00 becomes 0x00 0xFF, the end is 0x00 0x00.
fn escape(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// Bytes of the encoding of a fixed-width type's field of `len` bytes: the field's own length,
/// but 4 (binary32) or 8 (binary64) for floats.
fn fixed_width(kind: FieldType, len: usize) -> usize {
    match kind {
        FieldType::Float(_) if len == 4 => 4,
        FieldType::Float(_) => 8,
        _ => len,
    }
}

/// Writes the first `dst.len()` bytes (at most [`fixed_width`]) of the ascending encoding of a
/// `CH`, `BI`, `LU`, `FI`, `LI`, `FL` or `LF` field: raw, byte-reversed, sign bit flipped, or
/// the float key. With [`straight`], the one place these encodings are written.
#[inline]
fn write_fixed(kind: FieldType, bytes: &[u8], dst: &mut [u8]) {
    match kind {
        FieldType::Unsigned(Endian::Little) | FieldType::Signed(Endian::Little) => {
            dst.iter_mut().zip(bytes.iter().rev()).for_each(|(d, s)| *d = *s);
        }
        FieldType::Float(endian) => {
            let n = dst.len();
            dst.copy_from_slice(&float_key_bytes(bytes, endian).0[..n]);
        }
        FieldType::AltSeq(table) => {
            dst.iter_mut().zip(bytes).for_each(|(d, &s)| *d = table[s as usize]);
        }
        _ => copy_xor(bytes, dst, straight(kind).unwrap_or(0), 0),
    }
    if let (FieldType::Signed(Endian::Little), Some(top)) = (kind, dst.first_mut()) {
        *top ^= 0x80;
    }
}

/// The mask of the first byte of a field whose encoding is its bytes as they stand (`CH`,
/// `BI`; big-endian `FI`, its sign bit flipped), or `None`.
fn straight(kind: FieldType) -> Option<u8> {
    match kind {
        FieldType::Char | FieldType::Unsigned(Endian::Big) => Some(0),
        FieldType::Signed(Endian::Big) => Some(0x80),
        _ => None,
    }
}

/// The encoding of a float field: 4 bytes for binary32 (a 4-byte field), else 8 (binary64).
pub(crate) fn float_key_bytes(bytes: &[u8], endian: Endian) -> ([u8; 8], usize) {
    let mut key = [0u8; 8];
    if bytes.len() == 4 {
        let raw: [u8; 4] = bytes.try_into().unwrap_or([0; 4]);
        let bits = match endian {
            Endian::Big => u32::from_be_bytes(raw),
            Endian::Little => u32::from_le_bytes(raw),
        };
        key[..4].copy_from_slice(&float32_key(bits).to_be_bytes());
        return (key, 4);
    }
    let mut raw = [0u8; 8];
    let n = bytes.len().min(8);
    raw[..n].copy_from_slice(&bytes[..n]);
    let bits = match endian {
        Endian::Big => u64::from_be_bytes(raw),
        Endian::Little => u64::from_le_bytes(raw),
    };
    key.copy_from_slice(&float64_key(bits).to_be_bytes());
    (key, 8)
}

/// A key whose fields all sit at fixed positions and encode to fixed widths (`CH`, `BI`, `LU`,
/// `FI`, `LI`, `FL`, `LF`), with short records an error: its normalized bytes are each field's
/// bytes transformed where they stand, so they can be written into a caller's buffer with no
/// allocation and no error path, and the first few without the rest (the entry prefix of a
/// sort needs 10). [`KeySpec::fixed_key`] builds one; it writes exactly what
/// [`KeySpec::normalize`] appends.
///
/// ```text
///   record  [....|BI 4|........|FI 8    |...]        SORT FIELDS=(5,4,BI,D,13,8,FI,A)
///   key     [ !BI 4 | FI 8, top bit ^ ]             width 12; prefix(10) stops inside FI
/// ```
#[derive(Clone, Debug)]
pub struct FixedKey {
    /// The fields, most significant first.
    fields: Vec<FixedField>,
    width: usize,
    /// The leading `Masked` fields' bytes, a word at a time, and how many key bytes they are.
    pieces: Vec<MaskedPiece>,
    fast_width: usize,
}

/// One field of a [`FixedKey`]: offset, length, encoded width, and how it is written.
#[derive(Clone, Copy, Debug)]
struct FixedField {
    offset: usize,
    len: usize,
    enc: usize,
    how: Encode,
}

/// How a [`FixedField`]'s bytes become key bytes.
#[derive(Clone, Copy, Debug)]
enum Encode {
    /// `CH`, `BI`, big-endian `FI`: each byte XORed with `rest` (0xFF when descending), the
    /// first with `first` (which also flips `FI`'s sign bit), a word at a time.
    Masked { first: u8, rest: u8 },
    /// Any other fixed-width encoding ([`write_fixed`]), complemented when descending.
    Other(FieldType, bool),
}

impl KeySpec {
    /// The allocation-free form of this key, if every field is fixed-position and fixed-width
    /// and short records are errors or padded (see [`FixedKey`]: a record too short for it is
    /// left to [`KeySpec::normalize`], which pads).
    pub fn fixed_key(&self) -> Option<FixedKey> {
        if self.short_fields == ShortFields::SortFirst {
            return None;
        }
        let mut fields = Vec::with_capacity(self.fields.len());
        let mut width = 0;
        for f in &self.fields {
            let FieldLoc::Bytes { offset, len } = f.loc else {
                return None;
            };
            let enc = match f.kind {
                FieldType::Char
                | FieldType::Unsigned(_)
                | FieldType::Signed(_)
                | FieldType::Float(_)
                | FieldType::AltSeq(_) => fixed_width(f.kind, len),
                _ => return None,
            };
            let rest = if f.descending { 0xFF } else { 0 };
            let how = match straight(f.kind) {
                Some(first) => Encode::Masked { first: first ^ rest, rest },
                None => Encode::Other(f.kind, f.descending),
            };
            fields.push(FixedField { offset, len, enc, how });
            width += enc;
        }
        let (mut pieces, mut fast_width) = (Vec::new(), 0);
        for f in &fields {
            let Encode::Masked { first, rest } = f.how else { break };
            MaskedPiece::split(f.offset, f.len, fast_width, first, rest, &mut pieces);
            fast_width += f.len;
        }
        Some(FixedKey { fields, width, pieces, fast_width })
    }
}

impl FixedKey {
    /// Bytes of the whole normalized key.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The shortest record every field of the key lies in: where its last field ends.
    pub fn min_record_len(&self) -> usize {
        self.fields.iter().map(|f| f.offset + f.len).max().unwrap_or(0)
    }

    /// [`FixedKey::write`] into an array: with at most 16 bytes (the entry prefix) from the
    /// leading text and big-endian binary fields, a word a field piece ([`gather_masked`]),
    /// in a register: 22 ns a prefix field by field, 11-15 ns so (`cargo bench -p
    /// oxsort-format --bench prefix -- fixed_prefix`, 2026-12-02).
    #[inline(always)]
    pub fn write_array<const N: usize>(&self, record: &[u8]) -> Option<[u8; N]> {
        let mut out = [0u8; N];
        if N <= 16 && (N <= self.fast_width || self.fast_width == self.width) {
            let lane = gather_masked(&self.pieces, record, N)?;
            out.copy_from_slice(&lane.to_le_bytes()[..N]);
        } else {
            self.write(record, &mut out)?;
        }
        Some(out)
    }

    /// Writes the first `out.len()` bytes of the normalized key of `record` into `out` (zeros
    /// past the key's end). `None` if `record` is too short for a field it needed; `out` is
    /// then unspecified (use [`KeySpec::normalize`] for the error).
    #[inline]
    pub fn write(&self, record: &[u8], out: &mut [u8]) -> Option<()> {
        let mut pos = 0;
        for f in &self.fields {
            if pos == out.len() {
                break;
            }
            let bytes = record.get(f.offset..f.offset + f.len)?;
            let take = f.enc.min(out.len() - pos);
            let dst = &mut out[pos..pos + take];
            match f.how {
                Encode::Masked { first, rest } => copy_xor(bytes, dst, first, rest),
                Encode::Other(kind, descending) => {
                    write_fixed(kind, bytes, dst);
                    if descending {
                        complement(dst);
                    }
                }
            }
            pos += take;
        }
        out[pos..].fill(0);
        Some(())
    }
}

//! DFSORT `SUM FIELDS=(p,m,f,...)`: within each group of records with equal keys, the fields
//! of every record are added into the first record of the group, and the others are dropped.
//!
//! ```text
//!  sorted:   k1 | 5    k1 | 7    k1 | 9    k2 | 1
//!  written:  k1 | 21                       k2 | 1
//! ```
//!
//! Formats: `BI` (unsigned binary, 2, 4 or 8 bytes), `FI` (signed binary, 2, 4 or 8 bytes), `PD`
//! (packed decimal, 1 to 16 bytes), `ZD` (zoned decimal, 1 to 31 bytes). A sum that does not fit
//! its field is an overflow: as DFSORT does, the two records involved stay unsummed (the sum so
//! far is written, and the record that overflowed starts a new sum) and the overflows are
//! counted. Packed results carry sign C or D; zoned results keep the first record's zones
//! (`F`-zoned digits sign C or D, ASCII digits sign `3` or `7`). Invalid decimal data is an
//! error naming the field.

use crate::decimal;
use crate::error::KeyError;

/// The format of a summed field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SumKind {
    /// `BI`: unsigned big-endian binary.
    Bi,
    /// `FI`: signed big-endian binary (two's complement).
    Fi,
    /// `PD`: packed decimal.
    Pd,
    /// `ZD`: zoned decimal.
    Zd,
}

impl SumKind {
    /// Parses `BI FI PD ZD`.
    pub fn from_dfsort(name: &str) -> Option<SumKind> {
        Some(match name {
            "BI" => SumKind::Bi,
            "FI" => SumKind::Fi,
            "PD" => SumKind::Pd,
            "ZD" => SumKind::Zd,
            _ => return None,
        })
    }

    /// The lengths DFSORT allows, in words, or `Ok` for `len`.
    pub fn allowed_lengths(self, len: usize) -> Result<(), &'static str> {
        let ok = match self {
            SumKind::Bi | SumKind::Fi => matches!(len, 2 | 4 | 8),
            SumKind::Pd => (1..=16).contains(&len),
            SumKind::Zd => (1..=31).contains(&len),
        };
        if ok {
            Ok(())
        } else {
            Err(match self {
                SumKind::Bi | SumKind::Fi => "2, 4 or 8",
                SumKind::Pd => "1 to 16",
                SumKind::Zd => "1 to 31",
            })
        }
    }

    /// `BI`, `FI`, `PD` or `ZD`.
    pub fn name(self) -> &'static str {
        match self {
            SumKind::Bi => "BI",
            SumKind::Fi => "FI",
            SumKind::Pd => "PD",
            SumKind::Zd => "ZD",
        }
    }
}

/// One summed field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SumField {
    /// 0-based offset.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
    /// Format.
    pub kind: SumKind,
}

/// What adding a record into a group's sum did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// The record's fields were added into the sum.
    Summed,
    /// A field would overflow: nothing changed.
    Overflow,
}

/// Adds the fields of `rec` into `acc` (both whole records of the same layout), all fields or
/// none. `scratch` is room for the new values. Errors name the field (1-based index) and the
/// byte of invalid decimal data.
pub fn add_into(
    fields: &[SumField],
    acc: &mut [u8],
    rec: &[u8],
    scratch: &mut Vec<i128>,
) -> Result<Added, KeyError> {
    scratch.clear();
    for (i, f) in fields.iter().enumerate() {
        let a = value(f, &acc[f.offset..f.offset + f.len], i + 1)?;
        let b = value(f, &rec[f.offset..f.offset + f.len], i + 1)?;
        let s = a + b;
        if !fits(f, s) {
            return Ok(Added::Overflow);
        }
        scratch.push(s);
    }
    for (f, &s) in fields.iter().zip(scratch.iter()) {
        store(f, &mut acc[f.offset..f.offset + f.len], s);
    }
    Ok(Added::Summed)
}

/// Checks that every field of `rec` holds valid data (for the record that starts a group).
pub fn check(fields: &[SumField], rec: &[u8]) -> Result<(), KeyError> {
    for (i, f) in fields.iter().enumerate() {
        value(f, &rec[f.offset..f.offset + f.len], i + 1)?;
    }
    Ok(())
}

fn value(f: &SumField, b: &[u8], index: usize) -> Result<i128, KeyError> {
    let position = f.offset + 1;
    Ok(match f.kind {
        SumKind::Bi => b.iter().fold(0i128, |v, &x| v << 8 | x as i128),
        SumKind::Fi => {
            let u = b.iter().fold(0i128, |v, &x| v << 8 | x as i128);
            let bits = 8 * b.len() as u32;
            if u >> (bits - 1) == 1 {
                u - (1i128 << bits)
            } else {
                u
            }
        }
        SumKind::Pd => {
            let negative = decimal::packed_sign(b, index, position)?;
            let v = decimal::packed_digits(b).fold(0i128, |v, d| v * 10 + d as i128);
            if negative {
                -v
            } else {
                v
            }
        }
        SumKind::Zd => {
            let (negative, last) = decimal::zoned_sign(b, index, position)?;
            let v = b[..b.len() - 1].iter().fold(0i128, |v, &d| v * 10 + (d & 0x0F) as i128);
            let v = v * 10 + last as i128;
            if negative {
                -v
            } else {
                v
            }
        }
    })
}

fn fits(f: &SumField, s: i128) -> bool {
    let bits = 8 * f.len as u32;
    match f.kind {
        SumKind::Bi => s >= 0 && s < (1i128 << bits),
        SumKind::Fi => s >= -(1i128 << (bits - 1)) && s < (1i128 << (bits - 1)),
        SumKind::Pd => s.unsigned_abs() < 10u128.pow(2 * f.len as u32 - 1),
        SumKind::Zd => s.unsigned_abs() < 10u128.pow(f.len as u32),
    }
}

fn store(f: &SumField, out: &mut [u8], s: i128) {
    match f.kind {
        SumKind::Bi | SumKind::Fi => {
            let bytes = s.to_be_bytes();
            out.copy_from_slice(&bytes[16 - f.len..]);
        }
        SumKind::Pd => {
            let mut m = s.unsigned_abs();
            let sign = if s < 0 { 0x0D } else { 0x0C };
            let last = out.len() - 1;
            out[last] = ((m % 10) as u8) << 4 | sign;
            m /= 10;
            for b in out[..last].iter_mut().rev() {
                let lo = (m % 10) as u8;
                m /= 10;
                let hi = (m % 10) as u8;
                m /= 10;
                *b = hi << 4 | lo;
            }
        }
        SumKind::Zd => {
            // The zones of the record summed into: ASCII digits (zone 3) or EBCDIC (zone F).
            let ascii = out[0] >> 4 == 0x3 || (out.len() == 1 && matches!(out[0] >> 4, 0x3 | 0x7));
            let zone = if ascii { 0x30 } else { 0xF0 };
            let mut m = s.unsigned_abs();
            for b in out.iter_mut().rev() {
                *b = zone | (m % 10) as u8;
                m /= 10;
            }
            let last = out.len() - 1;
            let sign = match (ascii, s < 0) {
                (true, false) => 0x30,
                (true, true) => 0x70,
                (false, false) => 0xC0,
                (false, true) => 0xD0,
            };
            out[last] = sign | (out[last] & 0x0F);
        }
    }
}

/// The output format of a numeric conversion (`p,m,f,TO=g` in BUILD or OVERLAY).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConvTo {
    /// `ZD`: zoned decimal in ASCII digits, a negative sign as zone 7 in the last byte.
    Zd,
    /// `PD`: packed decimal, sign C or D.
    Pd,
    /// `FS`: right-aligned digits, leading blanks, `-` before the first digit if negative.
    Fs,
}

impl ConvTo {
    /// Parses `ZD`, `PD`, `FS` (and `CSF`).
    pub fn from_dfsort(name: &str) -> Option<ConvTo> {
        Some(match name {
            "ZD" => ConvTo::Zd,
            "PD" => ConvTo::Pd,
            "FS" | "CSF" => ConvTo::Fs,
            _ => return None,
        })
    }

    /// DFSORT's output length for a value of up to `digits` digits.
    pub fn default_len(self, digits: usize) -> usize {
        match self {
            ConvTo::Zd => digits,
            ConvTo::Pd => digits / 2 + 1,
            ConvTo::Fs => digits + 1,
        }
    }
}

/// The most digits a field of this format and length holds.
pub fn max_digits(kind: SumKind, len: usize) -> usize {
    match kind {
        SumKind::Bi | SumKind::Fi => ((8 * len) as f64 * std::f64::consts::LOG10_2).ceil() as usize,
        SumKind::Pd => 2 * len - 1,
        SumKind::Zd => len,
    }
}

/// Converts the numeric field `src` of format `from` into `out` as `to`; digits that do not fit
/// are dropped from the left. `index` and `position` name the field in errors.
pub fn convert(
    from: SumKind,
    src: &[u8],
    to: ConvTo,
    out: &mut [u8],
    index: usize,
    position: usize,
) -> Result<(), KeyError> {
    let f = SumField { offset: position - 1, len: src.len(), kind: from };
    let v = value(&f, src, index)?;
    write_converted(v, to, out);
    Ok(())
}

/// Writes `v` into `out` as `to`; digits that do not fit are dropped from the left.
pub(crate) fn write_converted(v: i128, to: ConvTo, out: &mut [u8]) {
    let mut m = v.unsigned_abs();
    match to {
        ConvTo::Zd => {
            for b in out.iter_mut().rev() {
                *b = b'0' | (m % 10) as u8;
                m /= 10;
            }
            if v < 0 {
                let last = out.len() - 1;
                out[last] = 0x70 | (out[last] & 0x0F);
            }
        }
        ConvTo::Pd => store(&SumField { offset: 0, len: out.len(), kind: SumKind::Pd }, out, {
            let cap = 10u128.pow((2 * out.len() - 1) as u32);
            (m % cap) as i128 * if v < 0 { -1 } else { 1 }
        }),
        ConvTo::Fs => {
            out.fill(b' ');
            let mut i = out.len();
            loop {
                i -= 1;
                out[i] = b'0' + (m % 10) as u8;
                m /= 10;
                if m == 0 || i == 0 {
                    break;
                }
            }
            if v < 0 && i > 0 {
                out[i - 1] = b'-';
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(offset: usize, len: usize, kind: SumKind) -> SumField {
        SumField { offset, len, kind }
    }

    #[test]
    fn adds_each_format_and_refuses_overflow() {
        let fields = [f(0, 2, SumKind::Bi), f(2, 2, SumKind::Fi), f(4, 2, SumKind::Pd)];
        let mut acc = [0xFF, 0x00, 0xFF, 0xFE, 0x12, 0x3C];
        let rec = [0x00, 0x10, 0x00, 0x01, 0x99, 0x9D];
        let mut s = Vec::new();
        assert_eq!(add_into(&fields, &mut acc, &rec, &mut s), Ok(Added::Summed));
        // 0xFF00 + 0x10, -2 + 1, 123 - 999.
        assert_eq!(acc, [0xFF, 0x10, 0xFF, 0xFF, 0x87, 0x6D]);
        let big = [0x01, 0x00, 0x00, 0x00, 0x00, 0x0C];
        let before = acc;
        assert_eq!(add_into(&fields, &mut acc, &big, &mut s), Ok(Added::Overflow));
        assert_eq!(acc, before, "an overflow changes nothing");
        let zd = [f(0, 3, SumKind::Zd)];
        let mut acc = *b"12p"; // -120 (ASCII negative zone 7)
        assert_eq!(add_into(&zd, &mut acc, b"125", &mut s), Ok(Added::Summed));
        assert_eq!(&acc, b"005");
    }

    #[test]
    fn conversions_write_each_format_and_drop_high_digits() {
        let mut out = [0u8; 5];
        convert(SumKind::Pd, &[0x12, 0x34, 0x5D], ConvTo::Fs, &mut out[..4], 1, 1).unwrap();
        assert_eq!(&out[..4], b"2345", "no room for the sign or the high digit");
        convert(SumKind::Fi, &[0xFF, 0xF6], ConvTo::Fs, &mut out, 1, 1).unwrap();
        assert_eq!(&out, b"  -10");
        convert(SumKind::Fi, &[0xFF, 0xF6], ConvTo::Zd, &mut out[..3], 1, 1).unwrap();
        assert_eq!(&out[..3], b"01p");
        convert(SumKind::Zd, b"12345", ConvTo::Pd, &mut out[..2], 1, 1).unwrap();
        assert_eq!(&out[..2], &[0x34, 0x5C]);
        assert_eq!(max_digits(SumKind::Bi, 4), 10);
        assert_eq!(ConvTo::Fs.default_len(max_digits(SumKind::Bi, 4)), 11);
        assert!(convert(SumKind::Pd, &[0xA1], ConvTo::Zd, &mut out, 3, 7).is_err());
    }
}

//! DFSORT `SUM FIELDS=(p,m,f,...)`: within each group of records with equal keys, the fields
//! of every record are added into the first record of the group, and the others are dropped.
//!
//! ```text
//!  sorted:   k1 | 5    k1 | 7    k1 | 9    k2 | 1
//!  written:  k1 | 21                       k2 | 1
//! ```
//!
//! Formats: `BI` (unsigned binary, 1 to 8 bytes), `FI` (signed binary, 1 to 8 bytes), `PD`
//! (packed decimal, 1 to 16 bytes), `ZD` (zoned decimal, 1 to 31 bytes), and GCSORT's `CSL` and
//! `CST` (ASCII digits with a separate leading or trailing sign, 2 to 32 bytes) and `CLO` (zoned
//! decimal signed over its first digit, 1 to 31 bytes), and `LF` (a little-endian IEEE float
//! of 4 or 8 bytes, GCSORT's `FL`: added as `f64`, never an overflow unless a 4-byte sum
//! leaves the `f32` range). A sum that does not fit
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
    /// `CSL` (GCSORT's): ASCII digits after a separate leading sign, `+` or `-` (a blank is
    /// `+`), as COBOL's `SIGN LEADING SEPARATE`.
    Csl,
    /// `CST` (GCSORT's): ASCII digits before a separate trailing sign, as COBOL's
    /// `SIGN TRAILING SEPARATE`.
    Cst,
    /// `CLO` (GCSORT's): zoned decimal with its sign over the first digit instead of the last,
    /// as COBOL's `SIGN LEADING`.
    Clo,
    /// `LF`: a little-endian IEEE float of 4 or 8 bytes (GnuCOBOL's COMP-1 or COMP-2, which
    /// GCSORT calls `FL`).
    Lf,
}

impl SumKind {
    /// Parses `BI FI PD ZD`, and GCSORT's `CSL CST`.
    pub fn from_dfsort(name: &str) -> Option<SumKind> {
        Some(match name {
            "BI" => SumKind::Bi,
            "FI" => SumKind::Fi,
            "PD" => SumKind::Pd,
            "ZD" => SumKind::Zd,
            "CSL" => SumKind::Csl,
            "CST" => SumKind::Cst,
            "CLO" => SumKind::Clo,
            "LF" => SumKind::Lf,
            _ => return None,
        })
    }

    /// The lengths allowed, in words, or `Ok` for `len`. `BI` and `FI` take any length up to a
    /// doubleword, as GCSORT does (its test jobs sum 3-byte `BI` fields); DFSORT itself asks for
    /// 2, 4 or 8, and a door does not refuse what another door runs.
    pub fn allowed_lengths(self, len: usize) -> Result<(), &'static str> {
        let ok = match self {
            SumKind::Bi | SumKind::Fi => (1..=8).contains(&len),
            SumKind::Pd => (1..=16).contains(&len),
            SumKind::Zd | SumKind::Clo => (1..=31).contains(&len),
            SumKind::Csl | SumKind::Cst => (2..=32).contains(&len),
            SumKind::Lf => matches!(len, 4 | 8),
        };
        if ok {
            Ok(())
        } else {
            Err(match self {
                SumKind::Bi | SumKind::Fi => "1 to 8",
                SumKind::Pd => "1 to 16",
                SumKind::Zd | SumKind::Clo => "1 to 31",
                SumKind::Csl | SumKind::Cst => "2 to 32",
                SumKind::Lf => "4 or 8",
            })
        }
    }

    /// `BI`, `FI`, `PD`, `ZD`, `CSL`, `CST` or `CLO`.
    pub fn name(self) -> &'static str {
        match self {
            SumKind::Bi => "BI",
            SumKind::Fi => "FI",
            SumKind::Pd => "PD",
            SumKind::Zd => "ZD",
            SumKind::Csl => "CSL",
            SumKind::Cst => "CST",
            SumKind::Clo => "CLO",
            SumKind::Lf => "LF",
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

/// The running sums of one group of equal keys, kept decoded from the group's first record to
/// the last, so that each record's fields are read once and the sums written once:
///
/// ```text
///   record:   start(r1)        add(r2)          add(r3)          store(held = r1's bytes)
///   values:   [v1]  ---------> [v1+v2] -------> [v1+v2+v3] ----> encoded into held's fields
///             (r1 validated)   (all fields or none: an overflow changes nothing)
/// ```
///
/// A group nothing was added into is written as it was read (its fields are not re-encoded).
#[derive(Debug, Clone)]
pub struct GroupSum {
    fields: Vec<Bounded>,
    /// The group's sums, one per field.
    sums: Vec<i128>,
    /// Room for the sums with the next record added.
    next: Vec<i128>,
    /// Whether a record was added since the group started.
    added: bool,
}

/// A field with the range a sum must stay in to fit it.
#[derive(Debug, Clone, Copy)]
struct Bounded {
    field: SumField,
    min: i128,
    max: i128,
}

impl GroupSum {
    /// Sums of `fields`, with no group started.
    pub fn new(fields: &[SumField]) -> GroupSum {
        let fields: Vec<Bounded> = fields
            .iter()
            .map(|&field| {
                let (min, max) = bounds(&field);
                Bounded { field, min, max }
            })
            .collect();
        let n = fields.len();
        GroupSum { fields, sums: vec![0; n], next: vec![0; n], added: false }
    }

    /// Starts a group with the record `rec`: its fields become the sums. Errors name the first
    /// field (1-based index) holding invalid decimal data, and its byte.
    pub fn start(&mut self, rec: &[u8]) -> Result<(), KeyError> {
        for (i, (b, s)) in self.fields.iter().zip(self.sums.iter_mut()).enumerate() {
            let f = &b.field;
            *s = value(f, &rec[f.offset..f.offset + f.len], i + 1).map_err(sum_data)?;
        }
        self.added = false;
        Ok(())
    }

    /// Adds the fields of `rec` into the sums, all fields or none: the first
    /// field whose sum would not fit makes it an [`Added::Overflow`] (the fields after it
    /// are not read), and invalid data in a field read is an error.
    pub fn add(&mut self, rec: &[u8]) -> Result<Added, KeyError> {
        for (i, ((b, &s), n)) in
            self.fields.iter().zip(self.sums.iter()).zip(self.next.iter_mut()).enumerate()
        {
            let f = &b.field;
            let v = value(f, &rec[f.offset..f.offset + f.len], i + 1).map_err(sum_data)?;
            let t = if f.kind == SumKind::Lf {
                let t = float_of(s) + float_of(v);
                if f.len == 4 && t.is_finite() && t.abs() > f32::MAX as f64 {
                    return Ok(Added::Overflow);
                }
                float_sum(t)
            } else {
                let t = s + v;
                if t < b.min || t > b.max {
                    return Ok(Added::Overflow);
                }
                t
            };
            *n = t;
        }
        std::mem::swap(&mut self.sums, &mut self.next);
        self.added = true;
        Ok(Added::Summed)
    }

    /// Writes the sums into `held`, the group's first record as it was read (whose zones a
    /// zoned sum keeps), if anything was added into it; a record alone in its group is left as
    /// it was.
    pub fn store(&self, held: &mut [u8]) {
        if !self.added {
            return;
        }
        for (b, &s) in self.fields.iter().zip(self.sums.iter()) {
            let f = &b.field;
            store(f, &mut held[f.offset..f.offset + f.len], s);
        }
    }
}

/// Invalid decimal data read by a SUM field, named as one (not as a key field).
fn sum_data(e: KeyError) -> KeyError {
    match e {
        KeyError::InvalidPacked { field, position, byte } => {
            KeyError::SumData { field, format: "PD", position, byte }
        }
        KeyError::InvalidZoned { field, position, byte } => {
            KeyError::SumData { field, format: "ZD", position, byte }
        }
        other => other,
    }
}

/// The value of field `f` (its bytes `b`); `index` names it in errors. Fields of the widths
/// SUM allows are read a machine word at a time; data the word-wide checks refuse (invalid
/// data, always) and other widths are read by [`value_by_digit`], which gives the error.
#[inline]
fn value(f: &SumField, b: &[u8], index: usize) -> Result<i128, KeyError> {
    match word_value(f.kind, b) {
        Some(v) => Ok(v),
        None => value_by_digit(f, b, index),
    }
}

/// The value of a field of kind `kind` read a word at a time, or `None` if its width is not
/// one read so or its data is invalid.
#[inline(always)]
fn word_value(kind: SumKind, b: &[u8]) -> Option<i128> {
    match kind {
        SumKind::Bi if b.len() <= 8 => Some(be_u64(b, 0) as i128),
        SumKind::Fi if (1..=8).contains(&b.len()) => {
            // Shift the field's sign bit to the word's, then back with sign extension.
            let unused = 64 - 8 * b.len() as u32;
            Some(((be_u64(b, 0) << unused) as i64 >> unused) as i128)
        }
        SumKind::Pd if (1..=16).contains(&b.len()) => packed_value(b),
        SumKind::Zd if (1..=MAX_ZONED_FAST).contains(&b.len()) => zoned_value(b),
        _ => None,
    }
}

/// The longest zoned field read a word at a time: 31 digits (the most SUM allows) is within
/// four words of eight, and its value within an `i128`.
const MAX_ZONED_FAST: usize = 31;

// Masks of the word-wide decimal checks and conversions, which work on the eight bytes of a
// `u64` (most significant byte first) as lanes: each byte's low nibble; 6 and 16 in each
// byte (a digit check); the low byte of each 16-bit lane, the low 16 bits of each 32-bit lane,
// the low 32 bits (combining lanes pairwise).
const LOW_NIBBLES: u64 = 0x0F0F_0F0F_0F0F_0F0F;
const SIXES: u64 = 0x0606_0606_0606_0606;
const SIXTEENS: u64 = 0x1010_1010_1010_1010;
const LOW_BYTES: u64 = 0x00FF_00FF_00FF_00FF;
const LOW_PAIRS: u64 = 0x0000_FFFF_0000_FFFF;
const LOW_HALF: u64 = 0x0000_0000_FFFF_FFFF;

/// The big-endian number `b` (at most 8 bytes), its missing high bytes `fill`.
#[inline]
fn be_u64(b: &[u8], fill: u8) -> u64 {
    match <[u8; 8]>::try_from(b) {
        Ok(w) => u64::from_be_bytes(w),
        // Shorter: shifted in byte by byte (a copy of a length known only now would be a call),
        // so that `8 - b.len()` bytes of `fill` stay on top.
        Err(_) => b.iter().fold(u64::from_ne_bytes([fill; 8]), |v, &x| v << 8 | x as u64),
    }
}

/// Whether every byte's low nibble in `d` (high nibbles zero) is a digit 0..=9: adding 6
/// carries into bit 4 exactly for 10..=15, and never into the next byte.
#[inline]
fn digits_ok(d: u64) -> bool {
    (d + SIXES) & SIXTEENS == 0
}

/// Eight byte-wide values 0..=99, most significant first, as one number of 16 digits: pairs
/// of bytes, then of 16-bit lanes, then of halves are combined.
#[inline]
fn combine_centuries(v: u64) -> u64 {
    let v = ((v >> 8) & LOW_BYTES) * 100 + (v & LOW_BYTES);
    let v = ((v >> 16) & LOW_PAIRS) * 10_000 + (v & LOW_PAIRS);
    (v >> 32) * 100_000_000 + (v & LOW_HALF)
}

/// Sixteen BCD digits (a nibble each, most significant first) as a number, or `None` if a
/// nibble is not a digit.
#[inline]
fn bcd16(x: u64) -> Option<u64> {
    let hi = (x >> 4) & LOW_NIBBLES;
    let lo = x & LOW_NIBBLES;
    if !digits_ok(hi) || !digits_ok(lo) {
        return None;
    }
    Some(combine_centuries(hi * 10 + lo))
}

/// A packed decimal field of 1 to 16 bytes, or `None` if a nibble is invalid. The last eight
/// bytes hold 15 digits and the sign, the bytes before them up to 16 more digits.
#[inline]
fn packed_value(b: &[u8]) -> Option<i128> {
    const LOW_WORD_DIGITS: u32 = 15;
    let (high, low) = b.split_at(b.len().saturating_sub(8));
    let x = be_u64(low, 0);
    let negative = match x & 0x0F {
        0xC | 0xA | 0xE | 0xF => false,
        0xD | 0xB => true,
        _ => return None,
    };
    let mut v = bcd16(x >> 4)? as i128;
    if !high.is_empty() {
        v += bcd16(be_u64(high, 0))? as i128 * 10i128.pow(LOW_WORD_DIGITS);
    }
    Some(if negative { -v } else { v })
}

/// Up to eight zoned digits (zone `F` or `3`, most significant first) as a number, or `None`
/// if a byte is not such a digit.
#[inline]
fn zoned8(b: &[u8]) -> Option<u64> {
    // Missing high digits read as ASCII zeros.
    let x = be_u64(b, b'0');
    // Zones 3 and F are the zones with their two low bits set and their two high bits equal.
    let zones_low = x & (SIXTEENS * 3) == SIXTEENS * 3;
    let zones_high = ((x >> 1) ^ x) & (SIXTEENS * 4) == 0;
    let d = x & LOW_NIBBLES;
    if !(zones_low && zones_high && digits_ok(d)) {
        return None;
    }
    // Bytes 0..=9 into pairs 0..=99, then as BCD pairs would be.
    Some(combine_centuries_from_digits(d))
}

/// Eight byte-wide digits 0..=9, most significant first, as one number of 8 digits.
#[inline]
fn combine_centuries_from_digits(d: u64) -> u64 {
    let v = ((d >> 8) & LOW_BYTES) * 10 + (d & LOW_BYTES);
    let v = ((v >> 16) & LOW_PAIRS) * 100 + (v & LOW_PAIRS);
    (v >> 32) * 10_000 + (v & LOW_HALF)
}

/// A zoned decimal field of 1 to [`MAX_ZONED_FAST`] bytes, or `None` if a byte is invalid.
#[inline]
fn zoned_value(b: &[u8]) -> Option<i128> {
    let (digits, last) = b.split_at(b.len() - 1);
    let (negative, units) = decimal::zoned_last(last[0])?;
    let lead = match digits.len() % 8 {
        0 => 8.min(digits.len()),
        n => n,
    };
    let mut v = zoned8(&digits[..lead])? as i128;
    for chunk in digits[lead..].chunks_exact(8) {
        v = v * 100_000_000 + zoned8(chunk)? as i128;
    }
    let v = v * 10 + units as i128;
    Some(if negative { -v } else { v })
}

/// A float sum kept among the integer sums: its `f64` bits.
fn float_sum(v: f64) -> i128 {
    v.to_bits() as i128
}

/// The `f64` a [`float_sum`] holds.
fn float_of(s: i128) -> f64 {
    f64::from_bits(s as u64)
}

/// The value of field `f` read digit by digit, validating each byte; any width.
#[cold]
#[inline(never)]
fn value_by_digit(f: &SumField, b: &[u8], index: usize) -> Result<i128, KeyError> {
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
        SumKind::Csl | SumKind::Cst => separate_sign_value(f, b, index)?,
        SumKind::Lf => float_sum(match <[u8; 4]>::try_from(b) {
            Ok(w) => f32::from_le_bytes(w) as f64,
            Err(_) => b.try_into().map_or(0.0, f64::from_le_bytes),
        }),
        SumKind::Clo => {
            // The first byte signed as a zoned field's last; the others plain zoned digits.
            let bad = |i: usize| KeyError::SumData {
                field: index,
                format: "CLO",
                position: position + i,
                byte: b[i],
            };
            let (negative, first) = decimal::zoned_last(b[0]).ok_or_else(|| bad(0))?;
            let mut v = first as i128;
            for (i, &d) in b.iter().enumerate().skip(1) {
                if !matches!(d >> 4, 0xF | 0x3) || d & 0x0F > 9 {
                    return Err(bad(i));
                }
                v = v * 10 + (d & 0x0F) as i128;
            }
            if negative {
                -v
            } else {
                v
            }
        }
    })
}

/// The value of a `CSL` or `CST` field: a sign byte (`+`, `-` or blank) before or after
/// ASCII digits.
fn separate_sign_value(f: &SumField, b: &[u8], index: usize) -> Result<i128, KeyError> {
    let (sign_at, digits_at) = match f.kind {
        SumKind::Csl => (0, 1..b.len()),
        _ => (b.len() - 1, 0..b.len() - 1),
    };
    let bad = |i: usize| KeyError::SumData {
        field: index,
        format: f.kind.name(),
        position: f.offset + 1 + i,
        byte: b[i],
    };
    let negative = match b[sign_at] {
        b'-' => true,
        b'+' | b' ' => false,
        _ => return Err(bad(sign_at)),
    };
    let mut v = 0i128;
    for i in digits_at {
        if !b[i].is_ascii_digit() {
            return Err(bad(i));
        }
        v = v * 10 + (b[i] - b'0') as i128;
    }
    Ok(if negative { -v } else { v })
}

/// The least and greatest sums field `f` holds.
fn bounds(f: &SumField) -> (i128, i128) {
    let bits = 8 * f.len as u32;
    match f.kind {
        SumKind::Bi => (0, (1i128 << bits) - 1),
        SumKind::Fi => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
        SumKind::Pd => {
            let max = 10i128.pow(2 * f.len as u32 - 1) - 1;
            (-max, max)
        }
        SumKind::Zd | SumKind::Clo => {
            let max = 10i128.pow(f.len as u32) - 1;
            (-max, max)
        }
        SumKind::Csl | SumKind::Cst => {
            let max = 10i128.pow(f.len as u32 - 1) - 1;
            (-max, max)
        }
        // Not used: a float sum is checked against the `f32` range only.
        SumKind::Lf => (i128::MIN, i128::MAX),
    }
}

/// The decimal digits of a magnitude, least significant first (then zeros for ever), taken
/// in machine-word arithmetic once the rest fits a word.
struct Digits(u128);

impl Digits {
    #[inline]
    fn next_digit(&mut self) -> u8 {
        match u64::try_from(self.0) {
            Ok(m) => {
                self.0 = (m / 10) as u128;
                (m % 10) as u8
            }
            Err(_) => {
                let d = self.0 % 10;
                self.0 /= 10;
                d as u8
            }
        }
    }
}

/// The packed byte of each number 0..=99: its tens digit over its units digit.
const BCD_PAIRS: [u8; 100] = {
    let mut t = [0u8; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = (((i / 10) << 4) | (i % 10)) as u8;
        i += 1;
    }
    t
};

/// Writes the sum `s` into the bytes `out` of field `f` (which fits it; the digits of a
/// decimal beyond the field's are dropped).
fn store(f: &SumField, out: &mut [u8], s: i128) {
    match f.kind {
        SumKind::Lf if f.len == 4 => out.copy_from_slice(&(float_of(s) as f32).to_le_bytes()),
        SumKind::Lf => out.copy_from_slice(&float_of(s).to_le_bytes()),
        SumKind::Bi | SumKind::Fi => {
            let bytes = s.to_be_bytes();
            out.copy_from_slice(&bytes[16 - f.len..]);
        }
        SumKind::Pd => {
            let sign = if s < 0 { 0x0D } else { 0x0C };
            let last = out.len() - 1;
            match u64::try_from(s.unsigned_abs()) {
                // Two digits a byte, each pair divided off at once.
                Ok(m) => {
                    out[last] = ((m % 10) as u8) << 4 | sign;
                    let mut m = m / 10;
                    for b in out[..last].iter_mut().rev() {
                        *b = BCD_PAIRS[(m % 100) as usize];
                        m /= 100;
                    }
                }
                Err(_) => {
                    let mut m = Digits(s.unsigned_abs());
                    out[last] = m.next_digit() << 4 | sign;
                    for b in out[..last].iter_mut().rev() {
                        let lo = m.next_digit();
                        let hi = m.next_digit();
                        *b = hi << 4 | lo;
                    }
                }
            }
        }
        SumKind::Zd => {
            // The zones of the record summed into: ASCII digits (zone 3) or EBCDIC (zone F).
            let ascii = out[0] >> 4 == 0x3 || (out.len() == 1 && matches!(out[0] >> 4, 0x3 | 0x7));
            let zone = if ascii { 0x30 } else { 0xF0 };
            let mut m = Digits(s.unsigned_abs());
            for b in out.iter_mut().rev() {
                *b = zone | m.next_digit();
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
        SumKind::Csl | SumKind::Cst => {
            let (sign_at, digits) = match f.kind {
                SumKind::Csl => (0, 1..out.len()),
                _ => (out.len() - 1, 0..out.len() - 1),
            };
            let mut m = Digits(s.unsigned_abs());
            for b in out[digits].iter_mut().rev() {
                *b = b'0' + m.next_digit();
            }
            out[sign_at] = if s < 0 { b'-' } else { b'+' };
        }
        SumKind::Clo => {
            // ASCII digits; the first one's zone 7 when negative (GnuCOBOL's ASCII sign).
            let mut m = Digits(s.unsigned_abs());
            for b in out.iter_mut().rev() {
                *b = b'0' + m.next_digit();
            }
            if s < 0 {
                out[0] = 0x70 | (out[0] & 0x0F);
            }
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
        SumKind::Zd | SumKind::Clo => len,
        SumKind::Csl | SumKind::Cst => len - 1,
        // The significant digits of an `f64` (a float converts to no decimal format).
        SumKind::Lf => 17,
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
    use proptest::prelude::*;

    fn f(offset: usize, len: usize, kind: SumKind) -> SumField {
        SumField { offset, len, kind }
    }

    #[test]
    fn separate_signs_add_and_refuse_overflow_and_bad_data() {
        // CSL in bytes 1-4 (+ and 3 digits), CST in bytes 5-7 (2 digits and the sign).
        let fields = [f(0, 4, SumKind::Csl), f(4, 3, SumKind::Cst)];
        let mut acc = *b"+12007-";
        let mut sums = GroupSum::new(&fields);
        sums.start(&acc).unwrap();
        assert_eq!(sums.add(b"-13015+"), Ok(Added::Summed));
        assert_eq!(sums.add(b" 00101 "), Ok(Added::Summed));
        sums.store(&mut acc);
        // 120 - 130 + 1 = -9; -7 + 15 + 1 = 9.
        assert_eq!(&acc, b"-00909+");
        // 9 + 91 does not fit the CST field's 2 digits.
        assert_eq!(sums.add(b"+00091+"), Ok(Added::Overflow));
        let e = sums.add(b"*00001+").unwrap_err().to_string();
        assert_eq!(e, "SUM field 1 (CSL): invalid sign and digits data at byte 1 (0x2A)");
        assert!(sums.add(b"+0a001+").is_err());
        // CLO: the sign over the first digit (ASCII zone 7 negative, or an overpunch letter).
        let fields = [f(0, 3, SumKind::Clo)];
        let mut acc = *b"012";
        let mut sums = GroupSum::new(&fields);
        sums.start(&acc).unwrap();
        assert_eq!(sums.add(&[0x70 | 1, b'0', b'5']), Ok(Added::Summed)); // -105
        assert_eq!(sums.add(b"}01"), Ok(Added::Summed)); // -1
        sums.store(&mut acc);
        // 12 - 105 - 1 = -94.
        assert_eq!(acc, [0x70, b'9', b'4']);
        let e = sums.add(b"0x1").unwrap_err().to_string();
        assert_eq!(e, "SUM field 1 (CLO): invalid zoned decimal data at byte 2 (0x78)");
    }

    #[test]
    fn adds_each_format_and_refuses_overflow() {
        let fields = [f(0, 2, SumKind::Bi), f(2, 2, SumKind::Fi), f(4, 2, SumKind::Pd)];
        let mut acc = [0xFF, 0x00, 0xFF, 0xFE, 0x12, 0x3C];
        let mut sums = GroupSum::new(&fields);
        sums.start(&acc).unwrap();
        let rec = [0x00, 0x10, 0x00, 0x01, 0x99, 0x9D];
        assert_eq!(sums.add(&rec), Ok(Added::Summed));
        sums.store(&mut acc);
        // 0xFF00 + 0x10, -2 + 1, 123 - 999.
        assert_eq!(acc, [0xFF, 0x10, 0xFF, 0xFF, 0x87, 0x6D]);
        let big = [0x01, 0x00, 0x00, 0x00, 0x00, 0x0C];
        assert_eq!(sums.add(&big), Ok(Added::Overflow));
        let before = acc;
        sums.store(&mut acc);
        assert_eq!(acc, before, "an overflow changes nothing");
        let zd = [f(0, 3, SumKind::Zd)];
        let mut acc = *b"12p"; // -120 (ASCII negative zone 7)
        let mut sums = GroupSum::new(&zd);
        sums.start(&acc).unwrap();
        assert_eq!(sums.add(b"125"), Ok(Added::Summed));
        sums.store(&mut acc);
        assert_eq!(&acc, b"005");
        // A record nothing was added into keeps its bytes (sign F, not C).
        let mut alone = [0x12, 0x3F];
        let mut sums = GroupSum::new(&[f(0, 2, SumKind::Pd)]);
        sums.start(&alone).unwrap();
        sums.store(&mut alone);
        assert_eq!(alone, [0x12, 0x3F]);
    }

    /// A nibble that is a digit nineteen times in twenty.
    fn nibble() -> impl Strategy<Value = u8> {
        prop_oneof![19 => 0u8..=9, 1 => 0u8..=15]
    }

    /// A packed field of 1 to 16 bytes: digits mostly, any sign nibble.
    fn packed() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec((nibble(), nibble()), 1..=16).prop_flat_map(|pairs| {
            let sign = prop_oneof![4 => 0xAu8..=0xF, 1 => 0u8..=15];
            (Just(pairs), sign).prop_map(|(pairs, sign)| {
                let mut b: Vec<u8> = pairs.iter().map(|&(h, l)| h << 4 | l).collect();
                let last = b.len() - 1;
                b[last] = b[last] & 0xF0 | sign;
                b
            })
        })
    }

    /// A zoned field of 1 to 31 bytes: digits mostly under zone F or 3, then a last byte of
    /// any zone, or an ASCII overpunch letter.
    fn zoned() -> impl Strategy<Value = Vec<u8>> {
        let zone = prop_oneof![10 => Just(0xFu8), 10 => Just(0x3u8), 1 => 0u8..=15];
        let digit = (zone, nibble()).prop_map(|(z, d)| z << 4 | d);
        let last = prop_oneof![
            3 => (0u8..=15, nibble()).prop_map(|(z, d)| z << 4 | d),
            1 => prop::sample::select(b"{}ABCDEFGHIJKLMNOPQRS@".to_vec()),
        ];
        (prop::collection::vec(digit, 0..=30), last).prop_map(|(mut b, l)| {
            b.push(l);
            b
        })
    }

    proptest! {
        /// The word-wide reads give what the digit-by-digit reads give: the same value, or the
        /// same error (field, byte position, byte).
        #[test]
        fn word_reads_agree_with_digit_reads(
            kind in 0usize..4,
            offset in 0usize..100,
            bin in prop::collection::vec(any::<u8>(), 1..=8),
            pd in packed(),
            zd in zoned(),
        ) {
            let (kind, b) = match kind {
                0 => (SumKind::Bi, bin),
                1 => (SumKind::Fi, bin),
                2 => (SumKind::Pd, pd),
                _ => (SumKind::Zd, zd),
            };
            let field = f(offset, b.len(), kind);
            prop_assert_eq!(value(&field, &b, 3), value_by_digit(&field, &b, 3), "{:02X?}", b);
        }

        /// Packed sums are written as two digit nibbles a byte and a sign C or D, high digits
        /// beyond the field dropped, whatever the width of the magnitude.
        #[test]
        fn packed_sums_are_written_digit_by_digit(
            len in 1usize..=16,
            magnitude in any::<u128>(),
            digits in 0u32..=31,
            negative in any::<bool>(),
        ) {
            // Magnitudes of every length, within a word and beyond.
            let m = magnitude % 10u128.pow(digits);
            let s = if negative { -(m as i128) } else { m as i128 };
            let mut out = vec![0u8; len];
            store(&f(0, len, SumKind::Pd), &mut out, s);
            let text = format!("{m:031}");
            let mut nibbles: Vec<u8> = text.bytes().skip(31 - (2 * len - 1)).map(|d| d - b'0').collect();
            nibbles.push(if s < 0 { 0xD } else { 0xC });
            let want: Vec<u8> = nibbles.chunks(2).map(|p| p[0] << 4 | p[1]).collect();
            prop_assert_eq!(out, want);
        }
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

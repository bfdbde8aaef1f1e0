//! DFSORT `INCLUDE` / `OMIT` conditions and their evaluation on records.
//!
//! ```text
//!  INCLUDE COND=((1,3,CH,EQ,C'ABC',OR,1,3,CH,EQ,C'XYZ'),AND,5,2,ZD,GT,10)
//!
//!               And
//!              /   \
//!            Or     Compare 5,2,ZD GT 10
//!           /  \
//!   Compare     Compare
//! ```
//!
//! How the two sides compare depends on their types:
//! - a `C'...'` or `X'...'` constant compares bytes with any field; a shorter constant is
//!   padded (blanks for `C'...'`, zeros for `X'...'`), a longer one truncated, as DFSORT does;
//! - two `CH`/`BI` fields compare bytes, the shorter padded with blanks;
//! - a numeric field (`BI FI LU LI PD ZD CSF FS UFF SFF`) and a decimal constant or another
//!   numeric field compare by value (packed `+0` equals zoned `-0`);
//! - `FL`/`LF` fields compare by value with decimal constants and other float fields.

use std::cmp::Ordering;

use crate::decimal;
use crate::error::KeyError;
use crate::float::float64_key;
use crate::normalize::{encode_field, float_key_bytes};
use crate::spec::{Endian, FieldType, ShortFields};

/// A comparison operator of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `EQ`
    Eq,
    /// `NE`
    Ne,
    /// `GT`
    Gt,
    /// `GE`
    Ge,
    /// `LT`
    Lt,
    /// `LE`
    Le,
}

impl CompareOp {
    /// Parses `EQ NE GT GE LT LE` (case-insensitive).
    pub fn from_name(name: &str) -> Option<CompareOp> {
        Some(match name.to_ascii_uppercase().as_str() {
            "EQ" => CompareOp::Eq,
            "NE" => CompareOp::Ne,
            "GT" => CompareOp::Gt,
            "GE" => CompareOp::Ge,
            "LT" => CompareOp::Lt,
            "LE" => CompareOp::Le,
            _ => return None,
        })
    }

    fn holds(self, ord: Ordering) -> bool {
        match self {
            CompareOp::Eq => ord == Ordering::Equal,
            CompareOp::Ne => ord != Ordering::Equal,
            CompareOp::Gt => ord == Ordering::Greater,
            CompareOp::Ge => ord != Ordering::Less,
            CompareOp::Lt => ord == Ordering::Less,
            CompareOp::Le => ord != Ordering::Greater,
        }
    }
}

/// A fixed-position field in a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldRef {
    /// 0-based offset.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
    /// How to read it.
    pub kind: FieldType,
}

/// The right-hand side of a comparison.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operand {
    /// Another field of the same record.
    Field(FieldRef),
    /// `C'...'` constant: compared as bytes, padded with blanks.
    Chars(Vec<u8>),
    /// `X'...'` constant: compared as bytes, padded with zeros.
    Hex(Vec<u8>),
    /// `SS`: a substring search with `EQ` (found) or `NE` (not found). The field (a
    /// [`FieldType::Char`] one) is looked for in the constant when it is shorter, else the
    /// constant in the field.
    Substring(Vec<u8>),
    /// A decimal constant such as `+100` or `-5` (build it with [`Operand::number`]).
    Number {
        /// `true` for a leading `-`.
        negative: bool,
        /// The digits as written (ASCII).
        digits: String,
        /// The constant encoded once as the field it is compared with is encoded for each
        /// record: the 8-byte float key for `FL`/`LF` fields, canonical decimal otherwise.
        key: Vec<u8>,
    },
}

impl Operand {
    /// The decimal constant `[-]digits` (ASCII digits), to compare with a field of `kind`.
    pub fn number(negative: bool, digits: String, kind: FieldType) -> Operand {
        let mut key = Vec::new();
        if let FieldType::Float(_) = kind {
            let value: f64 =
                format!("{}{digits}", if negative { "-" } else { "" }).parse().unwrap_or(0.0);
            key.extend_from_slice(&float64_key(value.to_bits()).to_be_bytes());
        } else {
            let d = digits.bytes().map(|d| d - b'0');
            decimal::encode(&mut key, negative, d, std::iter::empty());
        }
        Operand::Number { negative, digits, key }
    }
}

/// A condition tree.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Condition {
    /// `COND=ALL`: every record.
    All,
    /// `COND=NONE`: no record.
    Nothing,
    /// One comparison.
    Compare {
        /// 1-based number of this comparison in the statement, for error messages.
        index: usize,
        /// The field on the left.
        left: FieldRef,
        /// The operator.
        op: CompareOp,
        /// The right-hand side.
        right: Operand,
    },
    /// Both hold.
    And(Box<Condition>, Box<Condition>),
    /// Either holds.
    Or(Box<Condition>, Box<Condition>),
}

/// A parsed `INCLUDE` or `OMIT` statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Filter {
    /// `true` for `OMIT` (records where the condition holds are dropped).
    pub omit: bool,
    /// The condition.
    pub condition: Condition,
    /// Records too short for a field of the condition, as DFSORT treats them: an error
    /// (`NOVLSCMP`, `NOVLSHRT`, the default); the condition is false (`OPTION VLSHRT`: INCLUDE
    /// drops the record, OMIT keeps it); or the missing bytes are binary zeros (`OPTION
    /// VLSCMP`).
    pub short_fields: ShortFields,
}

impl Filter {
    /// Whether `record` (without its terminator) passes the filter, i.e. is kept: the
    /// condition holds for `INCLUDE`, does not hold for `OMIT`.
    ///
    /// A record too short for any field of the condition is treated as a whole, whichever
    /// comparisons would decide it (DFSORT's rule): see [`Filter::short_fields`].
    pub fn matches(&self, record: &[u8]) -> Result<bool, KeyError> {
        let end = max_end(&self.condition);
        if record.len() >= end {
            let holds = eval(&self.condition, record, ShortFields::Error)?;
            return Ok(holds != self.omit);
        }
        let holds = match self.short_fields {
            ShortFields::Error => {
                // The first short field in the statement's order names the error.
                first_short(&self.condition, record)?;
                eval(&self.condition, record, ShortFields::Error)?
            }
            ShortFields::SortFirst => false,
            ShortFields::PadZeros => {
                let mut padded = record.to_vec();
                padded.resize(end, 0);
                eval(&self.condition, &padded, ShortFields::Error)?
            }
        };
        Ok(holds != self.omit)
    }
}

/// Where the condition's last field ends (0-based, exclusive): records at least this long
/// hold every field.
fn max_end(cond: &Condition) -> usize {
    match cond {
        Condition::All | Condition::Nothing => 0,
        Condition::And(a, b) | Condition::Or(a, b) => max_end(a).max(max_end(b)),
        Condition::Compare { left, right, .. } => {
            let r = match right {
                Operand::Field(f) => f.offset + f.len,
                _ => 0,
            };
            (left.offset + left.len).max(r)
        }
    }
}

/// The error of the first field of the condition (in the statement's order) that ends past
/// `record`.
fn first_short(cond: &Condition, record: &[u8]) -> Result<(), KeyError> {
    match cond {
        Condition::All | Condition::Nothing => Ok(()),
        Condition::And(a, b) | Condition::Or(a, b) => {
            first_short(a, record)?;
            first_short(b, record)
        }
        Condition::Compare { index, left, right, .. } => {
            field_bytes(record, left, *index, ShortFields::Error)?;
            if let Operand::Field(f) = right {
                field_bytes(record, f, *index, ShortFields::Error)?;
            }
            Ok(())
        }
    }
}

fn eval(cond: &Condition, record: &[u8], short: ShortFields) -> Result<bool, KeyError> {
    match cond {
        Condition::All => Ok(true),
        Condition::Nothing => Ok(false),
        Condition::And(a, b) => Ok(eval(a, record, short)? && eval(b, record, short)?),
        Condition::Or(a, b) => Ok(eval(a, record, short)? || eval(b, record, short)?),
        Condition::Compare { index, left, op, right } => {
            let Some(lhs) = field_bytes(record, left, *index, short)? else { return Ok(false) };
            let ord = match right {
                Operand::Chars(c) => cmp_padded(lhs, c, b' '),
                Operand::Hex(c) => cmp_padded(lhs, c, 0),
                Operand::Substring(c) => {
                    let found = if lhs.len() < c.len() {
                        c.windows(lhs.len()).any(|w| w == lhs)
                    } else {
                        lhs.windows(c.len()).any(|w| w == c.as_slice())
                    };
                    if found {
                        Ordering::Equal
                    } else {
                        Ordering::Less
                    }
                }
                Operand::Number { key, .. } => {
                    if let FieldType::Float(endian) = left.kind {
                        float_value(lhs, endian).to_be_bytes().as_slice().cmp(key)
                    } else {
                        let mut l = Vec::new();
                        numeric(left.kind, lhs, *index, left.offset, &mut l)?;
                        l.cmp(key)
                    }
                }
                Operand::Field(f) => {
                    let Some(rhs) = field_bytes(record, f, *index, short)? else {
                        return Ok(false);
                    };
                    compare_fields(left, lhs, f, rhs, *index)?
                }
            };
            Ok(op.holds(ord))
        }
    }
}

/// Whether fields of these two types can be compared with each other (`p1,m1,f1,EQ,p2,m2,f2`).
pub fn field_pair_comparable(a: FieldType, b: FieldType) -> bool {
    let bytes = |t| matches!(t, FieldType::Char | FieldType::Unsigned(Endian::Big));
    let float = |t| matches!(t, FieldType::Float(_));
    if float(a) || float(b) {
        return float(a) && float(b);
    }
    if a == FieldType::Char || b == FieldType::Char {
        return bytes(a) && bytes(b);
    }
    true
}

fn compare_fields(
    l: &FieldRef,
    lhs: &[u8],
    r: &FieldRef,
    rhs: &[u8],
    index: usize,
) -> Result<Ordering, KeyError> {
    let bytes = |t| matches!(t, FieldType::Char | FieldType::Unsigned(Endian::Big));
    match (l.kind, r.kind) {
        (FieldType::Float(le), FieldType::Float(re)) => {
            Ok(float_value(lhs, le).cmp(&float_value(rhs, re)))
        }
        (a, b) if bytes(a) && bytes(b) && (a == FieldType::Char || b == FieldType::Char) => {
            Ok(cmp_both_padded(lhs, rhs))
        }
        (a, b) => {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            numeric(a, lhs, index, l.offset, &mut x)?;
            numeric(b, rhs, index, r.offset, &mut y)?;
            Ok(x.cmp(&y))
        }
    }
}

fn field_bytes<'r>(
    record: &'r [u8],
    f: &FieldRef,
    index: usize,
    short: ShortFields,
) -> Result<Option<&'r [u8]>, KeyError> {
    match record.get(f.offset..f.offset + f.len) {
        Some(b) => Ok(Some(b)),
        None => match short {
            ShortFields::SortFirst | ShortFields::PadZeros => Ok(None),
            ShortFields::Error => Err(KeyError::ShortRecord {
                field: index,
                start: f.offset + 1,
                end: f.offset + f.len,
                len: record.len(),
            }),
        },
    }
}

/// The canonical decimal form of a numeric field's value.
fn numeric(
    kind: FieldType,
    bytes: &[u8],
    index: usize,
    offset: usize,
    out: &mut Vec<u8>,
) -> Result<(), KeyError> {
    let signed = |bytes: &[u8]| -> (bool, u128) {
        // 1 to 8 bytes, big-endian.
        let mut v: u128 = 0;
        for &b in bytes {
            v = v << 8 | b as u128;
        }
        let bits = 8 * bytes.len() as u32;
        if v >> (bits - 1) == 1 {
            (true, (1u128 << bits) - v)
        } else {
            (false, v)
        }
    };
    match kind {
        FieldType::Unsigned(Endian::Big) => unsigned_digits(bytes.to_vec(), out),
        FieldType::Unsigned(Endian::Little) => {
            unsigned_digits(bytes.iter().rev().copied().collect(), out)
        }
        FieldType::Signed(endian) => {
            let be: Vec<u8> = match endian {
                Endian::Big => bytes.to_vec(),
                Endian::Little => bytes.iter().rev().copied().collect(),
            };
            let (negative, magnitude) = signed(&be);
            decimal::encode_u128(out, negative, magnitude);
        }
        _ => return encode_field(kind, bytes, false, index, offset + 1, out, usize::MAX),
    }
    Ok(())
}

/// The canonical decimal form of an unsigned big-endian integer of any length (repeated
/// division by ten; filters only, so speed does not matter).
fn unsigned_digits(mut be: Vec<u8>, out: &mut Vec<u8>) {
    let mut digits = Vec::new();
    while be.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in &mut be {
            let cur = rem << 8 | *b as u32;
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(rem as u8);
    }
    digits.reverse();
    decimal::encode(out, false, digits.into_iter(), std::iter::empty());
}

/// A float field's order key as binary64 (binary32 values widened exactly), so fields of both
/// widths compare with each other and with constants.
fn float_value(bytes: &[u8], endian: Endian) -> u64 {
    if let Ok(raw) = <[u8; 4]>::try_from(bytes) {
        let bits = match endian {
            Endian::Big => u32::from_be_bytes(raw),
            Endian::Little => u32::from_le_bytes(raw),
        };
        return float64_key((f32::from_bits(bits) as f64).to_bits());
    }
    u64::from_be_bytes(float_key_bytes(bytes, endian).0)
}

fn cmp_padded(field: &[u8], constant: &[u8], pad: u8) -> Ordering {
    let padded = constant.iter().copied().chain(std::iter::repeat(pad));
    field.iter().copied().cmp(padded.take(field.len()))
}

fn cmp_both_padded(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().max(b.len());
    let pa = a.iter().copied().chain(std::iter::repeat(b' ')).take(n);
    let pb = b.iter().copied().chain(std::iter::repeat(b' ')).take(n);
    pa.cmp(pb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float32_widening_keeps_order() {
        let f = |x: f32| float_value(&x.to_be_bytes(), Endian::Big);
        assert!(f(-1.5) < f(-0.0));
        assert_eq!(f(-0.0), f(0.0));
        assert_eq!(f(2.5), float64_key(2.5f64.to_bits()));
        assert!(f(f32::INFINITY) < f(f32::NAN));
    }

    #[test]
    fn signed_binary_values() {
        let mut a = Vec::new();
        numeric(FieldType::Signed(Endian::Big), &[0xFF, 0xFE], 1, 0, &mut a).unwrap();
        let mut b = Vec::new();
        decimal::encode_u128(&mut b, true, 2);
        assert_eq!(a, b);
    }
}

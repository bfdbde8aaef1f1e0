//! DFSORT numeric edits in `BUILD`/`OVERLAY`: `p,m,f,EDIT=(pattern)[,SIGNS=(a,b,c,d)]` and the
//! pre-defined masks `p,m,f,M0` to `M26`, each with an optional `,LENGTH=n`.
//!
//! ```text
//!  31,7,PD,EDIT=(SI,III,IIT.TT),SIGNS=(,-)     value -0001234567  ->  "   -12,345.67"
//!
//!  pattern   S   I  ,  I  I  I  ,  I  I  T  .  T  T
//!  digits        0     0  1  2     3  4  5     6  7      (the value's last 9 digits)
//!  printed       _  _  _  1  2  ,  3  4  5  .  6  7      (I: blank while no digit yet)
//!  sign      the leading sign goes just left of the first printed character
//! ```
//!
//! Pattern characters, as DFSORT defines them:
//! - `I`: a digit, printed as a blank while every digit before it was 0 (a leading zero);
//! - `T`: a digit, always printed; the digits from it on are significant;
//! - `S` as the first character: the leading sign, `a` of `SIGNS=` for a value of 0 or more,
//!   `b` for a negative one, placed just left of the first printed character (a floating sign);
//!   `S` as the last character: the trailing sign, `c` or `d`;
//! - anything else is printed as it is once a digit has been printed, as a blank before that.
//!
//! The value keeps its last `k` digits, `k` the number of `I` and `T` in the pattern. A sign
//! `SIGNS=` leaves out is a blank; an `EDIT=` pattern without `SIGNS=` has
//! `SIGNS=( ,-, ,-)`. The masks are patterns chosen by the number of digits `d` the field can
//! hold ([`NumFormat::digits`]): for `M12` and `d = 7`, `SI,III,IIT` (DFSORT's table shows each
//! mask for 15 digits; fewer digits keep the rightmost ones, more repeat the groups of three).
//! `LENGTH=n` pads the edited field with blanks on the left, or drops its leftmost characters.

use crate::decimal;
use crate::error::KeyError;

/// The format of a numeric field read by an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NumFormat {
    /// `BI`: unsigned big-endian binary, 1 to 8 bytes.
    Bi,
    /// `FI`: signed big-endian binary (two's complement), 1 to 8 bytes.
    Fi,
    /// `PD`: packed decimal, 1 to 16 bytes.
    Pd,
    /// `ZD`: zoned decimal, 1 to 31 bytes.
    Zd,
    /// `FS` or `CSF`: blanks, an optional `+` or `-`, digits; 1 to 32 bytes.
    Fs,
    /// `UFF`: the digits anywhere in the field, 1 to 44 bytes.
    Uff,
    /// `SFF`: as `UFF`, negative when a `-` or `)` appears, 1 to 44 bytes.
    Sff,
}

/// DFSORT's limit on the digits of a decimal value (31, the most a `PD` field holds).
pub const MAX_DIGITS: usize = 31;

impl NumFormat {
    /// Parses `BI FI PD ZD FS CSF UFF SFF`.
    pub fn from_dfsort(name: &str) -> Option<NumFormat> {
        Some(match name {
            "BI" => NumFormat::Bi,
            "FI" => NumFormat::Fi,
            "PD" => NumFormat::Pd,
            "ZD" => NumFormat::Zd,
            "FS" | "CSF" => NumFormat::Fs,
            "UFF" => NumFormat::Uff,
            "SFF" => NumFormat::Sff,
            _ => return None,
        })
    }

    /// The DFSORT name.
    pub fn name(self) -> &'static str {
        match self {
            NumFormat::Bi => "BI",
            NumFormat::Fi => "FI",
            NumFormat::Pd => "PD",
            NumFormat::Zd => "ZD",
            NumFormat::Fs => "FS",
            NumFormat::Uff => "UFF",
            NumFormat::Sff => "SFF",
        }
    }

    /// The longest field of this format DFSORT edits.
    pub fn max_len(self) -> usize {
        match self {
            NumFormat::Bi | NumFormat::Fi => 8,
            NumFormat::Pd => 16,
            NumFormat::Zd => 31,
            NumFormat::Fs => 32,
            NumFormat::Uff | NumFormat::Sff => 44,
        }
    }

    /// The digits a `len`-byte field holds (`d` of DFSORT's mask table): binary fields the
    /// digits of their largest magnitude (`BI` 4 bytes: 4294967295, 10; `FI` 4 bytes:
    /// 2147483648, 10), `PD` `2m-1`, `ZD` `m`, `FS` and `SFF` `m-1` (one byte for the sign),
    /// `UFF` `m`; never more than 31.
    pub fn digits(self, len: usize) -> usize {
        let d = match self {
            NumFormat::Bi => (u128::MAX >> (128 - 8 * len)).to_string().len(),
            NumFormat::Fi => (1u128 << (8 * len - 1)).to_string().len(),
            NumFormat::Pd => 2 * len - 1,
            NumFormat::Zd | NumFormat::Uff => len,
            NumFormat::Fs | NumFormat::Sff => len.saturating_sub(1).max(1),
        };
        d.min(MAX_DIGITS)
    }

    /// The value of the field `b`, or the error of invalid packed or zoned data (`index` and
    /// `position`, the field's 1-based record position, name it).
    pub fn value(self, b: &[u8], index: usize, position: usize) -> Result<i128, KeyError> {
        let signed = |negative: bool, v: i128| if negative { -v } else { v };
        Ok(match self {
            NumFormat::Bi => b.iter().fold(0i128, |v, &x| v << 8 | x as i128),
            NumFormat::Fi => {
                let u = b.iter().fold(0i128, |v, &x| v << 8 | x as i128);
                let bits = 8 * b.len() as u32;
                if u >> (bits - 1) == 1 {
                    u - (1i128 << bits)
                } else {
                    u
                }
            }
            NumFormat::Pd => {
                let negative = decimal::packed_sign(b, index, position)?;
                signed(negative, decimal::packed_digits(b).fold(0i128, |v, d| v * 10 + d as i128))
            }
            NumFormat::Zd => {
                let (negative, last) = decimal::zoned_sign(b, index, position)?;
                let v = b[..b.len() - 1].iter().fold(0i128, |v, &d| v * 10 + (d & 0x0F) as i128);
                signed(negative, v * 10 + last as i128)
            }
            NumFormat::Fs => {
                let (negative, int, _) = decimal::parse_text(b, decimal::TextSyntax::LeadingSign);
                signed(negative, last_digits(int.iter().copied()))
            }
            NumFormat::Uff | NumFormat::Sff => {
                let negative = self == NumFormat::Sff && b.iter().any(|&c| c == b'-' || c == b')');
                signed(negative, last_digits(b.iter().copied().filter(u8::is_ascii_digit)))
            }
        })
    }
}

/// The value of ASCII digits, keeping the last 31 (DFSORT's digit limit).
fn last_digits(digits: impl Iterator<Item = u8>) -> i128 {
    let cap = 10i128.pow(MAX_DIGITS as u32);
    digits.fold(0i128, |v, d| (v * 10 + (d - b'0') as i128) % cap)
}

/// The four signs of `SIGNS=(a,b,c,d)`: leading for a value of 0 or more, leading negative,
/// trailing, trailing negative. `None` prints a blank.
pub type Signs = [Option<u8>; 4];

/// A compiled edit: the pattern without its signs, and the signs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EditMask {
    /// `I`, `T` and literal characters.
    body: Vec<u8>,
    /// The pattern starts with `S`.
    lead: bool,
    /// The trailing sign: what a value of 0 or more and a negative one get (of equal width;
    /// empty when the pattern has none). `M3`'s is `CR` or two blanks.
    trail: (Vec<u8>, Vec<u8>),
    /// The leading signs (value of 0 or more, negative).
    lead_signs: (u8, u8),
}

/// Why an edit pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    /// No `I` or `T`.
    #[error("an edit pattern needs at least one digit (I or T)")]
    NoDigits,
    /// More than 31 `I`/`T`.
    #[error("an edit pattern has at most 31 digits (I and T)")]
    TooManyDigits,
    /// `S` somewhere other than first or last.
    #[error("S (a sign) may only be the first or the last character of an edit pattern")]
    MisplacedSign,
}

/// The default signs of an `EDIT=` pattern without `SIGNS=`.
const EDIT_SIGNS: Signs = [None, Some(b'-'), None, Some(b'-')];

/// A pre-defined mask: its shape for `d` digits.
enum Mask {
    /// Groups of digits: the integer part (`I`s then a `T`, or all `T`), an optional group
    /// separator every three integer digits, then a decimal character and fraction `T`s.
    Numeric {
        lead: bool,
        all_t: bool,
        group: Option<u8>,
        point: u8,
        frac: usize,
        trail: Trail,
        signs: Signs,
    },
    /// A fixed pattern (`M6` to `M9`).
    Fixed(&'static [u8]),
}

#[derive(Clone, Copy)]
enum Trail {
    None,
    S,
    Cr,
}

const fn s(c: u8) -> Option<u8> {
    Some(c)
}

/// DFSORT's masks `M0` to `M26` (Application Programming Guide, "Edit mask patterns"); the
/// signs are `SIGNS=(a,b,c,d)`.
fn mask(n: usize) -> Option<Mask> {
    use Trail::{Cr, None as No, S};
    let num = |lead, all_t, group, point, frac, trail, signs| Mask::Numeric {
        lead,
        all_t,
        group,
        point,
        frac,
        trail,
        signs,
    };
    const TRAIL_MINUS: Signs = [None, None, s(b' '), s(b'-')];
    const LEAD_MINUS: Signs = [s(b' '), s(b'-'), None, None];
    const PLUS_MINUS: Signs = [s(b'+'), s(b'-'), None, None];
    const PARENS: Signs = [s(b' '), s(b'('), s(b' '), s(b')')];
    Some(match n {
        0 => num(false, false, None, b'.', 0, S, TRAIL_MINUS), //   IIIIIIIIIIIIIITS
        1 => num(false, true, None, b'.', 0, S, TRAIL_MINUS),  //   TTTTTTTTTTTTTTTS
        2 => num(false, false, s(b','), b'.', 2, S, TRAIL_MINUS), // I,III,III,III,IIT.TTS
        3 => num(false, false, s(b','), b'.', 2, Cr, [None; 4]), // I,III,III,III,IIT.TTCR
        4 => num(true, false, s(b','), b'.', 2, No, PLUS_MINUS), // SI,III,III,III,IIT.TT
        5 => num(true, false, s(b','), b'.', 2, S, PARENS),    //   SI,III,III,III,IIT.TTS
        6 => Mask::Fixed(b"III-TTT-TTTT"),
        7 => Mask::Fixed(b"TTT-TT-TTTT"),
        8 => Mask::Fixed(b"IT:TT:TT"),
        9 => Mask::Fixed(b"IT/TT/TT"),
        10 => num(false, false, None, b'.', 0, No, [None; 4]), //  IIIIIIIIIIIIIIT
        11 => num(false, true, None, b'.', 0, No, [None; 4]),  //  TTTTTTTTTTTTTTT
        12 => num(true, false, s(b','), b'.', 0, No, LEAD_MINUS), // SIII,III,III,III,IIT
        13 => num(true, false, s(b'.'), b'.', 0, No, LEAD_MINUS), // SIII.III.III.III.IIT
        14 => num(true, false, s(b' '), b'.', 0, S, PARENS),   //  SIII III III III IITS
        15 => num(false, false, s(b' '), b'.', 0, S, TRAIL_MINUS), // III III III III IITS
        16 => num(true, false, s(b' '), b'.', 0, No, LEAD_MINUS), // SIII III III III IIT
        17 => num(true, false, s(b'\''), b'.', 0, No, LEAD_MINUS), // SIII'III'III'III'IIT
        18 => num(true, false, s(b','), b'.', 2, No, LEAD_MINUS), // SI,III,III,III,IIT.TT
        19 => num(true, false, s(b'.'), b',', 2, No, LEAD_MINUS), // SI.III.III.III.IIT,TT
        20 => num(true, false, s(b' '), b',', 2, S, PARENS),   //  SI III III III IIT,TTS
        21 => num(false, false, s(b' '), b',', 2, S, TRAIL_MINUS), // I III III III IIT,TTS
        22 => num(true, false, s(b' '), b',', 2, No, LEAD_MINUS), // SI III III III IIT,TT
        23 => num(true, false, s(b'\''), b'.', 2, No, LEAD_MINUS), // SI'III'III'III'IIT.TT
        24 => num(true, false, s(b'\''), b',', 2, No, LEAD_MINUS), // SI'III'III'III'IIT,TT
        25 => num(true, false, None, b'.', 0, No, LEAD_MINUS), //  SIIIIIIIIIIIIIIT
        26 => num(true, true, None, b'.', 0, No, PLUS_MINUS),  //  STTTTTTTTTTTTTTT
        _ => return None,
    })
}

/// How many masks there are (`M0` to `M26`).
pub const MASKS: usize = 27;

fn apply_signs(base: Signs, over: Option<Signs>) -> Signs {
    let mut out = base;
    if let Some(over) = over {
        for (o, v) in out.iter_mut().zip(over) {
            if v.is_some() {
                *o = v;
            }
        }
    }
    out
}

impl EditMask {
    /// `EDIT=(pattern)` with `SIGNS=` if given (a sign it leaves out keeps its default).
    pub fn pattern(pattern: &[u8], signs: Option<Signs>) -> Result<EditMask, PatternError> {
        let signs = apply_signs(EDIT_SIGNS, signs);
        let mut body = pattern;
        let lead = body.first() == Some(&b'S');
        if lead {
            body = &body[1..];
        }
        let trailing = body.last() == Some(&b'S');
        if trailing {
            body = &body[..body.len() - 1];
        }
        if body.contains(&b'S') {
            return Err(PatternError::MisplacedSign);
        }
        let digits = body.iter().filter(|&&c| c == b'I' || c == b'T').count();
        if digits == 0 {
            return Err(PatternError::NoDigits);
        }
        if digits > MAX_DIGITS {
            return Err(PatternError::TooManyDigits);
        }
        let b = |x: Option<u8>| x.unwrap_or(b' ');
        Ok(EditMask {
            body: body.to_vec(),
            lead,
            trail: if trailing {
                (vec![b(signs[2])], vec![b(signs[3])])
            } else {
                (Vec::new(), Vec::new())
            },
            lead_signs: (b(signs[0]), b(signs[1])),
        })
    }

    /// Mask `Mn` for a field of `digits` digits, `SIGNS=` overriding its signs one by one.
    pub fn predefined(n: usize, digits: usize, signs: Option<Signs>) -> Option<EditMask> {
        let b = |x: Option<u8>| x.unwrap_or(b' ');
        Some(match mask(n)? {
            Mask::Fixed(p) => EditMask {
                body: p.to_vec(),
                lead: false,
                trail: (Vec::new(), Vec::new()),
                lead_signs: (b' ', b' '),
            },
            Mask::Numeric { lead, all_t, group, point, frac, trail, signs: base } => {
                let signs = apply_signs(base, signs);
                let f = frac.min(digits);
                let n_int = digits - f;
                let mut body = Vec::new();
                for i in 0..n_int {
                    if i > 0 && (n_int - i) % 3 == 0 {
                        if let Some(g) = group {
                            body.push(g);
                        }
                    }
                    body.push(if all_t || i + 1 == n_int { b'T' } else { b'I' });
                }
                if n_int > 0 && f > 0 {
                    body.push(point);
                }
                body.resize(body.len() + f, b'T');
                let trail = match trail {
                    Trail::None => (Vec::new(), Vec::new()),
                    Trail::S => (vec![b(signs[2])], vec![b(signs[3])]),
                    Trail::Cr => (b"  ".to_vec(), b"CR".to_vec()),
                };
                EditMask { body, lead, trail, lead_signs: (b(signs[0]), b(signs[1])) }
            }
        })
    }

    /// The edited field's length (before `LENGTH=`).
    pub fn len(&self) -> usize {
        self.lead as usize + self.body.len() + self.trail.0.len()
    }

    /// Never: a pattern has at least one digit.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes `value` edited into `out`, which is [`EditMask::len`] bytes or the `LENGTH=`
    /// (blanks on the left, or the leftmost characters dropped).
    pub fn write(&self, value: i128, out: &mut [u8]) {
        // Room for the longest edit: 44 pattern characters in DFSORT, with the signs.
        let mut buf = [b' '; 128];
        let full = self.len();
        let mut text: Vec<u8>;
        let edited: &mut [u8] = if full <= buf.len() {
            &mut buf[..full]
        } else {
            text = vec![b' '; full];
            &mut text
        };
        let k = self.body.iter().filter(|&&c| c == b'I' || c == b'T').count();
        let mut m = value.unsigned_abs() % 10u128.pow(k as u32);
        let mut digits = [0u8; MAX_DIGITS];
        for d in digits[..k].iter_mut().rev() {
            *d = (m % 10) as u8;
            m /= 10;
        }
        let base = self.lead as usize;
        let mut next = 0usize;
        let mut significant = false;
        let mut first = None;
        for (i, &c) in self.body.iter().enumerate() {
            let o = &mut edited[base + i];
            match c {
                b'I' | b'T' => {
                    let d = digits[next];
                    next += 1;
                    if c == b'T' || d != 0 {
                        significant = true;
                    }
                    *o = if significant { b'0' + d } else { b' ' };
                }
                _ => *o = if significant { c } else { b' ' },
            }
            if significant && first.is_none() {
                first = Some(base + i);
            }
        }
        let negative = value < 0;
        if self.lead {
            let sign = if negative { self.lead_signs.1 } else { self.lead_signs.0 };
            let at = first.map_or(base + self.body.len() - 1, |f| f - 1);
            edited[at] = sign;
        }
        let trail = if negative { &self.trail.1 } else { &self.trail.0 };
        edited[base + self.body.len()..].copy_from_slice(trail);
        if out.len() >= full {
            let pad = out.len() - full;
            out[..pad].fill(b' ');
            out[pad..].copy_from_slice(edited);
        } else {
            out.copy_from_slice(&edited[full - out.len()..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(m: &EditMask, v: i128) -> String {
        let mut out = vec![0u8; m.len()];
        m.write(v, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// The 15-digit patterns of DFSORT's mask table, written out by hand, against the masks
    /// built for 15 digits.
    #[test]
    fn masks_for_15_digits_are_the_table_patterns() {
        let table = [
            "IIIIIIIIIIIIIIT",
            "TTTTTTTTTTTTTTT",
            "I,III,III,III,IIT.TT",
            "I,III,III,III,IIT.TT",
            "I,III,III,III,IIT.TT",
            "I,III,III,III,IIT.TT",
            "III-TTT-TTTT",
            "TTT-TT-TTTT",
            "IT:TT:TT",
            "IT/TT/TT",
            "IIIIIIIIIIIIIIT",
            "TTTTTTTTTTTTTTT",
            "III,III,III,III,IIT",
            "III.III.III.III.IIT",
            "III III III III IIT",
            "III III III III IIT",
            "III III III III IIT",
            "III'III'III'III'IIT",
            "I,III,III,III,IIT.TT",
            "I.III.III.III.IIT,TT",
            "I III III III IIT,TT",
            "I III III III IIT,TT",
            "I III III III IIT,TT",
            "I'III'III'III'IIT.TT",
            "I'III'III'III'IIT,TT",
            "IIIIIIIIIIIIIIT",
            "TTTTTTTTTTTTTTT",
        ];
        // Lengths from the table, d = 15: d+1, d+1, d+1+[d/3], d+2+[d/3], d+1+[d/3],
        // d+2+[d/3], 12, 11, 8, 8, d, d, then d+1+[(d-1)/3] or d+2+[(d-1)/3] ...
        let lengths = [
            16, 16, 21, 22, 21, 22, 12, 11, 8, 8, 15, 15, 20, 20, 21, 20, 20, 20, 21, 21, 22, 21,
            21, 21, 21, 16, 16,
        ];
        for n in 0..MASKS {
            let m = EditMask::predefined(n, 15, None).unwrap();
            assert_eq!(m.body, table[n].as_bytes(), "M{n}");
            assert_eq!(m.len(), lengths[n], "M{n}");
        }
        assert!(EditMask::predefined(27, 15, None).is_none());
    }

    #[test]
    fn fewer_digits_keep_the_rightmost_positions() {
        // M12 for a 4-byte PD (7 digits): length d+1+[(d-1)/3] = 10.
        let m = EditMask::predefined(12, 7, None).unwrap();
        assert_eq!(m.body, b"I,III,IIT");
        assert_eq!(edit(&m, -1234), "    -1,234");
        assert_eq!(edit(&m, 1234567), " 1,234,567");
        assert_eq!(edit(&m, 0), "         0");
        // M2 with 2 digits: only the fraction, no decimal point ([2/3] = 0 separators).
        assert_eq!(EditMask::predefined(2, 2, None).unwrap().body, b"TT");
        // M4 for 11 digits (a 6-byte PD): SIII,III,IIT.TT, 15 bytes.
        let m4 = EditMask::predefined(4, 11, None).unwrap();
        assert_eq!(edit(&m4, 1524900810), " +15,249,008.10");
        assert_eq!(edit(&m4, -65781053), "    -657,810.53");
        assert_eq!(edit(&m4, 0), "          +0.00");
        // More than 15 digits repeat the groups: M12 for 18 digits.
        let m = EditMask::predefined(12, 18, None).unwrap();
        assert_eq!(m.body, b"III,III,III,III,III,IIT");
    }

    #[test]
    fn signs_and_trailing_forms() {
        // M0: IIIT + trailing sign (blank or '-').
        let m0 = EditMask::predefined(0, 4, None).unwrap();
        assert_eq!(edit(&m0, -42), "  42-");
        assert_eq!(edit(&m0, 42), "  42 ");
        // M3: CR for negatives, two blanks otherwise.
        let m3 = EditMask::predefined(3, 5, None).unwrap();
        assert_eq!(edit(&m3, -12345), "123.45CR");
        assert_eq!(edit(&m3, 5), "  0.05  ");
        // M5: parentheses around negatives.
        let m5 = EditMask::predefined(5, 7, None).unwrap();
        assert_eq!(edit(&m5, -123456), " (1,234.56)");
        assert_eq!(edit(&m5, 123456), "  1,234.56 ");
        // SIGNS= overrides one sign of a mask and keeps the others.
        let m4 = EditMask::predefined(4, 3, Some([Some(b' '), None, None, None])).unwrap();
        assert_eq!(edit(&m4, 123), " 1.23");
        assert_eq!(edit(&m4, -123), "-1.23");
        // Fixed patterns: M9 and M6; high digits beyond the pattern are dropped.
        let m9 = EditMask::predefined(9, 8, None).unwrap();
        assert_eq!(edit(&m9, 122099), "12/20/99");
        assert_eq!(edit(&m9, 12312099), "31/20/99");
        assert_eq!(edit(&m9, 10203), " 1/02/03");
        let m6 = EditMask::predefined(6, 10, None).unwrap();
        assert_eq!(edit(&m6, 4085551234), "408-555-1234");
    }

    #[test]
    fn user_patterns() {
        let p = EditMask::pattern(b"TT-TT-TTTT", None).unwrap();
        assert_eq!(edit(&p, 5122003), "05-12-2003");
        let p =
            EditMask::pattern(b"SI,III,III,IIT.TTT", Some([None, Some(b'-'), None, None])).unwrap();
        assert_eq!(edit(&p, 20000), format!("{}20.000", " ".repeat(12)));
        assert_eq!(edit(&p, -982630735), format!("{}-982,630.735", " ".repeat(6)));
        let p = EditMask::pattern(b"STTTTTTT", Some([Some(b'+'), Some(b'-'), None, None])).unwrap();
        assert_eq!(edit(&p, 1145728), "+1145728");
        let p = EditMask::pattern(b"IIITS", None).unwrap();
        assert_eq!(edit(&p, -7), "   7-");
        assert_eq!(EditMask::pattern(b"IS I", None), Err(PatternError::MisplacedSign));
        assert_eq!(EditMask::pattern(b"S,.", None), Err(PatternError::NoDigits));
        // LENGTH=: blanks on the left, or the leftmost characters dropped.
        let p = EditMask::pattern(b"IIT", None).unwrap();
        let mut out = [0u8; 5];
        p.write(42, &mut out);
        assert_eq!(&out, b"   42");
        let mut out = [0u8; 2];
        p.write(123, &mut out);
        assert_eq!(&out, b"23");
    }

    #[test]
    fn values_and_digits_of_each_format() {
        assert_eq!(NumFormat::Bi.digits(4), 10);
        assert_eq!(NumFormat::Bi.digits(3), 8); // 16777215
        assert_eq!(NumFormat::Fi.digits(3), 7); // 8388608
        assert_eq!(NumFormat::Bi.digits(8), 20);
        assert_eq!(NumFormat::Fi.digits(8), 19);
        assert_eq!(NumFormat::Pd.digits(16), 31);
        assert_eq!(NumFormat::Uff.digits(44), 31);
        assert_eq!(NumFormat::Fi.value(&[0xFF, 0xF6], 1, 1), Ok(-10));
        assert_eq!(NumFormat::Pd.value(&[0x12, 0x3D], 1, 1), Ok(-123));
        assert_eq!(NumFormat::Zd.value(b"12r", 1, 1), Ok(-122));
        assert_eq!(NumFormat::Fs.value(b"  -045", 1, 1), Ok(-45));
        assert_eq!(NumFormat::Uff.value(b"$1,234.5-", 1, 1), Ok(12345));
        assert_eq!(NumFormat::Sff.value(b"(1,234)", 1, 1), Ok(-1234));
        assert!(NumFormat::Pd.value(&[0x1A, 0x3C], 2, 9).is_err());
    }
}

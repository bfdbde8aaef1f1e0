//! Decimal values (packed, zoned, numeric text) read into sign + digits, and their canonical
//! order-preserving encoding.
//!
//! ```text
//!   zero:      +------+
//!              | 0x02 |
//!              +------+
//!   positive:  +------+---------+-----------------+--------------------------+
//!              | 0x03 | ndigits | integer digits  | fraction digits          |
//!              |      | 1 or 5B | BCD, 2 per byte | nibble d+1, 0 nibble end |
//!              +------+---------+-----------------+--------------------------+
//!   negative:  | 0x01 | the positive form of |v|, every byte complemented   |
//! ```
//!
//! Leading zeros of the integer part and trailing zeros of the fraction are dropped first, so
//! every encoding of a value (packed sign C or F, zoned EBCDIC or ASCII, `007` or `7.0`, `-0`)
//! gives the same bytes. `ndigits` is one byte below 255, else 0xFF and a big-endian `u32`;
//! with an odd digit count the first BCD byte holds a single digit. The form is prefix-free,
//! so a following field can never bleed into it.

use crate::error::KeyError;

const CLASS_NEGATIVE: u8 = 0x01;
const CLASS_ZERO: u8 = 0x02;
const CLASS_POSITIVE: u8 = 0x03;

/// Where an encoding's bytes go: a growable key, or an entry prefix that keeps only the bytes
/// it has room for.
pub(crate) trait ByteSink {
    /// Appends one byte.
    fn put(&mut self, b: u8);
}

impl ByteSink for Vec<u8> {
    #[inline]
    fn put(&mut self, b: u8) {
        self.push(b);
    }
}

/// Appends the canonical form of the number `-`(if `negative`) `int`.`frac`, where `int` and
/// `frac` yield digit values 0..=9.
pub(crate) fn encode<S, I, F>(out: &mut S, negative: bool, int: I, frac: F)
where
    S: ByteSink + ?Sized,
    I: Iterator<Item = u8> + Clone,
    F: Iterator<Item = u8> + Clone,
{
    let int = int.skip_while(|&d| d == 0);
    let n_int = int.clone().count();
    let n_frac = frac.clone().enumerate().filter(|&(_, d)| d != 0).last().map_or(0, |(i, _)| i + 1);
    if n_int == 0 && n_frac == 0 {
        out.put(CLASS_ZERO);
        return;
    }
    out.put(if negative { CLASS_NEGATIVE } else { CLASS_POSITIVE });
    // A negative number's bytes after the class are complemented.
    let flip = if negative { 0xFF } else { 0 };
    let mut put = |b: u8| out.put(b ^ flip);
    if n_int < 0xFF {
        put(n_int as u8);
    } else {
        put(0xFF);
        // A field longer than 4 GiB of digits cannot exist (records are at most 64 KiB and
        // delimited records are bounded by memory far below that).
        (n_int as u32).to_be_bytes().into_iter().for_each(&mut put);
    }
    let mut digits = int;
    if n_int % 2 == 1 {
        put(digits.next().unwrap_or(0));
    }
    while let Some(hi) = digits.next() {
        let lo = digits.next().unwrap_or(0);
        put(hi << 4 | lo);
    }
    // Fraction: nibbles d + 1 (1..=10), then a 0 nibble, padded to a byte with 0.
    let mut nibbles = frac.take(n_frac).map(|d| d + 1).chain(std::iter::once(0));
    while let Some(hi) = nibbles.next() {
        let lo = nibbles.next().unwrap_or(0);
        put(hi << 4 | lo);
    }
}

/// Validates a packed decimal field and returns whether it is negative.
/// `position` is the 1-based record position of `field[0]`.
pub(crate) fn packed_sign(field: &[u8], index: usize, position: usize) -> Result<bool, KeyError> {
    let bad =
        |i: usize| KeyError::InvalidPacked { field: index, position: position + i, byte: field[i] };
    let last = field.len() - 1;
    for (i, &b) in field.iter().enumerate() {
        if b >> 4 > 9 || (i < last && b & 0x0F > 9) {
            return Err(bad(i));
        }
    }
    match field[last] & 0x0F {
        0xC | 0xA | 0xE | 0xF => Ok(false),
        0xD | 0xB => Ok(true),
        _ => Err(bad(last)),
    }
}

/// The digits of a (validated) packed decimal field, most significant first.
pub(crate) fn packed_digits(field: &[u8]) -> impl Iterator<Item = u8> + Clone + '_ {
    let n = field.len() * 2 - 1;
    field.iter().flat_map(|&b| [b >> 4, b & 0x0F]).take(n)
}

/// The sign and digits of a `CLO` field (zoned, its sign over the first digit) or a `CST`
/// field (ASCII digits, then `+`, `-` or blank), validated; an empty field is `+0`.
pub(crate) fn signed_digits(
    kind: crate::FieldType,
    field: &[u8],
    index: usize,
    position: usize,
) -> Result<(bool, Vec<u8>), KeyError> {
    let bad =
        |i: usize| KeyError::InvalidZoned { field: index, position: position + i, byte: field[i] };
    let Some(last) = field.len().checked_sub(1) else { return Ok((false, Vec::new())) };
    let zoned_digit = |i: usize, b: u8| {
        if matches!(b >> 4, 0xF | 0x3) && b & 0x0F <= 9 {
            Ok(b & 0x0F)
        } else {
            Err(bad(i))
        }
    };
    if kind == crate::FieldType::LeadingZoned {
        let (negative, first) = zoned_last(field[0]).ok_or_else(|| bad(0))?;
        let mut digits = vec![first];
        for (i, &b) in field.iter().enumerate().skip(1) {
            digits.push(zoned_digit(i, b)?);
        }
        return Ok((negative, digits));
    }
    let negative = match field[last] {
        b'-' => true,
        b'+' | b' ' => false,
        _ => return Err(bad(last)),
    };
    let mut digits = Vec::with_capacity(last);
    for (i, &b) in field[..last].iter().enumerate() {
        if !b.is_ascii_digit() {
            return Err(bad(i));
        }
        digits.push(b - b'0');
    }
    Ok((negative, digits))
}

/// Validates a zoned decimal field; returns (negative, value of the last digit).
pub(crate) fn zoned_sign(
    field: &[u8],
    index: usize,
    position: usize,
) -> Result<(bool, u8), KeyError> {
    let bad =
        |i: usize| KeyError::InvalidZoned { field: index, position: position + i, byte: field[i] };
    let last = field.len() - 1;
    for (i, &b) in field[..last].iter().enumerate() {
        if !matches!(b >> 4, 0xF | 0x3) || b & 0x0F > 9 {
            return Err(bad(i));
        }
    }
    zoned_last(field[last]).ok_or_else(|| bad(last))
}

/// The sign (negative?) and digit of a zoned field's last byte: a zone of sign (`C`, `A`, `E`,
/// `F` or ASCII `3` positive, `D`, `B` or ASCII `7` negative) over a digit, or an ASCII
/// overpunch (`{`, `A`..`I` positive, `}`, `J`..`R` negative); `None` if it is neither.
#[inline]
pub(crate) fn zoned_last(b: u8) -> Option<(bool, u8)> {
    match b {
        b'{' => return Some((false, 0)),
        b'}' => return Some((true, 0)),
        b'A'..=b'I' => return Some((false, b - b'A' + 1)),
        b'J'..=b'R' => return Some((true, b - b'J' + 1)),
        _ => {}
    }
    let (zone, digit) = (b >> 4, b & 0x0F);
    if digit > 9 {
        return None;
    }
    match zone {
        0xC | 0xA | 0xE | 0xF | 0x3 => Some((false, digit)),
        0xD | 0xB | 0x7 => Some((true, digit)),
        _ => None,
    }
}

/// Which numeric text syntax to read.
#[derive(Clone, Copy)]
pub(crate) enum TextSyntax {
    /// DFSORT CSF/FS: blanks, `+`/`-`, digits.
    LeadingSign,
    /// nsort decimal: blanks, `+`/`-`, digits, `.`, digits.
    Decimal,
    /// GNU -n: blanks (incl. newline), `-`, digits, `.`, digits.
    Gnu,
}

/// Reads numeric text: (negative, integer digits, fraction digits) as ASCII digit slices.
pub(crate) fn parse_text(text: &[u8], syntax: TextSyntax) -> (bool, &[u8], &[u8]) {
    let mut p = 0;
    let blank = |b: u8| match syntax {
        TextSyntax::Gnu => crate::columns::is_blank(b),
        _ => b == b' ' || b == b'\t',
    };
    while p < text.len() && blank(text[p]) {
        p += 1;
    }
    let mut negative = false;
    if p < text.len() {
        match text[p] {
            b'-' => {
                negative = true;
                p += 1;
            }
            b'+' if !matches!(syntax, TextSyntax::Gnu) => p += 1,
            _ => {}
        }
    }
    let int_start = p;
    while p < text.len() && text[p].is_ascii_digit() {
        p += 1;
    }
    let int = &text[int_start..p];
    let mut frac: &[u8] = &[];
    if !matches!(syntax, TextSyntax::LeadingSign) && p < text.len() && text[p] == b'.' {
        let f = p + 1;
        let mut q = f;
        while q < text.len() && text[q].is_ascii_digit() {
            q += 1;
        }
        frac = &text[f..q];
    }
    (negative, int, frac)
}

/// Appends the canonical form of numeric text.
pub(crate) fn encode_text<S: ByteSink + ?Sized>(out: &mut S, text: &[u8], syntax: TextSyntax) {
    let (negative, int, frac) = parse_text(text, syntax);
    encode(out, negative, int.iter().map(|d| d - b'0'), frac.iter().map(|d| d - b'0'));
}

/// The first bytes of [`encode_text`]'s form, for an entry prefix: left-aligned in a
/// big-endian `u128`, with their count (all of them up to 16); `None` for 255 integer digits or
/// more. Built in a register, a pair of digits per shift (where a prefix written a byte at a
/// time costs a variable 128-bit shift per byte).
#[inline]
pub(crate) fn encode_text_head(text: &[u8], syntax: TextSyntax) -> Option<(u128, usize)> {
    const ROOM: usize = 15;
    let (negative, int, frac) = parse_text(text, syntax);
    let int = &int[int.iter().position(|&d| d != b'0').unwrap_or(int.len())..];
    let frac = &frac[..frac.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1)];
    if int.is_empty() && frac.is_empty() {
        return Some((u128::from(CLASS_ZERO) << 120, 1));
    }
    if int.len() >= 0xFF {
        return None;
    }
    // `n` bytes after the class, shifted in from the right: the count, BCD, fraction nibbles.
    let (mut v, mut n) = (int.len() as u128, 1);
    let (odd, pairs) = int.split_at(int.len() % 2);
    for &d in odd {
        v = v << 8 | u128::from(d - b'0');
        n += 1;
    }
    for d in pairs.chunks_exact(2) {
        if n == ROOM {
            break;
        }
        v = v << 8 | u128::from((d[0] - b'0') << 4 | (d[1] - b'0'));
        n += 1;
    }
    let mut nibbles = frac.iter().map(|d| d - b'0' + 1).chain([0]);
    while n < ROOM {
        let Some(hi) = nibbles.next() else { break };
        v = v << 8 | u128::from(hi << 4 | nibbles.next().unwrap_or(0));
        n += 1;
    }
    if negative {
        v ^= u128::MAX >> (128 - 8 * n);
    }
    let class = if negative { CLASS_NEGATIVE } else { CLASS_POSITIVE };
    v |= u128::from(class) << (8 * n);
    Some((v << (8 * (ROOM - n)), n + 1))
}

/// Appends the canonical form of free-form text: all digits anywhere; negative (if `signed`)
/// when a `-` or `)` appears.
pub(crate) fn encode_free(out: &mut Vec<u8>, text: &[u8], signed: bool) {
    let negative = signed && text.iter().any(|&b| b == b'-' || b == b')');
    let digits = text.iter().filter(|b| b.is_ascii_digit()).map(|d| d - b'0');
    encode(out, negative, digits, std::iter::empty());
}

/// Appends the canonical form of an unsigned or signed binary integer given as a magnitude.
pub(crate) fn encode_u128(out: &mut Vec<u8>, negative: bool, magnitude: u128) {
    let text = magnitude.to_string();
    encode(out, negative, text.bytes().map(|d| d - b'0'), std::iter::empty());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(text: &str) -> Vec<u8> {
        let mut v = Vec::new();
        encode_text(&mut v, text.as_bytes(), TextSyntax::Decimal);
        v
    }

    #[test]
    fn equal_values_encode_equal() {
        assert_eq!(enc("007"), enc("7.000"));
        assert_eq!(enc("-0"), enc("0"));
        assert_eq!(enc(""), enc("+0.0"));
        assert_eq!(enc("  +12.5"), enc("12.50"));
    }

    #[test]
    fn order_follows_value() {
        let vals = [
            "-100", "-99.5", "-99", "-1", "-0.5", "0", "0.05", "0.5", "1", "9", "10", "10.01",
            "123",
        ];
        for w in vals.windows(2) {
            assert!(enc(w[0]) < enc(w[1]), "{} < {}", w[0], w[1]);
        }
    }

    #[test]
    fn the_head_is_the_first_bytes_of_the_whole_form() {
        let mut rng = oxsort_testkit::Rng::new(0xDEC1);
        let mut texts: Vec<String> =
            ["", "0", "-0.000", "  -12.50x", "\n7", "1.", ".5"].map(String::from).to_vec();
        for _ in 0..20_000 {
            let digits = |rng: &mut oxsort_testkit::Rng, n: usize| -> String {
                (0..rng.index(n)).map(|_| if rng.below(3) == 0 { '0' } else { '1' }).collect()
            };
            let sign = ["", "-", " -", "+", "\t"][rng.index(5)];
            let (int, frac) = (digits(&mut rng, 40), digits(&mut rng, 30));
            texts.push(format!("{sign}{int}.{frac}"));
            texts.push(format!("{sign}{int}"));
        }
        texts.push("9".repeat(300));
        for text in &texts {
            let mut whole = Vec::new();
            encode_text(&mut whole, text.as_bytes(), TextSyntax::Gnu);
            match encode_text_head(text.as_bytes(), TextSyntax::Gnu) {
                Some((head, len)) => {
                    assert_eq!(len, whole.len().min(16), "{text:?}");
                    assert_eq!(head.to_be_bytes()[..len], whole[..len], "{text:?}");
                    assert!(head.to_be_bytes()[len..].iter().all(|&b| b == 0), "{text:?}");
                }
                None => assert!(text.len() >= 255, "{text:?}"),
            }
        }
    }

    #[test]
    fn long_digit_runs_use_the_wide_length() {
        let long = "9".repeat(300);
        let longer = format!("1{}", "0".repeat(300));
        assert!(enc(&long) < enc(&longer));
        assert!(enc(&"9".repeat(254)) < enc(&"1".repeat(255)));
    }

    #[test]
    fn leading_zoned_and_trailing_sign_fields() {
        use crate::FieldType::{LeadingZoned, TrailingSign};
        assert_eq!(signed_digits(LeadingZoned, b"r05", 1, 1), Ok((true, vec![2, 0, 5])));
        assert_eq!(signed_digits(LeadingZoned, b"205", 1, 1), Ok((false, vec![2, 0, 5])));
        assert_eq!(signed_digits(TrailingSign, b"042-", 1, 1), Ok((true, vec![0, 4, 2])));
        assert_eq!(signed_digits(TrailingSign, b"042 ", 1, 1), Ok((false, vec![0, 4, 2])));
        let bad = KeyError::InvalidZoned { field: 2, position: 11, byte: b'*' };
        assert_eq!(signed_digits(TrailingSign, b"0*2+", 2, 10), Err(bad.clone()));
        assert_eq!(signed_digits(LeadingZoned, b"1*", 2, 10), Err(bad));
        assert!(signed_digits(TrailingSign, b"042x", 1, 1).is_err());
    }

    #[test]
    fn packed_and_zoned_validation() {
        assert_eq!(packed_sign(&[0x12, 0x3C], 1, 1), Ok(false));
        assert_eq!(packed_sign(&[0x12, 0x3B], 1, 1), Ok(true));
        assert!(packed_sign(&[0x1A, 0x3C], 1, 1).is_err());
        assert!(packed_sign(&[0x12, 0x39], 1, 1).is_err());
        assert_eq!(zoned_sign(b"12}", 1, 1), Ok((true, 0)));
        assert_eq!(zoned_sign(&[0xF1, 0xD2], 1, 1), Ok((true, 2)));
        assert_eq!(zoned_sign(b"1r", 1, 1), Ok((true, 2)));
        assert!(zoned_sign(b" 12", 1, 1).is_err());
    }
}

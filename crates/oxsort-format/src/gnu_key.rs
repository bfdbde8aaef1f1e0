//! GNU sort's key kinds as order-preserving byte encodings.
//!
//! GNU sort compares two keys with a comparison function per kind (`-n`, `-g`, `-h`, `-M`,
//! `-V`, `-R`, text). oxsort never compares two keys with a function: each key becomes bytes
//! whose plain byte order (`memcmp`, a proper prefix first) is GNU's order, so the radix engine
//! sorts them. Every encoding below is prefix-free (a following field cannot bleed into it)
//! and complementing it reverses its order (`r`).
//!
//! ```text
//!  key text ──► drop ignored bytes (d, i) ──► fold to upper case (f) ──► encode by kind
//!
//!  text (C)     bytes, 0x00 -> 0x00 0xFF, end 0x00 0x00
//!  text (locale) 0x00 if empty, else 0x01 then strxfrm of each NUL-separated piece,
//!               pieces joined by 0x00 0x01, end 0x00 0x00     (strxfrm bytes are never 0)
//!  -n           canonical decimal (see `decimal`): class, digit count, BCD, fraction nibbles
//!  -h           unit order + 0x80 (K=1 .. Y=8, negative numbers -order), then as -n
//!  -g           0x01 not a number | 0x02 0x00 nan | 0x02 0x01 -nan | 0x03 + 8 bytes of
//!               the binary64 value, sign-flipped (-0 as +0)
//!  -M           one byte: 0 unknown, 1 JAN .. 12 DEC
//!  -V           class (0 empty, 1 ".", 2 "..", 3 ".x", 4 other), then two passes of
//!               filevercmp tokens (the name without its suffix, then the whole name)
//!  -R           16 bytes of a keyed hash of the key, then the text encoding (ties)
//! ```
//!
//! The version tokens (`-V`), from gnulib's `verrevcmp`: a name is runs of non-digits, each
//! followed by a number (possibly empty, leading zeros dropped). A non-digit weighs `~` <
//! (end of run) < letters by ASCII < every other byte by value; a number weighs its digit
//! count, then its digits.
//!
//! ```text
//!  run byte:   '~' 0x01 | letter: itself (0x41..0x7A) | other: 0xFF byte
//!  end of run: 0x02, then the number: count (1 byte < 255, else 0xFF + u32) and digits
//!  end of name (after a number): 0x02
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use crate::columns::is_blank;
use crate::decimal;

/// How a GNU key's text is compared (`-n -g -h -M -V -R`, or text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GnuOrder {
    /// Bytes (C locale) or the locale's collation.
    #[default]
    Text,
    /// `-n`: leading blanks, optional `-`, digits with thousands separators, decimal point,
    /// fraction digits. Anything else reads as 0.
    Numeric,
    /// `-g`: the value as `strtod` reads it; non-numbers first, then NaNs, then numbers.
    General,
    /// `-h`: numbers with an SI suffix (`K`/`k` < `M` < `G` ... `Y`); the suffix ranks first.
    Human,
    /// `-M`: month abbreviations, unknown < `JAN` < ... < `DEC`.
    Month,
    /// `-V`: version order (gnulib `filevercmp`).
    Version,
    /// `-R`: a keyed hash of the key; equal keys stay together.
    Random,
}

/// Which bytes a GNU key drops before comparing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GnuIgnore {
    /// Keep every byte.
    #[default]
    None,
    /// `-d`: keep only blanks and ASCII letters and digits.
    NonDictionary,
    /// `-i`: keep only printable ASCII (0x20 to 0x7E).
    NonPrinting,
}

/// Everything about a GNU key's comparison but its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GnuKind {
    /// The comparison.
    pub order: GnuOrder,
    /// Bytes dropped first (`d`, `i`).
    pub ignore: GnuIgnore,
    /// `f`: fold lower case to upper case.
    pub fold: bool,
    /// Text compares with the locale's collation (`strxfrm`) instead of bytes.
    pub collate: bool,
    /// The locale's decimal point for `-n`, `-h` (`.` in C).
    pub decimal_point: u8,
    /// The locale's thousands separator for `-n`, `-h` (none in C).
    pub thousands_sep: Option<u8>,
    /// The key of the `-R` hash (from `--random-source` or the system's randomness).
    pub seed: [u64; 2],
}

impl GnuKind {
    /// Text in the C locale, nothing dropped or folded.
    pub fn c_text() -> GnuKind {
        GnuKind { decimal_point: b'.', ..GnuKind::default() }
    }

    /// Whether the key's text compares as its raw bytes: text order in the C locale, nothing
    /// dropped or folded (the decimal point and thousands separator do not matter to text).
    pub fn is_raw_text(&self) -> bool {
        self.order == GnuOrder::Text
            && self.ignore == GnuIgnore::None
            && !self.fold
            && !self.collate
    }

    /// Whether the key is `-n` in the C locale's terms (decimal point `.`, no thousands
    /// separator), nothing dropped or folded.
    pub fn is_c_numeric(&self) -> bool {
        self.order == GnuOrder::Numeric
            && self.ignore == GnuIgnore::None
            && !self.fold
            && self.decimal_point == b'.'
            && self.thousands_sep.is_none()
    }

    /// Whether `b` is dropped by [`GnuKind::ignore`].
    #[inline]
    fn ignored(&self, b: u8) -> bool {
        match self.ignore {
            GnuIgnore::None => false,
            GnuIgnore::NonDictionary => !(b.is_ascii_alphanumeric() || is_blank(b)),
            GnuIgnore::NonPrinting => !(0x20..0x7F).contains(&b),
        }
    }
}

/// The collation hook of [`GnuKind::collate`]: appends the `strxfrm` image of a NUL-free
/// string. oxsort-format does no FFI itself; the front end that switches collation on installs
/// the function (see [`set_collator`]).
pub type Collator = fn(&[u8], &mut Vec<u8>);

static COLLATOR: std::sync::OnceLock<Collator> = std::sync::OnceLock::new();

/// Installs the function that transforms text for [`GnuKind::collate`] keys (once per
/// process; later calls are ignored). Without one, collated keys compare as bytes.
pub fn set_collator(f: Collator) {
    let _ = COLLATOR.set(f);
}

/// The primary collation weight of one character (see `oxsort_locale::primary_weight`):
/// `None` where the character is not a plain concatenation at the first level (a key holding
/// it is transformed whole); `Some(&[])` for a character that level ignores. Whenever two
/// characters both have weights, the first level of a string of them is the concatenation
/// of their weights.
pub type PrimaryWeights = fn(char) -> Option<&'static [u8]>;

static PRIMARY: std::sync::OnceLock<PrimaryWeights> = std::sync::OnceLock::new();

/// The collator's first bytes (see `oxsort_locale::xfrm_start`): appends at least the first
/// `want` bytes of the [`Collator`]'s image of a NUL-free string, or all of it, and says
/// whether it appended all of it.
pub type CollatorStart = fn(&[u8], &mut Vec<u8>, usize) -> bool;

static COLLATOR_START: std::sync::OnceLock<CollatorStart> = std::sync::OnceLock::new();

/// Installs where the first bytes of collated keys come from when primary weights alone do not
/// reach far enough (short keys: their later levels follow within the bytes asked for). It
/// must agree with the [`set_collator`] function. Without one, such keys are transformed whole.
pub fn set_collator_start(f: CollatorStart) {
    let _ = COLLATOR_START.set(f);
}

/// Installs where the collator's primary weights come from: with them, the first bytes of a
/// collated key are built from per-character weights instead of a whole transform. Without
/// one, every collated key is transformed whole.
pub fn set_primary_weights(f: PrimaryWeights) {
    let _ = PRIMARY.set(f);
}

/// Whether a collator is installed ([`set_collator`]): text keys then collate.
pub fn collating() -> bool {
    COLLATOR.get().is_some()
}

/// Appends the encoding of one GNU key's text (already cut out of the line). Only the first
/// `want` bytes are needed (`usize::MAX`: all of them): a collated text may then append just
/// its first bytes (at least `want`).
pub(crate) fn encode(kind: &GnuKind, text: &[u8], out: &mut Vec<u8>, want: usize) {
    if kind.ignore == GnuIgnore::None && !kind.fold {
        return encode_plain(kind, text, out, want);
    }
    let t: Vec<u8> = text
        .iter()
        .filter(|&&b| !kind.ignored(b))
        .map(|&b| if kind.fold { b.to_ascii_uppercase() } else { b })
        .collect();
    encode_plain(kind, &t, out, want);
}

fn encode_plain(kind: &GnuKind, t: &[u8], out: &mut Vec<u8>, want: usize) {
    match kind.order {
        GnuOrder::Text if kind.collate && want < usize::MAX => {
            if !collated_prefix(t, out, want) && !collated_start(t, out, want) {
                encode_text(true, t, out);
            }
        }
        GnuOrder::Text => encode_text(kind.collate, t, out),
        GnuOrder::Numeric => encode_numeric(kind, skip_blanks(t), out),
        GnuOrder::Human => {
            let t = skip_blanks(t);
            out.push((unit_order(kind, t) + 0x80) as u8);
            encode_numeric(kind, t, out);
        }
        GnuOrder::General => encode_general(t, out),
        GnuOrder::Month => out.push(month(t)),
        GnuOrder::Version => encode_version(t, out),
        GnuOrder::Random => {
            out.extend_from_slice(&keyed_hash(kind.seed, t));
            encode_text(kind.collate, t, out);
        }
    }
}

/// The text encoding: bytes (escaped) or, with `collate`, the locale's transformation.
pub(crate) fn encode_text(collate: bool, t: &[u8], out: &mut Vec<u8>) {
    match COLLATOR.get() {
        Some(xfrm) if collate => {
            // An empty key sorts before every other, even one that collates equal to it.
            if t.is_empty() {
                out.push(0x00);
                return;
            }
            out.push(0x01);
            for (i, piece) in t.split(|&b| b == 0).enumerate() {
                if i > 0 {
                    out.extend_from_slice(&[0x00, 0x01]);
                }
                xfrm(piece, out);
            }
            out.extend_from_slice(&[0x00, 0x00]);
        }
        _ => {
            for &b in t {
                out.push(b);
                if b == 0 {
                    out.push(0xFF);
                }
            }
            out.extend_from_slice(&[0, 0]);
        }
    }
}

/// Appends at least the first `want` bytes of [`encode_text`]`(true, t)` through the
/// [`CollatorStart`] hook: the image of a text without NUL, stopped early where the hook
/// stops. Returns false (appending nothing) without the hook, for empty text or text with a
/// NUL (several pieces).
fn collated_start(t: &[u8], out: &mut Vec<u8>, want: usize) -> bool {
    let (Some(start), Some(_)) = (COLLATOR_START.get(), COLLATOR.get()) else {
        return false;
    };
    if t.is_empty() || t.contains(&0) {
        return false;
    }
    out.push(0x01);
    if start(t, out, want.saturating_sub(1)) {
        out.extend_from_slice(&[0x00, 0x00]);
    }
    true
}

/// How many characters after the last one a collated prefix uses must have primary weights
/// too (or the text end before): a contraction reaching past the prefix's end, which would
/// change the weights in it, holds a character without a weight (one of its pairs does not
/// concatenate) within its length. glibc's longest contractions are shorter (Hungarian's
/// "ddzs", "ssz": a prefix ending in "s" before "sz" is not the weight of "s").
const CONTRACTION_REACH: usize = 8;

/// Appends at least the first `want` bytes of [`encode_text`]`(true, t)` from the primary
/// weights of `t`'s characters, when they reach that far: the image is `0x01` then the
/// transform, whose first bytes are the primary weights. The [`CONTRACTION_REACH`] characters
/// after the last one used must have weights too (or the text end there). Returns false
/// (appending nothing) when a character up to there has no weight, is a NUL or is not UTF-8,
/// when the primary weights are too short (then the level separator and later levels would
/// follow within the prefix), or when `want` is over [`STACK_PREFIX`].
fn collated_prefix(t: &[u8], out: &mut Vec<u8>, want: usize) -> bool {
    let (Some(weight), Some(_)) = (PRIMARY.get(), COLLATOR.get()) else {
        return false;
    };
    if want > STACK_PREFIX {
        return false;
    }
    // Built on the stack: a weight of ASCII is written as 4 bytes at once, its length counted.
    let mut buf = [0u8; STACK_PREFIX + WEIGHT_ROOM];
    buf[0] = 0x01;
    let mut len = 1;
    let mut rest = t;
    let mut enough = false;
    let mut ahead = 0;
    while let Some(&b) = rest.first() {
        let ascii = if b < 0x80 { ascii_weight(*weight, b) } else { None };
        let n = if let Some((padded, n)) = ascii {
            if !enough {
                buf[len..len + 4].copy_from_slice(&padded);
                len += n;
            }
            1
        } else {
            let Some((c, n)) = next_char(rest) else { break };
            let Some(w) = weight(c) else { break };
            if !enough {
                if w.len() > WEIGHT_ROOM {
                    break;
                }
                buf[len..len + w.len()].copy_from_slice(w);
                len += w.len();
            }
            n
        };
        rest = &rest[n..];
        if enough {
            ahead += 1;
            if ahead == CONTRACTION_REACH {
                break;
            }
        } else {
            enough = len >= want;
        }
    }
    if enough && (rest.is_empty() || ahead == CONTRACTION_REACH) {
        out.extend_from_slice(&buf[..len]);
        return true;
    }
    false
}

/// The longest collated prefix built from primary weights (longer ones are transformed
/// whole): the engine asks for 10 bytes (the entry's prefix) and 64 (the first stage of ties).
const STACK_PREFIX: usize = 128;

/// The longest primary weight of one character a collated prefix takes (a longer one sends
/// the key to the whole transform); en_US.UTF-8's are 1 to 4 bytes.
const WEIGHT_ROOM: usize = 32;

/// The primary weights of the 128 ASCII characters, each asked of the installed
/// [`PrimaryWeights`] when first met: the text of most keys is mostly ASCII, and an array
/// look-up costs less than a call through the hook per character (the hook's answers are fixed
/// once given). Asked one by one, not all at once: the hook proves each character's weight
/// against the C library's collation, at a cost that grows with the characters proven before,
/// so a small sort pays only for the characters of its text.
///
/// Each slot holds [`UNASKED`], or the weight zero-padded to 4 bytes (little-endian, the
/// low 32 bits) and its length above them; [`ASK_HOOK`] as the length for NUL, a character
/// without a weight, or a weight longer than 4 bytes (asked of the hook each time).
static ASCII_WEIGHTS: [AtomicU64; 128] = [const { AtomicU64::new(UNASKED) }; 128];

/// An [`ASCII_WEIGHTS`] slot not asked of the hook yet.
const UNASKED: u64 = u64::MAX;

/// [`ASCII_WEIGHTS`]'s length of a character the table does not hold.
const ASK_HOOK: u64 = 0xFF;

/// The primary weight of ASCII byte `b`, zero-padded to 4 bytes, and its length; `None` when
/// the hook is to be asked (see [`ASCII_WEIGHTS`]). Asks `weight` the first time.
#[inline]
fn ascii_weight(weight: PrimaryWeights, b: u8) -> Option<([u8; 4], usize)> {
    let slot = &ASCII_WEIGHTS[b as usize];
    // Relaxed: every thread that asks the hook stores the same value.
    let mut v = slot.load(Ordering::Relaxed);
    if v == UNASKED {
        v = ASK_HOOK << 32;
        if let Some(w) = (b != 0).then(|| weight(b as char)).flatten().filter(|w| w.len() <= 4) {
            let mut padded = [0u8; 4];
            padded[..w.len()].copy_from_slice(w);
            v = (w.len() as u64) << 32 | u32::from_le_bytes(padded) as u64;
        }
        slot.store(v, Ordering::Relaxed);
    }
    let n = v >> 32;
    (n != ASK_HOOK).then(|| ((v as u32).to_le_bytes(), n as usize))
}

/// The UTF-8 character at the start of `b` and its length; `None` at the end, at a NUL and
/// at bytes that are not UTF-8.
#[inline]
fn next_char(b: &[u8]) -> Option<(char, usize)> {
    let &first = b.first()?;
    if first < 0x80 {
        return (first != 0).then_some((first as char, 1));
    }
    let n = match first {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let s = std::str::from_utf8(b.get(..n)?).ok()?;
    s.chars().next().map(|c| (c, n))
}

fn skip_blanks(t: &[u8]) -> &[u8] {
    let n = t.iter().take_while(|&&b| is_blank(b)).count();
    &t[n..]
}

/// The number at the start of `t` (blanks already skipped) as GNU's `strnumcmp` reads it:
/// (negative, the integer part with its separators, the fraction digits).
fn parse_numeric<'t>(kind: &GnuKind, t: &'t [u8]) -> (bool, &'t [u8], &'t [u8]) {
    let negative = t.first() == Some(&b'-');
    let mut p = usize::from(negative);
    let int_start = p;
    while p < t.len() && (t[p].is_ascii_digit() || Some(t[p]) == kind.thousands_sep) {
        p += 1;
    }
    let int = &t[int_start..p];
    let mut frac: &[u8] = &[];
    if p < t.len() && t[p] == kind.decimal_point {
        let f = p + 1;
        let n = t[f..].iter().take_while(|b| b.is_ascii_digit()).count();
        frac = &t[f..f + n];
    }
    (negative, int, frac)
}

fn encode_numeric(kind: &GnuKind, t: &[u8], out: &mut Vec<u8>) {
    let (negative, int, frac) = parse_numeric(kind, t);
    let int = int.iter().filter(|b| b.is_ascii_digit()).map(|d| d - b'0');
    decimal::encode(out, negative, int, frac.iter().map(|d| d - b'0'));
}

/// The unit of a `-h` number: 0 without one (or for zero), 1 for K/k up to 8 for Y; negative
/// for negative numbers (GNU's `find_unit_order`). GNU sort 9.1 knows no R or Q.
fn unit_order(kind: &GnuKind, t: &[u8]) -> i32 {
    let negative = t.first() == Some(&b'-');
    let mut p = usize::from(negative);
    let mut max_digit = 0u8;
    let mut ends_with_sep = false;
    while p < t.len() && t[p].is_ascii_digit() {
        max_digit = max_digit.max(t[p]);
        p += 1;
        ends_with_sep = kind.thousands_sep.is_some() && t.get(p).copied() == kind.thousands_sep;
        if ends_with_sep {
            p += 1;
        }
    }
    if ends_with_sep {
        // A trailing separator ends the number before it: no unit.
        return 0;
    }
    if p < t.len() && t[p] == kind.decimal_point {
        p += 1;
        while p < t.len() && t[p].is_ascii_digit() {
            max_digit = max_digit.max(t[p]);
            p += 1;
        }
    }
    if max_digit <= b'0' {
        return 0;
    }
    let order = match t.get(p) {
        Some(b'K' | b'k') => 1,
        Some(b'M') => 2,
        Some(b'G') => 3,
        Some(b'T') => 4,
        Some(b'P') => 5,
        Some(b'E') => 6,
        Some(b'Z') => 7,
        Some(b'Y') => 8,
        _ => 0,
    };
    if negative {
        -order
    } else {
        order
    }
}

/// GNU's month table: the month of the abbreviation at the start of `t` (after blanks), 0 for
/// none. Case does not matter; `JANUARY` is January (only 3 letters are looked at).
pub(crate) fn month(t: &[u8]) -> u8 {
    month_len(t).0
}

/// The locale's month abbreviations, upper case, blanks removed, sorted, with their numbers
/// (set when `LC_TIME` is not C/POSIX).
static LOCALE_MONTHS: std::sync::OnceLock<Vec<(Vec<u8>, u8)>> = std::sync::OnceLock::new();

/// Installs the locale's twelve abbreviated month names (January first) for `-M`, as GNU
/// sort reads them when `LC_TIME` is not C/POSIX: blanks dropped, ASCII letters upper-cased.
/// Later calls are ignored.
pub fn set_month_names(names: &[Vec<u8>]) {
    let mut table: Vec<(Vec<u8>, u8)> = names
        .iter()
        .take(12)
        .enumerate()
        .map(|(i, n)| {
            let name = n.iter().filter(|&&b| b != b' ' && b != b'\t').map(u8::to_ascii_uppercase);
            (name.collect(), i as u8 + 1)
        })
        .collect();
    table.sort();
    let _ = LOCALE_MONTHS.set(table);
}

/// GNU's binary search of the month table: a name matches when it is a prefix of the
/// (upper-cased) text.
fn search_months(table: &[(Vec<u8>, u8)], t: &[u8]) -> (u8, usize) {
    let (mut lo, mut hi) = (0, table.len());
    while lo < hi {
        let ix = (lo + hi) / 2;
        let name = &table[ix].0;
        let mut j = 0;
        loop {
            if j == name.len() {
                return (table[ix].1, j);
            }
            let m = t.get(j).map_or(0, u8::to_ascii_uppercase);
            if m < name[j] {
                hi = ix;
                break;
            } else if m > name[j] {
                lo = ix + 1;
                break;
            }
            j += 1;
        }
    }
    (0, 0)
}

/// [`month`] and the length of the text it read (blanks included), for `--debug`.
pub(crate) fn month_len(t: &[u8]) -> (u8, usize) {
    if let Some(table) = LOCALE_MONTHS.get() {
        let blanks = t.len() - skip_blanks(t).len();
        return match search_months(table, &t[blanks..]) {
            (0, _) => (0, 0),
            (m, n) => (m, blanks + n),
        };
    }
    const MONTHS: [&[u8; 3]; 12] = [
        b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV",
        b"DEC",
    ];
    let blanks = t.len() - skip_blanks(t).len();
    let t = &t[blanks..];
    if t.len() >= 3 {
        let up = [t[0].to_ascii_uppercase(), t[1].to_ascii_uppercase(), t[2].to_ascii_uppercase()];
        if let Some(i) = MONTHS.iter().position(|m| **m == up) {
            return (i as u8 + 1, blanks + 3);
        }
    }
    (0, 0)
}

/// The length of the longest prefix of `t` that C's `strtod` reads as a number (0 if none),
/// and its value (NaN for `nan`, with its sign).
pub(crate) fn parse_general(t: &[u8]) -> (usize, f64) {
    let mut p = t.iter().take_while(|b| b" \t\n\x0B\x0C\r".contains(b)).count();
    let start = p;
    let negative = t.get(p) == Some(&b'-');
    if matches!(t.get(p), Some(b'-' | b'+')) {
        p += 1;
    }
    let sign = if negative { -1.0 } else { 1.0 };
    let rest = &t[p..];
    let lower = |n: usize| rest.iter().take(n).map(u8::to_ascii_lowercase).collect::<Vec<u8>>();
    if lower(8) == b"infinity" {
        return (p + 8, sign * f64::INFINITY);
    }
    if lower(3) == b"inf" {
        return (p + 3, sign * f64::INFINITY);
    }
    if lower(3) == b"nan" {
        let mut q = 3;
        if rest.get(3) == Some(&b'(') {
            let body = rest[4..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_');
            let n = body.count();
            if rest.get(4 + n) == Some(&b')') {
                q = 5 + n;
            }
        }
        return (p + q, if negative { -f64::NAN } else { f64::NAN });
    }
    if lower(2) == b"0x" {
        if let Some((n, v)) = parse_hex(&rest[2..]) {
            return (p + 2 + n, sign * v);
        }
        // "0x" without hex digits: strtod reads the "0".
        return (p + 1, sign * 0.0);
    }
    // Decimal: digits, optional point and digits (at least one digit), optional exponent.
    let mut q = 0;
    let digits = |from: usize| rest[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let int = digits(q);
    q += int;
    let mut frac = 0;
    if rest.get(q) == Some(&b'.') {
        frac = digits(q + 1);
        if int + frac > 0 {
            q += 1 + frac;
        }
    }
    if int + frac == 0 {
        return (0, 0.0);
    }
    if matches!(rest.get(q), Some(b'e' | b'E')) {
        let mut e = q + 1;
        if matches!(rest.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        let n = digits(e);
        if n > 0 {
            q = e + n;
        }
    }
    let s = std::str::from_utf8(&rest[..q]).unwrap_or("0");
    let v: f64 = s.parse().unwrap_or(0.0);
    let _ = start;
    (p + q, sign * v)
}

/// A hexadecimal float body after `0x`: hex digits, optional point and hex digits, optional
/// `p` binary exponent. `None` without any hex digit.
fn parse_hex(t: &[u8]) -> Option<(usize, f64)> {
    let hex = |from: usize| t[from..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let int = hex(0);
    let mut q = int;
    let mut frac = 0;
    if t.get(q) == Some(&b'.') {
        frac = hex(q + 1);
        if int + frac > 0 {
            q += 1 + frac;
        }
    }
    if int + frac == 0 {
        return None;
    }
    let mut v = 0f64;
    let mut scale = 0i32;
    for (i, &b) in t[..q].iter().enumerate() {
        if b == b'.' {
            continue;
        }
        let d = (b as char).to_digit(16).unwrap_or(0) as f64;
        v = v * 16.0 + d;
        if i > int {
            scale -= 4;
        }
    }
    if matches!(t.get(q), Some(b'p' | b'P')) {
        let mut e = q + 1;
        let neg = t.get(e) == Some(&b'-');
        if matches!(t.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        let n = t[e..].iter().take_while(|b| b.is_ascii_digit()).count();
        if n > 0 {
            let exp: i32 = std::str::from_utf8(&t[e..e + n])
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(i32::MAX / 2)
                .min(100_000);
            scale += if neg { -exp } else { exp };
            q = e + n;
        }
    }
    Some((q, v * 2f64.powi(scale)))
}

fn encode_general(t: &[u8], out: &mut Vec<u8>) {
    let (n, v) = parse_general(t);
    if n == 0 {
        out.push(0x01);
    } else if v.is_nan() {
        // GNU sort 9.1 orders NaNs by the bytes of the long double (memcmp): "-nan", with the
        // sign bit set, after "nan". (Payloads and padding make its order of two positive
        // NaNs arbitrary; here they are equal.)
        out.extend_from_slice(&[0x02, u8::from(v.is_sign_negative())]);
    } else {
        out.push(0x03);
        out.extend_from_slice(&crate::float::float64_key(v.to_bits()).to_be_bytes());
    }
}

/// The byte a non-digit weighs in a version run (two bytes for non-letters).
fn version_char(b: u8, out: &mut Vec<u8>) {
    if b == b'~' {
        out.push(0x01);
    } else if b.is_ascii_alphabetic() {
        out.push(b);
    } else {
        out.extend_from_slice(&[0xFF, b]);
    }
}

/// End of a non-digit run (before its number) and end of the name (after a number).
const VERSION_END: u8 = 0x02;

/// One pass of `verrevcmp` as tokens.
fn version_tokens(s: &[u8], out: &mut Vec<u8>) {
    let mut p = 0;
    loop {
        while p < s.len() && !s[p].is_ascii_digit() {
            version_char(s[p], out);
            p += 1;
        }
        out.push(VERSION_END);
        while p < s.len() && s[p] == b'0' {
            p += 1;
        }
        let start = p;
        while p < s.len() && s[p].is_ascii_digit() {
            p += 1;
        }
        let n = p - start;
        if n < 0xFF {
            out.push(n as u8);
        } else {
            out.push(0xFF);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
        out.extend_from_slice(&s[start..p]);
        if p == s.len() {
            out.push(VERSION_END);
            return;
        }
    }
}

/// The length of `s` without its file suffix: the longest match of
/// `(\.[A-Za-z~][A-Za-z0-9~]*)*$`. In GNU sort 9.1 the suffix may be the whole name (`.h`
/// has an empty prefix, so it sorts before `.9`).
fn version_prefix_len(s: &[u8]) -> usize {
    let n = s.len();
    let mut prefix = 0;
    let mut i = 0;
    loop {
        while i + 1 < n && s[i] == b'.' && (s[i + 1].is_ascii_alphabetic() || s[i + 1] == b'~') {
            i += 2;
            while i < n && (s[i].is_ascii_alphanumeric() || s[i] == b'~') {
                i += 1;
            }
        }
        if i == n {
            return prefix;
        }
        i += 1;
        prefix = i;
    }
}

fn encode_version(s: &[u8], out: &mut Vec<u8>) {
    let class = match s {
        [] => 0,
        [b'.'] => 1,
        [b'.', b'.'] => 2,
        [b'.', ..] => 3,
        _ => 4,
    };
    out.push(class);
    if class < 3 {
        return;
    }
    version_tokens(&s[..version_prefix_len(s)], out);
    version_tokens(s, out);
}

/// A 128-bit keyed hash (SipHash-1-3 twice, keyed by `seed`) of `t`, for `-R`.
fn keyed_hash(seed: [u64; 2], t: &[u8]) -> [u8; 16] {
    use std::hash::Hasher;
    let mut out = [0u8; 16];
    for (i, half) in out.chunks_mut(8).enumerate() {
        #[allow(deprecated)]
        let mut h = std::hash::SipHasher::new_with_keys(seed[0], seed[1] ^ i as u64);
        h.write(t);
        half.copy_from_slice(&h.finish().to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests;

/// The month of a `-M` key and how many bytes of it were read (blanks included); (0, 0) for
/// none. For `--debug` underlines.
pub fn gnu_month_len(t: &[u8]) -> (u8, usize) {
    month_len(t)
}

/// How many bytes of a `-g` key `strtod` reads (0 for none). For `--debug` underlines.
pub fn gnu_general_len(t: &[u8]) -> usize {
    parse_general(t).0
}

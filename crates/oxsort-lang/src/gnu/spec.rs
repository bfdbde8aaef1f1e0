//! GNU sort's keys as written (`-k POS1[,POS2]`, obsolete `+POS1 -POS2`, global ordering
//! options) and the [`KeySpec`] they make.
//!
//! The rules are GNU sort 9.x's:
//! - A `-k` key with no ordering option of its own (`b d f g h i M n R V`, and not `r`) takes
//!   every global option, `-r` included.
//! - Without `-k`, global ordering options make one key of the whole line.
//! - Unless `-s` or `-u`, lines whose keys tie compare as whole lines (bytes, or the locale's
//!   collation), reversed by a global `-r`: this last resort is the spec's last field. Without
//!   any key it is the only field.
//! - `-n -g -h -M` and one of (`-V`, `-R`, `-d`/`-i`) exclude each other per key.
//!
//! ```text
//!  -t, -k2,2n -k1,1      ─►  [ col 2: Gnu{Numeric} | col 1: Gnu{Text} | line: Gnu{Text} ]
//!  -s -k3r               ─►  [ col 3..end: Gnu{Text}, descending ]
//!  -n                    ─►  [ line: Gnu{Numeric} | line: Gnu{Text} ]
//! ```

use oxsort_format::{ColumnEnd, ColumnSpan};
use oxsort_format::{FieldType, KeyField, KeySpec, ShortFields};
use oxsort_format::{GnuIgnore, GnuKind, GnuOrder};

/// A bad key definition or a bad combination of ordering options, worded as GNU sort words
/// it (the text after `sort: `).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GnuKeyError {
    /// A number could not be read: `invalid number at field start: invalid count at start
    /// of 'x'`.
    #[error("{what}: invalid count at start of '{text}'")]
    BadCount {
        /// Which number (`invalid number at field start`, `invalid number after ','`...).
        what: &'static str,
        /// The text from where the number should start.
        text: String,
    },
    /// `field number is zero: invalid field specification '0'` and the like.
    #[error("{what}: invalid field specification '{spec}'")]
    BadSpec {
        /// What is wrong.
        what: &'static str,
        /// The whole key definition.
        spec: String,
    },
    /// `options '-gn' are incompatible`.
    #[error("options '-{0}' are incompatible")]
    Incompatible(String),
}

/// One key: where it is and how it compares. Field and character numbers are GNU's
/// internal ones: `sword` 0-based (`None`: the line's start), `schar` 0-based, `eword`
/// 0-based (`None`: the line's end), `echar` 1-based (0: the end of field `eword`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GnuKey {
    /// First field skipped to (0-based); `None` when the key starts at the line's start.
    pub sword: Option<usize>,
    /// Characters skipped in that field (0-based).
    pub schar: usize,
    /// Last field (0-based); `None`: to the end of the line.
    pub eword: Option<usize>,
    /// Last character in field `eword` (1-based); 0: the whole field.
    pub echar: usize,
    /// `b` on the start position.
    pub skip_start_blanks: bool,
    /// `b` on the end position.
    pub skip_end_blanks: bool,
    /// `d` or `i`.
    pub ignore: GnuIgnore,
    /// `f`.
    pub fold: bool,
    /// `n`.
    pub numeric: bool,
    /// `g`.
    pub general: bool,
    /// `h`.
    pub human: bool,
    /// `M`.
    pub month: bool,
    /// `V`.
    pub version: bool,
    /// `R`.
    pub random: bool,
    /// `r`.
    pub reverse: bool,
    /// Written as `+POS1 [-POS2]` (reported by `--debug`).
    pub traditional: bool,
}

/// Which position a `b` applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Blanks {
    /// The start (`-k 2b`).
    Start,
    /// The end (`-k 2,3b`).
    End,
    /// Both (a global `-b`).
    Both,
}

impl GnuKey {
    /// Applies ordering letters (`bdfghiMnRrV`) from the start of `s`; returns how many bytes
    /// were letters.
    pub fn set_ordering(&mut self, s: &[u8], blanks: Blanks) -> usize {
        let mut n = 0;
        for &c in s {
            match c {
                b'b' => {
                    if blanks != Blanks::End {
                        self.skip_start_blanks = true;
                    }
                    if blanks != Blanks::Start {
                        self.skip_end_blanks = true;
                    }
                }
                b'd' => self.ignore = GnuIgnore::NonDictionary,
                b'i' => {
                    if self.ignore == GnuIgnore::None {
                        self.ignore = GnuIgnore::NonPrinting;
                    }
                }
                b'f' => self.fold = true,
                b'g' => self.general = true,
                b'h' => self.human = true,
                b'M' => self.month = true,
                b'n' => self.numeric = true,
                b'R' => self.random = true,
                b'r' => self.reverse = true,
                b'V' => self.version = true,
                _ => break,
            }
            n += 1;
        }
        n
    }

    /// Parses a `-k` key definition `F[.C][OPTS][,F[.C][OPTS]]`.
    pub fn parse(spec: &str) -> Result<GnuKey, GnuKeyError> {
        let b = spec.as_bytes();
        let bad = |what| GnuKeyError::BadSpec { what, spec: spec.to_string() };
        let mut key = GnuKey::default();
        let (sword, mut p) = field_count(b, 0, "invalid number at field start")?;
        if sword == 0 {
            return Err(bad("field number is zero"));
        }
        let sword = sword - 1;
        if b.get(p) == Some(&b'.') {
            let (schar, q) = field_count(b, p + 1, "invalid number after '.'")?;
            if schar == 0 {
                return Err(bad("character offset is zero"));
            }
            key.schar = schar - 1;
            p = q;
        }
        key.sword = if sword == 0 && key.schar == 0 { None } else { Some(sword) };
        p += key.set_ordering(&b[p..], Blanks::Start);
        if b.get(p) == Some(&b',') {
            let (eword, q) = field_count(b, p + 1, "invalid number after ','")?;
            if eword == 0 {
                return Err(bad("field number is zero"));
            }
            key.eword = Some(eword - 1);
            p = q;
            if b.get(p) == Some(&b'.') {
                let (echar, q) = field_count(b, p + 1, "invalid number after '.'")?;
                key.echar = echar;
                p = q;
            }
            p += key.set_ordering(&b[p..], Blanks::End);
        }
        if p < b.len() {
            return Err(bad("stray character in field spec"));
        }
        Ok(key)
    }

    /// Parses an obsolete `+POS1` (and the `-POS2` after it, if any). `None` when `pos1` is
    /// not a key (GNU then reads it as a file name).
    pub fn parse_obsolete(pos1: &str, pos2: Option<&str>) -> Result<Option<GnuKey>, GnuKeyError> {
        let b = pos1.as_bytes();
        let Some(b'+') = b.first() else { return Ok(None) };
        let mut key = GnuKey { traditional: true, ..GnuKey::default() };
        let Ok((sword, mut p)) = field_count(b, 1, "") else { return Ok(None) };
        if b.get(p) == Some(&b'.') {
            let Ok((schar, q)) = field_count(b, p + 1, "") else { return Ok(None) };
            key.schar = schar;
            p = q;
        }
        key.sword = if sword == 0 && key.schar == 0 { None } else { Some(sword) };
        p += key.set_ordering(&b[p..], Blanks::Start);
        if p < b.len() {
            return Ok(None);
        }
        if let Some(pos2) = pos2 {
            let b = pos2.as_bytes();
            let (eword, mut p) = field_count(b, 1, "invalid number after '-'")?;
            let mut echar = 0;
            if b.get(p) == Some(&b'.') {
                let (c, q) = field_count(b, p + 1, "invalid number after '.'")?;
                echar = c;
                p = q;
            }
            // "+A.x -B.y" is "-k A+1.x+1,B.y" when y = 0, else "-k A+1.x+1,B+1.y".
            key.eword = Some(if echar == 0 && eword > 0 { eword - 1 } else { eword });
            key.echar = echar;
            p += key.set_ordering(&b[p..], Blanks::End);
            if p < b.len() {
                return Err(GnuKeyError::BadSpec {
                    what: "stray character in field spec",
                    spec: pos2.to_string(),
                });
            }
        }
        Ok(Some(key))
    }

    /// Whether the key has no ordering option but `r` (then it inherits the global ones).
    pub fn is_default(&self) -> bool {
        !(self.ignore != GnuIgnore::None
            || self.fold
            || self.skip_start_blanks
            || self.skip_end_blanks
            || self.numeric
            || self.general
            || self.human
            || self.month
            || self.version
            || self.random)
    }

    /// The key's ordering options as GNU's messages list them (`bdfghiMnRrV` order).
    pub fn opts(&self) -> String {
        let mut s = String::new();
        for (on, c) in [
            (self.skip_start_blanks || self.skip_end_blanks, 'b'),
            (self.ignore == GnuIgnore::NonDictionary, 'd'),
            (self.fold, 'f'),
            (self.general, 'g'),
            (self.human, 'h'),
            (self.ignore == GnuIgnore::NonPrinting, 'i'),
            (self.month, 'M'),
            (self.numeric, 'n'),
            (self.random, 'R'),
            (self.reverse, 'r'),
            (self.version, 'V'),
        ] {
            if on {
                s.push(c);
            }
        }
        s
    }

    /// Takes every global option (a key without options of its own).
    fn inherit(&mut self, g: &GnuKey) {
        self.ignore = g.ignore;
        self.fold = g.fold;
        self.skip_start_blanks = g.skip_start_blanks;
        self.skip_end_blanks = g.skip_end_blanks;
        self.month = g.month;
        self.numeric = g.numeric;
        self.general = g.general;
        self.human = g.human;
        self.version = g.version;
        self.random = g.random;
        self.reverse = g.reverse;
    }

    /// Whether the key uses a numeric comparison (`n g h`).
    pub fn is_numeric(&self) -> bool {
        self.numeric || self.general || self.human
    }

    /// The columns the key covers.
    pub fn span(&self) -> ColumnSpan {
        ColumnSpan {
            start_field: self.sword.unwrap_or(0),
            start_char: if self.sword.is_some() { self.schar } else { 0 },
            skip_start_blanks: self.skip_start_blanks,
            end: self.eword.map(|field| ColumnEnd {
                field,
                char: self.echar,
                skip_blanks: self.skip_end_blanks,
            }),
        }
    }

    fn order(&self) -> GnuOrder {
        if self.numeric {
            GnuOrder::Numeric
        } else if self.general {
            GnuOrder::General
        } else if self.human {
            GnuOrder::Human
        } else if self.month {
            GnuOrder::Month
        } else if self.random {
            GnuOrder::Random
        } else if self.version {
            GnuOrder::Version
        } else {
            GnuOrder::Text
        }
    }
}

/// Reads a GNU field count at `b[p..]` (`xstrtoumax`: optional blanks and `+`, digits; a
/// count too big saturates). Returns the count and where it ended.
fn field_count(b: &[u8], p: usize, what: &'static str) -> Result<(usize, usize), GnuKeyError> {
    let mut q = p;
    while q < b.len() && b[q].is_ascii_whitespace() {
        q += 1;
    }
    if b.get(q) == Some(&b'+') {
        q += 1;
    }
    let start = q;
    let mut n: usize = 0;
    while q < b.len() && b[q].is_ascii_digit() {
        n = n.saturating_mul(10).saturating_add(usize::from(b[q] - b'0'));
        q += 1;
    }
    if q == start {
        return Err(GnuKeyError::BadCount {
            what,
            text: String::from_utf8_lossy(&b[p..]).into_owned(),
        });
    }
    Ok((n, q))
}

/// The global state of a GNU sort command line that decides the order.
#[derive(Debug, Clone, Default)]
pub struct GnuOptions {
    /// The `-k` and `+POS` keys, in order.
    pub keys: Vec<GnuKey>,
    /// Global ordering options (`-b -d -f -g -h -i -M -n -R -r -V`).
    pub global: GnuKey,
    /// `-t`.
    pub separator: Option<u8>,
    /// `-s`.
    pub stable: bool,
    /// `-u`.
    pub unique: bool,
    /// Text collates with the locale (`LC_COLLATE` other than C/POSIX).
    pub collate: bool,
    /// The locale's decimal point (`.` in C).
    pub decimal_point: u8,
    /// The locale's one-byte thousands separator, if any.
    pub thousands_sep: Option<u8>,
    /// The `-R` hash key.
    pub seed: [u64; 2],
}

impl GnuOptions {
    /// The keys as GNU compares them: `-k` keys with the global options inherited where they
    /// have none, or the one whole-line key the global options make; whether that key is the
    /// global one alone (`gkey_only` in GNU sort).
    pub fn effective_keys(&self) -> (Vec<GnuKey>, bool) {
        let mut keys = self.keys.clone();
        for k in &mut keys {
            if k.is_default() && !k.reverse {
                k.inherit(&self.global);
            }
        }
        if keys.is_empty() && !self.global.is_default() {
            let mut g = self.global;
            g.sword = None;
            g.eword = None;
            return (vec![g], true);
        }
        (keys, false)
    }

    /// Refuses keys with orderings that exclude each other (`options '-gn' are
    /// incompatible`).
    pub fn check(&self) -> Result<(), GnuKeyError> {
        for k in self.effective_keys().0 {
            let exclusive = usize::from(k.numeric)
                + usize::from(k.general)
                + usize::from(k.human)
                + usize::from(k.month)
                + usize::from(k.version || k.random || k.ignore != GnuIgnore::None);
            if exclusive > 1 {
                let k = GnuKey {
                    skip_start_blanks: false,
                    skip_end_blanks: false,
                    reverse: false,
                    ..k
                };
                return Err(GnuKeyError::Incompatible(k.opts()));
            }
        }
        Ok(())
    }

    /// The kind of a key's comparison.
    pub fn kind(&self, k: &GnuKey) -> GnuKind {
        GnuKind {
            order: k.order(),
            ignore: k.ignore,
            fold: k.fold,
            collate: self.collate,
            decimal_point: self.decimal_point,
            thousands_sep: self.thousands_sep,
            seed: self.seed,
        }
    }

    /// Whether the last-resort whole-line comparison follows the keys.
    pub fn last_resort(&self) -> bool {
        let (keys, _) = self.effective_keys();
        keys.is_empty() || !(self.stable || self.unique)
    }

    /// The key of the whole command line, last resort included.
    pub fn key_spec(&self) -> KeySpec {
        let (keys, _) = self.effective_keys();
        let mut fields: Vec<KeyField> = keys
            .iter()
            .map(|k| KeyField::columns(k.span(), FieldType::Gnu(self.kind(k)), k.reverse))
            .collect();
        if self.last_resort() {
            let text = GnuKind {
                collate: self.collate,
                decimal_point: self.decimal_point,
                ..GnuKind::default()
            };
            fields.push(KeyField::columns(
                ColumnSpan::whole(),
                FieldType::Gnu(text),
                self.global.reverse,
            ));
        }
        KeySpec { fields, separator: self.separator, short_fields: ShortFields::Error }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_definitions_and_gnu_messages() {
        let k = GnuKey::parse("2.3bn,4.5r").unwrap();
        assert_eq!((k.sword, k.schar, k.eword, k.echar), (Some(1), 2, Some(3), 5));
        assert!(k.skip_start_blanks && !k.skip_end_blanks && k.numeric && k.reverse);
        assert_eq!(GnuKey::parse("1").unwrap().sword, None);
        let e = |s: &str| GnuKey::parse(s).unwrap_err().to_string();
        assert_eq!(e("0"), "field number is zero: invalid field specification '0'");
        assert_eq!(e("1.0"), "character offset is zero: invalid field specification '1.0'");
        assert_eq!(e("x"), "invalid number at field start: invalid count at start of 'x'");
        assert_eq!(e("1,"), "invalid number after ',': invalid count at start of ''");
        assert_eq!(e("1Q"), "stray character in field spec: invalid field specification '1Q'");
    }

    #[test]
    fn obsolete_positions() {
        // +1 -2 is -k2,2; +1.2 -2.3 is -k2.3,3.3.
        let k = GnuKey::parse_obsolete("+1", Some("-2")).unwrap().unwrap();
        assert_eq!((k.sword, k.eword, k.echar), (Some(1), Some(1), 0));
        let k = GnuKey::parse_obsolete("+1.2", Some("-2.3")).unwrap().unwrap();
        assert_eq!((k.sword, k.schar, k.eword, k.echar), (Some(1), 2, Some(2), 3));
        assert_eq!(GnuKey::parse_obsolete("+x", None).unwrap(), None);
    }

    #[test]
    fn inheritance_last_resort_and_incompatibility() {
        let mut o = GnuOptions { decimal_point: b'.', ..GnuOptions::default() };
        o.global.set_ordering(b"nr", Blanks::Both);
        o.keys = vec![GnuKey::parse("2").unwrap(), GnuKey::parse("3r").unwrap()];
        let (keys, only) = o.effective_keys();
        assert!(!only);
        assert!(keys[0].numeric && keys[0].reverse, "a bare key takes the global options");
        assert!(!keys[1].numeric && keys[1].reverse, "a key with r keeps its own");
        assert_eq!(o.key_spec().fields.len(), 3, "two keys and the last resort");
        o.stable = true;
        assert_eq!(o.key_spec().fields.len(), 2);
        o.keys = vec![GnuKey::parse("1,1gM").unwrap()];
        assert_eq!(o.check().unwrap_err().to_string(), "options '-gM' are incompatible");
        let mut d = GnuOptions::default();
        d.global.set_ordering(b"dn", Blanks::Both);
        assert_eq!(d.check().unwrap_err().to_string(), "options '-dn' are incompatible");
    }
}

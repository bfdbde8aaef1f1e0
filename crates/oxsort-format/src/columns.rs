//! Delimited columns, located the way GNU `sort -k` locates them (C locale).
//!
//! With a separator byte (`-t X`) every `X` ends a field, so `a,,b` has an empty second
//! field. Without one, a field is a run of non-blanks together with the blanks before it, so
//! leading blanks belong to the field (`-b` skips them). Blanks are space, tab and newline.
//!
//! ```text
//!  line:  "  ab  cd"       no separator
//!  field 1 = "  ab", field 2 = "  cd"
//!  -k2     -> "  cd"        -k2b   -> "cd"       -k1.2,1.3 -> " a"
//! ```

use std::ops::Range;

/// Where a column key ends: GNU's `POS2` (`-k POS1,POS2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColumnEnd {
    /// 0-based field index (`-k1,3` has 2).
    pub field: usize,
    /// 1-based last character in that field, inclusive; 0 means the end of the field.
    pub char: usize,
    /// Count `char` from the first non-blank of the field (`b` on `POS2`).
    pub skip_blanks: bool,
}

/// A key made of a range of columns: GNU's `-k POS1[,POS2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColumnSpan {
    /// 0-based field index where the key starts (`-k2` has 1).
    pub start_field: usize,
    /// 0-based character offset in that field (`-k2.3` has 2).
    pub start_char: usize,
    /// Skip blanks at the start of the field before counting `start_char` (`b` on `POS1`).
    pub skip_start_blanks: bool,
    /// Where the key ends; `None` for the end of the record.
    pub end: Option<ColumnEnd>,
}

impl ColumnSpan {
    /// The whole record.
    pub fn whole() -> ColumnSpan {
        ColumnSpan { start_field: 0, start_char: 0, skip_start_blanks: false, end: None }
    }

    /// Exactly field `field` (0-based), as GNU's `-kN,N` for N = field + 1.
    pub fn field(field: usize) -> ColumnSpan {
        ColumnSpan {
            start_field: field,
            start_char: 0,
            skip_start_blanks: false,
            end: Some(ColumnEnd { field, char: 0, skip_blanks: false }),
        }
    }

    /// The byte range of `record` (without its terminator) the key covers; empty when the
    /// end comes before the start.
    pub fn locate(&self, record: &[u8], separator: Option<u8>) -> Range<usize> {
        let start = self.begin(record, separator);
        let end = match self.end {
            None => record.len(),
            Some(end) => limit(record, separator, end),
        };
        start..end.max(start)
    }

    fn begin(&self, line: &[u8], separator: Option<u8>) -> usize {
        let lim = line.len();
        let mut p = skip_fields(line, separator, self.start_field, true);
        if self.skip_start_blanks {
            p = skip_blanks(line, p);
        }
        lim.min(p + self.start_char)
    }
}

/// Most fields a [`FieldEnds`] tracks: keys on later columns are located by
/// [`ColumnSpan::locate`] instead.
pub(crate) const MAX_TRACKED_FIELDS: usize = 16;

/// The field boundaries of one record, found left to right once and only as far as asked,
/// so that several keys on the same record do not each rescan it from its start (as
/// [`ColumnSpan::locate`] does, twice for a key with an end).
///
/// ```text
///  record   "ab,cde,,f"        separator ','          "  ab  cd"   blanks
///  ends      [2][  6][7][9]     field j ends at its     [  4][  8]  field j ends after
///  starts    0  3    7  8       separator (or the end)  0    4      its non-blanks
/// ```
///
/// With a separator, field `k` starts after the separator that ends field `k - 1`; without
/// one, field `k` starts where field `k - 1` ends (its leading blanks belong to it).
pub(crate) struct FieldEnds<'r> {
    line: &'r [u8],
    separator: Option<u8>,
    /// `ends[j]` for `j < found`.
    ends: [usize; MAX_TRACKED_FIELDS],
    found: usize,
    /// Where the search for the next field's end starts.
    scan: usize,
}

impl<'r> FieldEnds<'r> {
    pub(crate) fn new(line: &'r [u8], separator: Option<u8>) -> Self {
        FieldEnds { line, separator, ends: [0; MAX_TRACKED_FIELDS], found: 0, scan: 0 }
    }

    /// Whether `span` lies within the tracked fields.
    pub(crate) fn tracks(span: &ColumnSpan) -> bool {
        span.start_field < MAX_TRACKED_FIELDS
            && span.end.is_none_or(|e| e.field < MAX_TRACKED_FIELDS)
    }

    /// Where field `j` (0-based, below [`MAX_TRACKED_FIELDS`]) ends: at its separator, or
    /// after its non-blanks; the record's end for a field past the last.
    #[inline]
    fn end(&mut self, j: usize) -> usize {
        if j < self.found {
            return self.ends[j];
        }
        self.search(j)
    }

    /// [`FieldEnds::end`] of a field not found yet.
    fn search(&mut self, j: usize) -> usize {
        let lim = self.line.len();
        while self.found <= j {
            let e = if self.scan >= lim {
                lim
            } else {
                match self.separator {
                    Some(sep) => {
                        find_byte(&self.line[self.scan..], sep).map_or(lim, |i| self.scan + i)
                    }
                    None => {
                        let mut p = skip_blanks(self.line, self.scan);
                        while p < lim && !is_blank(self.line[p]) {
                            p += 1;
                        }
                        p
                    }
                }
            };
            self.ends[self.found] = e;
            self.found += 1;
            self.scan = match self.separator {
                Some(_) => (e + 1).min(lim),
                None => e,
            };
        }
        self.ends[j]
    }

    /// Finds the ends of fields `0..=last` (below [`MAX_TRACKED_FIELDS`]) ahead of need.
    /// With a separator, every separator of a word is taken from one test of it, where [`end`]
    /// searches anew for each field: a key on fields 1 and 2 finds both in the first words.
    /// Only the first [`SHORT_SEARCH`] bytes are tested so: the ends past them (a last field
    /// that runs to the end of a long line) are left to [`end`], which hands long searches to
    /// `memchr`.
    ///
    /// [`end`]: FieldEnds::end
    #[inline]
    pub(crate) fn fill(&mut self, last: usize) {
        let Some(sep) = self.separator else { return };
        let mut i = self.scan;
        let stop = self.line.len().min(i + SHORT_SEARCH);
        while self.found <= last && i + 8 <= stop {
            let mut zero = matches_in_word(&self.line[i..i + 8], sep);
            while zero != 0 && self.found <= last {
                self.ends[self.found] = i + (zero.trailing_zeros() / 8) as usize;
                self.found += 1;
                zero &= zero - 1;
            }
            i += 8;
        }
        self.scan = match self.found {
            f if f > last => self.ends[f - 1] + 1,
            _ => i,
        };
    }

    /// Where field `k` starts.
    #[inline]
    fn start(&mut self, k: usize) -> usize {
        match (k, self.separator) {
            (0, _) => 0,
            (k, Some(_)) => (self.end(k - 1) + 1).min(self.line.len()),
            (k, None) => self.end(k - 1),
        }
    }

    /// The byte range `span` covers, as [`ColumnSpan::locate`] finds it (`span` must be
    /// [tracked](FieldEnds::tracks)).
    #[inline]
    pub(crate) fn locate(&mut self, span: &ColumnSpan) -> Range<usize> {
        let lim = self.line.len();
        let mut p = self.start(span.start_field);
        if span.skip_start_blanks {
            p = skip_blanks(self.line, p);
        }
        let start = lim.min(p + span.start_char);
        let end = match span.end {
            None => lim,
            Some(end) if end.char == 0 => self.end(end.field),
            Some(end) => {
                let mut p = self.start(end.field);
                if end.skip_blanks {
                    p = skip_blanks(self.line, p);
                }
                lim.min(p + end.char)
            }
        };
        start..end.max(start)
    }
}

/// Bytes [`find_byte`] (and [`FieldEnds::fill`]) search a word at a time before they hand
/// over to `memchr`: fields are mostly short, and `memchr`'s vector set-up costs more than
/// the search of a few words.
const SHORT_SEARCH: usize = 32;

/// The bytes of the 8-byte `word` equal to `b`: the high bit of each set, byte `k` of the word
/// at bits `8k..8k + 8` (exactly: no borrow crosses bytes, so every match is marked, not only
/// the first).
#[inline]
fn matches_in_word(word: &[u8], b: u8) -> u64 {
    const LOWS: u64 = u64::from_ne_bytes([0x7F; 8]);
    let mut w = [0; 8];
    w.copy_from_slice(word);
    let x = u64::from_le_bytes(w) ^ u64::from_ne_bytes([b; 8]);
    !(((x & LOWS) + LOWS) | x | LOWS)
}

/// The first position of `b` in `hay`.
#[inline]
fn find_byte(hay: &[u8], b: u8) -> Option<usize> {
    let mut i = 0;
    while i + 8 <= hay.len().min(SHORT_SEARCH) {
        let zero = matches_in_word(&hay[i..i + 8], b);
        if zero != 0 {
            return Some(i + (zero.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    if i < SHORT_SEARCH {
        hay[i..].iter().position(|&c| c == b).map(|p| i + p)
    } else {
        memchr::memchr(b, &hay[i..]).map(|p| i + p)
    }
}

/// Whether GNU sort treats `b` as a blank in the C locale.
pub(crate) fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\n'
}

fn skip_blanks(line: &[u8], mut p: usize) -> usize {
    while p < line.len() && is_blank(line[p]) {
        p += 1;
    }
    p
}

/// Moves past `count` fields from the start of `line`. With a separator, the separator after
/// the last skipped field is consumed only if `eat_last_separator`.
fn skip_fields(
    line: &[u8],
    separator: Option<u8>,
    count: usize,
    eat_last_separator: bool,
) -> usize {
    let lim = line.len();
    let mut p = 0;
    let mut left = count;
    match separator {
        Some(sep) => {
            while p < lim && left > 0 {
                left -= 1;
                while p < lim && line[p] != sep {
                    p += 1;
                }
                if p < lim && (left > 0 || eat_last_separator) {
                    p += 1;
                }
            }
        }
        None => {
            while p < lim && left > 0 {
                left -= 1;
                p = skip_blanks(line, p);
                while p < lim && !is_blank(line[p]) {
                    p += 1;
                }
            }
        }
    }
    p
}

fn limit(line: &[u8], separator: Option<u8>, end: ColumnEnd) -> usize {
    let lim = line.len();
    if end.char == 0 {
        // The whole end field: skip it too, stopping before its separator.
        return skip_fields(line, separator, end.field + 1, false);
    }
    let mut p = skip_fields(line, separator, end.field, true);
    if end.skip_blanks {
        p = skip_blanks(line, p);
    }
    lim.min(p + end.char)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Just;

    fn key(line: &[u8], span: ColumnSpan, sep: Option<u8>) -> &[u8] {
        &line[span.locate(line, sep)]
    }

    #[test]
    fn blank_separated_fields_keep_leading_blanks() {
        let line = b"  ab  cd";
        assert_eq!(key(line, ColumnSpan::field(0), None), b"  ab");
        assert_eq!(key(line, ColumnSpan::field(1), None), b"  cd");
        assert_eq!(key(line, ColumnSpan::field(2), None), b"");
        let b = ColumnSpan { skip_start_blanks: true, ..ColumnSpan::field(1) };
        assert_eq!(key(line, b, None), b"cd");
        let chars = ColumnSpan {
            start_field: 0,
            start_char: 1,
            skip_start_blanks: false,
            end: Some(ColumnEnd { field: 0, char: 3, skip_blanks: false }),
        };
        assert_eq!(key(line, chars, None), b" a");
        assert_eq!(key(line, ColumnSpan::whole(), None), line);
    }

    proptest::proptest! {
        #[test]
        fn field_ends_locate_as_spans_do(
            line in proptest::collection::vec(
                proptest::prop_oneof![Just(b' '), Just(b'\t'), Just(b','), Just(b'a'), Just(b'b')],
                0..24,
            ),
            spans in proptest::collection::vec(
                (0..5usize, 0..3usize, proptest::bool::ANY,
                 proptest::option::of((0..5usize, 0..3usize, proptest::bool::ANY))),
                1..4,
            ),
            separator in proptest::prop_oneof![Just(None), Just(Some(b','))],
        ) {
            // One FieldEnds for all the spans, as a key's fields share it.
            let mut ends = FieldEnds::new(&line, separator);
            for (start_field, start_char, skip_start_blanks, end) in spans {
                let span = ColumnSpan {
                    start_field,
                    start_char,
                    skip_start_blanks,
                    end: end.map(|(field, char, skip_blanks)| ColumnEnd { field, char, skip_blanks }),
                };
                proptest::prop_assert_eq!(ends.locate(&span), span.locate(&line, separator));
            }
        }
    }

    #[test]
    fn find_byte_finds_the_first_at_every_length_and_place() {
        for len in 0..80 {
            assert_eq!(find_byte(&vec![b'a'; len], b','), None, "{len}");
            for at in 0..len {
                let mut hay = vec![b'a'; len];
                hay[at] = b',';
                if at + 3 < len {
                    hay[at + 3] = b',';
                }
                // A byte one above the one looked for must not confuse the borrow trick.
                if at > 0 {
                    hay[at - 1] = b',' + 1;
                }
                assert_eq!(find_byte(&hay, b','), Some(at), "{len} {at}");
            }
        }
    }

    #[test]
    fn separator_fields_may_be_empty() {
        let line = b"a,,b,";
        assert_eq!(key(line, ColumnSpan::field(0), Some(b',')), b"a");
        assert_eq!(key(line, ColumnSpan::field(1), Some(b',')), b"");
        assert_eq!(key(line, ColumnSpan::field(2), Some(b',')), b"b");
        assert_eq!(key(line, ColumnSpan::field(3), Some(b',')), b"");
        let to_end = ColumnSpan { end: None, ..ColumnSpan::field(1) };
        assert_eq!(key(line, to_end, Some(b',')), b",b,");
    }
}

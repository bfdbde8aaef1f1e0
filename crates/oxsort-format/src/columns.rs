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

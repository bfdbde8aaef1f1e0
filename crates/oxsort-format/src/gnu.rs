//! GNU-sort-like flags for delimited text: `-t`, `-k`, `-n`, `-r`, `-s`, `-u`, `-b`.
//!
//! The semantics are GNU sort's in the C locale:
//! - `-k POS1[,POS2]`, `POS = F[.C][OPTS]`, fields and characters 1-based; `POS2` defaults to
//!   the end of the line and `.C` on `POS2` (or `.0`) to the end of the field. `OPTS` are
//!   `b` (skip leading blanks of that position), `n` (numeric) and `r` (reverse).
//! - A key with none of `b n r` takes the global `-b -n -r`.
//! - Without `-t`, a field is a run of non-blanks with the blanks before it.
//! - Unless `-s` or `-u`, records whose keys tie compare as whole lines, bytewise (reversed
//!   by a global `-r`): this "last resort" is the last field of the [`KeySpec`] returned.
//! - `-u` keeps the first record of each run of equal keys; the engine must then sort stably.

use crate::columns::{ColumnEnd, ColumnSpan};
use crate::error::{Location, ParseError};
use crate::spec::{FieldType, KeyField, KeySpec, ShortFields};

/// The key and flags of a GNU-style command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GnuSort {
    /// The key, with GNU's last-resort whole-line comparison as its final field unless
    /// `stable` or `unique`.
    pub key: KeySpec,
    /// `-u`: keep only the first of each run of records with equal keys.
    pub unique: bool,
    /// `-s`: no last-resort comparison; ties keep their input order.
    pub stable: bool,
    /// Global `-r`.
    pub reverse: bool,
}

/// One `-k` as written.
#[derive(Default, Clone, Copy)]
struct KeyOpts {
    skip_start: bool,
    skip_end: bool,
    numeric: bool,
    reverse: bool,
}

/// Parses GNU sort flags: `-t X`/`-tX`/`--field-separator=X`, `-k SPEC`/`-kSPEC`/
/// `--key=SPEC`, `-n -r -s -u -b` (clustered or long: `--numeric-sort --reverse --stable
/// --unique --ignore-leading-blanks`). Other arguments are errors naming them.
pub fn parse_gnu_args(args: &[String]) -> Result<GnuSort, ParseError> {
    let mut global = KeyOpts::default();
    let (mut unique, mut stable) = (false, false);
    let mut separator: Option<u8> = None;
    let mut keys: Vec<(ColumnSpan, KeyOpts)> = Vec::new();
    let mut i = 0;
    let err = |index: usize, column: usize, expected: &str, found: &str| {
        ParseError::new(
            Location::Argument { index: index + 1, column },
            expected,
            Some(found.to_string()),
        )
    };
    while i < args.len() {
        let arg = &args[i];
        // (value, argument index, column of the value in that argument)
        let mut take_value = |inline: &str, inline_col: usize, what: &str| {
            if !inline.is_empty() {
                Ok((inline.to_string(), i, inline_col))
            } else if i + 1 < args.len() {
                i += 1;
                Ok((args[i].clone(), i, 1))
            } else {
                Err(ParseError::new(
                    Location::Argument { index: i + 1, column: arg.len() + 1 },
                    what,
                    None,
                ))
            }
        };
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let col = name.len() + 4;
            match name {
                "numeric-sort" => global.numeric = true,
                "reverse" => global.reverse = true,
                "stable" => stable = true,
                "unique" => unique = true,
                "ignore-leading-blanks" => {
                    global.skip_start = true;
                    global.skip_end = true;
                }
                "key" | "field-separator" => {
                    let (v, idx, c) = match inline {
                        Some(v) => (v.to_string(), i, col),
                        None => take_value("", 0, "a value after the option")?,
                    };
                    if name == "key" {
                        keys.push(parse_key(&v, idx, c)?);
                    } else {
                        separator = Some(parse_separator(&v, idx, c)?);
                    }
                }
                _ => return Err(err(i, 1, "a supported option (-t, -k, -n, -r, -s, -u, -b)", arg)),
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            let bytes = arg.as_bytes();
            let mut j = 1;
            while j < bytes.len() {
                match bytes[j] {
                    b'n' => global.numeric = true,
                    b'r' => global.reverse = true,
                    b's' => stable = true,
                    b'u' => unique = true,
                    b'b' => {
                        global.skip_start = true;
                        global.skip_end = true;
                    }
                    b't' | b'k' => {
                        let what = if bytes[j] == b't' {
                            "a separator after -t"
                        } else {
                            "a key definition after -k"
                        };
                        let is_key = bytes[j] == b'k';
                        let (v, idx, c) = take_value(&arg[j + 1..], j + 2, what)?;
                        if is_key {
                            keys.push(parse_key(&v, idx, c)?);
                        } else {
                            separator = Some(parse_separator(&v, idx, c)?);
                        }
                        break;
                    }
                    _ => {
                        return Err(err(
                            i,
                            j + 1,
                            "a supported option (-t, -k, -n, -r, -s, -u, -b)",
                            &(bytes[j] as char).to_string(),
                        ))
                    }
                }
                j += 1;
            }
        } else {
            return Err(err(i, 1, "an option (-t, -k, -n, -r, -s, -u, -b)", arg));
        }
        i += 1;
    }

    let kind = |o: &KeyOpts| if o.numeric { FieldType::GnuNumeric } else { FieldType::Char };
    let mut fields = Vec::new();
    for (mut span, mut o) in keys {
        if !(o.skip_start || o.skip_end || o.numeric || o.reverse) {
            o = global;
        }
        span.skip_start_blanks = o.skip_start;
        if let Some(end) = &mut span.end {
            end.skip_blanks = o.skip_end;
        }
        fields.push(KeyField::columns(span, kind(&o), o.reverse));
    }
    let whole = ColumnSpan::whole();
    if fields.is_empty() {
        if global.numeric || global.skip_start {
            let span = ColumnSpan { skip_start_blanks: global.skip_start, ..whole };
            fields.push(KeyField::columns(span, kind(&global), global.reverse));
        } else {
            // No key: whole lines, bytewise; no last resort needed.
            fields.push(KeyField::columns(whole, FieldType::Char, global.reverse));
            return Ok(GnuSort {
                key: KeySpec { fields, separator, short_fields: ShortFields::Error },
                unique,
                stable,
                reverse: global.reverse,
            });
        }
    }
    if !stable && !unique {
        fields.push(KeyField::columns(whole, FieldType::Char, global.reverse));
    }
    Ok(GnuSort {
        key: KeySpec { fields, separator, short_fields: ShortFields::Error },
        unique,
        stable,
        reverse: global.reverse,
    })
}

fn parse_separator(v: &str, index: usize, column: usize) -> Result<u8, ParseError> {
    match v.as_bytes() {
        [b] => Ok(*b),
        b"\\0" => Ok(0),
        _ => Err(ParseError::new(
            Location::Argument { index: index + 1, column },
            "a one-byte separator (or \\0 for NUL)",
            Some(v.to_string()),
        )),
    }
}

/// Parses `F[.C][OPTS][,F[.C][OPTS]]`; `column` is where `v` starts in argument `index`.
fn parse_key(v: &str, index: usize, column: usize) -> Result<(ColumnSpan, KeyOpts), ParseError> {
    let b = v.as_bytes();
    let mut p = 0;
    let err = |at: usize, expected: &str| {
        let found = v.get(at..).filter(|s| !s.is_empty()).map(|s| s[..1].to_string());
        ParseError::new(
            Location::Argument { index: index + 1, column: column + at },
            expected,
            found,
        )
    };
    let number = |p: &mut usize, what: &str| -> Result<usize, ParseError> {
        let start = *p;
        while *p < b.len() && b[*p].is_ascii_digit() {
            *p += 1;
        }
        if start == *p {
            return Err(err(start, what));
        }
        v[start..*p].parse::<usize>().map_err(|_| err(start, "a smaller number"))
    };
    let mut opts = KeyOpts::default();
    let options = |p: &mut usize, start: bool, opts: &mut KeyOpts| -> Result<(), ParseError> {
        while *p < b.len() && b[*p] != b',' {
            match b[*p] {
                b'b' if start => opts.skip_start = true,
                b'b' => opts.skip_end = true,
                b'n' => opts.numeric = true,
                b'r' => opts.reverse = true,
                b'd' | b'f' | b'g' | b'h' | b'i' | b'M' | b'R' | b'V' => {
                    return Err(err(*p, "a key option oxsort supports (b, n, r)"))
                }
                _ => return Err(err(*p, "a key option (b, n, r), ',' or the end of the key")),
            }
            *p += 1;
        }
        Ok(())
    };
    let field_at = p;
    let f1 = number(&mut p, "a field number (1-based)")?;
    if f1 == 0 {
        return Err(err(field_at, "a field number of at least 1"));
    }
    let mut c1 = 1;
    if p < b.len() && b[p] == b'.' {
        p += 1;
        let at = p;
        c1 = number(&mut p, "a character position (1-based) after '.'")?;
        if c1 == 0 {
            return Err(err(at, "a character position of at least 1"));
        }
    }
    options(&mut p, true, &mut opts)?;
    let mut end = None;
    if p < b.len() && b[p] == b',' {
        p += 1;
        let at = p;
        let f2 = number(&mut p, "a field number (1-based) after ','")?;
        if f2 == 0 {
            return Err(err(at, "a field number of at least 1"));
        }
        let mut c2 = 0;
        if p < b.len() && b[p] == b'.' {
            p += 1;
            c2 = number(&mut p, "a character position after '.'")?;
        }
        options(&mut p, false, &mut opts)?;
        if p < b.len() {
            return Err(err(p, "the end of the key"));
        }
        end = Some(ColumnEnd { field: f2 - 1, char: c2, skip_blanks: false });
    }
    let span =
        ColumnSpan { start_field: f1 - 1, start_char: c1 - 1, skip_start_blanks: false, end };
    Ok((span, opts))
}

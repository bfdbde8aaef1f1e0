//! `--debug`: GNU sort's warnings about the command line, and each output line followed by
//! one underline per key (and the whole line for the last resort).

use std::io::Write;

use oxsort_format::ColumnSpan;
use oxsort_lang::{GnuKey, GnuOptions};

use super::msg::quote;

/// Prints GNU's `--debug` notes on stderr: the collation in use, then `key_warnings`.
pub fn warnings(opts: &GnuOptions, locale: &oxsort_locale::Locale) {
    if !locale.ok {
        eprintln!("sort: failed to set locale");
    }
    match &locale.collate {
        Some(name) => {
            eprintln!("sort: text ordering performed using {} sorting rules", quote(name))
        }
        None => eprintln!("sort: text ordering performed using simple byte comparison"),
    }
    let (keys, gkey_only) = opts.effective_keys();
    let tab = opts.separator;
    let mut ug = opts.global;
    let (mut basic, mut general, mut basic_span, mut general_span) = (false, false, false, false);
    for (i, k) in keys.iter().enumerate() {
        let n = i + 1;
        if k.is_numeric() {
            if k.general {
                general = true;
            } else {
                basic = true;
            }
        }
        if k.traditional {
            let sword = k.sword.map_or(0, |s| s);
            let mut o = format!("+{sword}");
            let mut nn = format!("-k {}", sword + 1);
            if let Some(e) = k.eword {
                o.push_str(&format!(" -{}", e + 1));
                nn.push_str(&format!(",{}", e + 1));
            }
            eprintln!("sort: obsolescent key {} used; consider {} instead", quote(&o), quote(&nn));
        }
        let zero_width = matches!((k.sword, k.eword), (Some(s), Some(e)) if e < s);
        if zero_width {
            eprintln!("sort: key {n} has zero width and will be ignored");
        }
        let implicit_skip = k.is_numeric() || k.month;
        let line_offset = k.eword == Some(0) && k.echar != 0;
        let schar = if k.sword.is_some() { k.schar } else { 0 };
        if !zero_width
            && !gkey_only
            && tab.is_none()
            && !line_offset
            && ((!k.skip_start_blanks && (!implicit_skip || schar != 0))
                || (!k.skip_end_blanks && k.echar != 0))
        {
            eprintln!(
                "sort: leading blanks are significant in key {n}; consider also specifying 'b'"
            );
        }
        if !gkey_only && k.is_numeric() {
            let sword = k.sword.map_or(1, |s| s + 1);
            if k.eword.is_none_or(|e| sword < e + 1) {
                eprintln!("sort: key {n} is numeric and spans multiple fields");
                if k.general {
                    general_span = true;
                } else {
                    basic_span = true;
                }
            }
        }
        if ug.ignore == k.ignore {
            ug.ignore = Default::default();
        }
        ug.fold &= !k.fold;
        ug.skip_start_blanks &= !k.skip_start_blanks;
        ug.skip_end_blanks &= !k.skip_end_blanks;
        ug.month &= !k.month;
        ug.numeric &= !k.numeric;
        ug.general &= !k.general;
        ug.human &= !k.human;
        ug.random &= !k.random;
        ug.version &= !k.version;
        ug.reverse &= !k.reverse;
    }
    let mut warned = false;
    let (dp, ts) = (opts.decimal_point, opts.thousands_sep);
    let ch = |c: u8| quote(&String::from_utf8_lossy(&[c]));
    if basic_span {
        let hit = match tab {
            None => ts.is_some_and(|t| t == b' ' || t == b'\t'),
            Some(t) => Some(t) == ts,
        };
        if hit {
            if let Some(t) = ts {
                eprintln!(
                    "sort: field separator {} is treated as a group separator in numbers",
                    ch(t)
                );
            }
            warned = true;
        }
    }
    if basic_span || general_span {
        let hit = match tab {
            None => ts.is_some() && (dp == b' ' || dp == b'\t'),
            Some(t) => t == dp,
        };
        if hit {
            eprintln!("sort: field separator {} is treated as a decimal point in numbers", ch(dp));
            warned = true;
        } else if tab == Some(b'-') {
            eprintln!("sort: field separator {} is treated as a minus sign in numbers", ch(b'-'));
        } else if general_span && tab == Some(b'+') {
            eprintln!("sort: field separator {} is treated as a plus sign in numbers", ch(b'+'));
        }
    }
    if (basic || general) && !warned {
        let note = if tab == Some(dp) { "" } else { "note " };
        eprintln!("sort: {note}numbers use {} as a decimal point in this locale", ch(dp));
    }
    let stable_or_unique = opts.stable || opts.unique;
    let has_keys = !keys.is_empty();
    if !ug.is_default() || (ug.reverse && stable_or_unique && has_keys) {
        let reverse = ug.reverse;
        if !stable_or_unique {
            ug.reverse = false;
        }
        let o = ug.opts();
        if o.len() == 1 {
            eprintln!("sort: option '-{o}' is ignored");
        } else {
            eprintln!("sort: options '-{o}' are ignored");
        }
        ug.reverse = reverse;
    }
    if ug.reverse && !stable_or_unique && has_keys {
        eprintln!("sort: option '-r' only applies to last-resort comparison");
    }
}

/// Writes each record of `data` (sorted, `eol`-terminated) with its key underlines.
pub fn annotate(
    data: &[u8],
    eol: u8,
    opts: &GnuOptions,
    utf8: bool,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let (keys, _) = opts.effective_keys();
    let last_resort = !(opts.stable || opts.unique) || keys.is_empty();
    let mut rest = data;
    while !rest.is_empty() {
        let end = rest.iter().position(|&b| b == eol).unwrap_or(rest.len());
        let line = &rest[..end];
        rest = &rest[(end + 1).min(rest.len())..];
        let shown: Vec<u8> = line.iter().map(|&b| if b == b'\t' { b'>' } else { b }).collect();
        out.write_all(&shown)?;
        out.write_all(b"\n")?;
        for k in &keys {
            let (beg, lim) = key_range(line, k, opts);
            mark(out, width(&line[..beg], utf8), width(&line[beg..lim.max(beg)], utf8))?;
        }
        if last_resort {
            mark(out, 0, width(line, utf8))?;
        }
    }
    Ok(())
}

fn mark(out: &mut impl Write, offset: usize, width: usize) -> std::io::Result<()> {
    out.write_all(" ".repeat(offset).as_bytes())?;
    if width == 0 {
        out.write_all(b"^ no match for key\n")
    } else {
        out.write_all("_".repeat(width).as_bytes())?;
        out.write_all(b"\n")
    }
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\n'
}

/// The part of `line` GNU's `debug_key` underlines for key `k`.
fn key_range(line: &[u8], k: &GnuKey, opts: &GnuOptions) -> (usize, usize) {
    let sep = opts.separator;
    let span = k.span();
    let mut beg = if k.sword.is_some() { span.locate(line, sep).start } else { 0 };
    let mut lim = if k.eword.is_some() {
        ColumnSpan { start_field: 0, start_char: 0, skip_start_blanks: false, end: span.end }
            .locate(line, sep)
            .end
    } else {
        line.len()
    };
    if (k.skip_start_blanks && k.sword.is_none()) || k.month || k.is_numeric() {
        while beg < line.len() && beg < lim && is_blank(line[beg]) {
            beg += 1;
        }
        // GNU skips blanks up to the line's NUL at the key's end.
        if lim < beg {
            return (beg, lim);
        }
        let text = &line[beg..lim];
        let tighter = if k.month {
            match oxsort_format::gnu_month_len(text) {
                (0, _) => 0,
                (_, n) => n,
            }
        } else if k.general {
            oxsort_format::gnu_general_len(text)
        } else if k.numeric || k.human {
            let mut p = usize::from(text.first() == Some(&b'-'));
            let (digits, end) = raw_number(text, p, opts);
            p = end;
            if digits {
                let unit = k.human
                    && matches!(
                        text.get(p),
                        Some(b'K' | b'k' | b'M' | b'G' | b'T' | b'P' | b'E' | b'Z' | b'Y')
                    );
                p + usize::from(unit)
            } else {
                0
            }
        } else {
            text.len()
        };
        lim = beg + tighter;
    }
    (beg, lim)
}

/// GNU's `traverse_raw_number` from `p`: whether a digit was seen, and where the number ends.
fn raw_number(t: &[u8], mut p: usize, opts: &GnuOptions) -> (bool, usize) {
    let mut seen = false;
    let mut ends_with_sep = false;
    while p < t.len() && t[p].is_ascii_digit() {
        seen = true;
        p += 1;
        ends_with_sep = opts.thousands_sep.is_some() && t.get(p).copied() == opts.thousands_sep;
        if ends_with_sep {
            p += 1;
        }
    }
    if ends_with_sep {
        return (seen, p - 1);
    }
    if p < t.len() && t[p] == opts.decimal_point {
        let mut q = p + 1;
        while q < t.len() && t[q].is_ascii_digit() {
            seen = true;
            q += 1;
        }
        p = q;
    }
    (seen, p)
}

/// Display columns of `t` as GNU's `debug_width` counts them: printable characters one
/// column each, tabs one, other control characters none.
fn width(t: &[u8], utf8: bool) -> usize {
    if utf8 {
        let s = String::from_utf8_lossy(t);
        s.chars()
            .map(|c| {
                if c == '\t' {
                    1
                } else if c.is_control() {
                    0
                } else {
                    1
                }
            })
            .sum()
    } else {
        t.iter().map(|&b| usize::from(b == b'\t' || !(b < 0x20 || b == 0x7F))).sum()
    }
}

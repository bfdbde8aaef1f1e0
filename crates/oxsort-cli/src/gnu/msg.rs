//! GNU sort's messages: `sort: ...` on stderr, file names quoted as coreutils quotes them,
//! system errors without Rust's "(os error N)", and the `--help` text.

use std::sync::atomic::{AtomicBool, Ordering};

use oxsort_lang::gnu::NumberProblem;
use oxsort_lang::{GnuArgError, GnuKeyError};

/// Messages quote with ‘ ’ (UTF-8 locales) instead of ' '.
static CURLY: AtomicBool = AtomicBool::new(false);

/// Sets the quoting style from the locale's character set.
pub fn set_utf8(on: bool) {
    CURLY.store(on, Ordering::Relaxed);
}

/// A reason to stop: the message after `sort: `, whether to add GNU's "Try 'sort --help'"
/// line, and the exit status.
#[derive(Debug)]
pub struct Fail {
    /// The text after `sort: ` (may hold more `sort: ` lines after newlines). Bytes, as GNU
    /// echoes a stray byte of an argument as it is.
    pub message: Vec<u8>,
    /// Add "Try 'sort --help' for more information."
    pub usage: bool,
    /// The exit status: 2 ([`SORT_FAILURE`]), or 1 for an invalid word (GNU's `argmatch_die`
    /// exits with `EXIT_FAILURE`).
    pub status: i32,
}

/// GNU sort's exit status for any trouble.
pub const SORT_FAILURE: i32 = 2;

/// The exit status of an invalid or ambiguous `--sort` / `--check` word (`EXIT_FAILURE`).
pub const ARGMATCH_FAILURE: i32 = 1;

impl Fail {
    /// A fatal message.
    pub fn plain(message: impl Into<Vec<u8>>) -> Fail {
        Fail { message: message.into(), usage: false, status: SORT_FAILURE }
    }

    /// A command-line mistake: the message, then the --help hint.
    pub fn usage(message: impl Into<Vec<u8>>) -> Fail {
        Fail { message: message.into(), usage: true, status: SORT_FAILURE }
    }

    /// `WHAT: FILE: system error` (GNU's `sort_die`).
    pub fn io(what: &str, file: &str, e: &std::io::Error) -> Fail {
        Fail::plain(format!("{what}: {}: {}", quotef(file), errno_text(e)))
    }

    /// Prints the message as GNU does and returns the exit status.
    pub fn report(&self) -> i32 {
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        if !self.message.is_empty() {
            let mut line = b"sort: ".to_vec();
            line.extend_from_slice(&self.message);
            line.push(b'\n');
            let _ = err.write_all(&line);
        }
        if self.usage {
            let _ = err.write_all(b"Try 'sort --help' for more information.\n");
        }
        self.status
    }
}

impl From<GnuArgError> for Fail {
    /// A command-line mistake as GNU sort words it: usage mistakes add the `--help` hint, an
    /// invalid `--sort`/`--check` word lists the valid ones and exits with status 1.
    fn from(e: GnuArgError) -> Fail {
        match e {
            GnuArgError::UnexpectedValue { .. }
            | GnuArgError::MissingValue { .. }
            | GnuArgError::MissingShortValue { .. }
            | GnuArgError::Unrecognized { .. }
            | GnuArgError::Ambiguous { .. } => Fail::usage(e.to_string()),
            GnuArgError::InvalidShort { byte } => {
                // getopt names the one byte, even the first of a multibyte character.
                let mut m = b"invalid option -- '".to_vec();
                m.extend_from_slice(&[byte, b'\'']);
                Fail::usage(m)
            }
            GnuArgError::BadWord { ambiguous, value, option, words } => {
                let problem = if ambiguous { "ambiguous" } else { "invalid" };
                let mut msg = format!(
                    "{problem} argument {} for {}\nValid arguments are:",
                    quote(&value),
                    quote(option)
                );
                let mut last = "";
                for (w, c) in words {
                    if *c == last {
                        msg.push_str(&format!(", {}", quote(w)));
                    } else {
                        msg.push_str(&format!("\n  - {}", quote(w)));
                    }
                    last = c;
                }
                Fail { status: ARGMATCH_FAILURE, ..Fail::usage(msg) }
            }
            GnuArgError::MultiCharacterTab { tab } => {
                Fail::plain(format!("multi-character tab {}", quote(&tab)))
            }
            GnuArgError::Number { problem, option, value } => Fail::plain(match problem {
                NumberProblem::Invalid => format!("invalid {option} argument {}", literal(&value)),
                NumberProblem::Suffix => {
                    format!("invalid suffix in {option} argument {}", literal(&value))
                }
                _ => format!("{option} argument {} too large", literal(&value)),
            }),
            GnuArgError::BatchTooSmall { value } => Fail::plain(format!(
                "invalid --batch-size argument {}\nsort: minimum --batch-size argument is {}",
                quote(&value),
                quote("2")
            )),
            GnuArgError::BatchTooLarge { value, max } => Fail::plain(format!(
                "--batch-size argument {} too large\nsort: maximum --batch-size argument with \
                 current rlimit is {max}",
                quote(&value)
            )),
            GnuArgError::Key(k) => key_fail(k),
            other => Fail::plain(other.to_string()),
        }
    }
}

/// A key definition's error in GNU's words, the echoed text quoted as GNU's `quote` does.
pub fn key_fail(e: GnuKeyError) -> Fail {
    Fail::plain(match e {
        GnuKeyError::BadCount { what, text } => {
            format!("{what}: invalid count at start of {}", quote(&text))
        }
        GnuKeyError::BadSpec { what, spec } => {
            format!("{what}: invalid field specification {}", quote(&spec))
        }
        other => other.to_string(),
    })
}

/// A system error's text as `strerror` words it.
pub fn errno_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// coreutils' `quote` (gnulib's `locale_quoting_style`): always quoted, with ‘ ’ in a UTF-8
/// locale and ' ' otherwise; backslash escapes inside (`\\`, `\n`, `\'` for the closing
/// quote, octal for what the locale cannot print).
pub fn quote(s: &str) -> String {
    quotearg(&super::osname::bytes(s), Style::Locale)
}

/// coreutils' `quotef` (gnulib's `shell_escape_quoting_style`), for file names: as is when a
/// shell would read it back unchanged, else as [`quoteaf`] writes it.
pub fn quotef(s: &str) -> String {
    quotearg(&super::osname::bytes(s), Style::ShellEscape)
}

/// coreutils' `quoteaf` (gnulib's `shell_escape_always_quoting_style`): always in shell
/// quotes, `'a'\''b'` for a quote (or `"a'b"` when that needs nothing else), `'$'\303''`
/// for what the locale cannot print.
pub fn quoteaf(s: &str) -> String {
    quotearg(&super::osname::bytes(s), Style::ShellEscapeAlways)
}

/// The plain `'…'` of gnulib's `xstrtol_error` messages (`-S`, `--parallel`,
/// `--batch-size`): no escapes, whatever the locale.
pub fn literal(s: &str) -> String {
    format!("'{s}'")
}

/// The gnulib quoting styles sort's messages use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `locale_quoting_style` ([`quote`]).
    Locale,
    /// `c_quoting_style`: `"…"` with backslash escapes (what [`Style::ShellEscapeAlways`]
    /// turns into for a name whose only trouble is a single quote).
    C,
    /// `shell_escape_quoting_style` ([`quotef`]).
    ShellEscape,
    /// `shell_escape_always_quoting_style` ([`quoteaf`]).
    ShellEscapeAlways,
}

/// Why a quoting pass stopped early: the name needs outer quotes after all.
struct ForceOuter;

/// gnulib's `quotearg_buffer_restyled` for the styles sort uses, byte for byte.
fn quotearg(arg: &[u8], style: Style) -> String {
    let out = match restyled(arg, style, None) {
        Ok(out) => out,
        // Only the eliding style stops: it becomes the always-quoting one.
        Err(ForceOuter) => restyled(arg, Style::ShellEscapeAlways, None).unwrap_or_default(),
    };
    String::from_utf8_lossy(&out).into_owned()
}

/// One pass of gnulib's quoting; `Err` when [`Style::ShellEscape`] finds a byte that needs
/// outer quotes. `rerun` is `Some(pending)` for gnulib's second pass over a name holding a
/// single quote: that pass starts with the first pass's last "inside `$'…'`" state, so a
/// name that ends in an escape starts with `'''` (`'''it'\''s'$'\n'`), as GNU prints it.
fn restyled(arg: &[u8], style: Style, rerun: Option<bool>) -> Result<Vec<u8>, ForceOuter> {
    let utf8 = CURLY.load(Ordering::Relaxed);
    let shell = matches!(style, Style::ShellEscape | Style::ShellEscapeAlways);
    let elide = style == Style::ShellEscape;
    let (left, right): (&[u8], &[u8]) = match style {
        Style::Locale if utf8 => ("\u{2018}".as_bytes(), "\u{2019}".as_bytes()),
        Style::Locale => (b"'", b"'"),
        Style::C => (b"\"", b"\""),
        Style::ShellEscape | Style::ShellEscapeAlways => (b"'", b"'"),
    };
    let mut out = Vec::with_capacity(arg.len() + 8);
    if !elide {
        out.extend_from_slice(left);
    }
    // Inside a `$'…'` escape (shell styles), to be closed by `''` before a plain byte.
    let mut pending_end = rerun.unwrap_or(false);
    let mut single_quote = false;
    let mut all_compat = true;
    let start_esc = |out: &mut Vec<u8>, pending_end: &mut bool| -> Result<(), ForceOuter> {
        if elide {
            return Err(ForceOuter);
        }
        if shell && !*pending_end {
            out.extend_from_slice(b"'$'");
            *pending_end = true;
        }
        out.push(b'\\');
        Ok(())
    };
    let end_esc = |out: &mut Vec<u8>, pending_end: &mut bool, escaping: bool| {
        if *pending_end && !escaping {
            out.extend_from_slice(b"''");
            *pending_end = false;
        }
    };
    let mut i = 0;
    while i < arg.len() {
        let mut is_right_quote = !shell && arg[i..].starts_with(right);
        let mut c = arg[i];
        let mut escaping = false;
        let mut compat = false;
        // What the byte needs: stored as is, or a backslash escape (`esc`).
        let mut escape: Option<u8> = None;
        match c {
            b'?' if shell && elide => return Err(ForceOuter),
            b'?' => {}
            0x07 | 0x08 | 0x0C | 0x0B | b'\n' | b'\r' | b'\t' => {
                let (esc, shell_too) = match c {
                    0x07 => (b'a', false),
                    0x08 => (b'b', false),
                    0x0C => (b'f', false),
                    0x0B => (b'v', false),
                    b'\n' => (b'n', true),
                    b'\r' => (b'r', true),
                    _ => (b't', true),
                };
                if shell_too && shell && elide {
                    return Err(ForceOuter);
                }
                escape = Some(esc);
            }
            b'\\' if shell => {
                if elide {
                    return Err(ForceOuter);
                }
            }
            b'\\' => escape = Some(b'\\'),
            b'{' | b'}' | b'#' | b'~' | b' ' => {
                let special = match c {
                    b'{' | b'}' => arg.len() == 1,
                    b'#' | b'~' => i == 0,
                    _ => true,
                };
                if special {
                    compat = true;
                    if shell && elide {
                        return Err(ForceOuter);
                    }
                }
            }
            b'!' | b'"' | b'$' | b'&' | b'(' | b')' | b'*' | b';' | b'<' | b'=' | b'>' | b'['
            | b'^' | b'`' | b'|' => {
                if shell && elide {
                    return Err(ForceOuter);
                }
            }
            b'\'' => {
                single_quote = true;
                compat = true;
                if shell {
                    if elide {
                        return Err(ForceOuter);
                    }
                    out.extend_from_slice(b"'\\'");
                    pending_end = false;
                }
            }
            b'%'
            | b'+'
            | b','
            | b'-'
            | b'.'
            | b'/'
            | b'0'..=b'9'
            | b':'
            | b'A'..=b'Z'
            | b']'
            | b'_'
            | b'a'..=b'z' => compat = true,
            _ => {
                // A character of the locale: printed as is when printable, else escaped in
                // octal, byte by byte.
                let (m, printable) = if !utf8 {
                    (1, (0x20..0x7F).contains(&c))
                } else {
                    match char_at(&arg[i..]) {
                        Some(ch) => (ch.len_utf8(), oxsort_locale::printable(ch)),
                        None if incomplete_at_end(&arg[i..]) => (arg.len() - i, false),
                        None => (0, false),
                    }
                };
                compat = printable;
                if m > 1 || !printable {
                    let ilim = i + m;
                    loop {
                        if !printable {
                            start_esc(&mut out, &mut pending_end)?;
                            escaping = true;
                            out.push(b'0' + (c >> 6));
                            out.push(b'0' + ((c >> 3) & 7));
                            c = b'0' + (c & 7);
                        } else if is_right_quote {
                            out.push(b'\\');
                            is_right_quote = false;
                        }
                        if ilim <= i + 1 {
                            break;
                        }
                        end_esc(&mut out, &mut pending_end, escaping);
                        out.push(c);
                        i += 1;
                        c = arg[i];
                    }
                    end_esc(&mut out, &mut pending_end, escaping);
                    out.push(c);
                    all_compat &= compat;
                    i += 1;
                    continue;
                }
            }
        }
        if let Some(esc) = escape {
            c = esc;
            start_esc(&mut out, &mut pending_end)?;
            escaping = true;
        } else if is_right_quote {
            start_esc(&mut out, &mut pending_end)?;
            escaping = true;
        }
        end_esc(&mut out, &mut pending_end, escaping);
        out.push(c);
        all_compat &= compat;
        i += 1;
    }
    if elide && arg.is_empty() {
        return Err(ForceOuter);
    }
    if style == Style::ShellEscapeAlways && single_quote {
        if all_compat {
            // A quote the only trouble: "it's" reads better than 'it'\''s'.
            return restyled(arg, Style::C, None);
        }
        if rerun.is_none() {
            return restyled(arg, style, Some(pending_end));
        }
    }
    if !elide {
        out.extend_from_slice(right);
    }
    Ok(out)
}

/// The UTF-8 character at the start of `b`, if one is there whole and valid.
fn char_at(b: &[u8]) -> Option<char> {
    let n = match b.first()? {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return None,
    };
    std::str::from_utf8(b.get(..n)?).ok()?.chars().next()
}

/// Whether `b` ends in the middle of a UTF-8 sequence that could still be valid
/// (`mbrtoc32` returning -2: gnulib then escapes the rest of the string).
fn incomplete_at_end(b: &[u8]) -> bool {
    let n = match b[0] {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return false,
    };
    b.len() < n && b[1..].iter().all(|&x| (0x80..0xC0).contains(&x))
}

/// The `--help` text of GNU sort 9.1, with oxsort's notes at the end.
pub fn help() -> String {
    let p = "sort";
    format!(
        "Usage: {p} [OPTION]... [FILE]...
  or:  {p} [OPTION]... --files0-from=F
Write sorted concatenation of all FILE(s) to standard output.

With no FILE, or when FILE is -, read standard input.

Mandatory arguments to long options are mandatory for short options too.
Ordering options:

  -b, --ignore-leading-blanks  ignore leading blanks
  -d, --dictionary-order      consider only blanks and alphanumeric characters
  -f, --ignore-case           fold lower case to upper case characters
  -g, --general-numeric-sort  compare according to general numerical value
  -i, --ignore-nonprinting    consider only printable characters
  -M, --month-sort            compare (unknown) < 'JAN' < ... < 'DEC'
  -h, --human-numeric-sort    compare human readable numbers (e.g., 2K 1G)
  -n, --numeric-sort          compare according to string numerical value
  -R, --random-sort           shuffle, but group identical keys.  See shuf(1)
      --random-source=FILE    get random bytes from FILE
  -r, --reverse               reverse the result of comparisons
      --sort=WORD             sort according to WORD:
                                general-numeric -g, human-numeric -h, month -M,
                                numeric -n, random -R, version -V
  -V, --version-sort          natural sort of (version) numbers within text

Other options:

      --batch-size=NMERGE   merge at most NMERGE inputs at once;
                            for more use temp files
  -c, --check, --check=diagnose-first  check for sorted input; do not sort
  -C, --check=quiet, --check=silent  like -c, but do not report first bad line
      --compress-program=PROG  compress temporaries with PROG;
                              decompress them with PROG -d
      --debug               annotate the part of the line used to sort,
                              and warn about questionable usage to stderr
      --files0-from=F       read input from the files specified by
                            NUL-terminated names in file F;
                            If F is - then read names from standard input
  -k, --key=KEYDEF          sort via a key; KEYDEF gives location and type
  -m, --merge               merge already sorted files; do not sort
  -o, --output=FILE         write result to FILE instead of standard output
  -s, --stable              stabilize sort by disabling last-resort comparison
  -S, --buffer-size=SIZE    use SIZE for main memory buffer
  -t, --field-separator=SEP  use SEP instead of non-blank to blank transition
  -T, --temporary-directory=DIR  use DIR for temporaries, not $TMPDIR or /tmp;
                              multiple options specify multiple directories
      --parallel=N          change the number of sorts run concurrently to N
  -u, --unique              with -c, check for strict ordering;
                              without -c, output only the first of an equal run
  -z, --zero-terminated     line delimiter is NUL, not newline
      --help        display this help and exit
      --version     output version information and exit

KEYDEF is F[.C][OPTS][,F[.C][OPTS]] for start and stop position, where F is a
field number and C a character position in the field; both are origin 1, and
the stop position defaults to the line's end.  If neither -t nor -b is in
effect, characters in a field are counted from the beginning of the preceding
whitespace.  OPTS is one or more single-letter ordering options [bdfgiMhnRrV],
which override global ordering options for that key.  If no key is given, use
the entire line as the key.  Use --debug to diagnose incorrect key usage.

SIZE may be followed by the following multiplicative suffixes:
% 1% of memory, b 1, K 1024 (default), and so on for M, G, T, P, E, Z, Y, R, Q.

*** WARNING ***
The locale specified by the environment affects sort order.
Set LC_ALL=C to get the traditional sort order that uses
native byte values.

oxsort notes: the sort runs on oxsort's external merge engine. -S sets its memory
budget (at least what the engine needs), -T its temp directories, --parallel its
threads, --batch-size its merge fan-in; --compress-program is accepted and not
used (runs are written uncompressed, at the speed of the disks).
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GNU sort 9.1's own quoting in the C locale (the test process's), from its messages.
    #[test]
    fn quoting_as_gnu_in_c() {
        assert_eq!(quote("1,1x'y"), r"'1,1x\'y'");
        assert_eq!(quote("a\\b"), r"'a\\b'");
        assert_eq!(quote("1,1x\ty"), r"'1,1x\ty'");
        assert_eq!(quote("xé"), r"'x\303\251'");
        assert_eq!(quotef("/nonexistent/ä b"), r"'/nonexistent/'$'\303\244'' b'");
        assert_eq!(quotef("/nonexistent/~x"), "/nonexistent/~x");
        assert_eq!(quotef("~x"), "'~x'");
        assert_eq!(quotef(""), "''");
        assert_eq!(quotef("it's"), "\"it's\"");
        assert_eq!(quotef("it's\n"), r"'''it'\''s'$'\n'");
        assert_eq!(quoteaf("in"), "'in'");
        assert_eq!(quoteaf("b\na\n"), r"'b'$'\n''a'$'\n'");
        assert_eq!(literal("1x'y"), "'1x'y'");
    }
}

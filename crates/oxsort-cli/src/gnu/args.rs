//! GNU sort's command line as glibc's `getopt_long` reads it: options and operands in any
//! order, bundled short options (`-nru`, `-k2n`), `--` ending the options, long options
//! abbreviated to any unambiguous prefix, obsolete `+POS1 [-POS2]` keys (unless
//! `_POSIX2_VERSION` says POSIX 2001 to 2008 and no `-POS2` follows).

use oxsort_lang::{GnuKey, GnuKeyError};

use super::msg::{literal, quote, Fail, ARGMATCH_FAILURE};

/// `--check` / `-c` / `-C`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// `-c`: report the first disorder.
    Diagnose,
    /// `-C`: exit status only.
    Quiet,
}

/// Everything a GNU sort command line says.
#[derive(Debug, Default)]
pub struct Args {
    /// Operands (files; `-` is standard input), in order.
    pub files: Vec<String>,
    /// `-k` and `+POS` keys.
    pub keys: Vec<GnuKey>,
    /// Global ordering options.
    pub global: GnuKey,
    /// `-t`.
    pub separator: Option<u8>,
    /// `-s`, `-u`, `-m`, `-z`, `--debug`.
    pub stable: bool,
    /// `-u`.
    pub unique: bool,
    /// `-m`.
    pub merge: bool,
    /// `-z`.
    pub zero: bool,
    /// `--debug`.
    pub debug: bool,
    /// `-c`, `-C`.
    pub check: Option<Check>,
    /// `-o`.
    pub output: Option<String>,
    /// `-S` in bytes.
    pub buffer_size: Option<u64>,
    /// `-T`, in order.
    pub temp_dirs: Vec<String>,
    /// `--parallel`.
    pub parallel: Option<usize>,
    /// `--batch-size`.
    pub batch_size: Option<usize>,
    /// `--compress-program`.
    pub compress_program: Option<String>,
    /// `--files0-from`.
    pub files0_from: Option<String>,
    /// `--random-source`.
    pub random_source: Option<String>,
    /// `--help`.
    pub help: bool,
    /// `--version`.
    pub version: bool,
}

/// What an option takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Has {
    No,
    Required,
    Optional,
}

/// The long options, in GNU's table order (ambiguity messages list them in this order).
const LONG: &[(&str, Has, &str)] = &[
    ("ignore-leading-blanks", Has::No, "b"),
    ("check", Has::Optional, "check"),
    ("compress-program", Has::Required, "compress-program"),
    ("debug", Has::No, "debug"),
    ("dictionary-order", Has::No, "d"),
    ("ignore-case", Has::No, "f"),
    ("files0-from", Has::Required, "files0-from"),
    ("general-numeric-sort", Has::No, "g"),
    ("ignore-nonprinting", Has::No, "i"),
    ("key", Has::Required, "k"),
    ("merge", Has::No, "m"),
    ("month-sort", Has::No, "M"),
    ("numeric-sort", Has::No, "n"),
    ("human-numeric-sort", Has::No, "h"),
    ("version-sort", Has::No, "V"),
    ("random-sort", Has::No, "R"),
    ("random-source", Has::Required, "random-source"),
    ("sort", Has::Required, "sort"),
    ("output", Has::Required, "o"),
    ("reverse", Has::No, "r"),
    ("stable", Has::No, "s"),
    ("batch-size", Has::Required, "batch-size"),
    ("buffer-size", Has::Required, "S"),
    ("field-separator", Has::Required, "t"),
    ("temporary-directory", Has::Required, "T"),
    ("unique", Has::No, "u"),
    ("zero-terminated", Has::No, "z"),
    ("parallel", Has::Required, "parallel"),
    ("help", Has::No, "help"),
    ("version", Has::No, "version"),
];

/// Short options taking an argument.
const SHORT_ARG: &[u8] = b"koSTty";
/// Short options without one.
const SHORT_FLAG: &[u8] = b"bcCdfghimMnrRsuVz";

impl Args {
    /// Parses the arguments after the program name.
    pub fn parse(argv: &[String]) -> Result<Args, Fail> {
        let mut a = Args::default();
        let posixly_correct = std::env::var_os("POSIXLY_CORRECT").is_some();
        let posix_ver = std::env::var("_POSIX2_VERSION")
            .ok()
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(200_809);
        let traditional = !(200_112..200_809).contains(&posix_ver);
        let mut i = 0;
        let mut only_files = false;
        while i < argv.len() {
            let arg = &argv[i];
            i += 1;
            if only_files || arg == "-" || !arg.starts_with('-') {
                if only_files || posixly_correct && !a.files.is_empty() {
                    a.files.push(arg.clone());
                    continue;
                }
                if arg.starts_with('+') {
                    let next = argv.get(i).filter(|n| {
                        let b = n.as_bytes();
                        b.len() > 1 && b[0] == b'-' && b[1].is_ascii_digit()
                    });
                    let minus_pos = next.is_some() && !posixly_correct;
                    if traditional || minus_pos {
                        let pos2 = if minus_pos { next.map(String::as_str) } else { None };
                        if let Some(key) = GnuKey::parse_obsolete(arg, pos2).map_err(key_fail)? {
                            if pos2.is_some() {
                                i += 1;
                            }
                            a.keys.push(key);
                            continue;
                        }
                    }
                }
                a.files.push(arg.clone());
                continue;
            }
            if arg == "--" {
                only_files = true;
                continue;
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (long, None),
                };
                let (full, has, id) = find_long(name, arg)?;
                let value = match (has, inline) {
                    (Has::No, Some(_)) => {
                        return Err(Fail::usage(format!(
                            "option '--{full}' doesn't allow an argument"
                        )))
                    }
                    (Has::No, None) => None,
                    (Has::Optional, v) => v,
                    (Has::Required, Some(v)) => Some(v),
                    (Has::Required, None) => match argv.get(i) {
                        Some(v) => {
                            i += 1;
                            Some(v.clone())
                        }
                        None => {
                            return Err(Fail::usage(format!(
                                "option '--{full}' requires an argument"
                            )))
                        }
                    },
                };
                a.apply(id, value, &format!("--{full}"), argv, &mut i)?;
                continue;
            }
            // A cluster of short options.
            let b = arg.as_bytes();
            let mut j = 1;
            while j < b.len() {
                let c = b[j];
                j += 1;
                if SHORT_FLAG.contains(&c) {
                    a.apply(&(c as char).to_string(), None, "", argv, &mut i)?;
                } else if SHORT_ARG.contains(&c) {
                    let (value, separate) = if j < b.len() {
                        (arg[j..].to_string(), false)
                    } else {
                        match argv.get(i) {
                            Some(v) => {
                                i += 1;
                                (v.clone(), true)
                            }
                            None => {
                                return Err(Fail::usage(format!(
                                    "option requires an argument -- '{}'",
                                    c as char
                                )))
                            }
                        }
                    };
                    if c == b'y' {
                        // Ignored (old System V); a separate argument that is not all digits
                        // is an operand after all.
                        if separate && !value.bytes().all(|d| d.is_ascii_digit()) {
                            i -= 1;
                        }
                    } else {
                        a.apply(
                            &(c as char).to_string(),
                            Some(value),
                            &format!("-{}", c as char),
                            argv,
                            &mut i,
                        )?;
                    }
                    break;
                } else {
                    // getopt names the one byte, even the first of a multibyte character.
                    let mut m = b"invalid option -- '".to_vec();
                    m.extend_from_slice(&[c, b'\'']);
                    return Err(Fail::usage(m));
                }
            }
        }
        Ok(a)
    }

    /// Applies one option (`id` is the short letter or the long name).
    fn apply(
        &mut self,
        id: &str,
        value: Option<String>,
        shown: &str,
        _argv: &[String],
        _i: &mut usize,
    ) -> Result<(), Fail> {
        let given = value.is_some();
        let v = value.unwrap_or_default();
        match id {
            "b" | "d" | "f" | "g" | "h" | "i" | "M" | "n" | "r" | "R" | "V" => {
                self.global.set_ordering(id.as_bytes(), oxsort_lang::Blanks::Both);
            }
            "sort" => {
                let words = [
                    ("general-numeric", "g"),
                    ("human-numeric", "h"),
                    ("month", "M"),
                    ("numeric", "n"),
                    ("random", "R"),
                    ("version", "V"),
                ];
                let c = argmatch(&v, "--sort", &words)?;
                self.global.set_ordering(c.as_bytes(), oxsort_lang::Blanks::Both);
            }
            "check" | "c" | "C" => {
                let c = match (id, given) {
                    ("c", _) => Check::Diagnose,
                    ("C", _) => Check::Quiet,
                    (_, false) => Check::Diagnose,
                    _ => {
                        let words = [("quiet", "C"), ("silent", "C"), ("diagnose-first", "c")];
                        if argmatch(&v, "--check", &words)? == "C" {
                            Check::Quiet
                        } else {
                            Check::Diagnose
                        }
                    }
                };
                if self.check.is_some_and(|old| old != c) {
                    return Err(Fail::plain("options '-cC' are incompatible"));
                }
                self.check = Some(c);
            }
            "compress-program" => {
                if self.compress_program.as_ref().is_some_and(|p| *p != v) {
                    return Err(Fail::plain("multiple compress programs specified"));
                }
                self.compress_program = Some(v);
            }
            "debug" => self.debug = true,
            "files0-from" => self.files0_from = Some(v),
            "k" => self.keys.push(GnuKey::parse(&v).map_err(key_fail)?),
            "m" => self.merge = true,
            "batch-size" => self.batch_size = Some(batch_size(&v)?),
            "o" => {
                if self.output.as_ref().is_some_and(|o| *o != v) {
                    return Err(Fail::plain("multiple output files specified"));
                }
                self.output = Some(v);
            }
            "random-source" => {
                if self.random_source.as_ref().is_some_and(|o| *o != v) {
                    return Err(Fail::plain("multiple random sources specified"));
                }
                self.random_source = Some(v);
            }
            "s" => self.stable = true,
            "S" => {
                let n = sort_size(&v, shown)?;
                // The largest of several -S wins.
                self.buffer_size = Some(self.buffer_size.map_or(n, |o| o.max(n)));
            }
            "t" => {
                let b = v.as_bytes();
                let tab = match b {
                    [] => return Err(Fail::plain("empty tab")),
                    [t] => *t,
                    b"\\0" => 0,
                    _ => return Err(Fail::plain(format!("multi-character tab {}", quote(&v)))),
                };
                if self.separator.is_some_and(|t| t != tab) {
                    return Err(Fail::plain("incompatible tabs"));
                }
                self.separator = Some(tab);
            }
            "T" => self.temp_dirs.push(v),
            "parallel" => {
                // A count too large for the machine means all the threads there are.
                let n = match parse_count(&v) {
                    Err(NumErr::Overflow) => u64::MAX,
                    r => r.map_err(|e| xstrtol_fail(e, shown, &v))?,
                };
                if n == 0 {
                    return Err(Fail::plain("number in parallel must be nonzero"));
                }
                self.parallel = Some(usize::try_from(n).unwrap_or(usize::MAX));
            }
            "u" => self.unique = true,
            "z" => self.zero = true,
            "help" => self.help = true,
            "version" => self.version = true,
            _ => return Err(Fail::usage(format!("invalid option -- '{id}'"))),
        }
        Ok(())
    }
}

/// A key definition's error in GNU's words, the echoed text quoted as GNU's `quote` does.
pub(crate) fn key_fail(e: GnuKeyError) -> Fail {
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

/// Finds a long option by exact name or unambiguous prefix.
fn find_long(name: &str, arg: &str) -> Result<(&'static str, Has, &'static str), Fail> {
    if let Some(&(n, h, id)) = LONG.iter().find(|(n, _, _)| *n == name) {
        return Ok((n, h, id));
    }
    let matches: Vec<_> = LONG.iter().filter(|(n, _, _)| n.starts_with(name)).collect();
    match matches.as_slice() {
        // getopt echoes the whole argument, `=value` included.
        [] => Err(Fail::usage(format!("unrecognized option '{arg}'"))),
        [one] => Ok((one.0, one.1, one.2)),
        many => {
            let list: Vec<String> = many.iter().map(|(n, _, _)| format!("'--{n}'")).collect();
            Err(Fail::usage(format!(
                "option '{arg}' is ambiguous; possibilities: {}",
                list.join(" ")
            )))
        }
    }
}

/// GNU's `argmatch`: an exact word or an unambiguous prefix (prefixes of words with the same
/// meaning are not ambiguous; the empty word is a prefix of all). A miss exits with status 1
/// after the list of valid words (`argmatch_die`).
fn argmatch(v: &str, option: &str, words: &[(&str, &'static str)]) -> Result<&'static str, Fail> {
    if let Some((_, c)) = words.iter().find(|(w, _)| *w == v) {
        return Ok(c);
    }
    let hits: Vec<_> = words.iter().filter(|(w, _)| w.starts_with(v)).collect();
    let problem = match hits.first() {
        Some(first) if hits.iter().all(|(_, c)| *c == first.1) => return Ok(first.1),
        Some(_) => "ambiguous",
        None => "invalid",
    };
    let mut msg =
        format!("{problem} argument {} for {}\nValid arguments are:", quote(v), quote(option));
    let mut last = "";
    for (w, c) in words {
        if *c == last {
            msg.push_str(&format!(", {}", quote(w)));
        } else {
            msg.push_str(&format!("\n  - {}", quote(w)));
        }
        last = c;
    }
    Err(Fail { status: ARGMATCH_FAILURE, ..Fail::usage(msg) })
}

/// Why a number did not parse (`xstrtoumax`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumErr {
    Invalid,
    Suffix,
    Overflow,
}

/// A decimal count (`xstrtoumax` with no suffixes): blanks and `+` allowed, no `-`.
fn parse_count(s: &str) -> Result<u64, NumErr> {
    let t = s.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    if t.is_empty() || !t.as_bytes()[0].is_ascii_digit() {
        return Err(NumErr::Invalid);
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits < t.len() {
        return Err(NumErr::Suffix);
    }
    t.parse::<u64>().map_err(|_| NumErr::Overflow)
}

fn xstrtol_fail(e: NumErr, option: &str, v: &str) -> Fail {
    Fail::plain(match e {
        NumErr::Invalid => format!("invalid {option} argument {}", literal(v)),
        NumErr::Suffix => format!("invalid suffix in {option} argument {}", literal(v)),
        NumErr::Overflow => format!("{option} argument {} too large", literal(v)),
    })
}

/// `--batch-size`: at least 2, at most the open-file limit less 3.
fn batch_size(v: &str) -> Result<usize, Fail> {
    let max = oxsort_locale::sys::open_file_limit().saturating_sub(3);
    match parse_count(v) {
        Ok(n) if n < 2 => Err(Fail::plain(format!(
            "invalid --batch-size argument {}\nsort: minimum --batch-size argument is {}",
            quote(v),
            quote("2")
        ))),
        Ok(n) if n <= max => Ok(n as usize),
        Ok(_) | Err(NumErr::Overflow) => Err(Fail::plain(format!(
            "--batch-size argument {} too large\nsort: maximum --batch-size argument with \
             current rlimit is {max}",
            quote(v)
        ))),
        Err(e) => Err(xstrtol_fail(e, "--batch-size", v)),
    }
}

/// `-S SIZE`: a number with an optional suffix `b`, `%` (of physical memory), `K` (the
/// default), `M G T P E Z Y` (powers of 1024; `k m g t` too). GNU sort 9.1's help names `R`
/// and `Q`, and its parser refuses them, as oxsort does.
fn sort_size(v: &str, option: &str) -> Result<u64, Fail> {
    let t = v.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(xstrtol_fail(NumErr::Invalid, option, v));
    }
    let n: u128 = t[..digits].parse::<u128>().unwrap_or(u128::MAX);
    let suffix = &t[digits..];
    let power = |k: u32| n.checked_mul(1024u128.pow(k));
    let value = match suffix {
        "" => power(1),
        "b" => Some(n),
        "%" => Some(oxsort_locale::sys::physical_memory() as u128 * n / 100),
        "k" | "K" => power(1),
        "m" | "M" => power(2),
        "g" | "G" => power(3),
        "t" | "T" => power(4),
        "P" => power(5),
        "E" => power(6),
        "Z" => power(7),
        "Y" => power(8),
        _ => return Err(xstrtol_fail(NumErr::Suffix, option, v)),
    };
    match value.and_then(|x| u64::try_from(x).ok()) {
        Some(x) => Ok(x),
        None => Err(xstrtol_fail(NumErr::Overflow, option, v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: &[&str]) -> Result<Args, Fail> {
        Args::parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn bundles_and_values() {
        let a = parse(&["-nrk2,2", "-t,", "f1", "--", "-x"]).unwrap();
        assert!(a.global.numeric && a.global.reverse);
        assert_eq!(a.keys.len(), 1);
        assert_eq!(a.separator, Some(b','));
        assert_eq!(a.files, ["f1", "-x"]);
    }

    #[test]
    fn long_prefixes() {
        assert!(parse(&["--rev"]).unwrap().global.reverse);
        let e = parse(&["--s"]).unwrap_err();
        assert_eq!(e.message, b"option '--s' is ambiguous; possibilities: '--sort' '--stable'");
        assert_eq!(parse(&["--foo"]).unwrap_err().message, b"unrecognized option '--foo'");
        assert_eq!(parse(&["-k"]).unwrap_err().message, b"option requires an argument -- 'k'");
    }

    #[test]
    fn obsolete_keys() {
        let a = parse(&["+1", "-2", "f"]).unwrap();
        assert_eq!(a.keys[0].sword, Some(1));
        assert_eq!(a.keys[0].eword, Some(1));
        assert_eq!(a.files, ["f"]);
    }

    #[test]
    fn sizes() {
        assert_eq!(sort_size("10", "-S").unwrap(), 10 * 1024);
        assert_eq!(sort_size("10b", "-S").unwrap(), 10);
        assert_eq!(sort_size("2M", "-S").unwrap(), 2 << 20);
        assert!(sort_size("1x", "-S").is_err());
        assert!(sort_size("99999999999Q", "-S").is_err());
    }
}

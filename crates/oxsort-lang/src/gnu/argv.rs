//! GNU sort's command line as glibc's `getopt_long` reads it: options and operands in any
//! order, bundled short options (`-nru`, `-k2n`), `--` ending the options, long options
//! abbreviated to any unambiguous prefix, obsolete `+POS1 [-POS2]` keys (unless
//! `_POSIX2_VERSION` says POSIX 2001 to 2008 and no `-POS2` follows).
//!
//! The parser reads no environment: what it depends on comes in a [`GnuEnv`]. Mistakes come
//! back as a [`GnuArgError`] holding what GNU sort's message names; its `Display` is GNU's
//! wording in the C locale, and a front end may quote the parts as its locale wants.
//!
//! ```
//! use oxsort_lang::gnu::{GnuArgs, GnuEnv};
//!
//! let argv: Vec<String> = ["-t,", "-k2,2n", "-r", "in.txt"].iter().map(|s| s.to_string()).collect();
//! let a = GnuArgs::parse(&argv, &GnuEnv::default()).unwrap();
//! assert_eq!((a.separator, a.keys.len(), a.global.reverse), (Some(b','), 1, true));
//! assert_eq!(a.files, ["in.txt"]);
//! ```

use super::spec::{Blanks, GnuKey, GnuKeyError, GnuOptions};

/// What GNU sort's command line depends on outside itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GnuEnv {
    /// `POSIXLY_CORRECT` is set: options end at the first operand.
    pub posixly_correct: bool,
    /// `_POSIX2_VERSION` (200809 when unset): from 200112 to 200808, `+POS` is a key only when
    /// a `-POS2` follows it.
    pub posix2_version: i64,
    /// The open-file limit (`--batch-size` may be at most this less 3).
    pub open_file_limit: u64,
    /// Physical memory in bytes (what `-S 50%` is a share of).
    pub physical_memory: u64,
}

impl Default for GnuEnv {
    /// No `POSIXLY_CORRECT`, POSIX 2008, no file limit, no memory known.
    fn default() -> Self {
        GnuEnv {
            posixly_correct: false,
            posix2_version: 200_809,
            open_file_limit: u64::MAX,
            physical_memory: 0,
        }
    }
}

/// Why a number did not read (gnulib's `xstrtoumax`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NumberProblem {
    /// No digits where the number starts.
    Invalid,
    /// Digits followed by something that is not a known suffix.
    Suffix,
    /// Too large.
    Overflow,
}

/// A mistake on GNU sort's command line: what the message names, not its quoting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GnuArgError {
    /// `--debug=x` for an option that takes no value.
    #[error("option '--{option}' doesn't allow an argument")]
    UnexpectedValue {
        /// The long option's full name.
        option: &'static str,
    },
    /// A long option that takes a value came last, without one.
    #[error("option '--{option}' requires an argument")]
    MissingValue {
        /// The long option's full name.
        option: &'static str,
    },
    /// A short option that takes a value came last, without one.
    #[error("option requires an argument -- '{option}'")]
    MissingShortValue {
        /// The option letter.
        option: char,
    },
    /// A byte that is no short option (getopt names the one byte, even the first of a
    /// multibyte character).
    #[error("invalid option -- '{}'", char::from(*byte))]
    InvalidShort {
        /// The byte.
        byte: u8,
    },
    /// A long option that matches none.
    #[error("unrecognized option '{arg}'")]
    Unrecognized {
        /// The whole argument, `=value` included.
        arg: String,
    },
    /// A long option abbreviated to a prefix of several.
    #[error("option '{arg}' is ambiguous; possibilities:{}", list_long(candidates))]
    Ambiguous {
        /// The whole argument, `=value` included.
        arg: String,
        /// The long options it could mean, in GNU's table order.
        candidates: Vec<&'static str>,
    },
    /// A `--sort=` or `--check=` word that names none, or more than one (GNU's `argmatch`).
    #[error("{} argument '{value}' for '{option}'", if *ambiguous { "ambiguous" } else { "invalid" })]
    BadWord {
        /// Several words start with it.
        ambiguous: bool,
        /// The word given.
        value: String,
        /// The option (`--sort`, `--check`).
        option: &'static str,
        /// The valid words and what each means, in GNU's order (words meaning the same thing
        /// follow each other).
        words: &'static [(&'static str, &'static str)],
    },
    /// `-c` and `-C` (or `--check=` words meaning each) together.
    #[error("options '-cC' are incompatible")]
    IncompatibleChecks,
    /// One option given twice with different values (`-o`, `--compress-program`,
    /// `--random-source`).
    #[error("multiple {what} specified")]
    Repeated {
        /// What GNU names: `output files`, `compress programs`, `random sources`.
        what: &'static str,
    },
    /// `-t ''`.
    #[error("empty tab")]
    EmptyTab,
    /// `-t` with more than one character (other than `\0`).
    #[error("multi-character tab '{tab}'")]
    MultiCharacterTab {
        /// The value given.
        tab: String,
    },
    /// Two `-t` with different characters.
    #[error("incompatible tabs")]
    IncompatibleTabs,
    /// A number that did not read (`-S`, `--parallel`, `--batch-size`).
    #[error("{}", number_text(*problem, option, value))]
    Number {
        /// What is wrong with it.
        problem: NumberProblem,
        /// The option as written (`-S`, `--buffer-size`, `--parallel`).
        option: String,
        /// The value given.
        value: String,
    },
    /// `--parallel=0`.
    #[error("number in parallel must be nonzero")]
    ZeroParallel,
    /// `--batch-size` below 2.
    #[error("invalid --batch-size argument '{value}'\nsort: minimum --batch-size argument is '2'")]
    BatchTooSmall {
        /// The value given.
        value: String,
    },
    /// `--batch-size` above the open-file limit less 3.
    #[error(
        "--batch-size argument '{value}' too large\nsort: maximum --batch-size argument with \
         current rlimit is {max}"
    )]
    BatchTooLarge {
        /// The value given.
        value: String,
        /// The largest allowed.
        max: u64,
    },
    /// A bad key definition (`-k`, `+POS`).
    #[error(transparent)]
    Key(#[from] GnuKeyError),
}

/// `Ambiguous`'s list: ` '--sort' '--stable'`.
fn list_long(names: &[&str]) -> String {
    names.iter().map(|n| format!(" '--{n}'")).collect()
}

/// A number's message as gnulib's `xstrtol_error` words it.
fn number_text(problem: NumberProblem, option: &str, value: &str) -> String {
    match problem {
        NumberProblem::Invalid => format!("invalid {option} argument '{value}'"),
        NumberProblem::Suffix => format!("invalid suffix in {option} argument '{value}'"),
        NumberProblem::Overflow => format!("{option} argument '{value}' too large"),
    }
}

/// The words of `--sort=`.
pub const SORT_WORDS: &[(&str, &str)] = &[
    ("general-numeric", "g"),
    ("human-numeric", "h"),
    ("month", "M"),
    ("numeric", "n"),
    ("random", "R"),
    ("version", "V"),
];

/// The words of `--check=`.
pub const CHECK_WORDS: &[(&str, &str)] =
    &[("quiet", "C"), ("silent", "C"), ("diagnose-first", "c")];

/// `--check` / `-c` / `-C`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GnuCheck {
    /// `-c`: report the first disorder.
    Diagnose,
    /// `-C`: exit status only.
    Quiet,
}

/// Everything a GNU sort command line says.
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct GnuArgs {
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
    pub check: Option<GnuCheck>,
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

impl GnuArgs {
    /// The key options these arguments give, by GNU sort's rules in the C locale (bytewise
    /// text, `.` as the decimal point, no thousands separator), as `oxsort sort -k` and
    /// Python's `keys=` build them.
    pub fn c_locale_options(&self) -> GnuOptions {
        GnuOptions {
            keys: self.keys.clone(),
            global: self.global,
            separator: self.separator,
            stable: self.stable,
            unique: self.unique,
            decimal_point: b'.',
            ..GnuOptions::default()
        }
    }

    /// Parses the arguments after the program name.
    pub fn parse(argv: &[String], env: &GnuEnv) -> Result<GnuArgs, GnuArgError> {
        let mut a = GnuArgs::default();
        let posixly_correct = env.posixly_correct;
        let traditional = !(200_112..200_809).contains(&env.posix2_version);
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
                        if let Some(key) = GnuKey::parse_obsolete(arg, pos2)? {
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
                        return Err(GnuArgError::UnexpectedValue { option: full })
                    }
                    (Has::No, None) => None,
                    (Has::Optional, v) => v,
                    (Has::Required, Some(v)) => Some(v),
                    (Has::Required, None) => match argv.get(i) {
                        Some(v) => {
                            i += 1;
                            Some(v.clone())
                        }
                        None => return Err(GnuArgError::MissingValue { option: full }),
                    },
                };
                a.apply(id, value, &format!("--{full}"), env)?;
                continue;
            }
            // A cluster of short options.
            let b = arg.as_bytes();
            let mut j = 1;
            while j < b.len() {
                let c = b[j];
                j += 1;
                if SHORT_FLAG.contains(&c) {
                    a.apply(&(c as char).to_string(), None, "", env)?;
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
                                return Err(GnuArgError::MissingShortValue { option: c as char })
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
                            env,
                        )?;
                    }
                    break;
                } else {
                    return Err(GnuArgError::InvalidShort { byte: c });
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
        env: &GnuEnv,
    ) -> Result<(), GnuArgError> {
        let given = value.is_some();
        let v = value.unwrap_or_default();
        match id {
            "b" | "d" | "f" | "g" | "h" | "i" | "M" | "n" | "r" | "R" | "V" => {
                self.global.set_ordering(id.as_bytes(), Blanks::Both);
            }
            "sort" => {
                let c = argmatch(&v, "--sort", SORT_WORDS)?;
                self.global.set_ordering(c.as_bytes(), Blanks::Both);
            }
            "check" | "c" | "C" => {
                let c = match (id, given) {
                    ("c", _) => GnuCheck::Diagnose,
                    ("C", _) => GnuCheck::Quiet,
                    (_, false) => GnuCheck::Diagnose,
                    _ => {
                        if argmatch(&v, "--check", CHECK_WORDS)? == "C" {
                            GnuCheck::Quiet
                        } else {
                            GnuCheck::Diagnose
                        }
                    }
                };
                if self.check.is_some_and(|old| old != c) {
                    return Err(GnuArgError::IncompatibleChecks);
                }
                self.check = Some(c);
            }
            "compress-program" => {
                if self.compress_program.as_ref().is_some_and(|p| *p != v) {
                    return Err(GnuArgError::Repeated { what: "compress programs" });
                }
                self.compress_program = Some(v);
            }
            "debug" => self.debug = true,
            "files0-from" => self.files0_from = Some(v),
            "k" => self.keys.push(GnuKey::parse(&v)?),
            "m" => self.merge = true,
            "batch-size" => self.batch_size = Some(batch_size(&v, env.open_file_limit)?),
            "o" => {
                if self.output.as_ref().is_some_and(|o| *o != v) {
                    return Err(GnuArgError::Repeated { what: "output files" });
                }
                self.output = Some(v);
            }
            "random-source" => {
                if self.random_source.as_ref().is_some_and(|o| *o != v) {
                    return Err(GnuArgError::Repeated { what: "random sources" });
                }
                self.random_source = Some(v);
            }
            "s" => self.stable = true,
            "S" => {
                let n = sort_size(&v, shown, env.physical_memory)?;
                // The largest of several -S wins.
                self.buffer_size = Some(self.buffer_size.map_or(n, |o| o.max(n)));
            }
            "t" => {
                let b = v.as_bytes();
                let tab = match b {
                    [] => return Err(GnuArgError::EmptyTab),
                    [t] => *t,
                    b"\\0" => 0,
                    _ => return Err(GnuArgError::MultiCharacterTab { tab: v }),
                };
                if self.separator.is_some_and(|t| t != tab) {
                    return Err(GnuArgError::IncompatibleTabs);
                }
                self.separator = Some(tab);
            }
            "T" => self.temp_dirs.push(v),
            "parallel" => {
                // A count too large for the machine means all the threads there are.
                let n = match parse_count(&v) {
                    Err(NumberProblem::Overflow) => u64::MAX,
                    r => r.map_err(|e| number_error(e, shown, &v))?,
                };
                if n == 0 {
                    return Err(GnuArgError::ZeroParallel);
                }
                self.parallel = Some(usize::try_from(n).unwrap_or(usize::MAX));
            }
            "u" => self.unique = true,
            "z" => self.zero = true,
            "help" => self.help = true,
            "version" => self.version = true,
            _ => return Err(GnuArgError::InvalidShort { byte: id.as_bytes()[0] }),
        }
        Ok(())
    }
}

/// Finds a long option by exact name or unambiguous prefix.
fn find_long(name: &str, arg: &str) -> Result<(&'static str, Has, &'static str), GnuArgError> {
    if let Some(&(n, h, id)) = LONG.iter().find(|(n, _, _)| *n == name) {
        return Ok((n, h, id));
    }
    let matches: Vec<_> = LONG.iter().filter(|(n, _, _)| n.starts_with(name)).collect();
    match matches.as_slice() {
        // getopt echoes the whole argument, `=value` included.
        [] => Err(GnuArgError::Unrecognized { arg: arg.to_string() }),
        [one] => Ok((one.0, one.1, one.2)),
        many => Err(GnuArgError::Ambiguous {
            arg: arg.to_string(),
            candidates: many.iter().map(|(n, _, _)| *n).collect(),
        }),
    }
}

/// GNU's `argmatch`: an exact word or an unambiguous prefix (prefixes of words with the same
/// meaning are not ambiguous; the empty word is a prefix of all).
fn argmatch(
    v: &str,
    option: &'static str,
    words: &'static [(&'static str, &'static str)],
) -> Result<&'static str, GnuArgError> {
    if let Some((_, c)) = words.iter().find(|(w, _)| *w == v) {
        return Ok(c);
    }
    let hits: Vec<_> = words.iter().filter(|(w, _)| w.starts_with(v)).collect();
    let ambiguous = match hits.first() {
        Some(first) if hits.iter().all(|(_, c)| *c == first.1) => return Ok(first.1),
        Some(_) => true,
        None => false,
    };
    Err(GnuArgError::BadWord { ambiguous, value: v.to_string(), option, words })
}

/// A decimal count (`xstrtoumax` with no suffixes): blanks and `+` allowed, no `-`.
fn parse_count(s: &str) -> Result<u64, NumberProblem> {
    let t = s.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    if t.is_empty() || !t.as_bytes()[0].is_ascii_digit() {
        return Err(NumberProblem::Invalid);
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits < t.len() {
        return Err(NumberProblem::Suffix);
    }
    t.parse::<u64>().map_err(|_| NumberProblem::Overflow)
}

fn number_error(problem: NumberProblem, option: &str, v: &str) -> GnuArgError {
    GnuArgError::Number { problem, option: option.to_string(), value: v.to_string() }
}

/// `--batch-size`: at least 2, at most the open-file limit less 3.
fn batch_size(v: &str, open_file_limit: u64) -> Result<usize, GnuArgError> {
    let max = open_file_limit.saturating_sub(3);
    match parse_count(v) {
        Ok(n) if n < 2 => Err(GnuArgError::BatchTooSmall { value: v.to_string() }),
        Ok(n) if n <= max => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        Ok(_) | Err(NumberProblem::Overflow) => {
            Err(GnuArgError::BatchTooLarge { value: v.to_string(), max })
        }
        Err(e) => Err(number_error(e, "--batch-size", v)),
    }
}

/// `-S SIZE`: a number with an optional suffix `b`, `%` (of physical memory), `K` (the
/// default), `M G T P E Z Y` (powers of 1024; `k m g t` too). GNU sort 9.1's help names `R`
/// and `Q`, and its parser refuses them, as oxsort does.
fn sort_size(v: &str, option: &str, physical_memory: u64) -> Result<u64, GnuArgError> {
    let t = v.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(number_error(NumberProblem::Invalid, option, v));
    }
    let n: u128 = t[..digits].parse::<u128>().unwrap_or(u128::MAX);
    let suffix = &t[digits..];
    let power = |k: u32| n.checked_mul(1024u128.pow(k));
    let value = match suffix {
        "" => power(1),
        "b" => Some(n),
        "%" => Some(u128::from(physical_memory) * n / 100),
        "k" | "K" => power(1),
        "m" | "M" => power(2),
        "g" | "G" => power(3),
        "t" | "T" => power(4),
        "P" => power(5),
        "E" => power(6),
        "Z" => power(7),
        "Y" => power(8),
        _ => return Err(number_error(NumberProblem::Suffix, option, v)),
    };
    match value.and_then(|x| u64::try_from(x).ok()) {
        Some(x) => Ok(x),
        None => Err(number_error(NumberProblem::Overflow, option, v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: &[&str]) -> Result<GnuArgs, GnuArgError> {
        GnuArgs::parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &GnuEnv::default())
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
        assert_eq!(e.to_string(), "option '--s' is ambiguous; possibilities: '--sort' '--stable'");
        assert_eq!(parse(&["--foo"]).unwrap_err().to_string(), "unrecognized option '--foo'");
        assert_eq!(parse(&["-k"]).unwrap_err().to_string(), "option requires an argument -- 'k'");
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
        assert_eq!(sort_size("10", "-S", 0).unwrap(), 10 * 1024);
        assert_eq!(sort_size("10b", "-S", 0).unwrap(), 10);
        assert_eq!(sort_size("2M", "-S", 0).unwrap(), 2 << 20);
        assert!(sort_size("1x", "-S", 0).is_err());
        assert!(sort_size("99999999999Q", "-S", 0).is_err());
    }
}

//! Record layout and key flags of `oxsort sort` / `explain`: `--record-size`, `--lines`,
//! `--nul`, `--fields`, `--control`, `--unique` and GNU sort's `-k -t -n -r -s` (keys with every
//! GNU modifier, built as [`oxsort_format::GnuOptions`] in the C locale).
//!
//! The flags end in a [`SortSpec`] (layout, key, filter, unique, mode), the model every front
//! end builds, which [`crate::sort_cmd`] hands to the engine. Key sources are exclusive: one of `--fields`, the
//! control file's `SORT`/`MERGE FIELDS=`, or the GNU flags (delimited text only).
//!
//! ```text
//!  --record-size N ─┐
//!  --lines / --nul ─┼─> layout ─────────────────────────┐
//!  RECORD LENGTH=n ─┘                                   │
//!  --fields p,l,f,o ─┐                                  ├─> SortSpec ─> SortConfig
//!  SORT/MERGE FIELDS ┼─> key  (exactly one source)      │
//!  -k -t -n -r -s ───┘                                  │
//!  INCLUDE/OMIT, SUM FIELDS=NONE, -u, COPY, MERGE ──────┘
//! ```

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use oxsort_format::{
    parse_control, parse_fields, Blanks, GnuKey, GnuOptions, Mode, ParseError, SortSpec,
};
use oxsort_format::{Location, RecordLayout};

/// Layout and key flags (flattened into [`crate::sort_cmd::SortArgs`]).
#[derive(clap::Args, Debug, Default)]
pub struct KeyArgs {
    /// Fixed-size records of N bytes (1 to 65535; default 100, the Sort Benchmark record).
    #[arg(long = "record-size", value_name = "N", help_heading = "Records and keys")]
    pub record_size: Option<usize>,
    /// Newline-terminated records (text lines).
    #[arg(long, conflicts_with = "nul", help_heading = "Records and keys")]
    pub lines: bool,
    /// NUL-terminated records.
    #[arg(long, help_heading = "Records and keys")]
    pub nul: bool,
    /// The key as in DFSORT's `SORT FIELDS=`: `p,l,f,o,...` (position 1-based, length,
    /// format CH BI FI FL PD ZD CSF UFF SFF LU LI LF, order A or D). Default: 1,10,CH,A.
    #[arg(long, value_name = "SPEC", help_heading = "Records and keys")]
    pub fields: Option<String>,
    /// DFSORT control statements: SORT/MERGE FIELDS=, SUM FIELDS=NONE, INCLUDE/OMIT COND=,
    /// OPTION EQUALS/NOEQUALS/COPY/VLSHRT, RECORD TYPE=F,LENGTH=n.
    #[arg(long, value_name = "FILE", help_heading = "Records and keys")]
    pub control: Option<PathBuf>,
    /// Keep only the first record (in input order) of each run of equal keys.
    #[arg(short = 'u', long, help_heading = "Records and keys")]
    pub unique: bool,
    /// GNU sort key `F[.C][OPTS][,F[.C][OPTS]]` on delimited text (repeatable); OPTS as GNU
    /// sort's `bdfghiMnRrV` (C locale; `oxsort gnu` has the whole GNU command line).
    #[arg(
        short = 'k',
        long = "key",
        value_name = "KEYDEF",
        help_heading = "GNU sort flags (with --lines or --nul)"
    )]
    pub gnu_keys: Vec<String>,
    /// GNU sort field separator (one byte, or \0).
    #[arg(
        short = 't',
        long = "field-separator",
        value_name = "SEP",
        help_heading = "GNU sort flags (with --lines or --nul)"
    )]
    pub separator: Option<String>,
    /// Compare keys as numbers (GNU sort -n, C locale).
    #[arg(
        short = 'n',
        long = "numeric-sort",
        help_heading = "GNU sort flags (with --lines or --nul)"
    )]
    pub numeric: bool,
    /// Reverse the order (GNU sort -r).
    #[arg(short = 'r', long, help_heading = "GNU sort flags (with --lines or --nul)")]
    pub reverse: bool,
    /// No last-resort whole-line comparison; ties keep input order (GNU sort -s).
    #[arg(short = 's', long, help_heading = "GNU sort flags (with --lines or --nul)")]
    pub stable: bool,
}

impl KeyArgs {
    /// Whether any GNU-only flag was given.
    fn gnu_flags(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if !self.gnu_keys.is_empty() {
            v.push("-k");
        }
        if self.separator.is_some() {
            v.push("-t");
        }
        if self.numeric {
            v.push("-n");
        }
        if self.reverse {
            v.push("-r");
        }
        if self.stable {
            v.push("-s");
        }
        v
    }

    /// Reads and checks the flags (and the control file). Errors name the flag or the file,
    /// with line and column for parse errors.
    pub fn spec(&self) -> Result<SortSpec> {
        // The layout the flags give, if any (the default is the benchmark's 100-byte records).
        let mut layout: Option<RecordLayout> = None;
        let mut t = SortSpec { unique: self.unique, ..SortSpec::default() };

        // Layout from the flags.
        let delimited = match (self.lines, self.nul) {
            (true, _) => Some(RecordLayout::LINES),
            (_, true) => Some(RecordLayout::NUL),
            _ => None,
        };
        if let Some(n) = self.record_size {
            if delimited.is_some() {
                bail!("--record-size gives fixed records; it cannot go with --lines or --nul");
            }
            layout = Some(RecordLayout::fixed(n).context("--record-size")?);
        }
        if delimited.is_some() {
            layout = delimited;
        }

        // The control file.
        let mut control_key = false;
        if let Some(path) = &self.control {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the control file {}", path.display()))?;
            let c = parse_control(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let name = path.display();
            if let Some(RecordLayout::Fixed(n)) = c.record {
                match layout {
                    Some(RecordLayout::Fixed(m)) if m != n => {
                        bail!("{name}: RECORD LENGTH={n} conflicts with --record-size {m}")
                    }
                    Some(RecordLayout::Delimited(_)) => bail!(
                        "{name}: RECORD TYPE=F,LENGTH={n} (fixed records) conflicts with {}",
                        if self.lines { "--lines" } else { "--nul" }
                    ),
                    _ => layout = Some(RecordLayout::Fixed(n)),
                }
            }
            if c.copy {
                t.mode = Mode::Copy;
                if self.fields.is_some() {
                    bail!("{name}: a copy (FIELDS=COPY or OPTION COPY) has no key, but --fields gives one");
                }
            } else if c.merge {
                t.mode = Mode::Merge;
            }
            if let Some(key) = c.key {
                if self.fields.is_some() {
                    bail!(
                        "--fields and the {} FIELDS= of {name} both give the key: keep one",
                        if c.merge { "MERGE" } else { "SORT" }
                    );
                }
                t.key = Some(key);
                control_key = true;
            }
            // EQUALS and NOEQUALS (`c.equals`) both hold: oxsort always sorts stably.
            t.unique |= c.sum_none;
            t.filter = c.filter;
        }

        // --fields.
        if let Some(spec) = &self.fields {
            let key = parse_fields(spec).map_err(|e| {
                anyhow::anyhow!("{}", flag_error(&format!("--fields '{spec}'"), &e))
            })?;
            t.key = Some(key);
        }

        // GNU flags: only for delimited text, only as the one key source.
        let gnu = self.gnu_flags();
        if !gnu.is_empty() {
            if delimited.is_none() {
                bail!(
                    "{} {} GNU sort flag{} for delimited text: add --lines or --nul (for fixed \
                     records give the key with --fields)",
                    gnu.join(" "),
                    if gnu.len() == 1 { "is a" } else { "are" },
                    if gnu.len() == 1 { "" } else { "s" }
                );
            }
            if self.fields.is_some() || control_key {
                bail!(
                    "{} and {} both give the key: keep one",
                    gnu.join(" "),
                    if self.fields.is_some() { "--fields" } else { "the control file" }
                );
            }
        }
        if delimited.is_some() && t.key.is_none() && t.mode != Mode::Copy {
            // GNU sort's semantics for delimited text, whole lines when no -k.
            let g = self.gnu_options(t.unique)?;
            t.key = Some(g.key_spec());
            t.unique |= g.unique;
        }
        if let Some(l) = layout {
            t.layout = l;
        }
        Ok(t)
    }

    /// The GNU flags as GNU sort's keys (C locale): `-k` with every modifier of GNU sort
    /// (`b d f g h i M n R r V`, `.c` positions), `-t`, global `-n -r`, `-s`, `-u`.
    fn gnu_options(&self, unique: bool) -> Result<GnuOptions> {
        let mut g =
            GnuOptions { decimal_point: b'.', unique, stable: self.stable, ..Default::default() };
        if let Some(sep) = &self.separator {
            g.separator = Some(match sep.as_bytes() {
                [b] => *b,
                b"\\0" => 0,
                _ => bail!("-t '{sep}': the separator must be one byte (or \\0 for NUL)"),
            });
        }
        for k in &self.gnu_keys {
            g.keys.push(GnuKey::parse(k).map_err(|e| anyhow::anyhow!("-k '{k}': {e}"))?);
        }
        if self.numeric {
            g.global.set_ordering(b"n", Blanks::Both);
        }
        if self.reverse {
            g.global.set_ordering(b"r", Blanks::Both);
        }
        g.check().map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(g)
    }
}

/// A parse error of a one-line flag value: `--fields '1,10,CQ,A': column 7: ...`.
pub fn flag_error(what: &str, e: &ParseError) -> String {
    match &e.location {
        Location::Line { column, .. } | Location::Argument { column, .. } => {
            format!("{what}: column {column}: {}", without_location(e))
        }
        _ => format!("{what}: {e}"),
    }
}

/// The message of a parse error without its location prefix.
pub fn without_location(e: &ParseError) -> String {
    let full = e.to_string();
    let prefix = format!("{}: ", e.location);
    full.strip_prefix(&prefix).map(str::to_string).unwrap_or(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(f: impl FnOnce(&mut KeyArgs)) -> KeyArgs {
        let mut a = KeyArgs::default();
        f(&mut a);
        a
    }

    #[test]
    fn fields_errors_point_at_the_column() {
        let a = args(|a| a.fields = Some("1,10,CH,Q".into()));
        let e = a.spec().unwrap_err().to_string();
        assert!(e.starts_with("--fields '1,10,CH,Q': column 9: "), "{e}");
        assert!(e.contains("found 'Q'"), "{e}");
    }

    #[test]
    fn gnu_flags_need_delimited_records() {
        let a = args(|a| a.gnu_keys = vec!["2".into()]);
        let e = a.spec().unwrap_err().to_string();
        assert!(e.contains("add --lines or --nul"), "{e}");
        let a = args(|a| {
            a.lines = true;
            a.gnu_keys = vec!["2,2Q".into()];
        });
        let e = a.spec().unwrap_err().to_string();
        assert_eq!(
            e,
            "-k '2,2Q': stray character in field spec: invalid field specification '2,2Q'"
        );
    }

    #[test]
    fn lines_without_a_key_sort_whole_lines() {
        let t = args(|a| a.lines = true).spec().unwrap();
        assert_eq!(t.layout, RecordLayout::LINES);
        assert_eq!(t.key.unwrap().fields.len(), 1);
        let t = args(|a| {
            a.nul = true;
            a.unique = true;
            a.gnu_keys = vec!["2,2n".into()];
        })
        .spec()
        .unwrap();
        assert!(t.unique);
        // -u drops GNU's last-resort comparison.
        assert_eq!(t.key.unwrap().fields.len(), 1);
    }

    #[test]
    fn record_size_bounds() {
        assert!(args(|a| a.record_size = Some(0)).spec().is_err());
        assert!(args(|a| a.record_size = Some(65_536)).spec().is_err());
        let t = args(|a| a.record_size = Some(65_535)).spec().unwrap();
        assert_eq!(t.layout, RecordLayout::Fixed(65_535));
    }
}

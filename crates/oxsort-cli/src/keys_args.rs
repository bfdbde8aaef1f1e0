//! Record layout and key flags of `oxsort sort` / `explain`: `--record-size`, `--lines`,
//! `--nul`, `--fields`, `--control`, `--unique` and GNU sort's `-k -t -n -r -s` (keys with every
//! GNU modifier, built as [`oxsort_lang::GnuOptions`] in the C locale).
//!
//! The flags end in the job layer's [`SpecSource`], from which it builds one
//! [`SortSpec`](oxsort_format::SortSpec) (layout, key, filter, unique, mode), the model every
//! front end builds. Key sources are exclusive: one of `--fields`, the control file's
//! `SORT`/`MERGE FIELDS=`, or the GNU flags (delimited text only).
//!
//! ```text
//!  --record-size N ─┐
//!  --lines / --nul ─┼─> layout ─────────────────────────┐
//!  --rdw[=LRECL] ───┤                                   │
//!  RECORD TYPE=,LENGTH=n ─┘                             │
//!  --fields p,l,f,o ─┐                                  ├─> SortSpec ─> SortConfig
//!  SORT/MERGE FIELDS ┼─> key  (exactly one source)      │
//!  -k -t -n -r -s ───┘                                  │
//!  INCLUDE/OMIT, SUM FIELDS=NONE, -u, COPY, MERGE ──────┘
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use oxsort_format::RecordLayout;
use oxsort_job::{ControlText, JobError, SpecSource};
use oxsort_lang::{parse_fields, Blanks, GnuKey, GnuOptions, SourceConflict, Vocabulary};

/// Layout and key flags (flattened into [`crate::sort_cmd::SortArgs`]).
#[derive(clap::Args, Debug, Default, Clone)]
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
    /// RDW-prefixed variable records (z/OS RECFM=V/VB): each starts with a 4-byte record
    /// descriptor word (2-byte big-endian length, RDW included, then 2 zero bytes), kept in the
    /// output; key positions count the RDW as bytes 1-4. `--rdw=LRECL` sets the longest record
    /// (RDW included; default 65535).
    #[arg(
        long,
        value_name = "LRECL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "65535",
        help_heading = "Records and keys"
    )]
    pub rdw: Option<usize>,
    /// The key as in DFSORT's `SORT FIELDS=`: `p,l,f,o,...` (position 1-based, length,
    /// format CH BI FI FL PD ZD CSF UFF SFF LU LI LF, order A or D). Default: 1,10,CH,A.
    #[arg(long, value_name = "SPEC", help_heading = "Records and keys")]
    pub fields: Option<String>,
    /// DFSORT control statements: SORT/MERGE FIELDS=, SUM FIELDS=NONE|(p,m,f), INCLUDE/OMIT COND=,
    /// INREC/OUTREC BUILD=/FIELDS=/OVERLAY=/FINDREP=/IFTHEN=, OUTFIL (outputs named by --dd),
    /// OPTION EQUALS/NOEQUALS/COPY/VLSHRT/VLSCMP/SKIPREC=/STOPAFT=/MAINSIZE=, RECORD TYPE=F,LENGTH=n
    /// or TYPE=V[,LENGTH=n] (RDW-prefixed records, as --rdw).
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

    /// The RDW-prefixed layout `--rdw` asks for, if it does.
    fn rdw_layout(&self) -> Result<Option<RecordLayout>> {
        self.rdw
            .map(|max| RecordLayout::variable(max).map_err(|e| anyhow!("--rdw={max}: {e}")))
            .transpose()
    }

    /// The control file's statements, read once.
    pub fn control_text(&self) -> Result<Option<ControlText>> {
        let Some(path) = &self.control else { return Ok(None) };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the control file {}", path.display()))?;
        Ok(Some(ControlText::new(path.display().to_string(), text)))
    }

    /// The sources of the spec these flags give, with `control` (the control statements,
    /// read once). Errors name the flag, with the column for parse errors.
    pub fn spec_source(&self, control: Option<ControlText>) -> Result<SpecSource> {
        let delimited = match (self.lines, self.nul) {
            (true, _) => Some(RecordLayout::LINES),
            (_, true) => Some(RecordLayout::NUL),
            _ => None,
        };
        let fields = match &self.fields {
            Some(spec) => Some(
                parse_fields(spec)
                    .map_err(|e| anyhow!("{}", e.in_value(&format!("--fields '{spec}'"))))?,
            ),
            None => None,
        };
        let flags = self.clone();
        Ok(SpecSource {
            control,
            fields,
            delimited,
            record_size: self.record_size,
            rdw: self.rdw_layout()?,
            gnu_flags: !self.gnu_flags().is_empty(),
            gnu: Some(Arc::new(move |unique| {
                let g = flags.gnu_options(unique)?;
                Ok((g.key_spec(), g.unique))
            })),
            unique: self.unique,
            merge: false,
            table: None,
        })
    }

    /// Reads and checks the flags (and the control file). Errors name the flag or the file,
    /// with line and column for parse errors.
    #[cfg(test)]
    pub fn spec(&self) -> Result<oxsort_format::SortSpec> {
        let source = self.spec_source(self.control_text()?)?;
        oxsort_job::spec_of(&source).map_err(|e| self.job_error(e))
    }

    /// A job layer's error about the spec, in the words of this command line.
    pub fn job_error(&self, e: JobError) -> anyhow::Error {
        match e {
            JobError::Conflict { control, conflict } => {
                self.conflict(&control.unwrap_or_default(), conflict)
            }
            JobError::Door(e) => anyhow!("{e}"),
            e => crate::words::cli_error(e),
        }
    }

    /// A conflict between sources, in the words of this command line.
    fn conflict(&self, name: &str, c: SourceConflict) -> anyhow::Error {
        let gnu = self.gnu_flags();
        let words = Flags {
            control: name.to_string(),
            lines: self.lines,
            gnu: gnu.join(" "),
            gnu_count: gnu.len(),
        };
        anyhow!("{}", c.describe(&words))
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

/// The command line's names for the sources of a sort's description.
struct Flags {
    /// The control statements' file (or GCSORT's name for its text).
    control: String,
    /// `--lines` (else `--nul`) was given.
    lines: bool,
    /// The GNU flags given, as `-k -t`.
    gnu: String,
    /// How many GNU flags that is.
    gnu_count: usize,
}

impl Vocabulary for Flags {
    fn record_size(&self, size: Option<usize>) -> String {
        match size {
            Some(n) => format!("--record-size {n}"),
            None => "--record-size".into(),
        }
    }
    fn delimited(&self) -> String {
        if self.lines { "--lines" } else { "--nul" }.into()
    }
    fn delimited_options(&self) -> String {
        "--lines or --nul".into()
    }
    fn variable(&self) -> String {
        "--rdw (or RECFM=V/VB)".into()
    }
    fn control(&self) -> String {
        self.control.clone()
    }
    fn fields(&self) -> String {
        "--fields".into()
    }
    fn gnu(&self) -> String {
        self.gnu.clone()
    }
    fn gnu_are(&self) -> String {
        if self.gnu_count == 1 { "is a GNU sort flag" } else { "are GNU sort flags" }.into()
    }
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

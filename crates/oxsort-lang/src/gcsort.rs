//! GCSORT's command form (GnuCOBOL's DFSORT-compatible sort): its statements read into the
//! files a job uses and gives and the DFSORT control statements it runs.
//!
//! ```text
//!  TAKE file                                        statements read from file, in place
//!  USE  file ORG SQ|LS|LSF RECORD F,n|V,min,max     an input (repeat to concatenate)
//!  GIVE file ORG SQ|LS|LSF RECORD F,n|V,min,max     the output
//!  SORT, MERGE, SUM, INCLUDE, OMIT, INREC, OUTREC, OPTION, RECORD   as DFSORT's
//!  JOINKEYS FILES=F1 / FILES=F2, JOIN, REFORMAT      a join: the first USE is F1, the second F2
//! ```
//!
//! `ORG SQ` with `RECORD F,n` is fixed n-byte records; `ORG SQ` with `RECORD V,min,max` is
//! RDW-prefixed variable records (each a 4-byte RDW, whose big-endian length counts the RDW,
//! then `min` to `max` data bytes); `ORG LS` and `LSF` are line sequential files (text lines).
//! Lines whose first non-blank is `*` are comments. The caller says what a file name stands for
//! and reads TAKE files ([`GcsortFiles`]): this module reads no file.

use std::path::{Path, PathBuf};

use oxsort_format::{MAX_RECORD_SIZE, RDW_BYTES};

/// Statement names that start a new statement in the one-line command form.
const STATEMENTS: &[&str] = &[
    "SORT", "MERGE", "USE", "GIVE", "TAKE", "SUM", "INCLUDE", "OMIT", "INREC", "OUTREC", "OUTFIL",
    "OPTION", "RECORD", "JOINKEYS", "JOIN", "REFORMAT", "END",
];

/// How deep TAKE files may nest (a file taking itself would never end).
pub const MAX_TAKE_DEPTH: usize = 8;

/// Where a statement is: the statements' name (a file, the command line) and the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementAt {
    /// Where the statements came from.
    pub name: String,
    /// The statement's 1-based line.
    pub line: usize,
}

impl std::fmt::Display for StatementAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: line {}", self.name, self.line)
    }
}

/// What is wrong in a USE or GIVE statement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileStatementError {
    /// `KEY`: an indexed file.
    #[error("indexed files (KEY) are not supported by oxsort")]
    Indexed,
    /// A word that is neither ORG nor RECORD.
    #[error("expected ORG or RECORD, found {found}")]
    Operand {
        /// The word as written.
        found: String,
    },
    /// No ORG.
    #[error("expected ORG SQ, LS or LSF")]
    NoOrg,
    /// No RECORD.
    #[error("expected RECORD F,n (fixed) or V,min,max (variable)")]
    NoRecord,
    /// `RECORD F,n` whose n is no record length.
    #[error("RECORD F,{length}: expected a record length")]
    FixedLength {
        /// The length as written.
        length: String,
    },
    /// `RECORD V,min,max` whose lengths are not data lengths in order.
    #[error(
        "RECORD {record}: expected the shortest and longest record's data lengths \
         (min <= max <= {limit})"
    )]
    VariableLengths {
        /// The RECORD value, upper case (`V,min,max`).
        record: String,
        /// The longest data length oxsort reads.
        limit: usize,
    },
    /// A RECORD of `ORG SQ` that is neither form.
    #[error("expected RECORD F,n or V,min,max, found {record}")]
    RecordForm {
        /// The RECORD value, upper case.
        record: String,
    },
    /// An organization oxsort does not read.
    #[error("ORG {org} is not supported by oxsort (SQ, LS and LSF are)")]
    Org {
        /// The ORG value, upper case.
        org: String,
    },
}

/// GCSORT statements that cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum GcsortError {
    /// A USE or GIVE statement without its file name.
    #[error("{at}: expected a file name after {what}")]
    NoFileName {
        /// The statement.
        at: StatementAt,
        /// `USE` or `GIVE`.
        what: String,
    },
    /// A keyword of a USE or GIVE statement without its value.
    #[error("{at}: expected a value after {keyword}")]
    NoValue {
        /// The statement.
        at: StatementAt,
        /// The keyword, upper case.
        keyword: String,
    },
    /// A USE or GIVE statement that cannot be read.
    #[error("{at}: {what} {file}: {problem}")]
    FileStatement {
        /// The statement.
        at: StatementAt,
        /// `USE` or `GIVE`.
        what: String,
        /// The file name as written.
        file: String,
        /// What is wrong.
        problem: FileStatementError,
    },
    /// A second GIVE statement.
    #[error("{at}: only one GIVE statement (oxsort writes one output)")]
    SecondGive {
        /// The statement.
        at: StatementAt,
    },
    /// A TAKE statement that is not `TAKE file`.
    #[error("{at}: expected TAKE and one file name")]
    TakeWords {
        /// The statement.
        at: StatementAt,
    },
    /// TAKE files taking TAKE files too deep.
    #[error("{at}: TAKE files nest deeper than {MAX_TAKE_DEPTH}")]
    TakeDepth {
        /// The statement.
        at: StatementAt,
    },
    /// A TAKE file that could not be read.
    #[error("{at}: reading the TAKE file {}", path.display())]
    TakeRead {
        /// The statement.
        at: StatementAt,
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// No USE statement.
    #[error("{name}: no USE statement names an input file")]
    NoUse {
        /// Where the statements came from.
        name: String,
    },
    /// No GIVE statement.
    #[error("{name}: no GIVE statement names the output file")]
    NoGive {
        /// Where the statements came from.
        name: String,
    },
    /// USE files of different organizations or record formats.
    #[error(
        "{name}: the USE files must have one organization and record format ({} is {first_org:?}, \
         {} is {other_org:?})",
        first.display(),
        other.display()
    )]
    MixedUse {
        /// Where the statements came from.
        name: String,
        /// The first USE file.
        first: PathBuf,
        /// Its organization.
        first_org: GcsortOrg,
        /// A USE file that differs.
        other: PathBuf,
        /// Its organization.
        other_org: GcsortOrg,
    },
    /// USE and GIVE files of different kinds.
    #[error(
        "{name}: USE {} and GIVE {} differ in organization ({} and {}): oxsort does not convert \
         between them",
        used.display(),
        given.display(),
        used_org.kind(),
        given_org.kind()
    )]
    Conversion {
        /// Where the statements came from.
        name: String,
        /// The first USE file.
        used: PathBuf,
        /// Its organization.
        used_org: GcsortOrg,
        /// The GIVE file.
        given: PathBuf,
        /// Its organization.
        given_org: GcsortOrg,
    },
    /// A JOINKEYS job without exactly two USE files.
    #[error(
        "{name}: a JOINKEYS job reads two files: give two USE statements (the first is F1, the \
         second F2), found {found}"
    )]
    JoinFiles {
        /// Where the statements came from.
        name: String,
        /// How many USE statements there are.
        found: usize,
    },
    /// A JOINKEYS file whose records are not fixed.
    #[error(
        "{name}: {what} {} is {}: oxsort joins fixed-length records only (ORG SQ RECORD F,n)",
        path.display(),
        org.kind()
    )]
    JoinNotFixed {
        /// Where the statements came from.
        name: String,
        /// `USE` or `GIVE`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Its organization.
        org: GcsortOrg,
    },
}

type Result<T> = std::result::Result<T, GcsortError>;

/// How a USE or GIVE file is organized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcsortOrg {
    /// `SQ`: fixed records of `n` bytes.
    Fixed(usize),
    /// `LS`/`LSF`: text lines.
    Lines,
    /// `SQ` with `RECORD V,min,max`: RDW-prefixed records of at most this many bytes, RDW
    /// included (`max` data bytes and the 4-byte RDW).
    Variable(usize),
}

impl GcsortOrg {
    /// The kind of file, for the USE/GIVE agreement check.
    pub fn kind(self) -> &'static str {
        match self {
            GcsortOrg::Fixed(_) => "fixed",
            GcsortOrg::Lines => "line sequential",
            GcsortOrg::Variable(_) => "variable (RDW-prefixed)",
        }
    }
}

/// A USE or GIVE statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcsortFile {
    /// The file (what its name stands for: [`GcsortFiles::path`]).
    pub path: PathBuf,
    /// How it is organized.
    pub org: GcsortOrg,
}

/// A GCSORT job: its files and the statements for the DFSORT parser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcsortJob {
    /// The USE files, in order.
    pub uses: Vec<GcsortFile>,
    /// The GIVE file.
    pub give: Option<GcsortFile>,
    /// The sort statements, one per line, USE/GIVE/TAKE lines blanked.
    pub control: String,
    /// Where the statements came from, for messages.
    pub name: String,
    /// Whether the statements are a JOINKEYS application: the first USE file is F1, the
    /// second F2 (GCSORT's `JOINKEYS FILES=F1` and `FILES=F2`).
    pub join: bool,
}

/// The files a sort job names, as [`GcsortJob::sort_files`] checks them.
#[derive(Debug, Clone, Copy)]
pub struct GcsortSortFiles<'a> {
    /// The organization every USE file shares.
    pub org: GcsortOrg,
    /// The GIVE file.
    pub give: &'a GcsortFile,
}

/// The files of a JOINKEYS job with their fixed record lengths.
#[derive(Debug, Clone, Copy)]
pub struct GcsortJoinFiles<'a> {
    /// F1 (the first USE file) and its record length.
    pub f1: (&'a Path, usize),
    /// F2 (the second USE file) and its record length.
    pub f2: (&'a Path, usize),
    /// The GIVE file and its record length.
    pub give: (&'a Path, usize),
}

impl GcsortJob {
    /// The files of a sort (or merge or copy): at least one USE file, all of one organization
    /// and record format, and a GIVE file of the same kind.
    pub fn sort_files(&self) -> Result<GcsortSortFiles<'_>> {
        let [first, ..] = self.uses.as_slice() else {
            return Err(GcsortError::NoUse { name: self.name.clone() });
        };
        if let Some(other) = self.uses.iter().find(|u| u.org != first.org) {
            return Err(GcsortError::MixedUse {
                name: self.name.clone(),
                first: first.path.clone(),
                first_org: first.org,
                other: other.path.clone(),
                other_org: other.org,
            });
        }
        let Some(give) = &self.give else {
            return Err(GcsortError::NoGive { name: self.name.clone() });
        };
        if give.org.kind() != first.org.kind() {
            return Err(GcsortError::Conversion {
                name: self.name.clone(),
                used: first.path.clone(),
                used_org: first.org,
                given: give.path.clone(),
                given_org: give.org,
            });
        }
        Ok(GcsortSortFiles { org: first.org, give })
    }

    /// The files of a JOINKEYS application: two USE files (F1 and F2) and a GIVE file, all of
    /// fixed-length records.
    pub fn join_files(&self) -> Result<GcsortJoinFiles<'_>> {
        let [f1, f2] = self.uses.as_slice() else {
            return Err(GcsortError::JoinFiles { name: self.name.clone(), found: self.uses.len() });
        };
        let Some(give) = &self.give else {
            return Err(GcsortError::NoGive { name: self.name.clone() });
        };
        Ok(GcsortJoinFiles {
            f1: self.fixed("USE", f1)?,
            f2: self.fixed("USE", f2)?,
            give: self.fixed("GIVE", give)?,
        })
    }

    /// A file of fixed-length records and its record length.
    fn fixed<'a>(&self, what: &'static str, f: &'a GcsortFile) -> Result<(&'a Path, usize)> {
        match f.org {
            GcsortOrg::Fixed(n) => Ok((f.path.as_path(), n)),
            org => Err(GcsortError::JoinNotFixed {
                name: self.name.clone(),
                what,
                path: f.path.clone(),
                org,
            }),
        }
    }
}

/// What the caller supplies to read GCSORT statements: what a file name stands for and the
/// text of TAKE files.
pub trait GcsortFiles {
    /// The file a USE, GIVE or TAKE name stands for (GnuCOBOL: the value of the environment
    /// variable of that name, when there is one, as `ASSIGN TO EXTERNAL` names do).
    fn path(&self, name: &str) -> PathBuf;
    /// The text of a TAKE file.
    fn read(&mut self, path: &Path) -> std::io::Result<String>;
}

/// GCSORT's one-line command form (the arguments as the shell split them) cut into
/// statements, one per line, for [`parse_gcsort`].
pub fn gcsort_statements(args: &[String]) -> String {
    let tokens = words(&args.join(" "));
    let mut out = String::new();
    let mut current = String::new();
    let mut in_file_statement = false;
    let mut depth = 0i32;
    for t in tokens {
        let upper = t.to_ascii_uppercase();
        let starts = depth == 0
            && STATEMENTS.contains(&upper.as_str())
            && !(in_file_statement && (upper == "RECORD" || upper == "ORG"))
            && !current.ends_with([',', '=']);
        if starts {
            if !current.is_empty() {
                out.push_str(&current);
                out.push('\n');
            }
            in_file_statement = matches!(upper.as_str(), "USE" | "GIVE" | "TAKE");
            current = t.clone();
            if !in_file_statement {
                current.push(' ');
            }
            continue;
        }
        if in_file_statement {
            current.push(' ');
        }
        current.push_str(&t);
        depth += paren_depth(&t);
    }
    if !current.is_empty() {
        out.push_str(&current);
        out.push('\n');
    }
    out
}

/// Net parentheses of a token outside quotes.
fn paren_depth(t: &str) -> i32 {
    let mut quote = false;
    let mut d = 0;
    for c in t.chars() {
        match c {
            '\'' => quote = !quote,
            '(' if !quote => d += 1,
            ')' if !quote => d -= 1,
            _ => {}
        }
    }
    d
}

/// Blank-separated words, a quoted constant (`C'a b'`) kept whole.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = false;
    for c in s.chars() {
        if c == '\'' {
            quote = !quote;
        }
        if c.is_whitespace() && !quote {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Reads GCSORT statements (one per line; `name` says where they came from, for messages):
/// USE, GIVE and TAKE are taken out (TAKE files read in place through `files`), comment lines
/// blanked, the rest left for the DFSORT parser on the same lines.
///
/// ```
/// use std::path::{Path, PathBuf};
/// use oxsort_lang::{gcsort_statements, parse_gcsort, GcsortFiles, GcsortOrg};
///
/// struct NoTake;
/// impl GcsortFiles for NoTake {
///     fn path(&self, name: &str) -> PathBuf {
///         PathBuf::from(name)
///     }
///     fn read(&mut self, path: &Path) -> std::io::Result<String> {
///         Err(std::io::Error::new(std::io::ErrorKind::NotFound, path.display().to_string()))
///     }
/// }
///
/// let args: Vec<String> = "SORT FIELDS=(1,5,CH,A) USE in.dat ORG SQ RECORD F,80 \
///                          GIVE out.dat ORG SQ RECORD F,80"
///     .split(' ')
///     .map(String::from)
///     .collect();
/// let text = gcsort_statements(&args);
/// let job = parse_gcsort(&text, "the command line", &mut NoTake).unwrap();
/// let files = job.sort_files().unwrap();
/// assert_eq!(files.org, GcsortOrg::Fixed(80));
/// assert_eq!(files.give.path, PathBuf::from("out.dat"));
/// assert_eq!(job.control.trim(), "SORT FIELDS=(1,5,CH,A)");
/// ```
pub fn parse_gcsort(text: &str, name: &str, files: &mut dyn GcsortFiles) -> Result<GcsortJob> {
    translate(text, name, 0, files)
}

fn translate(
    text: &str,
    name: &str,
    depth: usize,
    files: &mut dyn GcsortFiles,
) -> Result<GcsortJob> {
    let mut job = GcsortJob {
        uses: Vec::new(),
        give: None,
        control: String::new(),
        name: name.to_string(),
        join: false,
    };
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let w = words(line);
        let keyword = w.first().map(|s| s.to_ascii_uppercase()).unwrap_or_default();
        let at = || StatementAt { name: name.to_string(), line: i + 1 };
        if keyword.starts_with('*') {
            job.control.push('\n');
            continue;
        }
        match keyword.as_str() {
            "USE" | "GIVE" => {
                let f = file_statement(&w, at, &*files)?;
                if keyword == "USE" {
                    job.uses.push(f);
                } else if job.give.replace(f).is_some() {
                    return Err(GcsortError::SecondGive { at: at() });
                }
            }
            "TAKE" => {
                let [_, file] = w.as_slice() else {
                    return Err(GcsortError::TakeWords { at: at() });
                };
                if depth >= MAX_TAKE_DEPTH {
                    return Err(GcsortError::TakeDepth { at: at() });
                }
                let path = files.path(file);
                let inner = files.read(&path).map_err(|source| GcsortError::TakeRead {
                    at: at(),
                    path: path.clone(),
                    source,
                })?;
                let taken = translate(&inner, &path.display().to_string(), depth + 1, files)?;
                job.uses.extend(taken.uses);
                job.join |= taken.join;
                if let Some(g) = taken.give {
                    if job.give.replace(g).is_some() {
                        return Err(GcsortError::SecondGive { at: at() });
                    }
                }
                if depth == 0 && job.control.trim().is_empty() {
                    // The job is the TAKE file: its statements keep their own line numbers.
                    job.name = taken.name;
                    job.control = taken.control;
                    continue;
                }
                job.control.push_str(&taken.control);
            }
            _ => {
                job.join |= keyword == "JOINKEYS";
                job.control.push_str(line);
            }
        }
        job.control.push('\n');
    }
    Ok(job)
}

/// `USE|GIVE file ORG SQ|LS|LSF RECORD F,n|V,min,max` (ORG and RECORD in either order).
fn file_statement(
    w: &[String],
    at: impl Fn() -> StatementAt,
    files: &dyn GcsortFiles,
) -> Result<GcsortFile> {
    let what = w[0].to_ascii_uppercase();
    let Some(file) = w.get(1) else {
        return Err(GcsortError::NoFileName { at: at(), what });
    };
    let fail = |problem| GcsortError::FileStatement {
        at: at(),
        what: what.clone(),
        file: file.clone(),
        problem,
    };
    use FileStatementError as E;
    let mut org = None;
    let mut record = None;
    let mut i = 2;
    while i < w.len() {
        let keyword = w[i].to_ascii_uppercase();
        let Some(value) = w.get(i + 1) else {
            return Err(GcsortError::NoValue { at: at(), keyword });
        };
        match keyword.as_str() {
            "ORG" => org = Some(value.to_ascii_uppercase()),
            "RECORD" => record = Some(value.to_ascii_uppercase()),
            "KEY" => return Err(fail(E::Indexed)),
            _ => return Err(fail(E::Operand { found: w[i].clone() })),
        }
        i += 2;
    }
    let org = org.ok_or_else(|| fail(E::NoOrg))?;
    let record = record.ok_or_else(|| fail(E::NoRecord))?;
    let parts: Vec<&str> = record.split(',').collect();
    let org = match (org.as_str(), parts.as_slice()) {
        ("LS" | "LSF", _) => GcsortOrg::Lines,
        ("SQ", ["F", n]) => match n.parse::<usize>() {
            Ok(n) if n > 0 => GcsortOrg::Fixed(n),
            _ => return Err(fail(E::FixedLength { length: n.to_string() })),
        },
        ("SQ", ["V", min, max]) => match (min.parse::<usize>(), max.parse::<usize>()) {
            (Ok(lo), Ok(hi)) if lo <= hi && hi + RDW_BYTES <= MAX_RECORD_SIZE => {
                GcsortOrg::Variable(hi + RDW_BYTES)
            }
            _ => {
                return Err(fail(E::VariableLengths {
                    record: record.clone(),
                    limit: MAX_RECORD_SIZE - RDW_BYTES,
                }))
            }
        },
        ("SQ", _) => return Err(fail(E::RecordForm { record: record.clone() })),
        (o, _) => return Err(fail(E::Org { org: o.to_string() })),
    };
    Ok(GcsortFile { path: files.path(file), org })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// File names stand for themselves, or for a value in `env`; TAKE files come from `take`.
    #[derive(Default)]
    struct Files {
        env: HashMap<&'static str, &'static str>,
        take: HashMap<PathBuf, &'static str>,
    }

    impl GcsortFiles for Files {
        fn path(&self, name: &str) -> PathBuf {
            PathBuf::from(self.env.get(name).copied().unwrap_or(name))
        }
        fn read(&mut self, path: &Path) -> std::io::Result<String> {
            self.take.get(path).map(|t| t.to_string()).ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory")
            })
        }
    }

    fn parse(text: &str) -> Result<GcsortJob> {
        parse_gcsort(text, "t", &mut Files::default())
    }

    #[test]
    fn the_command_form_is_cut_into_statements() {
        let args: Vec<String> = [
            "SORT",
            "FIELDS=(1,5,CH,A)",
            "USE in.dat ORG SQ RECORD F,100",
            "GIVE",
            "out.dat",
            "RECORD",
            "F,100",
            "ORG",
            "SQ",
            "INCLUDE",
            "COND=(1,1,CH,EQ,C'A B')",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let text = gcsort_statements(&args);
        assert_eq!(
            text,
            "SORT FIELDS=(1,5,CH,A)\nUSE in.dat ORG SQ RECORD F,100\n\
             GIVE out.dat RECORD F,100 ORG SQ\nINCLUDE COND=(1,1,CH,EQ,C'A B')\n"
        );
        let job = parse_gcsort(&text, "x", &mut Files::default()).unwrap();
        assert_eq!(job.uses.len(), 1);
        assert_eq!(job.uses[0].org, GcsortOrg::Fixed(100));
        assert_eq!(job.sort_files().unwrap().org, GcsortOrg::Fixed(100));
        assert_eq!(job.give.unwrap().path, PathBuf::from("out.dat"));
        assert_eq!(job.control, "SORT FIELDS=(1,5,CH,A)\n\n\nINCLUDE COND=(1,1,CH,EQ,C'A B')\n\n");
    }

    #[test]
    fn file_statements_name_their_mistakes() {
        let err = |line: &str| parse(line).unwrap_err().to_string();
        assert!(err("USE a ORG SQ RECORD V,20,10").contains("RECORD V,20,10"));
        assert!(err("USE a ORG SQ RECORD V,10").contains("expected RECORD F,n or V,min,max"));
        let job = parse("USE a ORG SQ RECORD V,10,300").unwrap();
        assert_eq!(job.uses[0].org, GcsortOrg::Variable(304));
        assert_eq!(
            err("USE a ORG IX RECORD F,10"),
            "t: line 1: USE a: ORG IX is not supported by oxsort (SQ, LS and LSF are)"
        );
        assert!(err("USE a ORG SQ").contains("expected RECORD"));
        assert!(err("GIVE a ORG SQ RECORD F,x").contains("RECORD F,X"));
        assert_eq!(err("\nUSE a ORG"), "t: line 2: expected a value after ORG");
        assert!(matches!(
            parse("USE a KEY k").unwrap_err(),
            GcsortError::FileStatement { problem: FileStatementError::Indexed, .. }
        ));
    }

    #[test]
    fn take_files_are_read_in_place_and_names_resolved() {
        let mut files = Files::default();
        files.env.insert("dd_in", "in.dat");
        files.take.insert(PathBuf::from("job.take"), "* a comment\nUSE dd_in ORG LS RECORD F,10\n SORT FIELDS=COPY\nGIVE out ORG LSF RECORD F,10\n");
        let job = parse_gcsort("TAKE job.take", "cmd", &mut files).unwrap();
        assert_eq!((job.name.as_str(), job.uses[0].path.to_str()), ("job.take", Some("in.dat")));
        assert_eq!(job.control, "\n\n SORT FIELDS=COPY\n\n\n");
        assert_eq!(job.sort_files().unwrap().give.path, PathBuf::from("out"));
        let err = parse_gcsort("TAKE none", "cmd", &mut files).unwrap_err();
        assert_eq!(err.to_string(), "cmd: line 1: reading the TAKE file none");
        assert!(std::error::Error::source(&err).is_some());
        files.take.insert(PathBuf::from("self"), "TAKE self");
        let err = parse_gcsort("TAKE self", "cmd", &mut files).unwrap_err();
        assert!(matches!(err, GcsortError::TakeDepth { .. }), "{err}");
    }

    #[test]
    fn sort_and_join_files_are_checked() {
        let job = parse("USE a ORG SQ RECORD F,10\nUSE b ORG SQ RECORD V,1,9").unwrap();
        assert_eq!(
            job.sort_files().unwrap_err().to_string(),
            "t: the USE files must have one organization and record format (a is Fixed(10), \
             b is Variable(13))"
        );
        let job = parse("USE a ORG SQ RECORD F,10\nGIVE b ORG LS RECORD F,10").unwrap();
        assert!(job.sort_files().unwrap_err().to_string().contains("differ in organization"));
        assert!(matches!(parse("").unwrap().sort_files(), Err(GcsortError::NoUse { .. })));
        let job = parse(
            "JOINKEYS FILES=F1,FIELDS=(1,2,A)\nUSE a ORG SQ RECORD F,10\n\
             USE b ORG SQ RECORD F,20\nGIVE c ORG SQ RECORD F,30",
        )
        .unwrap();
        assert!(job.join);
        let f = job.join_files().unwrap();
        assert_eq!((f.f1.1, f.f2.1, f.give.1), (10, 20, 30));
        let job =
            parse("USE a ORG SQ RECORD F,10\nUSE b ORG LS RECORD F,2\nGIVE c ORG SQ RECORD F,3")
                .unwrap();
        assert!(job.join_files().unwrap_err().to_string().contains("USE b is line sequential"));
        assert!(matches!(
            parse("USE a ORG LS RECORD F,1").unwrap().join_files(),
            Err(GcsortError::JoinFiles { found: 1, .. })
        ));
    }
}

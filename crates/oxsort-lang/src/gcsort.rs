//! GCSORT's command form (GnuCOBOL's DFSORT-compatible sort): its statements read into the
//! files a job uses and gives and the DFSORT control statements it runs.
//!
//! ```text
//!  TAKE file                                        statements read from file, in place
//!  USE  file ORG SQ|LS|LSF RECORD F,n|V,min,max     an input (repeat to concatenate)
//!  GIVE file ORG SQ|LS|LSF RECORD F,n|V,min,max     the output
//!  XSUM file ORG SQ|LS|LSF RECORD F,n|V,min,max     the records SUM ...,XSUM deletes
//!  SORT, MERGE, SUM, INCLUDE, OMIT, INREC, OUTREC, OUTFIL, OPTION, RECORD, ALTSEQ, END
//!                                                   as DFSORT's
//!  JOINKEYS FILES=F1 / FILES=F2, JOIN, REFORMAT      a join: the first USE is F1, the second F2
//! ```
//!
//! The statements are free form, as GCSORT reads them: in any order, over as many
//! lines as they like (a line may start or end with the comma between two operands), with
//! blanks around `=` and `,`, operands without parentheses (`FINDREP IN=C'?',OUT=C'!'`), in
//! any case; lines whose first non-blank is `*` are comments.
//!
//! `ORG SQ` with `RECORD F,n` is fixed n-byte records; `ORG SQ` with `RECORD V,min,max` is
//! RDW-prefixed variable records (each a 4-byte RDW, whose big-endian length counts the RDW,
//! then `min` to `max` data bytes); `ORG LS` and `LSF` are line sequential files (text lines).
//! The caller says what a file name stands for and reads TAKE files ([`GcsortFiles`]): this
//! module reads no file.

use std::path::{Path, PathBuf};

use oxsort_format::{Location, ParseError, MAX_RECORD_SIZE, RDW_BYTES};

mod lexer;
mod rules;

pub use rules::gcsort_rules;

use lexer::{Kind, Statement, Token};

/// The statements oxsort runs, for messages.
const ACCEPTED: &str = "USE, GIVE, XSUM, TAKE, SORT, MERGE, SUM, INCLUDE, OMIT, INREC, OUTREC, \
                        OUTFIL, OPTION, RECORD, ALTSEQ, JOINKEYS, JOIN, REFORMAT, END";

/// The longest DD name.
const DD_NAME_MAX: usize = 8;

/// How deep TAKE files may nest (a file taking itself would never end).
pub const MAX_TAKE_DEPTH: usize = 8;

/// Where a statement (or a token) is: the statements' name (a file, the command line), the
/// line and the column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementAt {
    /// Where the statements came from.
    pub name: String,
    /// The statement's (or the token's) 1-based line.
    pub line: usize,
    /// Its 1-based column (in bytes).
    pub column: usize,
}

impl std::fmt::Display for StatementAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: line {}, column {}", self.name, self.line, self.column)
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
    /// A constant whose quote does not close on its line.
    #[error("{at}: expected a quote to end the constant")]
    OpenQuote {
        /// Where its opening quote is.
        at: StatementAt,
    },
    /// A word where a statement starts that names no statement oxsort runs.
    #[error(
        "{at}: {found} is not a statement oxsort runs (GCSORT statements accepted: {})",
        ACCEPTED
    )]
    NotAStatement {
        /// The word.
        at: StatementAt,
        /// The word as written.
        found: String,
    },
    /// A GCSORT statement or operand that oxsort does not run.
    #[error("{at}: {name} is not supported by oxsort (GCSORT statements accepted: {})", ACCEPTED)]
    Refused {
        /// The statement or operand.
        at: StatementAt,
        /// Its name, upper case.
        name: String,
    },
    /// A statement the DFSORT parser refused, where it is written.
    #[error("{at}: {problem}")]
    Statement {
        /// The place in the statement.
        at: StatementAt,
        /// What is wrong.
        problem: String,
    },
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
    /// A second XSUM statement.
    #[error("{at}: only one XSUM statement (the records SUM deletes go to one file)")]
    SecondXsum {
        /// Where the second one is.
        at: StatementAt,
    },
    /// `XSUM` on the SUM statement without an XSUM statement naming its file.
    #[error(
        "{at}: SUM ...,XSUM writes the records SUM deletes to a file: name it with an XSUM \
         statement (XSUM file ORG SQ RECORD F,n)"
    )]
    XsumNoFile {
        /// Where XSUM is on the SUM statement.
        at: StatementAt,
    },
    /// An XSUM statement without `XSUM` on the SUM statement.
    #[error(
        "{at}: the XSUM statement names the file for the records SUM deletes: write XSUM on the \
         SUM statement (SUM FIELDS=NONE,XSUM or SUM FIELDS=(p,m,f),XSUM)"
    )]
    XsumNotOnSum {
        /// Where the XSUM statement is.
        at: StatementAt,
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
        "{name}: {what} {} is {}: oxsort joins fixed-length records only (RECORD F,n)",
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
    /// `LS`/`LSF` with `RECORD V,min,max`: text lines as they are.
    Lines,
    /// `LS`/`LSF` with `RECORD F,n`: text lines read as records of `len` bytes (a short line
    /// filled out with blanks, a long one cut), records written as lines; `trim` (`LS`):
    /// written without their trailing blanks, as GnuCOBOL writes them (`LSF` keeps them).
    LinesFixed {
        /// The record length.
        len: usize,
        /// Whether written records lose their trailing blanks.
        trim: bool,
    },
    /// `SQ` with `RECORD V,min,max`: RDW-prefixed records of at most this many bytes, RDW
    /// included (`max` data bytes and the 4-byte RDW).
    Variable(usize),
}

impl GcsortOrg {
    /// The length of its records when they are (or are read as) fixed-length ones.
    pub fn fixed_len(self) -> Option<usize> {
        match self {
            GcsortOrg::Fixed(n) | GcsortOrg::LinesFixed { len: n, .. } => Some(n),
            GcsortOrg::Lines | GcsortOrg::Variable(_) => None,
        }
    }

    /// Whether records of `self` and `other` go through a sort alike: one organization, or
    /// fixed-length records of one length (line sequential ones read as such).
    fn agrees(self, other: GcsortOrg) -> bool {
        match (self.fixed_len(), other.fixed_len()) {
            (Some(a), Some(b)) => a == b,
            _ => self == other,
        }
    }

    /// The kind of file, for the USE/GIVE agreement check.
    pub fn kind(self) -> &'static str {
        match self {
            GcsortOrg::Fixed(_) => "fixed",
            GcsortOrg::Lines | GcsortOrg::LinesFixed { .. } => "line sequential",
            GcsortOrg::Variable(_) => "variable (RDW-prefixed)",
        }
    }
}

/// A USE or GIVE statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcsortFile {
    /// The name as written (quotes taken off).
    pub name: String,
    /// The file (what its name stands for: [`GcsortFiles::path`]).
    pub path: PathBuf,
    /// How it is organized.
    pub org: GcsortOrg,
    /// Its `ORG` and `RECORD` values as written, in upper case (`LS`, `F,80`), for reports.
    pub written: (String, String),
}

/// A GCSORT job: its files and the statements for the DFSORT parser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcsortJob {
    /// The USE files, in order.
    pub uses: Vec<GcsortFile>,
    /// The GIVE file.
    pub give: Option<GcsortFile>,
    /// The XSUM file: where the records `SUM ...,XSUM` deletes are written.
    pub xsum: Option<GcsortFile>,
    /// The sort statements for the DFSORT parser, one a line (on its own line number when
    /// that is still free), as DFSORT writes them.
    pub control: String,
    /// Where the statements came from, for messages.
    pub name: String,
    /// Whether the statements are a JOINKEYS application: the first USE file is F1, the
    /// second F2 (GCSORT's `JOINKEYS FILES=F1` and `FILES=F2`).
    pub join: bool,
    /// OUTFIL `FNAMES=` names given DD names of their own in `control`: (the DD name, the
    /// name as written).
    pub fnames: Vec<(String, String)>,
    /// For each line of `control`: where its pieces start (1-based column) and where each
    /// was written.
    places: Vec<Vec<(usize, StatementAt)>>,
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
    /// and record format (or all of fixed-length records of one length, line sequential
    /// `RECORD F,n` ones read as such), and a GIVE file of the same kind (or of fixed-length
    /// records, sequential or line sequential).
    pub fn sort_files(&self) -> Result<GcsortSortFiles<'_>> {
        let [first, ..] = self.uses.as_slice() else {
            return Err(GcsortError::NoUse { name: self.name.clone() });
        };
        if let Some(other) = self.uses.iter().find(|u| !u.org.agrees(first.org)) {
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
        let both_fixed = give.org.fixed_len().is_some() && first.org.fixed_len().is_some();
        if give.org.kind() != first.org.kind() && !both_fixed {
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
    /// fixed-length records (line sequential `RECORD F,n` ones read as such).
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
        match f.org.fixed_len() {
            Some(n) => Ok((f.path.as_path(), n)),
            None => Err(GcsortError::JoinNotFixed {
                name: self.name.clone(),
                what,
                path: f.path.clone(),
                org: f.org,
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

/// GCSORT's command form (the arguments as the shell split them, or all the statements in
/// one argument) as one text for [`parse_gcsort`]: the arguments joined by blanks.
pub fn gcsort_statements(args: &[String]) -> String {
    args.join(" ")
}

/// Reads GCSORT statements (free form: any line layout, as the module says; `name` says where
/// they came from, for messages): USE and GIVE are taken out, TAKE files read in place
/// through `files`, and the other statements written for the DFSORT parser, one a line, as
/// DFSORT writes them; [`GcsortJob::locate`] points a DFSORT message at the text as written.
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
///                          GIVE out.dat ORG SQ RECORD F , 80 OUTREC FIELDS=(1,10\n,20,5)"
///     .split(' ')
///     .map(String::from)
///     .collect();
/// let text = gcsort_statements(&args);
/// let job = parse_gcsort(&text, "the command line", &mut NoTake).unwrap();
/// let files = job.sort_files().unwrap();
/// assert_eq!(files.org, GcsortOrg::Fixed(80));
/// assert_eq!(files.give.path, PathBuf::from("out.dat"));
/// assert_eq!(job.control, "SORT FIELDS=(1,5,CH,A)\nOUTREC FIELDS=(1,10,20,5)\n");
/// ```
pub fn parse_gcsort(text: &str, name: &str, files: &mut dyn GcsortFiles) -> Result<GcsortJob> {
    let top = statements_of(text, name)?;
    let mut job = GcsortJob {
        uses: Vec::new(),
        give: None,
        xsum: None,
        control: String::new(),
        name: name.to_string(),
        join: false,
        fnames: Vec::new(),
        places: Vec::new(),
    };
    if let [only] = top.as_slice() {
        if only.upper() == "TAKE" {
            // The job is the TAKE file: its statements keep their own line numbers.
            job.name = files.path(&take_name(only)?).display().to_string();
        }
    }
    let mut all = Vec::new();
    expand(top, 0, files, &mut all)?;
    // Where XSUM is: on the SUM statement, and the statement naming its file.
    let (mut on_sum, mut xsum_at) = (None, None);
    for st in all {
        let upper = st.upper();
        match upper.as_str() {
            "USE" => job.uses.push(file_statement(&st, &*files)?),
            "GIVE" => {
                let f = file_statement(&st, &*files)?;
                if job.give.replace(f).is_some() {
                    return Err(GcsortError::SecondGive { at: st.name.at.clone() });
                }
            }
            "XSUM" => {
                let f = file_statement(&st, &*files)?;
                if job.xsum.replace(f).is_some() {
                    return Err(GcsortError::SecondXsum { at: st.name.at.clone() });
                }
                xsum_at = Some(st.name.at.clone());
            }
            _ if lexer::REFUSED.contains(&upper.as_str()) => {
                return Err(refused(&st.name));
            }
            _ => {
                if upper == "SUM" {
                    let x = st.operands.iter().find(|t| t.upper() == "XSUM");
                    on_sum = on_sum.or(x.map(|x| x.at.clone()));
                }
                job.join |= upper == "JOINKEYS";
                job.write(&st);
            }
        }
    }
    match (on_sum, xsum_at) {
        (Some(at), None) => Err(GcsortError::XsumNoFile { at }),
        (None, Some(at)) => Err(GcsortError::XsumNotOnSum { at }),
        _ => Ok(job),
    }
}

/// The statements of one text.
fn statements_of(text: &str, name: &str) -> Result<Vec<Statement>> {
    let tokens = lexer::tokens(text, name).map_err(|q| GcsortError::OpenQuote { at: q.0 })?;
    lexer::statements(tokens)
        .map_err(|e| GcsortError::NotAStatement { at: e.0.at.clone(), found: e.0.text.clone() })
}

/// The file name of a TAKE statement.
fn take_name(st: &Statement) -> Result<String> {
    match st.operands.as_slice() {
        [file] if file.kind == lexer::Kind::Atom => Ok(unquote(&file.text)),
        _ => Err(GcsortError::TakeWords { at: st.name.at.clone() }),
    }
}

/// `statements` with each TAKE replaced by the statements of its file.
fn expand(
    statements: Vec<Statement>,
    depth: usize,
    files: &mut dyn GcsortFiles,
    out: &mut Vec<Statement>,
) -> Result<()> {
    for st in statements {
        if st.upper() != "TAKE" {
            out.push(st);
            continue;
        }
        let at = st.name.at.clone();
        let file = take_name(&st)?;
        if depth >= MAX_TAKE_DEPTH {
            return Err(GcsortError::TakeDepth { at });
        }
        let path = files.path(&file);
        let text = files.read(&path).map_err(|source| GcsortError::TakeRead {
            at,
            path: path.clone(),
            source,
        })?;
        let inner = statements_of(&text, &path.display().to_string())?;
        expand(inner, depth + 1, files, out)?;
    }
    Ok(())
}

/// The message for a statement (or operand) GCSORT has and oxsort does not run.
fn refused(t: &Token) -> GcsortError {
    GcsortError::Refused { at: t.at.clone(), name: t.upper() }
}

/// A file name without the quotes around it.
fn unquote(name: &str) -> String {
    for q in ['"', '\''] {
        if let Some(inner) = name.strip_prefix(q).and_then(|n| n.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    name.to_string()
}

impl GcsortJob {
    /// Writes `st` as a DFSORT statement line, on its own line number when the text it came
    /// from is the job's and that line is still ahead.
    fn write(&mut self, st: &Statement) {
        if matches!(st.upper().as_str(), "SORT" | "MERGE") && self.repeats(st) {
            // GCSORT takes a SORT or MERGE statement given twice alike as one.
            return;
        }
        if st.name.at.name == self.name {
            while self.places.len() + 1 < st.name.at.line {
                self.control.push('\n');
                self.places.push(Vec::new());
            }
        }
        let mut places = vec![(1, st.name.at.clone())];
        let mut line = st.name.text.clone();
        let mut operands = lexer::dfsort_operands(&st.operands);
        if st.upper() == "OUTFIL" {
            // GCSORT's `OUTFIL FILES=name` is its `FNAMES=name`.
            for i in 1..operands.len() {
                if operands[i].0 == "=" && operands[i - 1].0.eq_ignore_ascii_case("FILES") {
                    operands[i - 1].0 = "FNAMES".to_string();
                }
            }
            parenthesize_fnames(&mut operands);
            self.alias_fnames(&mut operands);
        }
        if !operands.is_empty() {
            line.push(' ');
        }
        for (text, at) in operands {
            places.push((line.len() + 1, at));
            line.push_str(&text);
        }
        self.control.push_str(&line);
        self.control.push('\n');
        self.places.push(places);
    }

    /// Whether a statement alike `st` (the same name and operands, in any case) is already
    /// in [`GcsortJob::control`].
    fn repeats(&self, st: &Statement) -> bool {
        let operands: String =
            lexer::dfsort_operands(&st.operands).into_iter().map(|(t, _)| t).collect();
        let line = format!("{} {}", st.upper(), operands.to_ascii_uppercase());
        self.control.lines().any(|l| l.trim_end().to_ascii_uppercase() == line)
    }

    /// GCSORT writes each record at the GIVE file's length: when the USE and GIVE files hold
    /// fixed-length records of different lengths and no INREC, OUTREC or OUTFIL sets the
    /// records written, an OUTREC statement that cuts them to the GIVE length or fills them
    /// out with blanks is put first in [`GcsortJob::control`].
    pub fn fit_to_give(&mut self) {
        self.copy_unsorted_join();
        let (Some(first), Some(give)) = (self.uses.first(), &self.give) else { return };
        let (Some(n), Some(m)) = (first.org.fixed_len(), give.org.fixed_len()) else { return };
        if n == m || self.join {
            return;
        }
        let Ok(c) = crate::parse_control(&self.control) else { return };
        if c.inrec.is_some() || c.outrec.is_some() || !c.outfil.is_empty() {
            return;
        }
        let outrec = if m < n {
            format!("OUTREC FIELDS=(1,{m})\n")
        } else {
            format!("OUTREC FIELDS=(1,{n},{}X)\n", m - n)
        };
        self.control.insert_str(0, &outrec);
        let at = StatementAt { name: self.name.clone(), line: 1, column: 1 };
        self.places.insert(0, vec![(1, at)]);
    }

    /// GCSORT writes a JOINKEYS job's joined records in the join's order when no SORT or
    /// MERGE statement gives its main task a key: an `OPTION COPY` is put last in
    /// [`GcsortJob::control`] for such a job (DFSORT asks for the statement).
    fn copy_unsorted_join(&mut self) {
        if !self.join {
            return;
        }
        let Ok(c) = crate::parse_control(&self.control) else { return };
        if c.key.is_some() || c.copy || c.merge {
            return;
        }
        self.control.push_str("OPTION COPY\n");
        let at = StatementAt { name: self.name.clone(), line: 1, column: 1 };
        self.places.push(vec![(1, at)]);
    }

    /// OUTFIL's `FNAMES=` names that are no DD names (GCSORT's are environment variable
    /// names such as `FOUT_01`) replaced by DD names of their own, kept in
    /// [`GcsortJob::fnames`].
    fn alias_fnames(&mut self, operands: &mut [(String, StatementAt)]) {
        let mut in_fnames = false;
        let mut depth = 0;
        for i in 0..operands.len() {
            let text = operands[i].0.clone();
            if !in_fnames {
                let after_fnames = i >= 2
                    && operands[i - 1].0 == "="
                    && operands[i - 2].0.eq_ignore_ascii_case("FNAMES");
                if !after_fnames {
                    continue;
                }
                in_fnames = true;
            }
            match text.as_str() {
                "(" => {
                    depth += 1;
                    continue;
                }
                ")" => {
                    depth -= 1;
                    in_fnames = depth > 0;
                    continue;
                }
                "," => continue,
                _ => {}
            }
            let dd_name =
                text.len() <= DD_NAME_MAX && text.bytes().all(|b| b.is_ascii_alphanumeric());
            if !dd_name {
                let alias = format!("GCSF{:04}", self.fnames.len() + 1);
                self.fnames.push((alias.clone(), text));
                operands[i].0 = alias;
            }
            in_fnames = depth > 0;
        }
    }

    /// A DFSORT parser's message about [`GcsortJob::control`], pointed at the statement's
    /// text as written (its file, line and column).
    pub fn locate(&self, e: &ParseError) -> GcsortError {
        let whole = StatementAt { name: self.name.clone(), line: 1, column: 1 };
        let at = match e.location {
            Location::Line { line, column } => self
                .places
                .get(line.wrapping_sub(1))
                .and_then(|places| {
                    let (start, at) = places.iter().rev().find(|(start, _)| *start <= column)?;
                    let mut at = at.clone();
                    // Inside a piece that kept its text (not an inserted comma): the column
                    // inside it.
                    at.column += column - start;
                    Some(at)
                })
                .unwrap_or(whole),
            _ => whole,
        };
        GcsortError::Statement { at, problem: e.message() }
    }
}

/// OUTFIL operands that stand alone (no `=`): a name list of GCSORT's `FNAMES=a,b,c` ends
/// before them.
const OUTFIL_FLAGS: &[&str] =
    &["SAVE", "SPLIT", "REMOVECC", "NODETAIL", "VTOF", "FTOV", "CONVERT", "VLFILL", "VLTRIM"];

/// GCSORT's `FNAMES=a,b,c` (and `FILES=`), a list without parentheses up to the next
/// operand (`a,b,c,SPLIT,INCLUDE=(...)`), in the parentheses DFSORT's `FNAMES=(a,b,c)` has.
fn parenthesize_fnames(operands: &mut Vec<(String, StatementAt)>) {
    let is_name = |ops: &[(String, StatementAt)], k: usize| {
        ops.get(k).is_some_and(|(t, _)| {
            !matches!(t.as_str(), "(" | ")" | "," | "=")
                && !OUTFIL_FLAGS.contains(&t.to_ascii_uppercase().as_str())
        }) && ops.get(k + 1).is_none_or(|(t, _)| t != "=")
    };
    let mut i = 1;
    while i + 1 < operands.len() {
        let fnames = operands[i].0 == "=" && operands[i - 1].0.eq_ignore_ascii_case("FNAMES");
        if fnames && is_name(operands, i + 1) {
            let mut last = i + 1;
            while operands.get(last + 1).is_some_and(|(t, _)| t == ",")
                && is_name(operands, last + 2)
            {
                last += 2;
            }
            if last > i + 1 {
                let (open_at, close_at) = (operands[i + 1].1.clone(), operands[last].1.clone());
                operands.insert(last + 1, (")".to_string(), close_at));
                operands.insert(i + 1, ("(".to_string(), open_at));
            }
            i = last;
        }
        i += 1;
    }
}

/// `USE|GIVE file ORG SQ|LS|LSF RECORD F,n|V,min,max` (ORG and RECORD in either order).
fn file_statement(st: &Statement, files: &dyn GcsortFiles) -> Result<GcsortFile> {
    let what = st.upper();
    let at = || st.name.at.clone();
    let Some((file, rest)) = st.operands.split_first().filter(|(f, _)| f.kind == Kind::Atom) else {
        return Err(GcsortError::NoFileName { at: at(), what });
    };
    let name = unquote(&file.text);
    let fail = |problem| GcsortError::FileStatement {
        at: at(),
        what: what.clone(),
        file: name.clone(),
        problem,
    };
    use FileStatementError as E;
    let mut org = None;
    let mut record = None;
    let mut i = 0;
    while i < rest.len() {
        let t = &rest[i];
        let keyword = t.upper();
        let no_value = || GcsortError::NoValue { at: t.at.clone(), keyword: keyword.clone() };
        match keyword.as_str() {
            "ORG" => {
                let v = rest.get(i + 1).filter(|v| v.kind == Kind::Atom).ok_or_else(no_value)?;
                org = Some(v.upper());
                i += 2;
            }
            "RECORD" => {
                let v = rest.get(i + 1).filter(|v| v.kind == Kind::Atom).ok_or_else(no_value)?;
                let mut value = v.upper();
                i += 2;
                while let (Some(c), Some(n)) = (rest.get(i), rest.get(i + 1)) {
                    if c.kind != Kind::Comma || n.kind != Kind::Atom {
                        break;
                    }
                    value.push(',');
                    value.push_str(&n.upper());
                    i += 2;
                }
                record = Some(value);
            }
            "KEY" => return Err(fail(E::Indexed)),
            _ => return Err(fail(E::Operand { found: t.text.clone() })),
        }
    }
    let org = org.ok_or_else(|| fail(E::NoOrg))?;
    let record = record.ok_or_else(|| fail(E::NoRecord))?;
    let parts: Vec<&str> = record.split(',').collect();
    let kind = match (org.as_str(), parts.as_slice()) {
        ("LS" | "LSF", ["F", n]) => match n.parse::<usize>() {
            Ok(n) if n > 0 && n <= MAX_RECORD_SIZE => {
                GcsortOrg::LinesFixed { len: n, trim: org == "LS" }
            }
            _ => return Err(fail(E::FixedLength { length: n.to_string() })),
        },
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
    Ok(GcsortFile { path: files.path(&name), name, org: kind, written: (org, record) })
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
    fn a_sort_statement_given_twice_alike_is_one() {
        let job = parse(
            "SORT FIELDS=(1,6,CH,A) USE a ORG SQ RECORD F,10 GIVE b ORG SQ RECORD F,10\n\
             sort fields=(1,6,ch,a)\n",
        )
        .unwrap();
        assert_eq!(job.control.matches("SORT").count(), 1, "{}", job.control);
        // Two different ones stay an error for the DFSORT parser.
        let job = parse(
            "SORT FIELDS=(1,6,CH,A) USE a ORG SQ RECORD F,10 GIVE b ORG SQ RECORD F,10\n\
             SORT FIELDS=(1,6,CH,D)\n",
        )
        .unwrap();
        assert!(crate::parse_control(&job.control).is_err());
    }

    #[test]
    fn the_command_form_is_one_text() {
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
        let job = parse_gcsort(&text, "x", &mut Files::default()).unwrap();
        assert_eq!(job.uses.len(), 1);
        assert_eq!(job.uses[0].org, GcsortOrg::Fixed(100));
        assert_eq!(job.sort_files().unwrap().org, GcsortOrg::Fixed(100));
        assert_eq!(job.give.unwrap().path, PathBuf::from("out.dat"));
        assert_eq!(job.control, "SORT FIELDS=(1,5,CH,A)\nINCLUDE COND=(1,1,CH,EQ,C'A B')\n");
    }

    #[test]
    fn statements_after_give_and_over_lines_keep_their_line_numbers() {
        let text = "* a job\n USE in ORG LS RECORD F,20\n GIVE out ORG LS RECORD F,20\n \
                    SORT FIELDS=(1,5,CH,A,\n   6,2,CH,D)\n OUTREC FIELDS=(1,10\n  ,20,1)";
        let job = parse(text).unwrap();
        assert_eq!(
            job.control,
            "\n\n\nSORT FIELDS=(1,5,CH,A,6,2,CH,D)\n\nOUTREC FIELDS=(1,10,20,1)\n"
        );
        assert_eq!(job.sort_files().unwrap().give.name, "out");
    }

    #[test]
    fn dfsort_messages_point_at_the_text_as_written() {
        let text = "USE in ORG LS RECORD F,20\nGIVE out ORG LS RECORD F,20\n\
                    SORT FIELDS=(1,5,CH,A,\n   6 , 2 , CQ , D)";
        let job = parse(text).unwrap();
        let e = crate::parse_control(&job.control).unwrap_err();
        // CQ is on line 4, column 12, of the text as written.
        let at = job.locate(&e);
        assert!(at.to_string().starts_with("t: line 4, column 12: "), "{at}");
        let job = parse("SORT FIELDS=(1,5,CH,A)\n INCLUDE COND=(1,2,CH,EQ)").unwrap();
        let e = crate::parse_control(&job.control).unwrap_err();
        assert!(job.locate(&e).to_string().starts_with("t: line 2, column"), "{e}");
    }

    #[test]
    fn records_are_fitted_to_the_give_length() {
        let mut job =
            parse("SORT FIELDS=COPY\nUSE a ORG LS RECORD F,10\nGIVE b ORG SQ RECORD F,4").unwrap();
        job.fit_to_give();
        assert_eq!(job.control, "OUTREC FIELDS=(1,4)\nSORT FIELDS=COPY\n");
        let mut job =
            parse("SORT FIELDS=COPY\nUSE a ORG SQ RECORD F,3\nGIVE b ORG SQ RECORD F,5").unwrap();
        job.fit_to_give();
        assert_eq!(job.control, "OUTREC FIELDS=(1,3,2X)\nSORT FIELDS=COPY\n");
        // An OUTREC says the length itself; so do equal lengths.
        for text in [
            "SORT FIELDS=COPY OUTREC FIELDS=(1,2) USE a ORG SQ RECORD F,3 GIVE b ORG SQ RECORD F,5",
            "SORT FIELDS=COPY USE a ORG SQ RECORD F,3 GIVE b ORG LS RECORD F,3",
        ] {
            let mut job = parse(text).unwrap();
            let before = job.control.clone();
            job.fit_to_give();
            assert_eq!(job.control, before);
        }
    }

    #[test]
    fn outfil_names_that_are_no_dd_names_get_one() {
        let job =
            parse("OUTFIL FNAMES=(FOUT_1,OK,F_2),INCLUDE=(1,1,CH,EQ,C'A')\nOUTFIL SAVE,FNAMES=X_Y")
                .unwrap();
        assert_eq!(
            job.control,
            "OUTFIL FNAMES=(GCSF0001,OK,GCSF0002),INCLUDE=(1,1,CH,EQ,C'A')\n\
             OUTFIL SAVE,FNAMES=GCSF0003\n"
        );
        let names: Vec<(&str, &str)> =
            job.fnames.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(names, [("GCSF0001", "FOUT_1"), ("GCSF0002", "F_2"), ("GCSF0003", "X_Y")]);
    }

    #[test]
    fn unsupported_statements_name_their_place_and_what_runs() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        let e = err("SORT FIELDS=COPY\n  MODS E15=(X,1000)");
        assert!(e.starts_with("t: line 2, column 3: MODS is not supported by oxsort"), "{e}");
        assert!(e.contains("SORT, MERGE, SUM"), "{e}");
    }

    #[test]
    fn xsum_needs_its_file_and_the_file_its_sum() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        let e = err("SORT FIELDS=(1,2,CH,A)\nSUM FIELDS=NONE,XSUM");
        assert!(e.starts_with("t: line 2, column 17: SUM ...,XSUM writes the records"), "{e}");
        let e = err("SORT FIELDS=(1,2,CH,A)\nSUM FIELDS=NONE\n  XSUM x ORG SQ RECORD F,4");
        assert!(e.starts_with("t: line 3, column 3: the XSUM statement names the file"), "{e}");
        let e = err("SUM FIELDS=NONE,XSUM XSUM x ORG SQ RECORD F,4 XSUM y ORG SQ RECORD F,4");
        assert!(e.starts_with("t: line 1, column 47: only one XSUM statement"), "{e}");
        let mut files = Files::default();
        files.env.insert("dd_dups", "dups.dat");
        let text = "SORT FIELDS=(1,2,CH,A) USE in ORG SQ RECORD F,4\n\
                    XSUM dd_dups ORG LS RECORD F,4 SUM FIELDS=(3,2,ZD),XSUM\n\
                    GIVE out ORG SQ RECORD F,4";
        let job = parse_gcsort(text, "t", &mut files).unwrap();
        let x = job.xsum.as_ref().unwrap();
        assert_eq!((x.name.as_str(), x.path.to_str()), ("dd_dups", Some("dups.dat")));
        assert_eq!(x.org, GcsortOrg::LinesFixed { len: 4, trim: true });
        assert_eq!(job.control, "SORT FIELDS=(1,2,CH,A)\nSUM FIELDS=(3,2,ZD),XSUM\n");
        let e = err("SORT FIELDS=COPY\n COPYX FIELDS=(1,2)");
        assert!(e.starts_with("t: line 2, column 2: COPYX is not a statement"), "{e}");
        let e = err("SORT FIELDS=COPY\n INCLUDE COND=(1,1,CH,EQ,C'x)");
        assert_eq!(e, "t: line 2, column 27: expected a quote to end the constant");
    }

    #[test]
    fn file_statements_name_their_mistakes() {
        let err = |line: &str| parse(line).unwrap_err().to_string();
        assert!(err("USE a ORG SQ RECORD V,20,10").contains("RECORD V,20,10"));
        assert!(err("USE a ORG SQ RECORD V,10").contains("expected RECORD F,n or V,min,max"));
        let job = parse("USE a ORG SQ RECORD V , 10 , 300").unwrap();
        assert_eq!(job.uses[0].org, GcsortOrg::Variable(304));
        assert_eq!(
            err("USE a ORG IX RECORD F,10"),
            "t: line 1, column 1: USE a: ORG IX is not supported by oxsort (SQ, LS and LSF are)"
        );
        assert!(err("USE a ORG SQ").contains("expected RECORD"));
        assert!(err("GIVE a ORG SQ RECORD F,x").contains("RECORD F,X"));
        assert_eq!(err("\nUSE a ORG"), "t: line 2, column 7: expected a value after ORG");
        assert!(matches!(
            parse("USE a KEY k").unwrap_err(),
            GcsortError::FileStatement { problem: FileStatementError::Indexed, .. }
        ));
        assert!(matches!(
            parse("GIVE a ORG LS RECORD F,1 GIVE b ORG LS RECORD F,1").unwrap_err(),
            GcsortError::SecondGive { .. }
        ));
    }

    #[test]
    fn take_files_are_read_in_place_and_names_resolved() {
        let mut files = Files::default();
        files.env.insert("dd_in", "in.dat");
        files.take.insert(PathBuf::from("job.take"), "* a comment\nUSE dd_in ORG LS RECORD F,10\n SORT FIELDS=COPY\nGIVE out ORG LSF RECORD F,10\n");
        let job = parse_gcsort("TAKE job.take", "cmd", &mut files).unwrap();
        assert_eq!((job.name.as_str(), job.uses[0].path.to_str()), ("job.take", Some("in.dat")));
        assert_eq!(job.uses[0].name, "dd_in");
        assert_eq!(job.control, "\n\nSORT FIELDS=COPY\n");
        assert_eq!(job.sort_files().unwrap().give.path, PathBuf::from("out"));
        let err = parse_gcsort("TAKE none", "cmd", &mut files).unwrap_err();
        assert_eq!(err.to_string(), "cmd: line 1, column 1: reading the TAKE file none");
        assert!(std::error::Error::source(&err).is_some());
        files.take.insert(PathBuf::from("self"), "TAKE self");
        let err = parse_gcsort("TAKE self", "cmd", &mut files).unwrap_err();
        assert!(matches!(err, GcsortError::TakeDepth { .. }), "{err}");
        let err = parse_gcsort("SORT FIELDS=COPY TAKE", "cmd", &mut files).unwrap_err();
        assert!(matches!(err, GcsortError::TakeWords { .. }), "{err}");
    }

    #[test]
    fn sort_and_join_files_are_checked() {
        let job = parse("USE a ORG SQ RECORD F,10\nUSE b ORG SQ RECORD V,1,9").unwrap();
        assert_eq!(
            job.sort_files().unwrap_err().to_string(),
            "t: the USE files must have one organization and record format (a is Fixed(10), \
             b is Variable(13))"
        );
        let job = parse("USE a ORG SQ RECORD V,1,10\nGIVE b ORG LS RECORD F,10").unwrap();
        assert!(job.sort_files().unwrap_err().to_string().contains("differ in organization"));
        // Fixed-length records, sequential or line sequential, go together.
        let job =
            parse("USE a ORG SQ RECORD F,10\nUSE b ORG LSF RECORD F,10\nGIVE c ORG LS RECORD F,4")
                .unwrap();
        let f = job.sort_files().unwrap();
        assert_eq!(f.give.org, GcsortOrg::LinesFixed { len: 4, trim: true });
        assert_eq!(job.uses[1].org, GcsortOrg::LinesFixed { len: 10, trim: false });
        let job = parse("USE a ORG SQ RECORD F,10\nUSE b ORG LS RECORD F,9").unwrap();
        assert!(matches!(job.sort_files(), Err(GcsortError::MixedUse { .. })));
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
            parse("USE a ORG SQ RECORD F,10\nUSE b ORG LS RECORD V,1,2\nGIVE c ORG SQ RECORD F,3")
                .unwrap();
        assert!(job.join_files().unwrap_err().to_string().contains("USE b is line sequential"));
        assert!(matches!(
            parse("USE a ORG LS RECORD F,1").unwrap().join_files(),
            Err(GcsortError::JoinFiles { found: 1, .. })
        ));
    }
}

//! What can go wrong in a job, named by the concept (a data set, a DD name, a control
//! statement), never by a front door's flag: each door words the remedy with its own words
//! through [`Words`] ([`JobError::describe`]); `Display` uses plain concepts ([`Concepts`]).

use std::path::PathBuf;

use oxsort_engine::EngineError;
use oxsort_format::{JoinSpecError, ParseError};
use oxsort_lang::jcl::JclError;
use oxsort_lang::SourceConflict;

/// An error of a front door's own (its GNU key builder), passed through as it is.
pub type DoorError = Box<dyn std::error::Error + Send + Sync>;

/// How a front door names what the user gives it, for the remedies in messages.
pub trait Words {
    /// How to map a DD (or data set) name to a file: `--dd NAME=PATH`, `dd={'NAME': path}`.
    fn dd(&self, name: &str) -> String;
    /// A mapping that was given: `--dd NAME=PATH`.
    fn dd_given(&self, name: &str, path: &str) -> String;
    /// The mapping of a name, without a path: `--dd NAME`.
    fn dd_name(&self, name: &str) -> String;
    /// How to give the record length of a DD: `--lrecl NAME=N`.
    fn lrecl(&self, name: &str) -> String;
    /// How to give the record size: `--record-size N`.
    fn record_size(&self) -> String;
    /// The record size's own name: `--record-size`.
    fn record_size_name(&self) -> String;
    /// The delimited-record switches: `--lines/--nul`.
    fn delimited(&self) -> String;
    /// How to give the output: `-o PATH`.
    fn output(&self) -> String;
    /// The output as given: `-o out.dat`.
    fn output_given(&self, path: &str) -> String;
    /// The inputs as given: `as arguments (a b)`.
    fn inputs_given(&self, paths: &str) -> String;
}

/// The concepts themselves, for `Display` and for a caller with no flags of its own.
#[derive(Debug, Clone, Copy, Default)]
pub struct Concepts;

impl Words for Concepts {
    fn dd(&self, name: &str) -> String {
        format!("a file for {name}")
    }
    fn dd_given(&self, name: &str, path: &str) -> String {
        format!("the data set {name} mapped to {path}")
    }
    fn dd_name(&self, name: &str) -> String {
        format!("the data set {name}")
    }
    fn lrecl(&self, name: &str) -> String {
        format!("the record length of {name}")
    }
    fn record_size(&self) -> String {
        "the record size".into()
    }
    fn record_size_name(&self) -> String {
        "the record size".into()
    }
    fn delimited(&self) -> String {
        "delimited records".into()
    }
    fn output(&self) -> String {
        "an output".into()
    }
    fn output_given(&self, path: &str) -> String {
        format!("the output {path}")
    }
    fn inputs_given(&self, paths: &str) -> String {
        format!("as the inputs ({paths})")
    }
}

/// Where a DD's record length was read, for [`JobError::RecordSizeDiffers`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LengthSource {
    /// The record length given for the DD (`--lrecl SORTIN=N`).
    Given(String),
    /// The DCB of the DD statement.
    Dcb(String),
}

/// A DD of the JCL step whose data set cannot be resolved to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataSetError {
    /// Its data set is neither mapped nor a file.
    NotMapped {
        /// Where the JCL was read.
        control: String,
        /// The DD name.
        dd: String,
        /// The data set name.
        dsn: String,
        /// The DD statement's line.
        line: usize,
    },
    /// An input DD with no data set to read (in-stream, SYSOUT, DUMMY, no DSN).
    NoInput {
        /// Where the JCL was read.
        control: String,
        /// The DD name.
        dd: String,
        /// The DD statement's line.
        line: usize,
    },
    /// An output DD that names no single data set.
    NoOutput {
        /// Where the JCL was read.
        control: String,
        /// The DD name.
        dd: String,
        /// The DD statement's line.
        line: usize,
    },
}

impl DataSetError {
    /// The message, with the remedy in `w`'s words.
    pub fn describe(&self, w: &dyn Words) -> String {
        match self {
            DataSetError::NotMapped { control, dd, dsn, line } => format!(
                "{control}: //{dd} DD DSN={dsn} (line {line}): the data set {dsn} is not mapped \
                 to a file: give {} (or {})",
                w.dd(dsn),
                w.dd(dd)
            ),
            DataSetError::NoInput { control, dd, line } => format!(
                "{control}: //{dd} DD (line {line}) names no data set to read: give it DSN=... \
                 or map it with {}",
                w.dd(dd)
            ),
            DataSetError::NoOutput { control, dd, line } => format!(
                "{control}: //{dd} DD (line {line}) must name one data set to write (DSN=...) or \
                 be SYSOUT=*; or map it with {}",
                w.dd(dd)
            ),
        }
    }
}

/// Why a job could not be resolved or run.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A DD or data set name that cannot be one.
    #[error("{name}: {problem}")]
    BadName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The inputs are named twice: as inputs and as the data set SORTIN.
    #[error("the inputs are given twice: {} and as SORTIN", Concepts.inputs_given(.0))]
    InputsTwice(String),
    /// The output is named twice: as the output and as the data set SORTOUT.
    #[error("the output is given twice: as {} and as SORTOUT", Concepts.output_given(.0))]
    OutputTwice(String),
    /// A name mapped to several files where it names one output.
    #[error("{name}: given {count} times, but it names one output")]
    OneOutput {
        /// The DD name.
        name: String,
        /// How often it was given.
        count: usize,
    },
    /// A name was mapped that no part of the job uses.
    #[error("{name}={path}: this job has no DD {name} (it uses {used})")]
    UnusedDd {
        /// The name.
        name: String,
        /// Its file.
        path: String,
        /// What the job reads and writes.
        used: String,
    },
    /// The control statements do not parse.
    #[error("{name}: {source}")]
    Control {
        /// Where they were read.
        name: String,
        /// The parse error.
        #[source]
        source: ParseError,
    },
    /// The JCL step's DD statements do not parse.
    #[error("{name}: {source}")]
    Jcl {
        /// Where they were read.
        name: String,
        /// The error.
        #[source]
        source: JclError,
    },
    /// A DD's data set cannot be resolved.
    #[error("{}", .0.describe(&Concepts))]
    DataSet(DataSetError),
    /// A DD with a record format oxsort does not read.
    #[error(
        "//{dd} DD (line {line}): RECFM={recfm} is not supported here: oxsort reads fixed-length \
         records (RECFM=F or FB), and RDW-prefixed ones (RECFM=V or VB) on //SORTIN of a SORT, \
         MERGE or COPY"
    )]
    Recfm {
        /// The DD name.
        dd: String,
        /// Its line.
        line: usize,
        /// Its RECFM.
        recfm: String,
    },
    /// A DD's record length differs from the record size given.
    #[error("{} gives {length}-byte records, but the record size says otherwise", source_name(.from, &Concepts))]
    RecordSizeDiffers {
        /// Where the length was read.
        from: LengthSource,
        /// The length.
        length: usize,
    },
    /// A JCL `RECFM=V` LRECL that is not a variable layout.
    #[error("//SORTIN DD LRECL={lrecl}: {source}")]
    VariableLrecl {
        /// The LRECL.
        lrecl: usize,
        /// Why it is no layout.
        #[source]
        source: oxsort_format::SpecError,
    },
    /// OUTFIL writes SORTOUT, but no output is given.
    #[error("OUTFIL (line {line}) writes SORTOUT: give {}", Concepts.output())]
    OutfilSortout {
        /// The OUTFIL statement's line.
        line: usize,
    },
    /// OUTFIL writes a DD that is not mapped to a file.
    #[error("OUTFIL (line {line}) writes the DD {name}: give {}", Concepts.dd(.name))]
    OutfilDd {
        /// The OUTFIL statement's line.
        line: usize,
        /// The DD name.
        name: String,
    },
    /// OUTFIL writes a DD of the JCL step whose data set cannot be resolved.
    #[error("OUTFIL (line {line}): {}", .why.describe(&Concepts))]
    OutfilDataSet {
        /// The OUTFIL statement's line.
        line: usize,
        /// Why the DD has no file.
        why: DataSetError,
    },
    /// `SUM ...,XSUM` writes the DD SORTXSUM, which is not mapped to a file.
    #[error(
        "{control}: SUM (line {line}) with XSUM writes the records it deletes to the DD \
         SORTXSUM: give {} (or a //SORTXSUM DD statement in the JCL)",
        Concepts.dd("SORTXSUM")
    )]
    XsumDd {
        /// Where the control statements were read.
        control: String,
        /// The SUM statement's line.
        line: usize,
    },
    /// `SUM ...,XSUM` writes the DD SORTXSUM of the JCL step, whose data set cannot be
    /// resolved.
    #[error("SUM (line {line}) with XSUM: {}", .why.describe(&Concepts))]
    XsumDataSet {
        /// The SUM statement's line.
        line: usize,
        /// Why the DD has no file.
        why: DataSetError,
    },
    /// The sources of the spec disagree.
    #[error("{}{conflict}", control.as_ref().map(|c| format!("{c}: ")).unwrap_or_default())]
    Conflict {
        /// Where the control statements were read, if there are some.
        control: Option<String>,
        /// The disagreement.
        conflict: SourceConflict,
    },
    /// The door's GNU key did not build.
    #[error(transparent)]
    Door(DoorError),
    /// JOINKEYS statements where one sort's spec is asked for: a join is a job of three
    /// sorts, run by [`crate::resolve`].
    #[error("{control}: a JOINKEYS job is a job of its own, with its F1 and F2 files named; it has no single spec")]
    JoinIsAJob {
        /// Where the statements were read.
        control: String,
    },
    /// A JOINKEYS job given inputs besides its F1 and F2 files.
    #[error(
        "{control}: a JOINKEYS job reads its records from its F1 and F2 files ({f1} and {f2}), \
         not from the inputs given ({inputs})"
    )]
    JoinInputs {
        /// Where the statements were read.
        control: String,
        /// F1's DD.
        f1: String,
        /// F2's DD.
        f2: String,
        /// The inputs given.
        inputs: String,
    },
    /// A JOINKEYS job on delimited records.
    #[error("{control}: oxsort joins fixed-length records only; drop {}", Concepts.delimited())]
    JoinDelimited {
        /// Where the statements were read.
        control: String,
    },
    /// A JOINKEYS file whose DD is not mapped.
    #[error("{control}: JOINKEYS FILE={side} reads DD {dd}: give {} (or a //{dd} DD statement in the JCL)", Concepts.dd(.dd))]
    JoinDd {
        /// Where the statements were read.
        control: String,
        /// `F1` or `F2`.
        side: &'static str,
        /// The DD.
        dd: String,
    },
    /// A JOINKEYS file whose record length is not known.
    #[error("{control}: the record length of {dd} ({side}) is not known: give the record size, its record length, or DCB=(RECFM=FB,LRECL=N) on its DD statement")]
    JoinLength {
        /// Where the statements were read.
        control: String,
        /// `F1` or `F2`.
        side: &'static str,
        /// The DD.
        dd: String,
    },
    /// A JOINKEYS file's own statements (`JNFnCNTL`) do not parse or do not fit.
    #[error("{source_name}: {source}")]
    JoinControl {
        /// Where they were read.
        source_name: String,
        /// The parse error.
        #[source]
        source: ParseError,
    },
    /// Both a JOINKEYS file's own statements and its JOINKEYS statement filter it.
    #[error(
        "{source_name}: {dd} has an INCLUDE or OMIT statement, and the JOINKEYS statement of \
         {side} (line {line} of {control}) has INCLUDE= or OMIT=: give one of them"
    )]
    JoinTwoFilters {
        /// Where the own statements were read.
        source_name: String,
        /// The control DD.
        dd: String,
        /// `F1` or `F2`.
        side: &'static str,
        /// The JOINKEYS statement's line.
        line: usize,
        /// Where the main statements were read.
        control: String,
    },
    /// The join's statements and its files' records do not fit.
    #[error("{control}: {source}")]
    Join {
        /// Where the statements were read.
        control: String,
        /// The problem.
        #[source]
        source: JoinSpecError,
    },
    /// A spec that does not hold for the records it is given.
    #[error("{what}: {source}")]
    Key {
        /// What it is the spec of.
        what: String,
        /// The problem.
        #[source]
        source: oxsort_format::SpecError,
    },
    /// The joined records are no layout.
    #[error("{control}: the joined records: {source}")]
    JoinedLayout {
        /// Where the statements were read.
        control: String,
        /// Why.
        #[source]
        source: oxsort_format::SpecError,
    },
    /// The main task of a JOINKEYS job has no key and is no copy.
    #[error(
        "{control}: the main task of a JOINKEYS job needs SORT FIELDS=(...) or OPTION COPY \
         (SORT FIELDS=COPY), as DFSORT's does"
    )]
    JoinMainTask {
        /// Where the statements were read.
        control: String,
    },
    /// A join side's records end inside a record.
    #[error(
        "{dd} ({side}): {path} ends with a partial record of {bytes} bytes after {records} whole \
         {len}-byte records"
    )]
    PartialRecord {
        /// The DD.
        dd: String,
        /// `F1` or `F2`.
        side: &'static str,
        /// The file (or the sorted stream).
        path: String,
        /// Bytes of the partial record.
        bytes: usize,
        /// Whole records before it.
        records: u64,
        /// The record length.
        len: usize,
    },
    /// A join side given as SORTED out of its join-key order.
    #[error(
        "{dd} ({side}) is out of order by its JOINKEYS keys, although SORTED says it is \
         sorted: record {record} of {path} sorts before the record above it (drop SORTED to \
         have oxsort sort it)"
    )]
    OutOfOrder {
        /// The DD.
        dd: String,
        /// `F1` or `F2`.
        side: &'static str,
        /// The record (1-based, in its file).
        record: u64,
        /// The file (or the sorted stream).
        path: String,
    },
    /// A join side's record whose join key cannot be built.
    #[error("{dd} ({side}) {path}: record {record}: {source}")]
    JoinKey {
        /// The DD.
        dd: String,
        /// `F1` or `F2`.
        side: &'static str,
        /// The record (1-based, in its file).
        record: u64,
        /// The file (or the sorted stream).
        path: String,
        /// Why (boxed: a key error is large beside the others).
        #[source]
        source: Box<oxsort_format::KeyError>,
    },
    /// A side's sort, or the join, panicked.
    #[error("{0} panicked")]
    Panicked(&'static str),
    /// An I/O error, with what was being done.
    #[error("{what}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// An error of a file's I/O, with what was being done.
    #[error("{what}")]
    File {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: oxsort_io::IoError,
    },
    /// An error of a file's I/O.
    #[error(transparent)]
    FileIo(#[from] oxsort_io::IoError),
    /// An engine error, with what was being done.
    #[error("{what}")]
    EngineIn {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: EngineError,
    },
    /// An engine error.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A table sort's error.
    #[error(transparent)]
    Table(#[from] oxsort_table::TableError),
    /// A table sort asked with what applies to records only.
    #[error("a table is sorted by column names: {0} does not apply to it")]
    TableWith(&'static str),
}

fn source_name(from: &LengthSource, w: &dyn Words) -> String {
    match from {
        LengthSource::Given(dd) => w.lrecl(dd).replace("=N", "").to_string(),
        LengthSource::Dcb(dd) => format!("the DCB of //{dd}"),
    }
}

impl JobError {
    /// An I/O error while doing `what`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> JobError {
        JobError::Io { what: what.into(), source }
    }

    /// The top message in `w`'s words, for the errors whose remedy is a door's flag; `None`
    /// for the others, whose `Display` (and causes) are the message.
    pub fn describe(&self, w: &dyn Words) -> Option<String> {
        Some(match self {
            JobError::BadName { name, problem } => format!("{}: {problem}", w.dd_name(name)),
            JobError::InputsTwice(p) => {
                format!(
                    "the inputs are given twice: {} and as {}",
                    w.inputs_given(p),
                    w.dd_name("SORTIN")
                )
            }
            JobError::OutputTwice(p) => format!(
                "the output is given twice: as {} and as {}",
                w.output_given(p),
                w.dd_name("SORTOUT")
            ),
            JobError::OneOutput { name, count } => {
                format!("{}: given {count} times, but it names one output", w.dd_name(name))
            }
            JobError::UnusedDd { name, path, used } => {
                format!("{}: this job has no DD {name} (it uses {used})", w.dd_given(name, path))
            }
            JobError::DataSet(d) => d.describe(w),
            JobError::RecordSizeDiffers { from, length } => format!(
                "{} gives {length}-byte records, but {} says otherwise",
                source_name(from, w),
                w.record_size_name()
            ),
            JobError::OutfilSortout { line } => format!(
                "OUTFIL (line {line}) writes SORTOUT: give {} or {}",
                w.output(),
                w.dd("SORTOUT")
            ),
            JobError::OutfilDd { line, name } => {
                format!("OUTFIL (line {line}) writes the DD {name}: give {}", w.dd(name))
            }
            JobError::OutfilDataSet { line, why } => {
                format!("OUTFIL (line {line}): {}", why.describe(w))
            }
            JobError::XsumDd { control, line } => format!(
                "{control}: SUM (line {line}) with XSUM writes the records it deletes to the DD \
                 SORTXSUM: give {} (or a //SORTXSUM DD statement in the JCL)",
                w.dd("SORTXSUM")
            ),
            JobError::XsumDataSet { line, why } => {
                format!("SUM (line {line}) with XSUM: {}", why.describe(w))
            }
            JobError::JoinDelimited { control } => {
                format!("{control}: oxsort joins fixed-length records only; drop {}", w.delimited())
            }
            JobError::JoinDd { control, side, dd } => format!(
                "{control}: JOINKEYS FILE={side} reads DD {dd}: give {} (or a //{dd} DD statement \
                 in the JCL)",
                w.dd(dd)
            ),
            JobError::JoinLength { control, side, dd } => format!(
                "{control}: the record length of {dd} ({side}) is not known: give {} (for both \
                 files), {}, or DCB=(RECFM=FB,LRECL=N) on its DD statement",
                w.record_size(),
                w.lrecl(dd)
            ),
            _ => return None,
        })
    }
}

/// A JOINKEYS side's files were named; kept for messages that list them.
pub(crate) fn shown(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")
}

//! What a Python call asks for, turned into the job layer's [`JobRequest`] ([`request`]) or,
//! for one sort of given files, a [`SortConfig`] ([`build_config`]): the Python twin of the
//! CLI's `keys_args.rs` + `sort_cmd.rs`. Errors are in the words of the Python API
//! (`dd=`, `record_size=`), never a CLI flag.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use oxsort_engine::{Input, Output, Progress, SortConfig};
use oxsort_format::RecordLayout;
use oxsort_job::table::{TableError, TableSpec, TableWords};
use oxsort_job::{ControlText, DataSets, JobError, JobRequest, Resources, SpecSource, Words};
use oxsort_lang::{parse_fields, GnuArgs, GnuEnv, GnuOptions, SourceConflict, Vocabulary};
use pyo3::prelude::*;

use crate::errors::{engine_error, BadInputError, DisorderError, Error, SpecError};

/// The layout, key and resource arguments of `oxsort.sort` and friends, as the facade passes
/// them (a dict with every key present; `None` for what was not given).
#[derive(Debug, Default, FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct SpecArgs {
    /// `record_size=`: fixed records of this many bytes.
    pub record_size: Option<usize>,
    /// `lines=True`: newline-terminated records.
    pub lines: bool,
    /// `nul=True`: NUL-terminated records.
    pub nul: bool,
    /// `fields=`: a DFSORT `SORT FIELDS=` operand list.
    pub fields: Option<String>,
    /// `control=`: DFSORT control statements (the text itself).
    pub control: Option<String>,
    /// `keys=`: GNU sort flags, already split into arguments.
    pub keys: Vec<String>,
    /// `unique=True`.
    pub unique: bool,
    /// `memory=`, in bytes.
    pub memory: Option<u64>,
    /// `threads=`.
    pub threads: Option<usize>,
    /// `temp_dirs=`.
    pub temp_dirs: Vec<PathBuf>,
    /// `resume=`: a resumable sort that goes on from an interrupted one's journal.
    pub resume: bool,
    /// `dd=`: DD (or data set) names mapped to files, as `(name, path)` pairs.
    pub dd: Vec<(String, PathBuf)>,
    /// `by=`: tables sorted by these columns, each `NAME[:desc][:nulls_first]`.
    pub by: Vec<String>,
    /// `format=`: the input tables' format.
    pub format: Option<String>,
    /// `output_format=`: the output table's format.
    pub output_format: Option<String>,
    /// `types=`: CSV and TSV columns' types, each `NAME=TYPE`.
    pub types: Vec<String>,
    /// `row_checksum=True`: a table sort also sums its rows' contents (`rows_checksum`).
    pub row_checksum: bool,
}

/// Hooks of a running sort: its cancel flag and progress callback.
pub(crate) struct Hooks {
    /// Set to stop the sort.
    pub cancel: Arc<AtomicBool>,
    /// Receives progress events.
    pub progress: Box<dyn Fn(&Progress) + Send + Sync>,
}

/// The name of the control statements in messages.
const CONTROL: &str = "control";

/// How the Python API words the job layer's remedies.
struct PyWords;

impl Words for PyWords {
    fn dd(&self, name: &str) -> String {
        format!("dd={{'{name}': path}}")
    }
    fn dd_given(&self, name: &str, path: &str) -> String {
        format!("dd={{'{name}': '{path}'}}")
    }
    fn dd_name(&self, name: &str) -> String {
        format!("dd['{name}']")
    }
    fn lrecl(&self, name: &str) -> String {
        format!("DCB=(LRECL=N) on the //{name} DD statement")
    }
    fn record_size(&self) -> String {
        "record_size=N".into()
    }
    fn record_size_name(&self) -> String {
        "record_size=".into()
    }
    fn delimited(&self) -> String {
        "lines=True/nul=True".into()
    }
    fn output(&self) -> String {
        "output=".into()
    }
    fn output_given(&self, path: &str) -> String {
        format!("output='{path}'")
    }
    fn inputs_given(&self, paths: &str) -> String {
        format!("as inputs ({paths})")
    }
}

/// The sources of the spec of `a` (`merge`: the inputs are presorted).
fn spec_source(a: &SpecArgs, merge: bool) -> PyResult<SpecSource> {
    let spec_err = |m: String| SpecError::new_err(m);
    let gnu = gnu_args(&a.keys).map_err(spec_err)?;
    let delimited = match (a.lines, a.nul || gnu.zero) {
        (true, true) if a.nul => {
            return Err(spec_err("lines=True and nul=True: choose one".into()))
        }
        (true, true) => {
            return Err(spec_err(
                "keys: -z (NUL-terminated records) conflicts with lines=True".into(),
            ))
        }
        (true, _) => Some(RecordLayout::LINES),
        (_, true) => Some(RecordLayout::NUL),
        _ => None,
    };
    let fields = match &a.fields {
        Some(f) => {
            Some(parse_fields(f).map_err(|e| spec_err(e.in_value(&format!("fields='{f}'"))))?)
        }
        None => None,
    };
    Ok(SpecSource {
        control: a.control.as_ref().map(|t| ControlText::new(CONTROL, t.clone())),
        fields,
        delimited,
        record_size: a.record_size,
        rdw: None,
        gnu_flags: !a.keys.is_empty(),
        gnu: Some(Arc::new(move |unique| {
            let g = gnu_options(&gnu, unique)?;
            Ok((g.key_spec(), g.unique))
        })),
        unique: a.unique,
        merge,
        table: table_spec(a)?,
    })
}

/// The words of Python's table options.
const TABLE_WORDS: TableWords = TableWords {
    by: "by=",
    format: "format=",
    output_format: "output_format=",
    types: "types=",
    by_example: "by=[...]",
};

/// The table sort `by=` asks for, if it asks for one.
fn table_spec(a: &SpecArgs) -> PyResult<Option<TableSpec>> {
    TableSpec::from_options(
        &a.by,
        a.format.as_deref(),
        a.output_format.as_deref(),
        &a.types,
        &TABLE_WORDS,
    )
    .map_err(|e| SpecError::new_err(e.to_string()))
}

/// The sort columns of `by=` (as `oxsort._files._by` gives it: items of
/// `NAME[:desc][:nulls_first]`, comma-separated, a name with `:` or `,` quoted), read as every
/// table sort reads them: `(name, descending, nulls_first)` each. For the doors that hand
/// columns to their own stages (the Ray door's sample and split).
#[pyfunction]
pub(crate) fn table_keys(by: Vec<String>) -> PyResult<Vec<(String, bool, bool)>> {
    let spec = TableSpec::from_options(&by, None, None, &[], &TABLE_WORDS)
        .map_err(|e| SpecError::new_err(e.to_string()))?
        .ok_or_else(|| SpecError::new_err("by=: no column given"))?;
    Ok(spec.by.into_iter().map(|c| (c.name, c.descending, c.nulls_first)).collect())
}

/// The table files a directory given as a table input stands for, in name order, as every
/// table sort takes a directory (markers left out; a partitioned directory, or one without a
/// table file, refused naming it); any other path as it is. For the doors that hand files to
/// their own stages (the Ray door's maps).
#[pyfunction]
pub(crate) fn table_files(path: PathBuf) -> PyResult<Vec<PathBuf>> {
    oxsort_job::table::expand_dirs(&[path], None).map_err(table_error)
}

/// A table sort's error as the Python exception it is.
pub(crate) fn table_error(e: TableError) -> PyErr {
    let msg = e.to_string();
    match e {
        TableError::Engine(e) => engine_error(e),
        TableError::Read { .. } | TableError::Corrupt { .. } | TableError::RowTooLong { .. } => {
            BadInputError::new_err(msg)
        }
        TableError::Write { .. } | TableError::Check { .. } | TableError::Io(_) => {
            Error::new_err(msg)
        }
        _ => SpecError::new_err(msg),
    }
}

/// The job `a` asks for: `inputs` into `output` (either may be left out, as `[]` and `None`,
/// when the control statements or `dd=` name them), with `hooks`.
pub(crate) fn request(
    a: &SpecArgs,
    inputs: Vec<PathBuf>,
    output: Option<PathBuf>,
    merge: bool,
    hooks: Option<Hooks>,
) -> PyResult<JobRequest> {
    let (progress, cancel) = match hooks {
        Some(h) => {
            let p: oxsort_job::ProgressFn = Arc::from(h.progress);
            (Some(p), Some(h.cancel))
        }
        None => (None, None),
    };
    Ok(JobRequest {
        inputs,
        output: output.unwrap_or_else(|| PathBuf::from(oxsort_job::STD)),
        spec: spec_source(a, merge)?,
        data_sets: DataSets { dd: a.dd.clone(), lrecl: Vec::new() },
        resources: Resources {
            memory: a.memory,
            threads: a.threads,
            temp_dirs: a.temp_dirs.clone(),
            resume: a.resume,
            progress,
            cancel,
            ..Resources::default()
        },
    })
}

/// Resolves the job `a` asks for; a job that still reads standard input or writes standard
/// output (nothing named them) is an error.
pub(crate) fn resolve(req: JobRequest, a: &SpecArgs) -> PyResult<oxsort_job::Job> {
    let job = oxsort_job::resolve(req).map_err(|e| job_error(e, a))?;
    let (inputs, output): (&[PathBuf], &PathBuf) = match &job {
        oxsort_job::Job::Sort(j) => (&j.inputs, &j.output),
        oxsort_job::Job::Join(j) => (&[], &j.output),
        oxsort_job::Job::Table(j) => (&j.sort.inputs, &j.sort.output),
    };
    if inputs.iter().any(|p| oxsort_job::is_std(p)) {
        return Err(SpecError::new_err(
            "no input given: give the inputs, or name them with dd={'SORTIN': path} (or a \
             //SORTIN DD statement in control=)",
        ));
    }
    if oxsort_job::is_std(output) {
        return Err(SpecError::new_err(
            "no output given: give the output, or name it with dd={'SORTOUT': path} (or a \
             //SORTOUT DD statement in control=)",
        ));
    }
    Ok(job)
}

/// A job layer's error in the words of the Python API.
pub(crate) fn job_error(e: JobError, a: &SpecArgs) -> PyErr {
    if let Some(m) = e.describe(&PyWords) {
        return SpecError::new_err(m);
    }
    if let JobError::JoinIsAJob { .. } = e {
        // The one Python call that runs a join is oxsort.sort, its files named by dd=.
        return SpecError::new_err(format!(
            "{CONTROL}: a JOINKEYS job runs with oxsort.sort (its files named by dd=), not here"
        ));
    }
    let msg = oxsort_engine::error_message(&e);
    match e {
        JobError::Conflict { conflict: c, .. } => SpecError::new_err(conflict(c, a)),
        JobError::Door(e) => SpecError::new_err(e.to_string()),
        JobError::Engine(e) => engine_error(e),
        JobError::Table(e) => table_error(e),
        JobError::EngineIn { source: oxsort_engine::EngineError::Interrupted, .. } => {
            engine_error(oxsort_engine::EngineError::Interrupted)
        }
        JobError::EngineIn { .. } => Error::new_err(msg),
        JobError::PartialRecord { .. } => BadInputError::new_err(msg),
        JobError::OutOfOrder { .. } => DisorderError::new_err(msg),
        JobError::Io { .. }
        | JobError::File { .. }
        | JobError::FileIo(_)
        | JobError::Panicked(_) => Error::new_err(msg),
        _ => SpecError::new_err(msg),
    }
}

/// Builds the engine configuration of one sort of `inputs` into `output`, no data sets
/// (`merge`: the inputs are presorted). Every argument is checked before any file is touched;
/// errors are [`SpecError`]s naming the argument (with the column for parse errors), as the
/// CLI names its flags.
pub(crate) fn build_config(
    a: &SpecArgs,
    inputs: Vec<PathBuf>,
    output: PathBuf,
    merge: bool,
    hooks: Option<Hooks>,
) -> PyResult<SortConfig> {
    let source = spec_source(a, merge)?;
    let spec = oxsort_job::spec_of(&source).map_err(|e| job_error(e, a))?;
    let mut b =
        SortConfig::builder(inputs.into_iter().map(Input::Path).collect(), Output::Path(output))
            .spec(spec);
    if let Some(m) = a.memory {
        b = b.memory(m);
    }
    if let Some(t) = a.threads {
        b = b.threads(t);
    }
    for d in &a.temp_dirs {
        b = b.temp_dir(d.clone());
    }
    b = b.resume(a.resume);
    if let Some(h) = hooks {
        b = b.cancel(h.cancel).progress(h.progress);
    }
    b.build().map_err(engine_error)
}

/// A conflict between sources, in the words of the Python API.
fn conflict(c: SourceConflict, a: &SpecArgs) -> String {
    c.describe(&Arguments { lines: a.lines })
}

/// The Python API's names for the sources of a sort's description.
struct Arguments {
    /// `lines=True` (else `nul=True`) was given.
    lines: bool,
}

impl Vocabulary for Arguments {
    fn record_size(&self, size: Option<usize>) -> String {
        match size {
            Some(n) => format!("record_size={n}"),
            None => "record_size".into(),
        }
    }
    fn delimited(&self) -> String {
        if self.lines { "lines=True" } else { "nul=True" }.into()
    }
    fn delimited_options(&self) -> String {
        "lines=True or nul=True".into()
    }
    fn variable(&self) -> String {
        "RDW-prefixed records".into()
    }
    fn control(&self) -> String {
        "control".into()
    }
    fn fields(&self) -> String {
        "fields=".into()
    }
    fn gnu(&self) -> String {
        "keys=".into()
    }
    fn gnu_are(&self) -> String {
        "gives GNU sort keys".into()
    }
}

/// Bytes from a size as users write it (`4096`, `"512M"`, `"1.5G"`), read as the CLI reads
/// its sizes.
#[pyfunction]
pub(crate) fn parse_size(text: &str) -> PyResult<u64> {
    oxsort_lang::parse_bytes(text).map_err(|e| SpecError::new_err(e.to_string()))
}

/// `keys=` read as GNU sort's command line reads it (the `sort` link's `getopt_long` model),
/// keeping only what is about the key: the rest has its own argument in Python, or none.
fn gnu_args(argv: &[String]) -> Result<GnuArgs, String> {
    let env = GnuEnv::default();
    let g = GnuArgs::parse(argv, &env).map_err(|e| {
        // Name the argument the mistake is in: where the shortest prefix of the arguments
        // that fails the same way ends.
        let at =
            (1..=argv.len()).find(|&n| GnuArgs::parse(&argv[..n], &env).err().as_ref() == Some(&e));
        match at {
            Some(n) => format!("keys: argument '{}': {e}", argv[n - 1]),
            None => format!("keys: {e}"),
        }
    })?;
    let elsewhere = [
        (g.output.is_some(), "-o (the output is the output argument)"),
        (g.check.is_some(), "-c/-C (use oxsort.check)"),
        (g.merge, "-m (use oxsort.merge)"),
        (g.buffer_size.is_some(), "-S (use memory=)"),
        (!g.temp_dirs.is_empty(), "-T (use temp_dirs=)"),
        (g.parallel.is_some(), "--parallel (use threads=)"),
        (g.batch_size.is_some(), "--batch-size"),
        (g.compress_program.is_some(), "--compress-program"),
        (g.files0_from.is_some(), "--files0-from (give the inputs)"),
        (g.random_source.is_some(), "--random-source"),
        (g.debug, "--debug"),
        (g.help, "--help"),
        (g.version, "--version"),
    ];
    if let Some((_, what)) = elsewhere.iter().find(|(given, _)| *given) {
        return Err(format!("keys: {what} is not about the key"));
    }
    if let Some(f) = g.files.first() {
        return Err(format!("keys: '{f}' is not an option (keys= takes GNU sort options)"));
    }
    Ok(g)
}

/// The keys of `keys=` as `oxsort sort -k` builds them: GNU sort's rules in the C locale.
fn gnu_options(g: &GnuArgs, unique: bool) -> Result<GnuOptions, String> {
    let mut opts = g.c_locale_options();
    opts.unique |= unique;
    opts.check().map_err(|e| format!("keys: {e}"))?;
    Ok(opts)
}

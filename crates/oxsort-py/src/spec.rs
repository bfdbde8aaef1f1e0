//! What a Python call asks for, turned into the job layer's [`JobRequest`] ([`request`]) or,
//! for one sort of given files, a [`SortConfig`] ([`build_config`]): the Python twin of the
//! CLI's `keys_args.rs` + `sort_cmd.rs`. Errors are in the words of the Python API
//! (`dd=`, `record_size=`), never a CLI flag.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use oxsort_engine::{Input, Output, Progress, SortConfig};
use oxsort_format::{parse_fields, parse_gnu_args, Location, ParseError};
use oxsort_format::{RecordLayout, SourceConflict};
use oxsort_job::{ControlText, DataSets, JobError, JobRequest, Resources, SpecSource, Words};
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
    let delimited = match (a.lines, a.nul) {
        (true, true) => return Err(spec_err("lines=True and nul=True: choose one".into())),
        (true, _) => Some(RecordLayout::LINES),
        (_, true) => Some(RecordLayout::NUL),
        _ => None,
    };
    let fields = match &a.fields {
        Some(f) => {
            Some(parse_fields(f).map_err(|e| spec_err(located(&format!("fields='{f}'"), &e)))?)
        }
        None => None,
    };
    let keys = a.keys.clone();
    Ok(SpecSource {
        control: a.control.as_ref().map(|t| ControlText::new(CONTROL, t.clone())),
        fields,
        delimited,
        record_size: a.record_size,
        rdw: None,
        gnu_flags: !a.keys.is_empty(),
        gnu: Some(Arc::new(move |unique| {
            let mut argv = keys.clone();
            if unique {
                argv.push("-u".into());
            }
            let g = parse_gnu_args(&argv).map_err(|e| gnu_error(&e, &argv))?;
            Ok((g.key, g.unique))
        })),
        unique: a.unique,
        merge,
    })
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
    let msg = oxsort_engine::error_message(&e);
    match e {
        JobError::Conflict { conflict: c, .. } => SpecError::new_err(conflict(c, a)),
        JobError::Door(e) => SpecError::new_err(e.to_string()),
        JobError::Engine(e) => engine_error(e),
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
    if a.control.as_ref().is_some_and(|t| t.to_ascii_uppercase().contains("JOINKEYS")) {
        let c = oxsort_format::parse_control(a.control.as_deref().unwrap_or_default())
            .map_err(|e| SpecError::new_err(format!("{CONTROL}: {e}")))?;
        if c.join.is_some() {
            return Err(SpecError::new_err(
                "control: a JOINKEYS job runs with oxsort.sort (its files named by dd=), not \
                 here",
            ));
        }
    }
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
    let delimited = if a.lines { "lines=True" } else { "nul=True" };
    match c {
        SourceConflict::RecordSizeWithDelimited => {
            "record_size gives fixed records; it cannot go with lines or nul".into()
        }
        SourceConflict::RecordSize(e) => {
            format!("record_size={}: {e}", a.record_size.unwrap_or_default())
        }
        SourceConflict::ControlLength { length, record_size } => {
            format!("control: RECORD LENGTH={length} conflicts with record_size={record_size}")
        }
        SourceConflict::ControlFixedWithDelimited { length } => format!(
            "control: RECORD TYPE=F,LENGTH={length} (fixed records) conflicts with {delimited}"
        ),
        SourceConflict::VariableWithOther => {
            "RDW-prefixed records cannot go with record_size, lines or nul".into()
        }
        SourceConflict::ControlFixedWithVariable { length } => format!(
            "control: RECORD TYPE=F,LENGTH={length} (fixed records) conflicts with RDW-prefixed \
             records"
        ),
        SourceConflict::ControlVariableWithOther => format!(
            "control: RECORD TYPE=V (RDW-prefixed records) conflicts with {}",
            if a.record_size.is_some() { "record_size".to_string() } else { delimited.to_string() }
        ),
        SourceConflict::CopyWithFields => {
            "control: a copy (FIELDS=COPY or OPTION COPY) has no key, but fields= gives one".into()
        }
        SourceConflict::FieldsWithControlKey { .. } => {
            "fields= and the control statements both give the key: keep one".into()
        }
        SourceConflict::GnuNeedsDelimited => "keys= gives GNU sort keys, for delimited text: add \
                                              lines=True or nul=True (for fixed records give the \
                                              key with fields=)"
            .into(),
        SourceConflict::GnuWithKey { .. } => {
            "keys= and fields= (or control=) both give the key: keep one".into()
        }
    }
}

/// `what: column N: message` for a parse error of a one-line value.
fn located(what: &str, e: &ParseError) -> String {
    match &e.location {
        Location::Line { column, .. } | Location::Argument { column, .. } => {
            format!("{what}: column {column}: {}", without_location(e))
        }
        _ => format!("{what}: {e}"),
    }
}

/// A GNU flag parse error naming the argument it is in.
fn gnu_error(e: &ParseError, argv: &[String]) -> String {
    match &e.location {
        Location::Argument { index, column } if (1..=argv.len()).contains(index) => format!(
            "keys: argument '{}': column {column}: {}",
            argv[index - 1],
            without_location(e)
        ),
        _ => format!("keys: {e}"),
    }
}

/// The message of a parse error without its location prefix.
fn without_location(e: &ParseError) -> String {
    let full = e.to_string();
    let prefix = format!("{}: ", e.location);
    full.strip_prefix(&prefix).map(str::to_string).unwrap_or(full)
}

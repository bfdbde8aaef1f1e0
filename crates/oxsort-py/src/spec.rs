//! What a Python call asks of the engine, turned into a [`SortConfig`] in one place
//! ([`build_config`]), the Python twin of the CLI's `keys_args.rs` + `sort_cmd.rs`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use oxsort_engine::{Input, Output, Progress, SortConfig};
use oxsort_format::RecordLayout;
use oxsort_lang::{parse_control, parse_fields, GnuArgs, GnuEnv, GnuOptions};
use oxsort_lang::{ReconcileError, SourceConflict, SpecSources, Vocabulary};
use pyo3::prelude::*;

use crate::errors::{engine_error, SpecError};

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
}

/// Hooks of a running sort: its cancel flag and progress callback.
pub(crate) struct Hooks {
    /// Set to stop the sort.
    pub cancel: Arc<AtomicBool>,
    /// Receives progress events.
    pub progress: Box<dyn Fn(&Progress) + Send + Sync>,
}

/// Builds the engine configuration of a sort (`merge`: the inputs are presorted). Every
/// argument is checked before any file is touched; errors are [`SpecError`]s naming the
/// argument (with the column for parse errors), as the CLI names its flags.
pub(crate) fn build_config(
    a: &SpecArgs,
    inputs: Vec<PathBuf>,
    output: PathBuf,
    merge: bool,
    hooks: Option<Hooks>,
) -> PyResult<SortConfig> {
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
    let control = match &a.control {
        Some(text) => Some(parse_control(text).map_err(|e| spec_err(format!("control: {e}")))?),
        None => None,
    };
    if control.as_ref().is_some_and(|c| c.join.is_some()) {
        return Err(spec_err(
            "control: JOINKEYS jobs run with the command line (oxsort sort --control FILE \
             --dd SORTJNF1=... --dd SORTJNF2=...); the Python package does not join yet"
                .into(),
        ));
    }
    let fields = match &a.fields {
        Some(f) => {
            Some(parse_fields(f).map_err(|e| spec_err(e.in_value(&format!("fields='{f}'"))))?)
        }
        None => None,
    };
    let sources = SpecSources {
        delimited,
        record_size: a.record_size,
        variable: None,
        control,
        fields,
        gnu_flags: !a.keys.is_empty(),
        unique: a.unique,
        merge,
    };
    let spec = sources
        .reconcile(|unique| {
            let g = gnu_options(&gnu, unique)?;
            Ok::<_, String>((g.key_spec(), g.unique))
        })
        .map_err(|e| match e {
            ReconcileError::Gnu(m) => spec_err(m),
            ReconcileError::Conflict(c) => spec_err(conflict(c, a)),
        })?;
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

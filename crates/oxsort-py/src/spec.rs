//! What a Python call asks of the engine, turned into a [`SortConfig`] in one place
//! ([`build_config`]), the Python twin of the CLI's `keys_args.rs` + `sort_cmd.rs`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use oxsort_engine::{Input, Mode, Output, Progress, SortConfig, SortSpec};
use oxsort_format::{parse_control, parse_fields, parse_gnu_args, Location, ParseError};
use oxsort_format::{KeySpec, RecordLayout};
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
    let delimited = match (a.lines, a.nul) {
        (true, true) => return Err(spec_err("lines=True and nul=True: choose one".into())),
        (true, _) => Some(RecordLayout::LINES),
        (_, true) => Some(RecordLayout::NUL),
        _ => None,
    };
    let mut layout = delimited;
    if let Some(n) = a.record_size {
        if delimited.is_some() {
            return Err(spec_err(
                "record_size gives fixed records; it cannot go with lines or nul".into(),
            ));
        }
        layout =
            Some(RecordLayout::fixed(n).map_err(|e| spec_err(format!("record_size={n}: {e}")))?);
    }
    let mut key: Option<KeySpec> = None;
    let mut filter = None;
    let mut unique = a.unique;
    let mut mode = if merge { Mode::Merge } else { Mode::Sort };
    if let Some(text) = &a.control {
        let c = parse_control(text).map_err(|e| spec_err(format!("control: {e}")))?;
        if let Some(RecordLayout::Fixed(n)) = c.record {
            match layout {
                Some(RecordLayout::Fixed(m)) if m != n => {
                    return Err(spec_err(format!(
                        "control: RECORD LENGTH={n} conflicts with record_size={m}"
                    )))
                }
                Some(RecordLayout::Delimited(_)) => {
                    return Err(spec_err(format!(
                        "control: RECORD TYPE=F,LENGTH={n} (fixed records) conflicts with {}",
                        if a.lines { "lines=True" } else { "nul=True" }
                    )))
                }
                _ => layout = Some(RecordLayout::Fixed(n)),
            }
        }
        if c.copy {
            mode = Mode::Copy;
        } else if c.merge {
            mode = Mode::Merge;
        }
        if let Some(k) = c.key {
            if a.fields.is_some() {
                return Err(spec_err(
                    "fields= and the control statements both give the key: keep one".into(),
                ));
            }
            key = Some(k);
        }
        unique |= c.sum_none;
        filter = c.filter;
    }
    if let Some(f) = &a.fields {
        key = Some(parse_fields(f).map_err(|e| spec_err(located(&format!("fields='{f}'"), &e)))?);
    }
    if !a.keys.is_empty() {
        if delimited.is_none() {
            return Err(spec_err(
                "keys= gives GNU sort keys, for delimited text: add lines=True or nul=True \
                 (for fixed records give the key with fields=)"
                    .into(),
            ));
        }
        if key.is_some() {
            return Err(spec_err(
                "keys= and fields= (or control=) both give the key: keep one".into(),
            ));
        }
    }
    if delimited.is_some() && key.is_none() && mode != Mode::Copy {
        // GNU sort's semantics for delimited text: whole lines when there is no -k.
        let mut argv = a.keys.clone();
        if unique {
            argv.push("-u".into());
        }
        let g = parse_gnu_args(&argv).map_err(|e| spec_err(gnu_error(&e, &argv)))?;
        key = Some(g.key);
        unique |= g.unique;
    }

    let spec = SortSpec { layout: layout.unwrap_or_default(), key, filter, unique, mode };
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

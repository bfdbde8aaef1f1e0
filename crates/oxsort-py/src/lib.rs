//! oxsort-py: the native module `oxsort._native` behind the Python package `oxsort`.
//!
//! The Python facade (`python/oxsort/`) holds the public API; this module does the work with
//! the GIL released:
//!
//! - `job`: file jobs (sorts, merges, OUTFIL outputs, JOINKEYS joins, as the job layer
//!   `oxsort_job` resolves them) on a thread of their own, which the caller waits for in
//!   short slices (so Ctrl-C and progress stay on the Python side), and `explain`;
//! - `spec`: the one place where Python arguments become an [`oxsort_job::JobRequest`] (or,
//!   for one sort of given files, an [`oxsort_engine::SortConfig`]);
//! - `arrays`: NumPy arrays sorted on the oxsort kernels (`sort_array`, `argsort`);
//! - `errors`: `oxsort.Error` and its subclasses;
//! - `stages`: the sample and map stages of a sort across a cluster (`oxsort.ray`), PyO3 glue
//!   over `oxsort_job::cluster`, and
//!   `reduce`: its reduce stage, a streamed merge of the maps' buckets;
//! - `check`: the engine's order check of one file;
//! - `gensort` / `valsort` on the `oxsort-gensort` library.
//!
//! It is built by maturin (`pip install .` at the repository root) as an abi3 extension for
//! CPython 3.9 and later.
#![deny(missing_docs)]

mod arrays;
mod errors;
mod job;
mod reduce;
mod spec;
mod stages;

use std::path::PathBuf;

use oxsort_engine::EngineError;
use oxsort_gensort::{generate_file, validate_file, Kind, Summary};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use errors::gensort_error;

/// Big allocations (entry arrays) come from the hugetlb pool when one is reserved, as in the
/// `oxsort` binary (see `oxsort_io::bigmem`).
#[global_allocator]
static ALLOC: oxsort_io::BigAlloc = oxsort_io::BigAlloc;

/// Writes `records` gensort records starting at `start` to `path`; returns their checksum
/// (hex, as gensort prints it).
#[pyfunction]
#[pyo3(signature = (path, records, start, ascii, skew, threads))]
fn gensort(
    py: Python<'_>,
    path: PathBuf,
    records: u64,
    start: u128,
    ascii: bool,
    skew: bool,
    threads: usize,
) -> PyResult<String> {
    let kind = match (ascii, skew) {
        (false, false) => Kind::Binary,
        (true, false) => Kind::Ascii,
        (false, true) => Kind::Skew,
        (true, true) => Kind::SkewAscii,
    };
    py.allow_threads(|| generate_file(&path, start, records, kind, threads, None))
        .map(|c| c.to_string())
        .map_err(gensort_error)
}

/// Validates the files in order as one sequence (valsort, and valsort -s over their
/// summaries); returns the merged summary as a dict.
#[pyfunction]
fn valsort<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let sum = py
        .allow_threads(|| -> Result<Summary, oxsort_gensort::Error> {
            let mut all = Summary::new();
            for p in &paths {
                all.merge(&validate_file(p, threads, None)?);
            }
            Ok(all)
        })
        .map_err(gensort_error)?;
    let d = PyDict::new(py);
    d.set_item("records", sum.records)?;
    d.set_item("checksum", sum.checksum.to_string())?;
    d.set_item("unordered", sum.unordered)?;
    d.set_item("first_unordered", sum.first_unordered())?;
    d.set_item("duplicates", sum.duplicates)?;
    d.set_item("report", sum.report())?;
    Ok(d)
}

/// The first record of `path` out of the key order of `spec`, counted from 1, or `None` when
/// it is in order: one read of the file (GIL released) through the engine's order check.
#[pyfunction]
fn check(py: Python<'_>, path: PathBuf, spec: spec::SpecArgs) -> PyResult<Option<u64>> {
    // A check writes nothing: the configuration's output is never opened, so the input's own
    // name stands in for it. Merge: the spec reads as it does for a merge of sorted inputs.
    let cfg = spec::build_config(&spec, vec![path.clone()], path, true, None)?;
    let found = py.allow_threads(|| oxsort_engine::check_config(&cfg)).map_err(|e| match e {
        // An input that cannot be opened is bad input, as when a sort opens it.
        EngineError::Io(oxsort_io::IoError::Open { path, source }) => {
            errors::engine_error(EngineError::Input { path, source })
        }
        e => errors::engine_error(e),
    })?;
    Ok(found.map(|d| d.line()))
}

/// The number of cores the engine uses by default.
#[pyfunction]
fn cores() -> usize {
    oxsort_engine::cores()
}

/// The module `oxsort._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("BadInputError", py.get_type::<errors::BadInputError>())?;
    m.add("SpecError", py.get_type::<errors::SpecError>())?;
    m.add("OutOfSpaceError", py.get_type::<errors::OutOfSpaceError>())?;
    m.add("DisorderError", py.get_type::<errors::DisorderError>())?;
    m.add_class::<job::Job>()?;
    m.add_function(wrap_pyfunction!(job::start, m)?)?;
    m.add_function(wrap_pyfunction!(job::explain, m)?)?;
    m.add_function(wrap_pyfunction!(job::check_spec, m)?)?;
    m.add_function(wrap_pyfunction!(arrays::sort_records, m)?)?;
    m.add_function(wrap_pyfunction!(stages::sample, m)?)?;
    m.add_function(wrap_pyfunction!(stages::map, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::merge_buckets, m)?)?;
    m.add_function(wrap_pyfunction!(stages::check_cluster_spec, m)?)?;
    m.add_function(wrap_pyfunction!(stages::record_size, m)?)?;
    m.add_function(wrap_pyfunction!(gensort, m)?)?;
    m.add_function(wrap_pyfunction!(valsort, m)?)?;
    m.add_function(wrap_pyfunction!(cores, m)?)?;
    m.add_function(wrap_pyfunction!(spec::table_keys, m)?)?;
    m.add_function(wrap_pyfunction!(spec::table_files, m)?)?;
    m.add_function(wrap_pyfunction!(spec::parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    Ok(())
}

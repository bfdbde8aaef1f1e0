//! The stages of a sort across a cluster (`oxsort.ray`), each run inside one task on one node:
//! PyO3 glue over the job layer's [`oxsort_job::cluster`], which holds the work. Records never
//! leave Rust, only keys (for the splitters) and summaries reach Python.
//!
//! ```text
//!  sample  input i ──K keys at seeded random records──▶ (key, i, position)    driver: R-1 splitters
//!  map     input i [start, end) ──oxsort_engine::sort (stable)──▶ sorted stream     over (key, input, position)
//!            ──cut as it is written──▶ R sorted bucket files, their counts and checksums
//!            (record x goes to the bucket of the splitters ≤ (key(x), i, pos(x)))
//!  reduce  bucket r of every map, in map order ──streamed k-way merge (stable)──▶ part-r
//!            (files read where they lie, other nodes' buckets fetched as chunks: `reduce`)
//! ```
//!
//! A record's position is the byte offset where it starts in its input: records of one input
//! are in position order exactly as in record-number order, and a position can be had for a
//! record found at a random byte offset of a file of lines, where its number cannot. Because
//! the splitters compare (key, input, position), the records of one key can be cut between
//! partitions, and since maps are numbered in (input, position) order and both the bucket sort
//! and the merge are stable, the partitions concatenated are the single-node sort's output.

use std::path::{Path, PathBuf};

use oxsort_engine::SortKey;
use oxsort_job::cluster::{self, ClusterError, MapResult, Splitter};
use oxsort_job::Resources;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{engine_error, BadInputError, Error, SpecError};
use crate::spec::{build_config, SpecArgs};

/// Sampled keys as Python gets them: (key, input index, position) each, and the input's size.
type Samples<'py> = (Vec<(Bound<'py, PyBytes>, u32, u64)>, u64);

/// The compiled key of a specification (no file is touched).
fn sort_key(spec: &SpecArgs) -> PyResult<SortKey> {
    let cfg = build_config(spec, vec![PathBuf::from("in")], PathBuf::from("out"), false, None)?;
    Ok(cfg.sort_key().clone())
}

/// An I/O error naming the file, as the matching `OSError`.
fn io_err(path: &Path, msg: String, e: &std::io::Error) -> PyErr {
    match e.raw_os_error() {
        Some(errno) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::errors::os_error::<BadInputError>(errno, msg, path)
        }
        Some(errno) => crate::errors::os_error::<Error>(errno, msg, path),
        None => Error::new_err(msg),
    }
}

/// A stage's error as Python sees it.
fn cluster_error(e: ClusterError) -> PyErr {
    let msg = e.to_string();
    match e {
        ClusterError::Io { ref path, ref source, .. } => io_err(path, msg, source),
        ClusterError::PartialRecord { .. } | ClusterError::Key { .. } => {
            BadInputError::new_err(msg)
        }
        ClusterError::Variable => SpecError::new_err(format!("{msg} (oxsort.sort)")),
        ClusterError::Engine(e) => engine_error(e),
        ClusterError::Shrank { .. } | ClusterError::Internal(_) => Error::new_err(msg),
    }
}

/// Reads the keys of `count` records at seeded random positions of input `input` (index
/// `index` among the job's inputs); returns `(key, index, position)` for each, and the size of
/// the input ([`cluster::sample`]).
#[pyfunction]
#[pyo3(signature = (input, index, count, seed, spec))]
pub(crate) fn sample<'py>(
    py: Python<'py>,
    input: PathBuf,
    index: u32,
    count: usize,
    seed: u64,
    spec: SpecArgs,
) -> PyResult<Samples<'py>> {
    let key = sort_key(&spec)?;
    let (keys, len) = py
        .allow_threads(|| cluster::sample(&key, &input, index, count, seed))
        .map_err(cluster_error)?;
    let keys = keys.into_iter().map(|(k, p)| (PyBytes::new(py, &k), index, p)).collect();
    Ok((keys, len))
}

/// The map stage ([`cluster::map`]): the records of `input` (index `index`) that start in
/// `range`, sorted and cut into `splitters.len() + 1` sorted buckets `dir/bucket-NNNNN`.
#[pyfunction]
#[pyo3(signature = (input, index, range, splitters, spec, dir))]
pub(crate) fn map(
    py: Python<'_>,
    input: PathBuf,
    index: u32,
    range: (u64, u64),
    splitters: Vec<Splitter>,
    spec: SpecArgs,
    dir: PathBuf,
) -> PyResult<MapResult> {
    let cfg = build_config(&spec, vec![PathBuf::from("in")], PathBuf::from("out"), false, None)?;
    let resources =
        Resources { memory: spec.memory, threads: spec.threads, ..Resources::default() };
    py.allow_threads(|| {
        cluster::map(cfg.spec(), &resources, &input, index, range, &splitters, &dir)
    })
    .map_err(cluster_error)
}

/// Whether a specification can be sorted across partitions. INREC, OUTREC and SUM cannot:
/// the maps route records by the key of the record as read, and the reduce merges the
/// records its buckets hold, so a record reshaped or summed in a bucket would be keyed and
/// merged as another record. (`unique` can: see `reduce`.) Returns whether the sort keeps
/// only the first record of each key (`unique`, `-u`, `SUM FIELDS=NONE`).
#[pyfunction]
pub(crate) fn check_cluster_spec(spec: SpecArgs) -> PyResult<bool> {
    let cfg = build_config(&spec, vec![PathBuf::from("in")], PathBuf::from("out"), false, None)?;
    let s = cfg.spec();
    let refused = if s.inrec.is_some() {
        Some("INREC")
    } else if s.outrec.is_some() {
        Some("OUTREC")
    } else if s.sum.is_some() {
        Some("SUM FIELDS=(...)")
    } else if s.skiprec.is_some() || s.stopaft.is_some() {
        // Records counted from the start of the concatenated inputs: no map sees that count.
        Some("OPTION SKIPREC/STOPAFT")
    } else if s.layout.variable_max().is_some() {
        // A map's byte range cannot be cut on record boundaries without walking the RDWs
        // from the file's start.
        Some("RDW-prefixed records (RECORD TYPE=V)")
    } else {
        None
    };
    if let Some(what) = refused {
        return Err(SpecError::new_err(format!(
            "{what} is not supported across partitions: sort on one node (oxsort.sort), or \
             reshape the records before or after the sort"
        )));
    }
    Ok(s.unique)
}

/// The size of a specification's fixed records (None for delimited records).
#[pyfunction]
pub(crate) fn record_size(spec: SpecArgs) -> PyResult<Option<usize>> {
    Ok(sort_key(&spec)?.record_size())
}

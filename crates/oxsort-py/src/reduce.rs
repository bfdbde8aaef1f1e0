//! The reduce stage of a sort across a cluster: bucket r of every map, read as streams into
//! one stable k-way merge that writes output partition r. A record crosses the disk twice
//! here, as in the output phase of a single-node sort: read from its bucket, written to the
//! partition.
//!
//! ```text
//!  bucket of map 0 ─ file on this node (or a shared file system) ─┐  oxsort_engine::merge_sources:
//!  bucket of map 1 ─ chunks fetched from its node by Python ──────┤  loser tree by (key, map),
//!  ...                                                            │  verified, written under a
//!  bucket of map M ───────────────────────────────────────────────┘  temp name, renamed ─▶ part-r
//! ```
//!
//! Each bucket is sorted and stable, and maps are numbered in (input, position) order, so
//! merging by (whole key, map index) gives the single-node sort's order: that is the engine
//! merge's "lower source wins" tie. Every bucket is checked to be in order as it is read; the
//! records written and dropped are summed into valsort's checksum for the driver's check
//! against the maps' summaries.
//!
//! With `unique`, the first record of each key is kept: within a bucket the map's sort kept
//! it, across buckets the merge keeps the one of the lowest map, and across partitions the
//! driver passes the key that an earlier partition already holds (`drop_key`), whose records
//! this partition then drops.

use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use oxsort_engine::{checksum_hex, EngineError, MergeSourcesOptions, SortedSource};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyIterator};

use crate::errors::{engine_error, BadInputError, DisorderError};
use crate::spec::{build_config, SpecArgs};

/// The smallest read buffer of a bucket, whatever the memory budget.
const MIN_READ_BUFFER: usize = 64 << 10;

/// What a merge returns: records written, their checksum, records dropped as duplicates, their
/// checksum, and the whole keys of the first and last records written (None when empty).
type MergeResult<'py> =
    (u64, String, u64, String, Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>);

/// The first exception a bucket's iterator raised, raised again as it was when it stops the
/// merge (a failed fetch, an interrupt).
type Raised = Arc<Mutex<Option<PyErr>>>;

/// A Python iterator of `bytes` chunks (a bucket fetched from its node) as a byte stream; the
/// GIL is taken for each chunk.
struct Chunks {
    it: Py<PyIterator>,
    chunk: Vec<u8>,
    pos: usize,
    raised: Raised,
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pos == self.chunk.len() {
            let next = Python::with_gil(|py| -> PyResult<Option<Vec<u8>>> {
                match self.it.bind(py).clone().next() {
                    None => Ok(None),
                    Some(Ok(b)) => Ok(Some(b.extract::<Vec<u8>>()?)),
                    Some(Err(e)) => Err(e),
                }
            })
            .map_err(|e| {
                let text = e.to_string();
                self.raised.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                std::io::Error::other(text)
            })?;
            match next {
                Some(c) => (self.chunk, self.pos) = (c, 0),
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// The reduce stage's words for the engine's errors about a bucket.
fn reduce_error(e: EngineError) -> PyErr {
    match e {
        EngineError::Unordered { path, record } => DisorderError::new_err(format!(
            "{}: record {record} is out of key order",
            path.display()
        )),
        EngineError::Data(m) => BadInputError::new_err(m),
        EngineError::Io(oxsort_io::IoError::Open { path, source }) => BadInputError::new_err(
            format!("bucket {}: cannot open: {}", path.display(), oxsort_io::os_message(&source)),
        ),
        e => engine_error(e),
    }
}

/// The reduce stage: merges `sources` (bucket r of every map, in map order) into `output`.
/// A source is `(name, None)` for a bucket file at path `name` that this node can read, or
/// `(name, iterator)` for a bucket whose bytes an iterator of `bytes` yields (`name` then only
/// names it in messages). `buffer`: bytes read at a time from each bucket. `drop_key`: under
/// `unique`, the whole key whose first record an earlier partition holds. The output is
/// written under a temp name and renamed when complete; on an error nothing is left.
#[pyfunction]
#[pyo3(signature = (sources, output, spec, buffer, drop_key=None))]
pub(crate) fn merge_buckets<'py>(
    py: Python<'py>,
    sources: Vec<(String, Option<Bound<'py, PyAny>>)>,
    output: PathBuf,
    spec: SpecArgs,
    buffer: usize,
    drop_key: Option<Vec<u8>>,
) -> PyResult<MergeResult<'py>> {
    let cfg = build_config(&spec, vec![PathBuf::from("in")], output.clone(), true, None)?;
    let key = cfg.sort_key().clone();
    let opts = MergeSourcesOptions {
        block: buffer.max(MIN_READ_BUFFER),
        unique: cfg.spec().unique,
        after_key: drop_key,
        ..MergeSourcesOptions::default()
    };
    let raised: Raised = Arc::default();
    let mut streams = Vec::with_capacity(sources.len());
    for (name, it) in sources {
        let s = match it {
            Some(obj) => {
                let it = obj.try_iter()?.unbind();
                let raised = raised.clone();
                SortedSource::stream(name.clone(), Chunks { it, chunk: Vec::new(), pos: 0, raised })
            }
            None => SortedSource::file(&name),
        };
        streams.push(s.named(format!("bucket {name}")));
    }
    let m = py
        .allow_threads(|| oxsort_engine::merge_sources(streams, &output, &key, &opts))
        .map_err(|e| {
            let first = raised.lock().unwrap_or_else(|p| p.into_inner()).take();
            first.unwrap_or_else(|| reduce_error(e))
        })?;
    let edges = m.edge_keys.map(|(f, l)| (PyBytes::new(py, &f), PyBytes::new(py, &l)));
    Ok((m.records, checksum_hex(m.checksum), m.dropped, checksum_hex(m.dropped_checksum), edges))
}

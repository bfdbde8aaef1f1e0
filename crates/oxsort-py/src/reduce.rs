//! The reduce stage of a sort across a cluster: bucket r of every map, read as streams into
//! one stable k-way merge that writes output partition r. A record crosses the disk twice
//! here, as in the output phase of a single-node sort: read from its bucket, written to the
//! partition.
//!
//! ```text
//!  bucket of map 0 ─ file on this node (or a shared file system) ─┐
//!  bucket of map 1 ─ chunks fetched from its node by Python ──────┤ heap by (key, map) ─▶ writer
//!  ...                                                            │   thread ─▶ part-r.oxsort-tmp
//!  bucket of map M ───────────────────────────────────────────────┘   ─fsync, rename─▶ part-r
//! ```
//!
//! Each bucket is sorted and stable, and maps are numbered in (input, position) order, so
//! merging by (whole key, map index) gives the single-node sort's order. Every bucket is
//! checked to be in order as it is read; the records written and dropped are summed into
//! valsort's checksum for the driver's check against the maps' summaries.
//!
//! With `unique`, the first record of each key is kept: within a bucket the map's sort kept
//! it, across buckets the merge keeps the one of the lowest map, and across partitions the
//! driver passes the key that an earlier partition already holds (`drop_key`), whose records
//! this partition then drops.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use oxsort_engine::{checksum_hex, SortKey};
use oxsort_format::RecordLayout;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyIterator};

use crate::errors::{BadInputError, DisorderError, Error, OutOfSpaceError};
use crate::spec::{build_config, SpecArgs};

/// Bytes the merge hands to the writer thread at a time.
const WRITE_BLOCK: usize = 4 << 20;

/// Blocks queued for the writer thread (with the one being filled, the merge runs ahead of the
/// disk by this many blocks).
const WRITE_DEPTH: usize = 2;

/// The smallest read buffer of a bucket file, whatever the memory budget.
const MIN_READ_BUFFER: usize = 64 << 10;

/// What a merge returns: records written, their checksum, records dropped as duplicates, their
/// checksum, and the whole keys of the first and last records written (None when empty).
type MergeResult<'py> =
    (u64, String, u64, String, Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>);

/// Where a bucket's bytes come from.
enum Feed {
    /// A file this node can read (the bucket's own, on this node or a shared file system).
    File(File),
    /// A Python iterator of `bytes` chunks (fetched from the bucket's node), ended by
    /// `StopIteration`.
    Python(Py<PyIterator>),
}

/// One bucket being merged: a window of its bytes and the record at the front.
struct Stream {
    /// The bucket, for messages.
    name: String,
    feed: Feed,
    /// Bytes read and not yet consumed from `pos` on.
    data: Vec<u8>,
    pos: usize,
    /// The current record: `data[start..end]`.
    start: usize,
    end: usize,
    /// Its whole key, and the previous record's (for the order check).
    key: Vec<u8>,
    prev: Vec<u8>,
    records: u64,
    eof: bool,
    /// Bytes asked of a file per read.
    read_size: usize,
}

impl Stream {
    /// Reads more bytes after the unconsumed ones; false at the end of the bucket.
    fn refill(&mut self) -> PyResult<bool> {
        if self.eof {
            return Ok(false);
        }
        self.data.drain(..self.pos);
        self.pos = 0;
        match &mut self.feed {
            Feed::File(f) => {
                let have = self.data.len();
                self.data.resize(have + self.read_size, 0);
                let n = loop {
                    match f.read(&mut self.data[have..]) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            return Err(Error::new_err(format!("{}: cannot read: {e}", self.name)))
                        }
                    }
                };
                self.data.truncate(have + n);
                self.eof = n == 0;
            }
            Feed::Python(it) => {
                let chunk = Python::with_gil(|py| -> PyResult<Option<Vec<u8>>> {
                    match it.bind(py).clone().next() {
                        None => Ok(None),
                        Some(Ok(b)) => Ok(Some(b.extract::<Vec<u8>>()?)),
                        Some(Err(e)) => Err(e),
                    }
                })?;
                match chunk {
                    Some(c) => self.data.extend_from_slice(&c),
                    None => self.eof = true,
                }
            }
        }
        Ok(!self.eof)
    }

    /// Moves to the next record; false at the end of the bucket. Checks that the bucket holds
    /// whole records in key order.
    fn advance(&mut self, key: &SortKey) -> PyResult<bool> {
        let layout = key.layout();
        loop {
            let rest = &self.data[self.pos..];
            let len = match layout {
                RecordLayout::Fixed(r) => (rest.len() >= r).then_some(r),
                RecordLayout::Delimited(t) => memchr::memchr(t, rest).map(|i| i + 1),
                RecordLayout::Variable(_) => layout.first_len(rest),
            };
            if let Some(n) = len {
                self.start = self.pos;
                self.end = self.pos + n;
                self.pos = self.end;
                break;
            }
            if !self.refill()? {
                if self.pos < self.data.len() {
                    return Err(BadInputError::new_err(format!(
                        "{}: ends inside a record ({} bytes after record {})",
                        self.name,
                        self.data.len() - self.pos,
                        self.records
                    )));
                }
                return Ok(false);
            }
        }
        std::mem::swap(&mut self.key, &mut self.prev);
        key.full_key(&self.data[self.start..self.end], &mut self.key);
        if self.records > 0 && self.key < self.prev {
            return Err(DisorderError::new_err(format!(
                "{}: record {} is out of key order",
                self.name,
                self.records + 1
            )));
        }
        self.records += 1;
        Ok(true)
    }

    fn record(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }
}

/// Whether stream `a`'s record comes before stream `b`'s: by whole key, then by map.
fn before(s: &[Stream], a: usize, b: usize) -> bool {
    (s[a].key.as_slice(), a) < (s[b].key.as_slice(), b)
}

/// Restores the heap order below `i` (a min-heap of stream indices by [`before`]).
fn sift_down(heap: &mut [usize], streams: &[Stream], mut i: usize) {
    loop {
        let l = 2 * i + 1;
        if l >= heap.len() {
            return;
        }
        let r = l + 1;
        let c = if r < heap.len() && before(streams, heap[r], heap[l]) { r } else { l };
        if !before(streams, heap[c], heap[i]) {
            return;
        }
        heap.swap(c, i);
        i = c;
    }
}

/// The writer thread: writes the blocks it receives to `file` in order, hands each back for
/// reuse, and syncs the file at the end.
fn writer(
    mut file: File,
    path: PathBuf,
    blocks: Receiver<Vec<u8>>,
    spare: SyncSender<Vec<u8>>,
) -> PyResult<()> {
    let mut offset = 0u64;
    for mut b in blocks {
        file.write_all(&b).map_err(|e| write_error(&path, offset, e))?;
        offset += b.len() as u64;
        b.clear();
        let _ = spare.try_send(b);
    }
    file.sync_all().map_err(|e| write_error(&path, offset, e))
}

/// A failed write of the partition: [`OutOfSpaceError`] when the disk (or quota) is full.
fn write_error(path: &Path, offset: u64, e: std::io::Error) -> PyErr {
    let e = oxsort_io::IoError::write(path, offset, e);
    if e.is_no_space() {
        OutOfSpaceError::new_err(e.to_string())
    } else {
        Error::new_err(e.to_string())
    }
}

/// Counts of a merge: (records, checksum) written and dropped, and the edge keys.
struct Tally {
    written: (u64, u128),
    dropped: (u64, u128),
    first: Option<Vec<u8>>,
    last: Vec<u8>,
}

/// Merges `streams` into `out` (a file being written by the writer thread behind `tx`).
fn merge(
    streams: &mut [Stream],
    key: &SortKey,
    unique: bool,
    drop_key: Option<Vec<u8>>,
    tx: &SyncSender<Vec<u8>>,
    spare: &Receiver<Vec<u8>>,
) -> PyResult<Tally> {
    let mut heap = Vec::with_capacity(streams.len());
    for (i, s) in streams.iter_mut().enumerate() {
        if s.advance(key)? {
            heap.push(i);
        }
    }
    for i in (0..heap.len() / 2).rev() {
        sift_down(&mut heap, streams, i);
    }
    let mut t = Tally { written: (0, 0), dropped: (0, 0), first: None, last: Vec::new() };
    // The key of the last record kept: under `unique`, a record of the same key is dropped.
    let mut have_last = drop_key.is_some();
    let mut last = drop_key.unwrap_or_default();
    let mut block = Vec::with_capacity(WRITE_BLOCK);
    let send = |b: Vec<u8>| {
        tx.send(b).map_err(|_| Error::new_err("internal error: the partition writer stopped"))
    };
    while let Some(&w) = heap.first() {
        let s = &streams[w];
        let rec = s.record();
        let crc = u128::from(crc32fast::hash(rec));
        if unique && have_last && s.key == last {
            t.dropped.0 += 1;
            t.dropped.1 += crc;
        } else {
            if block.len() + rec.len() > WRITE_BLOCK && !block.is_empty() {
                let next = spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(WRITE_BLOCK));
                send(std::mem::replace(&mut block, next))?;
            }
            block.extend_from_slice(rec);
            t.written.0 += 1;
            t.written.1 += crc;
            if t.first.is_none() {
                t.first = Some(s.key.clone());
            }
            last.clear();
            last.extend_from_slice(&s.key);
            have_last = true;
        }
        if streams[w].advance(key)? {
            sift_down(&mut heap, streams, 0);
        } else {
            heap.swap_remove(0);
            sift_down(&mut heap, streams, 0);
        }
    }
    if !block.is_empty() {
        send(block)?;
    }
    if t.written.0 > 0 {
        t.last = last;
    }
    Ok(t)
}

/// The temp name a partition is written under until it is complete.
fn temp_name(output: &Path) -> PathBuf {
    let mut name = output.file_name().unwrap_or_default().to_os_string();
    name.push(".oxsort-tmp");
    output.with_file_name(name)
}

/// The reduce stage: merges `sources` (bucket r of every map, in map order) into `output`.
/// A source is `(name, None)` for a bucket file at path `name` that this node can read, or
/// `(name, iterator)` for a bucket whose bytes an iterator of `bytes` yields (`name` then only
/// names it in messages). `buffer`: bytes read at a time from each file. `drop_key`: under
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
    let unique = cfg.spec().unique;
    let read_size = buffer.max(MIN_READ_BUFFER);
    let mut streams = Vec::with_capacity(sources.len());
    for (name, it) in sources {
        let feed =
            match it {
                Some(obj) => Feed::Python(obj.try_iter()?.unbind()),
                None => Feed::File(File::open(&name).map_err(|e| {
                    BadInputError::new_err(format!("bucket {name}: cannot open: {e}"))
                })?),
            };
        streams.push(Stream {
            name: format!("bucket {name}"),
            feed,
            data: Vec::new(),
            pos: 0,
            start: 0,
            end: 0,
            key: Vec::new(),
            prev: Vec::new(),
            records: 0,
            eof: false,
            read_size,
        });
    }
    let tmp = temp_name(&output);
    let t = py.allow_threads(|| -> PyResult<Tally> {
        let file = File::create(&tmp)
            .map_err(|e| Error::new_err(format!("{}: cannot create: {e}", tmp.display())))?;
        let (tx, rx) = sync_channel::<Vec<u8>>(WRITE_DEPTH);
        let (spare_tx, spare_rx) = sync_channel::<Vec<u8>>(WRITE_DEPTH + 1);
        let path = tmp.clone();
        let handle = std::thread::Builder::new()
            .name("oxsort-reduce-writer".into())
            .spawn(move || writer(file, path, rx, spare_tx))
            .map_err(|e| Error::new_err(format!("cannot start the writer thread: {e}")))?;
        let merged = merge(&mut streams, &key, unique, drop_key, &tx, &spare_rx);
        drop(tx);
        let written = handle
            .join()
            .map_err(|_| Error::new_err("internal error: the partition writer panicked"))?;
        // A writer that failed stops the merge too: its error is the cause.
        written?;
        let t = merged?;
        std::fs::rename(&tmp, &output).map_err(|e| {
            Error::new_err(format!("{}: cannot rename to {}: {e}", tmp.display(), output.display()))
        })?;
        Ok(t)
    });
    let t = match t {
        Ok(t) => t,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let edges = t.first.map(|f| (PyBytes::new(py, &f), PyBytes::new(py, &t.last)));
    Ok((t.written.0, checksum_hex(t.written.1), t.dropped.0, checksum_hex(t.dropped.1), edges))
}

//! The stages of a sort across a cluster (`oxsort.ray`), each run inside one task on one node;
//! records never leave Rust, only keys (for the splitters) and summaries reach Python.
//!
//! ```text
//!  sample  input i ──K keys at seeded random records──▶ (key, i, position)    driver: R-1 splitters
//!  map     input i [start, end) ──one scan──▶ R unsorted bucket files         over (key, input, position)
//!            (record x goes to the bucket of the splitters ≤ (key(x), i, pos(x)))
//!          each bucket ──oxsort_engine::sort (stable)──▶ sorted bucket r, its count and checksum
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

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use oxsort_engine::{checksum_hex, SortKey, SortStats};
use oxsort_format::RecordLayout;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{engine_error, BadInputError, Error, SpecError};
use crate::spec::{build_config, SpecArgs};

/// Bytes read per call while scanning an input (large enough that a scan runs at the disk's
/// sequential speed, small enough to hold per task).
const SCAN_CHUNK: usize = 8 << 20;

/// Write buffer of each unsorted bucket file during the map's scan (R of them are open at
/// once), at most; with many buckets a quarter of the memory budget is shared by them.
const BUCKET_BUFFER: usize = 256 << 10;

/// The smallest write buffer of an unsorted bucket file, whatever the memory budget.
const MIN_BUCKET_BUFFER: usize = 16 << 10;

/// Bytes read at a time while looking for the start or end of a line at a random offset.
const PROBE: usize = 64 << 10;

/// A splitter: (whole key as compared, input index, position).
type Splitter = (Vec<u8>, u32, u64);

/// Sampled keys as Python gets them: (key, input index, position) each, and the input's size.
type Samples<'py> = (Vec<(Bound<'py, PyBytes>, u32, u64)>, u64);

/// The compiled key of a specification (no file is touched).
fn sort_key(spec: &SpecArgs) -> PyResult<SortKey> {
    let cfg = build_config(spec, vec![PathBuf::from("in")], PathBuf::from("out"), false, None)?;
    Ok(cfg.sort_key().clone())
}

/// RDW-prefixed records in a stage across partitions ([`check_cluster_spec`] refuses them
/// first).
fn variable_refused() -> PyErr {
    SpecError::new_err(
        "RDW-prefixed records (RECORD TYPE=V) are not supported across partitions: sort on one \
         node (oxsort.sort)",
    )
}

/// An I/O error naming the file.
fn io_err(path: &Path, what: &str, e: std::io::Error) -> PyErr {
    let msg = format!("{}: {what}: {}", path.display(), oxsort_io::os_message(&e));
    match e.raw_os_error() {
        Some(errno) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::errors::os_error::<BadInputError>(errno, msg, path)
        }
        Some(errno) => crate::errors::os_error::<Error>(errno, msg, path),
        None => Error::new_err(msg),
    }
}

/// Opens an input and checks that fixed records fill it whole; returns it and its size.
fn open_input(path: &Path, layout: RecordLayout) -> PyResult<(File, u64)> {
    let f = File::open(path).map_err(|e| io_err(path, "cannot open", e))?;
    let len = f.metadata().map_err(|e| io_err(path, "cannot stat", e))?.len();
    if let Some(r) = layout.fixed_size() {
        if len % r as u64 != 0 {
            return Err(BadInputError::new_err(format!(
                "{}: {len} bytes is not a whole number of {r}-byte records ({} left over)",
                path.display(),
                match len % r as u64 {
                    1 => "1 byte".to_string(),
                    n => format!("{n} bytes"),
                }
            )));
        }
    }
    Ok((f, len))
}

/// Reads up to `buf.len()` bytes at `offset`; returns how many (fewer only at the end).
fn read_at(f: &mut File, path: &Path, offset: u64, buf: &mut [u8]) -> PyResult<usize> {
    f.seek(SeekFrom::Start(offset)).map_err(|e| io_err(path, "cannot seek", e))?;
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(path, "cannot read", e)),
        }
    }
    Ok(n)
}

/// The offset of the first record of a file of `term`-delimited records that starts at or
/// after `offset` (`len` when none does).
fn next_line_start(f: &mut File, path: &Path, term: u8, offset: u64, len: u64) -> PyResult<u64> {
    if offset == 0 {
        return Ok(0);
    }
    // A record starts at `offset` when the byte before it is a terminator.
    let mut at = offset - 1;
    let mut buf = vec![0u8; PROBE];
    while at < len {
        let n = read_at(f, path, at, &mut buf)?;
        if let Some(i) = memchr::memchr(term, &buf[..n]) {
            return Ok(at + i as u64 + 1);
        }
        at += n as u64;
    }
    Ok(len)
}

/// The record that starts at `start`, with its terminator (added when the file's last record
/// lacks one, as the engine adds it).
fn line_at(f: &mut File, path: &Path, term: u8, start: u64) -> PyResult<Vec<u8>> {
    let mut rec = Vec::new();
    let mut buf = vec![0u8; PROBE];
    let mut at = start;
    loop {
        let n = read_at(f, path, at, &mut buf)?;
        if let Some(i) = memchr::memchr(term, &buf[..n]) {
            rec.extend_from_slice(&buf[..=i]);
            return Ok(rec);
        }
        rec.extend_from_slice(&buf[..n]);
        if n < buf.len() {
            rec.push(term);
            return Ok(rec);
        }
        at += n as u64;
    }
}

/// splitmix64: a small, seeded generator of the sample positions (its constants are the
/// published ones of Steele, Lea and Flood's SplitMix).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0); the bias of the modulo is below 2^-40 for any file size.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The whole key of `rec` as compared, or the error of a record whose key cannot be built.
fn key_of(
    key: &SortKey,
    rec: &[u8],
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> Result<(), oxsort_format::KeyError> {
    key.full_key(rec, out);
    if out.is_empty() && key.builds_keys() {
        // An empty key is either a real one or a record the key cannot be built from.
        key.prefix(rec, scratch)?;
    }
    Ok(())
}

/// A key error naming the input and the record's byte position.
fn key_err(path: &Path, pos: u64, e: oxsort_format::KeyError) -> PyErr {
    BadInputError::new_err(format!("{}: the record at byte {pos}: {e}", path.display()))
}

/// Reads the keys of `count` records at seeded random positions of input `input` (index
/// `index` among the job's inputs); returns `(key, index, position)` for each, and the size of
/// the input. Fixed records are drawn uniformly; for delimited records a random byte is drawn
/// and the record starting at or after it is taken.
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
    let (keys, len) = py.allow_threads(|| -> PyResult<_> {
        let layout = key.layout();
        let (mut f, len) = open_input(&input, layout)?;
        let mut rng = SplitMix(seed ^ u64::from(index).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut out = Vec::with_capacity(count);
        let (mut k, mut scratch) = (Vec::new(), Vec::new());
        if len == 0 {
            return Ok((out, len));
        }
        for _ in 0..count {
            let (pos, rec) = match layout {
                RecordLayout::Variable(_) => return Err(variable_refused()),
                RecordLayout::Fixed(r) => {
                    let pos = rng.below(len / r as u64) * r as u64;
                    let mut rec = vec![0u8; r];
                    read_at(&mut f, &input, pos, &mut rec)?;
                    (pos, rec)
                }
                RecordLayout::Delimited(t) => {
                    let mut pos = next_line_start(&mut f, &input, t, rng.below(len), len)?;
                    if pos >= len {
                        pos = 0;
                    }
                    (pos, line_at(&mut f, &input, t, pos)?)
                }
            };
            key_of(&key, &rec, &mut k, &mut scratch).map_err(|e| key_err(&input, pos, e))?;
            out.push((k.clone(), pos));
        }
        Ok((out, len))
    })?;
    let keys = keys.into_iter().map(|(k, p)| (PyBytes::new(py, &k), index, p)).collect();
    Ok((keys, len))
}

/// Calls `f(position, record)` for every record of `path` that starts in `start..end`, a
/// delimited record read whole even where it runs past `end`, and given a terminator when the
/// file's last record lacks one.
fn scan(
    path: &Path,
    layout: RecordLayout,
    start: u64,
    end: u64,
    mut f: impl FnMut(u64, &[u8]) -> PyResult<()>,
) -> PyResult<()> {
    let (mut file, len) = open_input(path, layout)?;
    let end = end.min(len);
    match layout {
        RecordLayout::Variable(_) => return Err(variable_refused()),
        RecordLayout::Fixed(r) => {
            let r64 = r as u64;
            if start % r64 != 0 || end % r64 != 0 {
                return Err(Error::new_err(format!(
                    "internal error: range {start}..{end} of {} is not on {r}-byte records",
                    path.display()
                )));
            }
            let mut buf = vec![0u8; (SCAN_CHUNK / r).max(1) * r];
            let mut at = start;
            while at < end {
                let want = ((end - at) as usize).min(buf.len());
                let n = read_at(&mut file, path, at, &mut buf[..want])?;
                if n < want {
                    return Err(Error::new_err(format!(
                        "{}: the file shrank while it was read (at byte {})",
                        path.display(),
                        at + n as u64
                    )));
                }
                for (i, rec) in buf[..n].chunks_exact(r).enumerate() {
                    f(at + (i * r) as u64, rec)?;
                }
                at += n as u64;
            }
        }
        RecordLayout::Delimited(t) => {
            let first = next_line_start(&mut file, path, t, start, len)?;
            let mut buf: Vec<u8> = Vec::with_capacity(SCAN_CHUNK);
            let mut base = first; // file offset of buf[0]
            let mut at = first; // file offset of the next byte to read
            let mut chunk = vec![0u8; SCAN_CHUNK];
            'outer: loop {
                let n = if at < len { read_at(&mut file, path, at, &mut chunk)? } else { 0 };
                at += n as u64;
                buf.extend_from_slice(&chunk[..n]);
                let mut i = 0;
                while let Some(j) = memchr::memchr(t, &buf[i..]) {
                    let pos = base + i as u64;
                    if pos >= end {
                        break 'outer;
                    }
                    f(pos, &buf[i..=i + j])?;
                    i += j + 1;
                }
                buf.drain(..i);
                base += i as u64;
                if n == 0 {
                    if !buf.is_empty() && base < end {
                        buf.push(t);
                        f(base, &buf)?;
                    }
                    break;
                }
            }
        }
    }
    Ok(())
}

/// The summary of one sorted bucket (or output partition).
fn summary(stats: &SortStats) -> (u64, String, u64, String) {
    (
        stats.records_written,
        stats.checksum.clone(),
        stats.dropped_by_filter + stats.dropped_duplicates,
        stats.dropped_checksum.clone(),
    )
}

/// What a map returns: records read, their checksum (hex), per bucket its path, records,
/// checksum, records dropped (by INCLUDE/OMIT or as duplicates) and their checksum, and per
/// splitter whether a record of the splitter's key went below it (into an earlier bucket).
type MapResult = (u64, String, Vec<(PathBuf, u64, String, u64, String)>, Vec<bool>);

/// The map stage: the records of `input` (index `index`) that start in `range` (bytes) go to
/// `splitters.len() + 1` buckets by (key, index, position), each bucket then sorted by the
/// engine (stable) into `dir/bucket-NNNNN` (temp files in `dir`). Under `unique` the reduce
/// of the partition after splitter j drops the records of its key when any map saw one below
/// it (an earlier partition then keeps the first): the map says which splitters that is.
#[pyfunction]
#[pyo3(signature = (input, index, range, splitters, spec, dir))]
pub(crate) fn map(
    py: Python<'_>,
    input: PathBuf,
    index: u32,
    range: (u64, u64),
    splitters: Vec<Splitter>,
    mut spec: SpecArgs,
    dir: PathBuf,
) -> PyResult<MapResult> {
    if !splitters.windows(2).all(|w| w[0] <= w[1]) {
        return Err(Error::new_err("internal error: the splitters are not in order"));
    }
    let key = sort_key(&spec)?;
    spec.temp_dirs = vec![dir.clone()];
    spec.resume = false;
    py.allow_threads(|| -> PyResult<MapResult> {
        let buckets = splitters.len() + 1;
        let unsorted: Vec<PathBuf> =
            (0..buckets).map(|r| dir.join(format!("unsorted-{r:05}"))).collect();
        let mut writers = Vec::with_capacity(buckets);
        let share = spec.memory.map_or(usize::MAX, |m| (m / 4 / buckets as u64) as usize);
        let buffer = share.clamp(MIN_BUCKET_BUFFER, BUCKET_BUFFER);
        for p in &unsorted {
            let f = File::create(p).map_err(|e| io_err(p, "cannot create", e))?;
            writers.push(BufWriter::with_capacity(buffer, f));
        }
        let (mut records, mut checksum) = (0u64, 0u128);
        let mut below = vec![false; splitters.len()];
        let (mut k, mut scratch) = (Vec::new(), Vec::new());
        scan(&input, key.layout(), range.0, range.1, |pos, rec| {
            key_of(&key, rec, &mut k, &mut scratch).map_err(|e| key_err(&input, pos, e))?;
            let b = splitters.partition_point(|(sk, si, sp)| {
                (sk.as_slice(), *si, *sp) <= (k.as_slice(), index, pos)
            });
            // Splitters of this key above the record: a record of their key is below them.
            for (j, (sk, _, _)) in splitters.iter().enumerate().skip(b) {
                if sk.as_slice() != k.as_slice() {
                    break;
                }
                below[j] = true;
            }
            records += 1;
            checksum += u128::from(crc32fast::hash(rec));
            writers[b].write_all(rec).map_err(|e| io_err(&unsorted[b], "cannot write", e))
        })?;
        for (w, p) in writers.into_iter().zip(&unsorted) {
            w.into_inner()
                .map_err(|e| io_err(p, "cannot write", e.into_error()))?
                .sync_all()
                .map_err(|e| io_err(p, "cannot sync", e))?;
        }
        let mut out = Vec::with_capacity(buckets);
        for (r, p) in unsorted.iter().enumerate() {
            let bucket = dir.join(format!("bucket-{r:05}"));
            let (n, c, d, dc) = sort_file(&spec, vec![p.clone()], &bucket, false)?;
            std::fs::remove_file(p).map_err(|e| io_err(p, "cannot remove", e))?;
            out.push((bucket, n, c, d, dc));
        }
        Ok((records, checksum_hex(checksum), out, below))
    })
}

/// Sorts (or, with `merge`, merges presorted) `inputs` into `output` with the engine; an
/// empty input makes an empty output without the engine.
fn sort_file(
    spec: &SpecArgs,
    inputs: Vec<PathBuf>,
    output: &Path,
    merge: bool,
) -> PyResult<(u64, String, u64, String)> {
    let mut empty = true;
    for p in &inputs {
        let len = std::fs::metadata(p).map_err(|e| io_err(p, "cannot stat", e))?.len();
        empty &= len == 0;
    }
    if empty {
        File::create(output).map_err(|e| io_err(output, "cannot create", e))?;
        return Ok((0, checksum_hex(0), 0, checksum_hex(0)));
    }
    let cfg = build_config(spec, inputs, output.to_path_buf(), merge, None)?;
    let stats = oxsort_engine::sort(&cfg).map_err(engine_error)?;
    Ok(summary(&stats))
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

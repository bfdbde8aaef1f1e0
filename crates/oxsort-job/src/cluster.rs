//! The stages of a sort across a cluster (Python's `oxsort.ray` drives them), each run inside
//! one task on one node; records never leave this layer, only keys (for the splitters) and
//! summaries reach the driver.
//!
//! ```text
//!  sample  input i ──K keys at seeded random records──▶ (key, i, position)    driver: R-1 splitters
//!  map     input i [start, end) ──oxsort_engine::sort (stable)──▶ sorted stream     over (key, input, position)
//!            ──cut as it is written──▶ R sorted bucket files, their counts and checksums
//!            (record x goes to the bucket of the splitters ≤ (key(x), i, pos(x)))
//!  reduce  bucket r of every map, in map order ──streamed k-way merge (stable)──▶ part-r
//!            (files read where they lie, other nodes' buckets fetched as chunks: the
//!            Python crate's `reduce`)
//! ```
//!
//! A record's position is the byte offset where it starts in its input: records of one input
//! are in position order exactly as in record-number order, and a position can be had for a
//! record found at a random byte offset of a file of lines, where its number cannot. Because
//! the splitters compare (key, input, position), the records of one key can be cut between
//! partitions, and since maps are numbered in (input, position) order and both the bucket sort
//! and the merge are stable, the partitions concatenated are the single-node sort's output.
//!
//! Each byte crosses the disk four times: the map reads it and writes it to its bucket, the
//! reduce reads it and writes it to its partition (and a map's range larger than its memory
//! budget adds the engine's runs).

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use oxsort_engine::SortStats;
use oxsort_engine::{
    checksum_hex, EngineError, Input, Output, SortConfig, SortKey, SortSpec, Stream,
};
use oxsort_format::RecordLayout;

use crate::{configure, Resources};

mod cut;

use cut::{Bucket, Cutter, Tie};

/// Bytes read per call while scanning an input (large enough that a scan runs at the disk's
/// sequential speed, small enough to hold per task).
const SCAN_CHUNK: usize = 8 << 20;

/// Bytes read at a time while looking for the start or end of a line at a random offset.
const PROBE: usize = 64 << 10;

/// A splitter: (whole key as compared, input index, position).
pub type Splitter = (Vec<u8>, u32, u64);

/// Sampled keys: `(key, position)` each, and the input's size.
pub type Samples = (Vec<(Vec<u8>, u64)>, u64);

/// Why a stage failed.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A file could not be opened, read, written or synced.
    #[error("{}: {what}: {}", path.display(), oxsort_io::os_message(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done (`cannot open`, ...).
        what: &'static str,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Fixed records do not fill the input whole.
    #[error("{}: {len} bytes is not a whole number of {record}-byte records ({} left over)", path.display(), bytes(len % *record as u64))]
    PartialRecord {
        /// The input.
        path: PathBuf,
        /// Its size.
        len: u64,
        /// The record length.
        record: usize,
    },
    /// A record whose key cannot be built.
    #[error("{}: the record at byte {pos}: {source}", path.display())]
    Key {
        /// The input.
        path: PathBuf,
        /// The record's byte position.
        pos: u64,
        /// Why.
        #[source]
        source: oxsort_format::KeyError,
    },
    /// RDW-prefixed records, which a byte range cannot be cut on.
    #[error(
        "RDW-prefixed records (RECORD TYPE=V) are not supported across partitions: sort on one \
         node"
    )]
    Variable,
    /// The input shrank while it was read.
    #[error("{}: the file shrank while it was read (at byte {at})", path.display())]
    Shrank {
        /// The input.
        path: PathBuf,
        /// Where.
        at: u64,
    },
    /// A stage was called against its contract (a range off record boundaries, splitters out
    /// of order).
    #[error("internal error: {0}")]
    Internal(String),
    /// A bucket's sort failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// "1 byte", "2 bytes".
fn bytes(n: u64) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

type Result<T> = std::result::Result<T, ClusterError>;

/// An I/O error naming the file.
fn io_err(path: &Path, what: &'static str, source: std::io::Error) -> ClusterError {
    ClusterError::Io { path: path.to_path_buf(), what, source }
}

/// Opens an input and checks that fixed records fill it whole; returns it and its size.
fn open_input(path: &Path, layout: RecordLayout) -> Result<(File, u64)> {
    let f = File::open(path).map_err(|e| io_err(path, "cannot open", e))?;
    let len = f.metadata().map_err(|e| io_err(path, "cannot stat", e))?.len();
    if let Some(r) = layout.fixed_size() {
        if len % r as u64 != 0 {
            return Err(ClusterError::PartialRecord { path: path.to_path_buf(), len, record: r });
        }
    }
    Ok((f, len))
}

/// Reads up to `buf.len()` bytes at `offset`; returns how many (fewer only at the end).
fn read_at(f: &mut File, path: &Path, offset: u64, buf: &mut [u8]) -> Result<usize> {
    f.seek(SeekFrom::Start(offset)).map_err(|e| io_err(path, "cannot seek", e))?;
    oxsort_io::read_full(f, buf).map_err(|e| io_err(path, "cannot read", e))
}

/// The offset of the first record of a file of `term`-delimited records that starts at or
/// after `offset` (`len` when none does).
fn next_line_start(f: &mut File, path: &Path, term: u8, offset: u64, len: u64) -> Result<u64> {
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
fn line_at(f: &mut File, path: &Path, term: u8, start: u64) -> Result<Vec<u8>> {
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
) -> std::result::Result<(), oxsort_format::KeyError> {
    key.full_key(rec, out);
    if out.is_empty() && key.builds_keys() {
        // An empty key is either a real one or a record the key cannot be built from.
        key.prefix(rec, scratch)?;
    }
    Ok(())
}

/// A key error naming the input and the record's byte position.
fn key_err(path: &Path, pos: u64, source: oxsort_format::KeyError) -> ClusterError {
    ClusterError::Key { path: path.to_path_buf(), pos, source }
}

/// Reads the keys of `count` records at seeded random positions of input `input` (index
/// `index` among the job's inputs); returns `(key, position)` for each, and the size of the
/// input. Fixed records are drawn uniformly; for delimited records a random byte is drawn and
/// the record starting at or after it is taken.
pub fn sample(key: &SortKey, input: &Path, index: u32, count: usize, seed: u64) -> Result<Samples> {
    let layout = key.layout();
    let (mut f, len) = open_input(input, layout)?;
    let mut rng = SplitMix(seed ^ u64::from(index).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut out = Vec::with_capacity(count);
    let (mut k, mut scratch) = (Vec::new(), Vec::new());
    if len == 0 {
        return Ok((out, len));
    }
    for _ in 0..count {
        let (pos, rec) = match layout {
            RecordLayout::Variable(_) => return Err(ClusterError::Variable),
            RecordLayout::Fixed(r) => {
                let pos = rng.below(len / r as u64) * r as u64;
                let mut rec = vec![0u8; r];
                read_at(&mut f, input, pos, &mut rec)?;
                (pos, rec)
            }
            RecordLayout::Delimited(t) => {
                let mut pos = next_line_start(&mut f, input, t, rng.below(len), len)?;
                if pos >= len {
                    pos = 0;
                }
                (pos, line_at(&mut f, input, t, pos)?)
            }
        };
        key_of(key, &rec, &mut k, &mut scratch).map_err(|e| key_err(input, pos, e))?;
        out.push((k.clone(), pos));
    }
    Ok((out, len))
}

/// Calls `f(position, record)` for every record of `path` that starts in `start..end`, a
/// delimited record read whole even where it runs past `end`, and given a terminator when the
/// file's last record lacks one.
fn scan(
    path: &Path,
    layout: RecordLayout,
    start: u64,
    end: u64,
    mut f: impl FnMut(u64, &[u8]) -> Result<()>,
) -> Result<()> {
    let (mut file, len) = open_input(path, layout)?;
    let end = end.min(len);
    match layout {
        RecordLayout::Variable(_) => return Err(ClusterError::Variable),
        RecordLayout::Fixed(r) => {
            let r64 = r as u64;
            if start % r64 != 0 || end % r64 != 0 {
                return Err(ClusterError::Internal(format!(
                    "range {start}..{end} of {} is not on {r}-byte records",
                    path.display()
                )));
            }
            let mut buf = vec![0u8; (SCAN_CHUNK / r).max(1) * r];
            let mut at = start;
            while at < end {
                let want = ((end - at) as usize).min(buf.len());
                let n = read_at(&mut file, path, at, &mut buf[..want])?;
                if n < want {
                    return Err(ClusterError::Shrank {
                        path: path.to_path_buf(),
                        at: at + n as u64,
                    });
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

/// One sorted bucket (or output partition): its records, their checksum (hex), the records
/// dropped (by INCLUDE/OMIT or as duplicates) and their checksum.
pub type Summary = (u64, String, u64, String);

/// The summary of one sorted bucket (or output partition).
pub fn summary(stats: &SortStats) -> Summary {
    (
        stats.records_written,
        stats.checksum.clone(),
        stats.dropped_by_filter + stats.dropped_duplicates,
        stats.dropped_checksum.clone(),
    )
}

/// What a map returns: records read, their checksum (hex), per bucket its path and summary,
/// and per splitter whether a record of the splitter's key went below it (into an earlier
/// bucket).
pub type MapResult = (u64, String, Vec<(PathBuf, u64, String, u64, String)>, Vec<bool>);

/// The map stage: the records of `input` (index `index`) that start in `range` (bytes) are
/// sorted by the engine (stable, with `spec` and `resources`, its temp files in `dir`), and the
/// sorted stream is cut by (key, index, position) at the splitters into `splitters.len() + 1`
/// sorted buckets `dir/bucket-NNNNN` as it is written: each byte is read once and written once
/// when the range fits the memory budget (the records before the position of a splitter cut
/// inside the range, a key sampled more than once, are read once more first: their ties are
/// counted). The engine reads the range itself. Under `unique` the reduce of the partition after
/// splitter j drops the records of its key when any map saw one below it (an earlier
/// partition then keeps the first): the map says which splitters that is.
pub fn map(
    spec: &SortSpec,
    resources: &Resources,
    input: &Path,
    index: u32,
    range: (u64, u64),
    splitters: &[Splitter],
    dir: &Path,
) -> Result<MapResult> {
    if !splitters.windows(2).all(|w| w[0] <= w[1]) {
        return Err(ClusterError::Internal("the splitters are not in order".into()));
    }
    let key = spec.compile().map_err(|e| ClusterError::Internal(format!("the spec: {e}")))?;
    if key.layout().variable_max().is_some() {
        return Err(ClusterError::Variable);
    }
    let (mut file, len) = open_input(input, key.layout())?;
    let (start, end) = (range.0.min(len), range.1.min(len));
    let ties: Vec<Tie> =
        splitters.iter().map(|&(_, si, sp)| tie_of(index, start, end, si, sp)).collect();
    let counting = ties.iter().any(|t| matches!(t, Tie::Count(_)));
    let cutter =
        Cutter::new(key.clone(), splitters.to_vec(), ties.clone(), dir, resources.io.clone());
    if start >= end {
        let (buckets, below) = cutter.finish()?;
        return Ok((0, checksum_hex(0), summaries(buckets, None), below));
    }
    let resources =
        Resources { temp_dirs: vec![dir.to_path_buf()], resume: false, ..resources.clone() };
    let name = format!("{} (bytes {start} to {end})", input.display());
    let out = Output::Stream(Stream::writer(cutter.handle(), name.clone()));
    // The records that start in the range, read by the engine itself (direct I/O, the plan
    // sized for them): from the first record boundary at or after either end.
    let (a, b) = match key.input_layout() {
        RecordLayout::Fixed(r) => {
            let r = r as u64;
            (start.div_ceil(r) * r, (end.div_ceil(r) * r).min(len))
        }
        RecordLayout::Delimited(t) => (
            next_line_start(&mut file, input, t, start, len)?,
            next_line_start(&mut file, input, t, end, len)?,
        ),
        RecordLayout::Variable(_) => return Err(ClusterError::Variable),
    };
    drop(file);
    if counting {
        // The records of each positioned splitter's key before its position, counted by a
        // scan of the range up to the last such position before the sort reads it.
        cutter.count_ties(&count_ties(&key, input, (a, b), splitters, &ties)?);
    }
    let range = (a > 0 || b < len).then_some((a, b));
    let sorted = sort_into(spec, &resources, Input::Path(input.to_path_buf()), out, range);
    let stats = match sorted {
        Ok(stats) => stats,
        Err(e) => return Err(cutter.take_error().unwrap_or(e)),
    };
    let (buckets, below) = cutter.finish()?;
    let (n, sum) = buckets.iter().fold((0u64, 0u128), |(n, c), b| (n + b.records, c + b.checksum));
    if n != stats.records_written || checksum_hex(sum) != stats.checksum {
        return Err(ClusterError::Internal(format!(
            "the buckets of {name} hold {n} records, checksum {}; the sort wrote {}, checksum {}",
            checksum_hex(sum),
            stats.records_written,
            stats.checksum
        )));
    }
    Ok((stats.records, stats.input_checksum.clone(), summaries(buckets, Some(&stats)), below))
}

/// How the records of splitter `(si, sp)`'s key in the map of input `index`, range
/// `start..end`, fall: all above it, all below it, or (its position inside the range) the ones
/// before its position below, which the feeder counts.
fn tie_of(index: u32, start: u64, end: u64, si: u32, sp: u64) -> Tie {
    match si.cmp(&index) {
        std::cmp::Ordering::Less => Tie::Above,
        std::cmp::Ordering::Greater => Tie::Below,
        std::cmp::Ordering::Equal if sp <= start => Tie::Above,
        std::cmp::Ordering::Equal if sp >= end => Tie::Below,
        std::cmp::Ordering::Equal => Tie::Count(0),
    }
}

/// Per splitter whose tie is counted (positioned inside the map's range, [`tie_of`]): how
/// many records of its key start in `range` of `input` before its position (`None` for the
/// others). Only the records before the last such position are read.
fn count_ties(
    keys: &SortKey,
    input: &Path,
    range: (u64, u64),
    splitters: &[Splitter],
    ties: &[Tie],
) -> Result<Vec<Option<u64>>> {
    let mut counts: Vec<Option<u64>> =
        ties.iter().map(|t| matches!(t, Tie::Count(_)).then_some(0)).collect();
    let until = splitters
        .iter()
        .zip(&counts)
        .filter(|(_, c)| c.is_some())
        .map(|((_, _, sp), _)| *sp)
        .max()
        .unwrap_or(0)
        .clamp(range.0, range.1);
    let (mut k, mut scratch) = (Vec::new(), Vec::new());
    scan(input, keys.layout(), range.0, until, |pos, rec| {
        key_of(keys, rec, &mut k, &mut scratch).map_err(|e| key_err(input, pos, e))?;
        let first = splitters.partition_point(|(sk, _, _)| sk.as_slice() < k.as_slice());
        for (j, (sk, _, sp)) in splitters.iter().enumerate().skip(first) {
            if sk.as_slice() != k.as_slice() {
                break;
            }
            if let Some(c) = counts[j].as_mut().filter(|_| pos < *sp) {
                *c += 1;
            }
        }
        Ok(())
    })?;
    Ok(counts)
}

/// Sorts `input` (bytes `range` of it, when given) into `out` with the engine.
fn sort_into(
    spec: &SortSpec,
    resources: &Resources,
    input: Input,
    out: Output,
    range: Option<(u64, u64)>,
) -> Result<SortStats> {
    let mut b = SortConfig::builder(vec![input], out).spec(spec.clone());
    if let Some((start, end)) = range {
        b = b.input_range(start, end);
    }
    Ok(oxsort_engine::sort(&configure(b, resources).build()?)?)
}

/// The buckets' summaries; the records the sort dropped (by INCLUDE/OMIT or as duplicates)
/// are counted with the first bucket (only their total is used).
fn summaries(
    buckets: Vec<Bucket>,
    stats: Option<&SortStats>,
) -> Vec<(PathBuf, u64, String, u64, String)> {
    let dropped = stats.map_or((0, checksum_hex(0)), |s| {
        (s.dropped_by_filter + s.dropped_duplicates, s.dropped_checksum.clone())
    });
    buckets
        .into_iter()
        .enumerate()
        .map(|(r, b)| {
            let (d, dc) = if r == 0 { dropped.clone() } else { (0, checksum_hex(0)) };
            (b.path, b.records, checksum_hex(b.checksum), d, dc)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_cuts_by_the_splitters_and_sorts_each_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.txt");
        std::fs::write(&input, "d\nb\na\nc\nb\n").unwrap();
        let spec = SortSpec { layout: RecordLayout::LINES, ..SortSpec::default() };
        let spec = SortSpec { key: Some(oxsort_lang::parse_fields("1,1,CH,A").unwrap()), ..spec };
        let key = spec.compile().unwrap();
        let (keys, len) = sample(&key, &input, 0, 4, 7).unwrap();
        assert_eq!((keys.len(), len), (4, 10));
        let splitters = vec![(b"b".to_vec(), 0, 2)];
        let res = Resources { threads: Some(1), ..Resources::default() };
        let (n, _, buckets, below) =
            map(&spec, &res, &input, 0, (0, len), &splitters, dir.path()).unwrap();
        assert_eq!(n, 5);
        assert_eq!(std::fs::read(&buckets[0].0).unwrap(), b"a\n");
        assert_eq!(std::fs::read(&buckets[1].0).unwrap(), b"b\nb\nc\nd\n");
        assert_eq!(below, [false]);
    }

    #[test]
    fn a_positioned_splitter_cuts_its_key_by_position_and_a_range_keeps_to_its_records() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.txt");
        // Records start at 0, 2, 4, 6, 8: b a b c b.
        std::fs::write(&input, "b\na\nb\nc\nb\n").unwrap();
        let spec = SortSpec { layout: RecordLayout::LINES, ..SortSpec::default() };
        let res = Resources { threads: Some(1), ..Resources::default() };
        let read = |buckets: &[(PathBuf, u64, String, u64, String)]| {
            buckets.iter().map(|b| std::fs::read(&b.0).unwrap()).collect::<Vec<_>>()
        };
        // The b at byte 4 splits: the b before it stays below, the two from it go above.
        let d1 = dir.path().join("m1");
        std::fs::create_dir(&d1).unwrap();
        let (n, _, buckets, below) =
            map(&spec, &res, &input, 0, (0, 10), &[(b"b".to_vec(), 0, 4)], &d1).unwrap();
        assert_eq!(n, 5);
        assert_eq!(read(&buckets), [b"a\nb\n".to_vec(), b"b\nb\nc\n".to_vec()]);
        assert_eq!(below, [true]);
        // A key-only splitter over the whole file: every b above it (the engine reads the file).
        let d2 = dir.path().join("m2");
        std::fs::create_dir(&d2).unwrap();
        let (_, _, buckets, below) =
            map(&spec, &res, &input, 0, (0, 10), &[(b"b".to_vec(), 0, 0)], &d2).unwrap();
        assert_eq!(read(&buckets), [b"a\n".to_vec(), b"b\nb\nb\nc\n".to_vec()]);
        assert_eq!(below, [false]);
        // Bytes 3 to 7: the records that start there (4 and 6); the splitter, of a later
        // input, is above every b of this one.
        let d3 = dir.path().join("m3");
        std::fs::create_dir(&d3).unwrap();
        let (n, _, buckets, below) =
            map(&spec, &res, &input, 0, (3, 7), &[(b"b".to_vec(), 1, 0)], &d3).unwrap();
        assert_eq!(n, 2);
        assert_eq!(read(&buckets), [b"b\n".to_vec(), b"c\n".to_vec()]);
        assert_eq!(below, [true]);
    }
}

//! The map's cutter: the sorted stream of one map's records, cut at the splitters into the
//! map's sorted bucket files as the engine writes it.
//!
//! ```text
//!  engine output (sorted, stable) ──▶ Cutter ──▶ bucket-00000 │ bucket-00001 │ ... │ bucket-R-1
//!                                       │          (each a slice of the stream: the buckets
//!                                       │           are written one after another, one open)
//!                                       └─ per record: its key against the next splitter
//! ```
//!
//! The stream is in key order, so bucket numbers only grow: a record goes to the current
//! bucket until a splitter at or below it is passed. A splitter `(key, input, position)` is
//! above the records of its key that come before `(input, position)`; since the stream keeps
//! the records of one key in input order, those are the first `below[j]` records of the key in
//! the stream: the map counts them while it reads ([`Tie`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use oxsort_engine::SortKey;
use oxsort_format::RecordLayout;
use oxsort_io::{DirectFile, IoError, IoOptions, WriteBehind};

use super::{io_err, key_of, ClusterError, Splitter};

/// Pieces of the open bucket file: the cut records are copied into aligned buffers of this
/// many bytes, each written behind as it fills (direct where the file system allows). Written
/// through the page cache instead, the kernel's copy into fresh cache pages was the map
/// stage's largest cost (21.8% of all samples over the map stage of `bench/ray_cluster.py`,
/// `bench/runs/2026-12-03b`).
const BUCKET_PIECE_BYTES: usize = 1 << 20;

/// Pieces of the open bucket file in flight at once.
const BUCKET_WRITE_DEPTH: usize = 4;

/// Bytes of records whose CRCs the cutter sums at once, right after their keys were read: a
/// stretch still in the core's cache. The sum is the interleaved kernel's
/// (`oxsort_kernels::crc32_sum`), where `crc32fast` record by record was 4.6% of all samples
/// over `bench/ray_cluster.py` (2026-12-03c); summing a whole piece afterwards would read the
/// engine's write (megabytes) from memory a second time.
const CRC_STRETCH_BYTES: usize = 64 << 10;

/// The bucket being written: its file (kept to sync it once written) and the writer behind.
struct OpenBucket {
    file: Arc<DirectFile>,
    writer: WriteBehind,
}

/// How many records of a splitter's key stay below it in this map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tie {
    /// None: the splitter is at or before the map's first record (its key's records all go
    /// above).
    Above,
    /// This many (the records of its key that start before its position in this map's range).
    Count(u64),
    /// All: the splitter is after the map's last record.
    Below,
}

/// One bucket written: its path, records and their checksum (the sum of their CRC32s).
#[derive(Debug)]
pub(crate) struct Bucket {
    pub(crate) path: PathBuf,
    pub(crate) records: u64,
    pub(crate) checksum: u128,
}

/// The cutter's state, shared by the writer the engine holds and the map that finishes it.
struct State {
    key: SortKey,
    splitters: Vec<Splitter>,
    /// Per splitter, the records of its key still to place below it.
    ties: Vec<Tie>,
    /// Per splitter, whether a record of its key went below it.
    below: Vec<bool>,
    dir: PathBuf,
    /// The buckets written so far; the last one is open.
    done: Vec<Bucket>,
    open: Option<OpenBucket>,
    /// How bucket files are written (direct I/O, io_uring).
    io: IoOptions,
    /// Bytes of a record cut by the end of the engine's last write.
    partial: Vec<u8>,
    k: Vec<u8>,
    scratch: Vec<u8>,
    /// Where each record of the stretch not yet summed ends (records of varying length: the
    /// cut found them once, the CRC kernel takes them from here).
    ends: Vec<usize>,
    /// The first error: the stream fails with a plain message, the map returns this one.
    failed: Option<ClusterError>,
}

/// The writer the engine's output goes to (one handle of the shared state).
pub(crate) struct Cutter(Arc<Mutex<State>>);

/// What a finished cut returns: the buckets in order, and per splitter whether a record of
/// its key went below it.
pub(crate) type Cut = (Vec<Bucket>, Vec<bool>);

/// The sum of the CRCs of the whole records of `data[from..to]`: records of `fixed` bytes, else
/// those ending at `ends` (taken, and cleared).
fn crc_sum(
    data: &[u8],
    from: usize,
    to: usize,
    fixed: Option<usize>,
    ends: &mut Vec<usize>,
) -> u128 {
    if let Some(r) = fixed {
        return oxsort_kernels::crc32_sum_fixed(&data[from..to], r);
    }
    let mut start = from;
    let sum = oxsort_kernels::crc32_sum(ends.iter().map(|&end| {
        let rec = &data[start..end];
        start = end;
        rec
    }));
    debug_assert_eq!(start, to);
    ends.clear();
    sum
}

/// The path of bucket `r` in `dir`.
pub(crate) fn bucket_path(dir: &Path, r: usize) -> PathBuf {
    dir.join(format!("bucket-{r:05}"))
}

impl Cutter {
    /// A cutter into `splitters.len() + 1` buckets in `dir`, with the map's ties, writing its
    /// files as `io` says.
    pub(crate) fn new(
        key: SortKey,
        splitters: Vec<Splitter>,
        ties: Vec<Tie>,
        dir: &Path,
        io: IoOptions,
    ) -> Self {
        let below = vec![false; splitters.len()];
        Cutter(Arc::new(Mutex::new(State {
            key,
            splitters,
            ties,
            below,
            dir: dir.to_path_buf(),
            done: Vec::new(),
            open: None,
            io,
            partial: Vec::new(),
            k: Vec::new(),
            scratch: Vec::new(),
            ends: Vec::new(),
            failed: None,
        })))
    }

    /// Another handle on the same state (the engine takes one as its output).
    pub(crate) fn handle(&self) -> Cutter {
        Cutter(Arc::clone(&self.0))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the ties the feeder counted (`Some(n)`: `n` records of the splitter's key before
    /// its position), before the engine's output can start: the engine writes nothing until
    /// its input, which the feeder closes after this, has ended.
    pub(crate) fn count_ties(&self, counts: &[Option<u64>]) {
        let mut s = self.state();
        for (t, c) in s.ties.iter_mut().zip(counts) {
            if let Some(n) = *c {
                *t = if n == 0 { Tie::Above } else { Tie::Count(n) };
            }
        }
    }

    /// The error that stopped the stream, if one did.
    pub(crate) fn take_error(&self) -> Option<ClusterError> {
        self.state().failed.take()
    }

    /// Closes the stream: every bucket written whole and synced (the empty ones created).
    pub(crate) fn finish(self) -> Result<Cut, ClusterError> {
        let mut s = self.state();
        if let Some(e) = s.failed.take() {
            return Err(e);
        }
        if !s.partial.is_empty() {
            return Err(ClusterError::Internal(format!(
                "the sorted stream ended inside a record ({} bytes)",
                s.partial.len()
            )));
        }
        let buckets = s.splitters.len() + 1;
        if s.done.is_empty() {
            s.open_next()?;
        }
        while s.done.len() < buckets {
            s.close_open()?;
            s.open_next()?;
        }
        s.close_open()?;
        let done = std::mem::take(&mut s.done);
        Ok((done, std::mem::take(&mut s.below)))
    }
}

impl State {
    /// Opens the next bucket.
    fn open_next(&mut self) -> Result<(), ClusterError> {
        let path = bucket_path(&self.dir, self.done.len());
        let file = Arc::new(
            DirectFile::create(&path, &self.io).map_err(|e| os_err(&path, "cannot create", &e))?,
        );
        let writer =
            WriteBehind::new(Arc::clone(&file), BUCKET_PIECE_BYTES, BUCKET_WRITE_DEPTH, &self.io)
                .map_err(|e| os_err(&path, "cannot write", &e))?;
        self.open = Some(OpenBucket { file, writer });
        self.done.push(Bucket { path, records: 0, checksum: 0 });
        Ok(())
    }

    /// Writes the rest of the open bucket, waits for its writes and syncs it.
    fn close_open(&mut self) -> Result<(), ClusterError> {
        let Some(OpenBucket { file, writer }) = self.open.take() else { return Ok(()) };
        let path = &self.done.last().expect("an open bucket is listed").path;
        writer.finish().map_err(|e| os_err(path, "cannot write", &e))?;
        file.sync().map_err(|e| os_err(path, "cannot sync", &e))
    }

    /// The bucket of the record whose key is `self.k`, at or after the current one; counts the
    /// record against the ties of the splitters of its key it stays below.
    fn place(&mut self) -> usize {
        let mut b = self.done.len() - 1;
        while let Some((sk, _, _)) = self.splitters.get(b) {
            let passed = match self.k.as_slice().cmp(sk.as_slice()) {
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Equal => self.ties[b] == Tie::Above,
            };
            if !passed {
                break;
            }
            b += 1;
        }
        for j in b..self.splitters.len() {
            if self.splitters[j].0 != self.k {
                break;
            }
            self.below[j] = true;
            if let Tie::Count(n) = self.ties[j] {
                self.ties[j] = if n <= 1 { Tie::Above } else { Tie::Count(n - 1) };
            }
        }
        b
    }

    /// Writes `data`, whole records, cutting it where the bucket changes.
    fn cut(&mut self, data: &[u8]) -> Result<(), ClusterError> {
        if self.done.is_empty() {
            self.open_next()?;
        }
        let layout = self.key.layout();
        let fixed = match layout {
            RecordLayout::Fixed(r) => Some(r),
            _ => None,
        };
        let mut from = 0; // start of the piece not yet written to the open bucket
        let mut at = 0;
        let mut summed = 0; // end of the records whose CRCs are in `checksum`
        let (mut records, mut checksum) = (0u64, 0u128);
        self.ends.clear();
        for rec in self.key.records(data) {
            key_of(&self.key, rec, &mut self.k, &mut self.scratch).map_err(|e| {
                ClusterError::Internal(format!("a sorted record's key cannot be built: {e}"))
            })?;
            let b = self.place();
            while self.done.len() - 1 < b {
                checksum += crc_sum(data, summed, at, fixed, &mut self.ends);
                self.write_piece(&data[from..at], records, checksum)?;
                (from, summed, records, checksum) = (at, at, 0, 0);
                self.close_open()?;
                self.open_next()?;
            }
            records += 1;
            at += rec.len();
            if fixed.is_none() {
                self.ends.push(at);
            }
            if at - summed >= CRC_STRETCH_BYTES {
                checksum += crc_sum(data, summed, at, fixed, &mut self.ends);
                summed = at;
            }
        }
        debug_assert!(at == data.len() || matches!(layout, RecordLayout::Delimited(_)));
        checksum += crc_sum(data, summed, at, fixed, &mut self.ends);
        self.write_piece(&data[from..at], records, checksum)
    }

    /// Appends a piece of `records` records, whose CRCs sum to `checksum`, to the open bucket.
    fn write_piece(
        &mut self,
        piece: &[u8],
        records: u64,
        checksum: u128,
    ) -> Result<(), ClusterError> {
        let last = self.done.last_mut().expect("a bucket is open");
        last.records += records;
        last.checksum += checksum;
        let open = self.open.as_mut().expect("a bucket is open");
        open.writer.write_all(piece).map_err(|e| {
            match e.get_ref().and_then(|inner| inner.downcast_ref::<IoError>()) {
                Some(io) => os_err(&last.path, "cannot write", io),
                None => io_err(&last.path, "cannot write", e),
            }
        })
    }

    /// Takes a write of the engine: the records it completes are cut; a record it cuts short
    /// waits for the next write.
    fn take(&mut self, buf: &[u8]) -> Result<(), ClusterError> {
        let whole = whole_records(self.key.layout(), &self.partial, buf);
        if self.partial.is_empty() {
            self.cut(&buf[..whole])?;
        } else {
            let mut joined = std::mem::take(&mut self.partial);
            joined.extend_from_slice(&buf[..whole]);
            self.cut(&joined)?;
        }
        self.partial.extend_from_slice(&buf[whole..]);
        Ok(())
    }
}

/// An error of the I/O layer as the cluster's, naming the file once: the operating system's
/// error alone (the I/O layer's message names the file too).
fn os_err(path: &Path, what: &'static str, e: &IoError) -> ClusterError {
    let source = match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code),
        None => std::io::Error::new(e.io_error().kind(), oxsort_io::os_message(e.io_error())),
    };
    io_err(path, what, source)
}

/// How many bytes of `buf` end the records that `partial` (a record cut short, or nothing)
/// starts: whole fixed records, or up to the last terminator.
fn whole_records(layout: RecordLayout, partial: &[u8], buf: &[u8]) -> usize {
    match layout {
        RecordLayout::Fixed(r) => {
            let total = partial.len() + buf.len();
            (total - total % r).saturating_sub(partial.len())
        }
        RecordLayout::Delimited(t) => memchr::memrchr(t, buf).map_or(0, |i| i + 1),
        // A map refuses RDW-prefixed records before a cutter is made.
        RecordLayout::Variable(_) => buf.len(),
    }
}

impl Write for Cutter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut s = self.state();
        if s.failed.is_some() {
            return Err(std::io::Error::other("a bucket could not be written"));
        }
        match s.take(buf) {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                let msg = e.to_string();
                s.failed = Some(e);
                Err(std::io::Error::other(msg))
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxsort_engine::SortSpec;

    fn lines_key() -> SortKey {
        SortSpec { layout: RecordLayout::LINES, ..SortSpec::default() }.compile().unwrap()
    }

    fn run(
        splitters: Vec<Splitter>,
        ties: Vec<Tie>,
        writes: &[&[u8]],
    ) -> (Vec<Vec<u8>>, Vec<bool>) {
        let dir = tempfile::tempdir().unwrap();
        let c = Cutter::new(lines_key(), splitters, ties, dir.path(), IoOptions::default());
        let mut h = c.handle();
        for w in writes {
            h.write_all(w).unwrap();
        }
        drop(h);
        let (buckets, below) = c.finish().unwrap();
        let bytes = buckets.iter().map(|b| std::fs::read(&b.path).unwrap()).collect();
        (bytes, below)
    }

    #[test]
    fn records_are_cut_at_the_splitters_across_writes() {
        let s = vec![(b"b".to_vec(), 0, 0), (b"d".to_vec(), 0, 0)];
        let (b, below) = run(s, vec![Tie::Above, Tie::Above], &[b"a\nb", b"\nc\nd\n", b"e\n"]);
        assert_eq!(b, [b"a\n".to_vec(), b"b\nc\n".to_vec(), b"d\ne\n".to_vec()]);
        assert_eq!(below, [false, false]);
    }

    #[test]
    fn a_tie_keeps_its_count_below_and_empty_buckets_exist() {
        let s = vec![(b"b".to_vec(), 0, 9), (b"b".to_vec(), 0, 20), (b"z".to_vec(), 0, 0)];
        let ties = vec![Tie::Count(1), Tie::Below, Tie::Above];
        let (b, below) = run(s, ties, &[b"a\nb\nb\nb\nc\n"]);
        assert_eq!(b, [b"a\nb\n".to_vec(), b"b\nb\n".to_vec(), b"c\n".to_vec(), Vec::new()]);
        assert_eq!(below, [true, true, false]);
    }

    #[test]
    fn a_bucket_that_cannot_be_written_or_synced_is_named_with_the_system_error() {
        // The first transfer of any bucket fails as a full disk would; then the first sync.
        let plans = [
            (oxsort_io::FaultPlan::fail_write(1, 28), "cannot write"),
            (oxsort_io::FaultPlan::fail_sync(1, 5), "cannot sync"),
        ];
        for (plan, what) in plans {
            let dir = tempfile::tempdir().unwrap();
            let io = IoOptions { faults: Some(Arc::new(plan)), ..IoOptions::default() };
            let c = Cutter::new(
                lines_key(),
                vec![(b"m".to_vec(), 0, 0)],
                vec![Tie::Above],
                dir.path(),
                io,
            );
            let mut h = c.handle();
            // Whatever the writes say (a piece may be queued before its transfer fails), the
            // cut as a whole fails at the latest when it is finished. Three pieces' worth of
            // records, so a failed transfer can surface at a later write as well as at the end.
            let mut line = vec![b'a'; 63];
            line.push(b'\n');
            let records = line.repeat(3 * BUCKET_PIECE_BYTES / line.len());
            let wrote = h.write_all(&records).and_then(|()| h.write_all(b"z\n"));
            drop(h);
            let e = match (wrote, c.take_error()) {
                (Err(_), Some(e)) => e,
                (_, _) => c.finish().expect_err(what),
            };
            let text = e.to_string();
            let path = bucket_path(dir.path(), 0).to_string_lossy().into_owned();
            assert_eq!(text.matches(&path).count(), 1, "the bucket, named once: {text}");
            assert!(text.contains(what), "{text}");
            let os = if what == "cannot write" {
                "No space left on device"
            } else {
                "Input/output error"
            };
            assert!(text.contains(os), "{text}");
        }
    }

    #[test]
    fn each_bucket_sums_the_crcs_of_its_own_records_across_stretches_and_writes() {
        // 40000 lines (320 KB), cut twice, written in pieces past a CRC stretch and cut short.
        let data: Vec<u8> = (0..40_000).flat_map(|i| format!("k{i:06}\n").into_bytes()).collect();
        let dir = tempfile::tempdir().unwrap();
        let splitters = vec![(b"k005000".to_vec(), 0, 0), (b"k012345".to_vec(), 0, 0)];
        let c = Cutter::new(
            lines_key(),
            splitters,
            vec![Tie::Above, Tie::Above],
            dir.path(),
            IoOptions::default(),
        );
        let mut h = c.handle();
        for w in data.chunks(70_001) {
            h.write_all(w).unwrap();
        }
        drop(h);
        let (buckets, _) = c.finish().unwrap();
        let mut lines = 0;
        for b in &buckets {
            let bytes = std::fs::read(&b.path).unwrap();
            let own: Vec<&[u8]> = bytes.split_inclusive(|&x| x == b'\n').collect();
            let want: u128 = own.iter().map(|l| u128::from(crc32fast::hash(l))).sum();
            assert_eq!((b.records, b.checksum), (own.len() as u64, want), "{}", b.path.display());
            lines += own.len();
        }
        assert_eq!(
            (buckets.len(), buckets[0].records, buckets[1].records, lines),
            (3, 5000, 7345, 40_000)
        );
    }

    #[test]
    fn an_empty_stream_makes_every_bucket_empty() {
        let (b, _) = run(vec![(b"m".to_vec(), 0, 0)], vec![Tie::Above], &[]);
        assert_eq!(b, [Vec::<u8>::new(), Vec::new()]);
    }
}

//! [`Reader`]: the read-ahead pipeline.

use std::collections::BTreeMap;
use std::io;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use crate::buf::{align_up, AlignedBuf};
use crate::error::IoError;
use crate::file::{DirectFile, IoOptions};
use crate::op::{BusyClock, Dir, Done, Op};
use crate::pipeline::{submit_counted, Backend, Engine, IoStats};
use crate::tuning::{DIRECT_ALIGN, MAX_DEPTH, MAX_TRANSFER};

/// One piece of the file delivered by a [`Reader`]: `buf[..len]` holds the bytes at
/// `offset..offset + len`.
#[derive(Debug)]
pub struct Chunk {
    /// File offset of the first byte.
    pub offset: u64,
    /// The buffer (capacity: the transfer size); give it back with [`Reader::recycle`].
    pub buf: AlignedBuf,
    /// Valid bytes at the start of `buf`.
    pub len: usize,
}

impl Chunk {
    /// The valid bytes.
    pub fn data(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Read-ahead pipeline: reads `[start, end)` of a file sequentially in `transfer`-byte pieces,
/// with up to `depth` pieces in flight, and yields them **in order**.
///
/// ```text
///                 recycle(buf)                    submit (offset, buf)
///   caller ───────────────────────▶ free list ─────────────────────────▶ in flight
///     ▲                           (else a new                        (io_uring ring, or
///     │                            AlignedBuf)                        pool of pread threads;
///     │                                                               the pipeline owns the
///     │   next_chunk(): Chunk { offset, buf, len }                    buffer until completion)
///     └──────────────── completed, reordered by offset ◀─────────────────────┘
/// ```
///
/// The backend is io_uring when [`IoOptions`] allow it and the kernel supports it, else a small
/// thread pool doing `pread`; pipes and other non-seekable files are read sequentially by one
/// thread ([`Backend::Sequential`]) — pass `0..u64::MAX` to read them to the end.
///
/// Pieces start at `start` and then at multiples of `transfer`-aligned steps; every piece but
/// the first and last is exactly `transfer` bytes (rounded up to [`DIRECT_ALIGN`]). A file that
/// ends before `end` ends the stream early. After an error, `next_chunk` returns `None`.
///
/// Dropping a `Reader` waits for the transfers still in flight.
///
/// ```
/// # use std::sync::Arc;
/// # use oxsort_io::{DirectFile, IoOptions, Reader};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("in");
/// # std::fs::write(&path, vec![5u8; 100_000])?;
/// let opts = IoOptions::default();
/// let file = Arc::new(DirectFile::open(&path, &opts)?);
/// let mut r = Reader::new(file.clone(), 0..file.len()?, 1 << 16, 4, &opts)?;
/// let mut total = 0;
/// while let Some(chunk) = r.next_chunk() {
///     let chunk = chunk?;
///     total += chunk.data().iter().map(|&b| b as usize).sum::<usize>();
///     r.recycle(chunk.buf);
/// }
/// assert_eq!(total, 5 * 100_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Reader {
    file: Arc<DirectFile>,
    engine: Engine,
    backend: Backend,
    /// Next offset to submit a read for.
    next_offset: u64,
    end: u64,
    transfer: usize,
    /// Length of the buffers this reader allocates and keeps (at least `transfer`).
    buf_len: usize,
    depth: usize,
    /// Sequence numbers: next to submit, next to yield.
    next_submit: u64,
    next_yield: u64,
    /// Completed reads waiting for their turn.
    done: BTreeMap<u64, Done>,
    free: Vec<AlignedBuf>,
    /// Set after an error or end of file has been yielded: nothing more comes.
    finished: bool,
    /// Set when a read came back short: stop submitting further reads.
    hit_eof: bool,
    clock: Arc<BusyClock>,
    started: Instant,
    bytes: u64,
    transfers: u64,
}

impl Reader {
    /// Starts reading `range` of `file` (the first `depth` reads are submitted at once).
    ///
    /// `transfer` is rounded up to [`DIRECT_ALIGN`] and capped at
    /// [`MAX_TRANSFER`](crate::tuning::MAX_TRANSFER); `depth` is clamped to
    /// `1..=`[`MAX_DEPTH`](crate::tuning::MAX_DEPTH).
    pub fn new(
        file: Arc<DirectFile>,
        range: Range<u64>,
        transfer: usize,
        depth: usize,
        opts: &IoOptions,
    ) -> Result<Self, IoError> {
        Self::with_buffer_len(file, range, transfer, depth, opts, 0)
    }

    /// Like [`Reader::new`], but every buffer it reads into is at least `buf_len` bytes (rounded
    /// up to [`DIRECT_ALIGN`]): room after the data a caller may append to (say, the rest of a
    /// record that straddles two pieces). Recycled buffers shorter than that are dropped.
    pub fn with_buffer_len(
        file: Arc<DirectFile>,
        range: Range<u64>,
        transfer: usize,
        depth: usize,
        opts: &IoOptions,
        buf_len: usize,
    ) -> Result<Self, IoError> {
        Self::start(file, range, (transfer, depth, buf_len), opts, Vec::new())
    }

    /// The reader of [`Reader::with_buffer_len`] whose first reads go into `spares`.
    fn start(
        file: Arc<DirectFile>,
        range: Range<u64>,
        (transfer, depth, buf_len): (usize, usize, usize),
        opts: &IoOptions,
        spares: Vec<AlignedBuf>,
    ) -> Result<Self, IoError> {
        if range.start > range.end {
            return Err(IoError::read(
                file.path(),
                range.start,
                io::Error::new(io::ErrorKind::InvalidInput, "read range ends before it starts"),
            ));
        }
        let transfer = align_up(transfer.clamp(1, MAX_TRANSFER));
        let buf_len = align_up(buf_len).max(transfer);
        let depth = depth.clamp(1, MAX_DEPTH);
        let clock = BusyClock::new();
        let (engine, backend) = Engine::new(&file, depth, opts, &clock);
        let mut r = Reader {
            file,
            engine,
            backend,
            next_offset: range.start,
            end: range.end,
            transfer,
            buf_len,
            depth,
            next_submit: 0,
            next_yield: 0,
            done: BTreeMap::new(),
            free: spares.into_iter().filter(|b| b.len() >= buf_len).collect(),
            finished: false,
            hit_eof: false,
            clock,
            started: Instant::now(),
            bytes: 0,
            transfers: 0,
        };
        r.top_up();
        Ok(r)
    }

    /// Like [`Reader::new`], reading into `spares` (buffers of at least the transfer size, say
    /// kept from an earlier phase) before it makes any of its own: memory already touched
    /// rather than fresh. Buffers too short are dropped.
    pub fn with_spares(
        file: Arc<DirectFile>,
        range: Range<u64>,
        transfer: usize,
        depth: usize,
        opts: &IoOptions,
        spares: Vec<AlignedBuf>,
    ) -> Result<Self, IoError> {
        Self::start(file, range, (transfer, depth, 0), opts, spares)
    }

    /// Submits reads until `depth` are outstanding or the range is covered.
    fn top_up(&mut self) {
        while !self.hit_eof
            && self.next_offset < self.end
            && self.engine.in_flight() + self.done.len() < self.depth
        {
            let base = self.next_offset - self.next_offset % DIRECT_ALIGN as u64;
            let piece_end = base.saturating_add(self.transfer as u64).min(self.end);
            let len = (piece_end - self.next_offset) as usize;
            let buf = self.free.pop().unwrap_or_else(|| AlignedBuf::unzeroed(self.buf_len));
            let op =
                Op { seq: self.next_submit, dir: Dir::Read, offset: self.next_offset, len, buf };
            self.next_submit += 1;
            self.next_offset = piece_end;
            submit_counted(&mut self.engine, &self.file, op);
        }
    }

    /// The next piece in file order; `None` at the end of the range (or file), and after an
    /// error was returned.
    pub fn next_chunk(&mut self) -> Option<Result<Chunk, IoError>> {
        if self.finished {
            return None;
        }
        self.top_up();
        while !self.done.contains_key(&self.next_yield) {
            match self.engine.wait() {
                Some(d) => {
                    self.done.insert(d.op.seq, d);
                }
                None => {
                    self.finished = true;
                    return None;
                }
            }
        }
        let Done { op, result } = self.done.remove(&self.next_yield).expect("checked above");
        self.next_yield += 1;
        match result {
            Err(e) => {
                self.finished = true;
                self.free.push(op.buf);
                Some(Err(e))
            }
            Ok(n) => {
                self.transfers += 1;
                self.bytes += n as u64;
                if n < op.len {
                    // End of file before the end of the range: this is the last piece.
                    self.hit_eof = true;
                    self.finished = true;
                }
                if n == 0 {
                    self.free.push(op.buf);
                    return None;
                }
                // Start the next read before the caller works on this piece.
                self.top_up();
                Some(Ok(Chunk { offset: op.offset, buf: op.buf, len: n }))
            }
        }
    }

    /// Gives a buffer back for later reads (otherwise each read may allocate a new one).
    /// Buffers smaller than the buffer length (the transfer size unless
    /// [`Reader::with_buffer_len`] asked for more) are dropped.
    pub fn recycle(&mut self, buf: AlignedBuf) {
        if buf.len() >= self.buf_len && self.free.len() < self.depth {
            self.free.push(buf);
        }
    }

    /// Buffers the reader holds for its next reads (at most the depth); a caller that feeds it
    /// buffers gives one only when this is 0.
    pub fn spare_buffers(&self) -> usize {
        self.free.len()
    }

    /// Statistics so far.
    pub fn stats(&self) -> IoStats {
        IoStats {
            bytes: self.bytes,
            transfers: self.transfers,
            busy: self.clock.busy(),
            elapsed: self.started.elapsed(),
        }
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The transfer size in use (rounded to [`DIRECT_ALIGN`]).
    pub fn transfer(&self) -> usize {
        self.transfer
    }
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("path", &self.file.path())
            .field("backend", &self.backend)
            .field("next_offset", &self.next_offset)
            .field("end", &self.end)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_go_into_the_spares_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in");
        let data: Vec<u8> = (0..3 * 65536u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let opts = IoOptions::default();
        let file = Arc::new(DirectFile::open(&path, &opts).unwrap());
        let spares = vec![AlignedBuf::new(65536), AlignedBuf::new(4096), AlignedBuf::new(65536)];
        let kept: Vec<usize> =
            [&spares[0], &spares[2]].iter().map(|b| b.as_ptr() as usize).collect();
        let mut r =
            Reader::with_spares(file, 0..data.len() as u64, 65536, 1, &opts, spares).unwrap();
        let mut got = Vec::new();
        let mut used = Vec::new();
        while let Some(c) = r.next_chunk() {
            let c = c.unwrap();
            got.extend_from_slice(c.data());
            used.push(c.buf.as_ptr() as usize);
            r.recycle(c.buf);
        }
        assert_eq!(got, data);
        // The two spares long enough serve every read; the short one is dropped.
        assert!(used.iter().all(|p| kept.contains(p)), "{used:x?} {kept:x?}");
    }
}

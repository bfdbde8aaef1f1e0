//! [`Writer`]: the write-behind pipeline.

use std::io;
use std::sync::Arc;
use std::time::Instant;

use crate::buf::AlignedBuf;
use crate::error::IoError;
use crate::file::{DirectFile, IoOptions};
use crate::op::{BusyClock, Dir, Done, Op};
use crate::pipeline::{submit_counted, Backend, Engine, IoStats};
use crate::tuning::MAX_DEPTH;

/// Write-behind pipeline: buffers are written one after another from `start`, with up to
/// `depth` writes in flight.
///
/// ```text
///          take_buf()                         write(buf, len)
///   free list ──────────▶ caller fills buf ─────────────────▶ in flight
///       ▲                                              (io_uring ring or pwrite threads;
///       │                                               the pipeline owns the buffer)
///       └──────────────────── completed ◀───────────────────────┘
/// ```
///
/// [`write`](Self::write) returns as soon as the buffer is queued; it blocks only while `depth`
/// writes are in flight, and it surfaces the error of any earlier write. For direct I/O every
/// `len` but the last should be a multiple of [`DIRECT_ALIGN`](crate::DIRECT_ALIGN): an
/// unaligned length makes the following writes unaligned, and those go through the page cache.
/// [`finish`](Self::finish) waits for everything; dropping a `Writer` also waits, but loses
/// errors.
///
/// ```
/// # use std::sync::Arc;
/// # use oxsort_io::{AlignedBuf, AtomicOutput, IoOptions, Writer};
/// # let dir = tempfile::tempdir()?;
/// let opts = IoOptions::default();
/// let out = AtomicOutput::create(&dir.path().join("out"), &opts)?;
/// let mut w = Writer::new(out.file().clone(), 0, 4, &opts)?;
/// for i in 0..10u8 {
///     let mut buf = w.take_buf().unwrap_or_else(|| AlignedBuf::new(1 << 16));
///     buf.fill(i);
///     w.write(buf, 1 << 16)?;
/// }
/// let stats = w.finish()?;
/// assert_eq!(stats.bytes, 10 << 16);
/// out.commit()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Writer {
    file: Arc<DirectFile>,
    engine: Engine,
    backend: Backend,
    next_offset: u64,
    depth: usize,
    seq: u64,
    free: Vec<AlignedBuf>,
    /// The first error seen and not yet returned.
    error: Option<IoError>,
    /// An error was returned: later calls fail too.
    failed: bool,
    clock: Arc<BusyClock>,
    started: Instant,
    bytes: u64,
    transfers: u64,
}

impl Writer {
    /// A pipeline writing `file` from offset `start`; `depth` is clamped to
    /// `1..=`[`MAX_DEPTH`](crate::tuning::MAX_DEPTH).
    pub fn new(
        file: Arc<DirectFile>,
        start: u64,
        depth: usize,
        opts: &IoOptions,
    ) -> Result<Self, IoError> {
        let depth = depth.clamp(1, MAX_DEPTH);
        let clock = BusyClock::new();
        let (engine, backend) = Engine::new(&file, depth, opts, &clock);
        Ok(Writer {
            file,
            engine,
            backend,
            next_offset: start,
            depth,
            seq: 0,
            free: Vec::new(),
            error: None,
            failed: false,
            clock,
            started: Instant::now(),
            bytes: 0,
            transfers: 0,
        })
    }

    fn absorb(&mut self, d: Done) {
        match d.result {
            Ok(n) => {
                self.bytes += n as u64;
                self.transfers += 1;
            }
            Err(e) => {
                if self.error.is_none() && !self.failed {
                    self.error = Some(e);
                }
            }
        }
        if self.free.len() <= self.depth {
            self.free.push(d.op.buf);
        }
    }

    fn check(&mut self) -> Result<(), IoError> {
        if let Some(e) = self.error.take() {
            self.failed = true;
            return Err(e);
        }
        if self.failed {
            return Err(IoError::write(
                self.file.path(),
                self.next_offset,
                io::Error::other("an earlier write of this output failed"),
            ));
        }
        Ok(())
    }

    /// Queues `buf[..len]` for writing at the current position and advances it by `len`.
    pub fn write(&mut self, buf: AlignedBuf, len: usize) -> Result<(), IoError> {
        if len > buf.len() {
            return Err(IoError::write(
                self.file.path(),
                self.next_offset,
                io::Error::new(io::ErrorKind::InvalidInput, "length exceeds the buffer"),
            ));
        }
        while let Some(d) = self.engine.poll() {
            self.absorb(d);
        }
        while self.engine.in_flight() >= self.depth {
            match self.engine.wait() {
                Some(d) => self.absorb(d),
                None => break,
            }
        }
        self.check()?;
        if len == 0 {
            self.free.push(buf);
            return Ok(());
        }
        let op = Op { seq: self.seq, dir: Dir::Write, offset: self.next_offset, len, buf };
        self.seq += 1;
        self.next_offset += len as u64;
        submit_counted(&mut self.engine, &self.file, op);
        Ok(())
    }

    /// A buffer whose write has completed, for reuse; `None` if none is free right now.
    pub fn take_buf(&mut self) -> Option<AlignedBuf> {
        while let Some(d) = self.engine.poll() {
            self.absorb(d);
        }
        self.free.pop()
    }

    /// The offset the next write goes to.
    pub fn position(&self) -> u64 {
        self.next_offset
    }

    /// Waits for every write; the first error of any of them, else the statistics.
    pub fn finish(mut self) -> Result<IoStats, IoError> {
        while let Some(d) = self.engine.wait() {
            self.absorb(d);
        }
        self.check()?;
        Ok(self.stats())
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
}

/// A [`Writer`] behind `std::io::Write`: bytes are copied into aligned buffers of `piece`
/// bytes, each written behind as it fills (direct where the file allows, `depth` at once), so
/// a producer that writes through `Write` (a Parquet or CSV encoder) neither waits for the
/// disk nor has the kernel copy its bytes into the page cache. [`WriteBehind::finish`] writes
/// the last, partial piece and waits for every write; `flush` does nothing (the bytes reach the
/// file by `finish`).
pub struct WriteBehind {
    writer: Writer,
    buf: Option<AlignedBuf>,
    /// Bytes of `buf` filled.
    len: usize,
    piece: usize,
}

impl WriteBehind {
    /// Writes `file` from offset 0 in pieces of `piece` bytes (rounded up to the direct-I/O
    /// alignment), `depth` in flight.
    pub fn new(
        file: Arc<DirectFile>,
        piece: usize,
        depth: usize,
        opts: &IoOptions,
    ) -> Result<Self, IoError> {
        let piece = piece.max(1).div_ceil(crate::DIRECT_ALIGN) * crate::DIRECT_ALIGN;
        Ok(WriteBehind { writer: Writer::new(file, 0, depth, opts)?, buf: None, len: 0, piece })
    }

    /// Writes what is left and waits for every write: the first error of any, else the
    /// statistics.
    pub fn finish(mut self) -> Result<IoStats, IoError> {
        if let Some(buf) = self.buf.take() {
            self.writer.write(buf, self.len)?;
        }
        self.writer.finish()
    }
}

impl io::Write for WriteBehind {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < data.len() {
            let buf = match self.buf.as_mut() {
                Some(b) => b,
                None => {
                    let b = self.writer.take_buf().unwrap_or_else(|| AlignedBuf::new(self.piece));
                    self.buf.insert(b)
                }
            };
            let n = (self.piece - self.len).min(data.len() - done);
            buf[self.len..self.len + n].copy_from_slice(&data[done..done + n]);
            self.len += n;
            done += n;
            if self.len == self.piece {
                let full = self.buf.take().expect("filled above");
                self.len = 0;
                self.writer.write(full, self.piece).map_err(io::Error::other)?;
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("path", &self.file.path())
            .field("backend", &self.backend)
            .field("position", &self.next_offset)
            .finish()
    }
}

#[cfg(test)]
mod write_behind_tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn bytes_written_in_any_pieces_are_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let opts = IoOptions::default();
        let out = crate::AtomicOutput::create(&dir.path().join("out"), &opts).unwrap();
        let mut w = WriteBehind::new(out.file().clone(), 5000, 3, &opts).unwrap();
        let data: Vec<u8> = (0..200_003u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut at = 0;
        for n in [1, 4095, 4096, 4097, 8192, 70_000].iter().cycle() {
            let end = (at + n).min(data.len());
            w.write_all(&data[at..end]).unwrap();
            at = end;
            if at == data.len() {
                break;
            }
        }
        let stats = w.finish().unwrap();
        assert_eq!(stats.bytes, data.len() as u64);
        out.commit().unwrap();
        assert!(std::fs::read(dir.path().join("out")).unwrap() == data);
    }
}

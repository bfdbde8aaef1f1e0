//! The operations a pipeline hands to a backend ([`Op`], [`Done`]), the synchronous transfer
//! both backends fall back on ([`run_sync`]), and the busy-time clock they share
//! ([`BusyClock`]). It sits below the pipeline (`pipeline.rs`) and the io_uring backend
//! (`uring.rs`), so neither imports the other's types.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::buf::AlignedBuf;
use crate::error::IoError;
use crate::file::DirectFile;

/// Direction of an [`Op`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    Read,
    Write,
}

/// One transfer, owning its buffer while in flight.
#[derive(Debug)]
pub(crate) struct Op {
    pub(crate) seq: u64,
    pub(crate) dir: Dir,
    pub(crate) offset: u64,
    /// Bytes to read into / write from `buf[..len]`.
    pub(crate) len: usize,
    pub(crate) buf: AlignedBuf,
}

/// A finished transfer: its buffer back, and the bytes transferred or the error.
#[derive(Debug)]
pub(crate) struct Done {
    pub(crate) op: Op,
    pub(crate) result: Result<usize, IoError>,
}

impl Done {
    pub(crate) fn new(op: Op, result: Result<usize, IoError>) -> Self {
        Done { op, result }
    }
}

/// Performs `op` synchronously with positional I/O (no fault counting: done at submission).
pub(crate) fn run_sync(file: &DirectFile, op: &mut Op) -> Result<usize, IoError> {
    match op.dir {
        Dir::Read => file.read_at_uncounted(&mut op.buf[..op.len], op.offset),
        Dir::Write => file.write_at_uncounted(&op.buf[..op.len], op.offset).map(|()| op.len),
    }
}

/// Measures [`IoStats::busy`]: wall time with at least one operation in flight.
#[derive(Debug)]
pub(crate) struct BusyClock {
    state: Mutex<(usize, Instant, Duration)>,
}

impl BusyClock {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(BusyClock { state: Mutex::new((0, Instant::now(), Duration::ZERO)) })
    }

    pub(crate) fn begin(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.0 == 0 {
            s.1 = Instant::now();
        }
        s.0 += 1;
    }

    pub(crate) fn end(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.0 = s.0.saturating_sub(1);
        if s.0 == 0 {
            let since = s.1;
            s.2 += since.elapsed();
        }
    }

    pub(crate) fn busy(&self) -> Duration {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.0 > 0 {
            s.2 + s.1.elapsed()
        } else {
            s.2
        }
    }
}

//! The spill room: the temp directories and the sorted runs in them. It alone names, creates,
//! stripes, trims and removes run files, reads them back, and keeps their statistics.
//!
//! ```text
//!  --temp-dir A ──> A/.oxsort-PID-RAND/ run-000000  run-000002  merge-1-000000 ...
//!  --temp-dir B ──> B/.oxsort-PID-RAND/ run-000001  run-000003  ...
//!                    (made on the first run; a run goes to the directory after the last one's)
//! ```
//!
//! Run file format: the run's records, sorted, back to back; no header. Its length is kept in
//! the [`Run`] the room hands out.

use std::path::PathBuf;
use std::sync::Arc;

use oxsort_format::RecordLayout;
use oxsort_io::{AlignedBuf, DirectFile, IoOptions, Reader, TempDir};

use crate::error::{EngineError, Result};
use crate::sink::FileSink;
use crate::stats::FileStats;

/// What a run holds: the input's records sorted, or several runs merged.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RunKind {
    /// Formed from one memory-load of input.
    Formed,
    /// Merged from runs at this level of the merge.
    Merged(u32),
}

/// A sorted run in a temp file. Its file is open only while it is written or read: a sort may
/// form more runs than a process may hold files open.
pub(crate) struct Run {
    file: Option<Arc<DirectFile>>,
    /// Which temp directory it is in.
    dir: usize,
    name: String,
    /// Bytes of records in it.
    pub(crate) bytes: u64,
}

impl Run {
    /// Its path, for messages.
    pub(crate) fn path(&self, room: &SpillRoom) -> PathBuf {
        room.temps[self.dir].path().join(&self.name)
    }
}

/// The temp directories and everything written to them.
pub(crate) struct SpillRoom {
    dirs: Vec<PathBuf>,
    temps: Vec<TempDir>,
    io: IoOptions,
    next: usize,
    /// Runs created so far, per kind: formed, merged.
    formed: usize,
    merged: usize,
    /// Bytes written to runs.
    pub(crate) bytes_spilled: u64,
}

impl SpillRoom {
    /// A room over `dirs` (none is touched until the first run).
    pub(crate) fn new(dirs: &[PathBuf], io: &IoOptions) -> Self {
        SpillRoom {
            dirs: dirs.to_vec(),
            temps: Vec::new(),
            io: io.clone(),
            next: 0,
            formed: 0,
            merged: 0,
            bytes_spilled: 0,
        }
    }

    /// Creates the next run, on the next directory, with room for `bytes` reserved; returns it
    /// and a sink writing it.
    pub(crate) fn create(&mut self, kind: RunKind, bytes: u64) -> Result<(Run, FileSink)> {
        if self.temps.is_empty() {
            for d in &self.dirs {
                self.temps.push(TempDir::new(d)?);
            }
        }
        let dir = self.next % self.temps.len();
        self.next += 1;
        let name = match kind {
            RunKind::Formed => {
                self.formed += 1;
                format!("run-{:06}", self.formed - 1)
            }
            RunKind::Merged(level) => {
                self.merged += 1;
                format!("merge-{level}-{:06}", self.merged - 1)
            }
        };
        let file = Arc::new(self.temps[dir].create_file(&name, &self.io)?);
        file.preallocate(bytes)?;
        let sink = FileSink::temp(file.clone(), self.dirs[dir].display().to_string());
        Ok((Run { file: Some(file), dir, name, bytes }, sink))
    }

    /// A run is written: `bytes` of records (fewer than reserved when duplicates were dropped).
    /// Its file is closed once the writer's sink is dropped too.
    pub(crate) fn finish(&mut self, run: &mut Run, bytes: u64) -> Result<()> {
        if let Some(f) = run.file.take() {
            f.set_len(bytes)?;
        }
        run.bytes = bytes;
        self.bytes_spilled += bytes;
        Ok(())
    }

    /// Removes a run that was merged into another.
    pub(crate) fn remove(&self, run: Run) -> Result<()> {
        drop(run.file);
        self.temps[run.dir].remove_file(&run.name)?;
        Ok(())
    }

    /// Opens `run` for reading in blocks of `block` bytes.
    pub(crate) fn reader(
        &self,
        run: &Run,
        block: usize,
        layout: RecordLayout,
    ) -> Result<RunReader> {
        let file = Arc::new(DirectFile::open(&run.path(self), &self.io)?);
        let direct = file.is_direct();
        let reader = Reader::new(file, 0..run.bytes, block, 1, &self.io)?;
        Ok(RunReader {
            reader,
            buf: None,
            len: 0,
            pos: 0,
            cur: 0,
            stage: Vec::new(),
            staged: false,
            path: run.path(self),
            temp_dir: self.dirs[run.dir].display().to_string(),
            direct,
            layout,
        })
    }
}

/// Reads one run record by record. Records usually lie whole inside a read block (blocks are
/// a multiple of the record size when memory allows); one that straddles two blocks is copied
/// into `stage`. Delimited records are found by their terminator.
pub(crate) struct RunReader {
    reader: Reader,
    buf: Option<AlignedBuf>,
    len: usize,
    pos: usize,
    /// Length of the current record.
    cur: usize,
    stage: Vec<u8>,
    staged: bool,
    path: PathBuf,
    temp_dir: String,
    direct: bool,
    layout: RecordLayout,
}

impl RunReader {
    fn next_block(&mut self) -> Result<bool> {
        if let Some(b) = self.buf.take() {
            self.reader.recycle(b);
        }
        match self.reader.next_chunk() {
            Some(Ok(c)) => {
                self.len = c.len;
                self.pos = 0;
                self.buf = Some(c.buf);
                Ok(true)
            }
            Some(Err(e)) => Err(e.into()),
            None => {
                self.len = 0;
                self.pos = 0;
                Ok(false)
            }
        }
    }

    /// Length of the record at `pos` if it ends inside the current block.
    #[inline]
    fn whole_here(&self) -> Option<usize> {
        let b = self.buf.as_ref()?;
        let rest = &b[self.pos..self.len];
        match self.layout {
            RecordLayout::Fixed(r) => (rest.len() >= r).then_some(r),
            RecordLayout::Delimited(t) => memchr::memchr(t, rest).map(|i| i + 1),
        }
    }

    /// Makes sure the reader holds a whole record; false when the run is exhausted.
    pub(crate) fn fill(&mut self) -> Result<bool> {
        if let Some(n) = self.whole_here() {
            self.cur = n;
            return Ok(true);
        }
        // The record straddles blocks (or the block is used up): gather it in `stage`.
        self.stage.clear();
        if self.pos < self.len {
            let b = self.buf.as_ref().expect("bytes left");
            self.stage.extend_from_slice(&b[self.pos..self.len]);
        }
        loop {
            if !self.next_block()? {
                if self.stage.is_empty() {
                    return Ok(false);
                }
                return Err(EngineError::Verify(format!(
                    "run {} ends inside a record",
                    self.path.display()
                )));
            }
            if self.stage.is_empty() {
                if let Some(n) = self.whole_here() {
                    self.cur = n;
                    return Ok(true);
                }
            }
            let b = self.buf.as_ref().expect("just read");
            let take = match self.layout {
                RecordLayout::Fixed(r) => (r - self.stage.len()).min(self.len),
                RecordLayout::Delimited(t) => {
                    memchr::memchr(t, &b[..self.len]).map_or(self.len, |i| i + 1)
                }
            };
            self.stage.extend_from_slice(&b[..take]);
            self.pos = take;
            let done = match self.layout {
                RecordLayout::Fixed(r) => self.stage.len() == r,
                RecordLayout::Delimited(t) => self.stage.last() == Some(&t),
            };
            if done {
                self.cur = self.stage.len();
                self.staged = true;
                return Ok(true);
            }
        }
    }

    /// The current record (after a successful [`RunReader::fill`]).
    #[inline]
    pub(crate) fn record(&self) -> &[u8] {
        if self.staged {
            &self.stage
        } else {
            &self.buf.as_ref().expect("filled")[self.pos..self.pos + self.cur]
        }
    }

    /// Moves past the current record.
    #[inline]
    pub(crate) fn advance(&mut self) {
        if self.staged {
            self.staged = false;
        } else {
            self.pos += self.cur;
        }
    }

    /// What was read, for the statistics.
    pub(crate) fn stats(&self) -> FileStats {
        let mut f =
            FileStats::read(self.path.display().to_string(), &self.reader.stats(), self.direct);
        f.temp_dir = Some(self.temp_dir.clone());
        f
    }
}

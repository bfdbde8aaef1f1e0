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
//!
//! A resumable sort's room uses one kept directory of a stable name per temp directory
//! (`.oxsort-resume-HASH`, see [`crate::journal`]) and a journal: each run is synced before it
//! is journaled, and the runs a merge level read are removed only once the level's outputs are
//! journaled. Any other room gives each run's disk space back as the merge reads it
//! ([`crate::hole`]).

use std::path::PathBuf;
use std::sync::Arc;

use oxsort_format::RecordLayout;
use oxsort_io::{AlignedBuf, DirectFile, IoOptions, Reader, TempDir};

use crate::chunk::Position;
use crate::error::{EngineError, Result};
use crate::hole::{HolePuncher, Punch};
use crate::journal::{self, Entry, Journal, LevelEntry, RunEntry, RunFile};
use crate::sink::FileSink;
use crate::stats::FileStats;
use crate::verify::OrderCheck;

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
    /// Records in it and their CRC32-sum (journaled for a resumable sort).
    pub(crate) records: u64,
    pub(crate) checksum: u128,
}

impl Run {
    /// Its path, for messages.
    pub(crate) fn path(&self, room: &SpillRoom) -> PathBuf {
        room.temps[self.dir].path().join(&self.name)
    }

    /// The number of the temp directory it is in.
    pub(crate) fn dir_index(&self) -> usize {
        self.dir
    }

    /// Its file name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// This run was merged from `group`, dropping what `dropped` says.
    pub(crate) fn merged_from(&mut self, group: &[Run], dropped: &OrderCheck) {
        self.records = group.iter().map(|r| r.records).sum::<u64>() - dropped.dropped;
        self.checksum = group.iter().map(|r| r.checksum).sum::<u128>() - dropped.dropped_checksum;
    }

    fn file_entry(&self) -> RunFile {
        RunFile {
            name: self.name.clone(),
            dir: self.dir,
            bytes: self.bytes,
            records: self.records,
            checksum: self.checksum,
        }
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
    /// A resumable sort: the name of its kept directories, the journal's first entry (until
    /// the journal is written), the journal, and the runs merged but not yet removed.
    kept: Option<String>,
    header: Option<journal::Header>,
    journal: Option<Journal>,
    merged_away: Vec<Run>,
    /// Merge levels finished, and the duplicates they dropped (with resumed ones).
    levels_done: u32,
    merge_dropped: (u64, u128),
    /// Per temp directory: the bytes the plan writes there at its peak (when known), and the
    /// bytes and number of the runs there the journal lists (what a resume takes over). For
    /// what a full directory still needed.
    planned: Vec<Option<u64>>,
    journaled: Vec<(u64, usize)>,
    /// Releases the pieces of runs a merge has read (a room that is not resumable, once its
    /// first run is made).
    holes: Option<HolePuncher>,
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
            kept: None,
            header: None,
            journal: None,
            merged_away: Vec::new(),
            levels_done: 0,
            merge_dropped: (0, 0),
            planned: vec![None; dirs.len()],
            journaled: vec![(0, 0); dirs.len()],
            holes: None,
        }
    }

    /// Records the plan's peak use of each temp directory (`bytes`, in the order of the
    /// directories), so a full directory can be told how much more the sort needed.
    pub(crate) fn plan_space(&mut self, bytes: impl IntoIterator<Item = u64>) {
        for (p, b) in self.planned.iter_mut().zip(bytes) {
            *p = Some(b);
        }
    }

    /// `e`, or when it is a full temp directory of this room, [`EngineError::TempFull`]: which
    /// directory, how much more the sort needed there, and (for a resumable sort) what is kept.
    pub(crate) fn explain(&self, e: EngineError) -> EngineError {
        let EngineError::Io(source) = e else { return e };
        let at = self.temps.iter().position(|t| source.path().starts_with(t.path()));
        let (true, Some(i)) = (source.is_no_space(), at) else { return EngineError::Io(source) };
        let dir = self.dirs[i].clone();
        let resumable = self.journal.is_some();
        // What stays there after the failure: the runs the journal lists.
        let (kept, kept_runs) = if resumable { self.journaled[i] } else { (0, 0) };
        let needed = self.planned[i].map(|p| p.saturating_sub(kept));
        let free = oxsort_io::free_space(&dir).ok();
        // Say only what is known: how much more when the plan knew the peak (an input whose
        // size is known only at its end gives it none).
        let mut more = match needed {
            Some(n) if n > 0 => format!("this sort needed up to {n} more bytes there to finish"),
            _ if self.planned[i].is_none() => "the input's size was not known before its end, \
                 so neither was the room its runs need there"
                .to_string(),
            _ => "this sort needed more room there than the plan foresaw".to_string(),
        };
        if let Some(f) = free {
            more += &format!("; {f} bytes are free there now");
        }
        if resumable {
            more += &format!(
                "; the {kept_runs} runs finished there ({kept} bytes) are kept: free space \
                 and run the same sort again to go on from them (they count as written), \
                 or reclaim them by removing its resume directory there"
            );
        } else {
            more += "; free space or choose another temp directory";
        }
        EngineError::TempFull { dir, needed, free, more, resumable, source: Box::new(source) }
    }

    /// A resumable sort's room: its directories are `dirs`/`name`, kept on interruption, and
    /// `header` starts the journal written with the first run.
    pub(crate) fn resumable(
        dirs: &[PathBuf],
        io: &IoOptions,
        name: String,
        header: journal::Header,
    ) -> Self {
        SpillRoom { kept: Some(name), header: Some(header), ..SpillRoom::new(dirs, io) }
    }

    /// The kept directories (a resumable room only): opens or makes them.
    pub(crate) fn open_kept(&mut self) -> Result<()> {
        if self.temps.is_empty() {
            let name = self.kept.clone().expect("a resumable room");
            for d in &self.dirs {
                let kept = TempDir::kept(d, &name).map_err(|e| {
                    let dir = d.join(&name);
                    match oxsort_io::private_dir_problem(&dir) {
                        Ok(Some(why)) => EngineError::ResumeBlocked { dir, why },
                        _ => e.into(),
                    }
                })?;
                self.temps.push(kept);
            }
        }
        Ok(())
    }

    /// The journal directory (the first kept directory) of a resumable room, when it exists.
    pub(crate) fn journal_dir(&self) -> Option<PathBuf> {
        let name = self.kept.as_ref()?;
        let p = self.dirs.first()?.join(name);
        p.is_dir().then_some(p)
    }

    /// Path of file `name` in temp directory `dir` (opened already).
    pub(crate) fn file_path(&self, dir: usize, name: &str) -> Option<PathBuf> {
        self.temps.get(dir).map(|t| t.path().join(name))
    }

    /// How its files are opened and driven.
    pub(crate) fn io(&self) -> &IoOptions {
        &self.io
    }

    /// The paths of the temp directories opened.
    pub(crate) fn temp_paths(&self) -> Vec<PathBuf> {
        self.temps.iter().map(|t| t.path().to_path_buf()).collect()
    }

    /// Takes up the journal of a resumed sort (written already) and its state: `formed` runs
    /// kept, `merged` the highest merged-run number in use plus one, `levels` finished, and the
    /// duplicates they dropped.
    pub(crate) fn resume_with(
        &mut self,
        j: Journal,
        formed: usize,
        merged: usize,
        levels: u32,
        merge_dropped: (u64, u128),
        runs: &[Run],
    ) {
        self.journal_holds(runs.iter());
        self.journal = Some(j);
        self.header = None;
        self.formed = formed;
        self.merged = merged;
        self.next = formed;
        self.levels_done = levels;
        self.merge_dropped = merge_dropped;
    }

    /// A run as the journal describes it (its file exists and was verified).
    pub(crate) fn adopt(&self, f: &RunFile) -> Run {
        Run {
            file: None,
            dir: f.dir,
            name: f.name.clone(),
            bytes: f.bytes,
            records: f.records,
            checksum: f.checksum,
        }
    }

    /// Journals formed run `run` (a resumable room only; others do nothing): the input stands
    /// at `end` after it; `in_records`/`in_checksum` were loaded for it, `read` read.
    pub(crate) fn journal_run(
        &mut self,
        run: &Run,
        end: Position,
        in_records: u64,
        in_checksum: u128,
        read: u64,
    ) -> Result<()> {
        let Some(j) = self.journal.as_mut() else { return Ok(()) };
        j.sync_dir()?;
        j.append(&Entry::Run(RunEntry {
            file: run.file_entry(),
            end_input: end.input,
            end_offset: end.offset,
            end_record: end.record,
            in_records,
            in_checksum,
            read,
        }))?;
        self.journal_holds(std::iter::once(run));
        Ok(())
    }

    /// `runs` are journaled: a resume would take them over.
    fn journal_holds<'a>(&mut self, runs: impl Iterator<Item = &'a Run>) {
        for r in runs {
            self.journaled[r.dir].0 += r.bytes;
            self.journaled[r.dir].1 += 1;
        }
    }

    /// A merge level is finished: `runs` are what the next level merges; `dropped` says what
    /// this call's levels so far dropped as duplicates. A resumable room journals the level,
    /// then removes the runs it merged.
    pub(crate) fn level_done(&mut self, runs: &[Run], dropped: &OrderCheck) -> Result<()> {
        self.levels_done += 1;
        if let Some(j) = self.journal.as_mut() {
            for d in &self.temps {
                journal::sync_dir(d.path())?;
            }
            j.append(&Entry::Level(LevelEntry {
                level: self.levels_done,
                runs: runs.iter().map(Run::file_entry).collect(),
                dropped: self.merge_dropped.0 + dropped.dropped,
                dropped_checksum: self.merge_dropped.1 + dropped.dropped_checksum,
            }))?;
            // A resume takes over this level's runs only.
            self.journaled.iter_mut().for_each(|k| *k = (0, 0));
            self.journal_holds(runs.iter());
        }
        for r in std::mem::take(&mut self.merged_away) {
            self.temps[r.dir].remove_file(&r.name)?;
        }
        Ok(())
    }

    /// The sort is done: removes the temp directories (kept ones too) and their files.
    pub(crate) fn remove_all(mut self) {
        // The punches asked for are done first (their thread holds the runs open), so the
        // removal below is quick.
        drop(self.holes.take());
        self.journal = None;
        for t in std::mem::take(&mut self.temps) {
            t.remove();
        }
    }

    /// Creates the next run, on the next directory, with room for `bytes` reserved; returns it
    /// and a sink writing it.
    pub(crate) fn create(&mut self, kind: RunKind, bytes: u64) -> Result<(Run, FileSink)> {
        if self.temps.is_empty() {
            if self.kept.is_some() {
                self.open_kept()?;
            } else {
                for d in &self.dirs {
                    // Checked now if the plan did not (runs were only possible then).
                    oxsort_io::check_dir_writable_as(d, oxsort_io::TEMP_DIR_CHECK)?;
                    self.temps.push(TempDir::new(d)?);
                }
                self.holes = HolePuncher::start();
            }
        }
        if let Some(h) = self.header.take() {
            // A resumable sort's first run: the journal starts with what the sort is.
            let dir = self.temps[0].path().to_path_buf();
            let (_, lock) = Journal::open(&dir, &self.io)?;
            self.journal = Some(Journal::write(&dir, lock, &[Entry::Sort(h)], &self.io)?);
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
        let file = Arc::new(
            self.temps[dir].create_file(&name, &self.io).map_err(|e| self.explain(e.into()))?,
        );
        file.preallocate(bytes).map_err(|e| self.explain(e.into()))?;
        let sink = FileSink::temp(file.clone(), self.dirs[dir].display().to_string());
        Ok((Run { file: Some(file), dir, name, bytes, records: 0, checksum: 0 }, sink))
    }

    /// A run is written: `bytes` of records (fewer than reserved when duplicates were dropped).
    /// Its file is closed once the writer's sink is dropped too.
    pub(crate) fn finish(&mut self, run: &mut Run, bytes: u64) -> Result<()> {
        if let Some(f) = run.file.take() {
            f.set_len(bytes)?;
            if self.journal.is_some() {
                // Journaled runs are durable before their entry is written.
                f.sync()?;
            }
        }
        run.bytes = bytes;
        self.bytes_spilled += bytes;
        Ok(())
    }

    /// Removes a run that was merged into another.
    /// A resumable room keeps it until its level is journaled ([`SpillRoom::level_done`]).
    pub(crate) fn remove(&mut self, mut run: Run) -> Result<()> {
        drop(run.file.take());
        if self.journal.is_some() {
            self.merged_away.push(run);
            return Ok(());
        }
        self.temps[run.dir].remove_file(&run.name)?;
        Ok(())
    }

    /// Opens `run` for reading in blocks of `block` bytes, into `spares` (buffers of at least
    /// `block` bytes kept from the input phase) before buffers of its own.
    pub(crate) fn reader(
        &self,
        run: &Run,
        block: usize,
        layout: RecordLayout,
        spares: Vec<AlignedBuf>,
    ) -> Result<RunReader> {
        let path = run.path(self);
        let (file, punch) = match &self.holes {
            Some(holes) => {
                let file = Arc::new(DirectFile::open_update(&path, &self.io)?);
                (file.clone(), Some(holes.handle(file, run.bytes)))
            }
            None => (Arc::new(DirectFile::open(&path, &self.io)?), None),
        };
        let direct = file.is_direct();
        let reader = Reader::with_spares(file, 0..run.bytes, block, 1, &self.io, spares)?;
        let mut r = RunReader::over(Blocks::File(reader), path, layout, direct);
        r.temp_dir = Some(self.dirs[run.dir].display().to_string());
        r.punch = punch;
        Ok(r)
    }
}

/// Where a [`RunReader`]'s blocks come from.
pub(crate) enum Blocks {
    /// A file read ahead through the I/O pipeline (a run, or a sorted file of the caller's).
    File(Reader),
    /// A byte stream read in order on the merging thread, a block at a time.
    Stream(StreamBlocks),
}

/// A byte stream cut into blocks of `block` bytes (the last one shorter).
pub(crate) struct StreamBlocks {
    read: Box<dyn std::io::Read + Send>,
    block: usize,
    spare: Option<AlignedBuf>,
    stats: oxsort_io::IoStats,
    started: std::time::Instant,
}

impl StreamBlocks {
    pub(crate) fn new(read: Box<dyn std::io::Read + Send>, block: usize) -> Self {
        let stats = oxsort_io::IoStats::default();
        StreamBlocks { read, block, spare: None, stats, started: std::time::Instant::now() }
    }

    /// The next block (its buffer and the bytes in it); `None` at the end of the stream.
    fn next(&mut self, path: &std::path::Path) -> Result<Option<(AlignedBuf, usize)>> {
        let mut buf = self.spare.take().unwrap_or_else(|| AlignedBuf::unzeroed(self.block));
        let t = std::time::Instant::now();
        let n = oxsort_io::read_full(&mut self.read, &mut buf[..self.block])
            .map_err(|e| oxsort_io::IoError::read(path, self.stats.bytes, e))?;
        self.stats.busy += t.elapsed();
        self.stats.elapsed = self.started.elapsed();
        if n == 0 {
            self.spare = Some(buf);
            return Ok(None);
        }
        self.stats.bytes += n as u64;
        self.stats.transfers += 1;
        Ok(Some((buf, n)))
    }
}

/// Reads one run record by record. Records usually lie whole inside a read block (blocks are
/// a multiple of the record size when memory allows); one that straddles two blocks is copied
/// into `stage`. Delimited records are found by their terminator.
pub(crate) struct RunReader {
    blocks: Blocks,
    buf: Option<AlignedBuf>,
    len: usize,
    pos: usize,
    /// Length of the current record.
    cur: usize,
    stage: Vec<u8>,
    staged: bool,
    path: PathBuf,
    /// For a run: the temp directory it is in (for the statistics).
    temp_dir: Option<String>,
    direct: bool,
    layout: RecordLayout,
    /// For a run of a room that is not resumable: gives each block's disk space back once it
    /// is read.
    punch: Option<Punch>,
}

impl RunReader {
    /// A reader of the records in `blocks`, named `path` in messages and statistics.
    pub(crate) fn over(blocks: Blocks, path: PathBuf, layout: RecordLayout, direct: bool) -> Self {
        RunReader {
            blocks,
            buf: None,
            len: 0,
            pos: 0,
            cur: 0,
            stage: Vec::new(),
            staged: false,
            path,
            temp_dir: None,
            direct,
            layout,
            punch: None,
        }
    }

    fn next_block(&mut self) -> Result<bool> {
        let next = match &mut self.blocks {
            Blocks::File(reader) => {
                if let Some(b) = self.buf.take() {
                    reader.recycle(b);
                }
                match reader.next_chunk() {
                    Some(Ok(c)) => {
                        if let Some(h) = &mut self.punch {
                            h.read_to(c.offset + c.len as u64);
                        }
                        Some((c.buf, c.len))
                    }
                    Some(Err(e)) => return Err(e.into()),
                    None => None,
                }
            }
            Blocks::Stream(s) => {
                if let Some(b) = self.buf.take() {
                    s.spare = Some(b);
                }
                s.next(&self.path)?
            }
        };
        self.pos = 0;
        match next {
            Some((buf, len)) => {
                self.len = len;
                self.buf = Some(buf);
                Ok(true)
            }
            None => {
                self.len = 0;
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
            RecordLayout::Variable(_) => self.layout.first_len(rest),
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
                if self.temp_dir.is_none() {
                    // The caller's data, not the sort's own run.
                    return Err(EngineError::Data(format!(
                        "{}: ends inside a record ({} bytes after the last whole record)",
                        self.path.display(),
                        self.stage.len()
                    )));
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
                RecordLayout::Variable(_) => {
                    self.layout.bytes_to_complete(&self.stage, &b[..self.len])
                }
            };
            self.stage.extend_from_slice(&b[..take]);
            self.pos = take;
            let done = match self.layout {
                RecordLayout::Fixed(r) => self.stage.len() == r,
                RecordLayout::Delimited(t) => self.stage.last() == Some(&t),
                RecordLayout::Variable(_) => self.layout.is_whole(&self.stage),
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
        let st = match &self.blocks {
            Blocks::File(reader) => reader.stats(),
            Blocks::Stream(s) => s.stats,
        };
        let mut f = FileStats::read(self.path.display().to_string(), &st, self.direct);
        f.temp_dir.clone_from(&self.temp_dir);
        f
    }
}

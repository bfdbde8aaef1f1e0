//! The last load of a two-pass sort, kept in memory and merged from there as a run of its own:
//! its records are never written to a temp file nor read back.
//!
//! ```text
//!  runs on disk:  run-0  run-1  run-2             (each read back block by block)
//!  last load:     chunks + one microrun per chunk (sorted or bucketed)
//!                   │ cut_load: parts 0..P by value
//!                   v
//!                 part p: its slice of every microrun, sorted (sort_part) ──> records in order,
//!                 one part at a time, as the merge asks            located in the chunks
//!                   │
//!  merge: run-0 .. run-2, then the load, last (ties go to the earlier input: stable)
//! ```
//!
//! Only the entries of the part being merged are copied (the plan's part size): the load's
//! chunks stay where they were read. A sort keeps its last load when the merge's buffers fit in
//! the budget beside it (see [`crate::plan::Plan::keeps_last_load`]).

use oxsort_format::SortKey;
use oxsort_kernels::{entry_index, prefetch_read, Entry};

use crate::inmem::{Ctx, Loaded};
use crate::output::{append_part, cut_load, sort_part};
use crate::run_source::RunSource;
use crate::spill::RunReader;
use crate::stats::FileStats;

/// How many records ahead of the merge a kept load's next record is prefetched: far enough
/// for a miss to memory (about 100 ns) to land while the merge takes that many records (tens
/// of nanoseconds each).
const PREFETCH_AHEAD: usize = 16;

/// A kept load read in sorted order, part by part.
pub(crate) struct LoadRun<'a> {
    loaded: &'a Loaded,
    keys: &'a SortKey,
    /// The load's microruns.
    runs: Vec<&'a [Entry]>,
    /// `cuts[run][p]..cuts[run][p + 1]`: part `p`'s entries of microrun `run`.
    cuts: Vec<Vec<usize>>,
    /// The next part to sort.
    part: usize,
    /// The current part's entries, sorted, and the position in them.
    entries: Vec<Entry>,
    at: usize,
    tie_bytes: usize,
    log2: u32,
    record_size: Option<usize>,
}

impl<'a> LoadRun<'a> {
    /// Bytes of the load's records.
    pub(crate) fn bytes(&self) -> u64 {
        self.loaded.bytes
    }

    /// `loaded` in sorted order, in parts of about the plan's part size.
    pub(crate) fn new(ctx: &Ctx<'a>, loaded: &'a Loaded) -> Self {
        let runs = loaded.runs();
        let parts = loaded.records.div_ceil(ctx.g.part_records as u64).max(1) as usize;
        let cuts = cut_load(ctx, loaded, &runs, parts);
        LoadRun {
            loaded,
            keys: ctx.keys,
            runs,
            cuts,
            part: 0,
            entries: Vec::new(),
            at: 0,
            tie_bytes: ctx.g.tie_bytes,
            log2: ctx.g.chunk_log2,
            record_size: ctx.keys.record_size(),
        }
    }

    /// Sorts the next part's entries; false when every part was merged.
    fn next_part(&mut self) -> bool {
        let parts = self.cuts.first().map_or(0, |c| c.len() - 1);
        while self.part < parts {
            let p = self.part;
            self.part += 1;
            self.entries.clear();
            append_part(&self.runs, &self.cuts, p, &mut self.entries);
            if self.entries.is_empty() {
                continue;
            }
            let (loaded, log2, size) = (self.loaded, self.log2, self.record_size);
            let locate = |idx| loaded.record(idx, log2, size);
            sort_part(self.keys, &mut self.entries, self.tie_bytes, locate, |_| {});
            self.at = 0;
            return true;
        }
        false
    }
}

impl RunSource for LoadRun<'_> {
    #[inline]
    fn fill(&mut self) -> crate::error::Result<bool> {
        Ok(self.at < self.entries.len() || self.next_part())
    }

    #[inline]
    fn record(&self) -> &[u8] {
        let idx = entry_index(self.entries[self.at]);
        self.loaded.record(idx, self.log2, self.record_size)
    }

    /// Moves on, and asks for the record [`PREFETCH_AHEAD`] places on: the load's records are
    /// where they were read, so each one in sorted order is a random read of memory.
    #[inline]
    fn advance(&mut self) {
        self.at += 1;
        if let Some(&e) = self.entries.get(self.at + PREFETCH_AHEAD) {
            let rec = self.loaded.record(entry_index(e), self.log2, self.record_size);
            if let (Some(first), Some(last)) = (rec.first(), rec.last()) {
                prefetch_read(first);
                prefetch_read(last);
            }
        }
    }

    /// Nothing was read from a file.
    fn stats(&self) -> FileStats {
        FileStats::default()
    }
}

/// An input of a final merge that includes a kept load: a run read back from its file, or the
/// load. (All but one are runs: the load's variant is the smaller, and boxing the readers would
/// put a pointer between the merge and every record.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Cursor<'a> {
    /// A run in the spill room.
    File(RunReader),
    /// The kept load (the merge's last input).
    Load(LoadRun<'a>),
}

impl RunSource for Cursor<'_> {
    #[inline]
    fn fill(&mut self) -> crate::error::Result<bool> {
        match self {
            Cursor::File(r) => r.fill(),
            Cursor::Load(l) => l.fill(),
        }
    }

    #[inline]
    fn record(&self) -> &[u8] {
        match self {
            Cursor::File(r) => r.record(),
            Cursor::Load(l) => l.record(),
        }
    }

    #[inline]
    fn advance(&mut self) {
        match self {
            Cursor::File(r) => r.advance(),
            Cursor::Load(l) => l.advance(),
        }
    }

    fn stats(&self) -> FileStats {
        match self {
            Cursor::File(r) => r.stats(),
            Cursor::Load(l) => l.stats(),
        }
    }
}

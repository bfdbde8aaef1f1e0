//! The plan's arithmetic: chunk, part, arena and merge sizes from the budget, the layout and
//! the thread count. Pure functions of the configuration: no file is looked at here.

use serde::Serialize;

use oxsort_format::Mode;
use oxsort_io::DIRECT_ALIGN;

use crate::config::SortConfig;
use crate::error::{EngineError, Result};
use crate::sink::STAGING_BYTES;
use crate::tuning::*;

/// Round up to a multiple of the direct-I/O alignment.
fn align_up(n: u64) -> u64 {
    n.div_ceil(DIRECT_ALIGN as u64) * DIRECT_ALIGN as u64
}

/// Sizes of the input phase (reading, run formation, one-pass output), fixed by the plan.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Geometry {
    /// Records per chunk slot range, as a power of two (a record's index is
    /// `chunk << chunk_log2 | slot`).
    pub chunk_log2: u32,
    /// Bytes of records per chunk (one read transfer).
    pub chunk_bytes: usize,
    /// Bytes of one chunk buffer, with its room for a delimited record's rest.
    pub chunk_alloc: usize,
    /// Records per output part (and per gathered piece).
    pub part_records: usize,
    /// Output parts in flight at once (being built or written).
    pub window_parts: usize,
    /// Chunks a memory-load holds (fixed records).
    pub arena_chunks: u64,
    /// Bytes a memory-load may hold (chunks, entries, offsets).
    pub arena_bytes: u64,
    /// Bytes staged before a write when output sizes are known only piece by piece.
    pub staging_bytes: usize,
    /// Input transfers in flight.
    pub read_depth: usize,
    /// Chunk buffers read or populated ahead of the workers.
    pub read_ahead_chunks: usize,
    /// Bytes of the output window at most: parts in flight, their records and entries.
    pub window_bytes: u64,
    /// Bytes of chunk buffers read or populated ahead, and the staging buffer.
    pub read_ahead_bytes: u64,
    /// Bytes a record's entries take in a load: its sort entry, and when prefixes may tie, its
    /// copy in the output part that orders it (one part may hold every record of a load, when
    /// all their prefixes tie: parts never split a group of equal prefixes).
    pub entry_bytes: u64,
    /// Bytes a record's entry takes again when its output part copies it to order tied
    /// prefixes (0 when prefixes cannot tie). Not taken from the load (see `entry_bytes`), but
    /// counted in what an input fills ([`Geometry::input_memory_for`]).
    pub part_copy_bytes: u64,
    /// Bytes each output worker may use to order a group of tied prefixes by whole keys
    /// (0 when prefixes cannot tie).
    pub tie_bytes: usize,
    /// Spare chunk buffers the workers rewrite chunks into (`rewrite`), counted in
    /// [`Geometry::input_memory`]; none for copies and budgets too small for them (nothing is
    /// rewritten then), and not used when the input is mapped
    /// ([`Geometry::input_memory_for`]).
    pub rewrite_bytes: u64,
    /// Memory of the input phase, all of it.
    pub input_memory: u64,
}

impl Geometry {
    /// Memory one chunk of fixed records takes in a load: its buffer and its records' entries.
    pub fn chunk_cost(&self) -> u64 {
        self.chunk_alloc as u64 + (self.entry_bytes << self.chunk_log2)
    }

    /// Memory the input phase touches for an input of `bytes` bytes (`records` fixed records;
    /// `None`: delimited, counted at [`LINE_BYTES_ESTIMATE`] bytes each): what
    /// [`Geometry::input_memory`] holds room for, less what an input that size cannot fill.
    /// The load and the chunks read ahead of it hold no more than the input and its entries;
    /// the output window no more than its parts in flight, a share of the input's parts
    /// ([`PARTS_IN_FLIGHT_PER_THREAD`] of [`MIN_PARTS_PER_THREAD`] per thread at least); the
    /// tie-breaking scratch no more than the records' keys; the overhead is counted whole, but
    /// for the rewrite buffers of an input that is `mapped` (its pages are not rewritten).
    pub fn input_memory_for(&self, bytes: u64, records: Option<u64>, mapped: bool) -> u64 {
        let threads = (self.window_parts / PARTS_IN_FLIGHT_PER_THREAD).max(1) as u64;
        let ties = threads * self.tie_bytes as u64;
        let rewrite = if mapped { self.rewrite_bytes } else { 0 };
        let rest = self.input_memory
            - self.arena_bytes
            - self.window_bytes
            - self.read_ahead_bytes
            - ties
            - rewrite;
        let chunks = bytes.div_ceil(self.chunk_bytes.max(1) as u64);
        let (records, per_record) = match records {
            Some(n) => (n, self.entry_bytes + self.part_copy_bytes),
            None => (
                bytes.div_ceil(LINE_BYTES_ESTIMATE),
                self.entry_bytes + self.part_copy_bytes + OFFSET_BYTES,
            ),
        };
        let data = chunks * self.chunk_alloc as u64 + records * per_record;
        let held = data.min(self.arena_bytes + self.read_ahead_bytes);
        let parts_bytes = bytes + records * ENTRY_BYTES;
        let in_flight =
            parts_bytes * PARTS_IN_FLIGHT_PER_THREAD as u64 / MIN_PARTS_PER_THREAD as u64;
        let window = self.window_bytes.min(in_flight);
        let keys = records * oxsort_kernels::TIE_BYTES_PER_ENTRY as u64 + bytes;
        rest + held + window + ties.min(keys)
    }
}

/// Sizes of the input phase for `cfg`.
pub(crate) fn geometry(cfg: &SortConfig) -> Result<Geometry> {
    let Some(sorted) = cfg.key.record_size() else { return delimited_geometry(cfg) };
    // With INREC the records read and the records sorted differ in size: a chunk holds as many
    // of either, read at the input's size, and memory is counted at the larger.
    let read = cfg.key.input_layout().fixed_size().unwrap_or(sorted) as u64;
    let r = read.max(sorted as u64);
    let m = cfg.memory;
    let window_parts = cfg.threads * PARTS_IN_FLIGHT_PER_THREAD;
    let read_ahead_chunks = cfg.read_depth + PROVISION_AHEAD;
    let mut log2 = match cfg.chunk_records_log2 {
        Some(l) => l,
        None => {
            let mut l = ((cfg.transfer as u64 / r).max(1)).ilog2().max(MIN_CHUNK_RECORDS_LOG2);
            // Enough chunks in the arena that run formation overlaps reading with sorting.
            while l > MIN_CHUNK_RECORDS_LOG2 && (r << l) * ARENA_MIN_CHUNKS > m {
                l -= 1;
            }
            l
        }
    };
    log2 = log2.min(MAX_CHUNK_RECORDS_LOG2);
    let chunk_records = 1u64 << log2;
    let chunk_alloc = align_up(chunk_records * r);
    let entry_bytes = entry_bytes(cfg);
    let chunk_cost = chunk_alloc + chunk_records * entry_bytes;
    // Parts: as large as allowed, but the window of parts in flight takes at most a share of
    // memory.
    let per_rec = r + ENTRY_BYTES;
    let part_records = part_records(m, window_parts, per_rec);
    let window = window_parts as u64
        * (align_up(part_records * r) + DIRECT_ALIGN as u64 + part_records * ENTRY_BYTES);
    let staging = staging_bytes(m);
    let read_ahead = read_ahead_chunks as u64 * chunk_alloc + staging as u64;
    let tie_bytes = tie_bytes(cfg);
    // Each worker builds a chunk's entries in a vector of its own before they go to the load.
    let workers = cfg.threads as u64 * (tie_bytes + chunk_records * ENTRY_BYTES);
    let rewrite = rewrite_bytes(cfg, chunk_alloc);
    let fixed = FIXED_OVERHEAD + window + read_ahead + workers + rewrite;
    let arena_chunks = m.saturating_sub(fixed) / chunk_cost;
    if arena_chunks == 0 {
        return Err(EngineError::MemoryTooSmall {
            given: m,
            needed: fixed + chunk_cost,
            why: format!(
                "one chunk of {chunk_records} records, {read_ahead_chunks} chunks read or \
                 prepared ahead and {window_parts} output parts in flight"
            ),
        });
    }
    Ok(Geometry {
        chunk_log2: log2,
        chunk_bytes: (chunk_records * read) as usize,
        chunk_alloc: chunk_alloc as usize,
        part_records: part_records as usize,
        window_parts,
        arena_chunks,
        arena_bytes: arena_chunks * chunk_cost,
        staging_bytes: staging,
        read_depth: cfg.read_depth,
        read_ahead_chunks,
        window_bytes: window,
        read_ahead_bytes: read_ahead,
        entry_bytes,
        part_copy_bytes: if cfg.key.ties_possible() { ENTRY_BYTES } else { 0 },
        tie_bytes: tie_bytes as usize,
        rewrite_bytes: rewrite,
        input_memory: fixed + arena_chunks * chunk_cost,
    })
}

/// The spare chunk buffers of `chunk_alloc` bytes the workers rewrite chunks into
/// (`rewrite::Rewrite`): one each; none for a copy (its records are not sorted) or when they
/// would take more than 1/[`REWRITE_MAX_SHARE`] of the budget (then nothing is rewritten).
fn rewrite_bytes(cfg: &SortConfig, chunk_alloc: u64) -> u64 {
    let bytes = cfg.threads as u64 * chunk_alloc;
    if cfg.spec.mode == Mode::Copy || bytes > cfg.memory / REWRITE_MAX_SHARE {
        0
    } else {
        bytes
    }
}

/// Records per output part: the window of `window_parts` parts of records costing `per_rec`
/// bytes each takes at most 1/[`OUTPUT_WINDOW_SHARE`] of the budget.
fn part_records(memory: u64, window_parts: usize, per_rec: u64) -> u64 {
    let spare = memory.saturating_sub(FIXED_OVERHEAD);
    ((spare / OUTPUT_WINDOW_SHARE) / (window_parts as u64 * per_rec))
        .clamp(1, MAX_PART_RECORDS as u64)
}

/// Delimited records: chunks are byte ranges cut after a terminator, holding a varying number
/// of records (at most one per byte), so the record index reserves a slot per chunk byte and a
/// load is limited by bytes (chunks, entries and offsets) rather than by chunk count.
fn delimited_geometry(cfg: &SortConfig) -> Result<Geometry> {
    let m = cfg.memory;
    let window_parts = cfg.threads * PARTS_IN_FLIGHT_PER_THREAD;
    let read_ahead_chunks = cfg.read_depth + PROVISION_AHEAD;
    // A chunk of one-byte records costs 21 bytes of memory per chunk byte: keep one chunk well
    // under the budget.
    let mut chunk = cfg.transfer as u64;
    if let Some(l) = cfg.chunk_records_log2 {
        chunk = chunk.min(1 << l);
    }
    let entry_bytes = entry_bytes(cfg);
    let worst_per_byte = 1 + entry_bytes + OFFSET_BYTES;
    while chunk > DIRECT_ALIGN as u64 && chunk * worst_per_byte * DELIM_CHUNK_SHARE > m {
        chunk /= 2;
    }
    // A chunk's buffer has room for the rest of its last record (see DELIM_SLACK); the bytes,
    // so the records, of one chunk are at most `most`.
    let most = chunk + delim_room(chunk as usize) as u64;
    let chunk_alloc = align_up(most);
    let log2 = 64 - most.leading_zeros();
    // Parts of lines of a typical length, their window a share of memory.
    let per_rec = LINE_BYTES_ESTIMATE + ENTRY_BYTES;
    let part_records = part_records(m, window_parts, per_rec);
    let window = window_parts as u64 * (part_records * per_rec + DIRECT_ALIGN as u64);
    let staging = staging_bytes(m);
    let read_ahead = read_ahead_chunks as u64 * chunk_alloc + staging as u64;
    let tie_bytes = tie_bytes(cfg);
    let rewrite = rewrite_bytes(cfg, chunk_alloc);
    let fixed = FIXED_OVERHEAD + window + read_ahead + rewrite + cfg.threads as u64 * tie_bytes;
    let arena_bytes = m.saturating_sub(fixed);
    let worst_chunk = chunk_alloc + most * (entry_bytes + OFFSET_BYTES);
    if arena_bytes < worst_chunk {
        return Err(EngineError::MemoryTooSmall {
            given: m,
            needed: fixed + worst_chunk,
            why: format!(
                "a chunk of {chunk} bytes of records with their entries, read-ahead and output \
                 parts"
            ),
        });
    }
    Ok(Geometry {
        chunk_log2: log2,
        chunk_bytes: chunk as usize,
        chunk_alloc: chunk_alloc as usize,
        part_records: part_records as usize,
        window_parts,
        arena_chunks: arena_bytes / chunk_alloc,
        arena_bytes,
        staging_bytes: staging,
        read_depth: cfg.read_depth,
        read_ahead_chunks,
        window_bytes: window,
        read_ahead_bytes: read_ahead,
        entry_bytes,
        part_copy_bytes: if cfg.key.ties_possible() { ENTRY_BYTES } else { 0 },
        tie_bytes: tie_bytes as usize,
        rewrite_bytes: rewrite,
        input_memory: fixed + arena_bytes,
    })
}

/// Bytes a record's entries take in a load (see [`Geometry::entry_bytes`]): its sort entry.
/// The copy an output part makes of its entries is counted in the window, not here: a group of
/// tied prefixes as large as a load copies more (16 bytes a record, at most 16/(record + 16) of
/// the budget), which counting for every sort whose prefixes may tie would take from every
/// load (a 4 GB typed sort under 5G then needs two passes) for a shape of data that is rare.
fn entry_bytes(_cfg: &SortConfig) -> u64 {
    ENTRY_BYTES
}

/// Tie-breaking scratch per output worker: a share of the budget ([`TIE_MEMORY_SHARE`]) split
/// among the workers, within [`TIE_MEMORY_MIN`]..[`TIE_MEMORY_MAX`]; none when prefixes cannot
/// tie or ties are broken by comparing records in place (raw lines).
fn tie_bytes(cfg: &SortConfig) -> u64 {
    if !cfg.key.ties_possible() || !cfg.key.builds_keys() {
        return 0;
    }
    (cfg.memory / TIE_MEMORY_SHARE / cfg.threads.max(1) as u64)
        .clamp(TIE_MEMORY_MIN, TIE_MEMORY_MAX)
}

/// The staging buffer: [`STAGING_BYTES`], or 1/[`STAGING_SHARE`] of a small budget (at least
/// one aligned block).
fn staging_bytes(memory: u64) -> usize {
    let align = DIRECT_ALIGN as u64;
    (memory / STAGING_SHARE / align * align).clamp(align, STAGING_BYTES) as usize
}

/// What the merge may use, fixed by the plan: the widest fan-in the budget allows and the
/// block range. The schedule for a given number of runs follows from it alone
/// ([`MergeSizing::schedule`]).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MergeSizing {
    /// Runs merged at once, at most.
    pub fan_in: u64,
    /// Smallest read block per run.
    pub min_block: usize,
    /// Largest read block per run.
    pub max_block: usize,
    /// Bytes the merge may spend on blocks (the budget less the fixed overhead).
    pub block_memory: u64,
    /// Bytes per record when fixed (blocks hold whole records); 1 for delimited records.
    pub record_unit: usize,
}

/// One level of the merge: `inputs` runs merged `fan_in` at a time into `outputs` runs (the
/// last level into the output).
///
/// ```text
///  level 1:  r0 r1 r2 r3 r4 r5 r6   (fan-in 3)  ──>  m0 m1 r6      (a lone run passes through)
///  level 2:  m0 m1 r6                           ──>  output
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MergeLevel {
    /// Runs entering the level.
    pub inputs: u64,
    /// Runs merged at once.
    pub fan_in: u64,
    /// Runs leaving it (1 on the last level: the output).
    pub outputs: u64,
    /// Bytes read per run per transfer (the merge may take down to half of it, to cut its
    /// blocks from the input phase's buffers).
    pub block: usize,
    /// Memory the level's merges use at most.
    pub memory: u64,
}

/// The merge, level by level.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MergeSchedule {
    /// The levels, first to last (the last merges into the output).
    pub levels: Vec<MergeLevel>,
}

impl MergeSchedule {
    /// Memory the merge uses at most (its widest level).
    pub fn memory(&self) -> u64 {
        self.levels.iter().map(|l| l.memory).max().unwrap_or(0)
    }
}

/// Whether a budget of `memory` bytes gives the sort of `cfg` both phases (with one transfer
/// in flight, the least [`sizes`] falls back to).
fn fits(cfg: &SortConfig, memory: u64) -> bool {
    let mut c = cfg.clone();
    c.memory = memory;
    c.read_depth = 1;
    geometry(&c).is_ok() && merge_sizing(&c).is_ok()
}

/// The least budget with which `cfg` plans (to the direct-I/O alignment): what a "too small"
/// error reports, so that the number it gives works when used. The sizes scale with the budget
/// (parts, staging, chunks), so the least budget is searched for, not estimated.
pub(crate) fn least_memory(cfg: &SortConfig) -> u64 {
    let align = DIRECT_ALIGN as u64;
    let mut hi = align;
    while !fits(cfg, hi) && hi < 1 << 40 {
        hi *= 2;
    }
    let mut lo = hi / 2; // does not fit (or is below the first step)
    while hi - lo > align {
        let mid = (lo + hi) / 2 / align * align;
        if fits(cfg, mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The sizes of both phases for `cfg`, and notes of what was reduced to fit. Transfers in
/// flight that do not fit the budget are fewer, with a note; a budget too small even then is
/// reported with the least budget that plans.
pub(crate) fn sizes(cfg: &SortConfig) -> Result<(Geometry, MergeSizing, Vec<String>)> {
    let both = |c: &SortConfig| geometry(c).and_then(|g| Ok((g, merge_sizing(c)?)));
    let mut notes = Vec::new();
    let mut c = cfg.clone();
    let mut result = both(&c);
    while matches!(result, Err(EngineError::MemoryTooSmall { .. })) && c.read_depth > 1 {
        c.read_depth /= 2;
        result = both(&c);
    }
    if result.is_ok() && c.read_depth < cfg.read_depth {
        notes.push(format!(
            "{} input transfers in flight do not fit the memory budget: {} are",
            cfg.read_depth, c.read_depth
        ));
    }
    match result {
        Ok((g, m)) => Ok((g, m, notes)),
        Err(EngineError::MemoryTooSmall { given, why, .. }) => {
            Err(EngineError::MemoryTooSmall { given, needed: least_memory(cfg), why })
        }
        Err(e) => Err(e),
    }
}

/// The merge's sizing for `cfg`.
pub(crate) fn merge_sizing(cfg: &SortConfig) -> Result<MergeSizing> {
    let m = cfg.memory.saturating_sub(FIXED_OVERHEAD);
    let unit = cfg.key.record_size().unwrap_or(1);
    let r = unit as u64;
    let out = MERGE_OUT_BUFFERS as u64;
    // Every block must hold at least one record. Blocks below MERGE_BLOCK_MIN are slow, so they
    // are used only when the budget cannot give a two-way merge otherwise.
    let widest = |min_block: u64| {
        let per_run = 2 * min_block + MERGE_RUN_OVERHEAD;
        let mut fan_in = (m.saturating_sub(out * min_block) / per_run).min(MAX_FAN_IN as u64);
        if let Some(cap) = cfg.max_fan_in {
            fan_in = fan_in.min(cap as u64);
        }
        fan_in
    };
    let mut min_block = align_up((MERGE_BLOCK_MIN as u64).max(r));
    let mut fan_in = widest(min_block);
    if fan_in < 2 {
        min_block = align_up(r.max(DIRECT_ALIGN as u64));
        fan_in = widest(min_block);
    }
    if fan_in < 2 {
        return Err(EngineError::MemoryTooSmall {
            given: cfg.memory,
            needed: FIXED_OVERHEAD + (4 + out) * min_block + 2 * MERGE_RUN_OVERHEAD,
            why: "a two-way merge with its read and output blocks".into(),
        });
    }
    Ok(MergeSizing {
        fan_in,
        min_block: min_block as usize,
        max_block: (cfg.merge_block as u64).max(min_block) as usize,
        block_memory: m,
        record_unit: unit,
    })
}

impl MergeSizing {
    /// The block and memory of a merge of `k` runs: two blocks per run (one merged, one read)
    /// and [`MERGE_OUT_BUFFERS`] output blocks share the budget, less each run's
    /// [`MERGE_RUN_OVERHEAD`].
    fn level(&self, inputs: u64, k: u64, outputs: u64) -> MergeLevel {
        let out = MERGE_OUT_BUFFERS as u64;
        let align = DIRECT_ALIGN as u64;
        let blocks = self.block_memory.saturating_sub(k * MERGE_RUN_OVERHEAD);
        let block = ((blocks / (2 * k + out)) / align * align)
            .clamp(self.min_block as u64, self.max_block as u64);
        MergeLevel {
            inputs,
            fan_in: k,
            outputs,
            block: block as usize,
            memory: FIXED_OVERHEAD + (2 * k + out) * block + k * MERGE_RUN_OVERHEAD,
        }
    }

    /// The schedule that merges `runs` runs: full-width levels while more runs remain than one
    /// merge takes, then the final merge.
    pub fn schedule(&self, runs: u64) -> MergeSchedule {
        let mut levels = Vec::new();
        let mut n = runs;
        while n > self.fan_in {
            let outputs = n.div_ceil(self.fan_in);
            levels.push(self.level(n, self.fan_in, outputs));
            n = outputs;
        }
        levels.push(self.level(n, n.max(2), 1));
        MergeSchedule { levels }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizing(fan_in: u64) -> MergeSizing {
        MergeSizing {
            fan_in,
            min_block: 64 << 10,
            max_block: 8 << 20,
            block_memory: 1 << 30,
            record_unit: 100,
        }
    }

    #[test]
    fn schedules_merge_every_run_in_the_fewest_levels() {
        for fan_in in 2..9u64 {
            for runs in 1..200u64 {
                let s = sizing(fan_in).schedule(runs);
                let last = s.levels.last().unwrap();
                assert_eq!(last.outputs, 1);
                assert_eq!(s.levels[0].inputs, runs);
                for w in s.levels.windows(2) {
                    assert_eq!(w[0].outputs, w[1].inputs);
                }
                // Each level takes at most fan_in runs per merge.
                for l in &s.levels {
                    assert!(l.inputs.div_ceil(l.fan_in) == l.outputs && l.fan_in <= fan_in.max(2));
                }
                // The fewest levels: fan_in^(levels-1) < runs <= fan_in^levels.
                let levels = s.levels.len() as u32;
                assert!(
                    runs <= fan_in.pow(levels) && (levels == 1 || fan_in.pow(levels - 1) < runs)
                );
            }
        }
    }

    #[test]
    fn blocks_stay_within_their_range_and_the_budget() {
        let s = sizing(256);
        for k in [2, 3, 17, 256] {
            let l = s.level(k, k, 1);
            assert!(l.block >= s.min_block && l.block <= s.max_block);
            assert_eq!(l.block % DIRECT_ALIGN, 0);
            assert!(l.memory <= FIXED_OVERHEAD + s.block_memory || l.block == s.min_block);
        }
    }
}

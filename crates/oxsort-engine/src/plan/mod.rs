//! The plan: one pass or two, chunk and run sizes, merge fan-in and levels, memory per phase,
//! temp bytes per directory. Computed before any work and printed by `oxsort explain`.
//!
//! ```text
//!  memory budget M
//!  ├── fixed overhead
//!  ├── read-ahead: read_depth chunks in flight (+ PROVISION_AHEAD populated ahead)
//!  ├── output window: threads × PARTS_IN_FLIGHT_PER_THREAD parts × part_records × (record + entry)
//!  └── arena: C chunks × (2^log2 records × (record + 16-byte entry))
//!        one pass  when every input chunk fits in C
//!        two passes otherwise: runs of ≤ C chunks, then merge:
//!            fan-in k runs × 2 blocks + MERGE_OUT_BUFFERS blocks ≤ M
//!            k < runs  →  more merge levels
//! ```

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use serde::Serialize;

use crate::config::{parent_dir, Input, Output, SortConfig};
use crate::error::{EngineError, Result};
use crate::sink::STAGING_BYTES;
use crate::stats::human_bytes;
use crate::tuning::*;

/// One input as planned.
#[derive(Clone, Debug, Serialize)]
pub struct InputPlan {
    /// Its name (`-` for standard input).
    pub name: String,
    /// Its size, when known (not for standard input).
    pub bytes: Option<u64>,
}

/// Use of one temp directory.
#[derive(Clone, Debug, Serialize)]
pub struct TempPlan {
    /// The directory.
    pub dir: PathBuf,
    /// Bytes the plan writes there at its peak.
    pub bytes: u64,
    /// Free bytes found there.
    pub free: u64,
}

/// How the records get sorted.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Passes {
    /// Everything fits in memory: read, sort, write.
    One,
    /// Sorted runs go to temp files, then they are merged.
    Two {
        /// Runs formed from the input.
        runs: u64,
        /// Chunks per run (the last run may be shorter).
        run_chunks: u64,
        /// Runs merged at once, at most.
        fan_in: u64,
        /// Merge levels (1: the runs merge straight into the output).
        levels: u32,
        /// Bytes read per run per transfer in the merge.
        merge_block: usize,
    },
    /// Reading standard input: one pass if it fits, else runs of `run_chunks` merged with up to
    /// `fan_in` at once, decided while reading.
    Unknown {
        /// Chunks per run.
        run_chunks: u64,
        /// Runs merged at once, at most.
        fan_in: u64,
    },
}

/// The plan of one sort.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Inputs, in order.
    pub inputs: Vec<InputPlan>,
    /// Bytes of input, when known.
    pub input_bytes: Option<u64>,
    /// Records of input, when known.
    pub records: Option<u64>,
    /// Bytes per record.
    pub record_size: usize,
    /// The memory budget.
    pub memory: u64,
    /// Worker threads.
    pub threads: usize,
    /// Records per chunk, as a power of two.
    pub chunk_records_log2: u32,
    /// Bytes per chunk (one read transfer).
    pub chunk_bytes: usize,
    /// Chunks the memory holds at once (the run size).
    pub arena_chunks: u64,
    /// Records per output part.
    pub part_records: usize,
    /// One pass or two.
    pub passes: Passes,
    /// Memory the input phase (read, run formation, one-pass output) uses at most.
    pub memory_input_phase: u64,
    /// Memory the merge uses at most (0 for one pass).
    pub memory_merge_phase: u64,
    /// Temp directories and their use.
    pub temp: Vec<TempPlan>,
    /// The output's name (`-` for standard output).
    pub output: String,
    /// Free bytes where the output goes (None for stdout).
    pub output_free: Option<u64>,
}

/// Round up to a multiple of 4096.
fn align_up(n: u64) -> u64 {
    n.div_ceil(4096) * 4096
}

/// Sizes that depend only on memory, record size and threads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geometry {
    pub(crate) chunk_log2: u32,
    pub(crate) chunk_bytes: usize,
    pub(crate) part_records: usize,
    pub(crate) arena_chunks: u64,
    /// Bytes a memory-load may hold (chunks, entries, offsets).
    pub(crate) arena_bytes: u64,
    /// Bytes staged before a write when output sizes are known only piece by piece.
    pub(crate) staging_bytes: usize,
    pub(crate) input_memory: u64,
}

pub(crate) fn geometry(cfg: &SortConfig) -> Result<Geometry> {
    let r = cfg.format.record_size as u64;
    let m = cfg.memory;
    let threads = cfg.threads as u64;
    let window_parts = threads * PARTS_IN_FLIGHT_PER_THREAD as u64;

    if cfg.delim.is_some() {
        return delimited_geometry(cfg);
    }
    let mut log2 = match cfg.chunk_records_log2 {
        Some(l) => l,
        None => {
            let mut l = ((cfg.transfer as u64 / r).max(1)).ilog2().max(MIN_CHUNK_RECORDS_LOG2);
            // At least ~16 chunks in the arena so run formation overlaps reading with sorting.
            while l > MIN_CHUNK_RECORDS_LOG2 && (r << l) * 16 > m {
                l -= 1;
            }
            l
        }
    };
    if log2 > 40 {
        log2 = 40;
    }
    let chunk_records = 1u64 << log2;
    let chunk_alloc = align_up(chunk_records * r);
    let chunk_cost = chunk_alloc + chunk_records * ENTRY_BYTES;
    // Parts: as large as allowed, but the window of parts in flight takes at most 1/8 of memory.
    let per_rec = r + ENTRY_BYTES;
    let spare = m.saturating_sub(FIXED_OVERHEAD);
    let part_records = ((spare / 8) / (window_parts * per_rec)).clamp(1, MAX_PART_RECORDS as u64);
    let window = window_parts * (align_up(part_records * r) + 4096 + part_records * ENTRY_BYTES);
    let staging = staging_bytes(m);
    let read_ahead = (cfg.read_depth + PROVISION_AHEAD) as u64 * chunk_alloc + staging as u64;
    let fixed = FIXED_OVERHEAD + window + read_ahead;
    let arena_chunks = m.saturating_sub(fixed) / chunk_cost;
    if arena_chunks == 0 {
        return Err(EngineError::MemoryTooSmall {
            given: m,
            needed: fixed + chunk_cost,
            why: format!(
                "one chunk of {chunk_records} records, {} chunks read or prepared ahead and \
                 {window_parts} output parts in flight",
                cfg.read_depth + PROVISION_AHEAD
            ),
        });
    }
    Ok(Geometry {
        chunk_log2: log2,
        chunk_bytes: (chunk_records * r) as usize,
        part_records: part_records as usize,
        arena_chunks,
        arena_bytes: arena_chunks * chunk_cost,
        staging_bytes: staging,
        input_memory: fixed + arena_chunks * chunk_cost,
    })
}

/// Delimited records: chunks are byte ranges cut after a terminator, holding a varying number
/// of records (at most one per byte), so the record index reserves a slot per chunk byte and a
/// load is limited by bytes (chunks, entries and offsets) rather than by chunk count.
fn delimited_geometry(cfg: &SortConfig) -> Result<Geometry> {
    let m = cfg.memory;
    let threads = cfg.threads as u64;
    let window_parts = threads * PARTS_IN_FLIGHT_PER_THREAD as u64;
    // A chunk of one-byte records costs 21 bytes of memory per chunk byte: keep one chunk well
    // under the budget.
    let mut chunk = cfg.transfer as u64;
    if let Some(l) = cfg.chunk_records_log2 {
        chunk = chunk.min(1 << l);
    }
    while chunk > 4096 && chunk * (1 + ENTRY_BYTES + 4) * 4 > m {
        chunk /= 2;
    }
    // A chunk's buffer has room for the rest of its last record (see DELIM_SLACK); the bytes,
    // so the records, of one chunk are at most `most`.
    let most = chunk + delim_room(chunk as usize) as u64;
    let chunk_alloc = align_up(most);
    let log2 = 64 - most.leading_zeros();
    // Parts of lines of ~64 bytes, their window at most 1/8 of memory.
    let spare = m.saturating_sub(FIXED_OVERHEAD);
    let per_rec = 64 + ENTRY_BYTES;
    let part_records = ((spare / 8) / (window_parts * per_rec)).clamp(1, MAX_PART_RECORDS as u64);
    let window = window_parts * (part_records * per_rec + 4096);
    let staging = staging_bytes(m);
    let read_ahead = (cfg.read_depth + PROVISION_AHEAD) as u64 * chunk_alloc + staging as u64;
    let fixed = FIXED_OVERHEAD + window + read_ahead;
    let arena_bytes = m.saturating_sub(fixed);
    let worst_chunk = chunk_alloc + most * (ENTRY_BYTES + 4);
    if arena_bytes < worst_chunk {
        return Err(EngineError::MemoryTooSmall {
            given: m,
            needed: fixed + worst_chunk,
            why: format!("a chunk of {chunk} bytes of records with their entries, read-ahead and output parts"),
        });
    }
    Ok(Geometry {
        chunk_log2: log2,
        chunk_bytes: chunk as usize,
        part_records: part_records as usize,
        arena_chunks: arena_bytes / chunk_alloc,
        arena_bytes,
        staging_bytes: staging,
        input_memory: fixed + arena_bytes,
    })
}

/// The staging buffer: [`STAGING_BYTES`], or a 32nd of a small budget (at least one page).
fn staging_bytes(memory: u64) -> usize {
    (memory / 32 / 4096 * 4096).clamp(4096, STAGING_BYTES) as usize
}

/// Merge sizing for `runs` runs: (fan-in, levels, block bytes, memory).
pub(crate) fn merge_shape(cfg: &SortConfig, runs: u64) -> Result<(u64, u32, usize, u64)> {
    let m = cfg.memory.saturating_sub(FIXED_OVERHEAD);
    let r = cfg.format.record_size as u64;
    let out = MERGE_OUT_BUFFERS as u64;
    // Every block must hold at least one record. Blocks below MERGE_BLOCK_MIN are slow, so they
    // are used only when the budget cannot give a two-way merge otherwise.
    let mut min_block = align_up((MERGE_BLOCK_MIN as u64).max(r));
    if m / min_block < 4 + out {
        min_block = align_up(r.max(4096));
    }
    let mut fan_in = ((m / min_block).saturating_sub(out) / 2).min(MAX_FAN_IN as u64);
    if let Some(cap) = cfg.max_fan_in {
        fan_in = fan_in.min(cap as u64);
    }
    if fan_in < 2 {
        return Err(EngineError::MemoryTooSmall {
            given: cfg.memory,
            needed: FIXED_OVERHEAD + (4 + out) * min_block,
            why: "a two-way merge with its read and output blocks".into(),
        });
    }
    let k = runs.min(fan_in).max(2);
    let mut levels = 1u32;
    let mut reach = fan_in;
    while reach < runs {
        reach = reach.saturating_mul(fan_in);
        levels += 1;
    }
    let block = ((m / (2 * k + out)) / 4096 * 4096)
        .clamp(min_block, (cfg.merge_block as u64).max(min_block));
    Ok((fan_in, levels, block as usize, FIXED_OVERHEAD + (2 * k + out) * block))
}

/// Computes the plan and checks it against the machine: inputs present and whole, output
/// directory writable, memory enough, temp and output space enough.
pub fn plan(cfg: &SortConfig) -> Result<Plan> {
    let r = cfg.format.record_size as u64;
    let mut inputs = Vec::new();
    let mut total: Option<u64> = Some(0);
    let mut chunks: u64 = 0;
    let g = geometry(cfg)?;
    for input in &cfg.inputs {
        match input {
            Input::Stdin => {
                inputs.push(InputPlan { name: "-".into(), bytes: None });
                total = None;
            }
            Input::Path(p) => {
                let meta = std::fs::metadata(p)
                    .map_err(|e| EngineError::Input { path: p.clone(), source: e })?;
                if meta.is_dir() {
                    return Err(EngineError::Input {
                        path: p.clone(),
                        source: std::io::Error::other("is a directory"),
                    });
                }
                // Readability is checked here too, so a bad input stops the sort before output.
                std::fs::File::open(p)
                    .map_err(|e| EngineError::Input { path: p.clone(), source: e })?;
                if !meta.is_file() {
                    // A FIFO or device: its size is known only at its end, like standard input.
                    inputs.push(InputPlan { name: p.display().to_string(), bytes: None });
                    total = None;
                    continue;
                }
                let len = meta.len();
                if cfg.delim.is_none() && len % r != 0 {
                    let records = len / r;
                    return Err(EngineError::PartialRecord {
                        path: p.clone(),
                        len,
                        record_size: r as usize,
                        records,
                        leftover: len % r,
                        offset: records * r,
                    });
                }
                chunks += (len / r).div_ceil(1 << g.chunk_log2);
                total = total.map(|t| t + len);
                inputs.push(InputPlan { name: p.display().to_string(), bytes: Some(len) });
            }
        }
    }

    // The output directory must be writable before anything is read.
    let mut output_free = None;
    let mut out_dev = None;
    if let Output::Path(p) = &cfg.output {
        let dir = parent_dir(p);
        oxsort_io::check_dir_writable(&dir)?;
        output_free = Some(oxsort_io::free_space(&dir)?);
        out_dev = std::fs::metadata(&dir).ok().map(|m| m.dev());
    }

    let (passes, merge_mem) = match total {
        // Delimited records: how many a load holds is known only while reading.
        _ if cfg.delim.is_some() => {
            let (fan_in, _, _, mem) = merge_shape(cfg, 2)?;
            (Passes::Unknown { run_chunks: g.arena_chunks, fan_in }, mem)
        }
        None => {
            let (fan_in, _, _, mem) = merge_shape(cfg, 2)?;
            (Passes::Unknown { run_chunks: g.arena_chunks, fan_in }, mem)
        }
        Some(_) if chunks <= g.arena_chunks => (Passes::One, 0),
        Some(_) => {
            let runs = chunks.div_ceil(g.arena_chunks);
            let run_chunks = chunks.div_ceil(runs);
            let (fan_in, levels, block, mem) = merge_shape(cfg, runs)?;
            (Passes::Two { runs, run_chunks, fan_in, levels, merge_block: block }, mem)
        }
    };

    // Temp use: runs are striped over the directories; with more than one merge level the
    // peak holds every run plus one merged run being written.
    let mut temp = Vec::new();
    if let (Passes::Two { levels, .. }, Some(bytes)) = (&passes, total) {
        let dirs = cfg.temp_dirs.len() as u64;
        let share = bytes.div_ceil(dirs) * if *levels > 1 { 2 } else { 1 };
        for d in &cfg.temp_dirs {
            oxsort_io::check_dir_writable(d)?;
            temp.push(TempPlan { dir: d.clone(), bytes: share, free: oxsort_io::free_space(d)? });
        }
    } else if matches!(passes, Passes::Unknown { .. }) {
        // Runs are likely when the input is over half of what a load holds.
        let bytes = total.filter(|&t| t > g.arena_bytes / 2).unwrap_or(0);
        let dirs = cfg.temp_dirs.len() as u64;
        for d in &cfg.temp_dirs {
            oxsort_io::check_dir_writable(d)?;
            let share = bytes.div_ceil(dirs);
            temp.push(TempPlan { dir: d.clone(), bytes: share, free: oxsort_io::free_space(d)? });
        }
    }

    let plan = Plan {
        inputs,
        input_bytes: total,
        records: total.filter(|_| cfg.delim.is_none()).map(|t| t / r),
        record_size: r as usize,
        memory: cfg.memory,
        threads: cfg.threads,
        chunk_records_log2: g.chunk_log2,
        chunk_bytes: g.chunk_bytes,
        arena_chunks: g.arena_chunks,
        part_records: g.part_records,
        passes,
        memory_input_phase: g.input_memory,
        memory_merge_phase: merge_mem,
        temp,
        output: match &cfg.output {
            Output::Path(p) => p.display().to_string(),
            Output::Stdout => "-".into(),
        },
        output_free,
    };
    plan.check_space(out_dev)?;
    Ok(plan)
}

impl Plan {
    /// Checks temp and output space, adding up directories that share a filesystem.
    fn check_space(&self, out_dev: Option<u64>) -> Result<()> {
        let mut per_dev: Vec<(u64, u64, u64, PathBuf)> = Vec::new(); // dev, need, free, dir
        for t in &self.temp {
            let dev = std::fs::metadata(&t.dir).map(|m| m.dev()).unwrap_or(0);
            match per_dev.iter_mut().find(|e| e.0 == dev) {
                Some(e) => e.1 += t.bytes,
                None => per_dev.push((dev, t.bytes, t.free, t.dir.clone())),
            }
        }
        for (dev, need, free, dir) in &per_dev {
            // Runs stay until the output is complete, so they share the output's filesystem.
            let need = need + if Some(*dev) == out_dev { self.input_bytes.unwrap_or(0) } else { 0 };
            if need > *free {
                return Err(EngineError::NoTempSpace {
                    dir: dir.clone(),
                    needed: need,
                    free: *free,
                });
            }
        }
        if let (Some(free), Some(bytes)) = (self.output_free, self.input_bytes) {
            if bytes > free {
                return Err(EngineError::NoOutputSpace {
                    path: PathBuf::from(&self.output),
                    needed: bytes,
                    free,
                });
            }
        }
        Ok(())
    }

    /// The plan as a person reads it (`oxsort explain`).
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let size = |b: Option<u64>| b.map_or("unknown size".to_string(), human_bytes);
        let _ = writeln!(s, "oxsort plan");
        for i in &self.inputs {
            let _ = writeln!(s, "  input        {} ({})", i.name, size(i.bytes));
        }
        let _ = writeln!(
            s,
            "  records      {} of {} bytes ({})",
            self.records.map_or("unknown".to_string(), |r| r.to_string()),
            self.record_size,
            size(self.input_bytes)
        );
        let _ = writeln!(
            s,
            "  memory       {} budget, {} threads",
            human_bytes(self.memory),
            self.threads
        );
        let _ = writeln!(
            s,
            "  chunks       {} records ({}) per read; memory holds {} chunks ({} records)",
            1u64 << self.chunk_records_log2,
            human_bytes(self.chunk_bytes as u64),
            self.arena_chunks,
            self.arena_chunks << self.chunk_records_log2
        );
        match &self.passes {
            Passes::One => {
                let _ = writeln!(s, "  passes       one: the input fits in memory");
            }
            Passes::Two { runs, run_chunks, fan_in, levels, merge_block } => {
                let _ = writeln!(
                    s,
                    "  passes       two: {runs} runs of up to {} records, merged {} at a time in {levels} level{}",
                    run_chunks << self.chunk_records_log2,
                    (*runs).min(*fan_in),
                    if *levels == 1 { "" } else { "s" }
                );
                let _ = writeln!(
                    s,
                    "  merge        fan-in up to {fan_in}, {} read block per run (two per run)",
                    human_bytes(*merge_block as u64)
                );
            }
            Passes::Unknown { run_chunks, fan_in } => {
                let _ = writeln!(
                    s,
                    "  passes       decided while reading: one if the input fits, else runs of {} records merged up to {fan_in} at a time",
                    run_chunks << self.chunk_records_log2
                );
            }
        }
        let _ = writeln!(
            s,
            "  memory use   input phase {}, merge phase {}",
            human_bytes(self.memory_input_phase),
            human_bytes(self.memory_merge_phase)
        );
        if self.temp.is_empty() {
            let _ = writeln!(s, "  temp         none");
        }
        for t in &self.temp {
            let _ = writeln!(
                s,
                "  temp         {}: {} at peak, {} free",
                t.dir.display(),
                human_bytes(t.bytes),
                human_bytes(t.free)
            );
        }
        match self.output_free {
            Some(free) => {
                let _ = writeln!(
                    s,
                    "  output       {} ({} free there)",
                    self.output,
                    human_bytes(free)
                );
            }
            None => {
                let _ = writeln!(s, "  output       standard output");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_with(temp: Vec<TempPlan>, input: u64, output_free: Option<u64>) -> Plan {
        Plan {
            inputs: vec![InputPlan { name: "in.dat".into(), bytes: Some(input) }],
            input_bytes: Some(input),
            records: Some(input / 100),
            record_size: 100,
            memory: 1 << 30,
            threads: 2,
            chunk_records_log2: 17,
            chunk_bytes: 100 << 17,
            arena_chunks: 10,
            part_records: 1000,
            passes: Passes::Two {
                runs: 3,
                run_chunks: 10,
                fan_in: 3,
                levels: 1,
                merge_block: 1 << 20,
            },
            memory_input_phase: 0,
            memory_merge_phase: 0,
            temp,
            output: "out.dat".into(),
            output_free,
        }
    }

    #[test]
    fn too_little_temp_or_output_space_is_refused_with_the_numbers() {
        let dir = std::env::temp_dir();
        let short =
            plan_with(vec![TempPlan { dir: dir.clone(), bytes: 5000, free: 4000 }], 5000, None);
        match short.check_space(None) {
            Err(EngineError::NoTempSpace { needed: 5000, free: 4000, .. }) => {}
            other => panic!("expected NoTempSpace, got {other:?}"),
        }
        let msg = short.check_space(None).unwrap_err().to_string();
        assert!(msg.contains("5000") && msg.contains("4000"), "{msg}");
        // Temp on the output's filesystem must hold the runs and the output together.
        let dev = std::fs::metadata(&dir).unwrap().dev();
        let shared = plan_with(
            vec![TempPlan { dir: dir.clone(), bytes: 5000, free: 9000 }],
            5000,
            Some(9000),
        );
        assert!(matches!(
            shared.check_space(Some(dev)),
            Err(EngineError::NoTempSpace { needed: 10000, .. })
        ));
        assert!(shared.check_space(None).is_ok());
        let no_out = plan_with(vec![], 5000, Some(100));
        assert!(matches!(
            no_out.check_space(None),
            Err(EngineError::NoOutputSpace { needed: 5000, free: 100, .. })
        ));
    }
}

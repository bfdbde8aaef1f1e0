//! The oxsort engine: a stable external merge sort of fixed-size records that overlaps all I/O
//! with computation and checks its own output.
//!
//! - [`SortConfig`] says what to sort (inputs, output, record format) and with what (memory
//!   budget, threads, temp directories, I/O options); its builder validates it.
//! - [`plan()`] decides one pass or two, run and chunk sizes, merge fan-in and levels, and checks
//!   the plan against memory, free space and permissions before any work.
//! - [`sort()`] carries the plan out and returns [`SortStats`]; progress goes to the callback
//!   installed on the config.
//!
//! One pass: chunks are read with direct I/O while worker threads turn each into a sorted
//! microrun of 16-byte entries (80-bit key, 48-bit index); the output is then cut into parts by
//! value, each part sorted, gathered and verified in parallel and written in order.
//! Two passes: each memory-load is written as a sorted run to the temp directories (striped), then
//! runs are merged with a loser tree, in levels when memory limits the fan-in.
//!
//! Records are fixed-size (100-byte Sort Benchmark records by default) or end with a terminator
//! (`--lines`, `--nul`). The key is raw bytes at a fixed place (the fast path: the entry's
//! integer order is the key order) or any `oxsort_format::KeySpec`, normalized once per record
//! with ties between equal 10-byte prefixes settled on whole keys. Filters (INCLUDE/OMIT),
//! duplicate removal and merge/copy modes ride on the same passes.
//!
//! Every record read is summed into valsort's CRC32 checksum and every record written is summed
//! again and checked in order; a mismatch fails the sort and nothing appears under the output name.
//!
//! ```no_run
//! use oxsort_engine::{sort, Input, Output, SortConfig};
//! let cfg = SortConfig::builder(vec![Input::Path("in.dat".into())], Output::Path("out.dat".into()))
//!     .memory(1 << 30)
//!     .threads(2)
//!     .build()?;
//! let stats = sort(&cfg)?;
//! println!("{} records, checksum {}", stats.records, stats.checksum);
//! # Ok::<(), oxsort_engine::EngineError>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod config;
mod error;
mod inmem;
mod keys;
mod merge;
mod plan;
mod progress;
mod sink;
mod source;
mod stats;
mod sysinfo;
pub mod tuning;
mod verify;

use std::sync::Arc;
use std::time::Instant;

pub use config::{Input, Mode, Output, RecordFormat, SortConfig, SortConfigBuilder};
pub use error::{EngineError, Result};
pub use plan::{plan, InputPlan, Passes, Plan, TempPlan};
pub use progress::{Phase, Progress, ProgressFn};
pub use stats::{human_bytes, FileStats, PhaseStats, SortStats, ThreadStats};
pub use sysinfo::{available_memory, cores, peak_rss};
pub use verify::{checksum_hex, checksum_records, OrderCheck};

use merge::RunFile;
use oxsort_io::{AtomicOutput, TempDir};
use progress::Reporter;
use sink::{FileSink, Sink, StdoutSink};
use source::ChunkSource;
use stats::PhaseTimer;

/// Sorts as the configuration says. On success the output is complete, verified and under its
/// final name; on error nothing is under the output name and no temp file remains.
pub fn sort(cfg: &SortConfig) -> Result<SortStats> {
    let t0 = Instant::now();
    let plan = plan::plan(cfg)?;
    let g = plan::geometry(cfg)?;
    let fmt = cfg.format;
    let reporter = Reporter::new(cfg.progress.clone(), cfg.cancel.clone());

    let output = match &cfg.output {
        Output::Path(p) => Some(AtomicOutput::create(p, &cfg.io)?),
        Output::Stdout => None,
    };
    let mut sink: Box<dyn Sink + Send> = match &output {
        Some(o) => {
            if let Some(bytes) = plan.input_bytes {
                o.file().preallocate(bytes)?;
            }
            Box::new(FileSink::named(o.file().clone(), plan.output.clone()))
        }
        None => Box::new(StdoutSink::new()),
    };

    let mut stats = SortStats {
        memory_budget: cfg.memory,
        threads: cfg.threads,
        passes: 1,
        ..SortStats::default()
    };
    let mut source =
        ChunkSource::new(&cfg.inputs, fmt.record_size, cfg.delim, g.chunk_bytes, cfg.io.clone());
    source.read_depth = cfg.read_depth;
    source.provision(cfg.threads);
    let mut in_checksum = 0u128;
    let mut in_records = 0u64;
    let mut read_records = 0u64;
    let check;

    let timer = PhaseTimer::start("input");
    let run_chunks = match &plan.passes {
        plan::Passes::One => u64::MAX,
        plan::Passes::Two { run_chunks, .. } => *run_chunks,
        plan::Passes::Unknown { run_chunks, .. } => *run_chunks,
    };
    let keys = keys::Keys::new(fmt, cfg.key.clone(), cfg.mode == Mode::Copy, cfg.delim);
    let ctx = inmem::Ctx {
        g: &g,
        keys: &keys,
        threads: cfg.threads,
        reporter: &reporter,
        filter: cfg.filter.as_deref(),
        mode: cfg.mode,
        unique: cfg.unique,
    };
    let quiet = reporter.quiet();
    let run_ctx = inmem::Ctx { reporter: &quiet, ..ctx };
    let mut temps: Vec<TempDir> = Vec::new();
    let mut runs: Vec<RunFile> = Vec::new();
    let mut run_dropped = verify::OrderCheck::default();
    let mut run_writes: Vec<FileStats> = Vec::new();
    loop {
        let (loaded, exhausted) = inmem::load(&ctx, &mut source, run_chunks, plan.input_bytes)?;
        in_checksum += loaded.checksum;
        in_records += loaded.records;
        read_records += loaded.read;
        if exhausted {
            // Nothing more to read: free the buffers populated ahead.
            source.stop_provision();
        }
        if runs.is_empty() && exhausted {
            // One pass: everything is in memory.
            let mut files = std::mem::take(&mut source.files);
            let input_phase = timer.finish(std::mem::take(&mut files));
            stats.phases.push(input_phase);
            let out_timer = PhaseTimer::start("output");
            check = inmem::emit(&ctx, &loaded, sink.as_mut(), true, progress::Phase::Output)?;
            stats.phases.push(out_timer.finish(vec![sink.stats()]));
            break;
        }
        // Two passes: this load becomes a run.
        if temps.is_empty() {
            for d in &cfg.temp_dirs {
                temps.push(TempDir::new(d)?);
            }
        }
        let dir = &temps[runs.len() % temps.len()];
        let name = format!("run-{:06}", runs.len());
        let file = Arc::new(dir.create_file(&name, &cfg.io)?);
        file.preallocate(loaded.bytes)?;
        let mut run_sink = FileSink::new(file.clone());
        let formed = inmem::emit(&run_ctx, &loaded, &mut run_sink, false, progress::Phase::Input)?;
        run_writes.push(run_sink.stats());
        // With duplicate removal a run holds fewer records than were loaded.
        let bytes = formed.bytes;
        file.set_len(bytes)?;
        run_dropped.dropped += formed.dropped;
        run_dropped.dropped_checksum += formed.dropped_checksum;
        stats.bytes_spilled += bytes;
        runs.push(RunFile { file, path: dir.path().join(&name), bytes });
        for b in loaded.chunks {
            source.recycle(b);
        }
        if exhausted {
            let mut files = std::mem::take(&mut source.files);
            files.append(&mut run_writes);
            stats.phases.push(timer.finish(files));
            let mut merged =
                merge_runs(cfg, &keys, &mut stats, runs, &temps, sink.as_mut(), &reporter)?;
            merged.dropped += run_dropped.dropped;
            merged.dropped_checksum += run_dropped.dropped_checksum;
            check = merged;
            break;
        }
    }
    let bytes_read = source.bytes_read;
    drop(source);

    // Verification: what was written (plus the duplicates dropped) is what was read, in order.
    if check.records + check.dropped != in_records
        || check.checksum + check.dropped_checksum != in_checksum
    {
        return Err(EngineError::Verify(format!(
            "wrote {} records (and dropped {}) with checksum {}, read {} records with checksum {}",
            check.records,
            check.dropped,
            checksum_hex(check.checksum + check.dropped_checksum),
            in_records,
            checksum_hex(in_checksum)
        )));
    }
    if cfg.unique && check.duplicates > 0 {
        return Err(EngineError::Verify(format!(
            "{} duplicate keys remain in the output of a unique sort",
            check.duplicates
        )));
    }
    if check.unordered > 0 {
        return Err(EngineError::Verify(format!(
            "{} records out of order in the output, the first at record {}",
            check.unordered,
            check.first_unordered.unwrap_or(0)
        )));
    }
    drop(sink);
    if let Some(o) = output {
        // The file was preallocated for every record read; a filter or -u writes fewer.
        o.file().set_len(check.bytes)?;
        o.commit()?;
    }
    drop(temps);
    stats.records = read_records;
    stats.records_written = check.records;
    stats.bytes = bytes_read;
    stats.checksum = checksum_hex(check.checksum);
    stats.duplicate_keys = check.duplicates;
    stats.peak_rss = sysinfo::peak_rss();
    stats.elapsed_s = t0.elapsed().as_secs_f64();
    Ok(stats)
}

/// Merges the runs into the sink, in levels when there are more runs than the fan-in.
fn merge_runs(
    cfg: &SortConfig,
    keys: &keys::Keys,
    stats: &mut SortStats,
    mut runs: Vec<RunFile>,
    temps: &[TempDir],
    sink: &mut (dyn Sink + Send),
    reporter: &Reporter,
) -> Result<verify::OrderCheck> {
    let timer = PhaseTimer::start("merge");
    let (fan_in, _, _, _) = plan::merge_shape(cfg, runs.len() as u64)?;
    let fan_in = fan_in as usize;
    stats.passes = 2;
    stats.runs = runs.len() as u64;
    stats.fan_in = runs.len().min(fan_in) as u64;
    let mut files = Vec::new();
    // Duplicates dropped by intermediate merges, for the final verification.
    let mut carried = verify::OrderCheck::default();
    let mut level = 1u32;
    let mut seq = 0usize;
    while runs.len() > fan_in {
        let (_, _, block, _) = plan::merge_shape(cfg, fan_in as u64)?;
        let mut next = Vec::new();
        let mut rest = runs.into_iter().peekable();
        while rest.peek().is_some() {
            let group: Vec<RunFile> = rest.by_ref().take(fan_in).collect();
            if group.len() == 1 {
                next.extend(group);
                continue;
            }
            let dir = &temps[seq % temps.len()];
            let name = format!("merge-{level}-{seq:06}");
            seq += 1;
            let file = Arc::new(dir.create_file(&name, &cfg.io)?);
            let bytes: u64 = group.iter().map(|r| r.bytes).sum();
            file.preallocate(bytes)?;
            let mut run_sink = FileSink::new(file.clone());
            let quiet = reporter.quiet();
            let opts = merge::MergeOpts {
                keys,
                block,
                io: &cfg.io,
                verify: false,
                unique: cfg.unique,
                reporter: &quiet,
            };
            let (dropped, read) = merge::merge(&group, &opts, &mut run_sink)?;
            carried.dropped += dropped.dropped;
            carried.dropped_checksum += dropped.dropped_checksum;
            let bytes = dropped.bytes;
            file.set_len(bytes)?;
            files.extend(read);
            files.push(run_sink.stats());
            stats.bytes_spilled += bytes;
            for r in group {
                let _ = std::fs::remove_file(&r.path);
            }
            next.push(RunFile { file, path: dir.path().join(&name), bytes });
        }
        runs = next;
        level += 1;
    }
    stats.merge_levels = level;
    let (_, _, block, _) = plan::merge_shape(cfg, runs.len() as u64)?;
    let opts =
        merge::MergeOpts { keys, block, io: &cfg.io, verify: true, unique: cfg.unique, reporter };
    let (mut check, read) = merge::merge(&runs, &opts, sink)?;
    check.dropped += carried.dropped;
    check.dropped_checksum += carried.dropped_checksum;
    files.extend(read);
    files.push(sink.stats());
    stats.phases.push(timer.finish(files));
    Ok(check)
}

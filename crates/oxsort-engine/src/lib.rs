//! The oxsort engine: a stable external merge sort of fixed-size records that overlaps all I/O
//! with computation and checks its own output.
//!
//! - [`SortConfig`] says what to sort (inputs, output, and a [`SortSpec`]: record layout, key,
//!   filter, duplicate removal, mode) and with what (memory budget, threads, temp directories,
//!   I/O options); its builder validates it and compiles the spec into a [`SortKey`].
//! - [`plan()`] decides one pass or two, run and chunk sizes, the merge schedule level by level,
//!   and checks the plan against memory, free space and permissions before any work.
//! - [`sort()`] carries the plan out as it is and returns [`SortStats`]; progress goes to the
//!   callback installed on the config.
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
//! [`SortStats`] accounts for every record: read = written + dropped by the filter + dropped as
//! duplicates, and so do their checksums.
//!
//! Two more doors use the same reader and merge: [`check()`] reads an input once and returns the
//! first record out of key order ([`Disorder`]), and [`merge_sources()`] merges a caller's
//! sorted files and byte streams ([`SortedSource`]) into one verified output file.
//!
//! Before it starts, a sort removes what killed sorts left in its temp and output directories
//! ([`reclaim_leftovers`], over `oxsort_io::sweep`): their owners' locks tell them apart from
//! the files of sorts still running.
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

mod arena;
mod bucket;
mod check;
mod chunk;
mod config;
mod error;
mod hole;
mod inmem;
mod journal;
mod load_rule;
mod load_run;
mod merge;
mod outfil;
mod output;
mod plan;
mod progress;
mod resume;
mod rewrite;
mod run_source;
mod sink;
mod small;
mod sorted;
mod source;
mod spill;
mod stats;
mod sysinfo;
pub mod tuning;
mod verify;
mod vsink;
mod window;

use std::time::Instant;

pub use check::{check, check_config, CheckOptions, Disorder, KeyOrder};
pub use config::{memory_budget, Input, Output, PassChoice, SortConfig, SortConfigBuilder, Stream};
pub use error::{error_message, resume_temp_dir, EngineError, Result};
pub use journal::{remove_resume_dir, resume_dirs, ResumeDir};
pub use oxsort_format::{Mode, SortKey, SortSpec};
pub use oxsort_io::human_bytes;
pub use oxsort_io::IoOptions;
pub use plan::{
    plan, plan_to_show, Geometry, InputPlan, MergeLevel, MergeSchedule, MergeSizing, Passes, Plan,
    TempPlan,
};
pub use progress::{Phase, Progress, ProgressFn};
pub use small::small_input_limit;
pub use sorted::{merge_sources, MergeSourcesOptions, SortedSource, SourcesMerged};
pub use stats::{
    FileStats, OutfilRecords, PhaseStats, Reclaimed, SortStats, TextAsRecords, ThreadStats,
};
pub use sysinfo::{available_memory, cores, cpu_times, peak_rss, reset_peak_rss};
pub use verify::{checksum_hex, checksum_records, OrderCheck};

use oxsort_io::AtomicOutput;
use progress::Reporter;
use sink::{FileSink, Sink, StreamSink};
use source::ChunkSource;
use spill::{RunKind, SpillRoom};
use stats::{Meters, PhaseTimer};

/// Sorts as the configuration says. On success the output is complete, verified and under its
/// final name; on error nothing is under the output name and no temp file remains.
///
/// The sort carries out [`plan()`]'s plan as it is: the input phase reads memory-loads of the
/// plan's size; a load that holds the whole input is written straight to the output (one pass),
/// otherwise each becomes a run in the spill room and the runs are merged by the plan's
/// schedule for their number.
///
/// With [`SortConfigBuilder::small_inputs`], delimited records whose inputs turn out to hold
/// at most [`small_input_limit`] bytes are sorted in the calling thread instead, with the
/// same verification (a stream found bigger goes on into the plan, nothing read lost).
pub fn sort(cfg: &SortConfig) -> Result<SortStats> {
    match small::try_sort(cfg)? {
        small::Outcome::Sorted(stats) => Ok(*stats),
        small::Outcome::Planned => sort_planned(&cfg.resolved()),
        small::Outcome::Handoff(h) => h.run(&cfg.resolved(), sort_planned),
    }
}

/// [`sort()`] by the plan.
fn sort_planned(cfg: &SortConfig) -> Result<SortStats> {
    let t0 = Instant::now();
    // Leftovers of killed sorts go first: the plan's free-space check counts their room.
    let reclaimed = reclaim_leftovers(cfg);
    let plan = plan::plan(cfg)?;
    let g = &plan.geometry;
    // SKIPREC/STOPAFT: the part of the inputs read (found before any output is made).
    let (window, limit) = window::window(cfg, &plan.inputs)?;
    let reporter = Reporter::new(cfg.progress.clone(), cfg.cancel.clone());
    let meters = Meters::default();
    // Whether the output's order and checksum are checked here, or only its records counted
    // (the caller checks the rest: `SortConfigBuilder::checked_by_caller`).
    let verify_output = !cfg.checked_by_caller;

    // A resumable sort keeps its runs in a directory named after what it sorts, and takes over
    // what an interrupted sort of the same inputs left there (before any output is made).
    let (mut room, recovered) = if cfg.resume {
        let header = journal::header(cfg)?;
        let name = journal::dir_name(&header);
        let mut room = SpillRoom::resumable(&cfg.temp_dirs, &cfg.io, name, header.clone());
        let timer = PhaseTimer::start("resume", &meters);
        let mut recovered = resume::recover(
            &mut room,
            &header,
            cfg.restart,
            cfg.key.layout(),
            cfg.threads,
            cfg.memory,
        )?;
        recovered.phase = Some(timer.finish(std::mem::take(&mut recovered.files)));
        (room, recovered)
    } else {
        (SpillRoom::new(&cfg.temp_dirs, &cfg.io), resume::Recovered::default())
    };
    if plan.input_bytes.is_some() {
        // The peak is known only for inputs of known size.
        room.plan_space(plan.temp.iter().map(|t| t.bytes));
    }

    // A file output is written under a temporary name and renamed when verified; a stream
    // (standard output, a device, a FIFO) is written in order where it is.
    let output = match &cfg.output {
        Output::Path(p) if !plan.output_stream => {
            Some(AtomicOutput::create_spare(p, &cfg.io, &config::spare_dir(cfg))?)
        }
        _ => None,
    };
    let mut sink: Box<dyn Sink + Send> = match (&output, &cfg.output) {
        (Some(o), _) => {
            // The records read, at the size they are written (INREC and OUTREC reshape them).
            let bytes = match (plan.records, cfg.key.record_size()) {
                (Some(n), Some(r)) => Some(cfg.key.output_bytes(n, n * r as u64)),
                _ => plan.input_bytes,
            };
            if let Some(bytes) = bytes {
                o.file().preallocate(bytes)?;
            }
            Box::new(FileSink::named(o.file().clone(), plan.output.clone()))
        }
        (None, Output::Path(p)) => {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(p)
                .map_err(|e| EngineError::Output { path: p.clone(), why: e.to_string() })?;
            Box::new(StreamSink::new(Box::new(f), p.clone()))
        }
        (None, Output::Stdout) => Box::new(StreamSink::stdout()),
        (None, Output::Stream(st)) => {
            let w = st.take_writer().map_err(|e| EngineError::Output {
                path: std::path::PathBuf::from(st.name()),
                why: e.to_string(),
            })?;
            Box::new(StreamSink::new(w, std::path::PathBuf::from(st.name())))
        }
    };
    // OUTFIL outputs: created (under temporary names) before anything is read, written from
    // the records after OUTREC as they stream to the main output, renamed all together at
    // the end.
    let outfil_files = match cfg.key.outfil() {
        Some(p) => Some(outfil::OutfilFiles::create(
            &oxsort_format::Outfil::outputs(&cfg.spec.outfil, p),
            &cfg.outfil_paths,
            &cfg.io,
            &config::spare_dir(cfg),
        )?),
        None => None,
    };
    if let (Some(p), Some(files), Some(size)) =
        (cfg.key.outfil(), &outfil_files, cfg.key.record_size())
    {
        let len = cfg.key.outrec().map_or(size, |r| r.out_len());
        sink =
            Box::new(outfil::OutfilSink::new(sink, p.clone(), len, files.clone(), g.staging_bytes));
    }
    if let Some(outrec) = cfg.key.outrec() {
        // OUTREC reshapes what is written, after the order and checksums are verified.
        sink = Box::new(sink::ReformatSink::new(sink, outrec.clone(), g.staging_bytes));
    }
    if let Some(build) = cfg.key.var_outrec() {
        // OUTREC BUILD on RDW-prefixed records: each rebuilt with its new length in its RDW.
        let layout = cfg.key.layout();
        sink = Box::new(vsink::VarReformatSink::new(sink, build.clone(), layout, g.staging_bytes));
    }
    // XSUM's file: created (under a temporary name) before anything is read, renamed with
    // the output; a device or a FIFO is written in order where it is.
    let (xsum_file, xsum) = xsum_output(cfg)?;
    if let Some(fields) = &cfg.spec.sum {
        // SUM adds the fields of equal keys as the verified records stream to the output
        // (and XSUM writes the records it deletes).
        sink = Box::new(sink::SumSink::new(
            sink,
            cfg.key.clone(),
            fields.clone(),
            g.staging_bytes,
            xsum,
        ));
    }

    let mut stats = SortStats {
        memory_budget: cfg.memory,
        threads: cfg.threads,
        passes: 1,
        notes: plan.notes.iter().chain(&recovered.notes).cloned().collect(),
        runs_reused: recovered.runs.len() as u64,
        bytes_reused: recovered.runs.iter().map(|r| r.bytes).sum(),
        reclaimed,
        phases: recovered.phase.iter().cloned().collect(),
        ..SortStats::default()
    };
    let mut source = ChunkSource::new(
        &cfg.inputs,
        cfg.key.input_layout(),
        g.chunk_bytes,
        g.read_depth,
        cfg.io.clone(),
    );
    // Each input is read as the plan saw it: a file over the length planned (a different
    // length read is an error), anything else as a stream to its end.
    source.planned(&plan.inputs.iter().map(|i| i.bytes).collect::<Vec<_>>());
    if config::an_input_is_an_output(cfg) {
        source.never_map();
    } else if plan.input_mapped {
        match (&plan.passes, plan.input_bytes) {
            // Delimited records: mapped if the first piece says one load holds them.
            (Passes::Unknown { .. }, Some(total)) => source.map_if_one_load(source::OneLoad {
                total,
                // What a load may take at the inputs' end (`load_rule::takes_the_rest`).
                budget: g.arena_bytes + g.read_ahead_bytes,
                chunks: load_rule::chunks_at_most(plan.run_chunks(), g.chunk_log2),
                entry_bytes: g.entry_bytes,
            }),
            _ => source.map_files_on_disk(),
        }
    }
    // A line longer than a chunk grows it, up to what a load of the budget holds.
    source.longest_record(usize::try_from(g.arena_bytes).unwrap_or(usize::MAX));
    if let Some(at) = recovered.position() {
        source.skip_to(at);
    }
    if let Some(w) = &window {
        source.window(&w.ranges);
    }
    if let Some(l) = limit {
        source.limit(l);
    }
    // Chunks never span two inputs: each one after the first may add a partial chunk.
    let buffers = plan
        .input_bytes
        .map(|b| b.div_ceil(g.chunk_bytes as u64) + cfg.inputs.len().saturating_sub(1) as u64);
    source.provision(cfg.threads, &meters, buffers);
    let mut in_checksum = 0u128;
    let mut in_records = 0u64;
    let mut read_records = 0u64;
    let mut filtered_checksum = 0u128;
    let mut run_dropped = verify::OrderCheck::default();
    // What the runs taken over hold (and dropped as duplicates) is part of the sort's tally.
    for r in &recovered.formed {
        in_checksum += r.in_checksum;
        in_records += r.in_records;
        read_records += r.read;
        run_dropped.dropped += r.in_records - r.file.records;
        run_dropped.dropped_checksum += r.in_checksum - r.file.checksum;
    }
    run_dropped.dropped += recovered.merge_dropped.0;
    run_dropped.dropped_checksum += recovered.merge_dropped.1;
    let mut formed_runs = recovered.formed.len() as u64;
    let check;

    let streams = matches!(plan.passes, plan::Passes::Stream { .. });
    let timer = PhaseTimer::start(if streams { "copy" } else { "input" }, &meters);
    let numbering = std::sync::Mutex::new(oxsort_format::Scratch::default());
    let ctx = inmem::Ctx {
        g,
        keys: &cfg.key,
        threads: cfg.threads,
        reporter: &reporter,
        meters: &meters,
        filter: cfg.spec.filter.as_ref(),
        mode: cfg.spec.mode,
        unique: cfg.spec.unique,
        numbering: cfg.key.inrec().filter(|p| p.numbers()).map(|_| &numbering),
    };
    let quiet = reporter.quiet();
    let run_ctx = inmem::Ctx { reporter: &quiet, ..ctx };
    let mut runs = recovered.runs;
    let mut run_writes: Vec<FileStats> = Vec::new();
    // What a streamed copy has written so far.
    let mut streamed = verify::OrderCheck::default();
    // Memory one load is done with that the next one takes over (besides the chunk buffers,
    // which the source keeps): its entry arena or segments and its output's piece buffers.
    let mut spare_entries = inmem::SpareEntries::default();
    let mut pieces = output::PieceSpares::default();
    loop {
        let (loaded, exhausted) = inmem::load(
            &ctx,
            &mut source,
            plan.run_chunks(),
            plan.input_bytes,
            plan.entry_slots(),
            std::mem::take(&mut spare_entries),
        )?;
        in_checksum += loaded.checksum;
        in_records += loaded.records;
        stats.bucketed_loads += u64::from(loaded.buckets.is_some());
        read_records += loaded.read;
        filtered_checksum += loaded.filtered_checksum;
        if exhausted {
            // Nothing more to read: free the buffers populated ahead or kept for reuse, or keep
            // the latter for the merge of a sort that wrote runs.
            source.finish(!streams && !runs.is_empty());
        }
        if streams {
            // A copy: each load goes to the output after the ones before it, as it is read
            // (its progress is the input's).
            let c = output::emit(
                &run_ctx,
                &loaded,
                sink.as_mut(),
                verify_output,
                progress::Phase::Input,
                streamed.bytes,
                &mut pieces,
            )?;
            streamed.append(&c);
            if !exhausted {
                spare_entries = loaded.recycle(&mut source);
                continue;
            }
            sink.finish()?;
            let mut files = std::mem::take(&mut source.files);
            files.push(sink.stats());
            stats.phases.push(timer.finish(files));
            check = std::mem::take(&mut streamed);
            break;
        }
        if runs.is_empty() && exhausted {
            // One pass: everything is in memory.
            let files = std::mem::take(&mut source.files);
            stats.phases.push(timer.finish(files));
            let out_timer = PhaseTimer::start("output", &meters);
            check = output::emit(
                &ctx,
                &loaded,
                sink.as_mut(),
                verify_output,
                progress::Phase::Output,
                0,
                &mut pieces,
            )?;
            sink.finish()?;
            stats.phases.push(out_timer.finish(vec![sink.stats()]));
            break;
        }
        // Two passes: this load becomes a run (a resumed sort may find nothing left to read),
        // but for the last one when the merge's buffers fit beside it: that one is merged from
        // memory.
        let keep = exhausted
            && !runs.is_empty()
            && loaded.records > 0
            && plan.keeps_last_load(runs.len() as u64 + 1, cfg.resume);
        if !keep && (loaded.read > 0 || runs.is_empty()) {
            let (mut run, mut run_sink) = room.create(RunKind::Formed, loaded.bytes)?;
            let formed = output::emit(
                &run_ctx,
                &loaded,
                &mut run_sink,
                false,
                progress::Phase::Input,
                0,
                &mut pieces,
            )
            .map_err(|e| room.explain(e))?;
            run_writes.push(run_sink.stats());
            // With duplicate removal a run holds fewer records than were loaded.
            room.finish(&mut run, formed.bytes)?;
            run.records = loaded.records - formed.dropped;
            run.checksum = loaded.checksum - formed.dropped_checksum;
            room.journal_run(
                &run,
                source.position(),
                loaded.records,
                loaded.checksum,
                loaded.read,
            )?;
            run_dropped.dropped += formed.dropped;
            run_dropped.dropped_checksum += formed.dropped_checksum;
            runs.push(run);
            formed_runs += 1;
        }
        if !exhausted {
            // The next load reads into this one's buffers and entries.
            spare_entries = loaded.recycle(&mut source);
            continue;
        }
        // The input phase's memory goes before the merge takes its own, but for the chunk
        // buffers the merge reads its runs into (memory touched already costs no page faults;
        // fresh memory costs a page fault per page, on a VM the host's), and a kept load.
        let kept = if keep {
            formed_runs += 1;
            Some(loaded)
        } else {
            drop(loaded.recycle(&mut source));
            None
        };
        drop(std::mem::take(&mut pieces));
        oxsort_io::trim_heap();
        let spares = source.take_spares();
        let mut files = std::mem::take(&mut source.files);
        files.append(&mut run_writes);
        stats.phases.push(timer.finish(files));
        let schedule = plan.schedule_for(runs.len() as u64 + u64::from(keep));
        let merge_timer = PhaseTimer::start("merge", &meters);
        stats.passes = 2;
        stats.runs = formed_runs;
        stats.fan_in = schedule.levels.iter().map(|l| l.fan_in.min(l.inputs)).max().unwrap_or(0);
        stats.merge_levels = schedule.levels.len() as u32 + recovered.levels;
        let opts = merge::MergeOpts {
            keys: &cfg.key,
            meters: &meters,
            unique: cfg.spec.unique,
            reporter: &reporter,
        };
        let merged = merge::merge_runs(
            runs,
            &schedule,
            &mut room,
            &opts,
            (verify_output, spares),
            kept.as_ref().map(|l| load_run::LoadRun::new(&ctx, l)),
            sink.as_mut(),
        )?;
        sink.finish()?;
        stats.phases.push(merge_timer.finish(merged.files));
        let mut c = merged.check;
        c.dropped += run_dropped.dropped;
        c.dropped_checksum += run_dropped.dropped_checksum;
        check = c;
        break;
    }
    let bytes_read = source.bytes_read;
    let (skipped_by_limit, stopped_after) = source.limited();
    stats.warnings = std::mem::take(&mut source.warnings);
    drop(source);

    // A mapped input is read twice from its pages (its keys, then its records for the
    // output): the likely cause of a checksum that differs is a file written meanwhile.
    let rewritten = verify_output && plan.input_mapped && check.checksum_differs(in_checksum);
    let checked = if verify_output {
        check.verify(in_records, in_checksum, cfg.spec.unique)
    } else {
        check.verify_count(in_records)
    };
    checked.map_err(|e| match e {
        EngineError::Verify(why) if rewritten => {
            EngineError::Verify(format!("{why}: was an input written to while it was sorted?"))
        }
        e => e,
    })?;
    // A cancel that came while the last records were written still stops the commit: a
    // caller feeding the sort through a stream cancels it to say the stream is not whole.
    reporter.check()?;
    let tally = sink.tally();
    if let Some(phase) = stats.phases.last_mut() {
        phase.files.extend(sink.side_files());
    }
    drop(sink);
    if let Some(x) = &tally.xsum {
        check_xsum(x, &check, tally.summed, cfg.key.record_size())?;
    }
    let outfil_reports = outfil_files.as_ref().map(|f| f.reports()).unwrap_or_default();
    if let Some(f) = outfil_files {
        f.commit()?;
    }
    // All or none: the OUTFIL and XSUM outputs go with the main output.
    // (An XSUM file is removed only when this sort put it there: never a device or a FIFO.)
    let undo = |xsum_renamed: bool| {
        for r in &outfil_reports {
            let _ = std::fs::remove_file(&r.path);
        }
        if let (true, Some(p)) = (xsum_renamed, &cfg.xsum) {
            let _ = std::fs::remove_file(p);
        }
    };
    let mut xsum_renamed = false;
    if let (Some(o), Some(x)) = (xsum_file, &tally.xsum) {
        if let Err(e) = o.file().set_len(x.bytes).and_then(|()| o.commit()) {
            undo(false);
            return Err(e.into());
        }
        xsum_renamed = true;
    }
    if let Some(o) = output {
        // The file was preallocated for every record read; a filter or -u writes fewer.
        let done = o.file().set_len(tally.bytes.unwrap_or(check.bytes)).and_then(|()| o.commit());
        if let Err(e) = done {
            undo(xsum_renamed);
            return Err(e.into());
        }
    }
    for r in &outfil_reports {
        stats.outfil.push(OutfilRecords { line: r.line, name: r.name.clone(), records: r.records });
        stats.notes.push(format!(
            "OUTFIL (line {}) {} -> {}: {} data records{}",
            r.line,
            r.name,
            r.path.display(),
            r.records,
            if r.report_lines > 0 {
                format!(" and {} report lines", r.report_lines)
            } else {
                String::new()
            }
        ));
        if let (Some(st), Some(phase)) = (&r.stats, stats.phases.last_mut()) {
            phase.files.push(st.clone());
        }
    }
    stats.bytes_spilled = room.bytes_spilled;
    if cfg.resume {
        // Done: nothing is left to resume.
        room.remove_all();
    } else {
        drop(room);
    }
    stats.records = read_records;
    stats.records_written = check.records - tally.summed;
    if cfg.spec.sum.is_some() {
        let overflows = match tally.overflows {
            0 => "no sum overflowed".to_string(),
            n => format!("{n} left unsummed (their sum would overflow)"),
        };
        stats.notes.push(format!(
            "SUM FIELDS: {} records added into the first of their key, {overflows}; checksums \
             are of the records before summing",
            tally.summed
        ));
    }
    if let (Some(x), Some(p)) = (&tally.xsum, &cfg.xsum) {
        stats.notes.push(format!(
            "XSUM: the {} records SUM deleted were written to {} ({} bytes)",
            x.records,
            p.display(),
            x.bytes
        ));
    }
    stats.bytes = bytes_read + recovered.input_bytes_covered;
    stats.input_bytes_read = bytes_read;
    if verify_output {
        stats.checksum = checksum_hex(check.checksum);
    }
    stats.dropped_by_filter = read_records - in_records;
    if let Some(w) = &window {
        stats.skipped_records = w.skipped;
        stats.unread_records = w.unread;
        // STOPAFT found as the records streamed in: what the window held past its end.
        if let Some(passed) = stopped_after {
            stats.unread_records += w.records.saturating_sub(passed);
        }
    }
    stats.skipped_records += skipped_by_limit;
    stats.dropped_duplicates = check.dropped + tally.summed;
    stats.dropped_checksum = checksum_hex(check.dropped_checksum + filtered_checksum);
    stats.input_checksum = checksum_hex(in_checksum + filtered_checksum);
    // Of the output: the records summed away were duplicates of the record they went into.
    stats.duplicate_keys = check.duplicates.saturating_sub(tally.summed);
    stats.peak_rss = sysinfo::peak_rss();
    stats.elapsed_s = t0.elapsed().as_secs_f64();
    Ok(stats)
}

/// The `XSUM` output of `cfg`: a file created under a temporary name (renamed when the sort
/// succeeded) and its sink, or a stream (a device, a FIFO) and its sink.
type XsumOutput = (Option<AtomicOutput>, Option<Box<dyn Sink + Send>>);

fn xsum_output(cfg: &SortConfig) -> Result<XsumOutput> {
    let Some(p) = &cfg.xsum else { return Ok((None, None)) };
    let failed = |e: &dyn std::fmt::Display| EngineError::Output {
        path: p.clone(),
        why: format!("XSUM (SORTXSUM): {e}"),
    };
    if oxsort_io::probe_output(p).map_err(|e| failed(&e))? == oxsort_io::OutputTarget::Stream {
        let f = std::fs::OpenOptions::new().write(true).open(p).map_err(|e| failed(&e))?;
        return Ok((None, Some(Box::new(StreamSink::new(Box::new(f), p.clone())))));
    }
    let o =
        AtomicOutput::create_spare(p, &cfg.io, &config::spare_dir(cfg)).map_err(|e| failed(&e))?;
    let sink = FileSink::named(o.file().clone(), p.display().to_string());
    Ok((Some(o), Some(Box::new(sink))))
}

/// Checks what `SUM ...,XSUM` wrote against the verified records that streamed into it: the
/// records kept and those written to `SORTXSUM` are, between them, every record sorted (in
/// count and checksum), the ones written are the ones summed away, and their bytes are whole
/// records.
fn check_xsum(
    x: &sink::XsumTally,
    check: &verify::OrderCheck,
    summed: u64,
    record_size: Option<usize>,
) -> Result<()> {
    let whole = record_size.is_none_or(|r| x.bytes == x.records * r as u64);
    if x.kept + x.records != check.records
        || x.kept_checksum + x.checksum != check.checksum
        || x.records != summed
        || !whole
    {
        return Err(EngineError::Verify(format!(
            "SUM kept {} records and wrote {} to XSUM ({} bytes; checksums {} and {}), of {} \
             sorted records with checksum {} ({} summed away)",
            x.kept,
            x.records,
            x.bytes,
            checksum_hex(x.kept_checksum),
            checksum_hex(x.checksum),
            check.records,
            checksum_hex(check.checksum),
            summed
        )));
    }
    Ok(())
}

/// Sweeps the temp directories and the output's directory for leftovers of killed sorts
/// (see [`oxsort_io::leftovers`]): their owners are gone, and they hold disk space this sort may
/// need. [`sort()`] does it, once, before it plans, and reports it in [`SortStats::reclaimed`].
/// Best effort: a directory that cannot be listed is the plan's to report. Returns one entry per directory that held leftovers.
pub fn reclaim_leftovers(cfg: &SortConfig) -> Vec<Reclaimed> {
    let mut dirs: Vec<std::path::PathBuf> = cfg.temp_dirs.clone();
    // The file written: the output's own, or the one an output stream's reader writes (a
    // table sort's), whose temporary a sort killed before it was renamed leaves there too.
    let written = match &cfg.output {
        Output::Path(p) => Some(p.as_path()),
        Output::Stream(s) => s.target(),
        _ => None,
    };
    if let Some(p) = written {
        if oxsort_io::probe_output(p).ok() == Some(oxsort_io::OutputTarget::File) {
            // The output's temporary lives next to the file written (a symlink's target).
            let target = oxsort_io::replace::follow_links(p).unwrap_or_else(|_| p.to_path_buf());
            dirs.push(config::parent_dir(&target));
        }
    }
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for d in dirs {
        let id = std::fs::canonicalize(&d).unwrap_or_else(|_| d.clone());
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        let Ok(swept) = oxsort_io::sweep(&d, false) else { continue };
        if !swept.reclaimed.is_empty() {
            out.push(Reclaimed {
                dir: d.display().to_string(),
                paths: swept.reclaimed.iter().map(|l| l.path.display().to_string()).collect(),
                bytes: swept.bytes(),
            });
        }
    }
    out
}

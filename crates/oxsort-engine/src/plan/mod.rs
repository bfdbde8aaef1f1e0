//! The plan: one pass or two, chunk and run sizes, the merge schedule level by level, memory per
//! phase, temp bytes per directory. Computed before any work, printed by `oxsort explain`, and
//! carried out by [`crate::sort`] as it is: the sort asks nothing of the configuration again.
//!
//! - `sizing`: the arithmetic (pure functions of the configuration);
//! - `explain`: the plan as a person reads it;
//! - this module: the inputs, the output and the temp directories looked at through `oxsort-io`,
//!   and the checks against memory and free space.
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

pub mod cost;
mod explain;
mod sizing;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::{Input, Output, PassChoice, SortConfig};
use oxsort_format::Mode;
use oxsort_io::OutputTarget;

use crate::error::{EngineError, Result};
use oxsort_io::human_bytes;

pub use sizing::{Geometry, MergeLevel, MergeSchedule, MergeSizing};

/// The most slots an entry arena is made with (a bound past it is not planned for: a load
/// that large keeps a vector per chunk).
const MAX_ENTRY_SLOTS: u64 = 1 << 20;

/// One input as planned.
#[derive(Clone, Debug, Serialize)]
pub struct InputPlan {
    /// Its name (`-` for standard input).
    pub name: String,
    /// Its size, when known (not for standard input).
    pub bytes: Option<u64>,
    /// A stream's expected size ([`crate::Stream::expecting`]): shown, never trusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<u64>,
}

/// Use of one temp directory.
#[derive(Clone, Debug, Serialize)]
pub struct TempPlan {
    /// The directory.
    pub dir: PathBuf,
    /// Bytes the plan writes there at its peak.
    pub bytes: u64,
    /// Of `bytes`, the runs an interrupted resumable sort left there that this one takes
    /// over: on disk already, so not counted against the free space.
    pub reused: u64,
    /// Free bytes found there.
    pub free: u64,
}

/// How the records get sorted.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Passes {
    /// Everything fits in memory: read, sort, write.
    One,
    /// A copy (`OPTION COPY`): loads of up to `load_chunks` chunks written to the output in
    /// input order, one after the other, as they are read; no runs, no temp files.
    Stream {
        /// Chunks per load.
        load_chunks: u64,
    },
    /// Sorted runs go to temp files, then they are merged as the schedule says.
    Two {
        /// Runs formed from the input.
        runs: u64,
        /// Chunks per run (the last run may be shorter).
        run_chunks: u64,
        /// The merge, level by level.
        schedule: MergeSchedule,
    },
    /// The input's size is known only at its end (standard input, a pipe, delimited records
    /// whose count per load varies): one pass if it fits, else runs of up to `run_chunks`
    /// chunks, merged by the schedule [`MergeSizing::schedule`] gives for their number.
    Unknown {
        /// Chunks per run.
        run_chunks: u64,
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
    /// Bytes per record (fixed records).
    pub record_size: Option<usize>,
    /// The layout of the records read, as a person reads it (`fixed 100-byte records`,
    /// `newline-terminated records`, `RDW-prefixed variable records ...`).
    pub layout: String,
    /// The memory budget.
    pub memory: u64,
    /// Worker threads.
    pub threads: usize,
    /// Sizes of the input phase.
    pub geometry: Geometry,
    /// What the merge may use (for any number of runs).
    pub merge: MergeSizing,
    /// One pass or two.
    pub passes: Passes,
    /// Whether the inputs' pages are mapped rather than read into memory of the sort's own:
    /// one pass over regular files of fixed records (see `oxsort_io::mapped`).
    pub input_mapped: bool,
    /// Memory the input phase (read, run formation, one-pass output) uses at most: with an
    /// input of known size, what that input can fill ([`Geometry::input_memory_for`]), else the
    /// whole of [`Geometry::input_memory`].
    pub memory_input_phase: u64,
    /// Memory the merge uses at most (0 for one pass).
    pub memory_merge_phase: u64,
    /// Temp directories and their use.
    pub temp: Vec<TempPlan>,
    /// The output's name (`-` for standard output).
    pub output: String,
    /// Free bytes where the output goes (None for a stream).
    pub output_free: Option<u64>,
    /// The output is a stream written in order (standard output, a device, a FIFO): no
    /// temporary name, no preallocation, no truncation.
    pub output_stream: bool,
    /// What was changed from what was asked, and why (a budget capped, fewer transfers).
    pub notes: Vec<String>,
    /// What stops the plan from being carried out here (too little space), for a plan that is
    /// shown rather than run ([`plan_to_show`]); a sort refuses instead.
    pub warnings: Vec<String>,
    /// The device the output's directory is on (a file output), for the space check.
    #[serde(skip)]
    out_dev: Option<u64>,
    /// The name of the resume directory this sort uses (a resumable sort): not counted as
    /// another sort's leftover in messages about space.
    #[serde(skip)]
    resume_dir: Option<String>,
    /// The estimated time of one pass and of two, when the input's size is known.
    pub estimates: Option<cost::Estimates>,
    /// `OUTFIL` outputs written besides the output, one line each: DD name, file, what it
    /// gets.
    pub outfil: Vec<String>,
}

/// Computes the plan and checks it against the machine: inputs present and whole, output
/// directory writable, memory enough, temp and output space enough.
pub fn plan(cfg: &SortConfig) -> Result<Plan> {
    let plan = plan_unchecked(&cfg.resolved())?;
    plan.check_space()?;
    Ok(plan)
}

/// The plan as [`plan`] computes it, for showing it (`explain`): too little temp or output
/// space does not refuse it but is said in [`Plan::warnings`].
pub fn plan_to_show(cfg: &SortConfig) -> Result<Plan> {
    let mut plan = plan_unchecked(&cfg.resolved())?;
    match plan.check_space() {
        Err(e @ (EngineError::NoTempSpace { .. } | EngineError::NoOutputSpace { .. })) => {
            plan.warnings.push(e.to_string())
        }
        r => r?,
    }
    Ok(plan)
}

/// The plan, checked against everything but free space.
fn plan_unchecked(cfg: &SortConfig) -> Result<Plan> {
    let fixed_size = cfg.key.record_size();
    // The records as read (before INREC reshapes them).
    let read_size = cfg.key.input_layout().fixed_size();
    let mut inputs = Vec::new();
    let mut total: Option<u64> = Some(0);
    // Records of each input (fixed records): a chunk never spans two inputs.
    let mut input_records: Vec<u64> = Vec::new();
    let (mut g, mut merge, mut notes) = sizing::sizes(cfg)?;
    notes.splice(0..0, cfg.notes.iter().cloned());
    for input in &cfg.inputs {
        match input {
            Input::Stdin => {
                inputs.push(InputPlan { name: "-".into(), bytes: None, expected: None });
                total = None;
            }
            Input::Stream(st) => {
                let expected = st.expected();
                inputs.push(InputPlan { name: st.name().into(), bytes: None, expected });
                total = total.zip(expected).map(|(t, e)| t + e);
            }
            Input::Path(p) => {
                let probed = oxsort_io::probe_input(p)
                    .map_err(|e| EngineError::Input { path: p.clone(), source: e })?;
                let Some(len) = probed else {
                    // A FIFO or device: its size is known only at its end, like standard input.
                    let name = p.display().to_string();
                    inputs.push(InputPlan { name, bytes: None, expected: None });
                    total = None;
                    continue;
                };
                // A range of the file (`SortConfigBuilder::input_range`) is what is sorted.
                let read = match cfg.input_range {
                    Some((start, end)) if end > len => {
                        return Err(EngineError::Config(format!(
                            "input range {start}..{end} of {}: the file holds {len} bytes",
                            p.display()
                        )));
                    }
                    Some((start, end)) => {
                        if let Some(t) = cfg.key.input_layout().terminator() {
                            check_record_starts(p, t, (start, end), len)?;
                        }
                        end - start
                    }
                    None => len,
                };
                if let Some(r) = read_size.map(|r| r as u64) {
                    if len % r != 0 {
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
                    input_records.push(read / r);
                }
                total = total.map(|t| t + read);
                let name = p.display().to_string();
                inputs.push(InputPlan { name, bytes: Some(len), expected: None });
            }
        }
    }

    // The output directory must be writable before anything is read.
    let mut output_free = None;
    let mut out_dev = None;
    let mut output_stream = true;
    if let Output::Path(p) = &cfg.output {
        let output_error = |why: String| EngineError::Output { path: p.clone(), why };
        match oxsort_io::probe_output(p).map_err(|e| output_error(e.to_string()))? {
            OutputTarget::Directory => return Err(output_error("it is a directory".into())),
            OutputTarget::Stream => {}
            OutputTarget::File => {
                // Refused before any work as GNU sort refuses it (a file the caller may not
                // write, `name/`); its directory's space counts unless it is written in place
                // from a temporary elsewhere.
                let out = oxsort_io::inspect_output(p)?;
                let dir = match out.in_place {
                    Some(oxsort_io::InPlace::DirectoryNotWritable) => crate::config::spare_dir(cfg),
                    _ => out.dir(),
                };
                output_free = Some(oxsort_io::free_space(&dir)?);
                out_dev = oxsort_io::device_of(&dir);
                output_stream = false;
            }
        }
    }

    let chunks_of =
        |g: &Geometry| input_records.iter().map(|n| n.div_ceil(1 << g.chunk_log2)).sum::<u64>();
    let mut chunks = chunks_of(&g);
    // Whether one pass holds every record (fixed records of known total), and the memory it
    // takes: the records read and their entries.
    let fits = fixed_size.is_some() && total.is_some() && chunks <= g.arena_chunks;
    let one_pass_load = chunks * g.chunk_cost();
    // One pass over regular files maps them: the records are pages of the page cache, filled by
    // the device, and only their entries are memory of the sort's own.
    let maps = total.is_some_and(|t| maps_inputs(cfg, &g, t));
    let one_pass_mapped = if maps { chunks * g.chunk_alloc as u64 } else { 0 };
    // What each shape would cost; two passes are taken over one that fits when they are
    // estimated faster (memory the process must touch fresh can cost more than a second pass).
    let estimates = total.zip(read_size).map(|(bytes, r)| {
        let rates =
            cost::Rates { pool_free: oxsort_io::bigmem::pool_free(), ..cost::Rates::default() };
        let two_memory = cost::two_pass_memory(bytes, cfg.memory);
        rates.estimate(
            bytes,
            bytes / r as u64,
            cfg.threads,
            fits.then_some(cost::Load { memory: one_pass_load, mapped: one_pass_mapped }),
            two_memory,
        )
    });
    // A copy keeps its input order: it streams through loads rather than forming runs.
    let streams = cfg.spec.mode == Mode::Copy && !cfg.spec.unique && !cfg.resume;
    // (Its cost is one read and one write whatever the memory: nothing to weigh.)
    let estimates = estimates.filter(|_| !streams);
    let trade = match cfg.passes {
        _ if streams => false,
        PassChoice::Auto => estimates.as_ref().is_some_and(|e| e.two_is_faster()) && !cfg.resume,
        PassChoice::Two => fits,
        PassChoice::One if !fits && total.is_some() && fixed_size.is_some() => {
            return Err(EngineError::MemoryTooSmall {
                given: cfg.memory,
                needed: g.input_memory - g.arena_bytes + one_pass_load,
                why: "one pass was asked for: every record and its entry in memory".into(),
            });
        }
        PassChoice::One => false,
    };
    // A sort that takes two passes anyway needs no more memory than its runs: loads of an
    // eighth of the input touch less fresh memory and the merge stays one level.
    let spills = !fits && fixed_size.is_some() && cfg.passes != PassChoice::One && !cfg.resume;
    // A copy needs no more than an eighth of its input in memory either: its loads are written
    // one after the other, and smaller ones touch less fresh memory.
    let copy_loads = streams && cfg.passes != PassChoice::One;
    if let (true, Some(bytes)) = (trade || spills || copy_loads, total) {
        let mut smaller = cfg.clone();
        smaller.memory = cost::two_pass_memory(bytes, cfg.memory);
        let levels = |g: &Geometry, m: &MergeSizing| {
            m.schedule(chunks_of(g).div_ceil(g.arena_chunks).max(2)).levels.len()
        };
        let sized = sizing::sizes(&smaller).ok().filter(|(g2, merge2, _)| {
            trade || copy_loads || levels(g2, merge2) <= levels(&g, &merge)
        });
        if let Some((g2, merge2, _)) = sized {
            if copy_loads && smaller.memory < cfg.memory {
                notes.push(format!(
                    "a copy streams through loads of {} rather than the whole budget of {}: \
                     less memory touched fresh",
                    human_bytes(smaller.memory),
                    human_bytes(cfg.memory)
                ));
            } else if !trade && smaller.memory < cfg.memory {
                notes.push(format!(
                    "runs of {} rather than the whole budget of {}: less memory touched \
                     fresh, the same merge levels",
                    human_bytes(smaller.memory),
                    human_bytes(cfg.memory)
                ));
            }
            if let Some(e) = estimates.as_ref().filter(|_| trade && cfg.passes == PassChoice::Auto)
            {
                notes.push(format!(
                    "two passes with {} of memory: estimated {:.1} s against {:.1} s for one \
                     pass, which would touch {} of fresh memory ({:.1} s)",
                    human_bytes(e.two.memory),
                    e.two.seconds,
                    e.one.map_or(0.0, |o| o.seconds),
                    human_bytes(e.one.map_or(0, |o| o.memory)),
                    e.one.map_or(0.0, |o| o.memory_s)
                ));
            }
            (g, merge) = (g2, merge2);
            chunks = chunks_of(&g);
        }
    }

    // Two passes asked for on an input that fits: at least two runs (an input of one chunk
    // cannot be split and stays one pass).
    let least_runs = if cfg.passes == PassChoice::Two && chunks >= 2 { 2 } else { 1 };
    let (passes, merge_mem) = match total {
        Some(_) if streams && fixed_size.is_some() && chunks <= g.arena_chunks => (Passes::One, 0),
        _ if streams => (Passes::Stream { load_chunks: g.arena_chunks }, 0),
        // Delimited records: how many a load holds is known only while reading.
        Some(_) if fixed_size.is_some() && chunks <= g.arena_chunks && least_runs == 1 => {
            (Passes::One, 0)
        }
        Some(_) if fixed_size.is_some() => {
            let runs = chunks.div_ceil(g.arena_chunks).max(least_runs);
            let run_chunks = chunks.div_ceil(runs);
            let schedule = merge.schedule(runs);
            let mem = schedule.memory();
            (Passes::Two { runs, run_chunks, schedule }, mem)
        }
        _ => (Passes::Unknown { run_chunks: g.arena_chunks }, merge.schedule(2).memory()),
    };

    // Temp use: runs are striped over the directories; with more than one merge level the
    // peak holds every run plus one merged run being written.
    let mut temp = Vec::new();
    // INREC changes the bytes runs hold: the records' count times their sorted size.
    let sorted_bytes = |t: u64| match (read_size, fixed_size) {
        (Some(a), Some(b)) if a != b => t / a as u64 * b as u64,
        _ => t,
    };
    let spilled = match (&passes, total.map(sorted_bytes)) {
        (Passes::One | Passes::Stream { .. }, _) => None,
        (Passes::Two { schedule, .. }, Some(bytes)) => {
            Some(bytes * if schedule.levels.len() > 1 { 2 } else { 1 })
        }
        // Runs are likely when the input is over half of what a load holds.
        _ => Some(total.map(sorted_bytes).filter(|&t| t > g.arena_bytes / 2).unwrap_or(0)),
    };
    if let Some(name) = crate::journal::own_dir_name(cfg) {
        // The resume directory's name taken by what this sort must not use (a link, another
        // user's directory): said before anything, space included, is counted.
        for d in &cfg.temp_dirs {
            let dir = d.join(&name);
            if std::fs::symlink_metadata(&dir).is_ok() {
                if let Some(why) = oxsort_io::private_dir_problem(&dir)? {
                    return Err(EngineError::ResumeBlocked { dir, why });
                }
            }
        }
    }
    if let Some(bytes) = spilled {
        let share = bytes.div_ceil(cfg.temp_dirs.len() as u64);
        // A resume takes over the runs an interrupted sort left: they are there already.
        // A restart frees what the interrupted sort kept before it writes.
        let (reused, freed) = if cfg.resume {
            crate::journal::reusable_bytes(cfg)?
        } else {
            (vec![0; cfg.temp_dirs.len()], vec![0; cfg.temp_dirs.len()])
        };
        for ((d, reused), freed) in cfg.temp_dirs.iter().zip(reused).zip(freed) {
            // Runs that are only possible (a stream's size is known at its end) refuse
            // nothing: a temp directory is checked when its first run is made, as GNU sort
            // checks it when it first needs a temp file, so a sort that fits in memory runs
            // with no usable temp directory at all.
            let free = if share > 0 || cfg.passes == PassChoice::Two || cfg.resume {
                oxsort_io::check_dir_writable_as(d, oxsort_io::TEMP_DIR_CHECK)?;
                oxsort_io::free_space(d)?
            } else {
                oxsort_io::free_space(d).unwrap_or(0)
            };
            temp.push(TempPlan {
                dir: d.clone(),
                bytes: share,
                reused: reused.min(share),
                free: free + freed,
            });
        }
    }

    let mut plan = Plan {
        inputs,
        input_bytes: total,
        records: total.zip(read_size).map(|(t, r)| t / r as u64),
        record_size: fixed_size,
        layout: cfg.key.input_layout().describe(),
        input_mapped: maps
            && match passes {
                Passes::One => true,
                // Delimited records: one pass when the first load holds them all, which the
                // first piece read tells (a two-pass sort of mapped pieces would map pages the
                // page cache must find fresh for every load, where reads reuse buffers).
                Passes::Unknown { .. } => total.is_some_and(|t| one_load_of_lines(&g, t)),
                _ => false,
            },
        memory: cfg.memory,
        threads: cfg.threads,
        geometry: g,
        merge,
        passes,
        memory_input_phase: match total {
            Some(bytes) => g.input_memory_for(bytes, read_size.map(|r| bytes / r as u64), maps),
            None => g.input_memory,
        },
        memory_merge_phase: merge_mem,
        temp,
        output: match &cfg.output {
            Output::Path(p) => p.display().to_string(),
            Output::Stdout => "-".into(),
            Output::Stream(st) => st.name().into(),
        },
        output_free,
        output_stream,
        notes,
        warnings: Vec::new(),
        out_dev,
        resume_dir: crate::journal::own_dir_name(cfg),
        estimates,
        outfil: outfil_lines(cfg),
    };
    if let (Passes::Two { runs, .. }, Some(bytes)) = (&plan.passes, total.map(sorted_bytes)) {
        if plan.keeps_last_load(*runs, cfg.resume) {
            plan.notes.push(format!(
                "the last of the {runs} runs (about {}) stays in memory and is merged from \
                 there: never written to a temp file nor read back",
                human_bytes(bytes / runs)
            ));
        }
    }
    Ok(plan)
}

/// Refuses a range of file `p` (`len` bytes) of records delimited by `t` that does not start
/// and end where records start: the byte before each end is the terminator, or the end is the
/// file's start or end.
fn check_record_starts(p: &Path, t: u8, range: (u64, u64), len: u64) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let input_error = |e| EngineError::Input { path: p.to_path_buf(), source: e };
    let f = std::fs::File::open(p).map_err(input_error)?;
    for at in [range.0, range.1] {
        if at == 0 || at == len {
            continue;
        }
        let mut before = [0u8];
        f.read_exact_at(&mut before, at - 1).map_err(input_error)?;
        if before[0] != t {
            return Err(EngineError::Config(format!(
                "input range {}..{} of {}: no record starts at byte {at} (the byte before it is \
                 not the records' terminator)",
                range.0,
                range.1,
                p.display()
            )));
        }
    }
    Ok(())
}

/// Whether a one-pass sort of these inputs (`total` bytes, every input a regular file of a
/// trusted size) maps them rather than reads them: fixed or delimited records read whole from
/// their start in chunks of whole pages, no input also an output, and no hugetlb pool with room
/// for them (memory of its own costs no more there). What `ChunkSource` then does input by
/// input.
fn maps_inputs(cfg: &SortConfig, g: &Geometry, total: u64) -> bool {
    matches!(
        cfg.key.input_layout(),
        oxsort_format::RecordLayout::Fixed(_) | oxsort_format::RecordLayout::Delimited(_)
    ) && oxsort_io::mapped::chunks_mappable(g.chunk_bytes, &cfg.io)
        && cfg.spec.skiprec.is_none()
        && cfg.spec.stopaft.is_none()
        && cfg.input_range.is_none()
        && !cfg.resume
        && oxsort_io::mapped::worth_mapping(total)
        && !crate::config::an_input_is_an_output(cfg)
}

/// Whether one load could hold `total` bytes of delimited records: their chunks (mapped pieces
/// are as long as chunk buffers, room included), before any entry. Their entries are counted
/// once the first piece read tells the records' mean length (`ChunkSource::map_if_one_load`).
fn one_load_of_lines(g: &Geometry, total: u64) -> bool {
    // A load may take the inputs' last chunks into the read-ahead memory (`load_rule::takes_the_rest`).
    total.div_ceil(g.chunk_bytes.max(1) as u64) * g.chunk_alloc as u64
        <= g.arena_bytes + g.read_ahead_bytes
}

/// One line per `OUTFIL` output: what its statement does, and the file it goes to.
fn outfil_lines(cfg: &SortConfig) -> Vec<String> {
    let Some(p) = cfg.key.outfil() else { return Vec::new() };
    let outputs = oxsort_format::Outfil::outputs(&cfg.spec.outfil, p);
    let mut lines = Vec::new();
    let mut at = 0;
    for st in &cfg.spec.outfil {
        let what = st.describe();
        for name in &st.names {
            let o = &outputs[at];
            at += 1;
            let path = cfg
                .outfil_paths
                .iter()
                .find(|(n, _)| n == name)
                .map_or("(no file)".to_string(), |(_, p)| p.display().to_string());
            lines.push(format!(
                "{name} -> {path}: {}-byte records; {what} (line {})",
                o.record_len, st.line
            ));
        }
    }
    lines
}

impl Plan {
    /// The merge schedule for `runs` runs: the planned one, or for an input whose size was
    /// unknown, the one the plan's merge sizing gives for the runs actually formed.
    pub fn schedule_for(&self, runs: u64) -> MergeSchedule {
        match &self.passes {
            Passes::Two { runs: planned, schedule, .. } if *planned == runs => schedule.clone(),
            _ => self.merge.schedule(runs),
        }
    }

    /// Whether a two-pass sort (the only kind that merges) whose merge has `inputs` inputs in
    /// all keeps its last load in memory and merges it from there rather than writing it as a
    /// run and reading it back: when the merge is one level and its buffers fit in the budget
    /// beside the load. The runs of a resumable sort all go to disk (a resume reads none of the
    /// input again).
    pub(crate) fn keeps_last_load(&self, inputs: u64, resumable: bool) -> bool {
        let schedule = self.schedule_for(inputs);
        !resumable
            && schedule.levels.len() == 1
            && self.memory_input_phase + schedule.memory() <= self.memory
    }

    /// Chunks per run: a load of the input phase holds at most this many.
    pub fn run_chunks(&self) -> u64 {
        match self.passes {
            Passes::One => u64::MAX,
            Passes::Stream { load_chunks } => load_chunks,
            Passes::Two { run_chunks, .. } | Passes::Unknown { run_chunks } => run_chunks,
        }
    }

    /// Chunks a load holds at most, for fixed records (whose count per chunk is bounded) when
    /// the plan knows it: the slots of its entry arena (`crate::arena`). One pass: every chunk
    /// (a chunk never spans two inputs, so at most one more per input than the records fill).
    pub fn entry_slots(&self) -> Option<u64> {
        self.record_size?;
        let slots = match self.passes {
            Passes::One => {
                self.records?.div_ceil(1 << self.geometry.chunk_log2) + self.inputs.len() as u64
            }
            Passes::Stream { load_chunks } => load_chunks,
            Passes::Two { run_chunks, .. } => run_chunks,
            Passes::Unknown { .. } => return None,
        };
        Some(slots).filter(|&n| n <= MAX_ENTRY_SLOTS)
    }

    /// Checks output and temp space, adding up directories that share a filesystem: the output
    /// first (it is the output's room, whatever shares it), then the runs, which stay until the
    /// output is complete and so share the output's filesystem with it. A directory that gets
    /// no run (a one-pass plan) needs no room.
    fn check_space(&self) -> Result<()> {
        if let (Some(free), Some(bytes)) = (self.output_free, self.input_bytes) {
            if bytes > free {
                return Err(EngineError::NoOutputSpace {
                    path: PathBuf::from(&self.output),
                    needed: bytes,
                    free,
                });
            }
        }
        let mut per_dev: Vec<(u64, u64, u64, PathBuf)> = Vec::new(); // dev, need, free, dir
        for t in &self.temp {
            let dev = oxsort_io::device_of(&t.dir).unwrap_or(0);
            let need = t.bytes.saturating_sub(t.reused);
            match per_dev.iter_mut().find(|e| e.0 == dev) {
                Some(e) => e.1 += need,
                None => per_dev.push((dev, need, t.free, t.dir.clone())),
            }
        }
        for (dev, need, free, dir) in per_dev {
            if need == 0 {
                continue;
            }
            let output = if Some(dev) == self.out_dev { self.input_bytes.unwrap_or(0) } else { 0 };
            if need + output > free {
                let own = self.resume_dir.as_deref();
                return Err(EngineError::NoTempSpace {
                    kept: crate::journal::kept_there(&dir, own),
                    dir,
                    needed: need,
                    output,
                    free,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_with(
        temp: Vec<TempPlan>,
        input: u64,
        output_free: Option<u64>,
        out_dev: Option<u64>,
    ) -> Plan {
        let merge = MergeSizing {
            fan_in: 3,
            min_block: 1 << 16,
            max_block: 1 << 20,
            block_memory: 1 << 30,
            record_unit: 100,
        };
        Plan {
            inputs: vec![InputPlan { name: "in.dat".into(), bytes: Some(input), expected: None }],
            input_bytes: Some(input),
            records: Some(input / 100),
            record_size: Some(100),
            layout: "fixed 100-byte records".into(),
            memory: 1 << 30,
            threads: 2,
            geometry: Geometry {
                chunk_log2: 17,
                chunk_bytes: 100 << 17,
                chunk_alloc: 100 << 17,
                part_records: 1000,
                window_parts: 4,
                arena_chunks: 10,
                arena_bytes: 10 << 20,
                staging_bytes: 1 << 20,
                read_depth: 2,
                read_ahead_chunks: 5,
                window_bytes: 1 << 20,
                read_ahead_bytes: 5 << 20,
                entry_bytes: 16,
                part_copy_bytes: 0,
                tie_bytes: 0,
                rewrite_bytes: 0,
                input_memory: 1 << 30,
            },
            merge,
            passes: Passes::Two { runs: 3, run_chunks: 10, schedule: merge.schedule(3) },
            input_mapped: false,
            memory_input_phase: 0,
            memory_merge_phase: 0,
            temp,
            output: "out.dat".into(),
            output_free,
            estimates: None,
            output_stream: false,
            notes: Vec::new(),
            warnings: Vec::new(),
            out_dev,
            resume_dir: None,
            outfil: Vec::new(),
        }
    }

    fn temp(dir: &std::path::Path, bytes: u64, reused: u64, free: u64) -> TempPlan {
        TempPlan { dir: dir.to_path_buf(), bytes, reused, free }
    }

    #[test]
    fn too_little_temp_or_output_space_is_refused_with_the_numbers() {
        let dir = std::env::temp_dir();
        let short = plan_with(vec![temp(&dir, 5000, 0, 4000)], 5000, None, None);
        match short.check_space() {
            Err(EngineError::NoTempSpace { needed: 5000, free: 4000, output: 0, .. }) => {}
            other => panic!("expected NoTempSpace, got {other:?}"),
        }
        let msg = short.check_space().unwrap_err().to_string();
        assert!(msg.contains("5000") && msg.contains("4000"), "{msg}");
        // Temp on the output's filesystem must hold the runs and the output together.
        let dev = oxsort_io::device_of(&dir).unwrap();
        let shared = plan_with(vec![temp(&dir, 5000, 0, 9000)], 5000, Some(9000), Some(dev));
        assert!(matches!(
            shared.check_space(),
            Err(EngineError::NoTempSpace { needed: 5000, output: 5000, .. })
        ));
        let apart = plan_with(vec![temp(&dir, 5000, 0, 9000)], 5000, Some(9000), None);
        assert!(apart.check_space().is_ok());
        let no_out = plan_with(vec![], 5000, Some(100), None);
        assert!(matches!(
            no_out.check_space(),
            Err(EngineError::NoOutputSpace { needed: 5000, free: 100, .. })
        ));
    }

    #[test]
    fn a_short_output_directory_is_output_space_even_where_temp_is() {
        // A one-pass plan into a directory too small for the output, on the temp directory's
        // filesystem: the output's shortage, not the runs' (there are none).
        let dir = std::env::temp_dir();
        let dev = oxsort_io::device_of(&dir).unwrap();
        let one_pass = plan_with(vec![temp(&dir, 0, 0, 4000)], 5000, Some(4000), Some(dev));
        match one_pass.check_space() {
            Err(EngineError::NoOutputSpace { needed: 5000, free: 4000, .. }) => {}
            other => panic!("expected NoOutputSpace, got {other:?}"),
        }
        // Runs where the output fits alone: both named.
        let both = plan_with(vec![temp(&dir, 3000, 0, 6000)], 5000, Some(6000), Some(dev));
        let msg = both.check_space().unwrap_err().to_string();
        assert!(msg.contains("3000 bytes of runs") && msg.contains("output's 5000 bytes"), "{msg}");
    }

    #[test]
    fn runs_a_resume_takes_over_are_not_counted_against_free_space() {
        let dir = std::env::temp_dir();
        // 6000 bytes of runs at the peak, 4000 of them on disk already, 2500 free.
        let resumed = plan_with(vec![temp(&dir, 6000, 4000, 2500)], 6000, None, None);
        assert!(resumed.check_space().is_ok());
        let fresh = plan_with(vec![temp(&dir, 6000, 0, 2500)], 6000, None, None);
        assert!(matches!(fresh.check_space(), Err(EngineError::NoTempSpace { needed: 6000, .. })));
    }
}

//! A JOINKEYS job: each input put in join-key order by the engine (or checked, when SORTED),
//! a merge join of the two, then the main task's statements on the joined records. The three
//! run at once, joined by streams: no record is written to disk between them.
//!
//! ```text
//!  SORTJNF1 ─ engine sort by F1's keys ─ byte channel ─┐  (SORTED: the file read as
//!  SORTJNF2 ─ engine sort by F2's keys ─ byte channel ─┤   it is, its order checked)
//!                                                      v
//!                   merge join: F1 group x F2 group (F1 outer, F2 inner),
//!                   unpaired records as JOIN says, built by REFORMAT
//!                                                      v
//!                   pipe ─ engine: SORT/COPY, INCLUDE/OMIT, INREC, SUM, OUTREC ─> SORTOUT
//! ```
//!
//! A main task that only copies (`OPTION COPY` and no other statement) is left out: the join
//! writes SORTOUT itself (`join_direct`). The memory budget is shared
//! (`budget_shares`), and the sides' sorts, which run at once, share the threads. A side's
//! sort that fails ends its stream early: the join takes each sort's outcome at the stream's end
//! and, on a failure, cancels the main task before it ends the main task's stream, so a short
//! stream is never taken for the whole one and the output appears under its name only when
//! everything succeeded. The F2 records of one key are held in memory while the F1 records of
//! that key are joined with them. The sides' runs go to the temp directories given, else to a private
//! temp directory (in the output's directory) that is removed in every outcome, signals
//! included.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use oxsort_engine::{
    plan, sort, EngineError, Input, Mode, Output, Plan, SortConfig, SortSpec, SortStats, Stream,
};
use oxsort_format::{Edit, Item, JoinItem, JoinSide, JoinSpec, Placed, RecordLayout, Reformat};
use oxsort_io::byte_channel::byte_channel;
use oxsort_io::TempDir;
use oxsort_lang::Control;

use crate::error::JobError;
use crate::join_direct::DirectOut;
pub use crate::join_merge::JoinCounts;
use crate::join_merge::{merge_join, Blocks, SideFeed};
use crate::tuning::{CUT_AT_MOST, MAIN_STREAM_MIN, MAIN_STREAM_SHARE, PIPE_BYTES};
use crate::{configure, is_std, MainSize, Resources};

type Result<T> = std::result::Result<T, JobError>;

/// A JOINKEYS job, resolved: the join, its files, and the main task on the joined records.
#[derive(Debug)]
pub struct JoinJob {
    /// The statements' join.
    pub spec: JoinSpec,
    /// Each side's files, record length and own statements.
    pub files: JoinFiles,
    /// Each side's record length as the join sees it (after its INREC).
    pub lens: [usize; 2],
    /// The length of the joined records.
    pub joined_len: usize,
    /// The main task's spec, on the joined records.
    pub main: SortSpec,
    /// The output (`-`: standard output; [`crate::DISCARD`] when only OUTFIL outputs are
    /// written).
    pub output: PathBuf,
    /// The main task's OUTFIL outputs: (DD name, file).
    pub outfil: Vec<(String, PathBuf)>,
    /// The main task's `SUM ...,XSUM`: the file of DD `SORTXSUM`.
    pub xsum: Option<PathBuf>,
    /// The resources (MAINSIZE applied).
    pub resources: Resources,
    /// Notes of statements read and ignored.
    pub ignored: Vec<String>,
    /// `OPTION MAINSIZE=`, when given.
    pub main_size: Option<MainSize>,
    /// Where the control statements were read.
    pub control: String,
}

/// The outcome of a JOINKEYS job.
#[derive(Debug)]
pub struct JoinOutcome {
    /// The main task's statistics (or the direct output's).
    pub stats: SortStats,
    /// What the join did.
    pub counts: JoinCounts,
    /// Whether the budget was below what the sorts running at once need (each ran with the
    /// least it needs).
    pub raised: bool,
}

/// Runs a JOINKEYS job.
pub fn run(job: &JoinJob) -> Result<JoinOutcome> {
    let joined_len = job.joined_len;
    let main = &job.main;
    let r = &job.resources;
    let parent = temp_parent(job);
    let tmp = TempDir::new(&parent).map_err(|source| JobError::File {
        what: format!("creating a temp directory in {}", parent.display()),
        source,
    })?;
    let cancel = Arc::new(AtomicBool::new(false));
    let (budget, side_memory, main_memory) = memory_shares(job);
    let cut = Cut::of(job);
    // The main task reading the join through a pipe, or (when it only copies) the output the
    // join writes itself.
    let (mut raised, main) = if only_copies(main) {
        let depth = crate::join_direct::write_depth(budget);
        let out = DirectOut::create(&job.output, joined_len, depth, &r.io)
            .map_err(|e| e.context(format!("creating the output {}", job.output.display())))?;
        (false, Main::Direct(out))
    } else {
        let (rx, tx) = pipe("the joined records")?;
        let (cfg, raised) =
            with_least(main_memory, |m| main_config(job, &rx, m, Some(cancel.clone())))?;
        (raised, Main::Task(cfg, tx))
    };
    // Every side's configuration before anything runs: a bad one stops the job here. A side
    // read as it is (SORTED) is its files.
    let mut files: [Option<Vec<PathBuf>>; 2] = [None, None];
    let mut sorts = Vec::new();
    for side in [JoinSide::F1, JoinSide::F2] {
        let (paths, _) = job.files.input(side);
        let input = job.spec.input(side);
        if input.sorted && !side_prepares(&job.spec, &job.files, side) {
            files[side as usize] = Some(paths.clone());
            continue;
        }
        let name = format!("sorted {} ({})", input.dd, side.name());
        let (tx, rx) = byte_channel();
        let out = Output::Stream(Stream::writer(tx, name));
        let spec = side_spec(&cut.spec, &job.files, side, cut.ranges(side));
        let (cfg, more) = with_least(side_memory, |m| {
            side_config(job, side, spec.clone(), out.clone(), tmp.path(), m)
        })?;
        raised |= more;
        sorts.push((side, rx, cfg));
    }
    let (stats, joined) = std::thread::scope(|s| {
        let mut feeds = files.map(|f| f.map(SideFeed::Files));
        for (side, rx, cfg) in sorts {
            let input = job.spec.input(side);
            let what = if input.sorted { "copying" } else { "sorting" };
            let handle = s.spawn(move || {
                let done = sort(&cfg).map(drop).map_err(|source| JobError::EngineIn {
                    what: format!("{what} {} ({}) by its join keys", input.dd, side.name()),
                    source,
                });
                // The stream's end (the writer, dropped with the sort's sink) is followed by
                // the outcome, which the join waits for there.
                drop(cfg);
                done
            });
            feeds[side as usize] = Some(SideFeed::Sort {
                pipe: Some(rx),
                done: Some(Box::new(move || {
                    handle.join().unwrap_or(Err(JobError::Panicked("a side's sort")))
                })),
            });
        }
        let feeds = feeds.map(|f| f.expect("every side is its files or its sort"));
        let (spec, lens) = (&cut.spec, cut.lens(job));
        match main {
            Main::Direct(mut out) => {
                let joined = merge_join(spec, lens, feeds, &mut out);
                let stats = match &joined {
                    Ok(_) => out.finish(budget, r.threads.unwrap_or_else(oxsort_engine::cores)),
                    Err(_) => Ok(SortStats::default()),
                };
                (stats, joined)
            }
            Main::Task(main_cfg, joined_tx) => {
                let cancel = &cancel;
                let joiner = s.spawn(move || {
                    // A main task that stops reading (it failed) makes the join's writes fail
                    // with EPIPE rather than end the process with no word: the main task's
                    // error is the one reported.
                    oxsort_io::quiet_broken_pipe();
                    let mut out = Blocks::new(File::from(joined_tx), joined_len);
                    let done = merge_join(spec, lens, feeds, &mut out);
                    if done.is_err() {
                        // Whatever the main task has read is not all of the joined records.
                        cancel.store(true, AtomicOrdering::Relaxed);
                    }
                    done
                });
                let stats = sort(&main_cfg);
                drop(main_cfg);
                let joined = joiner.join().unwrap_or(Err(JobError::Panicked("the join")));
                let stats = match (stats, &joined) {
                    // The join's own failure (or a side's) interrupted the main task.
                    (Err(EngineError::Interrupted), Err(_)) => Ok(SortStats::default()),
                    (s, _) => s.map_err(JobError::from),
                };
                (stats, joined)
            }
        }
    });
    let (stats, counts) = match (stats, joined) {
        (Ok(stats), Ok(counts)) => (stats, counts),
        (Err(e), _) | (Ok(_), Err(e)) => return Err(e),
    };
    tmp.remove();
    Ok(JoinOutcome { stats, counts, raised })
}

/// The main task's configuration: it reads the joined records from `rx` (a duplicate of it,
/// closed with the configuration), within `memory`, stopped
/// by `cancel`.
fn main_config(
    job: &JoinJob,
    rx: &OwnedFd,
    memory: u64,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<SortConfig> {
    let rx = rx.try_clone().map_err(|e| JobError::io("duplicating the joined records' pipe", e))?;
    let output =
        if is_std(&job.output) { Output::Stdout } else { Output::Path(job.output.clone()) };
    let input = Input::Stream(Stream::new(rx, "joined records"));
    let b = SortConfig::builder(vec![input], output).spec(job.main.clone());
    let mut b = configure(b, &job.resources).memory(memory);
    for (name, path) in &job.outfil {
        b = b.outfil_output(name.clone(), path.clone());
    }
    if let Some(p) = &job.xsum {
        b = b.xsum_output(p.clone());
    }
    if let Some(c) = cancel {
        b = b.cancel(c);
    }
    Ok(b.build()?)
}

/// `make(memory)`, with `memory` raised to the least the engine needs when a share of a small
/// budget is below it; and whether it was raised.
fn with_least(memory: u64, make: impl Fn(u64) -> Result<SortConfig>) -> Result<(SortConfig, bool)> {
    let cfg = make(memory)?;
    match plan(&cfg) {
        Err(EngineError::MemoryTooSmall { needed, .. }) if needed > memory => {
            Ok((make(needed)?, true))
        }
        _ => Ok((cfg, false)),
    }
}

/// The job's budget (the engine's for the memory given), and how [`budget_shares`] shares it
/// out: `(budget, each side's sort, the main task)`.
fn memory_shares(job: &JoinJob) -> (u64, u64, u64) {
    let budget = oxsort_engine::memory_budget(job.resources.memory);
    let (side, main) = budget_shares(job, &job.main, budget);
    (budget, side, main)
}

/// What takes the joined records.
#[allow(clippy::large_enum_variant)]
enum Main {
    /// The main task, reading them through a pipe (whose writing end the join takes).
    Task(SortConfig, OwnedFd),
    /// The output itself: the main task would only copy them.
    Direct(DirectOut),
}

/// Whether the main task only copies the joined records (`OPTION COPY` and no other
/// statement): then the join writes them to the output itself.
fn only_copies(main: &SortSpec) -> bool {
    main.mode == Mode::Copy
        && !main.unique
        && main.filter.is_none()
        && main.inrec.is_none()
        && main.outrec.is_none()
        && main.sum.is_none()
        && main.outfil.is_empty()
        && main.skiprec.is_none()
        && main.stopaft.is_none()
}

/// How many sides are sorted (or copied) by the engine rather than read as they are.
fn sorting_sides(job: &JoinJob) -> u64 {
    [JoinSide::F1, JoinSide::F2]
        .into_iter()
        .filter(|&side| !job.spec.input(side).sorted || side_prepares(&job.spec, &job.files, side))
        .count() as u64
}

/// How the budget is shared while the three stages run at once: `(each side's sort, the main
/// task)`. A main task that only copies takes what the join's own output holds in flight (the
/// join writes the output); one that streams (a copy with statements) keeps
/// 1/[`MAIN_STREAM_SHARE`]; one that sorts keeps half, the sides sharing the rest. Sides read
/// as they are (SORTED) need no share.
fn budget_shares(job: &JoinJob, main: &SortSpec, budget: u64) -> (u64, u64) {
    let sorting = sorting_sides(job);
    if sorting == 0 {
        return (0, budget);
    }
    let main = if only_copies(main) {
        // The join writes the output itself: its writes in flight.
        crate::join_direct::write_memory(budget)
    } else if main.mode == Mode::Copy && !main.unique {
        (budget / MAIN_STREAM_SHARE).max(MAIN_STREAM_MIN).min(budget / 2)
    } else {
        budget / 2
    };
    (budget.saturating_sub(main) / sorting, main)
}

/// A pipe between two stages of the job, as large as [`PIPE_BYTES`]: (read end, write end).
fn pipe(name: &str) -> Result<(OwnedFd, OwnedFd)> {
    oxsort_io::sized_pipe(PIPE_BYTES)
        .map_err(|e| JobError::io(format!("creating a pipe for {name}"), e))
}

/// The engine's configuration of one side's sort (or copy) into `out` with `memory` and its
/// share of the threads; its runs go to the temp directories given, else to `tmp`.
fn side_config(
    job: &JoinJob,
    side: JoinSide,
    spec: SortSpec,
    out: Output,
    tmp: &Path,
    memory: u64,
) -> Result<SortConfig> {
    let r = &job.resources;
    let (paths, _) = job.files.input(side);
    let mut b = SortConfig::builder(paths.iter().map(|p| Input::Path(p.clone())).collect(), out)
        .spec(spec)
        .io(r.io.clone())
        .memory(memory);
    // The sides' sorts run at once: they share the job's threads (and so their plans weigh
    // fresh memory and CPU as what they are, a share of the machine).
    let threads = r.threads.unwrap_or_else(oxsort_engine::cores);
    b = b.threads((threads / sorting_sides(job).max(1) as usize).max(1));
    if r.temp_dirs.is_empty() {
        b = b.temp_dir(tmp);
    }
    for d in &r.temp_dirs {
        b = b.temp_dir(d.clone());
    }
    if let Some(c) = &r.cancel {
        b = b.cancel(c.clone());
    }
    // `--passes` is the user's for every sort of the job, the sides' included.
    b = b.passes(r.passes);
    b.build().map_err(|source| JobError::EngineIn {
        what: format!("the {} sort of {}", side.name(), job.spec.input(side).dd),
        source,
    })
}

/// The plan of a JOINKEYS job, as text and as JSON.
#[derive(Debug, Clone)]
pub struct JoinExplain {
    /// For people.
    pub text: String,
    /// The same, as one JSON object.
    pub json: serde_json::Value,
}

/// The plan of a JOINKEYS job: what each file's subtask does and its plan, the join,
/// REFORMAT, and the plan of the main task on the joined records.
pub fn explain(job: &JoinJob) -> Result<JoinExplain> {
    let cut = Cut::of(job);
    let (lens, joined_len) = (cut.lens(job), job.joined_len);
    let parent = temp_parent(job);
    let (_, side_memory, main_memory) = memory_shares(job);
    let mut text = String::from("JOINKEYS job\n");
    let mut sides = Vec::new();
    for side in [JoinSide::F1, JoinSide::F2] {
        let input = job.spec.input(side);
        let (paths, len) = job.files.input(side);
        let files: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let keys: Vec<String> = input
            .keys
            .iter()
            .map(|k| format!("{},{},{}", k.offset + 1, k.len, if k.descending { 'D' } else { 'A' }))
            .collect();
        text += &format!(
            "{}  {} ({}), {len}-byte records, keys ({})\n",
            side.name(),
            input.dd,
            files.join(" + "),
            keys.join(",")
        );
        let steps = side_steps(job, &cut, side);
        for st in &steps {
            text += &format!("    {st}\n");
        }
        let plan: Option<Plan> = if input.sorted && !side_prepares(&job.spec, &job.files, side) {
            text += "    SORTED: read as it is, its key order checked during the join\n";
            None
        } else {
            let name = format!("sorted {} ({})", input.dd, side.name());
            let (tx, _rx) = byte_channel();
            let out = Output::Stream(Stream::writer(tx, name));
            let spec = side_spec(&cut.spec, &job.files, side, cut.ranges(side));
            let (cfg, _) = with_least(side_memory, |m| {
                side_config(job, side, spec.clone(), out.clone(), &parent, m)
            })?;
            let p = plan(&cfg)?;
            text += if input.sorted {
                "    SORTED: kept in its order (merged as one input, the order checked), into a \
                 stream to the join:\n"
            } else {
                "    sorted by its join keys, into a stream to the join:\n"
            };
            text += &indent(&p.to_text(), "      ");
            Some(p)
        };
        sides.push(serde_json::json!({
            "side": side.name(),
            "dd": input.dd,
            "files": files,
            "record_size": len,
            "record_size_joined": lens[side as usize],
            "cut_to": cut.ranges(side).map(|r| r.iter().map(|&(o, l)| [o + 1, l]).collect::<Vec<_>>()),
            "sorted": input.sorted,
            "steps": steps,
            "plan": plan,
        }));
    }
    let kind = join_kind(&job.spec);
    text += &format!("JOIN  {kind}\n");
    let reformat = reformat_text(&job.spec);
    text += &format!("REFORMAT  {reformat} -> {joined_len}-byte joined records\n");
    let main = if only_copies(&job.main) {
        text += &format!(
            "Main task: OPTION COPY alone: the join writes the joined records to the output \
             itself ({})\n",
            job.output.display()
        );
        serde_json::json!({ "direct": job.output.display().to_string() })
    } else {
        let (rx, _tx) = pipe("the joined records")?;
        let (cfg, _) = with_least(main_memory, |m| main_config(job, &rx, m, None))?;
        let main = plan(&cfg)?;
        text += "Main task, on the joined records as the join makes them (through a pipe; \
                 their number is known after the join):\n";
        text += &indent(&main.to_text(), "  ");
        serde_json::to_value(&main).expect("a plan is JSON")
    };
    let json = serde_json::json!({
            "joinkeys": sides,
            "join": kind,
            "reformat": reformat,
            "joined_record_size": joined_len,
            "main": main,
    });
    Ok(JoinExplain { text, json })
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}

/// What one side's subtask does before its sort, in order, one line each.
fn side_steps(job: &JoinJob, cut: &Cut, side: JoinSide) -> Vec<String> {
    let input = job.spec.input(side);
    let spec = side_spec(&job.spec, &job.files, side, None);
    let after = cut.lens(job)[side as usize];
    let mut steps = Vec::new();
    if let Some(n) = spec.skiprec {
        steps.push(format!("SKIPREC={n}: the first {n} records skipped"));
    }
    let own = job.files.control(side);
    if let Some(f) = &spec.filter {
        let from = if own.is_some_and(|c| c.filter.is_some()) {
            format!("{}'s", input.control_dd(side))
        } else {
            "JOINKEYS".to_string()
        };
        let what = if f.omit { "OMIT" } else { "INCLUDE" };
        steps.push(format!("{what} ({from}): only the records it keeps are joined"));
    }
    if let Some(n) = spec.stopaft {
        steps.push(format!("STOPAFT={n}: reading stops after {n} records kept"));
    }
    if let Some(src) = job.files.control_source(side) {
        steps.push(format!("own statements: {} from {src}", input.control_dd(side)));
    }
    if let Some(ranges) = cut.ranges(side) {
        let bytes: Vec<String> =
            ranges.iter().map(|&(o, l)| format!("{}-{}", o + 1, o + l)).collect();
        steps.push(format!(
            "cut to the bytes the join reads ({}): {}-byte records sorted as {after} bytes",
            bytes.join(","),
            job.files.input(side).1
        ));
    }
    if spec.inrec.is_some() {
        steps.push(format!(
            "INREC: {}-byte records reshaped to {after} bytes (the keys refer to them)",
            job.files.input(side).1
        ));
    }
    if spec.unique {
        steps.push("SUM FIELDS=NONE: the first record of each join key kept".into());
    } else if let Some(f) = &spec.sum {
        steps.push(format!("SUM: {} fields added within each join key", f.len()));
    }
    steps
}

/// The kind of join `JOIN` asks for, in words.
fn join_kind(spec: &JoinSpec) -> String {
    match (spec.unpaired_f1, spec.unpaired_f2, spec.only) {
        (false, false, _) => "inner join: paired records only".into(),
        (true, false, false) => "left outer join: paired records and unpaired F1 records".into(),
        (false, true, false) => "right outer join: paired records and unpaired F2 records".into(),
        (true, true, false) => {
            "full outer join: paired records and unpaired F1 and F2 records".into()
        }
        (true, false, true) => "unpaired F1 records only".into(),
        (false, true, true) => "unpaired F2 records only".into(),
        (true, true, true) => "unpaired F1 and F2 records only".into(),
    }
}

/// `REFORMAT FIELDS=` as written (or what is passed without it).
fn reformat_text(spec: &JoinSpec) -> String {
    let Some(items) = &spec.reformat else {
        return "none: the unpaired records are passed as they are".into();
    };
    let mut out = Vec::new();
    let mut last = None;
    for item in items {
        match *item {
            JoinItem::Field { side, offset, len } => {
                let prefix =
                    if last == Some(side) { String::new() } else { format!("{}:", side.name()) };
                last = Some(side);
                out.push(format!("{prefix}{},{len}", offset + 1));
            }
            JoinItem::Indicator => {
                out.push("?".into());
                last = None;
            }
        }
    }
    let fill = match spec.fill {
        b if b.is_ascii_graphic() || b == b' ' => format!("C'{}'", b as char),
        b => format!("X'{b:02X}'"),
    };
    format!("FIELDS=({}),FILL={fill}", out.join(","))
}

/// What the subtask of one JOINKEYS file does before the join: its `INCLUDE=`/`OMIT=` and
/// `STOPAFT=`, then its own statements (`JNFnCNTL`: INCLUDE/OMIT, INREC, SUM, OPTION SKIPREC/
/// STOPAFT), and a sort by its join keys (which refer to INREC's records). A `SORTED` file is
/// merged as the one input of a merge: kept in its order, and that order checked. With `cut`
/// (see [`Cut`]; only for sides without an INREC or SUM of their own), an INREC keeps only
/// those bytes of each record, and `join` is the join over the cut records.
pub(crate) fn side_spec(
    join: &JoinSpec,
    files: &JoinFiles,
    side: JoinSide,
    cut: Option<&[(usize, usize)]>,
) -> SortSpec {
    let input = join.input(side);
    let mut spec = SortSpec {
        layout: RecordLayout::Fixed(files.input(side).1),
        key: Some(join.sort_key(side)),
        filter: input.filter.clone(),
        stopaft: input.stopaft,
        mode: if input.sorted { Mode::Merge } else { Mode::Sort },
        ..SortSpec::default()
    };
    if let Some(c) = files.control(side) {
        if c.filter.is_some() {
            spec.filter = c.filter.clone();
        }
        spec.inrec = c.inrec.clone();
        spec.sum = c.sum.clone();
        spec.unique = c.sum_none;
        spec.skiprec = c.skiprec;
        // STOPAFT= on JOINKEYS and OPTION STOPAFT= in its statements: the fewer records.
        spec.stopaft = match (spec.stopaft, c.stopaft) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    if let Some(ranges) = cut {
        let items = ranges
            .iter()
            .map(|&(offset, len)| Placed { column: None, item: Item::Field { offset, len } });
        spec.inrec = Some(Reformat::Edit(Edit::Build(items.collect())));
    }
    spec
}

/// The join as it runs. A side the engine sorts is cut to the bytes the join reads (its keys
/// and REFORMAT fields, [`JoinSpec::used_ranges`]) when that leaves at most [`CUT_AT_MOST`] of
/// each record: the sort then holds, spills and streams only those, as a user's own
/// `JNFnCNTL INREC` would have it. Sides with an INREC or SUM of their own, and SORTED files
/// read as they are, stay whole.
///
/// ```text
///   SORTJNF1 100 B ─ INREC BUILD=(1,50) ─────── sort (50 B records) ─┐  join over the cut
///   SORTJNF2 100 B ─ INREC BUILD=(1,10,51,49) ─ sort (59 B records) ─┘  records (keys and
///                                                                        REFORMAT moved)
/// ```
struct Cut {
    /// The join over the records as the sides give them.
    spec: JoinSpec,
    /// Each side's kept ranges `(offset, len)`, when it is cut.
    cuts: [Option<Vec<(usize, usize)>>; 2],
}

impl Cut {
    fn of(job: &JoinJob) -> Cut {
        let cuts = [JoinSide::F1, JoinSide::F2].map(|side| {
            let input = job.spec.input(side);
            let read_as_is = input.sorted && !side_prepares(&job.spec, &job.files, side);
            let own = job.files.control(side).is_some_and(|c| c.inrec.is_some() || c.sum.is_some());
            let len = job.lens[side as usize];
            let ranges = job.spec.used_ranges(side).filter(|_| !read_as_is && !own)?;
            let kept: usize = ranges.iter().map(|r| r.1).sum();
            (kept as u64 * CUT_AT_MOST.1 <= len as u64 * CUT_AT_MOST.0).then_some(ranges)
        });
        let spec = job.spec.over_cut([cuts[0].as_deref(), cuts[1].as_deref()]);
        Cut { spec, cuts }
    }

    /// Each side's record length as the join reads it: its ranges' or its records' own.
    fn lens(&self, job: &JoinJob) -> [usize; 2] {
        [0, 1].map(|i| self.cuts[i].as_ref().map_or(job.lens[i], |r| r.iter().map(|r| r.1).sum()))
    }

    fn ranges(&self, side: JoinSide) -> Option<&[(usize, usize)]> {
        self.cuts[side as usize].as_deref()
    }
}

/// Whether a side does more than put its records in key order (a SORTED file that does not is
/// read as it is).
pub(crate) fn side_prepares(join: &JoinSpec, files: &JoinFiles, side: JoinSide) -> bool {
    let input = join.input(side);
    input.filter.is_some() || input.stopaft.is_some() || files.control(side).is_some()
}

/// The record length of each side as the join sees it (after its INREC), its statements
/// checked against its records.
pub(crate) fn side_lengths(join: &JoinSpec, files: &JoinFiles) -> Result<[usize; 2]> {
    let len = |side: JoinSide| -> Result<usize> {
        let key = side_spec(join, files, side, None).compile().map_err(|source| {
            let input = join.input(side);
            let (at, what) = match files.control_source(side) {
                Some(s) => (s.to_string(), format!("{} with ", input.control_dd(side))),
                None => (input.dd.clone(), String::new()),
            };
            JobError::Key {
                what: format!("{at}: {what}the JOINKEYS keys of {} ({})", input.dd, side.name()),
                source,
            }
        })?;
        Ok(key.layout().fixed_size().expect("a join side's records are fixed-length"))
    };
    Ok([len(JoinSide::F1)?, len(JoinSide::F2)?])
}

/// Where the join's temp directory goes: the first temp directory given, else the output's
/// directory, else (standard output) the system's temp directory.
fn temp_parent(job: &JoinJob) -> PathBuf {
    if let Some(d) = job.resources.temp_dirs.first() {
        return d.clone();
    }
    if !is_std(&job.output) {
        if let Some(p) = job.output.parent() {
            if !p.as_os_str().is_empty() {
                return p.to_path_buf();
            }
        }
        return PathBuf::from(".");
    }
    std::env::temp_dir()
}

/// A JOINKEYS job's files: each side's (concatenated) files and record length, and each
/// side's own control statements (`JNF1CNTL`, `JNF2CNTL`, or `idFnCNTL` with `TASKID=id`),
/// with where they were read, for messages.
#[derive(Debug)]
pub struct JoinFiles {
    /// F1's files (concatenated) and record length.
    pub f1: (Vec<PathBuf>, usize),
    /// F2's files (concatenated) and record length.
    pub f2: (Vec<PathBuf>, usize),
    /// Each file's own control statements, with where they were read.
    pub controls: [Option<(String, Control)>; 2],
}

impl JoinFiles {
    /// The files and record length of one side.
    pub fn input(&self, side: JoinSide) -> &(Vec<PathBuf>, usize) {
        match side {
            JoinSide::F1 => &self.f1,
            JoinSide::F2 => &self.f2,
        }
    }

    /// The own control statements of one side, if it has any.
    pub fn control(&self, side: JoinSide) -> Option<&Control> {
        self.own(side).map(|(_, c)| c)
    }

    /// Where the own control statements of one side were read, if it has any.
    pub fn control_source(&self, side: JoinSide) -> Option<&str> {
        self.own(side).map(|(s, _)| s.as_str())
    }

    fn own(&self, side: JoinSide) -> Option<&(String, Control)> {
        self.controls[match side {
            JoinSide::F1 => 0,
            JoinSide::F2 => 1,
        }]
        .as_ref()
    }
}

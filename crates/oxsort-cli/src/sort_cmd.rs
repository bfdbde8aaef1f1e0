//! `oxsort sort` and `oxsort explain`: the flags become one [`JobRequest`], which the job layer
//! resolves and runs; this module prints.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use oxsort_bench::timeline::{self, PhaseMark};
use oxsort_engine::{sort, PassChoice, Phase};
use oxsort_io::IoOptions;
use oxsort_job::{joinkeys, DataSets, Job, JobRequest, JoinJob, Resources, SortJob, DISCARD};

use crate::keys_args::KeyArgs;
use crate::words::cli_error;
use oxsort_lang::parse_bytes;

pub(crate) use oxsort_job::is_std;

/// How statistics are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StatsFormat {
    /// For people, on stderr.
    Text,
    /// One JSON object, on stderr.
    Json,
}

/// `--passes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Passes {
    /// The plan's choice by estimated cost.
    Auto,
    /// One pass.
    One,
    /// Two passes.
    Two,
}

/// Arguments shared by `oxsort sort` and `oxsort explain`.
#[derive(clap::Args, Debug)]
pub struct SortArgs {
    /// Input files, concatenated in order (`-` for standard input, the default).
    #[arg(value_name = "IN", default_value = "-")]
    pub inputs: Vec<PathBuf>,
    /// Output file (`-` for standard output, the default). May name an input.
    #[arg(short, long, value_name = "OUT", default_value = "-")]
    pub output: PathBuf,
    /// Memory budget (e.g. 1G, 512M); default: a safe share of available memory.
    #[arg(long, value_parser = parse_bytes, value_name = "SIZE")]
    pub memory: Option<u64>,
    /// Worker threads; default: all cores.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Directory for sorted runs (repeat to stripe runs over several); default: the output's.
    #[arg(long = "temp-dir", value_name = "DIR")]
    pub temp_dirs: Vec<PathBuf>,
    /// Print statistics when done (text, or json).
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, default_missing_value = "text")]
    pub stats: Option<StatsFormat>,
    /// Write a valsort summary (`valsort -o` format) of the output to FILE.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Show a progress bar (default: only when stderr is a terminal).
    #[arg(long, overrides_with = "no_progress")]
    pub progress: bool,
    /// Never show a progress bar.
    #[arg(long = "no-progress")]
    pub no_progress: bool,
    /// Print nothing on success: no closing report, notes or warnings (errors still print).
    #[arg(short, long)]
    pub quiet: bool,
    /// Never use O_DIRECT (buffered I/O through the page cache).
    #[arg(long)]
    pub buffered: bool,
    /// Never use io_uring (thread-pool I/O).
    #[arg(long = "no-uring")]
    pub no_uring: bool,
    /// Record every 100 ms the bytes read and written, CPU per kind of thread, memory and
    /// the phase, as CSV in FILE (sort only).
    #[arg(long, value_name = "FILE.csv")]
    pub timeline: Option<PathBuf>,
    /// Make a two-pass sort resumable and resume an interrupted one: runs and a journal are
    /// kept in `.oxsort-resume-HASH` in the (first) temp directory until the sort succeeds;
    /// run the same command again with --resume to go on after a kill, a reboot or a full disk.
    #[arg(long)]
    pub resume: bool,
    /// With --resume: when the interrupted sort's inputs or options differ, start over instead
    /// of refusing.
    #[arg(long, requires = "resume")]
    pub restart: bool,
    /// Passes over the data: `one` (the input must fit in memory), `two` (runs, then a merge,
    /// even when it would fit), or `auto`: one when the input fits, unless two are estimated
    /// faster (memory never touched before costs CPU; `oxsort explain` shows the estimates).
    #[arg(long, value_enum, default_value = "auto", value_name = "auto|one|two")]
    pub passes: Passes,
    /// Merge at most N runs at once (default: what memory allows); more runs merge in levels.
    #[arg(long = "max-fan-in", value_name = "N")]
    pub max_fan_in: Option<usize>,
    /// Map a DD name of a DFSORT job to a file (repeatable): `SORTIN` (repeat to concatenate)
    /// instead of IN, `SORTOUT` instead of -o.
    #[arg(long = "dd", value_name = "NAME=PATH")]
    pub dd: Vec<String>,
    /// The record length of a DD's fixed-length records, as `DCB=(LRECL=N)` gives it
    /// (repeatable): `SORTJNF1=80` for a JOINKEYS input, `SORTIN=N` for the input.
    #[arg(long = "lrecl", value_name = "DDNAME=N")]
    pub lrecl: Vec<String>,
    /// Record layout, key, filter and mode.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Tables sorted by column names.
    #[command(flatten)]
    pub table: crate::table_args::TableArgs,
}

/// What the CLI prints around a job, and where.
pub(crate) struct Report {
    /// `--quiet`.
    pub quiet: bool,
    /// `--stats`.
    pub stats: Option<StatsFormat>,
    /// `--summary`.
    pub summary: Option<PathBuf>,
    /// `--timeline`.
    pub timeline: Option<PathBuf>,
    /// Whether a progress bar is drawn.
    pub progress: bool,
}

impl SortArgs {
    /// The one request these flags describe (the control file read here, once).
    pub fn request(&self) -> Result<JobRequest> {
        let mut dd = Vec::with_capacity(self.dd.len());
        for arg in &self.dd {
            let Some((name, path)) = arg.split_once('=') else {
                anyhow::bail!("--dd {arg}: expected NAME=PATH (for example --dd SORTIN=input.dat)");
            };
            let name = name.trim();
            oxsort_job::dd::check_name(name).map_err(|problem| anyhow!("--dd {arg}: {problem}"))?;
            if path.is_empty() {
                anyhow::bail!("--dd {arg}: no path after '='");
            }
            dd.push((name.to_string(), PathBuf::from(path)));
        }
        let mut lrecl = Vec::new();
        for a in &self.lrecl {
            let (name, n) = a.split_once('=').ok_or_else(|| {
                anyhow!("--lrecl {a}: expected DDNAME=N (for example SORTJNF1=80)")
            })?;
            let n: usize = n
                .trim()
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| anyhow!("--lrecl {a}: expected a record length after '='"))?;
            lrecl.push((name.trim().to_ascii_uppercase(), n));
        }
        if let Some(t) = self.threads {
            anyhow::ensure!(t >= 1, "--threads must be at least 1");
        }
        let mut spec = self.keys.spec_source(self.keys.control_text()?)?;
        spec.table = self.table.spec()?;
        Ok(JobRequest {
            inputs: self.inputs.clone(),
            output: self.output.clone(),
            spec,
            data_sets: DataSets { dd, lrecl },
            resources: Resources {
                memory: self.memory,
                threads: self.threads,
                temp_dirs: self.temp_dirs.clone(),
                resume: self.resume,
                restart: self.restart,
                passes: match self.passes {
                    Passes::Auto => PassChoice::Auto,
                    Passes::One => PassChoice::One,
                    Passes::Two => PassChoice::Two,
                },
                max_fan_in: self.max_fan_in,
                io: IoOptions {
                    buffered: self.buffered,
                    no_uring: self.no_uring,
                    ..IoOptions::default()
                },
                progress: None,
                cancel: None,
            },
        })
    }

    /// What is printed around the job.
    pub(crate) fn report(&self) -> Report {
        Report {
            quiet: self.quiet,
            stats: self.stats,
            summary: self.summary.clone(),
            timeline: self.timeline.clone(),
            progress: !self.no_progress
                && !self.quiet
                && (self.progress || std::io::stderr().is_terminal()),
        }
    }
}

/// Resolves a request (errors in the words of `keys`' flags) and prints its notes.
pub(crate) fn resolve(req: JobRequest, keys: &KeyArgs, report: &Report) -> Result<Job> {
    let job = oxsort_job::resolve(req).map_err(|e| keys.job_error(e))?;
    for n in job.ignored() {
        eprintln!("oxsort: {n}");
    }
    if let Some(m) = job.main_size() {
        if !report.quiet {
            let note = if m.applied { "the memory budget" } else { "ignored: --memory is given" };
            eprintln!("oxsort: note: OPTION MAINSIZE={} bytes: {note}", m.bytes);
        }
    }
    Ok(job)
}

/// The warning for an input sorted as fixed records that looks like text lines, with the
/// remedy in this door's words: lines of one length are records of that length (newline
/// included), given as a DFSORT job (`job`) gives it (RECORD, LRECL) or as a flag.
fn text_warning(w: &oxsort_engine::TextAsRecords, job: bool) -> String {
    let name = if w.input == "-" { "standard input" } else { &w.input };
    let head = format!(
        "{name} looks like text: the newline at byte {} is not at the end of a {}-byte record, \
         so records will cut lines",
        w.newline_at, w.record_size
    );
    match (w.line_length, job) {
        (Some(n), true) => format!(
            "{head}; its lines are {n}-byte records (newline included): give the record \
             length, RECORD TYPE=F,LENGTH={n} in the control statements, --lrecl SORTIN={n} \
             or --record-size {n}"
        ),
        (Some(n), false) => format!(
            "{head}; its lines are {n}-byte records (newline included): add --record-size {n}, \
             or --lines to sort lines"
        ),
        (None, _) => format!("{head}; to sort lines, add --lines"),
    }
}

/// A bar shows no rate before its phase has been watched this long: the first events of a
/// phase come in a burst (work done before the bar existed, reads served from the page cache),
/// and a rate over a few milliseconds of them reads hundreds of GiB/s.
const MIN_RATE_SECONDS: f64 = 0.5;

/// The rate and time left of a bar: bytes moved since the bar's first event over the time
/// since then, blank until [`MIN_RATE_SECONDS`] have passed.
fn rate_text(moved: u64, secs: f64, left: Option<u64>) -> String {
    if secs < MIN_RATE_SECONDS || moved == 0 {
        return String::new();
    }
    let rate = moved as f64 / secs;
    let mut s = format!("{}/s", indicatif::HumanBytes(rate as u64));
    if let Some(left) = left {
        let eta = std::time::Duration::from_secs_f64((left as f64 / rate).ceil());
        s += &format!(" {}", indicatif::HumanDuration(eta));
    }
    s
}

/// A progress callback drawing one bar per phase on stderr.
fn progress_bar() -> impl Fn(&oxsort_engine::Progress) + Send + Sync + 'static {
    use indicatif::{ProgressBar, ProgressStyle};
    use std::sync::Mutex;
    use std::time::Instant;
    /// The phase's bar, when and where (bytes done) its first event came.
    type Bar = (Phase, ProgressBar, Instant, u64);
    let state: Mutex<Option<Bar>> = Mutex::new(None);
    move |p| {
        let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
        if st.as_ref().map(|b| b.0) != Some(p.phase) {
            if let Some((_, bar, ..)) = st.take() {
                bar.finish();
            }
            let bar = ProgressBar::new(p.total.unwrap_or(0));
            bar.set_style(
                ProgressStyle::with_template("{prefix:>7} [{bar:40}] {bytes}/{total_bytes} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_prefix(format!("{:?}", p.phase).to_lowercase());
            *st = Some((p.phase, bar, Instant::now(), p.done));
        }
        if let Some((_, bar, t0, done0)) = st.as_ref() {
            let left = p.total.map(|t| t.saturating_sub(p.done));
            bar.set_message(rate_text(
                p.done.saturating_sub(*done0),
                t0.elapsed().as_secs_f64(),
                left,
            ));
            bar.set_position(p.done);
            if p.total == Some(p.done) {
                bar.finish();
            }
        }
    }
}

/// Runs `oxsort sort`; returns the exit status.
pub fn run_sort(args: SortArgs) -> Result<i32> {
    oxsort_io::cleanup::install_signal_handlers();
    let req = args.request()?;
    run_job(req, &args.keys, &args.report())
}

/// Runs a request with the CLI's printing; returns the exit status. `keys` words the spec's
/// errors.
pub(crate) fn run_job(req: JobRequest, keys: &KeyArgs, report: &Report) -> Result<i32> {
    run_job_outcome(req, keys, report).map(|(code, _)| code)
}

/// What a job did, for a door that prints a report of its own (`oxsort gcsort`).
pub(crate) struct Outcome {
    /// The sort's (or the join's main task's) statistics.
    pub stats: oxsort_engine::SortStats,
    /// A JOINKEYS job's counts.
    pub join: Option<joinkeys::JoinCounts>,
}

/// [`run_job`], with what the job did (`None` for a table job).
pub(crate) fn run_job_outcome(
    mut req: JobRequest,
    keys: &KeyArgs,
    report: &Report,
) -> Result<(i32, Option<Outcome>)> {
    if report.progress && report.timeline.is_none() {
        req.resources.progress = Some(Arc::new(progress_bar()));
    }
    let job = match resolve(req, keys, report)? {
        Job::Sort(job) => job,
        Job::Join(job) => return run_join(&job, report),
        Job::Table(job) => {
            let json = report.stats.map(|s| s == StatsFormat::Json);
            let code = sampled(report, "table", || {
                crate::table_args::run_table(&job, report.quiet, json)
            })??;
            return Ok((code, None));
        }
    };
    check_paths(&job, report)?;
    if let Some(path) = &report.summary {
        check_summary_path(path)?;
    }
    let control = job.control.is_some();
    let Some(timeline) = &report.timeline else {
        let cfg = job.builder().build()?;
        return finished(report, &job.output, control, sort(&cfg)?, None);
    };
    let mark = PhaseMark::new();
    let m = mark.clone();
    let cfg = if report.progress {
        let bar = progress_bar();
        job.builder().progress(move |p| {
            m.set_phase(p.phase);
            bar(p)
        })
    } else {
        job.builder().progress(move |p| m.set_phase(p.phase))
    }
    .build()?;
    let result = timeline::record(timeline, &mark, || sort(&cfg))?;
    finished(report, &job.output, control, result?, None)
}

/// [`finish_sort`], with what the job did.
fn finished(
    report: &Report,
    output: &Path,
    control: bool,
    stats: oxsort_engine::SortStats,
    join: Option<joinkeys::JoinCounts>,
) -> Result<(i32, Option<Outcome>)> {
    let code = finish_sort(report, output, control, stats.clone())?;
    Ok((code, Some(Outcome { stats, join })))
}

/// Runs a JOINKEYS job and prints what it did.
fn run_join(job: &JoinJob, report: &Report) -> Result<(i32, Option<Outcome>)> {
    // The sides' sorts and the join run at once: the whole job is one phase.
    let done = sampled(report, "join", || joinkeys::run(job))?.map_err(cli_error)?;
    if !report.quiet {
        if done.raised {
            eprintln!(
                "JOINKEYS: the memory budget is below what the sorts running at once need: \
                 each ran with the least it needs"
            );
        }
        let c = done.counts;
        eprintln!(
            "JOINKEYS: F1 records: {}, F2 records: {}, joined: {} (paired: {}, unpaired F1: {}, \
             unpaired F2: {})",
            c.f1, c.f2, c.joined, c.paired, c.unpaired_f1, c.unpaired_f2
        );
    }
    finished(report, &job.output, true, done.stats, Some(done.counts))
}

/// Runs `job` sampled into `--timeline` when one is asked for, the whole job as `phase` (a
/// job whose stages run at once: a join, a table sort).
fn sampled<T>(report: &Report, phase: &str, job: impl FnOnce() -> T) -> Result<T> {
    let Some(timeline) = &report.timeline else { return Ok(job()) };
    let mark = PhaseMark::new();
    mark.set(phase);
    Ok(timeline::record(timeline, &mark, job)?)
}

/// Checks every path a sort writes against every other and against the inputs, before any
/// work: the summary and the timeline may be no other file of the sort, and no two outputs may
/// be one file (the output may be an input: it is replaced only at the end). Same file: the same
/// device and inode, or for a file not made yet the same resolved path.
fn check_paths(job: &SortJob, report: &Report) -> Result<()> {
    let mut named: Vec<(String, &Path)> = Vec::new();
    for p in job.inputs.iter().filter(|p| !is_std(p)) {
        named.push(("the input".into(), p));
    }
    if !is_std(&job.output) && job.output.as_os_str() != DISCARD {
        named.push(("the output".into(), &job.output));
    }
    for (dd, p) in &job.outfil {
        named.push((format!("the OUTFIL output {dd}"), p));
    }
    if let Some(p) = &report.summary {
        named.push(("the summary".into(), p));
    }
    if let Some(p) = &report.timeline {
        named.push(("the timeline".into(), p));
    }
    for p in &job.resources.temp_dirs {
        named.push(("the temp directory".into(), p));
    }
    let ids: Vec<_> = named.iter().map(|(_, p)| oxsort_io::file_id(p)).collect();
    for (j, (what_j, pj)) in named.iter().enumerate() {
        for (i, (what_i, pi)) in named[..j].iter().enumerate() {
            let (Some(a), Some(b)) = (&ids[i], &ids[j]) else { continue };
            let both = |w: &str| what_i.starts_with(w) && what_j.starts_with(w);
            // Inputs may repeat, an output may replace an input, and runs may be striped over
            // one directory twice.
            let allowed = both("the input")
                || both("the temp directory")
                || (what_i == "the input"
                    && (what_j == "the output" || what_j.starts_with("the OUTFIL")));
            if a == b && !allowed {
                anyhow::bail!(
                    "{what_j} {} is the same file as {what_i} {}: nothing was done; give {what_j} \
                     a name of its own",
                    pj.display(),
                    pi.display()
                );
            }
        }
    }
    Ok(())
}

/// A summary path that cannot be written is reported before the sort, not after it: its
/// directory must exist and be writable, and it must not name a directory.
fn check_summary_path(path: &std::path::Path) -> Result<()> {
    let what = || format!("the summary {}", path.display());
    if path.is_dir() {
        anyhow::bail!("{}: it is a directory", what());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    oxsort_io::check_dir_writable_as(dir, "checking its directory").with_context(what)?;
    Ok(())
}

/// The closing lines, statistics and summary of a finished sort of `output`; `control`: the
/// job was given control statements (a DFSORT job).
pub(crate) fn finish_sort(
    report: &Report,
    output: &Path,
    control: bool,
    stats: oxsort_engine::SortStats,
) -> Result<i32> {
    if !report.quiet {
        // The engine swept the sort's directories once, before it planned.
        for r in &stats.reclaimed {
            eprintln!("oxsort: {}", crate::clean_cmd::reclaimed_line(r));
        }
        for n in &stats.notes {
            eprintln!("oxsort: note: {n}");
        }
        // Found in the bytes the sort read (inputs are read once: a pipe has no second look).
        for w in &stats.warnings {
            eprintln!("oxsort: warning: {}", text_warning(w, control));
        }
        eprint!("{}", closing_report(&stats));
    }
    match report.stats {
        Some(StatsFormat::Text) => eprint!("{}", stats.to_text()),
        Some(StatsFormat::Json) => eprintln!("{}", serde_json::to_string(&stats)?),
        None => {}
    }
    if let Some(path) = &report.summary {
        crate::summary::write_summary_of(output, path)
            .with_context(|| format!("writing the summary {}", path.display()))?;
    }
    Ok(0)
}

/// What the sort did with the records, then valsort's closing lines for the output (the run
/// checked itself). The accounting lines tie the input to the output: every record read was
/// written or dropped (by the filter or as a duplicate), and so was its CRC32 in the checksums.
pub fn closing_report(stats: &oxsort_engine::SortStats) -> String {
    let dropped = stats.dropped_by_filter + stats.dropped_duplicates;
    let mut s = format!(
        "Records read: {}, written: {}, dropped: {} (by the filter: {}, as duplicates: {})\n",
        stats.records,
        stats.records_written,
        dropped,
        stats.dropped_by_filter,
        stats.dropped_duplicates
    );
    if stats.skipped_records > 0 || stats.unread_records > 0 {
        s += &format!(
            "Records before the sort: {} skipped (SKIPREC), {} not read (STOPAFT), neither \
             counted as read\n",
            stats.skipped_records, stats.unread_records
        );
    }
    s += &format!(
        "Checksum in: {} = out {} + dropped {}\n",
        stats.input_checksum, stats.checksum, stats.dropped_checksum
    );
    s += &format!("Records: {}\n", stats.records_written);
    s += &format!("Checksum: {}\n", stats.checksum);
    s += &format!("Duplicate keys: {}\n", stats.duplicate_keys);
    s += "SUCCESS - all records are in order\n";
    s
}

/// Runs `oxsort explain`; returns the exit status.
pub fn run_explain(args: SortArgs, json: bool) -> Result<i32> {
    let report = Report { progress: false, ..args.report() };
    // Each kind of job's plan, as JSON (its fields in their order) and as text.
    let (pretty, text) = match resolve(args.request()?, &args.keys, &report)? {
        Job::Sort(job) => {
            // Too little space is shown as a warning: the plan is what one wants to see then.
            let p = oxsort_engine::plan_to_show(&job.builder().build()?)?;
            (serde_json::to_string_pretty(&p)?, p.to_text())
        }
        Job::Join(job) => {
            let e = joinkeys::explain(&job).map_err(cli_error)?;
            (serde_json::to_string_pretty(&e.json)?, e.text)
        }
        Job::Table(job) => {
            let e = job.explain()?;
            (serde_json::to_string_pretty(&e)?, e.to_text())
        }
    };
    if json {
        println!("{pretty}");
    } else {
        print!("{text}");
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_shows_no_rate_from_its_first_burst() {
        // 12 GiB in the first 100 ms (what reached the bar before it was drawn): no rate.
        assert_eq!(rate_text(12 << 30, 0.1, Some(1 << 30)), "");
        assert_eq!(rate_text(0, 3.0, None), "");
        // Two seconds in: the average since the first event.
        let s = rate_text(400 << 20, 2.0, Some(200 << 20));
        assert!(s.starts_with("200.00 MiB/s"), "{s}");
        assert!(s.ends_with("1 second"), "{s}");
    }
}

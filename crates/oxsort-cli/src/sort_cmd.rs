//! `oxsort sort` and `oxsort explain`: a thin shell over `oxsort_engine`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use oxsort_bench::timeline::{self, PhaseMark, Sampler};
use oxsort_engine::{sort, Input, Output, PassChoice, Phase, SortConfig, SortConfigBuilder};
use oxsort_io::IoOptions;

use crate::dd::DdMap;
use crate::keys_args::KeyArgs;
use oxsort_lang::parse_bytes;

/// Where the sorted records go when only OUTFIL outputs are written.
const DISCARD: &str = "/dev/null";

/// Whether `p` is `-`: standard input or output.
pub(crate) fn is_std(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// Whether `inputs` is the default: standard input alone.
pub(crate) fn is_std_only(inputs: &[PathBuf]) -> bool {
    matches!(inputs, [one] if is_std(one))
}

/// Paths as a message shows them, separated by spaces.
pub(crate) fn shown(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")
}

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
    /// The spec read by [`SortArgs::resolve_job`] (so the control file is read once).
    #[arg(skip)]
    pub prepared: Option<oxsort_format::SortSpec>,
    /// The files of the OUTFIL outputs, by DD name (from [`SortArgs::resolve_job`]).
    #[arg(skip)]
    pub outfil_paths: Vec<(String, PathBuf)>,
}

impl SortArgs {
    /// Takes `SORTIN` and `SORTOUT` from the `--dd` mappings as the inputs and the output, and
    /// returns the mappings left for the job's other DDs. Naming the inputs (or the output) both
    /// ways is an error: which one was meant cannot be guessed.
    pub fn apply_dd(&mut self) -> Result<DdMap> {
        let mut dd = DdMap::parse(&self.dd)?;
        let sortin = dd.take("SORTIN");
        if !sortin.is_empty() {
            anyhow::ensure!(
                is_std_only(&self.inputs),
                "the inputs are given twice: as arguments ({}) and as --dd SORTIN",
                shown(&self.inputs)
            );
            self.inputs = sortin;
        }
        if let Some(out) = dd.take_one("SORTOUT")? {
            anyhow::ensure!(
                is_std(&self.output),
                "the output is given twice: as -o {} and as --dd SORTOUT",
                self.output.display()
            );
            self.output = out;
        }
        Ok(dd)
    }

    /// Resolves the job's data sets: `SORTIN`/`SORTOUT` ([`SortArgs::apply_dd`]), then the
    /// DD of every `OUTFIL` output (`SORTOUT` is the output; any other needs `--dd NAME=PATH`);
    /// a `--dd` name no part of the job uses is an error. With OUTFIL, the sorted records go
    /// to the main output only when a `SORTOUT` is given that no OUTFIL writes (as DFSORT writes
    /// such a SORTOUT without OUTFIL processing); `OPTION MAINSIZE=` becomes the memory budget
    /// when `--memory` is not given.
    pub fn resolve_job(&mut self, mut dd: DdMap) -> Result<()> {
        let spec = self.keys.spec()?;
        let mut used: Vec<String> = vec!["SORTIN".into(), "SORTOUT".into()];
        let mut paths: Vec<(String, PathBuf)> = Vec::new();
        let mut sortout_by_outfil = false;
        for st in &spec.outfil {
            for name in &st.names {
                let path = if name == "SORTOUT" {
                    anyhow::ensure!(
                        !is_std(&self.output),
                        "OUTFIL (line {}) writes SORTOUT: give -o PATH or --dd SORTOUT=PATH",
                        st.line
                    );
                    sortout_by_outfil = true;
                    self.output.clone()
                } else {
                    match dd.take_one(name)? {
                        Some(p) => p,
                        None => match dd.unresolved(name) {
                            Some(why) => anyhow::bail!("OUTFIL (line {}): {why}", st.line),
                            None => anyhow::bail!(
                                "OUTFIL (line {}) writes the DD {name}: give --dd {name}=PATH",
                                st.line
                            ),
                        },
                    }
                };
                if !used.contains(name) {
                    used.push(name.clone());
                }
                paths.push((name.clone(), path));
            }
        }
        if !spec.outfil.is_empty() && (sortout_by_outfil || is_std(&self.output)) {
            // The sorted records themselves go nowhere: only the OUTFIL outputs are written.
            self.output = DISCARD.into();
            if self.temp_dirs.is_empty() {
                if let Some((_, p)) = paths.first() {
                    self.temp_dirs.push(match p.parent() {
                        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                        _ => PathBuf::from("."),
                    });
                }
            }
        }
        dd.finish(&used.join(", "))?;
        if let Some(bytes) = self.keys.main_size()? {
            let note = match self.memory {
                None => {
                    self.memory = Some(bytes);
                    "the memory budget"
                }
                Some(_) => "ignored: --memory is given",
            };
            if !self.quiet {
                eprintln!("oxsort: note: OPTION MAINSIZE={bytes} bytes: {note}");
            }
        }
        self.outfil_paths = paths;
        self.prepared = Some(spec);
        Ok(())
    }

    /// The engine configuration these arguments describe.
    pub fn config(&self, progress: bool) -> Result<SortConfig> {
        self.config_marking(progress, None)
    }

    /// [`SortArgs::config`], also keeping `mark` at the engine's current phase.
    pub fn config_marking(&self, progress: bool, mark: Option<PhaseMark>) -> Result<SortConfig> {
        Ok(self.builder_marking(progress, mark)?.build()?)
    }

    /// The engine's configuration builder of [`SortArgs::config_marking`], for a caller that
    /// changes it before it is built (a JOINKEYS job's main task reads the join's stream).
    pub(crate) fn builder_marking(
        &self,
        progress: bool,
        mark: Option<PhaseMark>,
    ) -> Result<SortConfigBuilder> {
        // Flags and control file first: a bad key is reported before any file is touched.
        let spec = match &self.prepared {
            Some(s) => s.clone(),
            None => self.keys.spec()?,
        };
        let inputs = self
            .inputs
            .iter()
            .map(|s| if is_std(s) { Input::Stdin } else { Input::Path(s.clone()) })
            .collect();
        let output =
            if is_std(&self.output) { Output::Stdout } else { Output::Path(self.output.clone()) };
        let mut b = SortConfig::builder(inputs, output).spec(spec).io(IoOptions {
            buffered: self.buffered,
            no_uring: self.no_uring,
            ..IoOptions::default()
        });
        if let Some(m) = self.memory {
            b = b.memory(m);
        }
        if let Some(t) = self.threads {
            anyhow::ensure!(t >= 1, "--threads must be at least 1");
            b = b.threads(t);
        }
        for d in &self.temp_dirs {
            b = b.temp_dir(d.clone());
        }
        if let Some(n) = self.max_fan_in {
            b = b.max_fan_in(n);
        }
        b = b.resume(self.resume).restart(self.restart).passes(match self.passes {
            Passes::Auto => PassChoice::Auto,
            Passes::One => PassChoice::One,
            Passes::Two => PassChoice::Two,
        });
        for (name, path) in &self.outfil_paths {
            b = b.outfil_output(name.clone(), path.clone());
        }
        match (progress, mark) {
            (true, None) => b = b.progress(progress_bar()),
            (true, Some(mark)) => {
                let bar = progress_bar();
                b = b.progress(move |p| {
                    mark.set_phase(p.phase);
                    bar(p)
                });
            }
            (false, Some(mark)) => b = b.progress(move |p| mark.set_phase(p.phase)),
            (false, None) => {}
        }
        Ok(b)
    }

    pub(crate) fn wants_progress(&self) -> bool {
        !self.no_progress && !self.quiet && (self.progress || std::io::stderr().is_terminal())
    }
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
pub fn run_sort(mut args: SortArgs) -> Result<i32> {
    oxsort_io::cleanup::install_signal_handlers();
    let (join, dd) = crate::job::prepare(&mut args)?;
    if let Some(join) = join {
        return crate::join_cmd::run(args, join);
    }
    args.resolve_job(dd)?;
    check_paths(&args)?;
    if let Some(path) = &args.summary {
        check_summary_path(path)?;
    }
    let Some(timeline) = &args.timeline else {
        let cfg = args.config(args.wants_progress())?;
        return finish_sort(&args, sort(&cfg)?);
    };
    // A timeline that cannot be written is reported before the sort, not after it.
    std::fs::File::create(timeline)
        .with_context(|| format!("creating the timeline {}", timeline.display()))?;
    let mark = PhaseMark::new();
    let cfg = args.config_marking(args.wants_progress(), Some(mark.clone()))?;
    let sampler = Sampler::start(timeline::INTERVAL, mark.clone())?;
    let result = sort(&cfg);
    mark.set("done");
    let tl = sampler.stop();
    // Written whatever the outcome: the timeline of a failed sort is worth having.
    tl.write_csv(timeline)?;
    finish_sort(&args, result?)
}

/// Checks every path a sort writes against every other and against the inputs, before any
/// work: the summary and the timeline may be no other file of the sort, and no two outputs may
/// be one file (the output may be an input: it is replaced only at the end). Same file: the same
/// device and inode, or for a file not made yet the same resolved path.
fn check_paths(args: &SortArgs) -> Result<()> {
    let mut named: Vec<(String, &Path)> = Vec::new();
    for p in args.inputs.iter().filter(|p| !is_std(p)) {
        named.push(("the input".into(), p));
    }
    if !is_std(&args.output) && args.output.as_os_str() != DISCARD {
        named.push(("the output".into(), &args.output));
    }
    for (dd, p) in &args.outfil_paths {
        named.push((format!("the OUTFIL output {dd}"), p));
    }
    if let Some(p) = &args.summary {
        named.push(("the summary".into(), p));
    }
    if let Some(p) = &args.timeline {
        named.push(("the timeline".into(), p));
    }
    for p in &args.temp_dirs {
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

/// The closing lines, statistics and summary of a finished sort.
pub(crate) fn finish_sort(args: &SortArgs, stats: oxsort_engine::SortStats) -> Result<i32> {
    if !args.quiet {
        // The engine swept the sort's directories once, before it planned.
        for r in &stats.reclaimed {
            eprintln!("oxsort: {}", crate::clean_cmd::reclaimed_line(r));
        }
        for n in &stats.notes {
            eprintln!("oxsort: note: {n}");
        }
        // Found in the bytes the sort read (inputs are read once: a pipe has no second look).
        let job = args.keys.control.is_some() || args.keys.control_text.is_some();
        for w in &stats.warnings {
            eprintln!("oxsort: warning: {}", text_warning(w, job));
        }
        eprint!("{}", closing_report(&stats));
    }
    match args.stats {
        Some(StatsFormat::Text) => eprint!("{}", stats.to_text()),
        Some(StatsFormat::Json) => eprintln!("{}", serde_json::to_string(&stats)?),
        None => {}
    }
    if let Some(path) = &args.summary {
        crate::summary::write_summary_of(&args.output, path)
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
pub fn run_explain(mut args: SortArgs, json: bool) -> Result<i32> {
    let (join, dd) = crate::job::prepare(&mut args)?;
    if let Some(join) = join {
        return crate::join_cmd::explain(args, join, json);
    }
    args.resolve_job(dd)?;
    let cfg = args.config(false)?;
    // Too little space is shown as a warning: the plan is what one wants to see then.
    let p = oxsort_engine::plan_to_show(&cfg)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&p)?);
    } else {
        print!("{}", p.to_text());
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

//! `oxsort bench CATEGORY`: the Sort Benchmark's categories, run by their rules, with the
//! report a submission needs (`oxsort_report`).
//!
//! ```text
//!  check arguments (price, seconds, meter, report dir)      ── nothing generated yet
//!  per variant, within its share of TIME_LIMIT_BUDGETS x the budget (oxsort_report::search):
//!    calibration: gensort n1, sort, valsort; gensort n2, sort, valsort (repeated when the
//!    two disagree)
//!    model t = a + b * bytes * passes(bytes), a >= 0   (passes from the engine's plan geometry)
//!    confirming runs: largest size the model fits in the budget (capped by free disk), sorted
//!    (stopped at OVERRUN_BUDGETS x the budget) and validated, the model refitted through each,
//!    until the size stops moving
//!  floor on the input of the last size sorted (after the first variant)
//!  report.json / report.md / report.html (+ timeline.csv) in --report DIR
//! ```
//! Indy sorts with the 100-byte fast path; Daytona sorts the same records through the general
//! typed-key path (`--fields 1,10,CH,A`). Every run validates the whole output with valsort
//! against the input's checksum; generated data is removed unless `--keep`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use oxsort_engine::{plan, sort, Input, Output, SortConfig, SortStats};
use oxsort_gensort::{Checksum, Kind};
use oxsort_report::energy::{Energy, EnergySource, EstimateModel, Meter, Rapl, DEFAULT_MODEL};
use oxsort_report::floor::{self, Floor};
use oxsort_report::machine::{Machine, Software};
use oxsort_report::report::{Metric, PhaseRow, Report, Run, Transcript, Variant};
use oxsort_report::rules::{self, Point, Records, ScaleModel, RECORD};
use oxsort_report::search::{self, SearchConfig, Trial, OVERRUN_BUDGETS};
use oxsort_report::timeline::{self, PhaseMark, Sampler, Timeline};

use crate::bench_cmd::drop_caches;
use oxsort_lang::parse_bytes;

/// The categories.
#[derive(clap::Subcommand, Debug)]
pub enum Category {
    /// MinuteSort: the largest input sorted within a time budget (default 60 s).
    Minutesort {
        /// The time budget, seconds (at least 3).
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        #[command(flatten)]
        common: Common,
    },
    /// PennySort: the largest input sorted in the time a penny buys of this machine over three
    /// years (94,608,000 s x 0.01 / price).
    Pennysort {
        /// The machine's price in US dollars.
        #[arg(long, allow_negative_numbers = true)]
        price: f64,
        #[command(flatten)]
        common: Common,
    },
    /// JouleSort: records sorted per joule, for a given record count.
    Joulesort {
        /// Records to sort (the classes are 1e8, 1e9, 1e10 and 1e12).
        #[arg(long, default_value = "1e8", value_parser = crate::gen_cmd::parse_count)]
        records: u64,
        /// A command printing the joules used so far (a wall meter's script), run before and
        /// after each sort.
        #[arg(long, value_name = "CMD")]
        meter: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// GraySort: 100 TB, in TB/min, modelled from one node's measured two-pass rate.
    Graysort {
        #[command(flatten)]
        scale: Scale,
        #[command(flatten)]
        common: Common,
    },
    /// CloudSort: the cost of sorting 100 TB, modelled from one node's measured two-pass rate.
    Cloudsort {
        /// Dollars per node-hour.
        #[arg(long = "node-price", value_name = "USD", allow_negative_numbers = true)]
        node_price: f64,
        #[command(flatten)]
        scale: Scale,
        #[command(flatten)]
        common: Common,
    },
}

/// Arguments of GraySort and CloudSort.
#[derive(clap::Args, Debug)]
pub struct Scale {
    /// Records sorted on this node to measure its rate (two passes are forced).
    #[arg(long, default_value = "1e7", value_parser = crate::gen_cmd::parse_count)]
    records: u64,
    /// Nodes the model assumes.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    nodes: u32,
}

/// Arguments every category takes.
#[derive(clap::Args, Debug)]
pub struct Common {
    /// Report directory (default: a new dated directory under the current one).
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Directory for the generated data (default: the system temp directory).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Memory budget of each sort (default: a safe share of available memory).
    #[arg(long, value_parser = parse_bytes, value_name = "SIZE")]
    memory: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Largest input to try (the free disk space caps it too).
    #[arg(long = "max-size", value_parser = parse_bytes, value_name = "SIZE")]
    max_size: Option<u64>,
    /// Only Indy (the 100-byte fast path), not Daytona.
    #[arg(long = "indy-only")]
    indy_only: bool,
    /// Keep the generated and sorted files.
    #[arg(long)]
    keep: bool,
}

/// Disk space left free beyond what a run needs: 1 GiB or 5% of the free space, whichever is
/// larger, so the file system never fills.
fn reserve(free: u64) -> u64 {
    (1u64 << 30).max(free / 20)
}

/// Smallest calibration input: 10^5 records (10 MB), large enough that the sort's fixed costs
/// do not dominate the rate it measures.
const MIN_CALIBRATION: u64 = 100_000;

/// The smallest memory budget GraySort/CloudSort give a sort to force two passes: 4 MiB still
/// leaves the engine room for a few runs of a small input (it plans 17 runs of 4e5 records).
const MIN_TWO_PASS_MEMORY: u64 = 4 << 20;

/// The time a size search (MinuteSort, PennySort) may take, in budgets, for all its variants
/// together: calibrations, confirming sorts, generating their inputs and the disk's floor. A
/// search settles in about five budgets per variant on a quiet machine; past the limit it
/// stops with the largest size sorted within the budget so far, and the report says so. With
/// each sort stopped at `OVERRUN_BUDGETS` budgets, a category asked for 10 s ends within
/// about two and a half minutes.
const TIME_LIMIT_BUDGETS: f64 = 12.0;

/// Where the generated data lives: a private temporary directory removed at the end and on
/// SIGINT/SIGTERM, or with `--keep` a plain one that stays.
enum WorkDir {
    Temp(oxsort_io::TempDir),
    Kept(PathBuf),
}

impl WorkDir {
    fn path(&self) -> &Path {
        match self {
            WorkDir::Temp(t) => t.path(),
            WorkDir::Kept(p) => p,
        }
    }
}

/// What a category run keeps as it goes.
struct Session {
    dir: WorkDir,
    memory: Option<u64>,
    threads: Option<usize>,
    kind: Kind,
    cache_dropped: bool,
    commands: Vec<String>,
    transcripts: Vec<Transcript>,
    notes: Vec<String>,
    /// The current input: (records, path, checksum).
    input: Option<(u64, PathBuf, Checksum)>,
    /// Energy source of JouleSort.
    energy: Option<EnergyMeter>,
}

enum EnergyMeter {
    Meter(Meter),
    Rapl(Rapl),
    Estimate(EstimateModel),
}

/// How a category sort ended.
enum Sorted {
    /// Sorted and validated: the run and its timeline.
    Done(Box<(Run, Timeline)>),
    /// Stopped at its cutoff after this many seconds (nothing validated, no output kept).
    Stopped(f64),
}

/// The engine configuration of one category sort: the one place a `SortConfig` is built here.
fn category_config(
    input: &Path,
    output: &Path,
    daytona: bool,
    memory: Option<u64>,
    threads: Option<usize>,
    mark: Option<PhaseMark>,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<SortConfig> {
    let mut b = SortConfig::builder(vec![Input::Path(input.into())], Output::Path(output.into()));
    if let Some(flag) = cancel {
        b = b.cancel(flag);
    }
    if daytona {
        let key = oxsort_lang::parse_fields("1,10,CH,A").context("the Daytona key")?;
        b = b.spec(oxsort_format::SortSpec { key: Some(key), ..Default::default() });
    }
    if let Some(m) = memory {
        b = b.memory(m);
    }
    if let Some(t) = threads {
        b = b.threads(t);
    }
    if let Some(mark) = mark {
        b = b.progress(move |p| mark.set(crate::sort_cmd::phase_label(p.phase)));
    }
    Ok(b.build()?)
}

fn variant_key(daytona: bool) -> &'static str {
    if daytona {
        "the general typed-key front end, --fields 1,10,CH,A (a key it compiles to raw bytes)"
    } else {
        "the 100-byte record fast path (10-byte key)"
    }
}

impl Session {
    fn records_flag(&self) -> &'static str {
        if self.kind == Kind::Ascii {
            "-a "
        } else {
            ""
        }
    }

    /// An input of `records` records (regenerated only when the size changes).
    fn input(&mut self, records: u64) -> Result<(PathBuf, Checksum)> {
        if let Some((n, p, c)) = &self.input {
            if *n == records {
                return Ok((p.clone(), *c));
            }
        }
        let path = self.dir.path().join("input.dat");
        let _ = std::fs::remove_file(&path);
        let t = Instant::now();
        let sum = oxsort_gensort::generate_file(&path, 0, records, self.kind, 0, None)
            .with_context(|| format!("generating {}", path.display()))?;
        let secs = t.elapsed().as_secs_f64();
        let cmd = format!("gensort {}{records} {}", self.records_flag(), path.display());
        eprintln!("  {cmd}  ({secs:.1} s, checksum {sum})");
        self.commands.push(cmd.clone());
        self.transcripts.push(Transcript {
            title: format!("{cmd}; gensort -c"),
            text: format!("Records: {records}\nChecksum: {sum}\n"),
        });
        self.input = Some((records, path.clone(), sum));
        Ok((path, sum))
    }

    /// Passes the engine's plan takes for `records` records (from its geometry, planned once
    /// on the real input).
    fn shape(&self, input: &Path, daytona: bool) -> Result<impl Fn(u64) -> u32> {
        let out = self.dir.path().join("sorted.dat");
        let cfg = category_config(input, &out, daytona, self.memory, self.threads, None, None)?;
        let p = plan(&cfg)?;
        let (log2, arena) = (p.geometry.chunk_log2, p.geometry.arena_chunks);
        Ok(move |records: u64| if records.div_ceil(1 << log2) <= arena { 1 } else { 2 })
    }

    /// Generates (if needed), sorts, validates; returns the run and its timeline.
    fn run(&mut self, records: u64, daytona: bool, purpose: &str) -> Result<(Run, Timeline)> {
        match self.run_until(records, daytona, purpose, None)? {
            Sorted::Done(done) => Ok(*done),
            Sorted::Stopped(_) => unreachable!("a sort without a cutoff is not stopped"),
        }
    }

    /// [`Session::run`], the sort stopped once it has run `cutoff_s` seconds.
    fn run_until(
        &mut self,
        records: u64,
        daytona: bool,
        purpose: &str,
        cutoff_s: Option<f64>,
    ) -> Result<Sorted> {
        let (input, sum) = self.input(records)?;
        let output = self.dir.path().join("sorted.dat");
        let _ = std::fs::remove_file(&output);
        let mark = PhaseMark::new();
        let cancel = Arc::new(AtomicBool::new(false));
        let cfg = category_config(
            &input,
            &output,
            daytona,
            self.memory,
            self.threads,
            Some(mark.clone()),
            Some(cancel.clone()),
        )?;
        let cmd = format!(
            "oxsort sort {} -o {}{}{}{}",
            input.display(),
            output.display(),
            if daytona { " --fields 1,10,CH,A" } else { "" },
            self.memory.map(|m| format!(" --memory {m}")).unwrap_or_default(),
            self.threads.map(|t| format!(" --threads {t}")).unwrap_or_default()
        );
        self.cache_dropped &= drop_caches();
        let before = self.energy_now()?;
        let sampler = Sampler::start(timeline::INTERVAL, mark.clone())?;
        // The watchdog: sets the cancel flag at the cutoff, unless the sort ends first (the
        // channel closes).
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let watchdog = cutoff_s.map(|c| {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                if done_rx.recv_timeout(Duration::from_secs_f64(c))
                    == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                {
                    cancel.store(true, Ordering::SeqCst);
                }
            })
        });
        let t = Instant::now();
        let result = sort(&cfg);
        let seconds = t.elapsed().as_secs_f64();
        drop(done_tx);
        if let Some(w) = watchdog {
            let _ = w.join();
        }
        mark.set("done");
        let tl = sampler.stop();
        if cancel.load(Ordering::SeqCst)
            && matches!(result, Err(oxsort_engine::EngineError::Interrupted))
        {
            let _ = std::fs::remove_file(&output);
            eprintln!(
                "  {:<7} {purpose:<11} {records:>12} records  stopped at {seconds:.3} s (over the budget)",
                if daytona { "Daytona" } else { "Indy" },
            );
            return Ok(Sorted::Stopped(seconds));
        }
        let stats = result.with_context(|| format!("sorting {}", input.display()))?;
        let energy = self.energy_since(before, seconds, &tl)?;
        let summary = oxsort_gensort::validate_file(&output, 0, None)
            .with_context(|| format!("validating {}", output.display()))?;
        let valid =
            summary.is_sorted() && summary.records == records as u128 && summary.checksum == sum;
        let mut text = summary.report();
        text.push_str(&format!(
            "Input checksum: {sum} ({})\n",
            if summary.checksum == sum { "matches" } else { "DIFFERS" }
        ));
        self.transcripts.push(Transcript { title: format!("valsort {}", output.display()), text });
        self.commands.push(cmd);
        self.commands.push(format!("valsort {}", output.display()));
        let _ = std::fs::remove_file(&output);
        eprintln!(
            "  {:<7} {purpose:<11} {records:>12} records  {} pass{}  {seconds:>8.3} s  {}",
            if daytona { "Daytona" } else { "Indy" },
            stats.passes,
            if stats.passes == 1 { "  " } else { "es" },
            if valid { "valsort SUCCESS" } else { "valsort FAILED" }
        );
        if !valid {
            bail!(
                "valsort of {} failed: {} records, checksum {} (input: {records} records, checksum {sum})",
                output.display(),
                summary.records,
                summary.checksum
            );
        }
        Ok(Sorted::Done(Box::new((
            Run {
                purpose: purpose.into(),
                records,
                bytes: records * RECORD,
                passes: stats.passes,
                seconds,
                phases: phase_rows(&stats),
                peak_memory_bytes: stats.peak_rss.max(tl.peak_memory()),
                valid,
                input_checksum: sum.to_string(),
                energy,
                stats: serde_json::to_value(&stats)?,
                ..Run::default()
            },
            tl,
        ))))
    }

    fn energy_now(&self) -> Result<Option<Vec<f64>>> {
        Ok(match &self.energy {
            Some(EnergyMeter::Meter(m)) => Some(vec![m.read()?]),
            Some(EnergyMeter::Rapl(r)) => Some(r.read().into_iter().map(|v| v as f64).collect()),
            _ => None,
        })
    }

    /// The energy of a run that started at reading `before` and took `wall_s` (`tl` is its
    /// timeline, which the estimate reads CPU time and bytes moved from).
    fn energy_since(
        &self,
        before: Option<Vec<f64>>,
        wall_s: f64,
        tl: &Timeline,
    ) -> Result<Option<Energy>> {
        let measured = |source: EnergySource, joules: f64| Energy {
            source,
            label: source.label().into(),
            joules,
            model: None,
        };
        Ok(match (&self.energy, before) {
            (None, _) => None,
            (Some(EnergyMeter::Meter(m)), Some(b)) => {
                Some(measured(EnergySource::Meter, m.read()? - b[0]))
            }
            (Some(EnergyMeter::Rapl(r)), Some(b)) => {
                let b: Vec<u64> = b.iter().map(|v| *v as u64).collect();
                Some(measured(EnergySource::Rapl, r.joules(&b, &r.read())))
            }
            (Some(EnergyMeter::Estimate(_)), _) | (Some(_), None) => {
                let m = match &self.energy {
                    Some(EnergyMeter::Estimate(m)) => *m,
                    _ => DEFAULT_MODEL,
                };
                let cpu: f64 = tl.samples.iter().map(|s| s.user_s + s.sys_s).sum();
                let moved = match (tl.samples.first(), tl.samples.last()) {
                    (Some(f), Some(l)) => {
                        (l.read_bytes - f.read_bytes) + (l.write_bytes - f.write_bytes)
                    }
                    _ => 0,
                };
                Some(Energy {
                    source: EnergySource::Estimate,
                    label: EnergySource::Estimate.label().into(),
                    joules: m.joules(wall_s, cpu, moved),
                    model: Some(format!(
                        "{}; this run: {wall_s:.3} s wall, {cpu:.2} CPU-s, {:.3} GB moved",
                        m.describe(),
                        moved as f64 / 1e9
                    )),
                })
            }
        })
    }

    /// The largest input sorted within `budget_s`, as one variant, in at most about
    /// `time_limit_s` (see [`search::search_sizes`]); returns it and the seconds spent.
    fn search(
        &mut self,
        budget_s: f64,
        daytona: bool,
        cap_bytes: Option<u64>,
        time_limit_s: f64,
        keep_tl: &mut Option<(String, Timeline)>,
    ) -> Result<(Variant, f64)> {
        let mut v = Variant {
            name: name(daytona).into(),
            key: variant_key(daytona).into(),
            ..Variant::default()
        };
        // The disk's cap: input and output must fit with a reserve, and the runs too once the
        // plan takes two passes; `--max-size` may cap lower. Checked before anything is made.
        let free = oxsort_io::free_space(self.dir.path())?;
        let mut cap = rules::disk_cap_records(free, reserve(free), false);
        let mut capped_by =
            format!("{:.1} GB free in {}", free as f64 / 1e9, self.dir.path().display());
        if let Some(m) = cap_bytes {
            if m / RECORD < cap {
                cap = m / RECORD;
                capped_by = format!("--max-size {m}");
            }
        }
        let n1 = MIN_CALIBRATION;
        if cap < n1 {
            bail!("{capped_by}: not enough for a calibration input of {n1} records");
        }
        // The plan's shape, from the first calibration's input (its generation counts as the
        // first calibration's time).
        let t = Instant::now();
        let (input, _) = self.input(n1)?;
        let mut before_first = t.elapsed().as_secs_f64();
        let passes_of = self.shape(&input, daytona)?;
        if passes_of(cap) > 1 {
            let two = rules::disk_cap_records(free, reserve(free), true);
            if two < cap {
                cap = two;
                capped_by =
                    format!("{:.1} GB free in {}", free as f64 / 1e9, self.dir.path().display());
            }
        }
        let cfg = SearchConfig { budget_s, cap_records: cap, min_records: n1, time_limit_s };
        // The timeline of the largest size sorted within the budget.
        let mut best_tl: Option<(u64, Timeline)> = None;
        let result = search::search_sizes(&cfg, &passes_of, &mut |req| -> Result<Trial> {
            let t = Instant::now();
            let sorted =
                self.run_until(req.records, daytona, req.purpose.as_str(), Some(req.cutoff_s))?;
            let spent_s = t.elapsed().as_secs_f64() + std::mem::take(&mut before_first);
            Ok(match sorted {
                Sorted::Done(done) => {
                    let (mut run, tl) = *done;
                    run.predicted_s = req.predicted_s;
                    let ok = run.seconds <= budget_s;
                    run.within_budget = Some(ok);
                    if ok && best_tl.as_ref().is_none_or(|(n, _)| req.records >= *n) {
                        best_tl = Some((req.records, tl));
                    }
                    let point =
                        Point { bytes: run.bytes, passes: run.passes, seconds: run.seconds };
                    v.runs.push(run);
                    Trial { point, completed: true, spent_s }
                }
                Sorted::Stopped(seconds) => Trial {
                    point: Point {
                        bytes: req.records * RECORD,
                        passes: passes_of(req.records),
                        seconds,
                    },
                    completed: false,
                    spent_s,
                },
            })
        })?;
        for n in &result.notes {
            self.notes.push(format!("{}: {n}", v.name));
        }
        let Some(found) = result.found else {
            bail!("{}: not even {n1} records sorted within {budget_s:.1} s", v.name);
        };
        let model = result.model;
        let n = found.bytes / RECORD;
        v.model = Some(model);
        v.records = n;
        v.seconds = found.seconds;
        let next = n + rules::step(n);
        let next_s = model.predict(next * RECORD, passes_of(next));
        v.next_step = Some((next, next_s));
        if next > cap {
            self.notes.push(format!(
                "{}: the size is capped by {capped_by}; the next step ({next} records) would not \
                 fit, so the time budget was not the limit",
                v.name
            ));
        }
        if let (Some((_, tl)), None) = (best_tl, keep_tl.as_ref()) {
            *keep_tl = Some((format!("{}, {n} records", v.name), tl));
        }
        Ok((v, result.spent_s))
    }

    /// The disk's floor, measured on the current input (the last size sorted: close to the
    /// size found, so the floor and the plotted sort move as many bytes).
    fn floor_of_current_input(&mut self) -> Result<Floor> {
        let (_, input, _) = self.input.clone().context("an input to measure the floor on")?;
        let f = measure_floor(self, &input)?;
        eprintln!(
            "  floor   read {:.0} MB/s, write {:.0} MB/s, floor1 {:.3} s for {:.3} GB",
            f.read_mb_s(),
            f.write_mb_s(),
            f.floor1_s,
            f.bytes as f64 / 1e9
        );
        Ok(f)
    }
}

fn name(daytona: bool) -> &'static str {
    if daytona {
        "Daytona"
    } else {
        "Indy"
    }
}

fn phase_rows(stats: &SortStats) -> Vec<PhaseRow> {
    stats
        .phases
        .iter()
        .map(|p| PhaseRow {
            name: p.name.into(),
            elapsed_s: p.elapsed_s,
            user_s: p.user_s,
            sys_s: p.sys_s,
            read_bytes: p.files.iter().filter(|f| f.direction == "read").map(|f| f.bytes).sum(),
            write_bytes: p.files.iter().filter(|f| f.direction == "write").map(|f| f.bytes).sum(),
        })
        .collect()
}

/// `YYYY-MM-DDTHH:MM:SSZ` of now.
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

fn software() -> Software {
    Software {
        version: env!("CARGO_PKG_VERSION").into(),
        commit: option_env!("OXSORT_GIT_COMMIT").unwrap_or("unknown").into(),
        build: option_env!("OXSORT_BUILD").unwrap_or("unknown").into(),
    }
}

/// Runs `oxsort bench CATEGORY`; returns the exit status. A report directory the run created
/// and left empty (it failed before writing the report) is removed.
pub fn run(category: Category) -> Result<i32> {
    let mut created_report = None;
    let result = run_category(category, &mut created_report);
    if let (Err(_), Some(d)) = (&result, created_report) {
        let _ = std::fs::remove_dir(d);
    }
    result
}

fn run_category(category: Category, created_report: &mut Option<PathBuf>) -> Result<i32> {
    oxsort_io::cleanup::install_signal_handlers();
    let command_line = std::iter::once("oxsort".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    // Every argument checked before any data is generated.
    let (cat, common) = match &category {
        Category::Minutesort { seconds, common } => {
            rules::check_seconds(*seconds)?;
            ("minutesort", common)
        }
        Category::Pennysort { price, common } => {
            rules::penny_budget_s(*price)?;
            ("pennysort", common)
        }
        Category::Joulesort { common, records, .. } => {
            if *records == 0 {
                bail!("--records 0: JouleSort needs at least one record");
            }
            ("joulesort", common)
        }
        Category::Graysort { common, .. } => ("graysort", common),
        Category::Cloudsort { node_price, common, .. } => {
            if !(node_price.is_finite() && *node_price > 0.0) {
                bail!("--node-price {node_price}: the price of a node-hour must be a positive number of US dollars");
            }
            ("cloudsort", common)
        }
    };
    let energy = match &category {
        Category::Joulesort { meter: Some(cmd), .. } => {
            let (m, _) = Meter::new(cmd)?;
            Some(EnergyMeter::Meter(m))
        }
        Category::Joulesort { .. } => Some(match Rapl::probe() {
            Some(r) => EnergyMeter::Rapl(r),
            None => EnergyMeter::Estimate(DEFAULT_MODEL),
        }),
        _ => None,
    };
    let created = utc_now();
    let report_dir = match &common.report {
        Some(d) => {
            if !d.exists() {
                *created_report = Some(d.clone());
            }
            std::fs::create_dir_all(d)
                .with_context(|| format!("creating the report directory {}", d.display()))?;
            d.clone()
        }
        None => {
            let d = PathBuf::from(format!("oxsort-report-{cat}-{}", created.replace(':', "-")));
            std::fs::create_dir(&d)
                .with_context(|| format!("creating the report directory {}", d.display()))?;
            *created_report = Some(d.clone());
            d
        }
    };
    oxsort_io::check_dir_writable_as(&report_dir, "checking the report directory")?;
    let parent = common.dir.clone().unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("creating the directory {}", parent.display()))?;
    let dir = if common.keep {
        let d = parent.join(format!("oxsort-bench-{cat}-{}", created.replace(':', "-")));
        std::fs::create_dir(&d)
            .with_context(|| format!("creating the work directory {}", d.display()))?;
        WorkDir::Kept(d)
    } else {
        WorkDir::Temp(
            oxsort_io::TempDir::new(&parent)
                .with_context(|| format!("creating a work directory in {}", parent.display()))?,
        )
    };
    let kind = match &category {
        Category::Pennysort { .. } => Kind::Ascii,
        Category::Joulesort { records, .. } => match rules::joulesort_class(*records) {
            Some((_, Records::Binary)) => Kind::Binary,
            _ => Kind::Ascii,
        },
        _ => Kind::Binary,
    };
    let mut s = Session {
        dir,
        memory: common.memory,
        threads: common.threads,
        kind,
        cache_dropped: true,
        commands: vec![command_line],
        transcripts: Vec::new(),
        notes: Vec::new(),
        input: None,
        energy,
    };
    eprintln!(
        "oxsort bench {cat}: data in {}, report in {}",
        s.dir.path().display(),
        report_dir.display()
    );
    let variants: &[bool] = if common.indy_only { &[false] } else { &[false, true] };
    let mut rules_applied = vec![format!(
        "Input: gensort {} records (100 bytes, 10-byte key), validated by valsort of the whole \
         output against the input's checksum after every sort",
        if kind == Kind::Ascii { "ascii (-a)" } else { "binary" }
    )];
    let mut floor = None;
    let mut tl = None;
    let mut out = Vec::new();
    let mut scale = None;
    let title;
    match &category {
        Category::Minutesort { seconds, .. } | Category::Pennysort { price: seconds, .. } => {
            let budget = match &category {
                Category::Pennysort { price, .. } => {
                    let b = rules::penny_budget_s(*price)?;
                    rules_applied.push(format!(
                        "PennySort: a ${price} machine over three years; a penny buys 94,608,000 s x 0.01 / {price} = {b:.3} s"
                    ));
                    b
                }
                _ => {
                    rules_applied.push(format!("MinuteSort: sorted within {seconds} s"));
                    *seconds
                }
            };
            let limit = TIME_LIMIT_BUDGETS * budget;
            rules_applied.push(format!(
                "Size search: two calibration sorts give a line, time in bytes x passes (passes \
                 from the engine's plan), never with a negative fixed cost; calibrations that \
                 disagree are repeated (up to {} rounds). Confirming sorts try the largest size \
                 the line fits (at most {}x the largest sorted yet), in steps of two significant \
                 digits; once one goes over the budget, the line runs between the largest size \
                 within it and the smallest over it. A sort is stopped at {OVERRUN_BUDGETS}x the \
                 budget, and the whole search stops at {TIME_LIMIT_BUDGETS}x the budget \
                 ({limit:.0} s). The result is the largest size sorted within the budget; the \
                 disk's floor is measured on the input of the last size sorted",
                search::CALIBRATION_ROUNDS,
                search::MAX_GROWTH
            ));
            let mut spent = 0.0;
            for (i, &d) in variants.iter().enumerate() {
                // The time left, shared among the variants still to search.
                let share = (limit - spent) / (variants.len() - i) as f64;
                let (v, s_spent) = s.search(budget, d, common.max_size, share, &mut tl)?;
                out.push(v);
                spent += s_spent;
                if floor.is_none() {
                    let t = Instant::now();
                    floor = Some(s.floor_of_current_input()?);
                    spent += t.elapsed().as_secs_f64();
                }
            }
            for v in &mut out {
                v.metric = Some(Metric {
                    name: format!("records sorted within {budget:.3} s"),
                    value: v.records as f64,
                    unit: "records".into(),
                    label: "MEASURED".into(),
                });
            }
            title = format!("oxsort {cat}: budget {budget:.3} s");
        }
        Category::Joulesort { records, .. } => {
            let class = rules::joulesort_class(*records);
            rules_applied.push(match class {
                Some((c, _)) => format!("JouleSort {c} class: {records} records"),
                None => format!(
                    "JouleSort: {records} records is not one of the classes (1e8, 1e9, 1e10, 1e12 records); the figure is for comparison only"
                ),
            });
            check_disk(&s, *records, common.max_size)?;
            let (input, _) = s.input(*records)?;
            floor = Some(measure_floor(&mut s, &input)?);
            for &d in variants {
                let (mut run, t) = s.run(*records, d, "measure")?;
                let e = run.energy.clone().context("energy")?;
                if tl.is_none() {
                    tl = Some((format!("{}, {records} records", name(d)), t));
                }
                run.floor_s = floor.as_ref().map(|f| f.sort_floor_s(run.bytes, run.passes));
                out.push(Variant {
                    name: name(d).into(),
                    key: variant_key(d).into(),
                    records: *records,
                    seconds: run.seconds,
                    metric: Some(Metric {
                        name: "records per joule".into(),
                        value: *records as f64 / e.joules.max(1e-9),
                        unit: "records/J".into(),
                        label: e.label.clone(),
                    }),
                    runs: vec![run],
                    ..Variant::default()
                });
                if e.source == EnergySource::Estimate
                    && !s.notes.iter().any(|n| n.starts_with("ESTIMATE"))
                {
                    s.notes.push(DEFAULT_MODEL.describe());
                }
            }
            title = format!("oxsort joulesort: {records} records");
        }
        Category::Graysort { scale: sc, .. } | Category::Cloudsort { scale: sc, .. } => {
            let price = match &category {
                Category::Cloudsort { node_price, .. } => Some(*node_price),
                _ => None,
            };
            rules_applied.push(format!(
                "{}: 100 TB (10^12 binary records); figures from one node's two-pass rate on {} records, scaled to {} node(s)",
                if price.is_some() { "CloudSort" } else { "GraySort" },
                sc.records,
                sc.nodes
            ));
            s.notes.push(
                "MODEL: oxsort's Ray scale-out does not exist yet; the 100 TB figures are one \
                 node's measured rate scaled linearly, not a measurement"
                    .into(),
            );
            check_disk(&s, sc.records, common.max_size)?;
            let (input, _) = s.input(sc.records)?;
            floor = Some(measure_floor(&mut s, &input)?);
            // Two passes, as 100 TB needs: a budget of a quarter of the input (four runs).
            if s.memory.is_none() {
                s.memory = Some((sc.records * RECORD / 4).max(MIN_TWO_PASS_MEMORY));
            }
            let (mut run, t) = s.run(sc.records, false, "measure")?;
            if run.passes < 2 {
                s.notes.push(format!(
                    "{} records sorted in one pass: the rate is a one-pass rate, optimistic for 100 TB",
                    sc.records
                ));
            }
            tl = Some((format!("Indy, {} records", sc.records), t));
            run.floor_s = floor.as_ref().map(|f| f.sort_floor_s(run.bytes, run.passes));
            let m = ScaleModel::new(sc.nodes, run.bytes as f64 / run.seconds, price);
            let metric = match price {
                Some(_) => Metric {
                    name: "cost of sorting 100 TB".into(),
                    value: m.cost_usd.unwrap_or(0.0),
                    unit: "USD".into(),
                    label: "MODEL".into(),
                },
                None => Metric {
                    name: "100 TB sort rate".into(),
                    value: m.tb_per_min,
                    unit: "TB/min".into(),
                    label: "MODEL".into(),
                },
            };
            out.push(Variant {
                name: "Indy".into(),
                key: variant_key(false).into(),
                records: sc.records,
                seconds: run.seconds,
                runs: vec![run],
                metric: Some(metric),
                ..Variant::default()
            });
            scale = Some(m);
            title = format!("oxsort {cat}: model from {} records on one node", sc.records);
        }
    }
    for v in &mut out {
        for r in &mut v.runs {
            if r.floor_s.is_none() {
                r.floor_s = floor.as_ref().map(|f| f.sort_floor_s(r.bytes, r.passes));
            }
        }
    }
    let mut dirs = vec![s.dir.path().to_path_buf()];
    if let Ok(d) = report_dir.canonicalize() {
        dirs.push(d);
    }
    let (timeline_of, timeline) = match tl {
        Some((a, b)) => (a, Some(b)),
        None => (String::new(), None),
    };
    let report = Report {
        category: cat.into(),
        title,
        created_utc: created,
        machine: Machine::probe(&dirs, s.cache_dropped),
        software: software(),
        commands: s.commands.clone(),
        rules: rules_applied,
        floor,
        variants: out,
        scale,
        notes: s.notes.clone(),
        transcripts: s.transcripts.clone(),
        timeline,
        timeline_of,
    };
    let w = report.write(&report_dir)?;
    for v in &report.variants {
        if let Some(m) = &v.metric {
            let value = if m.value >= 1000.0 {
                format!("{:.0}", m.value)
            } else {
                format!("{:.3}", m.value)
            };
            eprintln!("  {:<7} {} = {value} {} ({})", v.name, m.name, m.unit, m.label);
        }
    }
    for n in &report.notes {
        eprintln!("  note: {n}");
    }
    eprintln!("  report  {}", w.html.display());
    if let WorkDir::Kept(d) = &s.dir {
        eprintln!("  kept    {}", d.display());
    }
    Ok(0)
}

/// Fails before generating when `records` (input, output and runs) cannot fit on the disk.
fn check_disk(s: &Session, records: u64, max_size: Option<u64>) -> Result<()> {
    let free = oxsort_io::free_space(s.dir.path())?;
    let cap = rules::disk_cap_records(free, reserve(free), true);
    if records > cap {
        bail!(
            "{records} records need {:.1} GB for input, output and runs, and {} has {:.1} GB free",
            (records * RECORD * 3) as f64 / 1e9,
            s.dir.path().display(),
            free as f64 / 1e9
        );
    }
    if let Some(m) = max_size {
        if records * RECORD > m {
            bail!("{records} records are {} bytes, over --max-size {m}", records * RECORD);
        }
    }
    Ok(())
}

fn measure_floor(s: &mut Session, input: &Path) -> Result<Floor> {
    let scratch = s.dir.path().join("floor.dat");
    let dropped = std::cell::Cell::new(s.cache_dropped);
    let f = floor::measure(input, &scratch, &|| dropped.set(dropped.get() & drop_caches()))?;
    s.cache_dropped = dropped.get();
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        let s = utc_now();
        assert_eq!(s.len(), 20, "{s}");
        assert!(s.starts_with("20") && s.ends_with('Z'));
    }
}

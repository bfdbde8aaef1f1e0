//! `oxsort bench`: generate, sort, validate and report, with the I/O floor measured in the same
//! run: the main job on a built-in default. `oxsort bench CATEGORY` runs a Sort Benchmark
//! category instead (`oxsort_bench::category`); this door holds its arguments and prints.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use oxsort_bench::category::{self, SizeCap};
use oxsort_bench::floor::{self, Floor};
use oxsort_bench::machine::Software;
use oxsort_bench::runs::{drop_caches, median, spread_note};
use oxsort_bench::{BenchError, Setting};
use oxsort_engine::{sort, Input, Output, SortConfig};

use oxsort_lang::parse_bytes;

/// Arguments of `oxsort bench`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    /// A Sort Benchmark category, run by its rules, with a report (default: one quick
    /// generate, sort, validate).
    #[command(subcommand)]
    pub category: Option<Category>,
    /// Records to generate (100 bytes each): 1e7, 10M or 10000000.
    #[arg(long, default_value = "10M", value_parser = crate::gen_cmd::parse_count)]
    pub records: u64,
    /// Directory for the input, output and scratch files (default: the system temp directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Memory budget for the sort (default: a safe share of available memory).
    #[arg(long, value_parser = parse_bytes, value_name = "SIZE")]
    pub memory: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Generate skewed keys (`gensort -s`).
    #[arg(long)]
    pub skew: bool,
    /// Skip measuring the I/O floor.
    #[arg(long = "no-floor")]
    pub no_floor: bool,
    /// Sorts (and floor measurements) to take the median of.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub runs: u32,
    /// Keep the generated and sorted files.
    #[arg(long)]
    pub keep: bool,
    /// Print the sort's statistics too.
    #[arg(long)]
    pub stats: bool,
}

/// Runs `oxsort bench`; returns the exit status.
pub fn run(args: BenchArgs) -> Result<i32> {
    if let Some(category) = args.category {
        return run_category(category);
    }
    oxsort_io::cleanup::install_signal_handlers();
    let parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("creating the directory {}", parent.display()))?;
    let dir = tempfile::Builder::new()
        .prefix("oxsort-bench-")
        .tempdir_in(&parent)
        .with_context(|| format!("creating a work directory in {}", parent.display()))?;
    let input = dir.path().join("input.dat");
    let output = dir.path().join("sorted.dat");
    let bytes = args.records * 100;
    let kind = if args.skew { oxsort_gensort::Kind::Skew } else { oxsort_gensort::Kind::Binary };
    eprintln!(
        "oxsort bench: {} records ({:.2} GB) in {}",
        args.records,
        bytes as f64 / 1e9,
        dir.path().display()
    );

    let t = Instant::now();
    let gen_sum = oxsort_gensort::generate_file(&input, 0, args.records, kind, 0, None)?;
    eprintln!("  generate  {:>8.3} s  checksum {}", t.elapsed().as_secs_f64(), gen_sum);

    let mut floors = Vec::new();
    if !args.no_floor {
        for _ in 0..args.runs {
            let scratch = dir.path().join("floor.dat");
            floors.push(floor::measure(&input, &scratch, &|| {
                drop_caches();
            })?);
        }
    }

    let mut b = SortConfig::builder(vec![Input::Path(input.clone())], Output::Path(output.clone()));
    if let Some(m) = args.memory {
        b = b.memory(m);
    }
    if let Some(th) = args.threads {
        b = b.threads(th);
    }
    let cfg = b.build()?;
    let mut times = Vec::new();
    let mut stats = None;
    let mut cached = false;
    for _ in 0..args.runs {
        let _ = std::fs::remove_file(&output);
        cached |= !drop_caches();
        let t = Instant::now();
        stats = Some(sort(&cfg)?);
        times.push(t.elapsed().as_secs_f64());
    }
    let stats = stats.expect("at least one run");
    let sort_s = median(&times);

    let summary = oxsort_gensort::validate_file(&output, 0, None)?;
    let ok = summary.is_sorted()
        && summary.records == args.records as u128
        && summary.checksum == gen_sum.value();
    let passes = stats.passes;
    let plural = if passes == 1 { "" } else { "es" };
    let runs: Vec<String> = times.iter().map(|t| format!("{t:.3}")).collect();
    eprintln!(
        "  sort      {:>8.3} s  median of [{}]; {:.1} MB/s, {passes} pass{plural}",
        sort_s,
        runs.join(", "),
        bytes as f64 / 1e6 / sort_s,
    );
    eprintln!(
        "  cache     {}",
        if cached {
            "page cache not dropped (it needs root): runs may have read the input from memory"
        } else {
            "page cache dropped before each run: every run read the input from the disk"
        }
    );
    if let Some(note) = spread_note(&times) {
        eprintln!("  note      {note}");
    }
    if let Some(f) = Floor::median_of(&floors) {
        eprintln!(
            "  disk      {:>8.3} s  read, {:.3} s write, {:.3} s both at once ({:.0} / {:.0} MB/s); \
             {} MiB transfers, {} in flight, {}, median of {}",
            f.read_s,
            f.write_s,
            f.mixed_s,
            f.read_mb_s(),
            f.write_mb_s(),
            floor::TRANSFER >> 20,
            floor::DEPTH,
            if f.direct { "O_DIRECT" } else { "buffered" },
            floors.len()
        );
        let floor_s = f.floor_s(passes);
        let (name, def) = if passes <= 1 {
            ("floor1", "read + write: no output byte before the last input byte")
        } else {
            ("floor2", "2 x min(both at once, read + write): every byte read and written twice")
        };
        eprintln!(
            "  {name}    {floor_s:>8.3} s  the disk's limit for {passes} pass{plural}: {def}"
        );
        eprintln!("  {}", floor::verdict(sort_s, floor_s, passes));
    }
    eprint!("{}", summary.report());
    if args.stats {
        eprint!("{}", stats.to_text());
    }
    if args.keep {
        let kept = dir.keep();
        eprintln!("  kept      {}", kept.display());
    }
    if !ok {
        bail!("validation failed: the sorted output does not match the generated input");
    }
    Ok(0)
}

/// The categories (run by `oxsort_bench::category`).
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

impl Common {
    /// The library's settings, with the command line for the report.
    fn settings(&self) -> category::Settings {
        category::Settings {
            report: self.report.clone(),
            dir: self.dir.clone(),
            memory: self.memory,
            threads: self.threads,
            max_size: self
                .max_size
                .map(|bytes| SizeCap { bytes, given_as: format!("--max-size {bytes}") }),
            indy_only: self.indy_only,
            keep: self.keep,
            command_line: std::iter::once("oxsort".to_string())
                .chain(std::env::args().skip(1))
                .collect::<Vec<_>>()
                .join(" "),
            software: Software {
                version: env!("CARGO_PKG_VERSION").into(),
                commit: option_env!("OXSORT_GIT_COMMIT").unwrap_or("unknown").into(),
                build: option_env!("OXSORT_BUILD").unwrap_or("unknown").into(),
            },
        }
    }
}

impl Category {
    /// The library's category and the settings every category takes.
    fn split(self) -> (category::Category, Common) {
        let scale = |s: Scale| category::Scale { records: s.records, nodes: s.nodes };
        match self {
            Category::Minutesort { seconds, common } => {
                (category::Category::Minutesort { seconds }, common)
            }
            Category::Pennysort { price, common } => {
                (category::Category::Pennysort { price }, common)
            }
            Category::Joulesort { records, meter, common } => {
                (category::Category::Joulesort { records, meter }, common)
            }
            Category::Graysort { scale: s, common } => {
                (category::Category::Graysort { scale: scale(s) }, common)
            }
            Category::Cloudsort { node_price, scale: s, common } => {
                (category::Category::Cloudsort { node_price, scale: scale(s) }, common)
            }
        }
    }
}

/// A category's error in this door's words: the flag that set the value.
fn in_flag_words(err: BenchError) -> anyhow::Error {
    match err {
        BenchError::Setting { setting, value, problem } => {
            let flag = match setting {
                Setting::Seconds => "--seconds",
                Setting::Price => "--price",
                Setting::Records => "--records",
                Setting::NodePrice => "--node-price",
                _ => return anyhow::anyhow!("{setting} {value}: {problem}"),
            };
            anyhow::anyhow!("{flag} {value}: {problem}")
        }
        BenchError::Meter { command, problem } => {
            anyhow::anyhow!("--meter command `{command}`: {problem}")
        }
        e => e.into(),
    }
}

/// Runs `oxsort bench CATEGORY` and prints what it found; returns the exit status.
fn run_category(category: Category) -> Result<i32> {
    let (category, common) = category.split();
    let done = category::run(&category, &common.settings(), &|line| eprintln!("{line}"))
        .map_err(in_flag_words)?;
    for v in &done.report.variants {
        if let Some(m) = &v.metric {
            let value = if m.value >= 1000.0 {
                format!("{:.0}", m.value)
            } else {
                format!("{:.3}", m.value)
            };
            eprintln!("  {:<7} {} = {value} {} ({})", v.name, m.name, m.unit, m.label);
        }
    }
    for n in &done.report.notes {
        eprintln!("  note: {n}");
    }
    eprintln!("  report  {}", done.html.display());
    if let Some(d) = &done.kept {
        eprintln!("  kept    {}", d.display());
    }
    Ok(0)
}

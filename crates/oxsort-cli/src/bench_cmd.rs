//! `oxsort bench`: generate, sort, validate and report, with the I/O floor measured in the same
//! run: the main job on a built-in default. `oxsort bench CATEGORY` runs a Sort Benchmark
//! category instead (`crate::category`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use oxsort_engine::{sort, Input, Output, SortConfig};
use oxsort_io::{AlignedBuf, DirectFile, IoOptions};

use crate::size::parse_bytes;

/// Arguments of `oxsort bench`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    /// A Sort Benchmark category, run by its rules, with a report (default: one quick
    /// generate, sort, validate).
    #[command(subcommand)]
    pub category: Option<crate::category::Category>,
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

/// Best effort: write dirty pages back and drop the page cache (needs root), so neither the sort
/// nor the floor reads from memory.
pub fn drop_caches() -> bool {
    let _ = std::process::Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok()
}

/// The copy floor as `../shared/tools/iofloor` measures it: seconds for `dd bs=16M` with
/// O_DIRECT to copy `path` into `scratch`, one transfer at a time (read a block, write it), with
/// the page cache dropped first. A sort has to read and write every byte at least once: this is
/// the time for just that.
pub fn io_floor(path: &Path, scratch: &Path) -> Result<f64> {
    const T: usize = 16 << 20;
    let io = IoOptions::default();
    let input = DirectFile::open(path, &io)?;
    let len = input.len()?;
    drop_caches();
    let out = DirectFile::create(scratch, &io)?;
    let mut buf = AlignedBuf::new(T);
    let t = Instant::now();
    let mut off = 0u64;
    while off < len {
        let n = input.read_at(&mut buf[..T.min((len - off) as usize)], off)?;
        if n == 0 {
            break;
        }
        out.write_at(&buf[..n], off)?;
        off += n as u64;
    }
    out.sync()?;
    let copy_s = t.elapsed().as_secs_f64();
    drop(out);
    let _ = std::fs::remove_file(scratch);
    Ok(copy_s)
}

/// The middle value (the mean of the two middle ones for an even count).
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Runs `oxsort bench`; returns the exit status.
pub fn run(args: BenchArgs) -> Result<i32> {
    if let Some(category) = args.category {
        return crate::category::run(category);
    }
    oxsort_io::cleanup::install_signal_handlers();
    let parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
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
    let mut floor1 = Vec::new();
    if !args.no_floor {
        for _ in 0..args.runs {
            let scratch = dir.path().join("floor.dat");
            floors.push(io_floor(&input, &scratch)?);
            let f = oxsort_report::floor::measure(&input, &scratch, &|| {
                drop_caches();
            })?;
            floor1.push(f.floor1_s);
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
        "  sort      {:>8.3} s  median of [{}]; {:.1} MB/s, {passes} pass{plural}{}",
        sort_s,
        runs.join(", "),
        bytes as f64 / 1e6 / sort_s,
        if cached { " (page cache not dropped: not root)" } else { "" }
    );
    if !floors.is_empty() {
        let floor_s = median(&floors) * passes as f64;
        let deep_s = median(&floor1) * passes as f64;
        eprintln!(
            "  floor1    {:>8.3} s  the disk's limit: read + write, {} MiB transfers, {} in flight, \
             O_DIRECT, median of {}, x {passes} pass{plural}",
            deep_s,
            oxsort_report::floor::TRANSFER >> 20,
            oxsort_report::floor::DEPTH,
            floor1.len()
        );
        eprintln!("  ratio     {:>8.3}   sort time / floor1", sort_s / deep_s);
        eprintln!(
            "  copy      {:>8.3} s  direct-I/O copy (dd bs=16M, one in flight), median of {}, x {passes} \
             pass{plural}; sort / copy {:.3}",
            floor_s,
            floors.len(),
            sort_s / floor_s
        );
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

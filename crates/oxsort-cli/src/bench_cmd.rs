//! `oxsort bench`: generate, sort, validate and report, with the I/O floor measured in the same
//! run: the main job on a built-in default. `oxsort bench CATEGORY` runs a Sort Benchmark
//! category instead (`crate::category`).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use oxsort_engine::{sort, Input, Output, SortConfig};

use oxsort_lang::parse_bytes;

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

/// How close a sort came to the disk's floor, in one plain phrase: at most this ratio is "at
/// the disk's limit" (the disk noise of ±20% run to run puts a sort that does no avoidable work
/// within it).
const AT_LIMIT: f64 = 1.25;
/// At most this ratio is "near the disk's limit"; beyond it the sort is bound by its CPU or
/// memory, and the line says so.
const NEAR_LIMIT: f64 = 1.6;

/// The verdict line: the ratio of the sort's time to the floor of its passes, and what it
/// means.
pub fn verdict(sort_s: f64, floor_s: f64, passes: u32) -> String {
    let ratio = sort_s / floor_s;
    let what = if ratio <= AT_LIMIT {
        "at the disk's limit".to_string()
    } else if ratio <= NEAR_LIMIT {
        "near the disk's limit".to_string()
    } else {
        format!(
            "bound by CPU or memory, not the disk: {:.0}% of the time is beyond what the disk needs",
            100.0 * (1.0 - 1.0 / ratio)
        )
    };
    let floor = if passes <= 1 { "floor1" } else { "floor2" };
    format!("verdict: {ratio:.2}x the disk's {floor} ({sort_s:.2} s vs {floor_s:.2} s): {what}")
}

/// The floor measurement with each figure the median of the runs'.
fn median_floor(floors: &[oxsort_report::floor::Floor]) -> Option<oxsort_report::floor::Floor> {
    let first = floors.first()?;
    let m = |f: fn(&oxsort_report::floor::Floor) -> f64| {
        median(&floors.iter().map(f).collect::<Vec<_>>())
    };
    // As `iofloor` combines its medians: floor1 from the read and write medians, floor2 from it
    // and the mixed median.
    let (read_s, write_s, mixed_s) = (m(|f| f.read_s), m(|f| f.write_s), m(|f| f.mixed_s));
    Some(oxsort_report::floor::Floor {
        read_s,
        write_s,
        mixed_s,
        floor1_s: read_s + write_s,
        floor2_s: 2.0 * mixed_s.min(read_s + write_s),
        ..first.clone()
    })
}

/// Above this ratio of a run's time to the median, the median hides a run the user should
/// see: run to run, the same sort on a quiet machine stays within 20% of its median.
const SPREAD_WARN: f64 = 1.3;

/// A line saying which runs were far from the median (a cold first run, a busy machine), or
/// `None` when they all agree.
fn spread_note(times: &[f64]) -> Option<String> {
    if times.len() < 2 {
        return None;
    }
    let m = median(times);
    let far: Vec<String> = times
        .iter()
        .enumerate()
        .filter(|(_, &t)| t > m * SPREAD_WARN || t * SPREAD_WARN < m)
        .map(|(i, &t)| format!("run {} took {t:.3} s, {:.1}x the median", i + 1, t / m))
        .collect();
    (!far.is_empty()).then(|| {
        format!("the runs disagree: {}; the median ({m:.3} s) leaves it out", far.join(", "))
    })
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
            floors.push(oxsort_report::floor::measure(&input, &scratch, &|| {
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
    if let Some(f) = median_floor(&floors) {
        eprintln!(
            "  disk      {:>8.3} s  read, {:.3} s write, {:.3} s both at once ({:.0} / {:.0} MB/s); \
             {} MiB transfers, {} in flight, {}, median of {}",
            f.read_s,
            f.write_s,
            f.mixed_s,
            f.read_mb_s(),
            f.write_mb_s(),
            oxsort_report::floor::TRANSFER >> 20,
            oxsort_report::floor::DEPTH,
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
        eprintln!("  {}", verdict(sort_s, floor_s, passes));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_far_from_the_median_is_named() {
        let note = spread_note(&[2.3, 1.0, 1.02]).expect("a first run 2.3x the others");
        assert!(note.contains("run 1 took 2.300 s, 2.3x the median"), "{note}");
        assert!(!note.contains("run 2"), "{note}");
        assert_eq!(spread_note(&[1.0, 1.1, 0.95]), None);
        assert_eq!(spread_note(&[5.0]), None);
    }
}

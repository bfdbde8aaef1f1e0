//! `oxsort bench`: generate, sort, validate and report, with the I/O floor measured in the same
//! run: the main job on a built-in default.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use oxsort_engine::{sort, Input, Output, SortConfig};
use oxsort_io::{AlignedBuf, DirectFile, IoOptions, Reader, Writer};

use crate::size::parse_bytes;

/// Arguments of `oxsort bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
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

/// Seconds to read `path` with direct I/O and to write as many bytes into `scratch`: the copy
/// floor a sort cannot beat (the same transfers `dd bs=16M iflag=direct` / `oflag=direct` make).
pub fn io_floor(path: &Path, scratch: &Path) -> Result<(f64, f64)> {
    const T: usize = 16 << 20;
    let io = IoOptions::default();
    let file = Arc::new(DirectFile::open(path, &io)?);
    let len = file.len()?;
    drop_caches();
    let t = Instant::now();
    let mut r = Reader::new(file, 0..len, T, 2, &io)?;
    while let Some(c) = r.next_chunk() {
        r.recycle(c?.buf);
    }
    let read_s = t.elapsed().as_secs_f64();
    drop_caches();
    let out = Arc::new(DirectFile::create(scratch, &io)?);
    let t = Instant::now();
    let mut w = Writer::new(out.clone(), 0, 2, &io)?;
    let mut left = len;
    while left > 0 {
        let n = left.min(T as u64) as usize;
        let buf = w.take_buf().unwrap_or_else(|| AlignedBuf::new(T));
        w.write(buf, n)?;
        left -= n as u64;
    }
    w.finish()?;
    out.sync()?;
    let write_s = t.elapsed().as_secs_f64();
    drop(out);
    let _ = std::fs::remove_file(scratch);
    Ok((read_s, write_s))
}

/// Runs `oxsort bench`; returns the exit status.
pub fn run(args: BenchArgs) -> Result<i32> {
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

    let floor =
        if args.no_floor { None } else { Some(io_floor(&input, &dir.path().join("floor.dat"))?) };

    let mut b = SortConfig::builder(vec![Input::Path(input.clone())], Output::Path(output.clone()));
    if let Some(m) = args.memory {
        b = b.memory(m);
    }
    if let Some(th) = args.threads {
        b = b.threads(th);
    }
    let cfg = b.build()?;
    let cached = !drop_caches();
    let t = Instant::now();
    let stats = sort(&cfg)?;
    let sort_s = t.elapsed().as_secs_f64();

    let summary = oxsort_gensort::validate_file(&output, 0, None)?;
    let ok = summary.is_sorted()
        && summary.records == args.records as u128
        && summary.checksum == gen_sum.value();
    eprintln!(
        "  sort      {:>8.3} s  {:.1} MB/s, {} pass{}{}",
        sort_s,
        bytes as f64 / 1e6 / sort_s,
        stats.passes,
        if stats.passes == 1 { "" } else { "es" },
        if cached { " (page cache not dropped: not root)" } else { "" }
    );
    if let Some((read_s, write_s)) = floor {
        let floor_s = (read_s + write_s) * stats.passes as f64;
        eprintln!(
            "  floor     {:>8.3} s  (direct read {:.3} s + write {:.3} s) x {} pass{}",
            floor_s,
            read_s,
            write_s,
            stats.passes,
            if stats.passes == 1 { "" } else { "es" }
        );
        eprintln!("  ratio     {:>8.3}   sort time / I/O floor", sort_s / floor_s);
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

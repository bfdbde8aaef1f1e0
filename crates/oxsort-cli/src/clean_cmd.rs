//! `oxsort clean [DIR...] [--dry-run]`: removes the leftovers of killed sorts (private temp
//! directories, unfinished outputs) whose owner is gone, as every sort does before it starts.
//! A running sort's files are locked by it and never touched (see `oxsort_io::leftovers`).

use std::path::PathBuf;

use anyhow::Result;
use oxsort_engine::{human_bytes, Reclaimed};

/// Arguments of `oxsort clean`.
#[derive(clap::Args, Debug)]
pub struct CleanArgs {
    /// Directories to sweep; default: the temp directory ($TMPDIR or /tmp) and the current one.
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// List what would be removed, remove nothing.
    #[arg(long = "dry-run", short = 'n')]
    pub dry_run: bool,
}

/// Runs `oxsort clean`: one line per leftover (its size and path) on stdout, then a total.
pub fn run(args: CleanArgs) -> Result<i32> {
    let dirs = if args.dirs.is_empty() {
        let mut d = vec![std::env::temp_dir(), PathBuf::from(".")];
        if std::fs::canonicalize(&d[0]).ok() == std::fs::canonicalize(&d[1]).ok() {
            d.pop();
        }
        d
    } else {
        args.dirs
    };
    let (mut count, mut bytes, mut failed) = (0usize, 0u64, 0usize);
    for dir in &dirs {
        // The error names the directory and what failed ("listing DIR: ...").
        let swept = oxsort_io::sweep(dir, args.dry_run)?;
        for l in &swept.reclaimed {
            println!("{:>10}  {}", human_bytes(l.bytes), l.path.display());
        }
        for e in &swept.errors {
            eprintln!("oxsort: {e}");
        }
        count += swept.reclaimed.len();
        bytes += swept.bytes();
        failed += swept.errors.len();
    }
    let verb = if args.dry_run { "would remove" } else { "removed" };
    println!(
        "{verb} {count} leftover{} of killed sorts ({})",
        if count == 1 { "" } else { "s" },
        human_bytes(bytes)
    );
    Ok(if failed > 0 { 1 } else { 0 })
}

/// The line a sort prints for leftovers it reclaimed in one directory.
pub fn reclaimed_line(r: &Reclaimed) -> String {
    let names: Vec<&str> = r
        .paths
        .iter()
        .map(|p| std::path::Path::new(p).file_name().and_then(|n| n.to_str()).unwrap_or(p))
        .collect();
    format!(
        "reclaimed {} leftover{} of killed sorts in {} ({}): {}",
        r.paths.len(),
        if r.paths.len() == 1 { "" } else { "s" },
        r.dir,
        human_bytes(r.bytes),
        names.join(", ")
    )
}

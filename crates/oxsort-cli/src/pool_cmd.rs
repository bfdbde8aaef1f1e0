//! `oxsort pool [SIZE|off]`: the hugetlb pool big buffers come from (see `oxsort_io::pool`):
//! printed, reserved, warmed on all cores and kept in a file so that no sort pays for
//! populating or clearing it, or given back.

use anyhow::{Context, Result};
use oxsort_io::{human_bytes, pool};

/// Arguments of `oxsort pool`.
#[derive(clap::Args, Debug)]
pub struct PoolArgs {
    /// Size to reserve (e.g. 5G: the `--memory` of the sorts to come), kept warm in
    /// /run/oxsort/hugepages/pool; or `off` to give it back; without it, print the pool.
    #[arg(value_name = "SIZE|off")]
    pub size: Option<String>,
    /// Reserve and warm without the file: other users and the Python package may then map the
    /// free pages, which their kernel clears.
    #[arg(long)]
    pub no_keep: bool,
}

/// Runs `oxsort pool`.
pub fn run(args: PoolArgs) -> Result<i32> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    match args.size.as_deref() {
        None => println!("{}", pool::state()?),
        Some("off") => {
            anyhow::ensure!(!args.no_keep, "--no-keep goes with a size to reserve, not with off");
            let s = pool::release()?;
            println!("{s}");
            if s.pages > 0 {
                // Pages in use stay reserved (as surplus) until their process unmaps them.
                eprintln!("oxsort: {} pages of the pool are still in use", s.pages);
            }
        }
        Some(size) => {
            let bytes = oxsort_lang::parse_bytes(size)
                .with_context(|| format!("pool size {size:?} (e.g. 5G, or off)"))?;
            let t = std::time::Instant::now();
            let r = pool::reserve(bytes, threads, !args.no_keep)?;
            let secs = t.elapsed().as_secs_f64();
            println!(
                "{}\ntouched {} on {threads} threads in {secs:.2} s",
                r.state,
                human_bytes(r.warmed)
            );
            if let Some(e) = r.not_kept {
                eprintln!("oxsort: {e}");
            }
        }
    }
    Ok(0)
}

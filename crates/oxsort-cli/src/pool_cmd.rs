//! `oxsort pool [SIZE|off]`: the hugetlb pool big buffers come from (see `oxsort_io::pool`).
//! Without an argument it prints the pool; with a size it reserves a pool of that size and
//! touches every page of it on all cores, so that the first sort does not pay for populating
//! it, and keeps the pages in a file on a hugetlbfs mount so that no sort pays for clearing
//! them; `off` removes the file and gives the pool back.

use anyhow::{Context, Result};
use oxsort_engine::human_bytes;
use oxsort_io::pool;

/// Arguments of `oxsort pool`.
#[derive(clap::Args, Debug)]
pub struct PoolArgs {
    /// Size to reserve (e.g. 5G: the `--memory` of the sorts to come), kept warm in
    /// /run/oxsort/hugepages/pool; or `off` to remove that file and release the pool; without
    /// it, print the pool.
    #[arg(value_name = "SIZE|off")]
    pub size: Option<String>,
    /// Reserve and warm the pool without keeping it in a file: every process may then map
    /// its free pages (the Python package, other users), and the kernel clears each page a
    /// process maps.
    #[arg(long)]
    pub no_keep: bool,
}

/// Runs `oxsort pool`.
pub fn run(args: PoolArgs) -> Result<i32> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    match args.size.as_deref() {
        None => print(pool::state()?),
        Some("off") => {
            if args.no_keep {
                anyhow::bail!("--no-keep goes with a size to reserve, not with off");
            }
            let s = pool::release()?;
            print(s);
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
            print(r.state);
            println!(
                "touched {} on {threads} threads in {:.2} s",
                human_bytes(r.warmed),
                t.elapsed().as_secs_f64()
            );
            if let Some(e) = r.not_kept {
                eprintln!(
                    "oxsort: the pool is not kept warm in {}: {} (each sort clears the pages \
                     it maps)",
                    oxsort_io::warm::KEPT_FILE,
                    oxsort_io::os_message(&e)
                );
            }
        }
    }
    Ok(0)
}

fn print(s: pool::PoolState) {
    println!(
        "hugetlb pool: {} pages of 2 MiB ({}), {} free",
        s.pages,
        human_bytes(s.bytes()),
        s.free
    );
    if s.kept > 0 {
        println!("kept warm: {} pages in {}", s.kept, oxsort_io::warm::KEPT_FILE);
    }
}

//! Sequential throughput of the Reader and Writer pipelines, to compare with `dd` and O_DIRECT.
//!
//! ```text
//! cargo run --release -p oxsort-io --example speed -- write /path/file 2048 uring|threads
//! sync; echo 3 > /proc/sys/vm/drop_caches
//! cargo run --release -p oxsort-io --example speed -- read  /path/file 2048 uring|threads
//! ```
//! Sizes are in MiB; transfers are 16 MiB with 4 in flight (the engine's defaults for runs).

use std::sync::Arc;
use std::time::Instant;

use oxsort_io::{AlignedBuf, DirectFile, IoOptions, Reader, Writer};

const TRANSFER: usize = 16 << 20;
const DEPTH: usize = 4;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: speed read|write PATH MIB uring|threads");
        std::process::exit(2);
    }
    let path = std::path::Path::new(&args[2]);
    let bytes = args[3].parse::<u64>()? << 20;
    let opts = IoOptions { no_uring: args[4] == "threads", ..Default::default() };
    let start = Instant::now();
    let stats = match args[1].as_str() {
        "write" => {
            let f = Arc::new(DirectFile::create(path, &opts)?);
            if std::env::var_os("SPEED_NO_PREALLOCATE").is_none() {
                f.preallocate(bytes)?;
            }
            let setup = start.elapsed();
            let mut w = Writer::new(f.clone(), 0, DEPTH, &opts)?;
            let mut left = bytes;
            while left > 0 {
                let n = left.min(TRANSFER as u64) as usize;
                let buf = w.take_buf().unwrap_or_else(|| {
                    let mut b = AlignedBuf::new(TRANSFER);
                    b.fill(0x5a);
                    b
                });
                w.write(buf, n)?;
                left -= n as u64;
            }
            let backend = w.backend();
            let s = w.finish()?;
            let before_sync = start.elapsed();
            f.sync()?;
            println!(
                "backend={backend:?} direct={} (create+preallocate {:.3} s, fsync {:.3} s)",
                f.is_direct(),
                setup.as_secs_f64(),
                (start.elapsed() - before_sync).as_secs_f64()
            );
            s
        }
        "read" => {
            let f = Arc::new(DirectFile::open(path, &opts)?);
            let len = f.len()?.min(bytes);
            let mut r = Reader::new(f.clone(), 0..len, TRANSFER, DEPTH, &opts)?;
            let mut sum = 0u64;
            while let Some(c) = r.next_chunk() {
                let c = c?;
                sum = sum.wrapping_add(c.data()[c.len - 1] as u64);
                r.recycle(c.buf);
            }
            println!("backend={:?} direct={} (checksum {sum})", r.backend(), f.is_direct());
            r.stats()
        }
        other => return Err(format!("unknown mode {other}").into()),
    };
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} {} MiB in {:.3} s = {:.1} MiB/s (busy {:.3} s, {} transfers)",
        args[1],
        stats.bytes >> 20,
        secs,
        stats.bytes as f64 / secs / (1 << 20) as f64,
        stats.busy.as_secs_f64(),
        stats.transfers
    );
    Ok(())
}

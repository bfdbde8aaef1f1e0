//! The I/O floor: what the disk itself can do, measured the way `fio` measures it (O_DIRECT,
//! [`TRANSFER`]-byte transfers, [`DEPTH`] in flight), so a sort is judged against the disk's
//! limit and not against one-transfer-at-a-time copying.
//!
//! ```text
//!   read:   thread t reads blocks t, t+DEPTH, t+2*DEPTH, ... of the input   (DEPTH in flight)
//!   write:  thread t writes the same blocks of a scratch file, then fdatasync
//!   mixed:  both at once, DEPTH in flight each (one pass of a two-pass sort reads and writes)
//!   floor1 = read_s + write_s    (a one-pass sort: no output byte before the last input byte)
//!   floor2 = 2 * min(mixed_s, floor1)   (a two-pass sort may overlap its reads and writes or
//!                                        take them in turn, whichever the disk serves faster)
//! ```
//!
//! These are the definitions of `../shared/tools/iofloor` (which runs fio), so the figures
//! `oxsort bench` prints and the ones the bench scripts print mean the same.
//!
//! Transfers in flight come from [`DEPTH`] threads each doing one positional transfer at a time,
//! which keeps the queue as deep as `fio --iodepth` without depending on io_uring being allowed.

use std::path::Path;
use std::time::Instant;

use oxsort_io::{AlignedBuf, DirectFile, IoOptions, DIRECT_ALIGN};
use serde::Serialize;

use crate::runs::median;
use crate::Result;

/// Bytes per transfer: 4 MiB, as `../shared/tools/iofloor` runs fio (`--bs=4M`).
pub const TRANSFER: usize = 4 << 20;
/// Transfers in flight: 16, as `iofloor` runs fio (`--iodepth=16`); on the virtio disk of the
/// machines oxsort is benchmarked on, fewer than 8 in flight leave throughput on the table.
pub const DEPTH: usize = 16;

/// The disk's floor for moving one file's bytes.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Floor {
    /// Bytes read and then written.
    pub bytes: u64,
    /// Seconds to read them (direct, [`DEPTH`] in flight).
    pub read_s: f64,
    /// Seconds to write as many bytes to a scratch file and make them durable.
    pub write_s: f64,
    /// Seconds to read the input and write as many bytes at the same time.
    pub mixed_s: f64,
    /// The one-pass sort floor: `read_s + write_s`.
    pub floor1_s: f64,
    /// The two-pass sort floor: `2 * min(mixed_s, floor1_s)`.
    pub floor2_s: f64,
    /// Whether the file system accepted O_DIRECT (if not, the page cache was in the way).
    pub direct: bool,
    /// How it was measured, for the report.
    pub method: String,
}

impl Floor {
    /// The measurement with each figure the median of the runs' (`None` for no runs). As
    /// `iofloor` combines its medians: floor1 from the read and write medians, floor2 from it
    /// and the mixed median.
    pub fn median_of(floors: &[Floor]) -> Option<Floor> {
        let first = floors.first()?;
        let m = |f: fn(&Floor) -> f64| median(&floors.iter().map(f).collect::<Vec<_>>());
        let (read_s, write_s, mixed_s) = (m(|f| f.read_s), m(|f| f.write_s), m(|f| f.mixed_s));
        Some(Floor {
            read_s,
            write_s,
            mixed_s,
            floor1_s: read_s + write_s,
            floor2_s: 2.0 * mixed_s.min(read_s + write_s),
            ..first.clone()
        })
    }
    /// Read throughput in MB/s.
    pub fn read_mb_s(&self) -> f64 {
        rate(self.bytes, self.read_s)
    }
    /// Write throughput in MB/s.
    pub fn write_mb_s(&self) -> f64 {
        rate(self.bytes, self.write_s)
    }
    /// The floor of a sort of `bytes` in `passes` passes, scaled from this measurement: floor1
    /// for one pass, half of floor2 per pass for more.
    pub fn sort_floor_s(&self, bytes: u64, passes: u32) -> f64 {
        if self.bytes == 0 {
            return 0.0;
        }
        let per_pass = if passes <= 1 { self.floor1_s } else { self.floor2_s / 2.0 };
        per_pass * bytes as f64 / self.bytes as f64 * passes.max(1) as f64
    }

    /// The floor of a sort of this file's bytes in `passes` passes.
    pub fn floor_s(&self, passes: u32) -> f64 {
        self.sort_floor_s(self.bytes, passes)
    }
}

fn rate(bytes: u64, s: f64) -> f64 {
    if s > 0.0 {
        bytes as f64 / 1e6 / s
    } else {
        0.0
    }
}

/// Measures the floor of `input`: reads all of it, then writes as many bytes to `scratch`, then
/// does both at once (the scratch file removed afterwards). `before_each` runs before each of
/// the three measurements (the caller drops the page cache there when it can).
pub fn measure(input: &Path, scratch: &Path, before_each: &dyn Fn()) -> Result<Floor> {
    let io = IoOptions::default();
    let file = DirectFile::open(input, &io)?;
    let bytes = file.len()?;
    let blocks = bytes.div_ceil(TRANSFER as u64);
    before_each();
    let t = Instant::now();
    striped(blocks, |buf, off| {
        file.read_at(buf, off)?;
        Ok(())
    })?;
    let read_s = t.elapsed().as_secs_f64();
    let direct = file.is_direct();
    drop(file);

    before_each();
    let write_s = timed_write(scratch, bytes, &io);
    let _ = std::fs::remove_file(scratch);
    let write_s = write_s?;

    // Reading and writing at once: the reads on threads of their own while the writes run.
    before_each();
    let file = DirectFile::open(input, &io)?;
    let mixed_s = std::thread::scope(|s| {
        let t = Instant::now();
        let reader = s.spawn(|| {
            striped(blocks, |buf, off| {
                file.read_at(buf, off)?;
                Ok(())
            })
        });
        let written = timed_write(scratch, bytes, &io);
        let read = reader.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        written.and(read).map(|_| t.elapsed().as_secs_f64())
    });
    let _ = std::fs::remove_file(scratch);
    let mixed_s = mixed_s?;
    let floor1_s = read_s + write_s;
    Ok(Floor {
        bytes,
        read_s,
        write_s,
        mixed_s,
        floor1_s,
        floor2_s: 2.0 * mixed_s.min(floor1_s),
        direct,
        method: format!(
            "{} MiB transfers, {DEPTH} in flight ({DEPTH} threads), {}; read the input, then \
             write as many bytes and fdatasync, then both at once ({DEPTH} in flight each)",
            TRANSFER >> 20,
            if direct { "O_DIRECT" } else { "buffered (O_DIRECT refused)" }
        ),
    })
}

/// Seconds to write `bytes` (rounded up to whole aligned blocks, so every transfer goes direct)
/// to a new file `path` and make them durable; the file is left for the caller to remove.
fn timed_write(path: &Path, bytes: u64, io: &IoOptions) -> Result<f64> {
    let out = DirectFile::create(path, io)?;
    let aligned = bytes.div_ceil(DIRECT_ALIGN as u64) * DIRECT_ALIGN as u64;
    let blocks = bytes.div_ceil(TRANSFER as u64);
    out.preallocate(aligned)?;
    let t = Instant::now();
    striped(blocks, |buf, off| {
        let len = (aligned - off).min(TRANSFER as u64) as usize;
        out.write_at(&buf[..len], off)?;
        Ok(())
    })?;
    out.sync()?;
    Ok(t.elapsed().as_secs_f64())
}

/// Runs `op(buffer, offset)` on every block, [`DEPTH`] threads each taking every DEPTH-th block.
fn striped(blocks: u64, op: impl Fn(&mut [u8], u64) -> Result<()> + Sync) -> Result<()> {
    let threads = (DEPTH as u64).min(blocks.max(1)) as usize;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let op = &op;
                s.spawn(move || {
                    let mut buf = AlignedBuf::new(TRANSFER);
                    buf.fill(0x5a);
                    let mut b = t as u64;
                    while b < blocks {
                        op(&mut buf, b * TRANSFER as u64)?;
                        b += threads as u64;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_a_small_file_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in");
        // Not a whole number of transfers or alignment blocks: the tail must be read too.
        std::fs::write(&input, vec![7u8; TRANSFER * 3 + 1234]).unwrap();
        let scratch = dir.path().join("scratch");
        let calls = std::sync::atomic::AtomicU32::new(0);
        let f = measure(&input, &scratch, &|| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(f.bytes, (TRANSFER * 3 + 1234) as u64);
        assert!(f.read_s > 0.0 && f.write_s > 0.0);
        assert!((f.floor1_s - f.read_s - f.write_s).abs() < 1e-12);
        assert!(f.mixed_s > 0.0);
        assert!((f.floor2_s - 2.0 * f.mixed_s.min(f.floor1_s)).abs() < 1e-12);
        assert_eq!(calls.into_inner(), 3);
        assert!(!scratch.exists(), "the scratch file is removed");
        // One pass of twice the bytes takes twice floor1; two passes of them twice floor2.
        assert!((f.sort_floor_s(f.bytes * 2, 1) - 2.0 * f.floor1_s).abs() < 1e-9);
        assert!((f.sort_floor_s(f.bytes * 2, 2) - 2.0 * f.floor2_s).abs() < 1e-9);
        assert!((f.floor_s(2) - f.floor2_s).abs() < 1e-9);
    }

    #[test]
    fn a_missing_input_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = measure(&dir.path().join("nope"), &dir.path().join("s"), &|| {}).unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }
}

//! The joined records written straight to SORTOUT when the main task of a JOINKEYS job has
//! nothing to do to them (`OPTION COPY` and no other statement): no main task and no pipe, the
//! same all-or-nothing output (a temporary name, renamed when whole).
//!
//! ```text
//!  join ─ record ─> | block: a whole number of records and of 4 KiB pages |
//!                          │ full: CRC32-summed (the output's checksum), then
//!                          v
//!                   write-behind pipeline (direct I/O) ─> SORTOUT.tmp ─ rename ─> SORTOUT
//! ```

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use oxsort_engine::{checksum_hex, checksum_records, FileStats, PhaseStats, SortStats};
use oxsort_io::{AlignedBuf, AtomicOutput, IoOptions, OutputTarget, Writer, DIRECT_ALIGN};

use crate::error::JobError;
use crate::join_merge::JoinedOut;
use crate::tuning::{
    DIRECT_BLOCK_BYTES as BLOCK_BYTES, DIRECT_WRITE_DEPTH_MAX, DIRECT_WRITE_DEPTH_MIN,
    DIRECT_WRITE_SHARE,
};

/// Where the blocks go (one of each per job: the size difference does not matter).
#[allow(clippy::large_enum_variant)]
enum Target {
    /// A file: a temporary name, renamed when whole.
    File { out: AtomicOutput, writer: Writer },
    /// Standard output, a device, a FIFO: written in order where it is, never truncated.
    Stream(BufWriter<Box<dyn Write + Send>>),
}

/// The output of a join whose main task only copies.
pub(crate) struct DirectOut {
    target: Target,
    name: String,
    record_len: usize,
    block: AlignedBuf,
    fill: usize,
    records: u64,
    checksum: u128,
    /// When the output was opened (with the join's sides starting): the phase's wall time and
    /// the process's CPU time then.
    started: Instant,
    cpu_at_start: (f64, f64),
}

/// Writes in flight behind the join's own output with a `budget` of memory (see
/// [`DIRECT_WRITE_SHARE`]).
pub(crate) fn write_depth(budget: u64) -> usize {
    let blocks = budget / DIRECT_WRITE_SHARE / BLOCK_BYTES as u64;
    (blocks as usize).clamp(DIRECT_WRITE_DEPTH_MIN, DIRECT_WRITE_DEPTH_MAX)
}

/// The memory the join's own output holds in flight with a `budget`.
pub(crate) fn write_memory(budget: u64) -> u64 {
    (write_depth(budget) * BLOCK_BYTES) as u64
}

impl DirectOut {
    /// The output `path` (`-`: standard output) of `record_len`-byte records.
    pub(crate) fn create(
        path: &Path,
        record_len: usize,
        depth: usize,
        io: &IoOptions,
    ) -> Result<Self, Opening> {
        let stream =
            |w: Box<dyn Write + Send>| Target::Stream(BufWriter::with_capacity(BLOCK_BYTES, w));
        let target = if crate::is_std(path) {
            stream(Box::new(std::io::stdout()))
        } else {
            let p = path.to_path_buf();
            match oxsort_io::probe_output(&p)? {
                OutputTarget::Directory => {
                    return Err(Opening::Io(std::io::Error::other(format!(
                        "{} is a directory",
                        path.display()
                    ))))
                }
                OutputTarget::Stream => {
                    stream(Box::new(std::fs::OpenOptions::new().write(true).open(&p)?))
                }
                OutputTarget::File => {
                    let out = AtomicOutput::create(&p, io)?;
                    let writer = Writer::new(out.file().clone(), 0, depth, io)?;
                    Target::File { out, writer }
                }
            }
        };
        Ok(DirectOut {
            target,
            name: path.display().to_string(),
            record_len,
            block: AlignedBuf::new(block_len(record_len)),
            fill: 0,
            records: 0,
            checksum: 0,
            started: Instant::now(),
            cpu_at_start: oxsort_engine::cpu_times(),
        })
    }

    /// Writes the block (whole records) and starts the next.
    fn flush_block(&mut self) -> std::io::Result<()> {
        if self.fill == 0 {
            return Ok(());
        }
        let data = &self.block[..self.fill];
        self.checksum += checksum_records(data, self.record_len);
        self.records += (self.fill / self.record_len) as u64;
        match &mut self.target {
            Target::Stream(w) => w.write_all(data)?,
            Target::File { writer, .. } => {
                let next = writer.take_buf().unwrap_or_else(|| AlignedBuf::new(self.block.len()));
                let full = std::mem::replace(&mut self.block, next);
                writer.write(full, self.fill).map_err(std::io::Error::other)?;
            }
        }
        self.fill = 0;
        Ok(())
    }

    /// Writes what is left, commits the output, and gives the statistics of what was written.
    pub(crate) fn finish(
        mut self,
        memory_budget: u64,
        threads: usize,
    ) -> Result<SortStats, JobError> {
        let name = self.name.clone();
        let what = || format!("writing the output {name}");
        self.flush_block().map_err(|e| JobError::io(what(), e))?;
        let bytes = self.records * self.record_len as u64;
        let mut files = Vec::new();
        match self.target {
            Target::Stream(mut w) => w.flush().map_err(|e| JobError::io(what(), e))?,
            Target::File { out, writer } => {
                let direct = out.file().is_direct();
                let io = writer.finish()?;
                out.file().set_len(bytes)?;
                out.commit()?;
                files.push(FileStats {
                    path: self.name.clone(),
                    direction: "write",
                    bytes: io.bytes,
                    transfers: io.transfers,
                    busy_s: io.busy.as_secs_f64(),
                    direct,
                    temp_dir: None,
                });
            }
        }
        let checksum = checksum_hex(self.checksum);
        let elapsed_s = self.started.elapsed().as_secs_f64();
        let (user, sys) = oxsort_engine::cpu_times();
        let (user_s, sys_s) = (user - self.cpu_at_start.0, sys - self.cpu_at_start.1);
        Ok(SortStats {
            records: self.records,
            records_written: self.records,
            bytes,
            passes: 1,
            memory_budget,
            threads,
            elapsed_s,
            phases: vec![PhaseStats {
                name: "join",
                elapsed_s,
                user_s,
                sys_s,
                files,
                ..PhaseStats::default()
            }],
            input_checksum: checksum.clone(),
            checksum,
            dropped_checksum: checksum_hex(0),
            peak_rss: oxsort_engine::peak_rss(),
            notes: vec![
                "the main task only copies: the joined records went straight to the output".into(),
            ],
            ..SortStats::default()
        })
    }
}

impl JoinedOut for DirectOut {
    /// A slot in the block, which holds a whole number of records: a full block is written
    /// before the next record starts.
    fn next_record(&mut self) -> std::io::Result<&mut [u8]> {
        let len = self.record_len;
        if self.fill == self.block.len() {
            self.flush_block()?;
        }
        let at = self.fill;
        self.fill += len;
        Ok(&mut self.block[at..at + len])
    }

    /// Blocks are written when full (and by [`DirectOut::finish`]): a flush in between would
    /// cut a block short of its alignment.
    fn flush_records(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Why the direct output could not be opened.
#[derive(Debug)]
pub(crate) enum Opening {
    /// The system's error.
    Io(std::io::Error),
    /// The I/O layer's.
    File(oxsort_io::IoError),
}

impl From<std::io::Error> for Opening {
    fn from(e: std::io::Error) -> Self {
        Opening::Io(e)
    }
}

impl From<oxsort_io::IoError> for Opening {
    fn from(e: oxsort_io::IoError) -> Self {
        Opening::File(e)
    }
}

impl Opening {
    /// The error, saying what was being done.
    pub(crate) fn context(self, what: String) -> JobError {
        match self {
            Opening::Io(source) => JobError::Io { what, source },
            Opening::File(source) => JobError::File { what, source },
        }
    }
}

/// Bytes of a block of `record_len`-byte records: a multiple of the record and of the direct-I/O
/// page, at least [`BLOCK_BYTES`].
fn block_len(record_len: usize) -> usize {
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let lcm = record_len / gcd(record_len, DIRECT_ALIGN) * DIRECT_ALIGN;
    lcm * BLOCK_BYTES.div_ceil(lcm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_in_flight_follow_the_budget_within_their_bounds() {
        assert_eq!(write_depth(64 << 20), DIRECT_WRITE_DEPTH_MIN);
        assert_eq!(write_depth(1 << 30), 4);
        assert_eq!(write_depth(2 << 30), 8);
        assert_eq!(write_depth(5 << 30), DIRECT_WRITE_DEPTH_MAX);
        assert_eq!(write_memory(2 << 30), 8 * BLOCK_BYTES as u64);
    }

    #[test]
    fn a_block_holds_whole_records_and_whole_pages() {
        for len in [1, 7, 100, 4096, 4097, 10_000, 32_760] {
            let b = block_len(len);
            assert_eq!(b % len, 0, "{len}");
            assert_eq!(b % DIRECT_ALIGN, 0, "{len}");
            assert!(b >= BLOCK_BYTES && b < BLOCK_BYTES + len * DIRECT_ALIGN, "{len}: {b}");
        }
    }
}

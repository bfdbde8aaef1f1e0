//! Statistics of a sort, in the spirit of nsort's `-statistics`: per phase elapsed time, CPU,
//! I/O busy time and rates per file; runs, fan-in, bytes spilled, peak memory.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oxsort_io::human_bytes;
use serde::Serialize;

use crate::sysinfo;

/// I/O on one file during one phase.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FileStats {
    /// The file (or `-`).
    pub path: String,
    /// `read` or `write`.
    pub direction: &'static str,
    /// Bytes moved.
    pub bytes: u64,
    /// Transfers (system calls or ring operations).
    pub transfers: u64,
    /// Seconds with at least one transfer in flight.
    pub busy_s: f64,
    /// Whether the file was opened with O_DIRECT.
    pub direct: bool,
    /// For a run file: the temp directory it was given (its private subdirectory's parent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temp_dir: Option<String>,
}

impl FileStats {
    /// What a reader of `path` moved.
    pub(crate) fn read(path: String, st: &oxsort_io::IoStats, direct: bool) -> FileStats {
        FileStats {
            path,
            direction: "read",
            bytes: st.bytes,
            transfers: st.transfers,
            busy_s: st.busy.as_secs_f64(),
            direct,
            temp_dir: None,
        }
    }

    /// Bytes per second of busy time, in MB/s.
    pub fn mb_per_s(&self) -> f64 {
        if self.busy_s > 0.0 {
            self.bytes as f64 / 1e6 / self.busy_s
        } else {
            0.0
        }
    }
}

/// CPU of one thread during a phase.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ThreadStats {
    /// What the thread did: `main`, `sort`, `prefault`, `output`, `verify`, `write`.
    pub name: &'static str,
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
}

/// The threads of one sort that ended since its current phase began, each recorded as it ends.
/// Every sort has its own: sorts running side by side in one process keep their threads apart.
#[derive(Clone, Default)]
pub(crate) struct Meters(Arc<Mutex<Vec<ThreadStats>>>);

impl Meters {
    /// A meter for the calling thread, recording its CPU under `name` when dropped: hold one for
    /// a worker's life. Also names the thread `oxsort-NAME` (best effort), so an outside sampler
    /// reading `/proc/self/task/*/comm` can tell the kinds of threads apart.
    pub(crate) fn meter(&self, name: &'static str) -> ThreadMeter {
        let _ = std::fs::write("/proc/thread-self/comm", format!("oxsort-{name}"));
        ThreadMeter { name, meters: self.clone() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ThreadStats>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// See [`Meters::meter`].
pub(crate) struct ThreadMeter {
    name: &'static str,
    meters: Meters,
}

impl Drop for ThreadMeter {
    fn drop(&mut self) {
        let (user_s, sys_s) = sysinfo::thread_cpu_times();
        self.meters.lock().push(ThreadStats { name: self.name, user_s, sys_s });
    }
}

/// One phase of the sort.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PhaseStats {
    /// `input`, `merge` or `output`.
    pub name: &'static str,
    /// Wall time.
    pub elapsed_s: f64,
    /// User CPU seconds, all threads.
    pub user_s: f64,
    /// System CPU seconds, all threads.
    pub sys_s: f64,
    /// Files read and written.
    pub files: Vec<FileStats>,
    /// Threads of the phase (those of one kind summed), the calling thread first.
    pub threads: Vec<ThreadStats>,
}

/// Everything measured about one sort.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SortStats {
    /// Records read.
    pub records: u64,
    /// Records written (fewer than read with a filter or duplicate removal).
    pub records_written: u64,
    /// Bytes sorted.
    pub bytes: u64,
    /// `1` or `2`.
    pub passes: u32,
    /// Sorted runs written to temp (0 for one pass).
    pub runs: u64,
    /// Largest merge fan-in.
    pub fan_in: u64,
    /// Merge levels (0 for one pass).
    pub merge_levels: u32,
    /// Bytes written to temp files.
    pub bytes_spilled: u64,
    /// Memory-loads whose entries were put in bucket order as they were read and sorted once,
    /// part by part (the others' were sorted chunk by chunk, and part by part again: keys that
    /// do not spread over the ranges drawn from the first chunk, a merge, an INREC).
    pub bucketed_loads: u64,
    /// Bytes of input read by this process (fewer than `bytes` when a resumed sort reused runs).
    pub input_bytes_read: u64,
    /// Runs of an interrupted sort this one reused (`resume`): formed runs, or the outputs of
    /// the last merge level that finished.
    pub runs_reused: u64,
    /// Bytes of the runs reused.
    pub bytes_reused: u64,
    /// Peak resident memory of the process.
    pub peak_rss: u64,
    /// The memory budget.
    pub memory_budget: u64,
    /// Worker threads.
    pub threads: usize,
    /// Wall time of the whole sort.
    pub elapsed_s: f64,
    /// Phases in order.
    pub phases: Vec<PhaseStats>,
    /// Checksum (valsort's: 128-bit sum of record CRC32s) of the output, lowercase hex.
    pub checksum: String,
    /// Checksum of every record read, lowercase hex: `checksum` plus `dropped_checksum`
    /// (the sort fails when they do not tie).
    pub input_checksum: String,
    /// Records the filter (INCLUDE/OMIT) dropped.
    pub dropped_by_filter: u64,
    /// Input records skipped before the sort (`OPTION SKIPREC=n`): not read, not counted in
    /// `records`.
    pub skipped_records: u64,
    /// Input records not read because `OPTION STOPAFT=n` was reached.
    pub unread_records: u64,
    /// Records duplicate removal (`-u`, `SUM FIELDS=NONE`) dropped.
    pub dropped_duplicates: u64,
    /// Checksum of all dropped records (by the filter and as duplicates), lowercase hex.
    pub dropped_checksum: String,
    /// Leftovers of killed sorts removed from the temp and output directories before this sort.
    pub reclaimed: Vec<Reclaimed>,
    /// Adjacent records with equal keys in the output.
    pub duplicate_keys: u64,
    /// What was changed from what was asked, and why (from the plan).
    pub notes: Vec<String>,
    /// The data records each `OUTFIL` output got, in the statements' order.
    pub outfil: Vec<OutfilRecords>,
    /// What looked wrong in the inputs as they were read, though the sort went on (the first
    /// bytes of an input sorted as fixed-length records look like text lines).
    pub warnings: Vec<TextAsRecords>,
}

/// The data records one `OUTFIL` output got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OutfilRecords {
    /// The line of its `OUTFIL` statement (the outputs of one statement share it).
    pub line: usize,
    /// Its DD name.
    pub name: String,
    /// Data records written (report lines not counted).
    pub records: u64,
}

/// An input sorted as fixed-length records whose first bytes look like text lines: a newline
/// that is not the last byte of a record, so records cut lines. Found in the bytes the sort
/// read (an input is read once: a pipe has no second look). Each door words the remedy in its
/// own terms (a record length, or lines).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TextAsRecords {
    /// The input (`-` for standard input).
    pub input: String,
    /// The first newline's place, 1-based.
    pub newline_at: usize,
    /// The record length the sort used.
    pub record_size: usize,
    /// The length of every whole line sampled (newline included), when all are one length:
    /// then the lines are fixed records of that length.
    pub line_length: Option<usize>,
}

/// The leftovers of killed sorts one directory held, removed before a sort began.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Reclaimed {
    /// The directory swept.
    pub dir: String,
    /// The leftovers removed (temp directories, unfinished outputs).
    pub paths: Vec<String>,
    /// Disk space they held.
    pub bytes: u64,
}

/// Measures one phase: wall and CPU time between `start` and `finish`.
pub(crate) struct PhaseTimer {
    name: &'static str,
    meters: Meters,
    t0: Instant,
    cpu0: (f64, f64),
    main0: (f64, f64),
}

impl PhaseTimer {
    pub(crate) fn start(name: &'static str, meters: &Meters) -> Self {
        meters.lock().clear();
        PhaseTimer {
            name,
            meters: meters.clone(),
            t0: Instant::now(),
            cpu0: sysinfo::cpu_times(),
            main0: sysinfo::thread_cpu_times(),
        }
    }
    pub(crate) fn finish(self, files: Vec<FileStats>) -> PhaseStats {
        let (u, s) = sysinfo::cpu_times();
        let (mu, ms) = sysinfo::thread_cpu_times();
        let mut threads =
            vec![ThreadStats { name: "main", user_s: mu - self.main0.0, sys_s: ms - self.main0.1 }];
        for t in self.meters.lock().drain(..) {
            match threads.iter_mut().find(|x| x.name == t.name) {
                Some(x) => {
                    x.user_s += t.user_s;
                    x.sys_s += t.sys_s;
                }
                None => threads.push(t),
            }
        }
        PhaseStats {
            name: self.name,
            elapsed_s: self.t0.elapsed().as_secs_f64(),
            user_s: u - self.cpu0.0,
            sys_s: s - self.cpu0.1,
            files,
            threads,
        }
    }
}

/// Accumulates file statistics of one file across calls.
#[derive(Default)]
pub(crate) struct IoMeter {
    pub(crate) bytes: u64,
    pub(crate) transfers: u64,
    pub(crate) busy: Duration,
}

impl IoMeter {
    pub(crate) fn add(&mut self, bytes: u64, busy: Duration) {
        self.bytes += bytes;
        self.transfers += 1;
        self.busy += busy;
    }
    pub(crate) fn file(&self, path: String, direction: &'static str, direct: bool) -> FileStats {
        FileStats {
            path,
            direction,
            bytes: self.bytes,
            transfers: self.transfers,
            busy_s: self.busy.as_secs_f64(),
            direct,
            temp_dir: None,
        }
    }
}

impl SortStats {
    /// Human-readable report, one phase per block, like nsort's statistics.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "oxsort statistics: {} records, {} bytes, {} pass{}, {} threads, memory budget {}",
            self.records,
            self.bytes,
            self.passes,
            if self.passes == 1 { "" } else { "es" },
            self.threads,
            human_bytes(self.memory_budget)
        );
        if self.dropped_by_filter + self.dropped_duplicates > 0 {
            let _ = writeln!(
                s,
                "  written {}, dropped {} by the filter and {} as duplicates; checksum in {} = out \
                 {} + dropped {}",
                self.records_written,
                self.dropped_by_filter,
                self.dropped_duplicates,
                self.input_checksum,
                self.checksum,
                self.dropped_checksum
            );
        }
        for r in &self.reclaimed {
            let _ = writeln!(
                s,
                "  reclaimed {} leftovers of killed sorts in {} ({})",
                r.paths.len(),
                r.dir,
                human_bytes(r.bytes)
            );
        }
        if self.passes > 1 {
            let _ = writeln!(
                s,
                "  runs {}, fan-in {}, merge levels {}, spilled {}",
                self.runs,
                self.fan_in,
                self.merge_levels,
                human_bytes(self.bytes_spilled)
            );
        }
        if self.runs_reused > 0 {
            let _ = writeln!(
                s,
                "  resumed: {} runs ({}) reused, {} of input read",
                self.runs_reused,
                human_bytes(self.bytes_reused),
                human_bytes(self.input_bytes_read)
            );
        }
        for p in &self.phases {
            let _ = writeln!(
                s,
                "  {:<7} elapsed {:>8.3} s  cpu user {:>7.3} s  sys {:>7.3} s",
                p.name, p.elapsed_s, p.user_s, p.sys_s
            );
            for t in &p.threads {
                let _ = writeln!(
                    s,
                    "          thread {:<9} user {:>7.3} s  sys {:>7.3} s  busy {:>5.1}%",
                    t.name,
                    t.user_s,
                    t.sys_s,
                    if p.elapsed_s > 0.0 {
                        100.0 * (t.user_s + t.sys_s) / p.elapsed_s
                    } else {
                        0.0
                    }
                );
            }
            for f in &p.files {
                let _ = writeln!(
                    s,
                    "          {:<5} {:>14} bytes {:>7} transfers  busy {:>7.3} s  {:>8.1} MB/s  {}{}",
                    f.direction,
                    f.bytes,
                    f.transfers,
                    f.busy_s,
                    f.mb_per_s(),
                    f.path,
                    if f.direct { "" } else { " (buffered)" }
                );
            }
        }
        let _ = writeln!(
            s,
            "  overall elapsed {:.3} s, {:.1} MB/s, peak memory {}",
            self.elapsed_s,
            if self.elapsed_s > 0.0 { self.bytes as f64 / 1e6 / self.elapsed_s } else { 0.0 },
            human_bytes(self.peak_rss)
        );
        s
    }
}

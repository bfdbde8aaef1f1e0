//! The timeline of a sort: every [`INTERVAL`] the bytes read and written, CPU user/system per
//! kind of thread, memory and the phase, sampled from outside the engine's hot code.
//!
//! A [`Sampler`] thread reads `/proc/self/io` (bytes that reached the block layer, direct I/O
//! included), `/proc/self/stat` (CPU of the whole process, ended threads included),
//! `/proc/self/task/*/stat` (CPU per thread; the engine names its threads `oxsort-KIND`),
//! `/proc/self/status` (`VmRSS`) plus the hugetlb pool pages in use (which RSS leaves out).
//! The phase comes from a [`PhaseMark`] the caller sets, typically from the engine's progress
//! callback. [`Sampler::stop`] returns the [`Timeline`], which writes itself as CSV.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use oxsort_engine::Phase;
use serde::Serialize;

use crate::{BenchError, Result};

/// Time between samples: 100 ms, fine enough to see a phase of a second, coarse enough that
/// reading a few dozen small `/proc` files costs well under 1% of one core.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// Linux `USER_HZ`: the clock ticks of `/proc/*/stat`, 100 on every architecture.
const USER_HZ: f64 = 100.0;

/// Labels a [`PhaseMark`] can hold, by index (`join` and `table`: a JOINKEYS job and a table
/// sort, whose stages run at once, each one phase).
pub const PHASES: [&str; 7] = ["start", "input", "merge", "output", "join", "table", "done"];

/// The current phase, shared between whoever knows it and the sampler.
#[derive(Clone, Debug, Default)]
pub struct PhaseMark(Arc<AtomicU8>);

impl PhaseMark {
    /// A mark at `start`.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the phase by label (one of [`PHASES`]; others are ignored).
    pub fn set(&self, label: &str) {
        if let Some(i) = PHASES.iter().position(|p| *p == label) {
            self.0.store(i as u8, Ordering::Relaxed);
        }
    }
    /// Sets the phase to the engine's current one (for its progress callback).
    pub fn set_phase(&self, phase: Phase) {
        self.set(phase_label(phase));
    }
    /// The current label.
    pub fn get(&self) -> &'static str {
        PHASES[(self.0.load(Ordering::Relaxed) as usize).min(PHASES.len() - 1)]
    }
}

/// The timeline's label of an engine phase (one of [`PHASES`]).
pub fn phase_label(p: Phase) -> &'static str {
    match p {
        Phase::Input => "input",
        Phase::Merge => "merge",
        Phase::Output => "output",
    }
}

/// One sample.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Sample {
    /// Seconds since the sampler started.
    pub t_s: f64,
    /// The phase at that moment.
    pub phase: &'static str,
    /// Bytes this process has read from storage so far.
    pub read_bytes: u64,
    /// Bytes this process has written to storage so far.
    pub write_bytes: u64,
    /// Resident memory plus hugetlb pool pages held.
    pub memory_bytes: u64,
    /// User CPU seconds of the whole process since the previous sample.
    pub user_s: f64,
    /// System CPU seconds of the whole process since the previous sample.
    pub sys_s: f64,
    /// CPU since the previous sample per thread kind: (user, system) seconds, indexed like
    /// [`Timeline::kinds`] (shorter when a kind appeared later).
    pub per_kind: Vec<(f64, f64)>,
}

/// Samples of one run.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Timeline {
    /// Seconds between samples.
    pub interval_s: f64,
    /// Thread kinds seen (`main`, `sort`, `output`, `io`, `io_uring`, ...).
    pub kinds: Vec<String>,
    /// Samples in time order; the first is taken at start.
    pub samples: Vec<Sample>,
}

/// A contiguous stretch of one phase.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PhaseSpan {
    /// The phase.
    pub phase: &'static str,
    /// Start, seconds.
    pub start_s: f64,
    /// End, seconds.
    pub end_s: f64,
}

impl Timeline {
    /// Read and write throughput in MB/s over each interval between two samples:
    /// `(start, end, read, write)`.
    pub fn rates(&self) -> Vec<(f64, f64, f64, f64)> {
        self.samples
            .windows(2)
            .map(|w| {
                let dt = (w[1].t_s - w[0].t_s).max(1e-9);
                (
                    w[0].t_s,
                    w[1].t_s,
                    w[1].read_bytes.saturating_sub(w[0].read_bytes) as f64 / 1e6 / dt,
                    w[1].write_bytes.saturating_sub(w[0].write_bytes) as f64 / 1e6 / dt,
                )
            })
            .collect()
    }

    /// CPU use in cores (1.0 = one core busy) over each interval between two samples, per
    /// kind, then the total: `(start, end, [per kind], total)`.
    pub fn cpu(&self) -> Vec<(f64, f64, Vec<f64>, f64)> {
        self.samples
            .windows(2)
            .map(|w| {
                let dt = (w[1].t_s - w[0].t_s).max(1e-9);
                let kinds = (0..self.kinds.len())
                    .map(|k| w[1].per_kind.get(k).map_or(0.0, |(u, s)| (u + s) / dt))
                    .collect();
                (w[0].t_s, w[1].t_s, kinds, (w[1].user_s + w[1].sys_s) / dt)
            })
            .collect()
    }

    /// The phases as contiguous spans (`start` and `done` left out).
    pub fn phases(&self) -> Vec<PhaseSpan> {
        let mut spans: Vec<PhaseSpan> = Vec::new();
        for w in self.samples.windows(2) {
            let phase = w[1].phase;
            match spans.last_mut() {
                Some(s) if s.phase == phase => s.end_s = w[1].t_s,
                _ => spans.push(PhaseSpan { phase, start_s: w[0].t_s, end_s: w[1].t_s }),
            }
        }
        spans.retain(|s| s.phase != "start" && s.phase != "done");
        spans
    }

    /// Peak memory seen.
    pub fn peak_memory(&self) -> u64 {
        self.samples.iter().map(|s| s.memory_bytes).max().unwrap_or(0)
    }

    /// The CSV: one line per sample, cumulative bytes, interval rates and CPU seconds.
    pub fn to_csv(&self) -> String {
        let mut s = String::from(
            "t_s,phase,read_bytes,write_bytes,read_mb_s,write_mb_s,memory_bytes,cpu_user_s,cpu_sys_s",
        );
        for k in &self.kinds {
            let _ = write!(s, ",{k}_user_s,{k}_sys_s");
        }
        s.push('\n');
        let mut prev: Option<&Sample> = None;
        for x in &self.samples {
            let (r, w) = match prev {
                Some(p) => {
                    let dt = (x.t_s - p.t_s).max(1e-9);
                    (
                        x.read_bytes.saturating_sub(p.read_bytes) as f64 / 1e6 / dt,
                        x.write_bytes.saturating_sub(p.write_bytes) as f64 / 1e6 / dt,
                    )
                }
                None => (0.0, 0.0),
            };
            let _ = write!(
                s,
                "{:.3},{},{},{},{:.1},{:.1},{},{:.2},{:.2}",
                x.t_s,
                x.phase,
                x.read_bytes,
                x.write_bytes,
                r,
                w,
                x.memory_bytes,
                x.user_s,
                x.sys_s
            );
            for k in 0..self.kinds.len() {
                let (u, y) = x.per_kind.get(k).copied().unwrap_or((0.0, 0.0));
                let _ = write!(s, ",{u:.2},{y:.2}");
            }
            s.push('\n');
            prev = Some(x);
        }
        s
    }

    /// Writes [`Timeline::to_csv`] to `path`.
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        fs::write(path, self.to_csv()).map_err(|e| BenchError::io(path, e))
    }
}

/// Runs `job` sampled every [`INTERVAL`] into the CSV `path`, its phases read from `mark`
/// (which the job, or the sort it runs, sets): the file is created first, so a timeline that
/// cannot be written stops the job before it starts, and it is written whatever the job
/// returns (the timeline of a failed sort is worth having).
pub fn record<T>(path: &Path, mark: &PhaseMark, job: impl FnOnce() -> T) -> Result<T> {
    fs::File::create(path).map_err(|e| BenchError::Create {
        doing: format!("creating the timeline {}", path.display()),
        source: Box::new(e),
    })?;
    let sampler = Sampler::start(INTERVAL, mark.clone())?;
    let result = job();
    mark.set("done");
    sampler.stop().write_csv(path)?;
    Ok(result)
}

/// A running sampler thread; [`Sampler::stop`] ends it and returns what it saw.
pub struct Sampler {
    stop: mpsc::Sender<()>,
    handle: std::thread::JoinHandle<Timeline>,
}

impl Sampler {
    /// Starts sampling every `interval`, reading the phase from `phase`.
    pub fn start(interval: Duration, phase: PhaseMark) -> Result<Sampler> {
        let (stop, rx) = mpsc::channel();
        // The first sample is taken here, before returning, so everything the caller starts
        // afterwards falls after it.
        let mut state = State::new();
        let t0 = Instant::now();
        let mut tl = Timeline { interval_s: interval.as_secs_f64(), ..Timeline::default() };
        let first = state.sample(t0, phase.get(), &mut tl.kinds);
        tl.samples.push(first);
        let handle = std::thread::Builder::new()
            .name("oxsort-timeline".into())
            .spawn(move || {
                let mut next = t0;
                loop {
                    next += interval;
                    let wait = next.saturating_duration_since(Instant::now());
                    let stopped =
                        !matches!(rx.recv_timeout(wait), Err(mpsc::RecvTimeoutError::Timeout));
                    // When stopped, a last sample at the end, so the totals are complete.
                    let s = state.sample(t0, phase.get(), &mut tl.kinds);
                    tl.samples.push(s);
                    if stopped {
                        break;
                    }
                }
                tl
            })
            .map_err(|e| BenchError::io("/proc/self/task", e))?;
        Ok(Sampler { stop, handle })
    }

    /// Stops the sampler (after one last sample) and returns the timeline.
    pub fn stop(self) -> Timeline {
        let _ = self.stop.send(());
        self.handle.join().unwrap_or_default()
    }
}

/// The kind that holds CPU time of threads that ended between two samples.
pub const ENDED: &str = "ended";

/// Differences between the process's CPU time and the sum over its live threads up to this
/// are rounding (each is kept in 10 ms ticks and scaled on its own), not an ended thread.
const ENDED_NOISE_S: f64 = 2.5 / USER_HZ;

/// What the sampler remembers between samples.
struct State {
    pid: u32,
    /// CPU ticks (user, system) per thread id at the previous sample.
    threads: HashMap<u32, (u64, u64)>,
    /// Process CPU ticks at the previous sample.
    process: (u64, u64),
}

impl State {
    fn new() -> Self {
        let process = stat_ticks("/proc/self/stat").map(|(_, u, s)| (u, s)).unwrap_or((0, 0));
        State { pid: std::process::id(), threads: HashMap::new(), process }
    }

    fn sample(&mut self, t0: Instant, phase: &'static str, kinds: &mut Vec<String>) -> Sample {
        let t_s = t0.elapsed().as_secs_f64();
        let (read_bytes, write_bytes) = proc_io();
        let memory_bytes = status_kb("VmRSS:") * 1024 + oxsort_io::bigmem::hugetlb_bytes();
        let (u, s) = stat_ticks("/proc/self/stat").map(|(_, u, s)| (u, s)).unwrap_or(self.process);
        let user_s = u.saturating_sub(self.process.0) as f64 / USER_HZ;
        let sys_s = s.saturating_sub(self.process.1) as f64 / USER_HZ;
        self.process = (u, s);
        let mut per_kind = vec![(0.0, 0.0); kinds.len()];
        let mut seen = HashMap::with_capacity(self.threads.len());
        if let Ok(dir) = fs::read_dir("/proc/self/task") {
            for e in dir.flatten() {
                let Some(tid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                    continue;
                };
                let Some((comm, u, s)) = stat_ticks(&format!("/proc/self/task/{tid}/stat")) else {
                    continue;
                };
                let (pu, ps) = self.threads.get(&tid).copied().unwrap_or((0, 0));
                seen.insert(tid, (u, s));
                let kind = kind_of(&comm, tid == self.pid);
                let k = match kinds.iter().position(|x| *x == kind) {
                    Some(k) => k,
                    None => {
                        kinds.push(kind);
                        per_kind.push((0.0, 0.0));
                        kinds.len() - 1
                    }
                };
                per_kind[k].0 += u.saturating_sub(pu) as f64 / USER_HZ;
                per_kind[k].1 += s.saturating_sub(ps) as f64 / USER_HZ;
            }
        }
        self.threads = seen;
        // A thread that ended since the previous sample takes its last ticks with it from
        // /proc/self/task, but the process keeps counting them: what the live threads do not
        // account for is theirs. Per-thread and process times are rounded apart, so a tick or
        // two of difference is noise, not an ended thread.
        let counted: f64 = per_kind.iter().map(|(u, s)| u + s).sum();
        let ended = user_s + sys_s - counted;
        if ended > ENDED_NOISE_S {
            let k = match kinds.iter().position(|x| x == ENDED) {
                Some(k) => k,
                None => {
                    kinds.push(ENDED.into());
                    per_kind.push((0.0, 0.0));
                    kinds.len() - 1
                }
            };
            // Split as the process's own user and system time are split.
            let user_share = if user_s + sys_s > 0.0 { user_s / (user_s + sys_s) } else { 1.0 };
            per_kind[k].0 += ended * user_share;
            per_kind[k].1 += ended * (1.0 - user_share);
        }
        Sample { t_s, phase, read_bytes, write_bytes, memory_bytes, user_s, sys_s, per_kind }
    }
}

/// The kind of a thread from its name: `oxsort-sort` is `sort`, the io_uring workers the
/// kernel adds to the process (`iou-wrk-N`) are `io_uring`, `oxsort-io-3` is `io`.
pub fn kind_of(comm: &str, is_main: bool) -> String {
    if is_main {
        return "main".into();
    }
    if comm.starts_with("iou-") {
        return "io_uring".into();
    }
    let name = comm.strip_prefix("oxsort-").unwrap_or(comm);
    let name = name.trim_end_matches(|c: char| c.is_ascii_digit()).trim_end_matches('-');
    if name.is_empty() || name == "oxsort" {
        "other".into()
    } else {
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
    }
}

/// `(comm, utime, stime)` in ticks from a `stat` file.
fn stat_ticks(path: &str) -> Option<(String, u64, u64)> {
    let s = fs::read_to_string(path).ok()?;
    parse_stat(&s)
}

/// Parses a `/proc/*/stat` line: the name is in parentheses (and may hold spaces or `)`);
/// utime and stime are fields 14 and 15.
pub fn parse_stat(s: &str) -> Option<(String, u64, u64)> {
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let comm = s.get(open + 1..close)?.to_string();
    let f: Vec<&str> = s.get(close + 2..)?.split_whitespace().collect();
    Some((comm, f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?))
}

/// `(read_bytes, write_bytes)` of `/proc/self/io`; the syscall counters (`rchar`, `wchar`)
/// when the storage ones are missing.
fn proc_io() -> (u64, u64) {
    let s = fs::read_to_string("/proc/self/io").unwrap_or_default();
    let field = |name: &str| {
        s.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse::<u64>().ok())
    };
    match (field("read_bytes:"), field("write_bytes:")) {
        (Some(r), Some(w)) => (r, w),
        _ => (field("rchar:").unwrap_or(0), field("wchar:").unwrap_or(0)),
    }
}

fn status_kb(field: &str) -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names() {
        let line = "42 (a) b (c)) S 1 1 1 0 -1 4194304 100 0 0 0 250 30 0 0 20 0 1 0";
        assert_eq!(parse_stat(line), Some(("a) b (c)".into(), 250, 30)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn thread_kinds() {
        assert_eq!(kind_of("oxsort", true), "main");
        assert_eq!(kind_of("oxsort", false), "other");
        assert_eq!(kind_of("oxsort-sort", false), "sort");
        assert_eq!(kind_of("oxsort-io-12", false), "io");
        assert_eq!(kind_of("iou-wrk-1234", false), "io_uring");
        assert_eq!(kind_of("oxsort-timeline", false), "timeline");
    }

    /// The sampler reads the whole process, and tests run as threads of one process: tests
    /// that sample take turns.
    static SAMPLING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// `seconds` of the calling thread's own CPU time (not wall time: the machine may be busy).
    fn spin(seconds: f64) {
        let own = || {
            let s = fs::read_to_string("/proc/thread-self/stat").unwrap();
            let (_, u, s) = parse_stat(&s).unwrap();
            (u + s) as f64 / USER_HZ
        };
        let start = own();
        let mut x = 0u64;
        while own() - start < seconds {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
    }

    #[test]
    fn threads_that_end_between_samples_are_counted() {
        let _turn = SAMPLING.lock().unwrap_or_else(|e| e.into_inner());
        // One sample at start, one at stop: the thread lives and ends between them.
        let sampler = Sampler::start(Duration::from_secs(600), PhaseMark::new()).unwrap();
        let tid = std::thread::Builder::new()
            .name("oxsort-sort".into())
            .spawn(|| {
                spin(0.2);
                fs::read_link("/proc/thread-self").unwrap()
            })
            .unwrap()
            .join()
            .unwrap();
        // `join` returns when the thread has left its code, a moment before the kernel takes it
        // out of /proc/self/task (a busy machine stretches the moment): wait for that, or the
        // last sample still finds it live.
        let task = Path::new("/proc/self/task").join(tid.file_name().unwrap());
        let gone = Instant::now();
        while task.exists() && gone.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let tl = sampler.stop();
        assert_eq!(tl.samples.len(), 2);
        let ended = tl.kinds.iter().position(|k| k == ENDED).expect("an ended kind");
        let s = &tl.samples[1];
        let (u, sy) = s.per_kind[ended];
        // At least the thread's 200 ms; other tests' threads may end meanwhile too.
        assert!((0.17..=2.0).contains(&(u + sy)), "ended threads' CPU {}", u + sy);
        let counted: f64 = s.per_kind.iter().map(|(u, s)| u + s).sum();
        assert!((counted - (s.user_s + s.sys_s)).abs() < 1e-9, "kinds add up to the process");
        assert!(!tl.kinds.iter().any(|k| k == "sort"), "the ended thread was never seen live");
    }

    #[test]
    fn samples_cpu_io_and_phases() {
        let _turn = SAMPLING.lock().unwrap_or_else(|e| e.into_inner());
        let mark = PhaseMark::new();
        let sampler = Sampler::start(Duration::from_millis(20), mark.clone()).unwrap();
        mark.set("input");
        // Busy a named thread for a while, and write a file through the page cache and out.
        // Next to the sources, not in /tmp: a tmpfs never writes to storage.
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("f");
        std::thread::Builder::new()
            .name("oxsort-sort".into())
            .spawn(|| {
                spin(0.3);
                // Stay alive so the sampler sees the thread's final CPU.
                std::thread::sleep(Duration::from_millis(60));
            })
            .unwrap()
            .join()
            .unwrap();
        mark.set("output");
        std::fs::write(&path, vec![1u8; 8 << 20]).unwrap();
        std::fs::File::open(&path).unwrap().sync_all().unwrap();
        std::thread::sleep(Duration::from_millis(60));
        mark.set("done");
        let tl = sampler.stop();
        assert!(tl.samples.len() >= 10, "{} samples", tl.samples.len());
        let sort = tl.kinds.iter().position(|k| k == "sort").expect("the sort thread is seen");
        let sort_cpu: f64 =
            tl.samples.iter().filter_map(|s| s.per_kind.get(sort)).map(|c| c.0 + c.1).sum();
        // 300 ms of spinning (and reading its own stat), measured in 10 ms ticks.
        assert!((0.29..=0.45).contains(&sort_cpu), "sort thread CPU {sort_cpu}");
        let total: f64 = tl.samples.iter().map(|s| s.user_s + s.sys_s).sum();
        assert!(total >= sort_cpu - 0.02, "process CPU {total} covers the thread's {sort_cpu}");
        let last = tl.samples.last().unwrap();
        assert!(last.write_bytes - tl.samples[0].write_bytes >= 8 << 20, "write bytes counted");
        assert!(tl.peak_memory() > 0);
        let names: Vec<_> = tl.phases().iter().map(|p| p.phase).collect();
        assert_eq!(names, ["input", "output"]);
        let csv = tl.to_csv();
        let header = csv.lines().next().unwrap();
        assert!(header.contains("sort_user_s") && header.starts_with("t_s,phase,read_bytes"));
        assert_eq!(csv.lines().count(), tl.samples.len() + 1);
        let cols = header.split(',').count();
        assert!(csv.lines().all(|l| l.split(',').count() == cols));
    }
}

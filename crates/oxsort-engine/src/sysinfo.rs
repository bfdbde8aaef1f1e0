//! What the machine offers: cores, available memory (within a cgroup limit), peak memory.
//! Read from `/proc` and `/sys` so no unsafe code is needed here.

use std::fs;

/// Online cores (at least 1), as the process found them first (reading the cgroup's CPU
/// quota costs a dozen system calls; a configuration asks more than once).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
}

/// Memory this process can use without swapping others out: `MemAvailable` plus the free pages
/// of a hugetlb pool (which `MemAvailable` leaves out, and big buffers use first), capped by the
/// cgroup v2 (`memory.max`) or v1 (`memory.limit_in_bytes`) limit of this process.
pub fn available_memory() -> u64 {
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| {
        meminfo
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    let avail = field("MemAvailable:").map(|kb| kb * 1024).unwrap_or(1 << 30);
    let pool = match (field("HugePages_Free:"), field("Hugepagesize:")) {
        (Some(pages), Some(2048)) => pages * (2 << 20),
        _ => 0,
    };
    (avail + pool).min(cgroup_limit().unwrap_or(u64::MAX))
}

fn cgroup_limit() -> Option<u64> {
    let cg = fs::read_to_string("/proc/self/cgroup").ok()?;
    // (limit file, usage file) candidates: this process's own group, then the root of the
    // mount (a container sees its own group there).
    let mut candidates: Vec<(String, String)> = Vec::new();
    for line in cg.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(ctrl), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let path = path.trim_end_matches('/');
        if ctrl.is_empty() {
            for base in [format!("/sys/fs/cgroup{path}"), "/sys/fs/cgroup".to_string()] {
                candidates.push((format!("{base}/memory.max"), format!("{base}/memory.current")));
            }
        } else if ctrl.split(',').any(|c| c == "memory") {
            for base in
                [format!("/sys/fs/cgroup/memory{path}"), "/sys/fs/cgroup/memory".to_string()]
            {
                candidates.push((
                    format!("{base}/memory.limit_in_bytes"),
                    format!("{base}/memory.usage_in_bytes"),
                ));
            }
        }
    }
    let read = |p: &str| fs::read_to_string(p).ok().and_then(|v| v.trim().parse::<u64>().ok());
    candidates
        .iter()
        .filter_map(|(limit, usage)| {
            // "max" (v2) or a huge number (v1) means no limit.
            let l = read(limit).filter(|&l| l < 1 << 62)?;
            Some(l.saturating_sub(read(usage).unwrap_or(0)))
        })
        .min()
}

/// Peak memory of this process so far, in bytes: the most it held at once of resident set and
/// hugetlb-pool pages (which the resident set does not count), as [`oxsort_io::bigmem::peak_held`]
/// tracks it.
pub fn peak_rss() -> u64 {
    oxsort_io::bigmem::peak_held()
}

/// Starts [`peak_rss`] afresh from what the process holds now.
pub fn reset_peak_rss() {
    oxsort_io::bigmem::reset_peak_held()
}

/// CPU time of this process so far: (user, system) in seconds, from `/proc/self/stat`
/// (clock ticks of 1/100 s, the Linux `USER_HZ` on every architecture it exports to user space).
pub fn cpu_times() -> (f64, f64) {
    stat_cpu("/proc/self/stat")
}

/// CPU time of the calling thread so far: (user, system) in seconds.
pub fn thread_cpu_times() -> (f64, f64) {
    stat_cpu("/proc/thread-self/stat")
}

fn stat_cpu(path: &str) -> (f64, f64) {
    const USER_HZ: f64 = 100.0;
    let Ok(s) = fs::read_to_string(path) else { return (0.0, 0.0) };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let Some(rest) = s.rfind(')').map(|i| &s[i + 2..]) else { return (0.0, 0.0) };
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name and state.
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / USER_HZ;
    (get(11), get(12))
}

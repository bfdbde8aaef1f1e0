//! The machine and software a report was measured on: CPU model, cores, memory, kernel, each
//! disk, the file systems holding the data, and the oxsort build.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A block device.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Disk {
    /// Kernel name (`vda`, `nvme0n1`).
    pub name: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Whether the kernel reports it as rotational.
    pub rotational: bool,
    /// Whether it is a virtio disk of a virtual machine: its rotational flag (1 by default)
    /// says nothing of the host's medium.
    pub virtio: bool,
    /// Model string, when the device has one.
    pub model: String,
    /// I/O scheduler in use.
    pub scheduler: String,
}

impl Disk {
    /// What the disk is, in the words of a report: "rotational", "non-rotational", or for a
    /// virtio disk "virtual (virtio)", whose medium the guest cannot see.
    pub fn medium(&self) -> &'static str {
        if self.virtio {
            "virtual (virtio: the host's medium is not known)"
        } else if self.rotational {
            "rotational"
        } else {
            "non-rotational"
        }
    }
}

/// The file system holding one directory the run used.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FileSystem {
    /// The directory.
    pub dir: PathBuf,
    /// Its mount point.
    pub mount: String,
    /// The device.
    pub device: String,
    /// The type (`ext4`, `xfs`, `tmpfs`).
    pub fs_type: String,
    /// Mount options.
    pub options: String,
    /// Free bytes for unprivileged writers at probe time.
    pub free_bytes: u64,
}

/// The machine.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Machine {
    /// Host name.
    pub hostname: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Online cores.
    pub cores: usize,
    /// Total memory.
    pub memory_bytes: u64,
    /// Kernel release.
    pub kernel: String,
    /// Distribution (`PRETTY_NAME` of /etc/os-release).
    pub os: String,
    /// Block devices (partitions, loop and ram devices left out).
    pub disks: Vec<Disk>,
    /// File systems of the directories used.
    pub file_systems: Vec<FileSystem>,
    /// Bytes of the hugetlb pool reserved (`HugePages_Total x Hugepagesize`); oxsort takes its
    /// big buffers from it, which spares it the page faults of fresh memory.
    pub hugetlb_pool_bytes: u64,
    /// Whether the page cache could be dropped before each timed run (needs root).
    pub cache_dropped: bool,
}

/// The oxsort build, as the binary recorded it at build time.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Software {
    /// Package version.
    pub version: String,
    /// Git commit (with `-dirty` when the tree had changes), or `unknown`.
    pub commit: String,
    /// Profile, optimisation level, target, rustc and RUSTFLAGS.
    pub build: String,
}

fn read(path: impl AsRef<Path>) -> String {
    fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_default()
}

impl Machine {
    /// Probes this machine; `dirs` are the directories the run reads and writes.
    pub fn probe(dirs: &[PathBuf], cache_dropped: bool) -> Machine {
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let meminfo = read("/proc/meminfo");
        let field = |name: &str| {
            meminfo
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        let memory_bytes = field("MemTotal:") * 1024;
        let hugetlb_pool_bytes = field("HugePages_Total:") * field("Hugepagesize:") * 1024;
        let os = read("/etc/os-release")
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_default();
        Machine {
            hostname: read("/proc/sys/kernel/hostname"),
            cpu_model,
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            memory_bytes,
            hugetlb_pool_bytes,
            kernel: read("/proc/sys/kernel/osrelease"),
            os,
            disks: disks(),
            file_systems: dirs.iter().filter_map(|d| file_system(d)).collect(),
            cache_dropped,
        }
    }
}

fn disks() -> Vec<Disk> {
    let Ok(dir) = fs::read_dir("/sys/block") else { return Vec::new() };
    let mut out: Vec<Disk> = dir
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if ["loop", "ram", "zram", "dm-"].iter().any(|p| name.starts_with(p)) {
                return None;
            }
            let base = e.path();
            let sectors: u64 = read(base.join("size")).parse().unwrap_or(0);
            let sched = read(base.join("queue/scheduler"));
            let scheduler = sched
                .split_whitespace()
                .find(|s| s.starts_with('['))
                .map(|s| s.trim_matches(|c| c == '[' || c == ']').to_string())
                .unwrap_or(sched);
            Some(Disk {
                name,
                size_bytes: sectors * 512,
                rotational: read(base.join("queue/rotational")) == "1",
                virtio: fs::read_link(base.join("device/driver"))
                    .is_ok_and(|d| d.to_string_lossy().ends_with("virtio_blk")),
                model: read(base.join("device/model")),
                scheduler,
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The mount holding `dir`: the longest mount point of `/proc/self/mounts` that is a prefix.
fn file_system(dir: &Path) -> Option<FileSystem> {
    let dir = dir.canonicalize().ok()?;
    let mounts = read("/proc/self/mounts");
    let best = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4).then(|| (f[0], f[1].replace("\\040", " "), f[2], f[3]))
        })
        .filter(|(_, m, _, _)| dir.starts_with(m))
        .max_by_key(|(_, m, _, _)| m.len())?;
    Some(FileSystem {
        free_bytes: oxsort_io::free_space(&dir).unwrap_or(0),
        dir,
        mount: best.1,
        device: best.0.to_string(),
        fs_type: best.2.to_string(),
        options: best.3.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_this_machine() {
        let here = std::env::current_dir().unwrap();
        let m = Machine::probe(std::slice::from_ref(&here), false);
        assert!(m.cores >= 1);
        assert!(m.memory_bytes > 0);
        assert!(!m.kernel.is_empty());
        assert_eq!(m.file_systems.len(), 1);
        let fs = &m.file_systems[0];
        assert!(here.starts_with(&fs.mount), "{} under {}", here.display(), fs.mount);
        assert!(fs.free_bytes > 0);
    }
}

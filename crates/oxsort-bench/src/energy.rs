//! Energy for JouleSort: a real source when there is one, otherwise an estimate that says so.
//!
//! Sources, in order of preference:
//! - [`Meter`]: a command (a wall meter's script) that prints the joules used so far; run
//!   before and after, the difference is the sort's energy;
//! - [`Rapl`]: the CPU packages' energy counters under `/sys/class/powercap` (Intel RAPL; CPU
//!   and memory only, not disks or power supply);
//! - [`EstimateModel`]: `static W x wall s + J per CPU-second x CPU s + J per GB x GB moved`,
//!   with its coefficients printed next to every figure it gives, labelled `ESTIMATE`.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use serde::Serialize;

use crate::{BenchError, Result};

/// Where a figure came from.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EnergySource {
    /// A user-supplied meter command.
    Meter,
    /// RAPL counters.
    Rapl,
    /// The [`EstimateModel`]: not a measurement.
    Estimate,
}

impl EnergySource {
    /// `MEASURED (meter)`, `MEASURED (RAPL: CPU and memory only)` or `ESTIMATE`.
    pub fn label(self) -> &'static str {
        match self {
            EnergySource::Meter => "MEASURED (meter command)",
            EnergySource::Rapl => "MEASURED (RAPL: CPU packages and memory only)",
            EnergySource::Estimate => "ESTIMATE",
        }
    }
}

/// A command printing cumulative joules.
#[derive(Clone, Debug)]
pub struct Meter {
    command: String,
}

impl Meter {
    /// Checks the command by running it once: it must succeed and print a number.
    pub fn new(command: &str) -> Result<(Meter, f64)> {
        let m = Meter { command: command.to_string() };
        let j = m.read()?;
        Ok((m, j))
    }

    /// Runs the command; the first number it prints.
    pub fn read(&self) -> Result<f64> {
        let err = |problem: String| BenchError::Meter { command: self.command.clone(), problem };
        let out = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .output()
            .map_err(|e| err(format!("cannot run it: {e}")))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(err(match stderr.trim() {
                "" => format!("failed ({})", out.status),
                e => format!("failed ({}): {e}", out.status),
            }));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        first_number(&text).ok_or_else(|| err(format!("printed no number: {:?}", text.trim())))
    }
}

/// The first decimal number in `s` (`joules: 123.4 J` gives 123.4).
pub fn first_number(s: &str) -> Option<f64> {
    s.split(|c: char| {
        !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e' || c == 'E' || c == '+')
    })
    .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
    .find_map(|t| t.parse::<f64>().ok().filter(|v| v.is_finite()))
}

/// RAPL package domains of this machine.
#[derive(Clone, Debug)]
pub struct Rapl {
    /// `(energy_uj file, max_energy_range_uj)` per top-level domain.
    domains: Vec<(PathBuf, u64)>,
}

impl Rapl {
    /// The top-level domains under `/sys/class/powercap` (sub-domains such as `core` are
    /// inside their package's count and left out), when they can be read.
    pub fn probe() -> Option<Rapl> {
        let dir = fs::read_dir("/sys/class/powercap").ok()?;
        let mut domains = Vec::new();
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // intel-rapl:0 is a package; intel-rapl:0:1 a part of it.
            if !name.contains("rapl:") || name.matches(':').count() != 1 {
                continue;
            }
            let energy = e.path().join("energy_uj");
            let max = fs::read_to_string(e.path().join("max_energy_range_uj"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(u64::MAX);
            if fs::read_to_string(&energy).ok()?.trim().parse::<u64>().is_ok() {
                domains.push((energy, max));
            }
        }
        (!domains.is_empty()).then_some(Rapl { domains })
    }

    /// The counters now, microjoules per domain.
    pub fn read(&self) -> Vec<u64> {
        self.domains
            .iter()
            .map(|(p, _)| {
                fs::read_to_string(p).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
            })
            .collect()
    }

    /// Joules between two readings, allowing each counter to wrap once.
    pub fn joules(&self, before: &[u64], after: &[u64]) -> f64 {
        self.domains
            .iter()
            .zip(before.iter().zip(after))
            .map(|((_, max), (&b, &a))| if a >= b { a - b } else { max - b + a })
            .sum::<u64>() as f64
            / 1e6
    }
}

/// The estimate used when nothing measures energy.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct EstimateModel {
    /// Watts drawn whatever the load (board, memory, power supply losses, idle cores).
    pub static_w: f64,
    /// Joules per second of one core busy.
    pub j_per_cpu_s: f64,
    /// Joules per gigabyte read or written by the storage.
    pub j_per_gb: f64,
}

/// The default coefficients: a small server, sized from published figures of the parts.
/// 25 W static (board, DRAM, fans, PSU loss at low load), 10 J per core-second (about what a
/// server core adds between idle and full load), 3 J per GB moved (an NVMe SSD drawing ~6 W
/// while moving ~2 GB/s).
pub const DEFAULT_MODEL: EstimateModel =
    EstimateModel { static_w: 25.0, j_per_cpu_s: 10.0, j_per_gb: 3.0 };

impl EstimateModel {
    /// Joules for a run of `wall_s` seconds, `cpu_s` CPU seconds and `bytes_moved` bytes.
    pub fn joules(&self, wall_s: f64, cpu_s: f64, bytes_moved: u64) -> f64 {
        self.static_w * wall_s + self.j_per_cpu_s * cpu_s + self.j_per_gb * bytes_moved as f64 / 1e9
    }

    /// The model, written out with its coefficients.
    pub fn describe(&self) -> String {
        format!(
            "ESTIMATE: E = {} W x wall s + {} J/CPU-s x CPU s + {} J/GB x GB read and written \
             (no energy meter on this machine; not a measurement)",
            self.static_w, self.j_per_cpu_s, self.j_per_gb
        )
    }
}

/// Energy of one run, with its provenance.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Energy {
    /// Where it came from.
    pub source: EnergySource,
    /// `ESTIMATE` or `MEASURED (...)`.
    pub label: String,
    /// Joules.
    pub joules: f64,
    /// The model and coefficients, for an estimate.
    pub model: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_meter_output() {
        assert_eq!(first_number("123.5\n"), Some(123.5));
        assert_eq!(first_number("energy: 4e3 J"), Some(4000.0));
        assert_eq!(first_number("no digits here"), None);
        assert_eq!(first_number(""), None);
    }

    #[test]
    fn meter_commands() {
        let (m, j) = Meter::new("echo 42.5").unwrap();
        assert_eq!(j, 42.5);
        assert_eq!(m.read().unwrap(), 42.5);
        let e = Meter::new("exit 3").unwrap_err().to_string();
        assert!(e.contains("exit 3") && e.contains("failed"), "{e}");
        let e = Meter::new("echo none").unwrap_err().to_string();
        assert!(e.contains("printed no number"), "{e}");
    }

    #[test]
    fn estimate_adds_its_terms() {
        let m = EstimateModel { static_w: 10.0, j_per_cpu_s: 5.0, j_per_gb: 2.0 };
        assert_eq!(m.joules(2.0, 3.0, 4_000_000_000), 20.0 + 15.0 + 8.0);
        assert!(m.describe().starts_with("ESTIMATE"));
    }

    #[test]
    fn rapl_wraps() {
        let r = Rapl { domains: vec![("x".into(), 1000), ("y".into(), 1000)] };
        assert_eq!(r.joules(&[900, 10], &[100, 20]), (200.0 + 10.0) / 1e6);
    }
}

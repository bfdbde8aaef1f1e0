//! [`EngineTester`]: one tester that runs a sort through every path of the engine — one pass
//! with 1 to 3 threads, two passes, several temp directories, a forced multi-level merge,
//! io_uring off, buffered I/O — and after every case checks that nothing is left behind and
//! that the sort's peak memory stayed within its budget.
//!
//! ```text
//!  suite ──(spec, input bytes)──> EngineTester::run ──> for each Setup:
//!                                   write input, build SortConfig (setup + spec)
//!                                   MemoryProbe::start ─ sort ─ peak ≤ budget + allowance
//!                                   no .oxsort leftovers in any temp or output directory
//!                                   ──> (setup, output bytes, stats)
//! ```
//!
//! The two-pass budgets are not guessed: they are the least budget the plan accepts for the
//! spec ([`least_budget`]), so they follow the engine's own sizing.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use oxsort_engine::{
    plan, sort, EngineError, Input, IoOptions, Output, SortConfig, SortSpec, SortStats,
};

use crate::leftovers;

/// Memory a sort may hold beyond its budget in the tester: the threads' stacks, io_uring rings
/// and the allocator's slack (the CLI's own test allows the process's code on top).
pub const MEMORY_ALLOWANCE: u64 = 16 << 20;

/// One path through the engine.
#[derive(Clone, Debug)]
pub struct Setup {
    /// What the setup exercises.
    pub name: &'static str,
    /// Memory budget; `None`: the least budget the plan accepts, with which a few thousand
    /// records make several runs.
    pub memory: Option<u64>,
    /// Records per chunk, as a power of two (small chunks cross chunk boundaries often).
    pub chunk_log2: u32,
    /// Temp directories runs are striped over.
    pub temp_dirs: usize,
    /// Caps the merge fan-in (2 forces several merge levels).
    pub max_fan_in: Option<usize>,
    /// I/O options.
    pub io: IoOptions,
    /// Worker threads.
    pub threads: usize,
}

impl Setup {
    /// Whether the setup's budget is the small two-pass one.
    pub fn two_pass(&self) -> bool {
        self.memory.is_none()
    }
}

/// Every setup, for records whose chunks are `chunk_log2` records (fixed) or bytes (delimited).
pub fn setups(chunk_log2: u32) -> Vec<Setup> {
    let base = Setup {
        name: "one pass",
        memory: Some(64 << 20),
        chunk_log2,
        temp_dirs: 1,
        max_fan_in: None,
        io: IoOptions::default(),
        threads: 2,
    };
    let two = Setup { name: "two passes", memory: None, ..base.clone() };
    vec![
        base.clone(),
        Setup { name: "one pass, 1 thread", threads: 1, ..base.clone() },
        Setup { name: "one pass, 3 threads", threads: 3, ..base.clone() },
        two.clone(),
        Setup { name: "two passes, 3 temp dirs", temp_dirs: 3, ..two.clone() },
        Setup { name: "multi-level merge", max_fan_in: Some(2), ..two.clone() },
        Setup {
            name: "two passes, no io_uring",
            io: IoOptions { no_uring: true, ..IoOptions::default() },
            ..two.clone()
        },
        Setup {
            name: "two passes, buffered",
            io: IoOptions { buffered: true, ..IoOptions::default() },
            ..two
        },
    ]
}

/// Sorts in its own directory through every setup.
pub struct EngineTester {
    root: tempfile::TempDir,
}

impl Default for EngineTester {
    fn default() -> Self {
        EngineTester { root: tempfile::tempdir().expect("a temp directory") }
    }
}

impl EngineTester {
    /// A tester with a fresh directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tester's directory.
    pub fn dir(&self) -> &Path {
        self.root.path()
    }

    /// The configuration of `setup` sorting `inputs` by `spec` into `output`.
    pub fn config(
        &self,
        setup: &Setup,
        spec: &SortSpec,
        inputs: Vec<Input>,
        output: &Path,
    ) -> Result<SortConfig, EngineError> {
        let build = |memory: u64| {
            let mut b = SortConfig::builder(inputs.clone(), Output::Path(output.into()))
                .spec(spec.clone())
                .memory(memory)
                .threads(setup.threads)
                .chunk_records_log2(setup.chunk_log2)
                .io(setup.io.clone());
            for t in self.temp_dirs(setup.temp_dirs) {
                b = b.temp_dir(t);
            }
            if let Some(f) = setup.max_fan_in {
                b = b.max_fan_in(f);
            }
            b.build()
        };
        match setup.memory {
            Some(m) => build(m),
            None => build(least_budget(&build(1)?)),
        }
    }

    /// Sorts `input` by `spec` through `setup`: the output's bytes and the statistics, or the
    /// engine's error. Either way, checks that nothing was left behind and, on success, that
    /// the sort's peak memory stayed within its budget.
    pub fn run(
        &self,
        setup: &Setup,
        spec: &SortSpec,
        input: &[u8],
    ) -> Result<(Vec<u8>, SortStats), EngineError> {
        let path = self.dir().join("in.dat");
        std::fs::write(&path, input).expect("input written");
        self.run_inputs(setup, spec, vec![Input::Path(path)])
    }

    /// [`EngineTester::run`] on inputs already in place.
    pub fn run_inputs(
        &self,
        setup: &Setup,
        spec: &SortSpec,
        inputs: Vec<Input>,
    ) -> Result<(Vec<u8>, SortStats), EngineError> {
        let out = self.dir().join("out.dat");
        let cfg = self.config(setup, spec, inputs, &out)?;
        let probe = MemoryProbe::start();
        let result = sort(&cfg);
        let peak = probe.peak();
        drop(probe);
        self.assert_clean(setup);
        let stats = result?;
        assert!(
            peak <= cfg.memory() + MEMORY_ALLOWANCE,
            "{}: peak memory {} MiB above the budget of {} MiB",
            setup.name,
            peak >> 20,
            cfg.memory() >> 20
        );
        let bytes = std::fs::read(&out).expect("output read");
        std::fs::remove_file(&out).expect("output removed");
        Ok((bytes, stats))
    }

    fn temp_dirs(&self, n: usize) -> Vec<PathBuf> {
        (0..n)
            .map(|i| {
                let d = self.dir().join(format!("tmp{i}"));
                std::fs::create_dir_all(&d).expect("temp dir");
                d
            })
            .collect()
    }

    /// No temp directory or uncommitted output left anywhere the sort wrote.
    pub fn assert_clean(&self, setup: &Setup) {
        let mut dirs = self.temp_dirs(setup.temp_dirs);
        dirs.push(self.dir().to_path_buf());
        for d in dirs {
            let left = leftovers(&d);
            assert!(left.is_empty(), "{}: left behind in {}: {left:?}", setup.name, d.display());
        }
    }
}

/// The least budget with which `cfg`'s sort plans (what the engine reports for a budget of
/// one byte).
pub fn least_budget(cfg: &SortConfig) -> u64 {
    match plan(cfg) {
        Err(EngineError::MemoryTooSmall { needed, .. }) => needed,
        Ok(_) => cfg.memory(),
        Err(e) => panic!("planning failed: {e}"),
    }
}

/// Serializes the sorts whose memory is measured: the kernel counts a process's peak, so one
/// sort at a time is measured.
static MEASURED: Mutex<()> = Mutex::new(());

/// Holds off the memory-measured sorts of other test threads: a test that sorts without the
/// [`EngineTester`] (or holds big inputs) takes this for its whole run, so the peaks the tester
/// measures are its sorts' alone. Never take it around [`EngineTester::run`] (it takes it).
pub fn serial() -> MutexGuard<'static, ()> {
    MEASURED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The peak memory of what runs between [`MemoryProbe::start`] and [`MemoryProbe::peak`],
/// above what the process held at the start: the most resident set and hugetlb-pool pages held
/// at once, as the engine's statistics count it ([`oxsort_engine::peak_rss`], started afresh).
/// While a probe lives, other probes wait.
pub struct MemoryProbe {
    _turn: MutexGuard<'static, ()>,
    base: u64,
}

impl MemoryProbe {
    /// Starts measuring.
    pub fn start() -> Self {
        let turn = serial();
        oxsort_engine::reset_peak_rss();
        MemoryProbe { _turn: turn, base: oxsort_engine::peak_rss() }
    }

    /// Bytes above the start at the peak so far.
    pub fn peak(&self) -> u64 {
        oxsort_engine::peak_rss().saturating_sub(self.base)
    }
}

//! oxsort-job: jobs of more than one sort or file, for every front door (the `oxsort` CLI,
//! `oxsort gcsort`, the Python package).
//!
//! A door builds one [`JobRequest`] from what it was given (inputs, output, the sources of
//! the spec, the data-set map, the resources); [`resolve`] reads it once (the control
//! statements are parsed once: data sets, OUTFIL files, MAINSIZE and JOINKEYS all come from
//! that parse) into a [`Job`]: a plain sort (its OUTFIL outputs mapped to files) or a
//! JOINKEYS join ([`joinkeys`]). Every error comes before any output is written, as a
//! [`JobError`] naming the concept (a data set, a DD name, a control statement); each door
//! words the remedy with its own flags through [`Words`].
//!
//! ```text
//!  door (flags, arguments) ──> JobRequest ──resolve──> Job::Sort(SortJob) ──> engine sort
//!                                  │                    Job::Join(JoinJob) ──> joinkeys::run
//!                                  │                    Job::Table(TableJob) ──> oxsort_table
//!   datasets: DD map, JCL DDs, DSN/LRECL/RECFM, OUTFIL files, MAINSIZE
//! ```
//!
//! [`GcsortRun`] sets a GCSORT job's USE and GIVE files in a request, its line sequential
//! files staged as fixed-length records ([`line_sequential`]).
//!
//! [`cluster`] holds the stages of a sort across a cluster (sample, split by splitters) that
//! Python's `oxsort.ray` calls.
//!
//! ```no_run
//! use oxsort_job::{resolve, ControlText, Job, JobRequest};
//!
//! let mut req = JobRequest::new(vec!["-".into()], "-".into());
//! req.spec.control = Some(ControlText::new("sort.ctl", "  SORT FIELDS=(1,5,CH,A)\n"));
//! req.data_sets.dd.push(("SORTIN".into(), "in.dat".into()));
//! req.data_sets.dd.push(("SORTOUT".into(), "out.dat".into()));
//! match resolve(req)? {
//!     Job::Sort(job) => {
//!         oxsort_engine::sort(&job.builder().build()?)?;
//!     }
//!     Job::Join(job) => {
//!         oxsort_job::joinkeys::run(&job)?;
//!     }
//!     Job::Table(job) => {
//!         job.run()?;
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod cluster;
mod datasets;
pub mod dd;
mod error;
mod gcsort;
mod gcsort_echo;
mod gcsort_report;
mod join_direct;
mod join_merge;
pub mod joinkeys;
pub mod line_sequential;
pub mod table;
pub mod tuning;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use oxsort_engine::{Input, Output, PassChoice, Progress, SortConfig, SortConfigBuilder};
use oxsort_format::{KeySpec, RecordLayout, SortSpec};
use oxsort_io::IoOptions;

pub use datasets::{resolve, spec_of};
pub use error::{Concepts, DataSetError, DoorError, JobError, LengthSource, Words};
pub use gcsort::{GcsortFilesError, GcsortRun};
pub use gcsort_echo::{outfil_names, statements_echo};
pub use gcsort_report::{GcsortJoinSide, GcsortOp, GcsortOutfil, GcsortReport, GcsortTotals};
pub use join_merge::JoinCounts;
pub use joinkeys::JoinFiles;
pub use joinkeys::{JoinExplain, JoinJob, JoinOutcome};

/// The name of a standard stream: standard input among the inputs, standard output as the
/// output.
pub const STD: &str = "-";

/// Where the sorted records go when only OUTFIL outputs are written.
pub const DISCARD: &str = "/dev/null";

/// Whether `p` is `-`: standard input or output.
pub fn is_std(p: &Path) -> bool {
    p.as_os_str() == STD
}

/// Whether `inputs` is the default: standard input alone (or nothing given).
pub fn is_std_only(inputs: &[PathBuf]) -> bool {
    inputs.is_empty() || matches!(inputs, [one] if is_std(one))
}

/// Paths as a message shows them, separated by spaces.
pub fn shown(paths: &[PathBuf]) -> String {
    error::shown(paths)
}

/// Control statements as text, with the name messages give them (a file's path, `control`).
#[derive(Debug, Clone)]
pub struct ControlText {
    /// Where they were read, for messages.
    pub name: String,
    /// The statements (or a JCL step holding them).
    pub text: String,
    /// Whether they run by GCSORT's rules where GCSORT's differ from DFSORT's (`oxsort
    /// gcsort`'s statements; see `oxsort_lang::gcsort_rules`).
    pub gcsort: bool,
}

impl ControlText {
    /// Statements `text` named `name`, run by DFSORT's rules.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> ControlText {
        ControlText { name: name.into(), text: text.into(), gcsort: false }
    }

    /// Statements `text` named `name`, run by GCSORT's rules.
    pub fn gcsort(name: impl Into<String>, text: impl Into<String>) -> ControlText {
        ControlText { gcsort: true, ..ControlText::new(name, text) }
    }
}

/// Builds GNU sort's key from a door's GNU flags (the whole line when there are none):
/// given whether `-u` holds, the key and whether it asks for `-u`.
pub type GnuBuilder = Arc<dyn Fn(bool) -> Result<(KeySpec, bool), DoorError> + Send + Sync>;

/// Where the spec comes from, each source already parsed by its door (the control
/// statements are parsed here, once).
#[derive(Clone, Default)]
pub struct SpecSource {
    /// DFSORT control statements (or a JCL step holding them).
    pub control: Option<ControlText>,
    /// A key in DFSORT's field syntax.
    pub fields: Option<KeySpec>,
    /// Delimited records (newline or NUL).
    pub delimited: Option<RecordLayout>,
    /// Fixed records of this size.
    pub record_size: Option<usize>,
    /// RDW-prefixed records of at most this many bytes, RDW included.
    pub rdw: Option<RecordLayout>,
    /// Whether the door was given GNU sort key flags.
    pub gnu_flags: bool,
    /// The door's GNU key builder; without one, delimited records sort by the whole line.
    pub gnu: Option<GnuBuilder>,
    /// Keep one record per key.
    pub unique: bool,
    /// The inputs are presorted: merge them.
    pub merge: bool,
    /// The inputs are tables sorted by column names ([`table`]).
    pub table: Option<table::TableSpec>,
}

impl std::fmt::Debug for SpecSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpecSource")
            .field("control", &self.control.as_ref().map(|c| &c.name))
            .field("fields", &self.fields.is_some())
            .field("delimited", &self.delimited)
            .field("record_size", &self.record_size)
            .field("rdw", &self.rdw)
            .field("gnu_flags", &self.gnu_flags)
            .field("unique", &self.unique)
            .field("merge", &self.merge)
            .field("table", &self.table)
            .finish()
    }
}

/// The data-set map: DD (or data set) names mapped to files, and DDs' record lengths.
#[derive(Debug, Clone, Default)]
pub struct DataSets {
    /// `(name, path)` in the order given; a name given twice is a concatenation.
    pub dd: Vec<(String, PathBuf)>,
    /// `(DD name, record length)`, as `DCB=(LRECL=N)` gives it.
    pub lrecl: Vec<(String, usize)>,
}

/// A progress callback shared by the sorts of a job.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// What a job may use, and how it reports.
#[derive(Clone, Default)]
pub struct Resources {
    /// The memory budget (bytes); default: the engine's safe share. `OPTION MAINSIZE=`
    /// gives it when this is not set.
    pub memory: Option<u64>,
    /// Worker threads; default: all cores.
    pub threads: Option<usize>,
    /// Directories for sorted runs.
    pub temp_dirs: Vec<PathBuf>,
    /// A resumable sort that goes on from an interrupted one.
    pub resume: bool,
    /// With `resume`: start over when the interrupted sort differs.
    pub restart: bool,
    /// Passes over the data.
    pub passes: PassChoice,
    /// Merge at most this many runs at once.
    pub max_fan_in: Option<usize>,
    /// Direct I/O and io_uring choices.
    pub io: IoOptions,
    /// Receives the progress events of the job's main sort.
    pub progress: Option<ProgressFn>,
    /// Set to stop the job.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("memory", &self.memory)
            .field("threads", &self.threads)
            .field("temp_dirs", &self.temp_dirs)
            .field("resume", &self.resume)
            .field("restart", &self.restart)
            .field("max_fan_in", &self.max_fan_in)
            .finish_non_exhaustive()
    }
}

/// What a door asks for: built once from its flags or arguments, resolved by [`resolve`].
#[derive(Debug, Clone)]
pub struct JobRequest {
    /// Input files, concatenated in order (`-`: standard input; none or `-` alone: not given,
    /// so `SORTIN` may name them).
    pub inputs: Vec<PathBuf>,
    /// The output (`-`: standard output, or not given, so `SORTOUT` may name it).
    pub output: PathBuf,
    /// The sources of the spec.
    pub spec: SpecSource,
    /// The data-set map.
    pub data_sets: DataSets,
    /// Resources.
    pub resources: Resources,
}

impl JobRequest {
    /// A request for `inputs` into `output` with every default.
    pub fn new(inputs: Vec<PathBuf>, output: PathBuf) -> JobRequest {
        JobRequest {
            inputs,
            output,
            spec: SpecSource::default(),
            data_sets: DataSets::default(),
            resources: Resources::default(),
        }
    }
}

/// `OPTION MAINSIZE=` of the control statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MainSize {
    /// The bytes it gives.
    pub bytes: u64,
    /// Whether it became the memory budget (no budget was given).
    pub applied: bool,
}

/// A resolved job.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Job {
    /// One sort (with its OUTFIL outputs).
    Sort(SortJob),
    /// A JOINKEYS application.
    Join(JoinJob),
    /// A sort of tables by column names.
    Table(table::TableJob),
}

impl Job {
    /// The notes of the control statements (statements read and ignored), each with where
    /// they were read.
    pub fn ignored(&self) -> &[String] {
        match self {
            Job::Sort(j) => &j.ignored,
            Job::Join(j) => &j.ignored,
            Job::Table(_) => &[],
        }
    }

    /// `OPTION MAINSIZE=`, when the statements give it.
    pub fn main_size(&self) -> Option<MainSize> {
        match self {
            Job::Sort(j) => j.main_size,
            Job::Join(j) => j.main_size,
            Job::Table(_) => None,
        }
    }
}

/// One sort, its data sets resolved.
#[derive(Debug)]
pub struct SortJob {
    /// Input files (`-`: standard input).
    pub inputs: Vec<PathBuf>,
    /// The output (`-`: standard output; [`DISCARD`] when only OUTFIL outputs are written).
    pub output: PathBuf,
    /// The spec, from the one parse of the control statements.
    pub spec: SortSpec,
    /// The OUTFIL outputs' files, by DD name.
    pub outfil: Vec<(String, PathBuf)>,
    /// `SUM ...,XSUM`: the file of DD `SORTXSUM`, where the records SUM deletes go.
    pub xsum: Option<PathBuf>,
    /// The resources (MAINSIZE applied).
    pub resources: Resources,
    /// Notes of statements read and ignored.
    pub ignored: Vec<String>,
    /// `OPTION MAINSIZE=`, when given.
    pub main_size: Option<MainSize>,
    /// Where the control statements were read, when there are some.
    pub control: Option<String>,
}

impl SortJob {
    /// The engine's configuration builder of this sort, for a caller that adds to it
    /// (progress, a phase mark) before it is built.
    pub fn builder(&self) -> SortConfigBuilder {
        let inputs = self
            .inputs
            .iter()
            .map(|s| if is_std(s) { Input::Stdin } else { Input::Path(s.clone()) })
            .collect();
        let output =
            if is_std(&self.output) { Output::Stdout } else { Output::Path(self.output.clone()) };
        let mut b =
            configure(SortConfig::builder(inputs, output).spec(self.spec.clone()), &self.resources);
        for (name, path) in &self.outfil {
            b = b.outfil_output(name.clone(), path.clone());
        }
        if let Some(p) = &self.xsum {
            b = b.xsum_output(p.clone());
        }
        b
    }
}

/// `b` with the resources applied.
pub(crate) fn configure(mut b: SortConfigBuilder, r: &Resources) -> SortConfigBuilder {
    b = b.io(r.io.clone());
    if let Some(m) = r.memory {
        b = b.memory(m);
    }
    if let Some(t) = r.threads {
        b = b.threads(t);
    }
    for d in &r.temp_dirs {
        b = b.temp_dir(d.clone());
    }
    if let Some(n) = r.max_fan_in {
        b = b.max_fan_in(n);
    }
    b = b.resume(r.resume).restart(r.restart).passes(r.passes);
    if let Some(p) = &r.progress {
        let p = p.clone();
        b = b.progress(move |e| p(e));
    }
    if let Some(c) = &r.cancel {
        b = b.cancel(c.clone());
    }
    b
}

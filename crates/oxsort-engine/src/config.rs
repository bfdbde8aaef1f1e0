//! [`SortConfig`]: what to sort, where to, and with which resources; validated by its builder.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use oxsort_format::{SortKey, SortSpec};
use oxsort_io::{IoOptions, DIRECT_ALIGN};

use crate::error::{EngineError, Result};
use crate::progress::ProgressFn;
use crate::sysinfo;
use crate::tuning;

/// Where records come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A file, read with direct I/O when the filesystem allows.
    Path(PathBuf),
    /// Standard input, read sequentially through a buffered path.
    Stdin,
    /// An open stream (one end of a pipe), read sequentially to its end.
    Stream(Stream),
}

/// Where sorted records go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// A file, written under a temporary name and renamed when complete and verified.
    Path(PathBuf),
    /// Standard output, written sequentially.
    Stdout,
    /// An open stream (one end of a pipe), written sequentially.
    Stream(Stream),
}

/// An open stream handed to a sort: one end of a pipe, or (as an output) a writer in the same
/// process. Stages of one job run at once this way (a JOINKEYS job's sorts feed its join
/// through writers, the join feeds the main task through a pipe). A descriptor is closed when
/// the last clone is dropped; a writer is taken by the one sort that writes it and dropped when
/// that sort's output ends, which is how its reader learns the end of the stream.
#[derive(Clone)]
pub struct Stream {
    end: StreamEnd,
    name: String,
    /// The bytes it is expected to carry, for a plan shown before it is read.
    expected: Option<u64>,
    /// What the stream's bytes are made from, when a new stream of the same bytes can be
    /// opened later (see [`Stream::replayable`]).
    replay: Option<Replay>,
    /// The file an output stream's reader writes (see [`Stream::writing_to`]).
    target: Option<PathBuf>,
}

/// What a replayable [`Stream`] is made from.
#[derive(Clone, Debug)]
pub(crate) struct Replay {
    /// The files its bytes are made from.
    pub(crate) sources: Vec<PathBuf>,
    /// How they are made.
    pub(crate) recipe: String,
}

/// What a [`Stream`] is open on.
#[derive(Clone)]
enum StreamEnd {
    Fd(Arc<OwnedFd>),
    Writer(Arc<Mutex<Option<Box<dyn Write + Send>>>>),
}

impl Stream {
    /// The stream open on `fd`, called `name` in messages and statistics.
    pub fn new(fd: impl Into<OwnedFd>, name: impl Into<String>) -> Self {
        Stream {
            end: StreamEnd::Fd(Arc::new(fd.into())),
            name: name.into(),
            expected: None,
            replay: None,
            target: None,
        }
    }

    /// An output written to `writer` in order, called `name`; one sort writes it, once.
    pub fn writer(writer: impl Write + Send + 'static, name: impl Into<String>) -> Self {
        let end = StreamEnd::Writer(Arc::new(Mutex::new(Some(Box::new(writer)))));
        Stream { end, name: name.into(), expected: None, replay: None, target: None }
    }

    /// The same stream, known to carry the same bytes every time one is made from the files
    /// `sources` the same way (`recipe`: a table sort's encoded rows, made from its input
    /// files by its keys and encoding): a resumable sort may read it. A resumed sort checks
    /// the sources as it checks input files (path, size, modification time) and the recipe as
    /// it checks the spec, and reads and drops the bytes its runs hold already; the rest of
    /// its checks (the runs' and the output's) hold as for a file.
    pub fn replayable(mut self, sources: Vec<PathBuf>, recipe: impl Into<String>) -> Self {
        self.replay = Some(Replay { sources, recipe: recipe.into() });
        self
    }

    /// The same output stream, whose reader writes file `path` under oxsort's temporary name
    /// for it (`.NAME.oxsort-PID....tmp`) and renames it when whole: a resumed sort journals
    /// `path` as its output and removes the temporary a killed sort left there.
    pub fn writing_to(mut self, path: impl Into<PathBuf>) -> Self {
        self.target = Some(path.into());
        self
    }

    /// The file [`Stream::writing_to`] gave.
    pub(crate) fn target(&self) -> Option<&Path> {
        self.target.as_deref()
    }

    /// What [`Stream::replayable`] gave.
    pub(crate) fn replay(&self) -> Option<&Replay> {
        self.replay.as_ref()
    }

    /// The same stream, expected to carry about `bytes`: a plan shown before it is read
    /// (`explain` of a table sort) sizes the sort by them. The sort itself reads the stream
    /// to its end and trusts no size.
    pub fn expecting(mut self, bytes: u64) -> Self {
        self.expected = Some(bytes);
        self
    }

    /// The bytes [`Stream::expecting`] gave.
    pub fn expected(&self) -> Option<u64> {
        self.expected
    }

    /// Its name in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A file on a duplicate of its descriptor (a writer cannot be read).
    pub(crate) fn file(&self) -> std::io::Result<std::fs::File> {
        match &self.end {
            StreamEnd::Fd(fd) => fd.try_clone().map(std::fs::File::from),
            StreamEnd::Writer(_) => {
                Err(std::io::Error::other("an in-process writer is an output, not an input"))
            }
        }
    }

    /// Where the sort writes: a file on a duplicate of the descriptor, or the writer itself
    /// (taken: a second sort with the same configuration finds it gone).
    pub(crate) fn take_writer(&self) -> std::io::Result<Box<dyn Write + Send>> {
        match &self.end {
            StreamEnd::Fd(fd) => Ok(Box::new(std::fs::File::from(fd.try_clone()?))),
            StreamEnd::Writer(w) => w
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .ok_or_else(|| std::io::Error::other("this writer was written by another sort")),
        }
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.end {
            StreamEnd::Fd(_) => "descriptor",
            StreamEnd::Writer(_) => "writer",
        };
        f.debug_struct("Stream").field("name", &self.name).field("end", &kind).finish()
    }
}

/// The same stream: the same descriptor or writer, whatever it is called.
impl PartialEq for Stream {
    fn eq(&self, other: &Self) -> bool {
        match (&self.end, &other.end) {
            (StreamEnd::Fd(a), StreamEnd::Fd(b)) => Arc::ptr_eq(a, b),
            (StreamEnd::Writer(a), StreamEnd::Writer(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for Stream {}

impl Input {
    /// The name used in messages.
    pub fn display_name(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Stdin => "-".to_string(),
            Input::Stream(s) => s.name().to_string(),
        }
    }

    /// Whether a resumed sort can read it again: a file, or a [`Stream::replayable`] stream.
    pub(crate) fn read_again(&self) -> bool {
        match self {
            Input::Path(_) => true,
            Input::Stdin => false,
            Input::Stream(st) => st.replay().is_some(),
        }
    }
}

/// Why a sort of an input that cannot be read again is not resumable.
pub(crate) const READ_ONCE: &str = "needs input files: standard input cannot be read again";

/// How many passes over the data a sort may make.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PassChoice {
    /// The plan chooses: one pass when the input fits the budget, unless two are estimated
    /// faster by the plan's cost estimates (which `oxsort explain` shows).
    #[default]
    Auto,
    /// One pass: the input must fit the memory budget.
    One,
    /// Two passes even when the input would fit: runs of a share of the input, then a merge.
    Two,
}

/// A validated sort configuration. Build it with [`SortConfig::builder`].
#[derive(Clone)]
pub struct SortConfig {
    pub(crate) inputs: Vec<Input>,
    pub(crate) output: Output,
    pub(crate) memory: u64,
    pub(crate) threads: usize,
    pub(crate) temp_dirs: Vec<PathBuf>,
    /// What is sorted, as the front end gave it.
    pub(crate) spec: Arc<SortSpec>,
    /// Its compiled form, called per record.
    pub(crate) key: Arc<SortKey>,
    pub(crate) io: IoOptions,
    pub(crate) chunk_records_log2: Option<u32>,
    pub(crate) max_fan_in: Option<usize>,
    pub(crate) transfer: usize,
    pub(crate) read_depth: usize,
    pub(crate) merge_block: usize,
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) cancel: Option<Arc<AtomicBool>>,
    /// What was changed from what was asked, and why (a budget capped, ...).
    pub(crate) notes: Vec<String>,
    /// Resumable: journal a two-pass sort in a kept directory, and go on from the journal of
    /// an interrupted one.
    pub(crate) resume: bool,
    /// With `resume`: drop a journal that does not match this sort instead of refusing.
    pub(crate) restart: bool,
    /// One pass, two, or the plan's choice.
    pub(crate) passes: PassChoice,
    /// The files of the `OUTFIL` outputs, by DD name.
    pub(crate) outfil_paths: Vec<(String, PathBuf)>,
    /// `XSUM`: the file the records `SUM` deletes are written to (DD `SORTXSUM`).
    pub(crate) xsum: Option<PathBuf>,
    /// Small inputs may be sorted in the calling thread (see [`crate::small_input_limit`]).
    pub(crate) small_inputs: bool,
    /// The caller checks the sorted output end to end (see
    /// [`SortConfigBuilder::checked_by_caller`]).
    pub(crate) checked_by_caller: bool,
    /// Only these bytes of the one input are read (see [`SortConfigBuilder::input_range`]).
    pub(crate) input_range: Option<(u64, u64)>,
    /// The threads and memory asked for, while `threads`, `memory` and `notes` wait to be
    /// worked out from the machine ([`SortConfig::resolved`]): a small sort never needs them.
    pub(crate) pending: Option<(Option<usize>, Option<u64>)>,
}

impl std::fmt::Debug for SortConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortConfig")
            .field("inputs", &self.inputs)
            .field("output", &self.output)
            .field("memory", &self.memory)
            .field("threads", &self.threads)
            .field("temp_dirs", &self.temp_dirs)
            .field("spec", &self.spec)
            .field("chunk_records_log2", &self.chunk_records_log2)
            .field("max_fan_in", &self.max_fan_in)
            .finish_non_exhaustive()
    }
}

impl SortConfig {
    /// A builder sorting `inputs` (concatenated) into `output`.
    pub fn builder(inputs: Vec<Input>, output: Output) -> SortConfigBuilder {
        SortConfigBuilder {
            inputs,
            output,
            memory: None,
            threads: None,
            temp_dirs: Vec::new(),
            spec: SortSpec::default(),
            io: IoOptions::default(),
            chunk_records_log2: None,
            max_fan_in: None,
            transfer: None,
            read_depth: None,
            merge_block: None,
            progress: None,
            cancel: None,
            resume: false,
            restart: false,
            passes: PassChoice::Auto,
            outfil_paths: Vec::new(),
            xsum: None,
            small_inputs: false,
            checked_by_caller: false,
            input_range: None,
        }
    }
    /// The inputs, in concatenation order.
    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }
    /// The output.
    pub fn output(&self) -> &Output {
        &self.output
    }
    /// The memory budget in bytes.
    pub fn memory(&self) -> u64 {
        self.resolved().memory
    }
    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.resolved().threads
    }
    /// Temp directories runs are striped over.
    pub fn temp_dirs(&self) -> &[PathBuf] {
        &self.temp_dirs
    }
    /// Whether the sort keeps a journal to resume from (`--resume`).
    pub fn resumable(&self) -> bool {
        self.resume
    }
    /// What is sorted.
    pub fn spec(&self) -> &SortSpec {
        &self.spec
    }
    /// The compiled key the stages call per record.
    pub fn sort_key(&self) -> &SortKey {
        &self.key
    }
    /// The I/O options.
    pub fn io(&self) -> &IoOptions {
        &self.io
    }
    /// What the builder changed from what was asked, and why: print them as warnings.
    pub fn notes(&self) -> &[String] {
        // (Those of the machine's resources come when a small-inputs sort goes on into the
        // plan: see `resolved`.)
        &self.notes
    }

    /// This configuration with its threads, memory and notes worked out from the machine
    /// (itself when they are already).
    pub(crate) fn resolved(&self) -> std::borrow::Cow<'_, SortConfig> {
        let Some((threads, memory)) = self.pending else {
            return std::borrow::Cow::Borrowed(self);
        };
        let (threads, memory, notes) = resources(threads, memory);
        std::borrow::Cow::Owned(SortConfig {
            threads,
            memory,
            notes,
            pending: None,
            ..self.clone()
        })
    }
    /// The files of the `OUTFIL` outputs, by DD name.
    pub fn outfil_outputs(&self) -> &[(String, PathBuf)] {
        &self.outfil_paths
    }
    /// The file the records `SUM` deletes are written to (`XSUM`), when there is one.
    pub fn xsum_output(&self) -> Option<&Path> {
        self.xsum.as_deref()
    }
    /// Bytes read per input transfer.
    pub fn transfer_size(&self) -> usize {
        self.transfer
    }
    /// Input transfers in flight.
    pub fn read_depth(&self) -> usize {
        self.read_depth
    }
}

/// Builder of [`SortConfig`]; `build` checks everything that can be checked without I/O.
pub struct SortConfigBuilder {
    inputs: Vec<Input>,
    output: Output,
    memory: Option<u64>,
    threads: Option<usize>,
    temp_dirs: Vec<PathBuf>,
    spec: SortSpec,
    io: IoOptions,
    chunk_records_log2: Option<u32>,
    max_fan_in: Option<usize>,
    transfer: Option<usize>,
    read_depth: Option<usize>,
    merge_block: Option<usize>,
    progress: Option<ProgressFn>,
    cancel: Option<Arc<AtomicBool>>,
    resume: bool,
    restart: bool,
    passes: PassChoice,
    outfil_paths: Vec<(String, PathBuf)>,
    xsum: Option<PathBuf>,
    small_inputs: bool,
    checked_by_caller: bool,
    input_range: Option<(u64, u64)>,
}

impl SortConfigBuilder {
    /// Replaces the inputs given to [`SortConfig::builder`].
    pub fn inputs(mut self, inputs: Vec<Input>) -> Self {
        self.inputs = inputs;
        self
    }

    /// One pass, two, or the plan's choice by estimated cost (default).
    pub fn passes(mut self, choice: PassChoice) -> Self {
        self.passes = choice;
        self
    }
    /// Maps the DD name `name` of an `OUTFIL` output (in the spec's `outfil` statements) to
    /// the file `path`. Every output of the spec needs one; the sort writes them all, or none
    /// when it fails.
    pub fn outfil_output(mut self, name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        self.outfil_paths.push((name.into().to_ascii_uppercase(), path.into()));
        self
    }
    /// Makes the sort resumable (default off). A two-pass sort then keeps a journal and its
    /// runs in a directory `.oxsort-resume-HASH` in the first temp directory (the hash is of
    /// the inputs' paths and the output), syncing each run before journaling it. The
    /// directory is kept when the sort is interrupted (a signal, a kill, an error) and removed
    /// when it succeeds. When a resumable sort finds the journal of an interrupted one, it
    /// checks the inputs are unchanged and the spec the same (else it refuses, see
    /// [`SortConfigBuilder::restart`]),
    /// verifies each run found, reads only the input not in a run, and merges from the last
    /// merge level that finished. The output is the same bytes as an uninterrupted sort's.
    /// Standard input and streams that are not [`Stream::replayable`] cannot be resumed.
    pub fn resume(mut self, on: bool) -> Self {
        self.resume = on;
        self
    }
    /// With [`SortConfigBuilder::resume`]: a journal that does not match this sort (an input
    /// changed, another spec) is dropped and the sort starts over, instead of the refusal.
    pub fn restart(mut self, on: bool) -> Self {
        self.restart = on;
        self
    }
    /// Bytes read per input transfer (default [`tuning::TRANSFER_TARGET`]); rounded to whole
    /// records and to the direct-I/O alignment.
    pub fn transfer_size(mut self, bytes: usize) -> Self {
        self.transfer = Some(bytes);
        self
    }
    /// Input transfers in flight (default [`tuning::READ_DEPTH`]).
    pub fn read_depth(mut self, n: usize) -> Self {
        self.read_depth = Some(n);
        self
    }
    /// Bytes read per run per transfer in the merge, at most (default
    /// [`tuning::MERGE_BLOCK_MAX`]).
    pub fn merge_block(mut self, bytes: usize) -> Self {
        self.merge_block = Some(bytes);
        self
    }
    /// What is sorted (default: the Sort Benchmark's 100-byte records, 10-byte key).
    pub fn spec(mut self, spec: SortSpec) -> Self {
        self.spec = spec;
        self
    }
    /// Memory budget in bytes (default: a safe share of available memory, within a cgroup limit).
    pub fn memory(mut self, bytes: u64) -> Self {
        self.memory = Some(bytes);
        self
    }
    /// Worker threads (default: all cores).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }
    /// Adds a temp directory; runs are striped over all of them (default: the output's directory).
    pub fn temp_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.temp_dirs.push(dir.into());
        self
    }
    /// I/O options: direct I/O and io_uring on or off, fault injection for tests.
    pub fn io(mut self, io: IoOptions) -> Self {
        self.io = io;
        self
    }
    /// Records per chunk as a power of two (default: from the transfer size and the budget).
    /// Tests set it small to cross chunk boundaries with little data.
    pub fn chunk_records_log2(mut self, log2: u32) -> Self {
        self.chunk_records_log2 = Some(log2);
        self
    }
    /// Caps the merge fan-in (default: what memory allows). Tests set it to force merge levels.
    pub fn max_fan_in(mut self, n: usize) -> Self {
        self.max_fan_in = Some(n);
        self
    }
    /// Receives progress events from the sort.
    pub fn progress(mut self, f: impl Fn(&crate::Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// A flag that stops the sort when set: it is read at every progress event (so the progress
    /// callback may set it), and the sort then fails with [`EngineError::Interrupted`], with
    /// nothing under the output name and no temp file left.
    pub fn cancel(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// No two outputs (the main one, the OUTFIL ones) may be one file: compared before any work
    /// as the same device and inode, or for a file not made yet the same resolved path (a
    /// symlink names its target). A stream such as `/dev/null` may take several.
    fn check_outputs_apart(&self) -> Result<()> {
        let mut outputs: Vec<(String, &Path)> = Vec::new();
        if let Output::Path(p) = &self.output {
            outputs.push(("the output".into(), p));
        }
        for (dd, p) in &self.outfil_paths {
            outputs.push((format!("the OUTFIL output {dd}"), p));
        }
        if let Some(p) = &self.xsum {
            outputs.push(("the XSUM output (SORTXSUM)".into(), p));
        }
        let ids: Vec<_> = outputs.iter().map(|(_, p)| oxsort_io::file_id(p)).collect();
        for j in 1..outputs.len() {
            for i in 0..j {
                if ids[i].is_some() && ids[i] == ids[j] {
                    return Err(EngineError::Config(format!(
                        "{} {} is the same file as {} {}: each output needs a file of its own",
                        outputs[j].0,
                        outputs[j].1.display(),
                        outputs[i].0,
                        outputs[i].1.display()
                    )));
                }
            }
        }
        Ok(())
    }

    /// `XSUM`: the records the spec's `SUM` deletes (every record of a group of equal keys
    /// after its first, with `SUM FIELDS=(...)` or `SUM FIELDS=NONE`) are written to `path`
    /// as they were before the sums, in sorted order, instead of being thrown away. The spec
    /// needs a `SUM` ([`SortSpec::sum`] or [`SortSpec::unique`]); a record left unsummed
    /// because its sum would overflow stays in the output and is not written here. The file
    /// appears with the output, when the sort succeeded, or not at all.
    pub fn xsum_output(mut self, path: impl Into<PathBuf>) -> Self {
        self.xsum = Some(path.into());
        self
    }

    /// Lets a sort of delimited records whose inputs turn out small run in the calling thread,
    /// without the planned machinery (see [`crate::small_input_limit`]); its statistics then
    /// have no phases. Off by default.
    pub fn small_inputs(mut self, on: bool) -> Self {
        self.small_inputs = on;
        self
    }

    /// Says the caller checks the sorted output itself, end to end: its order and that the
    /// records out are the records in (as the table sort does from the rows it encodes to the
    /// rows it decodes, a wider check than the engine's). The engine then counts the records it
    /// writes and checks their number, but does not check their order or sum them a second
    /// time; the statistics' output checksum is then empty. Ignored with duplicate removal,
    /// whose duplicates only the engine can count. Off by default.
    pub fn checked_by_caller(mut self, on: bool) -> Self {
        self.checked_by_caller = on;
        self
    }

    /// Reads only bytes `start..end` of the input: one file of fixed-length or delimited
    /// records, a record starting at both ends (or the file ending there). The range is read
    /// with the file's own I/O (direct where the filesystem allows), the plan sized for it
    /// alone: a byte range of a large file is sorted as a cluster's map sorts its share, with
    /// nothing passed through a pipe. The file must be as long as `end` at least when the sort
    /// starts, and keep its length while it is read.
    pub fn input_range(mut self, start: u64, end: u64) -> Self {
        self.input_range = Some((start, end));
        self
    }

    /// Validates and builds.
    pub fn build(mut self) -> Result<SortConfig> {
        if self.xsum.is_some() {
            if self.spec.sum.is_none() && !self.spec.unique {
                return Err(EngineError::Config(
                    "XSUM writes the records SUM deletes: give SUM FIELDS=(...) or SUM \
                     FIELDS=NONE"
                        .into(),
                ));
            }
            if self.spec.sum.is_none() {
                // SUM FIELDS=NONE,XSUM: a SUM of no fields, so that the records dropped pass
                // through the stage that writes them (duplicate removal drops them unseen).
                self.spec.unique = false;
                self.spec.sum = Some(Vec::new());
            }
        }
        if self.inputs.is_empty() {
            return Err(EngineError::Config("no input given".into()));
        }
        if self.inputs.iter().filter(|i| **i == Input::Stdin).count() > 1 {
            return Err(EngineError::Config("standard input (-) named more than once".into()));
        }
        let key = self.spec.compile()?;
        if let Some(p) = key.outfil() {
            // Every OUTFIL output needs its file before anything is touched.
            for o in oxsort_format::Outfil::outputs(&self.spec.outfil, p) {
                if !self.outfil_paths.iter().any(|(n, _)| *n == o.name) {
                    return Err(EngineError::OutfilUnmapped { line: o.line, name: o.name.clone() });
                }
            }
        }
        self.check_outputs_apart()?;
        if self.threads == Some(0) {
            return Err(EngineError::Config("the thread count must be at least 1".into()));
        }
        if let Some(l) = self.chunk_records_log2 {
            if !(1..=30).contains(&l) {
                return Err(EngineError::Config(format!(
                    "chunk size 2^{l} records is out of range"
                )));
            }
        }
        if matches!(self.transfer, Some(t) if !(DIRECT_ALIGN..=1 << 30).contains(&t)) {
            return Err(EngineError::Config("the transfer size must be 4 KiB to 1 GiB".into()));
        }
        if matches!(self.read_depth, Some(d) if !(1..=64).contains(&d)) {
            return Err(EngineError::Config("transfers in flight must be 1 to 64".into()));
        }
        if matches!(self.merge_block, Some(b) if !(DIRECT_ALIGN..=1 << 30).contains(&b)) {
            return Err(EngineError::Config("the merge block must be 4 KiB to 1 GiB".into()));
        }
        if self.resume && !self.inputs.iter().all(Input::read_again) {
            return Err(EngineError::NotResumable { why: READ_ONCE });
        }
        if self.resume && (self.spec.skiprec.is_some() || self.spec.stopaft.is_some()) {
            return Err(EngineError::NotResumable {
                why: "does not go with OPTION SKIPREC/STOPAFT",
            });
        }
        if let Some((start, end)) = self.input_range {
            self.check_input_range(&key, start, end)?;
        }
        if matches!(self.max_fan_in, Some(f) if f < 2) {
            return Err(EngineError::Config("merge fan-in must be at least 2".into()));
        }
        // A sort that may run in the calling thread reads the machine (cores, available memory,
        // a dozen /proc and /sys files) only if it goes on into the plan.
        let pending = self.small_inputs.then_some((self.threads, self.memory));
        // Only the engine counts the duplicates it removes.
        let checked_by_caller = self.checked_by_caller && !self.spec.unique;
        let (threads, memory, notes) = match pending {
            Some(_) => (1, self.memory.unwrap_or(0), Vec::new()),
            None => resources(self.threads, self.memory),
        };
        let temp_dirs = if self.temp_dirs.is_empty() {
            vec![default_temp_dir(&self.output)]
        } else {
            self.temp_dirs
        };
        if self.resume && key.inrec().is_some_and(|p| p.numbers()) {
            return Err(EngineError::NotResumable {
                why: "does not go with SEQNUM in INREC (the numbering would start again)",
            });
        }
        Ok(SortConfig {
            inputs: self.inputs,
            output: self.output,
            memory,
            threads,
            temp_dirs,
            spec: Arc::new(self.spec),
            key: Arc::new(key),
            io: self.io,
            chunk_records_log2: self.chunk_records_log2,
            max_fan_in: self.max_fan_in,
            transfer: self.transfer.unwrap_or(tuning::TRANSFER_TARGET),
            read_depth: self.read_depth.unwrap_or(tuning::READ_DEPTH),
            merge_block: self
                .merge_block
                .map_or(tuning::MERGE_BLOCK_MAX, |b| b / DIRECT_ALIGN * DIRECT_ALIGN),
            progress: self.progress,
            cancel: self.cancel,
            notes,
            resume: self.resume || self.restart,
            restart: self.restart,
            passes: self.passes,
            outfil_paths: self.outfil_paths,
            xsum: self.xsum,
            small_inputs: self.small_inputs,
            checked_by_caller,
            input_range: self.input_range,
            pending,
        })
    }

    /// Refuses an input range the sort cannot read as one: over anything but one file of
    /// fixed-length or delimited records, off fixed records' boundaries, backwards, or with a
    /// part of the input chosen already (`SKIPREC`/`STOPAFT`) or a resumable sort's journal.
    /// (Whether delimited records start at both ends the plan reads from the file.)
    fn check_input_range(&self, key: &SortKey, start: u64, end: u64) -> Result<()> {
        let layout = key.input_layout();
        let off_records =
            layout.fixed_size().filter(|&r| start % r as u64 != 0 || end % r as u64 != 0);
        let why = if !matches!(&self.inputs[..], [Input::Path(_)]) {
            "a range is read of one input file only".to_string()
        } else if start > end {
            "it ends before it starts".into()
        } else if let Some(r) = off_records {
            format!("they must fall on the boundaries of its {r}-byte records")
        } else if layout.variable_max().is_some() {
            "RDW-prefixed records cannot be found from a byte offset".into()
        } else if self.spec.skiprec.is_some() {
            "OPTION SKIPREC chooses the records read already".into()
        } else if self.spec.stopaft.is_some() {
            "OPTION STOPAFT chooses the records read already".into()
        } else if self.resume || self.restart {
            "a resumable sort reads its inputs whole".into()
        } else {
            return Ok(());
        };
        Err(EngineError::Config(format!("input range {start}..{end}: {why}")))
    }
}

/// The threads and memory budget of a sort asked for `threads` and `memory` (or nothing), and
/// the notes that say what was changed from what was asked.
fn resources(threads: Option<usize>, memory: Option<u64>) -> (usize, u64, Vec<String>) {
    let mut threads = threads.unwrap_or_else(sysinfo::cores);
    // Capped before any work: more workers than a few per core only cost memory.
    let cores = sysinfo::cores().max(1);
    let most = cores.saturating_mul(tuning::MAX_THREADS_PER_CORE);
    let threads_note = (threads > most).then(|| {
        let note = format!(
            "{threads} threads asked for: {most} are used ({} per core on {cores} cores; more \
             would only take memory)",
            tuning::MAX_THREADS_PER_CORE
        );
        threads = most;
        note
    });
    let (memory, note) = budget(memory);
    let notes = note.into_iter().chain(threads_note).collect();
    (threads, memory, notes)
}

/// The memory budget a sort asked for `requested` bytes (or nothing) gets: what it asked for,
/// or a safe share of the available memory when it asked for nothing or more than there is.
pub fn memory_budget(requested: Option<u64>) -> u64 {
    budget(requested).0
}

/// [`memory_budget`], with the note that says why a request was not granted.
fn budget(requested: Option<u64>) -> (u64, Option<String>) {
    let available = sysinfo::available_memory();
    let default_share = (available as f64 * tuning::DEFAULT_MEMORY_SHARE) as u64;
    match requested {
        // More than the machine has would swap or be killed: capped, as nsort caps it.
        Some(m) if m > available => (
            default_share,
            Some(format!(
                "the memory budget of {} is more than the {} available: using {}",
                crate::human_bytes(m),
                crate::human_bytes(available),
                crate::human_bytes(default_share)
            )),
        ),
        Some(m) => (m, None),
        None => (default_share, None),
    }
}

/// The output's directory (the system's temp directory when that one is not writable: the
/// output is then written in place), or the system's temp directory for a stream.
fn default_temp_dir(output: &Output) -> PathBuf {
    match output {
        Output::Path(p) => Some(parent_dir(p))
            .filter(|d| oxsort_io::check_dir_writable(d).is_ok())
            .unwrap_or_else(std::env::temp_dir),
        Output::Stdout | Output::Stream(_) => std::env::temp_dir(),
    }
}

/// Where the temporary of an output written in place goes when the output's own directory is
/// not writable: the first writable temp directory, else the system's.
pub(crate) fn spare_dir(cfg: &SortConfig) -> PathBuf {
    cfg.temp_dirs
        .iter()
        .find(|d| oxsort_io::check_dir_writable(d).is_ok())
        .cloned()
        .unwrap_or_else(std::env::temp_dir)
}

/// The directory a path lives in (`.` for a bare file name).
pub(crate) fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether an input is also one of the outputs (the same file, `-o` naming an input): such an
/// input is read, never mapped, since writing the output in place would reach the pages the
/// output's gather still reads from.
pub(crate) fn an_input_is_an_output(cfg: &SortConfig) -> bool {
    let mut outputs: Vec<&std::path::Path> =
        cfg.outfil_paths.iter().map(|(_, p)| p.as_path()).collect();
    if let Output::Path(p) = &cfg.output {
        outputs.push(p);
    }
    let outputs: Vec<_> = outputs.into_iter().filter_map(oxsort_io::file_id).collect();
    cfg.inputs.iter().any(|i| match i {
        Input::Path(p) => oxsort_io::file_id(p).is_some_and(|id| outputs.contains(&id)),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_outputs_naming_one_file_are_refused_before_any_work() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        std::os::unix::fs::symlink("out", d.path().join("link")).unwrap();
        let input = vec![Input::Path(d.path().join("in"))];
        let build = |dd_path: PathBuf| {
            SortConfig::builder(input.clone(), Output::Path(out.clone()))
                .outfil_output("A", dd_path)
                .build()
        };
        // Not made yet: the link names the same path; made: the same inode.
        for _ in 0..2 {
            let e = build(d.path().join("link")).unwrap_err().to_string();
            assert!(e.contains("is the same file as the output"), "{e}");
            std::fs::write(&out, b"x").unwrap();
        }
        assert!(build(d.path().join("other")).is_ok());
        // A stream takes several.
        let null = SortConfig::builder(input.clone(), Output::Path("/dev/null".into()))
            .outfil_output("A", "/dev/null")
            .build();
        assert!(null.is_ok());
    }
}

//! [`SortConfig`]: what to sort, where to, and with which resources; validated by its builder.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use oxsort_format::{Filter, KeySpec, RecordLayout};
use oxsort_io::IoOptions;

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
}

/// Where sorted records go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// A file, written under a temporary name and renamed when complete and verified.
    Path(PathBuf),
    /// Standard output, written sequentially.
    Stdout,
}

impl Input {
    /// The name used in messages.
    pub fn display_name(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Stdin => "-".to_string(),
        }
    }
}

/// Fixed-size records with a key of up to 10 bytes at a fixed offset, compared as unsigned bytes.
///
/// The Sort Benchmark layout (100-byte records, 10-byte key at offset 0) is
/// [`RecordFormat::BENCHMARK`]. Keys of up to 10 bytes fit whole in the 80-bit prefix of a sort
/// entry, so no record is ever compared beyond one integer comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RecordFormat {
    /// Bytes per record.
    pub record_size: usize,
    /// Offset of the key in the record.
    pub key_offset: usize,
    /// Length of the key (1 to 10 bytes).
    pub key_len: usize,
}

impl RecordFormat {
    /// 100-byte records, 10-byte key at offset 0.
    pub const BENCHMARK: RecordFormat =
        RecordFormat { record_size: 100, key_offset: 0, key_len: 10 };

    fn validate(&self) -> Result<()> {
        if self.record_size == 0 || self.record_size > 65535 {
            return Err(EngineError::Config(format!(
                "record size {} is outside 1..=65535",
                self.record_size
            )));
        }
        if self.key_len == 0 || self.key_len > oxsort_kernels::PREFIX_BYTES {
            return Err(EngineError::Config(format!(
                "key length {} is outside 1..={}",
                self.key_len,
                oxsort_kernels::PREFIX_BYTES
            )));
        }
        if self.key_offset + self.key_len > self.record_size {
            return Err(EngineError::Config(format!(
                "the key (offset {}, length {}) ends past the {}-byte record",
                self.key_offset, self.key_len, self.record_size
            )));
        }
        Ok(())
    }

    /// The key of a record, zero-padded to 10 bytes (padding keeps the order: every key pads the
    /// same way).
    #[inline]
    pub fn key_prefix(&self, record: &[u8]) -> [u8; 10] {
        let mut k = [0u8; 10];
        k[..self.key_len].copy_from_slice(&record[self.key_offset..self.key_offset + self.key_len]);
        k
    }
}

/// What the sort does with the records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Order the records by key (stable).
    #[default]
    Sort,
    /// The inputs are each already in key order: merge them. A record out of order is an
    /// error naming the file and the record.
    Merge,
    /// Keep the input order (with a filter, the records it keeps).
    Copy,
}

/// A validated sort configuration. Build it with [`SortConfig::builder`].
#[derive(Clone)]
pub struct SortConfig {
    pub(crate) inputs: Vec<Input>,
    pub(crate) output: Output,
    pub(crate) memory: u64,
    pub(crate) threads: usize,
    pub(crate) temp_dirs: Vec<PathBuf>,
    pub(crate) format: RecordFormat,
    /// Records end with this byte (variable length); `None`: fixed-size records.
    pub(crate) delim: Option<u8>,
    pub(crate) key: Option<Arc<KeySpec>>,
    pub(crate) filter: Option<Arc<Filter>>,
    pub(crate) unique: bool,
    pub(crate) mode: Mode,
    pub(crate) io: IoOptions,
    pub(crate) chunk_records_log2: Option<u32>,
    pub(crate) max_fan_in: Option<usize>,
    pub(crate) transfer: usize,
    pub(crate) read_depth: usize,
    pub(crate) merge_block: usize,
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for SortConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortConfig")
            .field("inputs", &self.inputs)
            .field("output", &self.output)
            .field("memory", &self.memory)
            .field("threads", &self.threads)
            .field("temp_dirs", &self.temp_dirs)
            .field("format", &self.format)
            .field("key", &self.key)
            .field("filter", &self.filter.is_some())
            .field("unique", &self.unique)
            .field("mode", &self.mode)
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
            format: RecordFormat::BENCHMARK,
            layout: None,
            key: None,
            filter: None,
            unique: false,
            mode: Mode::Sort,
            io: IoOptions::default(),
            chunk_records_log2: None,
            max_fan_in: None,
            transfer: None,
            read_depth: None,
            merge_block: None,
            progress: None,
            cancel: None,
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
        self.memory
    }
    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }
    /// Temp directories runs are striped over.
    pub fn temp_dirs(&self) -> &[PathBuf] {
        &self.temp_dirs
    }
    /// The record layout and key.
    pub fn format(&self) -> RecordFormat {
        self.format
    }
    /// The I/O options.
    pub fn io(&self) -> &IoOptions {
        &self.io
    }
    /// The general key, when the key is not raw bytes at a fixed place (the fast path).
    pub fn key(&self) -> Option<&KeySpec> {
        self.key.as_deref()
    }
    /// Bytes read per input transfer.
    pub fn transfer_size(&self) -> usize {
        self.transfer
    }
    /// Input transfers in flight.
    pub fn read_depth(&self) -> usize {
        self.read_depth
    }
    /// Whether only the first record of each run of equal keys is kept.
    pub fn unique(&self) -> bool {
        self.unique
    }
    /// Sort, merge or copy.
    pub fn mode(&self) -> Mode {
        self.mode
    }
}

/// Builder of [`SortConfig`]; `build` checks everything that can be checked without I/O.
pub struct SortConfigBuilder {
    inputs: Vec<Input>,
    output: Output,
    memory: Option<u64>,
    threads: Option<usize>,
    temp_dirs: Vec<PathBuf>,
    format: RecordFormat,
    layout: Option<RecordLayout>,
    key: Option<KeySpec>,
    filter: Option<Filter>,
    unique: bool,
    mode: Mode,
    io: IoOptions,
    chunk_records_log2: Option<u32>,
    max_fan_in: Option<usize>,
    transfer: Option<usize>,
    read_depth: Option<usize>,
    merge_block: Option<usize>,
    progress: Option<ProgressFn>,
    cancel: Option<Arc<AtomicBool>>,
}

impl SortConfigBuilder {
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
    /// Record layout (default: 100-byte records). Overrides the record size of
    /// [`SortConfigBuilder::format`].
    pub fn layout(mut self, layout: RecordLayout) -> Self {
        self.layout = Some(layout);
        self
    }
    /// The key (default: the bytes [`SortConfigBuilder::format`] names, or `(1,10,CH,A)`).
    /// A key that is raw ascending bytes at a fixed place (of up to 10 bytes) takes the fast
    /// path; any other is normalized per record.
    pub fn key(mut self, key: KeySpec) -> Self {
        self.key = Some(key);
        self
    }
    /// Keeps only the records the filter accepts (DFSORT `INCLUDE`/`OMIT`).
    pub fn filter(mut self, filter: Filter) -> Self {
        self.filter = Some(filter);
        self
    }
    /// Keeps only the first record (in input order) of each run of equal keys
    /// (`SUM FIELDS=NONE`, `sort -u`).
    pub fn unique(mut self, on: bool) -> Self {
        self.unique = on;
        self
    }
    /// Sort (default), merge presorted inputs, or copy.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
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
    /// Record layout and key (default [`RecordFormat::BENCHMARK`]).
    pub fn format(mut self, format: RecordFormat) -> Self {
        self.format = format;
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

    /// Validates and builds.
    pub fn build(self) -> Result<SortConfig> {
        if self.inputs.is_empty() {
            return Err(EngineError::Config("no input given".into()));
        }
        if self.inputs.iter().filter(|i| **i == Input::Stdin).count() > 1 {
            return Err(EngineError::Config("standard input (-) named more than once".into()));
        }
        let mut format = self.format;
        let layout = self.layout.unwrap_or(RecordLayout::Fixed(format.record_size));
        let (size, delim) = match layout {
            RecordLayout::Fixed(n) => (n, None),
            // Sizes of delimited records vary: the format's size is their least, one byte.
            RecordLayout::Delimited(t) => (1, Some(t)),
        };
        format.record_size = size;
        let mut key = None;
        // On delimited records, a key that is the whole record in ascending byte order (GNU
        // sort without -k) is the raw-bytes order: no need to normalize every record.
        let spec = self.key.filter(|k| !(delim.is_some() && whole_record_bytes(k)));
        if let Some(spec) = spec {
            let spec = spec.for_layout(layout).map_err(|e| EngineError::Config(e.to_string()))?;
            match spec.fast_path(layout).filter(|_| delim.is_none()) {
                Some(fast) => {
                    format.key_offset = fast.offset;
                    format.key_len = fast.len;
                }
                None => {
                    // The format's own key is unused; keep it valid for the checks below.
                    format.key_offset = 0;
                    format.key_len = size.min(oxsort_kernels::PREFIX_BYTES);
                    key = Some(Arc::new(spec));
                }
            }
        } else if delim.is_some() {
            // No key: whole records (without their terminator) as raw bytes, like `sort`.
            format.key_offset = 0;
            format.key_len = 1;
        } else if self.layout.is_some() && format.key_offset + format.key_len > size {
            return Err(EngineError::Config(format!(
                "the default key (bytes {}..{}) ends past the {size}-byte record: give a key",
                format.key_offset + 1,
                format.key_offset + format.key_len
            )));
        }
        format.validate()?;
        let threads = self.threads.unwrap_or_else(sysinfo::cores);
        if threads == 0 {
            return Err(EngineError::Config("--threads must be at least 1".into()));
        }
        if let Some(l) = self.chunk_records_log2 {
            if !(1..=30).contains(&l) {
                return Err(EngineError::Config(format!(
                    "chunk size 2^{l} records is out of range"
                )));
            }
        }
        if matches!(self.transfer, Some(t) if !(4096..=1 << 30).contains(&t)) {
            return Err(EngineError::Config("the transfer size must be 4 KiB to 1 GiB".into()));
        }
        if matches!(self.read_depth, Some(d) if !(1..=64).contains(&d)) {
            return Err(EngineError::Config("transfers in flight must be 1 to 64".into()));
        }
        if matches!(self.merge_block, Some(b) if !(4096..=1 << 30).contains(&b)) {
            return Err(EngineError::Config("the merge block must be 4 KiB to 1 GiB".into()));
        }
        if matches!(self.max_fan_in, Some(f) if f < 2) {
            return Err(EngineError::Config("merge fan-in must be at least 2".into()));
        }
        let memory = match self.memory {
            Some(m) => m,
            None => (sysinfo::available_memory() as f64 * tuning::DEFAULT_MEMORY_SHARE) as u64,
        };
        let temp_dirs = if self.temp_dirs.is_empty() {
            vec![default_temp_dir(&self.output)]
        } else {
            self.temp_dirs
        };
        Ok(SortConfig {
            inputs: self.inputs,
            output: self.output,
            memory,
            threads,
            temp_dirs,
            format,
            delim,
            key,
            filter: self.filter.map(Arc::new),
            unique: self.unique,
            mode: self.mode,
            io: self.io,
            chunk_records_log2: self.chunk_records_log2,
            max_fan_in: self.max_fan_in,
            transfer: self.transfer.unwrap_or(tuning::TRANSFER_TARGET),
            read_depth: self.read_depth.unwrap_or(tuning::READ_DEPTH),
            merge_block: self.merge_block.map_or(tuning::MERGE_BLOCK_MAX, |b| b / 4096 * 4096),
            progress: self.progress,
            cancel: self.cancel,
        })
    }
}

/// Whether every field of `key` is the whole record as ascending bytes (several such fields
/// order as one).
fn whole_record_bytes(key: &KeySpec) -> bool {
    use oxsort_format::{ColumnSpan, FieldLoc, FieldType};
    !key.fields.is_empty()
        && key.fields.iter().all(|f| {
            f.kind == FieldType::Char
                && !f.descending
                && matches!(f.loc, FieldLoc::Columns(c) if c == ColumnSpan::whole())
        })
}

/// The output's directory, or the current one for stdout.
fn default_temp_dir(output: &Output) -> PathBuf {
    match output {
        Output::Path(p) => parent_dir(p),
        Output::Stdout => std::env::temp_dir(),
    }
}

/// The directory a path lives in (`.` for a bare file name).
pub(crate) fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

//! [`explain_tables`]: the plan of a table sort before it runs (`oxsort explain --by ...`).
//!
//! The engine's plan needs the size of the rows it will sort, which exists only once the rows
//! are encoded. The first batch of the first input is encoded to learn the mean encoded row;
//! with the rows the files' metadata give (Parquet), that is the expected size the engine's
//! plan is made for. Without a row count (Arrow IPC, CSV), the plan is the engine's for rows
//! of unknown total, as the sort itself starts.

use std::fmt::Write as _;
use std::path::PathBuf;

use oxsort_engine::{Plan, SortConfigBuilder};
use oxsort_format::RDW_BYTES;

use crate::columns::SortColumn;
use crate::error::{Result, TableError};
use crate::read::{Lanes, TableInput};
use crate::rows::RowCodec;
use crate::sort::{engine_config, prepare, table_share, Prepared, TableSort};

/// A table sort's plan, as [`explain_tables`] makes it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TableExplain {
    /// Each input: its path, format, rows when its metadata say, size on disk.
    pub inputs: Vec<TableInputPlan>,
    /// The schema, a column a line: `name: type`, `(nullable)` when it may hold nulls.
    pub schema: Vec<String>,
    /// The keys, most significant first, as the sort orders them.
    pub keys: Vec<String>,
    /// Rows, when every input's metadata give them.
    pub rows: Option<u64>,
    /// The mean encoded row (RDW included), from the rows encoded to learn it.
    pub row_bytes: Option<f64>,
    /// The rows encoded to learn it.
    pub sampled_rows: u64,
    /// The rows' encoded size expected in all.
    pub encoded_bytes: Option<u64>,
    /// The payloads of rows longer than a record expected in all (when the rows sampled had
    /// some and the rows are known): written beside the runs, in [`Self::long_rows_dir`].
    pub long_row_bytes: Option<u64>,
    /// Where rows longer than a record keep their payload: the first temp directory.
    pub long_rows_dir: Option<PathBuf>,
    /// The output: path and format.
    pub output: (PathBuf, String),
    /// The memory the table side keeps for reading, decoding and writing tables, beside the
    /// engine's (in its plan).
    pub table_memory: u64,
    /// The engine's plan for the encoded rows.
    pub engine: Plan,
}

/// One input of a [`TableExplain`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct TableInputPlan {
    /// Its path.
    pub path: PathBuf,
    /// Its format's name.
    pub format: String,
    /// Rows, when the file says before it is read.
    pub rows: Option<u64>,
    /// Its size on disk.
    pub bytes: Option<u64>,
}

/// Plans `req` without sorting: the inputs opened and checked as the sort checks them, the
/// first rows encoded, and the engine's plan made (with `engine` completing its configuration
/// as [`crate::sort_tables`] takes it) for the rows expected.
pub fn explain_tables(
    req: &TableSort,
    engine: impl FnOnce(SortConfigBuilder) -> SortConfigBuilder,
) -> Result<TableExplain> {
    let req = &req.with_files()?;
    let Prepared { inputs, mut codec, output_format } = prepare(req)?;
    // Long rows encoded as the sort encodes them, their payloads counted, not written.
    codec.measure_long_rows();
    let (sampled_rows, sampled_bytes) = sample(&inputs[0], &codec)?;
    let sampled_long = codec.long_bytes();
    let row_bytes = (sampled_rows > 0).then(|| sampled_bytes as f64 / sampled_rows as f64);
    let rows = inputs.iter().map(TableInput::rows).sum::<Option<u64>>();
    let per_row = |b: u64| b as f64 / sampled_rows as f64;
    let scaled = |n: u64, b: f64| (n as f64 * b).round() as u64;
    let encoded_bytes = rows.zip(row_bytes).map(|(n, b)| scaled(n, b));
    let long_row_bytes =
        rows.filter(|_| sampled_long > 0).map(|n| scaled(n, per_row(sampled_long)));

    // The engine's configuration as the sort makes it, on streams that are never read.
    let (rx, _tx) = oxsort_io::sized_pipe(4096)
        .map_err(|e| TableError::Read { path: "a pipe".into(), why: oxsort_io::os_message(&e) })?;
    let cfg = engine_config(req, rx, encoded_bytes, std::io::sink(), engine)?;
    if sampled_long > 0 && cfg.resumable() {
        // A resumable sort keeps rows to a record (see `sort_tables`): its error, as the sort
        // would give it, from the first rows encoded without a place for long rows.
        let plain = RowCodec::new(inputs[0].schema.clone(), &req.by, &inputs[0].path)?;
        sample(&inputs[0], &plain)?;
    }
    let table_memory = table_share(cfg.memory());
    let mut engine = oxsort_engine::plan_to_show(&cfg)?;
    let long_rows_dir = cfg.temp_dirs().first().cloned().filter(|_| !cfg.resumable());
    if let (Some(bytes), Some(dir)) = (long_row_bytes, &long_rows_dir) {
        if let Some(w) = long_rows_space(&engine, dir, bytes) {
            engine.warnings.push(w);
        }
    }

    let schema = inputs[0]
        .schema
        .fields()
        .iter()
        .map(|f| {
            let null = if f.is_nullable() { " (nullable)" } else { "" };
            format!("{}: {}{null}", f.name(), f.data_type())
        })
        .collect();
    Ok(TableExplain {
        inputs: inputs
            .iter()
            .map(|i| TableInputPlan {
                path: i.path.clone(),
                format: i.format().name().to_string(),
                rows: i.rows(),
                bytes: std::fs::metadata(&i.path).ok().map(|m| m.len()),
            })
            .collect(),
        schema,
        keys: req.by.iter().map(key_text).collect(),
        rows,
        row_bytes,
        sampled_rows,
        encoded_bytes,
        long_row_bytes,
        long_rows_dir,
        output: (req.output.clone(), output_format.name().to_string()),
        table_memory,
        engine,
    })
}

/// The warning of a plan whose runs and long rows' payloads (`bytes`, in `dir`) together
/// outgrow the free space of `dir`'s filesystem (the engine checked its runs alone).
fn long_rows_space(engine: &Plan, dir: &std::path::Path, bytes: u64) -> Option<String> {
    let dev = oxsort_io::device_of(dir);
    let same = |d: &std::path::Path| dev.is_some() && oxsort_io::device_of(d) == dev;
    let runs: u64 =
        engine.temp.iter().filter(|t| same(&t.dir)).map(|t| t.bytes.saturating_sub(t.reused)).sum();
    let free = oxsort_io::free_space(dir).ok()?;
    let mb = oxsort_engine::human_bytes;
    (runs + bytes > free).then(|| {
        format!(
            "not enough temp space in {}: {} of rows longer than a record and {} of runs, {} free",
            dir.display(),
            mb(bytes),
            mb(runs),
            mb(free)
        )
    })
}

/// Rows and encoded bytes (RDW included) of the first batch of `input`.
fn sample(input: &TableInput, codec: &RowCodec) -> Result<(u64, u64)> {
    let mut got = None;
    // The feed stops at the first batch: the error it is stopped with is not one.
    let fed = input.feed(
        codec,
        0,
        Lanes { count: 1, depth: crate::tuning::QUEUE_DEPTH, in_turn: false },
        &mut |f| {
            got = Some((f.sum.rows, f.bytes.len() as u64));
            Err(TableError::Read { path: input.path.clone(), why: String::new() })
        },
    );
    match (got, fed) {
        (Some(g), _) => Ok(g),
        (None, Ok(_)) => Ok((0, 0)),
        (None, Err(e)) => Err(e),
    }
}

/// A key as the sort orders it.
fn key_text(c: &SortColumn) -> String {
    format!(
        "{} {}, nulls {}",
        c.name,
        if c.descending { "descending" } else { "ascending" },
        if c.nulls_first { "first" } else { "last" }
    )
}

impl TableExplain {
    /// The plan as a person reads it.
    pub fn to_text(&self) -> String {
        let mut s = String::from("table sort\n");
        let mb = |b: u64| oxsort_engine::human_bytes(b);
        for i in &self.inputs {
            let rows = i.rows.map_or("rows known once read".into(), |n| format!("{n} rows"));
            let size = i.bytes.map_or(String::new(), |b| format!(", {}", mb(b)));
            let _ = writeln!(s, "  input        {} ({}, {rows}{size})", i.path.display(), i.format);
        }
        let _ = writeln!(s, "  schema       {}", self.schema.join(", "));
        let _ = writeln!(s, "  keys         {}; then input order", self.keys.join("; "));
        let rows = match (self.rows, self.row_bytes, self.encoded_bytes) {
            (_, None, _) => "no rows to sort".to_string(),
            (Some(n), Some(b), Some(all)) => format!(
                "{n} rows of about {b:.0} bytes each when encoded (from the first {}): about {} \
                 for the engine",
                self.sampled_rows,
                mb(all)
            ),
            (_, Some(b), _) => format!(
                "about {b:.0} bytes each when encoded (from the first {}); how many is known \
                 once read",
                self.sampled_rows
            ),
        };
        let _ = writeln!(s, "  rows         {rows}");
        if let (Some(b), Some(dir)) = (self.long_row_bytes, &self.long_rows_dir) {
            let _ = writeln!(
                s,
                "  long rows    about {} of payload of rows longer than a record, in a file of \
                 its own in {} (beside the runs)",
                mb(b),
                dir.display()
            );
        }
        let _ = writeln!(
            s,
            "  records      RDW ({RDW_BYTES} bytes), the keys' row encoding, the row's number \
             (8 bytes), the other columns; sorted by their bytes after the RDW"
        );
        let _ = writeln!(
            s,
            "  memory       {} for reading, decoding and writing the tables; the engine's below",
            mb(self.table_memory)
        );
        let _ = writeln!(s, "  output       {} ({})", self.output.0.display(), self.output.1);
        let _ = writeln!(s, "  engine");
        for line in self.engine.to_text().lines() {
            let _ = writeln!(s, "    {line}");
        }
        s
    }
}

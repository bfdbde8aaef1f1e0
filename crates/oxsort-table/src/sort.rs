//! [`sort_tables`]: the table sort on the engine.
//!
//! ```text
//!  inputs ─ read + encode (lanes) ─ feeder ─ pipe ─> engine sort (budget, runs, merge, checks)
//!                                                          │ sorted records, in order
//!  output <─ rename when whole <─ writer <─ decode batches <─ channel
//! ```
//!
//! The engine sorts RDW-prefixed records by the bytes after the RDW (its default key for that
//! layout), which [`crate::rows`] makes the stable order of the rows. The feeder counts and sums
//! the rows it encodes; the decoder counts and sums the rows it decodes and checks each is
//! greater than the one before; both must agree before the output gets its name.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use arrow_array::RecordBatch;
use crossbeam_channel::{bounded, Receiver, Sender};
use oxsort_engine::{Input, Output, SortConfig, SortConfigBuilder, SortStats, Stream};
use oxsort_format::{RecordLayout, SortSpec, RDW_BYTES};

use crate::check::RowSum;
use crate::columns::{check_distinct, ColumnType, SortColumn};
use crate::error::{Result, TableError};
use crate::format::TableFormat;
use crate::read::{schema_difference, Lanes, TableInput};
use crate::rows::RowCodec;
use crate::tuning::{
    BATCH_ROWS, DECODED_BATCH_MAX_ROWS, MIN_ENGINE_BYTES, MIN_ROW_GROUP_BYTES, OUTPUT_PIECE_BYTES,
    PIPE_BYTES, QUEUES_SIZED, QUEUE_DEPTH, QUEUE_DEPTH_MAX, QUEUE_SLOT_BYTES,
    ROW_GROUP_SHARE_DIVISOR, TABLE_SHARE_DIVISOR, TABLE_SHARE_MAX,
};
use crate::write::TableWriter;

/// A table sort: inputs of one schema, concatenated, sorted by columns into one output.
#[derive(Debug, Clone)]
pub struct TableSort {
    /// The input tables, in order; a directory stands for its table files in name order.
    pub inputs: Vec<PathBuf>,
    /// The output table.
    pub output: PathBuf,
    /// The sort columns, most significant first.
    pub by: Vec<SortColumn>,
    /// The inputs' format; default: each input's extension.
    pub input_format: Option<TableFormat>,
    /// The output's format; default: its extension, else the first input's format.
    pub output_format: Option<TableFormat>,
    /// Threads decoding the inputs (Parquet row groups at once); 0: the engine's count.
    pub threads: usize,
    /// Column types given for CSV and TSV inputs in place of those inferred.
    pub types: Vec<ColumnType>,
    /// Whether to sum the rows' contents too ([`TableStats::rows_checksum`]; a CRC32 a row).
    pub row_checksum: bool,
}

impl TableSort {
    /// The same sort with each input directory replaced by its table files, in name order
    /// (see `crate::dirs`).
    pub(crate) fn with_files(&self) -> Result<TableSort> {
        Ok(TableSort {
            inputs: crate::dirs::expand(&self.inputs, self.input_format)?,
            ..self.clone()
        })
    }
}

/// What a table sort did.
#[derive(Debug, Clone)]
pub struct TableStats {
    /// Rows read and written.
    pub rows: u64,
    /// The count and checksum of the rows, as encoded (read and written alike).
    pub sum: RowSum,
    /// The output's format.
    pub output_format: TableFormat,
    /// The engine's statistics of the sort of the encoded rows.
    pub engine: SortStats,
    /// With [`TableSort::row_checksum`]: the wrapping sum of each input row's CRC32 without
    /// its number in the input, the same for the same rows (values and types) sorted by the
    /// same keys whatever their order, file format or sort: the parts of a sort across
    /// machines add up to their inputs' sum.
    pub rows_checksum: Option<u64>,
}

/// The engine's share of a table sort's memory budget `memory`: the table sort keeps
/// 1/[`TABLE_SHARE_DIVISOR`] of it, at most [`TABLE_SHARE_MAX`], for its readers, decoder and
/// writer.
pub fn engine_memory(memory: u64) -> u64 {
    let table = (memory / TABLE_SHARE_DIVISOR).min(TABLE_SHARE_MAX);
    (memory - table).max(MIN_ENGINE_BYTES)
}

/// The table sort's share beside an engine budget of `engine` bytes, as [`engine_memory`]
/// split the whole budget (the engine's is 3/4 of it, the table's 1/4, up to its maximum).
pub(crate) fn table_share(engine: u64) -> u64 {
    (engine / (TABLE_SHARE_DIVISOR - 1)).min(TABLE_SHARE_MAX)
}

/// Encoded batches queued after each reader lane and before the writer, in a table share of
/// `share` bytes: [`QUEUE_DEPTH`], and more (up to [`QUEUE_DEPTH_MAX`]) where the share holds
/// [`QUEUE_SLOT_BYTES`] for each.
fn queue_depth(share: u64) -> usize {
    let slots = share / QUEUE_SLOT_BYTES / QUEUES_SIZED;
    usize::try_from(slots).unwrap_or(usize::MAX).clamp(QUEUE_DEPTH, QUEUE_DEPTH_MAX)
}

/// The inputs opened, their schemas checked alike.
pub(crate) fn open_inputs(req: &TableSort) -> Result<Vec<TableInput>> {
    if req.inputs.is_empty() {
        return Err(TableError::NoInput);
    }
    if req.inputs.iter().filter(|p| crate::read::is_std(p)).count() > 1 {
        return Err(TableError::Read {
            path: crate::read::STD.into(),
            why: "standard input is named twice: it can be read once".into(),
        });
    }
    let inputs = req
        .inputs
        .iter()
        .map(|p| TableInput::open(p, req.input_format, &req.types))
        .collect::<Result<Vec<_>>>()?;
    let first = &inputs[0];
    for i in &inputs[1..] {
        if let Some(difference) = schema_difference(&first.schema, &i.schema) {
            return Err(TableError::SchemaMismatch {
                path: i.path.clone(),
                first: first.path.clone(),
                difference,
            });
        }
    }
    Ok(inputs)
}

/// What a table sort (or its plan) starts from: the inputs opened and checked alike, their
/// rows' encoding, and the output's format.
pub(crate) struct Prepared {
    pub(crate) inputs: Vec<TableInput>,
    pub(crate) codec: RowCodec,
    pub(crate) output_format: TableFormat,
}

pub(crate) fn prepare(req: &TableSort) -> Result<Prepared> {
    check_distinct(&req.by)?;
    let inputs = open_inputs(req)?;
    let codec = RowCodec::new(inputs[0].schema.clone(), &req.by, &inputs[0].path)?;
    let output_format = req
        .output_format
        .or_else(|| TableFormat::from_path(&req.output))
        .unwrap_or_else(|| inputs[0].format());
    if matches!(output_format, TableFormat::Csv | TableFormat::Tsv) {
        // Known now, not once the rows are sorted: CSV has no form for a nested value.
        let nested = inputs[0].schema.fields().iter().find(|f| f.data_type().is_nested());
        if let Some(f) = nested {
            return Err(TableError::Write {
                path: req.output.clone(),
                why: format!(
                    "{} cannot hold column '{}' of type {} (a nested type): write Parquet or \
                     Arrow IPC",
                    output_format.name(),
                    f.name(),
                    f.data_type()
                ),
            });
        }
    }
    Ok(Prepared { inputs, codec, output_format })
}

/// The engine's configuration of a table sort: the encoded rows read from `rows` (about
/// `expected` bytes of them, for a plan shown), sorted as RDW records into `sorted`,
/// completed by `engine`.
pub(crate) fn engine_config(
    req: &TableSort,
    rows: std::os::fd::OwnedFd,
    expected: Option<u64>,
    sorted: impl Write + Send + 'static,
    engine: impl FnOnce(SortConfigBuilder) -> SortConfigBuilder,
) -> Result<SortConfig> {
    let mut rows = Stream::new(rows, format!("{} (rows)", req.inputs[0].display()));
    if let Some(b) = expected {
        rows = rows.expecting(b);
    }
    if let Some((sources, recipe)) = replay_recipe(req) {
        rows = rows.replayable(sources, recipe);
    }
    let mut sorted = Stream::writer(sorted, format!("{} (rows)", req.output.display()));
    if !crate::read::is_std(&req.output) {
        sorted = sorted.writing_to(&req.output);
    }
    // The table sort checks the rows it decodes against the rows it encoded (count, sum and
    // order: `decode`), around the engine: the engine's own check of the same bytes would be
    // the same work twice (a sixth of the merge phase's CPU).
    Ok(engine(
        SortConfig::builder(vec![Input::Stream(rows)], Output::Stream(sorted))
            .spec(SortSpec::with_layout(RecordLayout::VARIABLE))
            .checked_by_caller(true),
    )
    .build()?)
}

/// The version of the rows' encoding ([`RowCodec`]): a resumed sort takes over runs of the
/// same encoding only.
const ROW_FORMAT: u32 = 2;

/// What the encoded rows of `req` are made from, when they can be made again the same (no
/// input is a standard stream): the input files, and how (the encoding, the keys, the formats
/// and column types). A resumed sort takes over the runs of an interrupted one only when both
/// are the same and the files unchanged.
fn replay_recipe(req: &TableSort) -> Option<(Vec<std::path::PathBuf>, String)> {
    if req.inputs.iter().any(|p| crate::read::is_std(p)) {
        return None;
    }
    let recipe = format!(
        "table rows v{ROW_FORMAT} by {:?} types {:?} format {:?}",
        req.by, req.types, req.input_format
    );
    Some((req.inputs.clone(), recipe))
}

/// Sorts `req`'s tables. `engine` completes the engine's configuration (memory as
/// [`engine_memory`] gives it, threads, temp directories, progress, cancel); inputs, output
/// and spec are the table sort's. On error nothing is under the output's name.
pub fn sort_tables(
    req: &TableSort,
    engine: impl FnOnce(SortConfigBuilder) -> SortConfigBuilder,
) -> Result<TableStats> {
    let req = &req.with_files()?;
    let Prepared { inputs, mut codec, output_format } = prepare(req)?;
    if req.row_checksum {
        codec.sum_contents();
    }
    let style = inputs.iter().find_map(|i| i.parquet_style());

    let (rx_fd, tx_fd) = oxsort_io::sized_pipe(PIPE_BYTES)
        .map_err(|e| TableError::Read { path: "a pipe".into(), why: oxsort_io::os_message(&e) })?;
    let (chunks_tx, chunks_rx) = bounded::<Vec<u8>>(QUEUE_DEPTH);
    let cfg = engine_config(req, rx_fd, None, ChunkWriter(chunks_tx), engine)?;
    // Rows too long for a record keep their payload in a file beside the runs, in the first
    // temp directory (the engine's configuration always has one: the given or its default). A
    // resumed sort could not find that file again: with --resume they stay an error.
    if let Some(dir) = cfg.temp_dirs().first().filter(|_| !cfg.resumable()) {
        codec.keep_long_rows_in(dir);
    }
    let share = table_share(cfg.memory());
    let row_group = (share / ROW_GROUP_SHARE_DIVISOR).max(MIN_ROW_GROUP_BYTES);
    let lanes = if req.threads == 0 { cfg.threads() } else { req.threads };
    let mut writer = TableWriter::create(
        &req.output,
        output_format,
        codec.schema(),
        style.as_ref(),
        row_group,
        lanes,
        output_delimiter(output_format, &inputs),
    )?;

    // Whether the feeder stopped because the sort stopped reading (its error is then a
    // consequence of the sort's).
    let cut = AtomicBool::new(false);
    let depth = queue_depth(share);
    // A resumable sort is fed in row group order, the same stream whatever its threads.
    let fed_lanes = Lanes { count: lanes, depth, in_turn: !cfg.resumable() };
    let (batches_tx, batches_rx) = bounded::<RecordBatch>(depth);
    let (fed, decoded, written, sorted) = std::thread::scope(|s| {
        let feeder =
            spawn(s, "table-feed", || feed(&inputs, &codec, fed_lanes, File::from(tx_fd), &cut));
        let decoder =
            spawn(s, "table-decode", || decode(chunks_rx, &codec, batches_tx, &req.output));
        let written =
            spawn(s, "table-write", || batches_rx.iter().try_for_each(|b| writer.write(&b)));
        let sorted = oxsort_engine::sort(&cfg);
        // The pipe's read end and the output's writer go with the configuration: a feeder
        // still writing, or a decoder still waiting, learns the sort is over.
        drop(cfg);
        (join(feeder), join(decoder), join(written), sorted)
    });
    // The feeder's own error first (the engine sorted what it was given: too few rows); then
    // the writer's (the decoder's is then its consequence), the decoder's (the engine's write
    // error is its consequence); then the engine's (a feeder cut off is its consequence).
    let fed = match fed {
        Err(e) if !cut.load(Relaxed) => return Err(e),
        fed => fed,
    };
    written?;
    let decoded = decoded?;
    let mut engine = sorted?;
    let (fed, content) = fed?;
    if fed != decoded {
        return Err(TableError::Check {
            path: req.output.clone(),
            why: format!(
                "{} rows read with checksum {:016x}, {} written with checksum {:016x}",
                fed.rows, fed.sum, decoded.rows, decoded.sum
            ),
        });
    }
    if let Some(output) = writer.finish()? {
        output.commit()?;
    }
    // The checksums the statistics show are the table's check's (the engine's was not taken).
    engine.input_checksum = oxsort_engine::checksum_hex(u128::from(fed.sum));
    engine.checksum = oxsort_engine::checksum_hex(u128::from(decoded.sum));
    let rows_checksum = req.row_checksum.then_some(content);
    Ok(TableStats { rows: fed.rows, sum: fed, output_format, engine, rows_checksum })
}

/// Starts `f` on a thread called `name` (so profiles and debuggers tell the stages apart).
fn spawn<'scope, T: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    name: &str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn_scoped(s, f)
        .unwrap_or_else(|e| panic!("starting the {name} thread: {e}"))
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, Result<T>>) -> Result<T> {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// The field separator of a CSV or TSV output: a CSV output of CSV input keeps the input's
/// separator (a `;` file sorts to a `;` file), otherwise the format's own.
fn output_delimiter(format: TableFormat, inputs: &[TableInput]) -> u8 {
    match inputs.first() {
        Some(i) if format == TableFormat::Csv && i.format() == TableFormat::Csv => {
            i.text_delimiter().unwrap_or(b',')
        }
        _ => format.delimiter(),
    }
}

/// Encodes every input's rows into the pipe, numbered through all inputs; returns their count
/// and sum, and their content sum (0 unless the codec sums contents).
fn feed(
    inputs: &[TableInput],
    codec: &RowCodec,
    lanes: Lanes,
    mut pipe: File,
    cut: &AtomicBool,
) -> Result<(RowSum, u64)> {
    // The sort may stop reading (it failed, or refused to start): a write then fails here.
    oxsort_io::quiet_broken_pipe();
    let mut total = RowSum::default();
    let mut content = 0u64;
    let mut first = 0u64;
    for input in inputs {
        let path = &input.path;
        let mut put = |f: crate::rows::Framed| {
            pipe.write_all(&f.bytes).map_err(|e| {
                cut.store(true, Relaxed);
                TableError::Read {
                    path: path.clone(),
                    why: format!("handing rows to the sort: {}", oxsort_io::os_message(&e)),
                }
            })?;
            total.merge(f.sum);
            content = content.wrapping_add(f.content);
            Ok(())
        };
        let n = input.feed(codec, first, lanes, &mut put)?;
        if let Some(expected) = input.rows() {
            if expected != n {
                return Err(TableError::Read {
                    path: path.clone(),
                    why: format!("{n} rows read, its metadata says {expected}"),
                });
            }
        }
        first += n;
    }
    Ok((total, content))
}

/// The engine's output: what it writes is handed to the decoder in pieces of at most
/// [`OUTPUT_PIECE_BYTES`].
struct ChunkWriter(Sender<Vec<u8>>);

impl Write for ChunkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for piece in buf.chunks(OUTPUT_PIECE_BYTES) {
            self.0.send(piece.to_vec()).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the table writer stopped")
            })?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Decodes the sorted records into batches for the writer; returns the rows' count and sum.
///
/// Holds one chunk of the engine's output at a time and the record that straddles two chunks
/// (copied whole into `carry`): a batch ends at the end of each chunk, so nothing of a chunk
/// is kept once the next arrives.
fn decode(
    chunks: Receiver<Vec<u8>>,
    codec: &RowCodec,
    batches: Sender<RecordBatch>,
    output: &Path,
) -> Result<RowSum> {
    let check = |why: String| TableError::Check { path: output.to_path_buf(), why };
    let mut sum = RowSum::default();
    // The last row written, to check the next is greater.
    let mut last: Vec<u8> = Vec::new();
    // The start of a record the previous chunk cut (its RDW included).
    let mut carry: Vec<u8> = Vec::new();
    for chunk in chunks {
        let mut rows: Vec<&[u8]> = Vec::with_capacity(BATCH_ROWS);
        let mut pos = 0;
        if !carry.is_empty() {
            // Complete the cut record: its RDW first, if the cut fell inside it.
            let need_rdw = RDW_BYTES.saturating_sub(carry.len()).min(chunk.len());
            carry.extend_from_slice(&chunk[..need_rdw]);
            pos = need_rdw;
            if carry.len() < RDW_BYTES {
                continue;
            }
            let len = record_len(&carry).map_err(&check)?;
            let rest = (len - carry.len()).min(chunk.len() - pos);
            carry.extend_from_slice(&chunk[pos..pos + rest]);
            pos += rest;
            if carry.len() < len {
                continue;
            }
        }
        let first = (!carry.is_empty()).then(|| &carry[RDW_BYTES..]);
        let mut next = pos;
        if let Some(row) = first {
            admit(sum.rows + rows.len() as u64, &last, row).map_err(&check)?;
            rows.push(row);
        }
        while chunk.len() - next >= RDW_BYTES {
            let len = record_len(&chunk[next..]).map_err(&check)?;
            if chunk.len() - next < len {
                break;
            }
            let row = &chunk[next + RDW_BYTES..next + len];
            let prev = rows.last().copied().unwrap_or(&last);
            admit(sum.rows + rows.len() as u64, prev, row).map_err(&check)?;
            rows.push(row);
            next += len;
            if rows.len() == DECODED_BATCH_MAX_ROWS {
                write_rows(codec, &batches, &mut rows, &mut last, &mut sum, output)?;
            }
        }
        write_rows(codec, &batches, &mut rows, &mut last, &mut sum, output)?;
        drop(rows);
        carry.clear();
        carry.extend_from_slice(&chunk[next..]);
    }
    if !carry.is_empty() {
        return Err(check(format!("{} bytes of a cut record end the sorted rows", carry.len())));
    }
    Ok(sum)
}

/// Checks `row`, the `seen`-th, greater than `prev`, the row before it (if there was one).
fn admit(seen: u64, prev: &[u8], row: &[u8]) -> std::result::Result<(), String> {
    if seen > 0 && row <= prev {
        return Err(format!("row {seen} is out of order"));
    }
    Ok(())
}

/// The length (RDW included) of the record whose RDW opens `b`.
fn record_len(b: &[u8]) -> std::result::Result<usize, String> {
    let len = usize::from(u16::from_be_bytes([b[0], b[1]]));
    if len < RDW_BYTES {
        return Err(format!("a record of {len} bytes in the sorted rows"));
    }
    Ok(len)
}

/// Decodes `rows` into one batch, hands it to the writer, counts them in `sum`, and keeps the
/// last row in `last`.
fn write_rows(
    codec: &RowCodec,
    batches: &Sender<RecordBatch>,
    rows: &mut Vec<&[u8]>,
    last: &mut Vec<u8>,
    sum: &mut RowSum,
    output: &Path,
) -> Result<()> {
    let Some(&end) = rows.last() else { return Ok(()) };
    sum.add_all(rows);
    let batch = codec.decode(rows.iter().copied())?;
    batches.send(batch).map_err(|_| TableError::Write {
        path: output.to_path_buf(),
        why: "the writer stopped".into(),
    })?;
    last.clear();
    last.extend_from_slice(end);
    rows.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    /// The sorted stream cut anywhere (inside an RDW, inside a row, between rows) decodes to
    /// the same rows: the ones framed, in order.
    #[test]
    fn records_cut_across_pieces_anywhere_decode_whole() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int32, false),
            Field::new("s", DataType::Utf8, false),
        ]));
        let n = 40;
        let k = Int32Array::from_iter_values(0..n);
        let s = StringArray::from_iter_values((0..n).map(|i| "x".repeat(i as usize % 7)));
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(k), Arc::new(s.clone())]).unwrap();
        let codec = RowCodec::new(schema, &[SortColumn::new("k")], Path::new("t")).unwrap();
        let framed = codec.encode(&batch, 0, 0, Path::new("t")).unwrap();
        for piece in 1..=framed.bytes.len() {
            let (ctx, crx) = bounded(framed.bytes.len());
            for p in framed.bytes.chunks(piece) {
                ctx.send(p.to_vec()).unwrap();
            }
            drop(ctx);
            let (btx, brx) = bounded(framed.bytes.len());
            let sum = decode(crx, &codec, btx, Path::new("out")).unwrap();
            assert_eq!(sum, framed.sum, "pieces of {piece}");
            let got: Vec<RecordBatch> = brx.iter().collect();
            let got = arrow_select::concat::concat_batches(codec.schema(), &got).unwrap();
            assert_eq!(got, batch, "pieces of {piece}");
        }
        // A stream cut short is an error, not fewer rows.
        let (ctx, crx) = bounded(1);
        ctx.send(framed.bytes[..framed.bytes.len() - 1].to_vec()).unwrap();
        drop(ctx);
        let (btx, _brx) = bounded(framed.bytes.len());
        let e = decode(crx, &codec, btx, Path::new("out")).unwrap_err().to_string();
        assert!(e.contains("cut record") && e.contains("out"), "{e}");
    }
}

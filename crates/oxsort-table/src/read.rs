//! The inputs: table files opened, their schemas checked against each other, and their rows
//! encoded into framed records (Parquet row groups decoded in parallel).
//!
//! ```text
//!  row groups 0, 2, .. ─ lane 0 ─┐
//!                                ├─> feeder: a batch of each lane in turn ─> framed records
//!  row groups 1, 3, .. ─ lane 1 ─┘                                            ─> engine
//! ```
//!
//! Every row is numbered by its place in the inputs, and that number ends its key: the order
//! rows reach the sort in is free, and the sort stays stable. A resumable sort's rows come in
//! row group order instead: a resumed sort skips what its runs hold, so it must be fed the same
//! stream again whatever its number of threads.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, Field, Schema, SchemaRef};
use crossbeam_channel::bounded;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::basic::{Compression, Encoding, PageType};
use parquet::file::metadata::ColumnChunkMetaData;

use crate::columns::ColumnType;
use crate::error::{Result, TableError};
use crate::format::{sniff_delimiter, TableFormat};
use crate::parquet_out::ParquetStyle;
use crate::quotes::QuoteCheck;
use crate::rows::{Framed, RowCodec};
use crate::tuning::{BATCH_ROWS, CSV_INFER_ROWS, HEADER_SNIFF_BYTES};

/// The magic that opens an Arrow IPC file (a stream opens with a message instead).
const ARROW_FILE_MAGIC: &[u8; 6] = b"ARROW1";

/// How a Parquet file's row groups are decoded and handed on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lanes {
    /// Row groups decoded at once, one per thread.
    pub(crate) count: usize,
    /// Encoded batches queued after each lane.
    pub(crate) depth: usize,
    /// A batch of each lane in turn (else row group after row group, whatever `count` is).
    pub(crate) in_turn: bool,
}

/// An input table, opened.
pub(crate) struct TableInput {
    pub(crate) path: PathBuf,
    kind: Kind,
    pub(crate) schema: SchemaRef,
    /// A regular file as it was when its schema was read: each later open must find the same
    /// file, and the end of the feed the same size and modification time.
    seen: Option<Seen>,
}

/// What tells a regular file from another, or from itself rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
}

impl Seen {
    fn of(m: &std::fs::Metadata) -> Seen {
        use std::os::unix::fs::MetadataExt;
        let mtime_ns = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
        Seen { dev: m.dev(), ino: m.ino(), len: m.len(), mtime_ns }
    }
}

enum Kind {
    Parquet(ArrowReaderMetadata),
    ArrowFile,
    ArrowStream,
    /// CSV or TSV: how it is read, and its field separator.
    Text(arrow_csv::reader::Format, TableFormat, u8),
    /// An Arrow IPC stream read once (standard input, a pipe), its schema read.
    StreamArrow(Mutex<Option<ArrowStreamReader>>),
    /// CSV or TSV read once (standard input, a pipe): the bytes its types were inferred from,
    /// then the rest.
    StreamText(arrow_csv::reader::Format, TableFormat, u8, Mutex<Option<Box<dyn Read + Send>>>),
}

/// An Arrow IPC stream being read once.
type ArrowStreamReader = arrow_ipc::reader::StreamReader<BufReader<Box<dyn Read + Send>>>;

/// The name standard input (as an input) and standard output (as the output) go by, as
/// every sort takes them.
pub(crate) const STD: &str = "-";

/// Whether `path` names a standard stream ([`STD`]).
pub(crate) fn is_std(path: &Path) -> bool {
    path.as_os_str() == STD
}

fn read_error(path: &Path, e: impl std::fmt::Display) -> TableError {
    TableError::Read { path: path.to_path_buf(), why: e.to_string() }
}

/// Whether oxsort reads and writes Parquet pages compressed with `c` (the `parquet` crate's
/// codecs built in: uncompressed, snappy, gzip, LZ4 and zstd; not Brotli or LZO).
fn supported(c: Compression) -> bool {
    matches!(
        c,
        Compression::UNCOMPRESSED
            | Compression::SNAPPY
            | Compression::GZIP(_)
            | Compression::LZ4
            | Compression::LZ4_RAW
            | Compression::ZSTD(_)
    )
}

/// An error naming the first column chunk of `meta` compressed with a codec oxsort cannot
/// decompress, before any row is read.
fn check_codecs(path: &Path, meta: &ArrowReaderMetadata) -> Result<()> {
    for (g, rg) in meta.metadata().row_groups().iter().enumerate() {
        if let Some(c) = rg.columns().iter().find(|c| !supported(c.compression())) {
            return Err(TableError::Corrupt {
                path: path.to_path_buf(),
                row_group: g,
                column: c.column_path().string(),
                why: format!(
                    "its pages are compressed with {}, which oxsort does not read (it reads \
                     uncompressed, snappy, gzip, LZ4 and zstd pages)",
                    // The codec's name, without its level.
                    c.compression().to_string().split('(').next().unwrap_or_default()
                ),
            });
        }
    }
    Ok(())
}

fn open_file(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| read_error(path, oxsort_io::os_message(&e)))
}

impl TableInput {
    /// Opens `path` (as `given`, else as its extension says) and reads its schema.
    /// `types`: column types given in place of those inferred (CSV and TSV inputs only).
    pub(crate) fn open(
        path: &Path,
        given: Option<TableFormat>,
        types: &[ColumnType],
    ) -> Result<TableInput> {
        let mut input = if is_std(path) {
            Self::open_stream(path, given, Box::new(std::io::stdin()))?
        } else {
            Self::open_file(path, given)?
        };
        if !types.is_empty() {
            if !matches!(input.kind, Kind::Text(..) | Kind::StreamText(..)) {
                return Err(read_error(
                    path,
                    format!(
                        "column types are given for CSV and TSV inputs; a {} input has its own",
                        input.format().name()
                    ),
                ));
            }
            input.schema = declared(path, &input.schema, types)?;
        }
        Ok(input)
    }

    fn open_file(path: &Path, given: Option<TableFormat>) -> Result<TableInput> {
        let format = TableFormat::of(path, given)?;
        let file = open_file(path)?;
        let meta = file.metadata().map_err(|e| read_error(path, oxsort_io::os_message(&e)))?;
        if meta.is_dir() {
            return Err(read_error(path, "a directory: give the table files in it"));
        }
        if !meta.is_file() {
            // An input is a stream until proven a regular file: a pipe (`<(zcat t.csv.gz)`)
            // is read once, from its start to its end, as standard input is.
            return Self::open_stream(path, Some(format), Box::new(file));
        }
        let (kind, schema) = match format {
            TableFormat::Parquet => {
                let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
                    .map_err(|e| read_error(path, format!("not a readable Parquet file: {e}")))?;
                check_codecs(path, &meta)?;
                let schema = meta.schema().clone();
                (Kind::Parquet(meta), schema)
            }
            TableFormat::ArrowFile | TableFormat::ArrowStream => {
                let mut magic = [0u8; 6];
                let n = (&file).take(6).read(&mut magic).map_err(|e| read_error(path, e))?;
                // The same file from its start (a regular file: it can be read again).
                let mut file = file;
                std::io::Seek::rewind(&mut file).map_err(|e| read_error(path, e))?;
                if n == 6 && &magic == ARROW_FILE_MAGIC {
                    let r = arrow_ipc::reader::FileReader::try_new(BufReader::new(file), None)
                        .map_err(|e| read_error(path, format!("not a readable Arrow file: {e}")))?;
                    (Kind::ArrowFile, r.schema())
                } else {
                    let r = arrow_ipc::reader::StreamReader::try_new(BufReader::new(file), None)
                        .map_err(|e| {
                            read_error(path, format!("not a readable Arrow IPC stream: {e}"))
                        })?;
                    (Kind::ArrowStream, r.schema())
                }
            }
            TableFormat::Csv | TableFormat::Tsv => {
                let mut header = Vec::new();
                BufReader::new((&file).take(HEADER_SNIFF_BYTES))
                    .read_until(b'\n', &mut header)
                    .map_err(|e| read_error(path, e))?;
                let mut file = file;
                std::io::Seek::rewind(&mut file).map_err(|e| read_error(path, e))?;
                let d = sniff_delimiter(format, &header);
                let f = arrow_csv::reader::Format::default().with_header(true).with_delimiter(d);
                let (schema, _) = f
                    .infer_schema(BufReader::new(file), Some(CSV_INFER_ROWS))
                    .map_err(|e| read_error(path, format!("reading its header and types: {e}")))?;
                (Kind::Text(f, format, d), text_schema(path, schema)?)
            }
        };
        Ok(TableInput { path: path.to_path_buf(), kind, schema, seen: Some(Seen::of(&meta)) })
    }

    /// `path` opened again to be read: the file its schema was read from, unchanged. The
    /// bytes sorted are the bytes that were there: a file replaced or written to while the
    /// sort reads it is an error, not a mix of two files.
    fn reopen(&self) -> Result<File> {
        let file = open_file(&self.path)?;
        let now = file.metadata().map_err(|e| read_error(&self.path, oxsort_io::os_message(&e)))?;
        self.check_unchanged(&now)?;
        Ok(file)
    }

    /// Whether the file is still as it was seen (see [`TableInput::reopen`]).
    fn check_unchanged(&self, now: &std::fs::Metadata) -> Result<()> {
        match self.seen {
            Some(seen) if Seen::of(now) != seen => Err(read_error(
                &self.path,
                "changed while it was being sorted (replaced, or written to): nothing was \
                 written; sort it again once it is complete",
            )),
            _ => Ok(()),
        }
    }

    /// An input read once as a stream (standard input, `-`, or a pipe named `path`): an Arrow
    /// IPC stream, CSV or TSV (`given`: standard input has no name to tell it from; a `.arrow`
    /// pipe holding a stream is read as one). Parquet and Arrow IPC files are read from their
    /// ends and cannot come as a stream. The schema is read now; the rows when fed, from the
    /// first byte on (the bytes read for the schema are kept).
    fn open_stream(
        path: &Path,
        given: Option<TableFormat>,
        mut stdin: Box<dyn Read + Send>,
    ) -> Result<TableInput> {
        let what = if is_std(path) { "standard input" } else { "a pipe" };
        if given == Some(TableFormat::ArrowFile) {
            let mut magic = Vec::with_capacity(ARROW_FILE_MAGIC.len());
            (&mut stdin)
                .take(ARROW_FILE_MAGIC.len() as u64)
                .read_to_end(&mut magic)
                .map_err(|e| read_error(path, oxsort_io::os_message(&e)))?;
            if magic != ARROW_FILE_MAGIC {
                // An Arrow IPC stream under a file's extension: read as a stream.
                stdin = Box::new(std::io::Cursor::new(magic).chain(stdin));
                return Self::open_stream(path, Some(TableFormat::ArrowStream), stdin);
            }
        }
        let (kind, schema) = match given {
            None => {
                return Err(TableError::UnknownFormat {
                    path: path.to_path_buf(),
                    why: format!(
                        "{what} has no name to tell its format from: give it (csv, tsv or \
                         arrows)"
                    ),
                })
            }
            Some(f @ (TableFormat::Parquet | TableFormat::ArrowFile)) => {
                return Err(read_error(
                    path,
                    format!(
                        "{what}: a {} file is read from its end and cannot come as a stream: \
                         give its path (an Arrow IPC stream, CSV or TSV can come through a \
                         pipe)",
                        f.name()
                    ),
                ))
            }
            Some(TableFormat::ArrowStream) => {
                let r = arrow_ipc::reader::StreamReader::try_new(BufReader::new(stdin), None)
                    .map_err(|e| {
                        read_error(path, format!("not a readable Arrow IPC stream: {e}"))
                    })?;
                let schema = r.schema();
                (Kind::StreamArrow(Mutex::new(Some(r))), schema)
            }
            Some(format @ (TableFormat::Csv | TableFormat::Tsv)) => {
                // The types are inferred from the first CSV_INFER_ROWS lines, kept to be read
                // again before the rest.
                let mut r = BufReader::new(stdin);
                let mut head = Vec::new();
                for _ in 0..=CSV_INFER_ROWS {
                    if r.read_until(b'\n', &mut head).map_err(|e| read_error(path, e))? == 0 {
                        break;
                    }
                }
                let d = sniff_delimiter(format, &head);
                let f = arrow_csv::reader::Format::default().with_header(true).with_delimiter(d);
                let (schema, _) = f
                    .infer_schema(head.as_slice(), Some(CSV_INFER_ROWS))
                    .map_err(|e| read_error(path, format!("reading its header and types: {e}")))?;
                let rest: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(head).chain(r));
                let kind = Kind::StreamText(f, format, d, Mutex::new(Some(rest)));
                (kind, text_schema(path, schema)?)
            }
        };
        Ok(TableInput { path: path.to_path_buf(), kind, schema, seen: None })
    }

    /// The format read.
    pub(crate) fn format(&self) -> TableFormat {
        match &self.kind {
            Kind::Parquet(_) => TableFormat::Parquet,
            Kind::ArrowFile => TableFormat::ArrowFile,
            Kind::ArrowStream | Kind::StreamArrow(_) => TableFormat::ArrowStream,
            Kind::Text(_, t, _) | Kind::StreamText(_, t, _, _) => *t,
        }
    }

    /// The field separator of a CSV or TSV input (as its header showed it).
    pub(crate) fn text_delimiter(&self) -> Option<u8> {
        match &self.kind {
            Kind::Text(_, _, d) | Kind::StreamText(_, _, d, _) => Some(*d),
            _ => None,
        }
    }

    /// How a Parquet input wrote its columns, for an output written the same way: the
    /// compression of its first column chunk, and for each column of its first row group whether
    /// its data pages stayed dictionary encoded (a writer falls back to plain pages when a
    /// column's dictionary outgrows its limit: building one again for such a column costs the
    /// output a hash of every value and gains nothing).
    pub(crate) fn parquet_style(&self) -> Option<ParquetStyle> {
        let Kind::Parquet(m) = &self.kind else { return None };
        let md = m.metadata();
        if md.num_row_groups() == 0 || md.row_group(0).num_columns() == 0 {
            return None;
        }
        let rg = md.row_group(0);
        let compression = Some(rg.column(0).compression()).filter(|&c| supported(c));
        let dictionary = rg
            .columns()
            .iter()
            .filter_map(|c| Some((c.column_path().clone(), stayed_dictionary(c)?)))
            .collect();
        Some(ParquetStyle { compression, dictionary })
    }

    /// Rows, when the file says before it is read.
    pub(crate) fn rows(&self) -> Option<u64> {
        match &self.kind {
            Kind::Parquet(m) => Some(m.metadata().file_metadata().num_rows() as u64),
            _ => None,
        }
    }

    /// Encodes every row into `out`, numbered from `first` by its place in the input (Parquet
    /// row groups decoded and handed on as `lanes` says). Returns the rows read.
    pub(crate) fn feed(
        &self,
        codec: &RowCodec,
        first: u64,
        lanes: Lanes,
        out: &mut dyn FnMut(Framed) -> Result<()>,
    ) -> Result<u64> {
        let path = &self.path;
        let rows = match &self.kind {
            Kind::Parquet(meta) => self.feed_parquet(meta, codec, first, lanes, out),
            Kind::ArrowFile => {
                let r =
                    arrow_ipc::reader::FileReader::try_new(BufReader::new(self.reopen()?), None)
                        .map_err(|e| read_error(path, e))?;
                self.feed_batches(r, codec, first, out)
            }
            Kind::ArrowStream => {
                let r =
                    arrow_ipc::reader::StreamReader::try_new(BufReader::new(self.reopen()?), None)
                        .map_err(|e| read_error(path, e))?;
                self.feed_batches(r, codec, first, out)
            }
            Kind::Text(f, _, d) => {
                let checked = QuoteCheck::new(self.reopen()?, *d);
                let r = arrow_csv::ReaderBuilder::new(self.schema.clone())
                    .with_format(f.clone())
                    .with_batch_size(BATCH_ROWS)
                    .build(BufReader::new(checked))
                    .map_err(|e| read_error(path, e))?;
                self.feed_batches(r, codec, first, out)
            }
            Kind::StreamArrow(r) => {
                let r = taken(r).ok_or_else(|| read_error(path, "read already"))?;
                self.feed_batches(r, codec, first, out)
            }
            Kind::StreamText(f, _, d, rest) => {
                let rest = taken(rest).ok_or_else(|| read_error(path, "read already"))?;
                let checked = QuoteCheck::new(rest, *d);
                let r = arrow_csv::ReaderBuilder::new(self.schema.clone())
                    .with_format(f.clone())
                    .with_batch_size(BATCH_ROWS)
                    .build(BufReader::new(checked))
                    .map_err(|e| read_error(path, e))?;
                self.feed_batches(r, codec, first, out)
            }
        }?;
        if self.seen.is_some() {
            // Written to in place while it was read: its size or modification time moved.
            let now =
                std::fs::metadata(path).map_err(|e| read_error(path, oxsort_io::os_message(&e)))?;
            self.check_unchanged(&now)?;
        }
        Ok(rows)
    }

    /// Feeds batches read one after another.
    fn feed_batches(
        &self,
        batches: impl Iterator<Item = std::result::Result<RecordBatch, ArrowError>>,
        codec: &RowCodec,
        first: u64,
        out: &mut dyn FnMut(Framed) -> Result<()>,
    ) -> Result<u64> {
        let mut row = 0u64;
        for b in batches {
            let b = b.map_err(|e| match e {
                // A read that failed says why itself (an unclosed quote, an I/O error).
                ArrowError::IoError(why, _) => read_error(&self.path, why),
                e => read_error(&self.path, e),
            })?;
            out(codec.encode(&b, first + row, row, &self.path)?)?;
            row += b.num_rows() as u64;
        }
        Ok(row)
    }

    /// Feeds a Parquet file's row groups, decoded and encoded in threads as `lanes` says.
    fn feed_parquet(
        &self,
        meta: &ArrowReaderMetadata,
        codec: &RowCodec,
        first: u64,
        Lanes { count: lanes, depth, in_turn }: Lanes,
        out: &mut dyn FnMut(Framed) -> Result<()>,
    ) -> Result<u64> {
        let md = meta.metadata();
        let groups = md.num_row_groups();
        let mut starts = Vec::with_capacity(groups + 1);
        starts.push(0u64);
        for g in 0..groups {
            starts.push(starts[g] + md.row_group(g).num_rows() as u64);
        }
        let lanes = lanes.clamp(1, groups.max(1));
        let path = &self.path;
        std::thread::scope(|s| {
            let mut rxs = Vec::with_capacity(lanes);
            for lane in 0..lanes {
                let (tx, rx) = bounded::<Result<Option<Framed>>>(depth);
                rxs.push(rx);
                let starts = &starts;
                let name = format!("table-read-{lane}");
                let spawned = std::thread::Builder::new().name(name).spawn_scoped(s, move || {
                    for g in (lane..groups).step_by(lanes) {
                        let sent = decode_group(self, meta, g, codec, first, starts[g], &mut |f| {
                            tx.send(Ok(Some(f))).map_err(|_| TableError::Read {
                                path: path.clone(),
                                why: "stopped".into(),
                            })
                        });
                        let end = sent.map(|()| None);
                        let failed = end.is_err();
                        if tx.send(end).is_err() || failed {
                            return;
                        }
                    }
                });
                // A lane that does not start leaves its row groups unread: named below.
                drop(spawned);
            }
            // In turn, the lanes' batches are taken one from each lane that has row groups
            // left: in row group order a lane whose queue was full waited on the row group
            // before its own, and the lanes together did the work of about one. The turn is
            // fixed by the number of lanes.
            // `at[lane]`: the row group the lane hands on now (past the last: it is done; in a
            // file of no row groups every lane is).
            let mut at: Vec<usize> = (0..lanes).collect();
            let mut lane = 0;
            while at.iter().any(|&g| g < groups) {
                let g = at[lane];
                if g >= groups {
                    lane = (lane + 1) % lanes;
                    continue;
                }
                match rxs[lane].recv() {
                    Ok(Ok(Some(f))) => {
                        out(f)?;
                        if in_turn {
                            lane = (lane + 1) % lanes;
                        }
                    }
                    Ok(Ok(None)) => {
                        at[lane] += lanes;
                        lane = (lane + 1) % lanes;
                    }
                    Ok(Err(e)) => return Err(e),
                    Err(_) => return Err(read_error(path, format!("row group {g} was not read"))),
                }
            }
            Ok(starts[groups])
        })
    }
}

/// The schema inferred from a CSV or TSV file, as the sort reads it: a column with no value in
/// the rows inferred from (a header alone, or nulls) is text, as other tools take it, not of
/// arrow's type Null, which has no order; a file without even a header is refused.
fn text_schema(path: &Path, schema: Schema) -> Result<SchemaRef> {
    if schema.fields().is_empty() {
        return Err(read_error(path, "no header row: an empty file has no columns to sort by"));
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            arrow_schema::DataType::Null => {
                Field::new(f.name(), arrow_schema::DataType::Utf8, true)
            }
            _ => f.as_ref().clone(),
        })
        .collect();
    Ok(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

/// `schema` with the columns `types` names of the types it gives (nullable, as inferred).
fn declared(path: &Path, schema: &Schema, types: &[ColumnType]) -> Result<SchemaRef> {
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    for t in types {
        let Some(f) = fields.iter_mut().find(|f| f.name() == &t.name) else {
            return Err(TableError::UnknownColumn {
                path: path.to_path_buf(),
                name: t.name.clone(),
                columns: schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        *f = Field::new(f.name(), t.data_type.clone(), f.is_nullable());
    }
    Ok(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

/// What `m` holds, taken (standard input is read once).
fn taken<T>(m: &Mutex<Option<T>>) -> Option<T> {
    m.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Decodes row group `g` of `input` (opened again, checked unchanged) and hands its rows on,
/// encoded; an error names the column that fails to decode.
fn decode_group(
    input: &TableInput,
    meta: &ArrowReaderMetadata,
    g: usize,
    codec: &RowCodec,
    first: u64,
    start: u64,
    out: &mut dyn FnMut(Framed) -> Result<()>,
) -> Result<()> {
    let path = &input.path;
    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(input.reopen()?, meta.clone())
        .with_row_groups(vec![g])
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| corrupt(path, meta, g, e.to_string()))?;
    let mut row = start;
    for b in reader {
        let b = b.map_err(|e| corrupt(path, meta, g, e.to_string()))?;
        out(codec.encode(&b, first + row, row, path)?)?;
        row += b.num_rows() as u64;
    }
    Ok(())
}

/// The error of row group `g` failing to decode: each column is decoded alone to find the one
/// at fault.
fn corrupt(path: &Path, meta: &ArrowReaderMetadata, g: usize, why: String) -> TableError {
    let schema = meta.parquet_schema();
    let column = (0..schema.num_columns())
        .find(|&c| {
            let Ok(f) = File::open(path) else { return false };
            let r = ParquetRecordBatchReaderBuilder::new_with_metadata(f, meta.clone())
                .with_row_groups(vec![g])
                .with_projection(ProjectionMask::leaves(schema, [c]))
                .build();
            match r {
                Err(_) => true,
                Ok(mut r) => r.any(|b| b.is_err()),
            }
        })
        .map_or_else(|| "?".to_string(), |c| schema.column(c).path().string());
    TableError::Corrupt { path: path.to_path_buf(), row_group: g, column, why }
}

/// The first difference between `schema` and the first input's, if any (field names, types and
/// nullability; metadata may differ).
pub(crate) fn schema_difference(first: &Schema, schema: &Schema) -> Option<String> {
    let (a, b) = (first.fields(), schema.fields());
    for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
        if x.name() != y.name() {
            return Some(format!("column {} is '{}', not '{}'", i + 1, y.name(), x.name()));
        }
        if x.data_type() != y.data_type() {
            return Some(format!(
                "column '{}' is of type {}, not {}",
                x.name(),
                y.data_type(),
                x.data_type()
            ));
        }
        if x.is_nullable() != y.is_nullable() {
            let word = |n: bool| if n { "nullable" } else { "non-nullable" };
            return Some(format!(
                "column '{}' is {}, not {}",
                x.name(),
                word(y.is_nullable()),
                word(x.is_nullable())
            ));
        }
    }
    if a.len() != b.len() {
        return Some(format!("it has {} columns, not {}", b.len(), a.len()));
    }
    None
}

/// Whether every data page of a column chunk is dictionary encoded, when the chunk's metadata
/// says (its page encoding statistics); `None` when it does not.
fn stayed_dictionary(c: &ColumnChunkMetaData) -> Option<bool> {
    let dictionary =
        |e: Encoding| matches!(e, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY);
    if c.dictionary_page_offset().is_none() {
        return c.page_encoding_stats().map(|_| false);
    }
    let stats = c.page_encoding_stats()?;
    Some(
        stats
            .iter()
            .filter(|s| matches!(s.page_type, PageType::DATA_PAGE | PageType::DATA_PAGE_V2))
            .all(|s| dictionary(s.encoding)),
    )
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use arrow_array::ArrayRef;

    use super::*;
    use crate::columns::SortColumn;

    /// Feeds `input`, returning the rows or the error's text.
    fn fed(input: &TableInput) -> std::result::Result<u64, String> {
        let codec = RowCodec::new(input.schema.clone(), &[SortColumn::new("k")], &input.path)
            .map_err(|e| e.to_string())?;
        input
            .feed(&codec, 0, Lanes { count: 2, depth: 2, in_turn: true }, &mut |_| Ok(()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_file_replaced_or_written_to_while_it_is_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let csv = |rows: usize| {
            let mut s = String::from("k,v\n");
            for i in 0..rows {
                s.push_str(&format!("{},v{i}\n", i * 7 % 13));
            }
            s
        };
        let path = dir.path().join("t.csv");
        std::fs::write(&path, csv(100)).unwrap();
        let input = TableInput::open(&path, None, &[]).unwrap();
        assert_eq!(fed(&input), Ok(100));
        // Replaced by another file under its name (same size even): another inode.
        let other = dir.path().join("u.csv");
        std::fs::write(&other, csv(100)).unwrap();
        std::fs::rename(&other, &path).unwrap();
        let why = fed(&input).unwrap_err();
        assert!(why.contains("t.csv: changed while it was being sorted"), "{why}");
        // Written to in place: its size moves.
        let input = TableInput::open(&path, None, &[]).unwrap();
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"5,x\n").unwrap();
        assert!(fed(&input).unwrap_err().contains("changed while it was being sorted"));
        // The Parquet lanes open it again for each row group, checked the same way.
        let pq = dir.path().join("t.parquet");
        let write = |p: &Path| {
            let batch = RecordBatch::try_from_iter([(
                "k",
                Arc::new(arrow_array::Int64Array::from_iter_values(0..1000)) as ArrayRef,
            )])
            .unwrap();
            let props = parquet::file::properties::WriterProperties::builder()
                .set_max_row_group_size(100)
                .build();
            let mut w = parquet::arrow::ArrowWriter::try_new(
                File::create(p).unwrap(),
                batch.schema(),
                Some(props),
            )
            .unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
        };
        write(&pq);
        let input = TableInput::open(&pq, None, &[]).unwrap();
        assert_eq!(fed(&input), Ok(1000));
        write(&other);
        std::fs::rename(&other, &pq).unwrap();
        assert!(fed(&input).unwrap_err().contains("t.parquet: changed while it was being sorted"));
    }
}

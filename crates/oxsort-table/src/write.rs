//! The output: sorted batches written as Parquet, Arrow IPC or CSV into the temporary of an
//! [`AtomicOutput`], put under the output's name only when whole and checked; or to standard
//! output (`-`) as they come.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use oxsort_io::{AtomicOutput, IoOptions, WriteBehind};
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::dict::Dictionaries;
use crate::error::{Result, TableError};
use crate::format::TableFormat;
use crate::parquet_out::{ParquetOut, ParquetStyle};

/// Bytes buffered before a write to standard output.
const WRITE_BUFFER_BYTES: usize = 4 << 20;

/// Bytes of each piece of an output file written behind (direct where the file system allows:
/// the writer thread neither waits for the disk nor pays the kernel's copy into the page
/// cache, which was 3.4% of the table sort's CPU, on that one thread).
const WRITE_PIECE_BYTES: usize = 1 << 20;

/// Pieces of an output file in flight at once.
const WRITE_DEPTH: usize = 4;

/// Where the table's bytes go: the output's temporary, written behind, or standard output.
enum Out {
    File(Box<WriteBehind>),
    Std(BufWriter<std::io::Stdout>),
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Out::File(w) => w.write(buf),
            Out::Std(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Out::File(w) => w.flush(),
            Out::Std(w) => w.flush(),
        }
    }
}

impl Out {
    /// Writes what is left and waits for it.
    fn finish(self) -> std::io::Result<()> {
        match self {
            Out::File(w) => w.finish().map(drop).map_err(std::io::Error::other),
            Out::Std(mut w) => w.flush(),
        }
    }
}

enum Writer {
    Parquet(Box<ParquetOut<Out>>),
    /// An IPC file holds one dictionary per field: dictionary columns are kept on growing ones.
    ArrowFile(arrow_ipc::writer::FileWriter<Out>, Box<Dictionaries>),
    ArrowStream(arrow_ipc::writer::StreamWriter<Out>),
    Text(Box<arrow_csv::Writer<Out>>),
}

/// An output table being written.
pub(crate) struct TableWriter {
    writer: Writer,
    /// The output's temporary; none for standard output, which is written as it comes.
    output: Option<AtomicOutput>,
    path: PathBuf,
    /// Rows written.
    pub(crate) rows: u64,
}

fn write_error(path: &Path, e: impl std::fmt::Display) -> TableError {
    TableError::Write { path: path.to_path_buf(), why: e.to_string() }
}

impl TableWriter {
    /// Creates the temporary of `path` and starts a table of `schema` in `format` (`style`: a
    /// Parquet output's compression and dictionary columns, the input's when it is Parquet;
    /// `row_group_bytes`: the memory a Parquet row group may take before it is closed;
    /// `threads`: Parquet columns encoded at once; `delimiter`: a CSV or TSV output's field
    /// separator).
    pub(crate) fn create(
        path: &Path,
        format: TableFormat,
        schema: &SchemaRef,
        style: Option<&ParquetStyle>,
        row_group_bytes: u64,
        threads: usize,
        delimiter: u8,
    ) -> Result<TableWriter> {
        let (output, out) = if crate::read::is_std(path) {
            (None, Out::Std(BufWriter::with_capacity(WRITE_BUFFER_BYTES, std::io::stdout())))
        } else {
            let io = IoOptions::default();
            let output = AtomicOutput::create(path, &io)?;
            let w = WriteBehind::new(output.file().clone(), WRITE_PIECE_BYTES, WRITE_DEPTH, &io)
                .map_err(|x| write_error(path, x))?;
            (Some(output), Out::File(Box::new(w)))
        };
        let e = |e: &dyn std::fmt::Display| write_error(path, e);
        let writer = match format {
            TableFormat::Parquet => {
                let compression = style.and_then(|s| s.compression);
                let mut props = WriterProperties::builder()
                    .set_compression(compression.unwrap_or(Compression::SNAPPY));
                for (column, dictionary) in style.iter().flat_map(|s| &s.dictionary) {
                    props = props.set_column_dictionary_enabled(column.clone(), *dictionary);
                }
                let props = props.build();
                let row_group_bytes = usize::try_from(row_group_bytes).unwrap_or(usize::MAX);
                let w = ParquetOut::new(out, schema.clone(), props, row_group_bytes, threads);
                Writer::Parquet(Box::new(w.map_err(|x| e(&x))?))
            }
            TableFormat::ArrowFile => {
                let options = arrow_ipc::writer::IpcWriteOptions::default()
                    .with_dictionary_handling(arrow_ipc::writer::DictionaryHandling::Delta);
                let w = arrow_ipc::writer::FileWriter::try_new_with_options(out, schema, options);
                Writer::ArrowFile(w.map_err(|x| e(&x))?, Box::default())
            }
            TableFormat::ArrowStream => Writer::ArrowStream(
                arrow_ipc::writer::StreamWriter::try_new(out, schema).map_err(|x| e(&x))?,
            ),
            TableFormat::Csv | TableFormat::Tsv => {
                let mut w = arrow_csv::WriterBuilder::new()
                    .with_header(true)
                    .with_delimiter(delimiter)
                    .build(out);
                // The header, even when no row follows.
                w.write(&RecordBatch::new_empty(schema.clone())).map_err(|x| e(&x))?;
                Writer::Text(Box::new(w))
            }
        };
        Ok(TableWriter { writer, output, path: path.to_path_buf(), rows: 0 })
    }

    /// Writes one batch.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let path = &self.path;
        match &mut self.writer {
            Writer::Parquet(w) => w.write(batch).map_err(|e| write_error(path, e))?,
            Writer::ArrowFile(w, dicts) => {
                let batch = dicts.unify(batch).map_err(|e| write_error(path, e))?;
                w.write(&batch).map_err(|e| write_error(path, e))?
            }
            Writer::ArrowStream(w) => w.write(batch).map_err(|e| write_error(path, e))?,
            Writer::Text(w) => w.write(batch).map_err(|e| write_error(path, e))?,
        }
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// Ends the table and flushes it, leaving it under its temporary name (none for
    /// standard output).
    pub(crate) fn finish(self) -> Result<Option<AtomicOutput>> {
        let path = &self.path;
        let e = |x: &dyn std::fmt::Display| write_error(path, x);
        let out = match self.writer {
            Writer::Parquet(w) => w.finish().map_err(|x| e(&x))?,
            Writer::ArrowFile(w, _) => w.into_inner().map_err(|x| e(&x))?,
            Writer::ArrowStream(w) => w.into_inner().map_err(|x| e(&x))?,
            Writer::Text(w) => w.into_inner(),
        };
        out.finish().map_err(|x| e(&x))?;
        Ok(self.output)
    }
}

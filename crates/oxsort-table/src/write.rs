//! The output: sorted batches written as Parquet, Arrow IPC or CSV into the temporary of an
//! [`AtomicOutput`], put under the output's name only when whole and checked; or to standard
//! output (`-`) as they come.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use oxsort_io::{AtomicOutput, DirectFile, IoOptions};
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::error::{Result, TableError};
use crate::format::TableFormat;
use crate::parquet_out::ParquetOut;

/// Bytes buffered before a write to the output file.
const WRITE_BUFFER_BYTES: usize = 4 << 20;

/// Sequential writes at a position of a [`DirectFile`] opened buffered.
struct At {
    file: Arc<DirectFile>,
    pos: u64,
}

impl Write for At {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write_at(buf, self.pos).map_err(std::io::Error::other)?;
        self.pos += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Where the table's bytes go: the output's temporary, or standard output.
type Out = BufWriter<Box<dyn Write + Send>>;

enum Writer {
    Parquet(Box<ParquetOut<Out>>),
    ArrowFile(arrow_ipc::writer::FileWriter<Out>),
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
    /// Creates the temporary of `path` and starts a table of `schema` in `format`
    /// (`compression`: a Parquet output's, by default the input's; `row_group_bytes`: the
    /// memory a Parquet row group may take before it is closed; `threads`: Parquet columns
    /// encoded at once).
    pub(crate) fn create(
        path: &Path,
        format: TableFormat,
        schema: &SchemaRef,
        compression: Option<Compression>,
        row_group_bytes: u64,
        threads: usize,
    ) -> Result<TableWriter> {
        let (output, sink): (_, Box<dyn Write + Send>) = if crate::read::is_std(path) {
            (None, Box::new(std::io::stdout()))
        } else {
            let io = IoOptions { buffered: true, ..IoOptions::default() };
            let output = AtomicOutput::create(path, &io)?;
            let at = At { file: output.file().clone(), pos: 0 };
            (Some(output), Box::new(at))
        };
        let out = BufWriter::with_capacity(WRITE_BUFFER_BYTES, sink);
        let e = |e: &dyn std::fmt::Display| write_error(path, e);
        let writer = match format {
            TableFormat::Parquet => {
                let props = WriterProperties::builder()
                    .set_compression(compression.unwrap_or(Compression::SNAPPY))
                    .build();
                let row_group_bytes = usize::try_from(row_group_bytes).unwrap_or(usize::MAX);
                let w = ParquetOut::new(out, schema.clone(), props, row_group_bytes, threads);
                Writer::Parquet(Box::new(w.map_err(|x| e(&x))?))
            }
            TableFormat::ArrowFile => Writer::ArrowFile(
                arrow_ipc::writer::FileWriter::try_new(out, schema).map_err(|x| e(&x))?,
            ),
            TableFormat::ArrowStream => Writer::ArrowStream(
                arrow_ipc::writer::StreamWriter::try_new(out, schema).map_err(|x| e(&x))?,
            ),
            TableFormat::Csv | TableFormat::Tsv => {
                let mut w = arrow_csv::WriterBuilder::new()
                    .with_header(true)
                    .with_delimiter(format.delimiter())
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
            Writer::ArrowFile(w) => w.write(batch).map_err(|e| write_error(path, e))?,
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
        let mut out = match self.writer {
            Writer::Parquet(w) => w.finish().map_err(|x| e(&x))?,
            Writer::ArrowFile(w) => w.into_inner().map_err(|x| e(&x))?,
            Writer::ArrowStream(w) => w.into_inner().map_err(|x| e(&x))?,
            Writer::Text(w) => w.into_inner(),
        };
        out.flush().map_err(|x| e(&x))?;
        drop(out);
        Ok(self.output)
    }
}

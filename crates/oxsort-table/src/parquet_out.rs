//! [`ParquetOut`]: a Parquet file written with its columns encoded on several threads.
//!
//! `ArrowWriter` encodes (and compresses) a row group's columns one after another on the
//! thread that calls it; the sorted rows' writer would then be the slowest stage of the merge.
//! Here each batch's leaf columns are split between `threads` groups of about equal bytes,
//! each encoded by its own column writers on its own thread (parquet's `ArrowColumnWriter`,
//! made by the `ArrowRowGroupWriterFactory` of an `ArrowWriter`, so the file carries the same
//! Arrow schema metadata as `ArrowWriter` writes). A row group is closed when its column
//! writers' memory reaches the given size, or it has the properties' most rows.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnWriter, ArrowLeafColumn, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::errors::Result;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

/// A Parquet file being written, its columns encoded in parallel.
pub(crate) struct ParquetOut<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The column writers of the row group in progress, one per leaf column.
    writers: Vec<ArrowColumnWriter>,
    /// Rows in the row group in progress.
    rows: usize,
    /// The row group is closed when its writers' memory reaches this.
    row_group_bytes: usize,
    /// ... or when it holds this many rows.
    row_group_rows: usize,
    /// Groups of columns encoded at once.
    threads: usize,
}

/// One leaf column of a batch for its writer, and its weight (bytes) for the split.
type Job<'a> = (usize, &'a mut ArrowColumnWriter, ArrowLeafColumn);

impl<W: Write + Send> ParquetOut<W> {
    /// Starts a Parquet file of `schema` on `out`.
    pub(crate) fn new(
        out: W,
        schema: SchemaRef,
        props: WriterProperties,
        row_group_bytes: usize,
        threads: usize,
    ) -> Result<Self> {
        let row_group_rows = props.max_row_group_size();
        let (file, factory) =
            ArrowWriter::try_new(out, schema.clone(), Some(props))?.into_serialized_writer()?;
        let writers = factory.create_column_writers(0)?;
        Ok(ParquetOut {
            file,
            factory,
            schema,
            writers,
            rows: 0,
            row_group_bytes,
            row_group_rows,
            threads: threads.max(1),
        })
    }

    /// Encodes `batch` into the row group in progress, closing it when it is full.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut jobs: Vec<Job<'_>> = Vec::with_capacity(self.writers.len());
        let mut writers = self.writers.iter_mut();
        for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
            let leaves = compute_leaves(field, column)?;
            let weight = column.get_array_memory_size() / leaves.len().max(1);
            for leaf in leaves {
                let w = writers.next().expect("one writer per leaf column");
                jobs.push((weight, w, leaf));
            }
        }
        encode(jobs, self.threads)?;
        self.rows += batch.num_rows();
        let memory: usize = self.writers.iter().map(ArrowColumnWriter::memory_size).sum();
        if memory >= self.row_group_bytes || self.rows >= self.row_group_rows {
            self.flush()?;
        }
        Ok(())
    }

    /// Closes the row group in progress, if it has rows, and starts the next.
    fn flush(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let next = self.factory.create_column_writers(self.file.flushed_row_groups().len() + 1)?;
        let writers = std::mem::replace(&mut self.writers, next);
        let mut group = self.file.next_row_group()?;
        for w in writers {
            w.close()?.append_to_row_group(&mut group)?;
        }
        group.close()?;
        self.rows = 0;
        Ok(())
    }

    /// Closes the last row group and writes the footer; returns the output.
    pub(crate) fn finish(mut self) -> Result<W> {
        self.flush()?;
        self.file.into_inner()
    }
}

/// Encodes `jobs` in `threads` groups of about equal weight, one on this thread.
fn encode(mut jobs: Vec<Job<'_>>, threads: usize) -> Result<()> {
    if threads == 1 || jobs.len() < 2 {
        return jobs.iter_mut().try_for_each(|(_, w, leaf)| w.write(leaf));
    }
    // Heaviest first, each to the lightest group so far.
    jobs.sort_by_key(|j| std::cmp::Reverse(j.0));
    let mut groups: Vec<(usize, Vec<Job<'_>>)> = (0..threads).map(|_| (0, Vec::new())).collect();
    for job in jobs {
        let g = groups.iter_mut().min_by_key(|g| g.0).expect("threads > 1");
        g.0 += job.0;
        g.1.push(job);
    }
    let run = |group: Vec<Job<'_>>| -> Result<()> {
        group.into_iter().try_for_each(|(_, w, leaf)| w.write(&leaf))
    };
    std::thread::scope(|s| {
        let mut groups = groups.into_iter().map(|g| g.1).filter(|g| !g.is_empty());
        let here = groups.next().unwrap_or_default();
        let spawned: Vec<_> = groups
            .map(|g| {
                std::thread::Builder::new()
                    .name("table-encode".into())
                    .spawn_scoped(s, move || run(g))
                    .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))
            })
            .collect();
        let mut result = run(here);
        for h in spawned {
            let r = h.and_then(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            result = result.and(r);
        }
        result
    })
}

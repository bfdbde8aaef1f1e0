//! [`ParquetOut`]: a Parquet file written with its columns encoded on several threads.
//!
//! `ArrowWriter` encodes (and compresses) a row group's columns one after another on the
//! thread that calls it; the sorted rows' writer would then be the slowest stage of the merge.
//! Here each batch's leaf columns are split between `threads` groups of about equal bytes,
//! each encoded by its own column writers on its own thread (parquet's `ArrowColumnWriter`,
//! made by the `ArrowRowGroupWriterFactory` of an `ArrowWriter`, so the file carries the same
//! Arrow schema metadata as `ArrowWriter` writes). A row group is closed when its column
//! writers' memory reaches the given size, or it has the properties' most rows.
//!
//! ```text
//!  write(batch) ── group 0 ──────────────── encoded here ───────────┐
//!       │ ─ group 1: (writer, leaf) owned ─► encoder thread 1 ─ back ┤ all back: next batch
//!       └ ─ group k ... ─────────────────► encoder thread k ─ back ┘
//! ```
//!
//! The encoder threads live as long as the file: a column writer and its leaf go to one and
//! come back, so no thread is started per batch (thousands of batches a table).

use std::io::Write;
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use crossbeam_channel::{bounded, Receiver, Sender};
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnWriter, ArrowLeafColumn, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::errors::{ParquetError, Result};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

/// A Parquet file being written, its columns encoded in parallel.
pub(crate) struct ParquetOut<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The column writers of the row group in progress, one per leaf column (each away at an
    /// encoder thread only while `write` runs).
    writers: Vec<Option<ArrowColumnWriter>>,
    /// Rows in the row group in progress.
    rows: usize,
    /// The row group is closed when its writers' memory reaches this.
    row_group_bytes: usize,
    /// ... or when it holds this many rows.
    row_group_rows: usize,
    /// The encoder threads beside the calling one.
    encoders: Encoders,
}

/// One leaf column of a batch: its index, its writer and its values.
type Job = (usize, ArrowColumnWriter, ArrowLeafColumn);

/// What an encoder thread gives back: each writer, and how its write went.
type Done = Vec<(usize, ArrowColumnWriter, Result<()>)>;

/// Threads that encode groups of columns handed to them, for as long as the file is written.
struct Encoders {
    jobs: Vec<Sender<Vec<Job>>>,
    done: Receiver<Done>,
    handles: Vec<JoinHandle<()>>,
}

impl Encoders {
    /// `n` encoder threads.
    fn start(n: usize) -> Result<Encoders> {
        let (done_tx, done) = bounded::<Done>(n.max(1));
        let mut e = Encoders { jobs: Vec::new(), done, handles: Vec::new() };
        for _ in 0..n {
            let (tx, rx) = bounded::<Vec<Job>>(1);
            let done_tx = done_tx.clone();
            let h = std::thread::Builder::new()
                .name("table-encode".into())
                .spawn(move || {
                    for group in rx {
                        let out = group
                            .into_iter()
                            .map(|(i, mut w, leaf)| {
                                let r = w.write(&leaf);
                                (i, w, r)
                            })
                            .collect();
                        if done_tx.send(out).is_err() {
                            break;
                        }
                    }
                })
                .map_err(|e| ParquetError::External(Box::new(e)))?;
            e.jobs.push(tx);
            e.handles.push(h);
        }
        Ok(e)
    }
}

impl Drop for Encoders {
    fn drop(&mut self) {
        // Closing the job channels ends the threads.
        self.jobs.clear();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

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
        let writers = factory.create_column_writers(0)?.into_iter().map(Some).collect();
        let encoders = Encoders::start(threads.max(1) - 1)?;
        Ok(ParquetOut {
            file,
            factory,
            schema,
            writers,
            rows: 0,
            row_group_bytes,
            row_group_rows,
            encoders,
        })
    }

    /// Encodes `batch` into the row group in progress, closing it when it is full.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut jobs: Vec<(usize, Job)> = Vec::with_capacity(self.writers.len());
        let mut next = 0;
        for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
            let leaves = compute_leaves(field, column)?;
            let weight = column.get_array_memory_size() / leaves.len().max(1);
            for leaf in leaves {
                let w = self.writers.get_mut(next).and_then(Option::take);
                let w = w.ok_or_else(|| general("a column writer is missing"))?;
                jobs.push((weight, (next, w, leaf)));
                next += 1;
            }
        }
        let result = self.encode(jobs);
        if result.is_ok() {
            self.rows += batch.num_rows();
            let memory: usize =
                self.writers.iter().flatten().map(ArrowColumnWriter::memory_size).sum();
            if memory >= self.row_group_bytes || self.rows >= self.row_group_rows {
                return self.flush();
            }
        }
        result
    }

    /// Encodes `jobs` (with their weights) in groups of about equal weight, one on this thread
    /// and one on each encoder thread; every writer comes back to `writers`.
    fn encode(&mut self, mut jobs: Vec<(usize, Job)>) -> Result<()> {
        let threads = self.encoders.jobs.len() + 1;
        // Heaviest first, each to the lightest group so far.
        jobs.sort_by_key(|j| std::cmp::Reverse(j.0));
        let mut groups: Vec<(usize, Vec<Job>)> = (0..threads).map(|_| (0, Vec::new())).collect();
        for (weight, job) in jobs {
            let g = groups.iter_mut().min_by_key(|g| g.0).expect("one group at least");
            g.0 += weight;
            g.1.push(job);
        }
        let mut groups = groups.into_iter().map(|g| g.1);
        let here = groups.next().unwrap_or_default();
        let mut away = 0;
        let mut result = Ok(());
        for (group, tx) in groups.zip(&self.encoders.jobs) {
            if group.is_empty() {
                continue;
            }
            match tx.send(group) {
                Ok(()) => away += 1,
                Err(back) => {
                    // Unwritten: the writers come back with the thread's error.
                    let stopped = || Err(general("an encoder thread stopped"));
                    result = result.and(put_back(
                        &mut self.writers,
                        back.0.into_iter().map(|(i, w, _)| (i, w, stopped())),
                    ));
                }
            }
        }
        let mine: Done = here
            .into_iter()
            .map(|(i, mut w, leaf)| {
                let r = w.write(&leaf);
                (i, w, r)
            })
            .collect();
        result = result.and(put_back(&mut self.writers, mine));
        for _ in 0..away {
            let back = self.encoders.done.recv().map_err(|_| general("an encoder thread stopped"));
            result = result.and(back.and_then(|b| put_back(&mut self.writers, b)));
        }
        result
    }

    /// Closes the row group in progress, if it has rows, and starts the next.
    fn flush(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let next = self.factory.create_column_writers(self.file.flushed_row_groups().len() + 1)?;
        let writers = std::mem::replace(&mut self.writers, next.into_iter().map(Some).collect());
        let mut group = self.file.next_row_group()?;
        for w in writers {
            let w = w.ok_or_else(|| general("a column writer is missing"))?;
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

/// Puts writers back in their places in `writers`; the first error among their writes.
fn put_back(
    writers: &mut [Option<ArrowColumnWriter>],
    done: impl IntoIterator<Item = (usize, ArrowColumnWriter, Result<()>)>,
) -> Result<()> {
    let mut result = Ok(());
    for (i, w, r) in done {
        writers[i] = Some(w);
        result = result.and(r);
    }
    result
}

/// A writer error of our own.
fn general(why: &str) -> ParquetError {
    ParquetError::General(why.into())
}

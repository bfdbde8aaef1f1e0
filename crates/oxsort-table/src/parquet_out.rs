//! [`ParquetOut`]: a Parquet file written with its columns encoded on several threads.
//!
//! `ArrowWriter` encodes (and compresses) a row group's columns one after another on the
//! thread that calls it; the sorted rows' writer would then be the slowest stage of the merge.
//! Here the leaf columns are dealt to `threads` encoder threads in groups of about equal bytes
//! (from the first batch), each owning its columns' writers (parquet's `ArrowColumnWriter`,
//! made by the `ArrowRowGroupWriterFactory` of an `ArrowWriter`, so the file carries the same
//! Arrow schema metadata as `ArrowWriter` writes). A row group is closed when its column
//! writers' memory reaches the given size, or it has the properties' most rows.
//!
//! ```text
//!  write(batch) ─ leaves of group 0 ─► [queue] ─► encoder 0 (its columns' writers) ─┐
//!       │       ─ leaves of group k ─► [queue] ─► encoder k ─────────────────────────┤
//!       │                                       (each reports its writers' memory)   │
//!  flush: Close to every encoder ─► each closes its writers, sends the chunks back ◄─┘
//!         ─► chunks appended in column order, the row group closed; new writers sent
//! ```
//!
//! The encoders run ahead of each other between row groups: a batch waits only for room in
//! the queue of each encoder it has columns for, never for another column's encoding.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use crossbeam_channel::{bounded, Receiver, Sender};
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn,
    ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::errors::{ParquetError, Result};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;

/// Batches queued for each encoder thread: one being encoded while the next waits.
const ENCODER_QUEUE: usize = 2;

/// What an encoder thread is told.
enum Order {
    /// A batch's leaves of this thread's columns, by leaf index.
    Leaves(Vec<(usize, ArrowLeafColumn)>),
    /// Close the row group's writers and send their chunks back; then write with `next`.
    Close { next: Vec<(usize, ArrowColumnWriter)> },
}

/// An encoder thread's chunks of a closed row group, by leaf index (or its first error).
type Closed = Result<Vec<(usize, ArrowColumnChunk)>>;

/// One encoder thread.
struct Encoder {
    orders: Sender<Order>,
    closed: Receiver<Closed>,
    /// Its writers' memory after the last batch it encoded.
    memory: Arc<AtomicUsize>,
    handle: Option<JoinHandle<()>>,
}

impl Encoder {
    /// A thread owning `writers` (leaf index, writer).
    fn start(writers: Vec<(usize, ArrowColumnWriter)>) -> Result<Encoder> {
        let (orders, rx) = bounded::<Order>(ENCODER_QUEUE);
        let (done, closed) = bounded::<Closed>(1);
        let memory = Arc::new(AtomicUsize::new(0));
        let mem = memory.clone();
        let handle = std::thread::Builder::new()
            .name("table-encode".into())
            .spawn(move || encode(writers, &rx, &done, &mem))
            .map_err(|e| ParquetError::External(Box::new(e)))?;
        Ok(Encoder { orders, closed, memory, handle: Some(handle) })
    }
}

/// An encoder thread's work: writes the leaves it is sent with its writers, keeps the first
/// error (later leaves are dropped) and gives it at the next close.
fn encode(
    mut writers: Vec<(usize, ArrowColumnWriter)>,
    orders: &Receiver<Order>,
    done: &Sender<Closed>,
    memory: &AtomicUsize,
) {
    let mut error: Option<ParquetError> = None;
    for order in orders {
        match order {
            Order::Leaves(leaves) => {
                if error.is_some() {
                    continue;
                }
                for (i, leaf) in leaves {
                    let w = writers.iter_mut().find(|(j, _)| *j == i).map(|(_, w)| w);
                    let r = match w {
                        Some(w) => w.write(&leaf),
                        None => Err(general("a leaf for a column this encoder does not own")),
                    };
                    if let Err(e) = r {
                        error = Some(e);
                        break;
                    }
                }
                memory.store(writers.iter().map(|(_, w)| w.memory_size()).sum(), Relaxed);
            }
            Order::Close { next } => {
                let old = std::mem::replace(&mut writers, next);
                let chunks = match error.take() {
                    Some(e) => Err(e),
                    None => old.into_iter().map(|(i, w)| w.close().map(|c| (i, c))).collect(),
                };
                memory.store(0, Relaxed);
                if done.send(chunks).is_err() {
                    return;
                }
            }
        }
    }
}

/// A Parquet file being written, its columns encoded in parallel.
pub(crate) struct ParquetOut<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// Rows in the row group in progress.
    rows: usize,
    /// The row group is closed when its column writers' memory reaches this.
    row_group_bytes: usize,
    /// ... or when it holds this many rows.
    row_group_rows: usize,
    /// Encoder threads to start (at the first batch, whose sizes deal the columns).
    threads: usize,
    /// The encoder threads, and which of them encodes each leaf column.
    encoders: Vec<Encoder>,
    owner: Vec<usize>,
    /// The first row group's writers, until the encoders take them.
    first: Option<Vec<ArrowColumnWriter>>,
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
        let first = Some(factory.create_column_writers(0)?);
        Ok(ParquetOut {
            file,
            factory,
            schema,
            rows: 0,
            row_group_bytes,
            row_group_rows,
            threads: threads.max(1),
            encoders: Vec::new(),
            owner: Vec::new(),
            first,
        })
    }

    /// Hands `batch`'s columns to their encoders, closing the row group when it is full.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut leaves: Vec<(usize, ArrowLeafColumn)> = Vec::new();
        let mut weights = Vec::new();
        for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
            let column_leaves = compute_leaves(field, column)?;
            let weight = column.get_array_memory_size() / column_leaves.len().max(1);
            for leaf in column_leaves {
                weights.push(weight);
                leaves.push((leaves.len(), leaf));
            }
        }
        if let Some(writers) = self.first.take() {
            self.start_encoders(writers, &weights)?;
        }
        let mut dealt: Vec<Vec<(usize, ArrowLeafColumn)>> =
            (0..self.encoders.len()).map(|_| Vec::new()).collect();
        for (i, leaf) in leaves {
            dealt[self.owner[i]].push((i, leaf));
        }
        for (e, leaves) in self.encoders.iter().zip(dealt) {
            if !leaves.is_empty() {
                e.orders
                    .send(Order::Leaves(leaves))
                    .map_err(|_| general("an encoder thread stopped"))?;
            }
        }
        self.rows += batch.num_rows();
        let memory: usize = self.encoders.iter().map(|e| e.memory.load(Relaxed)).sum();
        if memory >= self.row_group_bytes || self.rows >= self.row_group_rows {
            self.flush()?;
        }
        Ok(())
    }

    /// Deals the leaf columns to encoder threads in groups of about equal `weights`, heaviest
    /// first, each to the lightest group so far, and starts them with their writers.
    fn start_encoders(&mut self, writers: Vec<ArrowColumnWriter>, weights: &[usize]) -> Result<()> {
        let threads = self.threads.min(writers.len()).max(1);
        let mut order: Vec<usize> = (0..writers.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(weights.get(i).copied().unwrap_or(0)));
        let mut load = vec![0usize; threads];
        self.owner = vec![0; writers.len()];
        for i in order {
            let g = (0..threads).min_by_key(|&g| load[g]).expect("one thread at least");
            load[g] += weights.get(i).copied().unwrap_or(0);
            self.owner[i] = g;
        }
        let mut groups: Vec<Vec<(usize, ArrowColumnWriter)>> =
            (0..threads).map(|_| Vec::new()).collect();
        for (i, w) in writers.into_iter().enumerate() {
            groups[self.owner[i]].push((i, w));
        }
        for g in groups {
            self.encoders.push(Encoder::start(g)?);
        }
        Ok(())
    }

    /// Closes the row group in progress, if it has rows, and starts the next.
    fn flush(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let next = self.factory.create_column_writers(self.file.flushed_row_groups().len() + 1)?;
        let mut dealt: Vec<Vec<(usize, ArrowColumnWriter)>> =
            (0..self.encoders.len()).map(|_| Vec::new()).collect();
        for (i, w) in next.into_iter().enumerate() {
            dealt[self.owner[i]].push((i, w));
        }
        for (e, next) in self.encoders.iter().zip(dealt) {
            e.orders
                .send(Order::Close { next })
                .map_err(|_| general("an encoder thread stopped"))?;
        }
        let mut chunks: Vec<(usize, ArrowColumnChunk)> = Vec::new();
        let mut result = Ok(());
        for e in &self.encoders {
            match e.closed.recv() {
                Ok(Ok(c)) => chunks.extend(c),
                Ok(Err(x)) => result = result.and(Err(x)),
                Err(_) => result = result.and(Err(general("an encoder thread stopped"))),
            }
        }
        result?;
        chunks.sort_by_key(|c| c.0);
        let mut group = self.file.next_row_group()?;
        for (_, c) in chunks {
            c.append_to_row_group(&mut group)?;
        }
        group.close()?;
        self.rows = 0;
        Ok(())
    }

    /// Closes the last row group and writes the footer; returns the output.
    pub(crate) fn finish(mut self) -> Result<W> {
        self.flush()?;
        let ParquetOut { file, encoders, .. } = self;
        // The encoder threads end (see `Encoder`'s drop) before the footer is written.
        drop(encoders);
        file.into_inner()
    }
}

impl Drop for Encoder {
    /// Ends the thread: its queue closes, its loop ends.
    fn drop(&mut self) {
        let (dead, _) = bounded::<Order>(0);
        drop(std::mem::replace(&mut self.orders, dead));
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A writer error of our own.
fn general(why: &str) -> ParquetError {
    ParquetError::General(why.into())
}

/// How a Parquet output writes its columns, taken from a Parquet input (see
/// `crate::read::TableInput::parquet_style`).
#[derive(Debug)]
pub(crate) struct ParquetStyle {
    /// The compression (default Snappy).
    pub(crate) compression: Option<Compression>,
    /// Columns with their dictionary encoding on or off; columns not named keep the writer's
    /// default (on).
    pub(crate) dictionary: Vec<(ColumnPath, bool)>,
}

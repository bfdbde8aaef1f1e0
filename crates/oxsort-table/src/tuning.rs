//! The table sort's tuning constants, each with why it has its value.

/// Rows decoded at once from the sorted stream into one record batch, and the batch size of
/// the readers: large enough that per-batch costs (a `convert_rows` call, a writer's column
/// chunk bookkeeping) vanish, small enough that a batch of wide rows stays a few MiB.
pub const BATCH_ROWS: usize = 16 * 1024;

/// A Parquet output's row group is closed once its buffered, encoded size reaches this:
/// `ArrowWriter` holds a whole row group in memory, so this bounds the writer's share of the
/// memory the table sort keeps beside the engine's budget.
pub const ROW_GROUP_BYTES: usize = 32 << 20;

/// The memory a table sort keeps outside the engine's budget (decoding readers, the batches
/// in flight, the writer's row group): subtracted from the budget given, so the process stays
/// within it. Counted as: `ROW_GROUP_BYTES` for the writer, the Parquet readers' row groups
/// in flight, the channels' buffers.
pub const TABLE_RESERVE_BYTES: u64 = 96 << 20;

/// The smallest engine budget left after [`TABLE_RESERVE_BYTES`] (a tiny budget given for a
/// test still gives the engine room to work; the engine refuses what is too small for it).
pub const MIN_ENGINE_BYTES: u64 = 8 << 20;

/// Encoded buffers queued between each reader lane and the feeder, and between the engine's
/// output and the decoder: two keep both sides busy while one is handed over.
pub const QUEUE_DEPTH: usize = 2;

/// Rows whose types CSV inference looks at (a later row that does not fit the types found
/// is an error naming its line).
pub const CSV_INFER_ROWS: usize = 100_000;

/// Bytes of the pipe that carries encoded rows into the engine.
pub const PIPE_BYTES: usize = 1 << 20;

//! The table sort's tuning constants, each with why it has its value.

/// Rows decoded at once from the sorted stream into one record batch, and the batch size of
/// the readers: large enough that per-batch costs (a `convert_rows` call, a writer's column
/// chunk bookkeeping) vanish, small enough that a batch's encoded rows (about 1 MiB for rows
/// of 130 bytes) stay below the allocator's big-block size and reuse the heap's memory
/// instead of faulting in fresh pages (16 Ki rows: 3% of the CPU went to zeroing pages).
pub const BATCH_ROWS: usize = 8 * 1024;

/// The most rows decoded from the sorted stream into one batch: the decoder makes one batch of
/// each piece of the engine's output ([`OUTPUT_PIECE_BYTES`], some thousands of rows), cut only
/// past this many (tiny rows). Batches of [`BATCH_ROWS`] and a remainder per piece gave the
/// writer twice the batches, each with its per-batch costs (levels, page bookkeeping, a hand-off
/// to the encoder threads).
pub const DECODED_BATCH_MAX_ROWS: usize = 4 * BATCH_ROWS;

/// The table sort's share of the memory budget is 1/this of it (at most [`TABLE_SHARE_MAX`]):
/// the readers' batches and encoded rows in flight, the sorted rows being decoded, and the
/// Parquet writer's row group. The engine gets the rest, so the process stays within the
/// budget. Measured on the bench's table (6 columns, 2 threads): the readers and the decoder
/// hold about 12 MiB beside the writer's row group, which takes half the share.
pub const TABLE_SHARE_DIVISOR: u64 = 4;

/// The largest table share: past it, a bigger row group or more rows in flight gain nothing
/// measurable and the engine's runs would be smaller for it.
pub const TABLE_SHARE_MAX: u64 = 96 << 20;

/// A Parquet output's row group is closed once the writer's memory for it (encoded pages,
/// dictionaries, buffers: `ArrowWriter::memory_size`) reaches 1/this of the table share:
/// `ArrowWriter` holds a whole row group until it is closed.
pub const ROW_GROUP_SHARE_DIVISOR: u64 = 2;

/// The smallest row group memory (a tiny budget still writes row groups of some thousands of
/// rows, not one per batch).
pub const MIN_ROW_GROUP_BYTES: u64 = 2 << 20;

/// The smallest engine budget left beside the table share (a tiny budget given for a test
/// still gives the engine room to work; the engine refuses what is too small for it).
pub const MIN_ENGINE_BYTES: u64 = 8 << 20;

/// The engine's sorted output is handed to the decoder in pieces of at most this many bytes
/// ([`QUEUE_DEPTH`] of them queued): small enough that the pieces in flight are a few MiB
/// whatever the engine's write size, large enough that a piece is some thousands of rows,
/// one batch each; below the allocator's big-block size, so pieces reuse the heap's memory.
pub const OUTPUT_PIECE_BYTES: usize = 1 << 20;

/// Buffers queued between the engine's output and the decoder, and the fewest queued after a
/// reader lane or before the writer (see [`QUEUE_DEPTH_MAX`]): two keep both sides busy while
/// one is handed over.
pub const QUEUE_DEPTH: usize = 2;

/// The deepest queue after a reader lane or before the writer, when the table share has room:
/// the stages' work comes in bursts (a row group read, a row group written), and deeper
/// queues let one stage go on while another has a burst. 2e7-row Parquet at `--memory 512M`
/// (share 96 MiB), 4 pairs alternated with the cache dropped: median 15.78 s at depth 2,
/// 14.93 s at 8 (bench/runs/2026-11-26/table-queue-ab.csv); 16 showed nothing more in two
/// runs, and deepening the engine's output queue too nothing either.
pub const QUEUE_DEPTH_MAX: usize = 8;

/// Bytes a queued item is counted for when sizing the deeper queues: an encoded batch (8 Ki
/// rows of about 130 bytes) or a decoded batch is about 1 MiB.
pub const QUEUE_SLOT_BYTES: u64 = 1 << 20;

/// Queues sized from the share: the reader lanes' (two) and the writer's, with room to spare
/// for the rest of the share's users (the row group takes half of it).
pub const QUEUES_SIZED: u64 = 6;

/// Rows whose types CSV inference looks at (a later row that does not fit the types found
/// is an error naming its line).
pub const CSV_INFER_ROWS: usize = 100_000;

/// Bytes of a CSV file's first line looked at for its field separator (a header longer than
/// this is told by its first bytes).
pub const HEADER_SNIFF_BYTES: u64 = 1 << 20;

/// Bytes of the pipe that carries encoded rows into the engine.
pub const PIPE_BYTES: usize = 1 << 20;

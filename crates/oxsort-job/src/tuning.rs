//! The job layer's constants: buffers, pipes and the memory shares of a JOINKEYS job.

/// Buffer of each join input and of the joined output: large sequential transfers.
pub const JOIN_IO_BUFFER: usize = 4 << 20;

/// Bytes the join reads of a side at a time: small enough that the records it copied are
/// still in the core's cache (L2) when the join compares and builds from them, large enough
/// that a read is rare next to the records it brings.
pub const JOIN_SIDE_READ: usize = 256 << 10;

/// Bytes a pipe between two stages holds (Linux's default is 64 KiB; 1 MiB is what an
/// unprivileged process may ask for by default): fewer switches between writer and reader.
pub const PIPE_BYTES: usize = 1 << 20;

/// A main task that streams (a copy) keeps this share of the budget (1/N), at least
/// [`MAIN_STREAM_MIN`]: its loads are written one after the other, so a small share costs it
/// nothing, and the sides' sorts, which must hold their records, get the rest.
pub const MAIN_STREAM_SHARE: u64 = 16;

/// The least memory of a streaming main task.
pub const MAIN_STREAM_MIN: u64 = 128 << 20;

/// Bytes of a block of the direct join output, at least: each block holds a whole number of
/// records and of direct-I/O pages, so every write is aligned and every block's records are
/// summed on their own.
pub const DIRECT_BLOCK_BYTES: usize = 8 << 20;

/// Writes in flight behind the join when it writes the output itself: as many as
/// 1/[`DIRECT_WRITE_SHARE`] of the budget holds, from [`DIRECT_WRITE_DEPTH_MIN`] to
/// [`DIRECT_WRITE_DEPTH_MAX`]. The join of two 2 GB files, fresh memory, 4 alternated rounds:
/// 6.58 s with 4 in flight, 6.23 s with 16 (`bench/runs/2026-11-30c/ab_write_depth.csv`); the
/// disk reads the sides' runs while it writes, and one stream of writes wants many in flight.
pub const DIRECT_WRITE_DEPTH_MAX: usize = 16;

/// The least writes in flight behind the join's own output.
pub const DIRECT_WRITE_DEPTH_MIN: usize = 4;

/// The share of the budget (1/N) the join's own output may hold in writes in flight.
pub const DIRECT_WRITE_SHARE: u64 = 32;

/// A JOINKEYS side is cut to the bytes the join reads when they are at most this share of its
/// records (numerator, denominator): the cut copies each record once as it is read, which pays
/// back when the sort then holds, spills and streams a quarter fewer bytes or more.
pub const CUT_AT_MOST: (u64, u64) = (3, 4);

//! Tuning constants of oxsort-gensort, in one place.
//!
//! Every size here is a whole number of 100-byte records *and* a multiple of 4096 bytes, so a
//! task's file offset is always page aligned (ready for direct I/O) and no record straddles two
//! tasks.

use crate::RECORD_LEN;

/// Records per generation or validation task: 163 840 records = 16 384 000 bytes (~15.6 MiB).
///
/// This is the transfer size of every `pwrite`/`pread` and the unit of work one thread takes
/// from the shared task counter. It matches the 16 MiB `dd` transfers that define the I/O floor
/// (`shared/tools/iofloor`). Large enough that the per-syscall cost and the jump-ahead at the
/// start of a task (128 multiply-adds) vanish: a binary task takes ~3.6 ms to generate and
/// checksum on one core of the reference machine (46 M records/s, `cargo bench -p
/// oxsort-gensort`), against ~8 ms to write it at 2 GB/s, so with two threads one task is
/// always being written while the other is generated. 8 MB tasks were not measurably different
/// on the (shared, noisy) reference disk; smaller direct writes lose bandwidth.
pub const TASK_RECORDS: usize = 163_840;

/// Bytes per task (see [`TASK_RECORDS`]).
pub const TASK_BYTES: usize = TASK_RECORDS * RECORD_LEN;

/// Alignment that direct I/O needs for offsets and lengths (oxsort-io's).
pub const IO_ALIGN: usize = oxsort_io::DIRECT_ALIGN;

/// Reads of [`TASK_BYTES`] that validation keeps in flight (the read-ahead depth).
///
/// Validating a piece (CRC-32 of every record plus the key comparisons) runs at ~3.2 GB/s per
/// core (`cargo bench -p oxsort-gensort`), faster than the disk, so what matters is that a read
/// is always queued while the workers compute. With reads done by the workers themselves (at
/// most one each, none while both compute) 10 GB took 1.42x the `dd bs=16M iflag=direct` time.
/// Measured on 1 GB (`valsort -q -t2`, page cache dropped, medians of 3 runs against `dd`'s
/// 0.81 s): depth 4 took 0.45 s, depth 2 0.42-0.55 s, depth 8 0.56-0.64 s (that last pair with a
/// compiler running on the machine). Several queued transfers beat `dd`, which has one in flight;
/// 4 x 16 MB = 64 MB in flight also covers a worker stall of ~30 ms.
pub const READ_DEPTH: usize = 4;

/// Read-ahead depth for pipes and devices (read by one sequential thread): two pieces let the
/// next read run while the previous piece is validated.
pub const STREAM_READ_DEPTH: usize = 2;

const _: () = assert!(TASK_BYTES % IO_ALIGN == 0, "task offsets must stay page aligned");
const _: () = assert!(TASK_BYTES % RECORD_LEN == 0);

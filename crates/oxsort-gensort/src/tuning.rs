//! Tuning constants of oxsort-gensort, in one place.
//!
//! Every size here is a whole number of 100-byte records *and* a multiple of 4096 bytes, so a
//! task's file offset is always page aligned (ready for direct I/O) and no record straddles two
//! tasks.

use crate::RECORD_LEN;

/// Records per generation or validation task: 81 920 records = 8 192 000 bytes (~7.8 MiB).
///
/// This is the transfer size of every `pwrite`/`pread` and the unit of work one thread takes
/// from the shared task counter. Large enough that the per-syscall cost and the jump-ahead at
/// the start of a task (128 multiply-adds) vanish: a binary task takes ~1.8 ms to generate and
/// checksum on one core of the reference machine (46 M records/s, `cargo bench -p
/// oxsort-gensort`). Small enough that a few buffers per thread cost little memory and that a
/// progress bar moves smoothly. It sits in the 8–64 MiB range of transfers that reach full disk
/// speed with 16 MiB `dd` as the reference.
pub const TASK_RECORDS: usize = 81_920;

/// Bytes per task (see [`TASK_RECORDS`]).
pub const TASK_BYTES: usize = TASK_RECORDS * RECORD_LEN;

/// Alignment that direct I/O needs for offsets and lengths.
pub const IO_ALIGN: usize = 4096;

const _: () = assert!(TASK_BYTES % IO_ALIGN == 0, "task offsets must stay page aligned");
const _: () = assert!(TASK_BYTES % RECORD_LEN == 0);

//! oxsort-io: every file syscall of oxsort.
//!
//! - [`AlignedBuf`]: heap memory aligned to [`DIRECT_ALIGN`], lazily zeroed, optionally on huge
//!   pages and pre-faulted in parallel.
//! - [`BigAlloc`] / [`bigmem`]: big mappings from the hugetlb pool when one is reserved (memory
//!   a VM host keeps backed between sorts), transparent huge pages otherwise; [`pool`]
//!   reserves that pool warm (every page touched once) and gives it back.
//! - [`DirectFile`]: positional reads/writes with `O_DIRECT` where the filesystem allows,
//!   falling back to the page cache (tmpfs, pipes, [`IoOptions::buffered`]); any offset and
//!   length work, unaligned edges go through a second buffered descriptor.
//! - [`Reader`] / [`Writer`]: read-ahead and write-behind pipelines of large transfers with
//!   several in flight, over io_uring when the kernel allows ([`uring_probe`]), else a small
//!   pool of `pread`/`pwrite` threads, or one sequential thread for pipes ([`Backend`]).
//!   Buffers cycle between the caller, the in-flight queue and a free list; while a transfer is
//!   in flight its buffer belongs to the pipeline, never to the caller:
//!
//! ```text
//!  Reader:  free list ──submit──▶ in flight ──complete, reorder──▶ next_chunk() ─▶ caller
//!              ▲                                                                   │
//!              └──────────────────────────── recycle(buf) ◀────────────────────────┘
//!
//!  Writer:  caller ──write(buf, len)──▶ in flight ──complete──▶ free list
//!              ▲                                                   │
//!              └────────────────────── take_buf() ◀────────────────┘
//! ```
//! - [`TempDir`] / [`AtomicOutput`]: private run directories and all-or-nothing outputs, removed
//!   on drop and on SIGINT/SIGTERM/SIGHUP ([`cleanup::install_signal_handlers`]); each held under
//!   an `flock` while it lives, so that [`sweep`] reclaims those of killed sorts and only those
//!   ([`leftovers`]).
//! - [`free_space`], [`check_dir_writable`], [`probe_input`], [`inspect_output`]: checks made
//!   before a sort starts; [`trusted_size`]: whether an input's length is known before it is
//!   read (not for a FIFO, a `/proc` file or an empty file: those are read as streams to their
//!   end); [`replace`]: outputs replaced as GNU sort replaces them (mode, owner, ACL, through
//!   symlinks, in place when a rename is not allowed).
//! - [`sized_pipe`]: a large pipe between two stages of one process.
//! - [`IoError`]: every error names its path (and offset); a full disk is [`IoError::NoSpace`].
//! - [`FaultPlan`]: injects `EIO`/`ENOSPC`/... into the Nth read or write, for tests.
//!
//! ```
//! use oxsort_io::{AlignedBuf, DirectFile, IoOptions, DIRECT_ALIGN};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("data");
//! let opts = IoOptions::default();
//!
//! let f = DirectFile::create(&path, &opts)?;
//! let mut buf = AlignedBuf::new(2 * DIRECT_ALIGN);
//! buf.fill(b'x');
//! f.write_at(&buf, 0)?; // aligned: goes direct when the filesystem allows
//! f.write_at(b"tail", buf.len() as u64)?; // unaligned tail: buffered descriptor
//! assert_eq!(f.len()?, 2 * DIRECT_ALIGN as u64 + 4);
//!
//! let f = DirectFile::open(&path, &opts)?;
//! let mut back = AlignedBuf::new(3 * DIRECT_ALIGN);
//! assert_eq!(f.read_at(&mut back, 0)?, 2 * DIRECT_ALIGN + 4);
//! assert_eq!(&back[2 * DIRECT_ALIGN..2 * DIRECT_ALIGN + 4], b"tail");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod bigmem;
mod buf;
pub mod byte_channel;
pub mod cleanup;
mod error;
mod file;
pub mod leftovers;
pub mod mapped;
mod op;
mod pipeline;
mod pipes;
pub mod pool;
mod reader;
pub mod replace;
mod size;
mod stream;
mod temp;
pub mod tuning;
mod units;
mod uring;
pub mod warm;
mod writer;

pub use bigmem::{trim_heap, BigAlloc};
pub use buf::AlignedBuf;
pub use error::{os_message, without_os_error, IoError};
pub use file::{DirectFile, FaultPlan, IoOptions};
pub use leftovers::{sweep, Leftover, LeftoverKind, Swept};
pub use mapped::MappedReader;
pub use pipeline::{Backend, IoStats};
pub use pipes::{quiet_broken_pipe, sized_pipe};
pub use reader::{Chunk, Reader};
pub use replace::{file_id, inspect_output, FileId, InPlace, OutputFile};
pub use size::trusted_size;
pub use stream::read_full;
pub use temp::{
    check_dir_writable, check_dir_writable_as, device_of, effective_uid, free_space,
    private_dir_problem, probe_input, probe_output, try_lock_exclusive, user_label, user_name,
    AtomicOutput, OutputTarget, TempDir, TEMP_DIR_CHECK,
};
pub use tuning::DIRECT_ALIGN;
pub use units::human_bytes;
pub use uring::probe as uring_probe;
pub use writer::{WriteBehind, Writer};

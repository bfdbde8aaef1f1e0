//! Tuning constants of oxsort-io, in one place.
//!
//! Each constant says what it controls and why it has its value. Invariants are checked by
//! `const` assertions at the bottom of this file.

/// Alignment (bytes) of buffers, file offsets and lengths used for `O_DIRECT` transfers.
///
/// Linux requires direct I/O to be aligned to the logical block size of the device (512 or
/// 4096 bytes in practice). 4096 covers both and equals the page size on x86-64/aarch64 (4K
/// pages), so an [`AlignedBuf`](crate::AlignedBuf) is also page aligned, which mmap and
/// pre-faulting rely on.
pub const DIRECT_ALIGN: usize = 4096;

/// Page size assumed when pre-faulting a buffer: one write per page is enough to fault it in.
pub const PAGE_SIZE: usize = 4096;

/// Buffers at least this big are obtained with an anonymous `mmap` instead of the allocator.
///
/// `std::alloc::alloc_zeroed` with 4096-byte alignment goes through `posix_memalign` followed by
/// an explicit `memset`, which touches every page at creation: a 10 GiB arena would cost seconds
/// before the first read. `mmap` pages are zeroed by the kernel on first touch instead (and can be
/// pre-faulted in parallel with [`AlignedBuf::prefault`](crate::AlignedBuf::prefault)). Below
/// 1 MiB the memset is cheap and the allocator avoids a syscall per buffer.
pub const MMAP_THRESHOLD: usize = 1 << 20;

/// Size of the huge pages taken from the kernel's hugetlb pool (`vm.nr_hugepages`), and the
/// alignment of every big mapping so transparent huge pages can back it when there is no pool.
///
/// A sort touches its chunk buffers at random while gathering records in key order; with 4 KiB
/// pages nearly every record costs a TLB miss and a page walk. Measured on a one-pass sort of
/// 4e7 records: without huge pages 20% of all cycles sat on the gather's first touch of a record
/// (the page walk), and fresh-page faults took another 17%.
///
/// 2 MiB is the PMD-sized huge page of x86-64 and of aarch64 with 4 KiB pages; mappings ask for
/// it explicitly (`MAP_HUGE_2MB`), so a kernel whose default huge page differs refuses the pool
/// and oxsort falls back to ordinary pages.
pub const HUGETLB_PAGE: usize = 2 << 20;

/// Largest number of worker threads the thread-pool backend starts per pipeline.
///
/// The thread backend uses one thread per in-flight transfer up to this cap. With 8–64 MiB
/// transfers, 4 outstanding requests already saturate an NVMe device; more threads only add
/// context switches on the 2-core machines oxsort targets.
pub const MAX_POOL_THREADS: usize = 8;

/// Largest queue depth accepted by a pipeline (requests in flight at once).
///
/// Bounds the io_uring submission queue size and the buffers a pipeline may hold; deeper queues
/// than this gave no extra throughput in any measurement and risk memory blow-ups when a caller
/// passes a huge depth by mistake.
pub const MAX_DEPTH: usize = 256;

/// Number of attempts made to create a uniquely named temp directory / output before giving up
/// (each attempt draws a fresh random suffix; a collision is astronomically unlikely, repeated
/// collisions mean something else is wrong, e.g. a directory full of stale names).
pub const UNIQUE_NAME_ATTEMPTS: u32 = 64;

const _: () = assert!(DIRECT_ALIGN.is_power_of_two());
const _: () = assert!(MMAP_THRESHOLD % DIRECT_ALIGN == 0);
const _: () = assert!(DIRECT_ALIGN % PAGE_SIZE == 0);
const _: () = assert!(HUGETLB_PAGE % DIRECT_ALIGN == 0 && HUGETLB_PAGE.is_power_of_two());
const _: () = assert!(MAX_POOL_THREADS >= 1 && MAX_DEPTH >= MAX_POOL_THREADS);

/// Largest single transfer a pipeline issues (bytes).
///
/// Linux caps one read/write at `0x7ffff000` bytes and io_uring takes a `u32` length; 1 GiB stays
/// clear of both. Transfers beyond 64 MiB gave nothing more in measurements anyway.
pub const MAX_TRANSFER: usize = 1 << 30;

/// Submission queue entries of a pipeline's io_uring ring, as a multiple of its depth.
///
/// One entry per in-flight op is enough (ops are submitted one by one as buffers free up); the
/// kernel rounds the ring size up to a power of two.
pub const URING_ENTRIES_PER_OP: u32 = 1;

const _: () = assert!(MAX_TRANSFER % DIRECT_ALIGN == 0 && MAX_TRANSFER <= u32::MAX as usize);

/// How long an io_uring ring may hold transfers without completing any before the engine calls
/// it a stall, names the transfers on stderr and asks the kernel to cancel them (a cancelled
/// transfer is redone with positional I/O).
///
/// A 64 MiB transfer takes well under a second on any disk oxsort targets, and a few seconds
/// behind a saturated queue; twenty seconds of nothing is a completion that will not come (seen
/// once: two reads the block device no longer held, waited on for eight minutes). Redoing a
/// transfer that was merely slow costs only the transfer.
pub const URING_STALL: std::time::Duration = std::time::Duration::from_secs(20);

/// How long a stalled transfer may take to answer its cancel before the engine abandons it:
/// retires its slot, leaks its buffer (the kernel may still touch it) and redoes the transfer
/// from a fresh buffer.
pub const URING_CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Longest single wait for a completion: the engine looks for a stall this often while
/// transfers are out. Waking once a second costs nothing measurable.
pub const URING_WAIT_SLICE: std::time::Duration = std::time::Duration::from_secs(1);

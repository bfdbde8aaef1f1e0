//! Every tuning constant of the engine, with what it trades and how it was chosen.

/// Bytes a read or write transfer aims for. Direct transfers of 8–16 MiB reach the disk's
/// sequential rate on this class of machine (`dd bs=16M` is the floor's own block size); larger
/// ones only add memory held in flight.
pub const TRANSFER_TARGET: usize = 16 << 20;

/// Smallest power-of-two record count per chunk when the budget is tiny. A chunk is the unit of
/// reading, of microrun sorting and of the record index (`chunk << log2 | slot`), so a smaller
/// chunk only costs more microruns to split at output time.
pub const MIN_CHUNK_RECORDS_LOG2: u32 = 4;

/// Read-ahead depth: transfers in flight while the workers extract and sort. Two keep the disk
/// queue non-empty while one lands; more only holds memory.
pub const READ_DEPTH: usize = 2;

/// Chunk buffers prepared ahead of the reader: allocated and populated by a helper thread while
/// the disk works, so reads land in memory that is already there. On the virtual machines oxsort
/// is measured on, fresh memory costs about 1 s per GB to populate (the host backs guest pages
/// lazily and takes freed ones back), as slow as the disk itself; populating ahead of the
/// reader, on the core the reader leaves idle, hides it.
pub const PROVISION_AHEAD: usize = 3;

/// Inputs' bytes up to which a sort of delimited records may run in the calling thread (the
/// small path, [`crate::small_input_limit`]): no worker threads, no io_uring ring, no chunk
/// buffers. A 3-line sort through the planned machinery paid 9 threads, a ring and tens of
/// MiB of reservations for 6 bytes, 15x GNU sort's time; one thread sorts a few MB in about
/// the time the planned sort takes to start its threads and fault in its buffers, so past
/// this size the planned sort's parallel work pays for its start.
pub const SMALL_INPUT_BYTES: u64 = 4 << 20;

/// Worker threads per core at most. The workers sort, gather and verify: past a few per core
/// they only add stacks and buffers (each its own share of the budget) and contend for the
/// cores; 100,000 asked for exhausted memory for their stacks before any work. GNU sort caps
/// `--parallel` silently; oxsort caps at this many per core and says so.
pub const MAX_THREADS_PER_CORE: usize = 4;

/// Output parts per thread at minimum. Parts are the unit of parallel output work (select,
/// sort, gather, verify); a few per thread keeps both cores busy while the writer drains.
pub const MIN_PARTS_PER_THREAD: usize = 4;

/// Records per output part at most. Bounds the memory of parts in flight (records × record
/// size × [`PARTS_IN_FLIGHT_PER_THREAD`] × threads) and the latency before the first write.
pub const MAX_PART_RECORDS: usize = 1 << 18;

/// Room an output worker keeps for a part's entries, in quarters of the plan's part size:
/// parts cut by value come a little over or under that size, and a vector sized exactly to
/// each would be made anew for every other part (fresh memory: a page fault per 4 KiB). A
/// quarter more keeps one vector for all of them, for 4 bytes a record of a part per worker.
pub const PART_ROOM_QUARTERS: usize = 5;

/// A load whose biggest output part of delimited records holds more than this many times the
/// mean part's records is lopsided: each of its parts adds up its records' lengths before it is
/// sorted, so the parts after a big one are placed at once (otherwise a part learns its size as
/// it is gathered). A big part (a group of tied prefixes: the table bench's skewed key holds a
/// quarter of each load) held the next part's worker until it was gathered piece by piece, and
/// the first third of every output phase ran on one core. Sizing only the big parts first left
/// the small ones after them waiting on each other's gathering, holding their pieces' buffers
/// (0.7 s slower on the table bench); sizing every part first in every load cost 3% more user
/// CPU on 4 GB of lines, where no part is big.
pub const EARLY_SIZE_MEAN_PARTS: usize = 2;

/// Parts a thread may hold finished but not yet written. One being written, one being built.
pub const PARTS_IN_FLIGHT_PER_THREAD: usize = 2;

/// Pieces of the part being written that a worker may gather ahead of the writer (one being
/// written, one gathered). A part is one group of tied prefixes at least, and may hold a whole
/// load; its pieces wait for the writer rather than pile up.
pub const PIECES_AHEAD_OF_WRITER: usize = 2;

/// Merge read buffer per run, at most. Each run has two (one being merged, one being read).
pub const MERGE_BLOCK_MAX: usize = 8 << 20;

/// Merge read buffer per run, at least. Below this a direct read is dominated by latency, so
/// the plan adds merge levels instead of shrinking blocks further.
pub const MERGE_BLOCK_MIN: usize = 64 << 10;

/// Runs merged at once, at most, whatever the memory. Each run has its own read-ahead pipeline
/// (a ring or I/O threads); past a few hundred, another merge level costs less than the
/// pipelines' overhead and the loser tree's depth.
pub const MAX_FAN_IN: usize = 256;

/// Memory each run being merged costs besides its two blocks: its read pipeline's io_uring ring,
/// or with the thread-pool backend its I/O thread (the touched stack and the C allocator's
/// per-thread arena). Measured: a 1 MiB budget merging ~120 runs through the thread pool peaked
/// 17 MiB above the budget, about 140 KiB a run.
pub const MERGE_RUN_OVERHEAD: u64 = 160 << 10;

/// A merge reads into the input phase's buffers cut to blocks smaller than planned when they
/// then give more of its blocks, but not below this many quarters of the planned block: fewer,
/// larger transfers are what the plan sized the block for (a 4 MiB transfer still keeps this
/// disk at its rate with 16 in flight, which a merge of 15 runs or more has).
pub const SPARE_BLOCK_QUARTERS: usize = 2;

/// Output buffers the merge keeps in flight (being filled, being verified, being written).
pub const MERGE_OUT_BUFFERS: usize = 3;

/// Share of available memory taken when `--memory` is not given. Leaves room for the page
/// cache the rest of the system relies on and for allocator slack.
pub const DEFAULT_MEMORY_SHARE: f64 = 0.6;

/// Bytes of memory accounted per record for its sort entry (one `u128`).
pub const ENTRY_BYTES: u64 = 16;

/// Memory the engine needs beyond its data structures: the touched part of the threads' stacks,
/// channels, the part and run tables. A 1e7-record sort measured about 100 KiB of these.
pub const FIXED_OVERHEAD: u64 = 256 << 10;

/// Chunks a memory-load holds at least, when the budget is small enough that it matters: the
/// chunk shrinks (down to [`MIN_CHUNK_RECORDS_LOG2`]) until this many fit, so that run formation
/// still overlaps reading one chunk with sorting the ones before.
pub const ARENA_MIN_CHUNKS: u64 = 16;

/// Largest record count per chunk, as a power of two: far above what any transfer holds; it
/// bounds the shift in an entry's index.
pub const MAX_CHUNK_RECORDS_LOG2: u32 = 40;

/// The output window (parts in flight, their records and entries) takes at most 1/this of the
/// budget; the rest holds the memory-load being written out.
pub const OUTPUT_WINDOW_SHARE: u64 = 8;

/// Bytes of a delimited record assumed when sizing output parts before any is read (parts are
/// counted in records; their buffers grow if the records are longer).
pub const LINE_BYTES_ESTIMATE: u64 = 64;

/// Tie-breaking scratch (whole keys built for a group of tied prefixes, with their spans and
/// order) takes at most 1/this of the budget, shared by the output workers. A group whose keys
/// do not fit is split by its keys' next bytes in place first, which builds each key again per
/// step: keys of 1e7 `gensort -a` lines by `-k2` (88 bytes, tied over their first 28) take three
/// steps, where holding them all took 2.3 GiB.
pub const TIE_MEMORY_SHARE: u64 = 32;

/// Tie-breaking scratch per output worker, at least: a group of several hundred keys of a
/// few dozen bytes is ordered in one go however small the budget (bigger groups are split
/// first), and a 1 MiB budget still sorts typed keys.
pub const TIE_MEMORY_MIN: u64 = 64 << 10;

/// Tie-breaking scratch per output worker, at most: past this, groups are split a step first,
/// which costs one more build of each of their keys and little memory.
pub const TIE_MEMORY_MAX: u64 = 64 << 20;

/// Bytes of a delimited record's offset in its chunk's offset table (a `u32`).
pub const OFFSET_BYTES: u64 = 4;

/// The workers' spare chunk buffers for the rewrite in sorted order (`rewrite`) take at most
/// 1/this of the budget: a budget too small for them sorts without the rewrite (its output
/// gathers records at random, as before it) rather than refusing, or a budget that sorted
/// 32-byte records in 1 MiB would have needed 1.07 MiB.
pub const REWRITE_MAX_SHARE: u64 = 16;

/// A delimited chunk at its worst (one-byte records: the byte, an entry and an offset each)
/// takes at most 1/this of the budget.
pub const DELIM_CHUNK_SHARE: u64 = 4;

/// The staging buffer of streamed output takes at most 1/this of a small budget.
pub const STAGING_SHARE: u64 = 32;

/// A gathered piece of delimited records is first sized at this many quarters of its records'
/// mean length (most pieces then fit at once; a piece that does not grows by
/// [`PIECE_GROWTH_HALVES`]).
pub const PIECE_SLACK_QUARTERS: usize = 5;

/// A piece buffer that proves too small grows to this many halves of its size, plus 1 MiB.
pub const PIECE_GROWTH_HALVES: usize = 3;

/// Bytes per delimited record assumed when reserving a chunk's offset table on the copying path
/// (the table grows if the records are shorter).
pub const OFFSETS_GUESS_RECORD_BYTES: usize = 32;

/// Bytes at the start of each input of fixed-length records that are looked at to tell text
/// lines from records (a newline that does not end a record): enough for many lines, and no
/// more than the first chunk read holds anyway, so nothing is read for it.
pub const TEXT_SNIFF_BYTES: usize = 64 << 10;

const _: () = assert!(TRANSFER_TARGET % oxsort_io::DIRECT_ALIGN == 0);
const _: () = assert!(
    MERGE_BLOCK_MIN % oxsort_io::DIRECT_ALIGN == 0
        && MERGE_BLOCK_MAX % oxsort_io::DIRECT_ALIGN == 0
);
const _: () = assert!(MERGE_BLOCK_MIN <= MERGE_BLOCK_MAX);

/// How much a chunk grows at a time to hold a record longer than itself (delimited records):
/// doubling copies each byte of the record about twice at most.
pub const LONG_RECORD_GROWTH: usize = 2;

/// Room after a delimited chunk's data, in every chunk buffer: a chunk is the piece read from the
/// file, cut after its last terminator, plus the rest of that last record, copied from the start
/// of the next piece into this room. Only that fragment is copied, not the chunk; a record whose
/// rest is longer than this (lines of more than 64 KiB at a chunk boundary) sends the source to
/// the copying path. 64 KiB is 0.4% of a 16 MiB chunk; chunks smaller than that (tiny memory
/// budgets) get as much room as their own size ([`delim_room`]).
pub const DELIM_SLACK: usize = 64 << 10;

/// The room after a delimited chunk of `chunk` bytes (see [`DELIM_SLACK`]). A chunk holds at
/// most `chunk + delim_room(chunk)` bytes, so at most that many records.
pub const fn delim_room(chunk: usize) -> usize {
    if chunk < DELIM_SLACK {
        chunk
    } else {
        DELIM_SLACK
    }
}

/// Bytes of a collated key built before its whole (the first stage of ordering tied prefixes,
/// and of the order check's ties): about 30 characters' primary weights, from a table. In 4 GB
/// of random 10-200 byte lines, 10-byte prefixes (4-5 characters' weights in en_US.UTF-8) tie
/// for over half of the lines; 64 bytes practically never do.
pub const TIE_KEY_START: usize = 64;

/// A bucketed load (module `bucket`) is cut into parts of about this many bytes of records:
/// a part's records lie in a range of every chunk, in bucket order, and its gather reads them in
/// sorted order, at random within those ranges; parts this small keep them in cache. Measured
/// (one pass of 4e7 100-byte records, tmpfs, pool, medians of 7): parts of 26 MB, 2.0 s of
/// the output threads' user CPU; of 3.3 MB, 1.77 s (sorted microruns: 1.83 s).
pub const BUCKET_PART_BYTES: u64 = 4 << 20;

/// A bucketed load has about 2^this buckets per part of [`BUCKET_PART_BYTES`] (parts are
/// whole buckets: finer ones make parts of closer to equal size).
pub const BUCKETS_PER_PART_LOG2: u32 = 2;

/// Fewest buckets a load is put in (2^this): below, a chunk's entries are sorted instead.
pub const MIN_BUCKET_BITS: u32 = 4;

/// Most buckets a load is put in (2^this): a chunk's entries are scattered to that many places
/// at once, and each chunk keeps where each bucket starts (16 KiB at 4096).
pub const MAX_BUCKET_BITS: u32 = 12;

/// Records of the first chunk whose key prefixes set a load's bucket ranges.
pub const BUCKET_SAMPLE: usize = 1024;

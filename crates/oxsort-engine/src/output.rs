//! The output phase of one memory-load: its records written in sorted order, to the output (one
//! pass) or to a run (two passes).
//!
//! ```text
//!  microruns ──cut_load───> parts 0..P (by value)           main thread: OrderedWriter
//!                              │                              pieces in (part, seq) order
//!  workers (window of parts):  │                              ──> sink, as the placement says:
//!    part p: collect its slice of every microrun, sort,          Known    at the part's offset
//!    gather pieces of ≤ piece_records records,                   Chained  after the part before
//!    check order + CRC-sum (drop duplicates: -u)                 Streamed staged, in sequence
//!    ──> Piece { part, seq, buf, check } ─────────────────>   tokens back: the next part starts
//! ```
//!
//! Three placements, one per kind of output:
//! - `Known`: fixed records; every part's size, so its offset, is known before any is built.
//! - `Chained`: delimited records; a part starts where the sizes of the parts before it add up
//!   to ([`PartSizes`]). A part learns its size as it is gathered, where its worker moves its
//!   first piece; in a load with a big part (and an empty part in any load) each part adds its
//!   size up before it is sorted, so no part waits on the gathering of a big part before it.
//! - `Streamed`: duplicate removal; sizes are known only piece by piece, so pieces are staged
//!   and written in sequence, a duplicate across a piece boundary dropped on the way.
//!
//! A worker gathers the second and later pieces of a part only when that part is being written
//! ([`Turn`]), and at most [`PIECES_AHEAD_OF_WRITER`] ahead of the writer, so a huge group of
//! equal prefixes (one big part) stays within the window.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use oxsort_format::SortKey;
use oxsort_io::{AlignedBuf, DIRECT_ALIGN};
use oxsort_kernels::{entry_index, Entry, Touch};

use crate::error::{EngineError, Result};
use crate::inmem::{Ctx, Loaded};
#[cfg(doc)]
use crate::plan::Geometry;
use crate::progress::Phase;
use crate::sink::{Sink, Staging};
use crate::tuning::{
    EARLY_SIZE_MEAN_PARTS, ENTRY_BYTES, LINE_BYTES_ESTIMATE, MIN_PARTS_PER_THREAD,
    PARTS_IN_FLIGHT_PER_THREAD, PART_ROOM_QUARTERS, PIECES_AHEAD_OF_WRITER, PIECE_GROWTH_HALVES,
    PIECE_SLACK_QUARTERS, TIE_KEY_START,
};
use crate::verify::{FixedCheck, OrderBuilder, OrderCheck};

/// Writes the load's records in sorted order to `sink` and returns the order facts of what was
/// written (checked when `verify`; duplicates are dropped first with `unique`). The pieces are
/// gathered into `spare` buffers first, and the buffers written last are left there for the
/// next load's output (see [`PieceSpares`]).
pub(crate) fn emit(
    ctx: &Ctx<'_>,
    loaded: &Loaded,
    sink: &mut dyn Sink,
    verify: bool,
    phase: Phase,
    base: u64,
    spare: &mut PieceSpares,
) -> Result<OrderCheck> {
    if loaded.records == 0 {
        return Ok(OrderCheck::default());
    }
    let threads = ctx.threads;
    let runs: Vec<&[Entry]> = loaded.runs();
    let parts = Parts::cut(ctx, loaded, &runs);
    let placement = Placement::of(ctx, &parts, base);
    let log2 = ctx.g.chunk_log2;
    let job = Job {
        ctx,
        loaded,
        runs: &runs,
        parts: &parts,
        placement: &placement,
        verify,
        record_size: ctx.keys.record_size(),
        log2,
        mask: (1u64 << log2) - 1,
    };

    let window = threads * PARTS_IN_FLIGHT_PER_THREAD;
    let (token_tx, token_rx) = bounded::<()>(window);
    for _ in 0..window {
        let _ = token_tx.send(());
    }
    let (done_tx, done_rx) = unbounded::<Piece>();
    // Written piece buffers go back to the workers: fresh ones would cost a page fault per 4 KiB.
    // One spare per part in flight at most (the pieces the plan's output window counts): with
    // one per worker, the buffers of the other parts in flight were freed as they were written
    // and made anew for the next parts (a quarter of the output's CPU was the kernel zeroing
    // them, one-pass sort of 1 GB, 2 threads); more would pile up (seven 15 MiB pieces of one
    // part of tied prefixes at a 256 MiB budget).
    let (free_tx, free_rx) = bounded::<AlignedBuf>(window);
    for b in spare.0.drain(..) {
        let _ = free_tx.try_send(b);
    }
    let turn = Turn::default();
    let next = AtomicUsize::new(0);
    let mut writer = OrderedWriter::new(ctx, &placement, parts.count(), loaded.bytes, phase);
    let written = std::thread::scope(|s| -> Result<OrderCheck> {
        for _ in 0..threads {
            let worker = Worker {
                job: &job,
                tokens: token_rx.clone(),
                done: done_tx.clone(),
                free: free_rx.clone(),
                turn: &turn,
                next: &next,
            };
            s.spawn(move || worker.run());
        }
        drop(done_tx);
        let result = (|| -> Result<()> {
            while !writer.finished() {
                let piece = done_rx
                    .recv()
                    .map_err(|_| EngineError::Internal("an output worker stopped".into()))?;
                writer.accept(piece, sink, &turn, &token_tx, &free_tx)?;
            }
            writer.flush(sink)
        })();
        // Unblock and stop the workers whatever happened.
        next.store(parts.count(), Ordering::Relaxed);
        turn.release();
        placement.release();
        for _ in 0..threads {
            let _ = token_tx.try_send(());
        }
        drop(done_rx);
        result.map(|()| writer.check)
    });
    spare.0.extend(free_rx.try_iter());
    written
}

/// Piece buffers kept from one load's output to the next (a two-pass sort's runs): fresh ones
/// cost the host's page faults again for every run, as many bytes as the output window holds
/// (4 pieces of 13 MB for each of the 14 runs of a 4 GB sort in 1 GiB).
#[derive(Default)]
pub(crate) struct PieceSpares(Vec<AlignedBuf>);

/// The parts of a load: where each cuts every microrun, how many records it holds, and how many
/// records a gathered piece holds.
struct Parts {
    /// `cuts[run][p]..cuts[run][p + 1]`: part `p`'s entries of microrun `run`.
    cuts: Vec<Vec<usize>>,
    /// Records per part.
    sizes: Vec<usize>,
    /// Records per gathered piece.
    piece_records: usize,
    /// Whether a part is far bigger than the mean ([`EARLY_SIZE_MEAN_PARTS`]): then every
    /// chained part sets its size before it is sorted.
    lopsided: bool,
}

impl Parts {
    /// Cuts the load into parts of about the plan's size (at least a few per thread).
    fn cut(ctx: &Ctx<'_>, loaded: &Loaded, runs: &[&[Entry]]) -> Parts {
        let g = ctx.g;
        let count = (ctx.threads * MIN_PARTS_PER_THREAD)
            .max(loaded.records.div_ceil(g.part_records as u64) as usize);
        let cuts = cut_load(ctx, loaded, runs, count);
        let count = cuts.first().map_or(0, |c| c.len() - 1);
        let sizes: Vec<usize> =
            (0..count).map(|p| cuts.iter().map(|c| c[p + 1] - c[p]).sum()).collect();
        // Pieces of delimited records are as many bytes as the plan's window gave them (records
        // of LINE_BYTES_ESTIMATE bytes): longer records make pieces of fewer records.
        let piece_records = match ctx.keys.record_size() {
            Some(_) => g.part_records,
            None => {
                let planned = g.part_records * (LINE_BYTES_ESTIMATE + ENTRY_BYTES) as usize;
                let per_record =
                    mean_record(loaded) * PIECE_SLACK_QUARTERS / 4 + ENTRY_BYTES as usize;
                (planned / per_record).clamp(1, g.part_records)
            }
        };
        let mean = (loaded.records as usize).div_ceil(count);
        let lopsided = sizes.iter().any(|&n| n > mean * EARLY_SIZE_MEAN_PARTS);
        Parts { cuts, sizes, piece_records, lopsided }
    }

    fn count(&self) -> usize {
        self.sizes.len()
    }

    /// Pieces part `p` is gathered in (an empty part still sends one, empty).
    fn pieces(&self, p: usize) -> usize {
        self.sizes[p].div_ceil(self.piece_records).max(1)
    }
}

/// Sorts a part's entries by key: integer order when prefixes decide; otherwise tied prefixes
/// are ordered by whole keys, built once per tied record (parsed, collated, or the raw line
/// copied) and compared in one arena: copying a raw line once costs less than reaching it in
/// the chunk at each of the `log2(group)` comparisons. Measured (user CPU, 2 threads): 3e6
/// lines, half tied over their first 11 bytes or more, 2.4 s in place, 0.7 s so; a 4e6-row table
/// sort (a quarter of its records tied over 20 bytes) 5.5 s in place, 3.8 s so.
/// Whole keys built at once take at most `tie_bytes` (see [`Geometry::tie_bytes`]).
pub(crate) fn sort_part<'a>(
    keys: &SortKey,
    v: &mut [Entry],
    tie_bytes: usize,
    locate: impl Fn(u64) -> &'a [u8] + Sync,
    hint: impl Fn(u64) + Sync,
) {
    if !keys.ties_possible() {
        oxsort_kernels::sort_entries(v);
    } else if keys.collates() {
        oxsort_kernels::sort_entries_with_staged_ties(
            v,
            TIE_KEY_START,
            tie_bytes,
            &|idx, out| keys.append_key_start(locate(idx), out, TIE_KEY_START),
            &|idx, out| keys.append_key(locate(idx), out),
        );
    } else {
        // Splitting a big group reads each tied record's key start: the offset (far) and the
        // record's first two lines (near) are prefetched ahead.
        let touch = |idx, t| match t {
            Touch::Far => hint(idx),
            Touch::Near => {
                let rec = locate(idx);
                if let Some(first) = rec.first() {
                    oxsort_kernels::prefetch_read(first);
                }
                if let Some(second) = rec.get(TIE_PREFETCH_SECOND_LINE) {
                    oxsort_kernels::prefetch_read(second);
                }
            }
        };
        oxsort_kernels::sort_entries_with_keyed_ties_prefetched(
            v,
            tie_bytes,
            &|idx, out| keys.append_key(locate(idx), out),
            &|idx, out, n| keys.append_key_start(locate(idx), out, n),
            &touch,
        );
    }
}

/// Where in a record the second cache line a tie split reads lies, at most (a key start is its
/// first bytes: rarely past two lines).
const TIE_PREFETCH_SECOND_LINE: usize = 64;

/// Bytes of the load's mean record.
fn mean_record(loaded: &Loaded) -> usize {
    (loaded.bytes / loaded.records.max(1)).max(1) as usize
}

/// Cut positions of `parts` parts over the sorted `runs`: equal-sized by value, then moved so
/// that a group of equal prefixes is never split when prefixes may tie (the groups' order is
/// only known by whole keys).
pub(crate) fn cut_parts(
    keys: &SortKey,
    runs: &[&[Entry]],
    parts: usize,
    threads: usize,
) -> Vec<Vec<usize>> {
    let mut cuts = oxsort_kernels::par_split_sorted(runs, parts, threads);
    if !keys.ties_possible() {
        return cuts;
    }
    let prefix = oxsort_kernels::entry_prefix;
    for p in 1..parts {
        let boundary = cuts
            .iter()
            .zip(runs)
            .filter(|(c, r)| c[p] < r.len())
            .map(|(c, r)| prefix(r[c[p]]))
            .min();
        for (c, r) in cuts.iter_mut().zip(runs) {
            let lo = c[p - 1];
            let mut at = c[p].max(lo);
            if let Some(b) = boundary {
                while at > lo && prefix(r[at - 1]) == b {
                    at -= 1;
                }
                // Entries of the group left of the boundary's run position move right too.
                while at < r.len() && prefix(r[at]) < b {
                    at += 1;
                }
            }
            c[p] = at;
        }
    }
    cuts
}

/// Cut positions of about `parts` parts by value over the microruns `runs` of `loaded`: at
/// bucket boundaries when they are bucketed (`crate::bucket`), else by [`cut_parts`].
pub(crate) fn cut_load(
    ctx: &Ctx<'_>,
    loaded: &Loaded,
    runs: &[&[Entry]],
    parts: usize,
) -> Vec<Vec<usize>> {
    match &loaded.buckets {
        Some(b) => b.cuts(parts, loaded.bytes, ctx.g.part_records),
        None => cut_parts(ctx.keys, runs, parts, ctx.threads),
    }
}

/// Appends part `p`'s entries of every microrun of `runs` (cut by `cuts`, see [`cut_parts`]) to
/// `entries`, microrun after microrun: unsorted.
pub(crate) fn append_part(
    runs: &[&[Entry]],
    cuts: &[Vec<usize>],
    p: usize,
    entries: &mut Vec<Entry>,
) {
    for (run, c) in runs.iter().zip(cuts) {
        entries.extend_from_slice(&run[c[p]..c[p + 1]]);
    }
}

/// Where the parts' bytes go; see the module's diagram.
enum Placement {
    /// Fixed records: part `p` starts at `offsets[p]`.
    Known(Vec<u64>),
    /// Delimited records: part `p` starts after the sizes of the parts before it.
    Chained(PartSizes),
    /// Duplicate removal: pieces staged and written in sequence.
    Streamed,
}

impl Placement {
    /// The placement of `parts`, the first at byte `base` of the sink.
    fn of(ctx: &Ctx<'_>, parts: &Parts, base: u64) -> Placement {
        if ctx.unique {
            debug_assert_eq!(base, 0, "staged pieces start at the sink's start");
            return Placement::Streamed;
        }
        match ctx.keys.record_size() {
            Some(r) => {
                let mut offsets = Vec::with_capacity(parts.count());
                let mut at = base;
                for s in &parts.sizes {
                    offsets.push(at);
                    at += (s * r) as u64;
                }
                Placement::Known(offsets)
            }
            None => Placement::Chained(PartSizes::new(parts.count(), base)),
        }
    }

    /// Where part `p` starts, when known before it is gathered.
    fn known_start(&self, p: usize) -> Option<u64> {
        match self {
            Placement::Known(offsets) => Some(offsets[p]),
            Placement::Chained(_) => None,
            // Streamed pieces are staged; their offsets are the staging's.
            Placement::Streamed => Some(0),
        }
    }

    /// Unblocks workers waiting for a part's start (the phase is stopping).
    fn release(&self) {
        if let Placement::Chained(sizes) = self {
            sizes.release();
        }
    }
}

/// The byte size of each chained part, set by its worker once it has gathered the part, or (in
/// a lopsided load, [`EARLY_SIZE_MEAN_PARTS`], and for an empty part) as soon as it has the
/// part's entries; a part starts where the sizes before it add up to.
///
/// ```text
///  base ─┬─ part 0 ─┬─ part 1 ──────────────┬─ part 2 ─┬─ ...
///        │ sizes[0] │ sizes[1] (one big     │ sizes[2] │
///        │          │ group, still sorting) │          │
///        start_of(2) = base + sizes[0] + sizes[1]: known before part 1 is gathered
/// ```
struct PartSizes {
    /// Where the first part starts.
    base: u64,
    sizes: Mutex<Vec<Option<u64>>>,
    changed: Condvar,
}

impl PartSizes {
    fn new(parts: usize, base: u64) -> Self {
        PartSizes { base, sizes: Mutex::new(vec![None; parts]), changed: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Option<u64>>> {
        self.sizes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where part `p` starts: the base and the sizes of the parts before it (waits for them).
    fn start_of(&self, p: usize) -> u64 {
        let mut s = self.lock();
        loop {
            if let Some(before) = s[..p].iter().try_fold(0u64, |at, size| Some(at + (*size)?)) {
                return self.base + before;
            }
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn set_size(&self, p: usize, bytes: u64) {
        self.lock()[p] = Some(bytes);
        self.changed.notify_all();
    }

    /// Workers waiting for a part's place must not wait for a worker that stopped.
    fn release(&self) {
        for s in self.lock().iter_mut() {
            s.get_or_insert(0);
        }
        self.changed.notify_all();
    }
}

/// The piece the main thread writes next: `(part, seq)`.
#[derive(Default)]
struct Turn {
    next: Mutex<(usize, usize)>,
    changed: Condvar,
}

impl Turn {
    /// Waits until piece `seq` of part `p` may be gathered: its part is being written, and at
    /// most [`PIECES_AHEAD_OF_WRITER`] of its pieces wait unwritten before it (a part of one
    /// group of tied prefixes may hold a whole load: its pieces must not pile up).
    fn wait_for(&self, p: usize, seq: usize) {
        let mut w = self.next.lock().unwrap_or_else(|e| e.into_inner());
        while w.0 < p || (w.0 == p && seq > w.1 + PIECES_AHEAD_OF_WRITER) {
            w = self.changed.wait(w).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn set(&self, p: usize, seq: usize) {
        *self.next.lock().unwrap_or_else(|e| e.into_inner()) = (p, seq);
        self.changed.notify_all();
    }

    fn release(&self) {
        self.set(usize::MAX, 0);
    }
}

/// One finished piece of a part: its bytes (`buf[pad..pad + len]`), where they go, and what
/// they hold.
struct Piece {
    part: usize,
    seq: usize,
    last: bool,
    buf: AlignedBuf,
    pad: usize,
    len: usize,
    /// Where the piece goes in the output (unless streamed).
    off: u64,
    check: OrderCheck,
}

/// What every worker reads.
struct Job<'a, 'c> {
    ctx: &'a Ctx<'c>,
    loaded: &'a Loaded,
    runs: &'a [&'a [Entry]],
    parts: &'a Parts,
    placement: &'a Placement,
    verify: bool,
    /// Fixed records' size (`None`: delimited), the index's chunk shift and slot mask: read
    /// for every record gathered, so kept here rather than behind the context's pointers.
    record_size: Option<usize>,
    log2: u32,
    mask: u64,
}

impl Job<'_, '_> {
    /// The record an entry's index names.
    #[inline]
    fn locate(&self, idx: u64) -> &[u8] {
        self.loaded.record(idx, self.log2, self.record_size)
    }

    /// What `locate` reads to find a delimited record: its offset, a random miss of its own
    /// (nothing for fixed records, found by arithmetic).
    #[inline]
    fn hint(&self, idx: u64) {
        if self.record_size.is_some() {
            return;
        }
        let c = (idx >> self.log2) as usize;
        oxsort_kernels::prefetch_read(&self.loaded.offsets[c][(idx & self.mask) as usize]);
    }
}

/// An output worker: takes the next part when a token says the window has room, and sends its
/// pieces.
struct Worker<'a, 'c> {
    job: &'a Job<'a, 'c>,
    tokens: Receiver<()>,
    done: Sender<Piece>,
    free: Receiver<AlignedBuf>,
    turn: &'a Turn,
    next: &'a AtomicUsize,
}

impl Worker<'_, '_> {
    fn run(self) {
        let _meter = self.job.ctx.meters.meter("output");
        let mut entries: Vec<Entry> = Vec::new();
        let mut key_buf = Vec::new();
        let count = self.job.parts.count();
        loop {
            if self.tokens.recv().is_err() {
                return;
            }
            let p = self.next.fetch_add(1, Ordering::Relaxed);
            if p >= count || !self.build(p, &mut entries, &mut key_buf) {
                return;
            }
        }
    }

    /// A written piece's buffer if it is big enough, else a new one (its bytes unspecified,
    /// as a written piece's are: only what the gather writes is sent).
    fn buffer(&self, want: usize) -> AlignedBuf {
        match self.free.try_recv() {
            Ok(b) if b.len() >= want => b,
            _ => AlignedBuf::unzeroed(want),
        }
    }

    /// Builds part `p` into pieces and sends them; false when the writer has stopped.
    fn build(&self, p: usize, entries: &mut Vec<Entry>, key_buf: &mut Vec<u8>) -> bool {
        let job = self.job;
        let keys = job.ctx.keys;
        let unique = job.ctx.unique;
        // Room for this part, and for the parts of about the plan's size after it (cut by
        // value, they come a little over or under it): the vector is kept from part to part, a
        // new one being fresh memory (the whole load's entries again, 16 bytes a record, when
        // every other part needed one). The plan counts one entry copy per record of the load,
        // and a part of tied prefixes may hold all of them: no doubling past it, and a big
        // part's room is not kept for the small ones after it.
        let n = job.parts.sizes[p];
        let room = n.max(job.ctx.g.part_records * PART_ROOM_QUARTERS / 4);
        entries.clear();
        if entries.capacity() < n || entries.capacity() > room {
            *entries = Vec::new();
            entries.reserve_exact(room);
        }
        append_part(job.runs, &job.parts.cuts, p, entries);
        // A chained part's size: in a lopsided load every part sets it first, so the parts
        // after a big one are placed however long it takes to sort and gather (the records'
        // lengths come from the offsets of one chunk after another: the entries are still in
        // microrun order); otherwise each sets it once gathered.
        let chained = match job.placement {
            Placement::Chained(sizes) => {
                let early = (n == 0 || job.parts.lopsided).then(|| {
                    // A record's length is its slice's: its offsets are read, not its bytes.
                    let lens = entries.iter().map(|&e| job.locate(entry_index(e)).len());
                    let bytes = lens.sum::<usize>() as u64;
                    sizes.set_size(p, bytes);
                    bytes
                });
                Some((sizes, early))
            }
            _ => None,
        };
        sort_part(keys, entries, job.ctx.g.tie_bytes, |idx| job.locate(idx), |idx| job.hint(idx));
        // Where the next piece goes: for a chained part, once the parts before it have their
        // sizes (waited for here when its own is set, else after its first piece is gathered).
        let mut off = match chained {
            Some((sizes, Some(_))) => Some(sizes.start_of(p)),
            _ => job.placement.known_start(p),
        };
        let pieces = job.parts.pieces(p);
        let streamed = matches!(job.placement, Placement::Streamed);
        let mut seqs = entries.chunks(job.parts.piece_records).enumerate().peekable();
        if seqs.peek().is_none() {
            // An empty part starts (and ends) where the part before it ends.
            let at = off.unwrap_or(0);
            let buf = AlignedBuf::new(0);
            let check = OrderCheck::default();
            let piece = Piece { part: p, seq: 0, last: true, buf, pad: 0, len: 0, off: at, check };
            return self.done.send(piece).is_ok();
        }
        let mut gathered = 0u64;
        for (seq, ents) in seqs {
            if seq > 0 {
                // Wait for this part's turn before gathering more of it.
                self.turn.wait_for(p, seq);
            }
            let pad = match off {
                Some(o) if !streamed => (o % DIRECT_ALIGN as u64) as usize,
                _ => 0,
            };
            // Pieces are checked as they are gathered (no second pass): fixed records block by
            // block, delimited records one by one.
            let checked = job.verify && !unique;
            let mut fused = match (checked, FixedCheck::new(keys)) {
                (false, _) => Fused::None,
                (true, Some(f)) => Fused::Fixed(f),
                (true, None) if keys.record_size().is_none() => {
                    Fused::Records(OrderBuilder::new(keys))
                }
                (true, None) => Fused::None,
            };
            let (mut buf, len) = self.gather(ents, pad, &mut fused);
            let pad = match (off, chained) {
                // A chained part's first piece, its size not set early: wait for where it goes,
                // then move it to the same place in its page as in the file (direct I/O).
                (None, Some((sizes, _))) => {
                    let o = sizes.start_of(p);
                    let pad = (o % DIRECT_ALIGN as u64) as usize;
                    buf.copy_within(0..len, pad);
                    off = Some(o);
                    pad
                }
                _ => pad,
            };
            let (len, dropped, dropped_checksum) =
                if unique { dedupe(keys, &mut buf[pad..pad + len], key_buf) } else { (len, 0, 0) };
            let mut check = match fused {
                Fused::Records(f) => f.finish(),
                Fused::Fixed(f) => f.finish(),
                Fused::None if job.verify || unique => OrderCheck::of(&buf[pad..pad + len], keys),
                Fused::None => OrderCheck {
                    records: ents.len() as u64,
                    bytes: len as u64,
                    ..OrderCheck::default()
                },
            };
            check.dropped = dropped;
            check.dropped_checksum = dropped_checksum;
            let last = seq + 1 == pieces;
            gathered += len as u64;
            let at = off.unwrap_or(0);
            off = Some(at + len as u64);
            if let (true, Some((sizes, early))) = (last, chained) {
                match early {
                    None => sizes.set_size(p, gathered),
                    Some(bytes) => debug_assert_eq!(gathered, bytes, "part {p}'s size"),
                }
            }
            let piece = Piece { part: p, seq, last, buf, pad, len, off: at, check };
            if self.done.send(piece).is_err() {
                return false;
            }
        }
        true
    }

    /// Gathers the records of `ents` into a buffer, `pad` bytes in (records or blocks handed to
    /// `fused` as they are copied); returns the buffer and the bytes gathered.
    fn gather<'r>(
        &'r self,
        ents: &[Entry],
        pad: usize,
        fused: &mut Fused<'_, 'r>,
    ) -> (AlignedBuf, usize) {
        let job = self.job;
        let locate = |idx| job.locate(idx);
        if let Some(r) = job.record_size {
            let len = ents.len() * r;
            let mut buf = self.buffer(pad + len);
            let (chunks, log2, mask) = (&job.loaded.chunks, job.log2, job.mask);
            let fixed = move |idx: u64| -> &[u8] {
                let (c, i) = ((idx >> log2) as usize, (idx & mask) as usize);
                &chunks[c][i * r..(i + 1) * r]
            };
            let out = &mut buf[pad..pad + len];
            match fused {
                Fused::Fixed(f) => oxsort_kernels::gather_blocks(
                    ents,
                    r,
                    fixed,
                    out,
                    FixedCheck::BLOCK_RECORDS,
                    |block| f.push_block(block),
                ),
                _ => oxsort_kernels::gather(ents, r, fixed, out),
            }
            return (buf, len);
        }
        // Sized from the load's mean record, grown if the records are longer; an aligned block
        // of slack stays free for a chained part's shift into place.
        let hint = |idx| job.hint(idx);
        let want = pad
            + ents.len() * mean_record(job.loaded) * PIECE_SLACK_QUARTERS / 4
            + 2 * DIRECT_ALIGN;
        let mut buf = self.buffer(want);
        let (mut done, mut pos) = (0, pad);
        loop {
            let room = buf.len() - DIRECT_ALIGN;
            let (c, b) = match fused {
                Fused::Records(f) => oxsort_kernels::gather_var_with(
                    &ents[done..],
                    hint,
                    locate,
                    &mut buf[pos..room],
                    |rec| f.push(rec),
                ),
                _ => oxsort_kernels::gather_var(&ents[done..], hint, locate, &mut buf[pos..room]),
            };
            done += c;
            pos += b;
            if done == ents.len() {
                return (buf, pos - pad);
            }
            let mut bigger = AlignedBuf::unzeroed(buf.len() * PIECE_GROWTH_HALVES / 2 + (1 << 20));
            bigger[..pos].copy_from_slice(&buf[..pos]);
            buf = bigger;
        }
    }
}

/// How a piece is checked while it is gathered.
enum Fused<'k, 'a> {
    /// After it is gathered, if at all.
    None,
    /// Fixed records: block by block.
    Fixed(FixedCheck<'k>),
    /// Delimited records: record by record.
    Records(OrderBuilder<'k, 'a>),
}

/// The main thread's side: pieces arrive in any order and are written in (part, seq) order.
struct OrderedWriter<'a, 'c> {
    ctx: &'a Ctx<'c>,
    placement: &'a Placement,
    staging: Option<Staging>,
    ready: BTreeMap<(usize, usize), Piece>,
    want: (usize, usize),
    parts: usize,
    done_bytes: u64,
    total_bytes: u64,
    phase: Phase,
    /// Order facts of everything written so far.
    check: OrderCheck,
}

impl<'a, 'c> OrderedWriter<'a, 'c> {
    fn new(
        ctx: &'a Ctx<'c>,
        placement: &'a Placement,
        parts: usize,
        total_bytes: u64,
        phase: Phase,
    ) -> Self {
        let staging =
            matches!(placement, Placement::Streamed).then(|| Staging::new(ctx.g.staging_bytes));
        OrderedWriter {
            ctx,
            placement,
            staging,
            ready: BTreeMap::new(),
            want: (0, 0),
            parts,
            done_bytes: 0,
            total_bytes,
            phase,
            check: OrderCheck::default(),
        }
    }

    fn finished(&self) -> bool {
        self.want.0 == self.parts
    }

    /// Takes a finished piece and writes every piece that is now next in order; a part written
    /// whole gives its token back and moves the turn on.
    fn accept(
        &mut self,
        piece: Piece,
        sink: &mut dyn Sink,
        turn: &Turn,
        tokens: &Sender<()>,
        free: &Sender<AlignedBuf>,
    ) -> Result<()> {
        self.ready.insert((piece.part, piece.seq), piece);
        while let Some(piece) = self.ready.remove(&self.want) {
            self.write(&piece, sink)?;
            self.done_bytes += piece.len as u64;
            self.ctx.reporter.report(self.phase, self.done_bytes, Some(self.total_bytes))?;
            let last = piece.last;
            // (A spare beyond one per worker is freed here.)
            let _ = free.try_send(piece.buf);
            if last {
                self.want = (self.want.0 + 1, 0);
                let _ = tokens.send(());
            } else {
                self.want.1 += 1;
            }
            turn.set(self.want.0, self.want.1);
        }
        Ok(())
    }

    fn write(&mut self, piece: &Piece, sink: &mut dyn Sink) -> Result<()> {
        let data = &piece.buf[piece.pad..piece.pad + piece.len];
        let Some(st) = &mut self.staging else {
            debug_assert!(!matches!(self.placement, Placement::Streamed));
            sink.write(piece.off, data)?;
            self.check.append(&piece.check);
            return Ok(());
        };
        // A duplicate of the last record written starts this piece: drop it.
        let keys = self.ctx.keys;
        let dup = self.check.records > 0
            && piece.check.records > 0
            && self.check.last_key == piece.check.first_key;
        let skip = if dup { keys.records(data).next().map_or(0, <[u8]>::len) } else { 0 };
        st.push(sink, &data[skip..])?;
        if skip == 0 {
            self.check.append(&piece.check);
        } else {
            let mut c = OrderCheck::of(&data[skip..], keys);
            c.dropped = piece.check.dropped + 1;
            c.dropped_checksum =
                piece.check.dropped_checksum + crc32fast::hash(&data[..skip]) as u128;
            self.check.append(&c);
        }
        Ok(())
    }

    /// Writes what is staged.
    fn flush(&mut self, sink: &mut dyn Sink) -> Result<()> {
        if let Some(st) = &mut self.staging {
            st.finish(sink)?;
        }
        Ok(())
    }
}

/// Drops every record whose key equals the one before it (stable: the first of each group is
/// kept), compacting `data` in place. Returns the bytes kept, and the count and CRC32-sum of
/// the records dropped.
pub(crate) fn dedupe(keys: &SortKey, data: &mut [u8], key_buf: &mut Vec<u8>) -> (usize, u64, u128) {
    let bounds: Vec<(usize, usize)> = {
        let mut pos = 0;
        keys.records(data)
            .map(|rec| {
                pos += rec.len();
                (pos - rec.len(), rec.len())
            })
            .collect()
    };
    let Some(&(_, first_len)) = bounds.first() else { return (0, 0, 0) };
    let (mut dropped, mut dropped_sum) = (0u64, 0u128);
    let mut prev = Vec::new();
    keys.full_key(&data[..first_len], &mut prev);
    let mut kept_end = first_len;
    for &(start, len) in &bounds[1..] {
        keys.full_key(&data[start..start + len], key_buf);
        if *key_buf != prev {
            if kept_end != start {
                data.copy_within(start..start + len, kept_end);
            }
            kept_end += len;
            std::mem::swap(&mut prev, key_buf);
        } else {
            dropped += 1;
            dropped_sum += crc32fast::hash(&data[start..start + len]) as u128;
        }
    }
    (kept_end, dropped, dropped_sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxsort_format::{RecordLayout, SortSpec};
    use oxsort_kernels::{entry_prefix, make_entry};
    use oxsort_lang::{GnuArgs, GnuEnv};

    fn lines_key(args: &[&str]) -> SortKey {
        let argv: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        SortSpec {
            key: Some(
                GnuArgs::parse(&argv, &GnuEnv::default()).unwrap().c_locale_options().key_spec(),
            ),
            ..SortSpec::with_layout(RecordLayout::LINES)
        }
        .compile()
        .unwrap()
    }

    #[test]
    fn dedupe_keeps_the_first_of_each_key_and_counts_the_rest() {
        let keys = lines_key(&["-t", ",", "-k1,1", "-s"]);
        let mut data = b"a,1\na,2\nb,3\nb,4\nb,5\nc,6\n".to_vec();
        let dropped_sum: u128 =
            [&b"a,2\n"[..], b"b,4\n", b"b,5\n"].iter().map(|r| crc32fast::hash(r) as u128).sum();
        let (kept, dropped, sum) = dedupe(&keys, &mut data, &mut Vec::new());
        assert_eq!(&data[..kept], b"a,1\nb,3\nc,6\n");
        assert_eq!((dropped, sum), (3, dropped_sum));
        let mut none = Vec::new();
        assert_eq!(dedupe(&keys, &mut none, &mut Vec::new()), (0, 0, 0));
    }

    /// Sorted runs of entries whose prefixes come from `groups` (many equal).
    fn tied_runs(runs: usize, per_run: usize) -> Vec<Vec<Entry>> {
        (0..runs)
            .map(|r| {
                let mut v: Vec<Entry> = (0..per_run)
                    .map(|i| {
                        let mut p = [0u8; 10];
                        p[0] = ((i * 7 + r) % 5) as u8; // five prefixes, each in many records
                        make_entry(&p, (r * per_run + i) as u64)
                    })
                    .collect();
                v.sort_unstable();
                v
            })
            .collect()
    }

    #[test]
    fn parts_never_split_a_group_of_tied_prefixes() {
        let owned = tied_runs(4, 300);
        let runs: Vec<&[Entry]> = owned.iter().map(|v| v.as_slice()).collect();
        let general = lines_key(&["-k1,1n"]);
        for parts in [2, 3, 7, 16] {
            let cuts = cut_parts(&general, &runs, parts, 2);
            let mut total = 0;
            for p in 0..parts {
                // Every prefix of part p is below every prefix of part p + 1.
                let max = (0..runs.len())
                    .flat_map(|j| runs[j][cuts[j][p]..cuts[j][p + 1]].iter())
                    .map(|&e| entry_prefix(e))
                    .max();
                let next_min = (0..runs.len())
                    .flat_map(|j| runs[j][cuts[j][p + 1]..].iter())
                    .map(|&e| entry_prefix(e))
                    .min();
                if let (Some(a), Some(b)) = (max, next_min) {
                    assert!(a < b, "{parts} parts: part {p} shares a prefix with the next");
                }
                total += (0..runs.len()).map(|j| cuts[j][p + 1] - cuts[j][p]).sum::<usize>();
            }
            assert_eq!(total, 1200, "{parts} parts cover every entry once");
        }
        // Raw keys need no such care: the cuts are the kernel's own.
        let raw = SortKey::benchmark();
        assert_eq!(cut_parts(&raw, &runs, 7, 2), oxsort_kernels::par_split_sorted(&runs, 7, 2));
    }
}

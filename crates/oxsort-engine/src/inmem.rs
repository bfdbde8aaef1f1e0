//! The input side of the in-memory sort of one memory-load of records (the whole input in a
//! one-pass plan, one run in a two-pass plan); [`crate::output`] writes the load out.
//!
//! ```text
//!  input phase (overlaps reading)
//!  ───────────────────────────────
//!  chunk c lands ──> worker:
//!    filter, entries (key80 | c<<log2|slot)
//!    CRC32-sum of the kept records
//!    bucket by prefix range ──> microrun c ([`crate::bucket`]; sorted by prefix instead when
//!    the load's keys do not spread over the buckets, or for a merge)
//!    records rewritten in microrun order, slots renumbered ([`crate::rewrite`]; not those
//!    of a mapped file); bucketed fixed records go to their buckets with their entries, in
//!    one pass that reads them in the order read, the entries straight to the arena slot
//! ```
//!
//! An entry's index is `chunk << log2 | slot`: increasing in input order among equal prefixes
//! (so sorting entries as integers is stable) and a shift and a mask away from the record it
//! names. With a general key the prefix may tie; microruns stay in (prefix, index) order and
//! [`crate::output`] breaks ties by whole keys when it sorts each part, so every tied key is
//! built there and only there.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::ScopedJoinHandle;

use crossbeam_channel::unbounded;
use oxsort_format::{Filter, Mode, ReformatProgram, Scratch, SortKey, PREFIX_BYTES};
use oxsort_io::AlignedBuf;
use oxsort_kernels::{make_entry, Entry};

use crate::arena::{segment_entries, EntryArena, Segments};
use crate::bucket::{Bucketing, LoadBuckets};
use crate::error::{EngineError, Result};
use crate::load_rule::{chunk_cost, chunks_at_most, takes_the_rest};
use crate::plan::Geometry;
use crate::progress::{Phase, Reporter};
use crate::rewrite::Rewrite;
use crate::source::{Chunk, ChunkSource};
use crate::stats::Meters;

/// What every in-memory step needs to know: sizes, keys, threads, progress, what to keep.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub(crate) g: &'a Geometry,
    pub(crate) keys: &'a SortKey,
    pub(crate) threads: usize,
    pub(crate) reporter: &'a Reporter,
    pub(crate) meters: &'a Meters,
    pub(crate) filter: Option<&'a Filter>,
    pub(crate) mode: Mode,
    pub(crate) unique: bool,
    /// An INREC that numbers records (`SEQNUM`) runs on the reading thread, in input order,
    /// with this one counter state for the whole sort.
    pub(crate) numbering: Option<&'a Mutex<Scratch>>,
}

/// One memory-load: the chunks as read and one microrun of entries per chunk (sorted, or in
/// bucket order: see `buckets`).
pub(crate) struct Loaded {
    pub(crate) chunks: Vec<AlignedBuf>,
    /// Delimited records: each chunk's record offsets (empty for fixed records).
    pub(crate) offsets: Vec<Vec<u32>>,
    /// Each chunk's microrun: in its slot of `arena`, or in a segment.
    pub(crate) microruns: Vec<Microrun>,
    /// The load's entries (fixed records whose chunk count is bounded), else `None`.
    pub(crate) arena: Option<EntryArena>,
    /// The entries of chunks without a slot: each worker's segments.
    pub(crate) segments: Vec<Vec<AlignedBuf>>,
    /// Where each microrun's buckets are, when the microruns are in bucket order rather than
    /// sorted ([`crate::bucket`]).
    pub(crate) buckets: Option<LoadBuckets>,
    /// Records kept (after the filter).
    pub(crate) records: u64,
    /// CRC32-sum of the records kept.
    pub(crate) checksum: u128,
    /// Records read (before the filter).
    pub(crate) read: u64,
    /// CRC32-sum of the records the filter dropped (read - kept).
    pub(crate) filtered_checksum: u128,
    /// Bytes of the records kept.
    pub(crate) bytes: u64,
}

/// Where one chunk's sorted entries are.
#[derive(Clone, Copy)]
pub(crate) enum Microrun {
    /// No entries (a chunk whose records the filter dropped, or not sorted).
    Empty,
    /// The first `n` entries of the chunk's slot in the load's arena.
    Slot(usize),
    /// `len` entries from `start` of segment `seg` of worker `worker`.
    Seg { worker: usize, seg: usize, start: usize, len: usize },
}

impl Microrun {
    /// How many entries it has.
    fn len(&self) -> usize {
        match self {
            Microrun::Empty => 0,
            Microrun::Slot(n) => *n,
            Microrun::Seg { len, .. } => *len,
        }
    }
}

/// Memory one load is done with that the next one takes over: its entry arena and segments.
#[derive(Default)]
pub(crate) struct SpareEntries {
    arena: Option<EntryArena>,
    segments: Vec<AlignedBuf>,
}

impl Loaded {
    /// The load is written: its chunk buffers go back to `source` for the next load to read
    /// into, and its entry arena and segments are returned for the next load to take over
    /// (fresh memory costs the host's page faults again for every load).
    pub(crate) fn recycle(self, source: &mut ChunkSource) -> SpareEntries {
        for b in self.chunks {
            source.recycle(b);
        }
        SpareEntries { arena: self.arena, segments: self.segments.into_iter().flatten().collect() }
    }

    /// The record an entry's index names: chunk `idx >> log2`, record `idx & (2^log2 - 1)` of
    /// it (`record_size` bytes each, else found by the chunk's offsets).
    #[inline]
    pub(crate) fn record(&self, idx: u64, log2: u32, record_size: Option<usize>) -> &[u8] {
        let c = (idx >> log2) as usize;
        let i = (idx & ((1u64 << log2) - 1)) as usize;
        match record_size {
            Some(r) => &self.chunks[c][i * r..(i + 1) * r],
            None => {
                let o = &self.offsets[c];
                &self.chunks[c][o[i] as usize..o[i + 1] as usize]
            }
        }
    }

    /// Sorts the microruns of chunks `which` (bucketed ones, of a load whose buckets did not
    /// hold).
    fn sort_microruns(&mut self, which: &[usize], threads: usize) {
        let mut runs: Vec<&mut [Entry]> = Vec::with_capacity(which.len());
        let mut in_segments: Vec<(usize, usize, usize, usize)> = Vec::new();
        let mut slots: Vec<(usize, usize)> = Vec::new();
        for &c in which {
            match self.microruns[c] {
                Microrun::Empty => {}
                Microrun::Slot(n) => slots.push((c, n)),
                Microrun::Seg { worker, seg, start, len } => {
                    in_segments.push((worker, seg, start, len))
                }
            }
        }
        if let Some(arena) = self.arena.as_mut() {
            let mut slots = slots.into_iter().peekable();
            for (c, slot) in arena.slots_mut().enumerate() {
                if let Some(&(_, n)) = slots.peek().filter(|&&(sc, _)| sc == c) {
                    runs.push(&mut slot[..n]);
                    slots.next();
                }
            }
        }
        // A segment's microruns lie one after another: split it at each, in order.
        in_segments.sort_unstable();
        let mut segs: Vec<(usize, usize, &mut [Entry])> = Vec::new();
        for (w, bufs) in self.segments.iter_mut().enumerate() {
            for (i, b) in bufs.iter_mut().enumerate() {
                segs.push((w, i, b.as_u128s_mut()));
            }
        }
        let mut at = 0;
        for (w, i, mut rest) in segs {
            let mut base = 0;
            while let Some(&(sw, si, start, len)) = in_segments.get(at) {
                if (sw, si) != (w, i) {
                    break;
                }
                let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - base);
                let (run, tail) = tail.split_at_mut(len);
                runs.push(run);
                rest = tail;
                base = start + len;
                at += 1;
            }
        }
        crate::bucket::sort_all(runs, threads);
    }

    /// The microruns, chunk by chunk.
    pub(crate) fn runs(&self) -> Vec<&[Entry]> {
        self.microruns
            .iter()
            .enumerate()
            .map(|(c, m)| match *m {
                Microrun::Empty => &[][..],
                Microrun::Slot(n) => self.arena.as_ref().expect("an arena for slots").get(c, n),
                Microrun::Seg { worker, seg, start, len } => {
                    &self.segments[worker][seg].as_u128s()[start..start + len]
                }
            })
            .collect()
    }
}

/// What a worker learned about one chunk besides its entries.
struct ChunkFacts {
    checksum: u128,
    /// Bytes of the records kept.
    bytes: u64,
    read: u64,
    /// CRC32-sum of the records the filter dropped.
    filtered_checksum: u128,
    /// Merge mode: whole keys of the first and last kept record, and the first record (in the
    /// file, 0-based) smaller than the one before it.
    first_key: Vec<u8>,
    last_key: Vec<u8>,
    unordered_at: Option<u64>,
}

/// Builds the entries of one chunk's records, applying the filter, in input order.
fn chunk_entries(
    ctx: &Ctx<'_>,
    c: usize,
    chunk: &Chunk,
    out: &mut Vec<Entry>,
) -> Result<ChunkFacts> {
    let keys = ctx.keys;
    let fixed_size = keys.record_size();
    let data = match fixed_size {
        Some(r) => &chunk.buf[..chunk.records * r],
        None => &chunk.buf[..chunk.offsets[chunk.records] as usize],
    };
    let base = (c as u64) << ctx.g.chunk_log2;
    let mut facts = ChunkFacts {
        checksum: 0,
        bytes: 0,
        read: chunk.records as u64,
        filtered_checksum: 0,
        first_key: Vec::new(),
        last_key: Vec::new(),
        unordered_at: None,
    };
    if let (Some(r), Some(offset), None, Mode::Sort) =
        (fixed_size, keys.full_prefix_offset(), ctx.filter, ctx.mode)
    {
        // The fast path: raw 10-byte keys, every record kept. A block's entries are taken and
        // its CRCs summed while it is in cache: one pass over the chunk from memory, not two.
        let block = crate::verify::FixedCheck::BLOCK_RECORDS * r;
        for (b, recs) in data.chunks(block).enumerate() {
            let first = base + (b * crate::verify::FixedCheck::BLOCK_RECORDS) as u64;
            oxsort_kernels::extract_entries(recs, r, offset, first, out);
            facts.checksum += crate::verify::checksum_records(recs, r);
        }
        facts.bytes = data.len() as u64;
        return Ok(facts);
    }
    if let (Some(t), true, None, Mode::Sort) =
        (keys.layout().terminator(), keys.is_raw_lines(), ctx.filter, ctx.mode)
    {
        // The same for lines whose key is the whole line: a block's entries (prefixes loaded
        // straight from the chunk, no key built) and its CRCs, while its lines are in cache.
        let block = crate::verify::FixedCheck::BLOCK_RECORDS;
        let offs = &chunk.offsets[..=chunk.records];
        for from in (0..chunk.records).step_by(block) {
            let offs = &offs[from..=(from + block).min(chunk.records)];
            oxsort_kernels::extract_line_entries(data, offs, t, base + from as u64, out);
            let lines = offs.windows(2).map(|w| &data[w[0] as usize..w[1] as usize]);
            facts.checksum += oxsort_kernels::crc32_sum(lines);
        }
        facts.bytes = data.len() as u64;
        return Ok(facts);
    }
    let mut scratch = Vec::new();
    let mut prev: Vec<u8> = Vec::new();
    let key_error = |i: usize, source| EngineError::Key {
        path: PathBuf::from(&*chunk.name),
        record: chunk.first_record + i as u64 + 1,
        source,
    };
    // Delimited chunks come with their records' offsets: no need to search for terminators again.
    let offs = &chunk.offsets;
    let line = |w: &[u32]| &data[w[0] as usize..w[1] as usize];
    let recs: Box<dyn Iterator<Item = &[u8]>> = match fixed_size {
        None => Box::new(offs.windows(2).map(line)),
        Some(_) => Box::new(keys.records(data)),
    };
    // Every record kept: a block's CRCs are summed right after its entries, while its records
    // are in cache (a pass over the whole chunk after would read it from memory again).
    let by_block = ctx.filter.is_none();
    let block = crate::verify::FixedCheck::BLOCK_RECORDS;
    let crc_of = |from: usize, to: usize| match fixed_size {
        Some(r) => crate::verify::checksum_records(&data[from * r..to * r], r),
        None => oxsort_kernels::crc32_sum(offs[from..=to].windows(2).map(line)),
    };
    for (i, rec) in recs.enumerate() {
        if let Some(f) = ctx.filter {
            if !f.matches(keys.key_part(rec)).map_err(|e| key_error(i, e))? {
                facts.filtered_checksum += crc32fast::hash(rec) as u128;
                continue;
            }
        }
        if ctx.filter.is_some() {
            // Without a filter, records are summed a block at a time (below).
            facts.checksum += crc32fast::hash(rec) as u128;
            facts.bytes += rec.len() as u64;
        }
        let prefix = if ctx.mode == Mode::Copy {
            [0u8; PREFIX_BYTES]
        } else {
            keys.prefix(rec, &mut scratch).map_err(|e| key_error(i, e))?
        };
        if ctx.mode == Mode::Merge {
            keys.full_key(rec, &mut scratch);
            if out.is_empty() {
                facts.first_key = scratch.clone();
            } else if facts.unordered_at.is_none() && prev > scratch {
                facts.unordered_at = Some(chunk.first_record + i as u64);
            }
            std::mem::swap(&mut prev, &mut scratch);
        }
        out.push(make_entry(&prefix, base + i as u64));
        if by_block && (i + 1) % block == 0 {
            facts.checksum += crc_of(i + 1 - block, i + 1);
        }
    }
    if ctx.mode == Mode::Merge {
        facts.last_key = prev;
    }
    if by_block {
        let records = chunk.records;
        facts.checksum += crc_of(records - records % block, records);
        facts.bytes = data.len() as u64;
    }
    Ok(facts)
}

/// Whether a chunk's records are rewritten in sorted order ([`crate::rewrite`]): when the plan
/// has the workers' spare buffers (not for a copy, whose records are not sorted, nor a budget
/// too small for them), and the records were read into memory of the sort's own, or are a
/// file's mapped pages (a tmpfs file's) and the hugetlb pool has room for a copy of them.
/// Mapped pages are not written to: the rewrite takes a new buffer for them, which with fresh
/// memory would cost a fault per 4 KiB (the gather reads from the mapping then); from the
/// pool it costs the copy only, and the output's gather reads from 2 MiB pages in order.
fn rewrites(ctx: &Ctx<'_>, chunk: &Chunk) -> bool {
    ctx.g.rewrite_bytes > 0
        && (!chunk.buf.is_file_mapping()
            || oxsort_io::bigmem::pool_free() >= chunk.buf.len() as u64)
}

/// INREC: the records of a chunk of fixed records that the filter keeps, reshaped; with the
/// count of records read and the CRC32-sum of those the filter dropped. Records that do not
/// grow are reshaped in place, in the buffer they were read into: the buffer goes back to the
/// source for the next load, where a new one would cost a page fault per 4 KiB of fresh memory.
/// Records that grow go to a new buffer, and so do the records of a mapped piece of a file: a
/// write into the mapping would copy each of its 4 KiB pages first (a private mapping's
/// copy-on-write), where a new buffer takes only the reshaped bytes, in large pages. On an error
/// the chunk comes back (its records possibly reshaped up to the bad one) with the error.
/// With a filter, the last value also says where in the chunk as read each kept record was
/// (for error messages).
///
/// ```text
///  in place (out <= r):  | r0 | r1 | r2 | r3 |...      record i is read at i*r, its reshaped
///                        |o0|o1|o2|..                  form written at kept*out <= i*r (through
///                                                       a one-record buffer, as they may overlap)
/// ```
#[allow(clippy::result_large_err)]
fn reshape(
    ctx: &Ctx<'_>,
    program: &ReformatProgram,
    mut chunk: Chunk,
    scratch: &mut Scratch,
) -> Reshaped {
    let (r, out) = (program.in_len(), program.out_len());
    let apart = out > r || chunk.buf.is_file_mapping();
    let mut grown = apart.then(|| AlignedBuf::new(chunk.records * out));
    let mut one = vec![0u8; if grown.is_some() { 0 } else { out }];
    let mut kept = 0usize;
    let mut dropped = 0u128;
    let error = |i: usize, source| EngineError::Key {
        path: PathBuf::from(&*chunk.name),
        record: chunk.first_record + i as u64 + 1,
        source,
    };
    let mut failed = None;
    let mut kept_at = Vec::new();
    // A BUILD of fields moving forward (a record cut to the bytes a job reads), in the buffer
    // read: the fields moved straight to their place, records packed front to back (no
    // scratch record and copy back).
    let cut = program.only_copies().filter(|f| grown.is_none() && oxsort_bytes::fields_pack(f, r));
    for i in 0..chunk.records {
        let rec = &chunk.buf[i * r..(i + 1) * r];
        if let Some(f) = ctx.filter {
            match f.matches(rec) {
                Ok(true) => {}
                Ok(false) => {
                    dropped += crc32fast::hash(rec) as u128;
                    continue;
                }
                Err(e) => {
                    failed = Some(error(i, e));
                    break;
                }
            }
        }
        let to = kept * out..(kept + 1) * out;
        let applied = match (cut, grown.as_mut()) {
            (Some(fields), _) => {
                oxsort_bytes::cut_in_place(&mut chunk.buf, i * r, to.start, fields);
                Ok(())
            }
            (None, Some(buf)) => program.apply(rec, &mut buf[to], scratch),
            (None, None) => program.apply(rec, &mut one, scratch).map(|()| {
                chunk.buf[to].copy_from_slice(&one);
            }),
        };
        if let Err(e) = applied {
            failed = Some(error(i, e));
            break;
        }
        if ctx.filter.is_some() {
            kept_at.push(i as u32);
        }
        kept += 1;
    }
    if let Some(e) = failed {
        return Err((chunk, e));
    }
    let read = chunk.records as u64;
    let buf = grown.unwrap_or(chunk.buf);
    let reshaped = Chunk { buf, records: kept, offsets: Vec::new(), ..chunk };
    Ok((reshaped, read, dropped, kept_at))
}

/// A chunk for the workers: as read, or already reshaped by an INREC that numbers records
/// (with what [`reshape`] returns).
#[allow(clippy::large_enum_variant)]
enum Job {
    Read(Chunk),
    Reshaped(Reshaped),
}

/// What [`reshape`] returns: the reshaped chunk, records read, the CRC32-sum of those dropped,
/// and where each kept record was; or the chunk and the error.
type Reshaped = std::result::Result<(Chunk, u64, u128, Vec<u32>), (Chunk, EngineError)>;

/// A key error of a reshaped chunk names the record by its number among the records kept:
/// give it the number it has in the input.
fn renumber(e: EngineError, chunk: &Chunk, kept_at: &[u32]) -> EngineError {
    match e {
        EngineError::Key { path, record, source } if !kept_at.is_empty() => {
            let kept = (record - chunk.first_record - 1) as usize;
            let record =
                chunk.first_record + kept_at.get(kept).map_or(kept as u64, |&i| i as u64) + 1;
            EngineError::Key { path, record, source }
        }
        e => e,
    }
}

/// Reads up to `max_chunks` chunks, sorting each into a microrun on the worker threads while the
/// next ones are read. Returns the load and whether the source is exhausted.
pub(crate) fn load(
    ctx: &Ctx<'_>,
    source: &mut ChunkSource,
    max_chunks: u64,
    total: Option<u64>,
    slots: Option<u64>,
    spare: SpareEntries,
) -> Result<(Loaded, bool)> {
    // Memory a load may hold: chunk buffers, and per record its entries (see
    // `Geometry::entry_bytes`; and an offset for delimited records, whose count per chunk
    // varies).
    let budget = ctx.g.arena_bytes;
    let mut used = 0u64;
    let read_before = source.bytes_read;
    let log2 = ctx.g.chunk_log2;
    let max_chunks = chunks_at_most(max_chunks, log2);
    // Fixed records (the only ones with `slots`): a chunk holds at most 2^log2 of them, so a
    // bounded load's entries fit one arena (see `arena`); delimited chunks vary, and go to
    // their workers' segments.
    // The arena of the load before, when it has the slots this one needs: fresh memory costs
    // the host's page faults again for every run.
    let mut arena = slots.map(|n| {
        let (n, slot_len) = (n.min(max_chunks) as usize, 1 << log2);
        match spare.arena {
            Some(a) if a.holds(n, slot_len) => a,
            _ => EntryArena::new(n, slot_len),
        }
    });
    let mut slots = arena.as_mut().map(|a| a.slots_mut());
    // Chunks without a slot (delimited records, or past a bound that was short) go to their
    // worker's segments, new ones or those of the load before.
    let spare_segments = Mutex::new(spare.segments);
    let seg_entries = segment_entries(budget);
    type Done = (usize, Chunk, Microrun, Result<ChunkFacts>, Option<Vec<u32>>);
    // Set from the first chunk before any chunk goes to a worker.
    let bucketing: std::sync::OnceLock<Option<Bucketing>> = std::sync::OnceLock::new();
    let (job_tx, job_rx) = unbounded::<(usize, Job, Option<&mut [Entry]>)>();
    let (res_tx, res_rx) = unbounded::<Done>();
    let mut exhausted = false;
    let mut sent = 0usize;
    let (read_result, segments) = std::thread::scope(|s| {
        let mut workers: Vec<ScopedJoinHandle<'_, Vec<AlignedBuf>>> = Vec::new();
        for worker in 0..ctx.threads {
            let job_rx = job_rx.clone();
            let res_tx = res_tx.clone();
            let spare_segments = &spare_segments;
            let bucketing = &bucketing;
            workers.push(s.spawn(move || {
                let _meter = ctx.meters.meter("sort");
                let mut scratch = Scratch::default();
                // Built here, then copied into the chunk's slot or this worker's segments:
                // this vector's pages are touched once per worker, not once per chunk.
                let mut built: Vec<Entry> = Vec::new();
                let mut segs = Segments::new(seg_entries);
                // What a chunk's records are rewritten into, in sorted order.
                let mut rewrite = Rewrite::default();
                // Where a chunk's entries are bucketed into.
                let mut tmp: Vec<Entry> = Vec::new();
                for (c, job, slot) in job_rx {
                    // INREC reshapes here, unless the reading thread did (numbering).
                    let job = match (job, ctx.keys.inrec()) {
                        (Job::Read(chunk), Some(program)) => {
                            Job::Reshaped(reshape(ctx, program, chunk, &mut scratch))
                        }
                        (job, _) => job,
                    };
                    built.clear();
                    let (mut chunk, facts) = match job {
                        Job::Read(chunk) => {
                            built.reserve(chunk.records);
                            let facts = chunk_entries(ctx, c, &chunk, &mut built);
                            (chunk, facts)
                        }
                        Job::Reshaped(Ok((chunk, read, dropped, kept_at))) => {
                            built.reserve(chunk.records);
                            // The filter ran on the records as read, before INREC.
                            let reshaped = Ctx { filter: None, ..*ctx };
                            let facts = chunk_entries(&reshaped, c, &chunk, &mut built)
                                .map(|f| ChunkFacts { read, filtered_checksum: dropped, ..f })
                                .map_err(|e| renumber(e, &chunk, &kept_at));
                            (chunk, facts)
                        }
                        Job::Reshaped(Err((chunk, e))) => (chunk, Err(e)),
                    };
                    let base = (c as u64) << ctx.g.chunk_log2;
                    let rewrite_now = facts.is_ok() && rewrites(ctx, &chunk);
                    let mut rewritten = false;
                    // Bucketed entries go straight to the chunk's arena slot when it holds them.
                    let mut in_slot = false;
                    let mut slot = slot;
                    // In bucket order, or by prefix (then index) only: the output sorts each
                    // part's entries and orders tied prefixes there, once; here the order only
                    // has to let the parts be cut by value. A copy keeps input order.
                    let starts = match (facts.is_ok(), ctx.mode, bucketing.get()) {
                        (false, _, _) | (true, Mode::Copy, _) => None,
                        (true, _, Some(Some(b))) => match b.count(&built) {
                            // Tripped (see `Bucketing::count`): sorted by prefix.
                            None => {
                                oxsort_kernels::sort_entries(&mut built);
                                None
                            }
                            Some(starts) => {
                                let n = built.len();
                                // (Not when a rewrite in entry order follows: it renumbers them.)
                                let fused = rewrite_now && ctx.keys.record_size().is_some();
                                let dst = match slot.as_deref_mut() {
                                    Some(s) if s.len() >= n && (fused || !rewrite_now) => {
                                        in_slot = true;
                                        &mut s[..n]
                                    }
                                    // Every place is written: only a longer chunk grows it.
                                    _ => {
                                        tmp.resize(n, 0);
                                        &mut tmp[..]
                                    }
                                };
                                match ctx.keys.record_size() {
                                    // Fixed records to rewrite: each goes to its bucket with
                                    // its entry, the records read in the order read, one pass.
                                    Some(size) if fused => {
                                        let (log2, b) = (ctx.g.chunk_log2, b.bucketer());
                                        rewrite.fill_fixed(&mut chunk, n, size, |src, out| {
                                            b.place_records(
                                                &built, &starts, src, size, log2, base, dst, out,
                                            );
                                        });
                                        rewritten = true;
                                    }
                                    _ => b.bucketer().place(&built, &starts, dst),
                                }
                                if !in_slot {
                                    std::mem::swap(&mut built, &mut tmp);
                                }
                                Some(starts)
                            }
                        },
                        (true, _, _) => {
                            oxsort_kernels::sort_entries(&mut built);
                            None
                        }
                    };
                    if rewrite_now && !rewritten {
                        rewrite.apply(
                            &mut chunk,
                            &mut built,
                            base,
                            ctx.g.chunk_log2,
                            ctx.keys.record_size(),
                        );
                    }
                    let entries = match slot {
                        _ if in_slot => Microrun::Slot(built.len()),
                        Some(slot) if built.len() <= slot.len() => {
                            slot[..built.len()].copy_from_slice(&built);
                            Microrun::Slot(built.len())
                        }
                        _ if built.is_empty() => Microrun::Empty,
                        _ => {
                            let (seg, start) = segs.push(&built, spare_segments);
                            Microrun::Seg { worker, seg, start, len: built.len() }
                        }
                    };
                    if res_tx.send((c, chunk, entries, facts, starts)).is_err() {
                        break;
                    }
                }
                segs.into_buffers()
            }));
        }
        drop(res_tx);
        let mut result = Ok(());
        while (sent as u64) < max_chunks {
            match source.next_chunk() {
                Ok(Some(chunk)) => {
                    // With INREC the chunk is kept at the size of its reshaped records.
                    let kept = match ctx.keys.inrec() {
                        Some(p) => (chunk.records * p.out_len()).max(chunk.buf.len()),
                        None => chunk.buf.len(),
                    };
                    let cost = chunk_cost(
                        kept,
                        chunk.records,
                        chunk.offsets.capacity(),
                        ctx.g.entry_bytes,
                    );
                    if sent > 0
                        && used + cost > budget
                        && !takes_the_rest(
                            used + cost,
                            source.bytes_read - read_before,
                            total.map(|t| t.saturating_sub(source.bytes_read)),
                            budget + ctx.g.read_ahead_bytes,
                        )
                    {
                        source.push_back(chunk);
                        break;
                    }
                    used += cost;
                    let job = match (ctx.keys.inrec(), ctx.numbering) {
                        (Some(program), Some(numbering)) => {
                            let mut scratch = numbering.lock().unwrap_or_else(|e| e.into_inner());
                            Job::Reshaped(reshape(ctx, program, chunk, &mut scratch))
                        }
                        _ => Job::Read(chunk),
                    };
                    let slot = slots.as_mut().and_then(|s| s.next());
                    bucketing.get_or_init(|| match &job {
                        Job::Read(chunk) => {
                            Bucketing::of(ctx.keys, ctx.mode, ctx.threads, ctx.g, chunk)
                        }
                        Job::Reshaped(_) => None,
                    });
                    let _ = job_tx.send((sent, job, slot));
                    sent += 1;
                    if let Err(e) = ctx.reporter.report(Phase::Input, source.bytes_read, total) {
                        result = Err(e);
                        break;
                    }
                }
                Ok(None) => {
                    exhausted = true;
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        drop(job_tx);
        let segments = workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect();
        (result, segments)
    });
    drop(job_rx);
    let mut chunks: Vec<Option<Chunk>> = (0..sent).map(|_| None).collect();
    drop(slots);
    let mut microruns: Vec<Microrun> = vec![Microrun::Empty; sent];
    let mut facts: Vec<Option<ChunkFacts>> = (0..sent).map(|_| None).collect();
    let mut starts: Vec<Option<Vec<u32>>> = (0..sent).map(|_| None).collect();
    let mut first_error = None;
    for (c, chunk, entries, f, s) in res_rx {
        chunks[c] = Some(chunk);
        microruns[c] = entries;
        starts[c] = s;
        match f {
            Ok(f) => facts[c] = Some(f),
            Err(e) => {
                // Report the error of the earliest chunk: the first bad record in input order.
                if first_error.as_ref().is_none_or(|(fc, _)| c < *fc) {
                    first_error = Some((c, e));
                }
            }
        }
    }
    read_result?;
    if let Some((_, e)) = first_error {
        return Err(e);
    }
    let mut loaded = Loaded {
        chunks: Vec::with_capacity(sent),
        offsets: Vec::with_capacity(sent),
        microruns,
        arena,
        segments,
        buckets: None,
        records: 0,
        checksum: 0,
        read: 0,
        filtered_checksum: 0,
        bytes: 0,
    };
    let mut prev_last: Option<(Arc<str>, Vec<u8>)> = None;
    for (c, (chunk, f)) in chunks.into_iter().zip(facts).enumerate() {
        let (chunk, f) = match (chunk, f) {
            (Some(ch), Some(f)) => (ch, f),
            _ => return Err(EngineError::Internal("a chunk worker stopped".into())),
        };
        loaded.records += loaded.microruns[c].len() as u64;
        loaded.checksum += f.checksum;
        loaded.read += f.read;
        loaded.filtered_checksum += f.filtered_checksum;
        loaded.bytes += f.bytes;
        if ctx.mode == Mode::Merge {
            check_merge_order(&chunk, &f, &mut prev_last)?;
        }
        loaded.chunks.push(chunk.buf);
        loaded.offsets.push(chunk.offsets);
    }
    if let Some(b) = bucketing.into_inner().flatten() {
        let lens: Vec<usize> = loaded.microruns.iter().map(Microrun::len).collect();
        match b.finish(starts, &lens, ctx.g.part_records) {
            Ok(buckets) => loaded.buckets = Some(buckets),
            Err(unsorted) => loaded.sort_microruns(&unsorted, ctx.threads),
        }
    }
    if !exhausted {
        // The load is full; the source may still be empty (input size a multiple of a run).
        exhausted = source.is_exhausted()?;
    }
    Ok((loaded, exhausted))
}

/// Merge mode: each input must be in key order, within chunks and across them.
fn check_merge_order(
    chunk: &Chunk,
    f: &ChunkFacts,
    prev_last: &mut Option<(Arc<str>, Vec<u8>)>,
) -> Result<()> {
    let unordered =
        |record: u64| EngineError::Unordered { path: PathBuf::from(&*chunk.name), record };
    if let Some((name, last)) = prev_last {
        if Arc::ptr_eq(name, &chunk.name) && !f.first_key.is_empty() && *last > f.first_key {
            // The chunk's first kept record is out of order; its number is not kept, so name the
            // chunk's first record (a filter may have dropped some before it).
            return Err(unordered(chunk.first_record + 1));
        }
    }
    if let Some(at) = f.unordered_at {
        return Err(unordered(at + 1));
    }
    if !f.last_key.is_empty() {
        *prev_last = Some((chunk.name.clone(), f.last_key.clone()));
    }
    Ok(())
}

//! The in-memory sort of one memory-load of records: the whole input in a one-pass plan, one
//! run in a two-pass plan.
//!
//! ```text
//!  input phase (overlaps reading)          output phase (overlaps writing)
//!  ───────────────────────────────         ───────────────────────────────────────────────
//!  chunk c lands ──> worker:               split_sorted(microruns) ──> parts 0..P (by value)
//!    filter, entries (key80 | c<<log2|slot)  worker, part p (in order, bounded window):
//!    CRC32-sum of the kept records            collect its slice of every microrun, sort,
//!    sort ──> microrun c                      gather records (in pieces of ≤ part_records),
//!                                             check order + CRC-sum (drop duplicates: -u)
//!                                          main: write pieces in order
//! ```
//!
//! An entry's index is `chunk << log2 | slot`: increasing in input order (so sorting entries as
//! integers is stable) and a shift and a mask away from the record it names. With a general key
//! the prefix may tie; ties are broken by whole keys, and part boundaries are moved so that no
//! group of equal prefixes is cut in two (the groups' order is only known by whole keys).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crossbeam_channel::{bounded, unbounded};
use oxsort_io::AlignedBuf;
use oxsort_kernels::{make_entry, Entry, INDEX_BITS};

use crate::config::Mode;
use crate::error::{EngineError, Result};
use crate::keys::Keys;
use crate::plan::Geometry;
use crate::progress::{Phase, Reporter};
use crate::sink::{Sink, Staging};
use crate::source::{Chunk, ChunkSource};
use crate::tuning::{MIN_PARTS_PER_THREAD, PARTS_IN_FLIGHT_PER_THREAD};
use crate::verify::{OrderBuilder, OrderCheck};

/// What every in-memory step needs to know: sizes, keys, threads, progress, what to keep.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub(crate) g: &'a Geometry,
    pub(crate) keys: &'a Keys,
    pub(crate) threads: usize,
    pub(crate) reporter: &'a Reporter,
    pub(crate) filter: Option<&'a oxsort_format::Filter>,
    pub(crate) mode: Mode,
    pub(crate) unique: bool,
}

/// One memory-load: the chunks as read and one sorted microrun of entries per chunk.
pub(crate) struct Loaded {
    pub(crate) chunks: Vec<AlignedBuf>,
    /// Delimited records: each chunk's record offsets (empty for fixed records).
    pub(crate) offsets: Vec<Vec<u32>>,
    pub(crate) microruns: Vec<Vec<Entry>>,
    /// Records kept (after the filter).
    pub(crate) records: u64,
    /// CRC32-sum of the records kept.
    pub(crate) checksum: u128,
    /// Records read (before the filter).
    pub(crate) read: u64,
    /// Bytes of the records kept.
    pub(crate) bytes: u64,
}

/// What a worker learned about one chunk besides its entries.
struct ChunkFacts {
    checksum: u128,
    /// Bytes of the records kept.
    bytes: u64,
    read: u64,
    /// Merge mode: whole keys of the first and last kept record, and the first record (in the
    /// file, 0-based) smaller than the one before it.
    first_key: Vec<u8>,
    last_key: Vec<u8>,
    unordered_at: Option<u64>,
}

/// Builds the entries of one chunk's records, applying the filter, and sorts them.
fn chunk_entries(
    ctx: &Ctx<'_>,
    c: usize,
    chunk: &Chunk,
    out: &mut Vec<Entry>,
) -> Result<ChunkFacts> {
    let keys = ctx.keys;
    let r = keys.fmt.record_size;
    let delimited = keys.delim.is_some();
    let data = if delimited {
        &chunk.buf[..chunk.offsets[chunk.records] as usize]
    } else {
        &chunk.buf[..chunk.records * r]
    };
    let base = (c as u64) << ctx.g.chunk_log2;
    let mut facts = ChunkFacts {
        checksum: 0,
        bytes: 0,
        read: chunk.records as u64,
        first_key: Vec::new(),
        last_key: Vec::new(),
        unordered_at: None,
    };
    let plain = ctx.filter.is_none() && !keys.general() && ctx.mode != Mode::Copy && !delimited;
    if plain && keys.fmt.key_len == oxsort_kernels::PREFIX_BYTES && ctx.mode == Mode::Sort {
        // The fast path: raw 10-byte keys, every record kept.
        oxsort_kernels::extract_entries(data, r, keys.fmt.key_offset, base, out);
        facts.checksum = crate::verify::checksum_records(data, r);
        facts.bytes = data.len() as u64;
        oxsort_kernels::sort_entries(out);
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
    let recs: Box<dyn Iterator<Item = &[u8]>> = if delimited {
        Box::new(offs.windows(2).map(|w| &data[w[0] as usize..w[1] as usize]))
    } else {
        Box::new(keys.records(data))
    };
    for (i, rec) in recs.enumerate() {
        if let Some(f) = ctx.filter {
            if !f.matches(keys.key_part(rec)).map_err(|e| key_error(i, e))? {
                continue;
            }
        }
        facts.checksum += crc32fast::hash(rec) as u128;
        facts.bytes += rec.len() as u64;
        let prefix = if ctx.mode == Mode::Copy {
            [0u8; 10]
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
    }
    if ctx.mode == Mode::Merge {
        facts.last_key = prev;
    }
    if ctx.mode != Mode::Copy {
        let mask = (1u64 << ctx.g.chunk_log2) - 1;
        if delimited {
            let offs = &chunk.offsets;
            sort_microrun(keys, out, |idx| {
                let i = (idx & mask) as usize;
                &data[offs[i] as usize..offs[i + 1] as usize]
            });
        } else {
            sort_microrun(keys, out, |idx| {
                let s = (idx & mask) as usize * r;
                &data[s..s + r]
            });
        }
    }
    Ok(facts)
}

/// Sorts entries by key: integer order on the fast path, whole keys for tied prefixes otherwise.
fn sort_microrun<'a>(keys: &Keys, v: &mut [Entry], locate: impl Fn(u64) -> &'a [u8] + Sync) {
    if keys.general() {
        oxsort_kernels::sort_entries_with_ties(v, &|a, b| keys.cmp_full(locate(a), locate(b)));
    } else {
        oxsort_kernels::sort_entries(v);
    }
}

/// Reads up to `max_chunks` chunks, sorting each into a microrun on the worker threads while the
/// next ones are read. Returns the load and whether the source is exhausted.
pub(crate) fn load(
    ctx: &Ctx<'_>,
    source: &mut ChunkSource,
    max_chunks: u64,
    total: Option<u64>,
) -> Result<(Loaded, bool)> {
    // Memory a load may hold: chunk buffers, and per record an entry (and an offset for
    // delimited records, whose count per chunk varies).
    let budget = ctx.g.arena_bytes;
    let mut used = 0u64;
    let log2 = ctx.g.chunk_log2;
    // An entry's index holds the chunk number above the slot bits: a load never has more chunks
    // than that can name (a one-pass plan that would becomes a run of a two-pass sort).
    let max_chunks = max_chunks.min(1u64 << (INDEX_BITS - log2));
    type Done = (usize, Chunk, Vec<Entry>, Result<ChunkFacts>);
    let (job_tx, job_rx) = unbounded::<(usize, Chunk)>();
    let (res_tx, res_rx) = unbounded::<Done>();
    let mut exhausted = false;
    let mut sent = 0usize;
    let read_result: Result<()> = std::thread::scope(|s| {
        for _ in 0..ctx.threads {
            let job_rx = job_rx.clone();
            let res_tx = res_tx.clone();
            s.spawn(move || {
                let _meter = crate::stats::ThreadMeter::new("sort");
                for (c, chunk) in job_rx {
                    let mut entries = Vec::with_capacity(chunk.records);
                    let facts = chunk_entries(ctx, c, &chunk, &mut entries);
                    if res_tx.send((c, chunk, entries, facts)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(res_tx);
        let mut result = Ok(());
        while (sent as u64) < max_chunks {
            match source.next_chunk() {
                Ok(Some(chunk)) => {
                    let cost = chunk.buf.len() as u64
                        + chunk.records as u64 * crate::tuning::ENTRY_BYTES
                        + 4 * chunk.offsets.len() as u64;
                    if sent > 0 && used + cost > budget {
                        source.push_back(chunk);
                        break;
                    }
                    used += cost;
                    let _ = job_tx.send((sent, chunk));
                    sent += 1;
                    ctx.reporter.report(Phase::Input, source.bytes_read, total);
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
        result
    });
    drop(job_rx);
    let mut chunks: Vec<Option<Chunk>> = (0..sent).map(|_| None).collect();
    let mut microruns: Vec<Vec<Entry>> = (0..sent).map(|_| Vec::new()).collect();
    let mut facts: Vec<Option<ChunkFacts>> = (0..sent).map(|_| None).collect();
    let mut first_error = None;
    for (c, chunk, entries, f) in res_rx {
        chunks[c] = Some(chunk);
        microruns[c] = entries;
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
        records: 0,
        checksum: 0,
        read: 0,
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
        loaded.bytes += f.bytes;
        if ctx.mode == Mode::Merge {
            check_merge_order(&chunk, &f, &mut prev_last)?;
        }
        loaded.chunks.push(chunk.buf);
        loaded.offsets.push(chunk.offsets);
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

/// Cut positions of the parts: equal-sized by value, then moved so that a group of equal
/// prefixes is never split when prefixes may tie (general keys).
fn cut_parts(keys: &Keys, runs: &[&[Entry]], parts: usize, threads: usize) -> Vec<Vec<usize>> {
    let mut cuts = oxsort_kernels::par_split_sorted(runs, parts, threads);
    if !keys.general() {
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

/// One finished piece of a part: its bytes, where they go, and what they hold.
struct Piece {
    part: usize,
    seq: usize,
    last: bool,
    buf: AlignedBuf,
    pad: usize,
    len: usize,
    /// Where the piece goes in the output (unless staged).
    off: u64,
    check: OrderCheck,
}

/// Writes the load's records in sorted order to `sink` and returns the order facts of what was
/// written when `verify` is set (duplicates are dropped first with `unique`).
pub(crate) fn emit(
    ctx: &Ctx<'_>,
    loaded: &Loaded,
    sink: &mut dyn Sink,
    verify: bool,
    phase: Phase,
) -> Result<OrderCheck> {
    let Ctx { g, keys, threads, reporter, .. } = *ctx;
    let r = keys.fmt.record_size;
    let n = loaded.records;
    let mut check = OrderCheck::default();
    if n == 0 {
        return Ok(check);
    }
    let runs: Vec<&[Entry]> = loaded.microruns.iter().map(|v| v.as_slice()).collect();
    let parts = (threads * MIN_PARTS_PER_THREAD).max(n.div_ceil(g.part_records as u64) as usize);
    let cuts = cut_parts(keys, &runs, parts, threads);
    let sizes: Vec<usize> =
        (0..parts).map(|p| cuts.iter().map(|c| c[p + 1] - c[p]).sum::<usize>()).collect();
    let delimited = keys.delim.is_some();
    let log2 = g.chunk_log2;
    let mask = (1u64 << log2) - 1;
    let chunks = &loaded.chunks;
    let chunk_offsets = &loaded.offsets;
    let locate = move |idx: u64| -> &[u8] {
        let c = (idx >> log2) as usize;
        let i = (idx & mask) as usize;
        if delimited {
            let o = &chunk_offsets[c];
            &chunks[c][o[i] as usize..o[i + 1] as usize]
        } else {
            &chunks[c][i * r..(i + 1) * r]
        }
    };
    // What `locate` reads to find a delimited record: its offset, a random miss of its own.
    let hint = move |idx: u64| {
        let c = (idx >> log2) as usize;
        oxsort_kernels::prefetch_read(&chunk_offsets[c][(idx & mask) as usize]);
    };
    // Every part's place in the output is known before any is built: parts of fixed records
    // hold records × size bytes; parts of delimited records add up their records' lengths (on
    // all threads). With -u sizes are known only piece by piece: pieces are then staged and
    // written in sequence.
    let unique = ctx.unique;
    let streamed = unique;
    // Parts of fixed records have known sizes: each goes straight to its offset. A part of
    // delimited records learns its size as it is gathered; its place is the end of the part
    // before it (`ends`), which the worker waits for before shifting its first piece there.
    let mut offsets = Vec::with_capacity(parts + 1);
    let mut acc = 0u64;
    for s in &sizes {
        offsets.push(acc);
        acc += if delimited { 0 } else { (s * r) as u64 };
    }
    offsets.push(acc);
    let chained = delimited && !streamed;
    let ends = (Mutex::new(vec![None::<u64>; parts]), Condvar::new());
    let avg_record = (loaded.bytes / loaded.records.max(1)).max(1) as usize;
    let total_bytes = loaded.bytes;
    let mut staging = streamed.then(|| Staging::new(g.staging_bytes));

    let window = threads * PARTS_IN_FLIGHT_PER_THREAD;
    let (token_tx, token_rx) = bounded::<()>(window);
    for _ in 0..window {
        let _ = token_tx.send(());
    }
    let (done_tx, done_rx) = unbounded::<Piece>();
    // Written piece buffers go back to the workers: fresh ones would cost a page fault per 4 KiB.
    let (free_tx, free_rx) = unbounded::<AlignedBuf>();
    // The part main writes now: a worker holding a big part gathers its later pieces only when
    // its part is being written, so a huge group of equal prefixes stays within the window.
    let writing = (Mutex::new(0usize), Condvar::new());
    let next = AtomicUsize::new(0);
    let piece_records = g.part_records;
    let written = std::thread::scope(|s| -> Result<()> {
        for _ in 0..threads {
            let token_rx = token_rx.clone();
            let done_tx = done_tx.clone();
            let free_rx = free_rx.clone();
            let (cuts, sizes, offsets, next, locate, runs, writing, ends) =
                (&cuts, &sizes, &offsets, &next, &locate, &runs, &writing, &ends);
            s.spawn(move || {
                let _meter = crate::stats::ThreadMeter::new("output");
                let mut entries: Vec<Entry> = Vec::new();
                let mut key_buf = Vec::new();
                // A written piece's buffer if it is big enough, else a new one.
                let piece_buf = |want: usize| match free_rx.try_recv() {
                    Ok(b) if b.len() >= want => b,
                    _ => AlignedBuf::new(want),
                };
                loop {
                    if token_rx.recv().is_err() {
                        return;
                    }
                    let p = next.fetch_add(1, Ordering::Relaxed);
                    if p >= parts {
                        return;
                    }
                    entries.clear();
                    for (j, c) in cuts.iter().enumerate() {
                        entries.extend_from_slice(&runs[j][c[p]..c[p + 1]]);
                    }
                    sort_microrun(keys, &mut entries, locate);
                    let pieces = sizes[p].div_ceil(piece_records).max(1);
                    // Where the next piece goes; for chained parts, known once the part
                    // before has been gathered.
                    let mut off = if chained { None } else { Some(offsets[p]) };
                    for (seq, ents) in entries.chunks(piece_records).enumerate() {
                        if seq > 0 {
                            // Wait for this part's turn before gathering more of it.
                            let (m, cv) = writing;
                            let mut w = m.lock().unwrap_or_else(|e| e.into_inner());
                            while *w < p {
                                w = cv.wait(w).unwrap_or_else(|e| e.into_inner());
                            }
                        }
                        let mut pad = match off {
                            Some(o) if !streamed => (o % 4096) as usize,
                            _ => 0,
                        };
                        // Delimited pieces are checked as they are gathered (no second pass).
                        let mut fused =
                            (delimited && verify && !unique).then(|| OrderBuilder::new(keys));
                        let (mut buf, len) = if delimited {
                            // Sized from the load's mean record, grown if the records are longer;
                            // a page of slack stays free for the shift below.
                            let want = pad + ents.len() * avg_record * 5 / 4 + 2 * 4096;
                            let mut buf = piece_buf(want);
                            let (mut done, mut pos) = (0, pad);
                            loop {
                                let room = buf.len() - 4096;
                                let (c, b) = match fused.as_mut() {
                                    Some(f) => oxsort_kernels::gather_var_with(
                                        &ents[done..],
                                        hint,
                                        locate,
                                        &mut buf[pos..room],
                                        |rec| f.push(rec),
                                    ),
                                    None => oxsort_kernels::gather_var(
                                        &ents[done..],
                                        hint,
                                        locate,
                                        &mut buf[pos..room],
                                    ),
                                };
                                done += c;
                                pos += b;
                                if done == ents.len() {
                                    break;
                                }
                                let mut bigger = AlignedBuf::new(buf.len() * 3 / 2 + (1 << 20));
                                bigger[..pos].copy_from_slice(&buf[..pos]);
                                buf = bigger;
                            }
                            (buf, pos - pad)
                        } else {
                            let len = ents.len() * r;
                            let mut buf = piece_buf(pad + len);
                            oxsort_kernels::gather(ents, r, locate, &mut buf[pad..pad + len]);
                            (buf, len)
                        };
                        if off.is_none() {
                            // A chained part's first piece: wait for where it goes, then move it
                            // to the same place in its page as in the file (direct I/O).
                            let o = if p == 0 {
                                0
                            } else {
                                let (m, cv) = ends;
                                let mut e = m.lock().unwrap_or_else(|e| e.into_inner());
                                loop {
                                    if let Some(o) = e[p - 1] {
                                        break o;
                                    }
                                    e = cv.wait(e).unwrap_or_else(|e| e.into_inner());
                                }
                            };
                            pad = (o % 4096) as usize;
                            buf.copy_within(0..len, pad);
                            off = Some(o);
                        }
                        let (len, dropped, dropped_checksum) = if unique {
                            dedupe(keys, &mut buf[..len], &mut key_buf)
                        } else {
                            (len, 0, 0)
                        };
                        let mut check = if let Some(f) = fused {
                            f.finish()
                        } else if verify || unique {
                            OrderCheck::of_keys(&buf[pad..pad + len], keys)
                        } else {
                            OrderCheck {
                                records: (ents.len() as u64),
                                bytes: len as u64,
                                ..OrderCheck::default()
                            }
                        };
                        check.dropped = dropped;
                        check.dropped_checksum = dropped_checksum;
                        let last = seq + 1 == pieces;
                        let at = off.unwrap_or(0);
                        let piece = Piece { part: p, seq, last, buf, pad, len, off: at, check };
                        off = Some(at + len as u64);
                        if last && chained {
                            let (m, cv) = ends;
                            m.lock().unwrap_or_else(|e| e.into_inner())[p] = off;
                            cv.notify_all();
                        }
                        if done_tx.send(piece).is_err() {
                            return;
                        }
                    }
                    if sizes[p] == 0 {
                        // A chained empty part starts where the part before it ends.
                        let mut empty_at = offsets[p];
                        if chained {
                            // An empty part ends where the part before it ends.
                            let (m, cv) = ends;
                            let mut e = m.lock().unwrap_or_else(|e| e.into_inner());
                            let start = if p == 0 {
                                0
                            } else {
                                loop {
                                    if let Some(o) = e[p - 1] {
                                        break o;
                                    }
                                    e = cv.wait(e).unwrap_or_else(|e| e.into_inner());
                                }
                            };
                            e[p] = Some(start);
                            cv.notify_all();
                            empty_at = start;
                        }
                        let piece = Piece {
                            part: p,
                            seq: 0,
                            last: true,
                            buf: AlignedBuf::new(0),
                            pad: 0,
                            len: 0,
                            off: empty_at,
                            check: OrderCheck::default(),
                        };
                        if done_tx.send(piece).is_err() {
                            return;
                        }
                    }
                }
            });
        }
        drop(done_tx);
        let mut ready: BTreeMap<(usize, usize), Piece> = BTreeMap::new();
        let (mut want, mut want_seq) = (0usize, 0usize);
        let mut done_bytes = 0u64;
        let result = (|| -> Result<()> {
            while want < parts {
                while let Some(piece) = ready.remove(&(want, want_seq)) {
                    let data = &piece.buf[piece.pad..piece.pad + piece.len];
                    match &mut staging {
                        None => {
                            sink.write(piece.off, data, piece.pad)?;
                            check.append(&piece.check);
                        }
                        Some(st) => {
                            // A duplicate of the last record written starts this piece: drop it.
                            let skip = if unique
                                && check.records > 0
                                && piece.check.records > 0
                                && check.last_key == piece.check.first_key
                            {
                                keys.records(data).next().map_or(0, |f| f.len())
                            } else {
                                0
                            };
                            st.push(sink, &data[skip..])?;
                            let mut c = piece.check.clone();
                            if skip > 0 {
                                c = OrderCheck::of_keys(&data[skip..], keys);
                                c.dropped = piece.check.dropped + 1;
                                c.dropped_checksum = piece.check.dropped_checksum
                                    + crc32fast::hash(&data[..skip]) as u128;
                            }
                            check.append(&c);
                        }
                    }
                    let _ = free_tx.send(piece.buf);
                    done_bytes += piece.len as u64;
                    reporter.report(phase, done_bytes, Some(total_bytes));
                    if piece.last {
                        want += 1;
                        want_seq = 0;
                        let (m, cv) = &writing;
                        *m.lock().unwrap_or_else(|e| e.into_inner()) = want;
                        cv.notify_all();
                        let _ = token_tx.send(());
                    } else {
                        want_seq += 1;
                    }
                }
                if want == parts {
                    break;
                }
                match done_rx.recv() {
                    Ok(piece) => {
                        ready.insert((piece.part, piece.seq), piece);
                    }
                    Err(_) => return Err(EngineError::Internal("an output worker stopped".into())),
                }
            }
            if let Some(st) = &mut staging {
                st.finish(sink)?;
            }
            Ok(())
        })();
        // Unblock and stop the workers whatever happened.
        next.store(parts, Ordering::Relaxed);
        {
            let (m, cv) = &writing;
            *m.lock().unwrap_or_else(|e| e.into_inner()) = usize::MAX;
            cv.notify_all();
        }
        {
            // Workers waiting for a part's place must not wait for a worker that stopped.
            let (m, cv) = &ends;
            for e in m.lock().unwrap_or_else(|e| e.into_inner()).iter_mut() {
                e.get_or_insert(0);
            }
            cv.notify_all();
        }
        for _ in 0..threads {
            let _ = token_tx.try_send(());
        }
        drop(done_rx);
        result
    });
    written?;
    Ok(check)
}

/// Drops every record whose key equals the one before it (stable: the first of each group is
/// kept), compacting `data` in place. Returns the bytes kept, and the count and CRC32-sum of
/// the records dropped.
fn dedupe(keys: &Keys, data: &mut [u8], key_buf: &mut Vec<u8>) -> (usize, u64, u128) {
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

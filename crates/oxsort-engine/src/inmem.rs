//! The in-memory sort of one memory-load of records: the whole input in a one-pass plan, one
//! run in a two-pass plan.
//!
//! ```text
//!  input phase (overlaps reading)          output phase (overlaps writing)
//!  ───────────────────────────────         ───────────────────────────────────────────────
//!  chunk c lands ──> worker:               split_sorted(microruns) ──> parts 0..P (by value)
//!    entries (key80 | c<<log2 | slot)      worker, part p (in order, bounded window):
//!    CRC32-sum of its records                collect its slice of every microrun, sort,
//!    sort ──> microrun c                     gather records, check order + CRC-sum
//!                                          main: write part p at its offset, in order
//! ```
//!
//! An entry's index is `chunk << log2 | slot`: increasing in input order (so sorting entries as
//! integers is stable) and a shift and a mask away from the record it names.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_channel::{bounded, unbounded};
use oxsort_io::AlignedBuf;
use oxsort_kernels::{Entry, INDEX_BITS};

use crate::config::RecordFormat;
use crate::error::{EngineError, Result};
use crate::plan::Geometry;
use crate::progress::{Phase, Reporter};
use crate::sink::Sink;
use crate::source::ChunkSource;
use crate::tuning::{MIN_PARTS_PER_THREAD, PARTS_IN_FLIGHT_PER_THREAD};
use crate::verify::OrderCheck;

/// One memory-load: the chunks as read and one sorted microrun of entries per chunk.
pub(crate) struct Loaded {
    pub(crate) chunks: Vec<AlignedBuf>,
    pub(crate) microruns: Vec<Vec<Entry>>,
    pub(crate) records: u64,
    pub(crate) checksum: u128,
}

/// What every in-memory step needs to know: sizes, record format, threads, progress.
pub(crate) struct Ctx<'a> {
    pub(crate) g: &'a Geometry,
    pub(crate) fmt: &'a RecordFormat,
    pub(crate) threads: usize,
    pub(crate) reporter: &'a Reporter,
}

/// Builds the entries of one chunk's records.
fn chunk_entries(fmt: &RecordFormat, data: &[u8], base: u64, out: &mut Vec<Entry>) {
    if fmt.key_len == oxsort_kernels::PREFIX_BYTES {
        oxsort_kernels::extract_entries(data, fmt.record_size, fmt.key_offset, base, out);
    } else {
        out.extend(
            data.chunks_exact(fmt.record_size)
                .enumerate()
                .map(|(i, rec)| oxsort_kernels::make_entry(&fmt.key_prefix(rec), base + i as u64)),
        );
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
    let Ctx { g, fmt, threads, reporter } = *ctx;
    let log2 = g.chunk_log2;
    // An entry's index holds the chunk number above the slot bits: a load never has more chunks
    // than that can name (a one-pass plan that would becomes a run of a two-pass sort).
    let max_chunks = max_chunks.min(1u64 << (INDEX_BITS - log2));
    let (job_tx, job_rx) = unbounded::<(usize, AlignedBuf, usize)>();
    let (res_tx, res_rx) = unbounded::<(usize, AlignedBuf, Vec<Entry>, u128)>();
    let r = fmt.record_size;
    let mut exhausted = false;
    let mut sent = 0usize;
    let read_result: Result<()> = std::thread::scope(|s| {
        for _ in 0..threads {
            let job_rx = job_rx.clone();
            let res_tx = res_tx.clone();
            s.spawn(move || {
                for (c, buf, records) in job_rx {
                    let data = &buf[..records * r];
                    let mut entries = Vec::with_capacity(records);
                    chunk_entries(fmt, data, (c as u64) << log2, &mut entries);
                    let sum = crate::verify::checksum_records(data, r);
                    oxsort_kernels::sort_entries(&mut entries);
                    if res_tx.send((c, buf, entries, sum)).is_err() {
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
                    let _ = job_tx.send((sent, chunk.buf, chunk.records));
                    sent += 1;
                    reporter.report(Phase::Input, source.bytes_read, total);
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
    let mut chunks: Vec<Option<AlignedBuf>> = (0..sent).map(|_| None).collect();
    let mut microruns: Vec<Vec<Entry>> = (0..sent).map(|_| Vec::new()).collect();
    let mut checksum = 0u128;
    let mut records = 0u64;
    for (c, buf, entries, sum) in res_rx {
        records += entries.len() as u64;
        chunks[c] = Some(buf);
        microruns[c] = entries;
        checksum += sum;
    }
    read_result?;
    let chunks = chunks
        .into_iter()
        .map(|b| b.ok_or_else(|| EngineError::Internal("a chunk worker stopped".into())))
        .collect::<Result<Vec<_>>>()?;
    if !exhausted {
        // The load is full; the source may still be empty (input size a multiple of a run).
        exhausted = source.is_exhausted()?;
    }
    Ok((Loaded { chunks, microruns, records, checksum }, exhausted))
}

/// Writes the load's records in sorted order to `sink`, starting at byte `base` of it, and
/// returns the order facts of what was written when `verify` is set.
pub(crate) fn emit(
    ctx: &Ctx<'_>,
    loaded: &Loaded,
    sink: &mut dyn Sink,
    verify: bool,
    phase: Phase,
) -> Result<OrderCheck> {
    let Ctx { g, fmt, threads, reporter } = *ctx;
    let r = fmt.record_size;
    let n = loaded.records;
    let mut check = OrderCheck::default();
    if n == 0 {
        return Ok(check);
    }
    let runs: Vec<&[Entry]> = loaded.microruns.iter().map(|v| v.as_slice()).collect();
    let parts = (threads * MIN_PARTS_PER_THREAD).max(n.div_ceil(g.part_records as u64) as usize);
    let cuts = oxsort_kernels::split_sorted(&runs, parts);
    let sizes: Vec<usize> =
        (0..parts).map(|p| cuts.iter().map(|c| c[p + 1] - c[p]).sum::<usize>()).collect();
    let mut offsets = Vec::with_capacity(parts + 1);
    let mut acc = 0u64;
    for s in &sizes {
        offsets.push(acc);
        acc += (*s * r) as u64;
    }
    offsets.push(acc);
    if acc != n * r as u64 {
        return Err(EngineError::Internal(format!(
            "output parts hold {} bytes, the load {} bytes",
            acc,
            n * r as u64
        )));
    }

    let log2 = g.chunk_log2;
    let mask = (1u64 << log2) - 1;
    let chunks = &loaded.chunks;
    let locate = move |idx: u64| -> &[u8] {
        let c = (idx >> log2) as usize;
        let s = ((idx & mask) as usize) * r;
        &chunks[c][s..s + r]
    };

    let window = threads * PARTS_IN_FLIGHT_PER_THREAD;
    let (token_tx, token_rx) = bounded::<()>(window);
    for _ in 0..window {
        let _ = token_tx.send(());
    }
    let (done_tx, done_rx) = unbounded::<(usize, AlignedBuf, usize, OrderCheck)>();
    // Written part buffers go back to the workers: fresh ones would cost a page fault per 4 KiB.
    let (free_tx, free_rx) = unbounded::<AlignedBuf>();
    let next = AtomicUsize::new(0);
    let written = std::thread::scope(|s| -> Result<()> {
        for _ in 0..threads {
            let token_rx = token_rx.clone();
            let done_tx = done_tx.clone();
            let free_rx = free_rx.clone();
            let (cuts, sizes, offsets, next, locate, runs) =
                (&cuts, &sizes, &offsets, &next, &locate, &runs);
            s.spawn(move || {
                let mut entries: Vec<Entry> = Vec::new();
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
                    oxsort_kernels::sort_entries(&mut entries);
                    let pad = (offsets[p] % 4096) as usize;
                    let len = sizes[p] * r;
                    let mut buf = match free_rx.try_recv() {
                        Ok(b) if b.len() >= pad + len => b,
                        _ => AlignedBuf::new(pad + len),
                    };
                    oxsort_kernels::gather(&entries, r, locate, &mut buf[pad..pad + len]);
                    let check = if verify {
                        OrderCheck::of(&buf[pad..pad + len], fmt)
                    } else {
                        OrderCheck::default()
                    };
                    if done_tx.send((p, buf, pad, check)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let mut ready: BTreeMap<usize, (AlignedBuf, usize, OrderCheck)> = BTreeMap::new();
        let mut want = 0usize;
        let result = (|| -> Result<()> {
            while want < parts {
                while let Some((buf, pad, c)) = ready.remove(&want) {
                    let len = sizes[want] * r;
                    sink.write(offsets[want], &buf[pad..pad + len], pad)?;
                    let _ = free_tx.send(buf);
                    check.append(&c);
                    reporter.report(phase, offsets[want + 1], Some(acc));
                    want += 1;
                    let _ = token_tx.send(());
                }
                if want == parts {
                    break;
                }
                match done_rx.recv() {
                    Ok((p, buf, pad, c)) => {
                        ready.insert(p, (buf, pad, c));
                    }
                    Err(_) => {
                        return Err(EngineError::Internal("an output worker stopped".into()));
                    }
                }
            }
            Ok(())
        })();
        // Unblock and stop the workers whatever happened.
        next.store(parts, Ordering::Relaxed);
        for _ in 0..threads {
            let _ = token_tx.try_send(());
        }
        drop(done_rx);
        result
    });
    written?;
    Ok(check)
}

//! The merge of sorted runs: a loser tree over the runs' current records, one read-ahead per run,
//! output through a verify → write pipeline.
//!
//! ```text
//!  run 0 ─Reader(block, 1 ahead)─┐
//!  run 1 ─Reader─────────────────┤   loser tree on (key80 << 48 | run)      verify thread      write thread
//!   ...                          ├─> winner's record copied to an output ──> order + CRC-sum ──> sink
//!  run k ─Reader─────────────────┘   block; next key of that run replayed    (bounded queues, buffers cycle back)
//! ```
//!
//! Ties between equal keys go to the lower run number; runs are numbered in input order, so the
//! merge is stable. Every run keeps one read of its next block in flight.
//!
//! The merge reads its inputs through [`RunSource`]: the spill room's runs ([`RunReader`]), the
//! last load of the input phase kept in memory (`crate::load_run`, after the runs), or the
//! caller's sorted files and byte streams (`crate::sorted`, each checked to be in order as it is
//! read). The loop is generic over the source, so a merge of runs compiles to the same code it
//! always did.
//!
//! [`merge_runs`] carries out the plan's schedule: one loop over its levels, each merging groups
//! of runs into new runs through the spill room, the last one into the output.

use std::cell::{Cell, RefCell};

use crossbeam_channel::bounded;
use oxsort_format::{SortKey, PREFIX_BYTES};
use oxsort_io::{AlignedBuf, DIRECT_ALIGN};
use oxsort_kernels::{entry_index, make_entry, EntryTree};

use crate::error::{EngineError, Result};
use crate::load_run::{Cursor, LoadRun};
use crate::plan::MergeSchedule;
use crate::progress::{Phase, Reporter};
use crate::run_source::RunSource;
use crate::sink::Sink;
use crate::spill::{Run, RunKind, RunReader, SpillRoom};
use crate::stats::{FileStats, Meters};
use crate::tuning::{MERGE_BLOCK_MIN, MERGE_OUT_BUFFERS, SPARE_BLOCK_QUARTERS};
use crate::verify::{OrderCheck, StreamCheck};

/// Largest multiple of `r` that is also a multiple of [`DIRECT_ALIGN`] and at most `block`; or
/// the largest multiple of `r` when no such multiple fits.
pub(crate) fn record_block(block: usize, r: usize) -> usize {
    let g = gcd(r, DIRECT_ALIGN);
    let lcm = r / g * DIRECT_ALIGN;
    if block >= lcm {
        block / lcm * lcm
    } else {
        (block / r).max(1) * r
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// What a merge does besides merging.
#[derive(Clone, Copy)]
pub(crate) struct MergeOpts<'a> {
    pub(crate) keys: &'a SortKey,
    pub(crate) meters: &'a Meters,
    /// Drop records whose key equals the previous record's.
    pub(crate) unique: bool,
    pub(crate) reporter: &'a Reporter,
}

/// The tree's key of a run's current record: 80-bit key prefix over the run number. Only the
/// prefix is built (a collated key's first bytes cost a fraction of its whole: the whole key is
/// built only if the prefix ties, see [`Kept`]).
#[inline]
fn head(keys: &SortKey, rec: &[u8], run: usize, scratch: &mut Vec<u8>) -> u128 {
    // Every record was keyed once when read; a failure here cannot happen.
    let p = keys.prefix(rec, scratch).unwrap_or([0; PREFIX_BYTES]);
    make_entry(&p, run as u64)
}

/// Whole keys of the runs' current records, for keys that are built rather than read in place:
/// each built the first time its record's prefix ties another's (or `unique` compares it), then
/// kept for every comparison that record takes part in while it heads its run.
///
/// ```text
///   run:    0        1        2   ...
///   key:  [....]   [    ]   [......]     buffers reused record after record
///   built: yes      no       yes         set when built, cleared when the run moves on
/// ```
struct Kept {
    keys: Vec<RefCell<Vec<u8>>>,
    built: Vec<Cell<bool>>,
}

impl Kept {
    fn new(runs: usize) -> Self {
        Kept {
            keys: (0..runs).map(|_| RefCell::new(Vec::new())).collect(),
            built: (0..runs).map(|_| Cell::new(false)).collect(),
        }
    }

    /// The whole key of `rec`, the current record of `run`, built if it was not yet.
    fn key(&self, keys: &SortKey, run: usize, rec: &[u8]) -> std::cell::Ref<'_, Vec<u8>> {
        if !self.built[run].get() {
            keys.full_key(rec, &mut self.keys[run].borrow_mut());
            self.built[run].set(true);
        }
        self.keys[run].borrow()
    }

    /// `run` moved on to its next record.
    fn moved(&self, run: usize) {
        self.built[run].set(false);
    }
}

/// The order of two runs' heads whose prefixes are equal (the merge's tree asks for no other
/// pairs, and never for a run against itself): by the whole keys of the runs' current records
/// (`kept`, or built from the records).
#[inline(never)]
fn tie_order<S: RunSource>(
    keys: &SortKey,
    cs: &[S],
    kept: Option<&Kept>,
    x: u128,
    y: u128,
) -> std::cmp::Ordering {
    let (rx, ry) = (entry_index(x) as usize, entry_index(y) as usize);
    match kept {
        Some(kept) => kept.key(keys, rx, cs[rx].record()).cmp(&kept.key(keys, ry, cs[ry].record())),
        None => keys.cmp_full(cs[rx].record(), cs[ry].record()),
    }
}

/// Merges `runs` (in input order) into `sink`. Returns the order facts of the output (when
/// `verify`) and the read statistics of the runs.
/// Reads `block` bytes per run per transfer; checks order and checksum of what is written when
/// `verify`. The runs are read into `spares` (the input phase's buffers, cut to the block)
/// before new memory is taken; those left over are freed before the merge starts.
/// A kept load (`kept`) is merged after the runs, as the input that came last.
pub(crate) fn merge(
    runs: &[Run],
    room: &SpillRoom,
    opts: &MergeOpts<'_>,
    (block, verify): (usize, bool),
    spares: &mut Vec<AlignedBuf>,
    kept: Option<LoadRun<'_>>,
    sink: &mut (dyn Sink + Send),
) -> Result<(OrderCheck, Vec<FileStats>)> {
    // Blocks read and written: whole records when fixed; delimited runs are read in aligned
    // blocks and records are found across them.
    let unit = opts.keys.record_size().unwrap_or(1);
    let demand = runs.len() * READER_BUFFERS;
    let block = spare_block(spares, record_block(block, unit), unit, demand);
    let mut blocks = cut_spares(std::mem::take(spares), block, demand);
    let total: u64 =
        runs.iter().map(|x| x.bytes).sum::<u64>() + kept.as_ref().map_or(0, |k| k.bytes());
    let mut readers = Vec::with_capacity(runs.len());
    for run in runs {
        let mine = blocks.split_off(blocks.len().saturating_sub(READER_BUFFERS));
        readers.push(room.reader(run, block, opts.keys.layout(), mine)?);
    }
    drop(blocks);
    let Some(load) = kept else {
        // Runs only: the loop over readers alone.
        let check = merge_cursors(&mut readers, Some(total), opts, block, verify, None, sink)?;
        return Ok((check, readers.iter().map(RunReader::stats).collect()));
    };
    let mut cursors: Vec<Cursor<'_>> =
        readers.into_iter().map(Cursor::File).chain([Cursor::Load(load)]).collect();
    let check = merge_cursors(&mut cursors, Some(total), opts, block, verify, None, sink)?;
    let read = cursors.iter().filter(|c| matches!(c, Cursor::File(_))).map(RunSource::stats);
    Ok((check, read.collect()))
}

/// The read block of a merge whose runs want `demand` blocks of `block` bytes (whole records
/// of `unit` bytes) when the input phase left `spares`: `block`, or a smaller one that lets
/// each spare give more blocks, when that leaves less of the merge's memory to take fresh (a
/// page fault a page, on a VM the host's) and is not much smaller (at least
/// [`SPARE_BLOCK_QUARTERS`] quarters of it). Of those, the largest that leaves the least to
/// take fresh. Twelve chunk buffers of 12.5 MiB give a 15-run merge twelve blocks of 7.2 MiB
/// and waste the rest; cut into three blocks of 4.2 MiB each, they give it all 30.
fn spare_block(spares: &[AlignedBuf], block: usize, unit: usize, demand: usize) -> usize {
    let Some(shortest) = spares.iter().min_by_key(|b| b.len()) else { return block };
    let fresh = |b: usize| {
        let given: usize = spares.iter().map(|s| s.pieces_of(b)).sum();
        demand.saturating_sub(given) * b
    };
    let least = MERGE_BLOCK_MIN.max(unit).max(block / 4 * SPARE_BLOCK_QUARTERS);
    let (mut best, mut best_fresh) = (block, fresh(block));
    // The largest block of which the shortest spare gives `k`, for each `k` more than it gives
    // of `block` (each smaller than the one before).
    for k in shortest.pieces_of(block) + 1.. {
        let b = record_block(shortest.piece_len(k), unit);
        if best_fresh == 0 || b < least {
            break;
        }
        let f = fresh(b);
        if f < best_fresh {
            (best, best_fresh) = (b, f);
        }
    }
    best
}

/// `spares` cut into read blocks of `block` bytes, `demand` of them at most; what is left over
/// is freed.
fn cut_spares(spares: Vec<AlignedBuf>, block: usize, demand: usize) -> Vec<AlignedBuf> {
    let mut blocks = Vec::with_capacity(demand);
    for mut b in spares {
        while blocks.len() < demand && b.len() >= block {
            match b.split_off(block) {
                Some(rest) => blocks.push(std::mem::replace(&mut b, rest)),
                None => {
                    if b.shrink_to(block) {
                        blocks.push(b);
                    }
                    break;
                }
            }
        }
    }
    blocks
}

/// Merges `cursors` (in input order: ties go to the lower one) into `sink`, in output blocks
/// of `block` bytes (whole records when fixed). `total`: the bytes the sources hold, when
/// known, for progress. `after`: with `unique`, the key of a record written before this merge,
/// whose equals are dropped too. Returns the order facts of the output (when `verify`; else
/// only the records and bytes written, and what was dropped).
pub(crate) fn merge_cursors<S: RunSource>(
    cursors: &mut [S],
    total: Option<u64>,
    opts: &MergeOpts<'_>,
    block: usize,
    verify: bool,
    after: Option<Vec<u8>>,
    sink: &mut (dyn Sink + Send),
) -> Result<OrderCheck> {
    let MergeOpts { keys, meters, unique, reporter } = *opts;
    let mut scratch = Vec::new();
    // Whole keys of the runs' current records, when keys are built rather than read in place:
    // built once per record, and only for records whose prefixes tie.
    let keep_keys = keys.builds_keys();
    let kept = Kept::new(cursors.len());
    let mut heads = Vec::with_capacity(cursors.len());
    for (i, c) in cursors.iter_mut().enumerate() {
        heads.push(if c.fill()? { Some(head(keys, c.record(), i, &mut scratch)) } else { None });
    }
    // Prefixes decide; equal prefixes of a general key are decided by the whole keys of the
    // runs' current records; equal keys go to the lower run (stable). The tree asks only for
    // the heads whose prefixes are equal.
    let general = keys.ties_possible();
    let tie = |cs: &[S], kept: &Kept, x: u128, y: u128| {
        tie_order(keys, cs, keep_keys.then_some(kept), x, y)
    };
    let mut tree = if general {
        EntryTree::new_by(&heads, |x, y| tie(cursors, &kept, x, y))
    } else {
        EntryTree::new(&heads)
    };
    // -u: the key of the last record written (valid once one was).
    let have_last = after.is_some();
    let (mut last_key, mut have_last) = (after.unwrap_or_default(), have_last);
    let (mut dropped, mut dropped_checksum) = (0u64, 0u128);
    let mut written_bytes = 0u64;
    let mut written_records = 0u64;
    let mut key_buf = Vec::new();

    let (full_tx, full_rx) = bounded::<(AlignedBuf, usize, u64)>(1);
    let (checked_tx, checked_rx) = bounded::<(AlignedBuf, usize, u64)>(1);
    let (free_tx, free_rx) = bounded::<AlignedBuf>(MERGE_OUT_BUFFERS);
    for _ in 0..MERGE_OUT_BUFFERS {
        // Only the bytes merged into a block are written (blocks go round, old bytes and all).
        let _ = free_tx.send(AlignedBuf::unzeroed(block));
    }

    let outcome = std::thread::scope(|s| -> Result<OrderCheck> {
        let verifier = s.spawn(move || {
            let _meter = meters.meter("verify");
            // Output blocks may cut a delimited record in two: check them as a stream.
            let mut check = StreamCheck::default();
            for (buf, len, off) in full_rx {
                if verify {
                    check.feed(&buf[..len], keys);
                }
                if checked_tx.send((buf, len, off)).is_err() {
                    break;
                }
            }
            check.finish(keys)
        });
        let writer = s.spawn(move || -> Result<()> {
            let _meter = meters.meter("write");
            for (buf, len, off) in checked_rx {
                sink.write(off, &buf[..len])?;
                reporter.report(Phase::Merge, off + len as u64, total)?;
                let _ = free_tx.send(buf);
            }
            Ok(())
        });

        let merged = (|| -> Result<()> {
            let mut out = free_rx.recv().map_err(|_| stopped())?;
            let mut o = 0usize;
            let mut offset = 0u64;
            let mut records = 0u64;
            while let Some((run, _)) = tree.top() {
                let c = &mut cursors[run];
                let keep = if unique {
                    let kept_key;
                    let key: &[u8] = if keep_keys {
                        kept_key = kept.key(keys, run, c.record());
                        &kept_key
                    } else {
                        keys.full_key(c.record(), &mut key_buf);
                        &key_buf
                    };
                    if have_last && last_key == key {
                        dropped += 1;
                        dropped_checksum += crc32fast::hash(c.record()) as u128;
                        false
                    } else {
                        last_key.clear();
                        last_key.extend_from_slice(key);
                        have_last = true;
                        true
                    }
                } else {
                    true
                };
                if keep {
                    records += 1;
                    let mut rec = c.record();
                    while !rec.is_empty() {
                        let take = rec.len().min(block - o);
                        out[o..o + take].copy_from_slice(&rec[..take]);
                        o += take;
                        rec = &rec[take..];
                        if o == block {
                            full_tx.send((out, o, offset)).map_err(|_| stopped())?;
                            offset += o as u64;
                            o = 0;
                            out = free_rx.recv().map_err(|_| stopped())?;
                        }
                    }
                }
                c.advance();
                kept.moved(run);
                let next =
                    if c.fill()? { Some(head(keys, c.record(), run, &mut scratch)) } else { None };
                if general {
                    tree.replace_top_by(next, |x, y| tie(cursors, &kept, x, y));
                } else {
                    tree.replace_top(next);
                }
            }
            if o > 0 {
                full_tx.send((out, o, offset)).map_err(|_| stopped())?;
            }
            written_bytes = offset + o as u64;
            written_records = records;
            Ok(())
        })();
        drop(full_tx);
        drop(free_rx);
        let mut check =
            verifier.join().map_err(|_| EngineError::Internal("verifier panicked".into()))?;
        check.dropped += dropped;
        check.dropped_checksum += dropped_checksum;
        check.bytes = written_bytes;
        if !verify {
            check.records = written_records;
        }
        let written = writer.join().map_err(|_| EngineError::Internal("writer panicked".into()))?;
        // A write error explains a stopped pipeline better than the merge's own error.
        written?;
        merged?;
        Ok(check)
    });
    outcome
}

/// Buffers a run's reader holds: the block being merged and the next one being read.
const READER_BUFFERS: usize = 2;

/// What [`merge_runs`] did, besides writing the output.
pub(crate) struct Merged {
    /// Order facts of the output, with the duplicates every level dropped.
    pub(crate) check: OrderCheck,
    /// Files read and written.
    pub(crate) files: Vec<FileStats>,
}

/// Merges `runs` into `sink` as `schedule` says: every level but the last merges groups of
/// runs into new runs in the spill room (removing the ones merged), the last into `sink`, with
/// `kept` (a load kept in memory, which only a one-level schedule has) after the runs.
/// The last merge checks the order and checksum of what it writes when `verify`, else only
/// counts it (the caller checks the output itself). The first merge reads into `spares`
/// (see [`merge`]).
pub(crate) fn merge_runs(
    mut runs: Vec<Run>,
    schedule: &MergeSchedule,
    room: &mut SpillRoom,
    opts: &MergeOpts<'_>,
    (verify, mut spares): (bool, Vec<AlignedBuf>),
    kept: Option<LoadRun<'_>>,
    sink: &mut (dyn Sink + Send),
) -> Result<Merged> {
    let mut files = Vec::new();
    // Duplicates dropped by intermediate merges, for the final verification.
    let mut carried = OrderCheck::default();
    let quiet = opts.reporter.quiet();
    let (last, between) = schedule.levels.split_last().expect("a schedule has a final merge");
    debug_assert!(kept.is_none() || between.is_empty(), "a kept load joins a one-level merge");
    for (i, level) in between.iter().enumerate() {
        debug_assert_eq!(level.inputs, runs.len() as u64);
        let level_opts = MergeOpts { reporter: &quiet, ..*opts };
        let mut next = Vec::with_capacity(level.outputs as usize);
        let mut rest = runs.into_iter().peekable();
        while rest.peek().is_some() {
            let group: Vec<Run> = rest.by_ref().take(level.fan_in as usize).collect();
            if group.len() == 1 {
                next.extend(group);
                continue;
            }
            let bytes: u64 = group.iter().map(|r| r.bytes).sum();
            let (mut run, mut run_sink) = room.create(RunKind::Merged(i as u32 + 1), bytes)?;
            let (dropped, read) = merge(
                &group,
                room,
                &level_opts,
                (level.block, false),
                &mut spares,
                None,
                &mut run_sink,
            )
            .map_err(|e| room.explain(e))?;
            carried.dropped += dropped.dropped;
            carried.dropped_checksum += dropped.dropped_checksum;
            room.finish(&mut run, dropped.bytes)?;
            run.merged_from(&group, &dropped);
            files.extend(read);
            files.push(run_sink.stats());
            for r in group {
                room.remove(r)?;
            }
            next.push(run);
        }
        runs = next;
        room.level_done(&runs, &carried)?;
    }
    let (mut check, read) =
        merge(&runs, room, opts, (last.block, verify), &mut spares, kept, sink)?;
    check.dropped += carried.dropped;
    check.dropped_checksum += carried.dropped_checksum;
    files.extend(read);
    files.push(sink.stats());
    Ok(Merged { check, files })
}

fn stopped() -> EngineError {
    EngineError::Internal("the merge output pipeline stopped".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_phase_buffers_are_cut_into_read_blocks() {
        // Twelve chunk buffers of 12.5 MiB left by the input phase, a merge of 15 runs (30
        // blocks) planned with blocks of 7.2 MiB of 50-byte records: one block each would
        // leave 18 to take fresh, two of about 6.2 MiB 6; three of about 4.2 MiB none.
        let chunk = 25 << 19;
        let spares = || (0..12).map(|_| AlignedBuf::new(chunk)).collect::<Vec<_>>();
        if AlignedBuf::new(chunk).pieces_of(chunk / 4) == 0 {
            // Buffers from a hugetlb pool reserved on this machine: counted by the 2 MiB page,
            // they are not cut (see `bigmem::split`).
            eprintln!("skipped: buffers come from the hugetlb pool, which are not cut");
            return;
        }
        let planned = record_block(7_581_696, 50);
        let block = spare_block(&spares(), planned, 50, 30);
        assert!(block < planned / 3 * 2 && block >= planned / 2, "{block} against {planned}");
        assert_eq!(block, record_block(block, 50), "whole records, aligned");
        assert!(spares().iter().all(|s| s.pieces_of(block) == 3));
        let blocks = cut_spares(spares(), block, 30);
        assert_eq!(blocks.len(), 30);
        assert!(blocks.iter().all(|b| b.len() == block));
        // Eight spares: 16 blocks of 6.2 MiB or 24 of 4.2 MiB, both short of 30; the smaller
        // blocks leave less to take fresh (6 x 4.2 MiB against 14 x 6.2 MiB).
        let few = || (0..8).map(|_| AlignedBuf::new(chunk)).collect::<Vec<_>>();
        let b = spare_block(&few(), planned, 50, 30);
        assert!(few().iter().all(|s| s.pieces_of(b) == 3), "{b}");
        assert_eq!(cut_spares(few(), b, 30).len(), 24);
        // No more than the merge asks for; the rest is freed.
        assert_eq!(cut_spares(spares(), block, 5).len(), 5);
        // Nothing to cut, or buffers as short as a block (whose halves would be blocks of half
        // the size the plan chose): the plan's block.
        assert_eq!(spare_block(&[], planned, 50, 30), planned);
        let short = || (0..4).map(|_| AlignedBuf::new(planned)).collect::<Vec<_>>();
        assert_eq!(spare_block(&short(), planned, 50, 30), planned);
        assert_eq!(cut_spares(short(), planned, 30).len(), 4);
        // Enough spares for every block: no smaller block.
        assert_eq!(spare_block(&spares(), planned, 50, 12), planned);
    }

    #[test]
    fn record_blocks_are_whole_records_and_aligned_when_they_can_be() {
        assert_eq!(record_block(8 << 20, 100), 81 * 102400);
        assert_eq!(record_block(65536, 100), 65500);
        assert_eq!(record_block(4096, 4096), 4096);
        assert_eq!(record_block(10, 100), 100);
    }
}

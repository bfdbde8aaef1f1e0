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
//! merge is stable. A run's next block is requested the moment its current one is taken, so the
//! run that will run dry first is the one being read (demand-driven forecasting).
//!
//! Run file format: the run's records, sorted, back to back; no header. Its length is known from
//! the run table the engine keeps.

use std::path::PathBuf;
use std::sync::Arc;

use crossbeam_channel::bounded;
use oxsort_io::{AlignedBuf, DirectFile, IoOptions, Reader};
use oxsort_kernels::{entry_index, entry_prefix, make_entry, LoserTree};

use crate::error::{EngineError, Result};
use crate::keys::Keys;
use crate::progress::{Phase, Reporter};
use crate::sink::Sink;
use crate::stats::FileStats;
use crate::tuning::MERGE_OUT_BUFFERS;
use crate::verify::{OrderCheck, StreamCheck};

/// A sorted run in a temp file.
pub(crate) struct RunFile {
    pub(crate) file: Arc<DirectFile>,
    pub(crate) path: PathBuf,
    pub(crate) bytes: u64,
}

/// Largest multiple of `r` that is also a multiple of 4096 and at most `block`; or the largest
/// multiple of `r` when no such multiple fits.
pub(crate) fn record_block(block: usize, r: usize) -> usize {
    let g = gcd(r, 4096);
    let lcm = r / g * 4096;
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

/// Reads one run record by record. Records usually lie whole inside a read block (blocks are
/// a multiple of the record size when memory allows); one that straddles two blocks is copied
/// into `stage`. Delimited records are found by their terminator.
struct RunCursor {
    reader: Reader,
    buf: Option<AlignedBuf>,
    len: usize,
    pos: usize,
    /// Length of the current record.
    cur: usize,
    stage: Vec<u8>,
    staged: bool,
    path: PathBuf,
    /// Fixed record size (delimited: unused).
    r: usize,
    delim: Option<u8>,
}

impl RunCursor {
    fn next_block(&mut self) -> Result<bool> {
        if let Some(b) = self.buf.take() {
            self.reader.recycle(b);
        }
        match self.reader.next_chunk() {
            Some(Ok(c)) => {
                self.len = c.len;
                self.pos = 0;
                self.buf = Some(c.buf);
                Ok(true)
            }
            Some(Err(e)) => Err(e.into()),
            None => {
                self.len = 0;
                self.pos = 0;
                Ok(false)
            }
        }
    }

    /// Length of the record at `pos` if it ends inside the current block.
    #[inline]
    fn whole_here(&self) -> Option<usize> {
        let b = self.buf.as_ref()?;
        let rest = &b[self.pos..self.len];
        match self.delim {
            None => (rest.len() >= self.r).then_some(self.r),
            Some(t) => memchr::memchr(t, rest).map(|i| i + 1),
        }
    }

    /// Makes sure the cursor holds a whole record; false when the run is exhausted.
    fn fill(&mut self) -> Result<bool> {
        if let Some(n) = self.whole_here() {
            self.cur = n;
            return Ok(true);
        }
        // The record straddles blocks (or the block is used up): gather it in `stage`.
        self.stage.clear();
        if self.pos < self.len {
            let b = self.buf.as_ref().expect("bytes left");
            self.stage.extend_from_slice(&b[self.pos..self.len]);
        }
        loop {
            if !self.next_block()? {
                if self.stage.is_empty() {
                    return Ok(false);
                }
                return Err(EngineError::Verify(format!(
                    "run {} ends inside a record",
                    self.path.display()
                )));
            }
            if self.stage.is_empty() {
                if let Some(n) = self.whole_here() {
                    self.cur = n;
                    return Ok(true);
                }
            }
            let b = self.buf.as_ref().expect("just read");
            let take = match self.delim {
                None => (self.r - self.stage.len()).min(self.len),
                Some(t) => memchr::memchr(t, &b[..self.len]).map_or(self.len, |i| i + 1),
            };
            self.stage.extend_from_slice(&b[..take]);
            self.pos = take;
            let done = match self.delim {
                None => self.stage.len() == self.r,
                Some(t) => self.stage.last() == Some(&t),
            };
            if done {
                self.cur = self.stage.len();
                self.staged = true;
                return Ok(true);
            }
        }
    }

    #[inline]
    fn record(&self) -> &[u8] {
        if self.staged {
            &self.stage
        } else {
            &self.buf.as_ref().expect("filled")[self.pos..self.pos + self.cur]
        }
    }

    #[inline]
    fn advance(&mut self) {
        if self.staged {
            self.staged = false;
        } else {
            self.pos += self.cur;
        }
    }
}

/// What a merge does besides merging.
pub(crate) struct MergeOpts<'a> {
    pub(crate) keys: &'a Keys,
    pub(crate) block: usize,
    pub(crate) io: &'a IoOptions,
    /// Check order and checksum of what is written.
    pub(crate) verify: bool,
    /// Drop records whose key equals the previous record's.
    pub(crate) unique: bool,
    pub(crate) reporter: &'a Reporter,
}

/// The tree's key of a run's current record: 80-bit key prefix over the run number.
#[inline]
fn head(keys: &Keys, rec: &[u8], run: usize, scratch: &mut Vec<u8>) -> u128 {
    // Every record was keyed once when read; a failure here cannot happen.
    let p = keys.prefix(rec, scratch).unwrap_or([0; 10]);
    make_entry(&p, run as u64)
}

/// Merges `runs` (in input order) into `sink`. Returns the order facts of the output (when
/// `verify`) and the read statistics of the runs.
pub(crate) fn merge(
    runs: &[RunFile],
    opts: &MergeOpts<'_>,
    sink: &mut (dyn Sink + Send),
) -> Result<(OrderCheck, Vec<FileStats>)> {
    let MergeOpts { keys, block, io, verify, unique, reporter } = *opts;
    let r = keys.fmt.record_size;
    // Blocks read and written: whole records when fixed; delimited runs are read in aligned
    // blocks and records are found across them.
    let block = record_block(block, if keys.delim.is_some() { 1 } else { r });
    let total: u64 = runs.iter().map(|x| x.bytes).sum();
    let mut cursors = Vec::with_capacity(runs.len());
    for run in runs {
        let reader = Reader::new(run.file.clone(), 0..run.bytes, block, 1, io)?;
        cursors.push(RunCursor {
            reader,
            buf: None,
            len: 0,
            pos: 0,
            cur: 0,
            stage: Vec::with_capacity(r),
            staged: false,
            path: run.path.clone(),
            r,
            delim: keys.delim,
        });
    }
    let mut scratch = Vec::new();
    let mut heads = Vec::with_capacity(runs.len());
    for (i, c) in cursors.iter_mut().enumerate() {
        heads.push(if c.fill()? { Some(head(keys, c.record(), i, &mut scratch)) } else { None });
    }
    // Prefixes decide; equal prefixes of a general key are decided by the whole keys of the
    // runs' current records; equal keys go to the lower run (stable).
    let general = keys.general();
    let order = |cs: &[RunCursor], x: &u128, y: &u128| {
        if !general {
            return x.cmp(y);
        }
        let run = |e: &u128| entry_index(*e) as usize;
        entry_prefix(*x)
            .cmp(&entry_prefix(*y))
            .then_with(|| keys.cmp_full(cs[run(x)].record(), cs[run(y)].record()))
    };
    let mut tree = LoserTree::new_by(heads, |x, y| order(&cursors, x, y));
    // -u: the key of the last record written (valid once one was).
    let (mut last_key, mut have_last) = (Vec::new(), false);
    let (mut dropped, mut dropped_checksum) = (0u64, 0u128);
    let mut written_bytes = 0u64;
    let mut key_buf = Vec::new();

    let (full_tx, full_rx) = bounded::<(AlignedBuf, usize, u64)>(1);
    let (checked_tx, checked_rx) = bounded::<(AlignedBuf, usize, u64)>(1);
    let (free_tx, free_rx) = bounded::<AlignedBuf>(MERGE_OUT_BUFFERS);
    for _ in 0..MERGE_OUT_BUFFERS {
        let _ = free_tx.send(AlignedBuf::new(block));
    }

    let outcome = std::thread::scope(|s| -> Result<OrderCheck> {
        let verifier = s.spawn(move || {
            let _meter = crate::stats::ThreadMeter::new("verify");
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
            let _meter = crate::stats::ThreadMeter::new("write");
            for (buf, len, off) in checked_rx {
                sink.write(off, &buf[..len], 0)?;
                reporter.report(Phase::Merge, off + len as u64, Some(total))?;
                let _ = free_tx.send(buf);
            }
            Ok(())
        });

        let merged = (|| -> Result<()> {
            let mut out = free_rx.recv().map_err(|_| stopped())?;
            let mut o = 0usize;
            let mut offset = 0u64;
            while let Some((run, _)) = tree.top() {
                let c = &mut cursors[run];
                let keep = if unique {
                    keys.full_key(c.record(), &mut key_buf);
                    if have_last && last_key == key_buf {
                        dropped += 1;
                        dropped_checksum += crc32fast::hash(c.record()) as u128;
                        false
                    } else {
                        std::mem::swap(&mut last_key, &mut key_buf);
                        have_last = true;
                        true
                    }
                } else {
                    true
                };
                if keep {
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
                let next =
                    if c.fill()? { Some(head(keys, c.record(), run, &mut scratch)) } else { None };
                tree.replace_top_by(next, |x, y| order(&cursors, x, y));
            }
            if o > 0 {
                full_tx.send((out, o, offset)).map_err(|_| stopped())?;
            }
            written_bytes = offset + o as u64;
            Ok(())
        })();
        drop(full_tx);
        drop(free_rx);
        let mut check =
            verifier.join().map_err(|_| EngineError::Internal("verifier panicked".into()))?;
        check.dropped += dropped;
        check.dropped_checksum += dropped_checksum;
        check.bytes = written_bytes;
        let written = writer.join().map_err(|_| EngineError::Internal("writer panicked".into()))?;
        // A write error explains a stopped pipeline better than the merge's own error.
        written?;
        merged?;
        Ok(check)
    });
    let check = outcome?;
    let files = runs
        .iter()
        .zip(&cursors)
        .map(|(run, c)| {
            FileStats::read(run.path.display().to_string(), &c.reader.stats(), run.file.is_direct())
        })
        .collect();
    Ok((check, files))
}

fn stopped() -> EngineError {
    EngineError::Internal("the merge output pipeline stopped".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_blocks_are_whole_records_and_aligned_when_they_can_be() {
        assert_eq!(record_block(8 << 20, 100), 81 * 102400);
        assert_eq!(record_block(65536, 100), 65500);
        assert_eq!(record_block(4096, 4096), 4096);
        assert_eq!(record_block(10, 100), 100);
    }
}

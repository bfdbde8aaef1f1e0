//! A load's chunks put in bucket order, not sorted: every entry is sorted once, in its output
//! part, rather than once in its chunk's microrun and again in its part.
//!
//! ```text
//!  first chunk ──sample──> Bucketer (monotone: key ranges of about 1/4 of a part each)
//!  chunk c ──worker──> entries scattered by bucket (stable)      starts[c]: where each begins
//!                      (one bucket too big for the plan's parts? this chunk and every later
//!                       one sorted instead, and at the load's end the bucketed ones too)
//!  output: part p = buckets b_p..b_{p+1} = starts[c][b_p]..starts[c][b_{p+1}] of every chunk
//!          (the same slices sorted microruns are cut into), sorted whole
//! ```
//!
//! The map is drawn from a sample of the load's first chunk. It is monotone whatever the keys,
//! so the order is right for any input; an input whose first chunk does not look like the rest
//! (presorted, say) piles its keys into the first or last bucket, trips the check at its second
//! chunk, and is sorted chunk by chunk as before.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use oxsort_format::{Mode, SortKey};
use oxsort_kernels::{entry_prefix, make_entry, Bucketer, Entry};

use crate::plan::Geometry;
use crate::source::Chunk;
use crate::tuning::{
    BUCKETS_PER_PART_LOG2, BUCKET_PART_BYTES, BUCKET_SAMPLE, MAX_BUCKET_BITS, MIN_BUCKET_BITS,
    MIN_PARTS_PER_THREAD,
};

/// The bucketing of one load, shared by its workers.
pub(crate) struct Bucketing {
    bucketer: Bucketer,
    /// A chunk with a bucket of more entries than this trips the load to sorted microruns: a
    /// bucket as big in every chunk of a full load would be more than a part.
    trip: usize,
    /// Whether a chunk tripped (later chunks are then sorted).
    skewed: AtomicBool,
}

impl Bucketing {
    /// The bucketing of a load whose first chunk is `first`, or `None` when its chunks are
    /// sorted: not a sort (a merge checks its inputs' order chunk by chunk, a copy keeps it), an
    /// INREC (the records sampled here are not yet the ones whose keys are sorted), or a plan
    /// whose parts are too small to be worth buckets.
    pub(crate) fn of(
        keys: &SortKey,
        mode: Mode,
        threads: usize,
        g: &Geometry,
        first: &Chunk,
    ) -> Option<Bucketing> {
        if mode != Mode::Sort || keys.inrec().is_some() || first.records == 0 {
            return None;
        }
        let data = &first.buf[..];
        let record = |i: usize| -> &[u8] {
            match keys.record_size() {
                Some(r) => &data[i * r..(i + 1) * r],
                None => &data[first.offsets[i] as usize..first.offsets[i + 1] as usize],
            }
        };
        let n = first.records;
        let bytes = match keys.record_size() {
            Some(r) => n * r,
            None => (first.offsets[n] - first.offsets[0]) as usize,
        };
        // Bytes of records a full load holds, at this chunk's mean record.
        let mean = (bytes / n).max(1) as u64;
        let load_bytes = g.arena_bytes / (mean + g.entry_bytes) * mean;
        let least = (threads * MIN_PARTS_PER_THREAD) as u64;
        let parts = (load_bytes / BUCKET_PART_BYTES).max(least).max(1);
        // At most a bucket per 4 entries of a chunk: its starts then take at most 1/16 of
        // the room of its entries (4 bytes a bucket, 16 an entry).
        let bits = (parts.ilog2() + 1 + BUCKETS_PER_PART_LOG2)
            .min(MAX_BUCKET_BITS)
            .min(n.ilog2().saturating_sub(2));
        if bits < MIN_BUCKET_BITS {
            return None;
        }
        // A record whose key cannot be built is left out of the sample (its worker reports it).
        let mut scratch = Vec::new();
        let step = n.div_ceil(BUCKET_SAMPLE).max(1);
        let sample = (0..n).step_by(step).filter_map(|i| {
            keys.prefix(record(i), &mut scratch).ok().map(|p| entry_prefix(make_entry(&p, 0)))
        });
        let bucketer = Bucketer::from_sample(sample.collect::<Vec<_>>(), bits);
        let chunks = (g.arena_chunks as usize).max(1);
        let trip = (g.part_records / chunks).max(1);
        Some(Bucketing { bucketer, trip, skewed: AtomicBool::new(false) })
    }

    /// Where each bucket of a chunk's `entries` would start in bucket order; `None` once a
    /// chunk has tripped the load (this one or an earlier one): its entries are then to be
    /// sorted.
    pub(crate) fn count(&self, entries: &[Entry]) -> Option<Vec<u32>> {
        if self.skewed.load(Ordering::Relaxed) {
            return None;
        }
        let mut starts = Vec::new();
        if self.bucketer.count(entries, &mut starts) <= self.trip {
            return Some(starts);
        }
        self.skewed.store(true, Ordering::Relaxed);
        None
    }

    /// The map of prefixes to buckets.
    pub(crate) fn bucketer(&self) -> &Bucketer {
        &self.bucketer
    }

    /// The load's buckets, given each chunk's bucket starts (`None`: sorted; an empty chunk's
    /// may be either); or, when a chunk was sorted or a bucket of the whole load holds more
    /// than `part_limit` entries, the chunks that still have to be sorted.
    pub(crate) fn finish(
        self,
        starts: Vec<Option<Vec<u32>>>,
        lens: &[usize],
        part_limit: usize,
    ) -> std::result::Result<LoadBuckets, Vec<usize>> {
        let unsorted: Vec<usize> =
            (0..starts.len()).filter(|&c| starts[c].is_some() && lens[c] > 0).collect();
        if (0..starts.len()).any(|c| starts[c].is_none() && lens[c] > 0) {
            return Err(unsorted);
        }
        // One per chunk, in chunk order (a chunk without entries: empty).
        let load = LoadBuckets::new(
            self.bucketer.buckets(),
            starts.into_iter().map(Option::unwrap_or_default),
        );
        if load.counts.iter().any(|&n| n > part_limit) {
            return Err(unsorted);
        }
        Ok(load)
    }
}

/// Where a bucketed load's buckets are: in every chunk's microrun, and how big in all.
pub(crate) struct LoadBuckets {
    /// Per chunk, where each bucket starts in its microrun (and where the last ends); empty for
    /// a chunk without entries.
    starts: Vec<Vec<u32>>,
    /// Entries of each bucket, over every chunk.
    counts: Vec<usize>,
}

impl LoadBuckets {
    /// The buckets of a load of `buckets` buckets from each chunk's starts (empty for a chunk
    /// without entries), their sizes summed over the chunks.
    fn new(buckets: usize, starts: impl IntoIterator<Item = Vec<u32>>) -> LoadBuckets {
        let starts: Vec<Vec<u32>> = starts.into_iter().collect();
        let mut counts = vec![0usize; buckets];
        for s in &starts {
            for (b, w) in s.windows(2).enumerate() {
                counts[b] += (w[1] - w[0]) as usize;
            }
        }
        LoadBuckets { starts, counts }
    }

    /// Cut positions (`cuts[run][p]..cuts[run][p + 1]`: part `p`'s entries of microrun `run`)
    /// of at least `parts` parts of whole buckets (more for a load of more than `parts` times
    /// [`BUCKET_PART_BYTES`] of records, `bytes`), none over `part_limit` entries (no bucket
    /// is, see [`Bucketing::finish`]).
    pub(crate) fn cuts(&self, parts: usize, bytes: u64, part_limit: usize) -> Vec<Vec<usize>> {
        let parts = parts.max(bytes.div_ceil(BUCKET_PART_BYTES) as usize);
        let total: usize = self.counts.iter().sum();
        let target = total.div_ceil(parts.max(1)).max(1);
        let mut bounds = vec![0usize];
        let mut acc = 0usize;
        for (b, &n) in self.counts.iter().enumerate() {
            if acc > 0 && (acc >= target || acc + n > part_limit) {
                bounds.push(b);
                acc = 0;
            }
            acc += n;
        }
        bounds.push(self.counts.len());
        self.starts
            .iter()
            .map(|s| bounds.iter().map(|&b| s.get(b).map_or(0, |&x| x as usize)).collect())
            .collect()
    }
}

/// Sorts the microruns `runs` (each a slice of entries of its own) on `threads` threads.
pub(crate) fn sort_all(runs: Vec<&mut [Entry]>, threads: usize) {
    let queue = Mutex::new(runs);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
                match next {
                    Some(run) => oxsort_kernels::sort_entries(run),
                    None => return,
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets(starts: Vec<Vec<u32>>) -> LoadBuckets {
        let n = starts.iter().map(|s| s.len()).max().unwrap() - 1;
        LoadBuckets::new(n, starts)
    }

    #[test]
    fn parts_are_whole_buckets_within_the_limit() {
        // Two chunks, four buckets: 3+1, 2+2, 0+5, 4+0 entries.
        let b = buckets(vec![vec![0, 3, 5, 5, 9], vec![], vec![0, 1, 3, 8, 8]]);
        let cuts = b.cuts(2, 0, 100);
        assert_eq!(cuts.len(), 3);
        // 17 entries, a target of 9 per part: buckets 0..3 (13 entries), then bucket 3.
        assert_eq!(cuts[0], [0, 5, 9]);
        assert_eq!(cuts[1], [0, 0, 0], "a chunk without entries");
        assert_eq!(cuts[2], [0, 8, 8]);
        // A limit of 6 closes a part before a bucket would take it past 6.
        let cuts = b.cuts(1, 0, 6);
        assert_eq!(cuts[0], [0, 3, 5, 5, 9]);
        assert_eq!(cuts[2], [0, 1, 3, 8, 8]);
    }
}

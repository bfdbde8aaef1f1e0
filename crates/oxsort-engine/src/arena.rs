//! The entries of one load in one buffer, a slot per chunk, from the hugetlb pool when one is
//! reserved ([`AlignedBuf`]). A vector per chunk came from the heap: memory a VM's host backs
//! afresh in every run, even when the records' buffers come from a pool that stays backed
//! (first touches of entries were 15% of a pooled JOINKEYS run's CPU).
//!
//! ```text
//!  | slot 0: chunk 0's entries ... | slot 1: chunk 1's | ... | slot n-1 |
//!    each slot 2^chunk_log2 entries; a chunk's microrun is the first `len` of its slot
//! ```
//!
//! Chunks whose record count is not bounded ahead (delimited and RDW-prefixed records, or a
//! load whose chunk count the plan did not know) cannot have slots of a known size: each worker
//! fills [`Segments`] instead, big buffers of the same memory, with the whole microruns of the
//! chunks it sorted, one after another.
//!
//! ```text
//!  worker 0: | seg 0: chunk 0's | chunk 2's | chunk 5's | (free) |  | seg 1: chunk 7's | ...
//!  worker 1: | seg 0: chunk 1's | chunk 3's | chunk 4's |(free)|    | seg 1: ...
//!    a microrun that does not fit the rest of a segment starts the next one; one longer
//!    than 1/8 of a segment gets a buffer of its own size
//! ```

use std::sync::Mutex;

use oxsort_io::tuning::HUGETLB_PAGE;
use oxsort_io::AlignedBuf;
use oxsort_kernels::Entry;

/// Bytes of one segment at most: 16 huge pages, the microruns of a dozen 16 MiB chunks of
/// 100-byte lines. Its free end and each worker's last segment are memory the plan does not
/// count per record: see [`segment_entries`] and [`SHARED_RUN_SHARE`]; at most 1/32 of a
/// budget on two workers.
const SEGMENT_BYTES: usize = 32 << 20;

/// A microrun longer than 1/this of a segment gets a buffer of its own: the free end a
/// segment is left with (shorter than the microrun that did not fit) stays under this share
/// of it (12.5%).
const SHARED_RUN_SHARE: usize = 8;

/// A segment takes at most this share of a load's budget (small budgets get small segments).
const SEGMENT_SHARE: u64 = 64;

/// Bytes of one segment at least: a page.
const SEGMENT_MIN: usize = 4096;

/// Entries of one segment for a load of `budget` bytes: 1/[`SEGMENT_SHARE`] of the budget, at
/// most [`SEGMENT_BYTES`], in whole huge pages when that share holds one (a hugetlb pool then
/// backs all of each), else in whole 4 KiB pages. A segment below a huge page is never the
/// pool's: the free end of each worker's last segment, never touched, is then not memory held,
/// where the pool would count every byte of a segment at a budget it is a sixteenth of.
pub(crate) fn segment_entries(budget: u64) -> usize {
    let share = ((budget / SEGMENT_SHARE) as usize).min(SEGMENT_BYTES);
    let bytes = if share >= HUGETLB_PAGE {
        share / HUGETLB_PAGE * HUGETLB_PAGE
    } else {
        (share / SEGMENT_MIN * SEGMENT_MIN).max(SEGMENT_MIN)
    };
    bytes / std::mem::size_of::<Entry>()
}

/// Slots of `slot_len` entries for the chunks of one load.
pub(crate) struct EntryArena {
    buf: AlignedBuf,
    slot_len: usize,
    slots: usize,
}

impl EntryArena {
    /// An arena of `slots` slots of `slot_len` entries (memory is touched only where written;
    /// it is never read before, as a recycled arena's is not).
    pub(crate) fn new(slots: usize, slot_len: usize) -> Self {
        let bytes = slots * slot_len * std::mem::size_of::<Entry>();
        EntryArena { buf: AlignedBuf::unzeroed(bytes), slot_len, slots }
    }

    /// Whether it has `slots` slots of `slot_len` entries (what a load of that shape asks for).
    pub(crate) fn holds(&self, slots: usize, slot_len: usize) -> bool {
        self.slots == slots && self.slot_len == slot_len
    }

    /// Every slot, in order, each writable on its own (one per chunk sent to a worker).
    pub(crate) fn slots_mut(&mut self) -> impl Iterator<Item = &mut [Entry]> {
        let n = self.slots * self.slot_len;
        self.buf.as_u128s_mut()[..n].chunks_mut(self.slot_len.max(1))
    }

    /// The first `len` entries of slot `slot`.
    pub(crate) fn get(&self, slot: usize, len: usize) -> &[Entry] {
        assert!(slot < self.slots && len <= self.slot_len, "slot {slot} of {}", self.slots);
        let start = slot * self.slot_len;
        &self.buf.as_u128s()[start..start + len]
    }
}

/// One worker's segments: the microruns of the chunks it sorted, copied in one after another.
pub(crate) struct Segments {
    segs: Vec<AlignedBuf>,
    /// The segment being filled, and its entries used.
    current: Option<usize>,
    fill: usize,
    /// Entries of a new segment (more for a microrun longer than that).
    seg_entries: usize,
}

impl Segments {
    /// No segment yet; new ones of `seg_entries` entries.
    pub(crate) fn new(seg_entries: usize) -> Self {
        Segments { segs: Vec::new(), current: None, fill: 0, seg_entries: seg_entries.max(1) }
    }

    /// Copies `run` after the microruns of the current segment, or to the start of a next one
    /// when it has no room, or to a buffer of its own when it is long (each one of `spares`
    /// that is long enough, else a new one): returns the buffer's number and where in it the
    /// run starts.
    pub(crate) fn push(
        &mut self,
        run: &[Entry],
        spares: &Mutex<Vec<AlignedBuf>>,
    ) -> (usize, usize) {
        let n = run.len();
        let (seg, start) = if n > self.seg_entries / SHARED_RUN_SHARE {
            self.segs.push(take_buffer(n, spares));
            (self.segs.len() - 1, 0)
        } else {
            let room = self.current.map_or(0, |c| self.segs[c].as_u128s().len() - self.fill);
            if n > room {
                self.segs.push(take_buffer(self.seg_entries, spares));
                self.current = Some(self.segs.len() - 1);
                self.fill = 0;
            }
            self.fill += n;
            (self.current.expect("a segment was taken"), self.fill - n)
        };
        self.segs[seg].as_u128s_mut()[start..start + n].copy_from_slice(run);
        (seg, start)
    }

    /// The segments, in the order of their numbers.
    pub(crate) fn into_buffers(self) -> Vec<AlignedBuf> {
        self.segs
    }
}

/// A buffer of at least `entries` entries: one of `spares` if one is long enough, else new.
fn take_buffer(entries: usize, spares: &Mutex<Vec<AlignedBuf>>) -> AlignedBuf {
    let want = entries * std::mem::size_of::<Entry>();
    let spare = {
        let mut spares = spares.lock().unwrap_or_else(|e| e.into_inner());
        spares.iter().position(|b| b.len() >= want).map(|i| spares.swap_remove(i))
    };
    spare.unwrap_or_else(|| AlignedBuf::unzeroed(want))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_hold_runs_back_to_back_and_take_spares_that_fit() {
        // Buffers are whole 4 KiB pages: 256 and 1024 entries.
        let spares = Mutex::new(vec![AlignedBuf::new(4096), AlignedBuf::new(16 * 1024)]);
        let mut s = Segments::new(800);
        let run = |n: usize, v: u128| vec![v; n];
        // Runs of up to 100 entries (1/8 of 800) share segments: the spare of 1024 (256 are
        // short of 800).
        assert_eq!(s.push(&run(100, 1), &spares), (0, 0));
        assert_eq!(s.push(&run(60, 2), &spares), (0, 100));
        // A longer one gets a buffer of its own (the spare of 256), and the segment goes on.
        assert_eq!(s.push(&run(101, 3), &spares), (1, 0));
        assert_eq!(s.push(&run(0, 9), &spares), (0, 160));
        for v in 0..8 {
            s.push(&run(100, 10 + v), &spares);
        }
        // 1024 - 160 = 864 entries held eight runs of 100; the ninth starts a new segment.
        assert_eq!(s.push(&run(100, 4), &spares), (2, 0));
        assert!(spares.lock().unwrap().is_empty());
        let bufs = s.into_buffers();
        assert_eq!(bufs.len(), 3);
        assert!(bufs[0].as_u128s()[..100].iter().all(|&e| e == 1));
        assert!(bufs[0].as_u128s()[100..160].iter().all(|&e| e == 2));
        assert!(bufs[0].as_u128s()[160..260].iter().all(|&e| e == 10));
        assert!(bufs[1].as_u128s()[..101].iter().all(|&e| e == 3));
        assert!(bufs[2].as_u128s()[..100].iter().all(|&e| e == 4));
        assert!(bufs[2].as_u128s().len() >= 800, "a new segment: 800 entries or more");
    }

    #[test]
    fn a_segment_is_whole_pages_and_a_small_share_of_a_budget() {
        let e = std::mem::size_of::<Entry>();
        assert_eq!(segment_entries(5 << 30) * e, SEGMENT_BYTES);
        assert_eq!(segment_entries(600 << 20) * e, 8 << 20);
        assert_eq!(segment_entries(128 << 20) * e, HUGETLB_PAGE);
        // Below a huge page's share: whole 4 KiB pages, never the pool's, at least one.
        assert_eq!(segment_entries(127 << 20) * e, (127 << 20) / 64 / 4096 * 4096);
        assert_eq!(segment_entries(24 << 20) * e, 384 << 10);
        assert_eq!(segment_entries(1 << 20) * e, 16 << 10);
        assert_eq!(segment_entries(1000) * e, 4096);
    }

    #[test]
    fn slots_are_disjoint_and_read_back() {
        let mut a = EntryArena::new(5, 1000);
        // A load of this shape takes it over; one of another shape makes its own.
        assert!(a.holds(5, 1000) && !a.holds(4, 1000) && !a.holds(5, 512));
        for (i, s) in a.slots_mut().enumerate() {
            assert_eq!(s.len(), 1000);
            for (j, e) in s.iter_mut().enumerate() {
                *e = (i * 1_000_000 + j) as Entry;
            }
        }
        for i in 0..5 {
            let got = a.get(i, 7);
            assert_eq!(got, &(0..7).map(|j| (i * 1_000_000 + j) as Entry).collect::<Vec<_>>()[..]);
        }
    }
}

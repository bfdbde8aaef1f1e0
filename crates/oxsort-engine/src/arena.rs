//! The entries of one load in one buffer, a slot per chunk, from the hugetlb pool when one is
//! reserved ([`AlignedBuf`]). A vector per chunk came from the heap: memory a VM's host backs
//! afresh in every run, even when the records' buffers come from a pool that stays backed
//! (first touches of entries were 15% of a pooled JOINKEYS run's CPU).
//!
//! ```text
//!  | slot 0: chunk 0's entries ... | slot 1: chunk 1's | ... | slot n-1 |
//!    each slot 2^chunk_log2 entries; a chunk's microrun is the first `len` of its slot
//! ```

use oxsort_io::AlignedBuf;
use oxsort_kernels::Entry;

/// Slots of `slot_len` entries for the chunks of one load.
pub(crate) struct EntryArena {
    buf: AlignedBuf,
    slot_len: usize,
    slots: usize,
}

impl EntryArena {
    /// An arena of `slots` slots of `slot_len` entries (memory is touched only where written).
    pub(crate) fn new(slots: usize, slot_len: usize) -> Self {
        let bytes = slots * slot_len * std::mem::size_of::<Entry>();
        EntryArena { buf: AlignedBuf::new(bytes), slot_len, slots }
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

#[cfg(test)]
mod tests {
    use super::*;

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

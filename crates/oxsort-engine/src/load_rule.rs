//! What a load may hold: the rules the in-memory load ([`crate::inmem`]) applies chunk by
//! chunk, and the source ([`crate::source`]) applies to a first piece before it maps an input.
//!
//! ```text
//!   load budget (arena_bytes)                    read-ahead room
//!   |<------------------------------------------>|<------------->|
//!   | chunk | chunk | ... | chunk |               |
//!     each: buffer + entries + offset room           taken only at the inputs' end,
//!     (chunk_cost)                                   when the rest fits (takes_the_rest)
//! ```

use oxsort_kernels::INDEX_BITS;

/// What a chunk costs a load: its buffer (`kept` bytes), an entry (`entry_bytes`) for each of
/// its `records`, and the room its `offsets` table was given, not only what it fills (a hugetlb
/// pool backs the whole of a big allocation).
pub(crate) fn chunk_cost(kept: usize, records: usize, offsets: usize, entry_bytes: u64) -> u64 {
    kept as u64 + records as u64 * entry_bytes + crate::tuning::OFFSET_BYTES * offsets as u64
}

/// The most chunks a load may hold, `max_chunks` or fewer: an entry's index holds the chunk
/// number above the slot bits (`log2` of them), so a load never has more chunks than that can
/// name (a one-pass plan that would becomes a run of a two-pass sort).
pub(crate) fn chunks_at_most(max_chunks: u64, log2: u32) -> u64 {
    max_chunks.min(1u64 << (INDEX_BITS - log2))
}

/// Whether a load that holds `used` bytes for the `taken` input bytes it read may go on past its
/// budget to take the `left` bytes the inputs still hold (`None`: not known): when they, at
/// the load's cost per byte so far, keep it within `most`, its budget and the read-ahead memory
/// the plan reserved beside it (at the inputs' end nothing is read ahead any more, so that
/// memory is free). A load just short of the inputs' end then takes it, rather than spilling
/// its last chunks as a run of their own and merging them back.
pub(crate) fn takes_the_rest(used: u64, taken: u64, left: Option<u64>, most: u64) -> bool {
    let Some(left) = left.filter(|_| taken > 0) else { return false };
    used as u128 + left as u128 * used as u128 / taken as u128 <= most as u128
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_takes_the_rest_only_when_it_fits_at_the_cost_so_far() {
        // 100 bytes held for 50 read: 2 bytes per input byte.
        assert!(takes_the_rest(100, 50, Some(10), 120));
        assert!(!takes_the_rest(100, 50, Some(11), 120));
        // Nothing known of what is left, or nothing read to price it by.
        assert!(!takes_the_rest(100, 50, None, u64::MAX));
        assert!(!takes_the_rest(0, 0, Some(1), u64::MAX));
        // No overflow at the extremes.
        assert!(!takes_the_rest(u64::MAX, 1, Some(u64::MAX), u64::MAX));
    }

    #[test]
    fn a_load_never_names_more_chunks_than_an_entry_index_can() {
        assert_eq!(chunks_at_most(4, 10), 4);
        assert_eq!(chunks_at_most(u64::MAX, 10), 1 << (INDEX_BITS - 10));
    }
}

//! Records of varying length rewritten in the order of their chunk's sorted entries, as the
//! chunk is sorted: the output then reads every chunk front to back (see [`Rewrite`]).

use oxsort_io::AlignedBuf;
use oxsort_kernels::{entry_index, prefetch_read, Entry, INDEX_MASK};

use crate::chunk::Chunk;

/// Records ahead whose bytes a rewrite asks for while it copies one.
const REWRITE_PREFETCH: usize = 8;

/// A worker's spare buffer and offset table, for rewriting a chunk of records of varying
/// length in the order of its sorted entries. The output takes each part's records from a
/// range of every chunk's microrun: in the chunk as read, a random record each (two random
/// misses per record or more: its offset, then its two or three lines, the prefetches of the
/// gather waiting on full fill buffers); rewritten, the range is contiguous, a stream per
/// chunk read front to back, its offsets too. The copy happens here, while the chunk was just
/// read (in the last-level cache) and the reading, not the CPU, sets the input phase's pace.
///
/// ```text
///  as read:    | ccc\n | a\n | bb\n |     sorted entries: a(1) bb(2) ccc(0)
///  rewritten:  | a\n | bb\n | ccc\n |     entries renumbered: a(0) bb(1) ccc(2)
/// ```
///
/// The chunk's old buffer becomes the spare for the next chunk: one buffer more per worker.
#[derive(Default)]
pub(crate) struct Rewrite {
    buf: Option<AlignedBuf>,
    offsets: Vec<u32>,
}

impl Rewrite {
    /// Rewrites `chunk`'s records in the order of `entries` (its sorted entries, `base` its
    /// first index), from offset 0 of a new buffer, and renumbers the entries (their order,
    /// hence input order among equal prefixes, is kept).
    pub(crate) fn apply(&mut self, chunk: &mut Chunk, entries: &mut [Entry], base: u64, log2: u32) {
        let len = chunk.buf.len();
        let mut buf = match self.buf.take() {
            Some(b) if b.len() >= len => b,
            _ => AlignedBuf::new(len),
        };
        let mask = (1u64 << log2) - 1;
        let offs = &chunk.offsets;
        let bounds = |e: Entry| {
            let slot = (entry_index(e) & mask) as usize;
            (offs[slot] as usize, offs[slot + 1] as usize)
        };
        let mut new = std::mem::take(&mut self.offsets);
        new.clear();
        new.reserve(entries.len() + 1);
        new.push(0);
        let mut at = 0usize;
        for i in 0..entries.len() {
            if let Some(&ahead) = entries.get(i + REWRITE_PREFETCH) {
                let (a, b) = bounds(ahead);
                prefetch_read(&chunk.buf[a]);
                prefetch_read(&chunk.buf[b - 1]);
            }
            let (a, b) = bounds(entries[i]);
            buf[at..at + b - a].copy_from_slice(&chunk.buf[a..b]);
            at += b - a;
            new.push(at as u32);
            entries[i] = (entries[i] & !INDEX_MASK) | (base + i as u64) as u128;
        }
        chunk.records = entries.len();
        self.offsets = std::mem::replace(&mut chunk.offsets, new);
        self.buf = Some(std::mem::replace(&mut chunk.buf, buf));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use oxsort_kernels::{entry_prefix, make_entry};

    use super::*;
    use crate::chunk::Position;

    /// A chunk of `records` after `lead` bytes that are not a record.
    fn chunk(lead: &[u8], records: &[&[u8]]) -> Chunk {
        let mut buf = AlignedBuf::new(64);
        buf[..lead.len()].copy_from_slice(lead);
        let mut offsets = vec![lead.len() as u32];
        let mut at = lead.len();
        for r in records {
            buf[at..at + r.len()].copy_from_slice(r);
            at += r.len();
            offsets.push(at as u32);
        }
        let name: Arc<str> = Arc::from("in");
        let end = Position::default();
        Chunk { buf, records: records.len(), name, first_record: 0, offsets, end }
    }

    #[test]
    fn records_are_rewritten_in_entry_order_and_entries_renumbered() {
        let log2 = 8;
        let base = 5u64 << log2;
        let mut rw = Rewrite::default();
        for round in 0..2 {
            // The second round rewrites into the first one's old buffer.
            let mut c = chunk(b"x\n", &[b"ccc\n", b"a\n", b"bb\n", b"a\n"]);
            let key = |k: &[u8]| {
                let mut p = [0u8; 10];
                p[..k.len()].copy_from_slice(k);
                p
            };
            // Sorted by prefix, then index: a (1), a (3), bb (2), ccc (0).
            let mut entries: Vec<Entry> = [(b"a" as &[u8], 1), (b"a", 3), (b"bb", 2), (b"ccc", 0)]
                .iter()
                .map(|&(k, slot)| make_entry(&key(k), base + slot))
                .collect();
            let prefixes: Vec<_> = entries.iter().map(|&e| entry_prefix(e)).collect();
            rw.apply(&mut c, &mut entries, base, log2);
            assert_eq!(&c.buf[..11], b"a\na\nbb\nccc\n", "round {round}");
            assert_eq!(c.offsets, [0, 2, 4, 7, 11]);
            assert_eq!(c.records, 4);
            let idx: Vec<u64> = entries.iter().map(|&e| entry_index(e)).collect();
            assert_eq!(idx, [base, base + 1, base + 2, base + 3]);
            let after: Vec<_> = entries.iter().map(|&e| entry_prefix(e)).collect();
            assert_eq!(after, prefixes, "prefixes are kept");
        }
    }

    #[test]
    fn a_filtered_chunk_keeps_only_the_records_of_its_entries() {
        let log2 = 4;
        let mut c = chunk(b"", &[b"b\n", b"dropped\n", b"a\n"]);
        let mut entries = vec![make_entry(&[b'a'; 10], 2), make_entry(&[b'b'; 10], 0)];
        Rewrite::default().apply(&mut c, &mut entries, 0, log2);
        assert_eq!(&c.buf[..4], b"a\nb\n");
        assert_eq!((c.offsets.as_slice(), c.records), (&[0u32, 2, 4][..], 2));
    }
}

//! Records rewritten in the order of their chunk's sorted entries, as the chunk is sorted: the
//! output then reads every chunk front to back (see [`Rewrite`]).

use oxsort_io::AlignedBuf;
use oxsort_kernels::{entry_index, prefetch_read, prefetch_record, Entry, INDEX_MASK};

use crate::chunk::Chunk;

/// Records ahead whose bytes a rewrite asks for while it copies one.
const REWRITE_PREFETCH: usize = 8;

/// A worker's spare buffer (and offset table, for records of varying length), for rewriting a
/// chunk's records in the order of its sorted entries. The output takes each part's records
/// from a range of every chunk's microrun: in the chunk as read, a random record each (its two
/// or three lines random misses, and for records of varying length its offset one more; the
/// gather's prefetches wait on full fill buffers); rewritten, the range is contiguous, a
/// stream per chunk read front to back, its offsets too. The copy happens here, while the
/// chunk was just read (in the last-level cache) and the reading, not the CPU, sets the input
/// phase's pace.
///
/// ```text
///  as read:    | ccc\n | a\n | bb\n |     sorted entries: a(1) bb(2) ccc(0)
///  rewritten:  | a\n | bb\n | ccc\n |     entries renumbered: a(0) bb(1) ccc(2)
/// ```
///
/// The chunk's old buffer becomes the spare for the next chunk: one buffer more per worker
/// (a mapped piece of a file is not kept: the next rewrite takes a new buffer).
/// Measured on a one-pass sort of 4e7 100-byte records, tmpfs to tmpfs from the hugetlb pool:
/// the output's user CPU 3.3 s to 1.8 s, the sort workers' 1.2 s to 1.9 s, the wall 4.2 s to
/// 3.7 s (see `bench/runs/2026-11-30j`).
#[derive(Default)]
pub(crate) struct Rewrite {
    buf: Option<AlignedBuf>,
    offsets: Vec<u32>,
}

impl Rewrite {
    /// Rewrites `chunk`'s records (of `record_size` bytes each, else found by its offsets) in
    /// the order of `entries` (its sorted entries, `base` its first index), from offset 0 of a
    /// new buffer, and renumbers the entries (their order, hence input order among equal
    /// prefixes, is kept).
    pub(crate) fn apply(
        &mut self,
        chunk: &mut Chunk,
        entries: &mut [Entry],
        base: u64,
        log2: u32,
        record_size: Option<usize>,
    ) {
        let mut buf = self.spare(chunk.buf.len());
        let mask = (1u64 << log2) - 1;
        let slot = |e: Entry| (entry_index(e) & mask) as usize;
        let src = &chunk.buf[..];
        match record_size {
            Some(r) => {
                for (i, out) in buf[..entries.len() * r].chunks_exact_mut(r).enumerate() {
                    if let Some(&ahead) = entries.get(i + REWRITE_PREFETCH) {
                        let a = slot(ahead) * r;
                        prefetch_record(&src[a..a + r]);
                    }
                    let a = slot(entries[i]) * r;
                    oxsort_bytes::copy_field(&src[a..a + r], out);
                }
            }
            None => {
                let offs = &chunk.offsets;
                let bounds = |e: Entry| (offs[slot(e)] as usize, offs[slot(e) + 1] as usize);
                let mut new = std::mem::take(&mut self.offsets);
                new.clear();
                new.reserve(entries.len() + 1);
                new.push(0);
                let mut at = 0usize;
                for i in 0..entries.len() {
                    if let Some(&ahead) = entries.get(i + REWRITE_PREFETCH) {
                        let (a, b) = bounds(ahead);
                        prefetch_read(&src[a]);
                        prefetch_read(&src[b - 1]);
                    }
                    let (a, b) = bounds(entries[i]);
                    buf[at..at + b - a].copy_from_slice(&src[a..b]);
                    at += b - a;
                    new.push(at as u32);
                }
                self.offsets = std::mem::replace(&mut chunk.offsets, new);
            }
        }
        for (i, e) in entries.iter_mut().enumerate() {
            *e = (*e & !INDEX_MASK) | (base + i as u64) as u128;
        }
        chunk.records = entries.len();
        self.keep(std::mem::replace(&mut chunk.buf, buf));
    }

    /// Keeps a chunk's old buffer as the next spare, unless it maps a file's pages (a mapped
    /// piece of a tmpfs file): it is unmapped, and the next rewrite takes memory of its own.
    fn keep(&mut self, old: AlignedBuf) {
        if !old.is_file_mapping() {
            self.buf = Some(old);
        }
    }

    /// A spare buffer of at least `len` bytes (the last chunk's, when it is big enough).
    fn spare(&mut self, len: usize) -> AlignedBuf {
        match self.buf.take() {
            Some(b) if b.len() >= len => b,
            _ => AlignedBuf::unzeroed(len),
        }
    }

    /// Rewrites `chunk`'s records, of `size` bytes each, with `fill` (given the chunk's buffer
    /// as read and the spare buffer to write to, from offset 0), which leaves `records` of them
    /// there: the chunk then holds the spare buffer, and its old buffer is the next spare.
    /// For a rewrite in an order `fill` finds as it goes (a bucket scatter: see
    /// [`oxsort_kernels::Bucketer::place_records`]), rather than that of sorted entries.
    pub(crate) fn fill_fixed(
        &mut self,
        chunk: &mut Chunk,
        records: usize,
        size: usize,
        fill: impl FnOnce(&[u8], &mut [u8]),
    ) {
        let mut buf = self.spare(chunk.buf.len());
        fill(&chunk.buf[..], &mut buf[..records * size]);
        chunk.records = records;
        self.keep(std::mem::replace(&mut chunk.buf, buf));
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
            rw.apply(&mut c, &mut entries, base, log2, None);
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
    fn fixed_records_are_rewritten_in_entry_order_past_the_prefetch_distance() {
        // 40 records of 70 bytes (each over two or three cache lines), in reverse order of
        // their first byte; a filter kept all but record 7.
        let (r, n, log2) = (70usize, 40u8, 6);
        let base = 3u64 << log2;
        let records: Vec<Vec<u8>> = (0..n).map(|i| vec![b'z' - i; r]).collect();
        let mut c = chunk(b"", &[]);
        c.buf = AlignedBuf::new(r * n as usize);
        for (i, rec) in records.iter().enumerate() {
            c.buf[i * r..(i + 1) * r].copy_from_slice(rec);
        }
        c.records = n as usize;
        let mut slots: Vec<u64> = (0..n as u64).filter(|&i| i != 7).collect();
        slots.reverse();
        let mut entries: Vec<Entry> =
            slots.iter().map(|&i| make_entry(&[records[i as usize][0]; 10], base + i)).collect();
        let prefixes: Vec<_> = entries.iter().map(|&e| entry_prefix(e)).collect();
        let mut rw = Rewrite::default();
        rw.apply(&mut c, &mut entries, base, log2, Some(r));
        assert_eq!(c.records, slots.len());
        for (i, &slot) in slots.iter().enumerate() {
            assert_eq!(&c.buf[i * r..(i + 1) * r], &records[slot as usize][..], "record {i}");
            assert_eq!(entry_index(entries[i]), base + i as u64);
            assert_eq!(entry_prefix(entries[i]), prefixes[i], "the prefixes are kept");
        }
    }

    #[test]
    fn a_filtered_chunk_keeps_only_the_records_of_its_entries() {
        let log2 = 4;
        let mut c = chunk(b"", &[b"b\n", b"dropped\n", b"a\n"]);
        let mut entries = vec![make_entry(&[b'a'; 10], 2), make_entry(&[b'b'; 10], 0)];
        Rewrite::default().apply(&mut c, &mut entries, 0, log2, None);
        assert_eq!(&c.buf[..4], b"a\nb\n");
        assert_eq!((c.offsets.as_slice(), c.records), (&[0u32, 2, 4][..], 2));
    }
}

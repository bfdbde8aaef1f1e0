//! RDW-prefixed records (z/OS `RECFM=V`/`VB`) cut into chunks of whole records.
//!
//! ```text
//!   input   |RDW|data..|RDW|data....|RDW|da|ta|RDW|...       (RDW: 2-byte big-endian length
//!   chunk k [ whole records ........ ][ rest ]                  of the record, RDW included,
//!   chunk k+1          [ rest ][ whole records ... ]            then 2 zero bytes)
//! ```
//!
//! An RDW-prefixed stream has no byte that marks where a record starts: the records are found
//! by walking their RDWs from the start of the input. Bytes are copied into a chunk buffer
//! (after the previous chunk's unfinished record), the RDWs are walked and checked, the chunk
//! ends after the last whole record, and the rest waits for the next chunk. Every RDW is
//! checked as it is walked: a bad one, or a record cut by the end of its file, stops the sort
//! with the file, the byte offset and the record's number.

use std::path::PathBuf;

use oxsort_format::{rdw_problem, RDW_BYTES};

use super::{Chunk, ChunkSource, Position};
use crate::error::{EngineError, Result};
use crate::tuning::OFFSETS_GUESS_RECORD_BYTES;

impl ChunkSource {
    /// The next chunk of RDW-prefixed records of at most `max` bytes each, or `None` when every
    /// input is exhausted.
    pub(super) fn read_variable(&mut self, max: usize) -> Result<Option<Chunk>> {
        let cap = self.chunk_bytes;
        loop {
            let mut buf = self.take_buffer();
            let mut filled = self.leftover.len();
            buf[..filled].copy_from_slice(&self.leftover);
            self.leftover.clear();
            let mut ended = false;
            while filled < cap {
                if self.carry.is_none() {
                    match self.next_piece()? {
                        Some(p) => self.carry = Some((p.buf, 0, p.len, p.offset)),
                        None => {
                            ended = true;
                            break;
                        }
                    }
                }
                let (piece, pos, len, _) = self.carry.as_mut().expect("set above");
                let take = (*len - *pos).min(cap - filled);
                buf[filled..filled + take].copy_from_slice(&piece[*pos..*pos + take]);
                filled += take;
                *pos += take;
                let piece_done = *pos == *len;
                self.consumed(take);
                if piece_done {
                    let (piece, ..) = self.carry.take().expect("set above");
                    self.recycle_piece(piece);
                }
            }
            if filled == 0 {
                // The input ended on a record boundary (or was empty): on to the next one.
                self.spare.push(buf);
                self.input_ended();
                if self.current.is_none() && self.pending.is_empty() {
                    return Ok(None);
                }
                continue;
            }
            // The file offset of buf[0].
            let base = self.file_pos - filled as u64;
            let mut offsets = Vec::with_capacity(filled / OFFSETS_GUESS_RECORD_BYTES + 2);
            offsets.push(0u32);
            let mut at = 0usize;
            while filled - at >= RDW_BYTES {
                let number = self.file_records + offsets.len() as u64;
                if let Some(why) = rdw_problem(&buf[at..filled], max) {
                    return Err(self.bad_rdw(base + at as u64, number, why));
                }
                let n = u16::from_be_bytes([buf[at], buf[at + 1]]) as usize;
                if at + n > filled {
                    break;
                }
                at += n;
                offsets.push(at as u32);
            }
            let records = offsets.len() - 1;
            if ended && at < filled {
                let number = self.file_records + records as u64 + 1;
                let rest = filled - at;
                let why = match oxsort_format::rdw_len(&buf[at..filled]) {
                    Some(n) if rest >= RDW_BYTES => format!(
                        "its RDW gives a length of {n}, past the end of the file ({rest} bytes \
                         left)"
                    ),
                    _ => format!("the file ends {rest} bytes into its RDW"),
                };
                return Err(self.bad_rdw(base + at as u64, number, why));
            }
            if records == 0 {
                return Err(EngineError::Data(format!(
                    "{}: record {} at byte offset {} is longer than a chunk ({cap} bytes); a \
                     larger memory budget reads longer records",
                    self.name,
                    self.file_records + 1,
                    base
                )));
            }
            self.leftover.extend_from_slice(&buf[at..filled]);
            let first_record = self.file_records;
            self.file_records += records as u64;
            let end = Position {
                input: self.input.unwrap_or(0),
                offset: self.file_pos - self.leftover.len() as u64,
                record: self.file_records,
            };
            let chunk = Chunk { buf, records, name: self.name.clone(), first_record, offsets, end };
            if ended {
                self.input_ended();
            }
            return Ok(Some(chunk));
        }
    }

    /// The error of a bad RDW at `offset` of the current input, record `record` (1-based).
    fn bad_rdw(&self, offset: u64, record: u64, why: String) -> EngineError {
        EngineError::BadRdw { path: PathBuf::from(&*self.name), offset, record, why }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Input;
    use oxsort_format::RecordLayout;
    use oxsort_io::IoOptions;

    fn vb(lens: impl Iterator<Item = usize>) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, n) in lens.enumerate() {
            out.extend_from_slice(&((n + 4) as u16).to_be_bytes());
            out.extend_from_slice(&[0, 0]);
            out.extend((0..n).map(|j| (i + j) as u8));
        }
        out
    }

    fn read_all(files: &[Vec<u8>], chunk: usize, max: usize) -> Result<Vec<Chunk>> {
        let dir = tempfile::tempdir().unwrap();
        let inputs: Vec<Input> = files
            .iter()
            .enumerate()
            .map(|(i, data)| {
                let p = dir.path().join(format!("in{i}"));
                std::fs::write(&p, data).unwrap();
                Input::Path(p)
            })
            .collect();
        let io = IoOptions { buffered: true, ..IoOptions::default() };
        let mut src = ChunkSource::new(&inputs, RecordLayout::Variable(max), chunk, 2, io);
        let mut out = Vec::new();
        while let Some(c) = src.next_chunk()? {
            out.push(c);
        }
        Ok(out)
    }

    #[test]
    fn chunks_hold_whole_records_of_each_input() {
        let a = vb((0..500).map(|i| (i * 37) % 300));
        let b = vb((0..7).map(|i| i * 3));
        for chunk in [400usize, 4096, 1 << 20] {
            let chunks = read_all(&[a.clone(), Vec::new(), b.clone()], chunk, 304).unwrap();
            let mut got = Vec::new();
            let mut numbers = Vec::new();
            for c in &chunks {
                assert_eq!(c.offsets.len(), c.records + 1);
                numbers.push((c.end.input, c.first_record, c.records));
                for w in c.offsets.windows(2) {
                    let rec = &c.buf[w[0] as usize..w[1] as usize];
                    assert_eq!(u16::from_be_bytes([rec[0], rec[1]]) as usize, rec.len());
                    got.extend_from_slice(rec);
                }
            }
            let mut want = a.clone();
            want.extend_from_slice(&b);
            assert!(got == want, "chunk {chunk}: the records are not the inputs'");
            let total: usize = numbers.iter().map(|n| n.2).sum();
            assert_eq!(total, 507, "chunk {chunk}");
            // Record numbers restart with each input.
            let last = chunks.last().unwrap();
            assert_eq!((last.end.input, last.end.record, last.end.offset), (2, 7, b.len() as u64));
        }
    }

    #[test]
    fn bad_rdws_name_the_file_offset_and_record() {
        let good = vb([5usize, 6, 7].into_iter());
        let err = |data: Vec<u8>, max: usize| {
            let e = read_all(&[data], 1 << 16, max).err().expect("an error");
            let msg = e.to_string();
            assert!(msg.contains("in0: record "), "{msg}");
            msg
        };
        let mut short = good.clone();
        short[9..11].copy_from_slice(&[0, 3]);
        assert!(err(short, 100).contains("record 2 at byte offset 9: its RDW gives a length of 3"));
        let mut nonzero = good.clone();
        nonzero[12] = 7;
        assert!(err(nonzero, 100).contains("record 2 at byte offset 9: bytes 3-4"));
        assert!(err(good.clone(), 10).contains(
            "record 3 at byte offset 19: its RDW gives a length of 11, more than the 10"
        ));
        let mut cut = good.clone();
        cut.truncate(cut.len() - 1);
        assert!(err(cut, 100).contains(
            "record 3 at byte offset 19: its RDW gives a length of 11, past the end of the file \
             (10 bytes left)"
        ));
        let mut stub = good.clone();
        stub.extend_from_slice(&[0, 9]);
        assert!(err(stub, 100).contains("record 4 at byte offset 30: the file ends 2 bytes into"));
    }
}

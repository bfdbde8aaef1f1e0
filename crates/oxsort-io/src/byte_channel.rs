//! A byte stream between two threads of one process: what a pipe does, without the kernel's
//! two copies and a system call per 64 KiB-1 MiB. The writer copies each write into a buffer
//! and sends it; the reader hands out its bytes and sends the buffer back for reuse (a new
//! buffer would cost a page fault per 4 KiB of fresh memory). The stream ends when the writer
//! is dropped; a reader that goes away makes the writer's next write fail as a closed pipe.
//!
//! ```text
//!  ByteWriter ── full buffers (at most DEPTH) ──> ByteReader
//!       ^                                             │
//!       └──────────── emptied buffers ────────────────┘
//! ```

use std::io::{self, Read, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};

/// Buffers in flight from writer to reader: enough for the writer to run ahead of a reader
/// that stops briefly, few enough to bound the memory.
const DEPTH: usize = 4;

/// The writing end.
pub struct ByteWriter {
    full: SyncSender<Vec<u8>>,
    empty: Receiver<Vec<u8>>,
}

/// The reading end.
pub struct ByteReader {
    full: Receiver<Vec<u8>>,
    empty: Sender<Vec<u8>>,
    cur: Vec<u8>,
    pos: usize,
}

/// A new stream: (writer, reader).
pub fn byte_channel() -> (ByteWriter, ByteReader) {
    let (full_tx, full_rx) = sync_channel(DEPTH);
    let (empty_tx, empty_rx) = channel();
    (
        ByteWriter { full: full_tx, empty: empty_rx },
        ByteReader { full: full_rx, empty: empty_tx, cur: Vec::new(), pos: 0 },
    )
}

impl Write for ByteWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        let mut buf = self.empty.try_recv().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(data);
        self.full
            .send(buf)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the reader has gone"))?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for ByteReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.cur.len() {
            let Ok(next) = self.full.recv() else {
                return Ok(0); // the writer is gone: the end of the stream
            };
            let done = std::mem::replace(&mut self.cur, next);
            // The writer may be gone already: then the buffer is simply dropped.
            let _ = self.empty.send(done);
            self.pos = 0;
        }
        let n = out.len().min(self.cur.len() - self.pos);
        out[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_arrive_in_order_however_written_and_read() {
        let data: Vec<u8> = (0..1_000_003u32).map(|i| (i * 31 + i / 7) as u8).collect();
        let (mut w, mut r) = byte_channel();
        let sent = data.clone();
        let writer = std::thread::spawn(move || {
            let mut at = 0;
            let mut step = 1;
            while at < sent.len() {
                let n = step.min(sent.len() - at);
                w.write_all(&sent[at..at + n]).unwrap();
                at += n;
                step = step * 3 % 70_001 + 1;
            }
        });
        let mut got = Vec::new();
        let mut buf = [0u8; 100];
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        writer.join().unwrap();
        assert!(got == data);
    }

    #[test]
    fn a_reader_that_goes_away_closes_the_stream_for_the_writer() {
        let (mut w, r) = byte_channel();
        drop(r);
        let e = w.write_all(b"records").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }
}

//! `-c` / `-C`: is the input already in order? The first line out of order is reported as
//! `sort: FILE:LINE: disorder: TEXT`; the exit status is 1 for disorder.
//!
//! The check is a read of the file and one comparison per line, so it runs at the speed of the
//! read: the file comes through the engine's read-ahead pipeline (direct transfers of
//! [`TRANSFER_TARGET`] bytes, [`READ_DEPTH`] in flight; a pipe is read in order by one thread),
//! and whole lines compared as bytes are compared where they lie in the block that was read.
//!
//! ```text
//!   Reader ──> block n: | tail of a line | line | line | ... | head of a line |
//!                          └ joined with the head kept from block n-1 (the only copy)
//!   compare:  line i-1 vs line i, in place (or their keys, when a key is given)
//! ```

use std::io::Write;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::Arc;

use oxsort_engine::tuning::{READ_DEPTH, TRANSFER_TARGET};
use oxsort_format::KeySpec;
use oxsort_io::{DirectFile, IoError, IoOptions, Reader};

use super::msg::Fail;

/// Opens `file` (`-`: standard input) as a pipeline source.
fn open(file: &str) -> Result<Arc<DirectFile>, Fail> {
    let opts = IoOptions::default();
    let f = if file == "-" {
        let stdin = std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| Fail::io("read failed", file, &e))?;
        DirectFile::from_std(std::fs::File::from(stdin), PathBuf::from("-"), &opts)
    } else {
        DirectFile::open(&super::osname::path(file), &opts)
            .map_err(|e| Fail::io("open failed", file, e.io_error()))?
    };
    // A file whose size says nothing of its bytes (`/proc`, `/sys`, empty) is read to its end.
    let trusted = f.trusted_len().map_err(|e| Fail::io("read failed", file, e.io_error()))?;
    let f = if f.is_seekable() && trusted.is_none() { f.into_sequential() } else { f };
    Ok(Arc::new(f))
}

/// The running comparison: the line (or key) before the current one.
struct Order<'s> {
    spec: Option<&'s KeySpec>,
    unique: bool,
    /// The previous line's key, when a key is given; or the previous line's bytes when it was
    /// not in the current block.
    prev: Vec<u8>,
    cur: Vec<u8>,
    /// Lines seen.
    number: u64,
}

impl Order<'_> {
    /// Whether `a` before `b` is out of order.
    fn disorder(&self, a: &[u8], b: &[u8]) -> bool {
        if self.unique {
            a >= b
        } else {
            a > b
        }
    }

    /// Takes the next line; `before` is the previous line when it lies in the same block.
    /// Returns true when the line is out of order.
    fn step(&mut self, line: &[u8], before: Option<&[u8]>) -> bool {
        self.number += 1;
        match self.spec {
            Some(spec) => {
                self.cur.clear();
                // GNU keys never fail to extract: every column key reads something.
                let _ = spec.normalize(line, &mut self.cur);
                let bad = self.number > 1 && self.disorder(&self.prev, &self.cur);
                std::mem::swap(&mut self.prev, &mut self.cur);
                bad
            }
            None => {
                let prev = before.unwrap_or(&self.prev);
                self.number > 1 && self.disorder(prev, line)
            }
        }
    }

    /// Keeps `line` as the previous line for the next block (raw lines only).
    fn keep(&mut self, line: &[u8]) {
        if self.spec.is_none() {
            self.prev.clear();
            self.prev.extend_from_slice(line);
        }
    }
}

/// Checks `file` (`-` for standard input); with `unique`, equal neighbours are disorder too.
/// `spec` is `None` for whole lines compared as bytes (then no key is built).
pub fn check(
    file: &str,
    spec: Option<&KeySpec>,
    eol: u8,
    unique: bool,
    diagnose: bool,
) -> Result<i32, Fail> {
    let input = open(file)?;
    let range = if input.is_seekable() {
        0..input.len().map_err(|e| Fail::io("read failed", file, e.io_error()))?
    } else {
        0..u64::MAX
    };
    let read_failed = |e: IoError| Fail::io("read failed", file, e.io_error());
    let mut reader = Reader::new(input, range, TRANSFER_TARGET, READ_DEPTH, &IoOptions::default())
        .map_err(read_failed)?;
    let mut order = Order { spec, unique, prev: Vec::new(), cur: Vec::new(), number: 0 };
    let disorder = |order: &Order, line: &[u8]| {
        if diagnose {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "sort: {file}:{}: disorder: ", order.number);
            let _ = e.write_all(line);
            let _ = e.write_all(&[eol]);
        }
        Ok(1)
    };
    // A line split between blocks: its bytes from the blocks before.
    let mut partial: Vec<u8> = Vec::new();
    while let Some(chunk) = reader.next_chunk() {
        let chunk = chunk.map_err(read_failed)?;
        let block = chunk.data();
        let mut start = 0;
        let mut before: Option<(usize, usize)> = None;
        for end in memchr::memchr_iter(eol, block) {
            if start == 0 && !partial.is_empty() {
                partial.extend_from_slice(&block[..end]);
                if order.step(&partial, None) {
                    return disorder(&order, &partial);
                }
                order.keep(&partial);
                partial.clear();
            } else {
                let line = &block[start..end];
                if order.step(line, before.map(|(s, e)| &block[s..e])) {
                    return disorder(&order, line);
                }
                before = Some((start, end));
            }
            start = end + 1;
        }
        if let Some((s, e)) = before {
            order.keep(&block[s..e]);
        }
        // The bytes after the last terminator start the next line.
        partial.extend_from_slice(&block[start..]);
        reader.recycle(chunk.buf);
    }
    if !partial.is_empty() {
        // The last line lacks its terminator.
        if order.step(&partial, None) {
            return disorder(&order, &partial);
        }
    }
    Ok(0)
}

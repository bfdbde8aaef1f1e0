//! `-c` / `-C`: is the input already in order? The first line out of order is reported as
//! `sort: FILE:LINE: disorder: TEXT`; the exit status is 1 for disorder.

use std::io::{Read, Write};

use oxsort_format::KeySpec;

use super::msg::Fail;

/// Bytes read at a time: large transfers keep the disk at full speed.
const READ_BYTES: usize = 8 << 20;
/// Blocks read ahead of the comparisons (a reader thread overlaps reading with comparing).
const READ_AHEAD: usize = 2;

/// Blocks read ahead of the caller, and the channel that hands read blocks back to be
/// refilled (fresh memory costs a page fault per page; recycled blocks do not).
type Blocks =
    (std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>, std::sync::mpsc::SyncSender<Vec<u8>>);

/// Reads `input` on a thread, in blocks, ahead of the caller.
fn blocks(mut input: Box<dyn Read + Send>) -> Blocks {
    let (tx, rx) = std::sync::mpsc::sync_channel(READ_AHEAD);
    let (back_tx, back_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(READ_AHEAD + 2);
    std::thread::spawn(move || loop {
        let mut buf = back_rx.try_recv().unwrap_or_else(|_| vec![0u8; READ_BYTES]);
        buf.resize(READ_BYTES, 0);
        let mut n = 0;
        while n < buf.len() {
            match input.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        buf.truncate(n);
        let last = n == 0;
        if tx.send(Ok(buf)).is_err() || last {
            return;
        }
    });
    (rx, back_tx)
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
    let input: Box<dyn Read + Send> = if file == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(file).map_err(|e| Fail::io("open failed", file, &e))?)
    };
    let (rx, back) = blocks(input);
    // The key (or the line) before the current one, and the current one.
    let (mut prev, mut cur) = (Vec::new(), Vec::new());
    // A line split between blocks.
    let mut partial: Vec<u8> = Vec::new();
    let mut number: u64 = 0;
    let mut compare = |line: &[u8], number: u64| -> Option<i32> {
        cur.clear();
        match spec {
            // GNU keys never fail to extract: every column key reads something.
            Some(spec) => {
                let _ = spec.normalize(line, &mut cur);
            }
            None => cur.extend_from_slice(line),
        }
        if number > 1 {
            let out_of_order = if unique { prev >= cur } else { prev > cur };
            if out_of_order {
                if diagnose {
                    let mut e = std::io::stderr().lock();
                    let _ = write!(e, "sort: {file}:{number}: disorder: ");
                    let _ = e.write_all(line);
                    let _ = e.write_all(&[eol]);
                }
                return Some(1);
            }
        }
        std::mem::swap(&mut prev, &mut cur);
        None
    };
    for block in rx {
        let block = block.map_err(|e| Fail::io("read failed", file, &e))?;
        if block.is_empty() {
            break;
        }
        let mut start = 0;
        if !partial.is_empty() {
            match memchr::memchr(eol, &block) {
                Some(p) => {
                    partial.extend_from_slice(&block[..p]);
                    number += 1;
                    if let Some(code) = compare(&partial, number) {
                        return Ok(code);
                    }
                    partial.clear();
                    start = p + 1;
                }
                None => {
                    partial.extend_from_slice(&block);
                    continue;
                }
            }
        }
        let base = start;
        for p in memchr::memchr_iter(eol, &block[base..]) {
            let end = base + p;
            number += 1;
            if let Some(code) = compare(&block[start..end], number) {
                return Ok(code);
            }
            start = end + 1;
        }
        // The bytes after the last terminator start the next line.
        partial.extend_from_slice(&block[start..]);
        let _ = back.try_send(block);
    }
    if !partial.is_empty() {
        // The last line lacks its terminator.
        number += 1;
        if let Some(code) = compare(&partial, number) {
            return Ok(code);
        }
    }
    Ok(0)
}

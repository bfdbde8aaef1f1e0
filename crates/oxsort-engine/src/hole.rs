//! Holes punched in runs behind a merge: their disk space given back while it reads them.
//!
//! ```text
//!   merge thread (RunReader per run)          the holes thread
//!   ─────────────────────────────────         ──────────────────────────────
//!   block [a, b) read into memory  ──(file, [a, b))──▶  DirectFile::release: a hole
//!   block [b, c) read              ──(file, [b, c))──▶  ...
//!   HolePuncher dropped            ──Stop────────────▶  what came before Stop, then ends
//!   (joined; the runs are now mostly holes, and their removal is quick)
//! ```
//!
//! Why: on a filesystem that discards freed blocks as it frees them (ext4 mounted with
//! `discard`, common on cloud disks) removing a run of 70 MB blocks for 20-30 ms, 0.3 s per GB
//! of runs, all of it after the output is written when the runs are removed at the end. Freed
//! piece by piece on a thread of its own as the merge reads them, the same cost overlaps the
//! merge. Nothing a merge still needs is freed: a piece is released only once it is in memory.
//! A resumable sort does not use this (its runs must survive a kill until its level is
//! journaled). A failed release (a filesystem without holes) only leaves the space to the
//! removal, as before.

use std::ops::Range;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use oxsort_io::{DirectFile, DIRECT_ALIGN};

enum Msg {
    Release(Arc<DirectFile>, Range<u64>),
    Stop,
}

/// The thread releasing read pieces of runs.
pub(crate) struct HolePuncher {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<()>>,
}

impl HolePuncher {
    /// Starts the thread; `None` when it cannot be started (the runs are then freed when they
    /// are removed).
    pub(crate) fn start() -> Option<Self> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let thread = std::thread::Builder::new()
            .name("oxsort-holes".into())
            .spawn(move || serve(rx))
            .ok()?;
        Some(HolePuncher { tx, thread: Some(thread) })
    }

    /// A handle releasing `file` (of `len` bytes) as it is read.
    pub(crate) fn handle(&self, file: Arc<DirectFile>, len: u64) -> Punch {
        Punch { tx: self.tx.clone(), file, from: 0, len }
    }
}

/// Dropped: releases what was asked before, then stops the thread and waits for it.
impl Drop for HolePuncher {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = self.tx.send(Msg::Stop);
            let _ = t.join();
        }
    }
}

fn serve(rx: Receiver<Msg>) {
    while let Ok(Msg::Release(file, range)) = rx.recv() {
        // A release that fails leaves the space to the run's removal.
        let _ = file.release(range);
    }
}

/// Releases one run's file front to back as a reader reads it: whole filesystem blocks only,
/// up to the last byte read (the block holding the file's end with the last piece).
pub(crate) struct Punch {
    tx: Sender<Msg>,
    file: Arc<DirectFile>,
    /// Released up to here (a multiple of [`DIRECT_ALIGN`]).
    from: u64,
    len: u64,
}

impl Punch {
    /// The file's bytes up to `end` are read and in memory: they may go.
    pub(crate) fn read_to(&mut self, end: u64) {
        let align = DIRECT_ALIGN as u64;
        let to =
            if end >= self.len { self.len.div_ceil(align) * align } else { end / align * align };
        if to > self.from {
            let piece = self.from..to;
            self.from = to;
            // The thread is gone only after the room stopped it: nothing left to release.
            let _ = self.tx.send(Msg::Release(self.file.clone(), piece));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// Bytes the file's allocated blocks hold.
    fn allocated(path: &std::path::Path) -> u64 {
        std::fs::metadata(path).unwrap().blocks() * 512
    }

    #[test]
    fn read_pieces_become_holes_and_unread_bytes_stay() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        let a = DIRECT_ALIGN as u64;
        let len = 40 * a + 123;
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8 + 1).collect();
        std::fs::write(&path, &bytes).unwrap();
        let before = allocated(&path);
        let io = oxsort_io::IoOptions { buffered: true, ..Default::default() };
        let file = Arc::new(DirectFile::open_update(&path, &io).unwrap());

        // Read to inside block 20: blocks 0-19 go, the block holding the end stays.
        let r = HolePuncher::start().unwrap();
        let mut h = r.handle(file.clone(), len);
        h.read_to(20 * a + 7);
        drop(r);
        let back = std::fs::read(&path).unwrap();
        assert_eq!(back.len() as u64, len, "the length stays");
        let cut = 20 * a as usize;
        assert_eq!(&back[cut..], &bytes[cut..], "bytes not yet read are untouched");
        if allocated(&path) == before {
            return; // a filesystem without holes: the removal frees the space
        }
        assert!(back[..cut].iter().all(|&b| b == 0), "released pieces read as holes");
        assert!(allocated(&path) <= before - 20 * a);

        // Read to the end: the last, partial block goes too; a handle dropped unread
        // releases nothing.
        let r = HolePuncher::start().unwrap();
        drop(r.handle(file.clone(), len));
        let mut h = r.handle(file, len);
        h.from = 20 * a;
        h.read_to(len);
        drop(h);
        drop(r);
        assert!(std::fs::read(&path).unwrap().iter().all(|&b| b == 0));
        assert_eq!(allocated(&path), 0);
    }
}

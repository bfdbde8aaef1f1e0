//! [`MappedReader`]: an input handed out as pieces that map its pages, instead of read into
//! fresh buffers.
//!
//! Why: reading a file copies it into pages the process has not touched before. On a VM with
//! free-page reporting each fresh page costs a host fault while the guest zeroes it: 2.4 CPU-s
//! per GB in the profile of a one-pass sort of a tmpfs file, 60% of all its CPU (the prefault
//! helpers and the io_uring worker zeroing read buffers); 1.4 CPU-s per GB (`clear_page_erms`,
//! 60% of the CPU) in a one-pass sort of a 2 GB file on disk. A private mapping of the file's
//! pages costs neither the copy nor the zeroing: a tmpfs file's pages are in memory already,
//! and a disk file's pages come from the page cache, which the device fills (a 2 GB file mapped
//! and populated in 0.8-1.0 s with 0.03 s of system CPU on the benchmark VM, as fast as 16
//! direct reads in flight). A write (INREC reshaping records in place) copies only the page it
//! touches, and never reaches the file.
//!
//! Mapping is used only where it is cheap and safe: a regular file on tmpfs, or any regular
//! file when the caller says the sort holds all of it at once anyway (one pass: the pages it
//! maps are the memory it would have read into, and no page is read twice) and the hugetlb
//! pool has no room for it ([`worth_mapping`]), read from a page-aligned offset, without test fault injection (whose failures count reads).
//! `OXSORT_MAP_INPUT=off` in the environment reads every input.
//!
//! A file on disk is mapped and populated ahead of the caller by [`MAP_POPULATE_THREADS`]
//! threads, up to [`MAP_READ_AHEAD`] pieces ahead, handed out in file order:
//!
//! ```text
//!  helper 1: map piece 0, populate ─┐                      ┌─> next_chunk: piece 0, 1, 2, ...
//!  helper 2: map piece 1, populate ─┼─> bounded channel ───┤   (pieces that come early wait
//!  helper 1: map piece 2, populate ─┘   (piece, offset)    └─   in a reorder map)
//! ```
//!
//! Each piece is mapped at an address congruent to its file offset modulo 2 MiB and advised
//! `MADV_HUGEPAGE`: a fault then reads the file ahead in 2 MiB folios whatever the system's
//! readahead window, and maps them whole (one TLB entry per 2 MiB: the output's gather of
//! records at random from the pages needs that). A page the device cannot read is the read
//! error of its piece, as a read would report it.
//!
//! A mapped file that shrinks while it is sorted would fault (`SIGBUS`) where a read would have
//! come back short. [`guard`] installs a handler for that case: it writes which input changed,
//! asks the process to stop as an interrupt does (the `SIGTERM` cleanup removes temporary files
//! and the unfinished output), and parks the faulting thread. Other `SIGBUS` faults go to the
//! handler that was there before. A file whose bytes change (not its length) while it is
//! sorted is caught by the checksums: the records written are not the records read.

use std::ops::Range;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, Once};
use std::time::Instant;

use crate::buf::{align_up, AlignedBuf};
use crate::error::IoError;
use crate::file::{DirectFile, IoOptions};
use crate::pipeline::IoStats;
use crate::reader::Chunk;
use crate::tuning::PAGE_SIZE;

/// `statfs` magic of tmpfs (and of `/dev/shm`).
const TMPFS_MAGIC: i64 = 0x0102_1994;

/// Pieces of a file on disk mapped and populated ahead of the one handed out (12.5 MiB pieces:
/// 50 MiB ahead).
pub const MAP_READ_AHEAD: usize = 4;

/// Threads populating a disk file's pieces at once. One thread's faults keep one 4 MiB
/// readahead in flight: populating a 1.9 GB file took 1.2-1.7 s on one thread and 1.0 s on
/// four, as fast as 16 direct reads in flight (benchmark VM, 2 GB/s); each costs no CPU to
/// speak of (0.05 s of system time in all), since the device fills the pages.
pub const MAP_POPULATE_THREADS: usize = 2;

/// Whether an input of fixed records read in chunks of `chunk_bytes` may be mapped: mapping
/// is [`enabled`] and a chunk is whole pages (a chunk is then exactly a piece).
pub fn chunks_mappable(chunk_bytes: usize, opts: &IoOptions) -> bool {
    chunk_bytes % PAGE_SIZE == 0 && enabled(opts)
}

/// Whether inputs may be mapped at all: not with test fault injection (whose failures count
/// reads), nor with `OXSORT_MAP_INPUT=off`.
pub fn enabled(opts: &IoOptions) -> bool {
    opts.faults.is_none()
        && !std::env::var_os("OXSORT_MAP_INPUT").is_some_and(|v| v == "off" || v == "0")
}

/// Whether `path` is a regular file on tmpfs (the kind of file [`mappable`] always takes).
pub fn on_tmpfs(path: &Path) -> bool {
    std::fs::File::open(path).is_ok_and(|f| backing(f.as_raw_fd()) == Some(Backing::Memory))
}

/// Where a regular file's pages are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backing {
    /// In memory already (tmpfs).
    Memory,
    /// On a device, through the page cache.
    Disk,
}

/// Where the pages of the file open as `fd` are; `None` for anything but a regular file.
fn backing(fd: i32) -> Option<Backing> {
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: fstatfs writes the struct for a descriptor the caller keeps open.
    if unsafe { libc::fstatfs(fd, st.as_mut_ptr()) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between C libraries
    // SAFETY: fstatfs succeeded, so the struct is initialized.
    let fs = unsafe { st.assume_init() }.f_type as i64;
    let mut meta = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: as above, for fstat.
    if unsafe { libc::fstat(fd, meta.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: fstat succeeded.
    let mode = unsafe { meta.assume_init() }.st_mode;
    (mode & libc::S_IFMT == libc::S_IFREG).then_some(if fs == TMPFS_MAGIC {
        Backing::Memory
    } else {
        Backing::Disk
    })
}

/// Whether mapping `bytes` of a file on disk saves more than it costs: unless the hugetlb pool
/// has room for them. Reading into pool pages that stay backed costs only the copy, with 16
/// direct reads in flight where a mapping's faults keep a readahead window or two; the output's
/// gather of records at random then misses the TLB once per 2 MiB, not once per 4 KiB of a
/// mapped file (measured: 5% more CPU mapped than read from a warm pool, 40% less with fresh
/// memory). A file on tmpfs is always mapped ([`mappable`]): its pages are in memory already,
/// and a sort that has pool pages to spare copies its records out of the mapping into them
/// as it sorts them (the rewrite), which is the copy a read would have made, without the
/// kernel's.
pub fn worth_mapping(bytes: u64) -> bool {
    crate::bigmem::pool_free() < bytes
}

/// Whether `file`'s range `range` can be mapped rather than read (see the module's text): a
/// tmpfs file, or with `disk` a regular file anywhere that is [`worth_mapping`].
pub fn mappable(file: &DirectFile, range: Range<u64>, opts: &IoOptions, disk: bool) -> bool {
    enabled(opts)
        && file.is_seekable()
        && range.start % PAGE_SIZE as u64 == 0
        && match backing(file.raw_fd()) {
            Some(Backing::Memory) => true,
            Some(Backing::Disk) => {
                disk && worth_mapping(
                    file.len().map_or(0, |n| n.min(range.end)).saturating_sub(range.start),
                )
            }
            None => false,
        }
}

/// Hands out `[start, end)` of a file (or up to its end, if it is shorter) as pieces of
/// `transfer` bytes, each a private mapping of the file's pages, in order. The same calls as
/// [`crate::Reader`]'s, for a caller that takes either.
pub struct MappedReader {
    file: Arc<DirectFile>,
    next: u64,
    end: u64,
    transfer: usize,
    /// Bytes each piece maps past its end (see [`MappedReader::new`]).
    overlap: usize,
    finished: bool,
    started: Instant,
    bytes: u64,
    transfers: u64,
    /// A file on disk: its pieces, mapped and populated ahead (`None`: a tmpfs file, whose
    /// pieces are mapped when asked for).
    ahead: Option<Ahead>,
}

/// A piece mapped and populated by a helper: its file offset and the piece (or its error).
type Populated = (u64, Result<Chunk, IoError>);

/// The helpers of a disk file's [`MappedReader`] and the pieces they handed over early.
struct Ahead {
    rx: Option<crossbeam_channel::Receiver<Populated>>,
    early: std::collections::BTreeMap<u64, Result<Chunk, IoError>>,
    helpers: Vec<std::thread::JoinHandle<()>>,
}

impl Ahead {
    /// Starts the helpers on `range` of `file` in pieces of `transfer` bytes.
    fn start(file: &Arc<DirectFile>, range: Range<u64>, transfer: usize, overlap: usize) -> Self {
        let (tx, rx) = crossbeam_channel::bounded::<Populated>(MAP_READ_AHEAD);
        let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let helpers = (0..MAP_POPULATE_THREADS)
            .map(|_| {
                let (tx, next, file) = (tx.clone(), next.clone(), file.clone());
                let range = range.clone();
                std::thread::Builder::new()
                    .name("oxsort-map".into())
                    .spawn(move || loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let at = range.start.saturating_add(i.saturating_mul(transfer as u64));
                        let Some(piece) = map_piece(&file, at, range.end, transfer, overlap) else {
                            return;
                        };
                        if let Ok(p) = &piece {
                            first_reads(&p.buf);
                        }
                        let failed = piece.is_err();
                        if tx.send((at, piece)).is_err() || failed {
                            return;
                        }
                    })
                    .expect("spawning a thread")
            })
            .collect();
        Ahead { rx: Some(rx), early: Default::default(), helpers }
    }

    /// The piece at `offset`: `None` when the helpers are done without it (the end).
    fn take(&mut self, offset: u64) -> Option<Result<Chunk, IoError>> {
        loop {
            if let Some(p) = self.early.remove(&offset) {
                return Some(p);
            }
            let (at, piece) = self.rx.as_ref()?.recv().ok()?;
            self.early.insert(at, piece);
        }
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        // A helper waiting to hand a piece over sees the channel closed and stops; one
        // populating stops after its piece.
        self.rx = None;
        for h in self.helpers.drain(..) {
            let _ = h.join();
        }
    }
}

/// Maps `[at, at + transfer)` of `file` (cut at `end` and at the file's length now), and up to
/// `overlap` bytes after it within those bounds, and brings its pages in; `None` past the end.
fn map_piece(
    file: &DirectFile,
    at: u64,
    end: u64,
    transfer: usize,
    overlap: usize,
) -> Option<Result<Chunk, IoError>> {
    // The file's length now: a piece never maps past it (its pages would fault).
    let len = match file.len() {
        Ok(n) => n,
        Err(e) => return Some(Err(e)),
    };
    let stop = end.min(len);
    if at >= stop {
        return None;
    }
    let n = (stop - at).min(transfer as u64) as usize;
    let mapped = n + (stop - at - n as u64).min(overlap as u64) as usize;
    let read_error = |source| IoError::Read { path: file.path().into(), offset: at, source };
    // SAFETY: `at + mapped` is within the file's current length; a file that shrinks later
    // faults into the handler `guard` installed.
    let buf = match unsafe { AlignedBuf::map_file(file.raw_fd(), at, mapped) } {
        Ok(b) => b,
        Err(e) => return Some(Err(read_error(e))),
    };
    // Bring the pages in (no copy): the workers then find them mapped. A kernel without the
    // advice (EINVAL) leaves the faults to the workers; a page the device cannot read is this
    // piece's read error, as a read would report it.
    // SAFETY: the range is the mapping just made.
    let populated = unsafe {
        libc::madvise(buf.as_ptr() as *mut libc::c_void, buf.len(), libc::MADV_POPULATE_READ)
    };
    if populated != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINVAL) {
            return Some(Err(read_error(e)));
        }
    }
    Some(Ok(Chunk { offset: at, buf, len: n }))
}

/// Reads a byte of each page of a piece of a disk file, on a helper ahead of need. On a VM the
/// first access to a page the device filled still exits to the host, which maps it for the
/// guest (about 1.4 CPU-s per GB on the benchmark VM, charged to whoever touches the page
/// first): taken here, and not by the thread that cuts the piece into records. (A tmpfs
/// file's pages were touched when it was written.)
fn first_reads(buf: &AlignedBuf) {
    for page in (0..buf.len()).step_by(PAGE_SIZE) {
        // SAFETY: `page` is inside the buffer's mapping.
        unsafe { std::ptr::read_volatile(buf.as_ptr().add(page)) };
    }
}

impl MappedReader {
    /// Starts handing out `range` of `file` (which [`mappable`] accepted from `range.start`)
    /// in pieces of `transfer` bytes (rounded up to a page).
    ///
    /// Each piece also maps up to `overlap` bytes past its end, within the range: the first
    /// bytes of the next piece, readable in this one's buffer after its `len` bytes. A caller
    /// that cuts pieces at line ends finds there the rest of a line that straddles two pieces,
    /// where a read buffer has room for it to be copied in:
    ///
    /// ```text
    ///   piece k     [ ......... len bytes ......... | overlap ]
    ///   piece k+1                                   [ ......... len bytes ......... | overlap ]
    /// ```
    pub fn new(file: Arc<DirectFile>, range: Range<u64>, transfer: usize, overlap: usize) -> Self {
        guard();
        name_input(file.path());
        let transfer = align_up(transfer.max(1));
        let end = range.end.max(range.start);
        let ahead = (backing(file.raw_fd()) == Some(Backing::Disk))
            .then(|| Ahead::start(&file, range.start..end, transfer, overlap));
        MappedReader {
            file,
            next: range.start,
            end,
            transfer,
            overlap,
            finished: false,
            started: Instant::now(),
            bytes: 0,
            transfers: 0,
            ahead,
        }
    }

    /// The next piece in file order; `None` at the end of the range or of the file.
    pub fn next_chunk(&mut self) -> Option<Result<Chunk, IoError>> {
        if self.finished {
            return None;
        }
        let piece = match &mut self.ahead {
            Some(a) => a.take(self.next),
            None => map_piece(&self.file, self.next, self.end, self.transfer, self.overlap),
        };
        match piece {
            Some(Ok(c)) => {
                self.next += c.len as u64;
                self.bytes += c.len as u64;
                self.transfers += 1;
                Some(Ok(c))
            }
            other => {
                self.finished = true;
                // The helpers stop: nothing more is read.
                self.ahead = None;
                other
            }
        }
    }

    /// The file and the part of its range not handed out yet (for a caller that reads the rest
    /// instead: dropping this reader stops its helpers).
    pub fn rest(&self) -> (Arc<DirectFile>, Range<u64>) {
        (self.file.clone(), self.next..self.end)
    }

    /// Buffers are never reused for mapping: those given back are dropped.
    pub fn recycle(&mut self, buf: AlignedBuf) {
        drop(buf);
    }

    /// Always 1: a mapped reader needs no buffers from its caller.
    pub fn spare_buffers(&self) -> usize {
        1
    }

    /// Statistics so far (busy time: none, nothing waits on a device).
    pub fn stats(&self) -> IoStats {
        IoStats {
            bytes: self.bytes,
            transfers: self.transfers,
            busy: std::time::Duration::ZERO,
            elapsed: self.started.elapsed(),
        }
    }
}

/// The message the handler writes: the last input mapped (leaked, one per input).
static MESSAGE: AtomicPtr<Vec<u8>> = AtomicPtr::new(std::ptr::null_mut());
/// Set by the first thread whose mapped input faulted: it reports and stops, others wait.
static REPORTED: AtomicBool = AtomicBool::new(false);
/// The `SIGBUS` action before [`guard`]'s.
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());

/// Sets the handler's message to name `path` (once per input).
fn name_input(path: &std::path::Path) {
    let text = format!(
        "oxsort: {}: the input shrank while it was sorted (it changed since the sort began); \
         stopping\n",
        path.display()
    );
    let old = MESSAGE.load(Ordering::SeqCst);
    // SAFETY: a non-null MESSAGE always points at a leaked, never freed Vec.
    if !old.is_null() && unsafe { &*old }.as_slice() == text.as_bytes() {
        return;
    }
    // Leaked on purpose: the handler may read it at any time, so it is never freed.
    MESSAGE.store(Box::into_raw(Box::new(text.into_bytes())), Ordering::SeqCst);
}

/// Installs the `SIGBUS` handler (once per process).
pub fn guard() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: sigaction with a zeroed struct, a valid handler and an empty mask; the old
        // action is kept (leaked) for the handler to pass other faults on to.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_sigbus as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut act.sa_mask);
            let old = Box::into_raw(Box::new(std::mem::zeroed::<libc::sigaction>()));
            if libc::sigaction(libc::SIGBUS, &act, old) == 0 {
                PREVIOUS.store(old, Ordering::SeqCst);
            }
        }
    });
}

/// The `SIGBUS` handler: async-signal-safe calls only (write, kill, pause, sigaction).
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if crate::buf::FILE_MAPPINGS.load(Ordering::SeqCst) > 0 {
        if REPORTED.swap(true, Ordering::SeqCst) {
            // Another thread faulted first and is stopping the process.
            loop {
                // SAFETY: pause(2) is async-signal-safe.
                unsafe { libc::pause() };
            }
        }
        let msg = MESSAGE.load(Ordering::SeqCst);
        // SAFETY: write(2) and kill(2) are async-signal-safe; the message, when set, is a
        // leaked Vec that is never freed.
        unsafe {
            if !msg.is_null() {
                let m = &*msg;
                libc::write(2, m.as_ptr().cast(), m.len());
            }
            // Stop as an interrupt does: the cleanup thread removes what the sort made.
            libc::kill(libc::getpid(), libc::SIGTERM);
            loop {
                libc::pause();
            }
        }
    }
    // Not a mapped input's fault: the previous action, or the default one (the fault repeats
    // on return and ends the process).
    let prev = PREVIOUS.load(Ordering::SeqCst);
    // SAFETY: `prev` is the action saved by `guard`; calling its handler with the arguments
    // received, or restoring the default action, is what chaining handlers does.
    unsafe {
        if !prev.is_null() {
            let p = &*prev;
            if p.sa_sigaction > libc::SIG_IGN {
                if p.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(p.sa_sigaction);
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(p.sa_sigaction);
                    f(sig);
                }
                return;
            }
        }
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file on tmpfs (`/dev/shm`), or `None` where there is none.
    fn tmpfs_file_of(bytes: &[u8]) -> Option<tempfile::NamedTempFile> {
        let f = tempfile::NamedTempFile::new_in("/dev/shm").ok()?;
        std::fs::write(f.path(), bytes).ok()?;
        Some(f)
    }

    #[test]
    fn mapped_pieces_hold_the_file_and_writes_to_them_never_reach_it() {
        let data: Vec<u8> = (0..3 * PAGE_SIZE + 100).map(|i| (i * 7 % 251) as u8).collect();
        let Some(f) = tmpfs_file_of(&data) else {
            eprintln!("skipped: no /dev/shm");
            return;
        };
        let opts = IoOptions::default();
        let file = Arc::new(DirectFile::open(f.path(), &opts).expect("open"));
        assert!(on_tmpfs(f.path()));
        assert!(mappable(&file, 0..data.len() as u64, &opts, false));
        assert!(!mappable(&file, 100..data.len() as u64, &opts, false), "not from inside a page");
        let mut r = MappedReader::new(file, 0..u64::MAX, 2 * PAGE_SIZE, 0);
        let mut got = Vec::new();
        while let Some(piece) = r.next_chunk() {
            let mut piece = piece.expect("a piece");
            assert!(piece.buf.is_file_mapping());
            assert_eq!(piece.offset, got.len() as u64);
            got.extend_from_slice(piece.data());
            piece.buf[0] ^= 0xFF;
            r.recycle(piece.buf);
        }
        assert_eq!(got, data);
        assert_eq!(r.stats().bytes, data.len() as u64);
        assert_eq!(std::fs::read(f.path()).expect("read back"), data, "the file is unchanged");
    }

    #[test]
    fn files_off_tmpfs_and_fault_injection_are_read() {
        let f = tempfile::NamedTempFile::new_in(env!("CARGO_MANIFEST_DIR")).expect("temp");
        std::fs::write(f.path(), vec![1u8; PAGE_SIZE]).expect("write");
        let on_shm = on_tmpfs(f.path());
        let file = DirectFile::open(f.path(), &IoOptions::default()).expect("open");
        // The crate's own directory is on a disk, unless the checkout itself is on tmpfs.
        assert_eq!(mappable(&file, 0..PAGE_SIZE as u64, &IoOptions::default(), false), on_shm);
        assert!(mappable(&file, 0..PAGE_SIZE as u64, &IoOptions::default(), true));
        let faults = IoOptions {
            faults: Some(Arc::new(crate::FaultPlan::fail_read(1, libc::EIO))),
            ..IoOptions::default()
        };
        assert!(!enabled(&faults));
    }

    #[test]
    fn a_disk_file_mapped_in_pieces_read_ahead_holds_the_file() {
        // More pieces than are read ahead, and a last one short of a page.
        let data: Vec<u8> =
            (0..(MAP_READ_AHEAD + 3) * 2 * PAGE_SIZE + 123).map(|i| (i % 253) as u8).collect();
        let f = tempfile::NamedTempFile::new_in(env!("CARGO_MANIFEST_DIR")).expect("temp");
        std::fs::write(f.path(), &data).expect("write");
        let opts = IoOptions::default();
        let file = Arc::new(DirectFile::open(f.path(), &opts).expect("open"));
        assert!(mappable(&file, 0..data.len() as u64, &opts, true));
        // Each piece maps a page and a bit of the next one past its end.
        let overlap = PAGE_SIZE + 5;
        let mut r = MappedReader::new(file, 0..u64::MAX, 2 * PAGE_SIZE, overlap);
        assert_eq!(r.ahead.is_some(), !on_tmpfs(f.path()));
        let mut got = Vec::new();
        while let Some(piece) = r.next_chunk() {
            let piece = piece.expect("a piece");
            assert_eq!(piece.offset, got.len() as u64);
            let at = piece.offset as usize + piece.len;
            let after = &data[at..(at + overlap).min(data.len())];
            assert_eq!(&piece.buf[piece.len..piece.len + after.len()], after, "at {at}");
            got.extend_from_slice(piece.data());
            r.recycle(piece.buf);
        }
        assert_eq!(got, data);
        assert_eq!(r.stats().transfers, MAP_READ_AHEAD as u64 + 4);
    }
}

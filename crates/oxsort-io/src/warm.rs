//! The hugetlb pool kept warm in a file, so that a sort maps pages that are already there
//! instead of pages the kernel must clear first.
//!
//! Why: a page of the hugetlb pool that a process maps anonymously is cleared by the kernel at
//! its first touch, every run (2 MiB at a time, `clear_page_erms`): 9.6% of all CPU samples of
//! a one-pass sort of 4 GB of lines from a warm pool, most of it on the thread that populates
//! chunk buffers ahead of the reader. Pages of a file on a hugetlbfs mount stay allocated, and
//! keep their bytes, from one process to the next: mapping them costs a page-table entry per
//! 2 MiB. `oxsort pool SIZE` ([`crate::pool::reserve`]) therefore moves the pool's pages into
//! one file, [`KEPT_FILE`], on a hugetlbfs mount it makes; `oxsort pool off` removes both.
//!
//! ```text
//!  KEPT_FILE   | page 0 | page 1 | page 2 | ... | page N-1 |     2 MiB each, allocated once
//!  process A     [ claimed: locked 0..2 ]                         an OFD lock on bytes 0..2
//!  process B                       [ claimed 2..5 ]               of the lock space: page indices
//! ```
//!
//! Every process opens the file and claims runs of pages with open-file-description locks
//! (`F_OFD_SETLK`) on the byte range of their page indices: a claim another process holds is
//! refused, and a process's claims vanish with it however it ends (a kill included). A claimed
//! run is mapped shared; its bytes are whatever the last user left there, so only allocations
//! that do not promise zeros take them ([`crate::bigmem::map_any`]). The file is root's, mode
//! 0600: what one sort left in it is never another user's to read.
//!
//! A process takes kept pages only once it says so ([`use_kept_pool`]; the `oxsort` binaries
//! do): a kept mapping is shared, so a process forked without an `exec` would share its
//! parent's buffers rather than get copies, and memory the parent freed and reused would change
//! under it. Kept mappings are therefore also left out of forked children (`MADV_DONTFORK`),
//! and a library in a process that may fork (the Python package) never opts in.
//!
//! Everything here is called from inside the global allocator ([`crate::BigAlloc`]): no big
//! allocation, no allocation while holding the claims' lock.

use std::ffi::CStr;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::tuning::HUGETLB_PAGE;

/// Where `oxsort pool` mounts hugetlbfs (2 MiB pages, root only).
pub const KEPT_DIR: &str = text(KEPT_DIR_C);
/// The file that holds the kept pool's pages.
pub const KEPT_FILE: &str = text(KEPT_FILE_C);
const KEPT_DIR_C: &CStr = c"/run/oxsort/hugepages";
const KEPT_FILE_C: &CStr = c"/run/oxsort/hugepages/pool";

/// A constant path as text (the C strings above are the one spelling).
const fn text(c: &'static CStr) -> &'static str {
    match c.to_str() {
        Ok(s) => s,
        Err(_) => panic!("the kept pool's paths are ASCII"),
    }
}

/// `statfs` type of a hugetlbfs mount.
const HUGETLBFS_MAGIC: i64 = 0x9584_58f6;

/// The kept pool as this process sees it: the file, its pages, and which of them this process
/// has claimed.
struct Kept {
    fd: libc::c_int,
    pages: usize,
    /// One bit per page: claimed by a mapping of this process.
    claimed: Mutex<Vec<u64>>,
}

static KEPT: OnceLock<Option<Kept>> = OnceLock::new();

/// Whether this process takes kept pages (see [`use_kept_pool`]).
static OPTED_IN: AtomicBool = AtomicBool::new(false);

/// Lets this process's big allocations take the kept pool's pages (when there is one): for a
/// process that does not fork without an `exec` (see the module's text).
pub fn use_kept_pool() {
    OPTED_IN.store(true, Ordering::Relaxed);
}

/// The kept pool, opened on first use; `None` without one, when this user may not open it, or
/// before the process opted in.
fn kept() -> Option<&'static Kept> {
    if !OPTED_IN.load(Ordering::Relaxed) {
        return None;
    }
    KEPT.get_or_init(|| Kept::open(KEPT_FILE_C)).as_ref()
}

/// Bytes of the kept pool this process could still claim (0 without a kept pool); other
/// processes' claims are not seen.
pub(crate) fn unclaimed() -> u64 {
    kept().map_or(0, Kept::unclaimed)
}

/// Why pool pages were not mapped at a place ([`map`], and the pool's own pages in
/// [`crate::bigmem`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Miss {
    /// Something else was mapped at (or around) the place first: another place may do.
    Taken,
    /// No pages (of that kind) to map.
    Refused,
}

/// Claims `n` consecutive pages of the kept pool and maps them shared at `at` (2 MiB aligned;
/// nothing mapped there is replaced): the first page's index; [`Miss::Refused`] when there is
/// no kept pool or no free run of `n` pages in it, [`Miss::Taken`] when something is mapped at
/// `at`. The bytes are whatever the pages held.
pub(crate) fn map(n: usize, at: usize) -> Result<usize, Miss> {
    kept().ok_or(Miss::Refused)?.map(n, at)
}

/// Gives back pages `first..first + n`, which [`map`] claimed and the caller has unmapped.
pub(crate) fn unclaim(first: usize, n: usize) {
    if let Some(k) = kept() {
        k.unclaim(first, n);
    }
}

/// An open-file-description lock command on pages `first..first + n` of the lock space; for
/// `F_OFD_GETLK`, the flock as the kernel filled it.
fn lock(
    fd: libc::c_int,
    cmd: libc::c_int,
    kind: libc::c_int,
    first: usize,
    n: usize,
) -> Option<libc::flock> {
    // SAFETY: a zeroed flock is a valid argument once its fields are set below.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = first as libc::off_t;
    fl.l_len = n as libc::off_t;
    // SAFETY: fcntl with a lock command and a pointer to the flock above; l_pid is 0, as OFD
    // locks require.
    (unsafe { libc::fcntl(fd, cmd, &mut fl) } == 0).then_some(fl)
}

fn is_set(bits: &[u64], i: usize) -> bool {
    bits[i / 64] >> (i % 64) & 1 == 1
}

fn set_run(bits: &mut [u64], first: usize, n: usize, on: bool) {
    for i in first..first + n {
        if on {
            bits[i / 64] |= 1 << (i % 64);
        } else {
            bits[i / 64] &= !(1 << (i % 64));
        }
    }
}

impl Kept {
    /// Opens the kept file at `path`; `None` if it is missing, holds no page, or may not be
    /// opened by this user.
    fn open(path: &CStr) -> Option<Kept> {
        // SAFETY: open of a C string path; the descriptor is owned by the Kept returned.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: a zeroed stat is a valid value for fstat to fill.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat into the stat owned here, on the descriptor just opened.
        let pages = if unsafe { libc::fstat(fd, &mut st) } == 0 {
            st.st_size as usize / HUGETLB_PAGE
        } else {
            0
        };
        if pages == 0 {
            // SAFETY: the descriptor opened above, closed once.
            unsafe { libc::close(fd) };
            return None;
        }
        Some(Kept { fd, pages, claimed: Mutex::new(vec![0; pages.div_ceil(64)]) })
    }

    /// Bytes of pages no mapping of this process holds.
    fn unclaimed(&self) -> u64 {
        let bits = self.claimed.lock().unwrap_or_else(|e| e.into_inner());
        let claimed: u32 = bits.iter().map(|w| w.count_ones()).sum();
        ((self.pages - claimed as usize) * HUGETLB_PAGE) as u64
    }

    fn map(&self, n: usize, at: usize) -> Result<usize, Miss> {
        if n == 0 || n > self.pages {
            return Err(Miss::Refused);
        }
        let mut bits = self.claimed.lock().unwrap_or_else(|e| e.into_inner());
        let mut first = 0;
        while first + n <= self.pages {
            // The first run free in this process from `first` on.
            if let Some(busy) = (first..first + n).rev().find(|&i| is_set(&bits, i)) {
                first = busy + 1;
                continue;
            }
            if lock(self.fd, libc::F_OFD_SETLK, libc::F_WRLCK, first, n).is_some() {
                let len = n * HUGETLB_PAGE;
                // SAFETY: a new shared mapping of pages first..first+n of the kept file, on
                // which this process now holds the lock, at `at`; MAP_FIXED_NOREPLACE refuses
                // to replace anything mapped there.
                let p = unsafe {
                    libc::mmap(
                        at as *mut libc::c_void,
                        len,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_SHARED | libc::MAP_FIXED_NOREPLACE,
                        self.fd,
                        (first * HUGETLB_PAGE) as libc::off_t,
                    )
                };
                if p == libc::MAP_FAILED || p as usize != at {
                    let miss = if p != libc::MAP_FAILED {
                        // A kernel older than MAP_FIXED_NOREPLACE (4.17) took `at` as a hint.
                        // SAFETY: the mapping was just made and nothing refers to it.
                        unsafe { libc::munmap(p, len) };
                        Miss::Taken
                    } else if io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST) {
                        Miss::Taken
                    } else {
                        Miss::Refused
                    };
                    lock(self.fd, libc::F_OFD_SETLK, libc::F_UNLCK, first, n);
                    return Err(miss);
                }
                // A child forked without an exec must not share these pages (see the module's
                // text); the advice cannot fail on a mapping just made.
                // SAFETY: the range is the mapping just made.
                unsafe { libc::madvise(p, len, libc::MADV_DONTFORK) };
                set_run(&mut bits, first, n, true);
                return Ok(first);
            }
            // Another process holds some of these pages: skip past its claim.
            first = match lock(self.fd, libc::F_OFD_GETLK, libc::F_WRLCK, first, n) {
                Some(fl) if fl.l_type != libc::F_UNLCK as libc::c_short => {
                    (fl.l_start as usize + (fl.l_len as usize).max(1)).max(first + 1)
                }
                _ => first + 1,
            };
        }
        Err(Miss::Refused)
    }

    fn unclaim(&self, first: usize, n: usize) {
        let mut bits = self.claimed.lock().unwrap_or_else(|e| e.into_inner());
        lock(self.fd, libc::F_OFD_SETLK, libc::F_UNLCK, first, n);
        set_run(&mut bits, first, n, false);
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        // SAFETY: the descriptor this Kept owns, closed once (its locks go with it).
        unsafe { libc::close(self.fd) };
    }
}

/// Pages of 2 MiB in the kept file, 0 without one.
pub fn kept_pages() -> u64 {
    std::fs::metadata(KEPT_FILE).map_or(0, |m| m.len() / HUGETLB_PAGE as u64)
}

/// Whether `dir` is a hugetlbfs mount.
fn is_hugetlbfs(dir: &CStr) -> bool {
    // SAFETY: a zeroed statfs is a valid value for statfs to fill.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: statfs into the struct owned here, of a C string path.
    (unsafe { libc::statfs(dir.as_ptr(), &mut s) } == 0) && s.f_type as i64 == HUGETLBFS_MAGIC
}

/// Moves `pages` pages of the (reserved) pool into [`KEPT_FILE`], mounting hugetlbfs at
/// [`KEPT_DIR`] first if it is not there; a kept file of another size is made anew. Needs
/// root. The file's pages are cleared once, here.
pub fn keep(pages: u64) -> io::Result<()> {
    std::fs::create_dir_all(KEPT_DIR)?;
    if !is_hugetlbfs(KEPT_DIR_C) {
        // SAFETY: mount of a new hugetlbfs instance on a directory made above; all arguments
        // are C strings that outlive the call.
        let r = unsafe {
            libc::mount(
                c"oxsort-pool".as_ptr(),
                KEPT_DIR_C.as_ptr(),
                c"hugetlbfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                c"pagesize=2M,mode=0700".as_ptr().cast(),
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    if kept_pages() == pages {
        return Ok(());
    }
    let _ = std::fs::remove_file(KEPT_FILE);
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(KEPT_FILE)?;
    use std::os::fd::AsRawFd;
    let len = pages as libc::off_t * HUGETLB_PAGE as libc::off_t;
    // SAFETY: fallocate on the file just created, owned by `f`.
    if unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, len) } != 0 {
        let e = io::Error::last_os_error();
        let _ = std::fs::remove_file(KEPT_FILE);
        return Err(e);
    }
    Ok(())
}

/// Removes [`KEPT_FILE`] and the mount at [`KEPT_DIR`]: the pages go back to the pool (those a
/// running sort maps, when it unmaps them). A mount still in use is detached: it goes when
/// its last mapping does.
pub fn discard() -> io::Result<()> {
    match std::fs::remove_file(KEPT_FILE) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if is_hugetlbfs(KEPT_DIR_C) {
        // SAFETY: unmount of the directory's hugetlbfs; a busy one fails harmlessly (EBUSY).
        unsafe { libc::umount2(KEPT_DIR_C.as_ptr(), libc::MNT_DETACH) };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    use super::*;

    /// A kept file of `pages` pages on an ordinary file system: the claims, their locks and
    /// the shared mappings work the same on any file (only the clearing they save is
    /// hugetlbfs's).
    fn kept_file(pages: usize) -> (tempfile::TempDir, CString) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("pool");
        std::fs::File::create(&path)
            .and_then(|f| f.set_len((pages * HUGETLB_PAGE) as u64))
            .expect("the kept file");
        let c = CString::new(path.as_os_str().as_bytes()).expect("a path without NUL");
        (dir, c)
    }

    fn bytes(a: usize, n: usize) -> &'static mut [u8] {
        // SAFETY: the tests pass a live mapping of n pages of their own.
        unsafe { std::slice::from_raw_parts_mut(a as *mut u8, n * HUGETLB_PAGE) }
    }

    /// Claims `n` pages with `k` at a free place: the address and the first page's index.
    fn claim(k: &Kept, n: usize) -> Result<(usize, usize), Miss> {
        // A free place: a span of address space reserved and given back.
        let span = (n + 1) * HUGETLB_PAGE;
        // SAFETY: a new inaccessible private mapping, unmapped again at once.
        let at = unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED, "address space");
            libc::munmap(p, span);
            (p as usize).next_multiple_of(HUGETLB_PAGE)
        };
        k.map(n, at).map(|first| (at, first))
    }

    fn unmap(a: usize, n: usize) {
        // SAFETY: a mapping `Kept::map` made of n pages, unmapped once by the test.
        unsafe { libc::munmap(a as *mut libc::c_void, n * HUGETLB_PAGE) };
    }

    #[test]
    fn runs_are_claimed_once_in_a_process_and_across_open_files() {
        let (_dir, path) = kept_file(6);
        let one = Kept::open(&path).expect("opened");
        let other = Kept::open(&path).expect("opened again: another process's claims");
        let (a, first) = claim(&one, 2).expect("two pages");
        assert_eq!((a % HUGETLB_PAGE, first), (0, 0));
        let (_, next) = claim(&one, 3).expect("three more");
        assert_eq!(next, 2, "not the pages this process holds");
        assert_eq!(one.unclaimed(), HUGETLB_PAGE as u64);
        // The other open file sees the locks: only page 5 is left to it.
        assert!(claim(&other, 2).is_err());
        let (b, last) = claim(&other, 1).expect("the last page");
        assert_eq!(last, 5);
        // Given back, the first run can be claimed by the other.
        unmap(a, 2);
        one.unclaim(first, 2);
        assert_eq!(claim(&other, 2).map(|(_, f)| f), Ok(0));
        unmap(b, 1);
        other.unclaim(last, 1);
        assert!(claim(&one, 7).is_err(), "more pages than the file has");
    }

    #[test]
    fn a_page_keeps_its_bytes_from_one_mapping_to_the_next() {
        let (_dir, path) = kept_file(2);
        let k = Kept::open(&path).expect("opened");
        let (a, first) = claim(&k, 2).expect("both pages");
        bytes(a, 2).fill(0xA5);
        unmap(a, 2);
        k.unclaim(first, 2);
        // A process opening the file later (a new Kept) maps the same bytes, uncleared.
        drop(k);
        let k = Kept::open(&path).expect("opened again");
        let (a, _) = claim(&k, 2).expect("both pages again");
        assert!(bytes(a, 2).iter().all(|&b| b == 0xA5));
        unmap(a, 2);
    }

    #[test]
    fn a_missing_or_empty_file_is_no_kept_pool() {
        assert!(Kept::open(c"/nonexistent/oxsort/pool").is_none());
        let (_dir, path) = kept_file(0);
        assert!(Kept::open(&path).is_none());
    }
}

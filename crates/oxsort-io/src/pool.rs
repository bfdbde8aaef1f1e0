//! Reserving the kernel's pool of 2 MiB huge pages (`vm.nr_hugepages`) warm, and giving it back.
//!
//! Why warm: on a VM with free-page reporting (see [`crate::bigmem`]) the pages the kernel moves
//! into a newly reserved pool come from free memory the host has taken back, so the first
//! process that maps each page pays a host fault per 4 KiB while the guest zeroes it: the first
//! sort after `echo N > /proc/sys/vm/nr_hugepages` paid 21 s of system time for a 4 GB load and
//! took 4× as long as the next one. Free pages of the pool never go back to the buddy allocator,
//! so once touched they stay backed from one process to the next. [`reserve`] therefore touches
//! every free page of the pool right after reserving it, on all cores at once, and unmaps them:
//! the pages go back to the pool backed, and the first sort finds them as warm as the tenth.
//!
//! The warmed pages are then kept in a file on a hugetlbfs mount ([`crate::warm`]): the kernel
//! clears a pool page each time a process maps it anew, but a file's pages keep their bytes, so
//! sorts map them without paying for the clearing. [`release`] removes the file and the mount
//! and gives the pool back (`nr_hugepages` 0); pages a running process holds are freed when it
//! unmaps them.

use std::io;
use std::path::PathBuf;

use crate::tuning::HUGETLB_PAGE;

/// The kernel's files for the 2 MiB pool (the pool oxsort maps from, whatever the default huge
/// page size).
const POOL_DIR: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB";

/// The 2 MiB pool: pages reserved and pages free (not mapped by any process).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolState {
    /// Pages of 2 MiB in the pool.
    pub pages: u64,
    /// Of these, pages no process maps.
    pub free: u64,
    /// Of the free pages, those promised to mappings that have not touched them yet: free,
    /// but not to be mapped again.
    pub promised: u64,
    /// Pages kept warm in the kept pool's file ([`crate::warm::KEPT_FILE`]), counted among
    /// `pages` but not `free`.
    pub kept: u64,
}

/// `hugetlb pool: N pages of 2 MiB (SIZE), F free`, and where the kept pages are.
impl std::fmt::Display for PoolState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let size = crate::human_bytes(self.bytes());
        write!(f, "hugetlb pool: {} pages of 2 MiB ({size}), {} free", self.pages, self.free)?;
        if self.kept > 0 {
            write!(f, "\nkept warm: {} pages in {}", self.kept, crate::warm::KEPT_FILE)?;
        }
        Ok(())
    }
}

/// What [`reserve`] did.
#[derive(Debug)]
pub struct Reserved {
    /// The pool afterwards.
    pub state: PoolState,
    /// Bytes touched to warm it.
    pub warmed: u64,
    /// Why the pool could not be kept in a file when asked to be (no hugetlbfs, mounting
    /// refused): it is then reserved and warm, and each sort's kernel clears the pages it maps.
    pub not_kept: Option<PoolError>,
}

impl PoolState {
    /// Bytes in the pool.
    pub fn bytes(&self) -> u64 {
        self.pages * HUGETLB_PAGE as u64
    }
}

/// What went wrong reserving, warming or releasing the pool.
#[non_exhaustive]
#[derive(thiserror::Error, Debug)]
pub enum PoolError {
    /// Reading or writing one of the kernel's pool files failed (writing needs root).
    #[error("{what} {}: {}", path.display(), crate::error::os_message(source))]
    File {
        /// "reading" or "writing".
        what: &'static str,
        /// The kernel's file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The kernel found fewer free 2 MiB blocks than asked (memory in use or fragmented); the
    /// pages it did reserve are given back.
    #[error(
        "the kernel reserved {got} of the {want} huge pages of 2 MiB asked for (not enough \
         free or unfragmented memory); nothing is kept reserved"
    )]
    Short {
        /// Pages asked for.
        want: u64,
        /// Pages the kernel reserved.
        got: u64,
    },
    /// The pool is reserved and warm but could not be kept in a file ([`crate::warm::keep`]):
    /// each sort's kernel then clears the pages it maps.
    #[error(
        "the pool is not kept warm in {}: {} (each sort clears the pages it maps)",
        crate::warm::KEPT_FILE,
        crate::error::os_message(source)
    )]
    NotKept {
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// Mapping the pool's free pages to touch them failed.
    #[error(
        "mapping the hugetlb pool's {pages} free pages to touch them: {}",
        crate::error::os_message(source)
    )]
    Map {
        /// Free pages that were to be touched.
        pages: u64,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// Times [`warm`] counts the free pages again when other processes took some before it mapped
/// them.
const WARM_TRIES: u32 = 8;

fn pool_file(name: &str) -> PathBuf {
    PathBuf::from(POOL_DIR).join(name)
}

fn read_count(name: &str) -> Result<u64, PoolError> {
    let path = pool_file(name);
    let text = std::fs::read_to_string(&path).map_err(|source| PoolError::File {
        what: "reading",
        path: path.clone(),
        source,
    })?;
    text.trim().parse().map_err(|_| PoolError::File {
        what: "reading",
        path,
        source: io::Error::new(io::ErrorKind::InvalidData, format!("not a count: {text:?}")),
    })
}

fn write_count(name: &str, pages: u64) -> Result<(), PoolError> {
    let path = pool_file(name);
    std::fs::write(&path, format!("{pages}\n")).map_err(|source| PoolError::File {
        what: "writing",
        path,
        source,
    })
}

/// The pool as the kernel reports it (all zero on a kernel without 2 MiB huge pages).
pub fn state() -> Result<PoolState, PoolError> {
    if !std::path::Path::new(POOL_DIR).exists() {
        return Ok(PoolState::default());
    }
    Ok(PoolState {
        pages: read_count("nr_hugepages")?,
        free: read_count("free_hugepages")?,
        promised: read_count("resv_hugepages")?,
        kept: crate::warm::kept_pages(),
    })
}

/// Pages of 2 MiB that hold `bytes` (rounded up).
pub fn pages_for(bytes: u64) -> u64 {
    bytes.div_ceil(HUGETLB_PAGE as u64)
}

/// Sets the pool to the pages that hold `bytes`, touches every free page of it on `threads`
/// threads, so that the first process to use it does not pay for populating it, and with `keep`
/// keeps the pages in the kept pool's file ([`crate::warm::keep`]; without, any kept file
/// goes). Needs root (the kernel's file is root's). A pool the kernel cannot make whole is
/// given back, not kept short.
pub fn reserve(bytes: u64, threads: usize, keep: bool) -> Result<Reserved, PoolError> {
    let want = pages_for(bytes);
    if !keep || crate::warm::kept_pages() != want {
        // A kept file of another size holds pages the new count must see free.
        discard_kept()?;
    }
    write_count("nr_hugepages", want)?;
    let got = state()?;
    if got.pages < want {
        write_count("nr_hugepages", 0)?;
        return Err(PoolError::Short { want, got: got.pages });
    }
    let warmed = warm(threads)?;
    let not_kept = if keep {
        crate::warm::keep(want).err().map(|source| PoolError::NotKept { source })
    } else {
        None
    };
    Ok(Reserved { state: state()?, warmed, not_kept })
}

/// Removes the kept pool's file and mount ([`crate::warm::discard`]).
fn discard_kept() -> Result<(), PoolError> {
    crate::warm::discard().map_err(|source| PoolError::File {
        what: "removing",
        path: PathBuf::from(crate::warm::KEPT_FILE),
        source,
    })
}

/// Gives the whole pool back to the kernel's free memory: the kept file goes, then
/// `nr_hugepages` 0. Pages a running process maps stay its own until it unmaps them.
pub fn release() -> Result<PoolState, PoolError> {
    discard_kept()?;
    write_count("nr_hugepages", 0)?;
    state()
}

/// Maps every free page of the pool, touches each on `threads` threads at once, and unmaps
/// them: they go back to the pool backed by the host. Returns the bytes touched (0 without a
/// pool, or with none of it free).
pub fn warm(threads: usize) -> Result<u64, PoolError> {
    let mut tries = 0;
    let (p, pages) = loop {
        let s = state()?;
        let pages = s.free.saturating_sub(s.promised);
        if pages == 0 {
            return Ok(0);
        }
        // SAFETY: a new private anonymous hugetlb mapping; nothing else refers to it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                pages as usize * HUGETLB_PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | libc::MAP_HUGE_2MB,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            break (p, pages);
        }
        let source = io::Error::last_os_error();
        // Another process took free pages between the count and the mapping: count again.
        tries += 1;
        if source.raw_os_error() != Some(libc::ENOMEM) || tries >= WARM_TRIES {
            return Err(PoolError::Map { pages, source });
        }
        // (Give the other mapping a moment to touch or give back its pages.)
        std::thread::sleep(std::time::Duration::from_millis(1 << tries));
    };
    let len = pages as usize * HUGETLB_PAGE;
    let base = p as usize;
    let threads = threads.clamp(1, pages as usize);
    let per = (pages as usize).div_ceil(threads) * HUGETLB_PAGE;
    std::thread::scope(|s| {
        for start in (base..base + len).step_by(per) {
            let n = per.min(base + len - start);
            s.spawn(move || touch(start, n));
        }
    });
    // SAFETY: the mapping made above, whole; the threads that touched it have ended.
    unsafe { libc::munmap(p, len) };
    Ok(len as u64)
}

/// Populates `[start, start + n)`, a part of a live hugetlb mapping that only this thread
/// touches: one `MADV_POPULATE_WRITE` (Linux 5.14+), else a write per huge page (each write
/// faults in, and so zeroes, the whole 2 MiB page).
fn touch(start: usize, n: usize) {
    // SAFETY: the range lies inside the caller's live mapping; the advice only makes the kernel
    // allocate its pages now.
    let r = unsafe { libc::madvise(start as *mut libc::c_void, n, libc::MADV_POPULATE_WRITE) };
    if r == 0 {
        return;
    }
    for page in (start..start + n).step_by(HUGETLB_PAGE) {
        // SAFETY: `page` is the first byte of a huge page of the caller's live, writable
        // mapping, touched by this thread alone; volatile keeps the write.
        unsafe { std::ptr::write_volatile(page as *mut u8, 0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_round_up_to_2_mib() {
        assert_eq!(pages_for(0), 0);
        assert_eq!(pages_for(1), 1);
        assert_eq!(pages_for(2 << 20), 1);
        assert_eq!(pages_for((2 << 20) + 1), 2);
        assert_eq!(pages_for(5 << 30), 2560);
    }

    #[test]
    fn warming_leaves_the_pool_as_it_was() {
        // With or without a pool (and whatever other processes map meanwhile), warming maps only
        // free pages and gives them all back.
        let before = state().expect("the pool's state");
        let warmed = warm(2).expect("warming");
        assert_eq!(warmed % HUGETLB_PAGE as u64, 0);
        assert!(warmed <= before.bytes());
        assert_eq!(state().expect("the pool's state").pages, before.pages);
    }

    #[test]
    fn a_reserved_pool_is_warmed_whole_and_released() {
        // Only as root and only when no pool is reserved: the test must not take another
        // user's pool away.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 || state().map_or(true, |s| s.pages != 0) {
            eprintln!("skipped: needs root and no hugetlb pool reserved");
            return;
        }
        let reserved = reserve(4 << 20, 2, true);
        let kept_file = std::fs::metadata(crate::warm::KEPT_FILE).map(|m| m.len());
        let released = release();
        match reserved {
            Ok(Reserved { state: s, warmed, not_kept }) => {
                // Other tests of this process may map pool pages meanwhile.
                assert_eq!(s.pages, 2);
                assert!(warmed <= 4 << 20 && warmed % HUGETLB_PAGE as u64 == 0);
                if let Some(e) = not_kept {
                    eprintln!("the pool was not kept in a file: {e}");
                } else {
                    assert_eq!(s.kept, 2);
                    assert_eq!(kept_file.expect("the kept file"), 4 << 20);
                }
            }
            // A machine too fragmented for two pages gives them back.
            Err(PoolError::Short { want: 2, .. }) => {}
            Err(e) => panic!("{e}"),
        }
        // Pages other tests map stay reserved (as surplus) until they unmap them.
        let released = released.expect("released");
        assert!(released.pages <= 2);
        assert_eq!(released.kept, 0);
        assert!(!std::path::Path::new(crate::warm::KEPT_FILE).exists());
    }
}

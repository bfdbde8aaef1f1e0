//! Leftovers of killed sorts: found by their names, proven abandoned by a lock, reclaimed.
//!
//! A sort killed with SIGKILL (or by a power loss) cannot remove its private temp directory
//! (`.oxsort-PID-HEX`, see [`TempDir`](crate::TempDir)) nor its output's temporary
//! (`.NAME.oxsort-PID.tmp`, see [`AtomicOutput`](crate::AtomicOutput)). Both are held by their
//! owner under an exclusive `flock` for their whole life: the temp directory through a
//! descriptor on the directory itself, the output's temporary through the descriptor it is
//! written with. The kernel drops the lock when the last descriptor closes, which a kill does
//! too, so "the lock can be taken" means "the owner is gone", with no guess from PIDs (which
//! are reused, and mean nothing across containers or NFS clients).
//!
//! [`sweep`] lists a directory's entries with names oxsort creates (and nothing else), takes
//! each one's lock without waiting, checks that the name still names the inode it locked, and
//! removes it while holding the lock. An owner never shows an unlocked entry under such a name:
//! it creates the entry under a staging name (the name plus [`STAGING_SUFFIX`]), locks it, and
//! only then gives it its name (a hard link then unlink for a file, a rename for a directory),
//! so a sweep running at the same moment cannot take a newborn for a leftover:
//!
//! ```text
//!  owner                                        sweeper
//!  mkdir / create O_EXCL  NAME.new  ─┐
//!  flock(LOCK_EX|LOCK_NB)            │ NAME.new younger than STAGING_GRACE: not looked at
//!  link or rename NAME.new → NAME   ─┘
//!  ... ours until we die ...                    NAME: flock NB fails (busy) → skip
//!  killed                                       NAME: flock NB taken, same inode → remove
//! ```
//!
//! Should the owner still lose its entry (a lock that is busy, or a name that no longer names
//! the locked inode), it gives the name up and retries under another.
//!
//! Where `flock` is not supported at all (some network filesystems) the owner goes on without
//! the lock and the sweeper, unable to lock either, leaves the entry alone.
//!
//! ```
//! let dir = tempfile::tempdir()?;
//! let live = oxsort_io::TempDir::new(dir.path())?;
//! std::fs::create_dir(dir.path().join(".oxsort-4242-00000000deadbeef"))?; // a killed sort's
//! let swept = oxsort_io::sweep(dir.path(), false)?;
//! assert_eq!(swept.reclaimed.len(), 1);
//! assert!(live.path().exists()); // its owner is alive: never touched
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::IoError;

/// What a leftover was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LeftoverKind {
    /// A private temp directory of sorted runs (`.oxsort-PID-HEX`).
    TempDir,
    /// The unfinished temporary of an output (`.NAME.oxsort-PID.tmp`).
    OutputTemp,
}

/// One leftover of a sort whose owner is gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leftover {
    /// Its path.
    pub path: PathBuf,
    /// Disk space it holds (allocated blocks, so a preallocated output counts in full).
    pub bytes: u64,
    /// What it was.
    pub kind: LeftoverKind,
}

/// What one [`sweep`] of a directory did.
#[derive(Debug, Default)]
pub struct Swept {
    /// Leftovers removed (or, in a dry run, that would be removed).
    pub reclaimed: Vec<Leftover>,
    /// Leftovers whose owner is gone but that could not be removed (a permission, an I/O error).
    pub errors: Vec<IoError>,
}

impl Swept {
    /// Total bytes of [`Swept::reclaimed`].
    pub fn bytes(&self) -> u64 {
        self.reclaimed.iter().map(|l| l.bytes).sum()
    }
}

/// Appended to a name while its owner creates and locks it (see the module docs).
pub const STAGING_SUFFIX: &str = ".new";

/// Age after which an entry under a staging name is a leftover. An owner keeps the staging name
/// for the few system calls between creation and naming (microseconds; far less than a second
/// even on a loaded machine), so only a kill in between leaves one; a minute is beyond any delay.
pub const STAGING_GRACE: Duration = Duration::from_secs(60);

/// Which leftover kind, if any, an entry's name says it is, and whether it is a staging name.
/// Only the names oxsort creates match: `.oxsort-<pid>-<16 hex>` and
/// `.<name>.oxsort-<pid>[-<8 hex>].tmp`, each possibly followed by [`STAGING_SUFFIX`].
pub fn leftover_kind(name: &str) -> Option<(LeftoverKind, bool)> {
    match name.strip_suffix(STAGING_SUFFIX) {
        Some(named) => final_kind(named).map(|k| (k, true)),
        None => final_kind(name).map(|k| (k, false)),
    }
}

fn final_kind(name: &str) -> Option<LeftoverKind> {
    fn digits(s: &str) -> bool {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
    }
    fn hex(s: &str, len: usize) -> bool {
        s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit())
    }
    if let Some(rest) = name.strip_prefix(".oxsort-") {
        let (pid, tag) = rest.split_once('-')?;
        return (digits(pid) && hex(tag, 16)).then_some(LeftoverKind::TempDir);
    }
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let at = inner.rfind(".oxsort-")?;
    let (base, suffix) = (&inner[..at], &inner[at + ".oxsort-".len()..]);
    let ok = match suffix.split_once('-') {
        None => digits(suffix),
        Some((pid, tag)) => digits(pid) && hex(tag, 8),
    };
    (ok && !base.is_empty()).then_some(LeftoverKind::OutputTemp)
}

/// The outcome of trying to lock a descriptor without waiting.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lock {
    /// The lock is ours.
    Taken,
    /// Another open file description holds it.
    Busy,
    /// The filesystem has no `flock`.
    Unsupported,
}

/// `flock(fd, LOCK_EX | LOCK_NB)`.
pub(crate) fn try_lock(fd: RawFd) -> io::Result<Lock> {
    loop {
        // SAFETY: flock only reads the integer descriptor; an invalid one yields EBADF.
        if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(Lock::Taken);
        }
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => Ok(Lock::Busy),
            Some(libc::ENOLCK | libc::EOPNOTSUPP | libc::EINVAL) => Ok(Lock::Unsupported),
            _ => Err(e),
        };
    }
}

/// Whether `path` (not followed if a symlink) names the inode open as `fd`.
pub(crate) fn names_fd(path: &Path, fd: RawFd) -> bool {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `st` is writable memory of the right type; fstat fills it on success (checked).
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: fstat returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    #[allow(clippy::unnecessary_cast)] // the field types differ between targets
    std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.dev() == st.st_dev as u64 && m.ino() == st.st_ino as u64)
}

/// Opens `path` to hold its lock: read-only, never following a symlink; `dir` for a directory.
pub fn open_for_lock(path: &Path, dir: bool) -> io::Result<File> {
    let mut flags = libc::O_NOFOLLOW;
    if dir {
        flags |= libc::O_DIRECTORY;
    }
    std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path)
}

/// Finds, in `dir`, the leftovers of oxsort runs whose owner is gone, and removes them (unless
/// `dry_run`) while holding their lock. Entries of other users, entries that are not what their
/// name says (a file named like a temp directory) and entries still locked are left alone.
///
/// Fails only when `dir` cannot be listed; a leftover that cannot be removed is reported in
/// [`Swept::errors`] and the sweep goes on.
pub fn sweep(dir: &Path, dry_run: bool) -> Result<Swept, IoError> {
    let entries = std::fs::read_dir(dir).map_err(|e| IoError::other("listing", dir, e))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let mut swept = Swept::default();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((kind, staging)) = name.to_str().and_then(leftover_kind) else { continue };
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        let young = |m: &std::fs::Metadata| {
            m.modified().ok().and_then(|t| t.elapsed().ok()).is_none_or(|age| age < STAGING_GRACE)
        };
        if staging && young(&meta) {
            continue; // an owner is naming it right now
        }
        let is_dir = kind == LeftoverKind::TempDir;
        let right_type = if is_dir { meta.is_dir() } else { meta.file_type().is_file() };
        if !right_type || meta.uid() != me {
            continue;
        }
        let Ok(held) = open_for_lock(&path, is_dir) else { continue };
        // Busy: the owner lives. Unsupported: nothing can tell, so it is not ours to remove.
        if try_lock(held.as_raw_fd()).ok() != Some(Lock::Taken)
            || !names_fd(&path, held.as_raw_fd())
        {
            continue;
        }
        let bytes = meta.blocks() * 512 + if is_dir { tree_bytes(&path) } else { 0 };
        if !dry_run {
            let removed =
                if is_dir { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
            match removed {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    swept.errors.push(IoError::other("removing the leftover", &path, e));
                    continue;
                }
                _ => {}
            }
        }
        swept.reclaimed.push(Leftover { path, bytes, kind });
        drop(held); // the lock goes with the name
    }
    swept.reclaimed.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(swept)
}

/// Allocated bytes of everything under `dir`, not `dir` itself (symlinks not followed;
/// unreadable parts count 0).
pub fn tree_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let Ok(m) = std::fs::symlink_metadata(e.path()) else { continue };
            if m.is_dir() {
                stack.push(e.path());
            }
            total += m.blocks() * 512;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_oxsort_creates_and_nothing_else() {
        use LeftoverKind::*;
        let yes = [
            (".oxsort-123-0123456789abcdef", TempDir),
            (".out.dat.oxsort-77.tmp", OutputTemp),
            (".x.oxsort-77-deadbeef.tmp", OutputTemp),
            (".a.oxsort-1.oxsort-2.tmp", OutputTemp),
        ];
        for (n, k) in yes {
            assert_eq!(leftover_kind(n), Some((k, false)), "{n}");
            assert_eq!(leftover_kind(&format!("{n}{STAGING_SUFFIX}")), Some((k, true)), "{n}");
        }
        let no = [
            ".oxsort-123-0123456789abcde",  // 15 hex
            ".oxsort-123-0123456789abcdeg", // not hex
            ".oxsort-abc-0123456789abcdef", // pid not digits
            "oxsort-123-0123456789abcdef",  // no dot
            ".oxsort-123",                  // no tag
            "..oxsort-1.tmp",               // empty base name
            ".out.oxsort-.tmp",             // no pid
            ".out.oxsort-12-dead.tmp",      // short tag
            "out.oxsort-12.tmp",            // not hidden
            ".out.oxsort-12.tmp.swp",       // another program's
            ".out.tmp",
            "run-000000",
        ];
        for n in no {
            assert_eq!(leftover_kind(n), None, "{n}");
            assert_eq!(leftover_kind(&format!("{n}{STAGING_SUFFIX}")), None, "{n}");
        }
    }
}

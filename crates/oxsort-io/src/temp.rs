//! [`TempDir`], [`AtomicOutput`], and directory checks.

use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cleanup::{self, Kind};
use crate::error::IoError;
use crate::file::{DirectFile, IoOptions};
use crate::leftovers::{self, Lock};
use crate::tuning::UNIQUE_NAME_ATTEMPTS;

/// A private temporary directory `.oxsort-<pid>-<random>` (mode 0700) for sort runs.
///
/// Files are created inside with `O_EXCL` and mode 0600. The directory and its contents are
/// removed on drop, and also on SIGINT/SIGTERM/SIGHUP once
/// [`cleanup::install_signal_handlers`](crate::cleanup::install_signal_handlers) ran. While it
/// lives the directory is held under an exclusive `flock`, so that after a SIGKILL the next
/// [`sweep`](crate::sweep) knows its owner is gone (see [`crate::leftovers`]).
///
/// [`TempDir::kept`] makes a directory with a stable name instead, kept on interruption so a
/// later process can go on with what is in it (sweeps leave such directories alone; their
/// owner locks a file inside).
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
    /// The registry id; `None` for a kept directory (not removed on drop or signals).
    id: Option<u64>,
    /// A descriptor on the directory itself, holding its lock until dropped (after removal);
    /// `None` for a kept directory.
    _lock: Option<std::fs::File>,
}

impl TempDir {
    /// Creates a fresh private directory under `parent`.
    pub fn new(parent: &Path) -> Result<Self, IoError> {
        let pid = std::process::id();
        let mut last = None;
        for _ in 0..UNIQUE_NAME_ATTEMPTS {
            let path = parent.join(format!(".oxsort-{pid}-{:016x}", random_u64()));
            // Created and locked under the staging name, then named: a sweep never sees it
            // unlocked under a name it reclaims (see `leftovers`).
            let staging = staged(&path);
            let mut reg = cleanup::lock();
            match std::fs::DirBuilder::new().mode(0o700).create(&staging) {
                Ok(()) => {
                    let Some(lock) = hold(&staging, true)? else {
                        last = Some(io::ErrorKind::AlreadyExists.into());
                        continue;
                    };
                    // rename would replace an empty directory: a 64-bit random name is taken
                    // only by a fluke, but then another is tried.
                    let named = if std::fs::symlink_metadata(&path).is_ok() {
                        Err(io::ErrorKind::AlreadyExists.into())
                    } else {
                        std::fs::rename(&staging, &path)
                    };
                    if let Err(e) = named {
                        let _ = std::fs::remove_dir(&staging);
                        if e.kind() == io::ErrorKind::AlreadyExists {
                            last = Some(e);
                            continue;
                        }
                        return Err(IoError::other("naming", &path, e));
                    }
                    let id = Some(reg.register(path.clone(), Kind::Dir));
                    drop(reg);
                    let dir = TempDir { path, id, _lock: Some(lock) };
                    // The umask can only remove bits, but make the mode exact anyway.
                    std::fs::set_permissions(&dir.path, std::fs::Permissions::from_mode(0o700))
                        .map_err(|e| IoError::other("setting permissions of", &dir.path, e))?;
                    return Ok(dir);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(IoError::open(path, e)),
            }
        }
        Err(IoError::open(parent, last.unwrap_or_else(|| io::ErrorKind::AlreadyExists.into())))
    }

    /// Opens the private directory `name` under `parent`, creating it (mode 0700) when it does
    /// not exist. It is kept on drop and on signals: the process that finishes the work removes
    /// it with [`TempDir::remove`]. An existing `name` must be a directory owned by this user
    /// and reachable by no one else.
    pub fn kept(parent: &Path, name: &str) -> Result<Self, IoError> {
        use std::os::unix::fs::MetadataExt;
        let path = parent.join(name);
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(IoError::open(path, e)),
        }
        let m = std::fs::symlink_metadata(&path).map_err(|e| IoError::open(&path, e))?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if !m.is_dir() || m.uid() != me || m.mode() & 0o077 != 0 {
            return Err(IoError::open(
                &path,
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "not a private directory of this user",
                ),
            ));
        }
        Ok(TempDir { path, id: None, _lock: None })
    }

    /// Removes the directory and its contents now (a kept one too).
    pub fn remove(mut self) {
        cleanup::remove(&self.path, Kind::Dir);
        if let Some(id) = self.id.take() {
            cleanup::unregister(id);
        }
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the new file `name` (a plain name, no `/`) inside, `O_EXCL`, mode 0600.
    pub fn create_file(&self, name: &str, opts: &IoOptions) -> Result<DirectFile, IoError> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(IoError::open(
                self.path.join(name),
                io::Error::new(io::ErrorKind::InvalidInput, "not a plain file name"),
            ));
        }
        DirectFile::create_private(&self.path.join(name), opts)
    }

    /// Removes the file `name` inside (it was read and is no longer needed). A file already
    /// gone is not an error: the directory goes at the end anyway.
    pub fn remove_file(&self, name: &str) -> Result<(), IoError> {
        let path = self.path.join(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(IoError::other("removing", &path, e))
            }
            _ => Ok(()),
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            cleanup::remove(&self.path, Kind::Dir);
            cleanup::unregister(id);
        }
    }
}

/// An output file written under a temporary name and renamed over the final name only by
/// [`commit`](Self::commit), so readers never see a half-written output and a failed sort leaves
/// the previous file intact.
///
/// The temporary is `.<name>.oxsort-<pid>.tmp` in the final file's directory (same filesystem,
/// so the rename is atomic), created with `O_EXCL`. Dropping without commit removes it, as does
/// SIGINT/SIGTERM/SIGHUP; it is held under an exclusive `flock` (on the descriptor it is written
/// through) while it lives, so a [`sweep`](crate::sweep) reclaims it only after a kill. Writing to the input's own path is safe: the input is replaced only at the end.
///
/// When the final path exists and is not a regular file (`/dev/null`, a FIFO, a terminal), it is
/// written in place instead: there is nothing to rename over.
///
/// ```
/// # use oxsort_io::{AtomicOutput, IoOptions};
/// let dir = tempfile::tempdir().unwrap();
/// let out = AtomicOutput::create(&dir.path().join("sorted"), &IoOptions::default()).unwrap();
/// out.file().write_at(b"hello", 0).unwrap();
/// assert!(!dir.path().join("sorted").exists());
/// out.commit().unwrap();
/// assert_eq!(std::fs::read(dir.path().join("sorted")).unwrap(), b"hello");
/// ```
#[derive(Debug)]
pub struct AtomicOutput {
    file: Arc<DirectFile>,
    final_path: PathBuf,
    /// The temporary path and its registry id; `None` when writing in place.
    temp: Option<(PathBuf, u64)>,
}

impl AtomicOutput {
    /// Creates the temporary file for `final_path`.
    pub fn create(final_path: &Path, opts: &IoOptions) -> Result<Self, IoError> {
        if let Ok(m) = std::fs::metadata(final_path) {
            let ft = m.file_type();
            if ft.is_char_device() || ft.is_fifo() || ft.is_socket() || ft.is_block_device() {
                let file = Arc::new(DirectFile::create(final_path, opts)?);
                return Ok(AtomicOutput { file, final_path: final_path.to_path_buf(), temp: None });
            }
        }
        let name = final_path.file_name().ok_or_else(|| {
            IoError::open(
                final_path,
                io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name"),
            )
        })?;
        let dir = match final_path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let pid = std::process::id();
        let mut last = None;
        for attempt in 0..UNIQUE_NAME_ATTEMPTS {
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            if attempt == 0 {
                tmp_name.push(format!(".oxsort-{pid}.tmp"));
            } else {
                // A stale temporary of an earlier process with the same pid: pick another.
                tmp_name.push(format!(".oxsort-{pid}-{:08x}.tmp", random_u64() as u32));
            }
            let tmp = dir.join(tmp_name);
            // As for TempDir: created and locked under the staging name, then named.
            let staging = staged(&tmp);
            let mut reg = cleanup::lock();
            match DirectFile::create_exclusive(&staging, opts) {
                Ok(mut f) => {
                    if !holds(&f, &staging)? {
                        last = Some(io::ErrorKind::AlreadyExists.into());
                        continue;
                    }
                    if let Err(e) = name_file(&staging, &tmp) {
                        let _ = std::fs::remove_file(&staging);
                        if e.kind() == io::ErrorKind::AlreadyExists {
                            last = Some(e);
                            continue;
                        }
                        return Err(IoError::other("naming", &tmp, e));
                    }
                    f.set_path(tmp.clone());
                    let id = reg.register(tmp.clone(), Kind::File);
                    return Ok(AtomicOutput {
                        file: Arc::new(f),
                        final_path: final_path.to_path_buf(),
                        temp: Some((tmp, id)),
                    });
                }
                Err(IoError::Open { source, .. })
                    if source.kind() == io::ErrorKind::AlreadyExists =>
                {
                    last = Some(source)
                }
                Err(e) => return Err(e),
            }
        }
        Err(IoError::open(dir, last.unwrap_or_else(|| io::ErrorKind::AlreadyExists.into())))
    }

    /// The file to write the output into.
    pub fn file(&self) -> &Arc<DirectFile> {
        &self.file
    }

    /// The path the output gets on commit.
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Flushes the output to disk, renames it over the final path, and syncs the directory.
    pub fn commit(mut self) -> Result<(), IoError> {
        self.file.sync()?;
        let Some((tmp, id)) = self.temp.take() else { return Ok(()) };
        let renamed = std::fs::rename(&tmp, &self.final_path);
        if let Err(e) = renamed {
            self.temp = Some((tmp, id)); // Drop removes it.
            return Err(IoError::other("renaming the output to", &self.final_path, e));
        }
        cleanup::unregister(id);
        if let Some(dir) = self.final_path.parent().filter(|p| !p.as_os_str().is_empty()) {
            // Make the rename itself durable; failure here (e.g. a directory that cannot be
            // opened for reading) does not undo a completed rename, so it is not an error.
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Drop for AtomicOutput {
    fn drop(&mut self) {
        if let Some((tmp, id)) = self.temp.take() {
            cleanup::remove(&tmp, Kind::File);
            cleanup::unregister(id);
        }
    }
}

/// `path` with [`leftovers::STAGING_SUFFIX`] appended: the name it is created and locked under.
fn staged(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(leftovers::STAGING_SUFFIX);
    PathBuf::from(s)
}

/// Gives the file `staging` the name `name`, which must be free: a hard link (which never
/// replaces), then the staging name goes. Where hard links are not supported, a rename after
/// checking the name is free.
fn name_file(staging: &Path, name: &Path) -> io::Result<()> {
    match std::fs::hard_link(staging, name) {
        Ok(()) => {
            // Failing here leaves a second name on a file this process holds locked: a later
            // sweep removes it once this process is gone.
            let _ = std::fs::remove_file(staging);
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
        Err(_) if std::fs::symlink_metadata(name).is_ok() => {
            Err(io::ErrorKind::AlreadyExists.into())
        }
        Err(_) => std::fs::rename(staging, name),
    }
}

/// Opens `path` (just created by this process) and locks it for the owner's life. `None` when
/// the path was lost to a sweeper between its creation and the lock: the sweeper holds the
/// lock, or the name no longer names the locked inode.
fn hold(path: &Path, dir: bool) -> Result<Option<std::fs::File>, IoError> {
    let f = match leftovers::open_for_lock(path, dir) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(IoError::open(path, e)),
    };
    Ok(locked(f.as_raw_fd(), path)?.then_some(f))
}

/// Locks the just-created temporary `f` for the owner's life; `false` when a sweeper got it.
fn holds(f: &DirectFile, path: &Path) -> Result<bool, IoError> {
    locked(f.raw_fd(), path)
}

/// Takes the owner's lock on `fd` (open on `path`); `false` when a sweeper holds it or removed
/// the path meanwhile. A filesystem without `flock` is used unlocked: no sweeper can lock it
/// either, so nothing reclaims it while it lives.
fn locked(fd: i32, path: &Path) -> Result<bool, IoError> {
    match leftovers::try_lock(fd).map_err(|e| IoError::other("locking", path, e))? {
        Lock::Busy => Ok(false),
        Lock::Taken => Ok(leftovers::names_fd(path, fd)),
        Lock::Unsupported => Ok(true),
    }
}

/// Takes an exclusive `flock` on `file` without waiting: `Ok(false)` when another open file
/// description holds it. The lock goes with the last descriptor of this one (at exit too, even
/// on SIGKILL), so a lock that can be taken proves its earlier holder is gone. A filesystem
/// without `flock` counts as taken: nothing can lock it, so nothing reclaims it.
pub fn try_lock_exclusive(file: &std::fs::File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    Ok(!matches!(leftovers::try_lock(file.as_raw_fd())?, Lock::Busy))
}

/// Bytes available to unprivileged users on the filesystem holding `path`
/// (`statvfs`: `f_bavail * f_frsize`).
pub fn free_space(path: &Path) -> Result<u64, IoError> {
    let c = c_path(path, "inspecting free space of")?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a valid NUL-terminated string and `st` points to writable memory of the
    // right type; statvfs initializes it on success (checked before assume_init).
    let r = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if r != 0 {
        return Err(IoError::other("inspecting free space of", path, io::Error::last_os_error()));
    }
    // SAFETY: statvfs returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    #[allow(clippy::unnecessary_cast)] // the field types differ between targets
    Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// The device (filesystem) `path` lives on, or `None` if it cannot be looked at.
pub fn device_of(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.dev())
}

/// Looks at an input before it is read: it must exist, be readable and not be a directory.
/// Returns its size when it is a regular file, `None` when its size is known only at its end
/// (a FIFO, a character device).
pub fn probe_input(path: &Path) -> io::Result<Option<u64>> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    // Readability is checked too, so a bad input stops the sort before any output.
    std::fs::File::open(path)?;
    Ok(meta.is_file().then_some(meta.len()))
}

/// What an output path names, looked at before any work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// Nothing yet, or a regular file: written under a temporary name and renamed.
    File,
    /// A character or block device, a FIFO or a socket (`/dev/null`, a pipe): written in order
    /// as a stream, in place, never truncated.
    Stream,
    /// A directory: not an output.
    Directory,
}

/// What `path` names as an output (errors other than "not found" are the caller's to report).
pub fn probe_output(path: &Path) -> io::Result<OutputTarget> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Ok(OutputTarget::Directory),
        Ok(m) if m.is_file() => Ok(OutputTarget::File),
        Ok(_) => Ok(OutputTarget::Stream),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(OutputTarget::File),
        Err(e) => Err(e),
    }
}

/// Checks that `dir` exists, is a directory, and that this process may create files in it.
pub fn check_dir_writable(dir: &Path) -> Result<(), IoError> {
    check_dir_writable_as(dir, "checking the directory")
}

/// [`check_dir_writable`], with `op` saying what the directory is for in its errors:
/// "checking the output directory".
pub fn check_dir_writable_as(dir: &Path, op: &'static str) -> Result<(), IoError> {
    let m = std::fs::metadata(dir).map_err(|e| IoError::other(op, dir, e))?;
    if !m.is_dir() {
        return Err(IoError::other(op, dir, io::Error::from_raw_os_error(libc::ENOTDIR)));
    }
    let c = c_path(dir, op)?;
    // SAFETY: `c` is a valid NUL-terminated path string.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(IoError::other(op, dir, io::Error::last_os_error()));
    }
    Ok(())
}

fn c_path(path: &Path, op: &'static str) -> Result<CString, IoError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        IoError::other(op, path, io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))
    })
}

/// A random 64-bit number for unique names (`getrandom`, mixed with the clock as a fallback).
fn random_u64() -> u64 {
    let mut v = 0u64;
    // SAFETY: getrandom writes at most 8 bytes into `v`, which is 8 bytes of writable memory.
    let n = unsafe { libc::getrandom((&mut v as *mut u64).cast(), 8, libc::GRND_NONBLOCK) };
    if n != 8 {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        v ^= h.finish();
    }
    v
}

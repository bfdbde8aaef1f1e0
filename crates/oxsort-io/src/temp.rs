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
        let path = parent.join(name);
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(IoError::open(path, e)),
        }
        if let Some(why) = private_dir_problem(&path)? {
            return Err(IoError::open(
                &path,
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("not a private directory of this user: {why}"),
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
/// so the rename is atomic; a long name is shortened to stay within `NAME_MAX`), created with
/// `O_EXCL` and mode 0600. Dropping without commit removes it, as does SIGINT/SIGTERM/SIGHUP; it
/// is held under an exclusive `flock` (on the descriptor it is written through) while it lives,
/// so a [`sweep`](crate::sweep) reclaims it only after a kill. Writing to the input's own path is
/// safe: the input is replaced only at the end.
///
/// The output is replaced as GNU sort replaces it (see [`crate::replace`]): a symlink is
/// followed and its target replaced; before the rename the temporary takes the replaced file's
/// mode, owner, group and ACL (a new file gets `0666 & ~umask`); a file with other hard links,
/// in a directory that refuses the rename, or whose owner cannot be kept is written in place
/// after the sort (the finished temporary copied over it), keeping its inode. A file the caller
/// may not write is refused by [`create`](Self::create).
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
    /// The file itself, open for writing (not truncated), when the finished temporary is
    /// copied over it rather than renamed.
    in_place: Option<std::fs::File>,
}

impl AtomicOutput {
    /// Creates the temporary file for `final_path`. A temporary that cannot go in the final
    /// file's directory (written in place, that directory not writable) goes in the system's
    /// temp directory.
    pub fn create(final_path: &Path, opts: &IoOptions) -> Result<Self, IoError> {
        Self::create_spare(final_path, opts, &std::env::temp_dir())
    }

    /// [`AtomicOutput::create`], a temporary that cannot go next to the output going in `spare`.
    pub fn create_spare(
        final_path: &Path,
        opts: &IoOptions,
        spare: &Path,
    ) -> Result<Self, IoError> {
        if let Ok(m) = std::fs::metadata(final_path) {
            let ft = m.file_type();
            if ft.is_char_device() || ft.is_fifo() || ft.is_socket() || ft.is_block_device() {
                let file = Arc::new(DirectFile::create(final_path, opts)?);
                return Ok(AtomicOutput {
                    file,
                    final_path: final_path.to_path_buf(),
                    temp: None,
                    in_place: None,
                });
            }
        }
        let plan = crate::replace::inspect_output(final_path)?;
        let name = plan.target.file_name().ok_or_else(|| {
            IoError::open(
                final_path,
                io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name"),
            )
        })?;
        let in_place = match plan.in_place {
            Some(_) => Some(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&plan.target)
                    .map_err(|e| IoError::open(final_path, e))?,
            ),
            None => None,
        };
        let dir = match plan.in_place {
            Some(crate::replace::InPlace::DirectoryNotWritable) => spare.to_path_buf(),
            _ => plan.dir(),
        };
        let pid = std::process::id();
        let mut last = None;
        for attempt in 0..UNIQUE_NAME_ATTEMPTS {
            // A stale temporary of an earlier process with the same pid: pick another.
            let tag =
                if attempt == 0 { String::new() } else { format!("-{:08x}", random_u64() as u32) };
            let tmp = dir.join(crate::replace::temp_name(name, pid, &tag));
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
                        final_path: plan.target,
                        temp: Some((tmp, id)),
                        in_place,
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

    /// The path the output gets on commit (a symlink's target when the name given was a link).
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Whether the output is written in place at commit (the temporary copied over it).
    pub fn is_in_place(&self) -> bool {
        self.in_place.is_some()
    }

    /// Flushes the output to disk and puts it under the final path: gives it the replaced
    /// file's mode, owner and ACL and renames it over, or copies it over the file in place;
    /// then syncs the directory.
    pub fn commit(mut self) -> Result<(), IoError> {
        self.file.sync()?;
        let Some((tmp, id)) = self.temp.take() else { return Ok(()) };
        let done = match self.in_place.as_mut() {
            Some(dst) => self
                .file
                .len()
                .and_then(|len| crate::replace::copy_over(&tmp, dst, &self.final_path, len)),
            None => {
                crate::replace::adopt(self.file.raw_fd(), &tmp, &self.final_path).and_then(|()| {
                    std::fs::rename(&tmp, &self.final_path)
                        .map_err(|e| IoError::other("renaming the output to", &self.final_path, e))
                })
            }
        };
        if let Err(e) = done {
            self.temp = Some((tmp, id)); // Drop removes it.
            return Err(e);
        }
        if self.in_place.is_some() {
            cleanup::remove(&tmp, Kind::File);
            cleanup::unregister(id);
            return Ok(());
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

/// Why `path` is not a private directory of this user, in words (a link, which is never
/// followed; not a directory; another user's, naming them; open to others); `None` when it is
/// one. A link, another user's directory or one others may write into could hand this
/// process files it does not own.
pub fn private_dir_problem(path: &Path) -> Result<Option<String>, IoError> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).map_err(|e| IoError::open(path, e))?;
    let me = effective_uid();
    Ok(if m.file_type().is_symlink() {
        Some("it is a symbolic link (not followed)".to_string())
    } else if !m.is_dir() {
        Some("it is not a directory".to_string())
    } else if m.uid() != me {
        Some(format!("it belongs to {}, not to {}", user_label(m.uid()), user_label(me)))
    } else if m.mode() & 0o077 != 0 {
        Some(format!("others may use it (mode {:04o})", m.mode() & 0o7777))
    } else {
        None
    })
}

/// The effective user id of this process.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The login name of user `uid` from the password file, when it has one there.
pub fn user_name(uid: u32) -> Option<String> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        let id = f.nth(1)?.parse::<u32>().ok()?;
        (id == uid).then(|| name.to_string())
    })
}

/// `user NAME (uid N)`, or `uid N` for a user without a name.
pub fn user_label(uid: u32) -> String {
    match user_name(uid) {
        Some(n) => format!("user {n} (uid {uid})"),
        None => format!("uid {uid}"),
    }
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

/// Looks at an input before it is read, without opening it (opening a FIFO takes its writer's
/// data, or blocks; the sort opens every input once, when it reads it): it must exist, be
/// readable (`access`) and not be a directory. Returns its size when a read will return exactly
/// that many bytes ([`trusted_size`](crate::trusted_size)), `None` when its size is known only
/// at its end (a FIFO, a character device, a `/proc` or `/sys` file, an empty file).
pub fn probe_input(path: &Path) -> io::Result<Option<u64>> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    // Readability is checked too, so a bad input stops the sort before any output.
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `c` is a valid NUL-terminated path string.
    if unsafe { libc::access(c.as_ptr(), libc::R_OK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    crate::size::trusted_size(path)
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
        // `file/`: refused as a file output by `inspect_output`, in GNU's words.
        Err(e)
            if e.raw_os_error() == Some(libc::ENOTDIR)
                && path.as_os_str().as_bytes().ends_with(b"/") =>
        {
            Ok(OutputTarget::File)
        }
        Err(e) => Err(e),
    }
}

/// Checks that `dir` exists, is a directory, and that this process may create files in it.
pub fn check_dir_writable(dir: &Path) -> Result<(), IoError> {
    check_dir_writable_as(dir, "checking the directory")
}

/// What a failed check of a temp directory says it was doing: a sort checks a temp directory
/// when it is about to make its first temp file there (and before any work when runs are
/// certain), and a front end that words the error its own way (GNU sort's "cannot create
/// temporary file in") knows it by this.
pub const TEMP_DIR_CHECK: &str = "checking the temp directory";

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

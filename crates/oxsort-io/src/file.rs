//! [`DirectFile`]: positional I/O with `O_DIRECT` where possible; [`IoOptions`], [`FaultPlan`].

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::IoError;
use crate::tuning::DIRECT_ALIGN;

/// How files are opened and driven. The default tries `O_DIRECT` and io_uring, falling back
/// silently where the filesystem or kernel refuses.
#[derive(Clone, Default, Debug)]
pub struct IoOptions {
    /// Never use `O_DIRECT` (go through the page cache).
    pub buffered: bool,
    /// Never use io_uring: pipelines use the thread-pool backend.
    pub no_uring: bool,
    /// Fault injection for tests: fail chosen reads/writes.
    pub faults: Option<Arc<FaultPlan>>,
}

/// Test fault injection: fails the Nth read, the Nth write and/or the Nth sync operation
/// (1-based) with a given errno.
///
/// Operations are counted across every file opened with the same plan (share it through the
/// `Arc` in [`IoOptions::faults`]). One operation is one [`DirectFile::read_at`] /
/// [`DirectFile::write_at`] / [`DirectFile::sync`] call, or one transfer of a
/// [`Reader`](crate::Reader) / [`Writer`](crate::Writer).
///
/// ```
/// # use oxsort_io::FaultPlan;
/// let plan = FaultPlan::fail_read(3, libc::EIO).and_fail_write(1, libc::ENOSPC);
/// assert_eq!(plan.reads(), 0);
/// ```
#[derive(Default)]
pub struct FaultPlan {
    fail_read: Option<(u64, i32)>,
    fail_write: Option<(u64, i32)>,
    fail_sync: Option<(u64, i32)>,
    /// Something done to the world just before the Nth read (a file truncated under a reader).
    before_read: Option<(u64, Arc<dyn Fn() + Send + Sync>)>,
    reads: AtomicU64,
    writes: AtomicU64,
    syncs: AtomicU64,
}

impl fmt::Debug for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultPlan")
            .field("fail_read", &self.fail_read)
            .field("fail_write", &self.fail_write)
            .field("fail_sync", &self.fail_sync)
            .field("before_read", &self.before_read.as_ref().map(|(n, _)| n))
            .field("reads", &self.reads)
            .field("writes", &self.writes)
            .field("syncs", &self.syncs)
            .finish()
    }
}

impl FaultPlan {
    /// Runs `act` just before the `n`th read (1-based) is made, on the thread that makes or
    /// submits it: a test changes a file under a reader at a chosen point.
    ///
    /// ```
    /// # use oxsort_io::FaultPlan;
    /// let plan = FaultPlan::before_read(2, || println!("about to read again"));
    /// assert_eq!(plan.reads(), 0);
    /// ```
    pub fn before_read(n: u64, act: impl Fn() + Send + Sync + 'static) -> Self {
        FaultPlan { before_read: Some((n, Arc::new(act))), ..Default::default() }
    }

    /// Fails the `n`th read (1-based) with `errno`.
    pub fn fail_read(n: u64, errno: i32) -> Self {
        FaultPlan { fail_read: Some((n, errno)), ..Default::default() }
    }

    /// Fails the `n`th write (1-based) with `errno`.
    pub fn fail_write(n: u64, errno: i32) -> Self {
        FaultPlan { fail_write: Some((n, errno)), ..Default::default() }
    }

    /// Fails the `n`th sync (1-based) with `errno`.
    pub fn fail_sync(n: u64, errno: i32) -> Self {
        FaultPlan { fail_sync: Some((n, errno)), ..Default::default() }
    }

    /// Also fails the `n`th read with `errno`.
    pub fn and_fail_read(mut self, n: u64, errno: i32) -> Self {
        self.fail_read = Some((n, errno));
        self
    }

    /// Also fails the `n`th write with `errno`.
    pub fn and_fail_write(mut self, n: u64, errno: i32) -> Self {
        self.fail_write = Some((n, errno));
        self
    }

    /// Also fails the `n`th sync with `errno`.
    pub fn and_fail_sync(mut self, n: u64, errno: i32) -> Self {
        self.fail_sync = Some((n, errno));
        self
    }

    /// Read operations counted so far.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// Write operations counted so far.
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    /// Sync operations counted so far.
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    /// Counts one read (after running the action planned before it); the injected error if
    /// it is the one to fail.
    pub(crate) fn on_read(&self) -> Option<io::Error> {
        let n = self.reads.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some((_, act)) = self.before_read.as_ref().filter(|(k, _)| *k == n) {
            act();
        }
        match self.fail_read {
            Some((k, errno)) if k == n => Some(io::Error::from_raw_os_error(errno)),
            _ => None,
        }
    }

    /// Counts one write; the injected error if it is the one to fail.
    pub(crate) fn on_write(&self) -> Option<io::Error> {
        Self::count(&self.writes, self.fail_write)
    }

    /// Counts one sync; the injected error if it is the one to fail.
    pub(crate) fn on_sync(&self) -> Option<io::Error> {
        Self::count(&self.syncs, self.fail_sync)
    }

    fn count(counter: &AtomicU64, fail: Option<(u64, i32)>) -> Option<io::Error> {
        let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
        match fail {
            Some((k, errno)) if k == n => Some(io::Error::from_raw_os_error(errno)),
            _ => None,
        }
    }
}

/// A file opened for positional I/O, with `O_DIRECT` when the filesystem allows.
///
/// Opening falls back to buffered I/O when `O_DIRECT` is refused (`EINVAL`, e.g. on tmpfs), when
/// [`IoOptions::buffered`] is set, or when the target is not a regular file or block device.
///
/// [`read_at`](Self::read_at) and [`write_at`](Self::write_at) take any buffer, offset and
/// length: the part that is aligned to [`DIRECT_ALIGN`] in memory, offset and length goes
/// direct; an unaligned head or tail goes through a second, buffered descriptor of the same file
/// (so the last partial block of a file works). The page cache and direct I/O stay coherent
/// because the kernel flushes/invalidates the affected range around each direct transfer.
///
/// Non-seekable files (pipes, character devices) are read/written sequentially: offsets must
/// follow each other exactly, otherwise the call fails with `ESPIPE`.
///
/// `DirectFile` is `Sync`: several threads may do positional I/O on it at once.
pub struct DirectFile {
    /// The main descriptor: `O_DIRECT` when `direct` is true.
    main: File,
    /// A buffered descriptor of the same file, for unaligned heads/tails (only when `direct`).
    buffered: Option<File>,
    path: PathBuf,
    direct: bool,
    seekable: bool,
    /// Next offset of a non-seekable file; the lock also serializes sequential reads/writes.
    stream_pos: Mutex<u64>,
    faults: Option<Arc<FaultPlan>>,
}

impl fmt::Debug for DirectFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectFile")
            .field("path", &self.path)
            .field("fd", &self.main.as_raw_fd())
            .field("direct", &self.direct)
            .field("seekable", &self.seekable)
            .finish()
    }
}

/// How `open_with` opens a path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Read,
    /// Read and write an existing file (no create, no truncate).
    Update,
    Create,
    CreatePrivate,
    /// `O_EXCL` with mode `0600`: the temporary of an [`crate::AtomicOutput`], private while
    /// it is written (it takes the replaced file's mode at commit).
    CreateExclusive,
}

impl DirectFile {
    /// Opens `path` for reading.
    pub fn open(path: &Path, opts: &IoOptions) -> Result<Self, IoError> {
        Self::open_with(path, opts, Mode::Read)
    }

    /// Opens an existing `path` for reading and writing, as it is (not created, not truncated):
    /// a temporary run read back whose blocks are [released](Self::release) once read.
    pub fn open_update(path: &Path, opts: &IoOptions) -> Result<Self, IoError> {
        Self::open_with(path, opts, Mode::Update)
    }

    /// Creates (or truncates) `path` for writing and reading back, mode `0666 & !umask`.
    pub fn create(path: &Path, opts: &IoOptions) -> Result<Self, IoError> {
        Self::open_with(path, opts, Mode::Create)
    }

    /// Creates `path`, which must not exist (`O_EXCL`), mode `0600`: for temporary runs.
    pub fn create_private(path: &Path, opts: &IoOptions) -> Result<Self, IoError> {
        Self::open_with(path, opts, Mode::CreatePrivate)
    }

    /// Creates `path`, which must not exist (`O_EXCL`), mode `0600`.
    pub(crate) fn create_exclusive(path: &Path, opts: &IoOptions) -> Result<Self, IoError> {
        Self::open_with(path, opts, Mode::CreateExclusive)
    }

    fn options(mode: Mode, direct: bool) -> OpenOptions {
        let mut o = OpenOptions::new();
        o.read(true);
        match mode {
            Mode::Read => {}
            Mode::Update => {
                o.write(true);
            }
            Mode::Create => {
                o.write(true).create(true).truncate(true).mode(0o666);
            }
            Mode::CreatePrivate => {
                o.write(true).create_new(true).mode(0o600);
            }
            Mode::CreateExclusive => {
                o.write(true).create_new(true).mode(0o600);
            }
        }
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        o
    }

    fn open_with(path: &Path, opts: &IoOptions, mode: Mode) -> Result<Self, IoError> {
        // Only regular files and block devices take O_DIRECT; opening a FIFO must not be tried
        // twice (it blocks until the other end opens).
        let want_direct = !opts.buffered
            && match std::fs::metadata(path) {
                Ok(m) => m.file_type().is_file() || m.file_type().is_block_device(),
                Err(_) => !matches!(mode, Mode::Read | Mode::Update), // about to be created
            };
        let mut direct = want_direct;
        let main = match Self::options(mode, direct).open(path) {
            Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => {
                // The filesystem refuses O_DIRECT (older tmpfs, some FUSE). The kernel checks
                // O_DIRECT after creating the file, so an exclusive create may have left the
                // (empty) file behind: O_EXCL proved it did not exist before, so it is ours.
                direct = false;
                match Self::options(mode, false).open(path) {
                    Err(e2)
                        if matches!(mode, Mode::CreatePrivate | Mode::CreateExclusive)
                            && e2.kind() == io::ErrorKind::AlreadyExists =>
                    {
                        OpenOptions::new().read(true).write(true).truncate(true).open(path)
                    }
                    r => r,
                }
            }
            r => r,
        }
        .map_err(|e| IoError::open(path, e))?;
        Self::finish_open(main, path.to_path_buf(), direct, opts, mode)
    }

    fn finish_open(
        main: File,
        path: PathBuf,
        direct: bool,
        opts: &IoOptions,
        mode: Mode,
    ) -> Result<Self, IoError> {
        let meta = main.metadata().map_err(|e| IoError::open(&path, e))?;
        let ft = meta.file_type();
        let seekable = ft.is_file() || ft.is_block_device();
        let buffered = if direct {
            Some(reopen_buffered(&main, &path, mode).map_err(|e| IoError::open(&path, e))?)
        } else {
            None
        };
        Ok(DirectFile {
            main,
            buffered,
            path,
            direct,
            seekable,
            stream_pos: Mutex::new(0),
            faults: opts.faults.clone(),
        })
    }

    /// Wraps an already open file (stdin, stdout, a pipe, an inherited descriptor). Its status
    /// flags are kept: it is direct only if it was opened with `O_DIRECT`. A seekable file is
    /// addressed from offset 0 (not from its current position).
    pub fn from_std(file: File, path: PathBuf, opts: &IoOptions) -> Self {
        let seekable = file
            .metadata()
            .map(|m| m.file_type().is_file() || m.file_type().is_block_device())
            .unwrap_or(false);
        // SAFETY: F_GETFL on a descriptor we own has no memory-safety preconditions.
        let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
        let mut direct = flags >= 0 && flags & libc::O_DIRECT != 0;
        let mut buffered = None;
        if direct {
            match reopen_buffered(&file, &path, Mode::Read) {
                Ok(b) => buffered = Some(b),
                Err(_) => {
                    // Cannot get a second descriptor: drop O_DIRECT on this one instead.
                    // SAFETY: F_SETFL with flags derived from F_GETFL on our own descriptor.
                    unsafe {
                        libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_DIRECT)
                    };
                    direct = false;
                }
            }
        }
        DirectFile {
            main: file,
            buffered,
            path,
            direct,
            seekable,
            stream_pos: Mutex::new(0),
            faults: opts.faults.clone(),
        }
    }

    /// Current length in bytes (0 for pipes and character devices).
    #[allow(clippy::len_without_is_empty)] // a fallible length; callers compare with 0
    pub fn len(&self) -> Result<u64, IoError> {
        let meta = self.main.metadata().map_err(|e| IoError::other("inspecting", &self.path, e))?;
        if meta.file_type().is_block_device() {
            return (&self.main)
                .seek(SeekFrom::End(0))
                .map_err(|e| IoError::other("inspecting", &self.path, e));
        }
        Ok(meta.len())
    }

    /// The length a read of the whole file returns, when its `stat` tells it: `None` for a pipe
    /// or device, and for a regular file whose size cannot be trusted (empty, or on `/proc`,
    /// `/sys` and the like; see [`crate::trusted_size`]).
    pub fn trusted_len(&self) -> Result<Option<u64>, IoError> {
        crate::size::trusted_size_of(&self.main)
            .map_err(|e| IoError::other("inspecting", &self.path, e))
    }

    /// The same file read as a stream: in order with `read` from where its descriptor stands
    /// (offsets must follow each other, as for a pipe), never direct. For a regular file whose
    /// length is not known before its end ([`Self::trusted_len`] is `None`).
    pub fn into_sequential(mut self) -> Self {
        if self.direct {
            // SAFETY: F_GETFL/F_SETFL on a descriptor we own, with flags derived from F_GETFL.
            unsafe {
                let fd = self.main.as_raw_fd();
                let flags = libc::fcntl(fd, libc::F_GETFL);
                if flags >= 0 {
                    libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT);
                }
            }
        }
        self.direct = false;
        self.buffered = None;
        self.seekable = false;
        self
    }

    /// True when the main descriptor uses `O_DIRECT`.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// False for pipes, sockets and character devices: then I/O is sequential.
    pub fn is_seekable(&self) -> bool {
        self.seekable
    }

    /// The path the file was opened with (a description like `<stdin>` for `from_std`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records that the file was given another name (errors name that one from now on).
    pub(crate) fn set_path(&mut self, path: PathBuf) {
        self.path = path;
    }

    /// The descriptor pipelines submit transfers on (`O_DIRECT` when [`Self::is_direct`]).
    pub(crate) fn raw_fd(&self) -> i32 {
        self.main.as_raw_fd()
    }

    /// Counts a read against the fault plan; the injected error, if this one must fail.
    pub(crate) fn inject_read(&self, offset: u64) -> Result<(), IoError> {
        match self.faults.as_ref().and_then(|f| f.on_read()) {
            Some(e) => Err(IoError::read(&self.path, offset, e)),
            None => Ok(()),
        }
    }

    /// Counts a write against the fault plan; the injected error, if this one must fail.
    pub(crate) fn inject_write(&self, offset: u64) -> Result<(), IoError> {
        match self.faults.as_ref().and_then(|f| f.on_write()) {
            Some(e) => Err(IoError::write(&self.path, offset, e)),
            None => Ok(()),
        }
    }

    /// Reads into `buf` from `offset`, filling it unless end of file comes first; returns the
    /// number of bytes read.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<usize, IoError> {
        self.inject_read(offset)?;
        self.read_at_uncounted(buf, offset)
    }

    /// [`Self::read_at`] without counting against the fault plan (pipelines count per transfer).
    pub(crate) fn read_at_uncounted(&self, buf: &mut [u8], offset: u64) -> Result<usize, IoError> {
        if !self.seekable {
            return self.read_stream(buf, offset);
        }
        let err = |at: u64, e| IoError::read(&self.path, at, e);
        let Some(slow) = self.buffered.as_ref().filter(|_| self.direct) else {
            return read_full(&self.main, buf, offset).map_err(|(at, e)| err(at, e));
        };
        let split = Split::new(buf.as_ptr() as usize, buf.len(), offset);
        let mut done = 0;
        if split.head > 0 {
            let n =
                read_full(slow, &mut buf[..split.head], offset).map_err(|(at, e)| err(at, e))?;
            done += n;
            if n < split.head {
                return Ok(done);
            }
        }
        if split.body > 0 {
            let body = &mut buf[split.head..split.head + split.body];
            let at = offset + split.head as u64;
            let n = match read_full(&self.main, body, at) {
                // Some filesystems accept O_DIRECT at open but refuse a transfer: go buffered.
                Err((_, e)) if e.raw_os_error() == Some(libc::EINVAL) => read_full(slow, body, at),
                r => r,
            }
            .map_err(|(at, e)| err(at, e))?;
            done += n;
            if n < split.body {
                // End of file inside the body. A direct read stops at EOF exactly, but if it
                // stopped early on a block boundary the buffered descriptor finishes the rest.
                let more = read_full(slow, &mut buf[done..], offset + done as u64)
                    .map_err(|(at, e)| err(at, e))?;
                return Ok(done + more);
            }
        }
        if split.tail > 0 {
            let at = offset + done as u64;
            done += read_full(slow, &mut buf[done..], at).map_err(|(at, e)| err(at, e))?;
        }
        Ok(done)
    }

    /// Writes all of `buf` at `offset`.
    pub fn write_at(&self, buf: &[u8], offset: u64) -> Result<(), IoError> {
        self.inject_write(offset)?;
        self.write_at_uncounted(buf, offset)
    }

    /// [`Self::write_at`] without counting against the fault plan (pipelines count per transfer).
    pub(crate) fn write_at_uncounted(&self, buf: &[u8], offset: u64) -> Result<(), IoError> {
        if !self.seekable {
            return self.write_stream(buf, offset);
        }
        let err = |at: u64, e| IoError::write(&self.path, at, e);
        let Some(slow) = self.buffered.as_ref().filter(|_| self.direct) else {
            return write_full(&self.main, buf, offset).map_err(|(at, e)| err(at, e));
        };
        let split = Split::new(buf.as_ptr() as usize, buf.len(), offset);
        let (head, rest) = buf.split_at(split.head);
        let (body, tail) = rest.split_at(split.body);
        write_full(slow, head, offset).map_err(|(at, e)| err(at, e))?;
        let at = offset + split.head as u64;
        match write_full(&self.main, body, at) {
            Err((_, e)) if e.raw_os_error() == Some(libc::EINVAL) => write_full(slow, body, at),
            r => r,
        }
        .map_err(|(at, e)| err(at, e))?;
        write_full(slow, tail, at + split.body as u64).map_err(|(at, e)| err(at, e))
    }

    fn read_stream(&self, buf: &mut [u8], offset: u64) -> Result<usize, IoError> {
        let mut pos = self.stream_pos.lock().unwrap_or_else(|p| p.into_inner());
        check_stream_offset(*pos, offset).map_err(|e| IoError::read(&self.path, offset, e))?;
        let mut done = 0;
        while done < buf.len() {
            match (&self.main).read(&mut buf[done..]) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    *pos += done as u64;
                    return Err(IoError::read(&self.path, offset + done as u64, e));
                }
            }
        }
        *pos += done as u64;
        Ok(done)
    }

    fn write_stream(&self, buf: &[u8], offset: u64) -> Result<(), IoError> {
        let mut pos = self.stream_pos.lock().unwrap_or_else(|p| p.into_inner());
        check_stream_offset(*pos, offset).map_err(|e| IoError::write(&self.path, offset, e))?;
        let r = (&self.main).write_all(buf);
        // On error the amount written is unknown; the stream is unusable anyway.
        *pos += buf.len() as u64;
        r.map_err(|e| IoError::write(&self.path, offset, e))
    }

    /// Reserves disk blocks for the first `len` bytes (`fallocate`), so later writes neither
    /// fail with `ENOSPC` halfway nor fragment the file. The file length becomes at least
    /// `len`: trim with [`Self::set_len`] if fewer bytes end up written. A filesystem without
    /// `fallocate` (`EOPNOTSUPP`) makes this a no-op, as does a non-seekable file.
    pub fn preallocate(&self, len: u64) -> Result<(), IoError> {
        if !self.seekable || len == 0 {
            return Ok(());
        }
        self.fallocate(0, 0..len).map_err(|e| match e.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => IoError::write(&self.path, len, e),
            _ => IoError::other("preallocating", &self.path, e),
        })
    }

    /// Gives the disk blocks under `range` back to the filesystem (a hole: the range reads as
    /// zeros, the length stays). For a temporary file whose bytes were read already: on a
    /// filesystem that discards freed blocks as it frees them (mounted with `discard`) removing
    /// a large file blocks for tens of milliseconds per hundred MB, a cost that freeing each
    /// piece as it is read spreads over the reading. A no-op for anything but a regular file and
    /// on a filesystem without hole punching (`EOPNOTSUPP`).
    pub fn release(&self, range: std::ops::Range<u64>) -> Result<(), IoError> {
        if !self.seekable || range.is_empty() {
            return Ok(());
        }
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        self.fallocate(mode, range).map_err(|e| IoError::other("releasing", &self.path, e))
    }

    /// `fallocate(mode)` over `range`, again after `EINTR`; a filesystem without it
    /// (`EOPNOTSUPP`) makes it a no-op.
    fn fallocate(&self, mode: libc::c_int, range: std::ops::Range<u64>) -> io::Result<()> {
        let off = |v: u64| {
            libc::off_t::try_from(v).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))
        };
        let (start, len) = (off(range.start)?, off(range.end - range.start)?);
        loop {
            // SAFETY: fallocate on a descriptor we own; no memory is passed to the kernel.
            if unsafe { libc::fallocate(self.main.as_raw_fd(), mode, start, len) } == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EOPNOTSUPP) => return Ok(()),
                _ => return Err(e),
            }
        }
    }

    /// Truncates or extends the file to `len` bytes. A no-op for anything but a regular file:
    /// a pipe or a device (`/dev/null`, a disk written whole) has no length to set.
    pub fn set_len(&self, len: u64) -> Result<(), IoError> {
        if !self.seekable {
            return Ok(());
        }
        let meta = self
            .main
            .metadata()
            .map_err(|e| IoError::other("setting the length of", &self.path, e))?;
        if !meta.file_type().is_file() {
            return Ok(());
        }
        self.main.set_len(len).map_err(|e| IoError::other("setting the length of", &self.path, e))
    }

    /// Flushes data and metadata to the device (`fsync`). A no-op for pipes (not counted
    /// against the fault plan either).
    pub fn sync(&self) -> Result<(), IoError> {
        if !self.seekable {
            return Ok(());
        }
        if let Some(e) = self.faults.as_ref().and_then(|f| f.on_sync()) {
            return Err(IoError::other("syncing", &self.path, e));
        }
        self.main.sync_all().map_err(|e| IoError::other("syncing", &self.path, e))
    }
}

fn check_stream_offset(pos: u64, offset: u64) -> io::Result<()> {
    if pos == offset {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "non-seekable file accessed at offset {offset}, expected {pos} (ESPIPE)"
        )))
    }
}

/// Opens a second, buffered descriptor of the file behind `f`.
///
/// `/proc/self/fd/N` reaches the very same inode even if the path was renamed or replaced since;
/// the path itself is the fallback when /proc is not mounted.
fn reopen_buffered(f: &File, path: &Path, mode: Mode) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true);
    if mode != Mode::Read {
        o.write(true);
    }
    let proc = PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd()));
    o.open(&proc).or_else(|_| o.open(path))
}

/// How a transfer of `len` bytes at memory address `addr` and file offset `offset` splits into a
/// buffered head (until both are aligned), a direct body, and a buffered tail.
#[derive(Debug, PartialEq, Eq)]
struct Split {
    head: usize,
    body: usize,
    tail: usize,
}

impl Split {
    fn new(addr: usize, len: usize, offset: u64) -> Self {
        let a = DIRECT_ALIGN as u64;
        let head = (((a - offset % a) % a) as usize).min(len);
        if (addr + head) % DIRECT_ALIGN != 0 {
            // Memory and file are misaligned relative to each other: no part can go direct.
            return Split { head: len, body: 0, tail: 0 };
        }
        let body = (len - head) / DIRECT_ALIGN * DIRECT_ALIGN;
        Split { head, body, tail: len - head - body }
    }
}

/// `pread` until `buf` is full or end of file; on error, the failing offset.
fn read_full(f: &File, buf: &mut [u8], offset: u64) -> Result<usize, (u64, io::Error)> {
    let mut done = 0;
    while done < buf.len() {
        let at = offset + done as u64;
        match f.read_at(&mut buf[done..], at) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((at, e)),
        }
    }
    Ok(done)
}

/// `pwrite` all of `buf`; on error, the failing offset.
fn write_full(f: &File, buf: &[u8], offset: u64) -> Result<(), (u64, io::Error)> {
    let mut done = 0;
    while done < buf.len() {
        let at = offset + done as u64;
        match f.write_at(&buf[done..], at) {
            Ok(0) => return Err((at, io::ErrorKind::WriteZero.into())),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((at, e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_cases() {
        let a = DIRECT_ALIGN;
        assert_eq!(Split::new(a, 3 * a, 0), Split { head: 0, body: 3 * a, tail: 0 });
        assert_eq!(Split::new(a, 3 * a + 5, 0), Split { head: 0, body: 3 * a, tail: 5 });
        assert_eq!(Split::new(a + 10, 3 * a, 10), Split { head: a - 10, body: 2 * a, tail: 10 });
        assert_eq!(Split::new(a, 3 * a, 10), Split { head: 3 * a, body: 0, tail: 0 });
        assert_eq!(Split::new(a - 10, 5, 10), Split { head: 5, body: 0, tail: 0 });
        assert_eq!(Split::new(a, 0, 0), Split { head: 0, body: 0, tail: 0 });
        assert_eq!(Split::new(a, 100, 0), Split { head: 0, body: 0, tail: 100 });
    }

    #[test]
    fn fault_plan_counts_and_fails_once() {
        let p = FaultPlan::fail_read(2, libc::EIO).and_fail_write(1, libc::ENOSPC);
        assert!(p.on_read().is_none());
        assert_eq!(p.on_read().unwrap().raw_os_error(), Some(libc::EIO));
        assert!(p.on_read().is_none());
        assert_eq!(p.on_write().unwrap().raw_os_error(), Some(libc::ENOSPC));
        assert_eq!((p.reads(), p.writes()), (3, 1));
        let p = FaultPlan::fail_sync(2, libc::EIO);
        assert!(p.on_sync().is_none() && p.on_write().is_none());
        assert_eq!(p.on_sync().unwrap().raw_os_error(), Some(libc::EIO));
        assert_eq!(p.syncs(), 2);
    }
}

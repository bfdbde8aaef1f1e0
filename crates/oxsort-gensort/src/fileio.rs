//! Every file syscall of oxsort-gensort lives here, so the backend can be swapped for
//! `oxsort-io` (aligned buffers, O_DIRECT) without touching the algorithms.
//!
//! Files are accessed with positional reads and writes (`pread`/`pwrite`) so several worker
//! threads can share one descriptor; non-seekable files (pipes, terminals, character devices)
//! fall back to sequential access from one thread.
//!
//! Regular output files are written with `O_DIRECT` when the file system allows it: buffered
//! writes of 1 GB measured 2.0 s (page-cache copy plus dirty-page throttling) against 0.48 s
//! for `dd oflag=direct` on the reference machine. Direct writes need 4096-aligned memory,
//! offsets and lengths: buffers come from [`AlignedBuf`], task offsets are multiples of
//! [`IO_ALIGN`], and the unaligned tail of the last task goes through a second, buffered
//! descriptor. When `O_DIRECT` is refused (tmpfs), every write is buffered. Reads of regular
//! files go the same way (direct for aligned ranges, buffered for the tail).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::tuning::IO_ALIGN;
use crate::Error;

/// A zeroed byte buffer whose start is aligned to [`IO_ALIGN`] (what `O_DIRECT` needs).
pub(crate) struct AlignedBuf {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// A buffer of `len` bytes.
    pub(crate) fn new(len: usize) -> AlignedBuf {
        let storage = vec![0u8; len + IO_ALIGN];
        let start = storage.as_ptr().align_offset(IO_ALIGN);
        assert!(start < IO_ALIGN, "a byte pointer can always be aligned");
        AlignedBuf { storage, start, len }
    }

    /// The aligned bytes.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// Where generated records go.
pub(crate) enum Output {
    /// The exact name `/dev/null`: nothing is written (gensort's no-I/O checksum mode).
    Null,
    /// A regular file: written at offsets from many threads.
    Positional(OutFile),
    /// Anything else (pipe, tty, device): written in order from one thread.
    Stream(OutFile),
}

/// An open output file.
pub(crate) struct OutFile {
    /// Buffered descriptor: streams, unaligned tails, and everything when `direct` is `None`.
    file: File,
    /// The same file opened with `O_DIRECT`, when the file system supports it.
    direct: Option<File>,
    path: PathBuf,
}

impl Output {
    /// Creates (or truncates) `path` for writing, with mode 0666 minus the umask.
    pub(crate) fn create(path: &Path) -> Result<Output, Error> {
        if path.as_os_str() == "/dev/null" {
            return Ok(Output::Null);
        }
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|source| Error::Open { path: path.to_path_buf(), source })?;
        let regular = file
            .metadata()
            .map_err(|source| Error::Io { path: path.to_path_buf(), source })?
            .file_type()
            .is_file();
        if !regular {
            return Ok(Output::Stream(OutFile { file, direct: None, path: path.to_path_buf() }));
        }
        // Opening again without O_TRUNC: the file was just truncated by the first open.
        let direct = OpenOptions::new().write(true).custom_flags(libc::O_DIRECT).open(path).ok();
        Ok(Output::Positional(OutFile { file, direct, path: path.to_path_buf() }))
    }
}

impl OutFile {
    /// Writes all of `buf` at byte `offset`: the aligned part directly when possible, the rest
    /// buffered.
    pub(crate) fn write_at(&self, buf: &[u8], offset: u64) -> Result<(), Error> {
        let mut done = 0;
        if let Some(direct) = &self.direct {
            let aligned = buf.len() - buf.len() % IO_ALIGN;
            let ok = offset % IO_ALIGN as u64 == 0 && buf.as_ptr().align_offset(IO_ALIGN) == 0;
            if ok && aligned > 0 {
                match direct.write_all_at(&buf[..aligned], offset) {
                    Ok(()) => done = aligned,
                    // Some file systems accept O_DIRECT at open time and refuse the write.
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
                    Err(e) => return Err(self.err(e)),
                }
            }
        }
        self.file.write_all_at(&buf[done..], offset + done as u64).map_err(|e| self.err(e))
    }

    /// Writes all of `buf` at the current position (streams).
    pub(crate) fn write_next(&mut self, buf: &[u8]) -> Result<(), Error> {
        (&self.file).write_all(buf).map_err(|source| Error::Io { path: self.path.clone(), source })
    }

    fn err(&self, source: io::Error) -> Error {
        Error::Io { path: self.path.clone(), source }
    }
}

/// An open input file.
pub(crate) struct InFile {
    file: File,
    /// The same file opened with `O_DIRECT` (regular files, when the file system allows it).
    direct: Option<File>,
    path: PathBuf,
    /// The length, for regular files; `None` for pipes and devices (read sequentially).
    len: Option<u64>,
}

impl InFile {
    /// Opens `path` for reading.
    pub(crate) fn open(path: &Path) -> Result<InFile, Error> {
        let file =
            File::open(path).map_err(|source| Error::Open { path: path.to_path_buf(), source })?;
        let meta =
            file.metadata().map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        let ft = meta.file_type();
        let len = ft.is_file().then_some(meta.len());
        let direct = if len.is_some() {
            OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(path).ok()
        } else {
            None
        };
        Ok(InFile { file, direct, path: path.to_path_buf(), len })
    }

    /// The file length if the file is regular (positional reads allowed).
    pub(crate) fn len(&self) -> Option<u64> {
        self.len
    }

    /// Fills `buf` from byte `offset` (the caller stays inside the length it was given): the
    /// aligned part directly when possible, the rest buffered.
    pub(crate) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), Error> {
        let mut done = 0;
        if let Some(direct) = &self.direct {
            let aligned = buf.len() - buf.len() % IO_ALIGN;
            let ok = offset % IO_ALIGN as u64 == 0 && buf.as_ptr().align_offset(IO_ALIGN) == 0;
            if ok && aligned > 0 {
                match direct.read_exact_at(&mut buf[..aligned], offset) {
                    Ok(()) => done = aligned,
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
                    Err(source) => return Err(Error::Io { path: self.path.clone(), source }),
                }
            }
        }
        self.file
            .read_exact_at(&mut buf[done..], offset + done as u64)
            .map_err(|source| Error::Io { path: self.path.clone(), source })
    }

    /// Reads sequentially until `buf` is full or the end of input; returns the bytes read.
    pub(crate) fn read_next(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        let mut filled = 0;
        while filled < buf.len() {
            match (&self.file).read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Err(Error::Io { path: self.path.clone(), source }),
            }
        }
        Ok(filled)
    }

    /// Reads the whole (small) input.
    pub(crate) fn read_all(&mut self) -> Result<Vec<u8>, Error> {
        let mut v = Vec::new();
        (&self.file)
            .read_to_end(&mut v)
            .map_err(|source| Error::Io { path: self.path.clone(), source })?;
        Ok(v)
    }
}

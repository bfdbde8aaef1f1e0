//! Every file syscall of oxsort-gensort lives here, so the backend can be swapped for
//! `oxsort-io` (aligned buffers, O_DIRECT) without touching the algorithms.
//!
//! Files are accessed with positional reads and writes (`pread`/`pwrite`) so several worker
//! threads can share one descriptor; non-seekable files (pipes, terminals, character devices)
//! fall back to sequential access from one thread.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::Error;

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
    file: File,
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
        let out = OutFile { file, path: path.to_path_buf() };
        Ok(if regular { Output::Positional(out) } else { Output::Stream(out) })
    }
}

impl OutFile {
    /// Writes all of `buf` at byte `offset`.
    pub(crate) fn write_at(&self, buf: &[u8], offset: u64) -> Result<(), Error> {
        self.file.write_all_at(buf, offset).map_err(|e| self.err(e))
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
        Ok(InFile { file, path: path.to_path_buf(), len })
    }

    /// The file length if the file is regular (positional reads allowed).
    pub(crate) fn len(&self) -> Option<u64> {
        self.len
    }

    /// Fills `buf` from byte `offset` (the caller stays inside the length it was given).
    pub(crate) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), Error> {
        self.file
            .read_exact_at(buf, offset)
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

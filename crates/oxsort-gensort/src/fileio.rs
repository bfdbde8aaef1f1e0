//! Every file access of oxsort-gensort, on top of `oxsort-io`, so the algorithms never see a
//! descriptor.
//!
//! - Output: regular files are written at offsets from many threads with
//!   [`DirectFile::write_at`] (`O_DIRECT` for the aligned part when the filesystem allows:
//!   buffered writes of 1 GB measured 2.0 s, page-cache copy plus dirty-page throttling,
//!   against 0.48 s for `dd oflag=direct`; the unaligned tail and tmpfs go buffered). Anything
//!   else (pipe, tty, `/dev/stdout` on a pipe) is written in order as a stream; the exact name
//!   `/dev/null` writes nothing.
//! - Input: [`oxsort_io::Reader`] pipelines (read-ahead, several transfers in flight), see
//!   `parallel.rs`.
//! - Errors: [`IoError`]s become [`Error::Open`] / [`Error::Io`], whose text is the original
//!   tools' `NAME: strerror`.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::sync::Arc;

use oxsort_io::{DirectFile, IoError, IoOptions};

use crate::Error;

/// How oxsort-gensort drives its files: `O_DIRECT` and io_uring where available, with
/// oxsort-io's silent fallbacks (buffered on tmpfs, threads without io_uring).
pub(crate) fn io_options() -> IoOptions {
    IoOptions::default()
}

/// The crate's error for an oxsort-io error: opening failures stay [`Error::Open`], everything
/// else is [`Error::Io`]; both print `NAME: strerror` with the name as the user gave it.
pub(crate) fn from_io(e: IoError) -> Error {
    match e {
        IoError::Open { path, source } => Error::Open { path, source },
        IoError::Read { path, source, .. }
        | IoError::Write { path, source, .. }
        | IoError::NoSpace { path, source, .. }
        | IoError::Other { path, source, .. } => Error::Io { path, source },
        // A kind added to oxsort-io later: keep the errno (strerror prints from it).
        other => {
            let source = match other.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(other.io_error().kind(), other.io_error().to_string()),
            };
            Error::Io { path: other.path().to_path_buf(), source }
        }
    }
}

/// Where generated records go.
pub(crate) enum Output {
    /// The exact name `/dev/null`: nothing is written (gensort's no-I/O checksum mode).
    Null,
    /// A regular file: written at offsets from many threads.
    Positional(Arc<DirectFile>),
    /// Anything else (pipe, tty, device): written in order from one thread.
    Stream(Stream),
}

impl Output {
    /// Creates (or truncates) `path` for writing, with mode 0666 minus the umask.
    ///
    /// The first open is a plain write-only one, exactly like the original tools': a FIFO
    /// blocks until a reader comes and later gets `EPIPE` when it leaves (a read-write open, as
    /// [`DirectFile::create`] does, would keep the FIFO's read end alive), and a file the user
    /// may write but not read still works. A regular file is then reopened by
    /// [`DirectFile::create`] for direct writes; if that is refused, the first descriptor is
    /// used buffered.
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
        let opts = io_options();
        if !regular {
            return Ok(Output::Stream(Stream::new(file, path)));
        }
        // The file was just truncated by the first open, so truncating again loses nothing.
        let direct = DirectFile::create(path, &opts)
            .unwrap_or_else(|_| DirectFile::from_std(file, path.to_path_buf(), &opts));
        Ok(Output::Positional(Arc::new(direct)))
    }
}

/// A non-seekable output written front to back.
pub(crate) struct Stream {
    file: DirectFile,
    pos: u64,
}

impl Stream {
    fn new(file: File, path: &Path) -> Stream {
        Stream { file: DirectFile::from_std(file, path.to_path_buf(), &io_options()), pos: 0 }
    }

    /// Writes all of `buf` after what was written before.
    pub(crate) fn write_next(&mut self, buf: &[u8]) -> Result<(), Error> {
        self.file.write_at(buf, self.pos).map_err(from_io)?;
        self.pos += buf.len() as u64;
        Ok(())
    }
}

/// Writes `buf` at `offset` of a positional output.
pub(crate) fn write_at(file: &DirectFile, buf: &[u8], offset: u64) -> Result<(), Error> {
    file.write_at(buf, offset).map_err(from_io)
}

/// Opens `path` for reading (`O_DIRECT` for regular files where allowed).
pub(crate) fn open_input(path: &Path) -> Result<Arc<DirectFile>, Error> {
    DirectFile::open(path, &io_options()).map(Arc::new).map_err(from_io)
}

/// Reads the whole (small) input, from any kind of file.
pub(crate) fn read_all(file: &DirectFile) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read_at(&mut buf, out.len() as u64).map_err(from_io)?;
        out.extend_from_slice(&buf[..n]);
        if n < buf.len() {
            return Ok(out);
        }
    }
}

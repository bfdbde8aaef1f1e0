//! The error type of oxsort-io.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// An I/O failure, naming the file (and the offset where one applies) and keeping the
/// underlying [`io::Error`] as its source.
///
/// A full disk is reported as [`IoError::NoSpace`] so callers can tell the user to free space or
/// pick another `--temp-dir` instead of printing a generic I/O error.
///
/// ```
/// # use oxsort_io::IoError;
/// let e = IoError::read("/x/in.dat", 4096, std::io::Error::from_raw_os_error(libc::EIO));
/// assert_eq!(e.to_string(), "reading /x/in.dat at offset 4096: Input/output error");
/// ```
#[non_exhaustive]
#[derive(thiserror::Error, Debug)]
pub enum IoError {
    /// Opening or creating a file or directory failed.
    #[error("opening {}: {}", path.display(), OsMsg(source))]
    Open {
        /// The file that could not be opened.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A read failed.
    #[error("reading {} at offset {offset}: {}", path.display(), OsMsg(source))]
    Read {
        /// The file being read.
        path: PathBuf,
        /// Byte offset of the failed read.
        offset: u64,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A write failed (for any reason but a full device, see [`IoError::NoSpace`]).
    #[error("writing {} at offset {offset}: {}", path.display(), OsMsg(source))]
    Write {
        /// The file being written.
        path: PathBuf,
        /// Byte offset of the failed write.
        offset: u64,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The device (or the user's quota) is full: `ENOSPC` or `EDQUOT` from a write, a
    /// preallocation or a file creation.
    #[error("no space left on device writing {} at offset {offset}", path.display())]
    NoSpace {
        /// The file being written or preallocated.
        path: PathBuf,
        /// Byte offset of the failed write (the requested length for a preallocation).
        offset: u64,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// Any other operation on a path failed; `op` says which ("syncing", "removing", ...).
    #[error("{op} {}: {}", path.display(), OsMsg(source))]
    Other {
        /// What was being done, as a present participle: "syncing", "renaming", ...
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

impl IoError {
    /// A failed read of `path` at `offset`.
    pub fn read(path: impl Into<PathBuf>, offset: u64, source: io::Error) -> Self {
        IoError::Read { path: path.into(), offset, source }
    }

    /// A failed write of `path` at `offset`; `ENOSPC`/`EDQUOT` become [`IoError::NoSpace`].
    pub fn write(path: impl Into<PathBuf>, offset: u64, source: io::Error) -> Self {
        if is_no_space(&source) {
            IoError::NoSpace { path: path.into(), offset, source }
        } else {
            IoError::Write { path: path.into(), offset, source }
        }
    }

    /// A failed open/create of `path`; `ENOSPC`/`EDQUOT` become [`IoError::NoSpace`].
    pub fn open(path: impl Into<PathBuf>, source: io::Error) -> Self {
        if is_no_space(&source) {
            IoError::NoSpace { path: path.into(), offset: 0, source }
        } else {
            IoError::Open { path: path.into(), source }
        }
    }

    /// Another failed operation `op` on `path`.
    pub fn other(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        IoError::Other { op, path: path.into(), source }
    }

    /// The file or directory the error is about.
    pub fn path(&self) -> &Path {
        match self {
            IoError::Open { path, .. }
            | IoError::Read { path, .. }
            | IoError::Write { path, .. }
            | IoError::NoSpace { path, .. }
            | IoError::Other { path, .. } => path,
        }
    }

    /// The underlying operating system error.
    pub fn io_error(&self) -> &io::Error {
        match self {
            IoError::Open { source, .. }
            | IoError::Read { source, .. }
            | IoError::Write { source, .. }
            | IoError::NoSpace { source, .. }
            | IoError::Other { source, .. } => source,
        }
    }

    /// The errno, when the error came from the operating system.
    pub fn raw_os_error(&self) -> Option<i32> {
        self.io_error().raw_os_error()
    }

    /// True for [`IoError::NoSpace`].
    pub fn is_no_space(&self) -> bool {
        matches!(self, IoError::NoSpace { .. })
    }
}

fn is_no_space(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// Displays an [`io::Error`] without the " (os error N)" suffix std appends, so messages read
/// "reading x at offset 0: Input/output error".
struct OsMsg<'a>(&'a io::Error);

impl fmt::Display for OsMsg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&without_os_error(&self.0.to_string()))
    }
}

/// The system's words for an I/O error, without the " (os error N)" std appends:
/// "No such file or directory".
///
/// ```
/// let e = std::io::Error::from_raw_os_error(libc::ENOENT);
/// assert_eq!(oxsort_io::os_message(&e), "No such file or directory");
/// ```
pub fn os_message(e: &io::Error) -> String {
    without_os_error(&e.to_string())
}

/// `text` with every " (os error N)" std wrote into it taken out (a message may hold several,
/// one per cause).
pub fn without_os_error(text: &str) -> String {
    const MARK: &str = " (os error ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(MARK) {
        let after = &rest[i + MARK.len()..];
        let digits = after.bytes().take_while(|b| b.is_ascii_digit() || *b == b'-').count();
        if digits > 0 && after[digits..].starts_with(')') {
            out.push_str(&rest[..i]);
            rest = &after[digits + 1..];
        } else {
            out.push_str(&rest[..i + MARK.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_path_offset_and_strips_errno_suffix() {
        let e = IoError::write("/t/out", 8192, io::Error::from_raw_os_error(libc::EIO));
        assert_eq!(e.to_string(), "writing /t/out at offset 8192: Input/output error");
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
        let e = IoError::other("syncing", "/t/out", io::Error::other("custom"));
        assert_eq!(e.to_string(), "syncing /t/out: custom");
    }

    #[test]
    fn os_error_numbers_are_taken_out_wherever_they_are() {
        assert_eq!(
            without_os_error(
                "a: No such file or directory (os error 2): b: Is a directory (os error 21)"
            ),
            "a: No such file or directory: b: Is a directory"
        );
        assert_eq!(without_os_error("kept (os error x)"), "kept (os error x)");
    }

    #[test]
    fn enospc_and_edquot_are_no_space() {
        for errno in [libc::ENOSPC, libc::EDQUOT] {
            let e = IoError::write("/t/x", 1, io::Error::from_raw_os_error(errno));
            assert!(e.is_no_space(), "{e}");
            assert_eq!(e.path(), Path::new("/t/x"));
        }
        assert!(!IoError::write("/t/x", 1, io::Error::from_raw_os_error(libc::EIO)).is_no_space());
        assert!(IoError::open("/t/x", io::Error::from_raw_os_error(libc::ENOSPC)).is_no_space());
    }
}

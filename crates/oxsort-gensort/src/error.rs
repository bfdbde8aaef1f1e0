//! The error type of oxsort-gensort.

use std::io;
use std::path::PathBuf;

/// Errors of generation and validation. The `Display` text of the validation errors is exactly
/// what valsort 1.5 prints, so front ends print `{error}` and exit with status 1.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be opened or created. Displays as `NAME: strerror`, like C's `perror`.
    #[error("{}: {}", path.display(), strerror(source))]
    Open {
        /// The file name as given.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// Reading or writing an open file failed.
    #[error("{}: {}", path.display(), strerror(source))]
    Io {
        /// The file name as given (`-` for a stream without a name).
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The input holds no record (or no summary).
    #[error("there must be at least one record to be validated")]
    Empty,
    /// The input length is not a multiple of 100 bytes. The whole records before the partial one
    /// were validated; `first_unordered` is what valsort has printed about them already.
    #[error("partial record found at end")]
    PartialRecord {
        /// Index of the first unordered record among the whole records, if any.
        first_unordered: Option<u128>,
    },
    /// A summary file's length is not a multiple of 280 bytes. `first_unordered` is what valsort
    /// has printed about the whole summaries before it.
    #[error("partial partition summary found at end")]
    PartialSummary {
        /// Index of the first unordered record among the merged whole summaries, if any.
        first_unordered: Option<u128>,
    },
}

impl Error {
    /// The "First unordered record" index valsort prints before this error, if any.
    pub fn first_unordered(&self) -> Option<u128> {
        match self {
            Error::PartialRecord { first_unordered }
            | Error::PartialSummary { first_unordered } => *first_unordered,
            _ => None,
        }
    }
}

/// A `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The C library's text for an I/O error, as `perror` prints it: `No such file or directory`,
/// without the ` (os error 2)` that `std::io::Error` appends.
pub fn strerror(err: &io::Error) -> String {
    let text = match err.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code).to_string(),
        None => return err.to_string(),
    };
    match text.rfind(" (os error ") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perror_text() {
        let e =
            Error::Open { path: "nonexistent.dat".into(), source: io::Error::from_raw_os_error(2) };
        assert_eq!(e.to_string(), "nonexistent.dat: No such file or directory");
    }
}

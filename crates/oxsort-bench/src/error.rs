//! The error type of this crate.

use std::path::PathBuf;

/// What can go wrong while measuring or writing a report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A file could not be read, written or created.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file operation of the I/O layer failed (it names its file).
    #[error(transparent)]
    Direct(#[from] oxsort_io::IoError),
    /// An energy meter command failed or printed no number.
    #[error("--meter command `{command}`: {problem}")]
    Meter {
        /// The command as given.
        command: String,
        /// What was wrong with it.
        problem: String,
    },
    /// A category argument is out of range (`--price 0`, `--seconds 1`, ...).
    #[error("{0}")]
    Invalid(String),
}

impl ReportError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ReportError::Io { path: path.into(), source }
    }
}

/// `Result` with [`ReportError`].
pub type Result<T> = std::result::Result<T, ReportError>;

//! The error type of this crate.
//!
//! Messages name the concept ("price 0: ..."), never a door's flag: a door that wants its own
//! words matches [`BenchError::Setting`] and [`BenchError::Meter`] and says them its way.

use std::fmt;
use std::path::PathBuf;

/// What can go wrong while measuring, running a category or writing a report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A file could not be read, written or created.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A directory could not be made: what it was for, and the cause.
    #[error("{doing}")]
    Create {
        /// What was being done ("creating the report directory DIR").
        doing: String,
        /// The cause (a system or I/O-layer error).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file operation of the I/O layer failed (it names its file).
    #[error(transparent)]
    Direct(#[from] oxsort_io::IoError),
    /// The engine refused a configuration or could not plan (its message says why).
    #[error(transparent)]
    Engine(#[from] oxsort_engine::EngineError),
    /// A sort failed.
    #[error("sorting {}", input.display())]
    Sort {
        /// The input sorted.
        input: PathBuf,
        /// The cause.
        #[source]
        source: oxsort_engine::EngineError,
    },
    /// Generating or validating records failed.
    #[error("{doing}")]
    Records {
        /// What was being done ("generating FILE", "validating FILE").
        doing: String,
        /// The cause.
        #[source]
        source: oxsort_gensort::Error,
    },
    /// A sort's output is not the sorted input.
    #[error(
        "valsort of {} failed: {records} records, checksum {checksum} (input: {expected_records} records, checksum {expected})",
        output.display()
    )]
    NotSorted {
        /// The output validated.
        output: PathBuf,
        /// Records found in it.
        records: u128,
        /// Their checksum.
        checksum: oxsort_gensort::Checksum,
        /// Records generated.
        expected_records: u64,
        /// The input's checksum.
        expected: oxsort_gensort::Checksum,
    },
    /// An energy meter command failed or printed no number.
    #[error("meter command `{command}`: {problem}")]
    Meter {
        /// The command as given.
        command: String,
        /// What was wrong with it.
        problem: String,
    },
    /// A category's setting is out of range (a price of 0, a budget of 1 s, ...).
    #[error("{setting} {value}: {problem}")]
    Setting {
        /// Which setting.
        setting: Setting,
        /// Its value as given.
        value: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The run cannot go on (too little disk, nothing sorted within the budget, ...).
    #[error("{0}")]
    Invalid(String),
}

/// A setting of a category run, for [`BenchError::Setting`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Setting {
    /// MinuteSort's time budget, seconds.
    Seconds,
    /// PennySort's machine price, US dollars.
    Price,
    /// The records a category sorts.
    Records,
    /// CloudSort's price of a node-hour, US dollars.
    NodePrice,
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Setting::Seconds => "time budget",
            Setting::Price => "price",
            Setting::Records => "records",
            Setting::NodePrice => "node price",
        })
    }
}

impl BenchError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        BenchError::Io { path: path.into(), source }
    }

    /// A [`BenchError::Setting`].
    pub(crate) fn setting(setting: Setting, value: impl fmt::Display, problem: String) -> Self {
        BenchError::Setting { setting, value: value.to_string(), problem }
    }
}

/// `Result` with [`BenchError`].
pub type Result<T> = std::result::Result<T, BenchError>;

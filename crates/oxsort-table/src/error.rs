//! [`TableError`]: what can go wrong sorting a table, each naming the file and the problem.

use std::path::PathBuf;

/// An error of a table sort. Every error comes with nothing under the output's name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// A sort column as written cannot be read (`name:desc:nulls_first`).
    #[error("sort column '{spec}': {why}")]
    BadColumnSpec {
        /// The column as written.
        spec: String,
        /// What is wrong with it.
        why: String,
    },
    /// A column's type as written cannot be read (`NAME=TYPE`).
    #[error("column type '{spec}': {why}")]
    BadColumnType {
        /// The column's type as written.
        spec: String,
        /// What is wrong with it.
        why: String,
    },
    /// No sort column was given.
    #[error("a table sort needs at least one sort column")]
    NoColumns,
    /// No input table was given.
    #[error("a table sort needs at least one input table")]
    NoInput,
    /// The format of a file cannot be told from its name, or a format's name is unknown.
    #[error("{path}: {why}")]
    UnknownFormat {
        /// The file (or the format's name, as given).
        path: PathBuf,
        /// What is unknown.
        why: String,
    },
    /// A sort column that is not in the schema.
    #[error("{path}: no column '{name}'; its columns are: {columns}")]
    UnknownColumn {
        /// The input whose schema was searched.
        path: PathBuf,
        /// The column asked for.
        name: String,
        /// The schema's columns, comma-separated.
        columns: String,
    },
    /// A sort column of a type that has no order here.
    #[error(
        "{path}: column '{name}' is of type {data_type}, which cannot be a sort key (keys are \
         booleans, numbers, strings, binary, dates, times, timestamps, durations and decimals)"
    )]
    KeyType {
        /// The input.
        path: PathBuf,
        /// The column.
        name: String,
        /// Its Arrow type.
        data_type: String,
    },
    /// A column of a type the row format cannot carry.
    #[error("{path}: column '{name}' of type {data_type} cannot be carried through the sort")]
    ColumnType {
        /// The input.
        path: PathBuf,
        /// The column.
        name: String,
        /// Its Arrow type.
        data_type: String,
    },
    /// An input whose schema differs from the first input's.
    #[error("{path}: its schema differs from {first}'s: {difference}")]
    SchemaMismatch {
        /// The input that differs.
        path: PathBuf,
        /// The first input.
        first: PathBuf,
        /// The first difference found.
        difference: String,
    },
    /// An input that cannot be opened or read.
    #[error("{path}: {why}")]
    Read {
        /// The input.
        path: PathBuf,
        /// What went wrong.
        why: String,
    },
    /// A Parquet row group that cannot be decoded.
    #[error("{path}: row group {row_group}, column '{column}': {why}")]
    Corrupt {
        /// The input.
        path: PathBuf,
        /// The row group (0-based).
        row_group: usize,
        /// The column that fails to decode (`?` when no single column does).
        column: String,
        /// What the decoder said.
        why: String,
    },
    /// A row too long for the engine's records once encoded.
    #[error(
        "{path}: row {row} takes {bytes} bytes in the sort's row format, more than the \
         {max}-byte maximum of a record"
    )]
    RowTooLong {
        /// The input.
        path: PathBuf,
        /// The row (0-based, in this input).
        row: u64,
        /// Its encoded length.
        bytes: usize,
        /// The longest row allowed.
        max: usize,
    },
    /// The output cannot be written.
    #[error("{path}: {why}")]
    Write {
        /// The output.
        path: PathBuf,
        /// What went wrong.
        why: String,
    },
    /// The rows written are not the rows read, or not in order (a fault, never silent).
    #[error("{path}: the self-check failed: {why}")]
    Check {
        /// The output.
        path: PathBuf,
        /// What differs.
        why: String,
    },
    /// The engine's error.
    #[error(transparent)]
    Engine(#[from] oxsort_engine::EngineError),
    /// An I/O error with its path.
    #[error(transparent)]
    Io(#[from] oxsort_io::IoError),
}

/// The result of a table operation.
pub type Result<T> = std::result::Result<T, TableError>;

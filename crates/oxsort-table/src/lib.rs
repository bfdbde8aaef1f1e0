//! oxsort-table: tables bigger than memory (Parquet, Arrow IPC files and streams, CSV and TSV
//! with a header) sorted by column names on the oxsort engine, with its budget, spills,
//! temp directories and self-check, the schema kept.
//!
//! - [`SortColumn`]: a key by column name, `NAME[:asc|:desc][:nulls_first|:nulls_last]`
//!   (ascending, nulls last by default, as DuckDB orders them).
//! - [`TableSort`] says what to sort; [`sort_tables`] sorts it: rows are encoded
//!   (`arrow-row`) into records whose plain byte order is the stable sort order, sorted by the
//!   engine as RDW-prefixed records (spilled in its own run format when they do not fit), and
//!   decoded into batches written under a temporary name, renamed when whole and checked.
//! - [`TableFormat`]: the formats, told from file names or given.
//!
//! Keys: booleans, integers, floats (NaN after every number, `-0.0` equal to `0.0`), strings
//! and binary (byte order), dates, times, timestamps, durations, decimals; the sort is stable.
//!
//! ```no_run
//! use oxsort_table::{sort_tables, SortColumn, TableSort};
//! let req = TableSort {
//!     inputs: vec!["in.parquet".into()],
//!     output: "out.parquet".into(),
//!     by: SortColumn::parse_list("k1,k2:desc:nulls_first")?,
//!     input_format: None,
//!     output_format: None,
//!     threads: 0,
//!     types: Vec::new(),
//!     row_checksum: false,
//! };
//! let stats = sort_tables(&req, |b| b.memory(oxsort_table::engine_memory(512 << 20)))?;
//! println!("{} rows", stats.rows);
//! # Ok::<(), oxsort_table::TableError>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod check;
mod columns;
mod dict;
mod dirs;
mod error;
mod explain;
mod format;
mod long;
mod parquet_out;
mod quotes;
mod read;
mod rows;
mod sort;
pub mod tuning;
mod write;

pub use check::RowSum;
pub use columns::{check_distinct, ColumnType, SortColumn};
pub use dirs::expand as expand_dirs;
pub use error::{Result, TableError};
pub use explain::{explain_tables, TableExplain, TableInputPlan};
pub use format::TableFormat;
pub use sort::{engine_memory, sort_tables, TableSort, TableStats};

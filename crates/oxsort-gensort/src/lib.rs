//! gensort/valsort-compatible record generation, checksums and validation for oxsort.
//!
//! This crate reproduces the Sort Benchmark's `gensort` and `valsort` (version 1.5) byte for
//! byte and text for text, and gives the sort engine the pieces it reuses to check every sort:
//!
//! - [`rng`]: the 128-bit LCG with jump-ahead to any record number ([`rng::state`]).
//! - [`generate`]: any range of records, from any 128-bit start, into a caller buffer, in the
//!   four [`Kind`]s (binary, ascii, skewed binary, skewed ascii).
//! - [`Checksum`]: the order-independent sum of per-record CRC-32s that gensort `-c` and valsort
//!   print.
//! - [`Validator`]: streaming order/duplicate/checksum counting; it yields a [`Summary`], the
//!   280-byte partition summary of `valsort -o`, which [`Summary::merge`]s in partition order
//!   and prints valsort's text with [`Summary::report`].
//! - [`generate_file`] / [`generate_to_writer`] / [`validate_file`]: whole files on all cores.
//!
//! ```
//! use oxsort_gensort::{generate, Checksum, Kind, Validator};
//!
//! // Records 0..1000, as `gensort 1000 FILE` writes them.
//! let mut data = vec![0u8; 1000 * 100];
//! generate(Kind::Binary, 0, &mut data);
//! assert_eq!(Checksum::of(&data).to_string(), "1ea6370b955"); // gensort -c
//!
//! // Sort by whole record and validate, as valsort would.
//! let mut records: Vec<&[u8]> = data.chunks_exact(100).collect();
//! records.sort_unstable();
//! let mut v = Validator::new();
//! for r in &records {
//!     v.feed(r);
//! }
//! let summary = v.finish().unwrap();
//! assert!(summary.is_sorted());
//! assert_eq!(
//!     summary.report(),
//!     "Records: 1000\nChecksum: 1ea6370b955\nDuplicate keys: 0\nSUCCESS - all records are in order\n"
//! );
//! ```
#![deny(missing_docs)]

mod checksum;
mod error;
mod fileio;
mod parallel;
mod record;
pub mod rng;
mod summary;
pub mod tuning;
mod validate;

pub use checksum::{record_crc, Checksum};
pub use error::{strerror, Error, Result};
pub use parallel::{
    effective_threads, generate_file, generate_file_without_checksum, generate_to_writer,
    validate_file, validate_summaries_file, write_summary_file, Progress,
};
pub use record::{generate, skew_index, Kind};
pub use summary::{first_unordered_line, Summary, SUMMARY_LEN};
pub use validate::{validate_records, Validator};

/// Bytes per Sort Benchmark record.
pub const RECORD_LEN: usize = 100;
/// Bytes of the key at the start of each record.
pub const KEY_LEN: usize = 10;

/// The full valsort text for a failed validation: the `First unordered record` line valsort has
/// already printed when it met the error (if any), then the error message.
///
/// ```
/// use oxsort_gensort::{error_report, Error};
/// assert_eq!(error_report(&Error::Empty), "there must be at least one record to be validated\n");
/// ```
pub fn error_report(err: &Error) -> String {
    let mut out = String::new();
    if let Some(first) = err.first_unordered() {
        out.push_str(&first_unordered_line(first));
    }
    out.push_str(&format!("{err}\n"));
    out
}

//! Record layouts, sort keys and their front ends for oxsort.
//!
//! - [`RecordLayout`]: fixed-size records (the 100-byte benchmark record by default) or records
//!   ended by a byte (`\n`, NUL).
//! - [`KeySpec`]: the key, a list of [`KeyField`]s (position, [`FieldType`], direction).
//!   [`KeySpec::normalize`] turns a record's key into bytes whose plain byte order is the
//!   wanted order; [`KeySpec::fast_path`] tells the engine when raw key bytes already are.
//!
//! The crate does no I/O.
//!
//! ```
//! use oxsort_format::{FieldType, KeyField, KeySpec};
//!
//! let key = KeySpec::new(vec![KeyField::bytes(0, 3, FieldType::Zoned, true)]).unwrap();
//! assert!(key.compare(b"100", b"042").unwrap().is_lt(), "descending");
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod columns;
mod decimal;
mod error;
mod layout;
mod normalize;
mod spec;

pub use columns::{ColumnEnd, ColumnSpan};
pub use error::{KeyError, Location, ParseError, SpecError};
pub use layout::{RecordLayout, BENCHMARK_RECORD_SIZE, MAX_RECORD_SIZE};
pub use spec::{Endian, FastKey, FieldLoc, FieldType, KeyField, KeySpec, ShortFields};

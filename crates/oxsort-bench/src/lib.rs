//! The benchmark harness of oxsort: what a Sort Benchmark submission reports, measured, run
//! and written.
//!
//! - [`category`]: a category run by its rules ([`category::run`]): the size search, the
//!   sorts, valsort of every output, the floor, and the report.
//! - [`rules`]: the categories' rules as numbers: PennySort's budget, size steps, the JouleSort
//!   classes, the prediction of the largest input a budget sorts ([`rules::LinearModel`],
//!   [`rules::largest_within`]) and the GraySort/CloudSort scale-out model.
//! - [`search`]: the size search of MinuteSort and PennySort, its rules apart from the sorts
//!   ([`search::search_sizes`]).
//! - [`floor`]: the disk's own limit, deep direct reads and writes ([`floor::measure`]), and
//!   the verdict on a sort against it ([`floor::verdict`]).
//! - [`runs`]: repeated runs: the page cache dropped, medians, runs that disagree.
//! - [`timeline`]: a sampler thread recording I/O, CPU per kind of thread, memory and phase
//!   every 100 ms, from `/proc`, outside the sort's hot code.
//! - [`energy`]: RAPL, a meter command, or a labelled estimate.
//! - [`machine`]: CPU, memory, disks, file systems, kernel; the build's version and commit.
//! - [`report`] and [`svg`]: `report.json`, `report.md` and `report.html` with SVG plots.
//!
//! The crate sits above the engine and below the doors: it takes plain settings
//! ([`category::Settings`]), never a command line, and its errors ([`BenchError`]) name
//! concepts, not flags.
//!
//! ```
//! use oxsort_bench::rules::{largest_within, penny_budget_s, LinearModel};
//!
//! // A $490 machine: a penny buys 1930 s. At 1 s fixed cost and 1 ns per byte per pass,
//! // one pass throughout, the largest input that fits:
//! let budget = penny_budget_s(490.0)?;
//! let model = LinearModel { intercept_s: 1.0, slope_s_per_byte: 1e-9 };
//! let records = largest_within(&model, budget, u64::MAX / 1000, &|_| 1).unwrap();
//! assert!(model.predict(records * 100, 1) <= budget);
//! # Ok::<(), oxsort_bench::BenchError>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod category;
pub mod energy;
mod error;
pub mod floor;
pub mod machine;
pub mod report;
pub mod rules;
pub mod runs;
pub mod search;
pub mod svg;
pub mod timeline;

pub use error::{BenchError, Result, Setting};

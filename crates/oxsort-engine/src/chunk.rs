//! [`Chunk`] and [`Position`]: what the reader hands out, and where it stands. They sit
//! below both the reader (`source.rs`, `ChunkSource`) and the `SKIPREC`/`STOPAFT` window
//! (`window.rs`), which cuts chunks as they are read.

use std::sync::Arc;

use oxsort_io::AlignedBuf;

/// A chunk of whole records read from one input.
pub(crate) struct Chunk {
    pub(crate) buf: AlignedBuf,
    pub(crate) records: usize,
    /// The input it comes from.
    pub(crate) name: Arc<str>,
    /// Its first record's number in that input (0-based).
    pub(crate) first_record: u64,
    /// Delimited records: where each record starts, and the end (`records + 1` entries).
    pub(crate) offsets: Vec<u32>,
    /// Where the input stands after this chunk.
    pub(crate) end: Position,
}

/// A place in the concatenated inputs, between two records: which input, how many of its bytes
/// and records lie before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Position {
    /// The input's number (0-based, in command-line order).
    pub(crate) input: usize,
    /// Bytes of that input before this place.
    pub(crate) offset: u64,
    /// Records of that input before this place.
    pub(crate) record: u64,
}

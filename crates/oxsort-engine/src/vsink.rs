//! `OUTREC BUILD=(1,4,...)` on RDW-prefixed records: [`VarReformatSink`].
//!
//! ```text
//!  sorted bytes (in order, cut anywhere) ──> cut at RDWs ──> VarBuild ──> staging ──> sink
//!   |RDW|data...|RDW|da   ta|RDW|...          one record     RDW = new    aligned blocks
//!                                                            length
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use oxsort_format::{RecordLayout, Scratch, VarBuild};

use crate::error::{EngineError, Result};
use crate::sink::{Sink, Staging, Tally};
use crate::stats::FileStats;

/// Rebuilds each sorted RDW-prefixed record with `OUTREC`'s `BUILD` as it streams to the sink
/// it wraps (after the records' order and checksums are verified).
pub(crate) struct VarReformatSink {
    inner: Box<dyn Sink + Send>,
    build: Arc<VarBuild>,
    layout: RecordLayout,
    staging: Staging,
    /// Where the next byte written is expected.
    pos: u64,
    /// The start of a record whose rest comes with the next write.
    carry: Vec<u8>,
    /// One rebuilt record, and room for a short record padded.
    record: Vec<u8>,
    padded: Vec<u8>,
    scratch: Scratch,
    /// Records rebuilt so far (for error messages).
    records: u64,
    /// Bytes written, once finished.
    written: Option<u64>,
}

impl VarReformatSink {
    pub(crate) fn new(
        inner: Box<dyn Sink + Send>,
        build: Arc<VarBuild>,
        layout: RecordLayout,
        staging: usize,
    ) -> Self {
        VarReformatSink {
            inner,
            build,
            layout,
            staging: Staging::new(staging),
            pos: 0,
            carry: Vec::new(),
            record: Vec::new(),
            padded: Vec::new(),
            scratch: Scratch::default(),
            records: 0,
            written: None,
        }
    }

    fn one(&mut self, rec: &[u8]) -> Result<()> {
        self.records += 1;
        let records = self.records;
        self.build.apply(rec, &mut self.record, &mut self.padded, &mut self.scratch).map_err(
            |source| EngineError::Key {
                path: PathBuf::from("OUTREC output"),
                record: records,
                source,
            },
        )?;
        self.staging.push(self.inner.as_mut(), &self.record)
    }
}

impl Sink for VarReformatSink {
    fn write(&mut self, offset: u64, mut data: &[u8]) -> Result<()> {
        if offset != self.pos {
            return Err(EngineError::Internal(format!(
                "OUTREC input written out of order: {offset} after {}",
                self.pos
            )));
        }
        self.pos += data.len() as u64;
        if !self.carry.is_empty() {
            let take = self.layout.bytes_to_complete(&self.carry, data);
            self.carry.extend_from_slice(&data[..take]);
            data = &data[take..];
            if !self.layout.is_whole(&self.carry) {
                return Ok(());
            }
            let rec = std::mem::take(&mut self.carry);
            self.one(&rec)?;
        }
        let end = self.layout.whole_end(data);
        for rec in self.layout.records(&data[..end]) {
            self.one(rec)?;
        }
        self.carry.extend_from_slice(&data[end..]);
        Ok(())
    }

    fn stats(&self) -> FileStats {
        self.inner.stats()
    }

    fn finish(&mut self) -> Result<()> {
        if !self.carry.is_empty() {
            return Err(EngineError::Internal(format!(
                "OUTREC input ends inside a record ({} bytes left)",
                self.carry.len()
            )));
        }
        self.written = Some(self.staging.finish(self.inner.as_mut())?);
        self.inner.finish()
    }

    fn tally(&self) -> Tally {
        Tally { bytes: self.written, ..self.inner.tally() }
    }
}

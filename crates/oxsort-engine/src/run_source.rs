//! What the merge reads: a sorted input, record by record. The spill room's runs
//! ([`RunReader`]) are one kind; the kept load (`crate::load_run`) and the caller's sorted files
//! (`crate::sorted`) are others.

use crate::error::Result;
use crate::spill::RunReader;
use crate::stats::FileStats;

/// A sorted input of the merge, read record by record.
pub(crate) trait RunSource {
    /// Makes sure a whole record is at hand; false when the source is exhausted.
    fn fill(&mut self) -> Result<bool>;
    /// The current record (after a successful [`RunSource::fill`]).
    fn record(&self) -> &[u8];
    /// Moves past the current record.
    fn advance(&mut self);
    /// What was read, for the statistics.
    fn stats(&self) -> FileStats;
}

impl RunSource for RunReader {
    #[inline]
    fn fill(&mut self) -> Result<bool> {
        RunReader::fill(self)
    }
    #[inline]
    fn record(&self) -> &[u8] {
        RunReader::record(self)
    }
    #[inline]
    fn advance(&mut self) {
        RunReader::advance(self)
    }
    fn stats(&self) -> FileStats {
        RunReader::stats(self)
    }
}

//! [`Feed`]: where an input's pieces come from: read into buffers ([`Reader`]), or mapped from
//! a file whose pages are in memory already ([`MappedReader`]: fixed records on tmpfs, where a
//! read would copy the file into fresh memory that costs more than the sort).

use oxsort_io::{AlignedBuf, IoError, IoStats, MappedReader, Reader};

/// One input's pieces, in file order.
pub(crate) enum Feed {
    Read(Reader),
    Mapped(MappedReader),
}

impl Feed {
    pub(crate) fn next_chunk(&mut self) -> Option<Result<oxsort_io::Chunk, IoError>> {
        match self {
            Feed::Read(r) => r.next_chunk(),
            Feed::Mapped(m) => m.next_chunk(),
        }
    }

    /// Gives a buffer back for reuse: a reader reads into it; a mapping needs none, and a
    /// mapped piece is unmapped.
    pub(crate) fn recycle(&mut self, buf: AlignedBuf) {
        match self {
            Feed::Read(r) if !buf.is_file_mapping() => r.recycle(buf),
            _ => drop(buf),
        }
    }

    pub(crate) fn spare_buffers(&self) -> usize {
        match self {
            Feed::Read(r) => r.spare_buffers(),
            Feed::Mapped(m) => m.spare_buffers(),
        }
    }

    pub(crate) fn stats(&self) -> IoStats {
        match self {
            Feed::Read(r) => r.stats(),
            Feed::Mapped(m) => m.stats(),
        }
    }
}

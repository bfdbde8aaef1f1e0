//! [`Feed`]: where an input's pieces come from: read into buffers ([`Reader`]), or mapped from
//! a file whose pages are in memory already or are read into the page cache ([`MappedReader`]:
//! a file on tmpfs, or any regular file in one pass, where a read would copy the file into
//! fresh memory that costs more than the sort); or read on from where a mapping stopped.

use oxsort_io::{AlignedBuf, IoError, IoStats, MappedReader, Reader};

/// One input's pieces, in file order.
pub(crate) enum Feed {
    Read(Reader),
    Mapped(MappedReader),
    /// Read from where a mapping stopped: the statistics of the pieces it mapped, and the
    /// reader of the rest.
    ReadOn(IoStats, Reader),
}

impl Feed {
    pub(crate) fn next_chunk(&mut self) -> Option<Result<oxsort_io::Chunk, IoError>> {
        match self {
            Feed::Read(r) | Feed::ReadOn(_, r) => r.next_chunk(),
            Feed::Mapped(m) => m.next_chunk(),
        }
    }

    /// Gives a buffer back for reuse: a reader reads into it; a mapping needs none, and a
    /// mapped piece is unmapped.
    pub(crate) fn recycle(&mut self, buf: AlignedBuf) {
        match self {
            Feed::Read(r) | Feed::ReadOn(_, r) if !buf.is_file_mapping() => r.recycle(buf),
            _ => drop(buf),
        }
    }

    pub(crate) fn spare_buffers(&self) -> usize {
        match self {
            Feed::Read(r) | Feed::ReadOn(_, r) => r.spare_buffers(),
            Feed::Mapped(m) => m.spare_buffers(),
        }
    }

    pub(crate) fn stats(&self) -> IoStats {
        match self {
            Feed::Read(r) => r.stats(),
            Feed::Mapped(m) => m.stats(),
            Feed::ReadOn(mapped, r) => {
                let read = r.stats();
                IoStats {
                    bytes: mapped.bytes + read.bytes,
                    transfers: mapped.transfers + read.transfers,
                    busy: mapped.busy + read.busy,
                    elapsed: mapped.elapsed + read.elapsed,
                }
            }
        }
    }
}

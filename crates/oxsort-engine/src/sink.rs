//! Where sorted bytes go: a file written at offsets (the output, a run) or standard output,
//! written in order.

use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use oxsort_format::{Added, GroupSum, KeyKind, ReformatProgram, Scratch, SortKey, SumField};
use oxsort_io::{AlignedBuf, DirectFile};

use crate::error::{EngineError, Result};
use crate::stats::{FileStats, IoMeter};

/// A destination for sorted bytes. Writers place `data` at the same offset within an aligned
/// buffer as `offset` has within an aligned block, so its aligned interior can go to the disk
/// directly ([`DirectFile`] splits the unaligned edges off by itself).
pub(crate) trait Sink: Send {
    /// Writes `data` at byte `offset` of the destination.
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()>;
    /// What was written, for the statistics.
    fn stats(&self) -> FileStats;
    /// Writes what the sink still holds (after the last `write`).
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
    /// What a stage that changes the records (`SUM`, `OUTREC`) did, once finished.
    fn tally(&self) -> Tally {
        Tally::default()
    }
    /// What a stage wrote to a file of its own (`SUM ...,XSUM`), for the statistics.
    fn side_files(&self) -> Vec<FileStats> {
        Vec::new()
    }
}

/// What the stages between the sorted records and the output did.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    /// Records added into the record before them (`SUM FIELDS=`), so not written.
    pub(crate) summed: u64,
    /// Records left unsummed because a sum would overflow.
    pub(crate) overflows: u64,
    /// Bytes written to the output, when a stage changed them.
    pub(crate) bytes: Option<u64>,
    /// `XSUM`: what was written to the second output (the records `summed` away, as read).
    pub(crate) xsum: Option<XsumTally>,
}

/// What `SUM ...,XSUM` wrote, for the sort to check against its verified records: each record
/// SUM saw either started a group (or was left unsummed) and stayed, or went to `SORTXSUM`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct XsumTally {
    /// Records written to `SORTXSUM`.
    pub(crate) records: u64,
    /// Bytes written to it.
    pub(crate) bytes: u64,
    /// The sum of their CRC32s.
    pub(crate) checksum: u128,
    /// Records that stayed (the first of each group, and those left unsummed).
    pub(crate) kept: u64,
    /// The sum of their CRC32s, as they were before any sum was added into them.
    pub(crate) kept_checksum: u128,
}

/// A file written at offsets.
pub(crate) struct FileSink {
    pub(crate) file: Arc<DirectFile>,
    meter: IoMeter,
    name: String,
    /// For a run file: the temp directory it is in (for the statistics).
    temp_dir: Option<String>,
}

impl FileSink {
    pub(crate) fn new(file: Arc<DirectFile>) -> Self {
        let name = file.path().display().to_string();
        FileSink { file, meter: IoMeter::default(), name, temp_dir: None }
    }

    /// A sink whose statistics name `name` (the output's final name, not its temporary one).
    pub(crate) fn named(file: Arc<DirectFile>, name: String) -> Self {
        FileSink { file, meter: IoMeter::default(), name, temp_dir: None }
    }

    /// A sink writing a run file in the temp directory `temp_dir`.
    pub(crate) fn temp(file: Arc<DirectFile>, temp_dir: String) -> Self {
        FileSink { temp_dir: Some(temp_dir), ..FileSink::new(file) }
    }
}

impl Sink for FileSink {
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        let t = Instant::now();
        self.file.write_at(data, offset)?;
        self.meter.add(data.len() as u64, t.elapsed());
        Ok(())
    }
    fn stats(&self) -> FileStats {
        let mut f = self.meter.file(self.name.clone(), "write", self.file.is_direct());
        f.temp_dir.clone_from(&self.temp_dir);
        f
    }
}

/// A stream written in order: standard output, or an output path that is a device, a FIFO or
/// a socket (nothing to truncate, preallocate or rename over: `/dev/null`, a pipe).
pub(crate) struct StreamSink {
    out: Box<dyn Write + Send>,
    name: PathBuf,
    pos: u64,
    meter: IoMeter,
}

impl StreamSink {
    /// Standard output.
    pub(crate) fn stdout() -> Self {
        StreamSink::new(Box::new(std::io::stdout()), PathBuf::from("-"))
    }

    /// The stream `out`, named `name` in messages.
    pub(crate) fn new(out: Box<dyn Write + Send>, name: PathBuf) -> Self {
        StreamSink { out, name, pos: 0, meter: IoMeter::default() }
    }
}

impl Sink for StreamSink {
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        if offset != self.pos {
            return Err(EngineError::Internal(format!(
                "{} written out of order: {offset} after {}",
                self.name.display(),
                self.pos
            )));
        }
        let t = Instant::now();
        self.out.write_all(data).and_then(|_| self.out.flush()).map_err(|e| {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                EngineError::OutputClosed { path: self.name.clone() }
            } else {
                EngineError::Output { path: self.name.clone(), why: os_message(&e) }
            }
        })?;
        self.pos += data.len() as u64;
        self.meter.add(data.len() as u64, t.elapsed());
        Ok(())
    }
    fn stats(&self) -> FileStats {
        self.meter.file(self.name.display().to_string(), "write", false)
    }
}

/// An OS error's text without the " (os error N)" the standard library appends.
pub(crate) fn os_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Bytes of output staged before a direct write when piece sizes are not known in advance
/// (duplicate removal, delimited records), at most: a multiple of the direct-I/O alignment,
/// as large as a transfer the disk runs at full speed with.
pub(crate) const STAGING_BYTES: u64 = 8 << 20;

/// Collects pieces of arbitrary length and writes them in aligned blocks at consecutive offsets.
pub(crate) struct Staging {
    buf: AlignedBuf,
    filled: usize,
    offset: u64,
}

impl Staging {
    /// A staging buffer of `size` bytes (a multiple of the direct-I/O alignment); only the
    /// bytes pushed into it are written.
    pub(crate) fn new(size: usize) -> Self {
        Staging { buf: AlignedBuf::unzeroed(size), filled: 0, offset: 0 }
    }

    /// Appends `data`, writing every full block.
    pub(crate) fn push(&mut self, sink: &mut dyn Sink, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let cap = self.buf.len();
            let take = data.len().min(cap - self.filled);
            self.buf[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled == cap {
                sink.write(self.offset, &self.buf[..cap])?;
                self.offset += cap as u64;
                self.filled = 0;
            }
        }
        Ok(())
    }

    /// Writes what is left; returns the total bytes written.
    pub(crate) fn finish(&mut self, sink: &mut dyn Sink) -> Result<u64> {
        if self.filled > 0 {
            sink.write(self.offset, &self.buf[..self.filled])?;
            self.offset += self.filled as u64;
            self.filled = 0;
        }
        Ok(self.offset)
    }
}

/// Cuts a byte stream written in order (at consecutive offsets, checked) into whole records of
/// `size` bytes, for the sinks that work record by record:
///
/// ```text
///   writes:   | A  B  c1 | c2  D  e1 | e2 |
///   records:    A  B  [c1+c2]    D  [e1+e2]     c1, e1 wait in `carry` for the next write
/// ```
#[derive(Default)]
pub(crate) struct RecordCutter {
    /// What the records are for, in error messages (`OUTREC`, `SUM`).
    what: &'static str,
    size: usize,
    /// Where the next byte is expected.
    pos: u64,
    /// The start of a record whose rest comes with the next write.
    carry: Vec<u8>,
}

/// A sink stage that works record by record: its writes go through its [`RecordCutter`] to
/// [`PerRecord::one`].
pub(crate) trait PerRecord {
    /// The stage's cutter.
    fn cutter(&mut self) -> &mut RecordCutter;
    /// Handles one whole record.
    fn one(&mut self, rec: &[u8]) -> Result<()>;
    /// Hands every record `data` (the bytes at `offset`) completes to [`PerRecord::one`].
    fn feed(&mut self, offset: u64, data: &[u8]) -> Result<()>
    where
        Self: Sized,
    {
        // The cutter is taken out while it hands records to `one`, which borrows the stage.
        let mut cut = std::mem::take(self.cutter());
        let done = cut.feed(offset, data, |rec| self.one(rec));
        *self.cutter() = cut;
        done
    }
}

impl RecordCutter {
    pub(crate) fn new(what: &'static str, size: usize) -> Self {
        RecordCutter { what, size: size.max(1), pos: 0, carry: Vec::new() }
    }

    /// Calls `each` on every record `data` (the bytes at `offset`) completes.
    pub(crate) fn feed(
        &mut self,
        offset: u64,
        mut data: &[u8],
        mut each: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        if offset != self.pos {
            return Err(EngineError::Internal(format!(
                "{} input written out of order: {offset} after {}",
                self.what, self.pos
            )));
        }
        self.pos += data.len() as u64;
        let r = self.size;
        if !self.carry.is_empty() {
            let take = (r - self.carry.len()).min(data.len());
            self.carry.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.carry.len() < r {
                return Ok(());
            }
            each(&self.carry)?;
            self.carry.clear();
        }
        let whole = data.len() / r * r;
        for rec in data[..whole].chunks_exact(r) {
            each(rec)?;
        }
        self.carry.extend_from_slice(&data[whole..]);
        Ok(())
    }

    /// Fails when the stream ended inside a record.
    pub(crate) fn finish(&self) -> Result<()> {
        if self.carry.is_empty() {
            return Ok(());
        }
        Err(EngineError::Internal(format!(
            "{} input ends inside a record ({} bytes left)",
            self.what,
            self.carry.len()
        )))
    }
}

/// `OUTREC`: reshapes the sorted records on their way to the sink it wraps. Bytes arrive in
/// order (at consecutive offsets) but not cut at record boundaries ([`RecordCutter`]). The
/// reshaped records are staged and written in aligned blocks.
pub(crate) struct ReformatSink {
    inner: Box<dyn Sink + Send>,
    program: Arc<ReformatProgram>,
    staging: Staging,
    cut: RecordCutter,
    /// One reshaped record.
    record: Vec<u8>,
    scratch: Scratch,
    /// Records reshaped so far (for error messages).
    records: u64,
    /// Bytes written, once finished.
    written: Option<u64>,
}

impl ReformatSink {
    pub(crate) fn new(
        inner: Box<dyn Sink + Send>,
        program: Arc<ReformatProgram>,
        staging: usize,
    ) -> Self {
        let record = vec![0u8; program.out_len()];
        let cut = RecordCutter::new("OUTREC", program.in_len());
        ReformatSink {
            inner,
            program,
            staging: Staging::new(staging),
            cut,
            record,
            scratch: Scratch::default(),
            records: 0,
            written: None,
        }
    }
}

impl PerRecord for ReformatSink {
    fn cutter(&mut self) -> &mut RecordCutter {
        &mut self.cut
    }
    fn one(&mut self, rec: &[u8]) -> Result<()> {
        self.records += 1;
        let records = self.records;
        self.program.apply(rec, &mut self.record, &mut self.scratch).map_err(|source| {
            EngineError::Key { path: PathBuf::from("OUTREC output"), record: records, source }
        })?;
        self.staging.push(self.inner.as_mut(), &self.record)
    }
}

impl Sink for ReformatSink {
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.feed(offset, data)
    }

    fn stats(&self) -> FileStats {
        self.inner.stats()
    }

    fn finish(&mut self) -> Result<()> {
        self.cut.finish()?;
        self.written = Some(self.staging.finish(self.inner.as_mut())?);
        self.inner.finish()
    }

    fn tally(&self) -> Tally {
        Tally { bytes: self.written, ..self.inner.tally() }
    }
}

/// `SUM FIELDS=(p,m,f,...)`: adds the fields of each group of equal keys into its first record
/// as the sorted records stream past (after their order and checksums are verified), and
/// writes the sums to the sink it wraps. Bytes arrive in order but not cut at records.
///
/// The group's sums stay decoded ([`GroupSum`]) until the group is written; `held` keeps the
/// group's first record as it was read, so a raw key is compared with its bytes.
pub(crate) struct SumSink {
    inner: Box<dyn Sink + Send>,
    keys: Arc<SortKey>,
    /// Where the key is in the record when it is the record's bytes (empty in copy mode, where
    /// every key is equal); `None` when whole keys are built and compared.
    raw_key: Option<Range<usize>>,
    sums: GroupSum,
    staging: Staging,
    cut: RecordCutter,
    /// The group's first record, and its key (when built).
    held: Vec<u8>,
    held_key: Vec<u8>,
    key_buf: Vec<u8>,
    records: u64,
    tally: Tally,
    /// `XSUM`: the records summed away are written here, unchanged, in the order they came.
    xsum: Option<(Box<dyn Sink + Send>, Staging)>,
}

impl SumSink {
    /// SUM of `fields` (none: `SUM FIELDS=NONE`, every record after a group's first summed
    /// away) writing to `inner`; with `xsum`, the records summed away are written there.
    pub(crate) fn new(
        inner: Box<dyn Sink + Send>,
        keys: Arc<SortKey>,
        fields: Vec<SumField>,
        staging: usize,
        xsum: Option<Box<dyn Sink + Send>>,
    ) -> Self {
        let cut = RecordCutter::new("SUM", keys.record_size().unwrap_or(1));
        let raw_key = match keys.kind() {
            KeyKind::Copy => Some(0..0),
            KeyKind::RawBytes { offset, len } => Some(*offset..offset + len),
            _ => None,
        };
        SumSink {
            inner,
            keys,
            raw_key,
            sums: GroupSum::new(&fields),
            staging: Staging::new(staging),
            cut,
            held: Vec::new(),
            held_key: Vec::new(),
            key_buf: Vec::new(),
            records: 0,
            tally: Tally { xsum: xsum.as_ref().map(|_| XsumTally::default()), ..Tally::default() },
            xsum: xsum.map(|f| (f, Staging::new(staging))),
        }
    }

    /// Whether `rec` has the held record's key (building its key into `key_buf` if keys are
    /// built).
    fn same_key(&mut self, rec: &[u8]) -> bool {
        match &self.raw_key {
            Some(r) => rec[r.clone()] == self.held[r.clone()],
            None => {
                self.keys.full_key(rec, &mut self.key_buf);
                self.key_buf == self.held_key
            }
        }
    }

    /// Writes the held record with the group's sums.
    fn write_held(&mut self) -> Result<()> {
        self.sums.store(&mut self.held);
        self.staging.push(self.inner.as_mut(), &self.held)
    }
}

impl PerRecord for SumSink {
    fn cutter(&mut self) -> &mut RecordCutter {
        &mut self.cut
    }
    fn one(&mut self, rec: &[u8]) -> Result<()> {
        self.records += 1;
        let records = self.records;
        let bad = |source| EngineError::Key {
            path: PathBuf::from("SUM FIELDS (sorted records)"),
            record: records,
            source,
        };
        if records > 1 {
            if self.same_key(rec) {
                match self.sums.add(rec).map_err(bad)? {
                    Added::Summed => {
                        self.tally.summed += 1;
                        if let (Some((file, staging)), Some(t)) =
                            (&mut self.xsum, &mut self.tally.xsum)
                        {
                            t.records += 1;
                            t.checksum += crate::verify::checksum_records(rec, rec.len());
                            staging.push(file.as_mut(), rec)?;
                        }
                        return Ok(());
                    }
                    Added::Overflow => self.tally.overflows += 1,
                }
            }
            self.write_held()?;
            if self.raw_key.is_none() {
                // `same_key` built this record's key (equal to the held one after an overflow).
                std::mem::swap(&mut self.held_key, &mut self.key_buf);
            }
        } else if self.raw_key.is_none() {
            self.keys.full_key(rec, &mut self.held_key);
        }
        if let Some(t) = &mut self.tally.xsum {
            t.kept += 1;
            t.kept_checksum += crate::verify::checksum_records(rec, rec.len());
        }
        self.sums.start(rec).map_err(bad)?;
        self.held.clear();
        self.held.extend_from_slice(rec);
        Ok(())
    }
}

impl Sink for SumSink {
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.feed(offset, data)
    }

    fn stats(&self) -> FileStats {
        self.inner.stats()
    }

    fn finish(&mut self) -> Result<()> {
        self.cut.finish()?;
        if self.records > 0 {
            self.write_held()?;
        }
        let bytes = self.staging.finish(self.inner.as_mut())?;
        self.inner.finish()?;
        if let (Some((file, staging)), Some(t)) = (&mut self.xsum, &mut self.tally.xsum) {
            t.bytes = staging.finish(file.as_mut())?;
            file.finish()?;
        }
        let inner = self.inner.tally();
        self.tally.bytes = Some(inner.bytes.unwrap_or(bytes));
        Ok(())
    }

    fn tally(&self) -> Tally {
        self.tally
    }

    fn side_files(&self) -> Vec<FileStats> {
        self.xsum.iter().map(|(file, _)| file.stats()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cutter_gives_whole_records_however_the_stream_is_cut() {
        let data: Vec<u8> = (0..7 * 50).map(|i| i as u8).collect();
        for cuts in [vec![1], vec![3, 11], vec![7], vec![6, 8, 13], vec![350]] {
            let mut cut = RecordCutter::new("TEST", 7);
            let (mut got, mut at, mut k) = (Vec::new(), 0usize, 0);
            while at < data.len() {
                let n = cuts[k % cuts.len()].min(data.len() - at);
                cut.feed(at as u64, &data[at..at + n], |r| {
                    got.push(r.to_vec());
                    Ok(())
                })
                .unwrap();
                (at, k) = (at + n, k + 1);
            }
            cut.finish().unwrap();
            let want: Vec<Vec<u8>> = data.chunks(7).map(<[u8]>::to_vec).collect();
            assert_eq!(got, want, "cut in pieces of {cuts:?}");
        }
        let mut cut = RecordCutter::new("TEST", 7);
        cut.feed(0, &data[..10], |_| Ok(())).unwrap();
        let e = cut.finish().unwrap_err().to_string();
        assert!(e.contains("TEST input ends inside a record (3 bytes left)"), "{e}");
        let e = cut.feed(11, &data[11..20], |_| Ok(())).unwrap_err().to_string();
        assert!(e.contains("out of order: 11 after 10"), "{e}");
    }
}

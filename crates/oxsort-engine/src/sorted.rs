//! The merge of the caller's sorted sources ([`merge_sources`]): files read with direct I/O
//! and byte streams, merged by the loser tree the sort's own merge uses, verified, and written
//! atomically to one output file.
//!
//! ```text
//!  sorted file ──Reader (direct, 1 ahead)──┐  order checked   loser tree     verify   write
//!  byte stream ──blocks read in order──────┼─ as each record ─> (key, source) ─> thread ─> thread ─> .NAME.oxsort-PID.tmp
//!   ...                                    ┘  is read           lower wins                  ─rename─> NAME
//! ```
//!
//! Sources are numbered in the order given and ties go to the lower number, so merging the
//! sorted pieces of a stable sort in their order gives that sort's output. Every source is
//! checked to be in key order as it is read ([`EngineError::Unordered`] names it and the
//! record); a source that ends inside a record is [`EngineError::Data`].

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use oxsort_format::SortKey;
use oxsort_io::{AtomicOutput, DirectFile, IoOptions, Reader};

use crate::error::{EngineError, Result};
use crate::merge::{merge_cursors, record_block, MergeOpts};
use crate::progress::Reporter;
use crate::run_source::RunSource;
use crate::sink::{FileSink, Sink};
use crate::spill::{Blocks, RunReader, StreamBlocks};
use crate::stats::{FileStats, Meters};

/// One sorted input of [`merge_sources`].
pub struct SortedSource {
    name: String,
    from: Feed,
}

/// Where a source's bytes come from.
enum Feed {
    File(PathBuf),
    Stream(Box<dyn Read + Send>),
}

impl SortedSource {
    /// A sorted file, read with direct I/O where the file system allows.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        SortedSource { name: path.display().to_string(), from: Feed::File(path) }
    }

    /// A sorted byte stream (a pipe, bytes fetched from elsewhere), read in order; its reads
    /// may cut records anywhere.
    pub fn stream(name: impl Into<String>, read: impl Read + Send + 'static) -> Self {
        SortedSource { name: name.into(), from: Feed::Stream(Box::new(read)) }
    }

    /// The same source, called `name` in messages and statistics.
    pub fn named(self, name: impl Into<String>) -> Self {
        SortedSource { name: name.into(), ..self }
    }
}

/// How [`merge_sources`] merges.
#[derive(Clone, Debug)]
pub struct MergeSourcesOptions {
    /// Bytes read from each source at a time (and written to the output at a time).
    pub block: usize,
    /// Keep only the first record of each key (the lowest source's).
    pub unique: bool,
    /// With `unique`: the key of a record already written elsewhere (an earlier partition);
    /// records of that key are dropped here too.
    pub after_key: Option<Vec<u8>>,
    /// How files are read and the output written.
    pub io: IoOptions,
}

impl Default for MergeSourcesOptions {
    fn default() -> Self {
        MergeSourcesOptions {
            block: crate::tuning::TRANSFER_TARGET,
            unique: false,
            after_key: None,
            io: IoOptions::default(),
        }
    }
}

/// What [`merge_sources`] wrote and dropped.
#[derive(Clone, Debug, Default)]
pub struct SourcesMerged {
    /// Records written.
    pub records: u64,
    /// Bytes written.
    pub bytes: u64,
    /// The sum of their CRC32s (valsort's checksum).
    pub checksum: u128,
    /// Records dropped as duplicates (`unique`).
    pub dropped: u64,
    /// The sum of their CRC32s.
    pub dropped_checksum: u128,
    /// The whole keys of the first and last records written, as compared (`None` when
    /// nothing was written).
    pub edge_keys: Option<(Vec<u8>, Vec<u8>)>,
    /// The sources read and the output written.
    pub files: Vec<FileStats>,
}

/// Merges `sources`, each sorted by `keys`, into the file `output`: written under a temporary
/// name beside it, verified (order and checksum of what is written) and renamed when
/// complete; on an error nothing is left under either name.
///
/// ```no_run
/// use oxsort_engine::{merge_sources, MergeSourcesOptions, SortKey, SortedSource};
/// let keys = SortKey::benchmark();
/// let sources = vec![SortedSource::file("a.sorted"), SortedSource::file("b.sorted")];
/// let m = merge_sources(sources, "out".as_ref(), &keys, &MergeSourcesOptions::default())?;
/// println!("{} records", m.records);
/// # Ok::<(), oxsort_engine::EngineError>(())
/// ```
pub fn merge_sources(
    sources: Vec<SortedSource>,
    output: &Path,
    keys: &SortKey,
    opts: &MergeSourcesOptions,
) -> Result<SourcesMerged> {
    let block = record_block(opts.block.max(1), keys.record_size().unwrap_or(1));
    let layout = keys.layout();
    let mut cursors = Vec::with_capacity(sources.len());
    for s in sources {
        let name = PathBuf::from(&s.name);
        let reader = match s.from {
            Feed::File(path) => {
                let file = Arc::new(DirectFile::open(&path, &opts.io)?);
                let direct = file.is_direct();
                let len = file.len()?;
                let reader = Reader::new(file, 0..len, block, 1, &opts.io)?;
                RunReader::over(Blocks::File(reader), name, layout, direct)
            }
            Feed::Stream(read) => {
                RunReader::over(Blocks::Stream(StreamBlocks::new(read, block)), name, layout, false)
            }
        };
        cursors.push(Checked::new(reader, keys, s.name));
    }
    let out = AtomicOutput::create(output, &opts.io)?;
    let mut sink = FileSink::named(out.file().clone(), output.display().to_string());
    let meters = Meters::default();
    let reporter = Reporter::new(None, None);
    let merge = MergeOpts { keys, meters: &meters, unique: opts.unique, reporter: &reporter };
    let after = opts.after_key.clone().filter(|_| opts.unique);
    let check = merge_cursors(&mut cursors, None, &merge, block, true, after, &mut sink)?;
    sink.finish()?;
    if check.unordered > 0 || (opts.unique && check.duplicates > 0) {
        return Err(EngineError::Verify(format!(
            "the merged output has {} records out of order and {} duplicate keys",
            check.unordered, check.duplicates
        )));
    }
    let mut files: Vec<FileStats> = cursors.iter().map(RunSource::stats).collect();
    files.push(sink.stats());
    drop(sink);
    out.file().set_len(check.bytes)?;
    out.commit()?;
    Ok(SourcesMerged {
        records: check.records,
        bytes: check.bytes,
        checksum: check.checksum,
        dropped: check.dropped,
        dropped_checksum: check.dropped_checksum,
        edge_keys: (check.records > 0).then_some((check.first_key, check.last_key)),
        files,
    })
}

/// A caller's source, checked to be in key order as its records are read.
struct Checked<'k> {
    reader: RunReader,
    keys: &'k SortKey,
    name: String,
    /// The current record's whole key, and the one before it.
    key: Vec<u8>,
    prev: Vec<u8>,
    /// Records read so far (the current one included, once filled).
    records: u64,
    /// Whether the current record was filled and checked.
    filled: bool,
}

impl<'k> Checked<'k> {
    fn new(reader: RunReader, keys: &'k SortKey, name: String) -> Self {
        Checked { reader, keys, name, key: Vec::new(), prev: Vec::new(), records: 0, filled: false }
    }
}

impl RunSource for Checked<'_> {
    fn fill(&mut self) -> Result<bool> {
        if self.filled {
            return Ok(true);
        }
        if !self.reader.fill()? {
            return Ok(false);
        }
        std::mem::swap(&mut self.key, &mut self.prev);
        self.keys.full_key(self.reader.record(), &mut self.key);
        self.records += 1;
        if self.records > 1 && self.key < self.prev {
            return Err(EngineError::Unordered {
                path: PathBuf::from(&self.name),
                record: self.records,
            });
        }
        self.filled = true;
        Ok(true)
    }

    #[inline]
    fn record(&self) -> &[u8] {
        self.reader.record()
    }

    #[inline]
    fn advance(&mut self) {
        self.filled = false;
        self.reader.advance();
    }

    fn stats(&self) -> FileStats {
        self.reader.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recs(keys: &[u8], tag: u8) -> Vec<u8> {
        keys.iter().flat_map(|&k| [k, tag, b'.', b'.']).collect()
    }

    #[test]
    fn files_and_streams_merge_stably_in_source_order() {
        let d = tempfile::tempdir().unwrap();
        let keys = SortKey::raw_bytes(4, 0, 1).unwrap();
        let a = d.path().join("a");
        std::fs::write(&a, recs(&[1, 3, 3, 7], b'a')).unwrap();
        // A stream whose reads cut records.
        let b = recs(&[2, 3, 8], b'b');
        let cut = std::io::Cursor::new(b).chain(std::io::empty());
        let sources = vec![SortedSource::file(&a), SortedSource::stream("b", cut)];
        let out = d.path().join("out");
        let opts = MergeSourcesOptions { block: 4096, ..MergeSourcesOptions::default() };
        let m = merge_sources(sources, &out, &keys, &opts).unwrap();
        let got = std::fs::read(&out).unwrap();
        let tags: Vec<(u8, u8)> = got.chunks(4).map(|r| (r[0], r[1])).collect();
        assert_eq!(
            tags,
            [(1, b'a'), (2, b'b'), (3, b'a'), (3, b'a'), (3, b'b'), (7, b'a'), (8, b'b')]
        );
        assert_eq!((m.records, m.edge_keys), (7, Some((vec![1], vec![8]))));
        assert_eq!(m.checksum, crate::verify::checksum_records(&got, 4));
    }

    #[test]
    fn unique_keeps_the_first_of_a_key_and_drops_the_key_given() {
        let d = tempfile::tempdir().unwrap();
        let keys = SortKey::raw_bytes(4, 0, 1).unwrap();
        let sources = vec![
            SortedSource::stream("a", std::io::Cursor::new(recs(&[1, 3, 5], b'a'))),
            SortedSource::stream("b", std::io::Cursor::new(recs(&[1, 3, 4], b'b'))),
        ];
        let out = d.path().join("out");
        let opts =
            MergeSourcesOptions { unique: true, after_key: Some(vec![1]), ..Default::default() };
        let m = merge_sources(sources, &out, &keys, &opts).unwrap();
        let want = [recs(&[3], b'a'), recs(&[4], b'b'), recs(&[5], b'a')].concat();
        assert_eq!(std::fs::read(&out).unwrap(), want);
        assert_eq!((m.records, m.dropped), (3, 3));
    }

    #[test]
    fn a_source_out_of_order_or_cut_is_named_and_nothing_is_left() {
        let d = tempfile::tempdir().unwrap();
        let keys = SortKey::raw_bytes(4, 0, 1).unwrap();
        let out = d.path().join("out");
        let bad = vec![SortedSource::stream("bad", std::io::Cursor::new(recs(&[2, 1], b'x')))];
        let e = merge_sources(bad, &out, &keys, &MergeSourcesOptions::default()).unwrap_err();
        assert!(matches!(e, EngineError::Unordered { record: 2, .. }), "{e}");
        let cut = vec![SortedSource::stream("cut", std::io::Cursor::new(vec![b'a'; 6]))];
        let e = merge_sources(cut, &out, &keys, &MergeSourcesOptions::default()).unwrap_err();
        assert!(e.to_string().starts_with("cut: ends inside a record"), "{e}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}

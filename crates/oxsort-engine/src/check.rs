//! The order check: is an input already in key order? [`check`] reads it once and returns the
//! first record out of order ([`Disorder`]: the input, the record's number, its bytes and the
//! bytes of the record before it), or `None`.
//!
//! The input comes through the sort's own reader ([`ChunkSource`]): direct transfers with
//! read-ahead for files, an ordered read to the end for streams (standard input, pipes, files
//! whose size says nothing of their bytes), every layout the engine sorts (fixed, delimited,
//! RDW-prefixed). An input is opened by the first read, never before. Records are compared
//! where they lie in the chunk that was read; only the last record of a chunk is kept (or its
//! key, when keys are built) to compare with the first of the next.
//!
//! ```text
//!   ChunkSource ──> chunk n: | rec | rec | ... | rec |      (whole records, one input)
//!   compare:  rec i-1 vs rec i, in place (built keys: the previous key is kept)
//!             the last of chunk n-1 (kept) vs the first of chunk n
//! ```
//!
//! Strict order (`unique`: equal neighbours are out of order too) is what `sort -c -u` checks.

use std::cmp::Ordering;
use std::path::PathBuf;

use oxsort_format::{Filter, KeyKind, SortKey};
use oxsort_io::IoOptions;

use crate::config::{Input, SortConfig};
use crate::error::{EngineError, Result};
use crate::source::ChunkSource;
use crate::tuning::{READ_DEPTH, TRANSFER_TARGET};

/// The first record found out of order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disorder {
    /// The input holding it (in the order given; 0 for a check of one input).
    pub input: usize,
    /// The input's name, as the reader names it (its path, `-` for standard input).
    pub name: String,
    /// The record's number in that input (0-based).
    pub record: u64,
    /// The record, as read (a delimited record with its terminator: one is added to a last
    /// record that lacks it).
    pub bytes: Vec<u8>,
    /// The record before it, as read.
    pub previous: Vec<u8>,
}

impl Disorder {
    /// The record's number counted from 1 (the line number of a text line, as `sort -c`
    /// reports it).
    pub fn line(&self) -> u64 {
        self.record + 1
    }

    /// The record without its terminator, if the layout has one.
    pub fn text(&self, terminator: Option<u8>) -> &[u8] {
        match terminator {
            Some(t) => self.bytes.strip_suffix(&[t]).unwrap_or(&self.bytes),
            None => &self.bytes,
        }
    }
}

/// How [`check`] compares neighbours.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// Equal neighbours are out of order too (the order a sort with duplicate removal writes).
    pub strict: bool,
    /// Only the records the filter keeps are checked (DFSORT `INCLUDE`/`OMIT`).
    pub filter: Option<Filter>,
    /// How the input is read.
    pub io: IoOptions,
}

/// Checks that `input` is in the order of `keys` and returns the first record out of order,
/// or `None` when it is in order. Errors are the reader's (the input cannot be opened or read,
/// a partial fixed record, a bad RDW) and records whose key cannot be built.
///
/// ```no_run
/// use oxsort_engine::{check, CheckOptions, Input, SortSpec};
/// use oxsort_format::RecordLayout;
/// let keys = SortSpec::with_layout(RecordLayout::LINES).compile()?;
/// match check(&Input::Path("words.txt".into()), &keys, &CheckOptions::default())? {
///     Some(d) => println!("words.txt:{}: disorder", d.line()),
///     None => println!("in order"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check(input: &Input, keys: &SortKey, opts: &CheckOptions) -> Result<Option<Disorder>> {
    check_one(0, input, keys, opts)
}

/// Checks each input of `cfg` on its own in the order of its spec (strict when the spec drops
/// duplicates; only the records its filter keeps) and returns the first record out of order.
/// The spec must compare records as they are read: a spec that reshapes or windows them
/// before the sort (`INREC`, `SKIPREC`, `STOPAFT`) is refused. The output is not touched.
pub fn check_config(cfg: &SortConfig) -> Result<Option<Disorder>> {
    let spec = cfg.spec();
    if spec.inrec.is_some() || spec.skiprec.is_some() || spec.stopaft.is_some() {
        return Err(EngineError::Config(
            "an order check compares the records as they are read: INREC, SKIPREC and \
             STOPAFT do not apply to it"
                .into(),
        ));
    }
    let opts =
        CheckOptions { strict: spec.unique, filter: spec.filter.clone(), io: cfg.io.clone() };
    for (i, input) in cfg.inputs().iter().enumerate() {
        if let Some(d) = check_one(i, input, &cfg.key, &opts)? {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

/// [`check`] of the `number`th input.
fn check_one(
    number: usize,
    input: &Input,
    keys: &SortKey,
    opts: &CheckOptions,
) -> Result<Option<Disorder>> {
    let mut src = ChunkSource::new(
        std::slice::from_ref(input),
        keys.input_layout(),
        TRANSFER_TARGET,
        READ_DEPTH,
        opts.io.clone(),
    );
    let mut order = KeyOrder::new(keys, opts.strict);
    let found = loop {
        let Some(chunk) = src.next_chunk()? else { break None };
        let key_error = |i: usize, source| EngineError::Key {
            path: PathBuf::from(&*chunk.name),
            record: chunk.first_record + i as u64 + 1,
            source,
        };
        let data = &chunk.buf[..];
        let recs: Box<dyn Iterator<Item = &[u8]>> = match keys.input_layout().fixed_size() {
            Some(r) => Box::new(data[..chunk.records * r].chunks_exact(r)),
            None => Box::new(chunk.offsets.windows(2).map(|w| &data[w[0] as usize..w[1] as usize])),
        };
        let mut before: Option<&[u8]> = None;
        let mut bad = None;
        for (i, rec) in recs.enumerate() {
            if let Some(f) = &opts.filter {
                if !f.matches(keys.key_part(rec)).map_err(|e| key_error(i, e))? {
                    continue;
                }
            }
            if order.step(rec, before).map_err(|e| key_error(i, e))? {
                let previous = before.map_or_else(|| order.prev_rec.clone(), <[u8]>::to_vec);
                bad = Some((i, rec.to_vec(), previous));
                break;
            }
            before = Some(rec);
        }
        if let Some((i, bytes, previous)) = bad {
            break Some(Disorder {
                input: number,
                name: chunk.name.to_string(),
                record: chunk.first_record + i as u64,
                bytes,
                previous,
            });
        }
        if let Some(last) = before {
            order.keep(last);
        }
        src.recycle(chunk.buf);
    };
    src.finish(false);
    Ok(found)
}

/// The one order check, a record at a time: what is kept of the record before the current one.
/// [`check`] feeds it the records of the chunks it reads (comparing neighbours in place); a
/// caller that reads records itself (a JOINKEYS side given as SORTED) feeds it with
/// [`KeyOrder::push`].
///
/// ```
/// use oxsort_engine::{KeyOrder, SortSpec};
/// use oxsort_format::{KeySpec, RecordLayout};
/// let keys = SortSpec { key: Some(KeySpec::benchmark()), ..SortSpec::with_layout(RecordLayout::Fixed(10)) }
///     .compile()?;
/// let mut order = KeyOrder::new(&keys, false);
/// assert!(!order.push(b"aaaaaaaaaa")?);
/// assert!(order.push(b"0000000000")?); // before the record it follows
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct KeyOrder<'k> {
    keys: &'k SortKey,
    strict: bool,
    /// Whether keys are built (else records are compared by their raw key bytes, in place).
    built: bool,
    /// Built keys: the previous record's key, and room for the current one.
    prev_key: Vec<u8>,
    cur_key: Vec<u8>,
    scratch: Vec<u8>,
    /// The previous record, when it was not in the current chunk.
    prev_rec: Vec<u8>,
    /// Records compared so far.
    seen: u64,
}

impl<'k> KeyOrder<'k> {
    /// A check of the order of `keys` (`strict`: equal neighbours are out of order too).
    pub fn new(keys: &'k SortKey, strict: bool) -> Self {
        KeyOrder {
            keys,
            strict,
            built: keys.builds_keys(),
            prev_key: Vec::new(),
            cur_key: Vec::new(),
            scratch: Vec::new(),
            prev_rec: Vec::new(),
            seen: 0,
        }
    }

    /// Whether `a` then `b` is out of order.
    fn disorder(&self, o: Ordering) -> bool {
        o == Ordering::Greater || (self.strict && o == Ordering::Equal)
    }

    /// Takes the next record; `before` is the record before it when it lies in the same
    /// chunk. Returns true when the record is out of order.
    fn step(
        &mut self,
        rec: &[u8],
        before: Option<&[u8]>,
    ) -> std::result::Result<bool, oxsort_format::KeyError> {
        self.seen += 1;
        if matches!(self.keys.kind(), KeyKind::Copy) {
            return Ok(false);
        }
        if self.built {
            self.keys.full_key(rec, &mut self.cur_key);
            if self.cur_key.is_empty() {
                // An empty key, or one that cannot be built: the prefix tells which.
                self.keys.prefix(rec, &mut self.scratch)?;
            }
            let bad = self.seen > 1 && self.disorder(self.prev_key.as_slice().cmp(&self.cur_key));
            std::mem::swap(&mut self.prev_key, &mut self.cur_key);
            return Ok(bad);
        }
        let bad = self.seen > 1 && {
            let prev = before.unwrap_or(&self.prev_rec);
            self.disorder(self.keys.cmp_full(prev, rec))
        };
        Ok(bad)
    }

    /// Takes the next record, read by the caller; returns true when it is out of order after
    /// the record pushed before it. Errors are keys that cannot be built.
    pub fn push(&mut self, rec: &[u8]) -> std::result::Result<bool, oxsort_format::KeyError> {
        let bad = self.step(rec, None)?;
        if !self.built {
            self.keep(rec);
        }
        Ok(bad)
    }

    /// Keeps `rec`, the last record of a chunk, for the first record of the next.
    fn keep(&mut self, rec: &[u8]) {
        self.prev_rec.clear();
        self.prev_rec.extend_from_slice(rec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxsort_format::{RecordLayout, SortSpec};

    fn file(dir: &tempfile::TempDir, bytes: &[u8]) -> Input {
        let p = dir.path().join("in");
        std::fs::write(&p, bytes).unwrap();
        Input::Path(p)
    }

    fn lines() -> SortKey {
        SortSpec::with_layout(RecordLayout::LINES).compile().unwrap()
    }

    #[test]
    fn sorted_lines_have_no_disorder() {
        let d = tempfile::tempdir().unwrap();
        let r = check(&file(&d, b"a\nb\nb\nc"), &lines(), &CheckOptions::default()).unwrap();
        assert_eq!(r, None);
    }

    #[test]
    fn the_first_disorder_names_the_record_and_its_neighbour() {
        let d = tempfile::tempdir().unwrap();
        let r = check(&file(&d, b"a\nc\nb\na"), &lines(), &CheckOptions::default()).unwrap();
        let r = r.unwrap();
        assert_eq!((r.record, r.line()), (2, 3));
        assert_eq!(r.text(Some(b'\n')), b"b");
        assert_eq!(r.previous, b"c\n");
    }

    #[test]
    fn strict_order_finds_equal_neighbours() {
        let d = tempfile::tempdir().unwrap();
        let input = file(&d, b"a\nb\nb\n");
        let strict = CheckOptions { strict: true, ..CheckOptions::default() };
        assert_eq!(check(&input, &lines(), &strict).unwrap().unwrap().record, 2);
        assert_eq!(check(&input, &lines(), &CheckOptions::default()).unwrap(), None);
    }

    #[test]
    fn fixed_records_compare_their_key_only() {
        let d = tempfile::tempdir().unwrap();
        let keys = SortKey::raw_bytes(4, 0, 1).unwrap();
        let input = file(&d, b"1zzz2aaa2bbb1ccc");
        let r = check(&input, &keys, &CheckOptions::default()).unwrap().unwrap();
        assert_eq!(
            (r.record, r.bytes.as_slice(), r.previous.as_slice()),
            (3, &b"1ccc"[..], &b"2bbb"[..])
        );
    }

    #[test]
    fn a_disorder_across_chunks_is_found() {
        // More than one transfer: the neighbours of a chunk boundary are compared too.
        let d = tempfile::tempdir().unwrap();
        let n = TRANSFER_TARGET / 8 + 1000;
        let mut text: Vec<u8> = (0..n).flat_map(|i| format!("{i:07}\n").into_bytes()).collect();
        // The record that starts the second chunk (or close) is made smaller.
        let at = TRANSFER_TARGET / 8;
        text[at * 8..at * 8 + 7].copy_from_slice(b"0000000");
        let r = check(&file(&d, &text), &lines(), &CheckOptions::default()).unwrap().unwrap();
        assert_eq!(r.record, at as u64);
        assert_eq!(r.previous, format!("{:07}\n", at - 1).into_bytes());
    }

    #[test]
    fn a_stream_is_checked_to_its_end() {
        let (rx, mut tx) = std::io::pipe().unwrap();
        let w = std::thread::spawn(move || {
            use std::io::Write;
            tx.write_all(b"a\nb\nc\nb\n").unwrap();
        });
        let input = Input::Stream(crate::config::Stream::new(rx, "pipe"));
        let r = check(&input, &lines(), &CheckOptions::default()).unwrap().unwrap();
        w.join().unwrap();
        assert_eq!((r.record, r.name.as_str()), (3, "pipe"));
    }

    #[test]
    fn a_missing_input_is_an_open_error() {
        let e = check(&Input::Path("/nonexistent/in".into()), &lines(), &CheckOptions::default());
        assert!(matches!(e, Err(EngineError::Io(oxsort_io::IoError::Open { .. }))), "{e:?}");
    }
}

//! The merge join itself: two key-ordered sides read a block at a time, each joined record
//! built where the output wants it.
//!
//! ```text
//!  side stream ─ read ─> | buf: rec rec rec ... rec re| ─ cur() borrows a record in place;
//!  (sort's channel,      |      ^at               ^end |   a record cut by the end of a read
//!   or SORTED files)                                       moves to the front, the rest follows
//!
//!  F1 cur ─┐ compare by the join keys ─ build_into ─> JoinedOut::next_record (a slot in the
//!  F2 cur ─┘ (the F2 records of one key held in `group`)    output's block: no copy between)
//! ```
//!
//! A side the engine sorts is checked by the engine itself (its output's order and checksum,
//! on every run); the join checks the order of the files it reads as they are (SORTED) only.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::path::PathBuf;

use oxsort_engine::{KeyOrder, SortKey, SortSpec};
use oxsort_format::{JoinSide, JoinSpec, RecordLayout};
use oxsort_io::byte_channel::ByteReader;

use crate::error::JobError;
use crate::tuning::{JOIN_IO_BUFFER, JOIN_SIDE_READ};

type Result<T> = std::result::Result<T, JobError>;

/// What the join did, for the closing report.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct JoinCounts {
    /// F1 records read.
    pub f1: u64,
    /// F2 records read.
    pub f2: u64,
    /// Paired records joined.
    pub paired: u64,
    /// Unpaired F1 records kept.
    pub unpaired_f1: u64,
    /// Unpaired F2 records kept.
    pub unpaired_f2: u64,
    /// Joined records written to the main task.
    pub joined: u64,
}

/// Where one side's records come from.
pub(crate) enum SideFeed<'a> {
    /// The user's files, in order, read as they are (SORTED).
    Files(Vec<PathBuf>),
    /// The side's sort, through a byte channel. `done` waits for the sort's outcome, taken at
    /// the stream's end: a sort that failed also ends its stream, early.
    Sort { pipe: Option<ByteReader>, done: Option<SortOutcome<'a>> },
}

/// Waits for a side's sort to end and gives its outcome.
pub(crate) type SortOutcome<'a> = Box<dyn FnOnce() -> Result<()> + Send + 'a>;

/// Where the joined records go, a record at a time, built in place.
pub(crate) trait JoinedOut {
    /// Room for the next joined record, of the length the output was made for (the join's
    /// `joined_len`).
    fn next_record(&mut self) -> std::io::Result<&mut [u8]>;

    /// Passes on the records built so far.
    fn flush_records(&mut self) -> std::io::Result<()>;
}

/// [`JoinedOut`] over a writer (the main task's pipe): `len`-byte records built into a buffer
/// of about [`JOIN_IO_BUFFER`] bytes (whole records), written when full.
pub(crate) struct Blocks<W: Write> {
    w: W,
    len: usize,
    buf: Vec<u8>,
    fill: usize,
}

impl<W: Write> Blocks<W> {
    pub(crate) fn new(w: W, len: usize) -> Self {
        let records = (JOIN_IO_BUFFER / len.max(1)).max(1);
        Blocks { w, len, buf: vec![0; records * len], fill: 0 }
    }
}

impl<W: Write> JoinedOut for Blocks<W> {
    fn next_record(&mut self) -> std::io::Result<&mut [u8]> {
        let len = self.len;
        if self.fill == self.buf.len() {
            self.flush_records()?;
        }
        let at = self.fill;
        self.fill += len;
        Ok(&mut self.buf[at..at + len])
    }

    fn flush_records(&mut self) -> std::io::Result<()> {
        self.w.write_all(&self.buf[..self.fill])?;
        self.fill = 0;
        self.w.flush()
    }
}

/// Reads one side's records in order (across concatenated files, or from its sort), a block
/// at a time, and (for SORTED files) checks their key order.
struct SideReader<'a> {
    side: JoinSide,
    dd: &'a str,
    feed: SideFeed<'a>,
    next_path: usize,
    reader: Option<Box<dyn Read + Send + 'a>>,
    len: usize,
    /// Bytes read: the current record at `at`, read bytes up to `end`.
    buf: Vec<u8>,
    at: usize,
    end: usize,
    has: bool,
    /// The order check of SORTED files, by the side's join keys.
    order: Option<KeyOrder<'a>>,
    /// Records read from the current file, and in all.
    in_file: u64,
    total: u64,
}

impl<'a> SideReader<'a> {
    /// `keys` (the side's join keys, for the order check) is given for SORTED files only.
    fn new(
        join: &'a JoinSpec,
        side: JoinSide,
        len: usize,
        feed: SideFeed<'a>,
        keys: Option<&'a SortKey>,
    ) -> Self {
        let order = keys.map(|k| KeyOrder::new(k, false));
        SideReader {
            side,
            dd: &join.input(side).dd,
            feed,
            next_path: 0,
            reader: None,
            len,
            buf: vec![0; JOIN_SIDE_READ.max(2 * len)],
            at: 0,
            end: 0,
            has: false,
            order,
            in_file: 0,
            total: 0,
        }
    }

    /// The current record (while [`SideReader::has`]).
    fn cur(&self) -> &[u8] {
        &self.buf[self.at..self.at + self.len]
    }

    fn path_name(&self) -> String {
        match &self.feed {
            SideFeed::Files(paths) => paths[self.next_path - 1].display().to_string(),
            SideFeed::Sort { .. } => format!("the sorted {}", self.dd),
        }
    }

    /// Opens the next file (or the sort's stream); false when there is none.
    fn open_next(&mut self) -> Result<bool> {
        let f: Box<dyn Read + Send + 'a> = match &mut self.feed {
            SideFeed::Files(paths) => {
                let Some(p) = paths.get(self.next_path) else {
                    return Ok(false);
                };
                let f = File::open(p).map_err(|e| {
                    JobError::io(
                        format!("opening {} ({}) {}", self.dd, self.side.name(), p.display()),
                        e,
                    )
                })?;
                Box::new(f)
            }
            SideFeed::Sort { pipe, done } => match pipe.take() {
                Some(r) => Box::new(r),
                None => {
                    // The stream's end: whole only if the sort succeeded.
                    if let Some(done) = done.take() {
                        done()?;
                    }
                    return Ok(false);
                }
            },
        };
        self.reader = Some(f);
        self.next_path += 1;
        self.in_file = 0;
        Ok(true)
    }

    /// Reads on until the record at `at` is whole; false at the end of the last file. The
    /// bytes of a record cut by the last read move to the front first.
    fn fill(&mut self) -> Result<bool> {
        let tail = self.end - self.at;
        self.buf.copy_within(self.at..self.end, 0);
        (self.at, self.end) = (0, tail);
        loop {
            if self.reader.is_none() && !self.open_next()? {
                return Ok(false);
            }
            let r = self.reader.as_mut().expect("opened above");
            let n = match r.read(&mut self.buf[self.end..]) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    let what = format!("reading {} ({})", self.dd, self.path_name());
                    return Err(JobError::io(what, e));
                }
            };
            self.end += n;
            if self.end >= self.len {
                return Ok(true);
            }
            if n == 0 {
                if self.end != 0 {
                    return Err(JobError::PartialRecord {
                        dd: self.dd.to_string(),
                        side: self.side.name(),
                        path: self.path_name(),
                        bytes: self.end,
                        records: self.in_file,
                        len: self.len,
                    });
                }
                self.reader = None;
            }
        }
    }

    /// Moves to the next record; false at the end of the last file.
    fn advance(&mut self) -> Result<bool> {
        let had = self.has;
        if had {
            self.at += self.len;
        }
        if self.at + self.len > self.end && !self.fill()? {
            self.has = false;
            return Ok(false);
        }
        self.in_file += 1;
        self.total += 1;
        self.has = true;
        let Some(order) = self.order.as_mut() else {
            return Ok(true);
        };
        let rec = &self.buf[self.at..self.at + self.len];
        let out_of_order = order.push(rec).map_err(|source| JobError::JoinKey {
            dd: self.dd.to_string(),
            side: self.side.name(),
            record: self.in_file,
            path: self.path_name(),
            source: Box::new(source),
        })?;
        if had && out_of_order {
            return Err(JobError::OutOfOrder {
                dd: self.dd.to_string(),
                side: self.side.name(),
                record: self.in_file,
                path: self.path_name(),
            });
        }
        Ok(true)
    }
}

/// The key a side's records reach the join in (its join keys over its records as the join
/// sees them, `len` bytes), for the order check of SORTED files.
fn side_order(join: &JoinSpec, side: JoinSide, len: usize) -> Result<SortKey> {
    let spec = SortSpec {
        key: Some(join.sort_key(side)),
        ..SortSpec::with_layout(RecordLayout::Fixed(len))
    };
    spec.compile().map_err(|source| {
        let input = join.input(side);
        JobError::Key {
            what: format!("the JOINKEYS keys of {} ({})", input.dd, side.name()),
            source,
        }
    })
}

/// The merge join (`spec`, over records of `lens` bytes) of two key-ordered sides into `out`
/// (the direct output, or the main task's stream).
pub(crate) fn merge_join(
    spec: &JoinSpec,
    lens: [usize; 2],
    feeds: [SideFeed<'_>; 2],
    out: &mut impl JoinedOut,
) -> Result<JoinCounts> {
    let [f1, f2] = feeds;
    // The order check's keys, for the sides read as they are (SORTED files).
    let order = |side: JoinSide, feed: &SideFeed<'_>| match feed {
        SideFeed::Files(_) => side_order(spec, side, lens[side as usize]).map(Some),
        SideFeed::Sort { .. } => Ok(None),
    };
    let keys = [order(JoinSide::F1, &f1)?, order(JoinSide::F2, &f2)?];
    let mut a = SideReader::new(spec, JoinSide::F1, lens[0], f1, keys[0].as_ref());
    let mut b = SideReader::new(spec, JoinSide::F2, lens[1], f2, keys[1].as_ref());
    let written = |e| JobError::io("writing the joined records", e);
    let mut c = JoinCounts::default();
    let mut group: Vec<u8> = Vec::new();
    let mut emit = |f1: Option<&[u8]>, f2: Option<&[u8]>, c: &mut JoinCounts| -> Result<()> {
        let slot = out.next_record().map_err(written)?;
        spec.build_into(f1, f2, slot);
        c.joined += 1;
        Ok(())
    };
    a.advance()?;
    b.advance()?;
    loop {
        let order = match (a.has, b.has) {
            (false, false) => break,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (true, true) => spec.compare(JoinSide::F1, a.cur(), JoinSide::F2, b.cur()),
        };
        match order {
            Ordering::Less => {
                if spec.unpaired_f1 {
                    c.unpaired_f1 += 1;
                    emit(Some(a.cur()), None, &mut c)?;
                }
                a.advance()?;
            }
            Ordering::Greater => {
                if spec.unpaired_f2 {
                    c.unpaired_f2 += 1;
                    emit(None, Some(b.cur()), &mut c)?;
                }
                b.advance()?;
            }
            Ordering::Equal => {
                // The F2 records of this key, held while each F1 record of the key meets them.
                group.clear();
                let len2 = b.len;
                group.extend_from_slice(b.cur());
                while b.advance()?
                    && spec.compare(JoinSide::F2, &group[..len2], JoinSide::F2, b.cur())
                        == Ordering::Equal
                {
                    group.extend_from_slice(b.cur());
                }
                loop {
                    if spec.keeps_paired() {
                        for r2 in group.chunks_exact(len2) {
                            c.paired += 1;
                            emit(Some(a.cur()), Some(r2), &mut c)?;
                        }
                    }
                    if !a.advance()?
                        || spec.compare(JoinSide::F1, a.cur(), JoinSide::F2, &group[..len2])
                            != Ordering::Equal
                    {
                        break;
                    }
                }
            }
        }
    }
    out.flush_records().map_err(written)?;
    c.f1 = a.total;
    c.f2 = b.total;
    Ok(c)
}

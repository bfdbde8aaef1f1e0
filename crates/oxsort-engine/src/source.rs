//! [`ChunkSource`]: the inputs, concatenated, as a stream of chunks of whole records.
//!
//! ```text
//!   in1.dat ──Reader(read-ahead)──┐
//!   in2.dat ──Reader──────────────┼──> chunk 0, chunk 1, ... (each ≤ 2^log2 records,
//!   -       ──sequential read─────┘     never spanning two inputs)
//! ```

use std::collections::VecDeque;
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, Receiver};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use oxsort_format::RecordLayout;
use oxsort_io::{AlignedBuf, DirectFile, IoOptions, Reader};

use crate::config::Input;
use crate::error::{EngineError, Result};
use crate::load_rule::{chunk_cost, takes_the_rest};
use crate::stats::{FileStats, Meters, TextAsRecords};
use crate::tuning::{
    delim_room, LONG_RECORD_GROWTH, OFFSETS_GUESS_RECORD_BYTES, PROVISION_AHEAD, TEXT_SNIFF_BYTES,
};

mod feed;
mod rdw;

use feed::Feed;

pub(crate) use crate::chunk::{Chunk, Position};

/// What the plan knows of an input's length before it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Length {
    /// No plan was made: the input's own `stat` decides how it is read.
    Unplanned,
    /// Known only at its end (standard input, a FIFO, a `/proc` file): read to its end.
    Stream,
    /// A regular file of this many bytes: reading finds exactly these, else the input changed.
    Bytes(u64),
}

/// The input being read, to check what reading it found against the plan.
struct Reading {
    file: Arc<DirectFile>,
    /// Where reading started and where it must end (the plan's length, or a window's end).
    start: u64,
    end: u64,
    /// The plan's length of the input.
    planned: u64,
}

/// What tells, from the first piece of delimited records mapped, whether one load holds all the
/// inputs: only then is mapping them worth it (see [`ChunkSource::map_if_one_load`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OneLoad {
    /// Bytes of all the inputs.
    pub(crate) total: u64,
    /// Bytes a load may hold at the inputs' end: chunk buffers, entries and offsets
    /// (`Geometry::arena_bytes` and the read-ahead room, see `load_rule::takes_the_rest`).
    pub(crate) budget: u64,
    /// Chunks a load may hold.
    pub(crate) chunks: u64,
    /// Bytes of a record's entry in a load.
    pub(crate) entry_bytes: u64,
}

impl OneLoad {
    /// Whether one load holds the inputs, if all their `len`-byte pieces cost what the first,
    /// of `records` records in a buffer of `buf_len` bytes, does: the load's own rule for taking
    /// the rest of the inputs ([`takes_the_rest`]) applied to that piece.
    fn holds(&self, len: usize, records: usize, chunk_bytes: usize, buf_len: usize) -> bool {
        let offsets = offsets_room(len, len.checked_div(records).unwrap_or(len));
        let cost = chunk_cost(buf_len, records, offsets, self.entry_bytes);
        let left = self.total.saturating_sub(len as u64);
        self.total.div_ceil(chunk_bytes.max(1) as u64) <= self.chunks
            && takes_the_rest(cost, len as u64, Some(left), self.budget)
    }
}

/// The longest a chunk grows to hold a long record: its records' offsets are 32-bit, and the
/// offset after its last record (plus an added terminator) must fit.
const LONGEST_CHUNK: usize = u32::MAX as usize - oxsort_io::DIRECT_ALIGN;

pub(crate) struct ChunkSource {
    pending: VecDeque<(Input, Length)>,
    current: Option<(Feed, Arc<str>, bool)>,
    /// The current input's planned length, when the plan knew it.
    reading: Option<Reading>,
    /// Whether the current input's first bytes were looked at for text lines.
    sniffed: bool,
    /// Warnings about the inputs found as they were read (text read as fixed records).
    pub(crate) warnings: Vec<TextAsRecords>,
    layout: RecordLayout,
    chunk_bytes: usize,
    io: IoOptions,
    spare: Vec<AlignedBuf>,
    peeked: Option<Chunk>,
    /// The reader's current piece: buffer, bytes used, bytes in it, file offset.
    carry: Option<(AlignedBuf, usize, usize, u64)>,
    /// Bytes of the current input turned into chunks so far.
    file_pos: u64,
    /// The input being read (kept after its end until its last chunk is out).
    name: Arc<str>,
    /// Input transfers in flight.
    pub(crate) read_depth: usize,
    /// Delimited records: bytes after the last terminator of the previous chunk.
    leftover: Vec<u8>,
    /// Delimited records: records of the current input turned into chunks so far.
    file_records: u64,
    /// Delimited records: the longest record read (a chunk grows to hold one longer than
    /// itself, up to this).
    longest_record: usize,
    /// Delimited records: the mean length of the last chunk's records, which the next chunk's
    /// offset table is sized by ([`offsets_room`]).
    record_bytes: usize,
    /// Populated chunk buffers made ahead of the reader by helper threads.
    provision: Option<(Receiver<AlignedBuf>, Vec<JoinHandle<()>>)>,
    pub(crate) files: Vec<FileStats>,
    pub(crate) bytes_read: u64,
    /// The number of the input being read (the next one opened gets this number + 1).
    input: Option<usize>,
    /// Where the next input opened starts reading (a resumed sort skips what its runs hold).
    start: u64,
    /// Where the input stands after the chunks handed out, and before the last one.
    taken: Position,
    taken_before: Position,
    /// `SKIPREC`/`STOPAFT`: the byte range read of each input left in `pending`, in order.
    windows: Option<VecDeque<(u64, u64)>>,
    /// `SKIPREC`/`STOPAFT` applied to the records as they are read.
    limit: Option<crate::window::Limit>,
    /// Whether inputs in memory already (tmpfs) may be mapped instead of read (see `Feed`).
    mapping: bool,
    /// Whether regular files on disk are mapped too (a one-pass sort: see `Feed`).
    map_disk: bool,
    /// Delimited records: mapping files on disk waits on the first piece mapped to confirm
    /// that one load holds the inputs.
    one_load: Option<OneLoad>,
    /// The buffer helpers, started only if reads take over from a mapping not confirmed.
    provision_later: Option<(usize, Meters, Option<u64>)>,
}

impl ChunkSource {
    pub(crate) fn new(
        inputs: &[Input],
        layout: RecordLayout,
        chunk_bytes: usize,
        read_depth: usize,
        io: IoOptions,
    ) -> Self {
        ChunkSource {
            pending: inputs.iter().map(|i| (i.clone(), Length::Unplanned)).collect(),
            current: None,
            reading: None,
            sniffed: false,
            warnings: Vec::new(),
            layout,
            chunk_bytes,
            io,
            spare: Vec::new(),
            peeked: None,
            carry: None,
            file_pos: 0,
            name: Arc::from("-"),
            read_depth,
            leftover: Vec::new(),
            file_records: 0,
            longest_record: chunk_bytes,
            record_bytes: OFFSETS_GUESS_RECORD_BYTES,
            provision: None,
            files: Vec::new(),
            bytes_read: 0,
            input: None,
            start: 0,
            taken: Position::default(),
            taken_before: Position::default(),
            windows: None,
            limit: None,
            mapping: true,
            map_disk: false,
            one_load: None,
            provision_later: None,
        }
    }

    /// The plan's length of each input, in order (`None`: known only at its end). Called before
    /// the first chunk is read.
    pub(crate) fn planned(&mut self, lengths: &[Option<u64>]) {
        for ((_, l), planned) in self.pending.iter_mut().zip(lengths) {
            *l = planned.map_or(Length::Stream, Length::Bytes);
        }
    }

    /// Reads every input, mapping none (an input that is also the output).
    pub(crate) fn never_map(&mut self) {
        self.mapping = false;
    }

    /// Maps regular files on disk too, not only tmpfs files: the plan holds every record at
    /// once (one pass), so the pages mapped are the memory the records would have been read
    /// into, filled by the device rather than zeroed by the process.
    pub(crate) fn map_files_on_disk(&mut self) {
        self.map_disk = true;
    }

    /// Maps regular files on disk as [`ChunkSource::map_files_on_disk`] does, if `check` finds
    /// with the first piece mapped that one load holds every input (delimited records, whose
    /// count the plan cannot know). If not, that input is read on from there, and the inputs
    /// after it are read: a two-pass sort reads its loads into buffers it reuses, where mapped
    /// pieces would be pages the page cache finds fresh for every load.
    pub(crate) fn map_if_one_load(&mut self, check: OneLoad) {
        self.map_disk = true;
        self.one_load = Some(check);
    }

    /// Applies `limit` to every chunk read from now on.
    pub(crate) fn limit(&mut self, limit: crate::window::Limit) {
        self.limit = Some(limit);
    }

    /// Records the limit skipped (`SKIPREC` on a stream), and the records it passed on when
    /// it ended the input (`STOPAFT` reached; `None` otherwise).
    pub(crate) fn limited(&self) -> (u64, Option<u64>) {
        self.limit.as_ref().map_or((0, None), |l| (l.skipped, l.done.then_some(l.passed)))
    }

    /// Reads only `ranges` (input number, first byte, end byte) of the inputs, in order;
    /// inputs without a range are not read. Called before the first chunk is read.
    pub(crate) fn window(&mut self, ranges: &[(usize, u64, u64)]) {
        let inputs: Vec<(Input, Length)> = self.pending.drain(..).collect();
        self.pending = ranges.iter().map(|&(i, _, _)| inputs[i].clone()).collect();
        self.windows = Some(ranges.iter().map(|&(_, a, b)| (a, b)).collect());
    }

    /// Starts reading at `at` instead of the beginning: the inputs before `at.input` and the
    /// bytes and records of that input before it are skipped (a resumed sort holds them in runs
    /// already). Called before the first chunk is read.
    pub(crate) fn skip_to(&mut self, at: Position) {
        for _ in 0..at.input {
            self.pending.pop_front();
        }
        self.input = at.input.checked_sub(1);
        self.start = at.offset;
        self.file_pos = at.offset;
        self.file_records = at.record;
        self.taken = at;
        self.taken_before = at;
    }

    /// Where the input stands after the chunks handed out so far.
    pub(crate) fn position(&self) -> Position {
        self.taken
    }

    /// Starts populating chunk buffers ahead of the reader on up to `threads` helper threads.
    /// At most [`PROVISION_AHEAD`] populated buffers exist at once, the one each helper holds
    /// while it waits to hand it over included: that is what the plan accounts for. With
    /// `most`, no more than that many are made in all (an input of known size needs no more
    /// buffers than it has chunks: populating more touches memory nothing reads into).
    pub(crate) fn provision(&mut self, threads: usize, meters: &Meters, most: Option<u64>) {
        if self.all_mapped() {
            // No buffers to read into: every input's pages are mapped (unless the first piece
            // says otherwise: then reads take over, and need them).
            if self.one_load.is_some() {
                self.provision_later = Some((threads, meters.clone(), most));
            }
            return;
        }
        let helpers = threads.clamp(1, PROVISION_AHEAD);
        let (tx, rx) = bounded::<AlignedBuf>(PROVISION_AHEAD - helpers);
        let size = self.buf_len();
        let left = Arc::new(AtomicU64::new(most.unwrap_or(u64::MAX)));
        let handles = (0..helpers)
            .map(|_| {
                let tx = tx.clone();
                let meters = meters.clone();
                let left = left.clone();
                std::thread::spawn(move || {
                    let _meter = meters.meter("prefault");
                    while left.fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1)).is_ok() {
                        let mut b = AlignedBuf::unzeroed(size);
                        b.prefault(1);
                        if tx.send(b).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        self.provision = Some((rx, handles));
    }

    /// Whether every input left is one whose pages are mapped, not read (see `Feed`).
    fn all_mapped(&self) -> bool {
        self.maps_pieces()
            && self.start % oxsort_io::tuning::PAGE_SIZE as u64 == 0
            && self.windows.is_none()
            && self.pending.iter().all(|(i, l)| match (i, l) {
                // A planned length is a regular file's (`oxsort_io::trusted_size`).
                (Input::Path(p), Length::Bytes(n)) => {
                    oxsort_io::mapped::on_tmpfs(p)
                        || (self.map_disk && oxsort_io::mapped::worth_mapping(*n))
                }
                _ => false,
            })
    }

    /// Whether this sort's inputs may be mapped at all: fixed or delimited records (not
    /// variable ones, whose chunks are assembled) in chunks of whole pages, mapping neither
    /// turned off nor refused for an input that is also an output.
    fn maps_pieces(&self) -> bool {
        self.mapping
            && matches!(self.layout, RecordLayout::Fixed(_) | RecordLayout::Delimited(_))
            && oxsort_io::mapped::chunks_mappable(self.chunk_bytes, &self.io)
    }

    /// The input is read: stops the helper threads and frees every buffer kept for reuse, or
    /// with `keep` keeps them (and those given back later) for [`ChunkSource::take_spares`]:
    /// a merge reads into them rather than into fresh memory.
    pub(crate) fn finish(&mut self, keep: bool) {
        self.stop_provision();
        if !keep {
            self.spare = Vec::new();
        }
        self.carry = None;
    }

    /// The chunk buffers kept for reuse (see [`ChunkSource::finish`]).
    pub(crate) fn take_spares(&mut self) -> Vec<AlignedBuf> {
        std::mem::take(&mut self.spare)
    }

    /// Stops the helper threads (buffers they made are freed).
    fn stop_provision(&mut self) {
        if let Some((rx, handles)) = self.provision.take() {
            drop(rx);
            for h in handles {
                let _ = h.join();
            }
        }
    }

    /// Gives a chunk buffer back for reuse, so later reads don't fault in fresh memory.
    pub(crate) fn recycle(&mut self, buf: AlignedBuf) {
        // A mapped piece is unmapped: it holds no memory of its own to reuse.
        if buf.len() == self.buf_len() && !buf.is_file_mapping() {
            self.spare.push(buf);
        }
    }

    /// Bytes of a chunk buffer: a chunk, and for delimited records [`delim_room`] more for
    /// the rest of a record borrowed from the next piece (or a terminator added at an input's
    /// end); rounded as [`AlignedBuf`] rounds.
    fn buf_len(&self) -> usize {
        let want =
            self.chunk_bytes + self.layout.terminator().map_or(0, |_| delim_room(self.chunk_bytes));
        want.div_ceil(oxsort_io::DIRECT_ALIGN) * oxsort_io::DIRECT_ALIGN
    }

    /// Opens `input` (the one time it is opened) and starts reading it: a file of the plan's
    /// length over that length (whether it grew, its length at the end tells); anything whose
    /// length is known only at its end as a stream, to its end.
    fn open(&mut self, input: Input, length: Length) -> Result<()> {
        let (file, name) = match input {
            Input::Path(p) => (DirectFile::open(&p, &self.io)?, p.display().to_string()),
            Input::Stdin => {
                let fd = std::io::stdin().lock();
                let owned = std::os::fd::AsFd::as_fd(&fd)
                    .try_clone_to_owned()
                    .map_err(|e| EngineError::Input { path: PathBuf::from("-"), source: e })?;
                let file = std::fs::File::from(owned);
                (DirectFile::from_std(file, PathBuf::from("-"), &self.io), "-".to_string())
            }
            Input::Stream(st) => {
                let name = PathBuf::from(st.name());
                let file =
                    st.file().map_err(|e| EngineError::Input { path: name.clone(), source: e })?;
                (DirectFile::from_std(file, name, &self.io), st.name().to_string())
            }
        };
        // A regular file whose size cannot be trusted (`/proc`, `/sys`, empty) is read as what
        // it is: a stream, to its end.
        let file = match length {
            Length::Bytes(_) => file,
            _ if file.is_seekable() && file.trusted_len()?.is_none() => file.into_sequential(),
            _ => file,
        };
        let planned = match length {
            Length::Bytes(n) => Some(n),
            _ => None,
        };
        let mut end = match planned {
            Some(n) if file.is_seekable() => n,
            _ => u64::MAX,
        };
        let direct = file.is_direct();
        let mut start = std::mem::take(&mut self.start).min(end);
        if !file.is_seekable() && start > 0 {
            // A replayed stream (a resumed sort's): what its runs hold is read and dropped.
            drop_stream_bytes(&file, start)?;
        }
        let mut want_end = planned;
        if let Some((a, b)) = self.windows.as_mut().and_then(|w| w.pop_front()) {
            (start, end) = (start.max(a), b.min(end));
            want_end = want_end.map(|n| n.min(b));
            // Record numbers in messages count from the input's start.
            self.file_pos = start;
        }
        self.input = Some(self.input.map_or(0, |i| i + 1));
        let file = Arc::new(file);
        self.reading = planned.zip(want_end).map(|(planned, want)| Reading {
            file: file.clone(),
            start,
            end: want,
            planned,
        });
        self.sniffed = false;
        // Inputs on tmpfs (or any regular file, in one pass), in chunks of whole pages: mapped,
        // not copied into fresh memory. A piece of fixed records becomes the chunk as it is;
        // a piece of delimited records maps the room a read buffer has after it (the start of
        // the next piece), where the rest of a record that straddles the two already lies.
        let map = self.maps_pieces()
            && oxsort_io::mapped::mappable(&file, start..end, &self.io, self.map_disk);
        let mut reader = if map {
            let overlap = self.layout.terminator().map_or(0, |_| delim_room(self.chunk_bytes));
            Feed::Mapped(oxsort_io::MappedReader::new(file, start..end, self.chunk_bytes, overlap))
        } else {
            Feed::Read(Reader::with_buffer_len(
                file,
                start..end,
                self.chunk_bytes,
                self.read_depth,
                &self.io,
                self.buf_len(),
            )?)
        };
        for b in self.spare.drain(..) {
            reader.recycle(b);
        }
        self.name = Arc::from(name.as_str());
        self.current = Some((reader, self.name.clone(), direct));
        Ok(())
    }

    fn close_current(&mut self) {
        if let Some((reader, name, direct)) = self.current.take() {
            self.files.push(FileStats::read(name.to_string(), &reader.stats(), direct));
        }
    }

    /// The current input was read to its end (`bytes` of it read): an error when that is not
    /// what the plan was made for, or its length changed since (a file truncated, replaced or
    /// written to while it was read).
    fn check_length(&mut self, bytes: u64) -> Result<()> {
        let Some(r) = self.reading.take() else { return Ok(()) };
        let read = r.start + bytes;
        let now = if r.file.is_seekable() { Some(r.file.len()?) } else { None };
        if read == r.end && now.is_none_or(|n| n == r.planned) {
            return Ok(());
        }
        // The length found: as read when reading stopped short, else as it is now.
        let found = match now {
            Some(n) if read >= r.end => n,
            _ => read,
        };
        Err(EngineError::InputChanged {
            path: r.file.path().to_path_buf(),
            expected: r.planned,
            read: found,
        })
    }

    /// Whether every input is exhausted (reads ahead one chunk to know, cut by the limit as
    /// any chunk read: a `STOPAFT` reached ends the input here too).
    pub(crate) fn is_exhausted(&mut self) -> Result<bool> {
        if self.peeked.is_none() {
            self.peeked = self.read_limited()?;
        }
        Ok(self.peeked.is_none())
    }

    /// Puts a chunk back: the next call to [`ChunkSource::next_chunk`] returns it.
    pub(crate) fn push_back(&mut self, chunk: Chunk) {
        debug_assert!(self.peeked.is_none());
        self.taken = self.taken_before;
        self.peeked = Some(chunk);
    }

    /// The next chunk, or `None` when every input is exhausted.
    pub(crate) fn next_chunk(&mut self) -> Result<Option<Chunk>> {
        let c = match self.peeked.take() {
            Some(c) => Some(c),
            None => self.read_limited()?,
        };
        if let Some(c) = &c {
            self.taken_before = self.taken;
            self.taken = c.end;
        }
        Ok(c)
    }

    /// The next chunk read, cut by the limit: `None` once the limit ended the input (what is
    /// left of it is not read) or the inputs are exhausted.
    fn read_limited(&mut self) -> Result<Option<Chunk>> {
        loop {
            if self.limit.as_ref().is_some_and(|l| l.done) {
                return Ok(None);
            }
            let Some(mut c) = self.read_chunk()? else { return Ok(None) };
            let Some(limit) = &mut self.limit else { return Ok(Some(c)) };
            limit.apply(&mut c);
            if c.records > 0 {
                return Ok(Some(c));
            }
            // All skipped (or the limit was reached before its first record): read on.
            self.recycle(c.buf);
        }
    }

    /// The next piece the current input's reader yields, opening inputs as needed; `None` at
    /// the end of the current input (the next call moves on) or of all inputs (`pending` empty).
    fn next_piece(&mut self) -> Result<Option<oxsort_io::Chunk>> {
        if self.current.is_none() {
            match self.pending.pop_front() {
                Some((input, length)) => self.open(input, length)?,
                None => return Ok(None),
            }
        }
        // A buffer for the read the reader submits next, when it has none: a recycled one, else
        // a populated one.
        let (reader, _, _) = self.current.as_mut().expect("opened above");
        if reader.spare_buffers() == 0 {
            let ready = self
                .spare
                .pop()
                .or_else(|| self.provision.as_ref().and_then(|(rx, _)| rx.try_recv().ok()));
            if let Some(b) = ready {
                reader.recycle(b);
            }
        }
        match reader.next_chunk() {
            Some(Ok(piece)) if piece.buf.is_file_mapping() && self.one_load.is_some() => {
                self.confirm_mapping(&piece)?;
                Ok(Some(piece))
            }
            Some(Ok(piece)) => Ok(Some(piece)),
            Some(Err(e)) => Err(e.into()),
            None => {
                let bytes = reader.stats().bytes;
                self.close_current();
                self.check_length(bytes)?;
                Ok(None)
            }
        }
    }

    /// The first piece mapped under [`ChunkSource::map_if_one_load`]: keeps mapping if one load
    /// holds the inputs at its records' mean length; else reads the rest of this input from
    /// the piece's end, and every input after it.
    fn confirm_mapping(&mut self, piece: &oxsort_io::Chunk) -> Result<()> {
        let (Some(check), Some(t)) = (self.one_load.take(), self.layout.terminator()) else {
            return Ok(());
        };
        let records = memchr::memchr_iter(t, piece.data()).count();
        if check.holds(piece.len, records, self.chunk_bytes, self.buf_len()) {
            return Ok(());
        }
        self.map_disk = false;
        let buf_len = self.buf_len();
        let Some((feed, _, _)) = self.current.as_mut() else { return Ok(()) };
        let Feed::Mapped(mapped) = &*feed else { return Ok(()) };
        let (file, rest) = mapped.rest();
        let before = mapped.stats();
        let reader = Reader::with_buffer_len(
            file,
            rest,
            self.chunk_bytes,
            self.read_depth,
            &self.io,
            buf_len,
        )?;
        // The mapping's helpers stop as it is dropped.
        *feed = Feed::ReadOn(before, reader);
        if let Some((threads, meters, most)) = self.provision_later.take() {
            self.provision(threads, &meters, most);
        }
        Ok(())
    }

    fn partial(&self, name: &str, end: u64, r: usize) -> EngineError {
        let (record_size, r) = (r, r as u64);
        EngineError::PartialRecord {
            path: PathBuf::from(name),
            len: end,
            record_size,
            records: end / r,
            leftover: end % r,
            offset: end / r * r,
        }
    }

    /// Builds the next chunk. Fast path: a piece that is exactly a chunk (or a shorter, whole
    /// final piece) becomes the chunk as it is. Otherwise (chunks that are not a multiple of
    /// the direct-I/O alignment, pipes returning short reads) bytes are copied into a chunk.
    fn read_chunk(&mut self) -> Result<Option<Chunk>> {
        let r = match self.layout {
            RecordLayout::Delimited(t) => return self.read_delimited(t),
            RecordLayout::Variable(max) => return self.read_variable(max),
            RecordLayout::Fixed(r) => r,
        };
        let chunk = self.read_fixed(r)?;
        if let Some(c) = chunk.as_ref().filter(|c| c.first_record == 0 && !self.sniffed) {
            self.sniffed = true;
            let sample = &c.buf[..(c.records * r).min(TEXT_SNIFF_BYTES)];
            if let Some(w) = text_warning(&c.name, sample, r) {
                self.warnings.push(w);
            }
        }
        Ok(chunk)
    }

    /// [`ChunkSource::read_chunk`] of fixed `r`-byte records.
    fn read_fixed(&mut self, r: usize) -> Result<Option<Chunk>> {
        let mut assembling: Option<(AlignedBuf, usize)> = None;
        loop {
            if self.carry.is_none() {
                match self.next_piece()? {
                    Some(p) => self.carry = Some((p.buf, 0, p.len, p.offset)),
                    None => {
                        if let Some((buf, len)) = assembling.take() {
                            if len % r != 0 {
                                return Err(self.partial(&self.name.clone(), self.file_pos, r));
                            }
                            let chunk = self.chunk(buf, len, r);
                            self.input_ended();
                            return Ok(Some(chunk));
                        }
                        self.input_ended();
                        if self.current.is_none() && self.pending.is_empty() {
                            return Ok(None);
                        }
                        continue;
                    }
                }
            }
            let (buf, pos, len, _) = self.carry.as_mut().expect("set above");
            if assembling.is_none()
                && *pos == 0
                && *len <= self.chunk_bytes
                && *len % r == 0
                && *len > 0
            {
                let (buf, _, len, _) = self.carry.take().expect("set above");
                self.consumed(len);
                return Ok(Some(self.chunk(buf, len, r)));
            }
            let (out, filled) = assembling.get_or_insert_with(|| {
                (self.spare.pop().unwrap_or_else(|| AlignedBuf::unzeroed(self.chunk_bytes)), 0)
            });
            let take = (*len - *pos).min(self.chunk_bytes - *filled);
            out[*filled..*filled + take].copy_from_slice(&buf[*pos..*pos + take]);
            *filled += take;
            *pos += take;
            let piece_done = *pos == *len;
            self.consumed(take);
            if piece_done {
                let (buf, ..) = self.carry.take().expect("set above");
                self.recycle_piece(buf);
            }
            if *filled == self.chunk_bytes {
                let (buf, len) = assembling.take().expect("set above");
                return Ok(Some(self.chunk(buf, len, r)));
            }
        }
    }

    /// Builds the next chunk of delimited records, in place when it can
    /// ([`ChunkSource::delimited_in_place`]). The copying path: bytes are copied into a chunk
    /// buffer (after the previous chunk's unfinished record) up to its end or the input's, then
    /// cut after the last terminator; what follows waits for the next chunk. An input's last
    /// record gets a terminator if it lacks one (as GNU sort writes it).
    fn read_delimited(&mut self, t: u8) -> Result<Option<Chunk>> {
        if self.leftover.is_empty() {
            if let Some(done) = self.delimited_in_place(t)? {
                return Ok(done);
            }
        }
        // After a record longer than a chunk, what followed it in its chunk may be too.
        let mut cap = self.chunk_bytes;
        while cap <= self.leftover.len() && cap < self.longest_record {
            cap = cap.saturating_mul(LONG_RECORD_GROWTH).min(self.longest_record);
        }
        let mut out: Option<AlignedBuf> = None;
        let mut filled = 0usize;
        loop {
            if !self.leftover.is_empty() && out.is_none() {
                let mut b = self.chunk_buffer(cap);
                filled = self.leftover.len();
                b[..filled].copy_from_slice(&self.leftover);
                self.leftover.clear();
                out = Some(b);
            }
            if self.carry.is_none() {
                match self.next_piece()? {
                    Some(p) => self.carry = Some((p.buf, 0, p.len, p.offset)),
                    None => {
                        // The input ended (or there is none left): its last chunk, whole.
                        if let Some(mut b) = out.take() {
                            if filled > 0 {
                                if b[filled - 1] != t {
                                    b[filled] = t;
                                    filled += 1;
                                }
                                let chunk = self.delimited_chunk(b, 0, filled, t);
                                self.input_ended();
                                return Ok(Some(chunk));
                            }
                            self.spare.push(b);
                        }
                        self.input_ended();
                        if self.current.is_none() && self.pending.is_empty() {
                            return Ok(None);
                        }
                        continue;
                    }
                }
            }
            let mut b = match out.take() {
                Some(b) => b,
                None => self.chunk_buffer(cap),
            };
            let (piece, pos, len, _) = self.carry.as_mut().expect("set above");
            let take = (*len - *pos).min(cap - filled);
            b[filled..filled + take].copy_from_slice(&piece[*pos..*pos + take]);
            filled += take;
            *pos += take;
            let piece_done = *pos == *len;
            self.consumed(take);
            if piece_done {
                let (piece, ..) = self.carry.take().expect("set above");
                self.recycle_piece(piece);
            }
            out = Some(b);
            if filled < cap {
                continue;
            }
            let b = out.take().expect("a full chunk");
            if let Some(last) = memchr::memrchr(t, &b[..filled]) {
                self.leftover.extend_from_slice(&b[last + 1..filled]);
                return Ok(Some(self.delimited_chunk(b, 0, last + 1, t)));
            }
            // A whole chunk without a terminator: one record longer than a chunk. The chunk
            // grows to hold it, as GNU sort grows its buffer, up to the longest record a load
            // of the budget holds (the load that takes it counts its size).
            if cap >= self.longest_record {
                return Err(EngineError::Input {
                    path: PathBuf::from(&*self.name),
                    source: std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "record {} is longer than {} bytes, the most a load of this memory \
                             budget holds; a larger budget reads it",
                            self.file_records + 1,
                            self.longest_record
                        ),
                    ),
                });
            }
            cap = cap.saturating_mul(LONG_RECORD_GROWTH).min(self.longest_record);
            let mut grown = self.chunk_buffer(cap);
            grown[..filled].copy_from_slice(&b[..filled]);
            if b.len() == self.buf_len() {
                self.spare.push(b);
            }
            out = Some(grown);
        }
    }

    /// A buffer for a chunk of `cap` bytes: one of the usual ones ([`ChunkSource::take_buffer`])
    /// for a chunk of the usual size, else a new one (a record longer than a chunk), with room
    /// for a terminator added at an input's end.
    fn chunk_buffer(&mut self, cap: usize) -> AlignedBuf {
        if cap == self.chunk_bytes {
            return self.take_buffer();
        }
        AlignedBuf::unzeroed((cap + 1).div_ceil(oxsort_io::DIRECT_ALIGN) * oxsort_io::DIRECT_ALIGN)
    }

    /// Lets delimited records grow past a chunk up to `bytes` (the memory a load holds), and
    /// below [`LONGEST_CHUNK`]; by default a record may be as long as a chunk.
    pub(crate) fn longest_record(&mut self, bytes: usize) {
        self.longest_record = bytes.min(LONGEST_CHUNK).max(self.chunk_bytes);
    }

    /// The fast path of delimited chunks: the piece as read becomes the chunk, from the record
    /// boundary where the previous chunk stopped to its last terminator, plus the rest of the
    /// record that straddles into the next piece, copied into the room after the data:
    ///
    /// ```text
    ///   piece k    [ ..records.. | rec  ][ room  ]     chunk k = records + rec + fragment
    ///   piece k+1  [ frag | ..records.. | rec  ]       chunk k+1 starts after `frag`
    /// ```
    ///
    /// Returns `None`, with the state left for the copying path, when a record has no
    /// terminator in the rest of its piece or its rest does not fit the room.
    fn delimited_in_place(&mut self, t: u8) -> Result<Option<Option<Chunk>>> {
        while self.carry.is_none() {
            match self.next_piece()? {
                Some(p) => self.carry = Some((p.buf, 0, p.len, p.offset)),
                None => {
                    self.input_ended();
                    if self.current.is_none() && self.pending.is_empty() {
                        return Ok(Some(None));
                    }
                }
            }
        }
        let (buf, pos, len, _) = self.carry.as_ref().expect("set above");
        let (pos, len) = (*pos, *len);
        // A chunk holds at most `most` bytes, so no more records than an entry's index can name
        // (pieces longer than a chunk come from transfers rounded up past tiny chunks).
        let most = self.chunk_bytes + delim_room(self.chunk_bytes);
        if len - pos > self.chunk_bytes {
            return Ok(None);
        }
        let Some(last) = memchr::memrchr(t, &buf[pos..len]).map(|i| pos + i) else {
            return Ok(None);
        };
        if last + 1 == len {
            let (buf, ..) = self.carry.take().expect("set above");
            self.consumed(len - pos);
            return Ok(Some(Some(self.delimited_chunk(buf, pos, len, t))));
        }
        // The last record goes on in the next piece (or ends the input unterminated).
        let next = self.next_piece()?;
        let (mut buf, ..) = self.carry.take().expect("set above");
        let Some(next) = next else {
            // The input's last record lacks its terminator: add one.
            if buf.len() <= len {
                let mut bigger = AlignedBuf::new(len + 1);
                bigger[..len].copy_from_slice(&buf[..len]);
                buf = bigger;
            }
            buf[len] = t;
            self.consumed(len - pos);
            let chunk = self.delimited_chunk(buf, pos, len + 1, t);
            self.input_ended();
            return Ok(Some(Some(chunk)));
        };
        // Room for the rest: what the buffer has, within the chunk's most, and no more than lets
        // the record stay within a chunk's length (longer ones are the copying path's error).
        let room =
            (buf.len() - len).min(most - (len - pos)).min(self.chunk_bytes - (len - last - 1));
        // A mapped piece's room maps the next piece's first bytes already (see `open`): they
        // are not copied (a write would copy the page), only looked at.
        let mapped = buf.is_file_mapping();
        let seen = next.len.min(room);
        let rest = if mapped { &buf[len..len + seen] } else { &next.buf[..seen] };
        match memchr::memchr(t, rest) {
            Some(f) => {
                if !mapped {
                    buf[len..len + f + 1].copy_from_slice(&next.buf[..f + 1]);
                }
                self.consumed(len - pos + f + 1);
                let chunk = self.delimited_chunk(buf, pos, len + f + 1, t);
                self.carry = Some((next.buf, f + 1, next.len, next.offset));
                Ok(Some(Some(chunk)))
            }
            None => {
                // A long record at the boundary: its start becomes the copying path's leftover.
                self.leftover.extend_from_slice(&buf[last + 1..len]);
                self.consumed(len - pos);
                let chunk = self.delimited_chunk(buf, pos, last + 1, t);
                self.carry = Some((next.buf, 0, next.len, next.offset));
                Ok(Some(Some(chunk)))
            }
        }
    }

    /// Counts `n` more input bytes as taken into chunks.
    fn consumed(&mut self, n: usize) {
        self.file_pos += n as u64;
        self.bytes_read += n as u64;
    }

    /// An input was read to its end: positions and record numbers restart with the next one.
    fn input_ended(&mut self) {
        self.file_records = 0;
        self.file_pos = 0;
    }

    /// A buffer for a chunk: a recycled one, else a populated one, else a new one. One byte
    /// more than a chunk, for a terminator added at an input's end. Its bytes are whatever an
    /// earlier use left (a recycled chunk's, the kept pool's: see `AlignedBuf::unzeroed`):
    /// only the bytes read into it are ever looked at.
    fn take_buffer(&mut self) -> AlignedBuf {
        self.spare
            .pop()
            .or_else(|| self.provision.as_ref().and_then(|(rx, _)| rx.try_recv().ok()))
            .unwrap_or_else(|| AlignedBuf::unzeroed(self.buf_len()))
    }

    /// A chunk of the records in `buf[start..end]` (which ends with a terminator).
    fn delimited_chunk(&mut self, buf: AlignedBuf, start: usize, end: usize, t: u8) -> Chunk {
        let mut offsets = Vec::with_capacity(offsets_room(end - start, self.record_bytes));
        offsets.push(start as u32);
        oxsort_kernels::line_ends(&buf[start..end], t, start as u32, &mut offsets);
        let records = offsets.len() - 1;
        if let Some(mean) = (end - start).checked_div(records) {
            self.record_bytes = mean.max(1);
        }
        let first_record = self.file_records;
        self.file_records += records as u64;
        // Bytes taken in but not in this chunk wait in `leftover` (an added terminator at an
        // input's end is in the chunk but not in the input).
        let end = Position {
            input: self.input.unwrap_or(0),
            offset: self.file_pos - self.leftover.len() as u64,
            record: self.file_records,
        };
        Chunk { buf, records, name: self.name.clone(), first_record, offsets, end }
    }

    /// A chunk of `len` bytes that ends at the current position in the current input.
    fn chunk(&self, buf: AlignedBuf, len: usize, r: usize) -> Chunk {
        Chunk {
            records: len / r,
            buf,
            name: self.name.clone(),
            first_record: (self.file_pos - len as u64) / r as u64,
            offsets: Vec::new(),
            end: Position {
                input: self.input.unwrap_or(0),
                offset: self.file_pos,
                record: self.file_pos / r as u64,
            },
        }
    }

    fn recycle_piece(&mut self, buf: AlignedBuf) {
        match &mut self.current {
            Some((reader, _, _)) => reader.recycle(buf),
            None => drop(buf),
        }
    }
}

/// Room for the offset table of a chunk of `bytes` bytes of delimited records when the last
/// chunk's were `record_bytes` long on average: one offset a record and one more, and a
/// sixteenth more room than that (the table grows if the records are shorter). Sized by the
/// records seen rather than by a fixed guess, the table holds what it needs: a fixed guess of
/// 32-byte records gave lines of 100 bytes three times the room they use (7% of a load), and
/// a sort of 4 GB of them under 5 GiB took two passes for the last 1.4% of its lines.
fn offsets_room(bytes: usize, record_bytes: usize) -> usize {
    let records = bytes / record_bytes.max(1);
    records + records / 16 + 2
}

/// A warning when the first bytes of the input `name` (`sample`) look like text lines although
/// they are sorted as fixed `size`-byte records: text with a newline that is not the last byte
/// of a record (records would cut lines).
fn text_warning(name: &str, sample: &[u8], size: usize) -> Option<TextAsRecords> {
    let text = sample.iter().all(|&b| b == b'\n' || b == b'\t' || b == b'\r' || b >= 0x20);
    let cut = sample.iter().position(|&b| b == b'\n').filter(|p| (p + 1) % size != 0)?;
    if !text {
        return None;
    }
    let line = cut + 1;
    // The sample's whole lines, all `line` bytes long?
    let whole = sample.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let uniform = whole % line == 0
        && sample[..whole]
            .chunks(line)
            .all(|l| l.iter().position(|&b| b == b'\n') == Some(line - 1));
    Some(TextAsRecords {
        input: name.to_string(),
        newline_at: line,
        record_size: size,
        line_length: uniform.then_some(line),
    })
}

/// Reads and drops the first `n` bytes of a stream (`file`, read in order): an error when it
/// ends before them.
fn drop_stream_bytes(file: &DirectFile, n: u64) -> Result<()> {
    /// Bytes read at a time.
    const DROP_PIECE: usize = 1 << 20;
    let mut buf = vec![0u8; DROP_PIECE];
    let mut at = 0u64;
    while at < n {
        let want = usize::try_from(n - at).map_or(DROP_PIECE, |r| r.min(DROP_PIECE));
        let got = file.read_at(&mut buf[..want], at)?;
        if got == 0 {
            return Err(EngineError::InputChanged {
                path: file.path().to_path_buf(),
                expected: n,
                read: at,
            });
        }
        at += got as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every chunk of `data` read as delimited records in chunks of `chunk` bytes.
    fn chunks_of(data: &[u8], chunk: usize, io: IoOptions) -> Vec<Chunk> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in");
        std::fs::write(&path, data).unwrap();
        let mut src = ChunkSource::new(&[Input::Path(path)], RecordLayout::LINES, chunk, 2, io);
        let mut out = Vec::new();
        while let Some(c) = src.next_chunk().unwrap() {
            out.push(c);
        }
        out
    }

    #[test]
    fn delimited_chunks_frame_whole_records_in_place_and_by_copy() {
        // Lines short and long (their rests straddle pieces), in chunks whose pieces are read
        // whole (in place) and in chunks of 5000 bytes, shorter than the aligned pieces that
        // bring them (the copying path); and a last line without its newline.
        let mut data = Vec::new();
        for i in 0..400usize {
            let len = if i % 37 == 0 { 3000 + i } else { i % 50 };
            data.extend((0..len).map(|j| b'a' + (j % 26) as u8));
            data.push(b'\n');
        }
        data.extend_from_slice(b"tail");
        let mut want = data.clone();
        want.push(b'\n');
        for io in [IoOptions::default(), IoOptions { buffered: true, ..IoOptions::default() }] {
            for chunk in [5000usize, 8192, 65536] {
                let chunks = chunks_of(&data, chunk, io.clone());
                let mut got = Vec::new();
                let mut records = 0;
                for c in &chunks {
                    assert_eq!(c.offsets.len(), c.records + 1);
                    for w in c.offsets.windows(2) {
                        let rec = &c.buf[w[0] as usize..w[1] as usize];
                        assert_eq!(rec.last(), Some(&b'\n'), "chunk {chunk}: a cut record");
                        assert!(!rec[..rec.len() - 1].contains(&b'\n'), "two records in one");
                        got.extend_from_slice(rec);
                    }
                    assert_eq!(c.first_record, records as u64, "record numbers run on");
                    records += c.records;
                }
                assert_eq!(records, 401, "chunk {chunk}");
                assert!(got == want, "chunk {chunk}: the records are not the input's");
            }
        }
    }
}

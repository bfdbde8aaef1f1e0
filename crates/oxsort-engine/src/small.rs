//! The small-input path: a sort of delimited records whose inputs hold at most
//! [`small_input_limit`] bytes runs in the calling thread, as a C program's sort would: the
//! inputs read into one buffer with ordinary buffered reads, the records sorted by index and
//! written in order through a small buffer. No thread pool, no io_uring ring, no chunk buffers or pool
//! reservation, no leftover sweep of the temp directories (nothing is spilled): what a
//! three-line sort costs is the process's start, and the memory grows with the input.
//!
//! ```text
//!  inputs ─► read (each to its end, at most the limit in all) ─┬─► fits:    sort in memory ─► verify ─► out
//!                                                             └─► too big: the planned sort
//! ```
//!
//! Inputs are streams until proven regular files: nothing is sized or read ahead of the sort.
//! A regular file whose length passes the limit is left to the planned sort unread; a stream
//! that turns out bigger goes on into the planned sort, the bytes already read first (fed
//! through a pipe, followed by the rest of the stream), so nothing read is lost.
//!
//! The self-verification is the planned sort's: every record read is summed into the checksum,
//! every record written is summed again and checked in order; a mismatch fails the sort and
//! nothing appears under the output name.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use oxsort_format::{Mode, SortKey};
use oxsort_io::{AtomicOutput, OutputTarget};

use crate::config::{Input, Output, PassChoice, SortConfig, Stream};
use crate::error::{EngineError, Result};
use crate::stats::SortStats;
use crate::verify::{checksum_hex, OrderBuilder};

/// What [`try_sort`] did.
pub(crate) enum Outcome {
    /// Sorted in memory: the output is complete and verified.
    Sorted(Box<SortStats>),
    /// Not a small-path sort, or inputs too big for it of which nothing was consumed: the
    /// planned sort reads the configuration's inputs.
    Planned,
    /// A stream too big for the small path: the planned sort reads what was read of it first.
    Handoff(Handoff),
}

/// The inputs' size up to which a sort runs in the calling thread: `OXSORT_SMALL_INPUT_BYTES`
/// when set (`0` turns the small path off, for tests that compare both paths on one input),
/// else [`crate::tuning::SMALL_INPUT_BYTES`].
pub fn small_input_limit() -> u64 {
    std::env::var("OXSORT_SMALL_INPUT_BYTES")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(crate::tuning::SMALL_INPUT_BYTES)
}

/// Whether the configuration is one the small path sorts: delimited records sorted as they
/// are read (no reshaping, filter, sums, window or journal) to a file or standard output.
fn eligible(cfg: &SortConfig) -> bool {
    let k = &cfg.key;
    let s = &cfg.spec;
    cfg.small_inputs
        && k.layout().terminator().is_some()
        && k.input_layout() == k.layout()
        && k.inrec().is_none()
        && k.outrec().is_none()
        && k.var_outrec().is_none()
        && k.outfil().is_none()
        && s.sum.is_none()
        && s.filter.is_none()
        && s.skiprec.is_none()
        && s.stopaft.is_none()
        && s.mode == Mode::Sort
        && !cfg.resume
        && cfg.passes == PassChoice::Auto
        && cfg.progress.is_none()
        && cfg.cancel.is_none()
        && matches!(cfg.output, Output::Stdout | Output::Path(_))
}

/// Sorts in the calling thread when the inputs turn out small, else says which inputs the
/// planned sort is to read.
pub(crate) fn try_sort(cfg: &SortConfig) -> Result<Outcome> {
    try_sort_within(cfg, small_input_limit())
}

/// [`try_sort`] with the limit given.
fn try_sort_within(cfg: &SortConfig, limit: u64) -> Result<Outcome> {
    if !eligible(cfg) {
        return Ok(Outcome::Planned);
    }
    let t0 = Instant::now();
    // A share of the budget at most: the records' index and the output take as much again.
    // (A budget not asked for is the machine's, far more than the limit.)
    let memory = cfg.pending.map_or(Some(cfg.memory), |(_, m)| m);
    let limit = memory.map_or(limit, |m| limit.min(m / 4));
    if limit == 0 {
        // Off: not even a stream is read before the plan.
        return Ok(Outcome::Planned);
    }
    let eol = cfg.key.layout().terminator().unwrap_or(b'\n');
    let mut data = Vec::new();
    // Where each input's records start (record number, input's name), for key errors.
    let mut starts: Vec<(usize, PathBuf)> = Vec::new();
    let mut streamed = false;
    for (i, input) in cfg.inputs.iter().enumerate() {
        let (file, name) = open(input)?;
        let meta =
            file.metadata().map_err(|e| EngineError::Input { path: name.clone(), source: e })?;
        // A regular file's length says whether it fits (`/proc` and `/sys` files, whose length
        // says nothing, are read as streams: the limit still holds as they are read).
        if meta.is_file() && data.len() as u64 + meta.len() > limit {
            return Ok(match streamed {
                true => Outcome::Handoff(handoff(data, None, &cfg.inputs[i..])?),
                false => Outcome::Planned,
            });
        }
        starts.push((data.len(), name.clone()));
        let room = limit - data.len() as u64;
        let before = data.len();
        if meta.is_file() {
            // Read in place (its length fits the limit: checked above); one byte more shows
            // whether it grew.
            data.reserve(meta.len() as usize + 1);
        }
        let mut reader = file;
        (&mut reader)
            .take(room + 1)
            .read_to_end(&mut data)
            .map_err(|e| EngineError::Input { path: name.clone(), source: e })?;
        streamed |= !meta.is_file();
        if data.len() as u64 > limit {
            // Bigger than it may be here: what was read goes first, then the rest of it.
            let partial = Some((reader, name));
            return Ok(Outcome::Handoff(handoff(data, partial, &cfg.inputs[i + 1..])?));
        }
        // An input's last record gets a terminator if it lacks one (as GNU sort writes it).
        if data.len() > before && data.last() != Some(&eol) {
            data.push(eol);
        }
    }
    let stats = sort_buffer(cfg, &data, eol, &starts)?;
    Ok(Outcome::Sorted(Box::new(SortStats { elapsed_s: t0.elapsed().as_secs_f64(), ..stats })))
}

/// Opens an input for reading, with its name in messages.
fn open(input: &Input) -> Result<(std::fs::File, PathBuf)> {
    match input {
        Input::Path(p) => std::fs::File::open(p)
            .map(|f| (f, p.clone()))
            .map_err(|e| EngineError::Input { path: p.clone(), source: e }),
        Input::Stdin => {
            let name = PathBuf::from("-");
            let fd = std::os::fd::AsFd::as_fd(&std::io::stdin())
                .try_clone_to_owned()
                .map_err(|e| EngineError::Input { path: name.clone(), source: e })?;
            Ok((std::fs::File::from(fd), name))
        }
        Input::Stream(st) => {
            let name = PathBuf::from(st.name());
            st.file()
                .map(|f| (f, name.clone()))
                .map_err(|e| EngineError::Input { path: name, source: e })
        }
    }
}

/// A stream that turned out too big for the small path, handed to the planned sort: one
/// stream of the bytes read so far followed by the rest of the input being read, fed by a
/// thread through a pipe, then the inputs not opened yet.
pub(crate) struct Handoff {
    inputs: Vec<Input>,
    /// Set by the feeder when the rest of the input fails to read, before it closes the pipe:
    /// the planned sort then stops before it commits anything (its end of the stream looks
    /// like the input's end).
    cancel: Arc<AtomicBool>,
    /// Why the feeder stopped early.
    failed: Arc<Mutex<Option<std::io::Error>>>,
    /// The name of the input the feeder reads, for its read error.
    name: PathBuf,
}

impl Handoff {
    /// Runs `sort` (the planned sort) on the handed-over inputs; a read error of the feeder is
    /// the sort's error.
    pub(crate) fn run(
        self,
        cfg: &SortConfig,
        sort: impl FnOnce(&SortConfig) -> Result<SortStats>,
    ) -> Result<SortStats> {
        let handed =
            SortConfig { inputs: self.inputs, cancel: Some(self.cancel.clone()), ..cfg.clone() };
        let r = sort(&handed);
        match self.failed.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(source) => Err(EngineError::Input { path: self.name, source }),
            None => r,
        }
    }
}

/// Bytes the feeder of a [`Handoff`] moves per read of the rest of its input.
const FEED_BYTES: usize = 1 << 20;

/// The [`Handoff`] of `read` (the bytes read so far, each input's records whole), the rest of
/// `partial` (the input being read when the limit was passed, called `name`), and `rest`.
fn handoff(
    read: Vec<u8>,
    partial: Option<(std::fs::File, PathBuf)>,
    rest: &[Input],
) -> Result<Handoff> {
    let (rx, tx) = oxsort_io::sized_pipe(FEED_BYTES)
        .map_err(|e| EngineError::Input { path: PathBuf::from("-"), source: e })?;
    let mut tx = std::fs::File::from(tx);
    let cancel = Arc::new(AtomicBool::new(false));
    let failed = Arc::new(Mutex::new(None));
    let name = partial.as_ref().map_or_else(|| PathBuf::from("-"), |(_, n)| n.clone());
    let (cancel2, failed2) = (cancel.clone(), failed.clone());
    let feeder = move || {
        // A reader that stopped (its sort failed) makes the writes fail with EPIPE here rather
        // than end the process: the sort's own error is the one to report.
        oxsort_io::cleanup::block_sigpipe_in_this_thread();
        if tx.write_all(&read).is_err() {
            return;
        }
        drop(read);
        let Some((mut f, _)) = partial else { return };
        let mut buf = vec![0u8; FEED_BYTES];
        loop {
            match f.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tx.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    *failed2.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    cancel2.store(true, Ordering::SeqCst);
                    return; // Closes the pipe after the cancel is set.
                }
            }
        }
    };
    std::thread::Builder::new()
        .name("oxsort-feed".into())
        .spawn(feeder)
        .map_err(|e| EngineError::Input { path: name.clone(), source: e })?;
    let mut inputs = vec![Input::Stream(Stream::new(rx, "-"))];
    inputs.extend(rest.iter().cloned());
    Ok(Handoff { inputs, cancel, failed, name })
}

/// Sorts the records of `data` (whole records, each ending with `eol`) into the output and
/// verifies what was written.
fn sort_buffer(
    cfg: &SortConfig,
    data: &[u8],
    eol: u8,
    starts: &[(usize, PathBuf)],
) -> Result<SortStats> {
    let keys: &SortKey = &cfg.key;
    let mut recs: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    for end in memchr::memchr_iter(eol, data) {
        recs.push((at, end + 1));
        at = end + 1;
    }
    let rec = |i: usize| &data[recs[i].0..recs[i].1];
    let in_checksum = oxsort_kernels::crc32_sum((0..recs.len()).map(rec));
    let input_record = |i: usize| {
        // The input holding record `i` and the record's number in it (1-based).
        let byte = recs[i].0;
        let k = starts.partition_point(|(s, _)| *s <= byte).saturating_sub(1);
        let first = recs.partition_point(|r| r.0 < starts[k].0);
        (starts[k].1.clone(), (i - first) as u64 + 1)
    };

    // Whole keys, built once (raw lines compare their bytes in place).
    let built = !keys.is_raw_lines() && !keys.is_copy();
    let mut key_bytes = Vec::new();
    let mut key_ends = Vec::new();
    if built {
        let mut scratch = Vec::new();
        for i in 0..recs.len() {
            let before = key_bytes.len();
            keys.append_key(rec(i), &mut key_bytes);
            if key_bytes.len() == before {
                // Nothing built: an empty key, or a record no key can be built from.
                if let Err(source) = keys.prefix(rec(i), &mut scratch) {
                    let (path, record) = input_record(i);
                    return Err(EngineError::Key { path, record, source });
                }
            }
            key_ends.push(key_bytes.len());
        }
    }
    let key = |i: usize| -> &[u8] {
        if built {
            let start = if i == 0 { 0 } else { key_ends[i - 1] };
            &key_bytes[start..key_ends[i]]
        } else if keys.is_copy() {
            &[]
        } else {
            keys.key_part(rec(i))
        }
    };
    let order: Vec<usize> = if keys.is_raw_lines() {
        // Equal keys are equal records here, so their order among themselves cannot show and
        // an unstable sort serves; each entry carries its key's first 8 bytes (big-endian,
        // zero-padded: a prefix orders as its key does until it ties), so most comparisons
        // are one integer comparison.
        let mut e: Vec<(u64, usize)> = (0..recs.len()).map(|i| (prefix8(key(i)), i)).collect();
        e.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| key(a.1).cmp(key(b.1))));
        e.into_iter().map(|(_, i)| i).collect()
    } else {
        let mut order: Vec<usize> = (0..recs.len()).collect();
        // Stable: records of equal keys keep their input order.
        order.sort_by(|&a, &b| key(a).cmp(key(b)));
        order
    };

    let mut out = OutSink::open(cfg)?;
    let mut check = OrderBuilder::new(keys);
    let (mut dropped, mut dropped_checksum) = (0u64, 0u128);
    let mut last: Option<usize> = None;
    for &i in &order {
        if cfg.spec.unique && last.is_some_and(|l| key(l) == key(i)) {
            dropped += 1;
            dropped_checksum += crc32fast::hash(rec(i)) as u128;
            continue;
        }
        last = Some(i);
        out.write(rec(i))?;
        check.push(rec(i));
    }
    let mut check = check.finish();
    check.dropped = dropped;
    check.dropped_checksum = dropped_checksum;
    check.verify(recs.len() as u64, in_checksum, cfg.spec.unique)?;
    out.commit()?;
    Ok(SortStats {
        records: recs.len() as u64,
        records_written: check.records,
        bytes: data.len() as u64,
        input_bytes_read: data.len() as u64,
        passes: 1,
        memory_budget: cfg.memory,
        threads: 1,
        checksum: checksum_hex(check.checksum),
        input_checksum: checksum_hex(in_checksum),
        dropped_duplicates: dropped,
        dropped_checksum: checksum_hex(dropped_checksum),
        duplicate_keys: check.duplicates,
        notes: cfg.notes.clone(),
        ..SortStats::default()
    })
}

/// The first 8 bytes of `key` as a big-endian integer, zero-padded.
fn prefix8(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

/// Bytes of output gathered before a write: the records go out in order from wherever they
/// are in the input, through one small buffer that stays in cache (a copy of the whole output
/// would touch as much fresh memory as the input again).
const OUT_BUFFER: usize = 64 << 10;

/// Where the sorted records go: a stream (standard output, a device, a FIFO) written in order
/// where it is, or a file written under a temporary name and renamed once verified.
enum OutSink {
    Stream { w: std::io::BufWriter<std::fs::File>, name: PathBuf },
    File { o: AtomicOutput, buf: Vec<u8>, at: u64 },
}

impl OutSink {
    fn open(cfg: &SortConfig) -> Result<OutSink> {
        let stream = |f: std::fs::File, name: PathBuf| OutSink::Stream {
            w: std::io::BufWriter::with_capacity(OUT_BUFFER, f),
            name,
        };
        let Output::Path(p) = &cfg.output else {
            let name = PathBuf::from("-");
            let fd = std::os::fd::AsFd::as_fd(&std::io::stdout())
                .try_clone_to_owned()
                .map_err(|e| EngineError::Output { path: name.clone(), why: e.to_string() })?;
            return Ok(stream(std::fs::File::from(fd), name));
        };
        let output_error = |why: String| EngineError::Output { path: p.clone(), why };
        match oxsort_io::probe_output(p).map_err(|e| output_error(e.to_string()))? {
            OutputTarget::Directory => Err(output_error("it is a directory".into())),
            OutputTarget::File => {
                let o = AtomicOutput::create_spare(p, &cfg.io, &crate::config::spare_dir(cfg))?;
                Ok(OutSink::File { o, buf: Vec::with_capacity(OUT_BUFFER), at: 0 })
            }
            OutputTarget::Stream => std::fs::OpenOptions::new()
                .write(true)
                .open(p)
                .map(|f| stream(f, p.clone()))
                .map_err(|e| output_error(crate::sink::os_message(&e))),
        }
    }

    fn write(&mut self, rec: &[u8]) -> Result<()> {
        match self {
            OutSink::Stream { w, name } => w.write_all(rec).map_err(|e| stream_error(e, name)),
            OutSink::File { o, buf, at } => {
                buf.extend_from_slice(rec);
                if buf.len() >= OUT_BUFFER {
                    o.file().write_at(buf, *at)?;
                    *at += buf.len() as u64;
                    buf.clear();
                }
                Ok(())
            }
        }
    }

    /// Ends the output once what was written is verified: the rest written, a file renamed
    /// to its name. (Dropped instead, a file's temporary goes.)
    fn commit(self) -> Result<()> {
        match self {
            OutSink::Stream { mut w, name } => w.flush().map_err(|e| stream_error(e, &name)),
            OutSink::File { o, buf, at } => {
                o.file().write_at(&buf, at)?;
                o.file().set_len(at + buf.len() as u64)?;
                o.commit().map_err(EngineError::from)
            }
        }
    }
}

/// A stream's write error: a reader that went away, or anything else.
fn stream_error(e: std::io::Error, name: &std::path::Path) -> EngineError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        EngineError::OutputClosed { path: name.to_path_buf() }
    } else {
        EngineError::Output { path: name.to_path_buf(), why: crate::sink::os_message(&e) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxsort_format::{FieldType, KeyField, KeySpec, RecordLayout, SortSpec};

    /// `n` random lines of 0 to 12 bytes of a few letters (many ties), the last one without
    /// its newline.
    fn lines(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed | 1;
        let mut out = Vec::new();
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for j in 0..(x % 13) {
                out.push(b"abcA B"[((x >> (8 + 3 * j)) % 6) as usize]);
            }
            out.push(b'\n');
        }
        out.pop();
        out
    }

    /// The lines of `t`, each with its newline (one added to an unterminated last line).
    fn lines_of(t: &[u8]) -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = t.split(|&c| c == b'\n').map(|l| [l, b"\n"].concat()).collect();
        if t.is_empty() || t.ends_with(b"\n") {
            v.pop(); // The empty piece after the last newline.
        }
        v
    }

    fn config(inputs: Vec<Input>, out: &std::path::Path, spec: SortSpec) -> SortConfig {
        SortConfig::builder(inputs, Output::Path(out.to_path_buf()))
            .spec(spec)
            .memory(64 << 20)
            .threads(2)
            .temp_dir(out.parent().unwrap())
            .small_inputs(true)
            .build()
            .unwrap()
    }

    /// The small path's output, which it must have taken.
    fn small(cfg: &SortConfig, limit: u64) -> SortStats {
        match try_sort_within(cfg, limit).unwrap() {
            Outcome::Sorted(s) => *s,
            _ => panic!("the small path was not taken"),
        }
    }

    #[test]
    fn the_small_path_writes_what_the_planned_sort_writes() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::fs::write(&a, lines(1, 3000)).unwrap();
        std::fs::write(&b, lines(2, 500)).unwrap();
        let inputs = vec![Input::Path(a.clone()), Input::Path(b.clone())];
        let specs = [
            SortSpec::with_layout(RecordLayout::LINES),
            SortSpec { unique: true, ..SortSpec::with_layout(RecordLayout::LINES) },
        ];
        // The oracle for whole lines: the lines of both inputs (each ending with a newline),
        // sorted as bytes.
        let mut all: Vec<Vec<u8>> = Vec::new();
        for f in [&a, &b] {
            all.extend(lines_of(&std::fs::read(f).unwrap()));
        }
        all.sort();
        for spec in specs {
            let unique = spec.unique;
            let (x, y) = (d.path().join("small.out"), d.path().join("planned.out"));
            let s = small(&config(inputs.clone(), &x, spec.clone()), 1 << 20);
            let p = crate::sort_planned(&config(inputs.clone(), &y, spec)).unwrap();
            let (x, y) = (std::fs::read(&x).unwrap(), std::fs::read(&y).unwrap());
            let mut want = all.clone();
            if unique {
                want.dedup();
            }
            assert!(x == want.concat(), "unique={unique}: the small path's order");
            assert!(x == y, "unique={unique}: the planned sort's bytes");
            assert_eq!((s.records, s.records_written), (p.records, p.records_written));
            assert_eq!((&s.checksum, &s.input_checksum), (&p.checksum, &p.input_checksum));
            assert_eq!(s.dropped_duplicates, p.dropped_duplicates);
        }
    }

    #[test]
    fn a_key_that_cannot_be_built_names_the_input_and_record_the_planned_sort_names() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::fs::write(&a, b"abc\nxyz\n").unwrap();
        std::fs::write(&b, b"abcd\nabc\nq\nabc\n").unwrap();
        let key = KeySpec::new(vec![KeyField::bytes(0, 2, FieldType::Char, true)]).unwrap();
        let spec = SortSpec { key: Some(key), ..SortSpec::with_layout(RecordLayout::LINES) };
        let inputs = vec![Input::Path(a), Input::Path(b.clone())];
        let out = d.path().join("out");
        let cfg = config(inputs, &out, spec);
        let small = match try_sort_within(&cfg, 1 << 20) {
            Err(EngineError::Key { path, record, .. }) => (path, record),
            _ => panic!("no key error"),
        };
        let planned = match crate::sort_planned(&cfg) {
            Err(EngineError::Key { path, record, .. }) => (path, record),
            _ => panic!("no key error"),
        };
        assert_eq!(small, (b, 3));
        assert_eq!(small, planned);
        assert!(!out.exists());
    }

    #[test]
    fn a_stream_past_the_limit_goes_on_into_the_planned_sort_whole() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        std::fs::write(&a, lines(3, 100)).unwrap();
        let piped = lines(4, 20_000);
        let (rx, tx) = oxsort_io::sized_pipe(1 << 16).unwrap();
        let sent = piped.clone();
        let writer = std::thread::spawn(move || std::fs::File::from(tx).write_all(&sent));
        let inputs = vec![Input::Path(a.clone()), Input::Stream(Stream::new(rx, "pipe"))];
        let out = d.path().join("out");
        let cfg = config(inputs, &out, SortSpec::with_layout(RecordLayout::LINES));
        let Outcome::Handoff(h) = try_sort_within(&cfg, 4096).unwrap() else {
            panic!("no handoff");
        };
        let stats = h.run(&cfg, crate::sort_planned).unwrap();
        writer.join().unwrap().unwrap();
        let mut want: Vec<Vec<u8>> = Vec::new();
        for t in [std::fs::read(&a).unwrap(), piped] {
            want.extend(lines_of(&t));
        }
        want.sort();
        assert_eq!(stats.records, want.len() as u64);
        assert!(std::fs::read(&out).unwrap() == want.concat());
    }
}

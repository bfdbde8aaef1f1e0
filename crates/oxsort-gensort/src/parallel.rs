//! Whole-file generation and validation on all cores.
//!
//! Work is cut into tasks of [`TASK_RECORDS`] records. Generation: worker threads take the next
//! task from a shared counter, so the file is produced roughly front to back while every thread
//! stays busy, and each task writes its records at their offset with one large write.
//! Validation: one read-ahead pipeline reads the file in task-sized pieces, in order, with
//! several reads in flight, and hands each piece to a worker, which produces a [`Summary`]; the
//! summaries are merged in file order, which gives exactly the sequential result.

use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use oxsort_io::{AlignedBuf, Chunk, DirectFile, Reader};

use crate::fileio::{from_io, io_options, open_input, read_all, write_at, Output};
use crate::tuning::{READ_DEPTH, STREAM_READ_DEPTH, TASK_BYTES, TASK_RECORDS};
use crate::{generate, validate_records, Checksum, Error, Kind, Summary, Validator, RECORD_LEN};

/// Progress callback: called with the number of records just finished (from any thread).
pub type Progress<'a> = Option<&'a (dyn Fn(u64) + Sync)>;

/// The number of worker threads for a request of `threads` (0 = one per CPU).
pub fn effective_threads(threads: usize) -> usize {
    if threads > 0 {
        threads
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// Runs `work(task_index)` for every task in `0..tasks` on `threads` threads; each thread owns
/// one scratch value made by `scratch`. Stops early at the first error and returns it.
fn run_tasks<S, R: Send>(
    tasks: u64,
    threads: usize,
    scratch: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, u64) -> Result<R, Error> + Sync,
) -> Result<Vec<(u64, R)>, Error> {
    let threads = effective_threads(threads).min(tasks.max(1) as usize);
    let next = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let results = Mutex::new(Vec::with_capacity(tasks as usize));
    let first_error = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut s = scratch();
                let mut mine = Vec::new();
                while !failed.load(Ordering::Relaxed) {
                    let task = next.fetch_add(1, Ordering::Relaxed);
                    if task >= tasks {
                        break;
                    }
                    match work(&mut s, task) {
                        Ok(r) => mine.push((task, r)),
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            first_error.lock().expect("no panics while locked").get_or_insert(e);
                            break;
                        }
                    }
                }
                results.lock().expect("no panics while locked").extend(mine);
            });
        }
    });
    if let Some(e) = first_error.into_inner().expect("no panics while locked") {
        return Err(e);
    }
    let mut results = results.into_inner().expect("no panics while locked");
    results.sort_unstable_by_key(|(t, _)| *t);
    Ok(results)
}

fn task_range(task: u64, count: u64) -> (u64, usize) {
    let first = task * TASK_RECORDS as u64;
    (first, (count - first).min(TASK_RECORDS as u64) as usize)
}

/// Generates `count` records starting at record `start` into the file `path` (created or
/// truncated, mode 0666 minus the umask) on `threads` threads (0 = one per CPU), and returns
/// their checksum.
///
/// The exact name `/dev/null` writes nothing but still generates and checksums (gensort's
/// behaviour). A path that is not a regular file (pipe, `/dev/stdout`, terminal) is written
/// in order as a stream.
pub fn generate_file(
    path: &Path,
    start: u128,
    count: u64,
    kind: Kind,
    threads: usize,
    progress: Progress<'_>,
) -> Result<Checksum, Error> {
    generate_file_impl(path, start, count, kind, threads, progress, true)
}

/// [`generate_file`] without computing the checksum: the CRC is ~60% of the CPU time of binary
/// generation, which matters on a machine whose cores are shared with the write path.
pub fn generate_file_without_checksum(
    path: &Path,
    start: u128,
    count: u64,
    kind: Kind,
    threads: usize,
    progress: Progress<'_>,
) -> Result<(), Error> {
    generate_file_impl(path, start, count, kind, threads, progress, false).map(|_| ())
}

fn generate_file_impl(
    path: &Path,
    start: u128,
    count: u64,
    kind: Kind,
    threads: usize,
    progress: Progress<'_>,
    checksum: bool,
) -> Result<Checksum, Error> {
    let out = Output::create(path)?;
    let out = match out {
        Output::Stream(mut f) => {
            return generate_stream(start, count, kind, threads, progress, checksum, |b| {
                f.write_next(b)
            })
        }
        Output::Null => None,
        Output::Positional(f) => Some(f),
    };
    let tasks = count.div_ceil(TASK_RECORDS as u64);
    let sums = run_tasks(
        tasks,
        threads,
        || AlignedBuf::new(TASK_BYTES),
        |buf, task| {
            let (first, n) = task_range(task, count);
            let b = &mut buf[..n * RECORD_LEN];
            generate(kind, start.wrapping_add(first as u128), b);
            let sum = if checksum { Checksum::of(b) } else { Checksum::new() };
            if let Some(f) = &out {
                write_at(f, b, first * RECORD_LEN as u64)?;
            }
            if let Some(p) = progress {
                p(n as u64);
            }
            Ok(sum)
        },
    )?;
    Ok(sums.into_iter().fold(Checksum::new(), |acc, (_, s)| acc + s))
}

/// Generates `count` records starting at `start` and writes them in order to `writer` (a pipe,
/// socket, stdout…), generating on `threads` threads while writing. Returns the checksum.
pub fn generate_to_writer(
    writer: &mut dyn Write,
    start: u128,
    count: u64,
    kind: Kind,
    threads: usize,
    progress: Progress<'_>,
) -> Result<Checksum, Error> {
    generate_stream(start, count, kind, threads, progress, true, |b| {
        writer.write_all(b).map_err(|source| Error::Io { path: "-".into(), source })
    })
}

/// Generation for sequential sinks: batches of one task per thread are generated in parallel
/// while the previous batch is written.
fn generate_stream(
    start: u128,
    count: u64,
    kind: Kind,
    threads: usize,
    progress: Progress<'_>,
    checksum: bool,
    mut write: impl FnMut(&[u8]) -> Result<(), Error>,
) -> Result<Checksum, Error> {
    let tasks = count.div_ceil(TASK_RECORDS as u64);
    let per_batch = effective_threads(threads) as u64;
    let mut sum = Checksum::new();
    let mut ready: Vec<Vec<u8>> = Vec::new();
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let mut next_task = 0u64;
    loop {
        let batch_end = (next_task + per_batch).min(tasks);
        let mut fresh: Vec<Vec<u8>> = (next_task..batch_end)
            .map(|_| spare.pop().unwrap_or_else(|| vec![0u8; TASK_BYTES]))
            .collect();
        let mut write_result = Ok(());
        let sums: Vec<Checksum> = std::thread::scope(|scope| {
            let handles: Vec<_> = fresh
                .iter_mut()
                .zip(next_task..batch_end)
                .map(|(buf, task)| {
                    scope.spawn(move || {
                        let (first, n) = task_range(task, count);
                        buf.truncate(n * RECORD_LEN);
                        generate(kind, start.wrapping_add(first as u128), buf);
                        if checksum {
                            Checksum::of(buf)
                        } else {
                            Checksum::new()
                        }
                    })
                })
                .collect();
            for buf in &ready {
                if write_result.is_ok() {
                    write_result = write(buf);
                    if let Some(p) = progress {
                        p((buf.len() / RECORD_LEN) as u64);
                    }
                }
            }
            handles.into_iter().map(|h| h.join().expect("generation does not panic")).collect()
        });
        write_result?;
        for s in sums {
            sum += s;
        }
        for mut buf in ready.drain(..) {
            buf.resize(TASK_BYTES, 0);
            spare.push(buf);
        }
        if fresh.is_empty() {
            break;
        }
        ready.append(&mut fresh);
        next_task = batch_end;
    }
    Ok(sum)
}

/// Validates the records in file `path` on `threads` threads (0 = one per CPU), exactly as
/// valsort does.
///
/// Errors: [`Error::Open`], [`Error::Empty`] for an empty file, [`Error::PartialRecord`] when
/// the length is not a multiple of 100 (after validating the whole records before it).
/// Pipes and devices are read sequentially.
///
/// The file is read by one read-ahead pipeline ([`oxsort_io::Reader`], [`READ_DEPTH`]
/// transfers of [`TASK_BYTES`] in flight) while the worker threads validate the pieces already
/// read, so the disk always has a transfer queued; each piece gives a [`Summary`], merged in file
/// order.
pub fn validate_file(
    path: &Path,
    threads: usize,
    progress: Progress<'_>,
) -> Result<Summary, Error> {
    let input = open_input(path)?;
    if !input.is_seekable() {
        return validate_stream(input, progress);
    }
    let len = input.len().map_err(from_io)?;
    if len == 0 {
        return Err(Error::Empty);
    }
    let whole = len - len % RECORD_LEN as u64;
    let total =
        if whole == 0 { Summary::new() } else { validate_range(input, whole, threads, progress)? };
    if len % RECORD_LEN as u64 != 0 {
        return Err(Error::PartialRecord { first_unordered: total.first_unordered() });
    }
    Ok(total)
}

/// Validates bytes `0..bytes` (whole records) of `input`: this thread keeps the reader's queue
/// full and hands each piece to one of `threads` workers.
fn validate_range(
    input: Arc<DirectFile>,
    bytes: u64,
    threads: usize,
    progress: Progress<'_>,
) -> Result<Summary, Error> {
    let path = input.path().to_path_buf();
    let pieces = bytes.div_ceil(TASK_BYTES as u64);
    let workers = effective_threads(threads).min(pieces as usize);
    // Pieces start at multiples of TASK_BYTES (a whole number of records and of the direct-I/O
    // alignment), so each one holds whole records.
    let mut reader =
        Reader::new(input, 0..bytes, TASK_BYTES, READ_DEPTH, &io_options()).map_err(from_io)?;
    let (work_tx, work_rx) = mpsc::sync_channel::<Chunk>(workers);
    let work_rx = Mutex::new(work_rx);
    let (back_tx, back_rx) = mpsc::channel::<AlignedBuf>();
    let summaries = Mutex::new(Vec::with_capacity(pieces as usize));
    let read = std::thread::scope(|scope| {
        for _ in 0..workers {
            let back_tx = back_tx.clone();
            let (work_rx, summaries) = (&work_rx, &summaries);
            scope.spawn(move || loop {
                let next = work_rx.lock().expect("no panics while locked").recv();
                let Ok(chunk) = next else { break };
                // Only a file that shrank while being read gives a piece of partial records.
                let data = chunk.data();
                let data = &data[..data.len() - data.len() % RECORD_LEN];
                let summary = validate_records(data);
                if let Some(p) = progress {
                    p((data.len() / RECORD_LEN) as u64);
                }
                summaries.lock().expect("no panics while locked").push((chunk.offset, summary));
                let _ = back_tx.send(chunk.buf);
            });
        }
        drop(back_tx);
        let mut read = 0u64;
        let result = loop {
            while let Ok(buf) = back_rx.try_recv() {
                reader.recycle(buf);
            }
            match reader.next_chunk() {
                None => break Ok(read),
                Some(Err(e)) => break Err(from_io(e)),
                Some(Ok(chunk)) => {
                    read += chunk.len as u64;
                    if work_tx.send(chunk).is_err() {
                        break Ok(read);
                    }
                }
            }
        };
        // Closing the queue lets the workers finish what they hold and stop.
        drop(work_tx);
        result
    })?;
    if read < bytes {
        let source = io::Error::new(io::ErrorKind::UnexpectedEof, "file shrank while being read");
        return Err(Error::Io { path, source });
    }
    let mut summaries = summaries.into_inner().expect("no panics while locked");
    summaries.sort_unstable_by_key(|(offset, _)| *offset);
    let mut total = Summary::new();
    for (_, s) in &summaries {
        total.merge(s);
    }
    Ok(total)
}

/// Validation of a pipe or device: read ahead by one thread, validated in order by this one.
fn validate_stream(input: Arc<DirectFile>, progress: Progress<'_>) -> Result<Summary, Error> {
    let mut reader = Reader::new(input, 0..u64::MAX, TASK_BYTES, STREAM_READ_DEPTH, &io_options())
        .map_err(from_io)?;
    let mut v = Validator::new();
    while let Some(chunk) = reader.next_chunk() {
        let chunk = chunk.map_err(from_io)?;
        v.feed(chunk.data());
        if let Some(p) = progress {
            p((chunk.len / RECORD_LEN) as u64);
        }
        reader.recycle(chunk.buf);
    }
    let summary = v.finish()?;
    if summary.records == 0 {
        return Err(Error::Empty);
    }
    Ok(summary)
}

/// Reads a file of concatenated 280-byte summaries and merges them in order (`valsort -s`).
pub fn validate_summaries_file(path: &Path) -> Result<Summary, Error> {
    let input = open_input(path)?;
    let bytes = read_all(&input)?;
    Summary::merge_all(&bytes)
}

/// Writes `summary` to `path` (created or truncated) in valsort's 280-byte format.
pub fn write_summary_file(path: &Path, summary: &Summary) -> Result<(), Error> {
    match Output::create(path)? {
        Output::Null => Ok(()),
        Output::Positional(f) => write_at(&f, &summary.to_bytes(), 0),
        Output::Stream(mut f) => f.write_next(&summary.to_bytes()),
    }
}

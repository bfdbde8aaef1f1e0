//! Resume recovery: a resumable sort takes over what an interrupted one left in its resume
//! directory ([`recover`]). The journal ([`crate::journal`]) says what was made durable; the
//! runs it lists are read through and verified ([`verify_runs`]) before any is merged, and what
//! verifies is adopted into the spill room ([`Recovered`]).
//!
//! ```text
//!   journal::Journal::open ─► entries ─► mismatch? ─► verify_runs (several at once)
//!                                                        │ kept: formed runs, or the last level
//!   SpillRoom::adopt ◄───────────────────────────────────┘ others removed; journal rewritten
//! ```
//!
//! This room sits above the spill room and the journal's file format; neither calls it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oxsort_format::{RecordLayout, SortKey, SortSpec};
use oxsort_io::{DirectFile, IoOptions, Reader, DIRECT_ALIGN};

use crate::chunk::Position;
use crate::error::{EngineError, Result};
use crate::journal::{
    jerr, mismatch, Entry, Header, Journal, RunEntry, RunFile, JOURNAL_FILE, LOCK_FILE,
};
use crate::spill::{Run, SpillRoom};
use crate::stats::{FileStats, PhaseStats};
use crate::tuning;
use crate::verify::StreamCheck;

/// Reads run `path` through and checks it holds `bytes` bytes of `records` records with
/// CRC32-sum `checksum`: `Ok(Err(reason))` when it does not (it is missing, shorter, longer or
/// other than was written). A run that cannot be read (an I/O error) proves nothing either
/// way: that is an error, naming the run and the offset, and the journal is left as it is.
/// Reads `transfer` bytes at a time with [`tuning::READ_DEPTH`] transfers in flight (direct
/// where the file system allows), as the sort reads its input, so a resumed sort re-reads its
/// runs at the disk's speed.
pub(crate) fn verify_run(
    path: &Path,
    f: &RunFile,
    copy: &SortKey,
    io: &IoOptions,
    transfer: usize,
) -> Result<std::result::Result<FileStats, String>> {
    let file = match DirectFile::open(path, io) {
        Ok(file) => file,
        Err(e) if e.io_error().kind() == std::io::ErrorKind::NotFound => {
            return Ok(Err("it is missing".into()))
        }
        Err(e) => return Err(e.into()),
    };
    let direct = file.is_direct();
    let len = file.len()?;
    if len != f.bytes {
        return Ok(Err(format!("it holds {len} bytes, {} were written", f.bytes)));
    }
    let mut reader = Reader::new(Arc::new(file), 0..len, transfer, tuning::READ_DEPTH, io)?;
    let mut check = StreamCheck::default();
    while let Some(chunk) = reader.next_chunk() {
        let chunk = chunk?;
        check.feed(chunk.data(), copy);
        reader.recycle(chunk.buf);
    }
    if check.is_inside_record() {
        return Ok(Err("it ends inside a record".into()));
    }
    let c = check.finish(copy);
    if c.bytes != len {
        return Ok(Err(format!("it ends at byte {}, {len} bytes were written", c.bytes)));
    }
    if c.records != f.records || c.checksum != f.checksum {
        return Ok(Err(format!(
            "it holds {} records with checksum {}, {} records with checksum {} were written",
            c.records,
            crate::verify::checksum_hex(c.checksum),
            f.records,
            crate::verify::checksum_hex(f.checksum)
        )));
    }
    Ok(Ok(FileStats::read(path.display().to_string(), &reader.stats(), direct)))
}

/// Verifies every run of `files` ([`verify_run`]), up to `threads` at once; the outcome of each,
/// in order; the first I/O error (in run order) instead, when one stops a run's reading. Each
/// reader holds `READ_DEPTH` transfers, sized so all of them together fit in `memory` bytes.
fn verify_runs(
    room: &SpillRoom,
    files: &[&RunFile],
    layout: RecordLayout,
    threads: usize,
    memory: u64,
) -> Result<Vec<std::result::Result<FileStats, (PathBuf, String)>>> {
    let copy = SortSpec::with_layout(layout).compile().expect("a copy of any layout compiles");
    let threads = threads.clamp(1, files.len().max(1));
    let share = memory / (threads * tuning::READ_DEPTH) as u64;
    let transfer =
        (share.min(tuning::TRANSFER_TARGET as u64) as usize / DIRECT_ALIGN).max(1) * DIRECT_ALIGN;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out: Vec<std::sync::Mutex<Option<_>>> =
        files.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(f) = files.get(i) else { break };
                let r = match room.file_path(f.dir, &f.name) {
                    Some(p) => verify_run(&p, f, &copy, room.io(), transfer)
                        .map(|r| r.map_err(|why| (p, why))),
                    None => {
                        Ok(Err((PathBuf::from(&f.name), "its temp directory is not given".into())))
                    }
                };
                *out[i].lock().expect("no verifier panics") = Some(r);
            });
        }
    });
    out.into_iter()
        .map(|m| m.into_inner().expect("no verifier panics").expect("every run verified"))
        .collect()
}

/// What a resumable sort takes over from the journal of an interrupted one.
#[derive(Default)]
pub(crate) struct Recovered {
    /// The formed runs' entries kept (all of them when a merge level is resumed): the input
    /// they cover and its counts.
    pub(crate) formed: Vec<RunEntry>,
    /// The runs to merge: the formed runs, or the last finished level's outputs.
    pub(crate) runs: Vec<Run>,
    /// Duplicates dropped by the merge levels finished, and their CRC32-sum.
    pub(crate) merge_dropped: (u64, u128),
    /// What was found and dropped, for the sort's notes.
    pub(crate) notes: Vec<String>,
    /// Input bytes the formed runs kept cover (not read again).
    pub(crate) input_bytes_covered: u64,
    /// Merge levels finished.
    pub(crate) levels: u32,
    /// The runs read through to verify them.
    pub(crate) files: Vec<FileStats>,
    /// The verification as a phase of the sort's statistics (`resume`).
    pub(crate) phase: Option<PhaseStats>,
}

impl Recovered {
    /// Where reading resumes: after the last formed run kept.
    pub(crate) fn position(&self) -> Option<Position> {
        self.formed.last().map(RunEntry::end)
    }
}

/// Removes the output temp files (`.NAME.oxsort-PID.tmp`, `.NAME.oxsort-PID-RAND.tmp`) process
/// `pid` left beside `output` (a file path) when it was killed.
fn remove_output_temps(output: &str, pid: u32) {
    let output = Path::new(output);
    let (Some(dir), Some(name)) = (output.parent(), output.file_name()) else { return };
    let prefix = format!(".{}.oxsort-{pid}", name.to_string_lossy());
    let Ok(listing) = std::fs::read_dir(dir) else { return };
    for f in listing.flatten() {
        let n = f.file_name();
        let n = n.to_string_lossy();
        if let Some(rest) = n.strip_prefix(&prefix) {
            if rest.ends_with(".tmp") && (rest == ".tmp" || rest.starts_with('-')) {
                let _ = std::fs::remove_file(f.path());
            }
        }
    }
}

/// Opens (or makes) `room`'s kept directories and journal. A journal found there is taken over:
/// the output temp file its sort left is removed; it must describe the sort `now` (else this
/// refuses, unless `restart`); the runs it lists are verified. Every other file in the kept
/// directories is removed, and the journal is rewritten with what is kept.
pub(crate) fn recover(
    room: &mut SpillRoom,
    now: &Header,
    restart: bool,
    layout: RecordLayout,
    threads: usize,
    memory: u64,
) -> Result<Recovered> {
    let mut rec = Recovered::default();
    room.open_kept()?;
    let dir = room.journal_dir().expect("made above");
    // Held from here on: the sort that wrote the journal is gone.
    let (entries, lock) = Journal::open(&dir, room.io())?;
    let jpath = dir.join(JOURNAL_FILE);
    let mut kept = vec![Entry::Sort(now.clone())];
    let mut levels = 0;
    if let Some(Entry::Sort(found)) = entries.first() {
        if found.pid != now.pid && found.output == now.output {
            remove_output_temps(&found.output, found.pid);
        }
        match mismatch(found, now) {
            Some(why) if !restart => {
                return Err(EngineError::ResumeRefused { journal: jpath, why });
            }
            Some(why) => rec.notes.push(format!("restart: started over ({why})")),
            None => {
                let formed: Vec<RunEntry> = entries
                    .iter()
                    .filter_map(|e| if let Entry::Run(r) = e { Some(r.clone()) } else { None })
                    .collect();
                let level = entries.iter().rev().find_map(|e| {
                    if let Entry::Level(l) = e {
                        Some(l.clone())
                    } else {
                        None
                    }
                });
                // Every run is read through, several at once; a formed run that fails ends
                // what is kept (the input from its start on is read again).
                let files: Vec<&RunFile> = match &level {
                    Some(l) => l.runs.iter().collect(),
                    None => formed.iter().map(|r| &r.file).collect(),
                };
                let checked = verify_runs(room, &files, layout, threads, memory)?;
                if let Some(l) = level {
                    match checked.into_iter().collect::<std::result::Result<Vec<_>, _>>() {
                        Ok(files) => {
                            rec.files = files;
                            rec.runs = l.runs.iter().map(|f| room.adopt(f)).collect();
                            rec.merge_dropped = (l.dropped, l.dropped_checksum);
                            levels = l.level;
                            kept.extend(formed.iter().cloned().map(Entry::Run));
                            kept.push(Entry::Level(l));
                            rec.formed = formed;
                        }
                        Err((p, why)) => rec.notes.push(format!(
                            "resume: merged run {} does not verify ({why}): started over",
                            p.display()
                        )),
                    }
                } else {
                    for (r, ok) in formed.into_iter().zip(checked) {
                        match ok {
                            Ok(file) => rec.files.push(file),
                            Err((p, why)) => {
                                rec.notes.push(format!(
                                    "resume: run {} does not verify ({why}): its input is read \
                                     again",
                                    p.display()
                                ));
                                break;
                            }
                        }
                        rec.runs.push(room.adopt(&r.file));
                        kept.push(Entry::Run(r.clone()));
                        rec.formed.push(r);
                    }
                }
            }
        }
    }
    // Runs being written when the sort stopped, runs dropped above, an old journal: gone.
    let keep: std::collections::HashSet<(usize, &str)> =
        rec.runs.iter().map(|r| (r.dir_index(), r.name())).collect();
    for (i, d) in room.temp_paths().iter().enumerate() {
        let listing = std::fs::read_dir(d).map_err(|e| jerr(d, "cannot list", e))?;
        for f in listing.flatten() {
            let name = f.file_name();
            let name = name.to_string_lossy();
            if (i == 0 && (name == LOCK_FILE || name == JOURNAL_FILE))
                || keep.contains(&(i, &*name))
            {
                continue;
            }
            let _ = std::fs::remove_file(f.path());
        }
    }
    let merged = rec
        .runs
        .iter()
        .filter_map(|r| {
            r.name()
                .rsplit('-')
                .next()?
                .parse::<usize>()
                .ok()
                .filter(|_| r.name().starts_with("merge-"))
        })
        .max()
        .map_or(0, |m| m + 1);
    if let Some(p) = rec.position() {
        rec.input_bytes_covered =
            now.inputs[..p.input].iter().map(|i| i.size).sum::<u64>() + p.offset;
    }
    rec.levels = levels;
    let formed = rec.formed.len();
    let j = Journal::write(&dir, lock, &kept, room.io())?;
    room.resume_with(j, formed, merged, levels, rec.merge_dropped, &rec.runs);
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errno of an I/O error.
    const EIO: i32 = 5;

    #[test]
    fn runs_verify_by_length_count_and_checksum() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r");
        // Lines of 1-20 bytes over several 4 KiB transfers, so records straddle them; 21 bytes
        // a record when read as fixed records (the length is a multiple of 21).
        let mut data = Vec::new();
        let mut i = 0u32;
        while data.len() < 3 * DIRECT_ALIGN || data.len() % 21 != 0 {
            data.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, (i * 7 % 20) as usize));
            data.push(b'\n');
            i += 1;
        }
        std::fs::write(&p, &data).unwrap();
        let sum_of = |recs: Vec<&[u8]>| recs.iter().map(|r| crc32fast::hash(r) as u128).sum();
        let lines: u128 = sum_of(data.split_inclusive(|&b| b == b'\n').collect());
        let fixed: u128 = sum_of(data.chunks(21).collect());
        let copy = |layout| SortSpec::with_layout(layout).compile().unwrap();
        let verify = |f: &RunFile, layout| {
            verify_run(&p, f, &copy(layout), &IoOptions::default(), DIRECT_ALIGN)
                .unwrap()
                .map(|_| ())
        };
        let f = |records, checksum| RunFile {
            name: "r".into(),
            dir: 0,
            bytes: data.len() as u64,
            records,
            checksum,
        };
        let n = data.len() as u64;
        assert_eq!(verify(&f(i as u64, lines), RecordLayout::Delimited(b'\n')), Ok(()));
        assert_eq!(verify(&f(n / 21, fixed), RecordLayout::Fixed(21)), Ok(()));
        let e = verify(&f(n / 21, fixed + 1), RecordLayout::Fixed(21)).unwrap_err();
        assert!(e.contains("checksum"), "{e}");
        let e = verify(&f(n / 21 - 1, fixed), RecordLayout::Fixed(21)).unwrap_err();
        assert!(e.contains("records"), "{e}");
        let e = verify(&RunFile { bytes: n + 1, ..f(n / 21, fixed) }, RecordLayout::Fixed(21))
            .unwrap_err();
        assert!(e.contains(&format!("{n} bytes")), "{e}");
        let e = verify(&f(n / 20, fixed), RecordLayout::Fixed(20)).unwrap_err();
        assert!(e.contains("ends inside a record"), "{e}");
        let whole = f(n / 21, fixed);
        let gone = dir.path().join("gone");
        let fixed21 = copy(RecordLayout::Fixed(21));
        let v = verify_run(&gone, &whole, &fixed21, &IoOptions::default(), DIRECT_ALIGN);
        assert!(v.unwrap().unwrap_err().contains("missing"));
        // A read that fails is no verdict on the run: an error naming it and the offset.
        let io = IoOptions {
            faults: Some(std::sync::Arc::new(oxsort_io::FaultPlan::fail_read(2, EIO))),
            ..IoOptions::default()
        };
        let e = verify_run(&p, &whole, &fixed21, &io, DIRECT_ALIGN).unwrap_err().to_string();
        let at = format!("offset {DIRECT_ALIGN}");
        assert!(e.contains(&*p.to_string_lossy()) && e.contains(&at), "{e}");
    }
}

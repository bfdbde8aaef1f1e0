//! The resume journal: what a resumable two-pass sort has made durable, so a later process
//! started with the same command line goes on from there instead of starting over.
//!
//! ```text
//!  TEMP/.oxsort-resume-<hash of inputs' paths and output>/   (mode 0700, kept on interruption)
//!      lock           flock'ed by the sort using the directory
//!      journal        one entry a line:  <crc32 of the JSON, 8 hex> <JSON>\n
//!                       sort   inputs (path, size, mtime), output, spec
//!                       run    a formed run: file, bytes, records, checksum, input it covers
//!                       level  a finished merge level: its output runs, duplicates dropped
//!      run-000000 ...  merge-1-000000 ...
//! ```
//!
//! An entry is appended only after what it describes is on disk (the run file synced, then the
//! directory); the journal is synced after each append. The journal is written and the runs are
//! verified through oxsort-io with the sort's [`IoOptions`], so its fault plan reaches them too. A torn last line (its CRC does not
//! match) and everything after it are ignored. Formed runs cover the inputs in order, so the
//! runs that verify cover a prefix of the inputs; reading resumes at the first byte not in one.
//! Runs merge with ties going to the lower run, so the output is the same bytes whatever the
//! run boundaries were: the memory budget and threads may differ between the two processes,
//! the inputs, output and spec may not.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use oxsort_io::{DirectFile, IoError, IoOptions};

use crate::chunk::Position;
use crate::config::{Input, Output, SortConfig};
use crate::error::{EngineError, Result};

/// The journal's file name in the directory.
pub(crate) const JOURNAL_FILE: &str = "journal";
/// The lock file's name in the directory.
pub(crate) const LOCK_FILE: &str = "lock";
/// The journal format; a journal of another format is not resumed from.
const FORMAT: u32 = 1;

/// One input as the sort saw it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct InputId {
    pub(crate) path: String,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i128,
}

/// What decides the output: the inputs, the output and the spec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Header {
    pub(crate) format: u32,
    /// The process that wrote the journal: its output temp files are its to remove.
    #[serde(default)]
    pub(crate) pid: u32,
    pub(crate) output: String,
    pub(crate) spec: String,
    pub(crate) inputs: Vec<InputId>,
}

/// A run file and what it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunFile {
    pub(crate) name: String,
    /// Which temp directory.
    pub(crate) dir: usize,
    pub(crate) bytes: u64,
    pub(crate) records: u64,
    /// CRC32-sum of its records.
    pub(crate) checksum: u128,
}

/// A formed run and the input it came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunEntry {
    pub(crate) file: RunFile,
    /// Where the input stands after the records of this run (and every run before it).
    pub(crate) end_input: usize,
    pub(crate) end_offset: u64,
    pub(crate) end_record: u64,
    /// Records loaded for it (after the filter) and their CRC32-sum; the run holds fewer when
    /// duplicates were dropped.
    pub(crate) in_records: u64,
    pub(crate) in_checksum: u128,
    /// Records read for it (before the filter).
    pub(crate) read: u64,
}

impl RunEntry {
    pub(crate) fn end(&self) -> Position {
        Position { input: self.end_input, offset: self.end_offset, record: self.end_record }
    }
}

/// A finished merge level: the runs the next level merges.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LevelEntry {
    /// Levels finished (1 for the first).
    pub(crate) level: u32,
    pub(crate) runs: Vec<RunFile>,
    /// Duplicates dropped by every merge level so far, and their CRC32-sum.
    pub(crate) dropped: u64,
    pub(crate) dropped_checksum: u128,
}

/// A journal line: `{"sort": {...}}`, `{"run": {...}}` or `{"level": {...}}` (externally
/// tagged: serde's internally tagged enums cannot hold the 128-bit checksums).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Entry {
    Sort(Header),
    Run(RunEntry),
    Level(LevelEntry),
}

/// The identity of the sort `cfg` describes.
pub(crate) fn header(cfg: &SortConfig) -> Result<Header> {
    let mut inputs = Vec::new();
    let mut spec = format!("{:?}", cfg.spec);
    for input in &cfg.inputs {
        let replay = match input {
            Input::Stream(st) => st.replay(),
            _ => None,
        };
        match (input, replay) {
            (Input::Path(p), _) => inputs.push(input_id(p)?),
            (_, Some(replay)) => {
                // A stream made from files again: the files stand for it, the way it is made
                // is part of the spec.
                for p in &replay.sources {
                    inputs.push(input_id(p)?);
                }
                spec = format!("{spec}; {}", replay.recipe);
            }
            _ => return Err(EngineError::NotResumable { why: crate::config::READ_ONCE }),
        }
    }
    let output = match &cfg.output {
        Output::Stdout => "-".to_string(),
        Output::Stream(st) => st.target().map_or_else(|| st.name().to_string(), file_id),
        Output::Path(p) => file_id(p),
    };
    Ok(Header { format: FORMAT, pid: std::process::id(), output, spec, inputs })
}

/// An input file as the journal records it: its path made absolute, size and modification time.
fn input_id(p: &Path) -> Result<InputId> {
    let m = std::fs::metadata(p)
        .map_err(|e| EngineError::Input { path: p.to_path_buf(), source: e })?;
    let path = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    Ok(InputId {
        path: path.display().to_string(),
        size: m.len(),
        mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
    })
}

/// An output file as the journal names it: its directory made absolute, then its name.
fn file_id(p: &Path) -> String {
    let dir = crate::config::parent_dir(p);
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    dir.join(p.file_name().unwrap_or_default()).display().to_string()
}

/// The name of the journal directory for `h`: the same for every process sorting the same
/// inputs (by path) into the same output, whatever the inputs' state and the spec. A sort
/// whose key or options changed thus finds the interrupted sort's journal and is refused
/// (with the reason) instead of starting another directory beside it.
pub(crate) fn dir_name(h: &Header) -> String {
    // FNV-1a, 64 bits: stable across builds and platforms (std's hashers are not).
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    let mut eat = |s: &str| {
        for b in s.bytes().chain([0u8]) {
            hash ^= b as u64;
            hash = hash.wrapping_mul(PRIME);
        }
    };
    eat(&h.output);
    for i in &h.inputs {
        eat(&i.path);
    }
    format!(".oxsort-resume-{hash:016x}")
}

/// Why `found` (a journal) cannot be resumed by a sort of `now`; `None` when it can.
pub(crate) fn mismatch(found: &Header, now: &Header) -> Option<String> {
    if found.format != now.format {
        return Some(format!(
            "it is of journal format {} (this oxsort writes {})",
            found.format, now.format
        ));
    }
    if found.spec != now.spec {
        return Some("the record layout, key or options differ from the interrupted sort's".into());
    }
    if found.output != now.output {
        return Some(format!("it was writing {}, not {}", found.output, now.output));
    }
    if found.inputs.len() != now.inputs.len() {
        return Some(format!(
            "it read {} inputs, this sort reads {}",
            found.inputs.len(),
            now.inputs.len()
        ));
    }
    for (f, n) in found.inputs.iter().zip(&now.inputs) {
        if f.path != n.path {
            return Some(format!("it read {} where this sort reads {}", f.path, n.path));
        }
        if f.size != n.size {
            return Some(format!(
                "input {} changed: it was {} bytes, it is {} bytes",
                n.path, f.size, n.size
            ));
        }
        if f.mtime_ns != n.mtime_ns {
            return Some(format!("input {} changed: it was modified since", n.path));
        }
    }
    None
}

/// One journal line for `e`.
fn line(e: &Entry) -> String {
    let json = serde_json::to_string(e).expect("journal entries serialize");
    format!("{:08x} {json}\n", crc32fast::hash(json.as_bytes()))
}

/// The entries of the journal text `text` up to the first damaged line.
pub(crate) fn parse(text: &[u8]) -> Vec<Entry> {
    let mut out = Vec::new();
    for l in text.split_inclusive(|&b| b == b'\n') {
        let Some(l) = l.strip_suffix(b"\n") else { break };
        let Ok(l) = std::str::from_utf8(l) else { break };
        let Some((crc, json)) = l.split_once(' ') else { break };
        if u32::from_str_radix(crc, 16).ok() != Some(crc32fast::hash(json.as_bytes())) {
            break;
        }
        match serde_json::from_str(json) {
            Ok(e) => out.push(e),
            Err(_) => break,
        }
    }
    out
}

/// The journal of one sort, with the directory's lock held while it lives.
pub(crate) struct Journal {
    dir: PathBuf,
    file: DirectFile,
    /// Its length: where the next entry goes.
    len: u64,
    _lock: File,
}

pub(crate) fn jerr(path: &Path, what: &str, e: impl std::fmt::Display) -> EngineError {
    EngineError::Journal { path: path.to_path_buf(), why: format!("{what}: {e}") }
}

/// A failed journal operation `what` on `path` (the journal's name, whatever name the file
/// was opened under), with the system's words once.
fn jio(path: &Path, what: &str, e: &IoError) -> EngineError {
    jerr(path, what, crate::sink::os_message(e.io_error()))
}

/// How the journal is written: through the page cache (an entry is a few hundred bytes), with
/// the sort's fault plan.
fn journal_io(io: &IoOptions) -> IoOptions {
    IoOptions { buffered: true, no_uring: true, faults: io.faults.clone() }
}

impl Journal {
    /// Locks the journal directory `dir` (made already) against another sort of the same
    /// inputs, and returns the entries found in it (none for a new directory).
    pub(crate) fn open(dir: &Path, io: &IoOptions) -> Result<(Vec<Entry>, File)> {
        let lock_path = dir.join(LOCK_FILE);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| jerr(&lock_path, "cannot open", e))?;
        let locked =
            oxsort_io::try_lock_exclusive(&lock).map_err(|e| jerr(&lock_path, "cannot lock", e))?;
        if !locked {
            return Err(EngineError::Journal {
                path: dir.to_path_buf(),
                why: "another oxsort is sorting the same inputs into the same output".into(),
            });
        }
        let path = dir.join(JOURNAL_FILE);
        let mut text = Vec::new();
        match DirectFile::open(&path, &journal_io(io)) {
            Ok(f) => {
                let len = f.len().map_err(|e| jio(&path, "cannot read", &e))?;
                text.resize(len as usize, 0);
                let n = f.read_at(&mut text, 0).map_err(|e| jio(&path, "cannot read", &e))?;
                text.truncate(n);
            }
            Err(e) if e.io_error().kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(jio(&path, "cannot open", &e)),
        }
        Ok((parse(&text), lock))
    }

    /// Writes `entries` as the whole journal (a new file renamed over the old one, which stays
    /// as it was when this fails) and keeps it open for appending.
    pub(crate) fn write(
        dir: &Path,
        lock: File,
        entries: &[Entry],
        io: &IoOptions,
    ) -> Result<Journal> {
        let path = dir.join(JOURNAL_FILE);
        let tmp = dir.join(format!("{JOURNAL_FILE}.new"));
        let f = DirectFile::create(&tmp, &journal_io(io))
            .map_err(|e| jio(&tmp, "cannot create", &e))?;
        let text: String = entries.iter().map(line).collect();
        f.write_at(text.as_bytes(), 0).map_err(|e| jio(&tmp, "cannot write", &e))?;
        f.sync().map_err(|e| jio(&tmp, "cannot sync", &e))?;
        std::fs::rename(&tmp, &path).map_err(|e| jerr(&path, "cannot rename", e))?;
        let j = Journal { dir: dir.to_path_buf(), file: f, len: text.len() as u64, _lock: lock };
        j.sync_dir()?;
        Ok(j)
    }

    /// Appends `e`, durably. What it describes must be synced already. After a failure the
    /// journal takes no more entries: its end may hold part of this one, which a later resume
    /// ignores (its CRC does not match).
    pub(crate) fn append(&mut self, e: &Entry) -> Result<()> {
        let path = self.dir.join(JOURNAL_FILE);
        let text = line(e);
        self.file
            .write_at(text.as_bytes(), self.len)
            .map_err(|e| jio(&path, &format!("cannot write at offset {}", self.len), &e))?;
        self.len += text.len() as u64;
        self.file.sync().map_err(|e| jio(&path, "cannot sync", &e))
    }

    /// Syncs the journal directory, so the names of the files in it are durable.
    pub(crate) fn sync_dir(&self) -> Result<()> {
        sync_dir(&self.dir)
    }
}

/// Syncs directory `dir`.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| jerr(dir, "cannot sync the directory", e))
}

/// The name prefix of resume directories (`.oxsort-resume-<16 hex>`).
const DIR_PREFIX: &str = ".oxsort-resume-";

/// Whether `name` is a resume directory's name.
fn is_resume_name(name: &str) -> bool {
    name.strip_prefix(DIR_PREFIX)
        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The runs a resume of the journal `entries` takes over: the last finished level's, or the
/// formed runs.
fn runs_taken_over(entries: &[Entry]) -> Vec<RunFile> {
    match entries.iter().rev().find_map(|e| if let Entry::Level(l) = e { Some(l) } else { None }) {
        Some(l) => l.runs.clone(),
        None => entries
            .iter()
            .filter_map(|e| if let Entry::Run(r) = e { Some(r.file.clone()) } else { None })
            .collect(),
    }
}

/// Whether `dir` is a directory of this user, not a link (what a resumable sort may use).
fn own_dir(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == oxsort_io::effective_uid())
}

/// Per temp directory of `cfg`, the bytes of runs the interrupted sort `cfg` resumes left
/// there, which it takes over rather than writes again (as far as the files' lengths tell:
/// their contents are verified later). Zero everywhere when there is no journal of this sort.
/// A journal this sort cannot resume from is refused here, before space is counted; with
/// `restart` its files are removed before the first run, and the second vector holds the
/// bytes that frees in each directory.
pub(crate) fn reusable_bytes(cfg: &SortConfig) -> Result<(Vec<u64>, Vec<u64>)> {
    let mut out = vec![0; cfg.temp_dirs.len()];
    let mut freed = vec![0; cfg.temp_dirs.len()];
    let Ok(now) = header(cfg) else { return Ok((out, freed)) };
    let name = dir_name(&now);
    let dirs: Vec<PathBuf> = cfg.temp_dirs.iter().map(|d| d.join(&name)).collect();
    let Some(first) = dirs.first().filter(|d| own_dir(d)) else { return Ok((out, freed)) };
    let jpath = first.join(JOURNAL_FILE);
    let Ok(text) = std::fs::read(&jpath) else { return Ok((out, freed)) };
    let entries = parse(&text);
    let Some(Entry::Sort(found)) = entries.first() else { return Ok((out, freed)) };
    if let Some(why) = mismatch(found, &now) {
        if !cfg.restart {
            return Err(EngineError::ResumeRefused { journal: jpath, why });
        }
        for (f, d) in freed.iter_mut().zip(&dirs) {
            if own_dir(d) {
                *f = oxsort_io::leftovers::tree_bytes(d);
            }
        }
        return Ok((out, freed));
    }
    for f in runs_taken_over(&entries) {
        let Some(d) = dirs.get(f.dir).filter(|d| own_dir(d)) else { continue };
        let on_disk = std::fs::symlink_metadata(d.join(&f.name));
        if on_disk.is_ok_and(|m| m.is_file() && m.len() == f.bytes) {
            out[f.dir] += f.bytes;
        }
    }
    Ok((out, freed))
}

/// A directory an interrupted resumable sort keeps its runs and journal in, as
/// [`resume_dirs`] finds it.
#[derive(Clone, Debug)]
pub struct ResumeDir {
    /// Its path.
    pub path: PathBuf,
    /// Disk space it holds (allocated blocks).
    pub bytes: u64,
    /// When its journal (or, without one, the directory) last changed.
    pub modified: Option<std::time::SystemTime>,
    /// The sort's output and inputs as its journal names them (none without a journal).
    pub output: Option<String>,
    /// The inputs the sort read.
    pub inputs: Vec<String>,
    /// Runs a resume would take over.
    pub runs: usize,
    /// A sort holds it now (its lock is taken): not to be removed.
    pub in_use: bool,
    /// Another user's (their name or uid): listed, never touched.
    pub owner: Option<String>,
}

/// The resume directories (`.oxsort-resume-HASH`) in `dir`, sorted by path. Links and files
/// under such a name are not followed; other users' directories are listed by owner only.
pub fn resume_dirs(dir: &Path) -> Result<Vec<ResumeDir>> {
    let listing = std::fs::read_dir(dir).map_err(|e| jerr(dir, "cannot list", e))?;
    let me = oxsort_io::effective_uid();
    let mut out = Vec::new();
    for e in listing.flatten() {
        let name = e.file_name();
        if !name.to_str().is_some_and(is_resume_name) {
            continue;
        }
        let path = e.path();
        let Ok(m) = std::fs::symlink_metadata(&path) else { continue };
        if !m.is_dir() {
            continue;
        }
        let mut d = ResumeDir {
            path: path.clone(),
            bytes: m.blocks() * 512,
            modified: m.modified().ok(),
            output: None,
            inputs: Vec::new(),
            runs: 0,
            in_use: false,
            owner: None,
        };
        if m.uid() != me {
            d.owner = Some(oxsort_io::user_label(m.uid()));
            out.push(d);
            continue;
        }
        d.bytes += oxsort_io::leftovers::tree_bytes(&path);
        let journal = path.join(JOURNAL_FILE);
        if let Ok(jm) = std::fs::symlink_metadata(&journal) {
            d.modified = jm.modified().ok().or(d.modified);
        }
        if let Ok(text) = std::fs::read(&journal) {
            let entries = parse(&text);
            if let Some(Entry::Sort(h)) = entries.first() {
                d.output = Some(h.output.clone());
                d.inputs = h.inputs.iter().map(|i| i.path.clone()).collect();
            }
            d.runs = runs_taken_over(&entries).len();
        }
        d.in_use =
            lock_of(&path).is_some_and(|l| !oxsort_io::try_lock_exclusive(&l).unwrap_or(false));
        out.push(d);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The lock file of resume directory `dir`, opened without following a link.
fn lock_of(dir: &Path) -> Option<File> {
    oxsort_io::leftovers::open_for_lock(&dir.join(LOCK_FILE), false).ok()
}

/// Removes resume directory `d` (found by [`resume_dirs`]) and everything in it, holding its
/// lock meanwhile; `Ok(false)` when a sort holds it or it is another user's (left alone).
pub fn remove_resume_dir(d: &ResumeDir) -> Result<bool> {
    if d.owner.is_some() || !own_dir(&d.path) {
        return Ok(false);
    }
    let lock = lock_of(&d.path);
    if let Some(l) = &lock {
        if !oxsort_io::try_lock_exclusive(l).map_err(|e| jerr(&d.path, "cannot lock", e))? {
            return Ok(false);
        }
    }
    match std::fs::remove_dir_all(&d.path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(jerr(&d.path, "cannot remove", e))
        }
        _ => Ok(true),
    }
}

/// What interrupted resumable sorts keep in temp directory `dir` besides `own` (this sort's
/// resume directory name, when it resumes), in words for a message about space there; empty
/// when they keep nothing.
pub(crate) fn kept_there(dir: &Path, own: Option<&str>) -> String {
    let Ok(found) = resume_dirs(dir) else { return String::new() };
    let others: Vec<&ResumeDir> = found
        .iter()
        .filter(|d| own.is_none_or(|o| d.path.file_name().is_none_or(|n| n != o)))
        .filter(|d| d.owner.is_none() && !d.in_use)
        .collect();
    if others.is_empty() {
        return String::new();
    }
    let bytes: u64 = others.iter().map(|d| d.bytes).sum();
    format!(
        "{} interrupted resumable sort{} keep{} {bytes} bytes there",
        others.len(),
        if others.len() == 1 { "" } else { "s" },
        if others.len() == 1 { "s" } else { "" },
    )
}

/// The name of the resume directory `cfg` uses, when it is resumable.
pub(crate) fn own_dir_name(cfg: &SortConfig) -> Option<String> {
    cfg.resume.then(|| header(cfg).ok().map(|h| dir_name(&h))).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str) -> Entry {
        Entry::Run(RunEntry {
            file: RunFile { name: name.into(), dir: 0, bytes: 200, records: 2, checksum: 7 },
            end_input: 0,
            end_offset: 200,
            end_record: 2,
            in_records: 2,
            in_checksum: 7,
            read: 2,
        })
    }

    #[test]
    fn every_entry_reads_back_as_written() {
        let h = Entry::Sort(Header {
            format: FORMAT,
            pid: 7,
            output: "/o".into(),
            spec: "s".into(),
            inputs: vec![InputId { path: "/i".into(), size: 1, mtime_ns: -(1i128 << 100) }],
        });
        let l = Entry::Level(LevelEntry {
            level: 1,
            runs: vec![RunFile {
                name: "m".into(),
                dir: 1,
                bytes: 2,
                records: 3,
                checksum: u128::MAX,
            }],
            dropped: 4,
            dropped_checksum: 1 << 100,
        });
        let all = vec![h, run("a"), l];
        let text: String = all.iter().map(line).collect();
        assert_eq!(parse(text.as_bytes()), all);
    }

    #[test]
    fn a_torn_or_damaged_line_ends_the_journal() {
        let text: String = [run("a"), run("b"), run("c")].iter().map(line).collect();
        assert_eq!(parse(text.as_bytes()).len(), 3);
        // Torn: the last line lacks its end.
        assert_eq!(parse(&text.as_bytes()[..text.len() - 5]).len(), 2);
        // Damaged: a byte of the second line flipped; the third is not trusted either.
        let mut bad = text.clone().into_bytes();
        let second = text.find("\n").unwrap() + 20;
        bad[second] ^= 1;
        assert_eq!(parse(&bad), vec![run("a")]);
    }
}

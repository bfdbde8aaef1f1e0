//! The engine's error type: what a caller can act on, kept apart.

use std::path::PathBuf;

/// Everything that can stop a sort. Each variant names the file involved where there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The configuration is inconsistent (no input, zero threads, ...).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An input's data cannot be sorted as asked (a record longer than a chunk holds): a
    /// problem with the data, not with the configuration.
    #[error("{0}")]
    Data(String),
    /// `resume` found a journal of an interrupted sort that does not match this one.
    #[error(
        "cannot resume from {}: {why}; run the interrupted sort as it was to go on from it, \
         start it over, or remove what it kept in {}",
        journal.display(),
        resume_temp_dir(journal).display()
    )]
    ResumeRefused {
        /// The journal found.
        journal: PathBuf,
        /// What differs.
        why: String,
    },
    /// A resumable sort was asked of what cannot be resumed (`why`: what it is; the message
    /// reads "a resumable sort {why}").
    #[error("a resumable sort {why}")]
    NotResumable {
        /// What stands in the way, in words that follow "a resumable sort".
        why: &'static str,
    },
    /// The directory a resumable sort keeps its runs in has its name taken by something this
    /// sort must not use (a link, a file, another user's directory): nothing in it is touched.
    #[error(
        "cannot resume in {}: {why}; nothing there was used. Have it removed (by its owner or \
         root) or sort with another temp directory",
        dir.display()
    )]
    ResumeBlocked {
        /// The resume directory.
        dir: PathBuf,
        /// What it is instead, and whose.
        why: String,
    },
    /// The journal of a resumable sort cannot be written or read.
    #[error("resume journal {}: {why}", path.display())]
    Journal {
        /// The journal file (or its directory).
        path: PathBuf,
        /// What went wrong.
        why: String,
    },
    /// What is sorted is inconsistent (a key past the record's end, a bad record size, ...).
    #[error("{0}")]
    Spec(#[from] oxsort_format::SpecError),
    /// An `OUTFIL` statement writes a DD name that no file is given for.
    #[error("OUTFIL (line {line}) writes the DD {name}, which is not mapped to a file")]
    OutfilUnmapped {
        /// The statement's line in the control text.
        line: usize,
        /// The DD name.
        name: String,
    },
    /// An input file's length is not a whole number of records.
    #[error(
        "{}: {} is not a whole number of {record_size}-byte records: \
         {} left over after record {records} (at byte offset {offset})",
        path.display(), bytes(*len), bytes(*leftover)
    )]
    PartialRecord {
        /// The input file.
        path: PathBuf,
        /// Its length in bytes.
        len: u64,
        /// The record size.
        record_size: usize,
        /// Whole records in the file.
        records: u64,
        /// Bytes past the last whole record.
        leftover: u64,
        /// Where the partial record starts.
        offset: u64,
    },
    /// An RDW-prefixed input record whose RDW is wrong (a length below 4 or above the
    /// longest record, nonzero bytes 3-4) or runs past the end of its file.
    #[error("{}: record {record} at byte offset {offset}: {why}", path.display())]
    BadRdw {
        /// The input file.
        path: PathBuf,
        /// Where the record (its RDW) starts.
        offset: u64,
        /// The record's number in the file (1-based).
        record: u64,
        /// What is wrong.
        why: String,
    },
    /// The memory budget is below what the plan needs.
    #[error(
        "a memory budget of {given} bytes is too small: this sort needs at least {needed} bytes ({why})"
    )]
    MemoryTooSmall {
        /// The budget given.
        given: u64,
        /// The least budget that works.
        needed: u64,
        /// What needs it.
        why: String,
    },
    /// A temp directory has less free space than the plan writes to it.
    #[error(
        "not enough temp space in {}: the plan writes {needed} bytes of runs there{}, {free} \
         bytes are free{}",
        dir.display(),
        if *output > 0 { format!(" and the output's {output} bytes go to the same file system") } else { String::new() },
        if kept.is_empty() { String::new() } else { format!("; {kept}") }
    )]
    NoTempSpace {
        /// The temp directory.
        dir: PathBuf,
        /// Bytes of runs the plan puts there (less those an interrupted sort kept for it).
        needed: u64,
        /// Bytes of the output on the same file system (0 when it goes elsewhere).
        output: u64,
        /// Bytes free.
        free: u64,
        /// What interrupted resumable sorts keep there and how to reclaim it, when they keep
        /// anything (else empty).
        kept: String,
    },
    /// A temp directory filled up while the sort wrote a run there (`ENOSPC` or `EDQUOT`).
    #[error("temp directory {} is full ({source}): {more}", dir.display())]
    TempFull {
        /// The temp directory (as given).
        dir: PathBuf,
        /// Bytes the sort still needed to write there to finish, at most (the plan's peak
        /// there less the runs kept), when the plan knew its peak.
        needed: Option<u64>,
        /// Bytes free there when the write failed.
        free: Option<u64>,
        /// How much more it needed and how to go on, in words.
        more: String,
        /// Whether the sort was resumable (what it finished there is kept).
        resumable: bool,
        /// The failed write, naming the run file and the offset.
        #[source]
        source: Box<oxsort_io::IoError>,
    },
    /// The output's filesystem has less free space than the output needs.
    #[error("not enough space for the output {}: it needs {needed} bytes, {free} bytes are free", path.display())]
    NoOutputSpace {
        /// The output file.
        path: PathBuf,
        /// Bytes the output needs.
        needed: u64,
        /// Bytes free.
        free: u64,
    },
    /// An input cannot be used (missing, unreadable, not a file).
    #[error("{}: {}", path.display(), oxsort_io::os_message(source))]
    Input {
        /// The input named.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// An input's length differs from the one the plan was made for: it was truncated,
    /// replaced or written to while the sort read it. Nothing is written under the output name.
    #[error(
        "{} changed while it was read: the sort planned for {expected} bytes and read {read}; \
         nothing was written",
        path.display()
    )]
    InputChanged {
        /// The input.
        path: PathBuf,
        /// Its length when the sort was planned.
        expected: u64,
        /// Its length as read (or as found after the read, when it grew past the part read).
        read: u64,
    },
    /// The output cannot be written where it was asked to go.
    #[error("cannot write the output {}: {why}", path.display())]
    Output {
        /// The output named.
        path: PathBuf,
        /// Why not.
        why: String,
    },
    /// The reader of a stream output stopped reading (a closed pipe): nothing is wrong with
    /// the sort, and no one is left to read the rest.
    #[error("{}: the reader stopped reading", path.display())]
    OutputClosed {
        /// The output (`-` for standard output).
        path: PathBuf,
    },
    /// A record's key cannot be read (a short record, invalid packed or zoned digits).
    #[error("{}: record {record}: {source}", path.display())]
    Key {
        /// The input holding the record.
        path: PathBuf,
        /// The record's number in that input (1-based, as DFSORT counts).
        record: u64,
        /// What is wrong with it.
        source: oxsort_format::KeyError,
    },
    /// A merge input is not in key order.
    #[error("{}: record {record} is out of order (MERGE needs every input sorted by the key)", path.display())]
    Unordered {
        /// The input.
        path: PathBuf,
        /// The record's number in that input (1-based), the first one smaller than the one before.
        record: u64,
    },
    /// An I/O error, with the path (and offset) inside.
    #[error(transparent)]
    Io(#[from] oxsort_io::IoError),
    /// Self-verification failed: what was written is not what was read, sorted.
    #[error("verification failed: {0}")]
    Verify(String),
    /// The caller asked the sort to stop (its cancel flag was set); nothing was committed.
    #[error("interrupted")]
    Interrupted,
    /// A worker thread panicked (a bug); the output was not committed.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The temp directory holding the resume directory whose journal is `journal` (where what an
/// interrupted resumable sort kept is listed and removed).
pub fn resume_temp_dir(journal: &std::path::Path) -> &std::path::Path {
    journal.parent().and_then(|d| d.parent()).unwrap_or(std::path::Path::new(""))
}

/// Shorthand for engine results.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;

/// An error and its causes on one line, each cause said once. Library errors end with the
/// operating system's words, which their sources would repeat
/// (`No such file or directory: No such file or directory (os error 2)`); front ends print
/// this instead of walking the chain themselves.
pub fn error_message(err: &dyn std::error::Error) -> String {
    let mut out = String::new();
    let mut next = Some(err);
    while let Some(e) = next {
        // In plain words: "No such file or directory", not "... (os error 2)".
        let bare = oxsort_io::without_os_error(&e.to_string());
        // Said once, whatever the case: "no space left on device writing ..." holds the
        // system's "No space left on device".
        if !out.to_lowercase().contains(&bare.to_lowercase()) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&bare);
        }
        next = e.source();
    }
    out
}

/// "1 byte", "2 bytes".
fn bytes(n: u64) -> String {
    if n == 1 {
        "1 byte".into()
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_is_said_once() {
        let os = std::io::Error::from_raw_os_error(28);
        let e = EngineError::Io(oxsort_io::IoError::write("/t/run-000001", 4096, os));
        assert_eq!(
            error_message(&e),
            "no space left on device writing /t/run-000001 at offset 4096"
        );
        let e = EngineError::Io(oxsort_io::IoError::read(
            "/t/in",
            0,
            std::io::Error::from_raw_os_error(5),
        ));
        assert_eq!(error_message(&e), "reading /t/in at offset 0: Input/output error");
    }
}

//! Injected faults in resumable two-pass sorts (several runs, two merge levels): a full temp
//! directory while a run is written, a failed run read in the merge, a failed journal append or
//! journal sync, a torn journal line, and faults during the resume itself. After each failure
//! the journal stays, the runs it lists hold what it says, nothing is under the output name,
//! and the next resume writes the bytes of an independent stable sort, reusing what the
//! journal proves, and leaves no oxsort file behind.

use std::path::PathBuf;
use std::sync::Arc;

use oxsort_engine::{error_message, plan, sort, EngineError, Input, Output, SortConfig, SortStats};
use oxsort_io::{FaultPlan, IoError, IoOptions};
use oxsort_testkit::{least_budget, leftovers, make_records, oracle_sort, seed, Pattern, Rng};

/// Records sorted: at the least budget for chunks of 16 records, five runs (the journal,
/// each run and each merge level are written in a few hundred operations, each failed in turn).
const RECORDS: usize = 5_003;
const RECORD: usize = 100;
const KEY: usize = 10;
/// Records per chunk: small, so a small input makes several runs.
const CHUNK_LOG2: u32 = 4;
/// Fan-in 2: the runs merge in more than one level, and levels are journaled.
const FAN_IN: usize = 2;
/// Every how many operations a sampled sweep fails one (the full sweeps take half a minute).
const ENOSPC_STRIDE: usize = 7;
const MERGE_READ_STRIDE: usize = 10;
const EIO: i32 = 5;
const ENOSPC: i32 = 28;

/// An input, a temp directory and an output directory, and the stable sort of the input.
struct Case {
    root: tempfile::TempDir,
    input: PathBuf,
    out: PathBuf,
    temp: PathBuf,
    data: Vec<u8>,
    expected: Vec<u8>,
    memory: u64,
}

fn case() -> Case {
    let s = seed();
    eprintln!("faults_resume: OXSORT_SEED={s}");
    // Few distinct keys: stability decides most of the output's order.
    let data = make_records(Pattern::FewDistinct, RECORDS, RECORD, &mut Rng::new(s));
    let root = tempfile::tempdir().unwrap();
    let (input, temp, out_dir) =
        (root.path().join("in.dat"), root.path().join("temp"), root.path().join("out"));
    std::fs::write(&input, &data).unwrap();
    std::fs::create_dir(&temp).unwrap();
    std::fs::create_dir(&out_dir).unwrap();
    let probe = SortConfig::builder(vec![Input::Stdin], Output::Stdout)
        .memory(1)
        .chunk_records_log2(CHUNK_LOG2)
        .build()
        .unwrap();
    let expected = oracle_sort(&data, RECORD, 0, KEY);
    Case {
        input,
        out: out_dir.join("sorted.dat"),
        temp,
        expected,
        data,
        memory: least_budget(&probe),
        root,
    }
}

/// A journal entry of a formed run, as the journal's text says (read here independently of
/// the engine: `<crc32 of the JSON, 8 hex> <JSON>\n`, damaged or torn lines ending it).
#[derive(Debug, Clone)]
struct RunLine {
    name: String,
    bytes: u64,
    records: u64,
    end_offset: u64,
}

#[derive(Debug, Default)]
struct JournalText {
    runs: Vec<RunLine>,
    levels: usize,
    /// The last level's runs: how many, and their bytes.
    level_runs: (usize, u64),
    /// Bytes of the whole entries.
    whole: usize,
}

impl JournalText {
    /// What a resume takes over: the last level's runs, or the formed runs.
    fn kept(&self) -> (usize, u64) {
        if self.levels > 0 {
            self.level_runs
        } else {
            (self.runs.len(), self.runs.iter().map(|r| r.bytes).sum())
        }
    }
}

fn read_journal(text: &[u8]) -> JournalText {
    let mut j = JournalText::default();
    for l in text.split_inclusive(|&b| b == b'\n') {
        let Some(body) = l.strip_suffix(b"\n") else { break };
        let body = std::str::from_utf8(body).unwrap();
        let (crc, json) = body.split_once(' ').unwrap();
        if u32::from_str_radix(crc, 16).unwrap() != crc32fast::hash(json.as_bytes()) {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        if let Some(r) = v.get("run") {
            assert_eq!(r["end_input"], 0);
            j.runs.push(RunLine {
                name: r["file"]["name"].as_str().unwrap().to_string(),
                bytes: r["file"]["bytes"].as_u64().unwrap(),
                records: r["file"]["records"].as_u64().unwrap(),
                end_offset: r["end_offset"].as_u64().unwrap(),
            });
        } else if let Some(l) = v.get("level") {
            j.levels += 1;
            let runs = l["runs"].as_array().unwrap();
            j.level_runs =
                (runs.len(), runs.iter().map(|r| r["bytes"].as_u64().unwrap()).sum::<u64>());
        }
        j.whole += l.len();
    }
    j
}

impl Case {
    fn config(&self, faults: Option<&Arc<FaultPlan>>) -> SortConfig {
        SortConfig::builder(vec![Input::Path(self.input.clone())], Output::Path(self.out.clone()))
            .memory(self.memory)
            .threads(2)
            .chunk_records_log2(CHUNK_LOG2)
            .max_fan_in(FAN_IN)
            .temp_dir(&self.temp)
            .resume(true)
            .io(IoOptions { faults: faults.cloned(), ..IoOptions::default() })
            .build()
            .unwrap()
    }

    /// Sorts with `faults`: the error, or `None` when the sort finished (the fault came after
    /// its last operation; the output must then be right).
    fn sort_with(&self, faults: FaultPlan) -> Option<EngineError> {
        let f = Arc::new(faults);
        match sort(&self.config(Some(&f))) {
            Ok(_) => {
                self.finished("a sort past its fault");
                None
            }
            Err(e) => {
                self.nothing_under_the_output_name(&e);
                Some(e)
            }
        }
    }

    /// A resume without faults: it must finish with the stable sort's bytes, clean.
    fn resume(&self, what: &str) -> SortStats {
        let st = sort(&self.config(None)).unwrap_or_else(|e| panic!("{what}: resume failed: {e}"));
        self.finished(what);
        st
    }

    fn finished(&self, what: &str) {
        assert!(std::fs::read(&self.out).unwrap() == self.expected, "{what}: output differs");
        assert!(std::fs::read(&self.input).unwrap() == self.data, "{what}: the input changed");
        for d in [&self.temp, self.out.parent().unwrap(), self.root.path()] {
            let left = leftovers(d);
            assert!(left.is_empty(), "{what}: left in {}: {left:?}", d.display());
        }
        std::fs::remove_file(&self.out).unwrap();
    }

    fn nothing_under_the_output_name(&self, e: &EngineError) {
        assert!(!self.out.exists(), "output exists after: {e}");
        let out_dir = leftovers(self.out.parent().unwrap());
        assert!(out_dir.is_empty(), "after {e}: left beside the output: {out_dir:?}");
        assert!(std::fs::read(&self.input).unwrap() == self.data, "after {e}: the input changed");
    }

    /// The resumable sort's directory.
    fn kept_dir(&self) -> PathBuf {
        let d = std::fs::read_dir(&self.temp).unwrap();
        d.flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with(".oxsort-resume-"))
            .expect("the journal's directory stays")
            .path()
    }

    fn journal_path(&self) -> PathBuf {
        self.kept_dir().join("journal")
    }

    fn journal_bytes(&self) -> Vec<u8> {
        std::fs::read(self.journal_path()).expect("the journal stays")
    }

    /// The journal's entries; none when the sort failed before its journal was made.
    fn journal(&self) -> JournalText {
        match std::fs::read(self.journal_path()) {
            Ok(text) => read_journal(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => JournalText::default(),
            Err(e) => panic!("reading the journal: {e}"),
        }
    }

    /// Every formed run the journal lists (before any level) holds what it says: its bytes,
    /// and exactly the stable sort of the input records it covers.
    fn journaled_runs_verify(&self, j: &JournalText, what: &str) {
        let mut start = 0usize;
        for r in &j.runs {
            let got = std::fs::read(self.kept_dir().join(&r.name))
                .unwrap_or_else(|e| panic!("{what}: journaled run {} is gone: {e}", r.name));
            let end = r.end_offset as usize;
            assert_eq!(got.len() as u64, r.bytes, "{what}: run {} length", r.name);
            assert_eq!(r.records * RECORD as u64, r.bytes, "{what}: run {} records", r.name);
            let want = oracle_sort(&self.data[start..end], RECORD, 0, KEY);
            assert!(got == want, "{what}: run {} is not the sorted input it covers", r.name);
            start = end;
        }
    }

    /// Operations of each kind a sort of this case makes without faults: reads, writes, syncs.
    fn operations(&self) -> (u64, u64, u64) {
        let f = Arc::new(FaultPlan::default());
        sort(&self.config(Some(&f))).unwrap();
        self.finished("a sort without faults");
        eprintln!("operations: {} reads, {} writes, {} syncs", f.reads(), f.writes(), f.syncs());
        (f.reads(), f.writes(), f.syncs())
    }
}

/// Whether `e` is about a file in the sort's temp directory whose name starts with `prefix`.
fn about_temp_file(e: &EngineError, c: &Case, prefix: &str) -> bool {
    let EngineError::Io(io) = e else { return false };
    io.path().starts_with(&c.temp)
        && io.path().file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix))
}

/// Whether `e` is a full temp directory met writing a file whose name starts with `prefix`.
fn about_temp_file_no_space(e: &EngineError, c: &Case, prefix: &str) -> bool {
    let EngineError::TempFull { source, .. } = e else { return false };
    source.path().starts_with(&c.temp)
        && source.path().file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix))
}

#[test]
fn enospc_writing_a_run_names_the_full_temp_directory_and_resume_reuses_the_runs_before() {
    let _serial = oxsort_testkit::serial();
    let c = case();
    let (_, writes, _) = c.operations();
    let peak = plan(&c.config(None)).unwrap().temp[0].bytes;
    // The first write that fails in the third run or later: two runs are journaled by then.
    let mut seen = false;
    for n in 1..=writes {
        let Some(e) = c.sort_with(FaultPlan::fail_write(n, ENOSPC)) else { break };
        let j = c.journal();
        if j.runs.len() < 2 || matches!(e, EngineError::Journal { .. }) {
            c.resume(&format!("write {n}"));
            continue;
        }
        // The first write after the second run's entry: the third run's.
        assert!(about_temp_file_no_space(&e, &c, "run-"), "write {n}: {e:?}");
        assert_eq!(j.levels, 0);
        seen = true;
        let EngineError::TempFull { ref dir, needed, ref source, .. } = e else { unreachable!() };
        // Which directory is full, the run and the offset, and how much more it needed: the
        // plan's peak there less the runs kept.
        assert_eq!(dir, &c.temp);
        assert!(matches!(**source, IoError::NoSpace { .. }), "{source:?}");
        assert!(source.path().starts_with(&c.temp), "{source}");
        let kept: u64 = j.runs.iter().map(|r| r.bytes).sum();
        assert!(kept > 0);
        assert_eq!(needed, Some(peak - kept), "{e}");
        let msg = error_message(&e);
        for part in [
            format!("temp directory {} is full", c.temp.display()),
            source.path().display().to_string(),
            "at offset".into(),
            format!("{} more bytes", peak - kept),
            format!("the {} runs finished there ({kept} bytes) are kept", j.runs.len()),
        ] {
            assert!(msg.contains(&part), "{part:?} not in: {msg}");
        }
        assert_eq!(msg.matches("No space left").count() + msg.matches("no space left").count(), 1);
        c.journaled_runs_verify(&j, "after ENOSPC");

        let st = c.resume("resume after ENOSPC");
        assert_eq!(st.runs_reused, j.runs.len() as u64);
        assert_eq!(st.bytes_reused, kept);
        let covered = j.runs.last().unwrap().end_offset;
        assert_eq!(st.input_bytes_read, c.data.len() as u64 - covered);
        assert_eq!(st.records, RECORDS as u64);
        break;
    }
    assert!(seen, "no injected ENOSPC failed a run write with two runs journaled");
}

#[test]
fn eio_reading_a_run_in_the_merge_names_the_run_and_offset_and_resume_finishes() {
    let _serial = oxsort_testkit::serial();
    let c = case();
    let (reads, _, _) = c.operations();
    // From the last read back: reads of runs in the merge, the final merge's first.
    let mut failed = 0;
    for n in (1..=reads).rev().take(12) {
        let e = c.sort_with(FaultPlan::fail_read(n, EIO)).expect("a read past the end");
        let j = c.journal();
        assert!(
            about_temp_file(&e, &c, "run-") || about_temp_file(&e, &c, "merge-"),
            "read {n}: {e}"
        );
        let EngineError::Io(IoError::Read { ref path, offset, .. }) = e else {
            panic!("read {n}: not a read error: {e:?}")
        };
        let msg = error_message(&e);
        assert!(msg.contains(&*path.to_string_lossy()), "{msg}");
        assert!(msg.contains(&format!("at offset {offset}")), "{msg}");
        assert!(msg.contains("Input/output error"), "{msg}");
        // The run stays, and the offset is inside it.
        let len = std::fs::metadata(path).unwrap_or_else(|e| panic!("{msg}: {e}")).len();
        assert!(offset < len, "{msg}: the run holds {len} bytes");
        // Every run was formed and journaled before the merge read them.
        assert_eq!(j.runs.last().map(|r| r.end_offset), Some(c.data.len() as u64));
        c.journaled_runs_verify_if_unmerged(&j);
        let st = c.resume(&format!("resume after EIO at read {n}"));
        assert_eq!(st.input_bytes_read, 0, "read {n}: the input was read again");
        assert!(st.runs_reused > 0);
        failed += 1;
    }
    assert_eq!(failed, 12);
}

impl Case {
    /// [`Case::journaled_runs_verify`] when no merge level removed the formed runs yet.
    fn journaled_runs_verify_if_unmerged(&self, j: &JournalText) {
        if j.levels == 0 {
            self.journaled_runs_verify(j, "before a level");
        }
    }
}

/// Fails operations `ops` of a resumable sort, one a sort (`fault(n)`), resuming without faults
/// after each; calls `check` with each failure and the journal it left; returns how many
/// failures named the journal.
fn sweep(
    c: &Case,
    ops: impl Iterator<Item = u64>,
    fault: impl Fn(u64) -> FaultPlan,
    check: impl Fn(u64, &EngineError, &JournalText),
) -> usize {
    let mut journal_failures = 0;
    for n in ops {
        let Some(e) = c.sort_with(fault(n)) else { continue };
        let j = c.journal();
        if matches!(e, EngineError::Journal { .. }) {
            journal_failures += 1;
        }
        check(n, &e, &j);
        let st = c.resume(&format!("resume after operation {n}: {e}"));
        if j.levels == 0 {
            // What the journal proves is reused, exactly: no more, no less.
            assert_eq!(st.runs_reused, j.runs.len() as u64, "operation {n}: {e}");
            let covered = j.runs.last().map_or(0, |r| r.end_offset);
            assert_eq!(st.input_bytes_read, c.data.len() as u64 - covered, "operation {n}");
        } else {
            assert_eq!(st.input_bytes_read, 0, "operation {n}: a merge level was journaled");
        }
    }
    journal_failures
}

#[test]
fn a_failed_journal_append_fails_cleanly_naming_the_journal_and_resume_reuses_what_it_proves() {
    let _serial = oxsort_testkit::serial();
    let c = case();
    let (_, writes, _) = c.operations();
    let check = |n: u64, e: &EngineError, j: &JournalText| {
        let msg = error_message(e);
        if let EngineError::Journal { path, .. } = e {
            // The first write is the journal's creation, the others appends.
            assert_eq!(path.file_name().unwrap(), if n == 1 { "journal.new" } else { "journal" });
            assert!(path.starts_with(&c.temp), "{msg}");
            assert!(msg.contains(&*path.to_string_lossy()) && msg.contains("cannot write"));
            assert!(msg.contains("Input/output error"), "{msg}");
        } else {
            assert!(msg.contains(&*c.root.path().to_string_lossy()), "names no path: {msg}");
        }
        c.journaled_runs_verify_if_unmerged(j);
    };
    // Every write: which ones are the journal's is not known from outside.
    let failures = sweep(&c, 1..=writes, |n| FaultPlan::fail_write(n, EIO), check);
    // One append per run and per merge level, and the journal's creation: each failed.
    let st = sort(&c.config(None)).unwrap();
    c.finished("a last sort");
    let appends = st.runs as usize + st.merge_levels as usize - 1;
    assert_eq!(failures, appends + 1, "{st:?}");
}

#[test]
fn a_failed_journal_sync_fails_cleanly_naming_the_journal_and_resume_is_right() {
    let _serial = oxsort_testkit::serial();
    let c = case();
    let (_, _, syncs) = c.operations();
    let check = |_: u64, e: &EngineError, j: &JournalText| {
        let msg = error_message(e);
        if let EngineError::Journal { path, .. } = e {
            assert!(path.starts_with(&c.temp) && msg.contains("cannot sync"), "{msg}");
        } else {
            // A run's sync or the output's.
            assert!(msg.contains("syncing"), "{msg}");
        }
        c.journaled_runs_verify_if_unmerged(j);
    };
    let failures = sweep(&c, 1..=syncs, |n| FaultPlan::fail_sync(n, EIO), check);
    assert!(failures >= 3, "only {failures} journal syncs failed");
}

#[test]
fn enospc_anywhere_in_a_resumable_sort_loses_nothing_and_resumes_right() {
    let _serial = oxsort_testkit::serial();
    let c = case();
    let (_, writes, _) = c.operations();
    let peak = plan(&c.config(None)).unwrap().temp[0].bytes;
    let check = |n: u64, e: &EngineError, j: &JournalText| {
        let msg = error_message(e);
        match e {
            EngineError::TempFull { dir, needed, .. } => {
                assert_eq!(dir, &c.temp, "{msg}");
                // Less what the journal lists, which a resume takes over.
                let (runs, bytes) = j.kept();
                assert_eq!(*needed, Some(peak - bytes), "write {n}: {msg}");
                let kept = format!("the {runs} runs finished there ({bytes} bytes) are kept");
                assert!(msg.contains(&kept), "write {n}: {msg}");
            }
            EngineError::Journal { .. } => assert!(msg.contains("No space left"), "{msg}"),
            // The output's own filesystem: named by the output's (temporary) name.
            EngineError::Io(IoError::NoSpace { path, .. }) => {
                assert!(path.starts_with(c.out.parent().unwrap()), "write {n}: {msg}")
            }
            other => panic!("write {n}: {other:?}"),
        }
        c.journaled_runs_verify_if_unmerged(j);
    };
    // Every seventh write: the journal's creation, runs, merged runs and the output.
    let ops = (1..=writes).step_by(ENOSPC_STRIDE);
    let failures = sweep(&c, ops, |n| FaultPlan::fail_write(n, ENOSPC), check);
    assert!(failures >= 1, "the journal's creation did not fail");
}

#[test]
fn a_torn_last_journal_line_is_ignored_not_trusted() {
    let _serial = oxsort_testkit::serial();
    let c = case();
    let (_, writes, _) = c.operations();
    // Stop the sort in run formation with three runs journaled (a kill leaves the same).
    let mut n = 1;
    let j = loop {
        assert!(n <= writes, "no write failed with three runs journaled");
        c.sort_with(FaultPlan::fail_write(n, EIO)).expect("a write fault in the sort");
        let j = c.journal();
        if j.runs.len() == 3 && j.levels == 0 {
            break j;
        }
        c.resume("cleanup");
        n += 1;
    };
    // Cut the last entry (the third run's) short, mid-line.
    let text = c.journal_bytes();
    assert_eq!(text.len(), j.whole);
    let last = text[..text.len() - 1].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    let cut = last + (text.len() - last) / 2;
    std::fs::write(c.journal_path(), &text[..cut]).unwrap();
    let torn = c.journal();
    assert_eq!(torn.runs.len(), 2);
    let st = c.resume("resume after a torn line");
    assert_eq!(st.runs_reused, 2, "the torn entry was trusted");
    assert_eq!(st.input_bytes_read, c.data.len() as u64 - j.runs[1].end_offset);

    // A damaged last line is not trusted either: where its run ends in the input, one digit
    // changed (the run itself verifies; reading on from there would lose records).
    c.sort_with(FaultPlan::fail_write(n, EIO)).expect("the same fault again");
    let mut text = c.journal_bytes();
    let field = b"\"end_offset\":";
    let at = last + text[last..].windows(field.len()).position(|w| w == field).unwrap();
    let digit = at + field.len();
    text[digit] = if text[digit] == b'1' { b'2' } else { b'1' };
    std::fs::write(c.journal_path(), &text).unwrap();
    let st = c.resume("resume after a damaged line");
    assert_eq!(st.runs_reused, 2, "the damaged entry was trusted");
}

/// Leaves the journal of a sort stopped by an EIO in its final merge: every run formed, and
/// the merge levels before the last journaled.
fn stopped_in_the_final_merge(c: &Case, reads: u64) -> (Vec<u8>, JournalText) {
    let e = c.sort_with(FaultPlan::fail_read(reads - 1, EIO)).expect("a failed merge read");
    assert!(about_temp_file(&e, c, "merge-") || about_temp_file(&e, c, "run-"), "{e}");
    let j = c.journal();
    assert!(j.levels >= 1, "no merge level journaled before the final merge");
    (c.journal_bytes(), j)
}

#[test]
fn faults_during_the_resume_fail_cleanly_and_a_second_resume_finishes() {
    let _serial = oxsort_testkit::serial();
    let c = case();
    let (reads, _, _) = c.operations();
    // How much a clean resume reads and writes from that state.
    let (journal, _) = stopped_in_the_final_merge(&c, reads);
    let f = Arc::new(FaultPlan::default());
    let clean = sort(&c.config(Some(&f))).unwrap();
    c.finished("a resume without faults");
    let (resume_reads, resume_writes) = (f.reads(), f.writes());
    assert!(resume_reads >= 3 && resume_writes >= 2);
    // The reads that verified the runs it reused (its `resume` phase; a run may take several).
    let resume = clean.phases.iter().find(|p| p.name == "resume").expect("a resume phase");
    assert_eq!(resume.files.len() as u64, clean.runs_reused);
    let verify_reads = resume.files.iter().map(|f| f.transfers).sum::<u64>();
    assert!(verify_reads >= clean.runs_reused);

    // Faults hitting: the journal, a run being verified, a run being merged.
    let mut named = [0usize; 3];
    // The resume reads the journal, then every run it lists, then merges them. Every read up
    // to the merge's, then a sample; the journal's rewrite and a sample of the merge's writes.
    let merge_reads = (verify_reads + 2..=resume_reads).step_by(MERGE_READ_STRIDE);
    let writes = [1].into_iter().chain((2..=resume_writes).step_by(MERGE_READ_STRIDE));
    let faults = (1..=verify_reads + 1)
        .chain(merge_reads)
        .map(|n| (n, FaultPlan::fail_read(n, EIO)))
        .chain(writes.map(|n| (0, FaultPlan::fail_write(n, ENOSPC))));
    for (i, (read, fault)) in faults.enumerate() {
        let (before, _) = stopped_in_the_final_merge(&c, reads);
        assert!(before == journal, "the same failure left another journal");
        let Some(e) = c.sort_with(fault) else { continue };
        let msg = error_message(&e);
        match &e {
            EngineError::Journal { path, .. } => {
                assert!(path.starts_with(c.kept_dir()), "{msg}");
                named[0] += 1;
                // The resume stopped before it changed anything.
                assert!(c.journal_bytes() == journal, "fault {i}: the journal changed: {msg}");
            }
            EngineError::Io(IoError::Read { path, offset, .. }) => {
                assert!(msg.contains(&format!("{} at offset {offset}", path.display())));
                assert!(path.starts_with(c.kept_dir()), "{msg}");
                let verifying = (2..=verify_reads + 1).contains(&read);
                if verifying {
                    // Nothing was changed before the runs verified.
                    assert!(c.journal_bytes() == journal, "fault {i}: the journal changed");
                }
                named[if verifying { 1 } else { 2 }] += 1;
            }
            EngineError::TempFull { dir, .. } => assert_eq!(dir, &c.temp, "{msg}"),
            EngineError::Io(IoError::NoSpace { path, .. }) => {
                assert!(path.starts_with(c.out.parent().unwrap()), "{msg}")
            }
            other => panic!("fault {i}: {other:?}"),
        }
        // The journal stays usable: the second resume finishes, reusing what it proves.
        let st = c.resume(&format!("second resume after fault {i}: {msg}"));
        assert_eq!(st.input_bytes_read, 0, "fault {i}: the input was read again");
        assert!(st.runs_reused > 0, "fault {i}: nothing reused");
    }
    // The journal's read and its rewrite, each run's verification, the merge's reads.
    assert_eq!(named[0], 2, "faults naming the journal during the resume");
    assert_eq!(named[1] as u64, verify_reads, "faults verifying the runs");
    assert!(named[2] >= 2, "no fault hit a run read in the resumed merge");
}

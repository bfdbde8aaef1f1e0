//! `OUTFIL`: the sorted records (after `SUM` and `OUTREC`) dealt to several outputs as they
//! stream to the main output, in the same pass.
//!
//! ```text
//!   verified, sorted bytes ──> SumSink ──> ReformatSink (OUTREC) ──> OutfilSink ──> main output
//!                                │ the records SUM deletes (XSUM)        │ records (RecordCutter)
//!                                v                                       │
//!                        .SORTXSUM.tmp (AtomicOutput)                    │
//!                                                                        v
//!                                   OutfilProgram::route: groups, conditions, splits, reports
//!                                       │            │            │
//!                                    staging      staging      staging     (aligned blocks)
//!                                       v            v            v
//!                                  .OUT1.tmp    .OUT2.tmp    .SORTOF01.tmp  (AtomicOutput)
//! ```
//!
//! All or none: every output is created under a temporary name in its directory before the
//! sort reads anything, and [`OutfilFiles::commit`] renames them only once the whole sort
//! succeeded and was verified. A failure at any point drops the files, which removes every
//! temporary name (and a failed rename removes the outputs already renamed), so a failed job
//! leaves no output and no temp file.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use oxsort_format::{KeyError, OutfilOutput, OutfilProgram, Router};
use oxsort_io::{AtomicOutput, IoOptions};

use crate::error::{EngineError, Result};
use crate::sink::{FileSink, RecordCutter, Sink, Staging, Tally};
use crate::stats::FileStats;

/// One output: its DD name and path, with the records and bytes written once finished.
#[derive(Clone, Debug)]
pub(crate) struct OutfilReport {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    pub(crate) line: usize,
    pub(crate) records: u64,
    pub(crate) report_lines: u64,
    pub(crate) bytes: u64,
    pub(crate) stats: Option<FileStats>,
}

/// The temporary files of every `OUTFIL` output, held from before the sort until the commit
/// (shared between the sort and the sink that writes them).
#[derive(Clone)]
pub(crate) struct OutfilFiles {
    inner: Arc<Mutex<Held>>,
}

struct Held {
    files: Vec<AtomicOutput>,
    reports: Vec<OutfilReport>,
}

impl OutfilFiles {
    /// Creates the temporary file of every output: `paths` maps each DD name to its file.
    pub(crate) fn create(
        outputs: &[OutfilOutput],
        paths: &[(String, PathBuf)],
        io: &IoOptions,
        spare: &std::path::Path,
    ) -> Result<OutfilFiles> {
        let mut files = Vec::with_capacity(outputs.len());
        let mut reports = Vec::with_capacity(outputs.len());
        for o in outputs {
            let Some((_, path)) = paths.iter().find(|(n, _)| n.eq_ignore_ascii_case(&o.name))
            else {
                return Err(EngineError::OutfilUnmapped { line: o.line, name: o.name.clone() });
            };
            if reports.iter().any(|r: &OutfilReport| r.path == *path) {
                return Err(EngineError::Config(format!(
                    "OUTFIL DD {} names the file {}, which another OUTFIL output writes too",
                    o.name,
                    path.display()
                )));
            }
            let file =
                AtomicOutput::create_spare(path, io, spare).map_err(|e| EngineError::Output {
                    path: path.clone(),
                    why: format!("OUTFIL DD {}: {e}", o.name),
                })?;
            files.push(file);
            reports.push(OutfilReport {
                name: o.name.clone(),
                path: path.clone(),
                line: o.line,
                records: 0,
                report_lines: 0,
                bytes: 0,
                stats: None,
            });
        }
        Ok(OutfilFiles { inner: Arc::new(Mutex::new(Held { files, reports })) })
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What each output received (complete once the sink finished).
    pub(crate) fn reports(&self) -> Vec<OutfilReport> {
        self.lock().reports.clone()
    }

    /// Cuts each file to what was written, and renames all of them to their names. When one
    /// fails, the outputs already renamed are removed: the job's outputs appear all or none.
    pub(crate) fn commit(self) -> Result<()> {
        let mut held = self.lock();
        let files = std::mem::take(&mut held.files);
        let reports = held.reports.clone();
        drop(held);
        for (f, r) in files.iter().zip(&reports) {
            f.file().set_len(r.bytes)?;
        }
        let mut done: Vec<PathBuf> = Vec::new();
        for (f, r) in files.into_iter().zip(&reports) {
            if let Err(e) = f.commit() {
                for p in &done {
                    let _ = std::fs::remove_file(p);
                }
                return Err(e.into());
            }
            done.push(r.path.clone());
        }
        Ok(())
    }
}

/// Where an output's records go: its file, staged in aligned blocks.
struct Target {
    sink: FileSink,
    staging: Staging,
}

/// The stage: passes the bytes on to the main output unchanged, and writes what each `OUTFIL`
/// output gets.
pub(crate) struct OutfilSink {
    inner: Box<dyn Sink + Send>,
    program: Arc<OutfilProgram>,
    router: Router,
    cut: RecordCutter,
    targets: Vec<Target>,
    files: OutfilFiles,
    report_lines: Vec<u64>,
    started: bool,
}

/// An error of routing a record: a record a condition cannot read, or a write that failed.
enum RouteError {
    Key(KeyError),
    Engine(EngineError),
}

impl From<KeyError> for RouteError {
    fn from(e: KeyError) -> Self {
        RouteError::Key(e)
    }
}

impl OutfilSink {
    pub(crate) fn new(
        inner: Box<dyn Sink + Send>,
        program: Arc<OutfilProgram>,
        record_len: usize,
        files: OutfilFiles,
        staging: usize,
    ) -> Self {
        let targets = {
            let held = files.lock();
            held.files
                .iter()
                .zip(&held.reports)
                .map(|(f, r)| Target {
                    sink: FileSink::named(f.file().clone(), r.path.display().to_string()),
                    staging: Staging::new(staging),
                })
                .collect::<Vec<_>>()
        };
        let router = program.router();
        let report_lines = vec![0; targets.len()];
        OutfilSink {
            inner,
            program,
            router,
            cut: RecordCutter::new("OUTFIL", record_len),
            targets,
            files,
            report_lines,
            started: false,
        }
    }

    fn push(targets: &mut [Target], o: usize, data: &[u8]) -> Result<()> {
        let t = &mut targets[o];
        t.staging.push(&mut t.sink, data)
    }

    fn start(&mut self) -> Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let (targets, lines) = (&mut self.targets, &mut self.report_lines);
        self.program.headers(|o, line| {
            lines[o] += 1;
            Self::push(targets, o, line)
        })
    }
}

impl Sink for OutfilSink {
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.inner.write(offset, data)?;
        self.start()?;
        let (program, router, targets) = (&self.program, &mut self.router, &mut self.targets);
        self.cut.feed(offset, data, |rec| {
            let n = router.offered() + 1;
            program
                .route(router, rec, |o, bytes| {
                    Self::push(targets, o, bytes).map_err(RouteError::Engine)
                })
                .map_err(|e| match e {
                    RouteError::Engine(e) => e,
                    RouteError::Key(source) => EngineError::Key {
                        path: PathBuf::from("OUTFIL (records after SUM and OUTREC)"),
                        record: n,
                        source,
                    },
                })
        })
    }

    fn stats(&self) -> FileStats {
        self.inner.stats()
    }

    fn finish(&mut self) -> Result<()> {
        self.cut.finish()?;
        self.start()?;
        let (targets, lines) = (&mut self.targets, &mut self.report_lines);
        self.program.trailers(&self.router, |o, line| {
            lines[o] += 1;
            Self::push(targets, o, line)
        })?;
        let mut held = self.files.lock();
        for (o, t) in self.targets.iter_mut().enumerate() {
            let bytes = t.staging.finish(&mut t.sink)?;
            let r = &mut held.reports[o];
            r.bytes = bytes;
            r.records = self.router.written()[o];
            r.report_lines = self.report_lines[o];
            r.stats = Some(t.sink.stats());
        }
        drop(held);
        self.inner.finish()
    }

    fn tally(&self) -> Tally {
        self.inner.tally()
    }
}

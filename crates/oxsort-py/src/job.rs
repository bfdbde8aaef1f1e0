//! A job (a sort, a merge, OUTFIL's outputs, a JOINKEYS join: what the job layer resolves
//! the call's [`oxsort_job::JobRequest`] into) running on a thread of its own, so the calling Python thread can wait for it in
//! short slices with the GIL released: between slices Python runs its signal handlers (Ctrl-C)
//! and asynchronous exceptions, and draws progress, all on the caller's thread.
//!
//! ```text
//!  Python caller                         sort thread
//!  job = start(...)  ───────spawn──────▶  oxsort_engine::sort(cfg)
//!  while not job.wait(0.05):                │ progress events ─▶ job.progress()
//!      for p in job.progress(): cb(*p)      │ cancel flag read at every event
//!  (KeyboardInterrupt) job.cancel() ──────▶ │ Err(Interrupted): temp files and
//!  job.result()  ◀──────join────────────────┘   partial output removed
//! ```

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use oxsort_engine::{Phase, SortStats};
use oxsort_job::{joinkeys, Job as Resolved, JobError};
use pyo3::prelude::*;

use crate::errors::{engine_error, Error, SpecError};
use crate::spec::{build_config, job_error, request, resolve, Hooks, SpecArgs};

/// A progress event: phase, bytes done, bytes in all.
type Event = (Phase, u64, Option<u64>);

/// What Python has not seen yet: the last event of each phase that ended since it last asked
/// (a phase can be shorter than the poll interval), and the latest event.
#[derive(Default)]
struct Last {
    ended: Vec<Event>,
    latest: Option<Event>,
}

/// The outcome slot (the statistics as JSON) and the condition variable signalled when it
/// fills.
type Outcome = (Mutex<Option<Result<serde_json::Value, JobError>>>, Condvar);

/// A running sort (`oxsort._native.Job`).
#[pyclass(module = "oxsort._native")]
pub(crate) struct Job {
    cancel: Arc<AtomicBool>,
    last: Arc<Mutex<Last>>,
    outcome: Arc<Outcome>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The call's arguments, for the words of its errors.
    spec: SpecArgs,
}

/// Starts the job of `inputs` into `output` (a sort, or a merge; either may be left out when
/// the control statements or `dd=` name them); errors in the specification and the data sets
/// are raised here, before any work.
#[pyfunction]
#[pyo3(signature = (inputs, output, spec, merge))]
pub(crate) fn start(
    inputs: Vec<PathBuf>,
    output: Option<PathBuf>,
    spec: SpecArgs,
    merge: bool,
) -> PyResult<Job> {
    let cancel = Arc::new(AtomicBool::new(false));
    let last: Arc<Mutex<Last>> = Arc::new(Mutex::new(Last::default()));
    let l = last.clone();
    let hooks = Hooks {
        cancel: cancel.clone(),
        progress: Box::new(move |p| {
            let mut l = l.lock().unwrap_or_else(|e| e.into_inner());
            match l.latest {
                Some(prev) if prev.0 != p.phase => l.ended.push(prev),
                _ => {}
            }
            l.latest = Some((p.phase, p.done, p.total));
        }),
    };
    let job = resolve(request(&spec, inputs, output, merge, Some(hooks))?, &spec)?;
    if spec.row_checksum && !matches!(job, Resolved::Table(_)) {
        return Err(SpecError::new_err(
            "row_checksum=True sums a table sort's rows: give by= (the sort columns)",
        ));
    }
    let run: Box<dyn FnOnce() -> Result<serde_json::Value, JobError> + Send> = match job {
        Resolved::Sort(job) => {
            let cfg = job.builder().build().map_err(engine_error)?;
            Box::new(move || oxsort_engine::sort(&cfg).map(json).map_err(JobError::from))
        }
        Resolved::Join(job) => Box::new(move || joinkeys::run(&job).map(|done| json(done.stats))),
        Resolved::Table(mut job) => {
            job.sort.row_checksum = spec.row_checksum;
            Box::new(move || {
                let done = job.run()?;
                let mut stats = json(done.engine);
                if let (Some(sum), Some(m)) = (done.rows_checksum, stats.as_object_mut()) {
                    m.insert("rows_checksum".into(), format!("{sum:016x}").into());
                }
                Ok(stats)
            })
        }
    };
    let outcome: Arc<Outcome> = Arc::new((Mutex::new(None), Condvar::new()));
    let o = outcome.clone();
    let thread = std::thread::Builder::new()
        .name("oxsort-sort".into())
        .spawn(move || {
            let r = run();
            let (m, cv) = &*o;
            *m.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            cv.notify_all();
        })
        .map_err(|e| Error::new_err(format!("cannot start the sort thread: {e}")))?;
    Ok(Job { cancel, last, outcome, thread: Mutex::new(Some(thread)), spec })
}

#[pymethods]
impl Job {
    /// Waits up to `timeout` seconds (GIL released); whether the sort has ended.
    fn wait(&self, py: Python<'_>, timeout: f64) -> bool {
        py.allow_threads(|| {
            let (m, cv) = &*self.outcome;
            let g = m.lock().unwrap_or_else(|e| e.into_inner());
            let (g, _) = cv
                .wait_timeout_while(g, Duration::from_secs_f64(timeout.max(0.0)), |r| r.is_none())
                .unwrap_or_else(|e| e.into_inner());
            g.is_some()
        })
    }

    /// Progress events as `(phase, done, total)`: the last event of each phase that ended
    /// since the previous call, then the latest event (empty before the first).
    fn progress(&self) -> Vec<(&'static str, u64, Option<u64>)> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let ended = std::mem::take(&mut last.ended);
        ended
            .into_iter()
            .chain(last.latest)
            .map(|(p, d, t)| {
                let name = match p {
                    Phase::Input => "input",
                    Phase::Merge => "merge",
                    Phase::Output => "output",
                };
                (name, d, t)
            })
            .collect()
    }

    /// Asks the sort to stop at its next progress event.
    fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Waits for the end (GIL released) and returns the statistics as JSON, or raises the
    /// sort's error (`KeyboardInterrupt` after a cancel).
    fn result(&self, py: Python<'_>) -> PyResult<String> {
        let handle = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle {
            py.allow_threads(|| h.join())
                .map_err(|_| Error::new_err("internal error: the sort thread panicked"))?;
        }
        let r = self.outcome.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        match r {
            Some(Ok(stats)) => Ok(stats.to_string()),
            Some(Err(e)) => Err(job_error(e, &self.spec)),
            None => Err(Error::new_err("the result of this sort was already taken")),
        }
    }
}

impl Drop for Job {
    /// A job dropped unfinished is stopped, and its cleanup waited for.
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        if let Some(h) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = h.join();
        }
    }
}

/// A sort's statistics as JSON (`oxsort sort --stats=json`).
fn json(stats: SortStats) -> serde_json::Value {
    serde_json::to_value(stats).expect("the statistics are plain data")
}

/// The plan of a job as JSON (`oxsort explain --json`).
#[pyfunction]
#[pyo3(signature = (inputs, output, spec))]
pub(crate) fn explain(
    inputs: Vec<PathBuf>,
    output: Option<PathBuf>,
    spec: SpecArgs,
) -> PyResult<String> {
    let json = match resolve(request(&spec, inputs, output, false, None)?, &spec)? {
        Resolved::Sort(job) => {
            let cfg = job.builder().build().map_err(engine_error)?;
            let plan = oxsort_engine::plan(&cfg).map_err(engine_error)?;
            serde_json::to_value(&plan)
                .map_err(|e| Error::new_err(format!("internal error: plan: {e}")))?
        }
        Resolved::Join(job) => joinkeys::explain(&job).map_err(|e| job_error(e, &spec))?.json,
        Resolved::Table(job) => {
            let e = job.explain().map_err(crate::spec::table_error)?;
            serde_json::to_value(&e)
                .map_err(|e| Error::new_err(format!("internal error: plan: {e}")))?
        }
    };
    Ok(json.to_string())
}

/// Checks a specification without sorting anything (no file is touched).
#[pyfunction]
pub(crate) fn check_spec(spec: SpecArgs) -> PyResult<()> {
    build_config(&spec, vec![PathBuf::from("in")], PathBuf::from("out"), false, None).map(|_| ())
}

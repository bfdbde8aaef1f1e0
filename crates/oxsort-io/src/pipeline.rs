//! What the [`Reader`](crate::Reader) and [`Writer`](crate::Writer) pipelines share: the
//! operations they hand to a backend, the two backends (io_uring, thread pool), statistics.

use std::collections::VecDeque;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use crate::error::IoError;
use crate::file::{DirectFile, IoOptions};
use crate::tuning::MAX_POOL_THREADS;
use crate::uring::UringEngine;

use crate::op::{run_sync, BusyClock, Dir, Done, Op};

/// Throughput statistics of a pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Bytes transferred by completed operations.
    pub bytes: u64,
    /// Completed operations.
    pub transfers: u64,
    /// Wall time during which at least one operation was in flight (from submission until the
    /// pipeline observed the completion).
    pub busy: Duration,
    /// Wall time since the pipeline was created (until `finish` for a [`Writer`](crate::Writer)).
    pub elapsed: Duration,
}

impl IoStats {
    /// Bytes per second over the elapsed time (0 when nothing elapsed).
    pub fn throughput(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.bytes as f64 / s
        } else {
            0.0
        }
    }
}

/// Which mechanism a pipeline drives its transfers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// One io_uring ring per pipeline; transfers are submitted and reaped by the caller's thread.
    Uring,
    /// A small pool of threads doing `pread`/`pwrite`.
    Threads,
    /// One thread doing sequential `read`/`write`: pipes and other non-seekable files.
    Sequential,
}

/// The backend of a pipeline: submits [`Op`]s and hands back [`Done`]s in completion order.
pub(crate) enum Engine {
    Uring(Box<UringEngine>),
    Pool(PoolEngine),
}

impl Engine {
    /// Picks the backend for `file`: sequential for non-seekable files, else io_uring when
    /// allowed and supported, else the thread pool.
    pub(crate) fn new(
        file: &Arc<DirectFile>,
        depth: usize,
        opts: &IoOptions,
        clock: &Arc<BusyClock>,
    ) -> (Engine, Backend) {
        if !file.is_seekable() {
            return (Engine::Pool(PoolEngine::new(file, 1, clock)), Backend::Sequential);
        }
        if !opts.no_uring && crate::uring::probe().is_ok() {
            if let Ok(u) = UringEngine::new(file, depth, clock) {
                return (Engine::Uring(Box::new(u)), Backend::Uring);
            }
        }
        let threads = depth.min(MAX_POOL_THREADS);
        (Engine::Pool(PoolEngine::new(file, threads, clock)), Backend::Threads)
    }

    pub(crate) fn submit(&mut self, op: Op) {
        match self {
            Engine::Uring(u) => u.submit(op),
            Engine::Pool(p) => p.submit(op),
        }
    }

    /// A completion, blocking for one if none is ready; `None` when nothing is in flight.
    pub(crate) fn wait(&mut self) -> Option<Done> {
        match self {
            Engine::Uring(u) => u.wait(),
            Engine::Pool(p) => p.wait(),
        }
    }

    /// A completion if one is ready, without blocking.
    pub(crate) fn poll(&mut self) -> Option<Done> {
        match self {
            Engine::Uring(u) => u.poll(),
            Engine::Pool(p) => p.poll(),
        }
    }

    /// Operations submitted and not yet returned by `wait`/`poll`.
    pub(crate) fn in_flight(&self) -> usize {
        match self {
            Engine::Uring(u) => u.in_flight(),
            Engine::Pool(p) => p.in_flight,
        }
    }
}

/// Thread-pool backend: workers take [`Op`]s from a channel, do them with `pread`/`pwrite`, and
/// send them back. With one worker, operations run in submission order (pipes need that).
pub(crate) struct PoolEngine {
    jobs: Option<Sender<Op>>,
    done: Receiver<Done>,
    /// Completions produced at submission (injected faults), returned before the channel's.
    ready: VecDeque<Done>,
    workers: Vec<JoinHandle<()>>,
    in_flight: usize,
}

impl PoolEngine {
    fn new(file: &Arc<DirectFile>, threads: usize, clock: &Arc<BusyClock>) -> Self {
        let (job_tx, job_rx) = crossbeam_channel::unbounded::<Op>();
        let (done_tx, done_rx) = crossbeam_channel::unbounded::<Done>();
        let workers = (0..threads.max(1))
            .map(|i| {
                let (jobs, done, file, clock) =
                    (job_rx.clone(), done_tx.clone(), file.clone(), clock.clone());
                std::thread::Builder::new()
                    .name(format!("oxsort-io-{i}"))
                    .spawn(move || {
                        for mut op in jobs {
                            clock.begin();
                            let r = run_sync(&file, &mut op);
                            clock.end();
                            // The pipeline may be gone (dropped early): then the buffer is freed
                            // here, after the I/O finished, which is fine.
                            let _ = done.send(Done::new(op, r));
                        }
                    })
                    .expect("cannot start an I/O worker thread")
            })
            .collect();
        PoolEngine {
            jobs: Some(job_tx),
            done: done_rx,
            ready: VecDeque::new(),
            workers,
            in_flight: 0,
        }
    }

    fn submit(&mut self, op: Op) {
        self.in_flight += 1;
        if let Some(jobs) = &self.jobs {
            if let Err(e) = jobs.send(op) {
                // Workers only stop when `jobs` is dropped, so this cannot happen; keep the
                // operation accounted for anyway.
                let op = e.into_inner();
                let path = std::path::PathBuf::from("<io worker>");
                let err = std::io::Error::other("I/O worker threads stopped");
                let r = match op.dir {
                    Dir::Read => Err(IoError::read(path, op.offset, err)),
                    Dir::Write => Err(IoError::write(path, op.offset, err)),
                };
                self.ready.push_back(Done::new(op, r));
            }
        }
    }

    /// Records an already completed operation (e.g. an injected fault).
    pub(crate) fn complete_now(&mut self, d: Done) {
        self.in_flight += 1;
        self.ready.push_back(d);
    }

    fn wait(&mut self) -> Option<Done> {
        if self.in_flight == 0 {
            return None;
        }
        let d = match self.ready.pop_front() {
            Some(d) => d,
            None => self.done.recv().expect("I/O worker threads vanished"),
        };
        self.in_flight -= 1;
        Some(d)
    }

    fn poll(&mut self) -> Option<Done> {
        let d = self.ready.pop_front().or_else(|| self.done.try_recv().ok())?;
        self.in_flight -= 1;
        Some(d)
    }
}

impl Drop for PoolEngine {
    fn drop(&mut self) {
        // Closing the job channel lets each worker finish its current transfer and exit; joining
        // guarantees no thread still touches the file or a buffer afterwards.
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// Submits `op` unless the fault plan fails it; injected failures complete immediately.
pub(crate) fn submit_counted(engine: &mut Engine, file: &DirectFile, op: Op) {
    let injected = match op.dir {
        Dir::Read => file.inject_read(op.offset),
        Dir::Write => file.inject_write(op.offset),
    };
    match injected {
        Ok(()) => engine.submit(op),
        Err(e) => match engine {
            Engine::Uring(u) => u.complete_now(Done::new(op, Err(e))),
            Engine::Pool(p) => p.complete_now(Done::new(op, Err(e))),
        },
    }
}

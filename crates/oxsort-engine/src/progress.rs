//! Progress events, delivered to a callback the caller installs on the [`crate::SortConfig`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{EngineError, Result};

/// The phase a [`Progress`] event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Reading input and forming sorted runs (or the in-memory sort of a one-pass plan).
    Input,
    /// Merging runs (two passes only).
    Merge,
    /// Writing the final output.
    Output,
}

/// One progress event: how many bytes of a phase are done.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Which phase.
    pub phase: Phase,
    /// Bytes done in this phase.
    pub done: u64,
    /// Bytes this phase moves in all (`None` when reading standard input).
    pub total: Option<u64>,
}

/// The callback type.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Sends events to an optional callback, and stops the sort when the cancel flag is set.
#[derive(Clone, Default)]
pub(crate) struct Reporter {
    f: Option<ProgressFn>,
    cancel: Option<Arc<AtomicBool>>,
}

impl Reporter {
    pub(crate) fn new(f: Option<ProgressFn>, cancel: Option<Arc<AtomicBool>>) -> Self {
        Reporter { f, cancel }
    }
    /// The same cancel flag without the callback (for phases that report nothing).
    pub(crate) fn quiet(&self) -> Self {
        Reporter { f: None, cancel: self.cancel.clone() }
    }
    /// [`EngineError::Interrupted`] once the cancel flag is set.
    pub(crate) fn check(&self) -> Result<()> {
        match &self.cancel {
            Some(c) if c.load(Ordering::Relaxed) => Err(EngineError::Interrupted),
            _ => Ok(()),
        }
    }
    /// Reports progress; [`EngineError::Interrupted`] once the cancel flag is set (the callback
    /// may set it).
    pub(crate) fn report(&self, phase: Phase, done: u64, total: Option<u64>) -> Result<()> {
        if let Some(f) = &self.f {
            f(&Progress { phase, done, total });
        }
        self.check()
    }
}

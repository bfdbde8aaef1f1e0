//! DFSORT `OPTION SKIPREC=n` and `STOPAFT=n`: the part of the (concatenated) inputs a sort
//! reads. A byte range given for the input (`SortConfigBuilder::input_range`, a cluster map's
//! share of a file) is read through the same window.
//!
//! ```text
//!  inputs:   | skipped: SKIPREC records | read ............................ | not read |
//!            0                          start                               end
//!                                       └─ STOPAFT=n: end is just after the n-th record
//!                                          accepted (kept by INCLUDE/OMIT; every record
//!                                          without a filter)
//! ```
//!
//! Fixed-length records in files: without a filter both ends are known from the record size,
//! and the skipped and unread records are never read. With a filter, `STOPAFT`'s end is found
//! as the records stream in; on standard input and for delimited records, both are: a [`Limit`]
//! on the reading thread drops the first `SKIPREC` records and ends the input just after the
//! `STOPAFT`-th record the filter accepts (the filter runs there once more per record read, on
//! the CPU; nothing is read twice).
//!
//! ```text
//!  chunk as read:   | skipped | kept ....................... n-th accepted | dropped |
//!  chunk passed on:           | kept ....................... n-th accepted |  then end of input
//! ```

use std::sync::Arc;

use oxsort_format::{Filter, SortKey};

use crate::chunk::Chunk;
use crate::config::SortConfig;
use crate::error::Result;

/// What a sort reads of its inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Window {
    /// Per input (in order): the byte range read; inputs past the end are left out.
    pub(crate) ranges: Vec<(usize, u64, u64)>,
    /// Records skipped by `SKIPREC`.
    pub(crate) skipped: u64,
    /// Records not read because `STOPAFT` was reached.
    pub(crate) unread: u64,
    /// Records in the ranges read.
    pub(crate) records: u64,
}

/// `SKIPREC`/`STOPAFT` applied to the records as they stream from the reader (see the module
/// documentation).
pub(crate) struct Limit {
    /// Records still to skip.
    skip: u64,
    /// Accepted records still to pass before the input ends (`None`: no `STOPAFT`).
    stop: Option<u64>,
    filter: Option<Filter>,
    keys: Arc<SortKey>,
    /// Records skipped so far.
    pub(crate) skipped: u64,
    /// Records passed on so far (after the skipped ones).
    pub(crate) passed: u64,
    /// The `STOPAFT`-th record was passed: the input ends.
    pub(crate) done: bool,
}

impl Limit {
    /// Cuts `chunk` to the records that pass: the skipped ones off its front, those after the
    /// `STOPAFT`-th accepted record off its end (then [`Limit::done`]).
    pub(crate) fn apply(&mut self, chunk: &mut Chunk) {
        let n = chunk.records;
        let fixed = self.keys.input_layout().fixed_size();
        let bounds = |i: usize| -> (usize, usize) {
            match fixed {
                Some(r) => (i * r, (i + 1) * r),
                None => (chunk.offsets[i] as usize, chunk.offsets[i + 1] as usize),
            }
        };
        let from = (self.skip.min(n as u64)) as usize;
        self.skip -= from as u64;
        self.skipped += from as u64;
        let mut to = n;
        if let Some(left) = self.stop {
            let mut accepted = 0u64;
            to = from;
            while to < n && accepted < left {
                let (a, b) = bounds(to);
                let rec = &chunk.buf[a..b];
                // A record the filter cannot read counts as accepted: the sort stops on it.
                let ok = match &self.filter {
                    Some(f) => f.matches(self.keys.key_part(rec)).unwrap_or(true),
                    None => true,
                };
                accepted += ok as u64;
                to += 1;
            }
            self.stop = Some(left - accepted);
            if left == accepted {
                self.done = true;
            }
        }
        self.passed += (to - from) as u64;
        if from == 0 && to == n {
            return;
        }
        let (start, end) =
            (bounds(from).0, if to > from { bounds(to - 1).1 } else { bounds(from).0 });
        chunk.buf.copy_within(start..end, 0);
        if fixed.is_none() {
            let kept: Vec<u32> =
                chunk.offsets[from..=to].iter().map(|&o| o - start as u32).collect();
            chunk.offsets = kept;
        }
        chunk.records = to - from;
        chunk.first_record += from as u64;
    }
}

/// The window of `cfg`'s `SKIPREC`/`STOPAFT` and the [`Limit`] the reader applies, or
/// `(None, None)` when it has neither.
/// `inputs` is the plan's view of them: their lengths as the source will read them.
pub(crate) fn window(
    cfg: &SortConfig,
    inputs: &[crate::plan::InputPlan],
) -> Result<(Option<Window>, Option<Limit>)> {
    let spec = &cfg.spec;
    if let Some((start, end)) = cfg.input_range {
        // One file, neither SKIPREC nor STOPAFT (`SortConfigBuilder::build`); the records of
        // delimited ones are counted as they are read.
        let records = cfg.key.input_layout().fixed_size().map_or(0, |r| (end - start) / r as u64);
        let window = Window { ranges: vec![(0, start, end)], records, ..Window::default() };
        return Ok((Some(window), None));
    }
    if spec.skiprec.is_none() && spec.stopaft.is_none() {
        return Ok((None, None));
    }
    let limit = |skip: Option<u64>, stop: Option<u64>| Limit {
        skip: skip.unwrap_or(0),
        stop,
        filter: spec.filter.clone(),
        keys: cfg.key.clone(),
        skipped: 0,
        passed: 0,
        done: false,
    };
    // Files whose lengths the plan knows: a FIFO or a /proc file is known only at its end.
    let sizes: Option<Vec<u64>> = inputs.iter().map(|i| i.bytes).collect();
    let (Some(r), Some(sizes)) = (cfg.key.input_layout().fixed_size(), sizes) else {
        // Standard input, streams or delimited records: both as the records stream in.
        return Ok((None, Some(limit(spec.skiprec, spec.stopaft))));
    };
    let r = r as u64;
    let total: u64 = sizes.iter().map(|l| l / r * r).sum();
    let start = spec.skiprec.map_or(0, |n| n.saturating_mul(r)).min(total);
    let (end, stream) = match (spec.stopaft, &spec.filter) {
        (None, _) => (total, None),
        (Some(n), None) => (start.saturating_add(n.saturating_mul(r)).min(total), None),
        // Where the n-th accepted record is, only reading tells: the reader stops there.
        (Some(n), Some(_)) => (total, Some(limit(None, Some(n)))),
    };
    let mut ranges = Vec::new();
    let mut at = 0u64;
    for (i, len) in sizes.iter().enumerate() {
        let (lo, hi) = (at, at + len);
        at = hi;
        if hi <= start || lo >= end {
            continue;
        }
        ranges.push((i, start.max(lo) - lo, end.min(hi) - lo));
    }
    let window = Window {
        ranges,
        skipped: start / r,
        unread: (total - end) / r,
        records: (end - start) / r,
    };
    Ok((Some(window), stream))
}

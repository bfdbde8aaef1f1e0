//! DFSORT `OPTION SKIPREC=n` and `STOPAFT=n`: the part of the (concatenated) inputs a sort
//! reads.
//!
//! ```text
//!  inputs:   | skipped: SKIPREC records | read ............................ | not read |
//!            0                          start                               end
//!                                       └─ STOPAFT=n: end is just after the n-th record
//!                                          accepted (kept by INCLUDE/OMIT; every record
//!                                          without a filter)
//! ```
//!
//! Fixed-length records in files only. Without a filter both ends are known from the record
//! size; with a filter and `STOPAFT`, the records from `start` are read once ahead (a buffered
//! scan that stops at the n-th accepted record) to find `end`: `STOPAFT` asks for few records,
//! so the scan reads little.

use std::io::Read;
use std::path::PathBuf;

use crate::config::{Input, SortConfig};
use crate::error::{EngineError, Result};

/// Bytes read at once by the scan that finds where `STOPAFT` stops (buffered reads).
const SCAN_BUFFER_BYTES: usize = 1 << 20;

/// What a sort reads of its inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Window {
    /// Per input (in order): the byte range read; inputs past the end are left out.
    pub(crate) ranges: Vec<(usize, u64, u64)>,
    /// Records skipped by `SKIPREC`.
    pub(crate) skipped: u64,
    /// Records not read because `STOPAFT` was reached.
    pub(crate) unread: u64,
}

/// The window of `cfg`'s `SKIPREC`/`STOPAFT`, or `None` when it has neither.
pub(crate) fn window(cfg: &SortConfig) -> Result<Option<Window>> {
    let spec = &cfg.spec;
    if spec.skiprec.is_none() && spec.stopaft.is_none() {
        return Ok(None);
    }
    let Some(r) = cfg.key.input_layout().fixed_size() else {
        return Err(EngineError::Config(
            "OPTION SKIPREC/STOPAFT need fixed-length records (RECORD TYPE=F or --record-size)"
                .into(),
        ));
    };
    let r = r as u64;
    let mut sizes = Vec::new();
    for i in &cfg.inputs {
        let Input::Path(p) = i else {
            return Err(EngineError::Config(
                "OPTION SKIPREC/STOPAFT need input files, not standard input".into(),
            ));
        };
        let len = std::fs::metadata(p)
            .map_err(|e| EngineError::Input { path: p.clone(), source: e })?
            .len();
        sizes.push((p.clone(), len));
    }
    let total: u64 = sizes.iter().map(|(_, l)| l / r * r).sum();
    let start = spec.skiprec.map_or(0, |n| n.saturating_mul(r)).min(total);
    let end = match (spec.stopaft, &spec.filter) {
        (None, _) => total,
        (Some(n), None) => start.saturating_add(n.saturating_mul(r)).min(total),
        (Some(n), Some(f)) => scan_end(&sizes, r, start, total, n, |rec| f.matches(rec))?,
    };
    let mut ranges = Vec::new();
    let mut at = 0u64;
    for (i, (_, len)) in sizes.iter().enumerate() {
        let (lo, hi) = (at, at + len);
        at = hi;
        if hi <= start || lo >= end {
            continue;
        }
        ranges.push((i, start.max(lo) - lo, end.min(hi) - lo));
    }
    Ok(Some(Window { ranges, skipped: start / r, unread: (total - end) / r }))
}

/// Where reading stops: just after the `n`-th record from `start` that `accepts` keeps.
fn scan_end(
    inputs: &[(PathBuf, u64)],
    r: u64,
    start: u64,
    total: u64,
    n: u64,
    accepts: impl Fn(&[u8]) -> std::result::Result<bool, oxsort_format::KeyError>,
) -> Result<u64> {
    if n == 0 {
        return Ok(start);
    }
    let mut accepted = 0u64;
    let mut at = 0u64;
    let mut rec = vec![0u8; r as usize];
    for (path, len) in inputs {
        let (lo, hi) = (at, at + len);
        at = hi;
        if hi <= start {
            continue;
        }
        let io = |e| EngineError::Input { path: path.clone(), source: e };
        let mut f = std::fs::File::open(path).map_err(io)?;
        let from = start.max(lo) - lo;
        std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(from)).map_err(io)?;
        let mut f = std::io::BufReader::with_capacity(SCAN_BUFFER_BYTES, f).take(len - from);
        let mut pos = lo + from;
        loop {
            if pos + r > total.min(hi) {
                break;
            }
            f.read_exact(&mut rec).map_err(io)?;
            pos += r;
            let number = (pos - lo) / r;
            if accepts(&rec).map_err(|source| EngineError::Key {
                path: path.clone(),
                record: number,
                source,
            })? {
                accepted += 1;
                if accepted == n {
                    return Ok(pos);
                }
            }
        }
    }
    Ok(total)
}

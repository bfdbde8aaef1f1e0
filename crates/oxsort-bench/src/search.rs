//! The size search of MinuteSort and PennySort: which sizes to sort, in what order, and when
//! to stop, apart from the sorting itself (the caller's `run`), so the rules can be checked on
//! a simulated machine.
//!
//! ```text
//!  calibration  n1 (MIN records), then n2 (a third of the budget by n1's rate)
//!     │  the two disagree (the larger was not slower, or slower per byte)?
//!     │    repeat both, up to CALIBRATION_ROUNDS, and fit the medians; still no line with
//!     │    a fixed cost >= 0: the slowest rate through the origin, and a note
//!     ▼
//!  confirming sorts: the largest size the model fits in the budget (at most MAX_GROWTH x the
//!     largest sorted yet), each stopped at OVERRUN_BUDGETS x the budget; until the model rules
//!     out lo + step(lo), or MAX_CONFIRM sorts, or the next one would pass the time limit
//! ```
//! Every sort's wall time, and what the caller spent around it (generating its input), counts
//! against the time limit; a sort is started only if the time it is expected to take still
//! fits, and none runs past OVERRUN_BUDGETS x the budget, so a search ends within its limit
//! plus one stopped sort.

use serde::Serialize;

use crate::rules::{largest_within, step, LinearModel, Point, RECORD};

/// Confirming sorts at most per search: a search settles in three to five on a quiet 2-core
/// VM; shared with other work, the same sort's time varies by a factor of two from run to run,
/// and a search may need twice as many. Past this, the report says the search stopped before
/// the model ruled out the next step.
pub const MAX_CONFIRM: usize = 12;

/// A sort is stopped once it has run this many budgets: it is over the budget by then, and
/// how far over is not worth the wait (a size past the machine's memory can take five times
/// what the model predicted).
pub const OVERRUN_BUDGETS: f64 = 2.0;

/// Calibration rounds at most: the first, and two repeats when the two sizes disagree (one
/// slowed by other work on a shared machine).
pub const CALIBRATION_ROUNDS: usize = 3;

/// The larger calibration may cost this much more per byte than the smaller and still agree
/// with a line with a fixed cost (the smaller pays the fixed cost over fewer bytes, so it is
/// normally the slower per byte; beyond this, one of them was disturbed).
pub const CALIBRATION_TOLERANCE: f64 = 1.25;

/// A confirming sort is at most this many times the largest size sorted yet: a line fitted on
/// smaller sorts says little about sizes far past them (where memory or the page cache runs
/// out).
pub const MAX_GROWTH: u64 = 4;

/// What a search is asked to find.
#[derive(Clone, Copy, Debug)]
pub struct SearchConfig {
    /// The time budget of one sort, seconds.
    pub budget_s: f64,
    /// The largest size the disk (or the user's size cap) allows, records.
    pub cap_records: u64,
    /// The first calibration's size, records.
    pub min_records: u64,
    /// Seconds the whole search may spend: sorts, and what the caller does around them.
    pub time_limit_s: f64,
}

/// Why a sort is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A calibration sort: a point for the first model.
    Calibration,
    /// A confirming sort of the size the model picked.
    Confirm,
}

impl Purpose {
    /// `calibration` or `confirm`, as the report names runs.
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Calibration => "calibration",
            Purpose::Confirm => "confirm",
        }
    }
}

/// One sort the search asks the caller for.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// Records to sort.
    pub records: u64,
    /// Why.
    pub purpose: Purpose,
    /// What the model predicts it takes (confirming sorts).
    pub predicted_s: Option<f64>,
    /// Stop the sort once it has run this long: it is over the budget.
    pub cutoff_s: f64,
}

/// What the caller did for a [`Request`].
#[derive(Clone, Copy, Debug)]
pub struct Trial {
    /// The sort: its size, passes, and wall seconds (when stopped, the seconds it ran).
    pub point: Point,
    /// False when the sort was stopped at the cutoff.
    pub completed: bool,
    /// Wall seconds spent on the request in all: the sort and its input's generation.
    pub spent_s: f64,
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// The largest size sorted within the budget, if any was.
    pub found: Option<Point>,
    /// The final model (never with a negative fixed cost).
    pub model: LinearModel,
    /// Every sort, in order, as the caller reported it.
    pub trials: Vec<(Request, Trial)>,
    /// Notes for the report: calibrations repeated or not fitted, sorts stopped, the search
    /// stopped early.
    pub notes: Vec<String>,
    /// Seconds the search spent.
    pub spent_s: f64,
}

fn x(p: &Point) -> f64 {
    p.bytes as f64 * p.passes.max(1) as f64
}

/// Whether two calibrations agree with a time that grows with size from a fixed cost: the
/// larger took longer, and at most [`CALIBRATION_TOLERANCE`] times the smaller's time per byte.
pub fn calibrations_agree(small: Point, large: Point) -> bool {
    large.seconds > small.seconds
        && large.seconds / x(&large) <= small.seconds / x(&small) * CALIBRATION_TOLERANCE
}

/// The point of `records` with the median time of the sorts of that size.
fn median_of(points: &[Point], records: u64) -> Point {
    let mut same: Vec<Point> =
        points.iter().copied().filter(|p| p.bytes == records * RECORD).collect();
    same.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    same[same.len() / 2]
}

/// Runs a size search: asks `run` for each sort, decides the next from the answers. `run`'s
/// errors end the search.
pub fn search_sizes<E>(
    cfg: &SearchConfig,
    passes_of: &dyn Fn(u64) -> u32,
    run: &mut dyn FnMut(&Request) -> Result<Trial, E>,
) -> Result<SearchResult, E> {
    let budget = cfg.budget_s;
    let cutoff_s = OVERRUN_BUDGETS * budget;
    let mut out = SearchResult {
        found: None,
        model: LinearModel { intercept_s: 0.0, slope_s_per_byte: 0.0 },
        trials: Vec::new(),
        notes: Vec::new(),
        spent_s: 0.0,
    };
    let mut ask = |out: &mut SearchResult, req: Request| -> Result<Trial, E> {
        let t = run(&req)?;
        out.spent_s += t.spent_s;
        out.trials.push((req, t));
        Ok(t)
    };
    let calibrate =
        |records| Request { records, purpose: Purpose::Calibration, predicted_s: None, cutoff_s };

    // Calibrations.
    let n1 = cfg.min_records.min(cfg.cap_records);
    let p1 = ask(&mut out, calibrate(n1))?.point;
    let m1 = LinearModel::fit(&[p1]);
    let n2 = largest_within(&m1, budget / 3.0, cfg.cap_records, passes_of)
        .unwrap_or(n1)
        .max(2 * n1)
        .min(cfg.cap_records);
    let mut cal = vec![p1];
    let mut rounds = 1;
    let model = loop {
        cal.push(ask(&mut out, calibrate(n2))?.point);
        if n2 <= n1 {
            break LinearModel::fit(&cal);
        }
        let (a, b) = (median_of(&cal, n1), median_of(&cal, n2));
        if calibrations_agree(a, b) {
            if rounds > 1 {
                out.notes.push(format!(
                    "the first calibrations disagreed ({n1} records in {:.3} s, {n2} in {:.3} \
                     s); the model fits the medians of {rounds} rounds",
                    cal[0].seconds, cal[1].seconds
                ));
            }
            break LinearModel::fit(&[a, b]);
        }
        // Another round only if it fits the time left (at the rates measured so far).
        let round_s = out.trials.iter().take(2).map(|(_, t)| t.spent_s).sum::<f64>();
        if rounds == CALIBRATION_ROUNDS || out.spent_s + round_s > cfg.time_limit_s {
            out.notes.push(format!(
                "the calibrations disagreed in {rounds} round(s) ({n1} records in {:.3} s, {n2} \
                 in {:.3} s, medians): no line with a fixed cost fits them, so the model is the \
                 slowest rate through the origin",
                a.seconds, b.seconds
            ));
            break LinearModel::slowest(&[a, b]);
        }
        rounds += 1;
        cal.push(ask(&mut out, calibrate(n1))?.point);
    };
    out.model = model;

    // Confirming sorts. The bracket: the largest size sorted within the budget, and the
    // smallest that was not (a stopped sort is over the budget too).
    let mut lo: Option<Point> = None;
    let mut hi: Option<Point> = None;
    let mut biggest = 0u64;
    let note_bracket = |lo: &mut Option<Point>, hi: &mut Option<Point>, t: &Trial| {
        let p = t.point;
        if t.completed && p.seconds <= budget {
            if lo.is_none_or(|l| p.bytes > l.bytes) {
                *lo = Some(p);
            }
        } else if hi.is_none_or(|h| p.bytes < h.bytes) {
            *hi = Some(p);
        }
    };
    for (_, t) in &out.trials {
        note_bracket(&mut lo, &mut hi, t);
        biggest = biggest.max(t.point.bytes / RECORD);
    }
    // Seconds spent per record beyond the sorts themselves (generating inputs), over all the
    // sorts so far: the large ones weigh the most, as they should (a small one's time is
    // mostly fixed costs).
    let overhead = |out: &SearchResult| {
        let extra: f64 =
            out.trials.iter().map(|(_, t)| (t.spent_s - t.point.seconds).max(0.0)).sum();
        let records: u64 = out.trials.iter().map(|(r, _)| r.records).sum();
        extra / records.max(1) as f64
    };
    let mut model = out.model;
    let mut confirms = 0;
    let records_of = |p: Option<Point>| p.map_or(0, |p| p.bytes / RECORD);
    loop {
        if let (Some(l), Some(h)) = (lo, hi) {
            model = LinearModel::between(l, h, budget);
        } else if let Some(l) = lo {
            model = model.through(l);
        }
        let base = records_of(lo);
        let next = base + step(base);
        let limit = cfg.cap_records.min(hi.map_or(u64::MAX, |h| h.bytes / RECORD - 1));
        if next > limit || model.predict(next * RECORD, passes_of(next)) > budget {
            break;
        }
        if confirms == MAX_CONFIRM {
            out.notes.push(format!(
                "the search stopped after {MAX_CONFIRM} confirming runs, before the model ruled \
                 out the next step"
            ));
            break;
        }
        let mut n = largest_within(&model, budget, limit, passes_of).unwrap_or(next).max(next);
        // Inside a bracket, stay off its ends so it shrinks by a quarter at least each time:
        // the line through two noisy runs can point very close to one of them.
        if let (Some(l), Some(h)) = (lo, hi) {
            let (l, h) = (l.bytes / RECORD, h.bytes / RECORD);
            let quarter = (h - l) / 4;
            let st = step(l);
            if quarter >= st {
                n = n.clamp(l + quarter, h - quarter) / st * st;
            }
        }
        // Not far past what was measured.
        let grown = biggest.saturating_mul(MAX_GROWTH);
        if n > grown {
            n = grown / step(grown) * step(grown);
        }
        let n = n.max(next);
        let predicted = model.predict(n * RECORD, passes_of(n));
        let expected = predicted.clamp(0.0, cutoff_s) + overhead(&out) * n as f64;
        if out.spent_s + expected > cfg.time_limit_s {
            out.notes.push(format!(
                "the search stopped at its time limit ({:.0} s, {:.1} s spent), before the model \
                 ruled out the next step: a sort of {n} records would take about {expected:.1} s \
                 more",
                cfg.time_limit_s, out.spent_s
            ));
            break;
        }
        confirms += 1;
        let t = ask(
            &mut out,
            Request {
                records: n,
                purpose: Purpose::Confirm,
                predicted_s: Some(predicted),
                cutoff_s,
            },
        )?;
        if !t.completed {
            out.notes.push(format!(
                "the sort of {n} records was stopped after {:.1} s ({OVERRUN_BUDGETS} x the \
                 budget; the model predicted {predicted:.1} s): over the budget",
                t.point.seconds
            ));
        }
        biggest = biggest.max(n);
        note_bracket(&mut lo, &mut hi, &t);
    }
    out.found = lo;
    out.model = model;
    Ok(out)
}

//! The Sort Benchmark's rules as numbers: time budgets, record formats, the size classes, and
//! the prediction that picks the largest input a budget can sort.
//!
//! A size search (MinuteSort, PennySort) goes:
//!
//! ```text
//!   calibration runs ──fit──▶ LinearModel: t = a + b * bytes * passes(bytes)
//!        │                           │
//!        │               largest_within(budget, cap) ──▶ N (a multiple of step(N))
//!        ▼                           ▼
//!   confirming run of N ──▶ lo = N (within) or hi = N (over); model through the bracket
//!   until the model says lo + step(lo) would not fit
//! ```
//! Once a run has failed the budget, the model is the line between the largest size that
//! sorted within it and the smallest that did not. The answer is a size that really sorted
//! within the budget and whose next step (`N + step(N)`) the final model predicts would not
//! have (or that the disk cannot hold).

use serde::Serialize;

use crate::{BenchError, Result, Setting};

/// Three years in seconds: the PennySort depreciation period (94,608,000 s).
pub const THREE_YEARS_S: f64 = 94_608_000.0;
/// The shortest budget accepted: below a few seconds, start-up costs swamp the sort.
pub const MIN_SECONDS: f64 = 3.0;
/// Bytes per record.
pub const RECORD: u64 = 100;

/// The PennySort budget: the seconds one cent buys of a machine costing `price_usd` over three
/// years.
pub fn penny_budget_s(price_usd: f64) -> Result<f64> {
    if !(price_usd.is_finite() && price_usd > 0.0) {
        return Err(BenchError::setting(
            Setting::Price,
            price_usd,
            "the machine's price must be a positive number of US dollars".into(),
        ));
    }
    let s = THREE_YEARS_S * 0.01 / price_usd;
    check_seconds(s).map_err(|_| {
        BenchError::setting(
            Setting::Price,
            price_usd,
            format!(
                "a penny buys {s:.3} s of this machine, below the {MIN_SECONDS} s a sort needs to \
                 be measured"
            ),
        )
    })?;
    Ok(s)
}

/// Checks a time budget.
pub fn check_seconds(s: f64) -> Result<f64> {
    if !(s.is_finite() && s >= MIN_SECONDS) {
        return Err(BenchError::setting(
            Setting::Seconds,
            s,
            format!(
                "the budget must be at least {MIN_SECONDS} s (start-up costs swamp shorter sorts)"
            ),
        ));
    }
    Ok(s)
}

/// The step between sizes a search distinguishes: two significant digits of `records`
/// (10^(digits - 2)), at least 1000 records. Finer steps ask more of a sort's timing than it
/// holds: run to run, the same sort varies by several percent on a shared machine.
pub fn step(records: u64) -> u64 {
    let digits = if records == 0 { 1 } else { records.ilog10() + 1 };
    10u64.pow(digits.saturating_sub(2)).max(1000)
}

/// Sort time as a line in bytes moved: `intercept_s + slope_s_per_byte * bytes * passes`.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct LinearModel {
    /// Fixed cost of a sort (start-up, buffer set-up, final sync), seconds.
    pub intercept_s: f64,
    /// Seconds per byte per pass.
    pub slope_s_per_byte: f64,
}

/// One timed sort.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Point {
    /// Bytes sorted.
    pub bytes: u64,
    /// Passes the plan took.
    pub passes: u32,
    /// Wall seconds.
    pub seconds: f64,
}

impl LinearModel {
    /// Least squares over the points (x = bytes x passes). With one point, or when noise makes
    /// the fit meaningless (a negative slope or intercept), the line through the origin and
    /// the largest point.
    pub fn fit(points: &[Point]) -> LinearModel {
        let xs: Vec<f64> = points.iter().map(|p| p.bytes as f64 * p.passes.max(1) as f64).collect();
        let n = points.len() as f64;
        let origin = || {
            let (x, p) = xs
                .iter()
                .zip(points)
                .max_by(|a, b| a.0.total_cmp(b.0))
                .map(|(x, p)| (*x, p.seconds))
                .unwrap_or((1.0, 0.0));
            LinearModel { intercept_s: 0.0, slope_s_per_byte: p / x.max(1.0) }
        };
        if points.len() < 2 {
            return origin();
        }
        let mx = xs.iter().sum::<f64>() / n;
        let my = points.iter().map(|p| p.seconds).sum::<f64>() / n;
        let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
        let sxy: f64 = xs.iter().zip(points).map(|(x, p)| (x - mx) * (p.seconds - my)).sum();
        if sxx <= 0.0 {
            return origin();
        }
        let slope = sxy / sxx;
        let intercept = my - slope * mx;
        if slope <= 0.0 || intercept < 0.0 {
            return origin();
        }
        LinearModel { intercept_s: intercept, slope_s_per_byte: slope }
    }

    /// The same fixed cost, with the slope that passes through `p` (a confirming run is the
    /// best evidence of the rate at its size).
    pub fn through(&self, p: Point) -> LinearModel {
        let x = p.bytes as f64 * p.passes.max(1) as f64;
        let intercept = self.intercept_s.min(p.seconds * 0.5);
        LinearModel {
            intercept_s: intercept,
            slope_s_per_byte: (p.seconds - intercept) / x.max(1.0),
        }
    }

    /// The line through two runs that bracket `budget_s`: `lo`, the largest size that sorted
    /// within it, and `hi`, the smallest that did not. A sort has no negative fixed cost: when
    /// the line through them would cross zero time above zero bytes (the larger run was much
    /// slower per byte: past a cliff, or stopped), it is the line through the origin that
    /// reaches the budget halfway between them, so it still puts `lo` within the budget and
    /// `hi` over it, and the search halves the bracket.
    pub fn between(lo: Point, hi: Point, budget_s: f64) -> LinearModel {
        let x = |p: Point| p.bytes as f64 * p.passes.max(1) as f64;
        let slope = (hi.seconds - lo.seconds) / (x(hi) - x(lo)).max(1.0);
        let intercept = lo.seconds - slope * x(lo);
        if intercept < 0.0 || slope <= 0.0 {
            let mid = (x(lo) + x(hi)) / 2.0;
            return LinearModel { intercept_s: 0.0, slope_s_per_byte: budget_s / mid.max(1.0) };
        }
        LinearModel { intercept_s: intercept, slope_s_per_byte: slope }
    }

    /// The line through the origin at the slowest rate (seconds per byte per pass) of the
    /// points: the cautious model when they do not fit a line with a fixed cost.
    pub fn slowest(points: &[Point]) -> LinearModel {
        let rate = points
            .iter()
            .map(|p| p.seconds / (p.bytes as f64 * p.passes.max(1) as f64).max(1.0))
            .fold(0.0, f64::max);
        LinearModel { intercept_s: 0.0, slope_s_per_byte: rate }
    }

    /// Predicted seconds for `bytes` sorted in `passes` passes.
    pub fn predict(&self, bytes: u64, passes: u32) -> f64 {
        self.intercept_s + self.slope_s_per_byte * bytes as f64 * passes.max(1) as f64
    }
}

/// The largest record count, a multiple of [`step`] of itself and at most `cap_records`, that
/// the model predicts sorts within `budget_s`; `passes_of(records)` is the plan's shape.
/// `None` when not even one step fits.
pub fn largest_within(
    model: &LinearModel,
    budget_s: f64,
    cap_records: u64,
    passes_of: &dyn Fn(u64) -> u32,
) -> Option<u64> {
    let fits = |n: u64| model.predict(n * RECORD, passes_of(n)) <= budget_s;
    // Largest n in [0, cap] that fits (time grows with n: bytes and passes both do).
    let (mut lo, mut hi) = (0u64, cap_records);
    if fits(hi) {
        lo = hi;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let st = step(lo);
    let n = lo / st * st;
    (n > 0).then_some(n)
}

/// The largest record count whose input, output and (for two passes) sorted runs fit in
/// `free_bytes`, with `reserve_bytes` kept free. The runs need as much again as the input.
pub fn disk_cap_records(free_bytes: u64, reserve_bytes: u64, two_pass: bool) -> u64 {
    let copies = if two_pass { 3 } else { 2 };
    free_bytes.saturating_sub(reserve_bytes) / copies / RECORD
}

/// How gensort must generate a category's input.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Records {
    /// Default binary records (GraySort, MinuteSort, 100 TB JouleSort, CloudSort).
    Binary,
    /// `gensort -a` records (PennySort, 10 GB to 1 TB JouleSort).
    Ascii,
}

/// The JouleSort classes: (records, name, record format).
pub const JOULESORT_CLASSES: [(u64, &str, Records); 4] = [
    (100_000_000, "10 GB", Records::Ascii),
    (1_000_000_000, "100 GB", Records::Ascii),
    (10_000_000_000, "1 TB", Records::Ascii),
    (1_000_000_000_000, "100 TB", Records::Binary),
];

/// The JouleSort class of a record count, if it is one.
pub fn joulesort_class(records: u64) -> Option<(&'static str, Records)> {
    JOULESORT_CLASSES.iter().find(|c| c.0 == records).map(|c| (c.1, c.2))
}

/// GraySort and CloudSort sort at least 100 TB (10^12 records).
pub const GRAYSORT_RECORDS: u64 = 1_000_000_000_000;

/// GraySort and CloudSort figures from one node's measured rate: a model, not a measurement.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ScaleModel {
    /// Nodes assumed.
    pub nodes: u32,
    /// Bytes one node sorted per second in the measured (two-pass) run.
    pub node_bytes_per_s: f64,
    /// Bytes of the category (100 TB).
    pub bytes: u64,
    /// Predicted seconds: bytes / (nodes x node rate).
    pub seconds: f64,
    /// TB per minute (GraySort's metric).
    pub tb_per_min: f64,
    /// Disk each node needs: input, output and runs of its share.
    pub disk_per_node_bytes: u64,
    /// Dollars per node-hour, when given (CloudSort).
    pub node_price_usd_h: Option<f64>,
    /// Dollars for the whole sort (CloudSort's metric): nodes x hours x price.
    pub cost_usd: Option<f64>,
    /// What the model leaves out.
    pub assumptions: String,
}

impl ScaleModel {
    /// The model for `nodes` nodes each sorting at `node_bytes_per_s`.
    pub fn new(nodes: u32, node_bytes_per_s: f64, node_price_usd_h: Option<f64>) -> ScaleModel {
        let bytes = GRAYSORT_RECORDS * RECORD;
        let nodes = nodes.max(1);
        let seconds = bytes as f64 / (nodes as f64 * node_bytes_per_s.max(1e-9));
        ScaleModel {
            nodes,
            node_bytes_per_s,
            bytes,
            seconds,
            tb_per_min: bytes as f64 / 1e12 / (seconds / 60.0),
            disk_per_node_bytes: bytes / nodes as u64 * 3,
            node_price_usd_h,
            cost_usd: node_price_usd_h.map(|p| p * nodes as f64 * seconds / 3600.0),
            assumptions: "MODEL: linear scaling of one node's measured two-pass rate; the \
                          network shuffle between nodes, stragglers and start-up are not \
                          modelled (oxsort's Ray scale-out does not exist yet)"
                .into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn penny_budgets() {
        // OzSort's $490 PC: a penny bought 1929 s.
        let s = penny_budget_s(490.0).unwrap();
        assert!((s - 1930.77).abs() < 0.01, "{s}");
        for bad in [0.0, -5.0, f64::NAN, f64::INFINITY] {
            let e = penny_budget_s(bad).unwrap_err();
            assert!(matches!(e, BenchError::Setting { setting: Setting::Price, .. }), "{e}");
            assert!(e.to_string().starts_with("price "), "{e}");
        }
        // A very expensive machine buys less than the minimum.
        assert!(penny_budget_s(1e6).unwrap_err().to_string().contains("below"));
        assert!(check_seconds(2.9).is_err());
        assert_eq!(check_seconds(3.0).unwrap(), 3.0);
    }

    #[test]
    fn steps_keep_two_digits() {
        assert_eq!(step(123_456_789), 10_000_000);
        assert_eq!(step(999_999), 10_000);
        assert_eq!(step(1_000_000), 100_000);
        assert_eq!(step(5), 1000);
    }

    #[test]
    fn line_between_two_runs() {
        let lo = Point { bytes: 100, passes: 1, seconds: 3.0 };
        let hi = Point { bytes: 100, passes: 2, seconds: 5.0 };
        let m = LinearModel::between(lo, hi, 4.0);
        assert!((m.predict(100, 1) - 3.0).abs() < 1e-12);
        assert!((m.predict(100, 2) - 5.0).abs() < 1e-12);
        assert!((m.predict(150, 1) - 4.0).abs() < 1e-12);
    }

    #[test]
    fn no_line_has_a_negative_fixed_cost() {
        // 1.2e7 records in 1.56 s, then 8.1e7 in 52 s: the line through them would start at
        // -16.6 s. The model goes through the origin instead, and still brackets the budget.
        let lo = Point { bytes: 1_200_000_000, passes: 1, seconds: 1.56 };
        let hi = Point { bytes: 8_100_000_000, passes: 1, seconds: 52.0 };
        let m = LinearModel::between(lo, hi, 10.0);
        assert_eq!(m.intercept_s, 0.0);
        assert!(m.predict(lo.bytes, 1) <= 10.0 && m.predict(hi.bytes, 1) > 10.0);
        assert!((m.predict((lo.bytes + hi.bytes) / 2, 1) - 10.0).abs() < 1e-9);
        // The cautious line through calibrations that disagree: the slowest rate.
        let s = LinearModel::slowest(&[lo, hi]);
        assert_eq!(s.intercept_s, 0.0);
        assert!((s.predict(hi.bytes, 1) - 52.0).abs() < 1e-9);
    }

    #[test]
    fn fit_recovers_a_line() {
        let pts: Vec<Point> = [1e8, 2e8, 4e8]
            .iter()
            .map(|&b| Point { bytes: b as u64, passes: 1, seconds: 0.5 + b * 2e-9 })
            .collect();
        let m = LinearModel::fit(&pts);
        assert!((m.intercept_s - 0.5).abs() < 1e-9 && (m.slope_s_per_byte - 2e-9).abs() < 1e-18);
        // Noise giving a negative intercept falls back to the origin line.
        let m = LinearModel::fit(&[
            Point { bytes: 100, passes: 1, seconds: 0.1 },
            Point { bytes: 200, passes: 1, seconds: 1.0 },
        ]);
        assert_eq!(m.intercept_s, 0.0);
        assert!((m.predict(200, 1) - 1.0).abs() < 1e-12);
        // Two passes cost twice per byte.
        assert!((m.predict(200, 2) - 2.0).abs() < 1e-12);
        let t = m.through(Point { bytes: 400, passes: 1, seconds: 3.0 });
        assert!((t.predict(400, 1) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn largest_within_obeys_budget_step_and_cap() {
        let m = LinearModel { intercept_s: 0.5, slope_s_per_byte: 1e-9 };
        let one = |_: u64| 1u32;
        let n = largest_within(&m, 10.0, u64::MAX / 1000, &one).unwrap();
        // The continuous answer is 9.5e9 bytes = 9.5e7 records, already a step multiple.
        assert_eq!(n, 95_000_000);
        assert!(m.predict(n * RECORD, 1) <= 10.0);
        assert!(m.predict((n + step(n)) * RECORD, 1) > 10.0);
        // The plan going two-pass past 5e7 records halves what fits.
        let shape = |r: u64| if r > 50_000_000 { 2 } else { 1 };
        let n2 = largest_within(&m, 10.0, u64::MAX / 1000, &shape).unwrap();
        assert_eq!(n2, 50_000_000);
        // The disk caps it.
        assert_eq!(largest_within(&m, 10.0, 12_345_678, &one), Some(12_000_000));
        assert_eq!(largest_within(&m, 0.1, u64::MAX / 1000, &one), None);
    }

    #[test]
    fn disk_caps_and_classes() {
        assert_eq!(disk_cap_records(10_000, 0, false), 50);
        assert_eq!(disk_cap_records(30_000, 0, true), 100);
        assert_eq!(disk_cap_records(100, 1000, true), 0);
        assert_eq!(joulesort_class(100_000_000), Some(("10 GB", Records::Ascii)));
        assert_eq!(joulesort_class(1_000_000_000_000), Some(("100 TB", Records::Binary)));
        assert_eq!(joulesort_class(12345), None);
    }

    #[test]
    fn scale_model() {
        // 1 GB/s per node, 10 nodes: 100 TB in 10^4 s.
        let m = ScaleModel::new(10, 1e9, Some(2.0));
        assert!((m.seconds - 1e4).abs() < 1e-6);
        assert!((m.tb_per_min - 0.6).abs() < 1e-9);
        assert!((m.cost_usd.unwrap() - 2.0 * 10.0 * 1e4 / 3600.0).abs() < 1e-9);
        assert!(m.assumptions.starts_with("MODEL"));
    }
}

//! Repeated runs: the page cache dropped before each, their median, and a word when they
//! disagree.
//!
//! ```
//! use oxsort_bench::runs::{median, spread_note};
//!
//! let times = [2.3, 1.0, 1.02];
//! assert_eq!(median(&times), 1.02);
//! // A cold first run is named rather than hidden by the median.
//! assert!(spread_note(&times).unwrap().contains("run 1 took 2.300 s"));
//! ```

/// Best effort: write dirty pages back and drop the page cache (needs root), so neither the sort
/// nor the floor reads from memory. Returns whether the cache was dropped.
pub fn drop_caches() -> bool {
    let _ = std::process::Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok()
}

/// Above this ratio of a run's time to the median, the median hides a run the user should
/// see: run to run, the same sort on a quiet machine stays within 20% of its median.
const SPREAD_WARN: f64 = 1.3;

/// A line saying which runs were far from the median (a cold first run, a busy machine), or
/// `None` when they all agree.
pub fn spread_note(times: &[f64]) -> Option<String> {
    if times.len() < 2 {
        return None;
    }
    let m = median(times);
    let far: Vec<String> = times
        .iter()
        .enumerate()
        .filter(|(_, &t)| t > m * SPREAD_WARN || t * SPREAD_WARN < m)
        .map(|(i, &t)| format!("run {} took {t:.3} s, {:.1}x the median", i + 1, t / m))
        .collect();
    (!far.is_empty()).then(|| {
        format!("the runs disagree: {}; the median ({m:.3} s) leaves it out", far.join(", "))
    })
}

/// The middle value (the mean of the two middle ones for an even count).
///
/// # Panics
///
/// On an empty slice.
pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_far_from_the_median_is_named() {
        let note = spread_note(&[2.3, 1.0, 1.02]).expect("a first run 2.3x the others");
        assert!(note.contains("run 1 took 2.300 s, 2.3x the median"), "{note}");
        assert!(!note.contains("run 2"), "{note}");
        assert_eq!(spread_note(&[1.0, 1.1, 0.95]), None);
        assert_eq!(spread_note(&[5.0]), None);
    }

    #[test]
    fn an_even_count_takes_the_mean_of_the_middle_two() {
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}

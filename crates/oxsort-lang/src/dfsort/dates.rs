//! Date constants of conditions: `DATE1`, `DATE2`, `DATE3` (characters), `DATE1P`, `DATE2P`,
//! `DATE3P` (decimal numbers), each optionally `+n` or `-n`, as DFSORT defines them:
//!
//! ```text
//!  DATE1[(c)][+n|-n]   C'yyyymmdd' / C'yyyycmmcdd'    today, n days later or earlier
//!  DATE2[(c)][+n|-n]   C'yyyymm'   / C'yyyycmm'       this month, n months later or earlier
//!  DATE3[(c)][+n|-n]   C'yyyyddd'  / C'yyyycddd'      today (day of the year), n days away
//!  DATE1P, DATE2P, DATE3P [+n|-n]  +yyyymmdd, +yyyymm, +yyyyddd as numbers
//! ```
//!
//! "Today" is the date (UTC) when the statements are read, once for the whole run.

use std::time::{SystemTime, UNIX_EPOCH};

/// Which date constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DateForm {
    /// `yyyymmdd`.
    Date1,
    /// `yyyymm`.
    Date2,
    /// `yyyyddd`.
    Date3,
}

impl DateForm {
    /// `DATE1`... and whether it is the `P` (number) form.
    pub(super) fn parse(word: &str) -> Option<(DateForm, bool)> {
        let (base, packed) = match word.strip_suffix('P') {
            Some(b) => (b, true),
            None => (word, false),
        };
        let form = match base {
            "DATE1" => DateForm::Date1,
            "DATE2" => DateForm::Date2,
            "DATE3" => DateForm::Date3,
            _ => return None,
        };
        Some((form, packed))
    }
}

/// Days since 1970-01-01 of today (UTC).
pub(super) fn today() -> i64 {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    (secs / 86_400) as i64
}

/// The civil date (year, month 1-12, day 1-31) of a day count since 1970-01-01 (the
/// proleptic Gregorian calendar: eras of 400 years of 146097 days).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + (m <= 2) as i64;
    (y, m, d)
}

fn leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// Day of the year (1-366).
fn ordinal(y: i64, m: u32, d: u32) -> u32 {
    const BEFORE: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    BEFORE[m as usize - 1] + d + (m > 2 && leap(y)) as u32
}

/// The constant's digits and separators for the day `days` (since 1970-01-01), shifted by
/// `n` days (`DATE1`, `DATE3`) or months (`DATE2`); `sep` is `c` of `DATEn(c)`.
pub(super) fn text(form: DateForm, days: i64, n: i64, sep: Option<u8>) -> Vec<u8> {
    let sep = sep.map(|c| (c as char).to_string()).unwrap_or_default();
    match form {
        DateForm::Date1 => {
            let (y, m, d) = civil(days + n);
            format!("{y:04}{sep}{m:02}{sep}{d:02}").into_bytes()
        }
        DateForm::Date2 => {
            let (y, m, _) = civil(days);
            let months = y * 12 + (m as i64 - 1) + n;
            let (y, m) = (months.div_euclid(12), months.rem_euclid(12) + 1);
            format!("{y:04}{sep}{m:02}").into_bytes()
        }
        DateForm::Date3 => {
            let (y, m, d) = civil(days + n);
            format!("{y:04}{sep}{:03}", ordinal(y, m, d)).into_bytes()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_and_shifts() {
        // 1970-01-01 is day 0; 2000-03-01 is day 11017 (30 years of 365 days, 7 leap days
        // 1972..1996, then Jan + Feb 2000 = 31 + 29 days: 10950 + 7 + 60).
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(11_017), (2000, 3, 1));
        assert_eq!(civil(11_016), (2000, 2, 29));
        assert_eq!(text(DateForm::Date1, 11_017, -1, None), b"20000229");
        assert_eq!(text(DateForm::Date1, 11_017, 0, Some(b'-')), b"2000-03-01");
        // 2000-03-01 is day 31 + 29 + 1 = 61 of a leap year.
        assert_eq!(text(DateForm::Date3, 11_017, 0, None), b"2000061");
        assert_eq!(text(DateForm::Date3, 11_017, -61, None), b"1999365");
        // DATE2 counts months: March 2000 minus 3 months is December 1999.
        assert_eq!(text(DateForm::Date2, 11_017, -3, None), b"199912");
        assert_eq!(text(DateForm::Date2, 11_017, 10, Some(b'/')), b"2001/01");
        assert_eq!(DateForm::parse("DATE2P"), Some((DateForm::Date2, true)));
        assert_eq!(DateForm::parse("DATE4"), None);
    }
}

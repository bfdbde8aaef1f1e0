//! What GCSORT prints on standard output around a job, in its layout, for `oxsort gcsort`.
//!
//! ```text
//!  (blank line)
//!  ========================================================      the header, always
//!  GCSORT Version oxsort 0.1.0
//!  ========================================================
//!  TAKE file name                                                 with TAKE
//!  job.prm
//!  ========================================================
//!  Operation  : SORT                                              GCSORT_STATISTICS=1 or 2
//!  (blank line)
//!  INPUT FILE :                                     (see gcsort_echo; a join's own lines)
//!      in.txt FIXED (80,80) LS                                  (a tab before each file)
//!  ...
//!  ========================================================
//!  Before  job_loadFiles      - Thu Nov 26 19:30:00 2026          2, a sort
//!  ...
//!  ====================================================================   the totals, always
//!   Total Records Number       : 5
//!   Total Records Write Sort   : 0                                   (0: sorted in memory)
//!   Total Records Write Output : 4
//!  ====================================================================
//!  (blank line)                                                   2
//!   Memory size for GCSORT data     :  1073741824
//!  ===============================================
//!  (blank line)
//!  Start    : Thu Nov 26 19:30:00 2026
//!  End      : Thu Nov 26 19:30:01 2026
//!  Elapsed  Time 00hh 00mm 01ss 000ms
//!  (blank line)
//!  GCSORT - Sort OK                                               (a failed job: Sort KO)
//!  (blank line)
//! ```
//!
//! A JOINKEYS job's totals give each side's records read and sorted (` Total Records file F1
//! Read : n  -- Sort :  n`, for a side not `SORTED`) in place of the first two lines. The
//! counts are the job's; the times are oxsort's (UTC) and the memory its budget.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The header's and the job description's rules.
const RULE: &str = "========================================================";
/// The totals' rules.
const TOTALS_RULE: &str = "====================================================================";
/// The rule under the memory lines.
const MEMORY_RULE: &str = "===============================================";

/// What a GCSORT job does, as its report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcsortOp {
    /// `SORT FIELDS=COPY` or `OPTION COPY`.
    Copy,
    /// `MERGE`.
    Merge,
    /// `SORT`.
    Sort,
    /// `JOINKEYS`.
    Join,
}

impl GcsortOp {
    /// What the job of `control` does.
    pub fn of(control: &oxsort_lang::Control) -> GcsortOp {
        if control.join.is_some() {
            GcsortOp::Join
        } else if control.copy {
            GcsortOp::Copy
        } else if control.merge {
            GcsortOp::Merge
        } else {
            GcsortOp::Sort
        }
    }

    /// The name in `Operation  : ...`.
    fn upper(self) -> &'static str {
        match self {
            GcsortOp::Copy => "COPY",
            GcsortOp::Merge => "MERGE",
            GcsortOp::Sort => "SORT",
            GcsortOp::Join => "JOIN",
        }
    }

    /// The name in `GCSORT - ... OK`.
    fn title(self) -> &'static str {
        match self {
            GcsortOp::Copy => "Copy",
            GcsortOp::Merge => "Merge",
            GcsortOp::Sort => "Sort",
            GcsortOp::Join => "Join",
        }
    }
}

/// One side of a JOINKEYS job in the totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcsortJoinSide {
    /// Records read.
    pub read: u64,
    /// Records the side's sort wrote (`None` for a `SORTED` side: GCSORT prints no line).
    pub sorted: Option<u64>,
}

/// What the report says about the job.
#[derive(Debug, Clone)]
pub struct GcsortReport {
    /// `GCSORT_STATISTICS`: 0 (or unset), 1 or 2.
    pub level: u8,
    /// The version named in the header.
    pub version: String,
    /// The TAKE file's name as given.
    pub take: Option<String>,
    /// What the job does.
    pub op: GcsortOp,
    /// GCSORT's echo of the statements under `Operation` ([`crate::statements_echo`]).
    pub statements: String,
}

/// What the job did, for the totals.
#[derive(Debug, Clone)]
pub struct GcsortTotals {
    /// Records read (a sort's, copy's or merge's).
    pub read: u64,
    /// Records the sort wrote to temporary files: GCSORT counts a sort's records (after
    /// INCLUDE or OMIT) when it spills them to temporary files, and none otherwise (a sort in
    /// memory, a copy, a merge).
    pub to_sort: u64,
    /// Records written to the GIVE file.
    pub written: u64,
    /// A JOINKEYS job's F1 and F2.
    pub join: Option<[GcsortJoinSide; 2]>,
    /// The memory budget (shown with `GCSORT_STATISTICS=2`).
    pub memory: u64,
    /// The wall time of each phase, in order (shown with `GCSORT_STATISTICS=2` for a sort).
    pub phases: Vec<Duration>,
    /// The OUTFIL groups, in order (empty without OUTFIL).
    pub outfil: Vec<GcsortOutfil>,
    /// When the job started and ended.
    pub start: SystemTime,
    /// When the job ended.
    pub end: SystemTime,
}

/// One OUTFIL group in the totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcsortOutfil {
    /// The records the group wrote: every record it took once (a `SPLIT` group's outputs
    /// summed).
    pub records: u64,
    /// Each output's name as written and its records.
    pub files: Vec<(String, u64)>,
    /// `SAVE`: the records no other group took.
    pub save: bool,
}

impl GcsortTotals {
    /// The totals of a job of `control` that started at `start` and ends now, from its
    /// statistics (a JOINKEYS job's main task's) and a JOINKEYS job's counts; its OUTFIL
    /// outputs are named as written (`outfil_names`: DD name, name as written).
    pub fn new(
        stats: &oxsort_engine::SortStats,
        join: Option<crate::JoinCounts>,
        (control, outfil_names): (&oxsort_lang::Control, &[(String, String)]),
        start: SystemTime,
    ) -> GcsortTotals {
        let spec = control.join.as_ref();
        let side =
            |read: u64, sorted: bool| GcsortJoinSide { read, sorted: (!sorted).then_some(read) };
        let join = join.map(|j| {
            [
                side(j.f1, spec.is_some_and(|x| x.f1.sorted)),
                side(j.f2, spec.is_some_and(|x| x.f2.sorted)),
            ]
        });
        GcsortTotals {
            // GCSORT counts the records SKIPREC passes over as read.
            read: stats.records + stats.skipped_records,
            to_sort: if GcsortOp::of(control) == GcsortOp::Sort && stats.bytes_spilled > 0 {
                stats.records.saturating_sub(stats.dropped_by_filter)
            } else {
                0
            },
            written: stats.records_written,
            join,
            memory: stats.memory_budget,
            phases: stats.phases.iter().map(|p| Duration::from_secs_f64(p.elapsed_s)).collect(),
            outfil: outfil_groups(stats, control, outfil_names),
            start,
            end: SystemTime::now(),
        }
    }
}

/// Each OUTFIL group of `control`: the records each output got (from `stats`), under its name
/// as written (`names`: DD name, name as written).
fn outfil_groups(
    stats: &oxsort_engine::SortStats,
    control: &oxsort_lang::Control,
    names: &[(String, String)],
) -> Vec<GcsortOutfil> {
    control
        .outfil
        .iter()
        .map(|group| {
            let files: Vec<(String, u64)> = group
                .names
                .iter()
                .map(|dd| {
                    let records = stats
                        .outfil
                        .iter()
                        .find(|o| o.line == group.line && &o.name == dd)
                        .map_or(0, |o| o.records);
                    let written = names.iter().find(|(d, _)| d == dd).map_or(dd, |(_, w)| w);
                    (written.clone(), records)
                })
                .collect();
            let each = files.iter().map(|(_, n)| *n);
            let records = match group.split {
                oxsort_format::Split::None => each.max().unwrap_or(0),
                _ => each.sum(),
            };
            GcsortOutfil { records, files, save: group.save }
        })
        .collect()
}

impl GcsortReport {
    /// The header (and with `GCSORT_STATISTICS` 1 or 2, the operation), printed before the
    /// job runs.
    pub fn header(&self) -> String {
        let mut s = format!("\n{RULE}\nGCSORT Version {}\n{RULE}\n", self.version);
        if let Some(take) = &self.take {
            s += &format!("TAKE file name\n{take}\n{RULE}\n");
        }
        if self.level > 0 {
            s += &format!("Operation  : {}\n\n", self.op.upper());
            s += &self.statements;
            s += &format!("{RULE}\n");
        }
        s
    }

    /// The totals, times and closing line, printed after the job ran.
    pub fn closing(&self, t: &GcsortTotals) -> String {
        let mut s = String::new();
        if self.level == 2 && self.op == GcsortOp::Sort {
            s += &phase_lines(t);
        }
        s += &format!("{TOTALS_RULE}\n");
        match &t.join {
            Some(sides) => {
                for (name, side) in ["F1", "F2"].iter().zip(sides) {
                    if let Some(sorted) = side.sorted {
                        s += &format!(
                            " Total Records file {name} Read : {}  -- Sort :  {sorted}\n",
                            side.read
                        );
                    }
                }
            }
            None => {
                s += &format!(" Total Records Number       : {}\n", t.read);
                s += &format!(" Total Records Write Sort   : {}\n", t.to_sort);
            }
        }
        s += &format!(" Total Records Write Output : {}\n", t.written);
        s += &format!("{TOTALS_RULE}\n");
        if self.level == 2 {
            s += &format!("\n Memory size for GCSORT data     :  {}\n", t.memory);
            s += &format!("{MEMORY_RULE}\n\n");
        }
        s += &outfil_lines(&t.outfil);
        s += &format!("Start    : {}\n", asctime(t.start));
        s += &format!("End      : {}\n", asctime(t.end));
        let took = t.end.duration_since(t.start).unwrap_or_default();
        let secs = took.as_secs();
        s += &format!(
            "Elapsed  Time {:02}hh {:02}mm {:02}ss {:03}ms\n\n",
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            took.subsec_millis()
        );
        s += &format!("GCSORT - {} OK\n\n", self.op.title());
        s
    }
}

impl GcsortReport {
    /// The level a `GCSORT_STATISTICS` value asks for, read as GCSORT reads it (C's `atol`:
    /// the number the text starts with, 0 for none); `Err(1)` for a level GCSORT does not know,
    /// for which it warns and takes 1.
    pub fn level_of(value: &str) -> Result<u8, u8> {
        let t = value.trim_start();
        let digits_at = usize::from(t.starts_with(['+', '-']));
        let end =
            t[digits_at..].find(|c: char| !c.is_ascii_digit()).map_or(t.len(), |e| e + digits_at);
        match t[..end].parse::<i64>() {
            Ok(n @ 0..=2) => Ok(n as u8),
            Ok(_) => Err(1),
            // No digits: atol gives 0; more digits than fit: a level GCSORT does not know.
            Err(_) if end == digits_at => Ok(0),
            Err(_) => Err(1),
        }
    }

    /// The closing line of a job that did not run to its end (its message is on stderr).
    pub fn failed(&self) -> String {
        format!("GCSORT - {} KO\n\n", self.op.title())
    }
}

/// GCSORT's OUTFIL totals: each group's records; with a `SAVE` group, each output of the
/// other groups and then the `SAVE` group's first output.
fn outfil_lines(groups: &[GcsortOutfil]) -> String {
    if groups.is_empty() {
        return String::new();
    }
    let save = groups.iter().find(|g| g.save);
    let mut s = String::new();
    for g in groups {
        s += &format!("OUTFIL Total Records Write     : {:10}\n", g.records);
        if save.is_some() && !g.save {
            for (name, n) in &g.files {
                s += &format!("Record Write for file : {n:10} - File: {name}\n");
            }
        }
    }
    if let Some(g) = save {
        let name = g.files.first().map_or("", |(n, _)| n.as_str());
        s += &format!("Record Write for file : {:10} - SAVE: {name}\n", g.records);
    }
    s + "\n"
}

/// GCSORT's `Before`/`After` lines of a sort's three steps, at the times the phases ended.
fn phase_lines(t: &GcsortTotals) -> String {
    const STEPS: [&str; 3] = ["job_loadFiles", "job_sort", "job_save"];
    let mut at = t.start;
    let mut s = String::new();
    for (i, step) in STEPS.iter().enumerate() {
        s += &format!("Before  {step:<18} - {}\n", asctime(at));
        at += t.phases.get(i).copied().unwrap_or_default();
        s += &format!("After   {step:<18} - {}\n", asctime(at));
    }
    s
}

/// C's `asctime` of `t` in UTC, without its newline: `Thu Nov 26 19:30:00 2026`.
fn asctime(t: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = oxsort_lang::civil_date(days as i64);
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {y}",
        DAYS[(days % 7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_written_to_sort_count_only_when_a_sort_spills() {
        let control = |text: &str| oxsort_lang::parse_control(text).unwrap();
        let stats = oxsort_engine::SortStats {
            records: 10,
            dropped_by_filter: 3,
            records_written: 7,
            ..Default::default()
        };
        let sort = control(" SORT FIELDS=(1,1,CH,A)\n");
        let t = GcsortTotals::new(&stats, None, (&sort, &[]), UNIX_EPOCH);
        assert_eq!((t.read, t.to_sort, t.written), (10, 0, 7), "in memory");
        let spilled = oxsort_engine::SortStats { bytes_spilled: 700, ..stats.clone() };
        let t = GcsortTotals::new(&spilled, None, (&sort, &[]), UNIX_EPOCH);
        assert_eq!((t.read, t.to_sort, t.written), (10, 7, 7), "through temporary files");
        let t = GcsortTotals::new(&spilled, None, (&control(" OPTION COPY\n"), &[]), UNIX_EPOCH);
        assert_eq!(t.to_sort, 0, "a copy");
        let skipped = oxsort_engine::SortStats { skipped_records: 2, ..stats };
        let t = GcsortTotals::new(&skipped, None, (&sort, &[]), UNIX_EPOCH);
        assert_eq!(t.read, 12, "SKIPREC's records count as read");
    }

    #[test]
    fn statistics_levels_read_as_atol() {
        assert_eq!(GcsortReport::level_of("2"), Ok(2));
        assert_eq!(GcsortReport::level_of(" 1x"), Ok(1));
        assert_eq!(GcsortReport::level_of("abc"), Ok(0));
        assert_eq!(GcsortReport::level_of("3"), Err(1));
        assert_eq!(GcsortReport::level_of("-1"), Err(1));
        assert_eq!(GcsortReport::level_of("99999999999999999999999"), Err(1));
    }

    #[test]
    fn asctime_matches_c() {
        // 2026-11-26 19:30:05 UTC (date -u -d @1795721405 says Thu Nov 26 19:30:05 2026).
        let t = UNIX_EPOCH + Duration::from_secs(1_795_721_405);
        assert_eq!(asctime(t), "Thu Nov 26 19:30:05 2026");
        assert_eq!(asctime(UNIX_EPOCH), "Thu Jan  1 00:00:00 1970");
        // 2000-02-29 12:00:00 UTC, a leap day: 951825600.
        assert_eq!(
            asctime(UNIX_EPOCH + Duration::from_secs(951_825_600)),
            "Tue Feb 29 12:00:00 2000"
        );
    }

    fn totals() -> GcsortTotals {
        let start = UNIX_EPOCH + Duration::from_secs(1_795_721_405);
        GcsortTotals {
            read: 5,
            to_sort: 4,
            written: 3,
            join: None,
            memory: 1024,
            phases: vec![Duration::from_secs(1), Duration::ZERO, Duration::from_secs(1)],
            outfil: Vec::new(),
            start,
            end: start + Duration::from_millis(2_250),
        }
    }

    #[test]
    fn the_default_report_is_the_header_and_the_totals() {
        let r = GcsortReport {
            level: 0,
            version: "oxsort 9".into(),
            take: Some("job.prm".into()),
            op: GcsortOp::Sort,
            statements: String::new(),
        };
        let want =
            format!("\n{RULE}\nGCSORT Version oxsort 9\n{RULE}\nTAKE file name\njob.prm\n{RULE}\n");
        assert_eq!(r.header(), want);
        let want = format!(
            "{TOTALS_RULE}\n Total Records Number       : 5\n Total Records Write Sort   : 4\n \
             Total Records Write Output : 3\n{TOTALS_RULE}\nStart    : Thu Nov 26 19:30:05 2026\n\
             End      : Thu Nov 26 19:30:07 2026\nElapsed  Time 00hh 00mm 02ss 250ms\n\n\
             GCSORT - Sort OK\n\n"
        );
        assert_eq!(r.closing(&totals()), want);
    }

    #[test]
    fn statistics_add_the_operation_the_steps_and_the_memory() {
        let r = GcsortReport {
            level: 2,
            version: "v".into(),
            take: None,
            op: GcsortOp::Sort,
            statements: "INPUT FILE :\n".into(),
        };
        assert_eq!(
            r.header(),
            format!(
                "\n{RULE}\nGCSORT Version v\n{RULE}\nOperation  : SORT\n\nINPUT FILE :\n{RULE}\n"
            )
        );
        let c = r.closing(&totals());
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines[0], "Before  job_loadFiles      - Thu Nov 26 19:30:05 2026");
        assert_eq!(lines[1], "After   job_loadFiles      - Thu Nov 26 19:30:06 2026");
        assert_eq!(lines[5], "After   job_save           - Thu Nov 26 19:30:07 2026");
        assert_eq!(lines[6], TOTALS_RULE);
        assert_eq!(lines[11], "");
        assert_eq!(lines[12], " Memory size for GCSORT data     :  1024");
        assert_eq!(lines[13], MEMORY_RULE);
    }

    #[test]
    fn a_join_gives_each_unsorted_side() {
        let r = GcsortReport {
            level: 1,
            version: "v".into(),
            take: None,
            op: GcsortOp::Join,
            statements: "JOIN F1 FIELDS : (1,1,CH,A) \n".into(),
        };
        assert_eq!(
            r.header(),
            format!(
                "\n{RULE}\nGCSORT Version v\n{RULE}\nOperation  : JOIN\n\n\
                 JOIN F1 FIELDS : (1,1,CH,A) \n{RULE}\n"
            )
        );
        let t = GcsortTotals {
            join: Some([
                GcsortJoinSide { read: 7, sorted: Some(7) },
                GcsortJoinSide { read: 2, sorted: None },
            ]),
            ..totals()
        };
        let c = r.closing(&t);
        assert!(c.starts_with(&format!(
            "{TOTALS_RULE}\n Total Records file F1 Read : 7  -- Sort :  7\n \
             Total Records Write Output : 3\n"
        )));
        assert!(c.ends_with("GCSORT - Join OK\n\n"));
    }

    #[test]
    fn outfil_groups_give_their_totals_before_the_times() {
        let r = GcsortReport {
            level: 0,
            version: "v".into(),
            take: None,
            op: GcsortOp::Copy,
            statements: String::new(),
        };
        let group = |records, files: &[(&str, u64)], save| GcsortOutfil {
            records,
            files: files.iter().map(|(n, r)| (n.to_string(), *r)).collect(),
            save,
        };
        let t = GcsortTotals {
            outfil: vec![group(3, &[("a", 2), ("b", 1)], false), group(4, &[("c", 4)], false)],
            ..totals()
        };
        let c = r.closing(&t);
        assert!(
            c.contains(&format!(
                "{TOTALS_RULE}\nOUTFIL Total Records Write     :          3\n\
                 OUTFIL Total Records Write     :          4\n\nStart    : "
            )),
            "{c}"
        );
        // With a SAVE group: each other group's outputs, then the SAVE group's.
        let t = GcsortTotals {
            outfil: vec![group(2, &[("a", 2)], false), group(5, &[("rest", 5)], true)],
            ..totals()
        };
        let c = r.closing(&t);
        assert!(
            c.contains(
                "OUTFIL Total Records Write     :          2\n\
                 Record Write for file :          2 - File: a\n\
                 OUTFIL Total Records Write     :          5\n\
                 Record Write for file :          5 - SAVE: rest\n\n"
            ),
            "{c}"
        );
    }
}

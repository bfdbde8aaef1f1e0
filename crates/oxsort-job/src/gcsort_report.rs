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
//!  INPUT FILE :                                                    (see statements_echo)
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
    /// GCSORT's echo of the statements under `Operation` ([`statements_echo`]).
    pub statements: String,
}

/// GCSORT's echo of a job's statements with `GCSORT_STATISTICS` 1 or 2 (its `job_print`): the
/// USE and GIVE files (name as written, `FIXED` or `VARIABLE`, the lengths, `ORG`), the sort or
/// merge fields, `FIELDS = COPY`, `SKIPREC`, `STOPAFT`, `SUM FIELDS = NONE` and `OPTION
/// VLSCMP VLSHRT`, then a rule. A JOINKEYS job's is empty. (GCSORT also echoes conditions,
/// INREC, OUTREC, SUM fields and OUTFIL groups in forms of its own; oxsort does not.)
pub fn statements_echo(job: &oxsort_lang::GcsortJob, control: &oxsort_lang::Control) -> String {
    if job.join {
        return String::new();
    }
    let file = |f: &oxsort_lang::GcsortFile| {
        let (org, record) = &f.written;
        let parts: Vec<&str> = record.split(',').collect();
        let (form, min, max) = match parts.as_slice() {
            ["F", n] => ("FIXED", *n, *n),
            [_, min, max] => ("VARIABLE", *min, *max),
            _ => ("UNKNOWN", "0", "0"),
        };
        format!("\t{} {form} ({min},{max}) {org}\n", f.name)
    };
    let mut s = String::from("INPUT FILE :\n");
    s.extend(job.uses.iter().map(file));
    if let Some(give) = &job.give {
        s += "OUTPUT FILE :\n";
        s += &file(give);
    }
    if let (Some(key), false) = (&control.key, control.copy) {
        let fields: Vec<String> = key
            .fields
            .iter()
            .filter_map(|f| match f.loc {
                oxsort_format::FieldLoc::Bytes { offset, len } => {
                    // GCSORT's FL is oxsort's LF (the machine's byte order).
                    let kind = match f.kind.name() {
                        "LF" => "FL",
                        k => k,
                    };
                    Some(format!(
                        "{},{len},{kind},{}",
                        offset + 1,
                        if f.descending { "D" } else { "A" }
                    ))
                }
                _ => None,
            })
            .collect();
        let verb = if control.merge { "MERGE" } else { "SORT" };
        s += &format!("{verb} FIELDS : ({})\n", fields.join(","));
    }
    if control.copy {
        s += "FIELDS = COPY \n";
    }
    if let Some(n) = control.skiprec {
        s += &format!("SKIPREC = {n}\n");
    }
    if let Some(n) = control.stopaft {
        s += &format!("STOPAFT = {n}\n");
    }
    if control.sum_none {
        s += "SUM FIELDS = NONE\n";
    }
    if control.vlscmp || control.vlshrt {
        s += "OPTION ";
        s += if control.vlscmp { " VLSCMP" } else { "" };
        s += if control.vlshrt { " VLSHRT" } else { "" };
        s += "\n";
    }
    s
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
    /// When the job started and ended.
    pub start: SystemTime,
    /// When the job ended.
    pub end: SystemTime,
}

impl GcsortTotals {
    /// The totals of a job of `control` that started at `start` and ends now, from its
    /// statistics (a JOINKEYS job's main task's) and a JOINKEYS job's counts.
    pub fn new(
        stats: &oxsort_engine::SortStats,
        join: Option<crate::JoinCounts>,
        control: &oxsort_lang::Control,
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
            start,
            end: SystemTime::now(),
        }
    }
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
            if self.op != GcsortOp::Join {
                s += &self.statements;
                s += &format!("{RULE}\n");
            }
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

    /// Names stand for themselves; there are no TAKE files.
    struct Names;

    impl oxsort_lang::GcsortFiles for Names {
        fn path(&self, name: &str) -> std::path::PathBuf {
            name.into()
        }
        fn read(&mut self, _: &std::path::Path) -> std::io::Result<String> {
            Err(std::io::ErrorKind::NotFound.into())
        }
    }

    fn echo(text: &str) -> String {
        let job = oxsort_lang::parse_gcsort(text, "job", &mut Names).unwrap();
        statements_echo(&job, &oxsort_lang::parse_control(&job.control).unwrap())
    }

    #[test]
    fn the_echo_gives_files_fields_and_options() {
        assert_eq!(
            echo(
                "MERGE FIELDS=(5,4,FL,D,1,2,CH,A) USE a ORG SQ RECORD V,10,300 \
                 USE b ORG LSF RECORD F,20 GIVE c ORG SQ RECORD F,20 SUM FIELDS=NONE \
                 OPTION SKIPREC=2,STOPAFT=9,VLSCMP"
            ),
            "INPUT FILE :\n\ta VARIABLE (10,300) SQ\n\tb FIXED (20,20) LSF\n\
             OUTPUT FILE :\n\tc FIXED (20,20) SQ\nMERGE FIELDS : (5,4,FL,D,1,2,CH,A)\n\
             SKIPREC = 2\nSTOPAFT = 9\nSUM FIELDS = NONE\nOPTION  VLSCMP\n"
        );
        assert_eq!(
            echo("SORT FIELDS=COPY USE a ORG LS RECORD F,5 GIVE b ORG LS RECORD F,5"),
            "INPUT FILE :\n\ta FIXED (5,5) LS\nOUTPUT FILE :\n\tb FIXED (5,5) LS\nFIELDS = COPY \n"
        );
    }

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
        let t = GcsortTotals::new(&stats, None, &sort, UNIX_EPOCH);
        assert_eq!((t.read, t.to_sort, t.written), (10, 0, 7), "in memory");
        let spilled = oxsort_engine::SortStats { bytes_spilled: 700, ..stats.clone() };
        let t = GcsortTotals::new(&spilled, None, &sort, UNIX_EPOCH);
        assert_eq!((t.read, t.to_sort, t.written), (10, 7, 7), "through temporary files");
        let t = GcsortTotals::new(&spilled, None, &control(" OPTION COPY\n"), UNIX_EPOCH);
        assert_eq!(t.to_sort, 0, "a copy");
        let skipped = oxsort_engine::SortStats { skipped_records: 2, ..stats };
        let t = GcsortTotals::new(&skipped, None, &sort, UNIX_EPOCH);
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
            statements: String::new(),
        };
        assert_eq!(
            r.header(),
            format!("\n{RULE}\nGCSORT Version v\n{RULE}\nOperation  : JOIN\n\n")
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
}

//! `oxsort gcsort ARGS...`: GCSORT's command form (GnuCOBOL's DFSORT-compatible sort), so its
//! jobs run unchanged.
//!
//! ```text
//!  oxsort gcsort [-fsign=ASCII] [-fcolseq=NATIVE|ASCII] TAKE file      statements from a file
//!  oxsort gcsort [options] SORT FIELDS=(1,5,CH,A) USE in ORG SQ RECORD F,100 GIVE out ORG SQ ...
//!
//!  USE  file ORG SQ|LS|LSF RECORD F,n|V,min,max     an input (repeat to concatenate)
//!  GIVE file ORG SQ|LS|LSF RECORD F,n|V,min,max     the output
//!  XSUM file ORG SQ|LS|LSF RECORD F,n|V,min,max     the records SUM ...,XSUM deletes
//!  TAKE file                                        statements read from file, in place
//!  SORT, MERGE, SUM, INCLUDE, OMIT, INREC, OUTREC, OUTFIL, OPTION, RECORD, ALTSEQ, END
//!                                                   as DFSORT's
//!  JOINKEYS FILES=F1 / FILES=F2, JOIN, REFORMAT      a join: the first USE is F1, the second F2
//! ```
//!
//! The statements are free form as GCSORT reads them (see `oxsort_lang::parse_gcsort`). A
//! USE, GIVE, TAKE or OUTFIL `FNAMES=` name stands for the value of the environment variable
//! `DD_name`, `dd_name` or `name` (the first set), as GnuCOBOL's `ASSIGN` names do. The job
//! layer sets the files in the request (`oxsort_job::GcsortRun`: a JOINKEYS job's USE files
//! as `SORTJNF1` and `SORTJNF2`, line sequential `RECORD F,n` files staged as `n`-byte
//! records). GCSORT's options `-fsign=ASCII`, `-fcolseq=NATIVE|ASCII` and `-mt[=N]` are read,
//! and its environment variables `GCSORT_MEMSIZE` (memory), `GCSORT_PATHTMP` (temp
//! directory), `GCSORT_STATISTICS` (GCSORT's report on stdout: unset or 0, 1 with the
//! operation, 2 with the steps and memory; see `oxsort_job::GcsortReport`) and
//! `GCSORT_TESTCMD` (1: check only); oxsort's own `--memory SIZE`, `--temp-dir DIR`,
//! `--threads N` and `--quiet` may come before the statements. The exit status is GCSORT's:
//! 0 when the job ran, 4 when it ran with a warning, 16 when it did not (the message says
//! why). A link named `gcsort` runs this command. The control statements run by GCSORT's rules
//! where they differ from DFSORT's (`ControlText::gcsort`: FINDREP as GCSORT runs it).
//!
//! The statements are read by `oxsort_lang::parse_gcsort`; this door reads the arguments and
//! TAKE files, resolves names, and prints.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use oxsort_job::{ControlText, GcsortOp, GcsortReport, GcsortRun, GcsortTotals, JobRequest};
use oxsort_lang::{GcsortFile, GcsortFiles, GcsortOrg};

use crate::keys_args::KeyArgs;
use crate::sort_cmd::Report;

/// GCSORT's exit status for a job that did not run.
const GCSORT_ERROR: i32 = 16;
/// GCSORT's exit status for a job that ran with a warning.
const GCSORT_WARNING: i32 = 4;

/// Runs `oxsort gcsort` (or a link named `gcsort`); prints what went wrong and returns the
/// exit status.
pub fn main(argv: Vec<String>) -> i32 {
    match run(argv) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("oxsort gcsort: {}", oxsort_engine::error_message(err.as_ref()));
            GCSORT_ERROR
        }
    }
}

/// Runs `oxsort gcsort`; returns the exit status.
fn run(argv: Vec<String>) -> Result<i32> {
    let mut req = JobRequest::new(Vec::new(), PathBuf::from(oxsort_job::STD));
    // GCSORT's report goes to standard output, in its layout; oxsort's closing report is off.
    let mut report =
        Report { quiet: true, stats: None, summary: None, timeline: None, progress: false };
    let (test_only, level) = environment(&mut req, &mut report)?;
    let mut silent = false;
    let mut rest = argv.as_slice();
    loop {
        match rest {
            [flag, value, tail @ ..] if flag == "--memory" => {
                req.resources.memory =
                    Some(oxsort_lang::parse_bytes(value).map_err(|e| anyhow!("{e}"))?);
                rest = tail;
            }
            [flag, value, tail @ ..] if flag == "--temp-dir" => {
                req.resources.temp_dirs.push(PathBuf::from(value));
                rest = tail;
            }
            [flag, value, tail @ ..] if flag == "--threads" => {
                let t: usize =
                    value.parse().map_err(|_| anyhow!("--threads {value}: not a number"))?;
                anyhow::ensure!(t >= 1, "--threads must be at least 1");
                req.resources.threads = Some(t);
                rest = tail;
            }
            [flag, tail @ ..] if flag == "--quiet" || flag == "-q" => {
                silent = true;
                rest = tail;
            }
            [flag, tail @ ..] if flag.starts_with("-f") => {
                gcsort_option(flag)?;
                rest = tail;
            }
            [flag, tail @ ..] if flag.to_ascii_lowercase().starts_with("-mt") => {
                req.resources.threads = threads_option(flag)?;
                rest = tail;
            }
            _ => break,
        }
    }
    if rest.is_empty() {
        bail!(
            "gcsort: no statements: give TAKE file, or the statements (SORT FIELDS=... USE file \
             ORG SQ RECORD F,n GIVE file ORG SQ RECORD F,n)"
        );
    }
    let text = oxsort_lang::gcsort_statements(rest);
    let mut job = oxsort_lang::parse_gcsort(&text, "the gcsort command line", &mut Files)?;
    // Checked here so that a message points at the statement as written.
    let control = oxsort_lang::parse_control(&job.control).map_err(|e| job.locate(&e))?;
    for u in &job.uses {
        check_use(u)?;
    }
    // OUTFIL's FNAMES are names as written too: an environment variable's value when one is
    // set.
    let outfil_names = oxsort_job::outfil_names(&job, &control);
    for (dd, written) in outfil_names.iter().filter(|(dd, _)| dd != "SORTOUT") {
        req.data_sets.dd.push((dd.clone(), Files.path(written)));
    }
    // Echoed as written: before the OUTREC that fits records to the GIVE length is added.
    let statements = oxsort_job::statements_echo(&job, &control);
    job.fit_to_give();
    if test_only {
        eprintln!("oxsort gcsort: the statements are correct; nothing was run (GCSORT_TESTCMD=1)");
        return Ok(0);
    }
    let gcsort_report = GcsortReport {
        level,
        version: format!("oxsort {}", env!("CARGO_PKG_VERSION")),
        take: match rest {
            [take, file, ..] if take.eq_ignore_ascii_case("TAKE") => Some(file.clone()),
            _ => None,
        },
        op: GcsortOp::of(&control),
        statements,
    };
    // Standard output is the GIVE file's when it is "-": the report goes to stderr then.
    let to_stderr = job.give.as_ref().is_some_and(|g| oxsort_job::is_std(&g.path));
    let say = |text: &str| match (silent, to_stderr) {
        (true, _) => {}
        (false, true) => eprint!("{text}"),
        (false, false) => print!("{text}"),
    };
    say(&gcsort_report.header());
    match execute(req, &job, &report, (&control, &outfil_names)) {
        Ok((code, warned, totals)) => {
            if let Some(t) = totals {
                say(&gcsort_report.closing(&t));
            }
            // GCSORT's warning status, as DFSORT's: the job ran, with a warning on stderr.
            Ok(if code == 0 && warned { GCSORT_WARNING } else { code })
        }
        Err(e) => {
            say(&gcsort_report.failed());
            Err(e)
        }
    }
}

/// Runs the job of `job` in `req` (`statements`: parsed, and the OUTFIL outputs' DD names
/// with their names as written): its exit status, whether it warned, and GCSORT's totals.
fn execute(
    mut req: JobRequest,
    job: &oxsort_lang::GcsortJob,
    report: &Report,
    statements: (&oxsort_lang::Control, &[(String, String)]),
) -> Result<(i32, bool, Option<GcsortTotals>)> {
    let start = std::time::SystemTime::now();
    let run = GcsortRun::new(&mut req, job)?;
    for w in &run.warnings {
        eprintln!("oxsort gcsort: warning: {w}");
    }
    let mut keys = KeyArgs::default();
    match run.org {
        // A JOINKEYS job: each side's length is in the request.
        None => {}
        Some(GcsortOrg::Lines) => keys.lines = true,
        Some(GcsortOrg::Fixed(n) | GcsortOrg::LinesFixed { len: n, .. }) => {
            keys.record_size = Some(n)
        }
        Some(GcsortOrg::Variable(max)) => keys.rdw = Some(max),
    }
    req.spec =
        keys.spec_source(Some(ControlText::gcsort(job.name.clone(), job.control.clone())))?;
    oxsort_io::cleanup::install_signal_handlers();
    let (code, outcome) = crate::sort_cmd::run_job_outcome(req, &keys, report)?;
    run.finish()?;
    let totals = outcome.map(|o| GcsortTotals::new(&o.stats, o.join, statements, start));
    Ok((code, !run.warnings.is_empty(), totals))
}

/// File names as GCSORT reads them, TAKE files from disk.
struct Files;

/// The environment variables a file name may stand for, in the order GnuCOBOL looks.
fn variables(name: &str) -> [String; 3] {
    [format!("DD_{name}"), format!("dd_{name}"), name.to_string()]
}

/// The environment variable a file name stands for, and its value.
fn variable(name: &str) -> Option<(String, std::ffi::OsString)> {
    if name.contains('/') {
        return None;
    }
    variables(name)
        .into_iter()
        .find_map(|v| std::env::var_os(&v).filter(|x| !x.is_empty()).map(|x| (v, x)))
}

impl GcsortFiles for Files {
    /// The value of the environment variable the name stands for, or the name itself.
    fn path(&self, name: &str) -> PathBuf {
        variable(name).map_or_else(|| PathBuf::from(name), |(_, v)| PathBuf::from(v))
    }

    fn read(&mut self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }
}

/// GCSORT's `-f` options: the ASCII ones are what oxsort does anyway.
fn gcsort_option(flag: &str) -> Result<()> {
    let upper = flag.to_ascii_uppercase();
    match upper.as_str() {
        "-FSIGN=ASCII" | "-FCOLSEQ=NATIVE" | "-FCOLSEQ=ASCII" => Ok(()),
        _ => bail!(
            "gcsort option {flag} is not supported (oxsort's data is ASCII: -fsign=ASCII and \
             -fcolseq=NATIVE|ASCII are accepted)"
        ),
    }
}

/// A USE file that is not there, named with where its name came from.
fn check_use(u: &GcsortFile) -> Result<()> {
    if u.path.exists() || oxsort_job::is_std(&u.path) {
        return Ok(());
    }
    let from = match variable(&u.name) {
        Some((var, _)) => format!("the value of the environment variable {var}"),
        None => {
            format!("none of the environment variables {} is set", variables(&u.name).join(", "))
        }
    };
    bail!("USE {}: the input {} does not exist ({from})", u.name, u.path.display())
}

/// GCSORT's `-mt` (threads as oxsort chooses) and `-mt=N`.
fn threads_option(flag: &str) -> Result<Option<usize>> {
    match flag.split_once('=') {
        None if flag.eq_ignore_ascii_case("-mt") => Ok(None),
        Some((_, n)) => match n.parse::<usize>() {
            Ok(t) if t >= 1 => Ok(Some(t)),
            _ => bail!("gcsort option {flag}: expected -mt or -mt=N with N at least 1"),
        },
        None => bail!("gcsort option {flag} is not supported (-mt and -mt=N are)"),
    }
}

/// GCSORT's environment variables: `GCSORT_MEMSIZE`, `GCSORT_PATHTMP`, `GCSORT_STATISTICS`
/// (0 or unset: GCSORT's report, 1: the operation too, 2: the steps and memory too, and
/// oxsort's statistics on stderr) and `GCSORT_TESTCMD` (1: check the statements, run
/// nothing); returns whether to run nothing, and the statistics level.
fn environment(req: &mut JobRequest, report: &mut Report) -> Result<(bool, u8)> {
    let var = |name: &str| std::env::var(name).ok().map(|v| v.trim().to_string());
    let var = |name: &str| var(name).filter(|v| !v.is_empty());
    if let Some(v) = var("GCSORT_MEMSIZE") {
        let bytes = oxsort_lang::parse_bytes(&v).map_err(|e| anyhow!("GCSORT_MEMSIZE={v}: {e}"))?;
        req.resources.memory = Some(bytes);
    }
    if let Some(v) = var("GCSORT_PATHTMP") {
        req.resources.temp_dirs.push(PathBuf::from(v));
    }
    // GCSORT takes 1 for a level it does not know (the level only changes what is printed).
    let level = match var("GCSORT_STATISTICS").map(|v| (GcsortReport::level_of(&v), v)) {
        None => 0,
        Some((Ok(n), _)) => n,
        Some((Err(n), v)) => {
            eprintln!(
                "oxsort gcsort: warning: GCSORT_STATISTICS={v}: expected 0, 1 or 2; {n} is used"
            );
            n
        }
    };
    if level == 2 {
        report.stats = Some(crate::sort_cmd::StatsFormat::Text);
    }
    match var("GCSORT_TESTCMD").as_deref() {
        None | Some("0") => Ok((false, level)),
        Some("1") => Ok((true, level)),
        Some(v) => bail!("GCSORT_TESTCMD={v}: expected 0 or 1"),
    }
}

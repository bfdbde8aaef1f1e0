//! `oxsort gcsort ARGS...`: GCSORT's command form (GnuCOBOL's DFSORT-compatible sort), so its
//! jobs run unchanged.
//!
//! ```text
//!  oxsort gcsort [-fsign=ASCII] [-fcolseq=NATIVE|ASCII] TAKE file      statements from a file
//!  oxsort gcsort [options] SORT FIELDS=(1,5,CH,A) USE in ORG SQ RECORD F,100 GIVE out ORG SQ ...
//!
//!  USE  file ORG SQ|LS|LSF RECORD F,n|V,min,max     an input (repeat to concatenate)
//!  GIVE file ORG SQ|LS|LSF RECORD F,n|V,min,max     the output
//!  TAKE file                                        statements read from file, in place
//!  SORT, MERGE, SUM, INCLUDE, OMIT, INREC, OUTREC, OPTION, RECORD   as DFSORT's
//!  JOINKEYS FILES=F1 / FILES=F2, JOIN, REFORMAT      a join: the first USE is F1, the second F2
//! ```
//!
//! `ORG SQ` with `RECORD F,n` is fixed n-byte records; `ORG SQ` with `RECORD V,min,max` is
//! RDW-prefixed variable records (each a 4-byte RDW, whose big-endian length counts the RDW,
//! then `min` to `max` data bytes; positions count the RDW as bytes 1-4); `ORG LS` and `LSF`
//! are line sequential files (text lines). A file name that is the name of an environment variable stands for its
//! value, as GnuCOBOL's `ASSIGN TO EXTERNAL` names do. Lines whose first non-blank is `*` are
//! comments. A JOINKEYS job runs through the job layer as `oxsort sort --control` runs it (its
//! USE files as `SORTJNF1` and `SORTJNF2`, each with its own record length). oxsort's own
//! `--memory SIZE`, `--temp-dir DIR`, `--threads N` and `--quiet` may come before the
//! statements.
//!
//! The statements are read by `oxsort_lang::parse_gcsort`; this door cuts the arguments, reads
//! TAKE files, resolves names, and builds the job request.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use oxsort_job::{ControlText, JobRequest};
use oxsort_lang::{GcsortFiles, GcsortJob, GcsortOrg};

use crate::keys_args::KeyArgs;
use crate::sort_cmd::Report;

/// Runs `oxsort gcsort`; returns the exit status.
pub fn run(argv: Vec<String>) -> Result<i32> {
    let mut req = JobRequest::new(Vec::new(), PathBuf::from(oxsort_job::STD));
    let mut report =
        Report { quiet: false, stats: None, summary: None, timeline: None, progress: false };
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
                report.quiet = true;
                rest = tail;
            }
            [flag, tail @ ..] if flag.starts_with("-f") => {
                gcsort_option(flag)?;
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
    let job = oxsort_lang::parse_gcsort(&text, "the gcsort command line", &mut Files)?;
    if job.join {
        return run_join(req, report, job);
    }
    let files = job.sort_files()?;
    req.inputs = job.uses.iter().map(|u| u.path.clone()).collect();
    req.output = files.give.path.clone();
    let mut keys = KeyArgs::default();
    match files.org {
        GcsortOrg::Lines => keys.lines = true,
        GcsortOrg::Fixed(n) => keys.record_size = Some(n),
        GcsortOrg::Variable(max) => keys.rdw = Some(max),
    }
    req.spec = keys.spec_source(Some(ControlText::new(job.name.clone(), job.control.clone())))?;
    oxsort_io::cleanup::install_signal_handlers();
    crate::sort_cmd::run_job(req, &keys, &report)
}

/// Runs a JOINKEYS application: the first USE file is F1 (`SORTJNF1`), the second F2
/// (`SORTJNF2`), each with its own record length; GIVE is the main task's output.
fn run_join(mut req: JobRequest, report: Report, job: GcsortJob) -> Result<i32> {
    let files = job.join_files()?;
    for (dd, (path, n)) in [("SORTJNF1", files.f1), ("SORTJNF2", files.f2)] {
        req.data_sets.dd.push((dd.to_string(), path.to_path_buf()));
        req.data_sets.lrecl.push((dd.to_string(), n));
    }
    req.output = files.give.0.to_path_buf();
    let keys = KeyArgs::default();
    req.spec = keys.spec_source(Some(ControlText::new(job.name.clone(), job.control.clone())))?;
    oxsort_io::cleanup::install_signal_handlers();
    crate::sort_cmd::run_job(req, &keys, &report)
}

/// File names as GCSORT reads them, TAKE files from disk.
struct Files;

impl GcsortFiles for Files {
    /// An environment variable's value when one has the name (GnuCOBOL's `ASSIGN TO
    /// EXTERNAL`).
    fn path(&self, name: &str) -> PathBuf {
        match std::env::var_os(name) {
            Some(v) if !name.contains('/') && !v.is_empty() => PathBuf::from(v),
            _ => PathBuf::from(name),
        }
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

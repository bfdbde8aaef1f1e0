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

use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use oxsort_format::MAX_RECORD_SIZE;

use oxsort_job::{ControlText, JobRequest};

use crate::keys_args::KeyArgs;
use crate::sort_cmd::Report;

/// Statement names that start a new statement in the one-line command form.
const STATEMENTS: &[&str] = &[
    "SORT", "MERGE", "USE", "GIVE", "TAKE", "SUM", "INCLUDE", "OMIT", "INREC", "OUTREC", "OUTFIL",
    "OPTION", "RECORD", "JOINKEYS", "JOIN", "REFORMAT", "END",
];

/// How deep TAKE files may nest (a file taking itself would never end).
const MAX_TAKE_DEPTH: usize = 8;

/// How a USE or GIVE file is organized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Org {
    /// `SQ`: fixed records of `n` bytes.
    Fixed(usize),
    /// `LS`/`LSF`: text lines.
    Lines,
    /// `SQ` with `RECORD V,min,max`: RDW-prefixed records of at most this many bytes, RDW
    /// included (`max` data bytes and the 4-byte RDW).
    Variable(usize),
}

impl Org {
    /// The kind of file, for the USE/GIVE agreement check.
    fn kind(self) -> &'static str {
        match self {
            Org::Fixed(_) => "fixed",
            Org::Lines => "line sequential",
            Org::Variable(_) => "variable (RDW-prefixed)",
        }
    }
}

/// A USE or GIVE statement.
#[derive(Debug, Clone)]
struct FileStatement {
    path: PathBuf,
    org: Org,
}

/// A GCSORT job: its files and the statements for the DFSORT parser.
#[derive(Debug)]
struct Job {
    uses: Vec<FileStatement>,
    give: Option<FileStatement>,
    /// The sort statements, one per line, USE/GIVE/TAKE lines blanked.
    control: String,
    /// Where the statements came from, for messages.
    name: String,
    /// Whether the statements are a JOINKEYS application: the first USE file is F1, the
    /// second F2 (GCSORT's `JOINKEYS FILES=F1` and `FILES=F2`).
    join: bool,
}

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
    let text = command_lines(rest);
    let job = translate(&text, "the gcsort command line", 0)?;
    if job.join {
        return run_join(req, report, job);
    }
    let [first, ..] = job.uses.as_slice() else {
        bail!("{}: no USE statement names an input file", job.name);
    };
    if let Some(other) = job.uses.iter().find(|u| u.org != first.org) {
        bail!(
            "{}: the USE files must have one organization and record format ({} is {:?}, {} is \
             {:?})",
            job.name,
            first.path.display(),
            first.org,
            other.path.display(),
            other.org
        );
    }
    let Some(give) = &job.give else {
        bail!("{}: no GIVE statement names the output file", job.name);
    };
    if give.org.kind() != first.org.kind() {
        bail!(
            "{}: USE {} and GIVE {} differ in organization ({} and {}): oxsort does not convert \
             between them",
            job.name,
            first.path.display(),
            give.path.display(),
            first.org.kind(),
            give.org.kind()
        );
    }
    req.inputs = job.uses.iter().map(|u| u.path.clone()).collect();
    req.output = give.path.clone();
    let mut keys = KeyArgs::default();
    match first.org {
        Org::Lines => keys.lines = true,
        Org::Fixed(n) => keys.record_size = Some(n),
        Org::Variable(max) => keys.rdw = Some(max),
    }
    req.spec = keys.spec_source(Some(ControlText::new(job.name.clone(), job.control.clone())))?;
    oxsort_io::cleanup::install_signal_handlers();
    crate::sort_cmd::run_job(req, &keys, &report)
}

/// Runs a JOINKEYS application: the first USE file is F1 (`SORTJNF1`), the second F2
/// (`SORTJNF2`), each with its own record length; GIVE is the main task's output.
fn run_join(mut req: JobRequest, report: Report, job: Job) -> Result<i32> {
    let [f1, f2] = job.uses.as_slice() else {
        bail!(
            "{}: a JOINKEYS job reads two files: give two USE statements (the first is F1, the \
             second F2), found {}",
            job.name,
            job.uses.len()
        );
    };
    let Some(give) = &job.give else {
        bail!("{}: no GIVE statement names the output file", job.name);
    };
    for (dd, f) in [("SORTJNF1", f1), ("SORTJNF2", f2), ("", give)] {
        let Org::Fixed(n) = f.org else {
            bail!(
                "{}: {} {} is {}: oxsort joins fixed-length records only (ORG SQ RECORD F,n)",
                job.name,
                if dd.is_empty() { "GIVE" } else { "USE" },
                f.path.display(),
                f.org.kind()
            );
        };
        if !dd.is_empty() {
            req.data_sets.dd.push((dd.to_string(), f.path.clone()));
            req.data_sets.lrecl.push((dd.to_string(), n));
        }
    }
    req.output = give.path.clone();
    let keys = KeyArgs::default();
    req.spec = keys.spec_source(Some(ControlText::new(job.name.clone(), job.control.clone())))?;
    oxsort_io::cleanup::install_signal_handlers();
    crate::sort_cmd::run_job(req, &keys, &report)
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

/// The one-line command form cut into statements, one per line.
fn command_lines(args: &[String]) -> String {
    let tokens = words(&args.join(" "));
    let mut out = String::new();
    let mut current = String::new();
    let mut in_file_statement = false;
    let mut depth = 0i32;
    for t in tokens {
        let upper = t.to_ascii_uppercase();
        let starts = depth == 0
            && STATEMENTS.contains(&upper.as_str())
            && !(in_file_statement && (upper == "RECORD" || upper == "ORG"))
            && !current.ends_with([',', '=']);
        if starts {
            if !current.is_empty() {
                out.push_str(&current);
                out.push('\n');
            }
            in_file_statement = matches!(upper.as_str(), "USE" | "GIVE" | "TAKE");
            current = t.clone();
            if !in_file_statement {
                current.push(' ');
            }
            continue;
        }
        if in_file_statement {
            current.push(' ');
        }
        current.push_str(&t);
        depth += paren_depth(&t);
    }
    if !current.is_empty() {
        out.push_str(&current);
        out.push('\n');
    }
    out
}

/// Net parentheses of a token outside quotes.
fn paren_depth(t: &str) -> i32 {
    let mut quote = false;
    let mut d = 0;
    for c in t.chars() {
        match c {
            '\'' => quote = !quote,
            '(' if !quote => d += 1,
            ')' if !quote => d -= 1,
            _ => {}
        }
    }
    d
}

/// Blank-separated words, a quoted constant (`C'a b'`) kept whole.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = false;
    for c in s.chars() {
        if c == '\'' {
            quote = !quote;
        }
        if c.is_whitespace() && !quote {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Reads the statements: USE, GIVE and TAKE are taken out (TAKE files read in place), comment
/// lines blanked, the rest left for the DFSORT parser on the same lines.
fn translate(text: &str, name: &str, depth: usize) -> Result<Job> {
    let mut job = Job {
        uses: Vec::new(),
        give: None,
        control: String::new(),
        name: name.to_string(),
        join: false,
    };
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let w = words(line);
        let keyword = w.first().map(|s| s.to_ascii_uppercase()).unwrap_or_default();
        let at = || format!("{name}: line {}", i + 1);
        if keyword.starts_with('*') {
            job.control.push('\n');
            continue;
        }
        match keyword.as_str() {
            "USE" | "GIVE" => {
                let f = file_statement(&w, &at())?;
                if keyword == "USE" {
                    job.uses.push(f);
                } else if job.give.replace(f).is_some() {
                    bail!("{}: only one GIVE statement (oxsort writes one output)", at());
                }
            }
            "TAKE" => {
                let [_, file] = w.as_slice() else {
                    bail!("{}: expected TAKE and one file name", at());
                };
                if depth >= MAX_TAKE_DEPTH {
                    bail!("{}: TAKE files nest deeper than {MAX_TAKE_DEPTH}", at());
                }
                let path = resolve(file);
                let inner = std::fs::read_to_string(&path).with_context(|| {
                    format!("{}: reading the TAKE file {}", at(), path.display())
                })?;
                let taken = translate(&inner, &path.display().to_string(), depth + 1)?;
                job.uses.extend(taken.uses);
                job.join |= taken.join;
                if let Some(g) = taken.give {
                    if job.give.replace(g).is_some() {
                        bail!("{}: only one GIVE statement (oxsort writes one output)", at());
                    }
                }
                if depth == 0 && job.control.trim().is_empty() {
                    // The job is the TAKE file: its statements keep their own line numbers.
                    job.name = taken.name;
                    job.control = taken.control;
                    continue;
                }
                job.control.push_str(&taken.control);
            }
            _ => {
                job.join |= keyword == "JOINKEYS";
                job.control.push_str(line);
            }
        }
        job.control.push('\n');
    }
    Ok(job)
}

/// A file name as GCSORT reads it: an environment variable's value when one has the name.
fn resolve(name: &str) -> PathBuf {
    match std::env::var_os(name) {
        Some(v) if !name.contains('/') && !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(name),
    }
}

/// `USE|GIVE file ORG SQ|LS|LSF RECORD F,n|V,min,max` (ORG and RECORD in either order).
fn file_statement(w: &[String], at: &str) -> Result<FileStatement> {
    let what = w[0].to_ascii_uppercase();
    let Some(file) = w.get(1) else {
        bail!("{at}: expected a file name after {what}");
    };
    let mut org = None;
    let mut record = None;
    let mut i = 2;
    while i < w.len() {
        let kw = w[i].to_ascii_uppercase();
        let Some(value) = w.get(i + 1) else {
            bail!("{at}: expected a value after {kw}");
        };
        match kw.as_str() {
            "ORG" => org = Some(value.to_ascii_uppercase()),
            "RECORD" => record = Some(value.to_ascii_uppercase()),
            "KEY" => bail!("{at}: {what} {file}: indexed files (KEY) are not supported by oxsort"),
            _ => bail!("{at}: {what} {file}: expected ORG or RECORD, found {}", w[i]),
        }
        i += 2;
    }
    let org = org.ok_or_else(|| anyhow!("{at}: {what} {file}: expected ORG SQ, LS or LSF"))?;
    let record = record.ok_or_else(|| {
        anyhow!("{at}: {what} {file}: expected RECORD F,n (fixed) or V,min,max (variable)")
    })?;
    let parts: Vec<&str> = record.split(',').collect();
    let org = match (org.as_str(), parts.as_slice()) {
        ("LS" | "LSF", _) => Org::Lines,
        ("SQ", ["F", n]) => match n.parse::<usize>() {
            Ok(n) if n > 0 => Org::Fixed(n),
            _ => bail!("{at}: {what} {file}: RECORD F,{n}: expected a record length"),
        },
        ("SQ", ["V", min, max]) => match (min.parse::<usize>(), max.parse::<usize>()) {
            (Ok(lo), Ok(hi)) if lo <= hi && hi + oxsort_format::RDW_BYTES <= MAX_RECORD_SIZE => {
                Org::Variable(hi + oxsort_format::RDW_BYTES)
            }
            _ => bail!(
                "{at}: {what} {file}: RECORD V,{min},{max}: expected the shortest and longest \
                 record's data lengths (min <= max <= {})",
                MAX_RECORD_SIZE - oxsort_format::RDW_BYTES
            ),
        },
        ("SQ", _) => bail!("{at}: {what} {file}: expected RECORD F,n or V,min,max, found {record}"),
        (o, _) => {
            bail!("{at}: {what} {file}: ORG {o} is not supported by oxsort (SQ, LS and LSF are)")
        }
    };
    Ok(FileStatement { path: resolve(file), org })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_form_is_cut_into_statements() {
        let args: Vec<String> = [
            "SORT",
            "FIELDS=(1,5,CH,A)",
            "USE in.dat ORG SQ RECORD F,100",
            "GIVE",
            "out.dat",
            "RECORD",
            "F,100",
            "ORG",
            "SQ",
            "INCLUDE",
            "COND=(1,1,CH,EQ,C'A B')",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let text = command_lines(&args);
        assert_eq!(
            text,
            "SORT FIELDS=(1,5,CH,A)\nUSE in.dat ORG SQ RECORD F,100\n\
             GIVE out.dat RECORD F,100 ORG SQ\nINCLUDE COND=(1,1,CH,EQ,C'A B')\n"
        );
        let job = translate(&text, "x", 0).unwrap();
        assert_eq!(job.uses.len(), 1);
        assert_eq!(job.uses[0].org, Org::Fixed(100));
        assert_eq!(job.give.unwrap().path, PathBuf::from("out.dat"));
        assert_eq!(job.control, "SORT FIELDS=(1,5,CH,A)\n\n\nINCLUDE COND=(1,1,CH,EQ,C'A B')\n\n");
    }

    #[test]
    fn file_statements_name_their_mistakes() {
        let err = |line: &str| translate(line, "t", 0).unwrap_err().to_string();
        assert!(err("USE a ORG SQ RECORD V,20,10").contains("RECORD V,20,10"));
        assert!(err("USE a ORG SQ RECORD V,10").contains("expected RECORD F,n or V,min,max"));
        let job = translate("USE a ORG SQ RECORD V,10,300", "t", 0).unwrap();
        assert_eq!(job.uses[0].org, Org::Variable(304));
        assert!(err("USE a ORG IX RECORD F,10").contains("ORG IX"));
        assert!(err("USE a ORG SQ").contains("expected RECORD"));
        assert!(err("GIVE a ORG SQ RECORD F,x").contains("RECORD F,X"));
    }
}

//! A DFSORT job's data sets: the `--dd` mappings, the DD statements of the control file's JCL
//! step, and the record layouts they give.
//!
//! ```text
//!  DD name (SORTIN, SORTOUT, SORTJNF1, ...)
//!    ├─ --dd NAME=PATH                         given on the command line: it wins
//!    └─ //NAME DD DSN=data.set.name            in the JCL step of --control
//!         ├─ --dd data.set.name=PATH           the data set mapped to a file
//!         └─ data.set.name as a path           when that file exists (an output: when its
//!                                              directory exists and the name has a '/')
//!  record length: --lrecl NAME=N, else DCB=(RECFM=F|FB,LRECL=N) on the DD, when the control
//!  statements have no RECORD and the command line gives no layout; DCB=(RECFM=V|VB,LRECL=N)
//!  on //SORTIN: RDW-prefixed records of at most N bytes (as --rdw=N)
//! ```
//!
//! A DD the job reads or writes that none of these resolves is an error naming the DD and its
//! data set. DD statements the job does not use (`SYSOUT`, `SYSPRINT`, ...) are ignored, as
//! DFSORT ignores them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use oxsort_format::{JoinSide, JoinSpec};
use oxsort_lang::{parse_control, parse_join_input_control, Control};

use crate::dd::DdMap;
use crate::jcl::{self, JclDd};
use crate::sort_cmd::SortArgs;

/// A JOINKEYS job, its inputs resolved.
#[derive(Debug)]
pub struct JoinJob {
    /// The statements' join.
    pub spec: JoinSpec,
    /// F1's files (concatenated) and record length.
    pub f1: (Vec<PathBuf>, usize),
    /// F2's files (concatenated) and record length.
    pub f2: (Vec<PathBuf>, usize),
    /// Each file's own control statements (`JNF1CNTL`, `JNF2CNTL`, or `idFnCNTL` with
    /// `TASKID=id`), with where they were read, for messages.
    pub controls: [Option<(String, Control)>; 2],
}

impl JoinJob {
    /// The files and record length of one side.
    pub fn input(&self, side: JoinSide) -> &(Vec<PathBuf>, usize) {
        match side {
            JoinSide::F1 => &self.f1,
            JoinSide::F2 => &self.f2,
        }
    }

    /// The own control statements of one side, if it has any.
    pub fn control(&self, side: JoinSide) -> Option<&Control> {
        self.own(side).map(|(_, c)| c)
    }

    /// Where the own control statements of one side were read, if it has any.
    pub fn control_source(&self, side: JoinSide) -> Option<&str> {
        self.own(side).map(|(s, _)| s.as_str())
    }

    fn own(&self, side: JoinSide) -> Option<&(String, Control)> {
        self.controls[match side {
            JoinSide::F1 => 0,
            JoinSide::F2 => 1,
        }]
        .as_ref()
    }
}

/// Resolves the job's data sets into `args` (inputs, output, record size) and returns the
/// join to run first, if the statements are a JOINKEYS application, and the DD map left for
/// the job's other DDs (OUTFIL's outputs: [`SortArgs::resolve_job`] takes and finishes it).
pub fn prepare(args: &mut SortArgs) -> Result<(Option<JoinJob>, DdMap)> {
    let mut dd = args.apply_dd()?;
    let mut lrecl = HashMap::new();
    for a in &args.lrecl {
        let (name, n) = a
            .split_once('=')
            .ok_or_else(|| anyhow!("--lrecl {a}: expected DDNAME=N (for example SORTJNF1=80)"))?;
        let n: usize = n
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| anyhow!("--lrecl {a}: expected a record length after '='"))?;
        lrecl.insert(name.trim().to_ascii_uppercase(), n);
    }
    let Some(path) = args.keys.control.clone() else {
        if let Some(&n) = lrecl.get("SORTIN") {
            set_record_size(args, n, "--lrecl SORTIN")?;
        }
        return Ok((None, dd));
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("reading the control file {}", path.display()))?;
    let name = path.display().to_string();
    let control = parse_control(&text).map_err(|e| anyhow!("{name}: {e}"))?;
    // The spec is built from the text read here: the file is read once.
    args.keys.control_text = Some((name.clone(), text.clone()));
    let dds = if jcl::is_jcl(&text) {
        jcl::dd_statements(&text).map_err(|e| anyhow!("{name}: {e}"))?
    } else {
        Vec::new()
    };
    let find = |n: &str| dds.iter().find(|d| d.name == n);
    // The other DDs with a data set (OUTFIL's SORTOFxx, ...) go to the map for the statements
    // that name them; one that cannot be resolved is an error only for a job that needs it.
    for d in &dds {
        let known = matches!(d.name.as_str(), "SORTIN" | "SORTOUT" | "SYSIN" | "DFSPARM")
            || control.join.as_ref().is_some_and(|j| {
                d.name == j.f1.control_dd(JoinSide::F1) || d.name == j.f2.control_dd(JoinSide::F2)
            })
            || control.join.as_ref().is_some_and(|j| d.name == j.f1.dd || d.name == j.f2.dd);
        if known || d.dsns.is_empty() || d.instream || d.sysout || d.dummy {
            continue;
        }
        match resolve_output(d, &mut dd, &name) {
            Ok(Some(p)) => dd.add_jcl(&d.name, p),
            Ok(None) => {}
            Err(e) => dd.add_unresolved(&d.name, e.to_string()),
        }
    }
    if crate::sort_cmd::is_std(&args.output) {
        if let Some(d) = find("SORTOUT") {
            if let Some(out) = resolve_output(d, &mut dd, &name)? {
                args.output = out;
            }
        }
    }
    if let Some(spec) = control.join {
        if !crate::sort_cmd::is_std_only(&args.inputs) {
            bail!(
                "{name}: a JOINKEYS job reads its records from its F1 and F2 files ({} and {}), \
                 not from the inputs given ({})",
                spec.f1.dd,
                spec.f2.dd,
                crate::sort_cmd::shown(&args.inputs)
            );
        }
        if args.keys.lines || args.keys.nul {
            bail!("{name}: oxsort joins fixed-length records only; drop --lines/--nul");
        }
        let mut side = |input: &oxsort_format::JoinInput, which: JoinSide| -> Result<_> {
            let ddname = input.dd.as_str();
            let jcl_dd = find(ddname);
            let mut paths = dd.take(ddname);
            if paths.is_empty() {
                paths = match jcl_dd {
                    Some(d) => resolve_inputs(d, &mut dd, &name)?,
                    None => bail!(
                        "{name}: JOINKEYS FILE={} reads DD {ddname}: give --dd {ddname}=PATH (or a \
                         //{ddname} DD statement in the JCL)",
                        which.name()
                    ),
                };
            }
            let len = match (lrecl.get(ddname), jcl_dd.and_then(|d| fixed_lrecl(d).transpose())) {
                (Some(&n), _) => n,
                (None, Some(n)) => n.map_err(|e| anyhow!("{name}: {e}"))?,
                (None, None) => args.keys.record_size.ok_or_else(|| {
                    anyhow!(
                        "{name}: the record length of {ddname} (F{}) is not known: give \
                         --record-size N (for both files), --lrecl {ddname}=N, or \
                         DCB=(RECFM=FB,LRECL=N) on its DD statement",
                        if which == JoinSide::F1 { 1 } else { 2 }
                    )
                })?,
            };
            Ok((paths, len))
        };
        let f1 = side(&spec.f1, JoinSide::F1)?;
        let f2 = side(&spec.f2, JoinSide::F2)?;
        let mut controls = [None, None];
        for (slot, which) in controls.iter_mut().zip([JoinSide::F1, JoinSide::F2]) {
            *slot = join_input_control(&spec, which, find, &text, &mut dd, &name)?;
        }
        let (c1, c2) = (spec.f1.control_dd(JoinSide::F1), spec.f2.control_dd(JoinSide::F2));
        dd.finish(&format!("{}, {}, {c1}, {c2}, SORTOUT", spec.f1.dd, spec.f2.dd))?;
        return Ok((Some(JoinJob { spec, f1, f2, controls }), DdMap::default()));
    }
    if crate::sort_cmd::is_std_only(&args.inputs) {
        if let Some(d) = find("SORTIN") {
            args.inputs = resolve_inputs(d, &mut dd, &name)?;
        }
    }
    let layout_given = control.record.is_some()
        || args.keys.record_size.is_some()
        || args.keys.rdw.is_some()
        || args.keys.lines
        || args.keys.nul;
    let sortin = find("SORTIN");
    if !layout_given && sortin.is_some_and(variable_recfm) {
        // RDW-prefixed records: the LRECL (RDW included) is the longest record.
        let d = sortin.expect("checked above");
        let max =
            lrecl.get("SORTIN").copied().or(d.lrecl).unwrap_or(oxsort_format::MAX_RECORD_SIZE);
        args.keys.rdw = Some(max);
    } else if !layout_given {
        if let Some(&n) = lrecl.get("SORTIN") {
            set_record_size(args, n, "--lrecl SORTIN")?;
        } else if let Some(n) = find("SORTIN").map(fixed_lrecl).transpose()?.flatten() {
            set_record_size(args, n, "the DCB of //SORTIN")?;
        }
    }
    Ok((None, dd))
}

/// The own control statements of one JOINKEYS file: DD `JNFnCNTL` (or `idFnCNTL`) given as
/// `--dd`, as a data set of the JCL step, or in-stream (`//JNF1CNTL DD *`) in the control file.
fn join_input_control<'a>(
    spec: &JoinSpec,
    which: JoinSide,
    find: impl Fn(&str) -> Option<&'a JclDd>,
    text: &str,
    dd: &mut DdMap,
    control: &str,
) -> Result<Option<(String, Control)>> {
    let input = spec.input(which);
    let ddname = input.control_dd(which);
    let mut paths = dd.take(&ddname);
    let (source, body) = match find(&ddname) {
        Some(d) if paths.is_empty() && d.instream => {
            let body = jcl::instream_text(text, &ddname).unwrap_or_default();
            (format!("{control} (//{ddname} DD *)"), body)
        }
        jcl_dd => {
            if paths.is_empty() {
                match jcl_dd {
                    Some(d) => paths = resolve_inputs(d, dd, control)?,
                    None => return Ok(None),
                }
            }
            let mut body = String::new();
            for p in &paths {
                body.push_str(&std::fs::read_to_string(p).with_context(|| {
                    format!(
                        "reading {ddname} (the control statements of {}) {}",
                        input.dd,
                        p.display()
                    )
                })?);
            }
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            (names.join(" + "), body)
        }
    };
    let c = parse_join_input_control(&body, &ddname).map_err(|e| anyhow!("{source}: {e}"))?;
    if c.filter.is_some() && input.filter.is_some() {
        bail!(
            "{source}: {ddname} has an INCLUDE or OMIT statement, and the JOINKEYS statement of \
             {} (line {} of {control}) has INCLUDE= or OMIT=: give one of them",
            which.name(),
            input.line
        );
    }
    Ok(Some((source, c)))
}

fn set_record_size(args: &mut SortArgs, n: usize, from: &str) -> Result<()> {
    if args.keys.record_size.is_some_and(|r| r != n) {
        bail!("{from} gives {n}-byte records, but --record-size says otherwise");
    }
    args.keys.record_size = Some(n);
    Ok(())
}

/// Whether a DD holds RDW-prefixed variable-length records (`RECFM=V`, `VB`, `VA`, `VBA`;
/// spanned `VS`/`VBS` records are not read, and [`fixed_lrecl`] refuses them).
fn variable_recfm(d: &JclDd) -> bool {
    d.recfm.as_deref().is_some_and(|r| r.starts_with('V') && !r.contains('S'))
}

/// The LRECL of a DD with fixed-length records; an error for another RECFM.
fn fixed_lrecl(d: &JclDd) -> Result<Option<usize>> {
    if let Some(recfm) = &d.recfm {
        if !recfm.starts_with('F') {
            bail!(
                "//{} DD (line {}): RECFM={recfm} is not supported here: oxsort reads fixed-length \
                 records (RECFM=F or FB), and RDW-prefixed ones (RECFM=V or VB) on //SORTIN of a \
                 SORT, MERGE or COPY",
                d.name,
                d.line
            );
        }
    }
    Ok(d.lrecl)
}

/// The files of an input DD: each data set through `--dd DSN=PATH`, or as a path.
fn resolve_inputs(d: &JclDd, dd: &mut DdMap, control: &str) -> Result<Vec<PathBuf>> {
    if d.instream || d.sysout || d.dummy || d.dsns.is_empty() {
        bail!(
            "{control}: //{} DD (line {}) names no data set to read: give it DSN=... or map it \
             with --dd {}=PATH",
            d.name,
            d.line,
            d.name
        );
    }
    let mut out = Vec::new();
    for dsn in &d.dsns {
        let mapped = dd.take(dsn);
        if !mapped.is_empty() {
            out.extend(mapped);
        } else if Path::new(dsn).is_file() {
            out.push(PathBuf::from(dsn));
        } else {
            bail!(
                "{control}: //{} DD DSN={dsn} (line {}): the data set {dsn} is not mapped to a \
                 file: give --dd {dsn}=PATH (or --dd {}=PATH)",
                d.name,
                d.line,
                d.name
            );
        }
    }
    Ok(out)
}

/// The file of an output DD; `None` for `SYSOUT` (standard output).
fn resolve_output(d: &JclDd, dd: &mut DdMap, control: &str) -> Result<Option<PathBuf>> {
    if d.sysout {
        return Ok(None);
    }
    let [dsn] = d.dsns.as_slice() else {
        bail!(
            "{control}: //{} DD (line {}) must name one data set to write (DSN=...) or be \
             SYSOUT=*; or map it with --dd {}=PATH",
            d.name,
            d.line,
            d.name
        );
    };
    if let Some(p) = dd.take_one(dsn)? {
        return Ok(Some(p));
    }
    let path = Path::new(dsn);
    let dir_exists = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.is_dir(),
        _ => false,
    };
    if path.is_file() || (dsn.contains('/') && dir_exists) {
        return Ok(Some(path.to_path_buf()));
    }
    bail!(
        "{control}: //{} DD DSN={dsn} (line {}): the data set {dsn} is not mapped to a file: give \
         --dd {dsn}=PATH (or --dd {}=PATH)",
        d.name,
        d.line,
        d.name
    )
}

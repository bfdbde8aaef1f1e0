//! A DFSORT job's data sets: the door's mappings (the CLI's `--dd`, Python's `dd=`), the DD
//! statements of the control statements' JCL step, and the record layouts they give; then the
//! OUTFIL outputs' files and `OPTION MAINSIZE=`, all from one parse of the statements.
//!
//! ```text
//!  DD name (SORTIN, SORTOUT, SORTJNF1, ...)
//!    ├─ NAME=PATH                              given by the door: it wins
//!    └─ //NAME DD DSN=data.set.name            in the JCL step of the control statements
//!         ├─ data.set.name=PATH                the data set mapped to a file
//!         └─ data.set.name as a path           when that file exists (an output: when its
//!                                              directory exists and the name has a '/')
//!  record length: the door's record length of NAME, else DCB=(RECFM=F|FB,LRECL=N) on the DD,
//!  when the control statements have no RECORD and the door gives no layout;
//!  DCB=(RECFM=V|VB,LRECL=N) on //SORTIN: RDW-prefixed records of at most N bytes
//! ```
//!
//! A DD the job reads or writes that none of these resolves is an error naming the DD and its
//! data set. DD statements the job does not use (`SYSOUT`, `SYSPRINT`, ...) are ignored, as
//! DFSORT ignores them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use oxsort_format::{JoinInput, JoinSide, JoinSpec, Mode, RecordLayout, SortSpec};
use oxsort_lang::jcl::{self, JclDd};
use oxsort_lang::{parse_control, parse_join_input_control, Control, ReconcileError, SpecSources};

use crate::dd::DdMap;
use crate::error::{DataSetError, JobError, LengthSource};
use crate::joinkeys::{self, JoinFiles, JoinJob};
use crate::{is_std, is_std_only, shown, ControlText, Job, JobRequest, MainSize, Resources};
use crate::{SortJob, SpecSource, DISCARD, STD};

type Result<T> = std::result::Result<T, JobError>;

/// Resolves a request: its data sets (inputs, output, record size, OUTFIL's files), the spec
/// from the one parse of its control statements, and `OPTION MAINSIZE=`; a JOINKEYS
/// application becomes a [`Job::Join`]. Every error comes before any file is written.
pub fn resolve(req: JobRequest) -> Result<Job> {
    let JobRequest { mut inputs, mut output, mut spec, data_sets, mut resources } = req;
    if let Some(table) = spec.table.take() {
        return crate::table::resolve(inputs, output, table, &spec, &data_sets, resources);
    }
    if inputs.is_empty() {
        inputs = vec![STD.into()];
    }
    let mut dd = DdMap::new(&data_sets.dd)?;
    let sortin = dd.take("SORTIN");
    if !sortin.is_empty() {
        if !is_std_only(&inputs) {
            return Err(JobError::InputsTwice(shown(&inputs)));
        }
        inputs = sortin;
    }
    if let Some(out) = dd.take_one("SORTOUT")? {
        if !is_std(&output) {
            return Err(JobError::OutputTwice(output.display().to_string()));
        }
        output = out;
    }
    let lrecl: HashMap<String, usize> =
        data_sets.lrecl.iter().map(|(n, l)| (n.trim().to_ascii_uppercase(), *l)).collect();
    let Some(ControlText { name, text, gcsort }) = spec.control.clone() else {
        if let Some(&n) = lrecl.get("SORTIN") {
            set_record_size(&mut spec, n, LengthSource::Given("SORTIN".into()))?;
        }
        let sort = SortJob {
            inputs,
            output,
            spec: SortSpec::default(),
            outfil: Vec::new(),
            xsum: None,
            resources,
            ignored: Vec::new(),
            main_size: None,
            control: None,
        };
        return finish_sort(sort, &spec, None, dd).map(Job::Sort);
    };
    let mut control =
        parse_control(&text).map_err(|source| JobError::Control { name: name.clone(), source })?;
    if gcsort {
        oxsort_lang::gcsort_rules(&mut control);
    }
    let dds = if jcl::is_jcl(&text) {
        jcl::dd_statements(&text).map_err(|source| JobError::Jcl { name: name.clone(), source })?
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
        if known || (d.dsns.is_empty() && !d.dummy) || d.instream || d.sysout {
            continue;
        }
        match resolve_output(d, &mut dd, &name) {
            Ok(Some(p)) => dd.add_jcl(&d.name, p),
            Ok(None) => {}
            Err(JobError::DataSet(why)) => dd.add_unresolved(&d.name, why),
            Err(e) => return Err(e),
        }
    }
    if is_std(&output) {
        if let Some(d) = find("SORTOUT") {
            if let Some(out) = resolve_output(d, &mut dd, &name)? {
                output = out;
            }
        }
    }
    let ignored: Vec<String> = control.ignored.iter().map(|n| format!("{name}: {n}")).collect();
    let main_size = main_size(control.mainsize, &mut resources);
    if let Some(join) = control.join.take() {
        if !is_std_only(&inputs) {
            return Err(JobError::JoinInputs {
                control: name,
                f1: join.f1.dd.clone(),
                f2: join.f2.dd.clone(),
                inputs: shown(&inputs),
            });
        }
        if matches!(spec.delimited, Some(RecordLayout::Delimited(_))) {
            return Err(JobError::JoinDelimited { control: name });
        }
        let mut side = |input: &JoinInput, which: JoinSide| -> Result<(Vec<PathBuf>, usize)> {
            let ddname = input.dd.as_str();
            let jcl_dd = find(ddname);
            let mut paths = dd.take(ddname);
            if paths.is_empty() {
                paths = match jcl_dd {
                    Some(d) => resolve_inputs(d, &mut dd, &name)?,
                    None => {
                        return Err(JobError::JoinDd {
                            control: name.clone(),
                            side: which.name(),
                            dd: ddname.to_string(),
                        })
                    }
                };
            }
            let len = match (lrecl.get(ddname), jcl_dd.and_then(|d| fixed_lrecl(d).transpose())) {
                (Some(&n), _) => n,
                (None, Some(n)) => n?,
                (None, None) => spec.record_size.ok_or_else(|| JobError::JoinLength {
                    control: name.clone(),
                    side: which.name(),
                    dd: ddname.to_string(),
                })?,
            };
            Ok((paths, len))
        };
        let f1 = side(&join.f1, JoinSide::F1)?;
        let f2 = side(&join.f2, JoinSide::F2)?;
        let mut controls = [None, None];
        for (slot, which) in controls.iter_mut().zip([JoinSide::F1, JoinSide::F2]) {
            *slot = join_input_control(&join, which, find, &text, &mut dd, &name)?;
        }
        let (c1, c2) = (join.f1.control_dd(JoinSide::F1), join.f2.control_dd(JoinSide::F2));
        let mut used = vec![join.f1.dd.clone(), join.f2.dd.clone(), c1, c2, "SORTOUT".into()];
        let files = JoinFiles { f1, f2, controls };
        let lens = joinkeys::side_lengths(&join, &files)?;
        let joined_len = join
            .joined_len(lens[0], lens[1])
            .map_err(|source| JobError::Join { control: name.clone(), source })?;
        RecordLayout::fixed(joined_len)
            .map_err(|source| JobError::JoinedLayout { control: name.clone(), source })?;
        // The main task reads the joined records: their layout is the join's, and the record
        // size given is the join inputs' length, not the main task's.
        control.record = Some(RecordLayout::Fixed(joined_len));
        let xsum = xsum_output(control.xsum, &mut dd, &name, &mut used)?;
        let main_source = SpecSource { record_size: None, ..spec };
        let main = build_spec(&main_source, Some(control), &name)?;
        if main.key.is_none() && main.mode != Mode::Copy {
            return Err(JobError::JoinMainTask { control: name });
        }
        let outfil = outfil_outputs(&main, &mut dd, &mut output, &mut resources, &mut used)?;
        dd.finish(&used.join(", "))?;
        return Ok(Job::Join(JoinJob {
            spec: join,
            files,
            lens,
            joined_len,
            main,
            output,
            outfil,
            xsum,
            resources,
            ignored,
            main_size,
            control: name,
        }));
    }
    if is_std_only(&inputs) {
        if let Some(d) = find("SORTIN") {
            inputs = resolve_inputs(d, &mut dd, &name)?;
        }
    }
    let layout_given = control.record.is_some()
        || spec.record_size.is_some()
        || spec.rdw.is_some()
        || spec.delimited.is_some();
    let sortin = find("SORTIN");
    if !layout_given && sortin.is_some_and(variable_recfm) {
        // RDW-prefixed records: the LRECL (RDW included) is the longest record.
        let d = sortin.expect("checked above");
        let max =
            lrecl.get("SORTIN").copied().or(d.lrecl).unwrap_or(oxsort_format::MAX_RECORD_SIZE);
        spec.rdw = Some(
            RecordLayout::variable(max)
                .map_err(|source| JobError::VariableLrecl { lrecl: max, source })?,
        );
    } else if !layout_given {
        if let Some(&n) = lrecl.get("SORTIN") {
            set_record_size(&mut spec, n, LengthSource::Given("SORTIN".into()))?;
        } else if let Some(n) = find("SORTIN").map(fixed_lrecl).transpose()?.flatten() {
            set_record_size(&mut spec, n, LengthSource::Dcb("SORTIN".into()))?;
        }
    }
    let sort = SortJob {
        inputs,
        output,
        spec: SortSpec::default(),
        outfil: Vec::new(),
        xsum: None,
        resources,
        ignored,
        main_size,
        control: Some(name),
    };
    finish_sort(sort, &spec, Some(control), dd).map(Job::Sort)
}

/// `OPTION MAINSIZE=` as the memory budget when none is given.
fn main_size(bytes: Option<u64>, resources: &mut Resources) -> Option<MainSize> {
    let bytes = bytes?;
    let applied = resources.memory.is_none();
    if applied {
        resources.memory = Some(bytes);
    }
    Some(MainSize { bytes, applied })
}

/// The spec `source` describes alone (its control statements parsed here), for a door that
/// checks a spec without a job.
///
/// JOINKEYS statements are refused ([`JobError::JoinIsAJob`]): a join is a job.
pub fn spec_of(source: &SpecSource) -> Result<SortSpec> {
    let (control, name) = match &source.control {
        Some(ControlText { name, text, gcsort }) => {
            let mut c = parse_control(text)
                .map_err(|e| JobError::Control { name: name.clone(), source: e })?;
            if *gcsort {
                oxsort_lang::gcsort_rules(&mut c);
            }
            if c.join.is_some() {
                return Err(JobError::JoinIsAJob { control: name.clone() });
            }
            (Some(c), name.clone())
        }
        None => (None, String::new()),
    };
    build_spec(source, control, &name)
}

/// The spec the sources describe, with the control statements of the one parse.
pub(crate) fn build_spec(
    source: &SpecSource,
    control: Option<Control>,
    name: &str,
) -> Result<SortSpec> {
    let sources = SpecSources {
        delimited: source.delimited,
        record_size: source.record_size,
        variable: source.rdw,
        control,
        fields: source.fields.clone(),
        gnu_flags: source.gnu_flags,
        unique: source.unique,
        merge: source.merge,
    };
    sources
        .reconcile(|unique| match &source.gnu {
            Some(gnu) => gnu(unique),
            None => {
                let g =
                    oxsort_lang::GnuOptions { decimal_point: b'.', unique, ..Default::default() };
                Ok((g.key_spec(), g.unique))
            }
        })
        .map_err(|e| match e {
            ReconcileError::Gnu(e) => JobError::Door(e),
            ReconcileError::Conflict(conflict) => JobError::Conflict {
                control: (!name.is_empty()).then(|| name.to_string()),
                conflict,
            },
        })
}

/// The files of `spec`'s OUTFIL outputs (`SORTOUT` is `output`; any other is a mapped DD),
/// their names added to `used`. When only OUTFIL outputs are written, `output` becomes
/// [`DISCARD`] and the temp directory, if none is given, the first OUTFIL output's.
fn outfil_outputs(
    spec: &SortSpec,
    dd: &mut DdMap,
    output: &mut PathBuf,
    resources: &mut Resources,
    used: &mut Vec<String>,
) -> Result<Vec<(String, PathBuf)>> {
    let mut paths: Vec<(String, PathBuf)> = Vec::new();
    let mut sortout_by_outfil = false;
    for st in &spec.outfil {
        for name in &st.names {
            let path = if name == "SORTOUT" {
                if is_std(output) {
                    return Err(JobError::OutfilSortout { line: st.line });
                }
                sortout_by_outfil = true;
                output.clone()
            } else {
                match dd.take_one(name)? {
                    Some(p) => p,
                    None => match dd.unresolved(name) {
                        Some(why) => {
                            return Err(JobError::OutfilDataSet { line: st.line, why: why.clone() })
                        }
                        None => {
                            return Err(JobError::OutfilDd { line: st.line, name: name.clone() })
                        }
                    },
                }
            };
            if !used.contains(name) {
                used.push(name.clone());
            }
            paths.push((name.clone(), path));
        }
    }
    if !spec.outfil.is_empty() && (sortout_by_outfil || is_std(output)) {
        // The sorted records themselves go nowhere: only the OUTFIL outputs are written.
        *output = DISCARD.into();
        if resources.temp_dirs.is_empty() {
            if let Some((_, p)) = paths.first() {
                resources.temp_dirs.push(match p.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                });
            }
        }
    }
    Ok(paths)
}

/// The spec of a sort and the files of its OUTFIL outputs (`SORTOUT` is the output; any
/// other is a mapped DD); a mapped name no part of the job uses is an error. With OUTFIL, the
/// sorted records go to the main output only when a `SORTOUT` is given that no OUTFIL writes
/// (as DFSORT writes such a SORTOUT without OUTFIL processing).
fn finish_sort(
    mut job: SortJob,
    source: &SpecSource,
    control: Option<Control>,
    mut dd: DdMap,
) -> Result<SortJob> {
    let name = job.control.clone().unwrap_or_default();
    let mut used: Vec<String> = vec!["SORTIN".into(), "SORTOUT".into()];
    job.xsum = xsum_output(control.as_ref().and_then(|c| c.xsum), &mut dd, &name, &mut used)?;
    let spec = build_spec(source, control, &name)?;
    let paths = outfil_outputs(&spec, &mut dd, &mut job.output, &mut job.resources, &mut used)?;
    dd.finish(&used.join(", "))?;
    job.outfil = paths;
    job.spec = spec;
    Ok(job)
}

/// The file of DD `SORTXSUM` for `SUM ...,XSUM` (`sum_line`: the SUM statement's line, when
/// it says XSUM), its name added to `used`; a SORTXSUM without XSUM is left for
/// [`DdMap::finish`] to name.
fn xsum_output(
    sum_line: Option<usize>,
    dd: &mut DdMap,
    control: &str,
    used: &mut Vec<String>,
) -> Result<Option<PathBuf>> {
    let Some(line) = sum_line else { return Ok(None) };
    used.push("SORTXSUM".into());
    match dd.take_one("SORTXSUM")? {
        Some(p) => Ok(Some(p)),
        None => Err(match dd.unresolved("SORTXSUM") {
            Some(why) => JobError::XsumDataSet { line, why: why.clone() },
            None => JobError::XsumDd { control: control.to_string(), line },
        }),
    }
}

/// The own control statements of one JOINKEYS file: DD `JNFnCNTL` (or `idFnCNTL`) mapped, as a data set of the JCL step, or in-stream (`//JNF1CNTL DD *`) in the control file.
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
                body.push_str(&std::fs::read_to_string(p).map_err(|e| {
                    JobError::io(
                        format!(
                            "reading {ddname} (the control statements of {}) {}",
                            input.dd,
                            p.display()
                        ),
                        e,
                    )
                })?);
            }
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            (names.join(" + "), body)
        }
    };
    let c = parse_join_input_control(&body, &ddname)
        .map_err(|e| JobError::JoinControl { source_name: source.clone(), source: e })?;
    if c.filter.is_some() && input.filter.is_some() {
        return Err(JobError::JoinTwoFilters {
            source_name: source,
            dd: ddname,
            side: which.name(),
            line: input.line,
            control: control.to_string(),
        });
    }
    Ok(Some((source, c)))
}

fn set_record_size(spec: &mut SpecSource, n: usize, from: LengthSource) -> Result<()> {
    if spec.record_size.is_some_and(|r| r != n) {
        return Err(JobError::RecordSizeDiffers { from, length: n });
    }
    spec.record_size = Some(n);
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
            return Err(JobError::Recfm { dd: d.name.clone(), line: d.line, recfm: recfm.clone() });
        }
    }
    Ok(d.lrecl)
}

/// What a `DUMMY` DD (or `DSN=NULLFILE`) is: read, an empty input; written, a discarded output.
const NULL_FILE: &str = "/dev/null";

/// The files of an input DD: each data set through its mapping, or as a path.
fn resolve_inputs(d: &JclDd, dd: &mut DdMap, control: &str) -> Result<Vec<PathBuf>> {
    if d.dummy {
        return Ok(vec![PathBuf::from(NULL_FILE)]);
    }
    if d.instream || d.sysout || d.dsns.is_empty() {
        return Err(JobError::DataSet(DataSetError::NoInput {
            control: control.to_string(),
            dd: d.name.clone(),
            line: d.line,
        }));
    }
    let mut out = Vec::new();
    for dsn in &d.dsns {
        let mapped = dd.take(dsn);
        if !mapped.is_empty() {
            out.extend(mapped);
        } else if Path::new(dsn).is_file() {
            out.push(PathBuf::from(dsn));
        } else {
            return Err(not_mapped(d, dsn, control));
        }
    }
    Ok(out)
}

/// The file of an output DD; `None` for `SYSOUT` (standard output).
fn resolve_output(d: &JclDd, dd: &mut DdMap, control: &str) -> Result<Option<PathBuf>> {
    if d.sysout {
        return Ok(None);
    }
    if d.dummy {
        return Ok(Some(PathBuf::from(NULL_FILE)));
    }
    let [dsn] = d.dsns.as_slice() else {
        return Err(JobError::DataSet(DataSetError::NoOutput {
            control: control.to_string(),
            dd: d.name.clone(),
            line: d.line,
        }));
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
    Err(not_mapped(d, dsn, control))
}

fn not_mapped(d: &JclDd, dsn: &str, control: &str) -> JobError {
    JobError::DataSet(DataSetError::NotMapped {
        control: control.to_string(),
        dd: d.name.clone(),
        dsn: dsn.to_string(),
        line: d.line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Concepts;

    fn request(control: &str, dd: &[(&str, &str)]) -> JobRequest {
        let mut req = JobRequest::new(Vec::new(), STD.into());
        req.spec.control = Some(ControlText::new("job.ctl", control));
        req.data_sets.dd = dd.iter().map(|(n, p)| (n.to_string(), PathBuf::from(p))).collect();
        req
    }

    fn sort_job(req: JobRequest) -> SortJob {
        match resolve(req).unwrap() {
            Job::Sort(j) => j,
            Job::Join(_) | Job::Table(_) => panic!("a sort was expected"),
        }
    }

    #[test]
    fn mainsize_is_the_budget_unless_one_is_given() {
        let ctl = " SORT FIELDS=(1,4,CH,A)\n OPTION MAINSIZE=8M\n";
        let job = sort_job(request(ctl, &[("SORTIN", "in"), ("SORTOUT", "out")]));
        assert_eq!(job.main_size, Some(MainSize { bytes: 8 << 20, applied: true }));
        assert_eq!(job.resources.memory, Some(8 << 20));
        let mut req = request(ctl, &[("SORTIN", "in"), ("SORTOUT", "out")]);
        req.resources.memory = Some(1 << 30);
        let job = sort_job(req);
        assert_eq!(job.main_size, Some(MainSize { bytes: 8 << 20, applied: false }));
        assert_eq!(job.resources.memory, Some(1 << 30));
    }

    #[test]
    fn the_jcl_step_names_the_files_and_the_record_length() {
        let jcl = "//S1 EXEC PGM=SORT\n//SORTIN DD DSN=A.B,DCB=(RECFM=FB,LRECL=40)\n\
                   //SORTOUT DD DSN=C.D\n//OUT1 DD DSN=E.F\n//SYSIN DD *\n \
                   SORT FIELDS=(1,4,CH,A)\n OUTFIL FNAMES=(SORTOUT,OUT1)\n/*\n";
        let job = sort_job(request(jcl, &[("A.B", "a.dat"), ("C.D", "c.dat"), ("E.F", "e.dat")]));
        assert_eq!(job.inputs, vec![PathBuf::from("a.dat")]);
        assert_eq!(job.spec.layout, RecordLayout::Fixed(40));
        let names: Vec<_> = job.outfil.iter().map(|(n, p)| (n.as_str(), p.clone())).collect();
        assert_eq!(names, [("SORTOUT", "c.dat".into()), ("OUT1", "e.dat".into())]);
        // SORTOUT is written by OUTFIL: the sorted records themselves go nowhere.
        assert_eq!(job.output, PathBuf::from(DISCARD));
    }

    #[test]
    fn errors_name_the_concept_and_each_door_words_the_remedy() {
        let ctl = " SORT FIELDS=(1,4,CH,A)\n OUTFIL FNAMES=LOW\n";
        let e = resolve(request(ctl, &[("SORTIN", "in")])).unwrap_err();
        assert!(matches!(e, JobError::OutfilDd { line: 2, ref name } if name == "LOW"), "{e:?}");
        assert!(!e.to_string().contains("--"), "{e}");
        let words = e.describe(&Concepts).unwrap();
        assert_eq!(words, "OUTFIL (line 2) writes the DD LOW: give a file for LOW");
        assert_eq!(words, e.to_string());
        let join = " JOINKEYS FILE=F1,FIELDS=(1,4,A)\n JOINKEYS FILE=F2,FIELDS=(1,4,A)\n \
                    REFORMAT FIELDS=(F1:1,4,F2:1,4)\n SORT FIELDS=COPY\n";
        let mut req = request(join, &[("SORTJNF1", "f1")]);
        req.spec.record_size = Some(10);
        let e = resolve(req).unwrap_err();
        assert!(
            matches!(e, JobError::JoinDd { side: "F2", ref dd, .. } if dd == "SORTJNF2"),
            "{e:?}"
        );
        let e = resolve(request(join, &[("SORTJNF1", "f1"), ("SORTJNF2", "f2")])).unwrap_err();
        assert!(matches!(e, JobError::JoinLength { side: "F1", .. }), "{e:?}");
    }
}

//! A GCSORT job's files in a job request: its USE files as the inputs (or JOINKEYS' F1 and
//! F2), its GIVE file as the output, its XSUM file as DD `SORTXSUM`, and its line sequential files of `RECORD F,n` staged as
//! fixed-length records ([`crate::line_sequential`]) so the job runs on records of `n` bytes.

use std::path::PathBuf;

use oxsort_format::Stage;
use oxsort_lang::{GcsortError, GcsortFile, GcsortJob, GcsortOrg};

use crate::line_sequential::Staging;
use crate::JobRequest;

/// What goes wrong setting up or finishing a GCSORT job's files.
#[derive(Debug, thiserror::Error)]
pub enum GcsortFilesError {
    /// The USE and GIVE statements do not make a job.
    #[error(transparent)]
    Statements(#[from] GcsortError),
    /// A line sequential USE file that could not be read into records.
    #[error("USE {name}: reading {}", path.display())]
    Read {
        /// The name as written.
        name: String,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The staging directory could not be made.
    #[error("making the staging directory for line sequential records in {}", dir.display())]
    Staging {
        /// Where it was to be made.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The output's records could not be written as the GIVE (or OUTFIL) file's lines or
    /// records.
    #[error("writing the job's {len}-byte records to {}", give.display())]
    Deliver {
        /// The GIVE file.
        give: PathBuf,
        /// The length of the job's records.
        len: usize,
        /// Why.
        source: std::io::Error,
    },
}

type Result<T> = std::result::Result<T, GcsortFilesError>;

/// A GCSORT job's files, set in a request; [`GcsortRun::finish`] after the job ran.
#[derive(Debug)]
pub struct GcsortRun {
    /// The records' organization for a sort (`None` for a JOINKEYS job, whose sides carry
    /// their lengths in the request).
    pub org: Option<GcsortOrg>,
    /// Warnings about the inputs (line sequential lines cut to the record length).
    pub warnings: Vec<String>,
    staging: Staging,
    /// The staged output, the GIVE file, the length of the records the job writes, the GIVE
    /// record length and whether lines lose their trailing blanks: when the GIVE file is line
    /// sequential of `RECORD F,n`.
    lines_out: Option<(PathBuf, PathBuf, usize, usize, bool)>,
    /// OUTFIL outputs of a job whose GIVE file is line sequential of `RECORD F,n`, written
    /// as lines too: (staged records, the file, their length, whether lines lose their
    /// trailing blanks).
    outfil_lines: Vec<(PathBuf, PathBuf, usize, bool)>,
    /// The staged output, the GIVE file, the length of the records the job writes and the
    /// GIVE record length: when the GIVE file holds fixed records of another length than
    /// those INREC, OUTREC or REFORMAT build (GCSORT writes each at the GIVE length).
    fixed_out: Option<(PathBuf, PathBuf, usize, usize)>,
    /// The staged XSUM records, the XSUM file, the length of the records SUM sees and the
    /// XSUM file's organization: when it is line sequential of `RECORD F,n`, or holds fixed
    /// records of another length (each written at the XSUM length, as the GIVE file's are).
    xsum_out: Option<(PathBuf, PathBuf, usize, GcsortOrg)>,
    /// The XSUM file, removed when the GIVE file cannot be delivered (they appear together).
    xsum_file: Option<PathBuf>,
}

impl GcsortRun {
    /// Sets `job`'s files in `req`: a sort's USE files as the inputs, or JOINKEYS' first and
    /// second USE files as `SORTJNF1` and `SORTJNF2` with their record lengths; the GIVE file
    /// (or its staged records) as the output.
    pub fn new(req: &mut JobRequest, job: &GcsortJob) -> Result<GcsortRun> {
        // The USE files' mistakes first, then the GIVE file's.
        if job.join {
            job.join_files()?;
        } else {
            job.sort_files()?;
        }
        let give =
            job.give.as_ref().ok_or_else(|| GcsortError::NoGive { name: job.name.clone() })?;
        let base = match (req.resources.temp_dirs.first(), give.path.parent()) {
            (Some(t), _) => t.clone(),
            (None, Some(p)) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut run = GcsortRun {
            org: None,
            warnings: Vec::new(),
            staging: Staging::new(base),
            lines_out: None,
            outfil_lines: Vec::new(),
            fixed_out: None,
            xsum_out: None,
            xsum_file: None,
        };
        // The length of the records the job writes: the USE records' through REFORMAT,
        // INREC and OUTREC (`None` when they are not of fixed length).
        let control = oxsort_lang::parse_control(&job.control).ok().map(|mut c| {
            oxsort_lang::gcsort_rules(&mut c);
            c
        });
        let records_in = if job.join {
            let files = job.join_files()?;
            for (dd, u, n) in
                [("SORTJNF1", &job.uses[0], files.f1.1), ("SORTJNF2", &job.uses[1], files.f2.1)]
            {
                let path = run.read_as(u)?;
                req.data_sets.dd.push((dd.to_string(), path));
                req.data_sets.lrecl.push((dd.to_string(), n));
            }
            let joined = control.as_ref().and_then(|c| c.join.as_ref());
            joined.and_then(|j| j.joined_len(files.f1.1, files.f2.1).ok())
        } else {
            let files = job.sort_files()?;
            req.inputs = job.uses.iter().map(|u| run.read_as(u)).collect::<Result<_>>()?;
            run.org = Some(files.org);
            files.org.fixed_len()
        };
        req.output = match give.org {
            GcsortOrg::LinesFixed { len, trim } if records_in.is_some() => {
                let written = records_in.and_then(|n| written_len(control.as_ref()?, n));
                let staged = run.staged()?;
                let written = written.unwrap_or(len);
                run.lines_out = Some((staged.clone(), give.path.clone(), written, len, trim));
                if let Some(c) = &control {
                    run.outfil_as_lines(req, c, written, trim)?;
                }
                staged
            }
            GcsortOrg::Fixed(m) => {
                let written = records_in.and_then(|n| written_len(control.as_ref()?, n));
                match written {
                    Some(n) if n != m => {
                        let staged = run.staged()?;
                        run.fixed_out = Some((staged.clone(), give.path.clone(), n, m));
                        staged
                    }
                    _ => give.path.clone(),
                }
            }
            _ => give.path.clone(),
        };
        if let Some(x) = &job.xsum {
            // SUM sees the records after INREC: they are what XSUM writes.
            let n = records_in.and_then(|n| sum_len(control.as_ref()?, n));
            let file = match (x.org, n) {
                (GcsortOrg::LinesFixed { .. }, Some(n)) | (GcsortOrg::Fixed(_), Some(n))
                    if x.org != GcsortOrg::Fixed(n) =>
                {
                    let staged = run.staged()?;
                    run.xsum_out = Some((staged.clone(), x.path.clone(), n, x.org));
                    staged
                }
                _ => x.path.clone(),
            };
            req.data_sets.dd.push(("SORTXSUM".to_string(), file));
            run.xsum_file = Some(x.path.clone());
        }
        Ok(run)
    }

    /// The OUTFIL outputs of a job whose records are `len` bytes, given DD names in `req`,
    /// staged as records to be written as lines by [`GcsortRun::finish`] (a report's, with
    /// its headers and trailers, is written as it is).
    fn outfil_as_lines(
        &mut self,
        req: &mut JobRequest,
        control: &oxsort_lang::Control,
        len: usize,
        trim: bool,
    ) -> Result<()> {
        for o in &control.outfil {
            if o.header1.is_some() || o.trailer1.is_some() {
                continue;
            }
            let n = match &o.reformat {
                Some(r) => match r.compile(Stage::Outfil, len) {
                    Ok(p) => p.out_len(),
                    Err(_) => continue,
                },
                None => len,
            };
            for name in &o.names {
                let Some(entry) = req.data_sets.dd.iter_mut().find(|(dd, _)| dd == name) else {
                    continue;
                };
                let staged = self.staged()?;
                let file = std::mem::replace(&mut entry.1, staged.clone());
                self.outfil_lines.push((staged, file, n, trim));
            }
        }
        Ok(())
    }

    /// The GIVE file (and OUTFIL files) written from the staged records, when it is line
    /// sequential or of another record length than the job's: whole or not at all.
    pub fn finish(&self) -> Result<()> {
        if let Some((staged, file, n, org)) = &self.xsum_out {
            let done = match *org {
                GcsortOrg::LinesFixed { len, trim } => {
                    self.staging.deliver(staged, file, *n, len, trim)
                }
                GcsortOrg::Fixed(m) => self.staging.deliver_fixed(staged, file, *n, m),
                _ => Ok(()),
            };
            done.map_err(|source| GcsortFilesError::Deliver {
                give: file.clone(),
                len: *n,
                source,
            })?;
        }
        let delivered = self.deliver_give();
        if let (Err(_), Some(x)) = (&delivered, &self.xsum_file) {
            // The XSUM file goes with the GIVE file (a device or a FIFO is left alone).
            if x.is_file() {
                let _ = std::fs::remove_file(x);
            }
        }
        delivered
    }

    /// The GIVE file (and OUTFIL files) written from the staged records, when they are staged.
    fn deliver_give(&self) -> Result<()> {
        if let Some((staged, give, n, m)) = &self.fixed_out {
            return self.staging.deliver_fixed(staged, give, *n, *m).map_err(|source| {
                GcsortFilesError::Deliver { give: give.clone(), len: *n, source }
            });
        }
        let Some((staged, give, len, width, trim)) = &self.lines_out else { return Ok(()) };
        let outfil = self.outfil_lines.iter().map(|(s, f, n, t)| (s, f, *n, *n, *t));
        for (staged, to, len, width, trim) in
            std::iter::once((staged, give, *len, *width, *trim)).chain(outfil)
        {
            self.staging
                .deliver(staged, to, len, width, trim)
                .map_err(|source| GcsortFilesError::Deliver { give: to.clone(), len, source })?;
        }
        Ok(())
    }

    /// The file the job reads for a USE file: a line sequential file of `RECORD F,n` as
    /// `n`-byte records (staged), any other as it is.
    fn read_as(&mut self, u: &GcsortFile) -> Result<PathBuf> {
        let GcsortOrg::LinesFixed { len, .. } = u.org else {
            return Ok(u.path.clone());
        };
        let read_error =
            |source| GcsortFilesError::Read { name: u.name.clone(), path: u.path.clone(), source };
        let staged = self.staged()?;
        let cut = crate::line_sequential::lines_to_records(
            std::fs::File::open(&u.path).map_err(read_error)?,
            std::fs::File::create(&staged).map_err(read_error)?,
            len,
        )
        .map_err(read_error)?;
        if cut > 0 {
            self.warnings.push(format!(
                "USE {}: {cut} lines longer than RECORD F,{len} were cut to {len} bytes",
                u.name
            ));
        }
        Ok(staged)
    }

    /// A new staged file's path.
    fn staged(&mut self) -> Result<PathBuf> {
        self.staging.path().map_err(|source| GcsortFilesError::Staging {
            dir: self.staging.base().to_path_buf(),
            source,
        })
    }
}

/// The length of the records SUM sees from `in_len`-byte ones: through the job's INREC
/// (`None` when it does not compile).
fn sum_len(control: &oxsort_lang::Control, in_len: usize) -> Option<usize> {
    match &control.inrec {
        Some(r) => Some(r.compile(Stage::Inrec, in_len).ok()?.out_len()),
        None => Some(in_len),
    }
}

/// The length of the records a job writes from `in_len`-byte ones: through its INREC and
/// OUTREC (`None` when one does not compile: the job says why when it runs).
fn written_len(control: &oxsort_lang::Control, in_len: usize) -> Option<usize> {
    let mut len = in_len;
    for (reformat, stage) in [(&control.inrec, Stage::Inrec), (&control.outrec, Stage::Outrec)] {
        if let Some(r) = reformat {
            len = r.compile(stage, len).ok()?.out_len();
        }
    }
    Some(len)
}

//! The data sets of a DFSORT job, named as its JCL names them, each mapped to a file (the
//! CLI's `--dd NAME=PATH`, Python's `dd={"NAME": path}`).
//!
//! A mainframe job reads `//SORTIN` and writes `//SORTOUT` (and, with other statements, DDs
//! such as `//SORTOF01` or `//SORTJNF1`); on this machine each name is mapped to a file:
//!
//! ```text
//!  SORTIN=a.dat SORTIN=b.dat SORTOUT=out.dat
//!    │            │              │
//!    └── SORTIN: [a.dat, b.dat] (concatenated in order, as JCL concatenates DDs)
//!                                └── SORTOUT: [out.dat]
//! ```
//!
//! Names are case-insensitive (kept upper case). A name may be repeated only for an input that
//! is a concatenation; each consumer [`DdMap::take`]s the names it uses, and a name no part of
//! the job took is an error ([`DdMap::finish`]): a misspelt DD must not be silently ignored.

use std::path::PathBuf;

use crate::error::{DataSetError, JobError};

/// Longest name accepted: a data set name (44 characters) may serve as the name as well as a
/// DD name (8).
const MAX_NAME: usize = 44;

/// The mappings of one job, in the order given.
#[derive(Debug, Default, Clone)]
pub struct DdMap {
    entries: Vec<(String, PathBuf)>,
    /// DDs of the control file's JCL step (resolved to files): [`DdMap::take`] falls back to
    /// them, and [`DdMap::finish`] does not require them to be used (a JCL step may carry DDs
    /// a job does not use).
    jcl: Vec<(String, PathBuf)>,
    /// JCL DDs whose data set could not be resolved, with the reason, for the message of a
    /// job that needs one.
    unresolved: Vec<(String, DataSetError)>,
}

impl DdMap {
    /// The mappings `(name, path)`, in order; a name that cannot be a DD or data set name is
    /// an error.
    pub fn new(mappings: &[(String, PathBuf)]) -> Result<DdMap, JobError> {
        let mut entries = Vec::with_capacity(mappings.len());
        for (name, path) in mappings {
            let name = name.trim();
            check_name(name)
                .map_err(|problem| JobError::BadName { name: name.to_string(), problem })?;
            entries.push((name.to_ascii_uppercase(), path.clone()));
        }
        Ok(DdMap { entries, jcl: Vec::new(), unresolved: Vec::new() })
    }

    /// Removes and returns the paths given for `name` (case-insensitive), in order: several for
    /// a concatenation, none when the name was not given.
    pub fn take(&mut self, name: &str) -> Vec<PathBuf> {
        let name = name.to_ascii_uppercase();
        let mut taken = Vec::new();
        self.entries.retain(|(n, p)| {
            let hit = *n == name;
            if hit {
                taken.push(p.clone());
            }
            !hit
        });
        if taken.is_empty() {
            self.jcl.retain(|(n, p)| {
                let hit = *n == name;
                if hit {
                    taken.push(p.clone());
                }
                !hit
            });
        }
        taken
    }

    /// Adds the file a JCL DD statement names: used when no `--dd` gives the name.
    pub fn add_jcl(&mut self, name: &str, path: PathBuf) {
        self.jcl.push((name.to_ascii_uppercase(), path));
    }

    /// Records why a JCL DD's data set could not be resolved.
    pub fn add_unresolved(&mut self, name: &str, why: DataSetError) {
        self.unresolved.push((name.to_ascii_uppercase(), why));
    }

    /// Why the JCL DD `name` has no file, when its data set could not be resolved: the message
    /// for a job that needs it (OUTFIL's outputs, `SORTOFxx` or `FNAMES=`, when they find no
    /// file under their name).
    pub fn unresolved(&self, name: &str) -> Option<&DataSetError> {
        let name = name.to_ascii_uppercase();
        self.unresolved.iter().find(|(n, _)| *n == name).map(|(_, why)| why)
    }

    /// Like [`DdMap::take`] for a name that must map to one file (an output): more than one is an
    /// error.
    pub fn take_one(&mut self, name: &str) -> Result<Option<PathBuf>, JobError> {
        let mut paths = self.take(name);
        match paths.len() {
            0 => Ok(None),
            1 => Ok(paths.pop()),
            count => Err(JobError::OneOutput { name: name.to_ascii_uppercase(), count }),
        }
    }

    /// Errors when a name was given that no part of the job used; `used` lists what the job
    /// reads and writes, for the message.
    pub fn finish(&self, used: &str) -> Result<(), JobError> {
        if let Some((name, path)) = self.entries.first() {
            return Err(JobError::UnusedDd {
                name: name.clone(),
                path: path.display().to_string(),
                used: used.to_string(),
            });
        }
        Ok(())
    }
}

/// Whether `name` can be a DD or data set name; the problem if not.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!("the name must have 1 to {MAX_NAME} characters"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || "@#$.-".contains(*c))) {
        return Err(format!("'{c}' cannot be part of a DD or data set name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(a: &[(&str, &str)]) -> Result<DdMap, JobError> {
        let v: Vec<(String, PathBuf)> =
            a.iter().map(|(n, p)| (n.to_string(), PathBuf::from(p))).collect();
        DdMap::new(&v)
    }

    #[test]
    fn concatenation_keeps_order_and_names_are_case_insensitive() {
        let mut m =
            map(&[("sortin", "a"), ("SORTOUT", "o"), ("SortIn", "b"), ("MY.DATA.SET", "c")])
                .unwrap();
        assert_eq!(m.take("SORTIN"), vec![PathBuf::from("a"), PathBuf::from("b")]);
        assert_eq!(m.take_one("sortout").unwrap(), Some(PathBuf::from("o")));
        assert_eq!(m.take_one("SORTOUT").unwrap(), None);
        let err = m.finish("SORTIN, SORTOUT").unwrap_err().to_string();
        assert!(err.contains("MY.DATA.SET=c") && err.contains("no DD MY.DATA.SET"), "{err}");
        assert_eq!(m.take("my.data.set").len(), 1);
        assert!(m.finish("").is_ok());
    }

    #[test]
    fn jcl_dds_are_a_fallback_that_need_not_be_used() {
        let mut m = map(&[("SORTOF01", "given")]).unwrap();
        m.add_jcl("sortof01", PathBuf::from("from-jcl-1"));
        m.add_jcl("SORTOF02", PathBuf::from("from-jcl-2"));
        let why = DataSetError::NoOutput { control: "c".into(), dd: "SORTOF03".into(), line: 3 };
        m.add_unresolved("SORTOF03", why.clone());
        assert_eq!(m.take("SORTOF01"), vec![PathBuf::from("given")]);
        assert_eq!(m.take("SORTOF02"), vec![PathBuf::from("from-jcl-2")]);
        assert_eq!(m.unresolved("sortof03"), Some(&why));
        assert!(m.finish("").is_ok(), "an unused JCL DD is no error");
    }

    #[test]
    fn bad_names_name_the_problem() {
        let err = |n: &str| map(&[(n, "x")]).unwrap_err().to_string();
        assert!(err("").contains("1 to 44"));
        assert!(err("SORT IN").contains("' '"));
        let mut m = map(&[("SORTOUT", "a"), ("SORTOUT", "b")]).unwrap();
        assert!(m.take_one("SORTOUT").unwrap_err().to_string().contains("given 2 times"));
    }
}

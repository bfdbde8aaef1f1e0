//! A directory given as an input: the table files in it, in name order (a dataset written as
//! `part-00000.parquet`, `part-00001.parquet`, ... by Spark, DuckDB or Polars).
//!
//! ```text
//!   data/                      → data/part-00000.parquet, data/part-00001.parquet
//!     _SUCCESS                   (names starting with `_` or `.` are a writer's markers,
//!     .part-00000.parquet.crc     checksums and temporaries: left out)
//!     part-00001.parquet
//!     part-00000.parquet
//! ```
//!
//! Files with a table extension are taken (every other name too when the format is given);
//! a subdirectory (a dataset partitioned into `key=value/` directories, whose key columns are
//! in the names, not the files) is refused rather than left out, and so is a directory
//! without a table file.

use std::path::{Path, PathBuf};

use crate::error::{Result, TableError};
use crate::format::TableFormat;

/// `inputs` with each directory replaced by its table files (see the module's text); `given`:
/// the inputs' format, when given (every name that is not a marker is then a table file).
pub fn expand(inputs: &[PathBuf], given: Option<TableFormat>) -> Result<Vec<PathBuf>> {
    let mut out = Vec::with_capacity(inputs.len());
    for p in inputs {
        if crate::read::is_std(p) || !std::fs::metadata(p).is_ok_and(|m| m.is_dir()) {
            out.push(p.clone());
            continue;
        }
        out.extend(files_in(p, given)?);
    }
    Ok(out)
}

/// The table files of directory `dir`, in name order.
fn files_in(dir: &Path, given: Option<TableFormat>) -> Result<Vec<PathBuf>> {
    let err = |why: String| TableError::Read { path: dir.to_path_buf(), why };
    let listing = std::fs::read_dir(dir).map_err(|e| err(oxsort_io::os_message(&e)))?;
    let mut files = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|e| err(oxsort_io::os_message(&e)))?;
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if text.starts_with('.') || text.starts_with('_') {
            continue;
        }
        let path = entry.path();
        let meta = std::fs::metadata(&path).map_err(|e| err(oxsort_io::os_message(&e)))?;
        if meta.is_dir() {
            return Err(err(format!(
                "holds the directory '{text}' (a dataset partitioned into directories keeps \
                 columns in their names): give the files to sort"
            )));
        }
        if given.is_some() || TableFormat::from_path(&path).is_some() {
            files.push(path);
        }
    }
    if files.is_empty() {
        return Err(err(
            "a directory with no table file in it (.parquet, .arrow, .csv, ...)".into()
        ));
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dataset_directory_is_its_table_files_in_name_order() {
        let d = tempfile::tempdir().unwrap();
        let data = d.path().join("data");
        std::fs::create_dir(&data).unwrap();
        for f in ["part-00001.parquet", "part-00000.parquet", "_SUCCESS", ".part-00000.parquet.crc"]
        {
            std::fs::write(data.join(f), b"").unwrap();
        }
        std::fs::write(data.join("README"), b"").unwrap();
        let single = d.path().join("x.csv");
        let got = expand(&[single.clone(), data.clone()], None).unwrap();
        let want = vec![single, data.join("part-00000.parquet"), data.join("part-00001.parquet")];
        assert_eq!(got, want);
        // The format given: every name that is not a marker.
        let got = expand(std::slice::from_ref(&data), Some(TableFormat::Parquet)).unwrap();
        assert_eq!(got.len(), 3);
        // Partitioned into directories, or empty: refused, naming it.
        std::fs::create_dir(data.join("k=1")).unwrap();
        let e = expand(std::slice::from_ref(&data), None).unwrap_err().to_string();
        assert!(e.contains("holds the directory 'k=1'"), "{e}");
        let empty = d.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let e = expand(&[empty], None).unwrap_err().to_string();
        assert!(e.contains("no table file in it"), "{e}");
    }
}

//! [`TableFormat`]: the kinds of table file, told from a name or given.

use std::path::Path;

use crate::error::{Result, TableError};

/// A kind of table file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableFormat {
    /// Apache Parquet (`.parquet`, `.pq`).
    Parquet,
    /// The Arrow IPC file format (`.arrow`, `.feather`, `.ipc`).
    ArrowFile,
    /// The Arrow IPC stream format (`.arrows`).
    ArrowStream,
    /// Comma-separated values with a header row (`.csv`).
    Csv,
    /// Tab-separated values with a header row (`.tsv`).
    Tsv,
}

impl TableFormat {
    /// The format a file's extension names, if it names one.
    pub fn from_path(path: &Path) -> Option<TableFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "parquet" | "pq" => TableFormat::Parquet,
            "arrow" | "feather" | "ipc" => TableFormat::ArrowFile,
            "arrows" => TableFormat::ArrowStream,
            "csv" => TableFormat::Csv,
            "tsv" => TableFormat::Tsv,
            _ => return None,
        })
    }

    /// The format called `name` (`parquet`, `arrow`, `ipc`, `feather`, `arrows`, `csv`, `tsv`).
    pub fn parse(name: &str) -> Result<TableFormat> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "parquet" => TableFormat::Parquet,
            "arrow" | "ipc" | "feather" => TableFormat::ArrowFile,
            "arrows" | "arrow-stream" | "ipc-stream" => TableFormat::ArrowStream,
            "csv" => TableFormat::Csv,
            "tsv" => TableFormat::Tsv,
            _ => {
                return Err(TableError::UnknownFormat {
                    path: name.into(),
                    why: "not a table format (parquet, arrow, arrows, csv or tsv)".into(),
                })
            }
        })
    }

    /// `given`, else the format `path`'s extension names, else an error naming the file.
    pub fn of(path: &Path, given: Option<TableFormat>) -> Result<TableFormat> {
        given.or_else(|| TableFormat::from_path(path)).ok_or_else(|| TableError::UnknownFormat {
            path: path.to_path_buf(),
            why: "the table format cannot be told from the name (.parquet, .arrow, .arrows, \
                  .feather, .ipc, .csv, .tsv); give it"
                .into(),
        })
    }

    /// Its name, as [`TableFormat::parse`] takes it.
    pub fn name(self) -> &'static str {
        match self {
            TableFormat::Parquet => "parquet",
            TableFormat::ArrowFile => "arrow",
            TableFormat::ArrowStream => "arrows",
            TableFormat::Csv => "csv",
            TableFormat::Tsv => "tsv",
        }
    }

    /// The field separator of a text format.
    pub(crate) fn delimiter(self) -> u8 {
        if self == TableFormat::Tsv {
            b'\t'
        } else {
            b','
        }
    }
}

/// Separators a CSV file's header is looked at for when it has no comma: semicolons (CSV as
/// spreadsheets write it where the comma is the decimal mark), tabs, and pipes.
const OTHER_SEPARATORS: [u8; 3] = [b';', b'\t', b'|'];

/// The field separator of a text table whose first line is `header`: a TSV's tab; a CSV's
/// comma when its header has one outside quotes, else the one of [`OTHER_SEPARATORS`] it has
/// most of (`k;v` is two columns, as DuckDB reads it), else the comma (one column).
pub(crate) fn sniff_delimiter(format: TableFormat, header: &[u8]) -> u8 {
    if format != TableFormat::Csv {
        return format.delimiter();
    }
    let mut counts = [0usize; 256];
    let mut quoted = false;
    for &b in header.iter().take_while(|&&b| b != b'\n') {
        if b == b'"' {
            quoted = !quoted;
        } else if !quoted {
            counts[usize::from(b)] += 1;
        }
    }
    if counts[usize::from(b',')] > 0 {
        return b',';
    }
    OTHER_SEPARATORS
        .into_iter()
        .filter(|&d| counts[usize::from(d)] > 0)
        .max_by_key(|&d| counts[usize::from(d)])
        .unwrap_or(b',')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_header_without_a_comma_tells_its_separator() {
        let csv = |h: &str| sniff_delimiter(TableFormat::Csv, h.as_bytes()) as char;
        assert_eq!(csv("k,v\n1;2,3"), ',');
        assert_eq!(csv("k;v;w\n1,5;2;3"), ';');
        assert_eq!(csv("k\tv\n"), '\t');
        assert_eq!(csv("k|v"), '|');
        assert_eq!(csv("\"a;b\"|c"), '|');
        assert_eq!(csv("\"a,b\";c"), ';');
        assert_eq!(csv("only\n1,2"), ',');
        assert_eq!(csv(""), ',');
        assert_eq!(sniff_delimiter(TableFormat::Tsv, b"k;v"), b'\t');
    }

    #[test]
    fn formats_come_from_extensions_and_names() {
        assert_eq!(TableFormat::from_path(Path::new("a/b.PARQUET")), Some(TableFormat::Parquet));
        assert_eq!(TableFormat::from_path(Path::new("b.feather")), Some(TableFormat::ArrowFile));
        assert_eq!(TableFormat::from_path(Path::new("b.arrows")), Some(TableFormat::ArrowStream));
        assert_eq!(TableFormat::from_path(Path::new("b.tsv")), Some(TableFormat::Tsv));
        assert_eq!(TableFormat::from_path(Path::new("b.dat")), None);
        assert_eq!(TableFormat::parse("IPC").unwrap(), TableFormat::ArrowFile);
        assert!(TableFormat::parse("xlsx").unwrap_err().to_string().contains("xlsx"));
        let e = TableFormat::of(Path::new("x.dat"), None).unwrap_err().to_string();
        assert!(e.starts_with("x.dat: "), "{e}");
    }
}

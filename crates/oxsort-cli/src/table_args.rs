//! `--by`, `--format`, `--output-format`: tables (Parquet, Arrow IPC, CSV/TSV with a header)
//! sorted by column names; the job layer runs them.

use anyhow::Result;
use oxsort_job::table::{TableJob, TableSpec, TableWords};

/// The table flags of `oxsort sort`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TableArgs {
    /// Sort tables (Parquet, Arrow IPC, CSV/TSV with a header) by these columns, comma
    /// separated, each a name with :asc or :desc and :nulls_first or :nulls_last if wanted
    /// (default ascending, nulls last): k1,k2:desc:nulls_first; "a:b" quotes a name with : or ,.
    #[arg(long = "by", value_name = "COLS")]
    pub by: Option<String>,
    /// The input tables' format: parquet, arrow, arrows, csv or tsv (default: each file's
    /// extension).
    #[arg(long = "format", value_name = "FORMAT")]
    pub format: Option<String>,
    /// The output table's format (default: its extension, else the input's).
    #[arg(long = "output-format", value_name = "FORMAT")]
    pub output_format: Option<String>,
    /// A CSV or TSV column's type in place of the one inferred from the first rows:
    /// NAME=TYPE (int64, float64, string, bool, date32, timestamp, Decimal128(10, 2), ...);
    /// repeat for more columns.
    #[arg(long = "column-type", value_name = "NAME=TYPE")]
    pub column_types: Vec<String>,
}

impl TableArgs {
    /// The table sort these flags ask for, if they ask for one.
    pub fn spec(&self) -> Result<Option<TableSpec>> {
        let by: Vec<String> = self.by.iter().cloned().collect();
        let words = TableWords {
            by: "--by",
            format: "--format",
            output_format: "--output-format",
            types: "--column-type",
            by_example: "--by COL[:desc],...",
        };
        let (format, output_format) = (self.format.as_deref(), self.output_format.as_deref());
        Ok(TableSpec::from_options(&by, format, output_format, &self.column_types, &words)?)
    }
}

/// Runs a table sort with the CLI's printing (`stats`: `--stats`, `Some(true)` for JSON);
/// returns the exit status.
pub(crate) fn run_table(job: &TableJob, quiet: bool, stats_json: Option<bool>) -> Result<i32> {
    let stats = job.run()?;
    if !quiet {
        for n in &stats.engine.notes {
            eprintln!("oxsort: note: {n}");
        }
        eprintln!("Rows: {}", stats.rows);
        eprintln!("Checksum: {:016x}", stats.sum.sum);
        eprintln!("SUCCESS - all rows are in order");
    }
    match stats_json {
        Some(false) => eprint!("{}", stats.engine.to_text()),
        Some(true) => eprintln!("{}", serde_json::to_string(&stats.engine)?),
        None => {}
    }
    Ok(0)
}

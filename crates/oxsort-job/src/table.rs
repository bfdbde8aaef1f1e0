//! Tables sorted by column names: a [`TableSpec`] in the request's spec sources resolves to a
//! [`TableJob`], run by `oxsort-table` on the engine with the job's resources.

use std::path::PathBuf;

pub use oxsort_table::{
    check_distinct, expand_dirs, ColumnType, SortColumn, TableError, TableExplain, TableFormat,
    TableSort, TableStats,
};

use crate::error::JobError;
use crate::{configure, DataSets, Job, Resources, SpecSource};

/// What makes a sort a table sort: the sort columns and the formats.
#[derive(Debug, Clone, Default)]
pub struct TableSpec {
    /// The sort columns, most significant first.
    pub by: Vec<SortColumn>,
    /// The inputs' format; default: each input's extension.
    pub input_format: Option<TableFormat>,
    /// The output's format; default: its extension, else the input's format.
    pub output_format: Option<TableFormat>,
    /// Column types given for CSV and TSV inputs in place of those inferred.
    pub types: Vec<ColumnType>,
}

/// What a door calls the table options, for the messages about them (`--by`, `by=`).
#[derive(Debug, Clone, Copy)]
pub struct TableWords {
    /// The sort columns' option.
    pub by: &'static str,
    /// The inputs' format's.
    pub format: &'static str,
    /// The output's format's.
    pub output_format: &'static str,
    /// The columns' types'.
    pub types: &'static str,
    /// How to give sort columns, as the door writes it (`--by COL[:desc],...`).
    pub by_example: &'static str,
}

/// A table option a door was given that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct TableOptionError {
    /// The message, naming the option by the door's word.
    pub message: String,
}

impl TableSpec {
    /// The table sort a door's options ask for, if they ask for one: `by` (one
    /// `NAME[:desc][:nulls_first]` per column), the formats' names, the columns' types
    /// (`NAME=TYPE`). Formats or types without sort columns are refused; errors name the
    /// option as the door does (`words`).
    pub fn from_options(
        by: &[String],
        format: Option<&str>,
        output_format: Option<&str>,
        types: &[String],
        words: &TableWords,
    ) -> Result<Option<TableSpec>, TableOptionError> {
        let fail = |word: &str, e: TableError| TableOptionError { message: format!("{word}: {e}") };
        let format_of = |word: &str, f: Option<&str>| {
            f.map(TableFormat::parse).transpose().map_err(|e| fail(word, e))
        };
        let input_format = format_of(words.format, format)?;
        let output_format = format_of(words.output_format, output_format)?;
        let types = types
            .iter()
            .map(|t| ColumnType::parse(t))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(words.types, e))?;
        if by.is_empty() {
            if input_format.is_some() || output_format.is_some() || !types.is_empty() {
                return Err(TableOptionError {
                    message: format!(
                        "a table sort needs its sort columns: give {}",
                        words.by_example
                    ),
                });
            }
            return Ok(None);
        }
        // Each item a comma-separated list (a comma in a quoted name is the name's).
        let by = by
            .iter()
            .map(|c| SortColumn::parse_each(c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(words.by, e))?
            .concat();
        check_distinct(&by).map_err(|e| fail(words.by, e))?;
        Ok(Some(TableSpec { by, input_format, output_format, types }))
    }
}

/// A table sort, resolved.
#[derive(Debug)]
pub struct TableJob {
    /// The sort.
    pub sort: TableSort,
    /// What it may use.
    pub resources: Resources,
}

impl TableJob {
    /// Runs the sort: the memory budget is the whole process's (the engine gets its share of
    /// it), the other resources go to the engine as they are.
    pub fn run(&self) -> Result<TableStats, TableError> {
        let mut r = self.resources.clone();
        r.memory = r.memory.map(oxsort_table::engine_memory);
        oxsort_table::sort_tables(&self.sort, |b| configure(b, &r))
    }

    /// The sort's plan, made as [`TableJob::run`] would make it, without sorting.
    pub fn explain(&self) -> Result<TableExplain, TableError> {
        let mut r = self.resources.clone();
        r.memory = r.memory.map(oxsort_table::engine_memory);
        oxsort_table::explain_tables(&self.sort, |b| configure(b, &r))
    }
}

/// The table job of a request whose spec sources hold `table`: nothing of records' specs may
/// come with it.
pub(crate) fn resolve(
    inputs: Vec<PathBuf>,
    output: PathBuf,
    table: TableSpec,
    spec: &SpecSource,
    data_sets: &DataSets,
    resources: Resources,
) -> Result<Job, JobError> {
    let with = [
        (spec.control.is_some(), "control statements"),
        (spec.fields.is_some(), "a key of record fields"),
        (spec.delimited.is_some(), "a delimited record layout"),
        (spec.record_size.is_some(), "a record size"),
        (spec.rdw.is_some(), "an RDW record layout"),
        (spec.gnu_flags, "a key of GNU sort's options"),
        (spec.unique, "keeping one record per key"),
        (spec.merge, "merging presorted inputs"),
        (!data_sets.dd.is_empty(), "a data-set map"),
    ];
    if let Some((_, what)) = with.iter().find(|(given, _)| *given) {
        return Err(JobError::TableWith(what));
    }
    // No input is standard input, as for every sort (a stream: CSV, TSV or an Arrow IPC
    // stream, its format given); `-` as the output is standard output.
    let inputs = if inputs.is_empty() { vec![PathBuf::from(crate::STD)] } else { inputs };
    oxsort_table::check_distinct(&table.by)?;
    let sort = TableSort {
        inputs,
        output,
        by: table.by,
        input_format: table.input_format,
        output_format: table.output_format,
        threads: resources.threads.unwrap_or(0),
        types: table.types,
        row_checksum: false,
    };
    Ok(Job::Table(TableJob { sort, resources }))
}

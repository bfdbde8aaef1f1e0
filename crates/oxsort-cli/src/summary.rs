//! `--summary FILE`: a valsort `-o` summary of a sort's output.

use std::path::Path;

use anyhow::{bail, Result};

/// Validates the file `output` as valsort does and writes its 280-byte summary to `summary`.
/// Re-reads the output: the summary is what valsort would write for the file on disk.
pub fn write_summary_of(output: &Path, summary: &Path) -> Result<()> {
    if oxsort_job::is_std(output) {
        bail!("--summary needs an output file, not standard output");
    }
    let s = oxsort_gensort::validate_file(output, 0, None)?;
    oxsort_gensort::write_summary_file(summary, &s)?;
    Ok(())
}

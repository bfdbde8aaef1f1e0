//! The job layer's errors in the CLI's words: its remedies name the CLI's flags.

use anyhow::anyhow;
use oxsort_job::{JobError, Words};

/// How the CLI words the job layer's remedies: with its flags.
pub(crate) struct JobFlags;

impl Words for JobFlags {
    fn dd(&self, name: &str) -> String {
        format!("--dd {name}=PATH")
    }
    fn dd_given(&self, name: &str, path: &str) -> String {
        format!("--dd {name}={path}")
    }
    fn dd_name(&self, name: &str) -> String {
        format!("--dd {name}")
    }
    fn lrecl(&self, name: &str) -> String {
        format!("--lrecl {name}=N")
    }
    fn record_size(&self) -> String {
        "--record-size N".into()
    }
    fn record_size_name(&self) -> String {
        "--record-size".into()
    }
    fn delimited(&self) -> String {
        "--lines/--nul".into()
    }
    fn output(&self) -> String {
        "-o PATH".into()
    }
    fn output_given(&self, path: &str) -> String {
        format!("-o {path}")
    }
    fn inputs_given(&self, paths: &str) -> String {
        format!("as arguments ({paths})")
    }
}

/// A job layer's error in the CLI's words (an engine error stays one, for `main`'s look at a
/// closed output pipe).
pub(crate) fn cli_error(e: JobError) -> anyhow::Error {
    if let Some(m) = e.describe(&JobFlags) {
        return anyhow!(m);
    }
    match e {
        JobError::Engine(e) => anyhow::Error::from(e),
        JobError::EngineIn { what, source } => anyhow::Error::from(source).context(what),
        e => anyhow::Error::new(e),
    }
}

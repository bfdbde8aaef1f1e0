//! `oxsort valsort`: valsort with friendly flags.

/// Arguments of `oxsort valsort`.
#[derive(clap::Args)]
pub struct ValsortArgs {}

/// Runs `oxsort valsort`; returns the exit status.
pub fn run(_args: ValsortArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not built yet")
}

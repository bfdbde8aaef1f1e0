//! `oxsort gen`: gensort with friendly flags.

/// Arguments of `oxsort gen`.
#[derive(clap::Args)]
pub struct GenArgs {}

/// Runs `oxsort gen`; returns the exit status.
pub fn run(_args: GenArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not built yet")
}

//! `oxsort`: sort files too big for memory at the speed of the disks.
//!
//! Subcommands live in one module each; this file only parses and dispatches.

mod gen_cmd;
mod valsort_cmd;

use clap::{Parser, Subcommand};

/// Command line of the `oxsort` binary.
#[derive(Parser)]
#[command(name = "oxsort", version, about = "External merge sort at the speed of the disks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate Sort Benchmark records (gensort-compatible).
    Gen(gen_cmd::GenArgs),
    /// Validate sorted records or merge summaries (valsort-compatible).
    Valsort(valsort_cmd::ValsortArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Gen(args) => gen_cmd::run(args),
        Command::Valsort(args) => valsort_cmd::run(args),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            eprintln!("oxsort: {err:#}");
            std::process::exit(1);
        }
    }
}

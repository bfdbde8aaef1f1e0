//! `oxsort`: sort files too big for memory at the speed of the disks.
//!
//! Subcommands live in one module each; this file only parses and dispatches.

mod bench_cmd;
mod category;
mod gen_cmd;
mod keys_args;
mod nsort_cmd;
mod size;
mod sort_cmd;
mod summary;
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
    /// Sort files of records (several inputs are concatenated).
    Sort(sort_cmd::SortArgs),
    /// Print the plan of a sort without doing it.
    Explain {
        #[command(flatten)]
        args: sort_cmd::SortArgs,
        /// Print the plan as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run an nsort command line (`-format=... -key=... -in_file=... -out_file=...`).
    #[command(disable_help_flag = true)]
    Nsort(nsort_cmd::NsortArgs),
    /// Generate, sort and validate a data set; report throughput and the ratio to the I/O floor;
    /// or run a Sort Benchmark category (`minutesort`, `pennysort`, `joulesort`, `graysort`,
    /// `cloudsort`) and write its report.
    Bench(bench_cmd::BenchArgs),
}

/// Big allocations (entry arrays, offsets) come from the hugetlb pool when one is reserved,
/// like the I/O buffers (see `oxsort_io::bigmem`).
#[global_allocator]
static ALLOC: oxsort_io::BigAlloc = oxsort_io::BigAlloc;

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Gen(args) => gen_cmd::run(args),
        Command::Valsort(args) => valsort_cmd::run(args),
        Command::Sort(args) => sort_cmd::run_sort(args),
        Command::Explain { args, json } => sort_cmd::run_explain(args, json),
        Command::Nsort(args) => nsort_cmd::run(args),
        Command::Bench(args) => bench_cmd::run(args),
    };
    match result {
        Ok(code) => std::process::exit(code),
        // The reader of the output stopped reading (`oxsort ... | head`): as GNU sort, quietly.
        Err(err)
            if matches!(
                err.downcast_ref::<oxsort_engine::EngineError>(),
                Some(oxsort_engine::EngineError::OutputClosed { .. })
            ) =>
        {
            std::process::exit(0)
        }
        Err(err) => {
            eprintln!("oxsort: {}", message(&err));
            std::process::exit(1);
        }
    }
}

/// An error and its causes on one line, each cause said once: library errors already end with
/// the operating system's words, which their sources would repeat.
fn message(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        let bare = text.rfind(" (os error ").map_or(text.as_str(), |i| &text[..i]);
        if out.contains(bare) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

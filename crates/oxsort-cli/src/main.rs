//! `oxsort`: sort files too big for memory at the speed of the disks.
//!
//! Subcommands live in one module each; this file only parses and dispatches.
#![forbid(unsafe_code)]

mod bench_cmd;
mod clean_cmd;
mod docs_cmd;
mod gcsort_cmd;
mod gen_cmd;
mod gnu;
mod keys_args;
mod nsort_cmd;
mod pool_cmd;
mod sort_cmd;
mod summary;
mod table_args;
mod valsort_cmd;
mod words;

use clap::{Parser, Subcommand};

/// Command line of the `oxsort` binary.
#[derive(Parser)]
#[command(name = "oxsort", version, about = "External merge sort at the speed of the disks")]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// Run a GNU sort command line (`oxsort gnu -t, -k2,2n FILE`); a link named `sort` to
    /// oxsort does the same. See `oxsort gnu --help`.
    #[command(disable_help_flag = true)]
    Gnu {
        /// GNU sort's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run a GCSORT command (GnuCOBOL's sort): `oxsort gcsort TAKE file`, or the statements
    /// (`SORT FIELDS=(...) USE in ORG SQ RECORD F,100 GIVE out ORG SQ RECORD F,100`).
    #[command(disable_help_flag = true)]
    Gcsort {
        /// GCSORT's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Remove what killed sorts left behind (temp directories, unfinished outputs) in DIRs;
    /// a running sort's files are never touched.
    Clean(clean_cmd::CleanArgs),
    /// Reserve the hugetlb pool big buffers come from, warm (every page touched once, on all
    /// cores), so the first sort pays no more than the next; `off` releases it.
    Pool(pool_cmd::PoolArgs),
    /// Write man pages for oxsort and its subcommands into DIR.
    Man(docs_cmd::ManArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(docs_cmd::CompletionsArgs),
}

/// Big allocations (entry arrays, offsets) come from the hugetlb pool when one is reserved,
/// like the I/O buffers (see `oxsort_io::bigmem`).
#[global_allocator]
static ALLOC: oxsort_io::BigAlloc = oxsort_io::BigAlloc;

fn main() {
    // Big buffers may take the pool `oxsort pool` keeps warm (this process forks only to exec).
    oxsort_io::warm::use_kept_pool();
    // GNU sort's command line: through a link named `sort`, or `oxsort gnu ARGS...`.
    let mut argv = std::env::args_os();
    let argv0 = argv.next().unwrap_or_default();
    // GNU's arguments are parsed as text; a file name that is not UTF-8 keeps its bytes.
    let rest: Vec<String> = argv.map(|a| gnu::osname::encode(&a)).collect();
    if gnu::invoked_as_sort(&argv0) {
        std::process::exit(gnu::main(rest));
    }
    // GCSORT's command line: through a link named `gcsort`, or `oxsort gcsort ARGS...`.
    if std::path::Path::new(&argv0).file_name().is_some_and(|n| n == "gcsort") {
        std::process::exit(gcsort_cmd::main(rest));
    }
    if rest.first().is_some_and(|a| a == "gnu") {
        std::process::exit(gnu::main(rest[1..].to_vec()));
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Gen(args) => gen_cmd::run(args),
        Command::Valsort(args) => valsort_cmd::run(args),
        Command::Sort(args) => sort_cmd::run_sort(args),
        Command::Explain { args, json } => sort_cmd::run_explain(args, json),
        Command::Nsort(args) => nsort_cmd::run(args),
        Command::Bench(args) => bench_cmd::run(args),
        Command::Gnu { args } => Ok(gnu::main(args)),
        Command::Gcsort { args } => Ok(gcsort_cmd::main(args)),
        Command::Clean(args) => clean_cmd::run(args),
        Command::Pool(args) => pool_cmd::run(args),
        Command::Man(args) => docs_cmd::man(args),
        Command::Completions(args) => docs_cmd::completions(args),
    };
    match result {
        Ok(code) => std::process::exit(code),
        // The reader of the output stopped reading (`oxsort ... | head`): as a C program, the
        // temp files removed, killed by SIGPIPE; or, when SIGPIPE was ignored by the parent,
        // the write error.
        Err(err) => match err.downcast_ref::<oxsort_engine::EngineError>() {
            Some(oxsort_engine::EngineError::OutputClosed { path }) => {
                let name = oxsort_io::cleanup::closed_output(path);
                eprintln!("oxsort: cannot write {name}: its reader closed the pipe");
                std::process::exit(1);
            }
            _ => {
                eprintln!("oxsort: {}", message(&err));
                std::process::exit(1);
            }
        },
    }
}

/// The error's message with its causes, each said once; an engine error that a flag or a
/// command of this binary answers says which.
fn message(err: &anyhow::Error) -> String {
    let said = oxsort_engine::error_message(err.as_ref());
    match err.downcast_ref::<oxsort_engine::EngineError>() {
        // Only when the engine's error is the whole message (no context around it).
        Some(e) if oxsort_engine::error_message(e) == said => with_flags(e).unwrap_or(said),
        _ => said,
    }
}

/// An engine error in the words of this binary's flags and commands, when it has any.
fn with_flags(e: &oxsort_engine::EngineError) -> Option<String> {
    use oxsort_engine::EngineError as E;
    let said = || oxsort_engine::error_message(e);
    Some(match e {
        E::OutfilUnmapped { name, .. } => format!("{} (give --dd {name}=PATH)", said()),
        E::NotResumable { why } => format!("--resume {why}"),
        E::ResumeRefused { journal, why } => format!(
            "cannot resume from {}: {why}; run the interrupted sort as it was to go on from it, \
             start over with --restart, or remove what it kept with `oxsort clean --resume {}`",
            journal.display(),
            oxsort_engine::resume_temp_dir(journal).display()
        ),
        E::TempFull { dir, resumable: true, .. } => {
            format!("{} (`oxsort clean --resume {}`)", said(), dir.display())
        }
        E::TempFull { .. } => format!("{} (--temp-dir)", said()),
        E::NoTempSpace { dir, kept, .. } if !kept.is_empty() => {
            format!("{} (`oxsort clean --resume {}` lists and removes them)", said(), dir.display())
        }
        _ => return None,
    })
}

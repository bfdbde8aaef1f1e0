//! Drop-in `valsort`: the Sort Benchmark output validator, with valsort 1.5's command line.
//!
//! `valsort [-q] [-o SUMMARY_FILE] [-s] [-tN] FILE_NAME`. Same stderr text and exit status as
//! the original for every valid invocation; `-i` is refused (see docs/gensort-compat.md).

#[path = "../compat/mod.rs"]
mod compat;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use compat::{parse_threads, strip_file_options, usage_exit, UsageError};
use oxsort_gensort::{error_report, validate_file, validate_summaries_file, write_summary_file};

const USAGE: &str = "\
Valsort Sort Output Validator

usage: valsort [-i] [-q] [-o SUMMARY_FILE] [-s] [-tN] FILE_NAME
-i        Refused by this implementation: in valsort 1.5 it compares
          whole records with strcasecmp instead of keys, which gives
          wrong results.
-q        Quiet mode: print nothing, only the exit status (0 = sorted).
-o SUMMARY_FILE  Write a 280-byte summary of the validation to
          SUMMARY_FILE (even when the records are out of order).
-s        FILE_NAME holds concatenated partition summaries (written by
          -o for each output partition, in partition order) instead of
          records: check the partitions' combined order, record count,
          duplicate keys and checksum.
-tN       Use N threads (default: one per CPU).
FILE_NAME The name of the sort output file or summary file to verify.

Example 1 - validate a single sorted output file:
    valsort sortoutputfile

Example 2 - validate a sort output partitioned into 3 files:
    valsort -o out0.sum out0.dat
    valsort -o out1.sum out1.dat
    valsort -o out2.sum out2.dat
    cat out0.sum out1.sum out2.sum > all.sum
    valsort -s all.sum

Compatible with valsort 1.5 (oxsort implementation)
";

const DASH_I_REFUSED: &str = "\
valsort: -i is not supported. In valsort 1.5, -i compares records with strcasecmp \
over the whole record (and past it) instead of the 10-byte key, so it reports \
sorted ascii data as unordered and misses duplicate keys. Validate without -i.";

struct Options {
    quiet: bool,
    summaries: bool,
    summary_out: Option<PathBuf>,
    threads: usize,
    file: PathBuf,
}

enum Parsed {
    Run(Options),
    RefuseDashI,
}

fn parse(args: Vec<OsString>) -> Result<Parsed, UsageError> {
    let (mut quiet, mut summaries, mut summary_out, mut threads) = (false, false, None, 0);
    let mut dash_i = false;
    let mut i = 0;
    while i < args.len() && args[i].as_bytes().first() == Some(&b'-') {
        let arg = args[i].as_bytes();
        match arg {
            b"-q" => quiet = true,
            b"-s" => summaries = true,
            b"-i" => dash_i = true,
            b"-o" => {
                i += 1;
                match args.get(i) {
                    Some(name) if name.as_bytes().first() != Some(&b'-') => {
                        summary_out = Some(PathBuf::from(name))
                    }
                    _ => return Err(UsageError(None)),
                }
            }
            [b'-', b't', value @ ..] => threads = parse_threads(value)?,
            [b'-', b'q' | b's' | b'i', ..] => {
                return Err(UsageError(Some(format!(
                    "unknown option '{}': give each option separately (e.g. -q -s)",
                    String::from_utf8_lossy(arg)
                ))))
            }
            [b'-', b'o', ..] => {
                return Err(UsageError(Some(format!(
                    "unknown option '{}': the summary file name is a separate argument (-o FILE)",
                    String::from_utf8_lossy(arg)
                ))))
            }
            _ => return Err(UsageError(None)),
        }
        i += 1;
    }
    let [file] = &args[i..] else { return Err(UsageError(None)) };
    if dash_i {
        return Ok(Parsed::RefuseDashI);
    }
    let file = strip_file_options(file.clone());
    Ok(Parsed::Run(Options { quiet, summaries, summary_out, threads, file }))
}

fn run(opts: Options) -> i32 {
    let result = if opts.summaries {
        validate_summaries_file(&opts.file)
    } else {
        validate_file(&opts.file, opts.threads, None)
    };
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            // The "First unordered" line is output; the error message itself always shows.
            if opts.quiet {
                eprintln!("{e}");
            } else {
                eprint!("{}", error_report(&e));
            }
            return 1;
        }
    };
    if !opts.quiet {
        eprint!("{}", summary.report());
    }
    if let Some(out) = &opts.summary_out {
        if let Err(e) = write_summary_file(out, &summary) {
            eprintln!("{e}");
            return 1;
        }
    }
    i32::from(!summary.is_sorted())
}

/// Big allocations (entry arrays, offsets) come from the hugetlb pool when one is reserved,
/// like the I/O buffers (see `oxsort_io::bigmem`).
#[global_allocator]
static ALLOC: oxsort_io::BigAlloc = oxsort_io::BigAlloc;

fn main() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let code = match parse(args) {
        Ok(Parsed::Run(opts)) => run(opts),
        Ok(Parsed::RefuseDashI) => {
            eprintln!("{DASH_I_REFUSED}");
            1
        }
        Err(e) => usage_exit("valsort", e, USAGE),
    };
    std::process::exit(code);
}

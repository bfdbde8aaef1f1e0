//! Drop-in `gensort`: the Sort Benchmark input generator, with gensort 1.5's command line.
//!
//! `gensort [-a] [-c] [-bN] [-s] [-tN] NUM_RECS FILE_NAME`. Same bytes, same stderr text, same
//! exit status as the original for every valid invocation; invocations the original would
//! silently misread are refused (see docs/gensort-compat.md).

#[path = "../compat/mod.rs"]
mod compat;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use compat::{
    parse_decimal_u64, parse_decimal_wrapping, parse_threads, strip_file_options, usage_exit,
    UsageError,
};
use oxsort_gensort::{generate_file, generate_file_without_checksum, Kind};

const USAGE: &str = "\
Gensort Sort Input Generator (oxsort)

usage: gensort [-a] [-c] [-bSTARTING_REC_NUM] [-s] [-tN] NUM_RECS FILE_NAME
-a        Generate ascii records required for PennySort or JouleSort.
          These records are also an alternative input for the other
          sort benchmarks.  Without this flag, binary records will be
          generated that contain the highest density of randomness in
          the 10-byte key.
-c        Calculate the sum of the crc32 checksums of each of the
          generated records and send it to standard error.
-bN       Set the beginning record generated to N. By default the
          first record generated is record 0.
-s        Generate input records with skewed keys.
-tN       Use N threads to generate the records (default: one per CPU).
          The output does not depend on N.
NUM_RECS  The number of sequential records to generate, as a plain
          decimal integer (1000000, not 1e6).
FILE_NAME The name of the file to write the records to.  The exact name
          /dev/null generates (and checksums) without writing.

Example 1 - to generate 1000000 ascii records starting at record 0 to
the file named \"pennyinput\":
    gensort -a 1000000 pennyinput

Example 2 - to generate 1000 binary records beginning with record 2000
to the file named \"partition2\":
    gensort -b2000 1000 partition2

Compatible with gensort 1.5 (oxsort implementation)
";

struct Options {
    kind: Kind,
    checksum: bool,
    start: u128,
    threads: usize,
    count: u64,
    file: OsString,
}

fn parse(args: Vec<OsString>) -> Result<Options, UsageError> {
    let (mut ascii, mut skew, mut checksum, mut start, mut threads) = (false, false, false, 0, 0);
    let mut i = 0;
    while i < args.len() && args[i].as_bytes().first() == Some(&b'-') {
        let arg = args[i].as_bytes();
        match arg {
            b"-a" => ascii = true,
            b"-s" => skew = true,
            b"-c" => checksum = true,
            [b'-', b'b'] => {
                return Err(UsageError(Some(
                    "-b needs its record number attached, like -b2000 (not -b 2000)".into(),
                )))
            }
            [b'-', b'b', value @ ..] => {
                start = parse_decimal_wrapping(value).ok_or_else(|| {
                    UsageError(Some(format!(
                        "-b needs a plain decimal record number, got '{}'",
                        String::from_utf8_lossy(arg)
                    )))
                })?
            }
            [b'-', b't', value @ ..] => threads = parse_threads(value)?,
            [b'-', b'a' | b'c' | b's', ..] => {
                return Err(UsageError(Some(format!(
                    "unknown option '{}': give each option separately (e.g. -a -s)",
                    String::from_utf8_lossy(arg)
                ))))
            }
            _ => return Err(UsageError(None)),
        }
        i += 1;
    }
    let [count, file] = &args[i..] else { return Err(UsageError(None)) };
    let count = parse_decimal_u64(count.as_bytes()).ok_or_else(|| {
        UsageError(Some(format!(
            "NUM_RECS must be a plain decimal integer below 2^64, got '{}'",
            count.to_string_lossy()
        )))
    })?;
    Ok(Options {
        kind: Kind::new(ascii, skew),
        checksum,
        start,
        threads,
        count,
        file: file.clone(),
    })
}

/// Big allocations (entry arrays, offsets) come from the hugetlb pool when one is reserved,
/// like the I/O buffers (see `oxsort_io::bigmem`).
#[global_allocator]
static ALLOC: oxsort_io::BigAlloc = oxsort_io::BigAlloc;

fn main() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let opts = match parse(args) {
        Ok(o) => o,
        Err(e) => std::process::exit(usage_exit("gensort", e, USAGE)),
    };
    let path = strip_file_options(opts.file);
    let result = if opts.checksum {
        generate_file(&path, opts.start, opts.count, opts.kind, opts.threads, None)
            .map(|sum| eprintln!("{sum}"))
    } else {
        generate_file_without_checksum(&path, opts.start, opts.count, opts.kind, opts.threads, None)
    };
    match result {
        Ok(()) => {}
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}

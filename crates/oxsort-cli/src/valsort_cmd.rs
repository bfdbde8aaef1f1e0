//! `oxsort valsort`: valsort with friendly flags.

use std::path::PathBuf;

use oxsort_gensort::{
    error_report, validate_file, validate_summaries_file, write_summary_file, Error, Summary,
};

use crate::gen_cmd::progress_bar;

/// Arguments of `oxsort valsort`.
#[derive(clap::Args)]
pub struct ValsortArgs {
    /// The file to validate (records, or summaries with --summaries).
    pub file: PathBuf,
    /// The input holds concatenated 280-byte partition summaries (valsort -s).
    #[arg(long)]
    pub summaries: bool,
    /// Write the 280-byte summary of this validation to FILE (valsort -o).
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Worker threads (0 = one per CPU).
    #[arg(long, short = 't', default_value_t = 0)]
    pub threads: usize,
    /// Print nothing; the exit status says whether the records are in order.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print one JSON object with the result on stdout.
    #[arg(long)]
    pub json: bool,
}

fn json(summary: Option<&Summary>, err: Option<&Error>) -> serde_json::Value {
    let n = |v: u128| -> serde_json::Value {
        match u64::try_from(v) {
            Ok(v) => v.into(),
            Err(_) => v.to_string().into(),
        }
    };
    match (summary, err) {
        (Some(s), _) => serde_json::json!({
            "records": n(s.records),
            "checksum": s.checksum.to_string(),
            "duplicates": n(s.duplicates),
            "unordered": n(s.unordered),
            "first_unordered": s.first_unordered().map(n),
            "ok": s.is_sorted(),
        }),
        (None, e) => serde_json::json!({
            "ok": false,
            "error": e.map(ToString::to_string),
            "first_unordered": e.and_then(Error::first_unordered).map(n),
        }),
    }
}

/// Runs `oxsort valsort`; returns the exit status.
pub fn run(args: ValsortArgs) -> anyhow::Result<i32> {
    let result = if args.summaries {
        validate_summaries_file(&args.file)
    } else {
        let total = std::fs::metadata(&args.file).map(|m| m.len() / 100).unwrap_or(0);
        let bar = progress_bar(total, !args.quiet && !args.json, "validating");
        let tick = bar.as_ref().map(|b| move |n: u64| b.inc(n));
        let progress = tick.as_ref().map(|f| f as &(dyn Fn(u64) + Sync));
        let r = validate_file(&args.file, args.threads, progress);
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        r
    };
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            if args.json {
                println!("{}", json(None, Some(&e)));
            } else {
                eprint!("{}", error_report(&e));
            }
            return Ok(1);
        }
    };
    if let Some(out) = &args.summary {
        if let Err(e) = write_summary_file(out, &summary) {
            eprintln!("{e}");
            return Ok(1);
        }
    }
    if args.json {
        println!("{}", json(Some(&summary), None));
    } else if !args.quiet {
        print!("{}", summary.report());
    }
    Ok(i32::from(!summary.is_sorted()))
}

//! `oxsort gen`: gensort with friendly flags.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use oxsort_gensort::{generate_file, Kind};

/// Arguments of `oxsort gen`.
#[derive(clap::Args)]
pub struct GenArgs {
    /// Output file (created or truncated). `/dev/null` generates without writing.
    pub file: PathBuf,
    /// Number of records: 1000000, 10M, 1e6, 2.5G (K/M/G/T are powers of 10).
    #[arg(long, short = 'n', value_parser = parse_count)]
    pub records: u64,
    /// Ascii records (gensort -a).
    #[arg(long)]
    pub ascii: bool,
    /// Skewed keys (gensort -s).
    #[arg(long)]
    pub skew: bool,
    /// First record number (0 to 2^128-1; gensort -b).
    #[arg(long, default_value = "0", value_parser = parse_start)]
    pub start: u128,
    /// Worker threads (0 = one per CPU).
    #[arg(long, short = 't', default_value_t = 0)]
    pub threads: usize,
    /// Print the checksum of the generated records (gensort -c) on stdout.
    #[arg(long)]
    pub checksum: bool,
    /// Print one JSON object with the result on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Parses a record count: a plain integer, or a decimal with an exponent (`1e6`, `2.5e3`) and/or
/// a K/M/G/T suffix (powers of 10). The result must be a whole number.
pub fn parse_count(text: &str) -> Result<u64, String> {
    let err = || format!("'{text}' is not a record count (examples: 1000000, 10M, 1e6, 2.5G)");
    let t = text.trim().replace('_', "");
    let (num, mut exp) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() && !c.eq_ignore_ascii_case(&'e') => {
            let e = match c.to_ascii_uppercase() {
                'K' => 3,
                'M' => 6,
                'G' => 9,
                'T' => 12,
                _ => return Err(err()),
            };
            (&t[..i], e)
        }
        _ => (&t[..], 0i64),
    };
    let mantissa = match num.find(['e', 'E']) {
        Some(i) => {
            exp += num[i + 1..].parse::<i64>().map_err(|_| err())?;
            &num[..i]
        }
        None => num,
    };
    let (int_part, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac.is_empty()
        || !int_part.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return Err(err());
    }
    let frac = frac.trim_end_matches('0');
    let digits: String = format!("{int_part}{frac}");
    let mut value: u128 = if digits.is_empty() { 0 } else { digits.parse().map_err(|_| err())? };
    exp -= frac.len() as i64;
    if exp < 0 {
        let div = 10u128.checked_pow(u32::try_from(-exp).map_err(|_| err())?).ok_or_else(err)?;
        if value % div != 0 {
            return Err(format!("'{text}' is not a whole number of records"));
        }
        value /= div;
    } else {
        let mul = 10u128.checked_pow(u32::try_from(exp).map_err(|_| err())?);
        value = mul.and_then(|m| value.checked_mul(m)).ok_or_else(err)?;
    }
    u64::try_from(value).map_err(|_| format!("'{text}' is too many records (the limit is 2^64-1)"))
}

fn parse_start(text: &str) -> Result<u128, String> {
    text.parse().map_err(|_| format!("'{text}' is not a record number (0 to 2^128-1)"))
}

/// A progress bar on stderr when it is a terminal (and the user did not ask for quiet/JSON).
pub(crate) fn progress_bar(total: u64, wanted: bool, verb: &str) -> Option<ProgressBar> {
    if !wanted || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template(&format!(
        "{verb} {{bar:40}} {{human_pos}}/{{human_len}} records  {{per_sec}}  eta {{eta}}"
    ))
    .expect("valid template");
    bar.set_style(style);
    Some(bar)
}

/// Runs `oxsort gen`; returns the exit status.
pub fn run(args: GenArgs) -> anyhow::Result<i32> {
    let kind = Kind::new(args.ascii, args.skew);
    let bar = progress_bar(args.records, !args.quiet && !args.json, "generating");
    let tick = bar.as_ref().map(|b| move |n: u64| b.inc(n));
    let progress = tick.as_ref().map(|f| f as &(dyn Fn(u64) + Sync));
    let started = std::time::Instant::now();
    let sum = generate_file(&args.file, args.start, args.records, kind, args.threads, progress)
        .with_context(|| format!("generating {}", args.file.display()))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let secs = started.elapsed().as_secs_f64();
    if args.json {
        let obj = serde_json::json!({
            "file": args.file.to_string_lossy(),
            "records": args.records,
            "start": args.start.to_string(),
            "kind": format!("{kind:?}").to_lowercase(),
            "checksum": sum.to_string(),
            "seconds": secs,
        });
        println!("{obj}");
    } else if args.checksum {
        println!("{sum}");
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::parse_count;

    #[test]
    fn counts() {
        assert_eq!(parse_count("1000"), Ok(1000));
        assert_eq!(parse_count("10M"), Ok(10_000_000));
        assert_eq!(parse_count("10k"), Ok(10_000));
        assert_eq!(parse_count("1e6"), Ok(1_000_000));
        assert_eq!(parse_count("2.5G"), Ok(2_500_000_000));
        assert_eq!(parse_count("1.5e3"), Ok(1500));
        assert_eq!(parse_count("1T"), Ok(1_000_000_000_000));
        assert_eq!(parse_count("0"), Ok(0));
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("12abc").is_err());
        assert!(parse_count("").is_err());
        assert!(parse_count("-5").is_err());
        assert!(parse_count("1e30").is_err());
    }
}

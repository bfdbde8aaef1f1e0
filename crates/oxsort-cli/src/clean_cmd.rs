//! `oxsort clean [DIR...] [--dry-run] [--resume]`: removes the leftovers of killed sorts
//! (private temp directories, unfinished outputs) whose owner is gone, as every sort does
//! before it starts. A running sort's files are locked by it and never touched (see
//! `oxsort_io::leftovers`). The directories interrupted resumable sorts keep for `--resume`
//! (`.oxsort-resume-HASH`) are listed with what they hold, and removed with `--resume`.

use std::path::PathBuf;

use anyhow::Result;
use oxsort_engine::{human_bytes, Reclaimed};

/// Arguments of `oxsort clean`.
#[derive(clap::Args, Debug)]
pub struct CleanArgs {
    /// Directories to sweep; default: the temp directory ($TMPDIR or /tmp) and the current one.
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// List what would be removed, remove nothing.
    #[arg(long = "dry-run", short = 'n')]
    pub dry_run: bool,
    /// Also remove the directories interrupted resumable sorts keep for `--resume`
    /// (`.oxsort-resume-HASH`; listed in any case): their sorts then start over.
    #[arg(long)]
    pub resume: bool,
}

/// Runs `oxsort clean`: one line per leftover (its size and path) on stdout, then a total.
pub fn run(args: CleanArgs) -> Result<i32> {
    let dirs = if args.dirs.is_empty() {
        let mut d = vec![std::env::temp_dir(), PathBuf::from(".")];
        if std::fs::canonicalize(&d[0]).ok() == std::fs::canonicalize(&d[1]).ok() {
            d.pop();
        }
        d
    } else {
        args.dirs
    };
    let (mut count, mut bytes, mut failed) = (0usize, 0u64, 0usize);
    let (mut resumes_removed, mut resume_bytes_removed) = (0usize, 0u64);
    let (mut resumes_kept, mut resume_bytes_kept) = (0usize, 0u64);
    for dir in &dirs {
        // The error names the directory and what failed ("listing DIR: ...").
        let swept = oxsort_io::sweep(dir, args.dry_run)?;
        for l in &swept.reclaimed {
            println!("{:>10}  {}", human_bytes(l.bytes), l.path.display());
        }
        for e in &swept.errors {
            eprintln!("oxsort: {e}");
        }
        count += swept.reclaimed.len();
        bytes += swept.bytes();
        failed += swept.errors.len();
        for d in oxsort_engine::resume_dirs(dir)? {
            let mut removed = false;
            if args.resume && !args.dry_run && d.owner.is_none() && !d.in_use {
                match oxsort_engine::remove_resume_dir(&d) {
                    Ok(r) => removed = r,
                    Err(e) => {
                        eprintln!("oxsort: {}", oxsort_engine::error_message(&e));
                        failed += 1;
                    }
                }
            }
            let removable = d.owner.is_none() && !d.in_use;
            if removed || (args.resume && args.dry_run && removable) {
                resumes_removed += 1;
                resume_bytes_removed += d.bytes;
            } else if removable {
                resumes_kept += 1;
                resume_bytes_kept += d.bytes;
            }
            println!("{:>10}  {}  {}", human_bytes(d.bytes), d.path.display(), resume_line(&d));
        }
    }
    let verb = if args.dry_run { "would remove" } else { "removed" };
    println!(
        "{verb} {count} leftover{} of killed sorts ({})",
        if count == 1 { "" } else { "s" },
        human_bytes(bytes)
    );
    if resumes_removed > 0 {
        println!(
            "{verb} {resumes_removed} resume director{} of interrupted sorts ({})",
            if resumes_removed == 1 { "y" } else { "ies" },
            human_bytes(resume_bytes_removed)
        );
    }
    if resumes_kept > 0 {
        println!(
            "kept {resumes_kept} resume director{} of interrupted sorts ({}): their sorts go on \
             with --resume; `oxsort clean --resume` removes them",
            if resumes_kept == 1 { "y" } else { "ies" },
            human_bytes(resume_bytes_kept),
        );
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

/// What a resume directory holds, in words: the sort it is for, its runs, its age and
/// whether it can be removed.
fn resume_line(d: &oxsort_engine::ResumeDir) -> String {
    let mut s = String::from("kept for --resume");
    if let Some(owner) = &d.owner {
        return format!("{s}, owned by {owner} (not this user's: left alone)");
    }
    match &d.output {
        Some(out) => {
            s += &format!(": {} -> {out}, {} run{}", d.inputs.join(" "), d.runs, plural(d.runs))
        }
        None => s += ": no journal (its sort stopped before its first run)",
    }
    if let Some(age) = d.modified.and_then(|m| m.elapsed().ok()) {
        s += &format!(", last written {} ago", human_age(age));
    }
    if d.in_use {
        s += ", in use by a running sort";
    }
    s
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A duration as a person says it: seconds, minutes, hours or days.
fn human_age(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        7200..=172_799 => format!("{} h", s / 3600),
        _ => format!("{} days", s / 86_400),
    }
}

/// The line a sort prints for leftovers it reclaimed in one directory.
pub fn reclaimed_line(r: &Reclaimed) -> String {
    let names: Vec<&str> = r
        .paths
        .iter()
        .map(|p| std::path::Path::new(p).file_name().and_then(|n| n.to_str()).unwrap_or(p))
        .collect();
    format!(
        "reclaimed {} leftover{} of killed sorts in {} ({}): {}",
        r.paths.len(),
        if r.paths.len() == 1 { "" } else { "s" },
        r.dir,
        human_bytes(r.bytes),
        names.join(", ")
    )
}

//! `oxsort nsort ARGS...`: nsort command lines (and `-specification` files) run by the oxsort
//! engine.
//!
//! The directives are parsed by `oxsort_lang::parse_nsort_with` and mapped onto a
//! [`SortConfig`]:
//!
//! ```text
//!  -format=size:N            layout            -memory=N     memory (capped at what is free)
//!  -field / -key             key               -processes=N  threads (capped at the cores)
//!  -in_file=PATH,...         inputs (none: -)  -temp_file    temp directories
//!  -out_file=PATH,...        output (none: -)  -statistics   report below, on stdout
//!  direct / buffered         one I/O mode for every file (buffered if any file asks for it)
//!  in_file transfer_size,    the input transfer size and transfers in flight
//!  count; temp transfer_size the merge's read block per run
//!  out/temp count, preallocate, -method, -touch: accepted and noted
//! ```
//!
//! As nsort does, nothing is printed on success without `-statistics`.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{anyhow, Result};
use oxsort_engine::{human_bytes, sort, FileStats, Input, Output, SortConfig, SortStats};
use oxsort_format::{FieldLoc, KeySpec, Location, ParseError, RecordLayout, SortSpec};
use oxsort_io::IoOptions;
use oxsort_lang::{parse_nsort_with, NsortCommand, NsortFile, NsortMethod};

const USAGE: &str = "\
usage: oxsort nsort DIRECTIVE...

Runs an nsort command line with the oxsort engine. Directives (unique prefixes allowed,
blanks around '=' allowed):
  -format=size:N                      fixed N-byte records (default 100)
  -field=name:F,size:N,offset:O,TYPE  a named field (TYPE: character, integer, unsigned,
                                      float, double, decimal, packed, zoned)
  -key=F[,descending] | -key=offset:O,size:N,TYPE[,ascending|descending]
  -memory=N[k|m|g]   -processes=N   -method=radix|merge   -touch   -statistics
  -in_file=PATH[,direct|buffered][,transfer_size=N][,count=N]      (repeatable; none: stdin)
  -out_file=PATH[,...same options][,preallocate]                   (none: stdout)
  -temp_file=DIR[,...same options]                                 (repeatable)
  -specification=FILE                 more directives from FILE ('#' comments)
-memory above the available memory is capped, -processes at the cores; transfer sizes and
counts of the input drive the reader, and a temp transfer size bounds the merge's read
blocks; the rest is accepted and noted. Nothing is printed on success without
-statistics.
";

/// `oxsort nsort`: everything after the subcommand is nsort's.
#[derive(clap::Args, Debug)]
pub struct NsortArgs {
    /// nsort directives: -format= -field= -key= -memory= -processes= -method= -touch
    /// -statistics -in_file= -out_file= -temp_file= -specification= (unique prefixes allowed,
    /// blanks around '=' allowed).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..,
        value_name = "DIRECTIVE"
    )]
    pub args: Vec<String>,
}

/// The engine configuration an nsort command line maps to, with the notes (printed with
/// `-statistics`) on what oxsort did with directives it accepts but does not follow to the
/// letter.
struct Mapped {
    cfg: SortConfig,
    notes: Vec<String>,
    layout: RecordLayout,
}

/// Runs `oxsort nsort`; returns the exit status.
pub fn run(args: NsortArgs) -> Result<i32> {
    if matches!(args.args.as_slice(), [h] if h == "--help" || h == "-h" || h == "-help") {
        print!("{USAGE}");
        return Ok(0);
    }
    oxsort_io::cleanup::install_signal_handlers();
    let cmd = parse_nsort_with(&args.args, |path| {
        std::fs::read_to_string(path).map_err(|e| e.to_string())
    })
    .map_err(|e| anyhow!("{}", located(&e, &args.args)))?;
    let m = map(&cmd)?;
    let stats = sort(&m.cfg)?;
    if cmd.statistics {
        let text = statistics(&cmd, &m, &stats);
        // Statistics go to stdout unless the records do.
        if matches!(m.cfg.output(), Output::Stdout) {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    }
    Ok(0)
}

/// A parse error with the argument it is in quoted: `argument 3 '-format=size:0', column 13:
/// ...`. Errors in specification files already name the file.
fn located(e: &ParseError, args: &[String]) -> String {
    match &e.location {
        Location::Argument { index, column } if (1..=args.len()).contains(index) => format!(
            "nsort argument {index} '{}', column {column}: {}",
            args[index - 1],
            e.message()
        ),
        _ => e.to_string(),
    }
}

fn map(cmd: &NsortCommand) -> Result<Mapped> {
    let mut notes = Vec::new();
    let inputs: Vec<Input> = if cmd.inputs.is_empty() {
        vec![Input::Stdin]
    } else {
        cmd.inputs
            .iter()
            .map(|f| if f.path == "-" { Input::Stdin } else { Input::Path(PathBuf::from(&f.path)) })
            .collect()
    };
    let output = match &cmd.output {
        Some(f) if f.path != "-" => Output::Path(PathBuf::from(&f.path)),
        _ => Output::Stdout,
    };
    let files: Vec<&NsortFile> =
        cmd.inputs.iter().chain(cmd.output.iter()).chain(cmd.temps.iter()).collect();
    let asks_buffered = files.iter().any(|f| f.direct == Some(false));
    if asks_buffered && files.iter().any(|f| f.direct == Some(true)) {
        notes.push(
            "some files ask for direct and some for buffered I/O; oxsort uses one mode for \
             every file: buffered"
                .into(),
        );
    }
    let layout = cmd.layout.unwrap_or(RecordLayout::BENCHMARK);
    let spec = SortSpec { layout, key: Some(cmd.key.clone()), ..SortSpec::default() };
    let mut b = SortConfig::builder(inputs, output)
        .spec(spec)
        .io(IoOptions { buffered: asks_buffered, ..IoOptions::default() });

    // More memory than the machine has is capped by the engine, with a note.
    if let Some(asked) = cmd.memory {
        b = b.memory(asked);
    }
    if let Some(p) = cmd.processes {
        let cores = oxsort_engine::cores();
        let used = (p.max(1) as usize).min(cores);
        if used < p as usize {
            notes.push(format!(
                "-processes={p}: this machine has {cores} core{}, so {used} thread{} ran",
                plural(cores),
                plural(used)
            ));
        }
        b = b.threads(used);
    }
    for t in &cmd.temps {
        b = b.temp_dir(PathBuf::from(&t.path));
    }
    if let Some(method) = cmd.method {
        notes.push(format!(
            "-method={}: accepted; oxsort picks its own in-memory sort (radix on key prefixes)",
            match method {
                NsortMethod::Radix => "radix",
                NsortMethod::Merge => "merge",
            }
        ));
    }
    if cmd.touch {
        notes.push("-touch: accepted; oxsort faults its buffers in as it fills them".into());
    }
    // Input transfer size and count drive the reader; the temp files' transfer size bounds
    // the merge's read blocks. The output's are noted: oxsort writes parts as they are built.
    if let Some(t) = cmd.inputs.iter().find_map(|f| f.transfer_size) {
        let t = t.clamp(4096, 1 << 30) as usize;
        b = b.transfer_size(t);
    }
    if let Some(c) = cmd.inputs.iter().find_map(|f| f.count) {
        let used = (c as usize).clamp(1, 64);
        if used != c as usize {
            notes.push(format!("in_file count={c}: {used} transfers in flight (oxsort's limit)"));
        }
        b = b.read_depth(used);
    }
    if let Some(t) = cmd.temps.iter().find_map(|f| f.transfer_size) {
        b = b.merge_block(t.clamp(4096, 1 << 30) as usize);
    }
    let asked: Vec<String> = cmd
        .output
        .iter()
        .filter(|f| f.transfer_size.is_some() || f.count.is_some())
        .chain(cmd.temps.iter().filter(|f| f.count.is_some()))
        .map(|f| {
            let mut s = f.path.clone();
            if let Some(t) = f.transfer_size {
                let _ = write!(s, " transfer_size={}", human_bytes(t));
            }
            if let Some(c) = f.count {
                let _ = write!(s, " count={c}");
            }
            s
        })
        .collect();
    if !asked.is_empty() {
        notes.push(format!(
            "output and temp write options accepted; oxsort writes each part or merge block as \
             one transfer as soon as it is ready: {}",
            asked.join("; ")
        ));
    }
    if files.iter().any(|f| f.preallocate) {
        notes.push("preallocate: oxsort always preallocates its output and temp files".into());
    }
    let cfg = b.build()?;
    notes.extend(cfg.notes().iter().map(|n| format!("-memory: {n}")));
    Ok(Mapped { cfg, notes, layout })
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The key in DFSORT's `p,l,f,o` notation (columns as `column F[.C]`).
fn describe_key(key: &KeySpec) -> String {
    let fields: Vec<String> = key
        .fields
        .iter()
        .map(|f| {
            let order = if f.descending { 'D' } else { 'A' };
            match f.loc {
                FieldLoc::Bytes { offset, len } => {
                    format!("{},{len},{},{order}", offset + 1, f.kind.name())
                }
                FieldLoc::Columns(_) => format!("(delimited column),{},{order}", f.kind.name()),
            }
        })
        .collect();
    fields.join(",")
}

/// The files of one phase as reported: inputs and the output as they are, the run files of
/// each temp directory summed into one line (nsort reports a temp file per directory). A
/// directory's busy time is its files' busy times summed, at most the phase's elapsed time
/// (reads of runs overlap in a merge).
fn group_temp_files(files: &[FileStats], elapsed_s: f64) -> Vec<FileStats> {
    let mut out: Vec<FileStats> = Vec::new();
    let mut temps: Vec<(String, FileStats, usize)> = Vec::new();
    for f in files {
        let Some(dir) = &f.temp_dir else {
            out.push(f.clone());
            continue;
        };
        match temps.iter_mut().find(|(d, t, _)| d == dir && t.direction == f.direction) {
            Some((_, t, n)) => {
                t.bytes += f.bytes;
                t.transfers += f.transfers;
                t.busy_s += f.busy_s;
                *n += 1;
            }
            None => temps.push((dir.clone(), f.clone(), 1)),
        }
    }
    for (dir, mut t, n) in temps {
        t.path = format!("{dir} (temp, {n} file{})", plural(n));
        t.busy_s = t.busy_s.min(elapsed_s);
        out.push(t);
    }
    out
}

/// Width of the file column in the statistics.
const FILE_COLUMN: usize = 40;

/// The `-statistics` report: per phase elapsed time, I/O busy time, CPU, and per file MB/sec,
/// transfers, bytes and records; then the whole run. It is organised as nsort's report is
/// (phases, the files of each phase) but not matched to it column for column; the header says
/// the numbers are oxsort's.
fn statistics(cmd: &NsortCommand, m: &Mapped, stats: &SortStats) -> String {
    let mut s = String::new();
    let record_size = m.layout.fixed_size();
    let _ = writeln!(
        s,
        "oxsort nsort -statistics: the run, each phase, each file (oxsort's own measurements)"
    );
    let layout = match m.layout {
        RecordLayout::Fixed(n) => format!("fixed {n}-byte records"),
        RecordLayout::Delimited(b'\n') => "newline-terminated records".into(),
        RecordLayout::Delimited(t) => format!("records ending in byte 0x{t:02x}"),
        other => other.describe(),
    };
    let _ = writeln!(
        s,
        "  Records:      {} read, {} written ({layout})",
        stats.records, stats.records_written
    );
    let _ = writeln!(s, "  Key:          {}", describe_key(&cmd.key));
    let asked = cmd.memory.map(|a| format!(", -memory={} asked", human_bytes(a)));
    let _ = writeln!(
        s,
        "  Memory:       {} budget{}, peak resident {}",
        human_bytes(stats.memory_budget),
        asked.unwrap_or_default(),
        human_bytes(stats.peak_rss)
    );
    let asked = cmd.processes.map(|p| format!(", -processes={p} asked"));
    let _ = writeln!(
        s,
        "  Threads:      {}{} ({} core{} here)",
        stats.threads,
        asked.unwrap_or_default(),
        oxsort_engine::cores(),
        plural(oxsort_engine::cores())
    );
    if stats.passes > 1 {
        let _ = writeln!(
            s,
            "  Passes:       {} ({} runs, fan-in {}, {} merge level{}, {} spilled)",
            stats.passes,
            stats.runs,
            stats.fan_in,
            stats.merge_levels,
            plural(stats.merge_levels as usize),
            human_bytes(stats.bytes_spilled)
        );
    } else {
        let _ = writeln!(s, "  Passes:       1");
    }
    let io = if m.cfg.io().buffered { "buffered" } else { "direct where the filesystem allows" };
    let _ = writeln!(s, "  I/O:          {io}");
    let _ = writeln!(
        s,
        "  Input:        {} transfers, {} in flight",
        human_bytes(m.cfg.transfer_size() as u64),
        m.cfg.read_depth()
    );
    // The plan's notes after the mapping's (the budget's note is the mapping's already).
    let plan_notes = stats.notes.iter().filter(|n| !m.cfg.notes().contains(n));
    for n in m.notes.iter().chain(plan_notes) {
        let _ = writeln!(s, "  Note:         {n}");
    }

    let (mut user, mut sys) = (0.0, 0.0);
    for p in &stats.phases {
        user += p.user_s;
        sys += p.sys_s;
        let title = match p.name {
            "input" => "Input phase".to_string(),
            "output" => "Output phase".to_string(),
            "merge" => "Merge phase (merges the runs into the output)".to_string(),
            other => format!("{other} phase"),
        };
        let files = group_temp_files(&p.files, p.elapsed_s);
        let busy = files.iter().map(|f| f.busy_s).fold(0.0, f64::max);
        let _ = writeln!(s);
        let _ = writeln!(s, "{title}");
        let _ = writeln!(s, "  Elapsed:      {:>10.3} s", p.elapsed_s);
        let _ = writeln!(s, "  I/O busy:     {busy:>10.3} s (busiest file)");
        let _ = writeln!(s, "  CPU user:     {:>10.3} s", p.user_s);
        let _ = writeln!(s, "  CPU sys:      {:>10.3} s", p.sys_s);
        let _ = writeln!(s, "  {:<10} {:>10} {:>10} {:>7}", "Thread", "User", "Sys", "Busy");
        for t in &p.threads {
            let busy =
                if p.elapsed_s > 0.0 { 100.0 * (t.user_s + t.sys_s) / p.elapsed_s } else { 0.0 };
            let _ = writeln!(
                s,
                "  {:<10} {:>8.3} s {:>8.3} s {:>6.1}%",
                t.name, t.user_s, t.sys_s, busy
            );
        }
        let _ = writeln!(
            s,
            "  {:<FILE_COLUMN$} {:<5} {:>9} {:>10} {:>15} {:>13}",
            "File", "I/O", "MB/sec", "Transfers", "Bytes", "Records"
        );
        for f in &files {
            let records = match record_size {
                Some(n) => (f.bytes / n as u64).to_string(),
                None => "-".into(),
            };
            let _ = writeln!(
                s,
                "  {:<FILE_COLUMN$} {:<5} {:>9.1} {:>10} {:>15} {:>13}",
                f.path,
                f.direction,
                f.mb_per_s(),
                f.transfers,
                f.bytes,
                records
            );
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "Overall");
    let _ = writeln!(s, "  Elapsed:      {:>10.3} s", stats.elapsed_s);
    let _ = writeln!(s, "  CPU user:     {user:>10.3} s");
    let _ = writeln!(s, "  CPU sys:      {sys:>10.3} s");
    let rate = if stats.elapsed_s > 0.0 { stats.bytes as f64 / 1e6 / stats.elapsed_s } else { 0.0 };
    let _ = writeln!(s, "  Bytes:        {:>10} ({rate:.1} MB/sec sorted)", stats.bytes);
    let _ = writeln!(s, "  Checksum:     {:>10}", stats.checksum);
    s
}

//! `oxsort gnu ARGS...` and the `sort` link: GNU sort's command line, messages and exit
//! status, on oxsort's engine.
//!
//! ```text
//!  argv ─► GnuArgs (getopt_long) ─► GnuOptions (keys, locale) ─► KeySpec ─┬─► engine sort ─► out
//!                                                                      ├─► check (-c, -C)
//!                                                                      └─► debug annotations
//! ```
//!
//! Exit status as GNU's: 0, 1 for disorder under `-c`/`-C`, 2 for any trouble. `-m` sorts the
//! concatenated inputs stably, which for sorted inputs is exactly their merge.

mod check;
mod debug;
mod msg;
pub mod osname;

use std::io::{Read, Write};
use std::path::PathBuf;

use oxsort_engine::{EngineError, Input, Output, SortConfig};
use oxsort_format::{KeySpec, RecordLayout, SortSpec};
use oxsort_lang::{GnuArgs as Args, GnuCheck as Check, GnuEnv, GnuOptions};

use msg::{quote, quoteaf, quotef, Fail};

/// Runs GNU sort's command line (the arguments after the program name); returns the exit
/// status.
pub fn main(argv: Vec<String>) -> i32 {
    // GNU sort dies quietly when a reader closes the pipe (after removing its temp files, see
    // `sort`), unless it was started with SIGPIPE ignored: then the write error is reported.
    if !oxsort_io::cleanup::sigpipe_ignored_at_start() {
        oxsort_locale::sys::default_sigpipe();
    }
    // From the first temp file on, SIGPIPE (and SIGINT, SIGTERM, SIGHUP) remove the temp
    // files before they end the process; before it, they have nothing to remove.
    oxsort_io::cleanup::install_signal_handlers_when_needed();
    let locale = oxsort_locale::Locale::from_env();
    msg::set_utf8(locale.utf8);
    if locale.collates() {
        oxsort_format::set_collator(oxsort_locale::xfrm);
        oxsort_format::set_collator_start(oxsort_locale::xfrm_start);
        oxsort_format::set_primary_weights(oxsort_locale::primary_weight);
    }
    if let Some(months) = &locale.months {
        oxsort_format::set_month_names(months);
    }
    match run(&argv, &locale) {
        Ok(code) => code,
        Err(f) => f.report(),
    }
}

/// What the command line depends on outside itself, read from this process.
fn process_env() -> GnuEnv {
    GnuEnv {
        posixly_correct: std::env::var_os("POSIXLY_CORRECT").is_some(),
        posix2_version: std::env::var("_POSIX2_VERSION")
            .ok()
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(200_809),
        open_file_limit: oxsort_locale::sys::open_file_limit(),
        physical_memory: oxsort_locale::sys::physical_memory(),
    }
}

fn run(argv: &[String], locale: &oxsort_locale::Locale) -> Result<i32, Fail> {
    let mut a = Args::parse(argv, &process_env())?;
    if a.help {
        print!("{}", msg::help());
        return Ok(0);
    }
    if a.version {
        println!("sort (oxsort) {}", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    if let Some(from) = a.files0_from.clone() {
        a.files = files0_from(&from, &a.files)?;
    }
    let mut opts = GnuOptions {
        keys: a.keys.clone(),
        global: a.global,
        separator: a.separator,
        stable: a.stable,
        unique: a.unique,
        collate: locale.collates(),
        decimal_point: locale.decimal_point,
        thousands_sep: locale.thousands_sep,
        seed: [0, 0],
    };
    opts.check().map_err(msg::key_fail)?;
    if a.debug {
        if let Some(c) = a.check {
            let c = if c == Check::Quiet { 'C' } else { 'c' };
            return Err(Fail::plain(format!("options '-{c} --debug' are incompatible")));
        }
        if a.output.is_some() {
            return Err(Fail::plain("options '-o --debug' are incompatible"));
        }
        debug::warnings(&opts, locale);
    }
    if opts.effective_keys().0.iter().any(|k| k.random) {
        opts.seed = seed(a.random_source.as_deref())?;
    }
    if a.files.is_empty() {
        a.files.push("-".to_string());
    }
    let spec = opts.key_spec();
    let eol = if a.zero { 0 } else { b'\n' };

    if let Some(mode) = a.check {
        if a.files.len() > 1 {
            let c = if mode == Check::Quiet { 'C' } else { 'c' };
            return Err(Fail::plain(format!(
                "extra operand {} not allowed with -{c}",
                quoteaf(&a.files[1])
            )));
        }
        if a.output.is_some() {
            let c = if mode == Check::Quiet { 'C' } else { 'c' };
            return Err(Fail::plain(format!("options '-{c}o' are incompatible")));
        }
        let plain = plain_order(&a);
        let spec = if plain { None } else { Some(&spec) };
        return check::check(&a.files[0], spec, eol, a.unique, mode == Check::Diagnose);
    }

    check_inputs(&a.files)?;
    if let Some(out) = &a.output {
        check_output(out)?;
    }
    if a.debug {
        let data = sort_to_memory(&a, &spec, eol)?;
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        debug::annotate(&data, eol, &opts, locale.utf8, &mut out)
            .and_then(|()| out.flush())
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::BrokenPipe
                    && !oxsort_io::cleanup::sigpipe_ignored_at_start()
                {
                    oxsort_io::cleanup::die_of_broken_pipe();
                }
                Fail::io("write failed", "standard output", &e)
            })?;
        return Ok(0);
    }
    let output = match &a.output {
        Some(o) if is_regular(o) => Output::Path(osname::path(o)),
        // A device or pipe cannot be renamed over: write it as standard output, as GNU does.
        Some(o) => {
            redirect_stdout(o)?;
            Output::Stdout
        }
        None => Output::Stdout,
    };
    sort(&a, &spec, eol, output)?;
    Ok(0)
}

/// Bytes of the pipe the sorted lines of `--debug` come back through.
const DEBUG_PIPE_BYTES: usize = 1 << 16;

/// `--debug`: the sorted lines, in memory for their annotations. The sort writes them as its
/// standard output into a pipe that a thread reads whole: no temp file, so the temp directory
/// is looked at only when the sort itself needs one, as without `--debug` (and GNU's).
fn sort_to_memory(a: &Args, spec: &KeySpec, eol: u8) -> Result<Vec<u8>, Fail> {
    use std::os::fd::AsFd;
    let fail =
        |e: std::io::Error| Fail::plain(format!("cannot create pipe: {}", msg::errno_text(&e)));
    let stdout = std::io::stdout().as_fd().try_clone_to_owned().map_err(fail)?;
    let (rx, tx) = oxsort_io::sized_pipe(DEBUG_PIPE_BYTES).map_err(fail)?;
    oxsort_locale::sys::redirect_stdout(&std::fs::File::from(tx)).map_err(fail)?;
    let reader = std::thread::Builder::new().name("oxsort-debug".into()).spawn(move || {
        let mut data = Vec::new();
        std::fs::File::from(rx).read_to_end(&mut data).map(|_| data)
    });
    let sorted = match &reader {
        Ok(_) => sort(a, spec, eol, Output::Stdout),
        Err(_) => Ok(()),
    };
    // Standard output back: the pipe's last writer closes, and the thread reads to its end.
    let restored = std::io::stdout()
        .flush()
        .and_then(|()| oxsort_locale::sys::redirect_stdout(&std::fs::File::from(stdout)));
    // (Not restored, the pipe stays open: the thread is left to end with the process.)
    restored.map_err(|e| Fail::io("write failed", "standard output", &e))?;
    let data = reader.map_err(fail)?.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
    sorted?;
    data.map_err(|e| Fail::io("read failed", "-", &e))
}

/// GNU's `check_inputs`: every named input must be readable before anything is sorted.
fn check_inputs(files: &[String]) -> Result<(), Fail> {
    for f in files {
        if f == "-" {
            continue;
        }
        oxsort_locale::sys::readable(&osname::path(f))
            .map_err(|e| Fail::io("cannot read", f, &e))?;
        if std::fs::metadata(osname::path(f)).map(|m| m.is_dir()).unwrap_or(false) {
            return Err(Fail::io(
                "read failed",
                f,
                &std::io::Error::from_raw_os_error(libc::EISDIR),
            ));
        }
    }
    Ok(())
}

/// GNU's `check_output`: the output must open for writing (created if missing) first.
fn check_output(out: &str) -> Result<(), Fail> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(osname::path(out))
        .map(drop)
        .map_err(|e| Fail::io("open failed", out, &e))
}

/// Whether `path` is a regular file (or does not exist yet).
fn is_regular(path: &str) -> bool {
    std::fs::metadata(osname::path(path)).map(|m| m.is_file()).unwrap_or(true)
}

/// Makes `path` the process's standard output.
fn redirect_stdout(path: &str) -> Result<(), Fail> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(osname::path(path))
        .map_err(|e| Fail::io("open failed", path, &e))?;
    oxsort_locale::sys::redirect_stdout(&f).map_err(|e| Fail::io("open failed", path, &e))
}

/// `--files0-from F`: NUL-terminated names.
fn files0_from(from: &str, operands: &[String]) -> Result<Vec<String>, Fail> {
    if let Some(first) = operands.first() {
        return Err(Fail::usage(format!(
            "extra operand {}\nfile operands cannot be combined with --files0-from",
            quoteaf(first)
        )));
    }
    let mut data = Vec::new();
    let read = if from == "-" {
        std::io::stdin().lock().read_to_end(&mut data)
    } else {
        std::fs::File::open(osname::path(from))
            .map_err(|e| Fail::io("open failed", from, &e))?
            .read_to_end(&mut data)
    };
    read.map_err(|_| Fail::plain(format!("cannot read file names from {}", quoteaf(from))))?;
    if data.last().is_some_and(|&b| b != 0) {
        data.push(0);
    }
    let names: Vec<String> = data
        .split(|&b| b == 0)
        .take(data.iter().filter(|&&b| b == 0).count())
        .map(|n| osname::encode(std::os::unix::ffi::OsStrExt::from_bytes(n)))
        .collect();
    if names.is_empty() {
        return Err(Fail::plain(format!("no input from {}", quoteaf(from))));
    }
    for (i, n) in names.iter().enumerate() {
        if n == "-" {
            return Err(Fail::plain(format!(
                "when reading file names from stdin, no file name of {} allowed",
                quoteaf(n)
            )));
        }
        if n.is_empty() {
            return Err(Fail::plain(format!(
                "{}:{}: invalid zero-length file name",
                quotef(from),
                i + 1
            )));
        }
    }
    Ok(names)
}

/// The `-R` hash key: from `--random-source` (its first 16 bytes), else the system's
/// randomness.
fn seed(source: Option<&str>) -> Result<[u64; 2], Fail> {
    let mut buf = [0u8; 16];
    let path = source.unwrap_or("/dev/urandom");
    let mut f =
        std::fs::File::open(osname::path(path)).map_err(|e| Fail::io("open failed", path, &e))?;
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => return Err(Fail::plain(format!("{}: end of file", quote(path)))),
            Ok(k) => n += k,
            // gnulib's randread words it so.
            Err(e) => {
                return Err(Fail::plain(format!(
                    "{}: read error: {}",
                    quote(path),
                    msg::errno_text(&e)
                )))
            }
        }
    }
    let lo = u64::from_le_bytes(buf[..8].try_into().unwrap_or([0; 8]));
    let hi = u64::from_le_bytes(buf[8..].try_into().unwrap_or([0; 8]));
    Ok([lo, hi])
}

/// The first temp directory: `-T`, else `$TMPDIR`, else `/tmp`.
fn temp_dir_of(a: &Args) -> PathBuf {
    a.temp_dirs
        .first()
        .map(|d| osname::path(d))
        .or_else(|| std::env::var_os("TMPDIR").filter(|t| !t.is_empty()).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// The one place a GNU command line becomes an engine configuration.
fn engine_config(
    a: &Args,
    spec: Option<&KeySpec>,
    eol: u8,
    output: Output,
    memory: Option<u64>,
) -> Result<SortConfig, EngineError> {
    let inputs = a
        .files
        .iter()
        .map(|f| if f == "-" { Input::Stdin } else { Input::Path(osname::path(f)) })
        .collect();
    let layout = if eol == 0 { RecordLayout::NUL } else { RecordLayout::LINES };
    let what = SortSpec { key: spec.cloned(), unique: a.unique, ..SortSpec::with_layout(layout) };
    // Small inputs are sorted in this thread, as GNU sort sorts them: scripts call it in loops.
    let mut b = SortConfig::builder(inputs, output).spec(what).small_inputs(true);
    if let Some(m) = memory {
        b = b.memory(m);
    }
    if let Some(t) = a.parallel {
        b = b.threads(t.min(oxsort_engine::cores().max(1) * 4));
    }
    if let Some(n) = a.batch_size {
        b = b.max_fan_in(n);
    }
    if a.temp_dirs.is_empty() {
        b = b.temp_dir(temp_dir_of(a));
    }
    for d in &a.temp_dirs {
        b = b.temp_dir(osname::path(d));
    }
    b.build()
}

/// Whether the order is whole lines as bytes, ascending (no key, no ordering option, C
/// collation): the engine's own order for lines, its fast path.
fn plain_order(a: &Args) -> bool {
    a.keys.is_empty() && a.global.is_default() && !a.global.reverse && !oxsort_format::collating()
}

/// The least `-S` oxsort uses: smaller budgets only make the engine plan tiny chunks.
const MIN_BUFFER: u64 = 4 << 20;

/// Sorts (or merges) the inputs into `output`.
fn sort(a: &Args, spec: &KeySpec, eol: u8, output: Output) -> Result<(), Fail> {
    let engine = |e: EngineError| match e {
        EngineError::OutputClosed { path } => {
            let name = oxsort_io::cleanup::closed_output(&path);
            // Standard output's stream keeps the error: GNU's close at exit says it again.
            let again = if path.as_os_str() == "-" { "\nsort: write error" } else { "" };
            Fail::plain(format!("write failed: {}: Broken pipe{again}", quotef(&name)))
        }
        // A temp directory is checked when the first temp file is needed, in GNU's words.
        EngineError::Io(oxsort_io::IoError::Other { op, path, source })
            if op == oxsort_io::TEMP_DIR_CHECK =>
        {
            Fail::plain(format!(
                "cannot create temporary file in {}: {}",
                quoteaf(&path.to_string_lossy()),
                msg::errno_text(&source)
            ))
        }
        e => Fail::plain(e.to_string()),
    };
    // -S is a wish: below what the engine needs, it gets the least budget the engine reports
    // (which plans by construction), as GNU sort grows a buffer too small for a line.
    let memory = a.buffer_size.map(|m| m.max(MIN_BUFFER));
    let spec = if plain_order(a) { None } else { Some(spec) };
    let run = |memory| -> Result<(), EngineError> {
        oxsort_engine::sort(&engine_config(a, spec, eol, output.clone(), memory)?).map(drop)
    };
    match run(memory) {
        Err(EngineError::MemoryTooSmall { needed, .. }) if memory.is_some() => {
            run(Some(needed)).map_err(engine)
        }
        r => r.map_err(engine),
    }
}

/// GNU sort's `--help` text (for the man page).
pub fn help_text() -> String {
    msg::help()
}

/// The `sort` link's entry: whether this process was started as `sort`.
pub fn invoked_as_sort(argv0: &std::ffi::OsStr) -> bool {
    std::path::Path::new(argv0).file_name().is_some_and(|n| n == "sort")
}

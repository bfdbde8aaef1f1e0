//! Inputs are streams until proven regular files: a pipe named by a path (`<(cat f)`,
//! `/dev/stdin`), a named FIFO, a `/proc` or `/sys` file and `-` give every byte their producer
//! wrote, through `oxsort sort`, `oxsort gnu` and the `sort` link; nothing opens an input twice
//! or reads it before the sort; a file that changes between the plan and its read fails the
//! sort with nothing written. Closes with a seeded property test over input kinds x layouts.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{oxsort, stderr};
use oxsort_testkit::{seed, Rng};

/// How long a sort of a few MiB may take before it counts as hung (a FIFO opened twice blocks
/// forever).
const HANG: Duration = Duration::from_secs(60);

/// Waits for `child` at most [`HANG`], reading its piped outputs meanwhile; kills it and fails
/// the test if it does not finish.
fn finish(mut child: Child, what: &str) -> Output {
    use std::io::Read;
    fn drain(r: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    }
    let (out, err) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            let err = err.join().unwrap();
            panic!("{what}: hung for {HANG:?}; stderr: {}", String::from_utf8_lossy(&err));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// Runs `cmd` with `input` written to its standard input (a pipe) by another thread.
fn run_fed(mut cmd: Command, input: Vec<u8>, what: &str) -> Output {
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut w = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        // A reader that stops early makes this fail (EPIPE): the output comparison says more.
        let _ = w.write_all(&input);
    });
    finish(child, what)
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

/// Writes `data` into the FIFO `path` from another thread: one open (which waits for the
/// reader), then the bytes, then the close that ends the reader's input. The thread is left
/// to itself: when the sort never opens the FIFO it waits forever, and the test fails first.
fn feed_fifo(path: &Path, data: Vec<u8>) {
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&path) {
            let _ = f.write_all(&data);
        }
    });
}

/// Runs `cmd` to completion (at most [`HANG`]).
fn run(mut cmd: Command, what: &str) -> Output {
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    finish(child, what)
}

/// Stable whole-line byte order, the last line given its newline (as GNU `sort -s` writes).
fn sorted_lines(data: &[u8]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> =
        data.split_inclusive(|&b| b == b'\n').map(|l| l.to_vec()).collect();
    if let Some(last) = lines.last_mut() {
        if last.last() != Some(&b'\n') {
            last.push(b'\n');
        }
    }
    lines.sort_by(|a, b| a[..a.len() - 1].cmp(&b[..b.len() - 1]));
    lines.concat()
}

/// `n` random fixed records of `size` bytes (any byte value).
fn records(n: usize, size: usize, rng: &mut Rng) -> Vec<u8> {
    let mut v = vec![0u8; n * size];
    rng.fill(&mut v);
    v
}

/// `n` random text lines of 0..=`max` lowercase letters.
fn text_lines(n: usize, max: u64, rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..n {
        let len = rng.below(max + 1) as usize;
        out.extend((0..len).map(|_| b'a' + rng.below(26) as u8));
        out.push(b'\n');
    }
    out
}

/// Fixed records in whole-record byte order.
fn sorted_records(data: &[u8], size: usize) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks(size).collect();
    recs.sort();
    recs.concat()
}

/// The `sort` link to oxsort (GNU sort's command line), in `dir`.
fn sort_link(dir: &Path) -> PathBuf {
    let link = dir.join("sort");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_oxsort"), &link).unwrap();
    link
}

#[test]
fn a_pipe_named_by_its_path_gives_every_record() {
    // More than the 64 KiB a probe used to read first: 10,000 records of 128 bytes.
    let d = tempfile::tempdir().unwrap();
    let data = records(10_000, 128, &mut Rng::new(seed()));
    let file = d.path().join("r128.dat");
    std::fs::write(&file, &data).unwrap();
    let want = sorted_records(&data, 128);
    // `<(cat f)`: bash hands the sort /dev/fd/63, a pipe.
    let out = d.path().join("out");
    let mut cmd = Command::new("bash");
    cmd.args(["-c", r#"exec "$0" sort --record-size 128 --fields 1,128,CH,A <(cat "$1") -o "$2""#])
        .arg(env!("CARGO_BIN_EXE_oxsort"))
        .arg(&file)
        .arg(&out);
    let o = run(cmd, "<(cat f)");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("Records read: 10000,"), "{}", stderr(&o));
    assert!(std::fs::read(&out).unwrap() == want, "<(cat f): records lost");
    // `cat f | oxsort sort ... /dev/stdin`, with a binary key.
    let out2 = d.path().join("out2");
    let mut cmd = oxsort();
    cmd.args(["sort", "--record-size", "128", "--fields", "1,128,BI,A", "/dev/stdin", "-o"])
        .arg(&out2);
    let o = run_fed(cmd, data.clone(), "/dev/stdin");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&out2).unwrap() == want, "/dev/stdin: records lost");
}

#[test]
fn text_read_as_records_is_flagged_from_the_bytes_the_sort_reads() {
    // The warning comes from the first chunk read, so a pipe keeps its data and still gets it;
    // -q silences it.
    let text = "pear\napple\nfig\n".repeat(20_000).into_bytes();
    let mut want: Vec<&[u8]> = text.chunks(10).collect();
    want.sort_by(|a, b| a[..3].cmp(&b[..3]));
    let want = want.concat();
    for quiet in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        let mut cmd = oxsort();
        cmd.args(["sort", "--record-size", "10", "--fields", "1,3,CH,A", "/dev/stdin", "-o"])
            .arg(&out);
        if quiet {
            cmd.arg("-q");
        }
        let o = run_fed(cmd, text.clone(), "text on /dev/stdin");
        assert!(o.status.success(), "{}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(
            err.contains("/dev/stdin looks like text") && err.contains("add --lines"),
            !quiet,
            "quiet={quiet}: {err}"
        );
        assert!(std::fs::read(&out).unwrap() == want, "quiet={quiet}: records lost");
    }
    // Standard input itself is looked at too, named as such.
    let o = run_fed(
        {
            let mut c = oxsort();
            c.args(["sort", "--record-size", "10", "--fields", "1,3,CH,A"]);
            c
        },
        text.clone(),
        "text on -",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("standard input looks like text"), "{}", stderr(&o));
    assert!(o.stdout == want);
}

#[test]
fn a_named_fifo_is_opened_once_by_every_door() {
    // 1 MiB of lines: more than a pipe holds, so a writer whose reader closed early dies of
    // EPIPE, and a second open of the FIFO waits forever for a writer.
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(seed());
    let data = text_lines(60_000, 30, &mut rng);
    let want = sorted_lines(&data);
    let link = sort_link(d.path());
    let doors: [(&str, Vec<&str>); 3] = [
        ("oxsort sort", vec!["sort", "--lines", "--no-progress"]),
        ("oxsort gnu", vec!["gnu", "-s"]),
        ("the sort link", vec!["-s"]),
    ];
    for (i, (door, args)) in doors.iter().enumerate() {
        let fifo = d.path().join(format!("fifo{i}"));
        mkfifo(&fifo);
        feed_fifo(&fifo, data.clone());
        let mut cmd = if *door == "the sort link" { Command::new(&link) } else { oxsort() };
        cmd.args(args).arg(&fifo).env("LC_ALL", "C");
        let o = run(cmd, door);
        assert!(o.status.success(), "{door}: {}", stderr(&o));
        assert!(o.stdout == want, "{door}: {} of {} bytes", o.stdout.len(), want.len());
    }
}

#[test]
fn a_plan_never_opens_a_fifo() {
    // `explain` plans without reading: a FIFO no one writes to is named, not opened (an open
    // would wait for a writer forever).
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    mkfifo(&fifo);
    let mut cmd = oxsort();
    cmd.args(["explain", "--lines"]).arg(&fifo);
    let o = run(cmd, "explain FIFO");
    assert!(o.status.success(), "{}", stderr(&o));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(plan.contains("fifo (unknown size)"), "{plan}");
}

#[test]
fn proc_and_sys_files_are_read_to_their_end() {
    // /proc/self/environ is the sort's own environment, which the test sets: its stat size is
    // 0, its bytes are these NUL-terminated entries.
    // `A` comes before `A1` in the environment (by name), `A1=` before `A=` in byte order.
    let vars = [("ZED", "last"), ("A", "first"), ("MID", "middle"), ("A1", "second")];
    let mut want: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
    want.sort();
    let want: Vec<u8> = want.iter().flat_map(|e| e.bytes().chain([0])).collect();
    let mut cmd = oxsort();
    cmd.env_clear().envs(vars).args(["gnu", "-z", "/proc/self/environ"]);
    let o = run(cmd, "gnu /proc/self/environ");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&want));
    let mut cmd = oxsort();
    cmd.env_clear().envs(vars).args(["sort", "--nul", "/proc/self/environ"]);
    let o = run(cmd, "sort --nul /proc/self/environ");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&want));
    // `sort -c` reads it to its end too: out of order, so the check fails.
    let mut cmd = oxsort();
    cmd.env_clear().envs(vars).args(["gnu", "-z", "-c", "/proc/self/environ"]);
    let o = run(cmd, "gnu -c /proc/self/environ");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("disorder"), "{}", stderr(&o));
    // A sysfs attribute: stat says 4096 bytes, a read gives a short line.
    let sys = Path::new("/sys/devices/system/cpu/online");
    match std::fs::read(sys) {
        Ok(text) => {
            let mut cmd = oxsort();
            cmd.arg("gnu").arg(sys);
            let o = run(cmd, "gnu /sys/...");
            assert!(o.status.success(), "{}", stderr(&o));
            assert_eq!(o.stdout, sorted_lines(&text));
        }
        Err(e) => eprintln!("skipping the sysfs case: {} cannot be read ({e})", sys.display()),
    }
}

#[test]
fn a_file_changed_between_plan_and_read_fails_with_nothing_written() {
    // The sort reads a FIFO first: while it waits there the plan is made, and the file after
    // it is changed before the sort opens it. Truncated or grown, the sort fails, naming the
    // file and both lengths, and no output appears.
    let mut rng = Rng::new(seed());
    for (door, grow) in [("oxsort sort", false), ("oxsort sort", true), ("oxsort gnu", false)] {
        let d = tempfile::tempdir().unwrap();
        let data = text_lines(50_000, 20, &mut rng);
        let file = d.path().join("big.txt");
        std::fs::write(&file, &data).unwrap();
        let fifo = d.path().join("first");
        mkfifo(&fifo);
        let out = d.path().join("out");
        let mut cmd = oxsort();
        if door == "oxsort gnu" {
            // The planned sort (the small path plans nothing: it reads each input to its end
            // when it gets to it, as GNU sort does).
            cmd.env("OXSORT_SMALL_INPUT_BYTES", "0");
            cmd.args(["gnu", "-o"]).arg(&out);
        } else {
            cmd.args(["sort", "--lines", "-o"]).arg(&out);
        }
        cmd.arg(&fifo).arg(&file);
        let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        // The open for writing returns once the sort opened the FIFO to read it: planned.
        let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        if grow {
            let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
            f.write_all(b"one more line\n").unwrap();
        } else {
            std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(1000).unwrap();
        }
        w.write_all(b"from the fifo\n").unwrap();
        drop(w);
        let o = finish(child, door);
        let err = stderr(&o);
        assert!(!o.status.success(), "{door} grow={grow}: succeeded: {err}");
        let now = std::fs::metadata(&file).unwrap().len();
        assert!(
            err.contains("big.txt changed while it was read")
                && err.contains(&data.len().to_string())
                && err.contains(&now.to_string()),
            "{door} grow={grow}: {err}"
        );
        // GNU sort creates a missing output before it reads (and so does `oxsort gnu`): it
        // stays empty.
        let written = std::fs::metadata(&out).map(|m| m.len());
        match door {
            "oxsort gnu" => assert_eq!(written.ok(), Some(0), "{door}: output written"),
            _ => assert!(written.is_err(), "{door} grow={grow}: an output was written"),
        }
        assert_eq!(oxsort_testkit::leftovers(d.path()), Vec::<String>::new());
    }
}

/// How the property test hands the bytes to the sort.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A regular file.
    File,
    /// `<(cat f)`: a pipe named by `/dev/fd/N`.
    PipePath,
    /// A named FIFO.
    Fifo,
    /// `/dev/stdin`, a pipe.
    DevStdin,
    /// `-`, a pipe.
    Dash,
    /// `/proc/self/environ`: the sort's own environment, which the test sets.
    Proc,
}

/// The record layouts of the property test.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// `--record-size N`, the whole record as the key.
    Fixed(usize),
    /// `--record-size N --fields 1,4,FI,A`: a signed big-endian key, equal keys in input order.
    Typed(usize),
    /// `--lines`.
    Lines,
}

impl Layout {
    fn args(self) -> Vec<String> {
        match self {
            Layout::Fixed(n) => {
                vec![
                    "--record-size".into(),
                    n.to_string(),
                    "--fields".into(),
                    format!("1,{n},CH,A"),
                ]
            }
            Layout::Typed(n) => {
                vec!["--record-size".into(), n.to_string(), "--fields".into(), "1,4,FI,A".into()]
            }
            Layout::Lines => vec!["--lines".into()],
        }
    }

    /// The oracle: Rust's stable sort of the records the producer wrote.
    fn sort(self, data: &[u8]) -> Vec<u8> {
        match self {
            Layout::Fixed(n) => sorted_records(data, n),
            Layout::Typed(n) => {
                let mut recs: Vec<&[u8]> = data.chunks(n).collect();
                recs.sort_by_key(|r| i32::from_be_bytes(r[..4].try_into().unwrap()));
                recs.concat()
            }
            Layout::Lines => sorted_lines(data),
        }
    }
}

/// The environment for a [`Kind::Proc`] input, and the bytes `/proc/self/environ` then holds:
/// for fixed records, entries of exactly `n` bytes with their NUL (`K<4 letters><index>=...`);
/// for lines, entries whose values are lines (the NULs start the lines after them). The C
/// library passes the entries in the order given, which is by name here.
fn environ(layout: Layout, rng: &mut Rng) -> (Vec<(String, String)>, Vec<u8>) {
    let count = 1 + rng.below(40) as usize;
    let mut vars: Vec<(String, String)> = (0..count)
        .map(|i| {
            let mut name: String = (0..4).map(|_| (b'A' + rng.below(26) as u8) as char).collect();
            name += &format!("{i:03}");
            let value: String = match layout {
                Layout::Fixed(n) | Layout::Typed(n) => {
                    (0..n - name.len() - 2).map(|_| (b'a' + rng.below(26) as u8) as char).collect()
                }
                Layout::Lines => {
                    let lines = text_lines(1 + rng.below(4) as usize, 12, rng);
                    String::from_utf8(lines).unwrap()
                }
            };
            (name, value)
        })
        .collect();
    vars.sort();
    let bytes = vars.iter().flat_map(|(k, v)| format!("{k}={v}\0").into_bytes()).collect();
    (vars, bytes)
}

#[test]
fn every_input_kind_gives_the_sort_of_the_bytes_written() {
    let s = seed();
    eprintln!("inputs_cli property test: OXSORT_SEED={s}");
    let mut rng = Rng::new(s);
    let kinds = [Kind::File, Kind::PipePath, Kind::Fifo, Kind::DevStdin, Kind::Dash, Kind::Proc];
    for round in 0..2 {
        for kind in kinds {
            for layout in [
                Layout::Fixed(12 + rng.below(120) as usize),
                Layout::Typed(12 + rng.below(40) as usize),
                Layout::Lines,
            ] {
                let what = format!("seed {s} round {round}: {kind:?} x {layout:?}");
                let d = tempfile::tempdir().unwrap();
                // Sizes on both sides of the 64 KiB a probe once read, and of a pipe's buffer.
                let big = rng.below(2) == 1;
                let (env, data) = match (kind, layout) {
                    (Kind::Proc, _) => {
                        let (env, bytes) = environ(layout, &mut rng);
                        (Some(env), bytes)
                    }
                    (_, Layout::Fixed(n) | Layout::Typed(n)) => {
                        let count = if big { 200_000 / n } else { rng.below(500) as usize };
                        (None, records(count, n, &mut rng))
                    }
                    (_, Layout::Lines) => {
                        let count = if big { 20_000 } else { rng.below(300) as usize };
                        let mut t = text_lines(count, 20, &mut rng);
                        if rng.below(2) == 1 {
                            t.pop(); // the last line without its newline
                        }
                        (None, t)
                    }
                };
                let out = d.path().join("out");
                let file = d.path().join("in");
                std::fs::write(&file, &data).unwrap();
                let mut args: Vec<String> = vec!["sort".into(), "-q".into()];
                args.extend(layout.args());
                args.extend(["-o".into(), out.display().to_string()]);
                let o = match kind {
                    Kind::File | Kind::Proc => {
                        let mut cmd = oxsort();
                        cmd.args(&args);
                        if let Some(env) = &env {
                            cmd.env_clear().envs(env.iter().cloned()).arg("/proc/self/environ");
                        } else {
                            cmd.arg(&file);
                        }
                        run(cmd, &what)
                    }
                    Kind::PipePath => {
                        let mut cmd = Command::new("bash");
                        cmd.args(["-c", r#"f=$1; shift; exec "$@" <(cat "$f")"#, "bash"])
                            .arg(&file)
                            .arg(env!("CARGO_BIN_EXE_oxsort"))
                            .args(&args);
                        run(cmd, &what)
                    }
                    Kind::Fifo => {
                        let fifo = d.path().join("fifo");
                        mkfifo(&fifo);
                        feed_fifo(&fifo, data.clone());
                        let mut cmd = oxsort();
                        cmd.args(&args).arg(&fifo);
                        run(cmd, &what)
                    }
                    Kind::DevStdin | Kind::Dash => {
                        let mut cmd = oxsort();
                        cmd.args(&args).arg(if matches!(kind, Kind::Dash) {
                            "-"
                        } else {
                            "/dev/stdin"
                        });
                        run_fed(cmd, data.clone(), &what)
                    }
                };
                assert!(o.status.success(), "{what}: {}", stderr(&o));
                let got = std::fs::read(&out).unwrap();
                let want = layout.sort(&data);
                assert!(
                    got == want,
                    "{what}: {} bytes written, {} expected ({} input bytes)",
                    got.len(),
                    want.len(),
                    data.len()
                );
            }
        }
    }
}

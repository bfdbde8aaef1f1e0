//! The `sort` link's habits against the system's GNU sort (`/usr/bin/sort`): temp directories
//! checked only when a temp file is needed (`TMPDIR`, `-T`), with GNU's message and status;
//! SIGINT and SIGPIPE left ignored when the parent ignored them; and the small-input path
//! (sorting in the calling thread) against the planned sort and against GNU sort, on both
//! sides of its limit, from files and from streams that turn out bigger than it.
//!
//! Both programs run as `sort` (found through `PATH`), so their messages start alike. Skipped,
//! saying so, when `/usr/bin/sort` is not GNU sort.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{gnu_sort_available, GNU_SORT};

/// A directory holding a `sort` link to oxsort and one holding a `sort` link to GNU sort.
struct Sorts {
    _dir: tempfile::TempDir,
    ours: PathBuf,
    gnu: PathBuf,
    /// Scratch files.
    work: PathBuf,
}

impl Sorts {
    fn new() -> Option<Sorts> {
        if !gnu_sort_available() {
            eprintln!("skipped: {GNU_SORT} is not GNU sort");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours");
        let gnu = dir.path().join("gnu");
        let work = dir.path().join("work");
        for d in [&ours, &gnu, &work] {
            std::fs::create_dir(d).unwrap();
        }
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_oxsort"), ours.join("sort")).unwrap();
        std::os::unix::fs::symlink(GNU_SORT, gnu.join("sort")).unwrap();
        Some(Sorts { _dir: dir, ours, gnu, work })
    }

    /// `sort ARGS` from `bin`, in the C locale, in the scratch directory.
    fn cmd(&self, bin: &Path, args: &[&str]) -> Command {
        let mut c = Command::new("sort");
        c.env_clear()
            .env("PATH", bin)
            .env("LC_ALL", "C")
            .current_dir(&self.work)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs `sort ARGS` (with `env` added) from `bin` on `input` as standard input.
    fn run_in(&self, bin: &Path, args: &[&str], env: &[(&str, &str)], input: &[u8]) -> Output {
        let mut c = self.cmd(bin, args);
        c.envs(env.iter().copied());
        let mut child = c.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_vec();
        // Written from a thread: a sort that fails early stops reading.
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let out = child.wait_with_output().unwrap();
        feeder.join().unwrap();
        out
    }

    /// Both sorts on the same call: their status, standard output and standard error.
    fn both(&self, args: &[&str], env: &[(&str, &str)], input: &[u8]) -> (Output, Output) {
        (self.run_in(&self.ours, args, env, input), self.run_in(&self.gnu, args, env, input))
    }

    fn file(&self, name: &str, data: &[u8]) -> String {
        std::fs::write(self.work.join(name), data).unwrap();
        name.to_string()
    }
}

/// Asserts that two runs are byte for byte the same (status, output, messages).
#[track_caller]
fn assert_same(ours: &Output, gnu: &Output, what: &str) {
    assert_eq!(
        String::from_utf8_lossy(&ours.stderr),
        String::from_utf8_lossy(&gnu.stderr),
        "{what}: messages"
    );
    assert_eq!(ours.status.code(), gnu.status.code(), "{what}: status");
    assert!(ours.stdout == gnu.stdout, "{what}: output differs");
}

/// `n` lines of numbers in a scrambled order (several megabytes for big `n`).
fn numbers(n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let v = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
        out.extend_from_slice(format!("{v} line {i}\n").as_bytes());
    }
    out
}

/// A call: its arguments, its environment added, its standard input, what it is.
type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a [u8], &'a str);

#[test]
fn a_missing_temp_directory_fails_only_the_sorts_that_need_a_temp_file() {
    let Some(s) = Sorts::new() else { return };
    let small = b"b\na\nc\n";
    let big = numbers(150_000); // 3 MB: -S 1M needs temp files.
    let f = s.file("big.txt", &big);
    let missing = "/nonexistent-oxsort-temp";
    let cases: Vec<Case> = vec![
        (vec![], vec![("TMPDIR", missing)], small, "small input, TMPDIR missing"),
        (vec!["-T", missing], vec![], small, "small input, -T missing"),
        (vec!["-S", "1M"], vec![("TMPDIR", missing)], &big, "spilling stream, TMPDIR missing"),
        (vec!["-S", "1M", "-T", missing], vec![], &big, "spilling stream, -T missing"),
        (vec!["-S", "1M", "-T", missing, &f], vec![], b"", "spilling file, -T missing"),
        (vec!["-S", "1M", &f], vec![("TMPDIR", missing)], b"", "spilling file, TMPDIR missing"),
        (vec!["--debug"], vec![("TMPDIR", missing)], small, "--debug, TMPDIR missing"),
        (vec!["--debug", "-k1,1", "-T", missing], vec![], small, "--debug, -T missing"),
        (vec!["--debug", "-S", "1M", "-T", missing], vec![], &big, "--debug spilling, -T missing"),
    ];
    for (args, env, input, what) in cases {
        let (ours, gnu) = s.both(&args, &env, input);
        assert_same(&ours, &gnu, what);
    }
    // GNU sort spills a stream past about 900 KB whatever its budget; oxsort holds it in
    // memory (within its budget) on the small path and past it, so needs no temp directory:
    // its output is GNU's with a temp directory.
    for lines in [150_000, 400_000] {
        let input = numbers(lines);
        let gnu = s.run_in(&s.gnu, &["-n"], &[], &input);
        let ours = s.run_in(&s.ours, &["-n"], &[("TMPDIR", missing)], &input);
        assert_same(&ours, &gnu, &format!("{} bytes in memory, TMPDIR missing", input.len()));
    }
    // The case the messages are about did fail, as GNU words it.
    let (ours, _) = s.both(&["-S", "1M", "-T", missing], &[], &big);
    assert_eq!(
        String::from_utf8_lossy(&ours.stderr),
        format!("sort: cannot create temporary file in '{missing}': No such file or directory\n")
    );
    assert_eq!(ours.status.code(), Some(2));
    // Nothing left behind in the scratch directory but the input.
    let left: Vec<_> =
        std::fs::read_dir(&s.work).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("big.txt")]);
}

/// Runs `sort` from `bin` under `sh` with `trap '' SIG` (the disposition a script's background
/// job gets), sends SIGINT to it while it waits for its input, then gives it the rest.
fn interrupted_while_reading(s: &Sorts, bin: &Path, ignore: bool) -> Output {
    let script = if ignore { "trap '' INT; exec sort" } else { "exec sort" };
    let mut c = Command::new("/bin/sh");
    c.env_clear()
        .env("PATH", bin)
        .env("LC_ALL", "C")
        .current_dir(&s.work)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The shell starts with SIGINT at its default, whatever the test runner inherited (a
    // runner started in the background of a script has it ignored, and would pass that on).
    // SAFETY: between fork and exec only `signal`, async-signal-safe, is called.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut c, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"b\n").unwrap();
    // Time for sh to exec sort and for sort to set up its handlers and wait on its input.
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill with a valid signal number on the child's pid has no memory effects.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(r, 0);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let _ = stdin.write_all(b"a\n");
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn sigint_ignored_by_the_parent_stays_ignored() {
    let Some(s) = Sorts::new() else { return };
    let ours = interrupted_while_reading(&s, &s.ours, true);
    let gnu = interrupted_while_reading(&s, &s.gnu, true);
    assert_same(&ours, &gnu, "SIGINT ignored");
    assert_eq!(ours.stdout, b"a\nb\n");
    assert_eq!(ours.status.code(), Some(0));
    // Not ignored, it stops both (GNU dies of the signal; 130 is what a shell shows for it).
    use std::os::unix::process::ExitStatusExt;
    let gnu = interrupted_while_reading(&s, &s.gnu, false);
    assert_eq!(gnu.status.signal(), Some(libc::SIGINT), "{:?}", gnu.status);
    let ours = interrupted_while_reading(&s, &s.ours, false);
    assert!(ours.status.code() == Some(130) || ours.status.signal() == Some(libc::SIGINT));
    assert!(ours.stdout.is_empty());
}

#[test]
fn sigpipe_ignored_by_the_parent_makes_a_closed_output_a_write_error() {
    let Some(s) = Sorts::new() else { return };
    let f = s.file("big.txt", &numbers(200_000));
    let run = |bin: &Path| {
        // The pipeline's status is sort's (head ends well after its first line).
        let script = format!("set -o pipefail; trap '' PIPE; sort {f} | head -n 1");
        Command::new("/bin/bash")
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("LC_ALL", "C")
            .current_dir(&s.work)
            .args(["-c", &script])
            .output()
            .unwrap()
    };
    let (ours, gnu) = (run(&s.ours), run(&s.gnu));
    assert_same(&ours, &gnu, "SIGPIPE ignored");
    assert_eq!(ours.status.code(), Some(2));
}

/// Random lines of words and numbers, `n` of them.
fn random_lines(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    const WORDS: &[&str] = &["a", "B", "zed", "Zed", "apple", "-1", "10", "2", "1e3", " x", ""];
    let mut out = Vec::new();
    for _ in 0..n {
        let fields = 1 + next() % 4;
        for f in 0..fields {
            if f > 0 {
                out.push(if next() % 3 == 0 { b',' } else { b' ' });
            }
            out.extend_from_slice(WORDS[(next() % WORDS.len() as u64) as usize].as_bytes());
            if next() % 2 == 0 {
                out.extend_from_slice((next() % 1000).to_string().as_bytes());
            }
        }
        out.push(b'\n');
    }
    out
}

#[test]
fn the_small_path_and_the_planned_sort_agree_with_gnu_sort() {
    let Some(s) = Sorts::new() else { return };
    let calls: &[&[&str]] = &[
        &[],
        &["-r"],
        &["-u"],
        &["-s", "-k2,2"],
        &["-t", ",", "-k2,2n", "-k1,1"],
        &["-f", "-u"],
        &["-n", "-r", "-s"],
        &["-V"],
        &["-k1.2,1.3", "-b"],
        &["-z"],
    ];
    for (i, args) in calls.iter().enumerate() {
        let input = random_lines(i as u64 + 7, 3000);
        let mut input_no_eol = input.clone();
        input_no_eol.pop(); // The last line without its newline.
        for (input, how) in [(&input, "whole"), (&input_no_eol, "unterminated")] {
            let f = s.file("in.txt", input);
            let mut with_file = args.to_vec();
            with_file.push(&f);
            for (args, stdin) in [(args.to_vec(), &input[..]), (with_file, &b""[..])] {
                let what = format!("sort {args:?} ({how}, {} bytes)", input.len());
                let gnu = s.run_in(&s.gnu, &args, &[], stdin);
                // The small path (the default limit holds this input), the planned sort (the
                // small path off), and a stream handed over past a small limit.
                for limit in ["4194304", "0", "1000"] {
                    let env = [("OXSORT_SMALL_INPUT_BYTES", limit)];
                    let ours = s.run_in(&s.ours, &args, &env, stdin);
                    assert_same(&ours, &gnu, &format!("{what}, small limit {limit}"));
                }
            }
        }
    }
}

#[test]
fn a_stream_bigger_than_the_small_limit_is_sorted_whole_with_the_other_inputs() {
    let Some(s) = Sorts::new() else { return };
    let a = s.file("a.txt", &random_lines(1, 500));
    let b = s.file("b.txt", b"last line without newline");
    let stream = random_lines(2, 20_000);
    let calls: &[&[&str]] = &[&[&a, "-", &b], &["-", &a], &[&a, &b, "-"], &["-u", &b, "-"]];
    for args in calls {
        let gnu = s.run_in(&s.gnu, args, &[], &stream);
        for limit in ["100", "20000", "70000", "4194304"] {
            let env = [("OXSORT_SMALL_INPUT_BYTES", limit)];
            let ours = s.run_in(&s.ours, args, &env, &stream);
            assert_same(&ours, &gnu, &format!("sort {args:?}, small limit {limit}"));
        }
    }
}

#[test]
fn a_small_sort_into_a_file_replaces_it_whole_and_leaves_nothing_behind() {
    let Some(s) = Sorts::new() else { return };
    let f = s.file("in.txt", b"c\nb\na\n");
    for bin in [&s.ours, &s.gnu] {
        let out = s.run_in(bin, &["-o", &f, &f], &[], b"");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read(s.work.join(&f)).unwrap(), b"a\nb\nc\n");
        std::fs::write(s.work.join(&f), b"c\nb\na\n").unwrap();
    }
    let left: Vec<_> =
        std::fs::read_dir(&s.work).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("in.txt")]);
}

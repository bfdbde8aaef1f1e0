//! Signals end a sort as they end GNU sort, its temp files removed first: a reader that closes
//! the output pipe (`oxsort sort big | head -c 1000`) kills the sort with SIGPIPE (141 in the
//! shell), or, when SIGPIPE was ignored by the parent, fails the write with a message. Each
//! test waits for the phase it interrupts (output on the pipe), never a blind sleep.

mod common;

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::{gen, oxsort};

/// Records of the input: 4 MB, two passes at [`MEMORY`].
const RECORDS: u64 = 40_000;
/// A budget well below the input, so the sort forms runs in its temp directory.
const MEMORY: &str = "1M";
/// How long a sort may take to end once its output pipe is closed.
const WAIT: Duration = Duration::from_secs(60);

/// Everything in `dir` (names), sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Waits for `child` to end, at most `limit`.
fn wait_at_most(child: &mut Child, limit: Duration) -> ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("the sort did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `cmd` run with SIGPIPE ignored, as after `trap '' PIPE` in a shell.
fn with_sigpipe_ignored(cmd: &Command) -> Command {
    let mut sh = Command::new("sh");
    sh.arg("-c").arg("trap '' PIPE; exec \"$0\" \"$@\"").arg(cmd.get_program());
    sh.args(cmd.get_args());
    sh
}

/// Starts `cmd` with its output on a pipe, reads `first` bytes of the output, closes the pipe,
/// and returns how the sort ended and its standard error.
fn read_then_close(mut cmd: Command, first: usize) -> (ExitStatus, String) {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut head = vec![0u8; first];
    out.read_exact(&mut head).unwrap();
    drop(out);
    let status = wait_at_most(&mut child, WAIT);
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status, err)
}

struct Setup {
    _root: tempfile::TempDir,
    input: std::path::PathBuf,
    temp: std::path::PathBuf,
}

fn setup() -> Setup {
    let root = tempfile::tempdir().unwrap();
    let temp = root.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let input = root.path().join("in.dat");
    gen(&input, RECORDS);
    Setup { _root: root, input, temp }
}

fn sort_to_stdout(s: &Setup) -> Command {
    let mut c = oxsort();
    c.arg("sort").arg(&s.input).arg("--temp-dir").arg(&s.temp);
    c.args(["--memory", MEMORY, "--no-progress", "--threads", "2", "-q"]);
    c
}

/// Lines of text for the GNU door: `RECORDS` lines of 100 bytes.
fn text_input(s: &Setup) -> std::path::PathBuf {
    let path = s.temp.parent().unwrap().join("in.txt");
    let mut text = Vec::new();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..RECORDS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.extend_from_slice(format!("{x:020}{}\n", "x".repeat(79)).as_bytes());
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn gnu_sort(s: &Setup, input: &Path) -> Command {
    let mut c = oxsort();
    c.arg("gnu").args(["-S", "4M", "-T"]).arg(&s.temp).arg(input);
    c
}

#[test]
fn a_closed_output_pipe_kills_the_sort_with_sigpipe_after_removing_its_temp_files() {
    let s = setup();
    let (status, err) = read_then_close(sort_to_stdout(&s), 1000);
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}: {err}");
    assert!(entries(&s.temp).is_empty(), "left behind: {:?}", entries(&s.temp));
}

#[test]
fn with_sigpipe_ignored_a_closed_output_pipe_is_a_write_error() {
    let s = setup();
    let (status, err) = read_then_close(with_sigpipe_ignored(&sort_to_stdout(&s)), 1000);
    assert_eq!(status.code(), Some(1), "{status:?}: {err}");
    assert!(err.contains("standard output") && err.contains("closed the pipe"), "{err}");
    assert!(entries(&s.temp).is_empty(), "left behind: {:?}", entries(&s.temp));
}

#[test]
fn gnu_sort_into_a_closed_pipe_dies_of_sigpipe_after_removing_its_temp_files() {
    let s = setup();
    let text = text_input(&s);
    let (status, err) = read_then_close(gnu_sort(&s, &text), 100);
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}: {err}");
    assert!(entries(&s.temp).is_empty(), "left behind: {:?}", entries(&s.temp));
    // SIGPIPE ignored: GNU's message and status 2.
    let (status, err) = read_then_close(with_sigpipe_ignored(&gnu_sort(&s, &text)), 100);
    assert_eq!(status.code(), Some(2), "{status:?}: {err}");
    assert!(err.contains("sort: write failed: 'standard output': Broken pipe"), "{err}");
    assert!(entries(&s.temp).is_empty(), "left behind: {:?}", entries(&s.temp));
}

#[test]
fn gnu_debug_annotations_into_a_closed_pipe_leave_no_temp_directory() {
    let s = setup();
    let text = text_input(&s);
    let mut cmd = oxsort();
    cmd.arg("gnu").args(["--debug", "-k1,1", "-T"]).arg(&s.temp).arg(&text);
    let (status, err) = read_then_close(cmd, 100);
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}: {err}");
    assert!(entries(&s.temp).is_empty(), "left behind: {:?}", entries(&s.temp));
}

//! Full and nearly full file systems, made with a small tmpfs: a resume counts the runs it takes
//! over as written; a full temp directory fed from a pipe says only what is known; an output
//! directory too small for the output is refused as output space (not temp space), and
//! `explain` shows the plan with the shortage as a warning.
//!
//! Each test mounts its own tmpfs (root only); where mounting is refused the test says so and
//! does nothing.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{oxsort, run, stderr};
use oxsort_testkit::{make_records, oracle_sort, seed, Pattern, Rng};

/// The small file system's size.
const TMPFS_SIZE: &str = "8m";
/// Records of 100 bytes; 60,000 are 6 MB: in four runs they fit the tmpfs once, not twice.
const RECORD: usize = 100;

/// A tmpfs mounted on a fresh directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts one, or `None` (saying why) where this process may not mount.
    fn mount() -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={TMPFS_SIZE}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match o {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            Ok(o) => {
                eprintln!("skipped: cannot mount a tmpfs: {}", stderr(&o));
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount: {e}");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Complete `{"run": ...}` lines of the journal of the resume directory in `temp`.
fn journaled_runs(temp: &Path) -> usize {
    let Ok(rd) = std::fs::read_dir(temp) else { return 0 };
    let Some(dir) =
        rd.flatten().find(|e| e.file_name().to_string_lossy().starts_with(".oxsort-resume-"))
    else {
        return 0;
    };
    let text = std::fs::read_to_string(dir.path().join("journal")).unwrap_or_default();
    text.split_inclusive('\n').filter(|l| l.ends_with('\n') && l.contains(" {\"run\":")).count()
}

#[test]
fn a_resume_on_a_nearly_full_temp_file_system_counts_the_runs_it_takes_over() {
    let Some(fs) = Tmpfs::mount() else { return };
    let root = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(seed());
    let data = make_records(Pattern::Random, 60_000, RECORD, &mut rng);
    let input = root.path().join("in.dat");
    std::fs::write(&input, &data).unwrap();
    let sort = || {
        let mut c = oxsort();
        c.arg("sort").arg(&input).arg("--temp-dir").arg(fs.path());
        c.args(["--memory", "3M", "--threads", "2", "--no-progress", "--resume", "-q"]);
        c
    };
    // The output goes to a pipe no one reads: the sort forms and journals all its runs, then
    // blocks in the merge, where it is killed.
    let mut child = sort().stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let t0 = Instant::now();
    while journaled_runs(fs.path()) < 4 {
        assert!(t0.elapsed() < Duration::from_secs(60), "the runs were never journaled");
        assert!(child.try_wait().unwrap().is_none(), "the sort ended before its merge");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The runs hold 6 MB of the 8 MiB: less is free than the sort writes in all.
    let o = run(&mut sort());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == oracle_sort(&data, RECORD, 0, 10), "the resumed output differs");
    let left: Vec<_> = std::fs::read_dir(fs.path()).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_full_temp_directory_fed_from_a_pipe_says_only_what_is_known() {
    let Some(fs) = Tmpfs::mount() else { return };
    // 12 MB from a pipe: the runs outgrow the 8 MiB.
    let mut rng = Rng::new(seed());
    let data = make_records(Pattern::Random, 120_000, RECORD, &mut rng);
    let out = tempfile::tempdir().unwrap();
    let mut child = oxsort()
        .args(["sort", "-", "-o"])
        .arg(out.path().join("sorted.dat"))
        .arg("--temp-dir")
        .arg(fs.path())
        .args(["--memory", "2M", "--threads", "2", "--no-progress", "-q"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&data); // the sort may stop reading when the disk fills
    });
    let o = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("is full"), "{err}");
    assert!(!err.contains("up to 0 more bytes"), "a self-contradicting message: {err}");
    assert!(err.contains("not known"), "{err}");
}

/// `lines` text lines of 100 bytes in `path`.
fn write_lines(path: &Path, lines: usize) {
    let mut rng = Rng::new(seed());
    let mut text = Vec::with_capacity(lines * 100);
    for _ in 0..lines {
        text.extend_from_slice(format!("{:020}{}\n", rng.next_u64(), "y".repeat(79)).as_bytes());
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn lines_into_a_too_small_output_directory_are_refused_as_output_space_and_explained() {
    let Some(fs) = Tmpfs::mount() else { return };
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("in.txt");
    // 10 MB of lines, sorted in one pass, into (and with temp on) an 8 MiB file system.
    write_lines(&input, 100_000);
    let out: PathBuf = fs.path().join("sorted.txt");
    let args = |c: &mut Command| {
        c.arg(&input).arg("-o").arg(&out).arg("--temp-dir").arg(fs.path());
        c.args(["--lines", "--memory", "64M", "--threads", "2"]);
    };
    let mut sort = oxsort();
    sort.args(["sort", "--no-progress", "-q"]);
    args(&mut sort);
    let o = run(&mut sort);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not enough space for the output"), "{err}");
    assert!(!err.contains("temp space"), "the output's shortage called temp space: {err}");

    let mut explain = oxsort();
    explain.arg("explain");
    args(&mut explain);
    let o = run(&mut explain);
    assert!(o.status.success(), "explain refused: {}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("oxsort plan") && text.contains("passes"), "{text}");
    assert!(text.contains("warning") && text.contains("not enough space for the output"), "{text}");
}

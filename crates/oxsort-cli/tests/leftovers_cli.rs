//! What a killed sort leaves behind is found and removed: by `oxsort clean` on demand (listed
//! first with `--dry-run`) and by the next sort on its own; a running sort's files survive a
//! concurrent `oxsort clean`.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{assert_sorted_permutation, gen, oxsort, run, stderr};
use oxsort_testkit::leftovers;

/// Records of the input: 100 MB, many runs at the memory below, so a sort lasts long enough
/// to be caught between its first run and its end.
const RECORDS: u64 = 1_000_000;
/// The sort's memory budget: far below the input, so it takes two passes.
const MEMORY: &str = "8M";
/// How long a sort may take to write its first run before the test gives up.
const FIRST_RUN_WAIT: Duration = Duration::from_secs(60);

struct Dirs {
    _root: tempfile::TempDir,
    input: PathBuf,
    temp: PathBuf,
    out_dir: PathBuf,
    out: PathBuf,
    checksum: u128,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let (temp, out_dir) = (root.path().join("tmp"), root.path().join("out"));
    std::fs::create_dir(&temp).unwrap();
    std::fs::create_dir(&out_dir).unwrap();
    let input = root.path().join("in.dat");
    let checksum = gen(&input, RECORDS);
    let out = out_dir.join("sorted.dat");
    Dirs { _root: root, input, temp, out_dir, out, checksum }
}

fn sort_cmd(d: &Dirs) -> Command {
    let mut c = oxsort();
    c.arg("sort").arg(&d.input).arg("-o").arg(&d.out).arg("--temp-dir").arg(&d.temp);
    c.args(["--memory", MEMORY, "--no-progress", "--threads", "2"]);
    c
}

/// Starts the sort and returns once it wrote into its first run (its temp directory holds a
/// `run-*` file), with its leftovers-to-be in both directories.
fn start_sort(d: &Dirs) -> Child {
    let mut child = sort_cmd(d).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let t0 = Instant::now();
    loop {
        let has_run = leftovers(&d.temp).iter().any(|n| {
            std::fs::read_dir(d.temp.join(n))
                .map(|rd| rd.flatten().any(|e| e.file_name().to_string_lossy().starts_with("run-")))
                .unwrap_or(false)
        });
        if has_run && !leftovers(&d.out_dir).is_empty() {
            return child;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the sort ended ({status}) before it was caught writing a run");
        }
        assert!(t0.elapsed() < FIRST_RUN_WAIT, "no run after {FIRST_RUN_WAIT:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Starts the sort and kills it with SIGKILL once it wrote into its first run.
fn kill_sort(d: &Dirs) {
    let mut child = start_sort(d);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Paths of the oxsort leftovers in `dirs`, sorted.
fn leftover_paths(dirs: &[&Path]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        dirs.iter().flat_map(|d| leftovers(d).into_iter().map(|n| d.join(n))).collect();
    v.sort();
    v
}

/// Allocated bytes under `p`, as `du` counts them.
fn du(p: &Path) -> u64 {
    let m = std::fs::symlink_metadata(p).unwrap();
    let mut total = m.blocks() * 512;
    if m.is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            total += du(&e.unwrap().path());
        }
    }
    total
}

fn clean(args: &[&str], dirs: &[&Path]) -> (String, String) {
    let o = run(oxsort().arg("clean").args(args).args(dirs));
    assert!(o.status.success(), "{}", stderr(&o));
    (String::from_utf8_lossy(&o.stdout).into_owned(), stderr(&o))
}

#[test]
fn killed_sort_leftovers_are_listed_and_removed_by_clean() {
    let d = dirs();
    kill_sort(&d);
    let both = [d.temp.as_path(), d.out_dir.as_path()];
    let left = leftover_paths(&both);
    // The private temp directory and the output's temporary.
    assert_eq!(left.len(), 2, "{left:?}");
    let sizes: Vec<u64> = left.iter().map(|p| du(p)).collect();

    let (listing, _) = clean(&["--dry-run"], &both);
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 3, "{listing}");
    for (p, size) in left.iter().zip(&sizes) {
        let want = format!("{:>10}  {}", oxsort_engine::human_bytes(*size), p.display());
        assert!(lines.contains(&want.as_str()), "{want:?} not in\n{listing}");
    }
    let total = oxsort_engine::human_bytes(sizes.iter().sum());
    assert_eq!(lines[2], format!("would remove 2 leftovers of killed sorts ({total})"));
    assert_eq!(leftover_paths(&both), left, "a dry run removes nothing");

    let (removed, _) = clean(&[], &both);
    assert!(removed.ends_with(&format!("removed 2 leftovers of killed sorts ({total})\n")));
    assert!(leftover_paths(&both).is_empty(), "{:?}", leftover_paths(&both));
    assert!(!d.out.exists());
    // The input is untouched.
    let input = oxsort_gensort::validate_file(&d.input, 1, None).unwrap();
    assert_eq!((input.records, input.checksum.value()), (RECORDS as u128, d.checksum));
}

#[test]
fn the_next_sort_reclaims_leftovers_by_itself_and_says_so() {
    let d = dirs();
    kill_sort(&d);
    let both = [d.temp.as_path(), d.out_dir.as_path()];
    let left = leftover_paths(&both);
    assert_eq!(left.len(), 2, "{left:?}");
    let in_temp: u64 = left.iter().filter(|p| p.starts_with(&d.temp)).map(|p| du(p)).sum();
    let in_out: u64 = left.iter().filter(|p| p.starts_with(&d.out_dir)).map(|p| du(p)).sum();

    let o = run(&mut sort_cmd(&d));
    let text = stderr(&o);
    assert!(o.status.success(), "{text}");
    for (dir, bytes) in [(&d.temp, in_temp), (&d.out_dir, in_out)] {
        let line = format!(
            "oxsort: reclaimed 1 leftover of killed sorts in {} ({}): ",
            dir.display(),
            oxsort_engine::human_bytes(bytes)
        );
        assert!(text.contains(&line), "{line:?} not in\n{text}");
    }
    assert!(leftover_paths(&both).is_empty(), "{:?}", leftover_paths(&both));
    assert_sorted_permutation(&d.out, RECORDS, d.checksum);
}

#[test]
fn a_running_sorts_files_survive_a_concurrent_clean() {
    let d = dirs();
    let mut child = start_sort(&d);
    // Stopped, the sort is sure to be alive (and its files in use) while clean runs.
    // SAFETY: signals to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGSTOP) }, 0);
    let both = [d.temp.as_path(), d.out_dir.as_path()];
    let before = leftover_paths(&both);
    assert_eq!(before.len(), 2, "{before:?}");
    let (out, _) = clean(&[], &both);
    assert_eq!(out, "removed 0 leftovers of killed sorts (0 B)\n");
    assert_eq!(leftover_paths(&both), before);
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGCONT) }, 0);
    assert!(child.wait().unwrap().success());
    assert_sorted_permutation(&d.out, RECORDS, d.checksum);
    assert!(leftover_paths(&both).is_empty());
}

#[test]
fn clean_sweeps_tmpdir_and_the_current_directory_by_default() {
    let root = tempfile::tempdir().unwrap();
    let (tmp, cwd, other) = (root.path().join("t"), root.path().join("c"), root.path().join("o"));
    // Leftovers whose owner is gone (nobody holds their lock), one in each directory.
    let names =
        [".oxsort-1-0123456789abcdef", ".oxsort-2-fedcba9876543210", ".oxsort-3-00000000000000ff"];
    for (d, n) in [&tmp, &cwd, &other].iter().zip(names) {
        std::fs::create_dir_all(d.join(n)).unwrap();
        std::fs::write(d.join(n).join("run-000000"), vec![1u8; 50_000]).unwrap();
    }
    let o = run(oxsort().args(["clean", "--dry-run"]).env("TMPDIR", &tmp).current_dir(&cwd));
    assert!(o.status.success(), "{}", stderr(&o));
    let listing = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(listing.contains(names[0]) && listing.contains(names[1]), "{listing}");
    assert!(!listing.contains(names[2]), "{listing}");
    assert!(listing.contains("\nwould remove 2 leftovers of killed sorts ("), "{listing}");
    let o = run(oxsort().arg("clean").env("TMPDIR", &tmp).current_dir(&cwd));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(leftovers(&tmp).is_empty() && leftovers(&cwd).is_empty());
    assert_eq!(leftovers(&other), vec![names[2].to_string()]);
    // A directory that cannot be listed is an error naming it.
    let o = run(oxsort().arg("clean").arg(root.path().join("missing")));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing"), "{}", stderr(&o));
}

/// The resume directories (`.oxsort-resume-HASH`) in `dir`.
fn resume_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".oxsort-resume-"))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

#[test]
fn clean_lists_resume_directories_and_removes_them_on_request() {
    let d = dirs();
    // A resumable sort killed once its first run is journaled keeps its directory.
    let mut child =
        sort_cmd(&d).arg("--resume").stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let t0 = Instant::now();
    let journaled = || {
        resume_dirs(&d.temp).iter().any(|r| {
            std::fs::read_to_string(r.join("journal")).is_ok_and(|j| j.contains("{\"run\":"))
        })
    };
    while !journaled() {
        assert!(t0.elapsed() < FIRST_RUN_WAIT, "no run journaled after {FIRST_RUN_WAIT:?}");
        assert!(child.try_wait().unwrap().is_none(), "the sort ended before its first run");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = resume_dirs(&d.temp);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let size = oxsort_engine::human_bytes(du(&kept[0]));

    // Listed with its size, its sort's input and output, and how to remove it; kept.
    for args in [&["--dry-run"][..], &[]] {
        let (listing, _) = clean(args, &[&d.temp]);
        let line = listing.lines().find(|l| l.contains(&*kept[0].to_string_lossy()));
        let line = line.unwrap_or_else(|| panic!("{} not listed:\n{listing}", kept[0].display()));
        assert!(line.starts_with(&format!("{size:>10}  ")), "{line}");
        assert!(line.contains("kept for --resume"), "{line}");
        assert!(line.contains("in.dat") && line.contains("sorted.dat"), "{line}");
        assert!(listing.contains("`oxsort clean --resume` removes them"), "{listing}");
        assert_eq!(resume_dirs(&d.temp), kept);
    }
    let (listing, _) = clean(&["--resume", "--dry-run"], &[&d.temp]);
    assert!(
        listing.contains(&format!("would remove 1 resume directory of interrupted sorts ({size})")),
        "{listing}"
    );
    assert_eq!(resume_dirs(&d.temp), kept, "a dry run removes nothing");
    let (listing, _) = clean(&["--resume"], &[&d.temp]);
    assert!(
        listing.contains(&format!("removed 1 resume directory of interrupted sorts ({size})")),
        "{listing}"
    );
    assert!(resume_dirs(&d.temp).is_empty());
    assert!(std::fs::read_dir(&d.temp).unwrap().next().is_none(), "left in the temp directory");
}

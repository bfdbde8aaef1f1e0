//! Leftovers of killed owners are reclaimed by `sweep`; those of live owners never are, even
//! when a sweep races their creation. Owners run in a child process (this test binary
//! re-executed) so that they can be killed with SIGKILL, which no cleanup survives.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use oxsort_io::{sweep, AtomicOutput, IoOptions, LeftoverKind, TempDir};

const CHILD_ENV: &str = "OXSORT_IO_LEFTOVER_CHILD";

/// Bytes of a run the owner writes: not a multiple of a block, spread over many of them.
const RUN_BYTES: usize = 300_001;

fn names(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Allocated bytes under `p`, counted here with `du`'s rule (blocks of 512), as an oracle.
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

/// Runs only when re-executed by the tests below: makes a TempDir with a run and an
/// uncommitted AtomicOutput in the directory named by the environment, prints their paths and
/// READY, and waits until its standard input closes (or it is killed).
#[test]
fn leftover_owner_entry() {
    let Ok(dir) = std::env::var(CHILD_ENV) else { return };
    let dir = Path::new(&dir);
    let opts = IoOptions::default();
    let t = TempDir::new(dir).unwrap();
    t.create_file("run-000000", &opts).unwrap().write_at(&vec![7u8; RUN_BYTES], 0).unwrap();
    let out = AtomicOutput::create(&dir.join("sorted.dat"), &opts).unwrap();
    out.file().write_at(b"half an output", 0).unwrap();
    println!("DIR {}", t.path().display());
    println!("READY");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// Starts an owner in `dir`; returns it and its temp directory once it is ready.
fn owner(dir: &Path) -> (Child, PathBuf) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["leftover_owner_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut temp = None;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref().map_while(Result::ok) {
        // libtest may print "test NAME ... " on the same line first.
        if let Some((_, p)) = line.split_once("DIR ") {
            temp = Some(PathBuf::from(p));
        }
        if line.contains("READY") {
            break;
        }
    }
    let temp = temp.expect("the owner never got ready");
    // The owner's test harness still writes when it ends: keep its pipe read.
    std::thread::spawn(move || lines.for_each(drop));
    (child, temp)
}

fn skip_child() -> bool {
    std::env::var(CHILD_ENV).is_ok()
}

#[test]
fn killed_owner_leftovers_are_listed_then_removed_and_nothing_else() {
    if skip_child() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Not oxsort's: names that look close but are not what oxsort creates, and a file named
    // like a temp directory.
    let foreign = [".oxsort-notes", "sorted.dat.tmp", ".sorted.dat.oxsort-1.tmp.bak"];
    for f in foreign {
        std::fs::write(dir.path().join(f), b"keep").unwrap();
    }
    std::fs::write(dir.path().join(".oxsort-1-0123456789abcdef"), b"a file, not a dir").unwrap();

    let (mut child, temp) = owner(dir.path());
    let pid = child.id();
    let out_tmp = dir.path().join(format!(".sorted.dat.oxsort-{pid}.tmp"));
    assert!(out_tmp.exists() && temp.exists());
    let expected_bytes = du(&temp) + du(&out_tmp);
    assert!(du(&temp) >= RUN_BYTES as u64);
    child.kill().unwrap(); // SIGKILL: no cleanup runs
    child.wait().unwrap();
    assert!(out_tmp.exists() && temp.exists(), "a kill leaves both behind");

    let dry = sweep(dir.path(), true).unwrap();
    assert!(dry.errors.is_empty(), "{:?}", dry.errors);
    let mut got: Vec<(PathBuf, LeftoverKind)> =
        dry.reclaimed.iter().map(|l| (l.path.clone(), l.kind)).collect();
    got.sort();
    let mut want =
        vec![(temp.clone(), LeftoverKind::TempDir), (out_tmp.clone(), LeftoverKind::OutputTemp)];
    want.sort();
    assert_eq!(got, want);
    assert_eq!(dry.bytes(), expected_bytes);
    assert!(out_tmp.exists() && temp.exists(), "a dry run removes nothing");

    let wet = sweep(dir.path(), false).unwrap();
    assert_eq!(wet.reclaimed, dry.reclaimed);
    let mut left = foreign.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    left.push(".oxsort-1-0123456789abcdef".into());
    left.sort();
    assert_eq!(names(dir.path()), left);
    assert!(sweep(dir.path(), false).unwrap().reclaimed.is_empty());
}

#[test]
fn live_owner_in_another_process_is_never_swept() {
    if skip_child() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut child, temp) = owner(dir.path());
    let before = names(dir.path());
    assert_eq!(before.len(), 2, "{before:?}");
    for _ in 0..3 {
        let s = sweep(dir.path(), false).unwrap();
        assert!(s.reclaimed.is_empty(), "swept a live sort's files: {:?}", s.reclaimed);
    }
    assert_eq!(names(dir.path()), before);
    assert!(temp.join("run-000000").exists());
    // The owner ends normally and cleans up after itself.
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn creation_racing_a_sweep_never_loses_a_live_path() {
    if skip_child() {
        return;
    }
    // One thread sweeps without pause while another creates temp directories and outputs and
    // checks each is still there and usable once created. flock locks belong to open file
    // descriptions, so the sweeper's lock conflicts with the owner's in one process too.
    let dir = tempfile::tempdir().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let sweeper = {
        let (dir, stop) = (dir.path().to_path_buf(), stop.clone());
        std::thread::spawn(move || {
            let mut reclaimed = 0;
            while !stop.load(Ordering::Relaxed) {
                reclaimed += sweep(&dir, false).unwrap().reclaimed.len();
            }
            reclaimed
        })
    };
    let opts = IoOptions::default();
    for i in 0..300 {
        let t = TempDir::new(dir.path()).unwrap();
        t.create_file("run-000000", &opts).unwrap().write_at(b"x", 0).unwrap();
        assert!(t.path().join("run-000000").exists(), "iteration {i}");
        let out = AtomicOutput::create(&dir.path().join("o"), &opts).unwrap();
        out.file().write_at(b"y", 0).unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read(dir.path().join("o")).unwrap(), b"y", "iteration {i}");
    }
    stop.store(true, Ordering::Relaxed);
    // Owners create and lock under a staging name, so not even a newborn was ever taken.
    assert_eq!(sweeper.join().unwrap(), 0);
    assert_eq!(names(dir.path()), vec!["o".to_string()]);
}

#[test]
fn staging_names_are_reclaimed_only_once_old() {
    if skip_child() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let staged = [".oxsort-9-0123456789abcdef.new", ".out.oxsort-9.tmp.new"];
    std::fs::create_dir(dir.path().join(staged[0])).unwrap();
    std::fs::write(dir.path().join(staged[1]), b"x").unwrap();
    // Just created: an owner may be naming them right now.
    assert!(sweep(dir.path(), false).unwrap().reclaimed.is_empty());
    assert_eq!(names(dir.path()).len(), 2);
    let old = std::time::SystemTime::now() - oxsort_io::leftovers::STAGING_GRACE * 2;
    for n in staged {
        std::fs::File::open(dir.path().join(n)).unwrap().set_modified(old).unwrap();
    }
    let swept = sweep(dir.path(), false).unwrap();
    assert_eq!(swept.reclaimed.len(), 2, "{:?}", swept.reclaimed);
    assert!(names(dir.path()).is_empty());
}

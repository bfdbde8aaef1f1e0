//! TempDir and AtomicOutput: permissions, removal on drop, commit semantics, and removal on
//! SIGINT/SIGTERM (tested in a child process: this test binary re-executed).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use oxsort_io::{cleanup, AtomicOutput, DirectFile, IoOptions, Reader, TempDir, Writer};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn entries(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn temp_dir_is_private_and_removed_on_drop() {
    let parent = tempfile::tempdir().unwrap();
    let opts = IoOptions::default();
    let t = TempDir::new(parent.path()).unwrap();
    let name = t.path().file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(&format!(".oxsort-{}-", std::process::id())), "{name}");
    assert_eq!(mode(t.path()), 0o700);
    let f = t.create_file("run-0", &opts).unwrap();
    f.write_at(b"data", 0).unwrap();
    assert_eq!(mode(&t.path().join("run-0")), 0o600);
    assert!(t.create_file("run-0", &opts).is_err(), "O_EXCL");
    assert!(t.create_file("../escape", &opts).is_err());
    assert!(cleanup::registered_count() >= 1);
    let p = t.path().to_path_buf();
    drop(t);
    assert!(!p.exists());
    assert!(entries(parent.path()).is_empty());
}

#[test]
fn atomic_output_appears_only_on_commit() {
    let dir = tempfile::tempdir().unwrap();
    let fin = dir.path().join("sorted.dat");
    let opts = IoOptions::default();

    let out = AtomicOutput::create(&fin, &opts).unwrap();
    let tmp_name = format!(".sorted.dat.oxsort-{}.tmp", std::process::id());
    assert_eq!(entries(dir.path()), vec![tmp_name.clone()]);
    out.file().write_at(b"partial", 0).unwrap();
    drop(out); // not committed
    assert!(entries(dir.path()).is_empty());

    std::fs::write(&fin, b"old").unwrap();
    let out = AtomicOutput::create(&fin, &opts).unwrap();
    out.file().write_at(b"new contents", 0).unwrap();
    assert_eq!(std::fs::read(&fin).unwrap(), b"old");
    out.commit().unwrap();
    assert_eq!(std::fs::read(&fin).unwrap(), b"new contents");
    assert_eq!(entries(dir.path()), vec!["sorted.dat".to_string()]);
}

#[test]
fn atomic_output_over_the_input_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let opts = IoOptions::default();
    let input = Arc::new(DirectFile::open(&path, &opts).unwrap());
    let out = AtomicOutput::create(&path, &opts).unwrap();
    let mut w = Writer::new(out.file().clone(), 0, 2, &opts).unwrap();
    let mut r = Reader::new(input, 0..data.len() as u64, 1 << 16, 2, &opts).unwrap();
    while let Some(c) = r.next_chunk() {
        let mut c = c.unwrap();
        for b in &mut c.buf[..c.len] {
            *b = b.wrapping_add(1);
        }
        w.write(c.buf, c.len).unwrap();
    }
    w.finish().unwrap();
    out.commit().unwrap();
    let back = std::fs::read(&path).unwrap();
    assert!(
        back.iter().zip(&data).all(|(a, b)| *a == b.wrapping_add(1)) && back.len() == data.len()
    );
    assert_eq!(entries(dir.path()), vec!["data".to_string()]);
}

#[test]
fn atomic_output_to_a_device_writes_in_place() {
    let out = AtomicOutput::create(Path::new("/dev/null"), &IoOptions::default()).unwrap();
    out.file().write_at(b"discarded", 0).unwrap();
    out.commit().unwrap();
    assert!(Path::new("/dev/null").exists());
}

const CHILD_ENV: &str = "OXSORT_IO_SIGNAL_CHILD";

/// Runs only when re-executed by `signals_remove_temp_files`: creates a TempDir with a file and
/// an uncommitted AtomicOutput, says READY, and waits to be killed.
#[test]
fn signal_child_entry() {
    let Ok(dir) = std::env::var(CHILD_ENV) else { return };
    cleanup::install_signal_handlers();
    let dir = Path::new(&dir);
    let opts = IoOptions::default();
    let t = TempDir::new(dir).unwrap();
    t.create_file("run-0", &opts).unwrap().write_at(&[1u8; 10_000], 0).unwrap();
    let out = AtomicOutput::create(&dir.join("out"), &opts).unwrap();
    out.file().write_at(b"half", 0).unwrap();
    println!("READY");
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

#[test]
fn signals_remove_temp_files_and_exit_with_128_plus_signal() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["signal_child_entry", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let ready =
            BufReader::new(stdout).lines().map_while(Result::ok).any(|l| l.contains("READY"));
        assert!(ready, "child never got ready");
        assert_eq!(entries(dir.path()).len(), 2, "{:?}", entries(dir.path()));
        // SAFETY: sending a signal to our own child process.
        assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "signal {sig}: {status:?}");
        assert!(entries(dir.path()).is_empty(), "left behind: {:?}", entries(dir.path()));
    }
}

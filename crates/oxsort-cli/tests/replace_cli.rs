//! Replacing an output as GNU sort does, through both front ends (`oxsort sort`, `oxsort gnu`):
//! the mode, owner, group and ACL of the file replaced are kept (and its temporary is never
//! wider than 0600 while it is written), a symlink is written through, a hard link keeps its
//! inode, an output in a directory that refuses the rename is written in place, a file the caller
//! may not write is refused before any work; then the paths of one sort checked against each
//! other before any work (a summary or timeline naming the output or an input), long and
//! non-UTF-8 names, and `-o name/`.
//!
//! Tests that need another user run the oxsort child under `setpriv` as nobody (65534) in a
//! directory it may write; tests that make files of another user need root and say so when they
//! are skipped.

mod common;

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{oxsort, run, stderr};
use oxsort_testkit::leftovers;

/// The unprivileged user and group the children that must not be root run as.
const NOBODY: u32 = 65534;

/// How long a sort refused before any work may take to exit while its input stays open.
const REFUSAL_DEADLINE: Duration = Duration::from_secs(20);

/// Lines out of order, and the same lines sorted.
const LINES: &[u8] = b"pear\napple\nfig\n";
const SORTED: &[u8] = b"apple\nfig\npear\n";

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The two command lines that replace `out` with the sorted lines of `input`.
fn front_ends(input: &Path, out: &Path) -> [Command; 2] {
    let mut sort = oxsort();
    sort.args(["sort", "--lines", "-q", "--no-progress"]).arg(input).arg("-o").arg(out);
    let mut gnu = oxsort();
    gnu.arg("gnu").arg(input).arg("-o").arg(out);
    [sort, gnu]
}

/// `cmd` run as nobody (its own uid, gid and no supplementary groups).
fn as_nobody(cmd: &Command) -> Command {
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(cmd.get_program());
    c.args(cmd.get_args());
    if let Some(d) = cmd.get_current_dir() {
        c.current_dir(d);
    }
    c
}

/// A directory nobody may write (mode 0777: the test's own temp directories are 0700).
fn shared_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

fn chown(p: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::chown(p, Some(uid), Some(gid)).unwrap();
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().mode() & 0o7777
}

fn umask() -> u32 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let v = s.lines().find_map(|l| l.strip_prefix("Umask:")).unwrap();
    u32::from_str_radix(v.trim(), 8).unwrap()
}

/// Runs `cmd` with its standard input a pipe held open (and never written): a sort that is
/// refused before any work exits at once; one that starts waits for its input until the
/// deadline, is killed, and gives `None`.
fn run_with_input_held_open(cmd: &mut Command) -> Option<Output> {
    let child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = child.spawn().unwrap();
    let held = child.stdin.take();
    let t0 = Instant::now();
    while t0.elapsed() < REFUSAL_DEADLINE {
        if child.try_wait().unwrap().is_some() {
            drop(held);
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    drop(held);
    let _ = child.wait();
    None
}

#[test]
fn a_0600_output_stays_0600_and_a_new_one_gets_what_gnu_sort_gives() {
    for (i, mut cmd) in front_ends(Path::new("f"), Path::new("f")).into_iter().enumerate() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, LINES).unwrap();
        chmod(&f, 0o600);
        let o = run(cmd.current_dir(d.path()));
        assert!(o.status.success(), "front end {i}: {}", stderr(&o));
        assert_eq!(std::fs::read(&f).unwrap(), SORTED);
        assert_eq!(mode(&f), 0o600, "front end {i}: a 0600 file sorted in place");
        assert!(leftovers(d.path()).is_empty());
    }
    // A new output: 0666 less the umask, as the system's GNU sort creates it.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("in"), LINES).unwrap();
    let gnu = run(Command::new("/usr/bin/sort").args(["in", "-o", "by-gnu"]).current_dir(d.path()));
    assert!(gnu.status.success());
    for (i, mut cmd) in front_ends(Path::new("in"), Path::new("new")).into_iter().enumerate() {
        let o = run(cmd.current_dir(d.path()));
        assert!(o.status.success(), "front end {i}: {}", stderr(&o));
        assert_eq!(mode(&d.path().join("new")), 0o666 & !umask());
        assert_eq!(mode(&d.path().join("new")), mode(&d.path().join("by-gnu")));
        std::fs::remove_file(d.path().join("new")).unwrap();
    }
}

#[test]
fn the_temporary_of_an_output_is_private_while_it_is_written() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    std::fs::write(&out, b"old\n").unwrap();
    chmod(&out, 0o600);
    // The sort waits for its input with the temporary made: look at it then.
    let mut child = oxsort()
        .args(["sort", "--lines", "-q", "--no-progress", "-", "-o"])
        .arg(&out)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let temp = loop {
        let found = leftovers(d.path()).into_iter().find(|n| n.ends_with(".tmp"));
        if let Some(n) = found {
            break d.path().join(n);
        }
        assert!(t0.elapsed() < REFUSAL_DEADLINE, "no temporary appeared");
        std::thread::sleep(Duration::from_millis(10));
    };
    let m = mode(&temp);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(LINES).unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(m & 0o077, 0, "the temporary of a 0600 output was {m:o} while it was written");
    assert_eq!(mode(&out), 0o600);
    assert_eq!(std::fs::read(&out).unwrap(), SORTED);
}

/// A binary `system.posix_acl_access` value: owner rw, user `uid` r, group r, mask r, other
/// nothing (the kernel's xattr form of an ACL, version 2).
fn acl_value(uid: u32) -> Vec<u8> {
    const UNDEFINED_ID: u32 = u32::MAX;
    let entries: [(u16, u16, u32); 5] = [
        (0x01, 6, UNDEFINED_ID), // ACL_USER_OBJ rw-
        (0x02, 4, uid),          // ACL_USER r--
        (0x04, 4, UNDEFINED_ID), // ACL_GROUP_OBJ r--
        (0x10, 4, UNDEFINED_ID), // ACL_MASK r--
        (0x20, 0, UNDEFINED_ID), // ACL_OTHER ---
    ];
    let mut v = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in entries {
        v.extend_from_slice(&tag.to_le_bytes());
        v.extend_from_slice(&perm.to_le_bytes());
        v.extend_from_slice(&id.to_le_bytes());
    }
    v
}

fn xattr(p: &Path, name: &str) -> Option<Vec<u8>> {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    let mut buf = vec![0u8; 1024];
    // SAFETY: both strings are NUL-terminated; `buf` is writable for the length passed.
    let len = unsafe { libc::getxattr(c.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), 1024) };
    (len >= 0).then(|| buf[..len as usize].to_vec())
}

fn set_xattr(p: &Path, name: &str, value: &[u8]) -> bool {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    // SAFETY: both strings are NUL-terminated; `value` is readable for the length passed.
    unsafe { libc::setxattr(c.as_ptr(), n.as_ptr(), value.as_ptr().cast(), value.len(), 0) == 0 }
}

#[test]
fn root_sorting_another_users_file_keeps_its_owner_group_mode_and_acl() {
    if !is_root() {
        eprintln!("skipped: making a file of another user needs root");
        return;
    }
    for (i, mut cmd) in front_ends(Path::new("u"), Path::new("u")).into_iter().enumerate() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("u");
        std::fs::write(&f, LINES).unwrap();
        chown(&f, NOBODY, NOBODY);
        chmod(&f, 0o640);
        // An ACL where the filesystem takes one (ext4, tmpfs with POSIX ACLs).
        let acl = acl_value(4242);
        let with_acl = set_xattr(&f, "system.posix_acl_access", &acl);
        let o = run(cmd.current_dir(d.path()));
        assert!(o.status.success(), "front end {i}: {}", stderr(&o));
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!((m.uid(), m.gid()), (NOBODY, NOBODY), "front end {i}: owner and group");
        assert_eq!(m.mode() & 0o7777, 0o640, "front end {i}: mode");
        assert_eq!(std::fs::read(&f).unwrap(), SORTED);
        if with_acl {
            assert_eq!(xattr(&f, "system.posix_acl_access"), Some(acl), "front end {i}: ACL");
        } else {
            eprintln!("ACL part skipped: the filesystem of {} takes no ACL", d.path().display());
        }
    }
}

#[test]
fn a_symlink_output_is_written_through_to_the_end_of_its_chain() {
    for (i, mut cmd) in front_ends(Path::new("in"), Path::new("l2")).into_iter().enumerate() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("in"), LINES).unwrap();
        std::fs::write(d.path().join("sub/f"), b"old\n").unwrap();
        chmod(&d.path().join("sub/f"), 0o640);
        std::os::unix::fs::symlink("sub/f", d.path().join("l1")).unwrap();
        std::os::unix::fs::symlink(d.path().join("l1"), d.path().join("l2")).unwrap();
        let o = run(cmd.current_dir(d.path()));
        assert!(o.status.success(), "front end {i}: {}", stderr(&o));
        for l in ["l1", "l2"] {
            let m = std::fs::symlink_metadata(d.path().join(l)).unwrap();
            assert!(m.file_type().is_symlink(), "front end {i}: {l} is no longer a link");
        }
        assert_eq!(std::fs::read(d.path().join("sub/f")).unwrap(), SORTED, "front end {i}");
        assert_eq!(mode(&d.path().join("sub/f")), 0o640);
        assert!(leftovers(d.path()).is_empty() && leftovers(&d.path().join("sub")).is_empty());
    }
}

#[test]
fn a_hard_linked_output_keeps_its_inode_and_the_other_name_sees_the_sort() {
    for (i, mut cmd) in front_ends(Path::new("in"), Path::new("f")).into_iter().enumerate() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("in"), LINES).unwrap();
        std::fs::write(d.path().join("f"), b"an older and longer content\n").unwrap();
        std::fs::hard_link(d.path().join("f"), d.path().join("h")).unwrap();
        let ino = std::fs::metadata(d.path().join("f")).unwrap().ino();
        let o = run(cmd.current_dir(d.path()));
        assert!(o.status.success(), "front end {i}: {}", stderr(&o));
        let m = std::fs::metadata(d.path().join("f")).unwrap();
        assert_eq!((m.ino(), m.nlink()), (ino, 2), "front end {i}: the hard link was broken");
        assert_eq!(std::fs::read(d.path().join("h")).unwrap(), SORTED, "front end {i}");
        assert!(leftovers(d.path()).is_empty());
    }
}

#[test]
fn a_read_only_output_is_refused_before_any_work_as_gnu_sort_refuses_it() {
    let d = shared_dir();
    let ro = d.path().join("ro");
    std::fs::write(&ro, b"old\n").unwrap();
    chown(&ro, NOBODY, NOBODY);
    chmod(&ro, 0o444);
    let gnu = run(as_nobody(Command::new("/usr/bin/sort").args(["-o", "ro", "-"]))
        .current_dir(d.path())
        .stdin(Stdio::null()));
    assert!(!gnu.status.success() && stderr(&gnu).contains("ro: Permission denied"));
    for (i, cmd) in front_ends(Path::new("-"), Path::new("ro")).iter().enumerate() {
        let o = run_with_input_held_open(as_nobody(cmd).current_dir(d.path()))
            .unwrap_or_else(|| panic!("front end {i}: not refused before reading its input"));
        assert!(!o.status.success(), "front end {i}");
        let e = stderr(&o);
        assert!(e.contains("ro: Permission denied"), "front end {i}: {e}");
        assert!(!e.contains("os error"), "{e}");
        assert_eq!(std::fs::read(&ro).unwrap(), b"old\n");
        assert_eq!(mode(&ro), 0o444);
        assert!(leftovers(d.path()).is_empty());
    }
}

#[test]
fn an_output_in_a_sticky_directory_of_another_user_is_written_in_place() {
    if !is_root() {
        eprintln!("skipped: a file of another user in a sticky directory needs root to make");
        return;
    }
    for (i, cmd) in front_ends(Path::new("in"), Path::new("theirs")).iter().enumerate() {
        let d = tempfile::tempdir().unwrap();
        chmod(d.path(), 0o1777);
        std::fs::write(d.path().join("in"), LINES).unwrap();
        chmod(&d.path().join("in"), 0o644);
        let theirs = d.path().join("theirs");
        std::fs::write(&theirs, b"old\n").unwrap();
        chmod(&theirs, 0o666); // anyone may write it, only root may rename over it
        let ino = std::fs::metadata(&theirs).unwrap().ino();
        let o = run(as_nobody(cmd).current_dir(d.path()));
        assert!(o.status.success(), "front end {i}: {}", stderr(&o));
        let m = std::fs::metadata(&theirs).unwrap();
        assert_eq!((m.ino(), m.uid(), m.mode() & 0o7777), (ino, 0, 0o666), "front end {i}");
        assert_eq!(std::fs::read(&theirs).unwrap(), SORTED);
        assert!(leftovers(d.path()).is_empty(), "{:?}", leftovers(d.path()));
    }
}

#[test]
fn an_output_in_a_directory_the_caller_may_not_write_is_written_in_place() {
    if !is_root() {
        eprintln!("skipped: giving nobody a file in root's directory needs root");
        return;
    }
    for (i, cmd) in front_ends(Path::new("mine"), Path::new("mine")).iter().enumerate() {
        let d = tempfile::tempdir().unwrap();
        chmod(d.path(), 0o755);
        let mine = d.path().join("mine");
        std::fs::write(&mine, LINES).unwrap();
        chown(&mine, NOBODY, NOBODY);
        let o = run(as_nobody(cmd).current_dir(d.path()));
        assert!(o.status.success(), "front end {i}: {}", stderr(&o));
        assert_eq!(std::fs::read(&mine).unwrap(), SORTED, "front end {i}");
        assert_eq!(std::fs::metadata(&mine).unwrap().uid(), NOBODY);
    }
}

#[test]
fn a_summary_or_timeline_naming_the_output_or_an_input_is_refused_with_nothing_changed() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    common::gen(&input, 1000);
    let before = std::fs::read(&input).unwrap();
    let out = d.path().join("out.dat");
    std::fs::write(&out, b"previous output").unwrap();
    std::os::unix::fs::symlink("in.dat", d.path().join("in-link")).unwrap();
    let cases: [(&str, &Path, &str); 5] = [
        ("--summary", &out, "the summary"),
        ("--summary", &input, "the summary"),
        ("--summary", &d.path().join("in-link"), "the summary"),
        ("--timeline", &input, "the timeline"),
        ("--timeline", &out, "the timeline"),
    ];
    for (flag, path, what) in cases {
        let o = run(oxsort()
            .args(["sort", "--no-progress"])
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .arg(flag)
            .arg(path));
        assert_eq!(o.status.code(), Some(1), "{flag} {}: {}", path.display(), stderr(&o));
        assert!(stderr(&o).contains(&format!("{what} {}", path.display())), "{}", stderr(&o));
        assert!(stderr(&o).contains("is the same file as"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&input).unwrap(), before, "{flag} {}", path.display());
        assert_eq!(std::fs::read(&out).unwrap(), b"previous output");
    }
    // A summary of its own still works, and the output may replace the input.
    let o = run(oxsort()
        .args(["sort", "--no-progress", "-q"])
        .arg(&input)
        .arg("-o")
        .arg(&input)
        .arg("--summary")
        .arg(d.path().join("sum")));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(d.path().join("sum")).unwrap().len(), 280);
}

#[test]
fn output_names_up_to_255_bytes_work() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("in"), LINES).unwrap();
    for len in [232, 240, 255] {
        let name = "n".repeat(len);
        for (i, mut cmd) in front_ends(Path::new("in"), Path::new(&name)).into_iter().enumerate() {
            let o = run(cmd.current_dir(d.path()));
            assert!(o.status.success(), "{len} bytes, front end {i}: {}", stderr(&o));
            assert_eq!(std::fs::read(d.path().join(&name)).unwrap(), SORTED);
            std::fs::remove_file(d.path().join(&name)).unwrap();
        }
    }
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn file_names_that_are_not_utf8_are_sorted_by_both_front_ends() {
    let d = tempfile::tempdir().unwrap();
    let input = PathBuf::from(OsStr::from_bytes(b"in-\xe9t\xe9.txt"));
    let out = PathBuf::from(OsStr::from_bytes(b"out-\xff"));
    std::fs::write(d.path().join(&input), LINES).unwrap();
    for (i, mut cmd) in front_ends(&input, &out).into_iter().enumerate() {
        let o = run(cmd.current_dir(d.path()));
        assert!(o.status.success(), "front end {i}: {}", stderr(&o));
        assert_eq!(std::fs::read(d.path().join(&out)).unwrap(), SORTED, "front end {i}");
        std::fs::remove_file(d.path().join(&out)).unwrap();
    }
    // GNU's standard output too, and `-T` naming a directory that is not UTF-8.
    let tmp = PathBuf::from(OsStr::from_bytes(b"tmp-\xfe"));
    std::fs::create_dir(d.path().join(&tmp)).unwrap();
    let o = run(oxsort().arg("gnu").arg("-T").arg(&tmp).arg(&input).current_dir(d.path()));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, SORTED);
    // And names read from --files0-from.
    let list = [input.as_os_str().as_bytes(), b"\0"].concat();
    std::fs::write(d.path().join("names"), list).unwrap();
    let o = run(oxsort().args(["gnu", "--files0-from", "names"]).current_dir(d.path()));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, SORTED);
}

#[test]
fn an_output_name_with_a_trailing_slash_is_refused_before_any_work() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("file"), b"old\n").unwrap();
    for name in ["out.dat/", "file/"] {
        let gnu = run(Command::new("/usr/bin/sort")
            .args(["-o", name, "-"])
            .current_dir(d.path())
            .stdin(Stdio::null()));
        assert!(!gnu.status.success(), "GNU sort takes {name}");
        let mut cmd = oxsort();
        cmd.args(["sort", "--lines", "--no-progress", "-", "-o", name]).current_dir(d.path());
        let o = run_with_input_held_open(&mut cmd)
            .unwrap_or_else(|| panic!("-o {name}: not refused before reading the input"));
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains(&format!("{name}: Is a directory")), "{}", stderr(&o));
        assert!(!d.path().join("out.dat").exists());
        assert_eq!(std::fs::read(d.path().join("file")).unwrap(), b"old\n");
        assert!(leftovers(d.path()).is_empty());
    }
}

#[test]
fn outfil_outputs_naming_the_output_or_the_summary_are_refused_before_any_work() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.dat");
    common::gen(&input, 1000);
    let ctl = d.path().join("job.ctl");
    std::fs::write(&ctl, " SORT FIELDS=(1,10,CH,A)\n OUTFIL FNAMES=AA\n").unwrap();
    let out = d.path().join("out.dat");
    std::fs::write(&out, b"previous output").unwrap();
    std::os::unix::fs::symlink("out.dat", d.path().join("out-link")).unwrap();
    let aa = d.path().join("aa.dat");
    let job = |aa_path: &Path, summary: Option<&Path>| {
        let mut c = oxsort();
        c.args(["sort", "--no-progress", "--control"]).arg(&ctl);
        c.arg("--dd").arg(format!("SORTIN={}", input.display()));
        c.arg("--dd").arg(format!("SORTOUT={}", out.display()));
        c.arg("--dd").arg(format!("AA={}", aa_path.display()));
        if let Some(s) = summary {
            c.arg("--summary").arg(s);
        }
        run(&mut c)
    };
    let o = job(&d.path().join("out-link"), None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("the OUTFIL output AA"), "{}", stderr(&o));
    assert!(stderr(&o).contains("is the same file as the output"), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(d.path().join("out-link")).unwrap().is_symlink());
    std::fs::write(&aa, b"previous AA").unwrap();
    let o = job(&aa, Some(&aa));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("is the same file as the OUTFIL output AA"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&aa).unwrap(), b"previous AA");
    assert_eq!(std::fs::read(&out).unwrap(), b"previous output");
    assert!(leftovers(d.path()).is_empty());
    // Apart, the job runs.
    let o = job(&aa, Some(&d.path().join("sum")));
    assert!(o.status.success(), "{}", stderr(&o));
}

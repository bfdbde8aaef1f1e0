//! AtomicOutput replaces a file as GNU sort does: the temporary is 0600 while written and takes
//! the replaced file's mode at commit; a hard-linked file is written in place (same inode); a
//! symlink is written through; `inspect_output` says how, and refuses `name/`.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use oxsort_io::{inspect_output, AtomicOutput, InPlace, IoOptions};

fn mode(p: &std::path::Path) -> u32 {
    std::fs::metadata(p).unwrap().mode() & 0o7777
}

#[test]
fn the_temporary_is_private_and_takes_the_mode_of_the_file_it_replaces() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    std::fs::write(&f, b"old").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o604)).unwrap();
    let out = AtomicOutput::create(&f, &IoOptions::default()).unwrap();
    assert!(!out.is_in_place());
    assert_eq!(mode(out.file().path()), 0o600);
    out.file().write_at(b"new", 0).unwrap();
    out.commit().unwrap();
    assert_eq!(mode(&f), 0o604);
    assert_eq!(std::fs::read(&f).unwrap(), b"new");
}

#[test]
fn a_hard_linked_file_is_written_in_place_and_a_symlink_through() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    std::fs::write(&f, b"an older, longer content").unwrap();
    std::fs::hard_link(&f, d.path().join("h")).unwrap();
    std::os::unix::fs::symlink("f", d.path().join("l")).unwrap();
    let plan = inspect_output(&d.path().join("l")).unwrap();
    assert_eq!((plan.target.clone(), plan.in_place), (f.clone(), Some(InPlace::HardLinks(2))));
    let ino = std::fs::metadata(&f).unwrap().ino();
    let out = AtomicOutput::create(&d.path().join("l"), &IoOptions::default()).unwrap();
    assert!(out.is_in_place());
    out.file().write_at(b"new", 0).unwrap();
    out.file().set_len(3).unwrap();
    assert_eq!(std::fs::read(&f).unwrap(), b"an older, longer content");
    out.commit().unwrap();
    assert_eq!(std::fs::metadata(&f).unwrap().ino(), ino);
    assert_eq!(std::fs::read(d.path().join("h")).unwrap(), b"new");
    assert!(std::fs::symlink_metadata(d.path().join("l")).unwrap().is_symlink());
    let mut names: Vec<_> =
        std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["f", "h", "l"]);
}

#[test]
fn a_trailing_slash_is_refused_as_open_refuses_it() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), b"x").unwrap();
    for name in ["f/", "new/"] {
        let e = inspect_output(&d.path().join(name)).unwrap_err();
        assert_eq!(e.io_error().raw_os_error(), Some(libc::EISDIR), "{name}");
        assert!(AtomicOutput::create(&d.path().join(name), &IoOptions::default()).is_err());
    }
    assert!(!d.path().join("new").exists());
}

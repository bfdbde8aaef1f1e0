//! Non-seekable files (pipes, character devices) and error paths: injected faults and a real
//! full device.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;

use oxsort_io::{
    uring_probe, AlignedBuf, Backend, DirectFile, FaultPlan, IoError, IoOptions, Reader, Writer,
};

const T: usize = 64 * 1024;

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 4099) as u8).collect()
}

/// Backends to try for seekable files: threads always, io_uring when the probe allows.
fn option_sets() -> Vec<IoOptions> {
    let mut v = vec![IoOptions { no_uring: true, ..Default::default() }];
    match uring_probe() {
        Ok(()) => v.push(IoOptions::default()),
        Err(why) => eprintln!("SKIP io_uring variants: {why}"),
    }
    v
}

#[test]
fn reader_reads_a_pipe_sequentially_to_the_end() {
    for len in [0, 1, 4095, T - 1, T, T + 1, 3 * T + 7] {
        // `cat` turns the bytes we feed it into a pipe we read from.
        let mut cat =
            Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let mut stdin = cat.stdin.take().unwrap();
        let data = pattern(len);
        let feed = {
            let data = data.clone();
            std::thread::spawn(move || stdin.write_all(&data).unwrap())
        };
        let out = File::from(OwnedFd::from(cat.stdout.take().unwrap()));
        let opts = IoOptions::default();
        let f = Arc::new(DirectFile::from_std(out, PathBuf::from("<pipe>"), &opts));
        assert!(!f.is_seekable() && !f.is_direct());
        let mut r = Reader::new(f, 0..u64::MAX, T, 4, &opts).unwrap();
        assert_eq!(r.backend(), Backend::Sequential);
        let mut got = Vec::new();
        while let Some(c) = r.next_chunk() {
            let c = c.unwrap();
            assert_eq!(c.offset, got.len() as u64);
            got.extend_from_slice(c.data());
            r.recycle(c.buf);
        }
        assert!(got == data, "len={len}");
        feed.join().unwrap();
        cat.wait().unwrap();
    }
}

#[test]
fn writer_writes_a_pipe_in_order() {
    let mut cat = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdout = cat.stdout.take().unwrap();
    let drain = std::thread::spawn(move || {
        let mut v = Vec::new();
        stdout.read_to_end(&mut v).unwrap();
        v
    });
    let opts = IoOptions::default();
    let input = File::from(OwnedFd::from(cat.stdin.take().unwrap()));
    let f = Arc::new(DirectFile::from_std(input, PathBuf::from("<stdout>"), &opts));
    let mut w = Writer::new(f.clone(), 0, 4, &opts).unwrap();
    assert_eq!(w.backend(), Backend::Sequential);
    let data = pattern(7 * T + 5);
    for piece in data.chunks(T) {
        let mut b = w.take_buf().unwrap_or_else(|| AlignedBuf::new(T));
        b[..piece.len()].copy_from_slice(piece);
        w.write(b, piece.len()).unwrap();
    }
    w.finish().unwrap();
    drop(f); // closes the pipe: cat sees EOF
    assert!(drain.join().unwrap() == data);
    cat.wait().unwrap();
}

#[test]
fn injected_read_fault_names_path_and_offset() {
    for base in option_sets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.dat");
        std::fs::write(&path, pattern(6 * T)).unwrap();
        let plan = Arc::new(FaultPlan::fail_read(3, libc::EIO));
        let opts = IoOptions { faults: Some(plan.clone()), ..base.clone() };
        let f = Arc::new(DirectFile::open(&path, &opts).unwrap());
        let mut r = Reader::new(f, 0..6 * T as u64, T, 2, &opts).unwrap();
        assert!(r.next_chunk().unwrap().is_ok());
        assert!(r.next_chunk().unwrap().is_ok());
        let e = r.next_chunk().unwrap().unwrap_err();
        assert!(matches!(e, IoError::Read { offset, .. } if offset == 2 * T as u64), "{e:?}");
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
        let msg = e.to_string();
        assert!(msg.contains(&path.display().to_string()) && msg.contains("Input/output error"));
        assert!(r.next_chunk().is_none(), "nothing after an error");
        drop(r);
        // The plan counts across files: the next file's first read is number 4+.
        let g = DirectFile::open(&path, &opts).unwrap();
        let before = plan.reads();
        g.read_at(&mut [0u8; 10], 0).unwrap();
        assert_eq!(plan.reads(), before + 1);
    }
}

#[test]
fn injected_direct_file_faults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x");
    let plan = Arc::new(FaultPlan::fail_read(1, libc::EIO).and_fail_write(2, libc::ENOSPC));
    let opts = IoOptions { faults: Some(plan), ..Default::default() };
    let f = DirectFile::create(&path, &opts).unwrap();
    f.write_at(b"abc", 0).unwrap();
    let e = f.write_at(b"def", 3).unwrap_err();
    assert!(e.is_no_space() && e.path() == path, "{e}");
    let e = f.read_at(&mut [0u8; 3], 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("reading {} at offset 0: Input/output error", path.display())
    );
    let mut b = [0u8; 3];
    assert_eq!(f.read_at(&mut b, 0).unwrap(), 3);
    assert_eq!(&b, b"abc");
}

#[test]
fn injected_write_fault_surfaces_from_the_writer() {
    for base in option_sets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.dat");
        let opts = IoOptions {
            faults: Some(Arc::new(FaultPlan::fail_write(2, libc::ENOSPC))),
            ..base.clone()
        };
        let f = Arc::new(DirectFile::create(&path, &opts).unwrap());
        let mut w = Writer::new(f, 0, 4, &opts).unwrap();
        let mut first_err = None;
        for _ in 0..6 {
            if let Err(e) = w.write(AlignedBuf::new(T), T) {
                first_err = Some(e);
                break;
            }
        }
        let e = match first_err {
            Some(e) => e,
            None => w.finish().unwrap_err(),
        };
        assert!(matches!(e, IoError::NoSpace { offset, .. } if offset == T as u64), "{e:?}");
        assert_eq!(e.path(), path);
    }
}

#[test]
fn a_full_device_is_no_space() {
    // /dev/full fails every write with ENOSPC: a real full device, not an injected one.
    let full = std::path::Path::new("/dev/full");
    if !full.exists() {
        eprintln!("SKIP: /dev/full not present");
        return;
    }
    let opts = IoOptions::default();
    let f = DirectFile::create(full, &opts).unwrap();
    let e = f.write_at(b"x", 0).unwrap_err();
    assert!(e.is_no_space(), "{e}");
    assert!(e.to_string().contains("/dev/full"), "{e}");
    let f = DirectFile::create(full, &opts).unwrap();
    let mut w = Writer::new(Arc::new(f), 0, 2, &opts).unwrap();
    let r = w.write(AlignedBuf::new(T), T);
    let e = match r {
        Err(e) => e,
        Ok(()) => w.finish().unwrap_err(),
    };
    assert!(e.is_no_space(), "{e}");
}

#[test]
fn preallocate_set_len_and_free_space() {
    let dir = tempfile::tempdir().unwrap();
    let f = DirectFile::create(&dir.path().join("p"), &IoOptions::default()).unwrap();
    f.preallocate(10 * T as u64).unwrap();
    assert_eq!(f.len().unwrap(), 10 * T as u64);
    f.set_len(5).unwrap();
    assert_eq!(f.len().unwrap(), 5);
    f.sync().unwrap();
    assert!(oxsort_io::free_space(dir.path()).unwrap() > 0);
    oxsort_io::check_dir_writable(dir.path()).unwrap();
    assert!(oxsort_io::check_dir_writable(&dir.path().join("p")).is_err());
    assert!(oxsort_io::check_dir_writable(&dir.path().join("missing")).is_err());
    let e = DirectFile::open(&dir.path().join("missing"), &IoOptions::default()).unwrap_err();
    assert!(matches!(e, IoError::Open { .. }) && e.to_string().contains("missing"), "{e}");
}

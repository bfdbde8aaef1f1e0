//! Round trips through DirectFile, Reader and Writer over sizes that straddle DIRECT_ALIGN and
//! the transfer size, for every backend and file system this machine offers.

use std::path::Path;
use std::sync::Arc;

use oxsort_io::{
    uring_probe, AlignedBuf, Backend, DirectFile, IoOptions, Reader, Writer, DIRECT_ALIGN,
};

const T: usize = 64 * 1024; // transfer size used by the pipeline tests

fn sizes() -> Vec<usize> {
    let a = DIRECT_ALIGN;
    vec![0, 1, a - 1, a, a + 1, T - 1, T, T + 1, 3 * T + 4097, 5 * T + 123]
}

/// Deterministic, position-dependent bytes, so misplaced pieces are caught.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A named configuration: where files live and which options to use.
struct Config {
    name: String,
    dir: tempfile::TempDir,
    opts: IoOptions,
    expect_backend: Backend,
}

/// Every configuration usable here; skipped ones are printed with the reason.
fn configs() -> Vec<Config> {
    let mut v = Vec::new();
    let uring = uring_probe();
    if let Err(why) = &uring {
        eprintln!("SKIP io_uring configurations: {why}");
    }
    let shm = Path::new("/dev/shm");
    for (fs, parent) in [("disk", std::env::temp_dir()), ("tmpfs", shm.to_path_buf())] {
        if !parent.is_dir() {
            eprintln!("SKIP {fs}: {} not present", parent.display());
            continue;
        }
        for buffered in [false, true] {
            for no_uring in [false, true] {
                if !no_uring && uring.is_err() {
                    continue;
                }
                let backend = if no_uring { Backend::Threads } else { Backend::Uring };
                v.push(Config {
                    name: format!("{fs} buffered={buffered} no_uring={no_uring}"),
                    dir: tempfile::tempdir_in(&parent).expect("temp dir"),
                    opts: IoOptions { buffered, no_uring, faults: None },
                    expect_backend: backend,
                });
            }
        }
    }
    v
}

#[test]
fn direct_file_round_trips_at_any_offset_and_length() {
    for c in configs() {
        for &len in &sizes() {
            for &offset in &[0u64, 1, 4095, 4096, 3 * 4096 + 17] {
                let path = c.dir.path().join(format!("f-{len}-{offset}"));
                let data = pattern(len, len as u64 ^ offset);
                let f = DirectFile::create(&path, &c.opts).unwrap();
                if c.opts.buffered {
                    assert!(!f.is_direct(), "{}", c.name);
                } else if c.name.starts_with("disk") {
                    assert!(f.is_direct(), "{}: O_DIRECT expected on the disk", c.name);
                }
                // Aligned memory too, so the direct body is exercised.
                let mut abuf = AlignedBuf::new(len);
                abuf[..len].copy_from_slice(&data);
                f.write_at(&abuf[..len], offset).unwrap();
                assert_eq!(f.len().unwrap(), if len == 0 { 0 } else { offset + len as u64 });
                drop(f);

                let f = DirectFile::open(&path, &c.opts).unwrap();
                let mut back = AlignedBuf::new(len + 2 * DIRECT_ALIGN);
                let n = f.read_at(&mut back[..len + 10], offset).unwrap();
                assert_eq!(n, len, "{} len={len} offset={offset}", c.name);
                assert!(back[..len] == data[..], "{} len={len} offset={offset}", c.name);
                // Unaligned memory: everything goes through the buffered descriptor.
                let mut v = vec![0u8; len + 1];
                let n = f.read_at(&mut v[1..], offset).unwrap();
                assert_eq!(n, len);
                assert!(v[1..] == data[..]);
                std::fs::remove_file(&path).unwrap();
            }
        }
        let probe = DirectFile::create(&c.dir.path().join("probe"), &c.opts).unwrap();
        eprintln!("ok: DirectFile round trips, {} (direct: {})", c.name, probe.is_direct());
    }
}

fn write_with_writer(path: &Path, data: &[u8], opts: &IoOptions, expect: Backend) {
    let f = Arc::new(DirectFile::create(path, opts).unwrap());
    let mut w = Writer::new(f.clone(), 0, 3, opts).unwrap();
    assert_eq!(w.backend(), expect);
    for piece in data.chunks(T) {
        let mut buf = w.take_buf().unwrap_or_else(|| AlignedBuf::new(T));
        buf[..piece.len()].copy_from_slice(piece);
        w.write(buf, piece.len()).unwrap();
    }
    let stats = w.finish().unwrap();
    assert_eq!(stats.bytes, data.len() as u64);
    assert_eq!(stats.transfers, data.len().div_ceil(T) as u64);
    f.sync().unwrap();
}

fn read_with_reader(
    path: &Path,
    range: std::ops::Range<u64>,
    opts: &IoOptions,
    expect: Backend,
) -> Vec<u8> {
    let f = Arc::new(DirectFile::open(path, opts).unwrap());
    let mut r = Reader::new(f, range.clone(), T, 4, opts).unwrap();
    assert_eq!(r.backend(), expect);
    let mut out = Vec::new();
    let mut expect_off = range.start;
    while let Some(c) = r.next_chunk() {
        let c = c.unwrap();
        assert_eq!(c.offset, expect_off);
        assert!(c.len > 0 && c.len <= T);
        out.extend_from_slice(c.data());
        expect_off += c.len as u64;
        r.recycle(c.buf);
    }
    assert!(r.next_chunk().is_none());
    assert_eq!(r.stats().bytes, out.len() as u64);
    out
}

#[test]
fn reader_and_writer_round_trip_every_backend() {
    for c in configs() {
        for &len in &sizes() {
            let path = c.dir.path().join(format!("p-{len}"));
            let data = pattern(len, len as u64);
            write_with_writer(&path, &data, &c.opts, c.expect_backend);
            assert_eq!(std::fs::read(&path).unwrap(), data, "{} len={len}", c.name);
            let back = read_with_reader(&path, 0..len as u64, &c.opts, c.expect_backend);
            assert!(back == data, "{} len={len}", c.name);
            // A range past the end of the file stops at end of file.
            let back =
                read_with_reader(&path, 0..len as u64 + 3 * T as u64, &c.opts, c.expect_backend);
            assert!(back == data, "{} len={len} (range past EOF)", c.name);
            // Sub-ranges with unaligned ends.
            if len > 2 * DIRECT_ALIGN {
                let (s, e) = (DIRECT_ALIGN as u64 + 7, len as u64 - 5);
                let back = read_with_reader(&path, s..e, &c.opts, c.expect_backend);
                assert!(back == data[s as usize..e as usize], "{} len={len} sub-range", c.name);
            }
            std::fs::remove_file(&path).unwrap();
        }
        eprintln!("ok: Reader/Writer round trips, {}", c.name);
    }
}

#[test]
fn writer_with_unaligned_lengths_still_writes_everything() {
    for c in configs() {
        let path = c.dir.path().join("odd");
        let f = Arc::new(DirectFile::create(&path, &c.opts).unwrap());
        let mut w = Writer::new(f, 0, 2, &c.opts).unwrap();
        let mut expect = Vec::new();
        for (i, len) in [T, 100, T, 4096, 1].into_iter().enumerate() {
            let mut b = AlignedBuf::new(T);
            b.fill(i as u8 + 1);
            w.write(b, len).unwrap();
            expect.extend(std::iter::repeat_n(i as u8 + 1, len));
        }
        w.finish().unwrap();
        assert!(std::fs::read(&path).unwrap() == expect, "{}", c.name);
    }
}

#[test]
fn dropping_pipelines_mid_stream_is_safe() {
    for c in configs() {
        let path = c.dir.path().join("drop");
        let data = pattern(8 * T, 1);
        std::fs::write(&path, &data).unwrap();
        let f = Arc::new(DirectFile::open(&path, &c.opts).unwrap());
        let mut r = Reader::new(f.clone(), 0..data.len() as u64, T, 8, &c.opts).unwrap();
        let first = r.next_chunk().unwrap().unwrap();
        assert!(first.data() == &data[..T]);
        drop(r); // seven reads may still be in flight
        let f = Arc::new(DirectFile::create(&path, &c.opts).unwrap());
        let mut w = Writer::new(f, 0, 8, &c.opts).unwrap();
        for _ in 0..8 {
            w.write(AlignedBuf::new(T), T).unwrap();
        }
        drop(w);
    }
}

//! `oxsort pool SIZE` keeps the reserved pool's pages in a file on a hugetlbfs mount, and sorts
//! map them with whatever bytes the last user left there: the sorts' outputs are right whatever
//! the pages hold, two sorts at once share the pool, and `oxsort pool off` takes the file, the
//! mount and the pool away; `--no-keep` reserves without the file. Root only, and only where no pool is reserved (the test must not
//! take a pool that is in use away); it says so when it skips.

mod common;

use std::path::Path;
use std::process::Stdio;

use common::{assert_sorted_permutation, gen, oxsort, run, stderr};
use oxsort_io::warm::KEPT_FILE;
use oxsort_testkit::{seed, Rng};

const NR_HUGEPAGES: &str = "/proc/sys/vm/nr_hugepages";

/// Gives the pool back however the test ends.
struct Release;

impl Drop for Release {
    fn drop(&mut self) {
        let _ = oxsort().args(["pool", "off"]).output();
    }
}

/// Fills every page of the kept file with `byte`, or reports whether they all still hold it.
fn kept_bytes(byte: u8, fill: bool) -> bool {
    let f = std::fs::OpenOptions::new().read(true).write(true).open(KEPT_FILE).expect("kept file");
    let len = f.metadata().expect("its size").len() as usize;
    use std::os::fd::AsRawFd;
    // SAFETY: a new shared mapping of the whole kept file, unmapped below; the sorts that
    // share its pages have ended.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED, "mapping the kept file");
        let s = std::slice::from_raw_parts_mut(p.cast::<u8>(), len);
        let all = if fill {
            s.fill(byte);
            true
        } else {
            s.iter().all(|&b| b == byte)
        };
        libc::munmap(p, len);
        all
    }
}

/// Lines of 1 to 300 bytes, the last without its newline; and GNU-sort-free expected output
/// (bytewise, stable).
fn lines(path: &Path, n: usize, rng: &mut Rng) -> Vec<u8> {
    let mut all: Vec<Vec<u8>> = (0..n)
        .map(|_| (0..1 + rng.below(300)).map(|_| b' ' + rng.below(95) as u8).collect())
        .collect();
    let mut data = all.join(&b'\n');
    std::fs::write(path, &data).expect("input");
    all.sort();
    data = all.join(&b'\n');
    data.push(b'\n');
    data
}

#[test]
fn a_kept_pool_serves_sorts_whatever_its_pages_hold_and_goes_when_released() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let pages = std::fs::read_to_string(NR_HUGEPAGES).ok().and_then(|s| s.trim().parse().ok());
    if !root || pages != Some(0u64) || Path::new(KEPT_FILE).exists() {
        eprintln!("skipped: needs root, no hugetlb pool reserved and no kept pool");
        return;
    }
    let _release = Release;
    let o = run(oxsort().args(["pool", "96M"]));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    if !o.status.success() || stderr(&o).contains("not kept") {
        eprintln!("skipped: no kept pool here: {}{}", out, stderr(&o));
        return;
    }
    assert!(out.contains("kept warm: 48 pages in /run/oxsort/hugepages/pool"), "{out}");
    assert_eq!(std::fs::metadata(KEPT_FILE).expect("the kept file").len(), 96 << 20);
    assert!(run(oxsort().arg("pool")).stdout.starts_with(b"hugetlb pool: 48 pages"));

    // Pages full of a byte no sort writes where a record is not: any byte of a buffer read
    // before it is written shows in the output or fails its check.
    kept_bytes(0xA5, true);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut rng = Rng::new(seed());
    let text = dir.path().join("lines.txt");
    let want = lines(&text, 150_000, &mut rng);
    let recs = dir.path().join("recs.dat");
    let checksum = gen(&recs, 200_000);
    let sort = |input: &Path, out: &Path, lines: bool| {
        let mut c = oxsort();
        c.args(["sort", "--memory", "64M", "--no-progress"]);
        if lines {
            c.arg("--lines");
        }
        c.arg(input).arg("-o").arg(out).stdout(Stdio::null()).stderr(Stdio::piped());
        c
    };
    // One at a time, then both at once (each claims its own pages, or falls back).
    for round in 0..2 {
        let (a, b) = (dir.path().join("lines.out"), dir.path().join("recs.out"));
        let first = sort(&text, &a, true).spawn().expect("spawned");
        if round == 0 {
            let o = first.wait_with_output().expect("waited");
            assert!(o.status.success(), "{}", stderr(&o));
            let o = run(&mut sort(&recs, &b, false));
            assert!(o.status.success(), "{}", stderr(&o));
        } else {
            let second = sort(&recs, &b, false).spawn().expect("spawned");
            for o in [first.wait_with_output(), second.wait_with_output()] {
                let o = o.expect("waited");
                assert!(o.status.success(), "{}", stderr(&o));
            }
        }
        assert!(std::fs::read(&a).expect("sorted lines") == want, "round {round}: lines differ");
        assert_sorted_permutation(&b, 200_000, checksum);
    }
    assert!(!kept_bytes(0xA5, false), "the sorts did not use the kept pool");

    let o = run(oxsort().args(["pool", "off"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!Path::new(KEPT_FILE).exists());
    let now = std::fs::read_to_string(NR_HUGEPAGES).expect("nr_hugepages");
    assert_eq!(now.trim(), "0");

    // Warmed but not kept: the pages stay free for any process to map.
    let o = run(oxsort().args(["pool", "8M", "--no-keep"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.starts_with("hugetlb pool: 4 pages of 2 MiB (8.00 MiB), 4 free"), "{out}");
    assert!(!out.contains("kept") && !Path::new(KEPT_FILE).exists(), "{out}");
    let o = run(oxsort().args(["pool", "off", "--no-keep"]));
    assert!(!o.status.success() && stderr(&o).contains("--no-keep goes with a size"));
}

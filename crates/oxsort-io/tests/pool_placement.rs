//! Pool mappings made one after another all get pool pages: each needs its header page before
//! it and its tail after it free, where the kernel packs a new mapping against the last one.
//! A test binary of its own: the pool is the machine's, and the library's tests in one process
//! take its pages at the same time.

use oxsort_io::bigmem::{hugetlb_bytes, map, unmap};
use oxsort_io::tuning::HUGETLB_PAGE;

const NR_HUGEPAGES: &str = "/proc/sys/vm/nr_hugepages";

/// Buffers mapped in a row.
const BUFFERS: usize = 24;

/// The pool reserved for the test, given back when dropped.
struct Reserved;

impl Drop for Reserved {
    fn drop(&mut self) {
        let _ = std::fs::write(NR_HUGEPAGES, "0");
    }
}

#[test]
fn pool_mappings_in_a_row_all_get_pool_pages() {
    // Only as root with no pool in use: the count of pool bytes mapped is then this test's.
    let empty = std::fs::read_to_string(NR_HUGEPAGES).is_ok_and(|s| s.trim() == "0");
    if !empty || std::fs::write(NR_HUGEPAGES, (2 * BUFFERS).to_string()).is_err() {
        eprintln!("skipped: needs root and no hugetlb pool reserved");
        return;
    }
    let _reserved = Reserved;
    // Two pages and a quarter: a tail on ordinary pages after the pool's.
    let len = 2 * HUGETLB_PAGE + HUGETLB_PAGE / 4;
    let maps: Vec<*mut u8> = (0..BUFFERS).map(|_| map(len)).collect();
    assert_eq!(hugetlb_bytes(), (BUFFERS * 2 * HUGETLB_PAGE) as u64, "every head pooled");
    for p in maps {
        // SAFETY: p is a fresh mapping of len bytes from `map`, written then unmapped once.
        unsafe {
            std::ptr::write_bytes(p, 0x5A, len);
            unmap(p, len);
        }
    }
    assert_eq!(hugetlb_bytes(), 0);
}

//! Big anonymous mappings: huge pages from the kernel's hugetlb pool when one is reserved,
//! transparent huge pages otherwise; and [`BigAlloc`], a global allocator that serves every big
//! allocation (entry arrays, offsets) from the same place.
//!
//! Why a pool matters: on virtual machines with free-page reporting (virtio-balloon), memory a
//! process frees goes back to the host within seconds, and getting it back costs a host-side
//! fault per page. Measured on a 2-core Firecracker guest: populating 4 GiB of such memory took
//! 8.8–9.7 s on one thread (4.4 s on two), against 0.35 s when the pages were still backed. A
//! one-pass sort of 4 GB holds all of its input in memory, so every run would pay seconds that
//! the disk never sees. Pages in a hugetlb pool (`vm.nr_hugepages`) are never returned to the
//! buddy allocator, so the host keeps them backed from one sort to the next: the cost is paid
//! once, when the pool is first touched. Without a pool the mapping falls back to ordinary pages
//! advised with `MADV_HUGEPAGE`, exactly as before.
//!
//! Layout of one mapping of `len` bytes (the returned pointer is `a`):
//!
//! ```text
//!   a - 4 KiB      a (2 MiB aligned)                      a + head          a + len
//!   ┌──────────┬──────────────────────────────────────┬──────────────────┐
//!   │ header   │ hugetlb pages (pool), head bytes      │ 4 KiB pages      │
//!   │ (kind)   │   or ordinary pages + MADV_HUGEPAGE   │ tail < 2 MiB     │
//!   └──────────┴──────────────────────────────────────┴──────────────────┘
//! ```
//!
//! The header page records which kind the head is, so [`unmap`] keeps the pool counters exact
//! without any table. Set `OXSORT_HUGETLB=off` in the environment (or call [`set_hugetlb`]) to
//! never use the pool.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use crate::tuning::{DIRECT_ALIGN, HUGETLB_PAGE};

/// Allocations of at least this many bytes go through [`map`] in [`BigAlloc`]: one huge page,
/// the smallest allocation the pool can serve without waste.
pub const BIG_ALLOC: usize = HUGETLB_PAGE;

/// Size of the header page in front of every mapping.
const HEADER: usize = DIRECT_ALIGN;

/// Header values: what backs the head of the mapping.
const KIND_ORDINARY: u8 = 1;
const KIND_POOL: u8 = 2;

/// Policy: 0 = not read yet, 1 = use the pool when it has pages, 2 = never.
static POLICY: AtomicU8 = AtomicU8::new(0);
/// Set after the pool refused a mapping, so the next ones skip the attempt until memory from the
/// pool is given back (a refused `mmap` costs little, but big sorts make thousands).
static POOL_REFUSED: AtomicBool = AtomicBool::new(false);
static POOL_NOW: AtomicU64 = AtomicU64::new(0);
static POOL_PEAK: AtomicU64 = AtomicU64::new(0);

/// Turns use of the hugetlb pool on or off for this process (default on, unless the environment
/// sets `OXSORT_HUGETLB=off`).
pub fn set_hugetlb(enabled: bool) {
    POLICY.store(if enabled { 1 } else { 2 }, Ordering::Relaxed);
}

fn hugetlb_enabled() -> bool {
    match POLICY.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            // std::env::var_os allocates only a few bytes, served by System below BIG_ALLOC.
            let off = std::env::var_os("OXSORT_HUGETLB").is_some_and(|v| v == "off" || v == "0");
            set_hugetlb(!off);
            !off
        }
    }
}

/// Bytes of hugetlb-pool memory this process has mapped right now.
pub fn hugetlb_bytes() -> u64 {
    POOL_NOW.load(Ordering::Relaxed)
}

/// The most hugetlb-pool memory this process had mapped at once. These pages are not part of
/// the resident set the kernel reports (`VmHWM`), so peak memory is `VmHWM` plus this.
pub fn hugetlb_peak() -> u64 {
    POOL_PEAK.load(Ordering::Relaxed)
}

/// Maps `len` zeroed bytes (`len` a non-zero multiple of [`DIRECT_ALIGN`]), 2 MiB aligned.
/// Returns null if the address space or memory is not available.
pub fn map(len: usize) -> *mut u8 {
    debug_assert!(len > 0 && len % DIRECT_ALIGN == 0);
    let Some(reserve) = len.checked_add(HEADER + HUGETLB_PAGE) else {
        return ptr::null_mut();
    };
    // SAFETY: a fresh PROT_NONE reservation with a null hint has no preconditions; the result is
    // checked before use.
    let base = unsafe {
        libc::mmap(
            ptr::null_mut(),
            reserve,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return ptr::null_mut();
    }
    let base = base as usize;
    let a = (base + HEADER).next_multiple_of(HUGETLB_PAGE);
    let start = a - HEADER;
    let end = a + len;
    // SAFETY: the two trimmed ranges lie inside the reservation just made and nothing uses them.
    unsafe {
        if start > base {
            libc::munmap(base as *mut libc::c_void, start - base);
        }
        if base + reserve > end {
            libc::munmap(end as *mut libc::c_void, base + reserve - end);
        }
    }
    let fixed = |at: usize, n: usize, extra: libc::c_int| -> bool {
        // SAFETY: [at, at+n) lies inside [start, end), which this function reserved and owns;
        // MAP_FIXED replaces only that reservation.
        let p = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                n,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | extra,
                -1,
                0,
            )
        };
        p != libc::MAP_FAILED
    };
    let head = len / HUGETLB_PAGE * HUGETLB_PAGE;
    let mut kind = KIND_ORDINARY;
    if head > 0 && hugetlb_enabled() && !POOL_REFUSED.load(Ordering::Relaxed) {
        if fixed(a, head, libc::MAP_HUGETLB | libc::MAP_HUGE_2MB) {
            kind = KIND_POOL;
            let now = POOL_NOW.fetch_add(head as u64, Ordering::Relaxed) + head as u64;
            POOL_PEAK.fetch_max(now, Ordering::Relaxed);
        } else {
            POOL_REFUSED.store(true, Ordering::Relaxed);
        }
    }
    let ok = fixed(start, HEADER, 0)
        && if kind == KIND_POOL {
            head == len || fixed(a + head, len - head, 0)
        } else {
            fixed(a, len, 0)
        };
    if !ok {
        // SAFETY: [start, end) is this function's reservation; nothing else refers to it.
        unsafe { unmap_range(start, end, kind, head) };
        return ptr::null_mut();
    }
    if kind == KIND_ORDINARY {
        // SAFETY: [a, a+len) was just mapped; the advice only changes paging policy, and its
        // failure (THP disabled) is harmless.
        unsafe { libc::madvise(a as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
    }
    // SAFETY: the header page [start, a) is mapped read-write and owned by this mapping.
    unsafe { (start as *mut u8).write(kind) };
    a as *mut u8
}

/// Unmaps what [`map`] returned.
///
/// # Safety
/// `p` and `len` must be a pointer returned by [`map`] and the length given to it, unmapped
/// once, with no references into the memory left.
pub unsafe fn unmap(p: *mut u8, len: usize) {
    let a = p as usize;
    // SAFETY: by the contract, the header page in front of `p` is mapped and holds the kind.
    let kind = unsafe { p.sub(HEADER).read() };
    let head = len / HUGETLB_PAGE * HUGETLB_PAGE;
    // SAFETY: by the contract, [a - HEADER, a + len) is one live mapping made by `map`.
    unsafe { unmap_range(a - HEADER, a + len, kind, head) };
}

unsafe fn unmap_range(start: usize, end: usize, kind: u8, head: usize) {
    // SAFETY: the caller owns [start, end); one munmap removes every piece of it (the pool part
    // starts and ends on 2 MiB boundaries, as munmap requires for hugetlb pages).
    unsafe { libc::munmap(start as *mut libc::c_void, end - start) };
    if kind == KIND_POOL {
        POOL_NOW.fetch_sub(head as u64, Ordering::Relaxed);
        POOL_REFUSED.store(false, Ordering::Relaxed);
    }
}

/// A global allocator that serves allocations of [`BIG_ALLOC`] bytes or more with [`map`] (the
/// hugetlb pool when there is one) and everything else with the system allocator. Binaries opt
/// in with `#[global_allocator]`.
///
/// Growing a big allocation copies it (hugetlb mappings cannot be `mremap`ed freely); vectors
/// that grow geometrically copy each byte a bounded number of times.
pub struct BigAlloc;

fn is_big(l: &Layout) -> bool {
    l.size() >= BIG_ALLOC && l.align() <= DIRECT_ALIGN
}

// SAFETY: big blocks come from `map` (page aligned, at least `size` bytes, zeroed, exclusively
// owned until `dealloc`); small ones from System, which upholds the contract itself. Whether a
// block is big depends only on its layout, which the caller passes back unchanged to `dealloc`
// and `realloc`, so each block is freed by the allocator that made it.
unsafe impl GlobalAlloc for BigAlloc {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if is_big(&l) {
            map(l.size().next_multiple_of(DIRECT_ALIGN))
        } else {
            // SAFETY: forwarded with the caller's (non-zero size) layout.
            unsafe { System.alloc(l) }
        }
    }

    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if is_big(&l) {
            map(l.size().next_multiple_of(DIRECT_ALIGN))
        } else {
            // SAFETY: forwarded with the caller's layout.
            unsafe { System.alloc_zeroed(l) }
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if is_big(&l) {
            // SAFETY: a big layout means `p` came from `map` with this rounded length.
            unsafe { unmap(p, l.size().next_multiple_of(DIRECT_ALIGN)) }
        } else {
            // SAFETY: a small layout means `p` came from System with this layout.
            unsafe { System.dealloc(p, l) }
        }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees new_size, rounded up to l.align(), does not overflow.
        let nl = unsafe { Layout::from_size_align_unchecked(new_size, l.align()) };
        if !is_big(&l) && !is_big(&nl) {
            // SAFETY: both layouts are small: the block is System's and stays System's.
            return unsafe { System.realloc(p, l, new_size) };
        }
        // SAFETY: nl has a non-zero size (new_size > 0 by the realloc contract).
        let q = unsafe { self.alloc(nl) };
        if !q.is_null() {
            // SAFETY: both blocks are live, distinct, and at least min(old, new) bytes long.
            unsafe {
                ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                self.dealloc(p, l);
            }
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_are_aligned_zeroed_writable_and_unmapped() {
        for len in [DIRECT_ALIGN, HUGETLB_PAGE, HUGETLB_PAGE + DIRECT_ALIGN, 3 * HUGETLB_PAGE] {
            let p = map(len);
            assert!(!p.is_null());
            assert_eq!(p as usize % HUGETLB_PAGE, 0);
            // SAFETY: p is a fresh mapping of len bytes.
            let s = unsafe { std::slice::from_raw_parts_mut(p, len) };
            assert!(s.iter().all(|&b| b == 0));
            s.fill(0xA5);
            assert!(hugetlb_peak() >= hugetlb_bytes());
            assert!(s.iter().all(|&b| b == 0xA5));
            // SAFETY: p and len come from map, unmapped once, no references remain.
            unsafe { unmap(p, len) };
        }
    }

    #[test]
    fn the_allocator_serves_big_and_small_blocks_and_grows_them() {
        let a = BigAlloc;
        for (size, grown) in [(100, 200), (100, 3 << 20), (3 << 20, 5 << 20), (5 << 20, 100)] {
            let l = Layout::from_size_align(size, 16).unwrap();
            // SAFETY: non-zero layout; the block is freed below with the layout it has then.
            unsafe {
                let p = a.alloc_zeroed(l);
                assert!(!p.is_null());
                assert!((0..size).all(|i| *p.add(i) == 0));
                for i in 0..size {
                    *p.add(i) = (i % 251) as u8;
                }
                let q = a.realloc(p, l, grown);
                assert!(!q.is_null());
                assert!((0..size.min(grown)).all(|i| *q.add(i) == (i % 251) as u8));
                a.dealloc(q, Layout::from_size_align(grown, 16).unwrap());
            }
        }
    }
}

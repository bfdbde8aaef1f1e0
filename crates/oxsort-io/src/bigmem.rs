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
//! advised with `MADV_HUGEPAGE`.
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
use std::sync::Mutex;

use crate::tuning::{DIRECT_ALIGN, HUGETLB_PAGE};
use crate::warm::Miss;

/// Allocations of at least this many bytes go through [`map`] in [`BigAlloc`]: one huge page,
/// the smallest allocation the pool can serve without waste.
pub const BIG_ALLOC: usize = HUGETLB_PAGE;

/// Size of the header page in front of every mapping.
const HEADER: usize = DIRECT_ALIGN;

/// Header values: what backs the head of the mapping.
const KIND_ORDINARY: u8 = 1;
const KIND_POOL: u8 = 2;
/// Pages of the kept pool ([`crate::warm`]); the header's second word is the first page's
/// index in the kept file.
const KIND_KEPT: u8 = 3;
/// Where in the header page a kept mapping's first page index is.
const KEPT_INDEX_AT: usize = 8;

/// Policy: 0 = not read yet, 1 = use the pool when it has pages, 2 = never.
static POLICY: AtomicU8 = AtomicU8::new(0);
/// Set after the pool refused a mapping, so the next ones skip the attempt until memory from the
/// pool is given back (a refused `mmap` costs little, but big sorts make thousands).
static POOL_REFUSED: AtomicBool = AtomicBool::new(false);
static POOL_NOW: AtomicU64 = AtomicU64::new(0);
static POOL_PEAK: AtomicU64 = AtomicU64::new(0);
/// The most memory held at once over the intervals closed so far (see [`peak_held`]).
static HELD_PEAK: AtomicU64 = AtomicU64::new(0);
/// Set when the resident set's high-water mark could not be read or reset: [`peak_held`] then
/// adds the two peaks, which may come from different moments (never less than the truth).
static HWM_UNTRACKED: AtomicBool = AtomicBool::new(false);
/// Serializes a change of the pool's holding with the sample that closes the interval before
/// it, so that every interval is measured against the pool bytes held during it.
static POOL_CHANGE: Mutex<()> = Mutex::new(());

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

/// Where the kernel counts the free 2 MiB pool pages.
const POOL_FREE_PAGES: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";

/// Bytes of hugetlb pool this process could map now: the pool's free 2 MiB pages and the kept
/// pool's pages it has not mapped ([`crate::warm`]), or 0 when use of the pool is off
/// (`OXSORT_HUGETLB=off`) or there is no pool.
pub fn pool_free() -> u64 {
    if !hugetlb_enabled() {
        return 0;
    }
    let free = std::fs::read_to_string(POOL_FREE_PAGES)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map_or(0, |pages| pages * HUGETLB_PAGE as u64);
    free + crate::warm::unclaimed()
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

/// The most memory this process held at once: its resident set plus the hugetlb-pool pages it
/// had mapped at that moment. Pool pages are not part of the resident set the kernel counts, and
/// the two peak at different times (the input phase holds its chunks in the pool, the merge its
/// read blocks on ordinary pages), so their sum is not the peak. Every change of the pool's
/// holding closes an interval: the resident set's high-water mark over it (`VmHWM`) plus the
/// pool bytes held throughout it is that interval's peak, and the mark is then reset
/// (`/proc/self/clear_refs`, value 5) for the next. Where the mark cannot be read or reset,
/// the result is the sum of the two peaks, never less than the truth.
///
/// The reset also lowers what `getrusage` and `wait4` report as the process's maximum resident
/// set; it happens only in a process that maps pool pages, whose memory those never counted
/// in full.
pub fn peak_held() -> u64 {
    let _held = POOL_CHANGE.lock().unwrap_or_else(|e| e.into_inner());
    let hwm = vm_hwm();
    if HWM_UNTRACKED.load(Ordering::Relaxed) {
        return hwm.unwrap_or(0) + hugetlb_peak();
    }
    let now = hwm.unwrap_or(0) + hugetlb_bytes();
    HELD_PEAK.load(Ordering::Relaxed).max(now)
}

/// Starts [`peak_held`] and [`hugetlb_peak`] afresh from what the process holds now (a test
/// measuring one sort of several, say).
pub fn reset_peak_held() {
    let _held = POOL_CHANGE.lock().unwrap_or_else(|e| e.into_inner());
    if !reset_hwm() {
        HWM_UNTRACKED.store(true, Ordering::Relaxed);
    }
    HELD_PEAK.store(0, Ordering::Relaxed);
    POOL_PEAK.store(POOL_NOW.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Closes the interval of the pool's current holding (see [`peak_held`]), with the
/// [`POOL_CHANGE`] lock held by the caller, just before the holding changes.
fn close_interval() {
    if HWM_UNTRACKED.load(Ordering::Relaxed) {
        return;
    }
    match vm_hwm() {
        Some(hwm) if reset_hwm() => {
            HELD_PEAK.fetch_max(hwm + POOL_NOW.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        _ => HWM_UNTRACKED.store(true, Ordering::Relaxed),
    }
}

/// The resident set's high-water mark (`VmHWM` of `/proc/self/status`) in bytes. Read into a
/// buffer on the stack: this runs inside the global allocator.
fn vm_hwm() -> Option<u64> {
    let mut buf = [0u8; 4096];
    let n = read_proc(c"/proc/self/status", &mut buf)?;
    let text = &buf[..n];
    let at = text.windows(6).position(|w| w == b"VmHWM:")? + 6;
    let digits = text[at..].iter().skip_while(|b| b.is_ascii_whitespace());
    let mut kib = None::<u64>;
    for &b in digits.take_while(|b| b.is_ascii_digit()) {
        kib = Some(kib.unwrap_or(0) * 10 + u64::from(b - b'0'));
    }
    kib.map(|k| k << 10)
}

/// Resets the resident set's high-water mark to the resident set now (Linux 4.0 and later).
fn reset_hwm() -> bool {
    // SAFETY: open, write and close on a descriptor owned here; the path is a C string.
    unsafe {
        let fd = libc::open(c"/proc/self/clear_refs".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let ok = libc::write(fd, b"5".as_ptr().cast(), 1) == 1;
        libc::close(fd);
        ok
    }
}

/// Reads up to `buf.len()` bytes of a `/proc` file; `None` if it cannot be opened or read.
fn read_proc(path: &std::ffi::CStr, buf: &mut [u8]) -> Option<usize> {
    // SAFETY: open, read and close on a descriptor owned here, into the caller's buffer of
    // buf.len() bytes; the path is a C string.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let mut filled = 0usize;
        while filled < buf.len() {
            let n = libc::read(fd, buf.as_mut_ptr().add(filled).cast(), buf.len() - filled);
            if n <= 0 {
                break;
            }
            filled += n as usize;
        }
        libc::close(fd);
        Some(filled)
    }
}

/// Maps `len` zeroed bytes (rounded up to a multiple of [`DIRECT_ALIGN`]; `len` > 0), 2 MiB
/// aligned. Returns null if the address space or memory is not available.
///
/// Never uses `MAP_FIXED` (which replaces whatever is mapped there, and when it fails may leave
/// a hole another thread's mapping can fall into): the pool's pages, the header before them and
/// the tail after them are mapped at a free place (a span of address space reserved and given
/// back) with `MAP_FIXED_NOREPLACE`, which fails rather than replace; a place taken meanwhile is
/// given up for another, and a pool without pages falls back to ordinary pages.
pub fn map(len: usize) -> *mut u8 {
    map_with(len, false)
}

/// [`map`] for memory whose first bytes nobody reads before writing them: it may come from the
/// kept pool ([`crate::warm`]), whose pages hold what their last user left (and cost no
/// clearing), else it is zeroed as [`map`]'s. The bytes are always initialized memory.
pub fn map_any(len: usize) -> *mut u8 {
    map_with(len, true)
}

fn map_with(len: usize, any: bool) -> *mut u8 {
    debug_assert!(len > 0);
    let len = len.next_multiple_of(DIRECT_ALIGN);
    let head = len / HUGETLB_PAGE * HUGETLB_PAGE;
    if head > 0 && hugetlb_enabled() {
        // Memory that need not start zeroed takes the kept pool first (no clearing at all);
        // memory that must takes the pool's free pages (cleared by the kernel), then the kept
        // pool's, cleared here. Both beat ordinary pages, which the host may have taken back.
        let order =
            if any { [Pages::Kept, Pages::Pool] } else { [Pages::Pool, Pages::KeptCleared] };
        // One thread at a time finds a place and maps there: two would find the same one.
        let _placing = placing();
        'places: for _ in 0..PLACE_ATTEMPTS {
            let Some(at) = place(len) else { break };
            for pages in order {
                match map_at(pages, len, head, at) {
                    Ok(a) => {
                        drop(_placing);
                        if let Pages::KeptCleared = pages {
                            // SAFETY: the kept pages [a, a + head) were just mapped and are
                            // owned here (the tail past them is fresh ordinary memory, zeroed).
                            unsafe { ptr::write_bytes(a, 0, head) };
                        }
                        let _change = POOL_CHANGE.lock().unwrap_or_else(|e| e.into_inner());
                        close_interval();
                        let now = POOL_NOW.fetch_add(head as u64, Ordering::Relaxed) + head as u64;
                        POOL_PEAK.fetch_max(now, Ordering::Relaxed);
                        return a;
                    }
                    Err(Miss::Taken) => continue 'places,
                    Err(Miss::Refused) => {}
                }
            }
            break;
        }
    }
    map_ordinary(len)
}

/// Held from finding a place for a pool mapping ([`place`]) to mapping there: the place is
/// free address space again once found, and another thread's `place` would find it too.
static PLACING: Mutex<()> = Mutex::new(());

/// [`PLACING`], held: also by whatever else reserves address space at a place the kernel picks
/// and maps into it many times a second (a mapped input's pieces), which would otherwise take
/// the place found.
pub(crate) fn placing() -> std::sync::MutexGuard<'static, ()> {
    PLACING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Places tried for one pool mapping before it falls back to ordinary pages: a place found
/// free ([`place`]) can be taken by another thread's mapping before this one is made there.
const PLACE_ATTEMPTS: usize = 4;

/// Where the head of a mapping comes from.
#[derive(Clone, Copy)]
enum Pages {
    /// The kept pool's pages as they are.
    Kept,
    /// The kept pool's pages, cleared by the caller (not while it holds [`PLACING`]).
    KeptCleared,
    /// The pool's free pages (cleared by the kernel).
    Pool,
}

/// A place for a mapping of `len` bytes with its header page: an address, 2 MiB aligned, with
/// `[a - HEADER, a + len)` unmapped. Found by reserving a span of address space that holds it
/// (no memory: `PROT_NONE`, not committed) and giving the span back at once, so that the
/// header, the head and the tail can each be mapped there with `MAP_FIXED_NOREPLACE`. Without
/// it the kernel packs a new mapping against the last one, where the tail or the header then
/// does not fit (one pool mapping in eight fell back to ordinary pages so in a one-pass sort).
/// Another thread may map into the place before the caller does: its mappings are refused then
/// ([`Miss::Taken`]), and another place is found.
fn place(len: usize) -> Option<usize> {
    let span = len.checked_add(HEADER + HUGETLB_PAGE)?;
    // SAFETY: a new inaccessible private mapping, unmapped again at once; nothing refers to it.
    unsafe {
        let p = libc::mmap(
            ptr::null_mut(),
            span,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return None;
        }
        libc::munmap(p, span);
        Some((p as usize + HEADER).next_multiple_of(HUGETLB_PAGE))
    }
}

/// The head of `len` bytes from `pages`, at `at` (see [`place`]), with the header page (its
/// kind written) before it and the tail after it on ordinary pages; kept pages as they are.
fn map_at(pages: Pages, len: usize, head: usize, at: usize) -> Result<*mut u8, Miss> {
    let (a, kind) = match pages {
        Pages::Kept | Pages::KeptCleared => (map_kept(len, head, at)?, KIND_KEPT),
        Pages::Pool => (map_pool(len, head, at)?, KIND_POOL),
    };
    // SAFETY: the header page [a - HEADER, a) was mapped read-write by `frame` and is owned
    // here (a kept mapping's page index is written after the kind).
    unsafe { a.sub(HEADER).write(kind) };
    Ok(a)
}

/// An anonymous read-write mapping of `n` bytes at `at` exactly, or at a place the kernel picks
/// when `at` is 0; `extra` flags are added. `None` if it could not be made (there).
fn anon(at: usize, n: usize, extra: libc::c_int) -> Option<usize> {
    anon_or(at, n, extra).ok()
}

/// [`anon`], with why it could not be made: [`Miss::Taken`] if something was mapped there.
fn anon_or(at: usize, n: usize, extra: libc::c_int) -> Result<usize, Miss> {
    // SAFETY: a new private anonymous mapping; with MAP_FIXED_NOREPLACE the kernel refuses to
    // replace anything already mapped, so no other memory is affected.
    let p = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            n,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        let taken = std::io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST);
        return Err(if taken { Miss::Taken } else { Miss::Refused });
    }
    if at != 0 && p as usize != at {
        // A kernel older than MAP_FIXED_NOREPLACE (4.17) took the address as a hint.
        // SAFETY: the mapping was just made by this call and nothing refers to it.
        unsafe { libc::munmap(p, n) };
        return Err(Miss::Taken);
    }
    Ok(p as usize)
}

/// The head from the hugetlb pool at `at`, with the header page before it and the tail after
/// it on ordinary pages. Nothing is left mapped if the pool or the place refuses.
fn map_pool(len: usize, head: usize, at: usize) -> Result<*mut u8, Miss> {
    if POOL_REFUSED.load(Ordering::Relaxed) {
        return Err(Miss::Refused);
    }
    let flags = libc::MAP_HUGETLB | libc::MAP_HUGE_2MB | libc::MAP_FIXED_NOREPLACE;
    let a = anon_or(at, head, flags).inspect_err(|&m| {
        if m == Miss::Refused {
            POOL_REFUSED.store(true, Ordering::Relaxed);
        }
    })?;
    frame(a, len, head).inspect_err(|_| {
        // SAFETY: the pool pages were mapped just above and are not handed out.
        unsafe { libc::munmap(a as *mut libc::c_void, head) };
    })?;
    Ok(a as *mut u8)
}

/// Maps the header page before the `head` bytes at `a` and the tail of `len - head` bytes after
/// them, each exactly there; [`Miss::Taken`] (neither left mapped) if either place is taken.
fn frame(a: usize, len: usize, head: usize) -> Result<(), Miss> {
    let header = a.checked_sub(HEADER).and_then(|h| anon(h, HEADER, libc::MAP_FIXED_NOREPLACE));
    let tail_ok = header.is_some()
        && (len == head || anon(a + head, len - head, libc::MAP_FIXED_NOREPLACE).is_some());
    if let (false, Some(h)) = (tail_ok, header) {
        // SAFETY: the header page was mapped just above and is not handed out.
        unsafe { libc::munmap(h as *mut libc::c_void, HEADER) };
    }
    if tail_ok {
        Ok(())
    } else {
        Err(Miss::Taken)
    }
}

/// The head from the kept pool ([`crate::warm`]) at `at`, with the header page (its first page
/// index written) before it and the tail after it on ordinary pages. Nothing is left mapped or
/// claimed without a kept pool, or if it or the place refuses.
fn map_kept(len: usize, head: usize, at: usize) -> Result<*mut u8, Miss> {
    let pages = head / HUGETLB_PAGE;
    let first = crate::warm::map(pages, at)?;
    if let Err(m) = frame(at, len, head) {
        // SAFETY: the kept pages were mapped just above and are not handed out.
        unsafe { libc::munmap(at as *mut libc::c_void, head) };
        crate::warm::unclaim(first, pages);
        return Err(m);
    }
    // SAFETY: the header page [at - HEADER, at) was just mapped read-write and is owned here.
    unsafe { ((at - HEADER) as *mut u8).add(KEPT_INDEX_AT).cast::<u64>().write(first as u64) };
    Ok(at as *mut u8)
}

/// `len` bytes of ordinary pages, 2 MiB aligned, advised for transparent huge pages, with the
/// header page in front: one read-write mapping, trimmed to the alignment.
fn map_ordinary(len: usize) -> *mut u8 {
    let Some(reserve) = len.checked_add(HEADER + HUGETLB_PAGE) else {
        return ptr::null_mut();
    };
    let Some(base) = anon(0, reserve, 0) else {
        return ptr::null_mut();
    };
    let a = (base + HEADER).next_multiple_of(HUGETLB_PAGE);
    let (start, end) = (a - HEADER, a + len);
    // SAFETY: the trimmed ranges lie inside the mapping just made and nothing uses them.
    unsafe {
        if start > base {
            libc::munmap(base as *mut libc::c_void, start - base);
        }
        if base + reserve > end {
            libc::munmap(end as *mut libc::c_void, base + reserve - end);
        }
        // The advice only changes paging policy; its failure (THP disabled) is harmless.
        libc::madvise(a as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        // The header page [start, a) is mapped read-write and owned here.
        (start as *mut u8).write(KIND_ORDINARY);
    }
    a as *mut u8
}

/// Unmaps what [`map`] returned.
///
/// # Safety
/// `p` and `len` must be a pointer returned by [`map`] and the length given to it, unmapped
/// once, with no references into the memory left.
pub unsafe fn unmap(p: *mut u8, len: usize) {
    let len = len.next_multiple_of(DIRECT_ALIGN);
    // SAFETY: by the contract, the header page in front of `p` is mapped and holds the kind, and
    // [p - HEADER, p + len) is one live mapping made by `map`: one munmap removes every piece of
    // it (the pool part starts and ends on 2 MiB boundaries, as munmap requires); a kept
    // mapping's header also holds its first page's index.
    let (kind, first) = unsafe {
        let h = p.sub(HEADER);
        let kind = h.read();
        let first = if kind == KIND_KEPT { h.add(KEPT_INDEX_AT).cast::<u64>().read() } else { 0 };
        libc::munmap(h.cast(), HEADER + len);
        (kind, first)
    };
    let head = len / HUGETLB_PAGE * HUGETLB_PAGE;
    if kind == KIND_KEPT {
        crate::warm::unclaim(first as usize, head / HUGETLB_PAGE);
    }
    if kind == KIND_POOL || kind == KIND_KEPT {
        let _change = POOL_CHANGE.lock().unwrap_or_else(|e| e.into_inner());
        close_interval();
        POOL_NOW.fetch_sub(head as u64, Ordering::Relaxed);
        if kind == KIND_POOL {
            POOL_REFUSED.store(false, Ordering::Relaxed);
        }
    }
}

/// Shortens a mapping made by [`map`] from `len` to `new_len` bytes in place, giving the tail's
/// pages back; false (nothing changed) for a mapping from the hugetlb pool, whose pages are
/// counted by the 2 MiB.
///
/// # Safety
/// `p` and `len` must be a live pointer returned by [`map`] and its length; nothing may refer
/// to the bytes past `new_len`. On success the mapping's length is `new_len` (rounded up to
/// [`DIRECT_ALIGN`]) for [`unmap`].
pub unsafe fn shrink(p: *mut u8, len: usize, new_len: usize) -> bool {
    let (len, new_len) =
        (len.next_multiple_of(DIRECT_ALIGN), new_len.next_multiple_of(DIRECT_ALIGN));
    // SAFETY: by the contract, the header page in front of `p` is mapped and holds the kind.
    if new_len == 0 || new_len > len || unsafe { p.sub(HEADER).read() } != KIND_ORDINARY {
        return new_len == len;
    }
    if new_len < len {
        // SAFETY: [p + new_len, p + len) is the tail of the live mapping (page aligned: p is
        // 2 MiB aligned and new_len a multiple of DIRECT_ALIGN), unused by the contract.
        unsafe { libc::munmap(p.add(new_len).cast(), len - new_len) };
    }
    true
}

/// Whether a mapping made by [`map`] (or [`split`]) can be cut and shortened: ordinary pages,
/// not the hugetlb pool's.
///
/// # Safety
/// `p` must be a live pointer returned by [`map`] or [`split`].
pub unsafe fn cuttable(p: *mut u8) -> bool {
    // SAFETY: by the contract, the header page in front of `p` is mapped and holds the kind.
    unsafe { p.sub(HEADER).read() == KIND_ORDINARY }
}

/// Cuts a mapping made by [`map`] (or by an earlier cut) of `len` bytes in two at `at`: the
/// first `at` bytes stay where they are, as a mapping of `at` bytes; the page after them becomes
/// the header of the second piece, which starts one page later and runs to the end. Each piece
/// is then a mapping of its own for [`unmap`] and [`shrink`]: one buffer of the input phase
/// serves the merge as several read blocks, without fresh memory.
///
/// ```text
///  before:  | hdr | 0 .. at | at .. at+HEADER | at+HEADER .. len |
///  after:   | hdr | first   | hdr of second   | second            |
/// ```
///
/// Returns the second piece and its length; `None` (nothing changed) for a mapping from the
/// hugetlb pool (whose pages are counted by the 2 MiB), or when `at` is not a positive multiple
/// of [`DIRECT_ALIGN`] or leaves no byte for the second piece.
///
/// # Safety
/// `p` and `len` must be a live pointer returned by [`map`] (or [`split`]) and its length;
/// nothing may refer to the bytes from `at` on. On success the first mapping's length is `at`.
pub unsafe fn split(p: *mut u8, len: usize, at: usize) -> Option<(*mut u8, usize)> {
    let len = len.next_multiple_of(DIRECT_ALIGN);
    if at == 0 || at % DIRECT_ALIGN != 0 || at + HEADER >= len {
        return None;
    }
    // SAFETY: by the contract, `p` is a live pointer from `map` or `split`.
    if !unsafe { cuttable(p) } {
        return None;
    }
    // SAFETY: [p + at, p + at + HEADER) lies inside the live mapping (at + HEADER < len) and
    // nothing refers to it by the contract: it becomes the second piece's header page.
    unsafe {
        let second = p.add(at + HEADER);
        second.sub(HEADER).write(KIND_ORDINARY);
        Some((second, len - at - HEADER))
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
            // Uninitialized is all `alloc` promises: the kept pool's pages serve.
            map_any(l.size())
        } else {
            // SAFETY: forwarded with the caller's (non-zero size) layout.
            unsafe { System.alloc(l) }
        }
    }

    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if is_big(&l) {
            // Fresh mappings are zeroed.
            map(l.size())
        } else {
            // SAFETY: forwarded with the caller's layout.
            unsafe { System.alloc_zeroed(l) }
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if is_big(&l) {
            // SAFETY: a big layout means `p` came from `map` with this length.
            unsafe { unmap(p, l.size()) }
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

/// Gives the C allocator's free heap memory back to the system (`malloc_trim`). Arrays of
/// medium size (a chunk's entries, its offsets) come from the C heap, whose `mmap` threshold
/// rises as big blocks are freed; the memory of one phase then stays resident while the next
/// phase allocates its own. The engine calls this between phases so that its peak memory is
/// what its plan accounts for.
pub fn trim_heap() {
    // SAFETY: malloc_trim only walks and releases the allocator's own free memory; it has no
    // preconditions and may be called at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
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

    /// Reserves `pages` pool pages for the test's life where the pool is empty and this
    /// process may grow it (as root); gives them back when dropped.
    struct TestPool(Option<u64>);

    const NR_HUGEPAGES: &str = "/proc/sys/vm/nr_hugepages";

    impl TestPool {
        fn reserve(pages: u64) -> TestPool {
            let before =
                std::fs::read_to_string(NR_HUGEPAGES).ok().and_then(|s| s.trim().parse().ok());
            match before {
                Some(0) if std::fs::write(NR_HUGEPAGES, pages.to_string()).is_ok() => {
                    POOL_REFUSED.store(false, Ordering::Relaxed);
                    TestPool(Some(0))
                }
                _ => TestPool(None),
            }
        }
    }

    impl Drop for TestPool {
        fn drop(&mut self) {
            if let Some(pages) = self.0 {
                let _ = std::fs::write(NR_HUGEPAGES, pages.to_string());
            }
        }
    }

    #[test]
    fn the_peak_held_is_what_was_held_at_once_not_the_sum_of_two_peaks() {
        const MIB: u64 = 1 << 20;
        let _pool = TestPool::reserve(8);
        reset_peak_held();
        let base = peak_held();
        // 16 MiB from the pool (when there is one), written and given back; then 32 MiB of
        // ordinary pages, written and given back.
        let pooled = map(16 << 20);
        let from_pool = hugetlb_bytes() >= 16 * MIB;
        // SAFETY: a fresh mapping of 16 MiB, written then unmapped once.
        unsafe {
            std::ptr::write_bytes(pooled, 1, 16 << 20);
            unmap(pooled, 16 << 20);
        }
        let ordinary = map_ordinary(32 << 20);
        // SAFETY: a fresh mapping of 32 MiB (header page in front), written then unmapped once.
        unsafe {
            std::ptr::write_bytes(ordinary, 1, 32 << 20);
            unmap(ordinary, 32 << 20);
        }
        let held = peak_held() - base;
        // Other tests of this process free memory meanwhile, which lowers the resident set
        // under the base: the 32 MiB show as a few MiB less.
        assert!(held >= 24 * MIB, "peak {} MiB above the base", held / MIB);
        if from_pool {
            // Other tests map a few MiB beside this one; the sum of the peaks would be 48.
            assert!(held < 44 * MIB, "peak {} MiB: the two peaks were added", held / MIB);
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

    #[test]
    fn a_place_has_room_for_the_header_and_the_whole_buffer() {
        // Other tests' threads map at places the kernel picks meanwhile (their stacks, say),
        // which may fall into a place found: a few tries each.
        let _placing = placing();
        for len in [HUGETLB_PAGE, 3 * HUGETLB_PAGE + DIRECT_ALIGN] {
            let fits = (0..PLACE_ATTEMPTS).any(|_| {
                let at = place(len).expect("address space");
                assert_eq!(at % HUGETLB_PAGE, 0);
                let whole = anon(at - HEADER, HEADER + len, libc::MAP_FIXED_NOREPLACE);
                if let Some(w) = whole {
                    // SAFETY: the mapping just made, unmapped once.
                    unsafe { libc::munmap(w as *mut libc::c_void, HEADER + len) };
                }
                whole == Some(at - HEADER)
            });
            assert!(fits, "no place of {len} bytes had room for its header and all of it");
        }
    }

    #[test]
    fn mapping_never_disturbs_other_threads_mappings() {
        // Each round retries the pool (refused on machines without one) while other threads
        // start and stop (their stacks and TLS are mappings too) and map and write their own
        // buffers: a refused mapping must not leave a hole that another mapping can fall into
        // and then be replaced.
        let rounds = 1000;
        std::thread::scope(|s| {
            for t in 0..4u8 {
                s.spawn(move || {
                    for _ in 0..rounds {
                        POOL_REFUSED.store(false, Ordering::Relaxed);
                        let len = 2 * HUGETLB_PAGE + DIRECT_ALIGN;
                        let p = map(len);
                        assert!(!p.is_null());
                        let child = std::thread::spawn(move || {
                            let v = vec![t; 1 << 16];
                            v.iter().map(|&b| b as u64).sum::<u64>()
                        });
                        // SAFETY: p is a fresh mapping of len bytes, written then unmapped once.
                        unsafe {
                            std::ptr::write_bytes(p, t, len);
                            assert_eq!(*p.add(len - 1), t);
                            unmap(p, len);
                        }
                        assert_eq!(child.join().unwrap(), t as u64 * (1 << 16));
                    }
                });
            }
        });
    }
}

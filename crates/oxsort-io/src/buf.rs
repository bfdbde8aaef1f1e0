//! [`AlignedBuf`]: heap memory aligned for `O_DIRECT`.

use std::alloc::{self, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};

use crate::bigmem::{self, BIG_ALLOC};
use crate::tuning::{DIRECT_ALIGN, HUGE_THRESHOLD, MMAP_THRESHOLD, PAGE_SIZE};

/// Rounds `n` up to a multiple of [`DIRECT_ALIGN`].
pub const fn align_up(n: usize) -> usize {
    n.div_ceil(DIRECT_ALIGN) * DIRECT_ALIGN
}

/// Where the memory of an [`AlignedBuf`] came from, so `Drop` gives it back the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// Zero length: a dangling, aligned pointer, nothing to free.
    Empty,
    /// `std::alloc::alloc_zeroed` with a [`DIRECT_ALIGN`]-aligned layout.
    Heap,
    /// An anonymous private `mmap`.
    Mmap,
    /// [`bigmem::map`]: the hugetlb pool or 2 MiB-aligned ordinary pages.
    Big,
}

/// A heap buffer aligned to [`DIRECT_ALIGN`], whose length is fixed at creation (rounded up to a
/// multiple of [`DIRECT_ALIGN`]) and whose bytes start zeroed.
///
/// Big buffers come from `mmap`, so the zeroing is lazy: a page costs nothing until touched.
/// From 2 MiB up they come from the hugetlb pool when one is reserved (see [`BigAlloc`]).
///
/// [`BigAlloc`]: crate::BigAlloc
/// [`AlignedBuf::huge`] also asks for transparent huge pages, and [`AlignedBuf::prefault`]
/// touches every page from several threads so the first transfer does not pay the page faults.
///
/// ```
/// # use oxsort_io::{AlignedBuf, DIRECT_ALIGN};
/// let mut b = AlignedBuf::new(10);
/// assert_eq!(b.len(), DIRECT_ALIGN);
/// assert_eq!(b.as_ptr() as usize % DIRECT_ALIGN, 0);
/// b[0] = 7;
/// assert_eq!(&b[..2], &[7, 0]);
/// ```
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    origin: Origin,
}

// SAFETY: an AlignedBuf uniquely owns its memory (like a Box<[u8]>); nothing is shared between
// values, so moving it to another thread is sound.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared references only give `&[u8]` access, which is safe to share across threads.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes rounded up to a multiple of [`DIRECT_ALIGN`]. Buffers of
    /// [`HUGE_THRESHOLD`](crate::tuning::HUGE_THRESHOLD) or more are advised to use huge pages.
    ///
    /// # Panics
    /// If the memory cannot be obtained (like `Vec` on allocation failure).
    pub fn new(len: usize) -> Self {
        let len = align_up(len);
        if len == 0 {
            return AlignedBuf { ptr: Self::dangling(), len: 0, origin: Origin::Empty };
        }
        if len >= MMAP_THRESHOLD {
            return Self::mmap(len, len >= HUGE_THRESHOLD);
        }
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size (len > 0 checked above).
        let p = unsafe { alloc::alloc_zeroed(layout) };
        match NonNull::new(p) {
            Some(ptr) => AlignedBuf { ptr, len, origin: Origin::Heap },
            None => alloc::handle_alloc_error(layout),
        }
    }

    /// Like [`AlignedBuf::new`], but always `mmap`ed and advised with `MADV_HUGEPAGE`, for the
    /// big sort arenas (fewer TLB misses while scattering records). The advice is best effort.
    pub fn huge(len: usize) -> Self {
        let len = align_up(len);
        if len == 0 {
            return Self::new(0);
        }
        Self::mmap(len, true)
    }

    fn mmap(len: usize, huge: bool) -> Self {
        if len >= BIG_ALLOC {
            // Big buffers: the hugetlb pool when one is reserved, else 2 MiB-aligned ordinary
            // pages advised for transparent huge pages (see `bigmem`).
            return match NonNull::new(bigmem::map(len)) {
                Some(ptr) => AlignedBuf { ptr, len, origin: Origin::Big },
                None => alloc::handle_alloc_error(Self::layout(len)),
            };
        }
        // SAFETY: an anonymous private mapping with a null hint has no preconditions; the result
        // is checked against MAP_FAILED before use.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            alloc::handle_alloc_error(Self::layout(len));
        }
        if huge {
            // SAFETY: [p, p+len) is the mapping just created; madvise only changes paging policy.
            // Failure (THP disabled, old kernel) is harmless and ignored.
            unsafe { libc::madvise(p, len, libc::MADV_HUGEPAGE) };
        }
        let ptr = NonNull::new(p.cast::<u8>()).expect("mmap returned null");
        AlignedBuf { ptr, len, origin: Origin::Mmap }
    }

    fn dangling() -> NonNull<u8> {
        NonNull::new(DIRECT_ALIGN as *mut u8).expect("non-zero constant")
    }

    fn layout(len: usize) -> Layout {
        Layout::from_size_align(len, DIRECT_ALIGN).expect("buffer length overflows a Layout")
    }

    /// Length in bytes (a multiple of [`DIRECT_ALIGN`]).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a zero-length buffer.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Touches every page of the buffer from `threads` threads in parallel, so later accesses
    /// (including the kernel's DMA setup for direct reads) do not fault page by page. Contents
    /// are left unchanged.
    pub fn prefault(&mut self, threads: usize) {
        if self.len == 0 {
            return;
        }
        let threads = threads.clamp(1, self.len / PAGE_SIZE);
        let per = (self.len / PAGE_SIZE).div_ceil(threads) * PAGE_SIZE;
        let touch = |part: &mut [u8]| {
            // One call populates the whole range writable (Linux 5.14+); a read-write pair per
            // page otherwise (keeps the contents).
            // SAFETY: the range is a live, exclusively borrowed part of this buffer; the advice
            // only makes the kernel allocate its pages now instead of at first touch.
            let r = unsafe {
                libc::madvise(part.as_mut_ptr().cast(), part.len(), libc::MADV_POPULATE_WRITE)
            };
            if r == 0 {
                return;
            }
            for page in part.chunks_mut(PAGE_SIZE) {
                let p = page.as_mut_ptr();
                // SAFETY: `p` points at the first byte of a live, exclusively borrowed page;
                // volatile access keeps the compiler from removing the read-write pair.
                unsafe { ptr::write_volatile(p, ptr::read_volatile(p)) };
            }
        };
        if threads == 1 {
            touch(self);
            return;
        }
        std::thread::scope(|s| {
            for part in self.chunks_mut(per) {
                s.spawn(move || touch(part));
            }
        });
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialized (zeroed at creation) bytes owned by self, or
        // dangling-but-aligned with len 0.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        match self.origin {
            Origin::Empty => {}
            // SAFETY: allocated by alloc_zeroed with exactly this layout, freed once.
            Origin::Heap => unsafe { alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) },
            // SAFETY: the mapping [ptr, ptr+len) was created by mmap in `Self::mmap` and is
            // unmapped once; no references into it outlive `self`.
            Origin::Mmap => unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), self.len);
            },
            // SAFETY: made by bigmem::map with exactly this length, unmapped once.
            Origin::Big => unsafe { bigmem::unmap(self.ptr.as_ptr(), self.len) },
        }
    }
}

impl fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlignedBuf").field("len", &self.len).field("origin", &self.origin).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_round_up_and_memory_is_zeroed_and_aligned() {
        for len in [0, 1, 4095, 4096, 4097, MMAP_THRESHOLD - 1, MMAP_THRESHOLD, MMAP_THRESHOLD + 1]
        {
            for b in [AlignedBuf::new(len), AlignedBuf::huge(len)] {
                assert_eq!(b.len(), align_up(len));
                assert_eq!(b.as_ptr() as usize % DIRECT_ALIGN, 0);
                assert!(b.iter().all(|&x| x == 0));
            }
        }
    }

    #[test]
    fn prefault_keeps_contents() {
        let mut b = AlignedBuf::huge(3 * MMAP_THRESHOLD + 5);
        for (i, x) in b.iter_mut().enumerate().step_by(997) {
            *x = i as u8;
        }
        let before: Vec<u8> = b.to_vec();
        b.prefault(3);
        assert_eq!(&b[..], &before[..]);
        AlignedBuf::new(0).prefault(4);
        AlignedBuf::new(1).prefault(4);
    }

    #[test]
    fn send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<AlignedBuf>();
    }
}

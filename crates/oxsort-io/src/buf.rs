//! [`AlignedBuf`]: heap memory aligned for `O_DIRECT`.

use std::alloc::{self, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};

use crate::bigmem;
use crate::tuning::{DIRECT_ALIGN, MMAP_THRESHOLD, PAGE_SIZE};

/// Rounds `n` up to a multiple of [`DIRECT_ALIGN`].
pub const fn align_up(n: usize) -> usize {
    n.div_ceil(DIRECT_ALIGN) * DIRECT_ALIGN
}

/// Buffers that map a file ([`AlignedBuf::map_file`]) alive now: a `SIGBUS` while there are
/// none is not a mapped input's (`crate::mapped`).
pub(crate) static FILE_MAPPINGS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Where the memory of an [`AlignedBuf`] came from, so `Drop` gives it back the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// Zero length: a dangling, aligned pointer, nothing to free.
    Empty,
    /// `std::alloc::alloc_zeroed` with a [`DIRECT_ALIGN`]-aligned layout.
    Heap,
    /// [`bigmem::map`]: the hugetlb pool or 2 MiB-aligned ordinary pages.
    Big,
    /// A private mapping of a file's pages ([`AlignedBuf::map_file`]): reads see the file's
    /// page cache, writes copy the page they touch.
    File,
}

/// A heap buffer aligned to [`DIRECT_ALIGN`], whose length is fixed at creation (rounded up to a
/// multiple of [`DIRECT_ALIGN`]) and whose bytes start zeroed.
///
/// Big buffers come from [`bigmem::map`] (the hugetlb pool when one is reserved, else pages
/// advised for transparent huge pages), so the zeroing is lazy: a page costs nothing until
/// touched. [`AlignedBuf::prefault`] touches every page from several threads so the first
/// transfer does not pay the page faults.
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
    /// [`MMAP_THRESHOLD`](crate::tuning::MMAP_THRESHOLD) or more are mapped by [`bigmem::map`]:
    /// huge pages from the pool or transparent ones.
    ///
    /// # Panics
    /// If the memory cannot be obtained (like `Vec` on allocation failure).
    pub fn new(len: usize) -> Self {
        Self::with_memory(len, bigmem::map)
    }

    /// A buffer of `len` bytes rounded up to a multiple of [`DIRECT_ALIGN`], whose bytes are
    /// unspecified: for memory written before it is read (a chunk read into, a rewrite's
    /// target). Big ones may come from the kept pool ([`bigmem::map_any`]), whose pages hold
    /// what an earlier use left there and cost no clearing; the rest are zeroed as
    /// [`AlignedBuf::new`]'s.
    ///
    /// # Panics
    /// If the memory cannot be obtained (like `Vec` on allocation failure).
    pub fn unzeroed(len: usize) -> Self {
        Self::with_memory(len, bigmem::map_any)
    }

    /// A buffer of `len` bytes rounded up: big ones from `big` (a [`bigmem`] mapping), the
    /// rest zeroed from the heap.
    fn with_memory(len: usize, big: fn(usize) -> *mut u8) -> Self {
        let len = align_up(len);
        if len == 0 {
            return AlignedBuf { ptr: Self::dangling(), len: 0, origin: Origin::Empty };
        }
        if len >= MMAP_THRESHOLD {
            return match NonNull::new(big(len)) {
                Some(ptr) => AlignedBuf { ptr, len, origin: Origin::Big },
                None => alloc::handle_alloc_error(Self::layout(len)),
            };
        }
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size (len > 0 checked above).
        let p = unsafe { alloc::alloc_zeroed(layout) };
        match NonNull::new(p) {
            Some(ptr) => AlignedBuf { ptr, len, origin: Origin::Heap },
            None => alloc::handle_alloc_error(layout),
        }
    }

    /// `len` bytes of the file open as `fd` from `offset` (a multiple of [`PAGE_SIZE`]), mapped
    /// privately: no memory is taken until a page is written (a write copies that page and
    /// never reaches the file). The buffer's length is `len` rounded up to [`DIRECT_ALIGN`];
    /// bytes past the file's end in its last page read as zeros.
    ///
    /// # Safety
    /// `offset + len` must not pass the file's end, and the file must not shrink while the
    /// buffer lives: a page past the end of the file faults with `SIGBUS` when touched
    /// (`crate::mapped` turns that into an orderly stop).
    pub(crate) unsafe fn map_file(fd: i32, offset: u64, len: usize) -> std::io::Result<Self> {
        let len = align_up(len);
        if len == 0 {
            return Ok(AlignedBuf { ptr: Self::dangling(), len: 0, origin: Origin::Empty });
        }
        let file_offset = offset;
        let offset = libc::off_t::try_from(offset)
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EOVERFLOW))?;
        // The address is chosen congruent to the file offset modulo a huge page: the page
        // cache's huge folios are then mapped whole (one TLB entry per 2 MiB, not 512), which
        // the output's gather of records at random from the mapping needs.
        //
        //   reserved:  |  head  | mapping of the file, `len` bytes          |  tail  |
        //              r        a = r + (file_offset - r) mod HUGE          a + len  r + len + HUGE
        //
        // The head and tail of the reservation are given back at once.
        let huge = crate::tuning::HUGETLB_PAGE;
        // Not while a pool mapping is being placed: the reservation would take its place.
        let _placing = crate::bigmem::placing();
        // SAFETY: a new inaccessible anonymous reservation; nothing else refers to it.
        let r = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len + huge,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if r == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let r = r as usize;
        let a = r + (file_offset as usize).wrapping_sub(r) % huge;
        // SAFETY: `a .. a + len` lies inside the reservation just made, which MAP_FIXED
        // replaces: a private mapping of a file range the caller vouches for.
        let p = unsafe {
            libc::mmap(
                a as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_FIXED,
                fd,
                offset,
            )
        };
        let failed = p == libc::MAP_FAILED;
        let e = std::io::Error::last_os_error();
        // SAFETY: the parts of the reservation outside the file's mapping (all of it when the
        // mapping failed) are ours and referred to by nothing.
        unsafe {
            if failed {
                libc::munmap(r as *mut libc::c_void, len + huge);
            } else {
                if a > r {
                    libc::munmap(r as *mut libc::c_void, a - r);
                }
                libc::munmap((a + len) as *mut libc::c_void, r + huge - a);
            }
        }
        if failed {
            return Err(e);
        }
        // Advice only: a kernel that cannot map the file's folios whole maps them by page.
        // SAFETY: the range is the mapping just made.
        unsafe { libc::madvise(p, len, libc::MADV_HUGEPAGE) };
        let ptr = NonNull::new(p.cast::<u8>()).expect("mmap never returns null on success");
        FILE_MAPPINGS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(AlignedBuf { ptr, len, origin: Origin::File })
    }

    /// Shortens the buffer to `len` bytes (rounded up to [`DIRECT_ALIGN`]), giving the rest of
    /// its memory back: a buffer kept from one phase of a sort serves a later one that wants
    /// smaller buffers without holding the difference. False (the buffer unchanged) when it is
    /// shorter than `len`, or its memory cannot be cut (the heap, the hugetlb pool, a file).
    pub fn shrink_to(&mut self, len: usize) -> bool {
        let len = align_up(len);
        if len == self.len {
            return true;
        }
        if len > self.len || len == 0 || !matches!(self.origin, Origin::Big) {
            return false;
        }
        // SAFETY: a Big buffer's pointer and length are what bigmem::map made; `&mut self`
        // means nothing refers into the tail given back.
        let done = unsafe { bigmem::shrink(self.ptr.as_ptr(), self.len, len) };
        if done {
            self.len = len;
        }
        done
    }

    /// Cuts the buffer at `at` bytes (rounded up to [`DIRECT_ALIGN`]): it keeps the first `at`
    /// and the rest but one page (the second piece's bookkeeping) is returned as a buffer of its
    /// own. `None` (the buffer unchanged) when nothing would be left for the second piece, or
    /// its memory cannot be cut (the heap, the hugetlb pool, a file).
    ///
    /// ```
    /// # use oxsort_io::{AlignedBuf, DIRECT_ALIGN};
    /// let mut a = AlignedBuf::new(8 << 20);
    /// a[(6 << 20) + DIRECT_ALIGN] = 9;
    /// let b = a.split_off(6 << 20).expect("a mapped buffer");
    /// assert_eq!((a.len(), b.len()), (6 << 20, (2 << 20) - DIRECT_ALIGN));
    /// assert_eq!(b[0], 9);
    /// ```
    pub fn split_off(&mut self, at: usize) -> Option<AlignedBuf> {
        let at = align_up(at);
        if self.origin != Origin::Big {
            return None;
        }
        // SAFETY: a Big buffer's pointer and length are what bigmem::map (or an earlier split)
        // made; `&mut self` means nothing refers into the bytes past `at`.
        let (p, len) = unsafe { bigmem::split(self.ptr.as_ptr(), self.len, at)? };
        self.len = at;
        let ptr = NonNull::new(p).expect("a piece of a live mapping is not null");
        Some(AlignedBuf { ptr, len, origin: Origin::Big })
    }

    /// How many buffers of `piece` bytes this one gives, cut by [`AlignedBuf::split_off`] (each
    /// cut costs a page) and the last shortened by [`AlignedBuf::shrink_to`]; a buffer whose
    /// memory cannot be cut gives one only if it is that long already.
    pub fn pieces_of(&self, piece: usize) -> usize {
        let piece = align_up(piece);
        if piece == 0 || piece > self.len {
            return 0;
        }
        // SAFETY: a Big buffer's pointer is what bigmem::map (or a split) made.
        if self.origin == Origin::Big && unsafe { bigmem::cuttable(self.ptr.as_ptr()) } {
            (self.len + DIRECT_ALIGN) / (piece + DIRECT_ALIGN)
        } else {
            usize::from(piece == self.len)
        }
    }

    /// The longest piece of which this buffer gives `k` ([`AlignedBuf::pieces_of`] is then at
    /// least `k`), a multiple of [`DIRECT_ALIGN`]; 0 when it cannot be cut into `k`.
    pub fn piece_len(&self, k: usize) -> usize {
        if k == 0 {
            return 0;
        }
        let each = ((self.len + DIRECT_ALIGN) / k).saturating_sub(DIRECT_ALIGN);
        let piece = each / DIRECT_ALIGN * DIRECT_ALIGN;
        if self.pieces_of(piece) >= k {
            piece
        } else {
            0
        }
    }

    /// Whether the buffer maps a file (a piece of a [`crate::MappedReader`]) rather than owning
    /// memory.
    pub fn is_file_mapping(&self) -> bool {
        self.origin == Origin::File
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

impl AlignedBuf {
    /// The buffer as 128-bit words (sort entries): its length is a multiple of
    /// [`DIRECT_ALIGN`], so of 16 bytes, and its start is aligned to it.
    pub fn as_u128s(&self) -> &[u128] {
        // SAFETY: ptr is aligned to DIRECT_ALIGN (>= 16) or dangling-but-aligned with len 0;
        // len is a multiple of DIRECT_ALIGN; the bytes are initialized and any bit pattern is
        // a valid u128.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast::<u128>(), self.len / 16) }
    }

    /// [`AlignedBuf::as_u128s`], writable.
    pub fn as_u128s_mut(&mut self) -> &mut [u128] {
        // SAFETY: as in `as_u128s`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<u128>(), self.len / 16) }
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
            // SAFETY: made by bigmem::map with exactly this length, unmapped once.
            Origin::Big => unsafe { bigmem::unmap(self.ptr.as_ptr(), self.len) },
            // SAFETY: mapped by map_file with exactly this length, unmapped once.
            Origin::File => unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), self.len);
                FILE_MAPPINGS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            },
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
            let b = AlignedBuf::new(len);
            assert_eq!(b.len(), align_up(len));
            assert_eq!(b.as_ptr() as usize % DIRECT_ALIGN, 0);
            assert!(b.iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn a_big_buffer_shrinks_in_place_and_keeps_its_head() {
        let mut b = AlignedBuf::new(8 * MMAP_THRESHOLD);
        for (i, x) in b.iter_mut().enumerate().step_by(4093) {
            *x = i as u8 | 1;
        }
        let head: Vec<u8> = b[..3 * MMAP_THRESHOLD].to_vec();
        let at = b.as_ptr();
        assert!(!b.shrink_to(9 * MMAP_THRESHOLD), "a buffer does not grow");
        assert!(b.shrink_to(3 * MMAP_THRESHOLD - 5));
        assert_eq!((b.len(), b.as_ptr()), (3 * MMAP_THRESHOLD, at), "cut to the rounded length");
        assert_eq!(&b[..], &head[..]);
        assert!(b.shrink_to(b.len()), "its own length");
        // Dropped with its new length (a wrong one would unmap what is not its own).
        drop(b);
        let mut small = AlignedBuf::new(4 * DIRECT_ALIGN);
        assert!(!small.shrink_to(DIRECT_ALIGN), "heap memory is not cut");
        assert_eq!(small.len(), 4 * DIRECT_ALIGN);
    }

    #[test]
    fn a_big_buffer_splits_into_pieces_each_its_own() {
        let mut whole = AlignedBuf::new(12 * MMAP_THRESHOLD + 5 * DIRECT_ALIGN);
        let total = whole.len();
        let (start, end) = (whole.as_ptr() as usize, whole.as_ptr() as usize + whole.len());
        for (i, x) in whole.iter_mut().enumerate() {
            *x = (i / DIRECT_ALIGN) as u8;
        }
        let piece = 3 * MMAP_THRESHOLD + 1; // rounded up to the alignment
        let mut pieces = Vec::new();
        let mut rest = whole;
        while let Some(next) = rest.split_off(piece) {
            pieces.push(std::mem::replace(&mut rest, next));
        }
        // Three pieces, each followed by the page of bookkeeping of the next, and what is left
        // (a page short of a fourth piece's room).
        assert_eq!(pieces.len(), 3);
        assert!(pieces.iter().all(|p| p.len() == align_up(piece)));
        assert_eq!(rest.len(), total - 3 * (align_up(piece) + DIRECT_ALIGN));
        pieces.push(rest);
        // Each keeps the bytes that were at its place, lies within the buffer cut, apart from the
        // others, and is written to and dropped on its own (a wrong length would unmap a neighbour).
        for w in pieces.windows(2) {
            assert_eq!(w[0].as_ptr() as usize + w[0].len() + DIRECT_ALIGN, w[1].as_ptr() as usize);
        }
        for p in &mut pieces {
            let page = (p.as_ptr() as usize - start) / DIRECT_ALIGN;
            assert_eq!(p[0], page as u8);
            assert!(p.as_ptr() as usize + p.len() <= end);
            p.fill(7);
        }
        drop(pieces.remove(1));
        assert!(pieces[1].shrink_to(DIRECT_ALIGN), "a piece shrinks as a buffer does");
        assert!(pieces.iter().all(|p| p.iter().all(|&x| x == 7)));
        assert_eq!(AlignedBuf::new(total).pieces_of(piece), 3, "as counted ahead");
        let longest = AlignedBuf::new(total).piece_len(4);
        assert_eq!(AlignedBuf::new(total).pieces_of(longest), 4);
        assert!(AlignedBuf::new(total).pieces_of(longest + DIRECT_ALIGN) < 4, "the longest");
        let mut last = pieces.pop().expect("pieces");
        assert!(last.split_off(last.len()).is_none(), "nothing left for a second piece");
        assert!(AlignedBuf::new(4 * DIRECT_ALIGN).split_off(DIRECT_ALIGN).is_none(), "heap");
    }

    #[test]
    fn prefault_keeps_contents() {
        let mut b = AlignedBuf::new(3 * MMAP_THRESHOLD + 5);
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

//! Where the records of a buffer of delimited records end: the offset after every terminator,
//! found 64 bytes at a time.
//!
//! A search per record (`memchr` from each record's start) pays a call, a tail and a mispredicted
//! exit for every record of ~100 bytes; here one compare per 64 bytes yields a 64-bit mask of the
//! terminators, and each set bit is one offset:
//!
//! ```text
//!  bytes   | a b \n c c c \n d ... |   one 64-byte block
//!  mask    | 0 0 1  0 0 0 1  0 ... |   (bit i: byte i is the terminator)
//!  offsets   base+3, base+7, ...      trailing zeros, clear the lowest bit, repeat
//! ```
//!
//! With AVX2 (found at run time) a block is two 32-byte compares; elsewhere eight 8-byte words,
//! each compared without branches by the exact zero-byte test.

/// Appends to `out`, for every byte of `bytes` equal to `t`, its offset plus one plus `base`:
/// where the record it ends ends, counted from `base`. The caller sees that `base +
/// bytes.len()` fits in a `u32`.
pub fn line_ends(bytes: &[u8], t: u8, base: u32, out: &mut Vec<u32>) {
    debug_assert!(u32::try_from(bytes.len()).is_ok_and(|n| n.checked_add(base).is_some()));
    #[cfg(target_arch = "x86_64")]
    {
        if avx2::available() {
            // SAFETY: AVX2 was found on this CPU just above.
            unsafe { avx2::line_ends(bytes, t, base, out) };
            return;
        }
    }
    portable(bytes, t, base, out);
}

/// Offsets written per round of [`push_bits`], whether or not the mask has that many bits: a
/// block of ~100-byte lines holds 0, 1 or 2 terminators at random, and a loop that stops at the
/// last bit mispredicts its exit about once a block (line_ends: 8.3 GB/s with one push per bit,
/// against 5.7 for a search per line; see examples/line_ends.rs).
const BITS_PER_ROUND: usize = 4;

/// Appends `block_base + i + 1` for every set bit `i` of `mask`, lowest first, without a branch
/// per bit: rounds of [`BITS_PER_ROUND`] offsets are written past the vector's length, and the
/// length then counts only the bits there were.
#[inline(always)]
fn push_bits(mut mask: u64, block_base: u32, out: &mut Vec<u32>) {
    let n = mask.count_ones() as usize;
    // Room for every round, the last one's unused slots included (n <= 64, a multiple of 4).
    out.reserve(64);
    let len = out.len();
    let spare = out.spare_capacity_mut();
    let mut i = 0;
    loop {
        for slot in &mut spare[i..i + BITS_PER_ROUND] {
            // An empty mask's trailing zeros (64) write a value past the length: never read.
            slot.write(block_base.wrapping_add(mask.trailing_zeros() + 1));
            mask &= mask.wrapping_sub(1);
        }
        i += BITS_PER_ROUND;
        if i >= n {
            break;
        }
    }
    // SAFETY: the first n slots past `len` were written above (rounds cover 0..i, i >= n), and
    // the capacity holds them (reserved above).
    unsafe { out.set_len(len + n) };
}

/// The low bit of every byte.
const LOW_BITS: u64 = u64::from_ne_bytes([0x01; 8]);
/// All but the high bit of every byte.
const SEVEN_BITS: u64 = u64::from_ne_bytes([0x7f; 8]);

/// The mask of the bytes of the little-endian word `w` equal to `t`: bit `i` set when byte `i`
/// is. Exact (no borrow between bytes): a byte of `w ^ t` is zero when adding 0x7f to its low
/// seven bits leaves its high bit clear and its own high bit is clear too.
#[inline(always)]
fn word_mask(w: u64, t: u64) -> u64 {
    let x = w ^ t;
    let high = !(((x & SEVEN_BITS) + SEVEN_BITS) | x | SEVEN_BITS);
    // One bit per byte, at bit 7 of each: gather them to bits 0..8.
    (high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// The walk both ways share: `mask_of` gives each 64-byte block's mask of terminators, the
/// tail past the last whole block is looked at byte by byte.
#[inline(always)]
fn scan(bytes: &[u8], t: u8, base: u32, out: &mut Vec<u32>, mask_of: impl Fn(&[u8]) -> u64) {
    let mut blocks = bytes.chunks_exact(64);
    let mut at = base;
    for block in &mut blocks {
        push_bits(mask_of(block), at, out);
        at += 64;
    }
    for (i, &b) in blocks.remainder().iter().enumerate() {
        if b == t {
            out.push(at + i as u32 + 1);
        }
    }
}

fn portable(bytes: &[u8], t: u8, base: u32, out: &mut Vec<u32>) {
    let tw = u64::from(t) * LOW_BITS;
    scan(bytes, t, base, out, |block| {
        let mut mask = 0u64;
        for (k, word) in block.chunks_exact(8).enumerate() {
            let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            mask |= word_mask(w, tw) << (8 * k);
        }
        mask
    })
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8,
    };

    /// Whether this CPU has AVX2 (the standard library caches the test).
    #[inline]
    pub(super) fn available() -> bool {
        is_x86_feature_detected!("avx2")
    }

    /// [`super::line_ends`] with two 32-byte compares per 64-byte block.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn line_ends(bytes: &[u8], t: u8, base: u32, out: &mut Vec<u32>) {
        let needle = _mm256_set1_epi8(t as i8);
        super::scan(bytes, t, base, out, |block| {
            // SAFETY: `block` is 64 readable bytes; unaligned loads of 32 bytes at 0 and 32.
            let (lo, hi) = unsafe {
                let p = block.as_ptr().cast::<__m256i>();
                (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1)))
            };
            let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, needle)) as u32;
            let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, needle)) as u32;
            u64::from(lo) | u64::from(hi) << 32
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The offsets by the plain definition.
    fn expected(bytes: &[u8], t: u8, base: u32) -> Vec<u32> {
        (0..bytes.len()).filter(|&i| bytes[i] == t).map(|i| base + i as u32 + 1).collect()
    }

    #[test]
    fn every_terminator_of_every_block_and_the_tail_is_found() {
        // Terminators at both ends of blocks, a block of nothing but terminators, the tail.
        let mut bytes = vec![b'x'; 64 * 3 + 17];
        for i in [0, 31, 32, 63, 64, 127, 128 + 5, 192, 192 + 16] {
            bytes[i] = b'\n';
        }
        let mut all = vec![b'\n'; 64];
        all.extend_from_slice(&bytes);
        for (buf, base) in [(&bytes, 0u32), (&all, 1000)] {
            let mut out = vec![7];
            line_ends(buf, b'\n', base, &mut out);
            assert_eq!(out[0], 7, "appended, not replaced");
            assert_eq!(&out[1..], expected(buf, b'\n', base));
            let mut slow = Vec::new();
            portable(buf, b'\n', base, &mut slow);
            assert_eq!(slow, &out[1..]);
        }
    }

    #[test]
    fn bytes_next_to_the_terminator_in_value_are_not_taken_for_it() {
        // 0x0a's neighbours and bytes with the high bit set: a borrowing zero-byte test would
        // report the byte above a match too.
        let bytes: Vec<u8> = (0..256u32).map(|i| i as u8).chain([0x0a, 0x0b, 0x8a, 0x09]).collect();
        for t in [0u8, 0x0a, 0x80, 0xff] {
            let mut out = Vec::new();
            portable(&bytes, t, 5, &mut out);
            assert_eq!(out, expected(&bytes, t, 5), "terminator {t:#x}");
            out.clear();
            line_ends(&bytes, t, 5, &mut out);
            assert_eq!(out, expected(&bytes, t, 5), "terminator {t:#x}");
        }
    }

    proptest! {
        #[test]
        fn offsets_match_the_definition(
            bytes in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(0u8), any::<u8>()], 0..700),
            t in prop_oneof![Just(b'\n'), Just(0u8), any::<u8>()],
            base in 0u32..1 << 20,
        ) {
            let mut fast = Vec::new();
            line_ends(&bytes, t, base, &mut fast);
            let mut slow = Vec::new();
            portable(&bytes, t, base, &mut slow);
            let want = expected(&bytes, t, base);
            prop_assert_eq!(&fast, &want);
            prop_assert_eq!(&slow, &want);
        }
    }
}

//! The valsort checksum of many records at once: the sum of the CRC-32 (IEEE 802.3, the zlib
//! polynomial, bit-reflected; `crc32fast::hash`) of each record.
//!
//! Called one record at a time, a CRC-32 library pays its per-call set-up and its single,
//! latency-bound chain of carry-less multiplies for every 100-byte record. Here several
//! records' CRCs run interleaved on x86-64 CPUs with `PCLMULQDQ` (detected at run time), so the
//! multiplier works on independent states instead of waiting on one:
//!
//! ```text
//!  record r (L >= 16 bytes), seen as L' = L + z bytes with z = (16 - L % 16) % 16 zero bytes
//!  in front (leading zeros do not change a CRC whose start value sits after them):
//!
//!  [ 0 .. 0 | first 16-z bytes ^ init ] [ 16 bytes ] [ 16 bytes ] ... [ 16 bytes ]
//!       block 0 (one load + shuffle)       block 1      block 2          block n-1
//!
//!  state = block 0;  for each next block: state = fold(state) ^ block   (x^128 mod P)
//!  crc   = !barrett(state * x^32 mod P)
//!
//!  LANES records at a time:  s0 = fold(s0) ^ b0[k];  s1 = fold(s1) ^ b1[k];  ...
//!  (independent chains: the multiplier starts one while the others' results are in flight)
//! ```
//!
//! Where the CPU has VPCLMULQDQ and AVX-512 (detected at run time), records of one size go four
//! to a 512-bit register, one per 128-bit lane, so one multiply instruction folds four records
//! (`vclmul`): measured with `examples/crc_sum.rs` (100-byte records in cache, an AMD EPYC with
//! both, builds alternated) 3.64 ns per record against 9.2 ns for the 128-bit kernel.
//!
//! Records of varying lengths (lines) take the same registers: each is sorted into a bucket by
//! its count of 16-byte blocks, and a bucket's 16 records (lengths 16n-15 to 16n, each
//! with its own leading zeros and start value, lane by lane) are folded together in n steps; a
//! record over [`MAX_GROUP_BLOCKS`] blocks, and a bucket's last records short of a group, go one
//! at a time through the 128-bit kernel. Measured with `examples/crc_sum.rs` (the same EPYC,
//! minimum of 200 repetitions): lines of 10-200 bytes 7.4 ns per line against 10.9 ns one at a
//! time with the 1 MB of them in cache, 9.6-11.7 ns against 18.0 ns over 10 MB; 100-byte slices
//! 6.0 ns against 9.4 ns.
//!
//! Other CPUs and records under 16 bytes go through `crc32fast` one by one. Every result is
//! exact: the same sum as adding `crc32fast::hash` of each record.

/// Records whose CRCs run interleaved. A fold is a carry-less multiply (latency 6-7 cycles,
/// one issued per cycle on the x86 cores we run on) followed by a XOR; one record's chain of
/// folds keeps the multiplier busy about one cycle in eight, so eight chains fill it. Measured
/// with `examples/crc_sum.rs` on 100-byte records in cache: 6.3-6.6 ns per record, against
/// 10.4-11.7 ns for `crc32fast::hash` per record; a 100-byte record takes 16 multiplies, so
/// at one a cycle this is close to the multiplier's own limit.
pub const LANES: usize = 8;

/// Longest record, in 16-byte blocks, that the AVX-512 kernel folds in a group with others of
/// its block count (512 bytes); a longer one goes alone through the 128-bit kernel, whose
/// single chain is then long enough to pay its set-up. Each count up to it keeps a bucket of
/// 16 record slices (256 bytes) while records are summed.
pub const MAX_GROUP_BLOCKS: usize = 32;

/// How many records, and at most how many of their bytes, a caller that sums records as it
/// copies them should hand [`crc32_sum`] at a time on this CPU.
///
/// The AVX-512 kernel folds records of one length class sixteen at a time: lines of mixed
/// lengths fill its groups only in a batch many times the number of classes (a batch of 64
/// lines of 10-200 bytes left most records to the one-at-a-time kernel), read again from L2.
/// The 128-bit kernel sums lines one at a time (grouping them measured slower there, folds
/// two to eight at a time: 33.8-48 ns per line against 30.6 with `examples/crc_sum.rs` on an
/// AMD EPYC of family 23), so a small batch, read again from L1 right after its copy, is
/// best: the output thread of a sort of 4 GB of lines spent 8% less CPU with 32 lines
/// (8 KiB at most) than with 1024 (128 KiB).
pub fn crc32_sum_batch() -> (usize, usize) {
    #[cfg(target_arch = "x86_64")]
    if vclmul::available() {
        return (1024, 128 << 10);
    }
    (32, 8 << 10)
}

/// The sum of the CRC-32 of every record of `data`, cut into records of `record_size` bytes
/// (a last partial record, if any, is ignored, as `chunks_exact` does).
///
/// ```
/// let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
/// let by_one: u128 = data.chunks_exact(100).map(|r| crc32fast::hash(r) as u128).sum();
/// assert_eq!(oxsort_kernels::crc32_sum_fixed(&data, 100), by_one);
/// ```
///
/// # Panics
/// If `record_size` is 0.
pub fn crc32_sum_fixed(data: &[u8], record_size: usize) -> u128 {
    assert!(record_size > 0, "record size 0");
    #[cfg(target_arch = "x86_64")]
    if record_size >= clmul::BLOCK && vclmul::available() {
        // SAFETY: `available()` just confirmed AVX-512 F and BW, VPCLMULQDQ, PCLMULQDQ, SSSE3
        // and SSE4.1 on this CPU, the features `vclmul::sum_fixed` is compiled for.
        return unsafe { vclmul::sum_fixed(data, record_size) };
    }
    #[cfg(target_arch = "x86_64")]
    if record_size >= clmul::BLOCK && clmul::available() {
        // SAFETY: `available()` just confirmed PCLMULQDQ, SSSE3 and SSE4.1 on this CPU, the
        // features `sum_fixed` is compiled for.
        return unsafe { clmul::sum_fixed(data, record_size) };
    }
    data.chunks_exact(record_size).map(|r| crc32fast::hash(r) as u128).sum()
}

/// The sum of the CRC-32 of every record in `records` (records of any lengths).
///
/// ```
/// let recs: [&[u8]; 3] = [b"a,2\n", b"some longer record, past sixteen bytes\n", b""];
/// let by_one: u128 = recs.iter().map(|r| crc32fast::hash(r) as u128).sum();
/// assert_eq!(oxsort_kernels::crc32_sum(recs), by_one);
/// ```
pub fn crc32_sum<'a, I: IntoIterator<Item = &'a [u8]>>(records: I) -> u128 {
    #[cfg(target_arch = "x86_64")]
    if vclmul::available() {
        // SAFETY: `available()` just confirmed AVX-512 F and BW, VPCLMULQDQ, PCLMULQDQ, SSSE3
        // and SSE4.1 on this CPU, the features `vclmul::sum_each` is compiled for.
        return unsafe { vclmul::sum_each(records.into_iter()) };
    }
    #[cfg(target_arch = "x86_64")]
    if clmul::available() {
        // SAFETY: `available()` just confirmed PCLMULQDQ, SSSE3 and SSE4.1 on this CPU, the
        // features `sum_each` is compiled for.
        return unsafe { clmul::sum_each(records.into_iter()) };
    }
    records.into_iter().map(|r| crc32fast::hash(r) as u128).sum()
}

/// The constants of the folds, derived here from the polynomial (so none is a magic number).
///
/// Bit-reflected CRC: byte 0 bit 0 of a message is its highest-degree coefficient. A 64-bit
/// lane "in rep_D" has bit i standing for the coefficient of x^(D-i); a carry-less multiply of
/// a rep_A lane by a rep_B lane gives a 128-bit rep_(A+B) product. A 16-byte block loaded
/// little-endian is rep_127 (its low lane stands for degrees 127..64, its high lane, on its
/// own, is rep_63).
mod consts {
    /// The CRC-32 (IEEE) generator P(x) = x^32 + x^26 + ... + 1, MSB-first, without x^32.
    const POLY: u32 = 0x04C1_1DB7;

    /// x^n mod P(x), MSB-first (bit i = coefficient of x^i).
    pub(super) const fn xpow_mod(n: u32) -> u32 {
        let mut r: u32 = 1;
        let mut i = 0;
        while i < n {
            let carry = r >> 31;
            r <<= 1;
            if carry != 0 {
                r ^= POLY;
            }
            i += 1;
        }
        r
    }

    /// floor(x^64 / P(x)), MSB-first (33 bits): long division, one quotient bit per step.
    pub(super) const fn x64_div_p() -> u64 {
        let p: u128 = (1 << 32) | POLY as u128;
        let mut rem: u128 = 1 << 64;
        let mut q: u64 = 0;
        let mut d = 64;
        while d >= 32 {
            if rem >> d & 1 != 0 {
                rem ^= p << (d - 32);
                q |= 1 << (d - 32);
            }
            d -= 1;
        }
        q
    }

    /// A polynomial of degree <= 31 as a rep_32 lane (bit i = x^(32-i)): reflected, moved up
    /// one bit.
    const fn rep32(v: u32) -> i64 {
        (v.reverse_bits() as i64) << 1
    }

    /// A polynomial of degree <= 31 as a rep_63 lane (bit i = x^(63-i)).
    const fn rep63(v: u32) -> i64 {
        ((v.reverse_bits() as u64) << 32) as i64
    }

    /// Fold by one block, low lane (degrees 127..64 of the state, A(x)·x^64): the product of
    /// a rep_127 lane and a rep_32 constant K, read as rep_127, is A·K·x^32; it must be
    /// congruent to A·x^64·x^128, so K = x^160 mod P.
    pub(super) const FOLD_LO: i64 = rep32(xpow_mod(160));
    /// Fold by one block, high lane (degrees 63..0, B(x), rep_63): B·K·x^32 ≡ B·x^128, so
    /// K = x^96 mod P.
    pub(super) const FOLD_HI: i64 = rep32(xpow_mod(96));
    /// Final step 1, 128 -> 96 bits of state·x^32: the low lane A·x^64 must become
    /// ≡ A·x^96; a rep_127 lane times a rep_63 constant reads as A·K·x, so K = x^95 mod P.
    pub(super) const FINAL_96: i64 = rep63(xpow_mod(95));
    /// Final step 2, 96 -> 64 bits: the top 32 bits Y·x^64 (low lane) times a rep_63 constant
    /// read as Y·K·x ≡ Y·x^64, so K = x^63 mod P.
    pub(super) const FINAL_64: i64 = rep63(xpow_mod(63));
    /// Barrett reduction of 64 bits to 32: mu = floor(x^64 / P), as a 33-bit rep_32 lane.
    pub(super) const BARRETT_MU: i64 = (x64_div_p().reverse_bits() >> 31) as i64;
    /// Barrett reduction: P itself (x^32 included), as a 33-bit rep_32 lane.
    pub(super) const BARRETT_P: i64 = ((((1u64 << 32) | POLY as u64).reverse_bits()) >> 31) as i64;
}

#[cfg(target_arch = "x86_64")]
mod clmul {
    use super::consts::{BARRETT_MU, BARRETT_P, FINAL_64, FINAL_96, FOLD_HI, FOLD_LO};
    use super::LANES;
    use std::arch::x86_64::*;

    /// Bytes in one fold block (one SSE register).
    pub(super) const BLOCK: usize = 16;

    /// Records summed in a `u64` before it is widened: `u32::MAX` each, so at most 2^32 of
    /// them fit; flushed far before.
    pub(super) const FLUSH_EVERY: usize = 1 << 24;

    /// Whether this CPU has what [`sum_fixed`] and [`sum_each`] are compiled for (a cached
    /// feature test: one atomic load).
    #[inline]
    pub(super) fn available() -> bool {
        is_x86_feature_detected!("pclmulqdq")
            && is_x86_feature_detected!("ssse3")
            && is_x86_feature_detected!("sse4.1")
    }

    /// `[0x80; 16] ++ [0, 1, .., 15]`: 16 bytes read at `16 - z` are the `pshufb` control that
    /// moves a block's bytes up by `z` and fills the bottom `z` with zeros.
    const SHIFT_UP: [u8; 32] = {
        let mut t = [0x80u8; 32];
        let mut i = 0;
        while i < 16 {
            t[16 + i] = i as u8;
            i += 1;
        }
        t
    };

    /// `[0; 16] ++ [0xff; 4] ++ [0; 28]`: 16 bytes read at `16 - z` put the CRC's start value
    /// (all ones) over bytes `z..z + 4` of the first block, the message's first four bytes once
    /// moved up by `z`; read at `32 - z`, the part of it that spills into the second block when
    /// `z > 12` (lengths 1 to 3 past a multiple of 16).
    const INIT_AT: [u8; 48] = {
        let mut t = [0u8; 48];
        let mut i = 16;
        while i < 20 {
            t[i] = 0xff;
            i += 1;
        }
        t
    };

    /// How records of one length are cut into blocks.
    #[derive(Clone, Copy)]
    pub(super) struct Shape {
        /// Control moving the first block's bytes into place.
        pub(super) shift: __m128i,
        /// The start value, where the first block needs it.
        pub(super) init: __m128i,
        /// The part of the start value in the second block (zero unless `z > 12`).
        pub(super) init_next: __m128i,
        /// Bytes of the record in the first block (16 - z).
        pub(super) head: usize,
        /// Whole blocks after the first.
        pub(super) blocks: usize,
    }

    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    pub(super) fn shape(len: usize) -> Shape {
        debug_assert!(len >= BLOCK);
        let z = (BLOCK - len % BLOCK) % BLOCK;
        // SAFETY: z < 16, so the reads end at 32 - z <= 32 (SHIFT_UP: 32 bytes) and
        // 48 - z <= 48 (INIT_AT: 48 bytes).
        let (shift, init, init_next) = unsafe {
            (
                _mm_loadu_si128(SHIFT_UP.as_ptr().add(BLOCK - z).cast()),
                _mm_loadu_si128(INIT_AT.as_ptr().add(BLOCK - z).cast()),
                _mm_loadu_si128(INIT_AT.as_ptr().add(2 * BLOCK - z).cast()),
            )
        };
        Shape { shift, init, init_next, head: BLOCK - z, blocks: (len + z) / BLOCK - 1 }
    }

    /// The first block of a record: its first `head` bytes at the top, zeros below, start
    /// value applied.
    ///
    /// # Safety
    /// `rec` must point at `BLOCK` readable bytes.
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    unsafe fn first(rec: *const u8, s: &Shape) -> __m128i {
        // SAFETY: the caller vouches for 16 readable bytes.
        let b = unsafe { _mm_loadu_si128(rec.cast()) };
        _mm_xor_si128(_mm_shuffle_epi8(b, s.shift), s.init)
    }

    /// The state times x^128, plus the next block.
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    fn fold(x: __m128i, next: __m128i, k: __m128i) -> __m128i {
        let lo = _mm_clmulepi64_si128(x, k, 0x00);
        let hi = _mm_clmulepi64_si128(x, k, 0x11);
        _mm_xor_si128(_mm_xor_si128(lo, hi), next)
    }

    /// The CRC of a message whose folded state is `x`: !(x·x^32 mod P).
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    fn finish(x: __m128i) -> u32 {
        let k = _mm_set_epi64x(FINAL_64, FINAL_96);
        // 128 -> 96 bits: A·x^96 (from the low lane) + B·x^32 (the high lane moved down 32
        // degrees, i.e. up 32 bits: clear the low lane, then shift the register right 4 bytes).
        let high_only = _mm_set_epi64x(-1, 0);
        let y = _mm_xor_si128(
            _mm_clmulepi64_si128(x, k, 0x00),
            _mm_srli_si128::<4>(_mm_and_si128(x, high_only)),
        );
        // 96 -> 64 bits: the top 32 (bits 32..63) folded into the high lane; the low lane is
        // left holding them, ignored from here on.
        let z = _mm_xor_si128(_mm_clmulepi64_si128(y, k, 0x10), y);
        // Barrett: q = floor(Zh·mu / x^32) with Zh the top 32 bits of Z (bits 64..95); the
        // remainder is the low 32 bits (bits 96..127) plus those of q·P.
        let pm = _mm_set_epi64x(BARRETT_P, BARRETT_MU);
        let zh = _mm_and_si128(z, _mm_set_epi64x(0xffff_ffff, 0));
        let q = _mm_clmulepi64_si128(zh, pm, 0x01);
        let q = _mm_and_si128(q, _mm_set_epi64x(0, 0xffff_ffff));
        let qp = _mm_clmulepi64_si128(q, pm, 0x10);
        let r = _mm_xor_si128(qp, _mm_srli_si128::<8>(z));
        !(_mm_extract_epi32::<1>(r) as u32)
    }

    /// The CRC of one record of at least `BLOCK` bytes.
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    fn crc_one(rec: &[u8]) -> u32 {
        let s = shape(rec.len());
        let k = _mm_set_epi64x(FOLD_HI, FOLD_LO);
        let p = rec.as_ptr();
        // SAFETY: rec.len() >= 16; block b ends at head + 16·(b + 1) <= rec.len().
        unsafe {
            let mut x = first(p, &s);
            for b in 0..s.blocks {
                let mut next = _mm_loadu_si128(p.add(s.head + b * BLOCK).cast());
                if b == 0 {
                    next = _mm_xor_si128(next, s.init_next);
                }
                x = fold(x, next, k);
            }
            finish(x)
        }
    }

    /// [`super::crc32_sum_fixed`] for `record_size >= BLOCK`: `LANES` records at a time.
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    pub(super) fn sum_fixed(data: &[u8], record_size: usize) -> u128 {
        debug_assert!(record_size >= BLOCK);
        let s = shape(record_size);
        let k = _mm_set_epi64x(FOLD_HI, FOLD_LO);
        let mut total = 0u128;
        let group = LANES * record_size;
        for part in data.chunks(FLUSH_EVERY * record_size) {
            let mut sum = 0u64;
            let mut groups = part.chunks_exact(group);
            for g in &mut groups {
                let p = g.as_ptr();
                // SAFETY: `g` holds LANES whole records of record_size >= 16 bytes; lane j's
                // block b ends at j·record_size + head + 16·(b + 1) <= (j + 1)·record_size.
                unsafe {
                    let mut x = [_mm_setzero_si128(); LANES];
                    for (j, x) in x.iter_mut().enumerate() {
                        *x = first(p.add(j * record_size), &s);
                    }
                    for b in 0..s.blocks {
                        let at = s.head + b * BLOCK;
                        // The start value's spill into the second block (zero unless z > 12).
                        let init = if b == 0 { s.init_next } else { _mm_setzero_si128() };
                        for (j, x) in x.iter_mut().enumerate() {
                            let next = _mm_loadu_si128(p.add(j * record_size + at).cast());
                            *x = fold(*x, _mm_xor_si128(next, init), k);
                        }
                    }
                    for x in x {
                        sum += finish(x) as u64;
                    }
                }
            }
            for rec in groups.remainder().chunks_exact(record_size) {
                sum += crc_one(rec) as u64;
            }
            total += sum as u128;
        }
        total
    }

    /// [`super::crc32_sum`]: one record at a time (lengths differ), with no per-record
    /// dispatch; consecutive records' chains still overlap in the CPU.
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    pub(super) fn sum_each<'a>(records: impl Iterator<Item = &'a [u8]>) -> u128 {
        records.map(|rec| crc(rec) as u128).sum()
    }

    /// The CRC of one record of any length: [`crc_one`] from `BLOCK` bytes, `crc32fast` under.
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
    pub(super) fn crc(rec: &[u8]) -> u32 {
        if rec.len() >= BLOCK {
            crc_one(rec)
        } else {
            crc32fast::hash(rec)
        }
    }
}

/// [`crc32_sum_fixed`] on CPUs with VPCLMULQDQ and AVX-512: one 512-bit register holds the
/// states of four records, one per 128-bit lane, so one instruction folds four records and the
/// final reduction of four records runs in the same few instructions as one:
///
/// ```text
///   zmm v  = [ state of record 4v | 4v+1 | 4v+2 | 4v+3 ]     (VLANES registers per group)
///   block b of the four records: four 16-byte loads into the register's lanes
///   v = clmul(v, K, lo) ^ clmul(v, K, hi) ^ blocks           (one ternary XOR)
/// ```
#[cfg(target_arch = "x86_64")]
mod vclmul {
    use super::clmul::{shape, BLOCK, FLUSH_EVERY};
    use super::consts::{BARRETT_MU, BARRETT_P, FINAL_64, FINAL_96, FOLD_HI, FOLD_LO};
    use std::arch::x86_64::*;

    /// 512-bit registers of record states per group. Each fold's multiplies take several
    /// cycles to return; four independent registers (sixteen records) keep the multiplier fed
    /// while the others' results are in flight, as [`super::LANES`] does with 128-bit ones.
    const VLANES: usize = 4;
    /// Records per 512-bit register.
    const PER_REG: usize = 4;
    /// Records per group.
    const GROUP: usize = VLANES * PER_REG;

    /// Whether this CPU has what [`sum_fixed`] is compiled for (cached feature tests).
    #[inline]
    pub(super) fn available() -> bool {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("vpclmulqdq")
            && super::clmul::available()
    }

    /// Four 16-byte blocks, `stride` bytes apart from `p`, as the four lanes of a register.
    ///
    /// # Safety
    /// `p + j * stride .. + 16` must be readable for j in 0..4.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,pclmulqdq,ssse3,sse4.1")]
    unsafe fn load4(p: *const u8, stride: usize) -> __m512i {
        // SAFETY: the caller vouches for the four 16-byte reads.
        unsafe { load4_at([p, p.add(stride), p.add(2 * stride), p.add(3 * stride)]) }
    }

    /// The sum of the CRCs of four records whose folded states are the lanes of `x`:
    /// `clmul::finish` lane by lane (every step stays within a 128-bit lane).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,pclmulqdq,ssse3,sse4.1")]
    fn finish4(x: __m512i) -> u64 {
        let k = _mm512_broadcast_i32x4(_mm_set_epi64x(FINAL_64, FINAL_96));
        let high_only = _mm512_broadcast_i32x4(_mm_set_epi64x(-1, 0));
        let y = _mm512_xor_si512(
            _mm512_clmulepi64_epi128(x, k, 0x00),
            _mm512_bsrli_epi128::<4>(_mm512_and_si512(x, high_only)),
        );
        let z = _mm512_xor_si512(_mm512_clmulepi64_epi128(y, k, 0x10), y);
        let pm = _mm512_broadcast_i32x4(_mm_set_epi64x(BARRETT_P, BARRETT_MU));
        let zh = _mm512_and_si512(z, _mm512_broadcast_i32x4(_mm_set_epi64x(0xffff_ffff, 0)));
        let q = _mm512_clmulepi64_epi128(zh, pm, 0x01);
        let q = _mm512_and_si512(q, _mm512_broadcast_i32x4(_mm_set_epi64x(0, 0xffff_ffff)));
        let qp = _mm512_clmulepi64_epi128(q, pm, 0x10);
        let r = _mm512_xor_si512(qp, _mm512_bsrli_epi128::<8>(z));
        let mut lanes = [0u32; 16];
        // SAFETY: `lanes` is 64 writable bytes; the store is unaligned.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), r) };
        // Dword 1 of each lane holds that record's CRC, inverted.
        [1, 5, 9, 13].iter().map(|&i| !lanes[i] as u64).sum()
    }

    /// [`super::crc32_sum_fixed`] for `record_size >= BLOCK`: [`GROUP`] records at a time, the
    /// rest by `clmul`.
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,pclmulqdq,ssse3,sse4.1")]
    pub(super) fn sum_fixed(data: &[u8], record_size: usize) -> u128 {
        debug_assert!(record_size >= BLOCK);
        let s = shape(record_size);
        let k = _mm512_broadcast_i32x4(_mm_set_epi64x(FOLD_HI, FOLD_LO));
        let shift = _mm512_broadcast_i32x4(s.shift);
        let init = _mm512_broadcast_i32x4(s.init);
        let init_next = _mm512_broadcast_i32x4(s.init_next);
        let r = record_size;
        let mut total = 0u128;
        for part in data.chunks(FLUSH_EVERY * r) {
            let mut sum = 0u64;
            let mut groups = part.chunks_exact(GROUP * r);
            for g in &mut groups {
                let p = g.as_ptr();
                // SAFETY: `g` holds GROUP whole records of r >= 16 bytes; register v's lane j
                // reads record 4v + j's block b, which ends at head + 16·(b + 1) <= r within it.
                unsafe {
                    let mut x = [_mm512_setzero_si512(); VLANES];
                    for (v, x) in x.iter_mut().enumerate() {
                        let b0 = load4(p.add(v * PER_REG * r), r);
                        *x = _mm512_xor_si512(_mm512_shuffle_epi8(b0, shift), init);
                    }
                    for b in 0..s.blocks {
                        let at = s.head + b * BLOCK;
                        // The start value's spill into the second block (zero unless z > 12).
                        let extra = if b == 0 { init_next } else { _mm512_setzero_si512() };
                        for (v, x) in x.iter_mut().enumerate() {
                            let next =
                                _mm512_xor_si512(load4(p.add(v * PER_REG * r + at), r), extra);
                            let lo = _mm512_clmulepi64_epi128(*x, k, 0x00);
                            let hi = _mm512_clmulepi64_epi128(*x, k, 0x11);
                            *x = _mm512_ternarylogic_epi64::<0x96>(lo, hi, next);
                        }
                    }
                    for x in x {
                        sum += finish4(x);
                    }
                }
            }
            total += sum as u128;
            // The records past the last whole group (this function's features include those
            // `clmul` is compiled for).
            total += super::clmul::sum_fixed(groups.remainder(), r);
        }
        total
    }

    /// Four 16-byte blocks, one at each address, as the four lanes of a register.
    ///
    /// # Safety
    /// Each `p[j] .. + 16` must be readable.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,pclmulqdq,ssse3,sse4.1")]
    unsafe fn load4_at(p: [*const u8; PER_REG]) -> __m512i {
        // SAFETY: the caller vouches for the four 16-byte reads.
        unsafe {
            lanes4([
                _mm_loadu_si128(p[0].cast()),
                _mm_loadu_si128(p[1].cast()),
                _mm_loadu_si128(p[2].cast()),
                _mm_loadu_si128(p[3].cast()),
            ])
        }
    }

    /// Four 128-bit values as the lanes of one register, the first lowest.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,pclmulqdq,ssse3,sse4.1")]
    fn lanes4(v: [__m128i; PER_REG]) -> __m512i {
        let x = _mm512_castsi128_si512(v[0]);
        let x = _mm512_inserti32x4::<1>(x, v[1]);
        let x = _mm512_inserti32x4::<2>(x, v[2]);
        _mm512_inserti32x4::<3>(x, v[3])
    }

    /// [`super::crc32_sum`]: records bucketed by their count of blocks, each full bucket folded
    /// as one group ([`group_sum`]); records under `BLOCK` bytes or over
    /// [`super::MAX_GROUP_BLOCKS`] blocks, and each bucket's last (fewer than [`GROUP`]), one at
    /// a time as `clmul` sums them.
    ///
    /// ```text
    ///   bucket n (lengths 16n-15 ..= 16n):  [ rec | rec | ... ]  GROUP of them -> group_sum
    /// ```
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,pclmulqdq,ssse3,sse4.1")]
    pub(super) fn sum_each<'a>(records: impl Iterator<Item = &'a [u8]>) -> u128 {
        const MAX: usize = super::MAX_GROUP_BLOCKS;
        let mut buckets: [[&[u8]; GROUP]; MAX] = [[&[]; GROUP]; MAX];
        let mut fill = [0usize; MAX];
        let mut total = 0u128;
        for rec in records {
            let n = rec.len().div_ceil(BLOCK);
            if rec.len() < BLOCK || n > MAX {
                total += super::clmul::crc(rec) as u128;
                continue;
            }
            let (bucket, fill) = (&mut buckets[n - 1], &mut fill[n - 1]);
            bucket[*fill] = rec;
            *fill += 1;
            if *fill == GROUP {
                total += group_sum(bucket, n) as u128;
                *fill = 0;
            }
        }
        let left = buckets.iter().zip(&fill).flat_map(|(bucket, &fill)| &bucket[..fill]);
        total + super::clmul::sum_each(left.copied())
    }

    /// The sum of the CRCs of [`GROUP`] records of `n` blocks each (`BLOCK`·n - 15 to
    /// `BLOCK`·n bytes), folded four to a register as `sum_fixed` folds records of one size;
    /// here each lane has its own leading zeros and start value (its record's `Shape`), and
    /// its blocks its own address:
    ///
    /// ```text
    ///   step 0:      lane j = shuffle(first 16 bytes of rec j, shift_j) ^ init_j
    ///   step b >= 1: lane j = fold(lane j) ^ rec j[head_j + 16(b-1) ..][..16]  (^ init_next_j at b = 1)
    /// ```
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,pclmulqdq,ssse3,sse4.1")]
    fn group_sum(recs: &[&[u8]; GROUP], n: usize) -> u64 {
        debug_assert!(recs.iter().all(|r| r.len() >= BLOCK && r.len().div_ceil(BLOCK) == n));
        let k = _mm512_broadcast_i32x4(_mm_set_epi64x(FOLD_HI, FOLD_LO));
        let mut x = [_mm512_setzero_si512(); VLANES];
        let mut init_next = [_mm512_setzero_si512(); VLANES];
        // Where each record's second block starts.
        let mut at = [std::ptr::null::<u8>(); GROUP];
        for (v, x) in x.iter_mut().enumerate() {
            let lane = |j: usize| shape(recs[v * PER_REG + j].len());
            let s = [lane(0), lane(1), lane(2), lane(3)];
            let mut first = [std::ptr::null::<u8>(); PER_REG];
            for (j, s) in s.iter().enumerate() {
                let rec = recs[v * PER_REG + j];
                first[j] = rec.as_ptr();
                // The second block's start: within the record, or its end (n = 1).
                at[v * PER_REG + j] = rec[s.head..].as_ptr();
            }
            let shift = lanes4(s.map(|s| s.shift));
            let init = lanes4(s.map(|s| s.init));
            init_next[v] = lanes4(s.map(|s| s.init_next));
            // SAFETY: every record has at least BLOCK bytes.
            let b0 = unsafe { load4_at(first) };
            *x = _mm512_xor_si512(_mm512_shuffle_epi8(b0, shift), init);
        }
        for b in 1..n {
            for (v, x) in x.iter_mut().enumerate() {
                let p = [0, 1, 2, 3].map(|j| at[v * PER_REG + j].wrapping_add((b - 1) * BLOCK));
                // SAFETY: a record of n blocks has head + 16(n - 1) bytes, so its block b ends at
                // head + 16b <= its length.
                let mut next = unsafe { load4_at(p) };
                if b == 1 {
                    next = _mm512_xor_si512(next, init_next[v]);
                }
                let lo = _mm512_clmulepi64_epi128(*x, k, 0x00);
                let hi = _mm512_clmulepi64_epi128(*x, k, 0x11);
                *x = _mm512_ternarylogic_epi64::<0x96>(lo, hi, next);
            }
        }
        x.into_iter().map(|x| finish4(x)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn by_one(data: &[u8], r: usize) -> u128 {
        data.chunks_exact(r).map(|x| crc32fast::hash(x) as u128).sum()
    }

    /// Deterministic bytes (xorshift) so a failure names its case.
    fn bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s as u8
            })
            .collect()
    }

    #[test]
    fn constants_match_the_published_ones() {
        // Barrett mu and P for CRC-32 IEEE as printed in Intel's PCLMULQDQ CRC paper (and in
        // zlib-ng, Linux): an oracle independent of the derivation above.
        assert_eq!(consts::BARRETT_MU, 0x1_F701_1641);
        assert_eq!(consts::BARRETT_P, 0x1_DB71_0641);
        assert_eq!(consts::FOLD_LO, 0x1_7519_97d0);
        assert_eq!(consts::FOLD_HI, 0x0_ccaa_009e);
    }

    #[test]
    fn every_length_1_to_300_equals_crc32fast() {
        for r in 1..=300 {
            // Enough records for several whole groups plus a remainder, and a trailing part.
            let n = 3 * LANES + 5;
            let data = bytes(n * r + r / 2, r as u64);
            assert_eq!(crc32_sum_fixed(&data, r), by_one(&data, r), "record size {r}");
            let recs: Vec<&[u8]> = data.chunks_exact(r).collect();
            assert_eq!(crc32_sum(recs), by_one(&data, r), "record size {r}, as slices");
        }
    }

    #[test]
    fn extreme_contents() {
        for fill in [0x00u8, 0xff, 0x80, 0x01] {
            for r in [16, 17, 31, 32, 100, 128, 255] {
                let data = vec![fill; r * (2 * LANES + 3)];
                assert_eq!(crc32_sum_fixed(&data, r), by_one(&data, r), "fill {fill:#x}, size {r}");
            }
        }
    }

    #[test]
    fn empty_and_short() {
        assert_eq!(crc32_sum_fixed(&[], 100), 0);
        assert_eq!(crc32_sum_fixed(&[7; 99], 100), 0);
        assert_eq!(crc32_sum(std::iter::empty()), 0);
        assert_eq!(crc32_sum([&b""[..]]), crc32fast::hash(b"") as u128);
        // zlib.crc32(b"123456789") == 0xcbf43926, padded to 16+ bytes it goes the SIMD way.
        assert_eq!(crc32_sum([&b"123456789"[..]]), 0xcbf4_3926);
    }

    #[test]
    fn records_of_every_length_class_fill_groups_and_equal_crc32fast() {
        // Every length from 0 to past the grouped kernel's longest, 40 records of each, cut
        // from one buffer at every alignment: each length class fills two whole groups of 16
        // with some left over, in an order that interleaves the classes.
        let top = MAX_GROUP_BLOCKS * 16 + 40;
        let data = bytes(top * top, 11);
        let mut recs: Vec<&[u8]> = Vec::new();
        for round in 0..40 {
            for len in 0..=top {
                let at = (round * 7 + len * 13) % (data.len() - top);
                recs.push(&data[at..at + len]);
            }
        }
        let want: u128 = recs.iter().map(|r| crc32fast::hash(r) as u128).sum();
        assert_eq!(crc32_sum(recs.iter().copied()), want);
        // One class alone: whole groups only.
        for len in [16, 17, 31, 32, 33, 100, 200, 511, 512] {
            let one: Vec<&[u8]> = (0..64).map(|i| &data[i * 3..i * 3 + len]).collect();
            let want: u128 = one.iter().map(|r| crc32fast::hash(r) as u128).sum();
            assert_eq!(crc32_sum(one.iter().copied()), want, "length {len}");
        }
    }

    proptest! {
        #[test]
        fn random_records_equal_crc32fast(
            r in 1usize..300,
            n in 0usize..40,
            seed in any::<u64>(),
        ) {
            let data = bytes(n * r, seed);
            prop_assert_eq!(crc32_sum_fixed(&data, r), by_one(&data, r));
        }

        #[test]
        fn random_slices_equal_crc32fast(recs in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..300), 0..400)) {
            let want: u128 = recs.iter().map(|r| crc32fast::hash(r) as u128).sum();
            prop_assert_eq!(crc32_sum(recs.iter().map(|r| r.as_slice())), want);
        }
    }
}

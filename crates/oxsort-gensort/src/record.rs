//! Record generation: binary, ascii, skewed binary and skewed ascii records, byte-identical to
//! gensort 1.5.

use crate::rng::{state, step};
use crate::RECORD_LEN;

/// Which records to generate (gensort's `-a` and `-s`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Binary records (the default): ten 80-bit generator outputs, masked.
    #[default]
    Binary,
    /// Ascii records (`-a`): printable key, record number in hex, hex filler, `\r\n`.
    Ascii,
    /// Binary records with skewed keys (`-s`).
    Skew,
    /// Ascii records with skewed keys (`-a -s`).
    SkewAscii,
}

impl Kind {
    /// The kind for gensort's flags `-a` (`ascii`) and `-s` (`skew`).
    pub const fn new(ascii: bool, skew: bool) -> Kind {
        match (ascii, skew) {
            (false, false) => Kind::Binary,
            (true, false) => Kind::Ascii,
            (false, true) => Kind::Skew,
            (true, true) => Kind::SkewAscii,
        }
    }

    /// Whether records are ascii (`-a`).
    pub const fn is_ascii(self) -> bool {
        matches!(self, Kind::Ascii | Kind::SkewAscii)
    }

    /// Whether keys are skewed (`-s`).
    pub const fn is_skewed(self) -> bool {
        matches!(self, Kind::Skew | Kind::SkewAscii)
    }

    /// All four kinds.
    pub const ALL: [Kind; 4] = [Kind::Binary, Kind::Ascii, Kind::Skew, Kind::SkewAscii];
}

/// Masks XORed onto the ten 80-bit slices of a binary record, placed in the top 80 bits of a
/// u128 so they line up with the generator state they mask.
const MASKS: [u128; 10] = {
    const RAW: [u128; 10] = [
        0,
        0xF0E8E4E2E1D8D4D2D1CC,
        0xCAC9C6C5C3B8B4B2B1AC,
        0xAAA9A6A5A39C9A999695,
        0x938E8D8B87787472716C,
        0x6A696665635C5A595655,
        0x534E4D4B473C3A393635,
        0x332E2D2B271E1D1B170F,
        0xC8C4C2C1989492918CE0,
        0x170F332E2D2B271E1D1B,
    ];
    let mut out = [0u128; 10];
    let mut k = 0;
    while k < 10 {
        out[k] = RAW[k] << 48;
        k += 1;
    }
    out
};

/// Number of skew prefix table entries: skew indexes run 0..=128.
const SKEW_ENTRIES: usize = 129;

/// Binary skew prefixes: entry `s` is the first 6 key bytes of binary record `s`, i.e. the top
/// 48 bits of `X_{s+1}`, held in the low 48 bits of a u64.
const BIN_PREFIX: [u64; SKEW_ENTRIES] = {
    let mut out = [0u64; SKEW_ENTRIES];
    let mut s = 0;
    while s < SKEW_ENTRIES {
        out[s] = (state(s as u128 + 1) >> 80) as u64;
        s += 1;
    }
    out
};

/// Ascii skew prefixes: entry `s` is the first 6 key characters of ascii record `s`.
const ASCII_PREFIX: [[u8; 6]; SKEW_ENTRIES] = {
    let mut out = [[0u8; 6]; SKEW_ENTRIES];
    let mut s = 0;
    while s < SKEW_ENTRIES {
        let mut hi = (state(s as u128 + 1) >> 64) as u64;
        let mut i = 0;
        while i < 6 {
            out[s][i] = 32 + (hi % 95) as u8;
            hi /= 95;
            i += 1;
        }
        s += 1;
    }
    out
};

#[inline(always)]
fn skew_index64(x: u64) -> usize {
    if x == 0 {
        0
    } else if x >> 60 != 0 {
        // gensort 1.5 tests the top 4 bits where it means the top bit: every value in
        // [2^60, 2^64) gets 64.
        64
    } else {
        (64 - x.leading_zeros()) as usize
    }
}

/// The skew index of record `n`: its bit length, with gensort 1.5's quirk (every `n` in
/// `[2^60, 2^64)` gets 64, every `n >= 2^124` gets 128).
///
/// ```
/// use oxsort_gensort::skew_index;
/// assert_eq!(skew_index(0), 0);
/// assert_eq!(skew_index(5), 3);
/// assert_eq!(skew_index((1 << 60) - 1), 60);
/// assert_eq!(skew_index(1 << 60), 64);
/// assert_eq!(skew_index(1 << 64), 65);
/// assert_eq!(skew_index(1 << 124), 128);
/// ```
#[inline(always)]
pub fn skew_index(n: u128) -> usize {
    let hi = (n >> 64) as u64;
    if hi != 0 {
        64 + skew_index64(hi)
    } else {
        skew_index64(n as u64)
    }
}

/// Generates records `start, start+1, …` (record numbers wrap modulo 2^128) into `buf`, one
/// record per 100 bytes.
///
/// # Panics
/// If `buf.len()` is not a multiple of 100.
///
/// ```
/// use oxsort_gensort::{generate, Kind};
/// let mut rec = [0u8; 100];
/// generate(Kind::Binary, 0, &mut rec);
/// assert_eq!(&rec[..10], b"JimGrayRIP");
/// ```
pub fn generate(kind: Kind, start: u128, buf: &mut [u8]) {
    assert!(buf.len() % RECORD_LEN == 0, "buffer length {} is not a multiple of 100", buf.len());
    match kind {
        Kind::Binary => gen_binary::<false>(start, buf),
        Kind::Skew => gen_binary::<true>(start, buf),
        Kind::Ascii => gen_ascii::<false>(start, buf),
        Kind::SkewAscii => gen_ascii::<true>(start, buf),
    }
}

fn gen_binary<const SKEW: bool>(start: u128, buf: &mut [u8]) {
    if buf.is_empty() {
        return;
    }
    // ring[j] and ring[j + 10] both hold the same state, so the ten states of a record are
    // always the contiguous window ring[head..head + 10].
    let mut ring = [0u128; 20];
    let mut x = state(start.wrapping_add(1));
    for j in 0..10 {
        ring[j] = x;
        ring[j + 10] = x;
        x = step(x);
    }
    // `x` is now the state one past the window: X_{n+11} for the current record n.
    let mut head = 0usize;
    let mut n = start;
    for rec in buf.chunks_exact_mut(RECORD_LEN) {
        let window = &ring[head..head + 10];
        for k in 0..10 {
            let bytes = (window[k] ^ MASKS[k]).to_be_bytes();
            rec[10 * k..10 * k + 10].copy_from_slice(&bytes[..10]);
        }
        if SKEW {
            skew_binary(rec, window[0], n);
        }
        // Drop the head, append the next state.
        ring[head] = x;
        ring[head + 10] = x;
        x = step(x);
        head = if head == 9 { 0 } else { head + 1 };
        n = n.wrapping_add(1);
    }
}

#[inline(always)]
fn skew_binary(rec: &mut [u8], x: u128, n: u128) {
    let mut v = ((x >> 32) & 63) as u32;
    if v > 48 {
        v = 0;
    }
    if v == 0 {
        return;
    }
    let prefix = BIN_PREFIX[skew_index(n)];
    let mut top = [0u8; 8];
    top[2..].copy_from_slice(&rec[..6]);
    let key48 = u64::from_be_bytes(top);
    let mask = ((1u64 << v) - 1) << (48 - v);
    let key48 = (key48 & !mask) | (prefix & mask);
    rec[..6].copy_from_slice(&key48.to_be_bytes()[2..]);
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

fn gen_ascii<const SKEW: bool>(start: u128, buf: &mut [u8]) {
    let mut x = state(start);
    let mut n = start;
    for rec in buf.chunks_exact_mut(RECORD_LEN) {
        x = step(x);
        let mut hi = (x >> 64) as u64;
        let lo = x as u64;
        for c in rec[..8].iter_mut() {
            *c = 32 + (hi % 95) as u8;
            hi /= 95;
        }
        rec[8] = 32 + (lo % 95) as u8;
        rec[9] = 32 + ((lo / 95) % 95) as u8;
        rec[10] = b' ';
        rec[11] = b' ';
        for (i, c) in rec[12..44].iter_mut().enumerate() {
            *c = HEX_UPPER[((n >> (124 - 4 * i)) & 15) as usize];
        }
        rec[44] = b' ';
        rec[45] = b' ';
        for j in 0..13 {
            let digit = HEX_UPPER[((lo >> (48 - 4 * j)) & 15) as usize];
            rec[46 + 4 * j..50 + 4 * j].fill(digit);
        }
        rec[98] = b'\r';
        rec[99] = b'\n';
        if SKEW {
            let mut c = ((x >> 32) & 7) as usize;
            if c > 6 {
                c = 0;
            }
            rec[..c].copy_from_slice(&ASCII_PREFIX[skew_index(n)][..c]);
        }
        n = n.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(kind: Kind, n: u128) -> [u8; 100] {
        let mut r = [0u8; 100];
        generate(kind, n, &mut r);
        r
    }

    #[test]
    fn record_zero() {
        let r = one(Kind::Binary, 0);
        assert_eq!(&r[..10], b"JimGrayRIP");
        assert_eq!(&r[10..20], &[0x65, 0x08, 0x00, 0x60, 0x83, 0x6b, 0x39, 0x2c, 0xd5, 0x8b]);
        let a = one(Kind::Ascii, 0);
        assert_eq!(
            &a[..],
            &b"AsfAGHM5om  00000000000000000000000000000000  0000222200002222000022220000222200002222000000001111\r\n"[..]
        );
    }

    #[test]
    fn prefix_tables() {
        assert_eq!(BIN_PREFIX[0], 0x4a696d477261);
        assert_eq!(BIN_PREFIX[2], 0x45979353dbed);
        assert_eq!(&ASCII_PREFIX[0], b"AsfAGH");
        assert_eq!(&ASCII_PREFIX[1], b"~sHd0j");
    }

    #[test]
    fn skew_indexes() {
        assert_eq!(skew_index(1), 1);
        assert_eq!(skew_index(2), 2);
        assert_eq!(skew_index(3), 2);
        assert_eq!(skew_index(4), 3);
        assert_eq!(skew_index(u64::MAX as u128), 64);
        assert_eq!(skew_index((1 << 124) - 1), 124);
        assert_eq!(skew_index(u128::MAX), 128);
    }

    #[test]
    fn single_records_match_ranges() {
        for kind in Kind::ALL {
            for start in [0u128, 5, (1 << 64) - 3, u128::MAX - 4] {
                let mut many = vec![0u8; 100 * 12];
                generate(kind, start, &mut many);
                for (i, rec) in many.chunks_exact(100).enumerate() {
                    assert_eq!(rec, &one(kind, start.wrapping_add(i as u128))[..]);
                }
            }
        }
    }
}

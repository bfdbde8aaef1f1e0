//! The short byte strings of a record (its fields, its keys) copied, moved and compared
//! without a call to `memcpy` or `memcmp` per field: for fields of a few to 128 bytes (and
//! whole records that short, the benchmark's 100 bytes) the call costs more than the work. An INREC that only keeps fields of the record, in their order (a
//! record cut to the bytes a job reads), is applied a record at a time, in place.
//!
//! ```text
//!   record i (in_len)      | key | ...... | field |..|      fields (src, dst, len):
//!                             │              │               sources ascending, apart,
//!                             v              v               each moving to a dst <= src
//!   record k <= i (out_len) | key | field |                  (the cut packs them)
//! ```
//!
//! A field of up to 128 bytes is moved with fixed-size loads that cover it (overlapping each
//! other where its length is not a power of two), all made before the stores, so a field that
//! overlaps its own new place moves whole. Longer ones go to `copy_within`.

use std::cmp::Ordering;

mod masked;
pub use masked::{copy_xor, gather_masked, MaskedPiece};

/// Whether `fields` (each `(src, dst, len)`) move records of `in_len` bytes forward into packed
/// records of their total length: sources ascending and apart, destinations packed from 0 (so
/// none lies after its source). Then [`cut_in_place`] may pack records of one buffer to its
/// front.
pub fn fields_pack(fields: &[(usize, usize, usize)], in_len: usize) -> bool {
    let mut dst_end = 0;
    let mut src_end = 0;
    for &(src, dst, len) in fields {
        if dst != dst_end || src < src_end || src + len > in_len {
            return false;
        }
        dst_end += len;
        src_end = src + len;
    }
    true
}

/// Moves the fields of the record at `from` in `buf` into the record at `to` (`to <= from`,
/// the fields as [`fields_pack`] accepts them): records packed front to back, one at a time,
/// never overwrite bytes not yet moved.
///
/// # Panics
/// If a field lies outside `buf`.
#[inline]
pub fn cut_in_place(buf: &mut [u8], from: usize, to: usize, fields: &[(usize, usize, usize)]) {
    debug_assert!(to <= from);
    for &(src, dst, len) in fields {
        match Short::load(&buf[from + src..from + src + len]) {
            Some(field) => field.store(&mut buf[to + dst..to + dst + len]),
            None => buf.copy_within(from + src..from + src + len, to + dst),
        }
    }
}

/// `to.copy_from_slice(from)` for the short fields of a record, or a short record, without a
/// call to `memcpy` (which costs more than the copy for bytes this few). In a loop over
/// records of one size, the choice by length is the same each time and costs nothing.
///
/// # Panics
/// If the lengths differ.
#[inline]
pub fn copy_field(from: &[u8], to: &mut [u8]) {
    assert_eq!(from.len(), to.len(), "a field copied into one of another length");
    match Short::load(from) {
        Some(field) => field.store(to),
        None => to.copy_from_slice(from),
    }
}

/// A field of up to [`Short::MAX`] bytes held in registers: fixed-size loads that cover it
/// (overlapping each other where its length is not a power of two), made before any store,
/// so a field moved onto bytes it overlaps moves whole.
struct Short {
    words: [u128; 8],
    len: usize,
}

impl Short {
    /// The longest field held in registers.
    const MAX: usize = 128;

    /// The field `s`, unless it is longer than [`Short::MAX`].
    #[inline(always)]
    fn load(s: &[u8]) -> Option<Short> {
        fn w<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
            s[at..at + N].try_into().expect("N bytes")
        }
        let n = s.len();
        let x = |at: usize| u128::from_ne_bytes(w(s, at));
        let words = match n {
            0 => [0; 8],
            1..=3 => [u128::from(s[0]), u128::from(s[n / 2]), u128::from(s[n - 1]), 0, 0, 0, 0, 0],
            4..=7 => {
                let (a, z) = (u32::from_ne_bytes(w(s, 0)), u32::from_ne_bytes(w(s, n - 4)));
                [u128::from(a), u128::from(z), 0, 0, 0, 0, 0, 0]
            }
            8..=15 => {
                let (a, z) = (u64::from_ne_bytes(w(s, 0)), u64::from_ne_bytes(w(s, n - 8)));
                [u128::from(a), u128::from(z), 0, 0, 0, 0, 0, 0]
            }
            16..=32 => [x(0), x(n - 16), 0, 0, 0, 0, 0, 0],
            33..=64 => [x(0), x(16), x(n - 32), x(n - 16), 0, 0, 0, 0],
            65..=Self::MAX => {
                [x(0), x(16), x(32), x(48), x(n - 64), x(n - 48), x(n - 32), x(n - 16)]
            }
            _ => return None,
        };
        Some(Short { words, len: n })
    }

    /// Writes the field into `d`, of its length.
    #[inline(always)]
    fn store(self, d: &mut [u8]) {
        let (x, n) = (self.words, self.len);
        match n {
            0 => {}
            1..=3 => (d[0], d[n / 2], d[n - 1]) = (x[0] as u8, x[1] as u8, x[2] as u8),
            4..=7 => {
                d[..4].copy_from_slice(&(x[0] as u32).to_ne_bytes());
                d[n - 4..].copy_from_slice(&(x[1] as u32).to_ne_bytes());
            }
            8..=15 => {
                d[..8].copy_from_slice(&(x[0] as u64).to_ne_bytes());
                d[n - 8..].copy_from_slice(&(x[1] as u64).to_ne_bytes());
            }
            16..=32 => {
                d[..16].copy_from_slice(&x[0].to_ne_bytes());
                d[n - 16..].copy_from_slice(&x[1].to_ne_bytes());
            }
            33..=64 => {
                d[..16].copy_from_slice(&x[0].to_ne_bytes());
                d[16..32].copy_from_slice(&x[1].to_ne_bytes());
                d[n - 32..n - 16].copy_from_slice(&x[2].to_ne_bytes());
                d[n - 16..].copy_from_slice(&x[3].to_ne_bytes());
            }
            _ => {
                for (i, word) in x[..4].iter().enumerate() {
                    d[16 * i..16 * (i + 1)].copy_from_slice(&word.to_ne_bytes());
                }
                for (i, word) in x[4..].iter().enumerate() {
                    let at = n - 64 + 16 * i;
                    d[at..at + 16].copy_from_slice(&word.to_ne_bytes());
                }
            }
        }
    }
}

/// `a.cmp(b)` for byte strings of one length: keys of 4 to 16 bytes as two big-endian words
/// that may overlap (the overlap is equal by then), with no call to `memcmp`, which costs more
/// than the comparison for keys this short.
#[inline]
pub fn cmp_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len();
    if n != b.len() || !(4..=16).contains(&n) {
        return a.cmp(b);
    }
    let (head, tail) = if n >= 8 {
        let w =
            |s: &[u8], at: usize| u64::from_be_bytes(s[at..at + 8].try_into().expect("8 bytes"));
        (w(a, 0).cmp(&w(b, 0)), w(a, n - 8).cmp(&w(b, n - 8)))
    } else {
        let w =
            |s: &[u8], at: usize| u32::from_be_bytes(s[at..at + 4].try_into().expect("4 bytes"));
        (w(a, 0).cmp(&w(b, 0)), w(a, n - 4).cmp(&w(b, n - 4)))
    };
    head.then(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field length to 140 (past [`Short::MAX`]) and every shift to 20 bytes
    /// (overlapping ones included), against `copy_within`.
    #[test]
    fn a_short_field_moves_as_copy_within_does() {
        for len in 0..=140 {
            for shift in 0..=20 {
                let mut a: Vec<u8> = (0..200u8).collect();
                let mut b = a.clone();
                let (mut c, mut d) = (a.clone(), a.clone());
                cut_in_place(&mut a, 30 + shift, 30, &[(0, 0, len)]);
                b.copy_within(30 + shift..30 + shift + len, 30);
                assert_eq!(a, b, "len {len}, back {shift}");
                let f = Short::load(&c[30..30 + len]);
                match f {
                    Some(f) => f.store(&mut c[30 + shift..30 + shift + len]),
                    None => c.copy_within(30..30 + len, 30 + shift),
                }
                d.copy_within(30..30 + len, 30 + shift);
                assert_eq!(c, d, "len {len}, on {shift}");
            }
        }
    }

    /// Records cut one after another in one buffer hold their fields, in order, packed.
    #[test]
    fn records_cut_in_place_hold_their_fields_packed() {
        let (r, records) = (100, 50);
        let fields = [(0, 0, 10), (12, 10, 3), (20, 13, 40), (70, 53, 30)];
        assert!(fields_pack(&fields, r));
        let out = 83;
        let data: Vec<u8> = (0..r * records).map(|i| (i * 7 % 251) as u8).collect();
        let want: Vec<u8> = data
            .chunks_exact(r)
            .flat_map(|rec| fields.iter().flat_map(|&(s, _, l)| rec[s..s + l].to_vec()))
            .collect();
        assert_eq!(want.len(), out * records);
        let mut inplace = data.clone();
        for i in 0..records {
            cut_in_place(&mut inplace, i * r, i * out, &fields);
        }
        assert_eq!(&inplace[..out * records], &want[..]);
    }

    #[test]
    fn only_forward_packed_fields_pack() {
        assert!(fields_pack(&[(0, 0, 50)], 100));
        assert!(fields_pack(&[(0, 0, 10), (50, 10, 49)], 100));
        assert!(!fields_pack(&[(50, 0, 10), (0, 10, 10)], 100), "sources out of order");
        assert!(!fields_pack(&[(0, 0, 10), (5, 10, 10)], 100), "sources that overlap");
        assert!(!fields_pack(&[(0, 0, 10), (20, 12, 10)], 100), "a gap in the record");
        assert!(!fields_pack(&[(95, 0, 10)], 100), "past the record");
    }

    /// Every length from 0 to 20, pairs that differ in one byte anywhere (and equal ones),
    /// against the slices' own order.
    #[test]
    fn short_keys_compare_as_their_bytes_do() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in 0..=20usize {
            for _ in 0..500 {
                let a: Vec<u8> = (0..n).map(|_| next() as u8).collect();
                let mut b = a.clone();
                if n > 0 && next() % 4 != 0 {
                    let at = next() as usize % n;
                    b[at] = next() as u8;
                }
                assert_eq!(cmp_bytes(&a, &b), a.cmp(&b), "{a:?} against {b:?}");
                assert_eq!(cmp_bytes(&b, &a), b.cmp(&a), "{b:?} against {a:?}");
            }
        }
    }
}

//! Key bytes that are a record's bytes XORed with a mask: text and big-endian binary fields,
//! ascending (mask 0) or descending (mask 0xFF), signed ones with the sign bit of their first
//! byte flipped. A key's first bytes are gathered from such fields a word at a time:
//!
//! ```text
//!   record  [....|b0 b1 b2 b3 b4|....]         a field at src, len 5
//!   word     b0 b1 b2 b3 b4 .. .. ..           one 8-byte load at src (or ending at src + len)
//!            ^ mask (first, rest, rest, ...)   & keep (the low len bytes)
//!   key     [..|k0 k1 k2 k3 k4|next piece..]   shifted to dst in a 16-byte lane, ORed in
//! ```

/// `dst[i] = src[i] ^ rest` (`first` for `dst[0]`), eight bytes at a time: a key's fields are
/// a few bytes each, and a copy of a length known only at run time would be a call.
#[inline(always)]
pub fn copy_xor(src: &[u8], dst: &mut [u8], first: u8, rest: u8) {
    let src = &src[..dst.len()];
    let wide = u64::from_ne_bytes([rest; 8]);
    let mut words = dst.chunks_exact_mut(8);
    let mut from = src.chunks_exact(8);
    for (d, s) in (&mut words).zip(&mut from) {
        let w = u64::from_ne_bytes(s.try_into().expect("8 bytes")) ^ wide;
        d.copy_from_slice(&w.to_ne_bytes());
    }
    for (d, s) in words.into_remainder().iter_mut().zip(from.remainder()) {
        *d = s ^ rest;
    }
    if let Some(top) = dst.first_mut() {
        *top ^= first ^ rest;
    }
}

/// Up to 8 key bytes of one masked field, read with one unaligned 64-bit load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaskedPiece {
    /// Where the bytes start in the record, and how many (1 to 8).
    src: usize,
    len: usize,
    /// Where they go in the key.
    dst: usize,
    /// Where the piece's whole field ends in the record: a shorter record has no key.
    need: usize,
    /// The low `len` bytes set.
    keep: u64,
    /// XORed into the bytes (little-endian: the first key byte is the lowest).
    mask: u64,
}

impl MaskedPiece {
    /// Appends to `out` the pieces of the field of `len` bytes at `offset` in the record, key
    /// bytes `dst..dst + len`, written as [`copy_xor`] writes them.
    pub fn split(offset: usize, len: usize, dst: usize, first: u8, rest: u8, out: &mut Vec<Self>) {
        for at in (0..len).step_by(8) {
            let n = (len - at).min(8);
            let mut mask = [rest; 8];
            if at == 0 {
                mask[0] = first;
            }
            out.push(MaskedPiece {
                src: offset + at,
                len: n,
                dst: dst + at,
                need: offset + len,
                keep: u64::MAX >> (8 * (8 - n)),
                mask: u64::from_le_bytes(mask),
            });
        }
    }

    /// The piece's key bytes as a little-endian word (zeros past `len`), `None` if `record` is
    /// too short for its field.
    #[inline(always)]
    fn load(&self, record: &[u8]) -> Option<u64> {
        if record.len() < self.need {
            return None;
        }
        let end = self.src + self.len;
        let w = if let Some(b) = record.get(self.src..self.src + 8) {
            u64::from_le_bytes(b.try_into().expect("8 bytes"))
        } else if end >= 8 {
            // Near the record's end: the 8 bytes that end where the piece does (`len` < 8 here,
            // or the first branch would have taken it).
            let b = &record[end - 8..end];
            u64::from_le_bytes(b.try_into().expect("8 bytes")) >> (8 * (8 - self.len))
        } else {
            let mut b = [0u8; 8];
            b[..self.len].copy_from_slice(&record[self.src..end]);
            u64::from_le_bytes(b)
        };
        Some((w ^ self.mask) & self.keep)
    }
}

/// The first `n` (at most 16) key bytes of `record` the `pieces` (in key order) write, as a
/// little-endian word, zeros past the last piece; `None` if `record` is too short for a field
/// one of those bytes comes from. One lane in a register: pieces stored at odd places and read
/// back as one wider word would wait on the CPU's store forwarding.
#[inline(always)]
pub fn gather_masked(pieces: &[MaskedPiece], record: &[u8], n: usize) -> Option<u128> {
    debug_assert!(n <= 16);
    let mut lane = 0u128;
    for p in pieces {
        if p.dst >= n {
            break;
        }
        lane |= u128::from(p.load(record)?) << (8 * p.dst);
    }
    Some(lane)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first `n` key bytes by [`copy_xor`], field by field, zero-padded; `None` if a field
    /// they need lies past the record's end.
    fn reference(record: &[u8], fields: &[(usize, usize, u8, u8)], n: usize) -> Option<Vec<u8>> {
        let mut key = Vec::new();
        for &(offset, len, first, rest) in fields {
            if key.len() >= n {
                break;
            }
            let src = record.get(offset..offset + len)?;
            let at = key.len();
            key.resize(at + len, 0);
            copy_xor(src, &mut key[at..], first, rest);
        }
        key.resize(key.len().max(n), 0);
        key.truncate(n);
        Some(key)
    }

    #[test]
    fn gathered_keys_are_the_masked_fields_wherever_they_lie() {
        let record: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5A).collect();
        let shapes: [&[(usize, usize, u8, u8)]; 5] = [
            &[(10, 4, 0xFF, 0xFF), (20, 8, 0x80, 0), (0, 10, 0, 0)],
            &[(35, 5, 0, 0), (0, 3, 0x7F, 0xFF)],
            &[(1, 12, 0, 0), (39, 1, 0x80, 0)],
            &[(0, 2, 0, 0)],
            &[(3, 16, 0, 0xFF)],
        ];
        for fields in shapes {
            let mut pieces = Vec::new();
            let mut dst = 0;
            for &(offset, len, first, rest) in fields {
                MaskedPiece::split(offset, len, dst, first, rest, &mut pieces);
                dst += len;
            }
            for cut in [37, 38, 39, 40] {
                let rec = &record[..cut];
                for n in 0..=16 {
                    let got = gather_masked(&pieces, rec, n).map(|w| w.to_le_bytes()[..n].to_vec());
                    assert_eq!(got, reference(rec, fields, n), "{fields:?} cut {cut} n {n}");
                }
            }
        }
    }

    #[test]
    fn a_record_too_short_for_a_field_has_no_key() {
        let mut pieces = Vec::new();
        MaskedPiece::split(4, 6, 0, 0, 0, &mut pieces);
        assert_eq!(gather_masked(&pieces, &[1; 9], 4), None, "the field ends at byte 10");
        assert!(gather_masked(&pieces, &[1; 10], 4).is_some());
    }
}

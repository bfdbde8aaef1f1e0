//! The entry layout: 80-bit key prefix above a 48-bit record index, in one `u128`.

/// One sortable entry: the top [`PREFIX_BYTES`]` * 8` bits hold the key prefix (big-endian, so
/// integer order is byte order), the low [`INDEX_BITS`] bits the record's index in input order.
///
/// ```text
///  127                                   48 47                        0
/// +----------------------------------------+---------------------------+
/// |   key bytes 0..10, big-endian (80 b)   |  record index (48 bits)   |
/// +----------------------------------------+---------------------------+
/// ```
pub type Entry = u128;

/// Bits of an entry that hold the record index; a single sort handles at most `2^48` records.
pub const INDEX_BITS: u32 = 48;

/// Bytes of key prefix held in an entry: the key model's prefix width, defined once in
/// `oxsort-format`.
pub use oxsort_format::PREFIX_BYTES;

/// Mask of the index bits of an entry.
pub const INDEX_MASK: u128 = (1u128 << INDEX_BITS) - 1;

/// The largest record index an entry can hold.
pub const MAX_INDEX: u64 = (1u64 << INDEX_BITS) - 1;

const _: () = assert!(PREFIX_BYTES * 8 + INDEX_BITS as usize == 128);

/// Builds the entry of a record from its 10-byte key prefix and its index.
///
/// # Panics
/// If `index > MAX_INDEX` (`2^48 - 1`).
#[inline]
pub fn make_entry(prefix: &[u8; PREFIX_BYTES], index: u64) -> Entry {
    assert!(index <= MAX_INDEX, "record index {index} does not fit in {INDEX_BITS} bits");
    pack(prefix_u128(prefix), index)
}

/// The record index of an entry.
#[inline]
pub fn entry_index(e: Entry) -> u64 {
    (e & INDEX_MASK) as u64
}

/// The key prefix of an entry (its top 80 bits), shifted down to the low bits.
#[inline]
pub fn entry_prefix(e: Entry) -> u128 {
    e >> INDEX_BITS
}

/// The 10 prefix bytes as an integer (bits 0..80), big-endian.
#[inline(always)]
fn prefix_u128(key: &[u8; PREFIX_BYTES]) -> u128 {
    let (hi, lo) = key.split_at(8);
    let hi = u64::from_be_bytes(hi.try_into().expect("8 bytes"));
    let lo = u16::from_be_bytes(lo.try_into().expect("2 bytes"));
    ((hi as u128) << 16) | lo as u128
}

#[inline(always)]
fn pack(prefix: u128, index: u64) -> Entry {
    (prefix << INDEX_BITS) | index as u128
}

/// Appends to `out` the entries of the consecutive fixed-size records in `records`: the key is
/// the [`PREFIX_BYTES`] bytes at `key_offset` of each record, the indexes are `base_index`,
/// `base_index + 1`, ...
///
/// One 8-byte and one 2-byte unaligned big-endian load per record (`movbe`/`bswap`), no
/// per-record capacity check (the output is reserved once).
///
/// # Panics
/// If `rec_size == 0`, `records.len()` is not a multiple of `rec_size`, the key does not fit in
/// a record (`key_offset + 10 > rec_size`), or the last index exceeds [`MAX_INDEX`].
pub fn extract_entries(
    records: &[u8],
    rec_size: usize,
    key_offset: usize,
    base_index: u64,
    out: &mut Vec<Entry>,
) {
    assert!(rec_size > 0, "record size must be positive");
    assert!(
        records.len().is_multiple_of(rec_size),
        "records length {} is not a multiple of the record size {rec_size}",
        records.len()
    );
    assert!(
        key_offset.checked_add(PREFIX_BYTES).is_some_and(|end| end <= rec_size),
        "key at offset {key_offset} does not fit in a {rec_size}-byte record"
    );
    let n = (records.len() / rec_size) as u64;
    assert!(
        n == 0 || base_index.checked_add(n - 1).is_some_and(|last| last <= MAX_INDEX),
        "record indexes from {base_index} ({n} records) exceed {INDEX_BITS} bits"
    );
    out.extend(records.chunks_exact(rec_size).zip(base_index..).map(|(rec, index)| {
        let key: &[u8; PREFIX_BYTES] =
            rec[key_offset..key_offset + PREFIX_BYTES].try_into().expect("10-byte key");
        pack(prefix_u128(key), index)
    }));
}

/// Appends to `out` the entries of the delimited records of `data` whose key is the whole
/// line: record `i` is `data[offsets[i]..offsets[i + 1]]` (with its `terminator`, if it has
/// one), its prefix the first [`PREFIX_BYTES`] bytes of it without the terminator, zero-padded
/// when shorter, and its index `base_index + i`. The same entries as [`make_entry`] of each
/// line's prefix, built without a copy of run-time length:
///
/// ```text
///   data   ... | a b c \n | d e f g h i j k l m n o p \n | ...
///                 line i          line i + 1
///   load   16 bytes at offsets[i], big-endian:  a b c \n d e f g h i | (rest dropped)
///   mask   the top min(len, 10) bytes of the ten:  a b c 0 0 0 0 0 0 0
/// ```
///
/// A line that starts within 16 bytes of the end of `data` is copied instead.
///
/// # Panics
/// If an offset is past the end of `data` or below the one before it, or the last index
/// exceeds [`MAX_INDEX`].
pub fn extract_line_entries(
    data: &[u8],
    offsets: &[u32],
    terminator: u8,
    base_index: u64,
    out: &mut Vec<Entry>,
) {
    /// Bytes of one unaligned load: the prefix's ten and the rest of a 128-bit word.
    const LOAD: usize = 16;
    let n = offsets.len().saturating_sub(1) as u64;
    assert!(
        n == 0 || base_index.checked_add(n - 1).is_some_and(|last| last <= MAX_INDEX),
        "record indexes from {base_index} ({n} records) exceed {INDEX_BITS} bits"
    );
    let whole: u128 = (1 << (PREFIX_BYTES * 8)) - 1;
    out.extend(offsets.windows(2).zip(base_index..).map(|(w, index)| {
        let (start, end) = (w[0] as usize, w[1] as usize);
        let line = &data[start..end];
        let len = line.len() - usize::from(line.last() == Some(&terminator));
        let keep = len.min(PREFIX_BYTES);
        let prefix = match data.get(start..start + LOAD) {
            Some(word) => {
                let word = u128::from_be_bytes(word.try_into().expect("16 bytes"));
                // The top `keep` bytes of the ten (bits past the line are another line's).
                let ten = word >> ((LOAD - PREFIX_BYTES) * 8);
                ten & (whole ^ ((1u128 << ((PREFIX_BYTES - keep) * 8)) - 1))
            }
            None => {
                let mut p = [0u8; PREFIX_BYTES];
                p[..keep].copy_from_slice(&line[..keep]);
                prefix_u128(&p)
            }
        };
        pack(prefix, index)
    }));
}

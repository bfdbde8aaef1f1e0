//! In-memory sorts of NumPy arrays on the oxsort kernels.
//!
//! Each record's key (its fields in the order asked, each encoded so that plain byte order is
//! the wanted order) gives an [`Entry`]: the first 10 key bytes above the record's index. One
//! parallel radix sort of the entries orders records by key and, among equal keys, by index: a
//! stable sort. Keys longer than 10 bytes settle tied prefixes by comparing whole keys, encoded
//! on the fly. The result is the indexes (`argsort`) or the records gathered into the output
//! array: the caller's buffer is read, never copied.
//!
//! ```text
//!  record i: [ k: <u8 | p: S24 ]      key = BE(k) ++ p            entry = key[..10] << 48 | i
//!  floats:   -0.0 as +0.0, sign flipped (negatives: all bits), NaN = all ones (last, as NumPy)
//!  signed:   sign bit flipped        descending: every byte inverted (NaN stays last)
//! ```

use std::sync::Mutex;

use oxsort_kernels::{
    entry_index, entry_prefix, make_entry, par_gather, par_sort_entries_with_buffer, Entry,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;

/// Records per task, at least, when building entries in parallel: large enough that the
/// task overhead is noise next to the encoding of the records.
const ENTRY_TASK_RECORDS: usize = 1 << 16;

/// The most bytes of entry arrays kept from one sort for the next (see [`SPARE`]): 512 MiB
/// keeps both arrays of a 1.6e7-item sort. On this project's VMs memory freed goes back to the
/// host and costs 1.6 to 2.2 s per GiB to fault in again (README, "Memory and huge pages"): an
/// argsort of 1e7 items took 0.9 s with fresh arrays, most of it page faults.
const SPARE_MAX_BYTES: usize = 512 << 20;

/// The entry array and radix scratch of the last sort, kept (up to [`SPARE_MAX_BYTES`]) so
/// that repeated sorts reuse populated memory. A sort running while another holds them
/// allocates its own.
static SPARE: Mutex<Option<(Vec<Entry>, Vec<Entry>)>> = Mutex::new(None);

/// One key field of a record.
#[derive(Clone, Copy, Debug)]
struct Field {
    offset: usize,
    kind: Kind,
    size: usize,
    big_endian: bool,
    descending: bool,
}

/// How a field's bytes map to an order-preserving encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Unsigned integers (1, 2, 4, 8 bytes) and booleans.
    Unsigned,
    /// Two's-complement integers.
    Signed,
    /// IEEE floats (2, 4, 8 bytes).
    Float,
    /// Fixed-length bytes, compared as unsigned bytes.
    Bytes,
    /// Fixed-length UCS-4 text, compared by code point.
    Ucs4,
}

impl Field {
    /// Reads an integer of `size` bytes at `at`.
    #[inline]
    fn uint(&self, rec: &[u8]) -> u64 {
        let b = &rec[self.offset..self.offset + self.size];
        let mut v = [0u8; 8];
        if self.big_endian {
            v[8 - self.size..].copy_from_slice(b);
            u64::from_be_bytes(v)
        } else {
            v[..self.size].copy_from_slice(b);
            u64::from_le_bytes(v)
        }
    }

    /// Writes the field's encoding (`size` bytes) of `rec` into `out`, as much as fits.
    #[inline]
    fn encode(&self, rec: &[u8], out: &mut [u8]) {
        let n = out.len().min(self.size);
        match self.kind {
            Kind::Bytes => {
                out[..n].copy_from_slice(&rec[self.offset..self.offset + n]);
                if self.descending {
                    out[..n].iter_mut().for_each(|b| *b = !*b);
                }
            }
            Kind::Ucs4 => {
                let mut tmp = [0u8; 4];
                for (c, o) in out[..n].chunks_mut(4).enumerate() {
                    let at = self.offset + 4 * c;
                    tmp.copy_from_slice(&rec[at..at + 4]);
                    let mut v = if self.big_endian {
                        u32::from_be_bytes(tmp)
                    } else {
                        u32::from_le_bytes(tmp)
                    };
                    if self.descending {
                        v = !v;
                    }
                    o.copy_from_slice(&v.to_be_bytes()[..o.len()]);
                }
            }
            Kind::Unsigned | Kind::Signed | Kind::Float => {
                let bits = 8 * self.size as u32;
                let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
                let sign = 1u64 << (bits - 1);
                let v = self.uint(rec);
                let enc = match self.kind {
                    Kind::Unsigned => v ^ if self.descending { mask } else { 0 },
                    Kind::Signed => (v ^ sign) ^ if self.descending { mask } else { 0 },
                    _ => {
                        // The exponent's all-ones pattern: infinities at it, NaNs above it.
                        let inf = match self.size {
                            2 => 0x7c00,
                            4 => 0x7f80_0000,
                            _ => 0x7ff0_0000_0000_0000,
                        };
                        let abs = v & !sign;
                        if abs > inf {
                            mask
                        } else {
                            let v = if abs == 0 { 0 } else { v };
                            let e = if v & sign != 0 { !v & mask } else { v | sign };
                            e ^ if self.descending { mask } else { 0 }
                        }
                    }
                };
                out[..n].copy_from_slice(&enc.to_be_bytes()[8 - self.size..8 - self.size + n]);
            }
        }
    }
}

/// Encodes the key of `rec` into `out` (as many leading key bytes as `out` holds).
#[inline]
fn encode_key(fields: &[Field], rec: &[u8], out: &mut [u8]) {
    let mut at = 0;
    for f in fields {
        if at >= out.len() {
            break;
        }
        let end = (at + f.size).min(out.len());
        f.encode(rec, &mut out[at..end]);
        at = end;
    }
}

/// Parses the facade's field list: `(offset, kind, size, big_endian, descending)`, kind one
/// of `u i b f S U`.
fn fields_of(
    spec: Vec<(usize, String, usize, bool, bool)>,
    itemsize: usize,
) -> PyResult<Vec<Field>> {
    spec.into_iter()
        .map(|(offset, kind, size, big_endian, descending)| {
            let kind = match (kind.as_str(), size) {
                ("u" | "b", 1 | 2 | 4 | 8) => Kind::Unsigned,
                ("i", 1 | 2 | 4 | 8) => Kind::Signed,
                ("f", 2 | 4 | 8) => Kind::Float,
                ("S", 1..) => Kind::Bytes,
                ("U", _) if size % 4 == 0 && size > 0 => Kind::Ucs4,
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "cannot sort a field of kind '{kind}' and {size} bytes"
                    )))
                }
            };
            if offset + size > itemsize {
                return Err(PyValueError::new_err(format!(
                    "a field at offset {offset} of {size} bytes ends past the {itemsize}-byte item"
                )));
            }
            Ok(Field { offset, kind, size, big_endian, descending })
        })
        .collect()
}

/// Sorts the entries of `n` records of `itemsize` bytes in `data` by `fields`, stably, into
/// `entries` (`scratch`: the radix sort's buffer).
fn sort_entries_into(
    data: &[u8],
    itemsize: usize,
    fields: &[Field],
    threads: usize,
    entries: &mut Vec<Entry>,
    scratch: &mut Vec<Entry>,
) {
    let n = data.len() / itemsize.max(1);
    let key_len: usize = fields.iter().map(|f| f.size).sum();
    entries.clear();
    // Written in place, in parallel (an indexed extend never zeroes the array first).
    entries.par_extend((0..n).into_par_iter().with_min_len(ENTRY_TASK_RECORDS).map(|i| {
        let mut prefix = [0u8; oxsort_kernels::PREFIX_BYTES];
        encode_key(fields, &data[i * itemsize..(i + 1) * itemsize], &mut prefix);
        make_entry(&prefix, i as u64)
    }));
    par_sort_entries_with_buffer(entries, scratch, threads);
    if key_len > oxsort_kernels::PREFIX_BYTES {
        settle_ties(entries, data, itemsize, fields, key_len);
    }
}

/// Orders each run of entries with equal prefixes by their whole keys (stable: the runs come
/// in index order and the sort keeps equal keys so).
fn settle_ties(
    entries: &mut [Entry],
    data: &[u8],
    itemsize: usize,
    fields: &[Field],
    key_len: usize,
) {
    let mut start = 0;
    let (mut ka, mut kb) = (vec![0u8; key_len], vec![0u8; key_len]);
    while start < entries.len() {
        let p = entry_prefix(entries[start]);
        let len = entries[start..]
            .iter()
            .position(|&e| entry_prefix(e) != p)
            .unwrap_or(entries.len() - start);
        if len > 1 {
            entries[start..start + len].sort_by(|&a, &b| {
                let (a, b) = (entry_index(a) as usize, entry_index(b) as usize);
                encode_key(fields, &data[a * itemsize..(a + 1) * itemsize], &mut ka);
                encode_key(fields, &data[b * itemsize..(b + 1) * itemsize], &mut kb);
                ka.cmp(&kb)
            });
        }
        start += len;
    }
}

/// Sorts `n` records of `itemsize` bytes at address `data` by `fields` (see [`fields_of`]),
/// stably, with the GIL released. `argsort`: writes the sorted order as `n` little-endian
/// int64 at `out`; else gathers the records in sorted order into the `n * itemsize` bytes at
/// `out`.
///
/// The facade passes the addresses of C-contiguous NumPy arrays it holds for the whole call:
/// the input is only read, the output (a fresh array) only written.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sort_records(
    py: Python<'_>,
    data: usize,
    n: usize,
    itemsize: usize,
    fields: Vec<(usize, String, usize, bool, bool)>,
    out: usize,
    threads: usize,
    argsort: bool,
) -> PyResult<()> {
    let fields = fields_of(fields, itemsize)?;
    if n as u64 > oxsort_kernels::MAX_INDEX {
        return Err(PyValueError::new_err(format!(
            "{n} items are more than oxsort sorts in memory"
        )));
    }
    if n == 0 || itemsize == 0 {
        return Ok(());
    }
    let threads = threads.max(1);
    py.allow_threads(|| {
        // SAFETY: the facade passes the data address of a C-contiguous array of `n` items of
        // `itemsize` bytes that it holds (so it stays allocated) until this call returns; it is
        // only read here.
        let input = unsafe { std::slice::from_raw_parts(data as *const u8, n * itemsize) };
        let spare = SPARE.lock().unwrap_or_else(|e| e.into_inner()).take();
        let (mut entries, mut scratch) = spare.unwrap_or_default();
        sort_entries_into(input, itemsize, &fields, threads, &mut entries, &mut scratch);
        if argsort {
            // SAFETY: `out` is a fresh C-contiguous int64 array of `n` items the facade holds
            // until this call returns and that nothing else references; int64 has no invalid
            // values and the address is aligned for it (NumPy aligns its allocations).
            let idx = unsafe { std::slice::from_raw_parts_mut(out as *mut i64, n) };
            idx.par_iter_mut()
                .zip(entries.par_iter())
                .for_each(|(o, &e)| *o = entry_index(e) as i64);
        } else {
            // SAFETY: `out` is a fresh C-contiguous array of `n * itemsize` bytes the facade
            // holds until this call returns and that nothing else references.
            let out = unsafe { std::slice::from_raw_parts_mut(out as *mut u8, n * itemsize) };
            par_gather(
                &entries,
                itemsize,
                |i| &input[i as usize * itemsize..][..itemsize],
                out,
                threads,
            );
        }
        let bytes = (entries.capacity() + scratch.capacity()) * std::mem::size_of::<Entry>();
        if bytes <= SPARE_MAX_BYTES {
            *SPARE.lock().unwrap_or_else(|e| e.into_inner()) = Some((entries, scratch));
        }
    });
    Ok(())
}

//! The key model the in-memory sort, the merge and the checks share: raw key bytes at a fixed
//! place (the fast path: one 80-bit prefix says everything) or a general [`KeySpec`] whose
//! normalized bytes are compared, the first 10 of them standing in the entry's prefix.
//!
//! ```text
//!  entry (u128):  | first 10 bytes of the key (80 bits) | record index (48 bits) |
//!  fast path:     the key is ≤ 10 raw bytes: equal prefixes mean equal keys
//!  general:       equal prefixes are broken by comparing whole normalized keys, then the index
//!  lines:         no key given: the whole record (without its terminator) as raw bytes
//! ```
//!
//! Records are fixed-size, or end with a terminator byte (`\n`, NUL) that is part of the record
//! as stored and written but never part of its key.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::sync::Arc;

use oxsort_format::{FixedKey, KeyError, KeySpec};

use crate::config::RecordFormat;

thread_local! {
    /// Two scratch buffers per thread for normalized keys being compared.
    static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// How keys are made and compared.
#[derive(Clone, Debug)]
pub(crate) struct Keys {
    pub(crate) fmt: RecordFormat,
    pub(crate) spec: Option<Arc<KeySpec>>,
    /// Copy mode: every key is equal, so order is input order.
    pub(crate) copy: bool,
    /// Records end with this byte (variable length); `None`: fixed `fmt.record_size` bytes.
    pub(crate) delim: Option<u8>,
    /// `spec` written without allocating, when all its fields are fixed-width
    /// ([`KeySpec::fixed_key`]): prefixes and whole keys come from it.
    fixed: Option<FixedKey>,
}

impl Keys {
    /// Keys of fixed records described by `fmt` alone.
    pub(crate) fn fixed(fmt: RecordFormat) -> Keys {
        Keys { fmt, spec: None, copy: false, delim: None, fixed: None }
    }

    /// Keys of records of `fmt` ordered by `spec` (raw key bytes of `fmt` without one).
    pub(crate) fn new(
        fmt: RecordFormat,
        spec: Option<Arc<KeySpec>>,
        copy: bool,
        delim: Option<u8>,
    ) -> Keys {
        let fixed = spec.as_ref().and_then(|s| s.fixed_key());
        Keys { fmt, spec, copy, delim, fixed }
    }

    /// Whether equal prefixes may hide different keys (then ties need [`Keys::cmp_full`]).
    #[inline]
    pub(crate) fn general(&self) -> bool {
        (self.spec.is_some() || self.delim.is_some()) && !self.copy
    }

    /// Whether keys are whole delimited records as raw bytes (no key given).
    #[inline]
    pub(crate) fn raw_lines(&self) -> bool {
        self.delim.is_some() && self.spec.is_none() && !self.copy
    }

    /// The records of `data`, each with its terminator (`data` holds whole records).
    #[inline]
    pub(crate) fn records<'a>(&self, data: &'a [u8]) -> Records<'a> {
        match self.delim {
            None => Records::Fixed(data.chunks_exact(self.fmt.record_size)),
            Some(t) => Records::Delimited { data, t },
        }
    }

    /// The part of a record its key is made from (without the terminator).
    #[inline]
    pub(crate) fn key_part<'a>(&self, rec: &'a [u8]) -> &'a [u8] {
        match self.delim {
            Some(t) => rec.strip_suffix(&[t]).unwrap_or(rec),
            None => rec,
        }
    }

    /// A line's raw bytes as its key, zero-padded to the prefix width.
    #[inline]
    fn raw_prefix(line: &[u8]) -> [u8; 10] {
        let mut p = [0u8; 10];
        let n = line.len().min(10);
        p[..n].copy_from_slice(&line[..n]);
        p
    }

    /// The 10-byte prefix of a record's key (`scratch`: room for a normalized key).
    #[inline]
    pub(crate) fn prefix(&self, rec: &[u8], scratch: &mut Vec<u8>) -> Result<[u8; 10], KeyError> {
        if self.copy {
            return Ok([0; 10]);
        }
        let rec = self.key_part(rec);
        match &self.spec {
            None if self.delim.is_some() => Ok(Self::raw_prefix(rec)),
            None => Ok(self.fmt.key_prefix(rec)),
            Some(spec) => {
                let mut p = [0u8; 10];
                // Fixed-width keys: only the prefix's bytes are written.
                if let Some(f) = &self.fixed {
                    if f.write(rec, &mut p).is_some() {
                        return Ok(p);
                    }
                }
                scratch.clear();
                spec.normalize(rec, scratch)?;
                let n = scratch.len().min(10);
                p[..n].copy_from_slice(&scratch[..n]);
                Ok(p)
            }
        }
    }

    /// Compares two records' whole keys. Every record was normalized once when it was read, so
    /// normalization cannot fail here; if it did, the records compare equal (the verification
    /// of the output would still catch any disorder).
    pub(crate) fn cmp_full(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.copy {
            return Ordering::Equal;
        }
        let (a, b) = (self.key_part(a), self.key_part(b));
        match &self.spec {
            None if self.delim.is_some() => a.cmp(b),
            None => self.fmt.key_prefix(a).cmp(&self.fmt.key_prefix(b)),
            Some(spec) => SCRATCH.with(|s| {
                let (x, y) = &mut *s.borrow_mut();
                x.clear();
                y.clear();
                match (self.normalize(spec, a, x), self.normalize(spec, b, y)) {
                    (Ok(()), Ok(())) => x.as_slice().cmp(y.as_slice()),
                    _ => Ordering::Equal,
                }
            }),
        }
    }

    /// The whole key of a record, as compared (raw bytes on the fast path).
    pub(crate) fn full_key(&self, rec: &[u8], out: &mut Vec<u8>) {
        out.clear();
        if self.copy {
            return;
        }
        let rec = self.key_part(rec);
        match &self.spec {
            None if self.delim.is_some() => out.extend_from_slice(rec),
            None => out.extend_from_slice(&self.fmt.key_prefix(rec)),
            Some(spec) => {
                if self.normalize(spec, rec, out).is_err() {
                    out.clear();
                }
            }
        }
    }

    /// Appends the normalized key of `key` (a record's key part) to `out`: written in place for
    /// fixed-width keys ([`FixedKey`]), through [`KeySpec::normalize`] otherwise (and for a
    /// record too short, to get its error).
    #[inline]
    fn normalize(&self, spec: &KeySpec, key: &[u8], out: &mut Vec<u8>) -> Result<(), KeyError> {
        if let Some(f) = &self.fixed {
            let start = out.len();
            out.resize(start + f.width(), 0);
            if f.write(key, &mut out[start..]).is_some() {
                return Ok(());
            }
            out.truncate(start);
        }
        spec.normalize(key, out)
    }
}

/// The records of a buffer of whole records.
pub(crate) enum Records<'a> {
    /// Fixed-size records.
    Fixed(std::slice::ChunksExact<'a, u8>),
    /// Records ending with a terminator byte (the last one may lack it).
    Delimited {
        /// What is left.
        data: &'a [u8],
        /// The terminator.
        t: u8,
    },
}

impl<'a> Iterator for Records<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        match self {
            Records::Fixed(c) => c.next(),
            Records::Delimited { data, t } => {
                if data.is_empty() {
                    return None;
                }
                let end = memchr::memchr(*t, data).map_or(data.len(), |i| i + 1);
                let (rec, rest) = data.split_at(end);
                *data = rest;
                Some(rec)
            }
        }
    }
}

//! The key model the in-memory sort, the merge and the checks share: raw key bytes at a fixed
//! place (the fast path: one 80-bit prefix says everything) or a general [`KeySpec`] whose
//! normalized bytes are compared, the first 10 of them standing in the entry's prefix.
//!
//! ```text
//!  entry (u128):  | first 10 bytes of the key (80 bits) | record index (48 bits) |
//!  fast path:     the key is ≤ 10 raw bytes: equal prefixes mean equal keys
//!  general:       equal prefixes are broken by comparing whole normalized keys, then the index
//! ```

use std::cell::RefCell;
use std::cmp::Ordering;
use std::sync::Arc;

use oxsort_format::{KeyError, KeySpec};

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
}

impl Keys {
    /// Whether equal prefixes may hide different keys (then ties need [`Keys::cmp_full`]).
    #[inline]
    pub(crate) fn general(&self) -> bool {
        self.spec.is_some() && !self.copy
    }

    /// The 10-byte prefix of a record's key; `scratch` holds the normalized key afterwards
    /// (general keys only).
    #[inline]
    pub(crate) fn prefix(&self, rec: &[u8], scratch: &mut Vec<u8>) -> Result<[u8; 10], KeyError> {
        if self.copy {
            return Ok([0; 10]);
        }
        match &self.spec {
            None => Ok(self.fmt.key_prefix(rec)),
            Some(spec) => {
                scratch.clear();
                spec.normalize(rec, scratch)?;
                let mut p = [0u8; 10];
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
        match &self.spec {
            None => self.fmt.key_prefix(a).cmp(&self.fmt.key_prefix(b)),
            Some(spec) => SCRATCH.with(|s| {
                let (x, y) = &mut *s.borrow_mut();
                x.clear();
                y.clear();
                match (spec.normalize(a, x), spec.normalize(b, y)) {
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
        match &self.spec {
            None => out.extend_from_slice(&self.fmt.key_prefix(rec)),
            Some(spec) => {
                if spec.normalize(rec, out).is_err() {
                    out.clear();
                }
            }
        }
    }
}

//! DFSORT's JOINKEYS application: two inputs joined on their keys, the joined records then
//! processed by the main task's statements.
//!
//! ```text
//!  JOINKEYS FILE=F1,FIELDS=(p,m,A|D,...)[,SORTED[,NOSEQCK]]   F1 (DD SORTJNF1, or F1=ddname)
//!           [,INCLUDE=(cond)|OMIT=(cond)][,STOPAFT=n][,TASKID=id]
//!  JOINKEYS FILE=F2,FIELDS=(p,m,A|D,...)[,SORTED[,NOSEQCK]]   F2 (DD SORTJNF2, or F2=ddname)
//!  JOIN     UNPAIRED[,F1][,F2][,ONLY]                          which records are kept
//!  REFORMAT FIELDS=(F1:p,m[,p,m...],F2:p,m,...,?)[,FILL=C'x'|X'hh']
//!
//!  each file: INCLUDE=/OMIT= and STOPAFT= of its JOINKEYS, then its JNFnCNTL statements
//!  (INCLUDE/OMIT, INREC, SUM; DD idFnCNTL with TASKID=id); its keys refer to INREC's records
//!
//!  F1 sorted by its keys ──┐
//!                          ├─ merge join ─> joined records ─> SORT/COPY, INCLUDE, INREC, SUM,
//!  F2 sorted by its keys ──┘   (key order)                    OUTREC of the main task
//! ```
//!
//! Keys are compared as unsigned binary (DFSORT's JOINKEYS keys have no format), field by field,
//! each ascending or descending; both files give the same number of keys with the same lengths
//! and orders. Records with equal keys in both files are *paired*: each F1 record of the group is
//! joined with each F2 record of the group, F1 order outer, F2 order inner. The others are
//! *unpaired* and kept only as `JOIN UNPAIRED` says.
//!
//! A joined record is built by `REFORMAT`: the F1 and F2 fields in the order listed (`p,m`
//! after `F1:` or `F2:` belongs to that file until the next prefix), and `?` the indicator
//! byte: `B` for a paired record, `1` for an unpaired F1 record, `2` for an unpaired F2 record.
//! The fields of the file an unpaired record lacks are filled with `FILL` (default a blank:
//! oxsort's records are ASCII, where DFSORT's EBCDIC blank is X'40'). Without `REFORMAT`
//! (allowed with `ONLY`) the joined record is the unpaired record itself.

use std::cmp::Ordering;

use oxsort_bytes::{cmp_bytes, copy_field};

use crate::program::filter::Filter;
use crate::spec::{FieldType, KeyField, KeySpec, ShortFields};

/// One of the two inputs of a join.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JoinSide {
    /// The first file (`FILE=F1`).
    F1,
    /// The second file (`FILE=F2`).
    F2,
}

impl JoinSide {
    /// `F1` or `F2`.
    pub fn name(self) -> &'static str {
        match self {
            JoinSide::F1 => "F1",
            JoinSide::F2 => "F2",
        }
    }
}

/// One key field of a `JOINKEYS FIELDS=`: unsigned binary bytes, ascending or descending.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JoinKey {
    /// 0-based offset in the record.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
    /// `D` rather than `A`.
    pub descending: bool,
}

/// What one `JOINKEYS` statement says of its file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JoinInput {
    /// The DD the file is read from (`SORTJNF1`, `SORTJNF2`, or `F1=ddname`).
    pub dd: String,
    /// The key fields, major first.
    pub keys: Vec<JoinKey>,
    /// `SORTED`: the file is already in key order (it is copied, and its order checked).
    pub sorted: bool,
    /// `NOSEQCK`: DFSORT skips the order check of a SORTED file. oxsort checks anyway (it costs
    /// nothing, and a join of a file out of order would silently lose pairs).
    pub noseqck: bool,
    /// `INCLUDE=(cond)` or `OMIT=(cond)`: the records of this file the join sees (applied
    /// before its sort, to the records as read).
    pub filter: Option<Filter>,
    /// `STOPAFT=n`: the file is read until `n` records were accepted (after the filter).
    pub stopaft: Option<u64>,
    /// `TASKID=id`: the two characters that name the file's control statements DD
    /// (`idF1CNTL`) in place of `JN` (`JNF1CNTL`).
    pub taskid: Option<String>,
    /// 1-based line of the JOINKEYS statement, for messages.
    pub line: usize,
}

impl JoinInput {
    /// The DD of this file's own control statements (`INCLUDE`/`OMIT`, `INREC`, `SUM` applied
    /// before its sort): `JNF1CNTL`/`JNF2CNTL`, or `idF1CNTL` with `TASKID=id`.
    pub fn control_dd(&self, side: JoinSide) -> String {
        format!("{}{}CNTL", self.taskid.as_deref().unwrap_or("JN"), side.name())
    }
}

/// An item of `REFORMAT FIELDS=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JoinItem {
    /// `p,m` of one file (0-based offset, length).
    Field {
        /// The file.
        side: JoinSide,
        /// 0-based offset.
        offset: usize,
        /// Length in bytes.
        len: usize,
    },
    /// `?`: `B`, `1` or `2`, where the key was found.
    Indicator,
}

/// A whole JOINKEYS application: both inputs, the join kind and the joined record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JoinSpec {
    /// The F1 input.
    pub f1: JoinInput,
    /// The F2 input.
    pub f2: JoinInput,
    /// Unpaired F1 records are kept.
    pub unpaired_f1: bool,
    /// Unpaired F2 records are kept.
    pub unpaired_f2: bool,
    /// `ONLY`: paired records are dropped.
    pub only: bool,
    /// `REFORMAT FIELDS=`; `None` only with `ONLY`.
    pub reformat: Option<Vec<JoinItem>>,
    /// `FILL=`: the byte for the fields of the file an unpaired record lacks.
    pub fill: u8,
}

/// A JOINKEYS application that cannot work with the record lengths of its inputs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JoinSpecError {
    /// A key or REFORMAT field ends past the end of the records of its file.
    #[error(
        "{what} of {side} ends at byte {end}, past the end of {side}'s {record_len}-byte records"
    )]
    PastRecord {
        /// `key 2`, `REFORMAT field 3`, ...
        what: String,
        /// The file.
        side: &'static str,
        /// 1-based last byte of the field.
        end: usize,
        /// The file's record length.
        record_len: usize,
    },
    /// Without REFORMAT, `JOIN UNPAIRED,F1,F2,ONLY` passes records of both files: they must
    /// have one length.
    #[error(
        "JOIN UNPAIRED,F1,F2,ONLY without REFORMAT passes F1 records ({f1} bytes) and F2 \
         records ({f2} bytes) as they are: they must have one length (add a REFORMAT statement)"
    )]
    MixedLengths {
        /// F1's record length.
        f1: usize,
        /// F2's record length.
        f2: usize,
    },
}

impl JoinSpec {
    /// The input of one side.
    pub fn input(&self, side: JoinSide) -> &JoinInput {
        match side {
            JoinSide::F1 => &self.f1,
            JoinSide::F2 => &self.f2,
        }
    }

    /// Whether paired records are kept.
    pub fn keeps_paired(&self) -> bool {
        !self.only
    }

    /// Checks the keys and REFORMAT fields against the record lengths and returns the length
    /// of the joined records.
    pub fn joined_len(&self, f1_len: usize, f2_len: usize) -> Result<usize, JoinSpecError> {
        for (side, input, n) in [(JoinSide::F1, &self.f1, f1_len), (JoinSide::F2, &self.f2, f2_len)]
        {
            for (i, k) in input.keys.iter().enumerate() {
                if k.offset + k.len > n {
                    return Err(JoinSpecError::PastRecord {
                        what: format!("JOINKEYS key {}", i + 1),
                        side: side.name(),
                        end: k.offset + k.len,
                        record_len: n,
                    });
                }
            }
        }
        let Some(items) = &self.reformat else {
            return match (self.unpaired_f1, self.unpaired_f2) {
                (true, false) => Ok(f1_len),
                (false, true) => Ok(f2_len),
                _ if f1_len == f2_len => Ok(f1_len),
                _ => Err(JoinSpecError::MixedLengths { f1: f1_len, f2: f2_len }),
            };
        };
        let mut total = 0;
        for (i, item) in items.iter().enumerate() {
            match *item {
                JoinItem::Field { side, offset, len } => {
                    let n = if side == JoinSide::F1 { f1_len } else { f2_len };
                    if offset + len > n {
                        return Err(JoinSpecError::PastRecord {
                            what: format!("REFORMAT field {}", i + 1),
                            side: side.name(),
                            end: offset + len,
                            record_len: n,
                        });
                    }
                    total += len;
                }
                JoinItem::Indicator => total += 1,
            }
        }
        Ok(total)
    }

    /// The sort key that puts one side's records in join-key order (unsigned bytes, each field
    /// ascending or descending), for the engine.
    pub fn sort_key(&self, side: JoinSide) -> KeySpec {
        let fields = self
            .input(side)
            .keys
            .iter()
            .map(|k| KeyField::bytes(k.offset, k.len, FieldType::Char, k.descending))
            .collect();
        KeySpec { fields, separator: None, short_fields: ShortFields::Error }
    }

    /// Compares the join keys of record `a` of side `sa` and record `b` of side `sb` in join
    /// order. Records must be long enough for the keys ([`JoinSpec::joined_len`] checks that).
    pub fn compare(&self, sa: JoinSide, a: &[u8], sb: JoinSide, b: &[u8]) -> Ordering {
        let (ka, kb) = (&self.input(sa).keys, &self.input(sb).keys);
        for (x, y) in ka.iter().zip(kb) {
            let o = cmp_bytes(&a[x.offset..x.offset + x.len], &b[y.offset..y.offset + y.len]);
            let o = if x.descending { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// The bytes of one side's records the join reads: its keys and its REFORMAT fields, as
    /// `(offset, len)` ranges in record order, overlapping or touching ones merged. `None`
    /// without REFORMAT: the join then passes whole records.
    ///
    /// ```text
    ///   record   |0        |10           |50                          |100
    ///   F1       [ key    ][ F1:1,50 ...  ]                            -> (0,50)
    ///   F2       [ key    ]                [ F2:51,49 ...            ] -> (0,10),(50,49)
    /// ```
    pub fn used_ranges(&self, side: JoinSide) -> Option<Vec<(usize, usize)>> {
        let items = self.reformat.as_ref()?;
        let mut ranges: Vec<(usize, usize)> =
            self.input(side).keys.iter().map(|k| (k.offset, k.len)).collect();
        ranges.extend(items.iter().filter_map(|item| match *item {
            JoinItem::Field { side: s, offset, len } if s == side => Some((offset, len)),
            _ => None,
        }));
        ranges.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
        for (offset, len) in ranges {
            match merged.last_mut() {
                Some((o, l)) if offset <= *o + *l => *l = (*l).max(offset + len - *o),
                _ => merged.push((offset, len)),
            }
        }
        Some(merged)
    }

    /// This join over records cut to the bytes of `cuts` (each side's [`JoinSpec::used_ranges`],
    /// or `None` for a side kept whole): its keys and REFORMAT fields moved to where the cut
    /// records hold them. Every key and field of a cut side lies within one of its ranges.
    pub fn over_cut(&self, cuts: [Option<&[(usize, usize)]>; 2]) -> JoinSpec {
        // Where byte `offset` of a record is once the record is cut to `ranges`.
        let moved = |ranges: &[(usize, usize)], offset: usize| -> usize {
            let mut before = 0;
            for &(o, l) in ranges {
                if (o..o + l).contains(&offset) {
                    return before + offset - o;
                }
                before += l;
            }
            unreachable!("byte {offset} lies in no range of the cut")
        };
        let cut_of = |side: JoinSide| cuts[side as usize];
        let mut out = self.clone();
        for (side, input) in [(JoinSide::F1, &mut out.f1), (JoinSide::F2, &mut out.f2)] {
            if let Some(ranges) = cut_of(side) {
                for k in &mut input.keys {
                    k.offset = moved(ranges, k.offset);
                }
            }
        }
        for item in out.reformat.iter_mut().flatten() {
            if let JoinItem::Field { side, offset, .. } = item {
                if let Some(ranges) = cut_of(*side) {
                    *offset = moved(ranges, *offset);
                }
            }
        }
        out
    }

    /// Writes the joined record of `f1` and `f2` (either may be missing, not both) into `out`,
    /// of [`JoinSpec::joined_len`] bytes: where the join's output wants it, with no copy
    /// between.
    pub fn build_into(&self, f1: Option<&[u8]>, f2: Option<&[u8]>, out: &mut [u8]) {
        let Some(items) = &self.reformat else {
            if let Some(r) = f1.or(f2) {
                copy_field(r, out);
            }
            return;
        };
        let mut at = 0;
        for item in items {
            match *item {
                JoinItem::Field { side, offset, len } => {
                    let to = &mut out[at..at + len];
                    match if side == JoinSide::F1 { f1 } else { f2 } {
                        Some(r) => copy_field(&r[offset..offset + len], to),
                        None => to.fill(self.fill),
                    }
                    at += len;
                }
                JoinItem::Indicator => {
                    out[at] = match (f1, f2) {
                        (Some(_), Some(_)) => b'B',
                        (Some(_), None) => b'1',
                        _ => b'2',
                    };
                    at += 1;
                }
            }
        }
    }
}

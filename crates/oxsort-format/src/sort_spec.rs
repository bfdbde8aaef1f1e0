//! What is sorted, in one place: [`SortSpec`] is what every front end builds (oxsort's flags,
//! DFSORT control statements, nsort command lines, GNU sort's argv, the Python package), and
//! [`SortKey`] is its compiled form, the one thing the engine's stages call per record.
//!
//! ```text
//!  front ends ──> SortSpec { layout, key, filter, unique, mode, inrec, outrec }
//!                    │ compile (once, checks the key against the layout INREC makes)
//!                    v
//!                 SortKey { input layout, INREC program, layout sorted, kind, OUTREC program }
//!                    kind:  Copy           every key equal: input order
//!                           RawBytes       ≤ 10 raw bytes at a place: the prefix is the key
//!                           RawLines       whole delimited records as bytes (no key given)
//!                           Fixed          fixed-width typed fields, written in place
//!                           General        any KeySpec, normalized into a Vec
//!
//!  entry (u128):  | key prefix, PREFIX_BYTES = 10 bytes (80 bits) | record index (48 bits) |
//!  RawBytes:      equal prefixes mean equal keys: one integer comparison decides
//!  otherwise:     equal prefixes are decided by whole keys (`cmp_full`), then the index
//! ```
//!
//! The Sort Benchmark key (`SORT FIELDS=(1,10,CH,A)` on 100-byte records) compiles to
//! `RawBytes { offset: 0, len: 10 }`, the fast path.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::sync::Arc;

use crate::column_key::ColumnKey;
use crate::columns::ColumnSpan;
use crate::error::{KeyError, SpecError};
use crate::layout::{RecordLayout, Records};
use crate::normalize::FixedKey;
use crate::program::filter::Filter;
use crate::program::outfil::{Outfil, OutfilProgram};
use crate::program::reformat::{Reformat, ReformatProgram, Stage};
use crate::program::sum::SumField;
use crate::program::vbuild::VarBuild;
use crate::spec::{FieldLoc, FieldType, KeySpec, Prefix, PREFIX_BYTES};

/// What the sort does with the records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Order the records by key (stable).
    #[default]
    Sort,
    /// The inputs are each already in key order: merge them. A record out of order is an
    /// error naming the file and the record.
    Merge,
    /// Keep the input order (with a filter, the records it keeps).
    Copy,
}

impl Mode {
    /// The mode's name in reports (`sort`, `merge`, `copy`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sort => "sort",
            Mode::Merge => "merge",
            Mode::Copy => "copy",
        }
    }
}

/// What is sorted: the record layout, the key, the records kept, and what is done with them.
///
/// The default is the Sort Benchmark's: 100-byte records ordered by their first 10 bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SortSpec {
    /// How the input splits into records.
    pub layout: RecordLayout,
    /// The key; `None`: bytes 1 to 10 of fixed records, whole delimited records as bytes.
    pub key: Option<KeySpec>,
    /// Keeps only the records the filter accepts (DFSORT `INCLUDE`/`OMIT`).
    pub filter: Option<Filter>,
    /// Keeps only the first record (in input order) of each run of equal keys
    /// (`SUM FIELDS=NONE`, `sort -u`).
    pub unique: bool,
    /// Sort, merge presorted inputs, or copy.
    pub mode: Mode,
    /// DFSORT `INREC`: records reshaped after the filter and before the sort; the key refers to
    /// the reshaped records (fixed-length records only).
    pub inrec: Option<Reformat>,
    /// DFSORT `OUTREC`: the sorted records reshaped as they are written.
    pub outrec: Option<Reformat>,
    /// DFSORT `SUM FIELDS=(p,m,f,...)`: within each group of equal keys, these fields of every
    /// record are added into the first, and the others dropped (fixed-length records only;
    /// positions in the sorted record, after `INREC`).
    pub sum: Option<Vec<SumField>>,
    /// DFSORT `OUTFIL`: groups of outputs written from the sorted records (after `SUM` and
    /// `OUTREC`; fixed-length records only).
    pub outfil: Vec<Outfil>,
    /// DFSORT `OPTION SKIPREC=n`: the first `n` input records are skipped (before the filter).
    pub skiprec: Option<u64>,
    /// DFSORT `OPTION STOPAFT=n`: reading stops once `n` records were accepted (after
    /// `SKIPREC` and the filter).
    pub stopaft: Option<u64>,
}

impl SortSpec {
    /// Records of this layout with the default key.
    pub fn with_layout(layout: RecordLayout) -> SortSpec {
        SortSpec { layout, ..SortSpec::default() }
    }

    /// Checks the key against the layout and compiles the spec into the form the engine calls
    /// per record.
    pub fn compile(&self) -> Result<SortKey, SpecError> {
        let input_layout = self.layout;
        if let RecordLayout::Fixed(n) = input_layout {
            RecordLayout::fixed(n)?;
        }
        let reformat = |r: &Option<Reformat>, stage: Stage, layout: RecordLayout| match r {
            None => Ok(None),
            Some(r) => match layout {
                RecordLayout::Fixed(n) => r.compile(stage, n).map(Some),
                RecordLayout::Delimited(_) | RecordLayout::Variable(_) => {
                    Err(needs_fixed(stage.name(), layout))
                }
            },
        };
        let inrec = reformat(&self.inrec, Stage::Inrec, input_layout)?;
        let layout = match &inrec {
            Some(p) => RecordLayout::Fixed(p.out_len()),
            None => input_layout,
        };
        // OUTREC on RDW-prefixed records: a BUILD that keeps the RDW, rewritten per record.
        let (outrec, var_outrec) = match (&self.outrec, layout) {
            (Some(r), RecordLayout::Variable(max)) => {
                (None, Some(Arc::new(VarBuild::compile(r, Stage::Outrec, max)?)))
            }
            (r, _) => (reformat(r, Stage::Outrec, layout)?, None),
        };
        if let Some(fields) = &self.sum {
            let RecordLayout::Fixed(n) = layout else {
                return Err(needs_fixed("SUM FIELDS", layout));
            };
            for (i, f) in fields.iter().enumerate() {
                if f.offset + f.len > n {
                    return Err(SpecError::ReformatPastRecord {
                        statement: "SUM",
                        item: i + 1,
                        end: f.offset + f.len,
                        record_len: n,
                    });
                }
            }
        }
        let outfil = if self.outfil.is_empty() {
            None
        } else {
            let RecordLayout::Fixed(n) = layout else {
                return Err(needs_fixed("OUTFIL", layout));
            };
            let written = outrec.as_ref().map_or(n, |p| p.out_len());
            Some(Arc::new(Outfil::compile(&self.outfil, written)?))
        };
        // A copy has no key: records shorter than the default key are no error.
        let kind = if self.mode == Mode::Copy { KeyKind::Copy } else { self.key_kind(layout)? };
        let columns = match &kind {
            KeyKind::General(spec) => ColumnKey::compile(spec).map(Arc::new),
            _ => None,
        };
        Ok(SortKey { input_layout, inrec, layout, kind, outrec, var_outrec, outfil, columns })
    }

    fn key_kind(&self, layout: RecordLayout) -> Result<KeyKind, SpecError> {
        let Some(key) = &self.key else {
            return match layout {
                RecordLayout::Delimited(_) | RecordLayout::Variable(_) => Ok(KeyKind::RawLines),
                RecordLayout::Fixed(n) if n >= PREFIX_BYTES => {
                    Ok(KeyKind::RawBytes { offset: 0, len: PREFIX_BYTES })
                }
                RecordLayout::Fixed(n) => Err(SpecError::DefaultKeyPastRecord { record_len: n }),
            };
        };
        // On delimited records, a key that is the whole record in ascending byte order (GNU
        // sort without -k) is the raw-bytes order: no need to normalize every record.
        if layout.terminator().is_some() && whole_record_bytes(key) {
            return Ok(KeyKind::RawLines);
        }
        let key = key.clone().for_layout(layout)?;
        if let Some(fast) = key.fast_path(layout) {
            return Ok(KeyKind::RawBytes { offset: fast.offset, len: fast.len });
        }
        let spec = Arc::new(key);
        Ok(match spec.fixed_key() {
            Some(fixed) => KeyKind::Fixed { fixed, spec },
            None => KeyKind::General(spec),
        })
    }
}

/// The error of a statement that needs fixed-length records, on `layout`'s.
fn needs_fixed(statement: &'static str, layout: RecordLayout) -> SpecError {
    match layout {
        RecordLayout::Variable(_) => SpecError::VariableReformat {
            statement,
            why: "not supported there (OUTREC BUILD=(1,4,...) is)".into(),
        },
        _ => SpecError::ReformatNeedsFixed { statement },
    }
}

/// Whether every field of `key` is the whole record as ascending bytes (several such fields
/// order as one): DFSORT-style characters, or GNU text in the C locale as `sort` without `-k`
/// gives it.
fn whole_record_bytes(key: &KeySpec) -> bool {
    !key.fields.is_empty()
        && key.fields.iter().all(|f| {
            let raw = match f.kind {
                FieldType::Char => true,
                FieldType::Gnu(g) => g.is_raw_text(),
                _ => false,
            };
            raw && !f.descending
                && matches!(f.loc, FieldLoc::Columns(c) if c == ColumnSpan::whole())
        })
}

/// How keys are made and compared: see [`SortKey`].
#[derive(Clone, Debug)]
pub enum KeyKind {
    /// Copy mode: every key is equal, so the order is the input order.
    Copy,
    /// Raw ascending bytes at a fixed place of fixed records, at most [`PREFIX_BYTES`] long:
    /// the prefix is the whole key.
    RawBytes {
        /// 0-based offset of the key in the record.
        offset: usize,
        /// Key length, 1 to [`PREFIX_BYTES`].
        len: usize,
    },
    /// Delimited records without a key: the whole record (without its terminator) as bytes;
    /// RDW-prefixed records without a key: the data after the RDW as bytes.
    RawLines,
    /// A key of fixed-position, fixed-width fields, written without allocating.
    Fixed {
        /// The allocation-free writer.
        fixed: FixedKey,
        /// The key it writes (for the error of a record too short).
        spec: Arc<KeySpec>,
    },
    /// Any other key, normalized per record.
    General(Arc<KeySpec>),
}

/// A compiled [`SortSpec`]: the record layout and the key kind, with the per-record operations
/// the engine's stages call.
///
/// ```text
///  entry (u128):  | key prefix, PREFIX_BYTES = 10 bytes (80 bits) | record index (48 bits) |
///  RawBytes:      equal prefixes mean equal keys: one integer comparison decides
///  otherwise:     equal prefixes are decided by whole keys (cmp_full), then the index
/// ```
#[derive(Clone, Debug)]
pub struct SortKey {
    /// The records as read (before `INREC`).
    input_layout: RecordLayout,
    inrec: Option<Arc<ReformatProgram>>,
    /// The records sorted (after `INREC`).
    layout: RecordLayout,
    kind: KeyKind,
    outrec: Option<Arc<ReformatProgram>>,
    /// `OUTREC BUILD` on RDW-prefixed records.
    var_outrec: Option<Arc<VarBuild>>,
    outfil: Option<Arc<OutfilProgram>>,
    /// The direct prefix writer of a [`KeyKind::General`] key on columns.
    columns: Option<Arc<ColumnKey>>,
}

thread_local! {
    /// Two scratch buffers per thread for normalized keys being compared.
    static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl SortKey {
    /// The Sort Benchmark's key on its 100-byte records.
    pub fn benchmark() -> SortKey {
        SortKey {
            input_layout: RecordLayout::BENCHMARK,
            inrec: None,
            layout: RecordLayout::BENCHMARK,
            kind: KeyKind::RawBytes { offset: 0, len: PREFIX_BYTES },
            outrec: None,
            var_outrec: None,
            outfil: None,
            columns: None,
        }
    }

    /// Raw ascending key bytes `offset..offset + len` of `size`-byte records.
    pub fn raw_bytes(size: usize, offset: usize, len: usize) -> Result<SortKey, SpecError> {
        let layout = RecordLayout::fixed(size)?;
        if len == 0 || len > PREFIX_BYTES || offset + len > size {
            return Err(SpecError::RawKey { offset, len, record_len: size });
        }
        Ok(SortKey {
            input_layout: layout,
            inrec: None,
            layout,
            kind: KeyKind::RawBytes { offset, len },
            outrec: None,
            var_outrec: None,
            outfil: None,
            columns: None,
        })
    }

    /// The layout of the records sorted (after `INREC`, if any).
    #[inline]
    pub fn layout(&self) -> RecordLayout {
        self.layout
    }

    /// The layout of the records read (before `INREC`, if any).
    #[inline]
    pub fn input_layout(&self) -> RecordLayout {
        self.input_layout
    }

    /// `INREC`, compiled: turns records of [`SortKey::input_layout`] into records of
    /// [`SortKey::layout`].
    #[inline]
    pub fn inrec(&self) -> Option<&Arc<ReformatProgram>> {
        self.inrec.as_ref()
    }

    /// `OUTREC`, compiled: turns the sorted records into the records written.
    #[inline]
    pub fn outrec(&self) -> Option<&Arc<ReformatProgram>> {
        self.outrec.as_ref()
    }

    /// `OUTREC BUILD=(1,4,...)` on RDW-prefixed records, compiled: each sorted record rebuilt,
    /// its RDW given the new length.
    #[inline]
    pub fn var_outrec(&self) -> Option<&Arc<VarBuild>> {
        self.var_outrec.as_ref()
    }

    /// `OUTFIL`, compiled: the outputs written from the records after `OUTREC`.
    #[inline]
    pub fn outfil(&self) -> Option<&Arc<OutfilProgram>> {
        self.outfil.as_ref()
    }

    /// Bytes written for `records` records of `bytes` bytes sorted (their size after `OUTREC`).
    #[inline]
    pub fn output_bytes(&self, records: u64, bytes: u64) -> u64 {
        match (&self.outrec, &self.var_outrec) {
            (Some(p), _) => records * p.out_len() as u64,
            (None, Some(b)) => records * b.out_len() as u64,
            (None, None) => bytes,
        }
    }

    /// The key kind.
    #[inline]
    pub fn kind(&self) -> &KeyKind {
        &self.kind
    }

    /// Fixed records' size, if fixed.
    #[inline]
    pub fn record_size(&self) -> Option<usize> {
        self.layout.fixed_size()
    }

    /// Whether every key is equal (copy mode).
    #[inline]
    pub fn is_copy(&self) -> bool {
        matches!(self.kind, KeyKind::Copy)
    }

    /// Whether keys are whole delimited records as raw bytes.
    #[inline]
    pub fn is_raw_lines(&self) -> bool {
        // RDW-prefixed records' raw keys leave out the RDW: they are not whole records.
        matches!(self.kind, KeyKind::RawLines) && self.layout.terminator().is_some()
    }

    /// The offset of a raw key that fills the whole prefix: entries can then be made straight
    /// from the record bytes (the benchmark's fast path).
    #[inline]
    pub fn full_prefix_offset(&self) -> Option<usize> {
        match self.kind {
            KeyKind::RawBytes { offset, len } if len == PREFIX_BYTES => Some(offset),
            _ => None,
        }
    }

    /// Whether equal prefixes may hide different keys (then ties need [`SortKey::cmp_full`]).
    #[inline]
    pub fn ties_possible(&self) -> bool {
        !matches!(self.kind, KeyKind::Copy | KeyKind::RawBytes { .. })
    }

    /// Whether a whole key is built from the record (parsed, collated, reordered) rather than
    /// being bytes of it: then a key used more than once is worth building once and keeping.
    #[inline]
    pub fn builds_keys(&self) -> bool {
        matches!(self.kind, KeyKind::Fixed { .. } | KeyKind::General(_))
    }

    /// The records of `data`, a buffer of whole records.
    #[inline]
    pub fn records<'a>(&self, data: &'a [u8]) -> Records<'a> {
        self.layout.records(data)
    }

    /// The part of a record its key is made from (without the terminator).
    #[inline]
    pub fn key_part<'a>(&self, rec: &'a [u8]) -> &'a [u8] {
        self.layout.key_bytes(rec)
    }

    /// The bytes a [`KeyKind::RawLines`] key is: the record without its terminator, or
    /// without its RDW.
    #[inline]
    fn raw_line<'a>(&self, rec: &'a [u8]) -> &'a [u8] {
        match self.layout {
            RecordLayout::Variable(_) => rec.get(crate::RDW_BYTES..).unwrap_or(&[]),
            layout => layout.key_bytes(rec),
        }
    }

    /// The [`PREFIX_BYTES`]-byte prefix of a record's key (`scratch`: room for a normalized
    /// key). Errors are records a key cannot be built from (too short, bad decimal data).
    #[inline]
    pub fn prefix(&self, rec: &[u8], scratch: &mut Vec<u8>) -> Result<Prefix, KeyError> {
        let mut p = [0u8; PREFIX_BYTES];
        match &self.kind {
            KeyKind::Copy => {}
            KeyKind::RawBytes { offset, len } => {
                p[..*len].copy_from_slice(&rec[*offset..offset + len]);
            }
            KeyKind::RawLines => {
                let line = self.raw_line(rec);
                let n = line.len().min(PREFIX_BYTES);
                p[..n].copy_from_slice(&line[..n]);
            }
            KeyKind::Fixed { fixed, spec } => {
                // Only the prefix's bytes are written; a record of varying length too short
                // for a field past the prefix still gets its error (or padding) from the
                // whole key.
                let rec = self.key_part(rec);
                let short =
                    self.layout.fixed_size().is_none() && rec.len() < fixed.min_record_len();
                // Returned here, not through `p`: the array is built in a register, and a copy
                // through the stack in pieces of other sizes would stall on store forwarding.
                if let Some(w) = (!short).then(|| fixed.write_array(rec)).flatten() {
                    return Ok(w);
                }
                scratch.clear();
                spec.normalize(rec, scratch)?;
                let n = scratch.len().min(PREFIX_BYTES);
                p[..n].copy_from_slice(&scratch[..n]);
            }
            KeyKind::General(spec) => match &self.columns {
                Some(columns) => p = columns.prefix(self.key_part(rec), scratch),
                None => {
                    scratch.clear();
                    spec.normalize_prefix(self.key_part(rec), scratch, PREFIX_BYTES)?;
                    let n = scratch.len().min(PREFIX_BYTES);
                    p[..n].copy_from_slice(&scratch[..n]);
                }
            },
        }
        Ok(p)
    }

    /// Compares two records' whole keys. The engine builds every record's key once when it
    /// reads it, and stops the sort at a record whose key cannot be built, so keys compared
    /// here always build; were one not to, the two records would compare equal.
    pub fn cmp_full(&self, a: &[u8], b: &[u8]) -> Ordering {
        match &self.kind {
            KeyKind::Copy => Ordering::Equal,
            KeyKind::RawBytes { offset, len } => {
                a[*offset..offset + len].cmp(&b[*offset..offset + len])
            }
            KeyKind::RawLines => self.raw_line(a).cmp(self.raw_line(b)),
            KeyKind::Fixed { .. } | KeyKind::General(_) => SCRATCH.with(|s| {
                let (x, y) = &mut *s.borrow_mut();
                x.clear();
                y.clear();
                match (self.normalize(a, x), self.normalize(b, y)) {
                    (Ok(()), Ok(())) => x.as_slice().cmp(y.as_slice()),
                    _ => Ordering::Equal,
                }
            }),
        }
    }

    /// Whether the key collates text with the locale: its whole keys are costly and its first
    /// bytes are not (see [`SortKey::append_key_start`]).
    pub fn collates(&self) -> bool {
        matches!(&self.kind, KeyKind::General(spec) if spec.collates())
    }

    /// Appends exactly the first `len` bytes of the whole key [`SortKey::append_key`] appends
    /// (all of it when shorter), building no more of it than it must.
    pub fn append_key_start(&self, rec: &[u8], out: &mut Vec<u8>, len: usize) {
        let start = out.len();
        match &self.kind {
            KeyKind::General(spec) => {
                if spec.normalize_prefix(self.key_part(rec), out, len).is_err() {
                    out.truncate(start);
                }
            }
            // Raw keys: only the bytes asked for are copied (a table row's key is the rest of
            // its record, a hundred bytes and more, of which a tie needs the next few).
            KeyKind::RawBytes { offset, len: whole } => {
                out.extend_from_slice(&rec[*offset..offset + (*whole).min(len)]);
            }
            KeyKind::RawLines => {
                let line = self.raw_line(rec);
                out.extend_from_slice(&line[..line.len().min(len)]);
            }
            _ => self.append_key(rec, out),
        }
        out.truncate(start + len);
    }

    /// The whole key of a record, as compared (raw bytes on the fast path; empty in copy mode
    /// and, as [`SortKey::cmp_full`] explains, for a record whose key cannot be built).
    #[inline]
    pub fn full_key(&self, rec: &[u8], out: &mut Vec<u8>) {
        out.clear();
        self.append_key(rec, out);
    }

    /// Appends the whole key of a record to `out`, as [`SortKey::full_key`] builds it
    /// (appending nothing for a record whose key cannot be built). Whole keys compare as
    /// [`SortKey::cmp_full`] compares their records, and their first [`PREFIX_BYTES`] bytes,
    /// zero-padded, are the record's prefix.
    #[inline]
    pub fn append_key(&self, rec: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        match &self.kind {
            KeyKind::Copy => {}
            KeyKind::RawBytes { offset, len } => {
                out.extend_from_slice(&rec[*offset..offset + len]);
            }
            KeyKind::RawLines => out.extend_from_slice(self.raw_line(rec)),
            // Written in place, once per record (the verification builds every record's key).
            KeyKind::Fixed { fixed, .. } => {
                out.resize(start + fixed.width(), 0);
                if fixed.write(self.key_part(rec), &mut out[start..]).is_none() {
                    out.truncate(start);
                    if self.normalize(rec, out).is_err() {
                        out.truncate(start);
                    }
                }
            }
            KeyKind::General(spec) => {
                if spec.normalize(self.key_part(rec), out).is_err() {
                    out.truncate(start);
                }
            }
        }
    }

    /// The prefix of a whole key built by [`SortKey::full_key`]: its first [`PREFIX_BYTES`]
    /// bytes, zero-padded (equal to [`SortKey::prefix`] of the record).
    #[inline]
    pub fn prefix_of_key(key: &[u8]) -> Prefix {
        let mut p = [0u8; PREFIX_BYTES];
        let n = key.len().min(PREFIX_BYTES);
        p[..n].copy_from_slice(&key[..n]);
        p
    }

    /// Appends the normalized key of record `rec` to `out`: written in place for fixed-width
    /// keys, through [`KeySpec::normalize`] otherwise (and for a record too short, to get its
    /// error).
    #[inline]
    fn normalize(&self, rec: &[u8], out: &mut Vec<u8>) -> Result<(), KeyError> {
        match &self.kind {
            KeyKind::Fixed { fixed, spec } => {
                let rec = self.key_part(rec);
                let start = out.len();
                out.resize(start + fixed.width(), 0);
                if fixed.write(rec, &mut out[start..]).is_some() {
                    return Ok(());
                }
                out.truncate(start);
                spec.normalize(rec, out)
            }
            KeyKind::General(spec) => spec.normalize(self.key_part(rec), out),
            _ => {
                self.append_key(rec, out);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Endian, KeyField};

    #[test]
    fn layout_and_key_conflicts_are_errors() {
        let small = SortSpec::with_layout(RecordLayout::Fixed(8));
        assert_eq!(
            small.compile().unwrap_err().to_string(),
            "the default key (bytes 1 to 10) ends past the 8-byte records: give a key"
        );
        let past = KeySpec::new(vec![KeyField::bytes(4, 8, FieldType::Char, false)]).unwrap();
        let past = SortSpec { key: Some(past), ..small };
        assert!(matches!(past.compile(), Err(SpecError::FieldPastRecord { end: 12, .. })));
        assert!(SortSpec::with_layout(RecordLayout::Fixed(0)).compile().is_err());
        assert!(SortKey::raw_bytes(100, 95, 10).is_err());
        assert!(SortKey::raw_bytes(100, 0, 11).is_err());
    }

    #[test]
    fn kinds_agree_with_the_key_they_compile() {
        // The compiled comparison of every kind equals KeySpec::compare on the same records.
        let recs: Vec<[u8; 12]> = (0u32..40)
            .map(|i| {
                let mut r = [0u8; 12];
                r[..4].copy_from_slice(&(i.wrapping_mul(2_654_435_761) % 7).to_be_bytes());
                r[4..8].copy_from_slice(&(i as i32 - 20).to_be_bytes());
                r[8..].copy_from_slice(b"z\n\0a");
                r
            })
            .collect();
        let keys = [
            KeySpec::new(vec![KeyField::bytes(0, 4, FieldType::Char, false)]).unwrap(),
            KeySpec::new(vec![
                KeyField::bytes(0, 4, FieldType::Unsigned(Endian::Big), true),
                KeyField::bytes(4, 4, FieldType::Signed(Endian::Big), false),
            ])
            .unwrap(),
            KeySpec::new(vec![
                KeyField::bytes(4, 4, FieldType::Signed(Endian::Big), true),
                KeyField::bytes(0, 2, FieldType::Char, false),
            ])
            .unwrap(),
        ];
        for key in keys {
            let spec = SortSpec {
                layout: RecordLayout::Fixed(12),
                key: Some(key.clone()),
                ..SortSpec::default()
            };
            let sk = spec.compile().unwrap();
            let mut scratch = Vec::new();
            for a in &recs {
                for b in &recs {
                    let want = key.compare(a, b).unwrap();
                    assert_eq!(sk.cmp_full(a, b), want, "{key:?}");
                    let (pa, pb) =
                        (sk.prefix(a, &mut scratch).unwrap(), sk.prefix(b, &mut scratch).unwrap());
                    // Prefix order never contradicts key order.
                    assert!(pa.cmp(&pb) == want || pa == pb, "{key:?}");
                    // Whole keys built once compare as the records do and start with the prefix.
                    let (mut ka, mut kb) = (vec![7u8], vec![7u8]);
                    sk.append_key(a, &mut ka);
                    sk.append_key(b, &mut kb);
                    assert_eq!(ka.cmp(&kb), want, "{key:?}: appended keys");
                    assert_eq!(SortKey::prefix_of_key(&ka[1..]), pa, "{key:?}");
                    assert_eq!(sk.builds_keys(), !matches!(sk.kind(), KeyKind::RawBytes { .. }));
                }
            }
        }
    }
}

//! [`RowCodec`]: table rows as the engine's records, whose plain byte order is the sort order.
//!
//! ```text
//!  record = | RDW (4) | key 1 | ... | key k | sequence (u64) | payload | key part length (u16) |
//!                      └── arrow-row: prefix-free, byte order ─┘
//!                          = the wanted order
//!
//!  payload = | null bits (1 per carried column) | carried 1 | ... | carried m | other columns |
//!     fixed width (integers, floats, dates, times, timestamps, decimals, fixed-size binary):
//!         the value's bytes as Arrow holds them (zeros when null)
//!     boolean: one byte;  strings and binary: the length (LEB128), then the bytes
//!     other columns (lists, structs, dictionaries, views ...): their arrow-row encoding
//!         together, after its length (LEB128)
//! ```
//!
//! One `arrow_row::RowConverter` encodes the key columns (with their direction and null
//! placement), then the row's sequence number in the whole input (ascending, never null). The
//! keys' encodings are prefix-free and the sequence is unique, so comparing whole records as
//! bytes compares keys first and settles ties by input order: the engine's plain byte order of
//! the data after the RDW is the stable order, and it never reads past the sequence.
//!
//! The columns that are not keys need no order, only their bytes back: they ride in the
//! compact payload, which costs about the columns' own size (arrow-row's order-preserving
//! form of a 40-byte string takes 70 bytes), so the engine moves, spills and merges fewer
//! bytes per row. The key part's length closes the record, so decoding finds the payload
//! without parsing the keys. Decoding parses the keys back with the converter, the payload
//! column by column, and drops the sequence.
//!
//! Floats: the key carries a canonical copy (every NaN as the positive quiet NaN, so NaN sorts
//! after every number both ways of its sign bit; `-0.0` as `0.0`, equal as numbers are), and
//! the column itself rides unchanged in the payload. A half-float key is widened to single
//! precision (exact) for the same canonical form.

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{make_array, Array, ArrayRef, RecordBatch, UInt64Array};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBuffer};
use arrow_data::ArrayData;
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{DataType, SchemaRef, SortOptions};

use crate::check::RowSum;
use crate::columns::SortColumn;
use crate::error::{Result, TableError};
use crate::long::{LongRows, PayloadRef, LONG_MARK, LONG_TAIL};

/// The longest encoded row: an RDW-prefixed record holds at most this after its RDW.
pub(crate) const MAX_ROW_BYTES: usize = oxsort_format::MAX_RECORD_SIZE - oxsort_format::RDW_BYTES;

/// The bytes closing each record: the key part's length (u16, big-endian).
const TRAILER: usize = 2;

/// The bytes of the row's sequence number closing each key part: arrow-row's validity byte,
/// then the `u64`.
const SEQUENCE_BYTES: usize = 1 + 8;

/// Encoded rows ready for the engine: records (RDW and row) in order, and their count and sum.
pub(crate) struct Framed {
    pub(crate) bytes: Vec<u8>,
    pub(crate) sum: RowSum,
    /// The rows' content sum ([`RowCodec::sum_contents`]), 0 when not asked for.
    pub(crate) content: u64,
}

/// Where a key converter column comes from.
#[derive(Debug, Clone, Copy)]
enum Part {
    /// A key: the schema's column `col`, as it is, or as its canonical float copy.
    Key { col: usize, float: Option<FloatKey> },
    /// The row's sequence number.
    Sequence,
}

/// How a float key's canonical copy is made.
#[derive(Debug, Clone, Copy)]
enum FloatKey {
    F16,
    F32,
    F64,
}

/// How a column that is not a key rides in the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Carry {
    /// `width` bytes per value, as Arrow's value buffer holds them.
    Fixed(usize),
    /// One byte, 0 or 1.
    Bool,
    /// The length, then the bytes: offsets of `i64` when `large`, else `i32`.
    Var { large: bool },
}

/// Where a schema column decodes from.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// The key converter's column.
    Key(usize),
    /// The payload's carried column.
    Carried(usize),
    /// The payload's other columns' converter column.
    Other(usize),
}

/// The encoding of one schema's rows, keyed by some of its columns.
#[derive(Debug)]
pub(crate) struct RowCodec {
    /// The keys and the sequence.
    converter: RowConverter,
    parts: Vec<Part>,
    /// The carried columns: schema column and how.
    carried: Vec<(usize, Carry)>,
    /// The other columns that are not keys, and their converter (none when there are none).
    other: Option<(RowConverter, Vec<usize>)>,
    schema: SchemaRef,
    /// For each schema column: where it decodes from.
    source: Vec<Source>,
    /// Where rows longer than a record keep their payload (see `crate::long`); without it such
    /// a row is an error.
    long: Option<LongRows>,
    /// Whether [`RowCodec::encode`] sums the rows' contents too.
    contents: bool,
}

/// Whether rows may be ordered by a column of type `t`.
fn key_type(t: &DataType) -> bool {
    use DataType::*;
    match t {
        Boolean
        | Int8
        | Int16
        | Int32
        | Int64
        | UInt8
        | UInt16
        | UInt32
        | UInt64
        | Float16
        | Float32
        | Float64
        | Utf8
        | LargeUtf8
        | Utf8View
        | Binary
        | LargeBinary
        | BinaryView
        | FixedSizeBinary(_)
        | Date32
        | Date64
        | Time32(_)
        | Time64(_)
        | Timestamp(_, _)
        | Duration(_)
        | Decimal32(_, _)
        | Decimal64(_, _)
        | Decimal128(_, _)
        | Decimal256(_, _) => true,
        Dictionary(_, v) => key_type(v) && !matches!(**v, Float16 | Float32 | Float64),
        _ => false,
    }
}

/// How a column of type `t` rides in the payload; `None`: with the other columns, in arrow-row.
fn carry(t: &DataType) -> Option<Carry> {
    match t {
        DataType::Boolean => Some(Carry::Bool),
        DataType::Utf8 | DataType::Binary => Some(Carry::Var { large: false }),
        DataType::LargeUtf8 | DataType::LargeBinary => Some(Carry::Var { large: true }),
        DataType::FixedSizeBinary(w) => usize::try_from(*w).ok().map(Carry::Fixed),
        t => t.primitive_width().map(Carry::Fixed),
    }
}

/// The wrapping sum of each row's CRC32 without its sequence number (the rows at `spans` of
/// `bytes`, their key parts in `keys`): see [`RowCodec::sum_contents`].
fn content_sum(bytes: &[u8], spans: &[std::ops::Range<usize>], keys: &Rows) -> u64 {
    spans.iter().enumerate().fold(0u64, |total, (i, span)| {
        let row = &bytes[span.clone()];
        let k = keys.row(i).data().len();
        let mut h = crc32fast::Hasher::new();
        h.update(&row[..k - SEQUENCE_BYTES]);
        h.update(&row[k..]);
        total.wrapping_add(u64::from(h.finalize()))
    })
}

/// The type a column that is not a key rides the row format as: a map as the list of its
/// entries (the same buffers: offsets, then a struct of keys and values), which arrow-row
/// encodes and a map has no encoding of its own; every other type as it is.
fn as_rows_carry(t: &DataType) -> DataType {
    match t {
        DataType::Map(entries, _) => DataType::List(entries.clone()),
        t => t.clone(),
    }
}

/// `a` as type `t` when it differs from `a`'s in name only (a map and the list of its
/// entries: see [`as_rows_carry`]); `a` itself otherwise.
fn relabel(a: &ArrayRef, t: &DataType) -> std::result::Result<ArrayRef, String> {
    let relabeled = matches!(
        (a.data_type(), t),
        (DataType::Map(..), DataType::List(_)) | (DataType::List(_), DataType::Map(..))
    );
    if !relabeled {
        return Ok(a.clone());
    }
    let d = a.to_data();
    let d = d.into_builder().data_type(t.clone()).build().map_err(|e| e.to_string())?;
    Ok(make_array(d))
}

fn encode_error(e: impl std::fmt::Display) -> TableError {
    TableError::Read { path: "row encoding".into(), why: e.to_string() }
}

impl RowCodec {
    /// The codec of `schema` sorted by `by` (`path` names the input in errors).
    pub(crate) fn new(schema: SchemaRef, by: &[SortColumn], path: &Path) -> Result<RowCodec> {
        let mut fields = Vec::new();
        let mut parts = Vec::new();
        let mut source = vec![None; schema.fields().len()];
        for key in by {
            let Some((col, field)) = schema.column_with_name(&key.name) else {
                let columns = schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(TableError::UnknownColumn {
                    path: path.to_path_buf(),
                    name: key.name.clone(),
                    columns,
                });
            };
            let t = field.data_type();
            if !key_type(t) {
                return Err(TableError::KeyType {
                    path: path.to_path_buf(),
                    name: key.name.clone(),
                    data_type: t.to_string(),
                });
            }
            let float = match t {
                DataType::Float16 => Some(FloatKey::F16),
                DataType::Float32 => Some(FloatKey::F32),
                DataType::Float64 => Some(FloatKey::F64),
                _ => None,
            };
            let key_t =
                if matches!(float, Some(FloatKey::F16)) { DataType::Float32 } else { t.clone() };
            let options = SortOptions { descending: key.descending, nulls_first: key.nulls_first };
            fields.push(SortField::new_with_options(key_t, options));
            if float.is_none() {
                source[col] = Some(Source::Key(parts.len()));
            }
            parts.push(Part::Key { col, float });
        }
        fields.push(SortField::new(DataType::UInt64));
        parts.push(Part::Sequence);
        let converter = RowConverter::new(fields).map_err(|e| TableError::ColumnType {
            path: path.to_path_buf(),
            name: "?".into(),
            data_type: e.to_string(),
        })?;
        let mut carried = Vec::new();
        let (mut other_fields, mut other_cols) = (Vec::new(), Vec::new());
        for (col, field) in schema.fields().iter().enumerate() {
            if source[col].is_some() {
                continue;
            }
            if let Some(how) = carry(field.data_type()) {
                source[col] = Some(Source::Carried(carried.len()));
                carried.push((col, how));
                continue;
            }
            let sf = SortField::new(as_rows_carry(field.data_type()));
            if !RowConverter::supports_fields(std::slice::from_ref(&sf)) {
                return Err(TableError::ColumnType {
                    path: path.to_path_buf(),
                    name: field.name().clone(),
                    data_type: field.data_type().to_string(),
                });
            }
            source[col] = Some(Source::Other(other_cols.len()));
            other_fields.push(sf);
            other_cols.push(col);
        }
        let other = if other_cols.is_empty() {
            None
        } else {
            let c = RowConverter::new(other_fields).map_err(|e| TableError::ColumnType {
                path: path.to_path_buf(),
                name: "?".into(),
                data_type: e.to_string(),
            })?;
            Some((c, other_cols))
        };
        let source = source.into_iter().map(|s| s.expect("every column has a place")).collect();
        Ok(RowCodec {
            converter,
            parts,
            carried,
            other,
            schema,
            source,
            long: None,
            contents: false,
        })
    }

    /// Rows longer than a record keep their payload in a file in `dir` (see `crate::long`).
    pub(crate) fn keep_long_rows_in(&mut self, dir: &Path) {
        self.long = Some(LongRows::in_dir(dir));
    }

    /// Rows longer than a record are encoded as they would be with [`Self::keep_long_rows_in`],
    /// their payloads only counted ([`Self::long_bytes`]): a plan's sample.
    pub(crate) fn measure_long_rows(&mut self) {
        self.long = Some(LongRows::measuring());
    }

    /// The bytes of long rows' payloads put aside so far.
    pub(crate) fn long_bytes(&self) -> u64 {
        self.long.as_ref().map_or(0, LongRows::bytes)
    }

    /// [`RowCodec::encode`] also sums each row's content: the CRC32 of its record without the
    /// sequence number (and before a long row's payload moves out), summed. Rows of the same
    /// values encoded by the same keys give the same sum whatever their order, their
    /// numbering or the sort that encodes them, which the whole records' sum (numbered) does
    /// not: a sort across machines compares its parts' sums with it. A CRC a row, unbatched,
    /// so only when asked.
    pub(crate) fn sum_contents(&mut self) {
        self.contents = true;
    }

    /// The schema the rows decode into.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Bytes of null bits opening each payload.
    fn null_bytes(&self) -> usize {
        self.carried.len().div_ceil(8)
    }

    /// The key part (keys and sequence) of the rows of `batch`, numbered from `first`.
    fn key_rows(&self, batch: &RecordBatch, first: u64) -> Result<Rows> {
        let n = batch.num_rows() as u64;
        let columns: Vec<ArrayRef> = self
            .parts
            .iter()
            .map(|p| match *p {
                Part::Key { col, float: None } => batch.column(col).clone(),
                Part::Key { col, float: Some(f) } => canonical(batch.column(col), f),
                Part::Sequence => Arc::new(UInt64Array::from_iter_values(first..first + n)),
            })
            .collect();
        self.converter.convert_columns(&columns).map_err(encode_error)
    }

    /// The rows of `batch` (of this codec's schema), numbered from `first`, as records (RDW
    /// and row) one after another, with their count and sum. A row longer than a record may
    /// be is an error naming `path` and its row there (`row` + its index in the batch).
    pub(crate) fn encode(
        &self,
        batch: &RecordBatch,
        first: u64,
        row: u64,
        path: &Path,
    ) -> Result<Framed> {
        let n = batch.num_rows();
        let keys = self.key_rows(batch, first)?;
        let datas: Vec<ArrayData> =
            self.carried.iter().map(|&(col, _)| batch.column(col).to_data()).collect();
        let others = match &self.other {
            None => None,
            Some((c, cols)) => {
                let columns = cols
                    .iter()
                    .map(|&i| {
                        let a = batch.column(i);
                        relabel(a, &as_rows_carry(a.data_type())).map_err(encode_error)
                    })
                    .collect::<Result<Vec<ArrayRef>>>()?;
                Some(c.convert_columns(&columns).map_err(encode_error)?)
            }
        };
        let nb = self.null_bytes();
        // Each row's length (after the RDW): what every row has, then what varies.
        let fixed = nb
            + TRAILER
            + self
                .carried
                .iter()
                .map(|&(_, how)| match how {
                    Carry::Fixed(w) => w,
                    Carry::Bool => 1,
                    Carry::Var { .. } => 0,
                })
                .sum::<usize>();
        let mut len: Vec<usize> = (0..n).map(|i| fixed + keys.row(i).data().len()).collect();
        for (d, &(_, how)) in datas.iter().zip(&self.carried) {
            if let Carry::Var { large } = how {
                for (i, l) in len.iter_mut().enumerate() {
                    let v = var_len(d, large, i);
                    *l += leb_len(v) + v;
                }
            }
        }
        if let Some(o) = &others {
            for (i, l) in len.iter_mut().enumerate() {
                let v = o.row(i).data().len();
                *l += leb_len(v) + v;
            }
        }
        // Rows too long for a record: their payload goes to the long rows' file, when there
        // is one and their key part fits a record with the reference.
        let too_long = |i: usize| TableError::RowTooLong {
            path: path.to_path_buf(),
            row: row + i as u64,
            bytes: len[i],
            max: MAX_ROW_BYTES,
        };
        let mut long = false;
        for (i, _) in len.iter().enumerate().filter(|&(_, &l)| l > MAX_ROW_BYTES) {
            if self.long.is_none() || keys.row(i).data().len() + LONG_TAIL > MAX_ROW_BYTES {
                return Err(too_long(i));
            }
            long = true;
        }
        let rdw = oxsort_format::RDW_BYTES;
        let mut bytes = vec![0u8; len.iter().sum::<usize>() + rdw * n];
        // Each row's place after its RDW, and where its null bits and payload go.
        let mut spans = Vec::with_capacity(n);
        let mut nulls_at = Vec::with_capacity(n);
        let mut pos = 0;
        for (i, &l) in len.iter().enumerate() {
            // The RDW: the record's length, then two zero bytes (a long row's, cut to 16 bits
            // here, is written again when its payload moves out: `move_long_payloads`).
            bytes[pos..pos + 2].copy_from_slice(&((l + rdw) as u16).to_be_bytes());
            let k = keys.row(i).data();
            let start = pos + rdw;
            bytes[start..start + k.len()].copy_from_slice(k);
            let end = start + l;
            bytes[end - TRAILER..end].copy_from_slice(&(k.len() as u16).to_be_bytes());
            spans.push(start..end);
            nulls_at.push(start + k.len());
            pos = end;
        }
        // Where each row's payload is written next.
        let mut at: Vec<usize> = nulls_at.iter().map(|a| a + nb).collect();
        for (j, (d, &(col, how))) in datas.iter().zip(&self.carried).enumerate() {
            if let Some(nulls) = d.nulls().filter(|x| x.null_count() > 0) {
                for (i, &a) in nulls_at.iter().enumerate() {
                    if nulls.is_null(i) {
                        bytes[a + j / 8] |= 1 << (j % 8);
                    }
                }
            }
            match how {
                Carry::Fixed(w) => {
                    put_fixed(&mut bytes, &mut at, d, w);
                    // A null's slot holds whatever its reader left there: zeros instead, so
                    // equal rows encode to equal bytes.
                    if let Some(nulls) = d.nulls().filter(|x| x.null_count() > 0) {
                        for (i, &a) in at.iter().enumerate() {
                            if nulls.is_null(i) {
                                bytes[a - w..a].fill(0);
                            }
                        }
                    }
                }
                Carry::Bool => {
                    let b = batch.column(col).as_boolean();
                    for (i, a) in at.iter_mut().enumerate() {
                        bytes[*a] = u8::from(b.is_valid(i) && b.value(i));
                        *a += 1;
                    }
                }
                Carry::Var { large } => put_var(&mut bytes, &mut at, d, large),
            }
        }
        if let Some(o) = &others {
            for (i, a) in at.iter_mut().enumerate() {
                let v = o.row(i).data();
                *a = put_leb(&mut bytes, *a, v.len());
                bytes[*a..*a + v.len()].copy_from_slice(v);
                *a += v.len();
            }
        }
        let content = if self.contents { content_sum(&bytes, &spans, &keys) } else { 0 };
        let (bytes, spans) = if long {
            self.move_long_payloads(&bytes, &spans, &keys, path)?
        } else {
            (bytes, spans)
        };
        let rows: Vec<&[u8]> = spans.into_iter().map(|r| &bytes[r]).collect();
        let mut sum = RowSum::default();
        sum.add_all(&rows);
        drop(rows);
        Ok(Framed { bytes, sum, content })
    }

    /// The records of `bytes` (rows at `spans`, each after its RDW) again, each row longer
    /// than a record with its payload moved to the long rows' file and a reference in its
    /// place (see `crate::long`); and the new rows' spans.
    fn move_long_payloads(
        &self,
        bytes: &[u8],
        spans: &[std::ops::Range<usize>],
        keys: &Rows,
        path: &Path,
    ) -> Result<(Vec<u8>, Vec<std::ops::Range<usize>>)> {
        let store = self.long.as_ref().expect("checked by the caller");
        let rdw = oxsort_format::RDW_BYTES;
        let mut out = Vec::with_capacity(bytes.len());
        let mut out_spans = Vec::with_capacity(spans.len());
        for (i, s) in spans.iter().enumerate() {
            let l = s.len();
            let start = out.len() + rdw;
            if l <= MAX_ROW_BYTES {
                out.extend_from_slice(&bytes[s.start - rdw..s.end]);
            } else {
                let k = keys.row(i).data().len();
                let payload = &bytes[s.start + k..s.end - TRAILER];
                let r = store
                    .put(payload)
                    .map_err(|why| TableError::Read { path: path.to_path_buf(), why })?;
                let row_len = k + LONG_TAIL;
                out.extend_from_slice(&((row_len + rdw) as u16).to_be_bytes());
                out.extend_from_slice(&[0, 0]);
                out.extend_from_slice(&bytes[s.start..s.start + k]);
                out.extend_from_slice(&r.tail(k));
            }
            out_spans.push(start..out.len());
        }
        Ok((out, out_spans))
    }

    /// The batch of the rows `rows` (each the bytes of one row this codec encoded, after its
    /// RDW).
    pub(crate) fn decode<'a>(
        &self,
        rows: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<RecordBatch> {
        let mut keys = Vec::new();
        // Each row's payload: in the row, or read back from the long rows' file.
        let mut inline: Vec<std::result::Result<&[u8], usize>> = Vec::new();
        let mut fetched: Vec<Vec<u8>> = Vec::new();
        for r in rows {
            let Some(body) = r.len().checked_sub(TRAILER) else {
                return Err(decode_error(format!("a row of {} bytes", r.len())));
            };
            let k = u16::from_be_bytes([r[body], r[body + 1]]);
            if k == LONG_MARK {
                let Some(tail) = r.len().checked_sub(LONG_TAIL).map(|t| &r[t..]) else {
                    return Err(decode_error(format!("a long row of {} bytes", r.len())));
                };
                let (at, k) = PayloadRef::parse(tail.try_into().expect("LONG_TAIL bytes"));
                if k + LONG_TAIL != r.len() {
                    return Err(decode_error(format!("a long row of {} bytes", r.len())));
                }
                let store = self.long.as_ref().ok_or_else(|| {
                    decode_error("a long row, and no file for long rows' payloads".into())
                })?;
                keys.push(&r[..k]);
                inline.push(Err(fetched.len()));
                fetched.push(store.get(at).map_err(decode_error)?);
                continue;
            }
            let k = usize::from(k);
            if k > body {
                return Err(decode_error(format!("a key part of {k} bytes in a row of {body}")));
            }
            keys.push(&r[..k]);
            inline.push(Ok(&r[k..body]));
        }
        let payloads = inline.into_iter().map(|p| p.unwrap_or_else(|i| fetched[i].as_slice()));
        let n = keys.len();
        let parser = self.converter.parser();
        let decoded = self
            .converter
            .convert_rows(keys.iter().map(|k| parser.parse(k)))
            .map_err(|e| decode_error(e.to_string()))?;
        let nb = self.null_bytes();
        let mut columns: Vec<Column> =
            self.carried.iter().map(|&(_, how)| Column::new(how, n)).collect();
        let mut other_rows = Vec::with_capacity(if self.other.is_some() { n } else { 0 });
        for p in payloads {
            let Some(nulls) = p.get(..nb) else {
                return Err(decode_error(format!("a payload of {} bytes", p.len())));
            };
            let mut at = nb;
            for (j, c) in columns.iter_mut().enumerate() {
                let null = nulls[j / 8] >> (j % 8) & 1 == 1;
                at = c.push(p, at, null).ok_or_else(|| decode_error("a cut payload".into()))?;
            }
            if self.other.is_some() {
                let (len, from) =
                    get_leb(p, at).ok_or_else(|| decode_error("a cut payload".into()))?;
                let v = from
                    .checked_add(len)
                    .and_then(|end| p.get(from..end))
                    .ok_or_else(|| decode_error("a cut payload".into()))?;
                other_rows.push(v);
                at = from + len;
            }
            if at != p.len() {
                return Err(decode_error(format!("{} bytes past a payload's end", p.len() - at)));
            }
        }
        let other = match &self.other {
            None => Vec::new(),
            Some((c, _)) => {
                let parser = c.parser();
                c.convert_rows(other_rows.iter().map(|r| parser.parse(r)))
                    .map_err(|e| decode_error(e.to_string()))?
            }
        };
        let mut carried: Vec<Option<ArrayRef>> = Vec::with_capacity(columns.len());
        for (c, &(col, _)) in columns.into_iter().zip(&self.carried) {
            let t = self.schema.field(col).data_type().clone();
            carried.push(Some(c.finish(t, n).map_err(|e| decode_error(e.to_string()))?));
        }
        let mut out = Vec::with_capacity(self.source.len());
        for (field, &from) in self.schema.fields().iter().zip(&self.source) {
            let a = match from {
                Source::Key(i) => decoded[i].clone(),
                Source::Other(i) => relabel(&other[i], field.data_type()).map_err(decode_error)?,
                Source::Carried(i) => carried[i].take().expect("each carried column once"),
            };
            let a = if a.data_type() == field.data_type() {
                a
            } else {
                // Dictionaries decode as their values: encode them again.
                arrow_cast::cast(&a, field.data_type()).map_err(|e| decode_error(e.to_string()))?
            };
            out.push(a);
        }
        RecordBatch::try_new(self.schema.clone(), out).map_err(|e| decode_error(e.to_string()))
    }
}

/// The length of value `i` of a string or binary column's data.
#[inline]
fn var_len(d: &ArrayData, large: bool, i: usize) -> usize {
    let (s, e) = var_range(d, large, i);
    e - s
}

/// Where value `i` of a string or binary column's data lies in its value buffer: nowhere
/// (an empty range) when it is null, whatever bytes its offsets span (Arrow allows some).
#[inline]
fn var_range(d: &ArrayData, large: bool, i: usize) -> (usize, usize) {
    let j = d.offset() + i;
    let (s, e) = if large {
        let o = d.buffer::<i64>(0);
        (o[j] as usize, o[j + 1] as usize)
    } else {
        let o = d.buffer::<i32>(0);
        (o[j] as usize, o[j + 1] as usize)
    };
    // (The count first: most columns have none, and this runs for every value.)
    if d.nulls().is_some_and(|n| n.null_count() > 0 && n.is_null(i)) {
        (s, s)
    } else {
        (s, e)
    }
}

/// Writes each row's value of a string or binary column at `at` (moved past it).
fn put_var(bytes: &mut [u8], at: &mut [usize], d: &ArrayData, large: bool) {
    let values = d.buffers()[1].as_slice();
    for (i, a) in at.iter_mut().enumerate() {
        let (s, e) = var_range(d, large, i);
        *a = put_leb(bytes, *a, e - s);
        bytes[*a..*a + e - s].copy_from_slice(&values[s..e]);
        *a += e - s;
    }
}

/// Writes each row's value of a fixed-width column at `at` (moved past it).
fn put_fixed(bytes: &mut [u8], at: &mut [usize], d: &ArrayData, w: usize) {
    /// The common widths as constants, so each copy is one move.
    fn put<const W: usize>(bytes: &mut [u8], at: &mut [usize], values: &[u8]) {
        for (a, v) in at.iter_mut().zip(values.chunks_exact(W)) {
            bytes[*a..*a + W].copy_from_slice(v);
            *a += W;
        }
    }
    let values = &d.buffers()[0].as_slice()[d.offset() * w..][..at.len() * w];
    match w {
        1 => put::<1>(bytes, at, values),
        2 => put::<2>(bytes, at, values),
        4 => put::<4>(bytes, at, values),
        8 => put::<8>(bytes, at, values),
        16 => put::<16>(bytes, at, values),
        _ => {
            for (i, a) in at.iter_mut().enumerate() {
                bytes[*a..*a + w].copy_from_slice(&values[i * w..(i + 1) * w]);
                *a += w;
            }
        }
    }
}

/// The bytes of `v` as LEB128 (7 bits a byte, low first).
#[inline]
fn leb_len(v: usize) -> usize {
    (usize::BITS - (v | 1).leading_zeros()).div_ceil(7) as usize
}

/// Writes `v` as LEB128 at `at`; returns where it ends.
#[inline]
fn put_leb(bytes: &mut [u8], mut at: usize, mut v: usize) -> usize {
    while v >= 0x80 {
        bytes[at] = (v as u8) | 0x80;
        v >>= 7;
        at += 1;
    }
    bytes[at] = v as u8;
    at + 1
}

/// Reads a LEB128 value at `at`: the value and where it ends; `None` when cut or too long.
#[inline]
fn get_leb(bytes: &[u8], mut at: usize) -> Option<(usize, usize)> {
    let mut v = 0usize;
    for shift in (0..usize::BITS).step_by(7) {
        let b = *bytes.get(at)?;
        at += 1;
        v |= usize::from(b & 0x7F).checked_shl(shift)?;
        if b < 0x80 {
            return Some((v, at));
        }
    }
    None
}

/// One carried column being decoded.
enum Column {
    Fixed { w: usize, values: Vec<u8>, valid: BooleanBufferBuilder },
    Bool { values: BooleanBufferBuilder, valid: BooleanBufferBuilder },
    Var { large: bool, offsets: Vec<i64>, values: Vec<u8>, valid: BooleanBufferBuilder },
}

impl Column {
    fn new(how: Carry, n: usize) -> Column {
        let valid = BooleanBufferBuilder::new(n);
        match how {
            Carry::Fixed(w) => Column::Fixed { w, values: Vec::with_capacity(n * w), valid },
            Carry::Bool => Column::Bool { values: BooleanBufferBuilder::new(n), valid },
            Carry::Var { large } => {
                let mut offsets = Vec::with_capacity(n + 1);
                offsets.push(0);
                Column::Var { large, offsets, values: Vec::new(), valid }
            }
        }
    }

    /// Takes the value at `at` of payload `p` (a null one when `null`); returns where it ends,
    /// `None` when the payload ends first.
    #[inline]
    fn push(&mut self, p: &[u8], at: usize, null: bool) -> Option<usize> {
        match self {
            Column::Fixed { w, values, valid } => {
                values.extend_from_slice(p.get(at..at + *w)?);
                valid.append(!null);
                Some(at + *w)
            }
            Column::Bool { values, valid } => {
                values.append(*p.get(at)? != 0);
                valid.append(!null);
                Some(at + 1)
            }
            Column::Var { offsets, values, valid, .. } => {
                let (len, from) = get_leb(p, at)?;
                values.extend_from_slice(p.get(from..from.checked_add(len)?)?);
                offsets.push(values.len() as i64);
                valid.append(!null);
                Some(from + len)
            }
        }
    }

    /// The decoded array of type `t` (`n` values).
    fn finish(self, t: DataType, n: usize) -> std::result::Result<ArrayRef, String> {
        let nulls = |mut valid: BooleanBufferBuilder| {
            let nulls = NullBuffer::new(valid.finish());
            (nulls.null_count() > 0).then_some(nulls)
        };
        let data = match self {
            Column::Fixed { values, valid, .. } => ArrayData::builder(t)
                .len(n)
                .add_buffer(Buffer::from_vec(values))
                .nulls(nulls(valid)),
            Column::Bool { mut values, valid } => ArrayData::builder(t)
                .len(n)
                .add_buffer(values.finish().into_inner())
                .nulls(nulls(valid)),
            Column::Var { large, offsets, values, valid } => {
                let offsets = if large {
                    Buffer::from_vec(offsets)
                } else {
                    let narrow: Option<Vec<i32>> =
                        offsets.iter().map(|&o| i32::try_from(o).ok()).collect();
                    Buffer::from_vec(narrow.ok_or("string offsets past 2 GiB in one batch")?)
                };
                ArrayData::builder(t)
                    .len(n)
                    .add_buffer(offsets)
                    .add_buffer(Buffer::from_vec(values))
                    .nulls(nulls(valid))
            }
        };
        data.build().map(make_array).map_err(|e| e.to_string())
    }
}

fn decode_error(why: String) -> TableError {
    TableError::Check { path: "sorted rows".into(), why: format!("a row does not decode: {why}") }
}

/// The canonical copy of a float key column: NaN as the positive quiet NaN, `-0.0` as `0.0`.
fn canonical(a: &ArrayRef, f: FloatKey) -> ArrayRef {
    match f {
        FloatKey::F64 => Arc::new(a.as_primitive::<Float64Type>().unary::<_, Float64Type>(|x| {
            if x.is_nan() {
                f64::NAN
            } else if x == 0.0 {
                0.0
            } else {
                x
            }
        })),
        FloatKey::F32 | FloatKey::F16 => {
            let a = if matches!(f, FloatKey::F16) {
                // Widening a half float is exact.
                arrow_cast::cast(a, &DataType::Float32).expect("f16 widens to f32")
            } else {
                a.clone()
            };
            Arc::new(a.as_primitive::<Float32Type>().unary::<_, Float32Type>(|x| {
                if x.is_nan() {
                    f32::NAN
                } else if x == 0.0 {
                    0.0
                } else {
                    x
                }
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int32Array, ListArray, StringArray};
    use arrow_schema::{Field, Schema};

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new("x", DataType::Float64, true),
            Field::new("i", DataType::Int32, false),
        ]))
    }

    #[test]
    fn rows_order_by_keys_then_input_order_and_decode_back() {
        let s = schema();
        let batch = RecordBatch::try_new(
            s.clone(),
            vec![
                Arc::new(StringArray::from(vec![Some("b"), None, Some("a"), Some("b")])),
                Arc::new(Float64Array::from(vec![Some(-f64::NAN), Some(1.0), Some(-0.0), None])),
                Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
            ],
        )
        .unwrap();
        let by = [SortColumn::new("s"), SortColumn { descending: true, ..SortColumn::new("x") }];
        let codec = RowCodec::new(s, &by, Path::new("t")).unwrap();
        let Framed { bytes, sum, .. } = codec.encode(&batch, 0, 0, Path::new("t")).unwrap();
        let rows = records(&bytes);
        assert_eq!(sum.rows, 4);
        let mut order: Vec<usize> = (0..4).collect();
        order.sort_by(|&a, &b| rows[a].cmp(rows[b]));
        // s asc nulls last; within "b", x descending: NaN first (largest), null last.
        assert_eq!(order, vec![2, 0, 3, 1]);
        let back = codec.decode(order.iter().map(|&i| rows[i])).unwrap();
        let x = back.column(1).as_primitive::<Float64Type>();
        // The float column keeps its sign bits (the key's copy is the canonical one).
        assert!(x.value(0).is_sign_negative() && x.value(0) == 0.0);
        assert!(x.value(1).is_nan() && x.value(1).is_sign_negative());
        assert_eq!(
            back.column(2).as_primitive::<arrow_array::types::Int32Type>().values(),
            &[3, 1, 4, 2]
        );
        assert_eq!(back.schema(), *codec.schema());
    }

    /// The rows (after each RDW) of encoded records.
    fn records(mut bytes: &[u8]) -> Vec<&[u8]> {
        let mut rows = Vec::new();
        while !bytes.is_empty() {
            let len = usize::from(u16::from_be_bytes([bytes[0], bytes[1]]));
            rows.push(&bytes[oxsort_format::RDW_BYTES..len]);
            bytes = &bytes[len..];
        }
        rows
    }

    /// A batch with a column of every kind the payload carries (and some it leaves to
    /// arrow-row), nulls in each, strings past 127 bytes (two-byte lengths), sliced so that
    /// every array starts at an offset.
    fn every_kind() -> RecordBatch {
        use arrow_array::builder::{ListBuilder, StringDictionaryBuilder};
        use arrow_array::types::Int32Type;
        use arrow_array::*;
        let n = 300;
        let opt = |i: usize| i % 7 != 3;
        let long = |i: usize| "é".repeat(i % 150);
        let mut list = ListBuilder::new(arrow_array::builder::Int32Builder::new());
        let mut dict = StringDictionaryBuilder::<Int32Type>::new();
        let mut map = arrow_array::builder::MapBuilder::new(
            None,
            arrow_array::builder::StringBuilder::new(),
            arrow_array::builder::Int64Builder::new(),
        );
        for i in 0..n {
            if opt(i) {
                list.values().append_value(i as i32);
                list.append(true);
                dict.append_value(format!("d{}", i % 5));
                for j in 0..i % 3 {
                    map.keys().append_value(format!("m{j}"));
                    map.values().append_option((j != 1).then_some(i as i64));
                }
                map.append(true).unwrap();
            } else {
                list.append(false);
                dict.append_null();
                map.append(false).unwrap();
            }
        }
        let cols: Vec<(&str, ArrayRef)> = vec![
            ("k", Arc::new(Int64Array::from_iter_values((0..n as i64).map(|i| i % 10)))),
            ("i8", Arc::new(Int8Array::from_iter((0..n).map(|i| opt(i).then_some(i as i8))))),
            ("u16", Arc::new(UInt16Array::from_iter((0..n).map(|i| opt(i).then_some(i as u16))))),
            ("i32", Arc::new(Int32Array::from_iter((0..n).map(|i| opt(i).then_some(-(i as i32)))))),
            (
                "f16",
                arrow_cast::cast(
                    &Float32Array::from_iter((0..n).map(|i| opt(i).then_some(i as f32 / 4.0))),
                    &DataType::Float16,
                )
                .unwrap(),
            ),
            (
                "f64",
                Arc::new(Float64Array::from_iter((0..n).map(|i| opt(i).then_some(i as f64 / 3.0)))),
            ),
            ("date", Arc::new(Date32Array::from_iter((0..n).map(|i| opt(i).then_some(i as i32))))),
            (
                "ts",
                Arc::new(
                    TimestampMicrosecondArray::from_iter(
                        (0..n).map(|i| opt(i).then_some(i as i64)),
                    )
                    .with_timezone("Europe/Paris"),
                ),
            ),
            (
                "dec",
                Arc::new(
                    Decimal128Array::from_iter((0..n).map(|i| opt(i).then_some(i as i128 * 1001)))
                        .with_precision_and_scale(20, 3)
                        .unwrap(),
                ),
            ),
            ("b", Arc::new(BooleanArray::from_iter((0..n).map(|i| opt(i).then_some(i % 3 == 0))))),
            ("s", Arc::new(StringArray::from_iter((0..n).map(|i| opt(i).then(|| long(i)))))),
            (
                "ls",
                Arc::new(LargeStringArray::from_iter((0..n).map(|i| opt(i).then(|| long(i + 7))))),
            ),
            (
                "bin",
                Arc::new(BinaryArray::from_iter(
                    (0..n).map(|i| opt(i).then(|| vec![i as u8; i % 200])),
                )),
            ),
            (
                "fsb",
                Arc::new(
                    FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                        (0..n).map(|i| opt(i).then_some([i as u8, 1, 2])),
                        3,
                    )
                    .unwrap(),
                ),
            ),
            ("list", Arc::new(list.finish())),
            ("dict", Arc::new(dict.finish())),
            ("map", Arc::new(map.finish())),
        ];
        let fields: Vec<Field> =
            cols.iter().map(|(name, a)| Field::new(*name, a.data_type().clone(), true)).collect();
        let schema = Arc::new(Schema::new(fields).with_metadata([("m".into(), "v".into())].into()));
        let batch =
            RecordBatch::try_new(schema, cols.into_iter().map(|(_, a)| a).collect()).unwrap();
        batch.slice(5, n - 9)
    }

    #[test]
    fn rows_longer_than_a_record_keep_their_payload_aside_and_decode_back() {
        use arrow_array::{Int64Array, StringArray};
        // Rows of a few bytes beside rows of 70 kB and 1 MB of text (longer than any record).
        let text = |i: usize| match i % 4 {
            0 => "x".repeat(70_000 + i),
            1 => "short".to_string(),
            2 => "y".repeat(1 << 20),
            _ => String::new(),
        };
        let n = 12;
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("text", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values((0..n as i64).map(|i| (i * 7) % 5))),
                Arc::new(StringArray::from_iter((0..n).map(|i| (i != 3).then(|| text(i))))),
            ],
        )
        .unwrap();
        let by = [SortColumn::new("k")];
        // Without a file for them, a long row is an error naming its row.
        let plain = RowCodec::new(schema.clone(), &by, Path::new("t")).unwrap();
        let e = plain.encode(&batch, 0, 100, Path::new("in.parquet")).err().unwrap();
        assert!(e.to_string().contains("in.parquet: row 100 takes"), "{e}");

        let dir = tempfile::tempdir().unwrap();
        let mut codec = RowCodec::new(schema, &by, Path::new("t")).unwrap();
        codec.keep_long_rows_in(dir.path());
        let Framed { bytes, sum, .. } = codec.encode(&batch, 0, 0, Path::new("t")).unwrap();
        let rows = records(&bytes);
        assert_eq!((sum.rows, rows.len()), (n as u64, n));
        assert!(rows.iter().all(|r| r.len() <= MAX_ROW_BYTES));
        assert!(bytes.len() < 1000, "the long payloads stayed in the records");
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| rows[a].cmp(rows[b]));
        let back = codec.decode(order.iter().map(|&i| rows[i])).unwrap();
        let idx = UInt64Array::from_iter_values(order.iter().map(|&i| i as u64));
        assert_eq!(back, arrow_select::take::take_record_batch(&batch, &idx).unwrap());
        // The payloads' file has no name: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A reference changed in a record is found, not followed to wrong bytes.
        let long = rows.iter().position(|r| r.ends_with(&LONG_MARK.to_be_bytes())).unwrap();
        let mut bad = rows[long].to_vec();
        let t = bad.len() - LONG_TAIL;
        bad[t + 7] ^= 1;
        assert!(codec.decode([bad.as_slice()]).is_err());
    }

    #[test]
    fn every_column_kind_decodes_back_as_it_was() {
        let batch = every_kind();
        let codec = RowCodec::new(batch.schema(), &[SortColumn::new("k")], Path::new("t")).unwrap();
        let Framed { bytes, sum, .. } = codec.encode(&batch, 0, 0, Path::new("t")).unwrap();
        let rows = records(&bytes);
        assert_eq!(sum.rows as usize, batch.num_rows());
        // In input order, the rows decode to the batch itself: values, nulls, types, metadata.
        let back = codec.decode(rows.iter().copied()).unwrap();
        assert_eq!(back, batch);
        // Sorted by k: each column is the input's taken in that order.
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by(|&a, &b| rows[a].cmp(rows[b]));
        let back = codec.decode(order.iter().map(|&i| rows[i])).unwrap();
        let idx = UInt64Array::from_iter_values(order.iter().map(|&i| i as u64));
        let want = arrow_select::take::take_record_batch(&batch, &idx).unwrap();
        assert_eq!(back, want);
        let k = back.column(0).as_primitive::<arrow_array::types::Int64Type>();
        assert!(k.values().windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn content_sums_ignore_order_and_numbering_but_not_values() {
        let batch = every_kind();
        let n = batch.num_rows();
        let mut codec =
            RowCodec::new(batch.schema(), &[SortColumn::new("k")], Path::new("t")).unwrap();
        codec.sum_contents();
        let take = |idx: Vec<u64>| {
            arrow_select::take::take_record_batch(&batch, &UInt64Array::from(idx)).unwrap()
        };
        let at = |b: &RecordBatch, first: u64| codec.encode(b, first, 0, Path::new("t")).unwrap();
        let here = at(&batch, 0);
        // The same rows backwards, numbered from elsewhere: the records differ, the contents
        // do not.
        let there = at(&take((0..n as u64).rev().collect()), 1 << 40);
        assert_ne!(here.sum, there.sum);
        assert_eq!(here.content, there.content);
        assert_ne!(here.content, 0);
        // One row in place of another: the count is the same, the contents are not.
        let mut idx: Vec<u64> = (0..n as u64).collect();
        idx[1] = 0;
        assert_ne!(at(&take(idx), 0).content, here.content);
        // A null is a null whatever bytes its reader left under it (a fixed width, a boolean
        // and a string column's): the rows encode alike.
        let fields = vec![
            Field::new("k", DataType::Int32, false),
            Field::new("i", DataType::Int64, true),
            Field::new("b", DataType::Boolean, true),
            Field::new("s", DataType::Utf8, true),
        ];
        let nulls = || Some(NullBuffer::from(vec![true, false]));
        let under = |i: i64, b: bool, s: &str| {
            let strings = arrow_array::StringArray::new(
                arrow_buffer::OffsetBuffer::from_lengths([1, s.len()]),
                Buffer::from(format!("a{s}").into_bytes()),
                nulls(),
            );
            RecordBatch::try_new(
                Arc::new(arrow_schema::Schema::new(fields.clone())),
                vec![
                    Arc::new(Int32Array::from(vec![1, 2])),
                    Arc::new(arrow_array::Int64Array::new(vec![9, i].into(), nulls())),
                    Arc::new(arrow_array::BooleanArray::new(vec![true, b].into(), nulls())),
                    Arc::new(strings),
                ],
            )
            .unwrap()
        };
        let (clean, dirty) = (under(0, false, ""), under(-77, true, "left over"));
        let mut c = RowCodec::new(clean.schema(), &[SortColumn::new("k")], Path::new("t")).unwrap();
        c.sum_contents();
        let (a, b) = (
            c.encode(&clean, 0, 0, Path::new("t")).unwrap(),
            c.encode(&dirty, 0, 0, Path::new("t")).unwrap(),
        );
        assert_eq!((a.bytes, a.content), (b.bytes, b.content));
        // Not asked for: not summed.
        let plain = RowCodec::new(batch.schema(), &[SortColumn::new("k")], Path::new("t")).unwrap();
        assert_eq!(plain.encode(&batch, 0, 0, Path::new("t")).unwrap().content, 0);
    }

    #[test]
    fn the_payload_costs_about_the_columns_own_bytes() {
        // A 40-byte string, an i64 and a date beside a short key: far below arrow-row's
        // order-preserving form of the same columns (70 + 9 + 5 bytes).
        let s = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, true),
            Field::new("p", DataType::Utf8, false),
            Field::new("n", DataType::Int64, false),
            Field::new("d", DataType::Date32, false),
        ]));
        let batch = RecordBatch::try_new(
            s.clone(),
            vec![
                Arc::new(StringArray::from(vec!["k1"])),
                Arc::new(StringArray::from(vec!["p".repeat(40)])),
                Arc::new(arrow_array::Int64Array::from(vec![7])),
                Arc::new(arrow_array::Date32Array::from(vec![9])),
            ],
        )
        .unwrap();
        let codec = RowCodec::new(s, &[SortColumn::new("k")], Path::new("t")).unwrap();
        let Framed { bytes, .. } = codec.encode(&batch, 0, 0, Path::new("t")).unwrap();
        let key_part = records(&bytes)[0].len() - (1 + 41 + 8 + 4 + TRAILER);
        // The key "k1" (1 + 8 + 1 bytes in arrow-row) and the sequence (1 + 8).
        assert_eq!(key_part, 19, "{bytes:?}");
    }

    #[test]
    fn a_damaged_row_is_an_error_not_a_wrong_row() {
        let batch = every_kind();
        let codec = RowCodec::new(batch.schema(), &[SortColumn::new("k")], Path::new("t")).unwrap();
        let Framed { bytes, .. } = codec.encode(&batch, 0, 0, Path::new("t")).unwrap();
        let row = records(&bytes)[20].to_vec();
        // A payload cut short, one byte too many, and a key part longer than the row. (A key
        // part itself damaged is arrow-row's to parse: the engine's checksums keep damaged
        // runs from reaching the decoder.)
        let mut cut = row.clone();
        cut.drain(row.len() - TRAILER - 3..row.len() - TRAILER);
        let mut long = row.clone();
        long.insert(row.len() - TRAILER, 0);
        let mut bad_key = row.clone();
        let n = bad_key.len();
        bad_key[n - 2..].copy_from_slice(&u16::MAX.to_be_bytes());
        for r in [&cut[..], &long[..], &bad_key[..], &row[..1]] {
            let e = codec.decode([r]).unwrap_err().to_string();
            assert!(e.contains("does not decode"), "{e}");
        }
    }

    #[test]
    fn bad_keys_name_the_column_and_type() {
        let e = RowCodec::new(schema(), &[SortColumn::new("y")], Path::new("in.parquet"));
        let e = e.unwrap_err().to_string();
        assert!(e.contains("'y'") && e.contains("s, x, i") && e.contains("in.parquet"), "{e}");
        let list = DataType::List(Arc::new(Field::new("item", DataType::Int32, true)));
        let s = Arc::new(Schema::new(vec![Field::new("l", list, true)]));
        let e = RowCodec::new(s, &[SortColumn::new("l")], Path::new("t")).unwrap_err();
        assert!(e.to_string().contains("List"), "{e}");
        let _ = ListArray::new_null;
    }
}

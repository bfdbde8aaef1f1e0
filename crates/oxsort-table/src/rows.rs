//! [`RowCodec`]: table rows as the engine's records, whose plain byte order is the sort order.
//!
//! ```text
//!  record = | RDW (4) | key 1 | ... | key k | sequence (u64) | other columns ... |
//!                      └─ arrow-row encodings: prefix-free, byte order = wanted order ─┘
//! ```
//!
//! One `arrow_row::RowConverter` encodes the key columns (with their direction and null
//! placement), then the row's sequence number in the whole input (ascending, never null), then
//! every column not already carried by a key. The keys' encodings are prefix-free and the
//! sequence is unique, so comparing whole records as bytes compares keys first and settles ties
//! by input order: the engine's plain byte order of the data after the RDW is the stable order.
//! Decoding parses the same bytes back into arrays, and the sequence is dropped.
//!
//! Floats: the key carries a canonical copy (every NaN as the positive quiet NaN, so NaN sorts
//! after every number both ways of its sign bit; `-0.0` as `0.0`, equal as numbers are), and
//! the column itself rides unchanged with the other columns. A half-float key is widened to
//! single precision (exact) for the same canonical form.

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, UInt64Array};
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{DataType, SchemaRef, SortOptions};

use crate::columns::SortColumn;
use crate::error::{Result, TableError};

/// Where a converter column comes from.
#[derive(Debug, Clone, Copy)]
enum Part {
    /// A key: the schema's column `col`, as it is, or as its canonical float copy.
    Key { col: usize, float: Option<FloatKey> },
    /// The row's sequence number.
    Sequence,
    /// A column carried as it is.
    Column(usize),
}

/// How a float key's canonical copy is made.
#[derive(Debug, Clone, Copy)]
enum FloatKey {
    F16,
    F32,
    F64,
}

/// The encoding of one schema's rows, keyed by some of its columns.
#[derive(Debug)]
pub(crate) struct RowCodec {
    converter: RowConverter,
    parts: Vec<Part>,
    schema: SchemaRef,
    /// For each schema column: the converter column it decodes from.
    source: Vec<usize>,
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

impl RowCodec {
    /// The codec of `schema` sorted by `by` (`path` names the input in errors).
    pub(crate) fn new(schema: SchemaRef, by: &[SortColumn], path: &Path) -> Result<RowCodec> {
        let mut fields = Vec::new();
        let mut parts = Vec::new();
        let mut source = vec![usize::MAX; schema.fields().len()];
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
                source[col] = parts.len();
            }
            parts.push(Part::Key { col, float });
        }
        fields.push(SortField::new(DataType::UInt64));
        parts.push(Part::Sequence);
        for (col, field) in schema.fields().iter().enumerate() {
            if source[col] != usize::MAX {
                continue;
            }
            let sf = SortField::new(field.data_type().clone());
            if !RowConverter::supports_fields(std::slice::from_ref(&sf)) {
                return Err(TableError::ColumnType {
                    path: path.to_path_buf(),
                    name: field.name().clone(),
                    data_type: field.data_type().to_string(),
                });
            }
            source[col] = parts.len();
            fields.push(sf);
            parts.push(Part::Column(col));
        }
        let converter = RowConverter::new(fields).map_err(|e| TableError::ColumnType {
            path: path.to_path_buf(),
            name: "?".into(),
            data_type: e.to_string(),
        })?;
        Ok(RowCodec { converter, parts, schema, source })
    }

    /// The schema the rows decode into.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The rows of `batch` (of this codec's schema), numbered from `first`.
    pub(crate) fn encode(&self, batch: &RecordBatch, first: u64) -> Result<Rows> {
        let n = batch.num_rows() as u64;
        let columns: Vec<ArrayRef> = self
            .parts
            .iter()
            .map(|p| match *p {
                Part::Key { col, float: None } | Part::Column(col) => batch.column(col).clone(),
                Part::Key { col, float: Some(f) } => canonical(batch.column(col), f),
                Part::Sequence => Arc::new(UInt64Array::from_iter_values(first..first + n)),
            })
            .collect();
        self.converter
            .convert_columns(&columns)
            .map_err(|e| TableError::Read { path: "row encoding".into(), why: e.to_string() })
    }

    /// The batch of the rows `rows` (each the bytes of one row this codec encoded).
    pub(crate) fn decode<'a>(
        &self,
        rows: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<RecordBatch> {
        let parser = self.converter.parser();
        let decoded = self
            .converter
            .convert_rows(rows.into_iter().map(|r| parser.parse(r)))
            .map_err(|e| decode_error(e.to_string()))?;
        let mut columns = Vec::with_capacity(self.source.len());
        for (field, &from) in self.schema.fields().iter().zip(&self.source) {
            let a = decoded[from].clone();
            let a = if a.data_type() == field.data_type() {
                a
            } else {
                // Dictionaries decode as their values: encode them again.
                arrow_cast::cast(&a, field.data_type()).map_err(|e| decode_error(e.to_string()))?
            };
            columns.push(a);
        }
        RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| decode_error(e.to_string()))
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
        let rows = codec.encode(&batch, 0).unwrap();
        let mut order: Vec<usize> = (0..4).collect();
        order.sort_by(|&a, &b| rows.row(a).data().cmp(rows.row(b).data()));
        // s asc nulls last; within "b", x descending: NaN first (largest), null last.
        assert_eq!(order, vec![2, 0, 3, 1]);
        let back = codec.decode(order.iter().map(|&i| rows.row(i).data())).unwrap();
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

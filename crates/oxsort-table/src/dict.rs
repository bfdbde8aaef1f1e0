//! [`Dictionaries`]: the dictionary columns of an Arrow IPC file output, kept on one growing
//! dictionary per column.
//!
//! An Arrow IPC file holds one dictionary per field for all its batches, extended only by
//! deltas (a later dictionary whose first values are the earlier one). The sorted batches come
//! with dictionaries of their own (each decoded batch makes one), so each batch's dictionary
//! columns are re-keyed onto a dictionary that only grows: values seen before keep their key,
//! new ones are appended; the IPC writer then sends each batch's new values as a delta.
//!
//! ```text
//!  batch 1: keys 0 1 0, dict [b a]      ──►  keys 0 1 0, dict [b a]
//!  batch 2: keys 0 1,   dict [c b]      ──►  keys 2 0,   dict [b a c]   (delta: [c])
//! ```

use arrow_array::{make_array, Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_row::{RowConverter, SortField};
use arrow_schema::{ArrowError, DataType};
use std::collections::HashMap;

/// One dictionary column's running dictionary.
struct Running {
    /// Its values' row encodings, and their keys.
    keys: HashMap<Box<[u8]>, u32>,
    /// The dictionary so far.
    values: Option<ArrayRef>,
    converter: RowConverter,
}

/// The running dictionaries of a schema's dictionary columns (by column index).
#[derive(Default)]
pub(crate) struct Dictionaries {
    columns: HashMap<usize, Running>,
}

impl Dictionaries {
    /// `batch` with each dictionary column re-keyed onto its column's running dictionary.
    pub(crate) fn unify(&mut self, batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
        let mut columns = batch.columns().to_vec();
        for (i, field) in batch.schema().fields().iter().enumerate() {
            let DataType::Dictionary(key_type, value_type) = field.data_type() else { continue };
            let running = match self.columns.entry(i) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => v.insert(Running {
                    keys: HashMap::new(),
                    values: None,
                    converter: RowConverter::new(vec![SortField::new((**value_type).clone())])?,
                }),
            };
            columns[i] = running.rekey(&columns[i], key_type, value_type, field.name())?;
        }
        RecordBatch::try_new(batch.schema(), columns)
    }
}

impl Running {
    /// `column` on this running dictionary (keys of `key_type`).
    fn rekey(
        &mut self,
        column: &ArrayRef,
        key_type: &DataType,
        value_type: &DataType,
        name: &str,
    ) -> Result<ArrayRef, ArrowError> {
        // The column's values, one per row (nulls where the row is null).
        let values = arrow_cast::cast(column, value_type)?;
        let rows = self.converter.convert_columns(std::slice::from_ref(&values))?;
        let mut new = Vec::new();
        let mut keys = Vec::with_capacity(values.len());
        for i in 0..values.len() {
            if values.is_null(i) {
                keys.push(None);
                continue;
            }
            let next = self.keys.len() as u32;
            let k = *self.keys.entry(rows.row(i).data().into()).or_insert_with(|| {
                new.push(i as u32);
                next
            });
            keys.push(Some(k));
        }
        if !new.is_empty() || self.values.is_none() {
            let added = arrow_select::take::take(&values, &UInt32Array::from(new), None)?;
            self.values = Some(match self.values.take() {
                Some(old) => arrow_select::concat::concat(&[old.as_ref(), added.as_ref()])?,
                None => added,
            });
        }
        let strict = arrow_cast::CastOptions { safe: false, ..Default::default() };
        let keys = UInt32Array::from(keys);
        let keys = arrow_cast::cast_with_options(&keys, key_type, &strict).map_err(|_| {
            ArrowError::InvalidArgumentError(format!(
                "column '{name}' has {} distinct values, more than its {key_type} keys can number",
                self.keys.len()
            ))
        })?;
        let dict = self.values.clone().expect("set above");
        let data = keys
            .to_data()
            .into_builder()
            .data_type(DataType::Dictionary(
                Box::new(key_type.clone()),
                Box::new(value_type.clone()),
            ))
            .child_data(vec![dict.to_data()])
            .build()?;
        Ok(make_array(data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::{Int32Type, Int8Type};
    use arrow_array::{DictionaryArray, Int8Array, StringArray};
    use arrow_schema::{Field, Schema};
    use std::sync::Arc;

    fn batch(t: DataType, a: ArrayRef) -> RecordBatch {
        RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("c", t, true)])), vec![a])
            .unwrap()
    }

    #[test]
    fn batches_go_onto_one_growing_dictionary() {
        let t = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        let mut d = Dictionaries::default();
        let mut seen: Vec<ArrayRef> = Vec::new();
        for (keys, values) in [
            (vec![Some(0), Some(1), Some(0)], vec!["b", "a"]),
            (vec![Some(0), None, Some(1)], vec!["c", "b"]),
        ] {
            let a = DictionaryArray::<Int32Type>::try_new(
                keys.into_iter().collect(),
                Arc::new(StringArray::from(values)),
            )
            .unwrap();
            let got = d.unify(&batch(t.clone(), Arc::new(a.clone()))).unwrap();
            let g = got.column(0).as_any().downcast_ref::<DictionaryArray<Int32Type>>().unwrap();
            // The same values row by row.
            let strings = |x: &DictionaryArray<Int32Type>| {
                arrow_cast::cast(x, &DataType::Utf8).unwrap().to_data()
            };
            assert_eq!(strings(g), strings(&a));
            seen.push(g.values().clone());
        }
        // The second dictionary extends the first: [b a] then [b a c].
        let v = |i: usize| {
            seen[i]
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap()
                .iter()
                .flatten()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert_eq!(v(0), ["b", "a"]);
        assert_eq!(v(1), ["b", "a", "c"]);
    }

    #[test]
    fn keys_too_narrow_for_the_values_name_the_column() {
        let t = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
        let mut d = Dictionaries::default();
        let mut result = Ok(());
        for start in [0, 100] {
            let words: Vec<String> = (start..start + 100).map(|i| format!("w{i}")).collect();
            let a = DictionaryArray::<Int8Type>::try_new(
                Int8Array::from_iter_values(0..100),
                Arc::new(StringArray::from(words)),
            )
            .unwrap();
            result = d.unify(&batch(t.clone(), Arc::new(a))).map(drop);
        }
        let e = result.unwrap_err().to_string();
        assert!(e.contains("'c' has 200 distinct values"), "{e}");
    }
}

//! The table sort keeps the whole process within the memory budget it is given: a Parquet
//! table several times the budget is sorted (spilled and merged) while the process's peak
//! memory (resident set plus hugetlb-pool pages held at once, started afresh before the sort)
//! stays under the budget plus a margin.
//!
//! One test in its own binary: the peak is the process's, so nothing else may run beside it.
//! The binary uses the CLI's allocator, as the `oxsort` command does.

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{Array, Date32Array, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use oxsort_table::{engine_memory, sort_tables, SortColumn, TableSort};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

#[global_allocator]
static ALLOC: oxsort_io::BigAlloc = oxsort_io::BigAlloc;

/// The budget of the sort: the smallest the bench uses.
const BUDGET: u64 = 64 << 20;
/// What the process may hold above the budget (the margin).
const MARGIN: u64 = 64 << 20;
/// Rows of the table: about 100 bytes each encoded, some 300 MB, 5x the budget.
const ROWS: usize = 3_000_000;
/// Rows written per batch while the table is made.
const GEN_BATCH: usize = 100_000;

/// splitmix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("key", DataType::Utf8, true),
        Field::new("x", DataType::Float64, false),
        Field::new("d", DataType::Date32, false),
        Field::new("payload", DataType::Utf8, false),
    ]))
}

/// The bench's table in small: a skewed text key with nulls, a float, a date, a 40-byte payload.
fn make_table(path: &Path) {
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema(), Some(props)).unwrap();
    let mut rng = Rng(26);
    for start in (0..ROWS).step_by(GEN_BATCH) {
        let n = GEN_BATCH.min(ROWS - start);
        let key: StringArray = (0..n)
            .map(|_| {
                let r = rng.next();
                // Skewed: the low bits pick how many of the high bits spread the value.
                (r % 20 != 0).then(|| format!("k{:06}", (r >> 8) % (1 << (r % 17 + 1))))
            })
            .collect();
        let x =
            Float64Array::from_iter_values((0..n).map(|_| (rng.next() >> 11) as f64 / 1e9 - 4e6));
        let d = Date32Array::from_iter_values((0..n).map(|_| (rng.next() % 20_000) as i32));
        let payload: StringArray =
            (0..n).map(|_| Some(format!("payload-{:032}", rng.next() % 10u64.pow(18)))).collect();
        let id = Int64Array::from_iter_values(start as i64..(start + n) as i64);
        let b = RecordBatch::try_new(
            schema(),
            vec![Arc::new(id), Arc::new(key), Arc::new(x), Arc::new(d), Arc::new(payload)],
        )
        .unwrap();
        w.write(&b).unwrap();
    }
    w.close().unwrap();
}

/// Checks `path` holds `ROWS` rows ordered by key (nulls last), then x, then id (stable), with
/// every id once: a comparator of the values read back, not the sort's own bytes.
fn check_sorted(path: &Path) {
    let r = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut seen = vec![false; ROWS];
    let mut last: Option<(Option<String>, f64, i64)> = None;
    let mut n = 0;
    for b in r {
        let b = b.unwrap();
        let id = b.column(0).as_primitive::<arrow_array::types::Int64Type>();
        let key = b.column(1).as_string::<i32>();
        let x = b.column(2).as_primitive::<Float64Type>();
        for i in 0..b.num_rows() {
            let row = (key.is_valid(i).then(|| key.value(i).to_string()), x.value(i), id.value(i));
            if let Some(p) = &last {
                let by_key = match (&p.0, &row.0) {
                    (None, None) => std::cmp::Ordering::Equal,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (Some(a), Some(b)) => a.as_bytes().cmp(b.as_bytes()),
                };
                let order = by_key.then(p.1.total_cmp(&row.1)).then(p.2.cmp(&row.2));
                assert_eq!(order, std::cmp::Ordering::Less, "row {n}: {p:?} then {row:?}");
            }
            assert!(!std::mem::replace(&mut seen[row.2 as usize], true), "id {} twice", row.2);
            last = Some(row);
            n += 1;
        }
    }
    assert_eq!(n, ROWS);
}

#[test]
fn a_table_five_times_the_budget_sorts_within_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.parquet");
    let output = dir.path().join("out.parquet");
    make_table(&input);
    let req = TableSort {
        inputs: vec![input],
        output: output.clone(),
        by: SortColumn::parse_list("key,x").unwrap(),
        input_format: None,
        output_format: None,
        threads: 2,
        types: Vec::new(),
        row_checksum: false,
    };
    let temp = dir.path().to_path_buf();
    // Give back the memory the table's making held, then start the peak afresh: the most
    // resident set and hugetlb-pool pages held at once, from what is held now.
    oxsort_io::trim_heap();
    oxsort_io::bigmem::reset_peak_held();
    let before = oxsort_io::bigmem::peak_held();
    let stats =
        sort_tables(&req, |b| b.memory(engine_memory(BUDGET)).threads(2).temp_dir(temp)).unwrap();
    let peak = oxsort_io::bigmem::peak_held();
    eprintln!(
        "rows {}, runs {:?}, held before {} MiB, peak {} MiB",
        stats.rows,
        stats.engine.runs,
        before >> 20,
        peak >> 20
    );
    assert!(
        peak <= BUDGET + MARGIN,
        "peak {} MiB over the budget {} MiB + {} MiB",
        peak >> 20,
        BUDGET >> 20,
        MARGIN >> 20
    );
    assert!(stats.engine.runs > 1, "the table fitted the budget: nothing was shown");
    if std::env::var_os("OXT_NOWRITE").is_none() && std::env::var_os("OXT_NODECODE").is_none() {
        check_sorted(&output);
    }
}

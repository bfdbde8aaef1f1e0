//! Table sorts end to end against an independent oracle: the rows' values sorted by a plain
//! comparator written here (nulls and NaN placed by hand, ties by row number), over Parquet,
//! Arrow IPC and CSV, in one pass and with spills.

use std::cmp::Ordering;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use oxsort_table::{sort_tables, SortColumn, TableError, TableFormat, TableSort};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

/// The seed of the tables (`OXSORT_TEST_SEED` overrides it).
fn seed() -> u64 {
    let s = std::env::var("OXSORT_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(26);
    eprintln!("seed {s}");
    s
}

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
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One row as the oracle sees it.
#[derive(Clone, Debug)]
struct Row {
    id: i64,
    s: Option<String>,
    x: Option<f64>,
    k: Option<i32>,
    pad: String,
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
        Field::new("x", DataType::Float64, true),
        Field::new("k", DataType::Int32, true),
        Field::new("pad", DataType::Utf8, false),
    ]))
}

fn rows(n: usize, first: i64, rng: &mut Rng) -> Vec<Row> {
    let floats = [f64::NAN, -f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, 1.5, -2.25];
    (0..n)
        .map(|i| {
            let s = match rng.below(8) {
                0 => None,
                r => Some(format!(
                    "{}{}",
                    ["", "a", "ab", "b", "\u{e9}"][r as usize % 5],
                    rng.below(4)
                )),
            };
            let x = match rng.below(10) {
                0 => None,
                r if r < 5 => Some(floats[rng.below(floats.len() as u64) as usize]),
                _ => Some((rng.below(7) as f64) - 3.0),
            };
            let k = (rng.below(6) != 0).then(|| rng.below(5) as i32 - 2);
            let pad = "p".repeat(rng.below(40) as usize);
            Row { id: first + i as i64, s, x, k, pad }
        })
        .collect()
}

fn batch(rows: &[Row]) -> RecordBatch {
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.id))),
        Arc::new(StringArray::from_iter(rows.iter().map(|r| r.s.clone()))),
        Arc::new(Float64Array::from_iter(rows.iter().map(|r| r.x))),
        Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.k))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.pad.clone()))),
    ];
    RecordBatch::try_new(schema(), cols).unwrap()
}

fn write_parquet(path: &Path, rows: &[Row], group_rows: usize) {
    let props = WriterProperties::builder().set_max_row_group_size(group_rows).build();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema(), Some(props)).unwrap();
    for chunk in rows.chunks(1000) {
        w.write(&batch(chunk)).unwrap();
    }
    w.close().unwrap();
}

fn read_any(path: &Path, format: TableFormat) -> RecordBatch {
    let batches: Vec<RecordBatch> = match format {
        TableFormat::Parquet => {
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                File::open(path).unwrap(),
            )
            .unwrap()
            .build()
            .unwrap()
            .map(|b| b.unwrap())
            .collect()
        }
        TableFormat::ArrowFile => {
            arrow_ipc::reader::FileReader::try_new(File::open(path).unwrap(), None)
                .unwrap()
                .map(|b| b.unwrap())
                .collect()
        }
        TableFormat::ArrowStream => {
            arrow_ipc::reader::StreamReader::try_new(File::open(path).unwrap(), None)
                .unwrap()
                .map(|b| b.unwrap())
                .collect()
        }
        TableFormat::Csv | TableFormat::Tsv => {
            let delim = if format == TableFormat::Tsv { b'\t' } else { b',' };
            let f = arrow_csv::reader::Format::default().with_header(true).with_delimiter(delim);
            let (s, _) = f.infer_schema(File::open(path).unwrap(), None).unwrap();
            arrow_csv::ReaderBuilder::new(Arc::new(s))
                .with_format(f)
                .build(File::open(path).unwrap())
                .unwrap()
                .map(|b| b.unwrap())
                .collect()
        }
    };
    let schema = batches.first().map(|b| b.schema()).unwrap_or_else(schema);
    arrow_select::concat::concat_batches(&schema, &batches).unwrap()
}

/// A value's order with nulls placed as asked and the direction applied to values only.
fn place<T>(
    a: &Option<T>,
    b: &Option<T>,
    desc: bool,
    nulls_first: bool,
    cmp: impl Fn(&T, &T) -> Ordering,
) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => {
            if nulls_first {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (Some(_), None) => {
            if nulls_first {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Some(x), Some(y)) => {
            let o = cmp(x, y);
            if desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

/// Floats as numbers (`-0.0 == 0.0`), every NaN equal and after every number.
fn float_cmp(a: &f64, b: &f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(b).unwrap(),
    }
}

fn oracle(rows: &[Row], by: &[SortColumn]) -> Vec<i64> {
    let mut v: Vec<&Row> = rows.iter().collect();
    v.sort_by(|a, b| {
        for c in by {
            let o = match c.name.as_str() {
                "s" => place(&a.s, &b.s, c.descending, c.nulls_first, |x, y| {
                    x.as_bytes().cmp(y.as_bytes())
                }),
                "x" => place(&a.x, &b.x, c.descending, c.nulls_first, float_cmp),
                "k" => place(&a.k, &b.k, c.descending, c.nulls_first, |x, y| x.cmp(y)),
                "pad" => {
                    place(&Some(&a.pad), &Some(&b.pad), c.descending, c.nulls_first, |x, y| {
                        x.cmp(y)
                    })
                }
                _ => unreachable!(),
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal // a stable sort keeps the input order
    });
    v.iter().map(|r| r.id).collect()
}

fn request(inputs: Vec<PathBuf>, output: PathBuf, by: &str) -> TableSort {
    TableSort {
        inputs,
        output,
        by: SortColumn::parse_list(by).unwrap(),
        input_format: None,
        output_format: None,
        threads: 2,
        types: Vec::new(),
        row_checksum: false,
    }
}

/// The names in `dir` (to find leftovers).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn check_output(path: &Path, format: TableFormat, rows: &[Row], by: &str) {
    let got = read_any(path, format);
    let ids: Vec<i64> = got.column(0).as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(ids, oracle(rows, &SortColumn::parse_list(by).unwrap()), "order by {by}");
    // The other columns ride with their rows, bits and all.
    let by_id: std::collections::HashMap<i64, &Row> = rows.iter().map(|r| (r.id, r)).collect();
    let x = got.column(2).as_primitive::<Float64Type>();
    let k = got.column(3).as_primitive::<Int32Type>();
    let s = got.column(1).as_string::<i32>();
    for (i, id) in ids.iter().enumerate() {
        let r = by_id[id];
        assert_eq!(r.x.map(f64::to_bits), x.is_valid(i).then(|| x.value(i).to_bits()), "x of {id}");
        assert_eq!(r.k, k.is_valid(i).then(|| k.value(i)));
        assert_eq!(r.s.as_deref(), s.is_valid(i).then(|| s.value(i)));
    }
}

#[test]
fn parquet_sorts_by_every_combination_of_options_in_one_pass() {
    let mut rng = Rng(seed());
    let dir = tempfile::tempdir().unwrap();
    let rows = rows(20_000, 0, &mut rng);
    let input = dir.path().join("in.parquet");
    write_parquet(&input, &rows, 3_000);
    for by in
        ["s", "x:desc", "s:nulls_first,x", "k:desc:nulls_first,s:desc,x:nulls_first", "x,k:desc"]
    {
        let out = dir.path().join("out.parquet");
        let stats =
            sort_tables(&request(vec![input.clone()], out.clone(), by), |b| b.memory(256 << 20))
                .unwrap();
        assert_eq!(stats.rows, rows.len() as u64);
        assert_eq!(stats.engine.passes, 1);
        check_output(&out, TableFormat::Parquet, &rows, by);
        // The schema is kept, nullability and all.
        let meta = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            File::open(&out).unwrap(),
        )
        .unwrap();
        assert_eq!(meta.schema().fields(), schema().fields());
    }
    assert_eq!(names(dir.path()), vec!["in.parquet", "out.parquet"]);
}

#[test]
fn a_table_larger_than_the_budget_spills_and_merges() {
    let mut rng = Rng(seed() + 1);
    let dir = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let rows = rows(400_000, 0, &mut rng);
    let input = dir.path().join("in.parquet");
    write_parquet(&input, &rows, 50_000);
    let out = dir.path().join("out.arrow");
    let by = "s:desc,x";
    let stats = sort_tables(&request(vec![input], out.clone(), by), |b| {
        b.memory(8 << 20).temp_dir(temp.path().to_path_buf())
    })
    .unwrap();
    assert_eq!(stats.engine.passes, 2, "{:?}", stats.engine.runs);
    assert!(stats.engine.runs > 1);
    check_output(&out, TableFormat::ArrowFile, &rows, by);
    assert!(names(temp.path()).is_empty(), "{:?}", names(temp.path()));
}

#[test]
fn several_inputs_of_several_formats_are_one_table_and_ties_keep_their_order() {
    let mut rng = Rng(seed() + 2);
    let dir = tempfile::tempdir().unwrap();
    let a = rows(3_000, 0, &mut rng);
    let b = rows(2_000, 3_000, &mut rng);
    let pa = dir.path().join("a.parquet");
    write_parquet(&pa, &a, 700);
    let pb = dir.path().join("b.parquet");
    write_parquet(&pb, &b, 2_000);
    let all: Vec<Row> = a.iter().chain(&b).cloned().collect();
    // k has five values: most rows tie, and must keep their input order across the files.
    for (out, format) in
        [("o.arrows", TableFormat::ArrowStream), ("o.parquet", TableFormat::Parquet)]
    {
        let out = dir.path().join(out);
        sort_tables(&request(vec![pa.clone(), pb.clone()], out.clone(), "k"), |b| b).unwrap();
        check_output(&out, format, &all, "k");
    }
}

#[test]
fn csv_and_tsv_sort_with_their_header() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("in.csv");
    std::fs::write(&csv, "name,n,when\nb,2,2024-01-02\na,10,2023-05-06\n,3,\nb,1,2020-01-01\n")
        .unwrap();
    let out = dir.path().join("out.tsv");
    sort_tables(&request(vec![csv], out.clone(), "name,n:desc"), |b| b).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text,
        "name\tn\twhen\na\t10\t2023-05-06\nb\t2\t2024-01-02\nb\t1\t2020-01-01\n\t3\t\n"
    );
}

#[test]
fn errors_name_the_file_and_the_problem_and_leave_nothing() {
    let mut rng = Rng(seed() + 3);
    let dir = tempfile::tempdir().unwrap();
    let rows = rows(5_000, 0, &mut rng);
    let input = dir.path().join("in.parquet");
    write_parquet(&input, &rows, 1_000);
    let out = dir.path().join("out.parquet");
    let run = |inputs: Vec<PathBuf>, by: &str| {
        sort_tables(&request(inputs, out.clone(), by), |b| b).unwrap_err().to_string()
    };

    let e = run(vec![input.clone()], "nope");
    assert!(
        e.contains("in.parquet") && e.contains("'nope'") && e.contains("id, s, x, k, pad"),
        "{e}"
    );

    // A schema that differs: its first difference is named.
    let other = dir.path().join("other.csv");
    std::fs::write(&other, "id,s\n1,a\n").unwrap();
    let e = run(vec![input.clone(), other.clone()], "s");
    assert!(
        e.contains("other.csv")
            && e.contains("in.parquet")
            && e.contains("column 'id' is nullable, not non-nullable"),
        "{e}"
    );

    // A corrupt page: the file, the row group and the column.
    let mut bytes = std::fs::read(&input).unwrap();
    let meta =
        parquet::file::reader::SerializedFileReader::new(File::open(&input).unwrap()).unwrap();
    let col = parquet::file::reader::FileReader::metadata(&meta).row_group(2).column(4).clone();
    let (start, len) = col.byte_range();
    for b in &mut bytes[(start + len / 2) as usize..(start + len / 2 + 64) as usize] {
        *b ^= 0x5a;
    }
    let bad = dir.path().join("bad.parquet");
    std::fs::write(&bad, &bytes).unwrap();
    let e = sort_tables(&request(vec![bad], out.clone(), "s"), |b| b).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, TableError::Corrupt { row_group: 2, .. }), "{msg}");
    assert!(msg.contains("bad.parquet") && msg.contains("column 'pad'"), "{msg}");

    // A key of a type with no order here.
    let list = DataType::List(Arc::new(Field::new("item", DataType::Int32, true)));
    let s = Arc::new(Schema::new(vec![Field::new("l", list, true)]));
    let lp = dir.path().join("list.arrow");
    let mut w = arrow_ipc::writer::FileWriter::try_new(File::create(&lp).unwrap(), &s).unwrap();
    w.write(&RecordBatch::new_empty(s.clone())).unwrap();
    w.finish().unwrap();
    let e = run(vec![lp], "l");
    assert!(e.contains("'l'") && e.contains("List"), "{e}");

    let e = run(vec![dir.path().join("in.xyz")], "s");
    assert!(e.contains("in.xyz"), "{e}");
    let e = run(vec![dir.path().join("missing.parquet")], "s");
    assert!(e.contains("missing.parquet"), "{e}");

    // Nothing under the output's name, no temporary left.
    assert!(!out.exists());
    let mut left = names(dir.path());
    left.retain(|n| n.starts_with('.'));
    assert!(left.is_empty(), "{left:?}");
}

/// A Parquet output keeps what `ArrowWriter` keeps: the schema's metadata, the fields'
/// metadata, and types Parquet alone would not tell (a timestamp's time zone, a dictionary).
#[test]
fn parquet_output_keeps_the_arrow_schema_and_its_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let ts = DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, Some("+02:00".into()));
    let dict = DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::Utf8));
    let field = Field::new("k", DataType::Int32, false)
        .with_metadata([("unit".to_string(), "m".to_string())].into());
    let schema = Arc::new(
        Schema::new(vec![field, Field::new("t", ts, true), Field::new("d", dict, true)])
            .with_metadata([("origin".to_string(), "a test".to_string())].into()),
    );
    let n = 5000;
    let k = Int32Array::from_iter_values((0..n).map(|i| (i * 7919) % 1000));
    let t = arrow_array::TimestampMillisecondArray::from_iter_values((0..n).map(i64::from))
        .with_timezone("+02:00");
    let d: arrow_array::DictionaryArray<arrow_array::types::Int16Type> =
        (0..n).map(|i| ["a", "b", "c"][i as usize % 3]).collect();
    let b =
        RecordBatch::try_new(schema.clone(), vec![Arc::new(k), Arc::new(t), Arc::new(d)]).unwrap();
    let input = dir.path().join("in.parquet");
    let mut w = ArrowWriter::try_new(File::create(&input).unwrap(), schema.clone(), None).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    let output = dir.path().join("out.parquet");
    let stats = sort_tables(&request(vec![input], output.clone(), "k"), |b| b).unwrap();
    assert_eq!(stats.rows, n as u64);
    // The file's schema (a batch read back carries its fields, not the schema's metadata).
    let file = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        File::open(&output).unwrap(),
    )
    .unwrap();
    assert_eq!(file.schema(), &schema);
    let got = read_any(&output, TableFormat::Parquet);
    let k = got.column(0).as_primitive::<Int32Type>();
    assert!(k.values().windows(2).all(|w| w[0] <= w[1]));
}

/// `explain` plans a table sort without sorting: the rows the Parquet metadata give, their
/// encoded size estimated from the first batch within a tenth of what the sort then sorts,
/// the engine's plan made for that size, and nothing written.
#[test]
fn explain_estimates_the_rows_the_engine_will_sort() {
    let mut rng = Rng(seed() + 7);
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
    let (ra, rb) = (rows(30_000, 0, &mut rng), rows(20_000, 30_000, &mut rng));
    write_parquet(&a, &ra, 8_000);
    write_parquet(&b, &rb, 8_000);
    let out = dir.path().join("out.parquet");
    let req = request(vec![a, b], out.clone(), "s:desc,x");
    let e = oxsort_table::explain_tables(&req, |b| b.memory(16 << 20)).unwrap();
    assert_eq!(e.rows, Some(50_000));
    assert!(e.sampled_rows > 0);
    assert_eq!(e.keys, ["s descending, nulls last", "x ascending, nulls last"]);
    assert_eq!(e.schema.len(), schema().fields().len());
    assert_eq!(e.engine.inputs[0].expected, e.encoded_bytes);
    assert_eq!(names(dir.path()), vec!["a.parquet", "b.parquet"], "explain wrote something");
    let text = e.to_text();
    assert!(text.contains("50000 rows of about"), "{text}");
    assert!(text.contains("expected"), "{text}");

    let stats = sort_tables(&req, |b| b.memory(16 << 20)).unwrap();
    let (planned, sorted) = (e.encoded_bytes.unwrap() as f64, stats.engine.bytes as f64);
    assert!((planned / sorted - 1.0).abs() < 0.1, "planned {planned} bytes, sorted {sorted}");
}

/// Column types given for a CSV in place of those inferred: codes with leading zeros sort as
/// text (and keep their zeros) where inferred integers would not; a declared type that is
/// not in the header, on a Parquet input, or unknown, is refused with its reason.
#[test]
fn csv_column_types_given_replace_the_inferred_ones() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("codes.csv");
    std::fs::write(&input, "code,n\n10,a\n9,b\n007,c\n010,d\n").unwrap();
    let out = dir.path().join("out.csv");
    let mut req = request(vec![input.clone()], out.clone(), "code");
    sort_tables(&req, |b| b.memory(64 << 20)).unwrap();
    // Inferred: integers, 7 < 9 < 10 = 10 (ties in input order), zeros dropped.
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "code,n\n7,c\n9,b\n10,a\n10,d\n");
    req.types = vec![oxsort_table::ColumnType::parse("code=string").unwrap()];
    sort_tables(&req, |b| b.memory(64 << 20)).unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "code,n\n007,c\n010,d\n10,a\n9,b\n");

    req.types = vec![oxsort_table::ColumnType::parse("cod=string").unwrap()];
    let e = sort_tables(&req, |b| b.memory(64 << 20)).unwrap_err().to_string();
    assert!(e.contains("no column 'cod'") && e.contains("code, n"), "{e}");
    let parquet = dir.path().join("t.parquet");
    write_parquet(&parquet, &rows(10, 0, &mut Rng(1)), 10);
    req.inputs = vec![parquet];
    req.types = vec![oxsort_table::ColumnType::parse("s=string").unwrap()];
    let e = sort_tables(&req, |b| b.memory(64 << 20)).unwrap_err().to_string();
    assert!(e.contains("a parquet input has its own"), "{e}");
    let e = oxsort_table::ColumnType::parse("code=numeric").unwrap_err().to_string();
    assert!(e.contains("'numeric' is not a column type"), "{e}");
    let d = oxsort_table::ColumnType::parse("a=Decimal128(10, 2)").unwrap();
    assert_eq!(d.data_type, arrow_schema::DataType::Decimal128(10, 2));
}

/// A CSV of a header alone sorts to its header (its columns are text, as a column of nulls
/// is); an empty file has no columns and is refused saying so.
#[test]
fn a_csv_of_a_header_alone_and_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let (header, empty) = (dir.path().join("h.csv"), dir.path().join("e.csv"));
    std::fs::write(&header, "k,v\n").unwrap();
    std::fs::write(&empty, "").unwrap();
    let out = dir.path().join("out.csv");
    let stats = sort_tables(&request(vec![header], out.clone(), "k,v"), |b| b.memory(64 << 20));
    assert_eq!(stats.unwrap().rows, 0);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "k,v\n");
    let e = sort_tables(&request(vec![empty], out.clone(), "k"), |b| b.memory(64 << 20));
    let e = e.unwrap_err().to_string();
    assert!(e.contains("e.csv") && e.contains("no header row"), "{e}");
}

#[test]
fn a_parquet_file_of_no_row_groups_sorts_alone_and_beside_others() {
    // A Parquet file written with no rows has no row group at all (a shard of a split that got
    // nothing): no reader lane has work, and the feeder must not wait for one.
    let mut rng = Rng(seed() + 5);
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.parquet");
    write_parquet(&empty, &[], 1000);
    let rows = rows(3_000, 0, &mut rng);
    let full = dir.path().join("full.parquet");
    write_parquet(&full, &rows, 700);
    let out = dir.path().join("out.parquet");
    for inputs in [vec![empty.clone()], vec![empty.clone(), full.clone(), empty.clone()]] {
        let stats =
            sort_tables(&request(inputs.clone(), out.clone(), "s,x"), |b| b.memory(64 << 20))
                .unwrap();
        let want = if inputs.len() == 1 { Vec::new() } else { rows.clone() };
        assert_eq!(stats.rows, want.len() as u64);
        check_output(&out, TableFormat::Parquet, &want, "s,x");
    }
}

#[test]
fn a_killed_sorts_output_temporary_is_reclaimed_by_the_next_sort() {
    let mut rng = Rng(seed() + 7);
    let dir = tempfile::tempdir().unwrap();
    let rows = rows(2_000, 0, &mut rng);
    let input = dir.path().join("in.parquet");
    write_parquet(&input, &rows, 500);
    // What a sort killed between the engine's end and the rename leaves: its output's
    // temporary, whose lock died with it. A live sort's (locked) must stay.
    let dead = dir.path().join(".out.parquet.oxsort-4000001.tmp");
    std::fs::write(&dead, b"half a parquet file").unwrap();
    let live = dir.path().join(".out.parquet.oxsort-4000002.tmp");
    let held = File::create(&live).unwrap();
    // SAFETY: flock only reads the descriptor, which `held` keeps open.
    assert_eq!(unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&held), libc::LOCK_EX) }, 0);
    let out = dir.path().join("out.parquet");
    let stats =
        sort_tables(&request(vec![input], out.clone(), "s"), |b| b.memory(64 << 20)).unwrap();
    check_output(&out, TableFormat::Parquet, &rows, "s");
    let reclaimed: Vec<&String> = stats.engine.reclaimed.iter().flat_map(|r| &r.paths).collect();
    assert_eq!(reclaimed, vec![&dead.display().to_string()]);
    assert_eq!(
        names(dir.path()),
        vec![".out.parquet.oxsort-4000002.tmp", "in.parquet", "out.parquet"]
    );
}

#[test]
fn rows_checksums_add_up_whatever_the_order_format_and_split() {
    let mut rng = Rng(seed() + 8);
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let rows = rows(5_000, 0, &mut rng);
    write_parquet(&p("in.parquet"), &rows, 700);
    let sum = |inputs: Vec<PathBuf>, out: PathBuf| {
        let mut req = request(inputs, out, "k:desc,s");
        req.row_checksum = true;
        sort_tables(&req, |b| b.memory(64 << 20)).unwrap().rows_checksum.unwrap()
    };
    let whole = sum(vec![p("in.parquet")], p("a.arrow"));
    // The sorted rows, read back from another format and sorted again: the same sum.
    assert_eq!(sum(vec![p("a.arrow")], p("b.parquet")), whole);
    // The rows in two files, the later half first: their sums add up to the whole's.
    let half = rows.len() / 2;
    write_parquet(&p("lo.parquet"), &rows[..half], 700);
    write_parquet(&p("hi.parquet"), &rows[half..], 700);
    let lo = sum(vec![p("lo.parquet")], p("lo.arrow"));
    let hi = sum(vec![p("hi.parquet")], p("hi.arrow"));
    assert_eq!(lo.wrapping_add(hi), whole);
    assert_eq!(sum(vec![p("hi.parquet"), p("lo.parquet")], p("c.arrow")), whole);
    // One value changed: another sum.
    let mut changed = rows.clone();
    changed[17].x = Some(changed[17].x.unwrap_or(0.0) + 1.0);
    write_parquet(&p("changed.parquet"), &changed, 700);
    assert_ne!(sum(vec![p("changed.parquet")], p("d.arrow")), whole);
    // Not asked for: none.
    let stats = sort_tables(&request(vec![p("in.parquet")], p("e.arrow"), "s"), |b| b).unwrap();
    assert_eq!(stats.rows_checksum, None);
}

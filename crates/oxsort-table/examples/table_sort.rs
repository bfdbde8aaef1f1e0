//! A table sort alone, for profiling: `table_sort IN OUT BY MEMORY_MIB [TEMP]`.

#[global_allocator]
static ALLOC: oxsort_io::BigAlloc = oxsort_io::BigAlloc;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let req = oxsort_table::TableSort {
        inputs: vec![a[1].clone().into()],
        output: a[2].clone().into(),
        by: oxsort_table::SortColumn::parse_list(&a[3]).unwrap(),
        input_format: None,
        output_format: None,
        threads: 2,
        types: Vec::new(),
        row_checksum: false,
    };
    let memory = a[4].parse::<u64>().unwrap() << 20;
    let temp = a.get(5).cloned().unwrap_or_else(|| ".".into());
    let t = std::time::Instant::now();
    let stats = oxsort_table::sort_tables(&req, |b| {
        b.memory(oxsort_table::engine_memory(memory)).threads(2).temp_dir(temp)
    })
    .unwrap();
    eprintln!(
        "{} rows, {} runs, {:.2} s",
        stats.rows,
        stats.engine.runs,
        t.elapsed().as_secs_f64()
    );
}

//! The engine against an oracle: every pattern × size straddling chunk, part and run
//! boundaries, through every path (one pass, two passes, multi-level merge, several temp
//! directories, io_uring on and off, buffered fallback), then error paths with injected faults.
//! After every sort, no temp file or uncommitted output remains.

use std::path::Path;
use std::sync::Arc;

use oxsort_engine::{plan, sort, EngineError, Input, Output, Passes, SortConfig, SortSpec};
use oxsort_format::{FieldType, KeyField, KeySpec, RecordLayout};
use oxsort_io::{FaultPlan, IoOptions};
use oxsort_testkit::{
    least_budget, leftovers, make_records, oracle_sort, seed, setups, EngineTester, Pattern, Rng,
};

/// Records per chunk in the tester's setups: small, so a few thousand records cross chunk,
/// part and run boundaries.
const CHUNK_LOG2: u32 = 4;

/// A budget small enough that a few thousand records need two passes: the least budget the
/// plan accepts for 100-byte records in chunks of 16.
fn tiny() -> u64 {
    let cfg = SortConfig::builder(vec![Input::Stdin], Output::Stdout)
        .memory(1)
        .chunk_records_log2(CHUNK_LOG2)
        .build()
        .unwrap();
    least_budget(&cfg)
}

fn assert_clean(dirs: &[&Path]) {
    for d in dirs {
        let left = leftovers(d);
        assert!(left.is_empty(), "left behind in {}: {left:?}", d.display());
    }
}

#[test]
fn pattern_by_size_matrix_matches_the_oracle_on_every_path() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let spec = SortSpec::default();
    // Sizes around chunk (16 records) and part boundaries; the largest make several runs at the
    // least budget (thousands of records a run).
    let sizes = [0usize, 1, 2, 15, 16, 17, 33, 511, 1000, 2049, 5003, 12007];
    for s in setups(CHUNK_LOG2) {
        let t = EngineTester::new();
        for pattern in Pattern::ALL {
            for &n in &sizes {
                let data = make_records(pattern, n, 100, &mut rng);
                let (got, stats) = t
                    .run(&s, &spec, &data)
                    .unwrap_or_else(|e| panic!("{} {pattern:?} n={n}: {e}", s.name));
                let want = oracle_sort(&data, 100, 0, 10);
                assert!(got == want, "{} {pattern:?} n={n} (seed {seed}): output differs", s.name);
                assert_eq!(stats.records, n as u64);
                if s.two_pass() && n >= 12007 {
                    assert_eq!(stats.passes, 2, "{} n={n} should spill", s.name);
                    if s.max_fan_in == Some(2) {
                        assert!(
                            stats.merge_levels >= 2,
                            "{}: {} levels",
                            s.name,
                            stats.merge_levels
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn equal_keys_keep_input_order_across_runs_and_merges() {
    let mut rng = Rng::new(seed());
    let data = make_records(Pattern::FewDistinct, 4000, 100, &mut rng);
    for s in setups(CHUNK_LOG2) {
        let (got, _) = EngineTester::new().run(&s, &SortSpec::default(), &data).unwrap();
        for pair in got.chunks_exact(100).collect::<Vec<_>>().windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a[..10] == b[..10] {
                assert!(a[10..18] < b[10..18], "{}: equal keys out of input order", s.name);
            }
        }
    }
}

/// Files `in0.dat`, `in1.dat`, ... in `dir` of `counts` random `size`-byte records each: their
/// bytes, and the files as inputs.
fn write_inputs(
    dir: &Path,
    counts: &[usize],
    size: usize,
    rng: &mut Rng,
) -> (Vec<Vec<u8>>, Vec<Input>) {
    let parts: Vec<Vec<u8>> =
        counts.iter().map(|&n| make_records(Pattern::Random, n, size, rng)).collect();
    let inputs = parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = dir.join(format!("in{i}.dat"));
            std::fs::write(&path, p).unwrap();
            Input::Path(path)
        })
        .collect();
    (parts, inputs)
}

#[test]
fn several_inputs_are_concatenated_and_output_may_be_an_input() {
    let _serial = oxsort_testkit::serial();
    let mut rng = Rng::new(seed());
    let root = tempfile::tempdir().unwrap();
    let (parts, inputs) = write_inputs(root.path(), &[7, 0, 300, 33], 100, &mut rng);
    let target = root.path().join("in0.dat");
    let cfg = SortConfig::builder(inputs, Output::Path(target.clone()))
        .memory(tiny())
        .chunk_records_log2(4)
        .build()
        .unwrap();
    sort(&cfg).unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), oracle_sort(&parts.concat(), 100, 0, 10));
    assert_clean(&[root.path()]);
}

#[test]
fn other_record_sizes_and_key_positions() {
    let _serial = oxsort_testkit::serial();
    let mut rng = Rng::new(seed());
    let root = tempfile::tempdir().unwrap();
    for (size, off, len) in [(20usize, 0usize, 10usize), (37, 20, 4), (4096, 100, 10), (24, 18, 1)]
    {
        let data = make_records(Pattern::Random, 777, size, &mut rng);
        let input = root.path().join("in.dat");
        let output = root.path().join("out.dat");
        std::fs::write(&input, &data).unwrap();
        for memory in [64 << 20, tiny() + 1_000_000] {
            let cfg =
                SortConfig::builder(vec![Input::Path(input.clone())], Output::Path(output.clone()))
                    .spec(SortSpec {
                        key: Some(
                            KeySpec::new(vec![KeyField::bytes(off, len, FieldType::Char, false)])
                                .unwrap(),
                        ),
                        ..SortSpec::with_layout(RecordLayout::Fixed(size))
                    })
                    .memory(memory)
                    .chunk_records_log2(5)
                    .build()
                    .unwrap();
            sort(&cfg).unwrap_or_else(|e| panic!("size {size}: {e}"));
            assert_eq!(
                std::fs::read(&output).unwrap(),
                oracle_sort(&data, size, off, len),
                "size {size}"
            );
        }
    }
}

#[test]
fn a_one_pass_sort_maps_regular_files_and_reads_an_input_that_is_the_output() {
    let _serial = oxsort_testkit::serial();
    let mut rng = Rng::new(seed());
    let root = tempfile::tempdir().unwrap();
    // 128-byte records in chunks of 32: a chunk is one 4 KiB page, so inputs may be mapped;
    // lengths that end inside a page.
    let (parts, inputs) = write_inputs(root.path(), &[777, 1, 1000, 33], 128, &mut rng);
    let want = oracle_sort(&parts.concat(), 128, 0, 10);
    let mk = |inputs: Vec<Input>, out: &Path, memory: u64| {
        SortConfig::builder(inputs, Output::Path(out.to_path_buf()))
            .spec(SortSpec::with_layout(RecordLayout::Fixed(128)))
            .memory(memory)
            .chunk_records_log2(5)
            .build()
            .unwrap()
    };
    let out = root.path().join("out.dat");
    let one = mk(inputs.clone(), &out, 64 << 20);
    let p = plan(&one).unwrap();
    assert!(matches!(p.passes, Passes::One) && p.input_mapped, "{p:?}");
    assert!(p.to_text().contains("mapped"), "{}", p.to_text());
    sort(&one).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), want);
    // Two passes read their loads (the buffers are reused from load to load).
    let two = mk(inputs.clone(), &out, tiny());
    let p = plan(&two).unwrap();
    assert!(matches!(p.passes, Passes::Two { .. }) && !p.input_mapped, "{p:?}");
    sort(&two).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), want);
    // Written in place over an input: that input is read, never mapped.
    let target = root.path().join("in0.dat");
    let in_place = mk(inputs, &target, 64 << 20);
    assert!(!plan(&in_place).unwrap().input_mapped);
    sort(&in_place).unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), want);
    assert_clean(&[root.path()]);
}

#[test]
fn plan_reports_passes_and_refuses_what_cannot_work() {
    let _serial = oxsort_testkit::serial();
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("in.dat");
    std::fs::write(&input, vec![1u8; 100 * 3000]).unwrap();
    let out = root.path().join("out.dat");
    let mk = |m: u64| {
        SortConfig::builder(vec![Input::Path(input.clone())], Output::Path(out.clone()))
            .memory(m)
            .chunk_records_log2(4)
            .build()
            .unwrap()
    };
    assert!(matches!(plan(&mk(64 << 20)).unwrap().passes, Passes::One));
    let two = plan(&mk(tiny())).unwrap();
    assert!(matches!(two.passes, Passes::Two { .. }), "{two:?}");
    assert!(two.to_text().contains("two:"));
    match sort(&mk(100_000)) {
        Err(EngineError::MemoryTooSmall { needed, .. }) => assert!(needed > 100_000),
        other => panic!("expected MemoryTooSmall, got {other:?}"),
    }

    // A partial record names the file, the leftover and where it starts.
    std::fs::write(&input, vec![1u8; 1050]).unwrap();
    let e = sort(&mk(64 << 20)).unwrap_err().to_string();
    assert!(
        e.contains("in.dat") && e.contains("50 bytes left over") && e.contains("offset 1000"),
        "{e}"
    );
    // A missing input and a missing output directory are found before anything is written.
    let missing = SortConfig::builder(
        vec![Input::Path(root.path().join("nope.dat"))],
        Output::Path(out.clone()),
    )
    .build()
    .unwrap();
    assert!(sort(&missing).unwrap_err().to_string().contains("nope.dat"));
    std::fs::write(&input, vec![1u8; 1000]).unwrap();
    let bad_out = SortConfig::builder(
        vec![Input::Path(input.clone())],
        Output::Path(root.path().join("no/such/out.dat")),
    )
    .build()
    .unwrap();
    assert!(sort(&bad_out).is_err());
    assert!(!out.exists());
    assert_clean(&[root.path()]);
}

#[test]
fn empty_input_sorts_to_an_empty_output() {
    let _serial = oxsort_testkit::serial();
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("empty.dat");
    std::fs::write(&input, b"").unwrap();
    let out = root.path().join("out.dat");
    let cfg =
        SortConfig::builder(vec![Input::Path(input)], Output::Path(out.clone())).build().unwrap();
    let st = sort(&cfg).unwrap();
    assert_eq!(st.records, 0);
    assert_eq!(std::fs::read(&out).unwrap().len(), 0);
}

#[test]
fn a_failed_read_or_write_loses_nothing() {
    let _serial = oxsort_testkit::serial();
    let mut rng = Rng::new(seed());
    let data = make_records(Pattern::Random, 3000, 100, &mut rng);
    let mut failures = 0;
    for (memory, what) in [(64u64 << 20, "one pass"), (tiny(), "two passes")] {
        for fail_at in [1u64, 2, 5, 40] {
            for (plan_of, errno) in [
                (FaultPlan::fail_read as fn(u64, i32) -> FaultPlan, libc_eio()),
                (FaultPlan::fail_write, libc_eio()),
                (FaultPlan::fail_write, libc_enospc()),
            ] {
                let root = tempfile::tempdir().unwrap();
                let input = root.path().join("in.dat");
                let out = root.path().join("out.dat");
                std::fs::write(&input, &data).unwrap();
                let faults = Arc::new(plan_of(fail_at, errno));
                let cfg = SortConfig::builder(
                    vec![Input::Path(input.clone())],
                    Output::Path(out.clone()),
                )
                .memory(memory)
                .chunk_records_log2(4)
                .io(IoOptions { faults: Some(faults.clone()), ..IoOptions::default() })
                .build()
                .unwrap();
                match sort(&cfg) {
                    Err(e) => {
                        failures += 1;
                        let msg = e.to_string();
                        assert!(
                            msg.contains(root.path().to_str().unwrap()),
                            "{what}: error names no path: {msg}"
                        );
                        assert!(!out.exists(), "{what}: output exists after {msg}");
                    }
                    // The fault may be past the last operation of a small sort: then it must be right.
                    Ok(_) => {
                        assert_eq!(std::fs::read(&out).unwrap(), oracle_sort(&data, 100, 0, 10))
                    }
                }
                assert_eq!(std::fs::read(&input).unwrap(), data, "{what}: input changed");
                assert_clean(&[root.path()]);
            }
        }
    }
    // Each sort makes dozens of transfers: nearly every injected fault must have fired.
    assert!(failures >= 20, "only {failures} of 24 injected faults failed the sort");
}

fn libc_eio() -> i32 {
    5
}
fn libc_enospc() -> i32 {
    28
}

#[test]
fn a_cancelled_sort_stops_in_every_phase_and_loses_nothing() {
    let _serial = oxsort_testkit::serial();
    use oxsort_engine::Phase;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let mut rng = Rng::new(seed());
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("in.dat");
    std::fs::write(&input, make_records(Pattern::Random, 20_000, 100, &mut rng)).unwrap();
    let all = setups(CHUNK_LOG2);
    let (one, two) = (&all[0], &all[3]);
    assert!(!one.two_pass() && two.two_pass());
    // Every phase each plan reports (two passes write the output from the merge).
    for (setup, phase) in
        [(one, Phase::Input), (one, Phase::Output), (two, Phase::Input), (two, Phase::Merge)]
    {
        let t = EngineTester::new();
        let out = t.dir().join("out.dat");
        let flag = Arc::new(AtomicBool::new(false));
        let events = Arc::new(AtomicU64::new(0));
        let (f, ev) = (flag.clone(), events.clone());
        let cfg =
            t.config(setup, &SortSpec::default(), vec![Input::Path(input.clone())], &out).unwrap();
        let cfg = SortConfig::builder(vec![Input::Path(input.clone())], Output::Path(out.clone()))
            .memory(cfg.memory())
            .threads(2)
            .chunk_records_log2(CHUNK_LOG2)
            .temp_dir(t.dir())
            .cancel(flag.clone())
            .progress(move |p| {
                if p.phase == phase {
                    ev.fetch_add(1, Ordering::Relaxed);
                    f.store(true, Ordering::Relaxed);
                }
            })
            .build()
            .unwrap();
        let r = sort(&cfg);
        assert!(events.load(Ordering::Relaxed) > 0, "{}: no {phase:?} event", setup.name);
        assert!(
            matches!(r, Err(EngineError::Interrupted)),
            "{}: cancelled in {phase:?}: {r:?}",
            setup.name
        );
        assert!(!out.exists(), "{}: output left after a cancel", setup.name);
        t.assert_clean(setup);
    }
}

/// A caller that checks the output itself (`checked_by_caller`) gets the same output, in one
/// pass and two, with the records counted and checked in number, and no checksum of the
/// engine's own; a unique sort, whose dropped duplicates only the engine counts, is checked by
/// the engine whatever the caller says.
#[test]
fn a_sort_checked_by_its_caller_writes_the_same_and_counts_its_records() {
    let mut rng = Rng::new(seed());
    let n = 5003;
    let data = make_records(Pattern::FewDistinct, n, 100, &mut rng);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.dat");
    std::fs::write(&input, &data).unwrap();
    let want = oracle_sort(&data, 100, 0, 10);
    for (memory, passes) in [(64 << 20, 1), (tiny(), 2)] {
        for (caller, unique) in [(true, false), (false, false), (true, true)] {
            let out = dir.path().join("out.dat");
            let spec = SortSpec { unique, ..SortSpec::default() };
            let cfg =
                SortConfig::builder(vec![Input::Path(input.clone())], Output::Path(out.clone()))
                    .spec(spec)
                    .memory(memory)
                    .chunk_records_log2(CHUNK_LOG2)
                    .temp_dir(dir.path())
                    .checked_by_caller(caller)
                    .build()
                    .unwrap();
            let stats = sort(&cfg).unwrap();
            let name = format!("{passes} passes, checked by caller {caller}, unique {unique}");
            assert_eq!(stats.passes, passes, "{name}");
            let got = std::fs::read(&out).unwrap();
            if unique {
                assert!(got.len() < data.len(), "{name}: duplicates kept");
                assert_eq!(stats.records_written + stats.dropped_duplicates, n as u64, "{name}");
            } else {
                assert!(got == want, "{name}: output differs");
                assert_eq!(stats.records_written, n as u64, "{name}");
            }
            assert_eq!(stats.checksum.is_empty(), caller && !unique, "{name}: {}", stats.checksum);
            assert_clean(&[dir.path()]);
        }
    }
}

//! `SUM ...,XSUM` through the engine: the records SUM deletes go to a second file, unchanged,
//! in sorted order (within a key, input order), checked against a naive reference (a stable
//! sort and a walk over the groups) for `SUM FIELDS=NONE` and for a summed binary field whose
//! sums often overflow, one pass, two passes and a multi-level merge; a sort that fails leaves
//! neither file; XSUM without SUM, or on the output's own file, is refused before any work.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use oxsort_engine::{sort, EngineError, Input, Output, SortConfig, SortSpec, SortStats};
use oxsort_format::{RecordLayout, SumField, SumKind};
use oxsort_lang::parse_fields;
use oxsort_testkit::{least_budget, seed, setups, EngineTester, Rng, Setup};

/// Records per chunk in the tester's setups (2^5): a few thousand records make runs.
const CHUNK_LOG2: u32 = 5;
/// Record size: a key byte, a 2-byte BI field (bytes 2-3), 5 filler bytes.
const SIZE: usize = 8;

/// The summed field: bytes 2 and 3 as an unsigned big-endian number (BI), which overflows
/// past 65535.
fn field() -> SumField {
    SumField { offset: 1, len: 2, kind: SumKind::Bi }
}

/// The reference: `data` stably sorted by its first byte, then each run of equal keys walked
/// as DFSORT's SUM does. With `summed`, a record whose field adds into the group's sum
/// without passing 65535 goes to XSUM, otherwise (an overflow) the group so far is written and
/// the record starts a new one; without, every record after a key's first goes to XSUM.
/// Returns (SORTOUT, SORTXSUM).
fn reference(data: &[u8], summed: bool) -> (Vec<u8>, Vec<u8>) {
    let mut recs: Vec<&[u8]> = data.chunks_exact(SIZE).collect();
    recs.sort_by_key(|r| r[0]);
    let (mut out, mut xsum) = (Vec::new(), Vec::new());
    let mut group: Option<(Vec<u8>, u32)> = None;
    let value = |r: &[u8]| u32::from(r[1]) << 8 | u32::from(r[2]);
    for r in recs {
        if let Some((first, sum)) = &mut group {
            if first[0] == r[0] {
                if !summed {
                    xsum.extend_from_slice(r);
                    continue;
                }
                if *sum + value(r) <= 0xFFFF {
                    *sum += value(r);
                    xsum.extend_from_slice(r);
                    continue;
                }
            }
            let (mut first, sum) = group.take().unwrap();
            if summed {
                first[1..3].copy_from_slice(&(sum as u16).to_be_bytes());
            }
            out.extend_from_slice(&first);
        }
        group = Some((r.to_vec(), value(r)));
    }
    if let Some((mut first, sum)) = group {
        if summed {
            first[1..3].copy_from_slice(&(sum as u16).to_be_bytes());
        }
        out.extend_from_slice(&first);
    }
    (out, xsum)
}

/// `n` records: a key letter of `keys`, a field value (large a third of the time, so sums
/// overflow), filler that tells records apart.
fn records(rng: &mut Rng, n: usize, keys: u64) -> Vec<u8> {
    let mut data = vec![0u8; n * SIZE];
    for (i, rec) in data.chunks_exact_mut(SIZE).enumerate() {
        rec[0] = b'a' + rng.below(keys) as u8;
        let v: u16 =
            if rng.below(3) == 0 { 30000 + rng.below(30000) as u16 } else { rng.below(50) as u16 };
        rec[1..3].copy_from_slice(&v.to_be_bytes());
        rec[3..7].copy_from_slice(&(i as u32).to_be_bytes());
        rec[7] = rng.below(256) as u8;
    }
    data
}

fn spec(summed: bool) -> SortSpec {
    SortSpec {
        layout: RecordLayout::Fixed(SIZE),
        key: Some(parse_fields("1,1,CH,A").unwrap()),
        sum: summed.then(|| vec![field()]),
        unique: !summed,
        ..SortSpec::default()
    }
}

/// The configuration of `setup` sorting `input` into `out`, the deleted records into `xsum`.
fn config(t: &EngineTester, setup: &Setup, spec: &SortSpec, out: &Path, xsum: &Path) -> SortConfig {
    let input = Input::Path(t.dir().join("in.dat"));
    let build = |memory: u64| {
        let mut b = SortConfig::builder(vec![input.clone()], Output::Path(out.into()))
            .spec(spec.clone())
            .memory(memory)
            .threads(setup.threads)
            .chunk_records_log2(setup.chunk_log2)
            .io(setup.io.clone())
            .xsum_output(xsum);
        for i in 0..setup.temp_dirs {
            let d = t.dir().join(format!("tmp{i}"));
            std::fs::create_dir_all(&d).unwrap();
            b = b.temp_dir(d);
        }
        if let Some(f) = setup.max_fan_in {
            b = b.max_fan_in(f);
        }
        b.build().unwrap()
    };
    match setup.memory {
        Some(m) => build(m),
        None => build(least_budget(&build(1))),
    }
}

/// Sorts `data` through `setup` with XSUM: (SORTOUT, SORTXSUM, statistics).
fn run(
    setup: &Setup,
    spec: &SortSpec,
    data: &[u8],
) -> Result<(Vec<u8>, Vec<u8>, SortStats), EngineError> {
    let t = EngineTester::new();
    std::fs::write(t.dir().join("in.dat"), data).unwrap();
    let (out, xsum) = (t.dir().join("out.dat"), t.dir().join("xsum.dat"));
    let cfg = config(&t, setup, spec, &out, &xsum);
    let result = sort(&cfg);
    t.assert_clean(setup);
    match result {
        Ok(stats) => Ok((std::fs::read(&out).unwrap(), std::fs::read(&xsum).unwrap(), stats)),
        Err(e) => {
            assert!(
                !out.exists() && !xsum.exists(),
                "{}: a failed sort left an output",
                setup.name
            );
            Err(e)
        }
    }
}

#[test]
fn the_deleted_records_go_to_xsum_in_sorted_order_and_overflows_stay() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let all = setups(CHUNK_LOG2);
    let chosen: Vec<&Setup> =
        ["one pass", "one pass, 3 threads", "two passes", "multi-level merge"]
            .iter()
            .map(|n| all.iter().find(|s| s.name == *n).unwrap())
            .collect();
    for round in 0..8 {
        let summed = round % 2 == 0;
        let n = [1, 2, 40, 3000][round / 2 % 4];
        let keys = 1 + rng.below(5);
        let data = records(&mut rng, n, keys);
        let (want_out, want_xsum) = reference(&data, summed);
        if summed && n == 3000 {
            // The data makes sums overflow: those records stay in SORTOUT, not in SORTXSUM.
            assert!(want_out.len() / SIZE > 5, "seed {seed}: the data should overflow sums");
        }
        for s in &chosen {
            let what = format!("seed {seed}, round {round} (n={n}, summed={summed}), {}", s.name);
            let (out, xsum, stats) =
                run(s, &spec(summed), &data).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(out == want_out, "{what}: SORTOUT differs from the reference");
            assert!(xsum == want_xsum, "{what}: SORTXSUM differs from the reference");
            let deleted = (want_xsum.len() / SIZE) as u64;
            assert_eq!(stats.records_written, (want_out.len() / SIZE) as u64, "{what}");
            assert_eq!(stats.dropped_duplicates, deleted, "{what}");
            let files = &stats.phases.last().unwrap().files;
            let written = files.iter().find(|f| f.path.ends_with("xsum.dat")).unwrap();
            assert_eq!(written.bytes, want_xsum.len() as u64, "{what}: {files:?}");
            let note = format!("XSUM: the {deleted} records SUM deleted were written to");
            assert!(stats.notes.iter().any(|n| n.starts_with(&note)), "{what}: {:?}", stats.notes);
        }
    }
}

#[test]
fn a_failed_sort_leaves_neither_output() {
    // Invalid packed data in the summed field of the last record: the sort fails after the
    // first records reached both files.
    let mut data = Vec::new();
    for i in 0..500u16 {
        let mut r = vec![b'a' + (i % 3) as u8, 0x00, 0x1C];
        r.extend_from_slice(&[b'.'; SIZE - 3]);
        data.extend_from_slice(&r);
    }
    let n = data.len();
    data[n - SIZE + 2] = 0x11; // a digit where the sign should be
    data[n - SIZE] = b'z';
    let spec = SortSpec {
        sum: Some(vec![SumField { offset: 1, len: 2, kind: SumKind::Pd }]),
        unique: false,
        ..spec(true)
    };
    let all = setups(CHUNK_LOG2);
    for s in [&all[0], all.iter().find(|s| s.two_pass()).unwrap()] {
        let Err(e) = run(s, &spec, &data) else { panic!("{}: invalid data was summed", s.name) };
        let e = e.to_string();
        assert!(e.contains("SUM FIELDS"), "{}: {e}", s.name);
    }
}

#[test]
fn xsum_needs_a_sum_and_a_file_of_its_own() {
    let t = EngineTester::new();
    let (input, out) = (t.dir().join("in.dat"), t.dir().join("out.dat"));
    let build = |spec: SortSpec, xsum: &Path| {
        SortConfig::builder(vec![Input::Path(input.clone())], Output::Path(out.clone()))
            .spec(spec)
            .xsum_output(xsum)
            .build()
    };
    let plain = SortSpec { sum: None, unique: false, ..spec(true) };
    let e = build(plain, &t.dir().join("x")).unwrap_err().to_string();
    assert!(e.contains("XSUM writes the records SUM deletes: give SUM FIELDS="), "{e}");
    std::fs::write(&out, b"").unwrap();
    let e = build(spec(false), &out).unwrap_err().to_string();
    assert!(
        e.contains("the XSUM output (SORTXSUM)") && e.contains("is the same file as the output"),
        "{e}"
    );
    // SUM FIELDS=NONE with XSUM is a SUM of no fields: the records deleted pass through it.
    let cfg = build(spec(false), &t.dir().join("x")).unwrap();
    assert_eq!((cfg.spec().unique, cfg.spec().sum.as_deref()), (false, Some(&[][..])));
    assert_eq!(cfg.xsum_output(), Some(t.dir().join("x").as_path()));
}

#[test]
fn xsum_to_a_fifo_is_written_in_order_where_it_is() {
    let t = EngineTester::new();
    let mut rng = Rng::new(seed());
    let data = records(&mut rng, 2000, 4);
    std::fs::write(t.dir().join("in.dat"), &data).unwrap();
    let (out, fifo) = (t.dir().join("out.dat"), t.dir().join("dups.fifo"));
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let setup = &setups(CHUNK_LOG2)[0];
    let stats = sort(&config(&t, setup, &spec(true), &out, &fifo)).unwrap();
    let got = reader.join().unwrap();
    let (want_out, want_xsum) = reference(&data, true);
    assert!(std::fs::read(&out).unwrap() == want_out, "SORTOUT differs from the reference");
    assert!(got == want_xsum, "what the FIFO carried differs from the reference");
    assert_eq!(stats.dropped_duplicates, (want_xsum.len() / SIZE) as u64);
    // The FIFO is where it was: nothing renamed over it, nothing removed.
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

//! Delimited records (`--lines`, `--nul`) through the engine: whole-line order equals
//! `LC_ALL=C sort -s` byte for byte, GNU `-k` keys equal `LC_ALL=C sort` with the same flags,
//! on one and two passes, with missing final terminators, empty lines and duplicates.

use std::path::Path;
use std::process::Command;

use oxsort_engine::{sort, Input, Output, SortConfig, SortSpec, SortStats};
use oxsort_format::RecordLayout;
use oxsort_lang::{GnuArgs, GnuEnv};
use oxsort_testkit::{leftovers, seed, setups, EngineTester, Rng, Setup};

/// Bytes per chunk in the tester's setups (2^12): small, so records cross chunks often.
const CHUNK_LOG2: u32 = 12;

/// Sorts `data` by `spec` through `s`; the tester checks cleanup and peak memory.
fn sorted(t: &EngineTester, s: &Setup, spec: &SortSpec, data: &[u8]) -> (Vec<u8>, SortStats) {
    t.run(s, spec, data).unwrap_or_else(|e| panic!("{}: {e}", s.name))
}

/// Random lines of 0..max bytes (never the terminator `t`), few distinct when `few`.
fn lines(n: usize, max: u64, t: u8, few: bool, rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..n {
        let len = rng.below(max + 1) as usize;
        for _ in 0..len {
            let mut b = if few { b'a' + rng.below(3) as u8 } else { rng.below(256) as u8 };
            if b == t {
                b = b'x';
            }
            out.push(b);
        }
        out.push(t);
    }
    out
}

/// Stable whole-record byte order, the final record given its terminator.
fn reference(data: &[u8], t: u8) -> Vec<u8> {
    let mut recs: Vec<Vec<u8>> = data.split_inclusive(|&b| b == t).map(|r| r.to_vec()).collect();
    if let Some(last) = recs.last_mut() {
        if last.last() != Some(&t) {
            last.push(t);
        }
    }
    recs.sort_by(|a, b| a[..a.len() - 1].cmp(&b[..b.len() - 1]));
    recs.concat()
}

/// GNU sort's output in the C locale, or `None` (said once on stderr) where there is no
/// `sort` to compare with.
fn gnu_sort(input: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let Ok(out) = Command::new("sort").env("LC_ALL", "C").args(args).arg(input).output() else {
        eprintln!("skipping the comparison with GNU sort: no `sort` on PATH");
        return None;
    };
    assert!(out.status.success());
    Some(out.stdout)
}

/// A one-pass sort of `input` into `out` by `spec`.
fn config(input: &Path, out: &Path, spec: SortSpec) -> oxsort_engine::SortConfigBuilder {
    SortConfig::builder(vec![Input::Path(input.into())], Output::Path(out.into()))
        .spec(spec)
        .memory(64 << 20)
        .chunk_records_log2(CHUNK_LOG2)
}

#[test]
fn lines_sort_like_c_locale_stable_sort() {
    let mut rng = Rng::new(seed());
    let spec = SortSpec::with_layout(RecordLayout::LINES);
    for s in setups(CHUNK_LOG2) {
        let what = s.name;
        let t = EngineTester::new();
        for (n, max, few) in [
            (0usize, 10u64, false),
            (1, 10, false),
            (3000, 60, false),
            (5000, 5, true),
            (2000, 300, false),
        ] {
            let mut data = lines(n, max, b'\n', few, &mut rng);
            if n % 2 == 1 {
                data.pop(); // no final newline
            }
            let (got, stats) = sorted(&t, &s, &spec, &data);
            assert!(got == reference(&data, b'\n'), "{what} n={n} max={max}");
            let input = t.dir().join("gnu.txt");
            std::fs::write(&input, &data).unwrap();
            if let Some(gnu) = gnu_sort(&input, &["-s"]) {
                assert!(got == gnu, "{what} n={n}: differs from LC_ALL=C sort -s");
            }
            let want_records = reference(&data, b'\n').iter().filter(|&&b| b == b'\n').count();
            assert_eq!(stats.records, want_records as u64, "{what} n={n}");
            if n == 2000 && s.two_pass() {
                assert_eq!(stats.passes, 2, "{what}");
            }
        }
    }
}

#[test]
fn lines_a_third_of_which_tie_over_their_prefix_are_placed_and_ordered() {
    // A third of the lines share their first 24 bytes: that group is one output part of a third
    // of each load, with empty parts around it (parts are cut by value), and every part after
    // it is placed by the sizes of the parts before it, not once that group is gathered.
    let mut rng = Rng::new(seed());
    let spec = SortSpec::with_layout(RecordLayout::LINES);
    for s in setups(CHUNK_LOG2) {
        let t = EngineTester::new();
        let mut data = Vec::new();
        for _ in 0..9000 {
            if rng.below(3) == 0 {
                data.extend_from_slice(b"https://www.example.org/");
            }
            data.extend((0..rng.below(60)).map(|_| b'a' + rng.below(26) as u8));
            data.push(b'\n');
        }
        let (got, stats) = sorted(&t, &s, &spec, &data);
        assert!(got == reference(&data, b'\n'), "{}", s.name);
        assert_eq!(stats.records, 9000, "{}", s.name);
    }
}

#[test]
fn long_lines_across_chunk_boundaries_sort_whole() {
    let _serial = oxsort_testkit::serial();
    // Chunks of 128 KiB keep 64 KiB of room for the rest of a record that crosses into the next
    // piece; longer rests take the copying path. Mix both, several inputs, a missing final
    // newline, and compare with the reference.
    let mut rng = Rng::new(seed());
    let d = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    let mut all = Vec::new();
    for f in 0..3 {
        let mut data = Vec::new();
        for i in 0..400u64 {
            let len = if i % 9 == 0 { 70_000 + rng.below(40_000) } else { rng.below(3000) };
            data.extend((0..len).map(|_| b'a' + rng.below(26) as u8));
            data.push(b'\n');
        }
        if f == 1 {
            data.pop();
        }
        let path = d.path().join(format!("in{f}.txt"));
        std::fs::write(&path, &data).unwrap();
        all.extend_from_slice(&data);
        if all.last() != Some(&b'\n') {
            all.push(b'\n');
        }
        inputs.push(Input::Path(path));
    }
    let out = d.path().join("out.txt");
    let cfg = SortConfig::builder(inputs, Output::Path(out.clone()))
        .spec(SortSpec::with_layout(RecordLayout::LINES))
        .memory(256 << 20)
        .chunk_records_log2(17)
        .build()
        .unwrap();
    let stats = sort(&cfg).unwrap();
    assert_eq!(stats.records, 1200);
    assert!(std::fs::read(&out).unwrap() == reference(&all, b'\n'));
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn mapped_lines_cut_at_every_kind_of_piece_boundary_sort_whole() {
    let _serial = oxsort_testkit::serial();
    // A one-pass sort of lines in files on disk maps them in pieces of a chunk (4 KiB here),
    // each mapping as much of the next piece as a read buffer has room (4 KiB): a line that
    // straddles two pieces is read whole from the first one's mapping, nothing copied. Every
    // kind of boundary: lines that end exactly at a piece's end, rests that fit the room and
    // rests that do not (the copying path), a file with no final terminator whose length is a
    // whole number of pages and one whose is not, a one-line file, and NUL-terminated records.
    let mut rng = Rng::new(seed());
    let page = 4096usize;
    for t in [b'\n', 0u8] {
        let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let mut files: Vec<Vec<u8>> = Vec::new();
        files.push(lines(3000, 300, t, false, &mut rng));
        // Lines of 64 bytes: every piece ends with a whole line.
        files.push(
            (0..400)
                .flat_map(|i| {
                    let mut l = format!("{:063}", (i * 7919) % 400).into_bytes();
                    l.push(t);
                    l
                })
                .collect(),
        );
        // Long lines: rests longer than the room, and lines longer than a piece.
        let mut long = Vec::new();
        for i in 0..60u64 {
            let len =
                if i % 5 == 0 { page as u64 + rng.below(3 * page as u64) } else { rng.below(900) };
            long.extend((0..len).map(|_| b'a' + rng.below(26) as u8));
            long.push(t);
        }
        files.push(long);
        // No final terminator: ending on a page boundary, and inside a page.
        let mut whole_pages = lines(2000, 80, t, false, &mut rng);
        whole_pages.resize(8 * page, b'z');
        if whole_pages[8 * page - 1] == t {
            whole_pages[8 * page - 1] = b'z';
        }
        files.push(whole_pages);
        let mut ragged = lines(700, 90, t, true, &mut rng);
        ragged.pop();
        files.push(ragged);
        files.push(b"only".to_vec());
        let mut inputs = Vec::new();
        let mut all = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let path = d.path().join(format!("in{i}"));
            std::fs::write(&path, f).unwrap();
            inputs.push(Input::Path(path));
            all.extend_from_slice(f);
            if all.last() != Some(&t) {
                all.push(t);
            }
        }
        let out = d.path().join("out");
        let cfg = SortConfig::builder(inputs, Output::Path(out.clone()))
            .spec(SortSpec::with_layout(RecordLayout::Delimited(t)))
            .memory(64 << 20)
            .chunk_records_log2(12)
            .build()
            .unwrap();
        assert!(oxsort_engine::plan(&cfg).unwrap().input_mapped, "terminator {t}");
        let stats = sort(&cfg).unwrap();
        let want = reference(&all, t);
        assert_eq!(stats.records, want.iter().filter(|&&b| b == t).count() as u64);
        assert!(std::fs::read(&out).unwrap() == want, "terminator {t}");
        assert!(leftovers(d.path()).is_empty(), "terminator {t}");
    }
}

#[test]
fn lines_too_short_for_one_mapped_load_are_read_on_and_sorted_in_two_passes() {
    let _serial = oxsort_testkit::serial();
    // 2-byte lines: their bytes alone fit one load, their entries (16 bytes a line) do not.
    // The plan maps them on trust; the first piece's line count says one load cannot hold
    // them, so the rest of the file is read from that piece's end, the file after it read, and
    // the sort takes two passes. Every line is there once, in order, and the bytes read are the
    // files' (a count off by the mapped piece would be a changed input).
    let mut rng = Rng::new(seed());
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut inputs = Vec::new();
    let mut all = Vec::new();
    for i in 0..2 {
        let data: Vec<u8> =
            (0..1_500_000).flat_map(|_| [b'a' + rng.below(26) as u8, b'\n']).collect();
        let path = d.path().join(format!("in{i}"));
        std::fs::write(&path, &data).unwrap();
        inputs.push(Input::Path(path));
        all.extend_from_slice(&data);
    }
    let out = d.path().join("out");
    let cfg = SortConfig::builder(inputs, Output::Path(out.clone()))
        .spec(SortSpec::with_layout(RecordLayout::LINES))
        .memory(64 << 20)
        .chunk_records_log2(16)
        .build()
        .unwrap();
    assert!(oxsort_engine::plan(&cfg).unwrap().input_mapped);
    let stats = sort(&cfg).unwrap();
    assert_eq!(stats.passes, 2);
    assert_eq!(stats.records, 3_000_000);
    assert_eq!(stats.input_bytes_read, all.len() as u64);
    assert!(std::fs::read(&out).unwrap() == reference(&all, b'\n'));
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn a_load_just_short_of_its_input_takes_the_end_into_the_read_ahead_room() {
    let _serial = oxsort_testkit::serial();
    // Lines of 100 bytes whose chunks, entries and offsets come to a little more than a load's
    // budget: the load takes the input's last chunks into the read-ahead memory the plan also
    // reserved (nothing is read ahead at the input's end) and the sort takes one pass. Past
    // that room it takes two. Read and mapped inputs alike (a pipe's length is not known: it
    // spills as before).
    let mut rng = Rng::new(seed());
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (input, out) = (d.path().join("in"), d.path().join("out"));
    let cfg = || {
        SortConfig::builder(vec![Input::Path(input.clone())], Output::Path(out.clone()))
            .spec(SortSpec::with_layout(RecordLayout::LINES))
            .memory(64 << 20)
            .chunk_records_log2(20)
            .build()
            .unwrap()
    };
    std::fs::write(&input, b"").unwrap();
    let g = oxsort_engine::plan(&cfg()).unwrap().geometry;
    // What a load counts for a chunk of 100-byte lines: its buffer, an entry and (a sixteenth
    // more than) an offset a line.
    let per_chunk = (g.chunk_bytes / 100) as u64;
    let chunk_cost =
        g.chunk_alloc as u64 + per_chunk * g.entry_bytes + (per_chunk * 17 / 16 + 2) * 4;
    for (extra, passes) in [(g.read_ahead_bytes / 2, 1), (g.read_ahead_bytes * 2, 2)] {
        let chunks = (g.arena_bytes + extra) / chunk_cost;
        let lines = chunks * per_chunk;
        let mut data = Vec::with_capacity(lines as usize * 100);
        for _ in 0..lines {
            data.extend((0..99).map(|_| b'a' + rng.below(26) as u8));
            data.push(b'\n');
        }
        std::fs::write(&input, &data).unwrap();
        for map in [true, false] {
            // (The serial guard keeps other tests from seeing the variable.)
            if map {
                std::env::remove_var("OXSORT_MAP_INPUT");
            } else {
                std::env::set_var("OXSORT_MAP_INPUT", "off");
            }
            let stats = sort(&cfg());
            std::env::remove_var("OXSORT_MAP_INPUT");
            let stats = stats.unwrap();
            assert_eq!(stats.passes, passes, "{extra} bytes over, mapped {map}");
            assert_eq!(stats.records, lines);
            assert!(std::fs::read(&out).unwrap() == reference(&data, b'\n'));
        }
    }
    assert!(leftovers(d.path()).is_empty());
}

#[test]
fn nul_terminated_records_and_unique() {
    let mut rng = Rng::new(seed());
    let nul = SortSpec::with_layout(RecordLayout::NUL);
    let unique_nul = SortSpec { unique: true, ..nul.clone() };
    for s in setups(CHUNK_LOG2) {
        let what = s.name;
        let t = EngineTester::new();
        let data = lines(4000, 8, 0, true, &mut rng);
        assert!(sorted(&t, &s, &nul, &data).0 == reference(&data, 0), "{what}");
        let (got, _) = sorted(&t, &s, &unique_nul, &data);
        let mut want: Vec<&[u8]> = Vec::new();
        let by_bytes = reference(&data, 0);
        for rec in by_bytes.split_inclusive(|&b| b == 0) {
            if want.last() != Some(&rec) {
                want.push(rec);
            }
        }
        assert!(got == want.concat(), "{what} unique");
    }
}

#[test]
fn gnu_keys_match_gnu_sort() {
    let mut rng = Rng::new(seed());
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.txt");
    let mut data = Vec::new();
    for _ in 0..3000 {
        let a = rng.below(20);
        let b = rng.below(1000) as i64 - 500;
        let c: String = (0..rng.below(6)).map(|_| (b'a' + rng.below(4) as u8) as char).collect();
        data.extend_from_slice(format!("{c},{b},{a}\n").as_bytes());
    }
    std::fs::write(&input, &data).unwrap();
    let cases: [&[&str]; 4] = [
        &["-t", ",", "-k2,2n"],
        &["-t", ",", "-k3,3n", "-k1,1r"],
        &["-t", ",", "-k2,2nr", "-s"],
        &["-t", ",", "-k3,3", "-u"],
    ];
    for args in cases {
        let owned: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let gnu = GnuArgs::parse(&owned, &GnuEnv::default()).unwrap().c_locale_options();
        let spec = SortSpec {
            key: Some(gnu.key_spec()),
            unique: gnu.unique,
            ..SortSpec::with_layout(RecordLayout::LINES)
        };
        let Some(want) = gnu_sort(&input, args) else { return };
        for s in setups(CHUNK_LOG2) {
            let (got, _) = sorted(&EngineTester::new(), &s, &spec, &data);
            assert!(got == want, "{args:?} {}: differs from LC_ALL=C sort", s.name);
        }
    }
}

#[test]
fn a_record_longer_than_a_chunk_is_sorted_as_gnu_sort_sorts_it() {
    let _serial = oxsort_testkit::serial();
    let d = tempfile::tempdir().unwrap();
    let (input, out) = (d.path().join("in.txt"), d.path().join("out.txt"));
    // Lines far longer than a chunk of 2^CHUNK_LOG2 records, between short ones.
    let long = |c: u8, n: usize| std::iter::repeat_n(c, n).chain([b'\n']).collect::<Vec<u8>>();
    let mut data = long(b'x', 20_000);
    data.extend_from_slice(b"short\n");
    data.extend(long(b'm', 70_000));
    data.extend_from_slice(b"a\n");
    std::fs::write(&input, &data).unwrap();
    sort(&config(&input, &out, SortSpec::with_layout(RecordLayout::LINES)).build().unwrap())
        .unwrap();
    let mut want = b"a\n".to_vec();
    want.extend(long(b'm', 70_000));
    want.extend_from_slice(b"short\n");
    want.extend(long(b'x', 20_000));
    assert!(std::fs::read(&out).unwrap() == want);
}

#[test]
fn a_line_shorter_than_its_key_field_is_named_unless_vlshrt() {
    let _serial = oxsort_testkit::serial();
    use oxsort_lang::parse_control;
    let d = tempfile::tempdir().unwrap();
    let (input, out) = (d.path().join("in.txt"), d.path().join("out.txt"));
    std::fs::write(&input, b"aaaa9xx\nbbbb1yy\ncc\ndddd5zz\n").unwrap();
    // DFSORT's default: a record too short for a key field is an error naming it.
    let strict = parse_control(" SORT FIELDS=(5,3,CH,A)\n").unwrap().key.unwrap();
    let spec = SortSpec { key: Some(strict), ..SortSpec::with_layout(RecordLayout::LINES) };
    let cfg = config(&input, &out, spec).build().unwrap();
    let msg = sort(&cfg).unwrap_err().to_string();
    assert!(msg.contains("in.txt") && msg.contains("record 3"), "{msg}");
    assert!(!out.exists());
    // With OPTION VLSHRT the short field sorts first.
    let lenient = parse_control(" OPTION VLSHRT\n SORT FIELDS=(5,3,CH,A)\n").unwrap().key.unwrap();
    let spec = SortSpec { key: Some(lenient), ..SortSpec::with_layout(RecordLayout::LINES) };
    let cfg = config(&input, &out, spec).build().unwrap();
    sort(&cfg).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), b"cc\nbbbb1yy\ndddd5zz\naaaa9xx\n");
}

#[test]
fn parts_of_uneven_lines_and_a_failed_write_lose_nothing() {
    use oxsort_io::{FaultPlan, IoOptions};
    use std::sync::Arc;
    let d = tempfile::tempdir().unwrap();
    let (input, out) = (d.path().join("in.txt"), d.path().join("out.txt"));
    // Short lines sort first, long ones last: parts of the long ones outgrow the buffers sized
    // from the mean line.
    let mut data = Vec::new();
    for i in 0..6000u32 {
        if i % 10 == 0 {
            data.extend(std::iter::repeat_n(b'z', 400 + (i % 7) as usize));
        } else {
            data.extend_from_slice(format!("a{}", i % 97).as_bytes());
        }
        data.push(b'\n');
    }
    std::fs::write(&input, &data).unwrap();
    let spec = SortSpec::with_layout(RecordLayout::LINES);
    for s in setups(CHUNK_LOG2) {
        let (got, _) = sorted(&EngineTester::new(), &s, &spec, &data);
        assert!(got == reference(&data, b'\n'), "{}", s.name);
    }
    let _serial = oxsort_testkit::serial();
    let mut failed = 0;
    for fail_at in [1u64, 2, 3, 5, 8] {
        let _ = std::fs::remove_file(&out);
        let io = IoOptions {
            faults: Some(Arc::new(FaultPlan::fail_write(fail_at, 5))),
            ..IoOptions::default()
        };
        let cfg = config(&input, &out, SortSpec::with_layout(RecordLayout::LINES))
            .io(io)
            .build()
            .unwrap();
        match sort(&cfg) {
            Err(_) => {
                failed += 1;
                assert!(!out.exists(), "write {fail_at}");
            }
            // Past the sort's last write: the output must then be right.
            Ok(_) => assert!(std::fs::read(&out).unwrap() == reference(&data, b'\n')),
        }
        assert!(leftovers(d.path()).is_empty());
    }
    assert!(failed >= 3, "only {failed} injected write faults stopped the sort");
}

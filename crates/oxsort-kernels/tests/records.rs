//! extract_entries and gather against naive versions.

mod common;
use common::*;
use oxsort_kernels::tuning::{GATHER_PREFETCH_DISTANCE, PAR_TASK_ENTRIES};
use oxsort_kernels::{
    entry_index, entry_prefix, extract_entries, extract_line_entries, gather, make_entry,
    par_gather, sort_entries, Entry, MAX_INDEX,
};

fn arena(n: usize, rec: usize, rng: &mut Rng) -> Vec<u8> {
    let mut a = vec![0u8; n * rec];
    rng.fill(&mut a);
    a
}

#[test]
fn entry_layout() {
    let k = *b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a";
    let e = make_entry(&k, 0xABCDEF);
    assert_eq!(entry_index(e), 0xABCDEF);
    assert_eq!(entry_prefix(e), 0x0102_0304_0506_0708_090a);
    assert_eq!(entry_index(make_entry(&k, MAX_INDEX)), MAX_INDEX);
    // Byte order is integer order.
    assert!(make_entry(b"aaaaaaaaab", 0) > make_entry(b"aaaaaaaaaa", 9));
    assert!(make_entry(b"aaaaaaaaaa", 1) > make_entry(b"aaaaaaaaaa", 0));
}

#[test]
#[should_panic(expected = "does not fit")]
fn index_overflow_panics() {
    make_entry(&[0; 10], MAX_INDEX + 1);
}

#[test]
fn extract_matches_make_entry() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    for (rec, off) in [(100usize, 0usize), (100, 90), (10, 0), (13, 2)] {
        for n in [0usize, 1, 7, 1000] {
            let a = arena(n, rec, &mut rng);
            let mut out = vec![42]; // appends, keeps what was there
            extract_entries(&a, rec, off, 1000, &mut out);
            let want: Vec<Entry> = std::iter::once(42)
                .chain(
                    a.chunks_exact(rec)
                        .zip(1000u64..)
                        .map(|(r, i)| make_entry(r[off..off + 10].try_into().unwrap(), i)),
                )
                .collect();
            assert_eq!(out, want, "rec {rec} off {off} n {n} OXSORT_SEED={seed}");
        }
    }
}

#[test]
fn line_entries_match_make_entry_of_each_lines_prefix() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    for n in [0usize, 1, 2, 5, 300] {
        // Lines of 0 to 24 bytes (shorter, as long as and longer than a prefix), of bytes that
        // are often the terminator, each ended by it but perhaps the last: so lines end at
        // every distance from the end of the buffer, and keys hold zeros and terminators.
        for last_ended in [true, false] {
            let mut data = Vec::new();
            let mut offsets = vec![0u32];
            for i in 0..n {
                for _ in 0..rng.below(25) {
                    data.push(if rng.below(4) == 0 { 0 } else { b'\n' + rng.below(3) as u8 });
                }
                if i + 1 < n || last_ended {
                    data.push(b'\n');
                }
                offsets.push(data.len() as u32);
            }
            let mut out = vec![7]; // appends, keeps what was there
            extract_line_entries(&data, &offsets, b'\n', 500, &mut out);
            let want: Vec<Entry> = std::iter::once(7)
                .chain(offsets.windows(2).zip(500u64..).map(|(w, i)| {
                    let line = &data[w[0] as usize..w[1] as usize];
                    let key = line.strip_suffix(b"\n").unwrap_or(line);
                    let mut p = [0u8; 10];
                    let k = key.len().min(10);
                    p[..k].copy_from_slice(&key[..k]);
                    make_entry(&p, i)
                }))
                .collect();
            assert_eq!(out, want, "n {n} last ended {last_ended} OXSORT_SEED={seed}");
        }
    }
}

#[test]
#[should_panic(expected = "exceed")]
fn line_entries_past_the_last_index_panic() {
    extract_line_entries(b"a\nb\n", &[0, 2, 4], b'\n', MAX_INDEX, &mut Vec::new());
}

#[test]
#[should_panic(expected = "does not fit")]
fn extract_key_outside_record_panics() {
    extract_entries(&[0; 100], 100, 91, 0, &mut Vec::new());
}

#[test]
#[should_panic(expected = "multiple")]
fn extract_partial_record_panics() {
    extract_entries(&[0; 150], 100, 0, 0, &mut Vec::new());
}

#[test]
fn gather_matches_naive() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let d = GATHER_PREFETCH_DISTANCE;
    for rec in [1usize, 10, 100, 130] {
        for n in [0, 1, 2, d - 1, d, d + 1, 3 * d + 5, PAR_TASK_ENTRIES + 1, 200_000] {
            let a = arena(n, rec, &mut rng);
            let mut e = Vec::new();
            if rec >= 10 {
                extract_entries(&a, rec, 0, 0, &mut e);
            } else {
                // The key would not fit: random prefixes instead.
                e = (0..n as u64).map(|i| make_entry(&rng.key(), i)).collect();
            }
            sort_entries(&mut e);
            let locate = |i: u64| &a[i as usize * rec..][..rec];
            let want: Vec<u8> =
                e.iter().flat_map(|&x| locate(entry_index(x)).iter().copied()).collect();
            let mut out = vec![0u8; n * rec];
            gather(&e, rec, locate, &mut out);
            assert!(out == want, "gather rec {rec} n {n} OXSORT_SEED={seed}");
            for threads in [1, 2, 3] {
                let mut out = vec![0u8; n * rec];
                par_gather(&e, rec, locate, &mut out, threads);
                assert!(out == want, "par_gather({threads}) rec {rec} n {n} OXSORT_SEED={seed}");
            }
        }
    }
}

#[test]
#[should_panic(expected = "exactly")]
fn gather_wrong_output_size_panics() {
    let a = [0u8; 100];
    gather(&[make_entry(&[0; 10], 0)], 100, |_| &a[..], &mut [0u8; 99]);
}

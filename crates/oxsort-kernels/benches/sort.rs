//! Kernel benchmarks: entry sorts against std and the radix-sort crates, gather, extraction, the
//! bucket placement of a chunk's records, and the merge's tournaments (the branch-free entry
//! tree against the general loser tree).
//!
//! Run: `cargo bench -p oxsort-kernels --bench sort` (filter with e.g. `-- sort_1e7/random`).
//! Sizes can be lowered with `OXSORT_BENCH_N` (entries), `OXSORT_BENCH_RECORDS` (records of the
//! gather / extract arena) and `OXSORT_BENCH_CHUNK` (records of the placed chunk);
//! `OXSORT_BENCH_HUGE=1` puts the placement's buffers on huge pages, as the engine's pool does.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use oxsort_kernels::{
    entry_prefix, extract_entries, gather, gather_blocks, make_entry, par_gather, par_sort_entries,
    par_sort_entries_with_buffer, sort_entries, Bucketer, Entry, EntryTree, LoserTree,
};
use oxsort_testkit::{pattern_keys, Pattern, Rng};
use rdst::RadixSort as _;
use std::time::Duration;
use voracious_radix_sort::RadixSort as _;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Seeds of the benchmark inputs: fixed, so every run sorts the same keys.
const SORT_SEED: u64 = 0x0DDB_1A5E_5BAD_5EED;
const RECORDS_SEED: u64 = 0x0A11_0C8E_D00D;

/// Entries of `pattern` (testkit's key patterns), indexes in input order.
fn pattern_entries(pattern: Pattern, n: usize) -> Vec<Entry> {
    let keys = pattern_keys(pattern, n, &mut Rng::new(SORT_SEED));
    keys.iter().zip(0u64..).map(|(k, i)| make_entry(k, i)).collect()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool")
}

fn bench_sorts(c: &mut Criterion) {
    let n = env_usize("OXSORT_BENCH_N", 10_000_000);
    let pool2 = pool(2);
    for pattern in [Pattern::Random, Pattern::Skewed] {
        let (name, data) = (pattern.name(), pattern_entries(pattern, n));
        let mut g = c.benchmark_group(format!("sort_{n}"));
        g.sample_size(10)
            .measurement_time(Duration::from_secs(5))
            .warm_up_time(Duration::from_secs(1));
        g.throughput(Throughput::Elements(n as u64));
        let mut run = |id: &str, f: &dyn Fn(&mut Vec<Entry>)| {
            g.bench_function(BenchmarkId::new(id, name), |b| {
                b.iter_batched_ref(|| data.clone(), |v| f(v), BatchSize::LargeInput)
            });
        };
        run("oxsort_seq", &|v| sort_entries(v));
        run("oxsort_par2", &|v| par_sort_entries(v, 2));
        let scratch = std::cell::RefCell::new(Vec::new());
        run("oxsort_par2_reused_buffer", &|v| {
            par_sort_entries_with_buffer(v, &mut scratch.borrow_mut(), 2)
        });
        run("std_sort_unstable", &|v| v.sort_unstable());
        run("voracious_seq", &|v| v.voracious_sort());
        run("voracious_mt2", &|v| v.voracious_mt_sort(2));
        run("rdst_seq", &|v| {
            v.radix_sort_builder().with_parallel(false).with_single_threaded_tuner().sort()
        });
        run("rdst_par2", &|v| pool2.install(|| v.radix_sort_unstable()));
        g.finish();
    }
}

fn bench_records(c: &mut Criterion) {
    const REC: usize = 100;
    let n = env_usize("OXSORT_BENCH_RECORDS", 10_000_000);
    let mut rng = Rng::new(RECORDS_SEED);
    // Like the engine's arena: huge pages advised before first touch.
    let mut arena = vec![0u8; n * REC];
    advise_huge(&mut arena);
    for rec in arena.chunks_exact_mut(REC) {
        rec[..10].copy_from_slice(&rng.key());
    }
    let mut g = c.benchmark_group(format!("records_{n}x100"));
    g.sample_size(10).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(n as u64));
    let mut entries = Vec::with_capacity(n);
    g.bench_function("extract_entries", |b| {
        b.iter(|| {
            entries.clear();
            extract_entries(&arena, REC, 0, 0, &mut entries);
        })
    });
    // A random permutation: the gather of a sorted random input (the entries made here: the
    // extraction above does not run when a filter leaves it out).
    entries.clear();
    extract_entries(&arena, REC, 0, 0, &mut entries);
    par_sort_entries(&mut entries, 2);
    let mut out = vec![0u8; n * REC];
    advise_huge(&mut out);
    let locate = |i: u64| &arena[i as usize * REC..][..REC];
    g.bench_function("gather_seq", |b| b.iter(|| gather(&entries, REC, locate, &mut out)));
    g.bench_function("gather_blocks", |b| {
        // The output's gather: blocks handed over as they fill (their checks run on them).
        b.iter(|| {
            gather_blocks(&entries, REC, locate, &mut out, 4096, |blk| assert!(!blk.is_empty()))
        })
    });
    g.bench_function("par_gather2", |b| b.iter(|| par_gather(&entries, REC, locate, &mut out, 2)));
    g.bench_function("gather_naive", |b| {
        b.iter(|| {
            for (o, &e) in out.chunks_exact_mut(REC).zip(&entries) {
                o.copy_from_slice(locate(oxsort_kernels::entry_index(e)));
            }
        })
    });
    g.finish();
}

/// A load's bucket placement of one chunk of 100-byte records (`OXSORT_BENCH_CHUNK` records, a
/// 16 MiB chunk by default): entries and records scattered to `2^bits` buckets in one pass, as
/// the engine does before cutting a load into parts; by how many buckets.
fn bench_place(c: &mut Criterion) {
    const REC: usize = 100;
    let n = env_usize("OXSORT_BENCH_CHUNK", (16 << 20) / REC);
    let log2 = n.next_power_of_two().ilog2();
    let mut rng = Rng::new(RECORDS_SEED);
    let (mut records, mut out) = (vec![0u8; n * REC], vec![0u8; n * REC]);
    // As from the engine's pool (huge pages), when asked; else 4 KiB pages.
    if std::env::var_os("OXSORT_BENCH_HUGE").is_some() {
        advise_huge(&mut records);
        advise_huge(&mut out);
    }
    for rec in records.chunks_exact_mut(REC) {
        rec[..10].copy_from_slice(&rng.key());
    }
    let mut src = Vec::with_capacity(n);
    extract_entries(&records, REC, 0, 0, &mut src);
    let mut dst = vec![0; n];
    let mut g = c.benchmark_group(format!("place_{n}x100"));
    g.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Bytes((n * REC) as u64));
    for bits in [8u32, 10, 12] {
        let b = Bucketer::from_sample(src.iter().step_by(64).map(|&e| entry_prefix(e)), bits);
        let mut starts = Vec::new();
        b.count(&src, &mut starts);
        g.bench_function(BenchmarkId::new("place_records", 1u32 << bits), |bch| {
            bch.iter(|| b.place_records(&src, &starts, &records, REC, log2, 0, &mut dst, &mut out))
        });
    }
    g.finish();
}

/// `madvise(MADV_HUGEPAGE)` on a fresh buffer (a hint; errors ignored).
fn advise_huge(buf: &mut [u8]) {
    let start = buf.as_mut_ptr() as usize;
    let aligned = start.next_multiple_of(4096);
    let len = (start + buf.len()).saturating_sub(aligned) / 4096 * 4096;
    // SAFETY: the range lies inside `buf`; the advice changes only how pages are backed.
    unsafe { libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
}

/// Runs of a 16-way merge (a two-pass sort's fan-in on a small budget): random prefixes, each
/// run sorted, every entry's index bits its run's number (as the merge keys run heads).
fn tournament_runs(n: usize, k: usize) -> Vec<Vec<Entry>> {
    let mut rng = Rng::new(SORT_SEED);
    (0..k)
        .map(|r| {
            let mut v: Vec<Entry> = (0..n / k)
                .map(|_| {
                    let mut p = [0u8; 10];
                    rng.fill(&mut p);
                    make_entry(&p, r as u64)
                })
                .collect();
            v.sort_unstable();
            v
        })
        .collect()
}

/// The two tournaments, as the bench drives them.
trait Tournament {
    fn top(&self) -> Option<(usize, Entry)>;
    fn replace_top(&mut self, next: Option<Entry>);
}

impl Tournament for EntryTree {
    fn top(&self) -> Option<(usize, Entry)> {
        EntryTree::top(self)
    }
    fn replace_top(&mut self, next: Option<Entry>) {
        EntryTree::replace_top(self, next)
    }
}

impl Tournament for LoserTree<Entry> {
    fn top(&self) -> Option<(usize, Entry)> {
        LoserTree::top(self)
    }
    fn replace_top(&mut self, next: Option<Entry>) {
        LoserTree::replace_top(self, next)
    }
}

/// Merges `runs` through `tree` (built on their first entries) and sums what it pops, so that
/// no merge can skip work.
fn drain(mut tree: impl Tournament, runs: &[Vec<Entry>]) -> u128 {
    let mut pos = vec![1usize; runs.len()];
    let mut sum = 0u128;
    while let Some((s, e)) = tree.top() {
        sum = sum.wrapping_add(e);
        tree.replace_top(runs[s].get(pos[s]).copied());
        pos[s] += 1;
    }
    sum
}

fn bench_tournaments(c: &mut Criterion) {
    let n = env_usize("OXSORT_BENCH_N", 10_000_000);
    let k = 16;
    let runs = tournament_runs(n, k);
    let heads = || runs.iter().map(|r| r.first().copied()).collect::<Vec<_>>();
    let mut g = c.benchmark_group(format!("merge_{n}"));
    g.sample_size(10).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(BenchmarkId::new("entry_tree", k), |b| {
        b.iter(|| drain(EntryTree::new(&heads()), &runs))
    });
    g.bench_function(BenchmarkId::new("loser_tree", k), |b| {
        b.iter(|| drain(LoserTree::new(heads()), &runs))
    });
}

criterion_group!(benches, bench_sorts, bench_records, bench_place, bench_tournaments);
criterion_main!(benches);

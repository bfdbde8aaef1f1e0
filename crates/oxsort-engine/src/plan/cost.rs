//! What each shape of sort would cost, estimated before any work, so the plan can take the
//! faster one and `oxsort explain` can show why.
//!
//! ```text
//!  one pass   = read + write                      the disk, in turn (no output byte before the
//!                                                 last input byte)
//!             + fresh(load) / threads             first touch of every page the load holds
//!                                                 (its entries only when the inputs are
//!                                                 mapped: the page cache holds the records)
//!             + ONE_PASS_TAIL_NS x records / threads   gather, checksum and order check, after
//!                                                 the last read: not hidden behind the disk
//!  two passes = 2 x (read + write)                every byte read and written twice
//!             + fresh(run memory) / threads       one run's memory, touched once, reused
//!             + TWO_PASS_CPU_NS x records / threads    what the disk does not hide
//! ```
//!
//! `fresh` is the cost of memory the process has not touched before: on a VM with free-page
//! reporting, each first touch is a fault to the host, [`FRESH_S_PER_GIB`] of CPU per GiB;
//! pages of a reserved hugetlb pool were backed once and cost only their zeroing
//! ([`POOL_S_PER_GIB`]). The disk rates are [`ASSUMED_READ_BPS`] and [`ASSUMED_WRITE_BPS`].
//!
//! Two passes are taken over one only when they are estimated [`TWO_PASS_MARGIN`] faster: the
//! model is calibrated on one machine and two passes cost temp space and disk wear.

use serde::Serialize;

/// Disk read rate assumed when none is given: what a current NVMe or cloud volume reads with
/// several transfers in flight (the benchmark VM's virtio disk read 2 GB/s with 16).
pub const ASSUMED_READ_BPS: f64 = 2.0e9;
/// Disk write rate assumed when none is given (the benchmark VM's disk wrote 2.5 GB/s).
pub const ASSUMED_WRITE_BPS: f64 = 2.5e9;
/// CPU seconds per GiB of memory touched for the first time: 1.5-2.2 measured by
/// `oxsort-io`'s `populate` example on a VM with free-page reporting (host faults); about 0.25
/// on bare metal, where the estimate then never prefers two passes for this reason.
pub const FRESH_S_PER_GIB: f64 = 1.8;
/// CPU seconds per GiB of memory taken from a reserved hugetlb pool: the kernel zeroes each
/// page it hands out (`clear_page_erms`, about 10 GB/s).
pub const POOL_S_PER_GIB: f64 = 0.1;
/// CPU seconds per GiB of an input's pages mapped from the page cache (a one-pass sort of
/// regular files): the device fills them, so the process neither zeroes nor copies them, but
/// its first read of each page still faults to the host on a VM with free-page reporting. A
/// one-pass sort of 2 GB with fresh memory took 7.3 CPU-s read (4.9 s of it system time,
/// `clear_page_erms`) and 6.0 CPU-s mapped (user time up 2.8 s where the records are first
/// read): 1.5 s per GiB mapped against 1.8 read.
pub const MAPPED_S_PER_GIB: f64 = 1.5;
/// CPU nanoseconds per record a one-pass sort spends after its last read (gather, CRC32, order
/// check of the output): 2.15 s over the disk's floor for 4e7 records on 2 threads with a pool.
pub const ONE_PASS_TAIL_NS: f64 = 107.0;
/// CPU nanoseconds per record of a two-pass sort that reading and writing do not hide (the
/// merge's last records, the first run's sort): 1.0 s over floor2 plus memory for 4e7 records on
/// 2 threads.
pub const TWO_PASS_CPU_NS: f64 = 50.0;
/// Two passes must be estimated this much faster than one to be taken: the disk's rate is
/// assumed, not measured, and the same virtual disk read 1.2 GB/s on one day and 2 GB/s on
/// another; at 1.2 GB/s a 4 GB sort with fresh memory took 9.2 s in one pass and 11.4 s in two.
pub const TWO_PASS_MARGIN: f64 = 0.15;
/// Memory a two-pass sort uses for its runs when the budget allows more: an eighth of the
/// input (eight runs, one merge level)... Every byte of a load is memory touched fresh once (the
/// later loads reuse it), which costs more than the merge's extra inputs: sorting 1e7 records
/// (1 GB) in 256 MiB loads took 2.3 s against 2.8-3.6 s in 1 GiB loads, and 4e7 records in
/// 512 MiB loads 9.7-10.2 s against 10.5-10.8 s in 1 GiB loads (fresh memory, page cache
/// dropped, `--memory 256M|512M|1G`).
pub const TWO_PASS_INPUT_SHARE: u64 = 8;
/// ... but at least this much, so runs stay few and the merge one level.
pub const TWO_PASS_MIN_MEMORY: u64 = 256 << 20;

/// The rates the estimates use.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Rates {
    /// Disk read, bytes per second.
    pub read_bps: f64,
    /// Disk write, bytes per second.
    pub write_bps: f64,
    /// Bytes of hugetlb pool free for this sort (memory that costs only zeroing).
    pub pool_free: u64,
}

impl Default for Rates {
    fn default() -> Self {
        Rates { read_bps: ASSUMED_READ_BPS, write_bps: ASSUMED_WRITE_BPS, pool_free: 0 }
    }
}

/// The memory a one-pass load holds, and what it costs to touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Load {
    /// Bytes the load holds (records and entries).
    pub memory: u64,
    /// Bytes of it that are pages of mapped inputs (the records, when they are mapped); the
    /// rest is memory of the sort's own, touched fresh.
    pub mapped: u64,
}

impl Load {
    /// A load read into memory of its own: all of it fresh.
    pub fn read(memory: u64) -> Self {
        Load { memory, mapped: 0 }
    }
}

/// The estimate of one shape.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Estimate {
    /// Seconds in all.
    pub seconds: f64,
    /// Seconds of disk transfers.
    pub disk_s: f64,
    /// Seconds spent touching memory for the first time.
    pub memory_s: f64,
    /// Seconds of CPU the disk does not hide.
    pub cpu_s: f64,
    /// Memory the shape uses.
    pub memory: u64,
}

/// Both shapes, estimated for one input.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Estimates {
    /// One pass (when the input fits the budget).
    pub one: Option<Estimate>,
    /// Two passes.
    pub two: Estimate,
    /// The rates used.
    pub rates: Rates,
}

impl Rates {
    /// CPU seconds to touch `bytes` of memory for the first time, the pool's share first.
    fn fresh_s(&self, bytes: u64) -> f64 {
        let pooled = bytes.min(self.pool_free);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        gib(pooled) * POOL_S_PER_GIB + gib(bytes - pooled) * FRESH_S_PER_GIB
    }

    /// Estimates one pass holding `load` and two passes using `run_memory`, for `bytes` of
    /// input in `records` records on `threads` threads.
    pub fn estimate(
        &self,
        bytes: u64,
        records: u64,
        threads: usize,
        load: Option<Load>,
        run_memory: u64,
    ) -> Estimates {
        let t = threads.max(1) as f64;
        let floor1 = bytes as f64 / self.read_bps + bytes as f64 / self.write_bps;
        let one = load.map(|Load { memory: load, mapped }| {
            let mapped = mapped.min(load);
            let mapped_s = mapped as f64 / (1u64 << 30) as f64 * MAPPED_S_PER_GIB;
            let memory_s = (self.fresh_s(load - mapped) + mapped_s) / t;
            let cpu_s = ONE_PASS_TAIL_NS * 1e-9 * records as f64 / t;
            Estimate {
                seconds: floor1 + memory_s + cpu_s,
                disk_s: floor1,
                memory_s,
                cpu_s,
                memory: load,
            }
        });
        let memory_s = self.fresh_s(run_memory) / t;
        let cpu_s = TWO_PASS_CPU_NS * 1e-9 * records as f64 / t;
        let two = Estimate {
            seconds: 2.0 * floor1 + memory_s + cpu_s,
            disk_s: 2.0 * floor1,
            memory_s,
            cpu_s,
            memory: run_memory,
        };
        Estimates { one, two, rates: *self }
    }
}

impl Estimates {
    /// Whether two passes should be taken although one would fit.
    pub fn two_is_faster(&self) -> bool {
        self.one.is_some_and(|one| self.two.seconds < one.seconds * (1.0 - TWO_PASS_MARGIN))
    }
}

/// The memory a two-pass sort of `bytes` uses when the budget would hold all of it.
pub fn two_pass_memory(bytes: u64, budget: u64) -> u64 {
    (bytes / TWO_PASS_INPUT_SHARE).max(TWO_PASS_MIN_MEMORY).min(budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn fresh_memory_tips_a_big_sort_to_two_passes_only_on_a_fast_disk_and_a_pool_tips_it_back() {
        // 4e7 records of 100 bytes, 2 threads: one pass holds 4.6 GiB of records and entries.
        let (bytes, records, load) = (4_000_000_000, 40_000_000, 46 * GIB / 10);
        let run_memory = two_pass_memory(bytes, 5 * GIB);
        let assumed = Rates::default();
        let e = assumed.estimate(bytes, records, 2, Some(Load::read(load)), run_memory);
        let one = e.one.unwrap();
        // floor1 = 4e9 / 2e9 + 4e9 / 2.5e9; the load's pages 4.6 GiB x 1.8 s / 2 threads.
        assert!((one.disk_s - 3.6).abs() < 1e-9);
        assert!((one.memory_s - 4.6 * 1.8 / 2.0).abs() < 1e-6);
        assert!((e.two.disk_s - 7.2).abs() < 1e-9);
        assert!(e.two.seconds < one.seconds, "{e:?}");
        // Faster, but not by the margin: one pass stays.
        assert!(!e.two_is_faster(), "{e:?}");
        // A disk twice as fast makes the second pass cheap next to populating 4.6 GiB.
        let fast = Rates { read_bps: 4e9, write_bps: 5e9, ..assumed };
        assert!(fast
            .estimate(bytes, records, 2, Some(Load::read(load)), run_memory)
            .two_is_faster());
        // With the load in a reserved pool, one pass is ahead again.
        let pooled = Rates { pool_free: 8 * GIB, ..fast };
        let e = pooled.estimate(bytes, records, 2, Some(Load::read(load)), run_memory);
        assert!(!e.two_is_faster(), "{e:?}");
        assert!(e.one.unwrap().seconds < e.two.seconds, "{e:?}");
    }

    #[test]
    fn mapped_records_cost_less_than_read_ones_but_not_nothing() {
        // 4e7 records of 100 bytes: 3.7 GiB of them mapped, their entries fresh.
        let (bytes, records, load) = (4_000_000_000, 40_000_000, 46 * GIB / 10);
        let mapped = Load { memory: load, mapped: bytes };
        let rates = Rates::default();
        let run_memory = two_pass_memory(bytes, 5 * GIB);
        let e = rates.estimate(bytes, records, 2, Some(mapped), run_memory);
        let one = e.one.unwrap();
        let gib = |b: u64| b as f64 / GIB as f64;
        let want = (gib(bytes) * MAPPED_S_PER_GIB + gib(load - bytes) * FRESH_S_PER_GIB) / 2.0;
        assert!((one.memory_s - want).abs() < 1e-6, "{one:?}");
        let read = rates.estimate(bytes, records, 2, Some(Load::read(load)), run_memory);
        assert!(one.memory_s < read.one.unwrap().memory_s);
        assert_eq!(one.memory, load, "the load holds what it holds, mapped or not");
        // One thread pays it alone: two passes win for a join's side of 2 GB.
        let side = rates.estimate(bytes / 2, records / 2, 1, Some(mapped_half(mapped)), 256 << 20);
        assert!(side.two_is_faster(), "{side:?}");
    }

    fn mapped_half(l: Load) -> Load {
        Load { memory: l.memory / 2, mapped: l.mapped / 2 }
    }

    #[test]
    fn small_sorts_stay_in_one_pass() {
        let e = Rates::default().estimate(
            100 << 20,
            1 << 20,
            2,
            Some(Load::read(120 << 20)),
            100 << 20,
        );
        assert!(!e.two_is_faster(), "{e:?}");
        // Nothing to compare when one pass does not fit.
        let e = Rates::default().estimate(100 << 30, 1 << 30, 2, None, 1 << 30);
        assert!(!e.two_is_faster());
    }

    #[test]
    fn two_pass_memory_is_an_eighth_of_the_input_within_bounds() {
        assert_eq!(two_pass_memory(4 * GIB, 5 * GIB), GIB / 2);
        assert_eq!(two_pass_memory(100 << 20, 5 * GIB), TWO_PASS_MIN_MEMORY);
        assert_eq!(two_pass_memory(80 * GIB, 5 * GIB), 5 * GIB);
        assert_eq!(two_pass_memory(20 * GIB, GIB), GIB);
    }
}

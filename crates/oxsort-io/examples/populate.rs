//! What fresh memory costs on this machine: maps GiB-sized buffers the way oxsort's big buffers
//! are mapped and times populating them (`AlignedBuf::prefault`, i.e. `MADV_POPULATE_WRITE`),
//! right after the previous buffer was freed and again after a pause.
//!
//! On a VM with free-page reporting the pause lets the host take the freed pages back, and the
//! next populate pays a host fault per page; with a hugetlb pool reserved
//! (`vm.nr_hugepages`) the pages stay backed and only the kernel's zeroing is left.
//!
//! ```text
//! cargo run --release -p oxsort-io --example populate -- [GIB] [PAUSE_S] [THREADS]
//! ```

use std::time::{Duration, Instant};

use oxsort_io::{bigmem, AlignedBuf};

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>().expect("numbers"));
    let gib = args.next().unwrap_or(4);
    let pause = args.next().unwrap_or(10);
    let threads = args.next().unwrap_or(1) as usize;
    let bytes = (gib << 30) as usize;
    println!("{gib} GiB, {threads} thread(s), pause {pause} s between rounds");
    for round in 0..4 {
        // Rounds 1 and 3 follow a pause after the previous buffer was freed.
        if round % 2 == 1 {
            std::thread::sleep(Duration::from_secs(pause));
        }
        let t = Instant::now();
        let mut b = AlignedBuf::new(bytes);
        b.prefault(threads);
        let s = t.elapsed().as_secs_f64();
        println!(
            "round {round} ({}): {:.3} s = {:.2} s per GiB; from the hugetlb pool: {} MiB",
            if round % 2 == 1 { "after a pause" } else { "right after a free" },
            s,
            s / gib as f64,
            bigmem::hugetlb_bytes() >> 20
        );
        drop(b);
    }
}

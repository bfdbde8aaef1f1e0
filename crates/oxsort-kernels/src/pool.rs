//! Rayon pools of a given size, built once and kept for the life of the process.

use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex, OnceLock};

/// Pools built so far, by thread count.
type Pools = Mutex<Vec<(usize, Arc<ThreadPool>)>>;

static POOLS: OnceLock<Pools> = OnceLock::new();

/// Runs `f` inside a rayon pool of `threads` threads.
///
/// If the caller already runs on a rayon pool of exactly that size, `f` runs right there (no
/// hop). Otherwise a pool of that size is built on first use and cached. Should the pool fail to
/// build (threads cannot be spawned), `f` runs on the current thread, where rayon calls use the
/// global pool.
pub(crate) fn run<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() && rayon::current_num_threads() == threads {
        return f();
    }
    match pool(threads) {
        Some(p) => p.install(f),
        None => f(),
    }
}

fn pool(threads: usize) -> Option<Arc<ThreadPool>> {
    let pools = POOLS.get_or_init(|| Mutex::new(Vec::new()));
    let mut pools = pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(t, _)| *t == threads) {
        return Some(Arc::clone(p));
    }
    let p = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("oxsort-kernels-{i}"))
            .build()
            .ok()?,
    );
    pools.push((threads, Arc::clone(&p)));
    Some(p)
}

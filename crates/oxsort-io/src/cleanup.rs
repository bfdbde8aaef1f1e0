//! Removal of temporary files and directories when the process is interrupted.
//!
//! [`TempDir`](crate::TempDir) and [`AtomicOutput`](crate::AtomicOutput) register their paths
//! in a process-wide registry while they live (a mutex-protected map; registering and
//! unregistering cost one uncontended lock). [`install_signal_handlers`] starts a thread that
//! waits for SIGINT/SIGTERM/SIGHUP, removes every registered path, and exits with status 130 / 143 / 129
//! (128 + the signal number), as shells expect.
//!
//! The signal itself is caught by `signal-hook`'s async-signal-safe handler, which only wakes
//! the waiting thread; the cleanup runs on that ordinary thread, where locks and file removal
//! are allowed. The thread keeps the registry locked until `exit`, and creations hold the lock
//! across `mkdir`/`open`, so nothing registered can appear after the cleanup ran.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// What a registry entry is, i.e. how to remove it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// A directory, removed with its contents.
    Dir,
    /// A single file.
    File,
}

/// Registered paths by id.
pub(crate) struct Registry {
    entries: HashMap<u64, (PathBuf, Kind)>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Locks the registry; creations hold this guard while they create the path they register.
pub(crate) fn lock() -> RegistryGuard {
    RegistryGuard(REGISTRY.lock().unwrap_or_else(|p| p.into_inner()))
}

/// A locked registry.
pub(crate) struct RegistryGuard(MutexGuard<'static, Option<Registry>>);

impl RegistryGuard {
    /// Registers `path` for removal on a signal; the id to unregister it with.
    pub(crate) fn register(&mut self, path: PathBuf, kind: Kind) -> u64 {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self.0
            .get_or_insert_with(|| Registry { entries: HashMap::new() })
            .entries
            .insert(id, (path, kind));
        id
    }
}

/// Removes entry `id` (after its owner removed or committed the path).
pub(crate) fn unregister(id: u64) {
    if let Some(r) = lock().0.as_mut() {
        r.entries.remove(&id);
    }
}

/// Removes a path of the given kind, ignoring errors (it may already be gone).
pub(crate) fn remove(path: &Path, kind: Kind) {
    match kind {
        Kind::File => {
            let _ = std::fs::remove_file(path);
        }
        Kind::Dir => {
            // A file created concurrently inside can make one pass fail with ENOTEMPTY.
            for _ in 0..3 {
                match std::fs::remove_dir_all(path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => continue,
                    _ => break,
                }
            }
        }
    }
}

/// Number of paths currently registered (for tests and leak checks).
pub fn registered_count() -> usize {
    lock().0.as_ref().map_or(0, |r| r.entries.len())
}

/// Installs SIGINT/SIGTERM/SIGHUP handling: on any of them, every registered temp directory
/// and uncommitted output is removed and the process exits with 128 + the signal (130 for
/// SIGINT, 143 for SIGTERM, 129 for SIGHUP: a closed terminal cleans up like Ctrl-C).
///
/// Idempotent; call it once early in `main`. If the handlers cannot be installed (which only
/// happens when the process is out of resources) a warning goes to stderr and the default
/// signal behaviour stays.
pub fn install_signal_handlers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let mut signals = match Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("oxsort: cannot install signal handlers: {e}");
                return;
            }
        };
        let spawned = std::thread::Builder::new().name("oxsort-signals".into()).spawn(move || {
            if let Some(sig) = signals.forever().next() {
                cleanup_and_exit(sig);
            }
        });
        if let Err(e) = spawned {
            eprintln!("oxsort: cannot start the signal thread: {e}");
        }
    });
}

fn cleanup_and_exit(sig: i32) -> ! {
    let guard = lock();
    if let Some(r) = guard.0.as_ref() {
        for (path, kind) in r.entries.values() {
            remove(path, *kind);
        }
    }
    // Exit with the registry still locked: no new temp path can be created from now on.
    std::process::exit(128 + sig)
}

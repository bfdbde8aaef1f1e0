//! Removal of temporary files and directories when the process is interrupted.
//!
//! [`TempDir`](crate::TempDir) and [`AtomicOutput`](crate::AtomicOutput) register their paths
//! in a process-wide registry while they live (a mutex-protected map; registering and
//! unregistering cost one uncontended lock). [`install_signal_handlers`] starts a thread that
//! waits for SIGINT/SIGTERM/SIGHUP, removes every registered path, and exits with status 130 / 143 / 129
//! (128 + the signal number), as shells expect.
//!
//! SIGPIPE (a write to a pipe whose reader has gone, `oxsort ... | head`) ends the process as it
//! ends a C program, after the same cleanup: killed by SIGPIPE (status 141 in the shell). Rust's
//! runtime ignores SIGPIPE before `main`, so the disposition the process was started with is
//! read before that, by a constructor: a parent that ignored SIGPIPE (`trap '' PIPE`) asked for
//! the write error instead, and gets it ([`sigpipe_ignored_at_start`]).
//!
//! The signal itself is caught by `signal-hook`'s async-signal-safe handler, which only wakes
//! the waiting thread; the cleanup runs on that ordinary thread, where locks and file removal
//! are allowed. The thread keeps the registry locked until `exit`, and creations hold the lock
//! across `mkdir`/`open`, so nothing registered can appear after the cleanup ran.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

use std::sync::atomic::AtomicBool;

use signal_hook::consts::{SIGHUP, SIGINT, SIGPIPE, SIGTERM};
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

/// Set by [`install_signal_handlers_when_needed`]: the handlers go in with the first path.
static WHEN_NEEDED: AtomicBool = AtomicBool::new(false);

/// Locks the registry; creations hold this guard while they create the path they register.
pub(crate) fn lock() -> RegistryGuard {
    if WHEN_NEEDED.load(Ordering::Relaxed) {
        // Before the path exists: a signal from now on removes it.
        install_signal_handlers();
    }
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
            // Renamed away first: a thread still forming runs can then add no file behind the
            // removal (the name it creates under leads nowhere), so one pass removes all, and
            // promptly however many runs there are. The staging name is one a sweep reclaims
            // should the removal itself be killed, so only a directory whose name a sweep
            // knows is renamed (a kept resume directory is removed where it is: its staging
            // name would be nobody's to reclaim).
            let mut gone = path.as_os_str().to_os_string();
            gone.push(crate::leftovers::STAGING_SUFFIX);
            let gone = PathBuf::from(gone);
            let sweepable = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(crate::leftovers::leftover_kind)
                .is_some();
            let path = if sweepable && std::fs::rename(path, &gone).is_ok() { &gone } else { path };
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

/// Installs SIGINT/SIGTERM/SIGHUP handling (for those not ignored when it is called: an
/// ignored one stays ignored, as GNU sort leaves it): on any of them, every registered temp directory
/// and uncommitted output is removed and the process exits with 128 + the signal (130 for
/// SIGINT, 143 for SIGTERM, 129 for SIGHUP: a closed terminal cleans up like Ctrl-C). SIGPIPE,
/// unless the process was started with it ignored, removes them too and then kills the process
/// with SIGPIPE ([`die_of_broken_pipe`]); the write that met the closed pipe fails with EPIPE
/// meanwhile, and whichever of the two gets to the cleanup first does it.
///
/// Idempotent; call it once early in `main`. If the handlers cannot be installed (which only
/// happens when the process is out of resources) a warning goes to stderr and the default
/// signal behaviour stays.
pub fn install_signal_handlers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // A signal the parent set to be ignored stays ignored, as GNU sort leaves it (a
        // script's background job ignores SIGINT: Ctrl-C is not for it).
        let mut wanted: Vec<i32> =
            [SIGINT, SIGTERM, SIGHUP].into_iter().filter(|&s| !ignored_now(s)).collect();
        if !sigpipe_ignored_at_start() {
            wanted.push(SIGPIPE);
        }
        if wanted.is_empty() {
            return;
        }
        let mut signals = match Signals::new(wanted) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("oxsort: cannot install signal handlers: {e}");
                return;
            }
        };
        let spawned =
            std::thread::Builder::new().name("oxsort-signals".into()).spawn(move || match signals
                .forever()
                .next()
            {
                Some(SIGPIPE) => die_of_broken_pipe(),
                Some(sig) => cleanup_and_exit(sig),
                None => {}
            });
        if let Err(e) = spawned {
            eprintln!("oxsort: cannot start the signal thread: {e}");
        }
    });
}

/// [`install_signal_handlers`], deferred until the first temp path or uncommitted output is
/// about to be made: until then a signal has nothing to clean up, and its default action ends
/// the process as it ends GNU sort (which re-raises it after its cleanup). A call that makes
/// no temp file (a small sort to standard output) then starts no signal thread at all.
pub fn install_signal_handlers_when_needed() {
    WHEN_NEEDED.store(true, Ordering::Relaxed);
}

/// Removes every registered path and returns the registry, still locked: no new temp path can
/// be created from now on. A second caller waits here until the first ends the process.
fn remove_all() -> RegistryGuard {
    let guard = lock();
    if let Some(r) = guard.0.as_ref() {
        for (path, kind) in r.entries.values() {
            remove(path, *kind);
        }
    }
    guard
}

fn cleanup_and_exit(sig: i32) -> ! {
    let _guard = remove_all();
    std::process::exit(128 + sig)
}

/// Ends the process as a closed pipe ends a C program: every registered temp directory and
/// uncommitted output is removed, then the process is killed by SIGPIPE (status 141 in the
/// shell). For a writer that met EPIPE, when [`sigpipe_ignored_at_start`] is false.
pub fn die_of_broken_pipe() -> ! {
    let _guard = remove_all();
    // SAFETY: restoring SIGPIPE's default action, unblocking it and raising it have no
    // preconditions; with the default action the raise ends the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(libc::SIGPIPE);
    }
    // Not reached; should the signal not end the process, the shell's status for it.
    std::process::exit(128 + SIGPIPE)
}

/// Whether `sig` is ignored now. Nothing in the process ignores SIGINT, SIGTERM or SIGHUP
/// before the handlers are installed, so for them this is the disposition the process was
/// started with.
fn ignored_now(sig: i32) -> bool {
    // SAFETY: `old` is writable memory of the right type; sigaction with a null new action
    // only reads the current one into it.
    unsafe {
        let mut old = std::mem::zeroed::<libc::sigaction>();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Whether SIGPIPE was ignored when the process started (its parent ignored it, as after
/// `trap '' PIPE`): then a write to a closed pipe is an error to report, not a death.
pub fn sigpipe_ignored_at_start() -> bool {
    SIGPIPE_IGNORED.load(Ordering::Relaxed)
}

/// A write to the closed output pipe `path` (`-` for standard output), met as a C program meets
/// it: unless SIGPIPE was ignored by the parent, the temp files are removed and the process dies
/// of SIGPIPE ([`die_of_broken_pipe`]); when it was ignored, returns the output's name for the
/// write error each door words (`standard output` for `-`).
pub fn closed_output(path: &std::path::Path) -> String {
    if !sigpipe_ignored_at_start() {
        die_of_broken_pipe();
    }
    if path.as_os_str() == "-" {
        "standard output".to_string()
    } else {
        path.display().to_string()
    }
}

/// Set by [`record_sigpipe`] before `main`.
static SIGPIPE_IGNORED: AtomicBool = AtomicBool::new(false);

/// Reads SIGPIPE's disposition as the process was started, before Rust's runtime sets it to
/// "ignore" (which it does inside `main`, after the constructors ran).
extern "C" fn record_sigpipe() {
    // SAFETY: `old` is writable memory of the right type; sigaction with a null new action
    // only reads the current one into it.
    let ignored = unsafe {
        let mut old = std::mem::zeroed::<libc::sigaction>();
        libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    };
    SIGPIPE_IGNORED.store(ignored, Ordering::Relaxed);
}

/// Runs [`record_sigpipe`] as a constructor of the executable (the C runtime calls the
/// functions of `.init_array` before `main`).
#[used]
#[link_section = ".init_array"]
static RECORD_SIGPIPE: extern "C" fn() = record_sigpipe;

//! io_uring backend: a per-pipeline ring, with the buffers of in-flight operations owned here.
//!
//! Support is probed once per process ([`probe`]): ring setup (fails under seccomp filters, with
//! `kernel.io_uring_disabled`, or before Linux 5.1), the opcode probe for `IORING_OP_READ` and
//! `IORING_OP_WRITE` (Linux 5.6), and one `NOP` round trip.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use io_uring::{opcode, types, IoUring, Probe};

use crate::buf::{align_up, AlignedBuf};
use crate::error::IoError;
use crate::file::DirectFile;
use crate::op::{run_sync, BusyClock, Dir, Done, Op};
use crate::tuning::{
    DIRECT_ALIGN, MAX_DEPTH, URING_CANCEL_GRACE, URING_ENTRIES_PER_OP, URING_STALL,
    URING_WAIT_SLICE,
};

/// `user_data` bit of the cancel requests [`UringEngine::unstick`] submits: their CQEs name no
/// slot, so `reap` passes over them.
const CANCEL_TAG: u64 = 1 << 63;

/// Whether io_uring can be used by this process, probed once and cached: `Err` says why not.
pub fn probe() -> Result<(), String> {
    static ANSWER: OnceLock<Result<(), String>> = OnceLock::new();
    ANSWER.get_or_init(probe_now).clone()
}

fn probe_now() -> Result<(), String> {
    let mut ring = IoUring::new(2).map_err(|e| format!("io_uring_setup failed: {e}"))?;
    let mut p = Probe::new();
    ring.submitter()
        .register_probe(&mut p)
        .map_err(|e| format!("io_uring opcode probe failed (kernel older than 5.6?): {e}"))?;
    for (name, code) in [("READ", opcode::Read::CODE), ("WRITE", opcode::Write::CODE)] {
        if !p.is_supported(code) {
            return Err(format!("io_uring opcode IORING_OP_{name} not supported"));
        }
    }
    let nop = opcode::Nop::new().build().user_data(7);
    // SAFETY: a NOP references no memory.
    unsafe { ring.submission().push(&nop) }.map_err(|_| "io_uring queue full".to_string())?;
    ring.submit_and_wait(1).map_err(|e| format!("io_uring submit failed: {e}"))?;
    let cqe = ring.completion().next().map(|c| (c.user_data(), c.result()));
    match cqe {
        Some((7, res)) if res >= 0 => Ok(()),
        other => Err(format!("io_uring NOP did not complete as expected: {other:?}")),
    }
}

/// One ring driving the transfers of one pipeline.
///
/// Every submitted [`Op`] sits in `slots` (its index is the SQE's `user_data`) until its CQE is
/// reaped, so the buffer the kernel reads or writes stays alive and untouched; `Drop` waits for
/// all of them.
///
/// A completion that never comes must not hang the sort. When nothing completes for
/// [`URING_STALL`] while ops are in the kernel, the engine names them on stderr and asks the
/// kernel to cancel them; a cancelled op is redone with positional I/O. An op still not back
/// [`URING_CANCEL_GRACE`] later is abandoned: its slot is retired and its buffer leaked (the
/// kernel may still touch it), and the transfer is redone from a fresh buffer.
///
/// ```text
///   submitted ──CQE──▶ reaped ──▶ ready
///       │ no CQE for URING_STALL
///       ▼
///   cancel asked ──CQE (-ECANCELED)──▶ redone synchronously ──▶ ready
///       │ no CQE for URING_CANCEL_GRACE
///       ▼
///   abandoned: slot retired, buffer leaked, redone from a fresh buffer ──▶ ready
/// ```
pub(crate) struct UringEngine {
    ring: IoUring,
    file: Arc<DirectFile>,
    slots: Vec<Option<Op>>,
    free_slots: Vec<usize>,
    /// Completions ready to be returned (reaped CQEs, synchronous fallbacks, injected faults).
    ready: VecDeque<Done>,
    /// Ops the kernel owns.
    in_kernel: usize,
    clock: Arc<BusyClock>,
    /// Whether the kernel takes a timeout with `io_uring_enter` (`IORING_FEAT_EXT_ARG`, 5.11):
    /// without it, waits are unbounded and stalls cannot be detected.
    timed_waits: bool,
    /// When a completion last arrived, or the first op entered an idle ring.
    last_progress: Instant,
    /// When the pending ops were asked to cancel, if they were.
    cancel_asked: Option<Instant>,
    /// How long without a completion counts as a stall, and how long a cancel may take.
    stall: Duration,
    cancel_grace: Duration,
    /// Ops recovered from a stall: (cancelled and redone, abandoned and redone).
    recovered: (usize, usize),
}

impl UringEngine {
    pub(crate) fn new(
        file: &Arc<DirectFile>,
        depth: usize,
        clock: &Arc<BusyClock>,
    ) -> io::Result<Self> {
        let depth = depth.clamp(1, MAX_DEPTH);
        let ring = IoUring::new(depth as u32 * URING_ENTRIES_PER_OP)?;
        let timed_waits = ring.params().is_feature_ext_arg();
        Ok(UringEngine {
            ring,
            file: file.clone(),
            slots: (0..depth).map(|_| None).collect(),
            free_slots: (0..depth).rev().collect(),
            ready: VecDeque::new(),
            in_kernel: 0,
            clock: clock.clone(),
            timed_waits,
            last_progress: Instant::now(),
            cancel_asked: None,
            stall: URING_STALL,
            cancel_grace: URING_CANCEL_GRACE,
            recovered: (0, 0),
        })
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.in_kernel + self.ready.len()
    }

    pub(crate) fn complete_now(&mut self, d: Done) {
        self.ready.push_back(d);
    }

    /// Finishes `op` synchronously (unaligned pieces the kernel would refuse with `O_DIRECT`).
    fn run_now(&mut self, mut op: Op) {
        self.clock.begin();
        let r = run_sync(&self.file, &mut op);
        self.clock.end();
        self.ready.push_back(Done::new(op, r));
    }

    pub(crate) fn submit(&mut self, mut op: Op) {
        let direct = self.file.is_direct();
        // Direct transfers need an aligned offset; a read may round its length up to the block
        // (reading past the range or EOF is harmless), a write may not.
        let kernel_len = match op.dir {
            Dir::Read if direct => align_up(op.len),
            _ => op.len,
        };
        let aligned = op.offset % DIRECT_ALIGN as u64 == 0 && kernel_len % DIRECT_ALIGN == 0;
        if (direct && !aligned) || kernel_len > op.buf.len() || op.len == 0 {
            return self.run_now(op);
        }
        let Some(slot) = self.free_slots.pop() else {
            // More ops than the depth the ring was built for: the caller bounds this, but stay
            // correct regardless.
            return self.run_now(op);
        };
        let fd = types::Fd(self.file.raw_fd());
        let entry = match op.dir {
            Dir::Read => opcode::Read::new(fd, op.buf.as_mut_ptr(), kernel_len as u32)
                .offset(op.offset)
                .build(),
            Dir::Write => {
                opcode::Write::new(fd, op.buf.as_ptr(), op.len as u32).offset(op.offset).build()
            }
        };
        self.push(slot, op, entry)
    }

    fn push(&mut self, slot: usize, op: Op, entry: io_uring::squeue::Entry) {
        let entry = entry.user_data(slot as u64);
        // The op (and its buffer) moves into its slot *before* the kernel sees the pointer.
        self.slots[slot] = Some(op);
        // SAFETY: the SQE points into the buffer of `self.slots[slot]`, which stays there,
        // unmoved (AlignedBuf's heap memory does not move with the struct) and not accessed,
        // until its CQE is reaped in `reap`; `Drop` waits for all CQEs before freeing anything.
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            // Cannot happen: the ring has at least one entry per slot and we submit at once.
            let op = self.slots[slot].take().expect("slot just filled");
            self.free_slots.push(slot);
            return self.run_now(op);
        }
        if self.in_kernel == 0 {
            self.last_progress = Instant::now();
        }
        self.in_kernel += 1;
        self.clock.begin();
        loop {
            match self.ring.submit() {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // EAGAIN/EBUSY: the SQE stays queued and goes with the next submit_and_wait.
                Err(_) => break,
            }
        }
    }

    /// Moves every available CQE into `ready`.
    fn reap(&mut self) {
        let cqes: Vec<(u64, i32)> =
            self.ring.completion().map(|c| (c.user_data(), c.result())).collect();
        let before = self.in_kernel;
        for (slot, res) in cqes {
            let slot = slot as usize;
            let Some(op) = self.slots.get_mut(slot).and_then(Option::take) else { continue };
            if res == -libc::ECANCELED && self.cancel_asked.is_some() {
                self.recovered.0 += 1;
            }
            self.free_slots.push(slot);
            self.in_kernel -= 1;
            self.clock.end();
            let d = self.finish(op, res);
            self.ready.push_back(d);
        }
        if self.in_kernel < before {
            self.last_progress = Instant::now();
        }
    }

    /// Turns a CQE result into a completion, finishing short or refused transfers synchronously.
    fn finish(&self, mut op: Op, res: i32) -> Done {
        let file = &*self.file;
        if res < 0 {
            let errno = -res;
            if matches!(
                errno,
                libc::EINVAL | libc::EAGAIN | libc::EINTR | libc::EOPNOTSUPP | libc::ECANCELED
            ) {
                // Refused by this file/kernel combination, transient, or cancelled by `unstick`:
                // positional I/O knows the buffered fallbacks.
                let r = run_sync(file, &mut op);
                return Done::new(op, r);
            }
            let e = io::Error::from_raw_os_error(errno);
            let r = match op.dir {
                Dir::Read => Err(IoError::read(file.path(), op.offset, e)),
                Dir::Write => Err(IoError::write(file.path(), op.offset, e)),
            };
            return Done::new(op, r);
        }
        let n = (res as usize).min(op.len);
        if n == op.len || (op.dir == Dir::Read && n == 0) {
            return Done::new(op, Ok(n));
        }
        // Short transfer: the rest with positional I/O (which stops at EOF for reads).
        let (off, len) = (op.offset + n as u64, op.len);
        let r = match op.dir {
            Dir::Read => file.read_at_uncounted(&mut op.buf[n..len], off).map(|m| n + m),
            Dir::Write => file.write_at_uncounted(&op.buf[n..len], off).map(|()| len),
        };
        Done::new(op, r)
    }

    pub(crate) fn poll(&mut self) -> Option<Done> {
        if self.ready.is_empty() && self.in_kernel > 0 {
            self.reap();
        }
        self.ready.pop_front()
    }

    pub(crate) fn wait(&mut self) -> Option<Done> {
        while self.ready.is_empty() && self.in_kernel > 0 {
            if let Err(e) = self.enter() {
                if !matches!(e.raw_os_error(), Some(libc::EINTR | libc::EBUSY | libc::ETIME)) {
                    // The ring itself failed: nothing sensible to do but report every pending
                    // op as failed once its CQE arrives, so keep waiting; make that visible.
                    eprintln!("oxsort-io: io_uring_enter failed: {e}");
                    std::thread::yield_now();
                }
            }
            self.reap();
            if self.ready.is_empty() && self.in_kernel > 0 {
                self.unstick();
            }
        }
        self.ready.pop_front()
    }

    /// Submits what is queued and waits for one completion, at most [`URING_WAIT_SLICE`] when
    /// the kernel takes a timeout (`ETIME` then).
    fn enter(&mut self) -> io::Result<usize> {
        if !self.timed_waits {
            return self.ring.submit_and_wait(1);
        }
        let ts = types::Timespec::from(URING_WAIT_SLICE.min(self.stall));
        let args = types::SubmitArgs::new().timespec(&ts);
        self.ring.submitter().submit_with_args(1, &args)
    }

    /// Recovers from ops that made no progress: asks the kernel to cancel them after
    /// [`URING_STALL`], abandons those still out [`URING_CANCEL_GRACE`] later.
    fn unstick(&mut self) {
        if self.last_progress.elapsed() < self.stall {
            self.cancel_asked = None;
            return;
        }
        match self.cancel_asked {
            None => self.ask_cancel(),
            Some(asked) if asked.elapsed() >= self.cancel_grace => self.abandon(),
            Some(_) => {}
        }
    }

    /// Names every op in the kernel on stderr and asks the kernel to cancel it.
    fn ask_cancel(&mut self) {
        for (slot, op) in self.slots.iter().enumerate() {
            let Some(op) = op else { continue };
            eprintln!(
                "oxsort-io: {} of {} at offset {} ({} bytes) made no progress for {} s: \
                 cancelling it and redoing it without io_uring",
                match op.dir {
                    Dir::Read => "read",
                    Dir::Write => "write",
                },
                self.file.path().display(),
                op.offset,
                op.len,
                self.stall.as_secs_f64()
            );
            let cancel =
                opcode::AsyncCancel::new(slot as u64).build().user_data(CANCEL_TAG | slot as u64);
            // SAFETY: a cancel request references no memory of ours.
            let _ = unsafe { self.ring.submission().push(&cancel) };
        }
        let _ = self.ring.submit();
        self.cancel_asked = Some(Instant::now());
    }

    /// Gives up on every op still in the kernel: each slot is retired (a late CQE finds it
    /// empty), each buffer leaked (the kernel may still read or write it), and each transfer
    /// redone synchronously from a fresh buffer (holding a copy of the data, for a write).
    fn abandon(&mut self) {
        for slot in 0..self.slots.len() {
            let Some(mut op) = self.slots[slot].take() else { continue };
            let mut fresh = AlignedBuf::new(op.buf.len());
            if op.dir == Dir::Write {
                fresh[..op.len].copy_from_slice(&op.buf[..op.len]);
            }
            std::mem::forget(std::mem::replace(&mut op.buf, fresh));
            eprintln!(
                "oxsort-io: io_uring did not give back the transfer of {} at offset {}: \
                 redone without it",
                self.file.path().display(),
                op.offset
            );
            self.in_kernel -= 1;
            self.clock.end();
            self.recovered.1 += 1;
            self.run_now(op);
        }
        self.cancel_asked = None;
        self.last_progress = Instant::now();
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // The kernel may still write into the buffers of in-flight ops: wait for every CQE before
        // the slots (and their buffers) are freed. If the ring cannot be waited on, or the ops
        // stall past a cancel's grace, leak the buffers rather than free memory the kernel may
        // still write.
        let mut failures = 0;
        let give_up = self.stall + self.cancel_grace;
        while self.in_kernel > 0 {
            match self.enter() {
                Ok(_) => failures = 0,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::ETIME)) => {}
                Err(_) => failures += 1,
            }
            self.reap();
            let stalled = self.last_progress.elapsed() >= self.stall;
            if self.in_kernel > 0 && stalled && self.cancel_asked.is_none() {
                self.ask_cancel();
            }
            if failures > 100 || self.last_progress.elapsed() >= give_up {
                for op in self.slots.iter_mut().filter_map(Option::take) {
                    std::mem::forget(op.buf);
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::IoOptions;
    use std::io::Write;

    /// A read from a FIFO nobody writes to, in the ring of an engine with stall timeouts of
    /// 200 ms: the kernel holds it without completing it, as a lost completion would.
    struct Stalled {
        engine: UringEngine,
        /// The FIFO's writing end, for the test to write to late.
        writer: std::fs::File,
        _dir: tempfile::TempDir,
    }

    /// A [`Stalled`] read, or `None` (the test is skipped, and says so) where io_uring or its
    /// timed waits are unavailable.
    fn stalled_read() -> Option<Stalled> {
        let ready = || -> Option<Stalled> {
            probe().ok()?;
            let dir = tempfile::tempdir().ok()?;
            let path = dir.path().join("fifo");
            let c = std::ffi::CString::new(path.to_str()?).ok()?;
            // SAFETY: `c` is a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            // Opened read-write first (never blocks on a FIFO), so the reader's open does not
            // wait.
            let writer = std::fs::OpenOptions::new().read(true).write(true).open(&path).ok()?;
            let file = Arc::new(DirectFile::open(&path, &IoOptions::default()).ok()?);
            let mut engine = UringEngine::new(&file, 2, &BusyClock::new()).ok()?;
            if !engine.timed_waits {
                return None;
            }
            engine.stall = Duration::from_millis(200);
            engine.cancel_grace = engine.stall;
            let buf = AlignedBuf::new(4096);
            engine.submit(Op { seq: 0, dir: Dir::Read, offset: 0, len: 4096, buf });
            assert_eq!(engine.in_kernel, 1, "the read went to the ring");
            Some(Stalled { engine, writer, _dir: dir })
        };
        let stalled = ready();
        if stalled.is_none() {
            eprintln!("io_uring with timed waits unavailable: skipped");
        }
        stalled
    }

    #[test]
    fn a_transfer_the_kernel_never_completes_is_cancelled_and_redone() {
        let Some(Stalled { engine: mut e, mut writer, _dir }) = stalled_read() else { return };
        // The data (then end of file) arrives only long after the stall: without recovery the
        // ring's read would take it, and the cancel count would stay 0.
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(2));
            writer.write_all(b"late bytes").unwrap();
        });
        let done = e.wait().expect("the stalled read comes back");
        assert_eq!(e.recovered, (1, 0), "cancelled and redone, not abandoned");
        assert_eq!(done.op.offset, 0);
        let n = done.result.expect("the redone read succeeds");
        assert_eq!(&done.op.buf[..n], b"late bytes");
        assert_eq!(e.in_flight(), 0);
        late.join().unwrap();
    }

    #[test]
    fn a_transfer_that_does_not_answer_its_cancel_is_abandoned_and_redone() {
        let Some(Stalled { engine: mut e, mut writer, _dir }) = stalled_read() else { return };
        // As if the cancel had been asked long ago and nothing came back.
        e.cancel_asked = Some(Instant::now() - Duration::from_secs(60));
        e.last_progress = Instant::now() - Duration::from_secs(60);
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            writer.write_all(b"late bytes").unwrap();
        });
        let done = e.wait().expect("the abandoned read comes back");
        assert_eq!(e.recovered, (0, 1), "abandoned and redone");
        assert_eq!(e.free_slots.len(), 1, "the abandoned slot is retired");
        // The ring's read, still armed, and the redone read race for the bytes; the redone
        // read ends at end of file either way.
        let n = done.result.expect("the redone read succeeds");
        assert!(n == 0 || &done.op.buf[..n] == b"late bytes", "{n} bytes");
        assert_eq!(e.in_flight(), 0);
        late.join().unwrap();
    }
}

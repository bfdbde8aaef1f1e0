//! io_uring backend: a per-pipeline ring, with the buffers of in-flight operations owned here.
//!
//! Support is probed once per process ([`probe`]): ring setup (fails under seccomp filters, with
//! `kernel.io_uring_disabled`, or before Linux 5.1), the opcode probe for `IORING_OP_READ` and
//! `IORING_OP_WRITE` (Linux 5.6), and one `NOP` round trip.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, OnceLock};

use io_uring::{opcode, types, IoUring, Probe};

use crate::buf::align_up;
use crate::error::IoError;
use crate::file::DirectFile;
use crate::op::{run_sync, BusyClock, Dir, Done, Op};
use crate::tuning::{DIRECT_ALIGN, MAX_DEPTH, URING_ENTRIES_PER_OP};

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
}

impl UringEngine {
    pub(crate) fn new(
        file: &Arc<DirectFile>,
        depth: usize,
        clock: &Arc<BusyClock>,
    ) -> io::Result<Self> {
        let depth = depth.clamp(1, MAX_DEPTH);
        let ring = IoUring::new(depth as u32 * URING_ENTRIES_PER_OP)?;
        Ok(UringEngine {
            ring,
            file: file.clone(),
            slots: (0..depth).map(|_| None).collect(),
            free_slots: (0..depth).rev().collect(),
            ready: VecDeque::new(),
            in_kernel: 0,
            clock: clock.clone(),
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
        for (slot, res) in cqes {
            let slot = slot as usize;
            let Some(op) = self.slots.get_mut(slot).and_then(Option::take) else { continue };
            self.free_slots.push(slot);
            self.in_kernel -= 1;
            self.clock.end();
            let d = self.finish(op, res);
            self.ready.push_back(d);
        }
    }

    /// Turns a CQE result into a completion, finishing short or refused transfers synchronously.
    fn finish(&self, mut op: Op, res: i32) -> Done {
        let file = &*self.file;
        if res < 0 {
            let errno = -res;
            if matches!(errno, libc::EINVAL | libc::EAGAIN | libc::EINTR | libc::EOPNOTSUPP) {
                // Refused by this file/kernel combination, or transient: positional I/O knows
                // the buffered fallbacks.
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
            if let Err(e) = self.ring.submit_and_wait(1) {
                if e.raw_os_error() != Some(libc::EINTR) && e.raw_os_error() != Some(libc::EBUSY) {
                    // The ring itself failed: nothing sensible to do but report every pending
                    // op as failed once its CQE arrives, so keep waiting; make that visible.
                    eprintln!("oxsort-io: io_uring_enter failed: {e}");
                    std::thread::yield_now();
                }
            }
            self.reap();
        }
        self.ready.pop_front()
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // The kernel may still write into the buffers of in-flight ops: wait for every CQE before
        // the slots (and their buffers) are freed. If the ring cannot be waited on, leak the
        // buffers rather than free memory the kernel may still write.
        let mut failures = 0;
        while self.in_kernel > 0 {
            match self.ring.submit_and_wait(1) {
                Ok(_) => failures = 0,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(_) => failures += 1,
            }
            self.reap();
            if failures > 100 {
                for op in self.slots.iter_mut().filter_map(Option::take) {
                    std::mem::forget(op.buf);
                }
                break;
            }
        }
    }
}

//! Pipes between stages of one process (a JOINKEYS job's sorts, join and main task), made as
//! large as the system lets an unprivileged process make them.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A pipe of about `bytes` (the kernel rounds to pages; a system limit below it leaves the
/// default of 64 KiB, which works, only with more switches between writer and reader):
/// `(read end, write end)`.
pub fn sized_pipe(bytes: usize) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the two-element array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened by pipe2 and are owned by nothing else.
    let (rx, tx) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let want = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: F_SETPIPE_SZ on a descriptor owned here, with an integer argument; it touches no
    // memory of this process. Its failure is ignored on purpose (see above).
    unsafe {
        libc::fcntl(tx.as_raw_fd(), libc::F_SETPIPE_SZ, want);
    }
    Ok((rx, tx))
}

/// Keeps a write to a pipe whose reader has gone from ending the process: SIGPIPE is blocked in
/// the calling thread (and the threads it starts), so such a write fails with EPIPE instead.
/// For a thread that writes only to the process's own pipes (a stage feeding another stage,
/// which may stop reading when it fails): its error is then a consequence of the reader's,
/// reported as such, where the process-wide SIGPIPE handling would end the process silently.
/// The signal stays pending on the thread and goes with it.
pub fn quiet_broken_pipe() {
    // SAFETY: the sets are initialized by sigemptyset/sigaddset before use; pthread_sigmask
    // changes only the calling thread's mask and reads the set it is given.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_quiet_thread_gets_epipe_from_a_pipe_without_a_reader() {
        let (rx, tx) = sized_pipe(1 << 16).unwrap();
        drop(rx);
        let e = std::thread::spawn(move || {
            quiet_broken_pipe();
            std::fs::File::from(tx).write_all(b"x").unwrap_err()
        })
        .join()
        .unwrap();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn a_sized_pipe_carries_more_than_its_size_in_order() {
        let (rx, tx) = sized_pipe(1 << 20).unwrap();
        let data: Vec<u8> = (0..3 << 20).map(|i: u32| (i * 7 + i / 251) as u8).collect();
        let sent = data.clone();
        let writer = std::thread::spawn(move || std::fs::File::from(tx).write_all(&sent));
        let mut got = Vec::new();
        std::fs::File::from(rx).read_to_end(&mut got).unwrap();
        writer.join().unwrap().unwrap();
        assert!(got == data);
    }
}

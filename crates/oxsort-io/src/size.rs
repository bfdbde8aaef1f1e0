//! Whether a file's length, as `stat` gives it, is the number of bytes a read will return.
//!
//! A regular file on a disk file system holds exactly `st_size` bytes. Files of the kernel's
//! pseudo file systems (`/proc`, `/sys`, debugfs, ...) are made as they are read: `stat` says 0
//! (or a page, or anything) whatever a read returns. An empty regular file may also be one
//! that another process is filling. Such inputs are read as streams, to their end, and their
//! length is only known then:
//!
//! ```text
//!   stat: regular, st_size > 0, on a disk file system  ->  Some(st_size): read 0..st_size
//!   anything else (FIFO, device, /proc, /sys, empty)   ->  None: read to the end
//! ```

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `statfs` magic numbers of file systems whose file sizes are made up: procfs, sysfs, debugfs,
/// tracefs, securityfs, configfs, cgroup (v1 and v2), bpffs, pstore, efivarfs. Their files are
/// generated when read; `st_size` is 0 or a guess (sysfs says 4096 for most attributes).
const MADE_UP_SIZES: [u64; 11] = [
    0x9fa0,      // PROC_SUPER_MAGIC
    0x6265_6572, // SYSFS_MAGIC
    0x6462_6720, // DEBUGFS_MAGIC
    0x7472_6163, // TRACEFS_MAGIC
    0x7363_6673, // SECURITYFS_MAGIC
    0x6265_6570, // CONFIGFS_MAGIC
    0x0027_e0eb, // CGROUP_SUPER_MAGIC
    0x6367_7270, // CGROUP2_SUPER_MAGIC
    0xcafe_4a11, // BPF_FS_MAGIC
    0x6165_676c, // PSTOREFS_MAGIC
    0xde5e_81e4, // EFIVARFS_MAGIC
];

/// Whether a `statfs` result describes a file system whose file sizes are made up.
fn made_up(st: &libc::statfs) -> bool {
    // The field's type differs between targets; only the low 32 bits hold a magic number.
    #[allow(clippy::unnecessary_cast)]
    let magic = (st.f_type as u64) & 0xffff_ffff;
    MADE_UP_SIZES.contains(&magic)
}

/// The number of bytes a read of `path` will return, when `stat` can tell it without opening
/// the file: `Some(len)` for a non-empty regular file on a file system whose sizes are real,
/// `None` for anything read as a stream (see the module documentation). Follows symlinks.
pub fn trusted_size(path: &Path) -> io::Result<Option<u64>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() || meta.len() == 0 {
        return Ok(None);
    }
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `c` is a valid NUL-terminated path and `st` points to writable memory of the
    // right type; statfs initializes it on success (checked before assume_init).
    if unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statfs returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    Ok((!made_up(&st)).then_some(meta.len()))
}

/// [`trusted_size`] of an open file.
pub(crate) fn trusted_size_of(file: &std::fs::File) -> io::Result<Option<u64>> {
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() == 0 {
        return Ok(None);
    }
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: the descriptor is open for the life of `file`; `st` points to writable memory of
    // the right type, which fstatfs initializes on success (checked before assume_init).
    if unsafe { libc::fstatfs(file.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatfs returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    Ok((!made_up(&st)).then_some(meta.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_files_are_trusted_and_proc_files_empty_files_and_fifos_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let full = dir.path().join("full");
        std::fs::write(&full, b"abc\n").unwrap();
        assert_eq!(trusted_size(&full).unwrap(), Some(4));
        let f = std::fs::File::open(&full).unwrap();
        assert_eq!(trusted_size_of(&f).unwrap(), Some(4));
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert_eq!(trusted_size(&empty).unwrap(), None);
        // /proc/self/status is a regular file of size 0 that reads as hundreds of bytes.
        let status = Path::new("/proc/self/status");
        assert_eq!(trusted_size(status).unwrap(), None);
        assert_eq!(trusted_size_of(&std::fs::File::open(status).unwrap()).unwrap(), None);
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(trusted_size(&fifo).unwrap(), None);
        assert!(trusted_size(&dir.path().join("missing")).is_err());
    }
}

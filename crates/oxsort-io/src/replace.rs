//! Replacing an output file as GNU sort does: what is looked at before any work
//! ([`inspect_output`]) and what the finished temporary takes from the file it replaces.
//!
//! GNU sort opens its output and writes it, so the file keeps its inode, mode, owner, group,
//! ACL and hard links, a symlink is written through, and a file the caller may not write is
//! refused. oxsort writes a temporary and renames it over the output instead (readers never see
//! half a file, a failed sort leaves the old one), so the temporary is made to look like the
//! file it replaces:
//!
//! ```text
//!  -o LINK ─follow the chain─▶ TARGET          (the temporary goes next to TARGET)
//!  TARGET exists, caller may not write it      refused before any work (EACCES)
//!  TARGET has other hard links                 ┐
//!  its directory refuses the rename            ├ written in place after the sort is verified:
//!   (not writable; sticky, not ours)           │ the finished temporary is copied over TARGET
//!  its owner or group cannot be given back     ┘
//!  otherwise                                   temporary (mode 0600 while written) gets
//!                                              TARGET's mode, owner, group, ACL and security
//!                                              xattrs, then is renamed over TARGET; a new
//!                                              file gets 0666 & ~umask
//! ```

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::IoError;

/// Symlinks followed from an output name before giving up (`ELOOP`), as the kernel's own limit.
pub const MAX_SYMLINK_HOPS: usize = 40;

/// Longest file name the filesystems oxsort writes to take (`NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// Extended attributes copied from a replaced output to its replacement (by name prefix):
/// the access ACL and the security labels. Default ACLs belong to directories only.
const COPIED_XATTRS: [&[u8]; 2] = [b"system.posix_acl_access", b"security."];

/// Why an output is written in place rather than replaced by a rename.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InPlace {
    /// The file has this many hard links: a rename would leave the others on the old data.
    HardLinks(u64),
    /// The directory is sticky and neither it nor the file is the caller's: a rename is refused.
    StickyDirectory,
    /// The caller may write the file but not its directory: nothing can be renamed there.
    DirectoryNotWritable,
    /// The file's owner or group is one the caller cannot give a new file.
    Owner,
}

impl std::fmt::Display for InPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InPlace::HardLinks(n) => write!(f, "it has {n} hard links"),
            InPlace::StickyDirectory => f.write_str("its sticky directory refuses a rename"),
            InPlace::DirectoryNotWritable => f.write_str("its directory is not writable"),
            InPlace::Owner => f.write_str("its owner or group could not be kept by a new file"),
        }
    }
}

/// An output file as it is before the sort: where it really is and how it is replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    /// The file written: the name given with its symlinks followed to the end of the chain.
    pub target: PathBuf,
    /// Whether the target exists now.
    pub exists: bool,
    /// Why it is written in place, when it is; `None`: a temporary is renamed over it.
    pub in_place: Option<InPlace>,
}

impl OutputFile {
    /// The target's directory (`.` for a bare name).
    pub fn dir(&self) -> PathBuf {
        parent_dir(&self.target)
    }
}

/// Looks at the output `path` (a regular file or nothing yet) before any work: follows its
/// symlinks, and says how it will be replaced. Refuses, as GNU sort does, a name with a trailing
/// slash that is not a directory, an existing file the caller may not write, and a new file in
/// a directory the caller may not write.
pub fn inspect_output(path: &Path) -> Result<OutputFile, IoError> {
    if ends_with_slash(path) {
        // open(2) of "name/" for writing: the kernel's word for it.
        return Err(IoError::open(path, io::Error::from_raw_os_error(libc::EISDIR)));
    }
    let target = follow_links(path).map_err(|e| IoError::open(path, e))?;
    let dir = parent_dir(&target);
    let existing = match std::fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(IoError::open(path, e)),
    };
    const CHECKING_DIR: &str = "checking the output directory";
    let dir_meta = std::fs::metadata(&dir).map_err(|e| IoError::other(CHECKING_DIR, &dir, e))?;
    if !dir_meta.is_dir() {
        return Err(IoError::other(
            CHECKING_DIR,
            &dir,
            io::Error::from_raw_os_error(libc::ENOTDIR),
        ));
    }
    let dir_writable = access(&dir, libc::W_OK | libc::X_OK);
    let Some(m) = existing else {
        dir_writable.map_err(|e| IoError::other(CHECKING_DIR, &dir, e))?;
        return Ok(OutputFile { target, exists: false, in_place: None });
    };
    access(&target, libc::W_OK).map_err(|e| IoError::open(path, e))?;
    let me = euid();
    let in_place = if m.nlink() > 1 {
        Some(InPlace::HardLinks(m.nlink()))
    } else if dir_writable.is_err() {
        Some(InPlace::DirectoryNotWritable)
    } else if me != 0
        && dir_meta.mode() & libc::S_ISVTX != 0
        && dir_meta.uid() != me
        && m.uid() != me
    {
        Some(InPlace::StickyDirectory)
    } else if me != 0 && (m.uid() != me || !in_groups(m.gid())) {
        Some(InPlace::Owner)
    } else {
        None
    };
    Ok(OutputFile { target, exists: true, in_place })
}

/// Whether `path` ends with `/` (and is not just `/`).
fn ends_with_slash(path: &Path) -> bool {
    let b = path.as_os_str().as_bytes();
    b.len() > 1 && b.ends_with(b"/") && !path.is_dir()
}

/// `path` with every symlink in its last component followed (relative targets from the link's
/// directory). A dangling link gives the path it points to: the output is created there.
pub fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(d) if !to.is_absolute() && !d.as_os_str().is_empty() => d.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// The directory holding `p` (`.` for a bare name).
pub(crate) fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `faccessat(path, how, AT_EACCESS)`: may this process (its effective ids) do `how`?
fn access(path: &Path, how: libc::c_int) -> io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    // SAFETY: `c` is a valid NUL-terminated path string; faccessat only reads it.
    if unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), how, libc::AT_EACCESS) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether `gid` is this process's effective group or one of its supplementary groups.
fn in_groups(gid: u32) -> bool {
    // SAFETY: getegid has no preconditions and cannot fail.
    if unsafe { libc::getegid() } == gid {
        return true;
    }
    // SAFETY: with a size of 0 getgroups only returns the count and writes nothing.
    let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    if n <= 0 {
        return false;
    }
    let mut groups = vec![0 as libc::gid_t; n as usize];
    // SAFETY: `groups` has room for `n` entries, the size passed.
    let n = unsafe { libc::getgroups(n, groups.as_mut_ptr()) };
    n > 0 && groups[..n as usize].contains(&gid)
}

/// The process's file mode creation mask (from `/proc/self/status`, else by setting and
/// restoring it).
fn umask() -> u32 {
    if let Ok(s) = std::fs::read_to_string("/proc/self/status") {
        if let Some(m) = s
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        {
            return m;
        }
    }
    // SAFETY: umask cannot fail; the old mask is put back at once.
    let old = unsafe { libc::umask(0o077) };
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    old as u32
}

/// Gives the finished temporary `tmp` (open as the descriptor `fd`) what the file it replaces at `target`
/// has, as far as the caller may: owner and group, mode, ACL and security xattrs. A new
/// output gets `0666 & ~umask`, the mode GNU sort creates with.
pub(crate) fn adopt(fd: i32, tmp: &Path, target: &Path) -> Result<(), IoError> {
    let old = match std::fs::metadata(target) {
        Ok(m) if m.is_file() => m,
        _ => return fchmod(fd, tmp, 0o666 & !umask()),
    };
    let me = euid();
    let (uid, gid) = (old.uid(), old.gid());
    // The owner first: chown clears set-id bits, which the mode then puts back.
    if me == 0 || gid != gid_of(fd) {
        let give_uid = if me == 0 { uid } else { u32::MAX };
        // SAFETY: fchown on our own descriptor; u32::MAX (-1) leaves the owner unchanged.
        if unsafe { libc::fchown(fd, give_uid, gid) } != 0 {
            let e = io::Error::last_os_error();
            // A group the caller may not give is checked before work (then in place).
            if e.raw_os_error() != Some(libc::EPERM) {
                return Err(IoError::other("setting the owner of", tmp, e));
            }
        }
    }
    fchmod(fd, tmp, old.mode() & 0o7777)?;
    copy_xattrs(target, fd);
    Ok(())
}

/// The group of the file open as `fd` (`u32::MAX` if it cannot be looked at).
fn gid_of(fd: i32) -> u32 {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `st` is writable memory of the right type; fstat fills it on success (checked).
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return u32::MAX;
    }
    // SAFETY: fstat returned 0, so it filled `st`.
    unsafe { st.assume_init() }.st_gid
}

fn fchmod(fd: i32, path: &Path, mode: u32) -> Result<(), IoError> {
    // SAFETY: fchmod on our own descriptor has no memory-safety preconditions.
    if unsafe { libc::fchmod(fd, mode as libc::mode_t) } != 0 {
        return Err(IoError::other("setting the mode of", path, io::Error::last_os_error()));
    }
    Ok(())
}

/// Copies the ACL and security xattrs of `from` to the file open as `fd`, where the caller may
/// (a filesystem without xattrs, or one the caller may not set, leaves them out).
fn copy_xattrs(from: &Path, fd: i32) {
    let Ok(c) = CString::new(from.as_os_str().as_bytes()) else { return };
    let mut names = vec![0u8; 4096];
    // SAFETY: `names` is writable for its length, which is passed; `c` is NUL-terminated.
    let n = unsafe { libc::listxattr(c.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
    if n <= 0 {
        return;
    }
    names.truncate(n as usize);
    for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        if !COPIED_XATTRS.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let Ok(cname) = CString::new(name) else { continue };
        let mut value = vec![0u8; 64 << 10];
        // SAFETY: `value` is writable for its length, which is passed; both strings are
        // NUL-terminated.
        let len = unsafe {
            libc::getxattr(c.as_ptr(), cname.as_ptr(), value.as_mut_ptr().cast(), value.len())
        };
        if len < 0 {
            continue;
        }
        // SAFETY: `value` holds `len` initialized bytes; `cname` is NUL-terminated; `fd` is
        // our own descriptor. Failure (EPERM, ENOTSUP) leaves the attribute out.
        unsafe { libc::fsetxattr(fd, cname.as_ptr(), value.as_ptr().cast(), len as usize, 0) };
    }
}

/// Copies the finished temporary `tmp` over the output `dst` (open for writing, not truncated),
/// `len` bytes, cutting `dst` to that length and syncing it: the output keeps its inode.
pub(crate) fn copy_over(
    tmp: &Path,
    dst: &mut std::fs::File,
    target: &Path,
    len: u64,
) -> Result<(), IoError> {
    use std::io::{Seek, SeekFrom};
    let mut src = std::fs::File::open(tmp).map_err(|e| IoError::open(tmp, e))?;
    dst.seek(SeekFrom::Start(0)).map_err(|e| IoError::write(target, 0, e))?;
    let copied = io::copy(&mut io::Read::take(&mut src, len), dst)
        .map_err(|e| IoError::write(target, 0, e))?;
    dst.set_len(copied).map_err(|e| IoError::write(target, copied, e))?;
    dst.sync_all().map_err(|e| IoError::other("syncing", target, e))?;
    Ok(())
}

/// The temporary's name for an output named `name`: `.<name>.oxsort-<pid><tag>.tmp`, the part
/// taken from `name` shortened (on a character boundary; the UTF-8 part only, so sweeps can
/// read it) so that it and its staging name stay within [`NAME_MAX`].
pub(crate) fn temp_name(name: &std::ffi::OsStr, pid: u32, tag: &str) -> String {
    let suffix = format!(".oxsort-{pid}{tag}.tmp");
    let room = NAME_MAX - 1 - suffix.len() - crate::leftovers::STAGING_SUFFIX.len();
    let bytes = name.as_bytes();
    let utf8 = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        // The valid prefix is UTF-8 by definition: the fallback is never taken.
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    };
    let mut cut = utf8.len().min(room);
    while !utf8.is_char_boundary(cut) {
        cut -= 1;
    }
    let base = if cut == 0 { "output" } else { &utf8[..cut] };
    format!(".{base}{suffix}")
}

/// What makes two paths the same file, for checking a sort's paths against each other before
/// any work: the device and inode of an existing file, else the resolved path it would be
/// created at (symlinks followed, the directory canonical). `None` for what is never replaced
/// (a device, a FIFO): writing `/dev/null` twice is no conflict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileId {
    /// An existing regular file or directory.
    Inode {
        /// `st_dev`.
        dev: u64,
        /// `st_ino`.
        ino: u64,
    },
    /// A file that does not exist yet, by where it would be.
    Path(PathBuf),
}

/// The identity of `path` as a file (see [`FileId`]).
pub fn file_id(path: &Path) -> Option<FileId> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() || m.is_dir() => Some(FileId::Inode { dev: m.dev(), ino: m.ino() }),
        Ok(_) => None,
        Err(_) => {
            let target = follow_links(path).unwrap_or_else(|_| path.to_path_buf());
            let dir = std::fs::canonicalize(parent_dir(&target)).ok()?;
            Some(FileId::Path(dir.join(target.file_name()?)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_stay_within_name_max() {
        let long = "n".repeat(255);
        let t = temp_name(std::ffi::OsStr::new(&long), 4_194_304, "-deadbeef");
        assert!(t.len() + crate::leftovers::STAGING_SUFFIX.len() <= NAME_MAX, "{}", t.len());
        assert!(crate::leftovers::leftover_kind(&t).is_some());
        let wide = "é".repeat(127); // 254 bytes of two-byte characters
        let t = temp_name(std::ffi::OsStr::new(&wide), 1, "");
        assert!(t.len() <= NAME_MAX && t.starts_with(".é"));
        let raw = std::ffi::OsStr::from_bytes(b"\xffdata");
        assert_eq!(temp_name(raw, 7, ""), ".output.oxsort-7.tmp");
        assert_eq!(temp_name(std::ffi::OsStr::new("out"), 7, ""), ".out.oxsort-7.tmp");
    }

    #[test]
    fn links_are_followed_to_the_end() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f"), b"x").unwrap();
        std::os::unix::fs::symlink("f", d.path().join("l1")).unwrap();
        std::os::unix::fs::symlink(d.path().join("l1"), d.path().join("l2")).unwrap();
        assert_eq!(follow_links(&d.path().join("l2")).unwrap(), d.path().join("f"));
        std::os::unix::fs::symlink("loop", d.path().join("loop")).unwrap();
        assert_eq!(
            follow_links(&d.path().join("loop")).unwrap_err().raw_os_error(),
            Some(libc::ELOOP)
        );
    }

    #[test]
    fn file_ids_see_through_links_and_missing_files() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f"), b"x").unwrap();
        std::fs::hard_link(d.path().join("f"), d.path().join("h")).unwrap();
        std::os::unix::fs::symlink("f", d.path().join("l")).unwrap();
        std::os::unix::fs::symlink("new", d.path().join("dangling")).unwrap();
        let id = |n: &str| file_id(&d.path().join(n));
        assert_eq!(id("f"), id("h"));
        assert_eq!(id("f"), id("l"));
        assert_eq!(id("new"), id("dangling"));
        assert_eq!(id("sub/../new"), None); // its directory does not exist
        assert_ne!(id("f"), id("new"));
        assert_eq!(file_id(Path::new("/dev/null")), None);
    }
}

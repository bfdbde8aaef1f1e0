//! The C library's locale behind a safe interface: the one place oxsort calls into it.
//! (The few other C calls GNU sort's command line needs, such as `access` and `dup2`, are in
//! [`sys`].)
//!
//! GNU sort takes its collation, decimal point and thousands separator from the locale the
//! environment names (`LC_ALL`, then `LC_COLLATE` / `LC_NUMERIC` / `LC_CTYPE`, then `LANG`).
//! [`Locale::from_env`] sets the process locale the same way (`setlocale(LC_ALL, "")`) and
//! reads what sort needs; [`xfrm`] appends an image of a string whose byte order is glibc's
//! `strcoll` order (GNU sort's), so keys built from it sort at byte speed.
//!
//! ```
//! let loc = oxsort_locale::Locale::from_env();
//! let (mut a, mut b) = (Vec::new(), Vec::new());
//! oxsort_locale::xfrm(b"apple", &mut a);
//! oxsort_locale::xfrm(b"banana", &mut b);
//! assert!(a < b);
//! # let _ = loc;
//! ```
#![deny(missing_docs)]

use std::ffi::CStr;

mod table;

/// What sort needs to know about the locale the environment selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locale {
    /// `setlocale(LC_ALL, "")` succeeded (GNU sort's `--debug` reports a failure).
    pub ok: bool,
    /// The collation locale's name when it is not C/POSIX ("hard": text collates with
    /// `strcoll`); `None` in C/POSIX.
    pub collate: Option<String>,
    /// The collation orders text as its bytes, as C does: C/POSIX, and locales without
    /// collation rules such as glibc's C.UTF-8 (whose `strxfrm` copies its input and `strcoll`
    /// is `strcmp`). GNU sort still names such a locale's rules under `--debug` and calls
    /// `strcoll`; oxsort compares bytes (see [`Locale::collates`]).
    pub bytewise: bool,
    /// The decimal point (one byte; `.` when the locale's is longer).
    pub decimal_point: u8,
    /// The thousands separator when it is one byte; `None` when empty or longer.
    pub thousands_sep: Option<u8>,
    /// The separator is longer than a byte (GNU ignores it and says so under `--debug`).
    pub thousands_sep_ignored: bool,
    /// The character set is UTF-8 (messages quote with ‘ ’).
    pub utf8: bool,
    /// The twelve abbreviated month names (`ABMON_1..12`) when `LC_TIME` is not C/POSIX.
    pub months: Option<Vec<Vec<u8>>>,
}

impl Locale {
    /// Sets the process locale from the environment (as `setlocale(LC_ALL, "")`) and reads
    /// it. Call before starting threads: `setlocale` is not thread-safe.
    pub fn from_env() -> Locale {
        // SAFETY: the argument is a valid NUL-terminated string; oxsort calls this at start-up
        // before any thread exists, so no other thread reads the locale meanwhile.
        let ok = !unsafe { libc::setlocale(libc::LC_ALL, c"".as_ptr()) }.is_null();
        // SAFETY: a null locale argument only queries; the returned string is copied at once.
        let name = unsafe { c_string(libc::setlocale(libc::LC_COLLATE, std::ptr::null())) };
        let collate = name.filter(|n| n != "C" && n != "POSIX");
        // SAFETY: localeconv returns a pointer to static storage valid until the next
        // setlocale/localeconv call; both strings are copied before returning.
        let (decimal, thousands) = unsafe {
            let lc = libc::localeconv();
            if lc.is_null() {
                (None, None)
            } else {
                (c_string((*lc).decimal_point), c_string((*lc).thousands_sep))
            }
        };
        let decimal_point = match decimal.as_deref().map(str::as_bytes) {
            Some([b]) => *b,
            _ => b'.',
        };
        let thousands = thousands.unwrap_or_default();
        let thousands_sep = match thousands.as_bytes() {
            [b] => Some(*b),
            _ => None,
        };
        // SAFETY: nl_langinfo returns a pointer to a static string, copied at once.
        let codeset = unsafe { c_string(libc::nl_langinfo(libc::CODESET)) }.unwrap_or_default();
        // SAFETY: a null locale argument only queries; the returned string is copied at once.
        let time = unsafe { c_string(libc::setlocale(libc::LC_TIME, std::ptr::null())) };
        let months = time.filter(|n| n != "C" && n != "POSIX").map(|_| {
            (0..12)
                .map(|i| {
                    // SAFETY: ABMON_1 + i for i < 12 are valid items; the string is copied at
                    // once.
                    let p = unsafe { libc::nl_langinfo(libc::ABMON_1 + i) };
                    // SAFETY: nl_langinfo returns a valid NUL-terminated string.
                    unsafe { c_string(p) }.unwrap_or_default().into_bytes()
                })
                .collect()
        });
        let bytewise = collate.is_none() || bytewise_collation();
        Locale {
            months,
            ok,
            collate,
            bytewise,
            decimal_point,
            thousands_sep,
            thousands_sep_ignored: thousands.len() > 1,
            utf8: codeset.eq_ignore_ascii_case("UTF-8"),
        }
    }

    /// Whether text collates with collation keys (`strxfrm` images): a locale with collation
    /// rules. A [bytewise](Locale::bytewise) one orders text as C does.
    pub fn collates(&self) -> bool {
        !self.bytewise
    }
}

/// Whether the process's `LC_COLLATE` orders strings as their bytes: `strxfrm` gives back a
/// probe unchanged. Any collation with rules transforms it (its image is weights, level by
/// level); one without rules (glibc's codepoint collations: C.UTF-8) copies its input.
fn bytewise_collation() -> bool {
    // Letters of both cases, punctuation, a space, a digit and a letter past ASCII (é).
    let probe = c"a-B b\xc3\xa9Z0";
    let mut out = [0u8; 64];
    // SAFETY: `probe` is NUL-terminated; `out` has room for the 64 bytes passed as its size.
    let n = unsafe { libc::strxfrm(out.as_mut_ptr().cast(), probe.as_ptr(), out.len()) };
    out.get(..n) == Some(probe.to_bytes())
}

/// Whether the locale's `LC_CTYPE` counts `c` printable (`iswprint`), as GNU's quoting asks
/// of every multibyte character before it writes it as is.
pub fn printable(c: char) -> bool {
    extern "C" {
        /// C's `iswprint` (`wint_t` is `unsigned int` in glibc and musl).
        fn iswprint(wc: libc::c_uint) -> libc::c_int;
    }
    // SAFETY: iswprint takes any wint_t value and only reads the locale's class tables.
    unsafe { iswprint(c as libc::c_uint) != 0 }
}

/// Copies a C string (`None` for a null pointer).
///
/// # Safety
/// `p` is null or points to a NUL-terminated string valid for the duration of the call.
unsafe fn c_string(p: *const libc::c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller guarantees a valid NUL-terminated string.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

thread_local! {
    /// The NUL-terminated copy of the string being transformed, reused across calls.
    static SRC: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Room guessed for an image, per input byte. A miss costs a second whole `strxfrm` call with
/// the exact size, so the guess must cover nearly every string: glibc 2.36's en_US.UTF-8 images
/// of 10-200 byte text lines measured 4.75 to 7.7 bytes per input byte (median 6.0, 2000
/// lines), where a guess of 4 made almost every line transform twice.
const XFRM_GUESS_PER_BYTE: usize = 8;

/// Appends the collation image of `s` for the process's `LC_COLLATE` (never a NUL byte): the
/// byte order of images is `strcoll`'s order. `s` must not contain NUL (the part after one is
/// ignored, as C strings end there).
///
/// The image is built from the locale's weight table (see [`primary_weight`]) when every
/// character of `s` is in it with all its levels (see [`from_table`]): glibc's `strxfrm`
/// image but for the levels some characters reverse, which are walked as `strcoll` walks
/// them (glibc 2.36's `strcoll` skips a character that `strxfrm` keeps: see the table's
/// module), at a table look-up per character and level. Otherwise glibc's `strxfrm`
/// transforms `s`, and where `strcoll` would skip a character of a reversed run that
/// `strxfrm` keeps, the image is mended to `strcoll`'s walk (see `table::mend_glibc_image`:
/// one more `strxfrm`, of `s` without the skipped characters). In en_US.UTF-8, of 20,000
/// random near pairs of strings (one the other edited: punctuation in or out, a letter
/// changed) that the table does not build ("l·", whose middle dot contracts with the "l", or
/// a character not assigned), 122 ordered otherwise than `strcoll` unmended and 6 mended,
/// each beside a character not assigned, whose rule is not learnt (`tests/strcoll_order.rs`
/// measures it); in hu_HU.UTF-8, whose contractions keep most text past the table, 39 of
/// 9,298 random pairs and none.
pub fn xfrm(s: &[u8], out: &mut Vec<u8>) {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    if !table::xfrm_from_table(&s[..end], out) {
        glibc_image(&s[..end], out);
    }
}

/// Appends at least the first `want` bytes of [`xfrm`]`(s)`, or all of it: returns whether
/// all of it was appended. The image stops after the first of its levels that reach `want`
/// bytes (the last level, en_US.UTF-8's position level, is the longest: about 4 bytes a
/// character of the 7 of the whole image); glibc's image is whole unless levels that its
/// mend leaves alone reach that far (the mend is then not needed).
pub fn xfrm_start(s: &[u8], out: &mut Vec<u8>, want: usize) -> bool {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    match table::xfrm_start_from_table(&s[..end], out, want) {
        Some(whole) => whole,
        None => {
            let start = out.len();
            strxfrm(&s[..end], out);
            match table::unmended_levels(&out[start..], want) {
                Some(keep) => {
                    out.truncate(start + keep);
                    false
                }
                None => {
                    table::mend_glibc_image(&s[..end], out, start);
                    true
                }
            }
        }
    }
}

/// Appends glibc's `strxfrm(s)` (no NUL in `s`), mended where `strcoll` walks a reversed run
/// otherwise (see `table::mend_glibc_image`).
fn glibc_image(s: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    strxfrm(s, out);
    table::mend_glibc_image(s, out, start);
}

/// Appends glibc's `strxfrm(s)` (see [`xfrm`]).
fn strxfrm(s: &[u8], out: &mut Vec<u8>) {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    SRC.with(|src| {
        let mut src = src.borrow_mut();
        src.clear();
        src.extend_from_slice(&s[..end]);
        src.push(0);
        let mut cap = XFRM_GUESS_PER_BYTE * end + 16;
        loop {
            out.reserve(cap);
            let start = out.len();
            let dst = out.spare_capacity_mut();
            // SAFETY: `src` is NUL-terminated with no NUL before its end; `dst` has at least
            // `cap` writable bytes (reserved above) and strxfrm writes at most `cap` bytes.
            let n = unsafe {
                libc::strxfrm(dst.as_mut_ptr().cast::<libc::c_char>(), src.as_ptr().cast(), cap)
            };
            if n < cap {
                // SAFETY: strxfrm wrote `n` bytes (plus a NUL) into the spare capacity.
                unsafe { out.set_len(start + n) };
                return;
            }
            cap = n + 1;
        }
    });
}

/// glibc's `strcoll` order of `a` and `b`, the order GNU sort compares text in: the table
/// learns from it (see [`primary_weight`]). `None` when either holds a NUL (C strings cannot).
fn strcoll(a: &[u8], b: &[u8]) -> Option<std::cmp::Ordering> {
    let (a, b) = (std::ffi::CString::new(a).ok()?, std::ffi::CString::new(b).ok()?);
    // SAFETY: both are valid NUL-terminated strings; strcoll only reads them and the locale.
    Some(unsafe { libc::strcoll(a.as_ptr(), b.as_ptr()) }.cmp(&0))
}

/// The primary (first-level) collation weight of character `c`, when the locale's first
/// level treats it as a plain concatenation: then the first bytes of `strxfrm(s)`, for a
/// string `s` of such characters, are the concatenation of their weights, and a sort prefix
/// costs a table look-up per character instead of a whole `strxfrm` (glibc's transforms every
/// level of the whole string: about 3.5 us for a 100-byte line).
///
/// ```text
///  strxfrm("b3,é")  =  5e 4a 7e | 01 | 02 02 02 ... | 01 | ...level 3 | 01 | ...level 4
///                      primary    sep  secondary
///                      'b' '3' 'é' (',' has no primary weight: ignored at that level;
///                                   'é' weighs as 'e' there, its accent counts later)
/// ```
///
/// `Some(&[])` for a character the first level ignores; `None` where the table cannot speak
/// for `c` and a key holding it must be transformed whole: the C locale (no levels), NUL, a
/// character whose image has no level separator or a weight byte 0x00 or 0x01, a character
/// in a contraction or context rule (Czech "ch", say), or past [`MAX_TABLE_CHARS`].
///
/// The table fills as characters are first asked for, each checked once against glibc
/// itself: the image of `c` alone gives its weights (every level's); then one `strxfrm` of
/// `c c x1 c x2 ... c xk c`, over the k characters admitted before it, must start with the
/// concatenation of the primary weights. So every pair of admitted characters, in both
/// orders, is known to concatenate (a contraction of two characters, or a context rule
/// between neighbours, shows as a mismatch). On a level some of the locale's rule sets
/// reverse and others not (en_US.UTF-8's second), `c`'s direction is learnt from `strcoll`
/// probes; a second such check of the whole image, reversed runs included, then admits `c`
/// with all its levels, for [`xfrm`] to build whole images from. Safe to call from many
/// threads; the checks run one at a time. An answer once given is kept for the process: ask
/// only after [`Locale::from_env`] set the locale.
pub fn primary_weight(c: char) -> Option<&'static [u8]> {
    table::entry(c).map(|e| e.primary())
}

pub use table::MAX_TABLE_CHARS;

/// Whether [`xfrm`] builds the image of a string of `c` (with other such characters) from the
/// weight table, every level of it, rather than calling glibc (see [`primary_weight`]); but
/// not where `c` follows a character it contracts with (see [`from_table`]).
pub fn whole_weights(c: char) -> bool {
    table::entry(c).is_some_and(|e| e.full)
}

/// Whether [`xfrm`] builds the image of `s` from the weight table (its order is then
/// `strcoll`'s), rather than calling glibc: every character has [`whole_weights`] and none
/// follows one it contracts with (U+00B7 after "l" in en_US.UTF-8).
pub fn from_table(s: &[u8]) -> bool {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    table::xfrm_start_from_table(&s[..end], &mut Vec::new(), 0).is_some()
}

/// The UTF-8 character at the start of `b` and its length; `None` at the end, at a NUL and
/// at bytes that are not UTF-8.
#[inline]
fn next_char(b: &[u8]) -> Option<(char, usize)> {
    let &first = b.first()?;
    if first < 0x80 {
        return (first != 0).then_some((first as char, 1));
    }
    let n = match first {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let s = std::str::from_utf8(b.get(..n)?).ok()?;
    s.chars().next().map(|c| (c, n))
}

/// The other C library calls of GNU sort's command line, made safe.
pub mod sys {
    use std::os::fd::AsRawFd;

    /// Restores the default action of SIGPIPE (die quietly when a reader goes away), as C
    /// programs have it; Rust ignores it by default.
    pub fn default_sigpipe() {
        // SAFETY: setting the disposition of SIGPIPE to SIG_DFL has no preconditions.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }

    /// Whether the process may read `path` (`access(path, R_OK)`), with the system's error.
    pub fn readable(path: &std::path::Path) -> std::io::Result<()> {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: `c` is a valid NUL-terminated path.
        if unsafe { libc::access(c.as_ptr(), libc::R_OK) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// Makes `file` the process's standard output (`dup2(file, 1)`).
    pub fn redirect_stdout(file: &std::fs::File) -> std::io::Result<()> {
        // SAFETY: both descriptors are open; dup2 replaces descriptor 1 atomically.
        if unsafe { libc::dup2(file.as_raw_fd(), libc::STDOUT_FILENO) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// The soft limit on open files (20 if it cannot be read).
    pub fn open_file_limit() -> u64 {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: `r` is a valid rlimit for getrlimit to fill.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0 {
            r.rlim_cur
        } else {
            20
        }
    }

    /// Total physical memory in bytes.
    pub fn physical_memory() -> u64 {
        // SAFETY: sysconf only reads system constants.
        let (pages, size) =
            unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
        (pages.max(0) as u64).saturating_mul(size.max(0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_locale_xfrm_is_identity() {
        // The test process has not called setlocale: it runs in the C locale.
        let mut v = Vec::new();
        xfrm(b"b\xffa", &mut v);
        assert_eq!(v, b"b\xffa");
        v.clear();
        xfrm(b"ab\0cd", &mut v);
        assert_eq!(v, b"ab");
    }

    #[test]
    fn long_strings_fit() {
        let s = vec![b'x'; 10_000];
        let mut v = vec![1u8];
        xfrm(&s, &mut v);
        assert_eq!(v.len(), 10_001);
    }
}

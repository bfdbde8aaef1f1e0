//! What the locale tests share: a seeded generator, where test locales are, running a test in
//! a process of its own locale (the locale is process-wide and the weight table is fixed once
//! filled), and glibc's own `strcoll` and `strxfrm` to check against.
#![allow(dead_code)]

use std::cmp::Ordering;
use std::ffi::CString;
use std::path::PathBuf;

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Where `locale` may be: `OXSORT_TEST_LOCPATH`, then `target/locales` (made by
/// `.ci/gnu-conformance`); `None`: the system's own, if installed.
pub fn locpath(locale: &str) -> Option<PathBuf> {
    let dirs = std::env::var_os("OXSORT_TEST_LOCPATH")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/locales")]);
    dirs.into_iter().find(|d| d.join(locale).is_dir())
}

/// The variable that tells a re-run test executable which locale its test runs in.
const CHILD_LOCALE: &str = "OXSORT_LOCALE_TEST_CHILD";

/// Runs `test` of this test executable in a child process for `locale`; true in the child.
pub fn in_child(test: &str, locale: &str) -> bool {
    if std::env::var(CHILD_LOCALE).is_ok_and(|l| l == locale) {
        return true;
    }
    let exe = std::env::current_exe().expect("test executable");
    let out = std::process::Command::new(exe)
        .args(["--exact", test, "--nocapture"])
        .env(CHILD_LOCALE, locale)
        .output()
        .expect("run the child");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{locale}: {}", String::from_utf8_lossy(&out.stdout));
    false
}

/// Sets `locale` (see [`locpath`]); false (saying so) when it is not available.
pub fn set_locale(locale: &str) -> bool {
    if let Some(p) = locpath(locale) {
        std::env::set_var("LOCPATH", p);
    }
    std::env::set_var("LC_ALL", locale);
    let loc = oxsort_locale::Locale::from_env();
    let ok = loc.ok && loc.collate.as_deref().is_some_and(|c| c == locale);
    if !ok {
        eprintln!("skipped: {locale} is not available (see .ci/gnu-conformance)");
    }
    ok
}

/// glibc's `strcoll` order of `a` and `b`.
pub fn strcoll(a: &str, b: &str) -> Ordering {
    let (a, b) = (CString::new(a).expect("no NUL"), CString::new(b).expect("no NUL"));
    // SAFETY: both are valid NUL-terminated strings; the locale was set before any other
    // thread of this process existed.
    unsafe { libc::strcoll(a.as_ptr(), b.as_ptr()) }.cmp(&0)
}

/// glibc's own `strxfrm(s)`, independent of the table.
pub fn glibc_strxfrm(s: &str) -> Vec<u8> {
    let c = CString::new(s).expect("no NUL");
    // SAFETY: a null destination with size 0 only measures; `c` is NUL-terminated.
    let n = unsafe { libc::strxfrm(std::ptr::null_mut(), c.as_ptr(), 0) };
    let mut buf = vec![0u8; n + 1];
    // SAFETY: `buf` holds n + 1 bytes, the image and its NUL.
    unsafe { libc::strxfrm(buf.as_mut_ptr().cast(), c.as_ptr(), n + 1) };
    buf.truncate(n);
    buf
}

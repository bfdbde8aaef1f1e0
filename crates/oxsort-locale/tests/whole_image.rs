//! `xfrm` builds glibc's whole `strxfrm` image from the weight table: in `en_US.UTF-8` (built
//! by `.ci/gnu-conformance` under `target/locales`, or installed) every letter of Latin-1,
//! Latin Extended-A and B, Greek and Cyrillic, every ASCII character and the signs of Latin-1
//! are in the table with all their levels, and the image `xfrm` writes for random text drawn
//! from them is byte for byte the one glibc's `strxfrm` writes. `C.UTF-8` (no levels: the
//! image is the bytes) is checked the same way in a process of its own (the locale is
//! process-wide and the table is fixed once filled): the test re-runs itself.

use std::ffi::CString;
use std::path::PathBuf;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn locpath() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/locales");
    p.join("en_US.UTF-8").is_dir().then_some(p)
}

/// The blocks the text is drawn from: Latin-1 (from U+00A0), Latin Extended-A and B, Greek
/// (the assigned letters and signs), Cyrillic.
fn letters() -> Vec<char> {
    let ranges = [0xA0..=0xFF, 0x100..=0x24F, 0x370..=0x3FF, 0x400..=0x4FF];
    ranges.into_iter().flatten().filter_map(char::from_u32).collect()
}

/// glibc's own `strxfrm(s)`, independent of the table.
fn glibc_strxfrm(s: &str) -> Vec<u8> {
    let c = CString::new(s).expect("no NUL");
    // SAFETY: a null destination with size 0 only measures; `c` is NUL-terminated.
    let n = unsafe { libc::strxfrm(std::ptr::null_mut(), c.as_ptr(), 0) };
    let mut buf = vec![0u8; n + 1];
    // SAFETY: `buf` holds n + 1 bytes, the image and its NUL.
    unsafe { libc::strxfrm(buf.as_mut_ptr().cast(), c.as_ptr(), n + 1) };
    buf.truncate(n);
    buf
}

/// Random strings of 1 to 60 characters: a quarter drawn from `letters`, the rest printable
/// ASCII.
fn random_strings(seed: u64, count: usize, letters: &[char]) -> Vec<String> {
    let ascii: Vec<char> = (' '..='~').collect();
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            let len = 1 + rng.below(60);
            (0..len)
                .map(|_| match rng.below(4) {
                    0 => letters[rng.below(letters.len())],
                    _ => ascii[rng.below(ascii.len())],
                })
                .collect()
        })
        .collect()
}

/// Checks `xfrm` against `strxfrm` in the current locale; returns how many strings were
/// built wholly from the table's characters.
fn check_images(seed: u64) -> usize {
    let letters = letters();
    let mut image = Vec::new();
    let mut from_table = 0;
    for s in random_strings(seed, 20_000, &letters) {
        image.clear();
        oxsort_locale::xfrm(s.as_bytes(), &mut image);
        assert!(image == glibc_strxfrm(&s), "{s:?}: the image differs from strxfrm's");
        from_table += usize::from(s.chars().all(oxsort_locale::whole_weights));
    }
    from_table
}

#[test]
fn whole_images_are_glibcs_in_en_us() {
    if let Some(p) = locpath() {
        std::env::set_var("LOCPATH", p);
    }
    std::env::set_var("LC_ALL", "en_US.UTF-8");
    let loc = oxsort_locale::Locale::from_env();
    if loc.collate.is_none() {
        eprintln!("skipped: en_US.UTF-8 is not available (see .ci/gnu-conformance)");
        return;
    }
    // U+00B7 (middle dot) is in a contraction: "l·" weighs as "ŀ" on the later levels.
    assert!(!oxsort_locale::whole_weights('·'), "the middle dot contracts with l");
    let missing: Vec<char> = (' '..='~')
        .chain(letters().into_iter().filter(|c| c.is_alphabetic() || (*c as u32) < 0x100))
        .filter(|&c| c != '·' && !oxsort_locale::whole_weights(c))
        .collect();
    assert!(missing.is_empty(), "characters without whole weights: {missing:?}");
    // Some signs of the blocks contract or are not plain (U+00B7, combining marks): their
    // strings go to glibc. Most strings are built from the table.
    let built = check_images(0x9E37_79B9_7F4A_7C15);
    eprintln!("{built} of 20000 strings built from the table");
    assert!(built >= 18_000, "only {built} of 20000 strings built from the table");
    // Bytes that are not UTF-8, and characters past the blocks, go to glibc: still its image.
    for s in ["a\u{20AC}b", "\u{4E2D}\u{6587}", "x\u{1F600}"] {
        let mut image = Vec::new();
        oxsort_locale::xfrm(s.as_bytes(), &mut image);
        assert_eq!(image, glibc_strxfrm(s), "{s:?}");
    }
}

#[test]
fn whole_images_are_glibcs_in_c_utf8() {
    // In a child of its own: the first test fixes the table for en_US.UTF-8.
    if std::env::var_os("OXSORT_WHOLE_IMAGE_CHILD").is_none() {
        let exe = std::env::current_exe().expect("test executable");
        let out = std::process::Command::new(exe)
            .args(["--exact", "whole_images_are_glibcs_in_c_utf8", "--nocapture"])
            .env("OXSORT_WHOLE_IMAGE_CHILD", "1")
            .output()
            .expect("run the child");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
        return;
    }
    std::env::set_var("LC_ALL", "C.UTF-8");
    let loc = oxsort_locale::Locale::from_env();
    if loc.collate.is_none() {
        eprintln!("skipped: C.UTF-8 is not available");
        return;
    }
    // C.UTF-8 collates by code point with no levels: nothing is in the table, and xfrm is
    // glibc's.
    let built = check_images(0x2545_F491_4F6C_DD1D);
    assert_eq!(built, 0, "C.UTF-8 has no levels to build");
}

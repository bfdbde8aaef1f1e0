//! `primary_weights`: in the C locale there are none (its transform is the bytes, with no
//! level separator); in `en_US.UTF-8` (built by `.ci/gnu-conformance` under
//! `target/locales`, or installed) the table's concatenation is the first bytes of glibc's own
//! transform of random ASCII strings. One test function: the locale is process-wide.

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
}

fn locpath() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/locales");
    p.join("en_US.UTF-8").is_dir().then_some(p)
}

#[test]
fn primary_weights_are_the_first_bytes_of_the_transform() {
    // The test process starts in the C locale.
    assert!(oxsort_locale::primary_weights().is_none(), "the C locale has no levels");

    if let Some(p) = locpath() {
        std::env::set_var("LOCPATH", p);
    }
    std::env::set_var("LC_ALL", "en_US.UTF-8");
    let loc = oxsort_locale::Locale::from_env();
    if loc.collate.is_none() {
        eprintln!("skipped: en_US.UTF-8 is not available (see .ci/gnu-conformance)");
        return;
    }
    let table = oxsort_locale::primary_weights().expect("en_US.UTF-8 has plain primary weights");
    assert!(table[b'a' as usize] < table[b'b' as usize]);
    assert_eq!(table[b'a' as usize], table[b'A' as usize], "case is not a primary difference");
    assert!(table[b',' as usize].is_empty(), "punctuation is ignored at the first level");

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut image = Vec::new();
    for _ in 0..20_000 {
        let len = 1 + (rng.next() % 80) as usize;
        let s: Vec<u8> = (0..len).map(|_| 0x20 + (rng.next() % 95) as u8).collect();
        let primary: Vec<u8> = s.iter().flat_map(|&c| table[c as usize].clone()).collect();
        image.clear();
        oxsort_locale::xfrm(&s, &mut image);
        assert!(image.starts_with(&primary), "{:?}", String::from_utf8_lossy(&s));
        assert_eq!(image.get(primary.len()), Some(&0x01), "{:?}", String::from_utf8_lossy(&s));
    }
}

//! `primary_weight`: in the C locale there are none (its transform is the bytes, with no
//! level separator); in `en_US.UTF-8` (built by `.ci/gnu-conformance` under
//! `target/locales`, or installed) every letter of Latin-1, Latin Extended-A, Greek and
//! Cyrillic has one, and the concatenation of the weights is the first bytes of glibc's own
//! transform of random text drawn from those blocks, ASCII letters, digits, punctuation and
//! spaces. One test function: the locale is process-wide.

mod common;
use common::*;

/// The blocks the text is drawn from: printable Latin-1, Latin Extended-A, Greek (the
/// assigned letters), Cyrillic.
fn letters() -> Vec<char> {
    let ranges = [0xA1..=0xFF, 0x100..=0x17F, 0x386..=0x3CE, 0x400..=0x4FF];
    ranges.into_iter().flatten().filter_map(char::from_u32).collect()
}

#[test]
fn primary_weights_are_the_first_bytes_of_the_transform() {
    // The test process starts in the C locale. (A character's answer is fixed once given:
    // ask one the text below does not use.)
    assert_eq!(oxsort_locale::primary_weight('☃'), None, "the C locale has no levels");

    if let Some(p) = locpath("en_US.UTF-8") {
        std::env::set_var("LOCPATH", p);
    }
    std::env::set_var("LC_ALL", "en_US.UTF-8");
    let loc = oxsort_locale::Locale::from_env();
    if loc.collate.is_none() {
        eprintln!("skipped: en_US.UTF-8 is not available (see .ci/gnu-conformance)");
        return;
    }
    let w = oxsort_locale::primary_weight;
    assert!(w('b').expect("b") < w('c').expect("c"));
    assert_eq!(w('B'), w('b'), "case is not a primary difference");
    assert_eq!(w(','), Some(&[][..]), "punctuation is ignored at the first level");
    assert_eq!(w('é'), w('e'), "accents are not a primary difference");
    assert!(w('ж').expect("ж") > w('z').expect("z"));

    let letters = letters();
    let missing: Vec<char> =
        letters.iter().copied().filter(|&c| c.is_alphabetic() && w(c).is_none()).collect();
    assert!(missing.is_empty(), "letters without a primary weight: {missing:?}");

    let ascii: Vec<char> = (' '..='~').collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut image = Vec::new();
    let mut checked = 0;
    for _ in 0..20_000 {
        let len = 1 + rng.below(60);
        let s: String = (0..len)
            .map(|_| match rng.below(4) {
                0 => letters[rng.below(letters.len())],
                _ => ascii[rng.below(ascii.len())],
            })
            .collect();
        let Some(weights) = s.chars().map(w).collect::<Option<Vec<_>>>() else {
            continue;
        };
        let primary = weights.concat();
        image.clear();
        oxsort_locale::xfrm(s.as_bytes(), &mut image);
        assert!(image.starts_with(&primary), "{s:?}");
        assert_eq!(image.get(primary.len()), Some(&0x01), "{s:?}");
        checked += 1;
    }
    assert_eq!(checked, 20_000, "strings with a character without a weight");
}

//! `xfrm` builds the whole image from the weight table: in `en_US.UTF-8` (built
//! by `.ci/gnu-conformance` under `target/locales`, or installed) every letter of Latin-1,
//! Latin Extended-A and B, Greek and Cyrillic, every ASCII character and the signs of Latin-1
//! are in the table with all their levels, and the image `xfrm` writes for random text drawn
//! from them has the first level of glibc's `strxfrm` and orders as `strcoll` (the later
//! levels are walked as `strcoll` walks them: see `tests/strcoll_order.rs`); text holding
//! other characters gets `strxfrm`'s image (mended where `strcoll` skips a character). `C.UTF-8` (no levels: the
//! image is the bytes), de_DE.UTF-8, sv_SE.UTF-8 and hu_HU.UTF-8 (contractions) are checked
//! the same way, each locale in a process of its own (the locale is process-wide and the
//! table is fixed once filled): the tests re-run this executable.

mod common;
use common::*;

/// The blocks the text is drawn from: Latin-1 (from U+00A0), Latin Extended-A and B, Greek
/// (the assigned letters and signs), Cyrillic.
fn letters() -> Vec<char> {
    let ranges = [0xA0..=0xFF, 0x100..=0x24F, 0x370..=0x3FF, 0x400..=0x4FF];
    ranges.into_iter().flatten().filter_map(char::from_u32).collect()
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

/// Checks `xfrm` against glibc in the current locale: a string built from the table has
/// `strxfrm`'s first level and orders as `strcoll` against the string before it (its later
/// levels are walked as `strcoll` walks them, which may differ from `strxfrm`); any other
/// string's image is `strxfrm`'s, but for the characters of reversed runs that `strcoll`
/// skips, left out of later levels. Returns how many strings were built wholly
/// from the table's characters.
fn check_images(seed: u64) -> usize {
    let letters = letters();
    let mut from_table = 0;
    let mut previous: Option<(String, Vec<u8>)> = None;
    for s in random_strings(seed, 20_000, &letters) {
        let mut image = Vec::new();
        oxsort_locale::xfrm(s.as_bytes(), &mut image);
        let glibc = glibc_strxfrm(&s);
        if oxsort_locale::from_table(s.as_bytes()) {
            from_table += 1;
            let first = |i: &[u8]| i.iter().position(|&b| b == 0x01).map(|e| i[..e].to_vec());
            assert_eq!(first(&image), first(&glibc), "{s:?}: the first level differs");
            if let Some((p, pi)) = &previous {
                assert_eq!(pi.cmp(&image), strcoll(p, &s), "{p:?} vs {s:?}: not strcoll's order");
            }
            previous = Some((s, image));
        } else {
            // glibc's image, or that image mended: the same first level, a character of a
            // reversed run left out later on (see `tests/strcoll_order.rs`).
            let first = |i: &[u8]| i.iter().position(|&b| b == 0x01).map(|e| i[..e].to_vec());
            assert_eq!(first(&image), first(&glibc), "{s:?}: the first level differs");
            assert!(
                image == glibc || image.len() < glibc.len(),
                "{s:?}: the image is neither strxfrm's nor shorter"
            );
        }
    }
    from_table
}

#[test]
fn whole_images_are_glibcs_in_en_us() {
    if !in_child("whole_images_are_glibcs_in_en_us", "en_US.UTF-8") || !set_locale("en_US.UTF-8") {
        return;
    }
    // U+00B7 (middle dot) is in a contraction: "l·" weighs as "ŀ" on the later levels, so
    // a string with the pair goes to glibc; other strings with the dot are built.
    assert!(!oxsort_locale::from_table("al·".as_bytes()), "the middle dot contracts with l");
    assert!(oxsort_locale::from_table("a·l".as_bytes()), "the middle dot is in the table");
    let missing: Vec<char> = (' '..='~')
        .chain(letters().into_iter().filter(|c| c.is_alphabetic() || (*c as u32) < 0x100))
        .filter(|&c| !oxsort_locale::whole_weights(c))
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
    if !in_child("whole_images_are_glibcs_in_c_utf8", "C.UTF-8") || !set_locale("C.UTF-8") {
        return;
    }
    // C.UTF-8 collates by code point with no levels: nothing is in the table, and xfrm is
    // glibc's.
    let built = check_images(0x2545_F491_4F6C_DD1D);
    assert_eq!(built, 0, "C.UTF-8 has no levels to build");
}

/// German, Swedish (its own order of å ä ö, v and w alike on the first level) and Hungarian
/// (contractions: cs, dzs, ly, sz...): images equal glibc's whatever the table holds, and
/// the letters of contractions are not all in it.
#[test]
fn whole_images_are_glibcs_in_other_locales() {
    for locale in ["de_DE.UTF-8", "sv_SE.UTF-8", "hu_HU.UTF-8"] {
        let test = "whole_images_are_glibcs_in_other_locales";
        if !in_child(test, locale) {
            continue;
        }
        if !set_locale(locale) {
            return;
        }
        let built = check_images(0x0DDB_1A5E_5BAD_5EED);
        eprintln!("{locale}: {built} of 20000 strings built from the table");
        let out: String =
            (' '..='~').chain(letters()).filter(|&c| !oxsort_locale::whole_weights(c)).collect();
        eprintln!("{locale}: not in the table whole: {out}");
        if locale == "hu_HU.UTF-8" {
            // "cs", "sz", "zs"...: one letter of each pair is out, so every string holding
            // it is transformed by glibc.
            let out = ['c', 's', 'z'].iter().filter(|&&c| !oxsort_locale::whole_weights(c));
            assert!(out.count() > 0, "the letters of Hungarian's contractions are all in");
        } else {
            assert!(built >= 18_000, "{locale}: only {built} of 20000 from the table");
        }
        return;
    }
}

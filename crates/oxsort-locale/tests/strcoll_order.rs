//! The images `xfrm` writes order strings as glibc's `strcoll` does, which GNU sort calls:
//! the sign of `strcoll(a, b)` is the sign of the byte comparison of the images (the shorter
//! first), on seeded random strings of 0 to 30 characters drawn from ASCII, Latin-1, Latin
//! Extended-A, Greek and Cyrillic and their mixes, and on the strings where glibc 2.36's
//! `strcoll` and `strxfrm` disagree (a `backward` level: `strcoll` skips a character of a run
//! of digits or punctuation followed by a letter, `strxfrm` does not). `xfrm_start` gives a
//! prefix of the whole image.
//!
//! `en_US.UTF-8` (installed, or built by `.ci/gnu-conformance` under `target/locales`);
//! other locales when they are there too, under `target/locales` or the directory
//! `OXSORT_TEST_LOCPATH` names (`localedef -i fr_CA -f UTF-8 DIR/fr_CA.UTF-8`): fr_CA reverses
//! the accents of Latin letters as well (`DIACRIT_BACKWARD`). Each locale runs in a process of
//! its own (the locale is process-wide and the table is fixed once filled): the tests re-run
//! this executable. A locale that is not there is skipped, saying so.

mod common;
use common::*;

fn image(s: &str) -> Vec<u8> {
    let mut v = Vec::new();
    oxsort_locale::xfrm(s.as_bytes(), &mut v);
    v
}

/// Whether `xfrm` builds the image of `s` from the table.
fn from_table(s: &str) -> bool {
    oxsort_locale::from_table(s.as_bytes())
}

/// The alphabets the strings are drawn from: printable ASCII; digits and punctuation with a
/// letter (runs of `backward` characters, often); Latin-1; Latin Extended-A; Greek;
/// Cyrillic; and all of them mixed.
fn alphabets() -> Vec<Vec<char>> {
    let range = |r: std::ops::RangeInclusive<u32>| -> Vec<char> {
        r.filter_map(char::from_u32).filter(|c| !c.is_control()).collect()
    };
    let ascii = range(0x20..=0x7E);
    let dense: Vec<char> = ",.-_;:!?/ 1a2B".chars().collect();
    let latin1 = range(0xA0..=0xFF);
    let ext_a = range(0x100..=0x17F);
    let greek = range(0x384..=0x3CE);
    let cyrillic = range(0x400..=0x4FF);
    let mixed: Vec<char> = [&ascii[..], &latin1, &ext_a, &greek, &cyrillic].concat();
    let latin_ascii: Vec<char> = [&ascii[..], &latin1].concat();
    vec![ascii, dense, latin1, ext_a, greek, cyrillic, mixed, latin_ascii]
}

/// A random string of 0 to 30 characters from one of `alphabets`.
fn random_string(rng: &mut Rng, alphabets: &[Vec<char>]) -> String {
    let a = &alphabets[rng.below(alphabets.len())];
    let len = rng.below(31);
    (0..len).map(|_| a[rng.below(a.len())]).collect()
}

/// `s` with one to three random edits: a space, punctuation or a digit inserted, a character
/// removed, or one replaced by a character of the alphabets.
fn edit(rng: &mut Rng, s: &str, alphabets: &[Vec<char>]) -> String {
    const INSERTS: &[char] =
        &[' ', ',', '.', '-', '_', ';', ':', '!', '?', '/', '1', '2', '\'', 'a'];
    let mut v: Vec<char> = s.chars().collect();
    for _ in 0..=rng.below(3) {
        let at = rng.below(v.len() + 1);
        match rng.below(3) {
            0 => v.insert(at, INSERTS[rng.below(INSERTS.len())]),
            1 if at < v.len() => {
                v.remove(at);
            }
            _ if at < v.len() => {
                let a = &alphabets[rng.below(alphabets.len())];
                v[at] = a[rng.below(a.len())];
            }
            _ => v.push(INSERTS[rng.below(INSERTS.len())]),
        }
    }
    v.into_iter().collect()
}

/// Checks `pairs` random pairs (and each string's `xfrm_start`): the images of strings built
/// from the table order as `strcoll`. Returns how many pairs were built wholly from the
/// table, and how many of the others (a string holding a character the table leaves out:
/// their images are glibc's `strxfrm`'s) order otherwise than `strcoll`.
fn check_random_pairs(seed: u64, pairs: usize) -> (usize, usize) {
    let alphabets = alphabets();
    let mut rng = Rng(seed);
    let (mut built, mut past) = (0, 0);
    let mut wrong = Vec::new();
    for _ in 0..pairs {
        let (a, b) = (random_string(&mut rng, &alphabets), random_string(&mut rng, &alphabets));
        // Most pairs are near: one is the other edited (punctuation in or out, a letter
        // changed), so the first level ties and the later ones decide.
        let b = if rng.below(4) == 0 { b } else { edit(&mut rng, &a, &alphabets) };
        let (ia, ib) = (image(&a), image(&b));
        let agrees = ia.cmp(&ib) == strcoll(&a, &b);
        if from_table(&a) && from_table(&b) {
            built += 1;
            if !agrees {
                wrong.push((a.clone(), b.clone()));
            }
        } else {
            past += usize::from(!agrees);
        }
        let want = rng.below(ia.len() + 2);
        let mut start = Vec::new();
        let whole = oxsort_locale::xfrm_start(a.as_bytes(), &mut start, want);
        assert!(start.len() >= want.min(ia.len()), "{a:?}: xfrm_start gave too little");
        assert!(ia.starts_with(&start), "{a:?}: xfrm_start is not a prefix of xfrm");
        assert!(!whole || start == ia, "{a:?}: xfrm_start says whole, but is not");
    }
    assert!(
        wrong.is_empty(),
        "{} of {built} pairs built from the table out of strcoll order: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(10)]
    );
    (built, past)
}

/// The strings glibc 2.36's `strcoll` and `strxfrm` order differently in `en_US.UTF-8`.
const DISAGREEING: [(&str, &str); 6] = [
    ("12a", "1.2a"),
    ("ab12cd", "ab1.2cd"),
    ("x1!a", "x;1a"),
    ("1?_a", "1?a"),
    ("1.2a", "ab12cd"),
    ("a12.b", "a1.2b"),
];

#[test]
fn strcoll_examples_in_en_us() {
    if !in_child("strcoll_examples_in_en_us", "en_US.UTF-8") || !set_locale("en_US.UTF-8") {
        return;
    }
    for (a, b) in DISAGREEING {
        assert!(from_table(a) && from_table(b), "{a:?} and {b:?} are built from the table");
        let (ia, ib) = (image(a), image(b));
        assert_eq!(ia.cmp(&ib), strcoll(a, b), "{a:?} vs {b:?}: {ia:02x?} vs {ib:02x?}");
        assert_eq!(ib.cmp(&ia), strcoll(b, a), "{b:?} vs {a:?}");
    }
    // GNU sort's order of the example (strcoll, then bytes).
    let mut lines = ["ab1.2cd", "ab12cd", "1.2a", "12a"];
    lines.sort_by_key(|l| (image(l), l.as_bytes().to_vec()));
    assert_eq!(lines, ["12a", "1.2a", "ab12cd", "ab1.2cd"]);
}

#[test]
fn random_pairs_order_as_strcoll_in_en_us() {
    let test = "random_pairs_order_as_strcoll_in_en_us";
    if !in_child(test, "en_US.UTF-8") || !set_locale("en_US.UTF-8") {
        return;
    }
    let pairs = 150_000;
    let (built, past) = check_random_pairs(0x9E37_79B9_7F4A_7C15, pairs);
    eprintln!(
        "en_US.UTF-8: {built} of {pairs} pairs built from the table; of the others {past} \
         out of strcoll order"
    );
    // The table holds every assigned character of the alphabets; U+00B7 (the middle dot) and
    // U+0387 (the Greek ano teleia, its twin) contract with "l" before them, and a string
    // with such a pair goes to glibc.
    assert!(built * 10 >= pairs * 9, "only {built} of {pairs} pairs built from the table");
    let all: Vec<char> = alphabets().concat();
    let out: String = all.iter().filter(|&&c| !oxsort_locale::whole_weights(c)).collect();
    assert!(
        // (U+038B, U+038D and U+03A2 are not assigned.)
        out.chars().all(|c| matches!(c, '\u{38B}' | '\u{38D}' | '\u{3A2}')),
        "characters out of the table: {out:?}"
    );
    // Digits, signs and punctuation are in the table (with the direction of their second
    // level learnt), as are the letters.
    let out: String = (' '..='~').filter(|&c| !oxsort_locale::whole_weights(c)).collect();
    assert!(out.is_empty(), "ASCII characters out of the table: {out:?}");
    for (s, built) in [("l·a", false), ("L·a", false), ("a·l", true), ("·l", true), ("1·2a", true)]
    {
        assert_eq!(from_table(s), built, "{s:?}");
    }
}

/// Strings the table does not build (a contraction, U+00B7 after "l", or a character not
/// assigned) are glibc's `strxfrm` images, mended where `strcoll` skips a character of a
/// reversed run (shorter by its weights): they order as `strcoll` too, but where a run is
/// beside a character not assigned, whose rule is not learnt (how many such pairs order
/// otherwise is reported).
#[test]
fn strings_past_the_table_order_as_strcoll_in_en_us() {
    let test = "strings_past_the_table_order_as_strcoll_in_en_us";
    if !in_child(test, "en_US.UTF-8") || !set_locale("en_US.UTF-8") {
        return;
    }
    // U+00B7 contracts with "l" before it; U+03A2 and U+0378 are not assigned.
    let odd = ["l·", "L·", "\u{3A2}", "\u{378}"];
    let unassigned = |s: &str| s.contains(['\u{3A2}', '\u{378}']);
    let alphabets = alphabets();
    let mut rng = Rng(0x0DDB_1A5E_5BAD_5EED);
    let (mut mended, mut past_unassigned, mut wrong) = (0, 0, Vec::new());
    let pairs = 20_000;
    for _ in 0..pairs {
        let mut a = random_string(&mut rng, &alphabets);
        let at = a.char_indices().nth(rng.below(a.chars().count() + 1)).map_or(a.len(), |p| p.0);
        a.insert_str(at, odd[rng.below(odd.len())]);
        assert!(!from_table(&a), "{a:?} is built from the table");
        let (ia, glibc) = (image(&a), glibc_strxfrm(&a));
        assert!(ia == glibc || ia.len() < glibc.len(), "{a:?}: {ia:02x?} is not glibc's image");
        mended += usize::from(ia != glibc);
        let b = edit(&mut rng, &a, &alphabets);
        if image(&a).cmp(&image(&b)) != strcoll(&a, &b) {
            if unassigned(&a) || unassigned(&b) {
                past_unassigned += 1;
            } else {
                wrong.push((a, b));
            }
        }
    }
    eprintln!(
        "en_US.UTF-8: {mended} of {pairs} images past the table mended; {past_unassigned} near \
         pairs holding a character not assigned out of strcoll order"
    );
    assert!(
        wrong.is_empty(),
        "{} of {pairs} near pairs past the table out of strcoll order: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(10)]
    );
}

/// Other locales, when they are there: the same property over fewer pairs.
#[test]
fn random_pairs_order_as_strcoll_in_other_locales() {
    for locale in ["fr_CA.UTF-8", "fr_FR.UTF-8", "de_DE.UTF-8", "sv_SE.UTF-8", "hu_HU.UTF-8"] {
        let test = "random_pairs_order_as_strcoll_in_other_locales";
        if std::env::var("OXSORT_STRCOLL_ORDER_LOCALE").is_ok_and(|l| l != locale) {
            continue;
        }
        if !in_child(test, locale) {
            continue;
        }
        if !set_locale(locale) {
            return;
        }
        let pairs = 40_000;
        let (built, past) = check_random_pairs(0x2545_F491_4F6C_DD1D, pairs);
        eprintln!(
            "{locale}: {built} of {pairs} pairs built from the table; of the others {past} \
             out of strcoll order"
        );
        return;
    }
}

//! A collated key's 10-byte prefix, built from primary weights, is the first 10 bytes of the
//! whole key built with the transform, for random lines (ASCII and a few UTF-8 letters) and
//! random GNU key specs (fields, separators, `-f -d -i -r`, numbers before text). The
//! collator here is a stand-in laid out as glibc's transforms are (primary weights, 0x01, then
//! the next level), so the test needs no locale; its own process, as the collator is
//! process-wide.

use oxsort_format::{set_collator, set_primary_weights, RecordLayout, SortKey, SortSpec};
use oxsort_lang::{Blanks, GnuKey, GnuOptions};

/// Primary weight of an ASCII byte in the stand-in collation: letters case-blind, digits, and
/// some punctuation ignored (no weight); others weigh two bytes.
fn ascii_weight(c: u8) -> Vec<u8> {
    match c {
        b'a'..=b'z' => vec![0x40 + (c - b'a')],
        b'A'..=b'Z' => vec![0x40 + (c - b'A')],
        b'0'..=b'9' => vec![0x20 + (c - b'0')],
        b' ' | b',' | b'-' | b'.' => vec![],
        _ => vec![0x80, c],
    }
}

/// The stand-in's letters beyond ASCII: `é` weighs as `e`, `ß` as `ss`, `Ω` a weight of its
/// own; `€` is left out of the table (a key holding it is transformed whole).
const OTHER_LETTERS: &[(char, &[u8])] = &[('é', &[0x44]), ('ß', &[0x52, 0x52]), ('Ω', &[0x90])];

/// The stand-in's primary weights, as `oxsort_locale::primary_weight` answers.
fn toy_weight(c: char) -> Option<&'static [u8]> {
    static ASCII: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    let ascii = ASCII.get_or_init(|| (0..128u8).map(ascii_weight).collect());
    match c {
        '\0' => None,
        c if c.is_ascii() => Some(&ascii[c as usize]),
        c => OTHER_LETTERS.iter().find(|(o, _)| *o == c).map(|(_, w)| *w),
    }
}

/// The stand-in transform: primary weights of every character, 0x01, then the bytes (a
/// tertiary level that orders case and punctuation). A character without a weight (and a
/// byte that is not UTF-8) weighs 0xF0 then its bytes.
fn toy_xfrm(s: &[u8], out: &mut Vec<u8>) {
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            match toy_weight(c) {
                Some(w) => out.extend_from_slice(w),
                None => {
                    out.push(0xF0);
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
            }
        }
        for &b in chunk.invalid() {
            out.extend([0xF0, b]);
        }
    }
    out.push(0x01);
    out.extend(s.iter().map(|&c| c.max(2)));
}

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

fn random_line(rng: &mut Rng) -> Vec<u8> {
    const ALPHABET: &[u8] = b"aAbBzZ09 ,-.;!\t12345";
    let len = rng.below(40);
    let mut line: Vec<u8> = (0..len).map(|_| ALPHABET[rng.below(ALPHABET.len())]).collect();
    if rng.below(10) == 0 {
        // Now and then a byte that is not UTF-8, or a character the table does not cover.
        let odd: &[u8] = if rng.below(2) == 0 { b"\xC3" } else { "€".as_bytes() };
        let at = rng.below(line.len() + 1);
        line.splice(at..at, odd.iter().copied());
    }
    for _ in 0..rng.below(3) {
        // Letters beyond ASCII that the table covers.
        let (c, _) = OTHER_LETTERS[rng.below(OTHER_LETTERS.len())];
        let at = rng.below(line.len() + 1);
        line.splice(at..at, c.encode_utf8(&mut [0; 4]).bytes());
    }
    line
}

#[test]
fn prefixes_from_primary_weights_are_the_first_bytes_of_whole_keys() {
    set_collator(toy_xfrm);
    set_primary_weights(toy_weight);
    // (separator, -k keys, global ordering letters, -s)
    let specs: &[(Option<u8>, &[&str], &str, bool)] = &[
        (None, &[], "", false),
        (None, &[], "f", false),
        (None, &[], "d", false),
        (None, &[], "r", false),
        (None, &["1,1"], "", false),
        (Some(b','), &["2,2", "1,1"], "", false),
        (Some(b','), &["2,2n", "1,1r"], "", false),
        (None, &["1.3,1.9f", "2"], "", false),
        (None, &["2,2i"], "", true),
        (Some(b','), &["3,3", "2,2d"], "b", false),
    ];
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut scratch = Vec::new();
    let mut whole = Vec::new();
    let mut built_from_table = 0;
    for &(separator, keys, global, stable) in specs {
        let mut g = GnuKey::default();
        g.set_ordering(global.as_bytes(), Blanks::Both);
        let opts = GnuOptions {
            keys: keys.iter().map(|k| GnuKey::parse(k).unwrap()).collect(),
            global: g,
            separator,
            stable,
            collate: true,
            decimal_point: b'.',
            ..GnuOptions::default()
        };
        let args = (separator, keys, global, stable);
        let key: SortKey =
            SortSpec { key: Some(opts.key_spec()), ..SortSpec::with_layout(RecordLayout::LINES) }
                .compile()
                .unwrap();
        for _ in 0..3000 {
            let mut line = random_line(&mut rng);
            line.push(b'\n');
            let prefix = key.prefix(&line, &mut scratch).unwrap();
            key.full_key(&line, &mut whole);
            assert_eq!(prefix, SortKey::prefix_of_key(&whole), "{args:?} {line:?}");
            built_from_table += usize::from(scratch.len() < whole.len());
        }
    }
    // The table did the work for many of them (else this test checks nothing new).
    assert!(built_from_table > 5000, "{built_from_table}");

    // Letters beyond ASCII at the start of the key: still from the table, not the transform.
    let opts = GnuOptions { collate: true, decimal_point: b'.', ..GnuOptions::default() };
    let key: SortKey =
        SortSpec { key: Some(opts.key_spec()), ..SortSpec::with_layout(RecordLayout::LINES) }
            .compile()
            .unwrap();
    for line in ["éßΩ abcdefghij\n", "Ωé,ßa bb cc dd\n"] {
        let prefix = key.prefix(line.as_bytes(), &mut scratch).unwrap();
        key.full_key(line.as_bytes(), &mut whole);
        assert_eq!(prefix, SortKey::prefix_of_key(&whole), "{line:?}");
        assert!(scratch.len() < whole.len(), "{line:?} was transformed whole");
    }
}

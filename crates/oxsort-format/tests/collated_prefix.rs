//! A collated key's 10-byte prefix, built from primary weights, is the first 10 bytes of the
//! whole key built with the transform, for random lines and random GNU key specs (fields,
//! separators, `-f -d -i -r`, numbers before text). The collator here is a stand-in laid out
//! as glibc's transforms are (primary weights, 0x01, then the next level), so the test needs
//! no locale; its own process, as the collator is process-wide.

use oxsort_format::{
    set_collator, set_primary_weights, Blanks, GnuKey, GnuOptions, RecordLayout, SortKey, SortSpec,
};

/// Primary weight of an ASCII byte in the stand-in collation: letters case-blind, digits, and
/// some punctuation ignored (no weight); others weigh two bytes.
fn weight(c: u8) -> Vec<u8> {
    match c {
        b'a'..=b'z' => vec![0x40 + (c - b'a')],
        b'A'..=b'Z' => vec![0x40 + (c - b'A')],
        b'0'..=b'9' => vec![0x20 + (c - b'0')],
        b' ' | b',' | b'-' | b'.' => vec![],
        _ => vec![0x80, c],
    }
}

/// The stand-in transform: primary weights of every character, 0x01, then the bytes (a
/// tertiary level that orders case and punctuation). Non-ASCII bytes weigh 0xF0 0xXX.
fn toy_xfrm(s: &[u8], out: &mut Vec<u8>) {
    for &c in s {
        if c.is_ascii() {
            out.extend(weight(c));
        } else {
            out.extend([0xF0, c]);
        }
    }
    out.push(0x01);
    out.extend(s.iter().map(|&c| c.max(2)));
}

fn toy_table() -> Option<Vec<Vec<u8>>> {
    Some((0..128u8).map(weight).collect())
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
        // Now and then a character the primary table does not cover.
        line.insert(rng.below(line.len() + 1), 0xC3);
    }
    line
}

#[test]
fn prefixes_from_primary_weights_are_the_first_bytes_of_whole_keys() {
    set_collator(toy_xfrm);
    set_primary_weights(toy_table);
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
}

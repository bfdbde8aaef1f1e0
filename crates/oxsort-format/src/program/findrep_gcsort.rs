//! `FINDREP` as GCSORT runs it ([`FindRepRule::Gcsort`]), for `oxsort gcsort`: GCSORT's
//! rules differ from DFSORT's in five ways, each followed here.
//!
//! ```text
//!  record   |<- STARTPOS bytes ->|<------- searched range ------->|          |
//!           0                 STARTPOS                     ENDPOS (or end)   len
//!
//!  for each pair (IN lists and INOUT pairs last written first):
//!      range = range with every IN replaced by OUT, left to right, no overlaps,
//!              then cut (or filled with binary zeros) to the range's width
//!  the record keeps its length; bytes outside the range never move
//! ```
//!
//! - **The range**: `STARTPOS=p` is a 0-based offset (the search starts at byte `p + 1`;
//!   without it, at byte 1) and `ENDPOS=e` the last byte searched (1-based, inclusive).
//!   A range past the record's end stops at the end.
//! - **`SHIFT`**: with `SHIFT=YES` (the default) an `OUT` shorter than its `IN` overlays the
//!   match and the match's own bytes after it stay (`IN=C'ABC',OUT=C'X'` makes `XBC`), so
//!   nothing moves; with `SHIFT=NO` the range closes up and binary zeros fill its end. A
//!   longer `OUT` pushes the range's bytes right either way, and those past the range's end
//!   are dropped.
//! - **`OVERRUN`**: `OVERRUN=ERROR` (the default) stops the job when the pair applied last
//!   has an `OUT` longer than its `IN` and the count below is not zero, whatever the bytes
//!   dropped; `OVERRUN=TRUNC` drops them.
//! - **`DO=n`** (default 1000) bounds a count that GCSORT carries across the pairs: a pair may
//!   replace while the count before it plus its own matches stay within `n` (a match past the
//!   bound counts too), and after the pair the count becomes the count before it twice plus
//!   the pair's matches. With one pair, `DO=n` is at most `n` replacements.
//! - **`MAXLEN`** is read and has no effect: the record keeps its length.
//!
//! GCSORT searches the range as a C string, so its search stops at a binary zero; oxsort's
//! searches every byte of the range.

use super::reformat::{FindRep, FindRepRule};

/// GCSORT's bound on the replacements in a record when `DO=` is not given (DFSORT's bound,
/// which GCSORT's source names as the one it copies).
const GCSORT_DEFAULT_DO: usize = 1000;

/// The byte that fills the end of a range that closed up (`SHIFT=NO`): GCSORT's work buffer
/// is zeroed before each record.
const FILL: u8 = 0;

/// `f` (a [`FindRepRule::Gcsort`] one) over `rec` into `out` (cleared first); `Err` when
/// GCSORT's `OVERRUN=ERROR` stops the job.
pub(crate) fn apply(f: &FindRep, rec: &[u8], out: &mut Vec<u8>) -> Result<(), ()> {
    debug_assert_eq!(f.rule, FindRepRule::Gcsort);
    let len = rec.len();
    let start = f.start.unwrap_or(0).min(len);
    let end = f.end.map_or(len, |e| e.min(len)).max(start);
    let width = end - start;
    let most = f.times.unwrap_or(GCSORT_DEFAULT_DO);
    let mut range = rec[start..end].to_vec();
    let mut next = Vec::with_capacity(width);
    // GCSORT's running count, and the length change of the pair applied last.
    let mut counted = 0usize;
    let mut longer = false;
    for (find, set) in f.pairs.iter().rev() {
        if find.is_empty() {
            continue;
        }
        next.clear();
        let mut n = counted;
        let mut i = 0;
        while let Some(p) = find_from(&range, i, find) {
            n += 1;
            if n > most {
                break;
            }
            next.extend_from_slice(&range[i..p]);
            next.extend_from_slice(set);
            i = p + find.len();
            if f.shift && find.len() > set.len() {
                next.extend_from_slice(&range[p + set.len()..i]);
            }
        }
        next.extend_from_slice(&range[i..]);
        next.resize(width, FILL);
        std::mem::swap(&mut range, &mut next);
        longer = set.len() > find.len() && n > 0;
        counted += n;
        if counted > most {
            break;
        }
    }
    if longer && !f.truncate {
        return Err(());
    }
    out.clear();
    out.extend_from_slice(rec);
    out[start..end].copy_from_slice(&range);
    Ok(())
}

/// Where `find` (not empty) first occurs in `hay` at or after `from`.
fn find_from(hay: &[u8], from: usize, find: &[u8]) -> Option<usize> {
    hay.get(from..)?.windows(find.len()).position(|w| w == find).map(|q| q + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gc(pairs: &[(&str, &str)]) -> FindRep {
        FindRep::new(
            pairs.iter().map(|(a, b)| (a.as_bytes().to_vec(), b.as_bytes().to_vec())).collect(),
            FindRepRule::Gcsort,
        )
    }

    fn run(f: &FindRep, rec: &str) -> Result<String, ()> {
        let mut out = Vec::new();
        apply(f, rec.as_bytes(), &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    // Each expected record below is worked out by hand from the rules in the module's
    // overview, not from running the code.

    #[test]
    fn a_shorter_out_overlays_unless_shift_no() {
        let f = gc(&[("ABC", "X")]);
        assert_eq!(run(&f, "1ABC2ABC3").unwrap(), "1XBC2XBC3");
        let f = FindRep { shift: false, ..f };
        assert_eq!(run(&f, "1ABC2ABC3").unwrap(), "1X2X3\0\0\0\0");
    }

    #[test]
    fn startpos_is_an_offset_and_endpos_the_last_byte() {
        // STARTPOS=2: searched from byte 3; ENDPOS=6: through byte 6.
        let f = FindRep { start: Some(2), end: Some(6), ..gc(&[("a", "b")]) };
        assert_eq!(run(&f, "aaaaaaaa").unwrap(), "aabbbbaa");
        // STARTPOS=1 leaves byte 1 alone (DFSORT's STARTPOS=1 searches it).
        let f = FindRep { start: Some(1), ..gc(&[("a", "b")]) };
        assert_eq!(run(&f, "aaa").unwrap(), "abb");
        // ENDPOS past the record's end: to the end.
        let f = FindRep { end: Some(50), ..gc(&[("a", "b")]) };
        assert_eq!(run(&f, "a a").unwrap(), "b b");
        // A match crossing ENDPOS is not one.
        let f = FindRep { end: Some(3), ..gc(&[("cd", "XY")]) };
        assert_eq!(run(&f, "abcdef").unwrap(), "abcdef");
    }

    #[test]
    fn a_longer_out_is_an_error_unless_overrun_trunc() {
        let f = gc(&[("a", "xyz")]);
        assert_eq!(run(&f, "a      "), Err(()), "even with blanks to spare");
        assert_eq!(run(&f, "bbb").unwrap(), "bbb", "no match, no overrun");
        let f = FindRep { truncate: true, end: Some(4), ..f };
        // Bytes pushed past ENDPOS are dropped; byte 5 on does not move.
        assert_eq!(run(&f, "a1a2a3").unwrap(), "xyz1a3");
    }

    #[test]
    fn lists_apply_last_first_and_do_counts_across_pairs() {
        // INOUT=(C'A',C'B',C'B',C'C'): B->C first, then A->B.
        let f = gc(&[("A", "B"), ("B", "C")]);
        assert_eq!(run(&f, "AB").unwrap(), "BC");
        let f = gc(&[("B", "C"), ("A", "B")]);
        assert_eq!(run(&f, "AB").unwrap(), "CC");
        // One pair, DO=2: two replacements.
        let f = FindRep { times: Some(2), ..gc(&[("a", "b")]) };
        assert_eq!(run(&f, "aaaa").unwrap(), "bbaa");
        // Two pairs, DO=3: the second applied (x->X) replaces 2, the count becomes 2; the
        // first (y->Y) may replace while 2 + its matches stay within 3: one.
        let f = FindRep { times: Some(3), ..gc(&[("y", "Y"), ("x", "X")]) };
        assert_eq!(run(&f, "xxyy").unwrap(), "XXYy");
    }

    #[test]
    fn the_record_keeps_its_length_whatever_maxlen() {
        let f = FindRep { maxlen: Some(20), ..gc(&[("a", "b")]) };
        assert_eq!(run(&f, "abc").unwrap(), "bbc");
    }
}

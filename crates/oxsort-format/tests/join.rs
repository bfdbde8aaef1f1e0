//! The joined record REFORMAT builds, keys compared across the sides, and a join over records
//! cut to the bytes it reads (`JoinSpec::used_ranges`, `JoinSpec::over_cut`), which joins as it
//! did over whole records.

use std::cmp::Ordering;

use oxsort_format::{JoinInput, JoinItem, JoinKey, JoinSide, JoinSpec, JoinSpecError};

fn spec(reformat: Option<Vec<JoinItem>>) -> JoinSpec {
    let input = |dd: &str, offset| JoinInput {
        dd: dd.into(),
        keys: vec![JoinKey { offset, len: 2, descending: false }],
        sorted: false,
        noseqck: false,
        filter: None,
        stopaft: None,
        taskid: None,
        line: 1,
    };
    JoinSpec {
        f1: input("SORTJNF1", 0),
        f2: input("SORTJNF2", 2),
        unpaired_f1: true,
        unpaired_f2: true,
        only: false,
        reformat,
        fill: b'$',
    }
}

#[test]
fn a_join_over_cut_records_builds_what_it_built_over_whole_ones() {
    let mut s = spec(Some(vec![
        JoinItem::Field { side: JoinSide::F2, offset: 5, len: 2 },
        JoinItem::Indicator,
        JoinItem::Field { side: JoinSide::F1, offset: 1, len: 2 },
        JoinItem::Field { side: JoinSide::F2, offset: 3, len: 1 },
    ]));
    s.f2.keys.push(JoinKey { offset: 8, len: 1, descending: true });
    s.f1.keys.push(JoinKey { offset: 6, len: 1, descending: true });
    // F1: key 0-1, field 1-2, key 6 -> (0,3),(6,1); F2: key 2-3, fields 3, 5-6, key 8.
    assert_eq!(s.used_ranges(JoinSide::F1), Some(vec![(0, 3), (6, 1)]));
    assert_eq!(s.used_ranges(JoinSide::F2), Some(vec![(2, 2), (5, 2), (8, 1)]));
    let cut = |r: &[u8], ranges: &[(usize, usize)]| -> Vec<u8> {
        ranges.iter().flat_map(|&(o, l)| r[o..o + l].to_vec()).collect()
    };
    let (r1, r2) = (b"abcdefghij", b"ABCDEFGHIJ");
    let (c1, c2) = (s.used_ranges(JoinSide::F1).unwrap(), s.used_ranges(JoinSide::F2).unwrap());
    let n = s.over_cut([Some(&c1), Some(&c2)]);
    let (k1, k2) = (cut(r1, &c1), cut(r2, &c2));
    for (f1, f2, g1, g2) in [
        (Some(&r1[..]), Some(&r2[..]), Some(&k1[..]), Some(&k2[..])),
        (Some(&r1[..]), None, Some(&k1[..]), None),
        (None, Some(&r2[..]), None, Some(&k2[..])),
    ] {
        let len = s.joined_len(r1.len(), r2.len()).unwrap();
        assert_eq!(n.joined_len(k1.len(), k2.len()), Ok(len));
        let (mut whole, mut narrow) = (vec![0; len], vec![0; len]);
        s.build_into(f1, f2, &mut whole);
        n.build_into(g1, g2, &mut narrow);
        assert_eq!(whole, narrow);
    }
    // Keys equal, less and greater (the second keys descending) compare alike.
    for (a, b) in [
        (b"bcdefgxhij", b"..bc....x."),
        (b"bcdefgxhij", b"..bc....y."),
        (b"bcdefgyhij", b"..bc....x."),
        (b"abdefghhij", b"..bc....x."),
    ] {
        assert_eq!(
            s.compare(JoinSide::F1, a, JoinSide::F2, b),
            n.compare(JoinSide::F1, &cut(a, &c1), JoinSide::F2, &cut(b, &c2))
        );
    }
    // One side cut, the other whole; no REFORMAT: nothing to cut.
    let half = s.over_cut([None, Some(&c2)]);
    assert_eq!(half.f1, s.f1);
    assert_eq!(spec(None).used_ranges(JoinSide::F1), None);
}

#[test]
fn build_fills_the_missing_side_and_marks_the_indicator() {
    let s = spec(Some(vec![
        JoinItem::Field { side: JoinSide::F1, offset: 0, len: 3 },
        JoinItem::Field { side: JoinSide::F2, offset: 1, len: 2 },
        JoinItem::Indicator,
    ]));
    assert_eq!(s.joined_len(3, 4), Ok(6));
    let mut out = vec![0; 18];
    s.build_into(Some(b"abc"), Some(b"wxyz"), &mut out[..6]);
    s.build_into(Some(b"abc"), None, &mut out[6..12]);
    s.build_into(None, Some(b"wxyz"), &mut out[12..]);
    assert_eq!(out, b"abcxyBabc$$1$$$xy2");
    assert!(matches!(s.joined_len(2, 4), Err(JoinSpecError::PastRecord { end: 3, .. })));
}

#[test]
fn keys_compare_across_sides_with_their_own_offsets_and_orders() {
    let mut s = spec(None);
    assert_eq!(s.compare(JoinSide::F1, b"ab", JoinSide::F2, b"..ab"), Ordering::Equal);
    assert_eq!(s.compare(JoinSide::F1, b"ab", JoinSide::F2, b"..ac"), Ordering::Less);
    s.f1.keys[0].descending = true;
    s.f2.keys[0].descending = true;
    assert_eq!(s.compare(JoinSide::F1, b"ab", JoinSide::F2, b"..ac"), Ordering::Greater);
    assert_eq!(s.joined_len(4, 4), Ok(4));
    assert!(matches!(s.joined_len(4, 5), Err(JoinSpecError::MixedLengths { .. })));
}

//! DFSORT lookup items (`p,m,CHANGE=(v,find,set,...)[,NOMATCH=(set)]`) and `p` without a
//! length through the statement parser. Expected records are worked out by hand from DFSORT's
//! definitions (each test says how), not taken from oxsort's output:
//!
//! - the field is compared with the find constants in the order written, the first equal one
//!   gives its set; C'..' find constants shorter than the field are padded with blanks, X'..'
//!   ones with binary zeros; set constants and set fields are padded with blanks to v bytes;
//! - no match: NOMATCH's value, or without NOMATCH an error (DFSORT's ICE218A);
//! - `p` alone (or GCSORT's `p,`) last in BUILD: the bytes from p to the record's end.

use oxsort_format::{Lookup, Reformat, Scratch, Stage, VarBuild};
use oxsort_lang::parse_control;

mod common;
use common::outrec;

fn err(control: &str) -> String {
    parse_control(control).unwrap_err().to_string()
}

#[test]
fn change_looks_up_the_field_in_order() {
    // Byte 1 looked up, v = 6: '1' -> "ONE" + 3 blanks; '2' -> bytes 3-5 + 3 blanks; '9' ->
    // NOMATCH's "??" + 4 blanks; the second C'1' pair is never reached.
    let control = " OUTREC BUILD=(C'<',1,1,CHANGE=(6,C'1',C'ONE',C'2',3,3,C'1',C'TWICE'),\
                   NOMATCH=(C'??'),C'>')";
    let got = outrec(control, 5, &[b"1xabc", b"2xabc", b"9xabc"]).unwrap();
    assert_eq!(got, vec![b"<ONE   >".to_vec(), b"<abc   >".to_vec(), b"<??    >".to_vec()]);
}

#[test]
fn find_constants_are_padded_to_the_field() {
    // 2-byte field: C'A' is "A ", X'41' is "A\0". NOMATCH=(1,2): the field itself.
    let control = " OUTREC BUILD=(1,2,CHANGE=(3,C'A',C'c',X'41',X'E1'),NOMATCH=(1,2))";
    let got = outrec(control, 2, &[b"A ", b"A\0", b"AB"]).unwrap();
    assert_eq!(got, vec![b"c  ".to_vec(), vec![0xE1, b' ', b' '], b"AB ".to_vec()]);
}

#[test]
fn no_match_without_nomatch_stops_with_the_value() {
    let control = " OUTREC BUILD=(C'x',2,2,CHANGE=(1,C'OK',C'Y'))";
    let e = outrec(control, 3, &[b"-OK", b"-NO"]).unwrap_err().to_string();
    assert!(e.contains("item 2") && e.contains("bytes 2 to 3") && e.contains("C'NO'"), "{e}");
    assert!(e.contains("NOMATCH") && e.contains("ICE218A"), "{e}");
    let e = outrec(" OUTREC BUILD=(1,1,CHANGE=(1,X'00',C'Y'))", 1, &[&[0xFF]]);
    assert!(e.unwrap_err().to_string().contains("X'FF'"));
}

#[test]
fn lookups_in_overlay_and_ifthen() {
    // OVERLAY at column 4 of a 5-byte record: 'a' -> "AA" over bytes 4-5.
    let control = " OUTREC OVERLAY=(4:1,1,CHANGE=(2,C'a',C'AA'),NOMATCH=(C'--'))";
    let got = outrec(control, 5, &[b"a1234", b"b1234"]).unwrap();
    assert_eq!(got, vec![b"a12AA".to_vec(), b"b12--".to_vec()]);
    // IFTHEN on records starting with 'b' only: 'b' -> bytes 2-3 of the record.
    let control = " OUTREC IFTHEN=(WHEN=(1,1,CH,EQ,C'b'),BUILD=(1,1,CHANGE=(3,C'b',2,2)))";
    let got = outrec(control, 3, &[b"a12", b"b34"]).unwrap();
    assert_eq!(got, vec![b"a12".to_vec(), b"34 ".to_vec()]);
}

#[test]
fn parsed_items_carry_the_table() {
    let c = parse_control(" OUTREC BUILD=(3,2,CHANGE=(4,X'0102',7,3))").unwrap();
    let Some(Reformat::Edit(oxsort_format::Edit::Build(items))) = c.outrec else { panic!() };
    let oxsort_format::Item::Lookup(Lookup { offset, len, out_len, table, nomatch }) =
        &items[0].item
    else {
        panic!("{items:?}")
    };
    assert_eq!((*offset, *len, *out_len, nomatch), (2, 2, 4, &None));
    assert_eq!(table[0].0, vec![1, 2]);
    assert_eq!(table[0].1, oxsort_format::LookupSet::Field { offset: 6, len: 3 });
}

#[test]
fn lookup_mistakes_name_their_place() {
    let cases: &[(&str, &str, &str)] = &[
        // A find constant longer than the 2-byte field.
        (" OUTREC BUILD=(1,2,CHANGE=(3,C'ABC',C'X'))", "column 30", "1 to 2 bytes"),
        // A set constant longer than v.
        (" OUTREC BUILD=(1,2,CHANGE=(3,C'AB',C'WXYZ'))", "column 36", "1 to 3 bytes"),
        // A set field longer than v.
        (" OUTREC BUILD=(1,2,CHANGE=(3,C'AB',5,4))", "column 38", "set field must be 1 to 3"),
        (" OUTREC BUILD=(1,2,CHANGE=(0,C'AB',C'X'))", "column 28", "1 to 64"),
        (" OUTREC BUILD=(1,65,CHANGE=(3,C'AB',C'X'))", "column 18", "1 to 64 bytes"),
        (" OUTREC BUILD=(1,2,CHANGE=(3))", "column 29", "at least one pair"),
        (" OUTREC BUILD=(1,2,CHANGE=(3,C'AB'))", "column 35", "set value"),
        (" OUTREC BUILD=(1,2,CHANGE=(3,4,C'X'))", "column 30", "find constant"),
        (" OUTREC BUILD=(1,2,CHANGE=(3,C'A',C'X'),NOMATCH=(C'1',C'2'))", "column 54", "')'"),
        (" OUTREC BUILD=(1,2,CHANGE=(3,C'A',C'X'),NOMATCH=C'1')", "column 49", "'('"),
        (" OUTREC BUILD=(1,2,CHANGE=(3,C'',C'X'))", "column 30", "1 to 2 bytes"),
    ];
    for (control, at, what) in cases {
        let e = err(control);
        assert!(e.contains(&format!("line 1, {at}")) && e.contains(what), "{control}: {e}");
    }
    // Fields past the record are refused when the statement meets its records.
    let c = parse_control(" OUTREC BUILD=(1,1,CHANGE=(3,C'A',9,2))").unwrap();
    let e = c.outrec.unwrap().compile(Stage::Outrec, 5).unwrap_err().to_string();
    assert!(e.contains("item 1") && e.contains("10"), "{e}");
}

#[test]
fn a_position_without_a_length_takes_the_rest() {
    // Fixed 6-byte records: BUILD=(C'|',4) is '|' and bytes 4-6; GCSORT's `4,` the same.
    for control in [" OUTREC BUILD=(C'|',4)", " OUTREC FIELDS=(C'|',4,)"] {
        assert_eq!(outrec(control, 6, &[b"abcdef"]).unwrap(), vec![b"|def".to_vec()]);
    }
    let e = err(" OUTREC OVERLAY=(C'|',4)");
    assert!(e.contains("line 1, column 23") && e.contains("not in OVERLAY"), "{e}");
    // Not last: `4,` is then the start of a p,m that lacks its length.
    let e = err(" OUTREC BUILD=(4,C'|')");
    assert!(e.contains("line 1, column 17") && e.contains("p alone"), "{e}");
    let e = err(" OUTREC BUILD=(C'|',0)");
    assert!(e.contains("line 1, column 21") && e.contains("at least 1"), "{e}");
    let c = parse_control(" OUTREC BUILD=(1,4,7)").unwrap();
    let e = c.outrec.unwrap().compile(Stage::Outrec, 6).unwrap_err().to_string();
    assert!(e.contains("item 2"), "{e}");
}

#[test]
fn variable_records_keep_their_own_tail() {
    // RDW-prefixed records: BUILD=(1,4,C'|',7): RDW, '|', data from byte 7 (the 3rd data byte)
    // to each record's end; the RDW holds 4 + 1 + the tail's length.
    let c = parse_control(" OUTREC BUILD=(1,4,C'|',7)").unwrap();
    let b = VarBuild::compile(&c.outrec.unwrap(), Stage::Outrec, 300).unwrap();
    assert_eq!((b.out_len(), b.tail()), (5, Some(6)));
    let (mut out, mut pad, mut s) = (Vec::new(), Vec::new(), Scratch::default());
    for (data, tail) in [(&b"ABCDEFG"[..], &b"CDEFG"[..]), (b"XY", b""), (b"XYZ", b"Z")] {
        let mut rec = vec![0, (4 + data.len()) as u8, 0, 0];
        rec.extend_from_slice(data);
        b.apply(&rec, &mut out, &mut pad, &mut s).unwrap();
        let mut want = vec![0, (5 + tail.len()) as u8, 0, 0, b'|'];
        want.extend_from_slice(tail);
        assert_eq!(out, want);
    }
    // A lookup reads variable records too; its set field past a short record is an error.
    let c = parse_control(" OUTREC BUILD=(1,4,5,1,CHANGE=(2,C'A',6,2),NOMATCH=(C'-'),7)").unwrap();
    let b = VarBuild::compile(&c.outrec.unwrap(), Stage::Outrec, 300).unwrap();
    b.apply(&[0, 8, 0, 0, b'A', b'x', b'y', b'z'], &mut out, &mut pad, &mut s).unwrap();
    // RDW, 'A' -> bytes 6-7 "xy", then the tail from byte 7 "yz": 8 bytes.
    assert_eq!(out, [0, 8, 0, 0, b'x', b'y', b'y', b'z']);
}

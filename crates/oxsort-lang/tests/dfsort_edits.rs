//! DFSORT numeric edits, SEQNUM, HEX, TRAN, ALTSEQ/AQ, SS and date constants through the
//! statement parser. Expected values are worked out by hand from the DFSORT definitions (each
//! test says how), not taken from oxsort's output.

use oxsort_format::{FieldType, Scratch, Stage};
use oxsort_lang::parse_control;

mod common;
use common::outrec;

fn one(control: &str, rec: &[u8]) -> String {
    String::from_utf8(outrec(control, rec.len(), &[rec]).unwrap().remove(0)).unwrap()
}

#[test]
fn masks_and_patterns_on_each_format() {
    // PD X'1234567D' = -1234567, 7 digits. M12 for 7 digits is SI,III,IIT (10 bytes), leading
    // signs ' ' and '-' floating before the first digit.
    let pd: &[u8] = &[0x12, 0x34, 0x56, 0x7D];
    assert_eq!(one(" OUTREC BUILD=(1,4,PD,M12)", pd), "-1,234,567");
    // M11: all digits, no sign (TTTTTTT).
    assert_eq!(one(" OUTREC BUILD=(1,4,PD,M11)", pd), "1234567");
    // M4 for 7 digits: SII,IIT.TT (+/-): -12,345.67 fills the 10 bytes.
    assert_eq!(one(" OUTREC BUILD=(1,4,PD,M4)", pd), "-12,345.67");
    // ZD C'0042' (ASCII) is +42, 4 digits; M0 is IIIT with a trailing blank or '-'.
    assert_eq!(one(" OUTREC BUILD=(1,4,ZD,M0)", b"0042"), "  42 ");
    // BI X'FFFF' = 65535 (5 digits); FI X'FFFF' = -1.
    assert_eq!(one(" OUTREC BUILD=(1,2,BI,M10)", &[0xFF, 0xFF]), "65535");
    assert_eq!(one(" OUTREC BUILD=(1,2,FI,M10)", &[0xFF, 0xFF]), "    1");
    assert_eq!(one(" OUTREC BUILD=(1,2,FI,M26)", &[0xFF, 0xFF]), "-00001");
    // FS ' -12' and SFF '(1,5)': a user pattern with a trailing sign S and SIGNS=.
    assert_eq!(one(" OUTREC BUILD=(1,4,FS,EDIT=(IITS),SIGNS=(,,+,-))", b" -12"), " 12-");
    assert_eq!(one(" OUTREC BUILD=(1,5,SFF,EDIT=(IITS),SIGNS=(,,+,-))", b"(1,5)"), " 15-");
    assert_eq!(one(" OUTREC BUILD=(1,3,UFF,EDIT=(TTTT))", b"a7b"), "0007");
    // EDIT with a leading sign given as a quoted blank, and LENGTH= padding on the left.
    assert_eq!(
        one(" OUTREC BUILD=(1,4,ZD,EDIT=(SIT.T),SIGNS=(' ',-),LENGTH=7)", b"0042"),
        "    4.2"
    );
    // A date pattern: TT-TT-TTTT on P'05122003' (PD X'005122003C').
    assert_eq!(
        one(" OUTREC BUILD=(1,5,PD,EDIT=(TT-TT-TTTT))", &[0x00, 0x51, 0x22, 0x00, 0x3C]),
        "05-12-2003"
    );
    // OVERLAY writes the edit over the record at its column.
    assert_eq!(one(" OUTREC OVERLAY=(3:1,2,ZD,M11)", b"12xxxx"), "1212xx");
}

#[test]
fn invalid_decimal_data_names_the_item_and_byte() {
    let c = parse_control(" OUTREC BUILD=(1,1,3,2,PD,M11)").unwrap();
    let p = c.outrec.unwrap().compile(Stage::Outrec, 4).unwrap();
    let mut out = vec![0u8; p.out_len()];
    let e = p.apply(&[b'a', b'b', 0x1A, 0x2C], &mut out, &mut Scratch::default()).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("OUTREC item 2") && msg.contains("byte 3") && msg.contains("S0C7"),
        "{msg}"
    );
}

#[test]
fn seqnum_hex_and_tran() {
    // SEQNUM,3,ZD,START=5,INCR=10: 005, 015, 025; RESTART=(1,1) starts again at each new
    // first byte: A A B A -> 1 2 1 1.
    let recs: [&[u8]; 4] = [b"Aa", b"Ab", b"Bc", b"Ad"];
    let got = outrec(
        " OUTREC BUILD=(1,2,SEQNUM,3,ZD,START=5,INCR=10,SEQNUM,1,ZD,RESTART=(1,1))",
        2,
        &recs,
    )
    .unwrap();
    let want: [&[u8]; 4] = [b"Aa0051", b"Ab0152", b"Bc0251", b"Ad0351"];
    assert_eq!(got, want.map(|w| w.to_vec()));
    // SEQNUM,2,BI: 0x0001, 0x0002; SEQNUM,2,PD: X'001C', X'002C'.
    let got = outrec(" OUTREC BUILD=(SEQNUM,2,BI,SEQNUM,2,PD)", 1, &[b"x", b"y"]).unwrap();
    assert_eq!(got, vec![vec![0, 1, 0x00, 0x1C], vec![0, 2, 0x00, 0x2C]]);
    // HEX: two digits per byte; TRAN=LTOU / UTOL on ASCII letters.
    assert_eq!(one(" OUTREC BUILD=(1,3,HEX)", &[0x00, 0xAB, b'1']), "00AB31");
    assert_eq!(one(" OUTREC BUILD=(1,4,TRAN=LTOU,1,4,TRAN=UTOL)", b"aB1z"), "AB1Zab1z");
    // SEQNUM in INREC numbers the records given in order (the engine gives them so).
    let r = parse_control(" INREC BUILD=(1,2,SEQNUM,3,ZD)").unwrap().inrec.unwrap();
    let p = r.compile(Stage::Inrec, 2).unwrap();
    assert!(p.numbers());
    let mut scratch = Scratch::default();
    let mut out = vec![0; 5];
    for want in [b"ab001", b"ab002"] {
        p.apply(b"ab", &mut out, &mut scratch).unwrap();
        assert_eq!(&out, want);
    }
}

#[test]
fn altseq_for_aq_keys_and_tran() {
    // ALTSEQ CODE=(C1F1,5BEA): byte C1 collates as F1, 5B as EA; the AQ key is the bytes
    // translated, so X'C1' now sorts after X'E0' and before X'F2'.
    let c = parse_control(" ALTSEQ CODE=(C1F1,5BEA)\n SORT FIELDS=(1,2,AQ,A)").unwrap();
    let key = c.key.unwrap();
    let FieldType::AltSeq(t) = key.fields[0].kind else { panic!("AQ field") };
    assert_eq!((t[0xC1], t[0x5B], t[0x41]), (0xF1, 0xEA, 0x41));
    let (mut a, mut b, mut z) = (Vec::new(), Vec::new(), Vec::new());
    key.normalize(&[0xC1, 0x00], &mut a).unwrap();
    key.normalize(&[0xE0, 0x00], &mut b).unwrap();
    key.normalize(&[0xF2, 0x00], &mut z).unwrap();
    assert!(b < a && a < z);
    // ALTSEQ after the OUTREC that uses it still applies; other bytes stay themselves.
    assert_eq!(one(" OUTREC BUILD=(1,3,TRAN=ALTSEQ)\n ALTSEQ CODE=(4142)", b"ABC"), "BBC");
    // AQ without ALTSEQ collates as CH.
    let c = parse_control(" SORT FIELDS=(1,2,AQ,A)").unwrap();
    let FieldType::AltSeq(t) = c.key.unwrap().fields[0].kind else { panic!() };
    assert_eq!(t[0xC1], 0xC1);
    let e = parse_control(" ALTSEQ CODE=(C1F)").unwrap_err().to_string();
    assert!(e.contains("line 1, column 15") && e.contains("ffxx"), "{e}");
}

fn keeps(text: &str, record: &[u8]) -> bool {
    parse_control(text).unwrap().filter.unwrap().matches(record).unwrap()
}

#[test]
fn substring_conditions() {
    // The 3-byte field is shorter than the constant: its value is looked for in it.
    let months = " INCLUDE COND=(1,3,SS,EQ,C'JAN,FEB,MAR')";
    assert!(keeps(months, b"FEB"));
    assert!(!keeps(months, b"APR"));
    assert!(keeps(months, b"N,F"), "DFSORT finds any substring of the constant");
    // The field is longer: the constant is looked for in it.
    assert!(keeps(" INCLUDE COND=(1,10,SS,EQ,C'ALAN')", b"xxALANxxxx"));
    assert!(!keeps(" INCLUDE COND=(1,10,SS,EQ,C'ALAN')", b"xxALA Nxxx"));
    assert!(keeps(" OMIT COND=(1,10,SS,NE,C'ALAN')", b"xxALANxxxx"));
    assert!(keeps(" INCLUDE COND=(2,2,SS,EQ,X'0102',OR,1,1,CH,EQ,C'Z')", &[9, 1, 2]));
    let e = parse_control(" INCLUDE COND=(1,3,SS,GT,C'A')").unwrap_err().to_string();
    assert!(e.contains("line 1, column 23") && e.contains("EQ or NE"), "{e}");
}

#[test]
fn date_constants_compare_with_today() {
    // Today from the system's `date` command (UTC), an oracle apart from oxsort's calendar.
    let date = |args: &[&str]| {
        let o = std::process::Command::new("date").arg("-u").args(args).output().unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let today = date(&["+%Y%m%d"]);
    let plus = date(&["-d", "+40 days", "+%Y%m%d"]);
    let ddd = date(&["+%Y%j"]);
    assert!(keeps(" INCLUDE COND=(1,8,CH,EQ,DATE1)", today.as_bytes()));
    assert!(keeps(" INCLUDE COND=(1,8,CH,EQ,DATE1+40)", plus.as_bytes()));
    assert!(keeps(" INCLUDE COND=(1,8,CH,LT,DATE1+40)", today.as_bytes()));
    assert!(keeps(" INCLUDE COND=(1,7,CH,EQ,DATE3)", ddd.as_bytes()));
    assert!(keeps(" INCLUDE COND=(1,6,CH,EQ,DATE2)", &today.as_bytes()[..6]));
    let sep = format!("{}/{}/{}", &today[..4], &today[4..6], &today[6..]);
    assert!(keeps(" INCLUDE COND=(1,10,CH,EQ,DATE1(/))", sep.as_bytes()));
    // DATE1P with a ZD field: the same digits as a number.
    assert!(keeps(" INCLUDE COND=(1,8,ZD,EQ,DATE1P)", today.as_bytes()));
    assert!(keeps(" INCLUDE COND=(1,8,ZD,GT,DATE1P-1)", today.as_bytes()));
    let e = parse_control(" INCLUDE COND=(1,8,CH,EQ,DATE1P)").unwrap_err().to_string();
    assert!(e.contains("DATEnP goes with numeric"), "{e}");
}

#[test]
fn unsupported_edit_forms_are_named() {
    let err = |t: &str| parse_control(t).unwrap_err().to_string();
    let e = err(" OUTREC BUILD=(1,4,PD,M27)");
    assert!(e.contains("line 1, column 23") && e.contains("M0 to M26"), "{e}");
    let e = err(" OUTREC BUILD=(1,4,PD,EDIT=(ISIT))");
    assert!(e.contains("S (a sign) may only be"), "{e}");
    let e = err(" OUTREC BUILD=(1,4,FS,TO=ZD)");
    assert!(e.contains("TO= conversions read BI, FI, PD and ZD"), "{e}");
    let e = err(" OUTREC BUILD=(1,4,CH,EDIT=(TTT))");
    assert!(e.contains("line 1, column 20") && e.contains("HEX or TRAN="), "{e}");
    let e = err(" OUTREC BUILD=(1,4,TRAN=ATOE)");
    assert!(e.contains("expected LTOU, UTOL or ALTSEQ"), "{e}");
    let e = err(" OUTREC BUILD=(SEQNUM,4,FI)");
    assert!(e.contains("ZD, PD, BI, FS or CSF"), "{e}");
}

#[test]
fn parse_fields_into_build() {
    // A CSV-like record: %01 ends before the first ',', %02 before the next (cut to FIXLEN=3),
    // %= skips the third, %03 starts after the '"' and ends before the next one. Worked out by
    // hand: "ab,12345,x,\"Q\"  " -> %01 "ab   " (FIXLEN=5), %02 "123", %03 "Q ".
    let rec = b"ab,12345,x,\"Q\"  ";
    let c = " OUTREC PARSE=(%01=(ENDBEFR=C',',FIXLEN=5),%02=(ENDBEFR=C',',FIXLEN=3),\n\
             \x20  %=(ENDBEFR=C','),%03=(STARTAFT=C'\"',ENDBEFR=C'\"',FIXLEN=2)),\n\
             \x20  BUILD=(%03,C'|',%01,C'|',%02,ZD,M11,C'|',%02)";
    assert_eq!(one(c, rec), "Q |ab   |123|123");
    // A delimiter not found: the field runs to the end of the record; a start not found
    // leaves the field blank.
    let c = " OUTREC PARSE=(%1=(ENDBEFR=C';',FIXLEN=4),%2=(STARTAFT=C'#',FIXLEN=2)),\n\
             \x20  BUILD=(%1,%2,C'.')";
    assert_eq!(one(c, b"xyz"), "xyz   .");
    // ABSPOS and ENDAT (the delimiter kept).
    let c = " OUTREC PARSE=(%1=(ABSPOS=3,ENDAT=C'-',FIXLEN=4)),BUILD=(%1)";
    assert_eq!(one(c, b"01ab-cd"), "ab- ");
    let e = parse_control(" OUTREC BUILD=(%05)").unwrap_err().to_string();
    assert!(e.contains("line 1, column 16") && e.contains("not defined"), "{e}");
    // With OVERLAY: the record keeps its bytes and length (longer only where the items
    // reach); the parsed fields are not part of it.
    assert_eq!(one(" OUTREC PARSE=(%1=(FIXLEN=2)),OVERLAY=(3:%1)", b"abcde"), "ababe");
    assert_eq!(
        one(" OUTREC PARSE=(%1=(STARTAFT=C'c',FIXLEN=2)),OVERLAY=(7:%1)", b"abcde"),
        "abcde de"
    );
    let e = parse_control(" OUTREC PARSE=(%1=(FIXLEN=2)),FINDREP=(IN=C'a',OUT=C'b')")
        .unwrap_err()
        .to_string();
    assert!(e.contains("PARSE= goes with one BUILD=, FIELDS= or OVERLAY="), "{e}");
}

//! DFSORT control statements: samples as users write them, every error path with its exact
//! message, and INCLUDE/OMIT evaluation.

use oxsort_format::{Endian, FieldType, KeyField, KeySpec, RecordLayout, ShortFields};
use oxsort_lang::{parse_control, parse_fields};

fn err(text: &str) -> String {
    parse_control(text).unwrap_err().to_string()
}

#[test]
fn benchmark_statement() {
    let c = parse_control(" SORT FIELDS=(1,10,CH,A)\n").unwrap();
    assert_eq!(c.key, Some(KeySpec::benchmark()));
    assert!(!c.copy && !c.merge && !c.sum_none && !c.vlshrt);
    assert_eq!(c.key.unwrap().fast_path(RecordLayout::BENCHMARK).unwrap().len, 10);
}

#[test]
fn comments_continuations_remarks_and_indentation() {
    let text = "\
* Sort the account file: account ascending, then amount descending.
*
  SORT FIELDS=(1,8,CH,A,        account number
               9,5,PD,D,        amount
               14,4,FI,A),      signed counter
       EQUALS
    SUM FIELDS=NONE
 OPTION VLSHRT
RECORD TYPE=F,LENGTH=40
";
    let c = parse_control(text).unwrap();
    let key = c.key.unwrap();
    assert_eq!(
        key.fields,
        vec![
            KeyField::bytes(0, 8, FieldType::Char, false),
            KeyField::bytes(8, 5, FieldType::Packed, true),
            KeyField::bytes(13, 4, FieldType::Signed(Endian::Big), false),
        ]
    );
    assert_eq!(key.short_fields, ShortFields::SortFirst);
    assert_eq!(c.equals, Some(true));
    assert!(c.sum_none && c.vlshrt);
    assert_eq!(c.record, Some(RecordLayout::Fixed(40)));
}

#[test]
fn format_operand_and_lowercase() {
    let c = parse_control(" sort fields=(1,4,a,5,2,d),format=zd").unwrap();
    assert_eq!(
        c.key.unwrap().fields,
        vec![
            KeyField::bytes(0, 4, FieldType::Zoned, false),
            KeyField::bytes(4, 2, FieldType::Zoned, true),
        ]
    );
    let c = parse_control(" SORT FORMAT=BI,FIELDS=(1,4,A,5,2,CH,D)").unwrap();
    assert_eq!(c.key.unwrap().fields[1].kind, FieldType::Char);
}

#[test]
fn every_type_name() {
    for (name, kind, len) in [
        ("CH", FieldType::Char, 3),
        ("AC", FieldType::Char, 3),
        ("BI", FieldType::Unsigned(Endian::Big), 20),
        ("FI", FieldType::Signed(Endian::Big), 8),
        ("LU", FieldType::Unsigned(Endian::Little), 8),
        ("LI", FieldType::Signed(Endian::Little), 2),
        ("FL", FieldType::Float(Endian::Big), 8),
        ("LF", FieldType::Float(Endian::Little), 4),
        ("PD", FieldType::Packed, 16),
        ("ZD", FieldType::Zoned, 31),
        ("CSF", FieldType::SignedText, 10),
        ("FS", FieldType::SignedText, 10),
        ("UFF", FieldType::FreeUnsigned, 10),
        ("SFF", FieldType::FreeSigned, 10),
    ] {
        let c = parse_control(&format!(" SORT FIELDS=(2,{len},{name},D)")).unwrap();
        assert_eq!(c.key.unwrap().fields, vec![KeyField::bytes(1, len, kind, true)], "{name}");
    }
}

#[test]
fn copy_merge_and_options() {
    let c = parse_control(" SORT FIELDS=COPY").unwrap();
    assert!(c.copy && c.key.is_none());
    let c = parse_control(" SORT FIELDS=(1,2,CH,A)\n OPTION COPY,NOEQUALS").unwrap();
    assert!(c.copy && c.key.is_none());
    assert_eq!(c.equals, Some(false));
    let c = parse_control(" MERGE FIELDS=(1,10,CH,A)").unwrap();
    assert!(c.merge);
    assert_eq!(c.key, Some(KeySpec::benchmark()));
    let c = parse_control(" OPTION EQUALS").unwrap();
    assert!(c.key.is_none() && !c.copy);
    let c = parse_control(" SORT FIELDS=(1,2,CH,A)\n END\n this is not parsed").unwrap();
    assert!(c.key.is_some());
}

#[test]
fn error_messages() {
    let cases = [
        (" SORT FIELDS=(1,10,CH,Q)", "line 1, column 23: order must be A or D, found 'Q'"),
        (" SORT FIELDS=(1,10,CH)", "line 1, column 22: expected ',' after the format, found ')'"),
        (
            " SORT FIELDS=(1,10,XX,A)",
            "line 1, column 20: expected a format (CH, AC, AQ, BI, FI, PD, ZD, FL, CSF, FS, CSL, \
             CST, CLO, UFF, SFF, LU, LI, LF) or an order (A or D), found 'XX'",
        ),
        (" SORT FIELDS=(0,10,CH,A)", "line 1, column 15: position must be at least 1, found '0'"),
        (" SORT FIELDS=(1,0,CH,A)", "line 1, column 17: length must be at least 1, found '0'"),
        (
            " SORT FIELDS=(1,9,FI,A)",
            "line 1, column 17: length of a FI field must be 1 to 8, found '9'",
        ),
        (
            " SORT FIELDS=(1,6,FL,A)",
            "line 1, column 17: length of a FL field must be 4 or 8, found '6'",
        ),
        (
            " SORT FIELDS=(1,17,PD,A)",
            "line 1, column 17: length of a PD field must be 1 to 16, found '17'",
        ),
        (
            " SORT FIELDS=(1,4,A)",
            "line 1, column 15: this field has no format: write p,l,f,o or add FORMAT=f, \
             found '1'",
        ),
        (
            " SORT FIELDS=(1.2,4,BI,A)",
            "line 1, column 16: bit positions (p.b) are not supported: expected ',', found '.'",
        ),
        (
            " SORT FIELDS=(1,4,CH,A",
            "line 1, column 23: expected ',' or ')' after the order, found end of input",
        ),
        (
            " SORT FIELDS=(1,4,CH,A,\n",
            "line 1, column 24: expected a field position (1-based number), found end of input",
        ),
        (
            " SORT FIELDS=(1,4,CH,A),SIZE=E100",
            "line 1, column 25: expected FIELDS=, FORMAT=, EQUALS or NOEQUALS, found 'SIZE'",
        ),
        (" SORT EQUALS", "line 1, column 2: expected FIELDS= in this statement, found 'SORT'"),
        (
            " SROT FIELDS=(1,4,CH,A)",
            "line 1, column 2: expected a statement (SORT, MERGE, SUM, OPTION, INCLUDE, OMIT, \
             INREC, OUTREC, OUTFIL, RECORD, JOINKEYS, JOIN, REFORMAT, ALTSEQ, END), found 'SROT'",
        ),
        (
            " SORT FIELDS=(1,4,CH,A)\n MERGE FIELDS=(1,4,CH,A)",
            "line 2, column 2: only one SORT or MERGE statement, found 'MERGE'",
        ),
        (
            " SUM FIELDS=(5,4,CH)",
            "line 1, column 18: SUM formats are BI, FI, PD and ZD, found 'CH'",
        ),
        (
            " SUM FIELDS=(5,9,FI)",
            "line 1, column 16: length of a FI field in SUM must be 1 to 8, found '9'",
        ),
        (
            " OPTION EQUALS,FROB",
            "line 1, column 16: expected an option oxsort supports (EQUALS, NOEQUALS, COPY, \
             VLSHRT, NOVLSHRT, VLSCMP, NOVLSCMP, SKIPREC=n, STOPAFT=n, MAINSIZE=n; accepted and ignored: DYNALLOC, MAINSIZE, FILSZ, SIZE, AVGRLEN, \
             MSGPRT, LIST, NOLIST, HIPRMAX, DSPSIZE, RESINV, MOSIZE, NOBLKSET, BLKSET, MSGDDN, \
             SORTDD, SORTIN, SORTOUT, NOASSIST, ZDPRINT, NOZDPRINT, SOLRF, NOSOLRF, CHALT, \
             NOCHALT), found 'FROB'",
        ),
        (
            " RECORD TYPE=X,LENGTH=100",
            "line 1, column 14: expected TYPE=F (fixed) or TYPE=V (RDW-prefixed variable \
             records; text lines are not a RECORD type), found 'X'",
        ),
        (
            " RECORD TYPE=V,LENGTH=3",
            "line 1, column 23: the longest variable record (RDW included) must be 4 to 65535 \
             bytes, found '3'",
        ),
        (
            " RECORD TYPE=F,LENGTH=70000",
            "line 1, column 23: record length must be 1 to 65535, found '70000'",
        ),
        (
            " SORT FIELDS=(95,10,CH,A)\n RECORD TYPE=F,LENGTH=100",
            "line 1, column 15: field must end within the 100-byte records of RECORD \
             LENGTH=100, found 'a field ending at byte 104'",
        ),
        (
            " INCLUDE COND=(1,3,CH,EQ,C'ABC'",
            "line 1, column 32: expected ')' to close COND=(, found end of input",
        ),
        (
            " INCLUDE COND=(1,3,CH,XX,C'ABC')",
            "line 1, column 23: expected a comparison operator (EQ, NE, GT, GE, LT, LE), \
             found 'XX'",
        ),
        (
            " INCLUDE COND=(1,3,CH,EQ,5)",
            "line 1, column 26: a CH field compares with C'...' or X'...' constants, not \
             numbers, found '5'",
        ),
        (
            " INCLUDE COND=(1,3,EQ,C'ABC')",
            "line 1, column 19: expected ',' and a format (CH, AC, AQ, BI, FI, PD, ZD, FL, CSF, \
             FS, CSL, CST, CLO, UFF, SFF, LU, LI, LF), or FORMAT=f on the statement, found ','",
        ),
        (
            " INCLUDE COND=(1,3,CH,EQ,X'ABC')",
            "line 1, column 26: a X'...' constant needs an even number of hex digits, found \
             'X'ABC''",
        ),
        (
            " INCLUDE COND=(1,3,CH,EQ,C'ABC)",
            "line 1, column 32: expected ' to end the constant, found end of input",
        ),
        (
            " INCLUDE COND=(1,3,CH,EQ,C'A',AND,4,2,ZD,EQ,C'B'),FORMAT=CH\n OMIT COND=ALL",
            "line 2, column 2: only one INCLUDE or OMIT statement, found 'OMIT'",
        ),
        (
            " INCLUDE COND=(1,4,FL,EQ,5,4,ZD)",
            "line 1, column 26: a FL field cannot be compared with a ZD field, found '5'",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(err(text), want, "{text}");
    }
}

#[test]
fn fields_flag() {
    assert_eq!(parse_fields("1,10,CH,A").unwrap(), KeySpec::benchmark());
    assert_eq!(parse_fields("(1,10,CH,A)").unwrap(), KeySpec::benchmark());
    let k = parse_fields("11,4,LI,D,1,10,CH,A").unwrap();
    assert_eq!(k.fields[0], KeyField::bytes(10, 4, FieldType::Signed(Endian::Little), true));
    assert_eq!(
        parse_fields("1,10,CH,A,").unwrap_err().to_string(),
        "line 1, column 11: expected a field position (1-based number), found end of input"
    );
    assert_eq!(
        parse_fields("1,10,CH,A)").unwrap_err().to_string(),
        "line 1, column 10: expected ',' and another field, found ')'"
    );
}

fn keeps(text: &str, record: &[u8]) -> bool {
    parse_control(text).unwrap().filter.unwrap().matches(record).unwrap()
}

#[test]
fn include_and_omit() {
    let inc = " INCLUDE COND=((1,3,CH,EQ,C'ABC',OR,1,3,CH,EQ,C'XYZ'),AND,5,2,ZD,GT,10)";
    assert!(keeps(inc, b"ABC 11"));
    assert!(keeps(inc, b"XYZ 99"));
    assert!(!keeps(inc, b"ABC 10"));
    assert!(!keeps(inc, b"ABD 50"));
    // AND binds tighter than OR.
    let prec = " INCLUDE COND=(1,1,CH,EQ,C'A',OR,2,1,CH,EQ,C'B',AND,3,1,CH,EQ,C'C')";
    assert!(keeps(prec, b"AXX"));
    assert!(keeps(prec, b"XBC"));
    assert!(!keeps(prec, b"XBX"));
    let omit = " OMIT COND=(1,2,CH,EQ,C'#')";
    assert!(!keeps(omit, b"# comment"), "C'#' is padded with a blank");
    assert!(keeps(omit, b"#x"));
    // & and |, and FORMAT=.
    let fmt = " INCLUDE COND=(1,2,GE,C'M',&,(3,1,EQ,X'41',|,3,1,EQ,C'B')),FORMAT=CH";
    assert!(keeps(fmt, b"N A"));
    assert!(keeps(fmt, b"M A"));
    assert!(keeps(fmt, b"M B"));
    assert!(!keeps(fmt, b"M C"));
    assert!(!keeps(fmt, b"L A"));
    assert!(keeps(" INCLUDE COND=ALL", b""));
    assert!(!keeps(" INCLUDE COND=NONE", b"x"));
}

#[test]
fn numeric_comparisons_by_value() {
    // Packed +5 (sign F) equals zoned -0...5? No: compare packed and zoned values.
    let pd_zd = " INCLUDE COND=(1,2,PD,EQ,3,3,ZD)";
    assert!(keeps(pd_zd, &[0x00, 0x5F, b'0', b'0', b'5']));
    assert!(keeps(pd_zd, &[0x00, 0x0D, b'0', b'0', b'0']), "-0 == +0");
    assert!(!keeps(pd_zd, &[0x00, 0x5D, b'0', b'0', b'5']));
    let fi = " INCLUDE COND=(1,2,FI,LT,-1)";
    assert!(keeps(fi, &(-2i16).to_be_bytes()));
    assert!(!keeps(fi, &(-1i16).to_be_bytes()));
    let bi = " INCLUDE COND=(1,3,BI,EQ,65536)";
    assert!(keeps(bi, &[1, 0, 0]));
    let bi_hex = " INCLUDE COND=(1,3,BI,EQ,X'01')";
    assert!(keeps(bi_hex, &[1, 0, 0]), "X'01' pads with zeros");
    let fl = " INCLUDE COND=(1,8,FL,GT,2)";
    assert!(keeps(fl, &2.5f64.to_be_bytes()));
    assert!(!keeps(fl, &(-0.0f64).to_be_bytes()));
    let csf = " INCLUDE COND=(1,6,CSF,EQ,+42,AND,7,4,UFF,EQ,42)";
    assert!(keeps(csf, b"  +042$4.2"));
    let fields = " INCLUDE COND=(1,3,CH,GT,4,3,CH)";
    assert!(keeps(fields, b"abdabc"));
    assert!(!keeps(fields, b"abcabc"));
}

#[test]
fn filter_errors_name_the_field() {
    let c = parse_control(" INCLUDE COND=(1,1,CH,EQ,C'A',OR,2,2,PD,EQ,5)").unwrap();
    let f = c.filter.unwrap();
    assert_eq!(
        f.matches(&[b'B', 0x1A, 0x5C]).unwrap_err().to_string(),
        "key field 2: invalid packed decimal data at byte 2 (0x1A)"
    );
    assert_eq!(
        f.matches(b"B").unwrap_err().to_string(),
        "key field 2 (bytes 2 to 3, 1-based) lies past the end of the 1-byte record"
    );
    let c = parse_control(" INCLUDE COND=(2,2,CH,EQ,C'AB')\n OPTION VLSHRT").unwrap();
    assert_eq!(c.filter.unwrap().matches(b"B"), Ok(false), "VLSHRT: short compares false");
}

#[test]
fn vlshrt_short_fields_sort_first() {
    let key = parse_control(" SORT FIELDS=(3,2,CH,D)\n OPTION VLSHRT").unwrap().key.unwrap();
    assert!(key.compare(b"ab", b"abzz").unwrap().is_lt());
    assert!(key.compare(b"abzz", b"abaa").unwrap().is_lt());
    let strict = parse_control(" SORT FIELDS=(3,2,CH,D)").unwrap().key.unwrap();
    assert_eq!(
        strict.compare(b"ab", b"abzz").unwrap_err().to_string(),
        "key field 1 (bytes 3 to 4, 1-based) lies past the end of the 2-byte record"
    );
    // With fixed records the key drops the presence bytes and can take the fast path.
    let fixed = key.for_layout(RecordLayout::Fixed(10)).unwrap();
    assert_eq!(fixed.short_fields, ShortFields::Error);
}

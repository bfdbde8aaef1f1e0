//! RDW-prefixed records in the DFSORT front end: `RECORD TYPE=V`, positions that count the
//! RDW, and short fields under `VLSHRT` and `VLSCMP`, checked against DFSORT's documented
//! examples and definitions.

use oxsort_format::{RecordLayout, ShortFields, SortSpec};
use oxsort_lang::parse_control;

/// An RDW-prefixed record holding `data`.
fn vrec(data: &[u8]) -> Vec<u8> {
    let mut r = ((data.len() + 4) as u16).to_be_bytes().to_vec();
    r.extend_from_slice(&[0, 0]);
    r.extend_from_slice(data);
    r
}

#[test]
fn record_type_v_gives_the_longest_record() {
    let c = parse_control(" RECORD TYPE=V,LENGTH=(300,,,100)").unwrap();
    assert_eq!(c.record, Some(RecordLayout::Variable(300)));
    let c = parse_control(" RECORD TYPE=V").unwrap();
    assert_eq!(c.record, Some(RecordLayout::VARIABLE));
    let c = parse_control(" RECORD TYPE=V,LENGTH=84").unwrap();
    assert_eq!(c.record, Some(RecordLayout::Variable(84)));
    // A key that ends past the longest record is refused before any record is read.
    let c = parse_control(" SORT FIELDS=(80,10,CH,A)\n RECORD TYPE=V,LENGTH=84").unwrap();
    let spec = SortSpec { layout: c.record.unwrap(), key: c.key, ..SortSpec::default() };
    assert!(spec.compile().is_err());
}

/// DFSORT's "Example 4" of INCLUDE with short records: `7,2,CH,EQ,C'T1',OR,(1,2,BI,GE,
/// X'001A',AND,20,2,CH,EQ,25,2,CH)` on a record too short for bytes 20-26. With VLSCMP it is
/// included (7,2 is 'T1'); with NOVLSCMP and VLSHRT it is omitted (a short field makes the
/// condition false, whatever the rest); with neither it is an error.
#[test]
fn include_on_short_records_follows_dfsort_example_4() {
    let cond = " INCLUDE COND=(7,2,CH,EQ,C'T1',OR,\n (1,2,BI,GE,X'001A',AND,20,2,CH,EQ,25,2,CH))\n";
    // 4 + 18 = 22 bytes: bytes 7-8 are 'T1', bytes 20-21 exist, 25-26 do not.
    let short = vrec(b"xxT1yyyyyyyyyyyyyy");
    // Positions 20-21 and 25-26 are data bytes 15-16 and 20-21 (0-based).
    let long = |a: &[u8; 2], b: &[u8; 2]| {
        let mut d = b"xxAAyyyyyyyyyyyyyyyyyyyy".to_vec();
        d[15..17].copy_from_slice(a);
        d[20..22].copy_from_slice(b);
        vrec(&d)
    };
    let (long_eq, long_ne) = (long(b"QQ", b"QQ"), long(b"QQ", b"RR"));
    let f = |opts: &str| parse_control(&format!("{cond} OPTION {opts}\n")).unwrap().filter.unwrap();
    let vlscmp = f("VLSCMP");
    assert_eq!(vlscmp.short_fields, ShortFields::PadZeros);
    assert_eq!(vlscmp.matches(&short), Ok(true));
    let vlshrt = f("VLSHRT");
    assert_eq!(vlshrt.matches(&short), Ok(false));
    let strict = f("NOVLSCMP,NOVLSHRT");
    let e = strict.matches(&short).unwrap_err().to_string();
    assert!(e.contains("bytes 25 to 26") && e.contains("22-byte record"), "{e}");
    // Records long enough for every field are decided by the comparisons alone.
    for filter in [&vlscmp, &vlshrt, &strict] {
        assert_eq!(filter.matches(&long_eq), Ok(true));
        assert_eq!(filter.matches(&long_ne), Ok(false));
    }
    // OMIT with VLSHRT keeps the record a short field makes false.
    let omit = parse_control(" OMIT COND=(20,4,CH,EQ,C'zzzz')\n OPTION VLSHRT").unwrap();
    assert_eq!(omit.filter.unwrap().matches(&short), Ok(true));
}

/// VLSCMP pads a short compare field with binary zeros: a field past the end equals X'00..'
/// and sorts below any constant with a nonzero byte.
#[test]
fn vlscmp_pads_with_binary_zeros() {
    let rec = vrec(b"AB");
    let eq = |cond: &str| {
        let c = parse_control(&format!(" INCLUDE COND=({cond})\n OPTION VLSCMP")).unwrap();
        c.filter.unwrap().matches(&rec).unwrap()
    };
    assert!(eq("5,4,CH,EQ,X'41420000'"));
    assert!(!eq("5,4,CH,EQ,C'AB  '"));
    assert!(eq("7,2,BI,EQ,X'0000'"));
    assert!(eq("6,3,CH,LT,C'B'"));
}

/// With VLSHRT on RDW-prefixed records a short control field compares as if padded with
/// binary zeros; without it a short record is an error naming the field.
#[test]
fn vlshrt_keys_of_rdw_records_pad_with_zeros() {
    let c = parse_control(" SORT FIELDS=(5,3,CH,A)\n OPTION VLSHRT").unwrap();
    let key = c.key.unwrap().for_layout(RecordLayout::Variable(100)).unwrap();
    assert_eq!(key.short_fields, ShortFields::PadZeros);
    let (a, b, z) = (vrec(b"AB"), vrec(b"AB\0"), vrec(b"AB\x01"));
    assert!(key.compare(&a, &b).unwrap().is_eq());
    assert!(key.compare(&a, &z).unwrap().is_lt());
    assert!(key.compare(&vrec(b"A"), &a).unwrap().is_lt());
    let strict = parse_control(" SORT FIELDS=(5,3,CH,A)").unwrap().key.unwrap();
    let strict = strict.for_layout(RecordLayout::Variable(100)).unwrap();
    let e = strict.compare(&a, &b).unwrap_err().to_string();
    assert!(e.contains("bytes 5 to 7") && e.contains("6-byte record"), "{e}");
}

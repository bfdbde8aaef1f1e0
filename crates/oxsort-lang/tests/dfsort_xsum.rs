//! `SUM ...,XSUM`: the operand that sends the records SUM deletes to DD SORTXSUM, with
//! `FIELDS=NONE` and with fields, in any operand order; refused in a JOINKEYS file's own
//! statements, and misspelt operands named.

use oxsort_format::{SumField, SumKind};
use oxsort_lang::{parse_control, parse_join_input_control};

#[test]
fn xsum_is_read_with_none_and_with_fields() {
    let c = parse_control(" SORT FIELDS=(1,4,CH,A)\n SUM FIELDS=NONE,XSUM\n").unwrap();
    assert!(c.sum_none && c.sum.is_none());
    assert_eq!(c.xsum, Some(2));
    let c =
        parse_control(" SORT FIELDS=(1,4,CH,A)\n\n SUM XSUM,FIELDS=(5,2,BI),FORMAT=BI\n").unwrap();
    assert_eq!(c.sum, Some(vec![SumField { offset: 4, len: 2, kind: SumKind::Bi }]));
    assert_eq!(c.xsum, Some(3));
    let c = parse_control(" SORT FIELDS=(1,4,CH,A)\n sum fields=(5,2,zd),xsum\n").unwrap();
    assert!(c.xsum.is_some() && c.sum.is_some());
    let c = parse_control(" SORT FIELDS=(1,4,CH,A)\n SUM FIELDS=NONE\n").unwrap();
    assert_eq!(c.xsum, None);
}

#[test]
fn xsum_mistakes_are_named() {
    let err = |t: &str| parse_control(t).unwrap_err().to_string();
    assert_eq!(
        err(" SORT FIELDS=(1,4,CH,A)\n SUM FIELDS=NONE,XSUMS\n"),
        "line 2, column 18: expected FIELDS=, FORMAT= or XSUM, found 'XSUMS'"
    );
    assert_eq!(
        err(" SORT FIELDS=(1,4,CH,A)\n SUM FIELDS=NONE,XSUM,\n"),
        "line 2, column 23: expected FIELDS=, FORMAT= or XSUM, found end of input"
    );
    assert!(err(" SUM XSUM\n").contains("expected FIELDS= in this statement"));
    let e = parse_join_input_control(" SUM FIELDS=NONE,XSUM\n", "JNF1CNTL").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 1, column 18: XSUM is not allowed in JNF1CNTL: only the main task's SUM writes \
         SORTXSUM, found 'XSUM'"
    );
}

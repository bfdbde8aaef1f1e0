//! JOINKEYS, JOIN and REFORMAT as DFSORT's Application Programming Guide writes them.

use oxsort_format::{JoinItem, JoinKey, JoinSide};
use oxsort_lang::parse_control;

#[test]
fn the_guides_statements_parse_into_the_join() {
    let c = parse_control(
        "* Control statements for JOINKEYS application\n\
         \x20 JOINKEYS F1=IN1,FIELDS=(1,8,A,9,5,D)\n\
         \x20 JOINKEYS FILES=F2,FIELDS=(10,8,A,\n\
         \x20              5,5,D),SORTED,NOSEQCK\n\
         \x20 JOIN UNPAIRED,F2,ONLY\n\
         \x20 REFORMAT FIELDS=(F2:1,4,10,3,?,F1:2,1),FILL=X'00'\n\
         \x20 OPTION COPY\n",
    )
    .unwrap();
    let j = c.join.expect("a join");
    assert_eq!(j.f1.dd, "IN1");
    assert_eq!(j.f2.dd, "SORTJNF2");
    assert_eq!(
        j.f1.keys,
        [
            JoinKey { offset: 0, len: 8, descending: false },
            JoinKey { offset: 8, len: 5, descending: true }
        ]
    );
    assert_eq!(j.f2.keys[1], JoinKey { offset: 4, len: 5, descending: true });
    assert!(!j.f1.sorted && j.f2.sorted && j.f2.noseqck);
    assert_eq!((j.unpaired_f1, j.unpaired_f2, j.only), (false, true, true));
    assert_eq!(
        j.reformat.unwrap(),
        [
            JoinItem::Field { side: JoinSide::F2, offset: 0, len: 4 },
            JoinItem::Field { side: JoinSide::F2, offset: 9, len: 3 },
            JoinItem::Indicator,
            JoinItem::Field { side: JoinSide::F1, offset: 1, len: 1 },
        ]
    );
    assert_eq!(j.fill, 0);
    assert!(c.copy);
}

#[test]
fn join_mistakes_point_at_the_place() {
    let err = |text: &str| parse_control(text).unwrap_err().to_string();
    let keys = " JOINKEYS FILE=F1,FIELDS=(1,2,A)\n JOINKEYS FILE=F2,FIELDS=(1,2,A)\n";
    assert!(err(" JOINKEYS FILE=F1,FIELDS=(1,2,CH,A)\n").contains("expected the order A or D"));
    assert!(err(" JOINKEYS FILE=F3,FIELDS=(1,2,A)\n").contains("expected F1 or F2"));
    assert!(err(&format!("{keys} REFORMAT FIELDS=(1,2)\n")).contains("needs its file"));
    assert!(err(&format!("{keys} REFORMAT FIELDS=(F1:1)\n")).contains("variable-length"));
    assert!(err(&format!("{keys} REFORMAT FIELDS=(F1:1,2),FILL=C'ab'\n")).contains("one byte"));
    assert!(err(&format!("{keys} JOIN UNPAIRED,F3\n REFORMAT FIELDS=(F1:1,2)\n"))
        .starts_with("line 3, column 16: expected F1, F2 or ONLY"));
    assert!(err(&format!("{keys} JOINKEYS FILE=F1,FIELDS=(1,2,A)\n"))
        .contains("only one JOINKEYS statement for F1"));
    // JOIN UNPAIRED alone keeps both files' unpaired records.
    let c = parse_control(&format!("{keys} JOIN UNPAIRED\n REFORMAT FIELDS=(F1:1,2)\n")).unwrap();
    let j = c.join.unwrap();
    assert!(j.unpaired_f1 && j.unpaired_f2 && !j.only);
}

//! The record programs as the DFSORT and GNU languages write them: statements parsed, compiled
//! into the model's programs and keys, and run on records.

use oxsort_format::{
    CountForm, KeyError, KeyKind, KeySpec, Mode, Outfil, RecordLayout, ReportItem, Scratch,
    SortKey, SortSpec, SpecError, Split, Stage, VarBuild,
};
use oxsort_lang::{parse_control, parse_fields, GnuArgs, GnuEnv, GnuOptions};

/// The key GNU sort arguments give, in the C locale.
fn gnu_key(args: &[&str]) -> KeySpec {
    let argv: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    GnuArgs::parse(&argv, &GnuEnv::default()).unwrap().c_locale_options().key_spec()
}

fn kind(spec: &SortSpec) -> String {
    let k = spec.compile().unwrap();
    format!("{:?}", k.kind()).split([' ', '(', '{']).next().unwrap().to_string()
}

#[test]
fn every_front_end_key_compiles_to_its_kind() {
    assert_eq!(kind(&SortSpec::default()), "RawBytes");
    let bench = SortSpec { key: Some(KeySpec::benchmark()), ..SortSpec::default() };
    assert_eq!(bench.compile().unwrap().full_prefix_offset(), Some(0));
    let short = SortSpec { key: Some(parse_fields("3,4,CH,A").unwrap()), ..bench.clone() };
    let k = short.compile().unwrap();
    assert!(matches!(k.kind(), KeyKind::RawBytes { offset: 2, len: 4 }));
    assert_eq!(k.full_prefix_offset(), None);
    let typed = SortSpec { key: Some(parse_fields("11,4,BI,D").unwrap()), ..bench.clone() };
    assert_eq!(kind(&typed), "Fixed");
    let packed = SortSpec { key: Some(parse_fields("1,4,PD,A").unwrap()), ..bench.clone() };
    assert_eq!(kind(&packed), "General");
    let lines = SortSpec::with_layout(RecordLayout::LINES);
    assert_eq!(kind(&lines), "RawLines");
    let whole = SortSpec { key: Some(gnu_key(&["-s"])), ..lines.clone() };
    assert_eq!(kind(&whole), "RawLines");
    // GNU sort without -k, as the `sort` front end builds it (with its last-resort field):
    // raw lines in C, a built key once the text is collated or folded.
    let c = GnuOptions { decimal_point: b'.', ..GnuOptions::default() };
    let gnu_default = SortSpec { key: Some(c.key_spec()), ..lines.clone() };
    assert_eq!(kind(&gnu_default), "RawLines");
    let collated = GnuOptions { collate: true, ..c.clone() };
    assert_eq!(kind(&SortSpec { key: Some(collated.key_spec()), ..lines.clone() }), "General");
    let mut folded = c.clone();
    folded.global.fold = true;
    assert_eq!(kind(&SortSpec { key: Some(folded.key_spec()), ..lines.clone() }), "General");
    let numeric = SortSpec { key: Some(gnu_key(&["-k2,2n"])), ..lines.clone() };
    assert_eq!(kind(&numeric), "General");
    let copy = SortSpec { mode: Mode::Copy, ..numeric };
    assert_eq!(kind(&copy), "Copy");
}

#[test]
fn whole_keys_of_delimited_records_agree_with_cmp_full() {
    let lines: Vec<&[u8]> =
        vec![b"b,10\n", b"a,9\n", b"a,10\n", b"c,-1\n", b"b,10.0\n", b",\n", b"a\n"];
    for args in [&["-t,", "-k2,2n", "-k1,1"][..], &["-r"], &["-b", "-n", "-s"]] {
        let spec =
            SortSpec { key: Some(gnu_key(args)), ..SortSpec::with_layout(RecordLayout::LINES) };
        let sk = spec.compile().unwrap();
        let mut scratch = Vec::new();
        for a in &lines {
            for b in &lines {
                let (mut ka, mut kb) = (Vec::new(), Vec::new());
                sk.full_key(a, &mut ka);
                sk.full_key(b, &mut kb);
                assert_eq!(ka.cmp(&kb), sk.cmp_full(a, b), "{args:?}");
                assert_eq!(SortKey::prefix_of_key(&ka), sk.prefix(a, &mut scratch).unwrap());
            }
        }
    }
}

#[test]
fn statements_parse_into_groups_and_files_name_sortofxx() {
    let c = parse_control(
        " OUTFIL FILES=(01,OUT),INCLUDE=(1,2,CH,EQ,C'AB'),SPLITBY=3\n OUTFIL SAVE,FNAMES=X\n \
         OUTFIL\n",
    );
    // SORTOUT twice (FILES=OUT and the default of the third statement) is refused.
    let e = c.unwrap_err().to_string();
    assert!(e.contains("SORTOUT is already an output of the OUTFIL statement of line 1"), "{e}");
    let c = parse_control(
        " OUTFIL FILES=(01,OUT),INCLUDE=(1,2,CH,EQ,C'AB'),SPLITBY=3,STARTREC=2\n \
         OUTFIL SAVE,FNAMES=X,REMOVECC,TRAILER1=('N=',COUNT15,/,3:X'4142')\n",
    )
    .unwrap();
    assert_eq!(c.outfil.len(), 2);
    assert_eq!(c.outfil[0].names, ["SORTOF01", "SORTOUT"]);
    assert_eq!(c.outfil[0].split, Split::By(3));
    assert_eq!(c.outfil[0].startrec, Some(2));
    assert_eq!(c.outfil[0].filter_end, 2);
    assert!(c.outfil[1].save && c.outfil[1].removecc);
    let t = c.outfil[1].trailer1.as_ref().unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!(t[0][1].1, ReportItem::Count(CountForm::Blanked { width: 15 }));
    assert_eq!(t[1][0], (Some(3), ReportItem::Const(b"AB".to_vec())));
    let p = Outfil::compile(&c.outfil, 20).unwrap();
    assert_eq!(p.output_count(), 3);
    let mut lines = Vec::new();
    let mut r = p.router();
    p.route::<KeyError>(&mut r, b"ABxxxxxxxxxxxxxxxxxx", |_, _| Ok(())).unwrap();
    p.trailers::<()>(&r, |o, l| {
        lines.push((o, l.to_vec()));
        Ok(())
    })
    .unwrap();
    // Record 1 is before STARTREC=2: the SAVE group (output 2) took it.
    assert_eq!(lines[0], (2, b"N=              1   ".to_vec()));
    assert_eq!(lines[1], (2, b"  AB                ".to_vec()));
}

fn build(stmt: &str, max: usize) -> Result<VarBuild, SpecError> {
    let c = parse_control(stmt).unwrap();
    VarBuild::compile(&c.outrec.unwrap(), Stage::Outrec, max)
}

#[test]
fn rebuilt_records_get_their_rdw() {
    let b = build(" OUTREC BUILD=(1,4,C'|',9,2,HEX,5,3)", 300).unwrap();
    assert_eq!(b.out_len(), 12);
    let rec = [0, 14, 0, 0, b'A', b'B', b'C', b'x', 0x1F, 0xA0, 1, 2, 3, 4];
    let (mut out, mut pad, mut s) = (Vec::new(), Vec::new(), Scratch::default());
    b.apply(&rec, &mut out, &mut pad, &mut s).unwrap();
    assert_eq!(out, [0, 12, 0, 0, b'|', b'1', b'F', b'A', b'0', b'A', b'B', b'C']);
    let e = b.apply(&rec[..9], &mut out, &mut pad, &mut s).unwrap_err().to_string();
    assert!(e.contains("bytes 9 to 10") && e.contains("9-byte record"), "{e}");
}

#[test]
fn only_builds_that_keep_the_rdw() {
    assert!(build(" OUTREC BUILD=(5,10)", 300).unwrap_err().to_string().contains("1,4"));
    assert!(build(" OUTREC OVERLAY=(5:C'x')", 300).unwrap_err().to_string().contains("BUILD"));
    assert!(build(" OUTREC BUILD=(1,4,290,20)", 300).is_err());
    assert!(build(" OUTREC FIELDS=(1,6,C'x')", 300).is_ok());
}

//! nsort command lines: the published Sort Benchmark lines parse as written, specification
//! files, field types, and errors that name what is wrong.

use oxsort_format::{ColumnSpan, Endian, FieldType, KeyField, KeySpec, RecordLayout};
use oxsort_lang::{parse_nsort, parse_nsort_spec, parse_nsort_with, NsortFile, NsortMethod};

fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

fn file(path: &str, direct: bool, tr: u64, count: Option<u32>, pre: bool) -> NsortFile {
    let mut f = parse_nsort(&args(&format!("-in_file={path}"))).unwrap().inputs.remove(0);
    f.direct = Some(direct);
    f.transfer_size = Some(tr);
    f.count = count;
    f.preallocate = pre;
    f
}

const MIB: u64 = 1 << 20;

#[test]
fn published_line_one() {
    let c = parse_nsort(&args(
        "-processes=4 -memory=13500M -method=radix -touch -format=size:100 \
         -field=name:key,size:10,off:0,character -key=key -statistics \
         -in_file=IN,direct,transfer_size=16M,count=64 \
         -out_file=OUT,direct,transfer_size=128M,count=8,preallocate",
    ))
    .unwrap();
    assert_eq!(c.layout, Some(RecordLayout::BENCHMARK));
    assert_eq!(c.key, KeySpec::benchmark());
    assert_eq!(c.key.fast_path(RecordLayout::BENCHMARK).unwrap().len, 10);
    assert_eq!(c.processes, Some(4));
    assert_eq!(c.memory, Some(13500 * MIB));
    assert_eq!(c.method, Some(NsortMethod::Radix));
    assert!(c.touch && c.statistics);
    assert_eq!(c.inputs, vec![file("IN", true, 16 * MIB, Some(64), false)]);
    assert_eq!(c.output, Some(file("OUT", true, 128 * MIB, Some(8), true)));
    assert!(c.temps.is_empty());
}

#[test]
fn published_line_two_with_temp() {
    let c = parse_nsort(&args(
        "-processes=4 -memory=13500M -method=radix -touch -format=size:100 \
         -field=name:key,size:10,off:0,character -key=key -statistics \
         -in_file=IN,direct,transfer_size=16M,count=64 \
         -out_file=OUT,direct,transfer_size=128M,count=8,preallocate \
         -temp=DIR,direct,transfer_size=64M,count=32,preallocate",
    ))
    .unwrap();
    assert_eq!(c.key, KeySpec::benchmark());
    assert_eq!(c.temps, vec![file("DIR", true, 64 * MIB, Some(32), true)]);
}

#[test]
fn published_line_three() {
    let c = parse_nsort(&args(
        "-processes=4 -memory=24000M -method=radix -format=size:100 \
         -field=name:key,size:10,off:0,character -key=key -statistics \
         -in_file=IN,direct,transfer_size=16M -out_file=OUT,direct,transfer_size=128M \
         -temp=DIR,direct,transfer_size=64M",
    ))
    .unwrap();
    assert_eq!(c.key, KeySpec::benchmark());
    assert_eq!(c.memory, Some(24000 * MIB));
    assert!(!c.touch && c.statistics);
    assert_eq!(c.inputs, vec![file("IN", true, 16 * MIB, None, false)]);
    assert_eq!(c.output, Some(file("OUT", true, 128 * MIB, None, false)));
    assert_eq!(c.temps, vec![file("DIR", true, 64 * MIB, None, false)]);
}

#[test]
fn neosort_abbreviated_form_with_spaces() {
    let c = parse_nsort(&args(
        "-format = size:100 -key = offset:0, size:10, ascending, char -mem=90g -proc=30 \
         -stat -touch -in_file=IN,direct,tr=32m,count=20 -out=OUT,direct,tr=32m,count=20",
    ))
    .unwrap();
    assert_eq!(c.layout, Some(RecordLayout::BENCHMARK));
    assert_eq!(c.key, KeySpec::benchmark());
    assert_eq!(c.memory, Some(90 << 30));
    assert_eq!(c.processes, Some(30));
    assert!(c.touch && c.statistics);
    assert_eq!(c.inputs, vec![file("IN", true, 32 * MIB, Some(20), false)]);
    assert_eq!(c.output, Some(file("OUT", true, 32 * MIB, Some(20), false)));
}

#[test]
fn field_types_and_several_keys() {
    let c = parse_nsort(&args(
        "-format=size:64 -field=name:a,size:4,offset:0,integer \
         -field=name:b,size:8,position:5,unsigned,big_endian -field=name:c,off:13,float \
         -field=name:d,off:17,double -field=name:e,off:25,size:8,decimal \
         -field=name:f,off:33,size:4,packed -field=name:g,off:37,size:5,zoned \
         -field=name:h,off:42,size:3,char \
         -key=b,descending -key=a -key=c -key=d,desc -key=e -key=f -key=g -key=h,asc",
    ))
    .unwrap();
    assert_eq!(
        c.key.fields,
        vec![
            KeyField::bytes(4, 8, FieldType::Unsigned(Endian::Big), true),
            KeyField::bytes(0, 4, FieldType::Signed(Endian::Little), false),
            KeyField::bytes(13, 4, FieldType::Float(Endian::Little), false),
            KeyField::bytes(17, 8, FieldType::Float(Endian::Little), true),
            KeyField::bytes(25, 8, FieldType::Decimal, false),
            KeyField::bytes(33, 4, FieldType::Packed, false),
            KeyField::bytes(37, 5, FieldType::Zoned, false),
            KeyField::bytes(42, 3, FieldType::Char, false),
        ]
    );
}

#[test]
fn delimited_records() {
    let c = parse_nsort(&args(
        "-format=delimiter:'\\n' -field=name:city,delimiter:',',char \
         -field=name:pop,delimiter:',',decimal -key=pop,descending -key=city",
    ))
    .unwrap();
    assert_eq!(c.layout, Some(RecordLayout::LINES));
    assert_eq!(c.key.separator, Some(b','));
    assert_eq!(
        c.key.fields,
        vec![
            KeyField::columns(ColumnSpan::field(1), FieldType::Decimal, true),
            KeyField::columns(ColumnSpan::field(0), FieldType::Char, false),
        ]
    );
    assert!(c.key.compare(b"Oslo,700000", b"Bergen,290000").unwrap().is_lt());
    assert!(c.key.compare(b"Bergen,10", b"Oslo,10.0").unwrap().is_lt());
    let nul = parse_nsort(&args("-format=delimiter:nul")).unwrap();
    assert_eq!(nul.layout, Some(RecordLayout::NUL));
}

#[test]
fn specification_files() {
    let spec = "\
# the benchmark
-format=size:100
-field=name:key,size:10,off:0,character
-key=key

memory=1g
-statistics
";
    let c = parse_nsort_spec(spec).unwrap();
    assert_eq!(c.key, KeySpec::benchmark());
    assert_eq!(c.memory, Some(1 << 30));
    assert!(c.statistics);

    let load = |path: &str| match path {
        "bench.spec" => Ok(spec.to_string()),
        "bad.spec" => Ok("-format=size:100\n-field=name:k,size:10,colour:red\n".to_string()),
        _ => Err("no such file".to_string()),
    };
    let c = parse_nsort_with(&args("-spec=bench.spec -processes=2 -in_file=IN"), load).unwrap();
    assert_eq!(c.key, KeySpec::benchmark());
    assert_eq!(c.processes, Some(2));
    assert_eq!(
        parse_nsort_with(&args("-specification=bad.spec"), load).unwrap_err().to_string(),
        "bad.spec: line 2, column 23: a field attribute oxsort supports (name, size, offset, \
         position, delimiter, character, integer, unsigned, float, double, decimal, packed, \
         zoned, ascending, descending), found 'colour:red'"
    );
    assert_eq!(
        parse_nsort_with(&args("-stat -specification=none.spec"), load).unwrap_err().to_string(),
        "argument 2, column 16: a readable specification file (no such file), found 'none.spec'"
    );
}

#[test]
fn errors_name_the_directive() {
    let err = |line: &str| parse_nsort(&args(line)).unwrap_err().to_string();
    assert_eq!(
        err("-format=size:100 -sumarize"),
        "argument 2, column 1: a directive oxsort supports (-format, -field, -key, -memory, \
         -processes, -method, -touch, -statistics, -in_file, -out_file, -temp_file, \
         -specification), found '-sumarize'"
    );
    assert_eq!(
        err("-m=1g"),
        "argument 1, column 1: an unambiguous directive (could be -memory, -method), found \
         '-m=1g'"
    );
    assert_eq!(
        err("-in_file=IN,direct,sync"),
        "argument 1, column 20: a file option oxsort supports (direct, buffered, \
         transfer_size, count), found 'sync'"
    );
    assert_eq!(
        err("-memory=13500Q"),
        "argument 1, column 9: a memory size such as 13500M, found '13500Q'"
    );
    assert_eq!(
        err("-format=size:100 -key=nokey"),
        "argument 2, column 6: a field defined by -field=name:..., found 'nokey'"
    );
    assert_eq!(
        err("-format=size:100 -key=offset:95,size:10"),
        "argument 2, column 1: a key that fits the records, found 'key field 1 ends at byte \
         105 (1-based), past the end of the 100-byte records'"
    );
    assert_eq!(
        err("-format=size:100 -field=name:k,size:9,integer -key=k"),
        "argument 2, column 1: a integer field 1 to 8 bytes long, found 'size:9'"
    );
    assert_eq!(err("-touch=yes"), "argument 1, column 8: no value after -touch, found 'yes'");
    assert_eq!(err("-method=quick"), "argument 1, column 9: method radix or merge, found 'quick'");
    assert_eq!(
        err("IN OUT"),
        "argument 1, column 1: expected a directive starting with '-', found 'IN'"
    );
    assert_eq!(
        err("-format=delimiter:',' -field=name:a,delimiter:',',integer"),
        "argument 2, column 29: a type that works on delimited text (character, decimal, \
         zoned), not integer, found 'integer'"
    );
}

#[test]
fn default_key_is_the_whole_record() {
    let c = parse_nsort(&args("-format=size:20")).unwrap();
    assert_eq!(c.key.fields, vec![KeyField::bytes(0, 20, FieldType::Char, false)]);
    assert_eq!(c.layout, Some(RecordLayout::Fixed(20)));
}

//! `SUM FIELDS=(p,m,f,...)` through the engine against a reference written from DFSORT's
//! definitions: random layouts of BI, FI, PD and ZD fields of every width, every sign and zone
//! variant, values near each field's limit (so sums overflow often), raw and built keys, one and
//! two passes; invalid decimal data names the sorted record, the field and the byte.

use oxsort_engine::{EngineError, SortSpec};
use oxsort_format::{KeyError, KeySpec, RecordLayout, SumField, SumKind};
use oxsort_lang::parse_fields;
use oxsort_testkit::{seed, setups, EngineTester, Rng};

/// Records per chunk in the tester's setups (2^5): a few thousand records make runs.
const CHUNK_LOG2: u32 = 5;

// ---------------------------------------------------------------------------------------------
// The reference: DFSORT's data formats, decoded and encoded digit by digit in i128.

/// The value of field `f` of `rec` (1-based `index`), or the error naming its first bad byte.
/// BI: unsigned big-endian binary. FI: two's complement. PD: two digit nibbles a byte, the
/// last byte's low nibble the sign (A, C, E, F plus; B, D minus). ZD: a digit a byte in the
/// low nibble under zone F (EBCDIC) or 3 (ASCII); the last byte's zone is the sign (C, A, E,
/// F, 3 plus; D, B, 7 minus), or the last byte is an ASCII overpunch: `{` `A`..`I` for +0..+9,
/// `}` `J`..`R` for -0..-9.
fn decode(f: &SumField, rec: &[u8], index: usize) -> Result<i128, KeyError> {
    let b = &rec[f.offset..f.offset + f.len];
    let last = b.len() - 1;
    let at = |i: usize| f.offset + i + 1;
    match f.kind {
        SumKind::Bi => Ok(b.iter().fold(0i128, |v, &x| v * 256 + x as i128)),
        SumKind::Fi => {
            let u = b.iter().fold(0i128, |v, &x| v * 256 + x as i128);
            let half = 1i128 << (8 * b.len() - 1);
            Ok(if u >= half { u - 2 * half } else { u })
        }
        SumKind::Pd => {
            let mut v = 0i128;
            for (i, &x) in b.iter().enumerate() {
                let bad =
                    KeyError::SumData { field: index, format: "PD", position: at(i), byte: x };
                let (hi, lo) = (x >> 4, x & 15);
                if hi > 9 {
                    return Err(bad);
                }
                v = v * 10 + hi as i128;
                if i < last {
                    if lo > 9 {
                        return Err(bad);
                    }
                    v = v * 10 + lo as i128;
                } else {
                    return match lo {
                        0xA | 0xC | 0xE | 0xF => Ok(v),
                        0xB | 0xD => Ok(-v),
                        _ => Err(bad),
                    };
                }
            }
            unreachable!("a field has a last byte")
        }
        SumKind::Zd => {
            let mut v = 0i128;
            for (i, &x) in b.iter().enumerate() {
                let bad =
                    KeyError::SumData { field: index, format: "ZD", position: at(i), byte: x };
                let (zone, digit) = (x >> 4, (x & 15) as i128);
                if i < last {
                    if !(zone == 0xF || zone == 0x3) || digit > 9 {
                        return Err(bad);
                    }
                    v = v * 10 + digit;
                    continue;
                }
                let (negative, d) = match x {
                    b'{' => (false, 0),
                    b'A'..=b'I' => (false, (x - b'A' + 1) as i128),
                    b'}' => (true, 0),
                    b'J'..=b'R' => (true, (x - b'J' + 1) as i128),
                    _ if digit > 9 => return Err(bad),
                    _ => match zone {
                        0xC | 0xA | 0xE | 0xF | 0x3 => (false, digit),
                        0xD | 0xB | 0x7 => (true, digit),
                        _ => return Err(bad),
                    },
                };
                v = v * 10 + d;
                return Ok(if negative { -v } else { v });
            }
            unreachable!("a field has a last byte")
        }
        other => unreachable!("the tests draw BI, FI, PD and ZD fields, not {other:?}"),
    }
}

/// Whether `v` fits field `f`.
fn fits(f: &SumField, v: i128) -> bool {
    let bits = 8 * f.len as u32;
    match f.kind {
        SumKind::Bi => (0..1i128 << bits).contains(&v),
        SumKind::Fi => (-(1i128 << (bits - 1))..1i128 << (bits - 1)).contains(&v),
        SumKind::Pd => v.abs() < 10i128.pow(2 * f.len as u32 - 1),
        SumKind::Zd => v.abs() < 10i128.pow(f.len as u32),
        other => unreachable!("the tests draw BI, FI, PD and ZD fields, not {other:?}"),
    }
}

/// The decimal digits of `|v|`, `n` of them, most significant first.
fn digits(v: i128, n: usize) -> Vec<u8> {
    let text = format!("{:0n$}", v.unsigned_abs());
    text.bytes().skip(text.len() - n).map(|d| d - b'0').collect()
}

/// Writes `v` into field `f` of `rec`, the group's first record: BI/FI two's complement; PD
/// sign C or D; ZD in the zones of that first record (ASCII when its first byte has zone 3 —
/// or, for a one-byte field, zone 3 or 7 — else EBCDIC), the sign zone 3/7 or C/D.
fn encode(f: &SumField, rec: &mut [u8], v: i128) {
    let out = &mut rec[f.offset..f.offset + f.len];
    let n = out.len();
    match f.kind {
        SumKind::Bi | SumKind::Fi => out.copy_from_slice(&v.to_be_bytes()[16 - n..]),
        SumKind::Pd => {
            let mut nibbles = digits(v, 2 * n - 1);
            nibbles.push(if v < 0 { 0xD } else { 0xC });
            for (o, p) in out.iter_mut().zip(nibbles.chunks(2)) {
                *o = p[0] << 4 | p[1];
            }
        }
        SumKind::Zd => {
            let zone = out[0] >> 4;
            let ascii = zone == 3 || (n == 1 && zone == 7);
            for (o, d) in out.iter_mut().zip(digits(v, n)) {
                *o = if ascii { 0x30 } else { 0xF0 } | d;
            }
            let sign = match (ascii, v < 0) {
                (true, false) => 0x30,
                (true, true) => 0x70,
                (false, false) => 0xC0,
                (false, true) => 0xD0,
            };
            out[n - 1] = sign | (out[n - 1] & 15);
        }
        other => unreachable!("the tests draw BI, FI, PD and ZD fields, not {other:?}"),
    }
}

/// What SUM makes of `sorted` records (`key` gives each record's key): within each run of equal
/// keys, each record's fields are added into the sums of the run's current first record when
/// every field's sum fits; otherwise (an overflow) the sums so far are written and the record
/// starts new sums. A first record nothing was added into is written as it was. Returns the
/// records written, the records added and the overflows; or the first sorted record (1-based)
/// holding invalid data in a summed field, with its first such field's error.
fn reference(
    sorted: &[&[u8]],
    fields: &[SumField],
    key: impl Fn(&[u8]) -> u8,
) -> Result<(Vec<u8>, u64, u64), (u64, KeyError)> {
    let mut values = Vec::with_capacity(sorted.len());
    for (n, r) in sorted.iter().enumerate() {
        let v: Result<Vec<i128>, KeyError> =
            fields.iter().enumerate().map(|(i, f)| decode(f, r, i + 1)).collect();
        values.push(v.map_err(|e| (n as u64 + 1, e))?);
    }
    let (mut out, mut summed, mut overflows) = (Vec::new(), 0, 0);
    // The group's first record, its sums, whether anything was added.
    let mut group: Option<(Vec<u8>, Vec<i128>, bool)> = None;
    let flush = |out: &mut Vec<u8>, (mut first, sums, added): (Vec<u8>, Vec<i128>, bool)| {
        if added {
            for (f, &s) in fields.iter().zip(&sums) {
                encode(f, &mut first, s);
            }
        }
        out.extend_from_slice(&first);
    };
    for (r, v) in sorted.iter().zip(values) {
        if let Some((first, sums, added)) = &mut group {
            if key(first) == key(r) {
                let next: Vec<i128> = sums.iter().zip(&v).map(|(a, b)| a + b).collect();
                if fields.iter().zip(&next).all(|(f, &s)| fits(f, s)) {
                    *sums = next;
                    *added = true;
                    summed += 1;
                    continue;
                }
                overflows += 1;
            }
            flush(&mut out, group.take().unwrap());
        }
        group = Some((r.to_vec(), v, false));
    }
    if let Some(g) = group {
        flush(&mut out, g);
    }
    Ok((out, summed, overflows))
}

// ---------------------------------------------------------------------------------------------
// Random layouts and data.

/// A random field of `kind` at `offset`, of a width the word-wide and digit-wise reads both
/// see: binary 1 to 8 bytes, packed 1 to 16, zoned mostly 1 to 16 and sometimes up to 31.
fn random_field(rng: &mut Rng, offset: usize) -> SumField {
    let kind = rng.pick(&[SumKind::Bi, SumKind::Fi, SumKind::Pd, SumKind::Zd]);
    let len = match kind {
        SumKind::Bi | SumKind::Fi => 1 + rng.below(8) as usize,
        SumKind::Pd => 1 + rng.below(16) as usize,
        SumKind::Zd if rng.below(4) == 0 => 17 + rng.below(15) as usize,
        SumKind::Zd => 1 + rng.below(16) as usize,
        other => unreachable!("the tests draw BI, FI, PD and ZD fields, not {other:?}"),
    };
    SumField { offset, len, kind }
}

/// The greatest magnitude field `f` holds (for BI and FI, the positive limit).
fn limit(f: &SumField) -> i128 {
    let bits = 8 * f.len as u32;
    match f.kind {
        SumKind::Bi => (1i128 << bits) - 1,
        SumKind::Fi => (1i128 << (bits - 1)) - 1,
        SumKind::Pd => 10i128.pow(2 * f.len as u32 - 1) - 1,
        SumKind::Zd => 10i128.pow(f.len as u32) - 1,
        other => unreachable!("the tests draw BI, FI, PD and ZD fields, not {other:?}"),
    }
}

/// A random value for field `f`: near its limits a third of the time (sums overflow), small a
/// third, anywhere the rest.
fn random_value(rng: &mut Rng, f: &SumField) -> i128 {
    let max = limit(f);
    let min = match f.kind {
        SumKind::Bi => 0,
        SumKind::Fi => -max - 1,
        _ => -max,
    };
    let span = (max - min) as u128 + 1;
    let anywhere = |rng: &mut Rng| {
        let r = (rng.next_u64() as u128) << 64 | rng.next_u64() as u128;
        min + (r % span) as i128
    };
    let v = match rng.below(3) {
        0 => {
            let off = rng.below(4) as i128;
            if rng.below(2) == 0 {
                max - off
            } else {
                min + off
            }
        }
        1 => rng.below(21) as i128 - 10,
        _ => anywhere(rng),
    };
    v.clamp(min, max)
}

/// Writes `v` into field `f` of `rec` in a random one of its valid forms: any plus or minus
/// sign nibble or zone, ASCII or EBCDIC digits (one zone per record, as data sets have), or
/// an ASCII overpunch in the last zoned byte.
fn write_value(rng: &mut Rng, f: &SumField, rec: &mut [u8], v: i128, ascii: bool) {
    let out = &mut rec[f.offset..f.offset + f.len];
    let n = out.len();
    let neg = v < 0;
    match f.kind {
        SumKind::Bi | SumKind::Fi => out.copy_from_slice(&v.to_be_bytes()[16 - n..]),
        SumKind::Pd => {
            let mut nibbles = digits(v, 2 * n - 1);
            let signs: &[u8] = if neg { &[0xB, 0xD] } else { &[0xA, 0xC, 0xE, 0xF] };
            nibbles.push(rng.pick(signs));
            for (o, p) in out.iter_mut().zip(nibbles.chunks(2)) {
                *o = p[0] << 4 | p[1];
            }
        }
        SumKind::Zd => {
            let ds = digits(v, n);
            for (o, &d) in out.iter_mut().zip(&ds) {
                *o = if ascii { 0x30 } else { 0xF0 } | d;
            }
            let d = ds[n - 1];
            out[n - 1] = match rng.below(3) {
                0 => match (neg, d) {
                    (false, 0) => b'{',
                    (false, d) => b'A' + d - 1,
                    (true, 0) => b'}',
                    (true, d) => b'J' + d - 1,
                },
                _ => {
                    let zones: &[u8] = match (neg, ascii) {
                        (false, true) => &[0x3],
                        (true, true) => &[0x7],
                        (false, false) => &[0xC, 0xA, 0xE, 0xF],
                        (true, false) => &[0xD, 0xB],
                    };
                    rng.pick(zones) << 4 | d
                }
            };
        }
        other => unreachable!("the tests draw BI, FI, PD and ZD fields, not {other:?}"),
    }
}

/// Makes the byte at `i` of decimal field `f` of `rec` invalid.
fn corrupt(rng: &mut Rng, f: &SumField, rec: &mut [u8], i: usize) {
    let b = &mut rec[f.offset + i];
    let last = i == f.len - 1;
    *b = match (f.kind, last, rng.below(2)) {
        // A digit nibble above 9.
        (SumKind::Pd, _, 0) => (0xA + rng.below(6) as u8) << 4 | (*b & 15),
        (SumKind::Pd, false, _) => (*b & 0xF0) | (0xA + rng.below(6) as u8),
        // A sign nibble that is a digit.
        (SumKind::Pd, true, _) => (*b & 0xF0) | rng.below(10) as u8,
        // A zone that is not a digit's, or a digit above 9.
        (SumKind::Zd, false, 0) => rng.pick(&[0x0, 0x4, 0x7, 0xC, 0xD]) << 4 | (*b & 15),
        (SumKind::Zd, false, _) => 0xF0 | (0xA + rng.below(6) as u8),
        (SumKind::Zd, true, 0) => rng.pick(&[0x0u8, 0x20, 0x40, 0x90]),
        (SumKind::Zd, true, _) => 0xC0 | (0xA + rng.below(6) as u8),
        _ => unreachable!("only decimal fields hold invalid data"),
    };
}

/// A random layout: a key byte, then 1 to 5 fields, then a filler byte. Returns the fields and
/// the record size.
fn random_layout(rng: &mut Rng) -> (Vec<SumField>, usize) {
    let mut fields = Vec::new();
    let mut at = 1;
    for _ in 0..1 + rng.below(5) {
        let f = random_field(rng, at);
        at += f.len;
        fields.push(f);
    }
    (fields, at + 1)
}

/// `n` records of `size` bytes: the key byte one of `keys` letters (few: long groups), valid
/// fields, a random filler.
fn random_records(rng: &mut Rng, fields: &[SumField], size: usize, n: usize, keys: u64) -> Vec<u8> {
    let mut data = vec![0u8; n * size];
    for rec in data.chunks_exact_mut(size) {
        rec[0] = b'a' + rng.below(keys) as u8;
        rec[size - 1] = rng.below(256) as u8;
        let ascii = rng.below(2) == 0;
        for f in fields {
            let v = random_value(rng, f);
            write_value(rng, f, rec, v, ascii);
        }
    }
    data
}

fn spec(fields: &[SumField], size: usize, key: KeySpec) -> SortSpec {
    SortSpec {
        layout: RecordLayout::Fixed(size),
        key: Some(key),
        sum: Some(fields.to_vec()),
        ..SortSpec::default()
    }
}

/// The records of `data` stably sorted by their key byte (descending if `down`).
fn sorted(data: &[u8], size: usize, down: bool) -> Vec<&[u8]> {
    let mut recs: Vec<&[u8]> = data.chunks_exact(size).collect();
    recs.sort_by_key(|r| if down { 255 - r[0] } else { r[0] });
    recs
}

// ---------------------------------------------------------------------------------------------

#[test]
fn sums_match_the_reference_for_every_format_width_and_sign() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let all = setups(CHUNK_LOG2);
    for round in 0..48 {
        let (fields, size) = random_layout(&mut rng);
        // Descending keys are built per record; ascending CH keys are the record's bytes.
        let down = round % 3 == 2;
        let key = parse_fields(if down { "1,1,CH,D" } else { "1,1,CH,A" }).unwrap();
        let n = [1, 2, 3, 200, 3000][rng.below(5) as usize];
        let keys = 1 + rng.below(6);
        let data = random_records(&mut rng, &fields, size, n, keys);
        let (want, summed, overflows) =
            reference(&sorted(&data, size, down), &fields, |r| r[0]).expect("valid data sums");
        // Every setup on the larger inputs; one pass and two on the small ones.
        let small = [&all[0], all.iter().find(|s| s.two_pass()).unwrap()];
        let these: Vec<_> = if n >= 200 { all.iter().collect() } else { small.to_vec() };
        for s in these {
            let what = format!("seed {seed}, round {round}, {}, {fields:?}, n={n}", s.name);
            let t = EngineTester::new();
            let (got, stats) = t
                .run(s, &spec(&fields, size, key.clone()), &data)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            if got != want {
                let i = (0..).find(|&i| got.get(i) != want.get(i)).unwrap();
                panic!(
                    "{what}: output differs in record {} (got {:02X?}, want {:02X?})",
                    i / size + 1,
                    got.get(i / size * size..(i / size + 1) * size),
                    want.get(i / size * size..(i / size + 1) * size)
                );
            }
            let note = match overflows {
                0 => format!(
                    "SUM FIELDS: {summed} records added into the first of their key, no sum \
                     overflowed"
                ),
                n => format!(
                    "SUM FIELDS: {summed} records added into the first of their key, {n} left \
                     unsummed (their sum would overflow)"
                ),
            };
            assert!(stats.notes.iter().any(|m| m.contains(&note)), "{what}: {:?}", stats.notes);
            assert_eq!(stats.records_written, n as u64 - summed, "{what}");
        }
    }
}

#[test]
fn overflows_are_counted_and_leave_both_records_unsummed() {
    // A PD field of 2 bytes holds 999 at most: 600 + 600 overflows, 600 + 300 does not.
    let f = [SumField { offset: 1, len: 2, kind: SumKind::Pd }];
    let recs: [[u8; 3]; 4] =
        [[b'a', 0x60, 0x0F], [b'a', 0x60, 0x0C], [b'a', 0x30, 0x0F], [b'a', 0x00, 0x1D]];
    let data = recs.concat();
    let t = EngineTester::new();
    let s = &setups(CHUNK_LOG2)[0];
    let (got, stats) = t.run(s, &spec(&f, 3, parse_fields("1,1,CH,A").unwrap()), &data).unwrap();
    // The first 600 is written as it was read (sign F kept); the second starts a new sum
    // (900 - 1 = 899, sign C).
    assert_eq!(got, [b'a', 0x60, 0x0F, b'a', 0x89, 0x9C]);
    assert!(
        stats
            .notes
            .iter()
            .any(|m| m.contains("2 records added into the first of their key, 1 left unsummed")),
        "{:?}",
        stats.notes
    );
}

#[test]
fn without_overflows_the_note_says_none_and_duplicates_are_the_outputs() {
    // Two keys, three records each: all summed, nothing overflows; the output holds two
    // distinct keys, so no duplicate keys, whatever was summed away.
    let f = [SumField { offset: 1, len: 2, kind: SumKind::Pd }];
    let recs: [[u8; 3]; 6] = [
        [b'a', 0x00, 0x1C],
        [b'b', 0x00, 0x2C],
        [b'a', 0x00, 0x3C],
        [b'b', 0x00, 0x4C],
        [b'a', 0x00, 0x5C],
        [b'b', 0x00, 0x6C],
    ];
    let t = EngineTester::new();
    let s = &setups(CHUNK_LOG2)[0];
    let (got, stats) =
        t.run(s, &spec(&f, 3, parse_fields("1,1,CH,A").unwrap()), &recs.concat()).unwrap();
    assert_eq!(got, [b'a', 0x00, 0x9C, b'b', 0x01, 0x2C]);
    assert_eq!(stats.duplicate_keys, 0, "the output has no two records with one key");
    let note = stats.notes.iter().find(|m| m.starts_with("SUM FIELDS")).expect("a SUM note");
    assert!(
        note.contains("4 records added into the first of their key, no sum overflowed"),
        "{note}"
    );
    assert!(!note.contains("0 left unsummed"), "{note}");
}

#[test]
fn invalid_decimal_data_names_the_sorted_record_field_and_byte() {
    let seed = seed();
    let mut rng = Rng::new(seed ^ 0x5u64);
    let s = &setups(CHUNK_LOG2)[0];
    let mut tried = 0;
    while tried < 40 {
        let (fields, size) = random_layout(&mut rng);
        let decimal: Vec<usize> = (0..fields.len())
            .filter(|&i| matches!(fields[i].kind, SumKind::Pd | SumKind::Zd))
            .collect();
        if decimal.is_empty() {
            continue;
        }
        tried += 1;
        let n = 1 + rng.below(300) as usize;
        let keys = 1 + rng.below(4);
        let mut data = random_records(&mut rng, &fields, size, n, keys);
        // One or two bad bytes, in one or two records.
        for _ in 0..1 + rng.below(2) {
            let r = rng.below(n as u64) as usize;
            let f = fields[rng.pick(&decimal)];
            let i = rng.below(f.len as u64) as usize;
            corrupt(&mut rng, &f, &mut data[r * size..(r + 1) * size], i);
        }
        let (record, source) = reference(&sorted(&data, size, false), &fields, |r| r[0])
            .expect_err("corrupt data is refused");
        let what = format!("seed {seed}, {fields:?}, n={n}");
        let t = EngineTester::new();
        match t.run(s, &spec(&fields, size, parse_fields("1,1,CH,A").unwrap()), &data) {
            Err(EngineError::Key { path, record: got_record, source: got }) => {
                let msg = got.to_string();
                assert_eq!((got_record, got), (record, source), "{what}");
                assert_eq!(path.display().to_string(), "SUM FIELDS (sorted records)", "{what}");
                // Called a SUM field, not a key field.
                assert!(msg.contains("SUM field") && !msg.contains("key field"), "{what}: {msg}");
            }
            Err(e) => panic!("{what}: expected record {record}: {source}, got {e}"),
            Ok((out, _)) => {
                panic!("{what}: expected record {record}: {source}, got {} bytes", out.len())
            }
        }
    }
}

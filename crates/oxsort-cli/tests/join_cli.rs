//! JOINKEYS jobs through `oxsort sort --control`, compared with a join computed here from
//! DFSORT's definitions: nested loops over the two inputs (each in key order, equal keys in input
//! order), every F1 record of a key with every F2 record of the key (F1 outer, F2 inner), the
//! unpaired records kept as JOIN UNPAIRED says, all in key order, then the main task's sort.

mod common;
use common::{oxsort, run, stderr};

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

const F1_LEN: usize = 20;
const F2_LEN: usize = 30;

/// A small deterministic generator (xorshift64*); the seed is printed by the tests.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn seed() -> u64 {
    let s = std::env::var("OXSORT_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    eprintln!("seed {s} (OXSORT_TEST_SEED overrides)");
    s
}

/// F1: key fields at 1,2 (A) and 3,2 (D); F2: the same keys at 6,2 and 8,2. Few distinct keys,
/// so both sides have duplicates and each has keys the other lacks.
fn records(rng: &mut Rng, n: usize, len: usize, key_at: usize, tag: u8) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut r: Vec<u8> = (0..len).map(|j| b'a' + ((i + j) % 26) as u8).collect();
            for k in 0..4 {
                // F1's keys start A-D, F2's B-E: each side has keys the other lacks.
                let base = if k == 0 && tag == b'2' { b'B' } else { b'A' };
                r[key_at + k] = base + rng.below(if k % 2 == 0 { 4 } else { 3 }) as u8;
            }
            let seq = format!("{tag}{i:05}");
            let at = if key_at == 0 { 4 } else { 10 };
            r[at..at + seq.len()].copy_from_slice(seq.as_bytes());
            r
        })
        .collect()
}

/// The join key of a record whose key starts at `at`: field 1 ascending, field 2 descending.
fn key_cmp(a: &[u8], at_a: usize, b: &[u8], at_b: usize) -> Ordering {
    a[at_a..at_a + 2]
        .cmp(&b[at_b..at_b + 2])
        .then_with(|| b[at_b + 2..at_b + 4].cmp(&a[at_a + 2..at_a + 4]))
}

struct Variant {
    join: &'static str,
    f1: bool,
    f2: bool,
    only: bool,
}

const VARIANTS: &[Variant] = &[
    Variant { join: "", f1: false, f2: false, only: false },
    Variant { join: " JOIN UNPAIRED,F1\n", f1: true, f2: false, only: false },
    Variant { join: " JOIN UNPAIRED,F2\n", f1: false, f2: true, only: false },
    Variant { join: " JOIN UNPAIRED,F1,F2\n", f1: true, f2: true, only: false },
    Variant { join: " JOIN UNPAIRED\n", f1: true, f2: true, only: false },
    Variant { join: " JOIN UNPAIRED,F1,ONLY\n", f1: true, f2: false, only: true },
    Variant { join: " JOIN UNPAIRED,F2,ONLY\n", f1: false, f2: true, only: true },
    Variant { join: " JOIN UNPAIRED,F1,F2,ONLY\n", f1: true, f2: true, only: true },
];

/// `REFORMAT FIELDS=(F1:1,20,F2:9,10,?,F2:1,4),FILL=C'*'` applied to a pair (or an unpaired
/// record).
fn reformat(f1: Option<&[u8]>, f2: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    match f1 {
        Some(r) => out.extend_from_slice(&r[0..20]),
        None => out.extend_from_slice(&[b'*'; 20]),
    }
    match f2 {
        Some(r) => out.extend_from_slice(&r[8..18]),
        None => out.extend_from_slice(&[b'*'; 10]),
    }
    out.push(match (f1, f2) {
        (Some(_), Some(_)) => b'B',
        (Some(_), None) => b'1',
        _ => b'2',
    });
    match f2 {
        Some(r) => out.extend_from_slice(&r[0..4]),
        None => out.extend_from_slice(&[b'*'; 4]),
    }
    out
}
const REFORMAT: &str = " REFORMAT FIELDS=(F1:1,20,F2:9,10,?,F2:1,4),FILL=C'*'\n";
const JOINED_LEN: usize = 35;

/// The joined records in join order (the main task's input), by nested loops.
fn reference(
    f1: &[Vec<u8>],
    f2: &[Vec<u8>],
    v: &Variant,
    build: impl Fn(Option<&[u8]>, Option<&[u8]>) -> Vec<u8>,
) -> Vec<Vec<u8>> {
    let mut s1: Vec<&Vec<u8>> = f1.iter().collect();
    s1.sort_by(|a, b| key_cmp(a, 0, b, 0));
    let mut s2: Vec<&Vec<u8>> = f2.iter().collect();
    s2.sort_by(|a, b| key_cmp(a, 5, b, 5));
    // (a record whose key orders the entry, from which side, the joined record)
    let mut entries: Vec<(&[u8], usize, Vec<u8>)> = Vec::new();
    for r1 in &s1 {
        let mut paired = false;
        for r2 in &s2 {
            if key_cmp(r1, 0, r2, 5) == Ordering::Equal {
                paired = true;
                if !v.only {
                    entries.push((r1, 0, build(Some(r1), Some(r2))));
                }
            }
        }
        if !paired && v.f1 {
            entries.push((r1, 0, build(Some(r1), None)));
        }
    }
    for r2 in &s2 {
        let paired = s1.iter().any(|r1| key_cmp(r1, 0, r2, 5) == Ordering::Equal);
        if !paired && v.f2 {
            entries.push((r2, 5, build(None, Some(r2))));
        }
    }
    entries.sort_by(|(a, sa, _), (b, sb, _)| {
        key_cmp(a, if *sa == 0 { 0 } else { 5 }, b, if *sb == 0 { 0 } else { 5 })
    });
    entries.into_iter().map(|(_, _, r)| r).collect()
}

fn write_records(path: &Path, recs: &[Vec<u8>]) {
    std::fs::write(path, recs.concat()).unwrap();
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".oxsort"))
        .collect()
}

struct Setup {
    dir: tempfile::TempDir,
    f1: Vec<Vec<u8>>,
    f2: Vec<Vec<u8>>,
    p1: PathBuf,
    p2: PathBuf,
}

fn setup(n1: usize, n2: usize) -> Setup {
    let mut rng = Rng(seed() | 1);
    let dir = tempfile::tempdir().unwrap();
    let f1 = records(&mut rng, n1, F1_LEN, 0, b'1');
    let f2 = records(&mut rng, n2, F2_LEN, 5, b'2');
    let (p1, p2) = (dir.path().join("f1.dat"), dir.path().join("f2.dat"));
    write_records(&p1, &f1);
    write_records(&p2, &f2);
    Setup { dir, f1, f2, p1, p2 }
}

/// Runs a join job; returns the output (or the error text).
fn run_job(s: &Setup, control: &str, extra: &[&str]) -> Result<Vec<u8>, String> {
    let ctl = s.dir.path().join("ctl");
    std::fs::write(&ctl, control).unwrap();
    let out = s.dir.path().join("out.dat");
    let _ = std::fs::remove_file(&out);
    let o = run(oxsort()
        .args(["sort", "-q", "--control"])
        .arg(&ctl)
        .arg(format!("--dd=SORTJNF1={}", s.p1.display()))
        .arg(format!("--dd=SORTJNF2={}", s.p2.display()))
        .arg(format!("--lrecl=SORTJNF1={F1_LEN}"))
        .arg(format!("--lrecl=SORTJNF2={F2_LEN}"))
        .arg("-o")
        .arg(&out)
        .args(extra));
    assert!(leftovers(s.dir.path()).is_empty(), "temp files left: {:?}", leftovers(s.dir.path()));
    if !o.status.success() {
        assert!(!out.exists(), "an output was left after a failure");
        return Err(stderr(&o));
    }
    Ok(std::fs::read(&out).unwrap())
}

const KEYS: &str =
    " JOINKEYS FILE=F1,FIELDS=(1,2,A,3,2,D)\n JOINKEYS FILE=F2,FIELDS=(6,2,A,8,2,D)\n";

#[test]
fn every_join_kind_matches_the_nested_loop_join() {
    let s = setup(400, 300);
    for v in VARIANTS {
        let want = reference(&s.f1, &s.f2, v, reformat);
        assert!(!want.is_empty(), "the data gives {} no records", v.join);
        let control = format!("{KEYS}{}{REFORMAT} OPTION COPY\n", v.join);
        for memory in [None, Some("1M")] {
            let extra: Vec<&str> = memory.map(|m| vec!["--memory", m]).unwrap_or_default();
            let got = run_job(&s, &control, &extra).unwrap_or_else(|e| panic!("{control}: {e}"));
            assert_eq!(got.len(), want.len() * JOINED_LEN, "{control} memory {memory:?}");
            assert!(got == want.concat(), "{control} (memory {memory:?}): output differs");
        }
    }
}

#[test]
fn main_task_sorts_filters_and_reshapes_the_joined_records() {
    let s = setup(2000, 1500);
    let v = &VARIANTS[3];
    let joined = reference(&s.f1, &s.f2, v, reformat);
    // Main task: keep paired and F2-only records, sort by F2's bytes 9-18 descending (stable),
    // then keep the indicator and F1's first 6 bytes.
    for ind in [b'B', b'1', b'2'] {
        assert!(joined.iter().any(|r| r[30] == ind), "no joined record has indicator {ind}");
    }
    let mut want: Vec<Vec<u8>> = joined.into_iter().filter(|r| r[30] != b'1').collect();
    want.sort_by(|a, b| b[20..30].cmp(&a[20..30]));
    let want: Vec<u8> = want.iter().flat_map(|r| [&r[30..31], &r[0..6]].concat()).collect();
    let control = format!(
        "{KEYS}{}{REFORMAT} INCLUDE COND=(31,1,CH,NE,C'1')\n SORT FIELDS=(21,10,CH,D)\n \
         OUTREC BUILD=(31,1,1,6)\n",
        v.join
    );
    for extra in [&[][..], &["--memory", "1M"][..]] {
        let got = run_job(&s, &control, extra).unwrap();
        assert!(got == want, "main task output differs ({extra:?})");
    }
}

#[test]
fn only_without_reformat_passes_the_unpaired_records_as_they_are() {
    let s = setup(300, 200);
    let v = &VARIANTS[5];
    let want = reference(&s.f1, &s.f2, v, |f1, _| f1.unwrap().to_vec());
    let got = run_job(&s, &format!("{KEYS}{} OPTION COPY\n", v.join), &[]).unwrap();
    assert!(got == want.concat());
}

#[test]
fn sorted_inputs_are_read_as_they_are_and_a_disorder_is_named() {
    let mut s = setup(500, 400);
    let mut sorted1 = s.f1.clone();
    sorted1.sort_by(|a, b| key_cmp(a, 0, b, 0));
    let mut sorted2 = s.f2.clone();
    sorted2.sort_by(|a, b| key_cmp(a, 5, b, 5));
    write_records(&s.p1, &sorted1);
    write_records(&s.p2, &sorted2);
    s.f1 = sorted1;
    s.f2 = sorted2;
    let v = &VARIANTS[3];
    let want = reference(&s.f1, &s.f2, v, reformat).concat();
    let sorted_keys = " JOINKEYS FILE=F1,FIELDS=(1,2,A,3,2,D),SORTED\n \
                       JOINKEYS FILE=F2,FIELDS=(6,2,A,8,2,D),SORTED,NOSEQCK\n";
    let control = format!("{sorted_keys}{}{REFORMAT} OPTION COPY\n", v.join);
    assert!(run_job(&s, &control, &[]).unwrap() == want);

    // Out of order: two records swapped somewhere in the middle of F1.
    let mut bad = s.f1.clone();
    let i =
        (200..bad.len()).find(|&i| key_cmp(&bad[i - 1], 0, &bad[i], 0) == Ordering::Less).unwrap();
    bad.swap(i - 1, i);
    write_records(&s.p1, &bad);
    let e = run_job(&s, &control, &[]).unwrap_err();
    assert!(
        e.contains("SORTJNF1") && e.contains(&format!("record {} of", i + 1)),
        "record {} should be named: {e}",
        i + 1
    );
    assert!(e.contains(&s.p1.display().to_string()), "{e}");
}

/// Sides longer than one read of the join (records cut by a read's end), sorted by the engine
/// or read as they are from concatenated files; a SORTED file that ends inside a record is
/// named, with the whole records before it.
#[test]
fn long_sides_join_across_reads_and_concatenated_files() {
    let mut s = setup(20_000, 15_000);
    let v = &VARIANTS[3];
    let want = reference(&s.f1, &s.f2, v, reformat).concat();
    let sorted_control = |sorted: &str| {
        format!(
            " JOINKEYS FILE=F1,FIELDS=(1,2,A,3,2,D){sorted}\n \
             JOINKEYS FILE=F2,FIELDS=(6,2,A,8,2,D){sorted}\n{}{REFORMAT} OPTION COPY\n",
            v.join
        )
    };
    assert!(run_job(&s, &sorted_control(""), &[]).unwrap() == want, "sorted by the engine");

    s.f1.sort_by(|a, b| key_cmp(a, 0, b, 0));
    s.f2.sort_by(|a, b| key_cmp(a, 5, b, 5));
    let half = s.f1.len() / 2 + 7;
    let p1b = s.dir.path().join("f1b.dat");
    write_records(&s.p1, &s.f1[..half]);
    write_records(&p1b, &s.f1[half..]);
    write_records(&s.p2, &s.f2);
    let second = format!("--dd=SORTJNF1={}", p1b.display());
    let got = run_job(&s, &sorted_control(",SORTED"), &[&second]).unwrap();
    assert!(got == want, "SORTED, F1 in two files");

    let mut cut = s.f1[..half].concat();
    cut.truncate(cut.len() - 3);
    std::fs::write(&s.p1, cut).unwrap();
    let e = run_job(&s, &sorted_control(",SORTED"), &[&second]).unwrap_err();
    assert!(
        e.contains(&s.p1.display().to_string()) && e.contains(&format!("{} whole", half - 1)),
        "{e}"
    );
}

#[test]
fn statement_mistakes_are_named_with_their_line() {
    let s = setup(10, 10);
    let e = run_job(&s, " JOINKEYS FILE=F1,FIELDS=(1,2,A)\n REFORMAT FIELDS=(F1:1,2)\n", &[])
        .unwrap_err();
    assert!(e.contains("line 1") && e.contains("F2"), "{e}");
    let e = run_job(&s, &format!("{KEYS} OPTION COPY\n"), &[]).unwrap_err();
    assert!(e.contains("REFORMAT"), "{e}");
    let e = run_job(&s, &format!("{KEYS}{REFORMAT}"), &[]).unwrap_err();
    assert!(e.contains("needs SORT FIELDS=(...) or OPTION COPY"), "{e}");
    let e = run_job(
        &s,
        " JOINKEYS FILE=F1,FIELDS=(1,2,A)\n JOINKEYS FILE=F2,FIELDS=(6,3,A)\n\
         REFORMAT FIELDS=(F1:1,2)\n",
        &[],
    )
    .unwrap_err();
    assert!(e.contains("line 2") && e.contains("length and order"), "{e}");
    let e = run_job(&s, &format!("{KEYS} REFORMAT FIELDS=(F2:25,10)\n OPTION COPY\n"), &[])
        .unwrap_err();
    assert!(e.contains("F2") && e.contains("byte 34") && e.contains("30-byte"), "{e}");
}

/// The same definition on bigger inputs, by key groups: every key's F1 records (input order)
/// with every one of its F2 records, keys in join order (field 1 ascending, field 2
/// descending).
fn reference_by_groups(f1: &[Vec<u8>], f2: &[Vec<u8>], v: &Variant) -> Vec<u8> {
    use std::collections::BTreeMap;
    type Group<'a> = (Vec<&'a [u8]>, Vec<&'a [u8]>);
    let order = |r: &[u8], at: usize| {
        let mut k = r[at..at + 2].to_vec();
        k.extend(r[at + 2..at + 4].iter().map(|b| !b));
        k
    };
    let mut groups: BTreeMap<Vec<u8>, Group> = BTreeMap::new();
    for r in f1 {
        groups.entry(order(r, 0)).or_default().0.push(r);
    }
    for r in f2 {
        groups.entry(order(r, 5)).or_default().1.push(r);
    }
    let mut out = Vec::new();
    for (a, b) in groups.values() {
        match (a.is_empty(), b.is_empty()) {
            (false, false) if !v.only => {
                for r1 in a {
                    for r2 in b {
                        out.extend(reformat(Some(r1), Some(r2)));
                    }
                }
            }
            (false, true) if v.f1 => a.iter().for_each(|r| out.extend(reformat(Some(r), None))),
            (true, false) if v.f2 => b.iter().for_each(|r| out.extend(reformat(None, Some(r)))),
            _ => {}
        }
    }
    out
}

/// Records with keys from a wider alphabet: small groups, so the join of inputs bigger than
/// the memory budget stays small.
fn wide_records(rng: &mut Rng, n: usize, len: usize, key_at: usize, tag: u8) -> Vec<Vec<u8>> {
    let mut recs = records(rng, n, len, key_at, tag);
    for r in &mut recs {
        r[key_at] = b'A' + rng.below(20) as u8 + if tag == b'2' { 4 } else { 0 };
        r[key_at + 1] = b'A' + rng.below(26) as u8;
        r[key_at + 2] = b'A' + rng.below(26) as u8;
    }
    recs
}

#[test]
fn inputs_bigger_than_memory_join_in_two_passes() {
    let mut rng = Rng(seed() | 1);
    let dir = tempfile::tempdir().unwrap();
    let f1 = wide_records(&mut rng, 90_000, F1_LEN, 0, b'1');
    let f2 = wide_records(&mut rng, 60_000, F2_LEN, 5, b'2');
    let (p1, p2) = (dir.path().join("f1.dat"), dir.path().join("f2.dat"));
    write_records(&p1, &f1);
    write_records(&p2, &f2);
    // The F1 sort under this budget takes two passes (as the plan says).
    let o = run(oxsort()
        .args(["explain", "--json", "--record-size", "20", "--fields", "1,2,CH,A,3,2,CH,D"])
        .args(["--memory", "1M"])
        .arg(&p1));
    let plan = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(plan.contains("\"kind\": \"two\""), "{plan}");
    let s = Setup { dir, f1, f2, p1, p2 };
    for v in [&VARIANTS[0], &VARIANTS[3], &VARIANTS[7]] {
        let want = reference_by_groups(&s.f1, &s.f2, v);
        let control = format!("{KEYS}{}{REFORMAT} OPTION COPY\n", v.join);
        let got = run_job(&s, &control, &["--memory", "1M"]).unwrap();
        assert_eq!(got.len(), want.len(), "{control}");
        assert!(got == want, "{control}: output differs");
    }
}

/// The records DFSORT's SUM FIELDS=NONE keeps: the first (in input order) of each join key.
fn first_of_each_key(recs: Vec<Vec<u8>>, at: usize) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    recs.into_iter().filter(|r| seen.insert(r[at..at + 4].to_vec())).collect()
}

#[test]
fn joinkeys_include_omit_and_stopaft_select_each_file_before_the_join() {
    let s = setup(500, 400);
    let v = &VARIANTS[3];
    // F1: INCLUDE= on the last digit of its sequence number (byte 10); F2: OMIT= on its own
    // (byte 16), then STOPAFT=150 of the records it keeps (in input order, before the sort).
    let f1: Vec<Vec<u8>> = s.f1.iter().filter(|r| r[9] < b'5').cloned().collect();
    let f2: Vec<Vec<u8>> = s.f2.iter().filter(|r| r[15] != b'3').take(150).cloned().collect();
    assert!(f1.len() < s.f1.len() && f2.len() == 150);
    let want = reference(&f1, &f2, v, reformat).concat();
    let keys = " JOINKEYS FILE=F1,FIELDS=(1,2,A,3,2,D),INCLUDE=(10,1,CH,LT,C'5')\n \
                JOINKEYS FILE=F2,FIELDS=(6,2,A,8,2,D),\n   OMIT=(16,1,CH,EQ,C'3'),STOPAFT=150\n";
    let control = format!("{keys}{}{REFORMAT} OPTION COPY\n", v.join);
    for extra in [&[][..], &["--memory", "1M"][..]] {
        let got = run_job(&s, &control, extra).unwrap_or_else(|e| panic!("{e}"));
        assert!(got == want, "output differs ({extra:?})");
    }
    // INCLUDE=ALL keeps everything, OMIT=ALL nothing (then no pair, and JOIN keeps F1's).
    let all = " JOINKEYS FILE=F1,FIELDS=(1,2,A,3,2,D),INCLUDE=ALL\n \
               JOINKEYS FILE=F2,FIELDS=(6,2,A,8,2,D),OMIT=ALL\n";
    let want = reference(&s.f1, &[], &VARIANTS[1], reformat).concat();
    let got = run_job(&s, &format!("{all}{}{REFORMAT} OPTION COPY\n", VARIANTS[1].join), &[]);
    assert!(got.unwrap() == want);
}

/// `INREC BUILD=(C'#',11,4,6,25)` of an F2 record: its keys stay at bytes 6-9.
fn f2_inrec(r: &[u8]) -> Vec<u8> {
    [&b"#"[..], &r[10..14], &r[5..30]].concat()
}

#[test]
fn each_file_s_own_statements_apply_before_its_sort() {
    let s = setup(600, 500);
    let v = &VARIANTS[4];
    // JNF1CNTL: INCLUDE, then SUM FIELDS=NONE on the join keys (the first record of each key);
    // JNF2CNTL: OMIT on the record as read, then INREC (the keys refer to its records).
    let f1 = first_of_each_key(s.f1.iter().filter(|r| r[9] < b'7').cloned().collect(), 0);
    let f2: Vec<Vec<u8>> = s.f2.iter().filter(|r| r[15] != b'3').map(|r| f2_inrec(r)).collect();
    let want = reference(&f1, &f2, v, reformat).concat();
    let cntl1 = s.dir.path().join("jnf1.ctl");
    let cntl2 = s.dir.path().join("jnf2.ctl");
    std::fs::write(&cntl1, "* F1's own\n INCLUDE COND=(10,1,CH,LT,C'7')\n SUM FIELDS=NONE\n")
        .unwrap();
    std::fs::write(&cntl2, " OMIT COND=(16,1,CH,EQ,C'3')\n INREC BUILD=(C'#',11,4,6,25)\n")
        .unwrap();
    let control = format!("{KEYS}{}{REFORMAT} OPTION COPY\n", v.join);
    let d1 = format!("--dd=JNF1CNTL={}", cntl1.display());
    let d2 = format!("--dd=JNF2CNTL={}", cntl2.display());
    for memory in ["64M", "1M"] {
        let got = run_job(&s, &control, &[&d1, &d2, "--memory", memory]).unwrap();
        assert!(got == want, "output differs (memory {memory})");
    }

    // TASKID=T1 on F1 reads T1F1CNTL; the same statements in-stream in the JCL step for F2.
    let jcl = format!(
        "//S1 EXEC PGM=SORT\n//SORTJNF1 DD DSN=IN.ONE,DISP=SHR\n//SORTJNF2 DD DSN=IN.TWO\n\
         //SORTOUT DD SYSOUT=*\n//SYSIN DD *\n \
         JOINKEYS FILE=F1,FIELDS=(1,2,A,3,2,D),TASKID=T1\n \
         JOINKEYS FILE=F2,FIELDS=(6,2,A,8,2,D)\n{}{REFORMAT} OPTION COPY\n/*\n\
         //JNF2CNTL DD *\n OMIT COND=(16,1,CH,EQ,C'3')\n INREC BUILD=(C'#',11,4,6,25)\n/*\n",
        v.join
    );
    let t1 = format!("--dd=T1F1CNTL={}", cntl1.display());
    assert!(run_job(&s, &jcl, &[&t1]).unwrap() == want, "JCL job output differs");
    // SORTED files keep their order; their own statements still apply.
    let mut sorted2 = s.f2.clone();
    sorted2.sort_by(|a, b| key_cmp(a, 5, b, 5));
    write_records(&s.p2, &sorted2);
    let sorted = jcl.replace("FIELDS=(6,2,A,8,2,D)", "FIELDS=(6,2,A,8,2,D),SORTED");
    assert!(run_job(&s, &sorted, &[&t1]).unwrap() == want, "SORTED output differs");
}

#[test]
fn join_input_statement_mistakes_are_named() {
    let s = setup(10, 10);
    let ctl = s.dir.path().join("bad.ctl");
    let with_cntl = |text: &str, control: &str| {
        std::fs::write(&ctl, text).unwrap();
        run_job(&s, control, &[&format!("--dd=JNF1CNTL={}", ctl.display())]).unwrap_err()
    };
    let plain = format!("{KEYS}{REFORMAT} OPTION COPY\n");
    let e = with_cntl(" INREC BUILD=(1,20)\n SORT FIELDS=(1,2,CH,A)\n", &plain);
    assert!(e.contains("line 2, column 2") && e.contains("not allowed in JNF1CNTL"), "{e}");
    assert!(e.contains("INCLUDE, OMIT, INREC, SUM"), "{e}");
    let e = with_cntl(" OPTION COPY\n", &plain);
    assert!(e.contains("line 1") && e.contains("OPTION COPY"), "{e}");
    let e = with_cntl(" INREC BUILD=(1,2)\n", &plain);
    assert!(e.contains("JNF1CNTL") && e.contains("byte 4") && e.contains("2-byte"), "{e}");
    let both = plain.replace("(1,2,A,3,2,D)", "(1,2,A,3,2,D),INCLUDE=(1,1,CH,EQ,C'A')");
    let e = with_cntl(" OMIT COND=(1,1,CH,EQ,C'B')\n", &both);
    assert!(e.contains("give one of them") && e.contains("line 1"), "{e}");
    let e =
        run_job(&s, &plain.replace("(1,2,A,3,2,D)", "(1,2,A,3,2,D),TASKID=ABC"), &[]).unwrap_err();
    assert!(e.contains("line 1") && e.contains("two-character id"), "{e}");
    let e = run_job(&s, &plain.replace("(1,2,A,3,2,D)", "(1,2,A,3,2,D),INCLUDE=(1,1,CH)"), &[])
        .unwrap_err();
    assert!(e.contains("line 1, column"), "{e}");
}

#[test]
fn explain_shows_each_file_s_subtask_the_join_and_the_main_task() {
    let s = setup(300, 200);
    let cntl = s.dir.path().join("jnf2.ctl");
    std::fs::write(&cntl, " OMIT COND=(16,1,CH,EQ,C'3')\n INREC BUILD=(C'#',11,4,6,25)\n").unwrap();
    let control = " JOINKEYS FILE=F1,FIELDS=(1,2,A,3,2,D),SORTED,INCLUDE=(10,1,CH,LT,C'5')\n \
                   JOINKEYS FILE=F2,FIELDS=(6,2,A,8,2,D),STOPAFT=50\n JOIN UNPAIRED,F2\n \
                   REFORMAT FIELDS=(F1:1,20,F2:9,10,?,F2:1,4),FILL=C'*'\n SORT FIELDS=(21,10,CH,D)\n";
    let ctl = s.dir.path().join("ctl");
    std::fs::write(&ctl, control).unwrap();
    let out = s.dir.path().join("out.dat");
    let explain = |json: bool| {
        let o = run(oxsort()
            .arg("explain")
            .args(json.then_some("--json"))
            .arg("--control")
            .arg(&ctl)
            .arg(format!("--dd=SORTJNF1={}", s.p1.display()))
            .arg(format!("--dd=SORTJNF2={}", s.p2.display()))
            .arg(format!("--dd=JNF2CNTL={}", cntl.display()))
            .args([&format!("--lrecl=SORTJNF1={F1_LEN}"), &format!("--lrecl=SORTJNF2={F2_LEN}")])
            .arg("-o")
            .arg(&out));
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let text = explain(false);
    let f1 =
        &text[text.find("F1  SORTJNF1").expect("F1's part")..text.find("F2  SORTJNF2").unwrap()];
    assert!(f1.contains("20-byte records, keys (1,2,A,3,2,D)"), "{f1}");
    assert!(f1.contains("INCLUDE (JOINKEYS)") && f1.contains("SORTED: kept in its order"), "{f1}");
    let f2 = &text[text.find("F2  SORTJNF2").unwrap()..text.find("JOIN  ").expect("the join")];
    for step in [
        "OMIT (JNF2CNTL's)",
        "STOPAFT=50",
        "INREC: 30-byte records reshaped to 30",
        "sorted by its join keys",
        "records      200 of 30 bytes",
    ] {
        assert!(f2.contains(step), "{step} missing: {f2}");
    }
    assert!(text.contains("JOIN  right outer join"), "{text}");
    assert!(
        text.contains("REFORMAT  FIELDS=(F1:1,20,F2:9,10,?,F2:1,4),FILL=C'*' -> 35-byte"),
        "{text}"
    );
    let main = &text[text.find("Main task").expect("the main task")..];
    assert!(main.contains("of 35 bytes"), "{main}");
    let json: serde_json::Value = serde_json::from_str(&explain(true)).unwrap();
    assert_eq!(json["joined_record_size"], 35);
    assert_eq!(json["joinkeys"][1]["plan"]["records"], 200);
    assert_eq!(
        json["joinkeys"][0]["plan"]["records"], 300,
        "a SORTED file with a filter is copied"
    );
    assert_eq!(json["main"]["record_size"], 35);
    assert!(!out.exists() && leftovers(s.dir.path()).is_empty(), "explain wrote files");
}

/// A side is sorted holding only the bytes the join reads (its keys and REFORMAT fields): the
/// plan says so, and the joined records are those of whole records, in one pass and in two.
#[test]
fn sides_cut_to_the_bytes_the_join_reads_join_as_whole_records() {
    let s = setup(500, 400);
    // F1: keys 1-4 and 11-16 (10 of 20 bytes); F2: keys 6-9 and 9-18 (13 of 30 bytes).
    let reformat = " REFORMAT FIELDS=(F2:9,10,F1:11,6,?,F1:2,2),FILL=C'*'\n";
    let build = |f1: Option<&[u8]>, f2: Option<&[u8]>| {
        let mut out = Vec::new();
        out.extend_from_slice(f2.map_or(&b"**********"[..], |r| &r[8..18]));
        out.extend_from_slice(f1.map_or(&b"******"[..], |r| &r[10..16]));
        out.push(match (f1, f2) {
            (Some(_), Some(_)) => b'B',
            (Some(_), None) => b'1',
            _ => b'2',
        });
        out.extend_from_slice(f1.map_or(&b"**"[..], |r| &r[1..3]));
        out
    };
    let ctl = s.dir.path().join("explain.ctl");
    std::fs::write(&ctl, format!("{KEYS} JOIN UNPAIRED,F1,F2\n{reformat} OPTION COPY\n")).unwrap();
    let o = run(oxsort()
        .args(["explain", "--control"])
        .arg(&ctl)
        .arg(format!("--dd=SORTJNF1={}", s.p1.display()))
        .arg(format!("--dd=SORTJNF2={}", s.p2.display()))
        .args([&format!("--lrecl=SORTJNF1={F1_LEN}"), &format!("--lrecl=SORTJNF2={F2_LEN}")])
        .args(["-o", "/dev/null"]));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    for line in [
        "cut to the bytes the join reads (1-4,11-16): 20-byte records sorted as 10 bytes",
        "cut to the bytes the join reads (6-18): 30-byte records sorted as 13 bytes",
        "records      500 of 10 bytes (",
        "records      400 of 13 bytes (",
    ] {
        assert!(text.contains(line), "{line} missing: {text}");
    }
    // Each side's plan gives the bytes it sorts and the bytes it reads.
    for line in text.lines().filter(|l| l.contains("records      ")) {
        assert!(line.contains(" sorted, ") && line.ends_with(" read)"), "{line}");
    }
    for v in [&VARIANTS[0], &VARIANTS[3], &VARIANTS[7]] {
        let want = reference(&s.f1, &s.f2, v, build).concat();
        let control = format!("{KEYS}{}{reformat} OPTION COPY\n", v.join);
        for memory in [None, Some("1M")] {
            let extra: Vec<&str> = memory.map(|m| vec!["--memory", m]).unwrap_or_default();
            let got = run_job(&s, &control, &extra).unwrap_or_else(|e| panic!("{control}: {e}"));
            assert!(got == want, "{control} (memory {memory:?}): output differs");
        }
    }
}

/// The three stages run at once: a failure of any one stops the others, the first cause is
/// named, and nothing is left (no output, no temp file). A side that ends early is not taken
/// for a whole side: with JOIN UNPAIRED,F1 the join would otherwise pass F1 alone on.
#[test]
fn a_failed_stage_stops_the_job_and_names_its_cause() {
    let s = setup(3000, 2000);
    let control = format!("{KEYS} JOIN UNPAIRED,F1\n{REFORMAT} OPTION COPY\n");
    for memory in ["64M", "1M"] {
        // F2 ends inside a record: its sort fails; F1 is whole and joins on.
        let mut bad = std::fs::read(&s.p2).unwrap();
        bad.extend_from_slice(b"partial");
        let p2 = s.dir.path().join("f2-partial.dat");
        std::fs::write(&p2, &bad).unwrap();
        let err = run_job(
            &s,
            &control,
            &[&format!("--dd=SORTJNF2={}", p2.display()), "--memory", memory],
        )
        .expect_err("a partial F2 record must fail the job");
        assert!(err.contains("f2-partial.dat") && err.contains("SORTJNF2"), "{memory}: {err}");

        // The main task cannot write its output: the sorts and the join stop with it.
        let ctl = s.dir.path().join("ctl");
        std::fs::write(&ctl, &control).unwrap();
        let out = s.dir.path().join("missing/out.dat");
        let o = run(oxsort()
            .args(["sort", "-q", "--memory", memory, "--control"])
            .arg(&ctl)
            .arg("--temp-dir")
            .arg(s.dir.path())
            .arg(format!("--dd=SORTJNF1={}", s.p1.display()))
            .arg(format!("--dd=SORTJNF2={}", s.p2.display()))
            .arg(format!("--lrecl=SORTJNF1={F1_LEN}"))
            .arg(format!("--lrecl=SORTJNF2={F2_LEN}"))
            .arg("-o")
            .arg(&out));
        assert!(!o.status.success());
        assert!(stderr(&o).contains("missing"), "{memory}: {}", stderr(&o));
        assert!(!out.exists());
        assert!(leftovers(s.dir.path()).is_empty(), "{:?}", leftovers(s.dir.path()));
    }
}

/// A main task that sorts reads the join through a pipe. When it fails after the join has
/// started (here: an OUTFIL file in a missing directory, found when the main task starts), the
/// join's next write finds no reader: that is an error reported as the main task's cause, not
/// a SIGPIPE that ended the process with no word (exit 141, as it did).
#[test]
fn a_main_task_that_fails_after_the_join_started_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    // Unique keys, so the join holds as many records as F1: 3.4 MB, more than the pipe holds.
    let n = 100_000;
    let rec = |i: usize, len: usize| {
        let mut r = format!("{i:08}").into_bytes();
        r.resize(len, b'x');
        r
    };
    let (p1, p2) = (dir.path().join("f1.dat"), dir.path().join("f2.dat"));
    write_records(&p1, &(0..n).map(|i| rec(i, F1_LEN)).collect::<Vec<_>>());
    write_records(&p2, &(0..n).map(|i| rec(i, F2_LEN)).collect::<Vec<_>>());
    let ctl = dir.path().join("ctl");
    std::fs::write(
        &ctl,
        " JOINKEYS FILE=F1,FIELDS=(1,8,A)\n JOINKEYS FILE=F2,FIELDS=(1,8,A)\n \
         REFORMAT FIELDS=(F1:1,20,F2:9,14)\n SORT FIELDS=(1,8,CH,D)\n OUTFIL FNAMES=OUT1\n",
    )
    .unwrap();
    let out = dir.path().join("out.dat");
    let o = run(oxsort()
        .args(["sort", "-q", "--control"])
        .arg(&ctl)
        .arg(format!("--dd=SORTJNF1={}", p1.display()))
        .arg(format!("--dd=SORTJNF2={}", p2.display()))
        .arg(format!("--dd=OUT1={}", dir.path().join("missing/o1.dat").display()))
        .arg(format!("--lrecl=SORTJNF1={F1_LEN}"))
        .arg(format!("--lrecl=SORTJNF2={F2_LEN}"))
        .arg("-o")
        .arg(&out));
    assert_eq!(o.status.code(), Some(1), "{:?} {}", o.status, stderr(&o));
    assert!(stderr(&o).contains("OUT1") && stderr(&o).contains("missing"), "{}", stderr(&o));
    assert!(!out.exists());
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

/// A main task that only copies lets the join write the output itself, to a file, to standard
/// output or to a device alike; `explain` says so.
#[test]
fn a_copying_main_task_writes_the_same_bytes_to_standard_output() {
    let s = setup(700, 500);
    let v = &VARIANTS[3];
    let control = format!("{KEYS}{}{REFORMAT} OPTION COPY\n", v.join);
    let want = reference(&s.f1, &s.f2, v, reformat).concat();
    assert!(run_job(&s, &control, &[]).unwrap() == want);
    let ctl = s.dir.path().join("ctl");
    let job = |cmd: &str, out: &str| {
        run(oxsort()
            .args([cmd, "-q", "--control"])
            .arg(&ctl)
            .arg(format!("--dd=SORTJNF1={}", s.p1.display()))
            .arg(format!("--dd=SORTJNF2={}", s.p2.display()))
            .arg(format!("--lrecl=SORTJNF1={F1_LEN}"))
            .arg(format!("--lrecl=SORTJNF2={F2_LEN}"))
            .args(["-o", out]))
    };
    let o = job("sort", "-");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == want, "standard output differs");
    // A device is written in place, never truncated or renamed.
    let o = job("sort", "/dev/null");
    assert!(o.status.success(), "{}", stderr(&o));
    let e = job("explain", "-");
    assert!(e.status.success(), "{}", stderr(&e));
    assert!(String::from_utf8_lossy(&e.stdout).contains("the join writes the joined records"));
}

//! Sorting to standard output gives exactly the bytes of the same sort to a file: many small
//! random inputs (0–200 records, so most output parts are empty or tiny), every key mode of
//! delimited and fixed records, 1–3 threads.

mod common;

use std::io::Write;
use std::process::Stdio;

use common::{oxsort, run, stderr};
use oxsort_testkit::{seed, Rng};

/// Random lines of 0–12 bytes from a small alphabet (so keys tie often), numbers in the second
/// comma-separated field, terminated by `t`.
fn random_records(rng: &mut Rng, n: usize, t: u8) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..n {
        let len = rng.below(6) as usize;
        for _ in 0..len {
            out.push(b"abcAB "[rng.below(6) as usize]);
        }
        out.push(b',');
        let num = rng.below(2000) as i64 - 1000;
        out.extend_from_slice(num.to_string().as_bytes());
        out.push(b',');
        out.push(b"xyz"[rng.below(3) as usize]);
        out.push(t);
    }
    out
}

/// Runs `oxsort sort` on `input` (given on standard input) to standard output.
fn sort_to_stdout(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = oxsort()
        .arg("sort")
        .args(args)
        .args(["-", "-o", "-", "--no-progress"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("oxsort runs");
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

#[test]
fn standard_output_equals_file_output_for_small_inputs() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let d = tempfile::tempdir().unwrap();
    // (flags, terminator): every key mode of delimited records, and fixed records.
    let modes: &[(&[&str], u8)] = &[
        (&["--lines"], b'\n'),
        (&["--lines", "-u"], b'\n'),
        (&["--lines", "-r"], b'\n'),
        (&["--lines", "-t", ",", "-k", "2,2n", "-s"], b'\n'),
        (&["--lines", "-t", ",", "-k", "3,3", "-k", "1,1", "-u"], b'\n'),
        (&["--nul"], 0),
        (&["--nul", "-t", ",", "-k", "2,2n"], 0),
        (&["--record-size", "8", "--fields", "1,8,CH,A"], 0),
        (&["--record-size", "8", "--fields", "3,2,CH,D"], 0),
        (&["--record-size", "8", "--fields", "1,1,CH,A", "--unique"], 0),
    ];
    let mut cases = 0;
    for (m, (flags, t)) in modes.iter().enumerate() {
        for round in 0..6 {
            let n = match round {
                0 => 0,
                1 => 1 + rng.below(6) as usize,
                _ => rng.below(201) as usize,
            };
            let mut input = random_records(&mut rng, n, *t);
            if flags.contains(&"--record-size") {
                input.truncate(input.len() / 8 * 8);
            }
            let threads = (1 + (m + round) % 3).to_string();
            let mut args: Vec<&str> = flags.to_vec();
            args.extend(["--threads", &threads]);
            let inp = d.path().join("in");
            std::fs::write(&inp, &input).unwrap();
            let file_out = d.path().join("out");
            let o = run(oxsort()
                .arg("sort")
                .args(&args)
                .arg(&inp)
                .arg("-o")
                .arg(&file_out)
                .arg("--no-progress"));
            assert!(o.status.success(), "seed {seed}, {args:?}, {n} records: {}", stderr(&o));
            let want = std::fs::read(&file_out).unwrap();
            let o = sort_to_stdout(&args, &input);
            assert!(o.status.success(), "seed {seed}, {args:?}, {n} records: {}", stderr(&o));
            assert!(
                o.stdout == want,
                "seed {seed}, {args:?}, {n} records: stdout differs from the file output"
            );
            cases += 1;
        }
    }
    assert_eq!(cases, modes.len() * 6);
}

//! The drop-in `valsort` binary replaying valsort 1.5's transcripts: every `.valsort.txt`,
//! `edge/edge.txt` and `partition/partition-demo.txt` (unstored inputs rebuilt as described),
//! with text, stream (stderr only), exit status and written summaries checked.

mod common;
use common::vectors;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn valsort(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_valsort")).args(args).current_dir(dir).output().unwrap()
}

/// One `$ command` of a transcript with what followed it.
struct Step {
    command: String,
    comment: String,
    output: String,
    status: Option<i32>,
}

fn steps(text: &str) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            let (command, comment) = match cmd.find("  (") {
                Some(i) => (cmd[..i].trim().to_string(), cmd[i..].trim().to_string()),
                None => (cmd.trim().to_string(), String::new()),
            };
            open = !command.starts_with("cat ");
            out.push(Step { command, comment, output: String::new(), status: None });
        } else if let Some(s) = line.strip_prefix("[exit status ") {
            let step = out.last_mut().unwrap();
            step.status = Some(s.trim_end_matches(']').parse().unwrap());
            open = false;
        } else if open {
            let step = out.last_mut().unwrap();
            step.output.push_str(line);
            step.output.push('\n');
        }
    }
    out
}

/// `cat a b > c`.
fn concatenate(dir: &Path, command: &str) {
    let (inputs, target) = command.strip_prefix("cat ").unwrap().split_once(" > ").unwrap();
    let bytes: Vec<u8> =
        inputs.split_whitespace().flat_map(|f| fs::read(dir.join(f)).unwrap()).collect();
    fs::write(dir.join(target.trim()), bytes).unwrap();
}

/// Replays a transcript in `dir`; `check_file` is called after each valsort run.
fn replay(dir: &Path, text: &str, check_file: &dyn Fn(&[&str])) -> usize {
    let mut runs = 0;
    for step in steps(text) {
        if step.command.starts_with("cat ") {
            concatenate(dir, &step.command);
            continue;
        }
        let words: Vec<&str> = step.command.split_whitespace().collect();
        assert_eq!(words[0], "valsort", "{}", step.command);
        let args = &words[1..];
        let status = step.status.unwrap_or_else(|| panic!("no status for {}", step.command));
        let out = valsort(dir, args);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.stdout.is_empty(), "{}: stdout must stay empty", step.command);
        runs += 1;
        if args.contains(&"-i") {
            // Refused on purpose: -i is broken in valsort 1.5.
            assert_eq!(out.status.code(), Some(1), "{}", step.command);
            assert!(err.starts_with("valsort: -i is not supported"), "{}: {err}", step.command);
            continue;
        }
        assert_eq!(out.status.code(), Some(status), "{}: exit status\n{err}", step.command);
        if step.comment.contains("usage") {
            assert!(err.contains("usage: valsort [-i] [-q] [-o SUMMARY_FILE] [-s]"), "{err}");
            if !step.output.is_empty() {
                // Only the first lines are shown in the transcript.
                let shown: Vec<&str> = step.output.lines().take(3).collect();
                let ours: Vec<&str> = err.lines().take(3).collect();
                assert_eq!(ours[..2], shown[..2], "{}", step.command);
                assert!(ours[2].starts_with("usage: valsort [-i] [-q] [-o SUMMARY_FILE] [-s]"));
            }
            continue;
        }
        assert_eq!(err, step.output, "{}: stderr", step.command);
        check_file(args);
    }
    runs
}

fn sorted_records(data: &[u8], key: impl Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks_exact(100).collect();
    recs.sort_by_key(|r| (key(r), r.to_vec()));
    recs.concat()
}

#[test]
fn every_valsort_transcript_reproduced() {
    let dir = vectors();
    let tmp = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let Some(stem) = name.strip_suffix(".valsort.txt") else { continue };
        fs::copy(dir.join(format!("{stem}.dat")), tmp.path().join(format!("{stem}.dat"))).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        seen += replay(tmp.path(), &text, &|args| {
            if let Some(i) = args.iter().position(|a| *a == "-o") {
                let ours = fs::read(tmp.path().join(args[i + 1])).unwrap();
                let stored = fs::read(dir.join(args[i + 1])).unwrap();
                assert_eq!(ours, stored, "{}", args[i + 1]);
            }
        });
        // Thread counts and the multithreaded build's file options change nothing.
        let txt = steps(&text).remove(0);
        let file = format!("{stem}.dat");
        let with_opts = format!("{file},buf");
        for extra in [vec!["-t1", &file[..]], vec!["-t3", &file[..]], vec![&with_opts[..]]] {
            let out = valsort(tmp.path(), &extra);
            assert_eq!(String::from_utf8_lossy(&out.stderr), txt.output, "{extra:?}");
        }
    }
    assert_eq!(seen, 15, "expected 10 unsorted + 5 sorted valsort transcripts");
}

#[test]
fn edge_transcript_reproduced() {
    let dir = vectors();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    for f in fs::read_dir(dir.join("edge")).unwrap() {
        let f = f.unwrap();
        fs::copy(f.path(), t.join(f.file_name())).unwrap();
    }
    let bin = fs::read(dir.join("bin-r0-n1000.dat")).unwrap();
    let ascii_sorted = fs::read(dir.join("ascii-r0-n1000.sorted.dat")).unwrap();
    let ascii = fs::read(dir.join("ascii-r0-n1000.dat")).unwrap();
    fs::write(t.join("bin-r0-n1000.dat"), &bin).unwrap();
    fs::write(t.join("ascii-r0-n1000.sorted.dat"), &ascii_sorted).unwrap();
    fs::write(
        t.join("twice.sorted.dat"),
        sorted_records(&[&bin[..], &bin[..]].concat(), |_| vec![]),
    )
    .unwrap();
    let atwice = [&ascii[..], &ascii[..]].concat();
    fs::write(t.join("atwice.sorted.dat"), sorted_records(&atwice, |_| vec![])).unwrap();
    fs::write(
        t.join("atwice.ci-key.dat"),
        sorted_records(&atwice, |r| r[..10].to_ascii_lowercase()),
    )
    .unwrap();
    // The stored tiny inputs are what edge.txt says they are.
    let sorted = fs::read(dir.join("bin-r0-n1000.sorted.dat")).unwrap();
    assert_eq!(fs::read(t.join("partial.dat")).unwrap(), &sorted[..150]);
    assert_eq!(fs::read(t.join("one.dat")).unwrap(), &bin[..100]);
    let text = fs::read_to_string(dir.join("edge/edge.txt")).unwrap();
    let runs = replay(t, &text, &|_| {});
    assert_eq!(runs, 20);
}

#[test]
fn partition_demo_reproduced() {
    let dir = vectors();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let sorted = fs::read(dir.join("bin-r0-n1000.sorted.dat")).unwrap();
    let unsorted = fs::read(dir.join("bin-r0-n1000.dat")).unwrap();
    for k in 0..4 {
        fs::write(t.join(format!("part{k}.dat")), &sorted[25000 * k..25000 * (k + 1)]).unwrap();
    }
    fs::write(t.join("unsorted2.dat"), &unsorted[50000..75000]).unwrap();
    let text = fs::read_to_string(dir.join("partition/partition-demo.txt")).unwrap();
    // The last step reads all.sum truncated to 1000 bytes under the name `all.sum,partial`;
    // build it once all.sum exists (just before that step).
    let (before, last) = text.rsplit_once("$ valsort -s all.sum,partial").unwrap();
    let check = |args: &[&str]| {
        if let Some(i) = args.iter().position(|a| *a == "-o") {
            let ours = fs::read(t.join(args[i + 1])).unwrap();
            let stored = fs::read(dir.join("partition").join(args[i + 1])).unwrap();
            assert_eq!(ours, stored, "{}", args[i + 1]);
        }
    };
    let mut runs = replay(t, before, &check);
    let all = fs::read(t.join("all.sum")).unwrap();
    fs::write(t.join("all.sum,partial"), &all[..1000]).unwrap();
    runs += replay(t, &format!("$ valsort -s all.sum,partial{last}"), &check);
    assert_eq!(runs, 12);
    // Hierarchical merging: -s with -o writes a summary that merges again.
    let out = valsort(t, &["-s", "-o", "left.sum", "swapped.sum"]);
    assert_eq!(out.status.code(), Some(1));
    let out = valsort(t, &["-s", "-o", "right.sum", "all.sum"]);
    assert_eq!(out.status.code(), Some(0));
    concatenate(t, "cat left.sum right.sum > both.sum");
    let out = valsort(t, &["-s", "both.sum"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "First unordered record is record 250\nRecords: 2000\nChecksum: 3d4c6e172aa\n\
         ERROR - there are 2 unordered records\n"
    );
}

#[test]
fn bad_input_messages() {
    let dir = vectors();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let bin = fs::read(dir.join("bin-r0-n1000.dat")).unwrap();
    fs::write(t.join("one.dat"), &bin[..100]).unwrap();
    fs::write(t.join("empty.dat"), b"").unwrap();
    fs::write(t.join("partial.dat"), &bin[..150]).unwrap();
    fs::write(t.join("unsorted-partial.dat"), &bin[..1050]).unwrap();
    fs::write(t.join("part.sum"), [0u8; 300]).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["missing.dat"], "missing.dat: No such file or directory\n"),
        // Unreadable even as root: a path through a regular file.
        (&["one.dat/x"], "one.dat/x: Not a directory\n"),
        (&["empty.dat"], "there must be at least one record to be validated\n"),
        (&["-s", "empty.dat"], "there must be at least one record to be validated\n"),
        (&["partial.dat"], "partial record found at end\n"),
        // The first unordered record is reported as it is found, before the partial record.
        (&["unsorted-partial.dat"], "First unordered record is record 2\npartial record found at end\n"),
        (&["-s", "part.sum"], "partial partition summary found at end\n"),
        (&["-o", "no/such/dir.sum", "one.dat"], "Records: 1\nChecksum: 9ea593a0\nDuplicate keys: 0\nSUCCESS - all records are in order\nno/such/dir.sum: No such file or directory\n"),
    ];
    for (args, text) in cases {
        let out = valsort(t, args);
        assert_eq!(String::from_utf8_lossy(&out.stderr), *text, "{args:?}");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn bad_arguments_print_usage_and_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[&[&str]] = &[
        &[],
        &["-o"],
        &["-o", "x.sum"],
        &["-o", "-q", "f.dat"],
        &["-x", "f.dat"],
        &["a.dat", "b.dat"],
        &["-qs", "f.dat"],
        &["-ofile", "f.dat"],
        &["-tx", "f.dat"],
    ];
    for args in cases {
        let out = valsort(tmp.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty());
        let usage = err.find(
            "Valsort Sort Output Validator\n\nusage: valsort [-i] [-q] [-o SUMMARY_FILE] [-s]",
        );
        assert!(usage.is_some(), "{args:?}: {err}");
        for opt in ["-i ", "-q ", "-o SUMMARY_FILE", "-s ", "-tN"] {
            assert!(err.contains(&format!("\n{opt}")), "usage lists {opt}");
        }
    }
}

//! `--passes auto|one|two` and the plan's estimates: two passes forced on an input that fits
//! write the same bytes as one pass; one pass asked for with too little memory is refused before
//! anything is written; `oxsort explain` shows both estimates.

mod common;
use common::{assert_sorted_permutation, gen, oxsort, run, stderr};

fn stats_passes(o: &std::process::Output) -> u64 {
    let text = stderr(o);
    let json = text.lines().rev().find(|l| l.starts_with('{')).expect("a --stats=json line");
    serde_json::from_str::<serde_json::Value>(json).unwrap()["passes"].as_u64().unwrap()
}

#[test]
fn forced_shapes_write_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let sum = gen(&input, 200_000);
    let mut outputs = Vec::new();
    for (choice, passes) in [("one", 1), ("two", 2), ("auto", 1)] {
        let out = dir.path().join(format!("out-{choice}"));
        let o = run(oxsort()
            .args(["sort", "-q", "--stats=json", "--memory", "64M", "--passes", choice])
            .arg(&input)
            .arg("-o")
            .arg(&out));
        assert!(o.status.success(), "{choice}: {}", stderr(&o));
        assert_eq!(stats_passes(&o), passes, "--passes {choice}");
        assert_sorted_permutation(&out, 200_000, sum);
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert!(outputs[0] == outputs[1] && outputs[1] == outputs[2]);
}

#[test]
fn one_pass_that_does_not_fit_is_refused_and_explain_shows_the_estimates() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    gen(&input, 200_000);
    let out = dir.path().join("out");
    let o = run(oxsort()
        .args(["sort", "--memory", "4M", "--passes", "one"])
        .arg(&input)
        .arg("-o")
        .arg(&out));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("too small") && e.contains("one pass was asked for"), "{e}");
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "left files behind");

    let o = run(oxsort().args(["explain", "--memory", "64M"]).arg(&input).arg("-o").arg(&out));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", stderr(&o));
    let line = text.lines().find(|l| l.trim_start().starts_with("estimate")).expect(&text);
    assert!(line.contains("one pass") && line.contains("two passes"), "{line}");
    let o = run(oxsort()
        .args(["explain", "--json", "--memory", "64M"])
        .arg(&input)
        .arg("-o")
        .arg(&out));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let (one, two) = (&plan["estimates"]["one"]["seconds"], &plan["estimates"]["two"]["seconds"]);
    assert!(one.as_f64().unwrap() > 0.0 && two.as_f64().unwrap() > one.as_f64().unwrap(), "{plan}");
}

/// A copy larger than its memory streams through loads in input order: the same bytes as a
/// copy held whole in memory, and no run written (the temp directory it is given cannot even
/// be created).
#[test]
fn a_copy_larger_than_memory_streams_without_runs() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    gen(&input, 300_000);
    let nowhere = dir.path().join("missing/temp");
    let copy = dir.path().join("copy.ctl");
    std::fs::write(&copy, " OPTION COPY\n").unwrap();
    // Reshaped, filtered and reshaped again on the way: every load through the same stages.
    let reshape = dir.path().join("reshape.ctl");
    std::fs::write(
        &reshape,
        " OPTION COPY\n INCLUDE COND=(1,1,BI,GT,X'60')\n INREC BUILD=(1,10,21,30)\n \
         OUTREC BUILD=(1,40,C'|')\n",
    )
    .unwrap();
    for (name, ctl) in [("copy", &copy), ("reshape", &reshape)] {
        let explain = run(oxsort()
            .args(["explain", "--json", "--record-size", "100", "--memory", "8M", "--control"])
            .arg(ctl)
            .arg(&input)
            .arg("-o")
            .arg(dir.path().join("x")));
        assert!(explain.status.success(), "{name}: {}", stderr(&explain));
        let plan: serde_json::Value = serde_json::from_slice(&explain.stdout).unwrap();
        assert_eq!(plan["passes"]["kind"], "stream", "{name}: {plan}");
        assert!(plan["temp"].as_array().unwrap().is_empty(), "{name}: {plan}");
        let mut outputs = Vec::new();
        for memory in ["8M", "1G"] {
            let out = dir.path().join(format!("{name}-{memory}"));
            let o = run(oxsort()
                .args(["sort", "-q", "--stats=json", "--record-size", "100", "--memory", memory])
                .arg("--control")
                .arg(ctl)
                .arg("--temp-dir")
                .arg(&nowhere)
                .arg(&input)
                .arg("-o")
                .arg(&out));
            assert!(o.status.success(), "{name} {memory}: {}", stderr(&o));
            assert_eq!(stats_passes(&o), 1, "{name} {memory}");
            outputs.push(std::fs::read(&out).unwrap());
        }
        assert!(outputs[0] == outputs[1], "{name}: streamed and whole copies differ");
        if name == "copy" {
            assert!(outputs[0] == std::fs::read(&input).unwrap(), "a copy changed its input");
        } else {
            let want: Vec<u8> = std::fs::read(&input)
                .unwrap()
                .chunks(100)
                .filter(|r| r[0] > 0x60)
                .flat_map(|r| [&r[..10], &r[20..50], b"|"].concat())
                .collect();
            assert!(outputs[0] == want, "INCLUDE/INREC/OUTREC of a streamed copy");
        }
    }
}

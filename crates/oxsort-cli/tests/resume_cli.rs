//! `oxsort sort --resume`: a two-pass sort (several runs, two merge levels) killed with SIGKILL
//! at seeded random moments across reading, run formation and the merge goes on where it
//! stopped: the next `--resume` writes the stable sort's bytes (from an oracle), reads less
//! input when runs were journaled, and leaves no oxsort file behind; a journal whose input
//! changed is refused with the reason, and `--restart` starts over.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{oxsort, run, stderr};
use oxsort_testkit::{leftovers, make_records, oracle_sort, seed, Pattern, Rng};

/// Records sorted: 20 MB of 100-byte records, in runs of about 4 MB at an 8 MiB budget.
const RECORDS: usize = 200_000;
const RECORD: usize = 100;
/// Kills per test run.
const KILLS: u32 = 20;

struct Setup {
    _dir: tempfile::TempDir,
    inputs: Vec<PathBuf>,
    out: PathBuf,
    temp: PathBuf,
    /// The inputs' bytes, concatenated.
    data: Vec<u8>,
}

/// Two inputs (the records split at an odd place), an output directory and a temp directory.
fn setup(rng: &mut Rng) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    // Few distinct keys: stability decides most of the output's order.
    let data = make_records(Pattern::FewDistinct, RECORDS, RECORD, rng);
    let cut = (RECORDS * 9 / 20) * RECORD;
    let inputs = vec![dir.path().join("in1.dat"), dir.path().join("in2.dat")];
    std::fs::write(&inputs[0], &data[..cut]).unwrap();
    std::fs::write(&inputs[1], &data[cut..]).unwrap();
    let out_dir = dir.path().join("out");
    let temp = dir.path().join("temp");
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::create_dir(&temp).unwrap();
    Setup { inputs, out: out_dir.join("sorted.dat"), temp, data, _dir: dir }
}

impl Setup {
    fn sort(&self, extra: &[&str]) -> Command {
        let mut c = oxsort();
        c.arg("sort")
            .args(&self.inputs)
            .arg("-o")
            .arg(&self.out)
            .arg("--temp-dir")
            .arg(&self.temp)
            .args(["--memory", "8M", "--max-fan-in", "3", "--threads", "2", "--no-progress"])
            .args(["--stats=json"])
            .args(extra);
        c
    }

    /// The journal of the resumable sort, when there is one.
    fn journal(&self) -> Option<String> {
        let d = std::fs::read_dir(&self.temp).ok()?;
        let dir =
            d.flatten().find(|e| e.file_name().to_string_lossy().starts_with(".oxsort-resume-"))?;
        std::fs::read_to_string(dir.path().join("journal")).ok()
    }

    fn no_leftovers(&self, what: &str) {
        for d in [&self.temp, self.out.parent().unwrap()] {
            let left = leftovers(d);
            assert!(left.is_empty(), "{what}: left in {}: {left:?}", d.display());
        }
    }

    fn inputs_intact(&self, what: &str) {
        let now: Vec<u8> = self.inputs.iter().flat_map(|p| std::fs::read(p).unwrap()).collect();
        assert!(now == self.data, "{what}: an input changed");
    }
}

/// Complete lines of `journal` starting an entry of `kind`.
fn entries(journal: &str, kind: &str) -> usize {
    let tag = format!(" {{\"{kind}\":");
    journal.split_inclusive('\n').filter(|l| l.ends_with('\n') && l.contains(&tag)).count()
}

/// The `--stats=json` object a finished sort printed.
fn stats(o: &std::process::Output) -> serde_json::Value {
    let text = stderr(o);
    let json = text.lines().rev().find(|l| l.starts_with('{')).expect("statistics");
    serde_json::from_str(json).unwrap()
}

#[test]
fn a_sort_killed_anywhere_resumes_to_the_same_bytes() {
    let s = seed();
    eprintln!("resume kill test: OXSORT_SEED={s}");
    let mut rng = Rng::new(s);
    let set = setup(&mut rng);
    let expected = oracle_sort(&set.data, RECORD, 0, 10);

    // The uninterrupted sort: what the plan does, and how long it takes (to spread the kills).
    let t0 = Instant::now();
    let o = run(&mut set.sort(&["--resume"]));
    let full = t0.elapsed();
    assert!(o.status.success(), "uninterrupted sort: {}", stderr(&o));
    assert!(std::fs::read(&set.out).unwrap() == expected, "uninterrupted sort: wrong output");
    let fresh = stats(&o);
    let total = set.data.len() as u64;
    assert_eq!(fresh["input_bytes_read"], total);
    assert!(fresh["runs"].as_u64().unwrap() >= 4, "{fresh}");
    assert_eq!(fresh["merge_levels"], 2, "{fresh}");
    set.no_leftovers("uninterrupted sort");

    let (mut in_formation, mut in_merge) = (0, 0);
    for k in 0..KILLS {
        std::fs::remove_file(&set.out).unwrap();
        // Moments spread over the whole sort: one in each twentieth, at a random place in it.
        let at = full.mul_f64((k as f64 + rng.f64()) / KILLS as f64);
        let what = format!("kill {k} at {at:?} of {full:?} (OXSORT_SEED={s})");
        let mut child =
            set.sort(&["--resume"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(at);
        let _ = child.kill(); // SIGKILL
        let status = child.wait().unwrap();
        set.inputs_intact(&what);

        let journal = if status.success() { None } else { set.journal() };
        let runs_journaled = journal.as_deref().map_or(0, |j| entries(j, "run"));
        let levels = journal.as_deref().map_or(0, |j| entries(j, "level"));
        let all_formed = runs_journaled as u64 == fresh["runs"].as_u64().unwrap();
        if all_formed {
            in_merge += 1;
        } else if runs_journaled > 0 {
            in_formation += 1;
        }

        let o = run(&mut set.sort(&["--resume"]));
        assert!(o.status.success(), "{what}: resume failed: {}", stderr(&o));
        assert!(std::fs::read(&set.out).unwrap() == expected, "{what}: resumed output differs");
        set.inputs_intact(&what);
        set.no_leftovers(&what);
        let st = stats(&o);
        let read = st["input_bytes_read"].as_u64().unwrap();
        assert_eq!(st["bytes"], total, "{what}: {st}");
        if all_formed {
            // Killed in the merge: no input is read again.
            assert_eq!(read, 0, "{what}: {st}");
            assert!(read < fresh["input_bytes_read"].as_u64().unwrap());
            assert!(st["runs_reused"].as_u64().unwrap() > 0, "{what}: {st}");
            // The runs were read through to verify them, and the statistics say so.
            let resume = &st["phases"][0];
            assert_eq!(resume["name"], "resume", "{what}: {st}");
            let verified: u64 = resume["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["bytes"].as_u64().unwrap())
                .sum();
            assert_eq!(verified, st["bytes_reused"].as_u64().unwrap(), "{what}: {st}");
            if levels > 0 {
                // A finished merge level is taken up: its outputs are the runs reused.
                assert!(st["runs_reused"].as_u64().unwrap() < fresh["runs"].as_u64().unwrap());
            }
        } else if runs_journaled > 0 {
            assert!(read < total, "{what}: {st}");
            assert!(st["runs_reused"].as_u64().unwrap() >= runs_journaled as u64, "{what}: {st}");
        } else {
            assert_eq!(st["runs_reused"], 0, "{what}: {st}");
        }
    }
    eprintln!("{in_formation} kills during run formation, {in_merge} during the merge");
    assert!(in_formation > 0 && in_merge > 0, "the kills missed a phase (OXSORT_SEED={s})");
}

/// Starts a resumable sort and kills it once its journal lists an entry of `kind`.
fn kill_after(set: &Setup, kind: &str) {
    let mut child =
        set.sort(&["--resume"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let t0 = Instant::now();
    while set.journal().is_none_or(|j| entries(&j, kind) == 0) {
        assert!(t0.elapsed() < Duration::from_secs(60), "no {kind} entry was journaled");
        assert!(child.try_wait().unwrap().is_none(), "the sort ended before a {kind} entry");
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

fn kill_after_first_run(set: &Setup) {
    kill_after(set, "run");
}

#[test]
fn a_sort_killed_after_a_merge_level_resumes_from_that_level() {
    let mut rng = Rng::new(seed());
    let set = setup(&mut rng);
    let o = run(&mut set.sort(&[]));
    assert!(o.status.success(), "{}", stderr(&o));
    let fresh = stats(&o);
    assert_eq!(fresh["merge_levels"], 2, "{fresh}");
    std::fs::remove_file(&set.out).unwrap();

    kill_after(&set, "level");
    let o = run(&mut set.sort(&["--resume"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&set.out).unwrap() == oracle_sort(&set.data, RECORD, 0, 10));
    let st = stats(&o);
    // The first level's outputs are what is merged: fewer runs than were formed, no input
    // read, and only the last level merged (one read per run reused).
    let reused = st["runs_reused"].as_u64().unwrap();
    assert!(reused > 1 && reused < fresh["runs"].as_u64().unwrap(), "{st}");
    assert_eq!(st["input_bytes_read"], 0, "{st}");
    assert_eq!(st["bytes"], set.data.len() as u64, "{st}");
    assert_eq!(st["records"], RECORDS as u64, "{st}");
    let merge = st["phases"].as_array().unwrap().iter().find(|p| p["name"] == "merge").unwrap();
    let reads = merge["files"].as_array().unwrap().iter().filter(|f| f["direction"] == "read");
    assert_eq!(reads.count() as u64, reused, "{st}");
    set.no_leftovers("level resume");
}

#[test]
fn a_changed_input_is_refused_with_the_reason_and_restart_starts_over() {
    let mut rng = Rng::new(seed());
    let mut set = setup(&mut rng);
    kill_after_first_run(&set);
    // The second input changes (same size, another byte).
    set.data[RECORDS * RECORD - 1] ^= 0x55;
    let cut = (RECORDS * 9 / 20) * RECORD;
    std::thread::sleep(Duration::from_millis(20)); // a later modification time, whatever the clock's grain
    std::fs::write(&set.inputs[1], &set.data[cut..]).unwrap();

    let o = run(&mut set.sort(&["--resume"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("cannot resume")
            && err.contains("in2.dat changed")
            && err.contains("--restart"),
        "{err}"
    );
    assert!(!set.out.exists(), "a refused resume wrote the output");
    // The journal stays for a resume once the input is back; nothing else is left.
    assert!(set.journal().is_some());
    assert!(leftovers(set.out.parent().unwrap()).is_empty());

    let o = run(&mut set.sort(&["--resume", "--restart"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&set.out).unwrap() == oracle_sort(&set.data, RECORD, 0, 10));
    let st = stats(&o);
    assert_eq!(st["runs_reused"], 0, "{st}");
    assert_eq!(st["input_bytes_read"], set.data.len() as u64, "{st}");
    assert!(st["notes"].to_string().contains("started over"), "{st}");
    set.no_leftovers("restart");
}

#[test]
fn a_damaged_run_is_dropped_and_its_input_read_again() {
    let mut rng = Rng::new(seed());
    let set = setup(&mut rng);
    kill_after_first_run(&set);
    // Flip a byte inside the first run (same length): its checksum no longer matches.
    let dir = std::fs::read_dir(&set.temp)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(".oxsort-resume-"))
        .unwrap()
        .path();
    let run0 = dir.join("run-000000");
    let mut bytes = std::fs::read(&run0).unwrap();
    bytes[RECORD / 2] ^= 1;
    std::fs::write(&run0, bytes).unwrap();

    let o = run(&mut set.sort(&["--resume"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&set.out).unwrap() == oracle_sort(&set.data, RECORD, 0, 10));
    let st = stats(&o);
    assert_eq!(st["runs_reused"], 0, "{st}");
    assert_eq!(st["input_bytes_read"], set.data.len() as u64, "{st}");
    assert!(st["notes"].to_string().contains("does not verify"), "{st}");
    set.no_leftovers("damaged run");
}

#[test]
fn resume_of_standard_input_is_refused_before_any_work() {
    let d = tempfile::tempdir().unwrap();
    let o = run(oxsort()
        .args(["sort", "-", "-o"])
        .arg(d.path().join("out"))
        .arg("--resume")
        .stdin(Stdio::null()));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("standard input"), "{}", stderr(&o));
    assert!(leftovers(d.path()).is_empty());
}

/// The resume directories in the temp directory.
fn resume_dirs(set: &Setup) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(&set.temp)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".oxsort-resume-"))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

#[test]
fn a_changed_key_is_refused_instead_of_starting_a_second_resume_directory() {
    let mut rng = Rng::new(seed());
    let set = setup(&mut rng);
    kill_after_first_run(&set);
    let kept = resume_dirs(&set);
    assert_eq!(kept.len(), 1, "{kept:?}");

    let o = run(&mut set.sort(&["--resume", "--fields", "1,5,CH,A"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("cannot resume") && err.contains("key or options differ"), "{err}");
    assert!(err.contains("--restart") && err.contains("oxsort clean --resume"), "{err}");
    assert_eq!(resume_dirs(&set), kept, "a second resume directory");
    assert!(!set.out.exists(), "a refused resume wrote the output");

    // --restart takes the directory over and starts over in it.
    let o = run(&mut set.sort(&["--resume", "--restart", "--fields", "1,5,CH,A"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&set.out).unwrap() == oracle_sort(&set.data, RECORD, 0, 5));
    assert!(resume_dirs(&set).is_empty());
    set.no_leftovers("restart with another key");
}

/// Runs `cmd` as root to change `path`'s owner (recursively) to `nobody`.
fn give_to_nobody(path: &std::path::Path) {
    let o = run(Command::new("chown").arg("-R").arg("nobody").arg(path));
    assert!(o.status.success(), "chown: {}", stderr(&o));
}

#[test]
fn a_resume_directory_taken_by_another_user_or_a_link_is_refused_naming_owner_and_way_out() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: making another user's directory needs root (chown)");
        return;
    }
    let mut rng = Rng::new(seed());
    let set = setup(&mut rng);
    // The directory's name is predictable: a sort of the same inputs made it.
    kill_after_first_run(&set);
    let dir = resume_dirs(&set).pop().unwrap();
    give_to_nobody(&dir);
    let before: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();

    let o = run(&mut set.sort(&["--resume"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(&*dir.to_string_lossy()), "{err}");
    assert!(err.contains("user nobody"), "the owner is not named: {err}");
    assert!(err.contains("another temp directory") && err.contains("removed"), "{err}");
    let after: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(before.len(), after.len(), "files in another user's directory were touched");
    assert!(!set.out.exists());

    // A link under the name is not followed: what it points to stays as it is.
    std::fs::remove_dir_all(&dir).unwrap();
    let target = set.temp.parent().unwrap().join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    std::os::unix::fs::symlink(&target, &dir).unwrap();
    let o = run(&mut set.sort(&["--resume"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "the link was followed");
}

//! `oxsort nsort` running published nsort and NeoSort command lines as written, with only the
//! paths changed and small data; every output validated with the valsort library against the
//! input's checksum.

use std::path::PathBuf;
use std::process::{Command, Output};

use oxsort_testkit::leftovers;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A directory with `n` gensort records in `in.dat`, an empty `tmp/` and their checksum.
struct Setup {
    dir: tempfile::TempDir,
    checksum: u128,
    n: u64,
}

impl Setup {
    fn new(n: u64) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        let checksum = oxsort_gensort::generate_file(
            &dir.path().join("in.dat"),
            0,
            n,
            oxsort_gensort::Kind::Binary,
            1,
            None,
        )
        .unwrap()
        .value();
        Setup { dir, checksum, n }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `oxsort nsort` with a published command line: `IN`, `OUT` and `DIR` (in whole
    /// words or after `=`) become this setup's paths; the line is split on blanks as a shell
    /// would.
    fn nsort(&self, line: &str) -> Output {
        let fill = |w: &str| {
            let pieces: Vec<String> = w
                .split(',')
                .map(|piece| {
                    let cut = piece.rfind('=').map_or(0, |i| i + 1);
                    let (before, name) = piece.split_at(cut);
                    let path = match name {
                        "IN" => self.path("in.dat"),
                        "OUT" => self.path("out.dat"),
                        "DIR" => self.path("tmp"),
                        _ => return piece.to_string(),
                    };
                    format!("{before}{}", path.display())
                })
                .collect();
            pieces.join(",")
        };
        let args: Vec<String> = line.split_whitespace().map(fill).collect();
        Command::new(env!("CARGO_BIN_EXE_oxsort"))
            .arg("nsort")
            .args(&args)
            .current_dir(self.dir.path())
            .output()
            .expect("oxsort runs")
    }

    /// The output is the input sorted, and nothing is left behind.
    fn check(&self) {
        let s = oxsort_gensort::validate_file(&self.path("out.dat"), 1, None).unwrap();
        assert!(s.is_sorted(), "output not sorted");
        assert_eq!(s.records, self.n as u128);
        assert_eq!(s.checksum, self.checksum);
        assert!(leftovers(self.dir.path()).is_empty());
        assert!(leftovers(&self.path("tmp")).is_empty());
    }

    /// Runs a line that must succeed; checks the output; returns stdout (the statistics).
    fn ok(&self, line: &str) -> String {
        let o = self.nsort(line);
        assert!(o.status.success(), "{line}: {}", stderr(&o));
        self.check();
        std::fs::remove_file(self.path("out.dat")).unwrap();
        stdout(&o)
    }

    /// Runs a line that must fail with exit 1 and write nothing; returns stderr.
    fn err(&self, line: &str) -> String {
        let o = self.nsort(line);
        assert_eq!(o.status.code(), Some(1), "{line}: {}", stderr(&o));
        assert!(!self.path("out.dat").exists(), "{line}: an output was written");
        assert!(leftovers(self.dir.path()).is_empty());
        stderr(&o)
    }
}

/// The statistics show each phase with its timings and per-file rows.
fn assert_statistics(stats: &str, records: u64, phases: &[&str]) {
    for p in phases {
        assert!(stats.contains(&format!("\n{p}")), "no {p} in:\n{stats}");
    }
    for field in ["Elapsed:", "I/O busy:", "CPU user:", "CPU sys:", "MB/sec", "Transfers"] {
        assert!(stats.contains(field), "no {field} in:\n{stats}");
    }
    let row = format!("{:>15} {:>13}", records * 100, records);
    assert!(stats.contains(&row), "no file row with {records} records in:\n{stats}");
    assert!(stats.contains("\nOverall\n"), "{stats}");
}

const PUBLISHED_13500M: &str = "-processes=4 -memory=13500M -method=radix -touch -format=size:100 \
     -field=name:key,size:10,off:0,character -key=key -statistics \
     -in_file=IN,direct,transfer_size=16M,count=64 \
     -out_file=OUT,direct,transfer_size=128M,count=8,preallocate";

#[test]
fn published_one_pass_line() {
    let s = Setup::new(20_000);
    let stats = s.ok(PUBLISHED_13500M);
    assert_statistics(&stats, 20_000, &["Input phase", "Output phase"]);
    assert!(stats.contains("Key:          1,10,CH,A"), "{stats}");
    // The input's transfer size and count drive the reader; the output's are noted.
    assert!(stats.contains("Input:        16.00 MiB transfers, 64 in flight"), "{stats}");
    assert!(stats.contains("transfer_size=128.00 MiB count=8"), "{stats}");
    assert!(stats.contains("-method=radix: accepted"), "{stats}");
    if oxsort_engine::cores() < 4 {
        assert!(stats.contains("-processes=4: this machine has"), "{stats}");
    }
}

#[test]
fn published_line_with_a_temp_directory() {
    let s = Setup::new(20_000);
    let line =
        format!("{PUBLISHED_13500M} -temp=DIR,direct,transfer_size=64M,count=32,preallocate");
    let stats = s.ok(&line);
    assert_statistics(&stats, 20_000, &["Input phase", "Output phase"]);
}

#[test]
fn published_24000m_line() {
    let s = Setup::new(20_000);
    let stats = s.ok("-processes=4 -memory=24000M -method=radix -format=size:100 \
         -field=name:key,size:10,off:0,character -key=key -statistics \
         -in_file=IN,direct,transfer_size=16M -out_file=OUT,direct,transfer_size=128M \
         -temp=DIR,direct,transfer_size=64M");
    assert_statistics(&stats, 20_000, &["Input phase", "Output phase"]);
    if oxsort_engine::available_memory() < 24_000 << 20 {
        assert!(
            stats.contains("-memory: the memory budget of 23.44 GiB is more than the"),
            "{stats}"
        );
    }
}

#[test]
fn neosort_line_with_spaced_equals_and_more_memory_than_the_machine() {
    let s = Setup::new(20_000);
    // The shell gives `-format = size:100` as three words; the line is split the same way.
    let stats = s.ok(
        "-format = size:100 -key = offset:0, size:10, ascending, char -mem=90g -proc=30 -stat \
         -touch -in_file=IN,direct,tr=32m,count=20 -out=OUT,direct,tr=32m,count=20",
    );
    assert_statistics(&stats, 20_000, &["Input phase", "Output phase"]);
    assert!(stats.contains("-processes=30: this machine has"), "{stats}");
    assert!(stats.contains("-touch: accepted"), "{stats}");
    let available = oxsort_engine::available_memory();
    if available < 90 << 30 {
        // Capped to a share of what is available, and said so.
        assert!(
            stats.contains("-memory: the memory budget of 90.00 GiB is more than the"),
            "{stats}"
        );
        // The budget used is the one the note names (available memory moves between runs,
        // so it is read from the report rather than recomputed here).
        let budget = stats
            .lines()
            .find_map(|l| l.strip_prefix("  Memory:       "))
            .and_then(|l| l.split(" budget").next())
            .unwrap();
        assert!(stats.contains(&format!("available: using {budget}\n")), "{stats}");
    }
}

#[test]
fn specification_files() {
    let s = Setup::new(5_000);
    let spec = s.path("sort.spec");
    std::fs::write(
        &spec,
        format!(
            "# the benchmark sort\n-format=size:100\n-field=name:key,size:10,off:0,character\n\
             -key=key   # ascending\n-in_file={},direct\n-out_file={}\n-statistics\n",
            s.path("in.dat").display(),
            s.path("out.dat").display()
        ),
    )
    .unwrap();
    let stats = s.ok("-specification=sort.spec");
    assert_statistics(&stats, 5_000, &["Input phase"]);
    // Abbreviated, mixed with arguments.
    std::fs::write(&spec, "-format=size:100 -key=offset:0,size:10,char\n").unwrap();
    s.ok("-spec=sort.spec -in_file=IN -out_file=OUT");

    // Errors inside the file name it, with line and column.
    std::fs::write(&spec, "-format=size:100\n\n-key=offset:0,size:10,chax\n").unwrap();
    let e = s.err("-specification=sort.spec -in_file=IN -out_file=OUT");
    assert!(e.starts_with("oxsort: sort.spec: line 3, column 23: "), "{e}");
    assert!(e.contains("found 'chax'"), "{e}");
    let e = s.err("-specification=missing.spec -in_file=IN -out_file=OUT");
    assert!(e.contains("missing.spec"), "{e}");
}

#[test]
fn small_memory_takes_two_passes_and_shows_the_merge_phase() {
    let s = Setup::new(100_000);
    let stats = s.ok("-memory=2M -format=size:100 -key=offset:0,size:10,char -statistics \
         -in_file=IN -out_file=OUT -temp_file=DIR");
    assert_statistics(&stats, 100_000, &["Input phase", "Merge phase"]);
    assert!(stats.contains("Passes:       2 ("), "{stats}");
    // The runs of the temp directory are reported as one row per direction.
    assert!(stats.contains(&format!("{} (temp, ", s.path("tmp").display())), "{stats}");
}

#[test]
fn quiet_without_statistics_and_descending_keys() {
    let s = Setup::new(3_000);
    let o = s.nsort("-format=size:100 -key=offset:0,size:10,char,descending -in_file=IN -out=OUT");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty() && o.stderr.is_empty(), "{}{}", stdout(&o), stderr(&o));
    let out = std::fs::read(s.path("out.dat")).unwrap();
    let keys: Vec<&[u8]> = out.chunks(100).map(|r| &r[..10]).collect();
    assert_eq!(keys.len(), 3_000);
    assert!(keys.windows(2).all(|w| w[0] >= w[1]), "not descending");
}

#[test]
fn unsupported_directives_and_bad_values_are_named() {
    let s = Setup::new(100);
    let e = s.err("-format=size:100 -summarize=key -in_file=IN -out_file=OUT");
    assert!(e.contains("argument 2 '-summarize=key'"), "{e}");
    assert!(e.contains("a directive oxsort supports"), "{e}");
    assert!(e.contains("found '-summarize=key'"), "{e}");

    let e = s.err("-format=size:0 -in_file=IN -out_file=OUT");
    assert!(e.contains("argument 1 '-format=size:0', column 9"), "{e}");

    let e = s.err("-in_file=IN,direct,frobnicate -out_file=OUT");
    assert!(e.contains("frobnicate"), "{e}");

    let e = s.err("-format=size:100 -key=offset:95,size:10,char -in_file=IN -out_file=OUT");
    assert!(e.contains("past the end of the 100-byte records"), "{e}");

    // A missing input is named.
    let missing = s.path("missing.dat");
    let o = s.nsort(&format!("-in_file={} -out_file=OUT", missing.display()));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&missing.display().to_string()), "{}", stderr(&o));
}

#[test]
fn help_is_printed_not_parsed() {
    let o = Command::new(env!("CARGO_BIN_EXE_oxsort")).args(["nsort", "--help"]).output().unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("usage: oxsort nsort"), "{}", stdout(&o));
}

//! Helpers shared by the `oxsort` command-line tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The built `oxsort` binary.
pub fn oxsort() -> Command {
    Command::new(env!("CARGO_BIN_EXE_oxsort"))
}

/// Runs a command to completion.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("oxsort runs")
}

/// A command's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `n` gensort records (binary, from record 0) written to `path`; returns their checksum.
pub fn gen(path: &Path, n: u64) -> u128 {
    oxsort_gensort::generate_file(path, 0, n, oxsort_gensort::Kind::Binary, 1, None)
        .unwrap()
        .value()
}

/// `path` holds `n` records in order whose checksum is `checksum`.
pub fn assert_sorted_permutation(path: &Path, n: u64, checksum: u128) {
    let s = oxsort_gensort::validate_file(path, 1, None).unwrap();
    assert!(s.is_sorted(), "{} is not sorted", path.display());
    assert_eq!(s.records, n as u128);
    assert_eq!(s.checksum, checksum);
}

/// The gensort 1.5 vectors in the shared spec directory next to the repository; fails (never
/// skips) when it is missing.
pub fn vectors() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors/gensort");
    assert!(
        dir.is_dir(),
        "test vectors missing: expected {} (the shared/ spec directory next to the repository)",
        dir.display()
    );
    dir
}

/// The system's GNU sort, which the `sort` link is compared with.
pub const GNU_SORT: &str = "/usr/bin/sort";

/// Whether [`GNU_SORT`] is GNU sort (tests comparing with it skip, saying so, when not).
pub fn gnu_sort_available() -> bool {
    Command::new(GNU_SORT)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("GNU coreutils"))
        .unwrap_or(false)
}

/// The locale directory CI builds (`target/locales`, see `.ci/gnu-conformance`) when it holds
/// `locale`, for `LOCPATH`; `None` leaves the system's locales.
pub fn locpath(locale: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/locales");
    p.join(locale).is_dir().then_some(p)
}

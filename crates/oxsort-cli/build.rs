//! Records the git commit and the build's flags for `oxsort bench` reports
//! (`OXSORT_GIT_COMMIT`, `OXSORT_BUILD`), read back with `option_env!`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).map(|c| {
        let dirty =
            // Without optional locks, `git status` leaves the index alone: refreshing it would
            // touch the file watched below and rebuild the CLI on the next cargo command
            // (install.sh right after `cargo run --release`).
            git(&["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
        if dirty {
            format!("{c}-dirty")
        } else {
            c
        }
    });
    println!("cargo:rustc-env=OXSORT_GIT_COMMIT={}", commit.unwrap_or_else(|| "unknown".into()));
    // Rebuild when HEAD moves (the paths are the worktree's own).
    for p in ["HEAD", "index"] {
        if let Some(path) = git(&["rev-parse", "--git-path", p]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(path) = git(&["rev-parse", "--git-path", &head]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let rustc = Command::new(env("RUSTC"))
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let flags = env("CARGO_ENCODED_RUSTFLAGS").replace('\u{1f}', " ");
    println!(
        "cargo:rustc-env=OXSORT_BUILD=profile {}, opt-level {}, target {}, {}, RUSTFLAGS [{}]",
        env("PROFILE"),
        env("OPT_LEVEL"),
        env("TARGET"),
        rustc,
        flags
    );
    // The binaries are linked at a fixed address: as a position-independent executable each
    // start of the `sort` link applied ~39k relocations and copied ~140 pages of relocated data,
    // 0.6 ms of a 3-line sort's 1.5 ms, where scripts call `sort` in loops. The price is that
    // the binary's own code is not placed at a random address (its libraries, stack and heap
    // still are).
    if env("CARGO_CFG_TARGET_OS") == "linux" && env("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}

//! `./install.sh --help`: the usage from the script's opening comment, as plain text, without
//! building or installing anything.

use std::path::PathBuf;
use std::process::Command;

fn install_sh() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../install.sh")
}

#[test]
fn help_prints_the_usage_without_the_script() {
    // From another directory: the script finds itself wherever it is called from.
    let o = Command::new("bash")
        .arg(install_sh())
        .arg("--help")
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.starts_with("Installs oxsort"), "{out}");
    assert!(out.contains("./install.sh --sort-in-path"), "{out}");
    for line in out.lines() {
        assert!(!line.starts_with('#'), "a comment mark in the usage: {line:?}");
        assert!(!line.contains("set -e") && !line.contains("cd "), "script in the usage: {line:?}");
    }
}

//! The larger generations of CHECKSUMS.txt (not stored): 1e6 records of every kind written to
//! files, and 1e7 binary and skewed records generated in memory; checksums, sha256 of the
//! generated and the sorted data, and valsort text.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use oxsort_gensort::{generate_file, generate_to_writer, validate_file, Kind, Validator};
use sha2::{Digest, Sha256};

fn vectors() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors/gensort");
    assert!(dir.is_dir(), "test vectors missing: expected {}", dir.display());
    dir
}

/// One `## name` section of CHECKSUMS.txt.
#[derive(Default, Debug)]
struct Case {
    kind: Kind,
    count: u64,
    checksum: String,
    sha: String,
    valsort: String,
    sorted_sha: String,
    sorted_valsort: String,
}

fn checksums() -> HashMap<String, Case> {
    let text = fs::read_to_string(vectors().join("CHECKSUMS.txt")).unwrap();
    let mut out = HashMap::new();
    for section in text.split("\n## ").skip(1) {
        let name = section.lines().next().unwrap().to_string();
        if name.starts_with('-') {
            continue;
        }
        let lines: Vec<&str> = section.lines().collect();
        let mut case = Case::default();
        let mut i = 1;
        while i < lines.len() {
            let l = lines[i];
            if let Some(cmd) = l.strip_prefix("$ gensort ") {
                let words: Vec<&str> = cmd.split_whitespace().collect();
                case.kind = Kind::new(words.contains(&"-a"), words.contains(&"-s"));
                case.count = words[words.len() - 2].parse().unwrap();
                case.checksum = lines[i + 1].to_string();
            } else if l.starts_with("$ sha256sum") {
                let sha = lines[i + 1].split_whitespace().next().unwrap().to_string();
                if l.contains(".sorted.") {
                    case.sorted_sha = sha;
                } else {
                    case.sha = sha;
                }
            } else if l.starts_with("$ valsort") {
                let mut body = String::new();
                let mut j = i + 1;
                while !lines[j].starts_with("[exit status") {
                    body.push_str(lines[j]);
                    body.push('\n');
                    j += 1;
                }
                if l.contains(".sorted.") {
                    case.sorted_valsort = body;
                } else {
                    case.valsort = body;
                }
            }
            i += 1;
        }
        out.insert(name, case);
    }
    out
}

fn sha_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn one_million_of_each_kind() {
    let cases = checksums();
    let tmp = tempfile::tempdir().unwrap();
    for name in
        ["bin-r0-n1000000", "ascii-r0-n1000000", "skew-r0-n1000000", "skewascii-r0-n1000000"]
    {
        let case = &cases[name];
        let path = tmp.path().join(format!("{name}.dat"));
        let sum = generate_file(&path, 0, case.count, case.kind, 2, None).unwrap();
        assert_eq!(sum.to_string(), case.checksum, "{name}: gensort -c");
        let data = fs::read(&path).unwrap();
        assert_eq!(sha_hex(&data), case.sha, "{name}: sha256");
        let summary = validate_file(&path, 2, None).unwrap();
        assert_eq!(summary.report(), case.valsort, "{name}: valsort");

        let mut records: Vec<&[u8]> = data.chunks_exact(100).collect();
        records.sort_unstable();
        let sorted = records.concat();
        assert_eq!(sha_hex(&sorted), case.sorted_sha, "{name}: sorted sha256");
        fs::write(&path, &sorted).unwrap();
        let summary = validate_file(&path, 2, None).unwrap();
        assert_eq!(summary.report(), case.sorted_valsort, "{name}: sorted valsort");
        fs::remove_file(&path).unwrap();
    }
}

/// A sink that hashes and validates what it is given, so 1 GB never touches the disk.
struct HashAndValidate {
    sha: Sha256,
    validator: Validator,
}

impl Write for HashAndValidate {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.sha.update(buf);
        self.validator.feed(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn ten_million_binary_and_skew() {
    let cases = checksums();
    for name in ["bin-r0-n10000000", "skew-r0-n10000000"] {
        let case = &cases[name];
        let mut sink = HashAndValidate { sha: Sha256::new(), validator: Validator::new() };
        let sum = generate_to_writer(&mut sink, 0, case.count, case.kind, 2, None).unwrap();
        assert_eq!(sum.to_string(), case.checksum, "{name}: gensort -c");
        let sha: String = sink.sha.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(sha, case.sha, "{name}: sha256");
        let summary = sink.validator.finish().unwrap();
        assert_eq!(summary.report(), case.valsort, "{name}: valsort");
    }
}

//! `Locale::bytewise`: C and glibc's C.UTF-8 (no collation rules: `strcoll` is `strcmp`)
//! order text as bytes, so the sort needs no collation keys there; en_US.UTF-8 (built by
//! `.ci/gnu-conformance` under `target/locales`, or installed) collates. Each locale is read
//! in a child process of its own (the locale is process-wide).

mod common;
use common::*;

use std::cmp::Ordering;

/// Reads `locale` in the child running `test`; checks what it says against `strcoll`.
fn check(test: &str, locale: &str, bytewise: bool) {
    if !in_child(test, locale) {
        return;
    }
    if let Some(p) = locpath(locale) {
        std::env::set_var("LOCPATH", p);
    }
    std::env::set_var("LC_ALL", locale);
    let loc = oxsort_locale::Locale::from_env();
    if locale != "C" && (!loc.ok || loc.collate.is_none()) {
        eprintln!("skipped: {locale} is not available");
        return;
    }
    assert_eq!((loc.bytewise, loc.collates()), (bytewise, !bytewise), "{locale}: {loc:?}");
    if bytewise {
        // Bytewise means strcoll orders as the bytes do.
        for (a, b) in [("B", "a"), ("a", "é"), ("Z", "_"), ("-b", "a")] {
            assert_eq!(strcoll(a, b), a.as_bytes().cmp(b.as_bytes()), "{locale}: {a} {b}");
        }
    } else {
        assert_eq!(strcoll("B", "a"), Ordering::Greater, "{locale}: a before B");
    }
}

#[test]
fn c_is_bytewise() {
    check("c_is_bytewise", "C", true);
}

#[test]
fn c_utf8_is_bytewise_and_keeps_its_name() {
    let test = "c_utf8_is_bytewise_and_keeps_its_name";
    check(test, "C.UTF-8", true);
    if std::env::var_os("LC_ALL").is_some_and(|l| l == "C.UTF-8") {
        // GNU's `--debug` names the rules of any locale but C/POSIX.
        let name = oxsort_locale::Locale::from_env().collate;
        assert!(name.as_deref().is_some_and(|n| n.starts_with("C.")), "{name:?}");
    }
}

#[test]
fn en_us_collates() {
    check("en_us_collates", "en_US.UTF-8", false);
}

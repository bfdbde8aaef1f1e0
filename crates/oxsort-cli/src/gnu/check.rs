//! `-c` / `-C`: is the input already in order? The first line out of order is reported as
//! `sort: FILE:LINE: disorder: TEXT`; the exit status is 1 for disorder.
//!
//! The check itself is the engine's ([`oxsort_engine::check`]: one read at the speed of the
//! disk, neighbours compared where they lie); this module makes the GNU order into the
//! engine's key and prints what it finds in GNU's words.

use std::io::Write;

use oxsort_engine::{CheckOptions, EngineError, Input};
use oxsort_format::{KeySpec, RecordLayout, SortSpec};
use oxsort_io::IoError;

use super::msg::Fail;
use super::osname;

/// Checks `file` (`-` for standard input); with `unique`, equal neighbours are disorder too.
/// `spec` is `None` for whole lines compared as bytes (then no key is built).
pub fn check(
    file: &str,
    spec: Option<&KeySpec>,
    eol: u8,
    unique: bool,
    diagnose: bool,
) -> Result<i32, Fail> {
    let layout = if eol == 0 { RecordLayout::NUL } else { RecordLayout::LINES };
    let keys = SortSpec { key: spec.cloned(), unique, ..SortSpec::with_layout(layout) }
        .compile()
        .map_err(|e| Fail::plain(e.to_string()))?;
    let input = if file == "-" { Input::Stdin } else { Input::Path(osname::path(file)) };
    let opts = CheckOptions { strict: unique, ..CheckOptions::default() };
    let found = oxsort_engine::check(&input, &keys, &opts).map_err(|e| match e {
        EngineError::Io(e @ IoError::Open { .. }) => Fail::io("open failed", file, e.io_error()),
        EngineError::Io(e) => Fail::io("read failed", file, e.io_error()),
        EngineError::Input { source, .. } => Fail::io("read failed", file, &source),
        e => Fail::plain(e.to_string()),
    })?;
    let Some(d) = found else { return Ok(0) };
    if diagnose {
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "sort: {file}:{}: disorder: ", d.line());
        let _ = e.write_all(d.text(Some(eol)));
        let _ = e.write_all(&[eol]);
    }
    Ok(1)
}

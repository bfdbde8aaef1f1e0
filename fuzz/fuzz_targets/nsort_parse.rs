//! nsort command lines and specification files: never a panic; errors point inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oxsort_format::Location;
use oxsort_lang::{parse_nsort, parse_nsort_spec, parse_nsort_with};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    match parse_nsort(&args) {
        Ok(cmd) => {
            let mut out = Vec::new();
            let _ = cmd.key.normalize(data, &mut out);
        }
        Err(e) => {
            if let Location::Argument { index, .. } = e.location {
                assert!(index >= 1 && index <= args.len().max(1), "{e}");
            }
        }
    }
    // A specification file that names itself must stop at the nesting limit.
    let _ = parse_nsort_with(&args, |_| Ok(text.to_string()));
    let _ = parse_nsort_spec(text);
});

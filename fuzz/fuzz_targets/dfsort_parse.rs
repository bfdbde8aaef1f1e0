//! DFSORT control statements, `--fields` and GNU flags: any text either parses or gives an
//! error with a location inside the text; a parsed key and filter never panic on a record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oxsort_format::{Location, RecordLayout};
use oxsort_lang::{parse_control, parse_fields, GnuArgs, GnuEnv};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lines = text.split('\n').count();
    match parse_control(text) {
        Ok(control) => {
            let record: &[u8] = data;
            if let Some(key) = &control.key {
                let mut out = Vec::new();
                let _ = key.normalize(record, &mut out);
                let _ = key.clone().for_layout(RecordLayout::LINES);
            }
            if let Some(filter) = &control.filter {
                let _ = filter.matches(record);
            }
        }
        Err(e) => match e.location {
            Location::Line { line, column } => {
                assert!(line >= 1 && line <= lines && column >= 1, "{e}");
            }
            _ => panic!("control statements report lines: {e}"),
        },
    }
    let _ = parse_fields(text);
    let args: Vec<String> = text.split(' ').map(str::to_string).collect();
    if let Ok(g) = GnuArgs::parse(&args, &GnuEnv::default()) {
        let opts = g.c_locale_options();
        if opts.check().is_ok() {
            let mut out = Vec::new();
            let _ = opts.key_spec().normalize(data, &mut out);
        }
    }
});

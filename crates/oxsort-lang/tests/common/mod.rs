//! Helpers shared by the statement tests.

use oxsort_format::{KeyError, Reformat, Scratch, Stage};
use oxsort_lang::parse_control;

/// Applies the OUTREC of `control` to each record (`in_len` bytes) in turn (one stream, as the
/// output sink does) and returns the reshaped records, or the first record's error.
pub fn outrec(control: &str, in_len: usize, recs: &[&[u8]]) -> Result<Vec<Vec<u8>>, KeyError> {
    let c = parse_control(control).unwrap();
    let r: Reformat = c.outrec.unwrap();
    let p = r.compile(Stage::Outrec, in_len).unwrap();
    let mut scratch = Scratch::default();
    recs.iter()
        .map(|rec| {
            let mut out = vec![0u8; p.out_len()];
            p.apply(rec, &mut out, &mut scratch)?;
            Ok(out)
        })
        .collect()
}

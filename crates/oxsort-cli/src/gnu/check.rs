//! `-c` / `-C`: is the input already in order? The first line out of order is reported as
//! `sort: FILE:LINE: disorder: TEXT`; the exit status is 1 for disorder.

use std::io::{Read, Write};

use oxsort_format::KeySpec;

use super::msg::Fail;

/// Bytes read at a time.
const READ_BYTES: usize = 8 << 20;

/// Checks `file` (`-` for standard input); with `unique`, equal neighbours are disorder too.
/// `spec` is `None` for whole lines compared as bytes (then no key is built).
pub fn check(
    file: &str,
    spec: Option<&KeySpec>,
    eol: u8,
    unique: bool,
    diagnose: bool,
) -> Result<i32, Fail> {
    let mut input: Box<dyn Read> = if file == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(file).map_err(|e| Fail::io("open failed", file, &e))?)
    };
    let (mut prev, mut cur) = (Vec::new(), Vec::new());
    let mut number: u64 = 0;
    let mut buf = vec![0u8; READ_BYTES];
    // Bytes of `buf` holding the start of a line not yet complete.
    let mut kept = 0;
    let mut eof = false;
    while !eof {
        if kept == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = input.read(&mut buf[kept..]).map_err(|e| Fail::io("read failed", file, &e))?;
        let mut end = kept + n;
        if n == 0 {
            eof = true;
            if kept == 0 {
                break;
            }
            // The last line lacks its terminator.
            if end == buf.len() {
                buf.push(0);
            }
            buf[end] = eol;
            end += 1;
        }
        let mut start = 0;
        while let Some(p) = memchr::memchr(eol, &buf[start..end]) {
            let line = &buf[start..start + p];
            start += p + 1;
            number += 1;
            cur.clear();
            match spec {
                // GNU keys never fail to extract: every column key reads something.
                Some(spec) => {
                    let _ = spec.normalize(line, &mut cur);
                }
                None => cur.extend_from_slice(line),
            }
            if number > 1 {
                let out_of_order = if unique { prev >= cur } else { prev > cur };
                if out_of_order {
                    if diagnose {
                        let mut e = std::io::stderr().lock();
                        let _ = write!(e, "sort: {file}:{number}: disorder: ");
                        let _ = e.write_all(line);
                        let _ = e.write_all(&[eol]);
                    }
                    return Ok(1);
                }
            }
            std::mem::swap(&mut prev, &mut cur);
        }
        buf.copy_within(start..end, 0);
        kept = end - start;
    }
    Ok(0)
}

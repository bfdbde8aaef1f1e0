//! `-c` / `-C`: is the input already in order? The first line out of order is reported as
//! `sort: FILE:LINE: disorder: TEXT`; the exit status is 1 for disorder.

use std::io::{BufRead, BufReader, Read, Write};

use oxsort_format::KeySpec;

use super::msg::Fail;

/// Checks `file` (`-` for standard input); with `unique`, equal neighbours are disorder too.
pub fn check(
    file: &str,
    spec: &KeySpec,
    eol: u8,
    unique: bool,
    diagnose: bool,
) -> Result<i32, Fail> {
    let input: Box<dyn Read> = if file == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(file).map_err(|e| Fail::io("open failed", file, &e))?)
    };
    let mut r = BufReader::with_capacity(1 << 20, input);
    let (mut prev, mut cur) = (Vec::new(), Vec::new());
    let mut line = Vec::new();
    let mut number: u64 = 0;
    loop {
        line.clear();
        let n = r.read_until(eol, &mut line).map_err(|e| Fail::io("read failed", file, &e))?;
        if n == 0 {
            return Ok(0);
        }
        if line.last() == Some(&eol) {
            line.pop();
        }
        number += 1;
        cur.clear();
        // GNU keys never fail to extract: every column key reads something, maybe empty.
        let _ = spec.normalize(&line, &mut cur);
        if number > 1 {
            let out_of_order = if unique { prev >= cur } else { prev > cur };
            if out_of_order {
                if diagnose {
                    let mut e = std::io::stderr().lock();
                    let _ = write!(e, "sort: {file}:{number}: disorder: ");
                    let _ = e.write_all(&line);
                    let _ = e.write_all(&[eol]);
                }
                return Ok(1);
            }
        }
        std::mem::swap(&mut prev, &mut cur);
    }
}

//! A CSV input that ends inside a quoted value is an error, not a value: the CSV reader takes
//! the rest of the file into such a value, newlines included, so one stray quote would merge
//! every row after it into one without a word. [`QuoteCheck`] reads the bytes on their way to
//! the CSV reader, follows where quoted values open and close as the reader does (a quote opens
//! one only at the start of a field; inside, two quotes are one; a quote elsewhere is a
//! character), and fails the read at the end of the input when a quoted value is still open,
//! naming the line it opened on.
//!
//! ```text
//!   a,b\n1,"x\n2,y\n      the value opened on line 2 runs to the end: an error at the end
//!   a,b\n1,5"\n2,"y ""z"""  quotes inside a field or doubled in a quoted value: fine
//! ```

use std::io::{self, Read};

/// Where the bytes read so far leave the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Outside quoted values: the next quote opens one if it starts a field (the byte before
    /// it ends a field or a line), else it is a character.
    Outside,
    /// Inside a quoted value.
    Quoted,
    /// Just after a quote inside a quoted value: another quote is one quote; anything else
    /// closes the value.
    QuoteInQuoted,
}

/// The bytes of `inner`, checked for a quoted value left open at their end.
pub(crate) struct QuoteCheck<R> {
    inner: R,
    delimiter: u8,
    state: State,
    /// The last byte read (a line end before the first).
    last: u8,
    /// Newlines read before the current buffer, and counted within it so far.
    lines: u64,
    /// The line (1-based) the open quoted value opened on.
    opened: u64,
}

impl<R: Read> QuoteCheck<R> {
    /// Checks `inner`, a CSV whose fields are separated by `delimiter` and quoted with `"`.
    pub(crate) fn new(inner: R, delimiter: u8) -> Self {
        QuoteCheck { inner, delimiter, state: State::Outside, last: b'\n', lines: 0, opened: 0 }
    }

    /// Follows `buf`, the next bytes read. Only quotes change the state, so the search goes
    /// from quote to quote (fast where quotes are few), looking at the byte before a quote
    /// outside quoted values and the byte after one inside them.
    fn follow(&mut self, buf: &[u8]) {
        let q = b'"';
        let newlines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count() as u64;
        // Newlines before `counted` are in `self.lines`.
        let mut counted = 0;
        let mut i = 0;
        loop {
            match self.state {
                State::Outside => {
                    let Some(at) = memchr::memchr(q, &buf[i..]) else { break };
                    let pos = i + at;
                    let before = if pos == 0 { self.last } else { buf[pos - 1] };
                    if before == self.delimiter || before == b'\n' || before == b'\r' {
                        self.lines += newlines(&buf[counted..pos]);
                        counted = pos;
                        self.opened = self.lines + 1;
                        self.state = State::Quoted;
                    }
                    i = pos + 1;
                }
                State::Quoted => {
                    let Some(at) = memchr::memchr(q, &buf[i..]) else { break };
                    i += at + 1;
                    self.state = State::QuoteInQuoted;
                }
                State::QuoteInQuoted => {
                    let Some(&c) = buf.get(i) else { break };
                    if c == q {
                        self.state = State::Quoted;
                        i += 1;
                    } else {
                        self.state = State::Outside;
                    }
                }
            }
        }
        self.lines += newlines(&buf[counted..]);
        if let Some(&b) = buf.last() {
            self.last = b;
        }
    }
}

impl<R: Read> Read for QuoteCheck<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() && self.state == State::Quoted {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the input ends inside a quoted value opened on line {} (a quote that is \
                     never closed)",
                    self.opened
                ),
            ));
        }
        self.follow(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `text` through the check in pieces of `piece` bytes.
    fn check(text: &str, piece: usize) -> Result<(), String> {
        struct Pieces<'a>(&'a [u8], usize);
        impl Read for Pieces<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut out = Vec::new();
        QuoteCheck::new(Pieces(text.as_bytes(), piece), b',')
            .read_to_end(&mut out)
            .map_err(|e| e.to_string())?;
        assert_eq!(out, text.as_bytes());
        Ok(())
    }

    #[test]
    fn closed_quotes_pass_and_an_open_one_names_its_line() {
        let fine = [
            "a,b\n1,x\n",
            "a,b\n1,\"x\"\n2,\"multi\nline\"\n",
            "a,b\n1,\"say \"\"hi\"\"\"\n",
            "a,b\n5\",x\n1,ab\"c\n",
            "a,b\r\n1,\"x\"\r\n",
            "a,b\n1,\"x\"",
            "",
        ];
        let open = [
            ("a,b\n1,x\n2,\"unterminated\n3,y\n", 3),
            ("a,b\n1,\"x\"\"\n", 2),
            ("\"a,b\n", 1),
            ("a,b\n1,\"x\n\n\n", 2),
        ];
        for piece in [1, 2, 3, 7, 4096] {
            for t in fine {
                assert_eq!(check(t, piece), Ok(()), "{t:?} in pieces of {piece}");
            }
            for (t, line) in open {
                let e = check(t, piece).unwrap_err();
                assert!(e.contains(&format!("opened on line {line} ")), "{t:?}/{piece}: {e}");
            }
        }
    }
}

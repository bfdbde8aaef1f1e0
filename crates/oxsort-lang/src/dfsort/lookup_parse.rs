//! Lookup items of `BUILD`/`OVERLAY` (see [`oxsort_format::Lookup`] for what they mean).
//!
//! ```text
//!  p,m,CHANGE=(v,find,set,find,set,...)[,NOMATCH=(set)]
//!    v     the output length, 1 to 64
//!    find  C'..' (padded with blanks to m) or X'..' (padded with binary zeros to m); at most
//!          m bytes; m is 1 to 64
//!    set   C'..' or X'..' (padded with blanks to v; at most v bytes) or q,n (an input field,
//!          n at most v, padded with blanks)
//! ```

use super::{line_err, Parser, Pos, Tok};
use oxsort_format::ParseError;
use oxsort_format::{Item, Lookup, LookupSet};

/// DFSORT's limit on a lookup's input field, its output length and its constants.
const LOOKUP_MAX: usize = 64;

impl Parser<'_> {
    /// After `p,m` (`offset`, `len`, the length at `len_pos`), at `,CHANGE`: the lookup item.
    pub(super) fn lookup_item(
        &mut self,
        offset: usize,
        len: usize,
        len_pos: Pos,
    ) -> Result<Item, ParseError> {
        self.i += 2;
        if len > LOOKUP_MAX {
            return Err(line_err(
                len_pos,
                &format!("a field looked up with CHANGE= must be 1 to {LOOKUP_MAX} bytes"),
                Some(len.to_string()),
            ));
        }
        self.expect(&Tok::Equals, "expected '=' after CHANGE")?;
        self.expect(&Tok::LParen, "expected '(' and the output length v of CHANGE=(v,...)")?;
        let (out_len, vpos) = self.number("expected the output length v of CHANGE=(v,...)")?;
        if out_len == 0 || out_len > LOOKUP_MAX {
            return Err(line_err(
                vpos,
                &format!("the output length v of CHANGE=(v,...) must be 1 to {LOOKUP_MAX}"),
                Some(out_len.to_string()),
            ));
        }
        let mut table = Vec::new();
        while self.peek_is(&Tok::Comma) {
            self.i += 1;
            let find = self.lookup_find(len)?;
            self.expect(&Tok::Comma, "expected ',' and the set value for this find constant")?;
            let set = self.lookup_set(out_len)?;
            table.push((find, set));
        }
        if table.is_empty() {
            return Err(self.err("expected ',' and at least one pair of find and set values"));
        }
        self.expect(&Tok::RParen, "expected ',' and another find constant, or ')'")?;
        let mut nomatch = None;
        if let (Some(Tok::Comma), Some(Tok::Word(w))) = (self.peek(), self.peek_at(1)) {
            if w == "NOMATCH" {
                self.i += 2;
                self.expect(&Tok::Equals, "expected '=' after NOMATCH")?;
                self.expect(&Tok::LParen, "expected '(' and the value for no match")?;
                nomatch = Some(self.lookup_set(out_len)?);
                self.expect(&Tok::RParen, "expected ')' after NOMATCH's one value")?;
            }
        }
        Ok(Item::Lookup(Lookup { offset, len, out_len, table, nomatch }))
    }

    /// A `find` constant of a field of `len` bytes, padded to it.
    fn lookup_find(&mut self, len: usize) -> Result<Vec<u8>, ParseError> {
        let pos = self.pos();
        let (mut c, pad) =
            match self.peek().cloned() {
                Some(Tok::Chars(c)) => (c, b' '),
                Some(Tok::Hex(c)) => (c, 0u8),
                _ => return Err(self.err(
                    "expected a find constant C'...' or X'...' (oxsort does not support B'...' \
                     bit constants)",
                )),
            };
        if c.is_empty() || c.len() > len {
            return Err(line_err(
                pos,
                &format!(
                    "a find constant must be 1 to {len} bytes, the length of the field looked up \
                     (shorter ones are padded)"
                ),
                Some(self.pos_text(pos)),
            ));
        }
        self.i += 1;
        c.resize(len, pad);
        Ok(c)
    }

    /// A `set` value (of a `CHANGE` pair or `NOMATCH`) for an output of `out_len` bytes.
    fn lookup_set(&mut self, out_len: usize) -> Result<LookupSet, ParseError> {
        let pos = self.pos();
        match self.peek().cloned() {
            Some(Tok::Chars(mut c)) | Some(Tok::Hex(mut c)) => {
                if c.is_empty() || c.len() > out_len {
                    return Err(line_err(
                        pos,
                        &format!(
                            "a set constant must be 1 to {out_len} bytes, the output length v \
                             (shorter ones are padded with blanks)"
                        ),
                        Some(self.pos_text(pos)),
                    ));
                }
                self.i += 1;
                c.resize(out_len, b' ');
                Ok(LookupSet::Const(c))
            }
            Some(Tok::Num(n)) if !n.starts_with(['+', '-']) => {
                let (q, _) = self.position("expected a position")?;
                self.expect(&Tok::Comma, "expected ',' and the length of the set field q,n")?;
                let (n, npos) = self.number("expected the length of the set field q,n")?;
                if n == 0 || n > out_len {
                    return Err(line_err(
                        npos,
                        &format!(
                            "a set field must be 1 to {out_len} bytes, the output length v \
                             (shorter ones are padded with blanks)"
                        ),
                        Some(n.to_string()),
                    ));
                }
                Ok(LookupSet::Field { offset: q - 1, len: n })
            }
            _ => Err(self.err("expected a set value: C'...', X'...' or an input field q,n")),
        }
    }
}

//! `ALTSEQ CODE=(ffxx,...)`: the alternate collating sequence of `AQ` key fields and of
//! `TRAN=ALTSEQ` items. Each `ffxx` makes byte `ff` collate (or translate) as byte `xx`; every
//! other byte stays itself.

use super::{line_err, Control, Parser, Tok};
use oxsort_format::FieldType;
use oxsort_format::ParseError;
use oxsort_format::{Edit, Item, Placed, Reformat, Tran};

impl Parser<'_> {
    /// The operands of `ALTSEQ`, applied to `table`.
    pub(super) fn altseq_operands(&mut self, table: &mut [u8; 256]) -> Result<(), ParseError> {
        self.tokens_check()?;
        let (kw, pos) = self.word("expected CODE=")?;
        if kw != "CODE" {
            return Err(self.err_at(pos, "expected CODE= (oxsort supports only CODE=)", &kw));
        }
        self.expect(&Tok::Equals, "expected '=' after CODE")?;
        let paren = self.peek_is(&Tok::LParen);
        if paren {
            self.i += 1;
        }
        loop {
            // ffxx may lex as a number and a word ("5BEA"): join the tokens up to ',' or ')'.
            let start = self.pos();
            let mut text = String::new();
            while let Some(t) = self.peek() {
                if matches!(t, Tok::Comma | Tok::RParen) {
                    break;
                }
                text.push_str(&self.tokens[self.i].text);
                self.i += 1;
            }
            let hex = |s: &str| u8::from_str_radix(s, 16).ok();
            match (text.len(), text.get(..2).and_then(hex), text.get(2..).and_then(hex)) {
                (4, Some(from), Some(to)) => table[from as usize] = to,
                _ => {
                    return Err(line_err(
                        start,
                        "expected ffxx: two hexadecimal digits for a byte and two for the byte \
                         it collates as",
                        Some(text),
                    ))
                }
            }
            if !self.peek_is(&Tok::Comma) {
                break;
            }
            self.i += 1;
        }
        if paren {
            self.expect(&Tok::RParen, "expected ',' and another ffxx, or ')'")?;
        }
        self.finish("expected the end of the ALTSEQ statement")
    }
}

/// Gives the `ALTSEQ` table to the `AQ` key fields and the `TRAN=ALTSEQ` items. The table is
/// leaked: one 256-byte table per parsed control text, so key types stay `Copy`.
pub(super) fn apply(control: &mut Control, table: [u8; 256]) {
    let table: &'static [u8; 256] = Box::leak(Box::new(table));
    if let Some(key) = &mut control.key {
        for f in &mut key.fields {
            if let FieldType::AltSeq(_) = f.kind {
                f.kind = FieldType::AltSeq(table);
            }
        }
    }
    for r in [&mut control.inrec, &mut control.outrec].into_iter().flatten() {
        let edits: Vec<&mut Edit> = match r {
            Reformat::Edit(e) => vec![e],
            Reformat::IfThen { clauses, .. } => clauses.iter_mut().map(|c| &mut c.edit).collect(),
            Reformat::Parse { edit, .. } => vec![edit],
        };
        for e in edits {
            if let Edit::Build(items) | Edit::Overlay(items) = e {
                fill(items, table);
            }
        }
    }
}

fn fill(items: &mut [Placed], table: &[u8; 256]) {
    for p in items {
        if let Item::Tran { tran: Tran::AltSeq(t), .. } = &mut p.item {
            *t = table.to_vec();
        }
    }
}

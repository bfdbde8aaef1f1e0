//! The operands of `INREC` and `OUTREC` (see [`crate::reformat`] for what they mean).
//!
//! ```text
//!  INREC|OUTREC  BUILD=(items) | FIELDS=(items) | OVERLAY=(items) | FINDREP=(...)
//!              | IFTHEN=(WHEN=INIT|NONE|(cond),BUILD|FIELDS|OVERLAY|FINDREP=...[,HIT=NEXT]),...
//!                [,IFOUTLEN=n]
//!  items         [c:]p,m  [c:]C'..'  [c:]X'..'  [c:][n]X  [c:][n]Z  [c:]nC'..'  [c:]nX'..'
//!                [c:]p,m,f,TO=g[,LENGTH=n]  [c:]p,m,f,g   (f: BI FI PD ZD; g: ZD PD FS)
//!  FINDREP       IN=const|(const,...),OUT=const | INOUT=(in,out,...)  [,STARTPOS=p]
//!                [,ENDPOS=p] [,DO=n] [,MAXLEN=n] [,SHIFT=YES|NO] [,OVERRUN=ERROR|TRUNC]
//! ```

use super::{line_err, CondParser, Parser, Pos, Tok};
use crate::error::ParseError;
use crate::reformat::{Edit, FindRep, IfThen, Item, Placed, Reformat, When};
use crate::sum::{max_digits, ConvTo, SumKind};

const STATEMENT_OPERANDS: &str = "BUILD=, FIELDS=, OVERLAY=, FINDREP=, IFTHEN= or IFOUTLEN=";
const ITEMS: &str = "p,m, C'...', X'...', nX, nZ, nC'...' or c: before an item";
/// DFSORT's limit on the length of a FINDREP constant (it also keeps the work of a record
/// bounded: a replacement can at most multiply a record's length by this).
const FINDREP_CONSTANT_MAX: usize = 256;
const FINDREP_OPERANDS: &str = "IN=, OUT=, INOUT=, STARTPOS=, ENDPOS=, DO=, MAXLEN=, SHIFT= or \
                                OVERRUN=";

impl Parser<'_> {
    /// The operands of an `INREC` or `OUTREC` statement.
    pub(super) fn reformat_operands(&mut self) -> Result<Reformat, ParseError> {
        self.tokens_check()?;
        let mut edit: Option<(Edit, Pos)> = None;
        let mut clauses: Vec<IfThen> = Vec::new();
        let mut outlen = None;
        let mut clause_kinds = Vec::new();
        loop {
            let (kw, pos) = self.word(&format!("expected {STATEMENT_OPERANDS}"))?;
            self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
            match kw.as_str() {
                "BUILD" | "FIELDS" | "OVERLAY" | "FINDREP" => {
                    if let Some((_, first)) = &edit {
                        return Err(line_err(
                            pos,
                            &format!(
                                "only one of BUILD, FIELDS, OVERLAY, FINDREP in a statement (the \
                                 first is at column {})",
                                first.column
                            ),
                            Some(kw),
                        ));
                    }
                    edit = Some((self.edit(&kw)?, pos));
                }
                "IFTHEN" => {
                    let (clause, cpos) = self.ifthen()?;
                    let rank = match clause.when {
                        When::Init => 0,
                        When::Cond(_) => 1,
                        When::None => 2,
                    };
                    if clause_kinds.last().is_some_and(|&(r, _)| r > rank) {
                        return Err(line_err(
                            cpos,
                            "IFTHEN clauses go in this order: WHEN=INIT, then WHEN=(cond), then \
                             WHEN=NONE",
                            Some(self.pos_text(cpos)),
                        ));
                    }
                    clause_kinds.push((rank, cpos));
                    clauses.push(clause);
                }
                "IFOUTLEN" => {
                    let (n, npos) = self.number("expected the output record length")?;
                    if !(1..=crate::MAX_RECORD_SIZE).contains(&n) {
                        return Err(line_err(
                            npos,
                            &format!("IFOUTLEN must be 1 to {}", crate::MAX_RECORD_SIZE),
                            Some(n.to_string()),
                        ));
                    }
                    outlen = Some(n);
                }
                _ => {
                    return Err(self.err_at(
                        pos,
                        &format!(
                            "expected {STATEMENT_OPERANDS} (oxsort supports these operands of \
                             {})",
                            self.st.name.to_ascii_uppercase()
                        ),
                        &kw,
                    ))
                }
            }
            if self.peek().is_none() {
                break;
            }
            self.expect(&Tok::Comma, "expected ',' between operands")?;
        }
        match (edit, clauses.is_empty()) {
            (Some((e, _)), true) if outlen.is_none() => Ok(Reformat::Edit(e)),
            (None, false) => Ok(Reformat::IfThen { clauses, outlen }),
            (None, true) => Err(line_err(
                self.st.name_pos,
                "expected IFTHEN= clauses with IFOUTLEN=",
                Some(self.st.name.clone()),
            )),
            (Some((_, pos)), _) => Err(line_err(
                pos,
                "BUILD, FIELDS, OVERLAY or FINDREP cannot go with IFTHEN or IFOUTLEN in one \
                 statement (use IFTHEN=(WHEN=INIT,...) instead)",
                Some(self.pos_text(pos)),
            )),
        }
    }

    /// The value of `BUILD=`, `FIELDS=`, `OVERLAY=` or `FINDREP=` (after the `=`).
    pub(super) fn edit(&mut self, kw: &str) -> Result<Edit, ParseError> {
        Ok(match kw {
            "BUILD" | "FIELDS" => Edit::Build(self.items(false)?),
            "OVERLAY" => Edit::Overlay(self.items(true)?),
            _ => Edit::FindRep(self.findrep()?),
        })
    }

    /// `(item,...)`.
    fn items(&mut self, overlay: bool) -> Result<Vec<Placed>, ParseError> {
        self.expect(&Tok::LParen, "expected '(' and the items")?;
        let mut items = Vec::new();
        // The output column after the items so far (1-based), for BUILD's c: check.
        let mut next = 1usize;
        loop {
            let mut column = None;
            if matches!(self.peek(), Some(Tok::Num(_))) && self.peek_at(1) == Some(&Tok::Bad(':')) {
                let (c, cpos) = self.number("expected a column")?;
                self.i += 1;
                if c == 0 || c > crate::MAX_RECORD_SIZE {
                    return Err(line_err(
                        cpos,
                        &format!("a column must be 1 to {}", crate::MAX_RECORD_SIZE),
                        Some(c.to_string()),
                    ));
                }
                if !overlay && c < next {
                    return Err(line_err(
                        cpos,
                        &format!(
                            "column {c} would overlap the items before it, which end at column \
                             {}: BUILD columns must increase",
                            next - 1
                        ),
                        Some(format!("{c}:")),
                    ));
                }
                column = Some(c);
                if !overlay {
                    next = c;
                }
            }
            let item = self.item()?;
            next += item.len();
            if next - 1 > crate::MAX_RECORD_SIZE {
                return Err(self.err(&format!(
                    "records must be at most {} bytes: this item ends past that",
                    crate::MAX_RECORD_SIZE
                )));
            }
            items.push(Placed { column, item });
            match self.peek() {
                Some(Tok::Comma) => self.i += 1,
                Some(Tok::RParen) => {
                    self.i += 1;
                    return Ok(items);
                }
                _ => return Err(self.err("expected ',' and another item, or ')'")),
            }
        }
    }

    /// One item without its column.
    fn item(&mut self) -> Result<Item, ParseError> {
        let pos = self.pos();
        match self.peek().cloned() {
            Some(Tok::Num(n)) if !n.starts_with(['+', '-']) => {
                if self.peek_at(1) == Some(&Tok::Comma)
                    && matches!(self.peek_at(2), Some(Tok::Num(_)))
                {
                    let (p, ppos) = self.number("expected a position")?;
                    if p == 0 {
                        return Err(line_err(
                            ppos,
                            "position must be at least 1",
                            Some("0".into()),
                        ));
                    }
                    self.i += 1;
                    let (len, lpos) = self.number("expected a length")?;
                    if len == 0 {
                        return Err(line_err(lpos, "length must be at least 1", Some("0".into())));
                    }
                    if let (Some(Tok::Comma), Some(Tok::Word(w))) = (self.peek(), self.peek_at(1)) {
                        if let Some(from) = SumKind::from_dfsort(w) {
                            self.i += 2;
                            return self.conversion(p - 1, len, lpos, from);
                        }
                        if w != "X" && w != "Z" {
                            let w = w.clone();
                            self.i += 1;
                            return Err(self.err_at(
                                self.pos(),
                                "expected ',' and the next item or ')' (of a field's edits \
                                 and conversions, oxsort supports BI, FI, PD or ZD fields with \
                                 TO=ZD, PD or FS; not EDIT=, Mn masks, other formats, HEX or \
                                 TRAN=)",
                                &w,
                            ));
                        }
                    }
                    return Ok(Item::Field { offset: p - 1, len });
                }
                let (count, cpos) = self.number("expected a repeat count")?;
                if count == 0 {
                    return Err(line_err(
                        cpos,
                        "a repeat count must be at least 1",
                        Some("0".into()),
                    ));
                }
                let unit: Vec<u8> = match self.peek().cloned() {
                    Some(Tok::Word(w)) if w == "X" => vec![b' '],
                    Some(Tok::Word(w)) if w == "Z" => vec![0],
                    Some(Tok::Chars(c)) | Some(Tok::Hex(c)) if !c.is_empty() => c,
                    _ => {
                        return Err(self.err(&format!(
                            "expected ',' and a length (p,m), or X, Z, C'...' or X'...' after \
                             a repeat count ({ITEMS})"
                        )))
                    }
                };
                if count.saturating_mul(unit.len()) > crate::MAX_RECORD_SIZE {
                    return Err(line_err(
                        cpos,
                        &format!("records must be at most {} bytes", crate::MAX_RECORD_SIZE),
                        Some(count.to_string()),
                    ));
                }
                self.i += 1;
                Ok(Item::Const(unit.repeat(count)))
            }
            Some(Tok::Word(w)) if w == "X" => {
                self.i += 1;
                Ok(Item::Const(vec![b' ']))
            }
            Some(Tok::Word(w)) if w == "Z" => {
                self.i += 1;
                Ok(Item::Const(vec![0]))
            }
            Some(Tok::Chars(c)) | Some(Tok::Hex(c)) => {
                if c.is_empty() {
                    return Err(line_err(pos, "a constant needs at least one byte", None));
                }
                self.i += 1;
                Ok(Item::Const(c))
            }
            Some(Tok::Word(w)) => Err(self.err_at(
                pos,
                &format!(
                    "expected an item ({ITEMS}); oxsort does not support {w} items (nor SEQNUM, \
                     DATE, counts or edits)"
                ),
                &w,
            )),
            _ => Err(self.err(&format!("expected an item ({ITEMS})"))),
        }
    }

    /// After `p,m,f,`: `TO=g` or `g`, then an optional `,LENGTH=n`.
    fn conversion(
        &mut self,
        offset: usize,
        len: usize,
        len_pos: Pos,
        from: SumKind,
    ) -> Result<Item, ParseError> {
        let most = match from {
            SumKind::Bi | SumKind::Fi => 8,
            SumKind::Pd => 16,
            SumKind::Zd => 31,
        };
        if len > most {
            return Err(line_err(
                len_pos,
                &format!("a {} field to convert must be 1 to {most} bytes", from.name()),
                Some(len.to_string()),
            ));
        }
        const WANT: &str = "expected ',' and TO=ZD, TO=PD or TO=FS (EDIT= and Mn masks are not \
                            supported)";
        self.expect(&Tok::Comma, WANT)?;
        let (mut w, mut wpos) = self.word(WANT)?;
        if w == "TO" {
            self.expect(&Tok::Equals, "expected '=' after TO")?;
            (w, wpos) = self.word("expected ZD, PD or FS")?;
        }
        let Some(to) = ConvTo::from_dfsort(&w) else {
            return Err(self.err_at(wpos, WANT, &w));
        };
        let mut out_len = to.default_len(max_digits(from, len));
        if matches!((self.peek(), self.peek_at(1)), (Some(Tok::Comma), Some(Tok::Word(l))) if l == "LENGTH")
        {
            self.i += 2;
            self.expect(&Tok::Equals, "expected '=' after LENGTH")?;
            let (n, npos) = self.number("expected the output length")?;
            let limit = match to {
                ConvTo::Zd => 31,
                ConvTo::Pd => 16,
                ConvTo::Fs => 32,
            };
            if n == 0 || n > limit {
                return Err(line_err(
                    npos,
                    &format!("LENGTH must be 1 to {limit} for TO={w}"),
                    Some(n.to_string()),
                ));
            }
            out_len = n;
        }
        Ok(Item::Convert { offset, len, from, to, out_len })
    }

    /// A FINDREP constant: `C'..'`, `X'..'`, `nC'..'`, `nX'..'`.
    fn findrep_constant(&mut self, allow_empty: bool) -> Result<Vec<u8>, ParseError> {
        let pos = self.pos();
        let count = match self.peek() {
            Some(Tok::Num(_)) => {
                let (n, npos) = self.number("expected a repeat count")?;
                if n == 0 || n > crate::MAX_RECORD_SIZE {
                    return Err(line_err(
                        npos,
                        &format!("a repeat count must be 1 to {}", crate::MAX_RECORD_SIZE),
                        Some(n.to_string()),
                    ));
                }
                n
            }
            _ => 1,
        };
        match self.peek().cloned() {
            Some(Tok::Chars(c)) | Some(Tok::Hex(c)) => {
                if c.is_empty() && !allow_empty {
                    return Err(line_err(pos, "a constant to find needs at least one byte", None));
                }
                if c.len().saturating_mul(count) > FINDREP_CONSTANT_MAX {
                    return Err(line_err(
                        pos,
                        &format!("a FINDREP constant must be at most {FINDREP_CONSTANT_MAX} bytes"),
                        Some(self.pos_text(pos)),
                    ));
                }
                self.i += 1;
                Ok(c.repeat(count))
            }
            _ => Err(self.err("expected a constant (C'...', X'...', nC'...' or nX'...')")),
        }
    }

    /// `(IN=...,OUT=...,...)`.
    fn findrep(&mut self) -> Result<FindRep, ParseError> {
        let start_pos = self.pos();
        self.expect(&Tok::LParen, "expected '(' and the FINDREP operands")?;
        let mut ins: Vec<Vec<u8>> = Vec::new();
        let mut out: Option<Vec<u8>> = None;
        let mut inout: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut f = FindRep {
            pairs: Vec::new(),
            start: 1,
            end: None,
            times: None,
            shift: true,
            maxlen: None,
            truncate: false,
        };
        loop {
            let (kw, kpos) = self.word(&format!("expected {FINDREP_OPERANDS}"))?;
            self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
            match kw.as_str() {
                "IN" => {
                    if self.peek_is(&Tok::LParen) {
                        self.i += 1;
                        loop {
                            ins.push(self.findrep_constant(false)?);
                            if !self.peek_is(&Tok::Comma) {
                                break;
                            }
                            self.i += 1;
                        }
                        self.expect(&Tok::RParen, "expected ',' and a constant, or ')'")?;
                    } else {
                        ins.push(self.findrep_constant(false)?);
                    }
                }
                "OUT" => out = Some(self.findrep_constant(true)?),
                "INOUT" => {
                    self.expect(&Tok::LParen, "expected '(' and pairs of constants")?;
                    loop {
                        let i = self.findrep_constant(false)?;
                        self.expect(&Tok::Comma, "expected ',' and the constant replacing it")?;
                        let o = self.findrep_constant(true)?;
                        inout.push((i, o));
                        if !self.peek_is(&Tok::Comma) {
                            break;
                        }
                        self.i += 1;
                    }
                    self.expect(&Tok::RParen, "expected ',' and another pair, or ')'")?;
                }
                "STARTPOS" | "ENDPOS" | "DO" | "MAXLEN" => {
                    let (n, npos) = self.number(&format!("expected a number after {kw}="))?;
                    if n == 0 || n > crate::MAX_RECORD_SIZE {
                        return Err(line_err(
                            npos,
                            &format!("{kw} must be 1 to {}", crate::MAX_RECORD_SIZE),
                            Some(n.to_string()),
                        ));
                    }
                    match kw.as_str() {
                        "STARTPOS" => f.start = n,
                        "ENDPOS" => f.end = Some(n),
                        "DO" => f.times = Some(n),
                        _ => f.maxlen = Some(n),
                    }
                }
                "SHIFT" => {
                    let (v, vpos) = self.word("expected YES or NO")?;
                    f.shift = match v.as_str() {
                        "YES" => true,
                        "NO" => false,
                        _ => return Err(self.err_at(vpos, "expected YES or NO", &v)),
                    };
                }
                "OVERRUN" => {
                    let (v, vpos) = self.word("expected ERROR or TRUNC")?;
                    f.truncate = match v.as_str() {
                        "ERROR" => false,
                        "TRUNC" => true,
                        _ => return Err(self.err_at(vpos, "expected ERROR or TRUNC", &v)),
                    };
                }
                _ => {
                    return Err(self.err_at(
                        kpos,
                        &format!("expected {FINDREP_OPERANDS} (VARLEN is not supported)"),
                        &kw,
                    ))
                }
            }
            match self.peek() {
                Some(Tok::Comma) => self.i += 1,
                Some(Tok::RParen) => {
                    self.i += 1;
                    break;
                }
                _ => return Err(self.err("expected ',' and another FINDREP operand, or ')'")),
            }
        }
        let need = |what: &str| line_err(start_pos, what, Some(self.pos_text(start_pos)));
        match (ins.is_empty(), out, inout.is_empty()) {
            (false, Some(o), true) => f.pairs = ins.into_iter().map(|i| (i, o.clone())).collect(),
            (true, None, false) => f.pairs = inout,
            (false, None, _) => return Err(need("FINDREP IN= needs OUT=")),
            (true, Some(_), _) => return Err(need("FINDREP OUT= needs IN=")),
            (true, None, true) => return Err(need("FINDREP needs IN= and OUT=, or INOUT=")),
            (false, Some(_), false) => {
                return Err(need("FINDREP takes IN= and OUT=, or INOUT=, not both"))
            }
        }
        if f.end.is_some_and(|e| e < f.start) {
            return Err(need("FINDREP ENDPOS must not be before STARTPOS"));
        }
        Ok(f)
    }

    /// `(WHEN=...,edit[,HIT=NEXT])`; returns the clause and where it starts.
    pub(super) fn ifthen(&mut self) -> Result<(IfThen, Pos), ParseError> {
        self.expect(&Tok::LParen, "expected '(' and WHEN=")?;
        let pos = self.pos();
        let (kw, kpos) = self.word("expected WHEN=")?;
        if kw != "WHEN" {
            return Err(self.err_at(kpos, "expected WHEN= first in an IFTHEN clause", &kw));
        }
        self.expect(&Tok::Equals, "expected '=' after WHEN")?;
        let when = match self.peek().cloned() {
            Some(Tok::Word(w)) if w == "INIT" => {
                self.i += 1;
                When::Init
            }
            Some(Tok::Word(w)) if w == "NONE" => {
                self.i += 1;
                When::None
            }
            Some(Tok::LParen) => {
                let mut c = CondParser { p: self, format: None, checks: Vec::new(), count: 0 };
                c.p.i += 1;
                let cond = c.or_expr()?;
                c.p.expect(&Tok::RParen, "expected ',' and AND or OR, or ')'")?;
                When::Cond(cond)
            }
            Some(Tok::Word(w)) => {
                return Err(self.err_at(
                    self.pos(),
                    "expected INIT, NONE or (condition) after WHEN= (GROUP is not supported)",
                    &w,
                ))
            }
            _ => return Err(self.err("expected INIT, NONE or (condition) after WHEN=")),
        };
        self.expect(&Tok::Comma, "expected ',' and BUILD=, OVERLAY= or FINDREP=")?;
        let (kw, kpos) = self.word("expected BUILD=, FIELDS=, OVERLAY= or FINDREP=")?;
        if !matches!(kw.as_str(), "BUILD" | "FIELDS" | "OVERLAY" | "FINDREP") {
            return Err(self.err_at(
                kpos,
                "expected BUILD=, FIELDS=, OVERLAY= or FINDREP= (PUSH is not supported)",
                &kw,
            ));
        }
        self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
        let edit = self.edit(&kw)?;
        let mut hit_next = false;
        if self.peek_is(&Tok::Comma) {
            self.i += 1;
            let (h, hpos) = self.word("expected HIT=NEXT")?;
            if h != "HIT" {
                return Err(self.err_at(hpos, "expected HIT=NEXT or ')'", &h));
            }
            self.expect(&Tok::Equals, "expected '=' after HIT")?;
            let (v, vpos) = self.word("expected NEXT")?;
            if v != "NEXT" {
                return Err(self.err_at(vpos, "expected NEXT", &v));
            }
            if !matches!(when, When::Cond(_)) {
                return Err(line_err(hpos, "HIT=NEXT goes with WHEN=(condition)", Some(h)));
            }
            hit_next = true;
        }
        self.expect(&Tok::RParen, "expected ',' and HIT=NEXT, or ')' to end the IFTHEN clause")?;
        Ok((IfThen { when, edit, hit_next }, pos))
    }
}

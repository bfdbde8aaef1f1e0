//! The operands of `INREC` and `OUTREC` (see [`oxsort_format::Reformat`] for what they mean).
//!
//! ```text
//!  INREC|OUTREC  BUILD=(items) | FIELDS=(items) | OVERLAY=(items) | FINDREP=(...)
//!              | PARSE=(%nn=(...),...),BUILD|OVERLAY=(items with %nn)
//!              | IFTHEN=(WHEN=INIT|NONE|(cond),[PARSE=(...),]BUILD|FIELDS|OVERLAY|FINDREP=...
//!                [,HIT=NEXT]),...
//!                [,IFOUTLEN=n]
//!  items         [c:]p,m  [c:]C'..'  [c:]X'..'  [c:][n]X  [c:][n]Z  [c:]nC'..'  [c:]nX'..'
//!                [c:]p,m,f,TO=g[,LENGTH=n]  [c:]p,m,f,g   (f: BI FI PD ZD; g: ZD PD FS)
//!                [c:]p,m,f,EDIT=(pattern)|Mn[,SIGNS=(a,b,c,d)][,LENGTH=n]
//!                              (f: BI FI PD ZD FS CSF UFF SFF; n of Mn: 0 to 26)
//!                [c:]p,m,HEX  [c:]p,m,TRAN=LTOU|UTOL|ALTSEQ
//!                [c:]p,m,CHANGE=(v,find,set,...)[,NOMATCH=(set)]   (see lookup_parse)
//!                p  or  p,   last in BUILD: the bytes from p to the record's end
//!                [c:]SEQNUM,n,f[,START=j][,INCR=i][,RESTART=(p,m)]   (f: ZD PD BI FS)
//!  PARSE         %nn=([STARTAFT=c|STARTAT=c|ABSPOS=p|ADDPOS=x|SUBPOS=y][,ENDBEFR=c...]
//!                [,ENDAT=c],FIXLEN=m) and %=(...) to skip a field; %nn[,f,edit] in BUILD
//!  FINDREP       IN=const|(const,...),OUT=const | INOUT=(in,out,...)  [,STARTPOS=p]
//!                [,ENDPOS=p] [,DO=n] [,MAXLEN=n] [,SHIFT=YES|NO] [,OVERRUN=ERROR|TRUNC]
//! ```

use super::{line_err, CondParser, Parser, Pos, Tok};
use oxsort_format::ParseError;
use oxsort_format::{max_digits, ConvTo, SumKind};
use oxsort_format::{
    Edit, FindRep, IfThen, Item, ParseField, ParseStart, Placed, Reformat, SeqFormat, Seqnum, Tran,
    When, PARSED_BASE,
};
use oxsort_format::{EditMask, NumFormat, Signs, MASKS};

const STATEMENT_OPERANDS: &str =
    "PARSE=, BUILD=, FIELDS=, OVERLAY=, FINDREP=, IFTHEN= or IFOUTLEN=";
const ITEMS: &str = "p,m, %nn, p,m,f,EDIT=(...), p,m,f,Mn, p,m,f,TO=g, p,m,HEX, \
                     p,m,TRAN=..., p,m,CHANGE=(...), SEQNUM,n,f, C'...', X'...', nX, nZ, \
                     nC'...', c: before an item, or p alone (to the record's end) last in BUILD";
/// What may follow `p,m,` in an item.
const FIELD_EDITS: &str = "f,EDIT=(pattern), f,Mn (M0 to M26), f,TO=g (f: BI, FI, PD, ZD; g: \
                           ZD, PD, FS), CHANGE=(v,find,set,...)[,NOMATCH=(set)], HEX or \
                           TRAN=LTOU|UTOL|ALTSEQ; edits read BI, FI, PD, ZD, FS, CSF, UFF or SFF \
                           fields";
/// DFSORT's longest edit pattern and edited field.
const EDIT_MAX: usize = 44;
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
        let mut parse: Option<(Vec<ParseField>, Pos)> = None;
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
                "PARSE" => {
                    if parse.is_some() {
                        return Err(self.err_at(pos, "only one PARSE= in a statement", &kw));
                    }
                    parse = Some((self.parse_defs()?, pos));
                }
                "IFOUTLEN" => outlen = Some(self.ifoutlen()?),
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
        if let Some((fields, ppos)) = parse {
            return match edit {
                Some((edit @ (Edit::Build(_) | Edit::Overlay(_)), _))
                    if clauses.is_empty() && outlen.is_none() =>
                {
                    Ok(Reformat::Parse { fields, edit })
                }
                _ => Err(line_err(
                    ppos,
                    "PARSE= goes with one BUILD=, FIELDS= or OVERLAY= in the statement (not \
                     FINDREP; in IFTHEN clauses, write PARSE= inside the clause)",
                    Some("PARSE".into()),
                )),
            };
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
                if c == 0 || c > oxsort_format::MAX_RECORD_SIZE {
                    return Err(line_err(
                        cpos,
                        &format!("a column must be 1 to {}", oxsort_format::MAX_RECORD_SIZE),
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
            let item_pos = self.pos();
            let item = self.item()?;
            if let (Item::Rest { .. }, true) = (&item, overlay) {
                return Err(line_err(
                    item_pos,
                    "a position without a length (the bytes to the record's end) goes only at \
                     the end of BUILD=, FIELDS= or OUTREC=, not in OVERLAY=",
                    Some(self.pos_text(item_pos)),
                ));
            }
            next += item.len();
            if next - 1 > oxsort_format::MAX_RECORD_SIZE {
                return Err(self.err(&format!(
                    "records must be at most {} bytes: this item ends past that",
                    oxsort_format::MAX_RECORD_SIZE
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
                // `p` without a length (DFSORT's), or `p,` (GCSORT's), ending the list: the
                // bytes from p to the record's end.
                let rest = match (self.peek_at(1), self.peek_at(2)) {
                    (Some(Tok::RParen), _) => Some(1),
                    (Some(Tok::Comma), Some(Tok::RParen)) => Some(2),
                    _ => None,
                };
                if let Some(tokens) = rest {
                    let (p, _) = self.position("expected a position")?;
                    self.i += tokens - 1;
                    return Ok(Item::Rest { offset: p - 1 });
                }
                if self.peek_at(1) == Some(&Tok::Comma)
                    && matches!(self.peek_at(2), Some(Tok::Num(_)))
                {
                    let (p, _) = self.position("expected a position")?;
                    self.i += 1;
                    let (len, lpos) = self.number("expected a length")?;
                    if len == 0 {
                        return Err(line_err(lpos, "length must be at least 1", Some("0".into())));
                    }
                    if let (Some(Tok::Comma), Some(Tok::Word(w))) = (self.peek(), self.peek_at(1)) {
                        let w = w.clone();
                        return self.field_item(p - 1, len, lpos, &w);
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
                if count.saturating_mul(unit.len()) > oxsort_format::MAX_RECORD_SIZE {
                    return Err(line_err(
                        cpos,
                        &format!(
                            "records must be at most {} bytes",
                            oxsort_format::MAX_RECORD_SIZE
                        ),
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
            Some(Tok::Bad('%')) => {
                let nn = match self.peek_at(1) {
                    Some(Tok::Num(n)) if !n.starts_with(['+', '-']) => n.clone(),
                    _ => return Err(self.err("expected %nn: a field of PARSE=")),
                };
                let number: usize = nn.parse().unwrap_or(usize::MAX);
                let Some(&(_, at, fixlen)) = self.parsed.iter().find(|f| f.0 == number) else {
                    return Err(self.err_at(
                        pos,
                        "this %nn field is not defined: define it in PARSE= before the BUILD= \
                         that uses it",
                        &format!("%{nn}"),
                    ));
                };
                self.i += 2;
                let offset = PARSED_BASE + at;
                if let (Some(Tok::Comma), Some(Tok::Word(w))) = (self.peek(), self.peek_at(1)) {
                    let w = w.clone();
                    return self.field_item(offset, fixlen, pos, &w);
                }
                Ok(Item::Field { offset, len: fixlen })
            }
            Some(Tok::Word(w)) if w == "SEQNUM" => {
                self.i += 1;
                self.seqnum()
            }
            Some(Tok::Word(w)) => Err(self.err_at(
                pos,
                &format!(
                    "expected an item ({ITEMS}); oxsort does not support {w} items (nor DATE, \
                     counts or arithmetic)"
                ),
                &w,
            )),
            _ => Err(self.err(&format!("expected an item ({ITEMS})"))),
        }
    }

    /// `p,m,` followed by the word `w`: a conversion, an edit, `HEX`, `TRAN=`, or (for `X`,
    /// `Z`, `SEQNUM`) the field alone, the word starting the next item.
    fn field_item(
        &mut self,
        offset: usize,
        len: usize,
        len_pos: Pos,
        w: &str,
    ) -> Result<Item, ParseError> {
        match w {
            "X" | "Z" | "SEQNUM" => return Ok(Item::Field { offset, len }),
            "CHANGE" => return self.lookup_item(offset, len, len_pos),
            "HEX" => {
                self.i += 2;
                return Ok(Item::Hex { offset, len });
            }
            "TRAN" => {
                self.i += 2;
                self.expect(&Tok::Equals, "expected '=' after TRAN")?;
                let (t, tpos) = self.word("expected LTOU, UTOL or ALTSEQ")?;
                let tran =
                    match t.as_str() {
                        "LTOU" => Tran::LowerToUpper,
                        "UTOL" => Tran::UpperToLower,
                        "ALTSEQ" => Tran::AltSeq(Vec::new()),
                        _ => return Err(self.err_at(
                            tpos,
                            "expected LTOU, UTOL or ALTSEQ (oxsort does not support ATOE, ETOA \
                             or TRAN=UNI)",
                            &t,
                        )),
                    };
                return Ok(Item::Tran { offset, len, tran });
            }
            _ => {}
        }
        let Some(format) = NumFormat::from_dfsort(w) else {
            self.i += 1;
            return Err(self.err_at(
                self.pos(),
                &format!("expected ',' and the next item or ')', or after p,m: {FIELD_EDITS}"),
                w,
            ));
        };
        let edit_follows = self.peek_at(2) == Some(&Tok::Comma)
            && matches!(self.peek_at(3), Some(Tok::Word(k))
                if k == "EDIT" || k == "SIGNS" || mask_number(k).is_some());
        self.i += 2;
        if edit_follows {
            return self.edit_item(offset, len, len_pos, format);
        }
        // A float (`LF`) has no digits to convert.
        match SumKind::from_dfsort(w).filter(|k| *k != SumKind::Lf) {
            Some(from) => self.conversion(offset, len, len_pos, from),
            None => Err(self.err(&format!(
                "expected ',' and EDIT=(pattern) or a mask M0 to M26 after a {w} field (TO= \
                 conversions read BI, FI, PD and ZD fields)"
            ))),
        }
    }

    /// After `p,m,f`: `,EDIT=(pattern)` or `,Mn`, with `,SIGNS=(a,b,c,d)` and `,LENGTH=n`.
    fn edit_item(
        &mut self,
        offset: usize,
        len: usize,
        len_pos: Pos,
        from: NumFormat,
    ) -> Result<Item, ParseError> {
        if len > from.max_len() {
            return Err(line_err(
                len_pos,
                &format!("a {} field to edit must be 1 to {} bytes", from.name(), from.max_len()),
                Some(len.to_string()),
            ));
        }
        let mut pattern: Option<(Vec<u8>, Pos)> = None;
        let mut mask: Option<(usize, Pos)> = None;
        let mut signs: Option<Signs> = None;
        let mut length = None;
        while let (Some(Tok::Comma), Some(Tok::Word(k))) = (self.peek(), self.peek_at(1)) {
            let k = k.clone();
            let n = mask_number(&k);
            if !matches!(k.as_str(), "EDIT" | "SIGNS" | "LENGTH") && n.is_none() {
                break;
            }
            self.i += 1;
            let kpos = self.pos();
            self.i += 1;
            if (k == "EDIT" || n.is_some()) && (pattern.is_some() || mask.is_some()) {
                return Err(line_err(
                    kpos,
                    "a field takes one EDIT= or one mask Mn",
                    Some(self.pos_text(kpos)),
                ));
            }
            match (k.as_str(), n) {
                ("EDIT", _) => {
                    self.expect(&Tok::Equals, "expected '=' after EDIT")?;
                    pattern = Some((self.edit_pattern()?, kpos));
                }
                ("SIGNS", _) => {
                    self.expect(&Tok::Equals, "expected '=' after SIGNS")?;
                    signs = Some(self.signs()?);
                }
                ("LENGTH", _) => {
                    self.expect(&Tok::Equals, "expected '=' after LENGTH")?;
                    let (n, npos) = self.number("expected the output length")?;
                    if n == 0 || n > EDIT_MAX {
                        return Err(line_err(
                            npos,
                            &format!("LENGTH of an edited field must be 1 to {EDIT_MAX}"),
                            Some(n.to_string()),
                        ));
                    }
                    length = Some(n);
                }
                (_, Some(n)) if n < MASKS => mask = Some((n, kpos)),
                _ => {
                    return Err(self.err_at(kpos, "the masks are M0 to M26", &k));
                }
            }
        }
        let mask = match (pattern, mask) {
            (Some((p, ppos)), None) => EditMask::pattern(&p, signs)
                .map_err(|e| line_err(ppos, &e.to_string(), Some(self.pos_text(ppos))))?,
            (None, Some((n, _))) => EditMask::predefined(n, from.digits(len), signs)
                .expect("mask numbers are checked above"),
            _ => return Err(self.err("expected ',' and EDIT=(pattern) or a mask M0 to M26")),
        };
        let out_len = length.unwrap_or(mask.len());
        Ok(Item::Edit { offset, len, from, mask, out_len })
    }

    /// `(pattern)` of `EDIT=`: the characters between the parentheses as written.
    pub(super) fn edit_pattern(&mut self) -> Result<Vec<u8>, ParseError> {
        let start = self.pos();
        self.expect(&Tok::LParen, "expected '(' and the edit pattern")?;
        let mut text = Vec::new();
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return Err(self.err("expected ')' to end the edit pattern")),
                Some(Tok::RParen) if depth == 0 => {
                    self.i += 1;
                    break;
                }
                Some(t) => {
                    match t {
                        Tok::LParen => depth += 1,
                        Tok::RParen => depth -= 1,
                        _ => {}
                    }
                    text.extend_from_slice(self.tokens[self.i].text.as_bytes());
                    self.i += 1;
                }
            }
        }
        if text.is_empty() || text.len() > EDIT_MAX {
            return Err(line_err(
                start,
                &format!("an edit pattern must be 1 to {EDIT_MAX} characters"),
                Some(String::from_utf8_lossy(&text).into_owned()),
            ));
        }
        Ok(text)
    }

    /// `(a,b,c,d)` of `SIGNS=`: each a character, `' '` for a blank, or left out.
    pub(super) fn signs(&mut self) -> Result<Signs, ParseError> {
        self.expect(&Tok::LParen, "expected '(' and up to four signs")?;
        let mut signs: Signs = [None; 4];
        let mut slot = 0usize;
        loop {
            match self.peek() {
                Some(Tok::Comma) | Some(Tok::RParen) => {}
                Some(Tok::Bad('\'')) => {
                    // A quoted character: ' ' or '('.
                    let inner = self.tokens.get(self.i + 1).map(|t| t.text.as_bytes().to_vec());
                    match (inner.as_deref(), self.peek_at(2)) {
                        (Some([c]), Some(Tok::Bad('\''))) => {
                            signs[slot] = Some(*c);
                            self.i += 3;
                        }
                        _ => return Err(self.err("expected a sign such as + - or ' '")),
                    }
                }
                Some(Tok::Chars(c)) if c.len() == 1 => {
                    signs[slot] = Some(c[0]);
                    self.i += 1;
                }
                Some(_) if self.tokens[self.i].text.len() == 1 => {
                    signs[slot] = Some(self.tokens[self.i].text.as_bytes()[0]);
                    self.i += 1;
                }
                _ => return Err(self.err("expected a sign: one character, such as + - or ' '")),
            }
            match self.peek() {
                Some(Tok::Comma) if slot < 3 => {
                    self.i += 1;
                    slot += 1;
                }
                Some(Tok::RParen) => {
                    self.i += 1;
                    return Ok(signs);
                }
                _ => return Err(self.err("expected ',' and the next sign, or ')' (four at most)")),
            }
        }
    }

    /// After `SEQNUM`: `,n,f` then `,START=j`, `,INCR=i`, `,RESTART=(p,m)`.
    fn seqnum(&mut self) -> Result<Item, ParseError> {
        self.expect(&Tok::Comma, "expected ',' and the length of the sequence number")?;
        let (len, lpos) = self.number("expected the length of the sequence number")?;
        self.expect(&Tok::Comma, "expected ',' and the format (ZD, PD, BI, FS or CSF)")?;
        let (f, fpos) = self.word("expected the format (ZD, PD, BI, FS or CSF)")?;
        let (format, most) = match f.as_str() {
            "ZD" => (SeqFormat::Zd, 31),
            "PD" => (SeqFormat::Pd, 16),
            "BI" => (SeqFormat::Bi, 8),
            "FS" | "CSF" => (SeqFormat::Fs, 32),
            _ => {
                return Err(self.err_at(
                    fpos,
                    "expected the format of the sequence number (ZD, PD, BI, FS or CSF)",
                    &f,
                ))
            }
        };
        if len == 0 || len > most {
            return Err(line_err(
                lpos,
                &format!("a {f} sequence number must be 1 to {most} bytes"),
                Some(len.to_string()),
            ));
        }
        let mut q = Seqnum { len, format, start: 1, incr: 1, restart: None };
        while let (Some(Tok::Comma), Some(Tok::Word(k))) = (self.peek(), self.peek_at(1)) {
            if !matches!(k.as_str(), "START" | "INCR" | "RESTART") {
                break;
            }
            let k = k.clone();
            self.i += 2;
            self.expect(&Tok::Equals, &format!("expected '=' after {k}"))?;
            match k.as_str() {
                "START" => q.start = self.count("expected the first number")?,
                "INCR" => {
                    let npos = self.pos();
                    q.incr = self.count("expected the increment")?;
                    if q.incr == 0 {
                        return Err(line_err(npos, "INCR must be at least 1", Some("0".into())));
                    }
                }
                _ => {
                    self.expect(&Tok::LParen, "expected '(' and p,m")?;
                    let (p, ppos) = self.number("expected a position")?;
                    self.expect(&Tok::Comma, "expected ',' and a length")?;
                    let (m, mpos) = self.number("expected a length")?;
                    self.expect(&Tok::RParen, "expected ')' after p,m")?;
                    if p == 0 {
                        return Err(line_err(
                            ppos,
                            "position must be at least 1",
                            Some("0".into()),
                        ));
                    }
                    if m == 0 || m > 256 {
                        return Err(line_err(
                            mpos,
                            "a RESTART field must be 1 to 256 bytes",
                            Some(m.to_string()),
                        ));
                    }
                    q.restart = Some((p - 1, m));
                }
            }
        }
        Ok(Item::Seqnum(q))
    }

    /// A non-negative number that fits 64 bits.
    fn count(&mut self, expected: &str) -> Result<u64, ParseError> {
        match self.peek() {
            Some(Tok::Num(n)) if !n.starts_with(['+', '-']) => {
                let v = n.parse::<u64>().map_err(|_| self.err("number too large"))?;
                self.i += 1;
                Ok(v)
            }
            _ => Err(self.err(expected)),
        }
    }

    /// `(%nn=(...),%=(...),...)` of `PARSE=`; records the `%nn` fields for the items.
    fn parse_defs(&mut self) -> Result<Vec<ParseField>, ParseError> {
        const OPERANDS: &str = "STARTAFT=, STARTAT=, ENDBEFR=, ENDAT=, ABSPOS=, ADDPOS=, SUBPOS= \
                                or FIXLEN= (with C'...' or X'...' constants)";
        self.expect(&Tok::LParen, "expected '(' and the %nn fields")?;
        let mut fields = Vec::new();
        let mut at = 0usize;
        loop {
            let fpos = self.pos();
            if !self.peek_is(&Tok::Bad('%')) {
                return Err(self.err("expected %nn=(...) or %=(...)"));
            }
            self.i += 1;
            let (number, written) = match self.peek() {
                Some(Tok::Num(n)) if !n.starts_with(['+', '-']) && n.len() <= 3 => {
                    let v = n.parse::<usize>().unwrap_or(0);
                    let written = format!("%{n}");
                    self.i += 1;
                    (Some(v), written)
                }
                _ => (None, "%".to_string()),
            };
            if let Some(n) = number {
                if self.parsed.iter().any(|f| f.0 == n) {
                    return Err(line_err(
                        fpos,
                        "this %nn is already defined",
                        Some(written.clone()),
                    ));
                }
            }
            self.expect(&Tok::Equals, "expected '=' and (...) after %nn")?;
            self.expect(&Tok::LParen, "expected '(' and the field's operands")?;
            let mut f = ParseField {
                start: ParseStart::Next,
                end_before: Vec::new(),
                end_at: Vec::new(),
                fixlen: 0,
            };
            let mut fixlen = None;
            loop {
                let (kw, kpos) = self.word(&format!("expected {OPERANDS}"))?;
                self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
                match kw.as_str() {
                    "STARTAFT" | "STARTAT" | "ENDBEFR" | "ENDAT" => {
                        let c = match self.peek().cloned() {
                            Some(Tok::Chars(c)) | Some(Tok::Hex(c)) if !c.is_empty() => c,
                            _ => {
                                return Err(self.err(&format!(
                                    "expected a constant C'...' or X'...' after {kw}= (BLANKS, \
                                     NONBLANK and the other keywords are not supported)"
                                )))
                            }
                        };
                        self.i += 1;
                        match kw.as_str() {
                            "STARTAFT" => f.start = ParseStart::After(c),
                            "STARTAT" => f.start = ParseStart::At(c),
                            "ENDBEFR" => f.end_before.push(c),
                            _ => f.end_at.push(c),
                        }
                    }
                    "ABSPOS" | "ADDPOS" | "SUBPOS" | "FIXLEN" => {
                        let (n, npos) = self.number(&format!("expected a number after {kw}="))?;
                        if n > oxsort_format::MAX_RECORD_SIZE
                            || (n == 0 && kw != "ADDPOS" && kw != "SUBPOS")
                        {
                            return Err(line_err(
                                npos,
                                &format!("{kw} must be 1 to {}", oxsort_format::MAX_RECORD_SIZE),
                                Some(n.to_string()),
                            ));
                        }
                        match kw.as_str() {
                            "ABSPOS" => f.start = ParseStart::Abs(n - 1),
                            "ADDPOS" => f.start = ParseStart::Add(n),
                            "SUBPOS" => f.start = ParseStart::Sub(n),
                            _ => fixlen = Some(n),
                        }
                    }
                    _ => {
                        return Err(self.err_at(
                            kpos,
                            &format!("expected {OPERANDS}; PAIR= and the others are not supported"),
                            &kw,
                        ))
                    }
                }
                if self.list_end("operand")? {
                    break;
                }
            }
            if let Some(n) = number {
                let Some(len) = fixlen else {
                    return Err(line_err(
                        fpos,
                        "a %nn field needs FIXLEN=m",
                        Some(written.clone()),
                    ));
                };
                f.fixlen = len;
                self.parsed.push((n, at, len));
                at += len;
                if at > oxsort_format::MAX_RECORD_SIZE {
                    return Err(line_err(fpos, "the parsed fields are too long", None));
                }
            }
            fields.push(f);
            match self.peek() {
                Some(Tok::Comma) => self.i += 1,
                Some(Tok::RParen) => {
                    self.i += 1;
                    return Ok(fields);
                }
                _ => return Err(self.err("expected ',' and another %nn field, or ')'")),
            }
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
            SumKind::Bi | SumKind::Fi | SumKind::Lf => 8,
            SumKind::Pd => 16,
            SumKind::Zd | SumKind::Clo => 31,
            SumKind::Csl | SumKind::Cst => 32,
        };
        if len > most {
            return Err(line_err(
                len_pos,
                &format!("a {} field to convert must be 1 to {most} bytes", from.name()),
                Some(len.to_string()),
            ));
        }
        const WANT: &str = "expected ',' and TO=ZD, TO=PD or TO=FS, EDIT=(pattern) or a mask M0 \
                            to M26";
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
                if n == 0 || n > oxsort_format::MAX_RECORD_SIZE {
                    return Err(line_err(
                        npos,
                        &format!("a repeat count must be 1 to {}", oxsort_format::MAX_RECORD_SIZE),
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
        let mut f = FindRep::new(Vec::new(), oxsort_format::FindRepRule::Dfsort);
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
                    if n == 0 || n > oxsort_format::MAX_RECORD_SIZE {
                        return Err(line_err(
                            npos,
                            &format!("{kw} must be 1 to {}", oxsort_format::MAX_RECORD_SIZE),
                            Some(n.to_string()),
                        ));
                    }
                    match kw.as_str() {
                        "STARTPOS" => f.start = Some(n),
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
            if self.list_end("FINDREP operand")? {
                break;
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
        if f.end.is_some_and(|e| e < f.start.unwrap_or(1)) {
            return Err(need("FINDREP ENDPOS must not be before STARTPOS"));
        }
        Ok(f)
    }

    /// `(WHEN=...,edit[,HIT=NEXT])`; returns the clause and where it starts.
    /// `IFOUTLEN=`'s value (after the `=`): the output record length, 1 to the largest record.
    pub(super) fn ifoutlen(&mut self) -> Result<usize, ParseError> {
        let (n, npos) = self.number("expected the output record length")?;
        if !(1..=oxsort_format::MAX_RECORD_SIZE).contains(&n) {
            return Err(line_err(
                npos,
                &format!("IFOUTLEN must be 1 to {}", oxsort_format::MAX_RECORD_SIZE),
                Some(n.to_string()),
            ));
        }
        Ok(n)
    }

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
        let (mut kw, mut kpos) =
            self.word("expected PARSE=, BUILD=, FIELDS=, OVERLAY= or FINDREP=")?;
        // The clause's own PARSE= fields, seen only by its BUILD or OVERLAY.
        let outer = std::mem::take(&mut self.parsed);
        let mut parse = None;
        if kw == "PARSE" {
            self.expect(&Tok::Equals, "expected '=' after PARSE")?;
            parse = Some(self.parse_defs()?);
            self.expect(&Tok::Comma, "expected ',' and BUILD= or OVERLAY= after PARSE=(...)")?;
            (kw, kpos) = self.word("expected BUILD=, FIELDS= or OVERLAY= after PARSE=(...)")?;
        }
        let allowed: &[&str] = if parse.is_some() {
            &["BUILD", "FIELDS", "OVERLAY"]
        } else {
            &["BUILD", "FIELDS", "OVERLAY", "FINDREP"]
        };
        if !allowed.contains(&kw.as_str()) {
            return Err(self.err_at(
                kpos,
                &format!(
                    "expected {}= in the IFTHEN clause (PUSH is not supported)",
                    allowed.join("=, ")
                ),
                &kw,
            ));
        }
        self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
        let edit = self.edit(&kw)?;
        self.parsed = outer;
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
        Ok((IfThen { when, edit, hit_next, parse }, pos))
    }
}

/// `n` of a mask name `Mn`.
pub(super) fn mask_number(word: &str) -> Option<usize> {
    let digits = word.strip_prefix('M')?;
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

//! The operands of `OUTFIL` (see [`oxsort_format::Outfil`] for what they mean).
//!
//! ```text
//!  OUTFIL  FNAMES=dd|(dd,...)  FILES=s|(s,...)  INCLUDE=(cond)|ALL|NONE  OMIT=...  SAVE
//!          STARTREC=n  ENDREC=n  BUILD=|OUTREC=|FIELDS=|OVERLAY=|FINDREP=|IFTHEN=|IFOUTLEN=
//!          SPLIT  SPLITBY=n  SPLIT1R=n  HEADER1=(items)  TRAILER1=(items)  REMOVECC
//!  items   [c:]'text'  [c:]C'..'  [c:]X'..'  [c:]nX  [c:]n'..'  /  n/
//!          COUNT  COUNT15  COUNT=(TO=ZD|FS,LENGTH=n)            (trailer only)
//! ```

use super::{line_err, Parser, Pos, Tok};
use oxsort_format::EditMask;
use oxsort_format::ParseError;
use oxsort_format::{CountForm, Outfil, ReportItem, ReportLine, Split, COUNT_DIGITS};
use oxsort_format::{Reformat, When};

const OPERANDS: &str = "FNAMES=, FILES=, INCLUDE=, OMIT=, SAVE, STARTREC=, ENDREC=, BUILD=, \
                        OUTREC=, FIELDS=, OVERLAY=, FINDREP=, IFTHEN=, IFOUTLEN=, SPLIT, \
                        SPLITBY=, SPLIT1R=, HEADER1=, TRAILER1=, REMOVECC";

/// OUTFIL operands of DFSORT that oxsort knows of and does not carry out.
const UNSUPPORTED: &[&str] = &[
    "HEADER2", "HEADER3", "TRAILER2", "TRAILER3", "SECTIONS", "LINES", "NODETAIL", "SAMPLE",
    "ACCEPT", "VTOF", "FTOV", "CONVERT", "VLFILL", "VLTRIM", "REPEAT", "IFTRAIL", "BLKCCH1",
    "BLKCCH2", "BLKCCT1", "NULLOFL", "PAGES", "DATA",
];

/// Longest data set suffix of `FILES=` (`SORTOF` + 1 or 2 characters).
const MAX_FILES_SUFFIX: usize = 2;

/// The largest record count of `STARTREC=`, `ENDREC=`, `SPLITBY=`, `SPLIT1R=` (DFSORT's limit
/// is 28 digits; a u64 holds more records than any file).
fn count_value(p: &mut Parser<'_>, what: &str) -> Result<(u64, Pos), ParseError> {
    let pos = p.pos();
    match p.peek() {
        Some(Tok::Num(n)) if !n.starts_with(['+', '-']) => {
            let v = n.parse::<u64>().map_err(|_| p.err(&format!("{what} is too large")))?;
            p.i += 1;
            Ok((v, pos))
        }
        _ => Err(p.err(&format!("expected a number after {what}="))),
    }
}

impl Parser<'_> {
    /// The operands of an `OUTFIL` statement.
    pub(super) fn outfil_operands(&mut self) -> Result<Outfil, ParseError> {
        self.tokens_check()?;
        let line = self.st.name_pos.line;
        let mut out = Outfil {
            line,
            names: Vec::new(),
            filter: None,
            filter_end: 0,
            save: false,
            startrec: None,
            endrec: None,
            reformat: None,
            split: Split::None,
            header1: None,
            trailer1: None,
            removecc: false,
        };
        let mut selection: Option<(&'static str, Pos)> = None;
        let mut reformat_pos: Option<Pos> = None;
        let mut clauses = Vec::new();
        let mut outlen = None;
        let mut split_pos: Option<Pos> = None;
        if self.peek().is_none() {
            return Ok(self.default_names(out));
        }
        loop {
            let (kw, pos) = self.word(&format!("expected an OUTFIL operand ({OPERANDS})"))?;
            let mut select = |what: &'static str| -> Result<(), ParseError> {
                if let Some((first, fpos)) = selection {
                    return Err(line_err(
                        pos,
                        &format!(
                            "only one of INCLUDE=, OMIT= and SAVE in an OUTFIL statement ({first} \
                             is at column {})",
                            fpos.column
                        ),
                        Some(what.to_string()),
                    ));
                }
                selection = Some((what, pos));
                Ok(())
            };
            match kw.as_str() {
                "FNAMES" | "FILES" => {
                    self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
                    for (name, npos) in self.name_list(&kw)? {
                        let dd = if kw == "FNAMES" {
                            name
                        } else if name == "OUT" {
                            "SORTOUT".to_string()
                        } else if name.len() <= MAX_FILES_SUFFIX {
                            format!("SORTOF{name}")
                        } else {
                            return Err(line_err(
                                npos,
                                "a FILES= suffix has 1 or 2 characters (01 for SORTOF01) or is OUT",
                                Some(name),
                            ));
                        };
                        if out.names.contains(&dd) {
                            return Err(line_err(
                                npos,
                                &format!("{dd} is named twice in this statement"),
                                Some(dd.clone()),
                            ));
                        }
                        out.names.push(dd);
                    }
                }
                "INCLUDE" | "OMIT" => {
                    select(if kw == "INCLUDE" { "INCLUDE" } else { "OMIT" })?;
                    self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
                    let (filter, end) = self.filter_operand(&kw)?;
                    out.filter_end = end;
                    out.filter = Some(filter);
                }
                "SAVE" => {
                    select("SAVE")?;
                    out.save = true;
                }
                "STARTREC" | "ENDREC" => {
                    self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
                    let (n, npos) = count_value(self, &kw)?;
                    if n == 0 {
                        return Err(line_err(npos, &format!("{kw} must be at least 1"), Some("0".into())));
                    }
                    if kw == "STARTREC" {
                        out.startrec = Some(n);
                    } else {
                        out.endrec = Some(n);
                    }
                }
                "BUILD" | "OUTREC" | "FIELDS" | "OVERLAY" | "FINDREP" => {
                    if let Some(first) = reformat_pos {
                        return Err(line_err(
                            pos,
                            &format!(
                                "only one of BUILD, OUTREC, FIELDS, OVERLAY, FINDREP in an OUTFIL \
                                 statement (the first is at column {})",
                                first.column
                            ),
                            Some(kw),
                        ));
                    }
                    reformat_pos = Some(pos);
                    self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
                    let kw = if kw == "OUTREC" { "BUILD".to_string() } else { kw };
                    out.reformat = Some(Reformat::Edit(self.edit(&kw)?));
                }
                "IFTHEN" => {
                    self.expect(&Tok::Equals, "expected '=' after IFTHEN")?;
                    let (clause, _) = self.ifthen()?;
                    clauses.push(clause);
                }
                "IFOUTLEN" => {
                    self.expect(&Tok::Equals, "expected '=' after IFOUTLEN")?;
                    outlen = Some(self.ifoutlen()?);
                }
                "SPLIT" | "SPLITBY" | "SPLIT1R" => {
                    if let Some(first) = split_pos {
                        return Err(line_err(
                            pos,
                            &format!(
                                "only one of SPLIT, SPLITBY and SPLIT1R (the first is at column {})",
                                first.column
                            ),
                            Some(kw),
                        ));
                    }
                    split_pos = Some(pos);
                    out.split = if kw == "SPLIT" {
                        if self.peek_is(&Tok::Equals) {
                            return Err(self.err("SPLIT takes no value: write SPLITBY=n for blocks of n"));
                        }
                        Split::By(1)
                    } else {
                        self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
                        let (n, npos) = count_value(self, &kw)?;
                        if n == 0 {
                            return Err(line_err(npos, &format!("{kw} must be at least 1"), Some("0".into())));
                        }
                        if kw == "SPLITBY" {
                            Split::By(n)
                        } else {
                            Split::OneRound(n)
                        }
                    };
                }
                "HEADER1" | "TRAILER1" => {
                    self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
                    let lines = self.report_lines(kw == "TRAILER1")?;
                    if kw == "HEADER1" {
                        out.header1 = Some(lines);
                    } else {
                        out.trailer1 = Some(lines);
                    }
                }
                "REMOVECC" => out.removecc = true,
                w if UNSUPPORTED.contains(&w) => {
                    return Err(self.err_at(
                        pos,
                        &format!("{w} is not supported by oxsort; the OUTFIL operands it reads are {OPERANDS}"),
                        &kw,
                    ))
                }
                _ => {
                    return Err(self.err_at(
                        pos,
                        &format!("expected an OUTFIL operand ({OPERANDS})"),
                        &kw,
                    ))
                }
            }
            if self.peek().is_none() {
                break;
            }
            self.expect(&Tok::Comma, "expected ',' between operands")?;
        }
        if !clauses.is_empty() || outlen.is_some() {
            if let Some(p) = reformat_pos {
                return Err(line_err(
                    p,
                    "BUILD, OUTREC, OVERLAY or FINDREP cannot go with IFTHEN or IFOUTLEN in one \
                     statement (use IFTHEN=(WHEN=INIT,...) instead)",
                    None,
                ));
            }
            if clauses.is_empty() {
                return Err(line_err(self.st.name_pos, "IFOUTLEN= needs IFTHEN= clauses", None));
            }
            let mut last = 0;
            for c in &clauses {
                let rank = match c.when {
                    When::Init => 0,
                    When::Cond(_) => 1,
                    When::None => 2,
                };
                if rank < last {
                    return Err(line_err(
                        self.st.name_pos,
                        "IFTHEN clauses go in this order: WHEN=INIT, then WHEN=(cond), then \
                         WHEN=NONE",
                        None,
                    ));
                }
                last = rank;
            }
            out.reformat = Some(Reformat::IfThen { clauses, outlen });
        }
        if let (Some(s), Some(e)) = (out.startrec, out.endrec) {
            if e < s {
                return Err(line_err(
                    self.st.name_pos,
                    &format!("ENDREC={e} is before STARTREC={s}"),
                    None,
                ));
            }
        }
        Ok(self.default_names(out))
    }

    /// `SORTOUT` when the statement names no output.
    fn default_names(&self, mut out: Outfil) -> Outfil {
        if out.names.is_empty() {
            out.names.push("SORTOUT".into());
        }
        out
    }

    /// `name` or `(name,...)` after `FNAMES=`/`FILES=`, upper case.
    fn name_list(&mut self, kw: &str) -> Result<Vec<(String, Pos)>, ParseError> {
        let paren = self.peek_is(&Tok::LParen);
        if paren {
            self.i += 1;
        }
        let mut names = Vec::new();
        loop {
            let pos = self.pos();
            let name = match self.peek().cloned() {
                Some(Tok::Word(w)) => w,
                Some(Tok::Num(n)) if kw == "FILES" && !n.starts_with(['+', '-']) => n,
                _ => return Err(self.err(&format!("expected a DD name after {kw}="))),
            };
            self.i += 1;
            names.push((name.to_ascii_uppercase(), pos));
            if !paren || !self.peek_is(&Tok::Comma) {
                break;
            }
            self.i += 1;
        }
        if paren {
            self.expect(&Tok::RParen, "expected ',' and another name, or ')'")?;
        }
        Ok(names)
    }

    /// `(items)` of `HEADER1=`/`TRAILER1=`: lines split at `/` (`n/` makes n - 1 blank lines).
    fn report_lines(&mut self, trailer: bool) -> Result<Vec<ReportLine>, ParseError> {
        self.expect(&Tok::LParen, "expected '(' and the report items")?;
        let mut lines: Vec<ReportLine> = vec![Vec::new()];
        loop {
            // A line break: `/` or `n/`.
            let breaks = match (self.peek().cloned(), self.peek_at(1)) {
                (Some(Tok::Bad('/')), _) => {
                    self.i += 1;
                    Some(1)
                }
                (Some(Tok::Num(n)), Some(Tok::Bad('/'))) => {
                    let (k, kpos) = self.number("expected a count of lines")?;
                    self.i += 1;
                    if k == 0 {
                        return Err(line_err(kpos, "a line count must be at least 1", Some(n)));
                    }
                    Some(k)
                }
                _ => None,
            };
            if let Some(k) = breaks {
                for _ in 0..k {
                    lines.push(Vec::new());
                }
            } else {
                let mut column = None;
                if matches!(self.peek(), Some(Tok::Num(_)))
                    && self.peek_at(1) == Some(&Tok::Bad(':'))
                {
                    let (c, cpos) = self.number("expected a column")?;
                    self.i += 1;
                    if c == 0 || c > oxsort_format::MAX_RECORD_SIZE {
                        return Err(line_err(
                            cpos,
                            &format!("a column must be 1 to {}", oxsort_format::MAX_RECORD_SIZE),
                            Some(c.to_string()),
                        ));
                    }
                    column = Some(c);
                }
                let item = self.report_item(trailer)?;
                lines.last_mut().expect("one line at least").push((column, item));
            }
            match self.peek() {
                Some(Tok::Comma) => self.i += 1,
                Some(Tok::RParen) => {
                    self.i += 1;
                    return Ok(lines);
                }
                // `/` may follow an item without a comma.
                Some(Tok::Bad('/')) => {}
                Some(Tok::Num(_)) if self.peek_at(1) == Some(&Tok::Bad('/')) => {}
                _ => return Err(self.err("expected ',' and another item, '/' or ')'")),
            }
        }
    }

    /// One item of a report line.
    fn report_item(&mut self, trailer: bool) -> Result<ReportItem, ParseError> {
        let pos = self.pos();
        match self.peek().cloned() {
            Some(Tok::Chars(c)) | Some(Tok::Hex(c)) => {
                if c.is_empty() {
                    return Err(line_err(pos, "a constant needs at least one byte", None));
                }
                self.i += 1;
                Ok(ReportItem::Const(c))
            }
            Some(Tok::Word(w)) if w == "X" => {
                self.i += 1;
                Ok(ReportItem::Const(vec![b' ']))
            }
            Some(Tok::Num(_)) => {
                let (n, npos) = self.number("expected a repeat count")?;
                if n == 0 || n > oxsort_format::MAX_RECORD_SIZE {
                    return Err(line_err(
                        npos,
                        &format!("a repeat count must be 1 to {}", oxsort_format::MAX_RECORD_SIZE),
                        Some(n.to_string()),
                    ));
                }
                let unit = match self.peek().cloned() {
                    Some(Tok::Word(w)) if w == "X" => vec![b' '],
                    Some(Tok::Chars(c)) | Some(Tok::Hex(c)) if !c.is_empty() => c,
                    _ => {
                        return Err(self.err(
                            "expected X, '...', C'...' or X'...' after a repeat count (input \
                             fields are not supported in reports)",
                        ))
                    }
                };
                self.i += 1;
                Ok(ReportItem::Const(unit.repeat(n)))
            }
            Some(Tok::Word(w)) if w == "COUNT" || w == "COUNT15" => {
                if !trailer {
                    return Err(self.err_at(pos, "COUNT goes in TRAILER1, not HEADER1", &w));
                }
                self.i += 1;
                if w == "COUNT15" {
                    return Ok(ReportItem::Count(CountForm::Blanked { width: 15 }));
                }
                if !self.peek_is(&Tok::Equals) {
                    return Ok(ReportItem::Count(CountForm::Blanked { width: 8 }));
                }
                self.i += 1;
                self.count_form()
            }
            Some(Tok::Word(w)) if w == "EDCOUNT" => Err(self.err_at(
                pos,
                "EDCOUNT is an operand of ICETOOL's DISPLAY, not of OUTFIL: write an edited \
                 count as COUNT=(Mn) or COUNT=(EDIT=(pattern)) [,LENGTH=n]",
                &w,
            )),
            Some(Tok::Word(w)) => Err(self.err_at(
                pos,
                &format!(
                    "expected a report item ('text', C'...', X'...', nX, n'...', /, COUNT, \
                     COUNT15, COUNT=(TO=ZD|FS,LENGTH=n), COUNT=(Mn|EDIT=(...)[,LENGTH=n])); \
                     oxsort does not support {w} in HEADER1/TRAILER1 (nor DATE, TIME, PAGE, \
                     TOTAL or input fields)"
                ),
                &w,
            )),
            _ => Err(self.err("expected a report item ('text', C'...', X'...', nX, /, COUNT)")),
        }
    }

    /// `(TO=ZD|FS[,LENGTH=n])` or `(Mn|EDIT=(pattern)[,SIGNS=(...)][,LENGTH=n])` after
    /// `COUNT=`.
    fn count_form(&mut self) -> Result<ReportItem, ParseError> {
        self.expect(&Tok::LParen, "expected '(' after COUNT=")?;
        let mut to = None;
        let mut length = None;
        let mut pattern: Option<(Vec<u8>, Pos)> = None;
        let mut mask: Option<usize> = None;
        let mut signs = None;
        loop {
            let (kw, kpos) = self.word("expected TO=, Mn, EDIT=, SIGNS= or LENGTH=")?;
            let n = super::reformat_parse::mask_number(&kw);
            if (kw == "EDIT" || n.is_some()) && (pattern.is_some() || mask.is_some()) {
                return Err(self.err_at(kpos, "a count takes one EDIT= or one mask Mn", &kw));
            }
            match kw.as_str() {
                "TO" => {
                    self.expect(&Tok::Equals, "expected '=' after TO")?;
                    let (f, fpos) = self.word("expected ZD or FS")?;
                    if f != "ZD" && f != "FS" {
                        return Err(self.err_at(fpos, "COUNT=(TO=...) takes ZD or FS", &f));
                    }
                    to = Some((f, kpos));
                }
                "LENGTH" => {
                    self.expect(&Tok::Equals, "expected '=' after LENGTH")?;
                    let (n, npos) = self.number("expected the count's length")?;
                    if !(1..=31).contains(&n) {
                        return Err(line_err(
                            npos,
                            "a count's LENGTH must be 1 to 31",
                            Some(n.to_string()),
                        ));
                    }
                    length = Some(n);
                }
                "EDIT" => {
                    self.expect(&Tok::Equals, "expected '=' after EDIT")?;
                    pattern = Some((self.edit_pattern()?, kpos));
                }
                "SIGNS" => {
                    self.expect(&Tok::Equals, "expected '=' after SIGNS")?;
                    signs = Some(self.signs()?);
                }
                _ => match n {
                    Some(n) if EditMask::predefined(n, COUNT_DIGITS, None).is_some() => {
                        mask = Some(n)
                    }
                    Some(_) => return Err(self.err_at(kpos, "the masks are M0 to M26", &kw)),
                    None => {
                        return Err(self.err_at(
                            kpos,
                            "expected TO=ZD|FS, a mask M0 to M26, EDIT=(pattern), SIGNS= or \
                             LENGTH=",
                            &kw,
                        ))
                    }
                },
            }
            if self.list_end("")? {
                break;
            }
        }
        let edited = pattern.is_some() || mask.is_some();
        if let (Some((_, tpos)), true) = (&to, edited) {
            return Err(line_err(
                *tpos,
                "a count is either converted (TO=ZD|FS) or edited (Mn, EDIT=): not both",
                Some("TO".into()),
            ));
        }
        let edit = match (pattern, mask) {
            (Some((p, ppos)), _) => Some(
                EditMask::pattern(&p, signs)
                    .map_err(|e| line_err(ppos, &e.to_string(), Some(self.pos_text(ppos))))?,
            ),
            (None, Some(n)) => EditMask::predefined(n, COUNT_DIGITS, signs),
            (None, None) => None,
        };
        if let Some(mask) = edit {
            let width = length.unwrap_or(mask.len());
            return Ok(ReportItem::Count(CountForm::Edited { mask, width }));
        }
        let (Some((to, _)), Some(width)) = (to, length) else {
            return Err(self.err(
                "COUNT=(...) needs TO=ZD or TO=FS and LENGTH=n, or an edit (Mn or EDIT=(pattern))",
            ));
        };
        let form =
            if to == "ZD" { CountForm::Zoned { width } } else { CountForm::Blanked { width } };
        Ok(ReportItem::Count(form))
    }
}

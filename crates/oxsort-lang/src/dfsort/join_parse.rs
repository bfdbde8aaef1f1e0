//! The operands of `JOINKEYS`, `JOIN` and `REFORMAT` (see [`oxsort_format::JoinSpec`] for what they mean).
//!
//! ```text
//!  JOINKEYS  FILE=F1|FILES=F1|F1=ddname | FILE=F2|FILES=F2|F2=ddname,
//!            FIELDS=(p,m,A|D,...) [,SORTED] [,NOSEQCK] [,TYPE=F]
//!            [,INCLUDE=(cond)|ALL|NONE | ,OMIT=(cond)|ALL|NONE] [,STOPAFT=n] [,TASKID=id]
//!  JOIN      UNPAIRED[,F1][,F2][,ONLY]
//!  REFORMAT  FIELDS=(F1:p,m[,p,m...],F2:p,m,...,?,...) [,FILL=C'x'|X'hh']
//! ```

use super::{line_err, Parser, Pos, Statement, Tok};
use oxsort_format::ParseError;
use oxsort_format::{JoinInput, JoinItem, JoinKey, JoinSide, JoinSpec};

const JOINKEYS_OPERANDS: &str = "FILE=, FILES=, F1=, F2=, FIELDS=, SORTED, NOSEQCK, TYPE=F, \
                                 INCLUDE=, OMIT=, STOPAFT= or TASKID=";

/// The JOINKEYS statements of a control text, gathered as they are read.
#[derive(Default)]
pub(super) struct JoinParts {
    f1: Option<(JoinInput, Pos)>,
    f2: Option<(JoinInput, Pos)>,
    join: Option<(bool, bool, bool, Pos)>,
    reformat: Option<(Vec<JoinItem>, u8, Pos)>,
    /// The first JOINKEYS-application statement, where errors about a missing one point.
    first: Option<Pos>,
}

impl JoinParts {
    /// Reads one `JOINKEYS`, `JOIN` or `REFORMAT` statement.
    pub(super) fn statement(
        &mut self,
        name: &str,
        st: &Statement,
        p: &mut Parser<'_>,
    ) -> Result<(), ParseError> {
        p.tokens_check()?;
        self.first.get_or_insert(st.name_pos);
        match name {
            "JOINKEYS" => {
                let (side, input) = p.joinkeys_operands(st)?;
                let slot = if side == JoinSide::F1 { &mut self.f1 } else { &mut self.f2 };
                if slot.is_some() {
                    return Err(line_err(
                        st.name_pos,
                        &format!("only one JOINKEYS statement for {}", side.name()),
                        Some(st.name.clone()),
                    ));
                }
                *slot = Some((input, st.name_pos));
            }
            "JOIN" => {
                if self.join.is_some() {
                    return Err(line_err(
                        st.name_pos,
                        "only one JOIN statement",
                        Some(st.name.clone()),
                    ));
                }
                let (f1, f2, only) = p.join_operands()?;
                self.join = Some((f1, f2, only, st.name_pos));
            }
            _ => {
                if self.reformat.is_some() {
                    return Err(line_err(
                        st.name_pos,
                        "only one REFORMAT statement",
                        Some(st.name.clone()),
                    ));
                }
                let (items, fill) = p.reformat_join_operands()?;
                self.reformat = Some((items, fill, st.name_pos));
            }
        }
        Ok(())
    }

    /// The whole application, checked: both JOINKEYS with matching keys, REFORMAT unless ONLY.
    pub(super) fn finish(self) -> Result<Option<JoinSpec>, ParseError> {
        let Some(first) = self.first else { return Ok(None) };
        let missing = |what: &str| {
            line_err(
                first,
                &format!("a JOINKEYS application needs {what}"),
                Some("JOINKEYS".into()),
            )
        };
        let (f1, _) = self.f1.ok_or_else(|| missing("a JOINKEYS statement for F1 (FILE=F1)"))?;
        let (f2, f2_pos) =
            self.f2.ok_or_else(|| missing("a JOINKEYS statement for F2 (FILE=F2)"))?;
        if f1.keys.len() != f2.keys.len() {
            return Err(line_err(
                f2_pos,
                &format!(
                    "F2's JOINKEYS must give as many keys as F1's ({} and {})",
                    f1.keys.len(),
                    f2.keys.len()
                ),
                None,
            ));
        }
        for (i, (a, b)) in f1.keys.iter().zip(&f2.keys).enumerate() {
            if a.len != b.len || a.descending != b.descending {
                return Err(line_err(
                    f2_pos,
                    &format!(
                        "key {} of F2 must have the length and order of key {} of F1 ({},{} \
                         here, {},{} in F1)",
                        i + 1,
                        i + 1,
                        b.len,
                        if b.descending { 'D' } else { 'A' },
                        a.len,
                        if a.descending { 'D' } else { 'A' }
                    ),
                    None,
                ));
            }
        }
        let (unpaired_f1, unpaired_f2, only) =
            self.join.map_or((false, false, false), |(a, b, o, _)| (a, b, o));
        let (reformat, fill) =
            match self.reformat {
                Some((items, fill, _)) => (Some(items), fill),
                None if only => (None, b' '),
                None => return Err(missing(
                    "a REFORMAT statement (it may be left out only with JOIN UNPAIRED,...,ONLY)",
                )),
            };
        Ok(Some(JoinSpec { f1, f2, unpaired_f1, unpaired_f2, only, reformat, fill }))
    }
}

impl Parser<'_> {
    /// `FILE=F1,FIELDS=(...)...`: the side and what it says of it.
    fn joinkeys_operands(&mut self, st: &Statement) -> Result<(JoinSide, JoinInput), ParseError> {
        let mut side: Option<(JoinSide, String)> = None;
        let mut keys = None;
        let mut sorted = false;
        let mut noseqck = false;
        let mut filter = None;
        let mut stopaft = None;
        let mut taskid = None;
        loop {
            let (kw, pos) = self.word(&format!("expected {JOINKEYS_OPERANDS}"))?;
            match kw.as_str() {
                "FILE" | "FILES" | "F1" | "F2" => {
                    self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
                    let (value, vpos) = self.word("expected F1 or F2 (or a DD name after F1=)")?;
                    let this = match kw.as_str() {
                        "F1" => (JoinSide::F1, value),
                        "F2" => (JoinSide::F2, value),
                        _ if value == "F1" => (JoinSide::F1, "SORTJNF1".to_string()),
                        _ if value == "F2" => (JoinSide::F2, "SORTJNF2".to_string()),
                        _ => return Err(self.err_at(vpos, "expected F1 or F2", &value)),
                    };
                    if side.is_some() {
                        return Err(self.err_at(pos, "the file is given twice", &kw));
                    }
                    side = Some(this);
                }
                "FIELDS" => {
                    self.expect(&Tok::Equals, "expected '=' after FIELDS")?;
                    self.expect(&Tok::LParen, "expected '(' after FIELDS=")?;
                    let mut list = Vec::new();
                    loop {
                        let (p, ppos) = self.number("expected a key position (1-based number)")?;
                        if p == 0 {
                            return Err(self.err_at(ppos, "position must be at least 1", "0"));
                        }
                        self.expect(&Tok::Comma, "expected ',' after the position")?;
                        let (m, mpos) = self.number("expected a key length")?;
                        if m == 0 {
                            return Err(self.err_at(mpos, "length must be at least 1", "0"));
                        }
                        self.expect(&Tok::Comma, "expected ',' after the length")?;
                        let (o, opos) = self.word(
                            "expected the order A or D (JOINKEYS keys have no format: they \
                             compare as binary)",
                        )?;
                        let descending = match o.as_str() {
                            "A" => false,
                            "D" => true,
                            _ => {
                                return Err(self.err_at(
                                    opos,
                                    "expected the order A or D (JOINKEYS keys have no format: \
                                     they compare as binary)",
                                    &o,
                                ))
                            }
                        };
                        list.push(JoinKey { offset: p - 1, len: m, descending });
                        if self.peek_is(&Tok::RParen) {
                            self.next();
                            break;
                        }
                        self.expect(&Tok::Comma, "expected ',' or ')' after the order")?;
                    }
                    keys = Some(list);
                }
                "SORTED" => sorted = true,
                "NOSEQCK" => noseqck = true,
                "TYPE" => {
                    self.expect(&Tok::Equals, "expected '=' after TYPE")?;
                    let (t, tpos) = self.word("expected F")?;
                    if t != "F" {
                        return Err(self.err_at(
                            tpos,
                            "expected F (oxsort joins fixed-length records)",
                            &t,
                        ));
                    }
                }
                "INCLUDE" | "OMIT" => {
                    if filter.is_some() {
                        return Err(self.err_at(
                            pos,
                            "only one of INCLUDE= and OMIT= in a JOINKEYS statement",
                            &kw,
                        ));
                    }
                    self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
                    filter = Some(self.filter_operand(&kw)?.0);
                }
                "STOPAFT" => {
                    self.expect(&Tok::Equals, "expected '=' after STOPAFT")?;
                    let (n, _) = self.number("expected a record count after STOPAFT=")?;
                    stopaft = Some(n as u64);
                }
                "TASKID" => {
                    self.expect(&Tok::Equals, "expected '=' after TASKID")?;
                    let (id, ipos) = self.word("expected a two-character id after TASKID=")?;
                    if id.len() != 2 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
                        return Err(self.err_at(
                            ipos,
                            "expected a two-character id after TASKID= (letters or digits: its \
                             control statements are read from DD idF1CNTL or idF2CNTL)",
                            &id,
                        ));
                    }
                    taskid = Some(id);
                }
                _ => return Err(self.err_at(pos, &format!("expected {JOINKEYS_OPERANDS}"), &kw)),
            }
            if self.peek().is_none() {
                break;
            }
            self.expect(&Tok::Comma, "expected ',' between operands")?;
        }
        let Some((side, dd)) = side else {
            return Err(line_err(
                st.name_pos,
                "expected FILE=F1, FILE=F2, F1=ddname or F2=ddname in this statement",
                Some(st.name.clone()),
            ));
        };
        let Some(keys) = keys else {
            return Err(line_err(
                st.name_pos,
                "expected FIELDS=(p,m,A|D,...) in this statement",
                Some(st.name.clone()),
            ));
        };
        let line = st.name_pos.line;
        Ok((side, JoinInput { dd, keys, sorted, noseqck, filter, stopaft, taskid, line }))
    }

    /// `UNPAIRED[,F1][,F2][,ONLY]`: (keep unpaired F1, keep unpaired F2, only unpaired).
    fn join_operands(&mut self) -> Result<(bool, bool, bool), ParseError> {
        let (kw, pos) = self.word("expected UNPAIRED")?;
        if kw != "UNPAIRED" {
            return Err(self.err_at(pos, "expected UNPAIRED", &kw));
        }
        let (mut f1, mut f2, mut only) = (false, false, false);
        while self.peek().is_some() {
            self.expect(&Tok::Comma, "expected ',' between operands")?;
            let (w, wpos) = self.word("expected F1, F2 or ONLY")?;
            match w.as_str() {
                "F1" => f1 = true,
                "F2" => f2 = true,
                "ONLY" => only = true,
                _ => return Err(self.err_at(wpos, "expected F1, F2 or ONLY", &w)),
            }
        }
        // JOIN UNPAIRED (or UNPAIRED,ONLY) names neither file: both.
        if !f1 && !f2 {
            (f1, f2) = (true, true);
        }
        Ok((f1, f2, only))
    }

    /// `FIELDS=(...)[,FILL=byte]`.
    fn reformat_join_operands(&mut self) -> Result<(Vec<JoinItem>, u8), ParseError> {
        let mut items = None;
        let mut fill = b' ';
        loop {
            let (kw, pos) = self.word("expected FIELDS= or FILL=")?;
            self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
            match kw.as_str() {
                "FIELDS" => {
                    self.expect(&Tok::LParen, "expected '(' after FIELDS=")?;
                    items = Some(self.reformat_join_items()?);
                }
                "FILL" => {
                    let pos = self.pos();
                    let bytes = match self.next().map(|t| t.tok.clone()) {
                        Some(Tok::Chars(b)) | Some(Tok::Hex(b)) => b,
                        _ => return Err(self.err("expected C'x' or X'hh' after FILL=")),
                    };
                    let [b] = bytes[..] else {
                        return Err(line_err(
                            pos,
                            "FILL= is one byte: C'x' or X'hh'",
                            Some(self.pos_text(pos)),
                        ));
                    };
                    fill = b;
                }
                _ => return Err(self.err_at(pos, "expected FIELDS= or FILL=", &kw)),
            }
            if self.peek().is_none() {
                break;
            }
            self.expect(&Tok::Comma, "expected ',' between operands")?;
        }
        let items = items.ok_or_else(|| self.err("expected FIELDS=(...) in REFORMAT"))?;
        Ok((items, fill))
    }

    /// The items of `REFORMAT FIELDS=(` up to and including `)`.
    fn reformat_join_items(&mut self) -> Result<Vec<JoinItem>, ParseError> {
        const ITEM: &str = "expected F1:p,m, F2:p,m, p,m (of the last file named) or ?";
        let mut side: Option<JoinSide> = None;
        let mut items = Vec::new();
        loop {
            match self.peek().cloned() {
                Some(Tok::Bad('?')) => {
                    self.next();
                    items.push(JoinItem::Indicator);
                }
                Some(Tok::Word(w)) if (w == "F1" || w == "F2") => {
                    self.next();
                    self.expect(&Tok::Bad(':'), &format!("expected ':' after {w}"))?;
                    side = Some(if w == "F1" { JoinSide::F1 } else { JoinSide::F2 });
                    items.push(self.reformat_join_field(side)?);
                }
                Some(Tok::Num(_)) => items.push(self.reformat_join_field(side)?),
                _ => return Err(self.err(ITEM)),
            }
            if self.peek_is(&Tok::RParen) {
                self.next();
                return Ok(items);
            }
            self.expect(&Tok::Comma, "expected ',' or ')' after the item")?;
        }
    }

    fn reformat_join_field(&mut self, side: Option<JoinSide>) -> Result<JoinItem, ParseError> {
        let (p, ppos) = self.number("expected a position (1-based number)")?;
        let Some(side) = side else {
            return Err(self.err_at(
                ppos,
                "a REFORMAT field needs its file: write F1:p,m or F2:p,m",
                &p.to_string(),
            ));
        };
        if p == 0 {
            return Err(self.err_at(ppos, "position must be at least 1", "0"));
        }
        if !self.peek_is(&Tok::Comma) || !matches!(self.peek_at(1), Some(Tok::Num(_))) {
            return Err(self.err(
                "expected ',' and the length (a position without a length is for variable-length \
                 records, which oxsort does not join)",
            ));
        }
        self.next();
        let (m, mpos) = self.number("expected a length")?;
        if m == 0 {
            return Err(self.err_at(mpos, "length must be at least 1", "0"));
        }
        Ok(JoinItem::Field { side, offset: p - 1, len: m })
    }
}

//! GCSORT's free-form text cut into tokens and statements.
//!
//! GCSORT reads its statements as one stream of words: a line break is a blank, so a
//! statement goes on over as many lines as it likes (a line may start or end with the comma
//! between two operands), blanks may stand around `=` and `,`, and a statement starts where
//! its name stands (not after `,`, `=` or `(`, and not followed by `=`). Lines whose first
//! non-blank is `*` are comments, and so is the rest of a line from a `*` after a blank, a
//! comma or a closing parenthesis (`32,7,  * the ZD field`). Every token keeps its file, line and column, so a message
//! about any part of a statement points at the text as written.

use super::StatementAt;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A word, number, constant (`C'a b'`, `X'0D'`) or name: anything between blanks and
    /// the punctuation below.
    Atom,
    /// `,`
    Comma,
    /// `=`
    Equals,
    /// `(`
    Open,
    /// `)`
    Close,
}

/// A token of GCSORT's text.
#[derive(Debug, Clone)]
pub(super) struct Token {
    pub kind: Kind,
    /// The text as written.
    pub text: String,
    /// Where it starts.
    pub at: StatementAt,
    /// Whether a blank (or a line break) stands before it.
    pub blank_before: bool,
    /// Whether it is the first token of its line.
    pub line_start: bool,
}

impl Token {
    /// The text in upper case.
    pub fn upper(&self) -> String {
        self.text.to_ascii_uppercase()
    }

    fn is(&self, kind: Kind) -> bool {
        self.kind == kind
    }
}

/// A constant whose quote does not close on its line.
#[derive(Debug)]
pub(super) struct OpenQuote(pub StatementAt);

/// The tokens of `text`, read from `name`.
pub(super) fn tokens(text: &str, name: &str) -> Result<Vec<Token>, OpenQuote> {
    let mut out = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw).as_bytes();
        let at = |p: usize| StatementAt { name: name.to_string(), line: i + 1, column: p + 1 };
        let first = line.iter().position(|b| !b.is_ascii_whitespace());
        if first.is_none_or(|p| line[p] == b'*') {
            continue;
        }
        let mut p = 0;
        let mut line_start = true;
        while p < line.len() {
            let blank_before = p == 0 || line[p - 1].is_ascii_whitespace();
            let c = line[p];
            if c.is_ascii_whitespace() {
                p += 1;
                continue;
            }
            if c == b'*' && (blank_before || matches!(line[p - 1], b',' | b')')) {
                // `66,25)*   Filler`, `32,7,  *  the ZD field`: GCSORT's remark, up to the
                // line's end (no operand starts with `*`).
                break;
            }
            let start = p;
            let kind = match c {
                b',' => Kind::Comma,
                b'=' => Kind::Equals,
                b'(' => Kind::Open,
                b')' => Kind::Close,
                _ => Kind::Atom,
            };
            if kind == Kind::Atom {
                while p < line.len() && !is_break(line[p]) {
                    if line[p] == b'\'' || line[p] == b'"' {
                        p = quote_end(line, p).ok_or_else(|| OpenQuote(at(p)))?;
                    } else {
                        p += 1;
                    }
                }
            } else {
                p += 1;
            }
            out.push(Token {
                kind,
                text: String::from_utf8_lossy(&line[start..p]).into_owned(),
                at: at(start),
                blank_before,
                line_start,
            });
            line_start = false;
        }
    }
    Ok(out)
}

/// Whether `b` ends an atom.
fn is_break(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b',' | b'=' | b'(' | b')')
}

/// Just past the quote that closes the one at `open` (a doubled quote inside stands for
/// itself); `None` when the line ends first.
fn quote_end(line: &[u8], open: usize) -> Option<usize> {
    let q = line[open];
    let mut p = open + 1;
    while p < line.len() {
        if line[p] == q {
            if line.get(p + 1) == Some(&q) {
                p += 2;
                continue;
            }
            return Some(p + 1);
        }
        p += 1;
    }
    None
}

/// A statement: its name token and its operand tokens.
#[derive(Debug, Clone)]
pub(super) struct Statement {
    pub name: Token,
    pub operands: Vec<Token>,
}

impl Statement {
    /// The statement's name in upper case.
    pub fn upper(&self) -> String {
        self.name.upper()
    }
}

/// Names that start a statement.
pub(super) const STATEMENTS: &[&str] = &[
    "SORT", "MERGE", "SUM", "INCLUDE", "OMIT", "INREC", "OUTREC", "OUTFIL", "OPTION", "RECORD",
    "ALTSEQ", "JOINKEYS", "JOIN", "REFORMAT", "END", "USE", "GIVE", "TAKE", "XSUM",
];

/// GCSORT statements oxsort knows but does not run (they are named in the message).
pub(super) const REFUSED: &[&str] = &["MODS"];

/// The statements whose operands are a file and its description.
const FILE_STATEMENTS: &[&str] = &["USE", "GIVE", "TAKE", "XSUM"];

/// Words that describe a USE or GIVE file (not statements there).
const FILE_OPERANDS: &[&str] = &["ORG", "RECORD", "KEY"];

/// A token where a statement should start that is no statement name.
#[derive(Debug)]
pub(super) struct NotAStatement(pub Token);

/// The tokens cut into statements.
pub(super) fn statements(tokens: Vec<Token>) -> Result<Vec<Statement>, NotAStatement> {
    let mut out: Vec<Statement> = Vec::new();
    let mut depth = 0i32;
    for i in 0..tokens.len() {
        let t = &tokens[i];
        let prev = i.checked_sub(1).map(|p| &tokens[p]);
        let next = tokens.get(i + 1);
        let in_file = out.last().is_some_and(|s| FILE_STATEMENTS.contains(&s.upper().as_str()));
        let may_start = depth == 0
            && t.is(Kind::Atom)
            && !prev.is_some_and(|p| matches!(p.kind, Kind::Comma | Kind::Equals | Kind::Open))
            && !next.is_some_and(|n| n.is(Kind::Equals));
        let upper = t.upper();
        let known = STATEMENTS.contains(&upper.as_str()) || REFUSED.contains(&upper.as_str());
        // Within USE or GIVE, ORG, RECORD and KEY describe the file, once each: a second
        // RECORD is GCSORT's RECORD statement.
        let describes_file = in_file
            && FILE_OPERANDS.contains(&upper.as_str())
            && !out.last().is_some_and(|s| s.operands.iter().any(|o| o.upper() == upper));
        if may_start && known && !describes_file {
            out.push(Statement { name: t.clone(), operands: Vec::new() });
            continue;
        }
        // A line that reads `NAME operand...` where NAME is no statement: GCSORT would
        // refuse it, and taking it as more operands would only confuse the message.
        let looks_like_one = may_start
            && !in_file
            && t.line_start
            && out.last().is_none_or(|s| !s.operands.is_empty())
            && next.is_some_and(|n| n.at.line == t.at.line && matches!(n.kind, Kind::Atom));
        let Some(current) = out.last_mut().filter(|_| !looks_like_one) else {
            return Err(NotAStatement(t.clone()));
        };
        match t.kind {
            Kind::Open => depth += 1,
            Kind::Close => depth -= 1,
            _ => {}
        }
        current.operands.push(t.clone());
    }
    Ok(out)
}

/// Keywords whose parenthesized value GCSORT takes without the `=` between.
const VALUED: &[&str] =
    &["FIELDS", "COND", "BUILD", "OVERLAY", "INCLUDE", "OMIT", "OUTREC", "INREC", "FINDREP"];

/// A statement's operands as DFSORT writes them: no blanks outside constants, a comma
/// between two operands that only a blank separated, one comma where a line ended with one
/// and the next started with one, and `FINDREP` without parentheses given them
/// (`FINDREP IN=C'?',OUT=C'!'` is `FINDREP=(IN=C'?',OUT=C'!')`), and the `=` GCSORT lets go
/// between a keyword and its parentheses (`SORT FIELDS(1,5,CH,A)`). Each piece of text comes
/// with where it was written.
pub(super) fn dfsort_operands(operands: &[Token]) -> Vec<(String, StatementAt)> {
    let mut out: Vec<(String, StatementAt)> = Vec::new();
    let mut close_at_end: Option<StatementAt> = None;
    let mut skip_next_equals = false;
    let mut skip_keyword = false;
    for (i, t) in operands.iter().enumerate() {
        if std::mem::take(&mut skip_keyword) {
            continue;
        }
        if skip_next_equals && t.is(Kind::Equals) {
            skip_next_equals = false;
            continue;
        }
        skip_next_equals = false;
        let prev = i.checked_sub(1).map(|p| &operands[p]);
        if let Some(p) = prev {
            let opened = out.last().is_some_and(|(s, _)| s.ends_with('('));
            let value_end = matches!(p.kind, Kind::Atom | Kind::Close);
            let value_start = matches!(t.kind, Kind::Atom | Kind::Open);
            if t.is(Kind::Open) && p.is(Kind::Atom) && VALUED.contains(&p.upper().as_str()) {
                // `FIELDS(1,5,CH,A)`, `FIELDS (1,5,CH,A)`: GCSORT's keyword without its `=`.
                out.push(("=".to_string(), t.at.clone()));
            } else if t.blank_before && value_end && value_start && !opened {
                out.push((",".to_string(), t.at.clone()));
            }
            // `a,` at a line's end and `,b` at the next one's start: one comma.
            if t.is(Kind::Comma) && t.line_start && p.is(Kind::Comma) {
                continue;
            }
        }
        // OUTFIL's `OUTREC BUILD=(...)` (or `OUTREC FIELDS=`): GCSORT's `OUTREC=(...)`.
        if t.is(Kind::Atom) && t.upper() == "OUTREC" {
            let next = operands.get(i + 1).filter(|n| n.is(Kind::Atom) && n.blank_before);
            let then_equals = operands.get(i + 2).is_some_and(|a| a.is(Kind::Equals));
            if next.is_some_and(|n| matches!(n.upper().as_str(), "BUILD" | "FIELDS")) && then_equals
            {
                out.push((t.text.clone(), t.at.clone()));
                skip_keyword = true;
                continue;
            }
        }
        if t.is(Kind::Atom) && t.upper() == "FINDREP" && close_at_end.is_none() {
            let next = operands.get(i + 1);
            let after = operands.get(i + 2);
            let bare = match next {
                Some(n) if n.is(Kind::Equals) => !after.is_some_and(|a| a.is(Kind::Open)),
                Some(n) => n.is(Kind::Atom),
                None => false,
            };
            if bare {
                out.push((format!("{}=(", t.text), t.at.clone()));
                close_at_end = Some(operands.last().map_or(t.at.clone(), |l| l.at.clone()));
                skip_next_equals = true;
                continue;
            }
        }
        // GCSORT's `p,m,CH,SS,C'...'` (SS as the comparison): DFSORT's `p,m,SS,EQ,C'...'`.
        let ch_before = out.len() >= 2
            && out[out.len() - 1].0 == ","
            && out[out.len() - 2].0.eq_ignore_ascii_case("CH");
        if t.is(Kind::Atom) && t.upper() == "SS" && ch_before {
            out.truncate(out.len() - 2);
            out.push((t.text.clone(), t.at.clone()));
            out.push((",".to_string(), t.at.clone()));
            out.push(("EQ".to_string(), t.at.clone()));
            continue;
        }
        if t.is(Kind::Atom) && t.upper() == "FL" {
            // GCSORT's `FL` is GnuCOBOL's COMP-1 or COMP-2: a float in the machine's byte
            // order, little-endian where oxsort runs (oxsort's `LF`; DFSORT's `FL` is
            // big-endian).
            out.push(("LF".to_string(), t.at.clone()));
            continue;
        }
        out.push((t.text.clone(), t.at.clone()));
    }
    if let Some(at) = close_at_end {
        out.push((")".to_string(), at));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> Vec<(String, String)> {
        let st = statements(tokens(text, "t").unwrap()).unwrap();
        st.iter()
            .map(|s| {
                let ops: String =
                    dfsort_operands(&s.operands).into_iter().map(|(t, _)| t).collect();
                (s.upper(), ops)
            })
            .collect()
    }

    fn pair(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    #[test]
    fn statements_run_over_lines_with_leading_or_trailing_commas() {
        let text = " SORT FIELDS=(1,5,CH,A,\n   10,2,CH,D)\n OUTREC FIELDS=(1,10\n   ,20,5)\n\
                    * a comment, SORT\n INREC FINDREP=(IN=C'A',OUT=C'B',\n STARTPOS=10 , ENDPOS = 90)";
        assert_eq!(
            cut(text),
            vec![
                pair("SORT", "FIELDS=(1,5,CH,A,10,2,CH,D)"),
                pair("OUTREC", "FIELDS=(1,10,20,5)"),
                pair("INREC", "FINDREP=(IN=C'A',OUT=C'B',STARTPOS=10,ENDPOS=90)"),
            ]
        );
        // A comma at the end of a line and another at the start of the next are one.
        assert_eq!(
            cut("OUTREC FIELDS=(1,10,\n  ,20,5)"),
            vec![pair("OUTREC", "FIELDS=(1,10,20,5)")]
        );
    }

    #[test]
    fn remarks_ss_and_fl_read_as_gcsort_means_them() {
        assert_eq!(
            cut("INREC FIELDS(1,7,  * seq\n  8,5)* ch\nINCLUDE COND=(8,4,CH,SS,C'AB,CD')\n"),
            vec![pair("INREC", "FIELDS=(1,7,8,5)"), pair("INCLUDE", "COND=(8,4,SS,EQ,C'AB,CD')")]
        );
        assert_eq!(cut("SORT FIELDS=(20,8,FL,D)"), vec![pair("SORT", "FIELDS=(20,8,LF,D)")]);
        // A `*` inside a constant or a word is no remark.
        assert_eq!(
            cut("INCLUDE COND=(1,2,CH,EQ,C'* ')"),
            vec![pair("INCLUDE", "COND=(1,2,CH,EQ,C'* ')")]
        );
    }

    #[test]
    fn a_keyword_gets_the_equals_gcsort_lets_go() {
        assert_eq!(cut("SORT FIELDS(1,5,CH,A)"), vec![pair("SORT", "FIELDS=(1,5,CH,A)")]);
        assert_eq!(
            cut("SORT FIELDS (3,1,CH,A) SUM FIELDS = (NONE)"),
            vec![pair("SORT", "FIELDS=(3,1,CH,A)"), pair("SUM", "FIELDS=(NONE)")]
        );
        // Not after any word: a blank between two values is a comma.
        assert_eq!(
            cut("INCLUDE COND=((1,1,CH,EQ,C'A') OR (2,1,CH,EQ,C'B'))"),
            vec![pair("INCLUDE", "COND=((1,1,CH,EQ,C'A'),OR,(2,1,CH,EQ,C'B'))")]
        );
    }

    #[test]
    fn outfil_outrec_build_is_outrec() {
        assert_eq!(
            cut("OUTFIL FNAMES=A,INCLUDE=(1,1,CH,EQ,C'1'),OUTREC BUILD=(1,27,23X)"),
            vec![pair("OUTFIL", "FNAMES=A,INCLUDE=(1,1,CH,EQ,C'1'),OUTREC=(1,27,23X)")]
        );
        assert_eq!(
            cut("OUTFIL FNAMES=A,\n OUTREC FIELDS = (1,2)"),
            vec![pair("OUTFIL", "FNAMES=A,OUTREC=(1,2)")]
        );
    }

    #[test]
    fn findrep_without_parentheses_gets_them() {
        assert_eq!(
            cut("INREC FINDREP IN=C'?', OUT=C'!'"),
            vec![pair("INREC", "FINDREP=(IN=C'?',OUT=C'!')")]
        );
        assert_eq!(
            cut("OUTREC FINDREP=IN=C'a b',OUT=C'c'\nSORT FIELDS=COPY"),
            vec![pair("OUTREC", "FINDREP=(IN=C'a b',OUT=C'c')"), pair("SORT", "FIELDS=COPY")]
        );
    }

    #[test]
    fn statements_start_at_their_names_only() {
        // INCLUDE= is an operand of OUTFIL, RECORD and ORG describe a USE file, SORTED on its
        // own is an operand of JOINKEYS.
        let text = "OUTFIL FNAMES=OUT INCLUDE=(1,1,CH,EQ,C'A')\nUSE in ORG LS\n RECORD F , 10 \
                    GIVE out RECORD F,10 ORG LS\nJOINKEYS FILES=F1,FIELDS=(1,2,A)\n SORTED";
        let got = cut(text);
        assert_eq!(got[0], pair("OUTFIL", "FNAMES=OUT,INCLUDE=(1,1,CH,EQ,C'A')"));
        assert_eq!(got[1], pair("USE", "in,ORG,LS,RECORD,F,10"));
        assert_eq!(got[2], pair("GIVE", "out,RECORD,F,10,ORG,LS"));
        assert_eq!(got[3], pair("JOINKEYS", "FILES=F1,FIELDS=(1,2,A),SORTED"));
        assert_eq!(got.len(), 4);
        // A second RECORD after a GIVE's own is the RECORD statement.
        let got = cut("GIVE out ORG SQ RECORD F,10\nRECORD TYPE=F,LENGTH=10");
        assert_eq!(got[1], pair("RECORD", "TYPE=F,LENGTH=10"));
    }

    #[test]
    fn a_line_naming_no_statement_is_refused_where_it_is() {
        let err =
            statements(tokens("SORT FIELDS=COPY\n  FROBNICATE A,B", "t").unwrap()).unwrap_err();
        assert_eq!((err.0.text.as_str(), err.0.at.line, err.0.at.column), ("FROBNICATE", 2, 3));
        let err = statements(tokens("FIELDS=(1,2)", "t").unwrap()).unwrap_err();
        assert_eq!(err.0.text, "FIELDS");
    }

    #[test]
    fn constants_keep_their_blanks_and_must_close() {
        let t = tokens(" INCLUDE COND=(1,3,CH,EQ,C'a ''b')", "t").unwrap();
        assert_eq!(t.last().map(|t| t.text.as_str()), Some(")"));
        assert!(t.iter().any(|t| t.text == "C'a ''b'"));
        let err = tokens("SORT FIELDS=COPY\n OMIT COND=(1,1,CH,EQ,C'x)", "f").unwrap_err();
        assert_eq!((err.0.line, err.0.column), (2, 24));
    }
}

//! DFSORT control statements.
//!
//! Supported statements (operands as DFSORT writes them; names case-insensitive):
//!
//! ```text
//!  SORT    FIELDS=(p,l,f,o,...) | FIELDS=(p,l,o,...),FORMAT=f | FIELDS=COPY  [,EQUALS|NOEQUALS]
//!  MERGE   the same operands; the inputs are already sorted
//!  SUM     FIELDS=NONE                 keep the first record of each equal key
//!  SUM     FIELDS=(p,m,f,...) | FIELDS=(p,m,...),FORMAT=f   add BI/FI/PD/ZD fields into it
//!          [,XSUM]                     the records deleted written to DD SORTXSUM
//!  OPTION  EQUALS NOEQUALS COPY VLSHRT NOVLSHRT VLSCMP NOVLSCMP SKIPREC=n STOPAFT=n
//!          MAINSIZE=n[K|M|G]
//!  INCLUDE COND=(...) | COND=ALL | COND=NONE  [,FORMAT=f]   (p,m,SS,EQ|NE,C'..' searches;
//!          DATE1 DATE2 DATE3 DATE1P DATE2P DATE3P [+n|-n] are date constants)
//!  OMIT    COND=(...) ...
//!  INREC   BUILD=|FIELDS=|OVERLAY=|FINDREP=|IFTHEN=...   reshape records before the sort
//!  OUTREC  the same operands                 reshape the records written
//!  OUTFIL  FNAMES=|FILES=, INCLUDE=|OMIT=|SAVE, STARTREC=, ENDREC=, BUILD=|OUTREC=|OVERLAY=|
//!          IFTHEN=, SPLIT|SPLITBY=|SPLIT1R=, HEADER1=, TRAILER1=, REMOVECC   (see oxsort_format::Outfil)
//!  RECORD  TYPE=F,LENGTH=n             fixed n-byte records
//!  RECORD  TYPE=V[,LENGTH=(n,...)]     RDW-prefixed variable records of at most n bytes
//!  JOINKEYS, JOIN, REFORMAT            join two files (see [`oxsort_format::JoinSpec`])
//!  ALTSEQ  CODE=(ffxx,...)             byte ff collates as xx in AQ fields (TRAN=ALTSEQ)
//!  END     stops reading
//! ```
//!
//! The text may be a JCL step: the statements are then the lines of `//SYSIN DD *` (up to `/*`
//! or the next `//` line); the other lines are skipped. `OPTION` tuning hints (`DYNALLOC`,
//! `MAINSIZE`, `FILSZ`, ...) are accepted, ignored and listed in [`Control::ignored`].
//!
//! Layout of the text: a `*` in column 1 makes a comment line; a statement name may start in
//! any column; its operands follow after blanks and end at the first blank outside a
//! constant, the rest of the line being a remark. A statement continues on the next line when
//! its operands end with a comma or inside open parentheses. Positions are 1-based bytes from
//! the start of the record (for delimited records, of the line; for RDW-prefixed records
//! (`RECORD TYPE=V`) the RDW is bytes 1 to 4 and the data starts at position 5, as DFSORT
//! counts them).

use oxsort_format::Outfil;
use oxsort_format::Reformat;
use oxsort_format::{field_pair_comparable, CompareOp, Condition, FieldRef, Filter, Operand};
use oxsort_format::{FieldLoc, FieldType, KeyField, KeySpec, ShortFields};
use oxsort_format::{Location, ParseError};
use oxsort_format::{RecordLayout, MAX_RECORD_SIZE};
use oxsort_format::{SumField, SumKind};

/// Parsed DFSORT control statements.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Control {
    /// The key of `SORT`/`MERGE FIELDS=(...)`. `None` for a copy (`FIELDS=COPY`,
    /// `OPTION COPY`) and when no `SORT`/`MERGE` statement was given (then
    /// [`Control::copy`] is false and the caller's default key applies). With `OPTION VLSHRT`
    /// its [`KeySpec::short_fields`] is [`ShortFields::SortFirst`].
    pub key: Option<KeySpec>,
    /// `FIELDS=COPY` or `OPTION COPY`: records are copied in input order, no key.
    pub copy: bool,
    /// `MERGE` rather than `SORT`: the inputs are already sorted by the key.
    pub merge: bool,
    /// `SUM FIELDS=NONE`: keep only the first record of each run of equal keys.
    pub sum_none: bool,
    /// `EQUALS` (`Some(true)`) or `NOEQUALS` (`Some(false)`), from `OPTION` or `SORT`.
    pub equals: Option<bool>,
    /// `OPTION VLSHRT`: short variable records are not an error (short key fields sort first,
    /// or on RDW-prefixed records compare as if padded with binary zeros; a condition with a
    /// short field is false).
    pub vlshrt: bool,
    /// `OPTION VLSCMP`: `INCLUDE`/`OMIT` fields past a record's end compare as if padded with
    /// binary zeros.
    pub vlscmp: bool,
    /// `INCLUDE` or `OMIT`.
    pub filter: Option<Filter>,
    /// `RECORD TYPE=F,LENGTH=n` or `RECORD TYPE=V[,LENGTH=(n,...)]`.
    pub record: Option<RecordLayout>,
    /// `INREC`: records reshaped before the sort (keys refer to them).
    pub inrec: Option<Reformat>,
    /// `OUTREC`: the records written, reshaped.
    pub outrec: Option<Reformat>,
    /// `SUM FIELDS=(p,m,f,...)`: the fields added within each group of equal keys.
    pub sum: Option<Vec<SumField>>,
    /// `SUM ...,XSUM`: the records SUM deletes are written to the DD `SORTXSUM` (the line of
    /// the SUM statement).
    pub xsum: Option<usize>,
    /// Options accepted and ignored (tuning hints of the mainframe), one message each.
    pub ignored: Vec<String>,
    /// `JOINKEYS`/`JOIN`/`REFORMAT`: the records are the join of two files, and the other
    /// statements apply to the joined records.
    pub join: Option<oxsort_format::JoinSpec>,
    /// `OUTFIL` statements, in order: groups of outputs written from the sorted records.
    pub outfil: Vec<Outfil>,
    /// `OPTION SKIPREC=n`: input records skipped before anything else.
    pub skiprec: Option<u64>,
    /// `OPTION STOPAFT=n`: input records accepted (after INCLUDE/OMIT) before reading stops.
    pub stopaft: Option<u64>,
    /// `OPTION MAINSIZE=n[K|M|G]`: the storage DFSORT may use, in bytes (`MAINSIZE=MAX`:
    /// `None`, listed in [`Control::ignored`]).
    pub mainsize: Option<u64>,
}

/// `OPTION`s that tune DFSORT's use of the mainframe: accepted, ignored and reported.
const IGNORED_OPTIONS: &[&str] = &[
    "DYNALLOC",
    "MAINSIZE",
    "FILSZ",
    "SIZE",
    "AVGRLEN",
    "MSGPRT",
    "LIST",
    "NOLIST",
    "HIPRMAX",
    "DSPSIZE",
    "RESINV",
    "MOSIZE",
    "NOBLKSET",
    "BLKSET",
    "MSGDDN",
    "SORTDD",
    "SORTIN",
    "SORTOUT",
    "NOASSIST",
    "ZDPRINT",
    "NOZDPRINT",
    "SOLRF",
    "NOSOLRF",
    "CHALT",
    "NOCHALT",
];

/// The statements oxsort reads, as unsupported-statement messages list them.
const STATEMENTS: &str =
    "SORT, MERGE, SUM, OPTION, INCLUDE, OMIT, INREC, OUTREC, OUTFIL, RECORD, JOINKEYS, JOIN, \
     REFORMAT, ALTSEQ, END";

/// DFSORT statements oxsort knows of but does not carry out.
const UNSUPPORTED_STATEMENTS: &[&str] = &["MODS", "DEBUG", "OUTFILE"];

/// Parses DFSORT control statements.
///
/// ```
/// let c = oxsort_lang::parse_control(
///     "* sort by account, newest first\n SORT FIELDS=(1,8,CH,A,\n               9,4,PD,D)\n",
/// )
/// .unwrap();
/// assert_eq!(c.key.unwrap().fields.len(), 2);
/// ```
pub fn parse_control(text: &str) -> Result<Control, ParseError> {
    parse_statements(text, None)
}

/// The statements a JOINKEYS file's own control DD (`JNF1CNTL`, `JNF2CNTL`, `idF1CNTL`...)
/// may hold: they act on that file before its sort.
const JOIN_INPUT_STATEMENTS: &[&str] =
    &["INCLUDE", "OMIT", "INREC", "SUM", "OPTION", "ALTSEQ", "END"];

/// Parses the control statements of a JOINKEYS file's own DD `dd` (`JNF1CNTL`, ...):
/// `INCLUDE`/`OMIT`, `INREC`, `SUM`, `OPTION` (not `COPY`), `ALTSEQ` and `END`, applied to
/// that file's records before its sort by the join keys (which refer to INREC's records).
///
/// ```
/// let c = oxsort_lang::parse_join_input_control(" INCLUDE COND=(1,1,CH,EQ,C'A')\n SUM FIELDS=NONE\n", "JNF1CNTL").unwrap();
/// assert!(c.filter.is_some() && c.sum_none);
/// assert!(oxsort_lang::parse_join_input_control(" SORT FIELDS=(1,2,CH,A)\n", "JNF1CNTL").is_err());
/// ```
pub fn parse_join_input_control(text: &str, dd: &str) -> Result<Control, ParseError> {
    parse_statements(text, Some(dd))
}

/// [`parse_control`], or with `join_input` the statements of that JOINKEYS file's DD.
fn parse_statements(text: &str, join_input: Option<&str>) -> Result<Control, ParseError> {
    let text = if join_input.is_some() { std::borrow::Cow::Borrowed(text) } else { sysin(text)? };
    let statements = split_statements(&text)?;
    // An empty control file would sort by the default key without a word: a job whose
    // statements were lost (an empty SYSIN, the wrong file) must not look like it ran.
    if statements.is_empty() && join_input.is_none() {
        return Err(ParseError::new(
            Location::Line { line: 1, column: 1 },
            "a control statement (SORT FIELDS=, MERGE FIELDS=, ...); the text holds none",
            None,
        ));
    }
    let mut control = Control::default();
    let mut sort_seen: Option<Pos> = None;
    let mut filter_seen = false;
    let mut sum_seen = false;
    let mut key_checks: Vec<Pos> = Vec::new();
    let mut filter_checks: Vec<(Pos, usize)> = Vec::new();
    let mut record_pos = None;
    let mut join = join_parse::JoinParts::default();
    let mut altseq: Option<[u8; 256]> = None;
    for st in statements {
        let name = st.name.to_ascii_uppercase();
        let mut p = Parser::new(&st);
        if let Some(dd) = join_input {
            if !JOIN_INPUT_STATEMENTS.contains(&name.as_str()) {
                return Err(p.err_at(
                    st.name_pos,
                    &format!(
                        "{name} is not allowed in {dd}: a JOINKEYS file's own statements are {} \
                         (its sort is by the JOINKEYS keys)",
                        JOIN_INPUT_STATEMENTS.join(", ")
                    ),
                    &st.name,
                ));
            }
        }
        match name.as_str() {
            "END" => break,
            "SORT" | "MERGE" => {
                if sort_seen.is_some() {
                    return Err(p.err_at(
                        st.name_pos,
                        "only one SORT or MERGE statement",
                        &st.name,
                    ));
                }
                sort_seen = Some(st.name_pos);
                control.merge = name == "MERGE";
                let sort = p.sort_operands()?;
                if let Some(e) = sort.equals {
                    control.equals = Some(e);
                }
                match sort.fields {
                    SortFields::Copy => control.copy = true,
                    SortFields::Key(fields, positions) => {
                        control.key = Some(KeySpec {
                            fields,
                            separator: None,
                            short_fields: ShortFields::Error,
                        });
                        key_checks = positions;
                    }
                }
            }
            "SUM" => {
                if sum_seen {
                    return Err(p.err_at(st.name_pos, "only one SUM statement", &st.name));
                }
                sum_seen = true;
                let (fields, xsum) = p.sum_operands()?;
                match fields {
                    None => control.sum_none = true,
                    Some(fields) => control.sum = Some(fields),
                }
                if let Some(at) = xsum {
                    if let Some(dd) = join_input {
                        return Err(p.err_at(
                            at,
                            &format!(
                                "XSUM is not allowed in {dd}: only the main task's SUM writes \
                                 SORTXSUM"
                            ),
                            "XSUM",
                        ));
                    }
                    control.xsum = Some(st.name_pos.line);
                }
            }
            "OPTION" => {
                for (word, pos, value) in p.option_operands()? {
                    match (word.as_str(), &value) {
                        ("EQUALS", None) => control.equals = Some(true),
                        ("NOEQUALS", None) => control.equals = Some(false),
                        ("COPY", None) if join_input.is_some() => {
                            return Err(p.err_at(
                                pos,
                                "OPTION COPY is not allowed in a JOINKEYS file's own statements: \
                                 the file is sorted by its keys (or copied with SORTED on its \
                                 JOINKEYS statement)",
                                &word,
                            ))
                        }
                        ("COPY", None) => control.copy = true,
                        ("VLSHRT", None) => control.vlshrt = true,
                        ("NOVLSHRT", None) => control.vlshrt = false,
                        ("VLSCMP", None) => control.vlscmp = true,
                        ("NOVLSCMP", None) => control.vlscmp = false,
                        ("SKIPREC" | "STOPAFT", Some((v, vpos))) => {
                            let n = v.parse::<u64>().map_err(|_| {
                                p.err_at(
                                    *vpos,
                                    &format!("expected a record count after {word}="),
                                    v,
                                )
                            })?;
                            if word == "SKIPREC" {
                                control.skiprec = Some(n);
                            } else {
                                control.stopaft = Some(n);
                            }
                        }
                        ("MAINSIZE", Some((v, vpos))) => match main_size(v) {
                            Some(bytes) => control.mainsize = Some(bytes),
                            None if v == "MAX" => control.ignored.push(format!(
                                "OPTION MAINSIZE (line {}) is accepted and ignored (MAINSIZE=MAX: the \
                                 memory budget is the one the sort is given, or the default)",
                                pos.line
                            )),
                            None => {
                                return Err(p.err_at(
                                    *vpos,
                                    "expected MAINSIZE=n, nK, nM, nG or MAX",
                                    v,
                                ))
                            }
                        },
                        (w, _) if IGNORED_OPTIONS.contains(&w) => control.ignored.push(format!(
                            "OPTION {w} (line {}) is accepted and ignored",
                            pos.line
                        )),
                        _ => {
                            return Err(p.err_at(
                                pos,
                                &format!(
                                    "expected an option oxsort supports (EQUALS, NOEQUALS, \
                                     COPY, VLSHRT, NOVLSHRT, VLSCMP, NOVLSCMP, SKIPREC=n, STOPAFT=n, MAINSIZE=n; \
                                     accepted and ignored: {})",
                                    IGNORED_OPTIONS.join(", ")
                                ),
                                &word,
                            ))
                        }
                    }
                }
            }
            "INCLUDE" | "OMIT" => {
                if filter_seen {
                    return Err(p.err_at(
                        st.name_pos,
                        "only one INCLUDE or OMIT statement",
                        &st.name,
                    ));
                }
                filter_seen = true;
                let (condition, checks) = p.cond_operands()?;
                filter_checks = checks;
                control.filter = Some(Filter {
                    omit: name == "OMIT",
                    condition,
                    short_fields: ShortFields::Error,
                });
            }
            "INREC" | "OUTREC" => {
                let slot = if name == "INREC" { &mut control.inrec } else { &mut control.outrec };
                if slot.is_some() {
                    return Err(p.err_at(
                        st.name_pos,
                        &format!("only one {name} statement"),
                        &st.name,
                    ));
                }
                *slot = Some(p.reformat_operands()?);
            }
            "ALTSEQ" => p.altseq_operands(altseq.get_or_insert(oxsort_format::ALTSEQ_IDENTITY))?,
            "OUTFIL" => {
                let o = p.outfil_operands()?;
                for name in &o.names {
                    if let Some(other) = control.outfil.iter().find(|x| x.names.contains(name)) {
                        return Err(p.err_at(
                            st.name_pos,
                            &format!(
                                "{name} is already an output of the OUTFIL statement of line {}",
                                other.line
                            ),
                            &st.name,
                        ));
                    }
                }
                control.outfil.push(o);
            }
            "RECORD" => {
                let (layout, pos) = p.record_operands()?;
                control.record = Some(layout);
                record_pos = Some(pos);
            }
            "JOINKEYS" | "JOIN" | "REFORMAT" => join.statement(&name, &st, &mut p)?,
            _ if UNSUPPORTED_STATEMENTS.contains(&name.as_str()) => {
                return Err(p.err_at(
                    st.name_pos,
                    &format!(
                        "{name} is not supported by oxsort; the statements it reads are \
                         {STATEMENTS}"
                    ),
                    &st.name,
                ))
            }
            _ => {
                return Err(p.err_at(
                    st.name_pos,
                    &format!("expected a statement ({STATEMENTS})"),
                    &st.name,
                ))
            }
        }
    }
    control.join = join.finish()?;
    if control.copy {
        control.key = None;
    }
    if let Some(table) = altseq {
        altseq::apply(&mut control, table);
    }
    if control.vlshrt {
        if let Some(key) = &mut control.key {
            key.short_fields = ShortFields::SortFirst;
        }
        if let Some(filter) = &mut control.filter {
            filter.short_fields = ShortFields::SortFirst;
        }
    }
    if control.vlscmp {
        if let Some(filter) = &mut control.filter {
            filter.short_fields = ShortFields::PadZeros;
        }
    }
    if let (Some(RecordLayout::Fixed(n)), Some(_)) = (control.record, record_pos) {
        if let Some(key) = &control.key {
            for (f, pos) in key.fields.iter().zip(&key_checks) {
                if let FieldLoc::Bytes { offset, len } = f.loc {
                    if offset + len > n {
                        return Err(past_record(*pos, offset + len, n));
                    }
                }
            }
        }
        for (pos, end) in &filter_checks {
            if *end > n {
                return Err(past_record(*pos, *end, n));
            }
        }
    }
    Ok(control)
}

/// A control file may be a JCL step: when some line starts with `//`, the statements are the
/// lines after `//SYSIN DD *` (or `DD DATA`, or a `//DFSPARM` one) up to `/*` or the next `//`
/// line; every other line becomes blank, so errors keep the file's line numbers.
fn sysin(text: &str) -> Result<std::borrow::Cow<'_, str>, ParseError> {
    if !text.lines().any(|l| l.starts_with("//")) {
        return Ok(std::borrow::Cow::Borrowed(text));
    }
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    let mut found = false;
    for line in text.split('\n') {
        let body = line.strip_suffix('\r').unwrap_or(line);
        if body.starts_with("//") || body.starts_with("/*") {
            inside = false;
            let words: Vec<String> =
                body[2..].split_whitespace().take(3).map(|w| w.to_ascii_uppercase()).collect();
            if let [dd, op, what] = words.as_slice() {
                let what = what.split(',').next().unwrap_or("");
                if (dd == "SYSIN" || dd == "DFSPARM")
                    && op == "DD"
                    && (what == "*" || what == "DATA")
                {
                    inside = true;
                    found = true;
                }
            }
        } else if inside {
            out.push_str(body);
        }
        out.push('\n');
    }
    if !found {
        return Err(ParseError::new(
            Location::Line { line: 1, column: 1 },
            "the JCL has no //SYSIN DD * (or //DFSPARM DD *) with the control statements",
            None,
        ));
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// `MAINSIZE=` in bytes: `n` (bytes), `nK`, `nM` or `nG`.
fn main_size(v: &str) -> Option<u64> {
    let (digits, unit) = match v.as_bytes().last()? {
        b'K' => (&v[..v.len() - 1], 1u64 << 10),
        b'M' => (&v[..v.len() - 1], 1 << 20),
        b'G' => (&v[..v.len() - 1], 1 << 30),
        _ => (v, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(unit)
}

fn past_record(pos: Pos, end: usize, n: usize) -> ParseError {
    ParseError::new(
        Location::Line { line: pos.line, column: pos.column },
        format!("field must end within the {n}-byte records of RECORD LENGTH={n}"),
        Some(format!("a field ending at byte {end}")),
    )
}

/// Parses the one-line form of `SORT FIELDS`: `p,l,f,o,...` (parentheses optional), as given
/// to `--fields`. Errors report line 1 and the column in `text`.
pub fn parse_fields(text: &str) -> Result<KeySpec, ParseError> {
    let chars: Vec<Ch> = text
        .bytes()
        .enumerate()
        .map(|(i, b)| Ch { b, pos: Pos { line: 1, column: i + 1 } })
        .collect();
    let end = Pos { line: 1, column: text.len() + 1 };
    let st = Statement { name: String::new(), name_pos: end, operands: chars, end };
    let mut p = Parser::new(&st);
    p.tokens_check()?;
    let paren = p.peek_is(&Tok::LParen);
    if paren {
        p.next();
    }
    let fields = p.field_list()?;
    if paren {
        p.expect(&Tok::RParen, "expected ')' after the fields")?;
    }
    p.finish("expected ',' and another field")?;
    let mut resolved = Vec::new();
    for (f, pos) in fields {
        resolved.push(f.resolve(None, pos, &p)?);
    }
    Ok(KeySpec { fields: resolved, separator: None, short_fields: ShortFields::Error })
}

mod altseq;
mod dates;
pub use dates::civil as civil_date;

/// Splits a statement's operands at its top-level commas (not inside parentheses or quotes),
/// empty pieces left out: `FNAMES=(A,B),INCLUDE=(1,1,CH,EQ,C',')` gives `FNAMES=(A,B)` and
/// `INCLUDE=(1,1,CH,EQ,C',')`.
pub fn split_operands(s: &str) -> Vec<&str> {
    let (mut depth, mut quote, mut start) = (0i32, false, 0);
    let mut out = Vec::new();
    for (i, c) in s.char_indices() {
        match c {
            '\'' => quote = !quote,
            '(' if !quote => depth += 1,
            ')' if !quote => depth -= 1,
            ',' if !quote && depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().filter(|p| !p.is_empty()).collect()
}
pub mod jcl;
mod join_parse;
mod lookup_parse;
mod outfil_parse;
mod reformat_parse;

// ---------------------------------------------------------------------------------------------
// Statements and tokens.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pos {
    line: usize,
    column: usize,
}

#[derive(Debug, Clone, Copy)]
struct Ch {
    b: u8,
    pos: Pos,
}

struct Statement {
    name: String,
    name_pos: Pos,
    operands: Vec<Ch>,
    /// Where "end of input" errors point: just past the last operand character.
    end: Pos,
}

fn line_err(pos: Pos, expected: &str, found: Option<String>) -> ParseError {
    ParseError::new(Location::Line { line: pos.line, column: pos.column }, expected, found)
}

/// Splits the text into statements: name, and operand characters with their positions.
fn split_statements(text: &str) -> Result<Vec<Statement>, ParseError> {
    let mut out: Vec<Statement> = Vec::new();
    let mut continuing = false;
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw).as_bytes();
        let ln = i + 1;
        if line.first() == Some(&b'*') || line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let mut p = line.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(line.len());
        if !continuing {
            let start = p;
            while p < line.len() && !line[p].is_ascii_whitespace() {
                p += 1;
            }
            let name = String::from_utf8_lossy(&line[start..p]).into_owned();
            let name_pos = Pos { line: ln, column: start + 1 };
            while p < line.len() && line[p].is_ascii_whitespace() {
                p += 1;
            }
            out.push(Statement { name, name_pos, operands: Vec::new(), end: name_pos });
        }
        let st = out.last_mut().expect("a statement was started above");
        let mut quote = false;
        while p < line.len() && (quote || !line[p].is_ascii_whitespace()) {
            if line[p] == b'\'' {
                quote = !quote;
            }
            st.operands.push(Ch { b: line[p], pos: Pos { line: ln, column: p + 1 } });
            p += 1;
        }
        if quote {
            return Err(line_err(
                Pos { line: ln, column: p + 1 },
                "expected ' to end the constant",
                None,
            ));
        }
        st.end = Pos { line: ln, column: p + 1 };
        let depth: i64 = st
            .operands
            .iter()
            .scan(false, |q, c| {
                if c.b == b'\'' {
                    *q = !*q;
                }
                Some(if *q { 0 } else { (c.b == b'(') as i64 - (c.b == b')') as i64 })
            })
            .sum();
        continuing = st.operands.last().is_some_and(|c| c.b == b',') || depth > 0;
    }
    Ok(out)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    Num(String),
    Chars(Vec<u8>),
    Hex(Vec<u8>),
    LParen,
    RParen,
    Comma,
    Equals,
    Dot,
    Bad(char),
}

struct Token {
    tok: Tok,
    text: String,
    pos: Pos,
}

fn lex(chars: &[Ch]) -> Result<Vec<Token>, ParseError> {
    let mut out = Vec::new();
    let mut i = 0;
    let text = |a: usize, b: usize| {
        String::from_utf8_lossy(&chars[a..b].iter().map(|c| c.b).collect::<Vec<_>>()).into_owned()
    };
    while i < chars.len() {
        let start = i;
        let c = chars[i].b;
        let pos = chars[i].pos;
        // `'text'` (the report items of OUTFIL) is a character constant as `C'text'` is.
        let bare = c == b'\'';
        let tok = if bare
            || ((c == b'C' || c == b'c' || c == b'X' || c == b'x')
                && chars.get(i + 1).is_some_and(|n| n.b == b'\''))
        {
            let hex = c == b'X' || c == b'x';
            i += if bare { 1 } else { 2 };
            let mut bytes = Vec::new();
            loop {
                match chars.get(i) {
                    None => {
                        let end = chars.last().map_or(pos, |c| c.pos);
                        return Err(line_err(end, "expected ' to end the constant", None));
                    }
                    Some(ch) if ch.b == b'\'' => {
                        if chars.get(i + 1).is_some_and(|n| n.b == b'\'') {
                            bytes.push(b'\'');
                            i += 2;
                        } else {
                            i += 1;
                            break;
                        }
                    }
                    Some(ch) => {
                        bytes.push(ch.b);
                        i += 1;
                    }
                }
            }
            if hex {
                let digits = &chars[start + 2..i - 1];
                if let Some(bad) = digits.iter().find(|c| !c.b.is_ascii_hexdigit()) {
                    return Err(line_err(
                        bad.pos,
                        "expected a hexadecimal digit",
                        Some((bad.b as char).to_string()),
                    ));
                }
                if digits.len() % 2 == 1 {
                    return Err(line_err(
                        pos,
                        "a X'...' constant needs an even number of hex digits",
                        Some(text(start, i)),
                    ));
                }
                let hexval = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
                Tok::Hex(digits.chunks(2).map(|p| hexval(p[0].b) << 4 | hexval(p[1].b)).collect())
            } else {
                Tok::Chars(bytes)
            }
        } else if c.is_ascii_alphabetic() {
            while i < chars.len() && chars[i].b.is_ascii_alphanumeric() {
                i += 1;
            }
            Tok::Word(text(start, i).to_ascii_uppercase())
        } else if c.is_ascii_digit()
            || ((c == b'+' || c == b'-') && chars.get(i + 1).is_some_and(|n| n.b.is_ascii_digit()))
        {
            i += 1;
            while i < chars.len() && chars[i].b.is_ascii_digit() {
                i += 1;
            }
            Tok::Num(text(start, i))
        } else {
            i += 1;
            match c {
                b'(' => Tok::LParen,
                b')' => Tok::RParen,
                b',' => Tok::Comma,
                b'=' => Tok::Equals,
                b'.' => Tok::Dot,
                b'&' => Tok::Word("AND".into()),
                b'|' => Tok::Word("OR".into()),
                _ => Tok::Bad(c as char),
            }
        };
        out.push(Token { tok, text: text(start, i), pos });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// The parser.

enum SortFields {
    Copy,
    Key(Vec<KeyField>, Vec<Pos>),
}

struct SortOperands {
    fields: SortFields,
    equals: Option<bool>,
}

/// A SUM field before `FORMAT=` is known: position, length, format, and where the position
/// and the length are.
type RawSum = (usize, usize, Option<SumKind>, Pos, Pos);

/// An `OPTION` operand: its word, where it is, and its value's text and place (`WORD=value`).
type OptionWord = (String, Pos, Option<(String, Pos)>);

/// A `p,l[,f],o` entry before `FORMAT=` is known.
struct RawField {
    offset: usize,
    len: usize,
    len_pos: Pos,
    kind: Option<FieldType>,
    descending: bool,
}

impl RawField {
    fn resolve(
        &self,
        format: Option<FieldType>,
        pos: Pos,
        p: &Parser<'_>,
    ) -> Result<KeyField, ParseError> {
        let Some(kind) = self.kind.or(format) else {
            return Err(p.err_at(
                pos,
                "this field has no format: write p,l,f,o or add FORMAT=f",
                &p.pos_text(pos),
            ));
        };
        check_len(kind, self.len, self.len_pos)?;
        Ok(KeyField::bytes(self.offset, self.len, kind, self.descending))
    }
}

fn check_len(kind: FieldType, len: usize, pos: Pos) -> Result<(), ParseError> {
    kind.allowed_lengths(len).map_err(|allowed| {
        line_err(
            pos,
            &format!("length of a {} field must be {allowed}", kind.name()),
            Some(len.to_string()),
        )
    })
}

struct Parser<'s> {
    st: &'s Statement,
    tokens: Vec<Token>,
    lex_error: Option<ParseError>,
    i: usize,
    /// The `%nn` fields of the statement's `PARSE=`: number, offset among the parsed fields,
    /// `FIXLEN`.
    parsed: Vec<(usize, usize, usize)>,
}

const FORMATS: &str =
    "CH, AC, AQ, BI, FI, PD, ZD, FL, CSF, FS, CSL, CST, CLO, UFF, SFF, LU, LI, LF";

impl<'s> Parser<'s> {
    fn new(st: &'s Statement) -> Parser<'s> {
        let (tokens, lex_error) = match lex(&st.operands) {
            Ok(t) => (t, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        Parser { st, tokens, lex_error, i: 0, parsed: Vec::new() }
    }

    fn tokens_check(&mut self) -> Result<(), ParseError> {
        match self.lex_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn err_at(&self, pos: Pos, expected: &str, found: &str) -> ParseError {
        line_err(pos, expected, Some(found.to_string()))
    }

    fn pos_text(&self, pos: Pos) -> String {
        self.tokens.iter().find(|t| t.pos == pos).map_or_else(String::new, |t| t.text.clone())
    }

    /// An error at the current token, or at the end of the statement.
    fn err(&self, expected: &str) -> ParseError {
        match self.tokens.get(self.i) {
            Some(t) => line_err(t.pos, expected, Some(t.text.clone())),
            None => line_err(self.st.end, expected, None),
        }
    }

    /// After an element of a parenthesized list: `,` (false: another follows) or `)` (true: the
    /// list ended); anything else is an error naming `what` the list holds (or nothing).
    fn list_end(&mut self, what: &str) -> Result<bool, ParseError> {
        match self.peek() {
            Some(Tok::Comma) => self.i += 1,
            Some(Tok::RParen) => {
                self.i += 1;
                return Ok(true);
            }
            _ if what.is_empty() => return Err(self.err("expected ',' or ')'")),
            _ => return Err(self.err(&format!("expected ',' and another {what}, or ')'"))),
        }
        Ok(false)
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.i).map(|t| &t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.tokens.get(self.i + k).map(|t| &t.tok)
    }

    fn peek_is(&self, tok: &Tok) -> bool {
        self.peek() == Some(tok)
    }

    fn pos(&self) -> Pos {
        self.tokens.get(self.i).map_or(self.st.end, |t| t.pos)
    }

    fn next(&mut self) -> Option<&Token> {
        let t = self.tokens.get(self.i);
        self.i += 1;
        t
    }

    fn expect(&mut self, tok: &Tok, expected: &str) -> Result<(), ParseError> {
        if self.peek_is(tok) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(expected))
        }
    }

    fn finish(&self, expected: &str) -> Result<(), ParseError> {
        if self.i < self.tokens.len() {
            Err(self.err(expected))
        } else {
            Ok(())
        }
    }

    fn word(&mut self, expected: &str) -> Result<(String, Pos), ParseError> {
        match self.peek() {
            Some(Tok::Word(w)) => {
                let w = w.clone();
                let pos = self.pos();
                self.i += 1;
                Ok((w, pos))
            }
            _ => Err(self.err(expected)),
        }
    }

    /// A 1-based position (`expected` names it when there is none): 0 is refused.
    fn position(&mut self, expected: &str) -> Result<(usize, Pos), ParseError> {
        let (p, pos) = self.number(expected)?;
        if p == 0 {
            return Err(line_err(pos, "position must be at least 1", Some("0".into())));
        }
        Ok((p, pos))
    }

    fn number(&mut self, expected: &str) -> Result<(usize, Pos), ParseError> {
        let pos = self.pos();
        match self.peek() {
            Some(Tok::Num(n)) if !n.starts_with(['+', '-']) => {
                let v = n.parse::<usize>().map_err(|_| self.err("number too large"))?;
                self.i += 1;
                if self.peek_is(&Tok::Dot) {
                    return Err(self.err("bit positions (p.b) are not supported: expected ','"));
                }
                Ok((v, pos))
            }
            _ => Err(self.err(expected)),
        }
    }

    fn format(&mut self) -> Result<FieldType, ParseError> {
        let (w, pos) = self.word(&format!("expected a format ({FORMATS})"))?;
        FieldType::from_dfsort(&w)
            .ok_or_else(|| self.err_at(pos, &format!("expected a format ({FORMATS})"), &w))
    }

    fn sort_operands(&mut self) -> Result<SortOperands, ParseError> {
        self.tokens_check()?;
        let mut fields = None;
        let mut format = None;
        let mut equals = None;
        loop {
            let (kw, kw_pos) = self.word("expected FIELDS=, FORMAT=, EQUALS or NOEQUALS")?;
            match kw.as_str() {
                "FIELDS" => {
                    self.expect(&Tok::Equals, "expected '=' after FIELDS")?;
                    if let Some(Tok::Word(w)) = self.peek() {
                        if w == "COPY" {
                            self.i += 1;
                            fields = Some(None);
                        } else {
                            return Err(self.err("expected '(' or COPY after FIELDS="));
                        }
                    } else {
                        self.expect(&Tok::LParen, "expected '(' or COPY after FIELDS=")?;
                        let list = self.field_list()?;
                        self.expect(&Tok::RParen, "expected ',' or ')' after the order")?;
                        fields = Some(Some(list));
                    }
                }
                "FORMAT" => {
                    self.expect(&Tok::Equals, "expected '=' after FORMAT")?;
                    format = Some(self.format()?);
                }
                "EQUALS" => equals = Some(true),
                "NOEQUALS" => equals = Some(false),
                _ => {
                    return Err(self.err_at(
                        kw_pos,
                        "expected FIELDS=, FORMAT=, EQUALS or NOEQUALS",
                        &kw,
                    ))
                }
            }
            if self.peek().is_none() {
                break;
            }
            self.expect(&Tok::Comma, "expected ',' between operands")?;
        }
        let fields = match fields {
            None => {
                return Err(line_err(
                    self.st.name_pos,
                    "expected FIELDS= in this statement",
                    Some(self.st.name.clone()),
                ))
            }
            Some(None) => SortFields::Copy,
            Some(Some(raw)) => {
                let mut out = Vec::new();
                let mut positions = Vec::new();
                for (f, pos) in raw {
                    out.push(f.resolve(format, pos, self)?);
                    positions.push(pos);
                }
                SortFields::Key(out, positions)
            }
        };
        Ok(SortOperands { fields, equals })
    }

    /// `p,l[,f],o,...` up to (not including) `)` or the end.
    fn field_list(&mut self) -> Result<Vec<(RawField, Pos)>, ParseError> {
        let mut list = Vec::new();
        loop {
            let (p, pos) = self.position("expected a field position (1-based number)")?;
            self.expect(&Tok::Comma, "expected ',' after the position")?;
            let (len, len_pos) = self.number("expected a field length")?;
            if len == 0 {
                return Err(line_err(len_pos, "length must be at least 1", Some("0".into())));
            }
            self.expect(&Tok::Comma, "expected ',' after the length")?;
            let (w, wpos) =
                self.word(&format!("expected a format ({FORMATS}) or an order (A or D)"))?;
            let (kind, order, order_pos) = if w == "A" || w == "D" {
                (None, w, wpos)
            } else if let Some(kind) = FieldType::from_dfsort(&w) {
                self.expect(&Tok::Comma, "expected ',' after the format")?;
                let (o, opos) = match self.peek() {
                    Some(Tok::Word(_)) => self.word("")?,
                    _ => return Err(self.err("order must be A or D")),
                };
                (Some(kind), o, opos)
            } else {
                return Err(self.err_at(
                    wpos,
                    &format!("expected a format ({FORMATS}) or an order (A or D)"),
                    &w,
                ));
            };
            let descending = match order.as_str() {
                "A" => false,
                "D" => true,
                _ => return Err(self.err_at(order_pos, "order must be A or D", &order)),
            };
            list.push((RawField { offset: p - 1, len, len_pos, kind, descending }, pos));
            if self.peek_is(&Tok::Comma) {
                self.i += 1;
            } else {
                return Ok(list);
            }
        }
    }

    /// `FIELDS=NONE` (`None`) or `FIELDS=(p,m,f,...)` with an optional `FORMAT=f`, and where
    /// `XSUM` is when it is given.
    fn sum_operands(&mut self) -> Result<(Option<Vec<SumField>>, Option<Pos>), ParseError> {
        self.tokens_check()?;
        let mut fields: Option<Option<Vec<RawSum>>> = None;
        let mut format = None;
        let mut xsum = None;
        loop {
            let (kw, pos) = self.word("expected FIELDS=, FORMAT= or XSUM")?;
            if kw == "XSUM" && !self.peek_is(&Tok::Equals) {
                xsum = Some(pos);
                if self.peek().is_none() {
                    break;
                }
                self.expect(&Tok::Comma, "expected ',' between operands")?;
                continue;
            }
            if !matches!(kw.as_str(), "FIELDS" | "FORMAT") {
                return Err(self.err_at(pos, "expected FIELDS=, FORMAT= or XSUM", &kw));
            }
            self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
            match kw.as_str() {
                "FIELDS" => {
                    let paren = self.peek_is(&Tok::LParen);
                    if paren {
                        self.i += 1;
                    }
                    if matches!(self.peek(), Some(Tok::Word(w)) if w == "NONE") {
                        self.i += 1;
                        fields = Some(None);
                    } else {
                        if !paren {
                            return Err(self.err("expected NONE or '(' and the fields"));
                        }
                        fields = Some(Some(self.sum_fields()?));
                    }
                    if paren {
                        self.expect(&Tok::RParen, "expected ',' and another field, or ')'")?;
                    }
                }
                "FORMAT" => {
                    let (w, wpos) = self.word("expected BI, FI, PD or ZD")?;
                    format = Some(SumKind::from_dfsort(&w).ok_or_else(|| {
                        self.err_at(wpos, "SUM formats are BI, FI, PD and ZD", &w)
                    })?);
                }
                _ => return Err(self.err_at(pos, "expected FIELDS=, FORMAT= or XSUM", &kw)),
            }
            if self.peek().is_none() {
                break;
            }
            self.expect(&Tok::Comma, "expected ',' between operands")?;
        }
        let Some(fields) = fields else {
            return Err(line_err(
                self.st.name_pos,
                "expected FIELDS= in this statement",
                Some(self.st.name.clone()),
            ));
        };
        let Some(raw) = fields else { return Ok((None, xsum)) };
        let mut out = Vec::new();
        for (p, len, kind, pos, len_pos) in raw {
            let Some(kind) = kind.or(format) else {
                return Err(line_err(
                    pos,
                    "this field has no format: write p,m,f or add FORMAT=f",
                    Some(p.to_string()),
                ));
            };
            kind.allowed_lengths(len).map_err(|allowed| {
                line_err(
                    len_pos,
                    &format!("length of a {} field in SUM must be {allowed}", kind.name()),
                    Some(len.to_string()),
                )
            })?;
            out.push(SumField { offset: p - 1, len, kind });
        }
        Ok((Some(out), xsum))
    }

    /// `p,m[,f],...` of SUM, up to `)`.
    fn sum_fields(&mut self) -> Result<Vec<RawSum>, ParseError> {
        let mut out = Vec::new();
        loop {
            let (p, pos) = self.position("expected a field position")?;
            self.expect(&Tok::Comma, "expected ',' after the position")?;
            let (len, len_pos) = self.number("expected a field length")?;
            let mut kind = None;
            if let (Some(Tok::Comma), Some(Tok::Word(w))) = (self.peek(), self.peek_at(1)) {
                let w = w.clone();
                self.i += 1;
                let wpos = self.pos();
                kind =
                    Some(SumKind::from_dfsort(&w).ok_or_else(|| {
                        self.err_at(wpos, "SUM formats are BI, FI, PD and ZD", &w)
                    })?);
                self.i += 1;
            }
            out.push((p, len, kind, pos, len_pos));
            if self.peek_is(&Tok::Comma) {
                self.i += 1;
            } else {
                return Ok(out);
            }
        }
    }

    /// Options: words, and `WORD=value` ones; each with its value's text (a word, a number
    /// with an optional K/M/G unit, or a parenthesized group) and where it is.
    fn option_operands(&mut self) -> Result<Vec<OptionWord>, ParseError> {
        self.tokens_check()?;
        let mut out = Vec::new();
        loop {
            let (w, pos) =
                self.word("expected an option (EQUALS, NOEQUALS, COPY, VLSHRT, NOVLSHRT)")?;
            let mut value = None;
            if self.peek_is(&Tok::Equals) {
                self.i += 1;
                let vpos = self.pos();
                let mut text = String::new();
                match self.peek() {
                    Some(Tok::LParen) => {
                        let mut depth = 0usize;
                        while let Some(t) = self.tokens.get(self.i) {
                            match t.tok {
                                Tok::LParen => depth += 1,
                                Tok::RParen => depth -= 1,
                                _ => {}
                            }
                            text.push_str(&t.text);
                            self.i += 1;
                            if depth == 0 {
                                break;
                            }
                        }
                    }
                    Some(Tok::Num(_)) => {
                        text = self.tokens[self.i].text.clone();
                        self.i += 1;
                        // A unit right after the digits: `MAINSIZE=64M`.
                        if let Some(Tok::Word(u)) = self.peek() {
                            if matches!(u.as_str(), "K" | "M" | "G") {
                                text.push_str(u);
                                self.i += 1;
                            }
                        }
                    }
                    Some(_) => {
                        text = self.tokens[self.i].text.to_ascii_uppercase();
                        self.i += 1;
                    }
                    None => return Err(self.err(&format!("expected a value after {w}="))),
                }
                value = Some((text, vpos));
            }
            out.push((w, pos, value));
            if self.peek().is_none() {
                return Ok(out);
            }
            self.expect(&Tok::Comma, "expected ',' between options")?;
        }
    }

    fn record_operands(&mut self) -> Result<(RecordLayout, Pos), ParseError> {
        self.tokens_check()?;
        let mut typ: Option<(bool, Pos)> = None;
        let mut length = None;
        loop {
            let (kw, pos) = self.word("expected TYPE= or LENGTH=")?;
            self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
            match kw.as_str() {
                "TYPE" => {
                    let (t, tpos) = self.word("expected TYPE=F or TYPE=V")?;
                    let variable = match t.as_str() {
                        "F" => false,
                        "V" | "VB" => true,
                        _ => {
                            return Err(self.err_at(
                                tpos,
                                "expected TYPE=F (fixed) or TYPE=V (RDW-prefixed variable \
                                 records; text lines are not a RECORD type)",
                                &t,
                            ))
                        }
                    };
                    typ = Some((variable, tpos));
                }
                "LENGTH" => {
                    // LENGTH=n or LENGTH=(l1,l2,...): l1 is the (longest) input record's
                    // length; the others (output, minimum, average lengths) are hints.
                    let paren = self.peek_is(&Tok::LParen);
                    if paren {
                        self.i += 1;
                    }
                    let (n, npos) = self.number("expected the record length")?;
                    if !(1..=MAX_RECORD_SIZE).contains(&n) {
                        return Err(line_err(
                            npos,
                            &format!("record length must be 1 to {MAX_RECORD_SIZE}"),
                            Some(n.to_string()),
                        ));
                    }
                    if paren {
                        while self.peek_is(&Tok::Comma) {
                            self.i += 1;
                            if !self.peek_is(&Tok::Comma) && !self.peek_is(&Tok::RParen) {
                                self.number("expected a length")?;
                            }
                        }
                        self.expect(&Tok::RParen, "expected ')' after the lengths")?;
                    }
                    length = Some((n, npos));
                }
                _ => return Err(self.err_at(pos, "expected TYPE= or LENGTH=", &kw)),
            }
            if self.peek().is_none() {
                break;
            }
            self.expect(&Tok::Comma, "expected ',' between operands")?;
        }
        let Some((variable, tpos)) = typ else {
            return Err(line_err(
                self.st.name_pos,
                "expected TYPE=F or TYPE=V in this statement",
                Some(self.st.name.clone()),
            ));
        };
        if variable {
            return match length {
                None => Ok((RecordLayout::VARIABLE, tpos)),
                Some((n, npos)) => match RecordLayout::variable(n) {
                    Ok(layout) => Ok((layout, npos)),
                    Err(_) => Err(line_err(
                        npos,
                        &format!(
                            "the longest variable record (RDW included) must be 4 to \
                             {MAX_RECORD_SIZE} bytes"
                        ),
                        Some(n.to_string()),
                    )),
                },
            };
        }
        let Some((n, npos)) = length else {
            return Err(line_err(
                self.st.name_pos,
                "expected LENGTH=n in this statement",
                Some(self.st.name.clone()),
            ));
        };
        Ok((RecordLayout::Fixed(n), npos))
    }

    /// The value of an operand `INCLUDE=`/`OMIT=` (the `=` already read): `(logical
    /// expression)`, `ALL` or `NONE`; returns the filter and the last byte its fields reach.
    fn filter_operand(&mut self, kw: &str) -> Result<(Filter, usize), ParseError> {
        let mut c = CondParser { p: self, format: None, checks: Vec::new(), count: 0 };
        let condition = match c.p.peek().cloned() {
            Some(Tok::Word(w)) if w == "ALL" => {
                c.p.i += 1;
                Condition::All
            }
            Some(Tok::Word(w)) if w == "NONE" => {
                c.p.i += 1;
                Condition::Nothing
            }
            _ => {
                c.p.expect(&Tok::LParen, &format!("expected '(', ALL or NONE after {kw}="))?;
                let cond = c.or_expr()?;
                c.p.expect(&Tok::RParen, "expected ',' and AND or OR, or ')'")?;
                cond
            }
        };
        let end = c.checks.iter().map(|&(_, e)| e).max().unwrap_or(0);
        Ok((Filter { omit: kw == "OMIT", condition, short_fields: ShortFields::Error }, end))
    }

    /// `COND=(...)` and `FORMAT=f`; returns the condition and (position, end byte) of each
    /// field for the record-length check.
    fn cond_operands(&mut self) -> Result<(Condition, Vec<(Pos, usize)>), ParseError> {
        self.tokens_check()?;
        let mut cond_start = None;
        let mut format = None;
        loop {
            let (kw, pos) = self.word("expected COND= or FORMAT=")?;
            self.expect(&Tok::Equals, &format!("expected '=' after {kw}"))?;
            match kw.as_str() {
                "COND" => {
                    let start = self.i;
                    self.skip_group()?;
                    cond_start = Some((start, self.i));
                }
                "FORMAT" => format = Some(self.format()?),
                _ => return Err(self.err_at(pos, "expected COND= or FORMAT=", &kw)),
            }
            if self.peek().is_none() {
                break;
            }
            self.expect(&Tok::Comma, "expected ',' between operands")?;
        }
        let Some((start, cond_end)) = cond_start else {
            return Err(line_err(
                self.st.name_pos,
                "expected COND= in this statement",
                Some(self.st.name.clone()),
            ));
        };
        let end = self.i;
        self.i = start;
        let mut c = CondParser { p: self, format, checks: Vec::new(), count: 0 };
        let cond = match c.p.peek() {
            Some(Tok::Word(w)) if w == "ALL" => {
                c.p.i += 1;
                Condition::All
            }
            Some(Tok::Word(w)) if w == "NONE" => {
                c.p.i += 1;
                Condition::Nothing
            }
            _ => {
                c.p.expect(&Tok::LParen, "expected '(' after COND=")?;
                let cond = c.or_expr()?;
                c.p.expect(&Tok::RParen, "expected ',' and AND or OR, or ')'")?;
                cond
            }
        };
        let checks = c.checks;
        if self.i != cond_end {
            return Err(self.err("expected ',' and AND or OR, or the end of COND="));
        }
        self.i = end;
        Ok((cond, checks))
    }

    /// Skips a word or a balanced parenthesized group.
    fn skip_group(&mut self) -> Result<(), ParseError> {
        if !self.peek_is(&Tok::LParen) {
            self.word("expected '(' after COND=")?;
            return Ok(());
        }
        let mut depth = 0usize;
        while let Some(t) = self.peek() {
            match t {
                Tok::LParen => depth += 1,
                Tok::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        self.i += 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
        Err(self.err("expected ')' to close COND=("))
    }
}

struct CondParser<'p, 's> {
    p: &'p mut Parser<'s>,
    format: Option<FieldType>,
    checks: Vec<(Pos, usize)>,
    count: usize,
}

impl CondParser<'_, '_> {
    /// Whether the next tokens are `, WORD` with WORD one of `words`.
    fn connective(&self, words: &[&str]) -> bool {
        matches!(
            (self.p.peek(), self.p.peek_at(1)),
            (Some(Tok::Comma), Some(Tok::Word(w))) if words.contains(&w.as_str())
        )
    }

    fn or_expr(&mut self) -> Result<Condition, ParseError> {
        let mut left = self.and_expr()?;
        while self.connective(&["OR"]) {
            self.p.i += 2;
            self.p.expect(&Tok::Comma, "expected ',' after OR")?;
            let right = self.and_expr()?;
            left = Condition::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and_expr(&mut self) -> Result<Condition, ParseError> {
        let mut left = self.primary()?;
        while self.connective(&["AND"]) {
            self.p.i += 2;
            self.p.expect(&Tok::Comma, "expected ',' after AND")?;
            let right = self.primary()?;
            left = Condition::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn primary(&mut self) -> Result<Condition, ParseError> {
        if self.p.peek_is(&Tok::LParen) {
            self.p.i += 1;
            let c = self.or_expr()?;
            self.p.expect(&Tok::RParen, "expected ',' and AND or OR, or ')'")?;
            return Ok(c);
        }
        self.comparison()
    }

    /// `p,l[,f]`; without `f`, `FORMAT=f` or else `default` applies.
    fn field(&mut self, default: Option<FieldType>) -> Result<(FieldRef, Pos), ParseError> {
        let (p, pos) = self.p.position("expected a field position or '('")?;
        self.p.expect(&Tok::Comma, "expected ',' after the position")?;
        let (len, len_pos) = self.p.number("expected a field length")?;
        if len == 0 {
            return Err(line_err(len_pos, "length must be at least 1", Some("0".into())));
        }
        let mut kind = None;
        if let (Some(Tok::Comma), Some(Tok::Word(w))) = (self.p.peek(), self.p.peek_at(1)) {
            if let Some(k) = FieldType::from_dfsort(w) {
                kind = Some(k);
                self.p.i += 2;
            }
        }
        let kind = match kind.or(self.format).or(default) {
            Some(k) => k,
            None => {
                return Err(self.p.err(&format!(
                    "expected ',' and a format ({FORMATS}), or FORMAT=f on the statement"
                )))
            }
        };
        if let FieldType::AltSeq(_) = kind {
            return Err(line_err(
                pos,
                "AQ fields go in SORT and MERGE FIELDS; compare CH fields in conditions",
                Some(p.to_string()),
            ));
        }
        check_len(kind, len, len_pos)?;
        self.checks.push((pos, p - 1 + len));
        Ok((FieldRef { offset: p - 1, len, kind }, pos))
    }

    fn comparison(&mut self) -> Result<Condition, ParseError> {
        if self.p.peek_at(3) == Some(&Tok::Comma)
            && matches!(self.p.peek_at(4), Some(Tok::Word(w)) if w == "SS")
        {
            return self.substring();
        }
        let (left, _) = self.field(None)?;
        self.p.expect(&Tok::Comma, "expected ',' and a comparison operator")?;
        let (w, wpos) = self.p.word("expected a comparison operator (EQ, NE, GT, GE, LT, LE)")?;
        let op = CompareOp::from_name(&w).ok_or_else(|| {
            self.p.err_at(wpos, "expected a comparison operator (EQ, NE, GT, GE, LT, LE)", &w)
        })?;
        self.p.expect(&Tok::Comma, "expected ',' and a constant or a field")?;
        let rpos = self.p.pos();
        let right = match self.p.peek().cloned() {
            Some(Tok::Chars(c)) => {
                self.p.i += 1;
                Operand::Chars(c)
            }
            Some(Tok::Hex(c)) => {
                self.p.i += 1;
                Operand::Hex(c)
            }
            Some(Tok::Num(n)) => {
                let is_field = !n.starts_with(['+', '-'])
                    && self.p.peek_at(1) == Some(&Tok::Comma)
                    && matches!(self.p.peek_at(2), Some(Tok::Num(_)));
                if is_field {
                    let (f, _) = self.field(Some(left.kind))?;
                    if !field_pair_comparable(left.kind, f.kind) {
                        return Err(line_err(
                            rpos,
                            &format!(
                                "a {} field cannot be compared with a {} field",
                                left.kind.name(),
                                f.kind.name()
                            ),
                            Some(n),
                        ));
                    }
                    Operand::Field(f)
                } else {
                    self.p.i += 1;
                    let negative = n.starts_with('-');
                    let digits = n.trim_start_matches(['+', '-']).to_string();
                    if left.kind == FieldType::Char {
                        return Err(line_err(
                            rpos,
                            "a CH field compares with C'...' or X'...' constants, not numbers",
                            Some(n),
                        ));
                    }
                    Operand::number(negative, digits, left.kind)
                }
            }
            Some(Tok::Word(w)) if dates::DateForm::parse(&w).is_some() => {
                self.date_constant(&w, left.kind)?
            }
            _ => {
                return Err(self.p.err(
                    "expected a constant (C'...', X'...', a number, DATE1, DATE2, DATE3, \
                     DATE1P, DATE2P, DATE3P) or a field",
                ))
            }
        };
        self.count += 1;
        Ok(Condition::Compare { index: self.count, left, op, right })
    }

    /// `DATEn[P][(c)][+d|-d]` (see [`dates`]): characters, or a number for the `P` forms.
    fn date_constant(&mut self, word: &str, kind: FieldType) -> Result<Operand, ParseError> {
        let wpos = self.p.pos();
        let (form, packed) = dates::DateForm::parse(word).expect("checked by the caller");
        self.p.i += 1;
        let mut sep = None;
        if !packed && self.p.peek_is(&Tok::LParen) {
            let t = self.p.tokens.get(self.p.i + 1).map(|t| t.text.clone()).unwrap_or_default();
            if t.len() != 1 || self.p.peek_at(2) != Some(&Tok::RParen) {
                return Err(self.p.err("expected (c): one separator character, such as (/)"));
            }
            sep = Some(t.as_bytes()[0]);
            self.p.i += 3;
        }
        let mut n = 0i64;
        if let Some(Tok::Num(v)) = self.p.peek() {
            if v.starts_with(['+', '-']) {
                n = v.parse().map_err(|_| self.p.err("expected a number of days or months"))?;
                if n.abs() > 9999 {
                    return Err(self.p.err("DATEn+d and DATEn-d take at most 9999"));
                }
                self.p.i += 1;
            }
        }
        let text = dates::text(form, dates::today(), n, sep);
        if packed {
            if kind == FieldType::Char {
                return Err(line_err(
                    wpos,
                    "a CH field compares with DATE1, DATE2 or DATE3; DATEnP goes with numeric \
                     fields",
                    Some(word.to_string()),
                ));
            }
            return Ok(Operand::number(false, String::from_utf8_lossy(&text).into_owned(), kind));
        }
        Ok(Operand::Chars(text))
    }

    /// `p,m,SS,EQ|NE,constant`: a substring search. When the field is shorter than the
    /// constant, the field's value is looked for in the constant (so `C'JAN,FEB,MAR'` lists
    /// the values a 3-byte field may have); otherwise the constant is looked for in the field.
    fn substring(&mut self) -> Result<Condition, ParseError> {
        let (p, pos) = self.p.position("expected a field position")?;
        self.p.i += 1;
        let (len, len_pos) = self.p.number("expected a field length")?;
        if len == 0 {
            return Err(line_err(len_pos, "length must be at least 1", Some("0".into())));
        }
        self.p.i += 2;
        self.p.expect(&Tok::Comma, "expected ',' and EQ or NE")?;
        let (w, wpos) = self.p.word("expected EQ or NE (a substring search)")?;
        let op = match w.as_str() {
            "EQ" => CompareOp::Eq,
            "NE" => CompareOp::Ne,
            _ => {
                return Err(self.p.err_at(
                    wpos,
                    "expected EQ or NE: a substring search (SS) is found or not",
                    &w,
                ))
            }
        };
        self.p.expect(&Tok::Comma, "expected ',' and a constant")?;
        let constant = match self.p.peek().cloned() {
            Some(Tok::Chars(c)) | Some(Tok::Hex(c)) if !c.is_empty() => c,
            _ => return Err(self.p.err("expected a constant C'...' or X'...' to search for")),
        };
        self.p.i += 1;
        self.checks.push((pos, p - 1 + len));
        self.count += 1;
        let left = FieldRef { offset: p - 1, len, kind: FieldType::Char };
        Ok(Condition::Compare { index: self.count, left, op, right: Operand::Substring(constant) })
    }
}

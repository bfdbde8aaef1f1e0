//! DFSORT record reformatting (`INREC` and `OUTREC`): a typed model of what the statements
//! say ([`Reformat`]) and its compiled form ([`ReformatProgram`]), applied to one fixed-length
//! record at a time without allocating.
//!
//! ```text
//!  INREC BUILD=(1,4,C'-',11:5,3,2Z)         Build   1,4 | '-' | blanks to col 11 | 5,3 | 00 00
//!  INREC OVERLAY=(20:C'X',1,2)              Overlay the record, with bytes 20 'X' and 21-22
//!                                                   from 1-2 (items apply in order, each seeing
//!                                                   the record as the items before it left it)
//!  INREC FINDREP=(IN=C'A',OUT=C'BB')        FindRep replace every 'A' by 'BB', shifting the rest
//!  INREC IFTHEN=(WHEN=(1,1,CH,EQ,C'A'),     IfThen  the first clause whose condition holds
//!         BUILD=(...)),IFTHEN=(WHEN=NONE,...)        applies (WHEN=INIT ones first, to all;
//!                                                    HIT=NEXT goes on to the next clause)
//!
//!  compiled Build:  out = template (constants, blanks), then one copy per field:
//!                   | tmpl | rec[a..b] | tmpl | rec[c..d] | ...
//! ```
//!
//! `p,m,f,TO=g[,LENGTH=n]` items convert a numeric field (`BI FI PD ZD`) to `ZD`, `PD` or `FS`
//! (see [`crate::ConvTo`]).
//!
//! Lengths are fixed: a `BUILD` gives records of its length; `OVERLAY` keeps the input length
//! or lengthens the record to its last item (blanks in between); `FINDREP` keeps the input
//! length (or `MAXLEN=`), padding with blanks; `IFTHEN` records are padded with blanks or
//! truncated to `IFOUTLEN=`, by default the longest record any clause can make.
//!
//! `FINDREP`: from `STARTPOS` (default 1) the record is searched byte by byte for the `IN`
//! constants (in the order written, the first that matches wins); a match must end at or before
//! `ENDPOS` (default: the record's end). The `OUT` constant replaces it and the search goes on
//! after the replacement; `DO=n` stops after `n` replacements. With `SHIFT=YES` (the default)
//! the bytes after a match move left (blanks fill the end) or right; bytes moved past the
//! record's end must be blanks unless `OVERRUN=TRUNC` (else the record is an error). With
//! `SHIFT=NO` the `OUT` constant overlays the record from the match, padded with blanks to the
//! `IN` constant's length, and nothing moves.

use std::sync::Arc;

use crate::error::{KeyError, SpecError};
use crate::filter::{Condition, Filter};
use crate::spec::ShortFields;
use crate::sum::{convert, ConvTo, SumKind};

/// One item of a `BUILD` or `OVERLAY` list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Item {
    /// `p,m`: bytes of the record (0-based offset).
    Field {
        /// 0-based offset.
        offset: usize,
        /// Length in bytes.
        len: usize,
    },
    /// A constant: `C'..'`, `X'..'`, `nX` (blanks), `nZ` (binary zeros), repeated ones
    /// expanded.
    Const(Vec<u8>),
    /// `p,m,f,TO=g[,LENGTH=n]`: the numeric field converted to another format.
    Convert {
        /// 0-based offset.
        offset: usize,
        /// Length in bytes.
        len: usize,
        /// Its format (`BI`, `FI`, `PD`, `ZD`).
        from: SumKind,
        /// The output format.
        to: ConvTo,
        /// The output length.
        out_len: usize,
    },
}

impl Item {
    /// Bytes the item puts in the output.
    pub fn len(&self) -> usize {
        match self {
            Item::Field { len, .. } => *len,
            Item::Const(c) => c.len(),
            Item::Convert { out_len, .. } => *out_len,
        }
    }

    /// Whether the item puts no bytes in the output (never for parsed items).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An item and the output column it starts at (`c:`; 1-based), if given.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Placed {
    /// `c:` of the item.
    pub column: Option<usize>,
    /// The item.
    pub item: Item,
}

/// `FINDREP=(...)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FindRep {
    /// Find/replace pairs, tried in this order at each position. `IN=(a,b),OUT=c` gives
    /// `(a,c),(b,c)`; `INOUT=(a,b,c,d)` gives `(a,b),(c,d)`.
    pub pairs: Vec<(Vec<u8>, Vec<u8>)>,
    /// `STARTPOS=` (1-based; default 1).
    pub start: usize,
    /// `ENDPOS=` (1-based), or the record's end.
    pub end: Option<usize>,
    /// `DO=`: at most this many replacements per record.
    pub times: Option<usize>,
    /// `SHIFT=YES` (default) or `NO`.
    pub shift: bool,
    /// `MAXLEN=`: the output length (default: the input length).
    pub maxlen: Option<usize>,
    /// `OVERRUN=TRUNC` (default `ERROR`): non-blank bytes shifted past the end are dropped.
    pub truncate: bool,
}

/// What one reformatting step does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Edit {
    /// `BUILD=` / `FIELDS=`: a new record of the items.
    Build(Vec<Placed>),
    /// `OVERLAY=`: the items overlay the record.
    Overlay(Vec<Placed>),
    /// `FINDREP=`.
    FindRep(FindRep),
}

/// When an `IFTHEN` clause applies.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum When {
    /// `WHEN=INIT`: to every record, before the other clauses.
    Init,
    /// `WHEN=(cond)`: to records the condition holds for.
    Cond(Condition),
    /// `WHEN=NONE`: to records no `WHEN=(cond)` clause applied to.
    None,
}

/// One `IFTHEN=(WHEN=...,edit[,HIT=NEXT])` clause.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IfThen {
    /// When it applies.
    pub when: When,
    /// What it does.
    pub edit: Edit,
    /// `HIT=NEXT`: after it applies, the next `WHEN=(cond)` clauses are tried too.
    pub hit_next: bool,
}

/// The parsed operands of an `INREC` or `OUTREC` statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Reformat {
    /// One `BUILD`, `OVERLAY` or `FINDREP`.
    Edit(Edit),
    /// `IFTHEN` clauses, and `IFOUTLEN=`.
    IfThen {
        /// The clauses in order.
        clauses: Vec<IfThen>,
        /// `IFOUTLEN=`: the output length.
        outlen: Option<usize>,
    },
}

/// Which statement a reformatting comes from (for messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// `INREC`: before the sort; keys refer to its records.
    Inrec,
    /// `OUTREC`: the records written.
    Outrec,
    /// `OUTFIL BUILD=/OUTREC=/OVERLAY=/IFTHEN=`: the records of one `OUTFIL` group.
    Outfil,
}

impl Stage {
    /// `INREC` or `OUTREC`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Inrec => "INREC",
            Stage::Outrec => "OUTREC",
            Stage::Outfil => "OUTFIL",
        }
    }
}

/// A compiled step with its static output length.
#[derive(Debug, Clone)]
enum Step {
    /// `out = template; out[dst..dst+len] = rec[src..src+len]` for each copy, then each
    /// conversion (item number, item, destination).
    Build {
        template: Vec<u8>,
        copies: Vec<(usize, usize, usize)>,
        converts: Vec<(usize, Item, usize)>,
    },
    /// Applied in order to the record lengthened (blanks) to `len`.
    Overlay {
        ops: Vec<(usize, Item)>,
        len: usize,
    },
    FindRep(FindRep),
}

#[derive(Debug, Clone)]
enum Program {
    Single(Step),
    IfThen(Vec<(WhenC, Step, bool)>),
}

#[derive(Debug, Clone)]
enum WhenC {
    Init,
    Cond(Filter),
    None,
}

/// A [`Reformat`] compiled for records of one input length: [`ReformatProgram::apply`] turns
/// each into a record of [`ReformatProgram::out_len`] bytes.
#[derive(Debug, Clone)]
pub struct ReformatProgram {
    stage: Stage,
    in_len: usize,
    out_len: usize,
    program: Program,
}

/// Reusable room for the steps that cannot write straight into the output record.
#[derive(Debug, Default)]
pub struct Scratch {
    a: Vec<u8>,
    b: Vec<u8>,
}

impl Reformat {
    /// Checks the statement against `in_len`-byte input records and compiles it.
    pub fn compile(&self, stage: Stage, in_len: usize) -> Result<Arc<ReformatProgram>, SpecError> {
        let (program, out_len) = match self {
            Reformat::Edit(e) => {
                let (step, len) = compile_step(stage, e, in_len)?;
                (Program::Single(step), len)
            }
            Reformat::IfThen { clauses, outlen } => {
                // Lengths a record can have on entering each clause: the INIT clauses change
                // every record; the others start from what INIT left.
                let mut through = in_len;
                let mut longest = 0usize;
                let mut compiled = Vec::new();
                let mut has_none = false;
                for c in clauses {
                    let from =
                        if matches!(c.when, When::Init) { through } else { through.max(longest) };
                    let (step, len) = compile_step(stage, &c.edit, from)?;
                    let when = match &c.when {
                        When::Init => {
                            through = len;
                            WhenC::Init
                        }
                        When::Cond(cond) => {
                            longest = longest.max(len);
                            WhenC::Cond(Filter {
                                omit: false,
                                condition: cond.clone(),
                                short_fields: ShortFields::Error,
                            })
                        }
                        When::None => {
                            has_none = true;
                            longest = longest.max(len);
                            WhenC::None
                        }
                    };
                    compiled.push((when, step, c.hit_next));
                }
                if !has_none {
                    // A record no clause applies to keeps its length.
                    longest = longest.max(through);
                }
                (Program::IfThen(compiled), outlen.unwrap_or(longest))
            }
        };
        if out_len == 0 || out_len > crate::MAX_RECORD_SIZE {
            return Err(SpecError::ReformatLength { statement: stage.name(), len: out_len });
        }
        Ok(Arc::new(ReformatProgram { stage, in_len, out_len, program }))
    }
}

fn compile_step(stage: Stage, edit: &Edit, in_len: usize) -> Result<(Step, usize), SpecError> {
    let past = |item: usize, end: usize| SpecError::ReformatPastRecord {
        statement: stage.name(),
        item,
        end,
        record_len: in_len,
    };
    match edit {
        Edit::Build(items) => {
            let mut template = Vec::new();
            let mut copies = Vec::new();
            let mut converts = Vec::new();
            for (i, p) in items.iter().enumerate() {
                if let Some(c) = p.column {
                    // Checked by the parser: a column never moves back.
                    template.resize((c - 1).max(template.len()), b' ');
                }
                let dst = template.len();
                match &p.item {
                    Item::Field { offset, len } => {
                        if offset + len > in_len {
                            return Err(past(i + 1, offset + len));
                        }
                        template.resize(dst + len, b' ');
                        copies.push((*offset, dst, *len));
                    }
                    Item::Const(c) => template.extend_from_slice(c),
                    Item::Convert { offset, len, out_len, .. } => {
                        if offset + len > in_len {
                            return Err(past(i + 1, offset + len));
                        }
                        template.resize(dst + out_len, b' ');
                        converts.push((i + 1, p.item.clone(), dst));
                    }
                }
            }
            let len = template.len();
            Ok((Step::Build { template, copies, converts }, len))
        }
        Edit::Overlay(items) => {
            let mut at = 0usize;
            let mut len = in_len;
            let mut ops = Vec::new();
            for (i, p) in items.iter().enumerate() {
                if let Some(c) = p.column {
                    at = c - 1;
                }
                if let Item::Field { offset, len: flen } | Item::Convert { offset, len: flen, .. } =
                    &p.item
                {
                    // A field may read what earlier items lengthened the record with.
                    if offset + flen > len {
                        return Err(past(i + 1, offset + flen));
                    }
                }
                ops.push((at, p.item.clone()));
                at += p.item.len();
                len = len.max(at);
            }
            Ok((Step::Overlay { ops, len }, len))
        }
        Edit::FindRep(f) => Ok((Step::FindRep(f.clone()), f.maxlen.unwrap_or(in_len))),
    }
}

impl ReformatProgram {
    /// Input record length it was compiled for.
    pub fn in_len(&self) -> usize {
        self.in_len
    }

    /// Output record length.
    pub fn out_len(&self) -> usize {
        self.out_len
    }

    /// `INREC` or `OUTREC`.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// Reformats `rec` (of [`ReformatProgram::in_len`] bytes) into `out` (of
    /// [`ReformatProgram::out_len`] bytes). Errors are records the statement cannot reshape
    /// (invalid decimal data in a condition, a `FINDREP` overrun).
    pub fn apply(&self, rec: &[u8], out: &mut [u8], scratch: &mut Scratch) -> Result<(), KeyError> {
        debug_assert_eq!(out.len(), self.out_len);
        match &self.program {
            Program::Single(Step::Build { template, copies, converts }) => {
                out.copy_from_slice(template);
                for &(src, dst, len) in copies {
                    out[dst..dst + len].copy_from_slice(&rec[src..src + len]);
                }
                for (index, item, dst) in converts {
                    convert_into(item, rec, out, *dst, *index)?;
                }
                Ok(())
            }
            Program::Single(Step::Overlay { ops, len }) => {
                debug_assert_eq!(*len, out.len());
                out[..rec.len()].copy_from_slice(rec);
                out[rec.len()..].fill(b' ');
                overlay(out, ops)
            }
            Program::Single(step) => {
                let Scratch { a, b } = scratch;
                a.clear();
                a.extend_from_slice(rec);
                self.run(step, a, b)?;
                finish(a, out);
                Ok(())
            }
            Program::IfThen(clauses) => {
                let Scratch { a, b } = scratch;
                a.clear();
                a.extend_from_slice(rec);
                let mut hit = false;
                let mut stopped = false;
                for (when, step, hit_next) in clauses {
                    let applies = match when {
                        WhenC::Init => true,
                        WhenC::Cond(f) => {
                            !stopped && f.matches(a).map_err(|e| self.when_error(e, a.len()))?
                        }
                        WhenC::None => !hit,
                    };
                    if !applies {
                        continue;
                    }
                    self.run(step, a, b)?;
                    if let WhenC::Cond(_) = when {
                        hit = true;
                        stopped = !hit_next;
                    }
                }
                finish(a, out);
                Ok(())
            }
        }
    }

    fn when_error(&self, e: KeyError, len: usize) -> KeyError {
        match e {
            KeyError::ShortRecord { start, end, .. } => {
                KeyError::ReformatShort { statement: self.stage.name(), start, end, len }
            }
            other => other,
        }
    }

    /// Applies one step to the record in `cur` (of any length), `spare` as room.
    fn run(&self, step: &Step, cur: &mut Vec<u8>, spare: &mut Vec<u8>) -> Result<(), KeyError> {
        let short = |start: usize, end: usize, len: usize| KeyError::ReformatShort {
            statement: self.stage.name(),
            start,
            end,
            len,
        };
        match step {
            Step::Build { template, copies, converts } => {
                spare.clear();
                spare.extend_from_slice(template);
                for &(src, dst, len) in copies {
                    let Some(from) = cur.get(src..src + len) else {
                        return Err(short(src + 1, src + len, cur.len()));
                    };
                    spare[dst..dst + len].copy_from_slice(from);
                }
                for (index, item, dst) in converts {
                    if let Item::Convert { offset, len, .. } = item {
                        if offset + len > cur.len() {
                            return Err(short(offset + 1, offset + len, cur.len()));
                        }
                    }
                    convert_into(item, cur, spare, *dst, *index)?;
                }
                std::mem::swap(cur, spare);
            }
            Step::Overlay { ops, .. } => {
                let need = ops.iter().map(|(at, i)| at + i.len()).max().unwrap_or(0);
                if cur.len() < need {
                    cur.resize(need, b' ');
                }
                for (i, (at, item)) in ops.iter().enumerate() {
                    if let Item::Field { offset, len } | Item::Convert { offset, len, .. } = item {
                        if offset + len > cur.len() {
                            return Err(short(offset + 1, offset + len, cur.len()));
                        }
                    }
                    overlay_one(cur, *at, item, i + 1)?;
                }
            }
            Step::FindRep(f) => {
                findrep(f, cur, spare)
                    .map_err(|()| KeyError::FindRepOverrun { statement: self.stage.name() })?;
                std::mem::swap(cur, spare);
            }
        }
        Ok(())
    }
}

fn overlay(out: &mut [u8], ops: &[(usize, Item)]) -> Result<(), KeyError> {
    for (i, (at, item)) in ops.iter().enumerate() {
        overlay_one(out, *at, item, i + 1)?;
    }
    Ok(())
}

fn overlay_one(out: &mut [u8], at: usize, item: &Item, index: usize) -> Result<(), KeyError> {
    match item {
        Item::Field { offset, len } => out.copy_within(*offset..offset + len, at),
        Item::Const(c) => out[at..at + c.len()].copy_from_slice(c),
        Item::Convert { offset, len, .. } => {
            // The source may overlap the destination: read it first (at most 31 bytes).
            let mut src = [0u8; 32];
            src[..*len].copy_from_slice(&out[*offset..offset + len]);
            convert_field(item, &src[..*len], out, at, index)?;
        }
    }
    Ok(())
}

/// Writes a conversion item at `dst` of `out`, reading its field from the record `rec`.
fn convert_into(
    item: &Item,
    rec: &[u8],
    out: &mut [u8],
    dst: usize,
    index: usize,
) -> Result<(), KeyError> {
    if let Item::Convert { offset, len, .. } = item {
        convert_field(item, &rec[*offset..offset + len], out, dst, index)?;
    }
    Ok(())
}

/// Writes a conversion item at `dst` of `out` from its field's bytes `src`.
fn convert_field(
    item: &Item,
    src: &[u8],
    out: &mut [u8],
    dst: usize,
    index: usize,
) -> Result<(), KeyError> {
    if let Item::Convert { offset, from, to, out_len, .. } = item {
        convert(*from, src, *to, &mut out[dst..dst + out_len], index, offset + 1)?;
    }
    Ok(())
}

/// Pads (blanks) or truncates `rec` into `out`.
fn finish(rec: &[u8], out: &mut [u8]) {
    let n = rec.len().min(out.len());
    out[..n].copy_from_slice(&rec[..n]);
    out[n..].fill(b' ');
}

/// `FINDREP` of `rec` into `out` (cleared first); `Err` on an overrun of non-blank bytes.
fn findrep(f: &FindRep, rec: &[u8], out: &mut Vec<u8>) -> Result<(), ()> {
    let len = f.maxlen.unwrap_or(rec.len());
    let end = f.end.map_or(rec.len(), |e| e.min(rec.len()));
    out.clear();
    let mut pos = f.start.saturating_sub(1).min(rec.len());
    let mut done = 0usize;
    if !f.shift {
        out.extend_from_slice(rec);
        while pos < end && f.times.is_none_or(|t| done < t) {
            let hit =
                f.pairs.iter().find(|(i, _)| pos + i.len() <= end && rec[pos..].starts_with(i));
            let Some((i, o)) = hit else {
                pos += 1;
                continue;
            };
            let span = i.len().max(o.len());
            let stop = (pos + span).min(out.len());
            for (k, b) in out[pos..stop].iter_mut().enumerate() {
                *b = o.get(k).copied().unwrap_or(b' ');
            }
            pos += span;
            done += 1;
        }
        out.resize(len, b' ');
        return Ok(());
    }
    out.extend_from_slice(&rec[..pos]);
    while pos < end && f.times.is_none_or(|t| done < t) {
        let hit = f.pairs.iter().find(|(i, _)| pos + i.len() <= end && rec[pos..].starts_with(i));
        match hit {
            Some((i, o)) => {
                out.extend_from_slice(o);
                pos += i.len();
                done += 1;
            }
            None => {
                out.push(rec[pos]);
                pos += 1;
            }
        }
    }
    out.extend_from_slice(&rec[pos..]);
    if out.len() > len {
        if !f.truncate && out[len..].iter().any(|&b| b != b' ') {
            return Err(());
        }
        out.truncate(len);
    } else {
        out.resize(len, b' ');
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(offset: usize, len: usize) -> Placed {
        Placed { column: None, item: Item::Field { offset, len } }
    }

    fn konst(c: &[u8], column: Option<usize>) -> Placed {
        Placed { column, item: Item::Const(c.to_vec()) }
    }

    #[test]
    fn build_places_items_and_columns() {
        let r = Reformat::Edit(Edit::Build(vec![
            field(2, 3),
            konst(b"-", None),
            Placed { column: Some(8), item: Item::Field { offset: 0, len: 2 } },
        ]));
        let p = r.compile(Stage::Inrec, 6).unwrap();
        assert_eq!(p.out_len(), 9);
        let mut out = vec![0u8; 9];
        p.apply(b"abcdef", &mut out, &mut Scratch::default()).unwrap();
        assert_eq!(&out, b"cde-   ab");
        let bad = Reformat::Edit(Edit::Build(vec![field(4, 3)]));
        assert!(matches!(
            bad.compile(Stage::Outrec, 6),
            Err(SpecError::ReformatPastRecord { item: 1, end: 7, .. })
        ));
    }

    #[test]
    fn overlay_items_see_earlier_items() {
        let r = Reformat::Edit(Edit::Overlay(vec![
            konst(b"XY", Some(1)),
            Placed { column: Some(8), item: Item::Field { offset: 0, len: 2 } },
        ]));
        let p = r.compile(Stage::Inrec, 4).unwrap();
        assert_eq!(p.out_len(), 9);
        let mut out = vec![0u8; 9];
        p.apply(b"abcd", &mut out, &mut Scratch::default()).unwrap();
        assert_eq!(&out, b"XYcd   XY");
    }

    #[test]
    fn findrep_shifts_and_overruns() {
        let f = |pairs: &[(&[u8], &[u8])], shift: bool, truncate: bool| FindRep {
            pairs: pairs.iter().map(|(a, b)| (a.to_vec(), b.to_vec())).collect(),
            start: 1,
            end: None,
            times: None,
            shift,
            maxlen: None,
            truncate,
        };
        let mut out = Vec::new();
        findrep(&f(&[(b"ab", b"X")], true, false), b"abcab  ", &mut out).unwrap();
        assert_eq!(&out, b"XcX    ");
        findrep(&f(&[(b"a", b"AA")], true, false), b"a b    ", &mut out).unwrap();
        assert_eq!(&out, b"AA b   ");
        assert!(findrep(&f(&[(b"a", b"AAA")], true, false), b"aaa", &mut out).is_err());
        findrep(&f(&[(b"a", b"AAA")], true, true), b"aab", &mut out).unwrap();
        assert_eq!(&out, b"AAA");
        findrep(&f(&[(b"abc", b"Z")], false, false), b"xabcx", &mut out).unwrap();
        assert_eq!(&out, b"xZ  x");
    }
}

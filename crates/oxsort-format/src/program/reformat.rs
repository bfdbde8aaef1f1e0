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
//! `IN` constant's length, and nothing moves. That is DFSORT's rule; a `FINDREP` whose
//! [`FindRepRule`] is `Gcsort` (`oxsort gcsort`'s) runs by GCSORT's instead.

use std::sync::Arc;

use oxsort_bytes::copy_field;

use crate::error::{KeyError, SpecError};
use crate::program::edit::{EditMask, NumFormat};
use crate::program::filter::{Condition, Filter};
use crate::program::lookup::{show_value, Lookup};
use crate::program::sum::{convert, write_converted, ConvTo, SumKind};
use crate::spec::ShortFields;

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
    /// `p,m,f,EDIT=(pattern)` or `p,m,f,Mn` (with `SIGNS=`, `LENGTH=`): the numeric field
    /// edited for reading (see [`crate::EditMask`]).
    Edit {
        /// 0-based offset.
        offset: usize,
        /// Length in bytes.
        len: usize,
        /// Its format.
        from: NumFormat,
        /// The edit.
        mask: EditMask,
        /// The output length.
        out_len: usize,
    },
    /// `p,m,HEX`: each byte as two hexadecimal digits (`0-9A-F`).
    Hex {
        /// 0-based offset.
        offset: usize,
        /// Length in bytes.
        len: usize,
    },
    /// `p,m,TRAN=LTOU|UTOL|ALTSEQ`: the bytes translated through a table.
    Tran {
        /// 0-based offset.
        offset: usize,
        /// Length in bytes.
        len: usize,
        /// Which translation.
        tran: Tran,
    },
    /// `SEQNUM,n,f[,START=j][,INCR=i][,RESTART=(p,m)]`: the record's number among the
    /// records the item is applied to (each `SEQNUM` item counts on its own).
    Seqnum(Seqnum),
    /// `p,m,CHANGE=(v,find,set,...)[,NOMATCH=(set)]`: the field looked up in a table (see
    /// [`Lookup`]).
    Lookup(Lookup),
    /// `p` without a length (the last item of a `BUILD`): the bytes from `p` (0-based offset)
    /// to the record's end. On fixed-length records it is the field `p` to the record's
    /// length; on RDW-prefixed ones (see [`crate::VarBuild`]) each record's tail, of its own
    /// length.
    Rest {
        /// 0-based offset.
        offset: usize,
    },
}

/// A translation of `TRAN=`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Tran {
    /// `LTOU`: `a-z` to `A-Z`.
    LowerToUpper,
    /// `UTOL`: `A-Z` to `a-z`.
    UpperToLower,
    /// `ALTSEQ`: the table of the `ALTSEQ` statement (256 bytes; filled in once every
    /// statement is read).
    AltSeq(Vec<u8>),
}

impl Tran {
    fn byte(&self, b: u8) -> u8 {
        match self {
            Tran::LowerToUpper => b.to_ascii_uppercase(),
            Tran::UpperToLower => b.to_ascii_lowercase(),
            Tran::AltSeq(t) => t.get(b as usize).copied().unwrap_or(b),
        }
    }
}

/// The format of a `SEQNUM` item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SeqFormat {
    /// `ZD`: ASCII digits, leading zeros.
    Zd,
    /// `PD`: packed decimal, sign C.
    Pd,
    /// `BI`: unsigned big-endian binary.
    Bi,
    /// `FS` / `CSF`: digits right-aligned, leading blanks.
    Fs,
}

/// `SEQNUM,n,f,...`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Seqnum {
    /// Output length `n`.
    pub len: usize,
    /// Output format.
    pub format: SeqFormat,
    /// `START=` (default 1).
    pub start: u64,
    /// `INCR=` (default 1).
    pub incr: u64,
    /// `RESTART=(p,m)`: the numbering starts again at `START` when these bytes (0-based
    /// offset, length) differ from the previous numbered record's.
    pub restart: Option<(usize, usize)>,
}

impl Item {
    /// Bytes the item puts in the output.
    pub fn len(&self) -> usize {
        match self {
            Item::Field { len, .. } => *len,
            Item::Const(c) => c.len(),
            Item::Convert { out_len, .. } | Item::Edit { out_len, .. } => *out_len,
            Item::Hex { len, .. } => 2 * len,
            Item::Tran { len, .. } => *len,
            Item::Seqnum(q) => q.len,
            Item::Lookup(l) => l.out_len,
            // Its length is the record's: none is known before the record is.
            Item::Rest { .. } => 0,
        }
    }

    /// The input bytes the item reads (offset, length), if any.
    pub(crate) fn source(&self) -> Option<(usize, usize)> {
        match self {
            Item::Field { offset, len }
            | Item::Convert { offset, len, .. }
            | Item::Edit { offset, len, .. }
            | Item::Hex { offset, len }
            | Item::Tran { offset, len, .. } => Some((*offset, *len)),
            Item::Seqnum(q) => q.restart,
            Item::Lookup(l) => Some((l.offset, l.len)),
            Item::Const(_) | Item::Rest { .. } => None,
        }
    }

    /// Every input range the item reads (offset, length): its source, and a lookup's `set`
    /// fields.
    pub(crate) fn reads(&self) -> Vec<(usize, usize)> {
        match self {
            Item::Lookup(l) => l.reads().collect(),
            item => item.source().into_iter().collect(),
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
    /// `STARTPOS=` as written (DFSORT's is 1-based, default 1; see [`FindRepRule`]).
    pub start: Option<usize>,
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
    /// Whose rules it runs by.
    pub rule: FindRepRule,
}

impl FindRep {
    /// `pairs` under `rule`, every other operand at its default (whole record, no limit,
    /// `SHIFT=YES`, `OVERRUN=ERROR`, the input's length).
    pub fn new(pairs: Vec<(Vec<u8>, Vec<u8>)>, rule: FindRepRule) -> Self {
        FindRep {
            pairs,
            start: None,
            end: None,
            times: None,
            shift: true,
            maxlen: None,
            truncate: false,
            rule,
        }
    }
}

/// Whose rules a `FINDREP` runs by: DFSORT's (the default) or GCSORT's, which differ in
/// `STARTPOS`, `SHIFT`, `OVERRUN`, `DO`, `MAXLEN` and the order of `IN` lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FindRepRule {
    /// DFSORT's, as this module's overview says.
    #[default]
    Dfsort,
    /// GCSORT's, as `oxsort gcsort` runs its jobs: `STARTPOS=p` is a 0-based offset and
    /// `ENDPOS` the last byte searched; `IN` lists and `INOUT` pairs apply last written first,
    /// each over the range as the one before left it; `SHIFT=YES` overlays a shorter `OUT`
    /// (nothing moves), `SHIFT=NO` closes the range up with binary zeros; `OVERRUN=ERROR`
    /// stops the job when the pair applied last has a longer `OUT` and replaced something;
    /// `DO` bounds a count carried across the pairs; the record keeps its length.
    Gcsort,
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
    /// `PARSE=(...)` of the clause: fields its `BUILD` or `OVERLAY` reads as `%nn`.
    pub parse: Option<Vec<ParseField>>,
}

/// Where a `PARSE` field starts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ParseStart {
    /// Where the field before it ended (the start of the record for the first).
    Next,
    /// `ABSPOS=p` (0-based here).
    Abs(usize),
    /// `ADDPOS=x`: `x` bytes further.
    Add(usize),
    /// `SUBPOS=y`: `y` bytes back.
    Sub(usize),
    /// `STARTAFT=C'..'`: just after the next occurrence of the constant.
    After(Vec<u8>),
    /// `STARTAT=C'..'`: at the next occurrence of the constant.
    At(Vec<u8>),
}

/// One field of `PARSE=(%nn=(...),...)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ParseField {
    /// Where it starts.
    pub start: ParseStart,
    /// `ENDBEFR=` constants: the field ends before the first of them found (and parsing goes
    /// on after it); `ENDAT=` ones: the field ends with it. Neither: `FIXLEN` bytes.
    pub end_before: Vec<Vec<u8>>,
    /// `ENDAT=` constants.
    pub end_at: Vec<Vec<u8>>,
    /// `FIXLEN=m`: the field's length (blanks after its data; data cut to `m`). 0 for `%=`,
    /// a field skipped.
    pub fixlen: usize,
}

/// Where the parsed fields are, for an item that reads them: `%nn` fields are placed after the
/// record, from this offset on; compiling moves them to just after the record's last byte.
pub const PARSED_BASE: usize = crate::MAX_RECORD_SIZE + 1;

/// The parsed operands of an `INREC` or `OUTREC` statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Reformat {
    /// One `BUILD`, `OVERLAY` or `FINDREP`.
    Edit(Edit),
    /// `PARSE=(...)` and the `BUILD=` or `OVERLAY=` that uses its `%nn` fields (items whose
    /// offsets are [`PARSED_BASE`] and on).
    Parse {
        /// The fields in order.
        fields: Vec<ParseField>,
        /// The `BUILD` or `OVERLAY`.
        edit: Edit,
    },
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
/// A computed item in a compiled step: its 1-based number in its list, the item, where it
/// goes, and its `SEQNUM` counter (an index into [`Scratch`]'s counters).
#[derive(Debug, Clone)]
struct Op {
    index: usize,
    item: Item,
    at: usize,
    counter: usize,
}

#[derive(Debug, Clone)]
enum Step {
    /// `out = template; out[dst..dst+len] = rec[src..src+len]` for each copy, then each
    /// computed item (conversions, edits, `HEX`, `TRAN`, `SEQNUM`).
    Build {
        template: Vec<u8>,
        copies: Vec<(usize, usize, usize)>,
        computed: Vec<Op>,
        /// Whether the copies fill the record (no constant, gap or computed item): then the
        /// template is not laid first.
        covered: bool,
    },
    /// Applied in order to the record lengthened (blanks) to `len`.
    Overlay {
        ops: Vec<Op>,
        len: usize,
    },
    FindRep(FindRep),
    /// Pads the record with blanks to `at` bytes, then appends the `PARSE` fields to it.
    Parse {
        fields: Vec<ParseField>,
        at: usize,
    },
    /// Cuts the record to its first bytes (drops the parsed fields an `OVERLAY` read).
    Truncate(usize),
    /// Steps applied in order.
    Seq(Vec<Step>),
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
    /// How many `SEQNUM` counters the program keeps.
    counters: usize,
}

/// Reusable room for the steps that cannot write straight into the output record, and the
/// `SEQNUM` counters: one `Scratch` goes with one stream of records, in order.
#[derive(Debug, Default)]
pub struct Scratch {
    a: Vec<u8>,
    b: Vec<u8>,
    /// The source of an item that overlays the record it reads.
    c: Vec<u8>,
    /// Per `SEQNUM` item: the records numbered since the last restart, and the `RESTART`
    /// bytes of the last record numbered.
    seq: Vec<(u128, Vec<u8>)>,
}

impl Reformat {
    /// Makes every `FINDREP` of the statement (its `IFTHEN` clauses' included) run by `rule`.
    pub fn set_findrep_rule(&mut self, rule: FindRepRule) {
        let set = |e: &mut Edit| {
            if let Edit::FindRep(f) = e {
                f.rule = rule;
            }
        };
        match self {
            Reformat::Edit(e) | Reformat::Parse { edit: e, .. } => set(e),
            Reformat::IfThen { clauses, .. } => clauses.iter_mut().for_each(|c| set(&mut c.edit)),
        }
    }

    /// Checks the statement against `in_len`-byte input records and compiles it.
    pub fn compile(&self, stage: Stage, in_len: usize) -> Result<Arc<ReformatProgram>, SpecError> {
        let mut counters = 0usize;
        let (program, out_len) = match self {
            Reformat::Edit(e) => {
                let (step, len) = compile_step(stage, e, in_len, &mut counters)?;
                (Program::Single(step), len)
            }
            Reformat::Parse { fields, edit } => {
                let (step, len) = compile_parsed(stage, fields, edit, in_len, &mut counters)?;
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
                    let (step, len) = match &c.parse {
                        Some(fields) => {
                            compile_parsed(stage, fields, &c.edit, from, &mut counters)?
                        }
                        None => compile_step(stage, &c.edit, from, &mut counters)?,
                    };
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
        Ok(Arc::new(ReformatProgram { stage, in_len, out_len, program, counters }))
    }
}

/// `PARSE=` with the `BUILD` or `OVERLAY` that reads its `%nn` fields, on records of up to
/// `in_len` bytes: the parsed fields go after the record (padded to `in_len`) for a `BUILD`;
/// for an `OVERLAY`, after the record lengthened to what the overlay makes, and are cut off
/// once it is applied.
fn compile_parsed(
    stage: Stage,
    fields: &[ParseField],
    edit: &Edit,
    in_len: usize,
    counters: &mut usize,
) -> Result<(Step, usize), SpecError> {
    let total: usize = fields.iter().map(|f| f.fixlen).sum();
    let rebased = |items: &[Placed], at: usize| -> Vec<Placed> {
        items.iter().map(|p| Placed { column: p.column, item: rebase(&p.item, at) }).collect()
    };
    match edit {
        Edit::Build(items) => {
            let (step, len) = compile_step(
                stage,
                &Edit::Build(rebased(items, in_len)),
                in_len + total,
                counters,
            )?;
            let parse = Step::Parse { fields: fields.to_vec(), at: in_len };
            Ok((Step::Seq(vec![parse, step]), len))
        }
        Edit::Overlay(items) => {
            // The length the overlay makes of the record: it never reaches the parsed fields.
            let (mut at, mut len) = (0usize, in_len);
            for p in items {
                if let Some(c) = p.column {
                    at = c - 1;
                }
                at += p.item.len();
                len = len.max(at);
            }
            let (step, _) =
                compile_step(stage, &Edit::Overlay(rebased(items, len)), len + total, counters)?;
            let parse = Step::Parse { fields: fields.to_vec(), at: len };
            Ok((Step::Seq(vec![parse, step, Step::Truncate(len)]), len))
        }
        Edit::FindRep(f) => compile_step(stage, &Edit::FindRep(f.clone()), in_len, counters),
    }
}

fn compile_step(
    stage: Stage,
    edit: &Edit,
    in_len: usize,
    counters: &mut usize,
) -> Result<(Step, usize), SpecError> {
    let past = |item: usize, end: usize| SpecError::ReformatPastRecord {
        statement: stage.name(),
        item,
        end,
        record_len: in_len,
    };
    let mut op = |index: usize, item: &Item, at: usize| {
        let counter = *counters;
        if let Item::Seqnum(_) = item {
            *counters += 1;
        }
        Op { index, item: item.clone(), at, counter }
    };
    match edit {
        Edit::Build(items) => {
            // `p` without a length: the field from p to the record's end.
            let items: Vec<Placed> = items
                .iter()
                .enumerate()
                .map(|(i, p)| match p.item {
                    Item::Rest { offset } if offset >= in_len => Err(past(i + 1, offset + 1)),
                    Item::Rest { offset } => Ok(Placed {
                        column: p.column,
                        item: Item::Field { offset, len: in_len - offset },
                    }),
                    _ => Ok(p.clone()),
                })
                .collect::<Result<_, _>>()?;
            let mut template = Vec::new();
            let mut copies = Vec::new();
            let mut computed = Vec::new();
            for (i, p) in items.iter().enumerate() {
                if let Some(c) = p.column {
                    // Checked by the parser: a column never moves back.
                    template.resize((c - 1).max(template.len()), b' ');
                }
                let dst = template.len();
                for (offset, len) in p.item.reads() {
                    if offset + len > in_len {
                        return Err(past(i + 1, offset + len));
                    }
                }
                match &p.item {
                    Item::Field { offset, len } => {
                        template.resize(dst + len, b' ');
                        copies.push((*offset, dst, *len));
                    }
                    Item::Const(c) => template.extend_from_slice(c),
                    item => {
                        template.resize(dst + item.len(), b' ');
                        computed.push(op(i + 1, item, dst));
                    }
                }
            }
            let len = template.len();
            let covered = computed.is_empty() && copies.iter().map(|c| c.2).sum::<usize>() == len;
            Ok((Step::Build { template, copies, computed, covered }, len))
        }
        Edit::Overlay(items) => {
            let mut at = 0usize;
            let mut len = in_len;
            let mut ops = Vec::new();
            for (i, p) in items.iter().enumerate() {
                if let Some(c) = p.column {
                    at = c - 1;
                }
                for (offset, flen) in p.item.reads() {
                    // A field may read what earlier items lengthened the record with.
                    if offset + flen > len {
                        return Err(past(i + 1, offset + flen));
                    }
                }
                ops.push(op(i + 1, &p.item, at));
                at += p.item.len();
                len = len.max(at);
            }
            Ok((Step::Overlay { ops, len }, len))
        }
        // GCSORT's FINDREP keeps the record's length (it reads MAXLEN= and does not use it).
        Edit::FindRep(f) if f.rule == FindRepRule::Gcsort => Ok((Step::FindRep(f.clone()), in_len)),
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

    /// Whether it numbers records (`SEQNUM`): then the records must be given in their order,
    /// all with one [`Scratch`].
    pub fn numbers(&self) -> bool {
        self.counters > 0
    }

    /// `INREC` or `OUTREC`.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The fields the program copies, `(src, dst, len)` in its order, when that is all it does:
    /// a `BUILD` of fields only, which fill its records with no gap. A caller may then move
    /// the fields itself (as a record cut to the bytes a job reads is).
    pub fn only_copies(&self) -> Option<&[(usize, usize, usize)]> {
        match &self.program {
            Program::Single(Step::Build { copies, covered: true, .. }) => Some(copies),
            _ => None,
        }
    }

    /// Reformats `rec` (of [`ReformatProgram::in_len`] bytes) into `out` (of
    /// [`ReformatProgram::out_len`] bytes). Errors are records the statement cannot reshape
    /// (invalid decimal data in a condition or an edited field, a `FINDREP` overrun).
    /// `SEQNUM` items count the records given with the same `scratch`.
    pub fn apply(&self, rec: &[u8], out: &mut [u8], scratch: &mut Scratch) -> Result<(), KeyError> {
        debug_assert_eq!(out.len(), self.out_len);
        if scratch.seq.len() < self.counters {
            scratch.seq.resize(self.counters, (0, Vec::new()));
        }
        let stage = self.stage;
        match &self.program {
            Program::Single(Step::Build { template, copies, computed, covered }) => {
                if !covered {
                    out.copy_from_slice(template);
                }
                for &(src, dst, len) in copies {
                    copy_field(&rec[src..src + len], &mut out[dst..dst + len]);
                }
                for op in computed {
                    let src = op.item.source().map_or(&rec[..0], |(o, l)| &rec[o..o + l]);
                    let dst = &mut out[op.at..op.at + op.item.len()];
                    compute(stage, op, src, rec, dst, &mut scratch.seq)?;
                }
                Ok(())
            }
            Program::Single(Step::Overlay { ops, len }) => {
                debug_assert_eq!(*len, out.len());
                out[..rec.len()].copy_from_slice(rec);
                out[rec.len()..].fill(b' ');
                for op in ops {
                    overlay_one(stage, out, op, &mut scratch.c, &mut scratch.seq)?;
                }
                Ok(())
            }
            Program::Single(step) => {
                scratch.a.clear();
                scratch.a.extend_from_slice(rec);
                self.run(step, scratch)?;
                finish(&scratch.a, out);
                Ok(())
            }
            Program::IfThen(clauses) => {
                scratch.a.clear();
                scratch.a.extend_from_slice(rec);
                let mut hit = false;
                let mut stopped = false;
                for (when, step, hit_next) in clauses {
                    let applies = match when {
                        WhenC::Init => true,
                        WhenC::Cond(f) => {
                            !stopped
                                && f.matches(&scratch.a)
                                    .map_err(|e| self.when_error(e, scratch.a.len()))?
                        }
                        WhenC::None => !hit,
                    };
                    if !applies {
                        continue;
                    }
                    self.run(step, scratch)?;
                    if let WhenC::Cond(_) = when {
                        hit = true;
                        stopped = !hit_next;
                    }
                }
                finish(&scratch.a, out);
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

    /// Applies one step to the record in `scratch.a` (of any length), `scratch.b` as room.
    fn run(&self, step: &Step, scratch: &mut Scratch) -> Result<(), KeyError> {
        let stage = self.stage;
        let short = |start: usize, end: usize, len: usize| KeyError::ReformatShort {
            statement: stage.name(),
            start,
            end,
            len,
        };
        let Scratch { a: cur, b: spare, c, seq } = scratch;
        match step {
            Step::Build { template, copies, computed, .. } => {
                spare.clear();
                spare.extend_from_slice(template);
                for &(src, dst, len) in copies {
                    let Some(from) = cur.get(src..src + len) else {
                        return Err(short(src + 1, src + len, cur.len()));
                    };
                    spare[dst..dst + len].copy_from_slice(from);
                }
                for op in computed {
                    if let Item::Lookup(l) = &op.item {
                        if let Some((o, n)) = l.reads().find(|&(o, n)| o + n > cur.len()) {
                            return Err(short(o + 1, o + n, cur.len()));
                        }
                    }
                    let src = match op.item.source() {
                        None => &cur[..0],
                        Some((o, l)) => match cur.get(o..o + l) {
                            Some(s) => s,
                            None => return Err(short(o + 1, o + l, cur.len())),
                        },
                    };
                    let dst = &mut spare[op.at..op.at + op.item.len()];
                    compute(stage, op, src, cur, dst, seq)?;
                }
                std::mem::swap(cur, spare);
            }
            Step::Overlay { ops, .. } => {
                let need = ops.iter().map(|op| op.at + op.item.len()).max().unwrap_or(0);
                if cur.len() < need {
                    cur.resize(need, b' ');
                }
                for op in ops {
                    for (o, l) in op.item.reads() {
                        if o + l > cur.len() {
                            return Err(short(o + 1, o + l, cur.len()));
                        }
                    }
                    overlay_one(stage, cur, op, c, seq)?;
                }
            }
            Step::Parse { fields, at } => {
                let n = cur.len().min(*at);
                cur.resize(*at, b' ');
                parse_fields(fields, cur, n);
            }
            Step::Truncate(len) => cur.truncate(*len),
            Step::Seq(steps) => {
                for step in steps {
                    self.run(step, scratch)?;
                }
                return Ok(());
            }
            Step::FindRep(f) => {
                let statement = stage.name();
                match f.rule {
                    FindRepRule::Dfsort => findrep(f, cur, spare)
                        .map_err(|()| KeyError::FindRepOverrun { statement })?,
                    FindRepRule::Gcsort => crate::program::findrep_gcsort::apply(f, cur, spare)
                        .map_err(|()| KeyError::GcsortFindRepOverrun { statement })?,
                }
                std::mem::swap(cur, spare);
            }
        }
        Ok(())
    }
}

/// One `OVERLAY` item onto `out`; `room` holds its source, which may overlap where it goes.
fn overlay_one(
    stage: Stage,
    out: &mut [u8],
    op: &Op,
    room: &mut Vec<u8>,
    seq: &mut [(u128, Vec<u8>)],
) -> Result<(), KeyError> {
    let at = op.at;
    match &op.item {
        Item::Field { offset, len } => out.copy_within(*offset..offset + len, at),
        Item::Const(c) => out[at..at + c.len()].copy_from_slice(c),
        Item::Lookup(l) => {
            room.clear();
            room.resize(l.out_len, b' ');
            lookup(stage, op.index, l, out, room)?;
            out[at..at + l.out_len].copy_from_slice(room);
        }
        item => {
            room.clear();
            if let Some((o, l)) = item.source() {
                room.extend_from_slice(&out[o..o + l]);
            }
            compute(stage, op, room, &[], &mut out[at..at + item.len()], seq)?;
        }
    }
    Ok(())
}

/// The item with its `%nn` offsets ([`PARSED_BASE`] on) moved to just after an `in_len`-byte
/// record.
fn rebase(item: &Item, in_len: usize) -> Item {
    let mut item = item.clone();
    match &mut item {
        Item::Field { offset, .. }
        | Item::Convert { offset, .. }
        | Item::Edit { offset, .. }
        | Item::Hex { offset, .. }
        | Item::Tran { offset, .. } => {
            if *offset >= PARSED_BASE {
                *offset = *offset - PARSED_BASE + in_len;
            }
        }
        Item::Lookup(l) => l.rebase(PARSED_BASE, in_len),
        Item::Const(_) | Item::Seqnum(_) | Item::Rest { .. } => {}
    }
    item
}

/// Appends the `PARSE` fields of the record `rec` to it, as DFSORT extracts them: a cursor
/// moves from the record's start; each field starts where its start says (a `STARTAFT`/`STARTAT`
/// constant not found leaves it and the fields after it blank) and ends before its `ENDBEFR`
/// constant (the cursor going past the constant), with its `ENDAT` one, at the record's end if
/// none is found, or after `FIXLEN` bytes without either. Only the first `n` bytes are the
/// record (the rest is padding, not parsed).
fn parse_fields(fields: &[ParseField], rec: &mut Vec<u8>, n: usize) {
    let mut pos = 0usize;
    let find = |rec: &[u8], from: usize, what: &[u8]| {
        rec.get(from..n)
            .and_then(|r| r.windows(what.len()).position(|w| w == what))
            .map(|i| i + from)
    };
    for f in fields {
        match &f.start {
            ParseStart::Next => {}
            ParseStart::Abs(p) => pos = *p,
            ParseStart::Add(x) => pos += x,
            ParseStart::Sub(y) => pos = pos.saturating_sub(*y),
            ParseStart::After(c) => pos = find(rec, pos, c).map_or(n, |i| i + c.len()),
            ParseStart::At(c) => pos = find(rec, pos, c).unwrap_or(n),
        }
        pos = pos.min(n);
        let ends = f
            .end_before
            .iter()
            .map(|c| (c, false))
            .chain(f.end_at.iter().map(|c| (c, true)))
            .filter_map(|(c, at)| find(rec, pos, c).map(|i| (i, c.len(), at)))
            .min_by_key(|&(i, _, _)| i);
        let (end, next) = match ends {
            Some((i, len, false)) => (i, i + len),
            Some((i, len, true)) => (i + len, i + len),
            None if f.end_before.is_empty() && f.end_at.is_empty() => {
                let e = (pos + f.fixlen).min(n);
                (e, e)
            }
            None => (n, n),
        };
        let take = (end - pos).min(f.fixlen);
        let at = rec.len();
        rec.extend_from_within(pos..pos + take);
        rec.resize(at + f.fixlen, b' ');
        pos = next;
    }
}

/// A lookup item of `rec` into `out`; a field no `find` equals, without `NOMATCH`, is an
/// error naming the item and the field's value.
fn lookup(
    stage: Stage,
    item: usize,
    l: &Lookup,
    rec: &[u8],
    out: &mut [u8],
) -> Result<(), KeyError> {
    // Items, positions and lengths are far below u32::MAX (records are at most 64 KiB).
    let small = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    l.write(rec, out).map_err(|value| KeyError::LookupNoMatch {
        statement: stage.name(),
        item: small(item),
        start: small(l.offset + 1),
        end: small(l.offset + l.len),
        value: show_value(&value).into(),
    })
}

/// Writes a computed item into `out` (its bytes) from `src` (its source bytes: the field it
/// reads, or a `SEQNUM`'s `RESTART` bytes); a lookup reads the whole record `rec`.
fn compute(
    stage: Stage,
    op: &Op,
    src: &[u8],
    rec: &[u8],
    out: &mut [u8],
    seq: &mut [(u128, Vec<u8>)],
) -> Result<(), KeyError> {
    let data_error = |e: KeyError, format: &'static str| match e {
        KeyError::InvalidPacked { position, byte, .. }
        | KeyError::InvalidZoned { position, byte, .. } => KeyError::ReformatData {
            statement: stage.name(),
            item: op.index,
            format,
            position,
            byte,
        },
        other => other,
    };
    match &op.item {
        Item::Convert { offset, from, to, .. } => {
            convert(*from, src, *to, out, op.index, offset + 1)
                .map_err(|e| data_error(e, from.name()))?;
        }
        Item::Edit { offset, from, mask, .. } => {
            let v =
                from.value(src, op.index, offset + 1).map_err(|e| data_error(e, from.name()))?;
            mask.write(v, out);
        }
        Item::Hex { .. } => {
            const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
            for (pair, &b) in out.chunks_exact_mut(2).zip(src) {
                pair[0] = DIGITS[(b >> 4) as usize];
                pair[1] = DIGITS[(b & 0x0F) as usize];
            }
        }
        Item::Tran { tran, .. } => {
            for (o, &b) in out.iter_mut().zip(src) {
                *o = tran.byte(b);
            }
        }
        Item::Seqnum(q) => {
            let (count, last) = &mut seq[op.counter];
            if q.restart.is_some() && (*count == 0 || last.as_slice() != src) {
                *count = 0;
                last.clear();
                last.extend_from_slice(src);
            }
            let v = q.start as u128 + *count * q.incr as u128;
            *count += 1;
            write_seqnum(q.format, v, out);
        }
        Item::Lookup(l) => lookup(stage, op.index, l, rec, out)?,
        Item::Field { .. } | Item::Const(_) | Item::Rest { .. } => {}
    }
    Ok(())
}

/// A sequence number in its format; digits (or bytes) that do not fit are dropped from the
/// left, as DFSORT lets a sequence number wrap.
fn write_seqnum(format: SeqFormat, v: u128, out: &mut [u8]) {
    // Past 31 digits a value no longer fits the decimal forms; the low digits are kept.
    let decimal = (v % 10u128.pow(crate::program::edit::MAX_DIGITS as u32)) as i128;
    match format {
        SeqFormat::Zd => write_converted(decimal, ConvTo::Zd, out),
        SeqFormat::Pd => write_converted(decimal, ConvTo::Pd, out),
        SeqFormat::Fs => write_converted(decimal, ConvTo::Fs, out),
        SeqFormat::Bi => {
            let bytes = v.to_be_bytes();
            out.copy_from_slice(&bytes[16 - out.len()..]);
        }
    }
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
    let mut pos = f.start.unwrap_or(1).saturating_sub(1).min(rec.len());
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
    fn a_rest_item_is_the_field_to_the_records_end() {
        let r = Reformat::Edit(Edit::Build(vec![
            konst(b"<", None),
            Placed { column: None, item: Item::Rest { offset: 2 } },
        ]));
        let p = r.compile(Stage::Outrec, 5).unwrap();
        let mut out = vec![0u8; p.out_len()];
        p.apply(b"abcde", &mut out, &mut Scratch::default()).unwrap();
        assert_eq!(&out, b"<cde");
        assert!(matches!(
            r.compile(Stage::Outrec, 2),
            Err(SpecError::ReformatPastRecord { item: 2, end: 3, .. })
        ));
    }

    #[test]
    fn an_overlaid_lookup_reads_its_field_before_writing_over_it() {
        use crate::program::lookup::LookupSet;
        let l = Lookup {
            offset: 0,
            len: 1,
            out_len: 2,
            table: vec![(b"a".to_vec(), LookupSet::Field { offset: 1, len: 2 })],
            nomatch: None,
        };
        let r =
            Reformat::Edit(Edit::Overlay(vec![Placed { column: Some(1), item: Item::Lookup(l) }]));
        let p = r.compile(Stage::Inrec, 3).unwrap();
        let mut out = vec![0u8; 3];
        p.apply(b"axy", &mut out, &mut Scratch::default()).unwrap();
        assert_eq!(&out, b"xyy");
        let e = p.apply(b"bxy", &mut out, &mut Scratch::default()).unwrap_err();
        assert!(
            matches!(e, KeyError::LookupNoMatch { item: 1, start: 1, end: 1, ref value, .. } if &**value == "C'b'")
        );
    }

    #[test]
    fn findrep_shifts_and_overruns() {
        let f = |pairs: &[(&[u8], &[u8])], shift: bool, truncate: bool| FindRep {
            shift,
            truncate,
            ..FindRep::new(
                pairs.iter().map(|(a, b)| (a.to_vec(), b.to_vec())).collect(),
                FindRepRule::Dfsort,
            )
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

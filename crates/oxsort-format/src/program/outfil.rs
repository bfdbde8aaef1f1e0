//! DFSORT `OUTFIL`: several outputs written from one pass over the sorted records.
//!
//! Each `OUTFIL` statement is a group of outputs (its `FNAMES=`/`FILES=` DD names, `SORTOUT`
//! when it names none). Every sorted record (after `SUM` and `OUTREC`) is offered to every
//! group, in order; a group takes it through these steps:
//!
//! ```text
//!  record n ──> STARTREC <= n <= ENDREC ──> INCLUDE/OMIT (or SAVE) ──> BUILD/OVERLAY/IFTHEN
//!                                                                          │
//!        ┌─────────────── SPLIT / SPLITBY=m / SPLIT1R=m: which output ─────┘
//!        v                 (without one: every output of the group)
//!  output k:  HEADER1 lines, its data records, TRAILER1 lines (COUNT: its data records)
//! ```
//!
//! `n` counts the records offered to `OUTFIL` from 1. A `SAVE` group takes the records no
//! other group took (a record outside a group's STARTREC..ENDREC is not taken by it). With a
//! split, each output of the group gets its own header and trailer, and `COUNT` counts the
//! data records of that output. Report lines are blank-padded to the length of the group's
//! data records.
//!
//! An output with a report (`HEADER1`/`TRAILER1`) is a print file: unless `REMOVECC` is given,
//! every record it gets starts with an ANSI carriage-control byte, as DFSORT writes it (the
//! records are one byte longer than the data):
//!
//! ```text
//!  '1' HEADER1 line 1        new page
//!  ' ' HEADER1 lines 2...    next line
//!  ' ' data records
//!  '1' TRAILER1 line 1       new page
//!  ' ' TRAILER1 lines 2...
//! ```
//!
//! [`OutfilProgram`] is the compiled form for records of one length; [`Router`] carries the
//! per-group counters while the records stream past.

use std::sync::Arc;

use crate::error::{KeyError, SpecError};
use crate::program::edit::EditMask;
use crate::program::filter::Filter;
use crate::program::reformat::{Edit, Reformat, ReformatProgram, Scratch, Stage};

/// A parsed `OUTFIL` statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Outfil {
    /// Line of the statement in the control text (for messages).
    pub line: usize,
    /// Its outputs' DD names, upper case (`FILES=01` is `SORTOF01`, `FILES=OUT` is `SORTOUT`).
    pub names: Vec<String>,
    /// `INCLUDE=`/`OMIT=`: the records this group takes (all without one).
    pub filter: Option<Filter>,
    /// Where the filter's fields end at most (1-based byte), for the record-length check.
    pub filter_end: usize,
    /// `SAVE`: the records no other group took.
    pub save: bool,
    /// `STARTREC=n`: the first record offered that the group considers (1-based).
    pub startrec: Option<u64>,
    /// `ENDREC=n`: the last.
    pub endrec: Option<u64>,
    /// `BUILD=`/`OUTREC=`/`FIELDS=`/`OVERLAY=`/`FINDREP=`/`IFTHEN=`: the records written.
    pub reformat: Option<Reformat>,
    /// `SPLIT`, `SPLITBY=n`, `SPLIT1R=n`.
    pub split: Split,
    /// `HEADER1=(...)`: lines written before the data records.
    pub header1: Option<Vec<ReportLine>>,
    /// `TRAILER1=(...)`: lines written after them.
    pub trailer1: Option<Vec<ReportLine>>,
    /// `REMOVECC`: report lines without a carriage-control byte.
    pub removecc: bool,
}

/// How a group's records are dealt to its outputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Split {
    /// Every output gets every record.
    #[default]
    None,
    /// `SPLIT` (`n` = 1) and `SPLITBY=n`: blocks of `n` records to each output in turn,
    /// round after round.
    By(u64),
    /// `SPLIT1R=n`: blocks of `n` records to each output in turn, once; the last output
    /// gets the rest.
    OneRound(u64),
}

/// One line of a report header or trailer: its items with their columns (`c:`, 1-based).
pub type ReportLine = Vec<(Option<usize>, ReportItem)>;

/// An item of a `HEADER1`/`TRAILER1` line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ReportItem {
    /// `'text'`, `C'..'`, `X'..'`, `nX`, `n'..'`: constant bytes.
    Const(Vec<u8>),
    /// `COUNT` (8 characters), `COUNT15` (15) or `COUNT=(TO=ZD|FS,LENGTH=n)`: the number of
    /// data records of the output.
    Count(CountForm),
}

/// How a `COUNT` is written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CountForm {
    /// `width` characters, right-aligned, leading zeros as blanks (`COUNT`: 8, `COUNT15`: 15,
    /// `TO=FS`).
    Blanked {
        /// Characters written.
        width: usize,
    },
    /// `TO=ZD`: `width` digits with leading zeros.
    Zoned {
        /// Digits written.
        width: usize,
    },
    /// `COUNT=(Mn|EDIT=(pattern)[,SIGNS=...][,LENGTH=n])`: the count as a 15-digit number
    /// (DFSORT's counts have 15 digits) through the edit, `width` characters.
    Edited {
        /// The edit.
        mask: EditMask,
        /// Characters written (`LENGTH=`, else the edit's length).
        width: usize,
    },
}

/// Digits of a count, as DFSORT edits it.
pub const COUNT_DIGITS: usize = 15;

impl CountForm {
    /// Characters the count takes.
    pub fn width(&self) -> usize {
        match self {
            CountForm::Blanked { width }
            | CountForm::Zoned { width }
            | CountForm::Edited { width, .. } => *width,
        }
    }

    /// Writes `count` in `out` (of [`CountForm::width`] bytes); a count with more digits keeps
    /// its low-order digits.
    pub fn write(&self, count: u64, out: &mut [u8]) {
        if let CountForm::Edited { mask, .. } = self {
            mask.write(count as i128 % 10i128.pow(COUNT_DIGITS as u32), out);
            return;
        }
        let digits = count.to_string();
        let d = digits.as_bytes();
        let w = out.len();
        let take = d.len().min(w);
        let fill = match self {
            CountForm::Zoned { .. } => b'0',
            _ => b' ',
        };
        out[..w - take].fill(fill);
        out[w - take..].copy_from_slice(&d[d.len() - take..]);
    }
}

impl ReportItem {
    /// Bytes the item takes in its line.
    pub fn len(&self) -> usize {
        match self {
            ReportItem::Const(c) => c.len(),
            ReportItem::Count(f) => f.width(),
        }
    }

    /// Whether the item takes no bytes (never for parsed items).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The `OUTFIL` statements compiled for sorted records of one length.
#[derive(Debug, Clone)]
pub struct OutfilProgram {
    groups: Vec<Group>,
}

#[derive(Debug, Clone)]
struct Group {
    first_output: usize,
    outputs: usize,
    filter: Option<Filter>,
    save: bool,
    start: u64,
    end: u64,
    reformat: Option<Arc<ReformatProgram>>,
    split: Split,
    out_len: usize,
    header: Vec<Vec<LinePart>>,
    trailer: Vec<Vec<LinePart>>,
    /// A report output without `REMOVECC`: each record starts with its carriage control.
    cc: bool,
}

/// ANSI carriage control: skip to a new page before the line.
const CC_NEW_PAGE: u8 = b'1';
/// ANSI carriage control: the next line.
const CC_NEXT_LINE: u8 = b' ';

/// A report line compiled: bytes, and where counts go.
#[derive(Debug, Clone)]
enum LinePart {
    Bytes(Vec<u8>),
    Count(CountForm),
}

/// One output of an [`OutfilProgram`]: its DD name, the statement it belongs to, and the
/// length of its data records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutfilOutput {
    /// The DD name.
    pub name: String,
    /// Line of its `OUTFIL` statement.
    pub line: usize,
    /// Bytes of each record written (data and report lines alike).
    pub record_len: usize,
}

/// The counters of the records streaming through an [`OutfilProgram`].
#[derive(Debug, Default)]
pub struct Router {
    /// Records offered so far.
    offered: u64,
    /// Per group: records it took.
    taken: Vec<u64>,
    /// Per output: data records written.
    written: Vec<u64>,
    record: Vec<u8>,
    scratch: Scratch,
}

impl Router {
    /// Data records written to each output so far (in [`Outfil::outputs`] order).
    pub fn written(&self) -> &[u64] {
        &self.written
    }

    /// Records offered so far.
    pub fn offered(&self) -> u64 {
        self.offered
    }
}

fn outfil_error(line: usize, why: String) -> SpecError {
    SpecError::Outfil { line, why }
}

/// Lays out report lines at their columns.
fn compile_report(
    lines: &[ReportLine],
    width: usize,
    what: &str,
    line: usize,
) -> Result<Vec<Vec<LinePart>>, SpecError> {
    let mut out = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        let mut parts: Vec<LinePart> = Vec::new();
        let mut at = 0usize;
        let mut pending: Vec<u8> = Vec::new();
        for (column, item) in l {
            if let Some(c) = column {
                if c - 1 < at {
                    return Err(outfil_error(
                        line,
                        format!(
                            "{what} line {}: column {c} would overlap the items before it",
                            k + 1
                        ),
                    ));
                }
                pending.resize(pending.len() + (c - 1 - at), b' ');
                at = c - 1;
            }
            match item {
                ReportItem::Const(c) => pending.extend_from_slice(c),
                ReportItem::Count(f) => {
                    parts.push(LinePart::Bytes(std::mem::take(&mut pending)));
                    parts.push(LinePart::Count(f.clone()));
                }
            }
            at += item.len();
        }
        if at > width {
            return Err(outfil_error(
                line,
                format!(
                    "{what} line {} is {at} bytes, longer than the {width}-byte records of the \
                     output",
                    k + 1
                ),
            ));
        }
        pending.resize(pending.len() + (width - at), b' ');
        parts.push(LinePart::Bytes(pending));
        out.push(parts);
    }
    Ok(out)
}

impl Outfil {
    /// What the statement does, in a few words (for `oxsort explain`).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        parts.push(match (&self.filter, self.save) {
            (_, true) => "SAVE: the records no other OUTFIL took".to_string(),
            (Some(f), _) if f.omit => "OMIT=(...)".to_string(),
            (Some(_), _) => "INCLUDE=(...)".to_string(),
            (None, _) => "every record".to_string(),
        });
        match (self.startrec, self.endrec) {
            (None, None) => {}
            (s, e) => parts.push(format!(
                "records {} to {}",
                s.unwrap_or(1),
                e.map_or("the last".to_string(), |e| e.to_string())
            )),
        }
        match &self.reformat {
            Some(Reformat::Edit(_)) => parts.push("reshaped (BUILD/OVERLAY/FINDREP)".into()),
            Some(Reformat::IfThen { .. }) => parts.push("reshaped (IFTHEN)".into()),
            Some(Reformat::Parse { edit: Edit::Overlay(_), .. }) => {
                parts.push("reshaped (PARSE, OVERLAY)".into())
            }
            Some(Reformat::Parse { .. }) => parts.push("reshaped (PARSE, BUILD)".into()),
            None => {}
        }
        let n = self.names.len();
        match self.split {
            Split::None if n > 1 => parts.push(format!("the same records to all {n} outputs")),
            Split::None => {}
            Split::By(1) => parts.push(format!("SPLIT: one record to each of {n} outputs in turn")),
            Split::By(m) => {
                parts.push(format!("SPLITBY={m}: blocks of {m} to each of {n} in turn"))
            }
            Split::OneRound(m) => {
                parts.push(format!("SPLIT1R={m}: {m} to each of {n} once, the rest to the last"))
            }
        }
        if let Some(h) = &self.header1 {
            parts.push(format!("HEADER1 of {} lines", h.len()));
        }
        if let Some(t) = &self.trailer1 {
            parts.push(format!("TRAILER1 of {} lines", t.len()));
        }
        parts.join(", ")
    }

    /// Checks the statements against sorted records of `in_len` bytes and compiles them.
    pub fn compile(statements: &[Outfil], in_len: usize) -> Result<OutfilProgram, SpecError> {
        let mut groups = Vec::new();
        let mut first_output = 0;
        for s in statements {
            if s.filter_end > in_len {
                return Err(outfil_error(
                    s.line,
                    format!(
                        "the INCLUDE/OMIT condition reads up to byte {}, past the end of the \
                         {in_len}-byte records",
                        s.filter_end
                    ),
                ));
            }
            let reformat = match &s.reformat {
                Some(r) => Some(r.compile(Stage::Outfil, in_len)?),
                None => None,
            };
            let out_len = reformat.as_ref().map_or(in_len, |r| r.out_len());
            let has_report = s.header1.is_some() || s.trailer1.is_some();
            let header =
                compile_report(s.header1.as_deref().unwrap_or(&[]), out_len, "HEADER1", s.line)?;
            let trailer =
                compile_report(s.trailer1.as_deref().unwrap_or(&[]), out_len, "TRAILER1", s.line)?;
            groups.push(Group {
                first_output,
                outputs: s.names.len(),
                filter: s.filter.clone(),
                save: s.save,
                start: s.startrec.unwrap_or(1),
                end: s.endrec.unwrap_or(u64::MAX),
                reformat,
                split: s.split,
                out_len,
                header,
                trailer,
                cc: has_report && !s.removecc,
            });
            first_output += s.names.len();
        }
        Ok(OutfilProgram { groups })
    }

    /// The outputs of `statements` in order, each with the length of its records for
    /// sorted records of `in_len` bytes.
    pub fn outputs(statements: &[Outfil], program: &OutfilProgram) -> Vec<OutfilOutput> {
        statements
            .iter()
            .zip(&program.groups)
            .flat_map(|(s, g)| {
                s.names.iter().map(move |n| OutfilOutput {
                    name: n.clone(),
                    line: s.line,
                    record_len: g.out_len + g.cc as usize,
                })
            })
            .collect()
    }
}

impl OutfilProgram {
    /// Number of outputs.
    pub fn output_count(&self) -> usize {
        self.groups.iter().map(|g| g.outputs).sum()
    }

    /// A router for one pass.
    pub fn router(&self) -> Router {
        Router {
            taken: vec![0; self.groups.len()],
            written: vec![0; self.output_count()],
            ..Router::default()
        }
    }

    /// Writes each output's `HEADER1` lines: `emit(output, bytes)`.
    pub fn headers<E>(&self, mut emit: impl FnMut(usize, &[u8]) -> Result<(), E>) -> Result<(), E> {
        for g in &self.groups {
            for k in 0..g.outputs {
                for (i, line) in g.header.iter().enumerate() {
                    emit(g.first_output + k, &render(line, 0, g.cc_of_line(i)))?;
                }
            }
        }
        Ok(())
    }

    /// Writes each output's `TRAILER1` lines (counts from `router`).
    pub fn trailers<E>(
        &self,
        router: &Router,
        mut emit: impl FnMut(usize, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        for g in &self.groups {
            for k in 0..g.outputs {
                let o = g.first_output + k;
                for (i, line) in g.trailer.iter().enumerate() {
                    emit(o, &render(line, router.written[o], g.cc_of_line(i)))?;
                }
            }
        }
        Ok(())
    }

    /// Offers the next sorted record to every group; `emit(output, bytes)` receives what each
    /// output gets. Errors are records a condition or reformatting cannot handle.
    pub fn route<E: From<KeyError>>(
        &self,
        router: &mut Router,
        rec: &[u8],
        mut emit: impl FnMut(usize, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        router.offered += 1;
        let n = router.offered;
        let mut taken_by_some = false;
        for pass_save in [false, true] {
            for (gi, g) in self.groups.iter().enumerate() {
                if g.save != pass_save || n < g.start || n > g.end {
                    continue;
                }
                let takes = if g.save {
                    !taken_by_some
                } else {
                    match &g.filter {
                        Some(f) => f.matches(rec)?,
                        None => true,
                    }
                };
                if !takes {
                    continue;
                }
                if !g.save {
                    taken_by_some = true;
                }
                let k = router.taken[gi];
                router.taken[gi] += 1;
                let data: &[u8] = match (&g.reformat, g.cc) {
                    (Some(p), cc) => {
                        let at = cc as usize;
                        router.record.resize(at + p.out_len(), CC_NEXT_LINE);
                        if cc {
                            router.record[0] = CC_NEXT_LINE;
                        }
                        p.apply(rec, &mut router.record[at..], &mut router.scratch)?;
                        &router.record
                    }
                    (None, true) => {
                        router.record.clear();
                        router.record.push(CC_NEXT_LINE);
                        router.record.extend_from_slice(rec);
                        &router.record
                    }
                    (None, false) => rec,
                };
                let count = g.outputs as u64;
                let one = match g.split {
                    Split::None => None,
                    Split::By(m) => Some((k / m) % count),
                    Split::OneRound(m) => Some((k / m).min(count - 1)),
                };
                match one {
                    Some(i) => {
                        let o = g.first_output + i as usize;
                        router.written[o] += 1;
                        emit(o, data)?;
                    }
                    None => {
                        for o in g.first_output..g.first_output + g.outputs {
                            router.written[o] += 1;
                            emit(o, data)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

impl Group {
    /// The carriage control of line `i` of a header or trailer (none with `REMOVECC`): the
    /// first starts a new page.
    fn cc_of_line(&self, i: usize) -> Option<u8> {
        self.cc.then_some(if i == 0 { CC_NEW_PAGE } else { CC_NEXT_LINE })
    }
}

fn render(line: &[LinePart], count: u64, cc: Option<u8>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(cc);
    for p in line {
        match p {
            LinePart::Bytes(b) => out.extend_from_slice(b),
            LinePart::Count(f) => {
                let at = out.len();
                out.resize(at + f.width(), b' ');
                f.write(count, &mut out[at..]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_right_aligned_and_keep_their_low_digits() {
        let w = |f: CountForm, n: u64| {
            let mut b = vec![0u8; f.width()];
            f.write(n, &mut b);
            String::from_utf8(b).unwrap()
        };
        assert_eq!(w(CountForm::Blanked { width: 8 }, 1234), "    1234");
        assert_eq!(w(CountForm::Blanked { width: 8 }, 0), "       0");
        assert_eq!(w(CountForm::Zoned { width: 5 }, 42), "00042");
        assert_eq!(w(CountForm::Zoned { width: 2 }, 1234), "34");
    }
}

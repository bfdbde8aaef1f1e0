//! `OUTREC BUILD=` on RDW-prefixed records (`RECORD TYPE=V`): [`VarBuild`].
//!
//! ```text
//!  OUTREC BUILD=(1,4,C'|',9,2,HEX,5,3)
//!  in:   |00 0E 00 00|A B C x y . . . . .|        RDW: 14
//!  out:  |00 0C 00 00|'|'|hex of 9-10|A B C|      RDW rewritten: the new record's 12 bytes
//! ```
//!
//! As DFSORT defines it for variable-length records, the list starts with `1,4` (the RDW,
//! kept in the output's bytes 1-4) and positions count the RDW as bytes 1-4; the RDW of the
//! rebuilt record is given the rebuilt record's length. Every item is one of `BUILD`'s (fields,
//! constants, `c:` columns, edits, conversions, `HEX`, `TRAN`, `SEQNUM`, lookups), so each
//! rebuilt record has the same length, unless the list ends with a position without a length
//! (`BUILD=(1,4,C'|',5)`): then each record's bytes from that position to its end follow, and
//! the rebuilt records vary in length as the records do (a record that ends before the
//! position adds nothing). A field past the end of a record is an error naming the item.

use std::sync::Arc;

use crate::error::{KeyError, SpecError};
use crate::program::reformat::{Edit, Item, Placed, Reformat, ReformatProgram, Scratch, Stage};
use crate::{MAX_RECORD_SIZE, RDW_BYTES};

/// A `BUILD` compiled for RDW-prefixed records of at most `max` bytes.
#[derive(Debug, Clone)]
pub struct VarBuild {
    /// The items, compiled for records of the longest length (shorter ones are padded for it
    /// once their fields are checked).
    program: Arc<ReformatProgram>,
    /// Each item's source bytes (0-based offset, length) and its 1-based number.
    sources: Vec<(usize, usize, usize)>,
    /// The 0-based offset of the closing `p` without a length: the tail of each record copied
    /// after the items.
    tail: Option<usize>,
}

impl VarBuild {
    /// Checks `OUTREC`'s `BUILD` against RDW-prefixed records of at most `max` bytes.
    pub fn compile(r: &Reformat, stage: Stage, max: usize) -> Result<VarBuild, SpecError> {
        let refuse =
            |why: &str| SpecError::VariableReformat { statement: stage.name(), why: why.into() };
        let Reformat::Edit(Edit::Build(items)) = r else {
            return Err(refuse(
                "it takes BUILD= or FIELDS= there (no OVERLAY, FINDREP, IFTHEN or PARSE)",
            ));
        };
        match items.first() {
            Some(p)
                if matches!(p.column, None | Some(1))
                    && matches!(p.item, Item::Field { offset: 0, len } if len >= RDW_BYTES) => {}
            _ => return Err(refuse("its list must start with 1,4 (the RDW)")),
        }
        let mut items = items.clone();
        let tail = match items.last() {
            Some(&Placed { item: Item::Rest { offset }, column }) => {
                if column.is_some() {
                    return Err(refuse("a position without a length takes no c: column"));
                }
                items.pop();
                Some(offset)
            }
            _ => None,
        };
        let program = Reformat::Edit(Edit::Build(items.clone())).compile(stage, max)?;
        if let Some(offset) = tail {
            let longest = program.out_len() + max.saturating_sub(offset);
            if longest > MAX_RECORD_SIZE {
                return Err(SpecError::ReformatLength { statement: stage.name(), len: longest });
            }
        }
        let sources = items
            .iter()
            .enumerate()
            .flat_map(|(i, p)| p.item.reads().into_iter().map(move |(o, l)| (o, l, i + 1)))
            .collect();
        Ok(VarBuild { program, sources, tail })
    }

    /// The 0-based offset from which each record's tail follows the items, if the list ends
    /// with a position without a length.
    pub fn tail(&self) -> Option<usize> {
        self.tail
    }

    /// The length of every rebuilt record (RDW included), without the tail of
    /// [`VarBuild::tail`].
    pub fn out_len(&self) -> usize {
        self.program.out_len()
    }

    /// Rebuilds `rec` (a whole RDW-prefixed record) into `out` (cleared first), with its RDW
    /// set to the new length. `padded` is room for a short record padded to the longest.
    pub fn apply(
        &self,
        rec: &[u8],
        out: &mut Vec<u8>,
        padded: &mut Vec<u8>,
        scratch: &mut Scratch,
    ) -> Result<(), KeyError> {
        for &(offset, len, item) in &self.sources {
            if offset + len > rec.len() {
                return Err(KeyError::ShortRecord {
                    field: item,
                    start: offset + 1,
                    end: offset + len,
                    len: rec.len(),
                });
            }
        }
        let input = if rec.len() == self.program.in_len() {
            rec
        } else {
            padded.clear();
            padded.extend_from_slice(rec);
            padded.resize(self.program.in_len(), 0);
            padded.as_slice()
        };
        out.clear();
        out.resize(self.out_len(), 0);
        self.program.apply(input, out, scratch)?;
        if let Some(tail) = rec.get(self.tail.unwrap_or(usize::MAX)..) {
            out.extend_from_slice(tail);
        }
        // Checked when compiled: the longest record fits.
        let len = out.len() as u16;
        out[..2].copy_from_slice(&len.to_be_bytes());
        out[2..RDW_BYTES].fill(0);
        Ok(())
    }
}

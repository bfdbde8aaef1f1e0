//! The record and key model of oxsort, and the record programs the engine calls per record.
//!
//! - [`RecordLayout`]: fixed-size records (the 100-byte benchmark record by default), records
//!   ended by a byte (`\n`, NUL), or RDW-prefixed variable records (z/OS `RECFM=VB`).
//! - [`KeySpec`]: the key, a list of [`KeyField`]s (position, [`FieldType`], direction).
//!   [`KeySpec::normalize`] turns a record's key into bytes whose plain byte order is the
//!   wanted order; [`KeySpec::fast_path`] tells the engine when raw key bytes already are.
//! - [`GnuKind`]: how GNU sort compares a key (numeric, month, version, collated text...).
//! - The record programs: [`Filter`] (DFSORT `INCLUDE`/`OMIT`), [`Reformat`] compiled into a
//!   [`ReformatProgram`] (on RDW-prefixed records, `OUTREC BUILD` into a [`VarBuild`]),
//!   [`SumField`] and [`GroupSum`], [`Outfil`] compiled into an [`OutfilProgram`], and the
//!   [`JoinSpec`] of a JOINKEYS job.
//! - [`SortSpec`]: what is sorted (layout, key, filter, duplicate removal, mode), the one model
//!   every front end builds; [`SortSpec::compile`] turns it into the [`SortKey`] the engine
//!   calls per record.
//!
//! The languages that produce these (DFSORT control statements, nsort, GNU sort's command
//! line) live in the `oxsort-lang` crate. This crate does no I/O.
//!
//! ```
//! use oxsort_format::{FieldType, KeyField, KeySpec};
//!
//! // Bytes 1 to 3 as zoned decimal, descending.
//! let key = KeySpec::new(vec![KeyField::bytes(0, 3, FieldType::Zoned, true)]).unwrap();
//! let (mut a, mut b) = (Vec::new(), Vec::new());
//! key.normalize(b"042xy", &mut a).unwrap();
//! key.normalize(b"100ab", &mut b).unwrap();
//! assert!(b < a, "100 sorts before 042 when descending");
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod column_key;
mod columns;
mod decimal;
mod error;
mod float;
mod gnu_key;
mod layout;
mod normalize;
mod program;
pub use normalize::FixedKey;
mod sort_spec;
mod spec;

pub use column_key::ColumnKey;
pub use columns::{ColumnEnd, ColumnSpan};
pub use error::{KeyError, Location, ParseError, SpecError};
pub use gnu_key::{
    collating, gnu_general_len, gnu_month_len, set_collator, set_collator_start, set_month_names,
    set_primary_weights, Collator, CollatorStart, GnuIgnore, GnuKind, GnuOrder, PrimaryWeights,
};
pub use layout::{
    rdw_len, rdw_problem, RecordLayout, Records, BENCHMARK_RECORD_SIZE, MAX_RECORD_SIZE, RDW_BYTES,
};
pub use program::edit::{EditMask, NumFormat, PatternError, Signs, MASKS};
pub use program::filter::{field_pair_comparable, CompareOp, Condition, FieldRef, Filter, Operand};
pub use program::join::{JoinInput, JoinItem, JoinKey, JoinSide, JoinSpec, JoinSpecError};
pub use program::lookup::{Lookup, LookupSet};
pub use program::outfil::{
    CountForm, Outfil, OutfilOutput, OutfilProgram, ReportItem, ReportLine, Router, Split,
    COUNT_DIGITS,
};
pub use program::reformat::{
    Edit, FindRep, FindRepRule, IfThen, Item, ParseField, ParseStart, Placed, Reformat,
    ReformatProgram, Scratch, SeqFormat, Seqnum, Stage, Tran, When, PARSED_BASE,
};
pub use program::sum::{max_digits, Added, ConvTo, GroupSum, SumField, SumKind};
pub use program::vbuild::VarBuild;
pub use sort_spec::{KeyKind, Mode, SortKey, SortSpec};
/// The alternate collating sequence of `AQ` fields when no `ALTSEQ` statement changes it.
pub use spec::IDENTITY as ALTSEQ_IDENTITY;
pub use spec::{
    Endian, FastKey, FieldLoc, FieldType, KeyField, KeySpec, Prefix, ShortFields, PREFIX_BYTES,
};

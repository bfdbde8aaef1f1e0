//! Record layouts, sort keys and their front ends for oxsort.
//!
//! - [`RecordLayout`]: fixed-size records (the 100-byte benchmark record by default), records
//!   ended by a byte (`\n`, NUL), or RDW-prefixed variable records (z/OS `RECFM=VB`).
//! - [`KeySpec`]: the key, a list of [`KeyField`]s (position, [`FieldType`], direction).
//!   [`KeySpec::normalize`] turns a record's key into bytes whose plain byte order is the
//!   wanted order; [`KeySpec::fast_path`] tells the engine when raw key bytes already are.
//! - Front ends that all produce a [`KeySpec`]: DFSORT control statements
//!   ([`parse_control`], [`parse_fields`]), nsort command lines ([`parse_nsort`],
//!   [`parse_nsort_spec`]) and GNU sort flags ([`parse_gnu_args`]).
//! - [`Filter`]: DFSORT `INCLUDE`/`OMIT` conditions evaluated on records.
//! - [`Reformat`]: DFSORT `INREC`/`OUTREC` reshaping, compiled into a [`ReformatProgram`]
//!   (on RDW-prefixed records, `OUTREC BUILD` into a [`VarBuild`]).
//! - [`Outfil`]: DFSORT `OUTFIL` groups of outputs, compiled into an [`OutfilProgram`].
//! - [`SortSpec`]: what is sorted (layout, key, filter, duplicate removal, mode), the one model
//!   every front end builds; [`SortSpec::compile`] turns it into the [`SortKey`] the engine
//!   calls per record.
//!
//! The crate does no I/O: specification files are passed in as text.
//!
//! ```
//! use oxsort_format::parse_control;
//!
//! let control = parse_control(" SORT FIELDS=(1,3,ZD,D,4,2,CH,A)").unwrap();
//! let key = control.key.unwrap();
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
mod dfsort;
mod edit;
mod error;
mod filter;
mod gnu;
mod gnu_key;
mod gnu_spec;
mod join;
mod layout;
mod normalize;
pub use normalize::FixedKey;
mod nsort;
mod outfil;
mod reformat;
mod sort_spec;
mod sources;
mod spec;
mod sum;
mod vbuild;

pub use column_key::ColumnKey;
pub use columns::{ColumnEnd, ColumnSpan};
pub use dfsort::{parse_control, parse_fields, parse_join_input_control, Control};
pub use edit::{EditMask, NumFormat, PatternError, Signs};
pub use error::{KeyError, Location, ParseError, SpecError};
pub use filter::{CompareOp, Condition, FieldRef, Filter, Operand};
pub use gnu::{parse_gnu_args, GnuSort};
pub use gnu_key::{
    collating, gnu_general_len, gnu_month_len, set_collator, set_month_names, set_primary_weights,
    Collator, GnuIgnore, GnuKind, GnuOrder, PrimaryWeights,
};
pub use gnu_spec::{Blanks, GnuKey, GnuKeyError, GnuOptions};
pub use join::{JoinInput, JoinItem, JoinKey, JoinSide, JoinSpec, JoinSpecError};
pub use layout::{
    rdw_len, rdw_problem, RecordLayout, Records, BENCHMARK_RECORD_SIZE, MAX_RECORD_SIZE, RDW_BYTES,
};
pub use nsort::{
    parse_nsort, parse_nsort_spec, parse_nsort_with, NsortCommand, NsortFile, NsortMethod,
};
pub use outfil::{
    CountForm, Outfil, OutfilOutput, OutfilProgram, ReportItem, ReportLine, Router, Split,
    COUNT_DIGITS,
};
pub use reformat::{
    Edit, FindRep, IfThen, Item, ParseField, ParseStart, Placed, Reformat, ReformatProgram,
    Scratch, SeqFormat, Seqnum, Stage, Tran, When, PARSED_BASE,
};
pub use sort_spec::{KeyKind, Mode, SortKey, SortSpec};
pub use sources::{ReconcileError, SourceConflict, SpecSources};
pub use spec::{
    Endian, FastKey, FieldLoc, FieldType, KeyField, KeySpec, Prefix, ShortFields, PREFIX_BYTES,
};
pub use sum::{Added, ConvTo, GroupSum, SumField, SumKind};
pub use vbuild::VarBuild;

//! The languages people write sorts in, parsed into oxsort's record and key model.
//!
//! Text goes in and an [`oxsort_format::SortSpec`] (or the parts it is built from) comes out.
//! This crate reads no file: where a language includes files (nsort's `-specification=`),
//! the caller passes a reader in.
//!
//! - DFSORT control statements: [`parse_control`] into a [`Control`], [`parse_fields`] for a
//!   key in DFSORT's field syntax, [`parse_join_input_control`] for a JOINKEYS side's
//!   statements; [`jcl`] for the DD statements of a JCL step (data set names, record formats).
//! - GCSORT's command form (GnuCOBOL's sort): [`gcsort_statements`] joins its arguments,
//!   [`parse_gcsort`] reads its free-form statements into a [`GcsortJob`] (its USE and GIVE
//!   files and the DFSORT statements), TAKE files read through the caller's [`GcsortFiles`].
//! - nsort's command line and specification files: [`parse_nsort`], [`parse_nsort_with`],
//!   [`parse_nsort_spec`] into an [`NsortCommand`].
//! - GNU sort's command line: [`GnuArgs`] (glibc's `getopt_long` model, typed
//!   [`GnuArgError`]s), and its keys: [`GnuKey`] and [`GnuOptions`], which build the key GNU
//!   sort would use.
//! - [`parse_bytes`]: sizes as users write them (`512M`, `1.5G`).
//! - [`SpecSources`]: the places a sort's description came from, reconciled into one
//!   `SortSpec`; conflicts come back as a typed [`SourceConflict`].
//!
//! ```
//! use oxsort_lang::parse_control;
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

mod dfsort;
mod gcsort;
pub mod gnu;
mod nsort;
mod size;
mod sources;

pub use dfsort::jcl;
pub use dfsort::{
    civil_date, parse_control, parse_fields, parse_join_input_control, split_operands, Control,
};
pub use gcsort::{
    gcsort_rules, gcsort_statements, parse_gcsort, FileStatementError, GcsortError, GcsortFile,
    GcsortFiles, GcsortJob, GcsortJoinFiles, GcsortOrg, GcsortSortFiles, StatementAt,
    MAX_TAKE_DEPTH,
};
pub use gnu::{Blanks, GnuArgError, GnuArgs, GnuCheck, GnuEnv, GnuKey, GnuKeyError, GnuOptions};
pub use nsort::{
    parse_nsort, parse_nsort_spec, parse_nsort_with, NsortCommand, NsortFile, NsortMethod,
};
pub use size::{parse_bytes, SizeError};
pub use sources::{ReconcileError, SourceConflict, SpecSources, Vocabulary};

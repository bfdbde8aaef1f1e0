//! The record programs the engine runs per record: what DFSORT's statements compile into.
//!
//! ```text
//!  filter   INCLUDE/OMIT conditions          ─► Filter::keep
//!  reformat INREC/OUTREC BUILD, OVERLAY, ... ─► ReformatProgram::apply
//!  findrep_gcsort  FINDREP as GCSORT runs it (oxsort gcsort)
//!  lookup   CHANGE=/NOMATCH= lookup items of reformat
//!  edit     edit masks and numeric formats used by reformat and OUTFIL
//!  sum      SUM FIELDS= additions            ─► GroupSum
//!  outfil   OUTFIL groups of outputs         ─► OutfilProgram, Router
//!  vbuild   OUTREC BUILD on RDW-prefixed records ─► VarBuild
//!  join     JOINKEYS, JOIN and REFORMAT      ─► JoinSpec
//! ```
//!
//! The languages that write them live elsewhere; these modules hold what runs.

pub(crate) mod edit;
pub(crate) mod filter;
pub(crate) mod findrep_gcsort;
pub(crate) mod join;
pub(crate) mod lookup;
pub(crate) mod outfil;
pub(crate) mod reformat;
pub(crate) mod sum;
pub(crate) mod vbuild;

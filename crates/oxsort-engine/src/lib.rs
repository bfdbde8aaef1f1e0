//! oxsort-engine (placeholder until its issue builds it).
#![deny(missing_docs)]

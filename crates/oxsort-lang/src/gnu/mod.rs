//! GNU sort's language: its command line and the keys it writes.
//!
//! - [`GnuKey`] and [`GnuOptions`]: the keys as written (`-k POS1[,POS2]`, obsolete
//!   `+POS1 -POS2`, the global ordering options) and the
//!   [`KeySpec`](oxsort_format::KeySpec) they make.

mod spec;

pub use spec::{Blanks, GnuKey, GnuKeyError, GnuOptions};

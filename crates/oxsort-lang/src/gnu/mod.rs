//! GNU sort's language: its command line and the keys it writes.
//!
//! - [`GnuKey`] and [`GnuOptions`]: the keys as written (`-k POS1[,POS2]`, obsolete
//!   `+POS1 -POS2`, the global ordering options) and the
//!   [`KeySpec`](oxsort_format::KeySpec) they make.
//! - [`GnuArgs`]: the whole command line as glibc's `getopt_long` reads it, its mistakes as
//!   a typed [`GnuArgError`].

mod argv;
mod spec;

pub use argv::{GnuArgError, GnuArgs, GnuCheck, GnuEnv, NumberProblem, CHECK_WORDS, SORT_WORDS};
pub use spec::{Blanks, GnuKey, GnuKeyError, GnuOptions};

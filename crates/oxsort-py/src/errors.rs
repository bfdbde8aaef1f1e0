//! The exception hierarchy (`oxsort.Error` and its subclasses) and the mapping from the
//! engine's and gensort's typed errors to it. Messages are the CLI's.

use oxsort_engine::EngineError;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::PyAnyMethods;
use pyo3::{PyErr, Python};

create_exception!(_native, Error, PyException, "Every error of oxsort.");
create_exception!(
    _native,
    BadInputError,
    Error,
    "An input cannot be used: missing, unreadable, a partial record, a key that cannot be read."
);
create_exception!(
    _native,
    SpecError,
    Error,
    "The specification is wrong: a key or control statement that does not parse, conflicting \
     arguments, a budget too small."
);
create_exception!(
    _native,
    OutOfSpaceError,
    Error,
    "Not enough space for the temp files or the output."
);
create_exception!(
    _native,
    DisorderError,
    Error,
    "A merge input (or a checked file) is not in key order."
);

/// The Python exception of an engine error.
pub(crate) fn engine_error(e: EngineError) -> PyErr {
    let msg = chain(&e);
    match e {
        EngineError::Interrupted => PyKeyboardInterrupt::new_err(msg),
        EngineError::Config(_) | EngineError::MemoryTooSmall { .. } => SpecError::new_err(msg),
        EngineError::PartialRecord { .. }
        | EngineError::BadRdw { .. }
        | EngineError::Input { .. }
        | EngineError::Key { .. } => BadInputError::new_err(msg),
        EngineError::NoTempSpace { .. }
        | EngineError::NoOutputSpace { .. }
        | EngineError::TempFull { .. }
        | EngineError::Io(oxsort_io::IoError::NoSpace { .. }) => OutOfSpaceError::new_err(msg),
        EngineError::Unordered { path, record } => {
            let err = DisorderError::new_err(msg);
            Python::with_gil(|py| {
                // Where the disorder is, for `oxsort.check`; the message says it as well.
                let v = err.value(py);
                let _ = v.setattr("path", path);
                let _ = v.setattr("record", record);
            });
            err
        }
        _ => Error::new_err(msg),
    }
}

/// The Python exception of a gensort / valsort error (valsort's own messages).
pub(crate) fn gensort_error(e: oxsort_gensort::Error) -> PyErr {
    let msg = chain(&e);
    match e {
        oxsort_gensort::Error::Io { ref source, .. } if source.raw_os_error() == Some(28) => {
            OutOfSpaceError::new_err(msg)
        }
        oxsort_gensort::Error::Io { .. } => Error::new_err(msg),
        _ => BadInputError::new_err(msg),
    }
}

/// The error and its causes, each said once, as the CLI prints them.
fn chain(e: &dyn std::error::Error) -> String {
    oxsort_engine::error_message(e)
}

//! The exception hierarchy (`oxsort.Error` and its subclasses) and the mapping from the
//! engine's and gensort's typed errors to it. Messages are the CLI's.

use std::path::Path;

use oxsort_engine::EngineError;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::PyAnyMethods;
use pyo3::types::PyType;
use pyo3::{Bound, PyErr, PyResult, PyTypeInfo, Python};

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

/// An operating system's error as oxsort's exception `E` and Python's own for its errno
/// (`FileNotFoundError`, `PermissionError`, ...) at once, so `except OSError` catches it as
/// well as `except oxsort.Error` (`oxsort._errors.os_error` makes the class).
pub(crate) fn os_error<E: PyTypeInfo>(errno: i32, msg: String, path: &Path) -> PyErr {
    Python::with_gil(|py| {
        let base: Bound<'_, PyType> = py.get_type::<E>();
        let made = || -> PyResult<PyErr> {
            let make = py.import("oxsort._errors")?.getattr("os_error")?;
            let path = path.to_string_lossy().into_owned();
            Ok(PyErr::from_value(make.call1((base.clone(), errno, msg.clone(), path))?))
        };
        made().unwrap_or_else(|_| PyErr::from_type(base.clone(), msg.clone()))
    })
}

/// The Python exception of an engine error.
pub(crate) fn engine_error(e: EngineError) -> PyErr {
    let msg = chain(&e);
    match e {
        EngineError::Input { ref path, ref source } if source.raw_os_error().is_some() => {
            os_error::<BadInputError>(source.raw_os_error().unwrap_or(0), msg, path)
        }
        EngineError::Io(ref io) if !io.is_no_space() && io.raw_os_error().is_some() => {
            os_error::<Error>(io.raw_os_error().unwrap_or(0), msg, io.path())
        }
        EngineError::Interrupted => PyKeyboardInterrupt::new_err(msg),
        EngineError::Config(_)
        | EngineError::MemoryTooSmall { .. }
        | EngineError::NotResumable { .. }
        | EngineError::OutfilUnmapped { .. } => SpecError::new_err(msg),
        EngineError::PartialRecord { .. }
        | EngineError::BadRdw { .. }
        | EngineError::Data(_)
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

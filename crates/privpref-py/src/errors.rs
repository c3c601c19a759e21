//! The library's [`privpref::Error`] as a Python exception of `privpref.errors`.
//!
//! Every variant maps to one class (a subclass of `ValueError` for bad input, of `RuntimeError`
//! for a result that cannot be given), raised with the library's message and the variant's
//! fields as attributes (`input`, `row`, `column`, `name`, …).

use privpref::Error;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The Python exception for `e`: an instance of the class of `privpref.errors` that matches the
/// variant, with the library's message and the variant's fields as attributes.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    // If the errors module cannot be imported (a broken installation), that import error is
    // raised instead.
    build(py, &e).unwrap_or_else(|import_err| import_err)
}

fn build(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    let attrs = PyDict::new(py);
    let class = match e {
        Error::Data { input, at, kind } => {
            attrs.set_item("input", *input)?;
            attrs.set_item("row", at.row)?;
            attrs.set_item("column", at.col)?;
            attrs.set_item("kind", format!("{kind}"))?;
            "DataError"
        }
        Error::ReplicaData {
            input,
            replication,
            at,
            kind,
        } => {
            attrs.set_item("input", *input)?;
            attrs.set_item("replication", *replication)?;
            attrs.set_item("row", at.row)?;
            attrs.set_item("column", at.col)?;
            attrs.set_item("kind", format!("{kind}"))?;
            "DataError"
        }
        Error::GroupData { input, at, kind } => {
            attrs.set_item("input", *input)?;
            attrs.set_item("row", at.sample)?;
            attrs.set_item("alternative", at.row)?;
            attrs.set_item("column", at.col)?;
            attrs.set_item("kind", format!("{kind}"))?;
            "DataError"
        }
        Error::StateData {
            input,
            state,
            action,
            feature,
            kind,
        } => {
            attrs.set_item("input", *input)?;
            attrs.set_item("row", *state)?;
            attrs.set_item("action", *action)?;
            attrs.set_item("column", *feature)?;
            attrs.set_item("kind", format!("{kind}"))?;
            "DataError"
        }
        Error::FeatureBound { row, norm, limit } => {
            attrs.set_item("input", "x")?;
            attrs.set_item("row", *row)?;
            attrs.set_item("column", py.None())?;
            attrs.set_item("norm", *norm)?;
            attrs.set_item("limit", *limit)?;
            "DataError"
        }
        Error::GroupFeatureBound {
            sample,
            row,
            norm,
            limit,
        } => {
            attrs.set_item("input", "x")?;
            attrs.set_item("row", *sample)?;
            attrs.set_item("alternative", *row)?;
            attrs.set_item("column", py.None())?;
            attrs.set_item("norm", *norm)?;
            attrs.set_item("limit", *limit)?;
            "DataError"
        }
        Error::Shape(_) => "ShapeError",
        Error::InvalidParam { name, .. } => {
            attrs.set_item("name", *name)?;
            "ParameterError"
        }
        Error::Numerical(_) => "NumericalError",
        Error::Privacy(_) => "PrivacyError",
        Error::GuaranteeRefused {
            achieved, tolerance, ..
        } => {
            attrs.set_item("achieved", *achieved)?;
            attrs.set_item("tolerance", *tolerance)?;
            "GuaranteeRefusedError"
        }
        Error::ProvenanceMismatch { expected, found } => {
            attrs.set_item("expected", expected.as_str())?;
            attrs.set_item("found", found.as_str())?;
            "ProvenanceError"
        }
        Error::ProvenanceRecord(_) => "ProvenanceError",
        Error::NotConverged {
            solver,
            termination,
            kkt_residual,
            kkt_tol,
            iterations,
            ..
        } => {
            attrs.set_item("solver", *solver)?;
            attrs.set_item("termination", *termination)?;
            attrs.set_item("kkt_residual", *kkt_residual)?;
            attrs.set_item("kkt_tol", *kkt_tol)?;
            attrs.set_item("iterations", *iterations)?;
            "NotConvergedError"
        }
        Error::Io { path, .. } => {
            attrs.set_item("path", path.as_str())?;
            "FileError"
        }
        Error::MemoryLimit {
            what,
            needed,
            limit,
            alternative,
            ..
        } => {
            attrs.set_item("what", what.as_str())?;
            attrs.set_item("needed", *needed)?;
            attrs.set_item("limit", *limit)?;
            attrs.set_item("alternative", alternative.as_str())?;
            "MemoryLimitError"
        }
        // A variant added to the library later: the base class, with the message.
        _ => "PrivprefError",
    };
    let cls = py.import("privpref.errors")?.getattr(class)?;
    let value = cls.call1((e.to_string(),))?;
    for (k, v) in attrs.iter() {
        value.setattr(k.extract::<String>()?, v)?;
    }
    Ok(PyErr::from_value(value))
}

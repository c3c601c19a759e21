//! A library result as what the Python layer wraps: `theta` as a numpy array (the exact bits)
//! and everything else as the library's JSON (`serde` feature; the CLI's keys).

use numpy::{IntoPyArray, PyArray1};
use privpref::model::Fit;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use serde::Serialize;
use serde_json::{json, Value};

/// `(theta, json)` of a fit: the JSON is the library's serialisation of the [`Fit`] without
/// `theta`, plus `certificate` and `counts` (with `data_passes`, the passes over `X`) as their own objects and `refusal` (the reason a
/// central guarantee was refused, if it was).
pub fn fit_out<'py, D: Serialize>(py: Python<'py>, fit: Fit<D>) -> PyResult<(Bound<'py, PyArray1<f64>>, String)> {
    let mut v = serde_json::to_value(&fit).map_err(json_err)?;
    let obj = v.as_object_mut().expect("a Fit serialises as an object");
    obj.remove("theta");
    obj.insert(
        "certificate".into(),
        serde_json::to_value(&fit.report.certificate).map_err(json_err)?,
    );
    let mut counts = serde_json::to_value(&fit.report.counts).map_err(json_err)?;
    counts["data_passes"] = json!(fit.report.data_passes());
    obj.insert("counts".into(), counts);
    obj.insert("refusal".into(), json!(fit.refusal()));
    if let Some(Value::Object(r)) = obj.get_mut("report") {
        r.remove("theta");
    }
    Ok((fit.theta.into_pyarray(py), v.to_string()))
}

/// Any serialisable value as JSON text.
pub fn to_json<T: Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(json_err)
}

/// A serialisation failure as a `RuntimeError`.
pub fn json_err(e: serde_json::Error) -> PyErr {
    PyRuntimeError::new_err(format!("privpref: cannot serialise a result: {e}"))
}

//! `privpref._native`: the extension module behind the Python package `privpref`.
//!
//! Each function borrows the caller's numpy buffers in place, runs one library call with the
//! GIL released (`run::run`), and returns the result as `(theta, json)`: the estimate as a numpy
//! array and the rest as the library's JSON, which the Python layer turns into objects. The
//! Python package (`python/privpref`) is the public API; this module is its engine.

mod accounting;
mod arrays;
mod central;
mod errors;
mod fit;
mod label_sgd;
mod mechanisms;
mod options;
mod policy;
mod records;
mod results;
mod run;
mod user_level;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<mechanisms::Privatized>()?;
    m.add_function(wrap_pyfunction!(fit::fit, m)?)?;
    m.add_function(wrap_pyfunction!(fit::fit_kwise_dense, m)?)?;
    m.add_function(wrap_pyfunction!(fit::fit_dpo, m)?)?;
    m.add_function(wrap_pyfunction!(fit::_feature_address, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms::privatize_rr, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms::privatize_krr, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms::privatize_rr_top_k, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms::privatize_rr_with_prior, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms::privatize_user_rr, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms::asserted_labels, m)?)?;
    m.add_class::<records::PySigningKey>()?;
    m.add_function(wrap_pyfunction!(records::sign_record, m)?)?;
    m.add_function(wrap_pyfunction!(records::verify_record, m)?)?;
    central::register(m)?;
    accounting::register(m)?;
    policy::register(m)?;
    label_sgd::register(m)?;
    user_level::register(m)?;
    Ok(())
}

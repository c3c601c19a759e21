//! Label-private SGD (Ghazi et al. (2021)): LP-RR-SGD, RRTop-k, RR-with-prior, LP-Normal-SGD, multi-stage training.

use pyo3::prelude::*;

/// Adds this part's functions and classes to the module.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}

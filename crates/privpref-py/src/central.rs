//! Central DP: objective perturbation (Chowdhury, Zhou & Natarajan (2024), Algorithm 2), the private MLE and the private covariance ("Provable protection of human judgements" (anon., 2024), Algorithms 1 and 2).

use pyo3::prelude::*;

/// Adds this part's functions and classes to the module.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}

//! User-level label DP (Zhang et al. (2025)): user-level RR with the exact debiased estimator, user-wise DP-SGD, AUP-RLHF.

use pyo3::prelude::*;

/// Adds this part's functions and classes to the module.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}

//! The RDP accountant of the Poisson-subsampled Gaussian: (ε, δ) of T steps, and the smallest noise multiplier for a target ε.

use pyo3::prelude::*;

/// Adds this part's functions and classes to the module.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}

//! Pessimistic and greedy policies over a public state sample, with a certified duality gap.

use pyo3::prelude::*;

/// Adds this part's functions and classes to the module.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}

//! The neighbouring relations the accountant protects, and the per-step RDP of each.

use super::{check_noise_multiplier, check_order, replace_numeric_rdp, sgm_rdp};
use crate::error::{Error, Result};

/// The neighbouring relation the accountant protects (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Neighbours {
    /// Add/remove one unit: the Poisson-subsampled Gaussian of Mironov, Talwar & Zhang 2019.
    /// Paper-faithful; under-states the loss of user-level *label* DP (a replace relation).
    AddRemove,
    /// Replace one unit's contribution (`a → b`, both in the `C`-ball), **proven** bound through
    /// the weak triangle inequality:
    /// `ε(α) = ((α−½)/(α−1))·ε_SGM(2α) + ε_SGM(2α−1)` per step.
    #[default]
    Replace,
    /// Replace one unit, as the add/remove SGM with sensitivity `2C` (noise multiplier `σ/2`),
    /// a conservative-looking shortcut. Not proven for `q < 1` (see the module docs).
    ReplaceSensitivity2,
    /// Replace one unit, the antipodal pair by quadrature (numerical estimate, not a proof).
    ReplaceNumeric,
}

impl Neighbours {
    /// Parses the CLI name: `add-remove`, `replace`, `replace-sensitivity2`, `replace-numeric`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "add-remove" => Ok(Neighbours::AddRemove),
            "replace" => Ok(Neighbours::Replace),
            "replace-sensitivity2" => Ok(Neighbours::ReplaceSensitivity2),
            "replace-numeric" => Ok(Neighbours::ReplaceNumeric),
            other => Err(Error::param(
                "neighbours",
                format!(
                    "unknown relation `{other}` (expected add-remove, replace, replace-sensitivity2 or replace-numeric)"
                ),
            )),
        }
    }
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            Neighbours::AddRemove => "add-remove",
            Neighbours::Replace => "replace",
            Neighbours::ReplaceSensitivity2 => "replace-sensitivity2",
            Neighbours::ReplaceNumeric => "replace-numeric",
        }
    }
    /// Whether the bound is a theorem for its relation (`false` for the two replace variants
    /// that rest on numerical findings).
    pub fn proven(&self) -> bool {
        matches!(self, Neighbours::AddRemove | Neighbours::Replace)
    }
}

/// Per-step RDP at order `α` of one Poisson-subsampled Gaussian step for the given relation
/// (module docs): add/remove SGM; the proven replace bound
/// `((α−½)/(α−1))·ε_SGM(2α) + ε_SGM(2α−1)`; the SGM at `σ/2`; or the antipodal quadrature.
///
/// # Errors
/// As [`sgm_rdp`] and [`replace_numeric_rdp`].
pub fn step_rdp(q: f64, sigma: f64, alpha: f64, neighbours: Neighbours) -> Result<f64> {
    match neighbours {
        Neighbours::AddRemove => sgm_rdp(q, sigma, alpha),
        Neighbours::Replace => {
            check_order(alpha)?;
            let a = sgm_rdp(q, sigma, 2.0 * alpha)?;
            let b = sgm_rdp(q, sigma, 2.0 * alpha - 1.0)?;
            Ok((alpha - 0.5) / (alpha - 1.0) * a + b)
        }
        Neighbours::ReplaceSensitivity2 => {
            check_noise_multiplier(sigma)?;
            sgm_rdp(q, 0.5 * sigma, alpha)
        }
        Neighbours::ReplaceNumeric => replace_numeric_rdp(q, sigma, alpha),
    }
}

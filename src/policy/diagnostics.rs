//! The computable sub-optimality bound of pessimism and its coverage (concentrability) term.
//!
//! If `θ* ∈ C = {θ : ‖θ − θ̂‖_M ≤ Γ}`, `M = Σ + λI`, then the pessimistic policy `π̂` satisfies,
//! for every comparator `π†` and reference `v`,
//!
//! `SubOpt(π̂, π†) = J(π†) − J(π̂) ≤ 2Γ ‖g(π†)‖_{M⁻¹}`, `g(π†) = Σ_s ρ_s φ(s, π†(s)) − v`,
//!
//! which is bound (6) of Zhou, Wu & Orabona (2025) (Prop. 4.2, with `Σ̂`) and Thm 4.2 of
//! "Provable protection of human judgements" (anon., 2025) in the form its proof gives
//! (`2F‖(Σ̃ + λI)^{-1/2}g*‖` with `Σ̃`; the printed statement has `(Σ_D + λI)^{-1}` and no factor
//! 2; the `+B√λ` of its corrected Zhu-type bound is inside `F`, term `R1` of
//! [`super::radius::private_mle_radius`]). `‖g‖_{M⁻¹}` is the coverage term: how well the data
//! (through `M`) cover the direction in which `π†` departs from the reference.
//!
//! Everything here is computed from public inputs (the states, `ρ`, the reference, the released
//! `Σ`, `λ`, `Γ`) and a comparator chosen from them. The bound is guaranteed only when `Γ` is a
//! guaranteed radius and only on the event `θ* ∈ C`; with a data-driven radius
//! ([`super::empirical`]) it is as asymptotic as the radius.

use super::inner::eigh;
use super::states::{Reference, StateActions};
use crate::error::{Error, Result};

/// The bound of the module docs for one comparator.
#[derive(Debug, Clone, PartialEq)]
pub struct SubOptBound {
    /// `g = Σ_s ρ_s φ(s, π†(s)) − v`.
    pub direction: Vec<f64>,
    /// The coverage term `‖g‖_{M⁻¹} = √(gᵀ(Σ + λI)⁻¹g)` (Zhou, Wu & Orabona (2025), bound (6)).
    pub coverage_term: f64,
    /// `2Γ‖g‖_{M⁻¹}` (anon. (2025), Thm 4.2 as its proof gives; Zhou, Wu & Orabona (2025),
    /// bound (6)).
    pub bound: f64,
}

/// [`SubOptBound`] for the comparator `comparator` (any [`Reference`] form: one action per
/// state, a distribution, or its mean feature as a vector) against `reference`, with
/// `M = sigma + λI` (`sigma` row-major `d × d`, `None` for `0`) and radius `gamma = Γ`.
///
/// # Errors
/// Shapes and invalid comparator/reference (as [`StateActions::reference_vector`]), `λ < 0`,
/// `Γ < 0`, non-finite entries, `M` not positive definite.
pub fn suboptimality_bound(
    st: &StateActions<'_>,
    comparator: &Reference<'_>,
    reference: &Reference<'_>,
    sigma: Option<&[f64]>,
    lambda: f64,
    gamma: f64,
) -> Result<SubOptBound> {
    let d = st.d();
    if !(lambda.is_finite() && lambda >= 0.0) {
        return Err(Error::param("lambda", format!("must be finite and >= 0, got {lambda}")));
    }
    if !(gamma.is_finite() && gamma >= 0.0) {
        return Err(Error::param(
            "confidence-radius",
            format!("must be finite and >= 0, got {gamma}"),
        ));
    }
    let mut m = match sigma {
        Some(s) if s.len() == d * d => s.to_vec(),
        Some(s) => {
            return Err(Error::Shape(format!(
                "covariance has {} entries, expected d x d = {d} x {d}",
                s.len()
            )))
        }
        None => vec![0.0; d * d],
    };
    if m.iter().any(|v| !v.is_finite()) {
        return Err(Error::param("covariance", "non-finite entry"));
    }
    for i in 0..d {
        m[i * d + i] += lambda;
    }
    let pi = st.reference_vector(comparator)?;
    let v = st.reference_vector(reference)?;
    let g: Vec<f64> = pi.iter().zip(&v).map(|(a, b)| a - b).collect();
    let (lam, q) = eigh(&m, d)?;
    let top = lam.iter().cloned().fold(0.0, f64::max);
    if !(lam[0] > 1e-14 * top) {
        return Err(Error::param(
            "lambda",
            format!("Σ + λI is not positive definite (smallest eigenvalue {:e})", lam[0]),
        ));
    }
    // gᵀM⁻¹g = Σ_k (q_kᵀg)²/λ_k.
    let quad: f64 = (0..d)
        .map(|k| {
            let c: f64 = (0..d).map(|i| q[i * d + k] * g[i]).sum();
            c * c / lam[k]
        })
        .sum();
    let coverage_term = quad.sqrt();
    Ok(SubOptBound {
        direction: g,
        coverage_term,
        bound: 2.0 * gamma * coverage_term,
    })
}

//! Synthetic data for simulations (the setting of Chowdhury, Zhou & Natarajan (2024), Sec. 2 and
//! Sec. 6).
//!
//! * [`theta_star`]: a true parameter `θ*` with a Gaussian direction and an exact norm, optionally
//!   in the sum-zero subspace `{1ᵀθ = 0}` of `Θ_B` (Assumption 2.1(a)).
//! * [`btl_pairs`]: BTL (logistic) preferences, `P(y = 1 | x) = σ(xᵀθ*)` (eq. 1).
//! * [`thurstone_pairs`]: Thurstone (probit) preferences, `P(y = 1 | x) = Φ(xᵀθ*)` (Sec. 4.4).
//! * [`power_law_pairs`]: BTL preferences on an ill-conditioned design, features with a rotated
//!   power-law covariance (the shape of language-model embeddings; no axis scaling removes it).
//! * [`bandit`]: contextual bandits with a coverage knob for pessimistic policy optimisation.
//! * [`btl_users`]: user-level BTL data, `n` users × `m_u` comparisons with a [`UserIndex`](crate::data::UserIndex)
//!   (Zhang et al. (2025), Sec. 3.1), Gaussian or fixed-norm (sphere) features.
//! * [`pl_groups`]: Plackett–Luce K-wise rankings (and top-1 choices), `P(o_0 = k) =
//!   softmax(Φθ*)_k` (Chowdhury, Zhou & Natarajan (2024), eq. 11; "Provable protection of human
//!   judgements" (anon., 2025), Sec. 4.2).
//! * [`class_mixture`]: K-class Gaussian-mixture data whose posterior is exactly a linear
//!   softmax model `softmax(W* x)` (for the convex label-private learning of Ghazi et al. (2021)).
//!
//! Features follow Sec. 6 of Chowdhury, Zhou & Natarajan (2024) read literally: state–action
//! features `φ⁰ = φ(s, a⁰)` and `φ¹ = φ(s, a¹)` are i.i.d. `N(0, I_d)` and `x = φ¹ − φ⁰ ~ N(0, 2
//! I_d)`; `y = 1` means `a¹` is preferred.
//!
//! **Reproducibility.** Every generator takes the RNG explicitly and consumes it in a fixed,
//! documented order, so the same seed ([`simulation_rng`](crate::mechanism::simulation_rng))
//! gives bit-identical data on every platform. Simulated labels are *clear* labels; privatise
//! them with a [`Mechanism`](crate::mechanism::Mechanism) as a separate step.

pub mod bandit;
mod btl;
pub mod corrupt;
mod design;
pub mod dpo;
mod multiclass;
mod pl;
mod users;

pub use btl::{btl_pairs, thurstone_pairs};
pub use design::power_law_pairs;
pub use multiclass::{class_means, class_mixture, ClassMixture};
pub use pl::pl_groups;
pub use users::{btl_users, btl_users_equal, UserFeatures, UserLevelData};

use crate::error::{Error, Result};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// How many Gaussian directions [`theta_star`] tries before giving up on a zero norm (which has
/// probability zero; the loop exists so that the function is total).
const MAX_DIRECTION_DRAWS: usize = 64;

/// A true parameter `θ* = norm · v / ‖v‖₂` with a uniformly random direction:
/// `g ~ N(0, I_d)`, `v = P g = g − ḡ 1` (the centring projector) when `sum_zero`, else
/// `v = g`. Then `‖θ*‖₂ = norm` and, with `sum_zero`, `1ᵀθ* = 0` (both to rounding), so
/// `θ* ∈ Θ_B` for every `B ≥ norm` (Chowdhury, Zhou & Natarajan, AISTATS 2024, Assumption
/// 2.1(a)). The paper's Sec. 6 draws `θ* ~ N(0, I_d)`, which is neither sum-zero nor bounded
/// (so it is in no `Θ_B`); this generator makes both explicit.
///
/// Draw order: `d` standard normals `g_0, …, g_{d−1}` (`rand_distr::StandardNormal`), in index
/// order; redrawn in the same way in the probability-zero event `‖v‖ = 0`.
///
/// # Errors
/// [`Error::InvalidParam`] if `d = 0`, if `sum_zero` with `d = 1` (the subspace is `{0}`), or if
/// `norm` is not finite and `> 0`.
pub fn theta_star<R: Rng + ?Sized>(d: usize, norm: f64, sum_zero: bool, rng: &mut R) -> Result<Vec<f64>> {
    if d == 0 {
        return Err(Error::param("d", "must be >= 1, got 0"));
    }
    if sum_zero && d < 2 {
        return Err(Error::param(
            "d",
            "must be >= 2 with sum_zero (the sum-zero subspace of R^1 is {0})",
        ));
    }
    if !(norm.is_finite() && norm > 0.0) {
        return Err(Error::param("norm", format!("must be finite and > 0, got {norm}")));
    }
    let mut v = vec![0.0; d];
    for _ in 0..MAX_DIRECTION_DRAWS {
        for vj in v.iter_mut() {
            *vj = StandardNormal.sample(rng);
        }
        if sum_zero {
            let mean = v.iter().sum::<f64>() / d as f64;
            v.iter_mut().for_each(|vj| *vj -= mean);
        }
        let len = v.iter().map(|vj| vj * vj).sum::<f64>().sqrt();
        if len > 0.0 && len.is_finite() {
            // Unit vector first, then scale: no overflow even for norm near f64::MAX.
            v.iter_mut().for_each(|vj| *vj = *vj / len * norm);
            return Ok(v);
        }
    }
    Err(Error::Numerical(format!(
        "theta_star: {MAX_DIRECTION_DRAWS} Gaussian directions all had zero length"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    #[test]
    fn exact_norm_and_sum_zero() {
        let mut rng = simulation_rng(11);
        for &d in &[1usize, 2, 3, 5, 10, 100, 1000] {
            for &norm in &[1e-300, 1e-3, 1.0, 2.5, 1e5, 1e300] {
                for sum_zero in [false, true] {
                    if sum_zero && d == 1 {
                        continue;
                    }
                    let t = theta_star(d, norm, sum_zero, &mut rng).unwrap();
                    assert_eq!(t.len(), d);
                    // Norm in scaled form (no overflow or underflow at 1e±300).
                    let m = t.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                    let len = m * t.iter().map(|v| (v / m) * (v / m)).sum::<f64>().sqrt();
                    assert!((len / norm - 1.0).abs() < 1e-14, "d={d} norm={norm}: {len}");
                    if sum_zero {
                        let s: f64 = t.iter().map(|v| v / norm).sum();
                        assert!(s.abs() < 1e-14 * d as f64, "d={d}: sum/norm = {s}");
                    }
                }
            }
        }
    }

    #[test]
    fn d1_without_sum_zero_is_plus_or_minus_norm() {
        let mut rng = simulation_rng(5);
        let t = theta_star(1, 3.0, false, &mut rng).unwrap();
        assert_eq!(t[0].abs(), 3.0);
    }

    #[test]
    fn invalid_parameters() {
        let mut rng = simulation_rng(0);
        let name = |r: Result<Vec<f64>>| match r {
            Err(Error::InvalidParam { name, .. }) => name,
            other => panic!("expected InvalidParam, got {other:?}"),
        };
        assert_eq!(name(theta_star(0, 1.0, false, &mut rng)), "d");
        assert_eq!(name(theta_star(1, 1.0, true, &mut rng)), "d");
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(name(theta_star(3, bad, true, &mut rng)), "norm");
        }
    }

    #[test]
    fn reproducible_and_direction_is_isotropic_on_average() {
        let a = theta_star(5, 1.0, true, &mut simulation_rng(9)).unwrap();
        let b = theta_star(5, 1.0, true, &mut simulation_rng(9)).unwrap();
        let c = theta_star(5, 1.0, true, &mut simulation_rng(10)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        // E[θθᵀ] = norm² P/(d−1) for the sum-zero direction: check the diagonal.
        let (d, reps) = (4usize, 20_000);
        let mut rng = simulation_rng(1);
        let mut diag = vec![0.0; d];
        for _ in 0..reps {
            let t = theta_star(d, 1.0, true, &mut rng).unwrap();
            diag.iter_mut().zip(&t).for_each(|(s, v)| *s += v * v);
        }
        // Target (1 − 1/d)/(d − 1) = 1/d; Var(θ_j²) ≤ 1, so 5σ ≤ 5/sqrt(reps) ≈ 0.035.
        for s in diag {
            assert!((s / reps as f64 - 1.0 / d as f64).abs() < 0.02, "{s}");
        }
    }
}

//! The K-wise (Plackett–Luce) constants of the private MLE and the private covariance of
//! "Provable protection of human judgements" (anon., 2025), Sec. 4.2, Thm 4.3 (App. B). The paper
//! says only that Algorithm 1 runs "with parameters modified by a constant factor" depending on
//! `K` and prints loose or wrong constants; every constant here is derived below for items with
//! `‖φ(s, a)‖ ≤ L` (`L` = [`FeatureBound::value`]) and a loss of `J` ranked stages (`J = K − 1`:
//! full ranking; `J = 1`: top-1 choice), `p^{(j)}` the softmax of stage `j` over the items not
//! yet ranked, `P_j` the item ranked `j`-th and `μ_j = Σ_k p^{(j)}_k P_k`:
//!
//! * **gradient** `∇ℓ = Σ_{j≤J} (μ_j − P_j)` with `‖μ_j − P_j‖ = ‖Σ_k p^{(j)}_k (P_k − P_j)‖ ≤
//!   2L`, so `G = 2JL` (the paper's Lemma B.3 prints `2K²L`: valid, loose; its Claim B.1 weights
//!   are wrong). The supremum over `θ ∈ ℝ^d`: items on a line, the last-ranked at `+L`, the
//!   others at `−L`, `θ → ∞` along the line;
//! * **Hessian** `∇²ℓ = Σ_{j≤J} Cov_{p^{(j)}}(P)`, each stage's trace `E‖P − μ‖² ≤ L²` and
//!   operator norm `≤ L²` (Popoviciu), so `T = JL²` (Lemma B.3: `4K³L²`). The supremum: the two
//!   last-ranked items at `±L` along one line, the others pushed to probability 0;
//! * **curvature** `γ_K` ([`kwise_curvature`]), from stage 1 alone;
//! * **covariance sensitivity** ([`kwise_covariance_sensitivity`]): Frobenius, `2K/(K−1)·L²/n`
//!   per sample, not the paper's `4K³L²/n` (Lemma B.5, in the operator norm).
//!
//! Algorithm 1 then takes `s_b = √(40 G² ln(1/δ))/ε` and the privacy floor `α ≥ 4T/(εn)` of the
//! pairwise case ([`super::calibrate::calibrate_private_mle`]): objective perturbation with
//! per-sample Hessians of rank up to `K − 1` needs only the trace bound `T` (the log-determinant
//! ratio of neighbouring Jacobians is `≤ T/(2nα)`), which is the paper's "constant factor" made
//! explicit. With `K = 2` every constant is the pairwise one, bit for bit.

use super::calibrate::{
    calibrate_with, check_budget_001, check_private_mle_params, covariance_sensitivity, gaussian_mechanism_std,
    logistic_curvature, LossConstants, PrivateMleCalibration, PrivateMleParams,
};
use super::guarantee::Neighbouring;
use crate::data::FeatureBound;
use crate::error::{Error, Result};

/// Checks `2 ≤ K ≤ 256` and `1 ≤ J ≤ K − 1`.
pub(crate) fn check_k_stages(k: usize, stages: usize) -> Result<()> {
    if !(2..=crate::data::group::MAX_K).contains(&k) {
        return Err(Error::param(
            "k",
            format!("K-wise data need 2 <= K <= {}, got {k}", crate::data::group::MAX_K),
        ));
    }
    if !(1..k).contains(&stages) {
        return Err(Error::param(
            "top",
            format!(
                "a Plackett-Luce loss over K = {k} alternatives ranks 1..={} stages, got {stages}",
                k - 1
            ),
        ));
    }
    Ok(())
}

/// Per-sample gradient bound `G = 2JL` of the Plackett–Luce loss of `J` ranked stages, for items
/// with `‖φ‖ ≤ L` (module docs; `J = 1`: `2L`, the BTL bound).
pub fn pl_gradient_bound(stages: usize, bound: FeatureBound) -> f64 {
    2.0 * stages as f64 * bound.value()
}

/// Per-sample bound `T = JL²` on the trace and the operator norm of the Hessian of the
/// Plackett–Luce loss of `J` stages (module docs; `J = 1`: `L²`, the BTL bound).
pub fn pl_hessian_trace_bound(stages: usize, bound: FeatureBound) -> f64 {
    let l = bound.value();
    stages as f64 * (l * l)
}

/// The curvature floor `γ_K` of the Plackett–Luce loss over `Θ_B = {‖θ‖ ≤ B}`: for every sample
/// and `θ ∈ Θ_B`, `∇²ℓ_i(θ) ⪰ γ_K · (2/(K(K−1))) Σ_{k<l} (φ_k − φ_l)(φ_k − φ_l)ᵀ` (the sample's
/// term of `Σ_{D_K}`). Stage 1 alone gives it: `Cov_p(φ) = Σ_{k<l} p_k p_l x_kl x_klᵀ` and, with
/// every score `|u_k| ≤ LB`, `min p_k p_l` is attained at a corner of the score box (the log of
/// `ab/(a+b+R)²` is concave in `log a` and `log b`), so with `c = e^{LB}`
///
/// `γ_K = (K(K−1)/2) · min{ 1/(2 + (K−2)c²)², 1/((K−1)c + 1/c)², 1/K² }`.
///
/// For `K = 2` this is the BTL `γ = 1/(2 + e^{2LB} + e^{−2LB})` ([`logistic_curvature`], returned
/// as is). The paper's eq. (19) prints `½e^{−4LB}`, which is false (`K = 2`, `θ = 0`: the ratio
/// is `1/4`); the looser `(K−1)e^{−4LB}/(2K)` also holds. A ranking loss adds further positive
/// semi-definite stages, so the bound holds for every `J`. Used for `α = max(2γλ, α_min)`
/// (utility, not privacy).
pub fn kwise_curvature(l: f64, radius: f64, k: usize) -> f64 {
    if k <= 2 {
        return logistic_curvature(l, radius);
    }
    let kf = k as f64;
    let c = (l * radius).exp();
    let a = 1.0 / (2.0 + (kf - 2.0) * c * c).powi(2);
    let b = 1.0 / ((kf - 1.0) * c + 1.0 / c).powi(2);
    let pair = a.min(b).min(1.0 / (kf * kf));
    0.5 * kf * (kf - 1.0) * pair
}

/// ℓ₂ (Frobenius) sensitivity of `Σ_{D_K} = (2/(nK(K−1))) Σ_i Σ_{j<k} (φ_ij − φ_ik)(φ_ij −
/// φ_ik)ᵀ` ("Provable protection of human judgements" (anon., 2025), Sec. 4.2) with `‖φ‖ ≤ L`.
/// A sample's term is `C = (2/(n(K−1))) Σ_k (φ_k − φ̄)(φ_k − φ̄)ᵀ ⪰ 0`, so
/// `‖C‖_F ≤ tr C ≤ (2/(n(K−1)))·K L²`: **`2K L²/((K−1)n)`** for add/remove and `√2` times that
/// for replace-one (`⟨C, C'⟩_F ≥ 0`), i.e. the pairwise [`covariance_sensitivity`] times
/// `K/(2(K−1))` (exactly 1 at `K = 2`). Attained for even `K` (half the items at `+Le`, half at
/// `−Le`; replace-one: the replacement along an orthogonal line); for odd `K` the largest
/// value is at most `K²/(K² − 1)` times smaller (measured by enumeration, not proved tight). The
/// paper's Lemma B.5 bounds the operator norm by `4K³L²/n` (`s_G² ∝ K⁶`): valid for the operator
/// norm, but the Gaussian mechanism needs the Frobenius norm, and `K³` is far from tight.
/// Under label change `Σ_{D_K}` does not depend on the rankings at all: that relation is
/// rejected (the matrix is then public and needs no noise).
///
/// # Errors
/// [`Error::Shape`] for `n = 0`; [`Error::InvalidParam`] for `K` outside `2..=256` or the
/// label-change relation.
pub fn kwise_covariance_sensitivity(bound: FeatureBound, n: usize, k: usize, relation: Neighbouring) -> Result<f64> {
    check_k_stages(k, 1)?;
    let base = covariance_sensitivity(bound, n, relation)?;
    let kf = k as f64;
    Ok(base * (kf / (2.0 * (kf - 1.0))))
}

/// The noise of the private `Σ̃_{D_K}`: the classic Gaussian mechanism at `(ε/2, δ/2)` with the
/// Frobenius sensitivity of [`kwise_covariance_sensitivity`],
/// `s_G = Δ₂ √(2 ln(1.25/(δ/2))) / (ε/2)` (as [`super::calibrate::private_covariance_std`]; the
/// paper's `s_G² = 64 ln(1/δ) K⁶L⁴/(ε²n²)`, Lemma B.5, rests on the operator norm and the
/// under-calibrated constant 64).
///
/// # Errors
/// [`Error::InvalidParam`] for `ε ∉ (0, 1]`, `δ ∉ (0, 1)`, an invalid `K` or relation;
/// [`Error::Shape`] for `n = 0`.
pub fn kwise_covariance_std(
    eps: f64,
    delta: f64,
    bound: FeatureBound,
    n: usize,
    k: usize,
    relation: Neighbouring,
) -> Result<f64> {
    check_budget_001(eps, delta)?;
    let sens = kwise_covariance_sensitivity(bound, n, k, relation)?;
    gaussian_mechanism_std(sens, eps / 2.0, delta / 2.0)
}

/// The constants of Algorithm 1 for the Plackett–Luce loss of `stages = J` ranked stages over
/// `K = k` alternatives (module docs): `G = 2JL`, `T = JL²`, `γ_K`, and `λ` from the `s_G` of
/// [`kwise_covariance_std`]; then `s_b`, `α = max(2γ_Kλ, 4T/(εn))`, `β`, `ν` exactly as
/// [`super::calibrate::calibrate_private_mle`]. For `K = 2, J = 1` the result is that of
/// `calibrate_private_mle`, bit for bit.
///
/// # Errors
/// Those of `calibrate_private_mle`, and [`Error::InvalidParam`] for `K ∉ 2..=256` (`k`) or
/// `J ∉ 1..K` (`top`).
pub fn calibrate_kwise_private_mle(p: &PrivateMleParams, k: usize, stages: usize) -> Result<PrivateMleCalibration> {
    check_private_mle_params(p)?;
    check_k_stages(k, stages)?;
    let constants = LossConstants {
        grad_bound: pl_gradient_bound(stages, p.feature_bound),
        hessian_trace_bound: pl_hessian_trace_bound(stages, p.feature_bound),
        gamma: kwise_curvature(p.feature_bound.value(), p.radius, k),
        covariance_noise_std: kwise_covariance_std(p.eps, p.delta, p.feature_bound, p.n, k, p.relation)?,
    };
    calibrate_with(p, constants)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k2_is_the_pairwise_calibration() {
        let fb = FeatureBound::pairwise(1.3).unwrap();
        let p = PrivateMleParams::new(0.7, 1e-7, fb, 2.0, 1000, 4);
        assert_eq!(
            calibrate_kwise_private_mle(&p, 2, 1).unwrap(),
            super::super::calibrate::calibrate_private_mle(&p).unwrap()
        );
        assert!(calibrate_kwise_private_mle(&p, 3, 3).is_err());
        assert!(calibrate_kwise_private_mle(&p, 1, 1).is_err());
    }
}

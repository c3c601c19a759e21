//! The K-wise private MLE and private covariance of "Provable protection of human judgements"
//! (anon., 2025), Sec. 4.2, Thm 4.3 (App. B): Algorithms 1 and 2 on Plackett–Luce data, with the
//! `K`-dependent constants the paper leaves as "a constant factor" derived in
//! [`crate::privacy::calibrate_kwise`].
//!
//! * [`private_mle_kwise`] — Algorithm 1 on the Plackett–Luce negative log-likelihood
//!   `ℓ_{D_K}(θ) = (1/n) Σ_i Σ_{j≤J} [log Σ_{k≥j} e^{⟨θ, φ_{i,o_k}⟩} − ⟨θ, φ_{i,o_j}⟩]` (`J = K − 1`:
//!   the paper's full ranking; `pl-top1`: `J = 1`; top-`J` rankings): `b ~ N(0, s_b² I)`,
//!   `ℓ̃(θ) = ℓ_{D_K}(θ) + α‖θ‖² + ⟨b, θ⟩/n`, a minimiser over `Θ_B` certified to within `β`
//!   (Frank–Wolfe / strong-convexity gap, as for pairs), released as `θ̃ = θ̂ + w`,
//!   `w ~ N(0, ν² I)`. The constants: `G = 2JL` in `s_b`, `α = max(2γ_Kλ, 4JL²/(εn))`,
//!   `β = min(1/n, α/(dn²))`, `ν² = 40β ln(1/δ)/(αε²)`. Spends `(ε/2, δ/2)`.
//! * [`private_covariance_kwise`] — Algorithm 2 on
//!   `Σ_{D_K} = (2/(nK(K−1))) Σ_i Σ_{j<k} (φ_ij − φ_ik)(φ_ij − φ_ik)ᵀ` (all pairs in the original
//!   order of the alternatives, [`kwise_data_covariance`]): `Σ̃_{D_K} = Σ_{D_K} + G_sym`,
//!   classic Gaussian mechanism at `(ε/2, δ/2)` with the Frobenius sensitivity
//!   `√2·2K L²/((K−1)n)` (replace-one), then the eigenvalue floor. Spends `(ε/2, δ/2)`; the pair
//!   `(θ̃, Σ̃_{D_K})` composes to `(ε, δ)` (Thm 4.3), and Algorithm 3 on it is post-processing
//!   (Thm 4.4: [`crate::policy`] with the K-wise pair).
//!
//! **What is private.** As in the paper (Def. 2.2), a sample — the state, its `K` alternatives
//! and the ranking — is one record, and neighbouring datasets replace one record: standard DP,
//! with the a-priori bound `‖φ‖ ≤ L` on every alternative (rows above it are an error). When the
//! alternatives are public and only the rankings are private, this implies label DP. `Σ_{D_K}`
//! **does not depend on the rankings** (it sums over all pairs of alternatives in their original
//! order): with public alternatives it is public and needs no noise. It is noised here because
//! the paper's relation makes the alternatives private; a caller whose alternatives are public
//! can use [`kwise_data_covariance`] itself.
//!
//! **K = 2** gives the pairwise [`super::private_mle`] exactly: the same calibration bits, the
//! same noise draws, the same minimiser up to rounding (`tests/library/private_kwise.rs`).

use super::private_mle::{
    check_covariance_delta, check_covariance_memory, check_eigen_floor, covariance_guarantee_with, floor_eigenvalues,
    gap_certificate, release, solver_control, CovarianceOptions, PrivateCovariance, PrivateMleDetail,
    PrivateMleOptions, Release,
};
use crate::data::{FeatureBound, GroupView};
use crate::error::{Error, Result};
use crate::kernels::group::pair_covariance;
use crate::loss::GroupLossSpec;
use crate::model::{Fit, FitConfig};
use crate::objective::GroupObjective;
use crate::par::Par;
use crate::privacy::calibrate_kwise::{calibrate_kwise_private_mle, kwise_covariance_std};
use crate::privacy::{gaussian_vector, symmetric_gaussian_matrix, NoiseRng, PrivateMleParams};
use crate::solver::newton;
use crate::with_group_loss;

/// Checks `‖φ_ik‖ ≤ L` (`L` = [`FeatureBound::value`]) for every alternative of every sample (no
/// slack, no clipping).
///
/// # Errors
/// [`Error::GroupFeatureBound`] naming the first offending sample and alternative.
pub fn check_group_rows(data: &GroupView<'_>, bound: FeatureBound) -> Result<()> {
    let limit = bound.value();
    for i in 0..data.n() {
        for r in 0..data.k() {
            let norm = data.row(i, r).iter().map(|v| v * v).sum::<f64>().sqrt();
            if !(norm <= limit) {
                return Err(Error::GroupFeatureBound {
                    sample: i,
                    row: r,
                    norm,
                    limit,
                });
            }
        }
    }
    Ok(())
}

fn refuse_weights(data: &GroupView<'_>) -> Result<()> {
    if data.weights().is_some() {
        return Err(Error::param(
            "weights",
            "sample weights are not supported by the central estimators (they change the sensitivity)",
        ));
    }
    Ok(())
}

/// The number of ranked stages `J` of a likelihood loss over `K = k` alternatives; the
/// debiased K-RR loss is a local estimator and is refused.
fn likelihood_stages(loss: GroupLossSpec, k: usize) -> Result<usize> {
    match loss {
        GroupLossSpec::PlTop1 => Ok(1),
        GroupLossSpec::PlRanking { top } => Ok(top.unwrap_or(k.saturating_sub(1).max(1))),
        GroupLossSpec::PlKrr { .. } => Err(Error::param(
            "loss",
            "the private MLE fits the Plackett-Luce likelihood of clear rankings (pl-top1 or pl-ranking); pl-krr is a local estimator of randomised choices",
        )),
    }
}

/// `Σ_{D_K} = (2/(nK(K−1))) Σ_i Σ_{j<k} (φ_ij − φ_ik)(φ_ij − φ_ik)ᵀ`, row-major `d × d`
/// ("Provable protection of human judgements" (anon., 2025), Sec. 4.2; with weights, the
/// weighted mean over samples). Not private; it does not read the labels.
pub fn kwise_data_covariance(data: &GroupView<'_>) -> Vec<f64> {
    // Symmetric, both triangles: column-major is row-major.
    pair_covariance(data, Par::Rayon)
}

/// Algorithm 1 of "Provable protection of human judgements" (anon., 2025) on K-wise data with the
/// Plackett–Luce likelihood `loss` (`pl-top1`, or `pl-ranking` with `top = J`, default the full
/// ranking) (module docs). Draws `b` then `w` from `rng`. The options are those of the pairwise
/// [`super::private_mle::private_mle`]; `feature_bound` bounds every alternative, `‖φ‖ ≤ L`.
///
/// # Errors
/// Invalid parameters ([`calibrate_kwise_private_mle`]), an unbounded set, weights, the `pl-krr`
/// loss, a ranking loss on chosen indices or `J ≥ K`, an alternative with `‖φ‖ > L`
/// ([`Error::GroupFeatureBound`]); [`Error::GuaranteeRefused`] when the accuracy certificate is
/// not below `β` (unless `allow_unguaranteed`).
pub fn private_mle_kwise(
    data: GroupView<'_>,
    loss: GroupLossSpec,
    opts: &PrivateMleOptions,
    rng: &mut NoiseRng,
) -> Result<Fit<PrivateMleDetail<GroupLossSpec>>> {
    let radius = opts.set.radius().ok_or_else(|| {
        Error::param(
            "constraint",
            "the private MLE (anon., 2025, Algorithm 1) minimises over the ball Theta_B: use ball or theta-b with --radius",
        )
    })?;
    refuse_weights(&data)?;
    let (n, k, d) = (data.n(), data.k(), data.d());
    let stages = likelihood_stages(loss, k)?;
    let params = PrivateMleParams {
        eta: opts.eta,
        alpha: opts.alpha,
        accuracy: opts.accuracy,
        ..PrivateMleParams::new(opts.eps, opts.delta, opts.feature_bound, radius, n, d)
    };
    let cal = calibrate_kwise_private_mle(&params, k, stages)?;
    check_group_rows(&data, opts.feature_bound)?;
    opts.control.validate()?;
    // The loss must fit the labels before any noise is drawn.
    with_group_loss!(loss, k, |l| GroupObjective::new(data, l).map(|_| ()))??;
    let b = gaussian_vector(d, cal.objective_noise_std, rng);
    let w = gaussian_vector(d, cal.output_noise_std, rng);
    // α‖θ‖² = (β_ridge/2n)‖θ‖² with β_ridge = 2αn; ⟨b,θ⟩/n is the linear term b.
    let ridge = 2.0 * cal.alpha * n as f64;
    let control = solver_control(&opts.control, cal.accuracy, radius, d);
    let mu = 2.0 * cal.alpha;
    let smooth = cal.hessian_trace_bound + mu;
    let (report, gap) = with_group_loss!(loss, k, |l| {
        let obj = GroupObjective::new(data, l)?
            .with_ridge(ridge)?
            .with_linear_term(b.clone())?
            .with_par(control.par);
        let report = newton::solve(&obj, &opts.set, None, &control)?;
        let gap = gap_certificate(&obj, &opts.set, &report.theta, mu, smooth);
        (report, gap)
    })?;
    let l = opts.feature_bound.value();
    let notes = vec![
        format!(
            "Plackett-Luce likelihood of J = {stages} ranked stage(s) over K = {k}: gradient bound G = 2JL = {:.6e}, Hessian trace bound T = JL^2 = {:.6e} (derived; the paper's Lemma B.3 gives 2K^2 L and 4K^3 L^2, and Thm 4.3 leaves the constant factor unspecified)",
            cal.grad_bound, cal.hessian_trace_bound
        ),
        "alpha >= 4T/(eps n) (objective perturbation with per-sample Hessians of rank up to K - 1: log-det ratio <= T/(2n alpha)); beta = min(1/n, alpha/(d n^2))".into(),
        "the constant 40 of s_b and nu is the paper's (via Bassily et al. 2019, Thm 5.6); it has not been checked against that source".into(),
        format!("L = {l} is an a-priori bound on every alternative: alternatives and rankings are private under this relation (label DP for the rankings follows)"),
        "pairs with the K-wise private covariance (eps/2, delta/2) to (eps, delta) by basic composition (Thm 4.3)".into(),
    ];
    release(
        Release {
            theta: report.theta.clone(),
            report,
            config: FitConfig::new(loss, opts.set, ridge, true, "newton"),
            calibration: cal,
            gap,
            output_noise: w,
            mechanism: "K-wise private MLE: objective + output perturbation on the Plackett-Luce likelihood (anon. 2025, Algorithm 1, Thm 4.3)",
            notes,
        },
        opts,
        rng,
    )
}

/// Algorithm 2 of "Provable protection of human judgements" (anon., 2025) on K-wise data (module
/// docs): `Σ̃_{D_K} = Σ_{D_K} + G_sym`, `s_G` from
/// [`kwise_covariance_std`], then the
/// eigenvalue floor. The labels of `data` are not read.
///
/// # Errors
/// `δ > 1/n²`, invalid `ε`, `δ`, relation or floor ([`Error::InvalidParam`]), weights, an
/// alternative with `‖φ‖ > L` ([`Error::GroupFeatureBound`]), an eigenvalue failure
/// ([`Error::Numerical`]).
pub fn private_covariance_kwise(
    data: GroupView<'_>,
    opts: &CovarianceOptions,
    rng: &mut NoiseRng,
) -> Result<PrivateCovariance> {
    let (n, k, d) = (data.n(), data.k(), data.d());
    refuse_weights(&data)?;
    check_covariance_delta(n, opts.delta)?;
    let s = kwise_covariance_std(opts.eps, opts.delta, opts.feature_bound, n, k, opts.relation)?;
    check_eigen_floor(opts.eigen_floor)?;
    check_group_rows(&data, opts.feature_bound)?;
    check_covariance_memory(d, opts)?;
    let sigma = kwise_data_covariance(&data);
    let g = symmetric_gaussian_matrix(d, s, rng);
    let mut m: Vec<f64> = sigma.iter().zip(&g).map(|(a, b)| a + b).collect();
    let (min_eig, floored) = floor_eigenvalues(&mut m, d, opts.eigen_floor)?;
    let guarantee = covariance_guarantee_with(
        opts,
        rng,
        "K-wise private covariance: Gaussian mechanism on Sigma_{D_K} (anon. 2025, Algorithm 2, Thm 4.3, corrected calibration)",
        format!(
            "classic Gaussian mechanism at (eps/2, delta/2) with Frobenius sensitivity 2K L^2/((K-1) n) (add/remove), sqrt(2) times that (replace-one), K = {k}; the paper's Lemma B.5 (operator norm 4K^3 L^2/n, constant 64) is not used"
        ),
        "L is an a-priori bound on every alternative; Sigma_{D_K} does not read the rankings: with public alternatives it is public, and the noise protects the alternatives (standard DP, as in the paper)".into(),
    );
    Ok(PrivateCovariance {
        d,
        matrix: m,
        noise_std: s,
        min_eigenvalue_before_repair: min_eig,
        eigenvalues_floored: floored,
        guarantee,
    })
}

//! The private and corruption-robust estimator of Zhou, Wu & Orabona (2025) (Algorithm 1,
//! loss (14)) and its DPO reduction (Prop. 4.6).
//!
//! **Loss (14) is the debiased RR loss, rescaled.** Zhou, Wu & Orabona (2025) minimise
//! `f(u; z) = softplus(u) − ŷ u`, `ŷ = c(ε)(z + σ(ε) − 1)`, `c(ε) = coth(ε/2)`, over `Θ_{B'}`.
//! The debiased loss of Chowdhury, Zhou & Natarajan (2024)
//! ([`RrDebiased`](crate::loss::RrDebiased), `ℓ = tanh(ε/2) softplus(s) + σ(−ε) s`, `s = (1 −
//! 2z)u`) satisfies, for both labels,
//!
//! ```text
//! f(u; z) = coth(ε/2) · ℓ(u; z)          (tested in tests/library/robust.rs)
//! ```
//!
//! so both have the same minimiser over every constraint set; this module reuses the one code
//! path ([`LossSpec::DebiasedRr`]) and documents the scale: gradients and Hessians of (14) are
//! `coth(ε/2)` times the fitted objective's. The loss is unbounded below without the ball
//! (when `ŷ ∉ [0, 1]`): the estimator always solves over `Θ_{B'}`. It needs neither α nor the order
//! of corruption (it is "adaptive").
//!
//! **DPO** (Prop. 4.6): with a log-linear policy class the labels follow logistic
//! regression with `θ_true = β(θ* − θ_sft)`; estimate it with loss (14) over `Θ_{B'}`,
//! `B' ≥ β‖θ* − θ_sft‖`, and return the policy parameter `θ̂' = θ̂/β + θ_sft` (the paper prints
//! `π_θ̂`; the consistent output is `π_{θ̂'}`). This is exactly rDPO (TRL `loss_type="robust"`
//! with `label_smoothing = σ(−ε)`), as the identity tested in `tests/library/robust.rs` shows.

use crate::data::PairwiseView;
use crate::error::{Error, Result};
use crate::estimator::{fit, FitOptions};
use crate::feasible::FeasibleSet;
use crate::loss::LossSpec;
use crate::math::simd::scalar::softplus;
use crate::model::{Fit, FitConfig, Local};

/// Loss (14) of Zhou, Wu & Orabona (2025) in minimised form, `f(u; z) = softplus(u) − ŷ(z) u` with
/// the debiased label `ŷ(z) = coth(ε/2)(z + σ(ε) − 1)` (their Alg. 1): a scalar reference for the
/// scale relation `f = coth(ε/2)·ℓ_debiased`. `eps = ∞` gives the clean logistic loss `softplus(u)
/// − z u`.
pub fn loss14(u: f64, z: u8, eps: f64) -> f64 {
    softplus(u) - debiased_label(z, eps) * u
}

/// The debiased label `ŷ = c(ε)(z + σ(ε) − 1)`, `c(ε) = coth(ε/2)` (Zhou, Wu & Orabona (2025), Alg.
/// 1): `ŷ(1) = e^ε/(e^ε − 1)`, `ŷ(0) = −1/(e^ε − 1)`; `E[ŷ | y] = y` under randomized response.
/// `eps = ∞` returns `z`.
pub fn debiased_label(z: u8, eps: f64) -> f64 {
    if eps == f64::INFINITY {
        return z as f64;
    }
    let em1 = eps.exp_m1();
    if z == 1 {
        1.0 + 1.0 / em1
    } else {
        -1.0 / em1
    }
}

/// Algorithm 1 of Zhou, Wu & Orabona (2025): `θ̂ = argmin_{θ ∈ Θ_{B'}} (1/n) Σ f(x_iᵀθ; z_i)` on
/// labels `z` privatised by randomized response at level `eps` (and possibly corrupted), solved
/// exactly by projected Newton with its KKT certificate. `eps = None` is the clean MLE (ε = ∞).
/// The labels are raw (possibly corrupted after privatisation), so the model carries no local
/// guarantee ([`fit`]).
///
/// # Errors
/// Invalid `eps` or `radius`, and solver errors; a fit that did not converge is
/// [`Error::NotConverged`].
pub fn fit_loss14(data: PairwiseView<'_>, eps: Option<f64>, radius: f64) -> Result<Fit> {
    let loss = match eps {
        Some(eps) => LossSpec::DebiasedRr { eps },
        None => LossSpec::Mle,
    };
    let mut model = fit(data, &FitOptions::new(loss, FeasibleSet::theta_b(radius)?))?;
    model.report = model.report.into_result()?;
    Ok(model)
}

/// The detail of a DPO fit by the reduction of Zhou, Wu & Orabona (2025), Prop. 4.6
/// ([`fit_dpo`]). The fit's `theta` is `θ̂' = θ̂/β + θ_sft`, the parameter of the returned
/// log-linear policy `π_{θ̂'}`; its `report` and `guarantee` are those of the underlying loss
/// (14) fit of `θ̂`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct DpoDetail {
    /// `θ̂`, the estimate of `θ_true = β(θ* − θ_sft)` (the reward-difference parameter).
    pub theta_true: Vec<f64>,
    /// The configuration of the loss (14) fit.
    pub config: FitConfig,
}

/// DPO with a log-linear policy class by the reduction of Zhou, Wu & Orabona (2025), Prop. 4.6 (see
/// the module docs): [`fit_loss14`] over `Θ_{B'}` (`radius_prime` = `B'`), then `θ̂' = θ̂/β +
/// θ_sft`.
///
/// # Errors
/// `β ≤ 0` or non-finite, `theta_sft` of the wrong length or non-finite, and those of
/// [`fit_loss14`].
pub fn fit_dpo(
    data: PairwiseView<'_>,
    eps: Option<f64>,
    beta: f64,
    theta_sft: &[f64],
    radius_prime: f64,
) -> Result<Fit<DpoDetail>> {
    if !(beta.is_finite() && beta > 0.0) {
        return Err(Error::param("beta", format!("must be finite and > 0, got {beta}")));
    }
    if theta_sft.len() != data.d() {
        return Err(Error::Shape(format!(
            "theta_sft has {} entries but d = {}",
            theta_sft.len(),
            data.d()
        )));
    }
    if let Some(j) = theta_sft.iter().position(|v| !v.is_finite()) {
        return Err(Error::param("theta_sft", format!("entry {j} is not finite")));
    }
    let model = fit_loss14(data, eps, radius_prime)?;
    let theta_policy = model.theta.iter().zip(theta_sft).map(|(t, s)| t / beta + s).collect();
    let Fit {
        theta,
        report,
        guarantee,
        no_guarantee,
        detail: Local { config, .. },
    } = model;
    let mut dpo = Fit::new(
        theta_policy,
        report,
        DpoDetail {
            theta_true: theta,
            config,
        },
    );
    dpo.guarantee = guarantee;
    dpo.no_guarantee = no_guarantee;
    Ok(dpo)
}

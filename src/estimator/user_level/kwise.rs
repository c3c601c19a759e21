//! The K-wise (Plackett–Luce) user-level estimators (Zhang et al. (2025), App. B.3: the same
//! algorithms with the PL loss): user-level K-RR with the debiased PL estimator, user-wise
//! DP-SGD and AUP-RLHF on [`GroupView`] data. The SGD estimators run the pairwise engines on the
//! K-wise per-user gradients ([`super::source`]); with `K = 2` and the top-1 loss they are the
//! pairwise estimators on `x = φ₁ − φ₀` (the same draws; the gradients agree to rounding).

use super::source::{pl_gradient_bound, GroupGradients};
use super::{aup_rlhf_engine, user_dpsgd_engine, AupOptions, UserDpSgdOptions, UserLevelDetail, UserRrOptions};
use crate::data::{GroupView, UserIndex};
use crate::error::{check_eps, Error, Result};
use crate::estimator::{fit_kwise, FitOptions, Local};
use crate::loss::{GroupLoss, GroupLossSpec, LossSpec};
use crate::model::Fit;
use crate::privacy::NoiseRng;
use crate::with_group_loss;

/// The gradient-based estimators take a likelihood loss of clean labels (`pl-top1` or
/// `pl-ranking`): the mechanism privatises the gradients, not the labels.
fn check_sgd_loss(loss: GroupLossSpec) -> Result<()> {
    if let GroupLossSpec::PlKrr { .. } = loss {
        return Err(Error::param(
            "loss",
            "the user-level SGD estimators take pl-top1 or pl-ranking (pl-krr is for K-RR-privatised choices)",
        ));
    }
    Ok(())
}

/// User-wise DP-SGD ([`user_dpsgd`](super::user_dpsgd)) on K-wise data with the Plackett–Luce
/// loss `loss`: per-user averaged gradients `g_u = (1/m_u) Σ_i Φ_iᵀ ∂ℓ/∂u(Φ_iθ)`, clipped to
/// `C`, summed, `N(0, σ²C²I)` added, divided by `ñ`. Clipping bounds every user's contribution
/// by `C` whatever the loss, so the guarantee is that of [`user_dpsgd`](super::user_dpsgd);
/// `C ≥ 2LJ` ([`pl_gradient_bound`]) never clips. `opts.loss` must be left at its default (the
/// loss is `loss`).
///
/// # Errors
/// As [`user_dpsgd`](super::user_dpsgd); [`Error::InvalidParam`] for `pl-krr`, a non-default
/// `opts.loss`, or a loss that does not fit the labels (a ranking loss on choices).
pub fn user_dpsgd_kwise(
    data: GroupView<'_>,
    users: &UserIndex,
    loss: GroupLossSpec,
    opts: &UserDpSgdOptions,
    rng: &mut NoiseRng,
) -> Result<Fit<UserLevelDetail>> {
    check_sgd_loss(loss)?;
    if opts.loss != LossSpec::Mle {
        return Err(Error::param(
            "loss",
            "K-wise user-wise DP-SGD takes its loss as an argument; leave opts.loss at its default",
        ));
    }
    with_group_loss!(loss, data.k(), |l| {
        let name = l.name();
        user_dpsgd_engine(GroupGradients::new(l, data)?, name, users, opts, rng)
    })?
}

/// AUP-RLHF ([`aup_rlhf`](super::aup_rlhf)) on K-wise data with the Plackett–Luce loss `loss`.
/// `opts.feature_bound = L` bounds the within-sample differences, `‖φ_ik − φ_il‖ ≤ 2L` (checked
/// on every sample); the per-user gradients then lie in the ball of radius `2LJ`
/// ([`pl_gradient_bound`], `J` the ranked positions the loss reads), so the default radius is
/// `τ = min(τ_theory, 4LJ)` (the diameter of that ball). The guarantee is as claimed by the
/// paper, as for the pairwise estimator.
///
/// # Errors
/// As [`aup_rlhf`](super::aup_rlhf) ([`Error::FeatureBound`] naming the first sample over the
/// bound); [`Error::InvalidParam`] for `pl-krr` or a loss that does not fit the labels.
pub fn aup_rlhf_kwise(
    data: GroupView<'_>,
    users: &UserIndex,
    loss: GroupLossSpec,
    opts: &AupOptions,
    rng: &mut NoiseRng,
) -> Result<Fit<UserLevelDetail>> {
    check_sgd_loss(loss)?;
    with_group_loss!(loss, data.k(), |l| {
        let diameter = 2.0 * pl_gradient_bound(opts.feature_bound, l.positions());
        aup_rlhf_engine(GroupGradients::new(l, data)?, diameter, users, opts, rng)
    })?
}

/// The user-level K-RR estimator: choices randomised by
/// [`UserLevelRr::randomize_choices`](crate::mechanism::UserLevelRr::randomize_choices) (K-RR at
/// `ε/m` per choice, the natural K-ary analogue of Zhang et al. (2025), Sec. 4.1, which the
/// paper does not specify), fitted exactly by the debiased PL top-1 loss `pl-krr` at `ε/m`
/// ([`PlKrrDebiased`](crate::loss::PlKrrDebiased)) over `opts.set`. With `K = 2` this is
/// [`fit_user_rr`](super::fit_user_rr) on the pairwise data. The labels carry no provenance, so
/// the fit carries no guarantee.
///
/// # Errors
/// [`Error::InvalidParam`] for `ε ≤ 0`, rankings instead of choices, or ragged user counts (the
/// debiased PL loss takes one level; ragged counts are not implemented); [`Error::Shape`] if
/// `users` does not cover the samples; solver errors.
pub fn fit_user_rr_kwise(
    data: GroupView<'_>,
    users: &UserIndex,
    opts: &UserRrOptions,
) -> Result<Fit<Local<GroupLossSpec>>> {
    check_eps(opts.eps)?;
    users.check_rows(data.n())?;
    if data.width() != 1 {
        return Err(Error::param(
            "labels",
            "user-level K-RR randomises choices: pass GroupLabels::Choice data",
        ));
    }
    let m = users.equal_count().ok_or_else(|| {
        Error::param(
            "users",
            "the K-wise user-level RR estimator needs equal counts per user (ragged counts are not implemented)",
        )
    })?;
    let mut fo = FitOptions::new(
        GroupLossSpec::PlKrr {
            eps: opts.eps / m as f64,
        },
        opts.set,
    );
    fo.solver = opts.solver;
    fo.control = opts.control.clone();
    fit_kwise(data, &fo)
}

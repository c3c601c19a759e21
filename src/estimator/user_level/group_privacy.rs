//! The "Group Privacy" baseline of Zhang et al. (2025), Sec. 6 (after Chua et al. 2024):
//! example-level DP-SGD whose example-level budget is chosen so that group privacy over a
//! user's records gives the user-level target.
//!
//! **Conversion.** If a mechanism is `(ε₀, δ₀)`-DP for datasets differing in one record's label,
//! then for datasets differing in the labels of `k` records (a chain of `k` single changes) it
//! is `(kε₀, δ₀ Σ_{j<k} e^{jε₀}) = (kε₀, δ₀ (e^{kε₀} − 1)/(e^{ε₀} − 1))`-DP: induction on
//! `P[M(D₀)∈S] ≤ e^{ε₀} P[M(D₁)∈S] + δ₀` (Ghazi et al. (2021), Fact 14; implemented as
//! [`group_privacy`](crate::estimator::label_sgd::theory::group_privacy)). The textbook form
//! `(kε₀, k e^{(k−1)ε₀} δ₀)` bounds the sum term by term and is looser. A user with `m_u ≤ m`
//! records is a group of at most `m` (counts are public), so the user-level guarantee is the
//! conversion at `k = m = max_u m_u`.
//!
//! [`group_privacy_split`] inverts it for a target `(ε, δ)`: `ε₀ = ε/m`,
//! `δ₀ = δ (e^{ε/m} − 1)/(e^ε − 1)`; the DP-SGD noise is calibrated to `(ε₀, δ₀)` by the RDP
//! accountant (replace relation), and the fit's guarantee is the conversion of the accountant's
//! `ε₀' ≤ ε₀`, so it never exceeds the target.

use super::dpsgd::{UserDpSgdOptions, UserOutput};
use super::source::PairwiseGradients;
use super::{user_dpsgd_engine, UserLevelDetail};
use crate::data::{PairwiseView, UserIndex};
use crate::error::{check_delta, check_eps, Error, Result};
use crate::estimator::label_sgd::theory::group_privacy;
use crate::feasible::FeasibleSet;
use crate::loss::LossSpec;
use crate::model::Fit;
use crate::privacy::rdp::{Accountant, RdpCurve};
use crate::privacy::{NoiseRng, PrivacyUnit};

/// The example-level budget `(ε₀, δ₀) = (ε/m, δ (e^{ε/m} − 1)/(e^ε − 1))` whose group-privacy
/// conversion over `m` records is exactly the user-level `(ε, δ)` (module docs; for example
/// `ε = 3, δ = 1e-5, m = 10` gives `ε₀ = 0.3`, `δ₀ = 1e-5·0.349859/19.085537 = 1.83311e-7`).
///
/// # Errors
/// [`Error::InvalidParam`] for `m = 0` or an invalid `ε` / `δ ∈ (0, 1)`; [`Error::Privacy`] when
/// `δ₀` is not a positive normal number (the target cannot be met by any example-level δ).
pub fn group_privacy_split(eps: f64, delta: f64, m: usize) -> Result<(f64, f64)> {
    check_eps(eps)?;
    check_delta(delta)?;
    if m == 0 {
        return Err(Error::param("group-size", "must be >= 1, got 0"));
    }
    let e0 = eps / m as f64;
    let d0 = delta * e0.exp_m1() / eps.exp_m1();
    if !(d0.is_normal() && d0 > 0.0 && e0 > 0.0) {
        return Err(Error::Privacy(format!(
            "the user-level target (eps = {eps}, delta = {delta}) over groups of m = {m} records needs an example-level delta = {d0:e}, which is not a positive normal number"
        )));
    }
    Ok((e0, d0))
}

/// Options of [`group_dpsgd`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GroupDpSgdOptions {
    /// User-level target `ε`.
    pub eps: f64,
    /// User-level target `δ`.
    pub delta: f64,
    /// Expected records per step (Poisson over all records, `q = batch/N`).
    pub batch_records: f64,
    /// Steps `T`.
    pub steps: u64,
    /// Per-record clip norm `C`.
    pub clip: f64,
    /// Step size `η`.
    pub step_size: f64,
    /// Projection after each step (default none).
    pub set: FeasibleSet,
    /// Start (default 0).
    pub theta0: Option<Vec<f64>>,
    /// Returned point (default the last iterate).
    pub output: UserOutput,
    /// The accountant of the example-level run (default: proven replace relation).
    pub accountant: Accountant,
    /// The pairwise loss (default [`LossSpec::Mle`]).
    pub loss: LossSpec,
}

impl GroupDpSgdOptions {
    /// Options with the given user-level target and schedule; the rest default.
    pub fn new(eps: f64, delta: f64, batch_records: f64, steps: u64, clip: f64, step_size: f64) -> Self {
        GroupDpSgdOptions {
            eps,
            delta,
            batch_records,
            steps,
            clip,
            step_size,
            set: FeasibleSet::Unconstrained,
            theta0: None,
            output: UserOutput::Last,
            accountant: Accountant::default(),
            loss: LossSpec::Mle,
        }
    }
}

/// Example-level DP-SGD with a user-level guarantee by group privacy (module docs):
///
/// ```text
/// m ← max_u m_u;   (ε₀, δ₀) ← (ε/m, δ(e^{ε/m} − 1)/(e^ε − 1))
/// σ ← calibrate(q = b/N, T, ε₀, δ₀)                   (RDP accountant, replace relation)
/// for t = 1..T:  B_t ← each record with probability q;  ĝ_i ← clip_C(ℓ'(x_iᵀθ_t; y_i) x_i)
///                θ_{t+1} ← Π(θ_t − η (Σ_{i∈B_t} ĝ_i + N(0, σ²C²I))/b)
/// guarantee: group_privacy(m, ε₀' = ε_acc(σ), δ₀)  ≤ (ε, δ)
/// ```
///
/// It is user-wise DP-SGD ([`user_dpsgd`](super::user_dpsgd)) with every record its own
/// "user" (the same engine, draws and step), at the example-level budget.
///
/// # Errors
/// [`Error::InvalidParam`] for invalid options (as [`user_dpsgd`](super::user_dpsgd), with the
/// batch in `(0, N]`); [`Error::Privacy`] for an impossible target: `δ₀` underflows
/// ([`group_privacy_split`]), or `ε₀ = ε/m` is at or below what the accountant's conversion
/// certifies with zero RDP on its order grid (large `m`), or the calibration finds no
/// `σ ≤ 1e8`; [`Error::Numerical`] if the accountant's RDP underflows near that floor.
pub fn group_dpsgd(
    data: PairwiseView<'_>,
    users: &UserIndex,
    opts: &GroupDpSgdOptions,
    rng: &mut NoiseRng,
) -> Result<Fit<UserLevelDetail>> {
    data.require_all_rows("group-privacy DP-SGD")?;
    users.check_rows(data.n())?;
    let m = users.max_count();
    let (e0, d0) = group_privacy_split(opts.eps, opts.delta, m)?;
    let n = data.n();
    if !(opts.batch_records > 0.0 && opts.batch_records <= n as f64) {
        return Err(Error::param(
            "batch-records",
            format!(
                "must be in (0, {n}] (the number of records), got {}",
                opts.batch_records
            ),
        ));
    }
    if opts.steps == 0 {
        return Err(Error::param("steps", "must be >= 1, got 0"));
    }
    let q = opts.batch_records / n as f64;
    // The conversion alone costs this much even with zero RDP (infinite noise): a target below
    // it cannot be certified on the accountant's order grid.
    let floor = RdpCurve::zero(&opts.accountant.orders)?
        .epsilon(d0, opts.accountant.conversion)?
        .epsilon;
    if e0 <= floor {
        return Err(Error::Privacy(format!(
            "the example-level eps0 = eps/m = {e0:e} (m = {m} records per user) is below {floor:e}, what the accountant's orders (up to {}) certify at delta0 = {d0:e} even without any RDP: no noise multiplier meets the user-level target",
            opts.accountant.orders.iter().cloned().fold(f64::NAN, f64::max)
        )));
    }
    let sigma = opts.accountant.calibrate_sigma(q, opts.steps, e0, d0)?.noise_multiplier;
    let mut inner = UserDpSgdOptions::new(e0, d0, opts.batch_records, opts.steps, opts.clip, opts.step_size);
    inner.noise_multiplier = Some(sigma);
    inner.set = opts.set;
    inner.theta0 = opts.theta0.clone();
    inner.output = opts.output;
    inner.accountant = opts.accountant.clone();
    inner.loss = opts.loss;
    let records = UserIndex::equal(n, 1)?;
    let name = opts.loss.name();
    let mut fit = crate::with_loss!(opts.loss, |loss| user_dpsgd_engine(
        PairwiseGradients::new(loss, data),
        name,
        &records,
        &inner,
        rng
    ))??;
    if let Some(g) = fit.guarantee.as_mut() {
        let k = u32::try_from(m)
            .map_err(|_| Error::param("group-size", format!("{m} records per user do not fit in u32")))?;
        let (eu, du) = group_privacy(k, g.eps, d0)?;
        g.assumptions.notes.push(format!(
            "example-level ({}, {d0:e}) converted by group privacy over m = {m} records per user (Ghazi et al. 2021, Fact 14): (m eps0, delta0 (e^(m eps0) - 1)/(e^eps0 - 1))",
            g.eps
        ));
        g.eps = eu;
        g.delta = du;
        g.unit = PrivacyUnit::User;
        g.mechanism =
            "example-level DP-SGD with group privacy over a user's records (the Group Privacy baseline of Zhang et al. 2025, after Chua et al. 2024)";
    }
    Ok(fit)
}

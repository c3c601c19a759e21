//! Central `(ε, δ)`-DP (standard DP: features *and* labels private) for "Provable protection of
//! human judgements" (anon., 2025), with corrected constants where the printed ones do not give
//! the claimed guarantee (listed in `docs/papers.md`):
//!
//! * [`private_mle`] — **Algorithm 1** (objective perturbation + output perturbation, Lemma A.10
//!   via Bassily et al. 2019 Thm 5.6 / Kifer et al. 2012): `b ~ N(0, s_b² I)`,
//!   `ℓ̃(θ) = (1/n)Σℓ(x_iᵀθ; y_i) + α‖θ‖² + ⟨b, θ⟩/n`, an approximate minimiser `θ̂ ∈ Θ_B` with
//!   `ℓ̃(θ̂) − min ℓ̃ < β` **certified** by a gap bound (below), released as `θ̃ = θ̂ + w`,
//!   `w ~ N(0, ν² I)`. Constants from [`calibrate_private_mle`]: `s_b` with the gradient bound
//!   `G = 2L` (the paper writes the feature bound `L`: 4× too little variance),
//!   `α = max(2γλ, 4L²/(εn))` (the ridge must dominate the per-sample curvature),
//!   `β = min(1/n, α/(dn²))` (`β < 1/n` alone leaves output noise that does not shrink with `n`),
//!   `ν² = 40β ln(1/δ)/(αε²)`. Spends `(ε/2, δ/2)`.
//! * [`private_covariance`] — **Algorithm 2**: `Σ̃ = Σ_D + G_sym`, Gaussian mechanism with the
//!   Frobenius sensitivity and the classic calibration at `(ε/2, δ/2)` (the paper's constant 64 is
//!   too small for `(ε/2, δ/2)`), symmetric noise, and an eigenvalue floor as documented PSD
//!   repair. Spends `(ε/2, δ/2)`; the pair composes to `(ε, δ)` ([`Guarantee::compose`]).
//!
//! The accuracy certificate is `min(FW gap, ‖P∇ℓ̃‖·e(r))` where the Frank–Wolfe gap is
//! `⟨∇ℓ̃(θ̂), θ̂⟩ + B‖P∇ℓ̃(θ̂)‖ ≥ ℓ̃(θ̂) − min` (`P` the centring projector when the
//! sum-zero constraint is on, else `I`) and `e(r)` is the distance bound of
//! [`super::central::distance_bound`] with `μ = 2α` (convexity gives
//! `ℓ̃(θ̂) − min ≤ ⟨∇ℓ̃(θ̂), θ̂ − θ*⟩ ≤ ‖P∇ℓ̃‖‖θ̂ − θ*‖`). Both use the gradient in doubled
//! precision. If the certificate is not below `β` the guarantee is refused.
//!
//! **A refusal depends on the data** (the certificate is a function of the dataset and of `b`):
//! as for objective perturbation ([`super::central`]), if refusals have probability at most `p`
//! on every dataset, releasing `θ̃` or the refusal is `(ε/2, δ/2 + (1 + e^{ε/2})·p)`-DP. No
//! worst-case bound on `p` is proved; at the CLI's defaults (`η = 0.05`, `α` and the accuracy
//! `β = min(1/n, α/(dn²))` from the corrected rules, Newton with 100 iterations) over 14 400
//! random BTL datasets (`n` from 100 to 5·10⁴, `d` from 2 to 30, feature scales 0.01, 1, 100,
//! `ε ∈ {0.1, 1}`; `cargo run --release -p privpref-experiments --example refusal_rate -- 200`,
//! `bench-results/refusal_rate.md`) there were **0 refusals**, the largest certified gap
//! 1.6·10⁻³ of `β`.

use super::central::{check_rows, distance_bound, objpert_minimiser, trajectory_note};
use crate::data::{FeatureBound, PairwiseView};
use crate::error::{DataErrorKind, Error, Location, Result};
use crate::feasible::{center, norm, FeasibleSet};
use crate::loss::{Logistic, LossSpec};
use crate::model::{Fit, FitConfig};
use crate::objective::{Objective, SecondOrderObjective};
use crate::privacy::calibrate::{
    calibrate_private_mle, private_covariance_std, PrivateMleCalibration, PrivateMleParams,
};
use crate::privacy::{
    gaussian_vector, symmetric_gaussian_matrix, Assumptions, Guarantee, Neighbouring, NoiseRng, PrivacyModel,
    PrivacyUnit,
};
use crate::solver::{memory, Control, MemoryLimit};
use faer::{MatRef, Side};

/// Settings of [`private_mle`] (every field is checked there).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PrivateMleOptions {
    /// `ε ∈ (0, 1]` of the pair (θ̃, Σ̃); this release spends `ε/2`.
    pub eps: f64,
    /// `δ ∈ (0, 1/n²]`; this release spends `δ/2`.
    pub delta: f64,
    /// Feature bound `L` per step and horizon `H` (a priori: under standard DP it must not come
    /// from the data). Trajectory comparisons use `H·L` throughout: `G = 2HL`, `T = H²L²`,
    /// `γ_τ` (Lemma C.3 of "Provable protection of human judgements" (anon., 2025)).
    pub feature_bound: FeatureBound,
    /// A bounded feasible set (`ball` is the paper's `Θ_B`; `theta-b` adds `Σθ = 0`).
    pub set: FeasibleSet,
    /// Failure probability `η` (default 0.05).
    pub eta: f64,
    /// Override of `α` (must be `≥ α_min`).
    pub alpha: Option<f64>,
    /// Override of the accuracy `β ∈ (0, 1/n)`.
    pub accuracy: Option<f64>,
    /// Return an explicitly unguaranteed result instead of [`Error::GuaranteeRefused`].
    pub allow_unguaranteed: bool,
    /// Solver stopping rules (tightened so that the certificate can meet `β`).
    pub control: Control,
}

impl PrivateMleOptions {
    /// Defaults: `η = 0.05`, `α`, `β` from the corrected rules.
    pub fn new(eps: f64, delta: f64, feature_bound: FeatureBound, set: FeasibleSet) -> Self {
        PrivateMleOptions {
            eps,
            delta,
            feature_bound,
            set,
            eta: 0.05,
            alpha: None,
            accuracy: None,
            allow_unguaranteed: false,
            control: Control::default(),
        }
    }
}

/// The detail of a [`private_mle`] release. The fit's `theta` is the released `θ̃ = θ̂ + w`,
/// its `guarantee` the `(ε/2, δ/2)` guarantee (`None` only when refused and
/// `allow_unguaranteed`; [`Fit::refusal`] says why), and its `report` the non-private
/// diagnostic of `θ̂`: never release the report.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct PrivateMleDetail<S = LossSpec> {
    /// The configuration of the perturbed objective (logistic loss, or the Plackett–Luce loss of
    /// [`super::private_mle_kwise`]; ridge `2αn`, linear term).
    pub config: FitConfig<S>,
    /// The constants used.
    pub calibration: PrivateMleCalibration,
    /// The certified upper bound on `ℓ̃(θ̂) − min ℓ̃`.
    pub gap_certificate: f64,
}

/// `min(FW gap, ‖P∇F‖·e(r))` at `theta` (module docs), gradient in doubled precision.
pub(super) fn gap_certificate<O: SecondOrderObjective>(
    obj: &O,
    set: &FeasibleSet,
    theta: &[f64],
    mu: f64,
    smooth: f64,
) -> f64 {
    let mut g = vec![0.0; theta.len()];
    obj.value_grad_compensated(theta, &mut g);
    let r = set.kkt_residual(theta, &g);
    let mut pg = g.clone();
    if set.sum_zero() {
        center(&mut pg);
    }
    let pg_norm = norm(&pg);
    let inner: f64 = pg.iter().zip(theta).map(|(a, b)| a * b).sum();
    let fw = match set.radius() {
        Some(b) => (inner + b * pg_norm).max(0.0),
        None => f64::INFINITY,
    };
    fw.min(pg_norm * distance_bound(r, mu, smooth))
}

/// Algorithm 1 of "Provable protection of human judgements" (anon., 2025) (module docs). Draws `b`
/// then `w` from `rng`.
///
/// # Errors
/// Invalid parameters (see [`calibrate_private_mle`]), an unbounded set, weights, rows with
/// `‖x_i‖ > 2L` ([`Error::FeatureBound`]), a bound whose horizon is not the data's
/// (`FeatureBound::check_data`); [`Error::GuaranteeRefused`] when the accuracy
/// certificate is not below `β` (unless `allow_unguaranteed`).
pub fn private_mle(
    data: PairwiseView<'_>,
    opts: &PrivateMleOptions,
    rng: &mut NoiseRng,
) -> Result<Fit<PrivateMleDetail>> {
    data.require_all_rows("the private MLE")?;
    let radius = opts.set.radius().ok_or_else(|| {
        Error::param(
            "constraint",
            "the private MLE (anon., 2025, Algorithm 1) minimises over the ball Theta_B: use ball or theta-b with --radius",
        )
    })?;
    if data.weights().is_some() {
        return Err(Error::param(
            "weights",
            "sample weights are not supported by the central estimators (they change the sensitivity)",
        ));
    }
    let (n, d) = (data.n(), data.d());
    let params = PrivateMleParams {
        eta: opts.eta,
        alpha: opts.alpha,
        accuracy: opts.accuracy,
        ..PrivateMleParams::new(opts.eps, opts.delta, opts.feature_bound, radius, n, d)
    };
    let cal = calibrate_private_mle(&params)?;
    opts.feature_bound.check_data(&data)?;
    opts.control.validate()?;
    let b = gaussian_vector(d, cal.objective_noise_std, rng);
    let w = gaussian_vector(d, cal.output_noise_std, rng);
    // α‖θ‖² = (β_ridge/2n)‖θ‖² with β_ridge = 2αn; ⟨b,θ⟩/n is the linear term b.
    let ridge = 2.0 * cal.alpha * n as f64;
    let control = solver_control(&opts.control, cal.accuracy, radius, d);
    let minimiser = objpert_minimiser(data, opts.set, ridge, &b, &control)?;
    let obj = Objective::new(data, Logistic)
        .with_ridge(ridge)?
        .with_linear_term(b)?
        .with_par(control.par);
    let l = opts.feature_bound.value();
    let gap = gap_certificate(
        &obj,
        &opts.set,
        &minimiser.report.theta,
        2.0 * cal.alpha,
        l * l + 2.0 * cal.alpha,
    );
    let notes = vec![
        "corrected constants: s_b uses the gradient bound G = 2L (not the feature bound); alpha >= 4L^2/(eps n); beta = min(1/n, alpha/(d n^2))".into(),
        "the constant 40 of s_b and nu is the paper's (via Bassily et al. 2019, Thm 5.6); it has not been checked against that source".into(),
        "L is an a-priori bound: features are private under this relation".into(),
        "pairs with the private covariance (eps/2, delta/2) to (eps, delta) by basic composition".into(),
    ];
    release(
        Release {
            theta: minimiser.theta,
            report: minimiser.report,
            config: minimiser.detail.config,
            calibration: cal,
            gap,
            output_noise: w,
            mechanism: "private MLE: objective + output perturbation (anon. 2025, Algorithm 1, Lemma A.10)",
            notes,
        },
        opts,
        rng,
    )
}

/// The controls of the private-MLE solve: the caller's, aiming at an absolute gradient accuracy
/// `0.01β/(max(B, 1)√d)` (the gap certificate decides, not the solver's stop).
pub(super) fn solver_control(control: &Control, accuracy: f64, radius: f64, d: usize) -> Control {
    let mut control = control.clone();
    let aim = 0.01 * accuracy / radius.max(1.0) / (d as f64).sqrt();
    control.tol_rel = 0.0;
    control.tol_abs = if control.tol_abs > 0.0 {
        control.tol_abs.min(aim)
    } else {
        aim
    };
    control
}

/// What [`release`] turns into a private-MLE fit: the minimiser `θ̂` with its (non-private)
/// report and configuration, the calibration, the certified gap, the output noise `w` and the
/// words of the guarantee.
pub(super) struct Release<S> {
    pub theta: Vec<f64>,
    pub report: crate::solver::SolveReport,
    pub config: FitConfig<S>,
    pub calibration: PrivateMleCalibration,
    pub gap: f64,
    pub output_noise: Vec<f64>,
    pub mechanism: &'static str,
    pub notes: Vec<String>,
}

/// Step 6 of Algorithm 1: `θ̃ = θ̂ + w` with the `(ε/2, δ/2)` guarantee when the certified gap is
/// below `β`; otherwise [`Error::GuaranteeRefused`] (or, with `allow_unguaranteed`, the release
/// marked refused). The refusal depends on the data (module docs).
pub(super) fn release<S>(r: Release<S>, opts: &PrivateMleOptions, rng: &NoiseRng) -> Result<Fit<PrivateMleDetail<S>>> {
    let (gap, accuracy) = (r.gap, r.calibration.accuracy);
    let refusal = if !(gap < accuracy) {
        let reason = format!(
            "the certified objective gap is not below the accuracy beta that calibrates the output noise ({})",
            r.report.termination.describe()
        );
        if !opts.allow_unguaranteed {
            return Err(Error::GuaranteeRefused {
                reason,
                achieved: gap,
                tolerance: accuracy,
            });
        }
        Some(reason)
    } else {
        None
    };
    let detail = PrivateMleDetail {
        config: r.config,
        calibration: r.calibration,
        gap_certificate: gap,
    };
    // The release's certificate is the gap (`gap < β`); when it holds the fit is certified
    // whatever the solver's own stopping test said (as objective perturbation does with its
    // residual): `converged: false` and `precision-limit` beside a certified gap and a
    // guarantee would contradict themselves.
    let mut report = r.report;
    if refusal.is_none() {
        report.termination = crate::solver::Termination::Converged;
    }
    let mut model = Fit::new(r.theta, report, detail);
    model.theta.iter_mut().zip(&r.output_noise).for_each(|(t, v)| *t += v);
    if let Some(reason) = &refusal {
        model.refuse(reason);
    } else {
        let radius = opts.set.radius();
        model.guarantee = Some(Guarantee {
            eps: opts.eps / 2.0,
            delta: opts.delta / 2.0,
            model: PrivacyModel::Central,
            unit: PrivacyUnit::Item,
            neighbouring: Neighbouring::ReplaceRecord,
            mechanism: r.mechanism,
            noise: rng.source(),
            assumptions: Assumptions {
                feature_bound: Some(opts.feature_bound.value()),
                exactness_tol: Some(accuracy),
                radius,
                notes: std::iter::once(format!(
                    "objective gap certified <= {gap:.3e} < beta = {accuracy:.3e} (Frank-Wolfe / strong-convexity bound)"
                ))
                .chain(r.notes)
                .chain(trajectory_note(opts.feature_bound))
                .collect(),
            },
        });
    }
    Ok(model)
}

/// Settings of [`private_covariance`] (every field is checked there).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CovarianceOptions {
    /// `ε ∈ (0, 1]` of the pair; this release spends `ε/2`.
    pub eps: f64,
    /// `δ ∈ (0, 1/n²]`; this release spends `δ/2`.
    pub delta: f64,
    /// Feature bound `L` per step and horizon `H` (`‖x_i‖ ≤ 2HL`), a priori; the sensitivity
    /// uses `H·L` ([`crate::privacy::calibrate::covariance_sensitivity`]).
    pub feature_bound: FeatureBound,
    /// Replace-one (default) or add/remove.
    pub relation: Neighbouring,
    /// PSD repair: eigenvalues of the noisy matrix below this public floor are raised to it
    /// (post-processing). `None`: no repair. Default `Some(0.0)`.
    pub eigen_floor: Option<f64>,
    /// The memory the release may plan for (about `5·8d²` bytes,
    /// [`memory::covariance_bytes`]); default [`MemoryLimit::Default`].
    pub memory_limit: MemoryLimit,
}

impl CovarianceOptions {
    /// Replace-one, eigenvalue floor 0.
    pub fn new(eps: f64, delta: f64, feature_bound: FeatureBound) -> Self {
        CovarianceOptions {
            eps,
            delta,
            feature_bound,
            relation: Neighbouring::ReplaceRecord,
            eigen_floor: Some(0.0),
            memory_limit: MemoryLimit::Default,
        }
    }
}

/// The release of [`private_covariance`].
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PrivateCovariance {
    /// `d`.
    pub d: usize,
    /// The released symmetric `d × d` matrix, row-major (after the PSD repair, if any).
    pub matrix: Vec<f64>,
    /// Standard deviation `s_G` of the i.i.d. entries of `G` (before symmetrisation).
    pub noise_std: f64,
    /// Smallest eigenvalue of `Σ_D + G_sym` before the repair (a function of the release).
    pub min_eigenvalue_before_repair: f64,
    /// How many eigenvalues the floor raised.
    pub eigenvalues_floored: usize,
    /// `(ε/2, δ/2)`, standard DP.
    pub guarantee: Guarantee,
}

/// [`private_covariance`] of the features of `data`, after checking that the bound fits the
/// data (`FeatureBound::check_data`): data built from trajectories of horizon `H`
/// ([`crate::data::TrajectoryPairs::view`]) need `FeatureBound::trajectory(H, L)`, so the
/// per-step `L` cannot calibrate the noise. The labels and weights of `data` are not used.
///
/// # Errors
/// [`Error::InvalidParam`] named `feature-bound` for a horizon mismatch; the errors of
/// [`private_covariance`].
pub fn private_covariance_of_view(
    data: PairwiseView<'_>,
    opts: &CovarianceOptions,
    rng: &mut NoiseRng,
) -> Result<PrivateCovariance> {
    data.require_all_rows("the private covariance")?;
    opts.feature_bound.check_horizon(data.horizon())?;
    let (n, d) = (data.n(), data.d());
    match data.x() {
        Some(x) => private_covariance(x, n, d, opts, rng),
        None => {
            let mut x = vec![0.0; n * d];
            data.features().copy_into(0, &mut x);
            private_covariance(&x, n, d, opts, rng)
        }
    }
}

/// Algorithm 2's input condition `δ ≤ 1/n²`.
pub(super) fn check_covariance_delta(n: usize, delta: f64) -> Result<()> {
    let nf = n as f64;
    if delta > 1.0 / (nf * nf) {
        return Err(Error::param(
            "delta",
            format!(
                "the private covariance (anon., 2025, Algorithm 2) requires delta <= 1/n^2 = {:e}, got {}",
                1.0 / (nf * nf),
                delta
            ),
        ));
    }
    Ok(())
}

/// A PSD-repair floor must be finite.
pub(super) fn check_eigen_floor(floor: Option<f64>) -> Result<()> {
    match floor {
        Some(f) if !f.is_finite() => Err(Error::param("eigen-floor", format!("must be finite, got {f}"))),
        _ => Ok(()),
    }
}

/// The checks of [`private_covariance`], in order: shapes, `δ ≤ 1/n²`, the noise calibration,
/// the eigenvalue floor, finite features, rows within `2L`. The noise scale `s_G`.
fn check_covariance_inputs(x: &[f64], n: usize, d: usize, opts: &CovarianceOptions) -> Result<f64> {
    if n == 0 || d == 0 || x.len() != n * d {
        return Err(Error::Shape(format!(
            "features have {} entries, expected n x d = {n} x {d} with n, d >= 1",
            x.len()
        )));
    }
    check_covariance_delta(n, opts.delta)?;
    let s = private_covariance_std(opts.eps, opts.delta, opts.feature_bound, n, opts.relation)?;
    check_eigen_floor(opts.eigen_floor)?;
    for (i, v) in x.iter().enumerate() {
        if !v.is_finite() {
            return Err(Error::Data {
                input: "x",
                at: Location {
                    row: i / d,
                    col: Some(i % d),
                },
                kind: if v.is_nan() {
                    DataErrorKind::NaN
                } else {
                    DataErrorKind::Infinite
                },
            });
        }
    }
    check_rows(x, d, opts.feature_bound)?;
    Ok(s)
}

/// What to do instead of a `d × d` covariance that does not fit in memory.
pub(super) const COVARIANCE_ALTERNATIVE: &str =
    "the release is a d × d matrix: reduce d (e.g. project the features), or raise --memory-limit if the memory is there";

/// The computation named in a covariance's [`Error::MemoryLimit`].
pub(super) fn covariance_what(d: usize) -> String {
    format!("the private covariance (its {d} × {d} matrices)")
}

/// The planned peak of a `d × d` covariance release ([`memory::covariance_bytes`]) against
/// [`CovarianceOptions::memory_limit`].
pub(super) fn check_covariance_memory(d: usize, opts: &CovarianceOptions) -> Result<()> {
    opts.memory_limit.check(
        || covariance_what(d),
        memory::covariance_bytes(d),
        COVARIANCE_ALTERNATIVE,
    )
}

/// `Σ_D = (1/n)Σ x_ix_iᵀ` of the row-major `n × d` features, row-major `d × d` (lower triangle
/// accumulated, then mirrored).
fn second_moment(x: &[f64], n: usize, d: usize) -> Result<Vec<f64>> {
    let nf = n as f64;
    let mut sigma = memory::try_zeros(d.saturating_mul(d), || covariance_what(d), COVARIANCE_ALTERNATIVE)?;
    for r in x.chunks_exact(d) {
        for i in 0..d {
            let ri = r[i];
            for j in 0..=i {
                sigma[i * d + j] += ri * r[j];
            }
        }
    }
    for i in 0..d {
        for j in 0..=i {
            let v = sigma[i * d + j] / nf;
            sigma[i * d + j] = v;
            sigma[j * d + i] = v;
        }
    }
    Ok(sigma)
}

/// The PSD repair of the symmetric `d × d` matrix `m`: eigenvalues below `floor` are raised to
/// it, `m ← Q max(Λ, floor) Qᵀ` (unchanged when none is below, or without a floor). The smallest
/// eigenvalue before the repair and how many were raised.
pub(super) fn floor_eigenvalues(m: &mut [f64], d: usize, floor: Option<f64>) -> Result<(f64, usize)> {
    let evd = MatRef::from_row_major_slice(m, d, d)
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| Error::Numerical(format!("eigendecomposition of the noisy covariance: {e:?}")))?;
    let lam: Vec<f64> = (0..d).map(|k| evd.S().column_vector()[k]).collect();
    let min_eig = lam.iter().cloned().fold(f64::INFINITY, f64::min);
    let mut floored = 0;
    if let Some(f) = floor {
        if lam.iter().any(|&l| l < f) {
            let u = evd.U();
            let lam2: Vec<f64> = lam
                .iter()
                .map(|&l| {
                    if l < f {
                        floored += 1;
                        f
                    } else {
                        l
                    }
                })
                .collect();
            for i in 0..d {
                for j in 0..=i {
                    let v: f64 = (0..d).map(|k| u[(i, k)] * lam2[k] * u[(j, k)]).sum();
                    m[i * d + j] = v;
                    m[j * d + i] = v;
                }
            }
        }
    }
    Ok((min_eig, floored))
}

/// The `(ε/2, δ/2)` guarantee of the covariance release.
fn covariance_guarantee(opts: &CovarianceOptions, rng: &NoiseRng) -> Guarantee {
    covariance_guarantee_with(
        opts,
        rng,
        "private covariance: Gaussian mechanism (anon. 2025, Algorithm 2, corrected calibration)",
        "classic Gaussian mechanism at (eps/2, delta/2) with Frobenius sensitivity 4*sqrt(2)L^2/n (replace-one) or 4L^2/n (add/remove), in place of the paper's constant 64, which is too small".into(),
        "L is an a-priori bound: features are private under this relation".into(),
    )
}

/// The `(ε/2, δ/2)` guarantee of a covariance release with its mechanism and two notes (the
/// calibration, what is private), then the shared notes.
pub(super) fn covariance_guarantee_with(
    opts: &CovarianceOptions,
    rng: &NoiseRng,
    mechanism: &'static str,
    calibration: String,
    private: String,
) -> Guarantee {
    Guarantee {
        eps: opts.eps / 2.0,
        delta: opts.delta / 2.0,
        model: PrivacyModel::Central,
        unit: PrivacyUnit::Item,
        neighbouring: opts.relation,
        mechanism,
        noise: rng.source(),
        assumptions: Assumptions {
            feature_bound: Some(opts.feature_bound.value()),
            exactness_tol: None,
            radius: None,
            notes: vec![
                calibration,
                "noise symmetrised (G + G^T)/2 and eigenvalues floored: post-processing".into(),
                private,
            ]
            .into_iter()
            .chain(trajectory_note(opts.feature_bound))
            .collect(),
        },
    }
}

/// Algorithm 2 of "Provable protection of human judgements" (anon., 2025), corrected (module docs):
/// `Σ̃ = (1/n)Σ x_ix_iᵀ + G_sym`, `s_G` from [`private_covariance_std`], then the eigenvalue floor
/// `Σ̃ ← Q max(Λ, floor) Qᵀ` (post-processing: `Σ̃ + λI` is PD only when `λ > ‖G_sym‖`, the floor
/// makes `Σ̃` itself PSD). `x` is row-major `n × d`.
/// The raw features carry no horizon: for trajectory comparisons state
/// `FeatureBound::trajectory(H, L)`, or use [`private_covariance_of_view`] on the trajectory
/// view, which refuses any other bound.
///
/// # Errors
/// Invalid parameters, shapes, non-finite features ([`Error::Data`]), rows above `2L`
/// ([`Error::FeatureBound`]), `δ > 1/n²`, or an eigenvalue failure ([`Error::Numerical`]).
pub fn private_covariance(
    x: &[f64],
    n: usize,
    d: usize,
    opts: &CovarianceOptions,
    rng: &mut NoiseRng,
) -> Result<PrivateCovariance> {
    let s = check_covariance_inputs(x, n, d, opts)?;
    check_covariance_memory(d, opts)?;
    let sigma = second_moment(x, n, d)?;
    let g = symmetric_gaussian_matrix(d, s, rng);
    let mut m: Vec<f64> = sigma.iter().zip(&g).map(|(a, b)| a + b).collect();
    let (min_eig, floored) = floor_eigenvalues(&mut m, d, opts.eigen_floor)?;
    Ok(PrivateCovariance {
        d,
        matrix: m,
        noise_std: s,
        min_eigenvalue_before_repair: min_eig,
        eigenvalues_floored: floored,
        guarantee: covariance_guarantee(opts, rng),
    })
}

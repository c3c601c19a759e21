//! Central label DP by **objective perturbation** (Chowdhury, Zhou & Natarajan (2024),
//! Algorithm 2 in App. D, Thm 5.2):
//!
//! `θ̂_obj = argmin_{θ ∈ Θ_B} (1/n) Σ_i ℓ(x_iᵀθ; y_i) + (β/2n)‖θ‖² + (1/n)⟨w, θ⟩`,
//! `w ~ N(0, s_w² I_d)`, `s_w = L √(8 ln(2/δ) + 4ε)/ε`,
//!
//! with `ℓ` the logistic loss on **clear** labels and `L` the caller's feature bound
//! (`‖φ‖ ≤ L`, so `‖x_i‖ ≤ 2L`). This is exactly [`crate::objective::Objective`] with ridge `β`
//! and linear term `w` (the `(β/2n, 1/n)` scaling of Algorithm 2; the main text's
//! "mean + (β/2)‖θ‖² + wᵀθ", read with the appendix's mean loss, is a different estimator
//! whose error does not vanish as `n` grows, and which Thm 5.3 does not cover).
//!
//! Conditions enforced (typed errors):
//! * `L` is stated, never read from the data: a row with `‖x_i‖ > 2L` is
//!   [`Error::FeatureBound`] naming the row (not clipped);
//! * `β > 0` (under label DP the privacy proof (App. D.2) needs only strong convexity,
//!   because the Hessian `Σσ'(x_iᵀθ)x_ix_iᵀ + βI` does not depend on the labels — which is also
//!   why the loss must be the logistic one: other losses are rejected);
//! * no sample weights (they would change the sensitivity `‖x_j‖`);
//! * trajectory comparisons of `H` steps (rows `x_i = Σ_h [φ(s_h¹, a_h¹) − φ(s_h⁰, a_h⁰)]`,
//!   [`crate::data::trajectory_pairs`]) have `‖x_i‖ ≤ 2HL`: the label-flip sensitivity is `2HL`
//!   and every `L` above is `H·L` (the per-step bound summed over the horizon; Lemma C.3 of
//!   "Provable protection of human judgements" (anon., 2025) bounds the gradient by `2HL`, and
//!   the proof of Chowdhury, Zhou & Natarajan (2024), Thm 5.2, needs only that bound on
//!   `‖x_j‖`). The bound is a [`FeatureBound`]: `FeatureBound::trajectory(H, L)` forms `H·L`
//!   itself, and data marked with horizon `H` ([`PairwiseView::horizon`]) refuse any other
//!   bound, so the per-step `L` cannot calibrate `H` times too little noise.
//!
//! **Exactness.** Thm 5.2 is proved for the exact minimiser only. The estimator solves with
//! exact projected Newton, returns the achieved KKT residual `‖θ − Π(θ − ∇F(θ))‖` and
//! **refuses** the guarantee ([`Error::GuaranteeRefused`]) when it exceeds the certified
//! tolerance `kkt_tol` (default `1e-9`, recorded in the guarantee's assumptions), unless the
//! caller asked for an explicitly unguaranteed result (`allow_unguaranteed`). The report's
//! termination is [`Termination::Converged`] whenever that residual is within `kkt_tol`, even if
//! the solver's own (absolute, gradient-unit) stopping test ended it otherwise: at a tiny `ε`
//! the noise term is so large that the rounding of the gradient stays above that test's aim
//! (the solver stops at `precision-limit`) while the residual in the units of `θ` is at the
//! rounding floor; a residual within the tolerance is the certificate, so the fit is certified.
//!
//! **A refusal depends on the data.** Whether the certificate holds is a function of the
//! dataset and the noise draw, so a refusal (an error, or `guarantee: None` with
//! `allow_unguaranteed`) is itself an output about the data that Thm 5.2 does not cover. If the
//! refusal probability over the noise is at most `p` on every dataset, the mechanism that
//! releases `θ` or the refusal is `(ε, δ + (1 + e^ε)·p)`-label DP (couple it with the exact
//! minimiser, which always exists, and charge the refusal event on both neighbours). No
//! worst-case bound on `p` is proved: in exact arithmetic Newton always certifies this strongly
//! convex problem, and a refusal comes from floating-point limits (or a caller's tight
//! `max_iter`). Measured at the CLI's defaults (`β = √n/B`, `kkt_tol = 1e-9`, Newton with 100
//! iterations) over 14 400 random BTL datasets (`n` from 100 to 5·10⁴, `d` from 2 to 30,
//! features scaled by 0.01, 1 and 100, `ε ∈ {0.1, 1}`; `cargo run --release -p
//! privpref-experiments --example refusal_rate -- 200`, `bench-results/refusal_rate.md`):
//! **0 refusals**, the largest residual 2.9·10⁻⁴ of the tolerance. Do not tighten `kkt_tol`
//! or `max_iter` on real data without measuring the refusal rate again.
//!
//! **Output perturbation** (optional, for approximate minimisers) [derived, after Iyengar et al.
//! 2019 "approximate minima perturbation"]: with `F` `μ`-strongly convex (`μ = β/n`) and
//! `M`-smooth (`M = L² + β/n`, since `σ' ≤ 1/4` and `‖x‖ ≤ 2L`), a KKT residual `r` certifies
//! `‖θ̂ − θ_exact‖ ≤ e(r) = r((1+M) + √((1+M)² + 4μ))/(2μ)` (from the projection inequality and
//! strong monotonicity). If `e(r) ≤ τ` (the caller's public radius), releasing
//! `θ̂ + N(0, ν² I)`, `ν = 2τ √(2 ln(1.25/δ₂))/ε₂` (classic Gaussian mechanism on the error
//! `θ̂ − θ_exact`, whose sensitivity given `θ_exact` is `≤ 2τ`), is `(ε₁ + ε₂, δ₁ + δ₂)`-label DP
//! by adaptive composition, where `(ε₁, δ₁)` calibrates `w`. The caller's `(ε, δ)` is the total;
//! `(ε₂, δ₂)` is the output share.
//!
//! Only `θ` is covered by the guarantee. The [`SolveReport`](crate::solver::SolveReport) (objective value, multiplier,
//! residual, iterations) is a diagnostic of the non-private solve: do not release it.

use crate::data::{FeatureBound, Features, PairwiseView};
use crate::error::{check_delta, check_eps, Error, Result};
use crate::feasible::FeasibleSet;
use crate::loss::{Logistic, LossSpec};
use crate::model::{Fit, FitConfig, Local};
use crate::objective::Objective;
use crate::privacy::calibrate::{gaussian_mechanism_std, objpert_noise_std};
use crate::privacy::{
    gaussian_vector, Assumptions, Guarantee, Neighbouring, NoiseRng, NoiseSource, PrivacyModel, PrivacyUnit,
};
use crate::solver::{newton, Control, Termination};

/// Default certified exactness tolerance on the KKT residual of the mean-form objective.
pub const DEFAULT_KKT_TOL: f64 = 1e-9;

/// The output-perturbation share of the budget and its public radius (see the module docs).
/// Checked by [`objective_perturbation`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct OutputPerturbation {
    /// `τ > 0`: the certified bound `‖θ̂ − θ_exact‖ ≤ τ` the noise is calibrated to.
    pub radius: f64,
    /// `ε₂ ∈ (0, min(ε, 1))`, the output share of `ε`.
    pub eps: f64,
    /// `δ₂ ∈ (0, δ)`, the output share of `δ`.
    pub delta: f64,
}

impl OutputPerturbation {
    /// Radius `τ` and the output share `(ε₂, δ₂)` of the budget.
    pub fn new(radius: f64, eps: f64, delta: f64) -> Self {
        OutputPerturbation { radius, eps, delta }
    }
}

/// Settings of [`objective_perturbation`] (every field is checked there).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ObjPertOptions {
    /// Total `ε > 0` of the release.
    pub eps: f64,
    /// Total `δ ∈ (0, 1)`.
    pub delta: f64,
    /// Feature bound: `‖φ‖ ≤ L` per step and the horizon `H` (1 for pairwise data); rows need
    /// `‖x_i‖ ≤ 2HL` and the noise is calibrated to `H·L` (module docs).
    pub feature_bound: FeatureBound,
    /// Ridge `β > 0` of `(β/2n)‖θ‖²` (Thm 5.3's utility choice is `√n/B`, see [`default_beta`]).
    pub beta: f64,
    /// The feasible set (`Θ_B` in the paper).
    pub set: FeasibleSet,
    /// Certified tolerance on the KKT residual (default [`DEFAULT_KKT_TOL`]).
    pub kkt_tol: f64,
    /// Optional output perturbation.
    pub output: Option<OutputPerturbation>,
    /// Return an explicitly unguaranteed result (`guarantee: None`, `refusal: Some(..)`)
    /// instead of [`Error::GuaranteeRefused`] when the certificate fails.
    pub allow_unguaranteed: bool,
    /// Solver stopping rules (the tolerance is tightened to `kkt_tol` if looser).
    pub control: Control,
}

impl ObjPertOptions {
    /// Exact objective perturbation over `set` with the default tolerance, no output noise.
    pub fn new(eps: f64, delta: f64, feature_bound: FeatureBound, beta: f64, set: FeasibleSet) -> Self {
        ObjPertOptions {
            eps,
            delta,
            feature_bound,
            beta,
            set,
            kkt_tol: DEFAULT_KKT_TOL,
            output: None,
            allow_unguaranteed: false,
            control: Control::default(),
        }
    }
}

/// `β = √n / B`, the choice of the utility proof of Chowdhury, Zhou & Natarajan (2024), Thm 5.3
/// (Algorithm-2 units).
///
/// # Errors
/// [`Error::InvalidParam`] when the set has no radius; [`Error::Shape`] for `n = 0`.
pub fn default_beta(n: usize, set: &FeasibleSet) -> Result<f64> {
    if n == 0 {
        return Err(Error::Shape("the default beta = sqrt(n)/B needs n >= 1 samples".into()));
    }
    let b = set.radius().ok_or_else(|| {
        Error::param(
            "beta",
            "the default beta = sqrt(n)/B needs a bounded set (theta-b or ball); give beta explicitly",
        )
    })?;
    Ok((n as f64).sqrt() / b)
}

/// The detail of an objective-perturbation release ([`objective_perturbation`]). The fit's
/// `theta` is the released estimate, its `guarantee` the release's (`None` only when refused
/// and `allow_unguaranteed` was set; [`Fit::refusal`] says why), and its `report` the
/// solver's diagnostic of the *unperturbed* minimiser: never release the report. The
/// achieved Euclidean KKT residual `‖θ − Π(θ − ∇F)‖` of the minimiser is the report's
/// `certificate.projected_gradient`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct ObjPertDetail {
    /// The configuration of the perturbed objective (logistic loss, ridge `β`, linear term).
    pub config: FitConfig,
    /// The certified tolerance the KKT residual was checked against.
    pub kkt_tol: f64,
    /// Certified bound on `‖θ̂ − θ_exact‖` from the residual (see the module docs).
    pub distance_bound: f64,
    /// `s_w` of the objective noise.
    pub noise_std: f64,
    /// `ν` of the output noise, if any.
    pub output_noise_std: Option<f64>,
    /// `β` used.
    pub beta: f64,
}

/// Checks every row satisfies `‖x_i‖ ≤ 2HL` (`2L` for pairwise data; no slack, no clipping).
///
/// # Errors
/// [`Error::FeatureBound`] naming the first offending row.
pub(crate) fn check_rows(x: &[f64], d: usize, bound: FeatureBound) -> Result<()> {
    bound.check_rows(Features::F64(x), d)
}

/// The guarantee note of a trajectory bound (`None` for pairwise data).
pub(crate) fn trajectory_note(bound: FeatureBound) -> Option<String> {
    (bound.horizon() > 1).then(|| {
        format!(
            "trajectory comparisons of horizon H = {}: per-step bound L = {}, feature bound H*L = {} (||x|| <= 2HL)",
            bound.horizon(),
            bound.per_step(),
            bound.value()
        )
    })
}

/// `e(r) = r((1+M) + √((1+M)² + 4μ))/(2μ)`: the certified bound on the distance to the exact
/// minimiser of a `μ`-strongly convex, `M`-smooth objective over a convex set, given the KKT
/// residual `r = ‖θ − Π(θ − ∇F(θ))‖` (module docs).
pub fn distance_bound(kkt_residual: f64, mu: f64, smooth: f64) -> f64 {
    let a = 1.0 + smooth;
    kkt_residual * (a + (a * a + 4.0 * mu).sqrt()) / (2.0 * mu)
}

fn common_checks(data: &PairwiseView<'_>, bound: FeatureBound, beta: f64) -> Result<()> {
    data.require_all_rows("objective perturbation")?;
    if !(beta.is_finite() && beta > 0.0) {
        return Err(Error::param(
            "beta",
            format!("objective perturbation needs beta > 0 (strong convexity makes w -> theta a bijection; Chowdhury, Zhou & Natarajan 2024, App. D.2), got {beta}"),
        ));
    }
    if data.weights().is_some() {
        return Err(Error::param(
            "weights",
            "sample weights are not supported by the central estimators (they change the sensitivity)",
        ));
    }
    bound.check_data(data)
}

/// The minimiser of Algorithm 2's objective for a **given** noise vector `w` (no privacy:
/// `guarantee` is `None`). This is what [`objective_perturbation`] computes after drawing `w`;
/// exposed for reference tests and audits.
///
/// # Errors
/// Invalid input (shapes, `β ≤ 0`, weights, a row above `2L` when `feature_bound` is given).
pub fn objpert_minimiser(
    data: PairwiseView<'_>,
    set: FeasibleSet,
    beta: f64,
    w: &[f64],
    control: &Control,
) -> Result<Fit> {
    if !(beta.is_finite() && beta > 0.0) {
        return Err(Error::param("beta", format!("must be finite and > 0, got {beta}")));
    }
    let obj = Objective::new(data, Logistic)
        .with_ridge(beta)?
        .with_linear_term(w.to_vec())?
        .with_par(control.par);
    let report = newton::solve(&obj, &set, None, control).map_err(central_memory_error)?;
    let config = FitConfig::new(LossSpec::Mle, set, beta, true, "newton");
    Ok(Fit::new(report.theta.clone(), report, Local::new(config)))
}

/// Dense Newton's [`Error::MemoryLimit`] with the alternative of the central mechanisms, whose
/// calibrations rely on its exact minimiser (no other solver can be chosen).
fn central_memory_error(e: Error) -> Error {
    match e {
        Error::MemoryLimit {
            what,
            needed,
            limit,
            limit_from,
            ..
        } => Error::MemoryLimit {
            what: format!("the central mechanism's exact minimiser, {what},"),
            needed,
            limit,
            limit_from,
            alternative: "the central calibrations need this exact minimiser: reduce d (e.g. project the features), or fit label-DP (local) with --solver lbfgs".into(),
        },
        e => e,
    }
}

/// The `(ε, δ)` left for the objective noise: all of it, or, with output perturbation, what the
/// output noise does not take (its radius, ε and δ checked).
fn budget_split(opts: &ObjPertOptions) -> Result<(f64, f64)> {
    match &opts.output {
        None => Ok((opts.eps, opts.delta)),
        Some(o) => {
            if !(o.radius.is_finite() && o.radius > 0.0) {
                return Err(Error::param(
                    "output-radius",
                    format!("must be finite and > 0, got {}", o.radius),
                ));
            }
            if !(o.eps > 0.0 && o.eps < opts.eps) {
                return Err(Error::param(
                    "output-eps",
                    format!("must be in (0, eps = {}), got {}", opts.eps, o.eps),
                ));
            }
            if !(o.delta > 0.0 && o.delta < opts.delta) {
                return Err(Error::param(
                    "output-delta",
                    format!("must be in (0, delta = {}), got {}", opts.delta, o.delta),
                ));
            }
            Ok((opts.eps - o.eps, opts.delta - o.delta))
        }
    }
}

/// The guarantee of an objective-perturbation release that passed its certificate: the budget
/// `(ε₁, δ₁)` of the objective noise, the certified distance `dist` (with output perturbation)
/// or KKT residual, and the noise source.
fn objpert_guarantee(
    opts: &ObjPertOptions,
    (eps1, delta1): (f64, f64),
    dist: f64,
    kkt_residual: f64,
    noise: NoiseSource,
) -> Guarantee {
    let mut notes = vec![
        "loss: logistic on clear labels (its Hessian does not depend on the labels; Chowdhury, Zhou & Natarajan 2024, App. D.2)".to_string(),
        format!("beta = {} > 0 fixed before seeing the labels", opts.beta),
        "one draw of w is one release; refitting with fresh noise composes".to_string(),
        "only theta is covered; solver diagnostics (objective, residual, iterations) are not".to_string(),
    ];
    if let Some(o) = &opts.output {
        notes.push(format!(
            "output perturbation: certified ||theta_hat - theta_exact|| <= {dist:.3e} <= tau = {}; (eps, delta) split ({eps1}, {delta1}) + ({}, {})",
            o.radius, o.eps, o.delta
        ));
    } else {
        notes.push(format!(
            "exact minimiser: KKT residual {kkt_residual:.3e} <= certified tolerance {:.1e}",
            opts.kkt_tol
        ));
    }
    notes.extend(trajectory_note(opts.feature_bound));
    Guarantee {
        eps: opts.eps,
        delta: opts.delta,
        model: PrivacyModel::Central,
        unit: PrivacyUnit::Item,
        neighbouring: Neighbouring::LabelChange,
        mechanism: if opts.output.is_some() {
            "objective perturbation (Chowdhury, Zhou & Natarajan 2024, Algorithm 2, Thm 5.2) + output perturbation (approximate minima perturbation)"
        } else {
            "objective perturbation (Chowdhury, Zhou & Natarajan 2024, Algorithm 2, Thm 5.2)"
        },
        noise,
        assumptions: Assumptions {
            feature_bound: Some(opts.feature_bound.value()),
            exactness_tol: Some(opts.output.map_or(opts.kkt_tol, |o| o.radius)),
            radius: opts.set.radius(),
            notes,
        },
    }
}

/// Objective perturbation (module docs): draws `w ~ N(0, s_w² I)` from `rng` (then, with output
/// perturbation, the output noise), solves exactly, certifies, and releases.
///
/// # Errors
/// * [`Error::InvalidParam`] / [`Error::FeatureBound`] / [`Error::Data`] for invalid input
///   (including a bound whose horizon is not the data's, `FeatureBound::check_data`);
/// * [`Error::GuaranteeRefused`] when the KKT residual exceeds `kkt_tol` (whatever the solver's
///   termination; `NaN` never passes), or, with output perturbation, when the distance bound
///   exceeds `τ` — unless `allow_unguaranteed`.
pub fn objective_perturbation(
    data: PairwiseView<'_>,
    opts: &ObjPertOptions,
    rng: &mut NoiseRng,
) -> Result<Fit<ObjPertDetail>> {
    check_eps(opts.eps)?;
    check_delta(opts.delta)?;
    common_checks(&data, opts.feature_bound, opts.beta)?;
    if !(opts.kkt_tol.is_finite() && opts.kkt_tol > 0.0) {
        return Err(Error::param(
            "kkt-tol",
            format!("must be finite and > 0, got {}", opts.kkt_tol),
        ));
    }
    opts.control.validate()?;
    let (eps1, delta1) = budget_split(opts)?;
    let noise_std = objpert_noise_std(eps1, delta1, opts.feature_bound)?;
    let output_noise_std = opts
        .output
        .map(|o| gaussian_mechanism_std(2.0 * o.radius, o.eps, o.delta))
        .transpose()?;
    let d = data.d();
    let n = data.n();
    // Draw all noise before solving (the order is part of the reproducibility contract).
    let w = gaussian_vector(d, noise_std, rng);
    let out_noise = output_noise_std.map(|s| gaussian_vector(d, s, rng));

    // The solver aims at the absolute residual the certificate below needs (Euclidean
    // `‖θ − Π(θ − ∇F)‖ ≤ kkt_tol`; its components at `0.1·kkt_tol/√d`).
    let mut control = opts.control.clone();
    let aim = 0.1 * opts.kkt_tol / (data.d() as f64).sqrt();
    control.tol_rel = 0.0;
    control.tol_abs = if control.tol_abs > 0.0 {
        control.tol_abs.min(aim)
    } else {
        aim
    };
    let minimiser = objpert_minimiser(data, opts.set, opts.beta, &w, &control)?;
    let r = &minimiser.report;
    let nf = n as f64;
    let mu = opts.beta / nf;
    let l = opts.feature_bound.value();
    let smooth = l * l + mu;
    let dist = distance_bound(r.certificate.projected_gradient, mu, smooth);

    // The certificate alone decides (a solver that stopped early but met it is fine; a
    // non-finite residual never meets it). The refusal is data-dependent (module docs: it
    // costs (1 + e^ε)·p of δ when refusals have probability at most p on every dataset).
    let refusal = match &opts.output {
        Some(o) if !(dist <= o.radius) => Some((
            format!(
                "the certified distance to the exact minimiser exceeds the output-perturbation radius (solver: {})",
                r.termination.describe()
            ),
            dist,
            o.radius,
        )),
        None if !(r.certificate.projected_gradient <= opts.kkt_tol) => Some((
            format!(
                "the proof of Chowdhury, Zhou & Natarajan (2024), Thm 5.2, covers the exact minimiser only, and the KKT residual is above the certified tolerance (solver: {})",
                r.termination.describe()
            ),
            r.certificate.projected_gradient,
            opts.kkt_tol,
        )),
        _ => None,
    };
    if let Some((reason, achieved, tolerance)) = &refusal {
        if !opts.allow_unguaranteed {
            return Err(Error::GuaranteeRefused {
                reason: reason.clone(),
                achieved: *achieved,
                tolerance: *tolerance,
            });
        }
    }
    let kkt_residual = r.certificate.projected_gradient;
    let detail = ObjPertDetail {
        config: minimiser.detail.config,
        kkt_tol: opts.kkt_tol,
        distance_bound: dist,
        noise_std,
        output_noise_std,
        beta: opts.beta,
    };
    // The release's certificate is the one shown (`kkt_residual ≤ kkt_tol`, the projected
    // gradient in the units of θ); when it holds, the fit is certified whatever the solver's own
    // stopping test said. That test is absolute in the units of the gradient, which the noise
    // term b = w/n sets: at a small ε (a huge b) its rounding stays above the aim, the solver
    // ends `precision-limit` at a point the certificate accepts, and `converged: false` beside
    // a residual below its tolerance and a guarantee would contradict itself.
    let mut report = minimiser.report;
    if kkt_residual <= opts.kkt_tol {
        report.termination = Termination::Converged;
    }
    let mut model = Fit::new(minimiser.theta, report, detail);
    if let Some(z) = &out_noise {
        model.theta.iter_mut().zip(z).for_each(|(t, v)| *t += v);
    }
    if let Some((reason, ..)) = &refusal {
        model.refuse(reason);
    } else {
        model.guarantee = Some(objpert_guarantee(
            opts,
            (eps1, delta1),
            dist,
            kkt_residual,
            rng.source(),
        ));
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_bound_is_exact_for_a_quadratic() {
        // F(θ) = (μ/2)θ² on ℝ: residual r = μθ, distance θ = r/μ ≤ e(r).
        let (mu, m) = (0.5, 0.5);
        let theta = 3.0;
        let r = mu * theta;
        let e = distance_bound(r, mu, m);
        assert!(e >= theta && e < 4.0 * theta, "{e}");
    }

    #[test]
    fn rows_above_twice_the_bound_are_named() {
        let x = [0.5, 0.5, 1.5, 1.5, 0.1, 0.0];
        let fb = |l| FeatureBound::pairwise(l).unwrap();
        match check_rows(&x, 2, fb(1.0)) {
            Err(Error::FeatureBound { row, norm, limit }) => {
                assert_eq!(row, 1);
                assert!((norm - 1.5 * 2f64.sqrt()).abs() < 1e-15);
                assert_eq!(limit, 2.0);
            }
            other => panic!("{other:?}"),
        }
        assert!(check_rows(&x, 2, fb(1.1)).is_ok());
        assert!(check_rows(&[f64::NAN, 0.0], 2, fb(1.0)).is_err());
        // A trajectory bound of horizon 2 with L = 0.55 allows the same rows as L = 1.1.
        assert!(check_rows(&x, 2, FeatureBound::trajectory(2, 0.55).unwrap()).is_ok());
    }
}

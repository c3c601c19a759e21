//! The parts the first-order-model solvers (projected L-BFGS and Newton-CG) share: the tests at
//! the current point (recession, KKT, polishing, budget), the polishing rule, step caps, the
//! Armijo search along the projection arc, and the move to an accepted point.

use super::certificate::{Certifier, Kkt};
use super::run::Run;
use super::scales::ColumnScales;
use super::{all_finite, dot, Progress, SolveReport, Termination};
use crate::feasible::{center, norm, FeasibleSet};
use crate::objective::{Eval, SmoothObjective};

/// Armijo sufficient-decrease constant.
pub(crate) const ARMIJO: f64 = 1e-4;
/// Backtracking trials per line search.
pub(crate) const MAX_TRIALS: usize = 60;
/// A quasi-Newton direction with `cos∠(d, −g_w)` below this is replaced by `−g_w`.
pub(crate) const MIN_COS: f64 = 1e-8;
/// Without a ball, steps longer than this times `max(1, ‖θ‖)` are shortened.
pub(crate) const MAX_STEP: f64 = 1e3;
/// `‖θ‖ ≥ B(1 − FACE_TOL)` counts as on the sphere.
pub(crate) const FACE_TOL: f64 = 1e-12;
/// The face is released when the tangent gradient is below this times `|μ|B` with `μ < 0`.
pub(crate) const RELEASE: f64 = 0.1;
/// Polishing stops once the residual is this fraction of the tolerance.
pub(crate) const POLISH_FACTOR: f64 = 1e-3;
/// Polishing ends early at a point whose estimated distance to the minimiser — the solver's
/// own model of the Newton correction there, in the column-scaled norm of [`super::scales`] —
/// is at most `ACCURATE·τ·max(1, ‖c ∘ θ‖)` (`τ` the tolerance; the scale of a change in the
/// scores): `θ` then has about the relative accuracy `10·τ` that the tolerance alone gives a
/// problem of condition number 10 — and that the Plackett–Luce high-precision fixture holds
/// the solvers to (`1e-9·max(1, ‖θ‖)` at the default `τ = 1e-10`; `ACCURATE = 100` failed it).
/// The tolerance bounds the KKT residual, so on a
/// well-conditioned problem `θ` is that accurate when the tolerance is met; polishing buys the
/// digits an ill-conditioned problem lacks, at a pass or more per iteration.
pub(crate) const ACCURATE: f64 = 10.0;
/// Non-convex losses without a ball: a step at a KKT point longer than this times
/// `max(1, ‖θ‖)` is not negligible.
pub(crate) const STALL_STEP: f64 = 1e-3;
/// Consecutive aligned long steps at KKT points that signal a recession direction.
pub(crate) const RECESSION_STEPS: usize = 5;
/// `|∇Fᵀd|` below this times `1 + |F|`: the decrease is below what `F` resolves.
pub(crate) const FLOOR: f64 = 1e-13;

/// Polishing after convergence: once the KKT tolerance is met, a few more iterations run while
/// the residual keeps falling (they shrink the error in `θ` on ill-conditioned problems at the
/// cost of a pass each); the best point is kept — its `θ` and residual only (no `O(n)` copy of
/// its evaluation, which is redone if that point is returned). At most `limit` such iterations
/// ([`LbfgsOptions::polish_iters`](super::lbfgs::LbfgsOptions::polish_iters); Newton-CG uses the
/// same rule).
pub(crate) struct Polish {
    /// The best point since the tolerance was first met, and its relative KKT residual.
    pub best: Option<(Vec<f64>, f64)>,
    iters: usize,
    limit: usize,
    tol: f64,
}

impl Polish {
    pub fn new(limit: usize, tol: f64) -> Self {
        Polish {
            best: None,
            iters: 0,
            limit,
            tol,
        }
    }
    /// Records a point meeting the tolerance; `true` when the run should stop.
    pub(crate) fn offer(&mut self, theta: &[f64], kkt: f64) -> bool {
        if self.best.as_ref().is_none_or(|b| kkt < b.1) {
            self.best = Some((theta.to_vec(), kkt));
        }
        if kkt <= POLISH_FACTOR * self.tol || self.iters >= self.limit {
            return true;
        }
        self.iters += 1;
        false
    }
    /// Makes `theta` (meeting the tolerance with residual `kkt`) the point to return, whether
    /// or not an earlier one had a smaller residual (a solver that judged it accurate).
    pub(crate) fn settle(&mut self, theta: &[f64], kkt: f64) {
        self.best = Some((theta.to_vec(), kkt));
    }
    /// Whether polishing has begun (trial points are then evaluated with the certificate's term
    /// magnitudes).
    pub fn active(&self) -> bool {
        self.best.is_some()
    }
    /// A fresh polishing budget (after the best point failed the certificate).
    pub fn restart(&mut self) {
        self.iters = 0;
    }
}

/// The outcome of the tests at the current point that let the iteration go on.
pub(crate) struct AtPoint {
    /// The relative KKT residual with the current term magnitudes.
    pub kkt: f64,
    /// Whether it meets the tolerances.
    pub at_kkt: bool,
    /// Non-convex loss without a ball at a KKT point: it counts only once the step there is
    /// short (checked after the direction).
    pub check_flat: bool,
}

impl<O: SmoothObjective> Run<'_, O> {
    /// The tests at the current point: finiteness, progress, a certificate of unboundedness
    /// (convex losses without a ball), a KKT point that is a recession (separable data),
    /// polishing, a stop request and the iteration budget. `Err` ends the run.
    pub(crate) fn first_order_checks(
        &mut self,
        solver: &'static str,
        budget: usize,
        polish: &mut Polish,
        flat_steps: &mut usize,
    ) -> Result<AtPoint, Termination> {
        if !all_finite(&self.ev) {
            return Err(Termination::NonFinite);
        }
        let est = self.estimate();
        let kkt = est.relative;
        if self.ctl.wants_progress(self.rep.counts.iterations) {
            self.ctl.notify_progress(&Progress {
                solver,
                iteration: self.rep.counts.iterations,
                budget,
                objective: self.ev.value,
                kkt_residual: kkt,
                data_passes: Some(self.rep.data_passes()),
                theta: &self.theta,
            });
        }
        let unbounded = self.set.radius().is_none();
        let recession = if unbounded && O::CONVEX {
            self.obj.recession_slope(&self.ev)
        } else {
            None
        };
        if let Some((slope, size)) = recession {
            if slope < -1e-10 * size {
                return Err(Termination::NoMinimizer);
            }
        }
        let at_kkt = self.cert.meets(&est);
        // A KKT point where F does not increase along the ray {rθ} while Xθ ≠ 0: the infimum is
        // approached at infinity (separable data), not attained here.
        if at_kkt && at_kkt_recession(recession) && self.obj.scores_nonzero(&self.ev) {
            return Err(Termination::NoMinimizer);
        }
        // Without a ball a non-convex loss can flatten out at infinity: a KKT point counts only
        // once the step there is short (checked after the direction).
        let check_flat = at_kkt && unbounded && !O::CONVEX;
        if !check_flat {
            *flat_steps = 0;
        }
        if at_kkt && !check_flat && polish.offer(&self.theta, kkt) {
            return Err(Termination::Converged);
        }
        if let Some(t) = self.ctl.stop_requested() {
            return Err(t);
        }
        if self.rep.counts.iterations >= budget {
            return Err(Termination::MaxIterations);
        }
        Ok(AtPoint {
            kkt,
            at_kkt,
            check_flat,
        })
    }

    /// Moves to the accepted point `new_theta`, whose evaluation is in `trial` (swapped into the
    /// run). Returns the step; `Err(NoMinimizer)` when, without a ball, `‖θ‖` passed the cap.
    pub fn accept(&mut self, new_theta: Vec<f64>, trial: &mut Eval) -> Result<Vec<f64>, Termination> {
        let s: Vec<f64> = new_theta.iter().zip(&self.theta).map(|(a, b)| a - b).collect();
        self.rep.detail.last_step_norm = norm(&s);
        std::mem::swap(&mut self.ev, trial);
        self.theta = new_theta;
        self.rep.counts.iterations += 1;
        if self.set.radius().is_none() && self.cols.norm(&self.theta) > self.ctl.norm_cap {
            return Err(Termination::NoMinimizer);
        }
        Ok(s)
    }

    /// The line search of this iteration ([`arc_search`]) from the current point.
    pub(crate) fn arc_search(
        &mut self,
        dir: &[f64],
        face_mu: Option<f64>,
        trial: &mut Eval,
        xd: &mut Vec<f64>,
        polishing: bool,
    ) -> Arc {
        let cert = polishing.then_some(&mut self.cert);
        arc_search(
            self.obj,
            self.set,
            &self.ev,
            dir,
            face_mu,
            trial,
            xd,
            &mut self.rep,
            cert,
        )
    }
}

/// The steps of a solver that polishes after meeting the tolerance (L-BFGS, Newton-CG).
pub(crate) trait PolishedIterations {
    /// One iteration; `Err` ends the iterations.
    fn iteration(&mut self) -> Result<(), Termination>;
    /// The certification of the best polished point once the iterations end: `Some` ends the
    /// run, `None` sends it back to iterating (the point failed the certificate with fresh term
    /// magnitudes).
    fn confirm_best(&mut self, termination: Termination) -> Option<Termination>;
}

/// Runs `steps` to their termination.
pub(crate) fn drive<S: PolishedIterations>(steps: &mut S) -> Termination {
    loop {
        let termination = loop {
            if let Err(t) = steps.iteration() {
                break t;
            }
        };
        if let Some(t) = steps.confirm_best(termination) {
            return t;
        }
    }
}

/// The certificate a solver computed for its returned point, and the objective there.
pub(crate) type Certified = Option<(Kkt, f64)>;

/// The count of consecutive "flat" steps at a point that meets the KKT tolerance: 0 when the
/// step `dir` is negligible next to `max(1, ‖θ‖_c)` (a minimiser; sizes in the column-scaled
/// norm of [`super::scales`]), one more than `flat` when it points the way of the previous step
/// `prev` (cosine > 0.9), else 1. [`RECESSION_STEPS`] of them in a row signal a direction of
/// recession.
pub(crate) fn count_flat_steps(
    cols: &ColumnScales,
    theta: &[f64],
    dir: &[f64],
    dn: f64,
    prev: Option<&[f64]>,
    flat: usize,
) -> usize {
    if cols.norm(dir) <= STALL_STEP * cols.size(theta) {
        return 0;
    }
    let aligned = prev.is_some_and(|q| dot(q, dir) > 0.9 * norm(q) * dn);
    if aligned {
        flat + 1
    } else {
        1
    }
}

/// Scales an unconstrained step `dir` down to at most [`MAX_STEP`]` · max(1, ‖θ‖_c)` in the
/// column-scaled norm.
pub(crate) fn cap_step(cols: &ColumnScales, dir: &mut [f64], theta: &[f64]) {
    let cap = MAX_STEP * cols.size(theta);
    let dn = cols.norm(dir);
    if dn > cap {
        let f = cap / dn;
        dir.iter_mut().for_each(|v| *v *= f);
    }
}

/// Whether the recession slope `F∞(θ)` at a point meeting the KKT test is zero to rounding
/// (`F∞ ≤ 10⁻¹⁰·Σ|terms|` with finite terms, scale-free: for the logistic loss, whose terms are
/// all `≥ 0`, exactly `F∞ = 0`, i.e. no row has a negative margin along `θ`; an infinite slope —
/// probit with a misclassified row — is not a recession).
pub(crate) fn at_kkt_recession(recession: Option<(f64, f64)>) -> bool {
    recession.is_some_and(|(slope, size)| slope <= 0.0 || (size.is_finite() && slope <= 1e-10 * size))
}

/// The outcome of a line search along the projection arc.
pub(crate) enum Arc {
    /// Accepted: the new point, evaluated.
    Accepted(Vec<f64>),
    /// No acceptable step.
    Failed,
}

/// Armijo search along the projection arc `θ(α) = Π(θ + α d)`. The unit step is evaluated by
/// a full fused pass (kept in `trial` when accepted); later trials are O(n) from `Xd`.
///
/// On the face (`face_mu = Some(μ)`, both points on the sphere) the linear term is evaluated as
/// `∇Fᵀ(θ(α) − θ) = g_wᵀΔ + μ‖Δ‖²/2` (from `θᵀΔ = −‖Δ‖²/2` on the sphere), which avoids the
/// cancellation of the radial rounding of `θ(α)` against the outward gradient. When the
/// predicted decrease `|∇Fᵀd|` is below what `F` resolves, the unit step is accepted on the
/// gradient instead: `F` must not rise beyond that resolution and the KKT residual must fall.
#[allow(clippy::too_many_arguments)]
pub(crate) fn arc_search<O: SmoothObjective>(
    obj: &O,
    set: &FeasibleSet,
    ev: &Eval,
    dir: &[f64],
    face_mu: Option<f64>,
    trial: &mut Eval,
    xd: &mut Vec<f64>,
    rep: &mut SolveReport,
    mut cert: Option<&mut Certifier>,
) -> Arc {
    // While polishing, the trial points are evaluated with the certificate's term magnitudes
    // (one fused pass), so the point finally returned needs no pass of its own.
    let mut evaluate = |t: &[f64], trial: &mut Eval, rep: &mut SolveReport| match cert.as_deref_mut() {
        Some(c) => c.evaluate(obj, t, trial, rep),
        None => {
            obj.evaluate(t, trial);
            rep.counts.grad_evals += 1;
        }
    };
    let theta = &ev.theta;
    let f0 = ev.value;
    let radius = set.radius();
    let sz = set.sum_zero();
    let point = |alpha: f64| {
        let mut t: Vec<f64> = theta.iter().zip(dir).map(|(t, d)| alpha.mul_add(*d, *t)).collect();
        set.project(&mut t);
        t
    };
    let mut pg = ev.grad.clone();
    if sz {
        center(&mut pg);
    }
    let on_sphere = |t: &[f64]| radius.is_some_and(|b| norm(t) >= b * (1.0 - FACE_TOL));
    let linear = |t: &[f64]| -> f64 {
        let delta: Vec<f64> = t.iter().zip(theta).map(|(a, b)| a - b).collect();
        if let (Some(mu), true) = (face_mu, on_sphere(t)) {
            let gw_delta: f64 = pg
                .iter()
                .zip(theta.iter().zip(&delta))
                .map(|(g, (th, dl))| mu.mul_add(*th, *g) * dl)
                .sum();
            gw_delta + 0.5 * mu * dot(&delta, &delta)
        } else {
            dot(&pg, &delta)
        }
    };
    let accept = |lin: f64, fa: f64| {
        let noise = 8.0 * f64::EPSILON * (f0.abs() + fa.abs());
        fa.is_finite() && lin < 0.0 && fa <= f0 + ARMIJO * lin + noise
    };
    let slope = dot(&pg, dir);

    let t1 = point(1.0);
    evaluate(&t1, trial, rep);
    let lin1 = linear(&t1);
    if accept(lin1, trial.value) {
        return Arc::Accepted(t1);
    }
    let floor = FLOOR * (1.0 + f0.abs());
    if slope.abs() <= floor && trial.value.is_finite() && trial.value <= f0 + floor {
        let k1 = set.kkt_residual(&t1, &trial.grad);
        if k1 < set.kkt_residual(theta, &ev.grad) {
            return Arc::Accepted(t1);
        }
    }
    // Backtrack in O(n) per trial from the scores of the direction.
    xd.resize(obj.num_scores(), 0.0);
    obj.direction_scores(dir, xd);
    rep.counts.direction_passes += 1;
    let mut alpha = 1.0f64;
    let mut fa = trial.value;
    for _ in 0..MAX_TRIALS {
        // Safeguarded quadratic interpolation on φ(α) = F(θ(α)), with φ'(0) = ∇Fᵀd.
        let next = if fa.is_finite() && slope < 0.0 {
            let denom = 2.0 * (fa - f0 - slope * alpha);
            if denom > 0.0 {
                -slope * alpha * alpha / denom
            } else {
                0.5 * alpha
            }
        } else {
            0.1 * alpha
        };
        alpha = super::backtrack(next, alpha);
        let raw: Vec<f64> = theta.iter().zip(dir).map(|(t, d)| alpha.mul_add(*d, *t)).collect();
        let scale = radius.map_or(1.0, |b| {
            let r = norm(&raw);
            if r > b {
                b / r
            } else {
                1.0
            }
        });
        fa = obj.arc_value(ev, dir, xd, alpha, scale);
        rep.counts.line_search_evals += 1;
        let t = point(alpha);
        let lin = linear(&t);
        if accept(lin, fa) {
            evaluate(&t, trial, rep);
            // The O(n) value came from cached scores; confirm with the exact pass.
            if accept(lin, trial.value) {
                return Arc::Accepted(t);
            }
        }
        if lin == 0.0 {
            break;
        }
    }
    Arc::Failed
}

/// An accepted unit step whose decrease beat its model's by more than this factor is extended.
const EXTEND_RATIO: f64 = 1.1;
/// Most doublings of an extended step.
const MAX_DOUBLINGS: usize = 40;
/// An extension never takes `F` below this (`≈ 2^-930`): a mean loss this small still has a
/// dominant row whose loss and derivative are normal numbers, 1e28 above the subnormal range.
const EXTEND_FLOOR: f64 = 1e-280;

/// Extrapolation of an accepted unit step along the arc `θ(α) = Π(θ + α d)` (Newton-CG).
///
/// A Newton step minimises the quadratic model, whose predicted decrease at `α = 1` is
/// `predicted = −½ g_wᵀd` (exact for a CG iterate from `0`: `dᵀAd = −g_wᵀd`). Where the
/// objective falls faster than its model — the exponential tail of the logistic loss on
/// separable data, `F ≈ Σ e^{−m_i}`, where a Newton step has the constant length `1/‖x‖`
/// whatever the distance to the minimiser — the unit step is a fraction of the useful one. When
/// the unit step's decrease `F(θ) − F(θ(1))` exceeds [`EXTEND_RATIO`]`·predicted`, `α` is
/// doubled (each trial O(n) from the direction's scores, one pass to form them) while `F` keeps
/// falling ([`doubled_step`]: inside a ball only, never below `F = 1e-280`); the best point is
/// evaluated by a full pass and returned if it confirms a lower value than the unit step's. `trial` holds the unit step's evaluation on entry and the
/// returned point's on exit (re-evaluated at the unit step if the extension does not confirm).
/// Every accepted point has a lower `F` than the unit step, so the Armijo condition still holds.
#[allow(clippy::too_many_arguments)]
pub(crate) fn extend_step<O: SmoothObjective>(
    obj: &O,
    set: &FeasibleSet,
    ev: &Eval,
    dir: &[f64],
    predicted: f64,
    unit: Vec<f64>,
    trial: &mut Eval,
    xd: &mut Vec<f64>,
    rep: &mut SolveReport,
) -> Vec<f64> {
    if !beats_model(ev.value, trial.value, predicted) {
        return unit;
    }
    let f1 = trial.value;
    xd.resize(obj.num_scores(), 0.0);
    obj.direction_scores(dir, xd);
    rep.counts.direction_passes += 1;
    let best_alpha = doubled_step(obj, set, ev, dir, xd, f1, rep);
    if best_alpha == 1.0 {
        return unit;
    }
    let mut t: Vec<f64> = ev
        .theta
        .iter()
        .zip(dir)
        .map(|(t, d)| best_alpha.mul_add(*d, *t))
        .collect();
    set.project(&mut t);
    obj.evaluate(&t, trial);
    rep.counts.grad_evals += 1;
    if trial.value < f1 && super::all_finite(trial) {
        rep.detail.extended_steps += 1;
        return t;
    }
    obj.evaluate(&unit, trial);
    rep.counts.grad_evals += 1;
    unit
}

/// Whether a unit step from `F = f0` to `f1` beat the decrease `predicted` of its quadratic
/// model by [`EXTEND_RATIO`], with the prediction well above the rounding of `F` (`> 1e-8·(|f0|
/// + |f1|)`: near a minimiser both the prediction and the decrease are rounding noise).
pub(crate) fn beats_model(f0: f64, f1: f64, predicted: f64) -> bool {
    f1.is_finite() && predicted > 1e-8 * (f0.abs() + f1.abs()) && f0 - f1 > EXTEND_RATIO * predicted
}

/// The extension rule of [`extend_step`] on cached scores: `α` doubled from 1 while
/// `F(Π(θ + α d))` (O(n) from `xd = Φd`; `f1` its value at `α = 1`) keeps falling, at most
/// 2^40, and only inside a ball and above [`EXTEND_FLOOR`]; returns the best `α` (1 if doubling
/// never helped or is not allowed). Shared with dense Newton.
pub(crate) fn doubled_step<O: SmoothObjective>(
    obj: &O,
    set: &FeasibleSet,
    ev: &Eval,
    dir: &[f64],
    xd: &[f64],
    f1: f64,
    rep: &mut SolveReport,
) -> f64 {
    // Only inside a ball: without one, separable data have no minimiser and the extension
    // would only hasten the underflow of `F` and `∇F` to an exact zero — a false stationary
    // point — that the recession tests (the recession slope, the norm cap) must see coming.
    let Some(b) = set.radius() else {
        return 1.0;
    };
    let (mut best_alpha, mut best_f) = (1.0f64, f1);
    let mut alpha = 1.0f64;
    for _ in 0..MAX_DOUBLINGS {
        alpha *= 2.0;
        let r = ev
            .theta
            .iter()
            .zip(dir)
            .map(|(t, d)| alpha.mul_add(*d, *t).powi(2))
            .sum::<f64>()
            .sqrt();
        let scale = if r > b { b / r } else { 1.0 };
        let fa = obj.arc_value(ev, dir, xd, alpha, scale);
        rep.counts.line_search_evals += 1;
        // Not below EXTEND_FLOOR, where the terms of all but the dominant rows underflow.
        if !(fa < best_f && fa >= EXTEND_FLOOR) {
            break;
        }
        (best_alpha, best_f) = (alpha, fa);
    }
    best_alpha
}

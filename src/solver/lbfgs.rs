//! Projected L-BFGS over `Θ_B`, the ball, the sum-zero subspace and `ℝ^d`.
//!
//! The sum-zero condition is kept exactly by working with centred vectors: gradients are
//! projected by `P = I − 11ᵀ/d`, so every direction (a combination of centred gradients and
//! steps) stays in `{1ᵀθ = 0}`. The ball is handled by an **active-face** strategy with a
//! **projection-arc** line search (Bertsekas, *Nonlinear Programming*, 2nd ed., Sec. 2.3):
//!
//! * *interior* (or on the sphere with the gradient pointing inward): the working gradient is
//!   `g_w = P∇F` and the direction is the L-BFGS direction `d = −H g_w`;
//! * *on the face* `‖θ‖ = B` with multiplier estimate `μ = −(P∇F)ᵀθ/B² > 0`: the working
//!   gradient is the tangent gradient of the Lagrangian, `g_w = P∇F + μθ`, the quasi-Newton
//!   model is of `∇²F + μI` (the Riemannian Hessian of `F` on the sphere), built from the stored
//!   pairs `(s_k, y_k + μ s_k)`, and the direction is projected on the tangent space.
//!
//! In both cases the trial points are `θ(α) = Π(θ + α d)` (for the ball a radial shrink, so the
//! scores along the arc are `c(α)(Xθ + α Xd)` and every backtracking trial is O(n) from cached
//! scores — [`SmoothObjective::arc_value`]). A step is accepted by the Armijo rule along the arc,
//! `F(θ(α)) ≤ F(θ) + σ ∇F(θ)ᵀ(θ(α) − θ)` with `∇F(θ)ᵀ(θ(α) − θ) < 0`.
//!
//! **Convergence.** Directions are gradient-related: a quasi-Newton direction whose angle with
//! `−g_w` is too close to 90°, or along which the arc search fails, is replaced by the projected
//! gradient arc `Π(θ − α g_w)` (on the face this arc is a reparametrisation of `Π(θ − α P∇F)`).
//! Projected gradient with the Armijo rule along the arc converges to a stationary point on a
//! closed convex set (Bertsekas, Prop. 2.3.3), hence to a minimiser for a convex objective; the
//! quasi-Newton steps only accelerate it. Curvature pairs with `sᵀy ≤ 1e-12‖s‖‖y‖` are skipped,
//! so the inverse-Hessian model stays positive definite also on non-convex losses (`mle-rr`).
//!
//! **Stopping** is the same relative KKT criterion as Newton ([`super::certificate`]): a cheap
//! test at every iterate with the term magnitudes of an earlier point, a few polishing
//! iterations, then the certificate of the best point with the magnitudes recomputed there; if
//! it fails, the iterations go on from that point. On a non-convex loss a converged point is a
//! KKT point; `certified_global` says whether the loss is certified convex on the set, exactly
//! as for Newton.
//!
//! **No minimiser.** Without a norm bound (convex losses): a negative recession slope at the
//! iterate proves the objective unbounded below; at a KKT point with `Xθ ≠ 0` and a recession
//! slope of zero, `F` is non-increasing along the ray `{rθ}`, so a minimiser of the convex
//! objective is not attained there (separable data): both end with
//! [`Termination::NoMinimizer`], as does `‖θ‖ > norm_cap`.
//!
//! Cost per iteration: one fused value+gradient pass when the unit step is accepted (the usual
//! case), plus one pass for `Xd` and O(n) per trial when it is not.

use super::certificate::{Certifier, Kkt};
use super::scales::{apply_preconditioner, ColumnScales};
use super::{all_finite, dot, Control, Progress, SolveReport, Termination};
use crate::error::{Error, Result};
use crate::feasible::{center, norm, FeasibleSet};
use crate::objective::{Eval, SmoothObjective};
use std::collections::VecDeque;
use std::time::Instant;

/// Quasi-Newton iterations allowed per unit of [`Control::max_iter`] (so the default
/// `max_iter = 100` allows 1000 L-BFGS iterations — comparable work to 100 Newton iterations).
pub const ITERS_PER_MAX_ITER: usize = 10;
/// Armijo sufficient-decrease constant.
const ARMIJO: f64 = 1e-4;
/// Backtracking trials per line search.
const MAX_TRIALS: usize = 60;
/// A quasi-Newton direction with `cos∠(d, −g_w)` below this is replaced by `−g_w`.
pub(crate) const MIN_COS: f64 = 1e-8;
/// Without a ball, steps longer than this times `max(1, ‖θ‖)` are shortened.
pub(crate) const MAX_STEP: f64 = 1e3;
/// `‖θ‖ ≥ B(1 − FACE_TOL)` counts as on the sphere.
pub(crate) const FACE_TOL: f64 = 1e-12;
/// The face is released when the tangent gradient is below this times `|μ|B` with `μ < 0`.
pub(crate) const RELEASE: f64 = 0.1;
/// Iterations allowed after the tolerance is met, while the KKT residual keeps falling (the
/// default of [`LbfgsOptions::polish_iters`]).
pub const POLISH_ITERS: usize = 10;
/// Polishing stops once the residual is this fraction of the tolerance.
const POLISH_FACTOR: f64 = 1e-3;
/// Non-convex losses without a ball: a step at a KKT point longer than this times
/// `max(1, ‖θ‖)` is not negligible.
pub(crate) const STALL_STEP: f64 = 1e-3;
/// Consecutive aligned long steps at KKT points that signal a recession direction.
pub(crate) const RECESSION_STEPS: usize = 5;
/// `|∇Fᵀd|` below this times `1 + |F|`: the decrease is below what `F` resolves.
const FLOOR: f64 = 1e-13;

/// Polishing after convergence: once the KKT tolerance is met, a few more iterations run while
/// the residual keeps falling (they shrink the error in `θ` on ill-conditioned problems at the
/// cost of a pass each); the best point is kept — its `θ` and residual only (no `O(n)` copy of
/// its evaluation, which is redone if that point is returned). At most `limit` such iterations
/// ([`LbfgsOptions::polish_iters`]; Newton-CG uses the same rule). Returns `true` when the run
/// should stop.
pub(crate) fn polish(
    best: &mut Option<(Vec<f64>, f64)>,
    iters: &mut usize,
    limit: usize,
    theta: &[f64],
    kkt: f64,
    tol: f64,
) -> bool {
    if best.as_ref().is_none_or(|b| kkt < b.1) {
        *best = Some((theta.to_vec(), kkt));
    }
    if kkt <= POLISH_FACTOR * tol || *iters >= limit {
        return true;
    }
    *iters += 1;
    false
}

/// Settings of the L-BFGS solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LbfgsOptions {
    /// Number of correction pairs kept (`m`, default 10).
    pub memory: usize,
    /// Precondition badly scaled columns (default true): when the column second moments
    /// `m_j = (1/W)Σ w_i x_ij²` span more than a factor [`SCALING_SPREAD`], the initial
    /// inverse-Hessian model is `γ·M`, `M` the oblique projection of `diag(1/m_j)` on the
    /// working subspace (sum-zero, and tangent to the sphere on the face of the ball;
    /// [`super::scales`]), instead of `γI`; the first step (no curvature pairs yet) is `−M g`.
    /// The moments come from a pass over `X`, skipped when a fixed sample of
    /// [`SCALING_SAMPLE_ROWS`] rows shows the columns well scaled.
    pub diagonal_scaling: bool,
    /// Polishing iterations allowed once the KKT tolerance is met (default [`POLISH_ITERS`] =
    /// 10): they run while the residual keeps falling, until it is `1e-3` times the tolerance,
    /// and the best point is returned. They shrink the error in `θ` on ill-conditioned problems
    /// at the cost of one pass each. `0` stops at the first iterate that meets the tolerance
    /// (the stopping rule of scikit-learn's and SciPy's L-BFGS, with this solver's KKT
    /// residual): fewer passes, the same certificate `kkt_residual ≤ tol`.
    pub polish_iters: usize,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions {
            memory: 10,
            diagonal_scaling: true,
            polish_iters: POLISH_ITERS,
        }
    }
}

pub use super::scales::{SCALING_SAMPLE_ROWS, SCALING_SPREAD};

impl LbfgsOptions {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if self.memory == 0 {
            return Err(Error::param("memory", "must be at least 1"));
        }
        Ok(())
    }
}

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

/// One curvature pair: the step `s = θ₊ − θ` and the change of the projected gradient of `F`.
struct Pair {
    s: Vec<f64>,
    y: Vec<f64>,
}

/// `out = −H g` by the two-loop recursion on the pairs `(s_k, y_k + μ s_k)`, skipping pairs
/// without positive curvature. `H₀ = γM` (`M` the preconditioner on the working subspace whose
/// constraint normals are `normals`, [`super::scales`]; the identity without one), `γ =
/// sᵀy/yᵀMy` of the newest usable pair (1 if none). Returns the number of pairs used.
fn two_loop(
    pairs: &VecDeque<Pair>,
    mu: f64,
    scaling: Option<&[f64]>,
    normals: &[&[f64]],
    g: &[f64],
    out: &mut [f64],
) -> usize {
    let h0 = |v: &[f64]| -> Vec<f64> {
        match scaling {
            None => v.to_vec(),
            Some(dg) => {
                let mut r = vec![0.0; v.len()];
                apply_preconditioner(dg, normals, v, &mut r);
                r
            }
        }
    };
    let k = pairs.len();
    let mut q = g.to_vec();
    let mut ys: Vec<Option<(Vec<f64>, f64, f64)>> = Vec::with_capacity(k); // (y', ρ, a), newest first
    let mut gamma: Option<f64> = None;
    for p in pairs.iter().rev() {
        let y: Vec<f64> = p.y.iter().zip(&p.s).map(|(y, s)| mu.mul_add(*s, *y)).collect();
        let sy = dot(&p.s, &y);
        if !(sy > 1e-12 * norm(&p.s) * norm(&y)) || !sy.is_finite() {
            ys.push(None);
            continue;
        }
        if gamma.is_none() {
            gamma = Some(sy / dot(&y, &h0(&y)));
        }
        let rho = 1.0 / sy;
        let a = rho * dot(&p.s, &q);
        q.iter_mut().zip(&y).for_each(|(qi, yi)| *qi -= a * yi);
        ys.push(Some((y, rho, a)));
    }
    let gamma = gamma.unwrap_or(1.0);
    let mut q = h0(&q);
    q.iter_mut().for_each(|v| *v *= gamma);
    let mut used = 0;
    for (p, e) in pairs.iter().zip(ys.iter().rev()) {
        if let Some((y, rho, a)) = e {
            let b = rho * dot(y, &q);
            q.iter_mut().zip(&p.s).for_each(|(qi, si)| *qi += (a - b) * si);
            used += 1;
        }
    }
    out.iter_mut().zip(&q).for_each(|(o, v)| *o = -v);
    used
}

/// The outcome of a line search along the projection arc.
pub(crate) enum Arc {
    /// Accepted: the new point, evaluated.
    Accepted(Vec<f64>),
    /// No acceptable step.
    Failed,
}

/// Minimises `obj` over `set` by projected L-BFGS from `theta0` (projected onto the set;
/// default 0). See the module docs. `Err` only for invalid input.
pub fn solve<O: SmoothObjective>(
    obj: &O,
    set: &FeasibleSet,
    theta0: Option<&[f64]>,
    opts: &LbfgsOptions,
    ctl: &Control,
) -> Result<SolveReport> {
    ctl.validate()?;
    opts.validate()?;
    let start = Instant::now();
    let d = obj.dim();
    let n = obj.num_samples();
    super::check_theta0(theta0, d)?;
    let sz = set.sum_zero();
    let radius = set.radius();
    let max_iter = ctl.max_iter.saturating_mul(ITERS_PER_MAX_ITER);

    let mut rep = SolveReport::blank("lbfgs", vec![0.0; d], Termination::MaxIterations);

    let project_grad = |g: &[f64]| {
        let mut p = g.to_vec();
        if sz {
            center(&mut p);
        }
        p
    };
    let mut theta = theta0.map(<[f64]>::to_vec).unwrap_or_else(|| vec![0.0; d]);
    set.project(&mut theta);
    let mut ev = obj.new_eval();
    obj.evaluate(&theta, &mut ev);
    rep.grad_evals += 1;
    if !all_finite(&ev) {
        return Err(Error::Numerical(
            "the objective or its gradient is not finite at the starting point".into(),
        ));
    }
    let mut cert = Certifier::new(obj, &ev, ctl, &mut rep);
    ctl.notify_start("lbfgs", n, d, max_iter);

    let cols = ColumnScales::of(obj, &mut rep);
    let scaling = if opts.diagonal_scaling {
        cols.preconditioner()
    } else {
        None
    };
    let ones = vec![1.0; d];
    let mut pairs: VecDeque<Pair> = VecDeque::with_capacity(opts.memory);
    let mut trial = obj.new_eval();
    // The direction's scores, allocated on the first backtracking search (often never).
    let mut xd: Vec<f64> = Vec::new();
    let mut dir = vec![0.0; d];
    // Polishing: the best KKT point since the tolerance was first met.
    let mut best: Option<(Vec<f64>, f64)> = None;
    let mut polish_iters = 0usize;
    // Non-convex losses without a ball: consecutive aligned long steps at a KKT point.
    let mut prev_step: Option<Vec<f64>> = None;
    let mut flat_steps = 0usize;
    let tol = ctl.tol_rel;
    // The certificate of the returned point, computed with fresh term magnitudes.
    let mut certified: Option<Kkt> = None;

    let termination = 'certify: loop {
        let termination = loop {
            if !all_finite(&ev) {
                break Termination::NonFinite;
            }
            let est = cert.estimate(set, &theta, &ev.grad);
            let kkt = est.relative;
            if ctl.wants_progress(rep.iterations) {
                ctl.notify_progress(&Progress {
                    solver: "lbfgs",
                    iteration: rep.iterations,
                    budget: max_iter,
                    objective: ev.value,
                    kkt_residual: kkt,
                    theta: &theta,
                });
            }
            let recession = if radius.is_none() && O::CONVEX {
                obj.recession_slope(&ev)
            } else {
                None
            };
            if let Some((slope, size)) = recession {
                if slope < -1e-10 * size {
                    break Termination::NoMinimizer;
                }
            }
            let at_kkt = cert.meets(&est);
            if at_kkt {
                // A KKT point where F does not increase along the ray {rθ} while Xθ ≠ 0: the
                // infimum is approached at infinity (separable data), not attained here.
                if at_kkt_recession(recession) && ev.scores.iter().any(|&t| t != 0.0) {
                    break Termination::NoMinimizer;
                }
            }
            // Without a ball a non-convex loss can flatten out at infinity: a KKT point counts
            // only once the quasi-Newton step there is short (checked below, after the direction).
            let check_flat = at_kkt && radius.is_none() && !O::CONVEX;
            if !check_flat {
                flat_steps = 0;
            }
            if at_kkt && !check_flat && polish(&mut best, &mut polish_iters, opts.polish_iters, &theta, kkt, tol) {
                break Termination::Converged;
            }
            if let Some(t) = ctl.stop_requested() {
                break t;
            }
            if rep.iterations >= max_iter {
                break Termination::MaxIterations;
            }

            // Working gradient: P∇F, plus μθ on the active face of the ball.
            let pg = project_grad(&ev.grad);
            // The face ‖θ‖ = B is kept while on the sphere (an active-set strategy): the working
            // gradient is the tangent gradient `P∇F + μθ`, `μ = −(P∇F)ᵀθ/B²`, whatever the sign of
            // the multiplier estimate. The face is released only when `μ < 0` dominates the
            // tangent gradient (`‖g_w‖ ≤ RELEASE·|μ|B`), by a projected-gradient step inward: this
            // keeps ill-conditioned problems from zigzagging on and off the sphere.
            let on_sphere = radius.is_some_and(|b| norm(&theta) >= b * (1.0 - FACE_TOL));
            let mut face_mu: Option<f64> = None;
            let mut release = false;
            if let (true, Some(b)) = (on_sphere, radius) {
                let m = -dot(&pg, &theta) / (b * b);
                let tangent: Vec<f64> = pg.iter().zip(&theta).map(|(g, t)| m.mul_add(*t, *g)).collect();
                if m < 0.0 && norm(&tangent) <= RELEASE * (-m) * b {
                    release = true;
                } else {
                    face_mu = Some(m);
                }
            }
            let on_face = face_mu.is_some();
            // Curvature shift of the pairs: the Lagrangian Hessian ∇²F + μI (μ ≥ 0 only).
            let mu = face_mu.map_or(0.0, |m| m.max(0.0));
            let gw: Vec<f64> = match face_mu {
                Some(m) => pg.iter().zip(&theta).map(|(g, t)| m.mul_add(*t, *g)).collect(),
                None => pg.clone(),
            };
            let gw_norm = norm(&gw);
            if gw_norm == 0.0 {
                if at_kkt {
                    // Exactly stationary.
                    polish(&mut best, &mut polish_iters, opts.polish_iters, &theta, kkt, tol);
                    break Termination::Converged;
                }
                // The working model is stationary but the residual is not below tolerance.
                break Termination::LineSearchFailed;
            }

            let mut quasi_newton = !pairs.is_empty() && !release;
            let mut outcome = Arc::Failed;
            let mut checked_flat = false;
            for _attempt in 0..3 {
                let mut normals: Vec<&[f64]> = Vec::with_capacity(2);
                if sz {
                    normals.push(&ones);
                }
                if on_face {
                    normals.push(&theta);
                }
                if quasi_newton {
                    two_loop(&pairs, mu, scaling, &normals, &gw, &mut dir);
                } else {
                    match scaling {
                        // The preconditioned gradient: a step in the units of the features.
                        Some(dg) if pairs.is_empty() && !release => {
                            apply_preconditioner(dg, &normals, &gw, &mut dir);
                            dir.iter_mut().for_each(|v| *v = -*v);
                        }
                        _ => dir.iter_mut().zip(&gw).for_each(|(d, g)| *d = -g),
                    }
                }
                if on_face {
                    // Tangent to the sphere.
                    let b2 = radius.map_or(1.0, |b| b * b);
                    let c = dot(&dir, &theta) / b2;
                    dir.iter_mut().zip(&theta).for_each(|(d, t)| *d -= c * t);
                }
                if sz {
                    center(&mut dir);
                }
                let dn = norm(&dir);
                let cos = -dot(&gw, &dir) / (gw_norm * dn);
                if quasi_newton && !(cos >= MIN_COS) {
                    // Not gradient-related: restart from the projected gradient.
                    pairs.clear();
                    quasi_newton = false;
                    continue;
                }
                if check_flat && !checked_flat {
                    checked_flat = true;
                    flat_steps = count_flat_steps(&cols, &theta, &dir, dn, prev_step.as_deref(), flat_steps);
                }
                if radius.is_none() {
                    cap_step(&cols, &mut dir, &theta);
                }
                if check_flat && flat_steps == 0 {
                    break;
                }
                outcome = arc_search(
                    obj,
                    set,
                    &ev,
                    &dir,
                    face_mu,
                    &mut trial,
                    &mut xd,
                    &mut rep,
                    best.is_some().then_some(&mut cert),
                );
                if matches!(outcome, Arc::Accepted(_)) || !quasi_newton {
                    break;
                }
                pairs.clear();
                quasi_newton = false;
            }
            if check_flat {
                if flat_steps == 0 {
                    // Short step at a KKT point: a genuine (local) minimiser.
                    if polish(&mut best, &mut polish_iters, opts.polish_iters, &theta, kkt, tol) {
                        break Termination::Converged;
                    }
                    outcome = arc_search(
                        obj,
                        set,
                        &ev,
                        &dir,
                        face_mu,
                        &mut trial,
                        &mut xd,
                        &mut rep,
                        best.is_some().then_some(&mut cert),
                    );
                } else if flat_steps >= RECESSION_STEPS {
                    break Termination::NoMinimizer;
                }
            }
            let new_theta = match outcome {
                Arc::Accepted(t) => t,
                Arc::Failed => break Termination::LineSearchFailed,
            };
            // Curvature pair from the projected gradients of F.
            let s: Vec<f64> = new_theta.iter().zip(&theta).map(|(a, b)| a - b).collect();
            let pg_new = project_grad(&trial.grad);
            let y: Vec<f64> = pg_new.iter().zip(&pg).map(|(a, b)| a - b).collect();
            rep.last_step_norm = norm(&s);
            if pairs.len() == opts.memory {
                pairs.pop_front();
            }
            prev_step = Some(s.clone());
            pairs.push_back(Pair { s, y });
            std::mem::swap(&mut ev, &mut trial);
            theta = new_theta;
            rep.iterations += 1;
            if radius.is_none() && cols.norm(&theta) > ctl.norm_cap {
                break Termination::NoMinimizer;
            }
        };
        // A run that met the cheap test and then stopped while polishing returns its best point,
        // once the certificate with the term magnitudes recomputed there confirms it.
        match best.take() {
            Some((bt, _)) if !matches!(termination, Termination::NoMinimizer) => {
                if ev.theta != bt {
                    // The same bits as when it was first evaluated, with the term magnitudes.
                    cert.evaluate(obj, &bt, &mut ev, &mut rep);
                }
                theta = bt;
                let k = cert.certify(obj, set, &ev, &ev.grad, &mut rep);
                if cert.meets(&k) {
                    certified = Some(k);
                    break 'certify Termination::Converged;
                }
                // Not with the fresh magnitudes: go on from this point with them.
                polish_iters = 0;
                if rep.iterations >= max_iter {
                    break 'certify Termination::MaxIterations;
                }
            }
            _ => break 'certify termination,
        }
    };

    rep.termination = termination;
    rep.objective = ev.value;
    let k = match certified {
        Some(k) => k,
        None if all_finite(&ev) && ev.theta == theta => cert.certify(obj, set, &ev, &ev.grad, &mut rep),
        None => cert.estimate(set, &theta, &ev.grad),
    };
    Certifier::record(&k, &mut rep);
    rep.certified_global =
        termination.is_converged() && (O::CONVEX || radius.is_some_and(|b| obj.convex_on_ball(b, sz)));
    rep.theta = theta;
    rep.elapsed = start.elapsed();
    ctl.notify_end(&rep);
    Ok(rep)
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
            rep.grad_evals += 1;
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
    rep.direction_passes += 1;
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
        rep.line_search_evals += 1;
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

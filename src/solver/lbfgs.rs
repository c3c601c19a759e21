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
//! it fails, the iterations go on from that point. Polishing is skipped where the tolerance
//! already makes `θ` accurate: when the residual fell at least twofold per iteration over the
//! last five and the quasi-Newton step over one minus that rate (the remaining steps at that
//! rate) is within `10·tol` of the point's size, in the scale of the scores (12 instead of 16
//! passes on an isotropic design at `(10⁵, 1000)`, 8 instead of 10 at `(10⁶, 100)`). On a
//! non-convex loss a converged point is a KKT point; `certified_global` says whether the loss
//! is certified convex on the set, exactly as for Newton.
//!
//! **No minimiser.** Without a norm bound (convex losses): a negative recession slope at the
//! iterate proves the objective unbounded below; at a KKT point with `Xθ ≠ 0` and a recession
//! slope of zero, `F` is non-increasing along the ray `{rθ}`, so a minimiser of the convex
//! objective is not attained there (separable data): both end with
//! [`Termination::NoMinimizer`], as does `‖θ‖ > norm_cap`.
//!
//! Cost per iteration: one fused value+gradient pass when the unit step is accepted (the usual
//! case), plus one pass for `Xd` and O(n) per trial when it is not.

use super::first_order::{
    cap_step, count_flat_steps, drive, Arc, AtPoint, Certified, Polish, PolishedIterations, ACCURATE, FACE_TOL,
    MIN_COS, RECESSION_STEPS, RELEASE,
};
use super::run::Run;
use super::scales::apply_preconditioner;
use super::{dot, Control, SolveReport, Termination};
use crate::error::{Error, Result};
use crate::feasible::{center, norm, FeasibleSet};
use crate::objective::{Eval, SmoothObjective};
use std::collections::VecDeque;

/// Quasi-Newton iterations allowed per unit of [`Control::max_iter`] (so the default
/// `max_iter = 100` allows 1000 L-BFGS iterations — comparable work to 100 Newton iterations).
pub const ITERS_PER_MAX_ITER: usize = 10;
/// Iterations allowed after the tolerance is met, while the KKT residual keeps falling (the
/// default of [`LbfgsOptions::polish_iters`]).
pub(crate) const POLISH_ITERS: usize = 10;

/// Iterations over which L-BFGS measures the rate at which its residual falls, to judge whether
/// its quasi-Newton step estimates the distance to the minimiser (`Lbfgs::correction_negligible`).
const RATE_WINDOW: usize = 5;

/// The trial points are evaluated with the certificate's term magnitudes once the predicted
/// next residual is within this factor of the tolerance (`Lbfgs::fuse_scale`): a prediction
/// short by up to this factor still saves the certificate's own pass, for one or two fused
/// evaluations (measured 1.06–1.36 plain passes each).
const FUSE_MARGIN: f64 = 10.0;

/// Settings of the L-BFGS solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LbfgsOptions {
    /// Number of correction pairs kept (`m`, default 10).
    pub memory: usize,
    /// Precondition badly scaled columns (default true): when the column second moments
    /// `m_j = (1/W)Σ w_i x_ij²` span more than a factor `SCALING_SPREAD`, the initial
    /// inverse-Hessian model is `γ·M`, `M` the oblique projection of `diag(1/m_j)` on the
    /// working subspace (sum-zero, and tangent to the sphere on the face of the ball;
    /// `super::scales`), instead of `γI`; the first step (no curvature pairs yet) is `−M g`.
    /// The moments come from a pass over `X`, skipped when a fixed sample of
    /// [`SCALING_SAMPLE_ROWS`] rows shows the columns well scaled.
    pub diagonal_scaling: bool,
    /// Polishing iterations allowed once the KKT tolerance is met (default `POLISH_ITERS` =
    /// 10): they run while the residual keeps falling, until it is `1e-3` times the tolerance
    /// or the quasi-Newton model estimates the point within `10·tol` of the minimiser (in the
    /// scale of the scores; `first_order::ACCURATE`), and the best point is returned. They
    /// shrink the error in `θ` on ill-conditioned problems at the cost of one pass each. `0`
    /// stops at the first iterate that meets the tolerance (the stopping rule of
    /// scikit-learn's and SciPy's L-BFGS, with this solver's KKT residual): fewer passes, the
    /// same certificate `kkt_residual ≤ tol`.
    pub polish_iters: usize,
    /// Start from a row sample (default true): on the pairwise objective with a convex loss,
    /// no warm start and many rows per feature, the fit first runs L-BFGS on every
    /// `SAMPLE_STRIDE`-th row to a loose tolerance and starts the full run from that point
    /// with that run's curvature pairs (`crate::estimator` decides when; progressive
    /// sampling, Byrd, Chin, Nocedal & Wu 2012). The returned point is certified on the full
    /// objective as always; only the path to it changes. `false`: start from `θ₀` with no
    /// curvature.
    pub sample_start: bool,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions {
            memory: 10,
            diagonal_scaling: true,
            polish_iters: POLISH_ITERS,
            sample_start: true,
        }
    }
}

pub use super::scales::SCALING_SAMPLE_ROWS;

impl LbfgsOptions {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if self.memory == 0 {
            return Err(Error::param("memory", "must be at least 1"));
        }
        Ok(())
    }
}

/// One curvature pair: the step `s = θ₊ − θ` and the change of the projected gradient of `F`.
#[derive(Debug, Clone)]
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

/// Minimises `obj` over `set` by projected L-BFGS from `theta0` (projected onto the set;
/// default 0). See the module docs. `Err` only for invalid input.
pub fn solve<O: SmoothObjective>(
    obj: &O,
    set: &FeasibleSet,
    theta0: Option<&[f64]>,
    opts: &LbfgsOptions,
    ctl: &Control,
) -> Result<SolveReport> {
    solve_seeded(obj, set, theta0, opts, ctl, Curvature::default(), None).map(|(r, _)| r)
}

/// The curvature pairs of a finished run (the newest last), to seed a run on a close objective
/// (the full objective after a run on a row sample of it).
#[derive(Debug, Clone, Default)]
pub(crate) struct Curvature(VecDeque<Pair>);

/// [`solve`] with the first iterations' inverse-Hessian model built from `seed` (at most
/// `opts.memory` of its newest pairs; pairs without positive curvature are skipped as always),
/// returning the run's own pairs with its report. With `probe = Some(k)` the run stops with
/// [`Termination::MaxIterations`] after `k` iterations if it is [`slow_to_converge`] there
/// (`auto`'s switch to a second-order method on ill-conditioned designs).
pub(crate) fn solve_seeded<O: SmoothObjective>(
    obj: &O,
    set: &FeasibleSet,
    theta0: Option<&[f64]>,
    opts: &LbfgsOptions,
    ctl: &Control,
    seed: Curvature,
    probe: Option<usize>,
) -> Result<(SolveReport, Curvature)> {
    opts.validate()?;
    let max_iter = ctl.max_iter.saturating_mul(ITERS_PER_MAX_ITER);
    let (run, ()) = Run::start("lbfgs", obj, set, theta0, ctl, max_iter, Run::evaluate_start(obj))?;
    let mut lbfgs = Lbfgs::new(run, opts, max_iter);
    lbfgs.probe = probe;
    let mut pairs = seed.0;
    while pairs.len() > opts.memory {
        pairs.pop_front();
    }
    if pairs.iter().all(|p| p.s.len() == obj.dim() && p.y.len() == obj.dim()) {
        lbfgs.pairs = pairs;
    }
    let termination = drive(&mut lbfgs);
    let pairs = std::mem::take(&mut lbfgs.pairs);
    Ok((lbfgs.run.finish(termination, lbfgs.certified), Curvature(pairs)))
}

/// Whether a run at relative KKT residual `κ_k` after `k` iterations is too slow to finish:
/// at its mean rate `κ_k^{1/k}` (the residual starts near 1; the criterion is scale-free) it
/// would need more than [`SLOW_FACTOR`]`·k` further iterations to reach `tol`. On designs whose
/// Hessian has condition number `κ_H` L-BFGS's rate degrades like that of CG, `1 − O(1/√κ_H)`;
/// at `tol = 10⁻¹⁰` and `k = 10` the cut is `κ_k > 4.6·10⁻⁴`.
pub(crate) fn slow_to_converge(kkt: f64, k: usize, tol: f64) -> bool {
    if !(kkt > tol) {
        return false;
    }
    if !(kkt < 1.0) {
        return true;
    }
    let k = k.max(1) as f64;
    k * (tol / kkt).ln() / kkt.ln() > SLOW_FACTOR * k
}

/// See [`slow_to_converge`].
const SLOW_FACTOR: f64 = 2.0;

/// The working gradient of an iteration and the face of the ball it works on.
struct Working {
    /// `P∇F` (`P` the centring projector under sum-zero).
    pg: Vec<f64>,
    /// `P∇F + μθ` on the face, `P∇F` off it.
    gw: Vec<f64>,
    /// The multiplier estimate `μ` while on the face of the ball.
    face_mu: Option<f64>,
    /// The face is released by a projected-gradient step inward.
    release: bool,
}

/// The state of a projected L-BFGS run (module docs).
struct Lbfgs<'a, O> {
    run: Run<'a, O>,
    memory: usize,
    max_iter: usize,
    /// Precondition by the column scales (when they need it).
    diagonal_scaling: bool,
    ones: Vec<f64>,
    pairs: VecDeque<Pair>,
    trial: Eval,
    /// The direction's scores, allocated on the first backtracking search (often never).
    xd: Vec<f64>,
    dir: Vec<f64>,
    polish: Polish,
    /// Non-convex losses without a ball: consecutive aligned long steps at a KKT point.
    prev_step: Option<Vec<f64>>,
    flat_steps: usize,
    /// The certificate of the returned point, computed with fresh term magnitudes.
    certified: Certified,
    /// The cheap KKT estimates of the last [`RATE_WINDOW`] iterates before this one, oldest
    /// first.
    recent_kkt: VecDeque<f64>,
    /// Stop after this many iterations if [`slow_to_converge`] ([`solve_seeded`]).
    probe: Option<usize>,
}

impl<'a, O: SmoothObjective> Lbfgs<'a, O> {
    fn new(run: Run<'a, O>, opts: &LbfgsOptions, max_iter: usize) -> Self {
        let d = run.obj.dim();
        let trial = run.obj.new_eval();
        let polish = Polish::new(opts.polish_iters, run.ctl.tol_rel);
        Lbfgs {
            run,
            memory: opts.memory,
            max_iter,
            diagonal_scaling: opts.diagonal_scaling,
            ones: vec![1.0; d],
            // Any memory `≥ 1` is valid (`usize::MAX`: keep every pair): reserve a bounded number
            // of slots up front, the deque grows if more are kept.
            pairs: VecDeque::with_capacity(opts.memory.min(64)),
            trial,
            xd: Vec::new(),
            dir: vec![0.0; d],
            polish,
            prev_step: None,
            flat_steps: 0,
            certified: None,
            recent_kkt: VecDeque::with_capacity(RATE_WINDOW),
            probe: None,
        }
    }

    /// Whether the trial points of this iteration are evaluated together with the
    /// certificate's term magnitudes (one fused pass, a little dearer than a plain one): while
    /// polishing, and when the next iterate is expected to meet the tolerance — the residual
    /// `κ` falling at the rate of the last iteration, `κ·min(1, κ/κ_prev) ≤ tol` — so that the
    /// certificate of the point returned needs no pass of its own.
    fn fuse_scale(&self, kkt: f64) -> bool {
        let tol = self.run.ctl.tol_rel;
        let next = match self.recent_kkt.back().copied() {
            Some(p) if p > 0.0 && kkt.is_finite() => kkt * (kkt / p).min(1.0),
            _ => kkt,
        };
        self.polish.active() || next <= FUSE_MARGIN * tol
    }

    /// A run that met the cheap test and then stopped while polishing returns its best point,
    /// once the certificate with the term magnitudes recomputed there confirms it. `None`: not
    /// confirmed, go on iterating from that point with the fresh magnitudes.
    pub(super) fn confirm_best_point(&mut self, termination: Termination) -> Option<Termination> {
        let run = &mut self.run;
        match self.polish.best.take() {
            Some((bt, _)) if !matches!(termination, Termination::NoMinimizer) => {
                if run.ev.theta != bt {
                    // The same bits as when it was first evaluated, with the term magnitudes.
                    run.move_to(bt);
                } else {
                    run.theta = bt;
                }
                let k = run.certify_here();
                if run.cert.meets(&k) {
                    self.certified = Some((k, run.ev.value));
                    return Some(Termination::Converged);
                }
                if k.underflowed() {
                    return Some(Termination::PrecisionLimit);
                }
                self.polish.restart();
                (run.rep.counts.iterations >= self.max_iter).then_some(Termination::MaxIterations)
            }
            _ => Some(termination),
        }
    }

    /// One iteration: the tests at the current point, the direction (quasi-Newton, else the
    /// preconditioned or plain projected gradient), the arc search and the curvature pair.
    pub(super) fn one_iteration(&mut self) -> std::result::Result<(), Termination> {
        let at = self
            .run
            .first_order_checks("lbfgs", self.max_iter, &mut self.polish, &mut self.flat_steps)?;
        if self.probe == Some(self.run.rep.counts.iterations)
            && !self.polish.active()
            && slow_to_converge(at.kkt, self.run.rep.counts.iterations, self.run.ctl.tol_rel)
        {
            return Err(Termination::MaxIterations);
        }
        let w = self.working_gradient();
        if norm(&w.gw) == 0.0 {
            if at.at_kkt {
                // Exactly stationary.
                self.polish.offer(&self.run.theta, at.kkt);
                return Err(Termination::Converged);
            }
            // The working model is stationary but the residual is not below tolerance.
            return Err(Termination::LineSearchFailed);
        }
        if at.at_kkt && !at.check_flat && self.correction_negligible(&w, at.kkt) {
            self.polish.settle(&self.run.theta, at.kkt);
            return Err(Termination::Converged);
        }
        let mut outcome = self.search(&w, &at)?;
        if self.recent_kkt.len() == RATE_WINDOW {
            self.recent_kkt.pop_front();
        }
        self.recent_kkt.push_back(at.kkt);
        if at.check_flat {
            if self.flat_steps == 0 {
                // Short step at a KKT point: a genuine (local) minimiser.
                if self.polish.offer(&self.run.theta, at.kkt) {
                    return Err(Termination::Converged);
                }
                let fused = self.fuse_scale(at.kkt);
                self.run.cert.hold = !self.polish.active();
                outcome = self
                    .run
                    .arc_search(&self.dir, w.face_mu, &mut self.trial, &mut self.xd, fused);
            } else if self.flat_steps >= RECESSION_STEPS {
                return Err(Termination::NoMinimizer);
            }
        }
        let new_theta = match outcome {
            Arc::Accepted(t) => t,
            Arc::Failed => return Err(Termination::LineSearchFailed),
        };
        // (A run that passed the norm cap ends here: its pairs are of no further use.)
        let s = self.run.accept(new_theta, &mut self.trial)?;
        // Curvature pair from the projected gradients of F.
        let pg_new = self.project_grad(&self.run.ev.grad);
        let y: Vec<f64> = pg_new.iter().zip(&w.pg).map(|(a, b)| a - b).collect();
        if self.pairs.len() == self.memory {
            self.pairs.pop_front();
        }
        self.prev_step = Some(s.clone());
        self.pairs.push_back(Pair { s, y });
        Ok(())
    }

    /// Whether the point (residual `kkt`) is accurate at the tolerance ([`ACCURATE`]) by the
    /// quasi-Newton model: the estimated distance to the minimiser `‖c ∘ H g_w‖/(1 − ρ)`, the
    /// quasi-Newton step over one minus the rate `ρ = (κ/κ_{k−w})^{1/w}` at which the residual
    /// fell over the last `w = RATE_WINDOW` iterations (the remaining steps of a sequence
    /// converging at that rate). The model is trusted only where `ρ ≤ 1/2`, the fast regime of
    /// well-conditioned problems; on ill-conditioned ones L-BFGS's residual falls slowly and
    /// unevenly (one fast iteration among slow ones), and its model misses the directions of
    /// low curvature it has not explored. Leaves the direction in `self.dir`; `search`
    /// recomputes it (`O(md)`, no pass).
    fn correction_negligible(&mut self, w: &Working, kkt: f64) -> bool {
        let rate = match self.recent_kkt.front() {
            Some(&p) if p > 0.0 && self.recent_kkt.len() == RATE_WINDOW => (kkt / p).powf(1.0 / RATE_WINDOW as f64),
            _ => return false,
        };
        if self.pairs.is_empty() || w.release || !(rate <= 0.5) {
            return false;
        }
        self.direction(w, true);
        let run = &self.run;
        run.cols.norm(&self.dir) / (1.0 - rate) <= ACCURATE * run.ctl.tol_rel * run.cols.size(&run.theta)
    }

    fn project_grad(&self, g: &[f64]) -> Vec<f64> {
        let mut p = g.to_vec();
        if self.run.set.sum_zero() {
            center(&mut p);
        }
        p
    }

    /// Working gradient: `P∇F`, plus `μθ` on the active face of the ball. The face `‖θ‖ = B` is
    /// kept while on the sphere (an active-set strategy): the working gradient is the tangent
    /// gradient `P∇F + μθ`, `μ = −(P∇F)ᵀθ/B²`, whatever the sign of the multiplier estimate. The
    /// face is released only when `μ < 0` dominates the tangent gradient (`‖g_w‖ ≤ RELEASE·|μ|B`),
    /// by a projected-gradient step inward: this keeps ill-conditioned problems from zigzagging
    /// on and off the sphere.
    fn working_gradient(&self) -> Working {
        let theta = &self.run.theta;
        let radius = self.run.set.radius();
        let pg = self.project_grad(&self.run.ev.grad);
        let on_sphere = radius.is_some_and(|b| norm(theta) >= b * (1.0 - FACE_TOL));
        let mut face_mu: Option<f64> = None;
        let mut release = false;
        if let (true, Some(b)) = (on_sphere, radius) {
            let m = -dot(&pg, theta) / (b * b);
            let tangent: Vec<f64> = pg.iter().zip(theta).map(|(g, t)| m.mul_add(*t, *g)).collect();
            if m < 0.0 && norm(&tangent) <= RELEASE * (-m) * b {
                release = true;
            } else {
                face_mu = Some(m);
            }
        }
        let gw: Vec<f64> = match face_mu {
            Some(m) => pg.iter().zip(theta).map(|(g, t)| m.mul_add(*t, *g)).collect(),
            None => pg.clone(),
        };
        Working {
            pg,
            gw,
            face_mu,
            release,
        }
    }

    /// The search direction into `dir`: the two-loop recursion on the pairs (with the
    /// curvature shift `μ ≥ 0` of the face), else the preconditioned or plain negative working
    /// gradient; made tangent to the face and centred under sum-zero.
    fn direction(&mut self, w: &Working, quasi_newton: bool) {
        let theta = &self.run.theta;
        let sz = self.run.set.sum_zero();
        let on_face = w.face_mu.is_some();
        let scaling = if self.diagonal_scaling {
            self.run.cols.preconditioner()
        } else {
            None
        };
        let mut normals: Vec<&[f64]> = Vec::with_capacity(2);
        if sz {
            normals.push(&self.ones);
        }
        if on_face {
            normals.push(theta);
        }
        if quasi_newton {
            // Curvature shift of the pairs: the Lagrangian Hessian ∇²F + μI (μ ≥ 0 only).
            let mu = w.face_mu.map_or(0.0, |m| m.max(0.0));
            two_loop(&self.pairs, mu, scaling, &normals, &w.gw, &mut self.dir);
        } else {
            match scaling {
                // The preconditioned gradient: a step in the units of the features.
                Some(dg) if self.pairs.is_empty() && !w.release => {
                    apply_preconditioner(dg, &normals, &w.gw, &mut self.dir);
                    self.dir.iter_mut().for_each(|v| *v = -*v);
                }
                _ => self.dir.iter_mut().zip(&w.gw).for_each(|(d, g)| *d = -g),
            }
        }
        if on_face {
            // Tangent to the sphere.
            let b2 = self.run.set.radius().map_or(1.0, |b| b * b);
            let c = dot(&self.dir, theta) / b2;
            self.dir.iter_mut().zip(theta).for_each(|(d, t)| *d -= c * t);
        }
        if sz {
            center(&mut self.dir);
        }
    }

    /// Up to three attempts at a direction and its arc search: a quasi-Newton direction that is
    /// not gradient-related, or whose search fails, restarts from the gradient (the pairs are
    /// dropped). At a flat-check point the first direction only updates the flat-step count.
    fn search(&mut self, w: &Working, at: &AtPoint) -> std::result::Result<Arc, Termination> {
        let gw_norm = norm(&w.gw);
        let mut quasi_newton = !self.pairs.is_empty() && !w.release;
        let mut outcome = Arc::Failed;
        let mut checked_flat = false;
        for _attempt in 0..3 {
            self.direction(w, quasi_newton);
            let dn = norm(&self.dir);
            let cos = -dot(&w.gw, &self.dir) / (gw_norm * dn);
            if quasi_newton && !(cos >= MIN_COS) {
                // Not gradient-related: restart from the projected gradient.
                self.pairs.clear();
                quasi_newton = false;
                continue;
            }
            let run = &self.run;
            if at.check_flat && !checked_flat {
                checked_flat = true;
                self.flat_steps = count_flat_steps(
                    &run.cols,
                    &run.theta,
                    &self.dir,
                    dn,
                    self.prev_step.as_deref(),
                    self.flat_steps,
                );
            }
            if run.set.radius().is_none() {
                cap_step(&run.cols, &mut self.dir, &run.theta);
            }
            if at.check_flat && self.flat_steps == 0 {
                break;
            }
            let fused = self.fuse_scale(at.kkt);
            self.run.cert.hold = !self.polish.active();
            outcome = self
                .run
                .arc_search(&self.dir, w.face_mu, &mut self.trial, &mut self.xd, fused);
            if matches!(outcome, Arc::Accepted(_)) || !quasi_newton {
                break;
            }
            self.pairs.clear();
            quasi_newton = false;
        }
        Ok(outcome)
    }
}

impl<O: SmoothObjective> PolishedIterations for Lbfgs<'_, O> {
    fn iteration(&mut self) -> std::result::Result<(), Termination> {
        self.one_iteration()
    }
    fn confirm_best(&mut self, termination: Termination) -> Option<Termination> {
        self.confirm_best_point(termination)
    }
}

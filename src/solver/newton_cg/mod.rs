//! Hessian-free truncated Newton-CG over `Θ_B`, the ball, the sum-zero subspace and `ℝ^d`
//! (Nocedal & Wright, *Numerical Optimization*, 2nd ed., Alg. 7.1 and 7.2).
//!
//! The dense Newton solver ([`super::newton`]) forms `∇²F` (`n·d²` flops, `d²` memory) and
//! factors it (`d³/3`). Newton-CG never forms it: each Newton step solves the Newton system
//! approximately by conjugate gradients whose only access to the Hessian is one
//! Hessian-vector product `∇²F v = (Xᵀ(w ℓ''(Xθ) ⊙ Xv) + βv)/W` per CG iteration — one pass over
//! `X` ([`SecondOrderObjective::hess_vec`]), `O(nd)` flops and `O(d)` memory.
//!
//! **Sets.** Vectors are kept in the sum-zero subspace by centring (the Hessian-vector products
//! are centred, i.e. the operator is `P∇²F P`, the reduced Hessian of Newton in another basis).
//! The ball uses the active-face strategy of [`super::lbfgs`]:
//!
//! * *interior* (or on the sphere with the gradient pointing inward, `μ < 0` dominating): the
//!   model `q(p) = gᵀp + ½pᵀ∇²F p`, `g = P∇F`, is minimised by **Steihaug–Toint truncated CG**
//!   inside the feasible ball `‖θ + p‖ ≤ B`: CG from `p = 0` stops at the forcing tolerance
//!   `‖r‖ ≤ η‖g‖`, where a CG step would leave the ball (then the step ends on the sphere along
//!   that CG direction), or on a direction of non-positive curvature `dᵀ∇²F d ≤ 0` (then it goes
//!   to the sphere along it — the model decreases without bound along `d`). The CG iterates
//!   decrease `q` monotonically, so each of these stops is a descent step.
//! * *on the face* `‖θ‖ = B` with multiplier estimate `μ = −(P∇F)ᵀθ/B²`: the model of the
//!   Lagrangian on the tangent space `{p : θᵀp = 0}`, with gradient `g + μθ` and Hessian
//!   `P_T(∇²F + μI)P_T` (the Riemannian Hessian of `F` on the sphere), minimised by CG; the step
//!   is taken along the arc `B(θ + αp)/‖θ + αp‖`.
//!
//! On the face or without a ball there is no sphere to step to: a direction of non-positive
//! curvature restarts CG on the shifted model `A + τI`, `τ` raised past the curvature found
//! (Levenberg–Marquardt, as dense Newton shifts an indefinite Hessian; counted in
//! [`SolverDetail::hessian_shifts`](crate::solver::SolverDetail::hessian_shifts) and [`SolverDetail::max_shift`](crate::solver::SolverDetail::max_shift)); after 30 raises the step is
//! the CG iterate so far, or `−g` (the safeguard of Alg. 7.1). Directions of non-positive
//! curvature (the non-convex `mle-rr`) are counted in
//! [`SolverDetail::negative_curvature_directions`](crate::solver::SolverDetail::negative_curvature_directions).
//!
//! **Forcing.** `η = min(0.5, max(√κ, 0.1·τ/κ))`, `κ` the relative KKT residual
//! ([`super::certificate`]; scale-free; superlinear local convergence,
//! Dembo–Eisenstat–Steihaug) and `τ` the tolerance (`10⁻³τ` while polishing): no tighter than
//! what takes the residual a decade below its target to first order (convex losses; a
//! non-convex one keeps `min(0.5, √κ)`). At most
//! `min(1000, max(10, 2m))` CG iterations per step, and without a preconditioner at most
//! `2(r + 2) + 10` for a Hessian of rank `r ≤ n` (plus a multiple of the identity; CG ends in
//! `r + 2` steps in exact arithmetic).
//!
//! **Preconditioning.** With `n > 16d` rows and the memory for it, CG is preconditioned by the
//! Cholesky factor of the Hessian of an evenly spaced sample of `k·d` rows at the start
//! (module `sample`; `k` from 4 to 64 by [`sample_rows_per_dim`], more where the sample's Gram
//! product is cheap against a pass): on a design whose covariance has condition number `κ_X` —
//! rotated, so column scaling does not remove it — plain CG needs `O(√κ_X)` products per
//! Newton step, the preconditioned one a few (1–9 at `(2·10⁵, 512)` with `κ_X = 512` and
//! `k = 8`; 24 in all over 7 steps with the rule's `k = 48`). The sample is declined
//! when, after column scaling, it looks no worse conditioned than a Gaussian sample of a
//! well-conditioned design (module `sample`). Otherwise badly scaled columns get their diagonal
//! (`solver::scales`). Refinement uses the sample's factor to skip corrections it shows to
//! be negligible.
//!
//! **Safeguards.** Every step is accepted by the Armijo rule along the projection arc
//! (the arc search of L-BFGS: the unit step is one value+gradient pass, backtracking O(n) per
//! trial from the direction's scores); a CG direction that is not gradient-related
//! (`cos∠(p, −g_w) < 1e-8`) or along which the search fails is replaced by the projected
//! gradient, as in L-BFGS. So Newton-CG converges wherever projected gradient does, and is a
//! Newton method near a minimiser.
//!
//! **Extended steps.** On separable data the loss decays exponentially along the separating
//! direction (`F ≈ Σ e^{−m_i}`) and a Newton step has the constant length `1/‖x‖` whatever the
//! distance to the minimiser (`f = e^{−at}`: `f'/f'' = 1/a`): with `‖x‖ ≈ 450` it would take
//! hundreds of steps to cross a ball of radius 2. A unit step whose decrease beats the model's
//! prediction `−½gᵀp` by 10 % is doubled while `F` keeps falling (O(n) per trial; counted in
//! [`SolverDetail::extended_steps`](crate::solver::SolverDetail::extended_steps)). There `F`,
//! `∇F` and `∇²F` are all tiny (~1e-120 at the minimiser), so CG runs on the unit right-hand side
//! `g/‖g‖`: in the units of `g` its curvature `dᵀ∇²F d` would underflow.
//!
//! **Stopping** is Newton's and L-BFGS's relative KKT criterion ([`super::certificate`]). Once
//! the cheap test holds, a point whose Newton correction the sample factor estimates within
//! `10·tol` of its size (in the scale of the scores) is certified as it is: the tolerance
//! already makes it that accurate (22 instead of 35 passes on a rotated power-law design at
//! `(2·10⁵, 512)`, `|Δθ|∞ = 1.2e-11` from the refined answer). Otherwise up to three more
//! steps run while the residual keeps falling — at most to `1e-3·tol`, and with a sample
//! factor only until its estimate of the correction is negligible, the forcing term asking a
//! decade below that (38 instead of 59 passes at `(10⁵, 2048)`, one polishing step of 5 CG
//! products instead of one of 11 and a refinement of 15 passes) — and the best point is
//! refined with the doubled-precision gradient (as Newton does), unless the factor shows it
//! accurate, and certified with the term magnitudes recomputed there; if that fails, the
//! iterations go on from it.
//! The no-minimiser tests (negative recession slope, a KKT point with a zero recession slope,
//! aligned long steps at KKT points of a non-convex loss, `‖θ‖ > norm_cap`) are L-BFGS's.
//! `certified_global` is Newton's rule (converged, and convex loss or convexity certified on
//! the ball).
//!
//! **Cost** per Newton step: one value+gradient pass plus one pass per CG iteration
//! ([`Counts::cg_iterations`](crate::solver::Counts::cg_iterations)). Memory: `O(d)` vectors besides two `O(n)` score vectors
//! (the current and the trial point) and a third for the direction's scores, allocated only
//! when a line search backtracks; with the sample preconditioner `8kd²` bytes for the gathered
//! rows and `d²` for the factor, and `kd³ + d³/3` flops once (a matrix product, at the
//! machine's peak rather than its memory bandwidth; `k ≤ 8` rows per dimension once more for
//! the take-or-decline test when `k > 8`).

mod model;
mod sample;

use super::first_order::{
    arc_search, beats_model, cap_step, count_flat_steps, drive, extend_step, Arc, AtPoint, Certified, Polish,
    PolishedIterations, ACCURATE, MIN_COS, POLISH_FACTOR, RECESSION_STEPS,
};
use super::run::Run;
use super::scales::ColumnScales;
use super::{dot, Control, SolveReport, Termination};
use crate::error::Result;
use crate::feasible::{norm, FeasibleSet};
use crate::objective::{Eval, SecondOrderObjective};
use model::{newton_direction, truncated_cg, working_gradient, Model, Precond};
use sample::SampleCurvature;

/// Largest forcing term `η` (relative CG residual).
const ETA_MAX: f64 = 0.5;
/// The forcing term's floor asks for this fraction of the target residual ([`forcing`]).
const FORCING_MARGIN: f64 = 0.1;
/// Most CG iterations per Newton step.
const CG_MAX: usize = 1000;
/// Fewest CG iterations allowed per Newton step (small `m`).
const CG_MIN: usize = 10;
/// Steps allowed after the tolerance is met, while the KKT residual keeps falling (L-BFGS's
/// polishing rule, [`super::lbfgs`], with a smaller budget: each step costs CG passes).
const POLISH_ITERS: usize = 3;

/// Whether Newton-CG preconditions with a row sample's curvature (module docs) at `n` rows and
/// `d` columns, given a convex loss and the memory for it: `d ≥ 2` and `n > 16d`.
pub fn offers_sample(n: usize, d: usize) -> bool {
    d >= 2 && sample::ROWS_PER_DIM.checked_mul(2 * d).is_some_and(|m| n > m)
}

/// The rows per dimension `k` of the sample Newton-CG preconditions with, when it takes one, at
/// `n` rows and `d` columns (about `k·d` rows): the minimiser of a cost model of the sample's
/// Gram product against the CG products it saves, from the shape alone (so the same for any
/// thread or rank count) — 48 at `(2·10⁵, 512)`, 6 at `(10⁵, 2048)`. Whether the sample is
/// taken is decided on at most `8d` rows of it.
pub fn sample_rows_per_dim(n: usize, d: usize) -> usize {
    sample::rows_per_dim(n, d)
}

/// Whether `obj`'s design looks ill-conditioned on a cheap row sample at `θ = 0` (module
/// `sample`: the take-or-decline test of the preconditioner on `4·128` rows of 128 evenly
/// spaced columns when `d > 128`, then on `4d` rows of all of them, each only where the
/// sample's Gram product costs at most half a pass's worth); `None` where it cannot be judged
/// cheaply. [`SolverKind::Auto`](crate::estimator::SolverKind::Auto) chooses Newton-CG
/// on `Some(true)` without probing with L-BFGS.
pub(crate) fn sample_looks_ill_conditioned<O: SecondOrderObjective>(
    obj: &O,
    set: &FeasibleSet,
    ctl: &Control,
) -> Option<bool> {
    sample::looks_ill_conditioned(obj, set.sum_zero(), ctl)
}

/// The forcing term `η = min(0.5, max(√κ, 0.1·target/κ))` at relative KKT residual `κ`:
/// Dembo–Eisenstat–Steihaug's `√κ` (superlinear convergence), but no smaller than what brings
/// the residual to a tenth of `target` (the tolerance, or the polishing depth) to first order —
/// a tighter linear solve buys digits the run does not use, at a pass per CG iteration.
fn forcing(kkt: f64, target: f64) -> f64 {
    let floor = if kkt > 0.0 {
        FORCING_MARGIN * target / kkt
    } else {
        ETA_MAX
    };
    ETA_MAX.min(kkt.sqrt().max(floor))
}

/// Minimises `obj` over `set` by truncated Newton-CG from `theta0` (projected onto the set;
/// default 0). See the module docs. `ctl.max_iter` bounds the Newton steps. `Err` only for
/// invalid input.
pub fn solve<O: SecondOrderObjective>(
    obj: &O,
    set: &FeasibleSet,
    theta0: Option<&[f64]>,
    ctl: &Control,
) -> Result<SolveReport> {
    let (run, ()) = Run::start(
        "newton-cg",
        obj,
        set,
        theta0,
        ctl,
        ctl.max_iter,
        Run::evaluate_start(obj),
    )?;
    let mut ncg = NewtonCg::new(run);
    let termination = drive(&mut ncg);
    Ok(ncg.run.finish(termination, ncg.certified))
}

/// The state of a Newton-CG run (module docs).
struct NewtonCg<'a, O> {
    run: Run<'a, O>,
    /// Reduced dimension (`d − 1` under sum-zero).
    m: usize,
    cg_max: usize,
    ones: Vec<f64>,
    trial: Eval,
    /// The direction's scores, allocated on the first backtracking search (often never).
    xd: Vec<f64>,
    polish: Polish,
    prev_step: Option<Vec<f64>>,
    flat_steps: usize,
    /// The certificate and objective of the returned point, computed with fresh term
    /// magnitudes and the doubled-precision gradient.
    certified: Certified,
    /// The preconditioner from the curvature of a row sample ([`sample`]), when taken.
    sample: Option<SampleCurvature>,
}

impl<'a, O: SecondOrderObjective> NewtonCg<'a, O> {
    fn new(mut run: Run<'a, O>) -> Self {
        let d = run.obj.dim();
        let m = if run.set.sum_zero() { d.saturating_sub(1) } else { d };
        let trial = run.obj.new_eval();
        let polish = Polish::new(POLISH_ITERS, run.ctl.tol_rel);
        // Without a preconditioner the model's Hessian is `P(Xᵀ D X/W)P + (β/W + μ + τ)I`: rank
        // at most `r` (the scores: rows, or `n·K` for groups) plus a multiple of the identity, so
        // CG ends in at most `r + 2` iterations in exact arithmetic. Twice that, plus slack,
        // bounds it in rounding too (at d ≫ n the 1000-iteration cap cost seconds per step).
        // `r` is the same on every process (the global count), so the bits are too.
        let rank = run.obj.num_samples().max(run.obj.num_scores());
        let mut cg_max = (2 * m).clamp(CG_MIN, CG_MAX);
        let sample = SampleCurvature::of(run.obj, &run.ev, run.set.sum_zero(), run.ctl);
        if let Some(s) = &sample {
            run.rep.detail.preconditioner_rows = s.rows;
        }
        if run.cols.preconditioner().is_none() && sample.is_none() {
            cg_max = cg_max.min(rank.saturating_add(2).saturating_mul(2).saturating_add(CG_MIN));
        }
        NewtonCg {
            run,
            m,
            cg_max,
            ones: vec![1.0; d],
            trial,
            xd: Vec::new(),
            polish,
            prev_step: None,
            flat_steps: 0,
            certified: None,
            sample,
        }
    }

    /// A run that met the cheap test and then stopped while polishing returns its best point,
    /// refined with the doubled-precision gradient (as Newton does) unless the sample factor
    /// shows it accurate ([`ACCURATE`]), and certified with the term magnitudes recomputed
    /// there. `None`: not confirmed, go on iterating.
    pub(super) fn confirm_best_point(&mut self, termination: Termination) -> Option<Termination> {
        let run = &mut self.run;
        match self.polish.best.take() {
            Some((bt, _)) if !matches!(termination, Termination::NoMinimizer) => {
                if run.ev.theta != bt {
                    run.obj.evaluate(&bt, &mut run.ev);
                    run.rep.counts.grad_evals += 1;
                }
                run.theta = bt;
                let (sz, radius) = (run.set.sum_zero(), run.set.radius());
                let (gw, face_mu) = working_gradient(&run.theta, &run.ev.grad, sz, radius);
                let accurate = self.m == 0
                    || (O::CONVEX && self.sample.is_some() && {
                        let precond = Precond::choose(self.sample.as_ref(), run.cols.preconditioner());
                        let model = Model::new(&run.theta, sz, radius, face_mu, precond, &self.ones);
                        correction_ratio(&model, &gw, &run.cols, &run.theta, run.ctl.tol_rel) <= 1.0
                    });
                let (f, g) = if !accurate {
                    let precond = (self.sample.as_ref(), run.cols.preconditioner());
                    refine(
                        run.obj,
                        run.set,
                        &run.ev,
                        &mut run.theta,
                        self.cg_max,
                        precond,
                        &mut run.rep,
                    )
                } else {
                    (run.ev.value, run.ev.grad.clone())
                };
                if run.ev.theta != run.theta {
                    let theta = std::mem::take(&mut run.theta);
                    run.move_to(theta);
                }
                let k = run.certify(&g);
                if run.cert.meets(&k) {
                    self.certified = Some((k, f));
                    return Some(Termination::Converged);
                }
                if k.underflowed() {
                    return Some(Termination::PrecisionLimit);
                }
                self.polish.restart();
                (run.rep.counts.iterations >= run.ctl.max_iter).then_some(Termination::MaxIterations)
            }
            _ => Some(termination),
        }
    }

    /// One Newton step: the tests at the current point, the truncated-CG direction on the
    /// working model (the face of the ball as in L-BFGS), its arc search (the projected
    /// gradient when the direction is not gradient-related or its search fails), the move.
    pub(super) fn one_iteration(&mut self) -> std::result::Result<(), Termination> {
        let budget = self.run.ctl.max_iter;
        let at = self
            .run
            .first_order_checks("newton-cg", budget, &mut self.polish, &mut self.flat_steps)?;
        let (sz, radius) = (self.run.set.sum_zero(), self.run.set.radius());
        let (gw, face_mu) = working_gradient(&self.run.theta, &self.run.ev.grad, sz, radius);
        if norm(&gw) == 0.0 {
            if at.at_kkt {
                self.polish.offer(&self.run.theta, at.kkt);
                return Err(Termination::Converged);
            }
            return Err(Termination::LineSearchFailed);
        }
        let Some((mut outcome, dir)) = self.search(&gw, face_mu, &at) else {
            // The tolerance already makes the point accurate.
            self.polish.settle(&self.run.theta, at.kkt);
            return Err(Termination::Converged);
        };
        if at.check_flat {
            if self.flat_steps == 0 {
                // Short step at a KKT point: a genuine (local) minimiser.
                if self.polish.offer(&self.run.theta, at.kkt) {
                    return Err(Termination::Converged);
                }
                let polishing = self.polish.active();
                outcome = self
                    .run
                    .arc_search(&dir, face_mu, &mut self.trial, &mut self.xd, polishing);
            } else if self.flat_steps >= RECESSION_STEPS {
                return Err(Termination::NoMinimizer);
            }
        }
        let new_theta = match outcome {
            Arc::Accepted(t) => t,
            Arc::Failed => return Err(Termination::LineSearchFailed),
        };
        let s = self.run.accept(new_theta, &mut self.trial)?;
        self.prev_step = Some(s);
        Ok(())
    }

    /// The Newton-CG direction and up to two arc searches (module docs); returns the outcome
    /// and the last direction tried, or `None` at a point meeting the tolerance (and not under
    /// the flat-step test) that the sample factor shows accurate ([`correction_ratio`]).
    fn search(&mut self, gw: &[f64], face_mu: Option<f64>, at: &AtPoint) -> Option<(Arc, Vec<f64>)> {
        let run = &mut self.run;
        let (sz, radius) = (run.set.sum_zero(), run.set.radius());
        let gw_norm = norm(gw);
        let precond = Precond::choose(self.sample.as_ref(), run.cols.preconditioner());
        let mut model = Model::new(&run.theta, sz, radius, face_mu, precond, &self.ones);
        // One estimate of the correction per step, on the step's own model (on the face of a
        // ball, building a model refactors the shifted sample factor).
        let estimates = O::CONVEX && self.sample.is_some() && (at.at_kkt || self.polish.active());
        let correction = estimates.then(|| correction_ratio(&model, gw, &run.cols, &run.theta, run.ctl.tol_rel));
        if at.at_kkt && !at.check_flat && correction.is_some_and(|r| r <= 1.0) {
            return None;
        }
        // The floor on the forcing term assumes the run converges to its target, true of a
        // convex loss; a non-convex one keeps the full `√κ` (its recession tests at KKT points
        // need accurate directions).
        // While polishing, the residual's target is `1e-3·τ`; with a sample factor, only what
        // brings its estimate of the correction under the negligible size (a decade below, to
        // first order: a Newton step shrinks the correction as it shrinks the residual).
        let target = match (self.polish.active(), correction) {
            (false, _) => run.ctl.tol_rel,
            (true, Some(r)) if r > 0.0 => (at.kkt / r).max(POLISH_FACTOR * run.ctl.tol_rel),
            (true, _) => POLISH_FACTOR * run.ctl.tol_rel,
        };
        let eta = if O::CONVEX {
            forcing(at.kkt, target)
        } else {
            ETA_MAX.min(at.kkt.sqrt())
        };
        let cg = newton_direction(run.obj, &run.ev, &mut model, gw, eta, self.cg_max, &mut run.rep);
        let mut dir = cg.p;
        model.project(&mut dir);

        let mut newton_dir = true;
        let mut outcome = Arc::Failed;
        let mut checked_flat = false;
        for _attempt in 0..2 {
            let dn = norm(&dir);
            let cos = -dot(gw, &dir) / (gw_norm * dn);
            if newton_dir && !(cos >= MIN_COS) {
                // Not gradient-related: the projected gradient instead.
                dir.iter_mut().zip(gw).for_each(|(v, g)| *v = -g);
                model.project(&mut dir);
                newton_dir = false;
                continue;
            }
            if at.check_flat && !checked_flat {
                checked_flat = true;
                self.flat_steps = count_flat_steps(
                    &run.cols,
                    &run.theta,
                    &dir,
                    dn,
                    self.prev_step.as_deref(),
                    self.flat_steps,
                );
            }
            if radius.is_none() {
                cap_step(&run.cols, &mut dir, &run.theta);
            }
            if at.check_flat && self.flat_steps == 0 {
                break;
            }
            // (Field by field: the model borrows the iterate.)
            let cert = self.polish.active().then_some(&mut run.cert);
            outcome = arc_search(
                run.obj,
                run.set,
                &run.ev,
                &dir,
                face_mu,
                &mut self.trial,
                &mut self.xd,
                &mut run.rep,
                cert,
            );
            let predicted = -0.5 * dot(gw, &dir);
            let extend = newton_dir && !self.polish.active() && beats_model(run.ev.value, self.trial.value, predicted);
            if let (Arc::Accepted(t), true) = (&mut outcome, extend) {
                // A unit Newton step that beat its model: extend it (the exponential tail). The
                // search's point is the unit step when no backtracking moved it.
                let mut unit: Vec<f64> = run.ev.theta.iter().zip(&dir).map(|(a, b)| a + b).collect();
                run.set.project(&mut unit);
                if *t == unit {
                    let taken = std::mem::take(t);
                    *t = extend_step(
                        run.obj,
                        run.set,
                        &run.ev,
                        &dir,
                        predicted,
                        taken,
                        &mut self.trial,
                        &mut self.xd,
                        &mut run.rep,
                    );
                }
            }
            if matches!(outcome, Arc::Accepted(_)) || !newton_dir {
                break;
            }
            dir.iter_mut().zip(gw).for_each(|(v, g)| *v = -g);
            model.project(&mut dir);
            newton_dir = false;
        }
        Some((outcome, dir))
    }
}

/// The sample factor's estimate of the Newton correction at `θ` (working gradient `gw`, the
/// step's `model`), `‖c ∘ M⁻¹g_w‖`, over the size it must not exceed to be negligible at the
/// tolerance `τ`, `ACCURATE·τ·max(1, ‖c ∘ θ‖)` ([`ACCURATE`]; `c` the column scales). The
/// estimate is within a factor of about 3 of the exact correction at `k ≥ 4` rows per dimension
/// (the Wishart spread of module `sample`) times the spread of the loss's weights since the
/// start; measured (max-norm) at 0.79 and 0.94 of the distance to the minimiser on rotated
/// power-law designs at `(2·10⁵, 512)` and `(10⁵, 2048)`. Meaningful for a convex loss with a
/// sample factor.
fn correction_ratio(model: &Model, gw: &[f64], cols: &ColumnScales, theta: &[f64], tol: f64) -> f64 {
    let mut estimate = vec![0.0; gw.len()];
    model.precondition(gw, &mut estimate);
    cols.norm(&estimate) / (ACCURATE * tol * cols.size(theta))
}

/// Rounds of iterative refinement after convergence.
const REFINE_ROUNDS: usize = 3;
/// Relative CG residual of a refinement correction (the correction is tiny next to `θ`, so it
/// needs only a few correct digits).
const REFINE_ETA: f64 = 1e-4;

/// Iterative refinement at a converged point, as in [`super::newton`]: the gradient is
/// recomputed as if in doubled precision ([`SecondOrderObjective::value_grad_compensated`]) and the
/// Newton correction for it is solved by CG (preconditioned as the iterations are: `precond` is the
/// sample curvature and the column diagonal, when there are) with the Hessian at the converged point (`ev`), for
/// up to three rounds while the corrections shrink. Removes the error that rounding in `xᵀθ`
/// puts into the gradient of ill-conditioned problems (large `‖θ‖`, nearly collinear columns).
/// Returns the objective and gradient at the final `theta`, both from the compensated pass.
fn refine<O: SecondOrderObjective>(
    obj: &O,
    set: &FeasibleSet,
    ev: &Eval,
    theta: &mut Vec<f64>,
    cg_max: usize,
    precond: (Option<&SampleCurvature>, Option<&[f64]>),
    rep: &mut SolveReport,
) -> (f64, Vec<f64>) {
    let d = theta.len();
    let (sz, radius) = (set.sum_zero(), set.radius());
    let mut gc = vec![0.0; d];
    let mut fc = obj.value_grad_compensated(theta, &mut gc);
    rep.counts.compensated_evals += 1;
    let mut gn = vec![0.0; d];
    let ones = vec![1.0; d];
    let mut last: Option<(Vec<f64>, f64, Vec<f64>, f64)> = None; // previous (θ, F, ∇F, ‖δ‖)
    loop {
        let (gw, face_mu) = working_gradient(theta, &gc, sz, radius);
        if norm(&gw) == 0.0 {
            break;
        }
        let model = Model::new(theta, sz, radius, face_mu, Precond::choose(precond.0, precond.1), &ones);
        if precond.0.is_some() {
            // The sample's factor estimates the correction `∇²F⁻¹ g` within a small factor
            // (module docs of `sample`) at the cost of two triangular solves: a correction
            // that is negligible with a 4× margin is not worth a CG solve.
            let mut estimate = vec![0.0; d];
            model.precondition(&gw, &mut estimate);
            if !(norm(&estimate) > f64::EPSILON * norm(theta)) {
                break;
            }
        }
        let cg = truncated_cg(obj, ev, &model, &gw, REFINE_ETA, cg_max, rep);
        if cg.negative_curvature.is_some() {
            // Not a local model of a minimiser: no correction from it.
            break;
        }
        let mut delta = cg.p;
        model.project(&mut delta);
        let dn = norm(&delta);

        if let Some((pt, pf, pg, pdn)) = last.take() {
            if !(dn < pdn) {
                // No progress: return to the previous point.
                *theta = pt;
                fc = pf;
                gc = pg;
                rep.counts.refinement_steps -= 1;
                break;
            }
        }
        if !(dn > 4.0 * f64::EPSILON * norm(theta)) || rep.counts.refinement_steps == REFINE_ROUNDS {
            break;
        }
        let mut th: Vec<f64> = theta.iter().zip(&delta).map(|(t, v)| t + v).collect();
        set.project(&mut th);
        let fnew = obj.value_grad_compensated(&th, &mut gn);
        rep.counts.compensated_evals += 1;
        if !fnew.is_finite() || gn.iter().any(|g| !g.is_finite()) {
            break;
        }
        last = Some((std::mem::replace(theta, th), fc, gc.clone(), dn));
        std::mem::swap(&mut gc, &mut gn);
        fc = fnew;
        rep.counts.refinement_steps += 1;
    }
    (fc, gc)
}

impl<O: SecondOrderObjective> PolishedIterations for NewtonCg<'_, O> {
    fn iteration(&mut self) -> std::result::Result<(), Termination> {
        self.one_iteration()
    }
    fn confirm_best(&mut self, termination: Termination) -> Option<Termination> {
        self.confirm_best_point(termination)
    }
}

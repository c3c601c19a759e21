//! Exact projected Newton.
//!
//! Works in reduced coordinates `θ = U u` (`U` the Helmert basis of `{1ᵀθ = 0}` under
//! `Θ_B`/sum-zero, `U = I` otherwise), where the ball `‖θ‖ ≤ B` is `‖u‖ ≤ B`. Each iteration:
//!
//! 1. one fused pass over `X` for `F`, `∇F`, the scores and the dense Hessian `H`
//!    ([`SecondOrderObjective::evaluate_with_hessian`]: Gram products of scaled row panels, faer or
//!    OpenBLAS; objectives without a fused pass evaluate `H` in a second pass);
//! 2. the step minimises the Newton model *over the ball*, exactly: `v = argmin_{‖v‖≤B}
//!    gᵀ(v−u) + ½(v−u)ᵀ(H+τI)(v−u)` via a Cholesky of the reduced Hessian and, when the ball
//!    binds, the Lagrange multiplier `μ` of the trust-region subproblem (Moré–Sorensen). A raw
//!    Newton step is never projected. `τ > 0` only when `H` is indefinite (`mle-rr`) or
//!    numerically singular (modified Cholesky by shifting; counted in the report);
//! 3. Armijo backtracking along `s = U(v − u)` (feasible for all step lengths in `[0, 1]`),
//!    each trial O(n) from the cached scores and `Xs`; a full step whose decrease beats the
//!    model's `−(gᵀs + ½sᵀHs)` by 10 % is doubled along the projection arc `Π(θ + αs)` while
//!    `F` falls (the exponential tail of separable data, where Newton steps have the constant
//!    length `1/‖x‖`; as in [`super::newton_cg`]);
//! 4. stop when the Newton step is negligible (`‖s‖ ≤ 1e-8·max(1,‖θ‖)`, or Newton decrement
//!    `−gᵀs ≤ 1e-20|F|` with `‖s‖ ≤ 1e-3·max(1,‖θ‖)`: the rounding floor of an ill-conditioned
//!    problem) at a point that meets the relative KKT test ([`super::certificate`]) with the
//!    term magnitudes of the last certified point;
//! 5. iterative refinement: the gradient is recomputed as if in doubled precision
//!    ([`SecondOrderObjective::value_grad_compensated`]) and corrected with the factored Hessian, for up to
//!    three rounds while the corrections shrink. This removes the error that rounding in `xᵀθ`
//!    causes on ill-conditioned problems (large `‖θ‖`, nearly collinear columns);
//! 6. the certificate at the refined point, with the term magnitudes recomputed there and the
//!    doubled-precision gradient: [`Termination::Converged`] if it meets the tolerance; else
//!    the iterations go on, and three negligible steps in a row that do not meet it end the run
//!    with [`Termination::PrecisionLimit`]. The reported objective, certificate and `θ` are the
//!    refined ones.
//!
//! Without a norm bound, a minimiser may not exist. The solver ends with
//! [`Termination::NoMinimizer`] when the recession slope at the iterate is negative (for a
//! convex loss, `F(rθ)/r → F∞(θ) < 0` proves `F` unbounded below along the ray — see
//! [`Loss::recession`](crate::loss::Loss::recession)), when `‖θ‖` exceeds
//! [`Control::norm_cap`], or when, at points that meet the cheap KKT test, five consecutive Newton steps keep the same direction
//! without shrinking to negligible (the objective is flat-decreasing along a recession direction,
//! as on separable data).

use super::certificate::Kkt;
use super::dense::newton_subproblem;
use super::first_order::{beats_model, doubled_step};
use super::run::Run;
use super::{all_finite, dot, memory, Control, SolveReport, Termination};
use crate::error::{Error, Result};
use crate::feasible::{helmert, norm, FeasibleSet};
use crate::objective::{Eval, SecondOrderObjective};

/// A step is negligible below this size relative to `max(1, ‖θ‖)`.
const STEP_TOL: f64 = 1e-8;
/// A step at the rounding floor of `F` counts as negligible only below this relative size.
const STALL_STEP: f64 = 1e-3;
/// Rounds of iterative refinement with the compensated gradient after convergence.
const REFINE_ROUNDS: usize = 3;
/// Without a norm bound, steps longer than this times `max(1, ‖θ‖)` are shortened.
const MAX_STEP: f64 = 1e3;
/// Armijo sufficient-decrease constant.
const ARMIJO: f64 = 1e-4;
/// Consecutive aligned non-negligible steps at a KKT point that signal a recession direction.
const RECESSION_STEPS: usize = 5;
/// Consecutive negligible steps at points that do not meet the certificate after which the run
/// ends with [`Termination::PrecisionLimit`].
const STALL_LIMIT: usize = 3;

/// Minimises `obj` over `set` by exact projected Newton from `theta0` (projected onto the set;
/// default 0). See the module docs. `Err` only for invalid input.
pub fn solve<O: SecondOrderObjective>(
    obj: &O,
    set: &FeasibleSet,
    theta0: Option<&[f64]>,
    ctl: &Control,
) -> Result<SolveReport> {
    if !obj.dense_hessian_available() {
        return Err(Error::param(
            "solver",
            "dense Newton needs whole Hessian chunks on every process, and these rows are distributed for the Hessian-free solvers: use lbfgs or newton-cg, or PairwiseView::distributed",
        ));
    }
    let d = obj.dim();
    let mut h = dense_hessian_buffer(obj.num_scores(), d, ctl)?;
    let (run, h_fresh) = Run::start("newton", obj, set, theta0, ctl, ctl.max_iter, |th, ev, rep| {
        fused_evaluation(obj, th, ev, &mut h, rep)
    })?;
    let mut newton = Newton::new(run, h, h_fresh);
    let termination = newton.iterate();
    Ok(newton.finish(termination))
}

/// What to use instead of dense Newton when its `d × d` matrices do not fit.
pub const MEMORY_ALTERNATIVE: &str = "use --solver lbfgs (or newton-cg), which need O(n + d) memory";

/// The planned peak bytes of a run on `n` scores in dimension `d` with the threads of
/// `ctl.par` ([`memory::newton_bytes`]).
pub fn planned_bytes(n: usize, d: usize, ctl: &Control) -> u64 {
    let threads = match ctl.par {
        crate::par::Par::Seq => 1,
        _ => rayon::current_num_threads(),
    };
    memory::newton_bytes(n, d, threads)
}

/// Whether a run on `n` scores in dimension `d` fits within [`Control::memory_limit`].
pub fn fits(n: usize, d: usize, ctl: &Control) -> bool {
    ctl.memory_limit.fits(planned_bytes(n, d, ctl))
}

/// The zeroed `d × d` Hessian of a run on `n` scores, after checking the run's planned peak
/// ([`memory::newton_bytes`]) against [`Control::memory_limit`].
///
/// # Errors
/// [`Error::MemoryLimit`] when the plan exceeds the limit or the system refuses the buffer.
fn dense_hessian_buffer(n: usize, d: usize, ctl: &Control) -> Result<Vec<f64>> {
    let what = || format!("newton (its {d} × {d} Hessian and factors)");
    ctl.memory_limit
        .check(what, planned_bytes(n, d, ctl), MEMORY_ALTERNATIVE)?;
    let len = d.checked_mul(d).ok_or_else(|| Error::MemoryLimit {
        what: what(),
        needed: u64::MAX,
        limit: memory::available_memory().unwrap_or(0),
        limit_from: "addressable by the process",
        alternative: MEMORY_ALTERNATIVE.to_string(),
    })?;
    memory::try_zeros(len, what, MEMORY_ALTERNATIVE)
}

/// Value, gradient and (when the objective shares the pass over `X`) the Hessian at a new
/// iterate. Returns whether `h` now holds the Hessian there.
fn fused_evaluation<O: SecondOrderObjective>(
    obj: &O,
    theta: &[f64],
    ev: &mut Eval,
    h: &mut [f64],
    rep: &mut SolveReport,
) -> bool {
    rep.counts.grad_evals += 1;
    if obj.fused_hessian() {
        rep.detail.negative_curvature_rows = obj.evaluate_with_hessian(theta, ev, h);
        rep.counts.hessian_evals += 1;
        rep.counts.fused_evals += 1;
        true
    } else {
        obj.evaluate(theta, ev);
        false
    }
}

/// What an iteration step tells the loop.
enum Flow {
    /// Go on with the next iteration.
    Next,
    /// End the run.
    Stop(Termination),
}

/// The Newton step of an iteration, in both coordinate systems.
struct Step {
    /// The step's size in the column-scaled norm ([`super::scales`]).
    norm: f64,
    /// Its Euclidean length in reduced coordinates.
    len: f64,
    /// The Newton decrement `−gᵀp`.
    decrement: f64,
    /// The decrease the quadratic model predicts, `−(gᵀp + ½pᵀHp)` (unshifted `H`).
    predicted: f64,
}

/// The state of a projected Newton run (module docs).
struct Newton<'a, O> {
    run: Run<'a, O>,
    d: usize,
    /// Reduced dimension (`d − 1` under sum-zero).
    m: usize,
    sz: bool,
    radius: Option<f64>,
    /// The Hessian, and whether it is the one at `run.ev`'s point.
    h: Vec<f64>,
    h_fresh: bool,
    /// Reduced Hessian, gradient and point.
    hr: Vec<f64>,
    gr: Vec<f64>,
    ur: Vec<f64>,
    /// The step in full coordinates and its scores.
    s: Vec<f64>,
    xs: Vec<f64>,
    prev_step: Option<Vec<f64>>,
    flat_steps: usize,
    /// A line search that cannot progress at a point meeting the cheap test sends it to the
    /// certification; negligible steps that do not meet the certificate end the run.
    force_certify: bool,
    stalled: usize,
    /// The certificate and objective of the returned point, when computed with fresh term
    /// magnitudes.
    certified: Option<(Kkt, f64)>,
}

impl<'a, O: SecondOrderObjective> Newton<'a, O> {
    fn new(run: Run<'a, O>, h: Vec<f64>, h_fresh: bool) -> Self {
        let d = run.obj.dim();
        let sz = run.set.sum_zero();
        let m = if sz { d - 1 } else { d };
        let radius = run.set.radius();
        let xs = vec![0.0; run.obj.num_scores()];
        Newton {
            run,
            d,
            m,
            sz,
            radius,
            h,
            h_fresh,
            hr: vec![0.0; m * m],
            gr: vec![0.0; m],
            ur: vec![0.0; m],
            s: vec![0.0; d],
            xs,
            prev_step: None,
            flat_steps: 0,
            force_certify: false,
            stalled: 0,
            certified: None,
        }
    }

    /// The iterations, until a termination.
    fn iterate(&mut self) -> Termination {
        loop {
            if let Flow::Stop(t) = self.iteration() {
                return t;
            }
        }
    }

    /// One iteration: the checks at the current point, the Newton step, and either the final
    /// refinement (a negligible step at a KKT point) or the line search.
    fn iteration(&mut self) -> Flow {
        if !all_finite(&self.run.ev) {
            return Flow::Stop(Termination::NonFinite);
        }
        let est = self.run.estimate();
        let mut at_kkt = self.run.cert.meets(&est);
        self.report_progress(est.relative);
        if self.m == 0 {
            // d = 1 under sum-zero: the feasible set is {0}.
            let k = self.run.certify_here();
            let ok = self.run.cert.meets(&k);
            self.certified = Some((k, self.run.ev.value));
            return Flow::Stop(if ok {
                Termination::Converged
            } else {
                Termination::PrecisionLimit
            });
        }
        if let Some(t) = self.run.ctl.stop_requested() {
            return Flow::Stop(t);
        }
        // Without a ball: a certificate of unboundedness (convex losses only).
        if self.radius.is_none() && O::CONVEX {
            if let Some((slope, size)) = self.run.obj.recession_slope(&self.run.ev) {
                if slope < -1e-10 * size {
                    return Flow::Stop(Termination::NoMinimizer);
                }
            }
        }
        let step = match self.newton_step() {
            Some(step) => step,
            // No shift makes the Hessian positive definite: it is not finite.
            None => return Flow::Stop(Termination::NonFinite),
        };
        // Negligible step: tiny, or at the rounding floor of F (the Newton decrement is below
        // 1e-20·|F| while the step is still small — a large step with a vanishing decrement is
        // the flat direction of a problem without a minimiser, handled below).
        let scale = self.run.cols.size(&self.run.theta);
        let negligible = std::mem::take(&mut self.force_certify)
            || step.norm <= STEP_TOL * scale
            || (step.decrement <= 1e-20 * self.run.ev.value.abs() && step.norm <= STALL_STEP * scale);
        if negligible && !at_kkt {
            // The cheap test uses the term magnitudes of an earlier point: recheck with fresh
            // ones before taking the step as a stall.
            let k = self.run.certify_here();
            at_kkt = self.run.cert.meets(&k);
            if !at_kkt {
                self.stalled += 1;
                if self.stalled >= STALL_LIMIT {
                    return Flow::Stop(Termination::PrecisionLimit);
                }
            }
        } else if !negligible {
            self.stalled = 0;
        }
        if at_kkt && negligible {
            return self.refine_and_certify();
        }
        if self.run.rep.counts.iterations >= self.run.ctl.max_iter {
            return Flow::Stop(Termination::MaxIterations);
        }
        if self.radius.is_none() && self.recession_detected(at_kkt, step.len) {
            return Flow::Stop(Termination::NoMinimizer);
        }
        // Without a ball, a (numerically) flat Hessian can give an absurdly long step that
        // jumps past every kink of the loss: cap its length (the direction is kept).
        if self.radius.is_none() {
            let cap = MAX_STEP * scale;
            if step.norm > cap {
                let f = cap / step.norm;
                self.s.iter_mut().for_each(|v| *v *= f);
            }
        }
        self.line_search(at_kkt, est.relative, &step, scale)
    }

    fn report_progress(&self, kkt: f64) {
        let run = &self.run;
        if run.ctl.wants_progress(run.rep.counts.iterations) {
            run.ctl.notify_progress(&super::Progress {
                solver: "newton",
                iteration: run.rep.counts.iterations,
                budget: run.ctl.max_iter,
                objective: run.ev.value,
                kkt_residual: kkt,
                data_passes: Some(run.rep.data_passes()),
                theta: &run.theta,
            });
        }
    }

    /// The Newton model in reduced coordinates, minimised over the ball; the step into `s`.
    /// `None` when no shift makes the Hessian positive definite (it is not finite).
    fn newton_step(&mut self) -> Option<Step> {
        let (d, run) = (self.d, &mut self.run);
        if !self.h_fresh {
            run.rep.detail.negative_curvature_rows = run.obj.hessian_into(&run.ev, &mut self.h);
            run.rep.counts.hessian_evals += 1;
        }
        self.h_fresh = false;
        if self.sz {
            helmert::reduce(&self.h, d, &mut self.hr);
            helmert::apply_t(&run.ev.grad, &mut self.gr);
            helmert::apply_t(&run.theta, &mut self.ur);
        } else {
            self.hr.copy_from_slice(&self.h);
            self.gr.copy_from_slice(&run.ev.grad);
            self.ur.copy_from_slice(&run.theta);
        }
        let step = newton_subproblem(&self.hr, self.m, &self.gr, &self.ur, self.radius)?;
        if step.shift > 0.0 {
            run.rep.detail.hessian_shifts += 1;
            run.rep.detail.max_shift = run.rep.detail.max_shift.max(step.shift);
        }
        let p = step.p;
        if self.sz {
            helmert::apply(&p, &mut self.s);
        } else {
            self.s.copy_from_slice(&p);
        }
        // Sizes in the column-scaled norm (the units of the scores); the Euclidean length for
        // the direction tests.
        let len = norm(&p);
        run.rep.detail.last_step_norm = len;
        let m = self.m;
        let php: f64 = (0..m).map(|j| p[j] * dot(&self.hr[j * m..(j + 1) * m], &p)).sum();
        let decrement = -dot(&self.gr, &p);
        Some(Step {
            norm: run.cols.norm(&self.s),
            len,
            decrement,
            predicted: decrement - 0.5 * php,
        })
    }

    /// Without a ball: at KKT points, consecutive Newton steps that keep the same direction
    /// without shrinking to negligible signal a recession direction (as on separable data).
    fn recession_detected(&mut self, at_kkt: bool, step_len: f64) -> bool {
        if !at_kkt {
            self.flat_steps = 0;
            return false;
        }
        let aligned = self.prev_step.as_ref().is_some_and(|q| {
            let c = dot(q, &self.s) / (norm(q) * step_len).max(f64::MIN_POSITIVE);
            c > 0.9
        });
        self.flat_steps = if aligned { self.flat_steps + 1 } else { 1 };
        self.flat_steps >= RECESSION_STEPS
    }

    /// Iterative refinement (module docs, step 5) at a KKT point with a negligible step, then
    /// the certificate at the refined point with fresh term magnitudes.
    fn refine_and_certify(&mut self) -> Flow {
        let (gc, fc) = self.refine();
        // The certificate at the refined point: its scores (one pass, if refinement moved it),
        // then the term magnitudes there (one pass), with the accurate gradient.
        let run = &mut self.run;
        if run.ev.theta != run.theta {
            let theta = std::mem::take(&mut run.theta);
            run.move_to(theta);
            self.h_fresh = false;
        }
        let k = run.certify(&gc);
        if run.cert.meets(&k) {
            run.ev.value = fc;
            run.ev.grad.copy_from_slice(&gc);
            self.certified = Some((k, fc));
            return Flow::Stop(Termination::Converged);
        }
        // The cheap test passed with the term magnitudes of an earlier point; with the fresh
        // ones it does not: keep iterating (a stall ends the run).
        self.stalled += 1;
        if self.stalled >= STALL_LIMIT {
            return Flow::Stop(Termination::PrecisionLimit);
        }
        if run.rep.counts.iterations >= run.ctl.max_iter {
            return Flow::Stop(Termination::MaxIterations);
        }
        Flow::Next
    }

    /// The refinement rounds: the gradient in doubled precision, the correction from the
    /// Hessian already factored. The correction estimates the remaining error in θ, so a round
    /// is kept only while corrections shrink (the KKT norm is no guide here: it can be
    /// dominated by the gradient's resolution floor along stiff directions). Moves `theta`;
    /// returns the compensated gradient and objective there.
    fn refine(&mut self) -> (Vec<f64>, f64) {
        let (d, m, sz, radius) = (self.d, self.m, self.sz, self.radius);
        let run = &mut self.run;
        let mut gc = vec![0.0; d];
        let mut fc = run.obj.value_grad_compensated(&run.theta, &mut gc);
        run.rep.counts.compensated_evals += 1;
        let mut gcr = vec![0.0; m];
        let mut s_ref = vec![0.0; d];
        let mut gn = vec![0.0; d];
        let mut last: Option<(Vec<f64>, f64, Vec<f64>, f64)> = None; // previous (θ, F, ∇F, ‖δ‖)
        for _ in 0..=REFINE_ROUNDS {
            if sz {
                helmert::apply_t(&gc, &mut gcr);
                helmert::apply_t(&run.theta, &mut self.ur);
            } else {
                gcr.copy_from_slice(&gc);
                self.ur.copy_from_slice(&run.theta);
            }
            let Some(corr) = newton_subproblem(&self.hr, m, &gcr, &self.ur, radius) else {
                break;
            };
            let delta = corr.p;
            let dn = norm(&delta);
            if let Some((pt, pf, pg, pdn)) = last.take() {
                if !(dn < pdn) {
                    // No progress: return to the previous point.
                    run.theta = pt;
                    fc = pf;
                    gc = pg;
                    run.rep.counts.refinement_steps -= 1;
                    break;
                }
            }
            if dn <= 4.0 * f64::EPSILON * norm(&run.theta) || run.rep.counts.refinement_steps == REFINE_ROUNDS {
                break;
            }
            if sz {
                helmert::apply(&delta, &mut s_ref);
            } else {
                s_ref.copy_from_slice(&delta);
            }
            let mut th = run.theta.clone();
            th.iter_mut().zip(&s_ref).for_each(|(t, v)| *t += v);
            run.set.project(&mut th);
            let fnew = run.obj.value_grad_compensated(&th, &mut gn);
            run.rep.counts.compensated_evals += 1;
            if !fnew.is_finite() || gn.iter().any(|g| !g.is_finite()) {
                break;
            }
            last = Some((std::mem::replace(&mut run.theta, th), fc, gc.clone(), dn));
            std::mem::swap(&mut gc, &mut gn);
            fc = fnew;
            run.rep.counts.refinement_steps += 1;
        }
        (gc, fc)
    }

    /// Armijo backtracking along `s` (O(n) per trial from the cached scores), the local-regime
    /// acceptance of a full step that reduces the KKT residual, and the move to the new point.
    fn line_search(&mut self, at_kkt: bool, kkt: f64, step: &Step, scale: f64) -> Flow {
        let step_norm = step.norm;
        let run = &mut self.run;
        let (obj, s) = (run.obj, &mut self.s);
        obj.direction_scores(s, &mut self.xs);
        run.rep.counts.direction_passes += 1;
        let slope = dot(&run.ev.grad, s);
        // A tiny step on the sphere can have a computed slope ≥ 0 from rounding alone (the
        // radial part of `u` is known only to ~1e-16·B, and μ times that can exceed the true
        // slope −pᵀHp). Then only the full step is tried, under the rounding allowance.
        // (Reached on the demo grid; `tests/experiments.rs` pins such cases.)
        let rounding_limited = !(slope < 0.0);
        if rounding_limited && step_norm > STALL_STEP * scale {
            return self.cannot_progress(at_kkt);
        }
        let slope = slope.min(0.0);
        let f0 = run.ev.value;
        let mut alpha = 1.0f64;
        let mut accepted = false;
        let tries = if rounding_limited { 1 } else { 80 };
        for _ in 0..tries {
            let fa = obj.line_value(&run.ev, s, &self.xs, alpha);
            run.rep.counts.line_search_evals += 1;
            let noise = 8.0 * f64::EPSILON * (f0.abs() + fa.abs());
            if fa.is_finite() && fa <= f0 + ARMIJO * alpha * slope + noise {
                accepted = true;
                // A full step that beat the model's decrease `−(gᵀs + ½sᵀHs)`: the exponential
                // tail of separable data, where Newton steps have a constant length
                // ([`super::newton_cg`]'s extended steps).
                if alpha == 1.0 && !rounding_limited && beats_model(f0, fa, step.predicted) {
                    let a = doubled_step(obj, run.set, &run.ev, s, &self.xs, fa, &mut run.rep);
                    if a > 1.0 {
                        alpha = a;
                        run.rep.detail.extended_steps += 1;
                    }
                }
                break;
            }
            // Safeguarded quadratic interpolation.
            let next = if fa.is_finite() {
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
        }
        // Local regime: when the full Newton step was rejected (or cut) only because its
        // decrease lies below the rounding level of F — common when F is a small difference of
        // large terms, e.g. a loss plus a noise term ⟨b, θ⟩, or the debiased loss at small ε,
        // whose summands are large and of both signs — accept the full step if it reduces the
        // KKT residual (a gradient test, free of F's cancellation). This also covers a search
        // that accepted no step at all (reached at ε = 0.1 on the `fig1` grid).
        if (!accepted || alpha < 1.0) && !at_kkt && step_norm <= STALL_STEP * scale && self.try_full_step(kkt) {
            return Flow::Next;
        }
        if !accepted {
            return self.cannot_progress(at_kkt);
        }
        let run = &mut self.run;
        let mut th = run.theta.clone();
        th.iter_mut().zip(&self.s).for_each(|(t, v)| *t = alpha.mul_add(*v, *t));
        run.set.project(&mut th);
        self.h_fresh = fused_evaluation(run.obj, &th, &mut run.ev, &mut self.h, &mut run.rep);
        run.theta = th;
        run.rep.counts.iterations += 1;
        if self.radius.is_none() && run.cols.norm(&run.theta) > run.ctl.norm_cap {
            return Flow::Stop(Termination::NoMinimizer);
        }
        let mut sa = self.s.clone();
        sa.iter_mut().for_each(|v| *v *= alpha);
        self.prev_step = Some(sa);
        Flow::Next
    }

    /// A line search that cannot progress: at a point meeting the cheap test, go to the
    /// certification; otherwise the run fails.
    fn cannot_progress(&mut self, at_kkt: bool) -> Flow {
        if at_kkt {
            self.force_certify = true;
            Flow::Next
        } else {
            Flow::Stop(Termination::LineSearchFailed)
        }
    }

    /// Takes the full step `s` if it halves the relative KKT residual `kkt` (the local regime
    /// of [`Newton::line_search`]).
    fn try_full_step(&mut self, kkt: f64) -> bool {
        let run = &mut self.run;
        let mut full = run.theta.clone();
        full.iter_mut().zip(&self.s).for_each(|(t, v)| *t += v);
        run.set.project(&mut full);
        let mut trial = run.obj.new_eval();
        run.obj.evaluate(&full, &mut trial);
        run.rep.counts.grad_evals += 1;
        if all_finite(&trial) && run.cert.estimate(run.set, &full, &trial.grad).relative < 0.5 * kkt {
            run.ev = trial;
            run.theta = full;
            run.rep.counts.iterations += 1;
            self.prev_step = Some(self.s.clone());
            return true;
        }
        false
    }

    /// The report. Without a certificate from convergence, the last iterate is certified with
    /// the doubled-precision gradient, as at convergence.
    fn finish(mut self, termination: Termination) -> SolveReport {
        let run = &mut self.run;
        if self.certified.is_none() && all_finite(&run.ev) && run.ev.theta == run.theta {
            let mut gc = vec![0.0; self.d];
            let fc = run.obj.value_grad_compensated(&run.theta, &mut gc);
            run.rep.counts.compensated_evals += 1;
            if fc.is_finite() && gc.iter().all(|g| g.is_finite()) {
                self.certified = Some((run.certify(&gc), fc));
            }
        }
        self.run.finish(termination, self.certified)
    }
}

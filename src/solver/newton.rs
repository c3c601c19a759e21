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
//!    each trial O(n) from the cached scores and `Xs`;
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

use super::certificate::{Certifier, Kkt};
use super::dense::newton_subproblem;
use super::scales::ColumnScales;
use super::{all_finite, dot, Control, SolveReport, Termination};
use crate::error::{Error, Result};
use crate::feasible::{helmert, norm, FeasibleSet};
use crate::objective::{Eval, SecondOrderObjective};
use std::time::Instant;

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
    ctl.validate()?;
    let start = Instant::now();
    let d = obj.dim();
    let n = obj.num_samples();
    super::check_theta0(theta0, d)?;
    let sz = set.sum_zero();
    let m = if sz { d - 1 } else { d };
    let radius = set.radius();

    let mut rep = SolveReport::blank("newton", vec![0.0; d], Termination::MaxIterations);

    let mut theta = theta0.map(<[f64]>::to_vec).unwrap_or_else(|| vec![0.0; d]);
    set.project(&mut theta);
    let start_at_zero = theta.iter().all(|&v| v == 0.0);
    let mut h = vec![0.0; d * d];
    // Whether `h` holds the Hessian at `ev`'s point (computed by a fused pass with it).
    let mut h_fresh;
    // Value, gradient and (when the pass over X is shared) Hessian at a new iterate.
    let eval_iterate = |th: &[f64], ev: &mut Eval, h: &mut [f64], rep: &mut SolveReport| -> bool {
        rep.grad_evals += 1;
        if obj.fused_hessian() {
            rep.negative_curvature_rows = obj.evaluate_with_hessian(th, ev, h);
            rep.hessian_evals += 1;
            rep.fused_evals += 1;
            true
        } else {
            obj.evaluate(th, ev);
            false
        }
    };

    let mut ev = obj.new_eval();
    h_fresh = eval_iterate(&theta, &mut ev, &mut h, &mut rep);
    if !all_finite(&ev) {
        return Err(Error::Numerical(format!(
            "the objective or its gradient is not finite at the starting point θ{}",
            if start_at_zero { " = 0" } else { "₀" }
        )));
    }
    let mut cert = Certifier::new(obj, &ev, ctl, &mut rep);
    let cols = ColumnScales::of(obj, &mut rep);

    let mut hr = vec![0.0; m * m];
    let mut gr = vec![0.0; m];
    let mut ur = vec![0.0; m];
    let mut s = vec![0.0; d];
    let mut xs = vec![0.0; obj.num_scores()];
    let mut prev_step: Option<Vec<f64>> = None;
    let mut flat_steps = 0usize;
    // A line search that cannot progress at a point meeting the cheap test sends it to the
    // certification below; negligible steps that do not meet the certificate end the run.
    let mut force_certify = false;
    let mut stalled = 0usize;
    // The certificate of the returned point, when it was computed with fresh term magnitudes.
    let mut certified: Option<Kkt> = None;
    ctl.notify_start("newton", n, d, ctl.max_iter);

    let termination = loop {
        if !all_finite(&ev) {
            break Termination::NonFinite;
        }
        let est = cert.estimate(set, &theta, &ev.grad);
        let at_kkt = cert.meets(&est);
        if ctl.wants_progress(rep.iterations) {
            ctl.notify_progress(&super::Progress {
                solver: "newton",
                iteration: rep.iterations,
                budget: ctl.max_iter,
                objective: ev.value,
                kkt_residual: est.relative,
                theta: &theta,
            });
        }
        if m == 0 {
            // d = 1 under sum-zero: the feasible set is {0}.
            let k = cert.certify(obj, set, &ev, &ev.grad, &mut rep);
            let ok = cert.meets(&k);
            certified = Some(k);
            break if ok {
                Termination::Converged
            } else {
                Termination::PrecisionLimit
            };
        }
        if let Some(t) = ctl.stop_requested() {
            break t;
        }
        // Without a ball: a certificate of unboundedness (convex losses only).
        if radius.is_none() && O::CONVEX {
            if let Some((slope, size)) = obj.recession_slope(&ev) {
                if slope < -1e-10 * size {
                    break Termination::NoMinimizer;
                }
            }
        }
        // Newton model in reduced coordinates.
        if !h_fresh {
            rep.negative_curvature_rows = obj.hessian_into(&ev, &mut h);
            rep.hessian_evals += 1;
        }
        h_fresh = false;
        if sz {
            helmert::reduce(&h, d, &mut hr);
            helmert::apply_t(&ev.grad, &mut gr);
            helmert::apply_t(&theta, &mut ur);
        } else {
            hr.copy_from_slice(&h);
            gr.copy_from_slice(&ev.grad);
            ur.copy_from_slice(&theta);
        }
        let Some(step) = newton_subproblem(&hr, m, &gr, &ur, radius) else {
            // No shift makes the Hessian positive definite: it is not finite.
            break Termination::NonFinite;
        };
        if step.shift > 0.0 {
            rep.hessian_shifts += 1;
            rep.max_shift = rep.max_shift.max(step.shift);
        }
        let p = step.p;
        if sz {
            helmert::apply(&p, &mut s);
        } else {
            s.copy_from_slice(&p);
        }
        // Sizes in the column-scaled norm (the units of the scores, [`super::scales`]); the
        // Euclidean length for the direction tests below.
        let step_norm = cols.norm(&s);
        let step_len = norm(&p);
        let decrement = -dot(&gr, &p);
        rep.last_step_norm = step_len;
        // Negligible step: tiny, or at the rounding floor of F (the Newton decrement is below
        // 1e-20·|F| while the step is still small — a large step with a vanishing decrement is
        // the flat direction of a problem without a minimiser, handled below).
        let scale = cols.size(&theta);
        let negligible = std::mem::take(&mut force_certify)
            || step_norm <= STEP_TOL * scale
            || (decrement <= 1e-20 * ev.value.abs() && step_norm <= STALL_STEP * scale);
        let mut at_kkt = at_kkt;
        if negligible && !at_kkt {
            // The cheap test uses the term magnitudes of an earlier point: recheck with fresh
            // ones before taking the step as a stall.
            let k = cert.certify(obj, set, &ev, &ev.grad, &mut rep);
            at_kkt = cert.meets(&k);
            if !at_kkt {
                stalled += 1;
                if stalled >= STALL_LIMIT {
                    break Termination::PrecisionLimit;
                }
            }
        } else if !negligible {
            stalled = 0;
        }
        if at_kkt && negligible {
            // Iterative refinement: the gradient in doubled precision, the correction from the
            // Hessian already factored. The correction estimates the remaining error in θ, so a
            // round is kept only while corrections shrink (the KKT norm is no guide here: it
            // can be dominated by the gradient's resolution floor along stiff directions).
            let mut gc = vec![0.0; d];
            let mut fc = obj.value_grad_compensated(&theta, &mut gc);
            rep.compensated_evals += 1;
            let mut gcr = vec![0.0; m];
            let mut s_ref = vec![0.0; d];
            let mut gn = vec![0.0; d];
            let mut last: Option<(Vec<f64>, f64, Vec<f64>, f64)> = None; // previous (θ, F, ∇F, ‖δ‖)
            for _ in 0..=REFINE_ROUNDS {
                if sz {
                    helmert::apply_t(&gc, &mut gcr);
                    helmert::apply_t(&theta, &mut ur);
                } else {
                    gcr.copy_from_slice(&gc);
                    ur.copy_from_slice(&theta);
                }
                let Some(corr) = newton_subproblem(&hr, m, &gcr, &ur, radius) else {
                    break;
                };
                let delta = corr.p;
                let dn = norm(&delta);
                if let Some((pt, pf, pg, pdn)) = last.take() {
                    if !(dn < pdn) {
                        // No progress: return to the previous point.
                        theta = pt;
                        fc = pf;
                        gc = pg;
                        rep.refinement_steps -= 1;
                        break;
                    }
                }
                if dn <= 4.0 * f64::EPSILON * norm(&theta) || rep.refinement_steps == REFINE_ROUNDS {
                    break;
                }
                if sz {
                    helmert::apply(&delta, &mut s_ref);
                } else {
                    s_ref.copy_from_slice(&delta);
                }
                let mut th = theta.clone();
                th.iter_mut().zip(&s_ref).for_each(|(t, v)| *t += v);
                set.project(&mut th);
                let fnew = obj.value_grad_compensated(&th, &mut gn);
                rep.compensated_evals += 1;
                if !fnew.is_finite() || gn.iter().any(|g| !g.is_finite()) {
                    break;
                }
                last = Some((std::mem::replace(&mut theta, th), fc, gc.clone(), dn));
                std::mem::swap(&mut gc, &mut gn);
                fc = fnew;
                rep.refinement_steps += 1;
            }
            // The certificate at the refined point: its scores (one pass, if refinement moved
            // it), then the term magnitudes there (one pass), with the accurate gradient.
            if ev.theta != theta {
                cert.evaluate(obj, &theta, &mut ev, &mut rep);
                h_fresh = false;
            }
            let k = cert.certify(obj, set, &ev, &gc, &mut rep);
            if cert.meets(&k) {
                ev.value = fc;
                ev.grad.copy_from_slice(&gc);
                certified = Some(k);
                break Termination::Converged;
            }
            // The cheap test passed with the term magnitudes of an earlier point; with the
            // fresh ones it does not: keep iterating (a stall ends the run above).
            stalled += 1;
            if stalled >= STALL_LIMIT {
                break Termination::PrecisionLimit;
            }
            if rep.iterations >= ctl.max_iter {
                break Termination::MaxIterations;
            }
            continue;
        }
        if rep.iterations >= ctl.max_iter {
            break Termination::MaxIterations;
        }
        if radius.is_none() {
            if at_kkt {
                let aligned = prev_step.as_ref().is_some_and(|q| {
                    let c = dot(q, &s) / (norm(q) * step_len).max(f64::MIN_POSITIVE);
                    c > 0.9
                });
                flat_steps = if aligned { flat_steps + 1 } else { 1 };
                if flat_steps >= RECESSION_STEPS {
                    break Termination::NoMinimizer;
                }
            } else {
                flat_steps = 0;
            }
        }

        // Without a ball, a (numerically) flat Hessian can give an absurdly long step that
        // jumps past every kink of the loss: cap its length (the direction is kept).
        if radius.is_none() {
            let cap = MAX_STEP * scale;
            if step_norm > cap {
                let f = cap / step_norm;
                s.iter_mut().for_each(|v| *v *= f);
            }
        }

        // Line search along s, O(n) per trial.
        obj.direction_scores(&s, &mut xs);
        rep.direction_passes += 1;
        let slope = dot(&ev.grad, &s);
        // A tiny step on the sphere can have a computed slope ≥ 0 from rounding alone (the
        // radial part of `u` is known only to ~1e-16·B, and μ times that can exceed the true
        // slope −pᵀHp). Then only the full step is tried, under the rounding allowance.
        // (Reached on the demo grid; `tests/experiments.rs` pins such cases.)
        let rounding_limited = !(slope < 0.0);
        if rounding_limited && step_norm > STALL_STEP * scale {
            if at_kkt {
                force_certify = true;
                continue;
            }
            break Termination::LineSearchFailed;
        }
        let slope = slope.min(0.0);
        let f0 = ev.value;
        let mut alpha = 1.0f64;
        let mut accepted = false;
        let tries = if rounding_limited { 1 } else { 80 };
        for _ in 0..tries {
            let fa = obj.line_value(&ev, &s, &xs, alpha);
            rep.line_search_evals += 1;
            let noise = 8.0 * f64::EPSILON * (f0.abs() + fa.abs());
            if fa.is_finite() && fa <= f0 + ARMIJO * alpha * slope + noise {
                accepted = true;
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
        if (!accepted || alpha < 1.0) && !at_kkt && step_norm <= STALL_STEP * scale {
            let mut full = theta.clone();
            full.iter_mut().zip(&s).for_each(|(t, v)| *t += v);
            set.project(&mut full);
            let mut trial = obj.new_eval();
            obj.evaluate(&full, &mut trial);
            rep.grad_evals += 1;
            if all_finite(&trial) && cert.estimate(set, &full, &trial.grad).relative < 0.5 * est.relative {
                ev = trial;
                theta = full;
                rep.iterations += 1;
                prev_step = Some(s.clone());
                continue;
            }
        }
        if !accepted {
            if at_kkt {
                force_certify = true;
                continue;
            }
            break Termination::LineSearchFailed;
        }
        let mut th = theta.clone();
        th.iter_mut().zip(&s).for_each(|(t, v)| *t = alpha.mul_add(*v, *t));
        set.project(&mut th);
        h_fresh = eval_iterate(&th, &mut ev, &mut h, &mut rep);
        theta = th;
        rep.iterations += 1;
        if radius.is_none() && cols.norm(&theta) > ctl.norm_cap {
            break Termination::NoMinimizer;
        }
        let mut sa = s.clone();
        sa.iter_mut().for_each(|v| *v *= alpha);
        prev_step = Some(sa);
    };

    rep.termination = termination;
    rep.objective = ev.value;
    // The reported certificate: the one computed at convergence, else the residual at the last
    // iterate with the term magnitudes recomputed there (when its evaluation is finite).
    let k = match certified {
        Some(k) => k,
        None if all_finite(&ev) && ev.theta == theta => {
            // With the doubled-precision gradient, as at convergence.
            let mut gc = vec![0.0; d];
            let fc = obj.value_grad_compensated(&theta, &mut gc);
            rep.compensated_evals += 1;
            if fc.is_finite() && gc.iter().all(|g| g.is_finite()) {
                rep.objective = fc;
                cert.certify(obj, set, &ev, &gc, &mut rep)
            } else {
                cert.certify(obj, set, &ev, &ev.grad, &mut rep)
            }
        }
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

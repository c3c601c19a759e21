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
//! [`SolveReport::hessian_shifts`] and [`SolveReport::max_shift`]); after 30 raises the step is
//! the CG iterate so far, or `−g` (the safeguard of Alg. 7.1). Directions of non-positive
//! curvature (the non-convex `mle-rr`) are counted in
//! [`SolveReport::negative_curvature_directions`].
//!
//! **Forcing.** `η = min(0.5, √κ)`, `κ` the relative KKT residual ([`super::certificate`];
//! scale-free; superlinear local convergence,
//! Dembo–Eisenstat–Steihaug), at most `min(1000, max(10, 2m))` CG iterations per step.
//!
//! **Safeguards.** Every step is accepted by the Armijo rule along the projection arc
//! (the arc search of L-BFGS: the unit step is one value+gradient pass, backtracking O(n) per
//! trial from the direction's scores); a CG direction that is not gradient-related
//! (`cos∠(p, −g_w) < 1e-8`) or along which the search fails is replaced by the projected
//! gradient, as in L-BFGS. So Newton-CG converges wherever projected gradient does, and is a
//! Newton method near a minimiser.
//!
//! **Stopping** is Newton's and L-BFGS's relative KKT criterion ([`super::certificate`]): once
//! the cheap test holds, up to three more steps run while the residual keeps falling (at most
//! to `1e-3·tol`; each costs a CG solve, so a Newton step there takes the error from `tol` to
//! about `tol²`), the best point is refined with the doubled-precision gradient (as Newton
//! does) and certified with the term magnitudes recomputed there; if that fails, the
//! iterations go on from it.
//! The no-minimiser tests (negative recession slope, a KKT point with a zero recession slope,
//! aligned long steps at KKT points of a non-convex loss, `‖θ‖ > norm_cap`) are L-BFGS's.
//! `certified_global` is Newton's rule (converged, and convex loss or convexity certified on
//! the ball).
//!
//! **Cost** per Newton step: one value+gradient pass plus one pass per CG iteration
//! ([`SolveReport::cg_iterations`]). Memory: `O(d)` vectors besides two `O(n)` score vectors
//! (the current and the trial point) and a third for the direction's scores, allocated only
//! when a line search backtracks — no `d × d` matrix.

use super::certificate::{Certifier, Kkt};
use super::lbfgs::{arc_search, cap_step, count_flat_steps, Arc, FACE_TOL, MIN_COS, RECESSION_STEPS, RELEASE};
use super::lbfgs::{at_kkt_recession, polish};
use super::scales::{apply_preconditioner, ColumnScales};
use super::{all_finite, dot, Control, Progress, SolveReport, Termination};
use crate::error::{Error, Result};
use crate::feasible::{center, norm, FeasibleSet};
use crate::objective::{Eval, SecondOrderObjective};
use std::time::Instant;

/// Largest forcing term `η` (relative CG residual).
const ETA_MAX: f64 = 0.5;
/// Most CG iterations per Newton step.
const CG_MAX: usize = 1000;
/// Fewest CG iterations allowed per Newton step (small `m`).
const CG_MIN: usize = 10;
/// Steps allowed after the tolerance is met, while the KKT residual keeps falling (L-BFGS's
/// polishing rule, [`super::lbfgs`], with a smaller budget: each step costs CG passes).
const POLISH_ITERS: usize = 3;

/// The largest `τ ≥ 0` with `‖z + τ v‖ ≤ b` for `‖z‖ ≤ b` (0 if `v = 0`).
fn to_boundary(z: &[f64], v: &[f64], b: f64) -> f64 {
    let a = dot(v, v);
    if !(a > 0.0) {
        return 0.0;
    }
    let bz = dot(z, v);
    // ‖z‖² − b² ≤ 0 up to rounding; clamp so that the root is real and τ ≥ 0.
    let c = (dot(z, z) - b * b).min(0.0);
    let disc = (bz * bz - a * c).max(0.0).sqrt();
    // Roots of a τ² + 2 bz τ + c = 0; the non-negative one, in the stable form.
    if bz > 0.0 {
        -c / (bz + disc)
    } else {
        (disc - bz) / a
    }
}

/// The outcome of one truncated CG solve.
struct Cg {
    /// The step.
    p: Vec<f64>,
    /// The Rayleigh quotient `dᵀAd/dᵀd ≤ 0` of the direction of non-positive curvature met, if
    /// one was.
    negative_curvature: Option<f64>,
    /// `max ‖Ad‖/‖d‖` over the CG directions (a lower bound on `‖A‖`).
    scale: f64,
}

/// The working model of one Newton step.
struct Model<'a> {
    /// Sum-zero subspace.
    sz: bool,
    /// On the face: `(μ, θ, B²)`.
    face: Option<(f64, &'a [f64], f64)>,
    /// Interior with a ball: `(θ, B)` (the step must keep `‖θ + p‖ ≤ B`).
    ball: Option<(&'a [f64], f64)>,
    /// Shift `τ ≥ 0` added to the model's Hessian (negative curvature without a ball).
    shift: f64,
    /// The diagonal preconditioner of badly scaled columns ([`super::scales`]), if any.
    precond: Option<&'a [f64]>,
    /// The all-ones vector (the sum-zero normal of the preconditioner's projection).
    ones: &'a [f64],
}

impl<'a> Model<'a> {
    fn new(
        theta: &'a [f64],
        sz: bool,
        radius: Option<f64>,
        face_mu: Option<f64>,
        precond: Option<&'a [f64]>,
        ones: &'a [f64],
    ) -> Self {
        let b2 = radius.map_or(1.0, |b| b * b);
        Model {
            sz,
            face: face_mu.map(|mu| (mu, theta, b2)),
            ball: match (face_mu, radius) {
                (None, Some(b)) => Some((theta, b)),
                _ => None,
            },
            shift: 0.0,
            precond,
            ones,
        }
    }
    /// `out = M v`: the preconditioner on the working subspace, or the projection of `v` on it.
    fn precondition(&self, v: &[f64], out: &mut [f64]) {
        match self.precond {
            Some(dg) => {
                let mut normals: Vec<&[f64]> = Vec::with_capacity(2);
                if self.sz {
                    normals.push(self.ones);
                }
                if let Some((_, th, _)) = self.face {
                    normals.push(th);
                }
                apply_preconditioner(dg, &normals, v, out);
            }
            None => out.copy_from_slice(v),
        }
        self.project(out);
    }
    /// Projects `v` on the working subspace (centred; tangent on the face).
    fn project(&self, v: &mut [f64]) {
        if self.sz {
            center(v);
        }
        if let Some((_, th, b2)) = self.face {
            let c = dot(v, th) / b2;
            v.iter_mut().zip(th).for_each(|(x, t)| *x -= c * t);
        }
    }
}

/// The working gradient at `θ` with gradient `grad`: `P∇F`, or on the face of the ball
/// (`‖θ‖ ≥ B(1 − 1e-12)`, unless `μ < 0` dominates the tangent gradient) the tangent gradient of
/// the Lagrangian `P∇F + μθ`, `μ = −(P∇F)ᵀθ/B²` (returned).
fn working_gradient(theta: &[f64], grad: &[f64], sz: bool, radius: Option<f64>) -> (Vec<f64>, Option<f64>) {
    let mut pg = grad.to_vec();
    if sz {
        center(&mut pg);
    }
    let on_sphere = radius.is_some_and(|b| norm(theta) >= b * (1.0 - FACE_TOL));
    if let (true, Some(b)) = (on_sphere, radius) {
        let mu = -dot(&pg, theta) / (b * b);
        let tangent: Vec<f64> = pg.iter().zip(theta).map(|(g, t)| mu.mul_add(*t, *g)).collect();
        if !(mu < 0.0 && norm(&tangent) <= RELEASE * (-mu) * b) {
            return (tangent, Some(mu));
        }
    }
    (pg, None)
}

/// Steihaug–Toint truncated CG on `min gᵀp + ½pᵀAp` (module docs), `A` the model's Hessian;
/// each iteration one Hessian-vector product (counted in `rep.cg_iterations`).
#[allow(clippy::too_many_arguments)]
fn truncated_cg<O: SecondOrderObjective>(
    obj: &O,
    ev: &Eval,
    model: &Model<'_>,
    g: &[f64],
    eta: f64,
    max_iter: usize,
    rep: &mut SolveReport,
) -> Cg {
    let d = g.len();
    let apply = |v: &[f64], out: &mut [f64], rep: &mut SolveReport| {
        obj.hess_vec(ev, v, out);
        rep.cg_iterations += 1;
        let mu = model.face.map_or(0.0, |f| f.0) + model.shift;
        if mu != 0.0 {
            out.iter_mut().zip(v).for_each(|(o, x)| *o = mu.mul_add(*x, *o));
        }
        model.project(out);
    };
    let mut scale = 0.0f64;
    // The residual lives in the working subspace exactly: a component of `g` outside it (the
    // rounding of the tangent gradient, tiny next to `g` but not next to a refinement's `g`)
    // would otherwise stay in `r`, never decrease, and inflate every step `rᵀr / dᵀAd`.
    let mut r = g.to_vec();
    model.project(&mut r);
    let g = &r.clone();
    let target = eta * norm(g);
    let mut p = vec![0.0; d];
    // Preconditioned CG: z = M r, directions from z (M = I without a preconditioner).
    let mut z_r = vec![0.0; d];
    model.precondition(&r, &mut z_r);
    let mut dir: Vec<f64> = z_r.iter().map(|v| -v).collect();
    let rr = dot(&r, &r);
    let mut rz = dot(&r, &z_r);
    if !(rr > 0.0 && rz > 0.0) {
        // Nothing to solve (or a non-finite gradient): the zero step, without a pass.
        return Cg {
            p,
            negative_curvature: None,
            scale: 0.0,
        };
    }
    let mut hd = vec![0.0; d];
    let mut z = vec![0.0; d];
    for k in 0..max_iter {
        apply(&dir, &mut hd, rep);
        let curv = dot(&dir, &hd);
        let (dn, hn) = (norm(&dir), norm(&hd));
        if !curv.is_finite() {
            if k == 0 {
                p.iter_mut().zip(g).for_each(|(a, b)| *a = -b);
            }
            return Cg {
                p,
                negative_curvature: None,
                scale,
            };
        }
        scale = scale.max(hn / dn);
        // Curvature not positive beyond the rounding of the product.
        if curv <= f64::EPSILON * dn * hn {
            match model.ball {
                Some((th, b)) => {
                    z.iter_mut().zip(th.iter().zip(&p)).for_each(|(zi, (t, q))| *zi = t + q);
                    let tau = to_boundary(&z, &dir, b);
                    p.iter_mut().zip(&dir).for_each(|(a, v)| *a = tau.mul_add(*v, *a));
                }
                None => {
                    if k == 0 {
                        p.iter_mut().zip(g).for_each(|(a, b)| *a = -b);
                    }
                }
            }
            return Cg {
                p,
                negative_curvature: Some(curv / (dn * dn)),
                scale,
            };
        }
        let alpha = rz / curv;
        if let Some((th, b)) = model.ball {
            z.iter_mut()
                .zip(th.iter().zip(p.iter().zip(&dir)))
                .for_each(|(zi, (t, (q, v)))| *zi = t + alpha.mul_add(*v, *q));
            if norm(&z) >= b {
                z.iter_mut().zip(th.iter().zip(&p)).for_each(|(zi, (t, q))| *zi = t + q);
                let tau = to_boundary(&z, &dir, b).min(alpha);
                p.iter_mut().zip(&dir).for_each(|(a, v)| *a = tau.mul_add(*v, *a));
                return Cg {
                    p,
                    negative_curvature: None,
                    scale,
                };
            }
        }
        p.iter_mut().zip(&dir).for_each(|(a, v)| *a = alpha.mul_add(*v, *a));
        r.iter_mut().zip(&hd).for_each(|(a, v)| *a = alpha.mul_add(*v, *a));
        if norm(&r) <= target {
            break;
        }
        model.precondition(&r, &mut z_r);
        let rz_new = dot(&r, &z_r);
        if !(rz_new > 0.0) {
            break;
        }
        let beta = rz_new / rz;
        dir.iter_mut().zip(&z_r).for_each(|(v, zi)| *v = beta.mul_add(*v, -zi));
        model.project(&mut dir);
        rz = rz_new;
    }
    Cg {
        p,
        negative_curvature: None,
        scale,
    }
}

/// Most shifted CG solves per Newton step.
const MAX_SHIFTS: usize = 30;

/// The Newton-CG direction for the model: truncated CG; on non-positive curvature inside the
/// ball, Steihaug's step to the sphere; on the face or without a ball, CG again on the
/// Levenberg–Marquardt model `A + τI` with `τ` raised past the curvature found (`τ ←
/// max(τ − 2q, 2τ, 1e-8·‖A‖)`, `q ≤ 0` the Rayleigh quotient of the direction), as dense Newton
/// shifts an indefinite Hessian. Counts the negative-curvature directions and the shifted steps.
#[allow(clippy::too_many_arguments)]
fn newton_direction<O: SecondOrderObjective>(
    obj: &O,
    ev: &Eval,
    model: &mut Model<'_>,
    g: &[f64],
    eta: f64,
    max_iter: usize,
    rep: &mut SolveReport,
) -> Cg {
    model.shift = 0.0;
    let mut attempt = 0;
    loop {
        let cg = truncated_cg(obj, ev, model, g, eta, max_iter, rep);
        let Some(q) = cg.negative_curvature else {
            if model.shift > 0.0 {
                rep.hessian_shifts += 1;
                rep.max_shift = rep.max_shift.max(model.shift);
            }
            return cg;
        };
        rep.negative_curvature_directions += 1;
        attempt += 1;
        if model.ball.is_some() || attempt >= MAX_SHIFTS {
            return cg;
        }
        let tau = model.shift;
        model.shift = (tau - 2.0 * q)
            .max(2.0 * tau)
            .max(1e-8 * cg.scale)
            .max(f64::MIN_POSITIVE);
    }
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
    ctl.validate()?;
    let start = Instant::now();
    let d = obj.dim();
    let n = obj.num_samples();
    super::check_theta0(theta0, d)?;
    let sz = set.sum_zero();
    let radius = set.radius();
    let m = if sz { d.saturating_sub(1) } else { d };
    let cg_max = (2 * m).clamp(CG_MIN, CG_MAX);

    let mut rep = SolveReport::blank("newton-cg", vec![0.0; d], Termination::MaxIterations);

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
    let tol = ctl.tol_rel;
    let cols = ColumnScales::of(obj, &mut rep);
    let ones = vec![1.0; d];
    ctl.notify_start("newton-cg", n, d, ctl.max_iter);

    let mut trial = obj.new_eval();
    // The direction's scores, allocated on the first backtracking search (often never).
    let mut xd: Vec<f64> = Vec::new();
    let mut best: Option<(Vec<f64>, f64)> = None;
    let mut polish_iters = 0usize;
    let mut prev_step: Option<Vec<f64>> = None;
    let mut flat_steps = 0usize;
    // The certificate and objective of the returned point, computed with fresh term magnitudes
    // and the doubled-precision gradient.
    let mut certified: Option<(Kkt, f64)> = None;

    let termination = 'certify: loop {
        let termination = loop {
            if !all_finite(&ev) {
                break Termination::NonFinite;
            }
            let est = cert.estimate(set, &theta, &ev.grad);
            let kkt = est.relative;
            if ctl.wants_progress(rep.iterations) {
                ctl.notify_progress(&Progress {
                    solver: "newton-cg",
                    iteration: rep.iterations,
                    budget: ctl.max_iter,
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
            // only once the Newton step there is short (checked after the direction).
            let check_flat = at_kkt && radius.is_none() && !O::CONVEX;
            if !check_flat {
                flat_steps = 0;
            }
            if at_kkt && !check_flat && polish(&mut best, &mut polish_iters, POLISH_ITERS, &theta, kkt, tol) {
                break Termination::Converged;
            }
            if let Some(t) = ctl.stop_requested() {
                break t;
            }
            if rep.iterations >= ctl.max_iter {
                break Termination::MaxIterations;
            }

            // Working gradient and model: the face of the ball as in L-BFGS.
            let (gw, face_mu) = working_gradient(&theta, &ev.grad, sz, radius);
            let gw_norm = norm(&gw);
            if gw_norm == 0.0 {
                if at_kkt {
                    polish(&mut best, &mut polish_iters, POLISH_ITERS, &theta, kkt, tol);
                    break Termination::Converged;
                }
                break Termination::LineSearchFailed;
            }
            let mut model = Model::new(&theta, sz, radius, face_mu, cols.preconditioner(), &ones);
            let eta = ETA_MAX.min(kkt.sqrt());
            let cg = newton_direction(obj, &ev, &mut model, &gw, eta, cg_max, &mut rep);
            let mut dir = cg.p;
            model.project(&mut dir);

            let mut newton_dir = true;
            let mut outcome = Arc::Failed;
            let mut checked_flat = false;
            for _attempt in 0..2 {
                let dn = norm(&dir);
                let cos = -dot(&gw, &dir) / (gw_norm * dn);
                if newton_dir && !(cos >= MIN_COS) {
                    // Not gradient-related: the projected gradient instead.
                    dir.iter_mut().zip(&gw).for_each(|(v, g)| *v = -g);
                    model.project(&mut dir);
                    newton_dir = false;
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
                if matches!(outcome, Arc::Accepted(_)) || !newton_dir {
                    break;
                }
                dir.iter_mut().zip(&gw).for_each(|(v, g)| *v = -g);
                model.project(&mut dir);
                newton_dir = false;
            }
            if check_flat {
                if flat_steps == 0 {
                    // Short step at a KKT point: a genuine (local) minimiser.
                    if polish(&mut best, &mut polish_iters, POLISH_ITERS, &theta, kkt, tol) {
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
            let s: Vec<f64> = new_theta.iter().zip(&theta).map(|(a, b)| a - b).collect();
            rep.last_step_norm = norm(&s);
            prev_step = Some(s);
            std::mem::swap(&mut ev, &mut trial);
            theta = new_theta;
            rep.iterations += 1;
            if radius.is_none() && cols.norm(&theta) > ctl.norm_cap {
                break Termination::NoMinimizer;
            }
        };
        // A run that met the cheap test and then stopped while polishing returns its best point,
        // refined with the doubled-precision gradient (as Newton does) and certified with the term
        // magnitudes recomputed there.
        match best.take() {
            Some((bt, _)) if !matches!(termination, Termination::NoMinimizer) => {
                if ev.theta != bt {
                    obj.evaluate(&bt, &mut ev);
                    rep.grad_evals += 1;
                }
                theta = bt;
                let (f, g) = if m > 0 {
                    refine(obj, set, &ev, &mut theta, cg_max, &mut rep)
                } else {
                    (ev.value, ev.grad.clone())
                };
                if ev.theta != theta {
                    cert.evaluate(obj, &theta, &mut ev, &mut rep);
                }
                let k = cert.certify(obj, set, &ev, &g, &mut rep);
                if cert.meets(&k) {
                    certified = Some((k, f));
                    break 'certify Termination::Converged;
                }
                polish_iters = 0;
                if rep.iterations >= ctl.max_iter {
                    break 'certify Termination::MaxIterations;
                }
            }
            _ => break 'certify termination,
        }
    };

    rep.termination = termination;
    let k = match certified {
        Some((k, f)) => {
            rep.objective = f;
            k
        }
        None => {
            rep.objective = ev.value;
            if all_finite(&ev) && ev.theta == theta {
                cert.certify(obj, set, &ev, &ev.grad, &mut rep)
            } else {
                cert.estimate(set, &theta, &ev.grad)
            }
        }
    };
    Certifier::record(&k, &mut rep);
    rep.certified_global =
        termination.is_converged() && (O::CONVEX || radius.is_some_and(|b| obj.convex_on_ball(b, sz)));
    rep.theta = theta;
    rep.elapsed = start.elapsed();
    ctl.notify_end(&rep);
    Ok(rep)
}

/// Rounds of iterative refinement after convergence.
const REFINE_ROUNDS: usize = 3;
/// Relative CG residual of a refinement correction (the correction is tiny next to `θ`, so it
/// needs only a few correct digits).
const REFINE_ETA: f64 = 1e-4;

/// Iterative refinement at a converged point, as in [`super::newton`]: the gradient is
/// recomputed as if in doubled precision ([`SecondOrderObjective::value_grad_compensated`]) and the
/// Newton correction for it is solved by CG with the Hessian at the converged point (`ev`), for
/// up to three rounds while the corrections shrink. Removes the error that rounding in `xᵀθ`
/// puts into the gradient of ill-conditioned problems (large `‖θ‖`, nearly collinear columns).
/// Returns the objective and gradient at the final `theta`, both from the compensated pass.
fn refine<O: SecondOrderObjective>(
    obj: &O,
    set: &FeasibleSet,
    ev: &Eval,
    theta: &mut Vec<f64>,
    cg_max: usize,
    rep: &mut SolveReport,
) -> (f64, Vec<f64>) {
    let d = theta.len();
    let (sz, radius) = (set.sum_zero(), set.radius());
    let mut gc = vec![0.0; d];
    let mut fc = obj.value_grad_compensated(theta, &mut gc);
    rep.compensated_evals += 1;
    let mut gn = vec![0.0; d];
    let ones = vec![1.0; d];
    let mut last: Option<(Vec<f64>, f64, Vec<f64>, f64)> = None; // previous (θ, F, ∇F, ‖δ‖)
    loop {
        let (gw, face_mu) = working_gradient(theta, &gc, sz, radius);
        if norm(&gw) == 0.0 {
            break;
        }
        let model = Model::new(theta, sz, radius, face_mu, None, &ones);
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
                rep.refinement_steps -= 1;
                break;
            }
        }
        if !(dn > 4.0 * f64::EPSILON * norm(theta)) || rep.refinement_steps == REFINE_ROUNDS {
            break;
        }
        let mut th: Vec<f64> = theta.iter().zip(&delta).map(|(t, v)| t + v).collect();
        set.project(&mut th);
        let fnew = obj.value_grad_compensated(&th, &mut gn);
        rep.compensated_evals += 1;
        if !fnew.is_finite() || gn.iter().any(|g| !g.is_finite()) {
            break;
        }
        last = Some((std::mem::replace(theta, th), fc, gc.clone(), dn));
        std::mem::swap(&mut gc, &mut gn);
        fc = fnew;
        rep.refinement_steps += 1;
    }
    (fc, gc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_step_lands_on_the_sphere() {
        let z = [0.3, -0.4];
        for v in [[1.0, 0.0], [-1.0, 2.0], [0.0, -3.0]] {
            let tau = to_boundary(&z, &v, 1.0);
            assert!(tau > 0.0);
            let e: Vec<f64> = z.iter().zip(&v).map(|(a, b)| a + tau * b).collect();
            assert!((norm(&e) - 1.0).abs() < 1e-15, "{v:?}: {}", norm(&e));
        }
        // On the sphere, pointing outward: no room.
        assert!(to_boundary(&[0.6, 0.8], &[0.6, 0.8], 1.0) <= 1e-15);
        assert_eq!(to_boundary(&z, &[0.0, 0.0], 1.0), 0.0);
    }
}

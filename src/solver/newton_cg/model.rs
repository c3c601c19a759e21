//! The working model of a Newton-CG step and its truncated conjugate-gradient solves
//! (Steihaug–Toint, with Levenberg–Marquardt shifts on negative curvature).

use crate::feasible::{center, norm};
use crate::objective::{Eval, SecondOrderObjective};
use crate::solver::first_order::{FACE_TOL, RELEASE};
use crate::solver::scales::apply_preconditioner;

use super::sample::{SampleCurvature, SampleFace};
use crate::solver::{dot, SolveReport};

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
pub(super) struct Cg {
    /// The step.
    pub(super) p: Vec<f64>,
    /// The Rayleigh quotient `dᵀAd/dᵀd ≤ 0` of the direction of non-positive curvature met, if
    /// one was.
    pub(super) negative_curvature: Option<f64>,
    /// `max ‖Ad‖/‖d‖` over the CG directions (a lower bound on `‖A‖`).
    scale: f64,
}

/// The preconditioner of a Newton-CG step's conjugate gradients, on its working subspace.
pub(super) enum Precond<'a> {
    /// None (the projection on the working subspace).
    None,
    /// The diagonal of badly scaled columns ([`crate::solver::scales`]).
    Diagonal(&'a [f64]),
    /// The factored curvature of a row sample ([`super::sample`]), with its face data.
    Sample(&'a SampleCurvature, Option<SampleFace>),
}

impl<'a> Precond<'a> {
    /// The sample curvature when there is one, else the column diagonal when there is one.
    pub(super) fn choose(sample: Option<&'a SampleCurvature>, diagonal: Option<&'a [f64]>) -> Self {
        match (sample, diagonal) {
            (Some(s), _) => Precond::Sample(s, None),
            (None, Some(dg)) => Precond::Diagonal(dg),
            (None, None) => Precond::None,
        }
    }
}

/// The working model of one Newton step.
pub(super) struct Model<'a> {
    /// Sum-zero subspace.
    sz: bool,
    /// On the face: `(μ, θ, B²)`.
    face: Option<(f64, &'a [f64], f64)>,
    /// Interior with a ball: `(θ, B)` (the step must keep `‖θ + p‖ ≤ B`).
    ball: Option<(&'a [f64], f64)>,
    /// Shift `τ ≥ 0` added to the model's Hessian (negative curvature without a ball).
    shift: f64,
    /// The preconditioner of the conjugate gradients.
    precond: Precond<'a>,
    /// The all-ones vector (the sum-zero normal of the preconditioner's projection).
    ones: &'a [f64],
}

impl<'a> Model<'a> {
    pub(super) fn new(
        theta: &'a [f64],
        sz: bool,
        radius: Option<f64>,
        face_mu: Option<f64>,
        precond: Precond<'a>,
        ones: &'a [f64],
    ) -> Self {
        let b2 = radius.map_or(1.0, |b| b * b);
        let precond = match precond {
            Precond::Sample(s, _) => Precond::Sample(s, face_mu.map(|mu| s.face(theta, mu))),
            p => p,
        };
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
    pub(super) fn precondition(&self, v: &[f64], out: &mut [f64]) {
        match &self.precond {
            Precond::Sample(s, sample_face) => {
                let face = self.face.zip(sample_face.as_ref()).map(|((_, th, _), f)| (th, f));
                s.apply(v, out, self.ones, face);
            }
            Precond::Diagonal(dg) => {
                let mut normals: Vec<&[f64]> = Vec::with_capacity(2);
                if self.sz {
                    normals.push(self.ones);
                }
                if let Some((_, th, _)) = self.face {
                    normals.push(th);
                }
                apply_preconditioner(dg, &normals, v, out);
            }
            Precond::None => out.copy_from_slice(v),
        }
        self.project(out);
    }
    /// Projects `v` on the working subspace (centred; tangent on the face).
    pub(super) fn project(&self, v: &mut [f64]) {
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
pub(super) fn working_gradient(theta: &[f64], grad: &[f64], sz: bool, radius: Option<f64>) -> (Vec<f64>, Option<f64>) {
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
pub(super) fn truncated_cg<O: SecondOrderObjective>(
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
        rep.counts.cg_iterations += 1;
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
    // CG runs on the unit right-hand side `ĝ = g/‖g‖` and returns `‖g‖·p̂` (CG is linear in
    // `g`; its step lengths `α = rᵀz/dᵀAd` and `β` are invariant to the scale). In the units of
    // `g` the curvature `dᵀAd ~ ‖g‖²‖A‖` underflows once `‖g‖ ≲ 1e-100` — the exponential tail
    // of separable data, where `F`, `‖∇F‖` and `‖∇²F‖` are all ~e^{−margin} — and a zero or
    // subnormal curvature would read as a direction of non-positive curvature.
    let gscale = norm(&r);
    if !(gscale > 0.0 && gscale.is_finite()) {
        // Nothing to solve (or a non-finite gradient): the zero step, without a pass.
        return Cg {
            p: vec![0.0; d],
            negative_curvature: None,
            scale: 0.0,
        };
    }
    r.iter_mut().for_each(|v| *v /= gscale);
    let g = &r.clone();
    let target = eta * norm(g);
    let mut p = vec![0.0; d];
    // The step in the units of `θ`, from the scaled CG iterate.
    let unscale = |mut p: Vec<f64>| {
        p.iter_mut().for_each(|v| *v *= gscale);
        p
    };
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
                p: unscale(p),
                negative_curvature: None,
                scale,
            };
        }
        scale = scale.max(hn / dn);
        // Curvature not positive beyond the rounding of the product.
        if curv <= f64::EPSILON * dn * hn {
            match model.ball {
                Some((th, b)) => {
                    z.iter_mut()
                        .zip(th.iter().zip(&p))
                        .for_each(|(zi, (t, q))| *zi = gscale.mul_add(*q, *t));
                    let dir_theta: Vec<f64> = dir.iter().map(|v| v * gscale).collect();
                    let tau = to_boundary(&z, &dir_theta, b);
                    p.iter_mut().zip(&dir).for_each(|(a, v)| *a = tau.mul_add(*v, *a));
                }
                None => {
                    if k == 0 {
                        p.iter_mut().zip(g).for_each(|(a, b)| *a = -b);
                    }
                }
            }
            return Cg {
                p: unscale(p),
                negative_curvature: Some(curv / (dn * dn)),
                scale,
            };
        }
        let alpha = rz / curv;
        if let Some((th, b)) = model.ball {
            z.iter_mut()
                .zip(th.iter().zip(p.iter().zip(&dir)))
                .for_each(|(zi, (t, (q, v)))| *zi = gscale.mul_add(alpha.mul_add(*v, *q), *t));
            if norm(&z) >= b {
                z.iter_mut()
                    .zip(th.iter().zip(&p))
                    .for_each(|(zi, (t, q))| *zi = gscale.mul_add(*q, *t));
                let dir_theta: Vec<f64> = dir.iter().map(|v| v * gscale).collect();
                let tau = to_boundary(&z, &dir_theta, b).min(alpha);
                p.iter_mut().zip(&dir).for_each(|(a, v)| *a = tau.mul_add(*v, *a));
                return Cg {
                    p: unscale(p),
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
        p: unscale(p),
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
pub(super) fn newton_direction<O: SecondOrderObjective>(
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
                rep.detail.hessian_shifts += 1;
                rep.detail.max_shift = rep.detail.max_shift.max(model.shift);
            }
            return cg;
        };
        rep.detail.negative_curvature_directions += 1;
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

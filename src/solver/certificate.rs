//! The optimality certificate of every solver: the **relative backward error** of the KKT
//! conditions.
//!
//! At a feasible point `θ` with gradient `g = ∇F(θ)`, let `a ∈ ℝ^d` be the magnitude of the
//! terms that make up each gradient coordinate,
//!
//! `a_j = (1/W) (Σ_i w_i |∂ℓ_i/∂t| |x_ij| + β|θ_j| + |b_j|)`
//!
//! ([`SmoothObjective::grad_scale`]; `|g_j| ≤ a_j`,
//! and the rounding error of the computed `g_j` is a small multiple of `ε_mach·a_j`). On the
//! sphere of a ball (`‖θ‖ ≥ B(1 − 10⁻¹⁰)`) let `μ = max(0, −⟨Pg, θ⟩/‖θ‖²)` be the multiplier
//! estimate (else `μ = 0`), `P` the centring projector under the sum-zero constraint (else `I`).
//! The certificate is
//!
//! `κ(θ) = min_c max_j |g_j + μθ_j − c| / (a_j + μ|θ_j|)`
//!
//! with `c` free under the sum-zero constraint (the multiplier of `1ᵀθ = 0`) and `c = 0`
//! otherwise (`0/0 = 0`, except where `F`, `∇F` and every `a_j` are exactly 0 — the loss
//! underflowed, as past margins of ~745 for the logistic loss — where `κ = ∞`: no
//! certificate). A solver reports [`Termination::Converged`](super::Termination) only when
//! `κ(θ̂) ≤ tol` at the returned point, with `a` computed at that point.
//!
//! **What it certifies.** Let `r = g + μθ − c1` at the minimising `c`. Then `θ̂` satisfies the
//! KKT conditions of `F̃(θ) = F(θ) − ⟨r, θ⟩` over the set (with radius `‖θ̂‖` in place of `B`
//! when `μ > 0`, within a relative `10⁻¹⁰`) *exactly*: `P(∇F̃(θ̂)) + μθ̂ = P(g − r) + μθ̂ = 0`
//! (because `Pθ̂ = θ̂` and `P1 = 0`), `μ ≥ 0`, `μ > 0` only on the sphere. For a convex `F`
//! these conditions are sufficient, so `θ̂` is a global minimiser of `F̃`. The perturbation is
//! small in the only sense that survives floating point: each coordinate `r_j` is at most `κ`
//! times the sum of the absolute values of the terms of `∂F̃/∂θ_j` (`|r_j| ≤ κ(a_j + μ|θ_j|)`)
//! — the same kind of change as perturbing every per-row gradient term `w_i ℓ'_i x_ij` by a
//! relative `κ`. This is the componentwise backward error of numerical linear algebra
//! (Oettli & Prager 1964; Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, Sec. 7.2)
//! applied to the KKT system.
//!
//! **Why relative to `a` and not to `‖∇F(0)‖`.** Both `g_j` and `a_j` scale by `s` when `X → sX`
//! (`θ → θ/s`, `B → B/s`), and by `s_j` when one column is scaled (unconstrained problems), so
//! `κ` is invariant to the units of the features. `a` is evaluated *at `θ̂`*: a huge row whose
//! loss is saturated at `θ̂` (`ℓ' ≈ 0`) adds nothing to `a`, and one that is not makes its own
//! column's gradient large too, so one dominating row can neither loosen the test of the other
//! rows nor mask a non-stationary point — unlike a tolerance relative to `‖∇F(0)‖`, which one
//! row at `10²⁰` inflates by `10²⁰`. The minimisation over `c` keeps a column whose terms are
//! huge but cancel from loosening the other columns' test under the sum-zero constraint.
//!
//! **Forward bounds, where they exist.** For a convex `F` over a bounded set, the Frank–Wolfe
//! (duality) gap `G = ⟨Pg, θ⟩ + B‖Pg‖ ≥ F(θ) − min F` (from `F(v) ≥ F(θ) + ⟨g, v − θ⟩` and
//! `min_{v ∈ set} ⟨g, v⟩ = −B‖Pg‖`); with a ridge `β > 0` and no bound, `F` is `β/W`-strongly
//! convex on the set and `F(θ) − min F ≤ W‖Pg‖²/(2β)`. Both are reported as
//! [`Kkt::suboptimality_bound`] (computed from the floating-point gradient).

use super::{Control, SolveReport};
use crate::feasible::{center, norm, FeasibleSet};
use crate::objective::{Eval, SmoothObjective};

/// `‖θ‖ ≥ B(1 − ON_SPHERE)` counts as on the sphere of the ball (the backward-error statement
/// then uses the radius `‖θ‖`).
pub(crate) const ON_SPHERE: f64 = 1e-10;

/// The certificate at one point (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kkt {
    /// `κ`: the relative backward error of the KKT conditions (dimensionless; `NaN` if the
    /// gradient or its scale is not finite).
    pub relative: f64,
    /// `max_j |r_j|`: the largest absolute component of the backward perturbation `r` (units of
    /// the gradient; not invariant to rescaling the features).
    pub absolute: f64,
    /// The ball multiplier estimate `μ ≥ 0` (0 off the sphere or without a ball).
    pub multiplier: f64,
    /// Whether `θ` is on the sphere of the ball.
    pub on_boundary: bool,
    /// The Euclidean projected-gradient residual `‖θ − Π(θ − g)‖₂` (absolute, in the units of
    /// `θ`; used by the distance bounds of the central estimators).
    pub projected_gradient: f64,
    /// A bound on `F(θ) − min F` where one exists (module docs), else `None`.
    pub suboptimality_bound: Option<f64>,
}

impl Kkt {
    /// Whether the certificate is void because every term underflowed ([`Certifier::certify`]:
    /// `F`, `∇F` and the term magnitudes all exactly 0, so `κ = ∞` with a zero residual — which
    /// [`measure`] alone never gives: its `κ` is infinite only beside a nonzero residual).
    pub(crate) fn underflowed(&self) -> bool {
        self.relative == f64::INFINITY && self.absolute == 0.0
    }
    /// Whether the certificate meets the tolerances: `κ ≤ tol_rel`, or `max_j |r_j| ≤ tol_abs`
    /// (`tol_abs = 0`, the default of [`Control`], disables the absolute test).
    /// `NaN` never passes.
    pub(crate) fn meets(&self, tol_rel: f64, tol_abs: f64) -> bool {
        self.relative <= tol_rel || (tol_abs > 0.0 && self.absolute <= tol_abs)
    }
}

/// What the certificate needs to know about the objective besides the point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectiveInfo {
    /// Whether `F` is convex on the set (the forward bounds need it).
    pub convex: bool,
    /// `β / W`: the strong-convexity modulus contributed by the ridge.
    pub ridge_modulus: f64,
}

/// The certificate of `θ` (feasible) with gradient `grad` and term magnitudes `scale` (both
/// length `d`; module docs).
pub fn measure(set: &FeasibleSet, theta: &[f64], grad: &[f64], scale: &[f64], info: ObjectiveInfo) -> Kkt {
    let d = theta.len();
    debug_assert_eq!(grad.len(), d);
    debug_assert_eq!(scale.len(), d);
    let sz = set.sum_zero();
    let mut pg = grad.to_vec();
    if sz {
        center(&mut pg);
    }
    let tn = norm(theta);
    // On the sphere, the constraint's force `μθ = f·u` with `u = θ/‖θ‖` and `f = μ‖θ‖ =
    // max(0, −⟨Pg, u⟩)`, in the units of the gradient: `μ` itself (gradient over θ²) can
    // overflow or underflow where `μθ` does not.
    let unit: Vec<f64> = if tn > 0.0 {
        theta.iter().map(|t| t / tn).collect()
    } else {
        vec![0.0; d]
    };
    let (on_boundary, force) = match set.radius() {
        Some(b) if tn >= b * (1.0 - ON_SPHERE) && tn > 0.0 => {
            let ip: f64 = pg.iter().zip(&unit).map(|(g, u)| g * u).sum();
            (true, (-ip).max(0.0))
        }
        _ => (false, 0.0),
    };
    let multiplier = if force > 0.0 { force / tn } else { 0.0 };
    // v = g + μθ and its term magnitudes e = a + μ|θ|.
    let v: Vec<f64> = grad.iter().zip(&unit).map(|(g, u)| force.mul_add(*u, *g)).collect();
    let e: Vec<f64> = scale
        .iter()
        .zip(&unit)
        .map(|(a, u)| force.mul_add(u.abs(), *a))
        .collect();
    let c = if sz { best_shift(&v, &e) } else { 0.0 };
    let (relative, absolute) = ratios(&v, &e, c);
    let projected_gradient = set.kkt_residual(theta, grad);
    let suboptimality_bound = if !info.convex {
        None
    } else if let Some(b) = set.radius() {
        let ip: f64 = pg.iter().zip(theta).map(|(g, t)| g * t).sum();
        Some((ip + b * norm(&pg)).max(0.0))
    } else if info.ridge_modulus > 0.0 {
        let n2: f64 = pg.iter().map(|x| x * x).sum();
        Some(n2 / (2.0 * info.ridge_modulus))
    } else {
        None
    };
    Kkt {
        relative,
        absolute,
        multiplier,
        on_boundary,
        projected_gradient,
        suboptimality_bound: suboptimality_bound.filter(|g| g.is_finite()),
    }
}

/// `(max_j |v_j − c|/e_j, max_j |v_j − c|)` with `0/0 = 0` and `x/0 = ∞` for `x ≠ 0`; `NaN` if
/// any input is not finite.
fn ratios(v: &[f64], e: &[f64], c: f64) -> (f64, f64) {
    let (mut rel, mut abs) = (0.0f64, 0.0f64);
    for (vj, ej) in v.iter().zip(e) {
        let r = (vj - c).abs();
        if !(r.is_finite() && ej.is_finite()) {
            return (f64::NAN, f64::NAN);
        }
        abs = abs.max(r);
        if r > 0.0 {
            rel = rel.max(if *ej > 0.0 { r / ej } else { f64::INFINITY });
        }
    }
    (rel, abs)
}

/// The `c` minimising `f(c) = max_j |v_j − c|/e_j` (a convex, piecewise linear function):
/// `0` when some `e_j = 0` (then `v_j` is a sum of exact zeros and `c` must be 0 for `f` to be
/// finite), otherwise golden-section search on `[min v, max v]` to the resolution of `c`.
fn best_shift(v: &[f64], e: &[f64]) -> f64 {
    if v.is_empty() || e.iter().any(|&x| !(x > 0.0)) || v.iter().any(|x| !x.is_finite()) {
        return 0.0;
    }
    let f = |c: f64| v.iter().zip(e).map(|(vj, ej)| (vj - c).abs() / ej).fold(0.0, f64::max);
    let (mut lo, mut hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
    const INV_PHI: f64 = 0.618_033_988_749_894_9;
    let mut x1 = hi - INV_PHI * (hi - lo);
    let mut x2 = lo + INV_PHI * (hi - lo);
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..200 {
        if !(hi - lo > 4.0 * f64::EPSILON * lo.abs().max(hi.abs())) {
            break;
        }
        if f1 <= f2 {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - INV_PHI * (hi - lo);
            f1 = f(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + INV_PHI * (hi - lo);
            f2 = f(x2);
        }
    }
    let mid = 0.5 * (lo + hi);
    // The bracket's ends and midpoint: keep the best (ties: the midpoint).
    [mid, lo, hi]
        .into_iter()
        .fold(mid, |best, c| if f(c) < f(best) { c } else { best })
}

/// Rows of the sample from which the solvers estimate the term magnitudes at their starting
/// point ([`SmoothObjective::grad_scale_sample`]).
pub(crate) const SCALE_SAMPLE_ROWS: usize = 4_096;

/// The solvers' use of the certificate: a cheap test at every iterate with the term magnitudes
/// `a` of an earlier point (a sample estimate at the start, then the last certified point), and
/// the full test — `a` recomputed at the point by one pass over the data — before a point is
/// reported as converged.
pub(crate) struct Certifier {
    tol: f64,
    tol_abs: f64,
    info: ObjectiveInfo,
    scale: Vec<f64>,
    /// The point at which `scale` was computed by a full pass, if it was.
    scale_at: Option<Vec<f64>>,
    /// Hold the term magnitudes of fused evaluations aside (`held`) instead of adopting them for
    /// the cheap test: they serve only a [`Certifier::certify`] at that point. Used by L-BFGS
    /// ahead of convergence, where fresh magnitudes at every iterate would change which iterates
    /// pass the cheap test (e.g. on separable data, whose recession is detected at such a point).
    pub hold: bool,
    /// Term magnitudes computed by a held fused evaluation, and their point.
    held: Option<(Vec<f64>, Vec<f64>)>,
}

impl Certifier {
    /// Starts from the term magnitudes at `ev`'s point: a sample estimate when the objective
    /// offers one, else the full pass (counted in [`Counts::scale_passes`](crate::solver::Counts::scale_passes)).
    pub fn new<O: SmoothObjective>(obj: &O, ev: &Eval, ctl: &Control, rep: &mut SolveReport) -> Certifier {
        let scale = obj.grad_scale_sample(ev, SCALE_SAMPLE_ROWS).unwrap_or_else(|| {
            let mut a = vec![0.0; obj.dim()];
            obj.grad_scale(ev, &mut a);
            rep.counts.scale_passes += 1;
            a
        });
        rep.certificate.kkt_tol = ctl.tol_rel;
        Certifier {
            tol: ctl.tol_rel,
            tol_abs: ctl.tol_abs,
            info: ObjectiveInfo {
                convex: O::CONVEX,
                ridge_modulus: obj.ridge() / obj.total_weight(),
            },
            scale,
            scale_at: None,
            hold: false,
            held: None,
        }
    }
    /// Evaluates the objective at `theta` into `ev` (counted in `rep.grad_evals`), together
    /// with the term magnitudes there when the objective has a fused pass for both: a later
    /// [`Certifier::certify`] at this point then makes no pass of its own. Without a fused pass
    /// the magnitudes wait for `certify` (one pass, only at the point that needs it).
    pub fn evaluate<O: SmoothObjective>(&mut self, obj: &O, theta: &[f64], ev: &mut Eval, rep: &mut SolveReport) {
        rep.counts.grad_evals += 1;
        if obj.fused_scale() && self.hold {
            let mut a = self.held.take().map(|(_, a)| a).unwrap_or_default();
            a.resize(obj.dim(), 0.0);
            obj.evaluate_scaled(theta, ev, &mut a);
            self.held = Some((theta.to_vec(), a));
        } else if obj.fused_scale() {
            obj.evaluate_scaled(theta, ev, &mut self.scale);
            self.scale_at = Some(theta.to_vec());
        } else {
            obj.evaluate(theta, ev);
        }
    }
    /// The certificate at `θ` with the term magnitudes of the last certified point (a guide).
    pub fn estimate(&self, set: &FeasibleSet, theta: &[f64], grad: &[f64]) -> Kkt {
        measure(set, theta, grad, &self.scale, self.info)
    }
    /// Whether `k` meets the tolerances.
    pub(crate) fn meets(&self, k: &Kkt) -> bool {
        k.meets(self.tol, self.tol_abs)
    }
    /// The certificate at `ev`'s point with the gradient `grad` (`ev.grad`, or a more accurate
    /// one of the same point), the term magnitudes recomputed there (one pass).
    pub fn certify<O: SmoothObjective>(
        &mut self,
        obj: &O,
        set: &FeasibleSet,
        ev: &Eval,
        grad: &[f64],
        rep: &mut SolveReport,
    ) -> Kkt {
        if let Some((at, a)) = self.held.take() {
            if at == ev.theta {
                self.scale = a;
                self.scale_at = Some(at);
            }
        }
        if self.scale_at.as_deref() != Some(&ev.theta[..]) {
            obj.grad_scale(ev, &mut self.scale);
            rep.counts.scale_passes += 1;
            self.scale_at = Some(ev.theta.clone());
        }
        let mut k = measure(set, &ev.theta, grad, &self.scale, self.info);
        if ev.value == 0.0 && self.scale.iter().all(|&a| a == 0.0) && grad.iter().all(|&g| g == 0.0) {
            // Every term underflowed (the logistic loss past margins of ~745): `0/0` here is
            // not a zero residual but no digit of it. The minimiser lies beyond what f64
            // resolves (a ball of radius 1e300 on separable data); no certificate.
            k.relative = f64::INFINITY;
        }
        k
    }
    /// Writes the certificate of the returned point into the report (`certified_global` is
    /// the caller's: it also needs the termination).
    pub fn record(k: &Kkt, rep: &mut SolveReport) {
        rep.certificate.kkt_residual = k.relative;
        rep.certificate.projected_gradient = k.projected_gradient;
        rep.certificate.suboptimality_bound = k.suboptimality_bound;
        rep.certificate.on_boundary = k.on_boundary;
        rep.certificate.multiplier = k.multiplier;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONVEX: ObjectiveInfo = ObjectiveInfo {
        convex: true,
        ridge_modulus: 0.0,
    };

    /// `min_c max_j |v_j − c|/e_j` by brute force over the candidate breakpoints
    /// `c = (v_j e_k + v_k e_j)/(e_j + e_k)` (where two ratios meet) and the `v_j`.
    fn brute(v: &[f64], e: &[f64]) -> f64 {
        let f = |c: f64| v.iter().zip(e).map(|(vj, ej)| (vj - c).abs() / ej).fold(0.0, f64::max);
        let mut best = f64::INFINITY;
        for j in 0..v.len() {
            best = best.min(f(v[j]));
            for k in 0..v.len() {
                let c = (v[j] * e[k] + v[k] * e[j]) / (e[j] + e[k]);
                best = best.min(f(c));
            }
        }
        best
    }

    #[test]
    fn sum_zero_shift_matches_brute_force() {
        let mut state = 99u64;
        let mut rnd = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for d in [2usize, 3, 5, 17] {
            for _ in 0..50 {
                let v: Vec<f64> = (0..d).map(|_| (rnd() - 0.5) * 10f64.powf(4.0 * rnd() - 2.0)).collect();
                let e: Vec<f64> = (0..d).map(|_| 10f64.powf(6.0 * rnd() - 3.0)).collect();
                let c = best_shift(&v, &e);
                let got = ratios(&v, &e, c).0;
                let want = brute(&v, &e);
                assert!(got <= want * (1.0 + 1e-9) + 1e-300, "d={d}: {got} vs {want}");
                // (The brute force's breakpoints carry their own rounding.)
                assert!(got >= want * (1.0 - 1e-9), "d={d}: {got} below the minimum {want}");
            }
        }
    }

    #[test]
    fn invariant_to_scaling_the_features() {
        // X → sX, θ → θ/s, B → B/s: the gradient and its term magnitudes scale by s.
        let theta = [0.3, -0.1, -0.2];
        let g = [1e-3, 2e-3, -3e-3];
        let a = [0.5, 0.7, 0.2];
        for set in [
            FeasibleSet::theta_b(2.0).unwrap(),
            FeasibleSet::Unconstrained,
            FeasibleSet::SumZero,
        ] {
            let k0 = measure(&set, &theta, &g, &a, CONVEX);
            for s in [1e-200, 1e-8, 3.0, 1e150] {
                let ts: Vec<f64> = theta.iter().map(|t| t / s).collect();
                let gs: Vec<f64> = g.iter().map(|x| x * s).collect();
                let as_: Vec<f64> = a.iter().map(|x| x * s).collect();
                let set_s = match set.radius() {
                    Some(b) => FeasibleSet::theta_b(b / s).unwrap(),
                    None => set,
                };
                let k = measure(&set_s, &ts, &gs, &as_, CONVEX);
                assert!((k.relative - k0.relative).abs() <= 1e-12 * k0.relative, "{set:?} s={s}");
                if let (Some(x), Some(y)) = (k.suboptimality_bound, k0.suboptimality_bound) {
                    assert!((x - y).abs() <= 1e-12 * y, "{set:?} s={s}: gap {x} vs {y}");
                }
            }
        }
    }

    #[test]
    fn ball_multiplier_absorbs_the_outward_gradient() {
        // On the sphere, g = −μθ exactly: a KKT point with κ = 0.
        let theta = [0.6, -0.8];
        let g = [-1.2, 1.6];
        let k = measure(&FeasibleSet::ball(1.0).unwrap(), &theta, &g, &[1.0, 1.0], CONVEX);
        assert!(k.on_boundary);
        assert!((k.multiplier - 2.0).abs() < 1e-15);
        assert!(k.relative < 1e-15);
        // The same gradient inside the ball is not stationary.
        let inner = [0.3, -0.4];
        let k = measure(&FeasibleSet::ball(1.0).unwrap(), &inner, &g, &[1.0, 1.0], CONVEX);
        assert!(!k.on_boundary && k.relative > 0.9);
        // An inward gradient on the sphere: μ = 0, not stationary.
        let k = measure(
            &FeasibleSet::ball(1.0).unwrap(),
            &theta,
            &[1.2, -1.6],
            &[2.0, 2.0],
            CONVEX,
        );
        assert_eq!(k.multiplier, 0.0);
        assert!((k.relative - 0.8).abs() < 1e-15);
    }

    #[test]
    fn one_dominating_column_does_not_hide_the_others() {
        // Column 0's terms are huge but cancel; column 1 is not stationary at all.
        let theta = [0.0, 0.0, 0.0];
        let g = [0.0, 0.3, -0.3];
        let a = [1e20, 0.5, 0.5];
        for set in [
            FeasibleSet::Unconstrained,
            FeasibleSet::SumZero,
            FeasibleSet::theta_b(1.0).unwrap(),
        ] {
            let k = measure(&set, &theta, &g, &a, CONVEX);
            assert!(k.relative > 0.29, "{set:?}: {}", k.relative);
        }
    }

    #[test]
    fn frank_wolfe_gap_bounds_a_convex_quadratic() {
        // F(θ) = ½‖θ − z‖² over the ball of radius 1, z outside: min at z/‖z‖.
        let z = [3.0, 4.0];
        let fval = |t: &[f64]| 0.5 * ((t[0] - z[0]).powi(2) + (t[1] - z[1]).powi(2));
        let fmin = fval(&[0.6, 0.8]);
        for t in [[0.0, 0.0], [0.5, 0.5], [1.0, 0.0], [0.6, 0.8]] {
            let g = [t[0] - z[0], t[1] - z[1]];
            let k = measure(&FeasibleSet::ball(1.0).unwrap(), &t, &g, &[5.0, 5.0], CONVEX);
            let gap = k.suboptimality_bound.unwrap();
            assert!(gap >= fval(&t) - fmin - 1e-14, "{t:?}: gap {gap} < {}", fval(&t) - fmin);
        }
        // Strong convexity from a ridge without a bound.
        let k = measure(
            &FeasibleSet::Unconstrained,
            &[1.0, 1.0],
            &[2.0, 0.0],
            &[2.0, 1.0],
            ObjectiveInfo {
                convex: true,
                ridge_modulus: 0.5,
            },
        );
        assert_eq!(k.suboptimality_bound, Some(4.0));
        // Non-convex: no bound.
        let k = measure(
            &FeasibleSet::ball(1.0).unwrap(),
            &[0.0, 0.0],
            &[1.0, 0.0],
            &[1.0, 1.0],
            ObjectiveInfo {
                convex: false,
                ridge_modulus: 0.0,
            },
        );
        assert_eq!(k.suboptimality_bound, None);
    }

    #[test]
    fn zero_scales_and_non_finite_inputs() {
        // A column whose terms are all zero has a zero gradient: ratio 0, not NaN.
        let k = measure(&FeasibleSet::SumZero, &[0.0, 0.0], &[0.0, 0.0], &[0.0, 1.0], CONVEX);
        assert_eq!(k.relative, 0.0);
        // A non-zero residual with a zero scale is infinitely large.
        let k = measure(&FeasibleSet::Unconstrained, &[0.0], &[1e-300], &[0.0], CONVEX);
        assert_eq!(k.relative, f64::INFINITY);
        let k = measure(
            &FeasibleSet::Unconstrained,
            &[0.0, 0.0],
            &[f64::NAN, 0.0],
            &[1.0, 1.0],
            CONVEX,
        );
        assert!(k.relative.is_nan() && !k.meets(1.0, 1.0));
        let k = measure(&FeasibleSet::Unconstrained, &[0.0], &[1.0], &[f64::INFINITY], CONVEX);
        assert!(k.relative.is_nan());
    }
}

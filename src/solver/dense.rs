//! Small dense linear algebra for the Newton step: Cholesky of a shifted symmetric matrix
//! (faer, sequential so the result does not depend on the thread count) and the trust-region
//! style ball subproblem.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::{factor, solve};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{MatMut, MatRef, Par};

/// Cholesky factor `L` (lower, column-major `m × m`) of `A + shift·I`.
#[derive(Debug, Clone)]
pub(crate) struct Chol {
    l: Vec<f64>,
    m: usize,
}

impl Chol {
    /// Factors `A + shift·I` (`a` column-major, symmetric). `None` if not positive definite.
    pub fn factor(a: &[f64], m: usize, shift: f64) -> Option<Chol> {
        let mut l = a.to_vec();
        for i in 0..m {
            l[i * m + i] += shift;
        }
        let mut mem = MemBuffer::new(factor::cholesky_in_place_scratch::<f64>(
            m,
            Par::Seq,
            Default::default(),
        ));
        let mat = MatMut::from_column_major_slice_mut(&mut l, m, m);
        factor::cholesky_in_place(
            mat,
            Default::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .ok()?;
        let c = Chol { l, m };
        if c.diag().any(|v| !(v.is_finite() && v > 0.0)) {
            return None;
        }
        Some(c)
    }
    fn diag(&self) -> impl Iterator<Item = f64> + '_ {
        (0..self.m).map(|i| self.l[i * self.m + i])
    }
    /// `min_i L_ii² / A_ii` for the factored `A` (with its shift): the relative pivot, i.e. the
    /// squared sine of the angle between column `i` and the span of the previous ones in the
    /// `A`-geometry. Invariant to diagonal scaling, so badly scaled but well-posed problems
    /// are not mistaken for singular ones.
    pub(crate) fn relative_pivot(&self, a: &[f64], shift: f64) -> f64 {
        (0..self.m)
            .map(|i| {
                let l = self.l[i * self.m + i];
                l * l / (a[i * self.m + i] + shift)
            })
            .fold(f64::INFINITY, f64::min)
    }
    fn lmat(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.l, self.m, self.m)
    }
    /// `b ← (L Lᵀ)⁻¹ b`.
    pub fn solve(&self, b: &mut [f64]) {
        let mut mem = MemBuffer::new(solve::solve_in_place_scratch::<f64>(self.m, 1, Par::Seq));
        let rhs = MatMut::from_column_major_slice_mut(b, self.m, 1);
        solve::solve_in_place(self.lmat(), rhs, Par::Seq, MemStack::new(&mut mem));
    }
    /// `b ← L⁻¹ b`.
    pub(crate) fn solve_lower(&self, b: &mut [f64]) {
        let rhs = MatMut::from_column_major_slice_mut(b, self.m, 1);
        solve_lower_triangular_in_place(self.lmat(), rhs, Par::Seq);
    }
}

/// Result of the Newton subproblem.
#[derive(Debug, Clone)]
pub(crate) struct QpStep {
    /// The step `p = v − u` to the minimiser `v` of the (shifted) quadratic model over the
    /// ball (computed directly, without forming `v`; `‖u + p‖` may exceed `B` by rounding —
    /// callers project).
    pub p: Vec<f64>,
    /// Ball multiplier `μ ≥ 0` of the subproblem.
    #[cfg_attr(not(test), allow(dead_code))]
    pub mu: f64,
    /// Levenberg–Marquardt shift `τ ≥ 0` added to the Hessian (0 when it was safely PD).
    pub shift: f64,
}

/// Smallest accepted relative pivot ([`Chol::relative_pivot`]): below it the Hessian is treated
/// as singular along some direction (rounding noise would dominate the step there) and shifted.
const MIN_RELATIVE_PIVOT: f64 = 1e-12;
/// First shift, relative to the largest diagonal entry of the Hessian.
const FIRST_SHIFT: f64 = 1e-10;

/// Minimises the model `q(v) = gᵀ(v−u) + ½(v−u)ᵀ(H+τI)(v−u)` over `‖v‖ ≤ radius` (or all of
/// `ℝ^m` when `radius` is `None`), exactly up to `1e-12` relative in `‖v‖`.
///
/// `τ` is 0 when the Cholesky of `H` succeeds with every relative pivot `≥ 1e-12` (scale
/// invariant); otherwise the smallest of `1e-10·s, 1e-8·s, …` (`s` = largest diagonal entry,
/// at least `‖g‖/max(1,‖u‖)`), refined by bisection to within a factor 1.2, that makes it so (modified Cholesky by a scalar shift, which keeps the step in the range of
/// `H`; the step stays a descent direction). With the ball active, the multiplier
/// `μ > 0` solving `‖(H̃+μI)⁻¹ r‖ = B`, `r = H̃u − g`, is found by the Moré–Sorensen Newton
/// iteration on `1/‖v(μ)‖ − 1/B`, safeguarded by bisection on `[0, ‖r‖/B]`.
///
/// `None` when `h`, `g` or `u` has a non-finite entry, or no shift up to `1e68` times the
/// scale makes the matrix positive definite (which for finite entries cannot happen).
pub(crate) fn newton_subproblem(h: &[f64], m: usize, g: &[f64], u: &[f64], radius: Option<f64>) -> Option<QpStep> {
    if !(h.iter().chain(g).chain(u).all(|v| v.is_finite())) {
        return None;
    }
    // Shift scale: the Hessian's diagonal, floored by ‖g‖/max(1,‖u‖) so that a Hessian that
    // underflowed to (near) zero still gives a finite step of bounded length.
    let gnorm = crate::feasible::norm(g);
    let unorm = crate::feasible::norm(u).max(1.0);
    let scale = (0..m)
        .map(|i| h[i * m + i].abs())
        .fold(gnorm / unorm, f64::max)
        .max(f64::MIN_POSITIVE);
    let accept = |shift: f64| Chol::factor(h, m, shift).filter(|c| c.relative_pivot(h, shift) >= MIN_RELATIVE_PIVOT);
    let mut shift = 0.0;
    let mut chol = accept(0.0);
    if chol.is_none() {
        // Smallest shift on a ×100 grid, then bisection (in log scale) down to within a factor
        // 1.2 of the smallest acceptable one: the step is damped as little as possible.
        let mut lo = 0.0;
        let mut k = 0;
        loop {
            shift = scale * FIRST_SHIFT * 100f64.powi(k);
            if let Some(c) = accept(shift) {
                chol = Some(c);
                break;
            }
            lo = shift;
            k += 1;
            if k >= 40 || !shift.is_finite() {
                return None;
            }
        }
        if lo > 0.0 {
            while shift > 1.2 * lo {
                let mid = (lo * shift).sqrt();
                match accept(mid) {
                    Some(c) => {
                        shift = mid;
                        chol = Some(c);
                    }
                    None => lo = mid,
                }
            }
        }
    }
    let chol = chol?;
    // The step is computed directly, p(μ) = −(H̃ + μI)⁻¹(g + μu), never as v − u with
    // v = (H̃ + μI)⁻¹(H̃u − g): near a solution g is tiny next to H̃u and would be lost.
    let solve_step = |c: &Chol, mu: f64| -> Vec<f64> {
        let mut p: Vec<f64> = g.iter().zip(u).map(|(gi, ui)| -(gi + mu * ui)).collect();
        c.solve(&mut p);
        p
    };
    let v_of = |p: &[f64]| -> Vec<f64> { u.iter().zip(p).map(|(a, b)| a + b).collect() };
    let p = solve_step(&chol, 0.0);
    let v = v_of(&p);
    let vnorm = crate::feasible::norm(&v);
    let b = match radius {
        Some(b) if vnorm > b => b,
        _ => return Some(QpStep { p, mu: 0.0, shift }),
    };
    // Moré–Sorensen on μ ∈ (0, μ_hi]: ‖v(μ)‖ ≤ ‖H̃u − g‖/μ, so μ_hi = (‖H̃u‖ + ‖g‖)/B brackets.
    let mut hu = vec![0.0; m];
    for j in 0..m {
        for i in 0..m {
            hu[i] += h[j * m + i] * u[j];
        }
    }
    let hunorm = crate::feasible::norm(&hu) + shift * crate::feasible::norm(u);
    let (mut lo, mut hi) = (0.0f64, (hunorm + gnorm) / b * (1.0 + 1e-12));
    let (mut mu, mut phi, mut cur, mut p, mut v) = (0.0f64, vnorm, chol, p, v);
    for _ in 0..100 {
        if (phi - b).abs() <= 1e-12 * b || hi - lo <= 1e-15 * hi {
            break;
        }
        if phi > b {
            lo = lo.max(mu);
        } else {
            hi = hi.min(mu);
        }
        // Newton step on ψ(μ) = 1/φ(μ) − 1/B: μ += (φ/‖q‖)² (φ − B)/B, q = L⁻¹ v
        // (dv/dμ = −(H̃ + μI)⁻¹ v).
        let mut q = v.clone();
        cur.solve_lower(&mut q);
        let qn2: f64 = q.iter().map(|x| x * x).sum();
        let mut next = mu + (phi * phi / qn2) * (phi - b) / b;
        if !(next > lo && next < hi && next.is_finite()) {
            next = 0.5 * (lo + hi);
        }
        mu = next;
        cur = match Chol::factor(h, m, shift + mu) {
            Some(c) => c,
            None => {
                // Cannot happen for μ > 0 on a PD matrix; bisect upwards defensively.
                lo = mu;
                continue;
            }
        };
        p = solve_step(&cur, mu);
        v = v_of(&p);
        phi = crate::feasible::norm(&v);
    }
    Some(QpStep { p, mu, shift })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quad(h: &[f64], m: usize, g: &[f64], u: &[f64], v: &[f64]) -> f64 {
        let p: Vec<f64> = v.iter().zip(u).map(|(a, b)| a - b).collect();
        let mut q = 0.0;
        for i in 0..m {
            q += g[i] * p[i];
            for j in 0..m {
                q += 0.5 * p[i] * h[j * m + i] * p[j];
            }
        }
        q
    }

    #[test]
    fn ball_subproblem_beats_random_feasible_points() {
        let m = 3;
        let h = [2.0, 0.5, 0.0, 0.5, 1.0, 0.1, 0.0, 0.1, 0.05];
        let g = [1.0, -2.0, 3.0];
        let u = [0.1, 0.0, -0.2];
        for b in [0.3, 1.0, 100.0] {
            let st = newton_subproblem(&h, m, &g, &u, Some(b)).unwrap();
            assert_eq!(st.shift, 0.0);
            let v: Vec<f64> = u.iter().zip(&st.p).map(|(a, b)| a + b).collect();
            let vn = crate::feasible::norm(&v);
            assert!(vn <= b * (1.0 + 1e-12));
            let qv = quad(&h, m, &g, &u, &v);
            let mut state = 7u64;
            for _ in 0..20000 {
                let mut z = [0.0; 3];
                for zi in &mut z {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    *zi = ((state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * b;
                }
                let zn = crate::feasible::norm(&z);
                if zn > b {
                    z.iter_mut().for_each(|x| *x *= b / zn);
                }
                assert!(quad(&h, m, &g, &u, &z) >= qv - 1e-10, "b={b}");
            }
            // KKT of the subproblem: g + H(v−u) + μ v = 0.
            for i in 0..m {
                let mut r = g[i] + st.mu * v[i];
                for j in 0..m {
                    r += h[j * m + i] * st.p[j];
                }
                assert!(r.abs() < 1e-9, "b={b} residual {r}");
            }
        }
    }

    #[test]
    fn indefinite_and_singular_matrices_are_shifted() {
        let h = [1.0, 0.0, 0.0, -0.5];
        let st = newton_subproblem(&h, 2, &[1.0, 1.0], &[0.0, 0.0], None).unwrap();
        assert!(st.shift > 0.5);
        let h = [1.0, 1.0, 1.0, 1.0]; // singular PSD
        let st = newton_subproblem(&h, 2, &[1.0, 0.0], &[0.0, 0.0], None).unwrap();
        assert!(st.shift > 0.0 && st.shift < 1e-9);
        let st = newton_subproblem(&h, 2, &[1.0, 0.0], &[0.0, 0.0], Some(1.0)).unwrap();
        assert!((crate::feasible::norm(&st.p) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn non_finite_models_have_no_step() {
        let h = [1.0, 0.0, 0.0, f64::INFINITY];
        assert!(newton_subproblem(&h, 2, &[1.0, 1.0], &[0.0, 0.0], None).is_none());
        let h = [1.0, 0.0, 0.0, 1.0];
        assert!(newton_subproblem(&h, 2, &[f64::NAN, 1.0], &[0.0, 0.0], Some(1.0)).is_none());
    }
}

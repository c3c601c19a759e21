//! The column scales of the features, which make the solvers' size tests and preconditioning
//! independent of the units of the features.
//!
//! With `m_j = (1/W) Σ_i w_i x_ij²` (the weighted column second moments) and `c_j = √m_j`:
//!
//! * **sizes** of steps and iterates are measured in the norm `‖v‖_c = ‖c ∘ v‖` — the root mean
//!   square change of a score `x_iᵀv` if the columns were uncorrelated — so "a negligible step",
//!   "a step too long to trust" and "an iterate running off to infinity" mean the same for
//!   features in metres or in nanometres, and for a column a million times larger than another;
//! * **preconditioning**: when the moments spread more than [`SCALING_SPREAD`], L-BFGS's initial
//!   inverse Hessian and Newton-CG's conjugate gradients use `D = diag(1/m_j)` (floored at
//!   `10⁻¹²·max m`), restricted to the working subspace by the oblique projection
//!   `M = D − DC(CᵀDC)⁻¹CᵀD` (`C` the normals of the active
//!   constraints: `1` under the sum-zero constraint, `θ` on the sphere of the ball), which is the
//!   inverse of `diag(m)` on that subspace.
//!
//! The moments come from a fixed sample of [`SCALING_SAMPLE_ROWS`] rows when the objective
//! offers one and the sampled columns are all non-zero with a spread below half of
//! [`SCALING_SPREAD`]; otherwise from a pass over `X` (counted in
//! [`Counts::setup_passes`](super::Counts::setup_passes)). A column that is zero
//! has `c_j = 0`: a step along it changes no score.

use super::SolveReport;
use crate::feasible::norm;
use crate::objective::SmoothObjective;

/// Column moment spread (`max m / min m`) beyond which the solvers precondition.
pub(crate) const SCALING_SPREAD: f64 = 10.0;

/// Rows of the sample on which the column scales are first taken.
pub const SCALING_SAMPLE_ROWS: usize = 16_384;

/// Moments below this fraction of the largest are floored there in the preconditioner.
const FLOOR: f64 = 1e-12;

/// `hi / lo` of the moments `m` (with `lo` floored at `FLOOR·hi`), `None` if none is positive.
fn spread(m: &[f64]) -> Option<f64> {
    let hi = m.iter().cloned().fold(0.0, f64::max);
    if !(hi > 0.0 && hi.is_finite()) {
        return None;
    }
    let lo = m.iter().cloned().fold(f64::INFINITY, f64::min).max(FLOOR * hi);
    Some(hi / lo)
}

/// The column scales of one objective (module docs).
#[derive(Debug, Clone)]
pub(crate) struct ColumnScales {
    /// `c_j = √m_j`.
    c: Vec<f64>,
    /// `1/max(m_j, FLOOR·max m)` when the moments spread more than [`SCALING_SPREAD`]: in the
    /// units of `θ²` per unit of the loss's curvature, so `−D∇F` is a step of the right size
    /// for every column (about a diagonal Newton step when `ℓ'' ≈ 1`).
    precond: Option<Vec<f64>>,
}

impl ColumnScales {
    /// The scales of `obj` (module docs); a full pass is counted in `rep.setup_passes`.
    pub fn of<O: SmoothObjective>(obj: &O, rep: &mut SolveReport) -> ColumnScales {
        let sampled = obj
            .column_second_moments_sample(SCALING_SAMPLE_ROWS)
            .filter(|m| m.iter().all(|&v| v > 0.0) && spread(m).is_some_and(|r| r <= 0.5 * SCALING_SPREAD));
        let (m, full) = match sampled {
            Some(m) => (m, false),
            None => {
                rep.counts.setup_passes += 1;
                (obj.column_second_moments(), true)
            }
        };
        let precond = match (full, spread(&m)) {
            (true, Some(r)) if r > SCALING_SPREAD => {
                let hi = m.iter().cloned().fold(0.0, f64::max);
                Some(m.iter().map(|v| 1.0 / v.max(FLOOR * hi)).collect())
            }
            _ => None,
        };
        let c = m
            .iter()
            .map(|v| if v.is_finite() { v.max(0.0).sqrt() } else { 0.0 })
            .collect();
        ColumnScales { c, precond }
    }
    /// `‖c ∘ v‖`.
    pub fn norm(&self, v: &[f64]) -> f64 {
        let w: Vec<f64> = self.c.iter().zip(v).map(|(c, x)| c * x).collect();
        norm(&w)
    }
    /// `max(1, ‖c ∘ v‖)`: the size below which a step is judged in absolute terms.
    pub fn size(&self, v: &[f64]) -> f64 {
        self.norm(v).max(1.0)
    }
    /// The diagonal `D` of the preconditioner (relative scale), when the columns need one.
    pub(crate) fn preconditioner(&self) -> Option<&[f64]> {
        self.precond.as_deref()
    }
}

/// `out = M v`, `M = D − DC(CᵀDC)⁻¹CᵀD` for `D = diag(dg)` and the constraint normals `normals`
/// (at most two, linearly independent; module docs). For `v` in the working subspace
/// `{x : Cᵀx = 0}` this is the inverse of `diag(1/dg)` on that subspace, and `Cᵀ(Mv) = 0`.
pub(crate) fn apply_preconditioner(dg: &[f64], normals: &[&[f64]], v: &[f64], out: &mut [f64]) {
    out.iter_mut().zip(dg.iter().zip(v)).for_each(|(o, (a, b))| *o = a * b);
    if normals.is_empty() {
        return;
    }
    let dc: Vec<Vec<f64>> = normals
        .iter()
        .map(|c| c.iter().zip(dg).map(|(x, a)| x * a).collect())
        .collect();
    let dc: Vec<&[f64]> = dc.iter().map(|c| c.as_slice()).collect();
    oblique_project(out, &dc, normals);
}

/// `out ← out − AC(CᵀAC)⁻¹Cᵀout` for `out = Av`, `A` symmetric positive definite, given the
/// columns `AC` (`ac`) of the constraint normals `C` (`normals`, at most two, linearly
/// independent): then `out = Mv`, `M = A − AC(CᵀAC)⁻¹CᵀA`, the inverse of `A⁻¹` on the working
/// subspace `{x : Cᵀx = 0}`, and `Cᵀout = 0`. A singular `CᵀAC` leaves `out` unprojected along
/// the dependent normal (callers project again).
pub(crate) fn oblique_project(out: &mut [f64], ac: &[&[f64]], normals: &[&[f64]]) {
    let k = normals.len();
    if k == 0 {
        return;
    }
    debug_assert!(k <= 2 && ac.len() == k);
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut g = [[0.0f64; 2]; 2];
    let mut r = [0.0f64; 2];
    for i in 0..k {
        for j in 0..k {
            g[i][j] = dot(normals[i], ac[j]);
        }
        r[i] = dot(normals[i], out);
    }
    // Solve the k × k system (k ≤ 2) by Cramer's rule.
    let y = if k == 1 {
        if g[0][0] > 0.0 {
            [r[0] / g[0][0], 0.0]
        } else {
            return;
        }
    } else {
        let det = g[0][0] * g[1][1] - g[0][1] * g[1][0];
        if !(det.abs() > 1e-14 * (g[0][0] * g[1][1]).abs()) {
            if g[0][0] > 0.0 {
                [r[0] / g[0][0], 0.0]
            } else {
                return;
            }
        } else {
            [
                (r[0] * g[1][1] - r[1] * g[0][1]) / det,
                (g[0][0] * r[1] - g[1][0] * r[0]) / det,
            ]
        }
    };
    for (i, col) in ac.iter().enumerate() {
        out.iter_mut().zip(col.iter()).for_each(|(o, c)| *o -= y[i] * c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oblique_projection_inverts_the_diagonal_on_the_subspace() {
        // On {1ᵀx = 0, θᵀx = 0}: M diag(1/dg) x = x for x in the subspace, and Cᵀ M v = 0.
        let dg = [1.0, 1e-4, 3.0, 0.5];
        let ones = [1.0; 4];
        let theta = [0.3, -0.5, 0.1, 0.1];
        let normals: [&[f64]; 2] = [&ones, &theta];
        // A vector in the subspace: project an arbitrary one orthogonally.
        let mut x = [0.7, -0.2, 0.4, 1.1];
        for _ in 0..50 {
            for c in normals {
                let f = x.iter().zip(c).map(|(a, b)| a * b).sum::<f64>() / c.iter().map(|v| v * v).sum::<f64>();
                x.iter_mut().zip(c).for_each(|(a, b)| *a -= f * b);
            }
        }
        // v = P diag(1/dg) x (the gradient of ½xᵀdiag(1/dg)x on the subspace) — M v must give x.
        let mut v: Vec<f64> = x.iter().zip(&dg).map(|(a, b)| a / b).collect();
        let mut out = vec![0.0; 4];
        apply_preconditioner(&dg, &normals, &v, &mut out);
        for (o, want) in out.iter().zip(&x) {
            assert!((o - want).abs() < 1e-12, "{out:?} vs {x:?}");
        }
        // Any v: the result is in the subspace.
        v = vec![1.0, 2.0, -3.0, 0.5];
        apply_preconditioner(&dg, &normals, &v, &mut out);
        for c in normals {
            let s: f64 = out.iter().zip(c).map(|(a, b)| a * b).sum();
            assert!(s.abs() < 1e-12, "{s}");
        }
        // One normal, and none.
        apply_preconditioner(&dg, &[&ones], &v, &mut out);
        assert!(out.iter().sum::<f64>().abs() < 1e-12);
        apply_preconditioner(&dg, &[], &v, &mut out);
        assert_eq!(out, vec![1.0, 2e-4, -9.0, 0.25]);
    }
}

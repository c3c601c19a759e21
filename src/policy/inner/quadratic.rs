//! The Newton step of the smoothed dual: `min_{θ ∈ C} ⟨g, θ − θ_k⟩ + ½(θ − θ_k)ᵀ(H + νI)(θ − θ_k)`
//! over the confidence set, for a positive semi-definite `H` and `ν > 0`.
//!
//! In the set's eigen coordinates (`ẑ`, where the ellipsoid is `‖ẑ − ĉ‖²_Λ ≤ r²` and the ball
//! `‖ẑ‖ ≤ B`) the Lagrangian's stationary point for multipliers `(μ₁, μ₂)` solves
//! `(P + μ₁Λ)w = −b` with `w = ẑ − ĉ`, `P = Ĥ + (ν + μ₂)I` and
//! `b = ĝ + (Ĥ + νI)(ĉ − ẑ_k) + μ₂ĉ`. With `K = Λ^{−1/2}PΛ^{−1/2} = VΩVᵀ` and
//! `β = VᵀΛ^{−1/2}b`, `‖w‖²_Λ = Σ_j β_j²/(ω_j + μ₁)²` is decreasing in `μ₁`: the ellipsoid's
//! multiplier is its root at `r²` (or 0 when the point is inside). The ball's multiplier is the
//! root of the non-increasing `‖ẑ(μ₁*(μ₂), μ₂)‖² − B²` (the dual is concave), as in the linear
//! inner minimum. The answer is pulled into `C` exactly as the linear one is; its accuracy only
//! affects the speed of the outer iteration, never its certificate.

use super::{eigh, InnerSolver};
use crate::math::dot;
use crate::math::roots::root_decreasing;

/// A Newton step on the confidence set.
#[derive(Debug, Clone)]
pub(crate) struct QuadraticStep {
    /// The minimiser, in `C` (ambient coordinates).
    pub theta: Vec<f64>,
    /// The model's change `⟨g, δ⟩ + ½δᵀHδ` at `δ = θ − θ_k` (≤ 0 up to rounding).
    pub model: f64,
}

/// `E M Eᵀ` for the linear map `E = to_eig` (`k × d`) and a symmetric row-major `d × d` `M`.
fn congruence(s: &InnerSolver, m: &[f64]) -> Vec<f64> {
    let (d, k) = (s.d, s.k);
    // W = E M (k × d), column by column.
    let mut w = vec![0.0; k * d];
    let mut col = vec![0.0; d];
    for j in 0..d {
        col.iter_mut().enumerate().for_each(|(i, c)| *c = m[i * d + j]);
        for (i, v) in s.to_eig(&col).into_iter().enumerate() {
            w[i * d + j] = v;
        }
    }
    // E Mᵀ Eᵀ = (E Wᵀ)ᵀ, row by row of W.
    let mut out = vec![0.0; k * k];
    for i in 0..k {
        let row = s.to_eig(&w[i * d..(i + 1) * d]);
        out[i * k..(i + 1) * k].copy_from_slice(&row);
    }
    // Symmetrise the rounding.
    for i in 0..k {
        for j in 0..i {
            let v = 0.5 * (out[i * k + j] + out[j * k + i]);
            out[i * k + j] = v;
            out[j * k + i] = v;
        }
    }
    out
}

fn matvec(a: &[f64], x: &[f64]) -> Vec<f64> {
    a.chunks_exact(x.len()).map(|r| dot(r, x)).collect()
}

impl InnerSolver {
    /// The Newton step (module docs) from `theta_k` (in `C`) with gradient `g` and Hessian `h`
    /// (row-major `d × d`, positive semi-definite), regularised by `ν = nu_rel·tr(H)/d` (and a
    /// floor relative to `‖g‖` so that `H = 0` gives the proximal linear step).
    pub(crate) fn minimize_quadratic(&self, theta_k: &[f64], g: &[f64], h: &[f64], nu_rel: f64) -> QuadraticStep {
        let k = self.k;
        let zk = self.to_eig(theta_k);
        let gh = self.to_eig(g);
        let hh = congruence(self, h);
        let tr: f64 = (0..k).map(|i| hh[i * k + i]).sum::<f64>() / k as f64;
        let nu = (nu_rel * tr.max(0.0)).max(1e-12 * dot(&gh, &gh).sqrt() / self.max_norm_bound().max(1e-300));
        let nu = if nu > 0.0 && nu.is_finite() { nu } else { 1e-300 };
        let finish = |z: Vec<f64>| -> QuadraticStep {
            let z = if z.iter().all(|v| v.is_finite()) {
                self.repair(z)
            } else {
                self.slater.clone()
            };
            let dz: Vec<f64> = z.iter().zip(&zk).map(|(a, b)| a - b).collect();
            let model = dot(&gh, &dz) + 0.5 * dot(&dz, &matvec(&hh, &dz));
            QuadraticStep {
                theta: self.eig_to_ambient(&z),
                model,
            }
        };
        if self.r <= 0.0 {
            return finish(self.chat.clone());
        }
        let inv_sqrt: Vec<f64> = self.lam.iter().map(|l| 1.0 / l.sqrt()).collect();
        // (Ĥ + νI)(ĉ − ẑ_k) + ĝ.
        let dc: Vec<f64> = self.chat.iter().zip(&zk).map(|(c, z)| c - z).collect();
        let mut b0 = matvec(&hh, &dc);
        b0.iter_mut().zip(&dc).zip(&gh).for_each(|((b, d), g)| *b += nu * d + g);
        let r2 = self.r * self.r;
        // The stationary point for μ₂, with the ellipsoid's multiplier chosen for it.
        let point = |mu2: f64| -> Option<Vec<f64>> {
            let mut kk = vec![0.0; k * k];
            for i in 0..k {
                for j in 0..k {
                    let p = hh[i * k + j] + if i == j { nu + mu2 } else { 0.0 };
                    kk[i * k + j] = inv_sqrt[i] * p * inv_sqrt[j];
                }
            }
            let (om, v) = eigh(&kk, k).ok()?;
            let bs: Vec<f64> = (0..k).map(|i| inv_sqrt[i] * (b0[i] + mu2 * self.chat[i])).collect();
            // β = Vᵀ bs (column j of V = eigenvector j).
            let beta: Vec<f64> = (0..k).map(|j| (0..k).map(|i| v[i * k + j] * bs[i]).sum()).collect();
            let phi = |mu1: f64| -> f64 {
                beta.iter()
                    .zip(&om)
                    .map(|(b, o)| b * b / ((o + mu1) * (o + mu1)))
                    .sum::<f64>()
                    - r2
            };
            let f0 = phi(0.0);
            let mu1 = if f0 <= 0.0 {
                0.0
            } else {
                let scale = beta.iter().map(|b| b * b).sum::<f64>().sqrt() / self.r;
                root_decreasing(phi, f0, scale.max(f64::MIN_POSITIVE))?
            };
            // y = −V (β/(ω + μ₁)), w = Λ^{−1/2} y, ẑ = ĉ + w.
            let c: Vec<f64> = beta.iter().zip(&om).map(|(b, o)| b / (o + mu1)).collect();
            Some(
                (0..k)
                    .map(|i| self.chat[i] - inv_sqrt[i] * dot(&v[i * k..(i + 1) * k], &c))
                    .collect(),
            )
        };
        let Some(z0) = point(0.0) else {
            return finish(self.slater.clone());
        };
        let bb = match self.ball {
            Some(bb) if dot(&z0, &z0) > bb * bb => bb,
            _ => return finish(z0),
        };
        let psi = |mu2: f64| point(mu2).map_or(f64::NAN, |z| dot(&z, &z) - bb * bb);
        let scale = tr.max(0.0) + nu + dot(&gh, &gh).sqrt() / bb;
        match root_decreasing(psi, dot(&z0, &z0) - bb * bb, scale).and_then(point) {
            Some(z) => finish(z),
            None => finish(z0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::InnerSolver;
    use crate::math::dot;

    /// A small set with the ball binding, and a brute-force check of the step: feasible, and no
    /// feasible point on a fine random cloud (pulled into the set) has a lower model value.
    #[test]
    fn newton_step_is_the_constrained_minimiser() {
        let c = [0.6, -0.3, 0.2];
        let m = [2.0, 0.3, 0.0, 0.3, 1.0, 0.1, 0.0, 0.1, 0.05];
        for (ball, sum_zero) in [
            (Some(0.8), false),
            (None, false),
            (Some(0.9), true),
            (Some(10.0), false),
        ] {
            let s = InnerSolver::new(&c, &m, 0.5, sum_zero, ball).unwrap().unwrap();
            let contains = |t: &[f64]| {
                let (ce, cb) = s.constraints(&s.to_eig(t));
                ce <= 1e-12 && cb <= 1e-12 && (!sum_zero || t.iter().sum::<f64>().abs() < 1e-12)
            };
            let theta_k = s.minimize(&[0.3, 0.2, -0.5]).theta;
            let g = [1.0, -2.0, 0.5];
            let h = [4.0, 1.0, 0.0, 1.0, 3.0, 0.5, 0.0, 0.5, 0.2];
            let step = s.minimize_quadratic(&theta_k, &g, &h, 1e-12);
            let model = |t: &[f64]| {
                let dz: Vec<f64> = t.iter().zip(&theta_k).map(|(a, b)| a - b).collect();
                let hd: Vec<f64> = h.chunks(3).map(|r| dot(r, &dz)).collect();
                dot(&g, &dz) + 0.5 * dot(&dz, &hd)
            };
            assert!(contains(&step.theta), "{ball:?} {sum_zero}: step outside the set");
            assert!((model(&step.theta) - step.model).abs() < 1e-12);
            // Random feasible points: none better (up to the solver's tolerance).
            let mut seed = 7u64;
            let mut rnd = || {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            };
            for _ in 0..20000 {
                let mut t: Vec<f64> = step.theta.iter().map(|v| v + 0.3 * rnd()).collect();
                if sum_zero {
                    let mean = t.iter().sum::<f64>() / 3.0;
                    t.iter_mut().for_each(|v| *v -= mean);
                }
                if contains(&t) {
                    assert!(
                        model(&t) >= step.model - 1e-9,
                        "{ball:?} {sum_zero}: {} < {}",
                        model(&t),
                        step.model
                    );
                }
            }
        }
    }
}

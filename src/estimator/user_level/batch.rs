//! The user batch of a step and the per-user gradients (Zhang et al. (2025), Alg. 2 and 4):
//! which users a step samples ([`UserSampler`]), which of their records it reads, and the
//! per-user averaged gradient `g_u(θ) = (1/|S_u|) Σ_{j∈S_u} ∇ℓ(θ; x_j, y_j)`.

use crate::data::{PairwiseView, UserIndex};
use crate::loss::Loss;
use crate::mechanism::uniform_f64;
use rand::Rng;

/// How users enter a step's batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UserSampler {
    /// Each user independently with probability `q = ñ/n` (what the accountant assumes).
    #[default]
    Poisson,
    /// A uniformly random subset of exactly `round(ñ)` users (the paper's pseudo-code). The
    /// Poisson accountant does not cover it: the run gets no guarantee unless `ñ = n`.
    FixedSize,
}

impl UserSampler {
    /// Name (reports).
    pub fn name(&self) -> &'static str {
        match self {
            UserSampler::Poisson => "poisson",
            UserSampler::FixedSize => "fixed-size",
        }
    }
}

/// The averaged gradient of the rows `rows` (one user's records) for the pairwise loss `ℓ`:
/// `out = (1/|rows|) Σ_{i∈rows} ℓ'(x_iᵀθ; y_i) x_i` (`buf`: one row). For the logistic (BTL)
/// loss `ℓ' = σ(x_iᵀθ) − y_i`.
pub(super) fn user_gradient<L: Loss>(
    loss: &L,
    data: &PairwiseView<'_>,
    rows: &[usize],
    theta: &[f64],
    buf: &mut [f64],
    out: &mut [f64],
) {
    out.iter_mut().for_each(|v| *v = 0.0);
    let y = data.y();
    for &i in rows {
        data.row_into(i, buf);
        let t: f64 = buf.iter().zip(theta).map(|(a, b)| a * b).sum();
        let r = loss.d1(t, y[i]);
        for (o, x) in out.iter_mut().zip(buf.iter()) {
            *o += r * x;
        }
    }
    let k = rows.len() as f64;
    out.iter_mut().for_each(|v| *v /= k);
}

/// The users of one step among `pool` (in pool order).
pub(super) fn sample_users<R: Rng + ?Sized>(
    pool: &[usize],
    batch: f64,
    sampler: UserSampler,
    rng: &mut R,
) -> Vec<usize> {
    let n = pool.len();
    if batch >= n as f64 {
        return pool.to_vec();
    }
    match sampler {
        UserSampler::Poisson => {
            let q = batch / n as f64;
            pool.iter().copied().filter(|_| uniform_f64(rng) < q).collect()
        }
        UserSampler::FixedSize => {
            let k = (batch.round() as usize).clamp(1, n);
            let mut idx: Vec<usize> = (0..n).collect();
            for j in 0..k {
                let r = j + ((uniform_f64(rng) * (n - j) as f64) as usize).min(n - j - 1);
                idx.swap(j, r);
            }
            let mut chosen: Vec<usize> = idx[..k].iter().map(|&j| pool[j]).collect();
            chosen.sort_unstable();
            chosen
        }
    }
}

/// The rows of user `u` used in a step: all of them, or `k` drawn without replacement.
pub(super) fn user_rows<R: Rng + ?Sized>(users: &UserIndex, u: usize, k: Option<usize>, rng: &mut R) -> Vec<usize> {
    let rows: Vec<usize> = users.rows(u).collect();
    match k {
        Some(k) if k < rows.len() => {
            let mut r = rows;
            let n = r.len();
            for j in 0..k {
                let s = j + ((uniform_f64(rng) * (n - j) as f64) as usize).min(n - j - 1);
                r.swap(j, s);
            }
            r.truncate(k);
            r.sort_unstable();
            r
        }
        _ => rows,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::loss::{Logistic, LossOut};
    use crate::math::simd::scalar::sigmoid;
    use pulp::Simd;

    /// The logistic loss with the derivative the user-level loops wrote by hand before they ran
    /// on the SGD engine, `ℓ'(t; y) = σ(t) − y`. For `y = 1` it rounds differently from
    /// [`Logistic::d1`], `−σ(−t)` (which does not cancel when `σ(t)` is close to 1).
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct HandWritten;

    impl Loss for HandWritten {
        const CONVEX: bool = true;
        const BOUNDED_BELOW: bool = true;
        fn name(&self) -> &'static str {
            "hand-written-btl"
        }
        fn value(&self, t: f64, y: u8) -> f64 {
            Logistic.value(t, y)
        }
        fn d1(&self, t: f64, y: u8) -> f64 {
            sigmoid(t) - f64::from(y)
        }
        fn d2(&self, t: f64, y: u8) -> f64 {
            Logistic.d2(t, y)
        }
        fn recession(&self, t: f64, y: u8) -> f64 {
            Logistic.recession(t, y)
        }
        fn eval_simd<S: Simd>(&self, simd: S, t: &[f64], y: &[f64], out: LossOut<'_>) {
            Logistic.eval_simd(simd, t, y, out)
        }
        fn curvature_sup(&self) -> f64 {
            0.25
        }
        fn privacy_scale(&self) -> Option<f64> {
            Logistic.privacy_scale()
        }
        fn link_curvature_floor(&self, tmax: f64) -> Option<f64> {
            Logistic.link_curvature_floor(tmax)
        }
    }

    /// `θ` as hex bits.
    pub(crate) fn hex(theta: &[f64]) -> String {
        let h: Vec<String> = theta.iter().map(|v| format!("{:016x}", v.to_bits())).collect();
        h.join(" ")
    }

    /// The logistic loss's `ℓ'` and the hand-written one agree to within an ulp of 1 (they are
    /// the same function; only the rounding at `y = 1` differs).
    #[test]
    fn the_logistic_derivative_is_the_hand_written_one() {
        for k in -400..=400 {
            let t = k as f64 * 0.1;
            for y in [0u8, 1] {
                let (a, b) = (Logistic.d1(t, y), HandWritten.d1(t, y));
                assert!((a - b).abs() <= f64::EPSILON, "t = {t}, y = {y}: {a} vs {b}");
                if y == 0 {
                    assert_eq!(a.to_bits(), b.to_bits());
                }
            }
        }
    }
}

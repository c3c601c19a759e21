//! The user batch of a step and the per-user gradients (Zhang et al. (2025), Alg. 2 and 4):
//! which users a step samples, which of their records it reads, and the per-user averaged
//! gradient `g_u(θ) = (1/|S_u|) Σ_{j∈S_u} ∇ℓ(θ; x_j, y_j)`.

use super::UserSampler;
use crate::data::{PairwiseView, UserIndex};
use crate::loss::Loss;
use crate::mechanism::uniform_f64;
use rand::Rng;

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

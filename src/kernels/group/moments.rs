//! Data moments of K-wise data: within-sample second moments and the pair covariance.

use super::{par_for, stream_blocks};
use crate::data::GroupView;
use crate::kernels::gram;
use crate::par::{tree_reduce, Par};

/// `m_j = Σ_i w_i (1/K) Σ_k (φ_ikj − φ̄_ij)²` (sum over samples; `φ̄_i` the sample's mean row):
/// the scale of the `j`-th diagonal entry of a Plackett–Luce Hessian (features enter only
/// through differences within a sample, so the within-sample spread is what matters).
pub(crate) fn centered_second_moments(v: &GroupView<'_>, par: Par) -> Vec<f64> {
    let (k, d) = (v.k(), v.d());
    let blocks = stream_blocks(v);
    let leaf = |b: usize| {
        let mut m = vec![0.0; d];
        let mut mean = vec![0.0; d];
        for i in blocks.range(b) {
            mean.fill(0.0);
            for r in 0..k {
                mean.iter_mut().zip(v.row(i, r)).for_each(|(a, x)| *a += x);
            }
            mean.iter_mut().for_each(|a| *a /= k as f64);
            let w = v.weight(i) / k as f64;
            for r in 0..k {
                for ((mj, x), mu) in m.iter_mut().zip(v.row(i, r)).zip(&mean) {
                    let c = x - mu;
                    *mj += w * c * c;
                }
            }
        }
        m
    };
    let combine = |mut a: Vec<f64>, b: Vec<f64>| {
        a.iter_mut().zip(&b).for_each(|(p, q)| *p += q);
        a
    };
    tree_reduce(blocks.count(), par_for(v, par), &leaf, &combine)
}

/// `Σ_{D_K}` of the Plackett–Luce theory ("Provable protection of human judgements" (anon., 2025),
/// Sec. 4.2): `(1/W) Σ_i w_i (2/(K(K−1))) Σ_{k<l} (φ_ik − φ_il)(φ_ik − φ_il)ᵀ`, computed as `(1/W)
/// Σ_i w_i (2/(K−1)) Σ_k (φ_ik − φ̄_i)(φ_ik − φ̄_i)ᵀ` (the identity `Σ_{k<l} x_kl x_klᵀ = K Σ_k
/// (φ_k − φ̄)(φ_k − φ̄)ᵀ`). Column-major `d × d`, both triangles.
pub(crate) fn pair_covariance(v: &GroupView<'_>, par: Par) -> Vec<f64> {
    let (k, d) = (v.k(), v.d());
    let blocks = stream_blocks(v);
    let leaf = |b: usize| {
        let r = blocks.range(b);
        let mut rows = Vec::with_capacity(r.len() * k * d);
        let mut mean = vec![0.0; d];
        for i in r {
            mean.fill(0.0);
            for q in 0..k {
                mean.iter_mut().zip(v.row(i, q)).for_each(|(a, x)| *a += x);
            }
            mean.iter_mut().for_each(|a| *a /= k as f64);
            let s = (2.0 * v.weight(i) / (k as f64 - 1.0)).sqrt();
            for q in 0..k {
                rows.extend(v.row(i, q).iter().zip(&mean).map(|(x, mu)| s * (x - mu)));
            }
        }
        let mut g = vec![0.0; d * d];
        gram::syrk_lower(&mut g, &rows, rows.len() / d, d, 1.0, false);
        g
    };
    let combine = |mut a: Vec<f64>, b: Vec<f64>| {
        for j in 0..d {
            for i in j..d {
                a[j * d + i] += b[j * d + i];
            }
        }
        a
    };
    let gl = tree_reduce(blocks.count(), par_for(v, par), &leaf, &combine);
    let w = v.total_weight();
    let mut g = vec![0.0; d * d];
    for j in 0..d {
        for i in j..d {
            let x = gl[j * d + i] / w;
            g[j * d + i] = x;
            g[i * d + j] = x;
        }
    }
    g
}

//! Ill-conditioned pairwise designs: BTL comparisons whose features have a rotated power-law
//! covariance, the shape of embeddings from a language model (a few dominant directions, a long
//! tail, no preferred axes).

use crate::data::PairwiseData;
use crate::error::{Error, Result};
use crate::math::simd::scalar::sigmoid;
use crate::mechanism::uniform_f64;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// The eigenvalues `λ_k = c·k^{−p}`, `k = 1, …, d`, `p = ln κ / ln d`, `c` such that
/// `Σ λ_k = d`: condition number `λ_1/λ_d = κ`, the trace of `I_d`.
fn power_law_spectrum(d: usize, condition: f64) -> Vec<f64> {
    let p = if d > 1 { condition.ln() / (d as f64).ln() } else { 0.0 };
    let raw: Vec<f64> = (1..=d).map(|k| (k as f64).powf(-p)).collect();
    let c = d as f64 / raw.iter().sum::<f64>();
    raw.into_iter().map(|l| c * l).collect()
}

/// `v ← H v / √d` in place, `H` the `d × d` Walsh–Hadamard matrix (`d` a power of two;
/// entries `±1`, `HᵀH = d I`): an orthogonal map that spreads every axis over all `d`
/// coordinates, in `d log₂ d` additions.
fn hadamard(v: &mut [f64]) {
    let d = v.len();
    let mut h = 1;
    while h < d {
        for block in v.chunks_exact_mut(2 * h) {
            let (a, b) = block.split_at_mut(h);
            for (x, y) in a.iter_mut().zip(b.iter_mut()) {
                let (s, t) = (*x + *y, *x - *y);
                *x = s;
                *y = t;
            }
        }
        h *= 2;
    }
    let scale = 1.0 / (d as f64).sqrt();
    v.iter_mut().for_each(|x| *x *= scale);
}

/// `n` BTL comparisons with parameter `θ = theta` on features with a rotated power-law
/// covariance of condition number `condition`:
///
/// ```text
/// Q = H D / √d   (H Walsh–Hadamard, D = diag(s), s_j = ±1 random signs: orthogonal),
/// λ_k ∝ k^{−ln κ/ln d},  Σ λ_k = d,
/// x_i = Q Λ^{1/2} (g¹_i − g⁰_i),  g⁰_i, g¹_i ~ N(0, I_d)  ⇒  x_i ~ N(0, 2 Q Λ Qᵀ),
/// y_i ~ Bernoulli(σ(x_iᵀθ)).
/// ```
///
/// Every column has variance `2 tr(Λ)/d = 2` (`Q`'s entries all have modulus `1/√d`), so
/// column scaling leaves the condition number `κ` of `XᵀX/n` as it is — the design on which
/// first-order methods and diagonally preconditioned Krylov methods need `O(√κ)` passes.
/// `condition = 1` gives [`btl_pairs`](super::btl_pairs)'s isotropic law (different draws).
///
/// **Draw order** (fixed): `d` signs `s_j` (one `next_u64()` each, the low bit), then rows
/// `i = 0, …, n−1` in turn as in [`btl_pairs`](super::btl_pairs): `d` standard normals for
/// `g⁰_i`, `d` for `g¹_i`, one [`uniform_f64`] for `y_i`. Nested: the first `m` rows of an
/// `n`-row draw are the `m`-row draw.
///
/// # Errors
/// [`Error::InvalidParam`] if `n = 0`, `theta` is empty, non-finite or of a length that is not
/// a power of two, `condition` is not finite and `≥ 1`, or `n·d` overflows.
pub fn power_law_pairs<R: Rng + ?Sized>(n: usize, theta: &[f64], condition: f64, rng: &mut R) -> Result<PairwiseData> {
    let d = theta.len();
    if n == 0 {
        return Err(Error::param("n", "must be >= 1, got 0"));
    }
    if d == 0 || !d.is_power_of_two() {
        return Err(Error::param(
            "theta",
            format!("has length {d}; the rotated design needs a power of two (the Walsh–Hadamard rotation)"),
        ));
    }
    if let Some(j) = theta.iter().position(|v| !v.is_finite()) {
        return Err(Error::param("theta", format!("entry {j} is not finite ({})", theta[j])));
    }
    if !(condition.is_finite() && condition >= 1.0) {
        return Err(Error::param(
            "condition",
            format!("must be finite and >= 1, got {condition}"),
        ));
    }
    let nd = n
        .checked_mul(d)
        .ok_or_else(|| Error::param("n", format!("n·d = {n}·{d} overflows")))?;
    let root: Vec<f64> = power_law_spectrum(d, condition).into_iter().map(f64::sqrt).collect();
    let signs: Vec<f64> = (0..d)
        .map(|_| if rng.next_u64() & 1 == 1 { -1.0 } else { 1.0 })
        .collect();
    let mut x = Vec::with_capacity(nd);
    let mut y = Vec::with_capacity(n);
    let mut g0 = vec![0.0; d];
    let mut row = vec![0.0; d];
    for _ in 0..n {
        for g in g0.iter_mut() {
            *g = StandardNormal.sample(rng);
        }
        for ((r, &a), (&l, &s)) in row.iter_mut().zip(&g0).zip(root.iter().zip(&signs)) {
            let b: f64 = StandardNormal.sample(rng);
            *r = s * l * (b - a);
        }
        hadamard(&mut row);
        let t: f64 = row.iter().zip(theta).map(|(r, th)| r * th).sum();
        x.extend_from_slice(&row);
        y.push(u8::from(uniform_f64(rng) < sigmoid(t)));
    }
    Ok(PairwiseData {
        x,
        y,
        weights: None,
        n,
        d,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    #[test]
    fn the_hadamard_rotation_is_orthogonal_and_spreads_every_axis() {
        let d = 16;
        let cols: Vec<Vec<f64>> = (0..d)
            .map(|k| {
                let mut e = vec![0.0; d];
                e[k] = 1.0;
                hadamard(&mut e);
                e
            })
            .collect();
        for a in 0..d {
            assert!(cols[a].iter().all(|v| (v.abs() - 0.25).abs() < 1e-15));
            for b in 0..d {
                let dot: f64 = cols[a].iter().zip(&cols[b]).map(|(x, y)| x * y).sum();
                assert!((dot - f64::from(u8::from(a == b))).abs() < 1e-14, "{a} {b} {dot}");
            }
        }
    }

    #[test]
    fn the_spectrum_has_the_condition_and_trace_asked_for() {
        let l = power_law_spectrum(64, 1e4);
        assert!((l[0] / l[63] / 1e4 - 1.0).abs() < 1e-12);
        assert!((l.iter().sum::<f64>() / 64.0 - 1.0).abs() < 1e-12);
        assert!(l.windows(2).all(|w| w[0] > w[1]));
    }

    #[test]
    fn columns_share_one_scale_and_rows_are_nested() {
        let (n, d) = (20_000, 8);
        let theta = vec![0.0; d];
        let data = power_law_pairs(n, &theta, 100.0, &mut simulation_rng(1)).unwrap();
        // Var(x_j) = 2 for every column: the standard error of the sample variance is 2·√(2/n).
        for j in 0..d {
            let v: f64 = (0..n).map(|i| data.x[i * d + j].powi(2)).sum::<f64>() / n as f64;
            assert!((v - 2.0).abs() < 6.0 * 2.0 * (2.0 / n as f64).sqrt(), "column {j}: {v}");
        }
        let head = power_law_pairs(100, &theta, 100.0, &mut simulation_rng(1)).unwrap();
        assert_eq!(head.x, data.x[..100 * d]);
        assert_eq!(head.y, data.y[..100]);
    }

    #[test]
    fn bad_parameters_are_typed_errors() {
        let mut rng = simulation_rng(2);
        assert!(power_law_pairs(10, &[0.0; 6], 10.0, &mut rng).is_err());
        assert!(power_law_pairs(0, &[0.0; 4], 10.0, &mut rng).is_err());
        assert!(power_law_pairs(10, &[0.0; 4], 0.5, &mut rng).is_err());
        assert!(power_law_pairs(10, &[0.0; 4], f64::NAN, &mut rng).is_err());
        assert!(power_law_pairs(10, &[f64::INFINITY, 0.0], 2.0, &mut rng).is_err());
    }
}

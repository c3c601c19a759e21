//! K-class data from a Gaussian mixture whose class posterior is exactly a linear softmax
//! model (for the label-private convex learning experiments: a CPU-sized analogue of those of
//! Ghazi et al. (2021)).

use crate::data::group::MAX_K;
use crate::error::{Error, Result};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// Synthetic K-class data and its true model (see [`class_mixture`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassMixture {
    /// Features, `n × d` row-major.
    pub x: Vec<f64>,
    /// Classes in `0..K`.
    pub y: Vec<u8>,
    /// Samples.
    pub n: usize,
    /// Features per sample.
    pub d: usize,
    /// Classes.
    pub k: usize,
    /// The true softmax parameter `W* = M/s²` (`K × d` row-major): `P(y = k | x) =
    /// softmax(W* x)_k` exactly.
    pub w_star: Vec<f64>,
}

/// `K` class means on the sphere of radius `radius` in `ℝ^d`: Gaussian directions, normalised.
/// Draw order: `K·d` standard normals, row by row (redrawn row-wise in the probability-zero
/// event of a zero row).
///
/// # Errors
/// [`Error::InvalidParam`] unless `2 ≤ K ≤ 256`, `d ≥ 1` and `radius > 0` finite.
pub fn class_means<R: Rng + ?Sized>(k: usize, d: usize, radius: f64, rng: &mut R) -> Result<Vec<f64>> {
    if !(2..=MAX_K).contains(&k) {
        return Err(Error::param("k", format!("needs 2 ≤ K ≤ {MAX_K}, got {k}")));
    }
    if d == 0 {
        return Err(Error::param("d", "must be >= 1, got 0"));
    }
    if !(radius.is_finite() && radius > 0.0) {
        return Err(Error::param("radius", format!("must be finite and > 0, got {radius}")));
    }
    let mut m = vec![0.0; k * d];
    for row in m.chunks_exact_mut(d) {
        loop {
            for v in row.iter_mut() {
                *v = StandardNormal.sample(rng);
            }
            let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > 0.0 {
                row.iter_mut().for_each(|v| *v *= radius / norm);
                break;
            }
        }
    }
    Ok(m)
}

/// `n` samples of the mixture `y ~ Uniform{0..K−1}`, `x | y ~ N(μ_y, s² I_d)` with class means
/// `means` (`K × d`, all of the **same norm**). Then, by Bayes' rule,
///
/// `P(y = k | x) ∝ exp(μ_kᵀx/s² − ‖μ_k‖²/(2s²)) = softmax(W* x)_k`,  `W* = M/s²`,
///
/// exactly (the norm terms cancel): a well-specified linear softmax model without intercept,
/// whose population cross-entropy is minimised at `W*` (up to `W* + 1vᵀ`). The mixture has
/// clusters (one per class), so k-means on `x` recovers a useful cluster structure for the
/// histogram prior (Ghazi et al. (2021), Alg. 4).
///
/// Draw order: per sample, one `next_u64()` for the class (`⌊u·K⌋` of a 53-bit uniform), then
/// `d` standard normals. The first `m` samples of an `n`-sample draw equal the `m`-sample draw.
///
/// # Errors
/// [`Error::InvalidParam`] if `n = 0`, `noise` is not finite and `> 0`, `means` is not `K × d`
/// with `2 ≤ K ≤ 256`, or the rows of `means` differ in norm by more than `1e-9` relative.
pub fn class_mixture<R: Rng + ?Sized>(
    n: usize,
    k: usize,
    means: &[f64],
    noise: f64,
    rng: &mut R,
) -> Result<ClassMixture> {
    if n == 0 {
        return Err(Error::param("n", "must be >= 1, got 0"));
    }
    if !(2..=MAX_K).contains(&k) || means.is_empty() || !means.len().is_multiple_of(k) {
        return Err(Error::param(
            "means",
            format!(
                "needs K × d class means with 2 ≤ K ≤ {MAX_K}, got {} values for K = {k}",
                means.len()
            ),
        ));
    }
    if !(noise.is_finite() && noise > 0.0) {
        return Err(Error::param("noise", format!("must be finite and > 0, got {noise}")));
    }
    let d = means.len() / k;
    if means.iter().any(|v| !v.is_finite()) {
        return Err(Error::param("means", "must be finite"));
    }
    let norms: Vec<f64> = means
        .chunks_exact(d)
        .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
        .collect();
    let (lo, hi) = norms
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    if hi - lo > 1e-9 * hi {
        return Err(Error::param(
            "means",
            format!("the class means need equal norms for a softmax model without intercept (norms from {lo} to {hi})"),
        ));
    }
    let mut x = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let c = ((crate::mechanism::uniform_f64(rng) * k as f64) as usize).min(k - 1);
        y.push(c as u8);
        let mu = &means[c * d..(c + 1) * d];
        for &m in mu {
            let z: f64 = StandardNormal.sample(rng);
            x.push(m + noise * z);
        }
    }
    let s2 = noise * noise;
    Ok(ClassMixture {
        x,
        y,
        n,
        d,
        k,
        w_star: means.iter().map(|m| m / s2).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    #[test]
    fn labels_follow_the_softmax_posterior() {
        // Conditional on x, y ~ softmax(W* x): the mean of (1(y = k) − p_k(x)) over samples is
        // 0 within a few standard errors for every k.
        let mut rng = simulation_rng(17);
        let means = class_means(3, 2, 1.5, &mut rng).unwrap();
        let data = class_mixture(40_000, 3, &means, 1.0, &mut rng).unwrap();
        let mut sum = [0.0; 3];
        let mut var = [0.0; 3];
        for i in 0..data.n {
            let xi = &data.x[i * 2..i * 2 + 2];
            let u: Vec<f64> = (0..3)
                .map(|k| data.w_star[k * 2] * xi[0] + data.w_star[k * 2 + 1] * xi[1])
                .collect();
            let m = u.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = u.iter().map(|v| (v - m).exp()).collect();
            let s: f64 = e.iter().sum();
            for k in 0..3 {
                let p = e[k] / s;
                sum[k] += f64::from(u8::from(data.y[i] == k as u8)) - p;
                var[k] += p * (1.0 - p);
            }
        }
        for k in 0..3 {
            let z = sum[k] / var[k].sqrt();
            assert!(z.abs() < 5.0, "class {k}: z = {z}");
        }
        let again = class_mixture(100, 3, &means, 1.0, &mut simulation_rng(5)).unwrap();
        let prefix = class_mixture(60, 3, &means, 1.0, &mut simulation_rng(5)).unwrap();
        assert_eq!(&again.x[..120], &prefix.x[..]);
        assert!(class_mixture(10, 3, &[1.0, 0.0, 0.0, 2.0, 1.0, 0.0], 1.0, &mut rng).is_err());
        assert!(class_mixture(0, 3, &means, 1.0, &mut rng).is_err());
        assert!(class_mixture(10, 3, &means, 0.0, &mut rng).is_err());
    }
}

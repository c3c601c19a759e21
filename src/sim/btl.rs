//! BTL and Thurstone pairwise preference generators (Chowdhury, Zhou & Natarajan (2024), eq. 1 and
//! Sec. 4.4).

use crate::data::PairwiseData;
use crate::error::{Error, Result};
use crate::math::simd::scalar::sigmoid;
use crate::mechanism::uniform_f64;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// Standard normal CDF `Φ(t) = ½ erfc(−t/√2)` (accurate in both tails: no `1 − ·` cancellation).
#[inline]
pub(crate) fn normal_cdf(t: f64) -> f64 {
    0.5 * libm::erfc(-t * std::f64::consts::FRAC_1_SQRT_2)
}

/// `n` BTL (Bradley–Terry–Luce) comparisons with parameter `θ = theta` (Chowdhury, Zhou &
/// Natarajan (2024), eq. 1 and Sec. 6):
///
/// ```text
/// φ⁰_i, φ¹_i ~ N(0, I_d) i.i.d.,   x_i = φ¹_i − φ⁰_i ~ N(0, 2 I_d),
/// y_i ~ Bernoulli(σ(x_iᵀθ)),       σ(t) = 1/(1 + e^{−t}),
/// ```
///
/// where `y_i = 1` means action `a¹` is preferred. `d = theta.len()`; returns clear labels and no
/// weights.
///
/// **Draw order** (fixed; same seed → identical data): rows `i = 0, …, n−1` in turn; for each
/// row, `d` standard normals for `φ⁰_i` (`rand_distr::StandardNormal`, index order), then `d`
/// for `φ¹_i`, then one [`uniform_f64`] `u_i` (one `next_u64()`), and `y_i = [u_i < σ(x_iᵀθ)]`
/// with `x_iᵀθ = Σ_j x_ij θ_j` summed in index order. Hence the first `m` rows of an
/// `n`-sample draw equal the `m`-sample draw from the same generator state (nested samples).
///
/// # Errors
/// [`Error::InvalidParam`] if `n = 0`, `theta` is empty or non-finite, or `n·d` overflows.
pub fn btl_pairs<R: Rng + ?Sized>(n: usize, theta: &[f64], rng: &mut R) -> Result<PairwiseData> {
    pairs_with_link(n, theta, rng, sigmoid)
}

/// `n` Thurstone (probit) comparisons with parameter `θ = theta` (Chowdhury, Zhou & Natarajan
/// (2024), Sec. 4.4): as [`btl_pairs`], with
///
/// ```text
/// y_i ~ Bernoulli(Φ(x_iᵀθ)),   Φ(t) = ½ erfc(−t/√2)   (no √2 rescaling of t, as in the paper),
/// ```
///
/// `Φ` evaluated with `libm::erfc`. Same draw order as [`btl_pairs`] (the link is the only
/// difference, so both generators give the same features from the same generator state).
///
/// # Errors
/// As [`btl_pairs`].
pub fn thurstone_pairs<R: Rng + ?Sized>(n: usize, theta: &[f64], rng: &mut R) -> Result<PairwiseData> {
    pairs_with_link(n, theta, rng, normal_cdf)
}

fn pairs_with_link<R: Rng + ?Sized>(
    n: usize,
    theta: &[f64],
    rng: &mut R,
    link: fn(f64) -> f64,
) -> Result<PairwiseData> {
    let d = theta.len();
    if n == 0 {
        return Err(Error::param("n", "must be >= 1, got 0"));
    }
    if d == 0 {
        return Err(Error::param("theta", "is empty (d = 0)"));
    }
    if let Some(j) = theta.iter().position(|v| !v.is_finite()) {
        return Err(Error::param("theta", format!("entry {j} is not finite ({})", theta[j])));
    }
    let nd = n
        .checked_mul(d)
        .ok_or_else(|| Error::param("n", format!("n·d = {n}·{d} overflows")))?;
    let mut x = Vec::with_capacity(nd);
    let mut y = Vec::with_capacity(n);
    let mut phi0 = vec![0.0; d];
    for _ in 0..n {
        for p in phi0.iter_mut() {
            *p = StandardNormal.sample(rng);
        }
        let mut t = 0.0;
        for (&p0, &th) in phi0.iter().zip(theta) {
            let p1: f64 = StandardNormal.sample(rng);
            let xj = p1 - p0;
            t += xj * th;
            x.push(xj);
        }
        y.push(u8::from(uniform_f64(rng) < link(t)));
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
    fn normal_cdf_values() {
        assert_eq!(normal_cdf(0.0), 0.5);
        assert!((normal_cdf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-15);
        assert!((normal_cdf(-1.0) - 0.158_655_253_931_457_05).abs() < 1e-15);
        // Lower tail keeps relative accuracy: Φ(−10) = 7.619853024160527e-24.
        assert!((normal_cdf(-10.0) / 7.619_853_024_160_527e-24 - 1.0).abs() < 1e-13);
    }

    #[test]
    fn draw_order_is_as_documented() {
        let theta = [0.5, -1.0, 0.25];
        let data = btl_pairs(4, &theta, &mut simulation_rng(77)).unwrap();
        let mut rng = simulation_rng(77);
        for i in 0..4 {
            let p0: Vec<f64> = (0..3).map(|_| StandardNormal.sample(&mut rng)).collect();
            let p1: Vec<f64> = (0..3).map(|_| StandardNormal.sample(&mut rng)).collect();
            let xi: Vec<f64> = p1.iter().zip(&p0).map(|(a, b)| a - b).collect();
            assert_eq!(&data.x[3 * i..3 * i + 3], &xi[..]);
            let t: f64 = xi.iter().zip(&theta).map(|(a, b)| a * b).sum();
            assert_eq!(data.y[i], u8::from(uniform_f64(&mut rng) < sigmoid(t)));
        }
    }

    #[test]
    fn invalid_parameters() {
        let mut rng = simulation_rng(0);
        let name = |r: Result<PairwiseData>| match r {
            Err(Error::InvalidParam { name, .. }) => name,
            other => panic!("expected InvalidParam, got {other:?}"),
        };
        assert_eq!(name(btl_pairs(0, &[1.0], &mut rng)), "n");
        assert_eq!(name(btl_pairs(3, &[], &mut rng)), "theta");
        assert_eq!(name(btl_pairs(3, &[1.0, f64::NAN], &mut rng)), "theta");
        assert_eq!(name(thurstone_pairs(3, &[f64::INFINITY], &mut rng)), "theta");
        assert_eq!(name(thurstone_pairs(usize::MAX, &[1.0, 2.0], &mut rng)), "n");
    }
}

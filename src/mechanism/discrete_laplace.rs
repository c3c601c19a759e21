//! The discrete Laplace (two-sided geometric) distribution, sampled **exactly** with integer
//! arithmetic: Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy"
//! (NeurIPS 2020), Algorithm 1 (`Bernoulli(exp(−γ))` for rational `γ`) and Algorithm 2 (discrete
//! Laplace of rational scale). The same construction is used by the vetted DP libraries
//! (OpenDP, Google's differential-privacy library); it is re-implemented here from the paper.
//!
//! `Lap_Z(t)` has pmf `P(Z = z) = tanh(a/2)·e^{−a|z|}` on the integers, `a = 1/t`
//! (scipy's `dlaplace(a)`). Adding it to an integer query of
//! ℓ₁-sensitivity `Δ` is `Δ·a`-DP: a unit shift changes the pmf by at most the factor `e^a`.
//!
//! **Exactness.** No floating point touches a draw: the scale is a rational `num/den` of `u64`s,
//! every Bernoulli is `U < num` for an exactly uniform integer `U ∈ {0, …, den−1}` (rejection
//! sampling on 64-bit words), so the output distribution is exactly `Lap_Z(num/den)` (no
//! Mironov-style floating-point leak). [`DiscreteLaplace::for_privacy`] turns a real `ε` into
//! such a scale by rounding the scale **up** (`den = 2^20`), so the realised level
//! [`DiscreteLaplace::realised_eps`] never exceeds the requested one.

use crate::error::{check_eps, Error, Result};
use rand::Rng;

/// Denominator of the dyadic scale chosen by [`DiscreteLaplace::for_privacy`].
const SCALE_DEN: u64 = 1 << 20;
/// Largest numerator accepted (keeps `U + num·V` and the Bernoulli denominators in range).
const MAX_NUM: u64 = 1 << 62;

/// A uniform integer in `{0, …, n−1}` (`n ≥ 1`), exactly, by rejection on 128-bit words
/// (two `next_u64()` per attempt; acceptance probability `> 1/2`).
fn uniform_below<R: Rng + ?Sized>(n: u128, rng: &mut R) -> u128 {
    debug_assert!(n >= 1);
    if n == 1 {
        return 0;
    }
    // Accept w < zone = the largest multiple of n not above 2^128 (as zone − 1 fits in u128).
    let rem = (u128::MAX - n + 1) % n; // 2^128 mod n
    let limit = u128::MAX - rem; // accept w ≤ limit: exactly (2^128 − rem) values
    loop {
        let w = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
        if w <= limit {
            return w % n;
        }
    }
}

/// `Bernoulli(num/den)` exactly (`0 ≤ num ≤ den`, `den ≥ 1`).
fn bernoulli_ratio<R: Rng + ?Sized>(num: u128, den: u128, rng: &mut R) -> bool {
    debug_assert!(den >= 1 && num <= den);
    uniform_below(den, rng) < num
}

/// `Bernoulli(exp(−num/den))` exactly (Canonne, Kamath & Steinke 2020, Algorithm 1):
///
/// * `γ = num/den ≤ 1`: draw `A_k ~ Bernoulli(γ/k)` for `k = 1, 2, …` until the first failure
///   at `k = K`; return whether `K` is odd (`P = Σ_k (−γ)^k/k! = e^{−γ}`);
/// * `γ > 1`: `⌊γ⌋` independent `Bernoulli(e^{−1})` all succeed, then `Bernoulli(e^{−(γ−⌊γ⌋)})`.
pub(crate) fn bernoulli_exp_minus<R: Rng + ?Sized>(num: u64, den: u64, rng: &mut R) -> bool {
    debug_assert!(den >= 1);
    if num <= den {
        let mut k: u128 = 1;
        while bernoulli_ratio(u128::from(num), u128::from(den) * k, rng) {
            k += 1;
        }
        k % 2 == 1
    } else {
        for _ in 0..num / den {
            if !bernoulli_exp_minus(1, 1, rng) {
                return false;
            }
        }
        bernoulli_exp_minus(num % den, den, rng)
    }
}

/// The discrete Laplace distribution `Lap_Z(t)`, `t = num/den`, with pmf
/// `P(z) = tanh(a/2)·e^{−a|z|}`, `a = den/num` (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteLaplace {
    num: u64,
    den: u64,
}

impl DiscreteLaplace {
    /// The distribution of scale exactly `num/den` (pmf `∝ exp(−|z|·den/num)`).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (`scale`) unless `num ≥ 1`, `den ≥ 1` and `num ≤ 2^62`.
    pub fn with_scale(num: u64, den: u64) -> Result<Self> {
        if num == 0 || den == 0 || num > MAX_NUM {
            return Err(Error::param(
                "scale",
                format!("the discrete Laplace scale num/den needs 1 ≤ num ≤ 2^62 and den ≥ 1, got {num}/{den}"),
            ));
        }
        Ok(DiscreteLaplace { num, den })
    }

    /// The distribution that makes an integer query of ℓ₁-sensitivity `sensitivity` `eps`-DP:
    /// scale `t ≥ sensitivity/eps`, rounded **up** to a multiple of `2^-20` (so the realised
    /// level [`realised_eps`](Self::realised_eps) `= sensitivity/t ≤ eps`).
    ///
    /// For the histogram prior (L1 sensitivity 2 under a label change: one unit moves between
    /// two bins) use
    /// `for_privacy(eps_p, 2)`: pmf `∝ exp(−(ε_p/2)|z|)`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] unless `eps > 0` is finite, `sensitivity ≥ 1`, and the scale
    /// `sensitivity/eps` is below `2^41`.
    pub fn for_privacy(eps: f64, sensitivity: u64) -> Result<Self> {
        check_eps(eps)?;
        if sensitivity == 0 {
            return Err(Error::param("sensitivity", "must be at least 1"));
        }
        let t = sensitivity as f64 / eps; // within half an ulp of the exact quotient
        if !(t < (1u64 << 41) as f64) {
            return Err(Error::param(
                "eps",
                format!("eps = {eps} is too small for the discrete Laplace sampler (scale {t:e} ≥ 2^41)"),
            ));
        }
        // t·2^20 is exact in f64 (a power-of-two scaling); +1 absorbs the rounding of t itself
        // (at most 2^-53·t ≪ 2^-20), so num/den ≥ sensitivity/eps exactly.
        let num = (t * SCALE_DEN as f64).ceil() as u64 + 1;
        Self::with_scale(num, SCALE_DEN)
    }

    /// The scale `t = num/den` as `(num, den)`.
    pub fn scale_ratio(&self) -> (u64, u64) {
        (self.num, self.den)
    }

    /// The scale `t = num/den` (rounded to `f64`).
    pub fn scale(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The pmf parameter `a = 1/t = den/num` (rounded to `f64`).
    pub fn a(&self) -> f64 {
        self.den as f64 / self.num as f64
    }

    /// The privacy level realised on a query of ℓ₁-sensitivity `sensitivity`: `sensitivity·a`.
    pub fn realised_eps(&self, sensitivity: u64) -> f64 {
        sensitivity as f64 * self.a()
    }

    /// `P(Z = z) = tanh(a/2)·e^{−a|z|}`.
    pub fn pmf(&self, z: i64) -> f64 {
        let a = self.a();
        (0.5 * a).tanh() * (-a * z.unsigned_abs() as f64).exp()
    }

    /// One exact draw (Canonne, Kamath & Steinke 2020, Algorithm 2, with `t = num`, `s = den`):
    ///
    /// ```text
    /// loop:
    ///   U ~ Uniform{0, …, num−1};  if not Bernoulli(exp(−U/num)): retry
    ///   V = number of successes of Bernoulli(e^{−1}) before the first failure
    ///   X = U + num·V  (P(X = x) ∝ e^{−x/num});  Y = ⌊X / den⌋  (P(Y = y) ∝ e^{−y·den/num})
    ///   B ~ Bernoulli(½);  if B and Y = 0: retry
    ///   return (1 − 2B)·Y
    /// ```
    ///
    /// Exactly `Lap_Z(num/den)`; the expected number of retries is `O(1)`. Real privatisation
    /// needs a CSPRNG ([`super::secure_rng`]).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        let (t, s) = (self.num, self.den);
        loop {
            let u = uniform_below(u128::from(t), rng) as u64;
            if !bernoulli_exp_minus(u, t, rng) {
                continue;
            }
            let mut v: u128 = 0;
            while bernoulli_exp_minus(1, 1, rng) {
                v += 1;
            }
            let x = u128::from(u) + u128::from(t) * v;
            let y = x / u128::from(s);
            let negative = rng.next_u64() >> 63 == 1;
            if negative && y == 0 {
                continue;
            }
            let y = i64::try_from(y).unwrap_or(i64::MAX);
            return if negative { -y } else { y };
        }
    }

    /// `m` independent draws.
    pub fn sample_n<R: Rng + ?Sized>(&self, m: usize, rng: &mut R) -> Vec<i64> {
        (0..m).map(|_| self.sample(rng)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    #[test]
    fn uniform_below_is_in_range_and_covers() {
        let mut rng = simulation_rng(3);
        let mut seen = [0usize; 7];
        for _ in 0..7000 {
            seen[uniform_below(7, &mut rng) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (850..1150).contains(&c)), "{seen:?}");
        assert_eq!(uniform_below(1, &mut rng), 0);
    }

    #[test]
    fn scale_is_rounded_up() {
        for (eps, sens) in [(0.05, 2u64), (0.025, 2), (1.0, 1), (0.3, 2), (7.0, 3)] {
            let dl = DiscreteLaplace::for_privacy(eps, sens).unwrap();
            let (num, den) = dl.scale_ratio();
            // num/den ≥ sens/eps ⇔ num·eps ≥ sens·den (checked in f64 with margin: the +1 gives
            // a slack of 1/den relative to t, far above rounding).
            assert!(num as f64 * eps >= sens as f64 * den as f64, "{eps} {sens}");
            assert!(dl.realised_eps(sens) <= eps);
            assert!(dl.realised_eps(sens) > eps * (1.0 - 1e-5));
        }
        assert!(DiscreteLaplace::for_privacy(0.0, 2).is_err());
        assert!(DiscreteLaplace::for_privacy(1e-13, 2).is_err());
        assert!(DiscreteLaplace::for_privacy(1.0, 0).is_err());
        assert!(DiscreteLaplace::with_scale(0, 1).is_err());
    }

    #[test]
    fn pmf_ratio_and_normalisation() {
        // pmf(0)/pmf(1) = e^a, 1.0253151 for a = 0.025 (ε_p = 0.05, sensitivity 2).
        let dl = DiscreteLaplace::with_scale(40, 1).unwrap();
        assert!((dl.pmf(0) / dl.pmf(1) - 1.025_315_1).abs() < 1e-7);
        let total: f64 = (-4000..=4000).map(|z| dl.pmf(z)).sum();
        assert!((total - 1.0).abs() < 1e-12, "{total}");
    }
}

//! The Poisson-subsampled Gaussian mechanism, add/remove neighbours (Mironov, Talwar & Zhang
//! 2019): the binomial sum for integer orders, the erfc series for fractional ones.

use super::log_space::{ln_expm1, Sum};
use super::{check_noise_multiplier, check_order, check_sampling_rate};
use crate::error::{Error, Result};
use crate::math::show::num;
use crate::math::simd::scalar::softplus;
use crate::math::special::{ln_erfcx, ln_ndtr, ndtr, ndtr_interval};
use std::f64::consts::{LN_2, SQRT_2};

/// Per-step RDP `ε(α)` of the Poisson-subsampled Gaussian mechanism with sampling rate `q` and
/// noise multiplier `σ`, add/remove neighbours (Mironov, Talwar & Zhang 2019; module docs):
/// `ε(α) = ln(A_α)/(α − 1)`. Integer orders use the positive binomial sum, fractional ones the
/// erfc series. `q = 1` gives the Gaussian mechanism `α/(2σ²)` exactly. `+∞` when `A_α`
/// overflows the double range in log space (only for absurdly small `σ`). A fractional order's
/// value is checked against those of the integer orders `⌊α⌋` and `⌈α⌉` (the divergence is
/// non-decreasing in the order); where the series loses `A_α − 1` to rounding (a huge `σ`) and
/// leaves that bracket or fails, the value of `⌈α⌉` is returned, an upper bound.
///
/// # Errors
/// [`Error::InvalidParam`] for `q ∉ (0, 1]`, `σ ≤ 0` or non-finite, an order `≤ 1`;
/// [`Error::Numerical`] if the fractional series fails its convergence check at an order whose
/// ceiling is above 10⁷ (no integer order to fall back on; the accountant's orders stop at 10⁴).
pub fn sgm_rdp(q: f64, sigma: f64, alpha: f64) -> Result<f64> {
    check_sampling_rate(q)?;
    check_noise_multiplier(sigma)?;
    check_order(alpha)?;
    let int_rdp = |k: f64| softplus(sgm_ln_a_minus_1_int(q, sigma, k as u64)) / (k - 1.0);
    let series = sgm_ln_a_minus_1(q, sigma, alpha).map(|v| softplus(v) / (alpha - 1.0));
    if q == 1.0 || alpha.fract() == 0.0 || alpha.ceil() > 1e7 {
        return series;
    }
    // A fractional order lies between two integer orders, whose binomial sums have only
    // positive terms (no cancellation). The Rényi divergence is non-decreasing in its order
    // (van Erven & Harremoës 2014, Thm 3), so ε(⌊α⌋) ≤ ε(α) ≤ ε(⌈α⌉). At a huge σ (10⁸ and up at
    // q = 0.01) `A − 1` falls below the rounding of the fractional order's alternating series,
    // which then cancels to nothing, fails to converge or leaves that bracket; ε(⌈α⌉) is then
    // the answer: an upper bound, never an underestimate, within a factor ⌈α⌉/α of the
    // leading-order value `α q²/(2σ²)` there.
    let up = int_rdp(alpha.ceil());
    let low = if alpha >= 2.0 { int_rdp(alpha.floor()) } else { 0.0 };
    match series {
        Ok(v) if v >= low && v <= up => Ok(v),
        Ok(_) | Err(Error::Numerical(_)) => Ok(up),
        Err(e) => Err(e),
    }
}

/// `ln(A_α − 1)` for validated inputs.
fn sgm_ln_a_minus_1(q: f64, sigma: f64, alpha: f64) -> Result<f64> {
    if q == 1.0 {
        return Ok(ln_expm1(alpha * (alpha - 1.0) / (2.0 * sigma * sigma)));
    }
    if alpha.fract() == 0.0 && alpha <= 1e7 {
        Ok(sgm_ln_a_minus_1_int(q, sigma, alpha as u64))
    } else {
        sgm_ln_a_minus_1_frac(q, sigma, alpha)
    }
}

/// Integer order `α ≥ 2`, `q < 1`: `ln Σ_{k=2}^{α} C(α,k)(1−q)^{α−k}q^k expm1((k²−k)/(2σ²))`.
fn sgm_ln_a_minus_1_int(q: f64, sigma: f64, alpha: u64) -> f64 {
    let a = alpha as f64;
    let inv2s2 = 0.5 / (sigma * sigma);
    let lq = q.ln();
    let l1q = (-q).ln_1p();
    // ln C(α, k) by the product recurrence C(α,k) = C(α,k−1)(α−k+1)/k, from C(α,1) = α.
    let mut ln_c = a.ln();
    let mut terms = Vec::with_capacity(alpha as usize);
    for k in 2..=alpha {
        let kf = k as f64;
        ln_c += ((a - kf + 1.0) / kf).ln();
        terms.push(ln_c + (a - kf) * l1q + kf * lq + ln_expm1((kf * kf - kf) * inv2s2));
    }
    let m = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        return m;
    }
    let mut s = Sum::default();
    for t in &terms {
        s.add((t - m).exp());
    }
    m + s.value().ln()
}

/// `g(q) = (α−1) ln(1−q) + ln(1 + (α−1)q)`, by its power series
/// `Σ_{k≥2} (q^k/k)[(−1)^{k+1}(α−1)^k − (α−1)]` when `q` and `(α−1)q` are small (the direct form
/// cancels two `O(q)` terms down to `−α(α−1)q²/2`).
fn g_term(alpha: f64, q: f64) -> f64 {
    let b = alpha - 1.0;
    if q < 0.05 && b * q < 0.1 {
        let mut s = Sum::default();
        let mut qk = q * q;
        let mut bk = b * b; // (α−1)^k
        let mut sign = -1.0; // (−1)^{k+1} for k = 2
        for k in 2..200 {
            let t = qk / k as f64 * (sign * bk - b);
            s.add(t);
            if t.abs() <= 1e-18 * s.value().abs() {
                break;
            }
            qk *= q;
            bk *= b;
            sign = -sign;
        }
        s.value()
    } else {
        b * (-q).ln_1p() + (b * q).ln_1p()
    }
}

/// Relative size of the term at which the erfc series stops (module docs).
const SERIES_TOL: f64 = 1e-17;

/// Fractional order, `0 < q < 1`: `ln(A_α − 1)` by the erfc series (module docs). All terms are
/// scaled by `e^{−M}`, `M = max(0, max_i ln|term_i|)` over `i ≤ ⌈α⌉` (the terms decrease in
/// magnitude beyond), so that `A` far beyond the double range (small σ, large α) stays finite.
fn sgm_ln_a_minus_1_frac(q: f64, sigma: f64, alpha: f64) -> Result<f64> {
    let series = ErfcSeries::new(q, sigma, alpha);
    let mut sum = series.exact_one_shares();
    let alt_start = alpha.ceil();
    let direct_max = alt_start + 32.0;
    let mut c = Binomial::start(alpha);
    loop {
        let t = series.term(&c);
        sum.add(t);
        if c.i >= alt_start && t.abs() <= SERIES_TOL * sum.value().abs() {
            return series.finish(sum.value());
        }
        if c.i >= direct_max {
            break;
        }
        c.advance();
    }
    if series.euler_tail(&mut c, &mut sum) {
        return series.finish(sum.value());
    }
    Err(Error::Numerical(format!(
        "sampled Gaussian RDP: the erfc series did not converge (q = {}, sigma = {}, order = {})",
        num(q),
        num(sigma),
        num(alpha)
    )))
}

/// `ln|C(α,i)|` and `sign C(α,i)` at index `i`, by the recurrence `C(α,i) = C(α,i−1)(α−i+1)/i`.
struct Binomial {
    alpha: f64,
    i: f64,
    ln_c: f64,
    sign: f64,
}

impl Binomial {
    /// `i = 0`: `C(α, 0) = 1`.
    fn start(alpha: f64) -> Self {
        Binomial {
            alpha,
            i: 0.0,
            ln_c: 0.0,
            sign: 1.0,
        }
    }

    /// To index `i + 1`.
    fn advance(&mut self) {
        self.i += 1.0;
        let r = (self.alpha - self.i + 1.0) / self.i;
        if r < 0.0 {
            self.sign = -self.sign;
        }
        self.ln_c += r.abs().ln();
    }
}

/// The terms of the erfc series at one `(q, σ, α)` (module docs), scaled by `e^{−M}`.
struct ErfcSeries {
    q: f64,
    sigma: f64,
    alpha: f64,
    inv2s2: f64,
    w: f64,
    lq: f64,
    l1q: f64,
    z0: f64,
    /// `ln(K/2)`.
    ln_k_half: f64,
    /// `M`.
    scale: f64,
}

impl ErfcSeries {
    fn new(q: f64, sigma: f64, alpha: f64) -> Self {
        let s2 = sigma * sigma;
        let inv2s2 = 0.5 / s2;
        let lq = q.ln();
        let l1q = (-q).ln_1p();
        let z0 = s2 * (l1q - lq) + 0.5;
        let mut series = ErfcSeries {
            q,
            sigma,
            alpha,
            inv2s2,
            w: SQRT_2 * sigma,
            lq,
            l1q,
            z0,
            ln_k_half: alpha * l1q - z0 * z0 * inv2s2 - LN_2,
            scale: 0.0,
        };
        series.scale = series.max_ln_term();
        series
    }

    /// ln of the magnitudes of the region-1 and region-2 terms of index `i`, given `ln|C(α,i)|`.
    fn ln_terms(&self, i: f64, ln_c: f64) -> (f64, f64) {
        let (alpha, sigma, z0, w) = (self.alpha, self.sigma, self.z0, self.w);
        let (lq, l1q, inv2s2) = (self.lq, self.l1q, self.inv2s2);
        let la = if i < 2.0 {
            f64::NEG_INFINITY
        } else {
            let t = (i - z0) / w;
            if t < 0.0 {
                ln_c + (alpha - i) * l1q + i * lq + (i * i - i) * inv2s2 + ln_ndtr((z0 - i) / sigma)
            } else {
                ln_c + self.ln_k_half + ln_erfcx(t)
            }
        };
        let j = alpha - i;
        let t2 = (i - alpha + z0) / w;
        let lb = if t2 < 0.0 {
            ln_c + j * lq + i * l1q + (j * j - j) * inv2s2 + ln_ndtr((j - z0) / sigma)
        } else {
            ln_c + self.ln_k_half + ln_erfcx(t2)
        };
        (la, lb)
    }

    /// `M = max(0, max_{i ≤ ⌈α⌉} ln|term_i|)`.
    fn max_ln_term(&self) -> f64 {
        let alt_start = self.alpha.ceil();
        let mut scale = 0.0f64;
        let mut c = Binomial::start(self.alpha);
        while c.i <= alt_start {
            let (la, lb) = self.ln_terms(c.i, c.ln_c);
            scale = scale.max(la).max(lb);
            c.advance();
        }
        scale
    }

    /// The scaled term of index `c.i`.
    fn term(&self, c: &Binomial) -> f64 {
        let (la, lb) = self.ln_terms(c.i, c.ln_c);
        c.sign * ((la - self.scale).exp() + (lb - self.scale).exp())
    }

    /// The `i = 0, 1` terms of region 1 minus their share of the exact `1`, and region 2's share
    /// of the `1` (scaled): the start of the sum of `A − 1`.
    fn exact_one_shares(&self) -> Sum {
        let (q, sigma, alpha, z0) = (self.q, self.sigma, self.alpha, self.z0);
        let e_m = (-self.scale).exp();
        let phi0 = ndtr(z0 / sigma);
        let dphi = -ndtr_interval((z0 - 1.0) / sigma, z0 / sigma); // Φ((z0−1)/σ) − Φ(z0/σ)
        let p = ((alpha - 1.0) * self.l1q).exp(); // (1−q)^{α−1}
        let mut sum = Sum::default();
        sum.add(e_m * phi0 * g_term(alpha, q).exp_m1());
        sum.add(e_m * q * (alpha * p - 1.0) * dphi);
        sum.add(-e_m * (1.0 - q) * ndtr(-z0 / sigma));
        sum.add(-e_m * q * ndtr((1.0 - z0) / sigma));
        sum
    }

    /// Adds the alternating tail `Σ_{j≥0} c_{N+j}`, `N = c.i + 1`, to `sum` by the Euler
    /// transform `Σ_j (−1)^j β_j = Σ_k (−1)^k (Δ^k β)_0 / 2^{k+1}`, `β_j = |c_{N+j}|`; `false`
    /// (nothing added) when it does not converge or leaves the Leibniz bracket.
    fn euler_tail(&self, c: &mut Binomial, sum: &mut Sum) -> bool {
        let mut betas: Vec<f64> = Vec::new();
        let mut diag: Vec<f64> = Vec::new();
        let mut first_sign = 0.0;
        let mut tail = Sum::default();
        for k in 0..120usize {
            c.advance();
            let t = self.term(c);
            if k == 0 {
                first_sign = t.signum();
            }
            betas.push(t.abs());
            // diag[j] = (Δ^j β)_{k−j}, updated from the previous diagonal: (Δ^k β)_0 = diag[k].
            let mut prev = t.abs();
            for slot in diag.iter_mut() {
                let cur = prev - *slot;
                *slot = prev;
                prev = cur;
            }
            diag.push(prev);
            let dk = diag[k];
            let e = if k % 2 == 0 { dk } else { -dk } / 2f64.powi(k as i32 + 1);
            tail.add(e);
            if k >= 2 && e.abs() <= SERIES_TOL * sum.value().abs() {
                let v = tail.value();
                // The alternating tail lies between β₀ − β₁ and β₀.
                if !(v <= betas[0] * (1.0 + 1e-12) && v >= (betas[0] - betas[1]) * (1.0 - 1e-12)) {
                    return false;
                }
                sum.add(first_sign * v);
                return true;
            }
        }
        false
    }

    /// `ln(A − 1) = M + ln v` from the scaled sum `v`.
    fn finish(&self, v: f64) -> Result<f64> {
        let (q, sigma, alpha, scale) = (self.q, self.sigma, self.alpha, self.scale);
        if v > 0.0 && v.is_finite() {
            Ok(scale + v.ln())
        } else {
            Err(Error::Numerical(format!(
                "sampled Gaussian RDP: A - 1 = {v:e}·e^{scale} is not positive (q = {}, sigma = {}, order = {})",
                num(q),
                num(sigma),
                num(alpha)
            )))
        }
    }
}

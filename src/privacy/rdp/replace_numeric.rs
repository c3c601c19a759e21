//! Replace-one neighbours: the Rényi divergence of the antipodal pair by quadrature.

use super::log_space::{ln_add_exp, Sum};
use super::{check_noise_multiplier, check_order, check_sampling_rate};
use crate::error::{Error, Result};
use crate::math::quadrature::integrate;
use crate::math::show::num;
use crate::math::simd::scalar::softplus;

/// `f_α(v) = (1+v)^α − 1 − αv ≥ 0` as `ln f`, from `lr = ln(1+v)`, stable for all `v > −1`.
fn ln_f_alpha(alpha: f64, lr: f64) -> f64 {
    let al = alpha * lr;
    if al > 30.0 {
        // f = e^{αlr}[1 − ((1−α)e^{−αlr} + α e^{(1−α)lr})].
        let r = (1.0 - alpha) * (-al).exp() + alpha * ((1.0 - alpha) * lr).exp();
        return al + (-r).ln_1p();
    }
    let v = lr.exp_m1();
    if (alpha * v).abs() < 0.5 {
        // Σ_{k≥2} C(α,k) v^k.
        let mut s = Sum::default();
        let mut c = alpha * (alpha - 1.0) / 2.0;
        let mut vk = v * v;
        for k in 2..400 {
            let t = c * vk;
            s.add(t);
            if t.abs() <= 1e-18 * s.value().abs() {
                break;
            }
            c *= (alpha - k as f64) / (k as f64 + 1.0);
            vk *= v;
        }
        s.value().ln()
    } else {
        (al.exp_m1() - alpha * v).ln()
    }
}

/// Per-step Rényi divergence `D_α(P‖Q)` of the antipodal replace pair
/// `P = (1−q)N(0,σ²) + qN(1,σ²)`, `Q = (1−q)N(0,σ²) + qN(−1,σ²)`, by adaptive
/// Gauss–Kronrod quadrature of `H − 1 = ∫ Q·f_α(P/Q − 1)`, `f_α(v) = (1+v)^α − 1 − αv ≥ 0`,
/// in log-scaled form (relative tolerance `max(1e-13, 8·2^-52·|ln peak|)`: the integrand's own
/// rounding floors it for large orders). `q = 1` gives `2α/σ²` exactly.
///
/// # Errors
/// As [`sgm_rdp`](super::sgm_rdp); [`Error::Numerical`] if the quadrature does not converge.
pub fn replace_numeric_rdp(q: f64, sigma: f64, alpha: f64) -> Result<f64> {
    check_sampling_rate(q)?;
    check_noise_multiplier(sigma)?;
    check_order(alpha)?;
    if q == 1.0 {
        return Ok(2.0 * alpha / (sigma * sigma));
    }
    let s2 = sigma * sigma;
    let lq = q.ln();
    let l1q = (-q).ln_1p();
    let ln_norm = -0.5 * (2.0 * std::f64::consts::PI * s2).ln();
    let ln_integrand = |z: f64| -> f64 {
        let ln_phi = ln_norm - z * z / (2.0 * s2);
        let ln_ap = ln_add_exp(l1q, lq + (2.0 * z - 1.0) / (2.0 * s2));
        let ln_am = ln_add_exp(l1q, lq + (-2.0 * z - 1.0) / (2.0 * s2));
        ln_phi + ln_am + ln_f_alpha(alpha, ln_ap - ln_am)
    };
    let lo = -1.0 - 40.0 * sigma;
    let hi = alpha + 40.0 * sigma + 1.0;
    let panels = (((hi - lo) / (2.0 * sigma)).ceil() as usize).clamp(16, 2000);
    // Shift by the maximum on a fine grid so that exp() neither overflows nor underflows.
    let grid = 8 * panels;
    let shift = (0..=grid)
        .map(|k| ln_integrand(lo + (hi - lo) * k as f64 / grid as f64))
        .filter(|v| v.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if !shift.is_finite() {
        return Err(Error::Numerical(format!(
            "replace-numeric RDP: integrand not finite (q = {}, sigma = {}, order = {})",
            num(q),
            num(sigma),
            num(alpha)
        )));
    }
    let f = |z: f64| {
        let v = (ln_integrand(z) - shift).exp();
        if v.is_finite() {
            v
        } else {
            0.0
        }
    };
    // The integrand is exp(L − shift) with |L| up to ~α²/σ²: its own rounding is ~|L|·2^-53
    // relative, which floors the reachable tolerance for large orders.
    let tol = 1e-13f64.max(8.0 * f64::EPSILON * shift.abs());
    let integral = integrate(&f, lo, hi, panels, tol)
        .ok_or_else(|| Error::Numerical("replace-numeric RDP: the quadrature did not reach its tolerance".into()))?;
    if !(integral > 0.0) {
        return Err(Error::Numerical(format!(
            "replace-numeric RDP: H - 1 = {integral:e} is not positive (q = {}, sigma = {}, order = {})",
            num(q),
            num(sigma),
            num(alpha)
        )));
    }
    Ok(softplus(shift + integral.ln()) / (alpha - 1.0))
}

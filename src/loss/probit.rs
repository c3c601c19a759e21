//! Thurstone (probit) negative log-likelihood (seed 000 §4.4, spec §3.6).

use super::{Loss, LossOut};
use pulp::Simd;

/// `ℓ(t; y) = −log Φ(s)`, `s = (2y−1)t`; `ℓ' = −(2y−1) h(s)`; `ℓ'' = A(s) = h(s)(s + h(s))`,
/// where `h = φ/Φ` is the inverse Mills ratio. Convex and bounded below.
///
/// Stable evaluation (spec §3.6): `erfc` (libm) for `s ≥ −3`; for `s < −3`, Laplace's continued
/// fraction for `u = s + h(s)` (60 terms, bottom-up), giving `h = −s + u`, `A = u·h` and
/// `log Φ(s) = −s²/2 − ½ log 2π − log h` without cancellation, for any `s` down to −1e300.
///
/// The batched path evaluates the scalar code lane by lane (no SIMD `erfc`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Probit;

const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// `(log Φ(s), h(s), A(s))`.
pub fn log_phi_parts(s: f64) -> (f64, f64, f64) {
    if s >= -3.0 {
        let phi = FRAC_1_SQRT_2PI * (-0.5 * s * s).exp();
        let (log_cdf, cdf) = if s >= 0.0 {
            let q = 0.5 * libm::erfc(s * std::f64::consts::FRAC_1_SQRT_2);
            ((-q).ln_1p(), 1.0 - q)
        } else {
            let c = 0.5 * libm::erfc(-s * std::f64::consts::FRAC_1_SQRT_2);
            (c.ln(), c)
        };
        let h = phi / cdf;
        (log_cdf, h, h * (s + h))
    } else {
        let x = -s;
        let mut u = 0.0;
        for k in (2..=61).rev() {
            u = k as f64 / (x + u);
        }
        let u = 1.0 / (x + u); // = s + h(s)
        let h = x + u;
        (-0.5 * x * x - HALF_LN_2PI - h.ln(), h, u * h)
    }
}

impl Loss for Probit {
    const CONVEX: bool = true;
    const BOUNDED_BELOW: bool = true;

    fn name(&self) -> &'static str {
        "probit"
    }
    fn value(&self, t: f64, y: u8) -> f64 {
        let s = if y == 1 { t } else { -t };
        -log_phi_parts(s).0
    }
    fn d1(&self, t: f64, y: u8) -> f64 {
        let s = if y == 1 { t } else { -t };
        let h = log_phi_parts(s).1;
        if y == 1 {
            -h
        } else {
            h
        }
    }
    fn d2(&self, t: f64, y: u8) -> f64 {
        let s = if y == 1 { t } else { -t };
        log_phi_parts(s).2
    }
    /// `0` for `s = (2y−1)t ≥ 0`, `+∞` for `s < 0` (quadratic growth).
    fn recession(&self, t: f64, y: u8) -> f64 {
        let s = if y == 1 { t } else { -t };
        if s >= 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    }
    fn eval_simd<S: Simd>(&self, _simd: S, t: &[f64], y: &[f64], out: LossOut<'_>) {
        let LossOut {
            mut value,
            mut d1,
            mut d2,
        } = out;
        for i in 0..t.len() {
            let pos = y[i] != 0.0;
            let s = if pos { t[i] } else { -t[i] };
            let (lc, h, a) = log_phi_parts(s);
            if let Some(v) = value.as_deref_mut() {
                v[i] = -lc;
            }
            if let Some(g) = d1.as_deref_mut() {
                g[i] = if pos { -h } else { h };
            }
            if let Some(g) = d2.as_deref_mut() {
                g[i] = a;
            }
        }
    }
}

//! Thurstone (probit) negative log-likelihood (Chowdhury, Zhou & Natarajan (2024), Sec. 4.4).

use super::{Loss, LossOut};
use pulp::Simd;

/// `ℓ(t; y) = −log Φ(s)`, `s = (2y−1)t`; `ℓ' = −(2y−1) h(s)`; `ℓ'' = A(s) = h(s)(s + h(s))`,
/// where `h = φ/Φ` is the inverse Mills ratio. Convex and bounded below.
///
/// Stable evaluation: `erfc` (libm) for `−3 ≤ s < 3`; for `s < −3`, Laplace's
/// continued fraction for `u = s + h(s)` (60 terms, bottom-up), giving `h = −s + u`, `A = u·h`
/// and `log Φ(s) = −s²/2 − ½ log 2π − log h` without cancellation, for any `s` down to −1e300;
/// for `s ≥ 3`, the same fraction at `−s` gives the upper tail `Φ(−s) = φ(s)/(s + u)`, and
/// `log Φ(s) = log1p(−Φ(−s))`. `φ(s)` uses an exactly split `s²`.
///
/// The batched path evaluates the scalar code lane by lane (no SIMD `erfc`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Probit;

pub(crate) use crate::math::special::log_phi_parts;

impl Loss for Probit {
    /// `ℓ'' = A(t)(A(t) + t) ≤ 1` for `A = φ/Φ(−·)`.
    fn curvature_sup(&self) -> f64 {
        1.0
    }
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
    /// `A(T) = h(T)(T + h(T))`, `h = φ/Φ`: the smallest curvature (the paper leaves the probit
    /// `γ` to "a proper choice"; this is the exact one)
    /// `ℓ''(t; y) = A((2y−1)t)` on `|t| ≤ T` (`A` is decreasing).
    fn link_curvature_floor(&self, tmax: f64) -> Option<f64> {
        Some(log_phi_parts(tmax).2)
    }
    /// `1`: the likelihood on clear labels.
    fn privacy_scale(&self) -> Option<f64> {
        Some(1.0)
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

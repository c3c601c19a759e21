//! Logistic (Bradley–Terry–Luce) negative log-likelihood on clear labels.

use super::{map_lanes, Loss, LossOut};
use crate::math::simd::{dsigmoid_from, logistic, scalar, sigmoid_from};
use pulp::Simd;

/// `ℓ(t; y) = −y log σ(t) − (1−y) log(1−σ(t)) = softplus(s)`, `s = (1−2y)t`;
/// `ℓ' = σ(t) − y = (1−2y) σ(s)`; `ℓ'' = σ'(t)`.
///
/// The non-private MLE of Zhu et al. (2023); Chowdhury, Zhou & Natarajan (2024), eq. 8. Convex,
/// bounded below by 0; the infimum is not attained on separable data (then only a ball gives a
/// minimiser).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Logistic;

impl Loss for Logistic {
    /// `σ'(t) ≤ 1/4`.
    fn curvature_sup(&self) -> f64 {
        0.25
    }
    /// `1`: the likelihood on clear labels.
    fn privacy_scale(&self) -> Option<f64> {
        Some(1.0)
    }
    /// `σ'(T)`: the link is logistic.
    fn link_curvature_floor(&self, tmax: f64) -> Option<f64> {
        Some(scalar::dsigmoid(tmax))
    }
    const CONVEX: bool = true;
    const BOUNDED_BELOW: bool = true;

    fn name(&self) -> &'static str {
        "mle"
    }
    #[inline]
    fn value(&self, t: f64, y: u8) -> f64 {
        scalar::softplus(if y == 1 { -t } else { t })
    }
    #[inline]
    fn d1(&self, t: f64, y: u8) -> f64 {
        if y == 1 {
            -scalar::sigmoid(-t)
        } else {
            scalar::sigmoid(t)
        }
    }
    #[inline]
    fn d2(&self, t: f64, _y: u8) -> f64 {
        scalar::dsigmoid(t)
    }
    /// `max((1−2y)t, 0)`: never negative (bounded below); zero along separating directions.
    fn recession(&self, t: f64, y: u8) -> f64 {
        (if y == 1 { -t } else { t }).max(0.0)
    }
    #[inline(always)]
    fn eval_simd<S: Simd>(&self, simd: S, t: &[f64], y: &[f64], out: LossOut<'_>) {
        let one = simd.splat_f64s(1.0);
        map_lanes(
            simd,
            t,
            y,
            out,
            #[inline(always)]
            |t, y, want| {
                let sign = simd.sub_f64s(one, simd.add_f64s(y, y)); // 1 − 2y
                let s = simd.mul_f64s(sign, t);
                let lg = logistic(simd, s);
                let v = if want.0 { lg.sp_pos } else { one };
                let g = if want.1 {
                    simd.mul_f64s(sign, sigmoid_from(simd, s, lg.e))
                } else {
                    one
                };
                let h = if want.2 { dsigmoid_from(simd, lg.e) } else { one };
                [v, g, h]
            },
        );
    }
}

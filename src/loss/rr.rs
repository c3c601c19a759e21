//! Losses for labels privatised by binary randomized response (Chowdhury, Zhou & Natarajan (2024),
//! Sec. 4).

use super::{map_lanes, Loss, LossOut};
use crate::error::{check_eps, Result};
use crate::math::simd::{dsigmoid_from, exp_em1_nonpos, exp_nonpos, log1p_unit, logistic, scalar, sigmoid_from};
use pulp::Simd;

/// Privacy constants of binary RR with level ε: `σ_ε = σ(ε)`, `σ̄_ε = σ(−ε)`,
/// `c_ε = tanh(ε/2) = σ_ε − σ̄_ε`, and `softplus(±ε)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RrConstants {
    /// ε.
    pub eps: f64,
    /// `σ(ε)`: probability RR keeps the label.
    pub keep: f64,
    /// `σ(−ε)`: probability RR flips the label.
    pub flip: f64,
    /// `tanh(ε/2)`.
    pub c: f64,
    /// `softplus(ε)`.
    pub sp_eps: f64,
    /// `softplus(−ε)`.
    pub sp_neg_eps: f64,
}

impl RrConstants {
    /// Constants for level `eps` (must be finite and > 0).
    pub fn new(eps: f64) -> Result<Self> {
        check_eps(eps)?;
        Ok(RrConstants {
            eps,
            keep: scalar::sigmoid(eps),
            flip: scalar::sigmoid(-eps),
            c: (0.5 * eps).tanh(),
            sp_eps: scalar::softplus(eps),
            sp_neg_eps: scalar::softplus(-eps),
        })
    }
}

/// Noisy-channel likelihood of RR labels ("MLE-RR", Chowdhury, Zhou & Natarajan (2024), eq. 3):
/// `ℓ(t; ỹ) = −log p̃₁(s)`, `s = (2ỹ−1)t`, `p̃₁(s) = σ_ε σ(s) + σ̄_ε σ(−s) = σ̄_ε + c_ε σ(s)`,
/// evaluated as `log p̃₁(s) = logaddexp(−softplus(−ε) − softplus(−s), −softplus(ε) − softplus(s))`
/// (the two arguments differ by exactly `ε + s`).
///
/// `ℓ' = −(2ỹ−1) r(s)` and `ℓ'' = r(s) D(s)`, where
/// * `r(s) = c_ε σ'(s)/p̃₁(s)` (quotient, no cancellation). Below `s = −700`, where `σ'(s)`
///   underflows although `r ≈ e^{s+ε}` need not (ε large), the equal product
///   `(1 − e^{−ε}) σ(s+ε) σ(−s)` is used instead;
/// * `D(s) = r(s) − (1 − 2σ(s)) = σ(s) + σ(s+ε) − 1`, evaluated as `−expm1(−x) σ(s) σ(s+ε)` for
///   `x = ε + 2s ≥ 0` and `expm1(x) σ(−s) σ(−s−ε)` for `x < 0`: a product of factors in
///   `[0, 1]`. `x` is formed with one rounding (relative error ≤ u/2), so `ℓ''` is accurate to a
///   few ulps even next to its zero `s = −ε/2`, where it is exactly 0, and its sign is exact.
///
/// (The difference `r − (1 − 2σ(s))` itself cancels for large ε: `r ≈ 1 − 2σ(s) ≈ 1` on
/// `−ε < s < −ε/2`; and the expanded quotient `c_ε σ'[c_ε σ' − (1−2σ) p̃₁]/p̃₁²` underflows to
/// `0/0` once `p̃₁² < 2^-1074`, e.g. for ε ≳ 354.)
///
/// **Not convex**: `ℓ''(t; ỹ) < 0` exactly when `s < −ε/2`. The sum is convex on `Θ_B` when
/// `ε ≥ 2B·max_i ‖P x_i‖` ([`Loss::convex_on`]); otherwise solvers return stationary points,
/// not certified global minimisers. Bounded below by `softplus(−ε)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RrNoisyChannel {
    k: RrConstants,
}

impl RrNoisyChannel {
    /// The loss for RR level `eps` (finite, > 0).
    pub fn new(eps: f64) -> Result<Self> {
        Ok(RrNoisyChannel {
            k: RrConstants::new(eps)?,
        })
    }
    /// The RR constants.
    pub fn constants(&self) -> &RrConstants {
        &self.k
    }
    #[inline]
    fn s(t: f64, y: u8) -> f64 {
        if y == 1 {
            t
        } else {
            -t
        }
    }
    /// `r(s) = c_ε σ'(s)/p̃₁(s)`, `p̃₁(s) = σ̄_ε + c_ε σ(s)`; for `s < −700` (where `σ'(s)` is
    /// subnormal or 0) the product `(1 − e^{−ε}) σ(s+ε) σ(−s)`, with `1 − e^{−ε} = c_ε/σ_ε`.
    #[inline]
    fn ratio(&self, s: f64) -> f64 {
        if s < RATIO_FAR {
            (self.k.c / self.k.keep) * scalar::sigmoid(s + self.k.eps) * scalar::sigmoid(-s)
        } else {
            self.k.c * scalar::dsigmoid(s) / (self.k.flip + self.k.c * scalar::sigmoid(s))
        }
    }
}

/// Below this `s`, [`RrNoisyChannel`] evaluates `c_ε σ'(s)/p̃₁(s)` as a product (`σ'(s)` would
/// underflow; the batched `exp` flushes below −708.39).
const RATIO_FAR: f64 = -700.0;

impl Loss for RrNoisyChannel {
    /// `|ℓ''| = r(s)|D(s)| ≤ σ(−s) ≤ 1` (`r ≤ c_ε σ(s)σ(−s)/(c_ε σ(s))`, `|D| ≤ 1`).
    fn curvature_sup(&self) -> f64 {
        1.0
    }
    const CONVEX: bool = false;
    const BOUNDED_BELOW: bool = true;

    fn name(&self) -> &'static str {
        "mle-rr"
    }
    fn value(&self, t: f64, y: u8) -> f64 {
        let s = Self::s(t, y);
        let a = -self.k.sp_neg_eps - scalar::softplus(-s);
        let b = -self.k.sp_eps - scalar::softplus(s);
        -scalar::logaddexp(a, b)
    }
    fn d1(&self, t: f64, y: u8) -> f64 {
        let s = Self::s(t, y);
        let r = self.ratio(s);
        if y == 1 {
            -r
        } else {
            r
        }
    }
    fn d2(&self, t: f64, y: u8) -> f64 {
        let s = Self::s(t, y);
        let eps = self.k.eps;
        let x = s + s + eps; // ε + 2s: 2s is exact, one rounding
        let d = if x >= 0.0 {
            -(-x).exp_m1() * scalar::sigmoid(s) * scalar::sigmoid(s + eps)
        } else {
            x.exp_m1() * scalar::sigmoid(-s) * scalar::sigmoid(-s - eps)
        };
        self.ratio(s) * d
    }
    fn convex_on(&self, tmax: f64) -> bool {
        tmax <= 0.5 * self.k.eps
    }
    /// `c_ε = tanh(ε/2)`.
    fn privacy_scale(&self) -> Option<f64> {
        Some(self.k.c)
    }
    /// `σ'(T)`: the link is logistic.
    fn link_curvature_floor(&self, tmax: f64) -> Option<f64> {
        Some(scalar::dsigmoid(tmax))
    }
    /// `0`: the loss tends to the finite limits `softplus(±ε)`.
    fn recession(&self, _t: f64, _y: u8) -> f64 {
        0.0
    }
    #[inline(always)]
    fn eval_simd<S: Simd>(&self, simd: S, t: &[f64], y: &[f64], out: LossOut<'_>) {
        let one = simd.splat_f64s(1.0);
        let zero = simd.splat_f64s(0.0);
        let k = self.k;
        let eps = simd.splat_f64s(k.eps);
        let k1 = simd.splat_f64s(k.c / k.keep); // 1 − e^{−ε}
        let c = simd.splat_f64s(k.c);
        let flip = simd.splat_f64s(k.flip);
        map_lanes(
            simd,
            t,
            y,
            out,
            #[inline(always)]
            |t, y, want| {
                let sign = simd.sub_f64s(simd.add_f64s(y, y), one); // 2ỹ − 1
                let s = simd.mul_f64s(sign, t);
                let lg = logistic(simd, s);
                let se = simd.add_f64s(s, eps); // s + ε
                let e2 = exp_nonpos(simd, simd.neg_f64s(simd.abs_f64s(se))); // e^{−|s+ε|}
                let v = if want.0 {
                    let a = simd.sub_f64s(simd.splat_f64s(-k.sp_neg_eps), lg.sp_neg);
                    let b = simd.sub_f64s(simd.splat_f64s(-k.sp_eps), lg.sp_pos);
                    // |a − b| = |s + ε|
                    let l = log1p_unit(simd, e2);
                    simd.neg_f64s(simd.add_f64s(simd.max_f64s(a, b), l))
                } else {
                    one
                };
                let (g, h) = if want.1 || want.2 {
                    let sig_s = sigmoid_from(simd, s, lg.e); // σ(s)
                    let sig_neg_s = sigmoid_from(simd, simd.neg_f64s(s), lg.e); // σ(−s)
                    let sig_se = sigmoid_from(simd, se, e2); // σ(s+ε)

                    // r = c_ε σ'(s)/p̃₁(s), or (1 − e^{−ε}) σ(s+ε) σ(−s) below RATIO_FAR
                    let p = simd.mul_add_e_f64s(c, sig_s, flip);
                    let near = simd.div_f64s(simd.mul_f64s(c, dsigmoid_from(simd, lg.e)), p);
                    let far = simd.mul_f64s(k1, simd.mul_f64s(sig_se, sig_neg_s));
                    let ratio = simd.select_f64s(simd.less_than_f64s(s, simd.splat_f64s(RATIO_FAR)), far, near);
                    let g = simd.neg_f64s(simd.mul_f64s(sign, ratio));
                    let h = if want.2 {
                        // D = σ(s) + σ(s+ε) − 1: −expm1(−x) σ(s) σ(s+ε) for x = ε + 2s ≥ 0,
                        // expm1(x) σ(−s) σ(−s−ε) for x < 0.
                        let x = simd.add_f64s(simd.add_f64s(s, s), eps);
                        let (_, xm1) = exp_em1_nonpos(simd, simd.neg_f64s(simd.abs_f64s(x)));
                        let x_neg = simd.less_than_f64s(x, zero);
                        let sig_neg_se = sigmoid_from(simd, simd.neg_f64s(se), e2); // σ(−s−ε)
                        let pos = simd.mul_f64s(simd.neg_f64s(xm1), simd.mul_f64s(sig_s, sig_se));
                        let negv = simd.mul_f64s(xm1, simd.mul_f64s(sig_neg_s, sig_neg_se));
                        simd.mul_f64s(ratio, simd.select_f64s(x_neg, negv, pos))
                    } else {
                        one
                    };
                    (g, h)
                } else {
                    (one, one)
                };
                [v, g, h]
            },
        );
    }
}

/// Debiased RR loss (Chowdhury, Zhou & Natarajan (2024), eqs. 4–5): `ℓ̂(t; ỹ) = −log p̂_ỹ(t)` with
/// `log p̂₁ = σ_ε log σ(t) − σ̄_ε log(1−σ(t))`, evaluated as
/// `ℓ̂ = c_ε softplus(s) + σ̄_ε s`, `s = (1−2ỹ)t` (no cancellation; equal to
/// `σ_ε softplus(s) − σ̄_ε softplus(−s)`).
///
/// `ℓ̂' = (1−2ỹ)(c_ε σ(s) + σ̄_ε)`, `ℓ̂'' = c_ε σ'(t)` (label-free). Unbiased up to scale:
/// `E[ℓ̂(t; ỹ) | y] = c_ε ℓ_MLE(t; y)`. Convex but **unbounded below** (`ℓ̂(t;1) ~ −σ̄_ε t`):
/// a minimiser exists only on a bounded set such as `Θ_B`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RrDebiased {
    k: RrConstants,
}

impl RrDebiased {
    /// The loss for RR level `eps` (finite, > 0).
    pub fn new(eps: f64) -> Result<Self> {
        Ok(RrDebiased {
            k: RrConstants::new(eps)?,
        })
    }
    /// The RR constants.
    pub fn constants(&self) -> &RrConstants {
        &self.k
    }
}

impl Loss for RrDebiased {
    /// `c_ε σ'(t) ≤ c_ε/4`.
    fn curvature_sup(&self) -> f64 {
        0.25 * self.k.c
    }
    const CONVEX: bool = true;
    const BOUNDED_BELOW: bool = false;

    fn name(&self) -> &'static str {
        "debiased-rr"
    }
    fn value(&self, t: f64, y: u8) -> f64 {
        let s = if y == 1 { -t } else { t };
        self.k.c * scalar::softplus(s) + self.k.flip * s
    }
    fn d1(&self, t: f64, y: u8) -> f64 {
        let s = if y == 1 { -t } else { t };
        let g = self.k.c * scalar::sigmoid(s) + self.k.flip;
        if y == 1 {
            -g
        } else {
            g
        }
    }
    fn d2(&self, t: f64, _y: u8) -> f64 {
        self.k.c * scalar::dsigmoid(t)
    }
    /// `c_ε = tanh(ε/2)`.
    fn privacy_scale(&self) -> Option<f64> {
        Some(self.k.c)
    }
    /// `σ'(T)`: the link is logistic.
    fn link_curvature_floor(&self, tmax: f64) -> Option<f64> {
        Some(scalar::dsigmoid(tmax))
    }
    /// `c_ε max(s, 0) + σ̄_ε s`, `s = (1−2ỹ)t`: negative for `s < 0`, so the loss is unbounded
    /// below.
    fn recession(&self, t: f64, y: u8) -> f64 {
        let s = if y == 1 { -t } else { t };
        self.k.c * s.max(0.0) + self.k.flip * s
    }
    #[inline(always)]
    fn eval_simd<S: Simd>(&self, simd: S, t: &[f64], y: &[f64], out: LossOut<'_>) {
        let one = simd.splat_f64s(1.0);
        let c = simd.splat_f64s(self.k.c);
        let flip = simd.splat_f64s(self.k.flip);
        map_lanes(
            simd,
            t,
            y,
            out,
            #[inline(always)]
            |t, y, want| {
                let sign = simd.sub_f64s(one, simd.add_f64s(y, y)); // 1 − 2ỹ
                let s = simd.mul_f64s(sign, t);
                let lg = logistic(simd, s);
                let v = if want.0 {
                    simd.mul_add_e_f64s(c, lg.sp_pos, simd.mul_f64s(flip, s))
                } else {
                    one
                };
                let g = if want.1 {
                    simd.mul_f64s(sign, simd.mul_add_e_f64s(c, sigmoid_from(simd, s, lg.e), flip))
                } else {
                    one
                };
                let h = if want.2 {
                    simd.mul_f64s(c, dsigmoid_from(simd, lg.e))
                } else {
                    one
                };
                [v, g, h]
            },
        );
    }
}

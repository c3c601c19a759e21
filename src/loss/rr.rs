//! Losses for labels privatised by binary randomized response (seed 000, §4).

use super::{map_lanes, Loss, LossOut};
use crate::error::{check_eps, Result};
use crate::kernels::simd_math::{
    dsigmoid_from, exp_nonpos, log1p_unit, logistic, one_minus_two_sigmoid_from, scalar,
    sigmoid_from,
};
use pulp::Simd;

/// Privacy constants of binary RR with level ε (spec §0): `σ_ε = σ(ε)`, `σ̄_ε = σ(−ε)`,
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

/// Noisy-channel likelihood of RR labels ("MLE-RR", seed 000 eq. 3, spec §3.2):
/// `ℓ(t; ỹ) = −log p̃₁(s)`, `s = (2ỹ−1)t`, `p̃₁(s) = σ_ε σ(s) + σ̄_ε σ(−s) = σ̄_ε + c_ε σ(s)`,
/// evaluated as `log p̃₁(s) = logaddexp(−softplus(−ε) − softplus(−s), −softplus(ε) − softplus(s))`
/// (the two arguments differ by exactly `ε + s`).
///
/// `ℓ' = −(2ỹ−1) c_ε σ'(s) / p̃₁(s)`,
/// `ℓ'' = c_ε σ'(s) [c_ε σ'(s) − (1 − 2σ(s)) p̃₁(s)] / p̃₁(s)²` (quotient forms, no cancellation).
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
    /// `p̃₁(s)`.
    #[inline]
    fn p1(&self, s: f64) -> f64 {
        self.k.flip + self.k.c * scalar::sigmoid(s)
    }
}

impl Loss for RrNoisyChannel {
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
        let r = self.k.c * scalar::dsigmoid(s) / self.p1(s);
        if y == 1 {
            -r
        } else {
            r
        }
    }
    fn d2(&self, t: f64, y: u8) -> f64 {
        let s = Self::s(t, y);
        let p = self.p1(s);
        let cd = self.k.c * scalar::dsigmoid(s);
        let one_m_2sig = -(0.5 * s).tanh();
        cd * (cd - one_m_2sig * p) / (p * p)
    }
    fn convex_on(&self, tmax: f64) -> bool {
        tmax <= 0.5 * self.k.eps
    }
    /// `0`: the loss tends to the finite limits `softplus(±ε)`.
    fn recession(&self, _t: f64, _y: u8) -> f64 {
        0.0
    }
    #[inline(always)]
    fn eval_simd<S: Simd>(&self, simd: S, t: &[f64], y: &[f64], out: LossOut<'_>) {
        let one = simd.splat_f64s(1.0);
        let k = self.k;
        map_lanes(simd, t, y, out, #[inline(always)] |t, y, want| {
            let sign = simd.sub_f64s(simd.add_f64s(y, y), one); // 2ỹ − 1
            let s = simd.mul_f64s(sign, t);
            let lg = logistic(simd, s);
            let v = if want.0 {
                let a = simd.sub_f64s(simd.splat_f64s(-k.sp_neg_eps), lg.sp_neg);
                let b = simd.sub_f64s(simd.splat_f64s(-k.sp_eps), lg.sp_pos);
                let gap = simd.abs_f64s(simd.add_f64s(s, simd.splat_f64s(k.eps))); // |a − b|
                let l = log1p_unit(simd, exp_nonpos(simd, simd.neg_f64s(gap)));
                simd.neg_f64s(simd.add_f64s(simd.max_f64s(a, b), l))
            } else {
                one
            };
            let (g, h) = if want.1 || want.2 {
                let sig = sigmoid_from(simd, s, lg.e);
                let p = simd.mul_add_e_f64s(simd.splat_f64s(k.c), sig, simd.splat_f64s(k.flip));
                let cd = simd.mul_f64s(simd.splat_f64s(k.c), dsigmoid_from(simd, lg.e));
                let ratio = simd.div_f64s(cd, p);
                let g = simd.neg_f64s(simd.mul_f64s(sign, ratio));
                let h = if want.2 {
                    let om = one_minus_two_sigmoid_from(simd, s, lg.e, lg.em1);
                    // cd (cd − om p) / p² = ratio · (ratio − om)
                    simd.mul_f64s(ratio, simd.sub_f64s(ratio, om))
                } else {
                    one
                };
                (g, h)
            } else {
                (one, one)
            };
            [v, g, h]
        });
    }
}

/// Debiased RR loss (seed 000 eqs. 4–5, spec §3.3): `ℓ̂(t; ỹ) = −log p̂_ỹ(t)` with
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
        map_lanes(simd, t, y, out, #[inline(always)] |t, y, want| {
            let sign = simd.sub_f64s(one, simd.add_f64s(y, y)); // 1 − 2ỹ
            let s = simd.mul_f64s(sign, t);
            let lg = logistic(simd, s);
            let v = if want.0 {
                simd.mul_add_e_f64s(c, lg.sp_pos, simd.mul_f64s(flip, s))
            } else {
                one
            };
            let g = if want.1 {
                simd.mul_f64s(
                    sign,
                    simd.mul_add_e_f64s(c, sigmoid_from(simd, s, lg.e), flip),
                )
            } else {
                one
            };
            let h = if want.2 {
                simd.mul_f64s(c, dsigmoid_from(simd, lg.e))
            } else {
                one
            };
            [v, g, h]
        });
    }
}

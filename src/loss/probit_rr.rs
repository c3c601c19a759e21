//! Thurstone (probit) losses for labels privatised by binary randomized response (Chowdhury, Zhou
//! & Natarajan (2024), Sec. 4.4: the Thurstone model `P(y = 1 | t) = Φ(t)` with the RR channel of
//! their eq. 2).
//!
//! With `ρ = σ̄_ε = 1/(1 + e^ε)` the flip probability, `σ_ε = 1 − ρ` and `c_ε = tanh(ε/2) =
//! σ_ε − σ̄_ε` ([`RrConstants`]):
//!
//! * [`ProbitRrNoisyChannel`] (`probit-rr`): the likelihood of the randomised label,
//!   `P(ỹ = 1 | t) = (1 − ρ)Φ(t) + ρ(1 − Φ(t)) = σ̄_ε + c_ε Φ(t)` (the probit analogue of the
//!   noisy-channel MLE-RR, their eq. 3). Bounded below, **not convex**.
//! * [`ProbitRrDebiased`] (`debiased-probit`): the debiased loss whose gradient is the paper's
//!   SGD-RR gradient `ĝ = Σ_y ∇log p_y/(e^ε + 1) − ∇log p_ỹ` (Sec. 4.3, which Sec. 4.4 extends to
//!   the Thurstone link `p₁ = Φ(t)`, `p₀ = Φ(−t)`): `E[ℓ̂(t; ỹ) | y] = c_ε ℓ_probit(t; y)`.
//!   **Not convex** and **unbounded below** (unlike the logistic debiased loss).
//!
//! The paper states only the SGD result for this model ("a similar error bound as Theorem 4.5
//! … with a proper choice of the curvature parameter γ"); the full-batch estimators here are the
//! minimisers of these losses over a bounded set, certified global only where the sum is convex
//! on the set ([`Loss::convex_on`]).

use super::rr::RrConstants;
use super::{Loss, LossOut};
use crate::error::Result;
use crate::math::simd::scalar;
use crate::math::special::{ln_npdf, log_phi_parts, npdf};
use pulp::Simd;

#[inline]
fn signed(t: f64, y: u8) -> f64 {
    if y == 1 {
        t
    } else {
        -t
    }
}

/// Noisy-channel probit likelihood of RR labels (`probit-rr`):
/// `ℓ(t; ỹ) = −log p̃(s)`, `s = (2ỹ−1)t`, `p̃(s) = σ̄_ε + c_ε Φ(s)` (`= (1−ρ)Φ(s) + ρ(1−Φ(s))`,
/// `ρ = 1/(1+e^ε)`), evaluated as `log p̃ = logaddexp(log σ̄_ε, log c_ε + log Φ(s))` (two positive
/// terms: no cancellation; `log Φ` from the stable probit code).
///
/// `ℓ' = −(2ỹ−1) r(s)` and `ℓ'' = r(s)(s + r(s))` with `r(s) = c_ε φ(s)/p̃(s)` (since
/// `d p̃/ds = c_ε φ(s)` and `φ'(s) = −sφ(s)`). `r ≤ h = φ/Φ`, so `|ℓ''| ≤ 1` where `s + r ≥ 0`.
///
/// **Not convex**: `ℓ'' < 0` exactly where `s < −r(s)`, which always happens in the left tail
/// (`r(s) → 0` while `s → −∞`): the loss flattens to `softplus(ε) = −log σ̄_ε`. As for the
/// logistic noisy-channel loss ([`RrNoisyChannel`](super::RrNoisyChannel)), solvers return
/// stationary points, certified global only when [`Loss::convex_on`] holds on the feasible ball:
/// a sufficient condition is `T ≤ 2c_ε φ(T)` (for `s ≤ 0`, `p̃ ≤ ½` so `r(s) ≥ 2c_ε φ(s) ≥
/// 2c_ε φ(T)` on `[−T, 0]`). Bounded below by `softplus(−ε)`.
///
/// Near the zero of `s + r(s)` the sum cancels: `ℓ''` there is accurate to a few ulps of
/// `r·|s|`, not relative to itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbitRrNoisyChannel {
    k: RrConstants,
    ln_c: f64,
    ln_flip: f64,
}

impl ProbitRrNoisyChannel {
    /// The loss for RR level `eps` (finite, > 0).
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for an invalid `eps`.
    pub fn new(eps: f64) -> Result<Self> {
        let k = RrConstants::new(eps)?;
        Ok(ProbitRrNoisyChannel {
            k,
            ln_c: k.c.ln(),
            ln_flip: -k.sp_eps,
        })
    }
    /// The RR constants.
    pub fn constants(&self) -> &RrConstants {
        &self.k
    }
    /// `(log p̃(s), r(s))`.
    #[inline]
    fn parts(&self, s: f64) -> (f64, f64) {
        let lp = scalar::logaddexp(self.ln_flip, self.ln_c + log_phi_parts(s).0);
        let p = lp.exp();
        let r = if p >= f64::MIN_POSITIVE {
            self.k.c * npdf(s) / p
        } else {
            (self.ln_c + ln_npdf(s) - lp).exp()
        };
        (lp, r)
    }
}

impl Loss for ProbitRrNoisyChannel {
    const CONVEX: bool = false;
    const BOUNDED_BELOW: bool = true;

    fn name(&self) -> &'static str {
        "probit-rr"
    }
    fn value(&self, t: f64, y: u8) -> f64 {
        -self.parts(signed(t, y)).0
    }
    fn d1(&self, t: f64, y: u8) -> f64 {
        let r = self.parts(signed(t, y)).1;
        if y == 1 {
            -r
        } else {
            r
        }
    }
    fn d2(&self, t: f64, y: u8) -> f64 {
        let s = signed(t, y);
        let r = self.parts(s).1;
        r * (s + r)
    }
    /// `max(1, (e^ε − 1)φ(1))`: where `s + r ≥ 0`, `r(s + r) ≤ h(s + h) = A(s) ≤ 1` (`r ≤ h`);
    /// where `s + r < 0`, `|ℓ''| ≤ r|s| ≤ (c_ε/σ̄_ε)|s|φ(s) ≤ (e^ε − 1)φ(1)`.
    fn curvature_sup(&self) -> f64 {
        (self.k.eps.exp_m1() * npdf(1.0)).max(1.0)
    }
    /// Sufficient: `tmax ≤ 2c_ε φ(tmax)` (type docs).
    fn convex_on(&self, tmax: f64) -> bool {
        tmax <= 2.0 * self.k.c * npdf(tmax)
    }
    /// `c_ε = tanh(ε/2)`.
    fn privacy_scale(&self) -> Option<f64> {
        Some(self.k.c)
    }
    /// `A(T)`: the link is probit.
    fn link_curvature_floor(&self, tmax: f64) -> Option<f64> {
        Some(log_phi_parts(tmax).2)
    }
    /// `0`: the loss tends to the finite limits `softplus(±ε)`.
    fn recession(&self, _t: f64, _y: u8) -> f64 {
        0.0
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
            let (lp, r) = self.parts(s);
            if let Some(v) = value.as_deref_mut() {
                v[i] = -lp;
            }
            if let Some(g) = d1.as_deref_mut() {
                g[i] = if pos { -r } else { r };
            }
            if let Some(g) = d2.as_deref_mut() {
                g[i] = r * (s + r);
            }
        }
    }
}

/// Debiased probit loss for RR labels (`debiased-probit`): with `P(s) = −log Φ(s)` and
/// `s = (2ỹ−1)t`,
/// `ℓ̂(t; ỹ) = −(ỹ − σ̄_ε) log Φ(t) − (σ_ε − ỹ) log Φ(−t) = σ_ε P(s) − σ̄_ε P(−s)`,
/// the probit form of the debiased loss of Chowdhury, Zhou & Natarajan (2024), eqs. 4–5
/// (`log p̂₁ = σ_ε log p₁ − σ̄_ε log p₀`), whose gradient is their SGD-RR gradient `ĝ`.
///
/// * `ℓ̂' = −(2ỹ−1)(σ_ε h(s) + σ̄_ε h(−s))`, `ℓ̂'' = σ_ε A(s) − σ̄_ε A(−s)`, with `h = φ/Φ` and
///   `A = h(s + h) ∈ (0, 1)` decreasing.
/// * Unbiased up to scale: `E[ℓ̂(t; ỹ) | y] = c_ε ℓ_probit(t; y)` (`E[ỹ | y] = σ̄_ε + c_ε y`).
/// * **Not convex** (`A` is not even: `ℓ̂'' < 0` once `σ_ε A(s) < σ̄_ε A(−s)`, e.g. `ε = 0.5`,
///   `s = 1`) and **unbounded below** (`ℓ̂ ~ −σ̄_ε s²/2` as `s → +∞`). The fit therefore needs
///   a bounded feasible set; it is convex on `|t| ≤ T` exactly when `σ_ε A(T) ≥ σ̄_ε A(−T)`
///   ([`Loss::convex_on`], `A` decreasing), and elsewhere solvers return stationary points, as
///   for the noisy-channel losses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbitRrDebiased {
    k: RrConstants,
}

impl ProbitRrDebiased {
    /// The loss for RR level `eps` (finite, > 0).
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for an invalid `eps`.
    pub fn new(eps: f64) -> Result<Self> {
        Ok(ProbitRrDebiased {
            k: RrConstants::new(eps)?,
        })
    }
    /// The RR constants.
    pub fn constants(&self) -> &RrConstants {
        &self.k
    }
    /// `(ℓ̂, ℓ̂'/(−(2ỹ−1)), ℓ̂'')` at `s`.
    #[inline]
    fn parts(&self, s: f64) -> (f64, f64, f64) {
        let (lp, hp, ap) = log_phi_parts(s);
        let (lm, hm, am) = log_phi_parts(-s);
        let (keep, flip) = (self.k.keep, self.k.flip);
        (-keep * lp + flip * lm, keep * hp + flip * hm, keep * ap - flip * am)
    }
}

impl Loss for ProbitRrDebiased {
    const CONVEX: bool = false;
    const BOUNDED_BELOW: bool = false;

    fn name(&self) -> &'static str {
        "debiased-probit"
    }
    fn value(&self, t: f64, y: u8) -> f64 {
        self.parts(signed(t, y)).0
    }
    fn d1(&self, t: f64, y: u8) -> f64 {
        let g = self.parts(signed(t, y)).1;
        if y == 1 {
            -g
        } else {
            g
        }
    }
    fn d2(&self, t: f64, y: u8) -> f64 {
        self.parts(signed(t, y)).2
    }
    /// `σ_ε`: `ℓ̂'' ∈ (−σ̄_ε, σ_ε)` since `A ∈ (0, 1)`.
    fn curvature_sup(&self) -> f64 {
        self.k.keep
    }
    /// Exact: `σ_ε A(T) ≥ σ̄_ε A(−T)` (type docs).
    fn convex_on(&self, tmax: f64) -> bool {
        self.k.keep * log_phi_parts(tmax).2 >= self.k.flip * log_phi_parts(-tmax).2
    }
    /// `c_ε = tanh(ε/2)`.
    fn privacy_scale(&self) -> Option<f64> {
        Some(self.k.c)
    }
    /// `A(T)`: the link is probit.
    fn link_curvature_floor(&self, tmax: f64) -> Option<f64> {
        Some(log_phi_parts(tmax).2)
    }
    /// `−∞` for `s = (2ỹ−1)t > 0` (quadratic decrease), `+∞` for `s < 0`, `0` at `t = 0`.
    fn recession(&self, t: f64, y: u8) -> f64 {
        let s = signed(t, y);
        if s > 0.0 {
            f64::NEG_INFINITY
        } else if s < 0.0 {
            f64::INFINITY
        } else {
            0.0
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
            let (v, g, h) = self.parts(s);
            if let Some(o) = value.as_deref_mut() {
                o[i] = v;
            }
            if let Some(o) = d1.as_deref_mut() {
                o[i] = if pos { -g } else { g };
            }
            if let Some(o) = d2.as_deref_mut() {
                o[i] = h;
            }
        }
    }
}

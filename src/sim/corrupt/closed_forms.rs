//! Closed forms of randomized response under the oblivious mask.

/// `c(ε) = coth(ε/2) = (e^ε + 1)/(e^ε − 1)`: the privacy factor of Zhou, Wu & Orabona (2025),
/// Alg. 1, the scale of the debiased label `ŷ = c(ε)(z + σ(ε) − 1)`. Its reciprocal `tanh(ε/2)`
/// is the `c_ε` of Chowdhury, Zhou & Natarajan (2024).
pub fn rr_privacy_factor(eps: f64) -> f64 {
    1.0 / (0.5 * eps).tanh()
}

/// The closed forms of the oblivious mask at privacy `ε` and corruption `α` (see the module docs):
/// `(flip rate CTL, flip rate LTC, |bias| CTL, |bias| LTC)` with `q = σ(−ε)`:
/// `q + α(1 − 2q)`, `q + α(1 − q)`, `α`, `α e^ε/(e^ε − 1)`.
pub fn oblivious_mask_closed_forms(eps: f64, alpha: f64) -> (f64, f64, f64, f64) {
    let q = 1.0 / (1.0 + eps.exp());
    (
        q + alpha * (1.0 - 2.0 * q),
        q + alpha * (1.0 - q),
        alpha,
        alpha / (-(-eps).exp_m1()),
    )
}

/// The corruption fraction at which LTC with the oblivious mask destroys all signal (flip rate
/// `q + α(1 − q) ≥ ½`): `α* = (e^ε − 1)/(2e^ε)` (0.0476 at ε = 0.1, 0.197 at
/// ε = 0.5). CTL keeps signal for every `α < ½`.
pub fn ltc_signal_threshold(eps: f64) -> f64 {
    -0.5 * (-eps).exp_m1()
}

//! Rényi-DP accountant for the Poisson-subsampled Gaussian mechanism (SGM), the privacy
//! accounting of user-wise DP-SGD and AdapUserPriv-SGD. Zhang et al. (2025) defer this
//! accounting to Google's `dp_accounting`; everything here comes from the DP literature cited
//! below, not from that paper (summary in `docs/papers.md`).
//!
//! **Mechanism.** Each step releases `Σ_{u ∈ U} g_u + N(0, σ²C² I)`, where every unit (a user)
//! enters the batch `U` independently with probability `q` (Poisson sampling) and contributes a
//! vector of norm `≤ C`. `σ` is the *noise multiplier* (noise standard deviation over the
//! ℓ₂ sensitivity `C`).
//!
//! **RDP of one step, add/remove neighbours** (Mironov, Talwar & Zhang 2019, "Rényi Differential
//! Privacy of the Sampled Gaussian Mechanism", Sec. 3.3). With `μ₀ = N(0, σ²)`, `μ₁ = N(1, σ²)`,
//! `μ = (1−q)μ₀ + qμ₁`, the step is `(α, ε(α))`-RDP for `ε(α) = ln(A_α)/(α−1)`,
//! `A_α = E_{z∼μ₀}[(μ(z)/μ₀(z))^α]` (this direction dominates the other one, ibid.):
//!
//! * **integer α** (binomial expansion): `A_α = Σ_{k=0}^{α} C(α,k)(1−q)^{α−k}q^k e^{(k²−k)/(2σ²)}`.
//!   Because `Σ_k C(α,k)(1−q)^{α−k}q^k = 1`, this is evaluated as
//!   `A_α − 1 = Σ_{k=2}^{α} C(α,k)(1−q)^{α−k}q^k expm1((k²−k)/(2σ²))`, a sum of **positive**
//!   terms (the `k = 0, 1` terms vanish), in log space (log-sum-exp). No cancellation: `A − 1`
//!   keeps full relative accuracy even when it is `1e-12`, where the textbook sum of `O(1)` terms
//!   would keep four digits.
//! * **fractional α** (the two-sided erfc series of the same paper): split the integral at
//!   `z₀ = σ² ln(1/q − 1) + 1/2`, where `q e^{(2z−1)/(2σ²)} = 1 − q`, and expand
//!   `((1−q) + q e^{(2z−1)/(2σ²)})^α` binomially on each side (generalised binomial
//!   coefficients `C(α,i)`). Term by term, with `w = √2 σ` and `K = (1−q)^α e^{−z₀²/(2σ²)}`,
//!   `A_α = (K/2) Σ_{i≥0} C(α,i) [erfcx((i − z₀)/w) + erfcx((i − α + z₀)/w)]`
//!   (`erfcx(t) = e^{t²} erfc(t)`; derived here from the paper's form
//!   `Σ C(α,i)(1−q)^{α−i}q^i e^{(i²−i)/(2σ²)} Φ((z₀−i)/σ) + Σ C(α,i) q^{α−i}(1−q)^i e^{((α−i)²−(α−i))/(2σ²)} Φ((α−i−z₀)/σ)`
//!   by completing the square). Terms are evaluated in log space in whichever of the two forms
//!   has no large cancelling exponents. The exact `1` is subtracted term-wise from the `i = 0, 1`
//!   terms (`(1−q)^{α−1}(1+(α−1)q) − 1 = expm1((α−1)ln(1−q) + ln(1+(α−1)q))`, by its power
//!   series for small `q`), so `A − 1` keeps its relative accuracy (about `(1+σ²)·1e-15`).
//!   **Truncation**: for `i ≥ ⌈α⌉` the terms alternate in sign and decrease in magnitude
//!   (`|C(α,i)|` decreases and erfcx is decreasing), so the series stops at the first such term
//!   below `1e-17·|sum|` — a rigorous bound on the tail (Leibniz). If 32 terms past `⌈α⌉` do not
//!   get there (the tail decays polynomially when `z₀/σ` is small), the rest of the alternating
//!   tail is summed by the Euler transform and the estimate is checked to lie between two
//!   consecutive partial sums.
//!
//! Both are checked against an independent 40-digit mpmath computation (direct binomial sums for
//! integer orders, quadrature of the defining integral for fractional ones):
//! `tests/reference/gen_rdp.py`, `tests/data/rdp_reference.json`, `tests/library/rdp.rs`.
//!
//! **Composition.** `T` steps (adaptively) give `(α, T·ε(α))`-RDP; RDP values of different
//! mechanisms add order-wise ([`RdpCurve::compose`]). Pure `ε₀`-DP implies
//! `(α, min(ε₀, αε₀²/2))`-RDP (Bun & Steinke 2016, Prop. 3.3 with Lemma 4.2 of Mironov 2017)
//! ([`RdpCurve::add_pure_dp`]).
//!
//! **RDP → (ε, δ)** ([`Conversion`]), minimised over the order grid; the best order is reported:
//! * [`Conversion::Classic`] (Mironov 2017, Prop. 3): `ε = ε_RDP(α) + ln(1/δ)/(α−1)`;
//! * [`Conversion::Improved`] (default; Canonne, Kamath & Steinke 2020, Prop. 12; also Asoodeh
//!   et al. 2021 and Balle et al. 2020, Thm 21):
//!   `ε = max(0, ε_RDP(α) + ln((α−1)/α) − (ln δ + ln α)/(α−1))`. The proof is in the cited paper
//!   (from `δ = e^{(α−1)(ε_RDP−ε)}/α·(1−1/α)^{α−1}`); it is tighter than the classic one at
//!   every order (both added terms are negative). `tests/library/rdp.rs` checks it against the exact
//!   privacy profile of the Gaussian mechanism (`q = 1`), which it must never undercut.
//!
//! **Neighbouring relations** ([`Neighbours`]). User-level *label* DP is a
//! *replace-one* relation on a public set of users: the user stays in the population, is sampled
//! with probability `q` in both worlds, and its contribution changes from `a` to `b`
//! (`‖a‖, ‖b‖ ≤ C`). The add/remove SGM formula under-states that divergence.
//! * [`Neighbours::AddRemove`]: the SGM above (paper-faithful; what `dp_accounting` computes).
//! * [`Neighbours::Replace`] (**proven**, the default for label DP): route through the
//!   intermediate run `D₀` in which the user's contribution is 0 at every step (each step is then
//!   an add/remove SGM pair in either direction) and apply the weak triangle inequality of
//!   Rényi divergences (Mironov 2017, Prop. 11, Hölder with exponents 2, 2):
//!   `D_α(P‖R) ≤ ((α − 1/2)/(α − 1))·D_{2α}(P‖Q) + D_{2α−1}(Q‖R)`, i.e. per step
//!   `ε_rep(α) = ((α−½)/(α−1))·ε_SGM(2α) + ε_SGM(2α−1)`, linear in the number of steps.
//! * [`Neighbours::ReplaceSensitivity2`]: the add/remove SGM
//!   with sensitivity `2C` (noise multiplier `σ/2`). Exact at `q = 1`, and above
//!   [`Neighbours::ReplaceNumeric`] on every point we tested, but **no proof is known to us**
//!   for `q < 1`; recorded as such.
//! * [`Neighbours::ReplaceNumeric`]: the Rényi divergence of the antipodal pair
//!   `P = (1−q)N(0,σ²) + qN(1,σ²)`, `Q = (1−q)N(0,σ²) + qN(−1,σ²)` (sensitivity normalised to
//!   `C = 1`; both directions are equal by the symmetry `z → −z`) by adaptive Gauss–Kronrod
//!   quadrature. That the antipodal pair is the worst case over the ball is a numerical finding
//!   on a grid of pairs (ours), not a theorem: a numerical estimate, not a guarantee.
//!
//! **Noise calibration** ([`Accountant::calibrate_sigma`]): bisection on `σ` (ε is decreasing in
//! `σ`), keeping the invariant "the upper end satisfies the target", and returning the upper end:
//! the returned `σ` never undershoots. The target is tightened by a relative `1e-10` so that the
//! accountant's own rounding (measured ≤ 1e-12 relative) cannot turn a computed pass into a true
//! failure.

use crate::error::{check_delta, check_eps, Error, Result};
use crate::math::quadrature::integrate;
use crate::math::simd::scalar::softplus;
use crate::math::special::{ln_erfcx, ln_ndtr, ndtr, ndtr_interval};
use std::f64::consts::{LN_2, SQRT_2};

/// The default order grid (the one of Google's `dp_accounting`):
/// `{1.1, 1.2, …, 10.9} ∪ {11, 12, …, 63} ∪ {128, 256, 512, 1024}` (156 orders; the first
/// group is `k/10` for `k = 11..=109`).
pub fn default_orders() -> Vec<f64> {
    let mut v: Vec<f64> = (11..=109).map(|k| k as f64 / 10.0).collect();
    v.extend((11..=63).map(|k| k as f64));
    v.extend([128.0, 256.0, 512.0, 1024.0]);
    v
}

/// The integer orders `2, 3, …, max` (the grid of the `dp_accounting` reference values in the
/// tests, with `max = 256`).
pub fn integer_orders(max: u32) -> Vec<f64> {
    (2..=max).map(f64::from).collect()
}

/// The neighbouring relation the accountant protects (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Neighbours {
    /// Add/remove one unit: the Poisson-subsampled Gaussian of Mironov, Talwar & Zhang 2019.
    /// Paper-faithful; under-states the loss of user-level *label* DP (a replace relation).
    AddRemove,
    /// Replace one unit's contribution (`a → b`, both in the `C`-ball), **proven** bound through
    /// the weak triangle inequality:
    /// `ε(α) = ((α−½)/(α−1))·ε_SGM(2α) + ε_SGM(2α−1)` per step.
    #[default]
    Replace,
    /// Replace one unit, as the add/remove SGM with sensitivity `2C` (noise multiplier `σ/2`),
    /// a conservative-looking shortcut. Not proven for `q < 1` (see the module docs).
    ReplaceSensitivity2,
    /// Replace one unit, the antipodal pair by quadrature (numerical estimate, not a proof).
    ReplaceNumeric,
}

impl Neighbours {
    /// Parses the CLI name: `add-remove`, `replace`, `replace-sensitivity2`, `replace-numeric`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "add-remove" => Ok(Neighbours::AddRemove),
            "replace" => Ok(Neighbours::Replace),
            "replace-sensitivity2" => Ok(Neighbours::ReplaceSensitivity2),
            "replace-numeric" => Ok(Neighbours::ReplaceNumeric),
            other => Err(Error::param(
                "neighbours",
                format!(
                    "unknown relation `{other}` (expected add-remove, replace, replace-sensitivity2 or replace-numeric)"
                ),
            )),
        }
    }
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            Neighbours::AddRemove => "add-remove",
            Neighbours::Replace => "replace",
            Neighbours::ReplaceSensitivity2 => "replace-sensitivity2",
            Neighbours::ReplaceNumeric => "replace-numeric",
        }
    }
    /// Whether the bound is a theorem for its relation (`false` for the two replace variants
    /// that rest on numerical findings).
    pub fn proven(&self) -> bool {
        matches!(self, Neighbours::AddRemove | Neighbours::Replace)
    }
}

/// How an RDP curve is turned into `(ε, δ)` (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Conversion {
    /// `ε = ε_RDP(α) + ln(1/δ)/(α−1)` (Mironov 2017, Prop. 3).
    Classic,
    /// `ε = max(0, ε_RDP(α) + ln((α−1)/α) − (ln δ + ln α)/(α−1))` (Canonne, Kamath & Steinke
    /// 2020, Prop. 12).
    #[default]
    Improved,
}

impl Conversion {
    /// The CLI name: `classic` or `improved`.
    pub fn name(&self) -> &'static str {
        match self {
            Conversion::Classic => "classic",
            Conversion::Improved => "improved",
        }
    }
    /// Parses the CLI name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "classic" => Ok(Conversion::Classic),
            "improved" => Ok(Conversion::Improved),
            other => Err(Error::param(
                "conversion",
                format!("unknown conversion `{other}` (expected classic or improved)"),
            )),
        }
    }
    /// `ε` at one order for a composed RDP value `rdp` (`+∞` when `rdp` is).
    pub fn epsilon_at(&self, rdp: f64, alpha: f64, delta: f64) -> f64 {
        if !(rdp < f64::INFINITY) {
            return f64::INFINITY;
        }
        let am1 = alpha - 1.0;
        match self {
            Conversion::Classic => rdp + (-delta.ln()) / am1,
            Conversion::Improved => (rdp + (-1.0 / alpha).ln_1p() - (delta.ln() + alpha.ln()) / am1).max(0.0),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/// Checks a Poisson sampling rate `q ∈ (0, 1]`.
pub fn check_sampling_rate(q: f64) -> Result<()> {
    if q > 0.0 && q <= 1.0 {
        Ok(())
    } else {
        Err(Error::param("sampling-rate", format!("must be in (0, 1], got {q}")))
    }
}

/// Checks a noise multiplier `σ > 0`, finite.
pub fn check_noise_multiplier(sigma: f64) -> Result<()> {
    if sigma.is_finite() && sigma > 0.0 {
        Ok(())
    } else {
        Err(Error::param(
            "noise-multiplier",
            format!("must be finite and > 0, got {sigma}"),
        ))
    }
}

/// The largest Rényi order accepted: the integer orders' binomial sums and the fractional
/// orders' quadrature cost time proportional to the order (an order of 1.8e19 never returned),
/// and the best order of any accountant run here is far below it.
pub const MAX_ORDER: f64 = 1e4;

/// The most orders in one grid.
pub const MAX_ORDERS: usize = 1024;

fn check_order(alpha: f64) -> Result<()> {
    if alpha.is_finite() && alpha > 1.0 && alpha <= MAX_ORDER {
        Ok(())
    } else {
        Err(Error::param(
            "orders",
            format!("every order must be finite, > 1 and <= {MAX_ORDER:e}, got {alpha}"),
        ))
    }
}

fn check_steps(steps: u64) -> Result<()> {
    if steps >= 1 {
        Ok(())
    } else {
        Err(Error::param("steps", "must be >= 1, got 0"))
    }
}

// ---------------------------------------------------------------------------------------------
// Special functions
// ---------------------------------------------------------------------------------------------

/// `ln(e^x − 1)` for `x > 0`.
fn ln_expm1(x: f64) -> f64 {
    if x > 40.0 {
        x + (-(-x).exp()).ln_1p()
    } else {
        x.exp_m1().ln()
    }
}

/// `ln(e^a + e^b)`.
fn ln_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// Neumaier-compensated running sum.
#[derive(Default, Clone, Copy)]
struct Sum {
    s: f64,
    c: f64,
}

impl Sum {
    fn add(&mut self, x: f64) {
        let t = self.s + x;
        if self.s.abs() >= x.abs() {
            self.c += (self.s - t) + x;
        } else {
            self.c += (x - t) + self.s;
        }
        self.s = t;
    }
    fn value(&self) -> f64 {
        self.s + self.c
    }
}

// ---------------------------------------------------------------------------------------------
// The sampled Gaussian mechanism, add/remove
// ---------------------------------------------------------------------------------------------

/// Per-step RDP `ε(α)` of the Poisson-subsampled Gaussian mechanism with sampling rate `q` and
/// noise multiplier `σ`, add/remove neighbours (Mironov, Talwar & Zhang 2019; module docs):
/// `ε(α) = ln(A_α)/(α − 1)`. Integer orders use the positive binomial sum, fractional ones the
/// erfc series. `q = 1` gives the Gaussian mechanism `α/(2σ²)` exactly. `+∞` when `A_α`
/// overflows the double range in log space (only for absurdly small `σ`).
///
/// # Errors
/// [`Error::InvalidParam`] for `q ∉ (0, 1]`, `σ ≤ 0` or non-finite, an order `≤ 1`;
/// [`Error::Numerical`] if the fractional series fails its convergence check.
pub fn sgm_rdp(q: f64, sigma: f64, alpha: f64) -> Result<f64> {
    check_sampling_rate(q)?;
    check_noise_multiplier(sigma)?;
    check_order(alpha)?;
    let ln_am1 = sgm_ln_a_minus_1(q, sigma, alpha)?;
    Ok(softplus(ln_am1) / (alpha - 1.0))
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

/// Fractional order, `0 < q < 1`: `ln(A_α − 1)` by the erfc series (module docs). All terms are
/// scaled by `e^{−M}`, `M = max(0, max_i ln|term_i|)` over `i ≤ ⌈α⌉` (the terms decrease in
/// magnitude beyond), so that `A` far beyond the double range (small σ, large α) stays finite.
fn sgm_ln_a_minus_1_frac(q: f64, sigma: f64, alpha: f64) -> Result<f64> {
    let s2 = sigma * sigma;
    let inv2s2 = 0.5 / s2;
    let w = SQRT_2 * sigma;
    let lq = q.ln();
    let l1q = (-q).ln_1p();
    let z0 = s2 * (l1q - lq) + 0.5;
    let ln_k_half = alpha * l1q - z0 * z0 * inv2s2 - LN_2; // ln(K/2)

    // ln of the magnitudes of the region-1 and region-2 terms of index i, given ln|C(α,i)|.
    let ln_terms = |i: f64, ln_c: f64| -> (f64, f64) {
        let la = if i < 2.0 {
            f64::NEG_INFINITY
        } else {
            let t = (i - z0) / w;
            if t < 0.0 {
                ln_c + (alpha - i) * l1q + i * lq + (i * i - i) * inv2s2 + ln_ndtr((z0 - i) / sigma)
            } else {
                ln_c + ln_k_half + ln_erfcx(t)
            }
        };
        let j = alpha - i;
        let t2 = (i - alpha + z0) / w;
        let lb = if t2 < 0.0 {
            ln_c + j * lq + i * l1q + (j * j - j) * inv2s2 + ln_ndtr((j - z0) / sigma)
        } else {
            ln_c + ln_k_half + ln_erfcx(t2)
        };
        (la, lb)
    };
    // ln|C(α,i)| and sign(C(α,i)) by the recurrence C(α,i) = C(α,i−1)(α−i+1)/i.
    let next_c = |i: f64, ln_c: &mut f64, sign: &mut f64| {
        let r = (alpha - i + 1.0) / i;
        if r < 0.0 {
            *sign = -*sign;
        }
        *ln_c += r.abs().ln();
    };
    let alt_start = alpha.ceil();
    let mut scale = 0.0f64;
    {
        let (mut ln_c, mut sign) = (0.0f64, 1.0f64);
        let mut i = 0.0;
        while i <= alt_start {
            if i > 0.0 {
                next_c(i, &mut ln_c, &mut sign);
            }
            let (la, lb) = ln_terms(i, ln_c);
            scale = scale.max(la).max(lb);
            i += 1.0;
        }
    }
    let e_m = (-scale).exp();
    let term = |i: f64, ln_c: f64, sign: f64| -> f64 {
        let (la, lb) = ln_terms(i, ln_c);
        sign * ((la - scale).exp() + (lb - scale).exp())
    };

    // i = 0, 1 of region 1 minus their share of the exact 1, and region 2's share of the 1.
    let phi0 = ndtr(z0 / sigma);
    let dphi = -ndtr_interval((z0 - 1.0) / sigma, z0 / sigma); // Φ((z0−1)/σ) − Φ(z0/σ)
    let p = ((alpha - 1.0) * l1q).exp(); // (1−q)^{α−1}
    let mut sum = Sum::default();
    sum.add(e_m * phi0 * g_term(alpha, q).exp_m1());
    sum.add(e_m * q * (alpha * p - 1.0) * dphi);
    sum.add(-e_m * (1.0 - q) * ndtr(-z0 / sigma));
    sum.add(-e_m * q * ndtr((1.0 - z0) / sigma));

    let finish = |v: f64| -> Result<f64> {
        if v > 0.0 && v.is_finite() {
            Ok(scale + v.ln())
        } else {
            Err(Error::Numerical(format!(
                "sampled Gaussian RDP: A - 1 = {v:e}·e^{scale} is not positive (q = {q}, sigma = {sigma}, order = {alpha})"
            )))
        }
    };
    const TOL: f64 = 1e-17;
    let direct_max = alt_start + 32.0;
    let mut ln_c = 0.0f64;
    let mut sign = 1.0f64;
    let mut i = 0.0f64;
    loop {
        if i > 0.0 {
            next_c(i, &mut ln_c, &mut sign);
        }
        let c = term(i, ln_c, sign);
        sum.add(c);
        if i >= alt_start && c.abs() <= TOL * sum.value().abs() {
            return finish(sum.value());
        }
        if i >= direct_max {
            break;
        }
        i += 1.0;
    }
    // Euler transform of the alternating tail Σ_{j≥0} c_{N+j}, N = i + 1:
    // Σ_j (−1)^j β_j = Σ_k (−1)^k (Δ^k β)_0 / 2^{k+1}, β_j = |c_{N+j}|.
    let mut betas: Vec<f64> = Vec::new();
    let mut diag: Vec<f64> = Vec::new();
    let mut first_sign = 0.0;
    let mut tail = Sum::default();
    for k in 0..120usize {
        i += 1.0;
        next_c(i, &mut ln_c, &mut sign);
        let c = term(i, ln_c, sign);
        if k == 0 {
            first_sign = c.signum();
        }
        betas.push(c.abs());
        // diag[j] = (Δ^j β)_{k−j}, updated from the previous diagonal: (Δ^k β)_0 = diag[k].
        let mut prev = c.abs();
        for slot in diag.iter_mut() {
            let cur = prev - *slot;
            *slot = prev;
            prev = cur;
        }
        diag.push(prev);
        let dk = diag[k];
        let e = if k % 2 == 0 { dk } else { -dk } / 2f64.powi(k as i32 + 1);
        tail.add(e);
        if k >= 2 && e.abs() <= TOL * sum.value().abs() {
            let t = tail.value();
            // The alternating tail lies between β₀ − β₁ and β₀.
            if !(t <= betas[0] * (1.0 + 1e-12) && t >= (betas[0] - betas[1]) * (1.0 - 1e-12)) {
                break;
            }
            sum.add(first_sign * t);
            return finish(sum.value());
        }
    }
    Err(Error::Numerical(format!(
        "sampled Gaussian RDP: the erfc series did not converge (q = {q}, sigma = {sigma}, order = {alpha})"
    )))
}

// ---------------------------------------------------------------------------------------------
// Replace-one: the antipodal pair by quadrature
// ---------------------------------------------------------------------------------------------

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
/// As [`sgm_rdp`]; [`Error::Numerical`] if the quadrature does not converge.
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
            "replace-numeric RDP: integrand not finite (q = {q}, sigma = {sigma}, order = {alpha})"
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
            "replace-numeric RDP: H - 1 = {integral:e} is not positive (q = {q}, sigma = {sigma}, order = {alpha})"
        )));
    }
    Ok(softplus(shift + integral.ln()) / (alpha - 1.0))
}

/// Per-step RDP at order `α` of one Poisson-subsampled Gaussian step for the given relation
/// (module docs): add/remove SGM; the proven replace bound
/// `((α−½)/(α−1))·ε_SGM(2α) + ε_SGM(2α−1)`; the SGM at `σ/2`; or the antipodal quadrature.
///
/// # Errors
/// As [`sgm_rdp`] and [`replace_numeric_rdp`].
pub fn step_rdp(q: f64, sigma: f64, alpha: f64, neighbours: Neighbours) -> Result<f64> {
    match neighbours {
        Neighbours::AddRemove => sgm_rdp(q, sigma, alpha),
        Neighbours::Replace => {
            check_order(alpha)?;
            let a = sgm_rdp(q, sigma, 2.0 * alpha)?;
            let b = sgm_rdp(q, sigma, 2.0 * alpha - 1.0)?;
            Ok((alpha - 0.5) / (alpha - 1.0) * a + b)
        }
        Neighbours::ReplaceSensitivity2 => {
            check_noise_multiplier(sigma)?;
            sgm_rdp(q, 0.5 * sigma, alpha)
        }
        Neighbours::ReplaceNumeric => replace_numeric_rdp(q, sigma, alpha),
    }
}

// ---------------------------------------------------------------------------------------------
// Curves, conversion, calibration
// ---------------------------------------------------------------------------------------------

/// A composed RDP curve: `(α_j, ε_RDP(α_j))` on an order grid. Composition adds curves
/// order-wise (adaptive composition of RDP, Mironov 2017, Prop. 1).
#[derive(Debug, Clone, PartialEq)]
pub struct RdpCurve {
    orders: Vec<f64>,
    values: Vec<f64>,
}

/// `(ε, δ)` from an RDP curve, with the order that attains it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpsilonAtDelta {
    /// The smallest `ε` over the grid.
    pub epsilon: f64,
    /// The order that attains it.
    pub order: f64,
    /// The composed RDP at that order.
    pub rdp: f64,
    /// `δ`.
    pub delta: f64,
}

impl RdpCurve {
    /// The zero curve (no mechanism yet) on `orders`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if `orders` is empty or holds an order `≤ 1` or non-finite.
    pub fn zero(orders: &[f64]) -> Result<Self> {
        if orders.is_empty() {
            return Err(Error::param("orders", "the order grid is empty"));
        }
        if orders.len() > MAX_ORDERS {
            return Err(Error::param(
                "orders",
                format!("{} orders in the grid, at most {MAX_ORDERS}", orders.len()),
            ));
        }
        for &a in orders {
            check_order(a)?;
        }
        Ok(RdpCurve {
            orders: orders.to_vec(),
            values: vec![0.0; orders.len()],
        })
    }

    /// `steps` compositions of the Poisson-subsampled Gaussian (rate `q`, noise multiplier
    /// `σ`) under `neighbours`: `steps · ε_step(α)` at every order.
    ///
    /// # Errors
    /// As [`step_rdp`]; `steps = 0` is an error.
    pub fn sampled_gaussian(orders: &[f64], q: f64, sigma: f64, steps: u64, neighbours: Neighbours) -> Result<Self> {
        check_steps(steps)?;
        check_sampling_rate(q)?;
        check_noise_multiplier(sigma)?;
        let mut c = RdpCurve::zero(orders)?;
        for (v, &a) in c.values.iter_mut().zip(orders) {
            *v = steps as f64 * step_rdp(q, sigma, a, neighbours)?;
        }
        Ok(c)
    }

    /// The orders.
    pub fn orders(&self) -> &[f64] {
        &self.orders
    }
    /// The composed RDP values, one per order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Adds another curve on the same grid (composition).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if the order grids differ.
    pub fn compose(&mut self, other: &RdpCurve) -> Result<()> {
        if self.orders != other.orders {
            return Err(Error::param(
                "orders",
                "cannot compose RDP curves on different order grids",
            ));
        }
        for (v, o) in self.values.iter_mut().zip(&other.values) {
            *v += o;
        }
        Ok(())
    }

    /// The `k`-fold self-composition: `k·ε(α)` at every order.
    pub fn times(&self, k: u64) -> RdpCurve {
        RdpCurve {
            orders: self.orders.clone(),
            values: self.values.iter().map(|v| k as f64 * v).collect(),
        }
    }

    /// Composes a pure `ε₀`-DP mechanism: `+ min(ε₀, αε₀²/2)` at every order (Bun & Steinke
    /// 2016: pure `ε₀`-DP is `ε₀²/2`-zCDP, i.e. `(α, αε₀²/2)`-RDP; and `(α, ε₀)`-RDP trivially).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] unless `ε₀ > 0` finite.
    pub fn add_pure_dp(&mut self, eps0: f64) -> Result<()> {
        check_eps(eps0)?;
        for (v, &a) in self.values.iter_mut().zip(&self.orders) {
            *v += eps0.min(0.5 * a * eps0 * eps0);
        }
        Ok(())
    }

    /// The smallest `ε` over the grid for `δ` and the order attaining it (ties: the smaller
    /// order).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] unless `δ ∈ (0, 1)`; [`Error::Privacy`] if `ε` is infinite at
    /// every order (the RDP overflowed).
    pub fn epsilon(&self, delta: f64, conversion: Conversion) -> Result<EpsilonAtDelta> {
        check_delta(delta)?;
        let best = self.best(delta, conversion);
        if !best.epsilon.is_finite() {
            return Err(Error::Privacy(
                "the RDP accountant gives an infinite epsilon at every order (noise far too small)".into(),
            ));
        }
        Ok(best)
    }

    fn best(&self, delta: f64, conversion: Conversion) -> EpsilonAtDelta {
        let mut best = EpsilonAtDelta {
            epsilon: f64::INFINITY,
            order: self.orders[0],
            rdp: self.values[0],
            delta,
        };
        for (&a, &r) in self.orders.iter().zip(&self.values) {
            let e = conversion.epsilon_at(r, a, delta);
            if e < best.epsilon {
                best = EpsilonAtDelta {
                    epsilon: e,
                    order: a,
                    rdp: r,
                    delta,
                };
            }
        }
        best
    }
}

/// The accountant: an order grid, a neighbouring relation and a conversion.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Accountant {
    /// The order grid (default [`default_orders`]).
    pub orders: Vec<f64>,
    /// The relation (default [`Neighbours::Replace`], proven for label DP).
    pub neighbours: Neighbours,
    /// The conversion (default [`Conversion::Improved`]).
    pub conversion: Conversion,
}

impl Default for Accountant {
    fn default() -> Self {
        Accountant {
            orders: default_orders(),
            neighbours: Neighbours::Replace,
            conversion: Conversion::Improved,
        }
    }
}

/// The result of [`Accountant::epsilon`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpsilonReport {
    /// `ε` for the given `δ`.
    pub epsilon: f64,
    /// The best order.
    pub order: f64,
    /// The composed RDP at the best order.
    pub rdp: f64,
    /// `δ`.
    pub delta: f64,
    /// Sampling rate `q`.
    pub sampling_rate: f64,
    /// Noise multiplier `σ`.
    pub noise_multiplier: f64,
    /// Number of steps.
    pub steps: u64,
}

/// The result of [`Accountant::calibrate_sigma`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SigmaCalibration {
    /// The noise multiplier: `ε(σ) ≤ target` (never undershoots).
    pub noise_multiplier: f64,
    /// `ε` achieved at that `σ` (`≤` the target).
    pub epsilon: f64,
    /// The best order at that `σ`.
    pub order: f64,
    /// The target `ε`.
    pub target_epsilon: f64,
    /// `δ`.
    pub delta: f64,
    /// Bisection steps used.
    pub iterations: usize,
}

/// Relative margin by which [`Accountant::calibrate_sigma`] tightens its target.
pub const CALIBRATION_MARGIN: f64 = 1e-10;

impl Accountant {
    /// An accountant on `orders` for `neighbours`, with the improved conversion.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if an order is `≤ 1`, non-finite, or the grid is empty.
    pub fn new(orders: Vec<f64>, neighbours: Neighbours) -> Result<Self> {
        RdpCurve::zero(&orders)?;
        Ok(Accountant {
            orders,
            neighbours,
            conversion: Conversion::Improved,
        })
    }

    /// The composed RDP curve of `steps` steps at `(q, σ)`.
    ///
    /// # Errors
    /// As [`RdpCurve::sampled_gaussian`].
    pub fn curve(&self, q: f64, sigma: f64, steps: u64) -> Result<RdpCurve> {
        RdpCurve::sampled_gaussian(&self.orders, q, sigma, steps, self.neighbours)
    }

    /// `(ε, δ)` of `steps` Poisson-subsampled Gaussian steps at `(q, σ)`, minimised over the
    /// order grid, with the best order.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for invalid `q`, `σ`, `steps`, `δ`; [`Error::Numerical`] /
    /// [`Error::Privacy`] as in [`RdpCurve`].
    pub fn epsilon(&self, q: f64, sigma: f64, steps: u64, delta: f64) -> Result<EpsilonReport> {
        check_delta(delta)?;
        let e = self.curve(q, sigma, steps)?.epsilon(delta, self.conversion)?;
        Ok(EpsilonReport {
            epsilon: e.epsilon,
            order: e.order,
            rdp: e.rdp,
            delta,
            sampling_rate: q,
            noise_multiplier: sigma,
            steps,
        })
    }

    /// `ε` (possibly `+∞`) for the bisection.
    fn eps_raw(&self, q: f64, sigma: f64, steps: u64, delta: f64) -> Result<f64> {
        Ok(self.curve(q, sigma, steps)?.best(delta, self.conversion).epsilon)
    }

    /// The noise multiplier for a target `(ε, δ)` after `steps` steps at sampling rate `q`
    /// (the `PrivacyAccount` step of Zhang et al. (2025), Alg. 2 and 4): bisection on `σ` (ε
    /// decreases in σ) with the invariant `ε(σ_hi) ≤ ε_target·(1 − 1e-10)`; returns `σ_hi` once
    /// `σ_hi/σ_lo − 1 ≤ 1e-10`. The returned `σ` therefore **never undershoots**: its ε is below
    /// the target, with a relative margin `1e-10` that covers the accountant's rounding.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for invalid inputs; [`Error::Privacy`] when the target is below
    /// what the order grid can certify for any `σ ≤ 1e8` (add larger orders), or so large that
    /// `σ < 1e-6` would do (the noise would be meaningless; check the inputs).
    pub fn calibrate_sigma(&self, q: f64, steps: u64, eps: f64, delta: f64) -> Result<SigmaCalibration> {
        check_sampling_rate(q)?;
        check_steps(steps)?;
        check_eps(eps)?;
        check_delta(delta)?;
        let target = eps * (1.0 - CALIBRATION_MARGIN);
        let ok = |s: f64| -> Result<bool> { Ok(self.eps_raw(q, s, steps, delta)? <= target) };
        // Bracket: hi satisfies, lo does not.
        let (mut lo, mut hi) = (0.5, 1.0);
        if ok(hi)? {
            loop {
                if lo < 1e-6 {
                    return Err(Error::Privacy(format!(
                        "target eps = {eps} is met by any noise multiplier down to 1e-6: check the inputs"
                    )));
                }
                if !ok(lo)? {
                    break;
                }
                hi = lo;
                lo *= 0.5;
            }
        } else {
            loop {
                lo = hi;
                hi *= 2.0;
                if hi > 1e8 {
                    return Err(Error::Privacy(format!(
                        "target eps = {eps} at delta = {delta} cannot be certified on this order grid by any noise multiplier <= 1e8 (largest order {}); add larger orders",
                        self.orders.iter().cloned().fold(f64::NAN, f64::max)
                    )));
                }
                if ok(hi)? {
                    break;
                }
            }
        }
        let mut iterations = 0;
        while hi / lo - 1.0 > 1e-10 {
            let mid = 0.5 * (lo + hi);
            if ok(mid)? {
                hi = mid;
            } else {
                lo = mid;
            }
            iterations += 1;
        }
        let rep = self.epsilon(q, hi, steps, delta)?;
        debug_assert!(rep.epsilon <= eps);
        Ok(SigmaCalibration {
            noise_multiplier: hi,
            epsilon: rep.epsilon,
            order: rep.order,
            target_epsilon: eps,
            delta,
            iterations,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn closed_forms() {
        // q = 1: the Gaussian mechanism α/(2σ²) (q=1, σ=2, α=5 gives 0.625).
        assert!(rel(sgm_rdp(1.0, 2.0, 5.0).unwrap(), 0.625) < 1e-15);
        assert!(rel(sgm_rdp(1.0, 2.0, 5.5).unwrap(), 5.5 / 8.0) < 1e-15);
        // α = 2: log(1 + q²(e^{1/σ²} − 1)) (q = 0.01, σ = 1 gives 1.7181342e-4).
        for &(q, s) in &[(0.01f64, 1.0f64), (0.3, 0.7), (1e-5, 3.0)] {
            let want = (q * q * (1.0 / (s * s)).exp_m1()).ln_1p();
            assert!(rel(sgm_rdp(q, s, 2.0).unwrap(), want) < 1e-14, "{q} {s}");
        }
        assert!(rel(sgm_rdp(0.01, 1.0, 2.0).unwrap(), 1.718_134_2e-4) < 1e-7);
    }

    #[test]
    fn per_order_reference_values() {
        // Values of Google's dp_accounting (8 digits).
        for &(q, s, a, want) in &[
            (0.01, 1.1, 2.0, 1.285_100_8e-4),
            (0.01, 1.1, 8.0, 5.840_703e-4),
            (0.01, 1.1, 32.0, 8.469_416_4),
            (0.1, 2.0, 2.0, 2.836_228_3e-3),
            (0.1, 2.0, 8.0, 1.372_543_0e-2),
            (0.1, 2.0, 32.0, 1.627_202_3),
        ] {
            let got = sgm_rdp(q, s, a).unwrap();
            assert!(rel(got, want) < 1e-6, "q={q} σ={s} α={a}: {got} vs {want}");
        }
    }

    #[test]
    fn fractional_orders_interpolate_integer_ones() {
        // RDP is non-decreasing in α; the fractional series must sit between its neighbours.
        for &(q, s) in &[(0.01, 1.0), (0.1, 2.0), (0.5, 0.8), (0.001, 5.0), (0.9, 1.0)] {
            for k in 2..10 {
                let lo = sgm_rdp(q, s, k as f64).unwrap();
                let hi = sgm_rdp(q, s, k as f64 + 1.0).unwrap();
                for f in [0.1, 0.5, 0.9] {
                    let m = sgm_rdp(q, s, k as f64 + f).unwrap();
                    assert!(
                        lo <= m * (1.0 + 1e-13) && m <= hi * (1.0 + 1e-13),
                        "q={q} σ={s} α={k}+{f}"
                    );
                }
            }
        }
    }

    #[test]
    fn replace_modes_order() {
        // add/remove ≤ numeric antipodal ≤ proven replace; numeric ≤ sensitivity 2 on these points.
        for &(q, s, a) in &[
            (0.01, 1.0, 2.0),
            (0.1, 1.0, 4.0),
            (0.1, 2.0, 8.0),
            (0.5, 1.0, 2.0),
            (0.05, 3.0, 3.5),
        ] {
            let ar = step_rdp(q, s, a, Neighbours::AddRemove).unwrap();
            let num = step_rdp(q, s, a, Neighbours::ReplaceNumeric).unwrap();
            let tri = step_rdp(q, s, a, Neighbours::Replace).unwrap();
            let s2 = step_rdp(q, s, a, Neighbours::ReplaceSensitivity2).unwrap();
            assert!(
                ar < num && num < tri && num < s2,
                "q={q} σ={s} α={a}: {ar} {num} {tri} {s2}"
            );
        }
        // Quadrature of the antipodal pair, computed independently (3–4 digits).
        for &(q, s, a, want) in &[
            (0.01, 1.0, 2.0, 4.6e-4),
            (0.1, 1.0, 4.0, 0.1074),
            (0.1, 2.0, 8.0, 0.0411),
            (0.5, 1.0, 2.0, 0.8309),
        ] {
            let got = replace_numeric_rdp(q, s, a).unwrap();
            assert!(rel(got, want) < 0.01, "q={q} σ={s} α={a}: {got} vs {want}");
        }
    }

    #[test]
    fn conversions() {
        let c = RdpCurve::sampled_gaussian(&integer_orders(256), 0.1, 2.0, 100, Neighbours::AddRemove).unwrap();
        // dp_accounting: 2.586652 (improved) / 3.017247 (classic).
        assert!(rel(c.epsilon(1e-5, Conversion::Improved).unwrap().epsilon, 2.586_652) < 1e-6);
        assert!(rel(c.epsilon(1e-5, Conversion::Classic).unwrap().epsilon, 3.017_247) < 1e-6);
    }

    #[test]
    fn invalid_inputs() {
        let name = |r: Result<f64>| match r {
            Err(Error::InvalidParam { name, .. }) => name,
            other => panic!("expected InvalidParam, got {other:?}"),
        };
        assert_eq!(name(sgm_rdp(0.0, 1.0, 2.0)), "sampling-rate");
        assert_eq!(name(sgm_rdp(1.5, 1.0, 2.0)), "sampling-rate");
        assert_eq!(name(sgm_rdp(f64::NAN, 1.0, 2.0)), "sampling-rate");
        assert_eq!(name(sgm_rdp(0.1, 0.0, 2.0)), "noise-multiplier");
        assert_eq!(name(sgm_rdp(0.1, f64::INFINITY, 2.0)), "noise-multiplier");
        assert_eq!(name(sgm_rdp(0.1, 1.0, 1.0)), "orders");
        assert_eq!(name(sgm_rdp(0.1, 1.0, f64::NAN)), "orders");
        let acc = Accountant::default();
        assert!(matches!(
            acc.epsilon(0.1, 1.0, 0, 1e-5),
            Err(Error::InvalidParam { name: "steps", .. })
        ));
        assert!(matches!(
            acc.epsilon(0.1, 1.0, 10, 0.0),
            Err(Error::InvalidParam { name: "delta", .. })
        ));
        assert!(matches!(
            acc.calibrate_sigma(0.1, 10, -1.0, 1e-5),
            Err(Error::InvalidParam { name: "eps", .. })
        ));
        assert!(RdpCurve::zero(&[]).is_err());
    }
}

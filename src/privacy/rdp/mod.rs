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

mod accountant;
mod conversion;
mod curve;
pub(in crate::privacy) mod log_space;
mod neighbours;
mod replace_numeric;
mod subsampled_gaussian;

pub use accountant::{Accountant, Accounting, EpsilonReport, SigmaCalibration};
pub use conversion::Conversion;
pub use curve::{EpsilonAtDelta, RdpCurve};
pub use neighbours::{step_rdp, Neighbours};
pub use replace_numeric::replace_numeric_rdp;
pub use subsampled_gaussian::sgm_rdp;

use crate::error::{Error, Result};
use crate::math::show::num;

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

/// The order grid named by `spec`, and the grid's name:
/// * `"default"`: [`default_orders`], named `default`;
/// * `"integers:MAX"`: [`integer_orders`]`(MAX)`, `2, 3, …, MAX` with `2 ≤ MAX ≤`
///   [`MAX_ORDERS`], named `spec` itself;
/// * otherwise a comma-separated list of orders (`"1.5,2,4"`, blanks around each allowed), named
///   `list`.
///
/// The orders of a list are only parsed here; [`Accountant::new`] checks them (at most
/// [`MAX_ORDERS`] orders, each in `(1, 1e4]`, as for the RDP of the subsampled Gaussian of
/// Mironov, Talwar & Zhang (2019)).
///
/// # Errors
/// [`Error::InvalidParam`] (named `orders`) for an `integers:` spec whose `MAX` is not an integer
/// in `[2, MAX_ORDERS]`, or a list entry that is not a number.
pub fn parse_orders(spec: &str) -> Result<(Vec<f64>, String)> {
    if spec == "default" {
        return Ok((default_orders(), "default".into()));
    }
    if let Some(max) = spec.strip_prefix("integers:") {
        let m: u32 = max.parse().map_err(|_| {
            Error::param(
                "orders",
                format!("`{spec}`: expected integers:MAX with MAX an integer >= 2"),
            )
        })?;
        if m < 2 {
            return Err(Error::param("orders", format!("`{spec}`: MAX must be >= 2")));
        }
        if m as usize > MAX_ORDERS {
            return Err(Error::param("orders", format!("`{spec}`: MAX must be <= {MAX_ORDERS}")));
        }
        return Ok((integer_orders(m), spec.to_string()));
    }
    let mut v = Vec::new();
    for part in spec.split(',') {
        let a: f64 = part.trim().parse().map_err(|_| {
            Error::param(
                "orders",
                format!("`{part}` is not a number (expected default, integers:MAX or a comma-separated list)"),
            )
        })?;
        v.push(a);
    }
    Ok((v, "list".into()))
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/// Checks a Poisson sampling rate `q ∈ (0, 1]`.
fn check_sampling_rate(q: f64) -> Result<()> {
    if q > 0.0 && q <= 1.0 {
        Ok(())
    } else {
        Err(Error::param(
            "sampling-rate",
            format!("must be in (0, 1], got {}", num(q)),
        ))
    }
}

/// Checks a noise multiplier `σ > 0`, finite.
pub(crate) fn check_noise_multiplier(sigma: f64) -> Result<()> {
    if sigma.is_finite() && sigma > 0.0 {
        Ok(())
    } else {
        Err(Error::param(
            "noise-multiplier",
            format!("must be finite and > 0, got {}", num(sigma)),
        ))
    }
}

/// The largest Rényi order accepted: the integer orders' binomial sums and the fractional
/// orders' quadrature cost time proportional to the order (an order of 1.8e19 never returned),
/// and the best order of any accountant run here is far below it.
pub(crate) const MAX_ORDER: f64 = 1e4;

/// The most orders in one grid.
pub const MAX_ORDERS: usize = 1024;

fn check_order(alpha: f64) -> Result<()> {
    if alpha.is_finite() && alpha > 1.0 && alpha <= MAX_ORDER {
        Ok(())
    } else {
        Err(Error::param(
            "orders",
            format!(
                "every order must be finite, > 1 and <= {MAX_ORDER:e}, got {}",
                num(alpha)
            ),
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

#[cfg(test)]
mod tests;

//! The accountant: `ε` of a run of Poisson-subsampled Gaussian steps, and the calibration of
//! the noise multiplier for a target `(ε, δ)`.

use super::{check_sampling_rate, check_steps, default_orders, Conversion, Neighbours, RdpCurve};
use crate::error::{check_delta, check_eps, Error, Result};
use crate::privacy::pld::PldAccountant;

/// Which accountant turns `(q, σ, T)` into `(ε, δ)` and calibrates `σ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "lowercase"))]
pub enum Accounting {
    /// Rényi DP on the order grid with the conversion (this module; the default).
    #[default]
    Rdp,
    /// The privacy loss distribution ([`crate::privacy::pld`], default grid `1e-4`): tighter.
    /// The replace relations use the antipodal pair (not proven; see that module).
    Pld,
}

impl Accounting {
    /// The CLI name: `rdp` or `pld`.
    pub fn name(&self) -> &'static str {
        match self {
            Accounting::Rdp => "rdp",
            Accounting::Pld => "pld",
        }
    }
    /// Parses the CLI name.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (named `accountant`) for another name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "rdp" => Ok(Accounting::Rdp),
            "pld" => Ok(Accounting::Pld),
            other => Err(Error::param(
                "accountant",
                format!("unknown accountant `{other}` (expected rdp or pld)"),
            )),
        }
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
    /// Which accountant (default [`Accounting::Rdp`]; the order grid and the conversion only
    /// matter for RDP).
    pub accounting: Accounting,
}

impl Default for Accountant {
    fn default() -> Self {
        Accountant {
            orders: default_orders(),
            neighbours: Neighbours::Replace,
            conversion: Conversion::Improved,
            accounting: Accounting::Rdp,
        }
    }
}

/// The result of [`Accountant::epsilon`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct EpsilonReport {
    /// `ε` for the given `δ`.
    pub epsilon: f64,
    /// Which accountant gave `ε`.
    pub accounting: Accounting,
    /// The best order (`NaN` under [`Accounting::Pld`], which has no order).
    pub order: f64,
    /// The composed RDP at the best order (serialised as `rdp_at_order`, the key of the CLI's
    /// `account`; `NaN` under [`Accounting::Pld`]).
    #[cfg_attr(feature = "serde", serde(rename = "rdp_at_order"))]
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
    /// The best order at that `σ` (`NaN` under [`Accounting::Pld`]).
    pub order: f64,
    /// The target `ε`.
    pub target_epsilon: f64,
    /// `δ`.
    pub delta: f64,
    /// Bisection steps used (0 under [`Accounting::Pld`], which does not count them).
    pub iterations: usize,
}

/// Relative margin by which [`Accountant::calibrate_sigma`] tightens its target.
pub(crate) const CALIBRATION_MARGIN: f64 = 1e-10;

impl Accountant {
    /// Whether the accountant's bound is a theorem for its relation: [`Neighbours::proven`]
    /// under RDP, [`crate::privacy::pld::proven`] under PLD.
    pub fn proven(&self) -> bool {
        match self.accounting {
            Accounting::Rdp => self.neighbours.proven(),
            Accounting::Pld => crate::privacy::pld::proven(self.neighbours),
        }
    }

    /// One line naming the accountant, its relation and whether it is proven (for the notes of
    /// a guarantee).
    pub fn describe(&self) -> String {
        let status = if self.proven() {
            "proven"
        } else {
            "numerical, not proven"
        };
        match self.accounting {
            Accounting::Rdp => format!(
                "Gaussian part accounted by the RDP accountant of the Poisson-subsampled Gaussian, relation `{}` ({status}), {} conversion, {} orders up to {}",
                self.neighbours.name(),
                self.conversion.name(),
                self.orders.len(),
                self.orders.iter().cloned().fold(f64::NAN, f64::max)
            ),
            Accounting::Pld => format!(
                "Gaussian part accounted by the PLD accountant of the Poisson-subsampled Gaussian (connect-the-dots, grid 1e-4), relation `{}`{} ({status})",
                self.neighbours.name(),
                if self.neighbours == Neighbours::AddRemove { "" } else { " as the antipodal pair" },
            ),
        }
    }

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
            accounting: Accounting::Rdp,
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
        if self.accounting == Accounting::Pld {
            let r = PldAccountant::new(self.neighbours).epsilon(q, sigma, steps, delta)?;
            return Ok(EpsilonReport {
                epsilon: r.epsilon,
                accounting: Accounting::Pld,
                order: f64::NAN,
                rdp: f64::NAN,
                delta,
                sampling_rate: q,
                noise_multiplier: sigma,
                steps,
            });
        }
        let e = self.curve(q, sigma, steps)?.epsilon(delta, self.conversion)?;
        Ok(EpsilonReport {
            epsilon: e.epsilon,
            accounting: Accounting::Rdp,
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
        if self.accounting == Accounting::Pld {
            let (sigma, r) = PldAccountant::new(self.neighbours).calibrate_sigma(q, steps, eps, delta)?;
            return Ok(SigmaCalibration {
                noise_multiplier: sigma,
                epsilon: r.epsilon,
                order: f64::NAN,
                target_epsilon: eps,
                delta,
                iterations: 0,
            });
        }
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

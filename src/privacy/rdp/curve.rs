//! Composed RDP curves on an order grid, and their `(ε, δ)`.

use super::{
    check_noise_multiplier, check_order, check_sampling_rate, check_steps, step_rdp, Conversion, Neighbours, MAX_ORDERS,
};
use crate::error::{check_delta, check_eps, Error, Result};

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

    pub(super) fn best(&self, delta: f64, conversion: Conversion) -> EpsilonAtDelta {
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

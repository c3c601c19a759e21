//! The a-priori feature bound of the central-DP calibrations, with the horizon of the compared
//! items built in.
//!
//! Every central mechanism of the crate calibrates its noise to the norm of one comparison's
//! feature `x = ψ¹ − ψ⁰`. For a pairwise comparison `ψ = φ(s, a)` with `‖φ‖ ≤ L`, so
//! `‖x‖ ≤ 2L`. For a comparison of two trajectories of `H` steps, `ψ = Σ_{h=1}^{H} φ(s_h, a_h)`
//! ([`trajectory_pairs`](super::trajectory_pairs)), so `‖ψ‖ ≤ HL` and `‖x‖ ≤ 2HL`: the
//! gradient bound is `2HL` and the Hessian bound `4H²L²` (Lemma C.3 of "Provable protection of
//! human judgements" (anon., 2025)). Every sensitivity is therefore that of the pairwise case
//! with `L` replaced by
//!
//! `L_τ = H·L`  ([`FeatureBound::value`]).
//!
//! A [`FeatureBound`] holds `H` and the per-step `L` and is the only way the central estimators
//! accept a bound, so the product is formed here and never by the caller; data built by
//! [`trajectory_pairs`](super::trajectory_pairs) carry their horizon, and a bound with another
//! horizon is refused ([`FeatureBound::check_rows`]) instead of calibrating `H` times too little
//! noise.

use super::{Features, PairwiseView};
use crate::error::{Error, Result};

/// `‖φ(s, a)‖₂ ≤ L` for every state–action pair, for items of `H` steps (`H = 1`: pairwise
/// comparisons; `H > 1`: trajectory comparisons). See the module docs. Built only by
/// [`FeatureBound::pairwise`] and [`FeatureBound::trajectory`], which check `L` finite and
/// `> 0`, `H ≥ 1` and `2HL` finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeatureBound {
    per_step: f64,
    horizon: usize,
}

impl FeatureBound {
    /// The bound of pairwise comparisons: `‖φ‖ ≤ l`, so `‖x‖ ≤ 2l` (`H = 1`).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] named `feature-bound` unless `l` is finite and `> 0`.
    pub fn pairwise(l: f64) -> Result<Self> {
        Self::trajectory(1, l)
    }

    /// The bound of comparisons of trajectories of `horizon` steps with `‖φ‖ ≤ per_step` at
    /// every step: `‖Σ_h φ‖ ≤ H·L` and `‖x‖ ≤ 2HL` (module docs).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] named `horizon` for `horizon = 0`, named `feature-bound` unless
    /// `per_step` is finite and `> 0` and `2·H·L` is finite.
    pub fn trajectory(horizon: usize, per_step: f64) -> Result<Self> {
        if horizon == 0 {
            return Err(Error::param("horizon", "must be at least 1 (1 = pairwise comparisons)"));
        }
        if !(per_step.is_finite() && per_step > 0.0) {
            return Err(Error::param(
                "feature-bound",
                format!("must be finite and > 0, got {per_step}"),
            ));
        }
        let b = FeatureBound { per_step, horizon };
        if !b.row_limit().is_finite() {
            return Err(Error::param(
                "feature-bound",
                format!("2·H·L = 2·{horizon}·{per_step} overflows"),
            ));
        }
        Ok(b)
    }

    /// The per-step bound `L` (`‖φ(s, a)‖ ≤ L`).
    #[inline]
    pub fn per_step(&self) -> f64 {
        self.per_step
    }

    /// The horizon `H` of the compared items (1 for pairwise comparisons).
    #[inline]
    pub fn horizon(&self) -> usize {
        self.horizon
    }

    /// `L_τ = H·L`, the bound on `‖ψ‖` of one compared item: the `L` of every pairwise formula
    /// (noise scales, curvature `γ`, covariance sensitivity). Equals `L` for `H = 1`.
    #[inline]
    pub fn value(&self) -> f64 {
        self.horizon as f64 * self.per_step
    }

    /// `2·H·L`, the bound on a row `‖x_i‖` of the comparison features.
    #[inline]
    pub(crate) fn row_limit(&self) -> f64 {
        2.0 * self.value()
    }

    /// Checks that the bound fits `data`: data built from trajectories of horizon `H > 1`
    /// ([`PairwiseView::horizon`]) need a bound with the same horizon, and every row needs
    /// `‖x_i‖ ≤ 2HL` (no slack, no clipping).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] named `feature-bound` for a horizon mismatch;
    /// [`Error::FeatureBound`] naming the first row above `2HL`.
    pub(crate) fn check_data(&self, data: &PairwiseView<'_>) -> Result<()> {
        self.check_horizon(data.horizon())?;
        let Some(shard) = data.shard() else {
            return self.check_rows(data.features(), data.d());
        };
        // Distributed: each member checks its own rows; the first violation over all members
        // is the single-process error (the same row gives the same norm on every member).
        let limit = self.row_limit();
        let mine = self.first_violation(data.features(), data.d(), shard.rows());
        let msg = mine.map_or([-1.0, 0.0], |(row, norm)| [row as f64, norm]);
        let all = shard.collective().all_gather(&msg);
        let first = all
            .chunks_exact(2)
            .filter(|m| m[0] >= 0.0)
            .min_by(|a, b| a[0].total_cmp(&b[0]));
        match first {
            Some(m) => Err(Error::FeatureBound {
                row: m[0] as usize,
                norm: m[1],
                limit,
            }),
            None => Ok(()),
        }
    }

    /// The horizon check of [`FeatureBound::check_data`] for data of horizon `horizon`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] named `feature-bound` when `horizon > 1` differs from the bound's.
    pub(crate) fn check_horizon(&self, horizon: usize) -> Result<()> {
        if horizon > 1 && horizon != self.horizon {
            let what = if self.horizon == 1 {
                "a pairwise (per-step) bound".to_string()
            } else {
                format!("a bound for horizon {}", self.horizon)
            };
            return Err(Error::param(
                "feature-bound",
                format!(
                    "the data are trajectory comparisons of horizon {horizon} (each row sums {horizon} per-step differences, ‖x‖ ≤ 2·{horizon}·L) but {what} was given: state FeatureBound::trajectory({horizon}, L) (CLI --horizon {horizon}) so that the noise is calibrated to {horizon}·L"
                ),
            ));
        }
        Ok(())
    }

    /// The row check of [`FeatureBound::check_data`] on row-major features with `d` columns.
    ///
    /// # Errors
    /// [`Error::FeatureBound`] naming the first row with `‖x_i‖ > 2HL` (or a non-finite norm).
    pub(crate) fn check_rows(&self, x: Features<'_>, d: usize) -> Result<()> {
        let n = x.len() / d.max(1);
        match self.first_violation(x, d, 0..n) {
            Some((row, norm)) => Err(Error::FeatureBound {
                row,
                norm,
                limit: self.row_limit(),
            }),
            None => Ok(()),
        }
    }

    /// The first row of `rows` whose norm is not `≤` the row limit, with its norm.
    fn first_violation(&self, x: Features<'_>, d: usize, rows: std::ops::Range<usize>) -> Option<(usize, f64)> {
        let limit = self.row_limit();
        let d = d.max(1);
        let mut buf = vec![0.0; d];
        rows.map(|row| {
            let r = x.row(row, d, &mut buf);
            (row, r.iter().map(|v| v * v).sum::<f64>().sqrt())
        })
        .find(|&(_, norm)| !(norm <= limit))
    }
}

impl std::fmt::Display for FeatureBound {
    /// `L` for pairwise comparisons, `H·L = H × L` for trajectories.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.horizon == 1 {
            write!(f, "{}", self.per_step)
        } else {
            write!(f, "{} = {} × {}", self.value(), self.horizon, self.per_step)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_horizon_times_per_step() {
        let b = FeatureBound::trajectory(3, 0.5).unwrap();
        assert_eq!(
            (b.horizon(), b.per_step(), b.value(), b.row_limit()),
            (3, 0.5, 1.5, 3.0)
        );
        assert_eq!(FeatureBound::pairwise(2.0).unwrap().value(), 2.0);
        assert!(FeatureBound::trajectory(0, 1.0).is_err());
        assert!(FeatureBound::trajectory(2, f64::MAX).is_err());
        for l in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(FeatureBound::pairwise(l).is_err());
        }
    }
}

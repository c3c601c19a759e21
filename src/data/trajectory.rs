//! Trajectory comparisons ("Provable protection of human judgements" (anon., 2025), Sec. 5 / App.
//! C).
//!
//! A record compares two trajectories `τ⁰, τ¹` of `H` steps from the same start state, and
//! `y = 1` means `τ¹` is preferred. Under BTL on summed rewards `r_θ(τ) = Σ_h φ(s_h, a_h)ᵀθ`,
//!
//! `P(y = 1) = σ(x_iᵀθ)`,  `x_i = Σ_{h=1}^{H} [φ(s_{h1}, a_{h1}) − φ(s_{h0}, a_{h0})]`,
//!
//! so a trajectory comparison is a pairwise comparison with the summed per-step difference as its
//! feature (`‖x‖ ≤ 2HL`), and every pairwise estimator (MLE, RR, debiased RR, central) applies
//! unchanged to [`trajectory_pairs`]'s output. The data covariance of the theory is then
//! `(1/n) Σ_i x_i x_iᵀ` with this summed `x` (the paper's Sec. 5 defines it as a sum of per-step
//! outer products, but its loss Hessian and the sensitivity proof of Lemma C.5 use `x_i x_iᵀ`).

use super::{check_finite_rows, FeatureBound, PairwiseData, PairwiseView};
use crate::error::{DataErrorKind, Error, GroupLocation, Location, Result};

/// Trajectory comparisons as pairwise data (the summed per-step differences, [`trajectory_pairs`])
/// together with their horizon `H` and the largest per-step feature norm seen.
///
/// Its [`view`](TrajectoryPairs::view) carries the horizon ([`PairwiseView::horizon`]), so the
/// central estimators refuse a [`FeatureBound`] that is not `FeatureBound::trajectory(H, L)`:
/// their noise is calibrated to `H·L` by construction (see [`FeatureBound`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryPairs {
    pairs: PairwiseData,
    horizon: usize,
    max_step_norm: f64,
}

impl TrajectoryPairs {
    /// A validated view of the summed differences, marked with the horizon `H`.
    ///
    /// # Errors
    /// As [`PairwiseData::view`].
    pub fn view(&self) -> Result<PairwiseView<'_>> {
        Ok(self.pairs.view()?.with_horizon(self.horizon))
    }
    /// The horizon `H`.
    pub fn horizon(&self) -> usize {
        self.horizon
    }
    /// The summed differences `x_i`, labels and weights. Note that [`PairwiseData::view`] of
    /// these does not carry the horizon; use [`TrajectoryPairs::view`] for central DP.
    pub fn pairs(&self) -> &PairwiseData {
        &self.pairs
    }
    /// The pairwise data, dropping the horizon (see [`TrajectoryPairs::pairs`]).
    pub fn into_pairs(self) -> PairwiseData {
        self.pairs
    }
    /// `max ‖φ‖` over every step of both trajectories of every record.
    pub fn max_step_norm(&self) -> f64 {
        self.max_step_norm
    }
    /// `FeatureBound::trajectory(H, per_step)` for these data, after checking that every
    /// per-step feature satisfies `‖φ‖ ≤ per_step` (the assumption the bound states).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] named `feature-bound` for an invalid `per_step` or a step feature
    /// above it.
    pub fn feature_bound(&self, per_step: f64) -> Result<FeatureBound> {
        let b = FeatureBound::trajectory(self.horizon, per_step)?;
        if !(self.max_step_norm <= per_step) {
            return Err(Error::param(
                "feature-bound",
                format!(
                    "a step feature has ‖φ‖ = {} > L = {per_step}; state a per-step bound of at least that",
                    self.max_step_norm
                ),
            ));
        }
        Ok(b)
    }
}

/// Pairwise data from trajectory comparisons: `phi0` and `phi1` hold the per-step features of
/// the two trajectories of each record, `n × H × d` row-major (step `h` of record `i` at
/// `[(i·H + h)·d ..]`); returns `x_i = Σ_h (φ¹_ih − φ⁰_ih)` (summed in step order) with the
/// labels `y` (`y_i = 1`: trajectory 1 preferred), optional weights and the horizon, ready for
/// [`TrajectoryPairs::view`]. A central-DP fit of these data needs
/// [`TrajectoryPairs::feature_bound`] (or `FeatureBound::trajectory(H, L)`).
///
/// # Errors
/// [`Error::Shape`] for inconsistent sizes (`n, H, d ≥ 1`, both arrays `n·H·d` values, `n`
/// labels); [`Error::GroupData`] naming the record (`sample`), step (`row`) and column of the
/// first non-finite feature (input `phi0` or `phi1`); the labels and weights are validated by
/// [`PairwiseData::view`].
pub fn trajectory_pairs(
    phi0: &[f64],
    phi1: &[f64],
    n: usize,
    horizon: usize,
    d: usize,
    y: &[u8],
    weights: Option<&[f64]>,
) -> Result<TrajectoryPairs> {
    if n == 0 || horizon == 0 || d == 0 {
        return Err(Error::Shape(format!(
            "trajectory data needs n, H, d ≥ 1 (got n = {n}, H = {horizon}, d = {d})"
        )));
    }
    let len = n
        .checked_mul(horizon)
        .and_then(|v| v.checked_mul(d))
        .ok_or_else(|| Error::Shape(format!("n·H·d = {n}·{horizon}·{d} overflows")))?;
    for (name, a) in [("phi0", phi0), ("phi1", phi1)] {
        if a.len() != len {
            return Err(Error::Shape(format!(
                "{name} has {} values, expected n·H·d = {n}·{horizon}·{d}",
                a.len()
            )));
        }
        check_finite_rows(a, d).map_err(|e| match e {
            Error::Data {
                at: Location { row, col },
                kind,
                ..
            } => Error::GroupData {
                input: name,
                at: GroupLocation {
                    sample: row / horizon,
                    row: Some(row % horizon),
                    col,
                },
                kind,
            },
            other => other,
        })?;
    }
    if y.len() != n {
        return Err(Error::Shape(format!(
            "y has {} labels but there are {n} records",
            y.len()
        )));
    }
    let mut x = vec![0.0; n * d];
    for (i, xi) in x.chunks_exact_mut(d).enumerate() {
        for h in 0..horizon {
            let at = (i * horizon + h) * d;
            for (j, v) in xi.iter_mut().enumerate() {
                *v += phi1[at + j] - phi0[at + j];
            }
        }
        if let Some(j) = xi.iter().position(|v| !v.is_finite()) {
            return Err(Error::GroupData {
                input: "x",
                at: GroupLocation {
                    sample: i,
                    row: None,
                    col: Some(j),
                },
                kind: DataErrorKind::Infinite,
            });
        }
    }
    let max_step_norm = [phi0, phi1]
        .iter()
        .flat_map(|a| a.chunks_exact(d))
        .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
        .fold(0.0, f64::max);
    let data = PairwiseData {
        x,
        y: y.to_vec(),
        weights: weights.map(<[f64]>::to_vec),
        n,
        d,
    };
    data.view()?;
    Ok(TrajectoryPairs {
        pairs: data,
        horizon,
        max_step_norm,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_per_step_differences() {
        // n = 2, H = 3, d = 2.
        let phi0: Vec<f64> = (0..12).map(|v| v as f64).collect();
        let phi1: Vec<f64> = (0..12).map(|v| 2.0 * v as f64).collect();
        let t = trajectory_pairs(&phi0, &phi1, 2, 3, 2, &[1, 0], None).unwrap();
        let p = t.pairs();
        // record 0: Σ_h phi0 rows (0,1),(2,3),(4,5) → (6, 9); the difference equals phi0's sum.
        assert_eq!(p.x, vec![6.0, 9.0, 24.0, 27.0]);
        assert_eq!(p.y, vec![1, 0]);
        assert_eq!(
            (t.horizon(), t.view().unwrap().horizon(), p.view().unwrap().horizon()),
            (3, 3, 1)
        );
        // The largest step feature is phi1's last row, 2·(10, 11).
        assert_eq!(t.max_step_norm(), (20f64 * 20.0 + 22.0 * 22.0).sqrt());
        assert!(t.feature_bound(29.0).is_err());
        assert_eq!(
            t.feature_bound(30.0).unwrap(),
            FeatureBound::trajectory(3, 30.0).unwrap()
        );
        // H = 1 is an ordinary pairwise difference.
        let q = trajectory_pairs(&[1.0, 2.0], &[4.0, 0.0], 1, 1, 2, &[1], None).unwrap();
        assert_eq!(q.pairs().x, vec![3.0, -2.0]);
    }

    #[test]
    fn errors() {
        let mut phi0 = vec![0.0; 12];
        let phi1 = vec![0.0; 12];
        phi0[(3 + 1) * 2] = f64::NAN;
        let e = trajectory_pairs(&phi0, &phi1, 2, 3, 2, &[1, 0], None).unwrap_err();
        assert!(e.to_string().contains("phi0 at sample 1, row 1, column 0"), "{e}");
        assert!(matches!(
            trajectory_pairs(&phi1, &phi1[..10], 2, 3, 2, &[1, 0], None),
            Err(Error::Shape(_))
        ));
        assert!(matches!(
            trajectory_pairs(&phi1, &phi1, 2, 3, 2, &[1, 2], None),
            Err(Error::Data { input: "y", .. })
        ));
        let big = [f64::MAX, f64::MAX];
        let e = trajectory_pairs(&[-f64::MAX, -f64::MAX], &big, 1, 1, 2, &[1], None).unwrap_err();
        assert!(matches!(e, Error::GroupData { input: "x", .. }), "{e}");
    }
}

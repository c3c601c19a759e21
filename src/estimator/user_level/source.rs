//! Where the per-user gradients of the user-level SGD engines come from: pairwise rows under a
//! pairwise [`Loss`] (BTL by default) or K-wise samples under a Plackett–Luce [`GroupLoss`]
//! (Zhang et al. (2025), App. B.3: the same algorithms with the PL loss). User-wise DP-SGD and
//! AdapUserPriv-SGD read the data only through [`UserGradients`], so one engine serves both.
//!
//! The per-user averaged gradient is `g_u(θ) = (1/|S_u|) Σ_{i∈S_u} ∇_θ ℓ(θ; z_i)`:
//! pairwise `∇_θ ℓ = ℓ'(x_iᵀθ; y_i) x_i`; K-wise `∇_θ ℓ = Φ_iᵀ ∂ℓ/∂u` with `u = Φ_i θ`.
//!
//! **Bounds** (used for the default clip and the default radius τ): with `‖x_i‖ ≤ 2L` and
//! `|ℓ'| ≤ 1` (logistic loss), `‖∇_θ ℓ‖ ≤ 2L`. For Plackett–Luce over the top `J` positions, with
//! every within-sample difference `‖φ_ik − φ_il‖ ≤ 2L`, stage `j` contributes
//! `Σ_{k∈R_j} p^{(j)}_k (φ_k − φ_{o_j})`, a convex combination of differences, so
//! `‖∇_θ ℓ‖ ≤ 2LJ` ([`pl_gradient_bound`]; `J = 1` for the top-1 loss, `J = K − 1` for a full
//! ranking). The average over a user's samples obeys the same bound, so the set of user
//! gradients has diameter at most twice it. This is tighter than the `2LK²` Lipschitz constant
//! Zhang et al. (2025) state for the K-wise case.

use super::batch::user_gradient;
use crate::data::{GroupView, PairwiseView};
use crate::error::{Error, Result};
use crate::loss::{GroupLoss, Loss};

/// The per-user gradients of one data set under one loss (module docs).
pub(super) trait UserGradients {
    /// Dimension of `θ`.
    fn dim(&self) -> usize;
    /// Number of samples (rows or groups).
    fn samples(&self) -> usize;
    /// `out = (1/|rows|) Σ_{i∈rows} ∇_θ ℓ(θ; z_i)`.
    fn user_gradient(&mut self, rows: &[usize], theta: &[f64], out: &mut [f64]);
    /// Checks every sample against the feature bound `L` (pairwise `‖x_i‖ ≤ 2L`, K-wise
    /// `‖φ_ik − φ_il‖ ≤ 2L`).
    ///
    /// # Errors
    /// [`Error::FeatureBound`] naming the first sample over the bound.
    fn check_feature_bound(&self, l: f64) -> Result<()>;
}

/// Pairwise rows under a pairwise loss.
pub(super) struct PairwiseGradients<'a, L> {
    pub loss: L,
    pub data: PairwiseView<'a>,
    buf: Vec<f64>,
}

impl<'a, L: Loss> PairwiseGradients<'a, L> {
    pub fn new(loss: L, data: PairwiseView<'a>) -> Self {
        let d = data.d();
        PairwiseGradients {
            loss,
            data,
            buf: vec![0.0; d],
        }
    }
}

impl<L: Loss> UserGradients for PairwiseGradients<'_, L> {
    fn dim(&self) -> usize {
        self.data.d()
    }
    fn samples(&self) -> usize {
        self.data.n()
    }
    fn user_gradient(&mut self, rows: &[usize], theta: &[f64], out: &mut [f64]) {
        user_gradient(&self.loss, &self.data, rows, theta, &mut self.buf, out);
    }
    fn check_feature_bound(&self, l: f64) -> Result<()> {
        let limit = 2.0 * l;
        let mut buf = vec![0.0; self.data.d()];
        for i in 0..self.data.n() {
            self.data.row_into(i, &mut buf);
            let nrm = buf.iter().map(|v| v * v).sum::<f64>().sqrt();
            if nrm > limit {
                return Err(Error::FeatureBound {
                    row: i,
                    norm: nrm,
                    limit,
                });
            }
        }
        Ok(())
    }
}

/// K-wise samples under a group (Plackett–Luce) loss.
pub(super) struct GroupGradients<'a, G> {
    pub loss: G,
    pub data: GroupView<'a>,
    u: Vec<f64>,
    gu: Vec<f64>,
    scratch: Vec<f64>,
}

impl<'a, G: GroupLoss> GroupGradients<'a, G> {
    /// # Errors
    /// [`Error::InvalidParam`] when the loss does not apply to the data's `K`, or reads more
    /// ranked positions than the labels hold.
    pub fn new(loss: G, data: GroupView<'a>) -> Result<Self> {
        let k = data.k();
        loss.check_k(k)?;
        if loss.positions() > data.width() {
            return Err(Error::param(
                "loss",
                format!(
                    "`{}` reads {} ranked positions but the labels hold {} per sample",
                    loss.name(),
                    loss.positions(),
                    data.width()
                ),
            ));
        }
        let s = loss.scratch_len(k);
        Ok(GroupGradients {
            loss,
            data,
            u: vec![0.0; k],
            gu: vec![0.0; k],
            scratch: vec![0.0; s],
        })
    }
}

impl<G: GroupLoss> UserGradients for GroupGradients<'_, G> {
    fn dim(&self) -> usize {
        self.data.d()
    }
    fn samples(&self) -> usize {
        self.data.n()
    }
    fn user_gradient(&mut self, rows: &[usize], theta: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|v| *v = 0.0);
        let k = self.data.k();
        for &i in rows {
            for r in 0..k {
                self.u[r] = self.data.row(i, r).iter().zip(theta).map(|(a, b)| a * b).sum();
            }
            self.loss.eval(
                &self.u,
                self.data.order_of(i),
                Some(&mut self.gu),
                None,
                &mut self.scratch,
            );
            for r in 0..k {
                let c = self.gu[r];
                for (o, x) in out.iter_mut().zip(self.data.row(i, r)) {
                    *o += c * x;
                }
            }
        }
        let n = rows.len() as f64;
        out.iter_mut().for_each(|v| *v /= n);
    }
    fn check_feature_bound(&self, l: f64) -> Result<()> {
        let limit = 2.0 * l;
        let k = self.data.k();
        for i in 0..self.data.n() {
            for a in 0..k {
                for b in a + 1..k {
                    let nrm = self
                        .data
                        .row(i, a)
                        .iter()
                        .zip(self.data.row(i, b))
                        .map(|(p, q)| (p - q) * (p - q))
                        .sum::<f64>()
                        .sqrt();
                    if nrm > limit {
                        return Err(Error::FeatureBound {
                            row: i,
                            norm: nrm,
                            limit,
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

/// The bound `2LJ` on `‖∇_θ ℓ‖` of a Plackett–Luce loss over the top `J = positions` ranked
/// positions of a sample whose alternatives differ by at most `2L` (`‖φ_ik − φ_il‖ ≤ 2L`):
/// each of the `J` stages contributes a convex combination of differences `φ_k − φ_{o_j}`
/// (module docs). `J = 1` (top-1 choice) gives `2L`, the pairwise BTL bound.
pub fn pl_gradient_bound(feature_bound: f64, positions: usize) -> f64 {
    2.0 * feature_bound * positions as f64
}

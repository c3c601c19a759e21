//! The step hook of user-wise DP-SGD (Zhang et al. (2025), App. B.1 Alg. 4, after Chua et al.
//! (2024)): sample users, clip each sampled user's averaged gradient to the `C`-ball, add one
//! Gaussian vector to the sum; the engine ([`crate::solver::sgd::engine`]) takes the step
//! `θ_{t+1} = Π(θ_t − η (Σ_u ĝ_u + N(0, σ²C²I))/ñ)`.

use super::batch::{sample_users, user_gradient, user_rows};
use super::UserSampler;
use crate::data::{PairwiseView, UserIndex};
use crate::error::Result;
use crate::feasible::FeasibleSet;
use crate::loss::Loss;
use crate::privacy::{gaussian_vector, NoiseRng};
use crate::solver::sgd::engine::{Flow, StepHook};

/// What a step of user-wise DP-SGD reads (Alg. 4).
pub(super) struct DpSgdStep<'a, 'u, 'r, L> {
    /// The pairwise loss whose per-user gradients are clipped.
    pub loss: L,
    pub data: PairwiseView<'a>,
    pub users: &'u UserIndex,
    /// All users (the sampling pool).
    pub pool: Vec<usize>,
    /// `ñ`: expected users per step, and the divisor of the noisy sum.
    pub batch_users: f64,
    pub sampler: UserSampler,
    /// Records per user per step (`None`: all).
    pub records_per_user: Option<usize>,
    /// The clip norm `C`.
    pub clip: f64,
    /// `σC`: the noise standard deviation on the sum.
    pub noise_std: f64,
    pub rng: &'r mut NoiseRng,
    /// One row, one user's gradient, the clipped sum, the noise.
    pub buf: Vec<f64>,
    pub g: Vec<f64>,
    pub sum: Vec<f64>,
    pub noise: Vec<f64>,
}

impl<'a, 'u, 'r, L: Loss> DpSgdStep<'a, 'u, 'r, L> {
    /// The hook for `loss` on `data` and `users` with all buffers allocated.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        loss: L,
        data: PairwiseView<'a>,
        users: &'u UserIndex,
        batch_users: f64,
        sampler: UserSampler,
        records_per_user: Option<usize>,
        clip: f64,
        noise_std: f64,
        rng: &'r mut NoiseRng,
    ) -> Self {
        let d = data.d();
        DpSgdStep {
            loss,
            data,
            users,
            pool: (0..users.n_users()).collect(),
            batch_users,
            sampler,
            records_per_user,
            clip,
            noise_std,
            rng,
            buf: vec![0.0; d],
            g: vec![0.0; d],
            sum: vec![0.0; d],
            noise: vec![0.0; d],
        }
    }
}

impl<L: Loss> StepHook<FeasibleSet> for DpSgdStep<'_, '_, '_, L> {
    /// `Σ_{u∈U_t} ĝ_u + N(0, σ²C²I)` with `ĝ_u = g_u/max(1, ‖g_u‖/C)`. Draw order: the sampling
    /// uniforms (user order), each sampled user's record draws, then `d` normals.
    fn gradient(&mut self, _t: usize, theta: &[f64]) -> Result<Flow> {
        let batch = sample_users(&self.pool, self.batch_users, self.sampler, self.rng);
        self.sum.iter_mut().for_each(|v| *v = 0.0);
        for &u in &batch {
            let rows = user_rows(self.users, u, self.records_per_user, self.rng);
            user_gradient(&self.loss, &self.data, &rows, theta, &mut self.buf, &mut self.g);
            let nrm = self.g.iter().map(|v| v * v).sum::<f64>().sqrt();
            let scale = if nrm > self.clip { self.clip / nrm } else { 1.0 };
            self.sum.iter_mut().zip(&self.g).for_each(|(s, v)| *s += scale * v);
        }
        self.noise = gaussian_vector(self.data.d(), self.noise_std, self.rng);
        Ok(Flow::Continue)
    }

    /// `θ_j ← θ_j + α(s_j + z_j)/ñ`.
    fn add_to(&self, alpha: f64, theta: &mut [f64]) {
        for (j, th) in theta.iter_mut().enumerate() {
            *th += alpha * (self.sum[j] + self.noise[j]) / self.batch_users;
        }
    }
}

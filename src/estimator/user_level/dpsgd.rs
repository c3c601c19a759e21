//! User-wise DP-SGD's options and step hook (Zhang et al. (2025), App. B.1 Alg. 4, after Chua et
//! al. (2024)): sample users, clip each sampled user's averaged gradient to the `C`-ball, add one
//! Gaussian vector to the sum; the engine ([`crate::solver::sgd::engine`]) takes the step
//! `θ_{t+1} = Π(θ_t − η (Σ_u ĝ_u + N(0, σ²C²I))/ñ)`.

use super::batch::{sample_users, user_rows, UserSampler};
use super::source::UserGradients;
use crate::data::UserIndex;
use crate::error::Result;
use crate::feasible::FeasibleSet;
use crate::loss::LossSpec;
use crate::privacy::rdp::Accountant;
use crate::privacy::{gaussian_vector, NoiseRng};
use crate::solver::sgd::engine::{Flow, IterateMean, StepHook};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Which point an iterative user-level algorithm returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UserOutput {
    /// The last iterate `θ_{T+1}`.
    #[default]
    Last,
    /// The average `(1/T) Σ_{t=1}^{T} θ_t` with `θ_1 = θ_0` (Zhang et al. (2025), Alg. 2, whose
    /// indexing leaves `θ_1` undefined: we set `θ_1 = θ_0`).
    Average,
    /// The average of the last `⌈T/2⌉` iterates `θ_{⌊T/2⌋+2}, …, θ_{T+1}` (suffix averaging,
    /// Rakhlin, Shamir & Sridharan 2012): no start-up bias. Post-processing, so privacy is
    /// unaffected.
    TailAverage,
}

impl UserOutput {
    /// The engine's average of `T = steps` steps for `d` parameters: none, the iterates
    /// `θ_1 … θ_T`, or `θ_{t+1}` for `t > ⌊T/2⌋`.
    pub(super) fn iterate_mean(&self, d: usize, steps: usize) -> IterateMean {
        match self {
            UserOutput::Last => IterateMean::Last,
            UserOutput::Average => IterateMean::before(d),
            UserOutput::TailAverage => IterateMean::after(d, steps / 2 + 1),
        }
    }
}

/// Options of [`user_dpsgd`](super::user_dpsgd) (Zhang et al. (2025), App. B.1 Alg. 4).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct UserDpSgdOptions {
    /// Target `ε` (used to calibrate `σ` unless [`noise_multiplier`](Self::noise_multiplier) is set).
    pub eps: f64,
    /// `δ`.
    pub delta: f64,
    /// A fixed noise multiplier instead of the calibration (the guarantee then reports the
    /// accountant's ε for it).
    pub noise_multiplier: Option<f64>,
    /// Expected users per step `ñ` (`q = ñ/n`).
    pub batch_users: f64,
    /// Steps `T`.
    pub steps: u64,
    /// Clip norm `C` of the per-user averaged gradient.
    pub clip: f64,
    /// Step size `η`.
    pub step_size: f64,
    /// Records per user per step (`k_i` of the paper; `None`: all of the user's records).
    pub records_per_user: Option<usize>,
    /// User sampler (default Poisson).
    pub sampler: UserSampler,
    /// Projection after each step (default none: [`FeasibleSet::Unconstrained`]).
    pub set: FeasibleSet,
    /// Start (default 0).
    pub theta0: Option<Vec<f64>>,
    /// Returned point (default the last iterate).
    pub output: UserOutput,
    /// The accountant (default: proven replace relation, improved conversion, default orders).
    pub accountant: Accountant,
    /// The pairwise loss of the per-user gradients (default [`LossSpec::Mle`], the BTL
    /// negative log-likelihood). Clipping bounds every user's contribution whatever the loss,
    /// so the guarantee does not depend on it.
    pub loss: LossSpec,
    /// The caller's interrupt flag (default `None`), as
    /// [`Control::interrupt`](crate::solver::Control::interrupt) of the solvers: a relaxed load
    /// every 256 steps; once set, the run stops between two steps and the fit is the
    /// output so far ([`output`](Self::output), or the iterate when the average has no term
    /// yet), [`Termination::Interrupted`](crate::solver::Termination::Interrupted), and **no**
    /// guarantee.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl UserDpSgdOptions {
    /// Options with the given privacy target and schedule; the rest default.
    pub fn new(eps: f64, delta: f64, batch_users: f64, steps: u64, clip: f64, step_size: f64) -> Self {
        UserDpSgdOptions {
            eps,
            delta,
            noise_multiplier: None,
            batch_users,
            steps,
            clip,
            step_size,
            records_per_user: None,
            sampler: UserSampler::Poisson,
            set: FeasibleSet::Unconstrained,
            theta0: None,
            output: UserOutput::Last,
            accountant: Accountant::default(),
            loss: LossSpec::Mle,
            interrupt: None,
        }
    }
}

/// What a step of user-wise DP-SGD reads (Alg. 4).
pub(super) struct DpSgdStep<'u, 'r, S> {
    /// The per-user gradients (pairwise or K-wise data under its loss).
    src: S,
    users: &'u UserIndex,
    /// All users (the sampling pool).
    pool: Vec<usize>,
    /// `ñ`: expected users per step, and the divisor of the noisy sum.
    batch_users: f64,
    sampler: UserSampler,
    /// Records per user per step (`None`: all).
    records_per_user: Option<usize>,
    /// The clip norm `C`.
    clip: f64,
    /// `σC`: the noise standard deviation on the sum.
    noise_std: f64,
    rng: &'r mut NoiseRng,
    /// One user's gradient, the clipped sum, the noise.
    g: Vec<f64>,
    sum: Vec<f64>,
    noise: Vec<f64>,
}

impl<'u, 'r, S: UserGradients> DpSgdStep<'u, 'r, S> {
    /// The hook for the gradients `src` of `users` with the settings of `opts` and the noise
    /// multiplier `sigma`.
    pub fn new(src: S, users: &'u UserIndex, opts: &UserDpSgdOptions, sigma: f64, rng: &'r mut NoiseRng) -> Self {
        let d = src.dim();
        DpSgdStep {
            src,
            users,
            pool: (0..users.n_users()).collect(),
            batch_users: opts.batch_users,
            sampler: opts.sampler,
            records_per_user: opts.records_per_user,
            clip: opts.clip,
            noise_std: sigma * opts.clip,
            rng,
            g: vec![0.0; d],
            sum: vec![0.0; d],
            noise: vec![0.0; d],
        }
    }
}

impl<S: UserGradients> StepHook<FeasibleSet> for DpSgdStep<'_, '_, S> {
    /// `Σ_{u∈U_t} ĝ_u + N(0, σ²C²I)` with `ĝ_u = g_u/max(1, ‖g_u‖/C)`. Draw order: the sampling
    /// uniforms (user order), each sampled user's record draws, then `d` normals.
    fn gradient(&mut self, _t: usize, theta: &[f64]) -> Result<Flow> {
        let batch = sample_users(&self.pool, self.batch_users, self.sampler, self.rng);
        self.sum.iter_mut().for_each(|v| *v = 0.0);
        for &u in &batch {
            let rows = user_rows(self.users, u, self.records_per_user, self.rng);
            self.src.user_gradient(&rows, theta, &mut self.g);
            let scale = clip_scale(&self.g, self.clip);
            self.sum.iter_mut().zip(&self.g).for_each(|(s, v)| *s += scale * v);
        }
        self.noise = gaussian_vector(self.src.dim(), self.noise_std, self.rng);
        Ok(Flow::Continue)
    }

    /// `θ_j ← θ_j + α(s_j + z_j)/ñ`.
    fn add_to(&self, alpha: f64, theta: &mut [f64]) {
        for (j, th) in theta.iter_mut().enumerate() {
            *th += alpha * (self.sum[j] + self.noise[j]) / self.batch_users;
        }
    }
}

/// The factor `1/max(1, ‖g‖/C)` that clips `g` to the `C`-ball (user-wise DP-SGD's per-user
/// clipping): `‖scale·g‖ ≤ C` always.
pub(super) fn clip_scale(g: &[f64], clip: f64) -> f64 {
    let nrm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
    if nrm > clip {
        clip / nrm
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::super::batch::tests::{hex, HandWritten};
    use super::super::user_dpsgd_with;
    use super::*;
    use crate::mechanism::simulation_rng;
    use crate::sim::{btl_users, theta_star, UserFeatures};

    /// With the hand-written derivative, user-wise DP-SGD on the engine gives the bits its own
    /// loop gave on the cases of `tests/library/sgd_engine_bits.rs` (values recorded from that
    /// loop). With the logistic loss (the default) only the rounding of `ℓ'` at `y = 1` differs.
    #[test]
    fn the_engine_reproduces_the_bits_of_the_hand_written_loop() {
        let th = theta_star(3, 1.0, true, &mut simulation_rng(51)).unwrap();
        let counts: Vec<usize> = (0..30).map(|u| 2 + u % 5).collect();
        let ud = btl_users(
            &counts,
            &th,
            UserFeatures::Sphere { radius: 1.0 },
            &mut simulation_rng(52),
        )
        .unwrap();
        let uv = ud.data.view().unwrap();
        let dp = |o: &UserDpSgdOptions, seed: u64| {
            let fit = user_dpsgd_with(HandWritten, uv, &ud.users, o, &mut NoiseRng::seeded(seed)).unwrap();
            hex(&fit.theta)
        };
        let o = UserDpSgdOptions::new(2.0, 1e-5, 8.0, 40, 1.0, 0.5);
        assert_eq!(dp(&o, 61), "bfe95a2c96467d99 3ff2dca8f2abe220 40000dfc9a5df6d1");
        let mut o = UserDpSgdOptions::new(2.0, 1e-5, 8.0, 40, 0.3, 0.5);
        o.set = FeasibleSet::theta_b(0.8).unwrap();
        o.output = UserOutput::Average;
        o.theta0 = Some(vec![0.3, -0.2, 0.1]);
        assert_eq!(dp(&o, 62), "bfc47dd350be8be8 bfaf1ab9ba1deab0 3fcc4481bf460692");
        let mut o = UserDpSgdOptions::new(3.0, 1e-5, 10.0, 41, 1.0, 0.7);
        o.sampler = UserSampler::FixedSize;
        o.output = UserOutput::TailAverage;
        o.records_per_user = Some(2);
        o.set = FeasibleSet::ball(1.0).unwrap();
        assert_eq!(dp(&o, 63), "bfdfcd94c73fe65b 3fcbda299102f04e 3fcb98cebb6f00cf");
        let mut o = UserDpSgdOptions::new(1.0, 1e-5, 30.0, 25, 0.5, 1.0);
        o.noise_multiplier = Some(0.7);
        o.output = UserOutput::TailAverage;
        assert_eq!(dp(&o, 64), "bfe1f587dbdf05ce 3fd60c5bf7f92691 3fd95addd6000dee");
    }
}

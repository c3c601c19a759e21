//! The m-sweep for Zhang et al. (2025), "Towards User-level Private RLHF": with the number of users
//! `n` fixed and `m` comparisons per user, the user-level RR estimator's error grows with `m` (each
//! label gets only `ε/m`; Thm 1's `coth(ε/2m)/√m` factor grows like `√m`), while user-wise DP-SGD
//! and AUP-RLHF do not degrade (their noise is calibrated per user; AUP's radius `τ ∝ 1/√m` makes
//! its noise fall with `m`, Thm 4's `√d/(√m n ε)`).
//!
//! Per repetition: `θ*` on the sum-zero subspace with `‖θ*‖ = theta_norm`; `n` users × `m`
//! comparisons with features uniform on the sphere `‖x‖ = 2L` ([`btl_users_equal`]); estimators:
//! * `mle`: the non-private MLE over `Θ_B` (exact);
//! * `user-rr`: labels by [`UserLevelRr`] at `ε`, then the exact debiased estimator over `Θ_B`
//!   ([`fit_user_rr`]);
//! * `user-dpsgd`: [`user_dpsgd`] with Poisson rate `q`, clip `C = 2L` (never active: a user's
//!   averaged gradient has norm `≤ 2L`), `T` steps, step `η`, projection on `Θ_B`, the suffix
//!   average, `σ` calibrated by the proven replace-relation accountant;
//! * `aup`: [`aup_rlhf`] with one phase on all users, Poisson batches of `ñ` users, `T` steps, step `η`,
//!   projection on `Θ_B`, `τ = min(4L, c_τ·2L/√m)` (tuned: the paper reports no τ, and Thm 4's
//!   τ is far above the gradient diameter `4L` at these sizes), corrected AboveThreshold.
//!
//! Seeds: repetition `r` at `(m, ε)` uses `mix_seed` of `(seed, r)` for `θ*`, `(seed, r, m)` for
//! the data, and `(seed, r, m, ε, estimator)` for the mechanisms, so results do not depend on the
//! thread count. All noise is seeded: simulation only.

use privpref::data::PairwiseView;
use privpref::error::{Error, Result};
use privpref::estimator::user_level::{
    aup_rlhf, fit_user_rr, user_dpsgd, AupBatch, AupOptions, UserDpSgdOptions, UserOutput, UserRrOptions,
};
use privpref::estimator::{fit, FitOptions};
use privpref::feasible::{norm, FeasibleSet};
use privpref::loss::LossSpec;
use privpref::mechanism::{mix_seed, simulation_rng, UserLevelRr};
use privpref::par::Par;
use privpref::privacy::rdp::Accountant;
use privpref::privacy::NoiseRng;
use privpref::sim::{btl_users_equal, theta_star, UserFeatures};
use privpref::solver::Control;
use rayon::prelude::*;

/// Settings of [`user_level_sweep`].
#[derive(Debug, Clone, PartialEq)]
pub struct UserSweepConfig {
    /// Dimension.
    pub d: usize,
    /// `‖θ*‖`.
    pub theta_norm: f64,
    /// `B` of `Θ_B`.
    pub radius: f64,
    /// Feature bound `L` (`‖x‖ = 2L`).
    pub feature_bound: f64,
    /// Users.
    pub n_users: usize,
    /// Comparisons per user.
    pub ms: Vec<usize>,
    /// User-level budgets.
    pub eps: Vec<f64>,
    /// `δ` of DP-SGD and AUP.
    pub delta: f64,
    /// DP-SGD: Poisson rate `q`.
    pub dpsgd_rate: f64,
    /// DP-SGD: steps.
    pub dpsgd_steps: u64,
    /// DP-SGD: step size.
    pub dpsgd_step: f64,
    /// AUP: expected users per step (Poisson).
    pub aup_batch: f64,
    /// AUP: steps.
    pub aup_steps: u64,
    /// AUP: step size.
    pub aup_step: f64,
    /// AUP: `τ = min(4L, c_τ·2L/√m)`.
    pub aup_tau_factor: f64,
    /// Repetitions.
    pub reps: usize,
    /// Base seed.
    pub seed: u64,
}

impl Default for UserSweepConfig {
    /// `d = 5`, `‖θ*‖ = 1`, `B = 1`, `L = 0.5` (‖x‖ = 1), 2000 users, `m ∈ {1, 2, 5, 10, 20, 50}`,
    /// `ε ∈ {3, 8}` (the paper's), `δ = 1e-5`; DP-SGD `q = 0.05`, `T = 400`, `η = 10`, suffix
    /// average; AUP `ñ = 500`, `T = 40`, `η = 10`, `c_τ = 2`; 30 repetitions; seed 2025.
    fn default() -> Self {
        UserSweepConfig {
            d: 5,
            theta_norm: 1.0,
            radius: 1.0,
            feature_bound: 0.5,
            n_users: 2000,
            ms: vec![1, 2, 5, 10, 20, 50],
            eps: vec![3.0, 8.0],
            delta: 1e-5,
            dpsgd_rate: 0.05,
            dpsgd_steps: 400,
            dpsgd_step: 10.0,
            aup_batch: 500.0,
            aup_steps: 40,
            aup_step: 10.0,
            aup_tau_factor: 2.0,
            reps: 30,
            seed: 2025,
        }
    }
}

/// The estimators of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UserEstimator {
    /// Non-private MLE.
    Mle,
    /// User-level RR + exact debiased estimator.
    UserRr,
    /// User-wise DP-SGD.
    UserDpSgd,
    /// AUP-RLHF.
    Aup,
}

impl UserEstimator {
    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            UserEstimator::Mle => "mle",
            UserEstimator::UserRr => "user-rr",
            UserEstimator::UserDpSgd => "user-dpsgd",
            UserEstimator::Aup => "aup",
        }
    }
    fn tag(&self) -> u64 {
        match self {
            UserEstimator::Mle => 0,
            UserEstimator::UserRr => 1,
            UserEstimator::UserDpSgd => 2,
            UserEstimator::Aup => 3,
        }
    }
}

/// One estimator at one `(m, ε)`.
#[derive(Debug, Clone)]
pub struct UserCell {
    /// Estimator.
    pub estimator: UserEstimator,
    /// `ε` (`None` for the MLE).
    pub eps: Option<f64>,
    /// Comparisons per user.
    pub m: usize,
    /// `‖θ̂ − θ*‖` per repetition.
    pub errors: Vec<f64>,
    /// Runs halted by AboveThreshold (AUP) or solves without a certificate (exact fits).
    pub halted_or_failed: usize,
    /// The noise multiplier (DP-SGD, AUP) of the last repetition (deterministic in `(m, ε)`).
    pub noise_multiplier: Option<f64>,
    /// The per-coordinate noise std on the averaged gradient (DP-SGD, AUP).
    pub noise_std: Option<f64>,
    /// AUP's τ.
    pub tau: Option<f64>,
}

impl UserCell {
    /// Mean error ([`super::stats::mean`]).
    pub fn mean(&self) -> f64 {
        super::stats::mean(&self.errors)
    }
    /// Standard error of the mean ([`super::stats::std_err`]).
    pub fn std_err(&self) -> f64 {
        super::stats::std_err(&self.errors)
    }
}

/// AUP's radius for `m`: `min(4L, c_τ·2L/√m)`.
pub fn aup_tau(cfg: &UserSweepConfig, m: usize) -> f64 {
    (4.0 * cfg.feature_bound).min(cfg.aup_tau_factor * 2.0 * cfg.feature_bound / (m as f64).sqrt())
}

/// One repetition's results: (estimator, ε, outcome) for every estimator at one m.
type RepResults = Vec<(UserEstimator, Option<f64>, RepOut)>;

struct RepOut {
    err: f64,
    bad: bool,
    sigma: Option<f64>,
    std: Option<f64>,
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    let v: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    norm(&v)
}

/// Runs the sweep: one cell per `(estimator, m, ε)` (the MLE once per `m`), repetitions in
/// parallel (deterministic). The noise multipliers are calibrated once per ε (they depend on
/// `(q, T, ε, δ)` only) with the default accountant (proven replace relation) and passed to the
/// estimators, whose guarantees report the accountant's ε for them. `progress` is called once
/// per finished repetition.
///
/// # Errors
/// Invalid settings ([`Error::InvalidParam`]) and the errors of the estimators.
pub fn user_level_sweep(cfg: &UserSweepConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<UserCell>> {
    if cfg.reps < 2 {
        return Err(Error::param("reps", format!("must be >= 2, got {}", cfg.reps)));
    }
    if cfg.ms.is_empty() || cfg.eps.is_empty() {
        return Err(Error::param("ms", "the grid of m and eps must be non-empty"));
    }
    let set = FeasibleSet::theta_b(cfg.radius)?;
    let mut control = Control::default();
    control.par = Par::Seq;
    // The noise multipliers depend on (q, T, ε, δ) only: calibrate once per ε.
    let acc = Accountant::default();
    let mut sigmas = Vec::new();
    for &eps in &cfg.eps {
        let dp = acc.calibrate_sigma(cfg.dpsgd_rate, cfg.dpsgd_steps, eps, cfg.delta)?;
        let q_aup = (cfg.aup_batch / cfg.n_users as f64).min(1.0);
        let au = acc.calibrate_sigma(q_aup, cfg.aup_steps, 0.5 * eps, 0.5 * cfg.delta)?;
        sigmas.push((dp.noise_multiplier, au.noise_multiplier));
    }
    let mut cells = Vec::new();
    for &m in &cfg.ms {
        // Every repetition returns its results for all estimators at this m.
        let per_rep: Vec<Result<RepResults>> = (0..cfg.reps)
            .into_par_iter()
            .map(|r| -> Result<RepResults> {
                let r64 = r as u64;
                let theta = theta_star(
                    cfg.d,
                    cfg.theta_norm,
                    true,
                    &mut simulation_rng(mix_seed(cfg.seed, r64)),
                )?;
                let ud = btl_users_equal(
                    cfg.n_users,
                    m,
                    &theta,
                    UserFeatures::Sphere {
                        radius: 2.0 * cfg.feature_bound,
                    },
                    &mut simulation_rng(mix_seed(mix_seed(cfg.seed, r64), m as u64)),
                )?;
                let view = ud.data.view()?;
                let mut out = Vec::new();
                let mut fo = FitOptions::new(LossSpec::Mle, set);
                fo.control = control.clone();
                let mle = fit(view, &fo)?;
                out.push((
                    UserEstimator::Mle,
                    None,
                    RepOut {
                        err: dist(&mle.theta, &theta),
                        bad: !mle.report.converged(),
                        sigma: None,
                        std: None,
                    },
                ));
                for (&eps, &(sigma_dp, sigma_aup)) in cfg.eps.iter().zip(&sigmas) {
                    let s = |e: UserEstimator| {
                        mix_seed(
                            mix_seed(mix_seed(mix_seed(cfg.seed, r64), m as u64), eps.to_bits()),
                            e.tag(),
                        )
                    };
                    // User-level RR.
                    let yt = UserLevelRr::new(eps)?.randomize(
                        &ud.users,
                        &ud.data.y,
                        &mut simulation_rng(s(UserEstimator::UserRr)),
                    )?;
                    let rv = PairwiseView::new(&ud.data.x, ud.data.n, cfg.d, &yt, None)?;
                    let mut ro = UserRrOptions::new(eps, set);
                    ro.control = control.clone();
                    let rr = fit_user_rr(rv, &ud.users, &ro)?;
                    out.push((
                        UserEstimator::UserRr,
                        Some(eps),
                        RepOut {
                            err: dist(&rr.theta, &theta),
                            bad: !rr.report.converged(),
                            sigma: None,
                            std: None,
                        },
                    ));
                    // User-wise DP-SGD.
                    let mut dopt = UserDpSgdOptions::new(
                        eps,
                        cfg.delta,
                        cfg.dpsgd_rate * cfg.n_users as f64,
                        cfg.dpsgd_steps,
                        2.0 * cfg.feature_bound,
                        cfg.dpsgd_step,
                    );
                    dopt.set = set;
                    dopt.noise_multiplier = Some(sigma_dp);
                    dopt.output = UserOutput::TailAverage;
                    let dp = user_dpsgd(
                        view,
                        &ud.users,
                        &dopt,
                        &mut NoiseRng::seeded(s(UserEstimator::UserDpSgd)),
                    )?;
                    out.push((
                        UserEstimator::UserDpSgd,
                        Some(eps),
                        RepOut {
                            err: dist(&dp.theta, &theta),
                            bad: false,
                            sigma: Some(dp.detail.noise_multiplier),
                            std: Some(dp.detail.noise_std),
                        },
                    ));
                    // AUP-RLHF.
                    let mut aopt = AupOptions::new(eps, cfg.delta, cfg.feature_bound);
                    aopt.batch = AupBatch::Users(cfg.aup_batch);
                    aopt.steps = cfg.aup_steps;
                    aopt.step_size = cfg.aup_step;
                    aopt.tau = Some(aup_tau(cfg, m));
                    aopt.set = set;
                    aopt.noise_multiplier = Some(sigma_aup);
                    let au = aup_rlhf(view, &ud.users, &aopt, &mut NoiseRng::seeded(s(UserEstimator::Aup)))?;
                    out.push((
                        UserEstimator::Aup,
                        Some(eps),
                        RepOut {
                            err: dist(&au.theta, &theta),
                            bad: au.detail.halted.is_some(),
                            sigma: Some(au.detail.noise_multiplier),
                            std: Some(au.detail.noise_std),
                        },
                    ));
                }
                progress();
                Ok(out)
            })
            .collect();
        let per_rep: Vec<RepResults> = per_rep.into_iter().collect::<Result<_>>()?;
        let n_cells = per_rep[0].len();
        for k in 0..n_cells {
            let (est, eps, _) = (&per_rep[0][k].0, per_rep[0][k].1, ());
            let mut cell = UserCell {
                estimator: *est,
                eps,
                m,
                errors: Vec::with_capacity(cfg.reps),
                halted_or_failed: 0,
                noise_multiplier: None,
                noise_std: None,
                tau: (*est == UserEstimator::Aup).then(|| aup_tau(cfg, m)),
            };
            for rep in &per_rep {
                let o = &rep[k].2;
                cell.errors.push(o.err);
                cell.halted_or_failed += usize::from(o.bad);
                cell.noise_multiplier = o.sigma;
                cell.noise_std = o.std;
            }
            cells.push(cell);
        }
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sweep_is_reproducible_and_ordered() {
        let cfg = UserSweepConfig {
            n_users: 60,
            ms: vec![1, 10],
            eps: vec![1.0],
            dpsgd_steps: 20,
            aup_steps: 10,
            aup_batch: 30.0,
            reps: 3,
            ..UserSweepConfig::default()
        };
        let a = user_level_sweep(&cfg, &|| {}).unwrap();
        let b = user_level_sweep(&cfg, &|| {}).unwrap();
        assert_eq!(a.len(), 2 * 4);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.errors, y.errors);
            assert_eq!(x.errors.len(), 3);
        }
        assert!((aup_tau(&cfg, 1) - 2.0 * 2.0 * 0.5).min(2.0) <= 2.0);
        assert_eq!(aup_tau(&cfg, 100), 0.2);
    }
}

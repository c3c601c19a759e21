//! The m-sweep for Zhang et al. (2025), "Towards User-level Private RLHF": with the number of users
//! `n` fixed and `m` comparisons per user, the user-level RR estimator's error grows with `m` (each
//! label gets only `ε/m`; Thm 1's `coth(ε/2m)/√m` factor grows like `√m`), while user-wise DP-SGD
//! and AUP-RLHF do not degrade (their noise is calibrated per user; AUP's radius `τ ∝ 1/√m` makes
//! its noise fall with `m`, Thm 4's `√d/(√m n ε)`).
//!
//! Per repetition: `θ*` on the sum-zero subspace with `‖θ*‖ = theta_norm`; `n` users × `m`
//! comparisons with features uniform on the sphere `‖x‖ = 2L` ([`btl_users_equal`](privpref::sim::btl_users_equal)); estimators:
//! * `mle`: the non-private MLE over `Θ_B` (exact);
//! * `user-rr`: labels by [`UserLevelRr`] at `ε`, then the exact debiased estimator over `Θ_B`
//!   ([`fit_user_rr`]);
//! * `user-dpsgd`: [`user_dpsgd`] with Poisson rate `q`, clip `C = 2L` (never active: a user's
//!   averaged gradient has norm `≤ 2L`), `T` steps, step `η`, projection on `Θ_B`, the suffix
//!   average, `σ` calibrated by the proven replace-relation accountant;
//! * `aup`: [`aup_rlhf`] with one phase on all users, Poisson batches of `ñ` users, `T` steps, step `η`,
//!   projection on `Θ_B`, `τ = min(4L, c_τ·2L/√m_ref)` ([`aup_tau`]: a function of public
//!   quantities only, `L` and the public counts; `m_ref` is the 20 % quantile of the counts, `m`
//!   itself for equal counts), corrected AboveThreshold;
//! * `user-dpsgd-tauclip`: [`user_dpsgd`] as `user-dpsgd` but with the clip `C = τ` of AUP (the
//!   same public rule): the DP-SGD baseline given the same `1/√m` information AUP's radius uses;
//! * `group-dpsgd`: [`group_dpsgd`], example-level DP-SGD (record rate `q`, `T`, `η`, `C = 2L`,
//!   suffix average) at `(ε/m, δ(e^{ε/m}−1)/(e^ε−1))`, user level by group privacy over
//!   `m = max_u m_u` records; recorded as refused (`NaN`) when the accountant cannot certify
//!   `ε/m` ([`Error::Privacy`]).
//!
//! Count profiles ([`Profile`]): equal counts `m`, or a two-point mixture (every `big_every`-th
//! user has `m_big` comparisons, the rest `m_small`; public, fixed before any label is drawn).
//!
//! Seeds: repetition `r` at `(m, ε)` uses `mix_seed` of `(seed, r)` for `θ*`, `(seed, r, m)` for
//! the data, and `(seed, r, m, ε, estimator)` for the mechanisms, so results do not depend on the
//! thread count. All noise is seeded: simulation only.

use privpref::data::PairwiseView;
use privpref::error::{Error, Result};
use privpref::estimator::user_level::{
    aup_rlhf, fit_user_rr, group_dpsgd, user_dpsgd, AupBatch, AupOptions, GroupDpSgdOptions, UserDpSgdOptions,
    UserOutput, UserRrOptions,
};
use privpref::estimator::{fit, FitOptions};
use privpref::feasible::{norm, FeasibleSet};
use privpref::loss::LossSpec;
use privpref::mechanism::{mix_seed, simulation_rng, UserLevelRr};
use privpref::par::Par;
use privpref::privacy::rdp::Accountant;
use privpref::privacy::NoiseRng;
use privpref::sim::{btl_users, theta_star, UserFeatures};
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
    /// Comparisons per user (equal-count profiles).
    pub ms: Vec<usize>,
    /// Two-point mixtures `(m_small, m_big)`: every [`big_every`](Self::big_every)-th user has
    /// `m_big` comparisons, the others `m_small`.
    pub mixtures: Vec<(usize, usize)>,
    /// One user in `big_every` is big in the mixtures (20: 5 %).
    pub big_every: usize,
    /// Run the group-privacy DP-SGD baseline.
    pub group_baseline: bool,
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
            mixtures: Vec::new(),
            big_every: 20,
            group_baseline: false,
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
    /// User-wise DP-SGD with the clip `C = τ` of AUP.
    UserDpSgdTauClip,
    /// Example-level DP-SGD with group privacy.
    GroupDpSgd,
}

impl UserEstimator {
    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            UserEstimator::Mle => "mle",
            UserEstimator::UserRr => "user-rr",
            UserEstimator::UserDpSgd => "user-dpsgd",
            UserEstimator::Aup => "aup",
            UserEstimator::UserDpSgdTauClip => "user-dpsgd-tauclip",
            UserEstimator::GroupDpSgd => "group-dpsgd",
        }
    }
    fn tag(&self) -> u64 {
        match self {
            UserEstimator::Mle => 0,
            UserEstimator::UserRr => 1,
            UserEstimator::UserDpSgd => 2,
            UserEstimator::Aup => 3,
            UserEstimator::UserDpSgdTauClip => 4,
            UserEstimator::GroupDpSgd => 5,
        }
    }
}

/// The per-user counts of a sweep point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// Every user has `m` comparisons.
    Equal(usize),
    /// Every `big_every`-th user (users 0, big_every, …) has `big`, the rest `small`.
    TwoPoint {
        /// Comparisons of most users.
        small: usize,
        /// Comparisons of the big users.
        big: usize,
        /// One user in `big_every` is big.
        big_every: usize,
    },
}

impl Profile {
    /// The counts of `n` users.
    pub fn counts(&self, n: usize) -> Vec<usize> {
        match *self {
            Profile::Equal(m) => vec![m; n],
            Profile::TwoPoint { small, big, big_every } => (0..n)
                .map(|u| if u % big_every.max(1) == 0 { big } else { small })
                .collect(),
        }
    }
    /// A seed tag (the equal profile's is `m`, as before the mixtures existed).
    fn tag(&self) -> u64 {
        match *self {
            Profile::Equal(m) => m as u64,
            Profile::TwoPoint { small, big, big_every } => {
                mix_seed(mix_seed(mix_seed(0x2b1d, small as u64), big as u64), big_every as u64)
            }
        }
    }
    /// Short label (`m=10`, `10/1000 (1 in 20)`).
    pub fn label(&self) -> String {
        match *self {
            Profile::Equal(m) => format!("m={m}"),
            Profile::TwoPoint { small, big, big_every } => format!("{small}/{big} (1 in {big_every})"),
        }
    }
}

/// One estimator at one `(m, ε)`.
#[derive(Debug, Clone)]
pub struct UserCell {
    /// The count profile.
    pub profile: Profile,
    /// Estimator.
    pub estimator: UserEstimator,
    /// `ε` (`None` for the MLE).
    pub eps: Option<f64>,
    /// Comparisons per user (equal profiles; the largest count for a mixture).
    pub m: usize,
    /// `‖θ̂ − θ*‖` per repetition (`NaN` when refused).
    pub errors: Vec<f64>,
    /// Runs halted by AboveThreshold (AUP) or solves without a certificate (exact fits).
    pub halted_or_failed: usize,
    /// The noise multiplier (DP-SGD, AUP) of the last repetition (deterministic in `(m, ε)`).
    pub noise_multiplier: Option<f64>,
    /// The per-coordinate noise std on the averaged gradient (DP-SGD, AUP).
    pub noise_std: Option<f64>,
    /// AUP's τ (also the clip of `user-dpsgd-tauclip`).
    pub tau: Option<f64>,
    /// Repetitions the estimator refused (group DP-SGD: target not certifiable).
    pub refused: usize,
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

/// The reference count of the τ rule: the 20 % quantile of the (public) counts, the
/// `⌊0.2·n⌋`-th smallest (0-based), so at least 80 % of the users have `m_u ≥ m_ref` — the
/// fraction of ordered pairs AboveThreshold's `4ñ/5` test needs within `τ`. `m` for equal counts.
pub fn reference_count(counts: &[usize]) -> usize {
    let mut c = counts.to_vec();
    c.sort_unstable();
    c.get(c.len() / 5).copied().unwrap_or(1).max(1)
}

/// AUP's radius (the documented public rule): `min(4L, c_τ·2L/√m_ref)` with `m_ref` the
/// [`reference_count`] of the counts. It reads `L`, `c_τ` and the counts, all public (label DP:
/// features, users and counts are public), never a label or an outcome, so it costs no
/// privacy. Reasoning: a user's averaged gradient is `∇L(θ) + ξ_u` with `E‖ξ_u‖² ≤ 4L²/m_u`
/// (`|ℓ'| ≤ 1`, `‖x‖ ≤ 2L`), so two users with `m_u, m_v ≥ m_ref` differ by `≲ 2L√(2/m_ref)`;
/// `c_τ = 2` (set before the first run of the sweep, kept since) gives `√2` times that.
pub fn aup_tau_counts(cfg: &UserSweepConfig, counts: &[usize]) -> f64 {
    let m = reference_count(counts);
    (4.0 * cfg.feature_bound).min(cfg.aup_tau_factor * 2.0 * cfg.feature_bound / (m as f64).sqrt())
}

/// AUP's radius for equal counts `m`: `min(4L, c_τ·2L/√m)` ([`aup_tau_counts`]).
pub fn aup_tau(cfg: &UserSweepConfig, m: usize) -> f64 {
    aup_tau_counts(cfg, &[m])
}

/// One repetition's results: (estimator, ε, outcome) for every estimator at one m.
type RepResults = Vec<(UserEstimator, Option<f64>, RepOut)>;

struct RepOut {
    err: f64,
    bad: bool,
    refused: bool,
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
    let mut profiles: Vec<Profile> = cfg.ms.iter().map(|&m| Profile::Equal(m)).collect();
    profiles.extend(cfg.mixtures.iter().map(|&(small, big)| Profile::TwoPoint {
        small,
        big,
        big_every: cfg.big_every,
    }));
    let mut cells = Vec::new();
    for &profile in &profiles {
        let counts = profile.counts(cfg.n_users);
        let m = counts.iter().copied().max().unwrap_or(1);
        let ptag = profile.tag();
        let tau = aup_tau_counts(cfg, &counts);
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
                let ud = btl_users(
                    &counts,
                    &theta,
                    UserFeatures::Sphere {
                        radius: 2.0 * cfg.feature_bound,
                    },
                    &mut simulation_rng(mix_seed(mix_seed(cfg.seed, r64), ptag)),
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
                        refused: false,
                        sigma: None,
                        std: None,
                    },
                ));
                for (&eps, &(sigma_dp, sigma_aup)) in cfg.eps.iter().zip(&sigmas) {
                    let s = |e: UserEstimator| {
                        mix_seed(
                            mix_seed(mix_seed(mix_seed(cfg.seed, r64), ptag), eps.to_bits()),
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
                            refused: false,
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
                            refused: false,
                            sigma: Some(dp.detail.noise_multiplier),
                            std: Some(dp.detail.noise_std),
                        },
                    ));
                    // AUP-RLHF.
                    let mut aopt = AupOptions::new(eps, cfg.delta, cfg.feature_bound);
                    aopt.batch = AupBatch::Users(cfg.aup_batch);
                    aopt.steps = cfg.aup_steps;
                    aopt.step_size = cfg.aup_step;
                    aopt.tau = Some(tau);
                    aopt.set = set;
                    aopt.noise_multiplier = Some(sigma_aup);
                    let au = aup_rlhf(view, &ud.users, &aopt, &mut NoiseRng::seeded(s(UserEstimator::Aup)))?;
                    out.push((
                        UserEstimator::Aup,
                        Some(eps),
                        RepOut {
                            err: dist(&au.theta, &theta),
                            bad: au.detail.halted.is_some(),
                            refused: false,
                            sigma: Some(au.detail.noise_multiplier),
                            std: Some(au.detail.noise_std),
                        },
                    ));
                    // User-wise DP-SGD with AUP's radius as the clip.
                    let mut topt = dopt.clone();
                    topt.clip = tau;
                    let dt = user_dpsgd(
                        view,
                        &ud.users,
                        &topt,
                        &mut NoiseRng::seeded(s(UserEstimator::UserDpSgdTauClip)),
                    )?;
                    out.push((
                        UserEstimator::UserDpSgdTauClip,
                        Some(eps),
                        RepOut {
                            err: dist(&dt.theta, &theta),
                            bad: false,
                            refused: false,
                            sigma: Some(dt.detail.noise_multiplier),
                            std: Some(dt.detail.noise_std),
                        },
                    ));
                    // Example-level DP-SGD + group privacy (refused when not certifiable).
                    if cfg.group_baseline {
                        let mut gopt = GroupDpSgdOptions::new(
                            eps,
                            cfg.delta,
                            cfg.dpsgd_rate * ud.data.n as f64,
                            cfg.dpsgd_steps,
                            2.0 * cfg.feature_bound,
                            cfg.dpsgd_step,
                        );
                        gopt.set = set;
                        gopt.output = UserOutput::TailAverage;
                        let rep = match group_dpsgd(
                            view,
                            &ud.users,
                            &gopt,
                            &mut NoiseRng::seeded(s(UserEstimator::GroupDpSgd)),
                        ) {
                            Ok(g) => RepOut {
                                err: dist(&g.theta, &theta),
                                bad: false,
                                refused: false,
                                sigma: Some(g.detail.noise_multiplier),
                                std: Some(g.detail.noise_std),
                            },
                            // Not certifiable: below the conversion's floor (typed refusal) or
                            // so close to it that the RDP underflows during the calibration.
                            Err(Error::Privacy(_) | Error::Numerical(_)) => RepOut {
                                err: f64::NAN,
                                bad: false,
                                refused: true,
                                sigma: None,
                                std: None,
                            },
                            Err(e) => return Err(e),
                        };
                        out.push((UserEstimator::GroupDpSgd, Some(eps), rep));
                    }
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
                profile,
                refused: 0,
                estimator: *est,
                eps,
                m,
                errors: Vec::with_capacity(cfg.reps),
                halted_or_failed: 0,
                noise_multiplier: None,
                noise_std: None,
                tau: matches!(*est, UserEstimator::Aup | UserEstimator::UserDpSgdTauClip).then_some(tau),
            };
            for rep in &per_rep {
                let o = &rep[k].2;
                cell.errors.push(o.err);
                cell.halted_or_failed += usize::from(o.bad);
                cell.refused += usize::from(o.refused);
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
        assert_eq!(a.len(), 2 * 5);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.errors, y.errors);
            assert_eq!(x.errors.len(), 3);
        }
        assert!((aup_tau(&cfg, 1) - 2.0 * 2.0 * 0.5).min(2.0) <= 2.0);
        assert_eq!(aup_tau(&cfg, 100), 0.2);
    }
}

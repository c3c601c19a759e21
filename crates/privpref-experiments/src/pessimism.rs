//! Pessimism vs greedy on synthetic contextual bandits ("Provable protection of human judgements"
//! (anon., 2025), Thm 4.2; Zhou, Wu & Orabona (2025), Algorithm 2 with `η ∈ {0, 1}`; the
//! qualitative claim: pessimism beats greedy when coverage is poor). The true sub-optimality
//! `SubOpt(π) = J(π*) − J(π)`, `J(π) = Σ_s ρ_s⟨θ*, φ(s, π(s))⟩` on the public states, `π*` greedy
//! for `θ*`, is measured for the greedy policy of `θ̂` and the pessimistic policy (Frank–Wolfe,
//! purified and rounded) for each estimator:
//!
//! * non-private MLE (Newton over the ball), plain `Σ̂`, radius [`local_radius`] with clean
//!   labels;
//! * local debiased RR at `ε_local` (labels randomised once), plain `Σ̂`,
//!   [`local_radius`] (LTC, no corruption);
//! * central objective perturbation at `(ε, δ)` (label DP: features public, plain `Σ̂`,
//!   `L = X_max/2`), [`objpert_radius`];
//! * the private MLE of the anonymous 2025 paper (standard DP) with the private covariance `Σ̃`, `L
//!   = 1` a priori, [`private_mle_radius`]; `θ̃` is released unprojected, so the confidence set may
//!   fall back (counted).
//!
//! With `empirical_draws = Some(k)` every `Γ` is replaced by the data-driven radius of
//! `privpref::policy::empirical` (same `λ`; **asymptotic/empirical, not guaranteed**).
//!
//! Data from [`BanditConfig`]: rare actions live partly in a block of directions that the
//! behaviour policy rarely compares (`p_rare`). With `covered_optimum` (default) the rare
//! actions are worse in truth (`θ*`'s rare block along `e₁`, rare features leaning to `−e₁`), so
//! the optimal policy is covered and only the rare actions are not — the setting in which the
//! papers claim pessimism helps (single-policy concentrability, Zhou, Wu & Orabona (2025), Cor.
//! 4.4). Reproducible: repetition `r` draws `θ*` and the public states from `(seed, r)`, data from
//! `(seed, r, n)`, mechanisms' noise from `(seed, r, n, estimator)`; independent of threads.

use privpref::data::{FeatureBound, Features};
use privpref::error::{Error, Result};
use privpref::estimator::central::{default_beta, objective_perturbation, ObjPertOptions};
use privpref::estimator::private_mle::{private_covariance, private_mle, CovarianceOptions, PrivateMleOptions};
use privpref::estimator::{fit, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{mix_seed as mix, simulation_rng, Mechanism, RandomizedResponse};
use privpref::par::Par;
use privpref::policy::empirical::{empirical_fit_calibration, EmpiricalInputs};
use privpref::policy::radius::{
    local_radius, objpert_radius, private_mle_radius, Calibration, FitRule, LocalRadius, ObjPertRadius,
    PrivateMleRadius, RuleInputs,
};
use privpref::policy::{greedy_policy, pessimistic_policy, ConfidenceSet, PolicyOptions, Reference, StateActions};
use privpref::privacy::NoiseRng;
use privpref::sim::bandit::BanditConfig;
use privpref::sim::theta_star;
use privpref::solver::Control;
use rayon::prelude::*;

/// Settings of [`pessimism_vs_greedy`].
#[derive(Debug, Clone, PartialEq)]
pub struct PessimismConfig {
    /// The bandit's shape.
    pub bandit: BanditConfig,
    /// `‖θ*‖`.
    pub theta_norm: f64,
    /// Turn `θ*`'s rare-block component towards `+e₁` (keeping its length): with
    /// `rare_mean > 0` the rare actions are then worse in truth, so the optimal policy is
    /// covered by the data and the rare actions are not (the setting of the claim).
    pub covered_optimum: bool,
    /// `B` of the ball `Θ_B` (no sum-zero plane: for generic features it would restrict `θ`).
    pub radius: f64,
    /// Probability that a comparison involves a rare action.
    pub p_rare: f64,
    /// Public states for choosing and evaluating policies.
    pub states: usize,
    /// Sample sizes.
    pub ns: Vec<usize>,
    /// `ε` of local RR.
    pub eps_local: f64,
    /// `ε ≤ 1` of the central estimators (`δ = 1/(2n²)`).
    pub eps_central: f64,
    /// Failure probability `η` of the radii.
    pub eta: f64,
    /// Multiplier of every `Γ` (1 = the explicit, guaranteed radius).
    pub radius_multiplier: f64,
    /// `Some(draws)`: replace every explicit `Γ` by the data-driven radius of
    /// `privpref::policy::empirical` (**asymptotic/empirical, not guaranteed**; same `λ`,
    /// `draws` Monte-Carlo draws; the multiplier still applies).
    pub empirical_draws: Option<usize>,
    /// Repetitions.
    pub reps: usize,
    /// Base seed (noise seeded: simulation only).
    pub seed: u64,
}

impl Default for PessimismConfig {
    fn default() -> Self {
        PessimismConfig {
            bandit: BanditConfig {
                d: 8,
                actions: 8,
                rare_actions: 3,
                rare_dim: 3,
                rare_weight: 0.8,
                rare_mean: 0.7,
            },
            theta_norm: 1.0,
            covered_optimum: true,
            radius: 1.0,
            p_rare: 0.005,
            states: 400,
            ns: vec![1_000, 4_000, 16_000, 64_000, 256_000],
            eps_local: 1.0,
            eps_central: 1.0,
            eta: 0.05,
            radius_multiplier: 1.0,
            empirical_draws: None,
            reps: 30,
            seed: 2026,
        }
    }
}

/// The estimators compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyEstimator {
    /// Non-private MLE.
    Mle,
    /// Local debiased RR.
    DebiasedRr,
    /// Central objective perturbation (label DP).
    ObjPert,
    /// The private MLE + private covariance of "Provable protection of human judgements" (anon.,
    /// 2024) (standard DP).
    PrivateMle,
}

impl PolicyEstimator {
    /// Name.
    pub fn name(&self) -> &'static str {
        match self {
            PolicyEstimator::Mle => "mle",
            PolicyEstimator::DebiasedRr => "debiased-rr (local)",
            PolicyEstimator::ObjPert => "objpert (central label DP)",
            PolicyEstimator::PrivateMle => "private-mle (anon. 2025)",
        }
    }
    /// All four, in table order.
    pub fn all() -> [PolicyEstimator; 4] {
        [
            PolicyEstimator::Mle,
            PolicyEstimator::DebiasedRr,
            PolicyEstimator::ObjPert,
            PolicyEstimator::PrivateMle,
        ]
    }
}

/// One estimator at one `n`, over the repetitions.
#[derive(Debug, Clone)]
pub struct PessimismCell {
    /// Estimator.
    pub estimator: PolicyEstimator,
    /// `n`.
    pub n: usize,
    /// SubOpt of the greedy policy per repetition.
    pub greedy: Vec<f64>,
    /// SubOpt of the pessimistic (deterministic) policy per repetition.
    pub pessimistic: Vec<f64>,
    /// `Γ` per repetition.
    pub radius: Vec<f64>,
    /// `λ` per repetition.
    pub lambda: Vec<f64>,
    /// Share of states where the greedy policy picks a rare action, per repetition.
    pub greedy_rare: Vec<f64>,
    /// Same for the pessimistic policy.
    pub pessimistic_rare: Vec<f64>,
    /// Repetitions whose confidence set fell back (empty intersection).
    pub fallbacks: usize,
    /// Repetitions whose Frank–Wolfe did not reach its tolerance.
    pub unconverged: usize,
    /// Repetitions where the data-driven law was singular and the explicit radius was kept.
    pub empirical_failures: usize,
}

/// Mean and standard error.
pub fn mean_se(v: &[f64]) -> (f64, f64) {
    let k = v.len() as f64;
    let m = v.iter().sum::<f64>() / k;
    if k < 2.0 {
        return (m, f64::NAN);
    }
    (
        m,
        (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (k - 1.0) / k).sqrt(),
    )
}

impl PessimismCell {
    /// Repetitions where pessimism is strictly better / strictly worse than greedy (by > 1e-12).
    pub fn wins_losses(&self) -> (usize, usize) {
        let w = self
            .greedy
            .iter()
            .zip(&self.pessimistic)
            .filter(|(g, p)| **p < **g - 1e-12)
            .count();
        let l = self
            .greedy
            .iter()
            .zip(&self.pessimistic)
            .filter(|(g, p)| **p > **g + 1e-12)
            .count();
        (w, l)
    }
}

struct Rec {
    est: PolicyEstimator,
    n: usize,
    greedy: f64,
    pess: f64,
    cal: Calibration,
    g_rare: f64,
    p_rare: f64,
    fallback: bool,
    unconverged: bool,
    empirical_failed: bool,
}

/// Runs the comparison; `progress()` after each `(n, repetition)` job.
///
/// # Errors
/// Invalid configuration.
pub fn pessimism_vs_greedy(cfg: &PessimismConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<PessimismCell>> {
    if cfg.reps == 0 || cfg.ns.is_empty() || cfg.states == 0 {
        return Err(Error::param("grid", "needs repetitions, sizes and states"));
    }
    if !(cfg.theta_norm > 0.0 && cfg.theta_norm <= cfg.radius) {
        return Err(Error::param("theta-norm", "must be in (0, radius]"));
    }
    let (d, na) = (cfg.bandit.d, cfg.bandit.actions);
    let first_rare = na - cfg.bandit.rare_actions;
    let set_kind = FeasibleSet::ball(cfg.radius)?;
    let mut control = Control::default();
    control.par = Par::Seq;
    let mut popts = PolicyOptions::default();
    popts.par = Par::Seq;
    let jobs: Vec<(usize, usize)> = cfg
        .ns
        .iter()
        .flat_map(|&n| (0..cfg.reps).map(move |r| (n, r)))
        .collect();
    let recs: Vec<Vec<Rec>> = jobs
        .par_iter()
        .map(|&(n, r)| -> Result<Vec<Rec>> {
            let rs = mix(cfg.seed, r as u64);
            let mut theta = theta_star(d, cfg.theta_norm, false, &mut simulation_rng(rs))?;
            if cfg.covered_optimum {
                let dc = d - cfg.bandit.rare_dim;
                let len = theta[dc..].iter().map(|v| v * v).sum::<f64>().sqrt();
                theta[dc..].iter_mut().for_each(|v| *v = 0.0);
                theta[dc] = len;
            }
            let phi = cfg.bandit.states(cfg.states, &mut simulation_rng(mix(rs, 1)))?;
            let st = StateActions::new(&phi, cfg.states, na, d, None)?;
            // Public reference: the behaviour policy's comparison distribution over common actions.
            let mut refp = vec![0.0; cfg.states * na];
            for row in refp.chunks_exact_mut(na) {
                row[..first_rare].iter_mut().for_each(|p| *p = 1.0 / first_rare as f64);
            }
            let reference = Reference::Distribution(&refp);
            let value = |acts: &[u32]| -> f64 {
                acts.iter()
                    .enumerate()
                    .map(|(s, &a)| {
                        st.feature(s, a as usize)
                            .iter()
                            .zip(&theta)
                            .map(|(x, t)| x * t)
                            .sum::<f64>()
                    })
                    .sum::<f64>()
                    / cfg.states as f64
            };
            let star_set = ConfidenceSet::new(&theta, None, 1.0, 0.0, FeasibleSet::Unconstrained)?;
            let best = value(&greedy_policy(&st, &theta, &Reference::None, &star_set, Par::Seq)?.actions);
            let rare_share =
                |acts: &[u32]| acts.iter().filter(|&&a| a as usize >= first_rare).count() as f64 / acts.len() as f64;
            let data = cfg
                .bandit
                .preferences(n, cfg.p_rare, &theta, &mut simulation_rng(mix(rs, n as u64)))?;
            let view = data.view()?;
            let x_max = view.max_row_norm(false);
            let nf = n as f64;
            let mut sigma = vec![0.0; d * d];
            for row in data.x.chunks_exact(d) {
                for i in 0..d {
                    for j in 0..d {
                        sigma[i * d + j] += row[i] * row[j] / nf;
                    }
                }
            }
            let base = mix(mix(rs, n as u64), 77);
            let mut out = Vec::new();
            let mut rr_labels: Option<Vec<u8>> = None;
            let mut objpert_noise = (0.0, 0.0);
            for est in PolicyEstimator::all() {
                let seed = mix(base, est as u64);
                let (theta_hat, cov, cal): (Vec<f64>, Vec<f64>, Calibration) = match est {
                    PolicyEstimator::Mle => {
                        let mut o = FitOptions::new(LossSpec::Mle, set_kind);
                        o.control = control.clone();
                        let m = fit(view, &o)?;
                        let mut p = LocalRadius::new(None, n, d, x_max, cfg.radius);
                        p.eta = cfg.eta;
                        p.multiplier = cfg.radius_multiplier;
                        (m.theta, sigma.clone(), local_radius(&p)?)
                    }
                    PolicyEstimator::DebiasedRr => {
                        let yt =
                            RandomizedResponse::new(cfg.eps_local)?.randomize(&data.y, &mut simulation_rng(seed))?;
                        let pv = view.with_labels(&yt)?;
                        let mut o = FitOptions::new(LossSpec::DebiasedRr { eps: cfg.eps_local }, set_kind);
                        o.control = control.clone();
                        let m = fit(pv, &o)?;
                        rr_labels = Some(yt.clone());
                        let mut p = LocalRadius::new(Some(cfg.eps_local), n, d, x_max, cfg.radius);
                        p.eta = cfg.eta;
                        p.multiplier = cfg.radius_multiplier;
                        (m.theta, sigma.clone(), local_radius(&p)?)
                    }
                    PolicyEstimator::ObjPert => {
                        let delta = 0.5 / (nf * nf);
                        let beta = default_beta(n, &set_kind)?;
                        let mut o = ObjPertOptions::new(
                            cfg.eps_central,
                            delta,
                            FeatureBound::pairwise(x_max / 2.0)?,
                            beta,
                            set_kind,
                        );
                        o.control = control.clone();
                        o.allow_unguaranteed = true;
                        let f = objective_perturbation(view, &o, &mut NoiseRng::seeded(seed))?;
                        objpert_noise = (f.detail.noise_std, f.detail.beta);
                        let cal = objpert_radius(&{
                            let mut o = ObjPertRadius::new(n, d, x_max, cfg.radius, f.detail.noise_std, f.detail.beta);
                            o.eta = cfg.eta;
                            o.multiplier = cfg.radius_multiplier;
                            o
                        })?;
                        (f.theta, sigma.clone(), cal)
                    }
                    PolicyEstimator::PrivateMle => {
                        let delta = 0.5 / (nf * nf);
                        let unit_bound = FeatureBound::pairwise(1.0)?;
                        let mut o = PrivateMleOptions::new(cfg.eps_central, delta, unit_bound, set_kind);
                        o.eta = cfg.eta;
                        o.control = control.clone();
                        o.allow_unguaranteed = true;
                        let mut rng = NoiseRng::seeded(seed);
                        let f = private_mle(view, &o, &mut rng)?;
                        let c = private_covariance(
                            &data.x,
                            n,
                            d,
                            &CovarianceOptions::new(cfg.eps_central, delta, unit_bound),
                            &mut rng,
                        )?;
                        let cal = private_mle_radius(&f.detail.calibration, &{
                            let mut p = PrivateMleRadius::new(n, d, unit_bound, cfg.radius);
                            p.eta = cfg.eta;
                            p.multiplier = cfg.radius_multiplier;
                            p
                        })?;
                        (f.theta, c.matrix, cal)
                    }
                };
                let mut empirical_failed = false;
                let cal = match cfg.empirical_draws {
                    None => cal,
                    Some(draws) => {
                        let (rule, labels): (FitRule, Option<&[u8]>) = match est {
                            PolicyEstimator::Mle => (FitRule::Local { eps: None }, Some(&data.y)),
                            PolicyEstimator::DebiasedRr => (
                                FitRule::Local {
                                    eps: Some(cfg.eps_local),
                                },
                                rr_labels.as_deref(),
                            ),
                            PolicyEstimator::ObjPert => (
                                FitRule::ObjPert {
                                    noise_std: objpert_noise.0,
                                    beta: objpert_noise.1,
                                },
                                None,
                            ),
                            // The fit's own guarantee is (ε/2, δ/2): the rule calibrates the pair.
                            PolicyEstimator::PrivateMle => (
                                FitRule::PrivateMle {
                                    eps: cfg.eps_central / 2.0,
                                    delta: 0.25 / (nf * nf),
                                    bound: FeatureBound::pairwise(1.0)?,
                                    alpha: None,
                                    accuracy: None,
                                },
                                None,
                            ),
                        };
                        let mut inp = RuleInputs::new(Some(n), d, Some(cfg.radius), Some(x_max), true);
                        inp.eta = cfg.eta;
                        inp.radius_multiplier = cfg.radius_multiplier;
                        let emp = EmpiricalInputs {
                            x: Features::F64(&data.x),
                            labels,
                            theta: &theta_hat,
                            sigma: Some(&cov),
                            draws,
                        };
                        // A singular law (a direction no comparison covers): keep the explicit
                        // radius for this repetition and count it.
                        match empirical_fit_calibration(&rule, &inp, &emp, &mut simulation_rng(mix(seed, 9))) {
                            Ok(c) => c,
                            Err(_) => {
                                empirical_failed = true;
                                cal
                            }
                        }
                    }
                };
                let set = ConfidenceSet::new(&theta_hat, Some(&cov), cal.lambda, cal.radius, set_kind)?;
                let greedy = greedy_policy(&st, &theta_hat, &reference, &set, Par::Seq)?;
                let pess = pessimistic_policy(&st, &reference, &set, &popts)?;
                out.push(Rec {
                    est,
                    n,
                    greedy: best - value(&greedy.actions),
                    pess: best - value(&pess.actions),
                    g_rare: rare_share(&greedy.actions),
                    p_rare: rare_share(&pess.actions),
                    fallback: set.fallback().is_some(),
                    unconverged: pess.termination != privpref::policy::PolicyTermination::Converged,
                    empirical_failed,
                    cal,
                });
            }
            progress();
            Ok(out)
        })
        .collect::<Result<_>>()?;
    let mut cells: Vec<PessimismCell> = Vec::new();
    for &n in &cfg.ns {
        for est in PolicyEstimator::all() {
            let mut c = PessimismCell {
                estimator: est,
                n,
                greedy: vec![],
                pessimistic: vec![],
                radius: vec![],
                lambda: vec![],
                greedy_rare: vec![],
                pessimistic_rare: vec![],
                fallbacks: 0,
                unconverged: 0,
                empirical_failures: 0,
            };
            for r in recs.iter().flatten().filter(|r| r.est == est && r.n == n) {
                c.greedy.push(r.greedy);
                c.pessimistic.push(r.pess);
                c.radius.push(r.cal.radius);
                c.lambda.push(r.cal.lambda);
                c.greedy_rare.push(r.g_rare);
                c.pessimistic_rare.push(r.p_rare);
                c.fallbacks += r.fallback as usize;
                c.unconverged += r.unconverged as usize;
                c.empirical_failures += r.empirical_failed as usize;
            }
            cells.push(c);
        }
    }
    Ok(cells)
}

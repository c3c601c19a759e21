//! What the confidence radii promise: the empirical coverage `P[‖θ* − θ̂‖_M ≤ Γ]` of every rule
//! of `privpref::policy::radius` (guaranteed, explicit) and of the data-driven radii of
//! `privpref::policy::empirical` (**asymptotic/empirical, not guaranteed**), with
//! `M = Σ̂ + λI` (`Σ̃ + λI` for the private MLE) and `λ` of the explicit rule in both cases.
//!
//! Per repetition: `θ*` uniform on the sphere of radius `theta_norm`, data from one of two
//! designs, then the non-private MLE (`Local { eps: None }`), and for each `ε` the debiased RR
//! estimator (local, labels randomised once), objective perturbation (central label DP,
//! `δ = 1/(2n²)`) and, for `ε ≤ 1`, the private MLE with the private covariance of "Provable
//! protection of human judgements" (anon., 2025). For each fit, the ratios
//! `‖θ* − θ̂‖_M / Γ` for the explicit `Γ` and the empirical `Γ` are recorded. Coverage is the
//! share of ratios `≤ 1`; the conservativeness is the `(1 − η)`-quantile of the ratio (the
//! smallest multiplier `c` of `Γ` with empirical coverage `≥ 1 − η`).
//!
//! Designs:
//! * [`Design::Sphere`]: `φ⁰, φ¹` uniform on the unit sphere, `x = φ¹ − φ⁰` (`‖x‖ ≤ 2`), BTL
//!   labels;
//! * [`Design::Bandit`]: the contextual bandit of `privpref::sim::bandit` with rarely compared
//!   actions (ill-conditioned `Σ̂`), parameters as in [`bandit_config`].
//!
//! For the private MLE the empirical radius uses the sample's features, i.e. it treats them as
//! public (an assumption; under standard DP they are not). Reproducible: the job
//! `(design, d, n, r)` draws everything from seeds mixed from `(seed, design, d, n, r)`.

use crate::stats::{upper_quantile, wilson};
use privpref::data::{FeatureBound, Features, PairwiseData};
use privpref::error::{Error, Result};
use privpref::estimator::central::{default_beta, objective_perturbation, ObjPertOptions};
use privpref::estimator::private_mle::{private_covariance, private_mle, CovarianceOptions, PrivateMleOptions};
use privpref::estimator::{fit, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{mix_seed as mix, simulation_rng, Mechanism, RandomizedResponse};
use privpref::par::Par;
use privpref::policy::empirical::{empirical_fit_calibration, EmpiricalInputs};
use privpref::policy::radius::{design_moments, fit_calibration, FitRule, RuleInputs};
use privpref::privacy::NoiseRng;
use privpref::sim::bandit::BanditConfig;
use privpref::sim::theta_star;
use privpref::solver::Control;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

/// The feature designs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Design {
    /// Isotropic: differences of two uniform unit vectors.
    Sphere,
    /// The contextual bandit of `privpref::sim::bandit` ([`bandit_config`]).
    Bandit,
}

impl Design {
    /// Name.
    pub fn name(&self) -> &'static str {
        match self {
            Design::Sphere => "sphere",
            Design::Bandit => "bandit",
        }
    }
}

/// The bandit of [`Design::Bandit`] for dimension `d ≥ 4`: 8 actions of which 3 rare, a rare
/// block of `d/4` directions, rare weight 0.8, shared direction 0.7 (as the pessimism
/// benchmark, with the rare block scaled with `d`).
pub fn bandit_config(d: usize) -> BanditConfig {
    BanditConfig {
        d,
        actions: 8,
        rare_actions: 3,
        rare_dim: (d / 4).max(1),
        rare_weight: 0.8,
        rare_mean: 0.7,
    }
}

/// The estimators whose radius is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CovEstimator {
    /// Non-private MLE (`local_radius` with clean labels; sandwich).
    Mle,
    /// Debiased RR (`local_radius`; sandwich on the RR labels).
    DebiasedRr,
    /// Objective perturbation (`objpert_radius`; linearised parametric bootstrap plus the ridge
    /// bias's worst case).
    ObjPert,
    /// Private MLE + private covariance (`private_mle_radius`; linearised parametric bootstrap
    /// plus the ridge bias's worst case).
    PrivateMle,
}

impl CovEstimator {
    /// Name.
    pub fn name(&self) -> &'static str {
        match self {
            CovEstimator::Mle => "mle",
            CovEstimator::DebiasedRr => "debiased-rr",
            CovEstimator::ObjPert => "objpert",
            CovEstimator::PrivateMle => "private-mle",
        }
    }
}

/// Settings of [`coverage`].
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageConfig {
    /// Designs.
    pub designs: Vec<Design>,
    /// Dimensions.
    pub ds: Vec<usize>,
    /// Sample sizes.
    pub ns: Vec<usize>,
    /// Privacy levels (the private MLE only at `ε ≤ 1`).
    pub eps: Vec<f64>,
    /// Repetitions per cell.
    pub reps: usize,
    /// `‖θ*‖`.
    pub theta_norm: f64,
    /// `B` of the ball `Θ_B`.
    pub radius: f64,
    /// Probability that a bandit comparison involves a rare action.
    pub p_rare: f64,
    /// `η`.
    pub eta: f64,
    /// Monte-Carlo draws of the empirical quantile.
    pub draws: usize,
    /// Base seed.
    pub seed: u64,
}

impl Default for CoverageConfig {
    fn default() -> Self {
        CoverageConfig {
            designs: vec![Design::Sphere, Design::Bandit],
            ds: vec![4, 16],
            ns: vec![1_000, 4_000, 16_000, 64_000],
            eps: vec![0.5, 1.0, 3.0],
            reps: 500,
            theta_norm: 1.0,
            radius: 2.0,
            p_rare: 0.02,
            eta: 0.05,
            draws: 2_000,
            seed: 2026,
        }
    }
}

/// One cell: design, `d`, `n`, estimator, `ε` (`None` for the MLE).
#[derive(Debug, Clone)]
pub struct CoverageCell {
    /// Design.
    pub design: Design,
    /// `d`.
    pub d: usize,
    /// `n`.
    pub n: usize,
    /// Estimator.
    pub estimator: CovEstimator,
    /// `ε` (`None` for the MLE).
    pub eps: Option<f64>,
    /// `‖θ* − θ̂‖_M / Γ_explicit` per repetition.
    pub explicit: Vec<f64>,
    /// `‖θ* − θ̂‖_M / Γ_empirical` per repetition (`NaN` when the law was singular).
    pub empirical: Vec<f64>,
    /// Mean explicit and empirical `Γ`.
    pub mean_radius: (f64, f64),
}

/// Coverage summary of a list of ratios: (covered, trials, Wilson 95% interval, `(1 − η)`-
/// quantile of the ratio). `NaN` ratios (no radius) count as trials, not covered.
pub fn summary(ratios: &[f64], eta: f64) -> (usize, usize, (f64, f64), f64) {
    let k = ratios.iter().filter(|r| **r <= 1.0).count();
    (
        k,
        ratios.len(),
        wilson(k, ratios.len(), 1.959_963_984_540_054),
        upper_quantile(ratios, 1.0 - eta),
    )
}

fn unit_sphere<R: Rng + ?Sized>(d: usize, rng: &mut R) -> Vec<f64> {
    loop {
        let v: Vec<f64> = (0..d).map(|_| StandardNormal.sample(rng)).collect();
        let r = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if r > 1e-12 {
            return v.into_iter().map(|x| x / r).collect();
        }
    }
}

/// `n` BTL comparisons with `x = φ¹ − φ⁰`, `φ` uniform on the unit sphere.
pub fn sphere_pairs<R: Rng + ?Sized>(n: usize, theta: &[f64], rng: &mut R) -> PairwiseData {
    let d = theta.len();
    let mut x = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let (a, b) = (unit_sphere(d, rng), unit_sphere(d, rng));
        let row: Vec<f64> = b.iter().zip(&a).map(|(p, q)| p - q).collect();
        let t: f64 = row.iter().zip(theta).map(|(u, v)| u * v).sum();
        y.push(u8::from(
            privpref::mechanism::uniform_f64(rng) < 1.0 / (1.0 + (-t).exp()),
        ));
        x.extend(row);
    }
    PairwiseData {
        x,
        y,
        weights: None,
        n,
        d,
    }
}

struct Rec {
    key: (Design, usize, usize, CovEstimator, Option<u64>),
    explicit: f64,
    empirical: f64,
    radii: (f64, f64),
}

fn m_norm(a: &[f64], b: &[f64], sigma: &[f64], lambda: f64) -> f64 {
    let d = a.len();
    let z: Vec<f64> = a.iter().zip(b).map(|(u, v)| u - v).collect();
    let mut q = 0.0;
    for i in 0..d {
        let mut s = lambda * z[i];
        for j in 0..d {
            s += sigma[i * d + j] * z[j];
        }
        q += z[i] * s;
    }
    q.max(0.0).sqrt()
}

/// Runs the grid; `progress()` after each `(design, d, n, repetition)` job.
///
/// # Errors
/// Invalid configuration or an estimator error other than a singular empirical law.
pub fn coverage(cfg: &CoverageConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<CoverageCell>> {
    if cfg.reps == 0 || cfg.ns.is_empty() || cfg.ds.is_empty() || cfg.designs.is_empty() {
        return Err(Error::param("grid", "needs repetitions, sizes, dimensions and designs"));
    }
    let set = FeasibleSet::ball(cfg.radius)?;
    let mut control = Control::default();
    control.par = Par::Seq;
    let mut jobs = Vec::new();
    for &design in &cfg.designs {
        for &d in &cfg.ds {
            for &n in &cfg.ns {
                for r in 0..cfg.reps {
                    jobs.push((design, d, n, r));
                }
            }
        }
    }
    let recs: Vec<Vec<Rec>> = jobs
        .par_iter()
        .map(|&(design, d, n, r)| -> Result<Vec<Rec>> {
            let base = mix(mix(mix(mix(cfg.seed, design as u64), d as u64), n as u64), r as u64);
            let theta = theta_star(d, cfg.theta_norm, false, &mut simulation_rng(mix(base, 1)))?;
            let data = match design {
                Design::Sphere => sphere_pairs(n, &theta, &mut simulation_rng(mix(base, 2))),
                Design::Bandit => {
                    bandit_config(d).preferences(n, cfg.p_rare, &theta, &mut simulation_rng(mix(base, 2)))?
                }
            };
            let view = data.view()?;
            let (sigma, x_max) = design_moments(Features::F64(&data.x), n, d)?;
            let nf = n as f64;
            let mut out = Vec::new();
            let mut record = |est: CovEstimator,
                              eps: Option<f64>,
                              rule: FitRule,
                              theta_hat: &[f64],
                              labels: Option<&[u8]>,
                              cov: &[f64],
                              seed: u64|
             -> Result<()> {
                let mut inp = RuleInputs::new(Some(n), d, Some(cfg.radius), Some(x_max), true);
                inp.eta = cfg.eta;
                let explicit = fit_calibration(&rule, &inp).map_err(|e| Error::param("rule", e.to_string()))?;
                let data_in = EmpiricalInputs {
                    x: Features::F64(&data.x),
                    labels,
                    theta: theta_hat,
                    sigma: Some(cov),
                    draws: cfg.draws,
                };
                let emp = empirical_fit_calibration(&rule, &inp, &data_in, &mut simulation_rng(seed));
                let dist = m_norm(&theta, theta_hat, cov, explicit.lambda);
                let (e_ratio, e_rad) = match emp {
                    Ok(c) => (dist / c.radius, c.radius),
                    Err(_) => (f64::NAN, f64::NAN),
                };
                out.push(Rec {
                    key: (design, d, n, est, eps.map(f64::to_bits)),
                    explicit: dist / explicit.radius,
                    empirical: e_ratio,
                    radii: (explicit.radius, e_rad),
                });
                Ok(())
            };
            // Non-private MLE.
            let mut o = FitOptions::new(LossSpec::Mle, set);
            o.control = control.clone();
            let m = fit(view, &o)?;
            record(
                CovEstimator::Mle,
                None,
                FitRule::Local { eps: None },
                &m.theta,
                Some(&data.y),
                &sigma,
                mix(base, 3),
            )?;
            for (k, &eps) in cfg.eps.iter().enumerate() {
                let s = mix(mix(base, 100), k as u64);
                // Local debiased RR.
                let yt = RandomizedResponse::new(eps)?.randomize(&data.y, &mut simulation_rng(mix(s, 1)))?;
                let mut o = FitOptions::new(LossSpec::DebiasedRr { eps }, set);
                o.control = control.clone();
                let m = fit(view.with_labels(&yt)?, &o)?;
                record(
                    CovEstimator::DebiasedRr,
                    Some(eps),
                    FitRule::Local { eps: Some(eps) },
                    &m.theta,
                    Some(&yt),
                    &sigma,
                    mix(s, 2),
                )?;
                // Central objective perturbation (label DP).
                let delta = 0.5 / (nf * nf);
                let mut o = ObjPertOptions::new(
                    eps,
                    delta,
                    FeatureBound::pairwise(x_max / 2.0)?,
                    default_beta(n, &set)?,
                    set,
                );
                o.control = control.clone();
                o.allow_unguaranteed = true;
                let f = objective_perturbation(view, &o, &mut NoiseRng::seeded(mix(s, 3)))?;
                record(
                    CovEstimator::ObjPert,
                    Some(eps),
                    FitRule::ObjPert {
                        noise_std: f.detail.noise_std,
                        beta: f.detail.beta,
                    },
                    &f.theta,
                    None,
                    &sigma,
                    mix(s, 4),
                )?;
                // Private MLE + private covariance (standard DP, ε ≤ 1 only).
                if eps <= 1.0 {
                    let unit = FeatureBound::pairwise(1.0)?;
                    let mut o = PrivateMleOptions::new(eps, delta, unit, set);
                    o.eta = cfg.eta;
                    o.control = control.clone();
                    o.allow_unguaranteed = true;
                    let mut rng = NoiseRng::seeded(mix(s, 5));
                    let f = private_mle(view, &o, &mut rng)?;
                    let c = private_covariance(&data.x, n, d, &CovarianceOptions::new(eps, delta, unit), &mut rng)?;
                    // The fit's own guarantee is (ε/2, δ/2); the rule calibrates the pair at 2×.
                    record(
                        CovEstimator::PrivateMle,
                        Some(eps),
                        FitRule::PrivateMle {
                            eps: eps / 2.0,
                            delta: delta / 2.0,
                            bound: unit,
                            alpha: None,
                            accuracy: None,
                        },
                        &f.theta,
                        None,
                        &c.matrix,
                        mix(s, 6),
                    )?;
                }
            }
            progress();
            Ok(out)
        })
        .collect::<Result<_>>()?;
    let mut cells: Vec<CoverageCell> = Vec::new();
    for rec in recs.into_iter().flatten() {
        let (design, d, n, estimator, eps) = rec.key;
        let pos = cells
            .iter()
            .position(|c| (c.design, c.d, c.n, c.estimator, c.eps.map(f64::to_bits)) == (design, d, n, estimator, eps));
        let i = match pos {
            Some(i) => i,
            None => {
                cells.push(CoverageCell {
                    design,
                    d,
                    n,
                    estimator,
                    eps: eps.map(f64::from_bits),
                    explicit: vec![],
                    empirical: vec![],
                    mean_radius: (0.0, 0.0),
                });
                cells.len() - 1
            }
        };
        let c = &mut cells[i];
        c.explicit.push(rec.explicit);
        c.empirical.push(rec.empirical);
        c.mean_radius.0 += rec.radii.0;
        c.mean_radius.1 += rec.radii.1;
    }
    for c in &mut cells {
        let k = c.explicit.len() as f64;
        c.mean_radius.0 /= k;
        c.mean_radius.1 /= k;
    }
    Ok(cells)
}

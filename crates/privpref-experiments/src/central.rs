//! The central-vs-local comparison of Chowdhury, Zhou & Natarajan (2024) (Sec. 6 and Figure 1) with
//! **exact** estimators (the paper computes the central one by SGD, which its Thm 5.2 does not
//! cover):
//!
//! * non-private MLE on clear labels (eq. 8);
//! * local: debiased RR `θ̂_RR` (eqs. 4–6) on labels privatised by randomized response at `ε`
//!   (ε-label-LDP; Thm 4.2 predicts error `∝ coth(ε/2)/√n`);
//! * central: objective perturbation (Algorithm 2, Thm 5.2) solved exactly and certified,
//!   `(ε, δ)`-label DP ([`privpref::estimator::central::objective_perturbation`]); Thm 5.3 predicts
//!   a privacy excess `∝ s_w√d/n`, i.e. log-log slope −1.
//!
//! The paper's unstated choices are fields of [`CentralConfig`]: `θ*` drawn per
//! repetition on the sum-zero subspace with norm `theta_norm` (so `θ* ∈ Θ_B`), `φ ~ N(0, I)`,
//! `x = φ¹ − φ⁰`, `β = √n/B` (Thm 5.3). Gaussian features have no a-priori bound, so the
//! stated `L` is `max_i‖x_i‖/2` of each dataset — legitimate under label DP, where features
//! are public; it is computed from the features only.
//!
//! Reproducible: repetition `r` at size `n` draws `θ*` from `(seed, r)`, data from
//! `(seed, r, n)` (the same data as [`super::local_comparison`]), RR labels and the
//! objective-perturbation noise from `(seed, r, n, ε bits)`; independent of threads and order.

use super::check_grid;
use privpref::data::FeatureBound;
use privpref::error::{check_delta, Result};
use privpref::estimator::central::{objective_perturbation, ObjPertOptions};
use privpref::estimator::{fit, FitOptions};
use privpref::feasible::{norm, FeasibleSet};
use privpref::loss::LossSpec;
use privpref::mechanism::{mix_seed as mix, simulation_rng, Mechanism, RandomizedResponse};
use privpref::par::Par;
use privpref::privacy::NoiseRng;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::Control;
use rayon::prelude::*;

/// Settings of [`central_vs_local`]. Defaults: `d = 5`, `‖θ*‖ = 1`, `B = 2`,
/// `ε ∈ {0.1, 0.5, 1}`, `δ = 1e-3`, `n ∈ {1000, 2000, 4000, 6000, 8000, 10000}`,
/// 100 repetitions, seed 2024.
#[derive(Debug, Clone, PartialEq)]
pub struct CentralConfig {
    /// Dimension `d` (the paper shows 5).
    pub d: usize,
    /// `‖θ*‖`.
    pub theta_norm: f64,
    /// `B` of `Θ_B`.
    pub radius: f64,
    /// Privacy levels.
    pub eps: Vec<f64>,
    /// `δ` of the central estimator.
    pub delta: f64,
    /// Sample sizes.
    pub ns: Vec<usize>,
    /// Repetitions.
    pub reps: usize,
    /// Base seed (the objective-perturbation noise is seeded too: simulation only).
    pub seed: u64,
}

impl Default for CentralConfig {
    fn default() -> Self {
        CentralConfig {
            d: 5,
            theta_norm: 1.0,
            radius: 2.0,
            eps: vec![0.1, 0.5, 1.0],
            delta: 1e-3,
            ns: vec![1_000, 2_000, 4_000, 6_000, 8_000, 10_000],
            reps: 100,
            seed: 2024,
        }
    }
}

/// The estimators of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CentralEstimator {
    /// Non-private MLE.
    Mle,
    /// Local debiased RR.
    LocalRr,
    /// Central objective perturbation.
    ObjPert,
}

impl CentralEstimator {
    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            CentralEstimator::Mle => "mle",
            CentralEstimator::LocalRr => "local-debiased-rr",
            CentralEstimator::ObjPert => "central-objpert",
        }
    }
}

/// One estimator at one `(ε, n)`.
#[derive(Debug, Clone)]
pub struct CentralCell {
    /// Estimator.
    pub estimator: CentralEstimator,
    /// `ε` (`None` for the MLE).
    pub eps: Option<f64>,
    /// `n`.
    pub n: usize,
    /// `‖θ̂ − θ*‖` per repetition, in repetition order.
    pub errors: Vec<f64>,
    /// Repetitions whose guarantee was refused or whose solver did not converge.
    pub failures: usize,
}

impl CentralCell {
    /// Mean error.
    pub fn mean(&self) -> f64 {
        mean_of(&self.errors)
    }
    /// Standard error of the mean.
    pub fn std_err(&self) -> f64 {
        std_err_of(&self.errors)
    }
    /// Mean squared error.
    pub fn mse(&self) -> f64 {
        self.errors.iter().map(|e| e * e).sum::<f64>() / self.errors.len() as f64
    }
}

pub use super::stats::loglog_slope;
use super::stats::{mean as mean_of, std_err as std_err_of};

type Rec = (CentralEstimator, Option<f64>, usize, usize, f64, bool);

/// Runs the comparison; `progress()` after each `(n, repetition)` job. Cells in grid order:
/// for each `n`, the MLE, then for each `ε` local RR and objective perturbation.
///
/// # Errors
/// Invalid configuration.
pub fn central_vs_local(cfg: &CentralConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<CentralCell>> {
    check_grid(cfg.d, cfg.radius, cfg.theta_norm, &cfg.eps, cfg.reps, &cfg.ns)?;
    check_delta(cfg.delta)?;
    let set = FeasibleSet::theta_b(cfg.radius)?;
    let mut control = Control::default();
    control.par = Par::Seq;
    let jobs: Vec<(usize, usize)> = cfg
        .ns
        .iter()
        .flat_map(|&n| (0..cfg.reps).map(move |r| (n, r)))
        .collect();
    let recs: Vec<Vec<Rec>> = jobs
        .par_iter()
        .map(|&(n, r)| -> Result<Vec<Rec>> {
            let rs = mix(cfg.seed, r as u64);
            let theta = theta_star(cfg.d, cfg.theta_norm, true, &mut simulation_rng(rs))?;
            let data = btl_pairs(n, &theta, &mut simulation_rng(mix(rs, n as u64)))?;
            let view = data.view()?;
            let err = |t: &[f64]| norm(&t.iter().zip(&theta).map(|(a, b)| a - b).collect::<Vec<_>>());
            let mut out = Vec::new();
            let mut opts = FitOptions::new(LossSpec::Mle, set);
            opts.control = control.clone();
            let m = fit(view, &opts)?;
            out.push((CentralEstimator::Mle, None, n, r, err(&m.theta), !m.report.converged()));
            // The stated L: from the public features only (label DP).
            let l = view.max_row_norm(false) / 2.0;
            let beta = (n as f64).sqrt() / cfg.radius;
            for &eps in &cfg.eps {
                let base = mix(mix(rs, n as u64), eps.to_bits());
                let yt = RandomizedResponse::new(eps)?.randomize(&data.y, &mut simulation_rng(mix(base, 1)))?;
                let pview = view.with_labels(&yt)?;
                let mut o = FitOptions::new(LossSpec::DebiasedRr { eps }, set);
                o.control = control.clone();
                let m = fit(pview, &o)?;
                out.push((
                    CentralEstimator::LocalRr,
                    Some(eps),
                    n,
                    r,
                    err(&m.theta),
                    !m.report.converged(),
                ));
                let mut po = ObjPertOptions::new(eps, cfg.delta, FeatureBound::pairwise(l)?, beta, set);
                po.control = control.clone();
                po.allow_unguaranteed = true;
                let f = objective_perturbation(view, &po, &mut NoiseRng::seeded(mix(base, 2)))?;
                out.push((
                    CentralEstimator::ObjPert,
                    Some(eps),
                    n,
                    r,
                    err(&f.theta),
                    f.guarantee.is_none(),
                ));
            }
            progress();
            Ok(out)
        })
        .collect::<Result<_>>()?;
    let mut cells: Vec<CentralCell> = Vec::new();
    for (est, eps, n, _r, e, failed) in recs.into_iter().flatten() {
        let i = match cells
            .iter()
            .position(|c| c.estimator == est && c.eps == eps && c.n == n)
        {
            Some(i) => i,
            None => {
                cells.push(CentralCell {
                    estimator: est,
                    eps,
                    n,
                    errors: Vec::new(),
                    failures: 0,
                });
                cells.len() - 1
            }
        };
        cells[i].errors.push(e);
        cells[i].failures += failed as usize;
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_of_a_power_law() {
        let x = [1e3, 2e3, 4e3, 1e4];
        let y: Vec<f64> = x.iter().map(|v: &f64| 3.0 * v.powf(-0.5)).collect();
        assert!((loglog_slope(&x, &y) + 0.5).abs() < 1e-12);
        assert!(loglog_slope(&x[..1], &y[..1]).is_nan());
    }
}

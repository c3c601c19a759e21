//! Paper experiments as library functions (the CLI `demo` and the examples print them).
//!
//! [`central`]: the central-vs-local comparison of Chowdhury, Zhou & Natarajan (2024), Sec. 6, with
//! exact estimators (non-private MLE, local debiased RR, central objective perturbation with its
//! certified guarantee).
//!
//! [`sgd_grid`]: the same simulation with every estimator run by one-pass SGD, as in the paper
//! (local SGD-RR, objective perturbation by SGD — not private —, and the MLE by SGD).
//!
//! [`user_level`]: the m-sweep of Zhang et al. (2025) (user-level RR vs user-wise DP-SGD vs
//! AUP-RLHF as the number of comparisons per user grows). [`krr_scaling()`]: the error of the
//! debiased K-RR Plackett–Luce estimator across ε against the privacy factor `(e^ε + K − 1)/(e^ε −
//! 1)` (Chowdhury, Zhou & Natarajan (2024), Sec. 4.4, App. C.4).
//!
//! [`label_sgd`]: label-private convex learning of Ghazi et al. (2021) (K-RR, RRTop-k,
//! RR-with-prior in one and two stages, LP-Normal-SGD, against the exact debiased ERM) and
//! LP-RR-SGD's rates in `n` and `ε`.
//!
//! [`local_comparison`]: the local-model comparison of Chowdhury, Zhou & Natarajan (2024) (Sec. 6
//! and Figure 1) with *exact* estimators: the non-private MLE on clear labels, and MLE-RR and
//! debiased RR on labels privatised by randomized response, for several ε and n, with repetitions.
//! Everything the paper leaves unstated is an explicit field of [`LocalComparisonConfig`]: `θ*` is drawn
//! per repetition on the sum-zero subspace with norm `theta_norm` (so `θ* ∈ Θ_B` for `radius ≥
//! theta_norm`), features `φ ~ N(0, I_d)` with `x = φ¹ − φ⁰`, and the estimators are solved exactly
//! over `Θ_B` by projected Newton.
//!
//! Reproducible: repetition `r` at size `n` uses generators seeded from `(seed, r)` and
//! `(seed, n, r, ε)` only, so results do not depend on the thread count or the grid order.

pub mod central;
pub mod coverage;
pub mod krr_scaling;
pub mod label_sgd;
pub mod machine;
pub mod paper;
pub mod pessimism;
pub mod plot;
pub mod robust;
pub mod sgd_grid;
pub mod stats;
pub mod user_level;

pub use krr_scaling::{krr_scaling, KrrScalingConfig, KrrScalingRow};
pub use sgd_grid::{sgd_grid_comparison, SgdCell, SgdEstimator, SgdGridConfig, SgdGridResult};

use privpref::data::PairwiseView;
use privpref::error::{check_eps, check_radius, Error, Result};
use privpref::estimator::{fit, FitOptions};
use privpref::feasible::{norm, FeasibleSet};
use privpref::loss::LossSpec;
use privpref::mechanism::{simulation_rng, Mechanism, RandomizedResponse};
use privpref::par::Par;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::Control;
use rayon::prelude::*;
use std::time::Instant;

/// Settings of [`local_comparison`].
#[derive(Debug, Clone, PartialEq)]
pub struct LocalComparisonConfig {
    /// Feature dimension `d` (the paper shows `d = 5`).
    pub d: usize,
    /// `‖θ*‖`.
    pub theta_norm: f64,
    /// `B` of `Θ_B` used by all estimators.
    pub radius: f64,
    /// Privacy levels.
    pub eps: Vec<f64>,
    /// Sample sizes.
    pub ns: Vec<usize>,
    /// Repetitions per `(ε, n)`.
    pub reps: usize,
    /// Base seed.
    pub seed: u64,
}

impl Default for LocalComparisonConfig {
    /// `d = 5`, `‖θ*‖ = 1`, `B = 2`, `ε ∈ {0.1, 0.5, 1}`, `n ∈ {1e3, 3e3, 1e4, 3e4, 1e5}`,
    /// 20 repetitions, seed 2024.
    fn default() -> Self {
        LocalComparisonConfig {
            d: 5,
            theta_norm: 1.0,
            radius: 2.0,
            eps: vec![0.1, 0.5, 1.0],
            ns: vec![1_000, 3_000, 10_000, 30_000, 100_000],
            reps: 20,
            seed: 2024,
        }
    }
}

/// The estimators compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Estimator {
    /// Non-private MLE on clear labels.
    Mle,
    /// Noisy-channel MLE on RR labels.
    MleRr,
    /// Debiased RR on RR labels.
    DebiasedRr,
}

impl Estimator {
    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            Estimator::Mle => "mle",
            Estimator::MleRr => "mle-rr",
            Estimator::DebiasedRr => "debiased-rr",
        }
    }
}

/// Results of one estimator at one `(ε, n)` over all repetitions.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Estimator.
    pub estimator: Estimator,
    /// Privacy level (`None` for the non-private MLE).
    pub eps: Option<f64>,
    /// Sample size.
    pub n: usize,
    /// `‖θ̂ − θ*‖₂` per repetition.
    pub errors: Vec<f64>,
    /// Repetitions whose solver converged.
    pub converged: usize,
    /// Repetitions certified globally optimal (always, for convex losses).
    pub certified: usize,
    /// Total solver time over the repetitions (seconds).
    pub solve_seconds: f64,
    /// Repetitions that did not converge, with how the solver stopped.
    pub failures: Vec<(usize, privpref::solver::Termination)>,
}

impl Cell {
    /// Mean error.
    pub fn mean(&self) -> f64 {
        self.errors.iter().sum::<f64>() / self.errors.len() as f64
    }
    /// Standard error of the mean.
    pub fn std_err(&self) -> f64 {
        let k = self.errors.len() as f64;
        if k < 2.0 {
            return f64::NAN;
        }
        let m = self.mean();
        (self.errors.iter().map(|e| (e - m) * (e - m)).sum::<f64>() / (k - 1.0) / k).sqrt()
    }
}

/// One repetition's results: (estimator, eps, n, repetition, error, termination, certified, seconds).
type Record = (
    Estimator,
    Option<f64>,
    usize,
    usize,
    f64,
    privpref::solver::Termination,
    bool,
    f64,
);

use privpref::mechanism::mix_seed as mix;

/// The checks every simulation grid shares: `d ≥ 2` (θ* lives on the sum-zero subspace), a
/// valid radius, `0 < ‖θ*‖ ≤ radius`, valid privacy levels, at least one repetition and sizes
/// `n ≥ 1`.
pub(crate) fn check_grid(d: usize, radius: f64, theta_norm: f64, eps: &[f64], reps: usize, ns: &[usize]) -> Result<()> {
    if d < 2 {
        return Err(Error::param(
            "d",
            "must be at least 2 (θ* lives on the sum-zero subspace)",
        ));
    }
    check_radius(radius)?;
    if !(theta_norm > 0.0 && theta_norm <= radius) {
        return Err(Error::param(
            "theta-norm",
            format!("must be in (0, radius], got {theta_norm}"),
        ));
    }
    for &e in eps {
        check_eps(e)?;
    }
    if reps == 0 || ns.is_empty() || ns.contains(&0) {
        return Err(Error::param("grid", "needs at least one repetition and sizes n ≥ 1"));
    }
    Ok(())
}

/// Runs the comparison; `progress()` is called after each `(n, repetition)` job.
pub fn local_comparison(cfg: &LocalComparisonConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<Cell>> {
    check_grid(cfg.d, cfg.radius, cfg.theta_norm, &cfg.eps, cfg.reps, &cfg.ns)?;
    let set = FeasibleSet::theta_b(cfg.radius)?;
    let mut control = Control::default();
    control.par = Par::Seq;
    let jobs: Vec<(usize, usize)> = cfg
        .ns
        .iter()
        .flat_map(|&n| (0..cfg.reps).map(move |r| (n, r)))
        .collect();
    let records: Vec<Vec<Record>> = jobs
        .par_iter()
        .map(|&(n, r)| -> Result<Vec<Record>> {
            let mut out = Vec::new();
            let theta = theta_star(
                cfg.d,
                cfg.theta_norm,
                true,
                &mut simulation_rng(mix(cfg.seed, r as u64)),
            )?;
            let data = btl_pairs(n, &theta, &mut simulation_rng(mix(mix(cfg.seed, r as u64), n as u64)))?;
            let view = data.view()?;
            let mut run = |est: Estimator, eps: Option<f64>, view: PairwiseView<'_>, loss: LossSpec| -> Result<()> {
                let mut opts = FitOptions::new(loss, set);
                opts.control = control.clone();
                let t = Instant::now();
                let m = fit(view, &opts)?;
                let secs = t.elapsed().as_secs_f64();
                let err = norm(&m.theta.iter().zip(&theta).map(|(a, b)| a - b).collect::<Vec<_>>());
                out.push((
                    est,
                    eps,
                    n,
                    r,
                    err,
                    m.report.termination,
                    m.report.certificate.certified_global,
                    secs,
                ));
                Ok(())
            };
            run(Estimator::Mle, None, view, LossSpec::Mle)?;
            for (k, &eps) in cfg.eps.iter().enumerate() {
                let rr = RandomizedResponse::new(eps)?;
                let seed = mix(mix(mix(cfg.seed, r as u64), n as u64), 1 + k as u64);
                let yt = rr.randomize(&data.y, &mut simulation_rng(seed))?;
                let pview = view.with_labels(&yt)?;
                run(Estimator::MleRr, Some(eps), pview, LossSpec::MleRr { eps })?;
                run(Estimator::DebiasedRr, Some(eps), pview, LossSpec::DebiasedRr { eps })?;
            }
            progress();
            Ok(out)
        })
        .collect::<Result<_>>()?;
    // Gather in grid order (independent of scheduling).
    let mut cells: Vec<Cell> = Vec::new();
    for rec in records.into_iter().flatten() {
        let (est, eps, n, rep, err, term, cert, secs) = rec;
        let pos = cells
            .iter()
            .position(|c| c.estimator == est && c.eps == eps && c.n == n);
        let c = match pos {
            Some(i) => &mut cells[i],
            None => {
                cells.push(Cell {
                    estimator: est,
                    eps,
                    n,
                    errors: vec![],
                    converged: 0,
                    certified: 0,
                    solve_seconds: 0.0,
                    failures: vec![],
                });
                cells.last_mut().expect("just pushed")
            }
        };
        c.errors.push(err);
        c.converged += term.is_converged() as usize;
        if !term.is_converged() {
            c.failures.push((rep, term));
        }
        c.certified += cert as usize;
        c.solve_seconds += secs;
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(r: Result<()>) -> &'static str {
        match r {
            Err(Error::InvalidParam { name, .. }) => name,
            other => panic!("expected InvalidParam, got {other:?}"),
        }
    }

    #[test]
    fn check_grid_names_the_bad_setting() {
        assert!(check_grid(3, 1.0, 1.0, &[0.5, 1.0], 2, &[10, 100]).is_ok());
        assert_eq!(name(check_grid(1, 1.0, 0.5, &[1.0], 2, &[10])), "d");
        assert_eq!(name(check_grid(3, 0.0, 0.5, &[1.0], 2, &[10])), "radius");
        assert_eq!(name(check_grid(3, 1.0, 0.0, &[1.0], 2, &[10])), "theta-norm");
        assert_eq!(name(check_grid(3, 1.0, 1.5, &[1.0], 2, &[10])), "theta-norm");
        assert_eq!(name(check_grid(3, 1.0, f64::NAN, &[1.0], 2, &[10])), "theta-norm");
        assert_eq!(name(check_grid(3, 1.0, 0.5, &[1.0, -1.0], 2, &[10])), "eps");
        assert_eq!(name(check_grid(3, 1.0, 0.5, &[1.0], 0, &[10])), "grid");
        assert_eq!(name(check_grid(3, 1.0, 0.5, &[1.0], 2, &[])), "grid");
        assert_eq!(name(check_grid(3, 1.0, 0.5, &[1.0], 2, &[10, 0])), "grid");
    }
}

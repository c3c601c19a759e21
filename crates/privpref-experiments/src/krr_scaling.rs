//! The error of the debiased K-RR Plackett–Luce estimator across ε (Chowdhury, Zhou & Natarajan
//! (2024), Sec. 4.4, App. C.4 and Thm C.2): its error scales like the privacy factor
//! `1/c_{K,ε} = (e^ε + K − 1)/(e^ε − 1)`.
//!
//! **Why exactly this factor (our derivation).** The estimator solves
//! `Σ_i Φ_iᵀ(c p_i(θ) − w_i) = 0` with `E[w_i | x_i] = c p_i(θ*)`, so
//! `θ̂ − θ* ≈ (cH)^{-1}(1/n)Σ_i Φ_iᵀ(w_i − c p_i)` with `H = E[Φᵀ(diag p − ppᵀ)Φ]`, and
//! `Cov(w | x) = diag(π̃) − π̃π̃ᵀ` for the output distribution `π̃ = q1 + c p` of K-RR. When `p` is
//! close to uniform, `π̃` is too (`q K + c = 1`), for every ε: the
//! sandwich `H^{-1} E[Φᵀ Cov(w|x) Φ] H^{-1}` hardly depends on ε and the RMSE is `∝ 1/c`. (A
//! numerical evaluation of the sandwich for `K = 4`, `d = 5`, `‖θ*‖ = 0.5`, Gaussian features gives
//! `RMSE·c` within 1% for ε ∈ [0.1, 2] and 4% at ε = 4.)
//!
//! [`krr_scaling`] measures it: per repetition, `θ*` on the sum-zero sphere of radius
//! `theta_norm`, Plackett–Luce choices from [`pl_groups`], the choices privatised once per ε by
//! [`KaryRr`], the exact debiased estimator over `Θ_B` (projected Newton), and the clear-label
//! top-1 MLE for reference; it reports `RMSE(ε)`, the factor and `RMSE·c` (constant if the error
//! scales like the factor).

use privpref::data::GroupLabels;
use privpref::error::{check_eps, check_radius, Error, Result};
use privpref::estimator::{fit_kwise, FitOptions};
use privpref::feasible::{norm, FeasibleSet};
use privpref::loss::GroupLossSpec;
use privpref::mechanism::{mix_seed as mix, simulation_rng, KaryRr, Mechanism};
use privpref::par::Par;
use privpref::sim::{pl_groups, theta_star};
use privpref::solver::Control;
use rayon::prelude::*;

/// Settings of [`krr_scaling`].
#[derive(Debug, Clone, PartialEq)]
pub struct KrrScalingConfig {
    /// Alternatives per sample `K`.
    pub k: usize,
    /// Features `d`.
    pub d: usize,
    /// Samples per repetition.
    pub n: usize,
    /// `‖θ*‖` (on the sum-zero subspace).
    pub theta_norm: f64,
    /// `B` of `Θ_B`.
    pub radius: f64,
    /// Privacy levels.
    pub eps: Vec<f64>,
    /// Repetitions.
    pub reps: usize,
    /// Base seed.
    pub seed: u64,
}

impl Default for KrrScalingConfig {
    /// `K = 4`, `d = 5`, `n = 20000`, `‖θ*‖ = 0.5`, `B = 5`, `ε ∈ {0.5, 1, 2, 4}`, 200
    /// repetitions, seed 6. (Smaller ε needs larger `n` to be in the asymptotic regime: at
    /// `ε = 0.25`, `n = 20000` the RMSE is 0.30 ≈ 0.6‖θ*‖ and `RMSE·c` is 7% above its
    /// `ε ≥ 0.5` values.)
    fn default() -> Self {
        KrrScalingConfig {
            k: 4,
            d: 5,
            n: 20_000,
            theta_norm: 0.5,
            radius: 5.0,
            eps: vec![0.5, 1.0, 2.0, 4.0],
            reps: 200,
            seed: 6,
        }
    }
}

/// One row of [`krr_scaling`]'s result.
#[derive(Debug, Clone, PartialEq)]
pub struct KrrScalingRow {
    /// Privacy level (`None`: the clear-label top-1 MLE).
    pub eps: Option<f64>,
    /// `1/c_{K,ε} = (e^ε + K − 1)/(e^ε − 1)` (1 for the MLE).
    pub factor: f64,
    /// `sqrt(mean_r ‖θ̂_r − θ*_r‖²)`.
    pub rmse: f64,
    /// `rmse / factor`.
    pub normalized: f64,
    /// Repetitions whose solver converged (all, unless something is wrong).
    pub converged: usize,
    /// Repetitions whose estimate lies on the sphere `‖θ‖ = B` (the debiased loss is unbounded
    /// below; a boundary answer means `B` shaped the estimate).
    pub on_boundary: usize,
}

/// Runs the simulation (module docs). Repetitions run in parallel; results do not depend on the
/// thread count (each repetition's generators are seeded from `(seed, r)`).
///
/// # Errors
/// [`Error::InvalidParam`] for an invalid configuration.
pub fn krr_scaling(cfg: &KrrScalingConfig) -> Result<Vec<KrrScalingRow>> {
    if cfg.d < 2 {
        return Err(Error::param(
            "d",
            "must be at least 2 (θ* lives on the sum-zero subspace)",
        ));
    }
    check_radius(cfg.radius)?;
    if !(cfg.theta_norm > 0.0 && cfg.theta_norm < cfg.radius) {
        return Err(Error::param(
            "theta-norm",
            format!("must be in (0, radius), got {}", cfg.theta_norm),
        ));
    }
    for &e in &cfg.eps {
        check_eps(e)?;
    }
    if cfg.reps == 0 || cfg.n == 0 {
        return Err(Error::param("reps", "needs at least one repetition and n ≥ 1"));
    }
    let set = FeasibleSet::theta_b(cfg.radius)?;
    let mut control = Control::default();
    control.par = Par::Seq;
    // Per repetition: (squared error, converged, on boundary) for the MLE, then each ε.
    let per_rep: Vec<Vec<(f64, bool, bool)>> = (0..cfg.reps)
        .into_par_iter()
        .map(|r| -> Result<Vec<(f64, bool, bool)>> {
            let base = mix(cfg.seed, r as u64);
            let th = theta_star(cfg.d, cfg.theta_norm, true, &mut simulation_rng(base))?;
            let data = pl_groups(cfg.n, cfg.k, &th, &mut simulation_rng(mix(base, 1)))?;
            let choices = data.choices();
            let view =
                privpref::data::GroupView::new(&data.x, cfg.n, cfg.k, cfg.d, GroupLabels::Choice(&choices), None)?;
            let mut out = Vec::with_capacity(cfg.eps.len() + 1);
            let mut run = |spec: GroupLossSpec, labels: &[u8]| -> Result<()> {
                let v = view.with_labels(GroupLabels::Choice(labels))?;
                let mut o = FitOptions::new(spec, set);
                o.control = control.clone();
                let m = fit_kwise(v, &o)?;
                let diff: Vec<f64> = m.theta.iter().zip(&th).map(|(a, b)| a - b).collect();
                let e = norm(&diff);
                out.push((e * e, m.report.converged(), m.report.certificate.on_boundary));
                Ok(())
            };
            run(GroupLossSpec::PlTop1, &choices)?;
            for (j, &eps) in cfg.eps.iter().enumerate() {
                let yt = KaryRr::new(eps, cfg.k)?.randomize(&choices, &mut simulation_rng(mix(base, 2 + j as u64)))?;
                run(GroupLossSpec::PlKrr { eps }, &yt)?;
            }
            Ok(out)
        })
        .collect::<Result<_>>()?;
    let k = cfg.k as f64;
    let mut rows = Vec::with_capacity(cfg.eps.len() + 1);
    for col in 0..=cfg.eps.len() {
        let eps = (col > 0).then(|| cfg.eps[col - 1]);
        let factor = eps.map_or(1.0, |e| (e.exp() + k - 1.0) / e.exp_m1());
        let mse = per_rep.iter().map(|r| r[col].0).sum::<f64>() / cfg.reps as f64;
        let rmse = mse.sqrt();
        rows.push(KrrScalingRow {
            eps,
            factor,
            rmse,
            normalized: rmse / factor,
            converged: per_rep.iter().filter(|r| r[col].1).count(),
            on_boundary: per_rep.iter().filter(|r| r[col].2).count(),
        });
    }
    Ok(rows)
}

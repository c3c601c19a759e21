//! The simulation of Chowdhury, Zhou & Natarajan (2024) (Sec. 6 and Figure 1)
//! with the paper's own optimiser: every estimator is run by **one-pass projected SGD**
//! (Algorithm 1), many repetitions at once with the replicated engine
//! ([`privpref::solver::sgd::replicated`]).
//!
//! Estimators, for each `(ε, n)` and repetition:
//! * **local SGD-RR** (Algorithm 1): the debiased RR loss on labels privatised by randomized
//!   response at `ε`, `F = (1/n)Σ ℓ̂(x_iᵀθ; ỹ_i)`. ε-label-LDP (the SGD is post-processing).
//! * **central objective perturbation by SGD**: the logistic loss on clear labels with
//!   Algorithm 2's ridge and noise, `F = (1/n)Σ ℓ + (β/2n)‖θ‖² + (1/n)⟨w, θ⟩`,
//!   `w ~ N(0, s_w² I)`, `s_w = L√(8 log(2/δ) + 4ε)/ε` (Thm 5.2, [`noise_std`]) with the
//!   data-dependent `L = max_i‖x_i‖/2` (legitimate under label DP, where the features are
//!   public). **This
//!   variant carries no DP guarantee**: Thm 5.2 is proved for the exact minimiser, and an SGD
//!   iterate is not one. It is reported as in the paper, labelled
//!   "not private".
//! * **non-private MLE by SGD**: the logistic loss on clear labels (one run per `n`, shared by
//!   every `ε`).
//!
//! Everything the paper leaves unstated is a field of [`SgdGridConfig`]:
//! `B` and the feasible set, `‖θ*‖` (θ* drawn per repetition on the sum-zero subspace, as in
//! [`super::local_comparison`]), the step rule (default: the paper's constant `η = 0.1`), the
//! averaging, `β` (default `√n/B`, Thm 5.3), `δ` and the seed.
//!
//! **Samples** ([`SgdGridConfig::nested`]): by default the sizes are **nested** — repetition `r`
//! draws one sample of the largest size `n_max` (features, clear labels, and RR labels per ε)
//! and size `n` uses its first `n` comparisons, as a growing data stream would; the
//! objective-perturbation noise `w` (and the data-dependent `L` it is scaled by) is drawn per
//! `(r, n, ε)`, since each fit draws its own noise. With `nested = false` every `n` gets an
//! independent sample. The two designs give the same errors at `n_max` (bit for bit) and the same
//! distribution of the error at every `n`; nested samples only correlate the errors across `n`
//! within a repetition (smoother curves, about 2.4× less data to generate for the default sizes).
//!
//! **Reproducible**: repetition `r` uses `θ*` from `(seed, r)`, a sample of size `m` from
//! `(seed, r, m)` exactly as [`super::local_comparison`] does (`m = n` for independent samples,
//! `m = n_max` for nested ones), its RR labels from `(seed, r, m, ε)` and the noise of size `n`
//! from `(seed, r, n, ε)` only (`ε` by its bits, not its position in the list). Blocks of repetitions run in parallel with rayon; the result does not depend on
//! the thread count, the block size or the grid order.

use super::check_grid;
use privpref::data::{FeatureBound, PairwiseView};
use privpref::error::{check_delta, Error, Result};
use privpref::feasible::FeasibleSet;
use privpref::loss::{Logistic, Loss, RrDebiased};
use privpref::mechanism::{mix_seed as mix, simulation_rng, Mechanism, RandomizedResponse};
use privpref::par::Par;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::sgd::{
    replicated, theory_constants, Averaging, ReplicaBlock, ReplicaOptions, ReplicaProblem, ReplicaSteps, StepRule,
};
use privpref::solver::Control;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use std::time::Instant;

/// How `β` of objective perturbation is chosen for sample size `n`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RidgeRule {
    /// `β = √n / B`, the choice of the utility proof of Thm 5.3 (Algorithm-2 units).
    SqrtNOverB,
    /// A fixed `β > 0`.
    Fixed(f64),
}

/// Settings of [`sgd_grid_comparison`]. Defaults: `d = 5`, `‖θ*‖ = 1`, `B = 2` on `Θ_B`,
/// `ε ∈ {0.1, 0.5, 1}`, `n ∈ {1000, 2000, 4000, 6000, 8000, 10000}`, 100 repetitions,
/// `δ = 1e-3`, constant step `η = 0.1`, last iterate, `β = √n/B`, seed 2024, nested samples,
/// 25 repetitions per block (four equal jobs for the default 100 repetitions).
#[derive(Debug, Clone, PartialEq)]
pub struct SgdGridConfig {
    /// Feature dimension `d` (the paper shows `d = 5`).
    pub d: usize,
    /// `‖θ*‖` (θ* is drawn per repetition, uniform direction on the sum-zero subspace).
    pub theta_norm: f64,
    /// Radius `B` of the feasible set used by every estimator.
    pub radius: f64,
    /// `true`: `Θ_B = {1ᵀθ = 0, ‖θ‖ ≤ B}` (the paper's set); `false`: the ball `‖θ‖ ≤ B`.
    pub sum_zero: bool,
    /// Privacy levels.
    pub eps: Vec<f64>,
    /// Sample sizes.
    pub ns: Vec<usize>,
    /// Repetitions per `(ε, n)`.
    pub reps: usize,
    /// `δ` of objective perturbation.
    pub delta: f64,
    /// Step rule of every SGD run; `theory` and `statement` are resolved per repetition and
    /// estimator from its data.
    pub step: StepRule,
    /// Last iterate (Algorithm 1) or Polyak–Ruppert average.
    pub average: Averaging,
    /// `β` of objective perturbation.
    pub ridge: RidgeRule,
    /// Base seed.
    pub seed: u64,
    /// `true`: nested samples (size `n` is the first `n` comparisons of one sample of the largest
    /// size, per repetition); `false`: an independent sample per size (module docs).
    pub nested: bool,
    /// Repetitions advanced together per block (performance only; results do not depend on it).
    pub block: usize,
}

impl Default for SgdGridConfig {
    fn default() -> Self {
        SgdGridConfig {
            d: 5,
            theta_norm: 1.0,
            radius: 2.0,
            sum_zero: true,
            eps: vec![0.1, 0.5, 1.0],
            ns: vec![1_000, 2_000, 4_000, 6_000, 8_000, 10_000],
            reps: 100,
            delta: 1e-3,
            step: StepRule::Const(0.1),
            average: Averaging::Last,
            ridge: RidgeRule::SqrtNOverB,
            seed: 2024,
            nested: true,
            block: 25,
        }
    }
}

/// The estimators of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SgdEstimator {
    /// Local SGD-RR (Algorithm 1) on RR labels.
    LocalSgdRr,
    /// Objective perturbation (Algorithm 2's objective) minimised by SGD — not private.
    CentralObjPertSgd,
    /// Non-private MLE by SGD.
    MleSgd,
}

impl SgdEstimator {
    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            SgdEstimator::LocalSgdRr => "local-sgd-rr",
            SgdEstimator::CentralObjPertSgd => "central-objpert-sgd",
            SgdEstimator::MleSgd => "mle-sgd",
        }
    }
    /// The privacy guarantee of the output.
    pub fn guarantee(&self) -> &'static str {
        match self {
            SgdEstimator::LocalSgdRr => "ε-label-LDP (randomized response; SGD is post-processing)",
            SgdEstimator::CentralObjPertSgd => {
                "NOT PRIVATE: objective perturbation solved by SGD is not covered by Thm 5.2 (exact minimiser required)"
            }
            SgdEstimator::MleSgd => "none (clear labels)",
        }
    }
}

/// Results of one estimator at one `(ε, n)` over all repetitions.
#[derive(Debug, Clone)]
pub struct SgdCell {
    /// Estimator.
    pub estimator: SgdEstimator,
    /// Privacy level (`None` for the non-private MLE).
    pub eps: Option<f64>,
    /// Sample size.
    pub n: usize,
    /// `‖θ̂ − θ*‖₂` per repetition, in repetition order.
    pub errors: Vec<f64>,
    /// Repetitions whose output was not finite (counted in `errors` as `NaN`).
    pub non_finite: usize,
}

impl SgdCell {
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

/// The grid's cells and where the time went.
#[derive(Debug, Clone)]
pub struct SgdGridResult {
    /// Cells in grid order: for each `n`, the MLE, then for each `ε` the local and the central
    /// estimator.
    pub cells: Vec<SgdCell>,
    /// Thread-seconds generating data (θ*, BTL samples, RR labels, noise, layout).
    pub data_seconds: f64,
    /// Thread-seconds in SGD (including theory constants when the step rule needs them).
    pub sgd_seconds: f64,
}

impl SgdGridResult {
    /// The cell of `(estimator, ε, n)` (`eps` is ignored for the MLE).
    pub fn cell(&self, estimator: SgdEstimator, eps: f64, n: usize) -> Option<&SgdCell> {
        self.cells
            .iter()
            .find(|c| c.estimator == estimator && c.n == n && (estimator == SgdEstimator::MleSgd || c.eps == Some(eps)))
    }
}

/// The noise standard deviation of objective perturbation (Chowdhury, Zhou & Natarajan (2024), Thm
/// 5.2); moved to [`privpref::privacy::calibrate::objpert_noise_std`], re-exported here under its
/// old name.
pub use privpref::privacy::calibrate::objpert_noise_std as noise_std;

fn validate(cfg: &SgdGridConfig) -> Result<()> {
    check_grid(cfg.d, cfg.radius, cfg.theta_norm, &cfg.eps, cfg.reps, &cfg.ns)?;
    check_delta(cfg.delta)?;
    if cfg.block == 0 {
        return Err(Error::param("block", "must be at least 1"));
    }
    if let RidgeRule::Fixed(b) = cfg.ridge {
        if !(b.is_finite() && b > 0.0) {
            return Err(Error::param("ridge", format!("β must be finite and > 0, got {b}")));
        }
    }
    cfg.step.validate()
}

/// One job's per-repetition errors: `(estimator, eps, n, rep, error)`.
type Record = (SgdEstimator, Option<f64>, usize, usize, f64);

/// The data of one block of repetitions, one sample of size `m` each, in the replicated layout.
/// Its first `n ≤ m` time steps are the data of size `n` (the layout is time-major).
struct BlockData {
    reps: Vec<usize>,
    thetas: Vec<Vec<f64>>,
    /// Row-major features per repetition (for the theory constants).
    rows: Vec<Vec<f64>>,
    /// Features, `x[(t·d + j)·k + q]`.
    x: Vec<f64>,
    /// Clear labels, `y[t·k + q]`.
    y: Vec<u8>,
    /// Per ε: RR labels (block layout).
    y_rr: Vec<Vec<u8>>,
    /// Per repetition: `max_{i ≤ t}‖x_i‖²` for every `t` (the running maximum).
    max_norm_sq: Vec<Vec<f64>>,
}

/// `out[t·k + q] = cols[q][t]` (labels into the block layout).
fn interleave_labels(cols: &[Vec<u8>], n: usize) -> Vec<u8> {
    let k = cols.len();
    let mut out = vec![0; n * k];
    for (t, o) in out.chunks_exact_mut(k).enumerate() {
        for (q, v) in o.iter_mut().enumerate() {
            *v = cols[q][t];
        }
    }
    out
}

/// Seed of repetition `r`.
fn rep_seed(cfg: &SgdGridConfig, r: usize) -> u64 {
    mix(cfg.seed, r as u64)
}

/// Draws the samples of size `m` of the repetitions `reps` (θ*, BTL comparisons, RR labels per ε).
fn make_block(cfg: &SgdGridConfig, m: usize, reps: &[usize]) -> Result<BlockData> {
    let (d, k) = (cfg.d, reps.len());
    let ne = cfg.eps.len();
    let mut thetas = Vec::with_capacity(k);
    let mut rows = Vec::with_capacity(k);
    let mut ys = Vec::with_capacity(k);
    let mut rr: Vec<Vec<Vec<u8>>> = vec![Vec::with_capacity(k); ne];
    for &r in reps {
        let rs = rep_seed(cfg, r);
        let theta = theta_star(d, cfg.theta_norm, true, &mut simulation_rng(rs))?;
        let data = btl_pairs(m, &theta, &mut simulation_rng(mix(rs, m as u64)))?;
        for (e, &eps) in cfg.eps.iter().enumerate() {
            let base = mix(mix(rs, m as u64), eps.to_bits());
            rr[e].push(RandomizedResponse::new(eps)?.randomize(&data.y, &mut simulation_rng(mix(base, 1)))?);
        }
        thetas.push(theta);
        rows.push(data.x);
        ys.push(data.y);
    }
    // Transpose into the block layout one time step at a time (the panel of step t is
    // contiguous, each repetition's rows are read in order).
    let mut x = vec![0.0; m * d * k];
    for (t, panel) in x.chunks_exact_mut(d * k).enumerate() {
        for (q, row) in rows.iter().enumerate() {
            for (j, &v) in row[t * d..(t + 1) * d].iter().enumerate() {
                panel[j * k + q] = v;
            }
        }
    }
    let max_norm_sq = rows
        .iter()
        .map(|row| {
            let mut m = 0.0f64;
            row.chunks_exact(d)
                .map(|x| {
                    m = m.max(x.iter().map(|v| v * v).sum::<f64>());
                    m
                })
                .collect()
        })
        .collect();
    Ok(BlockData {
        max_norm_sq,
        reps: reps.to_vec(),
        thetas,
        x,
        y: interleave_labels(&ys, m),
        y_rr: rr.iter().map(|c| interleave_labels(c, m)).collect(),
        rows,
    })
}

/// Objective-perturbation noise of every repetition of `blk` at size `n`, one `d × k` block
/// (`w[j·k + q]`) per privacy level of the grid, with the data-dependent `L = max_{i ≤ n}‖x_i‖/2`
/// of repetition `q`'s first `n` rows.
fn make_noise(cfg: &SgdGridConfig, blk: &BlockData, n: usize) -> Result<Vec<Vec<f64>>> {
    let (d, k) = (cfg.d, blk.reps.len());
    let mut noise = vec![vec![0.0; d * k]; cfg.eps.len()];
    for (q, &r) in blk.reps.iter().enumerate() {
        let l = blk.max_norm_sq[q][n - 1].sqrt() / 2.0;
        for (e, &eps) in cfg.eps.iter().enumerate() {
            let sw = noise_std(eps, cfg.delta, FeatureBound::pairwise(l)?)?;
            let base = mix(mix(rep_seed(cfg, r), n as u64), eps.to_bits());
            let mut rng = simulation_rng(mix(base, 2));
            for j in 0..d {
                let z: f64 = StandardNormal.sample(&mut rng);
                noise[e][j * k + q] = sw * z;
            }
        }
    }
    Ok(noise)
}

/// Runs one estimator on a block (`block` carries the labels, `n` rows); returns the
/// per-repetition errors of the output.
fn run_block<L: Loss>(
    cfg: &SgdGridConfig,
    blk: &BlockData,
    n: usize,
    block: &ReplicaBlock<'_>,
    loss: L,
    ridge: f64,
    noise: Option<&[f64]>,
) -> Result<Vec<f64>> {
    Ok(run_block_prefixes(cfg, blk, n, block, loss, ridge, noise, &[])?.remove(0))
}

/// As [`run_block`], and also the errors of the points after each step count in `prefixes`
/// (increasing, `< n`): with no ridge, no linear term and a step rule that does not depend on
/// the data, the point after `t` steps of the pass over `n` rows *is* the one-pass output on the
/// first `t` rows (θ₁ = 0, data order, `η_t` a function of `t`), bit for bit. Returns the
/// output's errors first, then one vector per prefix.
#[allow(clippy::too_many_arguments)]
fn run_block_prefixes<L: Loss>(
    cfg: &SgdGridConfig,
    blk: &BlockData,
    n: usize,
    block: &ReplicaBlock<'_>,
    loss: L,
    ridge: f64,
    noise: Option<&[f64]>,
    prefixes: &[usize],
) -> Result<Vec<Vec<f64>>> {
    debug_assert!(prefixes.is_empty() || (ridge == 0.0 && noise.is_none() && !cfg.step.needs_data()));
    let (d, k) = (cfg.d, blk.reps.len());
    let set = if cfg.sum_zero {
        FeasibleSet::theta_b(cfg.radius)?
    } else {
        FeasibleSet::ball(cfg.radius)?
    };
    let labels = block.y();
    // Data-dependent step rules: resolved per repetition on its own rows and labels.
    let per_rep: Option<Vec<f64>> = if cfg.step.needs_data() {
        let mut v = Vec::with_capacity(k);
        for q in 0..k {
            let yq: Vec<u8> = (0..n).map(|t| labels[t * k + q]).collect();
            let view = PairwiseView::new(&blk.rows[q][..n * d], n, d, &yq, None)?;
            let c = theory_constants(&view, &loss, &set)?;
            v.push(match cfg.step {
                StepRule::Theory => c.lambda,
                _ => 1.0 / (c.gamma * c.kappa),
            });
        }
        Some(v)
    } else {
        None
    };
    let steps = match (&per_rep, cfg.step) {
        (Some(v), StepRule::Theory) => ReplicaSteps::PerReplicaLambda(v),
        (Some(v), _) => ReplicaSteps::PerReplicaConst(v),
        (None, rule) => ReplicaSteps::Shared(rule.schedule()?),
    };
    let mut opts = ReplicaOptions::new(steps);
    opts.average = cfg.average;
    opts.checkpoints = prefixes;
    let prob = ReplicaProblem {
        loss,
        set,
        ridge,
        linear_term: noise,
    };
    let mut ctl = Control::default();
    ctl.par = Par::Seq;
    let out = replicated::run(block, &prob, &opts, &ctl)?;
    let errors = |theta: &[f64]| -> Vec<f64> {
        (0..k)
            .map(|q| {
                replicated::replication_of(theta, d, k, q)
                    .iter()
                    .zip(&blk.thetas[q])
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
                    .sqrt()
            })
            .collect()
    };
    let mut all = vec![errors(&out.theta)];
    all.extend(out.checkpoints.iter().map(|c| errors(&c.theta)));
    Ok(all)
}

/// Runs the grid (module docs). Returns the cells in grid order and the time split.
///
/// # Errors
/// [`Error::InvalidParam`] for invalid settings; the errors of the step rule's resolution
/// (e.g. `theory` with `κ = 0`).
pub fn sgd_grid_comparison(cfg: &SgdGridConfig) -> Result<SgdGridResult> {
    validate(cfg)?;
    // Jobs: (sizes fitted, size drawn, block of repetitions), largest n first for load balance.
    // Nested samples: one job per block fits every n on one draw of size n_max.
    let mut ns = cfg.ns.clone();
    ns.sort_unstable_by(|a, b| b.cmp(a));
    ns.dedup();
    let groups: Vec<(Vec<usize>, usize)> = if cfg.nested {
        vec![(ns.clone(), ns[0])]
    } else {
        ns.iter().map(|&n| (vec![n], n)).collect()
    };
    let jobs: Vec<(&[usize], usize, Vec<usize>)> = groups
        .iter()
        .flat_map(|(sizes, m)| {
            (0..cfg.reps)
                .step_by(cfg.block)
                .map(move |r0| (sizes.as_slice(), *m, (r0..(r0 + cfg.block).min(cfg.reps)).collect()))
        })
        .collect();
    let results: Vec<(Vec<Record>, f64, f64)> = jobs
        .par_iter()
        .map(|(sizes, m, reps)| -> Result<(Vec<Record>, f64, f64)> {
            let t0 = Instant::now();
            let blk = make_block(cfg, *m, reps)?;
            let mut data_s = t0.elapsed().as_secs_f64();
            let mut sgd_s = 0.0;
            let mut rec = Vec::new();
            let k = reps.len();
            // The estimators without ridge and noise (MLE, local SGD-RR) under a data-free step
            // rule: one pass over the largest size with checkpoints at the smaller ones gives
            // every size's output (see `run_block_prefixes`). Otherwise one run per size.
            let shared = sizes.len() > 1 && !cfg.step.needs_data();
            let n_top = sizes[0];
            let mut prefixes: Vec<usize> = sizes[1..].to_vec();
            prefixes.sort_unstable();
            let push = |rec: &mut Vec<Record>, est: SgdEstimator, eps: Option<f64>, n: usize, errs: Vec<f64>| {
                for (q, e) in errs.into_iter().enumerate() {
                    rec.push((est, eps, n, blk.reps[q], e));
                }
            };
            // Errors of the output (size n_top) first, then the prefixes in increasing order.
            let order: Vec<usize> = std::iter::once(n_top).chain(prefixes.iter().copied()).collect();
            // The whole draw, validated once; every size is a prefix of it.
            let full = ReplicaBlock::new(&blk.x, &blk.y, *m, cfg.d, k)?;
            let full_rr: Vec<ReplicaBlock<'_>> = blk.y_rr.iter().map(|y| full.with_labels(y)).collect::<Result<_>>()?;
            if shared {
                let t1 = Instant::now();
                let clear = full.prefix(n_top)?;
                let all = run_block_prefixes(cfg, &blk, n_top, &clear, Logistic, 0.0, None, &prefixes)?;
                for (&n, errs) in order.iter().zip(all) {
                    push(&mut rec, SgdEstimator::MleSgd, None, n, errs);
                }
                for (e, &eps) in cfg.eps.iter().enumerate() {
                    let rr = full_rr[e].prefix(n_top)?;
                    let all = run_block_prefixes(cfg, &blk, n_top, &rr, RrDebiased::new(eps)?, 0.0, None, &prefixes)?;
                    for (&n, errs) in order.iter().zip(all) {
                        push(&mut rec, SgdEstimator::LocalSgdRr, Some(eps), n, errs);
                    }
                }
                sgd_s += t1.elapsed().as_secs_f64();
            }
            for &n in sizes.iter() {
                let t0 = Instant::now();
                let noise = make_noise(cfg, &blk, n)?;
                data_s += t0.elapsed().as_secs_f64();
                let t1 = Instant::now();
                let clear = full.prefix(n)?;
                if !shared {
                    let errs = run_block(cfg, &blk, n, &clear, Logistic, 0.0, None)?;
                    push(&mut rec, SgdEstimator::MleSgd, None, n, errs);
                }
                let beta = match cfg.ridge {
                    RidgeRule::SqrtNOverB => (n as f64).sqrt() / cfg.radius,
                    RidgeRule::Fixed(b) => b,
                };
                for (e, &eps) in cfg.eps.iter().enumerate() {
                    if !shared {
                        let rr = full_rr[e].prefix(n)?;
                        let errs = run_block(cfg, &blk, n, &rr, RrDebiased::new(eps)?, 0.0, None)?;
                        push(&mut rec, SgdEstimator::LocalSgdRr, Some(eps), n, errs);
                    }
                    let errs = run_block(cfg, &blk, n, &clear, Logistic, beta, Some(&noise[e]))?;
                    push(&mut rec, SgdEstimator::CentralObjPertSgd, Some(eps), n, errs);
                }
                sgd_s += t1.elapsed().as_secs_f64();
            }
            Ok((rec, data_s, sgd_s))
        })
        .collect::<Result<_>>()?;
    let mut out = SgdGridResult {
        cells: Vec::new(),
        data_seconds: results.iter().map(|r| r.1).sum(),
        sgd_seconds: results.iter().map(|r| r.2).sum(),
    };
    let records: Vec<Record> = results.into_iter().flat_map(|r| r.0).collect();
    for &n in &cfg.ns {
        let mut keys = vec![(SgdEstimator::MleSgd, None)];
        for &eps in &cfg.eps {
            keys.push((SgdEstimator::LocalSgdRr, Some(eps)));
            keys.push((SgdEstimator::CentralObjPertSgd, Some(eps)));
        }
        for (est, eps) in keys {
            let mut errs: Vec<(usize, f64)> = records
                .iter()
                .filter(|r| r.0 == est && r.2 == n && r.1.map(f64::to_bits) == eps.map(f64::to_bits))
                .map(|r| (r.3, r.4))
                .collect();
            errs.sort_unstable_by_key(|e| e.0);
            let errors: Vec<f64> = errs.into_iter().map(|e| e.1).collect();
            out.cells.push(SgdCell {
                estimator: est,
                eps,
                n,
                non_finite: errors.iter().filter(|e| !e.is_finite()).count(),
                errors,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn nested_and_independent_samples_agree_at_the_largest_n_only() {
        let cfg = SgdGridConfig {
            ns: vec![300, 500],
            reps: 5,
            eps: vec![0.5, 1.0],
            block: 2,
            ..SgdGridConfig::default()
        };
        assert!(cfg.nested, "nested samples are the default");
        let nested = sgd_grid_comparison(&cfg).unwrap();
        let indep = sgd_grid_comparison(&SgdGridConfig {
            nested: false,
            ..cfg.clone()
        })
        .unwrap();
        for c in &nested.cells {
            let o = indep.cell(c.estimator, c.eps.unwrap_or(0.0), c.n).unwrap();
            if c.n == 500 {
                assert_eq!(bits(&c.errors), bits(&o.errors), "{:?} {:?}", c.estimator, c.eps);
            } else {
                // Different samples at the smaller size: no error coincides.
                assert!(c.errors.iter().zip(&o.errors).all(|(a, b)| a != b), "{:?}", c.estimator);
            }
        }
    }

    #[test]
    fn checkpoints_of_the_longest_pass_are_the_shorter_passes() {
        // The shared-prefix shortcut of the nested grid, bit for bit, for both averagings.
        for average in [Averaging::Last, Averaging::Polyak] {
            let cfg = SgdGridConfig {
                average,
                step: StepRule::InvT(0.7),
                ..SgdGridConfig::default()
            };
            let (k, m) = (3, 400);
            let blk = make_block(&cfg, m, &[0, 5, 9]).unwrap();
            let y = &blk.y_rr[0];
            let block = |n: usize| ReplicaBlock::new(&blk.x[..n * cfg.d * k], &y[..n * k], n, cfg.d, k).unwrap();
            let loss = RrDebiased::new(0.5).unwrap();
            let all = run_block_prefixes(&cfg, &blk, m, &block(m), loss, 0.0, None, &[1, 150, 399]).unwrap();
            assert_eq!(all.len(), 4);
            for (i, n) in [(0usize, m), (1, 1), (2, 150), (3, 399)] {
                let alone = run_block(&cfg, &blk, n, &block(n), loss, 0.0, None).unwrap();
                assert_eq!(bits(&all[i]), bits(&alone), "{average:?} n = {n}");
            }
        }
    }

    #[test]
    fn small_grid_is_reproducible_and_block_independent() {
        for nested in [true, false] {
            block_independence(nested);
        }
    }

    fn block_independence(nested: bool) {
        let cfg = SgdGridConfig {
            ns: vec![300, 500],
            reps: 7,
            eps: vec![0.5, 1.0],
            block: 3,
            nested,
            ..SgdGridConfig::default()
        };
        let a = sgd_grid_comparison(&cfg).unwrap();
        let b = sgd_grid_comparison(&SgdGridConfig {
            block: 7,
            eps: vec![1.0, 0.5],
            ns: vec![500, 300],
            ..cfg.clone()
        })
        .unwrap();
        assert_eq!(a.cells.len(), 2 * (1 + 2 * 2));
        for c in &a.cells {
            let o = b.cell(c.estimator, c.eps.unwrap_or(0.0), c.n).unwrap();
            assert_eq!(
                bits(&c.errors),
                bits(&o.errors),
                "{:?} {:?} {}",
                c.estimator,
                c.eps,
                c.n
            );
            assert_eq!(c.errors.len(), 7);
            assert_eq!(c.non_finite, 0);
        }
    }
}

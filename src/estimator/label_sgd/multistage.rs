//! Multi-stage training LP-MST (Ghazi et al. (2021), main-paper Alg. 3 and supplement Sec. B)
//! with label-private SGD as the trainer:
//!
//! ```text
//! partition the samples at random (public coins, seeded) into S(1), …, S(T) with |S(s)| ≈ r_s n
//! M(0) := the given initial prior (e.g. the private histogram prior), or uniform
//! for s = 1..T:
//!     priors: stage 1 the initial prior; stage s ≥ 2  p_i = softmax(−ℓ(Φ_i θ_{s−1}; ·)/t)
//!     release: (ỹ_i, Y_{k*_i}) ← RR-with-prior(p_i, y_i, ε) for i ∈ S(s), once
//!              (uniform prior ⇒ k* = K: K-RR)
//!     k̄_s := mean k* over S(s)
//!     data D_s := S(s) ∪ [reuse] {earlier releases whose ỹ is among the top-k of M(s−1),
//!                                   k = ⌊k̄_s⌋ (FilterRule::FloorMeanK)}
//!     θ_s := one pass of label-private SGD over D_s in random order, from θ_{s−1}
//!            (debiased gradient of each release over its own label set)
//! return θ_T
//! ```
//!
//! **Privacy.** Each label is read and randomised once, by the stage that owns it; the priors of
//! stage `s` depend only on the features and on the releases of stages `< s` (other samples), so
//! every stage is `ε`-label DP in its own samples, and the stages compose **in parallel**
//! ([`Guarantee::parallel`]): `ε` overall. Reuse, filtering and warm starts are post-processing.
//! A private initial prior (the histogram prior, `ε_p`) adds by basic composition: `ε_p + ε`.
//! Each stage's guarantee and the composed one are in the result.
//!
//! **Defaults** (`MultiStageOptions::new`): no reuse (each stage is one pass over fresh samples,
//! so the SGD unbiasedness argument holds stage by stage); the step counter continues across
//! stages (`restart_steps = false`: the warm-started stage keeps the small steps its start point
//! deserves).

use super::{
    normal, resolve_lipschitz, rr_guarantee, run_pass, LabelMechanism, LabelModel, LpStep, PassSetup, Prior,
    ReleasedLabel, Visit,
};
use crate::error::{check_eps, Error, Result};
use crate::feasible::FeasibleSet;
use crate::mechanism::{mix_seed, top_k, RrWithPrior};
use crate::model::Fit;
use crate::privacy::{Guarantee, NoiseRng};
use crate::solver::sgd::epoch_permutation;
use crate::solver::{same_flag, SolveReport};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Which earlier releases a stage reuses (the filtering enhancement of the supplement, Sec. B;
/// "the average k" need not be an integer, and the authors' code floors it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FilterRule {
    /// Keep an earlier release if `ỹ` is among the top-`⌊k̄_s⌋` labels of `M(s−1)` (the
    /// reference code's `int(soft_k)`).
    #[default]
    FloorMeanK,
    /// Keep it if `ỹ` is among the top-`k` labels of `M(s−1)`.
    Fixed(usize),
    /// Keep every earlier release.
    All,
}

/// Settings of [`multi_stage`]. Two settings are equal when their fields are, the interrupt
/// flags being the same flag (or both absent).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MultiStageOptions {
    /// ε of every label release.
    pub eps: f64,
    /// Stage fractions `r_1, …, r_T` (positive, summing to at most 1; the samples beyond the
    /// sum are not used).
    pub fractions: Vec<f64>,
    /// Temperature `t > 0` of the model priors (supplement Sec. E: `t ≤ 1` sharpens; the authors'
    /// reference configurations use 0.5–0.6).
    pub temperature: f64,
    /// Seed of the random partition and of the visiting orders (public coins: they do not
    /// depend on the labels).
    pub split_seed: u64,
    /// Reuse earlier stages' releases (enhancement (ii)); default `false`.
    pub reuse: bool,
    /// Which earlier releases to reuse.
    pub filter: FilterRule,
    /// Restart the step counter at every stage (default `false`: continue it).
    pub restart_steps: bool,
    /// The convex set.
    pub set: FeasibleSet,
    /// Step rule.
    pub step: LpStep,
    /// Lipschitz constant of the theory step (default: the model's bound).
    pub lipschitz: Option<f64>,
    /// Debiased gradients (default `true`).
    pub debias: bool,
    /// The caller's interrupt flag (default `None`), as
    /// [`Control::interrupt`](crate::solver::Control::interrupt) of the solvers: a relaxed load
    /// before every stage and every 256 steps within one; once set, training stops and
    /// the fit is the iterate so far,
    /// [`Termination::Interrupted`](crate::solver::Termination::Interrupted), and **no**
    /// guarantee.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl PartialEq for MultiStageOptions {
    fn eq(&self, other: &Self) -> bool {
        let MultiStageOptions {
            eps,
            fractions,
            temperature,
            split_seed,
            reuse,
            filter,
            restart_steps,
            set,
            step,
            lipschitz,
            debias,
            interrupt,
        } = self;
        *eps == other.eps
            && *fractions == other.fractions
            && *temperature == other.temperature
            && *split_seed == other.split_seed
            && *reuse == other.reuse
            && *filter == other.filter
            && *restart_steps == other.restart_steps
            && *set == other.set
            && *step == other.step
            && *lipschitz == other.lipschitz
            && *debias == other.debias
            && same_flag(interrupt, &other.interrupt)
    }
}

impl MultiStageOptions {
    /// `eps`, the stage fractions and the set, with temperature 0.5, no reuse, continued step
    /// counter, theory step, debiased gradients and split seed 0.
    pub fn new(eps: f64, fractions: Vec<f64>, set: FeasibleSet) -> Self {
        MultiStageOptions {
            eps,
            fractions,
            temperature: 0.5,
            split_seed: 0,
            reuse: false,
            filter: FilterRule::default(),
            restart_steps: false,
            set,
            step: LpStep::default(),
            lipschitz: None,
            debias: true,
            interrupt: None,
        }
    }
    fn validate(&self) -> Result<()> {
        check_eps(self.eps)?;
        if self.fractions.is_empty() {
            return Err(Error::param("stages", "need at least one stage"));
        }
        if let Some(r) = self.fractions.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
            return Err(Error::param(
                "fractions",
                format!("stage fractions must be finite and > 0, got {r}"),
            ));
        }
        let total: f64 = self.fractions.iter().sum();
        if total > 1.0 + 1e-12 {
            return Err(Error::param("fractions", format!("stage fractions sum to {total} > 1")));
        }
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Err(Error::param(
                "temperature",
                format!("must be finite and > 0, got {}", self.temperature),
            ));
        }
        if let FilterRule::Fixed(0) = self.filter {
            return Err(Error::param("filter", "the filter's k must be at least 1"));
        }
        self.step.validate()
    }
}

/// One stage of [`multi_stage`].
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct StageReport {
    /// Fresh samples of the stage (`|S(s)|`).
    pub samples: usize,
    /// Earlier releases reused in the stage.
    pub reused: usize,
    /// Earlier releases dropped by the filter.
    pub filtered_out: usize,
    /// Mean `k*` over the stage's fresh samples (`K` for a uniform prior).
    pub mean_k: f64,
    /// The filter's `k` (`None` without reuse).
    pub filter_k: Option<usize>,
    /// The stage's guarantee (`ε` on its own samples).
    pub guarantee: Guarantee,
    /// `θ_s`.
    pub theta: Vec<f64>,
    /// Steps of the stage.
    pub steps: usize,
}

/// The detail of a [`multi_stage`] fit. The fit's `theta` is `θ_T`; its `guarantee` the
/// composed guarantee (parallel over the stages, plus the initial prior's cost by basic
/// composition when it was private); its `report` is
/// [`Completed`](crate::solver::Termination::Completed) with the steps of all stages
/// ([`Interrupted`](crate::solver::Termination::Interrupted) when the caller stopped it: then
/// `stages` holds the completed stages only, `released` every release so far, and the fit no
/// guarantee).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct MultiStageDetail {
    /// Per stage.
    pub stages: Vec<StageReport>,
    /// Every release, stage by stage.
    pub released: Vec<ReleasedLabel>,
}

/// The end of each stage's share of the `n` shuffled samples (cumulative fractions, rounded),
/// after a leading 0.
fn stage_bounds(n: usize, fractions: &[f64]) -> Result<Vec<usize>> {
    let mut bounds = vec![0usize];
    let mut acc = 0.0;
    for (s, r) in fractions.iter().enumerate() {
        acc += r;
        let b = ((acc * n as f64).round() as usize).min(n);
        if b <= *bounds.last().expect("non-empty") {
            return Err(Error::param(
                "fractions",
                format!("stage {} gets no sample (n = {n}, fractions {fractions:?})", s + 1),
            ));
        }
        bounds.push(b);
    }
    Ok(bounds)
}

/// The earlier releases whose label is in the top `kf` of the current model (to reuse), and how
/// many were filtered out.
fn reusable<'r, M: LabelModel>(
    model: &M,
    theta: &[f64],
    released: &'r [ReleasedLabel],
    kf: usize,
) -> Result<(Vec<&'r ReleasedLabel>, usize)> {
    let kk = model.num_labels();
    let idx: Vec<usize> = released.iter().map(|r| r.sample).collect();
    let model_rows = super::model_prior(model, theta, 1.0, &idx)?;
    let mut reuse = Vec::new();
    let mut filtered_out = 0;
    for (rel, row) in released.iter().zip(model_rows.chunks_exact(kk)) {
        if top_k(row, kf).contains(&rel.label) {
            reuse.push(rel);
        } else {
            filtered_out += 1;
        }
    }
    Ok((reuse, filtered_out))
}

/// The checks of [`multi_stage`] beyond [`MultiStageOptions::validate`]: a bounded set for the
/// theory step, and an initial prior of `n × K` rows.
fn check_inputs<M: LabelModel>(model: &M, opts: &MultiStageOptions, initial_prior: Option<&Prior>) -> Result<()> {
    let (n, kk) = (model.n(), model.num_labels());
    if matches!(opts.step, LpStep::Theory(_)) && opts.set.radius().is_none() {
        return Err(Error::param(
            "step",
            format!(
                "the theory step needs a bounded set (D = 2B); the set is `{}`",
                opts.set.name()
            ),
        ));
    }
    if let Some(pr) = initial_prior {
        if pr.k != kk || pr.n() != n {
            return Err(Error::Shape(format!(
                "the prior is {} × {}, expected n × K = {n} × {kk}",
                pr.n(),
                pr.k
            )));
        }
    }
    Ok(())
}

/// Writes stage `s`'s priors of its `members` into `priors` (`n × K`): the initial prior at
/// stage 1 (if any), the model prior `softmax(−ℓ(Φ_i θ_{s−1}; ·)/t)` afterwards. Whether the
/// stage has a prior (stage 1 without an initial prior is K-RR).
fn stage_priors<M: LabelModel>(
    model: &M,
    theta: &[f64],
    temperature: f64,
    initial_prior: Option<&Prior>,
    s: usize,
    members: &[usize],
    priors: &mut [f64],
) -> Result<bool> {
    let kk = model.num_labels();
    if s == 0 {
        if let Some(pr) = initial_prior {
            for &i in members {
                priors[i * kk..(i + 1) * kk].copy_from_slice(pr.row(i));
            }
            Ok(true)
        } else {
            Ok(false)
        }
    } else {
        let rows = super::model_prior(model, theta, temperature, members)?;
        for (&i, row) in members.iter().zip(rows.chunks_exact(kk)) {
            priors[i * kk..(i + 1) * kk].copy_from_slice(row);
        }
        Ok(true)
    }
}

/// The mean RR-with-prior `k*` over the stage's `members` (`K` without a prior).
fn stage_mean_k(wp: &RrWithPrior, priors: Option<&[f64]>, members: &[usize], kk: usize) -> Result<f64> {
    let Some(priors) = priors else {
        return Ok(kk as f64);
    };
    let mut sum = 0usize;
    for &i in members {
        sum += wp.choose_k(&priors[i * kk..(i + 1) * kk])?;
    }
    Ok(sum as f64 / members.len() as f64)
}

/// The earlier releases stage `s` reuses, how many the filter dropped, and the filter's `k`
/// (none before the second stage or without reuse).
fn stage_reuse<'r, M: LabelModel>(
    model: &M,
    theta: &[f64],
    opts: &MultiStageOptions,
    s: usize,
    mean_k: f64,
    released: &'r [ReleasedLabel],
) -> Result<(Vec<&'r ReleasedLabel>, usize, Option<usize>)> {
    if !(opts.reuse && s > 0) {
        return Ok((Vec::new(), 0, None));
    }
    let kk = model.num_labels();
    let kf = match opts.filter {
        FilterRule::FloorMeanK => (mean_k.floor() as usize).clamp(1, kk),
        FilterRule::Fixed(k) => k.min(kk),
        FilterRule::All => kk,
    };
    let (reuse, filtered_out) = reusable(model, theta, released, kf)?;
    Ok((reuse, filtered_out, Some(kf)))
}

/// The composed guarantee: parallel over the stages, then the initial prior's cost by basic
/// composition when it was private.
fn composed_guarantee(stages: &[StageReport], initial_prior: Option<&Prior>) -> Result<Guarantee> {
    let parts: Vec<Guarantee> = stages.iter().map(|s| s.guarantee.clone()).collect();
    let mut guarantee = Guarantee::parallel(&parts)?;
    if let Some(pg) = initial_prior.and_then(|pr| pr.guarantee.as_ref()) {
        guarantee = pg.compose(&guarantee)?;
    }
    Ok(guarantee)
}

/// LP-MST with label-private SGD (module docs). `initial_prior` (`n × K`) is stage 1's prior
/// (e.g. [`super::histogram_prior`]); without it stage 1 is K-RR.
///
/// When [`MultiStageOptions::interrupt`] is set (checked before every stage and every few
/// thousand steps within one), training stops there: the fit is the iterate so far, the reports
/// of the completed stages and every label released so far, its report
/// [`Termination::Interrupted`](crate::solver::Termination::Interrupted), and no guarantee
/// ([`Fit::no_guarantee`] says so).
///
/// # Errors
/// [`Error::InvalidParam`] for invalid options, a stage with no sample, or the errors of
/// [`super::lp_sgd`]; [`Error::Shape`] for a prior of the wrong size.
pub fn multi_stage<M: LabelModel>(
    model: &M,
    opts: &MultiStageOptions,
    initial_prior: Option<&Prior>,
    rng: &mut NoiseRng,
) -> Result<Fit<MultiStageDetail>> {
    let started = Instant::now();
    opts.validate()?;
    let (n, kk, p) = (model.n(), model.num_labels(), model.dim());
    check_inputs(model, opts, initial_prior)?;
    let lipschitz = resolve_lipschitz(model, opts.lipschitz, opts.step)?;
    let perm = epoch_permutation(n, opts.split_seed, 0);
    let bounds = stage_bounds(n, &opts.fractions)?;
    let wp = RrWithPrior::new(opts.eps)?;
    let mut theta = vec![0.0; p];
    opts.set.project(&mut theta);
    let mut priors = vec![1.0 / kk as f64; n * kk];
    let mut released: Vec<ReleasedLabel> = Vec::new();
    let mut stages = Vec::with_capacity(opts.fractions.len());
    let mut t0 = 0usize;
    // Steps of an interrupted stage (`None`: not interrupted).
    let mut interrupted: Option<usize> = None;
    let flag = opts.interrupt.as_deref();
    for s in 0..opts.fractions.len() {
        if flag.is_some_and(|f| f.load(Ordering::Relaxed)) {
            interrupted = Some(0);
            break;
        }
        let members = &perm[bounds[s]..bounds[s + 1]];
        let have_prior = stage_priors(model, &theta, opts.temperature, initial_prior, s, members, &mut priors)?;
        let mechanism = if have_prior {
            LabelMechanism::RrWithPrior
        } else {
            LabelMechanism::Krr
        };
        let mean_k = stage_mean_k(&wp, have_prior.then_some(&priors[..]), members, kk)?;
        // Earlier releases to reuse (filtered by the top-k of the previous model).
        let (reuse, filtered_out, filter_k) = stage_reuse(model, &theta, opts, s, mean_k, &released)?;
        let mut visits: Vec<Visit<'_>> = members.iter().map(|&i| Visit::Fresh(i)).collect();
        visits.extend(reuse.iter().map(|&r| Visit::Reuse(r)));
        let order = epoch_permutation(visits.len(), mix_seed(opts.split_seed, 1 + s as u64), 0);
        let visits: Vec<Visit<'_>> = order.iter().map(|&j| visits[j]).collect();
        let ps = PassSetup {
            eps: opts.eps,
            mechanism,
            set: opts.set,
            step: opts.step,
            lipschitz,
            debias: opts.debias,
            rank_tol: normal::DEFAULT_RANK_TOL,
            priors: have_prior.then_some(&priors[..]),
            normal: None,
            interrupt: flag,
        };
        let start = if opts.restart_steps { 0 } else { t0 };
        let out = run_pass(model, &ps, &visits, &mut theta, start, rng)?;
        if out.interrupted {
            // The stage is incomplete: its releases so far are kept, but it gets no report
            // (whose guarantee would describe the whole stage).
            released.extend(out.released);
            interrupted = Some(out.steps);
            break;
        }
        t0 = start + out.steps;
        let reused = reuse.len();
        drop(visits);
        let guarantee = rr_guarantee(opts.eps, mechanism, opts.debias, rng);
        released.extend(out.released);
        stages.push(StageReport {
            samples: members.len(),
            reused,
            filtered_out,
            mean_k,
            filter_k,
            guarantee,
            theta: theta.clone(),
            steps: out.steps,
        });
    }
    let done: usize = stages.iter().map(|s| s.steps).sum();
    if let Some(partial) = interrupted {
        let steps = done + partial;
        let report = SolveReport::completed("lp-mst", theta.clone(), steps, started.elapsed());
        let mut fit = Fit::new(theta, report, MultiStageDetail { stages, released });
        fit.interrupted(steps, None);
        return Ok(fit);
    }
    let guarantee = composed_guarantee(&stages, initial_prior)?;
    let report = SolveReport::completed("lp-mst", theta.clone(), done, started.elapsed());
    let mut fit = Fit::new(theta, report, MultiStageDetail { stages, released });
    fit.guarantee = Some(guarantee);
    Ok(fit)
}

//! One pass of label-private SGD on the crate's SGD engine ([`crate::solver::sgd::engine`]): the
//! step hook privatises the label of the visited sample (or reuses a cached release) and hands
//! the engine the debiased gradient; the engine takes the step `θ_{t+1} = Π_W(θ_t − η_t ĝ_t)`
//! with the schedule of [`LpStep`] (Ghazi et al. (2021), Alg. 5 and 6; module docs of
//! [`super`]).

use super::normal::NormalStep;
use super::{LabelMechanism, LabelModel, LpStep, ReleasedLabel};
use crate::error::{Error, Result};
use crate::feasible::FeasibleSet;
use crate::mechanism::{KaryRr, RrTopK, RrWithPrior, TopDraw};
use crate::privacy::NoiseRng;
use crate::solver::sgd::engine::{self, Driven, Flow, IterateMean, Iterates, StepHook};
use std::sync::atomic::AtomicBool;

/// A step of a pass: a fresh sample (its label is read and privatised now) or a cached release
/// (reused by multi-stage training; no new privacy cost).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Visit<'r> {
    Fresh(usize),
    Reuse(&'r ReleasedLabel),
}

impl Visit<'_> {
    fn sample(&self) -> usize {
        match *self {
            Visit::Fresh(i) | Visit::Reuse(&ReleasedLabel { sample: i, .. }) => i,
        }
    }
}

/// Everything a pass needs besides the visits.
pub(crate) struct PassSetup<'a> {
    pub eps: f64,
    pub mechanism: LabelMechanism,
    pub set: FeasibleSet,
    pub step: LpStep,
    pub lipschitz: f64,
    pub debias: bool,
    pub rank_tol: f64,
    /// Prior rows indexed by sample (`n × K`), for the prior-based mechanisms.
    pub priors: Option<&'a [f64]>,
    /// σ and Δ for LP-Normal-SGD.
    pub normal: Option<(f64, f64)>,
    /// The caller's interrupt flag, checked every [`engine::STOP_CHECK`] steps.
    pub interrupt: Option<&'a AtomicBool>,
}

/// What a pass produced.
pub(crate) struct PassOut {
    pub released: Vec<ReleasedLabel>,
    pub sum_k: f64,
    /// Steps taken (all the visits unless interrupted).
    pub steps: usize,
    pub normal: Option<NormalStats>,
    /// Whether the caller's flag stopped the pass before its last visit.
    pub interrupted: bool,
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NormalStats {
    pub max_sens: f64,
    pub rank_min: usize,
    pub rank_max: usize,
    pub rank_sum: usize,
}

/// `(f_k, q_k)`: the debiasing factor `(E+k−1)/(E−1)` and `1/(E+k−1)` without overflow.
pub fn debias_factors(eps: f64, k: usize) -> (f64, f64) {
    let em = (-eps).exp();
    let den = 1.0 + (k as f64 - 1.0) * em;
    (den / -(-eps).exp_m1(), em / den)
}

/// `ĝ = f_k (g_ỹ − q_k Σ_{j∈S} g_j)` in score space (eq. (7) and Cor. 10; `S` = all labels when
/// `set` is `None`), or `g_ỹ` when `k = 1` or `debias` is false. `grads` is `K × m`.
pub fn debiased_score_gradient(
    grads: &[f64],
    m: usize,
    label: u8,
    set: Option<&[u8]>,
    eps: f64,
    debias: bool,
    out: &mut [f64],
) {
    let kk = grads.len() / m;
    let y = usize::from(label);
    out.copy_from_slice(&grads[y * m..(y + 1) * m]);
    let k = set.map_or(kk, <[u8]>::len);
    if !debias || k == 1 {
        return;
    }
    let (f, q) = debias_factors(eps, k);
    let mut add = |j: usize| {
        for (o, g) in out.iter_mut().zip(&grads[j * m..(j + 1) * m]) {
            *o -= q * g;
        }
    };
    match set {
        Some(s) => s.iter().for_each(|&j| add(usize::from(j))),
        None => (0..kk).for_each(add),
    }
    out.iter_mut().for_each(|o| *o *= f);
}

/// `G` of the theory step for a release over `k` labels (module docs of [`super`]).
fn theory_g(eps: f64, k: usize, lipschitz: f64, debias: bool) -> f64 {
    if !debias || k == 1 {
        return lipschitz;
    }
    let f = debias_factors(eps, k).0;
    lipschitz * (8.0 * f * f + 2.0).sqrt()
}

/// The label mechanisms of a pass.
struct Mechanisms {
    krr: KaryRr,
    wp: RrWithPrior,
    topk: Option<RrTopK>,
}

/// The gradient of the current step, in the form the hook adds it to `θ`.
enum Current {
    /// `Φ_iᵀ ĝ` with the debiased score gradient `ĝ` (in `LabelStep::gvec`); `fresh` when the
    /// release is new (kept in `LabelStep::pending`).
    Release { i: usize, fresh: bool },
    /// LP-Normal-SGD's noisy direction (in the [`NormalStep`]).
    Normal,
}

/// The step hook of label-private SGD.
struct LabelStep<'p, 'v, 'r, M> {
    model: &'p M,
    ps: &'p PassSetup<'p>,
    visits: &'v [Visit<'r>],
    rng: &'p mut NoiseRng,
    mech: Mechanisms,
    next: usize,
    /// Scores, losses and candidate score gradients (`K × m`) of the visited sample.
    u: Vec<f64>,
    vals: Vec<f64>,
    grads: Vec<f64>,
    gvec: Vec<f64>,
    scratch: Vec<f64>,
    normal: NormalStep,
    current: Current,
    pending: Option<ReleasedLabel>,
    released: Vec<ReleasedLabel>,
    sum_k: f64,
}

/// Row `i` of the `n × K` priors.
fn prior_row(priors: Option<&[f64]>, kk: usize, i: usize) -> Result<&[f64]> {
    priors
        .map(|r| &r[i * kk..(i + 1) * kk])
        .ok_or_else(|| Error::param("prior", "this mechanism needs a per-sample prior"))
}

impl<M: LabelModel> LabelStep<'_, '_, '_, M> {
    /// Reads the clear label of sample `i` and randomises it (once).
    fn release(&mut self, i: usize) -> Result<ReleasedLabel> {
        let y = self.model.label(i);
        let prior = || prior_row(self.ps.priors, self.model.num_labels(), i);
        let (label, set) = match self.ps.mechanism {
            LabelMechanism::Krr => (self.mech.krr.sample(y, self.rng)?, None),
            LabelMechanism::RrTopK { .. } => {
                let top = self.mech.topk.as_ref().expect("built for RrTopK");
                let TopDraw { label, set } = top.sample(y, prior()?, self.rng)?;
                (label, Some(set))
            }
            LabelMechanism::RrWithPrior => {
                let TopDraw { label, set } = self.mech.wp.sample(y, prior()?, self.rng)?;
                (label, Some(set))
            }
            LabelMechanism::Normal { .. } => unreachable!("LP-Normal-SGD releases no label"),
        };
        Ok(ReleasedLabel { sample: i, label, set })
    }
}

impl<M: LabelModel> StepHook<FeasibleSet> for LabelStep<'_, '_, '_, M> {
    fn gradient(&mut self, _t: usize, theta: &[f64]) -> Result<Flow> {
        let visit = self.visits[self.next];
        self.next += 1;
        let i = visit.sample();
        let (model, kk, m) = (self.model, self.model.num_labels(), self.model.num_scores());
        model.scores(i, theta, &mut self.u);
        model.eval_all(&self.u, &mut self.vals, Some(&mut self.grads), &mut self.scratch);
        if let (Some((sigma, delta)), Visit::Fresh(_)) = (self.ps.normal, visit) {
            self.normal
                .direction(model, i, &self.grads, self.ps.rank_tol, (sigma, delta), self.rng)?;
            self.current = Current::Normal;
            return Ok(Flow::Continue);
        }
        let fresh = matches!(visit, Visit::Fresh(_));
        let rel: &ReleasedLabel = match visit {
            Visit::Reuse(rel) => rel,
            Visit::Fresh(_) => {
                let draw = self.release(i)?;
                self.pending.insert(draw)
            }
        };
        let (eps, debias) = (self.ps.eps, self.ps.debias);
        debiased_score_gradient(
            &self.grads,
            m,
            rel.label,
            rel.set.as_deref(),
            eps,
            debias,
            &mut self.gvec,
        );
        let k = rel.k(kk);
        self.sum_k += k as f64;
        self.current = Current::Release { i, fresh };
        Ok(Flow::Continue)
    }

    fn add_to(&self, alpha: f64, theta: &mut [f64]) {
        match self.current {
            Current::Release { i, .. } => self.model.lift_add(i, &self.gvec, alpha, theta),
            Current::Normal => self.normal.add_to(alpha, theta),
        }
    }

    fn after_step(&mut self, t: usize, theta: &[f64]) -> Result<()> {
        if let Current::Release { i, fresh } = self.current {
            if theta.iter().any(|v| !v.is_finite()) {
                return Err(Error::Numerical(format!(
                    "the iterate became non-finite at step {t} (sample {i}); lower the step"
                )));
            }
            if fresh {
                self.released.extend(self.pending.take());
            }
        }
        Ok(())
    }
}

/// The step bound `G` of the pass (module docs of [`super`]): LP-Normal-SGD's
/// `√(L² + Kσ²)`; for the label releases the root mean square of the per-release bounds (the
/// proof of Thm 9 bounds `E‖ĝ_t‖²` with the expectation over the sample too; the label sets
/// depend on the priors only, so this is label-free): equal steps for every sample. `NaN` when
/// the step rule does not use it.
fn step_bound<M: LabelModel>(model: &M, ps: &PassSetup<'_>, visits: &[Visit<'_>], wp: &RrWithPrior) -> Result<f64> {
    let kk = model.num_labels();
    if let Some((sigma, _)) = ps.normal {
        return Ok((ps.lipschitz * ps.lipschitz + kk as f64 * sigma * sigma).sqrt());
    }
    if !matches!(ps.step, LpStep::Theory(_)) {
        return Ok(f64::NAN);
    }
    let mut sq = 0.0;
    for v in visits {
        let k = match *v {
            Visit::Reuse(rel) => rel.k(kk),
            Visit::Fresh(i) => match ps.mechanism {
                LabelMechanism::RrTopK { k } => k,
                LabelMechanism::RrWithPrior => wp.choose_k(prior_row(ps.priors, kk, i)?)?,
                _ => kk,
            },
        };
        sq += theory_g(ps.eps, k, 1.0, ps.debias).powi(2);
    }
    Ok(ps.lipschitz * (sq / visits.len().max(1) as f64).sqrt())
}

/// Runs the steps `visits` from `theta` (in place, already in the feasible set), with step
/// counter `t0 + 1, t0 + 2, …`, on the SGD engine; stops early (between two steps, with
/// [`PassOut::interrupted`]) when the caller's flag is set.
pub(crate) fn run_pass<M: LabelModel>(
    model: &M,
    ps: &PassSetup<'_>,
    visits: &[Visit<'_>],
    theta: &mut [f64],
    t0: usize,
    rng: &mut NoiseRng,
) -> Result<PassOut> {
    let (kk, m, p) = (model.num_labels(), model.num_scores(), model.dim());
    let krr = KaryRr::new(ps.eps, kk)?;
    let wp = RrWithPrior::new(ps.eps)?;
    let topk = match ps.mechanism {
        LabelMechanism::RrTopK { k } => {
            if k > kk {
                return Err(Error::param("top-k", format!("k = {k} exceeds the K = {kk} labels")));
            }
            Some(RrTopK::new(ps.eps, k)?)
        }
        _ => None,
    };
    let sched = ps.step.schedule(&ps.set, step_bound(model, ps, visits, &wp)?);
    let mut hook = LabelStep {
        model,
        ps,
        visits,
        rng,
        mech: Mechanisms { krr, wp, topk },
        next: 0,
        u: vec![0.0; m],
        vals: vec![0.0; kk],
        grads: vec![0.0; kk * m],
        gvec: vec![0.0; m],
        scratch: vec![0.0; model.scratch_len()],
        normal: NormalStep::new(kk, p, ps.normal.is_some()),
        current: Current::Normal,
        pending: None,
        released: Vec::with_capacity(visits.len()),
        sum_k: 0.0,
    };
    let mut it = Iterates::resume(theta.to_vec(), IterateMean::Last, t0);
    let driven = engine::drive_interruptible(&mut hook, &ps.set, &sched, &mut it, visits.len(), ps.interrupt)?;
    theta.copy_from_slice(&it.theta);
    Ok(PassOut {
        released: hook.released,
        sum_k: hook.sum_k,
        steps: it.t - t0,
        normal: ps.normal.map(|_| hook.normal.stats()),
        interrupted: driven == Driven::Interrupted,
    })
}

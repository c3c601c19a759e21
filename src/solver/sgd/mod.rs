//! Projected stochastic gradient descent on `F(θ) = (1/W)Σ w_i ℓ(x_iᵀθ; y_i) + (β/2W)‖θ‖² +
//! (1/W)⟨b, θ⟩` over a [`FeasibleSet`].
//!
//! * **One-pass SGD-RR** — Algorithm 1 of Chowdhury, Zhou & Natarajan (2024): with `batch = 1,
//!   epochs = 1, shuffle = false`, [`solve`] visits each row once in data order, `θ_{t+1} = Π(θ_t −
//!   η_t g_t)` with `g_t = (n w_t/W) ℓ'(x_tᵀθ_t; y_t) x_t + (βθ_t + b)/W`, from `θ₁ = Π(θ0)`
//!   (default 0), and returns `θ_{n+1}` (or the Polyak–Ruppert average). With the debiased RR loss
//!   on RR labels and no ridge this is exactly the paper's `ĝ_t = (∇log p₀ + ∇log p₁)/(e^ε+1) −
//!   ∇log p_ỹ` ([`one_pass()`]).
//! * **Many replications at once** — [`replicated::run`] advances `R` independent one-pass
//!   runs together, vectorised over replications, bit-identical per replication to [`solve`].
//! * **Mini-batch SGD** — `batch > 1`: batch gradients by the fused SIMD kernel, several epochs,
//!   seeded per-epoch shuffling, Polyak–Ruppert averaging (`minibatch`).
//! * **Step rules** — [`StepRule`]: constant (the paper's simulations, `η = 0.1`), `c/t`, and the
//!   theory rule `1/(λt)`, `λ = γκ tanh(ε/2)` of the proof of Thm 4.5 (`step`).
//! * **One step driver** — the single-sample, mini-batch and K-wise steps above, and the private
//!   SGD estimators (label-private SGD of Ghazi et al. (2021); user-wise DP-SGD and AUP-RLHF of
//!   Zhang et al. (2025)) all run on one crate-internal loop (module `engine`): a per-step hook
//!   computes the stochastic gradient `g_t` — reading a row, privatising a label, clipping
//!   per-user gradients and adding noise — and the engine owns the step counter, `η_t` from a
//!   [`Schedule`], the update `θ_{t+1} = Π(θ_t − η_t g_t)` onto the feasible set and the
//!   averages. Hooks are generic parameters: every loop is monomorphised.
//!
//! **Report.** SGD is a fixed-budget algorithm: after each epoch it evaluates `F` and the
//! relative KKT residual ([`crate::solver::certificate`]) of the returned point with one full
//! pass, and stops as [`Termination::Converged`] when the residual, with the term magnitudes
//! recomputed at that point (one more pass), is at most the tolerance. Otherwise it ends as
//! [`Termination::Completed`]: the algorithm's output, not a certified minimiser; the report's
//! `kkt_residual` says how far it is. `iterations` counts SGD steps; `Control::max_iter` is not
//! used (the budget is
//! `epochs`). Objective perturbation solved by SGD is **not** covered by the privacy proof of
//! Thm 5.2, which needs the exact minimiser (the paper's own simulation uses SGD there).
//!
//! **Determinism.** The steps run on the calling thread; only the evaluation passes use
//! [`Control::par`], and they are thread-count independent. Same inputs and seed → same bits.

pub(crate) mod engine;
mod group;
mod lanes;
mod minibatch;
mod objective;
pub(crate) mod one_pass;
pub mod replicated;
pub(crate) mod step;

pub(crate) use minibatch::epoch_permutation;
pub use objective::SgdObjective;
pub use one_pass::one_pass;
pub use replicated::{
    replication_of, Checkpoint, ReplicaBlock, ReplicaOptions, ReplicaOutput, ReplicaProblem, ReplicaSteps,
};
pub use step::{coverage_kappa, group_theory_constants, theory_constants, Schedule, StepRule, TheoryConstants};

use super::certificate::{Certifier, Kkt};
use super::{Control, Progress, SolveReport, Termination};
use crate::error::{Error, Result};
use crate::feasible::FeasibleSet;
use crate::loss::Loss;
use crate::objective::{Eval, Objective};
use engine::Iterates;
use one_pass::{iterate_mean, Setup};
use std::ops::Range;
use std::time::Instant;

/// The pairwise SGD steps: single-sample ([`one_pass`](mod@one_pass)) for `batch = 1`, mini-batch otherwise.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pairwise_steps<L: Loss>(
    obj: &Objective<'_, L>,
    setup: &Setup,
    order: Option<&[usize]>,
    batch: usize,
    steps: Range<usize>,
    st: &mut Iterates,
    scratch: &mut minibatch::Scratch,
) -> Result<()> {
    if batch == 1 {
        one_pass::run(obj, setup, order, steps, st)?;
    } else {
        minibatch::run(obj, setup, order, batch, steps, st, scratch)?;
    }
    Ok(())
}

/// How the returned point is formed from the iterates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Averaging {
    /// The last iterate `θ_{T+1}` (Algorithm 1 of Chowdhury, Zhou & Natarajan (2024)).
    #[default]
    Last,
    /// Polyak–Ruppert: the uniform average of all iterates `θ_2 … θ_{T+1}` over all epochs.
    Polyak,
}

impl Averaging {
    /// The CLI name (`last`, `polyak`).
    pub fn name(&self) -> &'static str {
        match self {
            Averaging::Last => "last",
            Averaging::Polyak => "polyak",
        }
    }
}

/// Settings of the SGD solver.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SgdOptions {
    /// Step rule (default [`StepRule::Theory`]).
    pub step: StepRule,
    /// Rows per step (default 1). `1` runs the single-sample steps of Algorithm 1; larger
    /// batches use the fused gradient kernel.
    pub batch: usize,
    /// Passes over the data (default 1).
    pub epochs: usize,
    /// Visit rows in a fresh seeded random order each epoch (default false: data order, as in
    /// Algorithm 1). Epoch `e` uses `epoch_permutation(n, seed, e)`.
    pub shuffle: bool,
    /// Seed of the shuffling generator (xoshiro256++).
    pub seed: u64,
    /// Averaging of the iterates.
    pub average: Averaging,
}

impl Default for SgdOptions {
    fn default() -> Self {
        SgdOptions {
            step: StepRule::Theory,
            batch: 1,
            epochs: 1,
            shuffle: false,
            seed: 0,
            average: Averaging::Last,
        }
    }
}

impl SgdOptions {
    /// Algorithm 1 of Chowdhury, Zhou & Natarajan (2024) with step rule `step`: one pass, batch 1,
    /// data order, last iterate.
    pub fn one_pass(step: StepRule) -> Self {
        SgdOptions {
            step,
            ..SgdOptions::default()
        }
    }
    /// Checks the settings (`batch ≥ 1`, `epochs ≥ 1`, step constants finite and `> 0`).
    pub fn validate(&self) -> Result<()> {
        if self.batch == 0 {
            return Err(Error::param("batch", "must be at least 1"));
        }
        if self.epochs == 0 {
            return Err(Error::param("epochs", "must be at least 1"));
        }
        self.step.validate()
    }
}

/// Refuses a data-dependent step rule ([`StepRule::Theory`], [`StepRule::Statement`]) whose
/// last step `η_T` is more than [`UNSTABLE`] times the stability limit `2/L̄` of SGD on this data
/// (`L̄` = [`SgdObjective::sgd_curvature`]): every step of the run is then far longer than the
/// curvature allows, and the output is noise. On BTL data at n = 2·10⁵, d = 50, ε = 1 the theory
/// rule's `λ = γκ tanh(ε/2)` is about 2.5·10⁻¹³ — `γ = σ'(B·max‖Px‖)` is the worst case over the
/// ball — so `η_t ≈ 4·10¹²/t` and `η_T L̄/2 ≈ 10⁸`, and the error was 30 times the exact
/// estimator's. The rules a caller sets by hand (`const`, `invt`, `lambda`) are not checked.
fn check_stability(rule: &StepRule, sched: &Schedule, steps: usize, curvature: Option<f64>) -> Result<()> {
    let Some(lbar) = curvature.filter(|l| l.is_finite() && *l > 0.0) else {
        return Ok(());
    };
    let last = sched.eta(steps.max(1));
    if last * lbar > 2.0 * UNSTABLE {
        return Err(Error::param(
            "step",
            format!(
                "the `{rule}` rule's last step η = {last:.3e} is {:.1e} times the stability limit 2/L̄ = {:.3e} of SGD on this data (L̄ = sup|ℓ''|·mean‖x‖² = {lbar:.3e}): its iterates would be noise; use a rule with a chosen constant (const, invt or lambda, with Polyak averaging) or an exact solver",
                last * lbar / 2.0,
                2.0 / lbar
            ),
        ));
    }
    Ok(())
}

/// How many times SGD's stability limit `2/L̄` the last step of a data-dependent rule
/// ([`StepRule::Theory`], [`StepRule::Statement`]) may be before [`solve`] refuses the rule
/// (`L̄` = [`SgdObjective::sgd_curvature`]).
pub(crate) const UNSTABLE: f64 = 1e3;

/// Steps between checks of the caller's interrupt flag and deadline.
const STOP_CHECK: usize = 4096;

/// The shape of a run: rows per step, steps per epoch and steps in all (the observer's budget).
#[derive(Debug, Clone, Copy)]
struct StepPlan {
    batch: usize,
    per_epoch: usize,
    budget: usize,
}

/// The step counts of `opts` on `n` rows, and the stability check of a data-dependent rule
/// against the whole budget ([`check_stability`]).
fn plan_steps<O: SgdObjective>(obj: &O, opts: &SgdOptions, sched: &Schedule, n: usize) -> Result<StepPlan> {
    let per_epoch = if opts.batch == 1 { n } else { n.div_ceil(opts.batch) };
    let budget = per_epoch.checked_mul(opts.epochs).ok_or_else(|| {
        Error::param(
            "epochs",
            format!("{} epochs of {per_epoch} steps overflow", opts.epochs),
        )
    })?;
    if opts.step.needs_data() {
        check_stability(&opts.step, sched, budget, obj.sgd_curvature())?;
    }
    Ok(StepPlan {
        batch: opts.batch,
        per_epoch,
        budget,
    })
}

/// The steps of one epoch in runs of at most [`STOP_CHECK`] steps, cut at the observer's
/// reporting steps, with a progress report (no objective) between runs. `Some` when the caller
/// stopped the run (checked between runs).
fn epoch_steps<O: SgdObjective>(
    obj: &O,
    setup: &Setup,
    order: Option<&[usize]>,
    plan: StepPlan,
    st: &mut Iterates,
    scratch: &mut minibatch::Scratch,
    ctl: &Control,
) -> Result<Option<Termination>> {
    let mut k = 0;
    while k < plan.per_epoch {
        if k > 0 {
            if let Some(s) = ctl.stop_requested() {
                return Ok(Some(s));
            }
        }
        let mut end = (k + STOP_CHECK).min(plan.per_epoch);
        if ctl.observer.is_some() {
            let every = ctl.observe_every;
            let next = (st.t / every + 1) * every; // next global step to report
            end = end.min(k + (next - st.t));
        }
        obj.sgd_steps(setup, order, plan.batch, k..end, st, scratch)?;
        k = end;
        if k < plan.per_epoch && ctl.wants_progress(st.t) {
            ctl.notify_progress(&Progress {
                solver: "sgd",
                iteration: st.t,
                budget: plan.budget,
                objective: f64::NAN,
                kkt_residual: f64::NAN,
                data_passes: None,
                theta: &st.output(),
            });
        }
    }
    Ok(None)
}

/// `F` and its gradient at the starting point `theta` (one counted pass).
///
/// # Errors
/// [`Error::Numerical`] when either is not finite.
fn evaluate_start<O: SgdObjective>(obj: &O, theta: &[f64], rep: &mut SolveReport) -> Result<Eval> {
    let mut ev = obj.new_eval();
    obj.evaluate(theta, &mut ev);
    rep.counts.grad_evals += 1;
    if !super::all_finite(&ev) {
        return Err(Error::Numerical(
            "the objective or its gradient is not finite at the starting point".into(),
        ));
    }
    Ok(ev)
}

/// Minimises `obj` over `set` by projected SGD from `θ₁ = Π(theta0)` (default 0). See the
/// module docs for the algorithm and the report; `last_step_norm` is `NaN`.
///
/// # Errors
/// [`Error::InvalidParam`] for invalid options (`batch`, `epochs`, `step`) or a non-finite
/// `theta0`; [`Error::Shape`] for a `theta0` of the wrong length; the errors of
/// [`theory_constants`] for the `theory` and `statement` rules; [`Error::Numerical`] when `F` or
/// its gradient is not finite at `θ = 0`.
pub fn solve<O: SgdObjective>(
    obj: &O,
    set: &FeasibleSet,
    theta0: Option<&[f64]>,
    opts: &SgdOptions,
    ctl: &Control,
) -> Result<SolveReport> {
    ctl.validate()?;
    opts.validate()?;
    let start = Instant::now();
    let d = obj.dim();
    let n = obj.num_samples();
    super::check_theta0(theta0, d)?;
    let sched = obj.sgd_schedule(&opts.step, set)?;
    let plan = plan_steps(obj, opts, &sched, n)?;

    let mut rep = SolveReport::blank("sgd", vec![0.0; d], Termination::Completed);
    let setup = Setup::new(obj, set, sched);
    let st0 = Iterates::start(d, theta0, &setup.proj, iterate_mean(opts.average, d));
    // The starting point's evaluation gives the certificate its first term magnitudes.
    let mut ev = evaluate_start(obj, &st0.output(), &mut rep)?;
    let sz = set.sum_zero();
    let mut cert = Certifier::new(obj, &ev, ctl, &mut rep);

    let mut st = st0;
    let mut scratch = minibatch::Scratch::default();
    ctl.notify_start("sgd", n, d, plan.budget);

    let mut termination = Termination::Completed;
    let mut certified: Option<Kkt> = None;
    let mut evaluated = false; // whether `ev` belongs to the current output point
    for epoch in 0..opts.epochs {
        let order = opts.shuffle.then(|| epoch_permutation(n, opts.seed, epoch as u64));
        evaluated = false;
        if let Some(s) = epoch_steps(obj, &setup, order.as_deref(), plan, &mut st, &mut scratch, ctl)? {
            termination = s;
            break;
        }
        // End of epoch: F and the KKT residual of the returned point, one full pass.
        obj.evaluate(&st.output(), &mut ev);
        rep.counts.grad_evals += 1;
        evaluated = true;
        if !super::all_finite(&ev) || st.output().iter().any(|v| !v.is_finite()) {
            termination = Termination::NonFinite;
            break;
        }
        let est = cert.estimate(set, &st.output(), &ev.grad);
        if ctl.wants_progress(st.t) {
            ctl.notify_progress(&Progress {
                solver: "sgd",
                iteration: st.t,
                budget: plan.budget,
                objective: ev.value,
                kkt_residual: est.relative,
                data_passes: None,
                theta: &st.output(),
            });
        }
        if cert.meets(&est) {
            let k = cert.certify(obj, set, &ev, &ev.grad, &mut rep);
            let ok = cert.meets(&k);
            certified = Some(k);
            if ok {
                termination = Termination::Converged;
                break;
            }
        } else {
            certified = None;
        }
    }
    if !evaluated {
        // Stopped inside an epoch: evaluate the point returned.
        obj.evaluate(&st.output(), &mut ev);
        rep.counts.grad_evals += 1;
        certified = None;
    }

    let iterations = st.t;
    let theta = st.into_output();
    rep.termination = termination;
    rep.certificate.objective = ev.value;
    rep.counts.iterations = iterations;
    // The residual of the returned point with the term magnitudes recomputed there.
    let k = match certified {
        Some(k) => k,
        None if super::all_finite(&ev) => cert.certify(obj, set, &ev, &ev.grad, &mut rep),
        None => cert.estimate(set, &theta, &ev.grad),
    };
    Certifier::record(&k, &mut rep);
    rep.certificate.certified_global =
        termination.is_converged() && (O::CONVEX || set.radius().is_some_and(|b| obj.convex_on_ball(b, sz)));
    rep.theta = theta;
    rep.counts.elapsed = start.elapsed();
    ctl.notify_end(&rep);
    Ok(rep)
}

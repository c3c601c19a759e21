//! Estimators of seed 000 (Chowdhury, Zhou & Natarajan, AISTATS 2024) on pairwise data, as one
//! entry point: a loss, a feasible set, optional ridge / linear term, and a solver.
//!
//! * non-private MLE (eq. 8): `loss = Mle` on clear labels;
//! * MLE-RR (eq. 3): `loss = MleRr { eps }` on labels privatised by
//!   [`RandomizedResponse`](crate::mechanism::RandomizedResponse) at the same `eps`;
//! * debiased RR (eqs. 4–6, the paper's local estimator `θ̂_RR`): `loss = DebiasedRr { eps }`
//!   over `Θ_B` (the loss is unbounded below: keep the ball);
//! * Thurstone MLE (§4.4): `loss = Probit`.
//!
//! User-level label DP (seed 003: user-level RR, user-wise DP-SGD, AUP-RLHF) is in
//! [`user_level`].
//!
//! The local estimators are post-processing of `ε`-label-LDP labels, hence `ε`-label-LDP
//! themselves; this module does not randomise labels (see [`crate::mechanism`]).

use crate::data::PairwiseView;
use crate::error::{Error, Result};
use crate::feasible::FeasibleSet;
use crate::loss::LossSpec;
use crate::model::{FitConfig, FittedModel};
use crate::objective::{Objective, SmoothObjective};
use crate::privacy::Guarantee;
use crate::solver::lbfgs::LbfgsOptions;
use crate::solver::sgd::SgdOptions;
use crate::solver::{lbfgs, newton, newton_cg, sgd, Control, SolveReport, Termination};
use crate::with_loss;

pub mod central;
pub mod kwise;
pub mod private_mle;
pub mod robust;
pub mod user_level;

pub use kwise::fit_kwise;

/// Which solver to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SolverKind {
    /// Exact projected Newton ([`crate::solver::newton`]).
    #[default]
    Newton,
    /// Hessian-free truncated Newton-CG ([`crate::solver::newton_cg`]): no `d × d` matrix,
    /// one pass over the data per CG iteration.
    NewtonCg,
    /// Projected L-BFGS ([`crate::solver::lbfgs`]).
    Lbfgs,
    /// Projected SGD: one-pass SGD-RR (Algorithm 1 of seed 000) or mini-batch
    /// ([`crate::solver::sgd`]).
    Sgd,
    /// An exact solver chosen from the loss and the shape ([`auto_solver`]), with a fallback:
    /// convex losses run L-BFGS; if it stops without converging (iteration budget, failed line
    /// search) and `d ≤` [`AUTO_DENSE_NEWTON_MAX_D`], Newton continues from its point. The
    /// report is the last solver's, with the counts and time of both.
    Auto,
}

/// Largest `d` for which [`SolverKind::Auto`] uses dense Newton: its Hessian is `d²` values
/// (128 MiB at this size) and its Cholesky `d³/3` flops (2.3e10, ~0.3–0.5 s here).
pub const AUTO_DENSE_NEWTON_MAX_D: usize = 4096;

/// The first solver [`SolverKind::Auto`] runs for a loss with convexity `convex` in dimension `d`:
///
/// * **convex loss** (`mle`, `debiased-rr`, `probit`) → **L-BFGS**. Measured at 1 thread on
///   BTL data with `Θ_B` (`examples/large_fit`, `bench-results/fits.md`): L-BFGS reached the
///   same KKT tolerance 1.6–15× faster than Newton at every shape tried, (n, d) = (2e5, 10),
///   (2e5, 30), (2e5, 100), (2e4, 300), (5e3, 1000): its passes cost `O(nd)` against Newton's
///   `O(nd²)` Hessian and `O(d³)` factorisation, and it needs few more passes on
///   well-conditioned data. On badly conditioned data it can run out of budget; then Newton
///   takes over (see [`SolverKind::Auto`]).
/// * **non-convex loss** (`mle-rr`) → **Newton** while `d ≤` [`AUTO_DENSE_NEWTON_MAX_D`]: its
///   shifted-Hessian safeguard handles indefinite curvature and it can certify global
///   optimality (`certified_global`); L-BFGS beyond that size.
pub fn auto_solver(convex: bool, d: usize) -> SolverKind {
    if convex || d > AUTO_DENSE_NEWTON_MAX_D {
        SolverKind::Lbfgs
    } else {
        SolverKind::Newton
    }
}

impl SolverKind {
    /// Parses the CLI name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "newton" => Ok(SolverKind::Newton),
            "newton-cg" => Ok(SolverKind::NewtonCg),
            "lbfgs" => Ok(SolverKind::Lbfgs),
            "sgd" => Ok(SolverKind::Sgd),
            "auto" => Ok(SolverKind::Auto),
            other => Err(Error::param(
                "solver",
                format!("unknown solver `{other}` (expected newton, newton-cg, lbfgs, sgd or auto)"),
            )),
        }
    }
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            SolverKind::Newton => "newton",
            SolverKind::NewtonCg => "newton-cg",
            SolverKind::Lbfgs => "lbfgs",
            SolverKind::Sgd => "sgd",
            SolverKind::Auto => "auto",
        }
    }
}

/// Everything [`fit`] (and, with `S = `[`GroupLossSpec`](crate::loss::GroupLossSpec),
/// [`fit_kwise`]) needs besides the data.
#[derive(Debug, Clone)]
pub struct FitOptions<S = LossSpec> {
    /// The loss.
    pub loss: S,
    /// The feasible set.
    pub set: FeasibleSet,
    /// Ridge `β ≥ 0`.
    pub ridge: f64,
    /// Linear term `b` (length `d`), e.g. the objective-perturbation noise.
    pub linear_term: Option<Vec<f64>>,
    /// Solver.
    pub solver: SolverKind,
    /// Stopping rules and parallelism.
    pub control: Control,
    /// Warm start.
    pub theta0: Option<Vec<f64>>,
    /// Settings used when `solver` is [`SolverKind::Lbfgs`].
    pub lbfgs: LbfgsOptions,
    /// Settings used when `solver` is [`SolverKind::Sgd`].
    pub sgd: SgdOptions,
}

impl<S> FitOptions<S> {
    /// Defaults: no ridge, no linear term, Newton, default [`Control`].
    pub fn new(loss: S, set: FeasibleSet) -> Self {
        FitOptions {
            loss,
            set,
            ridge: 0.0,
            linear_term: None,
            solver: SolverKind::Newton,
            control: Control::default(),
            theta0: None,
            lbfgs: LbfgsOptions::default(),
            sgd: SgdOptions::default(),
        }
    }
}

fn solve_auto<O: SmoothObjective, S>(obj: &O, opts: &FitOptions<S>) -> Result<SolveReport> {
    let d = obj.dim();
    let theta0 = opts.theta0.as_deref();
    match auto_solver(O::CONVEX, d) {
        SolverKind::Newton => newton::solve(obj, &opts.set, theta0, &opts.control),
        _ => {
            let first = lbfgs::solve(obj, &opts.set, theta0, &opts.lbfgs, &opts.control)?;
            let retry = matches!(
                first.termination,
                Termination::MaxIterations | Termination::LineSearchFailed
            );
            if !retry || d > AUTO_DENSE_NEWTON_MAX_D {
                return Ok(first);
            }
            let mut second = newton::solve(obj, &opts.set, Some(&first.theta), &opts.control)?;
            second.iterations += first.iterations;
            second.grad_evals += first.grad_evals;
            second.line_search_evals += first.line_search_evals;
            second.direction_passes += first.direction_passes;
            second.elapsed += first.elapsed;
            Ok(second)
        }
    }
}

/// Runs the solver `opts.solver` on `obj` (any [`SmoothObjective`]: the pairwise objective of
/// [`fit`], the K-wise objective of [`fit_kwise`]).
pub(crate) fn run_solver<O: SmoothObjective, S>(obj: &O, opts: &FitOptions<S>) -> Result<SolveReport> {
    match opts.solver {
        SolverKind::Newton => newton::solve(obj, &opts.set, opts.theta0.as_deref(), &opts.control),
        SolverKind::NewtonCg => newton_cg::solve(obj, &opts.set, opts.theta0.as_deref(), &opts.control),
        SolverKind::Lbfgs => lbfgs::solve(obj, &opts.set, opts.theta0.as_deref(), &opts.lbfgs, &opts.control),
        SolverKind::Sgd => sgd::solve(obj, &opts.set, opts.theta0.as_deref(), &opts.sgd, &opts.control),
        SolverKind::Auto => solve_auto(obj, opts),
    }
}

/// Fits `θ̂ = argmin_{θ ∈ set} F(θ)` (see [`crate::objective`]). `Err` for invalid input; a
/// solver that did not converge returns `Ok` with a report saying so — call
/// [`SolveReport::into_result`](crate::solver::SolveReport::into_result) to turn that into an error.
pub fn fit(data: PairwiseView<'_>, opts: &FitOptions) -> Result<FittedModel> {
    let report = with_loss!(opts.loss, |loss| {
        let mut obj = Objective::new(data, loss)
            .with_ridge(opts.ridge)?
            .with_par(opts.control.par);
        if let Some(b) = &opts.linear_term {
            obj = obj.with_linear_term(b.clone())?;
        }
        run_solver(&obj, opts)?
    })?;
    let guarantee = opts.loss.eps().map(Guarantee::local_rr);
    Ok(FittedModel {
        theta: report.theta.clone(),
        guarantee,
        config: FitConfig {
            loss: opts.loss,
            set: opts.set,
            ridge: opts.ridge,
            linear_term: opts.linear_term.is_some(),
            solver: opts.solver.name(),
        },
        report,
    })
}

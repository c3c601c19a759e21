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
//! The local estimators are post-processing of `ε`-label-LDP labels, hence `ε`-label-LDP
//! themselves; this module does not randomise labels (see [`crate::mechanism`]).

use crate::data::PairwiseView;
use crate::error::{Error, Result};
use crate::feasible::FeasibleSet;
use crate::loss::LossSpec;
use crate::model::{FitConfig, FittedModel};
use crate::objective::Objective;
use crate::privacy::Guarantee;
use crate::solver::lbfgs::LbfgsOptions;
use crate::solver::sgd::SgdOptions;
use crate::solver::{lbfgs, newton, sgd, Control};
use crate::with_loss;

pub mod central;
pub mod private_mle;

/// Which solver to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SolverKind {
    /// Exact projected Newton ([`crate::solver::newton`]).
    #[default]
    Newton,
    /// Projected L-BFGS ([`crate::solver::lbfgs`]).
    Lbfgs,
    /// Projected SGD: one-pass SGD-RR (Algorithm 1 of seed 000) or mini-batch
    /// ([`crate::solver::sgd`]).
    Sgd,
}

impl SolverKind {
    /// Parses the CLI name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "newton" => Ok(SolverKind::Newton),
            "lbfgs" => Ok(SolverKind::Lbfgs),
            "sgd" => Ok(SolverKind::Sgd),
            other => Err(Error::param(
                "solver",
                format!("unknown solver `{other}` (expected newton, lbfgs or sgd)"),
            )),
        }
    }
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            SolverKind::Newton => "newton",
            SolverKind::Lbfgs => "lbfgs",
            SolverKind::Sgd => "sgd",
        }
    }
}

/// Everything [`fit`] needs besides the data.
#[derive(Debug, Clone)]
pub struct FitOptions {
    /// The loss.
    pub loss: LossSpec,
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

impl FitOptions {
    /// Defaults: no ridge, no linear term, Newton, default [`Control`].
    pub fn new(loss: LossSpec, set: FeasibleSet) -> Self {
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
        match opts.solver {
            SolverKind::Newton => newton::solve(&obj, &opts.set, opts.theta0.as_deref(), &opts.control)?,
            SolverKind::Lbfgs => lbfgs::solve(&obj, &opts.set, opts.theta0.as_deref(), &opts.lbfgs, &opts.control)?,
            SolverKind::Sgd => sgd::solve(&obj, &opts.set, opts.theta0.as_deref(), &opts.sgd, &opts.control)?,
        }
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

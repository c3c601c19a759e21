//! Projected stochastic gradient descent (work in progress; see `solve`).

use super::{Control, SolveReport};
use crate::error::{Error, Result};
use crate::feasible::FeasibleSet;
use crate::loss::Loss;
use crate::objective::Objective;

/// Step-size rule `η_t` (`t = 1, 2, …` counts steps). Spec §3.4 and §9.3.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepRule {
    /// `η_t = η` (the paper's simulations use `η = 0.1`).
    Const(f64),
    /// `η_t = c / t`.
    InvT(f64),
    /// `η_t = 1/(λ t)` with `λ = γ κ tanh(ε/2)` computed from the data (proof of Thm 4.5).
    Theory,
    /// `η_t = 1/(λ t)` with a given `λ`.
    TheoryLambda(f64),
}

/// How the returned point is formed from the iterates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Averaging {
    /// The last iterate (Algorithm 1 of seed 000).
    #[default]
    Last,
    /// Polyak–Ruppert: the uniform average of all iterates `θ_2 … θ_{T+1}`.
    Polyak,
}

/// Settings of the SGD solver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgdOptions {
    /// Step rule (default [`StepRule::Theory`]).
    pub step: StepRule,
    /// Rows per step (default 1).
    pub batch: usize,
    /// Passes over the data (default 1).
    pub epochs: usize,
    /// Visit rows in a fresh seeded random order each epoch (default false: data order, as in
    /// Algorithm 1).
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

/// Minimises `obj` over `set` by projected SGD.
pub fn solve<L: Loss>(
    _obj: &Objective<'_, L>,
    _set: &FeasibleSet,
    _theta0: Option<&[f64]>,
    _opts: &SgdOptions,
    ctl: &Control,
) -> Result<SolveReport> {
    ctl.validate()?;
    Err(Error::param(
        "solver",
        "solver `sgd` is not implemented yet; use newton",
    ))
}

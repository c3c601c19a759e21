//! Projected L-BFGS (work in progress; see `solve`).

use super::{Control, SolveReport};
use crate::error::{Error, Result};
use crate::feasible::FeasibleSet;
use crate::loss::Loss;
use crate::objective::Objective;

/// Settings of the L-BFGS solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LbfgsOptions {
    /// Number of correction pairs kept (`m`, default 10).
    pub memory: usize,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions { memory: 10 }
    }
}

impl LbfgsOptions {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if self.memory == 0 {
            return Err(Error::param("memory", "must be at least 1"));
        }
        Ok(())
    }
}

/// Minimises `obj` over `set` by projected L-BFGS.
pub fn solve<L: Loss>(
    _obj: &Objective<'_, L>,
    _set: &FeasibleSet,
    _theta0: Option<&[f64]>,
    opts: &LbfgsOptions,
    ctl: &Control,
) -> Result<SolveReport> {
    ctl.validate()?;
    opts.validate()?;
    Err(Error::param(
        "solver",
        "solver `lbfgs` is not implemented yet; use newton",
    ))
}

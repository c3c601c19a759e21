//! Solvers over the [`Objective`](crate::objective::Objective) and a
//! [`FeasibleSet`](crate::feasible::FeasibleSet).
//!
//! Contract: `solve(objective, set, theta0, control) -> Result<SolveReport>`. `Err` only for
//! invalid input; numerical trouble is a [`Termination`] in the report, never a panic and never
//! reported as converged. Every solver reports [`Termination::Converged`] only when the
//! **relative KKT residual** ([`certificate`]) at the returned point — the componentwise
//! relative backward error of the KKT conditions, with the magnitudes of the gradient's terms
//! recomputed at that point — is at most [`Control::tol_rel`]. The test is invariant to the
//! units of the features and cannot be met at a non-stationary point because one row
//! dominates the gradient somewhere else.

pub mod certificate;
pub(crate) mod dense;
mod first_order;
pub mod lbfgs;
pub mod memory;
pub mod newton;
pub mod newton_cg;
pub mod observe;
mod report;
mod run;
pub(crate) mod scales;
pub mod sgd;

pub use memory::MemoryLimit;
pub use observe::{Observer, Progress, SharedObserver, StartInfo};
pub use report::{Certificate, Counts, SolveReport, SolverDetail, Termination};

use crate::error::{Error, Result};
use crate::par::Par;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Stopping rules and execution settings shared by the solvers.
#[derive(Clone)]
#[non_exhaustive]
pub struct Control {
    /// Maximum outer iterations (default 100 for Newton).
    pub max_iter: usize,
    /// Tolerance on the relative KKT residual ([`certificate`]; default `1e-10`): each
    /// coordinate of the KKT residual at most this fraction of the magnitude of its terms.
    pub tol_rel: f64,
    /// Absolute tolerance on the largest component of the KKT residual, in the units of the
    /// gradient (default `0`: off). A positive value also accepts a point whose residual is
    /// below it; unlike `tol_rel` it depends on the units of the features.
    pub tol_abs: f64,
    /// Parallelism of the passes over the data (default: the current rayon pool).
    pub par: Par,
    /// Stop with [`Termination::Timeout`] after this instant.
    pub deadline: Option<Instant>,
    /// Stop with [`Termination::Interrupted`] when this flag becomes true.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Without a norm bound, an iterate with `‖c ∘ θ‖` above this ends with
    /// [`Termination::NoMinimizer`] (default `1e10`), `c_j` the root mean square of feature
    /// column `j` (`scales`): a typical score of that size means the iterates run off to
    /// infinity, in any units of the features.
    pub norm_cap: f64,
    /// Progress hooks (default none). Observers never change the iterates.
    pub observer: Option<SharedObserver>,
    /// Call [`Observer::on_progress`] every this many iterations (SGD: steps); default 1.
    pub observe_every: usize,
    /// The memory a solver may plan for ([`memory`]; default [`MemoryLimit::Default`]: the
    /// process-wide limit, else the memory available to the process). Dense Newton needs
    /// about `(4 + 2^k)·8d²` bytes and refuses to start beyond it ([`Error::MemoryLimit`]);
    /// `auto` does not choose it then.
    pub memory_limit: MemoryLimit,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("max_iter", &self.max_iter)
            .field("tol_rel", &self.tol_rel)
            .field("tol_abs", &self.tol_abs)
            .field("par", &self.par)
            .field("deadline", &self.deadline)
            .field("interrupt", &self.interrupt)
            .field("norm_cap", &self.norm_cap)
            .field("observer", &self.observer.as_ref().map(|_| "<observer>"))
            .field("observe_every", &self.observe_every)
            .field("memory_limit", &self.memory_limit)
            .finish()
    }
}

impl Default for Control {
    fn default() -> Self {
        Control {
            max_iter: 100,
            tol_rel: 1e-10,
            tol_abs: 0.0,
            par: Par::Rayon,
            deadline: None,
            interrupt: None,
            norm_cap: 1e10,
            observer: None,
            observe_every: 1,
            memory_limit: MemoryLimit::Default,
        }
    }
}

impl Control {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if self.max_iter == 0 {
            return Err(Error::param("max-iter", "must be at least 1"));
        }
        for (name, v) in [("tol", self.tol_rel), ("tol-abs", self.tol_abs)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::param(name, format!("must be finite and >= 0, got {v}")));
            }
        }
        if self.tol_rel == 0.0 && self.tol_abs == 0.0 {
            return Err(Error::param("tol", "relative and absolute tolerances cannot both be 0"));
        }
        if self.observe_every == 0 {
            return Err(Error::param("observe-every", "must be at least 1"));
        }
        if !(self.norm_cap > 0.0) {
            return Err(Error::param("norm-cap", format!("must be > 0, got {}", self.norm_cap)));
        }
        Ok(())
    }
    pub(crate) fn notify_start(&self, solver: &'static str, n: usize, d: usize, budget: usize) {
        if let Some(o) = &self.observer {
            o.on_start(&StartInfo { solver, n, d, budget });
        }
    }
    /// Whether an observer wants a progress call at this iteration (a multiple of
    /// `observe_every`).
    pub(crate) fn wants_progress(&self, iteration: usize) -> bool {
        self.observer.is_some() && iteration.is_multiple_of(self.observe_every)
    }
    pub(crate) fn notify_progress(&self, p: &Progress<'_>) {
        if let Some(o) = &self.observer {
            o.on_progress(p);
        }
    }
    pub(crate) fn notify_end(&self, report: &SolveReport) {
        if let Some(o) = &self.observer {
            o.on_end(report);
        }
    }
    pub(crate) fn stop_requested(&self) -> Option<Termination> {
        if let Some(f) = &self.interrupt {
            if f.load(std::sync::atomic::Ordering::Relaxed) {
                return Some(Termination::Interrupted);
            }
        }
        if let Some(t) = self.deadline {
            if Instant::now() >= t {
                return Some(Termination::Timeout);
            }
        }
        None
    }
}

/// Whether two optional interrupt flags are the same flag (the same allocation, or both
/// absent): the equality of the options structs that hold one.
pub(crate) fn same_flag(a: &Option<Arc<AtomicBool>>, b: &Option<Arc<AtomicBool>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

/// The warm-start checks of the solvers: length `d` ([`Error::Shape`]) and finite entries
/// ([`Error::InvalidParam`] `theta0`).
pub(crate) fn check_theta0(theta0: Option<&[f64]>, d: usize) -> Result<()> {
    if let Some(t0) = theta0 {
        if t0.len() != d {
            return Err(Error::Shape(format!("theta0 has {} entries but d = {d}", t0.len())));
        }
        if let Some(j) = t0.iter().position(|v| !v.is_finite()) {
            return Err(Error::param("theta0", format!("entry {j} is not finite")));
        }
    }
    Ok(())
}

/// The next trial step of a backtracking line search: the interpolated `next`, kept within
/// `[0.1·alpha, 0.5·alpha]`; `0.5·alpha` when `next` is not a number (an overflowed
/// interpolation must not poison the search).
pub(crate) fn backtrack(next: f64, alpha: f64) -> f64 {
    let (lo, hi) = (0.1 * alpha, 0.5 * alpha);
    if next.is_nan() {
        hi
    } else {
        next.max(lo).min(hi)
    }
}

pub(crate) use crate::math::dot;

/// Whether an evaluation has a finite value and gradient.
pub(crate) fn all_finite(ev: &crate::objective::Eval) -> bool {
    ev.value.is_finite() && ev.grad.iter().all(|g| g.is_finite())
}

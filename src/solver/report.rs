//! What a solver returns: the point, how it stopped, and the certificate.

use std::time::Duration;

/// Why a solver stopped. Only [`Termination::Converged`] means the KKT certificate holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum Termination {
    /// The relative KKT residual ([`crate::solver::certificate`]) at the returned point, with
    /// the term magnitudes recomputed there, is at most the tolerance.
    Converged,
    /// The iteration limit was reached first.
    MaxIterations,
    /// No step along the search direction decreased the objective.
    LineSearchFailed,
    /// The objective or its gradient became NaN or infinite.
    NonFinite,
    /// No finite minimiser (only without a norm bound): the objective keeps decreasing along a
    /// direction — the loss is unbounded below on the data (e.g. `debiased-rr`) or the infimum
    /// is not attained (separable data). Constrain with `theta-b` or `ball`.
    NoMinimizer,
    /// Stopped by the caller's interrupt flag.
    Interrupted,
    /// The caller's deadline passed.
    Timeout,
    /// The iterates stopped improving (negligible steps) while the relative KKT residual stays
    /// above the tolerance: the problem cannot be solved to the tolerance in double precision
    /// from this data (e.g. features spanning more orders of magnitude than `f64` resolves),
    /// or the loss underflowed (`F`, `∇F` and every term exactly 0: the minimiser lies beyond the
    /// margins `f64` resolves, as on separable data in a ball of radius 1e300).
    PrecisionLimit,
    /// A fixed-budget algorithm (one-pass SGD, SGD with a fixed number of epochs) ran its whole
    /// budget. The result is the algorithm's output, not a certified minimiser: compare
    /// [`Certificate::kkt_residual`] with [`Certificate::kkt_tol`] to see how close it is.
    Completed,
}

impl Termination {
    /// Whether this is [`Termination::Converged`].
    pub fn is_converged(&self) -> bool {
        matches!(self, Termination::Converged)
    }
    /// Stable machine-readable name (used in JSON output).
    pub fn as_str(&self) -> &'static str {
        match self {
            Termination::Converged => "converged",
            Termination::MaxIterations => "max-iterations",
            Termination::LineSearchFailed => "line-search-failed",
            Termination::NonFinite => "non-finite",
            Termination::NoMinimizer => "no-minimizer",
            Termination::Interrupted => "interrupted",
            Termination::Timeout => "timeout",
            Termination::Completed => "completed",
            Termination::PrecisionLimit => "precision-limit",
        }
    }
    /// One sentence for people.
    pub fn describe(&self) -> &'static str {
        match self {
            Termination::Converged => "converged: the relative KKT residual is below the tolerance",
            Termination::MaxIterations => "the iteration limit was reached before the KKT residual met the tolerance",
            Termination::LineSearchFailed => "the line search found no decrease along the Newton direction",
            Termination::NonFinite => "the objective or gradient became NaN or infinite",
            Termination::NoMinimizer => {
                "no finite minimiser: the objective keeps decreasing along a direction (loss unbounded below on this data, or separable data); use --constraint theta-b or ball"
            }
            Termination::Interrupted => "interrupted by the caller",
            Termination::Timeout => "the deadline passed",
            Termination::Completed => "the algorithm ran its fixed budget (no KKT certificate)",
            Termination::PrecisionLimit => {
                "the steps became negligible while the relative KKT residual stayed above the tolerance, or the loss underflowed to 0 (double precision cannot resolve this problem to the tolerance)"
            }
        }
    }
}

impl std::fmt::Display for Termination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A solver's result. Check [`SolveReport::converged`] (or use [`SolveReport::into_result`]):
/// a report whose termination is not `Converged` carries the last iterate, not a solution.
/// What a solver returns: the point, why it stopped, and three parts — the
/// [`Certificate`] of the point (what is known about its optimality), the [`Counts`] of the
/// work done (passes over `X`, iterations, time) and the [`SolverDetail`] that only some
/// solvers produce (Hessian shifts, negative curvature).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct SolveReport {
    /// Solver name (`newton`).
    pub solver: &'static str,
    /// The final iterate (feasible).
    pub theta: Vec<f64>,
    /// Why the solver stopped.
    pub termination: Termination,
    /// What is known about the optimality of `theta`.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub certificate: Certificate,
    /// The work done.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub counts: Counts,
    /// What only some solvers report.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub detail: SolverDetail,
}

/// The optimality certificate of a solver's returned point `θ`, all computed at `θ`. With the
/// `serde` feature a non-finite value serialises as whatever the format makes of it (`null` in
/// `serde_json`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Certificate {
    /// `F(θ)`.
    pub objective: f64,
    /// The relative KKT residual `κ` at `θ` ([`crate::solver::certificate`]): the
    /// componentwise relative backward error of the KKT conditions, invariant to the units of
    /// the features. Converged means `κ ≤ kkt_tol` with the term magnitudes computed at `θ`.
    pub kkt_residual: f64,
    /// The tolerance `κ` was compared with ([`Control::tol_rel`](crate::solver::Control)).
    pub kkt_tol: f64,
    /// The Euclidean projected-gradient residual `‖θ − Π(θ − ∇F(θ))‖₂` at `θ` (absolute, in
    /// the units of `θ`; the input of the distance bounds of the central estimators).
    pub projected_gradient: f64,
    /// A bound on `F(θ) − min F` where one exists: the Frank–Wolfe gap on a bounded set, or
    /// `W‖P∇F‖²/(2β)` with a ridge (convex objectives only; `None` otherwise).
    pub suboptimality_bound: Option<f64>,
    /// Whether `‖θ‖ = B` (within 1e-10 relative).
    pub on_boundary: bool,
    /// KKT multiplier of the ball, `μ = max(0, −(P∇F)ᵀθ / ‖θ‖²)` when on the boundary, else 0.
    pub multiplier: f64,
    /// Whether the point is certified to be a *global* minimiser: converged, and the objective
    /// is convex on the feasible set (always for convex losses; for `mle-rr` when
    /// `ε ≥ 2B·max_i‖P x_i‖`, since its second derivative is negative only for `|t| > ε/2`).
    pub certified_global: bool,
}

/// The work a solve did. [`SolveReport::data_passes`] sums the passes over `X`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Counts {
    /// Outer iterations: Newton steps (Hessian factorisations), L-BFGS or Newton-CG iterations,
    /// SGD steps.
    pub iterations: usize,
    /// Full passes over `X` that evaluated value and gradient.
    pub grad_evals: usize,
    /// Dense Hessian evaluations.
    pub hessian_evals: usize,
    /// Of the evaluations above, how many computed value, gradient and Hessian together in one
    /// fused pass over `X` (counted in both `grad_evals` and `hessian_evals`; Newton on the
    /// pairwise objective).
    pub fused_evals: usize,
    /// Conjugate-gradient iterations of Newton-CG, each one Hessian-vector product (one pass over
    /// `X`); 0 for the other solvers.
    pub cg_iterations: usize,
    /// O(n) objective evaluations inside line searches (no pass over `X`).
    pub line_search_evals: usize,
    /// Passes over `X` computing a direction's scores `Xs`.
    pub direction_passes: usize,
    /// Passes over `X` before the iterations that evaluate no objective (L-BFGS's column second
    /// moments, which decide its diagonal preconditioning); 0 for the other solvers.
    pub setup_passes: usize,
    /// Evaluations of value and gradient in doubled precision (final refinement).
    pub compensated_evals: usize,
    /// Passes over `X` computing the term magnitudes of the gradient (the certificate's scale,
    /// [`crate::solver::certificate`]).
    pub scale_passes: usize,
    /// Rows of `X` read by the run on a row sample that started L-BFGS
    /// ([`crate::estimator::sample_start`]): its passes times the sample's rows (`n/32`), so
    /// `sample_rows / n` is that run's cost in passes over `X` (not in
    /// [`SolveReport::data_passes`]).
    pub sample_rows: usize,
    /// Refinement corrections accepted.
    pub refinement_steps: usize,
    /// Wall time (serialised as `elapsed_s`, seconds).
    #[cfg_attr(feature = "serde", serde(rename = "elapsed_s", serialize_with = "seconds"))]
    pub elapsed: Duration,
}

/// Adds the work of another stage of the same fit: every count and the time (`counts += &earlier`,
/// for a fit that ran two solvers one after the other).
impl std::ops::AddAssign<&Counts> for Counts {
    fn add_assign(&mut self, other: &Counts) {
        // Each field named once; the pattern is exhaustive, so a new field cannot be left out.
        macro_rules! add_fields {
            ($($field:ident),* $(,)?) => {{
                let Counts { $($field),* } = *other;
                $(self.$field += $field;)*
            }};
        }
        add_fields!(
            iterations,
            grad_evals,
            hessian_evals,
            fused_evals,
            cg_iterations,
            line_search_evals,
            direction_passes,
            setup_passes,
            compensated_evals,
            scale_passes,
            sample_rows,
            refinement_steps,
            elapsed,
        );
    }
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, other: Counts) {
        *self += &other;
    }
}

/// Diagnostics that only some solvers produce (0 or `NaN` for the others).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct SolverDetail {
    /// Length of the last Newton step `‖s‖` (before the final polishing step); Newton, L-BFGS
    /// and Newton-CG.
    pub last_step_norm: f64,
    /// Newton: iterations whose Hessian had to be shifted (indefinite or singular).
    pub hessian_shifts: usize,
    /// Newton: the largest shift used.
    pub max_shift: f64,
    /// Newton: rows with negative curvature `ℓ'' < 0` at the final point (non-convex losses;
    /// counted by the dense Hessian).
    pub negative_curvature_rows: usize,
    /// Newton-CG: CG directions along which the curvature `pᵀ∇²F p` was not positive (non-convex
    /// losses; the step then goes to the ball's boundary, or falls back to the CG iterate so far
    /// or to the steepest-descent direction without a ball).
    pub negative_curvature_directions: usize,
    /// Newton and Newton-CG: full steps extended (doubled while `F` falls) because the objective
    /// fell faster than its quadratic model — the exponential tail of separable data, where a
    /// Newton step has a constant length ([`crate::solver::newton_cg`]).
    pub extended_steps: usize,
    /// Newton-CG: rows of the sample whose curvature preconditioned its conjugate gradients
    /// ([`crate::solver::newton_cg`], "Preconditioning"); 0 when none did.
    pub preconditioner_rows: usize,
}

impl SolveReport {
    /// A report before any work: `termination` as given, counts 0, values `NaN`, flags false.
    /// Every solver starts from it.
    pub(crate) fn blank(solver: &'static str, theta: Vec<f64>, termination: Termination) -> SolveReport {
        SolveReport {
            solver,
            theta,
            termination,
            certificate: Certificate {
                objective: f64::NAN,
                kkt_residual: f64::NAN,
                kkt_tol: f64::NAN,
                projected_gradient: f64::NAN,
                suboptimality_bound: None,
                on_boundary: false,
                multiplier: 0.0,
                certified_global: false,
            },
            counts: Counts::default(),
            detail: SolverDetail {
                last_step_norm: f64::NAN,
                hessian_shifts: 0,
                max_shift: 0.0,
                negative_curvature_rows: 0,
                negative_curvature_directions: 0,
                extended_steps: 0,
                preconditioner_rows: 0,
            },
        }
    }
    /// The report of a stochastic algorithm that evaluates no objective (label-private SGD,
    /// user-level DP-SGD, AUP-RLHF): [`Termination::Completed`], `steps` iterations, the wall
    /// time, and a certificate of `NaN`s.
    pub(crate) fn completed(solver: &'static str, theta: Vec<f64>, steps: usize, elapsed: Duration) -> SolveReport {
        let mut r = SolveReport::blank(solver, theta, Termination::Completed);
        r.counts.iterations = steps;
        r.counts.elapsed = elapsed;
        r
    }
    /// Passes over the data `X` the solve made: value+gradient passes, dense Hessians not fused
    /// with one, direction-score passes, setup passes, Hessian-vector products (CG iterations),
    /// the certificate's scale passes and doubled-precision passes (each of those costs about
    /// two or three ordinary passes).
    pub fn data_passes(&self) -> usize {
        self.counts.grad_evals + self.counts.hessian_evals - self.counts.fused_evals.min(self.counts.hessian_evals)
            + self.counts.direction_passes
            + self.counts.setup_passes
            + self.counts.scale_passes
            + self.counts.cg_iterations
            + self.counts.compensated_evals
    }
    /// Whether the solver converged (the KKT certificate holds).
    pub fn converged(&self) -> bool {
        self.termination.is_converged()
    }
    /// `Ok(self)` if converged, otherwise [`Error::NotConverged`](crate::Error::NotConverged)
    /// with the diagnostics.
    pub fn into_result(self) -> crate::Result<SolveReport> {
        if self.converged() {
            Ok(self)
        } else {
            Err(crate::Error::NotConverged {
                solver: self.solver,
                termination: self.termination.as_str(),
                reason: self.termination.describe(),
                kkt_residual: self.certificate.kkt_residual,
                kkt_tol: self.certificate.kkt_tol,
                iterations: self.counts.iterations,
            })
        }
    }
}

/// A duration as seconds (`f64`).
#[cfg(feature = "serde")]
fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::Counts;
    use std::time::Duration;

    /// `+=` adds every count and the time.
    #[test]
    fn counts_add_field_by_field() {
        let mut a = Counts {
            iterations: 1,
            grad_evals: 2,
            hessian_evals: 3,
            fused_evals: 4,
            cg_iterations: 5,
            line_search_evals: 6,
            direction_passes: 7,
            setup_passes: 8,
            compensated_evals: 9,
            scale_passes: 10,
            sample_rows: 11,
            refinement_steps: 12,
            elapsed: Duration::from_millis(13),
        };
        let b = a.clone();
        a += &b;
        a += Counts::default();
        let doubled = Counts {
            iterations: 2,
            grad_evals: 4,
            hessian_evals: 6,
            fused_evals: 8,
            cg_iterations: 10,
            line_search_evals: 12,
            direction_passes: 14,
            setup_passes: 16,
            compensated_evals: 18,
            scale_passes: 20,
            sample_rows: 22,
            refinement_steps: 24,
            elapsed: Duration::from_millis(26),
        };
        assert_eq!(a, doubled);
    }
}

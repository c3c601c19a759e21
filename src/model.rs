//! The result of fitting an estimator.

use crate::feasible::FeasibleSet;
use crate::loss::LossSpec;
use crate::privacy::{Guarantee, Provenance};
use crate::solver::SolveReport;

/// What was fitted, and how (recorded so a result can be reproduced and audited). `S` is the
/// loss specification: [`LossSpec`] for pairwise fits,
/// [`GroupLossSpec`](crate::loss::GroupLossSpec) for K-wise fits.
#[derive(Debug, Clone, PartialEq)]
pub struct FitConfig<S = LossSpec> {
    /// Loss (with its privacy level for the RR losses).
    pub loss: S,
    /// Feasible set.
    pub set: FeasibleSet,
    /// Ridge `β` of `(β/2W)‖θ‖²`.
    pub ridge: f64,
    /// Whether a linear term `(1/W)⟨b, θ⟩` was used.
    pub linear_term: bool,
    /// Solver name.
    pub solver: &'static str,
}

/// A fitted reward model `r_θ(s, a) = φ(s, a)ᵀθ` with the solver's certificate.
#[derive(Debug, Clone)]
pub struct FittedModel<S = LossSpec> {
    /// The estimate `θ̂`.
    pub theta: Vec<f64>,
    /// The solver report (termination, KKT residual, counts, time).
    pub report: SolveReport,
    /// The configuration that produced it.
    pub config: FitConfig<S>,
    /// The privacy guarantee of `theta` (`None`: not private, or not known to be; see
    /// [`no_guarantee_reason`](Self::no_guarantee_reason)). A local fit gets the guarantee of
    /// its labels' [`provenance`](Self::provenance) ([`Provenance::guarantee`]), never one
    /// inferred from the loss; the central estimators attach their own.
    pub guarantee: Option<Guarantee>,
    /// The provenance of the labels a local fit used (`None`: raw labels, or a central fit).
    pub provenance: Option<Provenance>,
    /// Why `guarantee` is `None`, when it is (labels without provenance, a refused central
    /// guarantee).
    pub no_guarantee_reason: Option<String>,
}

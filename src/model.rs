//! The result of every estimator: [`Fit`].
//!
//! A fit is the estimate `θ̂`, the solver's [`SolveReport`] (its certificate and counts), the
//! privacy [`Guarantee`] of `θ̂` (or why there is none), and a typed `detail` that only that
//! estimator produces: the configuration and the labels' provenance of a local fit
//! ([`Local`]), the noise scales of a central release, the released labels of label-private
//! SGD, and so on. The estimators name their detail type; a local pairwise fit is `Fit` (the
//! default parameter), a K-wise one `Fit<Local<GroupLossSpec>>`.

use crate::feasible::FeasibleSet;
use crate::loss::LossSpec;
use crate::privacy::{Guarantee, Provenance};
use crate::solver::SolveReport;

/// What was fitted, and how (recorded so a result can be reproduced and audited). `S` is the
/// loss specification: [`LossSpec`] for pairwise fits,
/// [`GroupLossSpec`](crate::loss::GroupLossSpec) for K-wise fits.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct FitConfig<S = LossSpec> {
    /// Loss (with its privacy level for the RR losses).
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub loss: S,
    /// Feasible set.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub set: FeasibleSet,
    /// Ridge `β` of `(β/2W)‖θ‖²`.
    pub ridge: f64,
    /// Whether a linear term `(1/W)⟨b, θ⟩` was used.
    pub linear_term: bool,
    /// Solver name.
    pub solver: &'static str,
}

impl<S> FitConfig<S> {
    pub(crate) fn new(loss: S, set: FeasibleSet, ridge: f64, linear_term: bool, solver: &'static str) -> Self {
        FitConfig {
            loss,
            set,
            ridge,
            linear_term,
            solver,
        }
    }
}

/// The result of an estimator: a reward model `r_θ(s, a) = φ(s, a)ᵀθ`, how it was computed, and
/// what it guarantees. `D` is the estimator's own detail.
///
/// Which fields mean what, by estimator:
///
/// * `theta` is the released estimate: the minimiser for a local fit; the minimiser plus its
///   output noise for a central release (objective perturbation with output perturbation, the
///   private MLE); the policy parameter `θ̂'` for DPO; the last (or averaged) iterate of an SGD
///   estimator.
/// * `report` is the solver's report of the point it computed. For a central release it
///   describes the **unperturbed** minimiser: a non-private diagnostic, never to be released.
///   The stochastic estimators (label-private SGD, user-level DP-SGD, AUP-RLHF) evaluate no
///   objective: their report ends [`Completed`](crate::solver::Termination::Completed) with the
///   certificate's values `NaN` and only the step count and time filled in, or
///   [`Interrupted`](crate::solver::Termination::Interrupted) when the caller's interrupt flag
///   stopped the run (the iterate so far, and no guarantee).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Fit<D = Local> {
    /// The estimate `θ̂`.
    pub theta: Vec<f64>,
    /// The solver's certificate, counts and detail.
    pub report: SolveReport,
    /// The privacy guarantee of `theta` (`None`: not private, not known to be, or refused; see
    /// [`no_guarantee`](Self::no_guarantee)). A local fit gets the guarantee of its labels'
    /// provenance ([`Provenance::guarantee`]), never one inferred from the loss; the central
    /// and SGD estimators attach their own.
    pub guarantee: Option<Guarantee>,
    /// Why `guarantee` is `None`, when it is ([`NoGuarantee`]). Serialised as the sentence of
    /// its `Display`, under the key `no_guarantee_reason`.
    #[cfg_attr(
        feature = "serde",
        serde(rename = "no_guarantee_reason", serialize_with = "sentence")
    )]
    pub no_guarantee: Option<NoGuarantee>,
    /// What only this estimator produces.
    pub detail: D,
}

impl<D> Fit<D> {
    pub(crate) fn new(theta: Vec<f64>, report: SolveReport, detail: D) -> Self {
        Fit {
            theta,
            report,
            guarantee: None,
            no_guarantee: None,
            detail,
        }
    }

    /// The reason a central guarantee was refused ([`NoGuarantee::Refused`]), if it was.
    pub fn refusal(&self) -> Option<&str> {
        match &self.no_guarantee {
            Some(NoGuarantee::Refused(reason)) => Some(reason),
            _ => None,
        }
    }

    /// Records a refused guarantee: no guarantee, and [`NoGuarantee::Refused`].
    pub(crate) fn refuse(&mut self, reason: &str) {
        self.guarantee = None;
        self.no_guarantee = Some(NoGuarantee::Refused(reason.to_owned()));
    }

    /// Marks a stochastic estimator's run as stopped by the caller's interrupt flag after
    /// `steps` steps (of `budget`, when known): [`Termination::Interrupted`](crate::solver::Termination::Interrupted) in
    /// the report, **no** guarantee (whatever was attached), and the reason. The guarantee of a
    /// complete run describes the whole run's release; an interrupted run gets none, so that
    /// it can never carry that wording by accident.
    pub(crate) fn interrupted(&mut self, steps: usize, budget: Option<usize>) {
        self.report.termination = crate::solver::Termination::Interrupted;
        self.guarantee = None;
        self.no_guarantee = Some(NoGuarantee::Interrupted { steps, budget });
    }
}

/// Why a [`Fit`] carries no privacy guarantee. Its `Display` is the sentence the CLI's JSON
/// and Python show (`no_guarantee_reason`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NoGuarantee {
    /// The labels carry no provenance record (raw labels, or privatised labels whose record
    /// was not kept): the sentence says what the loss would need.
    NoProvenance(String),
    /// A central estimator refused its guarantee, for this reason (shown after
    /// `guarantee refused: `).
    Refused(String),
    /// A stochastic run stopped by the caller's interrupt flag after `steps` steps (of
    /// `budget`, when known): incomplete, so it carries no guarantee.
    Interrupted {
        /// The steps taken.
        steps: usize,
        /// The steps planned, when known.
        budget: Option<usize>,
    },
}

impl std::fmt::Display for NoGuarantee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoGuarantee::NoProvenance(reason) => f.write_str(reason),
            NoGuarantee::Refused(reason) => write!(f, "guarantee refused: {reason}"),
            NoGuarantee::Interrupted { steps, budget } => {
                write!(f, "interrupted by the caller after {steps}")?;
                if let Some(b) = budget {
                    write!(f, " of {b}")?;
                }
                f.write_str(" steps; the run is incomplete and carries no guarantee")
            }
        }
    }
}

/// [`Fit::no_guarantee`] as its sentence (or `null`).
#[cfg(feature = "serde")]
fn sentence<S: serde::Serializer>(v: &Option<NoGuarantee>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(n) => s.collect_str(n),
        None => s.serialize_none(),
    }
}

/// The detail of a local fit ([`fit`](crate::estimator::fit),
/// [`fit_kwise`](crate::estimator::fit_kwise), the user-level RR fit, loss (14)): its
/// configuration and the provenance of its labels.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Local<S = LossSpec> {
    /// The configuration that produced the fit.
    pub config: FitConfig<S>,
    /// The provenance of the labels (`None`: raw labels).
    pub provenance: Option<Provenance>,
}

impl<S> Local<S> {
    pub(crate) fn new(config: FitConfig<S>) -> Self {
        Local {
            config,
            provenance: None,
        }
    }
}

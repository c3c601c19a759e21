//! The confidence set `C = {θ ∈ Θ_B : ‖θ − θ̂‖_{Σ̃+λI} ≤ Γ}` ("Provable protection of human
//! judgements" (anon., 2025), eq. 2; Zhou, Wu & Orabona (2025), Algorithm 2).

use super::inner::{Emptiness, InnerMin, InnerSolver, QuadraticStep};
use crate::error::{Error, Result};
use crate::feasible::FeasibleSet;

/// What the confidence set intersects the ellipsoid with (`Θ_B` in its variants).
pub type ParamSet = FeasibleSet;

/// The confidence set, ready for inner minimisations.
#[derive(Debug, Clone)]
pub struct ConfidenceSet {
    centre: Vec<f64>,
    lambda: f64,
    radius: f64,
    requested: ParamSet,
    used: ParamSet,
    fallback: Option<String>,
    solver: InnerSolver,
}

impl ConfidenceSet {
    /// `C` for centre `theta_hat` (length `d`), covariance `sigma` (row-major `d × d`, plain
    /// `Σ̂ = (1/n)Σxxᵀ` or the private `Σ̃`; `None` for `Σ = 0`), `lambda ≥ 0` (`M = Σ + λI` must
    /// be positive definite), radius `gamma = Γ ≥ 0`, and the parameter set `set` (`theta-b`:
    /// `{1ᵀθ = 0, ‖θ‖ ≤ B}`; `ball`: `{‖θ‖ ≤ B}`, as in the anonymous paper; `sum-zero`; `none`:
    /// ellipsoid only).
    ///
    /// If the intersection is empty (possible: the released `θ̃` of the private MLE is not
    /// projected, so the slice or the ball may miss the ellipsoid), the set falls back to the
    /// ellipsoid with whatever part of `Θ_B` still meets it — first dropping the ball, then the
    /// plane — and [`fallback`](Self::fallback) says why (dropping `Θ_B` keeps `θ* ∈ C` on the good
    /// event; an empty `C` means that event failed).
    ///
    /// # Errors
    /// Shapes, non-finite entries, `λ < 0`, `Γ < 0`, `Σ + λI` not positive definite;
    /// [`Error::MemoryLimit`] when its `d × d` matrices
    /// ([`confidence_set_bytes`](crate::solver::memory::confidence_set_bytes)) exceed the
    /// process's limit ([`MemoryLimit::Default`](crate::solver::MemoryLimit::Default)).
    pub fn new(theta_hat: &[f64], sigma: Option<&[f64]>, lambda: f64, gamma: f64, set: ParamSet) -> Result<Self> {
        let d = theta_hat.len();
        if d == 0 {
            return Err(Error::Shape("confidence set: theta has no entries".into()));
        }
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(Error::param("lambda", format!("must be finite and >= 0, got {lambda}")));
        }
        super::check_matrix_memory(d)?;
        let mut m = match sigma {
            Some(s) => {
                if s.len() != d * d {
                    return Err(Error::Shape(format!(
                        "covariance has {} entries, expected d x d = {d} x {d}",
                        s.len()
                    )));
                }
                s.to_vec()
            }
            None => vec![0.0; d * d],
        };
        for i in 0..d {
            m[i * d + i] += lambda;
        }
        let mut fallback = None;
        let mut used = set;
        let candidates: Vec<ParamSet> = match set {
            FeasibleSet::ThetaB { .. } => vec![set, FeasibleSet::SumZero, FeasibleSet::Unconstrained],
            FeasibleSet::Ball { .. } | FeasibleSet::SumZero => vec![set, FeasibleSet::Unconstrained],
            FeasibleSet::Unconstrained => vec![set],
        };
        let mut solver = None;
        for cand in candidates {
            match InnerSolver::new(theta_hat, &m, gamma, cand.sum_zero(), cand.radius())? {
                Ok(s) => {
                    used = cand;
                    solver = Some(s);
                    break;
                }
                Err(e) => {
                    let why = match e {
                        Emptiness::SliceMissesEllipsoid(r2) => {
                            format!("the sum-zero plane misses the ellipsoid (Γ² − (1ᵀθ̂)²/(1ᵀM⁻¹1) = {r2:e} < 0)")
                        }
                        Emptiness::BallMissesEllipsoid(rho) => format!(
                            "the ball misses the ellipsoid (nearest point has norm {rho:e} >= B = {})",
                            cand.radius().unwrap_or(f64::NAN)
                        ),
                    };
                    fallback = Some(match fallback {
                        None => why,
                        Some(prev) => format!("{prev}; {why}"),
                    });
                }
            }
        }
        let solver = solver.expect("the ellipsoid alone is never empty");
        if let Some(f) = &mut fallback {
            f.push_str(&format!("; using {} instead of {}", used.name(), set.name()));
        }
        Ok(ConfidenceSet {
            centre: theta_hat.to_vec(),
            lambda,
            radius: gamma,
            requested: set,
            used,
            fallback,
            solver,
        })
    }

    /// The Newton step of the smoothed dual: the minimiser over `C` of
    /// `⟨g, θ − θ_k⟩ + ½(θ − θ_k)ᵀ(H + νI)(θ − θ_k)` (`h` row-major `d × d`, positive
    /// semi-definite; `ν = nu_rel·tr(H)/d`), pulled into `C`.
    pub(crate) fn newton_step(&self, theta_k: &[f64], g: &[f64], h: &[f64], nu_rel: f64) -> QuadraticStep {
        self.solver.minimize_quadratic(theta_k, g, h, nu_rel)
    }

    /// `d`.
    pub fn dim(&self) -> usize {
        self.centre.len()
    }
    /// The centre `θ̂`.
    pub fn centre(&self) -> &[f64] {
        &self.centre
    }
    /// `λ`.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// `Γ`.
    pub fn radius(&self) -> f64 {
        self.radius
    }
    /// The parameter set requested.
    pub fn requested_set(&self) -> ParamSet {
        self.requested
    }
    /// The parameter set actually intersected (differs after a fallback).
    pub fn used_set(&self) -> ParamSet {
        self.used
    }
    /// Why the requested intersection was empty, if it was.
    pub fn fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }
    /// `min_{θ ∈ C} ⟨θ, g⟩` with certificate (`super::inner`).
    pub fn minimize(&self, g: &[f64]) -> InnerMin {
        self.solver.minimize(g)
    }
    /// The ellipsoid-only value `⟨θ̂, g⟩ − Γ‖g‖_{M⁻¹}` in the used subspace (a lower bound on
    /// [`minimize`](Self::minimize) when the ball is present).
    pub fn ellipsoid_value(&self, g: &[f64]) -> f64 {
        self.solver.ellipsoid_value(g)
    }
    /// An upper bound `R_C` on `max_{θ ∈ C} ‖θ‖`.
    pub fn max_norm_bound(&self) -> f64 {
        self.solver.max_norm_bound()
    }
    /// The radius `Γ*` from which `C` is the whole bounded parameter set (the ellipsoid contains
    /// the used set `Θ_B` or ball; `‖z − ĉ‖²_Λ ≤ λ_max(B + ‖ĉ‖)²` on the ball: a sufficient bound), or
    /// `None` for an unbounded set.
    pub fn covering_radius(&self) -> Option<f64> {
        self.solver.covering_radius(self.radius)
    }
    /// Whether `C` is the whole bounded parameter set (`Γ ≥` [`covering_radius`](Self::covering_radius)):
    /// pessimism is then vacuous — with the set symmetric about 0, the pessimistic value
    /// `min_{θ ∈ Θ_B} ⟨θ, u⟩ = −B‖u‖` (`u` in the plane) of every policy is `≤ 0`, the value of the
    /// reference, whatever `θ̂` says.
    pub fn covers_parameter_set(&self) -> bool {
        self.covering_radius().is_some_and(|g| self.radius >= g)
    }
    /// Whether `0 ∈ C`.
    pub fn contains_origin(&self) -> bool {
        self.solver.contains_origin()
    }
}

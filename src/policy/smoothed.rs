//! The smoothed dual: Newton's method on `min_{θ ∈ C} h_τ(θ)` with a decreasing temperature,
//! where Frank–Wolfe would need one pass per vertex of the optimal face.
//!
//! **Why.** By the minimax theorem `max_π Ĵ(π) = min_{θ ∈ C} h(θ)` with the convex, piecewise
//! linear `h(θ) = Σ_s ρ_s max_a ⟨θ, φ(s, a)⟩ − ⟨θ, v⟩`. Its minimiser typically sits where about
//! `d` ties `⟨θ, φ(s, a)⟩ = ⟨θ, φ(s, b)⟩` meet, so the optimal policy mixes about `d` states,
//! and Frank–Wolfe, which adds one deterministic policy per pass, needs at least that many
//! passes. The log-sum-exp smoothing
//! `h_τ(θ) = Σ_s ρ_s τ log Σ_a e^{⟨θ, φ(s, a)⟩/τ} − ⟨θ, v⟩` mixes every state at once: its
//! gradient `g(p_τ(θ))` is the mean feature of the softmax policy `p_τ(θ)` (a feasible point
//! of the primal), its Hessian `(1/τ)Σ_s ρ_s Cov_{p_s}(φ)` comes from the same pass, and
//! `h ≤ h_τ ≤ h + τ Σ_s ρ_s H(p_s)`.
//!
//! **Iteration.** Each pass at `θ_k ∈ C` and `τ_k` ([`super::smooth_pass`]) gives `h(θ_k)` (an
//! upper bound on `max Ĵ`, since `θ_k ∈ C`), the softmax policy with its exact `g` (whose
//! `Ĵ(g)`, by the inner solver's certified lower bound, is a lower bound), the gradient and the
//! Hessian. The step is the exact minimiser over `C` of the quadratic model with a
//! Levenberg–Marquardt term `(ν/2)‖θ − θ_k‖²` (`ConfidenceSet::newton_step`), `ν` relative to
//! `tr(H)/d`: the next pass also gives `h_τ` of the new point at the old temperature, and a step
//! that increased it is taken back (the next step is from the old point with `10ν`); `ν` is
//! multiplied by 10 when a step achieved less than a quarter of its predicted decrease, divided
//! by 4 when it achieved more than three quarters. The temperature starts at `10⁻²·range` and
//! is divided by 4 after an accepted pass whose step predicts less than a tenth of the
//! smoothing's loss `Σ_s ρ_s (max_a s_a − Σ_a p_s(a) s_a)` (the optimisation error at this `τ`
//! is then below its smoothing error), unless that loss is already below 5 % of the gap to be
//! certified.
//!
//! **Certificate.** Exactly that of Frank–Wolfe: the best upper bound over the passes and the
//! certified `Ĵ` of the best policy seen; their difference bounds the sub-optimality of the
//! returned policy. At the smoothed optimum `θ_τ` the gap is at most the smoothing's loss, so the
//! gap closes as `τ → 0`; the iteration's speed, not its certificate, depends on the accuracy of
//! the steps. When the gap stops closing (6 passes without halving) or 40 passes are spent,
//! Frank–Wolfe continues from the best policy with the same upper bound.

use super::frank_wolfe::{certified_gap, PolicyOptions, PolicyTermination, Problem};
use super::smooth_pass;
use crate::math::dot;

/// The first temperature, relative to the objective's range.
const TAU0_REL: f64 = 1e-2;
/// The temperature's divisor.
const TAU_DIVISOR: f64 = 4.0;
/// Mixed states sampled for the Hessian, per feature (`32d` states: `A·d²·32d` flops).
const HESSIAN_STATES_PER_FEATURE: usize = 32;
/// Passes the smoothed phase may take before Frank–Wolfe continues.
pub(crate) const SMOOTHED_BUDGET: usize = 40;
/// Passes without halving the gap before Frank–Wolfe continues.
const STALL_PASSES: usize = 6;
/// The first `ν/(tr H/d)` of the Newton step's Levenberg–Marquardt regularisation.
const NU_START: f64 = 1.0;
/// Its floor.
const NU_MIN: f64 = 1e-10;
/// `ν`'s factor after a step that achieved less than a quarter of its predicted decrease.
const NU_UP: f64 = 10.0;
/// `ν`'s divisor after a step that achieved more than three quarters of it.
const NU_DOWN: f64 = 4.0;

/// The last accepted point of the smoothed iteration, with its model.
struct Base {
    theta: Vec<f64>,
    g: Vec<f64>,
    hess: Vec<f64>,
    /// The model's predicted change of its step.
    model: f64,
    /// `h_τ(θ)` at its temperature.
    value: f64,
    tau: f64,
}

/// The end of the smoothed phase.
pub(crate) struct SmoothedEnd {
    /// `Some` when the phase ended the solve (converged, or non-finite); `None` when
    /// Frank–Wolfe should continue.
    pub termination: Option<PolicyTermination>,
    /// Certified lower bound on `Ĵ` of the policy left in `probs`.
    pub lower: f64,
    /// Certified upper bound on `max Ĵ`.
    pub upper: f64,
    /// The worst-case `θ` at that policy.
    pub theta_min: Vec<f64>,
    /// `g` of that policy (exact, from its pass).
    pub g: Vec<f64>,
    /// Passes of this phase.
    pub passes: usize,
    /// The last temperature.
    pub temperature: f64,
}

impl Problem<'_, '_> {
    /// The smoothed phase (module docs) from `theta0 ∈ C`; `probs` holds a first candidate
    /// policy with `g = start_g` (exact), replaced by any softmax policy with a better certified
    /// value. The best policy is left in `probs`, the greedy actions of the last pass in
    /// `actions`. `range` is the objective's range.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn smoothed(
        &self,
        opts: &PolicyOptions,
        tol_abs: f64,
        theta0: Vec<f64>,
        start_g: Vec<f64>,
        range: f64,
        probs: &mut Vec<f64>,
        actions: &mut [u32],
        passes: &mut usize,
    ) -> SmoothedEnd {
        let (set, d) = (self.set, self.states.d());
        let hessian_states = HESSIAN_STATES_PER_FEATURE * d;
        let mut scratch = vec![0.0; probs.len()];
        let mut tau = TAU0_REL * range;
        let mut stride = (self.states.n() / hessian_states).max(1);
        let mut theta = theta0;
        let start = set.minimize(&start_g);
        let mut end = SmoothedEnd {
            termination: None,
            lower: start.lower,
            upper: if set.contains_origin() { 0.0 } else { f64::INFINITY },
            theta_min: start.theta,
            g: start_g,
            passes: 0,
            temperature: tau,
        };
        if !(tau > 0.0 && tau.is_finite()) {
            return end;
        }
        let budget = opts.max_passes.min(*passes + SMOOTHED_BUDGET);
        let mut best_gap = f64::INFINITY;
        let mut stalled = 0usize;
        let mut nu_rel = NU_START;
        let mut base: Option<Base> = None;
        while *passes < budget {
            let tau_prev = base.as_ref().map_or(tau, |b| b.tau);
            let sums = smooth_pass::run(
                self.states,
                &theta,
                tau,
                tau_prev,
                stride,
                &mut scratch,
                actions,
                self.par,
            );
            *passes += 1;
            end.passes += 1;
            end.temperature = tau;
            let g = self.g_of(&sums.mean);
            let tv = dot(&theta, &self.v);
            let h = sums.max_score / self.w - tv;
            end.upper = end.upper.min(h);
            let cur = set.minimize(&g);
            if !h.is_finite() || !cur.lower.is_finite() {
                end.termination = Some(PolicyTermination::NonFinite);
                return end;
            }
            if cur.lower > end.lower {
                end.lower = cur.lower;
                std::mem::swap(probs, &mut scratch);
                end.g = g.clone();
                end.theta_min = cur.theta;
            }
            let gap = certified_gap(end.upper, end.lower);
            let target = (opts.tol_rel * end.lower.abs().max(end.upper.abs())).max(tol_abs);
            if gap <= target {
                end.termination = Some(PolicyTermination::Converged);
                return end;
            }
            if gap <= 0.5 * best_gap {
                best_gap = gap;
                stalled = 0;
            } else {
                stalled += 1;
                if stalled >= STALL_PASSES {
                    return end;
                }
            }
            // Judge the previous step by the actual against the predicted decrease of h_τ'.
            let accepted = match &base {
                None => true,
                Some(b) => {
                    let ratio = (b.value - (sums.soft_max_prev / self.w - tv)) / -b.model;
                    if !(ratio >= 0.25) {
                        nu_rel = (nu_rel * NU_UP).max(NU_MIN * NU_UP);
                    } else if ratio > 0.75 {
                        nu_rel = (nu_rel / NU_DOWN).max(NU_MIN);
                    }
                    !(b.model < 0.0) || ratio >= 0.0
                }
            };
            if accepted {
                let scale = 1.0 / (self.w * tau);
                let hess: Vec<f64> = sums.hessian.iter().map(|v| v * scale).collect();
                let step = set.newton_step(&theta, &g, &hess, nu_rel);
                let smoothing_loss = (sums.max_score - sums.policy_score) / self.w;
                let value = sums.soft_max / self.w - tv;
                base = Some(Base {
                    theta: std::mem::replace(&mut theta, step.theta),
                    g,
                    hess,
                    model: step.model,
                    value,
                    tau,
                });
                if -step.model < 0.1 * smoothing_loss && smoothing_loss > 0.05 * target {
                    tau /= TAU_DIVISOR;
                }
                stride = (sums.mixed as usize / hessian_states).max(1);
            } else if let Some(b) = base.as_mut() {
                // Back to the last accepted point with a shorter step.
                let step = set.newton_step(&b.theta, &b.g, &b.hess, nu_rel);
                b.model = step.model;
                theta = step.theta;
                tau = b.tau;
            }
        }
        end
    }
}

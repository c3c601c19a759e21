//! Pessimistic policy optimisation over confidence sets ("Provable protection of human
//! judgements" (anon., 2025), Algorithm 3; Zhou, Wu & Orabona (2025), Algorithm 2 with
//! `η ∈ {0, 1}`; Chowdhury, Zhou & Natarajan (2024), Sec. 4.2, eq. (9)). Formulas in
//! `docs/papers.md`.
//!
//! * [`radius`]: `λ` and `Γ` in explicit form (every constant a field);
//! * [`empirical`]: data-driven radii (sandwich; linearised parametric bootstrap for the
//!   central estimators), **asymptotic/empirical, not guaranteed**;
//! * [`diagnostics`]: the computable sub-optimality bound and its coverage term;
//! * [`ConfidenceSet`]: `C = {θ ∈ Θ_B : ‖θ − θ̂‖_{Σ̃+λI} ≤ Γ}` with `Θ_B` the ball, the
//!   sum-zero ball, the plane or nothing, and a documented fallback when the intersection is
//!   empty;
//! * `inner`: `min_{θ ∈ C}⟨θ, u⟩` — the ellipsoid closed form `⟨θ̂, u⟩ − Γ‖u‖_{M⁻¹}` and the
//!   exact solution when the ball binds (nested 1-D Lagrange multipliers, with a certified
//!   lower bound and a feasible minimiser);
//! * [`StateActions`]: the public state sample, a borrowed dense `n × A × d` array `φ(s, a)`,
//!   weights `ρ`, reference [`Reference`];
//! * [`pessimistic_policy`]: Newton's method on the smoothed dual, then (if needed) Frank–Wolfe
//!   over stochastic policies, with a certified duality gap
//!   (one parallel, deterministic, SIMD pass per iteration), purification to at most `d`
//!   randomised states and rounding; [`greedy_policy`] (`η = 0`);
//! * [`mdp`]: the finite-horizon MDP variant (anon., 2025, Sec. 5) for tabular MDPs with
//!   known transitions.
//!
//! Only public inputs enter here: `(θ̂, Σ̃)` are the private releases, everything else (states,
//! `ρ`, `v`, `λ`, `Γ`) must be public or data-independent; the policy is then
//! post-processing and inherits the guarantee of `(θ̂, Σ̃)`.

mod confidence;
pub mod diagnostics;
pub mod empirical;
mod frank_wolfe;
pub(crate) mod inner;
pub mod mdp;
mod pass;
pub(crate) mod purify;
pub mod radius;
mod rounding;
mod smooth_pass;
mod smoothed;
mod states;

pub use confidence::{ConfidenceSet, ParamSet};
pub use frank_wolfe::{
    deterministic_value, greedy_policy, pessimistic_policy, GreedyReport, PolicyMethod, PolicyOptions, PolicyReport,
    PolicyTermination,
};

pub use inner::InnerMin;
pub use purify::PurifyStats;
pub use states::{Reference, StateActions};

/// The planned `d × d` matrices of a policy's confidence set and radius
/// ([`memory::confidence_set_bytes`](crate::solver::memory::confidence_set_bytes)) against the
/// process's limit ([`MemoryLimit::Default`](crate::solver::MemoryLimit::Default)).
///
/// # Errors
/// [`Error::MemoryLimit`](crate::Error::MemoryLimit) when they do not fit.
pub(crate) fn check_matrix_memory(d: usize) -> crate::error::Result<()> {
    crate::solver::MemoryLimit::Default.check(
        || format!("the policy's confidence set (its {d} × {d} matrices)"),
        crate::solver::memory::confidence_set_bytes(d),
        "the confidence set is an ellipsoid of d × d matrices: reduce d (e.g. project the features), or raise --memory-limit if the memory is there",
    )
}

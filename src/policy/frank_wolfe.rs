//! Pessimistic policy optimisation ("Provable protection of human judgements" (anon., 2025),
//! Algorithm 3; Zhou, Wu & Orabona (2025), Algorithm 2 with `η = 1`), solved as a concave
//! program over stochastic policies (the papers write an argmax over deterministic policies,
//! which is combinatorial; their proofs need only `Ĵ(π̂) ≥ Ĵ(π*)`):
//!
//! `max_π Ĵ(π)`, `Ĵ(π) = min_{θ ∈ C} ⟨θ, g(π)⟩`, `g(π) = Σ_s ρ_s Σ_a π_s(a) φ(s, a) − v`,
//!
//! over stochastic policies (a product of simplices). `Ĵ` is a minimum of linear functions of
//! `π`, hence concave; its supergradient is `ρ_s⟨θ_min(π), φ(s, a)⟩` (Danskin).
//!
//! **Smoothed dual (the default, [`PolicyMethod::Smoothed`]).** Frank–Wolfe adds one
//! deterministic policy per pass, and the optimum typically mixes about `d` states, so it needs at
//! least that many passes. By default the solve first runs Newton's method on the log-sum-exp
//! smoothing `h_τ` of the θ-dual `h` below, with a decreasing temperature: every pass gives an
//! upper bound `h(θ_k)` and a softmax policy whose certified `Ĵ` is a lower bound, the same
//! certificate as Frank–Wolfe's. If its gap stops closing, Frank–Wolfe continues from its best
//! policy with its upper bound.
//!
//! **Frank–Wolfe in `g`-space.** Start at the greedy policy of `θ̂`; at iteration `t`:
//! `θ_t = argmin_{θ ∈ C}⟨θ, g_t⟩` ([`ConfidenceSet::minimize`]); one pass over the data gives
//! the linear-maximisation vertex — the greedy policy of `θ_t`, `s_t = g(greedy(θ_t))` — and
//! `h(θ_t) = Σ_s ρ_s max_a ⟨θ_t, φ(s, a)⟩ − ⟨θ_t, v⟩`; then the exact line search
//! `max_{γ ∈ [0,1]} Ĵ(g_t + γ(s_t − g_t))` (the derivative `⟨θ_min(g_t + γD), D⟩` is
//! non-increasing; Brent's method on it), and `π ← (1 − γ)π + γ·greedy(θ_t)`, applied to the
//! stored `n × A` policy during the next pass.
//!
//! **Certificate.** For every `θ ∈ C`, `max_π Ĵ(π) ≤ max_π ⟨θ, g(π)⟩ = h(θ)` (the θ-dual, by
//! the minimax theorem), and the inner solver's lower bound gives `Ĵ(π_t) ≥ L_t` at the exact
//! `g(π_t)` (recomputed in every pass). So `gap_t = min_{τ ≤ t} h(θ_τ) − L_t` (and `min(·, 0)` when
//! `0 ∈ C`) bounds `max Ĵ − Ĵ(π_t)`; it is at most the classical FW gap plus the inner gap. Stop
//! when `gap ≤ tol_rel·max(|L_t|, |U_t|)` or `gap ≤ tol_abs` (default `tol_rel·R_C·(Σ_s ρ_s
//! max_a‖φ(s,a)‖ + ‖v‖)`, i.e. relative to the range of the objective: when the optimum is at or
//! near 0 — typically `θ = 0 ∈ C` and the reference is attainable, so no policy is certifiably
//! better than the reference — a gap relative to `|Ĵ|` cannot be met, and Frank–Wolfe approaches
//! the kink of `Ĵ` at `g = 0` only at rate `O(1/t)`). Pass `tol_abs = Some(0.0)` for the strict
//! relative criterion. `range` is reported.
//!
//! **No certifiable improvement.** When `θ = 0 ∈ C`, `Ĵ(π) ≤ ⟨0, g(π)⟩ = 0` for every `π`; if
//! the reference is a policy, `Ĵ(π_ref) = 0` is then the optimum: the solver starts from `π_ref`
//! and certifies it at the first pass (`g(π_ref) = 0`, so `max Ĵ ≥ Ĵ(π_ref) = 0`). With only a
//! reference *vector*, the optimum may sit at the kink `g = 0`, which Frank–Wolfe approaches at
//! rate `O(1/t)`; the gap floor relative to the objective's range covers that case.
//!
//! **Deterministic policy.** [`purify`](super::purify::purify) leaves at most `d` randomised
//! states with the same `g`; they are rounded to the combination of support actions that
//! maximises `Ĵ` (all combinations when there are at most 4096, else state by state in index
//! order, each given the others' mixed contribution). The loss of rounding is at most
//! `R_C · Σ_{rounded s} ρ_s · max_{a,b}‖φ(s,a) − φ(s,b)‖ ≤ 2 L R_C Σ ρ_s`; both the
//! certified stochastic optimum and the rounded policy's `Ĵ` are reported.
//!
//! **Greedy (`η = 0`).** [`greedy_policy`]: `π̂(s) = argmax_a ⟨θ̂, φ(s, a)⟩`, lowest index on ties
//! (Zhou, Wu & Orabona (2025), Algorithm 2 with `η = 0`; the plug-in policy of Chowdhury, Zhou &
//! Natarajan (2024), Sec. 4.3).

use super::confidence::ConfidenceSet;
use super::pass::{self, PassSpec};
use super::purify::{purify, randomized_states, PurifyStats};
use super::rounding::{round, Rounding};
use super::states::{Reference, StateActions};
use crate::error::{Error, Result};
use crate::math::dot;
use crate::math::roots::brent;
use crate::par::Par;
use std::time::{Duration, Instant};

/// Settings of [`pessimistic_policy`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PolicyOptions {
    /// Relative duality-gap tolerance (default `1e-6`).
    pub tol_rel: f64,
    /// Absolute gap tolerance; `None`: `tol_rel ×` the objective's range (module docs).
    pub tol_abs: Option<f64>,
    /// Maximum passes over the data in the Frank–Wolfe phase (default 2000).
    pub max_passes: usize,
    /// Purify and round to a deterministic policy (default true).
    pub deterministic: bool,
    /// The method (default [`PolicyMethod::Smoothed`]).
    pub method: PolicyMethod,
    /// Parallelism of the passes.
    pub par: Par,
}

impl Default for PolicyOptions {
    fn default() -> Self {
        PolicyOptions {
            tol_rel: 1e-6,
            tol_abs: None,
            max_passes: 2000,
            deterministic: true,
            method: PolicyMethod::Smoothed,
            par: Par::Rayon,
        }
    }
}

/// How [`pessimistic_policy`] maximises `Ĵ`; both stop at the same certified gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyMethod {
    /// Newton's method on the log-sum-exp smoothed dual `min_{θ ∈ C} h_τ(θ)` with a decreasing
    /// temperature (one pass per step, the softmax policies as certified primal points), then
    /// Frank–Wolfe from its best policy if the gap stops closing (module docs of the smoothed
    /// phase in the source; `docs/papers.md`).
    Smoothed,
    /// Frank–Wolfe alone (one pass per vertex).
    FrankWolfe,
}

impl PolicyMethod {
    /// Stable name (CLI, JSON).
    pub fn as_str(&self) -> &'static str {
        match self {
            PolicyMethod::Smoothed => "smoothed",
            PolicyMethod::FrankWolfe => "frank-wolfe",
        }
    }
}

/// The duality gap `max(U − L, 0)` of an upper bound `U` and a lower bound `L`; `+∞` when either
/// is not finite (no certificate), never the `0` that `NaN.max(0.0)` would give.
pub(crate) fn certified_gap(upper: f64, lower: f64) -> f64 {
    let gap = upper - lower;
    if upper.is_finite() && lower.is_finite() {
        gap.max(0.0)
    } else {
        f64::INFINITY
    }
}

/// Why the Frank–Wolfe phase stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyTermination {
    /// The certified gap met the tolerance.
    Converged,
    /// `max_passes` reached.
    MaxPasses,
    /// The line search made no progress (`γ = 0`) while the gap was above tolerance (the
    /// remaining gap is at the inner solver's / rounding resolution).
    Stalled,
    /// The bound or the value is not a finite number (θ̂, the states or the reference are so
    /// large that `φᵀθ` overflows): there is no certificate.
    NonFinite,
}

impl PolicyTermination {
    /// Stable name (JSON).
    pub fn as_str(&self) -> &'static str {
        match self {
            PolicyTermination::Converged => "converged",
            PolicyTermination::MaxPasses => "max-passes",
            PolicyTermination::Stalled => "stalled",
            PolicyTermination::NonFinite => "non-finite",
        }
    }
}

/// The result of [`pessimistic_policy`].
#[derive(Debug, Clone)]
pub struct PolicyReport {
    /// Certified lower bound on `Ĵ(π)` of the stochastic policy (after purification, which keeps
    /// `g`; recomputed exactly).
    pub value: f64,
    /// Certified upper bound on `max_π Ĵ(π)`.
    pub upper_bound: f64,
    /// `upper_bound − value` at the end of the Frank–Wolfe phase.
    pub gap: f64,
    /// `gap / max(|value|, |upper_bound|)`.
    pub rel_gap: f64,
    /// The objective's range `R_C·(Σ_s ρ_s max_a‖φ(s,a)‖ + ‖v‖)` (`|Ĵ(π)| ≤ range`).
    pub range: f64,
    /// Why the Frank–Wolfe phase stopped.
    pub termination: PolicyTermination,
    /// Frank–Wolfe iterations.
    pub iterations: usize,
    /// Passes of the smoothed phase (0 with [`PolicyMethod::FrankWolfe`]).
    pub smoothed_passes: usize,
    /// The smoothed phase's last temperature `τ` (0 when it did not run).
    pub temperature: f64,
    /// Passes over the `n × A × d` data, all phases included.
    pub passes: usize,
    /// The stochastic policy (row-major `n × A`), purified when `deterministic`.
    pub probs: Vec<f64>,
    /// Randomised states of the Frank–Wolfe policy.
    pub randomized_fw: usize,
    /// Purification statistics (zeros when not requested).
    pub purify: PurifyStats,
    /// `Ĵ` lower bound of the purified stochastic policy (equal to `value` up to rounding).
    pub purified_value: f64,
    /// The deterministic policy (purified and rounded; when `deterministic` is false, the greedy
    /// policy of the last pass's `θ`).
    pub actions: Vec<u32>,
    /// `Ĵ` (certified lower bound) of `actions`.
    pub deterministic_value: f64,
    /// States rounded.
    pub rounded_states: usize,
    /// Bound on the loss of rounding: `R_C Σ_{rounded} ρ_s max_{a,b}‖φ(s,a) − φ(s,b)‖`.
    pub rounding_bound: f64,
    /// The worst-case `θ` at the final stochastic policy.
    pub theta_min: Vec<f64>,
    /// `g(π)` of the final stochastic policy.
    pub g: Vec<f64>,
    /// The greedy policy of `θ̂` (the starting point; `η = 0`).
    pub greedy: GreedyReport,
    /// Wall time.
    pub elapsed: Duration,
    /// `max|g_FW − g(π)|` between the Frank–Wolfe recursion and the exact recomputation (drift).
    pub drift: f64,
}

/// The greedy policy (`η = 0`) and its values.
#[derive(Debug, Clone)]
pub struct GreedyReport {
    /// `argmax_a ⟨θ̂, φ(s, a)⟩`, lowest index on ties.
    pub actions: Vec<u32>,
    /// `⟨θ̂, g(π̂)⟩` (the plug-in value).
    pub plug_in_value: f64,
    /// `Ĵ(π̂)` (certified lower bound) under the confidence set.
    pub pessimistic_value: f64,
    /// `g(π̂)`.
    pub g: Vec<f64>,
}

fn check_dims(states: &StateActions<'_>, set: &ConfidenceSet) -> Result<()> {
    if states.d() != set.dim() {
        return Err(Error::Shape(format!(
            "states have d = {} features, theta has {}",
            states.d(),
            set.dim()
        )));
    }
    Ok(())
}

/// The greedy (`η = 0`) policy of `theta` (one pass), with its pessimistic value under `set`.
///
/// # Errors
/// Shapes, reference errors.
pub fn greedy_policy(
    states: &StateActions<'_>,
    theta: &[f64],
    reference: &Reference<'_>,
    set: &ConfidenceSet,
    par: Par,
) -> Result<GreedyReport> {
    check_dims(states, set)?;
    if theta.len() != states.d() || theta.iter().any(|v| !v.is_finite()) {
        return Err(Error::param("theta", "must have d finite entries"));
    }
    let v = states.reference_vector(reference)?;
    let mut actions = vec![0u32; states.n()];
    let sums = pass::run(
        states,
        theta,
        &mut [],
        &mut actions,
        PassSpec {
            step: None,
            policy_sum: false,
            norms: false,
        },
        par,
    );
    pass::gather_rows(states, &mut [], &mut actions);
    let w = states.weight_sum();
    let g: Vec<f64> = sums.greedy.iter().zip(&v).map(|(a, b)| a / w - b).collect();
    Ok(GreedyReport {
        plug_in_value: dot(theta, &g),
        pessimistic_value: set.minimize(&g).lower,
        actions,
        g,
    })
}

/// `Ĵ` lower bound of a deterministic policy (sequential; for checks and small problems).
pub fn deterministic_value(
    states: &StateActions<'_>,
    actions: &[u32],
    reference: &Reference<'_>,
    set: &ConfidenceSet,
) -> Result<f64> {
    let v = states.reference_vector(reference)?;
    let g0 = states.reference_vector(&Reference::Actions(actions))?;
    let g: Vec<f64> = g0.iter().zip(&v).map(|(a, b)| a - b).collect();
    Ok(set.minimize(&g).lower)
}

/// Maximises `Ĵ` over stochastic policies by Frank–Wolfe with a certified gap, then purifies
/// and rounds (module docs).
///
/// # Errors
/// Shapes, invalid options, reference errors.
pub fn pessimistic_policy(
    states: &StateActions<'_>,
    reference: &Reference<'_>,
    set: &ConfidenceSet,
    opts: &PolicyOptions,
) -> Result<PolicyReport> {
    let start = Instant::now();
    check_dims(states, set)?;
    check_options(opts)?;
    let problem = Problem {
        states,
        set,
        v: states.reference_vector(reference)?,
        w: states.weight_sum(),
        par: opts.par,
    };
    let mut actions = vec![0u32; states.n()];
    // Pass 0: the greedy policy of θ̂ (starting point) and the objective's range.
    let (greedy, scale) = problem.greedy_start(&mut actions);
    let mut passes = 1usize;
    let tol_abs = opts.tol_abs.unwrap_or(opts.tol_rel * scale);
    let (mut probs, g) = starting_policy(states, reference, set, &actions, &greedy.g);
    let reference_start = set.contains_origin() && !matches!(reference, Reference::None | Reference::Vector(_));
    let upper0 = if set.contains_origin() { 0.0 } else { f64::INFINITY };
    let (fw, smoothed_passes, temperature) = if opts.method == PolicyMethod::Smoothed && !reference_start {
        // The first candidate: a reference policy (`g = 0`) when there is one, else the greedy
        // policy of θ̂; the iteration starts from the worst case θ of the latter.
        let theta0 = set.minimize(&g).theta;
        let start_g = match *reference {
            Reference::Actions(acts) => {
                probs = one_hot(acts, states.n(), states.actions());
                vec![0.0; states.d()]
            }
            Reference::Distribution(p) => {
                probs = p.to_vec();
                vec![0.0; states.d()]
            }
            _ => g.clone(),
        };
        let end = problem.smoothed(
            opts,
            tol_abs,
            theta0,
            start_g,
            scale,
            &mut probs,
            &mut actions,
            &mut passes,
        );
        let fw = match end.termination {
            Some(termination) => FrankWolfe {
                termination,
                lower: end.lower,
                upper: end.upper,
                theta_min: end.theta_min,
                g: end.g,
                iterations: 0,
                drift: 0.0,
            },
            // Frank–Wolfe from the best softmax policy (or from the start if no pass ran).
            None if end.passes > 0 => {
                problem.frank_wolfe(opts, tol_abs, &mut probs, &mut actions, end.g, end.upper, &mut passes)
            }
            None => problem.frank_wolfe(opts, tol_abs, &mut probs, &mut actions, g, upper0, &mut passes),
        };
        (fw, end.passes, end.temperature)
    } else {
        let fw = problem.frank_wolfe(opts, tol_abs, &mut probs, &mut actions, g, upper0, &mut passes);
        (fw, 0, 0.0)
    };
    // Distributed: every member now takes the whole policy (purification and rounding read
    // every state).
    pass::gather_rows(states, &mut probs, &mut actions);
    let gap = certified_gap(fw.upper, fw.lower);
    let rel_gap = gap / fw.lower.abs().max(fw.upper.abs()).max(f64::MIN_POSITIVE);
    let randomized_fw = randomized_states(&probs, states.actions());
    let (stats, purified_value, g_pur, rounding) = if opts.deterministic {
        let (stats, g_pur) = problem.purify_and_recompute(&mut probs, &mut actions, &fw.theta_min, &mut passes);
        let purified_value = set.minimize(&g_pur).lower;
        let rounding = round(states, set, &probs, &g_pur);
        (stats, purified_value, g_pur, rounding)
    } else {
        (PurifyStats::default(), fw.lower, fw.g, Rounding::none(actions))
    };
    Ok(PolicyReport {
        value: if opts.deterministic { purified_value } else { fw.lower },
        upper_bound: fw.upper,
        gap,
        rel_gap,
        range: scale,
        termination: fw.termination,
        iterations: fw.iterations,
        smoothed_passes,
        temperature,
        passes,
        probs,
        randomized_fw,
        purify: stats,
        purified_value,
        actions: rounding.actions,
        deterministic_value: rounding.value,
        rounded_states: rounding.rounded,
        rounding_bound: rounding.bound,
        theta_min: fw.theta_min,
        g: g_pur,
        greedy,
        elapsed: start.elapsed(),
        drift: fw.drift,
    })
}

fn check_options(opts: &PolicyOptions) -> Result<()> {
    if !(opts.tol_rel.is_finite() && opts.tol_rel >= 0.0) {
        return Err(Error::param(
            "tol",
            format!("must be finite and >= 0, got {}", opts.tol_rel),
        ));
    }
    if let Some(t) = opts.tol_abs {
        if !(t.is_finite() && t >= 0.0) {
            return Err(Error::param("tol-abs", format!("must be finite and >= 0, got {t}")));
        }
    }
    if opts.max_passes == 0 {
        return Err(Error::param("max-passes", "must be at least 1"));
    }
    Ok(())
}

/// The inputs every pass shares: the data, the set, the reference vector `v` and the total
/// weight `w` (`g = (pass sum)/w − v`).
pub(crate) struct Problem<'a, 's> {
    pub(crate) states: &'a StateActions<'s>,
    pub(crate) set: &'a ConfidenceSet,
    pub(crate) v: Vec<f64>,
    pub(crate) w: f64,
    pub(crate) par: Par,
}

/// The end of the Frank–Wolfe phase.
struct FrankWolfe {
    termination: PolicyTermination,
    /// Certified lower bound on `Ĵ` of the final policy.
    lower: f64,
    /// Certified upper bound on `max Ĵ`.
    upper: f64,
    /// The worst-case `θ` at the final policy.
    theta_min: Vec<f64>,
    /// `g` of the final policy, exact (recomputed by the last pass).
    g: Vec<f64>,
    iterations: usize,
    drift: f64,
}

impl Problem<'_, '_> {
    fn pass(&self, theta: &[f64], probs: &mut [f64], actions: &mut [u32], spec: PassSpec) -> pass::PassSums {
        pass::run(self.states, theta, probs, actions, spec, self.par)
    }

    /// `g = sums/w − v`.
    pub(crate) fn g_of(&self, sums: &[f64]) -> Vec<f64> {
        sums.iter().zip(&self.v).map(|(a, b)| a / self.w - b).collect()
    }

    /// Pass 0: the greedy policy of `θ̂` (written to `actions`) with its values, and the
    /// objective's range `R_C·(Σ_s ρ_s max_a‖φ(s,a)‖ + ‖v‖)`.
    fn greedy_start(&self, actions: &mut [u32]) -> (GreedyReport, f64) {
        let s0 = self.pass(
            self.set.centre(),
            &mut [],
            actions,
            PassSpec {
                step: None,
                policy_sum: false,
                norms: true,
            },
        );
        pass::gather_rows(self.states, &mut [], actions);
        let g0 = self.g_of(&s0.greedy);
        let greedy = GreedyReport {
            actions: actions.to_vec(),
            plug_in_value: dot(self.set.centre(), &g0),
            pessimistic_value: self.set.minimize(&g0).lower,
            g: g0,
        };
        let r_c = self.set.max_norm_bound();
        let scale = r_c * (s0.max_norm / self.w + dot(&self.v, &self.v).sqrt());
        (greedy, scale)
    }

    /// The Frank–Wolfe iterations from the policy `probs` with `g = g(probs)` and a certified
    /// upper bound `upper` on `max Ĵ` (module docs), one pass each, until the certified gap
    /// meets the tolerance, `max_passes` (counted in `passes`) or a stalled line search.
    #[allow(clippy::too_many_arguments)]
    fn frank_wolfe(
        &self,
        opts: &PolicyOptions,
        tol_abs: f64,
        probs: &mut [f64],
        actions: &mut [u32],
        mut g: Vec<f64>,
        mut upper: f64,
        passes: &mut usize,
    ) -> FrankWolfe {
        let set = self.set;
        let mut step: Option<f64> = None;
        let mut iterations = 0usize;
        let mut drift: f64 = 0.0;
        let (termination, lower, theta_min) = loop {
            let inner = set.minimize(&g);
            let sums = self.pass(
                &inner.theta,
                probs,
                actions,
                PassSpec {
                    step,
                    policy_sum: true,
                    norms: false,
                },
            );
            *passes += 1;
            // Exact g(π_t) and its certified value.
            let g_exact = self.g_of(&sums.policy);
            drift = drift.max(g_exact.iter().zip(&g).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max));
            g = g_exact;
            let cur = set.minimize(&g);
            let h = sums.max_score / self.w - dot(&inner.theta, &self.v);
            upper = upper.min(h);
            let lower = cur.lower;
            // `f64::min` and `max` drop a NaN: a NaN value would otherwise read as a zero gap.
            if !h.is_finite() || !lower.is_finite() || !upper.is_finite() {
                break (PolicyTermination::NonFinite, lower, cur.theta);
            }
            let gap = certified_gap(upper, lower);
            if gap <= opts.tol_rel * lower.abs().max(upper.abs()) || gap <= tol_abs {
                break (PolicyTermination::Converged, lower, cur.theta);
            }
            if *passes >= opts.max_passes {
                break (PolicyTermination::MaxPasses, lower, cur.theta);
            }
            iterations += 1;
            let s_vec = self.g_of(&sums.greedy);
            let dir: Vec<f64> = s_vec.iter().zip(&g).map(|(a, b)| a - b).collect();
            let gamma = line_search(set, &g, &dir, dot(&cur.theta, &dir));
            if gamma <= 0.0 {
                break (PolicyTermination::Stalled, lower, cur.theta);
            }
            g.iter_mut().zip(&dir).for_each(|(a, b)| *a += gamma * b);
            step = Some(gamma);
        };
        FrankWolfe {
            termination,
            lower,
            upper,
            theta_min,
            g,
            iterations,
            drift,
        }
    }

    /// Purifies `probs` (at most `d` randomised states, the same `g`) and recomputes its `g`
    /// exactly (one pass, counted in `passes`).
    fn purify_and_recompute(
        &self,
        probs: &mut [f64],
        actions: &mut [u32],
        theta_min: &[f64],
        passes: &mut usize,
    ) -> (PurifyStats, Vec<f64>) {
        let stats = purify(self.states, probs);
        let sums = self.pass(
            theta_min,
            probs,
            actions,
            PassSpec {
                step: None,
                policy_sum: true,
                norms: false,
            },
        );
        *passes += 1;
        pass::gather_rows(self.states, &mut [], actions);
        (stats, self.g_of(&sums.policy))
    }
}

/// The starting policy (row-major `n × A`) and its `g`: the greedy policy of `θ̂` (`actions`,
/// `g0`), or — with `θ = 0 ∈ C` and a reference *policy* — the reference itself with `g = 0`:
/// then `max Ĵ = 0 = Ĵ(π_ref)` (`Ĵ ≤ ⟨0, g⟩ = 0` for every `π`), certified optimal at the first
/// pass (module docs).
fn starting_policy(
    states: &StateActions<'_>,
    reference: &Reference<'_>,
    set: &ConfidenceSet,
    actions: &[u32],
    g0: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let (n, na, d) = (states.n(), states.actions(), states.d());
    match *reference {
        Reference::Actions(acts) if set.contains_origin() => (one_hot(acts, n, na), vec![0.0; d]),
        Reference::Distribution(p) if set.contains_origin() => (p.to_vec(), vec![0.0; d]),
        _ => (one_hot(actions, n, na), g0.to_vec()),
    }
}

/// The deterministic policy `actions` as an `n × A` table of probabilities.
fn one_hot(actions: &[u32], n: usize, na: usize) -> Vec<f64> {
    let mut p = vec![0.0; n * na];
    for (s, &a) in actions.iter().enumerate() {
        p[s * na + a as usize] = 1.0;
    }
    p
}

/// The exact line search `max_{γ ∈ [0,1]} Ĵ(g + γ·dir)` (module docs): the derivative
/// `⟨θ_min(g + γ·dir), dir⟩` is non-increasing, `d0` its value at `γ = 0`; `0` when it is not
/// positive there, `1` when it is not negative at `γ = 1`, else its root by Brent's method.
fn line_search(set: &ConfidenceSet, g: &[f64], dir: &[f64], d0: f64) -> f64 {
    let deriv = |gm: f64| -> f64 {
        let p: Vec<f64> = g.iter().zip(dir).map(|(a, b)| a + gm * b).collect();
        dot(&set.minimize(&p).theta, dir)
    };
    if d0 <= 0.0 {
        0.0
    } else {
        let d1 = deriv(1.0);
        if d1 >= 0.0 {
            1.0
        } else {
            brent(deriv, 0.0, 1.0, d0, d1)
        }
    }
}

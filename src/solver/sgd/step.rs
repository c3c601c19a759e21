//! Step-size rules `η_t` (`t = 1, 2, …` counts SGD steps) and the theory constants of
//! Chowdhury, Zhou & Natarajan (2024), Thm 4.5 (its statement, its proof, and the constants
//! `γ` and `κ` of their Sec. 4).
//!
//! | rule (CLI) | `η_t` | source |
//! |---|---|---|
//! | `const:ETA` | `η` | the paper's simulations (Sec. 6) use `η = 0.1` |
//! | `invt:C` | `C / t` | |
//! | `lambda:L` | `1 / (λ t)` with the given `λ` | proof of Thm 4.5 |
//! | `theory` | `1 / (λ t)`, `λ = γ κ c` computed from the data | proof of Thm 4.5 |
//! | `statement` | `1 / (γ κ)` (constant) | the literal statement of Thm 4.5, a misprint: its proof uses `1/(λt)` |
//!
//! The theory constants, on the data `(x_i, w_i)` and the feasible set with radius `B`:
//! * `γ` — curvature floor of the link on `Θ_B`, in a data-dependent form (valid because
//!   `|xᵢᵀθ| ≤ B‖P xᵢ‖` on `Θ_B`; the paper's `σ'(2LB)` is the a-priori version):
//!   `γ = σ'(B·max_i ‖P x_i‖)` for the logistic link (`P` the centring projector under the
//!   sum-zero constraint, `I` otherwise), `A(B·max_i ‖P x_i‖)` for probit
//!   ([`Loss::link_curvature_floor`]);
//! * `κ = λ_min(Σ_D)`, `Σ_D = (1/W) Σ_i w_i x_i x_iᵀ`, restricted to the sum-zero subspace
//!   (`λ_min(Uᵀ Σ_D U)`, `U` the Helmert basis) when it is imposed: for tabular designs the
//!   unrestricted `λ_min` is 0, which would make the bound vacuous;
//! * `c = tanh(ε/2)` for the randomized-response losses, `1` otherwise ([`Loss::privacy_scale`]).
//!
//! `λ = γ κ c` is the strong-convexity modulus the proof of Thm 4.5 uses; the decaying rule
//! `η_t = 1/(λt)` is the one its `O(1/√n)` bound is proved for.

use crate::data::PairwiseView;
use crate::error::{Error, Result};
use crate::feasible::{helmert, FeasibleSet};
use crate::kernels;
use crate::loss::{GroupLoss, Loss};
use crate::objective::GroupObjective;
use crate::solver::memory;
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Side};

/// Step-size rule `η_t` (`t = 1, 2, …` counts steps). See the module docs.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum StepRule {
    /// `η_t = η` (the paper's simulations use `η = 0.1`). CLI `const:ETA`.
    Const(f64),
    /// `η_t = c / t`. CLI `invt:C`.
    InvT(f64),
    /// `η_t = 1/(λ t)` with `λ = γ κ tanh(ε/2)` computed from the data (proof of Thm 4.5).
    /// Needs a bounded feasible set. CLI `theory`.
    Theory,
    /// `η_t = 1/(λ t)` with a given `λ`. CLI `lambda:L`.
    TheoryLambda(f64),
    /// `η_t = 1/(γ κ)` (constant), with `γ`, `κ` from the data: the literal step of the
    /// statement of Thm 4.5 (a misprint: the proof uses `1/(λt)`), for reproducing it. CLI
    /// `statement`.
    Statement,
}

impl std::fmt::Display for StepRule {
    /// The CLI form accepted by [`StepRule::parse`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepRule::Const(e) => write!(f, "const:{e}"),
            StepRule::InvT(c) => write!(f, "invt:{c}"),
            StepRule::Theory => f.write_str("theory"),
            StepRule::TheoryLambda(l) => write!(f, "lambda:{l}"),
            StepRule::Statement => f.write_str("statement"),
        }
    }
}

fn positive(name: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(Error::param("step", format!("{name} must be finite and > 0, got {v}")))
    }
}

impl StepRule {
    /// Parses the CLI form: `const:ETA`, `invt:C`, `theory`, `lambda:L` or `statement`.
    /// Errors are [`Error::InvalidParam`] named `step`.
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        let (head, arg) = match s.split_once(':') {
            Some((h, a)) => (h, Some(a.trim())),
            None => (s, None),
        };
        let num = |what: &str| -> Result<f64> {
            let a = arg.ok_or_else(|| Error::param("step", format!("`{head}` needs a value: `{head}:{what}`")))?;
            let v: f64 = a
                .parse()
                .map_err(|_| Error::param("step", format!("`{a}` is not a number (in `{s}`)")))?;
            positive(what, v).map_err(|e| match e {
                Error::InvalidParam { name, reason } => Error::InvalidParam {
                    name,
                    reason: format!("{reason} (in `{s}`)"),
                },
                other => other,
            })
        };
        let no_arg = |rule: StepRule| -> Result<StepRule> {
            match arg {
                Some(a) => Err(Error::param("step", format!("`{head}` takes no value (got `{a}`)"))),
                None => Ok(rule),
            }
        };
        match head {
            "const" => Ok(StepRule::Const(num("ETA")?)),
            "invt" => Ok(StepRule::InvT(num("C")?)),
            "lambda" => Ok(StepRule::TheoryLambda(num("L")?)),
            "theory" => no_arg(StepRule::Theory),
            "statement" => no_arg(StepRule::Statement),
            other => Err(Error::param(
                "step",
                format!(
                    "unknown step rule `{other}` in `{s}` (expected const:ETA, invt:C, theory, lambda:L or statement)"
                ),
            )),
        }
    }

    /// Checks the constants (`η`, `c`, `λ` finite and `> 0`).
    pub fn validate(&self) -> Result<()> {
        match *self {
            StepRule::Const(e) => positive("η", e).map(|_| ()),
            StepRule::InvT(c) => positive("c", c).map(|_| ()),
            StepRule::TheoryLambda(l) => positive("λ", l).map(|_| ()),
            StepRule::Theory | StepRule::Statement => Ok(()),
        }
    }

    /// Whether the rule needs constants computed from the data ([`StepRule::Theory`],
    /// [`StepRule::Statement`]).
    pub fn needs_data(&self) -> bool {
        matches!(self, StepRule::Theory | StepRule::Statement)
    }

    /// The schedule for data `data`, loss `loss` and feasible set `set` (computes the theory
    /// constants when the rule needs them, see [`theory_constants`]).
    pub fn resolve<L: Loss>(&self, data: &PairwiseView<'_>, loss: &L, set: &FeasibleSet) -> Result<Schedule> {
        self.validate()?;
        Ok(match *self {
            StepRule::Const(e) => Schedule::Const(e),
            StepRule::InvT(c) => Schedule::InvT(c),
            StepRule::TheoryLambda(l) => Schedule::InvLambdaT(l),
            StepRule::Theory => Schedule::InvLambdaT(theory_constants(data, loss, set)?.lambda),
            StepRule::Statement => {
                let k = theory_constants(data, loss, set)?;
                Schedule::Const(positive("1/(γκ)", 1.0 / (k.gamma * k.kappa))?)
            }
        })
    }

    /// The schedule on K-wise data: as [`StepRule::resolve`] with the constants of
    /// [`group_theory_constants`].
    pub(crate) fn resolve_group<L: GroupLoss>(
        &self,
        obj: &GroupObjective<'_, L>,
        set: &FeasibleSet,
    ) -> Result<Schedule> {
        self.validate()?;
        Ok(match *self {
            StepRule::Theory => Schedule::InvLambdaT(group_theory_constants(obj, set)?.lambda),
            StepRule::Statement => {
                let k = group_theory_constants(obj, set)?;
                Schedule::Const(positive("1/(γκ)", 1.0 / (k.gamma * k.kappa))?)
            }
            ref other => other.schedule()?,
        })
    }

    /// The schedule of a rule that needs no data; `Err` for [`StepRule::Theory`] and
    /// [`StepRule::Statement`].
    pub fn schedule(&self) -> Result<Schedule> {
        self.validate()?;
        match *self {
            StepRule::Const(e) => Ok(Schedule::Const(e)),
            StepRule::InvT(c) => Ok(Schedule::InvT(c)),
            StepRule::TheoryLambda(l) => Ok(Schedule::InvLambdaT(l)),
            StepRule::Theory | StepRule::Statement => Err(Error::param(
                "step",
                format!("`{self}` depends on the data: resolve it with StepRule::resolve (per replication)"),
            )),
        }
    }
}

/// A step rule with every data-dependent constant resolved. `η_t` is computed exactly as
/// written (the replicated engine repeats the same operations per lane).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// `η_t = η`.
    Const(f64),
    /// `η_t = c / t`.
    InvT(f64),
    /// `η_t = 1 / (λ · t)`.
    InvLambdaT(f64),
    /// `η_t = c / (G · √t)`: the step of label-private SGD, Ghazi et al. (2021), Thm 9, with
    /// `c = c₀·D` (`D = 2B` the diameter of the ball, `c₀` a multiplier) and `G` the
    /// gradient's second-moment bound; `G = 1` gives `c/√t`.
    InvSqrtT {
        /// The numerator `c`.
        c: f64,
        /// The bound `G`.
        g: f64,
    },
}

impl Schedule {
    /// `η_t` for step `t ≥ 1`.
    #[inline(always)]
    pub fn eta(&self, t: usize) -> f64 {
        match *self {
            Schedule::Const(e) => e,
            Schedule::InvT(c) => c / t as f64,
            Schedule::InvLambdaT(l) => 1.0 / (l * t as f64),
            Schedule::InvSqrtT { c, g } => c / (g * (t as f64).sqrt()),
        }
    }
}

/// The constants of Thm 4.5 computed from the data (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TheoryConstants {
    /// `T = B·max_i ‖P x_i‖`: the largest `|x_iᵀθ|` over the feasible set.
    pub tmax: f64,
    /// `γ = σ'(T)` (logistic link; `A(T)` for probit).
    pub gamma: f64,
    /// `κ = λ_min(Σ_D)` (on the sum-zero subspace when imposed).
    pub kappa: f64,
    /// `c = tanh(ε/2)` for the RR losses, `1` otherwise.
    pub c: f64,
    /// `λ = γ κ c`.
    pub lambda: f64,
}

/// The theory constants `γ`, `κ`, `c`, `λ = γκc` of Thm 4.5 on `data` (module docs).
///
/// # Errors
/// [`Error::InvalidParam`] (`step`) when `set` has no radius (`γ` needs `B`), the feasible set
/// is `{0}` (`d = 1` with the sum-zero constraint) or the loss states no link constants
/// ([`Loss::privacy_scale`], [`Loss::link_curvature_floor`]: a loss defined outside the crate
/// gets a refusal, never the logistic link's constants); [`Error::Numerical`] when `κ` is not
/// positive (the design does not cover every direction of the parameter space, so Assumption
/// 4.4 fails and `1/(λt)` is undefined — use a `const`, `invt` or `lambda` rule).
pub fn theory_constants<L: Loss>(data: &PairwiseView<'_>, loss: &L, set: &FeasibleSet) -> Result<TheoryConstants> {
    let b = set.radius().ok_or_else(|| {
        Error::param(
            "step",
            format!(
                "the theory step needs a bounded feasible set (theta-b or ball): γ = σ'(B·max‖Px‖) depends on B; the set is `{}`",
                set.name()
            ),
        )
    })?;
    let sz = set.sum_zero();
    if sz && data.d() < 2 {
        return Err(Error::param(
            "step",
            "the theory step is undefined for d = 1 with the sum-zero constraint (the feasible set is {0})",
        ));
    }
    let tmax = b * data.max_row_norm(sz);
    let (Some(gamma), Some(c)) = (loss.link_curvature_floor(tmax), loss.privacy_scale()) else {
        return Err(Error::param(
            "step",
            format!(
                "the theory step needs the loss's link constants (Loss::privacy_scale and Loss::link_curvature_floor), which `{}` does not state; use a const, invt or lambda rule",
                loss.name()
            ),
        ));
    };
    let kappa = coverage_kappa(data, sz)?;
    let lambda = gamma * kappa * c;
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(Error::Numerical(format!(
            "theory step: λ = γκc = {gamma:e}·{kappa:e}·{c:e} = {lambda:e} is not positive (γ underflows for B·max‖Px‖ = {tmax:e}); use a const, invt or lambda rule"
        )));
    }
    Ok(TheoryConstants {
        tmax,
        gamma,
        kappa,
        c,
        lambda,
    })
}

/// Rows per block of the Gram accumulation.
const GRAM_BLOCK: usize = 4096;

/// What to do when `κ`'s `d × d` matrix does not fit.
const GRAM_ALTERNATIVE: &str = "use a const, invt or lambda step rule (--step), which need no d × d matrix";

fn gram_what(d: usize) -> String {
    format!("the theory step's κ (its {d} × {d} design covariance and eigenvalue work)")
}

/// Before `κ = λ_min(Σ)` of a `d × d` design covariance built from `rank` rank-one terms: `κ = 0`
/// exactly when `rank` is below the dimension of the parameter space (`d`, or `d − 1` under
/// sum-zero) — a typed error without forming the matrix — and the matrix and its eigenvalue
/// work (`3·8d²` bytes) must fit the process's memory limit ([`memory::MemoryLimit`]).
fn gram_guard(rank: usize, d: usize, sum_zero: bool, name: &str) -> Result<()> {
    let m = if sum_zero { d.saturating_sub(1) } else { d };
    if rank < m {
        return Err(Error::Numerical(format!(
            "κ = λ_min({name}) = 0: {rank} rank-one terms cannot cover the {m} dimensions of the parameter space (Assumption 4.4 fails), so the theory step 1/(λt) is undefined; use a const, invt or lambda rule"
        )));
    }
    memory::MemoryLimit::Default.check(
        || gram_what(d),
        memory::f64_bytes(d, d).saturating_mul(3),
        GRAM_ALTERNATIVE,
    )
}

/// `κ = λ_min(Σ_D)`, `Σ_D = (1/W) Σ_i w_i x_i x_iᵀ`, restricted to the sum-zero subspace
/// (`λ_min(Uᵀ Σ_D U)`) when `sum_zero`. Sequential (faer `Par::Seq`), `O(n d²)`.
///
/// # Errors
/// [`Error::Numerical`] if the eigenvalue solver fails or `κ ≤ 1e-12·λ_max(Σ_D)` (the
/// features do not cover every direction).
pub fn coverage_kappa(data: &PairwiseView<'_>, sum_zero: bool) -> Result<f64> {
    let (n, d) = (data.n(), data.d());
    gram_guard(n, d, sum_zero, "Σ_D")?;
    let x = data.features();
    let mut g = memory::try_zeros(d.saturating_mul(d), || gram_what(d), GRAM_ALTERNATIVE)?;
    let mut scaled = Vec::new();
    let mut r0 = 0;
    while r0 < n {
        let r1 = (r0 + GRAM_BLOCK).min(n);
        let blk: &[f64] = match (data.weights(), data.x()) {
            (None, Some(x)) => &x[r0 * d..r1 * d],
            (w, _) => {
                scaled.clear();
                scaled.resize((r1 - r0) * d, 0.0);
                x.copy_into(r0 * d, &mut scaled);
                if let Some(w) = w {
                    for (i, row) in (r0..r1).zip(scaled.chunks_exact_mut(d)) {
                        let s = w[i].sqrt();
                        row.iter_mut().for_each(|v| *v *= s);
                    }
                }
                &scaled
            }
        };
        let a = MatRef::from_row_major_slice(blk, r1 - r0, d);
        matmul(
            MatMut::from_column_major_slice_mut(&mut g, d, d),
            Accum::Add,
            a.transpose(),
            a,
            1.0,
            faer::Par::Seq,
        );
        r0 = r1;
    }
    let w = data.total_weight();
    g.iter_mut().for_each(|v| *v /= w);
    let (m, h) = if sum_zero {
        let m = d - 1;
        let mut r = vec![0.0; m * m];
        if m > 0 {
            helmert::reduce(&g, d, &mut r);
        }
        (m, r)
    } else {
        (d, g)
    };
    if m == 0 {
        return Err(Error::Numerical("κ is undefined: the parameter space is {0}".into()));
    }
    let ev = MatRef::from_column_major_slice(&h, m, m)
        .self_adjoint_eigenvalues(Side::Lower)
        .map_err(|e| Error::Numerical(format!("eigenvalues of Σ_D: {e:?}")))?;
    let (lo, hi) = (ev[0], ev[m - 1]);
    if !(lo.is_finite() && lo > 1e-12 * hi.max(f64::MIN_POSITIVE)) {
        return Err(Error::Numerical(format!(
            "κ = λ_min(Σ_D) = {lo:e} (λ_max = {hi:e}{}): the features do not cover every direction (Assumption 4.4 fails), so the theory step 1/(λt) is undefined; use a const, invt or lambda rule",
            if sum_zero { ", on the sum-zero subspace" } else { "" }
        )));
    }
    Ok(lo)
}

/// The constants of the SGD theory step on K-wise data (the analogue of [`theory_constants`]
/// for a [`GroupObjective`]; Chowdhury, Zhou & Natarajan (2024), Thm C.2, with the curvature
/// constant corrected as for "Provable protection of human judgements" (anon., 2025), eq. (19)):
///
/// * `T = 2B·max_{i,k} ‖P(φ_ik − φ̄_i)‖ ≥ max |u_ik − u_il|` over the feasible set;
/// * `γ_K = (K−1) e^{−2T}/(2K)`: with every score gap `≤ T`, `p_k ≥ e^{−T}/K`, so the top-1
///   Hessian block `Cov_p(φ) ⪰ (e^{−2T}/K²) Σ_{k<l} x_kl x_klᵀ = γ_K · (2/(K(K−1)))Σ_{k<l} x_kl
///   x_klᵀ` (for `T = 2LB` this is `(K−1)e^{−4LB}/(2K)`, where the papers print `½e^{−4LB}`, false
///   for `K = 2`, `θ = 0`; a ranking loss adds further PSD stages, so the bound holds for it too);
/// * `κ = λ_min(Σ_{D_K})` (`kernels::group::pair_covariance`), on the sum-zero subspace when imposed;
/// * `c` = [`GroupLoss::privacy_scale`] (`c_{K,ε}` for `pl-krr`, 1 otherwise);
/// * `λ = γ_K κ c`.
///
/// # Errors
/// As [`theory_constants`]: a bounded set is needed,
/// `κ` must be positive and `λ` must not underflow.
pub fn group_theory_constants<L: GroupLoss>(obj: &GroupObjective<'_, L>, set: &FeasibleSet) -> Result<TheoryConstants> {
    let b = set.radius().ok_or_else(|| {
        Error::param(
            "step",
            format!(
                "the theory step needs a bounded feasible set (theta-b or ball): γ depends on B; the set is `{}`",
                set.name()
            ),
        )
    })?;
    let sz = set.sum_zero();
    let d = obj.dim();
    if sz && d < 2 {
        return Err(Error::param(
            "step",
            "the theory step is undefined for d = 1 with the sum-zero constraint (the feasible set is {0})",
        ));
    }
    let k = obj.data().k() as f64;
    let tmax = 2.0 * b * obj.data().max_centered_row_norm(sz);
    let gamma = (k - 1.0) * (-2.0 * tmax).exp() / (2.0 * k);
    let pairs = obj.data().k().saturating_sub(1);
    gram_guard(obj.data().n().saturating_mul(pairs), d, sz, "Σ_D_K")?;
    let g = kernels::group::pair_covariance(obj.data(), obj.par());
    let (m, h) = if sz {
        let mut r = vec![0.0; (d - 1) * (d - 1)];
        helmert::reduce(&g, d, &mut r);
        (d - 1, r)
    } else {
        (d, g)
    };
    let ev = MatRef::from_column_major_slice(&h, m, m)
        .self_adjoint_eigenvalues(Side::Lower)
        .map_err(|e| Error::Numerical(format!("eigenvalues of Σ_D: {e:?}")))?;
    let (lo, hi) = (ev[0], ev[m - 1]);
    if !(lo.is_finite() && lo > 1e-12 * hi.max(f64::MIN_POSITIVE)) {
        return Err(Error::Numerical(format!(
            "κ = λ_min(Σ_D_K) = {lo:e} (λ_max = {hi:e}): the feature differences do not cover every direction, so the theory step 1/(λt) is undefined; use a const, invt or lambda rule"
        )));
    }
    let c = obj.loss().privacy_scale();
    let lambda = gamma * lo * c;
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(Error::Numerical(format!(
            "theory step: λ = γκc = {gamma:e}·{lo:e}·{c:e} = {lambda:e} is not positive (γ underflows for T = {tmax:e}); use a const, invt or lambda rule"
        )));
    }
    Ok(TheoryConstants {
        tmax,
        gamma,
        kappa: lo,
        c,
        lambda,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips_and_rejects_bad_input() {
        for s in ["const:0.1", "invt:2", "theory", "lambda:0.05", "statement"] {
            let r = StepRule::parse(s).unwrap();
            assert_eq!(r.to_string(), s);
            assert_eq!(StepRule::parse(&r.to_string()).unwrap(), r);
        }
        assert_eq!(StepRule::parse(" const: 0.5 ").unwrap(), StepRule::Const(0.5));
        for bad in [
            "",
            "const",
            "const:",
            "const:x",
            "const:-1",
            "const:0",
            "const:inf",
            "const:NaN",
            "invt:0",
            "lambda:-2",
            "theory:1",
            "statement:3",
            "sgd",
            "1e-3",
        ] {
            match StepRule::parse(bad) {
                Err(Error::InvalidParam { name: "step", .. }) => {}
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn schedules() {
        assert_eq!(Schedule::Const(0.1).eta(7), 0.1);
        assert_eq!(Schedule::InvT(3.0).eta(4), 0.75);
        assert_eq!(Schedule::InvLambdaT(0.5).eta(4), 0.5);
        assert_eq!(Schedule::InvSqrtT { c: 3.0, g: 0.5 }.eta(4), 3.0);
        assert!(StepRule::Theory.schedule().unwrap_err().to_string().contains("data"));
    }
}

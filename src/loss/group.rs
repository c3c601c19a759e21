//! Group losses: `ℓ(u; o)` of the `K` scores `u = Φθ` of one sample and its labels `o` (the
//! chosen alternative, or a ranking best first), with the score-space gradient `∂ℓ/∂u ∈ ℝ^K`
//! and the `K × K` score-space Hessian block (the objective lifts it to `θ`-space as `Φᵀ·block·Φ`).
//!
//! A group loss never sees the features: the
//! [`GroupObjective`](crate::objective::GroupObjective) lifts it, `∇_θ = Φᵀ ∂ℓ/∂u` and
//! `∇²_θ = Φᵀ (∂²ℓ/∂u²) Φ`, so the solvers work unchanged.
//!
//! | loss (CLI) | `ℓ(u; o)` | convex | bounded below | reference |
//! |---|---|---|---|---|
//! | [`PlTop1`](super::PlTop1) (`pl-top1`) | `LSE(u) − u_y` | yes | yes (≥ 0) | Chowdhury, Zhou & Natarajan (2024), eq. 11 |
//! | [`PlRanking`](super::PlRanking) (`pl-ranking`) | `Σ_{j<J} [LSE_{k∈R_j}(u_k) − u_{o_j}]` | yes | yes (≥ 0) | "Provable protection of human judgements" (anon., 2025), Sec. 4.2 |
//! | [`PlKrrDebiased`](super::PlKrrDebiased) (`pl-krr`) | `c_{K,ε} LSE(u) − wᵀu`, `w_k = 1(ỹ=k) − 1/(e^ε+K−1)` | yes | **no** | derived from Chowdhury, Zhou & Natarajan (2024), Sec. 4.4, App. C.4 |
//!
//! `LSE` is log-sum-exp, `R_j = {o_j, …, o_{K−1}}` the alternatives not yet ranked at stage `j`
//! (0-based), `J` the number of ranked stages (`J = K − 1` is a full ranking, `J = 1` is the
//! top-1 choice), `ỹ` a K-RR-privatised choice and `c_{K,ε} = (e^ε − 1)/(e^ε + K − 1)`.
//!
//! **K = 2.** `pl-top1` with two alternatives is BTL: `LSE(u₀, u₁) − u_y = softplus((1−2y)t)` with
//! `t = u₁ − u₀ = (φ₁ − φ₀)ᵀθ` (the pairwise `mle` loss); `pl-krr` with `K = 2` is the binary
//! debiased RR loss (`debiased-rr`) on the same `t`. The Thurstone (probit) model has no K-wise
//! loss here: with two alternatives it is the pairwise `probit` loss, reached through
//! [`GroupView::to_pairwise`](crate::data::GroupView::to_pairwise).

use crate::error::{check_eps, Error, Result};

/// A loss of the `K` scores of one sample and its labels (module docs).
pub trait GroupLoss: Send + Sync + Clone + std::fmt::Debug {
    /// Convex in `u` for every label.
    const CONVEX: bool;
    /// Bounded below in `u` for every label.
    const BOUNDED_BELOW: bool;
    /// The CLI name (`pl-top1`, `pl-ranking`, `pl-krr`).
    fn name(&self) -> &'static str;
    /// How many leading positions of a sample's labels the loss reads: 1 for the top-1 losses
    /// (the choice), `J` for a top-`J` ranking loss.
    fn positions(&self) -> usize;
    /// Checks that the loss applies to samples of `k` alternatives.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when it does not (e.g. `J ≥ K`, or a K-RR loss built for
    /// another `K`).
    fn check_k(&self, k: usize) -> Result<()>;
    /// Length of the scratch buffer [`GroupLoss::eval`] needs for `k` alternatives.
    fn scratch_len(&self, k: usize) -> usize;
    /// `ℓ(u; o)`; with `grad` (length `K`) also `∂ℓ/∂u`, with `hess` (`K × K`, row-major, both
    /// triangles) also `∂²ℓ/∂u²`. `order` holds at least [`GroupLoss::positions`] distinct
    /// labels, best first; `scratch` at least [`GroupLoss::scratch_len`] values.
    fn eval(
        &self,
        u: &[f64],
        order: &[u8],
        grad: Option<&mut [f64]>,
        hess: Option<&mut [f64]>,
        scratch: &mut [f64],
    ) -> f64;
    /// The recession function `ℓ∞(u; o) = lim_{r→∞} ℓ(r u; o)/r` (see
    /// [`Loss::recession`](crate::loss::Loss::recession)).
    fn recession(&self, u: &[f64], order: &[u8]) -> f64;
    /// The factor by which the label randomisation shrinks the expected gradient,
    /// `E[∇ℓ̂ | y] = c ∇ℓ_MLE`: `c_{K,ε}` for the K-RR loss, 1 otherwise (SGD theory step).
    fn privacy_scale(&self) -> f64 {
        1.0
    }
}

/// A group loss chosen at run time (CLI). Use [`with_group_loss!`](crate::with_group_loss) to
/// turn it into a concrete [`GroupLoss`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(tag = "loss", rename_all = "kebab-case")
)]
pub enum GroupLossSpec {
    /// Plackett–Luce top-1 (choice) likelihood.
    PlTop1,
    /// Plackett–Luce likelihood of the top `top` positions of a ranking (`None`: the full
    /// ranking, `J = K − 1`).
    PlRanking {
        /// Ranked stages `J` (`1 ≤ J ≤ K − 1`); `None` for all `K − 1`.
        top: Option<usize>,
    },
    /// Debiased top-1 loss of K-RR-privatised choices at level `eps`.
    PlKrr {
        /// K-RR privacy level ε > 0.
        eps: f64,
    },
}

impl GroupLossSpec {
    /// Builds a spec from its CLI name: `eps` is required by (and only allowed for) `pl-krr`,
    /// `top` only allowed for `pl-ranking`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an unknown name or a misplaced/invalid `eps` or `top`.
    pub fn parse(name: &str, eps: Option<f64>, top: Option<usize>) -> Result<Self> {
        let spec = match name {
            "pl-top1" => GroupLossSpec::PlTop1,
            "pl-ranking" => GroupLossSpec::PlRanking { top },
            "pl-krr" => {
                let e = eps.ok_or_else(|| Error::param("eps", format!("loss `{name}` needs --eps")))?;
                check_eps(e)?;
                GroupLossSpec::PlKrr { eps: e }
            }
            other => {
                return Err(Error::param(
                    "loss",
                    format!("unknown K-wise loss `{other}` (expected pl-top1, pl-ranking or pl-krr)"),
                ))
            }
        };
        if let (Some(e), false) = (eps, matches!(spec, GroupLossSpec::PlKrr { .. })) {
            return Err(Error::param(
                "eps",
                format!("loss `{name}` takes no privacy level (got {e})"),
            ));
        }
        if let (Some(j), false) = (top, matches!(spec, GroupLossSpec::PlRanking { .. })) {
            return Err(Error::param(
                "top",
                format!("--top {j} applies only to pl-ranking, not `{name}`"),
            ));
        }
        if top == Some(0) {
            return Err(Error::param("top", "must be at least 1, got 0"));
        }
        Ok(spec)
    }
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            GroupLossSpec::PlTop1 => "pl-top1",
            GroupLossSpec::PlRanking { .. } => "pl-ranking",
            GroupLossSpec::PlKrr { .. } => "pl-krr",
        }
    }
    /// The privacy level, for `pl-krr`.
    pub fn eps(&self) -> Option<f64> {
        match *self {
            GroupLossSpec::PlKrr { eps } => Some(eps),
            _ => None,
        }
    }
}

/// Evaluates `$body` with `$l` bound to the concrete [`GroupLoss`] that a [`GroupLossSpec`]
/// names for samples of `$k` alternatives (the K-RR loss and a full ranking depend on `K`).
///
/// ```
/// use privpref::{loss::{GroupLoss, GroupLossSpec}, with_group_loss};
/// let spec = GroupLossSpec::parse("pl-top1", None, None).unwrap();
/// let mut s = [0.0; 8];
/// let v = with_group_loss!(spec, 3, |l| l.eval(&[0.0; 3], &[1], None, None, &mut s)).unwrap();
/// assert!((v - 3f64.ln()).abs() < 1e-15);
/// ```
#[macro_export]
macro_rules! with_group_loss {
    ($spec:expr, $k:expr, |$l:ident| $body:expr) => {{
        match $spec {
            $crate::loss::GroupLossSpec::PlTop1 => {
                let $l = $crate::loss::PlTop1;
                Ok::<_, $crate::Error>($body)
            }
            $crate::loss::GroupLossSpec::PlRanking { top } => {
                match $crate::loss::PlRanking::new(top.unwrap_or(($k as usize).saturating_sub(1).max(1))) {
                    Ok($l) => Ok($body),
                    Err(e) => Err(e),
                }
            }
            $crate::loss::GroupLossSpec::PlKrr { eps } => match $crate::loss::PlKrrDebiased::new(eps, $k) {
                Ok($l) => Ok($body),
                Err(e) => Err(e),
            },
        }
    }};
}

//! Label-private convex learning by one pass of projected SGD (Ghazi et al. (2021), "Deep
//! Learning with Label Differential Privacy", NeurIPS 2021, supplement; summary in
//! `docs/papers.md`).
//!
//! Every algorithm visits each sample **once**; its label is privatised when it is used and
//! never again, so the trained model is `ε`-label DP by parallel composition over samples (each
//! step is post-processing of one randomised label given the earlier steps).
//!
//! | algorithm | label release at step `t` | gradient used | privacy | reference |
//! |---|---|---|---|---|
//! | LP-RR-SGD ([`LabelMechanism::Krr`]) | `ỹ_t ~ K-RR_ε(y_t)` | `ĝ = f_K (G_ỹ − q_K Σ_{k∈[K]} G_k)` | `ε` | Alg. 5, eq. (7), Thm 9 |
//! | top-k prior ([`LabelMechanism::RrTopK`]) | `ỹ_t ~ RRTop-k(y_t; p_t)` | `ĝ = f_k (G_ỹ − q_k Σ_{k'∈Y_k} G_k')` | `ε` | Cor. 10, App. G |
//! | RR-with-prior ([`LabelMechanism::RrWithPrior`]) | `RRTop-k*(y_t; p_t)`, `k* = argmax_k w_k` | as top-k with `k = k*_t` | `ε` | Alg. 2 + Cor. 10 |
//! | LP-Normal-SGD ([`LabelMechanism::Normal`]) | `G_0 + Qᵀ(Q(G_y − G_0) + z)`, `z ~ N(0, σ²I_r)` | that vector | `(ε, δ)` | Alg. 6, Prop. 11 ([`normal`]) |
//!
//! with `G_k = ∇_θ ℓ(θ_t; x_t, k)` the gradient under candidate label `k` (all `K` are computed,
//! from the public features and the current iterate), `E = e^ε`, `q_k = 1/(E+k−1)`,
//! `f_k = (E+k−1)/(E−1)` (evaluated as `(1+(k−1)e^{−ε})/(−expm1(−ε))`), and `Y_k` the top-`k`
//! labels of the sample's prior `p_t` (ties to the smaller index). The update is
//! `θ_{t+1} = Π_W(θ_t − η_t ĝ_t)` (the minus sign is lost in the paper's text) from
//! `θ_1 = Π_W(θ_0)` (default 0), and the **last iterate** `θ_{n+1}` is returned (Shamir–Zhang).
//!
//! * **Unbiasedness** (Thm 9 proof; Lemma 18): `E_ỹ[ĝ] = ∇ℓ(θ; x, y)` exactly for K-RR, and for
//!   RRTop-k whenever `y ∈ Y_k` (otherwise the bias is bounded by `2DL·P[y ∉ Y_k]`, eq. (9)).
//!   With `k = 1` the release is the top label itself (0-DP) and `ĝ = G_ỹ`.
//! * **Priors** (`prior`) must not depend on the sample's own label: public, a model trained on
//!   *other* samples' privatised labels ([`prior::model_prior`], free), or the private histogram
//!   prior ([`prior::histogram_prior`], costing `ε_p`, composed by basic composition:
//!   `ε_p + ε`).
//! * **Steps** ([`LpStep`]): Thm 9's `η_t = D/(G√t)` with `D = 2B` the diameter of the ball and
//!   `G² = 2f²(2L)² + 2L²` the second-moment bound of its proof (with `f ≤ 2K/ε` for `ε ≤ 1`
//!   this is at most the paper's `G = 6KL/ε`), `G = L` for `k = 1` or without debiasing. When
//!   the label-set size varies between samples (RR-with-prior, reused releases), `G` is the
//!   root mean square of the per-sample bounds over the pass (the proof bounds `E‖ĝ_t‖²` with
//!   the expectation over the sample; the sizes depend on the priors only), so every sample
//!   gets the same step. LP-Normal-SGD uses Prop. 11's `G² = L² + Kσ²`. A multiplier `c` (`theory:C`) scales the
//!   step; `invsqrt:C` (`C/√t`) and `const:ETA` are free choices.
//! * **Engine.** A pass runs on the crate's projected SGD engine ([`crate::solver::sgd`]): a
//!   per-step hook reads and privatises the label (or adds LP-Normal-SGD's noise) and hands over
//!   `ĝ_t`; the engine takes the step with the [`LpStep`] schedule and projects onto `W`.
//! * **Debiased ERM** ([`topk_erm`]): the debiased loss of RRTop-k releases (Sec. G) and its
//!   empirical risk with gradient; unbiased only for true labels inside the top set (exactly
//!   `(1/k) Σ_{Y_k} ℓ` otherwise), which no loss of the release can avoid for `k < K`.
//! * **Multi-stage training** (`multistage`): LP-MST (main paper Alg. 3) on top of these passes.
//! * **Models** (`model`): the binary linear model ([`PairwiseModel`]), K-wise Plackett–Luce
//!   ([`GroupModel`]) and the K-class softmax ([`MulticlassModel`]), on the crate's
//!   [`Loss`](crate::loss::Loss) / [`GroupLoss`](crate::loss::GroupLoss) layer with a clear-label
//!   loss ([`LabelLoss`]: `mle`, `pl-top1`; `probit` needs a stated sensitivity/Lipschitz
//!   constant).
//!
//! Multiple epochs are not offered: re-randomising a label costs `ε` again, and reusing the
//! cached label voids the i.i.d. argument; multi-stage training reuses cached labels
//! explicitly.
//!
//! **RNG.** All randomness (label draws, Gaussian noise) comes from one [`NoiseRng`]: a CSPRNG
//! for real data ([`NoiseRng::secure`]); a seeded generator makes the guarantee
//! "simulation only".

pub(crate) mod eval;
pub(crate) mod model;
pub(crate) mod multistage;
pub mod normal;
mod pass;
pub(crate) mod prior;
pub mod theory;
pub mod topk_erm;

pub use eval::{accuracy, excess_risk, mean_loss};
pub use model::{GroupModel, LabelLoss, LabelModel, MulticlassModel, PairwiseModel};
pub use multistage::{multi_stage, FilterRule, MultiStageDetail, MultiStageOptions, StageReport};
use normal::normal_calibration;
pub use normal::{GaussianCalibration, DEFAULT_RANK_TOL};
pub use pass::{debias_factors, debiased_score_gradient};
pub(crate) use pass::{run_pass, PassSetup, Visit};
pub use prior::{histogram_prior, kmeans, model_prior, HistogramPrior, Prior};

use crate::error::{check_delta, check_eps, Error, Result};
use crate::feasible::FeasibleSet;
use crate::model::Fit;
use crate::privacy::{Assumptions, Guarantee, Neighbouring, NoiseRng, PrivacyModel, PrivacyUnit};
use crate::solver::sgd::Schedule;
use crate::solver::{same_flag, SolveReport};
#[cfg(doc)]
use crate::solver::{Control, Termination};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// How each sample's label is privatised when it is used (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum LabelMechanism {
    /// K-ary randomized response over all `K` labels (LP-RR-SGD, Alg. 5).
    Krr,
    /// RRTop-k with a fixed `k` and a per-sample prior (Cor. 10).
    RrTopK {
        /// The size of the top set, `1 ≤ k ≤ K`.
        k: usize,
    },
    /// RR-with-prior: RRTop-`k*` with the paper's `k*` per sample (Alg. 2).
    RrWithPrior,
    /// LP-Normal-SGD: Gaussian noise in the span of the candidate-gradient differences
    /// (Alg. 6), `(ε, δ)`-label DP.
    Normal {
        /// `δ ∈ (0, 1)`.
        delta: f64,
        /// How σ is calibrated.
        calibration: GaussianCalibration,
        /// The per-step label sensitivity `Δ ≥ max_{k,k'} ‖G_k − G_k'‖` (default: computed from
        /// the public features for canonical losses; required otherwise). Checked at every step.
        sensitivity: Option<f64>,
    },
}

impl LabelMechanism {
    /// CLI name: `krr`, `rrtopk`, `rr-prior`, `normal`.
    pub fn name(&self) -> &'static str {
        match self {
            LabelMechanism::Krr => "krr",
            LabelMechanism::RrTopK { .. } => "rrtopk",
            LabelMechanism::RrWithPrior => "rr-prior",
            LabelMechanism::Normal { .. } => "normal",
        }
    }
    /// Whether the mechanism needs a per-sample prior.
    pub fn needs_prior(&self) -> bool {
        matches!(self, LabelMechanism::RrTopK { .. } | LabelMechanism::RrWithPrior)
    }
}

/// The step size `η_t` of label-private SGD (`t = 1, 2, …`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum LpStep {
    /// `c · D/(G√t)`: Thm 9 / Prop. 11 with `D = 2B` and the mechanism's `G` (module docs);
    /// `c = 1` is the theory. CLI `theory` or `theory:C`.
    Theory(f64),
    /// `C/√t`. CLI `invsqrt:C`.
    InvSqrt(f64),
    /// `η`. CLI `const:ETA`.
    Const(f64),
}

impl Default for LpStep {
    fn default() -> Self {
        LpStep::Theory(1.0)
    }
}

impl std::fmt::Display for LpStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            LpStep::Theory(1.0) => f.write_str("theory"),
            LpStep::Theory(c) => write!(f, "theory:{c}"),
            LpStep::InvSqrt(c) => write!(f, "invsqrt:{c}"),
            LpStep::Const(e) => write!(f, "const:{e}"),
        }
    }
}

impl LpStep {
    /// Parses `theory`, `theory:C`, `invsqrt:C` or `const:ETA` (numbers finite and `> 0`).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (`step`).
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        let (head, arg) = match s.split_once(':') {
            Some((h, a)) => (h.trim(), Some(a.trim())),
            None => (s, None),
        };
        let num = |a: Option<&str>| -> Result<f64> {
            let a = a.ok_or_else(|| Error::param("step", format!("`{head}` needs a value (`{head}:C`)")))?;
            let v: f64 = a
                .parse()
                .map_err(|_| Error::param("step", format!("`{a}` is not a number (in `{s}`)")))?;
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(Error::param(
                    "step",
                    format!("the constant must be finite and > 0, got {v} (in `{s}`)"),
                ))
            }
        };
        match head {
            "theory" => Ok(LpStep::Theory(if arg.is_some() { num(arg)? } else { 1.0 })),
            "invsqrt" => Ok(LpStep::InvSqrt(num(arg)?)),
            "const" => Ok(LpStep::Const(num(arg)?)),
            other => Err(Error::param(
                "step",
                format!("unknown step rule `{other}` for label-private SGD (expected theory, theory:C, invsqrt:C or const:ETA)"),
            )),
        }
    }
    /// The engine's schedule for a pass on `set` with the gradient bound `g` (module docs):
    /// `c·2B/(G√t)`, `C/√t` or `η`.
    pub(crate) fn schedule(&self, set: &FeasibleSet, g: f64) -> Schedule {
        match *self {
            LpStep::Theory(c) => Schedule::InvSqrtT {
                c: c * 2.0 * set.radius().unwrap_or(f64::NAN),
                g,
            },
            LpStep::InvSqrt(c) => Schedule::InvSqrtT { c, g: 1.0 },
            LpStep::Const(e) => Schedule::Const(e),
        }
    }
    fn validate(&self) -> Result<()> {
        let v = match *self {
            LpStep::Theory(c) | LpStep::InvSqrt(c) | LpStep::Const(c) => c,
        };
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(Error::param(
                "step",
                format!("the constant must be finite and > 0, got {v}"),
            ))
        }
    }
}

/// Settings of [`lp_sgd`]. Two settings are equal when their fields are, the interrupt flags
/// being the same flag (or both absent).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LpSgdOptions {
    /// Privacy level ε of each label release.
    pub eps: f64,
    /// The mechanism.
    pub mechanism: LabelMechanism,
    /// The convex set `W` (the theory step needs a radius: `D = 2B`).
    pub set: FeasibleSet,
    /// Step rule (default `theory`).
    pub step: LpStep,
    /// The Lipschitz constant `L` of the theory step (default: the model's bound from the
    /// public features, [`LabelModel::lipschitz`]).
    pub lipschitz: Option<f64>,
    /// Debias the gradient (default `true`, eq. (7)). `false` uses the plain gradient on the
    /// randomised label (biased; what the deep-learning experiments do, with mixup; privacy is
    /// unchanged).
    pub debias: bool,
    /// LP-Normal-SGD's relative rank tolerance (default [`DEFAULT_RANK_TOL`]).
    pub rank_tol: f64,
    /// The caller's interrupt flag (default `None`), as [`Control::interrupt`] of the solvers:
    /// a relaxed load every 256 steps; once set, the pass stops between two steps and
    /// the fit is the iterate so far, [`Termination::Interrupted`], and **no** guarantee.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl PartialEq for LpSgdOptions {
    fn eq(&self, other: &Self) -> bool {
        let LpSgdOptions {
            eps,
            mechanism,
            set,
            step,
            lipschitz,
            debias,
            rank_tol,
            interrupt,
        } = self;
        *eps == other.eps
            && *mechanism == other.mechanism
            && *set == other.set
            && *step == other.step
            && *lipschitz == other.lipschitz
            && *debias == other.debias
            && *rank_tol == other.rank_tol
            && same_flag(interrupt, &other.interrupt)
    }
}

impl LpSgdOptions {
    /// `eps`, `mechanism` and `set` with the defaults (theory step, debiased, default rank
    /// tolerance).
    pub fn new(eps: f64, mechanism: LabelMechanism, set: FeasibleSet) -> Self {
        LpSgdOptions {
            eps,
            mechanism,
            set,
            step: LpStep::default(),
            lipschitz: None,
            debias: true,
            rank_tol: DEFAULT_RANK_TOL,
            interrupt: None,
        }
    }
    fn validate(&self) -> Result<()> {
        check_eps(self.eps)?;
        self.step.validate()?;
        if let Some(l) = self.lipschitz {
            if !(l.is_finite() && l > 0.0) {
                return Err(Error::param("lipschitz", format!("must be finite and > 0, got {l}")));
            }
        }
        if !(self.rank_tol.is_finite() && self.rank_tol >= 0.0 && self.rank_tol < 1.0) {
            return Err(Error::param(
                "rank-tol",
                format!("must be in [0, 1), got {}", self.rank_tol),
            ));
        }
        match self.mechanism {
            LabelMechanism::RrTopK { k: 0 } => Err(Error::param("top-k", "must be at least 1")),
            LabelMechanism::Normal { delta, sensitivity, .. } => {
                check_delta(delta)?;
                match sensitivity {
                    Some(s) if !(s.is_finite() && s > 0.0) => {
                        Err(Error::param("sensitivity", format!("must be finite and > 0, got {s}")))
                    }
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }
}

/// One released (randomised) label: the sample, `ỹ`, and the label set it was randomised over
/// (`None`: all `K` labels, K-RR; otherwise `Y_k` in decreasing prior mass). Releasing it costs
/// nothing beyond the run's guarantee (the model is post-processing of these releases).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ReleasedLabel {
    /// Sample index.
    pub sample: usize,
    /// `ỹ`.
    pub label: u8,
    /// `Y_k` (`None` = all labels).
    pub set: Option<Vec<u8>>,
}

impl ReleasedLabel {
    /// `|Y_k|` (`K` for `None`).
    pub fn k(&self, num_labels: usize) -> usize {
        self.set.as_ref().map_or(num_labels, Vec::len)
    }
}

/// LP-Normal-SGD's calibration and what the run saw. Every field is a function of the public
/// features and the iterates (which the guarantee covers), never of the noise draws alone:
/// releasing a statistic of the noise `z` next to `θ` would not be covered (it would help
/// separate `c_y` from `z`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct NormalReport {
    /// σ per coordinate of the noise `z`.
    pub sigma: f64,
    /// The sensitivity `Δ` σ was calibrated for.
    pub sensitivity: f64,
    /// The largest realised sensitivity `max_{k,k'} ‖c_k − c_k'‖` over the steps (`≤ Δ`).
    pub max_realised_sensitivity: f64,
    /// The calibration rule.
    pub calibration: GaussianCalibration,
    /// Smallest subspace dimension `r` used.
    pub rank_min: usize,
    /// Largest `r`.
    pub rank_max: usize,
    /// Mean `r`.
    pub rank_mean: f64,
}

/// The detail of an [`lp_sgd`] fit. The fit's `theta` is the last iterate `θ_{n+1}`; its
/// `guarantee` the label-DP guarantee of `θ` and of the released labels (composed with the
/// prior's cost when the prior was private); its `report` is
/// [`Completed`](crate::solver::Termination::Completed) with the steps (`= n`) and the time,
/// or [`Interrupted`](crate::solver::Termination::Interrupted) with the steps taken when the
/// caller stopped the pass (then `released` holds the labels released so far and the fit no
/// guarantee).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct LabelSgdDetail {
    /// The released labels, in visiting order (empty for LP-Normal-SGD).
    pub released: Vec<ReleasedLabel>,
    /// Mean `|Y_k|` over the steps (`K` for K-RR; the mean `k*` for RR-with-prior).
    pub mean_k: f64,
    /// The `L` used by the theory step (`NaN` if not needed).
    pub lipschitz: f64,
    /// LP-Normal-SGD's calibration and statistics.
    pub normal: Option<NormalReport>,
}

/// The Lipschitz constant for the theory step: the stated one, or the model's bound.
pub(crate) fn resolve_lipschitz<M: LabelModel>(model: &M, stated: Option<f64>, step: LpStep) -> Result<f64> {
    if !matches!(step, LpStep::Theory(_)) {
        return Ok(stated.unwrap_or(f64::NAN));
    }
    if let Some(l) = stated {
        return Ok(l);
    }
    let mut worst = 0.0f64;
    for i in 0..model.n() {
        match model.lipschitz(i) {
            Some(l) => worst = worst.max(l),
            None => {
                return Err(Error::param(
                    "lipschitz",
                    "the theory step needs the Lipschitz constant L and this loss has no bound: state it (--lipschitz) or use invsqrt:C / const:ETA",
                ))
            }
        }
    }
    if !(worst > 0.0 && worst.is_finite()) {
        return Err(Error::param(
            "lipschitz",
            format!(
                "the model's Lipschitz bound is {worst} (all-zero features?); state it or use invsqrt:C / const:ETA"
            ),
        ));
    }
    Ok(worst)
}

/// The guarantee of one pass of a label-randomising mechanism (`ε`, label change, central: the
/// trainer reads the clear label and randomises it; the release is also `ε`-label-LDP in form).
pub(crate) fn rr_guarantee(eps: f64, mechanism: LabelMechanism, debias: bool, noise: &NoiseRng) -> Guarantee {
    let name = match mechanism {
        LabelMechanism::Krr => "LP-RR-SGD (Ghazi et al. 2021, Alg. 5): each label randomised once by K-RR when used",
        LabelMechanism::RrTopK { .. } => {
            "LP-RR-SGD with a top-k prior (Ghazi et al. 2021, Cor. 10): each label randomised once by RRTop-k when used"
        }
        _ => {
            "LP-RR-SGD with RR-with-prior (Ghazi et al. 2021, Alg. 2, Cor. 10): each label randomised once by RRTop-k* when used"
        }
    };
    let mut notes = vec![
        "one pass: every sample's label is read and randomised exactly once (parallel composition over samples)"
            .to_string(),
    ];
    if mechanism.needs_prior() {
        notes.push(
            "each sample's prior does not depend on its own label (public, or computed from other samples' releases)"
                .into(),
        );
    }
    if !debias {
        notes.push("plain (not debiased) gradients on the randomised labels: biased, same privacy".into());
    }
    Guarantee {
        eps,
        delta: 0.0,
        model: PrivacyModel::Central,
        unit: PrivacyUnit::Item,
        neighbouring: Neighbouring::LabelChange,
        mechanism: name,
        noise: noise.source(),
        assumptions: Assumptions {
            notes,
            ..Assumptions::default()
        },
    }
}

fn check_theta0(theta0: Option<&[f64]>, p: usize) -> Result<Vec<f64>> {
    match theta0 {
        None => Ok(vec![0.0; p]),
        Some(t) => {
            if t.len() != p {
                return Err(Error::Shape(format!("theta0 has {} entries, expected {p}", t.len())));
            }
            if let Some(j) = t.iter().position(|v| !v.is_finite()) {
                return Err(Error::param("theta0", format!("entry {j} is not finite ({})", t[j])));
            }
            Ok(t.to_vec())
        }
    }
}

/// The checks of [`lp_sgd`] beyond [`LpSgdOptions::validate`]: a bounded set for the theory
/// step, and a prior of `n × K` rows exactly when the mechanism needs one.
fn check_inputs<M: LabelModel>(model: &M, opts: &LpSgdOptions, prior: Option<&Prior>) -> Result<()> {
    let (n, kk) = (model.n(), model.num_labels());
    if matches!(opts.step, LpStep::Theory(_)) && opts.set.radius().is_none() {
        return Err(Error::param(
            "step",
            format!(
                "the theory step η = D/(G√t) needs a bounded set (ball or theta-b, D = 2B); the set is `{}`",
                opts.set.name()
            ),
        ));
    }
    match (opts.mechanism.needs_prior(), prior) {
        (true, None) => Err(Error::param(
            "prior",
            format!("--label-mechanism {} needs a per-sample prior", opts.mechanism.name()),
        )),
        (false, Some(_)) => Err(Error::param(
            "prior",
            format!("--label-mechanism {} takes no prior", opts.mechanism.name()),
        )),
        (true, Some(pr)) if pr.k != kk || pr.n() != n => Err(Error::Shape(format!(
            "the prior is {} × {}, expected n × K = {n} × {kk}",
            pr.n(),
            pr.k
        ))),
        _ => Ok(()),
    }
}

/// LP-Normal-SGD's guarantee (Ghazi et al. (2021), Alg. 6 and Prop. 11: `(ε, δ)`, one
/// Gaussian step per sample) and its report, from the calibration `(σ, Δ)` and the pass's
/// statistics over `n` steps.
fn normal_release(
    opts: &LpSgdOptions,
    (delta, calibration): (f64, GaussianCalibration),
    (sigma, sens): (f64, f64),
    st: &pass::NormalStats,
    n: usize,
    rng: &NoiseRng,
) -> (Guarantee, NormalReport) {
    let g = Guarantee {
        eps: opts.eps,
        delta,
        model: PrivacyModel::Central,
        unit: PrivacyUnit::Item,
        neighbouring: Neighbouring::LabelChange,
        mechanism: "LP-Normal-SGD (Ghazi et al. 2021, Alg. 6): Gaussian noise on the label-dependent coordinates of each sample's gradient, one step per sample",
        noise: rng.source(),
        assumptions: Assumptions {
            radius: opts.set.radius(),
            notes: vec![
                format!(
                    "per-step Gaussian mechanism on Q(G_y − G_0): sensitivity Δ = {sens:e} (checked at every step; largest realised {:e}), σ = {sigma:e} ({} calibration)",
                    st.max_sens,
                    calibration.name()
                ),
                "one pass: every sample is used in exactly one step (parallel composition over samples)".into(),
            ],
            ..Assumptions::default()
        },
    };
    let report = NormalReport {
        sigma,
        sensitivity: sens,
        max_realised_sensitivity: st.max_sens,
        calibration,
        rank_min: if st.rank_min == usize::MAX { 0 } else { st.rank_min },
        rank_max: st.rank_max,
        rank_mean: st.rank_sum as f64 / n as f64,
    };
    (g, report)
}

/// One pass of label-private SGD over the samples of `model` in data order (module docs).
/// `prior` (`n × K` rows) is required by [`LabelMechanism::RrTopK`] and
/// [`LabelMechanism::RrWithPrior`] and refused by the others; its cost, if any, is composed into
/// the guarantee (basic composition). All randomness comes from `rng`.
///
/// When [`LpSgdOptions::interrupt`] is set during the pass (checked before the first step and
/// then every 256 steps), the pass stops there: the fit is the last iterate so far
/// with the labels released so far, its report [`Termination::Interrupted`] with the steps
/// taken, and it carries no guarantee ([`Fit::no_guarantee`] says so).
///
/// # Errors
/// [`Error::InvalidParam`] for invalid options, a missing or misplaced prior, `k > K`, a theory
/// step without a bounded set or without a Lipschitz bound, a non-finite `theta0`;
/// [`Error::Shape`] for sizes that do not match; [`Error::Privacy`] when LP-Normal-SGD meets a
/// sample whose label sensitivity exceeds `Δ` (nothing is returned);
/// [`Error::Numerical`] if the iterate becomes non-finite.
pub fn lp_sgd<M: LabelModel>(
    model: &M,
    opts: &LpSgdOptions,
    prior: Option<&Prior>,
    theta0: Option<&[f64]>,
    rng: &mut NoiseRng,
) -> Result<Fit<LabelSgdDetail>> {
    let start = Instant::now();
    opts.validate()?;
    let (n, p) = (model.n(), model.dim());
    check_inputs(model, opts, prior)?;
    let mut theta = check_theta0(theta0, p)?;
    opts.set.project(&mut theta);
    let lipschitz = resolve_lipschitz(model, opts.lipschitz, opts.step)?;
    let normal = match opts.mechanism {
        LabelMechanism::Normal {
            delta,
            calibration,
            sensitivity,
        } => Some(normal_calibration(model, opts.eps, delta, calibration, sensitivity)?),
        _ => None,
    };
    let ps = PassSetup {
        eps: opts.eps,
        mechanism: opts.mechanism,
        set: opts.set,
        step: opts.step,
        lipschitz,
        debias: opts.debias,
        rank_tol: opts.rank_tol,
        priors: prior.map(|pr| &pr.rows[..]),
        normal,
        interrupt: opts.interrupt.as_deref(),
    };
    let visits: Vec<Visit<'_>> = (0..n).map(Visit::Fresh).collect();
    let out = run_pass(model, &ps, &visits, &mut theta, 0, rng)?;
    let (guarantee, normal_report) = match (opts.mechanism, normal, out.normal) {
        (LabelMechanism::Normal { delta, calibration, .. }, Some(cal), Some(st)) => {
            let (g, report) = normal_release(opts, (delta, calibration), cal, &st, out.steps, rng);
            (g, Some(report))
        }
        _ => (rr_guarantee(opts.eps, opts.mechanism, opts.debias, rng), None),
    };
    let guarantee = match prior.and_then(|pr| pr.guarantee.as_ref()) {
        Some(pg) => pg.compose(&guarantee)?,
        None => guarantee,
    };
    let mean_k = if out.released.is_empty() {
        f64::NAN
    } else {
        out.sum_k / out.released.len() as f64
    };
    let report = SolveReport::completed("label-sgd", theta.clone(), out.steps, start.elapsed());
    let detail = LabelSgdDetail {
        released: out.released,
        mean_k,
        lipschitz,
        normal: normal_report,
    };
    let mut fit = Fit::new(theta, report, detail);
    fit.guarantee = Some(guarantee);
    if out.interrupted {
        fit.interrupted(out.steps, Some(n));
    }
    Ok(fit)
}

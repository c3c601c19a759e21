//! Pointwise losses `ℓ(t; y)` on a score `t = xᵀθ` and a binary label `y ∈ {0, 1}`.
//!
//! A loss never sees the features: the [`Objective`](crate::objective::Objective) lifts it
//! (`∇ = Xᵀℓ'`, `∇² = Xᵀ diag(ℓ'') X`). Each loss gives scalar `value`/`d1`/`d2` (reference
//! implementations on std/libm functions) and a batched SIMD evaluation, [`Loss::eval_simd`],
//! that the fused kernels call inside one `pulp` dispatch per row block.
//!
//! | loss | `ℓ(t; y)` | convex | bounded below | paper |
//! |---|---|---|---|---|
//! | [`Logistic`] (`mle`) | `softplus((1−2y)t)` | yes | yes (≥ 0) | Chowdhury, Zhou & Natarajan (2024), eq. 8 |
//! | [`RrNoisyChannel`] (`mle-rr`) | `−log p̃_y(t)`, `p̃₁ = σ̄_ε + c_ε σ(t)` | only for `|t| ≤ ε/2` | yes | Chowdhury, Zhou & Natarajan (2024), eq. 3 |
//! | [`RrDebiased`] (`debiased-rr`) | `c_ε softplus(s) + σ̄_ε s`, `s = (1−2y)t` | yes | **no** | Chowdhury, Zhou & Natarajan (2024), eqs. 4–5 |
//! | [`Probit`] (`probit`) | `−log Φ((2y−1)t)` | yes | yes | Chowdhury, Zhou & Natarajan (2024), Sec. 4.4 |
//! | [`ProbitRrNoisyChannel`] (`probit-rr`) | `−log(σ̄_ε + c_ε Φ(s))`, `s = (2ỹ−1)t` | no | yes | Chowdhury, Zhou & Natarajan (2024), Sec. 4.4 with eq. 3 |
//! | [`ProbitRrDebiased`] (`debiased-probit`) | `σ_ε P(s) − σ̄_ε P(−s)`, `P = −log Φ` | no | **no** | Chowdhury, Zhou & Natarajan (2024), Secs. 4.3–4.4 (the SGD-RR gradient) |
//!
//! with `σ_ε = σ(ε)`, `σ̄_ε = σ(−ε)`, `c_ε = tanh(ε/2)` (computed with `tanh`:
//! `2σ(ε) − 1` cancels for small `ε`).
//!
//! K-wise (Plackett–Luce) losses of the `K` scores of a group are [`GroupLoss`]es
//! (`group`): [`PlTop1`] (`pl-top1`), [`PlRanking`] (`pl-ranking`), [`PlKrrDebiased`]
//! (`pl-krr`).
//! All forms are stable: finite and accurate for `|t|` up to `1e3` and beyond.

pub(crate) mod group;
mod logistic;
mod plackett_luce;
mod probit;
mod probit_rr;
mod rr;

pub use group::{GroupLoss, GroupLossSpec};
pub use logistic::Logistic;
pub use plackett_luce::{PlKrrDebiased, PlRanking, PlTop1};
pub use probit::Probit;
pub use probit_rr::{ProbitRrDebiased, ProbitRrNoisyChannel};
pub use rr::{RrConstants, RrDebiased, RrNoisyChannel};

use crate::error::{check_eps, Error, Result};
/// The SIMD context a [`Loss::eval_simd`] runs in (`pulp`'s), re-exported so that a loss
/// written outside the crate can name it and call its vector operations.
pub use pulp::Simd;
use pulp::{Arch, WithSimd};

/// Which outputs a batched evaluation should write. `None` outputs are not computed.
#[derive(Debug, Default)]
pub struct LossOut<'a> {
    /// `ℓ(t_i; y_i)`.
    pub value: Option<&'a mut [f64]>,
    /// `ℓ'(t_i; y_i)`.
    pub d1: Option<&'a mut [f64]>,
    /// `ℓ''(t_i; y_i)`.
    pub d2: Option<&'a mut [f64]>,
}

/// A pointwise loss of a score and a binary label. See the module docs.
pub trait Loss: Send + Sync + Clone + std::fmt::Debug {
    /// Convex in `t` for every label and every `t`.
    const CONVEX: bool;
    /// Bounded below in `t` for every label.
    const BOUNDED_BELOW: bool;
    /// The CLI name (`mle`, `mle-rr`, `debiased-rr`, `probit`, `probit-rr`, `debiased-probit`).
    fn name(&self) -> &'static str;
    /// `ℓ(t; y)`.
    fn value(&self, t: f64, y: u8) -> f64;
    /// `∂ℓ/∂t`.
    fn d1(&self, t: f64, y: u8) -> f64;
    /// `∂²ℓ/∂t²`.
    fn d2(&self, t: f64, y: u8) -> f64;
    /// The recession function `ℓ∞(t; y) = lim_{r→∞} ℓ(r t; y)/r` (positively homogeneous; may
    /// be `+∞`). For a convex loss, `F(θ + r v) − F(θ) ≤ r·F∞(v)` for all `r ≥ 0`, so a direction
    /// with `F∞(v) < 0` certifies that the objective is unbounded below (no minimiser).
    fn recession(&self, t: f64, y: u8) -> f64;
    /// Batched evaluation inside a SIMD context, which every pass over the rows calls. `y`
    /// holds the labels as `0.0`/`1.0`; all slices have the same length; only the outputs
    /// `out` asks for are written. The default loops over [`Loss::value`], [`Loss::d1`] and
    /// [`Loss::d2`] (correct for any loss); a vectorised override with [`map_lanes`] and the
    /// stable lane functions of [`crate::math::simd`] (as the library's losses do) makes the
    /// passes memory-bound rather than bound by the scalar `exp`/`log1p`.
    fn eval_simd<S: Simd>(&self, simd: S, t: &[f64], y: &[f64], out: LossOut<'_>) {
        let _ = simd;
        eval_scalar(self, t, y, out);
    }
    /// The privacy scale `c` of the loss for the SGD theory step `λ = γκc` (Chowdhury, Zhou &
    /// Natarajan (2024), Thm 4.5; `crate::solver::sgd::step`): the factor by which randomized
    /// response shrinks the expected gradient, `E[∇ℓ̂ | y] = c ∇ℓ_MLE` — `c_ε = tanh(ε/2)` for
    /// the RR losses (Sec. 4.3), `1` for the likelihoods on clear labels. `None` (the default):
    /// the loss states no such constant, and the theory step rules refuse it.
    fn privacy_scale(&self) -> Option<f64> {
        None
    }
    /// The curvature floor `γ(T) = inf_{|t| ≤ T} ψ''(t)` of the clear-label negative
    /// log-likelihood `ψ` of the loss's link, for the SGD theory step: `σ'(T)` for the logistic
    /// link (also the RR losses'), `A(T)` for probit. `None` (the default): the loss states
    /// none, and the theory step rules refuse it.
    fn link_curvature_floor(&self, tmax: f64) -> Option<f64> {
        let _ = tmax;
        None
    }
    /// An upper bound on `|ℓ''(t; y)|` over all `t` and labels (the SGD stability check of the
    /// data-dependent step rules, [`crate::solver::sgd::StepRule`]): `1/4` for the logistic
    /// loss, `c_ε/4` for the debiased RR loss, `1` for probit and the noisy-channel RR loss.
    fn curvature_sup(&self) -> f64;
    /// A sufficient certificate that `ℓ(·; y)` is convex on `|t| ≤ tmax` for both labels.
    fn convex_on(&self, tmax: f64) -> bool {
        let _ = tmax;
        Self::CONVEX
    }
    /// Batched evaluation with run-time SIMD dispatch (convenience; the kernels call
    /// [`Loss::eval_simd`] directly).
    fn eval_batch(&self, t: &[f64], y: &[u8], out: LossOut<'_>) {
        assert_eq!(t.len(), y.len(), "eval_batch: t and y lengths differ");
        let yf: Vec<f64> = y.iter().map(|&v| v as f64).collect();
        struct Op<'a, L: Loss> {
            loss: &'a L,
            t: &'a [f64],
            y: &'a [f64],
            out: LossOut<'a>,
        }
        impl<L: Loss> WithSimd for Op<'_, L> {
            type Output = ();
            #[inline(always)]
            fn with_simd<S: Simd>(self, simd: S) {
                self.loss.eval_simd(simd, self.t, self.y, self.out)
            }
        }
        Arch::new().dispatch(Op {
            loss: self,
            t,
            y: &yf,
            out,
        });
    }
}

/// [`Loss::eval_simd`]'s default: the scalar formulas, one element at a time.
fn eval_scalar<L: Loss>(loss: &L, t: &[f64], y: &[f64], out: LossOut<'_>) {
    debug_assert_eq!(t.len(), y.len());
    let label = |v: f64| u8::from(v > 0.5);
    let LossOut { value, d1, d2 } = out;
    if let Some(out) = value {
        out.iter_mut()
            .zip(t.iter().zip(y))
            .for_each(|(o, (&t, &y))| *o = loss.value(t, label(y)));
    }
    if let Some(out) = d1 {
        out.iter_mut()
            .zip(t.iter().zip(y))
            .for_each(|(o, (&t, &y))| *o = loss.d1(t, label(y)));
    }
    if let Some(out) = d2 {
        out.iter_mut()
            .zip(t.iter().zip(y))
            .for_each(|(o, (&t, &y))| *o = loss.d2(t, label(y)));
    }
}

/// Applies `f(t, y, want) -> [value, d1, d2]` lane-wise over SIMD chunks of `t` and `y` (the
/// labels as `0.0`/`1.0`), storing the outputs `out` asks for; the tail shorter than a vector
/// is loaded zero-padded (the padding lanes' results are dropped). `want = (value, d1, d2)` lets `f` skip unneeded work. The building block of a
/// vectorised [`Loss::eval_simd`]: `f` computes the loss's formulas on whole vectors with the
/// `simd` operations (the stable ones in [`crate::math::simd`]).
#[inline(always)]
pub fn map_lanes<S: Simd, F>(simd: S, t: &[f64], y: &[f64], out: LossOut<'_>, f: F)
where
    F: Fn(S::f64s, S::f64s, (bool, bool, bool)) -> [S::f64s; 3],
{
    debug_assert_eq!(t.len(), y.len());
    let want = (out.value.is_some(), out.d1.is_some(), out.d2.is_some());
    let lanes = S::F64_LANES;
    let len = t.len();
    let full = len / lanes * lanes;
    let LossOut {
        mut value,
        mut d1,
        mut d2,
    } = out;
    let (th, _) = S::as_simd_f64s(&t[..full]);
    let (yh, _) = S::as_simd_f64s(&y[..full]);
    {
        let mut vh = value.as_deref_mut().map(|o| S::as_mut_simd_f64s(&mut o[..full]).0);
        let mut g1 = d1.as_deref_mut().map(|o| S::as_mut_simd_f64s(&mut o[..full]).0);
        let mut g2 = d2.as_deref_mut().map(|o| S::as_mut_simd_f64s(&mut o[..full]).0);
        for (j, (&tv, &yv)) in th.iter().zip(yh).enumerate() {
            let r = f(tv, yv, want);
            if let Some(o) = vh.as_deref_mut() {
                o[j] = r[0];
            }
            if let Some(o) = g1.as_deref_mut() {
                o[j] = r[1];
            }
            if let Some(o) = g2.as_deref_mut() {
                o[j] = r[2];
            }
        }
    }
    if full < len {
        let tv = simd.partial_load_f64s(&t[full..]);
        let yv = simd.partial_load_f64s(&y[full..]);
        let r = f(tv, yv, want);
        if let Some(o) = value {
            simd.partial_store_f64s(&mut o[full..], r[0]);
        }
        if let Some(o) = d1 {
            simd.partial_store_f64s(&mut o[full..], r[1]);
        }
        if let Some(o) = d2 {
            simd.partial_store_f64s(&mut o[full..], r[2]);
        }
    }
}

/// A loss chosen at run time (CLI, configuration files). Use [`with_loss!`](crate::with_loss)
/// to turn it into a concrete [`Loss`] type.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(tag = "loss", rename_all = "kebab-case")
)]
pub enum LossSpec {
    /// Logistic (BTL) likelihood on clear labels.
    Mle,
    /// Noisy-channel likelihood of randomized-response labels with privacy level `eps`.
    MleRr {
        /// RR privacy level ε > 0.
        eps: f64,
    },
    /// Debiased RR loss with privacy level `eps`.
    DebiasedRr {
        /// RR privacy level ε > 0.
        eps: f64,
    },
    /// Thurstone (probit) likelihood on clear labels.
    Probit,
    /// Noisy-channel Thurstone (probit) likelihood of randomized-response labels with privacy
    /// level `eps` ([`ProbitRrNoisyChannel`]).
    ProbitRr {
        /// RR privacy level ε > 0.
        eps: f64,
    },
    /// Debiased Thurstone (probit) loss with privacy level `eps` ([`ProbitRrDebiased`]).
    DebiasedProbit {
        /// RR privacy level ε > 0.
        eps: f64,
    },
}

impl LossSpec {
    /// Builds a spec from its CLI name; `eps` is required by (and only allowed for) the RR losses.
    pub fn parse(name: &str, eps: Option<f64>) -> Result<Self> {
        let need_eps = |eps: Option<f64>| -> Result<f64> {
            let e = eps.ok_or_else(|| Error::param("eps", format!("loss `{name}` needs --eps")))?;
            check_eps(e)?;
            Ok(e)
        };
        let spec = match name {
            "mle" => LossSpec::Mle,
            "probit" => LossSpec::Probit,
            "mle-rr" => LossSpec::MleRr { eps: need_eps(eps)? },
            "debiased-rr" => LossSpec::DebiasedRr { eps: need_eps(eps)? },
            "probit-rr" => LossSpec::ProbitRr { eps: need_eps(eps)? },
            "debiased-probit" => LossSpec::DebiasedProbit { eps: need_eps(eps)? },
            other => {
                return Err(Error::param(
                    "loss",
                    format!(
                    "unknown loss `{other}` (expected mle, mle-rr, debiased-rr, probit, probit-rr or debiased-probit)"
                ),
                ))
            }
        };
        if matches!(spec, LossSpec::Mle | LossSpec::Probit) {
            if let Some(e) = eps {
                return Err(Error::param(
                    "eps",
                    format!("loss `{name}` takes no privacy level (got {e})"),
                ));
            }
        }
        Ok(spec)
    }
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            LossSpec::Mle => "mle",
            LossSpec::MleRr { .. } => "mle-rr",
            LossSpec::DebiasedRr { .. } => "debiased-rr",
            LossSpec::Probit => "probit",
            LossSpec::ProbitRr { .. } => "probit-rr",
            LossSpec::DebiasedProbit { .. } => "debiased-probit",
        }
    }
    /// The privacy level, for the RR losses (logistic and probit).
    pub fn eps(&self) -> Option<f64> {
        match *self {
            LossSpec::MleRr { eps }
            | LossSpec::DebiasedRr { eps }
            | LossSpec::ProbitRr { eps }
            | LossSpec::DebiasedProbit { eps } => Some(eps),
            _ => None,
        }
    }
}

/// Evaluates `$body` with `$l` bound to the concrete loss a [`LossSpec`] names
/// (monomorphised: one copy of `$body` per loss type).
///
/// ```
/// use privpref::{loss::{Loss, LossSpec}, with_loss};
/// let spec = LossSpec::parse("debiased-rr", Some(1.0)).unwrap();
/// let v = with_loss!(spec, |l| l.value(0.0, 1)).unwrap();
/// assert!((v - (0.5f64).tanh() * 2f64.ln()).abs() < 1e-15);
/// ```
#[macro_export]
macro_rules! with_loss {
    ($spec:expr, |$l:ident| $body:expr) => {{
        match $spec {
            $crate::loss::LossSpec::Mle => {
                let $l = $crate::loss::Logistic;
                Ok::<_, $crate::Error>($body)
            }
            $crate::loss::LossSpec::Probit => {
                let $l = $crate::loss::Probit;
                Ok($body)
            }
            $crate::loss::LossSpec::MleRr { eps } => match $crate::loss::RrNoisyChannel::new(eps) {
                Ok($l) => Ok($body),
                Err(e) => Err(e),
            },
            $crate::loss::LossSpec::DebiasedRr { eps } => match $crate::loss::RrDebiased::new(eps) {
                Ok($l) => Ok($body),
                Err(e) => Err(e),
            },
            $crate::loss::LossSpec::ProbitRr { eps } => match $crate::loss::ProbitRrNoisyChannel::new(eps) {
                Ok($l) => Ok($body),
                Err(e) => Err(e),
            },
            $crate::loss::LossSpec::DebiasedProbit { eps } => match $crate::loss::ProbitRrDebiased::new(eps) {
                Ok($l) => Ok($body),
                Err(e) => Err(e),
            },
        }
    }};
}

//! The regulariser `λ` of `M = Σ̃ + λI` and the confidence radius `Γ`, in explicit form: the
//! papers state these radii up to unspecified absolute constants, and the rules below keep the
//! constants of their proofs (with the corrections listed in `docs/papers.md`). Every constant is
//! a field with a default, nothing is hidden in an `O(·)`. Each rule returns a [`Calibration`]
//! listing its terms.
//!
//! | rule | estimator | λ | Γ | source |
//! |---|---|---|---|---|
//! | [`private_mle_radius`] | "Provable protection of human judgements" (anon., 2025), Alg. 1 + Alg. 2 (`θ̃`, `Σ̃`) | `2s_G(2√d + √(2 ln(1/η)))` | `√(3/2)(R1+…+R5)` | Lemmas A.8–A.11 of that paper, constants kept |
//! | [`local_radius`] | MLE, debiased RR (Chowdhury, Zhou & Natarajan (2024); Zhou, Wu & Orabona (2025)), CTL/LTC/CLC corruption | `X_max² d ln(n/η)/n` | `2f/γ + 2B√λ` | Zhou, Wu & Orabona (2025), Thm 5.4 and Lemma H.1, constants kept, `‖x‖ ≤ X_max` |
//! | [`objpert_radius`] | objective perturbation (Chowdhury, Zhou & Natarajan (2024), Alg. 2) | as `local_radius` | `2f/γ + B√(4λ + β/(γn))` | derived here (below) |
//! | [`local_rr_radius`] | Chowdhury, Zhou & Natarajan (2024), eq. (7), the paper's form | user | `(C/γ)coth(ε/2)√((d+ln(1/η))/n) + C'√λB` | that paper, with caller-supplied `C`, `C'` |
//!
//! [`fit_calibration`] picks the rule that matches a fit ([`FitRule`]: the local rule for the MLE
//! and debiased RR, the objective-perturbation radius, the private-MLE radius) from its public
//! inputs, with `Σ̂ = (1/n)Σxxᵀ` and `X_max` of label-DP fits from [`design_moments`]; the CLI's
//! `privpref policy` and the Python `pessimistic_policy` both build their confidence sets so.
//!
//! Never plug realised noise into `Γ` (it would leak): every input here is public.

use crate::data::{FeatureBound, Features};
use crate::error::{check_radius, Error, Result};
use crate::privacy::calibrate::logistic_curvature;
use crate::privacy::calibrate_kwise::{calibrate_kwise_private_mle, check_k_stages};
use crate::privacy::{calibrate_private_mle, PrivateMleCalibration, PrivateMleParams};

/// `λ`, `Γ` and the terms that make up `Γ` (names as in the formulas of each rule).
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// `λ` of `M = Σ̃ + λI`.
    pub lambda: f64,
    /// The radius `Γ` (after the multiplier).
    pub radius: f64,
    /// The curvature constant `γ` used.
    pub gamma: f64,
    /// The rule's name.
    pub rule: &'static str,
    /// `(name, value)` of each term of `Γ` before the multiplier.
    pub terms: Vec<(&'static str, f64)>,
}

fn check_eta(eta: f64) -> Result<()> {
    if eta > 0.0 && eta < 1.0 {
        Ok(())
    } else {
        Err(Error::param(
            "eta",
            format!("failure probability must be in (0, 1), got {eta}"),
        ))
    }
}

fn check_mult(name: &'static str, m: f64) -> Result<()> {
    if m.is_finite() && m > 0.0 {
        Ok(())
    } else {
        Err(Error::param(name, format!("must be finite and > 0, got {m}")))
    }
}

fn check_nd(n: usize, d: usize) -> Result<()> {
    if n == 0 || d == 0 {
        return Err(Error::Shape(format!("need n >= 1 and d >= 1, got n = {n}, d = {d}")));
    }
    Ok(())
}

/// Inputs of [`private_mle_radius`] besides the calibration of Algorithm 1 of "Provable protection
/// of human judgements" (anon., 2025).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PrivateMleRadius {
    /// Sample size `n`.
    pub n: usize,
    /// Dimension `d`.
    pub d: usize,
    /// Feature bound (`‖φ‖ ≤ L` per step, horizon `H`): `R4` uses `L = H·L_step`.
    pub feature_bound: FeatureBound,
    /// `B` of `Θ_B`.
    pub radius: f64,
    /// Failure probability `η` (default 0.05).
    pub eta: f64,
    /// `F_multiplier` (default 1; `< 1` gives a tighter, non-guaranteed set).
    pub multiplier: f64,
    /// `K` alternatives per sample (default 2, pairs; `K > 2`: the K-wise private MLE, with
    /// `L` the bound on each alternative `‖φ‖ ≤ L`).
    pub k: usize,
    /// `J` ranked stages of the Plackett–Luce loss (default 1; `1 ≤ J ≤ K − 1`).
    pub stages: usize,
}

impl PrivateMleRadius {
    /// `n`, `d`, the feature bound and `B`, with `η = 0.05`, multiplier 1, pairs (`K = 2`,
    /// `J = 1`).
    pub fn new(n: usize, d: usize, feature_bound: FeatureBound, radius: f64) -> Self {
        PrivateMleRadius {
            n,
            d,
            feature_bound,
            radius,
            eta: 0.05,
            multiplier: 1.0,
            k: 2,
            stages: 1,
        }
    }
}

/// The explicit radius for `θ̃` of Algorithm 1 and `Σ̃` of Algorithm 2 of "Provable protection of
/// human judgements" (anon., 2025), `λ = cal.lambda`. The paper hides the constants; these are
/// the constants of its proof, with its typos corrected (eqs. (12)–(14)) and `R5` added for the
/// inexact solve, which the proof of Lemma A.11 omits:
///
/// with `t = √d + √(2 ln(4/η))`,
/// * `R1 = t/(γ√n) + 2B√λ` (non-private MLE error),
/// * `R2 = B√(2α/γ)` (ridge bias, eq. 12 fixed),
/// * `R3 = 2 s_b t/(n√(γα))` (objective noise, eq. 13 fixed),
/// * `R4 = √(4L² + λ) ν t` (output noise, eq. 14 fixed; `L` = [`FeatureBound::value`], so the
///   Hessian bound `4H²L²` for trajectories),
/// * `R5 = √(2β/γ)` (inexact solve),
/// * `Γ = multiplier · √(3/2)(R1 + R2 + R3 + R4 + R5)`.
///
/// **K-wise** (Thm 4.4 of that paper, whose `O(·)` hides every `K`-dependent constant; derived
/// here): with `cal` of [`crate::privacy::calibrate_kwise::calibrate_kwise_private_mle`] (`γ_K`,
/// the `G = 2JL`-based `s_b`, `α`, `β`, `ν`, `λ` from the K-wise `s_G`) and
/// `Σ_{D_K} = (2/(nK(K−1)))Σᵢ Σ_{k<l} x_kl x_klᵀ`, two terms change:
/// * `R1 = √(J(K−1))·t/(γ_K√n) + 2B√λ`. The stage-`j` gradient of a sample is
///   `Φ̃ᵀ(p⁽ʲ⁾ − e_{rⱼ})` with the alternatives centred (`Φ̃ = Φ − 1φ̄ᵀ`, as `1ᵀ(p − e) = 0`), so
///   `∇ℓ_{D_K}(θ*) = Φ̃ᵀv/n` with `Φ̃ᵀΦ̃ = n((K−1)/2)Σ_{D_K}`; each stage is, given the earlier
///   ones, mean zero with range `≤ √2‖α‖` along `α`, so `v` is sub-Gaussian with `σ² = J/2`
///   (Hoeffding's lemma, chained over the `J` stages), and Hsu, Kakade & Zhang (2012), Thm 1,
///   gives `‖∇ℓ(θ*)‖_{(Σ_{D_K}+λI)⁻¹} ≤ √(J(K−1))·t/(2√n)`. As in the pairwise `R1` (where
///   the same argument gives `t/(2√n)`), the factor 2 is not taken; `K = 2, J = 1` is the
///   pairwise `R1` bit for bit;
/// * `R4 = √(2KL²/(K−1) + λ)·ν·t`: `‖Σ_{D_K}‖ ≤ (2/(K−1))Σ_k‖φ̃_k‖² ≤ 2KL²/(K−1)` (`4L²` at
///   `K = 2`).
///
/// # Errors
/// Invalid `η`, multiplier, `B`, `n`, `d`, `K ∉ 2..=256` or `J ∉ 1..K`.
pub fn private_mle_radius(cal: &PrivateMleCalibration, p: &PrivateMleRadius) -> Result<Calibration> {
    check_eta(p.eta)?;
    check_mult("radius-multiplier", p.multiplier)?;
    check_radius(p.radius)?;
    check_nd(p.n, p.d)?;
    check_k_stages(p.k, p.stages)?;
    let (nf, df, kf, jf) = (p.n as f64, p.d as f64, p.k as f64, p.stages as f64);
    let t = df.sqrt() + (2.0 * (4.0 / p.eta).ln()).sqrt();
    let (g, lam, b, l) = (cal.gamma, cal.lambda, p.radius, p.feature_bound.value());
    let r1 = (jf * (kf - 1.0)).sqrt() * t / (g * nf.sqrt()) + 2.0 * b * lam.sqrt();
    let r2 = b * (2.0 * cal.alpha / g).sqrt();
    let r3 = 2.0 * cal.objective_noise_std * t / (nf * (g * cal.alpha).sqrt());
    let r4 = (2.0 * kf * l * l / (kf - 1.0) + lam).sqrt() * cal.output_noise_std * t;
    let r5 = (2.0 * cal.accuracy / g).sqrt();
    let radius = p.multiplier * 1.5f64.sqrt() * (r1 + r2 + r3 + r4 + r5);
    Ok(Calibration {
        lambda: lam,
        radius,
        gamma: g,
        rule: if p.k == 2 {
            "explicit radius of the private MLE (anon., 2025), constants of its proof"
        } else {
            "explicit radius of the K-wise private MLE (anon., 2025, Thm 4.4), K-dependent constants derived here"
        },
        terms: vec![("R1", r1), ("R2", r2), ("R3", r3), ("R4", r4), ("R5", r5)],
    })
}

/// The order of corruption and local privacy (Zhou, Wu & Orabona (2025), Def. 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CorruptionOrder {
    /// Corruption, then randomized response.
    Ctl,
    /// Randomized response, then corruption (the conservative choice when the order is unknown).
    #[default]
    Ltc,
    /// Corruption (fraction `α₁` = [`LocalRadius::corruption`]), then randomized response, then
    /// corruption again (fraction `α₂` = [`LocalRadius::corruption_after`]).
    Clc,
}

/// Inputs of [`local_radius`] (Zhou, Wu & Orabona (2025), Thm 5.4 and Sec. 6).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LocalRadius {
    /// RR privacy level `ε` of the labels; `None` for clean labels (non-private MLE).
    pub eps: Option<f64>,
    /// Corruption fraction `α ∈ [0, ½)` (default 0); for CLC, `α₁`, the fraction corrupted
    /// before randomisation.
    pub corruption: f64,
    /// For CLC only, `α₂ ∈ [0, ½)`: the fraction corrupted after randomisation (default 0; must
    /// be 0 for CTL and LTC).
    pub corruption_after: f64,
    /// CTL, LTC or CLC (default LTC).
    pub order: CorruptionOrder,
    /// Sample size `n`.
    pub n: usize,
    /// Dimension `d`.
    pub d: usize,
    /// `X_max = max_i ‖x_i‖` (public under label DP).
    pub x_max: f64,
    /// `B'` of the estimator's `Θ_{B'}` (and of `θ_true`).
    pub radius: f64,
    /// Failure probability (the paper's `δ`; default 0.05).
    pub eta: f64,
    /// Multiplier of the default `λ` (default 1).
    pub lambda_multiplier: f64,
    /// Multiplier of `Γ` (default 1).
    pub multiplier: f64,
}

impl LocalRadius {
    /// Defaults: no corruption, LTC, `η = 0.05`, multipliers 1.
    pub fn new(eps: Option<f64>, n: usize, d: usize, x_max: f64, radius: f64) -> Self {
        LocalRadius {
            eps,
            corruption: 0.0,
            corruption_after: 0.0,
            order: CorruptionOrder::Ltc,
            n,
            d,
            x_max,
            radius,
            eta: 0.05,
            lambda_multiplier: 1.0,
            multiplier: 1.0,
        }
    }
}

/// `γ = 1/(2 + e^{X_max B} + e^{−X_max B}) = min_{|u| ≤ X_max B} σ'(u)` : the paper's
/// `γ = 1/(2 + e^{B'} + e^{−B'})` assumes `‖x‖ ≤ 1`, but `‖φ‖ ≤ 1` only gives `‖x‖ ≤ 2`, so the
/// public `X_max = maxᵢ ‖xᵢ‖` is used instead (Zhou, Wu & Orabona (2025), Remark 5.2, Thm 5.4, Thm
/// 6.3).
pub fn curvature_xmax(x_max: f64, radius: f64) -> f64 {
    logistic_curvature(x_max / 2.0, radius)
}

/// Default `λ = multiplier · X_max² d ln(n/η)/n` (Zhou, Wu & Orabona (2025), Cor. 4.4 and
/// Thm 6.1 need `λ ≥ Ω(d ln(n/δ)/n)`; Lemma H.1 is stated for vectors of norm ≤ 1, hence the
/// factor `X_max²`).
pub fn default_lambda(n: usize, d: usize, x_max: f64, eta: f64, multiplier: f64) -> f64 {
    let nf = n as f64;
    multiplier * x_max * x_max * d as f64 * (nf / eta).ln().max(f64::MIN_POSITIVE) / nf
}

fn check_xmax(x: f64) -> Result<()> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(Error::param(
            "x-max",
            format!("max row norm must be finite and > 0, got {x}"),
        ))
    }
}

/// The explicit radius (Zhou, Wu & Orabona (2025), Thm 5.4, with the constants of its proof
/// kept) for the local (RR-debiased / clean MLE) estimator of their Algorithm 1, which is the
/// debiased RR estimator of Chowdhury, Zhou & Natarajan (2024) up to a positive scale:
/// `c = coth(ε/2)` (`c = 1` for clean labels),
/// * CTL: `f = √α + ((c + 1)/2)(√d + √(2 ln(2/η)))/√n`,
/// * LTC (and clean labels): `f = c√α + (c/2)(√d + √(2 ln(1/η)))/√n`,
/// * CLC with `α₁ > 0`: `f = √α₁ + c√α₂ + ((c + 1)/2)(√d + √(2 ln(2/η)))/√n`; with `α₁ = 0` the
///   process is LTC at `α₂` and the LTC `f` is used ([`clc_f`]),
/// * `Γ = multiplier · (2f/γ + 2B√λ)`, `γ` from [`curvature_xmax`], `λ` from
///   [`default_lambda`].
///
/// # Errors
/// Invalid `ε`, `α ∉ [0, ½)`, `α₂ ∉ [0, ½)` (and `α₂ ≠ 0` outside CLC), CLC without `ε`, `η`,
/// multipliers, `X_max`, `B`, `n`, `d`.
pub fn local_radius(p: &LocalRadius) -> Result<Calibration> {
    check_eta(p.eta)?;
    check_mult("radius-multiplier", p.multiplier)?;
    check_mult("lambda-multiplier", p.lambda_multiplier)?;
    check_radius(p.radius)?;
    check_xmax(p.x_max)?;
    check_nd(p.n, p.d)?;
    if !(p.corruption >= 0.0 && p.corruption < 0.5) {
        return Err(Error::param(
            "corruption",
            format!("must be in [0, 1/2), got {}", p.corruption),
        ));
    }
    if !(p.corruption_after >= 0.0 && p.corruption_after < 0.5) {
        return Err(Error::param(
            "corruption-after",
            format!("must be in [0, 1/2), got {}", p.corruption_after),
        ));
    }
    if p.corruption_after != 0.0 && p.order != CorruptionOrder::Clc {
        return Err(Error::param(
            "corruption-after",
            "a second corruption fraction needs the CLC order (corruption, privacy, corruption)",
        ));
    }
    let c = match p.eps {
        None => 1.0,
        Some(e) => {
            crate::error::check_eps(e)?;
            1.0 / (e / 2.0).tanh()
        }
    };
    let (f, name) = match (p.order, p.eps) {
        (CorruptionOrder::Ctl, Some(_)) => (ctl_f(c, p.corruption, p.n, p.d, p.eta), "f_CTL"),
        (CorruptionOrder::Clc, Some(_)) => (clc_f(c, p.corruption, p.corruption_after, p.n, p.d, p.eta), "f_CLC"),
        (CorruptionOrder::Clc, None) => {
            return Err(Error::param(
                "order",
                "the CLC order (corruption, privacy, corruption) needs the labels' randomized-response eps",
            ))
        }
        _ => (ltc_f(c, p.corruption, p.n, p.d, p.eta), "f_LTC"),
    };
    let gamma = curvature_xmax(p.x_max, p.radius);
    let lambda = default_lambda(p.n, p.d, p.x_max, p.eta, p.lambda_multiplier);
    let t1 = 2.0 * f / gamma;
    let t2 = 2.0 * p.radius * lambda.sqrt();
    Ok(Calibration {
        lambda,
        radius: p.multiplier * (t1 + t2),
        gamma,
        rule: "explicit radius of Zhou, Wu & Orabona (2025), Thm 5.4, constants of its proof",
        terms: vec![(name, f), ("2f/gamma", t1), ("2B sqrt(lambda)", t2)],
    })
}

/// `f` of the CTL order (Zhou, Wu & Orabona (2025), proof of Thm 5.4, eq. (23)): the corruption
/// term `√α` (their Claim E.2 with `ζ = 1`) plus the privacy and standard sub-Gaussian terms,
/// of parameters `c/2` and `1/2`, each at failure probability `η/2`:
/// `f = √α + ((c + 1)/2)(√d + √(2 ln(2/η)))/√n`.
pub fn ctl_f(c: f64, alpha: f64, n: usize, d: usize, eta: f64) -> f64 {
    alpha.sqrt() + 0.5 * (c + 1.0) * tail_factor(d, eta / 2.0) / (n as f64).sqrt()
}

/// `f` of the LTC order (Zhou, Wu & Orabona (2025), proof of Thm 5.4, eq. (24)): the corruption
/// term `c√α` (Claim E.2 with `ζ = c`) plus one sub-Gaussian term of parameter `c/2`:
/// `f = c√α + (c/2)(√d + √(2 ln(1/η)))/√n`.
pub fn ltc_f(c: f64, alpha: f64, n: usize, d: usize, eta: f64) -> f64 {
    c * alpha.sqrt() + 0.5 * c * tail_factor(d, eta) / (n as f64).sqrt()
}

/// `f` of the CLC order, corruption `α₁`, randomized response, corruption `α₂` (Zhou, Wu &
/// Orabona (2025), proof of Thm 5.4, CLC case): the gradient at `θ_true` splits into
/// `c(z − ỹ)` (corruption after RR, `ζ = c`: `c√α₂`), `c(ỹ + σ(ε) − 1) − ȳ` (privacy noise given
/// the corrupted label `ȳ`, parameter `c/2`), `ȳ − y` (corruption before RR, `ζ = 1`: `√α₁`)
/// and `y − σ(θᵀx)` (parameter `1/2`). With the constants of the CTL and LTC cases kept:
/// `f = √α₁ + c√α₂ + ((c + 1)/2)(√d + √(2 ln(2/η)))/√n`, i.e. [`ctl_f`] at `α₁` plus `c√α₂`.
/// The paper states this bound with an unspecified constant `C'`; the constants here are those of
/// the two cases it combines.
///
/// With `α₁ = 0` the process **is** LTC at `α₂`, so [`ltc_f`] applies and is returned (it is
/// smaller: one sub-Gaussian term instead of two). The function is therefore non-decreasing in
/// `α₁` and `α₂`, equals [`ctl_f`] exactly at `α₂ = 0` and [`ltc_f`] exactly at `α₁ = 0`, with a
/// jump at `α₁ = 0⁺` (the privacy and standard terms are then bounded separately).
pub fn clc_f(c: f64, alpha1: f64, alpha2: f64, n: usize, d: usize, eta: f64) -> f64 {
    if alpha1 == 0.0 {
        return ltc_f(c, alpha2, n, d, eta);
    }
    ctl_f(c, alpha1, n, d, eta) + c * alpha2.sqrt()
}

/// `√d + √(2 ln(1/η))`, the sub-Gaussian tail factor of the radius terms.
fn tail_factor(d: usize, eta: f64) -> f64 {
    (d as f64).sqrt() + (2.0 * (1.0 / eta).ln()).sqrt()
}

/// Inputs of [`objpert_radius`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ObjPertRadius {
    /// Sample size `n`.
    pub n: usize,
    /// Dimension `d`.
    pub d: usize,
    /// `X_max = max_i ‖x_i‖` (public under label DP).
    pub x_max: f64,
    /// `B` of `Θ_B`.
    pub radius: f64,
    /// Noise standard deviation `s_w` of `w`.
    pub noise_std: f64,
    /// Ridge `β` of `(β/2n)‖θ‖²`.
    pub ridge: f64,
    /// Failure probability `η` (default 0.05).
    pub eta: f64,
    /// Multiplier of the default `λ`.
    pub lambda_multiplier: f64,
    /// Multiplier of `Γ`.
    pub multiplier: f64,
}

impl ObjPertRadius {
    /// `n`, `d`, `X_max`, `B`, the noise `s_w` and the ridge `β`, with `η = 0.05` and
    /// multipliers 1.
    pub fn new(n: usize, d: usize, x_max: f64, radius: f64, noise_std: f64, ridge: f64) -> Self {
        ObjPertRadius {
            n,
            d,
            x_max,
            radius,
            noise_std,
            ridge,
            eta: 0.05,
            lambda_multiplier: 1.0,
            multiplier: 1.0,
        }
    }
}

/// Radius for objective perturbation (Chowdhury, Zhou & Natarajan (2024), Algorithm 2,
/// `θ̂ = argmin_{Θ_B} ℓ_D + (β/2n)‖θ‖² + ⟨w, θ⟩/n`, `w ~ N(0, s_w²I)`). **Derived here**: the
/// paper's Thm D.5 hides its constants. The derivation follows the proof of Zhou, Wu & Orabona
/// (2025), Thm 5.4: optimality of `θ̂` and restricted strong convexity give
/// `(γ/2)‖Δ‖²_{Σ_D} ≤ (‖∇ℓ_D(θ*)‖_{N⁻¹} + ‖w‖_{N⁻¹}/n)‖Δ‖_N + βB²/(2n)` with `N = Σ_D + λI`;
/// `‖Δ‖²_{Σ_D} ≥ ‖Δ‖²_N − 4λB²`; clean labels make the score ½-sub-Gaussian and
/// `‖w‖ ≤ s_w t` w.p. `1 − η/2` each, so with `t = √d + √(2 ln(2/η))`
/// * `f = t/(2√n) + s_w t/(n√λ)`,
/// * `Γ = multiplier · (2f/γ + B√(4λ + β/(γn)))` (from `x² ≤ ax + b ⇒ x ≤ a + √b`),
///
/// `γ` from [`curvature_xmax`], `λ` from [`default_lambda`].
///
/// # Errors
/// Invalid inputs.
pub fn objpert_radius(p: &ObjPertRadius) -> Result<Calibration> {
    check_eta(p.eta)?;
    check_mult("radius-multiplier", p.multiplier)?;
    check_mult("lambda-multiplier", p.lambda_multiplier)?;
    check_radius(p.radius)?;
    check_xmax(p.x_max)?;
    check_nd(p.n, p.d)?;
    if !(p.noise_std.is_finite() && p.noise_std >= 0.0 && p.ridge.is_finite() && p.ridge >= 0.0) {
        return Err(Error::param("noise-std", "noise std and ridge must be finite and >= 0"));
    }
    let (nf, df) = (p.n as f64, p.d as f64);
    let t = df.sqrt() + (2.0 * (2.0 / p.eta).ln()).sqrt();
    let gamma = curvature_xmax(p.x_max, p.radius);
    let lambda = default_lambda(p.n, p.d, p.x_max, p.eta, p.lambda_multiplier);
    let f_stat = t / (2.0 * nf.sqrt());
    let f_noise = p.noise_std * t / (nf * lambda.sqrt());
    let t1 = 2.0 * (f_stat + f_noise) / gamma;
    let t2 = p.radius * (4.0 * lambda + p.ridge / (gamma * nf)).sqrt();
    Ok(Calibration {
        lambda,
        radius: p.multiplier * (t1 + t2),
        gamma,
        rule: "objective perturbation radius (derived in privpref::policy::radius)",
        terms: vec![
            ("f_stat", f_stat),
            ("f_noise", f_noise),
            ("2f/gamma", t1),
            ("B sqrt(4 lambda + beta/(gamma n))", t2),
        ],
    })
}

/// Chowdhury, Zhou & Natarajan (2024), eq. (7): `r = (C/γ) coth(ε/2) √((d + ln(1/η))/n)
/// + C'√λ B` with the absolute constants `C`, `C'` **supplied by the caller** (the paper gives
/// none), `γ = 1/(2 + e^{2LB} + e^{−2LB})`.
///
/// # Errors
/// Invalid inputs.
#[allow(clippy::too_many_arguments)]
pub fn local_rr_radius(
    c: f64,
    c_prime: f64,
    eps: f64,
    feature_bound: f64,
    radius: f64,
    n: usize,
    d: usize,
    eta: f64,
    lambda: f64,
) -> Result<Calibration> {
    check_mult("C", c)?;
    check_mult("C'", c_prime)?;
    check_mult("lambda", lambda)?;
    crate::error::check_eps(eps)?;
    check_eta(eta)?;
    check_radius(radius)?;
    check_nd(n, d)?;
    let gamma = logistic_curvature(feature_bound, radius);
    let t1 = c / gamma / (eps / 2.0).tanh() * ((d as f64 + (1.0 / eta).ln()) / n as f64).sqrt();
    let t2 = c_prime * lambda.sqrt() * radius;
    Ok(Calibration {
        lambda,
        radius: t1 + t2,
        gamma,
        rule: "Chowdhury, Zhou & Natarajan (2024), eq. (7), with caller-supplied C, C'",
        terms: vec![("statistical", t1), ("C' sqrt(lambda) B", t2)],
    })
}

// ---------------------------------------------------------------------------------------------
// The rule that matches a fit
// ---------------------------------------------------------------------------------------------

/// The design moments of public pairwise features `x` (`n × d`, row-major):
/// `Σ̂ = (1/n) Σᵢ xᵢxᵢᵀ` (`d × d`, row-major) and `X_max = maxᵢ ‖xᵢ‖`, the inputs of
/// [`local_radius`] and [`objpert_radius`] (Zhou, Wu & Orabona (2025), Thm 5.4; Chowdhury, Zhou
/// & Natarajan (2024), Algorithm 2) and the `Σ` of the confidence set of a label-DP fit.
///
/// The sums run row by row (an `f32` row is widened to `f64` first): the lower triangle
/// `Σᵢ x_{ij}x_{ik}` (`k ≤ j`) is accumulated in row order, divided by `max(n, 1)` and mirrored,
/// so the matrix is exactly symmetric and the bits do not depend on the storage of `x`. `n = 0`
/// gives `Σ̂ = 0` and `X_max = 0`.
///
/// Only for public features (label DP): under standard DP the features are private and the
/// confidence set takes the private covariance `Σ̃` instead.
///
/// # Errors
/// [`Error::Shape`] when `x` does not hold `n·d` values; [`Error::InvalidParam`] (named `x`) for a
/// non-finite feature, naming its column.
pub fn design_moments(x: Features<'_>, n: usize, d: usize) -> Result<(Vec<f64>, f64)> {
    if n.checked_mul(d) != Some(x.len()) {
        return Err(Error::Shape(format!(
            "x has {} values, expected n x d = {n} x {d}",
            x.len()
        )));
    }
    super::check_matrix_memory(d)?;
    let mut s = vec![0.0; d * d];
    let mut x_max: f64 = 0.0;
    let mut buf = vec![0.0; d];
    for r in 0..n {
        let row = x.row(r, d, &mut buf);
        if let Some(j) = row.iter().position(|v| !v.is_finite()) {
            return Err(Error::param("x", format!("non-finite feature in column {j}")));
        }
        x_max = x_max.max(row.iter().map(|v| v * v).sum::<f64>().sqrt());
        for i in 0..d {
            for j in 0..=i {
                s[i * d + j] += row[i] * row[j];
            }
        }
    }
    for i in 0..d {
        for j in 0..=i {
            let v = s[i * d + j] / n.max(1) as f64;
            s[i * d + j] = v;
            s[j * d + i] = v;
        }
    }
    Ok((s, x_max))
}

/// How a fit was obtained, as far as its confidence radius is concerned: which explicit rule of
/// this module applies, with the fit's own parameters. [`fit_calibration`] evaluates it.
#[derive(Debug, Clone, PartialEq)]
pub enum FitRule {
    /// The plain MLE (`eps = None`) or the debiased randomized-response estimator at label
    /// privacy `ε` (Chowdhury, Zhou & Natarajan (2024); Zhou, Wu & Orabona (2025), Algorithm 1):
    /// [`local_radius`] with `X_max` of the fit's features.
    Local {
        /// The randomized-response `ε` of the labels; `None` for clean labels.
        eps: Option<f64>,
    },
    /// Objective perturbation (Chowdhury, Zhou & Natarajan (2024), Algorithm 2):
    /// [`objpert_radius`] with `X_max` of the fit's features.
    ObjPert {
        /// Noise standard deviation `s_w` of the linear perturbation `⟨w, θ⟩/n`.
        noise_std: f64,
        /// Ridge `β` of `(β/2n)‖θ‖²`.
        beta: f64,
    },
    /// The private MLE of "Provable protection of human judgements" (anon., 2025),
    /// Algorithm 1, released with the private covariance `Σ̃` of its Algorithm 2:
    /// [`calibrate_private_mle`] at `(2ε, 2δ)` then [`private_mle_radius`].
    PrivateMle {
        /// `ε` of the fit's guarantee, that of `θ̃` alone: Algorithm 1 spends half of the
        /// pair's budget on `θ̃`, so the pair `(θ̃, Σ̃)` is calibrated at `2ε`.
        eps: f64,
        /// `δ` of the fit's guarantee (the pair is calibrated at `2δ`).
        delta: f64,
        /// The feature bound the fit was run with (per step and horizon for trajectories).
        bound: FeatureBound,
        /// The fit's override of the regulariser `α`, if any.
        alpha: Option<f64>,
        /// The fit's override of the optimisation accuracy `β`, if any.
        accuracy: Option<f64>,
    },
    /// The K-wise private MLE of "Provable protection of human judgements" (anon., 2025),
    /// Thm 4.3/4.4, released with the private `Σ̃_{D_K}`:
    /// [`calibrate_kwise_private_mle`] at `(2ε, 2δ)` then [`private_mle_radius`] with `K`, `J`.
    PrivateMleKwise {
        /// `ε` of the fit's guarantee (that of `θ̃` alone; the pair is calibrated at `2ε`).
        eps: f64,
        /// `δ` of the fit's guarantee (the pair is calibrated at `2δ`).
        delta: f64,
        /// The bound `‖φ‖ ≤ L` on every alternative the fit was run with.
        bound: FeatureBound,
        /// The fit's override of the regulariser `α`, if any.
        alpha: Option<f64>,
        /// The fit's override of the optimisation accuracy `β`, if any.
        accuracy: Option<f64>,
        /// `K` alternatives per sample.
        k: usize,
        /// `J` ranked stages of the Plackett–Luce loss.
        stages: usize,
    },
    /// A fit with no explicit rule here (its loss or mechanism by name): `λ` and `Γ` must be
    /// given.
    Other(String),
}

/// The inputs of [`fit_calibration`] common to every [`FitRule`]: public quantities only.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RuleInputs {
    /// The fit's sample size `n`, if known.
    pub n: Option<usize>,
    /// Dimension `d`.
    pub d: usize,
    /// `B` of `Θ_B`, if known.
    pub radius: Option<f64>,
    /// `X_max = maxᵢ ‖xᵢ‖` of the fit's public features ([`design_moments`]), if given.
    pub x_max: Option<f64>,
    /// Whether the private covariance `Σ̃` is given (required by [`FitRule::PrivateMle`]).
    pub covariance: bool,
    /// Failure probability `η` (default 0.05).
    pub eta: f64,
    /// Multiplier of `Γ` (default 1).
    pub radius_multiplier: f64,
    /// Multiplier of the default `λ` of the local and objective-perturbation rules (default 1).
    pub lambda_multiplier: f64,
}

impl RuleInputs {
    /// `n`, `d`, `B`, `X_max` and whether `Σ̃` is given, with `η = 0.05` and multipliers 1.
    pub fn new(n: Option<usize>, d: usize, radius: Option<f64>, x_max: Option<f64>, covariance: bool) -> Self {
        RuleInputs {
            n,
            d,
            radius,
            x_max,
            covariance,
            eta: 0.05,
            radius_multiplier: 1.0,
            lambda_multiplier: 1.0,
        }
    }
}

/// Why [`fit_calibration`] could not evaluate the rule: a missing input, for the caller to word
/// with its own option names, or an invalid one.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// [`FitRule::PrivateMle`] without the private covariance `Σ̃`.
    #[error("the private-MLE radius needs the private covariance")]
    MissingCovariance,
    /// The rule needs the sample size `n`.
    #[error("the radius rule needs the fit's sample size n")]
    MissingSampleSize,
    /// The rule needs `B` of `Θ_B`.
    #[error("the radius rule needs B")]
    MissingRadius,
    /// The rule (named) needs `X_max` of the fit's public features.
    #[error("{0} needs the fit's features for X_max")]
    MissingFeatures(&'static str),
    /// No explicit rule for this fit (its name): `λ` and `Γ` must be given.
    #[error("no explicit radius rule for a `{0}` fit")]
    NoRule(String),
    /// An input the rule rejects (`η`, a multiplier, `B`, `ε`, …).
    #[error(transparent)]
    Invalid(#[from] Error),
}

/// The private-MLE rule: the calibration of the pair `(θ̃, Σ̃)` at `(2ε, 2δ)` (pairwise, which
/// also covers trajectories, for `(K, J) = (2, 1)`; else K-wise) with the fit's `(α, β)` overrides, then
/// [`private_mle_radius`] with `K`, `J`.
fn private_mle_rule(
    inp: &RuleInputs,
    (eps, delta, bound): (f64, f64, FeatureBound),
    (alpha, accuracy): (Option<f64>, Option<f64>),
    (k, stages): (usize, usize),
) -> std::result::Result<Calibration, RuleError> {
    if !inp.covariance {
        return Err(RuleError::MissingCovariance);
    }
    let b = inp.radius.ok_or(RuleError::MissingRadius)?;
    let n = inp.n.ok_or(RuleError::MissingSampleSize)?;
    let mut p = PrivateMleParams::new(2.0 * eps, 2.0 * delta, bound, b, n, inp.d);
    p.eta = inp.eta;
    p.alpha = alpha;
    p.accuracy = accuracy;
    let cal = if (k, stages) == (2, 1) {
        calibrate_private_mle(&p)?
    } else {
        calibrate_kwise_private_mle(&p, k, stages)?
    };
    let mut r = PrivateMleRadius::new(n, inp.d, bound, b);
    r.eta = inp.eta;
    r.multiplier = inp.radius_multiplier;
    r.k = k;
    r.stages = stages;
    Ok(private_mle_radius(&cal, &r)?)
}

/// `λ` and `Γ` of the rule that matches the fit:
/// * [`FitRule::PrivateMle`]: [`calibrate_private_mle`] at `(2ε, 2δ)` with the fit's bound,
///   `B`, `n`, `d`, `η` and overrides, then [`private_mle_radius`] ("Provable protection of
///   human judgements" (anon., 2025));
/// * [`FitRule::PrivateMleKwise`]: the same with [`calibrate_kwise_private_mle`] and `K`, `J`;
/// * [`FitRule::ObjPert`]: [`objpert_radius`] (derived here for Chowdhury, Zhou & Natarajan
///   (2024), Algorithm 2);
/// * [`FitRule::Local`]: [`local_radius`] (Zhou, Wu & Orabona (2025), Thm 5.4);
/// * none for [`FitRule::Other`].
///
/// The inputs are checked in that order within each rule: for the private MLE the covariance,
/// then `B` and `n`; for the others `n`, `X_max`, then `B`.
///
/// # Errors
/// A [`RuleError`] naming the missing input, [`RuleError::NoRule`] for [`FitRule::Other`], or
/// [`RuleError::Invalid`] with the error of the rule itself.
pub fn fit_calibration(rule: &FitRule, inp: &RuleInputs) -> std::result::Result<Calibration, RuleError> {
    let need_n = || inp.n.ok_or(RuleError::MissingSampleSize);
    let need_b = || inp.radius.ok_or(RuleError::MissingRadius);
    let need_x = |what: &'static str| inp.x_max.ok_or(RuleError::MissingFeatures(what));
    let d = inp.d;
    Ok(match rule {
        FitRule::PrivateMle {
            eps,
            delta,
            bound,
            alpha,
            accuracy,
        } => private_mle_rule(inp, (*eps, *delta, *bound), (*alpha, *accuracy), (2, 1))?,
        FitRule::PrivateMleKwise {
            eps,
            delta,
            bound,
            alpha,
            accuracy,
            k,
            stages,
        } => private_mle_rule(inp, (*eps, *delta, *bound), (*alpha, *accuracy), (*k, *stages))?,
        FitRule::ObjPert { noise_std, beta } => {
            let mut o = ObjPertRadius::new(
                need_n()?,
                d,
                need_x("the objective-perturbation radius")?,
                need_b()?,
                *noise_std,
                *beta,
            );
            o.eta = inp.eta;
            o.lambda_multiplier = inp.lambda_multiplier;
            o.multiplier = inp.radius_multiplier;
            objpert_radius(&o)?
        }
        FitRule::Local { eps } => {
            let mut p = LocalRadius::new(
                *eps,
                need_n()?,
                d,
                need_x("the radius of Zhou, Wu & Orabona (2025)")?,
                need_b()?,
            );
            p.eta = inp.eta;
            p.multiplier = inp.radius_multiplier;
            p.lambda_multiplier = inp.lambda_multiplier;
            local_radius(&p)?
        }
        FitRule::Other(name) => return Err(RuleError::NoRule(name.clone())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_mle_terms_by_hand() {
        let fb = FeatureBound::pairwise(1.0).unwrap();
        let p = PrivateMleParams::new(1.0, 1e-8, fb, 1.0, 10_000, 10);
        let cal = calibrate_private_mle(&p).unwrap();
        let r = private_mle_radius(&cal, &PrivateMleRadius::new(10_000, 10, fb, 1.0)).unwrap();
        let t = 10f64.sqrt() + (2.0 * (80.0f64).ln()).sqrt();
        let r1 = t / (cal.gamma * 100.0) + 2.0 * cal.lambda.sqrt();
        assert!((r.terms[0].1 - r1).abs() < 1e-15);
        let sum: f64 = r.terms.iter().map(|t| t.1).sum();
        assert!((r.radius - 1.5f64.sqrt() * sum).abs() < 1e-14);
        assert_eq!(r.lambda, cal.lambda);
        // F ≥ √(3/2)·2B√λ: along a weakly covered direction the ellipsoid leaves the ball.
        assert!(r.radius >= 1.5f64.sqrt() * 2.0 * cal.lambda.sqrt());
    }

    #[test]
    fn local_terms_and_clean_case() {
        let mut p = LocalRadius::new(Some(1.0), 4000, 5, 2.0, 1.0);
        let r = local_radius(&p).unwrap();
        let c = 1.0 / 0.5f64.tanh();
        let f = 0.5 * c * (5f64.sqrt() + (2.0 * 20f64.ln()).sqrt()) / 4000f64.sqrt();
        assert!((r.terms[0].1 - f).abs() < 1e-15);
        let gamma = 1.0 / (2.0 + 2f64.exp() + (-2f64).exp());
        assert!((r.gamma - gamma).abs() < 1e-15);
        let lam = 4.0 * 5.0 * (4000.0f64 / 0.05).ln() / 4000.0;
        assert!((r.lambda - lam).abs() < 1e-15);
        assert!((r.radius - (2.0 * f / gamma + 2.0 * lam.sqrt())).abs() < 1e-14);
        p.eps = None;
        let clean = local_radius(&p).unwrap();
        assert!(clean.radius < r.radius);
        p.order = CorruptionOrder::Ctl;
        p.eps = Some(1.0);
        p.corruption = 0.1;
        let ctl = local_radius(&p).unwrap();
        p.order = CorruptionOrder::Ltc;
        let ltc = local_radius(&p).unwrap();
        assert!(ltc.terms[0].1 > ctl.terms[0].1 - 1.0); // both finite
        p.corruption = 0.5;
        assert!(local_radius(&p).is_err());
    }

    #[test]
    fn objpert_and_local_rr_validate() {
        let p = ObjPertRadius {
            n: 1000,
            d: 5,
            x_max: 2.0,
            radius: 1.0,
            noise_std: 8.05,
            ridge: 31.6,
            eta: 0.05,
            lambda_multiplier: 1.0,
            multiplier: 1.0,
        };
        let r = objpert_radius(&p).unwrap();
        assert!(r.radius > 0.0 && r.radius.is_finite());
        assert!(objpert_radius(&ObjPertRadius { eta: 0.0, ..p.clone() }).is_err());
        let s = local_rr_radius(1.0, 1.0, 1.0, 1.0, 1.0, 1000, 5, 0.05, 0.01).unwrap();
        assert!((s.terms[1].1 - 0.1).abs() < 1e-15);
        assert!(local_rr_radius(0.0, 1.0, 1.0, 1.0, 1.0, 1000, 5, 0.05, 0.01).is_err());
    }
}

//! Data-driven confidence radii — **asymptotic/empirical, not guaranteed**.
//!
//! The explicit radii of [`super::radius`] hold with probability `≥ 1 − η` for every `n`, but
//! they are so conservative that pessimism returns the reference policy until `n` is large
//! (`bench-results/coverage.md`). The radii here replace the worst-case bound by the
//! `(1 − η)`-quantile of `‖Z‖_M`, `M = Σ + λI`, where `Z ~ N(μ, V)` is the Gaussian limit of the
//! estimation error `θ̂ − θ*`:
//!
//! * [`sandwich_law`] — M-estimators on privatised (or clear) labels, i.e. the MLE and the
//!   debiased RR estimator (Chowdhury, Zhou & Natarajan, 2024): `μ = 0`,
//!   `V = H⁻¹GH⁻¹/n` with `H = (1/n)Σ ℓ''(xᵢᵀθ̂; ỹᵢ) xᵢxᵢᵀ` and
//!   `G = (1/n)Σ ℓ'(xᵢᵀθ̂; ỹᵢ)² xᵢxᵢᵀ` (the sandwich of Huber, 1967). Only the public features and
//!   the **privatised** labels enter, so under local label DP the radius is post-processing.
//! * [`model_law`] — the central estimators (objective perturbation, Chowdhury, Zhou &
//!   Natarajan (2024), Alg. 2; the private MLE of "Provable protection of human judgements"
//!   (anon., 2025), Alg. 1). **The labels never enter**: the law is that of the parametric
//!   bootstrap at the released `θ̃` on the public features, linearised — labels simulated from
//!   the BTL model at `θ̃` have Fisher information `H = (1/n)Σσ'(xᵢᵀθ̃)xᵢxᵢᵀ`, and the
//!   estimator's own noise is added in closed form (below). The ridge of these estimators
//!   shrinks `θ̃` by a bias `−K⁻¹Sθ*` that depends on the unknown `θ*` — it cannot be estimated
//!   at `θ̃` (which is itself shrunk, to about 0 in the directions the data rarely compare), so
//!   the radius adds its worst case over the feasible ball, `B‖M^{1/2}K⁻¹S‖₂`. It is a function
//!   of the release and of public inputs only, hence post-processing. For the private MLE (standard
//!   DP) the features are private: the law needs features the caller may publish (a public
//!   sample from the same design), which is an **assumption** the caller must justify.
//!
//! Then [`gaussian_quantile_radius`] returns the `(1 − η)`-quantile of `‖Z‖_M` by Monte Carlo
//! (explicit RNG; the draws are of a known distribution, no privacy is at stake).
//!
//! What is assumed: the BTL model is correct, `θ̂` is interior to `Θ_B` (the constraint is
//! ignored), and `n` is large enough for the Gaussian limit. None of this is checked; coverage
//! is measured, not proved (`bench-results/coverage.md`).

use super::inner::eigh;
use super::radius::{fit_calibration, Calibration, FitRule, RuleError, RuleInputs};
use crate::data::Features;
use crate::error::{Error, Result};
use crate::loss::{Loss, LossSpec};
use crate::math::simd::scalar::dsigmoid;
use crate::privacy::{calibrate_private_mle, PrivateMleParams};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// The label every data-driven radius carries in its name and reports.
pub const NOT_GUARANTEED: &str = "asymptotic/empirical, not guaranteed";

/// The Gaussian approximation `Aθ* + N(mean, cov)` of the estimation error `θ̂ − θ*`.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorLaw {
    /// `μ`, a known shift (`0` for the sandwich and the model law).
    pub mean: Vec<f64>,
    /// `V`, row-major `d × d`, symmetric positive semi-definite.
    pub cov: Vec<f64>,
    /// `A` of a bias `Aθ*` that depends on the unknown `θ*` (row-major `d × d`), or `None`.
    /// [`gaussian_quantile_radius`] adds its worst case over the ball `‖θ*‖ ≤ B`,
    /// `B‖M^{1/2}A‖₂`.
    pub bias_map: Option<Vec<f64>>,
}

/// The noise and ridge of a central estimator, for [`model_law`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CentralNoise {
    /// Objective perturbation (Chowdhury, Zhou & Natarajan (2024), Alg. 2):
    /// `argmin ℓ_D + (β/2n)‖θ‖² + ⟨w, θ⟩/n`, `w ~ N(0, s_w² I)`.
    ObjPert {
        /// `s_w`.
        noise_std: f64,
        /// `β`.
        beta: f64,
    },
    /// The private MLE ("Provable protection of human judgements" (anon., 2025), Alg. 1):
    /// `argmin ℓ_D + α‖θ‖² + ⟨b, θ⟩/n`, `b ~ N(0, s_b² I)`, released `+ N(0, ν² I)`.
    PrivateMle {
        /// `α`.
        alpha: f64,
        /// `s_b`.
        objective_noise_std: f64,
        /// `ν`.
        output_noise_std: f64,
    },
}

fn check_inputs(x: &Features<'_>, n: usize, d: usize, theta: &[f64]) -> Result<()> {
    super::check_matrix_memory(d)?;
    if n == 0 || d == 0 || theta.len() != d || n.checked_mul(d) != Some(x.len()) {
        return Err(Error::Shape(format!(
            "need n, d >= 1, x of n x d = {n} x {d} values (got {}) and theta of length d (got {})",
            x.len(),
            theta.len()
        )));
    }
    if theta.iter().any(|v| !v.is_finite()) {
        return Err(Error::param("theta", "non-finite entry"));
    }
    Ok(())
}

/// `(1/n) Σᵢ w(xᵢᵀθ, i) xᵢxᵢᵀ`, row-major, exactly symmetric.
fn weighted_gram(
    x: &Features<'_>,
    n: usize,
    d: usize,
    theta: &[f64],
    w: impl Fn(f64, usize) -> f64,
) -> Result<Vec<f64>> {
    let mut s = vec![0.0; d * d];
    let mut buf = vec![0.0; d];
    for r in 0..n {
        let row = x.row(r, d, &mut buf);
        if row.iter().any(|v| !v.is_finite()) {
            return Err(Error::param("x", format!("non-finite feature in row {r}")));
        }
        let t: f64 = row.iter().zip(theta).map(|(a, b)| a * b).sum();
        let wi = w(t, r);
        for i in 0..d {
            let a = wi * row[i];
            for j in 0..=i {
                s[i * d + j] += a * row[j];
            }
        }
    }
    for i in 0..d {
        for j in 0..=i {
            let v = s[i * d + j] / n as f64;
            s[i * d + j] = v;
            s[j * d + i] = v;
        }
    }
    Ok(s)
}

/// `A⁻¹` of a symmetric positive definite `d × d` matrix (eigendecomposition); an error naming
/// `what` when it is singular to working precision.
fn inv_spd(a: &[f64], d: usize, what: &str) -> Result<Vec<f64>> {
    let (lam, q) = eigh(a, d)?;
    let top = lam.iter().cloned().fold(0.0, f64::max);
    if !(lam[0] > 1e-12 * top && top.is_finite()) {
        return Err(Error::Numerical(format!(
            "{what} is singular (eigenvalues {:e} to {top:e}): the asymptotic law does not exist",
            lam[0]
        )));
    }
    let mut inv = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..=i {
            let v: f64 = (0..d).map(|k| q[i * d + k] * q[j * d + k] / lam[k]).sum();
            inv[i * d + j] = v;
            inv[j * d + i] = v;
        }
    }
    Ok(inv)
}

fn matmul(a: &[f64], b: &[f64], d: usize) -> Vec<f64> {
    let mut c = vec![0.0; d * d];
    for i in 0..d {
        for k in 0..d {
            let aik = a[i * d + k];
            for j in 0..d {
                c[i * d + j] += aik * b[k * d + j];
            }
        }
    }
    c
}

/// `A B A` symmetrised (`A`, `B` symmetric).
fn sandwich(a: &[f64], b: &[f64], d: usize) -> Vec<f64> {
    let mut v = matmul(&matmul(a, b, d), a, d);
    for i in 0..d {
        for j in 0..i {
            let m = 0.5 * (v[i * d + j] + v[j * d + i]);
            v[i * d + j] = m;
            v[j * d + i] = m;
        }
    }
    v
}

/// The sandwich law of an M-estimator of the pairwise loss `spec` (Huber, 1967): `μ = 0`,
/// `V = H⁻¹GH⁻¹/n`, `H = (1/n)Σℓ''(xᵢᵀθ̂; yᵢ)xᵢxᵢᵀ`, `G = (1/n)Σℓ'(xᵢᵀθ̂; yᵢ)²xᵢxᵢᵀ`.
/// For the MLE on clear labels (`LossSpec::Mle`) and the debiased RR loss on RR labels
/// (`LossSpec::DebiasedRr`, Chowdhury, Zhou & Natarajan (2024)). `y` are the labels the fit
/// saw: the **privatised** labels for a private fit (post-processing under local label DP).
/// **Asymptotic, not guaranteed** (module docs).
///
/// # Errors
/// Shapes, labels outside `{0, 1}`, non-finite inputs, a singular `H`, or a loss other than the
/// MLE and the debiased RR loss (the noisy-channel loss is not convex; probit is not supported).
pub fn sandwich_law(x: Features<'_>, y: &[u8], n: usize, d: usize, theta: &[f64], spec: LossSpec) -> Result<ErrorLaw> {
    check_inputs(&x, n, d, theta)?;
    if y.len() != n {
        return Err(Error::Shape(format!("{} labels for n = {n} rows", y.len())));
    }
    if let Some(i) = y.iter().position(|&v| v > 1) {
        return Err(Error::param("y", format!("label {} at row {i} is not 0 or 1", y[i])));
    }
    let (h, g) = match spec {
        LossSpec::Mle => {
            let l = crate::loss::Logistic;
            (
                weighted_gram(&x, n, d, theta, |t, i| l.d2(t, y[i]))?,
                weighted_gram(&x, n, d, theta, |t, i| l.d1(t, y[i]).powi(2))?,
            )
        }
        LossSpec::DebiasedRr { eps } => {
            let l = crate::loss::RrDebiased::new(eps)?;
            (
                weighted_gram(&x, n, d, theta, |t, i| l.d2(t, y[i]))?,
                weighted_gram(&x, n, d, theta, |t, i| l.d1(t, y[i]).powi(2))?,
            )
        }
        other => {
            return Err(Error::param(
                "loss",
                format!(
                    "the sandwich radius supports the mle and debiased-rr losses, not `{}`",
                    other.name()
                ),
            ))
        }
    };
    let hinv = inv_spd(&h, d, "the Hessian H")?;
    let mut v = sandwich(&hinv, &g, d);
    v.iter_mut().for_each(|e| *e /= n as f64);
    Ok(ErrorLaw {
        mean: vec![0.0; d],
        cov: v,
        bias_map: None,
    })
}

/// The linearised parametric bootstrap at the released `θ̃` of a central estimator, on public
/// features; **the labels never enter** (module docs). With the BTL Fisher information
/// `H = (1/n)Σσ'(xᵢᵀθ̃)xᵢxᵢᵀ` (labels simulated from the model at `θ̃` have `G = H`):
///
/// * objective perturbation: `S = (β/n)I`, `V = K⁻¹(H/n + (s_w/n)²I)K⁻¹`;
/// * private MLE: `S = 2αI`, `V = K⁻¹(H/n + (s_b/n)²I)K⁻¹ + ν²I`;
/// * `K = H + S`, and the ridge bias `Aθ*` with `A = −K⁻¹S` in both (the expansion gives
///   `θ̃ − θ* ≈ −K⁻¹Sθ* + N(0, V)`); `mean = 0`, `bias_map = Some(A)`.
///
/// (first-order expansion of the stationarity condition of each objective around `θ*`, with
/// `H` evaluated at `θ̃`; the constraint and the projection are ignored). The bias is left as a
/// map of the unknown `θ*`: plugging in `θ̃` (shrunk towards 0, most in the directions the data
/// rarely compare) under-estimated it, and the plug-in radius covered as little as 59% of the
/// time at a nominal 95% (an earlier run of `bench-results/coverage.md`). **Asymptotic, not
/// guaranteed.**
///
/// # Errors
/// Shapes, non-finite inputs, negative noise or ridge, a singular `K`.
pub fn model_law(x: Features<'_>, n: usize, d: usize, theta: &[f64], noise: CentralNoise) -> Result<ErrorLaw> {
    check_inputs(&x, n, d, theta)?;
    let h = weighted_gram(&x, n, d, theta, |t, _| dsigmoid(t))?;
    let nf = n as f64;
    let (shift, s_in, s_out) = match noise {
        CentralNoise::ObjPert { noise_std, beta } => (beta / nf, noise_std, 0.0),
        CentralNoise::PrivateMle {
            alpha,
            objective_noise_std,
            output_noise_std,
        } => (2.0 * alpha, objective_noise_std, output_noise_std),
    };
    if [shift, s_in, s_out].iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
        return Err(Error::param(
            "noise-std",
            "noise, ridge and alpha must be finite and >= 0",
        ));
    }
    let mut k = h.clone();
    let mut inner: Vec<f64> = h.iter().map(|v| v / nf).collect();
    for i in 0..d {
        k[i * d + i] += shift;
        inner[i * d + i] += (s_in / nf).powi(2);
    }
    let kinv = inv_spd(&k, d, "the regularised Hessian K")?;
    let mut v = sandwich(&kinv, &inner, d);
    for i in 0..d {
        v[i * d + i] += s_out * s_out;
    }
    // The ridge bias −K⁻¹Sθ* as a map of θ*. (Inverting the shrinkage, θ* ≈ H⁻¹Kθ̃, is unstable
    // where H is nearly singular — directions the data rarely compare.)
    let bias_map = kinv.iter().map(|v| -shift * v).collect();
    Ok(ErrorLaw {
        mean: vec![0.0; d],
        cov: v,
        bias_map: Some(bias_map),
    })
}

/// `B‖M^{1/2}A‖₂ = B·√λ_max(AᵀMA)`, the largest `‖Aθ‖_M` over `‖θ‖ ≤ B` (`m` row-major `d × d`).
fn worst_case_bias(a: &[f64], m: &[f64], d: usize, b: f64) -> Result<f64> {
    // AᵀMA, symmetrised.
    let ma = matmul(m, a, d);
    let mut at_ma = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            at_ma[i * d + j] = (0..d).map(|k| a[k * d + i] * ma[k * d + j]).sum();
        }
    }
    for i in 0..d {
        for j in 0..i {
            let v = 0.5 * (at_ma[i * d + j] + at_ma[j * d + i]);
            at_ma[i * d + j] = v;
            at_ma[j * d + i] = v;
        }
    }
    let (lam, _) = eigh(&at_ma, d)?;
    Ok(b * lam.iter().cloned().fold(0.0, f64::max).sqrt())
}

/// The `(1 − η)`-quantile of `‖Z‖_M`, `Z ~ N(μ, V)` of `law`, `M = sigma + λI` (`sigma` row-major
/// `d × d`, `None` for `0`), from `draws` Monte-Carlo draws with `rng`: the order statistic of
/// rank `⌈(1 − η)·draws⌉`. `Z = μ + QΛ^{1/2}ξ`, `V = QΛQᵀ` (negative eigenvalues of rounding
/// size clamped to 0), `ξ` standard normal. When the law has a bias map `A` (a bias `Aθ*` of
/// the unknown `θ*`), its worst case over the feasible ball `‖θ*‖ ≤ B` (`ball_radius = Some(B)`)
/// is added: `B‖M^{1/2}A‖₂` (the triangle inequality, so the result bounds the quantile of
/// `‖Aθ* + Z‖_M` for every such `θ*`). **Asymptotic/empirical, not guaranteed.**
///
/// # Errors
/// Shapes, `η ∉ (0, 1)`, `draws < 1/η`, `λ < 0`, non-finite entries, a bias map without a
/// finite `B > 0`.
pub fn gaussian_quantile_radius<R: Rng + ?Sized>(
    law: &ErrorLaw,
    sigma: Option<&[f64]>,
    lambda: f64,
    eta: f64,
    draws: usize,
    ball_radius: Option<f64>,
    rng: &mut R,
) -> Result<f64> {
    let d = law.mean.len();
    if d == 0
        || law.cov.len() != d * d
        || sigma.is_some_and(|s| s.len() != d * d)
        || law.bias_map.as_ref().is_some_and(|a| a.len() != d * d)
    {
        return Err(Error::Shape(
            "law, bias map and sigma must be d, d x d and d x d".into(),
        ));
    }
    let bias_ball = match (&law.bias_map, ball_radius) {
        (None, _) => None,
        (Some(a), Some(b)) if b.is_finite() && b > 0.0 => Some((a, b)),
        (Some(_), b) => {
            return Err(Error::param(
                "radius",
                format!(
                    "the law has a bias that depends on theta*: its worst case needs the feasible ball's finite radius B > 0 (got {b:?})"
                ),
            ))
        }
    };
    if !(eta > 0.0 && eta < 1.0) {
        return Err(Error::param("eta", format!("must be in (0, 1), got {eta}")));
    }
    if !(draws as f64 * eta >= 1.0) {
        return Err(Error::param("draws", format!("need at least 1/eta draws, got {draws}")));
    }
    if !(lambda.is_finite() && lambda >= 0.0) {
        return Err(Error::param("lambda", format!("must be finite and >= 0, got {lambda}")));
    }
    let all = law
        .mean
        .iter()
        .chain(&law.cov)
        .chain(sigma.unwrap_or(&[]))
        .chain(law.bias_map.as_deref().unwrap_or(&[]));
    if all.into_iter().any(|v| !v.is_finite()) {
        return Err(Error::param("law", "non-finite entry"));
    }
    let (lam, q) = eigh(&law.cov, d)?;
    let sd: Vec<f64> = lam.iter().map(|l| l.max(0.0).sqrt()).collect();
    let mut m = sigma.map(<[f64]>::to_vec).unwrap_or_else(|| vec![0.0; d * d]);
    for i in 0..d {
        m[i * d + i] += lambda;
    }
    let mut xi = vec![0.0; d];
    let mut z = vec![0.0; d];
    let mut norms: Vec<f64> = (0..draws)
        .map(|_| {
            for (x, s) in xi.iter_mut().zip(&sd) {
                let g: f64 = StandardNormal.sample(rng);
                *x = s * g;
            }
            for i in 0..d {
                z[i] = law.mean[i] + (0..d).map(|k| q[i * d + k] * xi[k]).sum::<f64>();
            }
            let quad: f64 = (0..d)
                .map(|i| z[i] * (0..d).map(|j| m[i * d + j] * z[j]).sum::<f64>())
                .sum();
            quad.max(0.0).sqrt()
        })
        .collect();
    norms.sort_by(f64::total_cmp);
    let rank = ((1.0 - eta) * draws as f64).ceil() as usize;
    let bias = match bias_ball {
        Some((a, b)) => worst_case_bias(a, &m, d, b)?,
        None => 0.0,
    };
    Ok(norms[rank.clamp(1, draws) - 1] + bias)
}

/// The rule name of the sandwich radius.
pub const SANDWICH_RULE: &str =
    "sandwich radius: (1-eta)-quantile of ||Z||_M, Z ~ N(0, H^-1 G H^-1/n) on privatised labels (asymptotic/empirical, not guaranteed)";
/// The rule name of the model-based radius of the central estimators.
pub const MODEL_RULE: &str =
    "linearised parametric bootstrap at the released theta on public features, labels unused, plus the ridge bias's worst case over the ball (asymptotic/empirical, not guaranteed)";

/// The data a data-driven radius may use, all public or already released.
#[derive(Debug, Clone)]
pub struct EmpiricalInputs<'a> {
    /// The public pairwise features of the fit, `n × d`.
    pub x: Features<'a>,
    /// The labels the fit saw — privatised for a local-DP fit; `None` for central fits (they
    /// are never read there).
    pub labels: Option<&'a [u8]>,
    /// The released estimate (`θ̂` or `θ̃`).
    pub theta: &'a [f64],
    /// `Σ` of `M = Σ + λI` (`Σ̂` or `Σ̃`), row-major, `None` for `0`.
    pub sigma: Option<&'a [f64]>,
    /// Monte-Carlo draws of [`gaussian_quantile_radius`] (e.g. 4000).
    pub draws: usize,
}

/// The data-driven counterpart of [`super::radius::fit_calibration`]: `λ` of the explicit rule
/// (so that `M` is the same), `Γ` the `(1 − η)`-quantile of `‖Z‖_M` with the law of the fit —
/// [`sandwich_law`] for [`FitRule::Local`] (needs the labels the fit saw, privatised),
/// [`model_law`] for [`FitRule::ObjPert`] and [`FitRule::PrivateMle`] (labels unused; the
/// noise constants of [`crate::privacy::calibrate_private_mle`] at `(2ε, 2δ)` as in
/// `fit_calibration`). The rule name is [`SANDWICH_RULE`] or [`MODEL_RULE`], both marked
/// **asymptotic/empirical, not guaranteed**; the terms list the explicit radius next to the
/// quantile.
///
/// # Errors
/// Those of `fit_calibration`; [`RuleError::Invalid`] for missing labels of a local fit, bad
/// shapes or a singular Hessian.
pub fn empirical_fit_calibration<R: Rng + ?Sized>(
    rule: &FitRule,
    inp: &RuleInputs,
    data: &EmpiricalInputs<'_>,
    rng: &mut R,
) -> std::result::Result<Calibration, RuleError> {
    let base = fit_calibration(rule, inp)?;
    let n = inp.n.ok_or(RuleError::MissingSampleSize)?;
    let d = inp.d;
    let (law, name) = match rule {
        FitRule::Local { eps } => {
            let y = data.labels.ok_or_else(|| {
                Error::param(
                    "labels",
                    "the sandwich radius needs the (privatised) labels the fit saw",
                )
            })?;
            let spec = match eps {
                None => LossSpec::Mle,
                Some(e) => LossSpec::DebiasedRr { eps: *e },
            };
            (sandwich_law(data.x, y, n, d, data.theta, spec)?, SANDWICH_RULE)
        }
        FitRule::ObjPert { noise_std, beta } => (
            model_law(
                data.x,
                n,
                d,
                data.theta,
                CentralNoise::ObjPert {
                    noise_std: *noise_std,
                    beta: *beta,
                },
            )?,
            MODEL_RULE,
        ),
        FitRule::PrivateMle {
            eps,
            delta,
            bound,
            alpha,
            accuracy,
        } => {
            let b = inp.radius.ok_or(RuleError::MissingRadius)?;
            let mut p = PrivateMleParams::new(2.0 * eps, 2.0 * delta, *bound, b, n, d);
            p.eta = inp.eta;
            p.alpha = *alpha;
            p.accuracy = *accuracy;
            let cal = calibrate_private_mle(&p)?;
            (
                model_law(
                    data.x,
                    n,
                    d,
                    data.theta,
                    CentralNoise::PrivateMle {
                        alpha: cal.alpha,
                        objective_noise_std: cal.objective_noise_std,
                        output_noise_std: cal.output_noise_std,
                    },
                )?,
                MODEL_RULE,
            )
        }
        FitRule::PrivateMleKwise { .. } => {
            return Err(RuleError::NoRule(
                "K-wise private-mle (the data-driven radii model pairwise BTL fits)".into(),
            ))
        }
        FitRule::Other(name) => return Err(RuleError::NoRule(name.clone())),
    };
    if law.bias_map.is_some() && inp.radius.is_none() {
        return Err(RuleError::MissingRadius);
    }
    let gamma = inp.radius_multiplier
        * gaussian_quantile_radius(&law, data.sigma, base.lambda, inp.eta, data.draws, inp.radius, rng)?;
    Ok(Calibration {
        lambda: base.lambda,
        radius: gamma,
        gamma: base.gamma,
        rule: name,
        terms: vec![
            ("explicit radius (guaranteed rule)", base.radius),
            ("empirical (1-eta)-quantile of ||Z||_M", gamma / inp.radius_multiplier),
        ],
    })
}

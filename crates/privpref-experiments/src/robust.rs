//! Experiments for Zhou, Wu & Orabona (2025), without language models: privacy and corruption with
//! the loss-(14) estimator ([`fit_loss14`]), and the DPO reduction ([`fit_dpo`]).
//!
//! * [`oblivious_mask_check`]: Monte Carlo flip rates and debiased-label biases of the paper's
//!   oblivious mask under CTL and LTC against the closed forms (ratio `(1 + c(ε))/2`).
//! * [`ltc_vs_ctl`]: estimation error of loss (14) under CTL and LTC with an adversary; the
//!   LTC/CTL ratio approaches `c(ε) = coth(ε/2)` once the corruption bias dominates (the extra
//!   `c(ε)` of the LTC bounds of Thm 5.4 and 5.7).
//! * [`signal_threshold`]: LTC with the oblivious mask loses all signal at
//!   `α* = (e^ε − 1)/(2e^ε)` (flip rate ½); CTL never does for `α < ½`.
//! * [`rate_in_n`]: the `α = 0` rate `n^{−1/2}` and the privacy factor: error ratio private / clean
//!   against `c(ε)` and the sharp sandwich prediction (the asymptotic M-estimation covariance).
//! * [`dpo_rates`]: DPO by the reduction on a log-linear contextual bandit (Prop. 4.6): parameter
//!   error and sub-optimality in `n`, for several ε.
//!
//! Every repetition draws its data from generators seeded by `(seed, rep)` (and the mechanism by
//! `(seed, rep, cell)`), so results do not depend on the thread count.

use crate::stats::{bootstrap_slope, mean, SlopeCi};
use privpref::data::{PairwiseData, PairwiseView};
use privpref::error::{check_eps, check_radius, Error, Result};
use privpref::estimator::robust::{debiased_label, fit_dpo, fit_loss14};
use privpref::feasible::norm;
use privpref::mechanism::{mix_seed, simulation_rng, RandomizedResponse};

/// `mix_seed` folded over several values.
fn seed_of(seed: u64, parts: &[u64]) -> u64 {
    parts.iter().fold(seed, |s, &p| mix_seed(s, p))
}
use privpref::sim::corrupt::{rr_privacy_factor, Adversary, Pipeline};
use privpref::sim::dpo::ContextualBandit;
use privpref::sim::{btl_pairs, theta_star};
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

/// Measured and predicted statistics of the oblivious mask (closed forms in
/// [`privpref::sim::corrupt`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaskCheck {
    /// ε.
    pub eps: f64,
    /// α.
    pub alpha: f64,
    /// Samples.
    pub n: usize,
    /// Measured `P[z ≠ y]` under CTL and LTC.
    pub flip: [f64; 2],
    /// Closed forms `q + α(1 − 2q)`, `q + α(1 − q)`.
    pub flip_pred: [f64; 2],
    /// Measured bias of the debiased label toward the wrong label, `mean((ŷ − y)(1 − 2y))`,
    /// under CTL and LTC.
    pub bias: [f64; 2],
    /// Closed forms `α`, `α e^ε/(e^ε − 1)`.
    pub bias_pred: [f64; 2],
}

/// Monte Carlo check of the oblivious mask (Zhou, Wu & Orabona (2025), App. D) on `n` labels
/// (alternating 0/1): flip rates and debiased-label biases under CTL and LTC.
///
/// # Errors
/// Invalid `eps` or `alpha`, `n < 2`.
pub fn oblivious_mask_check(eps: f64, alpha: f64, n: usize, seed: u64) -> Result<MaskCheck> {
    check_eps(eps)?;
    if n < 2 {
        return Err(Error::param("n", format!("must be >= 2, got {n}")));
    }
    let rr = RandomizedResponse::new(eps)?;
    let y: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
    let x = vec![0.0; n];
    let adv = Adversary::ObliviousMask { alpha };
    let (f, b) = (
        privpref::sim::corrupt::oblivious_mask_closed_forms(eps, alpha),
        [Pipeline::Ctl(adv.clone()), Pipeline::Ltc(adv)],
    );
    let mut flip = [0.0; 2];
    let mut bias = [0.0; 2];
    for (k, p) in b.iter().enumerate() {
        let z = p
            .apply(&x, 1, &y, &rr, &mut simulation_rng(seed_of(seed, &[k as u64])))?
            .z;
        let mut fl = 0usize;
        let mut bs = 0.0;
        for (&yi, &zi) in y.iter().zip(&z) {
            fl += usize::from(yi != zi);
            bs += (debiased_label(zi, eps) - yi as f64) * (1.0 - 2.0 * yi as f64);
        }
        flip[k] = fl as f64 / n as f64;
        bias[k] = bs / n as f64;
    }
    Ok(MaskCheck {
        eps,
        alpha,
        n,
        flip,
        flip_pred: [f.0, f.1],
        bias,
        bias_pred: [f.2, f.3],
    })
}

/// Which adversary [`ltc_vs_ctl`] and [`signal_threshold`] use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdversaryKind {
    /// [`Adversary::ObliviousMask`].
    Oblivious,
    /// [`Adversary::DirectionalPush`] along a unit direction of the sum-zero subspace orthogonal
    /// to `θ*` (drawn per repetition).
    Directional,
}

/// Settings of the corruption experiments. Defaults (sizes at which the corruption bias dominates
/// the statistical error): `d = 5`, `‖θ*‖ = 1`, `B' = 4`, `n = 64000`, `ε ∈ {0.5, 1}`, `α ∈ {0.02,
/// 0.04}`, 20 repetitions, directional adversary, seed 2025.
#[derive(Debug, Clone, PartialEq)]
pub struct CorruptionConfig {
    /// Dimension.
    pub d: usize,
    /// `‖θ*‖` (θ* sum-zero, uniform direction, per repetition).
    pub theta_norm: f64,
    /// `B'` of `Θ_{B'}`.
    pub radius: f64,
    /// Samples.
    pub n: usize,
    /// Privacy levels.
    pub eps: Vec<f64>,
    /// Corruption fractions.
    pub alphas: Vec<f64>,
    /// Repetitions.
    pub reps: usize,
    /// The adversary.
    pub adversary: AdversaryKind,
    /// Base seed.
    pub seed: u64,
}

impl Default for CorruptionConfig {
    fn default() -> Self {
        CorruptionConfig {
            d: 5,
            theta_norm: 1.0,
            radius: 4.0,
            n: 64_000,
            eps: vec![0.5, 1.0],
            alphas: vec![0.02, 0.04],
            reps: 20,
            adversary: AdversaryKind::Directional,
            seed: 2025,
        }
    }
}

impl CorruptionConfig {
    fn validate(&self) -> Result<()> {
        check_radius(self.radius)?;
        for &e in &self.eps {
            check_eps(e)?;
        }
        if self.reps == 0 || self.n < 2 || self.d < 2 {
            return Err(Error::param("config", "needs reps >= 1, n >= 2, d >= 2"));
        }
        if self.theta_norm > self.radius {
            return Err(Error::param("theta_norm", "exceeds the radius B'"));
        }
        Ok(())
    }
}

/// Errors of one `(ε, α)` cell over the repetitions.
#[derive(Debug, Clone)]
pub struct CorruptionCell {
    /// ε.
    pub eps: f64,
    /// α.
    pub alpha: f64,
    /// `‖θ̂ − θ*‖₂` with RR and no corruption, per repetition.
    pub clean: Vec<f64>,
    /// Under CTL.
    pub ctl: Vec<f64>,
    /// Under LTC.
    pub ltc: Vec<f64>,
    /// `cos(θ̂, θ*)` under CTL and LTC, per repetition.
    pub cos: [Vec<f64>; 2],
    /// Measured flip rates `P[z ≠ y]` under CTL and LTC (mean over repetitions).
    pub flip: [f64; 2],
}

impl CorruptionCell {
    /// Mean LTC error / mean CTL error.
    pub fn ratio(&self) -> f64 {
        mean(&self.ltc) / mean(&self.ctl)
    }
    /// Ratio of the corruption excesses `√(MSE − MSE_clean)`, LTC over CTL (`NaN` when the CTL
    /// excess is not positive: the corruption is lost in the noise).
    pub fn excess_ratio(&self) -> f64 {
        let mse = |v: &[f64]| mean(&v.iter().map(|e| e * e).collect::<Vec<_>>());
        let c = mse(&self.clean);
        let den = mse(&self.ctl) - c;
        if !(den > 0.0) {
            return f64::NAN;
        }
        ((mse(&self.ltc) - c).max(0.0) / den).sqrt()
    }
}

/// A unit vector of the sum-zero subspace orthogonal to `theta` (Gaussian direction).
fn orthogonal_direction(theta: &[f64], seed: u64) -> Vec<f64> {
    let mut rng = simulation_rng(seed);
    let d = theta.len();
    let tn = norm(theta);
    loop {
        let mut v: Vec<f64> = (0..d).map(|_| StandardNormal.sample(&mut rng)).collect();
        let m = v.iter().sum::<f64>() / d as f64;
        v.iter_mut().for_each(|x| *x -= m);
        if tn > 0.0 {
            let p: f64 = v.iter().zip(theta).map(|(a, b)| a * b).sum::<f64>() / (tn * tn);
            v.iter_mut().zip(theta).for_each(|(a, b)| *a -= p * b);
        }
        let vn = norm(&v);
        if vn > 1e-8 {
            v.iter_mut().for_each(|x| *x /= vn);
            return v;
        }
    }
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>() / (na * nb)
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt()
}

/// One repetition's data: `θ*` and BTL comparisons, from `(seed, rep)`.
fn rep_data(cfg: &CorruptionConfig, rep: usize) -> Result<(Vec<f64>, PairwiseData)> {
    let mut rng = simulation_rng(seed_of(cfg.seed, &[rep as u64]));
    let theta = theta_star(cfg.d, cfg.theta_norm, true, &mut rng)?;
    let data = btl_pairs(cfg.n, &theta, &mut rng)?;
    Ok((theta, data))
}

/// Loss (14) under no corruption, CTL and LTC for every `(ε, α)`. The
/// clean fit of a repetition and ε is shared by its α cells. `progress` is called once per
/// finished `(repetition, ε, α)`.
///
/// # Errors
/// Invalid settings; a fit that does not converge.
pub fn ltc_vs_ctl(cfg: &CorruptionConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<CorruptionCell>> {
    cfg.validate()?;
    /// One repetition's results in one `(ε, α)` cell: index 0 = CTL, 1 = LTC.
    struct RepCell {
        clean: f64,
        err: [f64; 2],
        cos: [f64; 2],
        flip: [f64; 2],
    }
    let per_rep: Vec<Result<Vec<RepCell>>> = (0..cfg.reps)
        .into_par_iter()
        .map(|rep| {
            let (theta, data) = rep_data(cfg, rep)?;
            let view = data.view()?;
            let v = orthogonal_direction(&theta, seed_of(cfg.seed, &[rep as u64, 7]));
            let mut out = Vec::new();
            for (ei, &eps) in cfg.eps.iter().enumerate() {
                let rr = RandomizedResponse::new(eps)?;
                let clean_z = Pipeline::Clean
                    .apply(
                        &data.x,
                        cfg.d,
                        &data.y,
                        &rr,
                        &mut rng_for(cfg.seed, rep, ei, usize::MAX),
                    )?
                    .z;
                let clean = dist(
                    &fit_loss14(view.with_labels(&clean_z)?, Some(eps), cfg.radius)?.theta,
                    &theta,
                );
                for (ai, &alpha) in cfg.alphas.iter().enumerate() {
                    let adv = match cfg.adversary {
                        AdversaryKind::Oblivious => Adversary::ObliviousMask { alpha },
                        AdversaryKind::Directional => Adversary::DirectionalPush {
                            alpha,
                            direction: v.clone(),
                        },
                    };
                    let mut rc = RepCell {
                        clean,
                        err: [0.0; 2],
                        cos: [0.0; 2],
                        flip: [0.0; 2],
                    };
                    for (k, p) in [Pipeline::Ctl(adv.clone()), Pipeline::Ltc(adv)].iter().enumerate() {
                        let z = p
                            .apply(&data.x, cfg.d, &data.y, &rr, &mut rng_for(cfg.seed, rep, ei, ai))?
                            .z;
                        let th = fit_loss14(view.with_labels(&z)?, Some(eps), cfg.radius)?.theta;
                        rc.err[k] = dist(&th, &theta);
                        rc.cos[k] = cosine(&th, &theta);
                        rc.flip[k] = z.iter().zip(&data.y).filter(|(a, b)| a != b).count() as f64 / cfg.n as f64;
                    }
                    out.push(rc);
                    progress();
                }
            }
            Ok(out)
        })
        .collect();
    let per_rep: Vec<Vec<RepCell>> = per_rep.into_iter().collect::<Result<_>>()?;
    let mut cells = Vec::new();
    for &eps in &cfg.eps {
        for &alpha in &cfg.alphas {
            let k = cells.len();
            let col = |f: &dyn Fn(&RepCell) -> f64| -> Vec<f64> { per_rep.iter().map(|r| f(&r[k])).collect() };
            cells.push(CorruptionCell {
                eps,
                alpha,
                clean: col(&|r| r.clean),
                ctl: col(&|r| r.err[0]),
                ltc: col(&|r| r.err[1]),
                cos: [col(&|r| r.cos[0]), col(&|r| r.cos[1])],
                flip: [mean(&col(&|r| r.flip[0])), mean(&col(&|r| r.flip[1]))],
            });
        }
    }
    Ok(cells)
}

fn rng_for(seed: u64, rep: usize, ei: usize, ai: usize) -> privpref::mechanism::SimRng {
    simulation_rng(seed_of(seed, &[rep as u64, ei as u64, ai as u64, 11]))
}

/// The LTC signal threshold: loss (14) under CTL and LTC with the oblivious mask
/// at corruption fractions `alphas` around `α* = (e^ε − 1)/(2e^ε)`; reports flip rates and
/// `cos(θ̂, θ*)` (→ 0 or below for LTC past `α*`). Uses `cfg` with the adversary forced to
/// [`AdversaryKind::Oblivious`].
///
/// # Errors
/// As [`ltc_vs_ctl`].
pub fn signal_threshold(cfg: &CorruptionConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<CorruptionCell>> {
    let cfg = CorruptionConfig {
        adversary: AdversaryKind::Oblivious,
        ..cfg.clone()
    };
    ltc_vs_ctl(&cfg, progress)
}

/// Settings of [`rate_in_n`]. Defaults: `d = 5`, `‖θ*‖ = 1`, `B' = 4`,
/// `n ∈ {1000, 2000, 4000, 8000, 16000, 32000}`, `ε ∈ {0.5, 1}` (and the clean MLE), 40
/// repetitions, seed 2025.
#[derive(Debug, Clone, PartialEq)]
pub struct RateConfig {
    /// Dimension.
    pub d: usize,
    /// `‖θ*‖`.
    pub theta_norm: f64,
    /// `B'`.
    pub radius: f64,
    /// Sample sizes (nested: size `n` is the first `n` rows of one draw of the largest).
    pub ns: Vec<usize>,
    /// Privacy levels.
    pub eps: Vec<f64>,
    /// Repetitions.
    pub reps: usize,
    /// Base seed.
    pub seed: u64,
}

impl Default for RateConfig {
    fn default() -> Self {
        RateConfig {
            d: 5,
            theta_norm: 1.0,
            radius: 4.0,
            ns: vec![1000, 2000, 4000, 8000, 16000, 32000],
            eps: vec![0.5, 1.0],
            reps: 40,
            seed: 2025,
        }
    }
}

/// Errors of one estimator (`eps = None`: the clean MLE) at every `n`.
#[derive(Debug, Clone)]
pub struct RateCurve {
    /// ε, or `None` for the clean MLE.
    pub eps: Option<f64>,
    /// `‖θ̂ − θ*‖₂`: `errors[k][rep]` at `ns[k]`.
    pub errors: Vec<Vec<f64>>,
    /// Log-log slope of the mean error in `n` with its bootstrap interval.
    pub slope: SlopeCi,
    /// The sandwich prediction of the RMS error at the largest `n`, `√(tr C/n)` with
    /// `C = A⁻¹(A + V_ε Σ)A⁻¹` on the sum-zero subspace, `A = (1/n)Σσ'(x_iᵀθ*)x_ix_iᵀ`,
    /// `Σ = (1/n)Σ x_ix_iᵀ`, `V_ε = e^ε/(e^ε − 1)²` (0 for the MLE; our derivation), averaged over
    /// the repetitions.
    pub sandwich_rms: f64,
}

/// The `α = 0` rate and privacy factor: loss (14) at every `n` and ε, and the
/// clean MLE.
///
/// # Errors
/// Invalid settings; a fit that does not converge.
pub fn rate_in_n(cfg: &RateConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<RateCurve>> {
    check_radius(cfg.radius)?;
    for &e in &cfg.eps {
        check_eps(e)?;
    }
    let nmax = *cfg.ns.iter().max().ok_or_else(|| Error::param("ns", "is empty"))?;
    if cfg.reps == 0 || cfg.d < 2 || cfg.ns.contains(&0) {
        return Err(Error::param("config", "needs reps >= 1, d >= 2 and every n >= 1"));
    }
    let levels: Vec<Option<f64>> = std::iter::once(None).chain(cfg.eps.iter().map(|&e| Some(e))).collect();
    // per rep: per level: (errors per n, sandwich trace / nmax)
    type RepOut = Vec<(Vec<f64>, f64)>;
    let per_rep: Vec<Result<RepOut>> = (0..cfg.reps)
        .into_par_iter()
        .map(|rep| {
            let mut rng = simulation_rng(seed_of(cfg.seed, &[rep as u64]));
            let theta = theta_star(cfg.d, cfg.theta_norm, true, &mut rng)?;
            let data = btl_pairs(nmax, &theta, &mut rng)?;
            let mut out = Vec::new();
            for (li, level) in levels.iter().enumerate() {
                let z = match level {
                    None => data.y.clone(),
                    Some(eps) => {
                        let rr = RandomizedResponse::new(*eps)?;
                        Pipeline::Clean
                            .apply(&data.x, cfg.d, &data.y, &rr, &mut rng_for(cfg.seed, rep, li, 0))?
                            .z
                    }
                };
                let mut errs = Vec::new();
                for &n in &cfg.ns {
                    let view = PairwiseView::new(&data.x[..n * cfg.d], n, cfg.d, &z[..n], None)?;
                    errs.push(dist(&fit_loss14(view, *level, cfg.radius)?.theta, &theta));
                    progress();
                }
                let v = level.map_or(0.0, |e| e.exp() / (e.exp_m1() * e.exp_m1()));
                out.push((errs, sandwich_trace(&data.x, cfg.d, &theta, v) / nmax as f64));
            }
            Ok(out)
        })
        .collect();
    let per_rep: Vec<RepOut> = per_rep.into_iter().collect::<Result<_>>()?;
    let xs: Vec<f64> = cfg.ns.iter().map(|&n| n as f64).collect();
    Ok(levels
        .iter()
        .enumerate()
        .map(|(li, &eps)| {
            let errors: Vec<Vec<f64>> = (0..cfg.ns.len())
                .map(|k| per_rep.iter().map(|r| r[li].0[k]).collect())
                .collect();
            let slope = bootstrap_slope(&xs, &errors, 1000, seed_of(cfg.seed, &[li as u64, 99]));
            let sandwich_rms = mean(&per_rep.iter().map(|r| r[li].1).collect::<Vec<_>>()).sqrt();
            RateCurve {
                eps,
                errors,
                slope,
                sandwich_rms,
            }
        })
        .collect())
}

/// `tr(A⁻¹(A + vΣ)A⁻¹)` on the sum-zero subspace (Helmert-free: `P = I − 11ᵀ/d`, inverse by
/// Gauss–Jordan on `A + 11ᵀ/d`, which equals `A⁺ + 11ᵀ/d` when `A1 = 0`... see below).
///
/// The features here are not sum-zero, so `A` is projected: `A_P = P A P`, and the inverse on
/// the subspace is `(A_P + 11ᵀ/d)⁻¹ − 11ᵀ/d`.
fn sandwich_trace(x: &[f64], d: usize, theta: &[f64], v: f64) -> f64 {
    let n = x.len() / d;
    let mut a = vec![0.0; d * d];
    let mut s = vec![0.0; d * d];
    for r in x.chunks_exact(d) {
        let t: f64 = r.iter().zip(theta).map(|(p, q)| p * q).sum();
        let sg = privpref::math::simd::scalar::dsigmoid(t);
        for i in 0..d {
            for j in 0..d {
                a[i * d + j] += sg * r[i] * r[j];
                s[i * d + j] += r[i] * r[j];
            }
        }
    }
    a.iter_mut().for_each(|q| *q /= n as f64);
    s.iter_mut().for_each(|q| *q /= n as f64);
    let proj = |m: &[f64]| -> Vec<f64> {
        let mut o = m.to_vec();
        let rm: Vec<f64> = (0..d)
            .map(|i| m[i * d..(i + 1) * d].iter().sum::<f64>() / d as f64)
            .collect();
        let cm: Vec<f64> = (0..d)
            .map(|j| (0..d).map(|i| m[i * d + j]).sum::<f64>() / d as f64)
            .collect();
        let tot = rm.iter().sum::<f64>() / d as f64;
        for i in 0..d {
            for j in 0..d {
                o[i * d + j] = m[i * d + j] - rm[i] - cm[j] + tot;
            }
        }
        o
    };
    let ap = proj(&a);
    let sp = proj(&s);
    let mut inv_in = ap.clone();
    inv_in.iter_mut().for_each(|q| *q += 1.0 / d as f64);
    let mut ainv = invert(&inv_in, d);
    ainv.iter_mut().for_each(|q| *q -= 1.0 / d as f64);
    // C = Ainv (A_P + v S_P) Ainv; trace.
    let mut m = ap.clone();
    for (q, w) in m.iter_mut().zip(&sp) {
        *q += v * w;
    }
    let tmp = matmul(&ainv, &m, d);
    let c = matmul(&tmp, &ainv, d);
    (0..d).map(|i| c[i * d + i]).sum()
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

/// Gauss–Jordan inverse with partial pivoting of a small, well-conditioned SPD matrix.
fn invert(m: &[f64], d: usize) -> Vec<f64> {
    let mut a = m.to_vec();
    let mut inv = vec![0.0; d * d];
    for i in 0..d {
        inv[i * d + i] = 1.0;
    }
    for col in 0..d {
        let piv = (col..d)
            .max_by(|&p, &q| a[p * d + col].abs().total_cmp(&a[q * d + col].abs()))
            .unwrap_or(col);
        if piv != col {
            for j in 0..d {
                a.swap(col * d + j, piv * d + j);
                inv.swap(col * d + j, piv * d + j);
            }
        }
        let p = a[col * d + col];
        for j in 0..d {
            a[col * d + j] /= p;
            inv[col * d + j] /= p;
        }
        for r in 0..d {
            if r != col {
                let f = a[r * d + col];
                if f != 0.0 {
                    for j in 0..d {
                        a[r * d + j] -= f * a[col * d + j];
                        inv[r * d + j] -= f * inv[col * d + j];
                    }
                }
            }
        }
    }
    inv
}

/// Settings of [`dpo_rates`] (a synthetic analogue of the paper's DPO experiment). Defaults: 500
/// states, 10 actions, `d = 5`, `‖θ*‖ = ‖θ_sft‖ = 1` (sum-zero, drawn per repetition), `β = 1`, `B'
/// = 2βB = 4`... with `B = 1`: `B' = 2`, `n ∈ {1000, 4000, 16000, 64000}`, `ε ∈ {0.5, 1}` and
/// clean, 20 repetitions, seed 2025.
#[derive(Debug, Clone, PartialEq)]
pub struct DpoConfig {
    /// Public states.
    pub states: usize,
    /// Actions per state.
    pub actions: usize,
    /// Dimension.
    pub d: usize,
    /// `‖θ*‖ = ‖θ_sft‖ = B`.
    pub theta_norm: f64,
    /// KL temperature `β`.
    pub beta: f64,
    /// Sample sizes (nested).
    pub ns: Vec<usize>,
    /// Privacy levels (the clean fit is always included).
    pub eps: Vec<f64>,
    /// Repetitions.
    pub reps: usize,
    /// Base seed.
    pub seed: u64,
}

impl Default for DpoConfig {
    fn default() -> Self {
        DpoConfig {
            states: 500,
            actions: 10,
            d: 5,
            theta_norm: 1.0,
            beta: 1.0,
            ns: vec![1000, 4000, 16000, 64000],
            eps: vec![0.5, 1.0],
            reps: 20,
            seed: 2025,
        }
    }
}

/// One privacy level of [`dpo_rates`].
#[derive(Debug, Clone)]
pub struct DpoCurve {
    /// ε (`None`: clean labels).
    pub eps: Option<f64>,
    /// `‖θ̂' − θ*‖₂` of the returned policy parameter: `[k][rep]`.
    pub param_error: Vec<Vec<f64>>,
    /// `SubOpt(π_{θ̂'})`: `[k][rep]`.
    pub subopt: Vec<Vec<f64>>,
    /// Slope of the mean parameter error in `n`.
    pub slope: SlopeCi,
}

/// DPO by the reduction (Zhou, Wu & Orabona (2025), Prop. 4.6) on a log-linear contextual bandit:
/// parameter error and sub-optimality of `π_{θ̂'}` against `n` and ε.
///
/// # Errors
/// Invalid settings; a fit that does not converge.
pub fn dpo_rates(cfg: &DpoConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<DpoCurve>> {
    let nmax = *cfg.ns.iter().max().ok_or_else(|| Error::param("ns", "is empty"))?;
    if cfg.reps == 0 || cfg.ns.contains(&0) {
        return Err(Error::param("config", "needs reps >= 1 and every n >= 1"));
    }
    for &e in &cfg.eps {
        check_eps(e)?;
    }
    let radius = 2.0 * cfg.beta * cfg.theta_norm;
    let levels: Vec<Option<f64>> = std::iter::once(None).chain(cfg.eps.iter().map(|&e| Some(e))).collect();
    type RepOut = Vec<Vec<(f64, f64)>>;
    let per_rep: Vec<Result<RepOut>> = (0..cfg.reps)
        .into_par_iter()
        .map(|rep| {
            let mut rng = simulation_rng(seed_of(cfg.seed, &[rep as u64]));
            let bandit = ContextualBandit::random(cfg.states, cfg.actions, cfg.d, &mut rng)?;
            let ts = theta_star(cfg.d, cfg.theta_norm, true, &mut rng)?;
            let tsft = theta_star(cfg.d, cfg.theta_norm, true, &mut rng)?;
            let data = bandit.dpo_pairs(&ts, &tsft, cfg.beta, nmax, &mut rng)?;
            let mut out = Vec::new();
            for (li, level) in levels.iter().enumerate() {
                let z = match level {
                    None => data.y.clone(),
                    Some(eps) => {
                        let rr = RandomizedResponse::new(*eps)?;
                        Pipeline::Clean
                            .apply(&data.x, cfg.d, &data.y, &rr, &mut rng_for(cfg.seed, rep, li, 1))?
                            .z
                    }
                };
                let mut row = Vec::new();
                for &n in &cfg.ns {
                    let view = PairwiseView::new(&data.x[..n * cfg.d], n, cfg.d, &z[..n], None)?;
                    let f = fit_dpo(view, *level, cfg.beta, &tsft, radius)?;
                    row.push((
                        dist(&f.theta, &ts),
                        bandit.suboptimality(&ts, &tsft, cfg.beta, &f.theta)?,
                    ));
                    progress();
                }
                out.push(row);
            }
            Ok(out)
        })
        .collect();
    let per_rep: Vec<RepOut> = per_rep.into_iter().collect::<Result<_>>()?;
    let xs: Vec<f64> = cfg.ns.iter().map(|&n| n as f64).collect();
    Ok(levels
        .iter()
        .enumerate()
        .map(|(li, &eps)| {
            let param_error: Vec<Vec<f64>> = (0..cfg.ns.len())
                .map(|k| per_rep.iter().map(|r| r[li][k].0).collect())
                .collect();
            let subopt: Vec<Vec<f64>> = (0..cfg.ns.len())
                .map(|k| per_rep.iter().map(|r| r[li][k].1).collect())
                .collect();
            let slope = bootstrap_slope(&xs, &param_error, 1000, seed_of(cfg.seed, &[li as u64, 98]));
            DpoCurve {
                eps,
                param_error,
                subopt,
                slope,
            }
        })
        .collect())
}

/// `c(ε) = coth(ε/2)`, re-exported for reports.
pub fn privacy_factor(eps: f64) -> f64 {
    rr_privacy_factor(eps)
}

/// One corruption fraction of [`hidden_direction`].
#[derive(Debug, Clone)]
pub struct HiddenCell {
    /// α.
    pub alpha: f64,
    /// `‖θ̂ − θ*‖_{Σ̂}` per repetition, `Σ̂ = (1/n)Σ x_ix_iᵀ`.
    pub seminorm: Vec<f64>,
    /// `‖θ̂ − θ*‖₂` per repetition.
    pub l2: Vec<f64>,
}

/// The hidden-direction design
/// ([`hidden_direction_design`](privpref::sim::corrupt::hidden_direction_design)): a fraction `α`
/// of the comparisons lies along a unit direction `e ⟂ θ*` of the sum-zero subspace that no other
/// comparison covers, and the adversary labels all of them `1` (clean labels otherwise, no privacy:
/// the clean MLE over `Θ_{B'}`). Prediction (Zhou, Wu & Orabona (2025), Thm 5.4): the seminorm
/// error `‖θ̂ − θ*‖_{Σ̂}` scales like `√α` without any coverage assumption — `≈ 3.87·√α` for `B' =
/// 4` and `‖θ*‖ = 1` — while the ℓ2 error stays `O(B')`.
///
/// # Errors
/// Invalid settings; a fit that does not converge.
pub fn hidden_direction(cfg: &CorruptionConfig, alphas: &[f64]) -> Result<Vec<HiddenCell>> {
    cfg.validate()?;
    alphas
        .iter()
        .enumerate()
        .map(|(ai, &alpha)| {
            let per: Vec<Result<(f64, f64)>> = (0..cfg.reps)
                .into_par_iter()
                .map(|rep| {
                    let mut rng = simulation_rng(seed_of(cfg.seed, &[rep as u64, 31]));
                    let theta = theta_star(cfg.d, cfg.theta_norm, true, &mut rng)?;
                    let e = orthogonal_direction(&theta, seed_of(cfg.seed, &[rep as u64, 32]));
                    let (data, adv) = privpref::sim::corrupt::hidden_direction_design(
                        cfg.n,
                        &theta,
                        &e,
                        alpha,
                        1.0,
                        &mut simulation_rng(seed_of(cfg.seed, &[rep as u64, ai as u64, 33])),
                    )?;
                    let mut z = data.y.clone();
                    adv.corrupt(&data.x, cfg.d, &data.y, &mut z, &mut rng)?;
                    let th = fit_loss14(data.view()?.with_labels(&z)?, None, cfg.radius)?.theta;
                    let delta: Vec<f64> = th.iter().zip(&theta).map(|(a, b)| a - b).collect();
                    let semi = (data
                        .x
                        .chunks_exact(cfg.d)
                        .map(|r| {
                            let t: f64 = r.iter().zip(&delta).map(|(a, b)| a * b).sum();
                            t * t
                        })
                        .sum::<f64>()
                        / cfg.n as f64)
                        .sqrt();
                    Ok((semi, norm(&delta)))
                })
                .collect();
            let per: Vec<(f64, f64)> = per.into_iter().collect::<Result<_>>()?;
            Ok(HiddenCell {
                alpha,
                seminorm: per.iter().map(|p| p.0).collect(),
                l2: per.iter().map(|p| p.1).collect(),
            })
        })
        .collect()
}

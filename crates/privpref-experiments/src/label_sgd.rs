//! Label-private convex learning (Ghazi et al. (2021), on a CPU-sized convex problem): two
//! simulations on synthetic K-class data whose posterior is exactly a linear softmax model
//! ([`class_mixture`]).
//!
//! * [`label_sgd_comparison`]: accuracy and excess risk of one-pass label-private SGD with
//!   K-RR (LP-RR-SGD), RRTop-k and RR-with-prior (private histogram prior, one stage),
//!   RR-with-prior in two stages (LP-2ST, model prior, with and without the histogram prior in
//!   stage 1) and LP-Normal-SGD across ε, against the debiased ERM on K-RR labels solved exactly
//!   (the comparison point) and the clear-label ERM. Every method spends the same total ε (the
//!   histogram prior's `ε_p = prior_share·ε` is taken out of the label budget).
//! * [`lp_rr_sgd_rates`]: LP-RR-SGD's excess risk against `n` and `ε` with the exact stationary
//!   prediction `(η_n/4)·tr Σ_g` (the full-size version of the seeded test in
//!   `tests/library/label_sgd.rs`).
//!
//! Excess risk is `E_x KL(softmax(W*x) ‖ softmax(Wx))` on a fixed test sample
//! ([`excess_risk`]); accuracy is on the test sample's labels. Repetitions run in parallel and
//! are seeded from `(seed, r)` only (thread-count independent).

use privpref::data::{GroupLabels, GroupView, MulticlassView};
use privpref::error::{check_eps, Error, Result};
use privpref::estimator::label_sgd::{
    accuracy, debias_factors, debiased_score_gradient, excess_risk, histogram_prior, kmeans, lp_sgd, multi_stage,
    GaussianCalibration, LabelMechanism, LabelModel, LpSgdOptions, LpStep, MultiStageOptions, MulticlassModel,
};
use privpref::estimator::{fit_kwise, FitOptions, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::{GroupLossSpec, PlTop1};
use privpref::mechanism::{mix_seed as mix, simulation_rng, KaryRr, Mechanism};
use privpref::par::Par;
use privpref::privacy::NoiseRng;
use privpref::sim::{class_means, class_mixture};
use privpref::solver::Control;
use rayon::prelude::*;

/// The methods of [`label_sgd_comparison`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// LP-RR-SGD: K-RR on every label (Alg. 5).
    Krr,
    /// RRTop-k with the private histogram prior (Cor. 10), fixed `k`.
    RrTopK,
    /// RR-with-prior with the private histogram prior, one stage.
    RrPrior1,
    /// LP-2ST: stage 1 K-RR, stage 2 RR-with-prior from the stage-1 model.
    Lp2st,
    /// LP-2ST with the histogram prior in stage 1.
    Lp2stHist,
    /// LP-Normal-SGD, `(ε, δ)`.
    Normal,
    /// Debiased ERM on K-RR labels (`pl-krr`), solved exactly (L-BFGS to the KKT tolerance).
    DebiasedErm,
    /// Clear-label ERM (not private), solved exactly.
    ClearErm,
}

impl Method {
    /// All methods, in table order.
    pub const ALL: [Method; 8] = [
        Method::Krr,
        Method::RrTopK,
        Method::RrPrior1,
        Method::Lp2st,
        Method::Lp2stHist,
        Method::Normal,
        Method::DebiasedErm,
        Method::ClearErm,
    ];
    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            Method::Krr => "K-RR (LP-RR-SGD)",
            Method::RrTopK => "RRTop-k, histogram prior",
            Method::RrPrior1 => "RR-with-prior, histogram prior (1 stage)",
            Method::Lp2st => "RR-with-prior, LP-2ST (model prior)",
            Method::Lp2stHist => "RR-with-prior, LP-2ST (histogram prior in stage 1)",
            Method::Normal => "LP-Normal-SGD",
            Method::DebiasedErm => "debiased ERM on K-RR labels (exact)",
            Method::ClearErm => "clear-label ERM (exact, not private)",
        }
    }
}

/// Settings of [`label_sgd_comparison`].
#[derive(Debug, Clone, PartialEq)]
pub struct LabelSgdConfig {
    /// Classes `K`.
    pub k: usize,
    /// Features `d`.
    pub d: usize,
    /// Norm of the class means (noise 1: `W* = M`).
    pub mean_radius: f64,
    /// Training samples per repetition.
    pub n: usize,
    /// Test samples (fixed across repetitions).
    pub test_n: usize,
    /// `B` of the ball `‖W‖_F ≤ B`.
    pub radius: f64,
    /// Total privacy levels.
    pub eps: Vec<f64>,
    /// Repetitions.
    pub reps: usize,
    /// Base seed.
    pub seed: u64,
    /// Clusters of the histogram prior (k-means on the public features).
    pub clusters: usize,
    /// Share of ε spent on the histogram prior (`ε_p = share·ε`).
    pub prior_share: f64,
    /// `k` of RRTop-k.
    pub top_k: usize,
    /// Stage fractions of LP-2ST.
    pub fractions: Vec<f64>,
    /// Temperature of the model prior.
    pub temperature: f64,
    /// δ of LP-Normal-SGD.
    pub delta: f64,
    /// Step rule of every SGD method.
    pub step: LpStep,
}

impl Default for LabelSgdConfig {
    /// `K = 10`, `d = 10`, `‖μ_k‖ = 2.5` (Bayes accuracy ≈ 0.78), `n = 20000`, 20000 test
    /// samples, `B = 10`, `ε ∈ {0.25, 0.5, 1, 2, 4}`, 6 repetitions, 50 clusters, `ε_p = 0.1ε`,
    /// `k = 3`, LP-2ST fractions (0.6, 0.4) at temperature 1, `δ = 1e-5`, theory step.
    fn default() -> Self {
        LabelSgdConfig {
            k: 10,
            d: 10,
            mean_radius: 2.5,
            n: 20_000,
            test_n: 20_000,
            radius: 10.0,
            eps: vec![0.25, 0.5, 1.0, 2.0, 4.0],
            reps: 6,
            seed: 2002,
            clusters: 50,
            prior_share: 0.1,
            top_k: 3,
            fractions: vec![0.6, 0.4],
            temperature: 1.0,
            delta: 1e-5,
            step: LpStep::Theory(1.0),
        }
    }
}

/// One method at one ε (or once, for the clear-label ERM): per-repetition values.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodCell {
    /// The method.
    pub method: Method,
    /// Total ε (`None` for the clear-label ERM).
    pub eps: Option<f64>,
    /// Test accuracy per repetition.
    pub accuracy: Vec<f64>,
    /// Excess risk per repetition.
    pub excess: Vec<f64>,
    /// Mean label-set size per repetition (`k̄`; for LP-2ST the second stage's mean `k*`; for
    /// LP-Normal-SGD the noise σ; `NaN` otherwise).
    pub k_or_sigma: Vec<f64>,
    /// The guarantee's `(ε, δ)` (same for every repetition).
    pub guarantee: Option<(f64, f64)>,
}

/// The Bayes accuracy of the configuration's test sample (the true model's accuracy).
///
/// # Errors
/// As [`class_mixture`].
pub fn bayes_accuracy(cfg: &LabelSgdConfig) -> Result<f64> {
    let means = class_means(cfg.k, cfg.d, cfg.mean_radius, &mut simulation_rng(mix(cfg.seed, 1)))?;
    let test = class_mixture(cfg.test_n, cfg.k, &means, 1.0, &mut simulation_rng(mix(cfg.seed, 2)))?;
    let tm = MulticlassModel::new(MulticlassView::new(&test.x, cfg.test_n, cfg.d, cfg.k, &test.y)?, PlTop1)?;
    accuracy(&tm, &test.w_star)
}

type RepOut = Vec<(Method, Option<f64>, f64, f64, f64, Option<(f64, f64)>)>;

/// Runs the comparison (module docs); `progress` is called once per finished repetition.
///
/// # Errors
/// [`Error::InvalidParam`] for an invalid configuration; the errors of the estimators.
pub fn label_sgd_comparison(cfg: &LabelSgdConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<MethodCell>> {
    for &e in &cfg.eps {
        check_eps(e)?;
    }
    if cfg.reps == 0 || cfg.n == 0 || cfg.test_n == 0 {
        return Err(Error::param("reps", "needs at least one repetition and n ≥ 1"));
    }
    if !(cfg.prior_share > 0.0 && cfg.prior_share < 1.0) {
        return Err(Error::param(
            "prior-share",
            format!("must be in (0, 1), got {}", cfg.prior_share),
        ));
    }
    let (k, d) = (cfg.k, cfg.d);
    let means = class_means(k, d, cfg.mean_radius, &mut simulation_rng(mix(cfg.seed, 1)))?;
    let test = class_mixture(cfg.test_n, k, &means, 1.0, &mut simulation_rng(mix(cfg.seed, 2)))?;
    let tm = MulticlassModel::new(MulticlassView::new(&test.x, cfg.test_n, d, k, &test.y)?, PlTop1)?;
    let set = FeasibleSet::ball(cfg.radius)?;
    let mut control = Control::default();
    control.par = Par::Seq;
    let per_rep: Vec<RepOut> = (0..cfg.reps)
        .into_par_iter()
        .map(|r| -> Result<RepOut> {
            let base = mix(cfg.seed, 100 + r as u64);
            let data = class_mixture(cfg.n, k, &means, 1.0, &mut simulation_rng(base))?;
            let view = MulticlassView::new(&data.x, cfg.n, d, k, &data.y)?;
            let model = MulticlassModel::new(view, PlTop1)?;
            let eval =
                |th: &[f64]| -> Result<(f64, f64)> { Ok((accuracy(&tm, th)?, excess_risk(&tm, th, &test.w_star)?)) };
            let clusters = kmeans(&data.x, cfg.n, d, cfg.clusters, 100, base)?;
            let feats = view.group_features()?;
            let mut out: RepOut = Vec::new();
            // Clear-label ERM (exact).
            let gv = GroupView::new(&feats, cfg.n, k, k * d, GroupLabels::Choice(&data.y), None)?;
            let mut fo = FitOptions::new(GroupLossSpec::PlTop1, set);
            fo.solver = SolverKind::Lbfgs.into();
            fo.control = control.clone();
            let fit = fit_kwise(gv, &fo)?;
            let (a, e) = eval(&fit.theta)?;
            out.push((Method::ClearErm, None, a, e, f64::NAN, None));
            for (j, &eps) in cfg.eps.iter().enumerate() {
                let mut rng = NoiseRng::seeded(mix(base, 1000 + j as u64));
                let eps_p = cfg.prior_share * eps;
                let eps_l = eps - eps_p;
                let lp = |mech: LabelMechanism, e: f64| {
                    let mut o = LpSgdOptions::new(e, mech, set);
                    o.step = cfg.step;
                    o
                };
                // K-RR.
                let f = lp_sgd(&model, &lp(LabelMechanism::Krr, eps), None, None, &mut rng)?;
                let (a, e) = eval(&f.theta)?;
                out.push((
                    Method::Krr,
                    Some(eps),
                    a,
                    e,
                    f.detail.mean_k,
                    Some((
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").eps,
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").delta,
                    )),
                ));
                // Histogram prior (ε_p), then RRTop-k / RR-with-prior at ε − ε_p.
                let hp = histogram_prior(&clusters, &data.y, k, eps_p, &mut rng)?;
                let f = lp_sgd(
                    &model,
                    &lp(LabelMechanism::RrTopK { k: cfg.top_k }, eps_l),
                    Some(&hp.prior),
                    None,
                    &mut rng,
                )?;
                let (a, e) = eval(&f.theta)?;
                out.push((
                    Method::RrTopK,
                    Some(eps),
                    a,
                    e,
                    f.detail.mean_k,
                    Some((
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").eps,
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").delta,
                    )),
                ));
                let f = lp_sgd(
                    &model,
                    &lp(LabelMechanism::RrWithPrior, eps_l),
                    Some(&hp.prior),
                    None,
                    &mut rng,
                )?;
                let (a, e) = eval(&f.theta)?;
                out.push((
                    Method::RrPrior1,
                    Some(eps),
                    a,
                    e,
                    f.detail.mean_k,
                    Some((
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").eps,
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").delta,
                    )),
                ));
                // LP-2ST.
                let mo = |e: f64| {
                    let mut o = MultiStageOptions::new(e, cfg.fractions.clone(), set);
                    o.temperature = cfg.temperature;
                    o.split_seed = mix(base, 7);
                    o.step = cfg.step;
                    o
                };
                let f = multi_stage(&model, &mo(eps), None, &mut rng)?;
                let (a, e) = eval(&f.theta)?;
                let kk = f.detail.stages.last().map_or(f64::NAN, |s| s.mean_k);
                out.push((
                    Method::Lp2st,
                    Some(eps),
                    a,
                    e,
                    kk,
                    Some((
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").eps,
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").delta,
                    )),
                ));
                let f = multi_stage(&model, &mo(eps_l), Some(&hp.prior), &mut rng)?;
                let (a, e) = eval(&f.theta)?;
                let kk = f.detail.stages.last().map_or(f64::NAN, |s| s.mean_k);
                out.push((
                    Method::Lp2stHist,
                    Some(eps),
                    a,
                    e,
                    kk,
                    Some((
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").eps,
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").delta,
                    )),
                ));
                // LP-Normal-SGD.
                let mech = LabelMechanism::Normal {
                    delta: cfg.delta,
                    calibration: GaussianCalibration::Analytic,
                    sensitivity: None,
                };
                let f = lp_sgd(&model, &lp(mech, eps), None, None, &mut rng)?;
                let (a, e) = eval(&f.theta)?;
                let sigma = f.detail.normal.as_ref().map_or(f64::NAN, |nr| nr.sigma);
                out.push((
                    Method::Normal,
                    Some(eps),
                    a,
                    e,
                    sigma,
                    Some((
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").eps,
                        f.guarantee.as_ref().expect("an SGD fit has a guarantee").delta,
                    )),
                ));
                // Debiased ERM on K-RR labels (exact).
                let yt = KaryRr::new(eps, k)?.randomize(&data.y, &mut rng)?;
                let gv = GroupView::new(&feats, cfg.n, k, k * d, GroupLabels::Choice(&yt), None)?;
                let mut fo = FitOptions::new(GroupLossSpec::PlKrr { eps }, set);
                fo.solver = SolverKind::Lbfgs.into();
                fo.control = control.clone();
                let fit = fit_kwise(gv, &fo)?;
                let (a, e) = eval(&fit.theta)?;
                let g = fit.guarantee.as_ref().map(|g| (g.eps, g.delta));
                out.push((Method::DebiasedErm, Some(eps), a, e, f64::NAN, g));
            }
            progress();
            Ok(out)
        })
        .collect::<Result<_>>()?;
    let mut cells: Vec<MethodCell> = Vec::new();
    for rep in &per_rep {
        for &(method, eps, a, e, kk, g) in rep {
            match cells.iter_mut().find(|c| c.method == method && c.eps == eps) {
                Some(c) => {
                    c.accuracy.push(a);
                    c.excess.push(e);
                    c.k_or_sigma.push(kk);
                }
                None => cells.push(MethodCell {
                    method,
                    eps,
                    accuracy: vec![a],
                    excess: vec![e],
                    k_or_sigma: vec![kk],
                    guarantee: g,
                }),
            }
        }
    }
    Ok(cells)
}

/// Settings of [`lp_rr_sgd_rates`].
#[derive(Debug, Clone, PartialEq)]
pub struct RateConfig {
    /// Classes `K`.
    pub k: usize,
    /// Features `d`.
    pub d: usize,
    /// Norm of the class means.
    pub mean_radius: f64,
    /// Sample sizes.
    pub ns: Vec<usize>,
    /// Privacy levels.
    pub eps: Vec<f64>,
    /// Repetitions per cell.
    pub reps: usize,
    /// `B`.
    pub radius: f64,
    /// Stated Lipschitz constant `L` (fixed, so the step does not change with the sample's
    /// largest feature norm).
    pub lipschitz: f64,
    /// Multiplier `c` of the theory step `c·D/(G√t)`.
    pub step_scale: f64,
    /// Test samples for the excess risk and the prediction.
    pub test_n: usize,
    /// Base seed.
    pub seed: u64,
}

impl Default for RateConfig {
    /// The test's problem at full size: `K = 4`, `d = 3`, `‖μ_k‖ = 1`, `n ∈ {4000, …, 256000}`,
    /// `ε ∈ {0.25, 0.5, 1}`, 40 repetitions, `B = 3`, `L = 8`, `c = 8`.
    fn default() -> Self {
        RateConfig {
            k: 4,
            d: 3,
            mean_radius: 1.0,
            ns: vec![4000, 16_000, 64_000, 256_000],
            eps: vec![0.25, 0.5, 1.0],
            reps: 40,
            radius: 3.0,
            lipschitz: 8.0,
            step_scale: 8.0,
            test_n: 20_000,
            seed: 7,
        }
    }
}

/// One cell of [`lp_rr_sgd_rates`].
#[derive(Debug, Clone, PartialEq)]
pub struct RateCell {
    /// ε.
    pub eps: f64,
    /// n.
    pub n: usize,
    /// Excess risk per repetition.
    pub excess: Vec<f64>,
    /// The stationary prediction `(η_n/4)·tr Σ_g` at `θ*`.
    pub predicted: f64,
}

/// LP-RR-SGD's excess risk against `n` and `ε` (module docs), with the exact stationary
/// prediction: linearised SGD with step `η` at the optimum has `E[F − F*] ≈ (η/4) tr Σ_g`,
/// `tr Σ_g = E_x Σ_j P(ỹ = j | x) ‖ĝ(j)‖²` (evaluated exactly on the test sample).
///
/// # Errors
/// [`Error::InvalidParam`] for an invalid configuration.
pub fn lp_rr_sgd_rates(cfg: &RateConfig, progress: &(dyn Fn() + Sync)) -> Result<Vec<RateCell>> {
    if cfg.reps == 0 || cfg.ns.is_empty() || cfg.eps.is_empty() {
        return Err(Error::param("reps", "needs repetitions, sizes and privacy levels"));
    }
    let (k, d) = (cfg.k, cfg.d);
    let means = class_means(k, d, cfg.mean_radius, &mut simulation_rng(mix(cfg.seed, 1)))?;
    let test = class_mixture(cfg.test_n, k, &means, 1.0, &mut simulation_rng(mix(cfg.seed, 2)))?;
    let tm = MulticlassModel::new(MulticlassView::new(&test.x, cfg.test_n, d, k, &test.y)?, PlTop1)?;
    let set = FeasibleSet::ball(cfg.radius)?;
    let mut cells = Vec::new();
    for &eps in &cfg.eps {
        check_eps(eps)?;
        // tr Σ_g at θ*.
        let mech = KaryRr::new(eps, k)?;
        let (keep, other) = (mech.keep_probability(), mech.other_probability());
        let (mut u, mut vals, mut g, mut sc, mut gu) =
            (vec![0.0; k], vec![0.0; k], vec![0.0; k * k], vec![0.0; k], vec![0.0; k]);
        let mut tr = 0.0;
        for i in 0..tm.n() {
            tm.scores(i, &test.w_star, &mut u);
            tm.eval_all(&u, &mut vals, Some(&mut g), &mut sc);
            let xn2: f64 = test.x[i * d..(i + 1) * d].iter().map(|v| v * v).sum();
            for (j, &vj) in vals.iter().enumerate() {
                let pt = other + (keep - other) * (-vj).exp();
                debiased_score_gradient(&g, k, j as u8, None, eps, true, &mut gu);
                tr += pt * gu.iter().map(|v| v * v).sum::<f64>() * xn2;
            }
        }
        tr /= tm.n() as f64;
        let f = debias_factors(eps, k).0;
        let gbound = cfg.lipschitz * (8.0 * f * f + 2.0).sqrt();
        for &n in &cfg.ns {
            let excess: Vec<f64> = (0..cfg.reps)
                .into_par_iter()
                .map(|r| -> Result<f64> {
                    let mut rng = simulation_rng(mix(mix(cfg.seed, 100 + r as u64), n as u64));
                    let data = class_mixture(n, k, &means, 1.0, &mut rng)?;
                    let model = MulticlassModel::new(MulticlassView::new(&data.x, n, d, k, &data.y)?, PlTop1)?;
                    let mut opts = LpSgdOptions::new(eps, LabelMechanism::Krr, set);
                    opts.step = LpStep::Theory(cfg.step_scale);
                    opts.lipschitz = Some(cfg.lipschitz);
                    let mut nr = NoiseRng::seeded(mix(mix(cfg.seed, 200 + r as u64), n as u64));
                    let fit = lp_sgd(&model, &opts, None, None, &mut nr)?;
                    excess_risk(&tm, &fit.theta, &test.w_star)
                })
                .collect::<Result<_>>()?;
            let eta = cfg.step_scale * 2.0 * cfg.radius / (gbound * (n as f64).sqrt());
            cells.push(RateCell {
                eps,
                n,
                excess,
                predicted: eta / 4.0 * tr,
            });
            progress();
        }
    }
    Ok(cells)
}

//! `privpref fit --solver sgd --label-mechanism krr|rrtopk|rr-prior|normal`: label-private SGD
//! on **clear** labels (Ghazi et al. (2021); `privpref::estimator::label_sgd`). Each label is read
//! and privatised once, when its sample is used, by the chosen mechanism; the JSON carries the
//! guarantee.
//!
//! * Models (`--loss`): `mle` (binary linear, `x` n × d, `y ∈ {0,1}`), `pl-top1 --k K` (K-wise,
//!   `x` n × K × d, `y` the chosen alternative), `softmax --k K` (K-class softmax regression,
//!   `x` n × d, `y ∈ 0..K`, `θ = vec(W)` row-major `K × d`).
//! * `--eps E` (each label's level); `rrtopk` needs `--top-k k`; `rrtopk` and `rr-prior` need a
//!   prior: `--prior P.npy` (float64 n × K, public, computed without the labels), or
//!   `--clusters C.npy --prior-eps EP` (the private histogram prior over public cluster ids;
//!   costs `EP` more), or (`rr-prior` only) `--stages T` (multi-stage training, stage 1 K-RR or
//!   the histogram prior; `--stage-fractions r1,…,rT`, default equal; `--temperature t`,
//!   default 1; `--reuse`). `normal` needs `--delta D` and takes `--sigma-rule analytic|classic`
//!   (default analytic) and `--sensitivity Δ` (default: from the public features).
//! * `--step theory|theory:C|invsqrt:C|const:ETA` (default `theory`, needs `--radius`),
//!   `--lipschitz L`, `--no-debias`, `--theta0`, `--seed S` (simulation-only randomness).
//! * The JSON has the guarantee and what the run saw, but no statistic of the clear labels
//!   (`objective` and `kkt_residual` are `null`: they would not be covered by the guarantee).
//! * One pass in data order: `--batch`, `--epochs`, `--shuffle`, `--average` other than the
//!   defaults are errors, as are `--ridge`, `--linear-term`, `--weights`, `--central`.

use super::{write_json, Failure, FitArgs};
use clap::Args;
use privpref::data::{npy, GroupLabels, GroupView, MulticlassView, PairwiseView};
use privpref::estimator::label_sgd::GroupModel;
use privpref::estimator::label_sgd::{
    histogram_prior, lp_sgd, multi_stage, GaussianCalibration, LabelMechanism, LabelModel, LpSgdOptions, LpStep,
    MultiStageOptions, MulticlassModel, PairwiseModel, Prior,
};
use privpref::feasible::FeasibleSet;
use privpref::loss::{Logistic, PlTop1};
use privpref::privacy::NoiseRng;
use privpref::Error;
use serde_json::{json, Value};
use std::path::PathBuf;

/// The options of `fit` that only `--label-mechanism` uses.
#[derive(Args, Default)]
pub struct LabelArgs {
    /// Label-private SGD on clear labels: krr | rrtopk | rr-prior | normal (Ghazi et al.
    /// 2021; needs --solver sgd and --eps).
    #[arg(long)]
    pub label_mechanism: Option<String>,
    /// rrtopk: the size k of the top set (1 ≤ k ≤ K).
    #[arg(long)]
    pub top_k: Option<usize>,
    /// rrtopk / rr-prior: a public per-sample prior, float64 .npy of shape n × K.
    #[arg(long)]
    pub prior: Option<PathBuf>,
    /// rrtopk / rr-prior: public cluster ids (integer .npy of length n) for the private histogram
    /// prior (with --prior-eps).
    #[arg(long)]
    pub clusters: Option<PathBuf>,
    /// The histogram prior's privacy level ε_p > 0 (added to --eps by basic composition).
    #[arg(long)]
    pub prior_eps: Option<f64>,
    /// rr-prior: multi-stage training with T ≥ 2 stages (LP-MST).
    #[arg(long)]
    pub stages: Option<usize>,
    /// Multi-stage: the stage fractions r1,…,rT (default equal).
    #[arg(long)]
    pub stage_fractions: Option<String>,
    /// Multi-stage: temperature t > 0 of the model prior (default 1).
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Multi-stage: reuse earlier stages' releases (filtered by the previous model's top-⌊k̄⌋).
    #[arg(long)]
    pub reuse: bool,
    /// normal: σ calibration, analytic (default) | classic (ε < 1 only).
    #[arg(long)]
    pub sigma_rule: Option<String>,
    /// normal: the label sensitivity Δ of a sample's gradient (default: from the features).
    #[arg(long)]
    pub sensitivity: Option<f64>,
    /// The Lipschitz constant L of the theory step (default: from the features).
    #[arg(long)]
    pub lipschitz: Option<f64>,
    /// Plain gradients on the randomised labels instead of the debiased ones.
    #[arg(long)]
    pub no_debias: bool,
}

impl LabelArgs {
    /// The first label-SGD-only option given without `--label-mechanism`, if any.
    pub fn stray(&self) -> Option<&'static str> {
        [
            ("top-k", self.top_k.is_some()),
            ("prior", self.prior.is_some()),
            ("clusters", self.clusters.is_some()),
            ("prior-eps", self.prior_eps.is_some()),
            ("stages", self.stages.is_some()),
            ("stage-fractions", self.stage_fractions.is_some()),
            ("temperature", self.temperature.is_some()),
            ("reuse", self.reuse),
            ("sigma-rule", self.sigma_rule.is_some()),
            ("sensitivity", self.sensitivity.is_some()),
            ("lipschitz", self.lipschitz.is_some()),
            ("no-debias", self.no_debias),
        ]
        .into_iter()
        .find(|(_, g)| *g)
        .map(|(n, _)| n)
    }
}

fn reject(name: &'static str, why: impl Into<String>) -> Result<(), Failure> {
    Err(Error::param(name, why.into()).into())
}

/// The prior of a run: none, public rows, or the histogram prior.
enum PriorChoice {
    None,
    Public(PathBuf),
    Histogram(PathBuf, f64),
}

/// Runs a label-private SGD fit (module docs).
pub fn run(a: FitArgs) -> Result<(), Failure> {
    let l = &a.label;
    let mech_name = l.label_mechanism.clone().expect("dispatched on --label-mechanism");
    if a.solver != "sgd" {
        return reject(
            "label-mechanism",
            format!(
                "--label-mechanism runs label-private SGD: give --solver sgd (not `{}`)",
                a.solver
            ),
        );
    }
    // Options that do not apply to a one-pass label-private run.
    if a.central.central {
        return reject(
            "central",
            "--central and --label-mechanism are different estimators; give one",
        );
    }
    if let Some(name) = a.central.stray_except(Some("delta")) {
        return reject(name, format!("--{name} applies only with --central"));
    }
    for (name, bad) in [
        ("batch", a.batch.is_some_and(|b| b != 1)),
        ("epochs", a.epochs.is_some_and(|e| e != 1)),
        ("shuffle", a.shuffle),
        ("average", a.average.as_deref().is_some_and(|s| s != "last")),
    ] {
        if bad {
            return reject(
                name,
                format!("label-private SGD is one pass in data order with the last iterate (each label is privatised once); --{name} is not supported"),
            );
        }
    }
    for (name, given) in [
        ("ridge", a.ridge != 0.0),
        ("linear-term", a.linear_term.is_some()),
        ("weights", a.weights.is_some()),
        ("memory", a.memory.is_some()),
        ("polish-iters", a.polish_iters.is_some()),
        ("sample-start", a.sample_start.is_some()),
        ("top", a.top.is_some()),
    ] {
        if given {
            return reject(name, format!("--{name} is not supported with --label-mechanism"));
        }
    }
    let eps = a
        .eps
        .ok_or_else(|| Error::param("eps", "--label-mechanism needs --eps (each label's privacy level)"))?;
    privpref::error::check_eps(eps)?;
    let step = match a.step.as_deref() {
        Some(s) => LpStep::parse(s)?,
        None => LpStep::default(),
    };
    let set = FeasibleSet::parse_default(a.constraint.as_deref(), a.radius)?;
    let is_normal = mech_name == "normal";
    if a.central.delta.is_some() && !is_normal {
        return reject(
            "delta",
            format!("--delta applies only to --label-mechanism normal, not `{mech_name}`"),
        );
    }
    for (name, given) in [
        ("sigma-rule", l.sigma_rule.is_some()),
        ("sensitivity", l.sensitivity.is_some()),
    ] {
        if given && !is_normal {
            return reject(name, format!("--{name} applies only to --label-mechanism normal"));
        }
    }
    if l.top_k.is_some() && mech_name != "rrtopk" {
        return reject(
            "top-k",
            format!("--top-k applies only to --label-mechanism rrtopk, not `{mech_name}`"),
        );
    }
    let staged = l.stages.is_some();
    for (name, given) in [
        ("stage-fractions", l.stage_fractions.is_some()),
        ("temperature", l.temperature.is_some()),
        ("reuse", l.reuse),
    ] {
        if given && !staged {
            return reject(name, format!("--{name} applies only with --stages"));
        }
    }
    if staged && mech_name != "rr-prior" {
        return reject(
            "stages",
            format!("--stages runs multi-stage RR-with-prior: use --label-mechanism rr-prior, not `{mech_name}`"),
        );
    }
    let prior_choice = match (&l.prior, &l.clusters, l.prior_eps) {
        (Some(_), Some(_), _) => return reject("prior", "give either --prior or --clusters, not both"),
        (Some(p), None, None) => PriorChoice::Public(p.clone()),
        (Some(_), None, Some(_)) => {
            return reject(
                "prior-eps",
                "--prior-eps goes with --clusters (the histogram prior); a --prior file is public",
            )
        }
        (None, Some(c), Some(e)) => PriorChoice::Histogram(c.clone(), e),
        (None, Some(_), None) => {
            return reject(
                "prior-eps",
                "--clusters needs --prior-eps (the histogram prior's privacy level)",
            )
        }
        (None, None, Some(_)) => return reject("prior-eps", "--prior-eps needs --clusters"),
        (None, None, None) => PriorChoice::None,
    };
    let mechanism = match mech_name.as_str() {
        "krr" => LabelMechanism::Krr,
        "rrtopk" => LabelMechanism::RrTopK {
            k: l.top_k
                .ok_or_else(|| Error::param("top-k", "--label-mechanism rrtopk needs --top-k k"))?,
        },
        "rr-prior" => LabelMechanism::RrWithPrior,
        "normal" => LabelMechanism::Normal {
            delta: a
                .central
                .delta
                .ok_or_else(|| Error::param("delta", "--label-mechanism normal needs --delta (approximate DP)"))?,
            calibration: GaussianCalibration::parse(l.sigma_rule.as_deref().unwrap_or("analytic"))?,
            sensitivity: l.sensitivity,
        },
        other => {
            return reject(
                "label-mechanism",
                format!("unknown label mechanism `{other}` (expected krr, rrtopk, rr-prior or normal)"),
            )
        }
    };
    match (&prior_choice, mechanism.needs_prior(), staged) {
        (PriorChoice::None, true, false) => {
            return reject(
                "prior",
                format!("--label-mechanism {mech_name} needs a prior: --prior P.npy, --clusters C.npy with --prior-eps, or (rr-prior) --stages T"),
            )
        }
        (PriorChoice::Public(_) | PriorChoice::Histogram(..), false, _) => {
            return reject("prior", format!("--label-mechanism {mech_name} takes no prior"))
        }
        (PriorChoice::Public(_), true, true) => {
            return reject("prior", "--stages computes its priors from the model (stage 1 may use --clusters with --prior-eps)")
        }
        _ => {}
    }
    let theta0 = a.theta0.as_ref().map(npy::read_vector).transpose()?;
    let mut rng = NoiseRng::from_seed(a.seed)?;
    let start = std::time::Instant::now();
    let settings = Settings {
        eps,
        mechanism,
        set,
        step,
        lipschitz: l.lipschitz,
        debias: !l.no_debias,
        staged: l.stages,
        fractions: l.stage_fractions.clone(),
        temperature: l.temperature,
        reuse: l.reuse,
        prior: prior_choice,
        theta0,
    };
    let (mut v, n, d) = match a.loss.as_str() {
        "mle" => {
            if a.k.is_some_and(|k| k != 2) {
                return reject("k", "--loss mle is binary (K = 2)");
            }
            let m = npy::load_matrix(&a.x)?;
            let (n, d) = (m.n(), m.d());
            // The label-private SGD models take `&[f64]`: float64 features are the mapped file
            // itself, float32 features are widened into a copy.
            let x = super::features_f64(&m);
            let y = npy::read_labels(&a.y, 2)?;
            let view = PairwiseView::new(&x, n, d, &y, None)?;
            let model = PairwiseModel::new(&view, Logistic)?;
            (fit_model(&model, &y, 2, &settings, &mut rng)?, n, d)
        }
        "softmax" => {
            let k =
                a.k.ok_or_else(|| Error::param("k", "--loss softmax needs --k (number of classes)"))?;
            let m = npy::load_matrix(&a.x)?;
            let (n, d) = (m.n(), m.d());
            let x = super::features_f64(&m); // `MulticlassView` takes `&[f64]` (as above)
            let y = npy::read_labels(&a.y, k.min(256) as u32)?;
            let view = MulticlassView::new(&x, n, d, k, &y)?;
            let model = MulticlassModel::new(view, PlTop1)?;
            (fit_model(&model, &y, k, &settings, &mut rng)?, n, d)
        }
        "pl-top1" => {
            let k_arg =
                a.k.ok_or_else(|| Error::param("k", "--loss pl-top1 needs --k (alternatives per sample)"))?;
            let (x, n, k, d) = npy::read_array3(&a.x)?;
            if k != k_arg {
                return Err(Error::Shape(format!(
                    "--k {k_arg} but {} holds {k} alternatives per sample (shape {n} × {k} × {d})",
                    a.x.display()
                ))
                .into());
            }
            let (y, width) = npy::read_group_labels(&a.y, k)?;
            if width != 1 {
                return reject("y", "label-private SGD privatises one chosen alternative per sample; give an n-vector of choices, not rankings");
            }
            let view = GroupView::new(&x, n, k, d, GroupLabels::Choice(&y), None)?;
            let model = GroupModel::new(view, PlTop1)?;
            (fit_model(&model, &y, k, &settings, &mut rng)?, n, d)
        }
        other => {
            return reject(
                "loss",
                format!("label-private SGD trains a clear-label loss: mle, softmax or pl-top1 (not `{other}`)"),
            )
        }
    };
    if let Some(o) = v.as_object_mut() {
        o.insert("loss".into(), json!(a.loss));
        o.insert("label_mechanism".into(), json!(mech_name));
        o.insert("eps".into(), json!(eps));
        o.insert("step".into(), json!(step.to_string()));
        o.insert("constraint".into(), json!(set.name()));
        o.insert("radius".into(), json!(set.radius()));
        o.insert("debias".into(), json!(!l.no_debias));
        o.insert("n".into(), json!(n));
        o.insert("d".into(), json!(d));
        o.insert("solver".into(), json!("sgd"));
        o.insert("termination".into(), json!("completed"));
        o.insert("converged".into(), json!(false));
        o.insert("seed".into(), json!(a.seed));
        // No statistic of the clear labels is released (it would not be covered by the
        // guarantee): no objective value, no KKT residual.
        o.insert("objective".into(), Value::Null);
        o.insert("kkt_residual".into(), Value::Null);
        o.insert("elapsed_s".into(), json!(start.elapsed().as_secs_f64()));
    }
    write_json(&a.out, &v)?;
    if a.seed.is_some() {
        eprintln!("privpref: warning: --seed makes the label randomisation reproducible by anyone who knows the seed (simulation only); omit it for real data");
    }
    Ok(())
}

struct Settings {
    eps: f64,
    mechanism: LabelMechanism,
    set: FeasibleSet,
    step: LpStep,
    lipschitz: Option<f64>,
    debias: bool,
    staged: Option<usize>,
    fractions: Option<String>,
    temperature: Option<f64>,
    reuse: bool,
    prior: PriorChoice,
    theta0: Option<Vec<f64>>,
}

fn parse_fractions(s: &str) -> Result<Vec<f64>, Error> {
    s.split(',')
        .map(|t| {
            t.trim()
                .parse::<f64>()
                .map_err(|_| Error::param("stage-fractions", format!("`{t}` is not a number (in `{s}`)")))
        })
        .collect()
}

fn guarantee(g: &privpref::privacy::Guarantee) -> Value {
    super::central::guarantee_json(Some(g))
}

fn fit_model<M: LabelModel>(model: &M, y: &[u8], k: usize, s: &Settings, rng: &mut NoiseRng) -> Result<Value, Error> {
    let n = model.n();
    let prior = match &s.prior {
        PriorChoice::None => None,
        PriorChoice::Public(p) => {
            let (rows, pn, pk) = npy::read_matrix(p)?;
            if pn != n || pk != k {
                return Err(Error::Shape(format!(
                    "{} is {pn} × {pk}, expected n × K = {n} × {k}",
                    p.display()
                )));
            }
            Some((Prior::public(rows, k)?, None))
        }
        PriorChoice::Histogram(c, eps_p) => {
            let clusters = npy::read_ids(c, "clusters")?;
            if clusters.len() != n {
                return Err(Error::Shape(format!(
                    "{} has {} cluster ids for {n} samples",
                    c.display(),
                    clusters.len()
                )));
            }
            let h = histogram_prior(&clusters, y, k, *eps_p, rng)?;
            let info = json!({ "clusters": h.clusters, "eps_p": eps_p, "noise_scale": h.noise.scale() });
            Some((h.prior, Some(info)))
        }
    };
    if let Some(t) = s.staged {
        if t < 2 {
            return Err(Error::param(
                "stages",
                format!("multi-stage training needs at least 2 stages, got {t}"),
            ));
        }
        let fractions = match &s.fractions {
            Some(f) => parse_fractions(f)?,
            None => vec![1.0 / t as f64; t],
        };
        if fractions.len() != t {
            return Err(Error::param(
                "stage-fractions",
                format!("{} fractions for {t} stages", fractions.len()),
            ));
        }
        if s.theta0.is_some() {
            return Err(Error::param("theta0", "--theta0 is not supported with --stages"));
        }
        let mut o = MultiStageOptions::new(s.eps, fractions, s.set);
        o.temperature = s.temperature.unwrap_or(1.0);
        o.reuse = s.reuse;
        o.step = s.step;
        o.lipschitz = s.lipschitz;
        o.debias = s.debias;
        let fit = multi_stage(model, &o, prior.as_ref().map(|p| &p.0), rng)?;
        let stages: Vec<Value> = fit
            .detail
            .stages
            .iter()
            .map(|st| {
                json!({
                    "samples": st.samples,
                    "reused": st.reused,
                    "filtered_out": st.filtered_out,
                    "mean_k": st.mean_k,
                    "steps": st.steps,
                    "guarantee": guarantee(&st.guarantee),
                })
            })
            .collect();
        return Ok(json!({
            "theta": fit.theta,
            "labels": k,
            "iterations": fit.detail.stages.iter().map(|st| st.steps).sum::<usize>(),
            "stages": stages,
            "histogram_prior": prior.and_then(|p| p.1),
            "guarantee": super::central::guarantee_json(fit.guarantee.as_ref()),
        }));
    }
    let mut o = LpSgdOptions::new(s.eps, s.mechanism, s.set);
    o.step = s.step;
    o.lipschitz = s.lipschitz;
    o.debias = s.debias;
    let fit = lp_sgd(model, &o, prior.as_ref().map(|p| &p.0), s.theta0.as_deref(), rng)?;
    let normal = fit.detail.normal.as_ref().map(|nr| {
        json!({
            "sigma": nr.sigma,
            "sensitivity": nr.sensitivity,
            "max_realised_sensitivity": nr.max_realised_sensitivity,
            "calibration": nr.calibration.name(),
            "rank_min": nr.rank_min,
            "rank_max": nr.rank_max,
            "rank_mean": nr.rank_mean,
        })
    });
    Ok(json!({
        "theta": fit.theta,
        "labels": k,
        "iterations": fit.report.counts.iterations,
        "mean_k": if fit.detail.mean_k.is_finite() { json!(fit.detail.mean_k) } else { Value::Null },
        "lipschitz": if fit.detail.lipschitz.is_finite() { json!(fit.detail.lipschitz) } else { Value::Null },
        "normal": normal,
        "histogram_prior": prior.and_then(|p| p.1),
        "guarantee": super::central::guarantee_json(fit.guarantee.as_ref()),
    }))
}

//! Label-private SGD on clear labels (Ghazi et al. (2021)): LP-RR-SGD (K-RR), RRTop-k,
//! RR-with-prior and LP-Normal-SGD by one pass of projected SGD, and multi-stage training
//! (LP-MST), for the binary linear model (`mle`), K-class softmax (`softmax`) and K-wise
//! Plackett–Luce (`pl-top1`). Options, checks and random-draw order are those of
//! `privpref fit --solver sgd --label-mechanism …` (`crates/privpref-cli/src/label_sgd.rs`), so
//! the same inputs and seed give the same bits.

use crate::arrays::{borrow_exact, borrow_optional, values};
use crate::results::fit_out;
use crate::run::run;
use numpy::{PyArray1, PyUntypedArrayMethods};
use privpref::data::{GroupLabels, GroupView, MulticlassView, PairwiseView};
use privpref::estimator::label_sgd::{
    histogram_prior, lp_sgd, multi_stage, GaussianCalibration, GroupModel, LabelMechanism, LabelModel, LabelSgdDetail,
    LpSgdOptions, LpStep, MultiStageDetail, MultiStageOptions, MulticlassModel, PairwiseModel, Prior,
};
use privpref::feasible::FeasibleSet;
use privpref::loss::{Logistic, PlTop1};
use privpref::model::Fit;
use privpref::privacy::NoiseRng;
use privpref::{Error, Result};
use pyo3::prelude::*;
use serde_json::{json, Value};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Adds this part's functions and classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(label_sgd, m)?)?;
    Ok(())
}

fn reject<T>(name: &'static str, why: impl Into<String>) -> Result<T> {
    Err(Error::param(name, why.into()))
}

/// The prior of a run: none, public rows (`n × K`), or the private histogram prior over public
/// cluster ids at `ε_p`.
enum PriorChoice<'a> {
    None,
    Public(&'a [f64]),
    Histogram(&'a [u32], f64),
}

/// Everything but the data.
struct Settings<'a> {
    mech_name: String,
    eps: f64,
    mechanism: LabelMechanism,
    set: FeasibleSet,
    step: LpStep,
    lipschitz: Option<f64>,
    debias: bool,
    stages: Option<usize>,
    fractions: Option<Vec<f64>>,
    temperature: Option<f64>,
    reuse: bool,
    prior: PriorChoice<'a>,
    theta0: Option<Vec<f64>>,
    /// The interrupt flag of [`run`] (Ctrl-C), put in the estimator's options.
    interrupt: Option<Arc<AtomicBool>>,
}

/// The result of either estimator.
enum Out {
    Pass(Fit<LabelSgdDetail>),
    Staged(Fit<MultiStageDetail>),
}

/// The checks of the CLI's `label_sgd::run` (in its order), then the mechanism.
#[allow(clippy::too_many_arguments)]
fn settings<'a>(
    mech_name: &str,
    eps: f64,
    delta: Option<f64>,
    top_k: Option<usize>,
    prior: Option<&'a [f64]>,
    clusters: Option<&'a [u32]>,
    prior_eps: Option<f64>,
    sigma_rule: Option<&str>,
    sensitivity: Option<f64>,
    constraint: &str,
    radius: Option<f64>,
    step: Option<&str>,
    lipschitz: Option<f64>,
    debias: bool,
    theta0: Option<Vec<f64>>,
    stages: Option<usize>,
    stage_fractions: Option<Vec<f64>>,
    temperature: Option<f64>,
    reuse: bool,
) -> Result<Settings<'a>> {
    privpref::error::check_eps(eps)?;
    let step = match step {
        Some(s) => LpStep::parse(s)?,
        None => LpStep::default(),
    };
    let set = FeasibleSet::parse(constraint, radius)?;
    let is_normal = mech_name == "normal";
    if delta.is_some() && !is_normal {
        return reject(
            "delta",
            format!("delta= applies only to mechanism=\"normal\", not \"{mech_name}\""),
        );
    }
    for (name, given) in [
        ("sigma_rule", sigma_rule.is_some()),
        ("sensitivity", sensitivity.is_some()),
    ] {
        if given && !is_normal {
            return reject(name, format!("{name}= applies only to mechanism=\"normal\""));
        }
    }
    if top_k.is_some() && mech_name != "rrtopk" {
        return reject(
            "top_k",
            format!("top_k= applies only to mechanism=\"rrtopk\", not \"{mech_name}\""),
        );
    }
    let staged = stages.is_some();
    for (name, given) in [
        ("stage_fractions", stage_fractions.is_some()),
        ("temperature", temperature.is_some()),
        ("reuse", reuse),
    ] {
        if given && !staged {
            return reject(name, format!("{name}= applies only to multi_stage"));
        }
    }
    if staged && mech_name != "rr-prior" {
        return reject(
            "stages",
            format!("multi-stage training runs RR-with-prior (mechanism \"rr-prior\"), not \"{mech_name}\""),
        );
    }
    let prior_choice = match (prior, clusters, prior_eps) {
        (Some(_), Some(_), _) => return reject("prior", "give either prior= or clusters=, not both"),
        (Some(p), None, None) => PriorChoice::Public(p),
        (Some(_), None, Some(_)) => {
            return reject(
                "prior_eps",
                "prior_eps= goes with clusters= (the histogram prior); a prior= array is public",
            )
        }
        (None, Some(c), Some(e)) => PriorChoice::Histogram(c, e),
        (None, Some(_), None) => {
            return reject(
                "prior_eps",
                "clusters= needs prior_eps= (the histogram prior's privacy level)",
            )
        }
        (None, None, Some(_)) => return reject("prior_eps", "prior_eps= needs clusters="),
        (None, None, None) => PriorChoice::None,
    };
    let mechanism = match mech_name {
        "krr" => LabelMechanism::Krr,
        "rrtopk" => LabelMechanism::RrTopK {
            k: top_k.ok_or_else(|| Error::param("top_k", "mechanism \"rrtopk\" needs top_k="))?,
        },
        "rr-prior" => LabelMechanism::RrWithPrior,
        "normal" => LabelMechanism::Normal {
            delta: delta.ok_or_else(|| Error::param("delta", "mechanism \"normal\" needs delta= (approximate DP)"))?,
            calibration: GaussianCalibration::parse(sigma_rule.unwrap_or("analytic"))?,
            sensitivity,
        },
        other => {
            return reject(
                "mechanism",
                format!("unknown label mechanism `{other}` (expected krr, rrtopk, rr-prior or normal)"),
            )
        }
    };
    match (&prior_choice, mechanism.needs_prior(), staged) {
        (PriorChoice::None, true, false) => {
            return reject(
                "prior",
                format!(
                "mechanism \"{mech_name}\" needs a prior: prior= (n × K), or clusters= with prior_eps=, or multi_stage"
            ),
            )
        }
        (PriorChoice::Public(_) | PriorChoice::Histogram(..), false, _) => {
            return reject("prior", format!("mechanism \"{mech_name}\" takes no prior"))
        }
        (PriorChoice::Public(_), true, true) => {
            return reject(
                "prior",
                "multi_stage computes its priors from the model (stage 1 may use clusters= with prior_eps=)",
            )
        }
        _ => {}
    }
    Ok(Settings {
        mech_name: mech_name.to_string(),
        eps,
        mechanism,
        set,
        step,
        lipschitz,
        debias,
        stages,
        fractions: stage_fractions,
        temperature,
        reuse,
        prior: prior_choice,
        theta0,
        interrupt: None,
    })
}

/// The CLI's `fit_model`: the prior (drawing the histogram prior's noise first), then one pass
/// or multi-stage training, all from `rng`. Returns the fit and the histogram prior's summary.
fn fit_model<M: LabelModel>(
    model: &M,
    y: &[u8],
    k: usize,
    s: &Settings<'_>,
    rng: &mut NoiseRng,
) -> Result<(Out, Option<Value>)> {
    let n = model.n();
    let prior = match s.prior {
        PriorChoice::None => None,
        PriorChoice::Public(rows) => {
            if rows.len() != n * k {
                return Err(Error::Shape(format!(
                    "the prior has {} values, expected n × K = {n} × {k}",
                    rows.len()
                )));
            }
            Some((Prior::public(rows.to_vec(), k)?, None))
        }
        PriorChoice::Histogram(clusters, eps_p) => {
            if clusters.len() != n {
                return Err(Error::Shape(format!(
                    "clusters has {} ids for {n} samples",
                    clusters.len()
                )));
            }
            let h = histogram_prior(clusters, y, k, eps_p, rng)?;
            let info = json!({ "clusters": h.clusters, "eps_p": eps_p, "noise_scale": h.noise.scale() });
            Some((h.prior, Some(info)))
        }
    };
    if let Some(t) = s.stages {
        if t < 2 {
            return Err(Error::param(
                "stages",
                format!("multi-stage training needs at least 2 stages, got {t}"),
            ));
        }
        let fractions = s.fractions.clone().unwrap_or_else(|| vec![1.0 / t as f64; t]);
        if fractions.len() != t {
            return Err(Error::param(
                "stage_fractions",
                format!("{} fractions for {t} stages", fractions.len()),
            ));
        }
        if s.theta0.is_some() {
            return reject("theta0", "theta0= is not supported by multi_stage");
        }
        let mut o = MultiStageOptions::new(s.eps, fractions, s.set);
        o.temperature = s.temperature.unwrap_or(1.0);
        o.reuse = s.reuse;
        o.step = s.step;
        o.lipschitz = s.lipschitz;
        o.debias = s.debias;
        o.interrupt = s.interrupt.clone();
        let fit = multi_stage(model, &o, prior.as_ref().map(|p| &p.0), rng)?;
        return Ok((Out::Staged(fit), prior.and_then(|p| p.1)));
    }
    let mut o = LpSgdOptions::new(s.eps, s.mechanism, s.set);
    o.step = s.step;
    o.lipschitz = s.lipschitz;
    o.debias = s.debias;
    o.interrupt = s.interrupt.clone();
    let fit = lp_sgd(model, &o, prior.as_ref().map(|p| &p.0), s.theta0.as_deref(), rng)?;
    Ok((Out::Pass(fit), prior.and_then(|p| p.1)))
}

/// Label-private SGD (`stages=None`) or multi-stage training (`stages=T`) on clear labels.
/// `x`: C-contiguous float64, `n × d` (`mle`, `softmax`) or `n × K × d` (`pl-top1`); `y`: `n`
/// uint8 labels; `prior`: float64 `n × K`; `clusters`: uint32 `n`. Returns `(theta, json)`; the
/// JSON's `detail` has the library's detail plus `labels` (K), `mechanism`, `step`, `debias`
/// and `histogram_prior`.
#[pyfunction]
#[pyo3(signature = (x, y, loss, k, mechanism, eps, delta, top_k, prior, clusters, prior_eps, sigma_rule, sensitivity, constraint, radius, step, lipschitz, debias, theta0, stages, stage_fractions, temperature, reuse, seed, threads))]
#[allow(clippy::too_many_arguments)]
pub fn label_sgd<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    loss: &str,
    k: Option<usize>,
    mechanism: &str,
    eps: f64,
    delta: Option<f64>,
    top_k: Option<usize>,
    prior: Option<&Bound<'py, PyAny>>,
    clusters: Option<&Bound<'py, PyAny>>,
    prior_eps: Option<f64>,
    sigma_rule: Option<String>,
    sensitivity: Option<f64>,
    constraint: &str,
    radius: Option<f64>,
    step: Option<String>,
    lipschitz: Option<f64>,
    debias: bool,
    theta0: Option<Vec<f64>>,
    stages: Option<usize>,
    stage_fractions: Option<Vec<f64>>,
    temperature: Option<f64>,
    reuse: bool,
    seed: Option<u64>,
    threads: Option<usize>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, String)> {
    let ndim = if loss == "pl-top1" { 3 } else { 2 };
    let xa = borrow_exact::<f64>(x, "x", "float64", ndim)?;
    let shape = xa.shape().to_vec();
    let ya = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let pa = borrow_optional::<f64>(prior, "prior", "float64", 2)?;
    let ca = borrow_optional::<u32>(clusters, "clusters", "uint32", 1)?;
    let (xv, yv) = (values(&xa), values(&ya));
    let (pv, cv) = (pa.as_ref().map(values), ca.as_ref().map(values));
    let loss = loss.to_string();
    let out = run(py, threads, move |stop| {
        let mut s = settings(
            mechanism,
            eps,
            delta,
            top_k,
            pv,
            cv,
            prior_eps,
            sigma_rule.as_deref(),
            sensitivity,
            constraint,
            radius,
            step.as_deref(),
            lipschitz,
            debias,
            theta0,
            stages,
            stage_fractions,
            temperature,
            reuse,
        )?;
        s.interrupt = Some(stop);
        let mut rng = NoiseRng::from_seed(seed)?;
        let (out, hist, labels) = match loss.as_str() {
            "mle" => {
                if k.is_some_and(|k| k != 2) {
                    return reject("k", "loss \"mle\" is binary (K = 2)");
                }
                let (n, d) = (shape[0], shape[1]);
                let view = PairwiseView::new(xv, n, d, yv, None)?;
                let model = PairwiseModel::new(&view, Logistic)?;
                let (o, h) = fit_model(&model, yv, 2, &s, &mut rng)?;
                (o, h, 2)
            }
            "softmax" => {
                let k = k.ok_or_else(|| Error::param("k", "loss \"softmax\" needs k= (number of classes)"))?;
                let (n, d) = (shape[0], shape[1]);
                let view = MulticlassView::new(xv, n, d, k, yv)?;
                let model = MulticlassModel::new(view, PlTop1)?;
                let (o, h) = fit_model(&model, yv, k, &s, &mut rng)?;
                (o, h, k)
            }
            "pl-top1" => {
                let (n, kk, d) = (shape[0], shape[1], shape[2]);
                if let Some(k) = k.filter(|&k| k != kk) {
                    return Err(Error::Shape(format!(
                        "k = {k} but x holds {kk} alternatives per sample (shape {n} × {kk} × {d})"
                    )));
                }
                let view = GroupView::new(xv, n, kk, d, GroupLabels::Choice(yv), None)?;
                let model = GroupModel::new(view, PlTop1)?;
                let (o, h) = fit_model(&model, yv, kk, &s, &mut rng)?;
                (o, h, kk)
            }
            other => {
                return reject(
                    "loss",
                    format!("label-private SGD trains a clear-label loss: mle, softmax or pl-top1 (not `{other}`)"),
                )
            }
        };
        let extra = json!({
            "labels": labels,
            "mechanism": s.mech_name,
            "eps": s.eps,
            "step": s.step.to_string(),
            "debias": s.debias,
            "histogram_prior": hist,
        });
        Ok((out, extra))
    })?;
    let (out, extra) = out;
    let (theta, text) = match out {
        Out::Pass(f) => fit_out(py, f)?,
        Out::Staged(f) => fit_out(py, f)?,
    };
    Ok((theta, with_detail(text, extra)?))
}

/// `text` (a fit's JSON) with the fields of `extra` added to its `detail`.
fn with_detail(text: String, extra: Value) -> PyResult<String> {
    let mut v: Value = serde_json::from_str(&text)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("privpref: bad fit JSON: {e}")))?;
    if let (Some(Value::Object(d)), Value::Object(e)) = (v.get_mut("detail"), extra) {
        d.extend(e);
    }
    Ok(v.to_string())
}

//! Pessimistic and greedy policies over a public state sample, with a certified duality gap
//! (`privpref::policy`): the engine of `privpref.pessimistic_policy` and
//! `privpref.greedy_policy`.
//!
//! The confidence set `C = {θ ∈ Θ_B : ‖θ − θ̂‖_{Σ+λI} ≤ Γ}` is built as `privpref policy` builds
//! it from a fit's JSON: the Python layer passes the fields the CLI reads from `result.json`
//! (`mechanism`, `loss`, `eps`, `constraint`, `radius`, `n`, `guarantee`, `noise_std`, `beta`,
//! `feature_bound_per_step`, `horizon`, `alpha`, `accuracy`) as one JSON object, and `λ`, `Γ`
//! follow the rule that matches the fit: Zhou, Wu & Orabona (2025) for `mle` / `debiased-rr`
//! fits and the objective-perturbation radius (both with `x`, the fit's public features: Σ̂ and
//! `X_max`), the private-MLE rule of "Provable protection of human judgements" (anon., 2025)
//! with the private covariance `Σ̃`. The result JSON has the CLI's keys.

use crate::arrays::{borrow_exact, borrow_optional, values, FeatureArray};
use crate::run::run;
use numpy::{IntoPyArray, PyArray1, PyUntypedArrayMethods};
use privpref::data::{FeatureBound, Features};
use privpref::feasible::FeasibleSet;
use privpref::par::Par;
use privpref::policy::radius::{design_moments, fit_calibration, Calibration, FitRule, RuleError, RuleInputs};
use privpref::policy::{
    greedy_policy, pessimistic_policy, ConfidenceSet, PolicyOptions, PolicyTermination, Reference, StateActions,
};
use privpref::{Error, Result};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use serde_json::{json, Value};

/// Adds this part's functions and classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(policy, m)?)?;
    Ok(())
}

/// The settings of a policy run besides the arrays.
struct Settings {
    greedy: bool,
    eta: f64,
    radius_multiplier: f64,
    lambda_multiplier: f64,
    lambda: Option<f64>,
    confidence_radius: Option<f64>,
    set: Option<String>,
    radius: Option<f64>,
    tol: f64,
    max_passes: usize,
    strict_gap: bool,
}

/// The pessimistic (`greedy = false`) or greedy policy of `theta` on `states` (C-contiguous
/// `n × A × d` float64, read in place). `fit_info`: the JSON fields of the fit the CLI reads;
/// `x`: the fit's pairwise features (`n × d` float64/float32, read in place) for Σ̂ and `X_max`;
/// `covariance`: `d × d` float64 (`Σ̃` of the private MLE); `reference_actions`: `n` uint32;
/// `reference_vector`: `d` float64; `weights`: `n` float64. Returns `(actions, json)` with the
/// CLI's keys (without `actions`, `guarantee` and `ranks`).
#[pyfunction]
#[pyo3(signature = (theta, states, fit_info, x, covariance, greedy, eta, radius_multiplier, lambda_multiplier, lam, confidence_radius, set, radius, reference_actions, reference_vector, weights, tol, max_passes, strict_gap, threads))]
#[allow(clippy::too_many_arguments)]
pub fn policy<'py>(
    py: Python<'py>,
    theta: Vec<f64>,
    states: &Bound<'py, PyAny>,
    fit_info: &str,
    x: Option<&Bound<'py, PyAny>>,
    covariance: Option<&Bound<'py, PyAny>>,
    greedy: bool,
    eta: f64,
    radius_multiplier: f64,
    lambda_multiplier: f64,
    lam: Option<f64>,
    confidence_radius: Option<f64>,
    set: Option<String>,
    radius: Option<f64>,
    reference_actions: Option<&Bound<'py, PyAny>>,
    reference_vector: Option<&Bound<'py, PyAny>>,
    weights: Option<&Bound<'py, PyAny>>,
    tol: f64,
    max_passes: usize,
    strict_gap: bool,
    threads: Option<usize>,
) -> PyResult<(Bound<'py, PyArray1<u32>>, String)> {
    let sa = FeatureArray::borrow(states, "states", 3)?;
    let shape = sa.shape();
    let (n, na, d) = (shape[0], shape[1], shape[2]);
    let phi = sa.f64().ok_or_else(|| PyTypeError::new_err("states must be float64"))?;
    let res: Value =
        serde_json::from_str(fit_info).map_err(|e| PyTypeError::new_err(format!("fit_info is not valid JSON: {e}")))?;
    let xa = match x {
        Some(o) if !o.is_none() => Some(FeatureArray::borrow(o, "x", 2)?),
        _ => None,
    };
    let ca = borrow_optional::<f64>(covariance, "covariance", "float64", 2)?;
    let ra = match reference_actions {
        Some(o) if !o.is_none() => Some(borrow_exact::<u32>(o, "reference_actions", "uint32", 1)?),
        _ => None,
    };
    let va = borrow_optional::<f64>(reference_vector, "reference_vector", "float64", 1)?;
    let wa = borrow_optional::<f64>(weights, "weights", "float64", 1)?;
    let x_view = xa.as_ref().map(|a| {
        let s = a.shape();
        (a.slice(), s[0], s[1])
    });
    let cov = ca.as_ref().map(|a| (values(a), a.shape().to_vec()));
    let (ref_actions, ref_vec, w) = (
        ra.as_ref().map(values),
        va.as_ref().map(values),
        wa.as_ref().map(values),
    );
    let s = Settings {
        greedy,
        eta,
        radius_multiplier,
        lambda_multiplier,
        lambda: lam,
        confidence_radius,
        set,
        radius,
        tol,
        max_passes,
        strict_gap,
    };
    let (actions, out) = run(py, threads, |_stop| {
        let (set, opts, common) = prepare(&s, &theta, &res, x_view, cov)?;
        let st = StateActions::new(phi, n, na, d, w)?;
        if st.d() != theta.len() {
            return Err(Error::Shape(format!(
                "states have d = {} features, theta has {}",
                st.d(),
                theta.len()
            )));
        }
        if ref_actions.is_some() && ref_vec.is_some() {
            return Err(Error::param(
                "reference_vector",
                "give at most one of reference_actions and reference_vector",
            ));
        }
        let reference = match (ref_actions, ref_vec) {
            (Some(r), _) => Reference::Actions(r),
            (_, Some(v)) => Reference::Vector(v),
            _ => Reference::None,
        };
        let (mut out, actions) = if s.greedy {
            let g = greedy_policy(&st, &theta, &reference, &set, Par::Rayon)?;
            (
                json!({
                    "eta_switch": 0,
                    "policy": "greedy",
                    "plug_in_value": g.plug_in_value,
                    "value": g.pessimistic_value,
                }),
                g.actions,
            )
        } else {
            let r = pessimistic_policy(&st, &reference, &set, &opts)?;
            let conv = r.termination == PolicyTermination::Converged;
            (
                json!({
                    "vacuous": set.covers_parameter_set(),
                    "covering_radius": set.covering_radius(),
                    "eta_switch": 1,
                    "policy": "pessimistic",
                    "value": r.deterministic_value,
                    "stochastic_value": r.value,
                    "upper_bound": r.upper_bound,
                    "gap": r.gap,
                    "rel_gap": r.rel_gap,
                    "objective_range": r.range,
                    "gap_over_range": r.gap / r.range,
                    "termination": r.termination.as_str(),
                    "converged": conv,
                    "method": opts.method.as_str(),
                    "iterations": r.iterations,
                    "smoothed_passes": r.smoothed_passes,
                    "temperature": r.temperature,
                    "passes": r.passes,
                    "randomized_states_fw": r.randomized_fw,
                    "randomized_states_purified": r.purify.randomized_after,
                    "rounded_states": r.rounded_states,
                    "rounding_bound": r.rounding_bound,
                    "greedy_value": r.greedy.pessimistic_value,
                    "greedy_plug_in_value": r.greedy.plug_in_value,
                    "theta_min": r.theta_min,
                    "elapsed_s": r.elapsed.as_secs_f64(),
                }),
                r.actions,
            )
        };
        if let (Some(o), Some(c)) = (out.as_object_mut(), common.as_object()) {
            for (k, v) in c {
                o.insert(k.clone(), v.clone());
            }
            o.insert("n_states".into(), json!(n));
            o.insert("actions_per_state".into(), json!(na));
        }
        Ok((actions, out))
    })?;
    Ok((actions.into_pyarray(py), out.to_string()))
}

fn missing(key: &str) -> Error {
    Error::param("fit", format!("the fit does not record `{key}`"))
}

fn num(v: &Value, key: &str) -> Result<f64> {
    v.get(key).and_then(Value::as_f64).ok_or_else(|| missing(key))
}

/// The radius rule of the fit described by `res` (the fields of the CLI's `result.json`), from
/// its `mechanism` or `loss` and the fields that rule needs.
fn fit_rule(res: &Value) -> Result<FitRule> {
    Ok(match res.get("mechanism").and_then(Value::as_str) {
        Some("private-mle") => {
            let g = res
                .get("guarantee")
                .filter(|g| !g.is_null())
                .ok_or_else(|| Error::param("fit", "a private-mle fit without a guarantee"))?;
            let bound = match res.get("feature_bound_per_step").and_then(Value::as_f64) {
                Some(step) => {
                    let h = res.get("horizon").and_then(Value::as_u64).unwrap_or(1);
                    FeatureBound::trajectory(h as usize, step)?
                }
                None => FeatureBound::pairwise(num(g, "feature_bound")?)?,
            };
            FitRule::PrivateMle {
                eps: num(g, "eps")?,
                delta: num(g, "delta")?,
                bound,
                alpha: res.get("alpha").and_then(Value::as_f64),
                accuracy: res.get("accuracy").and_then(Value::as_f64),
            }
        }
        Some("objpert") => FitRule::ObjPert {
            noise_std: num(res, "noise_std")?,
            beta: num(res, "beta")?,
        },
        Some(m) => FitRule::Other(m.to_string()),
        None => match res.get("loss").and_then(Value::as_str) {
            Some("mle") => FitRule::Local { eps: None },
            Some("debiased-rr") => FitRule::Local {
                eps: Some(num(res, "eps")?),
            },
            Some(l) => FitRule::Other(l.to_string()),
            None => FitRule::Other("unknown".into()),
        },
    })
}

/// The confidence set, the policy options and the JSON fields every run reports (the CLI's
/// `prepare`, reading the fit's fields from `res` and the features from memory).
fn prepare(
    a: &Settings,
    theta: &[f64],
    res: &Value,
    x: Option<(Features<'_>, usize, usize)>,
    cov: Option<(&[f64], Vec<usize>)>,
) -> Result<(ConfidenceSet, PolicyOptions, Value)> {
    let d = theta.len();
    if d == 0 {
        return Err(Error::Shape("theta is empty".into()));
    }
    if theta.iter().any(|v| !v.is_finite()) {
        return Err(Error::param("theta", "has a non-finite entry"));
    }
    let private_mle = res.get("mechanism").and_then(Value::as_str) == Some("private-mle");
    // Θ_B.
    let set_name = match &a.set {
        Some(s) => s.clone(),
        None => res
            .get("constraint")
            .and_then(Value::as_str)
            .unwrap_or("none")
            .to_string(),
    };
    let radius_b = a.radius.or_else(|| res.get("radius").and_then(Value::as_f64));
    let set_kind = FeasibleSet::parse(
        &set_name,
        if matches!(set_name.as_str(), "theta-b" | "ball") {
            radius_b
        } else {
            None
        },
    )?;
    // Σ and X_max.
    if private_mle && x.is_some() {
        return Err(Error::param(
            "x",
            "the features are private under the private MLE (standard DP): pass the private covariance (covariance=), not x",
        ));
    }
    if x.is_some() && cov.is_some() {
        return Err(Error::param("covariance", "give either covariance or x, not both"));
    }
    let (sigma, x_max): (Option<Vec<f64>>, Option<f64>) = if let Some((m, shape)) = cov {
        if shape != [d, d] {
            return Err(Error::Shape(format!(
                "covariance has shape {shape:?}, expected d x d = {d} x {d}"
            )));
        }
        if m.iter().any(|v| !v.is_finite()) {
            return Err(Error::param("covariance", "non-finite covariance entry"));
        }
        (Some(m.to_vec()), None)
    } else if let Some((f, n, dx)) = x {
        if dx != d {
            return Err(Error::Shape(format!("x has d = {dx} columns, theta has {d}")));
        }
        // Row by row, as the CLI: the same sums in the same order.
        let (s, xmax) = design_moments(f, n, d)?;
        (Some(s), Some(xmax))
    } else {
        (None, None)
    };
    // λ and Γ.
    let n_fit = res.get("n").and_then(Value::as_u64).map(|v| v as usize);
    let rule: Option<Calibration> = if a.lambda.is_some() && a.confidence_radius.is_some() {
        None
    } else {
        let mut inp = RuleInputs::new(n_fit, d, radius_b, x_max, sigma.is_some());
        (inp.eta, inp.radius_multiplier, inp.lambda_multiplier) = (a.eta, a.radius_multiplier, a.lambda_multiplier);
        Some(fit_calibration(&fit_rule(res)?, &inp).map_err(|e| match e {
            RuleError::MissingCovariance => Error::param(
                "covariance",
                "a private-mle fit needs the private covariance Σ̃ (covariance=)",
            ),
            RuleError::MissingSampleSize => Error::param(
                "n",
                "the radius rule needs the fit's sample size n (pass n=, or x= for a label-DP fit)",
            ),
            RuleError::MissingRadius => Error::param("radius", "the radius rule needs B (radius=)"),
            RuleError::MissingFeatures(what) => Error::param(
                "x",
                format!("{what} needs the fit's features (x=) for Σ̂ and X_max, or give lam= and confidence_radius="),
            ),
            RuleError::NoRule(name) => Error::param(
                "confidence_radius",
                format!("no explicit radius rule for a `{name}` fit: give lam= and confidence_radius="),
            ),
            RuleError::Invalid(e) => e,
        })?)
    };
    let lambda = a.lambda.or(rule.as_ref().map(|r| r.lambda)).unwrap_or(0.0);
    let gamma = a.confidence_radius.or(rule.as_ref().map(|r| r.radius)).unwrap_or(0.0);
    let set = ConfidenceSet::new(theta, sigma.as_deref(), lambda, gamma, set_kind)?;
    if !(a.tol.is_finite() && a.tol >= 0.0) {
        return Err(Error::param("tol", format!("must be finite and >= 0, got {}", a.tol)));
    }
    let mut opts = PolicyOptions::default();
    opts.tol_rel = a.tol;
    opts.tol_abs = if a.strict_gap { Some(0.0) } else { None };
    opts.max_passes = a.max_passes;
    opts.par = Par::Rayon;
    let common = json!({
        "lambda": lambda,
        "confidence_radius": gamma,
        "rule": rule.as_ref().map(|r| r.rule),
        "radius_terms": rule.as_ref().map(|r| r.terms.iter().map(|(k, v)| json!({"name": k, "value": v})).collect::<Vec<_>>()),
        "curvature_gamma": rule.as_ref().map(|r| r.gamma),
        "eta": a.eta,
        "radius_multiplier": a.radius_multiplier,
        "set_requested": set.requested_set().name(),
        "set_used": set.used_set().name(),
        "set_radius": set.used_set().radius(),
        "set_fallback": set.fallback(),
        "d": d,
    });
    Ok((set, opts, common))
}

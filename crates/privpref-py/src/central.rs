//! Central DP: objective perturbation (Chowdhury, Zhou & Natarajan (2024), Algorithm 2), the
//! private MLE and the private covariance ("Provable protection of human judgements" (anon.,
//! 2024), Algorithms 1 and 2).
//!
//! Each function is configured as the CLI's `fit --central` / `covariance` (same defaults, same
//! checks, same order of noise draws), so the same data and `seed` give the same bits.

use crate::arrays::{borrow_exact, pairwise_view, values, FeatureArray};
use crate::options::{control, feasible};
use crate::results::{fit_out, json_err, to_json};
use crate::run::run;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use privpref::data::{FeatureBound, Features};
use privpref::estimator::central::{default_beta, ObjPertOptions, OutputPerturbation};
use privpref::estimator::private_mle::{CovarianceOptions, PrivateMleOptions};
use privpref::privacy::{Neighbouring, NoiseRng};
use privpref::Error;
use pyo3::prelude::*;

/// Adds this part's functions and classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(objective_perturbation, m)?)?;
    m.add_function(wrap_pyfunction!(private_mle, m)?)?;
    m.add_function(wrap_pyfunction!(private_covariance, m)?)?;
    Ok(())
}

/// Objective perturbation (`privpref fit --central --mechanism objpert`). `x`: C-contiguous
/// `n × d` float64 or float32 (read in place); `y`: `n` uint8 labels. `beta = None`: the CLI's
/// default `√n/B`. Returns `(theta, json)` as [`fit_out`].
#[pyfunction]
#[pyo3(signature = (x, y, eps, delta, feature_bound, beta, constraint, radius, horizon, kkt_tol, output_radius, output_eps, output_delta, allow_unguaranteed, seed, tol, tol_abs, max_iter, threads))]
#[allow(clippy::too_many_arguments)]
pub fn objective_perturbation<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    eps: f64,
    delta: f64,
    feature_bound: f64,
    beta: Option<f64>,
    constraint: &str,
    radius: Option<f64>,
    horizon: Option<usize>,
    kkt_tol: Option<f64>,
    output_radius: Option<f64>,
    output_eps: Option<f64>,
    output_delta: Option<f64>,
    allow_unguaranteed: bool,
    seed: Option<u64>,
    tol: f64,
    tol_abs: f64,
    max_iter: usize,
    threads: Option<usize>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, String)> {
    let xa = FeatureArray::borrow(x, "x", 2)?;
    let shape = xa.shape();
    let (n, d) = (shape[0], shape[1]);
    let ya = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let (features, y) = (xa.slice(), values(&ya));
    let out = run(py, threads, |stop| {
        let set = feasible(constraint, radius)?;
        let bound = FeatureBound::trajectory(horizon.unwrap_or(1), feature_bound)?;
        let mut rng = NoiseRng::from_seed(seed)?;
        let data = pairwise_view(features, n, d, y)?;
        let beta = match beta {
            Some(b) => b,
            None => default_beta(data.n(), &set)?,
        };
        let mut o = ObjPertOptions::new(eps, delta, bound, beta, set);
        if let Some(t) = kkt_tol {
            o.kkt_tol = t;
        }
        o.output = match (output_radius, output_eps, output_delta) {
            (None, None, None) => None,
            (Some(r), Some(e2), Some(d2)) => Some(OutputPerturbation::new(r, e2, d2)),
            _ => {
                return Err(Error::param(
                    "output-radius",
                    "output perturbation needs all of output_radius, output_eps and output_delta",
                ))
            }
        };
        o.allow_unguaranteed = allow_unguaranteed;
        o.control = control(max_iter, tol, tol_abs, stop);
        privpref::estimator::central::objective_perturbation(data, &o, &mut rng)
    })?;
    fit_out(py, out)
}

/// The private MLE (`privpref fit --central --mechanism private-mle`). Arguments as
/// [`objective_perturbation`]; `eta`, `alpha`, `accuracy` as the CLI's (`None`: its defaults).
#[pyfunction]
#[pyo3(signature = (x, y, eps, delta, feature_bound, constraint, radius, horizon, eta, alpha, accuracy, allow_unguaranteed, seed, tol, tol_abs, max_iter, threads))]
#[allow(clippy::too_many_arguments)]
pub fn private_mle<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    eps: f64,
    delta: f64,
    feature_bound: f64,
    constraint: &str,
    radius: Option<f64>,
    horizon: Option<usize>,
    eta: Option<f64>,
    alpha: Option<f64>,
    accuracy: Option<f64>,
    allow_unguaranteed: bool,
    seed: Option<u64>,
    tol: f64,
    tol_abs: f64,
    max_iter: usize,
    threads: Option<usize>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, String)> {
    let xa = FeatureArray::borrow(x, "x", 2)?;
    let shape = xa.shape();
    let (n, d) = (shape[0], shape[1]);
    let ya = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let (features, y) = (xa.slice(), values(&ya));
    let out = run(py, threads, |stop| {
        let set = feasible(constraint, radius)?;
        let bound = FeatureBound::trajectory(horizon.unwrap_or(1), feature_bound)?;
        let mut rng = NoiseRng::from_seed(seed)?;
        let data = pairwise_view(features, n, d, y)?;
        let mut o = PrivateMleOptions::new(eps, delta, bound, set);
        if let Some(e) = eta {
            o.eta = e;
        }
        o.alpha = alpha;
        o.accuracy = accuracy;
        o.allow_unguaranteed = allow_unguaranteed;
        o.control = control(max_iter, tol, tol_abs, stop);
        privpref::estimator::private_mle::private_mle(data, &o, &mut rng)
    })?;
    fit_out(py, out)
}

/// The private covariance (`privpref covariance`). `x`: C-contiguous `n × d` float64 (read in
/// place) or float32 (widened into a copy, as the CLI does); `relation`: `replace-one` or
/// `add-remove`; `eigen_floor = None`: no PSD repair. Returns `(matrix (d × d), json)`: the
/// JSON is the library's serialisation of the release without the matrix.
#[pyfunction]
#[pyo3(signature = (x, eps, delta, feature_bound, relation, eigen_floor, horizon, seed))]
#[allow(clippy::too_many_arguments)]
pub fn private_covariance<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    eps: f64,
    delta: f64,
    feature_bound: f64,
    relation: &str,
    eigen_floor: Option<f64>,
    horizon: Option<usize>,
    seed: Option<u64>,
) -> PyResult<(Bound<'py, PyArray2<f64>>, String)> {
    let xa = FeatureArray::borrow(x, "x", 2)?;
    let shape = xa.shape();
    let (n, d) = (shape[0], shape[1]);
    let features = xa.slice();
    let c = run(py, None, |_stop| {
        let relation = match relation {
            "replace-one" => Neighbouring::ReplaceRecord,
            "add-remove" => Neighbouring::AddRemoveRecord,
            other => {
                return Err(Error::param(
                    "relation",
                    format!("unknown relation `{other}` (expected replace-one or add-remove)"),
                ))
            }
        };
        let mut o = CovarianceOptions::new(
            eps,
            delta,
            FeatureBound::trajectory(horizon.unwrap_or(1), feature_bound)?,
        );
        o.relation = relation;
        o.eigen_floor = eigen_floor;
        let mut rng = NoiseRng::from_seed(seed)?;
        let widened: Vec<f64>;
        let x: &[f64] = match features {
            Features::F64(v) => v,
            Features::F32(v) => {
                widened = v.iter().map(|&f| f64::from(f)).collect();
                &widened
            }
        };
        privpref::estimator::private_mle::private_covariance(x, n, d, &o, &mut rng)
    })?;
    let mut v = serde_json::to_value(&c).map_err(json_err)?;
    if let Some(obj) = v.as_object_mut() {
        obj.remove("matrix");
        obj.insert("n".into(), serde_json::json!(n));
        obj.insert("eigen_floor".into(), serde_json::json!(eigen_floor));
    }
    let matrix = Array2::from_shape_vec((c.d, c.d), c.matrix)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("privpref: covariance shape: {e}")))?;
    Ok((matrix.into_pyarray(py), to_json(&v)?))
}

//! The local estimators: `fit` (pairwise: `mle`, `mle-rr`, `debiased-rr`, `probit`) and
//! `fit_kwise` (Plackett–Luce: `pl-top1`, `pl-ranking`, `pl-krr`), on clear labels or on
//! [`Privatized`] labels, whose guarantee the fit then carries.

use crate::arrays::{borrow_exact, borrow_optional, values, FeatureArray};
use crate::mechanisms::Privatized;
use crate::options::{feasible, SolveArgs};
use crate::results::fit_out;
use crate::run::{run, run_observed};
use numpy::{PyArray1, PyUntypedArrayMethods};
use privpref::data::{self, GroupLabels, GroupView};
use privpref::estimator::{fit_features, fit_kwise, fit_kwise_privatized, fit_privatized_features};
use privpref::loss::{GroupLossSpec, LossSpec};
use privpref::Error;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// A pairwise fit. `x`: C-contiguous `n × d` float64 or float32 (read in place); `y`: `n`
/// uint8 labels, or `labels`: privatised labels (then `y` is ignored and the fit carries their
/// guarantee). Returns `(theta, json)`.
#[pyfunction]
#[pyo3(signature = (x, y, labels, weights, loss, eps, constraint, radius, ridge, linear_term, theta0, solver, tol, tol_abs, max_iter, memory, polish_iters, batch, epochs, step, shuffle, average, seed, threads, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn fit<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: Option<&Bound<'py, PyAny>>,
    labels: Option<PyRef<'py, Privatized>>,
    weights: Option<&Bound<'py, PyAny>>,
    loss: &str,
    eps: Option<f64>,
    constraint: &str,
    radius: Option<f64>,
    ridge: f64,
    linear_term: Option<Vec<f64>>,
    theta0: Option<Vec<f64>>,
    solver: String,
    tol: f64,
    tol_abs: f64,
    max_iter: usize,
    memory: Option<usize>,
    polish_iters: Option<usize>,
    batch: Option<usize>,
    epochs: Option<usize>,
    step: Option<String>,
    shuffle: bool,
    average: Option<String>,
    seed: Option<u64>,
    threads: Option<usize>,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, String)> {
    let xa = FeatureArray::borrow(x, "x", 2)?;
    let shape = xa.shape();
    let (n, d) = (shape[0], shape[1]);
    let ya = match (&labels, y) {
        (Some(_), _) => None,
        (None, Some(y)) => Some(borrow_exact::<u8>(y, "y", "uint8", 1)?),
        (None, None) => return Err(PyTypeError::new_err("fit needs y or privatised labels")),
    };
    let wa = borrow_optional::<f64>(weights, "weights", "float64", 1)?;
    let args = SolveArgs {
        solver,
        tol,
        tol_abs,
        max_iter,
        memory,
        polish_iters,
        batch,
        epochs,
        step,
        shuffle,
        average,
        seed,
    };
    let (features, y, w) = (xa.slice(), ya.as_ref().map(values), wa.as_ref().map(values));
    let labels = labels.as_deref().map(|p| &p.inner);
    // SGD reports in steps, at a rate the callback does not need: exact solvers only.
    let progress = progress.filter(|_| args.solver != "sgd");
    let out = run_observed(py, threads, progress, |stop, observer| {
        let set = feasible(constraint, radius)?;
        let mut opts = args.fit_options(LossSpec::parse(loss, eps)?, set, ridge, linear_term, theta0, stop)?;
        opts.control.observer = observer;
        match (labels, y) {
            (Some(l), _) => fit_privatized_features(features, n, d, l, w, &opts),
            (None, Some(y)) => fit_features(features, n, d, y, w, &opts),
            (None, None) => unreachable!("checked above"),
        }
    })?;
    fit_out(py, out)
}

/// A K-wise (Plackett–Luce) fit. `x`: C-contiguous `n × K × d` float64, or with `index`
/// (`n × K` uint32) the `m × d` item table whose rows `index` names (nothing of size `n·K·d`
/// is built); `y`: `n` chosen alternatives (`choice`) or `n × K` rankings (uint8), or
/// `labels`: K-RR-privatised choices.
#[pyfunction]
#[pyo3(signature = (x, index, y, labels, weights, loss, eps, top, constraint, radius, ridge, theta0, solver, tol, tol_abs, max_iter, memory, polish_iters, batch, epochs, step, shuffle, average, seed, threads))]
#[allow(clippy::too_many_arguments)]
pub fn fit_kwise_dense<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    index: Option<&Bound<'py, PyAny>>,
    y: Option<&Bound<'py, PyAny>>,
    labels: Option<PyRef<'py, Privatized>>,
    weights: Option<&Bound<'py, PyAny>>,
    loss: &str,
    eps: Option<f64>,
    top: Option<usize>,
    constraint: &str,
    radius: Option<f64>,
    ridge: f64,
    theta0: Option<Vec<f64>>,
    solver: String,
    tol: f64,
    tol_abs: f64,
    max_iter: usize,
    memory: Option<usize>,
    polish_iters: Option<usize>,
    batch: Option<usize>,
    epochs: Option<usize>,
    step: Option<String>,
    shuffle: bool,
    average: Option<String>,
    seed: Option<u64>,
    threads: Option<usize>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, String)> {
    let ia = borrow_optional::<u32>(index, "index", "uint32", 2)?;
    let xa = FeatureArray::borrow(x, "x", if ia.is_some() { 2 } else { 3 })?;
    let shape = xa.shape();
    let (n, k, d) = match &ia {
        Some(i) => (i.shape()[0], i.shape()[1], shape[1]),
        None => (shape[0], shape[1], shape[2]),
    };
    let m = shape[0];
    let x = xa
        .f64()
        .ok_or_else(|| PyTypeError::new_err("K-wise features must be float64"))?;
    let index = ia.as_ref().map(values);
    let ya = match (&labels, y) {
        (Some(_), _) => None,
        (None, Some(y)) => {
            let ranking = y.getattr("ndim")?.extract::<usize>()? == 2;
            Some((
                borrow_exact::<u8>(y, "y", "uint8", if ranking { 2 } else { 1 })?,
                ranking,
            ))
        }
        (None, None) => return Err(PyTypeError::new_err("fit_kwise needs y or privatised labels")),
    };
    let wa = borrow_optional::<f64>(weights, "weights", "float64", 1)?;
    let args = SolveArgs {
        solver,
        tol,
        tol_abs,
        max_iter,
        memory,
        polish_iters,
        batch,
        epochs,
        step,
        shuffle,
        average,
        seed,
    };
    let y = ya.as_ref().map(|(a, ranking)| (values(a), *ranking));
    let w = wa.as_ref().map(values);
    let labels = labels.as_deref().map(|p| &p.inner);
    let out = run(py, threads, |stop| {
        let set = feasible(constraint, radius)?;
        let opts = args.fit_options(GroupLossSpec::parse(loss, eps, top)?, set, ridge, None, theta0, stop)?;
        let view = |g| match index {
            Some(idx) => GroupView::from_items(x, m, d, idx, n, k, g, w),
            None => GroupView::new(x, n, k, d, g, w),
        };
        match (labels, y) {
            (Some(l), _) => fit_kwise_privatized(view(GroupLabels::Choice(l.labels()))?, l, &opts),
            (None, Some((y, ranking))) => {
                let g = if ranking {
                    GroupLabels::Ranking(y)
                } else {
                    GroupLabels::Choice(y)
                };
                fit_kwise(view(g)?, &opts)
            }
            (None, None) => Err(Error::Shape("no labels".into())),
        }
    })?;
    fit_out(py, out)
}

/// The address of the first element of a feature array as the fits borrow it (the tests'
/// zero-copy check: it equals `x.ctypes.data`).
#[pyfunction]
pub fn _feature_address(x: &Bound<'_, PyAny>) -> PyResult<usize> {
    let ndim = x.getattr("ndim")?.extract::<usize>()?;
    Ok(FeatureArray::borrow(x, "x", ndim)?.address())
}

/// DPO with a log-linear policy class by the reduction of Zhou, Wu & Orabona (2025), Prop. 4.6:
/// loss (14) (the debiased RR loss at `eps`, or the MLE for `eps = None`) over `Θ_{B'}`, then
/// `θ̂' = θ̂/β + θ_sft`. `y`: uint8 labels (RR labels, possibly corrupted after privatisation,
/// so no guarantee is attached).
#[pyfunction]
#[pyo3(signature = (x, y, eps, beta, theta_sft, radius, threads=None))]
#[allow(clippy::too_many_arguments)]
pub fn fit_dpo<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    eps: Option<f64>,
    beta: f64,
    theta_sft: Vec<f64>,
    radius: f64,
    threads: Option<usize>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, String)> {
    let xa = FeatureArray::borrow(x, "x", 2)?;
    let shape = xa.shape();
    let (n, d) = (shape[0], shape[1]);
    let x = xa
        .f64()
        .ok_or_else(|| PyTypeError::new_err("fit_dpo reads float64 features"))?;
    let ya = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let y = values(&ya);
    let out = run(py, threads, |_| {
        privpref::estimator::robust::fit_dpo(
            data::PairwiseView::new(x, n, d, y, None)?,
            eps,
            beta,
            &theta_sft,
            radius,
        )
    })?;
    fit_out(py, out)
}

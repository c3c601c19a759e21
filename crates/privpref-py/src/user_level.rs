//! User-level label DP (Zhang et al. (2025)): user-level RR with the exact debiased estimator, user-wise DP-SGD, AUP-RLHF.
//!
//! Users own consecutive blocks of rows (`counts[u] = m_u`, summing to `n`); features, user
//! identities and counts are public, labels private.

use crate::arrays::{borrow_exact, pairwise_view, values, FeatureArray};
use crate::mechanisms::Privatized;
use crate::options::SolveArgs;
use crate::results::fit_out;
use crate::run::run;
use numpy::PyArray1;
use privpref::data::UserIndex;
use privpref::estimator::user_level::{
    aup_rlhf, fit_user_rr as fit_user_rr_lib, fit_user_rr_privatized, user_dpsgd as user_dpsgd_lib, AupBatch,
    AupOptions, UserDpSgdOptions, UserOutput, UserRrOptions, UserSampler,
};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::AtCalibration;
use privpref::privacy::rdp::{Accountant, Accounting, Conversion, Neighbours};
use privpref::privacy::NoiseRng;
use privpref::{Error, Result};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// Adds this part's functions and classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_user_rr, m)?)?;
    m.add_function(wrap_pyfunction!(user_dpsgd, m)?)?;
    m.add_function(wrap_pyfunction!(aup_rlhf_fit, m)?)?;
    Ok(())
}

fn sampler(name: &str) -> Result<UserSampler> {
    match name {
        "poisson" => Ok(UserSampler::Poisson),
        "fixed-size" => Ok(UserSampler::FixedSize),
        other => Err(Error::param(
            "sampler",
            format!("unknown user sampler `{other}` (expected poisson or fixed-size)"),
        )),
    }
}

fn accountant(neighbours: &str, conversion: &str, accounting: &str) -> Result<Accountant> {
    let mut acc = Accountant::default();
    acc.neighbours = Neighbours::parse(neighbours)?;
    acc.conversion = Conversion::parse(conversion)?;
    acc.accounting = Accounting::parse(accounting)?;
    Ok(acc)
}

/// The user-level debiased RR estimator over a feasible set. `labels`: labels from
/// `UserLevelRR(eps).privatize(y, counts)` (their provenance is checked and the fit carries
/// their guarantee), or `y`: raw uint8 labels (no guarantee). Returns `(theta, json)`.
#[pyfunction]
#[pyo3(signature = (x, y, labels, counts, eps, constraint, radius, solver, tol, tol_abs, max_iter, memory, polish_iters, threads))]
#[allow(clippy::too_many_arguments)]
pub fn fit_user_rr<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: Option<&Bound<'py, PyAny>>,
    labels: Option<PyRef<'py, Privatized>>,
    counts: Vec<usize>,
    eps: f64,
    constraint: &str,
    radius: Option<f64>,
    solver: String,
    tol: f64,
    tol_abs: f64,
    max_iter: usize,
    memory: Option<usize>,
    polish_iters: Option<usize>,
    threads: Option<usize>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, String)> {
    let xa = FeatureArray::borrow(x, "x", 2)?;
    let shape = xa.shape();
    let (n, d) = (shape[0], shape[1]);
    let ya = match (&labels, y) {
        (Some(_), _) => None,
        (None, Some(y)) => Some(borrow_exact::<u8>(y, "y", "uint8", 1)?),
        (None, None) => return Err(PyTypeError::new_err("fit_user_rr needs y or privatised labels")),
    };
    let args = SolveArgs {
        solver,
        tol,
        tol_abs,
        max_iter,
        memory,
        polish_iters,
        batch: None,
        epochs: None,
        step: None,
        shuffle: false,
        average: None,
        seed: None,
    };
    let (features, y) = (xa.slice(), ya.as_ref().map(values));
    let labels = labels.as_deref().map(|p| &p.inner);
    let out = run(py, threads, move |stop| {
        let users = UserIndex::from_counts(&counts)?;
        let mut o = UserRrOptions::new(eps, FeasibleSet::parse(constraint, radius)?);
        o.solver = args.solver()?;
        o.control = args.control(stop);
        match (labels, y) {
            (Some(l), _) => fit_user_rr_privatized(pairwise_view(features, n, d, l.labels())?, &users, l, &o),
            (None, Some(y)) => fit_user_rr_lib(pairwise_view(features, n, d, y)?, &users, &o),
            (None, None) => unreachable!("checked above"),
        }
    })?;
    fit_out(py, out)
}

/// User-wise DP-SGD on clear labels. Returns `(theta, json)`.
#[pyfunction]
#[pyo3(signature = (x, y, counts, eps, delta, expected_users, steps, clip, lr, loss, loss_eps, noise_multiplier, records_per_user, sampler_name, constraint, radius, theta0, output, neighbours, conversion, accounting, seed, threads))]
#[allow(clippy::too_many_arguments)]
pub fn user_dpsgd<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    counts: Vec<usize>,
    eps: f64,
    delta: f64,
    expected_users: f64,
    steps: u64,
    clip: f64,
    lr: f64,
    loss: &str,
    loss_eps: Option<f64>,
    noise_multiplier: Option<f64>,
    records_per_user: Option<usize>,
    sampler_name: &str,
    constraint: &str,
    radius: Option<f64>,
    theta0: Option<Vec<f64>>,
    output: &str,
    neighbours: &str,
    conversion: &str,
    accounting: &str,
    seed: Option<u64>,
    threads: Option<usize>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, String)> {
    let xa = FeatureArray::borrow(x, "x", 2)?;
    let shape = xa.shape();
    let (n, d) = (shape[0], shape[1]);
    let ya = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let (features, y) = (xa.slice(), values(&ya));
    let out = run(py, threads, move |stop| {
        let users = UserIndex::from_counts(&counts)?;
        let mut o = UserDpSgdOptions::new(eps, delta, expected_users, steps, clip, lr);
        o.interrupt = Some(stop);
        o.loss = LossSpec::parse(loss, loss_eps)?;
        o.noise_multiplier = noise_multiplier;
        o.records_per_user = records_per_user;
        o.sampler = sampler(sampler_name)?;
        o.set = FeasibleSet::parse(constraint, radius)?;
        o.theta0 = theta0;
        o.output = match output {
            "last" => UserOutput::Last,
            "average" => UserOutput::Average,
            "tail-average" => UserOutput::TailAverage,
            other => {
                return Err(Error::param(
                    "output",
                    format!("unknown output `{other}` (expected last, average or tail-average)"),
                ))
            }
        };
        o.accountant = accountant(neighbours, conversion, accounting)?;
        let mut rng = NoiseRng::from_seed(seed)?;
        user_dpsgd_lib(pairwise_view(features, n, d, y)?, &users, &o, &mut rng)
    })?;
    fit_out(py, out)
}

/// AUP-RLHF (AdapUserPriv-SGD per phase) on clear labels. `expected_users=None`: the full batch.
/// Returns `(theta, json)`.
#[pyfunction]
#[pyo3(signature = (x, y, counts, eps, delta, feature_bound, phases, use_all_users, expected_users, steps, lr, tau, sampler_name, at_calibration, realized_batch, constraint, radius, theta0, noise_multiplier, neighbours, conversion, accounting, seed, threads))]
#[allow(clippy::too_many_arguments)]
pub fn aup_rlhf_fit<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    counts: Vec<usize>,
    eps: f64,
    delta: f64,
    feature_bound: f64,
    phases: usize,
    use_all_users: Option<bool>,
    expected_users: Option<f64>,
    steps: u64,
    lr: f64,
    tau: Option<f64>,
    sampler_name: &str,
    at_calibration: &str,
    realized_batch: bool,
    constraint: &str,
    radius: Option<f64>,
    theta0: Option<Vec<f64>>,
    noise_multiplier: Option<f64>,
    neighbours: &str,
    conversion: &str,
    accounting: &str,
    seed: Option<u64>,
    threads: Option<usize>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, String)> {
    let xa = FeatureArray::borrow(x, "x", 2)?;
    let shape = xa.shape();
    let (n, d) = (shape[0], shape[1]);
    let ya = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let (features, y) = (xa.slice(), values(&ya));
    let out = run(py, threads, move |stop| {
        let users = UserIndex::from_counts(&counts)?;
        let mut o = AupOptions::new(eps, delta, feature_bound);
        o.interrupt = Some(stop);
        o.phases = phases;
        o.use_all_users = use_all_users;
        o.batch = match expected_users {
            None => AupBatch::Full,
            Some(b) => AupBatch::Users(b),
        };
        o.steps = steps;
        o.step_size = lr;
        o.tau = tau;
        o.sampler = sampler(sampler_name)?;
        o.at_calibration = match at_calibration {
            "corrected" => AtCalibration::Corrected,
            "paper" => AtCalibration::PaperFaithful,
            other => {
                return Err(Error::param(
                    "at_calibration",
                    format!("unknown AboveThreshold calibration `{other}` (expected corrected or paper)"),
                ))
            }
        };
        o.realized_batch = realized_batch;
        o.set = FeasibleSet::parse(constraint, radius)?;
        o.theta0 = theta0;
        o.noise_multiplier = noise_multiplier;
        o.accountant = accountant(neighbours, conversion, accounting)?;
        let mut rng = NoiseRng::from_seed(seed)?;
        aup_rlhf(pairwise_view(features, n, d, y)?, &users, &o, &mut rng)
    })?;
    fit_out(py, out)
}

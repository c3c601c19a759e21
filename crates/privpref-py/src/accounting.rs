//! The accountant of the Poisson-subsampled Gaussian (Rényi DP or the privacy loss distribution): (ε, δ) of T steps, and the smallest noise multiplier for a target ε.
//!
//! As the CLI's `privpref account` / `privpref calibrate`: the same accountants (`rdp`, `pld`),
//! order grids (`default`, `integers:MAX`, or a list), relations and conversions, and the same
//! JSON keys.

use crate::run::run;
use privpref::privacy::rdp::{self, Accountant, Accounting, Conversion, Neighbours};
use privpref::Error;
use pyo3::prelude::*;
use serde_json::{json, Value};

/// Adds this part's functions and classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rdp_epsilon, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate_noise, m)?)?;
    Ok(())
}

/// The order grid: `None` or `"default"` (the library's default grid), `"integers:MAX"`
/// (`2, 3, …, MAX`), a comma-separated string of orders (as the CLI's `--orders`), or a
/// sequence of orders.
enum Orders {
    Spec(String),
    List(Vec<f64>),
}

fn orders_arg(orders: Option<&Bound<'_, PyAny>>) -> PyResult<Orders> {
    match orders {
        None => Ok(Orders::Spec("default".into())),
        Some(o) if o.is_none() => Ok(Orders::Spec("default".into())),
        Some(o) => {
            if let Ok(s) = o.extract::<String>() {
                Ok(Orders::Spec(s))
            } else {
                Ok(Orders::List(o.extract::<Vec<f64>>()?))
            }
        }
    }
}

/// The grid and its name: a list as it is (checked by the accountant: at most
/// `rdp::MAX_ORDERS` orders in (1, 1e4]), a string spec as the CLI's `--orders`
/// ([`rdp::parse_orders`]).
fn parse_orders(orders: Orders) -> Result<(Vec<f64>, String), Error> {
    match orders {
        Orders::List(v) => Ok((v, "list".into())),
        Orders::Spec(s) => rdp::parse_orders(&s),
    }
}

fn accountant(
    orders: Orders,
    neighbours: &str,
    conversion: &str,
    accounting: &str,
) -> Result<(Accountant, String), Error> {
    let (orders, grid) = parse_orders(orders)?;
    let mut acc = Accountant::new(orders, Neighbours::parse(neighbours)?)?;
    acc.conversion = Conversion::parse(conversion)?;
    acc.accounting = Accounting::parse(accounting)?;
    Ok((acc, grid))
}

/// The accountant's description, as the CLI's: `neighbours_proven` is whether the bound is a
/// theorem for the relation under this accountant; the order grid and the conversion only
/// apply to RDP (`None` under PLD).
fn describe(acc: &Accountant, grid: &str) -> Value {
    let rdp = acc.accounting == Accounting::Rdp;
    json!({
        "accounting": acc.accounting.name(),
        "neighbours": acc.neighbours.name(),
        "neighbours_proven": acc.proven(),
        "conversion": if rdp { Some(acc.conversion.name()) } else { None },
        "orders": if rdp { Some(grid) } else { None },
        "num_orders": if rdp { Some(acc.orders.len()) } else { None },
    })
}

fn merge(mut a: Value, b: Value) -> String {
    if let (Some(x), Value::Object(y)) = (a.as_object_mut(), b) {
        x.extend(y);
    }
    a.to_string()
}

/// `privpref account`: `(ε, δ)` of `steps` Poisson-subsampled Gaussian steps. Returns the JSON
/// of the CLI's `account` (`epsilon`, `order`, `rdp_at_order`, …).
#[pyfunction]
#[pyo3(signature = (sampling_rate, noise_multiplier, steps, delta, neighbours, conversion, accounting, orders=None))]
#[allow(clippy::too_many_arguments)]
pub fn rdp_epsilon(
    py: Python<'_>,
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    delta: f64,
    neighbours: &str,
    conversion: &str,
    accounting: &str,
    orders: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let orders = orders_arg(orders)?;
    run(py, None, move |_stop| {
        let (acc, grid) = accountant(orders, neighbours, conversion, accounting)?;
        let r = acc.epsilon(sampling_rate, noise_multiplier, steps, delta)?;
        Ok(merge(
            json!({
                "epsilon": r.epsilon,
                "delta": r.delta,
                "order": r.order,
                "rdp_at_order": r.rdp,
                "sampling_rate": r.sampling_rate,
                "noise_multiplier": r.noise_multiplier,
                "steps": r.steps,
                "target_epsilon": null,
            }),
            describe(&acc, &grid),
        ))
    })
}

/// `privpref calibrate`: the smallest noise multiplier (to a relative 1e-10, never below) whose
/// `ε` is at most `epsilon`. Returns the JSON of the CLI's `calibrate` plus `rdp_at_order`.
#[pyfunction]
#[pyo3(signature = (sampling_rate, steps, delta, epsilon, neighbours, conversion, accounting, orders=None))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate_noise(
    py: Python<'_>,
    sampling_rate: f64,
    steps: u64,
    delta: f64,
    epsilon: f64,
    neighbours: &str,
    conversion: &str,
    accounting: &str,
    orders: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let orders = orders_arg(orders)?;
    run(py, None, move |_stop| {
        let (acc, grid) = accountant(orders, neighbours, conversion, accounting)?;
        let c = acc.calibrate_sigma(sampling_rate, steps, epsilon, delta)?;
        // The RDP at the best order of the calibrated σ (the calibration's ε is this report's);
        // PLD has no order, and recomputing its ε would compose the distribution again.
        let rdp_at_order = match acc.accounting {
            Accounting::Rdp => Some(acc.epsilon(sampling_rate, c.noise_multiplier, steps, delta)?.rdp),
            Accounting::Pld => None,
        };
        Ok(merge(
            json!({
                "epsilon": c.epsilon,
                "delta": c.delta,
                "order": c.order,
                "rdp_at_order": rdp_at_order,
                "sampling_rate": sampling_rate,
                "noise_multiplier": c.noise_multiplier,
                "steps": steps,
                "target_epsilon": c.target_epsilon,
                "iterations": c.iterations,
            }),
            describe(&acc, &grid),
        ))
    })
}

//! `privpref account` and `privpref calibrate`: the RDP (`privpref::privacy::rdp`) or PLD
//! (`privpref::privacy::pld`) accountant of the Poisson-subsampled Gaussian mechanism from the
//! command line, JSON out.

use clap::Args;
use privpref::privacy::rdp::{self, Accountant, Accounting, Conversion, Neighbours};
use privpref::Error;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Options shared by `account` and `calibrate`.
#[derive(Args)]
pub struct AccountantArgs {
    /// Poisson sampling rate q ∈ (0, 1] (expected batch size / population).
    #[arg(long)]
    pub sampling_rate: f64,
    /// Number of steps T (compositions), ≥ 1.
    #[arg(long)]
    pub steps: u64,
    /// δ ∈ (0, 1).
    #[arg(long)]
    pub delta: f64,
    /// Neighbouring relation: replace (default: user-level label DP, proven bound) | add-remove
    /// (the standard DP-SGD accountant) | replace-sensitivity2 | replace-numeric (the last two are
    /// not proven; see `privpref::privacy::rdp`).
    #[arg(long, default_value = "replace")]
    pub neighbours: String,
    /// RDP → (ε, δ) conversion: improved (Canonne, Kamath & Steinke 2020, default) | classic
    /// (Mironov 2017).
    #[arg(long, default_value = "improved")]
    pub conversion: String,
    /// Order grid: default ({1.1, …, 10.9} ∪ {11, …, 63} ∪ {128, 256, 512, 1024}) |
    /// integers:MAX (2, 3, …, MAX; MAX ≤ 1024) | a comma-separated list of at most 1024 orders in (1, 1e4].
    #[arg(long, default_value = "default")]
    pub orders: String,
    /// Accountant: rdp (default: Rényi DP on the order grid) | pld (privacy loss distribution,
    /// connect-the-dots on a grid of 1e-4, tighter; the replace relations then use the antipodal
    /// pair, not proven).
    #[arg(long, default_value = "rdp")]
    pub accountant: String,
    /// Write the JSON here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `privpref account`.
#[derive(Args)]
pub struct AccountArgs {
    /// Noise multiplier σ (noise standard deviation / ℓ₂ sensitivity), > 0.
    #[arg(long)]
    pub noise_multiplier: f64,
    #[command(flatten)]
    pub common: AccountantArgs,
}

/// `privpref calibrate`.
#[derive(Args)]
pub struct CalibrateArgs {
    /// Target ε > 0.
    #[arg(long)]
    pub epsilon: f64,
    #[command(flatten)]
    pub common: AccountantArgs,
}

fn accountant(a: &AccountantArgs) -> Result<(Accountant, String), Error> {
    let (orders, grid) = rdp::parse_orders(&a.orders)?;
    let mut acc = Accountant::new(orders, Neighbours::parse(&a.neighbours)?)?;
    acc.conversion = Conversion::parse(&a.conversion)?;
    acc.accounting = Accounting::parse(&a.accountant)?;
    Ok((acc, grid))
}

fn describe(acc: &Accountant, grid: &str) -> Value {
    match acc.accounting {
        Accounting::Rdp => json!({
            "accountant": "Renyi DP of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar & Zhang 2019)",
            "accounting": "rdp",
            "neighbours": acc.neighbours.name(),
            "neighbours_proven": acc.proven(),
            "conversion": acc.conversion.name(),
            "orders": grid,
            "num_orders": acc.orders.len(),
        }),
        Accounting::Pld => json!({
            "accountant": "privacy loss distribution of the Poisson-subsampled Gaussian mechanism (connect-the-dots, Doroshenko et al. 2022; FFT composition)",
            "accounting": "pld",
            "neighbours": acc.neighbours.name(),
            "neighbours_proven": acc.proven(),
            "pld_grid": 1e-4,
        }),
    }
}

fn merge(mut a: Value, b: Value) -> Value {
    if let (Some(x), Value::Object(y)) = (a.as_object_mut(), b) {
        x.extend(y);
    }
    a
}

/// Runs `account`: the JSON result.
pub fn run_account(a: &AccountArgs) -> Result<Value, Error> {
    let (acc, grid) = accountant(&a.common)?;
    let r = acc.epsilon(
        a.common.sampling_rate,
        a.noise_multiplier,
        a.common.steps,
        a.common.delta,
    )?;
    Ok(merge(
        json!({
            "epsilon": r.epsilon,
            "delta": r.delta,
            "order": r.order,
            "rdp_at_order": r.rdp,
            "sampling_rate": r.sampling_rate,
            "noise_multiplier": r.noise_multiplier,
            "steps": r.steps,
        }),
        describe(&acc, &grid),
    ))
}

/// Runs `calibrate`: the JSON result.
pub fn run_calibrate(a: &CalibrateArgs) -> Result<Value, Error> {
    let (acc, grid) = accountant(&a.common)?;
    let c = acc.calibrate_sigma(a.common.sampling_rate, a.common.steps, a.epsilon, a.common.delta)?;
    Ok(merge(
        json!({
            "noise_multiplier": c.noise_multiplier,
            "epsilon": c.epsilon,
            "target_epsilon": c.target_epsilon,
            "delta": c.delta,
            "order": c.order,
            "sampling_rate": a.common.sampling_rate,
            "steps": a.common.steps,
            "conservative": match acc.accounting {
                Accounting::Rdp => "epsilon(noise_multiplier) <= target_epsilon * (1 - 1e-10)",
                Accounting::Pld => "epsilon(noise_multiplier) <= target_epsilon (bisection to relative width 1e-6)",
            },
        }),
        describe(&acc, &grid),
    ))
}

/// The output path.
pub fn out(a: &AccountantArgs) -> &Option<PathBuf> {
    &a.out
}

//! Quickstart: private reward estimation from pairwise preferences in ~30 lines.
//!
//! Simulates BTL comparisons, privatises the labels with randomized response (ε-label-LDP),
//! fits the debiased RR estimator of Chowdhury, Zhou & Natarajan (AISTATS 2024) exactly over
//! Θ_B, and prints the estimate with its optimality certificate and its guarantee (which comes
//! from the labels' provenance: here a seeded simulation generator, so it is simulation-only).
//!
//! `cargo run --release --example quickstart`

use privpref::estimator::{fit_privatized, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{simulation_rng, RandomizedResponse};
use privpref::privacy::NoiseRng;
use privpref::sim::{btl_pairs, theta_star};

fn main() -> privpref::Result<()> {
    let (n, d, eps) = (20_000, 5, 1.0);
    // Ground truth on the sum-zero subspace, ‖θ*‖ = 1, and n BTL comparisons.
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(1))?;
    let data = btl_pairs(n, &theta, &mut simulation_rng(2))?;

    // Each labeller randomises their own label once (a seeded simulation generator here; real
    // data must use NoiseRng::secure()). The labels come back with their provenance.
    let rr = RandomizedResponse::new(eps)?;
    let y_private = rr.privatize(&data.y, &mut NoiseRng::seeded(3))?;
    let view = data.view()?.with_labels(y_private.labels())?;

    // The debiased RR estimator over Θ_B = {Σθ = 0, ‖θ‖ ≤ 2}, solved exactly (the default solver
    // is the fastest certified one for the loss and shape).
    let opts = FitOptions::new(LossSpec::DebiasedRr { eps }, FeasibleSet::theta_b(2.0)?);
    let model = fit_privatized(view, &y_private, &opts)?;
    let report = model.report.clone().into_result()?; // an error unless the KKT certificate holds

    let err: f64 = model
        .theta
        .iter()
        .zip(&theta)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt();
    println!("θ*  = {theta:.4?}");
    println!("θ̂   = {:.4?}", model.theta);
    println!("‖θ̂ − θ*‖ = {err:.4}  (n = {n}, ε = {eps})");
    println!(
        "certificate: relative KKT residual {:.1e} ≤ {:.1e} ({}, {} iterations), global optimum: {}",
        report.certificate.kkt_residual,
        report.certificate.kkt_tol,
        report.solver,
        report.counts.iterations,
        report.certificate.certified_global
    );
    if let Some(g) = &model.guarantee {
        println!("guarantee: {g}");
    }
    Ok(())
}

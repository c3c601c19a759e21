//! The debiased K-RR Plackett–Luce estimator's error across ε against the privacy factor
//! `(e^ε + K − 1)/(e^ε − 1)` (Chowdhury, Zhou & Natarajan (2024), Sec. 4.4, App. C.4;
//! `privpref_experiments::krr_scaling`). The full run behind the smaller check of
//! `tests/krr_scaling.rs`.
//!
//! ```sh
//! cargo run --release --example krr_scaling                    # K = 4, d = 5, n = 20000, 200 reps
//! cargo run --release --example krr_scaling -- 50              # fewer repetitions
//! cargo run --release --example krr_scaling -- 200 20000 0.25,0.5,1,2,4   # reps, n, ε list
//! ```

use privpref_experiments::{krr_scaling, KrrScalingConfig};
use std::time::Instant;

fn main() -> Result<(), privpref::Error> {
    let mut cfg = KrrScalingConfig::default();
    let args: Vec<String> = std::env::args().collect();
    if let Some(r) = args.get(1) {
        cfg.reps = r.parse().expect("repetitions: a positive integer");
    }
    if let Some(n) = args.get(2) {
        cfg.n = n.parse().expect("n: a positive integer");
    }
    if let Some(e) = args.get(3) {
        cfg.eps = e.split(',').map(|v| v.parse().expect("ε list: numbers")).collect();
    }
    let t = Instant::now();
    let rows = krr_scaling(&cfg)?;
    println!(
        "K = {}, d = {}, n = {}, ‖θ*‖ = {}, B = {}, {} repetitions, seed {} ({:.1} s)\n",
        cfg.k,
        cfg.d,
        cfg.n,
        cfg.theta_norm,
        cfg.radius,
        cfg.reps,
        cfg.seed,
        t.elapsed().as_secs_f64()
    );
    println!("| estimator | ε | factor (e^ε+K−1)/(e^ε−1) | RMSE | RMSE / factor | converged | on boundary |");
    println!("|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {:.4} | {:.5} | {:.5} | {} | {} |",
            if r.eps.is_some() { "pl-krr" } else { "pl-top1 (clear)" },
            r.eps.map_or("–".to_string(), |e| e.to_string()),
            r.factor,
            r.rmse,
            r.normalized,
            r.converged,
            r.on_boundary
        );
    }
    let krr: Vec<f64> = rows.iter().filter(|r| r.eps.is_some()).map(|r| r.normalized).collect();
    let (lo, hi) = krr
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    println!("\nmax/min of RMSE/factor over ε: {:.4}", hi / lo);
    Ok(())
}

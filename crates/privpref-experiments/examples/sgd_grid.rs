//! The simulation of Chowdhury, Zhou & Natarajan (2024) (Sec. 6, Figure 1) with every estimator run
//! by one-pass SGD, as in the paper: local SGD-RR (Algorithm 1), objective perturbation by SGD (NOT
//! private: Thm 5.2 needs the exact minimiser) and the non-private MLE by SGD. Prints mean `ℓ2`
//! error ± standard error per `(ε, n)` and the wall time (with the thread-time split between data
//! generation and SGD).
//!
//! `cargo run --release --example sgd_grid [STEP] [independent] [block=K]` where `STEP` is a step
//! rule (`const:0.1`, the paper's, by default; `theory`, `invt:C`, `lambda:L`, `statement`) and
//! `independent` draws a fresh sample per `n` instead of nested samples (the default);
//! `block=K` sets the repetitions advanced together (performance only).

use privpref::solver::sgd::StepRule;
use privpref_experiments::{sgd_grid_comparison, SgdEstimator, SgdGridConfig};
use std::time::Instant;

fn main() -> Result<(), privpref::Error> {
    let mut cfg = SgdGridConfig::default();
    for a in std::env::args().skip(1) {
        if a == "independent" {
            cfg.nested = false;
        } else if let Some(b) = a.strip_prefix("block=") {
            cfg.block = b
                .parse()
                .map_err(|_| privpref::Error::param("block", format!("not a count: {b}")))?;
        } else {
            cfg.step = StepRule::parse(&a)?;
        }
    }
    let t = Instant::now();
    let res = sgd_grid_comparison(&cfg)?;
    let wall = t.elapsed().as_secs_f64();
    println!(
        "Chowdhury, Zhou & Natarajan (2024) grid by one-pass SGD: d = {}, ‖θ*‖ = {}, B = {} ({}), step {}, {:?}, β = {:?}, δ = {}, {} repetitions, {} samples, seed {}",
        cfg.d,
        cfg.theta_norm,
        cfg.radius,
        if cfg.sum_zero { "Θ_B, sum-zero" } else { "ball" },
        cfg.step,
        cfg.average,
        cfg.ridge,
        cfg.delta,
        cfg.reps,
        if cfg.nested { "nested" } else { "independent" },
        cfg.seed
    );
    for e in [
        SgdEstimator::LocalSgdRr,
        SgdEstimator::CentralObjPertSgd,
        SgdEstimator::MleSgd,
    ] {
        println!("  {:<20} {}", e.name(), e.guarantee());
    }
    println!(
        "\n{:>5} {:>6} | {:>18} | {:>18} | {:>18}",
        "eps", "n", "local SGD-RR", "objpert SGD (np)", "MLE SGD"
    );
    for &eps in &cfg.eps {
        for &n in &cfg.ns {
            let f = |est| {
                let c = res.cell(est, eps, n).expect("cell");
                format!("{:.4} ± {:.4}", c.mean(), c.std_err())
            };
            println!(
                "{eps:>5} {n:>6} | {:>18} | {:>18} | {:>18}",
                f(SgdEstimator::LocalSgdRr),
                f(SgdEstimator::CentralObjPertSgd),
                f(SgdEstimator::MleSgd)
            );
        }
    }
    let nonfinite: usize = res.cells.iter().map(|c| c.non_finite).sum();
    println!(
        "\nwall time {wall:.3} s on {} threads; thread time: data generation {:.3} s, SGD {:.3} s; non-finite outputs: {nonfinite}",
        rayon::current_num_threads(),
        res.data_seconds,
        res.sgd_seconds
    );
    Ok(())
}

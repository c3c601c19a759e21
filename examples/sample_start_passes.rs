//! Passes over `X` and time of an exact L-BFGS fit with and without the row-sample start
//! (`privpref::estimator::sample_start`), alternating in one process, next to a streaming read
//! of the same `X` (`bench-results/fits.md`).
//!
//! Usage: `sample_start_passes SHAPES THREADS REPS`, e.g.
//! `sample_start_passes 100000x10,1000000x100 1,2 5`. Data: BTL pairs as in the peer benchmark
//! (`θ*` with `‖θ*‖ = 1`, no constraint, `mle`), KKT tolerance 1e-10. For each shape and thread
//! count, `REPS` rounds of: one streaming read, then each configuration once (lbfgs with
//! `polish_iters = 0` and the default, each with the sample start off and on). Prints one
//! Markdown row per configuration: median time, time / median streaming read ("passes'
//! worth"), full passes, the sample run's rows read / n ("sample passes"), iterations, time per
//! pass (time / (full + sample passes)), and the largest |Δθ| against the first configuration.

use privpref::estimator::{fit, FitOptions, Solver};
use privpref::feasible::FeasibleSet;
use privpref::kernels::stream_sum;
use privpref::loss::LossSpec;
use privpref::mechanism::simulation_rng;
use privpref::par::Par;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::lbfgs::LbfgsOptions;
use std::time::Instant;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> privpref::Result<()> {
    let arg = |i: usize, default: &str| std::env::args().nth(i).unwrap_or_else(|| default.to_string());
    let shapes: Vec<(usize, usize)> = arg(1, "100000x10")
        .split(',')
        .map(|s| {
            let (n, d) = s.split_once('x').expect("shape NxD");
            (n.parse::<f64>().expect("n") as usize, d.parse().expect("d"))
        })
        .collect();
    let threads: Vec<usize> = arg(2, "1").split(',').map(|s| s.parse().expect("threads")).collect();
    let reps: usize = arg(3, "3").parse().expect("reps");
    println!("| shape | threads | solver | sample start | time (s) | passes' worth | full passes | sample passes | iterations | time per pass (ms) | max abs dθ |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for &(n, d) in &shapes {
        let theta = theta_star(d, 1.0, false, &mut simulation_rng(1))?;
        let data = btl_pairs(n, &theta, &mut simulation_rng(2))?;
        let view = data.view()?;
        let configs: Vec<(&str, usize, bool)> = vec![
            ("lbfgs-nopolish", 0, false),
            ("lbfgs-nopolish", 0, true),
            ("lbfgs", 10, false),
            ("lbfgs", 10, true),
        ];
        for &t in &threads {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("pool");
            let mut stream = Vec::new();
            let mut times = vec![Vec::new(); configs.len()];
            let mut last = vec![None; configs.len()];
            for _ in 0..reps {
                let t0 = Instant::now();
                std::hint::black_box(pool.install(|| stream_sum(&data.x, d, Par::Rayon)));
                stream.push(t0.elapsed().as_secs_f64());
                for (k, &(_, polish, sample)) in configs.iter().enumerate() {
                    let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::Unconstrained);
                    let mut l = LbfgsOptions::default();
                    l.polish_iters = polish;
                    l.sample_start = sample;
                    o.solver = Solver::Lbfgs(l);
                    let t0 = Instant::now();
                    let m = pool.install(|| fit(view, &o))?;
                    times[k].push(t0.elapsed().as_secs_f64());
                    assert!(m.report.converged(), "{:?}", m.report.termination);
                    last[k] = Some(m);
                }
            }
            let s = median(&mut stream);
            let first = last[0].as_ref().map(|m| m.theta.clone()).unwrap_or_default();
            for (k, &(name, _, sample)) in configs.iter().enumerate() {
                let m = last[k].as_ref().expect("fit");
                let tm = median(&mut times[k]);
                let passes = m.report.data_passes();
                let dt = m
                    .theta
                    .iter()
                    .zip(&first)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                println!(
                    "| ({n}, {d}) | {t} | {name} | {} | {tm:.3} | {:.1} | {passes} | {:.2} | {} | {:.1} | {dt:.1e} |",
                    if sample { "on" } else { "off" },
                    tm / s,
                    m.report.counts.sample_rows as f64 / n as f64,
                    m.report.counts.iterations,
                    1e3 * tm / (passes as f64 + m.report.counts.sample_rows as f64 / n as f64),
                );
            }
            eprintln!("({n}, {d}) {t} threads: streaming read {:.1} ms", 1e3 * s);
        }
    }
    Ok(())
}

//! One-pass SGD-RR (Algorithm 1 of Chowdhury, Zhou & Natarajan (2024)) with the theory step `η_t =
//! 1/(λt)`, `λ = γκ tanh(ε/2)` (proof of Thm 4.5), against the exact debiased-RR minimiser (Newton
//! over `Θ_B`): mean `ℓ2` error over repetitions for `n = 1e3 … 1e5`, the log-log slope, and the
//! SGD/exact ratio at the largest `n`. Prints the measurements quoted by `tests/library/sgd.rs`.
//!
//! Two designs (`d = 5`, `ε = 1`, sum-zero `θ*`; data nested in `n`, theory constants computed
//! on each prefix):
//! * `sphere`: `x = 2u`, `u` uniform on the unit sphere (bounded features, `‖x‖ = 2`),
//!   `‖θ*‖ = 0.5`, `B = 1` — the design of the acceptance test;
//! * `gauss`: `x ~ N(0, 2I)` as in the paper's Sec. 6, `‖θ*‖ = 1`, `B = 2` — where `γ =
//!   σ'(B·max‖Px‖)` is tiny, so the theory steps are huge.
//!
//! `cargo run --release --example sgd_rates [reps [seed]]` (defaults 30, 2024).

use privpref::data::PairwiseView;
use privpref::estimator::{fit, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::{LossSpec, RrDebiased};
use privpref::mechanism::{mix_seed, simulation_rng, uniform_f64, Mechanism, RandomizedResponse};
use privpref::objective::Objective;
use privpref::par::Par;
use privpref::sim::theta_star;
use privpref::solver::sgd::{self, SgdOptions, StepRule};
use privpref::solver::Control;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

/// One repetition: SGD-RR errors per n, exact debiased-RR errors per n, the theory λ at the largest n.
type RepRow = (Vec<f64>, Vec<f64>, f64);

const NS: [usize; 5] = [1_000, 3_000, 10_000, 30_000, 100_000];

fn sigmoid(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp())
}

/// Nested data for one repetition: features, RR labels, θ*.
fn data(sphere: bool, d: usize, norm: f64, eps: f64, seed: u64, rep: u64) -> (Vec<f64>, Vec<u8>, Vec<f64>) {
    let n = *NS.last().unwrap();
    let th = theta_star(d, norm, true, &mut simulation_rng(mix_seed(seed, rep))).unwrap();
    let mut rng = simulation_rng(mix_seed(mix_seed(seed, rep), 1));
    let mut x = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let g: Vec<f64> = (0..d).map(|_| StandardNormal.sample(&mut rng)).collect();
        let row: Vec<f64> = if sphere {
            let l = g.iter().map(|v| v * v).sum::<f64>().sqrt();
            g.iter().map(|v| 2.0 * v / l).collect()
        } else {
            g.iter().map(|v| v * 2f64.sqrt()).collect()
        };
        let t: f64 = row.iter().zip(&th).map(|(a, b)| a * b).sum();
        y.push(u8::from(uniform_f64(&mut rng) < sigmoid(t)));
        x.extend(row);
    }
    let yt = RandomizedResponse::new(eps)
        .unwrap()
        .randomize(&y, &mut simulation_rng(mix_seed(mix_seed(seed, rep), 2)))
        .unwrap();
    (x, yt, th)
}

fn err(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt()
}

/// Least-squares slope of log(mean error) on log n.
fn slope(ns: &[usize], e: &[f64]) -> f64 {
    let lx: Vec<f64> = ns.iter().map(|&n| (n as f64).ln()).collect();
    let ly: Vec<f64> = e.iter().map(|v| v.ln()).collect();
    let (mx, my) = (lx.iter().sum::<f64>() / 5.0, ly.iter().sum::<f64>() / 5.0);
    let sxy: f64 = lx.iter().zip(&ly).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = lx.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

fn main() {
    let reps: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(30);
    let seed: u64 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(2024);
    let (d, eps) = (5, 1.0);
    for (name, sphere, norm, b) in [("sphere", true, 0.5, 1.0), ("gauss", false, 1.0, 2.0)] {
        let set = FeasibleSet::theta_b(b).unwrap();
        let mut ctl = Control::default();
        ctl.par = Par::Seq;
        let rows: Vec<(Vec<f64>, Vec<f64>, f64)> = (0..reps as u64)
            .into_par_iter()
            .map(|rep| {
                let (x, yt, th) = data(sphere, d, norm, eps, seed, rep);
                let mut es = vec![];
                let mut ex = vec![];
                let mut lam = 0.0;
                for &n in &NS {
                    let view = PairwiseView::new(&x[..n * d], n, d, &yt[..n], None).unwrap();
                    let loss = RrDebiased::new(eps).unwrap();
                    let obj = Objective::new(view, loss).with_par(Par::Seq);
                    let r = sgd::solve(&obj, &set, None, &SgdOptions::one_pass(StepRule::Theory), &ctl).unwrap();
                    es.push(err(&r.theta, &th));
                    let mut fo = FitOptions::new(LossSpec::DebiasedRr { eps }, set);
                    fo.control = ctl.clone();
                    ex.push(err(&fit(view, &fo).unwrap().theta, &th));
                    if n == *NS.last().unwrap() {
                        lam = sgd::theory_constants(&view, &loss, &set).unwrap().lambda;
                    }
                }
                (es, ex, lam)
            })
            .collect();
        let mean = |f: &dyn Fn(&RepRow) -> f64| -> f64 { rows.iter().map(f).sum::<f64>() / reps as f64 };
        let ms: Vec<f64> = (0..5).map(|k| mean(&|r| r.0[k])).collect();
        let mx: Vec<f64> = (0..5).map(|k| mean(&|r| r.1[k])).collect();
        let lam = mean(&|r| r.2);
        // Constants of repetition 0 at n = 1e5, for the record.
        let (x, yt, _) = data(sphere, d, norm, eps, seed, 0);
        let n = *NS.last().unwrap();
        let view = PairwiseView::new(&x, n, d, &yt, None).unwrap();
        let k = sgd::theory_constants(&view, &RrDebiased::new(eps).unwrap(), &set).unwrap();
        println!(
            "design {name}: d={d} eps={eps} ‖θ*‖={norm} B={b} reps={reps}; rep 0 at n=1e5: tmax={:.3} γ={:.4e} κ={:.4} c={:.4} λ={:.4e} (1/λ = {:.1}); mean λ over reps {lam:.4e}",
            k.tmax, k.gamma, k.kappa, k.c, k.lambda, 1.0 / k.lambda
        );
        println!("{:>8} {:>12} {:>12} {:>8}", "n", "SGD-RR", "exact RR", "ratio");
        for i in 0..5 {
            println!("{:>8} {:>12.5} {:>12.5} {:>8.3}", NS[i], ms[i], mx[i], ms[i] / mx[i]);
        }
        println!(
            "slope SGD-RR {:.3}, exact {:.3}; ratio at n=1e5 {:.3}\n",
            slope(&NS, &ms),
            slope(&NS, &mx),
            ms[4] / mx[4]
        );
    }
}

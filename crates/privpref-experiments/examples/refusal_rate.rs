//! How often do the central estimators refuse their guarantee at default settings?
//!
//! A refusal (the exactness certificate of objective perturbation, Chowdhury, Zhou & Natarajan
//! (2024) Algorithm 2, or the accuracy certificate of the private MLE, "Provable protection of
//! human judgements" (anon., 2025) Algorithm 1, not met) is an output that depends on the data:
//! if it happens with probability at most `p` on every dataset, the mechanism that releases `θ`
//! or the refusal is `(ε, δ + (1 + e^ε)p)`-DP instead of `(ε, δ)`-DP. This example measures the
//! refusal rate over many random BTL datasets at the defaults of `privpref fit --central`
//! (objective perturbation: `β = √n/B`, KKT tolerance 1e-9; private MLE: `η = 0.05`, `α` and
//! the accuracy `β` from the corrected rules; exact Newton, 100 iterations, `tol 1e-10`), over
//! `Θ_B` with `B = 1`, `L = max_i ‖x_i‖/2`, `δ = min(1e-5, 1/n²)`, for
//! `n ∈ {100, 1000, 10⁴, 5·10⁴}`, `d ∈ {2, 10, 30}`, `ε ∈ {0.1, 1}` and three feature scales
//! (`x = s·(φ¹ − φ⁰)`, `s ∈ {0.01, 1, 100}`). It prints one row per cell with the number of
//! refusals and the largest ratio of the certificate to its tolerance (how close the run came to
//! refusing), and writes `bench-results/refusal_rate.md`.
//!
//! `cargo run --release -p privpref-experiments --example refusal_rate [-- REPS]` (default 20
//! repetitions per cell).

use privpref::data::{FeatureBound, PairwiseView};
use privpref::estimator::central::{default_beta, objective_perturbation, ObjPertOptions};
use privpref::estimator::private_mle::{private_mle, PrivateMleOptions};
use privpref::feasible::FeasibleSet;
use privpref::mechanism::{mix_seed, simulation_rng};
use privpref::privacy::NoiseRng;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::Control;
use std::fmt::Write as _;
use std::time::Instant;

/// One cell's counts.
#[derive(Default)]
struct Cell {
    runs: usize,
    refused: usize,
    worst_ratio: f64,
}

impl Cell {
    fn add(&mut self, refused: bool, achieved: f64, tolerance: f64) {
        self.runs += 1;
        self.refused += usize::from(refused);
        let r = achieved / tolerance;
        self.worst_ratio = if r.is_nan() {
            f64::INFINITY
        } else {
            self.worst_ratio.max(r)
        };
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let reps: usize = std::env::args().nth(1).map(|s| s.parse()).transpose()?.unwrap_or(20);
    let ns = [100usize, 1000, 10_000, 50_000];
    let ds = [2usize, 10, 30];
    let epss = [0.1f64, 1.0];
    let scales = [0.01f64, 1.0, 100.0];
    let radius = 1.0;
    let set = FeasibleSet::theta_b(radius)?;
    let ball = FeasibleSet::ball(radius)?;
    // `privpref fit --central` defaults: --max-iter 100, --tol 1e-10, --tol-abs 0.
    let mut control = Control::default();
    control.max_iter = 100;
    control.tol_rel = 1e-10;
    control.tol_abs = 0.0;
    let t = Instant::now();
    let mut rows = String::new();
    let (mut total_runs, mut total_refused) = ([0usize; 2], [0usize; 2]);
    for &n in &ns {
        for &d in &ds {
            for &scale in &scales {
                for &eps in &epss {
                    let (mut op, mut pm) = (Cell::default(), Cell::default());
                    for r in 0..reps {
                        let seed = mix_seed(mix_seed(mix_seed(n as u64, d as u64), scale.to_bits()), r as u64);
                        let theta = theta_star(d, 1.0, true, &mut simulation_rng(seed))?;
                        let mut data = btl_pairs(n, &theta, &mut simulation_rng(mix_seed(seed, 1)))?;
                        data.x.iter_mut().for_each(|v| *v *= scale);
                        let view = PairwiseView::new(&data.x, n, d, &data.y, None)?;
                        let l = FeatureBound::pairwise(view.max_row_norm(false) / 2.0)?;
                        let delta = 1e-5f64.min(1.0 / (n as f64 * n as f64));
                        let mut o = ObjPertOptions::new(eps, delta, l, default_beta(n, &set)?, set);
                        o.control = control.clone();
                        o.allow_unguaranteed = true;
                        let f = objective_perturbation(view, &o, &mut NoiseRng::seeded(mix_seed(seed, 2)))?;
                        op.add(
                            f.refusal().is_some(),
                            f.report.certificate.projected_gradient,
                            f.detail.kkt_tol,
                        );
                        let mut p = PrivateMleOptions::new(eps, delta, l, ball);
                        p.control = control.clone();
                        p.allow_unguaranteed = true;
                        let m = private_mle(view, &p, &mut NoiseRng::seeded(mix_seed(seed, 3)))?;
                        pm.add(
                            m.refusal().is_some(),
                            m.detail.gap_certificate,
                            m.detail.calibration.accuracy,
                        );
                    }
                    for (i, c) in [&op, &pm].into_iter().enumerate() {
                        total_runs[i] += c.runs;
                        total_refused[i] += c.refused;
                    }
                    let line = format!(
                        "| {n} | {d} | {scale} | {eps} | {}/{} | {:.2e} | {}/{} | {:.2e} |",
                        op.refused, op.runs, op.worst_ratio, pm.refused, pm.runs, pm.worst_ratio
                    );
                    println!("{line}");
                    writeln!(rows, "{line}")?;
                }
            }
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let mut md = String::new();
    writeln!(md, "# Refusal rate of the central guarantees at default settings\n")?;
    writeln!(
        md,
        "Machine: {} ({} logical CPUs, shared with other jobs). Date: {}. Command: `cargo run --release -p privpref-experiments --example refusal_rate -- {reps}`. Wall time {secs:.0} s.\n",
        privpref_experiments::machine::uname(),
        privpref_experiments::machine::logical_cpus(),
        privpref_experiments::machine::utc_date(),
    )?;
    writeln!(
        md,
        "Why: a refused guarantee is an output that depends on the data; if refusals happen with probability at most p on every dataset, releasing θ or the refusal is (ε, δ + (1 + e^ε)p)-DP. Setup: BTL pairs, φ ~ N(0, I), x = s·(φ¹ − φ⁰), ‖θ*‖ = 1 (sum-zero, redrawn per repetition), Θ_B with B = 1 (objective perturbation) and the ball of radius 1 (private MLE), L = max_i‖x_i‖/2, δ = min(1e-5, 1/n²), the defaults of `privpref fit --central` (objective perturbation: β = √n/B, KKT tolerance 1e-9; private MLE: η = 0.05, α and the accuracy from the corrected rules; exact Newton, --max-iter 100, --tol 1e-10), noise seeded per repetition. `worst ratio` = the largest certificate / tolerance over the repetitions (refusal when > 1; for objective perturbation the Euclidean KKT residual over 1e-9, for the private MLE the certified objective gap over the accuracy β).\n"
    )?;
    writeln!(
        md,
        "Total: objective perturbation {}/{} refused; private MLE {}/{} refused.\n",
        total_refused[0], total_runs[0], total_refused[1], total_runs[1]
    )?;
    writeln!(
        md,
        "Reading: with no refusal in {} runs, the refusal probability on this distribution of datasets is below 3/{} at 95% confidence (rule of three), and the worst ratio shows how far every run stayed from refusing. This is not a worst-case bound over all datasets, which the DP statement would need; the guarantee docs say so.\n",
        total_runs[0], total_runs[0]
    )?;
    writeln!(
        md,
        "| n | d | scale s | ε | objpert refused | objpert worst ratio | private MLE refused | private MLE worst ratio |"
    )?;
    writeln!(md, "|---|---|---|---|---|---|---|---|")?;
    md.push_str(&rows);
    println!(
        "\ntotal: objective perturbation {}/{} refused; private MLE {}/{} refused ({secs:.0} s)",
        total_refused[0], total_runs[0], total_refused[1], total_runs[1]
    );
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-results/refusal_rate.md");
    std::fs::write(&out, md)?;
    println!("wrote {}", out.display());
    Ok(())
}

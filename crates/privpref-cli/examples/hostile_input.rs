//! Hostile but legal input, and what the library does with it: one feature at 1e20 or 1e100,
//! a feature above 1e154, SGD's default step rule on BTL data at n = 2·10⁵, d = 50, badly scaled
//! columns under `Θ_B`, and corrupt `.npy` headers. Each fit's certificate is recomputed
//! independently (gradient in doubled precision, term magnitudes by a plain loop).
//!
//! `cargo run --release --example hostile_input [DIR]` writes the data files of the CLI
//! commands it prints into `DIR` (default a temporary directory).

use privpref::data::npy::{self, header};
use privpref::data::PairwiseView;
use privpref::estimator::{fit, FitOptions, Solver, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::{Loss, LossSpec};
use privpref::mechanism::{simulation_rng, Mechanism, RandomizedResponse};
use privpref::objective::Objective;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::certificate::{measure, ObjectiveInfo};
use privpref::solver::sgd::{Averaging, SgdOptions, StepRule};
use privpref::with_loss;
use rand::RngExt;

/// The relative KKT residual recomputed independently of the solvers.
fn recomputed(view: PairwiseView<'_>, loss: LossSpec, set: &FeasibleSet, theta: &[f64]) -> f64 {
    with_loss!(loss, |l| kkt_of(view, l, set, theta)).unwrap_or(f64::NAN)
}

fn kkt_of<L: Loss>(view: PairwiseView<'_>, l: L, set: &FeasibleSet, theta: &[f64]) -> f64 {
    let obj = Objective::new(view, l.clone());
    let (n, d) = (view.n(), view.d());
    let mut g = vec![0.0; d];
    obj.value_grad_compensated(theta, &mut g);
    let mut a = vec![0.0; d];
    let mut row = vec![0.0; d];
    for i in 0..n {
        view.row_into(i, &mut row);
        let t: f64 = row.iter().zip(theta).map(|(x, t)| x * t).sum();
        let c = l.d1(t, view.y()[i]).abs();
        a.iter_mut().zip(&row).for_each(|(aj, x)| *aj += c * x.abs());
    }
    a.iter_mut().for_each(|v| *v /= n as f64);
    let info = ObjectiveInfo {
        convex: L::CONVEX,
        ridge_modulus: 0.0,
    };
    measure(set, theta, &g, &a, info).relative
}

fn main() -> privpref::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("privpref-hostile"));
    std::fs::create_dir_all(&dir).map_err(|e| privpref::Error::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    let p = |name: &str| dir.join(name).display().to_string();

    // 1. One feature at 1e20 or 1e100 (n = 5000, d = 5).
    println!("## One huge feature (n = 5000, d = 5, x[7, 2] = big; Θ_B, B = 2)\n");
    println!("| big | loss | solver | termination | certified | relative KKT (reported) | recomputed | F |");
    println!("|---|---|---|---|---|---|---|---|");
    let (n, d) = (5000, 5);
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(1))?;
    let data = btl_pairs(n, &theta, &mut simulation_rng(2))?;
    let yrr = RandomizedResponse::new(1.0)?.randomize(&data.y, &mut simulation_rng(3))?;
    let set = FeasibleSet::theta_b(2.0)?;
    for big in [1e20, 1e100] {
        let mut x = data.x.clone();
        x[7 * d + 2] = big;
        npy::write_f64(p(&format!("x_{big:e}.npy")), &x, &[n, d])?;
        for (loss, y) in [(LossSpec::DebiasedRr { eps: 1.0 }, &yrr), (LossSpec::Mle, &data.y)] {
            let view = PairwiseView::new(&x, n, d, y, None)?;
            for solver in [
                SolverKind::Auto,
                SolverKind::Newton,
                SolverKind::NewtonCg,
                SolverKind::Lbfgs,
            ] {
                let mut o = FitOptions::new(loss, set);
                o.solver = solver.into();
                let r = fit(view, &o)?.report;
                println!(
                    "| {big:e} | {} | {} | {} | {} | {:.1e} | {:.1e} | {:.6e} |",
                    loss.name(),
                    solver.name(),
                    r.termination,
                    r.certificate.certified_global,
                    r.certificate.kkt_residual,
                    recomputed(view, loss, &set, &r.theta),
                    r.certificate.objective
                );
            }
        }
    }
    npy::write_u8(p("y.npy"), &data.y)?;
    npy::write_u8(p("y_rr.npy"), &yrr)?;

    // 2. A feature above 1e154 (its square overflows): a typed error.
    println!("\n## A feature at 1e160 and 1e300\n");
    for big in [1e160, 1e300] {
        let mut x = data.x.clone();
        x[7 * d + 2] = big;
        npy::write_f64(p(&format!("x_{big:e}.npy")), &x, &[n, d])?;
        let view = PairwiseView::new(&x, n, d, &data.y, None)?;
        match fit(view, &FitOptions::new(LossSpec::Mle, set)) {
            Ok(m) => println!(
                "- {big:e}: {} (certified {})",
                m.report.termination, m.report.certificate.certified_global
            ),
            Err(e) => println!("- {big:e}: error: {e}"),
        }
    }

    // 3. SGD's default step rule on BTL data (n = 2e5, d = 50, ε = 1).
    println!("\n## SGD defaults (BTL, n = 2e5, d = 50, debiased RR at ε = 1, Θ_B with B = 2)\n");
    let (n2, d2) = (200_000, 50);
    let th2 = theta_star(d2, 1.0, true, &mut simulation_rng(0))?;
    let data2 = btl_pairs(n2, &th2, &mut simulation_rng(10))?;
    let y2 = RandomizedResponse::new(1.0)?.randomize(&data2.y, &mut simulation_rng(20))?;
    npy::write_f64(p("x_btl50.npy"), &data2.x, &[n2, d2])?;
    npy::write_u8(p("y_btl50_rr.npy"), &y2)?;
    let view2 = data2.view()?.with_labels(&y2)?;
    let loss2 = LossSpec::DebiasedRr { eps: 1.0 };
    let err = |t: &[f64]| t.iter().zip(&th2).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt();
    let exact = fit(view2, &FitOptions::new(loss2, set))?;
    println!(
        "- exact (auto): error ‖θ̂ − θ*‖ = {:.4}, {}",
        err(&exact.theta),
        exact.report.termination
    );
    let mut o = FitOptions::new(loss2, set);
    o.solver = SolverKind::Sgd.into();
    match fit(view2, &o) {
        Ok(m) => println!("- sgd, default step: error {:.4}", err(&m.theta)),
        Err(e) => println!("- sgd, default step: error: {e}"),
    }
    o.solver = Solver::Sgd({
        let mut o = SgdOptions::default();
        o.step = StepRule::Const(1.0 / (0.25 * (0.5f64).tanh() * 100.0));
        o.batch = 64;
        o.epochs = 1;
        o.shuffle = true;
        o.seed = 1;
        o.average = Averaging::Polyak;
        o
    });
    let m = fit(view2, &o)?;
    println!(
        "- sgd, batch 64, η = 1/L̄, Polyak averaging: error {:.4}, {} (relative KKT {:.1e})",
        err(&m.theta),
        m.report.termination,
        m.report.certificate.kkt_residual
    );

    // 4. Badly scaled columns under Θ_B (column scales 10^[−3, 0], B = 100).
    println!("\n## Column scales spread over 10^3 (n = 1000, d = 20, Θ_B with B = 100, ball inactive)\n");
    let (n3, d3) = (1000, 20);
    let mut worst = 0.0f64;
    let mut lines = 0;
    for seed in 0..20u64 {
        let mut rng = simulation_rng(100 + seed);
        let th = theta_star(d3, 1.0, true, &mut simulation_rng(10 + seed))?;
        let dat = btl_pairs(n3, &th, &mut simulation_rng(20 + seed))?;
        let sc: Vec<f64> = (0..d3).map(|_| 10f64.powf(-rng.random::<f64>() * 3.0)).collect();
        let mut x = dat.x.clone();
        for i in 0..n3 {
            for j in 0..d3 {
                x[i * d3 + j] *= sc[j];
            }
        }
        let view = PairwiseView::new(&x, n3, d3, &dat.y, None)?;
        let set3 = FeasibleSet::theta_b(100.0)?;
        let mut o = FitOptions::new(LossSpec::Mle, set3);
        o.solver = Solver::Newton;
        let nw = fit(view, &o)?;
        o.solver = SolverKind::Lbfgs.into();
        let lb = fit(view, &o)?;
        let dist = lb
            .theta
            .iter()
            .zip(&nw.theta)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let size = nw.theta.iter().map(|v| v.abs()).fold(0.0, f64::max);
        worst = worst.max(dist / size);
        if !lb.report.converged() {
            lines += 1;
            println!("- seed {seed}: lbfgs {}", lb.report.termination);
        }
        if seed == 1 {
            npy::write_f64(p("x_scaled.npy"), &x, &[n3, d3])?;
            npy::write_u8(p("y_scaled.npy"), &dat.y)?;
        }
    }
    println!(
        "- 20 seeds: L-BFGS converged on {} of 20, largest |θ_lbfgs − θ_newton|∞/|θ_newton|∞ = {worst:.1e}",
        20 - lines
    );

    // 5. Corrupt npy headers (the CLI reads these).
    let xb: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let f8 = header::Dtype {
        kind: header::Kind::Float,
        size: 8,
        big_endian: false,
    };
    let raw = |shape: &[u64], payload: &[u8]| [header::format(f8, shape), payload.to_vec()].concat();
    let io = |e: std::io::Error| privpref::Error::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    };
    std::fs::write(p("x_shape_2e32.npy"), raw(&[1 << 32, 1 << 32], &xb)).map_err(io)?;
    std::fs::write(p("x_trailing.npy"), raw(&[1, 3], &xb)).map_err(io)?;
    println!("\n## CLI commands on the files written to {}\n", dir.display());
    for c in [
        format!(
            "privpref fit --x {} --y {} --loss mle --radius 2",
            p("x_1e20.npy"),
            p("y.npy")
        ),
        format!(
            "privpref fit --x {} --y {} --loss debiased-rr --eps 1 --radius 2",
            p("x_1e100.npy"),
            p("y_rr.npy")
        ),
        format!(
            "privpref fit --x {} --y {} --loss mle --radius 2",
            p("x_1e160.npy"),
            p("y.npy")
        ),
        format!(
            "privpref fit --x {} --y {} --loss debiased-rr --eps 1 --radius 2 --solver sgd",
            p("x_btl50.npy"),
            p("y_btl50_rr.npy")
        ),
        format!(
            "privpref fit --x {} --y {} --loss mle --radius 100 --solver lbfgs",
            p("x_scaled.npy"),
            p("y_scaled.npy")
        ),
        format!(
            "privpref fit --x {} --y {} --loss mle --radius 2",
            p("x_shape_2e32.npy"),
            p("y.npy")
        ),
        format!(
            "privpref fit --x {} --y {} --loss mle --radius 2",
            p("x_trailing.npy"),
            p("y.npy")
        ),
        format!(
            "privpref fit --x {} --y {} --loss mle --radius 2 --threads 5000",
            p("x_1e20.npy"),
            p("y.npy")
        ),
    ] {
        println!("    {c}");
    }
    Ok(())
}

//! Plackett–Luce top-1 fit at `n = 2·10⁵` samples, `K = 8` alternatives, `d = 64` features (issue
//! 6 acceptance): exact solvers to the KKT tolerance, with the passes they are made of.
//!
//! `cargo bench --bench pl` runs criterion and then writes `bench-results/pl.md`:
//! * `stream_read`: a plain read of the `n·K·d` feature buffer (819 MB; the bandwidth floor of one
//!   pass);
//! * `value_grad`: one fused value + gradient pass of the K-wise objective;
//! * `hessian`: one dense Hessian pass (`Σ_i Φ_iᵀ(diag p − ppᵀ)Φ_i`, factored blocks + Gram);
//! * `fit_newton`, `fit_lbfgs`: `fit_kwise` on `Θ_B` (B = 10, interior answer) to the default KKT
//!   tolerance, from θ = 0;
//!
//! plus, from one extra fit each, iterations, passes and the achieved KKT residual.
//! Data: `pl_groups` (φ ~ N(0, I), ‖θ*‖ = 1 on the sum-zero subspace, seed 1). All threads of the
//! machine (the rayon default).
//! `PRIVPREF_BENCH_PL_N` overrides `n` (for a quick look).

mod common;

use criterion::{criterion_group, Criterion, Throughput};
use privpref::data::{GroupLabels, GroupView};
use privpref::estimator::{fit_kwise, FitOptions, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::{GroupLossSpec, PlTop1};
use privpref::mechanism::simulation_rng;
use privpref::objective::GroupObjective;
use privpref::sim::{pl_groups, theta_star};
use std::hint::black_box;
use std::time::Duration;

const K: usize = 8;
const D: usize = 64;

fn n() -> usize {
    std::env::var("PRIVPREF_BENCH_PL_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

struct Data {
    x: Vec<f64>,
    y: Vec<u8>,
    theta: Vec<f64>,
}

fn data() -> Data {
    let mut rng = simulation_rng(1);
    let theta = theta_star(D, 1.0, true, &mut rng).unwrap();
    let g = pl_groups(n(), K, &theta, &mut rng).unwrap();
    let y = g.choices();
    Data { x: g.x, y, theta }
}

/// Sum of the buffer in 8 independent lanes, chunked over rayon (the bandwidth baseline).
fn stream_read(x: &[f64]) -> f64 {
    use rayon::prelude::*;
    x.par_chunks(1 << 17)
        .map(|c| {
            let mut acc = [0.0f64; 8];
            let it = c.chunks_exact(8);
            let tail: f64 = it.remainder().iter().sum();
            for v in it {
                for k in 0..8 {
                    acc[k] += v[k];
                }
            }
            acc.iter().sum::<f64>() + tail
        })
        .sum()
}

fn options(solver: SolverKind) -> FitOptions<GroupLossSpec> {
    let mut o = FitOptions::new(GroupLossSpec::PlTop1, FeasibleSet::theta_b(10.0).unwrap());
    o.solver = solver.into();
    o
}

fn bench(c: &mut Criterion) {
    let dt = data();
    let n = n();
    let view = GroupView::new(&dt.x, n, K, D, GroupLabels::Choice(&dt.y), None).unwrap();
    let obj = GroupObjective::new(view, PlTop1).unwrap();
    let mut ev = obj.new_eval();
    let mut g = c.benchmark_group("pl_top1");
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Bytes((n * K * D * 8) as u64));
    g.bench_function("stream_read", |b| b.iter(|| black_box(stream_read(black_box(&dt.x)))));
    g.bench_function("value_grad", |b| b.iter(|| obj.evaluate(black_box(&dt.theta), &mut ev)));
    obj.evaluate(&dt.theta, &mut ev);
    let mut h = vec![0.0; D * D];
    g.bench_function("hessian", |b| b.iter(|| obj.hessian_into(&ev, black_box(&mut h))));
    g.measurement_time(Duration::from_secs(20));
    for solver in [SolverKind::Newton, SolverKind::Lbfgs] {
        let o = options(solver);
        g.bench_function(format!("fit_{}", solver.name()), |b| {
            b.iter(|| black_box(fit_kwise(view, &o).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

fn write_report() {
    let n = n();
    let ms = |id: &str| common::mean_ns(&format!("pl_top1/{id}")).map(|v| v / 1e6);
    let Some(stream) = ms("stream_read") else {
        return;
    };
    let gb = (n * K * D * 8) as f64 / 1e9;
    let dt = data();
    let view = GroupView::new(&dt.x, n, K, D, GroupLabels::Choice(&dt.y), None).unwrap();
    let mut out = String::new();
    out.push_str("# Plackett–Luce top-1 fit\n\n");
    out.push_str(&format!(
        "Machine: {}, {} logical CPUs, **shared** with other jobs while this ran (times are upper bounds). Date: {}.\n",
        common::cpu_name(),
        common::logical_cpus(),
        common::utc_date()
    ));
    out.push_str(&format!(
        "Command: `cargo bench --bench pl`. Data: `pl_groups`, n = {n}, K = {K}, d = {D} ({gb:.2} GB of features), ‖θ*‖ = 1, top-1 choices; loss `pl-top1` on Θ_B (B = 10, interior answer), from θ = 0, default tolerances (KKT residual ≤ max(1e-12, 1e-10·‖P∇F(0)‖)); all {} threads.\n\n",
        rayon::current_num_threads()
    ));
    out.push_str("| pass / fit | mean time (ms) | GB/s of features | ratio to stream read |\n|---|---|---|---|\n");
    for id in ["stream_read", "value_grad", "hessian"] {
        if let Some(t) = ms(id) {
            out.push_str(&format!(
                "| {id} | {t:.1} | {:.2} | {:.2} |\n",
                gb / (t / 1e3),
                stream / t
            ));
        }
    }
    out.push_str("\n| solver | mean time (s) | iterations | value+gradient passes | Hessians | line-search trials (O(nK)) | direction passes | KKT residual | tolerance | converged |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for solver in [SolverKind::Newton, SolverKind::Lbfgs] {
        let t = ms(&format!("fit_{}", solver.name()));
        let m = fit_kwise(view, &options(solver)).unwrap();
        let r = &m.report;
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.2e} | {:.2e} | {} |\n",
            solver.name(),
            t.map_or("–".into(), |t| format!("{:.2}", t / 1e3)),
            r.counts.iterations,
            r.counts.grad_evals,
            r.counts.hessian_evals,
            r.counts.line_search_evals,
            r.counts.direction_passes,
            r.certificate.kkt_residual,
            r.certificate.kkt_tol,
            r.converged()
        ));
    }
    let a = fit_kwise(view, &options(SolverKind::Newton)).unwrap();
    let b = fit_kwise(view, &options(SolverKind::Lbfgs)).unwrap();
    let diff = a
        .theta
        .iter()
        .zip(&b.theta)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    out.push_str(&format!("\nNewton vs L-BFGS: |Δθ|∞ = {diff:.2e}.\n"));
    common::write_result("pl.md", &out);
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        write_report();
    }
}

//! SGD throughput and the grid of Chowdhury, Zhou & Natarajan (2024) end to end, each with a
//! same-run baseline.
//!
//! `cargo bench --bench sgd` runs criterion and then writes `bench-results/sgd.md`:
//! * **one-pass SGD-RR** (Algorithm 1: batch 1, data order, projection onto `Θ_B` each step) at
//!   `n = 10⁶`, `d ∈ {5, 100}`, and **mini-batch** projected SGD (batch 256, one epoch, the fused
//!   gradient kernel) at `d = 100`, in samples·features per second, each next to a plain streaming
//!   read of the same feature buffer (the memory-bandwidth floor of one pass);
//! * the **replicated engine** (`R = 100` replications, `n = 10⁴`, `d = 5`) against `R` separate
//!   one-pass runs of the same problems;
//! * the **grid of Chowdhury, Zhou & Natarajan (2024)** (`d = 5`, `ε ∈ {0.1, 0.5, 1}`, `n ∈ {1000,
//!   …, 10000}`, 100 repetitions, the three estimators of
//!   [`privpref_experiments::sgd_grid_comparison`]) with nested samples (the default) and with an
//!   independent sample per `n`, on all threads (target < 0.2 s).
//!
//! Everything runs on one thread except the grid.

#[path = "../../../benches/common/mod.rs"]
mod common;

use criterion::{criterion_group, Criterion, Throughput};
use privpref::data::PairwiseView;
use privpref::feasible::FeasibleSet;
use privpref::loss::RrDebiased;
use privpref::objective::Objective;
use privpref::solver::sgd::{
    self, Averaging, ReplicaBlock, ReplicaOptions, ReplicaProblem, ReplicaSteps, Schedule, SgdOptions, StepRule,
};
use privpref::solver::Control;
use privpref_experiments::{sgd_grid_comparison, SgdGridConfig};
use std::hint::black_box;
use std::time::Duration;

/// Deterministic features in [−1, 1) (an LCG): the benches measure speed, not statistics.
fn fill(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn labels(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 3 == 0) as u8).collect()
}

/// Sum of the buffer in 8 independent lanes (vectorises; the bandwidth baseline).
fn stream_sum(x: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = x.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().sum();
    for c in chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    acc.iter().sum::<f64>() + tail
}

const N: usize = 1_000_000;

fn bench_single(c: &mut Criterion) {
    let loss = RrDebiased::new(1.0).unwrap();
    let set = FeasibleSet::theta_b(2.0).unwrap();
    let mut seq = Control::default();
    seq.par = privpref::par::Par::Seq;
    for d in [5usize, 100] {
        let x = fill(N * d, d as u64);
        let y = labels(N);
        let view = PairwiseView::new(&x, N, d, &y, None).unwrap();
        let obj = Objective::new(view, loss);
        let mut g = c.benchmark_group(format!("sgd_d{d}"));
        g.throughput(Throughput::Elements((N * d) as u64));
        g.sample_size(10);
        g.warm_up_time(Duration::from_secs(1));
        g.measurement_time(Duration::from_secs(4));
        g.bench_function("stream_sum", |b| b.iter(|| black_box(stream_sum(black_box(&x)))));
        g.bench_function("one_pass", |b| {
            b.iter(|| black_box(sgd::one_pass(&obj, &set, None, StepRule::InvT(1.0), Averaging::Last).unwrap()))
        });
        if d == 100 {
            let mut opts = SgdOptions::default();
            opts.step = StepRule::Const(0.05);
            opts.batch = 256;
            g.bench_function("minibatch_256", |b| {
                b.iter(|| black_box(sgd::solve(&obj, &set, None, &opts, &seq).unwrap()))
            });
        }
        g.finish();
    }
}

const REP_N: usize = 10_000;
const REP_D: usize = 5;
const REP_R: usize = 100;

fn bench_replicated(c: &mut Criterion) {
    let (n, d, r) = (REP_N, REP_D, REP_R);
    let loss = RrDebiased::new(1.0).unwrap();
    let set = FeasibleSet::theta_b(2.0).unwrap();
    let x = fill(n * d * r, 7);
    let y: Vec<u8> = (0..n * r).map(|i| ((i * 7) % 3 == 0) as u8).collect();
    let blk = ReplicaBlock::new(&x, &y, n, d, r).unwrap();
    let prob = ReplicaProblem {
        loss,
        set,
        ridge: 0.0,
        linear_term: None,
    };
    let opts = ReplicaOptions::new(ReplicaSteps::Shared(Schedule::Const(0.1)));
    let mut seq = Control::default();
    seq.par = privpref::par::Par::Seq;
    // The same R problems as separate row-major datasets, solved one by one.
    let singles: Vec<(Vec<f64>, Vec<u8>)> = (0..r)
        .map(|q| {
            let xs: Vec<f64> = (0..n * d).map(|i| x[i * r + q]).collect();
            let ys: Vec<u8> = (0..n).map(|t| y[t * r + q]).collect();
            (xs, ys)
        })
        .collect();
    let mut g = c.benchmark_group("replicated");
    g.throughput(Throughput::Elements((n * d * r) as u64));
    g.sample_size(20);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("block_R100", |b| {
        b.iter(|| black_box(sgd::replicated::run(&blk, &prob, &opts, &seq).unwrap()))
    });
    g.bench_function("separate_R100", |b| {
        b.iter(|| {
            for (xs, ys) in &singles {
                let view = PairwiseView::new(xs, n, d, ys, None).unwrap();
                let obj = Objective::new(view, loss);
                black_box(sgd::one_pass(&obj, &set, None, StepRule::Const(0.1), Averaging::Last).unwrap());
            }
        })
    });
    g.finish();
}

fn bench_grid(c: &mut Criterion) {
    let mut g = c.benchmark_group("sgd_grid");
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(6));
    let nested = SgdGridConfig::default();
    let indep = SgdGridConfig {
        nested: false,
        ..SgdGridConfig::default()
    };
    g.bench_function("nested", |b| {
        b.iter(|| black_box(sgd_grid_comparison(&nested).unwrap()))
    });
    g.bench_function("independent", |b| {
        b.iter(|| black_box(sgd_grid_comparison(&indep).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench_single, bench_replicated, bench_grid);

fn mean_ns_of(group: &str, func: &str) -> Option<f64> {
    common::mean_ns(&format!("{group}/{func}"))
}

fn write_summary() {
    let (cpu, threads, date) = (common::cpu_name(), common::logical_cpus(), common::utc_date());
    let mut t = format!(
        "# SGD throughput and the grid of Chowdhury, Zhou & Natarajan (2024)\n\nMachine: {cpu}, {threads} logical CPUs. Date: {date}.\n\
         Command: `cargo bench --bench sgd`. Loss: debiased RR (ε = 1) on `Θ_B` (B = 2), projection every step.\n\n\
         ## Single runs (one thread), n = 10⁶\n\n\
         Ratio = time of a plain streaming read of the same feature buffer / time of the SGD pass (same run).\n\n\
         | d | run | mean time (ms) | samples·features/s | ns per sample | ratio to stream |\n|---|---|---|---|---|---|\n"
    );
    for d in [5usize, 100] {
        let group = format!("sgd_d{d}");
        let stream = mean_ns_of(&group, "stream_sum");
        for f in ["stream_sum", "one_pass", "minibatch_256"] {
            if let Some(ns) = mean_ns_of(&group, f) {
                let ratio = stream.map(|s| format!("{:.2}", s / ns)).unwrap_or_else(|| "–".into());
                t += &format!(
                    "| {d} | {f} | {:.1} | {:.2e} | {:.2} | {ratio} |\n",
                    ns / 1e6,
                    (N * d) as f64 / (ns * 1e-9),
                    ns / N as f64
                );
            }
        }
    }
    t += &format!(
        "\n## Replicated engine (one thread): R = {REP_R} replications, n = {REP_N}, d = {REP_D}, constant step\n\n\
         | run | mean time (ms) | samples·features/s | speed-up vs separate runs |\n|---|---|---|---|\n"
    );
    let sep = mean_ns_of("replicated", "separate_R100");
    for f in ["block_R100", "separate_R100"] {
        if let Some(ns) = mean_ns_of("replicated", f) {
            let su = sep.map(|s| format!("{:.2}", s / ns)).unwrap_or_else(|| "–".into());
            t += &format!(
                "| {f} | {:.2} | {:.2e} | {su} |\n",
                ns / 1e6,
                (REP_N * REP_D * REP_R) as f64 / (ns * 1e-9)
            );
        }
    }
    t += &format!(
        "\n## The grid of Chowdhury, Zhou & Natarajan (2024) end to end ({threads} threads)\n\n\
         d = 5, ε ∈ {{0.1, 0.5, 1}}, n ∈ {{1000, 2000, 4000, 6000, 8000, 10000}}, 100 repetitions, three \
         estimators (local SGD-RR, objective perturbation by SGD, MLE by SGD): 4200 estimates (7 per n and repetition), \
         data generation included; nested samples read the MLE and local SGD-RR of the smaller n off checkpoints of one pass. Target < 0.2 s.\n\n| samples | mean time (s) |\n|---|---|\n"
    );
    for f in ["nested", "independent"] {
        if let Some(ns) = mean_ns_of("sgd_grid", f) {
            t += &format!("| {f} | {:.3} |\n", ns / 1e9);
        }
    }
    common::write_result("sgd.md", &t);
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        write_summary();
    }
}

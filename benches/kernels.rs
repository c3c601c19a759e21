//! Fused value+gradient pass vs. a plain streaming read of the same buffer (n = 1e6, d = 100,
//! f64, 800 MB), on 1 and 2 threads, measured in the same run.
//!
//! `cargo bench --bench kernels` runs criterion and then writes
//! `bench-results/kernels.md` with GB/s and the fused/stream ratio (target ≥ 0.8).
//! Set `PRIVPREF_BENCH_N` / `PRIVPREF_BENCH_D` to change the shape.

mod common;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use privpref::kernels::{self, Rows};
use privpref::loss::{Logistic, RrDebiased};
use privpref::par::Par;
use std::hint::black_box;
use std::time::Duration;

fn shape() -> (usize, usize) {
    let get = |k: &str, dflt: usize| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(dflt);
    (get("PRIVPREF_BENCH_N", 1_000_000), get("PRIVPREF_BENCH_D", 100))
}

struct Data {
    x: Vec<f64>,
    y: Vec<u8>,
    theta: Vec<f64>,
    n: usize,
    d: usize,
}

fn data() -> Data {
    let (n, d) = shape();
    // Cheap deterministic fill (an LCG): the bench measures memory traffic, not statistics.
    let mut s = 0x9E3779B97F4A7C15u64;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
    let y: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
    let theta: Vec<f64> = (0..d).map(|j| 0.1 * ((j % 7) as f64 - 3.0)).collect();
    Data { x, y, theta, n, d }
}

fn bench(c: &mut Criterion) {
    let dat = data();
    let bytes = (dat.x.len() * 8) as u64;
    let rows = Rows {
        x: &dat.x,
        d: dat.d,
        y: &dat.y,
        w: None,
    };
    let mut scores = vec![0.0; dat.n];
    let mut grad = vec![0.0; dat.d];
    let deb = RrDebiased::new(1.0).unwrap();
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut g = c.benchmark_group(format!("pass_t{threads}"));
        g.throughput(Throughput::Bytes(bytes));
        g.sample_size(20);
        g.warm_up_time(Duration::from_secs(1));
        g.measurement_time(Duration::from_secs(4));
        g.bench_function(BenchmarkId::new("stream_sum", "f64"), |b| {
            b.iter(|| pool.install(|| black_box(kernels::stream_sum(&dat.x, dat.d, Par::Rayon))))
        });
        g.bench_function(BenchmarkId::new("value_grad_mle", "f64"), |b| {
            b.iter(|| {
                pool.install(|| {
                    black_box(kernels::value_grad(
                        rows,
                        &Logistic,
                        &dat.theta,
                        &mut scores,
                        &mut grad,
                        Par::Rayon,
                    ))
                })
            })
        });
        g.bench_function(BenchmarkId::new("value_grad_debiased", "f64"), |b| {
            b.iter(|| {
                pool.install(|| {
                    black_box(kernels::value_grad(
                        rows,
                        &deb,
                        &dat.theta,
                        &mut scores,
                        &mut grad,
                        Par::Rayon,
                    ))
                })
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);

fn write_summary() {
    let (n, d) = shape();
    let gb = (n * d * 8) as f64 / 1e9;
    let mut out = String::new();
    out.push_str("| threads | pass | mean time (ms) | GB/s | ratio to stream |\n|---|---|---|---|---|\n");
    for t in [1, 2] {
        let group = format!("pass_t{t}");
        let Some(base) = common::mean_ns(&format!("{group}/stream_sum/f64")) else {
            return;
        };
        for f in ["stream_sum", "value_grad_mle", "value_grad_debiased"] {
            if let Some(ns) = common::mean_ns(&format!("{group}/{f}/f64")) {
                out.push_str(&format!(
                    "| {t} | {f} | {:.2} | {:.1} | {:.2} |\n",
                    ns / 1e6,
                    gb / (ns / 1e9),
                    base / ns
                ));
            }
        }
    }
    let (cpu, date) = (common::cpu_name(), common::utc_date());
    let text = format!(
        "# Fused value+gradient pass vs. streaming read\n\nMachine: {cpu}, {} logical CPUs. Date: {date}.\nCommand: `cargo bench --bench kernels` (n = {n}, d = {d}, f64, X = {gb:.2} GB; SIMD level chosen at run time by pulp).\n\nRatio = stream-read time / pass time over the same buffer, same run (target ≥ 0.8).\n\n{out}",
        common::logical_cpus()
    );
    common::write_result("kernels.md", &text);
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        write_summary();
    }
}

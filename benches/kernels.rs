//! Fused value+gradient pass vs. a plain streaming read of the same buffer (n = 1e6, d = 100,
//! f64, 800 MB), on 1 and 2 threads, measured in the same run.
//!
//! `cargo bench --bench kernels` runs criterion and then writes
//! `bench-results/kernels.md` with GB/s and the fused pass's ratios to a streaming read of the
//! same buffer and to STREAM triad bandwidth (targets ≥ 0.8), and the paired ratio of the pass
//! on `f32` storage to the pass on `f64` storage (target ≤ 0.6). A section of the old file
//! headed `## Earlier runs` is kept at the end of the new one.
//! Set `PRIVPREF_BENCH_N` / `PRIVPREF_BENCH_D` to change the shape.

mod common;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use privpref::data::Features;
use privpref::kernels::{self, Rows};
use privpref::loss::{Logistic, RrDebiased};
use privpref::par::Par;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

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
    let rows = Rows::new(Features::F64(&dat.x), dat.d, &dat.y, None);
    let x32: Vec<f32> = dat.x.iter().map(|&v| v as f32).collect();
    let rows32 = Rows::new(Features::F32(&x32), rows.d, rows.y, rows.w);
    let mut scores = vec![0.0; dat.n];
    let mut grad = vec![0.0; dat.d];
    let deb = RrDebiased::new(1.0).unwrap();
    // STREAM triad arrays, each as large as X (a = b + s·c; 24 bytes per element counted).
    let mut ta = vec![0.0; dat.x.len()];
    let tb = dat.x.clone();
    let tc: Vec<f64> = (0..dat.x.len()).map(|i| (i % 7) as f64).collect();
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
        g.bench_function(BenchmarkId::new("stream_triad", "f64"), |b| {
            b.iter(|| pool.install(|| common::stream::triad(black_box(&mut ta), &tb, &tc, 3.0)))
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
        g.bench_function(BenchmarkId::new("value_grad_mle_f32data", "f64"), |b| {
            b.iter(|| {
                pool.install(|| {
                    black_box(kernels::value_grad(
                        rows32,
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
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        let paired = paired_ratios(&dat, rows, rows32, &deb, &mut scores, &mut grad);
        eprintln!("{paired}");
        let _ = PAIRED.set(paired);
    }
}

/// The paired-ratio table of the summary (filled by [`bench`]).
static PAIRED: OnceLock<String> = OnceLock::new();

/// Pairs per thread count in [`paired_ratios`].
const PAIRS: usize = 21;

/// Streaming read and fused passes alternated, one pass each, [`PAIRS`] times per thread count;
/// the ratio `t_stream / t_pass` of each pair, summarised by its median and range. Criterion
/// times each function in its own 4-second block, so a drift of the shared host between
/// blocks moves its ratios; a pair's two passes run milliseconds apart. In the same loop, the
/// `mle` pass on `f32` storage (`rows32`) right after the one on `f64` storage: the ratio
/// `t_f32 / t_f64` of each pair (a second table).
fn paired_ratios(
    dat: &Data,
    rows: Rows<'_>,
    rows32: Rows<'_>,
    deb: &RrDebiased,
    scores: &mut [f64],
    grad: &mut [f64],
) -> String {
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut out = String::from("| threads | pass | median of t_stream / t_pass | min | max |\n|---|---|---|---|---|\n");
    let mut f32_table = String::from("| threads | median of t_f32 / t_f64 | min | max |\n|---|---|---|---|\n");
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let (mut mle, mut debr, mut f32r) = (Vec::new(), Vec::new(), Vec::new());
        pool.install(|| {
            let time = |f: &mut dyn FnMut()| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            };
            for pair in 0..=PAIRS {
                let ts = time(&mut || {
                    black_box(kernels::stream_sum(&dat.x, dat.d, Par::Rayon));
                });
                let tm = time(&mut || {
                    black_box(kernels::value_grad(
                        rows,
                        &Logistic,
                        &dat.theta,
                        scores,
                        grad,
                        Par::Rayon,
                    ));
                });
                let tf = time(&mut || {
                    black_box(kernels::value_grad(
                        rows32,
                        &Logistic,
                        &dat.theta,
                        scores,
                        grad,
                        Par::Rayon,
                    ));
                });
                let td = time(&mut || {
                    black_box(kernels::value_grad(rows, deb, &dat.theta, scores, grad, Par::Rayon));
                });
                // The first pair warms the pool and the pages up.
                if pair > 0 {
                    mle.push(ts / tm);
                    debr.push(ts / td);
                    f32r.push(tf / tm);
                }
            }
        });
        for (name, v) in [("value_grad_mle", &mut mle), ("value_grad_debiased", &mut debr)] {
            let (lo, hi) = (
                v.iter().copied().fold(f64::INFINITY, f64::min),
                v.iter().copied().fold(0.0, f64::max),
            );
            out.push_str(&format!(
                "| {threads} | {name} | {:.2} | {lo:.2} | {hi:.2} |\n",
                median(v)
            ));
        }
        let (lo, hi) = (
            f32r.iter().copied().fold(f64::INFINITY, f64::min),
            f32r.iter().copied().fold(0.0, f64::max),
        );
        f32_table.push_str(&format!(
            "| {threads} | {:.3} | {lo:.3} | {hi:.3} |\n",
            median(&mut f32r)
        ));
    }
    format!(
        "{out}\nPaired f32/f64, same loop: the `mle` pass on the f32 copy of X (`value_grad_mle_f32data`) right after the one on f64 X (`value_grad_mle`), {PAIRS} pairs per thread count; ratio of times per pair (target ≤ 0.6).\n\n{f32_table}"
    )
}

criterion_group!(benches, bench);

fn write_summary() {
    let (n, d) = shape();
    let gb = (n * d * 8) as f64 / 1e9;
    let mut out = String::new();
    out.push_str(
        "| threads | pass | mean time (ms) | GB/s | ratio to stream read | ratio to STREAM triad GB/s |\n|---|---|---|---|---|---|\n",
    );
    for t in [1, 2] {
        let group = format!("pass_t{t}");
        let Some(base) = common::mean_ns(&format!("{group}/stream_sum/f64")) else {
            return;
        };
        // Triad moves 3 arrays of X's size (24 bytes per element, as STREAM counts).
        let triad_gbs = common::mean_ns(&format!("{group}/stream_triad/f64")).map(|ns| 3.0 * gb / (ns / 1e9));
        for f in [
            "stream_sum",
            "stream_triad",
            "value_grad_mle",
            "value_grad_debiased",
            "value_grad_mle_f32data",
        ] {
            if let Some(ns) = common::mean_ns(&format!("{group}/{f}/f64")) {
                // Bytes actually read: X in f64 (f32 for the f32-data pass: half).
                let bytes = match f {
                    "stream_triad" => 3.0 * gb,
                    "value_grad_mle_f32data" => gb / 2.0,
                    _ => gb,
                };
                let gbs = bytes / (ns / 1e9);
                // Ratio of bandwidths (bytes read per second), so the f32 pass is compared on
                // the bytes it reads.
                let read = if f == "stream_triad" {
                    "–".to_string()
                } else {
                    format!("{:.2}", gbs / (gb / (base / 1e9)))
                };
                let tri = triad_gbs
                    .map(|tg| format!("{:.2}", gbs / tg))
                    .unwrap_or_else(|| "–".into());
                out.push_str(&format!(
                    "| {t} | {f} | {:.2} | {gbs:.1} | {read} | {tri} |\n",
                    ns / 1e6
                ));
            }
        }
    }
    let (cpu, date) = (common::cpu_name(), common::utc_date());
    let text = format!(
        "# Fused value+gradient pass vs. streaming read\n\nMachine: {cpu}, {} logical CPUs. Date: {date}.\nCommand: `cargo bench --bench kernels` (n = {n}, d = {d}, f64, X = {gb:.2} GB; SIMD level chosen at run time by pulp).\n\nRatios, same run: pass GB/s / stream-read GB/s over the same buffer (target ≥ 0.8), and pass GB/s / STREAM-triad GB/s with triad arrays as large as X (target ≥ 0.8). `value_grad_mle_f32data`: the same pass on the f32 copy of X (half the bytes, f64 accumulation; compare its time with `value_grad_mle`).\n\n{out}{paired}",
        common::logical_cpus(),
        paired = PAIRED
            .get()
            .map(|t| format!(
                "\nPaired ratios, same run after the criterion groups: the streaming read and the two fused passes alternated, one pass each, {PAIRS} times per thread count (ratio of times, i.e. of GB/s, per pair; a drift of the shared host between criterion's 4-second blocks does not enter).\n\n{t}"
            ))
            .unwrap_or_default()
    );
    // Earlier runs recorded by hand at the end of the file are kept.
    let earlier = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/bench-results/kernels.md"))
        .ok()
        .and_then(|old| old.find("\n## Earlier runs").map(|i| old[i..].to_string()))
        .unwrap_or_default();
    common::write_result("kernels.md", &format!("{text}{earlier}"));
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        write_summary();
    }
}

//! STREAM-style memory bandwidth (copy, sum, triad) over 512 MiB arrays (1.5 GiB for triad), on
//! 1 and 2 threads: the floor every kernel of this crate is reported against.
//!
//! `cargo bench --bench stream` runs criterion and writes `bench-results/stream.md` (GB/s as
//! STREAM counts bytes: copy 16, sum 8, triad 24 per element). `PRIVPREF_STREAM_MIB` changes
//! the array size.

mod common;

use criterion::{criterion_group, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

fn len() -> usize {
    let mib = std::env::var("PRIVPREF_STREAM_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512usize);
    mib * (1 << 20) / 8
}

fn bench(c: &mut Criterion) {
    let n = len();
    let mut a = vec![0.5; n];
    let b: Vec<f64> = (0..n).map(|i| (i % 1000) as f64 * 1e-3).collect();
    let cc: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut g = c.benchmark_group(format!("stream_t{threads}"));
        g.sample_size(10);
        g.warm_up_time(Duration::from_secs(1));
        g.measurement_time(Duration::from_secs(4));
        g.throughput(Throughput::Bytes((16 * n) as u64));
        g.bench_function("copy", |bch| {
            bch.iter(|| pool.install(|| common::stream::copy(black_box(&mut a), black_box(&b))))
        });
        g.throughput(Throughput::Bytes((8 * n) as u64));
        g.bench_function("sum", |bch| {
            bch.iter(|| pool.install(|| black_box(common::stream::sum(black_box(&b)))))
        });
        g.throughput(Throughput::Bytes((24 * n) as u64));
        g.bench_function("triad", |bch| {
            bch.iter(|| pool.install(|| common::stream::triad(black_box(&mut a), black_box(&b), black_box(&cc), 3.0)))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);

fn write_summary() {
    let n = len();
    let mut t = format!(
        "# STREAM-style memory bandwidth\n\nMachine: {}, {} logical CPUs. Date: {}.\n\
         Command: `cargo bench --bench stream` (arrays of {} MiB, f64; bytes counted as STREAM does: \
         copy 16, sum 8, triad 24 per element).\n\n| threads | kernel | mean time (ms) | GB/s |\n|---|---|---|---|\n",
        common::cpu_name(),
        common::logical_cpus(),
        common::utc_date(),
        (n * 8) >> 20
    );
    for threads in [1, 2] {
        for (k, bytes) in [("copy", 16), ("sum", 8), ("triad", 24)] {
            if let Some(ns) = common::mean_ns(&format!("stream_t{threads}/{k}")) {
                t += &format!(
                    "| {threads} | {k} | {:.1} | {:.1} |\n",
                    ns / 1e6,
                    (bytes * n) as f64 / ns
                );
            }
        }
    }
    common::write_result("stream.md", &t);
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        write_summary();
    }
}

//! Rough per-pass timings (best of 15) for the kernels on synthetic data — a development aid;
//! the recorded benchmarks are in `benches/`. Usage: `kernel_timing [n] [d] [threads] [f32]`
//! (`f32`: the passes on the f32 copy of the features; the streaming read stays on f64).
use privpref::data::Features;
use privpref::kernels::{self, Rows};
use privpref::loss::{Logistic, Loss, LossOut};
use privpref::par::Par;
use std::time::Instant;
fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let d: usize = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let x: Vec<f64> = (0..n * d)
        .map(|i| ((i * 2654435761) % 1000) as f64 / 1000.0 - 0.5)
        .collect();
    let y: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
    let th: Vec<f64> = (0..d).map(|j| 0.01 * j as f64).collect();
    let f32_data = std::env::args().nth(4).is_some_and(|a| a == "f32");
    let x32: Vec<f32> = if f32_data {
        x.iter().map(|&v| v as f32).collect()
    } else {
        Vec::new()
    };
    let rows = if f32_data {
        Rows::new(Features::F32(&x32), d, &y, None)
    } else {
        Rows::new(Features::F64(&x), d, &y, None)
    };
    let mut sc = vec![0.0; n];
    let mut g = vec![0.0; d];
    let threads: usize = std::env::args().nth(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let time = |name: &str, f: &mut dyn FnMut()| {
            let mut best = f64::INFINITY;
            for _ in 0..15 {
                let t = Instant::now();
                f();
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!(
                "{name:>12}: {:8.3} ms  {:6.1} ns/row",
                best * 1e3,
                best * 1e9 / n as f64
            );
        };
        time("stream", &mut || {
            std::hint::black_box(kernels::stream_sum(&x, d, Par::Rayon));
        });
        time("matvec", &mut || kernels::matvec(rows, &th, &mut sc, Par::Rayon));
        time("value_grad", &mut || {
            std::hint::black_box(kernels::value_grad(rows, &Logistic, &th, &mut sc, &mut g, Par::Rayon));
        });
        let mut hm = vec![0.0; d * d];
        time("hessian", &mut || {
            kernels::hessian(rows, &Logistic, &sc, &mut hm, Par::Rayon);
        });
        let mut g2 = vec![0.0; d];
        let mut hf = vec![0.0; d * d];
        time("vg+hessian", &mut || {
            std::hint::black_box(kernels::value_grad_hessian(
                rows,
                &Logistic,
                &th,
                &mut sc,
                &mut g2,
                &mut hf,
                Par::Rayon,
            ));
        });
        time("hess_vec", &mut || {
            kernels::hess_vec(rows, &Logistic, &sc, &th, &mut g, Par::Rayon)
        });
        let mut v = vec![0.0; n];
        let mut g1 = vec![0.0; n];
        time("loss_only", &mut || {
            Logistic.eval_batch(
                &sc,
                &y,
                LossOut {
                    value: Some(&mut v),
                    d1: Some(&mut g1),
                    d2: None,
                },
            )
        });
        time("loss_sum", &mut || {
            std::hint::black_box(kernels::loss_sum(rows, &Logistic, &sc, None, 0.0, Par::Rayon));
        });
    });
}

//! Repeated fused value+gradient passes (for profiling). Usage: `vg_only [n] [d] [reps]`.
use privpref::kernels::{self, Rows};
use privpref::loss::Logistic;
use privpref::par::Par;
fn main() {
    let a = |i: usize, d: usize| std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (n, d, reps) = (a(1, 1_000_000), a(2, 100), a(3, 30));
    let x: Vec<f64> = (0..n * d)
        .map(|i| ((i * 2654435761) % 1000) as f64 / 1000.0 - 0.5)
        .collect();
    let y: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
    let th: Vec<f64> = (0..d).map(|j| 0.01 * j as f64).collect();
    let rows = Rows {
        x: &x,
        d,
        y: &y,
        w: None,
    };
    let (mut sc, mut g) = (vec![0.0; n], vec![0.0; d]);
    let mut s = 0.0;
    for _ in 0..reps {
        s += kernels::value_grad(rows, &Logistic, &th, &mut sc, &mut g, Par::Seq);
    }
    println!("{s}");
}

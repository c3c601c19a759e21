use privpref::kernels::{self, Rows};
use privpref::loss::Logistic;
use privpref::par::Par;
fn main() {
    let n = 100_000;
    let d: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5);
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
    let mut sc = vec![0.0; n];
    let mut g = vec![0.0; d];
    let mut s = 0.0;
    for _ in 0..300 {
        s += kernels::value_grad(rows, &Logistic, &th, &mut sc, &mut g, Par::Seq);
    }
    println!("{s}");
}

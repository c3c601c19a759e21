//! Reference rate of faer's triangular XᵀX on this machine (development aid).
use faer::linalg::matmul::triangular::{matmul as tri, BlockStructure as BS};
use faer::{Accum, MatMut, MatRef, Par};
use std::time::Instant;
fn main() {
    let (n, d) = (1_000_000usize, 100usize);
    let x: Vec<f64> = (0..n * d).map(|i| ((i * 7919) % 1000) as f64 * 1e-3).collect();
    let a = MatRef::from_row_major_slice(&x, n, d);
    let mut h = vec![0.0; d * d];
    for (name, blk) in [("whole", n), ("blocks 2621", 2621), ("blocks 20000", 20000)] {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = Instant::now();
            let mut r0 = 0;
            while r0 < n {
                let r1 = (r0 + blk).min(n);
                let ab = a.subrows(r0, r1 - r0);
                let hm = MatMut::from_column_major_slice_mut(&mut h, d, d);
                tri(
                    hm,
                    BS::TriangularLower,
                    Accum::Add,
                    ab.transpose(),
                    BS::Rectangular,
                    ab,
                    BS::Rectangular,
                    1.0,
                    Par::Seq,
                );
                r0 = r1;
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{name}: {:.1} ms, {:.1} GF/s (n·d(d+1) flops)",
            best * 1e3,
            (n * d * (d + 1)) as f64 / best / 1e9
        );
    }
}

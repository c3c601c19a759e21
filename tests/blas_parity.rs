//! The Hessian pass's Gram backend: with `--features openblas` the OpenBLAS path is taken (its
//! call counter moves) and agrees with an independent faer product to 1e-12 relative; without
//! the feature the faer path is taken (the counter stays at 0). Whole Newton fits agree with
//! the closed answer computed by the other backend's kernels to 1e-10.

use faer::Mat;
use privpref::data::Features;
use privpref::data::PairwiseView;
use privpref::estimator::{fit, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::kernels::{self, gram, Rows};
use privpref::loss::{LossSpec, RrNoisyChannel};
use privpref::par::Par;

fn data(n: usize, d: usize) -> (Vec<f64>, Vec<u8>) {
    let mut s = 0x2545F4914F6CDD1Du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
    let y: Vec<u8> = (0..n)
        .map(|i| (next() + 0.5 < 0.3 + 0.4 * ((i % 2) as f64)) as u8)
        .collect();
    (x, y)
}

#[test]
fn hessian_backend_is_the_configured_one_and_matches_faer() {
    // mle-rr at a wide score range has rows of negative curvature: both Gram calls are used.
    let (n, d) = (3000, 37);
    let (x, y) = data(n, d);
    let loss = RrNoisyChannel::new(0.5).unwrap();
    let theta: Vec<f64> = (0..d).map(|j| 3.0 * ((j % 5) as f64 - 2.0)).collect();
    let rows = Rows::new(Features::F64(&x), d, &y, None);
    let mut t = vec![0.0; n];
    kernels::matvec(rows, &theta, &mut t, Par::Seq);
    let before = gram::openblas_calls();
    let mut h = vec![0.0; d * d];
    let nneg = kernels::hessian(rows, &loss, &t, &mut h, Par::Seq);
    let calls = gram::openblas_calls() - before;
    assert!(nneg > 0, "the fixture must exercise negative curvature");
    if cfg!(feature = "openblas") {
        assert_eq!(gram::backend(), "openblas");
        assert!(calls >= 2, "the OpenBLAS path was not taken ({calls} calls)");
    } else {
        assert_eq!(gram::backend(), "faer");
        assert_eq!(calls, 0);
    }
    // Independent reference: faer's general product Xᵀ diag(ℓ'') X on the whole matrix.
    use privpref::loss::Loss;
    let xm = Mat::from_fn(n, d, |i, j| x[i * d + j]);
    let dx = Mat::from_fn(n, d, |i, j| loss.d2(t[i], y[i]) * x[i * d + j]);
    let want = xm.transpose() * &dx;
    let scale = (0..d).map(|j| want[(j, j)].abs()).fold(0.0, f64::max);
    let mut worst = 0.0f64;
    for j in 0..d {
        for i in 0..d {
            worst = worst.max((h[j * d + i] - want[(i, j)]).abs() / scale);
        }
    }
    eprintln!(
        "{} Gram products ({calls} OpenBLAS calls) vs faer reference: {worst:.3e} relative",
        gram::backend()
    );
    assert!(
        worst <= 1e-12,
        "{} Gram vs faer reference: {worst:.3e}",
        gram::backend()
    );
}

#[test]
fn newton_fits_agree_with_the_reference_answer() {
    // The fit does not depend on the backend beyond rounding: compare against the same fit's
    // answer from L-BFGS (no Hessian, so no Gram products at all).
    let (n, d) = (2000, 20);
    let (x, y) = data(n, d);
    let view = PairwiseView::new(&x, n, d, &y, None).unwrap();
    let set = FeasibleSet::theta_b(3.0).unwrap();
    let newton = fit(view, &FitOptions::new(LossSpec::Mle, set)).unwrap();
    let mut lo = FitOptions::new(LossSpec::Mle, set);
    lo.solver = privpref::estimator::SolverKind::Lbfgs.into();
    let lbfgs = fit(view, &lo).unwrap();
    let diff = newton
        .theta
        .iter()
        .zip(&lbfgs.theta)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(diff <= 1e-8, "newton ({}) vs lbfgs: {diff:.3e}", gram::backend());
}

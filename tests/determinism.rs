//! Results must not depend on the thread count: every pass reduces fixed row blocks in a fixed
//! tree, so 1, 2 and 8 threads give the same bits (DESIGN.md "Determinism and parallelism").

use privpref::data::Features;
use privpref::data::PairwiseView;
use privpref::feasible::FeasibleSet;
use privpref::kernels::{self, Rows};
use privpref::loss::{Logistic, Probit, RrDebiased, RrNoisyChannel};
use privpref::objective::{Eval, Objective};
use privpref::par::Par;
use privpref::solver::{newton, Control};

fn data(n: usize, d: usize) -> (Vec<f64>, Vec<u8>, Vec<f64>) {
    let mut s = 42u64;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let x: Vec<f64> = (0..n * d).map(|_| next() * 3.0).collect();
    let y: Vec<u8> = (0..n).map(|_| (next() > 0.1) as u8).collect();
    let w: Vec<f64> = (0..n).map(|_| (next() + 0.5) * 2.0).collect();
    (x, y, w)
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn kernels_are_bit_identical_across_thread_counts() {
    // ~15 MB of features: many blocks, so the parallel path really splits.
    let (n, d) = (50_000, 37);
    let (x, y, w) = data(n, d);
    let theta: Vec<f64> = (0..d).map(|j| 0.05 * (j as f64 - 18.0)).collect();
    let rows = Rows {
        x: Features::F64(&x),
        d,
        y: &y,
        w: Some(&w),
    };
    let run = |threads: usize| {
        in_pool(threads, || {
            let mut sc = vec![0.0; n];
            let mut g = vec![0.0; d];
            let v = kernels::value_grad(rows, &Logistic, &theta, &mut sc, &mut g, Par::Rayon);
            let mut h = vec![0.0; d * d];
            kernels::hessian(rows, &RrNoisyChannel::new(0.3).unwrap(), &sc, &mut h, Par::Rayon);
            let mut hv = vec![0.0; d];
            kernels::hess_vec(rows, &Logistic, &sc, &theta, &mut hv, Par::Rayon);
            let mut xs = vec![0.0; n];
            kernels::matvec(rows, &theta, &mut xs, Par::Rayon);
            let ls = kernels::loss_sum(&y, Some(&w), &Probit, &sc, Some(&xs), 0.3, Par::Rayon);
            (
                v.to_bits(),
                bits(&g),
                bits(&sc),
                bits(&h),
                bits(&hv),
                bits(&xs),
                ls.to_bits(),
            )
        })
    };
    let seq = {
        let mut sc = vec![0.0; n];
        let mut g = vec![0.0; d];
        let v = kernels::value_grad(rows, &Logistic, &theta, &mut sc, &mut g, Par::Seq);
        (v.to_bits(), bits(&g))
    };
    let r1 = run(1);
    assert_eq!((r1.0, r1.1.clone()), seq, "Par::Seq differs from Par::Rayon");
    for t in [2, 8] {
        assert!(r1 == run(t), "{t} threads differ from 1 thread");
    }
}

#[test]
fn newton_solve_is_bit_identical_across_thread_counts() {
    let (n, d) = (40_000, 12);
    let (x, y, w) = data(n, d);
    let view = PairwiseView::new(&x, n, d, &y, Some(&w)).unwrap();
    let solve = |threads: usize| {
        in_pool(threads, || {
            let obj = Objective::new(view, RrDebiased::new(0.7).unwrap());
            let r = newton::solve(&obj, &FeasibleSet::theta_b(0.5).unwrap(), None, &Control::default()).unwrap();
            assert!(r.converged());
            (bits(&r.theta), r.objective.to_bits(), r.iterations)
        })
    };
    let a = solve(1);
    assert_eq!(a, solve(2));
    assert_eq!(a, solve(8));
    // And the same evaluation gives the same bits twice.
    let obj = Objective::new(view, Logistic);
    let (mut e1, mut e2) = (Eval::new(n, d), Eval::new(n, d));
    obj.evaluate(&vec![0.1; d], &mut e1);
    obj.evaluate(&vec![0.1; d], &mut e2);
    assert_eq!(bits(&e1.grad), bits(&e2.grad));
}

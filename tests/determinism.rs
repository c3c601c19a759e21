//! Results must not depend on the thread count: every pass reduces fixed row blocks in a fixed
//! tree, so 1, 2 and 8 threads give the same bits (the determinism contract of `src/par.rs`).

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
    let rows = Rows::new(Features::F64(&x), d, &y, Some(&w));
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
            let ls = kernels::loss_sum(rows, &Probit, &sc, Some(&xs), 0.3, Par::Rayon);
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
            (bits(&r.theta), r.certificate.objective.to_bits(), r.counts.iterations)
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

/// The fused value + gradient + Hessian pass: its scores, value and gradient are the
/// bits of `value_grad`, its Hessian the bits of `hessian` at those scores, for every loss (with
/// negative curvature rows for `mle-rr`), f64 and f32 storage, with and without weights; and
/// all of it is bit-identical for 1, 2 and 8 threads. 21 MB of f64 features: 20 row blocks,
/// so the Hessian chunks (16) hold one or two blocks and the tree above them really forks.
#[test]
fn fused_value_grad_hessian_matches_the_separate_passes_bit_for_bit() {
    use privpref::loss::Loss;
    let (n, d) = (70_000, 37);
    let (x, y, w) = data(n, d);
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let theta: Vec<f64> = (0..d).map(|j| 0.08 * (j as f64 - 18.0)).collect();
    fn one<L: Loss>(rows: Rows<'_>, loss: &L, theta: &[f64], threads: usize) -> (Vec<u64>, Vec<u64>, Vec<u64>, usize) {
        in_pool(threads, || {
            let (n, d) = (rows.n(), rows.d);
            let mut sc = vec![0.0; n];
            let mut g = vec![0.0; d];
            let mut h = vec![0.0; d * d];
            let (v, nneg) = kernels::value_grad_hessian(rows, loss, theta, &mut sc, &mut g, &mut h, Par::Rayon);
            // The separate passes.
            let mut sc2 = vec![0.0; n];
            let mut g2 = vec![0.0; d];
            let v2 = kernels::value_grad(rows, loss, theta, &mut sc2, &mut g2, Par::Rayon);
            let mut h2 = vec![0.0; d * d];
            let nneg2 = kernels::hessian(rows, loss, &sc2, &mut h2, Par::Rayon);
            assert_eq!(v.to_bits(), v2.to_bits(), "{}: value", loss.name());
            assert_eq!(bits(&sc), bits(&sc2), "{}: scores", loss.name());
            assert_eq!(bits(&g), bits(&g2), "{}: gradient", loss.name());
            assert_eq!(bits(&h), bits(&h2), "{}: Hessian", loss.name());
            assert_eq!(nneg, nneg2);
            // Symmetric, finite.
            for i in 0..d {
                for j in 0..d {
                    assert_eq!(h[i * d + j].to_bits(), h[j * d + i].to_bits());
                }
            }
            assert!(h.iter().all(|v| v.is_finite()));
            let mut vg = bits(&g);
            vg.push(v.to_bits());
            (vg, bits(&sc), bits(&h), nneg)
        })
    }
    fn all_threads<L: Loss>(rows: Rows<'_>, loss: &L, theta: &[f64]) -> usize {
        let r1 = one(rows, loss, theta, 1);
        for t in [2, 8] {
            assert!(
                r1 == one(rows, loss, theta, t),
                "{}: {t} threads differ from 1",
                loss.name()
            );
        }
        r1.3
    }
    for features in [Features::F64(&x), Features::F32(&x32)] {
        for weights in [None, Some(&w[..])] {
            let rows = Rows::new(features, d, &y, weights);
            all_threads(rows, &Logistic, &theta);
            all_threads(rows, &Probit, &theta);
            all_threads(rows, &RrDebiased::new(0.7).unwrap(), &theta);
            let nneg = all_threads(rows, &RrNoisyChannel::new(0.3).unwrap(), &theta);
            assert!(nneg > 0, "mle-rr at these scores must have negative-curvature rows");
        }
    }
}

/// Newton on the pairwise objective reads `X` once per iteration: every Hessian comes from the
/// fused pass, and the fit is the one of the separate passes (same bits).
#[test]
fn newton_uses_the_fused_pass_for_every_hessian() {
    let (n, d) = (20_000, 9);
    let (x, y, w) = data(n, d);
    let view = PairwiseView::new(&x, n, d, &y, Some(&w)).unwrap();
    let obj = Objective::new(view, RrNoisyChannel::new(1.0).unwrap());
    let set = FeasibleSet::theta_b(0.8).unwrap();
    let r = newton::solve(&obj, &set, None, &Control::default()).unwrap();
    assert!(r.converged(), "{:?}", r.termination);
    assert!(r.counts.hessian_evals >= 2);
    assert_eq!(r.counts.fused_evals, r.counts.hessian_evals, "{r:?}");
    assert_eq!(
        r.data_passes(),
        r.counts.grad_evals
            + r.counts.direction_passes
            + r.counts.compensated_evals
            + r.counts.scale_passes
            + r.counts.setup_passes
    );
    // The fused evaluation is the separate one, bit for bit.
    let (mut e1, mut e2) = (Eval::new(n, d), Eval::new(n, d));
    let (mut h1, mut h2) = (vec![0.0; d * d], vec![0.0; d * d]);
    let k1 = obj.evaluate_with_hessian(&r.theta, &mut e1, &mut h1);
    obj.evaluate(&r.theta, &mut e2);
    let k2 = obj.hessian_into(&e2, &mut h2);
    assert_eq!(k1, k2);
    assert_eq!(e1.value.to_bits(), e2.value.to_bits());
    assert_eq!(bits(&e1.grad), bits(&e2.grad));
    assert_eq!(bits(&e1.scores), bits(&e2.scores));
    assert_eq!(bits(&h1), bits(&h2));
}

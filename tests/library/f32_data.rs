//! The f32 data path (`PairwiseView::new_f32`): the kernels widen the f32 values to f64 as they
//! load them and accumulate in f64, so a fit on f32 features gives the same bits as a fit on the same values
//! widened to f64, for every kernel and solver; and the answer differs from the fit on the
//! original f64 data only by the data's own rounding (checked against a bound).

use privpref::data::{Features, PairwiseView};
use privpref::estimator::{fit, FitOptions, Solver, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::kernels::{self, Rows};
use privpref::loss::{LossSpec, RrDebiased};
use privpref::mechanism::simulation_rng;
use privpref::par::Par;
use privpref::sim::{btl_pairs, theta_star};

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// BTL data in f64, its f32 rounding, and the rounding widened back to f64.
fn data(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f32>, Vec<f64>, Vec<u8>) {
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(seed)).unwrap();
    let p = btl_pairs(n, &theta, &mut simulation_rng(seed + 1)).unwrap();
    let x32: Vec<f32> = p.x.iter().map(|&v| v as f32).collect();
    let x64: Vec<f64> = x32.iter().map(|&v| f64::from(v)).collect();
    (p.x, x32, x64, p.y)
}

#[test]
fn kernels_give_the_bits_of_the_widened_data() {
    // d = 5 (scalar row kernels) and d = 37 (SIMD, with a tail); n spans several blocks.
    for (n, d) in [(20_000usize, 5usize), (9_000, 37)] {
        let (_, x32, x64, y) = data(n, d, 3);
        let r32 = Rows::new(Features::F32(&x32), d, &y, None);
        let r64 = Rows::new(Features::F64(&x64), r32.d, r32.y, r32.w);
        let theta: Vec<f64> = (0..d).map(|j| 0.3 * ((j % 5) as f64 - 2.0)).collect();
        let loss = RrDebiased::new(0.7).unwrap();
        let (mut s32, mut s64) = (vec![0.0; n], vec![0.0; n]);
        let (mut g32, mut g64) = (vec![0.0; d], vec![0.0; d]);
        for par in [Par::Seq, Par::Rayon] {
            let v32 = kernels::value_grad(r32, &loss, &theta, &mut s32, &mut g32, par);
            let v64 = kernels::value_grad(r64, &loss, &theta, &mut s64, &mut g64, par);
            assert_eq!(v32.to_bits(), v64.to_bits(), "value, d = {d}");
            assert_eq!(bits(&g32), bits(&g64), "gradient, d = {d}");
            assert_eq!(bits(&s32), bits(&s64), "scores, d = {d}");
            let (mut m32, mut m64) = (vec![0.0; n], vec![0.0; n]);
            kernels::matvec(r32, &theta, &mut m32, par);
            kernels::matvec(r64, &theta, &mut m64, par);
            assert_eq!(bits(&m32), bits(&m64), "matvec, d = {d}");
            let (mut h32, mut h64) = (vec![0.0; d], vec![0.0; d]);
            kernels::hess_vec(r32, &loss, &s32, &theta, &mut h32, par);
            kernels::hess_vec(r64, &loss, &s64, &theta, &mut h64, par);
            assert_eq!(bits(&h32), bits(&h64), "hess_vec, d = {d}");
            let (mut hh32, mut hh64) = (vec![0.0; d * d], vec![0.0; d * d]);
            kernels::hessian(r32, &loss, &s32, &mut hh32, par);
            kernels::hessian(r64, &loss, &s64, &mut hh64, par);
            assert_eq!(bits(&hh32), bits(&hh64), "hessian, d = {d}");
            let c32 = kernels::value_grad_compensated(r32, &loss, &theta, &mut g32, par);
            let c64 = kernels::value_grad_compensated(r64, &loss, &theta, &mut g64, par);
            assert_eq!(c32.to_bits(), c64.to_bits(), "compensated value, d = {d}");
            assert_eq!(bits(&g32), bits(&g64), "compensated gradient, d = {d}");
        }
    }
}

#[test]
fn every_solver_gives_the_bits_of_the_widened_data_and_the_f64_answer_to_rounding() {
    let (n, d) = (6000, 12);
    let (x, x32, x64, y) = data(n, d, 11);
    let v32 = PairwiseView::new_f32(&x32, n, d, &y, None).unwrap();
    let v64 = PairwiseView::new(&x64, n, d, &y, None).unwrap();
    let vorig = PairwiseView::new(&x, n, d, &y, None).unwrap();
    for solver in [SolverKind::Newton, SolverKind::Lbfgs, SolverKind::Sgd, SolverKind::Auto] {
        let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
        o.solver = match solver {
            // (The theory step is refused on this data as unstable: a constant step instead.)
            SolverKind::Sgd => {
                let mut s = privpref::solver::sgd::SgdOptions::default();
                s.step = privpref::solver::sgd::StepRule::Const(0.05);
                Solver::Sgd(s)
            }
            other => other.into(),
        };
        let a = fit(v32, &o).unwrap();
        let b = fit(v64, &o).unwrap();
        assert_eq!(bits(&a.theta), bits(&b.theta), "{solver:?}");
        assert_eq!(a.report.counts.iterations, b.report.counts.iterations, "{solver:?}");
        if solver == SolverKind::Newton {
            // Against the original f64 data: the data moved by ≤ 2⁻²⁴ relative per value, so
            // θ̂ moves by about that times the condition of the problem (here well below 1e-5).
            let c = fit(vorig, &o).unwrap();
            let diff = a
                .theta
                .iter()
                .zip(&c.theta)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f64::max);
            let rel_data = x.iter().zip(&x64).map(|(p, q)| ((p - q) / p).abs()).fold(0.0, f64::max);
            assert!(rel_data <= 6e-8, "{rel_data}");
            assert!(diff > 0.0 && diff < 1e-5, "f32 vs f64 answer: {diff:.3e}");
        }
    }
}

#[test]
fn f32_input_is_validated_like_f64() {
    let x = [1.0f32, f32::NAN, 0.0, 1.0];
    let e = PairwiseView::new_f32(&x, 2, 2, &[0, 1], None).unwrap_err().to_string();
    assert!(e.contains("row 0") && e.contains("column 1"), "{e}");
    let x = [1.0f32, 2.0, f32::INFINITY, 1.0];
    assert!(PairwiseView::new_f32(&x, 2, 2, &[0, 1], None).is_err());
    assert!(PairwiseView::new_f32(&x[..3], 2, 2, &[0, 1], None).is_err());
    assert!(PairwiseView::new_f32(&[1.0, 2.0], 1, 2, &[2], None).is_err());
}

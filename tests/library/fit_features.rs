//! `fit_features` (the feature validation taken inside the fit's first pass) against validating
//! first and fitting the view: the same bits for every solver, precision, weighting, scale and
//! loss, and the same error for every kind of bad input, whichever checks fail together.

use privpref::data::{Features, PairwiseView};
use privpref::estimator::{fit, fit_features, fit_privatized, fit_privatized_features, FitOptions, Solver};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{simulation_rng, RandomizedResponse};
use privpref::model::Fit;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::lbfgs::LbfgsOptions;
use privpref::solver::sgd::{SgdOptions, StepRule};
use privpref::Result;

fn data(n: usize, d: usize) -> privpref::data::PairwiseData {
    let theta = theta_star(d, 2.0, true, &mut simulation_rng(21)).unwrap();
    btl_pairs(n, &theta, &mut simulation_rng(22)).unwrap()
}

fn solvers() -> Vec<Solver> {
    vec![
        Solver::Newton,
        Solver::NewtonCg,
        Solver::Lbfgs(LbfgsOptions::default()),
        Solver::Auto(LbfgsOptions::default()),
        Solver::Sgd(SgdOptions::one_pass(StepRule::InvT(0.5))),
    ]
}

/// The outcome as comparable text: θ's bits and the report, or the error.
fn outcome(r: Result<Fit>) -> String {
    match r {
        Ok(f) => {
            let bits: Vec<u64> = f.theta.iter().map(|v| v.to_bits()).collect();
            format!(
                "{bits:?} {:?} {:?} {}",
                f.report.termination,
                f.report.certificate.kkt_residual.to_bits(),
                f.report.counts.iterations
            )
        }
        Err(e) => format!("error: {e}"),
    }
}

/// Both ways on `x` (as `f64`, and as `f32` when `f32` is set).
fn both(x: &[f64], n: usize, d: usize, y: &[u8], w: Option<&[f64]>, opts: &FitOptions, f32: bool) -> (String, String) {
    if f32 {
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let first = PairwiseView::new_f32(&x32, n, d, y, w).and_then(|v| fit(v, opts));
        let fused = fit_features(Features::F32(&x32), n, d, y, w, opts);
        (outcome(first), outcome(fused))
    } else {
        let first = PairwiseView::new(x, n, d, y, w).and_then(|v| fit(v, opts));
        let fused = fit_features(Features::F64(x), n, d, y, w, opts);
        (outcome(first), outcome(fused))
    }
}

#[test]
fn the_same_bits_as_validating_first() {
    // 40 000 × 24: several row blocks, so the scan is spread over the first pass's blocks.
    let dat = data(40_000, 24);
    let w: Vec<f64> = (0..dat.n).map(|i| 0.5 + (i % 7) as f64 * 0.25).collect();
    for (loss, radius) in [(LossSpec::Mle, 50.0), (LossSpec::DebiasedRr { eps: 1.0 }, 0.5)] {
        for solver in solvers() {
            for (weights, f32) in [(None, false), (Some(&w[..]), false), (None, true)] {
                let mut opts = FitOptions::new(loss, FeasibleSet::theta_b(radius).unwrap());
                opts.solver = solver;
                let (first, fused) = both(&dat.x, dat.n, dat.d, &dat.y, weights, &opts, f32);
                assert!(!first.starts_with("error"), "{first}");
                assert_eq!(
                    first,
                    fused,
                    "{loss:?} {solver:?} weights {} f32 {f32}",
                    weights.is_some()
                );
            }
        }
    }
}

#[test]
fn features_that_need_normalising_are_fitted_as_fit_does() {
    let dat = data(5_000, 8);
    for k in [40, -40, 300] {
        let s = 2f64.powi(k);
        let x: Vec<f64> = dat.x.iter().map(|v| v * s).collect();
        for solver in solvers() {
            let mut opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(50.0 / s).unwrap());
            opts.solver = solver;
            let (first, fused) = both(&x, dat.n, dat.d, &dat.y, None, &opts, false);
            assert!(!first.starts_with("error"), "2^{k}: {first}");
            assert_eq!(first, fused, "2^{k} {solver:?}");
        }
    }
}

#[test]
fn bad_features_give_the_error_of_the_view() {
    let dat = data(20_000, 16);
    let (n, d) = (dat.n, dat.d);
    let mut opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(5.0).unwrap());
    // Each kind of bad feature, first in the last row, then in the first.
    let cases: Vec<(usize, f64)> = vec![
        ((n - 1) * d + 3, f64::NAN),
        ((n - 1) * d + 3, f64::INFINITY),
        (5, f64::NEG_INFINITY),
        (n / 2 * d, f64::NAN),
        // Finite but out of scale: 2^460 among features of size 1 (typical exponent 0).
        (n / 3 * d + 1, 2f64.powi(460)),
    ];
    for (at, v) in cases {
        let mut x = dat.x.clone();
        x[at] = v;
        for solver in solvers() {
            opts.solver = solver;
            for f32 in [false, true] {
                if f32 && v.is_finite() {
                    continue; // out of f32's range
                }
                let (first, fused) = both(&x, n, d, &dat.y, None, &opts, f32);
                assert!(first.starts_with("error"), "{first}");
                assert_eq!(first, fused, "x[{at}] = {v} {solver:?} f32 {f32}");
            }
        }
    }
}

#[test]
fn the_features_error_comes_first_whatever_else_fails() {
    let dat = data(3_000, 6);
    let (n, d) = (dat.n, dat.d);
    let mut x = dat.x.clone();
    x[(n - 1) * d] = f64::NAN;
    let opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(5.0).unwrap());
    // A label out of range too.
    let mut y = dat.y.clone();
    y[3] = 2;
    let (first, fused) = both(&x, n, d, &y, None, &opts, false);
    eprintln!("{first}");
    assert!(first.contains("NaN"), "{first}");
    assert_eq!(first, fused);
    // A negative weight too.
    let mut w = vec![1.0; n];
    w[7] = -1.0;
    let (first, fused) = both(&x, n, d, &dat.y, Some(&w), &opts, false);
    assert!(first.contains("NaN"), "{first}");
    assert_eq!(first, fused);
    // Invalid options too (a theta0 of the wrong length).
    let mut bad = opts.clone();
    bad.theta0 = Some(vec![0.0; d + 1]);
    let (first, fused) = both(&x, n, d, &dat.y, None, &bad, false);
    assert_eq!(first, fused);
    // The same options on clean features: the options' error, both ways.
    let (first, fused) = both(&dat.x, n, d, &dat.y, None, &bad, false);
    assert!(first.contains("theta0"), "{first}");
    assert_eq!(first, fused);
    // Bad labels on clean features: the labels' error, both ways.
    let (first, fused) = both(&dat.x, n, d, &y, None, &opts, false);
    assert!(first.starts_with("error"), "{first}");
    assert_eq!(first, fused);
    // Shapes.
    let (first, fused) = both(&x[..n * d - 1], n, d, &dat.y, None, &opts, false);
    assert!(first.starts_with("error"), "{first}");
    assert_eq!(first, fused);
    assert!(fit_features(Features::F64(&x), usize::MAX / 2, 4, &dat.y, None, &opts).is_err());
}

#[test]
fn privatized_labels_keep_their_guarantee() {
    let dat = data(10_000, 12);
    let private = RandomizedResponse::new(1.0)
        .unwrap()
        .privatize(&dat.y, &mut privpref::privacy::NoiseRng::seeded(5))
        .unwrap();
    let opts = FitOptions::new(LossSpec::DebiasedRr { eps: 1.0 }, FeasibleSet::theta_b(2.0).unwrap());
    let view = PairwiseView::new(&dat.x, dat.n, dat.d, private.labels(), None).unwrap();
    let first = fit_privatized(view, &private, &opts).unwrap();
    let fused = fit_privatized_features(Features::F64(&dat.x), dat.n, dat.d, &private, None, &opts).unwrap();
    assert_eq!(first.theta, fused.theta);
    assert_eq!(first.guarantee, fused.guarantee);
    // A loss at another ε: the provenance error, both ways; with a NaN too, the NaN's.
    let opts3 = FitOptions::new(LossSpec::DebiasedRr { eps: 3.0 }, FeasibleSet::theta_b(2.0).unwrap());
    let e1 = fit_privatized(view, &private, &opts3).unwrap_err().to_string();
    let e2 = fit_privatized_features(Features::F64(&dat.x), dat.n, dat.d, &private, None, &opts3)
        .unwrap_err()
        .to_string();
    assert_eq!(e1, e2);
    let mut x = dat.x.clone();
    x[17] = f64::NAN;
    let e3 = fit_privatized_features(Features::F64(&x), dat.n, dat.d, &private, None, &opts3)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e3,
        PairwiseView::new(&x, dat.n, dat.d, private.labels(), None)
            .unwrap_err()
            .to_string()
    );
}

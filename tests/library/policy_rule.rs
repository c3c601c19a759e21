//! The confidence-set rule of a fit (`privpref::policy::radius`): the design moments
//! `Σ̂ = (1/n)Σxxᵀ`, `X_max` against a direct computation (to the bit, `f64` and `f32` storage),
//! and the dispatch of [`fit_calibration`] against the explicit rules it stands for, with the
//! error of each missing input.

use privpref::data::{FeatureBound, Features};
use privpref::mechanism::simulation_rng;
use privpref::policy::radius::{
    design_moments, fit_calibration, local_radius, objpert_radius, private_mle_radius, FitRule, LocalRadius,
    ObjPertRadius, PrivateMleRadius, RuleError, RuleInputs,
};
use privpref::privacy::{calibrate_private_mle, PrivateMleParams};
use privpref::Error;
use rand_distr::{Distribution, StandardNormal};

fn features(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = simulation_rng(seed);
    (0..n * d).map(|_| StandardNormal.sample(&mut rng)).collect()
}

/// `Σ̂_{ij} = (Σ_r x_{ri}x_{rj})/n` over the full matrix and `X_max = max_r ‖x_r‖`, written out.
fn direct(x: &[f64], n: usize, d: usize) -> (Vec<f64>, f64) {
    let mut s = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            let mut acc = 0.0;
            for r in 0..n {
                acc += x[r * d + i] * x[r * d + j];
            }
            s[i * d + j] = acc / n as f64;
        }
    }
    let x_max = (0..n)
        .map(|r| x[r * d..(r + 1) * d].iter().map(|v| v * v).sum::<f64>().sqrt())
        .fold(0.0, f64::max);
    (s, x_max)
}

#[test]
fn design_moments_are_the_direct_sums() {
    for (n, d) in [(1, 1), (7, 3), (500, 6)] {
        let x = features(n, d, 11 + n as u64);
        let (s, x_max) = design_moments(Features::F64(&x), n, d).unwrap();
        let (s_ref, x_max_ref) = direct(&x, n, d);
        assert_eq!(s, s_ref, "n = {n}, d = {d}");
        assert_eq!(x_max.to_bits(), x_max_ref.to_bits());
        // Exactly symmetric.
        for i in 0..d {
            for j in 0..d {
                assert_eq!(s[i * d + j].to_bits(), s[j * d + i].to_bits());
            }
        }
        // f32 storage: the bits of the same values widened to f64.
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let wide: Vec<f64> = x32.iter().map(|&v| f64::from(v)).collect();
        assert_eq!(
            design_moments(Features::F32(&x32), n, d).unwrap(),
            design_moments(Features::F64(&wide), n, d).unwrap()
        );
    }
    // No rows: Σ̂ = 0, X_max = 0.
    assert_eq!(design_moments(Features::F64(&[]), 0, 2).unwrap(), (vec![0.0; 4], 0.0));
}

#[test]
fn design_moments_reject_bad_features() {
    let mut x = features(4, 3, 5);
    x[7] = f64::NAN;
    match design_moments(Features::F64(&x), 4, 3) {
        Err(Error::InvalidParam { name, reason }) => {
            assert_eq!(name, "x");
            assert!(reason.contains("column 1"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    x[7] = f64::INFINITY;
    assert!(design_moments(Features::F64(&x), 4, 3).is_err());
    assert!(matches!(
        design_moments(Features::F64(&x[..11]), 4, 3),
        Err(Error::Shape(_))
    ));
    assert!(matches!(
        design_moments(Features::F64(&x), usize::MAX, 3),
        Err(Error::Shape(_))
    ));
}

fn inputs(n: Option<usize>, radius: Option<f64>, x_max: Option<f64>, covariance: bool) -> RuleInputs {
    let mut inp = RuleInputs::new(n, 4, radius, x_max, covariance);
    inp.eta = 0.1;
    inp.radius_multiplier = 0.8;
    inp.lambda_multiplier = 1.5;
    inp
}

#[test]
fn each_fit_gets_its_explicit_rule() {
    let (n, d, b, x_max) = (2000, 4, 1.5, 2.5);
    let inp = inputs(Some(n), Some(b), Some(x_max), false);
    for eps in [None, Some(1.0)] {
        let mut p = LocalRadius::new(eps, n, d, x_max, b);
        (p.eta, p.multiplier, p.lambda_multiplier) = (0.1, 0.8, 1.5);
        assert_eq!(
            fit_calibration(&FitRule::Local { eps }, &inp).unwrap(),
            local_radius(&p).unwrap()
        );
    }
    let mut o = ObjPertRadius::new(n, d, x_max, b, 3.0, 20.0);
    (o.eta, o.multiplier, o.lambda_multiplier) = (0.1, 0.8, 1.5);
    let rule = FitRule::ObjPert {
        noise_std: 3.0,
        beta: 20.0,
    };
    assert_eq!(fit_calibration(&rule, &inp).unwrap(), objpert_radius(&o).unwrap());
    // The private MLE: the guarantee of θ̃ is half the pair's, calibrated at (2ε, 2δ).
    let bound = FeatureBound::pairwise(1.0).unwrap();
    let rule = FitRule::PrivateMle {
        eps: 0.5,
        delta: 1e-8,
        bound,
        alpha: None,
        accuracy: None,
    };
    let mut p = PrivateMleParams::new(1.0, 2e-8, bound, b, n, d);
    p.eta = 0.1;
    let cal = calibrate_private_mle(&p).unwrap();
    let mut r = PrivateMleRadius::new(n, d, bound, b);
    (r.eta, r.multiplier) = (0.1, 0.8);
    let want = private_mle_radius(&cal, &r).unwrap();
    let with_cov = inputs(Some(n), Some(b), None, true);
    assert_eq!(fit_calibration(&rule, &with_cov).unwrap(), want);
}

#[test]
fn missing_inputs_are_named() {
    let local = FitRule::Local { eps: Some(1.0) };
    let full = inputs(Some(100), Some(1.0), Some(2.0), false);
    assert!(fit_calibration(&local, &full).is_ok());
    assert!(matches!(
        fit_calibration(&local, &inputs(None, Some(1.0), Some(2.0), false)),
        Err(RuleError::MissingSampleSize)
    ));
    assert!(matches!(
        fit_calibration(&local, &inputs(Some(100), None, Some(2.0), false)),
        Err(RuleError::MissingRadius)
    ));
    match fit_calibration(&local, &inputs(Some(100), Some(1.0), None, false)) {
        Err(RuleError::MissingFeatures(what)) => assert!(what.contains("Zhou, Wu & Orabona"), "{what}"),
        other => panic!("{other:?}"),
    }
    let objpert = FitRule::ObjPert {
        noise_std: 1.0,
        beta: 1.0,
    };
    match fit_calibration(&objpert, &inputs(Some(100), Some(1.0), None, false)) {
        Err(RuleError::MissingFeatures(what)) => assert!(what.contains("objective-perturbation"), "{what}"),
        other => panic!("{other:?}"),
    }
    // The private MLE asks for the covariance first (here n and B are missing too).
    let pmle = FitRule::PrivateMle {
        eps: 0.5,
        delta: 1e-8,
        bound: FeatureBound::pairwise(1.0).unwrap(),
        alpha: None,
        accuracy: None,
    };
    assert!(matches!(
        fit_calibration(&pmle, &inputs(None, None, Some(2.0), false)),
        Err(RuleError::MissingCovariance)
    ));
    assert!(matches!(
        fit_calibration(&pmle, &inputs(Some(100), None, None, true)),
        Err(RuleError::MissingRadius)
    ));
    // No rule for other fits, whatever is given.
    match fit_calibration(&FitRule::Other("probit".into()), &full) {
        Err(e @ RuleError::NoRule(_)) => assert!(e.to_string().contains("`probit`"), "{e}"),
        other => panic!("{other:?}"),
    }
    // Invalid inputs keep the rule's own error.
    let mut bad = full.clone();
    bad.eta = 1.0;
    assert!(matches!(
        fit_calibration(&local, &bad),
        Err(RuleError::Invalid(Error::InvalidParam { name: "eta", .. }))
    ));
    let bad_eps = FitRule::Local { eps: Some(-1.0) };
    assert!(matches!(fit_calibration(&bad_eps, &full), Err(RuleError::Invalid(_))));
}

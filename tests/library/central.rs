//! Central DP: objective perturbation (Chowdhury, Zhou & Natarajan (2024), Algorithm 2), the
//! private MLE and private covariance of "Provable protection of human judgements" (anon., 2025)
//! (Algorithms 1–2), their guarantees, noise scales and refusal paths.

use crate::common::{self, inf_dist};
use privpref::data::{FeatureBound, PairwiseView};
use privpref::estimator::central::{
    objective_perturbation, objpert_minimiser, ObjPertDetail, ObjPertOptions, OutputPerturbation,
};
use privpref::estimator::private_mle::{
    private_covariance, private_covariance_of_view, private_mle, CovarianceOptions, PrivateMleOptions,
};
use privpref::estimator::{fit, fit_privatized, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::simulation_rng;
use privpref::model::Fit;
use privpref::privacy::{
    calibrate_private_mle, gaussian_vector, objpert_noise_std, Neighbouring, NoiseRng, NoiseSource, PrivacyModel,
    PrivacyUnit, PrivateMleParams, PrivatizedLabels, Randomizer,
};
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::Control;
use privpref::Error;

/// Acceptance: for a fixed `w`, the objective-perturbation minimiser matches the independent
/// 50-digit mpmath references (tests/reference/gen_fixtures.py) to |Δθ|∞ ≤ 1e-8 on every
/// logistic fixture with a ridge and a linear term and no weights (T8 in 3-D and 1-D, T6 with
/// w = 0, active and inactive balls, theta-b, unconstrained).
#[test]
fn fixed_noise_minimiser_matches_the_mpmath_references() {
    let mut checked = 0;
    for fx in common::fixtures() {
        if fx.loss != "mle" || fx.ridge <= 0.0 || fx.weights.is_some() || fx.status != "converged" {
            continue;
        }
        let Some(w) = fx.linear_term.clone() else { continue };
        let view = common::fixture_view(&fx);
        let set = FeasibleSet::parse(&fx.constraint, fx.radius).unwrap();
        let m = objpert_minimiser(view, set, fx.ridge, &w, &Control::default()).unwrap();
        assert!(m.report.converged(), "{}", fx.name);
        assert!(m.guarantee.is_none(), "a given w carries no guarantee");
        let want = fx.theta.as_ref().unwrap();
        let e = inf_dist(&m.theta, want);
        assert!(e <= common::THETA_TOL, "{}: |Δθ|∞ = {e:e}", fx.name);
        checked += 1;
    }
    assert!(checked >= 7, "only {checked} fixtures checked");
}

/// The 1-D closed form of case T8 (tests/reference/README.md; sum-zero off, x_i = 1, n = 10, k = 7,
/// β = 2, w = −1.5): the root of nσ(a) − k + βa + w = 0, a = 0.8000616536096503.
#[test]
fn one_dimensional_closed_form() {
    let x = vec![1.0; 10];
    let y: Vec<u8> = (0..10).map(|i| (i < 7) as u8).collect();
    let view = PairwiseView::new(&x, 10, 1, &y, None).unwrap();
    let m = objpert_minimiser(view, FeasibleSet::Unconstrained, 2.0, &[-1.5], &Control::default()).unwrap();
    assert!((m.theta[0] - 0.8000616536096503).abs() < 1e-13, "{}", m.theta[0]);
    // Independently: bisection on the scalar equation.
    let f = |a: f64| 10.0 / (1.0 + (-a).exp()) - 7.0 + 2.0 * a - 1.5;
    let (mut lo, mut hi) = (-5.0, 5.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            hi = mid
        } else {
            lo = mid
        }
    }
    assert!((m.theta[0] - 0.5 * (lo + hi)).abs() < 1e-12);
}

/// The data of case T8 (tests/reference/README.md).
fn t8() -> (Vec<f64>, Vec<u8>) {
    (
        vec![1.0, -1.0, 0.0, 0.0, 1.0, -1.0, 1.0, 0.0, -1.0, -1.0, 0.0, 1.0],
        vec![1, 0, 1, 1],
    )
}

/// The `(β/2n, 1/n)` scaling is pinned: with the T8 noise, Algorithm 2 returns θ° exactly,
/// while the main-text form "mean + (β/2)‖θ‖² + wᵀθ" (ridge nβ, linear term n·w in our
/// units) returns (0.0142, 0.4890, −0.5032).
#[test]
fn algorithm_2_scaling_is_pinned_by_the_inverse_test() {
    let (x, y) = t8();
    let view = PairwiseView::new(&x, 4, 3, &y, None).unwrap();
    let w = [0.076672449565, -0.825557483188, 0.748885033623];
    let set = FeasibleSet::theta_b(2.0).unwrap();
    let ok = objpert_minimiser(view, set, 1.0, &w, &Control::default()).unwrap();
    assert!(inf_dist(&ok.theta, &[0.2, -0.1, -0.1]) < 1e-11, "{:?}", ok.theta);
    let mut wrong = FitOptions::new(LossSpec::Mle, set);
    wrong.ridge = 4.0;
    wrong.linear_term = Some(w.iter().map(|v| 4.0 * v).collect());
    let bad = fit(view, &wrong).unwrap();
    assert!(
        inf_dist(&bad.theta, &[0.0142, 0.4890, -0.5032]) < 1e-4,
        "{:?}",
        bad.theta
    );
    assert!(inf_dist(&bad.theta, &ok.theta) > 0.5);
}

/// Consistency: with the same noise draw, Algorithm 2's estimator approaches θ* as n grows,
/// the main-text form (noise and ridge not divided by n) does not — its error stays O(1).
#[test]
fn main_text_scaling_is_not_consistent() {
    let d = 3;
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(7)).unwrap();
    let data = btl_pairs(20_000, &theta, &mut simulation_rng(8)).unwrap();
    let view = data.view().unwrap();
    let set = FeasibleSet::theta_b(3.0).unwrap();
    let l = view.max_row_norm(false) / 2.0;
    let sw = objpert_noise_std(1.0, 1e-3, fb(l)).unwrap();
    let w = gaussian_vector(d, sw, &mut simulation_rng(9));
    let beta = (20_000f64).sqrt() / 3.0;
    let good = objpert_minimiser(view, set, beta, &w, &Control::default()).unwrap();
    let mut wrong = FitOptions::new(LossSpec::Mle, set);
    wrong.ridge = 20_000.0 * beta;
    wrong.linear_term = Some(w.iter().map(|v| 20_000.0 * v).collect());
    let bad = fit(view, &wrong).unwrap();
    let err = |t: &[f64]| t.iter().zip(&theta).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
    let (eg, eb) = (err(&good.theta), err(&bad.theta));
    assert!(eg < 0.1, "Algorithm 2 error {eg}");
    assert!(eb > 0.5, "main-text form error {eb} (should stay O(1))");
}

fn small_problem(n: usize, seed: u64) -> (privpref::data::PairwiseData, Vec<f64>) {
    let theta = theta_star(3, 0.8, true, &mut simulation_rng(seed)).unwrap();
    let data = btl_pairs(n, &theta, &mut simulation_rng(seed + 1)).unwrap();
    (data, theta)
}

fn fb(l: f64) -> FeatureBound {
    FeatureBound::pairwise(l).unwrap()
}

fn bound_of(view: &PairwiseView<'_>) -> f64 {
    // A stated bound that holds for this data (tests only: the estimator never reads it).
    (view.max_row_norm(false) / 2.0).ceil()
}

/// A seeded run releases exactly the minimiser for the regenerated noise, with the guarantee
/// recorded; the same seed gives the same answer, another seed a different one.
#[test]
fn seeded_release_is_reproducible_and_equals_the_fixed_noise_minimiser() {
    let (data, _) = small_problem(300, 1);
    let view = data.view().unwrap();
    let l = bound_of(&view);
    let set = FeasibleSet::theta_b(2.0).unwrap();
    let opts = ObjPertOptions::new(0.5, 1e-3, fb(l), 3.0, set);
    let a = objective_perturbation(view, &opts, &mut NoiseRng::seeded(42)).unwrap();
    let b = objective_perturbation(view, &opts, &mut NoiseRng::seeded(42)).unwrap();
    let c = objective_perturbation(view, &opts, &mut NoiseRng::seeded(43)).unwrap();
    assert_eq!(a.theta, b.theta);
    assert_ne!(a.theta, c.theta);
    let sw = objpert_noise_std(0.5, 1e-3, fb(l)).unwrap();
    assert_eq!(a.detail.noise_std, sw);
    let w = gaussian_vector(3, sw, &mut NoiseRng::seeded(42));
    let m = objpert_minimiser(view, set, 3.0, &w, &opts.control).unwrap();
    assert!(inf_dist(&m.theta, &a.theta) < 1e-13);
    let g = a.guarantee.as_ref().expect("guarantee");
    assert_eq!((g.eps, g.delta), (0.5, 1e-3));
    assert_eq!(g.model, PrivacyModel::Central);
    assert_eq!(g.unit, PrivacyUnit::Item);
    assert_eq!(g.neighbouring, Neighbouring::LabelChange);
    assert_eq!(g.noise, NoiseSource::Seeded(42));
    assert!(!g.holds_for_real_data());
    assert_eq!(g.assumptions.feature_bound, Some(l));
    assert_eq!(g.assumptions.exactness_tol, Some(1e-9));
    assert!(a.report.certificate.projected_gradient <= 1e-9);
    // Default generator: a CSPRNG, recorded as such.
    let s = objective_perturbation(view, &opts, &mut NoiseRng::secure().unwrap()).unwrap();
    assert_eq!(s.guarantee.unwrap().noise, NoiseSource::Secure);
}

/// The noise scale, statistically: unconstrained and interior, the KKT condition inverts the
/// release, `w = −(Σ(σ(x_iᵀθ̂) − y_i)x_i + βθ̂)`; over 300 seeded releases (900 draws) the
/// sample variance of the recovered `w` must match `s_w²` (relative sd of the estimate
/// ≈ √(2/900) = 4.7%; the band is ±15%) with mean ≈ 0.
#[test]
fn recovered_noise_has_the_calibrated_scale() {
    let (data, _) = small_problem(60, 3);
    let view = data.view().unwrap();
    let l = bound_of(&view);
    let (eps, delta, beta) = (1.0, 1e-3, 5.0);
    let opts = ObjPertOptions::new(eps, delta, fb(l), beta, FeasibleSet::Unconstrained);
    let sw = objpert_noise_std(eps, delta, fb(l)).unwrap();
    let (mut s1, mut s2, mut k) = (0.0, 0.0, 0.0);
    for rep in 0..300u64 {
        let f = objective_perturbation(view, &opts, &mut NoiseRng::seeded(1000 + rep)).unwrap();
        let th = &f.theta;
        let mut g: Vec<f64> = th.iter().map(|t| beta * t).collect();
        for i in 0..view.n() {
            let r = &view.x().unwrap()[i * view.d()..(i + 1) * view.d()];
            let t: f64 = r.iter().zip(th).map(|(a, b)| a * b).sum();
            let c = 1.0 / (1.0 + (-t).exp()) - view.y()[i] as f64;
            g.iter_mut().zip(r).for_each(|(gj, xj)| *gj += c * xj);
        }
        for v in g {
            let w = -v;
            s1 += w;
            s2 += w * w;
            k += 1.0;
        }
    }
    let mean = s1 / k;
    let var = s2 / k - mean * mean;
    assert!((var / (sw * sw) - 1.0).abs() < 0.15, "var {var} vs s_w² {}", sw * sw);
    assert!(mean.abs() < 4.0 * sw / k.sqrt(), "mean {mean}");
}

fn refused(r: Result<Fit<ObjPertDetail>, Error>) -> (String, f64, f64) {
    match r {
        Err(Error::GuaranteeRefused {
            reason,
            achieved,
            tolerance,
        }) => (reason, achieved, tolerance),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The refusal path: a KKT residual above the certified tolerance (or a solver that stopped
/// early) refuses the guarantee; `allow_unguaranteed` returns the point flagged instead.
#[test]
fn guarantee_is_refused_when_the_tolerance_is_not_met() {
    let (data, _) = small_problem(200, 5);
    let view = data.view().unwrap();
    let l = bound_of(&view);
    let set = FeasibleSet::theta_b(2.0).unwrap();
    // 1. A solver that stops after one iteration.
    let mut opts = ObjPertOptions::new(1.0, 1e-3, fb(l), 2.0, set);
    opts.control.max_iter = 1;
    let (reason, achieved, tol) = refused(objective_perturbation(view, &opts, &mut NoiseRng::seeded(1)));
    assert!(
        reason.contains("exact minimiser") && reason.contains("iteration limit"),
        "{reason}"
    );
    assert!(achieved > tol);
    // 2. A converged solve but a tolerance below what f64 can certify.
    let mut opts = ObjPertOptions::new(1.0, 1e-3, fb(l), 2.0, set);
    opts.kkt_tol = 1e-300;
    let (reason, achieved, tol) = refused(objective_perturbation(view, &opts, &mut NoiseRng::seeded(1)));
    assert!(reason.contains("exact minimiser"), "{reason}");
    assert!(achieved > tol && tol == 1e-300);
    // 3. Explicitly unguaranteed.
    opts.allow_unguaranteed = true;
    let f = objective_perturbation(view, &opts, &mut NoiseRng::seeded(1)).unwrap();
    assert!(f.guarantee.is_none());
    assert!(f.refusal().is_some());
    // The same run with the default tolerance is guaranteed and releases the same point.
    let g = objective_perturbation(
        view,
        &ObjPertOptions::new(1.0, 1e-3, fb(l), 2.0, set),
        &mut NoiseRng::seeded(1),
    )
    .unwrap();
    assert!(g.guarantee.is_some() && g.refusal().is_none());
    assert!(inf_dist(&g.theta, &f.theta) < 1e-12);
    // 4. Output perturbation whose radius is below the certified distance.
    let mut opts = ObjPertOptions::new(1.0, 1e-3, fb(l), 2.0, set);
    opts.output = Some(OutputPerturbation::new(1e-300, 0.2, 1e-4));
    let (reason, _, tol) = refused(objective_perturbation(view, &opts, &mut NoiseRng::seeded(1)));
    assert!(reason.contains("output-perturbation radius"), "{reason}");
    assert_eq!(tol, 1e-300);
}

/// Output perturbation: the released point is the exact minimiser for the first draw plus the
/// second draw, whose scale is `ν = 2τ√(2 ln(1.25/δ₂))/ε₂`; the objective noise uses the
/// remaining budget `(ε − ε₂, δ − δ₂)`; the guarantee is the total.
#[test]
fn output_perturbation_adds_the_calibrated_second_draw() {
    let (data, _) = small_problem(200, 9);
    let view = data.view().unwrap();
    let l = bound_of(&view);
    let set = FeasibleSet::theta_b(2.0).unwrap();
    let mut opts = ObjPertOptions::new(1.0, 1e-3, fb(l), 2.0, set);
    let (tau, e2, d2) = (1e-6, 0.25, 2e-4);
    opts.output = Some(OutputPerturbation::new(tau, e2, d2));
    let f = objective_perturbation(view, &opts, &mut NoiseRng::seeded(77)).unwrap();
    let sw = objpert_noise_std(0.75, 8e-4, fb(l)).unwrap();
    assert!((f.detail.noise_std - sw).abs() < 1e-12 * sw);
    let nu = 2.0 * tau * (2.0 * (1.25f64 / d2).ln()).sqrt() / e2;
    assert!((f.detail.output_noise_std.unwrap() - nu).abs() < 1e-15);
    let mut rng = NoiseRng::seeded(77);
    let w = gaussian_vector(3, sw, &mut rng);
    let z = gaussian_vector(3, nu, &mut rng);
    let m = objpert_minimiser(view, set, 2.0, &w, &opts.control).unwrap();
    for (j, zj) in z.iter().enumerate() {
        assert!((f.theta[j] - (m.theta[j] + zj)).abs() < 1e-12);
    }
    let g = f.guarantee.unwrap();
    assert_eq!((g.eps, g.delta), (1.0, 1e-3));
    assert_eq!(g.assumptions.exactness_tol, Some(tau));
    assert!(f.detail.distance_bound <= tau);
}

/// Typed errors on bad input: a row above 2L (named), β ≤ 0, weights, bad ε/δ/L.
#[test]
fn invalid_input_is_a_typed_error() {
    let (data, _) = small_problem(50, 11);
    let view = data.view().unwrap();
    let set = FeasibleSet::theta_b(2.0).unwrap();
    let norms: Vec<f64> = (0..view.n())
        .map(|i| {
            view.x().unwrap()[i * view.d()..(i + 1) * view.d()]
                .iter()
                .map(|v| v * v)
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    let (imax, &nmax) = norms
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.partial_cmp(b.1).unwrap())
        .unwrap();
    // L just below half the largest norm: that row (or an earlier one above 2L) is named.
    let l = 0.5 * nmax * (1.0 - 1e-9);
    let first = norms.iter().position(|&v| v > 2.0 * l).unwrap();
    assert!(first <= imax);
    match objective_perturbation(
        view,
        &ObjPertOptions::new(1.0, 1e-3, fb(l), 1.0, set),
        &mut NoiseRng::seeded(0),
    ) {
        Err(Error::FeatureBound { row, .. }) => assert_eq!(row, first),
        other => panic!("{other:?}"),
    }
    let ok_l = 0.5 * nmax;
    for (opts, name) in [
        (ObjPertOptions::new(1.0, 1e-3, fb(ok_l), 0.0, set), "beta"),
        (ObjPertOptions::new(1.0, 1e-3, fb(ok_l), -1.0, set), "beta"),
        (ObjPertOptions::new(1.0, 1e-3, fb(ok_l), f64::NAN, set), "beta"),
        (ObjPertOptions::new(0.0, 1e-3, fb(ok_l), 1.0, set), "eps"),
        (ObjPertOptions::new(1.0, 0.0, fb(ok_l), 1.0, set), "delta"),
    ] {
        match objective_perturbation(view, &opts, &mut NoiseRng::seeded(0)) {
            Err(Error::InvalidParam { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    // An invalid bound cannot be built (negative, zero, NaN, infinite; horizon 0).
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        match FeatureBound::pairwise(bad) {
            Err(Error::InvalidParam { name, .. }) => assert_eq!(name, "feature-bound"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    assert!(matches!(
        FeatureBound::trajectory(0, 1.0),
        Err(Error::InvalidParam { name: "horizon", .. })
    ));
    let wts = vec![1.0; view.n()];
    let wview = PairwiseView::new(view.x().unwrap(), view.n(), 3, view.y(), Some(&wts)).unwrap();
    assert!(matches!(
        objective_perturbation(
            wview,
            &ObjPertOptions::new(1.0, 1e-3, fb(ok_l), 1.0, set),
            &mut NoiseRng::seeded(0)
        ),
        Err(Error::InvalidParam { name: "weights", .. })
    ));
}

/// Algorithm 1 of the anonymous 2025 paper (private MLE): the release is the certified minimiser
/// for the regenerated `b` plus the regenerated `w`; the guarantee is `(ε/2, δ/2)`, standard DP.
#[test]
fn private_mle_releases_the_certified_minimiser_plus_output_noise() {
    let (data, _) = small_problem(400, 13);
    let view = data.view().unwrap();
    let l = bound_of(&view);
    let set = FeasibleSet::ball(2.0).unwrap();
    let delta = 1.0 / (400.0f64 * 400.0);
    let opts = PrivateMleOptions::new(1.0, delta, fb(l), set);
    let r = private_mle(view, &opts, &mut NoiseRng::seeded(5)).unwrap();
    let c = &r.detail.calibration;
    assert!(
        r.detail.gap_certificate < c.accuracy,
        "{} vs {}",
        r.detail.gap_certificate,
        c.accuracy
    );
    let g = r.guarantee.as_ref().unwrap();
    assert_eq!((g.eps, g.delta), (0.5, delta / 2.0));
    assert_eq!(g.neighbouring, Neighbouring::ReplaceRecord);
    // The gap is the release's certificate: a guaranteed release is `converged`.
    assert!(r.report.converged(), "{:?}", r.report.termination);
    let mut rng = NoiseRng::seeded(5);
    let b = gaussian_vector(3, c.objective_noise_std, &mut rng);
    let w = gaussian_vector(3, c.output_noise_std, &mut rng);
    let m = objpert_minimiser(view, set, 2.0 * c.alpha * 400.0, &b, &Control::default()).unwrap();
    for (j, wj) in w.iter().enumerate() {
        assert!((r.theta[j] - (m.theta[j] + wj)).abs() < 1e-9, "{j}");
    }
    // Refusal: one Newton iteration cannot certify β.
    let mut bad = opts.clone();
    bad.control.max_iter = 1;
    assert!(matches!(
        private_mle(view, &bad, &mut NoiseRng::seeded(5)),
        Err(Error::GuaranteeRefused { .. })
    ));
    bad.allow_unguaranteed = true;
    let u = private_mle(view, &bad, &mut NoiseRng::seeded(5)).unwrap();
    assert!(u.guarantee.is_none() && u.refusal().is_some());
    assert!(!u.report.converged(), "{:?}", u.report.termination);
    // δ above 1/n² and ε above 1 are rejected (Algorithm 1's inputs).
    let mut e = opts.clone();
    e.delta = 1e-3;
    assert!(matches!(
        private_mle(view, &e, &mut NoiseRng::seeded(5)),
        Err(Error::InvalidParam { name: "delta", .. })
    ));
    let mut e = opts.clone();
    e.eps = 2.0;
    assert!(matches!(
        private_mle(view, &e, &mut NoiseRng::seeded(5)),
        Err(Error::InvalidParam { name: "eps", .. })
    ));
    let mut e = opts;
    e.set = FeasibleSet::Unconstrained;
    assert!(private_mle(view, &e, &mut NoiseRng::seeded(5)).is_err());
}

/// Algorithm 2 of the anonymous 2025 paper (private covariance): symmetric, PSD after repair;
/// without repair the noise has the calibrated scale (diagonal variance s², off-diagonal s²/2; 600
/// releases, ±15%).
#[test]
fn private_covariance_noise_and_repair() {
    let (data, _) = small_problem(100, 17);
    let (n, d) = (100, 3);
    let l = bound_of(&data.view().unwrap());
    let delta = 1e-5;
    let mut sigma = vec![0.0; d * d];
    for r in data.x.chunks_exact(d) {
        for i in 0..d {
            for j in 0..d {
                sigma[i * d + j] += r[i] * r[j] / n as f64;
            }
        }
    }
    let mut o = CovarianceOptions::new(1.0, delta, fb(l));
    o.eigen_floor = None;
    let (mut vd, mut vo, mut kd, mut ko) = (0.0, 0.0, 0.0, 0.0);
    let mut s = 0.0;
    for rep in 0..600 {
        let c = private_covariance(&data.x, n, d, &o, &mut NoiseRng::seeded(rep)).unwrap();
        s = c.noise_std;
        for i in 0..d {
            for j in 0..d {
                let e = c.matrix[i * d + j] - sigma[i * d + j];
                assert!((c.matrix[i * d + j] - c.matrix[j * d + i]).abs() == 0.0);
                if i == j {
                    vd += e * e;
                    kd += 1.0;
                } else {
                    vo += e * e;
                    ko += 1.0;
                }
            }
        }
    }
    let want = 4.0 * std::f64::consts::SQRT_2 * l * l / n as f64 * (2.0 * (1.25 / (delta / 2.0)).ln()).sqrt() / 0.5;
    assert!((s - want).abs() < 1e-12 * want);
    assert!((vd / kd / (s * s) - 1.0).abs() < 0.15, "{}", vd / kd / (s * s));
    assert!(
        (vo / ko / (0.5 * s * s) - 1.0).abs() < 0.15,
        "{}",
        vo / ko / (0.5 * s * s)
    );
    // With the floor: PSD (eigenvalues ≥ 0 up to rounding); with noise this large relative to
    // Σ_D, some eigenvalue is floored in most draws.
    let mut any_floored = false;
    for rep in 0..20 {
        let c = private_covariance(
            &data.x,
            n,
            d,
            &CovarianceOptions::new(1.0, delta, fb(l)),
            &mut NoiseRng::seeded(rep),
        )
        .unwrap();
        any_floored |= c.eigenvalues_floored > 0;
        let ev = faer::MatRef::from_row_major_slice(&c.matrix, d, d)
            .self_adjoint_eigenvalues(faer::Side::Lower)
            .unwrap();
        assert!(ev[0] >= -1e-12, "{ev:?}");
        assert_eq!(c.guarantee.eps, 0.5);
        assert_eq!(c.guarantee.delta, delta / 2.0);
    }
    assert!(any_floored);
    // Bad input.
    let mut x = data.x.clone();
    x[4] = f64::NAN;
    assert!(matches!(
        private_covariance(
            &x,
            n,
            d,
            &CovarianceOptions::new(1.0, delta, fb(l)),
            &mut NoiseRng::seeded(0)
        ),
        Err(Error::Data { .. })
    ));
    assert!(matches!(
        private_covariance(
            &data.x,
            n,
            d,
            &CovarianceOptions::new(1.0, delta, fb(l / 100.0)),
            &mut NoiseRng::seeded(0)
        ),
        Err(Error::FeatureBound { row: 0, .. })
    ));
    let mut lab = CovarianceOptions::new(1.0, delta, fb(l));
    lab.relation = Neighbouring::LabelChange;
    assert!(private_covariance(&data.x, n, d, &lab, &mut NoiseRng::seeded(0)).is_err());
}

/// A local estimator's guarantee comes from its labels' provenance: raw labels (here the clear
/// ones) get none, whatever the loss; labels the caller asserts were randomised at ε get the
/// local ε-label-LDP guarantee, marked as asserted.
#[test]
fn local_estimators_carry_their_guarantee() {
    let (data, _) = small_problem(100, 19);
    let view = data.view().unwrap();
    let set = FeasibleSet::theta_b(2.0).unwrap();
    for loss in [
        LossSpec::Mle,
        LossSpec::DebiasedRr { eps: 0.7 },
        LossSpec::MleRr { eps: 0.7 },
    ] {
        let m = fit(view, &FitOptions::new(loss, set)).unwrap();
        assert!(m.guarantee.is_none(), "{loss:?}");
        assert!(m.no_guarantee.unwrap().to_string().contains("no provenance"));
    }
    let asserted = PrivatizedLabels::asserted_by_caller(data.y.clone(), Randomizer::Rr { eps: 0.7 }).unwrap();
    for loss in [LossSpec::DebiasedRr { eps: 0.7 }, LossSpec::MleRr { eps: 0.7 }] {
        let g = fit_privatized(view, &asserted, &FitOptions::new(loss, set))
            .unwrap()
            .guarantee
            .unwrap();
        assert_eq!((g.eps, g.delta, g.model), (0.7, 0.0, PrivacyModel::Local));
        assert_eq!(g.noise, NoiseSource::External);
    }
}

/// Trajectory comparisons of `H` steps with per-step features `‖φ‖ ≤ L`: `n` records of two
/// trajectories from `seed`, every step feature of norm at most `l` (features `n × H × d`).
fn trajectories(n: usize, h: usize, d: usize, l: f64, seed: u64) -> privpref::data::TrajectoryPairs {
    use rand::RngExt;
    let mut rng = simulation_rng(seed);
    let mut step = || -> Vec<f64> {
        let v: Vec<f64> = (0..d).map(|_| rng.random::<f64>() - 0.5).collect();
        let nrm = v.iter().map(|a| a * a).sum::<f64>().sqrt().max(1e-12);
        let r = l * rng.random::<f64>();
        v.iter().map(|a| a * r / nrm).collect()
    };
    let (mut phi0, mut phi1) = (Vec::new(), Vec::new());
    for _ in 0..n * h {
        phi0.extend(step());
        phi1.extend(step());
    }
    let theta = [1.0, -0.5, 0.25];
    let y: Vec<u8> = (0..n)
        .map(|i| {
            let s: f64 = (0..h)
                .flat_map(|k| (0..d).map(move |j| ((i * h + k) * d + j, j)))
                .map(|(at, j)| (phi1[at] - phi0[at]) * theta[j])
                .sum();
            u8::from(s > 0.0)
        })
        .collect();
    privpref::data::trajectory_pairs(&phi0, &phi1, n, h, d, &y, None).unwrap()
}

/// Central DP for trajectories is calibrated to `H·L` by construction: the trajectory bound
/// `(H, L)` gives exactly the noise (and the release) of the pairwise bound `H·L` formed by
/// hand, and `s_w = H·L·√(8 ln(2/δ) + 4ε)/ε`; the per-step `L` (or another horizon) on data
/// built from trajectories is an error, never a release with `H` times too little noise. The
/// private MLE and covariance calibrations are those of `H·L` as well.
#[test]
fn trajectory_noise_is_calibrated_to_the_horizon_times_the_step_bound() {
    let (n, h, d, l) = (300, 3, 3, 0.5);
    let t = trajectories(n, h, d, l, 31);
    let view = t.view().unwrap();
    assert_eq!(view.horizon(), h);
    let bound = t.feature_bound(l).unwrap();
    assert_eq!((bound.horizon(), bound.per_step(), bound.value()), (h, l, 1.5));
    let set = FeasibleSet::theta_b(2.0).unwrap();
    let (eps, delta, beta) = (1.0, 1e-3, 3.0);

    // Objective perturbation: the noise scale of H·L, computed by hand.
    let f = objective_perturbation(
        view,
        &ObjPertOptions::new(eps, delta, bound, beta, set),
        &mut NoiseRng::seeded(3),
    )
    .unwrap();
    let by_hand = 1.5 * (8.0 * (2.0f64 / delta).ln() + 4.0 * eps).sqrt() / eps;
    assert!(
        (f.detail.noise_std - by_hand).abs() <= 1e-15 * by_hand,
        "{} vs {by_hand}",
        f.detail.noise_std
    );
    assert_eq!(f.detail.noise_std, objpert_noise_std(eps, delta, fb(1.5)).unwrap());
    // The same rows declared as pairwise data with the bound H·L release the same point.
    let plain = t.pairs().view().unwrap();
    assert_eq!(plain.horizon(), 1);
    let g = objective_perturbation(
        plain,
        &ObjPertOptions::new(eps, delta, fb(1.5), beta, set),
        &mut NoiseRng::seeded(3),
    )
    .unwrap();
    assert_eq!((f.detail.noise_std, &f.theta), (g.detail.noise_std, &g.theta));
    let guarantee = f.guarantee.as_ref().unwrap();
    assert_eq!(guarantee.assumptions.feature_bound, Some(1.5));
    assert!(guarantee.assumptions.notes.iter().any(|s| s.contains("horizon H = 3")));

    // The per-step bound, or a bound for another horizon, cannot under-noise trajectory data.
    for wrong in [fb(l), FeatureBound::trajectory(2, l).unwrap(), fb(1.5)] {
        match objective_perturbation(
            view,
            &ObjPertOptions::new(eps, delta, wrong, beta, set),
            &mut NoiseRng::seeded(3),
        ) {
            Err(Error::InvalidParam { name, reason }) => {
                assert_eq!(name, "feature-bound");
                assert!(reason.contains("horizon 3"), "{reason}");
            }
            other => panic!("{wrong:?}: {other:?}"),
        }
    }
    // A per-step bound below the largest step feature is refused by the builder.
    assert!(matches!(
        t.feature_bound(0.5 * t.max_step_norm()),
        Err(Error::InvalidParam {
            name: "feature-bound",
            ..
        })
    ));

    // Private MLE (standard DP): the calibration of H·L (G = 2HL, T = H²L², γ_τ), and the same
    // refusal of the per-step bound.
    let delta = 1.0 / (n as f64 * n as f64);
    let set = FeasibleSet::ball(2.0).unwrap();
    let r = private_mle(
        view,
        &PrivateMleOptions::new(1.0, delta, bound, set),
        &mut NoiseRng::seeded(5),
    )
    .unwrap();
    let want = calibrate_private_mle(&PrivateMleParams::new(1.0, delta, fb(1.5), 2.0, n, d)).unwrap();
    assert_eq!(r.detail.calibration, want);
    assert_eq!(r.detail.calibration.grad_bound, 2.0 * 1.5);
    assert_eq!(r.detail.calibration.alpha_min, 4.0 * 1.5 * 1.5 / n as f64);
    assert_eq!(
        r.detail.calibration.gamma,
        1.0 / (2.0 + (2.0f64 * 1.5 * 2.0).exp() + (-2.0f64 * 1.5 * 2.0).exp())
    );
    assert!(matches!(
        private_mle(
            view,
            &PrivateMleOptions::new(1.0, delta, fb(l), set),
            &mut NoiseRng::seeded(5)
        ),
        Err(Error::InvalidParam {
            name: "feature-bound",
            ..
        })
    ));

    // Private covariance: Frobenius sensitivity 4√2 H²L²/n (replace-one).
    let x = &t.pairs().x;
    let c = private_covariance(
        x,
        n,
        d,
        &CovarianceOptions::new(1.0, delta, bound),
        &mut NoiseRng::seeded(7),
    )
    .unwrap();
    let sens = 4.0 * std::f64::consts::SQRT_2 * 1.5 * 1.5 / n as f64;
    let s = sens * (2.0 * (1.25 / (delta / 2.0)).ln()).sqrt() / 0.5;
    assert!((c.noise_std - s).abs() <= 1e-12 * s, "{} vs {s}", c.noise_std);
    // From the trajectory view: the same release, and the per-step bound is refused.
    let cv = private_covariance_of_view(
        view,
        &CovarianceOptions::new(1.0, delta, bound),
        &mut NoiseRng::seeded(7),
    )
    .unwrap();
    assert_eq!((cv.noise_std, &cv.matrix), (c.noise_std, &c.matrix));
    assert!(matches!(
        private_covariance_of_view(
            view,
            &CovarianceOptions::new(1.0, delta, fb(l)),
            &mut NoiseRng::seeded(7)
        ),
        Err(Error::InvalidParam {
            name: "feature-bound",
            ..
        })
    ));
}

//! Invalid settings are typed errors naming the setting, never a NaN result, a false
//! "converged", a panic or a hang: feasible-set radii (a validated `Radius`), the fit options
//! (including the settings of solvers the fit does not run), the L-BFGS memory, AUP phases and
//! the default ridge of objective perturbation.

use privpref::data::{GroupLabels, GroupView};
use privpref::estimator::central::default_beta;
use privpref::estimator::user_level::{aup_rlhf, AupOptions};
use privpref::estimator::{fit, fit_kwise, FitOptions, Solver, SolverKind};
use privpref::feasible::{FeasibleSet, Radius};
use privpref::loss::{GroupLossSpec, LossSpec};
use privpref::mechanism::simulation_rng;
use privpref::privacy::NoiseRng;
use privpref::sim::{btl_pairs, btl_users_equal, theta_star, UserFeatures};
use privpref::solver::lbfgs::LbfgsOptions;
use privpref::solver::sgd::{SgdOptions, StepRule};
use privpref::Error;

/// Negative, zero, NaN, infinite and subnormal.
const BAD_RADII: [f64; 8] = [
    -1.0,
    0.0,
    -0.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    1e-310,
    5e-324,
];

fn param_name<T: std::fmt::Debug>(r: Result<T, Error>) -> &'static str {
    match r {
        Err(Error::InvalidParam { name, .. }) => name,
        other => panic!("expected InvalidParam, got {other:?}"),
    }
}

#[test]
fn a_radius_is_finite_and_positive() {
    for r in BAD_RADII {
        assert_eq!(param_name(Radius::new(r)), "radius", "{r}");
        assert_eq!(param_name(Radius::try_from(r)), "radius", "{r}");
        assert_eq!(param_name(FeasibleSet::theta_b(r)), "radius", "{r}");
        assert_eq!(param_name(FeasibleSet::ball(r)), "radius", "{r}");
        assert_eq!(param_name(FeasibleSet::parse("theta-b", Some(r))), "radius", "{r}");
        assert_eq!(param_name(FeasibleSet::parse("ball", Some(r))), "radius", "{r}");
    }
    let r = Radius::new(2.5).unwrap();
    assert_eq!((r.get(), f64::from(r)), (2.5, 2.5));
    let set = FeasibleSet::ThetaB { radius: r };
    assert_eq!((set.radius(), set.bound()), (Some(2.5), Some(r)));
    assert_eq!(set, FeasibleSet::theta_b(2.5).unwrap());
    assert_eq!(FeasibleSet::SumZero.radius(), None);
}

/// The smallest and largest valid radii give finite, feasible answers whose "converged" is
/// backed by the certificate, with every solver.
#[test]
fn extreme_valid_radii_give_finite_feasible_answers() {
    let th = theta_star(3, 1.0, true, &mut simulation_rng(1)).unwrap();
    let data = btl_pairs(200, &th, &mut simulation_rng(2)).unwrap();
    let view = data.view().unwrap();
    for r in [f64::MIN_POSITIVE, 1e-300, 1e-150, 1e150, 1e300, f64::MAX] {
        for set in [FeasibleSet::theta_b(r).unwrap(), FeasibleSet::ball(r).unwrap()] {
            for solver in [
                SolverKind::Newton,
                SolverKind::NewtonCg,
                SolverKind::Lbfgs,
                SolverKind::Auto,
            ] {
                let mut o = FitOptions::new(LossSpec::Mle, set);
                o.solver = solver.into();
                let m = fit(view, &o).unwrap();
                assert!(m.theta.iter().all(|v| v.is_finite()), "{r} {solver:?}: {:?}", m.theta);
                assert!(
                    set.contains(&m.theta, 1e-12 * r.max(1.0)),
                    "{r} {solver:?}: {:?}",
                    m.theta
                );
                assert!(m.report.converged(), "{r} {solver:?}: {:?}", m.report.termination);
                assert!(
                    m.report.certificate.kkt_residual <= 1e-10,
                    "{r} {solver:?}: {}",
                    m.report.certificate.kkt_residual
                );
            }
        }
    }
}

fn small_view_data() -> privpref::data::PairwiseData {
    let th = theta_star(3, 1.0, true, &mut simulation_rng(3)).unwrap();
    btl_pairs(100, &th, &mut simulation_rng(4)).unwrap()
}

/// Every setting of `FitOptions` is checked at the entry point, including the L-BFGS and SGD
/// settings when another solver runs (an invalid value is never silently ignored).
#[test]
fn fit_options_are_validated_at_the_entry_point() {
    let data = small_view_data();
    let view = data.view().unwrap();
    let base = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    let name = |f: &dyn Fn(&mut FitOptions)| -> &'static str {
        let mut o = base.clone();
        f(&mut o);
        assert!(o.validate().is_err());
        param_name(fit(view, &o).map(|m| m.theta))
    };
    for v in [f64::NAN, -1.0, f64::INFINITY] {
        assert_eq!(name(&|o| o.ridge = v), "ridge", "{v}");
    }
    assert_eq!(name(&|o| o.linear_term = Some(vec![0.0, f64::NAN, 0.0])), "linear-term");
    assert_eq!(name(&|o| o.theta0 = Some(vec![f64::INFINITY, 0.0, 0.0])), "theta0");
    assert_eq!(name(&|o| o.control.max_iter = 0), "max-iter");
    for v in [f64::NAN, -1.0, f64::INFINITY] {
        assert_eq!(name(&|o| o.control.tol_rel = v), "tol", "{v}");
        assert_eq!(name(&|o| o.control.tol_abs = v), "tol-abs", "{v}");
    }
    assert_eq!(
        name(&|o| {
            o.control.tol_rel = 0.0;
            o.control.tol_abs = 0.0;
        }),
        "tol"
    );
    for v in [f64::NAN, 0.0, -1.0] {
        assert_eq!(name(&|o| o.control.norm_cap = v), "norm-cap", "{v}");
    }
    assert_eq!(name(&|o| o.control.observe_every = 0), "observe-every");
    // The settings of the chosen solver (those of a solver that does not run cannot be
    // given: `Solver` carries only its own).
    let mut lbfgs = LbfgsOptions::default();
    lbfgs.memory = 0;
    assert_eq!(name(&|o| o.solver = Solver::Lbfgs(lbfgs)), "memory");
    assert_eq!(name(&|o| o.solver = Solver::Auto(lbfgs)), "memory");
    let sgd = |f: &dyn Fn(&mut SgdOptions)| {
        let mut s = SgdOptions::default();
        f(&mut s);
        Solver::Sgd(s)
    };
    assert_eq!(name(&|o| o.solver = sgd(&|s| s.batch = 0)), "batch");
    assert_eq!(name(&|o| o.solver = sgd(&|s| s.epochs = 0)), "epochs");
    for rule in [
        StepRule::Const(f64::NAN),
        StepRule::InvT(-1.0),
        StepRule::TheoryLambda(0.0),
    ] {
        assert_eq!(name(&|o| o.solver = sgd(&|s| s.step = rule)), "step");
    }
    // The same for K-wise fits.
    let x: Vec<f64> = (0..5)
        .flat_map(|_| [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
        .collect();
    let y = [0u8, 0, 0, 1, 2];
    let g = GroupView::new(&x, 5, 3, 3, GroupLabels::Choice(&y), None).unwrap();
    let mut o = FitOptions::new(GroupLossSpec::PlTop1, FeasibleSet::theta_b(2.0).unwrap());
    assert!(fit_kwise(g, &o).unwrap().report.converged());
    let mut s = SgdOptions::default();
    s.epochs = 0;
    o.solver = Solver::Sgd(s);
    assert_eq!(param_name(fit_kwise(g, &o).map(|m| m.theta)), "epochs");
}

/// Any L-BFGS memory `≥ 1` is valid, including `usize::MAX` (keep every pair): no allocation
/// failure.
#[test]
fn lbfgs_memory_of_any_size() {
    let data = small_view_data();
    let view = data.view().unwrap();
    let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    o.solver = SolverKind::Lbfgs.into();
    let reference = fit(view, &o).unwrap();
    let mut lbfgs = LbfgsOptions::default();
    lbfgs.memory = usize::MAX;
    o.solver = Solver::Lbfgs(lbfgs);
    let m = fit(view, &o).unwrap();
    assert!(m.report.converged());
    let diff = m
        .theta
        .iter()
        .zip(&reference.theta)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(diff < 1e-8, "{diff}");
}

/// More AUP phases than `log2(users)` is a shape error before any phase is allocated (a huge
/// count used to abort the process).
#[test]
fn aup_phases_beyond_the_user_count_are_refused() {
    let ud = btl_users_equal(
        20,
        3,
        &[0.5, -0.5],
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(11),
    )
    .unwrap();
    let view = ud.data.view().unwrap();
    for phases in [5, 64, 1 << 40, usize::MAX] {
        let mut o = AupOptions::new(1.0, 1e-5, 0.5);
        o.phases = phases;
        match aup_rlhf(view, &ud.users, &o, &mut NoiseRng::seeded(0)) {
            Err(Error::Shape(m)) => assert!(m.contains("no users"), "{m}"),
            other => panic!("{phases}: {:?}", other.map(|f| f.theta)),
        }
    }
}

#[test]
fn default_beta_needs_samples_and_a_radius() {
    let set = FeasibleSet::theta_b(2.0).unwrap();
    assert!(matches!(default_beta(0, &set), Err(Error::Shape(_))));
    assert_eq!(default_beta(16, &set).unwrap(), 2.0);
    assert_eq!(param_name(default_beta(16, &FeasibleSet::SumZero)), "beta");
}

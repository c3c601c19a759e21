//! Memory planned before it is allocated (`privpref::solver::memory`): the plans against their
//! closed forms, the typed error at a small explicit limit (so no test needs much memory),
//! `auto` under a limit dense Newton does not fit, and Newton-CG with many more features than
//! rows.

use privpref::data::{FeatureBound, PairwiseView};
use privpref::estimator::private_mle::{private_covariance, CovarianceOptions};
use privpref::estimator::{fit, FitOptions, Solver, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::simulation_rng;
use privpref::privacy::NoiseRng;
use privpref::solver::memory::{self, MemoryLimit};
use privpref::Error;
use rand::RngExt;

/// `8d²` and the rest of dense Newton's plan, written out: the Hessian, `2^k` chunk accumulators
/// with their `max(2 MiB, 8·128·d)` panels, three reduced matrices, `8(6n + 16d + 4d·threads)`.
fn newton_closed_form(n: u64, d: u64, threads: u64, chunks: u64) -> u64 {
    let d2 = 8 * d * d;
    let panel = if d < 12 { 0 } else { (8 * 128 * d).max(2 << 20) };
    d2 + chunks * (d2 + panel) + 3 * d2 + 8 * (6 * n + 16 * d + 4 * d * threads)
}

#[test]
fn plans_match_their_closed_forms() {
    // d = 100: 16 accumulators of 80 kB fit the 256 MiB chunk budget.
    assert_eq!(memory::newton_bytes(1000, 100, 2), newton_closed_form(1000, 100, 2, 16));
    // d = 6: no panels.
    assert_eq!(memory::newton_bytes(50, 6, 1), newton_closed_form(50, 6, 1, 16));
    // d = 200 000: one accumulator is 320 GB, so the fewest chunks (2).
    let big = memory::newton_bytes(10, 200_000, 2);
    assert_eq!(big, newton_closed_form(10, 200_000, 2, 2));
    assert!(big >= 6 * 320_000_000_000, "{big}");
    assert_eq!(memory::covariance_bytes(300), 5 * 8 * 300 * 300);
    assert_eq!(memory::confidence_set_bytes(300), 4 * 8 * 300 * 300);
    assert_eq!(
        memory::newton_cg_bytes(10, 1000, 1),
        8 * (8 * 1000 + 6 * 10 + 16 * 1000 + 4 * 1000)
    );
    assert_eq!(
        memory::lbfgs_bytes(10, 1000, 7, 3),
        8 * (2 * 7 * 1000 + 7 * 10 + 6 * 10 + 16 * 1000 + 4 * 1000 * 3)
    );
    // d² beyond u64: saturates, never wraps to a small plan.
    assert_eq!(memory::newton_bytes(1, 1 << 40, 1), u64::MAX);
    assert_eq!(memory::covariance_bytes(usize::MAX), u64::MAX);
}

fn gaussian_data(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<u8>) {
    let mut rng = simulation_rng(seed);
    let x: Vec<f64> = (0..n * d)
        .map(|_| (rng.random::<f64>() - 0.5) / (d as f64).sqrt())
        .collect();
    let y: Vec<u8> = (0..n).map(|_| u8::from(rng.random::<f64>() < 0.5)).collect();
    (x, y)
}

#[test]
fn newton_above_the_limit_is_a_typed_error_naming_the_size_and_the_alternative() {
    let (n, d) = (50, 40);
    let (x, y) = gaussian_data(n, d, 1);
    let view = PairwiseView::new(&x, n, d, &y, None).unwrap();
    let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    o.solver = SolverKind::Newton.into();
    o.control.memory_limit = MemoryLimit::Bytes(10_000);
    match fit(view, &o) {
        Err(Error::MemoryLimit {
            needed,
            limit,
            alternative,
            what,
            ..
        }) => {
            assert_eq!(limit, 10_000);
            assert!(needed >= 8 * 40 * 40 && needed > limit, "{needed}");
            assert!(what.contains("40 × 40 Hessian"), "{what}");
            assert!(alternative.contains("--solver lbfgs"), "{alternative}");
        }
        other => panic!("expected MemoryLimit, got {other:?}"),
    }
    // The message names the sizes in binary units.
    let e = fit(view, &o).unwrap_err().to_string();
    assert!(e.contains("9.77 KiB memory limit"), "{e}");
    // The same fit within the limit converges.
    o.control.memory_limit = MemoryLimit::Unlimited;
    assert!(fit(view, &o).unwrap().report.converged());
}

#[test]
fn auto_does_not_choose_dense_newton_when_it_does_not_fit() {
    // A non-convex loss at d ≤ 16: auto's first choice is dense Newton.
    let (n, d) = (400, 6);
    let theta = privpref::sim::theta_star(d, 1.0, true, &mut simulation_rng(3)).unwrap();
    let data = privpref::sim::btl_pairs(n, &theta, &mut simulation_rng(4)).unwrap();
    let view = PairwiseView::new(&data.x, n, d, &data.y, None).unwrap();
    let mut o = FitOptions::new(LossSpec::MleRr { eps: 1.0 }, FeasibleSet::theta_b(2.0).unwrap());
    o.solver = Solver::default();
    let free = fit(view, &o).unwrap().report;
    assert_eq!(free.solver, "newton");
    // Dense Newton's plan is above 1000 bytes (its Hessian and accumulators alone).
    assert!(memory::newton_bytes(n, d, 1) > 1000);
    o.control.memory_limit = MemoryLimit::Bytes(1000);
    let limited = fit(view, &o).unwrap().report;
    assert_eq!(limited.solver, "lbfgs");
    assert!(limited.converged());
    let gap = free
        .theta
        .iter()
        .zip(&limited.theta)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(gap < 1e-6, "{gap}");
}

#[test]
fn covariance_above_the_limit_is_a_typed_error() {
    let (n, d) = (20, 30);
    let (x, _) = gaussian_data(n, d, 2);
    let mut opts = CovarianceOptions::new(1.0, 1e-4, FeatureBound::pairwise(1.0).unwrap());
    opts.memory_limit = MemoryLimit::Bytes(1000);
    match private_covariance(&x, n, d, &opts, &mut NoiseRng::seeded(1)) {
        Err(Error::MemoryLimit { needed, limit, .. }) => {
            assert_eq!((needed, limit), (5 * 8 * 30 * 30, 1000));
        }
        other => panic!("expected MemoryLimit, got {other:?}"),
    }
    opts.memory_limit = MemoryLimit::Unlimited;
    assert_eq!(
        private_covariance(&x, n, d, &opts, &mut NoiseRng::seeded(1))
            .unwrap()
            .matrix
            .len(),
        d * d
    );
}

#[test]
fn byte_counts_parse_with_binary_suffixes() {
    assert_eq!(memory::parse_bytes("4G").unwrap(), 4 << 30);
    assert_eq!(memory::parse_bytes("300 MiB").unwrap(), 300 << 20);
    assert!(matches!(
        memory::parse_bytes("four"),
        Err(Error::InvalidParam {
            name: "memory-limit",
            ..
        })
    ));
}

/// Newton-CG with many more features than rows (the Hessian has rank ≤ n): it converges, to
/// L-BFGS's minimiser.
#[test]
fn newton_cg_converges_with_many_more_features_than_rows() {
    let (n, d) = (10, 2000);
    let (x, y) = gaussian_data(n, d, 5);
    let view = PairwiseView::new(&x, n, d, &y, None).unwrap();
    let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    o.solver = SolverKind::NewtonCg.into();
    let cg = fit(view, &o).unwrap().report;
    assert!(cg.converged(), "{:?} {}", cg.termination, cg.certificate.kkt_residual);
    o.solver = SolverKind::Lbfgs.into();
    let lb = fit(view, &o).unwrap().report;
    assert!(lb.converged());
    let gap = cg
        .theta
        .iter()
        .zip(&lb.theta)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(gap < 1e-6, "{gap}");
}

/// Newton-CG on wide, large features (n = 10 rows, d = 2000, ‖x‖ ≈ 450, as unscaled features
/// of d = 200 000 have). The data are separable and the loss decays exponentially along the
/// separating direction: a Newton step there has the constant length ≈ 1/‖x‖ (`f(t) = e^{−at}`:
/// `f'/f'' = 1/a`) and on the sphere `F`, `∇F` and `∇²F` are ~1e-120. Newton-CG extends the unit
/// steps that beat their model and runs CG on the unit right-hand side (the curvature `dᵀAd`
/// would underflow in the units of `g`); it must converge to L-BFGS's point in a few tens of
/// steps, not end at `max-iterations` (it did: relative residual 1 after 100 steps) or in a
/// failed line search.
#[test]
fn newton_cg_reaches_the_sphere_on_separable_wide_data() {
    newton_on_separable_wide_data(SolverKind::NewtonCg, 2000);
}

/// Dense Newton on the same kind of data (d = 400, so that its Hessian costs little): the same
/// constant-length steps, the same extension.
#[test]
fn dense_newton_reaches_the_sphere_on_separable_wide_data() {
    newton_on_separable_wide_data(SolverKind::Newton, 400);
}

/// `solver` on n = 10 rows of dimension `d` with `‖x‖ ≈ 10√d`, against L-BFGS.
fn newton_on_separable_wide_data(solver: SolverKind, d: usize) {
    let n = 10;
    let (mut x, y) = gaussian_data(n, d, 7);
    // Entries uniform on ±0.5/√d have ‖x‖ ≈ 1/√12: ‖x‖ ≈ 10√d (447 at d = 2000).
    let unscale = 10.0 * (12.0 * d as f64).sqrt();
    x.iter_mut().for_each(|v| *v *= unscale);
    let view = PairwiseView::new(&x, n, d, &y, None).unwrap();
    let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    o.solver = SolverKind::Lbfgs.into();
    let lb = fit(view, &o).unwrap().report;
    assert!(lb.converged());
    // The tail: F at the minimiser is ~e^{-m} with margins m in the hundreds.
    assert!(lb.certificate.objective < 1e-50, "{}", lb.certificate.objective);
    o.solver = solver.into();
    let r = fit(view, &o).unwrap().report;
    assert!(
        r.converged() && r.certificate.certified_global,
        "{solver:?}: {:?} after {} iterations, KKT {:.2e}",
        r.termination,
        r.counts.iterations,
        r.certificate.kkt_residual
    );
    assert!(r.certificate.on_boundary);
    assert!(
        r.counts.iterations <= 40,
        "{solver:?}: {} iterations",
        r.counts.iterations
    );
    assert!(r.detail.extended_steps > 0);
    let rel = (r.certificate.objective - lb.certificate.objective).abs() / lb.certificate.objective;
    assert!(
        rel < 1e-6,
        "{solver:?}: objective {} vs L-BFGS {}",
        r.certificate.objective,
        lb.certificate.objective
    );
    let gap = r
        .theta
        .iter()
        .zip(&lb.theta)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(gap < 1e-6, "{solver:?}: {gap}");
}

/// SGD's theory step needs `κ = λ_min(Σ_D)` of a `d × d` covariance: with fewer rows than
/// dimensions `κ = 0` exactly, a typed error before any `d × d` allocation (at 10 × 200 000 the
/// matrix alone is 320 GB; it aborted the process).
#[test]
fn sgd_theory_step_on_wide_data_is_a_typed_error_without_the_matrix() {
    let (n, d) = (10, 200_000);
    let (x, y) = gaussian_data(n, d, 3);
    let view = PairwiseView::new(&x, n, d, &y, None).unwrap();
    let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    o.solver = SolverKind::Sgd.into();
    match fit(view, &o) {
        Err(Error::Numerical(m)) => assert!(
            m.contains("κ = λ_min(Σ_D) = 0") && m.contains("const, invt or lambda"),
            "{m}"
        ),
        other => panic!("{:?}", other.map(|f| f.report.termination)),
    }
}

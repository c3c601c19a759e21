//! Hessian-free Newton-CG beyond the agreement suites (`tests/library/solver_agreement.rs`,
//! `tests/library/closed_form.rs`): the non-convex `mle-rr` with directions of negative curvature, the
//! report's pass counts, thread-count determinism and the K-wise objective.

use crate::common::inf_dist;
use privpref::estimator::{fit, FitOptions, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{simulation_rng, Mechanism, RandomizedResponse};
use privpref::sim::{btl_pairs, power_law_pairs, theta_star};
use privpref::solver::observe::{RecordedEvent, Recorder};
use std::sync::Arc;

#[test]
fn mle_rr_from_a_far_start_meets_negative_curvature() {
    let d = 5;
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(3)).unwrap();
    let data = btl_pairs(500, &theta, &mut simulation_rng(4)).unwrap();
    let eps = 0.5;
    let y = RandomizedResponse::new(eps)
        .unwrap()
        .randomize(&data.y, &mut simulation_rng(5))
        .unwrap();
    let view = privpref::data::PairwiseView::new(&data.x, 500, d, &y, None).unwrap();
    for (set, scale) in [
        (FeasibleSet::ball(20.0).unwrap(), 15.0),
        (FeasibleSet::theta_b(20.0).unwrap(), 15.0),
        (FeasibleSet::Unconstrained, 15.0),
    ] {
        let mut start: Vec<f64> = theta.iter().map(|v| -scale * v).collect();
        set.project(&mut start);
        let mut o = FitOptions::new(LossSpec::MleRr { eps }, set);
        o.theta0 = Some(start);
        o.solver = SolverKind::NewtonCg.into();
        let r = fit(view, &o).unwrap().report;
        o.solver = SolverKind::Newton.into();
        let nr = fit(view, &o).unwrap().report;
        eprintln!(
            "{}: newton-cg {} ({} it, {} CG, {} negative-curvature directions, {} shifted steps, KKT {:.2e}, F {}), \
             newton {} ({} shifts, F {}), |Δθ|∞ {:.2e}",
            set.name(),
            r.termination,
            r.counts.iterations,
            r.counts.cg_iterations,
            r.detail.negative_curvature_directions,
            r.detail.hessian_shifts,
            r.certificate.kkt_residual,
            r.certificate.objective,
            nr.termination,
            nr.detail.hessian_shifts,
            nr.certificate.objective,
            inf_dist(&r.theta, &nr.theta)
        );
        // The branch is exercised, and the outcome is honest: the same termination kind as
        // Newton, a KKT point when converged, never certified global (ε = 0.5 on a ball of
        // radius 20 is far from the convexity certificate; distinct local minima may be found).
        assert!(r.detail.negative_curvature_directions > 0, "{}", set.name());
        assert_eq!(r.termination, nr.termination, "{}", set.name());
        assert!(
            !nr.certificate.certified_global && !r.certificate.certified_global,
            "{}",
            set.name()
        );
        if r.converged() {
            assert!(
                r.certificate.kkt_residual <= r.certificate.kkt_tol,
                "{}: {r:?}",
                set.name()
            );
            assert!(set.contains(&r.theta, 1e-12));
            assert!(r.certificate.on_boundary || set.radius().is_none() || r.certificate.multiplier == 0.0);
        }
    }
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Same bits for 1, 2 and 8 threads (the Hessian-vector products reduce fixed blocks in a
/// fixed tree), and the report's pass accounting: no dense Hessian, one Hessian-vector pass per
/// CG iteration.
#[test]
fn newton_cg_is_bit_identical_across_thread_counts_and_counts_its_passes() {
    let (n, d) = (30_000, 32);
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(8)).unwrap();
    // Ill-conditioned (a rotated spectrum of condition 1000), so the sample preconditioner is
    // taken; on the isotropic design it is declined (below).
    let data = power_law_pairs(n, &theta, 1e3, &mut simulation_rng(9)).unwrap();
    let view = data.view().unwrap();
    let iso = btl_pairs(n, &theta, &mut simulation_rng(9)).unwrap();
    let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    o.solver = SolverKind::NewtonCg.into();
    let r_iso = fit(iso.view().unwrap(), &o).unwrap().report;
    assert!(r_iso.converged() && r_iso.certificate.certified_global, "{r_iso:?}");
    assert_eq!(r_iso.detail.preconditioner_rows, 0, "isotropic: the sample is declined");
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
                o.solver = SolverKind::NewtonCg.into();
                fit(view, &o).unwrap().report
            })
    };
    let r1 = run(1);
    assert!(r1.converged() && r1.certificate.certified_global, "{r1:?}");
    assert_eq!(r1.solver, "newton-cg");
    assert_eq!(r1.counts.hessian_evals, 0);
    // n > 16d: preconditioned by the curvature of k·d sampled rows, k from the shape (the
    // same rows, so the same bits, for any thread count).
    let k = privpref::solver::newton_cg::sample_rows_per_dim(n, d);
    assert_eq!(k, 64, "tall data: the most rows per dimension");
    assert_eq!(r1.detail.preconditioner_rows, n.div_ceil(n.div_ceil(k * d)));
    assert!(r1.counts.cg_iterations >= r1.counts.iterations, "{r1:?}");
    assert_eq!(
        r1.data_passes(),
        r1.counts.grad_evals
            + r1.counts.direction_passes
            + r1.counts.cg_iterations
            + r1.counts.compensated_evals
            + r1.counts.scale_passes
            + r1.counts.setup_passes
    );
    for t in [2, 8] {
        let r = run(t);
        assert_eq!(bits(&r.theta), bits(&r1.theta), "{t} threads");
        assert_eq!(r.certificate.objective.to_bits(), r1.certificate.objective.to_bits());
        assert_eq!(
            (r.counts.iterations, r.counts.cg_iterations),
            (r1.counts.iterations, r1.counts.cg_iterations)
        );
    }
    // And the answer is Newton's.
    let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    o.solver = SolverKind::Newton.into();
    let nr = fit(view, &o).unwrap().report;
    let dt = inf_dist(&nr.theta, &r1.theta);
    eprintln!(
        "n = {n}, d = {d}: newton-cg {} Newton steps, {} CG iterations, {} passes; newton {} passes; |Δθ|∞ = {dt:.2e}",
        r1.counts.iterations,
        r1.counts.cg_iterations,
        r1.data_passes(),
        nr.data_passes()
    );
    assert!(dt <= 1e-9, "newton vs newton-cg |Δθ|∞ = {dt:e}");
}

/// A rotated design of condition number 10⁴ (no column scaling helps): Newton-CG with the
/// sample preconditioner reaches Newton's answer, with its certificate, in a few tens of
/// passes — on the interior, on the sum-zero subspace and on the face of an active `Θ_B` (where
/// the preconditioner is projected on the tangent space) — where L-BFGS needs several times as
/// many.
#[test]
fn the_sample_preconditioner_carries_newton_cg_through_an_ill_conditioned_design() {
    let (n, d) = (8_000, 32);
    let theta = theta_star(d, 2.0, true, &mut simulation_rng(21)).unwrap();
    let data = power_law_pairs(n, &theta, 1e4, &mut simulation_rng(22)).unwrap();
    let view = data.view().unwrap();
    for set in [
        FeasibleSet::Unconstrained,
        FeasibleSet::SumZero,
        FeasibleSet::theta_b(0.5).unwrap(),
    ] {
        let run = |solver: SolverKind| {
            let mut o = FitOptions::new(LossSpec::Mle, set);
            o.solver = solver.into();
            fit(view, &o).unwrap().report
        };
        let (r, nr, lr) = (
            run(SolverKind::NewtonCg),
            run(SolverKind::Newton),
            run(SolverKind::Lbfgs),
        );
        let dt = inf_dist(&r.theta, &nr.theta);
        eprintln!(
            "{}: newton-cg {} passes ({} steps, {} CG, sample of {} rows), lbfgs {} passes, \
             |Δθ|∞ vs newton {dt:.2e}, KKT {:.2e}, on boundary {}",
            set.name(),
            r.data_passes(),
            r.counts.iterations,
            r.counts.cg_iterations,
            r.detail.preconditioner_rows,
            lr.data_passes(),
            r.certificate.kkt_residual,
            r.certificate.on_boundary
        );
        assert!(r.converged() && r.certificate.certified_global, "{}: {r:?}", set.name());
        let k = privpref::solver::newton_cg::sample_rows_per_dim(n, d);
        assert_eq!(
            r.detail.preconditioner_rows,
            n.div_ceil(n.div_ceil(k * d)),
            "{}",
            set.name()
        );
        assert!(
            dt <= 1e-8 * norm_inf(&nr.theta).max(1.0),
            "{}: |Δθ|∞ = {dt:e}",
            set.name()
        );
        assert!(r.data_passes() <= 60, "{}: {} passes", set.name(), r.data_passes());
        let (p, lp) = (r.data_passes(), lr.data_passes());
        if set.radius().is_some() {
            // On the face the multiplier's `μI` conditions the model, and L-BFGS gains too.
            assert!(r.certificate.on_boundary, "Θ_B(0.5) is active at this θ̂");
            assert!(p <= lp, "{}: {p} vs {lp}", set.name());
        } else {
            assert!(3 * p <= lp, "{}: {p} vs {lp}", set.name());
        }
    }
}

fn norm_inf(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// One separable row in a ball of radius 1e300: the minimiser is on the sphere, at margins f64
/// cannot hold, and the logistic loss, its gradient and every term magnitude underflow to exact
/// zeros on the way there (margins past ~745). `0/0` is then no residual at all: no solver
/// certifies such a point — each ends `precision-limit` (or without converging) — and none
/// hangs.
#[test]
fn an_underflowed_loss_is_never_certified() {
    let x = [0.93, -0.4];
    let y = [1u8];
    let view = privpref::data::PairwiseView::new(&x, 1, 2, &y, None).unwrap();
    for solver in [
        SolverKind::Newton,
        SolverKind::NewtonCg,
        SolverKind::Lbfgs,
        SolverKind::Auto,
    ] {
        let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::ball(1e300).unwrap());
        o.solver = solver.into();
        o.control.max_iter = 500;
        let r = fit(view, &o).unwrap().report;
        assert!(
            !r.converged() && !r.certificate.certified_global,
            "{solver:?}: {:?}",
            r.termination
        );
        // The second-order solvers reach the underflow within their budget (extended steps).
        if matches!(solver, SolverKind::Newton | SolverKind::NewtonCg) {
            assert_eq!(r.certificate.objective, 0.0, "{solver:?}");
        }
        if r.certificate.objective == 0.0 {
            assert_eq!(
                r.termination,
                privpref::solver::Termination::PrecisionLimit,
                "{solver:?}"
            );
        }
    }
}

/// `auto` on a convex loss with `n > 16d` and an ill-conditioned design goes to Newton-CG with
/// the sample preconditioner (for `d > 64`), at a fraction of L-BFGS's passes: straight away
/// where a sample judges the design cheaply — `4d` rows of all columns (`n ≥ 0.56·d²`), or, for
/// `d > 128`, `4·128` rows of 128 of the columns (`n·d ≥ 1.2·10⁶`) — the same run as
/// Newton-CG's, bit for bit; else after L-BFGS's rate over ten iterations shows it slow. On an
/// isotropic design nothing fires and auto is L-BFGS, bit for bit.
#[test]
fn auto_hands_an_ill_conditioned_design_to_preconditioned_newton_cg() {
    use privpref::estimator::AUTO_PROBE_ITERS;
    let run = |data: &privpref::data::PairwiseData, solver: SolverKind| {
        let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::Unconstrained);
        o.solver = solver.into();
        fit(data.view().unwrap(), &o).unwrap().report
    };
    // (12 000, 128): judged on the sample of all columns; (6 000, 256): on 128 of them;
    // (4 400, 256): by the probe (neither sample is cheap there: n·d < 1.17·10⁶).
    for (n, d, judged) in [(12_000, 128, true), (6_000, 256, true), (4_400, 256, false)] {
        let theta = theta_star(d, 1.0, true, &mut simulation_rng(31)).unwrap();
        let skewed = power_law_pairs(n, &theta, 1e4, &mut simulation_rng(32)).unwrap();
        let (auto, lbfgs, ncg) = (
            run(&skewed, SolverKind::Auto),
            run(&skewed, SolverKind::Lbfgs),
            run(&skewed, SolverKind::NewtonCg),
        );
        eprintln!(
            "rotated power law (n, d) = ({n}, {d}): auto ({}) {} passes ({} iterations), lbfgs {}, newton-cg {}",
            auto.solver,
            auto.data_passes(),
            auto.counts.iterations,
            lbfgs.data_passes(),
            ncg.data_passes()
        );
        assert!(auto.converged() && auto.certificate.certified_global, "{auto:?}");
        assert_eq!(auto.solver, "newton-cg");
        assert!(auto.detail.preconditioner_rows > 0);
        assert!(
            3 * auto.data_passes() <= lbfgs.data_passes(),
            "{} vs {}",
            auto.data_passes(),
            lbfgs.data_passes()
        );
        if judged {
            assert_eq!(bits(&auto.theta), bits(&ncg.theta), "({n}, {d}): Newton-CG's run");
            assert_eq!(auto.data_passes(), ncg.data_passes());
        } else {
            assert!(auto.counts.iterations > AUTO_PROBE_ITERS, "({n}, {d}): after the probe");
            let dt = inf_dist(&auto.theta, &ncg.theta);
            assert!(dt <= 1e-8 * norm_inf(&ncg.theta), "auto vs newton-cg |Δθ|∞ = {dt:e}");
        }
        let isotropic = btl_pairs(n, &theta, &mut simulation_rng(33)).unwrap();
        // And the same rows with column scales spread over 10⁴ (which column scaling removes).
        let mut scaled = isotropic.clone();
        for row in scaled.x.chunks_mut(d) {
            row.iter_mut()
                .enumerate()
                .for_each(|(j, v)| *v *= 10f64.powf(4.0 * j as f64 / (d - 1) as f64 - 2.0));
        }
        for (name, data) in [("isotropic", &isotropic), ("column-scaled", &scaled)] {
            let (auto, lbfgs) = (run(data, SolverKind::Auto), run(data, SolverKind::Lbfgs));
            assert_eq!(auto.solver, "lbfgs", "({n}, {d}) {name}");
            assert_eq!(bits(&auto.theta), bits(&lbfgs.theta), "({n}, {d}) {name}");
            assert_eq!(auto.data_passes(), lbfgs.data_passes());
        }
    }
}

/// The end of a run on a rotated power-law design: a point meeting the tolerance whose Newton
/// correction the sample factor estimates negligible (within `10·tol` of the point's size in the
/// scale of the scores) is certified as it is — no polishing step, no compensated-gradient
/// refinement — and is still Newton's answer to `10·tol` relative. A point that meets the
/// tolerance without being that accurate (here: an absolute tolerance met long before the
/// relative one) is polished first, and reaches the same accuracy.
#[test]
fn a_point_the_sample_factor_shows_accurate_is_returned_without_polishing() {
    for (n, d, condition, tol_abs, set) in [
        (20_000, 64, 1e2, 0.0, FeasibleSet::Unconstrained),
        (8000, 32, 1e4, 0.0, FeasibleSet::SumZero),
        (8000, 32, 1e4, 0.0, FeasibleSet::theta_b(0.5).unwrap()),
        (20_000, 64, 1e2, 1e-5, FeasibleSet::Unconstrained),
        (8000, 32, 1e4, 1e-5, FeasibleSet::SumZero),
    ] {
        let tol = 1e-10;
        let theta = theta_star(d, 2.0, true, &mut simulation_rng(41)).unwrap();
        let data = power_law_pairs(n, &theta, condition, &mut simulation_rng(42)).unwrap();
        let view = data.view().unwrap();
        let recorder = Arc::new(Recorder::new());
        let run = |solver: SolverKind| {
            let mut o = FitOptions::new(LossSpec::Mle, set);
            o.solver = solver.into();
            if solver == SolverKind::NewtonCg {
                o.control.tol_abs = tol_abs;
                o.control.observer = Some(recorder.clone());
            }
            fit(view, &o).unwrap().report
        };
        let (r, nr) = (run(SolverKind::NewtonCg), run(SolverKind::Newton));
        // The first iteration whose (cheap) residual met a tolerance.
        let met = recorder.events().iter().find_map(|e| match e {
            RecordedEvent::Progress {
                iteration,
                kkt_residual,
                ..
            } if *kkt_residual <= tol => Some(*iteration),
            _ => None,
        });
        let after = met.map_or(r.counts.iterations, |m| r.counts.iterations - m);
        let dt = inf_dist(&r.theta, &nr.theta);
        let size = nr.theta.iter().fold(1.0f64, |a, b| a.max(b.abs()));
        let label = format!(
            "({n}, {d}), condition {condition:e}, {}, tol_abs {tol_abs:e}",
            set.name()
        );
        eprintln!(
            "{label}: {} passes, {} steps ({after} after the relative tolerance was met), {} CG, {} compensated, \
             KKT {:.2e}, |Δθ|∞ vs newton {dt:.2e}",
            r.data_passes(),
            r.counts.iterations,
            r.counts.cg_iterations,
            r.counts.compensated_evals,
            r.certificate.kkt_residual
        );
        assert!(r.converged() && r.certificate.certified_global, "{label}: {r:?}");
        assert!(r.detail.preconditioner_rows > 0, "{label}: the sample is taken");
        assert!(dt <= 10.0 * tol * size, "{label}: |Δθ|∞ = {dt:e}");
        if tol_abs == 0.0 {
            assert!(r.certificate.kkt_residual <= tol, "{label}: {r:?}");
            assert_eq!(
                (after, r.counts.compensated_evals),
                (0, 0),
                "{label}: returned as it is"
            );
        } else {
            // The absolute tolerance is met at a relative residual near 1e-5: the run went on
            // past it to a point accurate to the relative tolerance.
            assert!(r.certificate.kkt_residual <= 10.0 * tol, "{label}: {r:?}");
        }
    }
}

//! Every reference fixture (closed-form cases T1–T8 of `tests/reference/README.md`, plus
//! active/inactive ball, separable data, n < d, badly conditioned columns, weights, ridge and
//! linear terms — see `tests/reference/SUMMARY.md`) solved by the library's exact Newton solver,
//! and by the Hessian-free Newton-CG solver with the same acceptance tolerances.

use crate::common;
use common::{check_answer, fixture_options, fixture_view, fixtures, FEAS_TOL};
use privpref::estimator::SolverKind;
use privpref::solver::Termination;

#[test]
fn newton_matches_every_reference_fixture() {
    every_fixture(SolverKind::Newton);
}

#[test]
fn newton_cg_matches_every_reference_fixture() {
    every_fixture(SolverKind::NewtonCg);
}

fn every_fixture(solver: SolverKind) {
    let mut failures = Vec::new();
    let mut worst = (0.0f64, String::new());
    let all = fixtures();
    for fx in &all {
        let mut opts = fixture_options(fx);
        opts.solver = solver.into();
        let m = privpref::estimator::fit(fixture_view(fx), &opts).unwrap();
        let r = &m.report;
        assert_eq!(r.solver, solver.name());
        let mut bad = Vec::new();
        match fx.status.as_str() {
            "converged" => {
                if !r.converged() {
                    bad.push(format!(
                        "termination {} (KKT {:.2e}, tol {:.2e}, {} it)",
                        r.termination, r.certificate.kkt_residual, r.certificate.kkt_tol, r.counts.iterations
                    ));
                } else {
                    bad.extend(check_answer(
                        fx,
                        &r.theta,
                        r.certificate.objective,
                        r.certificate.on_boundary,
                    ));
                    let want = fx.theta.as_ref().unwrap();
                    let dinf = r.theta.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                    if dinf > worst.0 {
                        worst = (dinf, fx.name.clone());
                    }
                    // The solver's own certificate.
                    if !(r.certificate.kkt_residual <= r.certificate.kkt_tol) {
                        bad.push(format!(
                            "KKT residual {:.2e} above its tolerance {:.2e}",
                            r.certificate.kkt_residual, r.certificate.kkt_tol
                        ));
                    }
                    if let (Some(mu), true) = (fx.multiplier, r.certificate.on_boundary) {
                        if (r.certificate.multiplier - mu).abs() > 1e-7 * mu.abs().max(1e-3) {
                            bad.push(format!("multiplier {} vs {}", r.certificate.multiplier, mu));
                        }
                    }
                    if fx.loss != "mle-rr" && !r.certificate.certified_global {
                        bad.push("convex problem not certified global".into());
                    }
                }
            }
            "no-minimizer" => {
                if r.termination != Termination::NoMinimizer {
                    bad.push(format!("termination {}, want no-minimizer", r.termination));
                }
            }
            other => panic!("unknown status {other}"),
        }
        // The returned point is always feasible.
        if fx.constraint == "theta-b" && r.theta.iter().sum::<f64>().abs() > FEAS_TOL {
            bad.push("infeasible: Σθ ≠ 0".into());
        }
        if !bad.is_empty() {
            failures.push(format!("{} [{}]: {}", fx.name, fx.source, bad.join("; ")));
        }
    }
    eprintln!(
        "{}: worst |Δθ|∞ over converged fixtures: {:.3e} ({})",
        solver.name(),
        worst.0,
        worst.1
    );
    assert!(
        failures.is_empty(),
        "{}: {} of {} fixtures failed:\n{}",
        solver.name(),
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

//! Warm starts (`FitOptions::theta0`), per solver (separate tests, so that each solver's
//! failures show on their own):
//!
//! * (a) a warm start at the exact solution (the fixture's mpmath answer) converges, with the
//!   *same* `kkt_tol` as the cold start (the relative KKT test does not depend on where the
//!   solver started), and Newton needs at most one iteration;
//! * (b) a warm start at a far feasible point (the antipode of the solution on the ball, or far
//!   out without a ball) gives the cold answer to 1e-9 (Newton, L-BFGS);
//! * (c) a warm start never makes a solver stop before the KKT criterion holds: from points
//!   near the solution (at distances 1e-2 … 1e-11), every converged report has
//!   `kkt_residual ≤ kkt_tol`, confirmed by recomputing the relative KKT residual independently
//!   (`common::independent_kkt`);
//! * (d) a bad `θ0` is a typed error: wrong length → [`Error::Shape`], NaN or ±inf →
//!   [`Error::InvalidParam`] named `theta0`.
//!
//! SGD is a fixed-budget method (multi-epoch mini-batch here): it ends with
//! [`Termination::Completed`] (or `Converged`), so (a) is checked in full-batch form (from the
//! solution, projected gradient steps stay there to rounding) and the mini-batch runs are held
//! to the honesty of their reports (same `kkt_tol`, feasible point, converged only with the KKT
//! criterion met, a residual that matches an independent recomputation).

use crate::common::{self, inf_dist};
use common::{fixture, fixture_options, fixture_view, independent_kkt, Fixture};
use privpref::estimator::{fit, FitOptions, Solver, SolverKind};
use privpref::feasible::{center, norm, FeasibleSet};
use privpref::objective::Objective;
use privpref::solver::lbfgs::LbfgsOptions;
use privpref::solver::sgd::{Averaging, SgdOptions, StepRule};
use privpref::solver::{SolveReport, Termination};
use privpref::{with_loss, Error};

/// Problems with known answers: Θ_B on the boundary, ball interior, unconstrained, ridge +
/// linear term with the ball binding, and certified-convex mle-rr.
const PROBLEMS: [&str; 5] = [
    "rand-mle-thetab-boundary",
    "rand-probit-ball-interior",
    "rand-mle-none",
    "ridge-linear-debiased-rr-ball-boundary",
    "rand-mle-rr-thetab-interior",
];

/// Options for `solver` on a fixture, warm-started at `theta0`.
fn options(fx: &Fixture, solver: SolverKind, sgd: Option<SgdOptions>, theta0: Option<Vec<f64>>) -> FitOptions {
    let mut o = fixture_options(fx);
    o.solver = solver.into();
    o.theta0 = theta0;
    if solver == SolverKind::Lbfgs {
        o.control.max_iter = 10_000;
    }
    if let Some(s) = sgd {
        o.solver = Solver::Sgd(s);
    }
    o
}

fn solve(fx: &Fixture, o: &FitOptions) -> Result<SolveReport, Error> {
    fit(fixture_view(fx), o).map(|m| m.report)
}

/// Mini-batch SGD over several epochs (4 batches per epoch, shuffled, constant step).
fn minibatch(fx: &Fixture) -> SgdOptions {
    let mut o = SgdOptions::default();
    o.step = StepRule::Const(0.1);
    o.batch = fx.n.div_ceil(4);
    o.epochs = 5;
    o.shuffle = true;
    o.seed = 7;
    o.average = Averaging::Last;
    o
}

/// Full-batch projected gradient steps through the SGD solver (batch = n, data order).
fn full_batch(fx: &Fixture) -> SgdOptions {
    let mut o = minibatch(fx);
    o.batch = fx.n;
    o.shuffle = false;
    o
}

/// The relative KKT residual at `theta`, recomputed independently.
fn kkt_recomputed(fx: &Fixture, theta: &[f64]) -> f64 {
    let o = fixture_options(fx);
    with_loss!(o.loss, |loss| {
        let mut obj = Objective::new(fixture_view(fx), loss).with_ridge(o.ridge).unwrap();
        if let Some(b) = &o.linear_term {
            obj = obj.with_linear_term(b.clone()).unwrap();
        }
        independent_kkt(&obj, &o.set, theta).relative
    })
    .unwrap()
}

fn describe(r: &SolveReport) -> String {
    format!(
        "{} {} after {} it (KKT {:.3e} / tol {:.3e}), θ = {:?}",
        r.solver, r.termination, r.counts.iterations, r.certificate.kkt_residual, r.certificate.kkt_tol, r.theta
    )
}

/// Problems of a report that hold for every solver and start: the tolerance is the cold one
/// and equals `tol_rel`; the point is feasible; `converged` only with the KKT criterion met
/// (reported and recomputed); the reported residual is honest.
fn common_checks(fx: &Fixture, o: &FitOptions, cold: &SolveReport, r: &SolveReport) -> Vec<String> {
    let mut bad = Vec::new();
    if r.certificate.kkt_tol.to_bits() != cold.certificate.kkt_tol.to_bits()
        || r.certificate.kkt_tol != o.control.tol_rel
    {
        bad.push(format!(
            "kkt_tol {:e} differs from the cold start's {:e} or tol_rel {:e}",
            r.certificate.kkt_tol, cold.certificate.kkt_tol, o.control.tol_rel
        ));
    }
    if !o.set.contains(&r.theta, 1e-12) {
        bad.push("infeasible point".into());
    }
    let again = kkt_recomputed(fx, &r.theta);
    if r.converged() {
        if !(r.certificate.kkt_residual <= r.certificate.kkt_tol) {
            bad.push(format!(
                "converged with KKT residual {:.3e} > tol {:.3e}",
                r.certificate.kkt_residual, r.certificate.kkt_tol
            ));
        }
        if !(again <= r.certificate.kkt_tol * (1.0 + 1e-6)) {
            bad.push(format!(
                "converged, but the recomputed KKT residual {again:.3e} > tol {:.3e}",
                r.certificate.kkt_tol
            ));
        }
    }
    if !((r.certificate.kkt_residual - again).abs()
        <= 1e-3 * again.max(r.certificate.kkt_residual) + 1e-3 * r.certificate.kkt_tol)
    {
        bad.push(format!(
            "reported KKT residual {:.3e}, recomputed {again:.3e}",
            r.certificate.kkt_residual
        ));
    }
    if r.certificate.certified_global && !r.converged() {
        bad.push("certified_global without convergence".into());
    }
    bad
}

/// Runs `f` on every problem and fails with all the problems found, each naming the solver and
/// the fixture.
fn each_problem(solver: SolverKind, what: &str, f: impl Fn(&Fixture) -> Vec<String>) {
    let mut failures = Vec::new();
    for name in PROBLEMS {
        let fx = fixture(name);
        let bad = f(&fx);
        if !bad.is_empty() {
            failures.push(format!("{} on {name}:\n    {}", solver.name(), bad.join("\n    ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{what}: {} of {} problems failed:\n{}",
        failures.len(),
        PROBLEMS.len(),
        failures.join("\n")
    );
}

fn cold(fx: &Fixture, solver: SolverKind, sgd: Option<SgdOptions>) -> Result<SolveReport, String> {
    solve(fx, &options(fx, solver, sgd, None)).map_err(|e| format!("cold start returned an error: {e}"))
}

/// (a) for Newton and L-BFGS.
fn at_solution(solver: SolverKind) {
    each_problem(solver, "warm start at the exact solution", |fx| {
        let star = fx.theta.clone().unwrap();
        let c = match cold(fx, solver, None) {
            Ok(c) => c,
            Err(e) => return vec![e],
        };
        let o = options(fx, solver, None, Some(star.clone()));
        let r = match solve(fx, &o) {
            Ok(r) => r,
            Err(e) => return vec![format!("warm start returned an error: {e}")],
        };
        let mut bad = common_checks(fx, &o, &c, &r);
        if !r.converged() {
            bad.push(format!("did not converge: {}", r.termination));
        }
        if solver == SolverKind::Newton && r.counts.iterations > 1 {
            bad.push(format!(
                "{} iterations from the solution (at most 1)",
                r.counts.iterations
            ));
        }
        let dt = inf_dist(&r.theta, &star);
        if !(dt <= 1e-9) {
            bad.push(format!("moved away from the solution: |Δθ|∞ = {dt:.3e}"));
        }
        if !bad.is_empty() {
            bad.push(format!("cold: {}", describe(&c)));
            bad.push(format!("warm: {}", describe(&r)));
        }
        bad
    });
}

/// A far feasible point: the antipode of the solution on the ball, or 20 units out the other
/// way without one.
fn far_point(fx: &Fixture) -> Vec<f64> {
    let star = fx.theta.clone().unwrap();
    let set = fixture_options(fx).set;
    let r = set.radius().unwrap_or(20.0);
    let mut u: Vec<f64> = star.iter().map(|t| -t).collect();
    if set.sum_zero() {
        center(&mut u);
    }
    let nu = norm(&u);
    let mut p: Vec<f64> = u.iter().map(|v| v / nu * r).collect();
    set.project(&mut p);
    p
}

/// (b) for Newton and L-BFGS.
fn far_start(solver: SolverKind) {
    each_problem(solver, "warm start at a far feasible point", |fx| {
        let c = match cold(fx, solver, None) {
            Ok(c) => c,
            Err(e) => return vec![e],
        };
        let o = options(fx, solver, None, Some(far_point(fx)));
        let r = match solve(fx, &o) {
            Ok(r) => r,
            Err(e) => return vec![format!("warm start returned an error: {e}")],
        };
        let mut bad = common_checks(fx, &o, &c, &r);
        if !(r.converged() && c.converged()) {
            bad.push(format!("cold {}, warm {}", c.termination, r.termination));
        }
        let dt = inf_dist(&r.theta, &c.theta);
        if !(dt <= 1e-9) {
            bad.push(format!("warm and cold answers differ: |Δθ|∞ = {dt:.3e}"));
        }
        if !bad.is_empty() {
            bad.push(format!("cold: {}", describe(&c)));
            bad.push(format!("warm: {}", describe(&r)));
        }
        bad
    });
}

/// Feasible points at distances `δ` from the solution (a fixed direction, projected).
fn near_points(fx: &Fixture) -> Vec<(f64, Vec<f64>)> {
    let star = fx.theta.clone().unwrap();
    let set: FeasibleSet = fixture_options(fx).set;
    let mut dir: Vec<f64> = (0..fx.d).map(|j| ((j * 7 + 3) % 5) as f64 - 2.0).collect();
    if set.sum_zero() {
        center(&mut dir);
    }
    let nd = norm(&dir);
    [1e-2, 1e-5, 1e-8, 1e-11]
        .into_iter()
        .map(|delta| {
            let mut p: Vec<f64> = star.iter().zip(&dir).map(|(s, v)| s + delta * v / nd).collect();
            set.project(&mut p);
            (delta, p)
        })
        .collect()
}

/// (c): from near the solution, no early stop (and, for Newton and L-BFGS, convergence).
fn never_stops_early(solver: SolverKind, sgd: Option<fn(&Fixture) -> SgdOptions>) {
    each_problem(solver, "warm starts near the solution", |fx| {
        let sgd = sgd.map(|f| f(fx));
        let c = match cold(fx, solver, sgd) {
            Ok(c) => c,
            Err(e) => return vec![e],
        };
        let mut bad = Vec::new();
        for (delta, p) in near_points(fx) {
            let o = options(fx, solver, sgd, Some(p));
            let r = match solve(fx, &o) {
                Ok(r) => r,
                Err(e) => {
                    bad.push(format!("δ = {delta:e}: warm start returned an error: {e}"));
                    continue;
                }
            };
            let mut b = common_checks(fx, &o, &c, &r);
            if solver != SolverKind::Sgd && !r.converged() {
                b.push(format!("did not converge: {}", r.termination));
            }
            if solver == SolverKind::Sgd && !matches!(r.termination, Termination::Completed | Termination::Converged) {
                b.push(format!("termination {} (want completed or converged)", r.termination));
            }
            if !b.is_empty() {
                bad.push(format!("δ = {delta:e}: {} — {}", b.join("; "), describe(&r)));
            }
        }
        bad
    });
}

/// (d): bad `θ0` is a typed error, before anything runs.
fn bad_theta0(solver: SolverKind, sgd: Option<fn(&Fixture) -> SgdOptions>) {
    each_problem(solver, "invalid theta0", |fx| {
        let sgd = sgd.map(|f| f(fx));
        let d = fx.d;
        let mut cases: Vec<(String, Vec<f64>, &str)> = vec![
            ("empty".into(), vec![], "shape"),
            (format!("length {}", d - 1), vec![0.0; d - 1], "shape"),
            (format!("length {}", d + 1), vec![0.0; d + 1], "shape"),
        ];
        for (j, v) in [(0, f64::NAN), (d - 1, f64::INFINITY), (d / 2, f64::NEG_INFINITY)] {
            let mut t = vec![0.0; d];
            t[j] = v;
            cases.push((format!("entry {j} = {v}"), t, "theta0"));
        }
        let mut bad = Vec::new();
        for (name, t, want) in cases {
            let got = solve(fx, &options(fx, solver, sgd, Some(t)));
            let ok = match (&got, want) {
                (Err(Error::Shape(_)), "shape") => true,
                (Err(Error::InvalidParam { name, .. }), "theta0") => *name == "theta0",
                _ => false,
            };
            if !ok {
                let got = match got {
                    Ok(r) => format!("Ok({})", describe(&r)),
                    Err(e) => format!("Err({e:?})"),
                };
                let want = if want == "shape" {
                    "Err(Error::Shape)"
                } else {
                    "Err(Error::InvalidParam { name: \"theta0\" })"
                };
                bad.push(format!("theta0 {name}: got {got}, want {want}"));
            }
        }
        bad
    });
}

// ---------------------------------------------------------------- Newton

#[test]
fn newton_warm_start_at_the_solution() {
    at_solution(SolverKind::Newton);
}

#[test]
fn newton_warm_start_far_away() {
    far_start(SolverKind::Newton);
}

#[test]
fn newton_warm_start_never_stops_early() {
    never_stops_early(SolverKind::Newton, None);
}

#[test]
fn newton_bad_theta0_is_a_typed_error() {
    bad_theta0(SolverKind::Newton, None);
}

// ---------------------------------------------------------------- L-BFGS

#[test]
fn lbfgs_warm_start_at_the_solution() {
    at_solution(SolverKind::Lbfgs);
}

#[test]
fn lbfgs_warm_start_far_away() {
    far_start(SolverKind::Lbfgs);
}

#[test]
fn lbfgs_warm_start_never_stops_early() {
    never_stops_early(SolverKind::Lbfgs, None);
}

#[test]
fn lbfgs_bad_theta0_is_a_typed_error() {
    bad_theta0(SolverKind::Lbfgs, None);
}

// ---------------------------------------------------------------- SGD (multi-epoch mini-batch)

/// (a) for SGD: full-batch steps from the exact solution stay there (to 1e-9); the tolerance is
/// the cold start's.
#[test]
fn sgd_warm_start_at_the_solution() {
    each_problem(SolverKind::Sgd, "warm start at the exact solution", |fx| {
        let star = fx.theta.clone().unwrap();
        let mut bad = Vec::new();
        for (kind, opts) in [("full batch", full_batch(fx)), ("mini-batch", minibatch(fx))] {
            let c = match cold(fx, SolverKind::Sgd, Some(opts)) {
                Ok(c) => c,
                Err(e) => {
                    bad.push(format!("{kind}: {e}"));
                    continue;
                }
            };
            let o = options(fx, SolverKind::Sgd, Some(opts), Some(star.clone()));
            let r = match solve(fx, &o) {
                Ok(r) => r,
                Err(e) => {
                    bad.push(format!("{kind}: warm start returned an error: {e}"));
                    continue;
                }
            };
            let mut b = common_checks(fx, &o, &c, &r);
            if !matches!(r.termination, Termination::Completed | Termination::Converged) {
                b.push(format!("termination {} (want completed or converged)", r.termination));
            }
            let dt = inf_dist(&r.theta, &star);
            if kind == "full batch" && !(dt <= 1e-9) {
                b.push(format!(
                    "full-batch steps moved away from the solution: |Δθ|∞ = {dt:.3e}"
                ));
            }
            if !b.is_empty() {
                bad.push(format!("{kind}: {} — {}", b.join("; "), describe(&r)));
            }
        }
        bad
    });
}

/// SGD from a far feasible point: an honest report with the cold start's tolerance.
#[test]
fn sgd_warm_start_far_away() {
    each_problem(SolverKind::Sgd, "warm start at a far feasible point", |fx| {
        let opts = minibatch(fx);
        let c = match cold(fx, SolverKind::Sgd, Some(opts)) {
            Ok(c) => c,
            Err(e) => return vec![e],
        };
        let o = options(fx, SolverKind::Sgd, Some(opts), Some(far_point(fx)));
        match solve(fx, &o) {
            Ok(r) => common_checks(fx, &o, &c, &r)
                .into_iter()
                .map(|b| format!("{b} — {}", describe(&r)))
                .collect(),
            Err(e) => vec![format!("warm start returned an error: {e}")],
        }
    });
}

#[test]
fn sgd_warm_start_never_stops_early() {
    never_stops_early(SolverKind::Sgd, Some(minibatch));
}

#[test]
fn sgd_bad_theta0_is_a_typed_error() {
    bad_theta0(SolverKind::Sgd, Some(minibatch));
}

/// `LbfgsOptions::polish_iters = 0` stops L-BFGS at the first iterate meeting the KKT
/// tolerance: on every converging fixture the report is still converged with
/// `kkt_residual ≤ kkt_tol`, in no more iterations than with the default polishing, the answer
/// is within 1e-6 of the mpmath reference, and on at least one fixture polishing is skipped
/// (strictly fewer iterations), so the setting takes effect.
#[test]
fn lbfgs_without_polishing_stops_at_the_tolerance() {
    let mut fewer = 0;
    let mut checked = 0;
    for fx in common::fixtures() {
        let Some(want) = fx.theta.clone() else { continue };
        let o = options(&fx, SolverKind::Lbfgs, None, None);
        let Ok(full) = solve(&fx, &o) else { continue };
        if !full.termination.is_converged() {
            continue;
        }
        let mut q = o.clone();
        let mut lbfgs = LbfgsOptions::default();
        lbfgs.polish_iters = 0;
        q.solver = Solver::Lbfgs(lbfgs);
        let quick = solve(&fx, &q).unwrap_or_else(|e| panic!("{}: {e}", fx.name));
        assert!(quick.termination.is_converged(), "{}: {:?}", fx.name, quick.termination);
        assert!(
            quick.certificate.kkt_residual <= quick.certificate.kkt_tol,
            "{}: {} > {}",
            fx.name,
            quick.certificate.kkt_residual,
            quick.certificate.kkt_tol
        );
        assert_eq!(quick.certificate.kkt_tol, full.certificate.kkt_tol, "{}", fx.name);
        assert!(
            quick.counts.iterations <= full.counts.iterations,
            "{}: {} > {}",
            fx.name,
            quick.counts.iterations,
            full.counts.iterations
        );
        let err = quick
            .theta
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err <= 1e-6, "{}: |Δθ|∞ = {err:e} without polishing", fx.name);
        fewer += usize::from(quick.counts.iterations < full.counts.iterations);
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} fixtures checked");
    assert!(fewer >= 1, "polishing never skipped on {checked} fixtures");
    eprintln!("polish_iters = 0: {fewer} of {checked} fixtures stop earlier");
}

/// L-BFGS's polishing ends where the tolerance already makes `θ` accurate: on an isotropic
/// design (the residual falling fast, the quasi-Newton step within `10·tol` of the point's
/// size) the default stops at the same iterate as `polish_iters = 0`, with Newton's answer to
/// `10·tol` relative; on a rotated power-law design of condition number 10⁴ (the residual
/// falling slowly) it polishes, and comes closer to Newton's answer than without.
#[test]
fn lbfgs_polishes_only_where_the_tolerance_leaves_theta_inaccurate() {
    use privpref::loss::LossSpec;
    use privpref::mechanism::simulation_rng;
    use privpref::sim::{btl_pairs, power_law_pairs, theta_star};
    let (n, d) = (20_000, 64);
    let theta = theta_star(d, 1.0, false, &mut simulation_rng(51)).unwrap();
    let isotropic = btl_pairs(n, &theta, &mut simulation_rng(52)).unwrap();
    let skewed = power_law_pairs(n, &theta, 1e4, &mut simulation_rng(52)).unwrap();
    for (name, data) in [("isotropic", &isotropic), ("power law", &skewed)] {
        let view = data.view().unwrap();
        let run = |solver: Solver| {
            let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::Unconstrained);
            o.solver = solver;
            fit(view, &o).unwrap().report
        };
        let mut no_polish = LbfgsOptions::default();
        no_polish.polish_iters = 0;
        let (full, quick, newton) = (
            run(Solver::Lbfgs(LbfgsOptions::default())),
            run(Solver::Lbfgs(no_polish)),
            run(Solver::Newton),
        );
        let size = newton.theta.iter().fold(1.0f64, |a, b| a.max(b.abs()));
        let dist = |r: &SolveReport| {
            newton
                .theta
                .iter()
                .zip(&r.theta)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        };
        let (dt, dq) = (dist(&full), dist(&quick));
        eprintln!(
            "{name}: {} iterations ({} without polishing), |Δθ|∞ vs newton {dt:.2e} ({dq:.2e} without)",
            full.counts.iterations, quick.counts.iterations
        );
        assert!(full.converged() && full.certificate.kkt_residual <= full.certificate.kkt_tol);
        if name == "isotropic" {
            assert_eq!(full.counts.iterations, quick.counts.iterations, "{name}: no polishing");
            assert!(dt <= 10.0 * full.certificate.kkt_tol * size, "{name}: |Δθ|∞ = {dt:e}");
        } else {
            assert!(full.counts.iterations > quick.counts.iterations, "{name}: polished");
            assert!(dt < dq, "{name}: polishing brought θ closer to Newton's");
        }
    }
}

//! Observer hooks ([`privpref::solver::Observer`]) through [`Recorder`], per solver (separate
//! tests): exactly one `Start` first (solver name, `n`, `d`, budget = `max_iter`, times `ITERS_PER_MAX_ITER` for L-BFGS), exactly one
//! `End` last (the report's termination and iterations), `Progress` only at iterations that are
//! multiples of `observe_every` — increasing, within the run, none of the multiples in
//! `[1, iterations)` missing — and an observer never changes the result (bit-identical θ,
//! objective and KKT residual compared with a run without observer).

use crate::common;
use common::{fixture, fixture_options, fixture_view};
use privpref::estimator::{fit, SolverKind};
use privpref::solver::observe::{RecordedEvent, Recorder};
use privpref::solver::{SharedObserver, SolveReport, StartInfo};
use std::sync::Arc;

/// Θ_B on the boundary, an ill-conditioned unconstrained problem (many iterations), separable
/// data without a bound (ends no-minimizer), certified mle-rr on a ball.
const PROBLEMS: [&str; 4] = [
    "rand-mle-thetab-boundary",
    "illcond-mle-none",
    "sep-mle-none",
    "rand-mle-rr-ball-boundary",
];

const MAX_ITER: usize = 500;

fn solve(name: &str, solver: SolverKind, obs: Option<(SharedObserver, usize)>) -> Result<SolveReport, String> {
    let fx = fixture(name);
    let mut o = fixture_options(&fx);
    o.solver = solver.into();
    o.control.max_iter = MAX_ITER;
    if let Some((ob, every)) = obs {
        o.control.observer = Some(ob);
        o.control.observe_every = every;
    }
    fit(fixture_view(&fx), &o)
        .map(|m| m.report)
        .map_err(|e| format!("{} on {name} returned an error: {e}", solver.name()))
}

/// The problems of one recorded run.
fn check_events(
    name: &str,
    solver: SolverKind,
    every: usize,
    r: &SolveReport,
    plain: &SolveReport,
    ev: &[RecordedEvent],
) -> Vec<String> {
    let fx = fixture(name);
    let mut bad = Vec::new();
    let starts = ev.iter().filter(|e| matches!(e, RecordedEvent::Start(_))).count();
    let ends = ev.iter().filter(|e| matches!(e, RecordedEvent::End { .. })).count();
    if starts != 1 || ends != 1 {
        bad.push(format!("{starts} Start and {ends} End events (want one of each)"));
    }
    let want_start = RecordedEvent::Start(StartInfo {
        solver: solver.name(),
        n: fx.n,
        d: fx.d,
        // L-BFGS counts `ITERS_PER_MAX_ITER` quasi-Newton iterations per unit of `max_iter`.
        budget: match solver {
            SolverKind::Lbfgs => MAX_ITER * privpref::solver::lbfgs::ITERS_PER_MAX_ITER,
            _ => MAX_ITER,
        },
    });
    if ev.first() != Some(&want_start) {
        bad.push(format!("first event {:?}, want {want_start:?}", ev.first()));
    }
    let want_end = RecordedEvent::End {
        termination: r.termination.as_str(),
        iterations: r.counts.iterations,
    };
    if ev.last() != Some(&want_end) {
        bad.push(format!("last event {:?}, want {want_end:?}", ev.last()));
    }
    let its: Vec<usize> = ev
        .iter()
        .filter_map(|e| match e {
            RecordedEvent::Progress { iteration, .. } => Some(*iteration),
            _ => None,
        })
        .collect();
    if let Some(i) = its.iter().find(|i| **i % every != 0) {
        bad.push(format!(
            "progress at iteration {i}, not a multiple of observe_every = {every}"
        ));
    }
    if !its.windows(2).all(|w| w[0] < w[1]) {
        bad.push(format!("progress iterations not increasing: {its:?}"));
    }
    if let Some(i) = its.iter().find(|i| **i > r.counts.iterations) {
        bad.push(format!(
            "progress at iteration {i} after the run's {} iterations",
            r.counts.iterations
        ));
    }
    let missing: Vec<usize> = (1..r.counts.iterations)
        .filter(|i| i % every == 0 && !its.contains(i))
        .collect();
    if !missing.is_empty() {
        bad.push(format!("no progress call at iterations {missing:?}"));
    }
    if solver == SolverKind::Newton {
        // Newton evaluates F and the KKT residual at every iterate it reports.
        let nonfinite = ev.iter().any(|e| {
            matches!(e, RecordedEvent::Progress { objective, kkt_residual, .. }
                if !(objective.is_finite() && kkt_residual.is_finite()))
        });
        if nonfinite {
            bad.push("a progress event without a finite objective or KKT residual".into());
        }
    }
    // The observer only watches.
    let same = r.theta.len() == plain.theta.len()
        && r.theta
            .iter()
            .zip(&plain.theta)
            .all(|(a, b)| a.to_bits() == b.to_bits())
        && r.certificate.objective.to_bits() == plain.certificate.objective.to_bits()
        && r.certificate.kkt_residual.to_bits() == plain.certificate.kkt_residual.to_bits()
        && r.counts.iterations == plain.counts.iterations
        && r.termination == plain.termination;
    if !same {
        bad.push(format!(
            "the observer changed the result: with {} after {} it, F = {:e}, KKT = {:e}, θ = {:?}; \
             without {} after {} it, F = {:e}, KKT = {:e}, θ = {:?}",
            r.termination,
            r.counts.iterations,
            r.certificate.objective,
            r.certificate.kkt_residual,
            r.theta,
            plain.termination,
            plain.counts.iterations,
            plain.certificate.objective,
            plain.certificate.kkt_residual,
            plain.theta
        ));
    }
    bad
}

fn observer_contract(solver: SolverKind) {
    let mut failures = Vec::new();
    let mut progress_seen = 0usize;
    for name in PROBLEMS {
        let plain = match solve(name, solver, None) {
            Ok(r) => r,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        for every in [1, 2, 3] {
            let rec = Arc::new(Recorder::new());
            let r = match solve(name, solver, Some((rec.clone(), every))) {
                Ok(r) => r,
                Err(e) => {
                    failures.push(e);
                    continue;
                }
            };
            let ev = rec.events();
            progress_seen += ev
                .iter()
                .filter(|e| matches!(e, RecordedEvent::Progress { .. }))
                .count();
            let bad = check_events(name, solver, every, &r, &plain, &ev);
            if !bad.is_empty() {
                failures.push(format!(
                    "{} on {name}, observe_every = {every} ({} after {} it):\n    {}\n    events: {ev:?}",
                    solver.name(),
                    r.termination,
                    r.counts.iterations,
                    bad.join("\n    ")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} observer failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(progress_seen > 0, "no progress events at all");
}

#[test]
fn newton_observer_contract() {
    observer_contract(SolverKind::Newton);
}

#[test]
fn lbfgs_observer_contract() {
    observer_contract(SolverKind::Lbfgs);
}

/// The checks are not vacuous: a recording with a missing `End`, a progress call off the grid,
/// or a changed result is caught.
#[test]
fn the_checks_catch_bad_recordings() {
    let name = PROBLEMS[0];
    let rec = Arc::new(Recorder::new());
    let r = solve(name, SolverKind::Newton, Some((rec.clone(), 2))).unwrap();
    let ev = rec.events();
    assert!(
        r.counts.iterations >= 3,
        "{} iterations: too few to test the grid",
        r.counts.iterations
    );
    assert!(check_events(name, SolverKind::Newton, 2, &r, &r, &ev).is_empty());

    let no_end = &ev[..ev.len() - 1];
    assert!(!check_events(name, SolverKind::Newton, 2, &r, &r, no_end).is_empty());
    let mut off_grid = ev.clone();
    off_grid.insert(
        1,
        RecordedEvent::Progress {
            iteration: 1,
            objective: 0.0,
            kkt_residual: 0.0,
        },
    );
    let msg = check_events(name, SolverKind::Newton, 2, &r, &r, &off_grid).join("\n");
    assert!(msg.contains("not a multiple"), "{msg}");
    let gap: Vec<RecordedEvent> = ev
        .iter()
        .filter(|e| !matches!(e, RecordedEvent::Progress { iteration: 2, .. }))
        .cloned()
        .collect();
    let msg = check_events(name, SolverKind::Newton, 2, &r, &r, &gap).join("\n");
    assert!(msg.contains("no progress call at iterations [2]"), "{msg}");
    let mut other = r.clone();
    other.theta[0] = f64::from_bits(other.theta[0].to_bits() ^ 1);
    let msg = check_events(name, SolverKind::Newton, 2, &r, &other, &ev).join("\n");
    assert!(msg.contains("changed the result"), "{msg}");
}

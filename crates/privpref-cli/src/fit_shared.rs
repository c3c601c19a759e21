//! The parts of `privpref fit` shared by the pairwise, K-wise and central paths: the solver
//! settings and stopping rule read off the command line, the fit options, the JSON fields every
//! fit reports, and the exit code of a fit that did not converge.

use super::{central, failure_code, solver_args, write_json, Failure, FitArgs};
use privpref::estimator::{FitOptions, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::privacy::Guarantee;
use privpref::solver::{Control, SolveReport};
use privpref::Error;
use serde_json::{json, Map, Value};
use std::sync::Arc;

impl FitArgs {
    /// The settings of `solver` from `--memory`, `--polish-iters` and the SGD flags (an error
    /// names a flag given for another solver).
    pub fn solver_settings(&self, solver: SolverKind) -> Result<solver_args::Settings, Error> {
        solver_args::settings(
            solver,
            &solver_args::Given {
                memory: self.memory,
                polish_iters: self.polish_iters,
                sample_start: self.sample_start.as_deref(),
                batch: self.batch,
                epochs: self.epochs,
                step: self.step.as_deref(),
                shuffle: self.shuffle,
                average: self.average.as_deref(),
                seed: self.seed,
            },
        )
    }

    /// The stopping rule (`--max-iter`, `--tol`, `--tol-abs`) and, unless `--quiet`, a live
    /// progress line on stderr when it is a terminal.
    pub fn control(&self) -> Control {
        let mut o = Control::default();
        o.max_iter = self.max_iter;
        o.tol_rel = self.tol;
        o.tol_abs = self.tol_abs;
        if !self.quiet {
            o.observer = Some(Arc::new(super::progress::FitLine::new()));
        }
        o
    }

    /// [`report_json`] of this command's local fit (its `--ridge` and `--seed`) of the loss
    /// named `loss` (at `eps`, if any) over `set` on `n × d` data.
    #[allow(clippy::too_many_arguments)]
    pub fn local_report_json(
        &self,
        r: &SolveReport,
        (loss, eps): (&str, Option<f64>),
        set: FeasibleSet,
        (n, d): (usize, usize),
        guarantee: Option<&Guarantee>,
        solver: SolverKind,
        settings: &solver_args::Settings,
        threads: usize,
    ) -> Map<String, Value> {
        let problem = Problem {
            loss,
            eps,
            set,
            ridge: self.ridge,
            n,
            d,
        };
        report_json(r, &problem, guarantee, solver, settings, self.seed, threads)
    }

    /// The options of a local fit of `n` samples: ridge, `--linear-term` and `--theta0` (read
    /// from their files), the solver and its settings, the stopping rule, and a progress bar on
    /// stderr for SGD.
    pub fn fit_options<S>(
        &self,
        loss: S,
        set: FeasibleSet,
        solver: SolverKind,
        settings: &solver_args::Settings,
        n: usize,
    ) -> Result<FitOptions<S>, Failure> {
        use privpref::data::npy;
        let mut opts = FitOptions::new(loss, set);
        opts.ridge = self.ridge;
        opts.linear_term = self.linear_term.as_ref().map(npy::read_vector).transpose()?;
        opts.theta0 = self.theta0.as_ref().map(npy::read_vector).transpose()?;
        opts.control = self.control();
        if solver == SolverKind::Sgd && !self.quiet {
            opts.control.observer = Some(Arc::new(super::progress::StepBar::new()));
            opts.control.observe_every = (solver_args::sgd_steps(&settings.sgd, n) / 1000).max(1);
        }
        opts.solver = settings.solver(solver);
        Ok(opts)
    }
}

/// What a local fit reports about its problem: the loss's name and `ε`, the feasible set, the
/// ridge and the shape.
pub struct Problem<'a> {
    pub loss: &'a str,
    pub eps: Option<f64>,
    pub set: FeasibleSet,
    pub ridge: f64,
    pub n: usize,
    pub d: usize,
}

/// The JSON fields of every local fit: the answer, the problem, the solver's report and
/// counters, the recorded solver settings, the thread count and the guarantee. The caller adds
/// what is particular to its data (feature dtype, label kind).
pub fn report_json(
    r: &SolveReport,
    p: &Problem<'_>,
    guarantee: Option<&Guarantee>,
    solver: SolverKind,
    settings: &solver_args::Settings,
    seed: Option<u64>,
    threads: usize,
) -> Map<String, Value> {
    // The solver's report (certificate, counts, detail) by its derived `Serialize`, flat.
    let Ok(Value::Object(mut m)) = serde_json::to_value(r) else {
        unreachable!("a SolveReport serialises to a JSON object")
    };
    let extra = json!({
        "loss": p.loss,
        "eps": p.eps,
        "constraint": p.set.name(),
        "radius": p.set.radius(),
        "ridge": p.ridge,
        "n": p.n,
        "d": p.d,
        "converged": r.converged(),
        "approximate": r.termination == privpref::solver::Termination::Completed,
        "data_passes": r.data_passes(),
        "threads": threads,
        "guarantee": central::guarantee_json(guarantee),
    });
    let Value::Object(extra) = extra else {
        unreachable!("json! of an object literal is an object")
    };
    m.extend(extra);
    for (k, v) in solver_args::record(solver, settings, seed) {
        m.insert(k.into(), v);
    }
    m
}

/// Writes `result` (to `--out` or stdout), then turns a fit that did not converge into exit
/// code 3 with the solver's diagnostics on stderr (the JSON is written either way). A
/// fixed-budget solver's output (SGD) exits 0 with one line on stderr saying it is approximate.
pub fn finish(out: &Option<std::path::PathBuf>, result: Map<String, Value>, r: &SolveReport) -> Result<(), Failure> {
    write_json(out, &Value::Object(result))?;
    status(r)
}

/// The exit status of a fit with report `r`, after a note on stderr when the result is an
/// approximate one (the part of [`finish`] after writing the result).
pub fn status(r: &SolveReport) -> Result<(), Failure> {
    if r.termination == privpref::solver::Termination::Completed {
        eprintln!(
            "privpref: note: approximate result: {} ran its fixed budget; relative KKT residual {:.2e} (not a certified minimiser; the exact solvers certify one)",
            r.solver, r.certificate.kkt_residual
        );
    }
    exit_status(r)
}

/// The one-line note of a fit with a private loss (calibrated to randomised labels at `eps`) that
/// carries no local guarantee: `reason` (the model's `no_guarantee_reason`, also in the JSON) and
/// how to get the guarantee from the command line. Nothing for a clear-label loss or a fit that
/// has its guarantee.
pub fn no_guarantee_note(
    eps: Option<f64>,
    guarantee: Option<&Guarantee>,
    reason: Option<&str>,
    k: Option<usize>,
) -> Option<String> {
    let eps = eps?;
    if guarantee.is_some() {
        return None;
    }
    let reason = reason.unwrap_or("the labels carry no provenance");
    let assert = match k {
        Some(k) => format!("krr:{eps}:{k}"),
        None => format!("rr:{eps}"),
    };
    Some(format!(
        "privpref: note: no local privacy guarantee: {reason}; from the command line: randomise the clear labels with `privpref privatize` (its side-car Y.provenance.json is read by fit), or state how they were randomised with --assert-provenance {assert}"
    ))
}

/// [`status`] without the note: what the ranks of an MPI run other than 0 return (they print
/// nothing; rank 0 prints the note once).
pub fn exit_status(r: &SolveReport) -> Result<(), Failure> {
    if let Some(code) = failure_code(r.termination) {
        return Err(Failure {
            code,
            message: Error::NotConverged {
                solver: r.solver,
                termination: r.termination.as_str(),
                reason: r.termination.describe(),
                kkt_residual: r.certificate.kkt_residual,
                kkt_tol: r.certificate.kkt_tol,
                iterations: r.counts.iterations,
            }
            .to_string(),
        });
    }
    Ok(())
}

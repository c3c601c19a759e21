//! `privpref fit --loss pl-top1|pl-ranking|pl-krr --k K [--eps E] [--top J]`: K-wise
//! (Plackett–Luce) fits.
//!
//! * `--x`: float64 (or float32, widened) `.npy` of shape `n × K × d`: the `K` feature rows of
//!   each sample (raw per-alternative features, not differences);
//! * `--y`: integer `.npy` (`u8`, `u16`, `u32`, `i32`, `i64`, …): shape `n` (the chosen
//!   alternative) or `n × K` (a ranking, best first; each row a permutation of `0..K`);
//! * `--k K` must equal the file's `K` (a check that the right files were given);
//! * `pl-krr` needs `--eps` (the K-RR level the choices were privatised at); `pl-ranking` takes
//!   `--top J` (default `K − 1`, the full ranking) and needs rankings.
//!
//! The solver, constraint, ridge, linear term, weights, warm start and SGD options are those of
//! the pairwise fit; the JSON has the same fields plus `k`, `top` and `labels`.

use super::{failure_code, finite_or_null, pool, progress, solver_args, write_json, Failure, FitArgs};
use privpref::data::{npy, GroupLabels, GroupView};
use privpref::estimator::{fit_kwise, FitOptions, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::GroupLossSpec;
use privpref::solver::Control;
use privpref::Error;
use serde_json::json;
use std::sync::Arc;

/// Whether `name` is a K-wise loss.
pub fn is_kwise(name: &str) -> bool {
    name.starts_with("pl-")
}

/// Runs a K-wise fit (module docs).
pub fn run(a: FitArgs) -> Result<(), Failure> {
    if a.central.central {
        return Err(Error::param(
            "central",
            format!(
                "--central fits the pairwise logistic loss; `{}` is a local K-wise loss",
                a.loss
            ),
        )
        .into());
    }
    if let Some(name) = a.central.stray() {
        return Err(Error::param(name, format!("--{name} applies only with --central")).into());
    }
    let loss = GroupLossSpec::parse(&a.loss, a.eps, a.top)?;
    let k_arg =
        a.k.ok_or_else(|| Error::param("k", format!("loss `{}` needs --k (alternatives per sample)", a.loss)))?;
    let set = FeasibleSet::parse(&a.constraint, a.radius)?;
    let solver = SolverKind::parse(&a.solver)?;
    let settings = solver_args::settings(
        solver,
        &solver_args::Given {
            memory: a.memory,
            polish_iters: a.polish_iters,
            batch: a.batch,
            epochs: a.epochs,
            step: a.step.as_deref(),
            shuffle: a.shuffle,
            average: a.average.as_deref(),
            seed: a.seed,
        },
    )?;
    let (x, n, k, d) = npy::read_array3(&a.x)?;
    if k != k_arg {
        return Err(Error::Shape(format!(
            "--k {k_arg} but {} holds {k} alternatives per sample (shape {n} × {k} × {d})",
            a.x.display()
        ))
        .into());
    }
    let (y, width) = npy::read_group_labels(&a.y, k)?;
    let labels = if width == 1 {
        GroupLabels::Choice(&y)
    } else {
        GroupLabels::Ranking(&y)
    };
    let weights = a.weights.as_ref().map(npy::read_vector).transpose()?;
    let view = GroupView::new(&x, n, k, d, labels, weights.as_deref())?;
    let linear_term = a.linear_term.as_ref().map(npy::read_vector).transpose()?;
    let theta0 = a.theta0.as_ref().map(npy::read_vector).transpose()?;
    let mut opts = FitOptions::new(loss, set);
    opts.ridge = a.ridge;
    opts.linear_term = linear_term;
    opts.solver = solver;
    opts.theta0 = theta0;
    opts.control = Control {
        max_iter: a.max_iter,
        tol_rel: a.tol,
        tol_abs: a.tol_abs,
        ..Control::default()
    };
    if solver == SolverKind::Sgd {
        opts.control.observer = Some(Arc::new(progress::StepBar::new()));
        opts.control.observe_every = (solver_args::sgd_steps(&settings.sgd, n) / 1000).max(1);
    }
    opts.lbfgs = settings.lbfgs;
    opts.sgd = settings.sgd;
    let pool = pool(a.threads)?;
    let threads = pool.current_num_threads();
    let model = pool.install(|| fit_kwise(view, &opts))?;
    let r = &model.report;
    let top = match loss {
        GroupLossSpec::PlRanking { top } => Some(top.unwrap_or(k - 1)),
        _ => Some(1),
    };
    let mut result = json!({
        "theta": r.theta,
        "objective": finite_or_null(r.objective),
        "kkt_residual": finite_or_null(r.kkt_residual),
        "kkt_tol": r.kkt_tol,
        "iterations": r.iterations,
        "converged": r.converged(),
        "termination": r.termination.as_str(),
        "solver": r.solver,
        "loss": loss.name(),
        "eps": loss.eps(),
        "k": k,
        "top": top,
        "labels": if width == 1 { "choice" } else { "ranking" },
        "constraint": set.name(),
        "radius": set.radius(),
        "ridge": a.ridge,
        "n": n,
        "d": d,
        "elapsed_s": r.elapsed.as_secs_f64(),
        "on_boundary": r.on_boundary,
        "multiplier": r.multiplier,
        "certified_global": r.certified_global,
        "hessian_shifts": r.hessian_shifts,
        "negative_curvature_rows": r.negative_curvature_rows,
        "grad_evals": r.grad_evals,
        "hessian_evals": r.hessian_evals,
        "fused_evals": r.fused_evals,
        "cg_iterations": r.cg_iterations,
        "negative_curvature_directions": r.negative_curvature_directions,
        "direction_passes": r.direction_passes,
        "setup_passes": r.setup_passes,
        "data_passes": r.data_passes(),
        "line_search_evals": r.line_search_evals,
        "threads": threads,
        "guarantee": super::central::guarantee_json(model.guarantee.as_ref()),
    });
    if let Some(obj) = result.as_object_mut() {
        for (k, v) in solver_args::record(solver, &settings, a.seed) {
            obj.insert(k.into(), v);
        }
    }
    write_json(&a.out, &result)?;
    if let Some(code) = failure_code(r.termination) {
        return Err(Failure {
            code,
            message: Error::NotConverged {
                solver: r.solver,
                termination: r.termination,
                kkt_residual: r.kkt_residual,
                kkt_tol: r.kkt_tol,
                iterations: r.iterations,
            }
            .to_string(),
        });
    }
    Ok(())
}

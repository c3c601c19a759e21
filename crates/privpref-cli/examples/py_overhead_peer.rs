//! The Rust side of the Python-overhead benchmark (`benches/python/overhead.py`): loads
//! `X.npy` (`n × d` float64) and `y.npy` (uint8 labels) once, then times
//! `privpref::estimator::fit_features(Features::F64(&x), n, d, &y, None, &opts)` in-process,
//! with the options `privpref.fit(X, y, solver=S, threads=T)` builds (loss `mle`, constraint
//! `none`, `Control` defaults with `tol_rel = 1e-10`, `tol_abs = 0`, `max_iter = 100` and an
//! interrupt flag, the solver's default settings), on a rayon pool of `T` workers built once.
//!
//! Usage: `cargo run --release -p privpref-cli --example py_overhead_peer -- X.npy y.npy SOLVER
//! THREADS REPS [POLISH_ITERS]`. One warm-up call, then `REPS` timed calls; prints one JSON line:
//! `{"times": [seconds…], "elapsed_s": [the solver's own time…], "theta_bits": ["016x"…], "iterations": k, "converged": b}` (the bits
//! of the last call's θ, to compare with the Python side's bit for bit).
//!
//! It lives in the CLI crate because that crate already builds the library with `npy`.

use privpref::data::npy;
use privpref::data::Features;
use privpref::estimator::{fit_features, FitOptions, Solver, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::solver::lbfgs::LbfgsOptions;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: py_overhead_peer X.npy y.npy SOLVER THREADS REPS [POLISH_ITERS]";
    let (xp, yp, solver, threads, reps) = match &args[..] {
        [x, y, s, t, r, ..] => (x, y, s.as_str(), t.parse::<usize>()?, r.parse::<usize>()?),
        _ => return Err(usage.into()),
    };
    let polish: Option<usize> = args.get(5).map(|p| p.parse()).transpose()?;

    let (x, n, d) = npy::read_matrix(xp)?;
    let y = npy::read_labels(yp, 2)?;

    // As crates/privpref-py/src/options.rs (SolveArgs::fit_options) builds them.
    let mut opts = FitOptions::new(LossSpec::parse("mle", None)?, FeasibleSet::parse("none", None)?);
    opts.solver = match SolverKind::parse(solver)? {
        kind @ (SolverKind::Lbfgs | SolverKind::Auto) => {
            let mut o = LbfgsOptions::default();
            if let Some(k) = polish {
                o.polish_iters = k;
            }
            if kind == SolverKind::Lbfgs {
                Solver::Lbfgs(o)
            } else {
                Solver::Auto(o)
            }
        }
        other => other.into(),
    };
    opts.control.max_iter = 100;
    opts.control.tol_rel = 1e-10;
    opts.control.tol_abs = 0.0;
    opts.control.interrupt = Some(Arc::new(AtomicBool::new(false)));
    opts.validate()?;

    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let call = || pool.install(|| fit_features(Features::F64(&x), n, d, &y, None, &opts));

    let mut fit = call()?; // warm-up
    let (mut times, mut inner) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for _ in 0..reps {
        let t0 = Instant::now();
        let f = call();
        times.push(t0.elapsed().as_secs_f64());
        fit = f?;
        inner.push(fit.report.counts.elapsed.as_secs_f64());
    }
    let secs = |v: &[f64]| v.iter().map(|t| format!("{t:.9}")).collect::<Vec<_>>().join(", ");
    let bits: Vec<String> = fit.theta.iter().map(|v| format!("\"{:016x}\"", v.to_bits())).collect();
    println!(
        "{{\"times\": [{}], \"elapsed_s\": [{}], \"theta_bits\": [{}], \"iterations\": {}, \"converged\": {}}}",
        secs(&times),
        secs(&inner),
        bits.join(", "),
        fit.report.counts.iterations,
        fit.report.converged()
    );
    Ok(())
}

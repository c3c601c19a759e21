//! One exact fit at a large shape, with the solver's counts and time.
//! Usage: `large_fit [n] [d] [loss] [threads] [solver]` (defaults 1e6, 100, mle, all cores, newton).

use privpref::estimator::{fit, FitOptions, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::simulation_rng;
use privpref::sim::{btl_pairs, theta_star};
use std::time::Instant;

fn main() -> privpref::Result<()> {
    let arg = |i: usize| std::env::args().nth(i);
    let n: usize = arg(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let d: usize = arg(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let loss = LossSpec::parse(&arg(3).unwrap_or("mle".into()), None).unwrap_or(LossSpec::DebiasedRr { eps: 1.0 });
    let threads: usize = arg(4).and_then(|s| s.parse().ok()).unwrap_or(0);
    let t0 = Instant::now();
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(1))?;
    let data = btl_pairs(n, &theta, &mut simulation_rng(2))?;
    eprintln!("generated n = {n}, d = {d} in {:.2} s", t0.elapsed().as_secs_f64());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool");
    let mut opts = FitOptions::new(loss, FeasibleSet::theta_b(2.0)?);
    opts.solver = SolverKind::parse(&arg(5).unwrap_or("newton".into()))?;
    let view = data.view()?;
    let t1 = Instant::now();
    let m = pool.install(|| fit(view, &opts))?;
    let r = &m.report;
    println!(
        "{} {:?}: {} iterations, {} value+grad passes, {} Hessians, {} direction passes, {} line-search evals, {} compensated passes, KKT {:.2e} (tol {:.2e}), {:.3} s on {} threads",
        r.solver,
        r.termination,
        r.iterations,
        r.grad_evals,
        r.hessian_evals,
        r.direction_passes,
        r.line_search_evals,
        r.compensated_evals,
        r.kkt_residual,
        r.kkt_tol,
        t1.elapsed().as_secs_f64(),
        pool.current_num_threads()
    );
    Ok(())
}

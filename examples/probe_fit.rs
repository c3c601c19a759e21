use privpref::estimator::{fit, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{simulation_rng, Mechanism, RandomizedResponse};
use privpref::par::Par;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::Control;
fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let eps: f64 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(0.1);
    let reps: u64 = std::env::args().nth(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    for r in 0..reps {
        let th = theta_star(5, 1.0, true, &mut simulation_rng(r)).unwrap();
        let data = btl_pairs(n, &th, &mut simulation_rng(100 + r)).unwrap();
        let yt = RandomizedResponse::new(eps)
            .unwrap()
            .randomize(&data.y, &mut simulation_rng(200 + r))
            .unwrap();
        let v = data.view().unwrap();
        let pv = v.with_labels(&yt).unwrap();
        for (name, view, loss) in [
            ("mle", v, LossSpec::Mle),
            ("mle-rr", pv, LossSpec::MleRr { eps }),
            ("deb", pv, LossSpec::DebiasedRr { eps }),
        ] {
            let mut o = FitOptions::new(loss, FeasibleSet::theta_b(2.0).unwrap());
            o.control = Control {
                par: Par::Seq,
                ..Control::default()
            };
            let t = std::time::Instant::now();
            let m = fit(view, &o).unwrap();
            let rep = &m.report;
            println!("{name:>6} r={r} {:?} it={} grad={} hess={} ls={} shifts={} kkt={:.2e} tol={:.2e} step={:.2e} bnd={} {:.1} ms", rep.termination, rep.iterations, rep.grad_evals, rep.hessian_evals, rep.line_search_evals, rep.hessian_shifts, rep.kkt_residual, rep.kkt_tol, rep.last_step_norm, rep.on_boundary, t.elapsed().as_secs_f64() * 1e3);
        }
    }
}

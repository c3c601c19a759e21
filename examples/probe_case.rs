use privpref::estimator::{fit, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{simulation_rng, Mechanism, RandomizedResponse};
use privpref::par::Par;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::Control;
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
fn main() {
    let (seed, n, r, eps, k) = (2024u64, 3000usize, 18u64, 0.1, 0u64);
    let th = theta_star(5, 1.0, true, &mut simulation_rng(mix(seed, r))).unwrap();
    let data = btl_pairs(n, &th, &mut simulation_rng(mix(mix(seed, r), n as u64))).unwrap();
    let yt = RandomizedResponse::new(eps)
        .unwrap()
        .randomize(&data.y, &mut simulation_rng(mix(mix(mix(seed, r), n as u64), 1 + k)))
        .unwrap();
    let v = data.view().unwrap();
    let pv = v.with_labels(&yt).unwrap();
    for maxit in [100, 1000] {
        let mut o = FitOptions::new(LossSpec::MleRr { eps }, FeasibleSet::theta_b(2.0).unwrap());
        o.control = Control {
            par: Par::Seq,
            max_iter: maxit,
            ..Control::default()
        };
        let m = fit(pv, &o).unwrap();
        let r = &m.report;
        println!(
            "{:?} it={} shifts={} kkt={:.3e} tol={:.3e} step={:.3e} bnd={} mu={} negrows={} obj={} theta={:?}",
            r.termination,
            r.iterations,
            r.hessian_shifts,
            r.kkt_residual,
            r.kkt_tol,
            r.last_step_norm,
            r.on_boundary,
            r.multiplier,
            r.negative_curvature_rows,
            r.objective,
            r.theta
        );
    }
    let mut o = FitOptions::new(LossSpec::DebiasedRr { eps }, FeasibleSet::theta_b(2.0).unwrap());
    o.control = Control {
        par: Par::Seq,
        ..Control::default()
    };
    let m = fit(pv, &o).unwrap();
    println!("deb {:?} theta={:?}", m.report.termination, m.theta);
}

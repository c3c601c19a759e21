//! The `serde` feature: a fit serialises with the keys the CLI writes (the report's
//! certificate, counts and detail flat under `report`, the configuration flat under
//! `detail.config`), and non-finite values become `null`.

use privpref::estimator::{fit_privatized, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{simulation_rng, RandomizedResponse};
use privpref::sim::{btl_pairs, theta_star};
use serde_json::{json, Value};

#[test]
fn a_private_fit_serialises_with_the_cli_keys() {
    let theta = theta_star(4, 1.0, true, &mut simulation_rng(1)).unwrap();
    let data = btl_pairs(2000, &theta, &mut simulation_rng(2)).unwrap();
    let labels = RandomizedResponse::new(1.0)
        .unwrap()
        .privatize(&data.y, &mut privpref::privacy::NoiseRng::seeded(3))
        .unwrap();
    let view = privpref::data::PairwiseView::new(&data.x, data.n, data.d, labels.labels(), None).unwrap();
    let opts = FitOptions::new(LossSpec::DebiasedRr { eps: 1.0 }, FeasibleSet::theta_b(2.0).unwrap());
    let f = fit_privatized(view, &labels, &opts).unwrap();
    let v = serde_json::to_value(&f).unwrap();
    let report = &v["report"];
    assert_eq!(report["termination"], json!("converged"));
    assert_eq!(report["kkt_residual"], json!(f.report.certificate.kkt_residual));
    assert_eq!(report["iterations"], json!(f.report.counts.iterations));
    assert_eq!(report["elapsed_s"], json!(f.report.counts.elapsed.as_secs_f64()));
    assert_eq!(report["hessian_shifts"], json!(f.report.detail.hessian_shifts));
    assert_eq!(v["theta"], json!(f.theta));
    let config = &v["detail"]["config"];
    assert_eq!(
        (
            &config["loss"],
            &config["eps"],
            &config["constraint"],
            &config["radius"]
        ),
        (&json!("debiased-rr"), &json!(1.0), &json!("theta-b"), &json!(2.0))
    );
    let g = &v["guarantee"];
    assert_eq!(
        (&g["eps"], &g["model"], &g["unit"]),
        (&json!(1.0), &json!("local"), &json!("item"))
    );
    assert_eq!(
        g["holds_for_real_data"],
        json!(false),
        "a seeded generator: simulation only"
    );
    let p = &v["detail"]["provenance"];
    assert_eq!((&p["mechanism"], &p["seed"]), (&json!("rr"), &json!(3)));
    assert_eq!(v["no_guarantee_reason"], Value::Null);
}

#[test]
fn non_finite_values_serialise_as_null() {
    // SGD takes no Newton step: its last step length is NaN.
    let theta = theta_star(3, 1.0, true, &mut simulation_rng(1)).unwrap();
    let data = btl_pairs(200, &theta, &mut simulation_rng(2)).unwrap();
    let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    o.solver = privpref::estimator::SolverKind::Sgd.into();
    let f = privpref::estimator::fit(data.view().unwrap(), &o).unwrap();
    assert!(f.report.detail.last_step_norm.is_nan());
    let v = serde_json::to_value(&f.report).unwrap();
    assert_eq!(v["last_step_norm"], Value::Null);
    assert_eq!(v["termination"], json!(f.report.termination.as_str()));
    assert_eq!(v["kkt_residual"], json!(f.report.certificate.kkt_residual));
}

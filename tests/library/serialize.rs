//! The `serde` feature: a fit serialises with the keys the CLI writes (the report's
//! certificate, counts and detail flat under `report`, the configuration flat under
//! `detail.config`), and non-finite values become `null`. The stochastic estimators' details
//! (label-private SGD and LP-MST of Ghazi et al. (2021), user-wise DP-SGD and AUP-RLHF of Zhang
//! et al. (2025)) serialise field by field.

use privpref::data::MulticlassView;
use privpref::estimator::label_sgd::{
    lp_sgd, multi_stage, GaussianCalibration, LabelMechanism, LpSgdOptions, MultiStageOptions, MulticlassModel,
    ReleasedLabel,
};
use privpref::estimator::user_level::{aup_rlhf, user_dpsgd, AupOptions, UserDpSgdOptions};
use privpref::estimator::{fit_privatized, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::{LossSpec, PlTop1};
use privpref::mechanism::{simulation_rng, RandomizedResponse};
use privpref::privacy::NoiseRng;
use privpref::sim::{btl_pairs, btl_users_equal, class_means, class_mixture, theta_star, UserFeatures};
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

/// A 5-class mixture in 4 dimensions (`n` rows).
fn mixture(n: usize) -> (Vec<f64>, Vec<u8>) {
    let means = class_means(5, 4, 2.0, &mut simulation_rng(31)).unwrap();
    let data = class_mixture(n, 5, &means, 1.0, &mut simulation_rng(5)).unwrap();
    (data.x, data.y)
}

/// The releases as the JSON they should serialise to.
fn released_json(released: &[ReleasedLabel]) -> Value {
    released
        .iter()
        .map(|r| json!({"sample": r.sample, "label": r.label, "set": r.set}))
        .collect()
}

#[test]
fn a_label_sgd_fit_serialises_its_releases_and_normal_report() {
    let n = 300;
    let (x, y) = mixture(n);
    let model = MulticlassModel::new(MulticlassView::new(&x, n, 4, 5, &y).unwrap(), PlTop1).unwrap();
    let set = FeasibleSet::ball(5.0).unwrap();
    // K-RR: every label released over all K labels (`set` null), mean k = K.
    let opts = LpSgdOptions::new(1.0, LabelMechanism::Krr, set);
    let f = lp_sgd(&model, &opts, None, None, &mut NoiseRng::seeded(1)).unwrap();
    let v = serde_json::to_value(&f).unwrap();
    let d = &v["detail"];
    assert_eq!(f.detail.released.len(), n);
    assert_eq!(d["released"], released_json(&f.detail.released));
    assert_eq!(d["released"][0]["set"], Value::Null);
    assert_eq!(d["mean_k"], json!(5.0));
    assert_eq!(d["lipschitz"], json!(f.detail.lipschitz));
    assert_eq!(d["normal"], Value::Null);
    assert_eq!(v["theta"], json!(f.theta));
    assert_eq!(v["report"]["solver"], json!("label-sgd"));
    assert_eq!(v["report"]["iterations"], json!(n));
    assert_eq!(
        (&v["guarantee"]["eps"], &v["guarantee"]["neighbouring"]),
        (&json!(1.0), &json!("label-change"))
    );
    // LP-Normal-SGD: no release (mean k NaN → null), the calibration and rank statistics.
    let mech = LabelMechanism::Normal {
        delta: 1e-5,
        calibration: GaussianCalibration::Analytic,
        sensitivity: None,
    };
    let g = lp_sgd(
        &model,
        &LpSgdOptions::new(1.0, mech, set),
        None,
        None,
        &mut NoiseRng::seeded(2),
    )
    .unwrap();
    let v = serde_json::to_value(&g).unwrap();
    let nr = g.detail.normal.as_ref().expect("LP-Normal-SGD reports its calibration");
    assert_eq!(
        v["detail"]["normal"],
        json!({
            "sigma": nr.sigma,
            "sensitivity": nr.sensitivity,
            "max_realised_sensitivity": nr.max_realised_sensitivity,
            "calibration": "analytic",
            "rank_min": nr.rank_min,
            "rank_max": nr.rank_max,
            "rank_mean": nr.rank_mean,
        })
    );
    assert_eq!(v["detail"]["released"], json!([]));
    assert!(g.detail.mean_k.is_nan());
    assert_eq!(v["detail"]["mean_k"], Value::Null);
    assert_eq!(v["guarantee"]["delta"], json!(1e-5));
}

#[test]
fn a_multi_stage_fit_serialises_its_stages() {
    let n = 400;
    let (x, y) = mixture(n);
    let model = MulticlassModel::new(MulticlassView::new(&x, n, 4, 5, &y).unwrap(), PlTop1).unwrap();
    let mut opts = MultiStageOptions::new(1.0, vec![0.5, 0.5], FeasibleSet::ball(5.0).unwrap());
    opts.reuse = true;
    let f = multi_stage(&model, &opts, None, &mut NoiseRng::seeded(3)).unwrap();
    let v = serde_json::to_value(&f).unwrap();
    let stages = v["detail"]["stages"].as_array().unwrap();
    assert_eq!(stages.len(), f.detail.stages.len());
    for (s, st) in stages.iter().zip(&f.detail.stages) {
        assert_eq!(
            (&s["samples"], &s["reused"], &s["filtered_out"], &s["steps"]),
            (
                &json!(st.samples),
                &json!(st.reused),
                &json!(st.filtered_out),
                &json!(st.steps)
            )
        );
        assert_eq!(s["mean_k"], json!(st.mean_k));
        assert_eq!(s["filter_k"], json!(st.filter_k));
        assert_eq!(s["theta"], json!(st.theta));
        assert_eq!(
            (&s["guarantee"]["eps"], &s["guarantee"]["model"]),
            (&json!(1.0), &json!("central"))
        );
    }
    // Stage 1 is K-RR without a filter; stage 2 reuses through the floor-of-mean-k filter.
    assert_eq!(
        (&stages[0]["mean_k"], &stages[0]["filter_k"]),
        (&json!(5.0), &Value::Null)
    );
    assert!(stages[1]["filter_k"].is_u64());
    // The releases, with the label sets of stage 2's RR-with-prior.
    assert_eq!(v["detail"]["released"], released_json(&f.detail.released));
    assert!(f.detail.released.iter().any(|r| r.set.is_some()));
    assert_eq!(v["theta"], json!(f.theta));
    assert_eq!(v["report"]["solver"], json!("lp-mst"));
    assert_eq!(v["guarantee"]["eps"], json!(1.0));
}

#[test]
fn a_user_level_fit_serialises_its_accounting_and_halt() {
    // User-wise DP-SGD: the noise and the accountant's report.
    let theta = theta_star(3, 1.0, true, &mut simulation_rng(5)).unwrap();
    let ud = btl_users_equal(
        40,
        6,
        &theta,
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(6),
    )
    .unwrap();
    let mut opts = UserDpSgdOptions::new(2.0, 1e-5, 8.0, 50, 1.0, 0.5);
    opts.set = FeasibleSet::theta_b(2.0).unwrap();
    let f = user_dpsgd(ud.data.view().unwrap(), &ud.users, &opts, &mut NoiseRng::seeded(7)).unwrap();
    let v = serde_json::to_value(&f).unwrap();
    let d = &v["detail"];
    assert_eq!(d["noise_multiplier"], json!(f.detail.noise_multiplier));
    assert_eq!(d["noise_std"], json!(f.detail.noise_std));
    let a = &f.detail.accounting;
    assert_eq!(
        d["accounting"],
        json!({
            "accounting": "rdp",
            "epsilon": a.epsilon,
            "order": a.order,
            "rdp_at_order": a.rdp,
            "delta": 1e-5,
            "sampling_rate": a.sampling_rate,
            "noise_multiplier": f.detail.noise_multiplier,
            "steps": 50,
        })
    );
    assert_eq!(d["halted"], Value::Null);
    assert_eq!(v["theta"], json!(f.theta));
    assert_eq!(
        (&v["guarantee"]["unit"], &v["guarantee"]["eps"]),
        (&json!("user"), &json!(a.epsilon))
    );
    // AUP-RLHF with a tiny threshold τ: AboveThreshold halts at the first step of phase 1.
    let theta = theta_star(3, 1.0, true, &mut simulation_rng(9)).unwrap();
    let ud = btl_users_equal(
        200,
        5,
        &theta,
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(10),
    )
    .unwrap();
    let mut o = AupOptions::new(4.0, 1e-5, 0.5);
    o.steps = 30;
    o.set = FeasibleSet::theta_b(1.0).unwrap();
    o.tau = Some(1e-9);
    let h = aup_rlhf(ud.data.view().unwrap(), &ud.users, &o, &mut NoiseRng::seeded(2)).unwrap();
    assert_eq!(h.detail.halted, Some((1, 1)));
    let v = serde_json::to_value(&h).unwrap();
    assert_eq!(v["detail"]["halted"], json!({"phase": 1, "step": 1}));
    assert_eq!(v["detail"]["noise_multiplier"], json!(h.detail.noise_multiplier));
}

//! `privpref fit --central` and `privpref covariance`: JSON with the guarantee, typed one-line
//! errors, the fixed-w acceptance through `fit --ridge --linear-term`.

use crate::{common, support};
use support::{run, TempDir};

use privpref::data::npy;
use std::process::Output;

/// Simulated BTL data (n = 200, d = 3) written to `x.npy`, `y.npy`; returns `max‖x_i‖`.
fn write_data(dir: &TempDir) -> f64 {
    use privpref::mechanism::simulation_rng;
    let theta = privpref::sim::theta_star(3, 0.8, true, &mut simulation_rng(1)).unwrap();
    let data = privpref::sim::btl_pairs(200, &theta, &mut simulation_rng(2)).unwrap();
    npy::write_f64(dir.arg("x.npy"), &data.x, &[200, 3]).unwrap();
    npy::write_u8(dir.arg("y.npy"), &data.y).unwrap();
    data.view().unwrap().max_row_norm(false)
}

fn args(dir: &TempDir, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "fit",
        "--x",
        &dir.arg("x.npy"),
        "--y",
        &dir.arg("y.npy"),
        "--radius",
        "2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn one_line_error(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "stderr: {err}");
    assert!(err.contains(needle), "expected `{needle}` in: {err}");
    assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
}

#[test]
fn fit_central_writes_the_guarantee() {
    let dir = TempDir::new("ok");
    let m = write_data(&dir);
    let l = format!("{}", m / 2.0 + 0.01);
    let a = args(
        &dir,
        &[
            "--loss",
            "mle",
            "--central",
            "--eps",
            "0.5",
            "--delta",
            "1e-4",
            "--feature-bound",
            &l,
            "--beta",
            "3",
            "--seed",
            "9",
        ],
    );
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let g = &v["guarantee"];
    assert_eq!(g["eps"], 0.5);
    assert_eq!(g["delta"], 1e-4);
    assert_eq!(g["model"], "central");
    assert_eq!(g["unit"], "item");
    assert_eq!(g["neighbouring"], "label-change");
    assert_eq!(g["seed"], 9);
    assert_eq!(g["holds_for_real_data"], false);
    assert!(v["kkt_residual"].as_f64().unwrap() <= 1e-9);
    assert_eq!(v["beta"], 3.0);
    assert_eq!(v["theta"].as_array().unwrap().len(), 3);
    // Reproducible with the seed; the seed warning is on stderr.
    let o2 = run(&a);
    let v2: serde_json::Value = serde_json::from_slice(&o2.stdout).unwrap();
    assert_eq!(v["theta"], v2["theta"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("simulation only"));
    // Without --seed: CSPRNG, a different draw.
    let a3 = args(
        &dir,
        &[
            "--loss",
            "mle",
            "--central",
            "--eps",
            "0.5",
            "--delta",
            "1e-4",
            "--feature-bound",
            &l,
        ],
    );
    let o3 = run(&a3);
    assert_eq!(o3.status.code(), Some(0));
    let v3: serde_json::Value = serde_json::from_slice(&o3.stdout).unwrap();
    assert_eq!(v3["guarantee"]["holds_for_real_data"], true);
    assert_ne!(v["theta"], v3["theta"]);
    // The plain MLE records "guarantee": null; so does debiased RR on labels without a
    // provenance (these are the clear labels); with an asserted provenance it is local.
    let o4 = run(&args(&dir, &["--loss", "mle"]));
    let v4: serde_json::Value = serde_json::from_slice(&o4.stdout).unwrap();
    assert!(v4["guarantee"].is_null());
    let o5 = run(&args(&dir, &["--loss", "debiased-rr", "--eps", "1"]));
    let v5: serde_json::Value = serde_json::from_slice(&o5.stdout).unwrap();
    assert!(v5["guarantee"].is_null() && v5["provenance"].is_null());
    assert!(v5["no_guarantee_reason"].as_str().unwrap().contains("no provenance"));
    let o6 = run(&args(
        &dir,
        &["--loss", "debiased-rr", "--eps", "1", "--assert-provenance", "rr:1"],
    ));
    let v6: serde_json::Value = serde_json::from_slice(&o6.stdout).unwrap();
    assert_eq!(v6["guarantee"]["model"], "local");
    assert_eq!(v6["provenance"]["origin"], "asserted-by-caller");
}

/// `--horizon H` (trajectory comparisons): `--feature-bound` is the per-step `L` and the noise
/// is calibrated to `H·L`; the JSON records both and the guarantee's bound is `H·L`.
#[test]
fn fit_central_trajectory_horizon_scales_the_bound() {
    let dir = TempDir::new("horizon");
    let m = write_data(&dir);
    let step: f64 = format!("{}", (m / 2.0 + 0.01) / 3.0).parse().unwrap();
    let step_s = format!("{step}");
    let run_with = |extra: &[&str]| {
        let mut base: Vec<&str> = vec![
            "--loss",
            "mle",
            "--central",
            "--eps",
            "0.5",
            "--delta",
            "1e-4",
            "--beta",
            "3",
            "--seed",
            "4",
        ];
        base.extend_from_slice(extra);
        run(&args(&dir, &base))
    };
    let o = run_with(&["--feature-bound", &step_s, "--horizon", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let bound = privpref::data::FeatureBound::trajectory(3, step).unwrap();
    let want = privpref::privacy::objpert_noise_std(0.5, 1e-4, bound).unwrap();
    assert_eq!(v["noise_std"].as_f64().unwrap(), want);
    assert_eq!(v["horizon"], 3);
    assert_eq!(v["feature_bound_per_step"].as_f64().unwrap(), step);
    assert_eq!(v["guarantee"]["feature_bound"].as_f64().unwrap(), 3.0 * step);
    // The per-step bound alone (horizon 1) does not cover these rows: refused, not under-noised.
    one_line_error(&run_with(&["--feature-bound", &step_s]), "exceeds 2L");
    one_line_error(&run_with(&["--feature-bound", &step_s, "--horizon", "0"]), "horizon");
}

#[test]
fn fit_central_refusal_and_private_mle() {
    let dir = TempDir::new("refuse");
    let m = write_data(&dir);
    let l = format!("{}", m / 2.0 + 0.01);
    let base = [
        "--loss",
        "mle",
        "--central",
        "--eps",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        &l,
        "--seed",
        "1",
    ];
    let mut a = args(&dir, &base);
    a.extend(["--kkt-tol".to_string(), "1e-300".to_string()]);
    one_line_error(&run(&a), "privacy guarantee refused");
    a.push("--allow-unguaranteed".into());
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["guarantee"].is_null());
    assert!(v["refusal"].as_str().unwrap().contains("exact minimiser"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("WITHOUT a privacy guarantee"));
    // The private MLE, anon. 2025, Algorithm 1 (δ ≤ 1/n² = 2.5e-5).
    let mut a = args(&dir, &base);
    a.extend(
        ["--mechanism", "private-mle", "--constraint", "ball"]
            .iter()
            .map(|s| s.to_string()),
    );
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["guarantee"]["eps"], 0.5);
    assert_eq!(v["guarantee"]["neighbouring"], "replace-record");
    assert!(v["gap_certificate"].as_f64().unwrap() < v["accuracy"].as_f64().unwrap());
}

#[test]
fn fit_central_bad_input_is_one_line() {
    let dir = TempDir::new("bad");
    let m = write_data(&dir);
    let small = format!("{}", m / 4.0);
    let ok = format!("{}", m / 2.0 + 0.01);
    let c = |extra: &[&str]| {
        let mut base: Vec<&str> = vec!["--loss", "mle", "--central", "--eps", "1", "--delta", "1e-3"];
        base.extend_from_slice(extra);
        run(&args(&dir, &base))
    };
    one_line_error(&c(&["--feature-bound", &small]), "exceeds 2L");
    one_line_error(&c(&[]), "--central needs --feature-bound");
    one_line_error(&c(&["--feature-bound", &ok, "--beta", "0"]), "beta");
    one_line_error(&c(&["--feature-bound", &ok, "--beta", "-2"]), "beta");
    one_line_error(&c(&["--feature-bound", "-1"]), "feature-bound");
    one_line_error(&c(&["--feature-bound", &ok, "--ridge", "1"]), "--ridge");
    one_line_error(&c(&["--feature-bound", &ok, "--solver", "lbfgs"]), "exact solver");
    one_line_error(
        &c(&["--feature-bound", &ok, "--mechanism", "foo"]),
        "unknown central mechanism",
    );
    one_line_error(
        &c(&["--feature-bound", &ok, "--output-radius", "1e-6"]),
        "output perturbation needs",
    );
    one_line_error(&c(&["--feature-bound", &ok, "--alpha", "1"]), "private-mle");
    one_line_error(
        &c(&[
            "--feature-bound",
            &ok,
            "--mechanism",
            "private-mle",
            "--constraint",
            "ball",
        ]),
        "delta <= 1/n^2",
    );
    // Central options without --central, and --central with another loss.
    one_line_error(
        &run(&args(&dir, &["--loss", "mle", "--delta", "1e-3"])),
        "--delta applies only with --central",
    );
    one_line_error(
        &run(&args(
            &dir,
            &[
                "--loss",
                "debiased-rr",
                "--central",
                "--eps",
                "1",
                "--delta",
                "1e-3",
                "--feature-bound",
                &ok,
            ],
        )),
        "--loss mle",
    );
    one_line_error(
        &run(&args(
            &dir,
            &["--loss", "mle", "--central", "--delta", "1e-3", "--feature-bound", &ok],
        )),
        "--central needs --eps",
    );
}

/// Acceptance through the CLI: `fit --ridge β --linear-term w` on the T8 data returns θ° to
/// 1e-8 (the mpmath fixture), i.e. the objective-perturbation minimiser for a fixed w.
#[test]
fn fixed_linear_term_through_the_cli_matches_the_reference() {
    let dir = TempDir::new("t8");
    let fx = common::fixture("t8-objpert-mle-thetab");
    npy::write_f64(dir.arg("x.npy"), &fx.x, &[fx.n, fx.d]).unwrap();
    npy::write_u8(dir.arg("y.npy"), &fx.y).unwrap();
    let w = fx.linear_term.clone().unwrap();
    npy::write_f64(dir.arg("w.npy"), &w, &[fx.d]).unwrap();
    let a: Vec<String> = [
        "fit",
        "--x",
        &dir.arg("x.npy"),
        "--y",
        &dir.arg("y.npy"),
        "--loss",
        "mle",
        "--radius",
        &fx.radius.unwrap().to_string(),
        "--ridge",
        &fx.ridge.to_string(),
        "--linear-term",
        &dir.arg("w.npy"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let th: Vec<f64> = v["theta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    let want = fx.theta.unwrap();
    let e = th.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(e <= 1e-8, "{th:?} vs {want:?}");
    // --central refuses a given linear term.
    let ridge_at = a.iter().position(|s| s == "--ridge").unwrap();
    let mut b = a.clone();
    b.drain(ridge_at..ridge_at + 2);
    b.extend(
        ["--central", "--eps", "1", "--delta", "1e-3", "--feature-bound", "2"]
            .iter()
            .map(|s| s.to_string()),
    );
    one_line_error(&run(&b), "--linear-term is not allowed");
}

#[test]
fn covariance_command() {
    let dir = TempDir::new("cov");
    let m = write_data(&dir);
    let l = format!("{}", m / 2.0 + 0.01);
    let a: Vec<String> = [
        "covariance",
        "--x",
        &dir.arg("x.npy"),
        "--eps",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        &l,
        "--seed",
        "4",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = v["covariance"].as_array().unwrap();
    assert_eq!(c.len(), 3);
    for (i, row) in c.iter().enumerate() {
        for (j, v) in row.as_array().unwrap().iter().enumerate() {
            assert_eq!(*v, c[j][i]);
        }
    }
    assert_eq!(v["guarantee"]["eps"], 0.5);
    assert_eq!(v["guarantee"]["delta"], 5e-6);
    let mut bad = a.clone();
    bad[6] = "1e-3".into(); // δ > 1/n²
    one_line_error(&run(&bad), "1/n^2");
    let mut bad = a.clone();
    bad[4] = "2".into(); // ε > 1
    one_line_error(&run(&bad), "eps <= 1");
    let mut bad = a;
    bad.extend(["--relation".to_string(), "foo".to_string()]);
    one_line_error(&run(&bad), "unknown relation");
}

/// A subnormal ε: objective perturbation's noise L·√(8 ln(2/δ) + 4ε)/ε overflows, which is said
/// of ε (with the ε below which the noise is not finite), not of a linear term the user never
/// gave. (ε = 1e-300 calibrates: `fit_central_at_a_tiny_eps_reports_a_consistent_certificate`.)
#[test]
fn fit_central_refuses_an_eps_too_small_to_calibrate() {
    let dir = TempDir::new("central-tiny-eps");
    let l = write_data(&dir) / 2.0 + 1e-9;
    let bound = format!("{l}");
    let o = run(&args(
        &dir,
        &[
            "--loss",
            "mle",
            "--central",
            "--eps",
            "1e-310",
            "--delta",
            "1e-6",
            "--feature-bound",
            &bound,
            "--seed",
            "1",
        ],
    ));
    one_line_error(&o, "invalid parameter `eps`: 1e-310 is too small to calibrate");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("linear-term") && err.contains("it is finite only for eps above about"),
        "{err}"
    );
}

/// At a tiny ε the noise term dwarfs the data: the solver's absolute test (in the units of the
/// gradient, which the noise sets) cannot be met and it stops at the precision limit, while the
/// release's own certificate (the projected-gradient residual, in the units of θ) holds. The
/// report is then consistent: a residual within its tolerance is a converged fit with its
/// guarantee, exit 0; `converged` is never false beside a guarantee.
#[test]
fn fit_central_at_a_tiny_eps_reports_a_consistent_certificate() {
    let dir = TempDir::new("central-small-eps");
    let l = write_data(&dir) / 2.0 + 1e-9;
    let bound = format!("{l}");
    for eps in ["1", "1e-8", "1e-100", "1e-300"] {
        let o = run(&args(
            &dir,
            &[
                "--loss",
                "mle",
                "--central",
                "--eps",
                eps,
                "--delta",
                "1e-6",
                "--feature-bound",
                &bound,
                "--seed",
                "1",
            ],
        ));
        assert_eq!(
            o.status.code(),
            Some(0),
            "eps {eps}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v = support::json_of(&o);
        let (r, tol) = (v["kkt_residual"].as_f64().unwrap(), v["kkt_tol"].as_f64().unwrap());
        assert!(r <= tol, "eps {eps}: {r} > {tol}");
        assert_eq!(v["converged"], true, "eps {eps}: {v}");
        assert_eq!(v["termination"], "converged", "eps {eps}");
        assert!(v["guarantee"].is_object(), "eps {eps}");
    }
}

//! `privpref policy`: JSON output (actions, Ĵ, gap, guarantee of θ̂), the rules for λ and Γ
//! (Zhou, Wu & Orabona 2025 for local fits with --x, the anonymous 2025 paper for private-mle fits
//! with --covariance, explicit
//! overrides), the greedy switch, and one-line errors with a non-zero exit for invalid input.

use crate::support;
use privpref::data::npy;
use serde_json::Value;
use std::process::Output;
use support::{json_of, run, TempDir};

fn one_line_error(o: &Output) -> String {
    assert!(
        !o.status.success(),
        "expected failure, got success: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let e = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(e.trim_end().lines().count(), 1, "stderr must be one line: {e:?}");
    assert!(e.starts_with("privpref: "), "{e}");
    e
}

/// Bandit data: pairwise X, y (fit input) and public states S (n × A × d).
fn setup(dir: &TempDir) {
    use privpref::mechanism::simulation_rng;
    use privpref::sim::bandit::BanditConfig;
    let cfg = BanditConfig {
        d: 4,
        actions: 5,
        rare_actions: 2,
        rare_dim: 1,
        rare_weight: 0.8,
        rare_mean: 0.5,
    };
    let theta = [0.5, -0.3, 0.2, 0.4];
    let data = cfg.preferences(2000, 0.05, &theta, &mut simulation_rng(1)).unwrap();
    npy::write_f64(dir.arg("x.npy"), &data.x, &[2000, 4]).unwrap();
    npy::write_u8(dir.arg("y.npy"), &data.y).unwrap();
    let states = cfg.states(50, &mut simulation_rng(2)).unwrap();
    npy::write_f64(dir.arg("s.npy"), &states, &[50, 5, 4]).unwrap();
}

/// `privpref fit` on the setup's data with a ball of radius 1, the JSON written to `out`.
fn run_fit(dir: &TempDir, out: &str, extra: &[&str]) -> Output {
    let mut a = vec![
        "fit".to_string(),
        "--x".into(),
        dir.arg("x.npy"),
        "--y".into(),
        dir.arg("y.npy"),
        "--constraint".into(),
        "ball".into(),
        "--radius".into(),
        "1".into(),
        "--out".into(),
        dir.arg(out),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    run(&a)
}

/// [`run_fit`] to `fit.json`, which must succeed.
fn fit(dir: &TempDir, extra: &[&str]) {
    let o = run_fit(dir, "fit.json", extra);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn local_fit_pessimistic_and_greedy() {
    let dir = TempDir::new("local");
    setup(&dir);
    fit(&dir, &["--loss", "mle"]);
    let (th, s, x) = (dir.arg("fit.json"), dir.arg("s.npy"), dir.arg("x.npy"));
    // At this small n the explicit radius contains θ = 0: no policy is certifiably better
    // than v = 0 and Frank–Wolfe crawls to the kink of Ĵ at g = 0. It stops at --max-passes
    // with exit code 3, the JSON written with its certified bounds.
    let out0 = dir.arg("p0.json");
    let o = run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &s,
        "--x",
        &x,
        "--max-passes",
        "50",
        "--out",
        &out0,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    one_line_error(&o);
    let v0: Value = serde_json::from_str(&std::fs::read_to_string(&out0).unwrap()).unwrap();
    assert_eq!(v0["termination"], "max-passes");
    assert_eq!(v0["converged"], false);
    assert!(v0["upper_bound"].as_f64().unwrap() <= 0.0 && v0["stochastic_value"].as_f64().unwrap() <= 0.0);
    // A tighter (non-guaranteed) set: a certified optimum.
    let v = json_of(&run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &s,
        "--x",
        &x,
        "--radius-multiplier",
        "0.3",
        "--strict-gap",
    ]));
    assert_eq!(v["policy"], "pessimistic");
    assert_eq!(v["radius_multiplier"], 0.3);
    assert_eq!(v["converged"], true);
    assert!(v["rel_gap"].as_f64().unwrap() <= 1e-6);
    assert_eq!(v["actions"].as_array().unwrap().len(), 50);
    assert!(v["actions"].as_array().unwrap().iter().all(|a| a.as_u64().unwrap() < 5));
    assert!(v["rule"].as_str().unwrap().contains("Zhou, Wu & Orabona (2025)"));
    assert!(v["guarantee"].is_null(), "plain MLE has no guarantee");
    assert_eq!(v["set_used"], "ball");
    let ub = v["upper_bound"].as_f64().unwrap();
    assert!(v["stochastic_value"].as_f64().unwrap() <= ub + 1e-12);
    assert!(
        v["value"].as_f64().unwrap()
            >= v["greedy_value"].as_f64().unwrap() - 1e-9 - v["rounding_bound"].as_f64().unwrap()
    );
    // Greedy switch.
    let g = json_of(&run(&["policy", "--theta", &th, "--states", &s, "--x", &x, "--greedy"]));
    assert_eq!(g["policy"], "greedy");
    assert_eq!(g["eta_switch"], 0);
    // Explicit λ and Γ need no --x; with the debiased RR fit (on labels asserted to be
    // randomised at ε = 1), the guarantee is carried over.
    fit(
        &dir,
        &["--loss", "debiased-rr", "--eps", "1", "--assert-provenance", "rr:1"],
    );
    let out = dir.arg("p.json");
    let acts = dir.arg("a.npy");
    let o = run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &s,
        "--lambda",
        "0.1",
        "--confidence-radius",
        "0.2",
        "--out",
        &out,
        "--actions-out",
        &acts,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["confidence_radius"], 0.2);
    assert_eq!(v["guarantee"]["model"], "local");
    assert_eq!(v["guarantee"]["eps"], 1.0);
    assert!(std::path::Path::new(&acts).exists());
}

#[test]
fn private_mle_fit_needs_the_private_covariance() {
    let dir = TempDir::new("central");
    setup(&dir);
    fit(
        &dir,
        &[
            "--loss",
            "mle",
            "--central",
            "--mechanism",
            "private-mle",
            "--eps",
            "1",
            "--delta",
            "1e-7",
            "--feature-bound",
            "1",
            "--seed",
            "3",
        ],
    );
    let cov = dir.arg("cov.json");
    let o = run(&[
        "covariance",
        "--x",
        &dir.arg("x.npy"),
        "--eps",
        "1",
        "--delta",
        "1e-7",
        "--feature-bound",
        "1",
        "--seed",
        "4",
        "--out",
        &cov,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (th, s) = (dir.arg("fit.json"), dir.arg("s.npy"));
    let out = dir.arg("p.json");
    let v = support::policy_with_covariance(&th, &s, &cov, "100", &out);
    assert!(v["rule"].as_str().unwrap().contains("private MLE (anon., 2025)"));
    assert_eq!(v["guarantee"]["model"], "central");
    assert!(v["confidence_radius"].as_f64().unwrap() > 0.0);
    // --x is refused for a standard-DP fit (the features are private).
    let e = one_line_error(&run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &s,
        "--x",
        &dir.arg("x.npy"),
    ]));
    assert!(e.contains("private"), "{e}");
    // Without the covariance: a clear error.
    let e = one_line_error(&run(&["policy", "--theta", &th, "--states", &s]));
    assert!(e.contains("--covariance"), "{e}");
}

#[test]
fn invalid_inputs_are_one_line_errors() {
    let dir = TempDir::new("errors");
    setup(&dir);
    fit(&dir, &["--loss", "mle"]);
    let (th, s, x) = (dir.arg("fit.json"), dir.arg("s.npy"), dir.arg("x.npy"));
    // States of the wrong dimension.
    npy::write_f64(dir.arg("s3.npy"), &[0.0; 30], &[2, 5, 3]).unwrap();
    let e = one_line_error(&run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &dir.arg("s3.npy"),
        "--x",
        &x,
    ]));
    assert!(e.contains("d = 3"), "{e}");
    // A 2-D states file.
    let e = one_line_error(&run(&["policy", "--theta", &th, "--states", &x, "--x", &x]));
    assert!(e.contains("3-D"), "{e}");
    // NaN in the states names the state, action and feature (entry 27 of 2 × 5 × 4 is
    // [1, 1, 3]), not a flattened column.
    let mut bad = vec![0.1; 2 * 5 * 4];
    bad[27] = f64::NAN;
    npy::write_f64(dir.arg("nan.npy"), &bad, &[2, 5, 4]).unwrap();
    let e = one_line_error(&run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &dir.arg("nan.npy"),
        "--x",
        &x,
    ]));
    assert!(
        e.contains("invalid data in states at state 1, action 1, feature 3: feature is NaN"),
        "{e}"
    );
    assert!(!e.contains("column"), "{e}");
    // Missing --x for the Zhou, Wu & Orabona (2025) rule.
    let e = one_line_error(&run(&["policy", "--theta", &th, "--states", &s]));
    assert!(e.contains("--x"), "{e}");
    // Bad JSON, missing file, negative radius, λ = 0 with Σ = 0, reference out of range.
    std::fs::write(dir.arg("bad.json"), "{not json").unwrap();
    one_line_error(&run(&[
        "policy",
        "--theta",
        &dir.arg("bad.json"),
        "--states",
        &s,
        "--x",
        &x,
    ]));
    one_line_error(&run(&[
        "policy",
        "--theta",
        &dir.arg("none.json"),
        "--states",
        &s,
        "--x",
        &x,
    ]));
    let e = one_line_error(&run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &s,
        "--lambda",
        "0.1",
        "--confidence-radius",
        "-1",
    ]));
    assert!(e.contains("confidence-radius"), "{e}");
    let e = one_line_error(&run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &s,
        "--lambda",
        "0",
        "--confidence-radius",
        "0.1",
    ]));
    assert!(e.contains("positive definite"), "{e}");
    npy::write_u8(dir.arg("ref.npy"), &[7; 50]).unwrap();
    let e = one_line_error(&run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &s,
        "--x",
        &x,
        "--reference-actions",
        &dir.arg("ref.npy"),
    ]));
    assert!(e.contains("label 7"), "{e}");
    let e = one_line_error(&run(&[
        "policy", "--theta", &th, "--states", &s, "--x", &x, "--set", "cube",
    ]));
    assert!(e.contains("constraint"), "{e}");
    // Exit code 2 for a malformed command line.
    let o = run(&["policy", "--theta", &th]);
    assert_eq!(o.status.code(), Some(2));
}

/// `M⁻¹g` by Gaussian elimination with partial pivoting (independent of the library's
/// eigendecomposition).
fn solve(mut m: Vec<f64>, mut g: Vec<f64>, d: usize) -> Vec<f64> {
    for c in 0..d {
        let p = (c..d)
            .max_by(|&i, &j| m[i * d + c].abs().total_cmp(&m[j * d + c].abs()))
            .unwrap();
        for j in 0..d {
            m.swap(c * d + j, p * d + j);
        }
        g.swap(c, p);
        for r in c + 1..d {
            let f = m[r * d + c] / m[c * d + c];
            for j in c..d {
                m[r * d + j] -= f * m[c * d + j];
            }
            g[r] -= f * g[c];
        }
    }
    for c in (0..d).rev() {
        let s: f64 = (c + 1..d).map(|j| m[c * d + j] * g[j]).sum();
        g[c] = (g[c] - s) / m[c * d + c];
    }
    g
}

/// `--empirical-radius` (sandwich on the fit's labels) and the `diagnostics` fields: the
/// radius is labelled not guaranteed, smaller than the explicit one it reports, and the coverage
/// term `‖E_ρφ(π†) − v‖_{M⁻¹}` of both comparators matches an independent computation from the
/// files (`Σ̂` from X, `λ` from the JSON, `v = 0`), with `subopt_bound = 2Γ·coverage_term`.
#[test]
fn empirical_radius_and_diagnostics() {
    let dir = TempDir::new("empirical");
    setup(&dir);
    fit(&dir, &["--loss", "mle"]);
    let (th, s, x, y) = (
        dir.arg("fit.json"),
        dir.arg("s.npy"),
        dir.arg("x.npy"),
        dir.arg("y.npy"),
    );
    let v = json_of(&run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &s,
        "--x",
        &x,
        "--y",
        &y,
        "--empirical-radius",
        "--empirical-draws",
        "2000",
    ]));
    assert!(v["rule"].as_str().unwrap().contains("not guaranteed"), "{}", v["rule"]);
    assert_eq!(v["radius_kind"], "empirical (asymptotic/empirical, not guaranteed)");
    assert_eq!(v["diagnostics"]["radius_guaranteed"], false);
    let gamma = v["confidence_radius"].as_f64().unwrap();
    let explicit = v["radius_terms"][0]["value"].as_f64().unwrap();
    assert!(gamma > 0.0 && gamma < explicit, "{gamma} vs explicit {explicit}");
    // Independent coverage terms.
    let (xs, n, d) = {
        let m = npy::load_matrix(dir.arg("x.npy")).unwrap();
        let (n, d) = (m.n(), m.d());
        let mut buf = vec![0.0; d];
        let xs: Vec<f64> = (0..n).flat_map(|r| m.features().row(r, d, &mut buf).to_vec()).collect();
        (xs, n, d)
    };
    let lambda = v["lambda"].as_f64().unwrap();
    let mut mm = vec![0.0; d * d];
    for r in 0..n {
        for i in 0..d {
            for j in 0..d {
                mm[i * d + j] += xs[r * d + i] * xs[r * d + j] / n as f64;
            }
        }
    }
    for i in 0..d {
        mm[i * d + i] += lambda;
    }
    let (phi, ns, na, _) = npy::read_array3(dir.arg("s.npy")).unwrap();
    for (key, acts) in [
        ("comparator_returned_policy", v["actions"].clone()),
        ("comparator_greedy", Value::Null),
    ] {
        let dg = &v["diagnostics"][key];
        let cov = dg["coverage_term"].as_f64().unwrap();
        assert!((dg["subopt_bound"].as_f64().unwrap() - 2.0 * gamma * cov).abs() <= 1e-12 * (1.0 + cov));
        if acts.is_null() {
            continue;
        }
        let acts: Vec<usize> = acts
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_u64().unwrap() as usize)
            .collect();
        let mut g = vec![0.0; d];
        for (st, &a) in acts.iter().enumerate() {
            for j in 0..d {
                g[j] += phi[(st * na + a) * d + j] / ns as f64;
            }
        }
        let mg = solve(mm.clone(), g.clone(), d);
        let want = g.iter().zip(&mg).map(|(a, b)| a * b).sum::<f64>().sqrt();
        assert!((cov - want).abs() <= 1e-9 * (1.0 + want), "{key}: {cov} vs {want}");
    }
    // The explicit radius is marked guaranteed.
    let e = json_of(&run(&["policy", "--theta", &th, "--states", &s, "--x", &x, "--greedy"]));
    assert_eq!(e["diagnostics"]["radius_guaranteed"], true);
    assert_eq!(e["radius_kind"], "explicit");
    // Errors: no labels, labels without the flag, both radii.
    let err = one_line_error(&run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &s,
        "--x",
        &x,
        "--empirical-radius",
    ]));
    assert!(err.contains("--y"), "{err}");
    let err = one_line_error(&run(&["policy", "--theta", &th, "--states", &s, "--x", &x, "--y", &y]));
    assert!(err.contains("--empirical-radius"), "{err}");
    let err = one_line_error(&run(&[
        "policy",
        "--theta",
        &th,
        "--states",
        &s,
        "--x",
        &x,
        "--y",
        &y,
        "--empirical-radius",
        "--confidence-radius",
        "0.5",
    ]));
    assert!(err.contains("not both"), "{err}");
}

/// A policy certificate stands on a certified θ̂: a fit that stopped early is refused unless the
/// caller accepts it explicitly (and then the JSON and stderr say so).
#[test]
fn an_uncertified_fit_is_refused_unless_accepted_explicitly() {
    let dir = TempDir::new("uncertified");
    setup(&dir);
    // One Newton iteration does not certify the minimiser: exit 3, the JSON written.
    let o = run_fit(
        &dir,
        "early.json",
        &["--loss", "mle", "--solver", "newton", "--max-iter", "1"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    let (s, x) = (dir.arg("s.npy"), dir.arg("x.npy"));
    let policy = |theta: &str| {
        let args = [
            "policy",
            "--theta",
            theta,
            "--states",
            &s,
            "--x",
            &x,
            "--confidence-radius",
            "0.05",
        ];
        args.map(String::from).to_vec()
    };
    let e = one_line_error(&run(&policy(&dir.arg("early.json"))));
    assert!(
        e.contains("is not certified") && e.contains("--allow-uncertified-theta"),
        "{e}"
    );
    let mut accepted = policy(&dir.arg("early.json"));
    accepted.push("--allow-uncertified-theta".into());
    let o = run(&accepted);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["theta_certified"], false);
    assert!(String::from_utf8_lossy(&o.stderr).contains("conditional on an uncertified"));
    // A certified fit says so.
    fit(&dir, &["--loss", "mle"]);
    let v = json_of(&run(&policy(&dir.arg("fit.json"))));
    assert_eq!(v["theta_certified"], true);
}

/// θ̂ entries near f64::MAX overflow φᵀθ: the run has no bound, so it is never `converged`.
#[test]
fn a_theta_whose_values_overflow_is_not_a_converged_policy() {
    let dir = TempDir::new("overflow-theta");
    setup(&dir);
    fit(&dir, &["--loss", "mle"]);
    let mut f: Value = serde_json::from_str(&std::fs::read_to_string(dir.arg("fit.json")).unwrap()).unwrap();
    f["theta"] = serde_json::json!([1e308, -1e308, 1e308, 1e308]);
    std::fs::write(dir.arg("huge.json"), f.to_string()).unwrap();
    let out = dir.arg("p.json");
    let o = run(&[
        "policy",
        "--theta",
        &dir.arg("huge.json"),
        "--states",
        &dir.arg("s.npy"),
        "--set",
        "none",
        "--confidence-radius",
        "0.05",
        "--lambda",
        "1",
        "--out",
        &out,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["converged"], false, "{v}");
    assert_eq!(v["termination"], "non-finite", "{v}");
}

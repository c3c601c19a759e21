//! Label provenance from `privatize` to `fit`:
//!
//! * `privatize` writes `OUT.provenance.json` (mechanism, ε, K, generator, the labels file's size
//!   and SHA-256, signed); `fit` reads and verifies it and attaches the local guarantee it records
//!   (simulation-only for `--seed`), with the same θ̂ as the library's `fit_privatized`
//!   (forgeries: `cli_signed_provenance.rs`);
//! * without a side-car: `"guarantee": null`, `"provenance": null` and a `no_guarantee_reason`
//!   (exit 0, the same θ̂);
//! * a side-car that does not match the labels file (labels edited after `privatize`, or a
//!   side-car copied next to other labels) is an error, never used;
//! * a side-car at another ε than `--eps` (or K) is an error;
//! * `--assert-provenance` gives a guarantee that says "asserted by the caller".

use crate::support;
use privpref::data::{npy, GroupLabels, GroupView, PairwiseView};
use privpref::estimator::{fit_kwise_privatized, fit_privatized, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::{GroupLossSpec, LossSpec};
use privpref::mechanism::{KaryRr, RandomizedResponse};
use privpref::privacy::NoiseRng;
use privpref::sim::{btl_pairs, pl_groups, theta_star};
use serde_json::Value;
use std::process::Output;
use support::{json_of, run, TempDir};

const N: usize = 300;
const D: usize = 3;

fn theta_of(v: &Value) -> Vec<f64> {
    v["theta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect()
}

/// Exit 1 with one stderr line containing every `needle`.
fn fails_with(o: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
    assert!(o.stdout.is_empty(), "no JSON on failure");
}

fn write_pairs(dir: &TempDir) -> privpref::data::PairwiseData {
    let theta = theta_star(D, 1.0, true, &mut privpref::mechanism::simulation_rng(1)).unwrap();
    let data = btl_pairs(N, &theta, &mut privpref::mechanism::simulation_rng(2)).unwrap();
    npy::write_f64(dir.path("x.npy"), &data.x, &[N, D]).unwrap();
    npy::write_u8(dir.path("y.npy"), &data.y).unwrap();
    data
}

fn privatize(dir: &TempDir, out: &str, rest: &[&str]) -> Value {
    let mut a = vec![
        "privatize".to_string(),
        "--y".into(),
        dir.arg("y.npy"),
        "--out".into(),
        dir.arg(out),
    ];
    a.extend(rest.iter().map(|s| s.to_string()));
    json_of(&run(&a))
}

fn fit(dir: &TempDir, y: &str, rest: &[&str]) -> Output {
    let mut a = vec![
        "fit".to_string(),
        "--x".into(),
        dir.arg("x.npy"),
        "--y".into(),
        dir.arg(y),
    ];
    a.extend(["--radius", "2"].iter().map(|s| s.to_string()));
    a.extend(rest.iter().map(|s| s.to_string()));
    run(&a)
}

#[test]
fn privatize_then_fit_carries_the_provenance() {
    let dir = TempDir::new("roundtrip");
    let data = write_pairs(&dir);
    // Seeded: the side-car records the simulation generator.
    let p = privatize(&dir, "ys.npy", &["--eps", "1", "--seed", "5"]);
    let side = dir.path("ys.npy.provenance.json");
    assert_eq!(p["provenance_file"], side.to_str().unwrap());
    assert_eq!(p["provenance"]["simulation_only"], true);
    assert_eq!(p["rng"], "xoshiro256++ seeded (simulation only)");
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    assert_eq!(rec["format"], "privpref-label-provenance");
    assert_eq!(rec["mechanism"], "rr");
    assert_eq!(rec["eps"], 1.0);
    assert_eq!(rec["generator"], "simulation");
    assert_eq!(rec["seed"], 5);
    assert_eq!(rec["n"], N);
    let bytes = std::fs::read(dir.path("ys.npy")).unwrap();
    assert_eq!(rec["labels_bytes"], bytes.len());
    assert_eq!(rec["labels_sha256"].as_str().unwrap().len(), 64);

    let v = json_of(&fit(&dir, "ys.npy", &["--loss", "debiased-rr", "--eps", "1"]));
    let g = &v["guarantee"];
    assert_eq!(g["eps"], 1.0);
    assert_eq!(g["delta"], 0.0);
    assert_eq!(g["model"], "local");
    assert_eq!(g["unit"], "item");
    assert_eq!(g["seed"], 5);
    assert_eq!(g["holds_for_real_data"], false);
    assert!(g["noise"].as_str().unwrap().contains("simulation only"));
    assert_eq!(v["provenance"]["origin"], "signed-record");
    assert_eq!(v["provenance"]["verified_by"], p["signed_by"]);
    assert_eq!(v["provenance"]["mechanism"], "rr");
    assert_eq!(v["provenance"]["eps"], 1.0);
    assert_eq!(v["provenance"]["generator"], "simulation");
    assert_eq!(v["provenance"]["simulation_only"], true);
    assert!(v["no_guarantee_reason"].is_null());
    // The same labels and θ̂ as the library.
    let lib_labels = RandomizedResponse::new(1.0)
        .unwrap()
        .privatize(&data.y, &mut NoiseRng::seeded(5))
        .unwrap();
    assert_eq!(npy::read_labels(dir.path("ys.npy"), 2).unwrap(), lib_labels.labels());
    let view = PairwiseView::new(&data.x, N, D, lib_labels.labels(), None).unwrap();
    let lib = fit_privatized(
        view,
        &lib_labels,
        &FitOptions::new(LossSpec::DebiasedRr { eps: 1.0 }, FeasibleSet::theta_b(2.0).unwrap()),
    )
    .unwrap();
    assert_eq!(theta_of(&v), lib.theta);

    // CSPRNG: the guarantee holds for real data.
    let p = privatize(&dir, "yc.npy", &["--eps", "0.5"]);
    assert_eq!(p["provenance"]["generator"], "csprng");
    let v = json_of(&fit(&dir, "yc.npy", &["--loss", "debiased-rr", "--eps", "0.5"]));
    assert_eq!(v["guarantee"]["eps"], 0.5);
    assert_eq!(v["guarantee"]["holds_for_real_data"], true);
    assert!(v["guarantee"]["seed"].is_null());
    assert_eq!(v["provenance"]["generator"], "csprng");
    assert_eq!(v["provenance"]["simulation_only"], false);

    // ε mismatch: labels at ε = 1, loss at ε = 3.
    let o = fit(&dir, "ys.npy", &["--loss", "debiased-rr", "--eps", "3"]);
    fails_with(&o, &["label provenance mismatch", "eps = 3", "eps = 1"]);
    // An explicit side-car path works as the default one.
    std::fs::rename(&side, dir.path("elsewhere.json")).unwrap();
    let v = json_of(&fit(
        &dir,
        "ys.npy",
        &[
            "--loss",
            "debiased-rr",
            "--eps",
            "1",
            "--provenance",
            &dir.arg("elsewhere.json"),
        ],
    ));
    assert_eq!(v["provenance"]["origin"], "signed-record");
    let o = fit(
        &dir,
        "ys.npy",
        &[
            "--loss",
            "debiased-rr",
            "--eps",
            "1",
            "--provenance",
            &dir.arg("missing.json"),
        ],
    );
    fails_with(&o, &["missing.json"]);
}

#[test]
fn fit_without_a_side_car_has_no_local_guarantee() {
    let dir = TempDir::new("none");
    write_pairs(&dir);
    privatize(&dir, "ys.npy", &["--eps", "1", "--seed", "8"]);
    let with = json_of(&fit(&dir, "ys.npy", &["--loss", "debiased-rr", "--eps", "1"]));
    std::fs::remove_file(dir.path("ys.npy.provenance.json")).unwrap();
    let v = json_of(&fit(&dir, "ys.npy", &["--loss", "debiased-rr", "--eps", "1"]));
    assert!(v["guarantee"].is_null());
    assert!(v["provenance"].is_null());
    assert!(v["no_guarantee_reason"].as_str().unwrap().contains("no provenance"));
    assert_eq!(
        theta_of(&v),
        theta_of(&with),
        "the provenance changes the guarantee only"
    );
    // Clear labels: the same keys.
    let v = json_of(&fit(&dir, "y.npy", &["--loss", "mle"]));
    assert!(v["guarantee"].is_null() && v["provenance"].is_null());
    assert!(v["no_guarantee_reason"].as_str().unwrap().contains("not private"));
}

#[test]
fn a_side_car_that_does_not_match_the_labels_is_an_error() {
    let dir = TempDir::new("tamper");
    write_pairs(&dir);
    privatize(&dir, "ys.npy", &["--eps", "1", "--seed", "3"]);
    let fit_rr = |y: &str| fit(&dir, y, &["--loss", "debiased-rr", "--eps", "1"]);
    // Labels edited after privatize (same size, one label flipped).
    let path = dir.path("ys.npy");
    let original = std::fs::read(&path).unwrap();
    let mut edited = original.clone();
    let last = edited.len() - 1;
    edited[last] ^= 1;
    std::fs::write(&path, &edited).unwrap();
    fails_with(&fit_rr("ys.npy"), &["label provenance mismatch", "SHA-256"]);
    // The side-car copied next to other labels (the clear ones).
    std::fs::write(&path, &original).unwrap();
    std::fs::copy(dir.path("ys.npy.provenance.json"), dir.path("y.npy.provenance.json")).unwrap();
    fails_with(&fit_rr("y.npy"), &["label provenance mismatch"]);
    std::fs::remove_file(dir.path("y.npy.provenance.json")).unwrap();
    // A side-car whose ε was edited: it still matches the labels file, but its signature no
    // longer verifies.
    let side = dir.path("ys.npy.provenance.json");
    let mut rec: Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    rec["eps"] = serde_json::json!(2.0);
    std::fs::write(&side, rec.to_string()).unwrap();
    fails_with(&fit_rr("ys.npy"), &["does not verify", "changed after it was signed"]);
    // A side-car that is not one.
    std::fs::write(&side, "{\"format\": \"other\"}").unwrap();
    fails_with(&fit_rr("ys.npy"), &["provenance side-car"]);
    std::fs::write(&side, "not json").unwrap();
    fails_with(&fit_rr("ys.npy"), &["invalid JSON"]);
    // The original labels with a side-car and --assert-provenance: refused (two statements).
    std::fs::write(&side, rec.to_string()).unwrap();
    let o = fit(
        &dir,
        "ys.npy",
        &["--loss", "debiased-rr", "--eps", "1", "--assert-provenance", "rr:1"],
    );
    fails_with(&o, &["--assert-provenance", "side-car"]);
}

#[test]
fn asserted_provenance_says_so() {
    let dir = TempDir::new("assert");
    write_pairs(&dir);
    privatize(&dir, "ys.npy", &["--eps", "1", "--seed", "4"]);
    std::fs::remove_file(dir.path("ys.npy.provenance.json")).unwrap();
    let v = json_of(&fit(
        &dir,
        "ys.npy",
        &["--loss", "debiased-rr", "--eps", "1", "--assert-provenance", "rr:1"],
    ));
    let g = &v["guarantee"];
    assert_eq!(g["eps"], 1.0);
    assert_eq!(g["holds_for_real_data"], true);
    assert!(g["noise"].as_str().unwrap().contains("asserted by the caller"));
    assert!(g["notes"][0].as_str().unwrap().contains("asserted by the caller"));
    assert_eq!(v["provenance"]["origin"], "asserted-by-caller");
    assert_eq!(v["provenance"]["asserted_by_caller"], true);
    assert!(v["provenance"]["generator"].is_null());
    // An assertion at another ε than the loss, another mechanism, or a malformed one.
    let o = fit(
        &dir,
        "ys.npy",
        &["--loss", "debiased-rr", "--eps", "3", "--assert-provenance", "rr:1"],
    );
    fails_with(&o, &["label provenance mismatch", "eps = 3"]);
    let o = fit(
        &dir,
        "ys.npy",
        &["--loss", "debiased-rr", "--eps", "1", "--assert-provenance", "krr:1:2"],
    );
    fails_with(&o, &["label provenance mismatch", "K-ary"]);
    let o = fit(
        &dir,
        "ys.npy",
        &["--loss", "debiased-rr", "--eps", "1", "--assert-provenance", "rr:0"],
    );
    fails_with(&o, &["eps"]);
    let o = fit(
        &dir,
        "ys.npy",
        &["--loss", "debiased-rr", "--eps", "1", "--assert-provenance", "gauss"],
    );
    fails_with(&o, &["assert-provenance", "rr:EPS"]);
    // Not with --central or --label-mechanism (they fit clear labels).
    let o = fit(
        &dir,
        "y.npy",
        &[
            "--loss",
            "mle",
            "--central",
            "--eps",
            "1",
            "--delta",
            "1e-5",
            "--feature-bound",
            "10",
            "--assert-provenance",
            "rr:1",
        ],
    );
    fails_with(&o, &["--assert-provenance", "--central"]);
}

#[test]
fn krr_choices_carry_k_to_the_kwise_fit() {
    let dir = TempDir::new("krr");
    let (n, k) = (200, 3);
    let theta = theta_star(D, 1.0, false, &mut privpref::mechanism::simulation_rng(6)).unwrap();
    let g = pl_groups(n, k, &theta, &mut privpref::mechanism::simulation_rng(7)).unwrap();
    npy::write_f64(dir.path("x.npy"), &g.x, &[n, k, D]).unwrap();
    npy::write_u8(dir.path("y.npy"), &g.choices()).unwrap();
    let p = privatize(
        &dir,
        "yk.npy",
        &["--mechanism", "krr", "--k", "3", "--eps", "1.5", "--seed", "9"],
    );
    assert_eq!(p["provenance"]["mechanism"], "krr");
    assert_eq!(p["provenance"]["k"], 3);
    let kfit = |rest: &[&str]| {
        let mut a: Vec<String> = [
            "fit",
            "--x",
            &dir.arg("x.npy"),
            "--y",
            &dir.arg("yk.npy"),
            "--radius",
            "5",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(rest.iter().map(|s| s.to_string()));
        run(&a)
    };
    let v = json_of(&kfit(&["--loss", "pl-krr", "--eps", "1.5", "--k", "3"]));
    assert_eq!(v["guarantee"]["eps"], 1.5);
    assert_eq!(v["guarantee"]["holds_for_real_data"], false);
    assert_eq!(v["provenance"]["k"], 3);
    let lib_labels = KaryRr::new(1.5, k)
        .unwrap()
        .privatize(&g.choices(), &mut NoiseRng::seeded(9))
        .unwrap();
    let view = GroupView::new(&g.x, n, k, D, GroupLabels::Choice(lib_labels.labels()), None).unwrap();
    let lib = fit_kwise_privatized(
        view,
        &lib_labels,
        &FitOptions::new(GroupLossSpec::PlKrr { eps: 1.5 }, FeasibleSet::theta_b(5.0).unwrap()),
    )
    .unwrap();
    assert_eq!(theta_of(&v), lib.theta);
    // ε mismatch.
    fails_with(
        &kfit(&["--loss", "pl-krr", "--eps", "1", "--k", "3"]),
        &["label provenance mismatch", "eps = 1.5"],
    );
    // Binary RR labels with the pairwise fit of K-RR labels: mechanism mismatch.
    npy::write_f64(dir.path("x2.npy"), &vec![0.5; n * D], &[n, D]).unwrap();
    let two: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
    npy::write_u8(dir.path("y2.npy"), &two).unwrap();
    let mut a: Vec<String> = ["privatize", "--y", &dir.arg("y2.npy"), "--out", &dir.arg("y2k.npy")]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend(
        ["--mechanism", "krr", "--k", "2", "--eps", "1", "--seed", "1"]
            .iter()
            .map(|s| s.to_string()),
    );
    json_of(&run(&a));
    let o = run(&[
        "fit",
        "--x",
        &dir.arg("x2.npy"),
        "--y",
        &dir.arg("y2k.npy"),
        "--loss",
        "debiased-rr",
        "--eps",
        "1",
        "--radius",
        "2",
    ]);
    fails_with(
        &o,
        &["label provenance mismatch", "binary randomized response", "K-ary"],
    );
}

#[test]
fn privatize_then_fit_probit_rr() {
    let dir = TempDir::new("probit_rr");
    write_pairs(&dir);
    let p = privatize(&dir, "yp.npy", &["--eps", "1", "--seed", "11"]);
    assert_eq!(p["provenance"]["mechanism"], "rr");
    for loss in ["probit-rr", "debiased-probit"] {
        let v = json_of(&fit(&dir, "yp.npy", &["--loss", loss, "--eps", "1"]));
        assert_eq!(v["loss"], loss);
        assert_eq!(v["eps"], 1.0);
        let g = &v["guarantee"];
        assert_eq!(g["eps"], 1.0);
        assert_eq!(g["model"], "local");
        assert_eq!(v["provenance"]["mechanism"], "rr");
        assert!(v["no_guarantee_reason"].is_null());
        let theta = theta_of(&v);
        assert_eq!(theta.len(), D);
        assert!(theta.iter().all(|t| t.is_finite()), "{loss}: {theta:?}");
        // The certificate: converged within its tolerance; global only where convexity is
        // certified (a boolean either way).
        assert_eq!(v["converged"], true, "{loss}: {v}");
        assert!(v["kkt_residual"].as_f64().unwrap() <= v["kkt_tol"].as_f64().unwrap());
        assert!(v["certified_global"].is_boolean());
    }
    // ε mismatch is refused for the probit losses too.
    let o = fit(&dir, "yp.npy", &["--loss", "probit-rr", "--eps", "2"]);
    fails_with(&o, &["label provenance mismatch", "eps = 2", "eps = 1"]);
}

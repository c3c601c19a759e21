//! The `privpref` binary's label-private SGD: `fit --solver sgd --label-mechanism
//! krr|rrtopk|rr-prior|normal` on clear labels (Ghazi et al. 2021).
//!
//! * every mechanism and model runs and reports its guarantee (ε, δ; the histogram prior adds
//!   `ε_p`; multi-stage training is ε by parallel composition);
//! * with `--seed S` the JSON θ equals the library's [`lp_sgd`] with `NoiseRng::seeded(S)` bit
//!   for bit;
//! * invalid input: one line on stderr starting with `privpref: `, a non-zero exit, nothing on
//!   stdout.

use crate::{common, support};
use support::{json_of, run, TempDir};

use common::write_npy_raw;
use privpref::data::{npy, MulticlassView};
use privpref::estimator::label_sgd::{lp_sgd, LabelMechanism, LpSgdOptions, MulticlassModel};
use privpref::feasible::FeasibleSet;
use privpref::loss::PlTop1;
use privpref::mechanism::simulation_rng;
use privpref::privacy::NoiseRng;
use privpref::sim::{class_means, class_mixture};

const N: usize = 400;
const K: usize = 4;
const D: usize = 3;

struct Data {
    x: Vec<f64>,
    y: Vec<u8>,
}

fn data() -> Data {
    let means = class_means(K, D, 2.0, &mut simulation_rng(1)).unwrap();
    let m = class_mixture(N, K, &means, 1.0, &mut simulation_rng(2)).unwrap();
    Data { x: m.x, y: m.y }
}

fn write_files(dir: &TempDir, d: &Data) {
    npy::write_f64(dir.path("x.npy"), &d.x, &[N, D]).unwrap();
    npy::write_u8(dir.path("y.npy"), &d.y).unwrap();
    let yb: Vec<u8> = d.y.iter().map(|&v| u8::from(v >= 2)).collect();
    npy::write_u8(dir.path("yb.npy"), &yb).unwrap();
    // K-wise: alternative k of sample i has features x_i scaled by (k + 1) − 2.5.
    let mut g = Vec::with_capacity(N * K * D);
    for i in 0..N {
        for k in 0..K {
            g.extend(d.x[i * D..(i + 1) * D].iter().map(|v| v * (k as f64 - 1.5)));
        }
    }
    npy::write_f64(dir.path("g.npy"), &g, &[N, K, D]).unwrap();
    npy::write_f64(dir.path("prior.npy"), &vec![0.25; N * K], &[N, K]).unwrap();
    npy::write_f64(dir.path("prior_bad.npy"), &vec![0.25; (N - 1) * K], &[N - 1, K]).unwrap();
    let clusters: Vec<u32> = (0..N as u32).map(|i| i % 7).collect();
    npy::write_u32(dir.path("clusters.npy"), &clusters).unwrap();
    let neg: Vec<u8> = (0..N * 8).map(|i| if i / 8 == 3 { 0xff } else { 0 }).collect(); // int64 −1 at row 3
    write_npy_raw(&dir.path("clusters_neg.npy"), "<i8", false, &[N], &neg);
    let mut bad = d.y.clone();
    bad[5] = K as u8;
    npy::write_u8(dir.path("y_bad.npy"), &bad).unwrap();
}

fn fit_args(dir: &TempDir, x: &str, y: &str, rest: &[&str]) -> Vec<String> {
    let mut v = vec![
        "fit".to_string(),
        "--x".into(),
        dir.arg(x),
        "--y".into(),
        dir.arg(y),
        "--solver".into(),
        "sgd".into(),
    ];
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}

#[test]
fn every_mechanism_runs_and_reports_its_guarantee() {
    let dir = TempDir::new("ok");
    let d = data();
    write_files(&dir, &d);
    let sm = [
        "--loss",
        "softmax",
        "--k",
        "4",
        "--constraint",
        "ball",
        "--radius",
        "4",
        "--seed",
        "7",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut r: Vec<&str> = sm.to_vec();
        r.extend_from_slice(extra);
        fit_args(&dir, "x.npy", "y.npy", &r)
    };
    // K-RR, bit-equal to the library.
    let v = json_of(&run(&with(&["--label-mechanism", "krr", "--eps", "1"])));
    let view = MulticlassView::new(&d.x, N, D, K, &d.y).unwrap();
    let model = MulticlassModel::new(view, PlTop1).unwrap();
    let lib = lp_sgd(
        &model,
        &LpSgdOptions::new(1.0, LabelMechanism::Krr, FeasibleSet::ball(4.0).unwrap()),
        None,
        None,
        &mut NoiseRng::seeded(7),
    )
    .unwrap();
    let theta: Vec<f64> = v["theta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    assert_eq!(theta, lib.theta);
    assert_eq!(v["guarantee"]["eps"], 1.0);
    assert_eq!(v["guarantee"]["delta"], 0.0);
    assert_eq!(v["guarantee"]["holds_for_real_data"], false);
    assert_eq!(v["mean_k"], 4.0);
    assert_eq!(v["iterations"], N);
    assert!(
        v["objective"].is_null() && v["kkt_residual"].is_null(),
        "no clear-label statistic is released"
    );
    assert!(v["elapsed_s"].as_f64().unwrap() >= 0.0);
    // RRTop-k with a public prior.
    let v = json_of(&run(&with(&[
        "--label-mechanism",
        "rrtopk",
        "--top-k",
        "2",
        "--eps",
        "1",
        "--prior",
        &dir.arg("prior.npy"),
    ])));
    assert_eq!(v["mean_k"], 2.0);
    assert_eq!(v["guarantee"]["eps"], 1.0);
    // RR-with-prior with the histogram prior: ε + ε_p.
    let v = json_of(&run(&with(&[
        "--label-mechanism",
        "rr-prior",
        "--eps",
        "1",
        "--clusters",
        &dir.arg("clusters.npy"),
        "--prior-eps",
        "0.25",
    ])));
    assert_eq!(v["guarantee"]["eps"], 1.25);
    assert_eq!(v["histogram_prior"]["clusters"], 7);
    // Multi-stage: ε overall, one guarantee per stage.
    let v = json_of(&run(&with(&[
        "--label-mechanism",
        "rr-prior",
        "--eps",
        "1",
        "--stages",
        "2",
        "--stage-fractions",
        "0.6,0.4",
        "--temperature",
        "0.5",
    ])));
    assert_eq!(v["guarantee"]["eps"], 1.0);
    let stages = v["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    assert_eq!(stages[0]["samples"], 240);
    assert_eq!(stages[1]["guarantee"]["eps"], 1.0);
    // LP-Normal-SGD: (ε, δ).
    let v = json_of(&run(&with(&[
        "--label-mechanism",
        "normal",
        "--eps",
        "0.5",
        "--delta",
        "1e-5",
        "--sigma-rule",
        "classic",
    ])));
    assert_eq!(v["guarantee"]["delta"], 1e-5);
    assert_eq!(v["normal"]["rank_max"], 3);
    assert_eq!(v["normal"]["calibration"], "classic");
    // Binary linear and K-wise models.
    let v = json_of(&run(&fit_args(
        &dir,
        "x.npy",
        "yb.npy",
        &[
            "--loss",
            "mle",
            "--label-mechanism",
            "krr",
            "--eps",
            "2",
            "--radius",
            "3",
            "--seed",
            "1",
        ],
    )));
    assert_eq!(v["labels"], 2);
    assert_eq!(v["theta"].as_array().unwrap().len(), D);
    let v = json_of(&run(&fit_args(
        &dir,
        "g.npy",
        "y.npy",
        &[
            "--loss",
            "pl-top1",
            "--k",
            "4",
            "--label-mechanism",
            "krr",
            "--eps",
            "2",
            "--radius",
            "3",
            "--step",
            "invsqrt:0.1",
            "--seed",
            "1",
        ],
    )));
    assert_eq!(v["labels"], 4);
    assert_eq!(v["step"], "invsqrt:0.1");
    // Without --seed: the CSPRNG, and the guarantee holds for real data.
    let o = run(&fit_args(
        &dir,
        "x.npy",
        "y.npy",
        &[
            "--loss",
            "softmax",
            "--k",
            "4",
            "--radius",
            "4",
            "--label-mechanism",
            "krr",
            "--eps",
            "1",
        ],
    ));
    let v = json_of(&o);
    assert_eq!(v["guarantee"]["holds_for_real_data"], true);
    assert!(o.stderr.is_empty());
}

#[test]
fn invalid_label_sgd_input_gives_one_clear_stderr_line_and_a_nonzero_exit() {
    let dir = TempDir::new("invalid");
    let d = data();
    write_files(&dir, &d);
    let sm = |extra: &[&str]| -> Vec<String> {
        let mut r = vec!["--loss", "softmax", "--k", "4", "--radius", "4"];
        r.extend_from_slice(extra);
        fit_args(&dir, "x.npy", "y.npy", &r)
    };
    let prior = dir.arg("prior.npy");
    let prior_bad = dir.arg("prior_bad.npy");
    let clusters = dir.arg("clusters.npy");
    let clusters_neg = dir.arg("clusters_neg.npy");
    let mut not_sgd = sm(&["--label-mechanism", "krr", "--eps", "1"]);
    let at = not_sgd.iter().position(|s| s == "sgd").unwrap();
    not_sgd[at] = "newton".into();
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        ("not --solver sgd", not_sgd, vec!["--solver sgd"]),
        (
            "unknown mechanism",
            sm(&["--label-mechanism", "foo", "--eps", "1"]),
            vec!["foo"],
        ),
        ("no --eps", sm(&["--label-mechanism", "krr"]), vec!["--eps"]),
        (
            "eps <= 0",
            sm(&["--label-mechanism", "krr", "--eps", "-1"]),
            vec!["eps"],
        ),
        (
            "rrtopk without --top-k",
            sm(&["--label-mechanism", "rrtopk", "--eps", "1", "--prior", &prior]),
            vec!["--top-k"],
        ),
        (
            "rrtopk k > K",
            sm(&[
                "--label-mechanism",
                "rrtopk",
                "--top-k",
                "9",
                "--eps",
                "1",
                "--prior",
                &prior,
            ]),
            vec!["exceeds"],
        ),
        (
            "rr-prior without a prior",
            sm(&["--label-mechanism", "rr-prior", "--eps", "1"]),
            vec!["prior"],
        ),
        (
            "krr with a prior",
            sm(&["--label-mechanism", "krr", "--eps", "1", "--prior", &prior]),
            vec!["takes no prior"],
        ),
        (
            "prior of the wrong shape",
            sm(&["--label-mechanism", "rr-prior", "--eps", "1", "--prior", &prior_bad]),
            vec!["399"],
        ),
        (
            "--clusters without --prior-eps",
            sm(&["--label-mechanism", "rr-prior", "--eps", "1", "--clusters", &clusters]),
            vec!["--prior-eps"],
        ),
        (
            "--prior-eps 0",
            sm(&[
                "--label-mechanism",
                "rr-prior",
                "--eps",
                "1",
                "--clusters",
                &clusters,
                "--prior-eps",
                "0",
            ]),
            vec!["eps"],
        ),
        (
            "negative cluster id",
            sm(&[
                "--label-mechanism",
                "rr-prior",
                "--eps",
                "1",
                "--clusters",
                &clusters_neg,
                "--prior-eps",
                "0.1",
            ]),
            vec!["row 3", "-1"],
        ),
        (
            "--prior and --clusters",
            sm(&[
                "--label-mechanism",
                "rr-prior",
                "--eps",
                "1",
                "--clusters",
                &clusters,
                "--prior",
                &prior,
            ]),
            vec!["either"],
        ),
        (
            "normal without --delta",
            sm(&["--label-mechanism", "normal", "--eps", "0.5"]),
            vec!["--delta"],
        ),
        (
            "classic calibration at eps >= 1",
            sm(&[
                "--label-mechanism",
                "normal",
                "--eps",
                "1.5",
                "--delta",
                "1e-5",
                "--sigma-rule",
                "classic",
            ]),
            vec!["eps < 1"],
        ),
        (
            "unknown sigma rule",
            sm(&[
                "--label-mechanism",
                "normal",
                "--eps",
                "0.5",
                "--delta",
                "1e-5",
                "--sigma-rule",
                "foo",
            ]),
            vec!["foo"],
        ),
        (
            "sensitivity too small",
            sm(&[
                "--label-mechanism",
                "normal",
                "--eps",
                "0.5",
                "--delta",
                "1e-5",
                "--sensitivity",
                "1e-6",
            ]),
            vec!["exceeds the calibrated"],
        ),
        (
            // A central-only option after --delta (which normal uses) is still refused.
            "normal --delta with --beta",
            sm(&[
                "--label-mechanism",
                "normal",
                "--eps",
                "0.5",
                "--delta",
                "1e-5",
                "--beta",
                "1",
            ]),
            vec!["--beta", "--central"],
        ),
        (
            "--delta with krr",
            sm(&["--label-mechanism", "krr", "--eps", "1", "--delta", "1e-5"]),
            vec!["--delta"],
        ),
        (
            "--top-k without --label-mechanism",
            fit_args(
                &dir,
                "x.npy",
                "yb.npy",
                &["--loss", "mle", "--radius", "3", "--top-k", "2"],
            ),
            vec!["--label-mechanism"],
        ),
        (
            "--epochs 2",
            sm(&["--label-mechanism", "krr", "--eps", "1", "--epochs", "2"]),
            vec!["--epochs"],
        ),
        (
            "--shuffle",
            sm(&["--label-mechanism", "krr", "--eps", "1", "--shuffle"]),
            vec!["--shuffle"],
        ),
        (
            "--batch 4",
            sm(&["--label-mechanism", "krr", "--eps", "1", "--batch", "4"]),
            vec!["--batch"],
        ),
        (
            "--ridge",
            sm(&["--label-mechanism", "krr", "--eps", "1", "--ridge", "0.1"]),
            vec!["--ridge"],
        ),
        (
            "--central",
            sm(&["--label-mechanism", "krr", "--eps", "1", "--central"]),
            vec!["central"],
        ),
        (
            "probit",
            fit_args(
                &dir,
                "x.npy",
                "yb.npy",
                &[
                    "--loss",
                    "probit",
                    "--radius",
                    "3",
                    "--label-mechanism",
                    "krr",
                    "--eps",
                    "1",
                ],
            ),
            vec!["clear-label loss"],
        ),
        (
            "pl-krr",
            fit_args(
                &dir,
                "g.npy",
                "y.npy",
                &[
                    "--loss",
                    "pl-krr",
                    "--k",
                    "4",
                    "--radius",
                    "3",
                    "--label-mechanism",
                    "krr",
                    "--eps",
                    "1",
                ],
            ),
            vec!["clear-label loss"],
        ),
        (
            "softmax without --k",
            fit_args(
                &dir,
                "x.npy",
                "y.npy",
                &[
                    "--loss",
                    "softmax",
                    "--radius",
                    "3",
                    "--label-mechanism",
                    "krr",
                    "--eps",
                    "1",
                ],
            ),
            vec!["--k"],
        ),
        (
            "label >= K",
            fit_args(
                &dir,
                "x.npy",
                "y_bad.npy",
                &[
                    "--loss",
                    "softmax",
                    "--k",
                    "4",
                    "--radius",
                    "3",
                    "--label-mechanism",
                    "krr",
                    "--eps",
                    "1",
                ],
            ),
            vec!["row 5"],
        ),
        (
            "binary label out of range",
            fit_args(
                &dir,
                "x.npy",
                "y.npy",
                &[
                    "--loss",
                    "mle",
                    "--radius",
                    "3",
                    "--label-mechanism",
                    "krr",
                    "--eps",
                    "1",
                ],
            ),
            vec!["out of range"],
        ),
        (
            "--stages 1",
            sm(&["--label-mechanism", "rr-prior", "--eps", "1", "--stages", "1"]),
            vec!["2 stages"],
        ),
        (
            "fractions/stages mismatch",
            sm(&[
                "--label-mechanism",
                "rr-prior",
                "--eps",
                "1",
                "--stages",
                "2",
                "--stage-fractions",
                "0.5",
            ]),
            vec!["1 fractions for 2 stages"],
        ),
        (
            "fractions not numbers",
            sm(&[
                "--label-mechanism",
                "rr-prior",
                "--eps",
                "1",
                "--stages",
                "2",
                "--stage-fractions",
                "a,b",
            ]),
            vec!["not a number"],
        ),
        (
            "--temperature without --stages",
            sm(&[
                "--label-mechanism",
                "rr-prior",
                "--eps",
                "1",
                "--prior",
                &prior,
                "--temperature",
                "0.5",
            ]),
            vec!["--stages"],
        ),
        (
            "--stages with krr",
            sm(&["--label-mechanism", "krr", "--eps", "1", "--stages", "2"]),
            vec!["rr-prior"],
        ),
        (
            "bad step rule",
            sm(&["--label-mechanism", "krr", "--eps", "1", "--step", "lambda:1"]),
            vec!["lambda"],
        ),
        (
            "theory step without a radius",
            fit_args(
                &dir,
                "x.npy",
                "y.npy",
                &[
                    "--loss",
                    "softmax",
                    "--k",
                    "4",
                    "--constraint",
                    "none",
                    "--label-mechanism",
                    "krr",
                    "--eps",
                    "1",
                ],
            ),
            vec!["bounded"],
        ),
    ];
    let mut failures = Vec::new();
    for (name, args, words) in &cases {
        let o = run(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let mut bad = Vec::new();
        if o.status.code() != Some(1) {
            bad.push(format!("exit {:?}, want 1", o.status.code()));
        }
        if lines.len() != 1 || !lines[0].starts_with("privpref: ") {
            bad.push(format!("stderr is not one `privpref: ` line: {stderr:?}"));
        }
        for w in words {
            if !stderr.contains(w) {
                bad.push(format!("stderr lacks {w:?}: {stderr:?}"));
            }
        }
        if !o.stdout.is_empty() {
            bad.push("stdout not empty".into());
        }
        if !bad.is_empty() {
            failures.push(format!("{name}: {}", bad.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

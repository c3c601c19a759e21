//! The `privpref` binary on K-wise data: `fit --loss pl-top1|pl-ranking|pl-krr --k K [--eps E]
//! [--top J]` with `n × K × d` float64 features and integer labels of shape `n` (choice) or
//! `n × K` (ranking), and `privatize --mechanism krr --k K`.
//!
//! * invalid input: one line on stderr starting with `privpref: `, a non-zero exit (1; 2 for a
//!   command line that does not parse), nothing on stdout;
//! * every accepted label dtype (`u8`, `u16`, `u32`, `i32`, `i64`) gives the same fit;
//! * the JSON result equals the library's [`fit_kwise`] bit for bit;
//! * `privatize --mechanism krr --seed S` draws exactly [`KaryRr`]'s labels from the seeded
//!   simulation generator, and they feed `fit --loss pl-krr`.

use crate::{common, support};
use support::{json_of, run, TempDir};

use common::write_npy_raw;
use privpref::data::{npy, GroupLabels, GroupView};
use privpref::estimator::{fit_kwise, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::GroupLossSpec;
use privpref::mechanism::{simulation_rng, KaryRr, Mechanism};
use privpref::sim::{pl_groups, theta_star};

const N: usize = 60;
const K: usize = 3;
const D: usize = 4;

struct Inputs {
    x: Vec<f64>,
    ranking: Vec<u8>,
    choices: Vec<u8>,
}

fn inputs() -> Inputs {
    let mut rng = simulation_rng(12);
    let th = theta_star(D, 1.0, true, &mut rng).unwrap();
    let g = pl_groups(N, K, &th, &mut rng).unwrap();
    let choices = g.choices();
    Inputs {
        x: g.x,
        ranking: g.ranking,
        choices,
    }
}

/// Writes integer labels with the given numpy dtype descriptor.
fn write_ints(path: &std::path::Path, descr: &str, shape: &[usize], v: &[u8]) {
    let bytes: Vec<u8> = match descr {
        "|u1" => v.to_vec(),
        "<u2" => v.iter().flat_map(|&x| u16::from(x).to_le_bytes()).collect(),
        "<u4" => v.iter().flat_map(|&x| u32::from(x).to_le_bytes()).collect(),
        "<i4" => v.iter().flat_map(|&x| i32::from(x).to_le_bytes()).collect(),
        "<i8" => v.iter().flat_map(|&x| i64::from(x).to_le_bytes()).collect(),
        other => panic!("dtype {other}"),
    };
    write_npy_raw(path, descr, false, shape, &bytes);
}

fn write_files(dir: &TempDir, inp: &Inputs) {
    npy::write_f64(dir.path("x.npy"), &inp.x, &[N, K, D]).unwrap();
    npy::write_f64(dir.path("x2d.npy"), &inp.x, &[N * K, D]).unwrap();
    let mut nan = inp.x.clone();
    nan[(K + 2) * D] = f64::NAN; // sample 1, row 2, column 0
    npy::write_f64(dir.path("x_nan.npy"), &nan, &[N, K, D]).unwrap();
    for (name, descr) in [
        ("u8", "|u1"),
        ("u16", "<u2"),
        ("u32", "<u4"),
        ("i32", "<i4"),
        ("i64", "<i8"),
    ] {
        write_ints(&dir.path(&format!("y_{name}.npy")), descr, &[N], &inp.choices);
    }
    write_ints(&dir.path("rank_i64.npy"), "<i8", &[N, K], &inp.ranking);
    let mut bad = inp.choices.clone();
    bad[7] = K as u8;
    write_ints(&dir.path("y_out_of_range.npy"), "<i8", &[N], &bad);
    let neg: Vec<u8> = (0..N * 8).map(|i| if i / 8 == 4 { 0xff } else { 0 }).collect(); // int64 −1 at sample 4
    write_npy_raw(&dir.path("y_negative.npy"), "<i8", false, &[N], &neg);
    let mut dup = inp.ranking.clone();
    dup[5 * K + 2] = dup[5 * K]; // sample 5 lists its first label twice
    write_ints(&dir.path("rank_dup.npy"), "<i8", &[N, K], &dup);
    write_ints(&dir.path("rank_wide.npy"), "<i8", &[N / 2, 2], &inp.choices);
    write_ints(&dir.path("y_short.npy"), "<i8", &[N - 1], &inp.choices[..N - 1]);
    let yf: Vec<f64> = inp.choices.iter().map(|&v| f64::from(v)).collect();
    npy::write_f64(dir.path("y_float.npy"), &yf, &[N]).unwrap();
    let mut w = vec![1.0; N];
    w[9] = -1.0;
    npy::write_f64(dir.path("w_neg.npy"), &w, &[N]).unwrap();
}

#[test]
fn invalid_kwise_input_gives_one_clear_stderr_line_and_a_nonzero_exit() {
    let dir = TempDir::new("invalid");
    let inp = inputs();
    write_files(&dir, &inp);
    let fit = |x: &str, y: &str, rest: &[&str]| -> Vec<String> {
        let mut v = vec!["fit".to_string(), "--x".into(), dir.arg(x), "--y".into(), dir.arg(y)];
        v.extend(rest.iter().map(|s| s.to_string()));
        v
    };
    let top1 = ["--loss", "pl-top1", "--k", "3", "--radius", "5"];
    let cases: Vec<(&str, Vec<String>, i32, Vec<&str>)> = vec![
        (
            "no --k",
            fit("x.npy", "y_u8.npy", &["--loss", "pl-top1", "--radius", "5"]),
            1,
            vec!["--k"],
        ),
        (
            "--k mismatch",
            fit("x.npy", "y_u8.npy", &["--loss", "pl-top1", "--k", "4", "--radius", "5"]),
            1,
            vec!["--k 4", "3 alternatives"],
        ),
        ("2-D features", fit("x2d.npy", "y_u8.npy", &top1), 1, vec!["3-D"]),
        (
            "NaN feature",
            fit("x_nan.npy", "y_u8.npy", &top1),
            1,
            vec!["sample 1, row 2, column 0", "NaN"],
        ),
        (
            "label out of range",
            fit("x.npy", "y_out_of_range.npy", &top1),
            1,
            vec!["sample 7", "label 3"],
        ),
        (
            "negative label",
            fit("x.npy", "y_negative.npy", &top1),
            1,
            vec!["sample 4", "label -1"],
        ),
        (
            "ranking not a permutation",
            fit(
                "x.npy",
                "rank_dup.npy",
                &["--loss", "pl-ranking", "--k", "3", "--radius", "5"],
            ),
            1,
            vec!["sample 5, column 2", "appears twice"],
        ),
        (
            "labels of the wrong width",
            fit("x.npy", "rank_wide.npy", &top1),
            1,
            vec!["shape"],
        ),
        (
            "too few labels",
            fit("x.npy", "y_short.npy", &top1),
            1,
            vec!["59 chosen indices", "60 samples"],
        ),
        ("float labels", fit("x.npy", "y_float.npy", &top1), 1, vec!["integer"]),
        (
            "ranking loss on choices",
            fit(
                "x.npy",
                "y_u8.npy",
                &["--loss", "pl-ranking", "--k", "3", "--radius", "5"],
            ),
            1,
            vec!["ranking"],
        ),
        (
            "pl-krr without --eps",
            fit("x.npy", "y_u8.npy", &["--loss", "pl-krr", "--k", "3", "--radius", "5"]),
            1,
            vec!["--eps"],
        ),
        (
            "pl-krr with eps <= 0",
            fit(
                "x.npy",
                "y_u8.npy",
                &["--loss", "pl-krr", "--k", "3", "--eps", "-1", "--radius", "5"],
            ),
            1,
            vec!["eps"],
        ),
        (
            "--eps with pl-top1",
            fit(
                "x.npy",
                "y_u8.npy",
                &["--loss", "pl-top1", "--k", "3", "--eps", "1", "--radius", "5"],
            ),
            1,
            vec!["eps"],
        ),
        (
            "--top with pl-top1",
            fit(
                "x.npy",
                "y_u8.npy",
                &["--loss", "pl-top1", "--k", "3", "--top", "1", "--radius", "5"],
            ),
            1,
            vec!["--top"],
        ),
        (
            "--top >= K",
            fit(
                "x.npy",
                "rank_i64.npy",
                &["--loss", "pl-ranking", "--k", "3", "--top", "3", "--radius", "5"],
            ),
            1,
            vec!["top"],
        ),
        (
            "--top 0",
            fit(
                "x.npy",
                "rank_i64.npy",
                &["--loss", "pl-ranking", "--k", "3", "--top", "0", "--radius", "5"],
            ),
            1,
            vec!["top"],
        ),
        (
            "unknown K-wise loss",
            fit("x.npy", "y_u8.npy", &["--loss", "pl-foo", "--k", "3", "--radius", "5"]),
            1,
            vec!["pl-foo"],
        ),
        (
            "--k with a pairwise loss",
            fit("x2d.npy", "y_u8.npy", &["--loss", "mle", "--k", "3", "--radius", "5"]),
            1,
            vec!["--k"],
        ),
        (
            "--central with a K-wise loss",
            fit(
                "x.npy",
                "y_u8.npy",
                &["--loss", "pl-top1", "--k", "3", "--central", "--radius", "5"],
            ),
            1,
            vec!["central"],
        ),
        (
            "negative weight",
            fit(
                "x.npy",
                "y_u8.npy",
                &[
                    "--loss",
                    "pl-top1",
                    "--k",
                    "3",
                    "--radius",
                    "5",
                    "--weights",
                    &dir.arg("w_neg.npy"),
                ],
            ),
            1,
            vec!["sample 9", "negative"],
        ),
        (
            "--k not a number",
            fit("x.npy", "y_u8.npy", &["--loss", "pl-top1", "--k", "three"]),
            2,
            vec!["three"],
        ),
        (
            "privatize krr without --k",
            vec![
                "privatize".into(),
                "--y".into(),
                dir.arg("y_u8.npy"),
                "--mechanism".into(),
                "krr".into(),
                "--eps".into(),
                "1".into(),
                "--out".into(),
                dir.arg("o.npy"),
            ],
            1,
            vec!["--k"],
        ),
        (
            "privatize krr label >= K",
            vec![
                "privatize".into(),
                "--y".into(),
                dir.arg("y_out_of_range.npy"),
                "--mechanism".into(),
                "krr".into(),
                "--k".into(),
                "3".into(),
                "--eps".into(),
                "1".into(),
                "--out".into(),
                dir.arg("o.npy"),
            ],
            1,
            vec!["row 7", "label 3"],
        ),
        (
            "privatize rr with --k",
            vec![
                "privatize".into(),
                "--y".into(),
                dir.arg("y_u8.npy"),
                "--k".into(),
                "3".into(),
                "--eps".into(),
                "1".into(),
                "--out".into(),
                dir.arg("o.npy"),
            ],
            1,
            vec!["--k"],
        ),
    ];
    let mut failures = Vec::new();
    for (name, args, code, words) in &cases {
        let o = run(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let mut bad = Vec::new();
        if o.status.code() != Some(*code) {
            bad.push(format!("exit {:?}, want {code}", o.status.code()));
        }
        if lines.len() != 1 || !stderr.starts_with("privpref: ") {
            bad.push(format!("want one `privpref: ` line, got {lines:?}"));
        }
        if stderr.contains("panicked") || stderr.contains("internal error") {
            bad.push("panic".into());
        }
        if !o.stdout.is_empty() {
            bad.push("stdout not empty".into());
        }
        for w in words {
            if !stderr.contains(w) {
                bad.push(format!("stderr lacks {w:?}"));
            }
        }
        if !bad.is_empty() {
            failures.push(format!("{name}: {} — {:?}", bad.join("; "), stderr.trim_end()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} cases misbehaved:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn theta_of(v: &serde_json::Value) -> Vec<f64> {
    v["theta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect()
}

#[test]
fn fits_match_the_library_for_every_label_dtype() {
    let dir = TempDir::new("fits");
    let inp = inputs();
    write_files(&dir, &inp);
    let set = FeasibleSet::theta_b(5.0).unwrap();
    // Choices, every accepted integer dtype.
    let view = GroupView::new(&inp.x, N, K, D, GroupLabels::Choice(&inp.choices), None).unwrap();
    let lib = fit_kwise(view, &FitOptions::new(GroupLossSpec::PlTop1, set)).unwrap();
    for dt in ["u8", "u16", "u32", "i32", "i64"] {
        let o = run(&[
            "fit",
            "--x",
            &dir.arg("x.npy"),
            "--y",
            &dir.arg(&format!("y_{dt}.npy")),
            "--loss",
            "pl-top1",
            "--k",
            "3",
            "--radius",
            "5",
        ]);
        let v = json_of(&o);
        assert_eq!(theta_of(&v), lib.theta, "{dt}");
        assert_eq!(v["loss"], "pl-top1");
        assert_eq!(v["k"], 3);
        assert_eq!(v["top"], 1);
        assert_eq!(v["labels"], "choice");
        assert_eq!(v["converged"], true);
        assert_eq!(v["n"], N);
        assert_eq!(v["d"], D);
        assert!(v["guarantee"].is_null());
        for key in [
            "objective",
            "kkt_residual",
            "iterations",
            "termination",
            "solver",
            "elapsed_s",
        ] {
            assert!(!v[key].is_null(), "{key}");
        }
    }
    // Rankings (int64, n × K): full and top-2, Newton and L-BFGS.
    let rview = GroupView::new(&inp.x, N, K, D, GroupLabels::Ranking(&inp.ranking), None).unwrap();
    for (top, solver) in [(None, "newton"), (Some(1usize), "lbfgs")] {
        let mut opts = FitOptions::new(GroupLossSpec::PlRanking { top }, set);
        opts.solver = privpref::estimator::SolverKind::parse(solver).unwrap().into();
        let lib = fit_kwise(rview, &opts).unwrap();
        let mut args = vec![
            "fit".to_string(),
            "--x".into(),
            dir.arg("x.npy"),
            "--y".into(),
            dir.arg("rank_i64.npy"),
            "--loss".into(),
            "pl-ranking".into(),
            "--k".into(),
            "3".into(),
            "--radius".into(),
            "5".into(),
            "--solver".into(),
            solver.into(),
        ];
        if let Some(j) = top {
            args.extend(["--top".into(), j.to_string()]);
        }
        let v = json_of(&run(&args));
        assert_eq!(theta_of(&v), lib.theta, "ranking top {top:?}");
        assert_eq!(v["labels"], "ranking");
        assert_eq!(v["top"], top.unwrap_or(K - 1));
    }
}

#[test]
fn privatized_krr_labels_feed_pl_krr() {
    let dir = TempDir::new("krr");
    let inp = inputs();
    write_files(&dir, &inp);
    let (eps, seed) = (1.5, 77u64);
    let o = run(&[
        "privatize",
        "--y",
        &dir.arg("y_i32.npy"),
        "--mechanism",
        "krr",
        "--k",
        "3",
        "--eps",
        &eps.to_string(),
        "--seed",
        &seed.to_string(),
        "--out",
        &dir.arg("y_krr.npy"),
    ]);
    let info = json_of(&o);
    assert_eq!(info["mechanism"], "krr");
    let got = npy::read_labels(dir.path("y_krr.npy"), 3).unwrap();
    let want = KaryRr::new(eps, K)
        .unwrap()
        .randomize(&inp.choices, &mut simulation_rng(seed))
        .unwrap();
    assert_eq!(got, want, "the CLI draws KaryRr's labels from the seeded generator");
    let v = json_of(&run(&[
        "fit",
        "--x",
        &dir.arg("x.npy"),
        "--y",
        &dir.arg("y_krr.npy"),
        "--loss",
        "pl-krr",
        "--eps",
        &eps.to_string(),
        "--k",
        "3",
        "--radius",
        "5",
    ]));
    let view = GroupView::new(&inp.x, N, K, D, GroupLabels::Choice(&want), None).unwrap();
    let lib = fit_kwise(
        view,
        &FitOptions::new(GroupLossSpec::PlKrr { eps }, FeasibleSet::theta_b(5.0).unwrap()),
    )
    .unwrap();
    assert_eq!(theta_of(&v), lib.theta);
    assert_eq!(v["eps"], eps);
    assert_eq!(v["guarantee"]["eps"], eps);
    assert_eq!(v["guarantee"]["model"], "local");
}

/// The K-wise private MLE and its private `Σ̃_{D_K}` feed `policy` with the K-wise explicit
/// radius (anon. 2025, Thm 4.4; constants derived in `privpref::policy::radius`): the rule is
/// named, and `λ` and `Γ` are the library's `fit_calibration` of `FitRule::PrivateMleKwise` with
/// the fit's `K`, `J`, `L`, `B`, `n`, `(ε, δ)` bit for bit.
#[test]
fn kwise_private_mle_feeds_policy_with_the_kwise_radius() {
    use privpref::data::FeatureBound;
    use privpref::policy::radius::{fit_calibration, FitRule, RuleInputs};
    let dir = TempDir::new("kwise-policy");
    let inp = inputs();
    write_files(&dir, &inp);
    let l = inp
        .x
        .chunks_exact(D)
        .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
        .fold(0.0, f64::max)
        * 1.01;
    let ls = l.to_string();
    let (fit_out, cov_out) = (dir.arg("fit.json"), dir.arg("cov.json"));
    let o = run(&[
        "fit",
        "--x",
        &dir.arg("x.npy"),
        "--y",
        &dir.arg("rank_i64.npy"),
        "--loss",
        "pl-ranking",
        "--k",
        "3",
        "--central",
        "--mechanism",
        "private-mle",
        "--eps",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        &ls,
        "--constraint",
        "ball",
        "--radius",
        "2",
        "--seed",
        "5",
        "--out",
        &fit_out,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&[
        "covariance",
        "--x",
        &dir.arg("x.npy"),
        "--k",
        "3",
        "--eps",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        &ls,
        "--seed",
        "6",
        "--out",
        &cov_out,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let states: Vec<f64> = (0..4 * 3 * D).map(|i| ((i * 37 % 11) as f64 - 5.0) / 10.0).collect();
    npy::write_f64(dir.path("s.npy"), &states, &[4, 3, D]).unwrap();
    let out = dir.arg("p.json");
    let v = support::policy_with_covariance(&fit_out, &dir.arg("s.npy"), &cov_out, "50", &out);
    assert!(
        v["rule"].as_str().unwrap().contains("K-wise private MLE"),
        "{}",
        v["rule"]
    );
    let rule = FitRule::PrivateMleKwise {
        eps: 0.5,
        delta: 5e-6,
        bound: FeatureBound::pairwise(l).unwrap(),
        alpha: None,
        accuracy: None,
        k: 3,
        stages: 2,
    };
    let want = fit_calibration(&rule, &RuleInputs::new(Some(N), D, Some(2.0), None, true)).unwrap();
    assert_eq!(v["confidence_radius"].as_f64().unwrap(), want.radius);
    assert_eq!(v["lambda"].as_f64().unwrap(), want.lambda);
}

//! Weak results are said, not silent: a private-loss fit without a guarantee, a pessimistic policy
//! whose confidence set covers the whole parameter set, a mistyped option, an `.npy` of a dtype
//! the array cannot have; and the default feasible set (`theta-b` with `--radius`, `none`
//! without).

use crate::{common, support};
use common::write_npy_raw;
use privpref::data::npy;
use serde_json::Value;
use std::process::Output;
use support::{run, TempDir};

const N: usize = 200;
const D: usize = 3;

/// Deterministic pairwise data (`x.npy`, `y.npy`) and states `s.npy` (20 × 4 × D).
fn write_inputs(dir: &TempDir) {
    let x: Vec<f64> = (0..N * D).map(|i| ((i * 37 % 101) as f64 / 50.0) - 1.0).collect();
    let y: Vec<u8> = (0..N)
        .map(|i| {
            let s = x[i * D] - x[i * D + 1];
            u8::from(s + ((i * 13 % 7) as f64 - 3.0) / 4.0 > 0.0)
        })
        .collect();
    npy::write_f64(dir.path("x.npy"), &x, &[N, D]).unwrap();
    npy::write_u8(dir.path("y.npy"), &y).unwrap();
    let s: Vec<f64> = (0..20 * 4 * D).map(|i| ((i * 29 % 53) as f64 / 26.0) - 1.0).collect();
    npy::write_f64(dir.path("s.npy"), &s, &[20, 4, D]).unwrap();
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `privpref fit --x x.npy --y y.npy EXTRA --out OUT`.
fn fit(dir: &TempDir, out: &str, extra: &[&str]) -> Output {
    let mut a = vec![
        "fit".to_string(),
        "--x".into(),
        dir.arg("x.npy"),
        "--y".into(),
        dir.arg("y.npy"),
        "--out".into(),
        dir.arg(out),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    run(&a)
}

fn read(dir: &TempDir, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.path(name)).unwrap()).unwrap()
}

#[test]
fn a_private_loss_fit_without_guarantee_says_so_on_one_stderr_line() {
    let dir = TempDir::new("note-guarantee");
    write_inputs(&dir);
    for loss in [["--loss", "debiased-rr"], ["--loss", "mle-rr"]] {
        let o = fit(&dir, "f.json", &[loss[0], loss[1], "--eps", "1", "--radius", "2"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v = read(&dir, "f.json");
        assert!(v["guarantee"].is_null());
        let reason = v["no_guarantee_reason"].as_str().unwrap();
        let e = stderr(&o);
        let notes: Vec<&str> = e.lines().filter(|l| l.starts_with("privpref: note: ")).collect();
        assert_eq!(notes.len(), 1, "{e}");
        assert!(
            notes[0].starts_with(&format!("privpref: note: no local privacy guarantee: {reason}; ")),
            "{e}"
        );
        assert!(notes[0].contains("--assert-provenance rr:1"), "{e}");
    }
    // The clear-label loss is not private: nothing to say. Asserted provenance: a guarantee.
    let o = fit(&dir, "m.json", &["--loss", "mle", "--radius", "2"]);
    assert!(o.status.success() && o.stderr.is_empty(), "{}", stderr(&o));
    let o = fit(
        &dir,
        "a.json",
        &[
            "--loss",
            "debiased-rr",
            "--eps",
            "1",
            "--radius",
            "2",
            "--assert-provenance",
            "rr:1",
        ],
    );
    assert!(o.status.success() && o.stderr.is_empty(), "{}", stderr(&o));
    assert_eq!(read(&dir, "a.json")["guarantee"]["eps"], 1.0);
}

#[test]
fn the_k_wise_private_loss_says_so_too() {
    let dir = TempDir::new("note-kwise");
    let (n, k) = (60, 3);
    let x: Vec<f64> = (0..n * k * D).map(|i| ((i * 31 % 97) as f64 / 48.0) - 1.0).collect();
    npy::write_f64(dir.path("xk.npy"), &x, &[n, k, D]).unwrap();
    let y: Vec<u8> = (0..n).map(|i| (i % k) as u8).collect();
    npy::write_u8(dir.path("yk.npy"), &y).unwrap();
    let o = run(&[
        "fit",
        "--x",
        &dir.arg("xk.npy"),
        "--y",
        &dir.arg("yk.npy"),
        "--loss",
        "pl-krr",
        "--eps",
        "1",
        "--k",
        "3",
        "--radius",
        "2",
        "--out",
        &dir.arg("k.json"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("privpref: note: no local privacy guarantee: ") && e.contains("krr:1:3"),
        "{e}"
    );
}

/// `privpref policy` with an explicit λ and Γ (no covariance: `M = λI`) on the fit in `f.json`.
fn policy(dir: &TempDir, gamma: &str, out: &str) -> Output {
    run(&[
        "policy",
        "--theta",
        &dir.arg("f.json"),
        "--states",
        &dir.arg("s.npy"),
        "--lambda",
        "0.5",
        "--confidence-radius",
        gamma,
        "--out",
        &dir.arg(out),
    ])
}

#[test]
fn pessimism_over_a_confidence_set_that_covers_theta_b_is_vacuous_and_says_so() {
    let dir = TempDir::new("note-vacuous");
    write_inputs(&dir);
    let o = fit(&dir, "f.json", &["--loss", "mle", "--radius", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let theta: Vec<f64> = read(&dir, "f.json")["theta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    // M = λI, θ̂ in the plane: the ellipsoid holds Θ_B once Γ ≥ √λ (B + ‖θ̂‖) (triangle inequality).
    let norm = theta.iter().map(|t| t * t).sum::<f64>().sqrt();
    let sum: f64 = theta.iter().sum();
    assert!(sum.abs() < 1e-12);
    let expected = (0.5f64 * (2.0 + norm).powi(2) + 0.5 * sum * sum / D as f64).sqrt();

    let o = policy(&dir, "100", "big.json");
    assert!(o.status.success(), "{}", stderr(&o));
    let v = read(&dir, "big.json");
    assert_eq!(v["vacuous"], true);
    let cover = v["covering_radius"].as_f64().unwrap();
    assert!((cover - expected).abs() <= 1e-9 * expected, "{cover} vs {expected}");
    // Every policy's pessimistic value is ≤ 0 (the reference's) over all of Θ_B.
    assert!(v["upper_bound"].as_f64().unwrap() <= 1e-12);
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.starts_with("privpref: note: pessimism is vacuous: the confidence radius 100.0000 covers the whole theta-b set of radius 2"), "{e}");
    assert!(e.contains(&format!("{cover:.4}")), "{e}");
    assert_eq!(v["vacuous_reason"].as_str().map(|r| e.contains(r)), Some(true));

    // Just below the covering radius of the bound (its √λ‖θ̂‖ part gone): not flagged, no note.
    let small = format!("{}", (0.5f64).sqrt() * 0.5);
    let o = policy(&dir, &small, "small.json");
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", stderr(&o));
    let v = read(&dir, "small.json");
    assert_eq!(v["vacuous"], false);
    assert!(v["vacuous_reason"].is_null());
    assert!(!stderr(&o).contains("vacuous"), "{}", stderr(&o));
}

#[test]
fn a_mistyped_option_gets_a_suggestion() {
    let dir = TempDir::new("note-typo");
    write_inputs(&dir);
    let o = fit(&dir, "f.json", &["--loss", "mle", "--raduis", "2"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("'--raduis'") && e.contains("did you mean '--radius'?"),
        "{e}"
    );
    // Nothing similar: no suggestion.
    let o = fit(&dir, "f.json", &["--loss", "mle", "--zzzzzz", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains("did you mean"), "{}", stderr(&o));
}

#[test]
fn dtype_errors_name_the_dtype_and_what_the_array_must_be() {
    let dir = TempDir::new("note-dtype");
    write_inputs(&dir);
    let half: Vec<u8> = (0..N * D).flat_map(|_| 0x3c00u16.to_le_bytes()).collect(); // 1.0 as f16
    write_npy_raw(&dir.path("x16.npy"), "<f2", false, &[N, D], &half);
    let ints: Vec<u8> = (0..N * D).flat_map(|i| (i as i64).to_le_bytes()).collect();
    write_npy_raw(&dir.path("xi.npy"), "<i8", false, &[N, D], &ints);
    let yf: Vec<f64> = vec![1.0; N];
    npy::write_f64(dir.path("yf.npy"), &yf, &[N]).unwrap();
    let yh: Vec<u8> = (0..N).flat_map(|_| 0x3c00u16.to_le_bytes()).collect();
    write_npy_raw(&dir.path("yh.npy"), "<f2", false, &[N], &yh);
    let cases = [
        (
            "x16.npy",
            "y.npy",
            "dtype float16 ('<f2'); features must be float64 or float32 (convert with x.astype(np.float64))",
        ),
        (
            "xi.npy",
            "y.npy",
            "dtype int64 ('<i8'); features must be float64 or float32 (convert with x.astype(np.float64))",
        ),
        (
            "x.npy",
            "yf.npy",
            "dtype float64 ('<f8'); labels must be an integer or bool type (convert with y.astype(np.int64))",
        ),
        (
            "x.npy",
            "yh.npy",
            "dtype float16 ('<f2'); labels must be an integer or bool type (convert with y.astype(np.int64))",
        ),
    ];
    for (x, y, msg) in cases {
        let o = run(&[
            "fit",
            "--x",
            &dir.arg(x),
            "--y",
            &dir.arg(y),
            "--loss",
            "mle",
            "--radius",
            "2",
        ]);
        assert_eq!(o.status.code(), Some(1), "{x} {y}");
        let e = stderr(&o);
        let bad = if x == "x.npy" { y } else { x };
        assert_eq!(e.trim_end(), format!("privpref: {}: {msg}", dir.arg(bad)), "{x} {y}");
    }
}

#[test]
fn radius_alone_means_theta_b_and_no_radius_means_unconstrained() {
    let dir = TempDir::new("note-default");
    write_inputs(&dir);
    let cases: [(&[&str], &str, Option<f64>); 4] = [
        (&["--radius", "2"], "theta-b", Some(2.0)),
        (&[], "none", None),
        (&["--constraint", "ball", "--radius", "2"], "ball", Some(2.0)),
        (&["--constraint", "sum-zero"], "sum-zero", None),
    ];
    for (extra, name, radius) in cases {
        let mut a = vec!["--loss", "mle"];
        a.extend_from_slice(extra);
        let o = fit(&dir, "f.json", &a);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let v = read(&dir, "f.json");
        assert_eq!(v["constraint"], name, "{extra:?}");
        assert_eq!(v["radius"].as_f64(), radius, "{extra:?}");
    }
    // --radius alone is Θ_B: the sum-zero constraint holds at the answer.
    let o = fit(&dir, "b.json", &["--loss", "mle", "--radius", "0.1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let th = read(&dir, "b.json")["theta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect::<Vec<_>>();
    assert!(th.iter().sum::<f64>().abs() < 1e-12);
    assert!(
        (th.iter().map(|t| t * t).sum::<f64>().sqrt() - 0.1).abs() < 1e-9,
        "{th:?}"
    );
    // A bounded set named without a radius is still an error.
    let o = fit(&dir, "e.json", &["--loss", "mle", "--constraint", "theta-b"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("theta-b") && stderr(&o).contains("--radius"));
}

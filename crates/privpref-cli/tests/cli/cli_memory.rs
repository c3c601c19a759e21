//! Memory planned before it is allocated, through the binary: at `n = 10`, `d = 200 000` the
//! `d × d` matrices of dense Newton, the central mechanisms and the covariance are refused with
//! one line naming the size and the alternative (exit 1, never an abort); `--memory-limit` and
//! `PRIVPREF_MEMORY_LIMIT` set the limit.

use crate::support;
use privpref::data::npy;
use std::process::Output;
use support::{run, TempDir};

fn one_line_error(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let e = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(e.trim_end().lines().count(), 1, "stderr must be one line: {e:?}");
    assert!(e.starts_with("privpref: "), "{e}");
    e
}

/// `n × d` features with rows of norm about 1 and alternating labels.
fn write_data(dir: &TempDir, n: usize, d: usize) {
    let x: Vec<f64> = (0..n * d)
        .map(|i| (((i * 7919) % 1000) as f64 / 1000.0 - 0.5) * (12.0 / d as f64).sqrt())
        .collect();
    let y: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
    npy::write_f64(dir.arg("x.npy"), &x, &[n, d]).unwrap();
    npy::write_u8(dir.arg("y.npy"), &y).unwrap();
}

/// `covariance --x X --eps 1 --delta 1e-5 --feature-bound 1`, then `extra`.
fn covariance_args(dir: &TempDir, extra: &[&str]) -> Vec<String> {
    let x = dir.arg("x.npy");
    let mut a: Vec<String> = [
        "covariance",
        "--x",
        &x,
        "--eps",
        "1",
        "--delta",
        "1e-5",
        "--feature-bound",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn fit_args(dir: &TempDir, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["fit", "--loss", "mle", "--radius", "2", "--x"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend([
        dir.arg("x.npy"),
        "--y".into(),
        dir.arg("y.npy"),
        "--out".into(),
        dir.arg("fit.json"),
    ]);
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

#[test]
fn d_200000_dense_matrices_are_refused_naming_the_size() {
    let dir = TempDir::new("memory-wide");
    write_data(&dir, 10, 200_000);
    let e = one_line_error(&run(&fit_args(&dir, &["--solver", "newton"])));
    assert!(e.contains("200000 × 200000 Hessian"), "{e}");
    assert!(e.contains("--solver lbfgs"), "{e}");
    assert!(e.contains("TiB"), "{e}");
    for mech in ["objpert", "private-mle"] {
        let o = run(&fit_args(
            &dir,
            &[
                "--central",
                "--mechanism",
                mech,
                "--eps",
                "1",
                "--delta",
                "1e-5",
                "--feature-bound",
                "1",
            ],
        ));
        let e = one_line_error(&o);
        assert!(
            e.contains("central mechanism") && e.contains("200000 × 200000"),
            "{mech}: {e}"
        );
    }
    let cov = run(&covariance_args(&dir, &["--out", &dir.arg("cov.json")]));
    let e = one_line_error(&cov);
    assert!(e.contains("private covariance (its 200000 × 200000 matrices)"), "{e}");
    assert!(!dir.path("fit.json").exists() && !dir.path("cov.json").exists());
}

#[test]
fn the_limit_comes_from_the_flag_or_the_environment() {
    let dir = TempDir::new("memory-limit");
    write_data(&dir, 200, 30);
    // Dense Newton at d = 30 plans above 2 MiB (its Hessian panels); 1M is below.
    assert!(privpref::solver::memory::newton_bytes(200, 30, 1) > 2 << 20);
    let e = one_line_error(&run(&fit_args(&dir, &["--solver", "newton", "--memory-limit", "1M"])));
    assert!(e.contains("more than the 1.00 MiB memory limit"), "{e}");
    let o = support::command()
        .args(fit_args(&dir, &["--solver", "newton"]))
        .env("PRIVPREF_MEMORY_LIMIT", "1M")
        .output()
        .unwrap();
    assert!(one_line_error(&o).contains("1.00 MiB memory limit"));
    // The flag wins over the environment.
    let o = support::command()
        .args(fit_args(&dir, &["--solver", "newton", "--memory-limit", "1G"]))
        .env("PRIVPREF_MEMORY_LIMIT", "1M")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // auto under the same small limit: L-BFGS, which fits.
    std::fs::remove_file(dir.path("fit.json")).unwrap();
    let o = run(&fit_args(&dir, &["--solver", "auto", "--memory-limit", "1M"]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_file(dir.path("fit.json")).unwrap();
    let e = one_line_error(&run(&fit_args(&dir, &["--memory-limit", "lots"])));
    assert!(e.contains("memory-limit"), "{e}");
    // Covariance and the central mechanism under the flag.
    let e = one_line_error(&run(&covariance_args(&dir, &["--memory-limit", "10K"])));
    assert!(
        e.contains("30 × 30 matrices") && e.contains("10.0 KiB memory limit"),
        "{e}"
    );
    let e = one_line_error(&run(&fit_args(
        &dir,
        &[
            "--central",
            "--mechanism",
            "objpert",
            "--eps",
            "1",
            "--delta",
            "1e-5",
            "--feature-bound",
            "1",
            "--memory-limit",
            "1M",
        ],
    )));
    assert!(e.contains("central mechanism"), "{e}");
}

#[test]
fn policy_refuses_a_confidence_set_above_the_limit() {
    let dir = TempDir::new("memory-policy");
    write_data(&dir, 200, 30);
    let o = run(&fit_args(&dir, &["--solver", "lbfgs"]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let states: Vec<f64> = (0..20 * 3 * 30).map(|i| ((i % 13) as f64 - 6.0) / 60.0).collect();
    npy::write_f64(dir.arg("s.npy"), &states, &[20, 3, 30]).unwrap();
    let args = |limit: &str| {
        run(&[
            "policy",
            "--theta",
            &dir.arg("fit.json"),
            "--states",
            &dir.arg("s.npy"),
            "--x",
            &dir.arg("x.npy"),
            "--memory-limit",
            limit,
        ])
    };
    let e = one_line_error(&args("4K"));
    assert!(e.contains("confidence set (its 30 × 30 matrices)"), "{e}");
    let o = args("1G");
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

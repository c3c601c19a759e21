//! `privpref fit --solver newton-cg` through the binary.

use crate::support::TempDir;
use privpref::estimator::{fit, FitOptions, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::simulation_rng;
use privpref::sim::{btl_pairs, theta_star};

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// BTL pairs of `n × d` (simulation seeds `seed`, `seed + 1`) written as `x.npy` and `y.npy` in
/// a fresh scratch directory named after `tag`: the directory and the data.
fn btl_files(tag: &str, n: usize, d: usize, seed: u64) -> (TempDir, privpref::data::PairwiseData) {
    use privpref::data::npy;
    let dir = TempDir::new(tag);
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(seed)).unwrap();
    let data = btl_pairs(n, &theta, &mut simulation_rng(seed + 1)).unwrap();
    npy::write_f64(dir.path("x.npy"), &data.x, &[n, d]).unwrap();
    npy::write_u8(dir.path("y.npy"), &data.y).unwrap();
    (dir, data)
}

/// `privpref fit --solver newton-cg`: accepted, reported, and the library's bits.
#[test]
fn cli_runs_newton_cg() {
    let (n, d) = (2000, 6);
    let (dir, data) = btl_files("newton-cg", n, d, 10);
    let (x, y, out) = (dir.path("x.npy"), dir.path("y.npy"), dir.path("out.json"));
    let run = |solver: &str| {
        let o = crate::support::command()
            .args([
                "fit",
                "--loss",
                "mle",
                "--constraint",
                "theta-b",
                "--radius",
                "2",
                "--solver",
                solver,
            ])
            .arg("--x")
            .arg(&x)
            .arg("--y")
            .arg(&y)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        v
    };
    let v = run("newton-cg");
    assert_eq!(v["solver"], "newton-cg");
    assert_eq!(v["converged"], true);
    assert!(v["cg_iterations"].as_u64().unwrap() > 0);
    assert_eq!(v["hessian_evals"], 0);
    let cli: Vec<f64> = v["theta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    o.solver = SolverKind::NewtonCg.into();
    let lib = fit(data.view().unwrap(), &o).unwrap();
    assert_eq!(bits(&cli), bits(&lib.theta));
    let nv = run("newton");
    assert_eq!(nv["fused_evals"], nv["hessian_evals"]);
    // A misspelt solver is one clear line on stderr.
    let bad = crate::support::command()
        .args(["fit", "--loss", "mle", "--constraint", "none", "--solver", "newton_cg"])
        .arg("--x")
        .arg(&x)
        .arg("--y")
        .arg(&y)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("newton-cg"), "{err}");
}

/// The progress line is drawn only on a terminal: with stderr a pipe, a fit writes nothing to
/// it, with or without `--quiet`, and `--quiet` changes no bit of the answer.
#[test]
fn the_progress_line_is_silent_off_a_terminal_and_quiet_changes_nothing() {
    let (dir, _) = btl_files("quiet", 3000, 5, 12);
    let (x, y) = (dir.path("x.npy"), dir.path("y.npy"));
    let run = |solver: &str, quiet: bool| {
        let out = dir.path(&format!("out-{solver}-{quiet}.json"));
        let mut c = crate::support::command();
        c.args(["fit", "--loss", "mle", "--radius", "2", "--solver", solver])
            .arg("--x")
            .arg(&x)
            .arg("--y")
            .arg(&y)
            .arg("--out")
            .arg(&out);
        if quiet {
            c.arg("--quiet");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        (v["theta"].clone(), String::from_utf8(o.stderr).unwrap())
    };
    for solver in ["lbfgs", "newton", "newton-cg", "sgd"] {
        let (theta, stderr) = run(solver, false);
        let quiet = run(solver, true);
        assert_eq!((theta, stderr.clone()), quiet, "{solver}");
        // The exact solvers write nothing; SGD its one-line note that the result is approximate.
        match solver {
            "sgd" => assert!(stderr.starts_with("privpref: note: approximate result") && stderr.lines().count() == 1),
            _ => assert!(stderr.is_empty(), "{solver}: {stderr}"),
        }
    }
}

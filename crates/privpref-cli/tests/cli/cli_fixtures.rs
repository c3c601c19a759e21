//! Every reference fixture of `tests/data/fixtures/*.json` through the `privpref fit` binary:
//! the data go to `.npy` files, the answer comes back as the JSON result (the CLI
//! contract of `docs/cli.md`). Mirrors `tests/library/closed_form.rs`, which checks the same fixtures
//! through the library, and also checks that the CLI returns exactly the library's answer (bit for
//! bit).

use crate::{common, support};
use support::{run, TempDir};

use common::{check_answer, fit_fixture, fixtures, write_npy_raw, Fixture, FEAS_TOL};
use privpref::data::npy;
use serde_json::Value;
use std::path::Path;

/// The keys `result.json` must hold at least (the CLI contract of `docs/cli.md`).
const CONTRACT_KEYS: [&str; 11] = [
    "theta",
    "objective",
    "kkt_residual",
    "iterations",
    "converged",
    "termination",
    "solver",
    "loss",
    "n",
    "d",
    "elapsed_s",
];

/// A float formatted so that it parses back to the same bits (`{:?}` is shortest round-trip).
fn num(v: f64) -> String {
    format!("{v:?}")
}

fn path_arg(p: &Path) -> String {
    p.to_str().expect("UTF-8 temp path").to_string()
}

/// Writes the fixture's inputs and builds the `privpref fit` command line.
fn command_line(fx: &Fixture, dir: &TempDir, out: &Path) -> Vec<String> {
    let x = dir.path("x.npy");
    let y = dir.path("y.npy");
    npy::write_f64(&x, &fx.x, &[fx.n, fx.d]).unwrap();
    npy::write_u8(&y, &fx.y).unwrap();
    let mut args: Vec<String> = vec!["fit".into(), "--x".into(), path_arg(&x), "--y".into(), path_arg(&y)];
    args.extend(problem_args(fx, dir));
    if let Some(w) = &fx.weights {
        let p = dir.path("weights.npy");
        npy::write_f64(&p, w, &[w.len()]).unwrap();
        args.extend(["--weights".into(), path_arg(&p)]);
    }
    args.extend(["--solver".into(), "newton".into(), "--out".into(), path_arg(out)]);
    args
}

/// The arguments that define the problem besides the data files: loss, eps, constraint,
/// radius, ridge and linear term (written to `linear_term.npy`).
fn problem_args(fx: &Fixture, dir: &TempDir) -> Vec<String> {
    let mut args: Vec<String> = vec!["--loss".into(), fx.loss.clone()];
    if let Some(e) = fx.eps {
        args.extend(["--eps".into(), num(e)]);
    }
    args.extend(["--constraint".into(), fx.constraint.clone()]);
    if let Some(r) = fx.radius {
        args.extend(["--radius".into(), num(r)]);
    }
    if fx.ridge != 0.0 {
        args.extend(["--ridge".into(), num(fx.ridge)]);
    }
    if let Some(b) = &fx.linear_term {
        let p = dir.path("linear_term.npy");
        npy::write_f64(&p, b, &[b.len()]).unwrap();
        args.extend(["--linear-term".into(), path_arg(&p)]);
    }
    args
}

fn floats(v: &Value) -> Option<Vec<f64>> {
    v.as_array()?.iter().map(Value::as_f64).collect()
}

/// The library's own answer for the fixture.
fn library_theta(fx: &Fixture) -> Vec<f64> {
    fit_fixture(fx).report.theta
}

/// Runs one fixture through the binary; returns the problems found.
fn check_fixture(fx: &Fixture, idx: usize) -> Vec<String> {
    let dir = TempDir::new(&format!("{idx}"));
    let out = dir.path("result.json");
    let args = command_line(fx, &dir, &out);
    let o = run(&args);
    let code = o.status.code();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let (notes, stderr) = split_guarantee_note(&String::from_utf8_lossy(&o.stderr));
    let mut bad = Vec::new();

    if stderr.contains("panicked") || stderr.contains("internal error") {
        bad.push(format!("panic: {}", stderr.trim()));
    }
    if !stdout.is_empty() {
        bad.push(format!("stdout not empty with --out: {:?}", stdout.trim()));
    }
    let text = match std::fs::read_to_string(&out) {
        Ok(t) => t,
        Err(e) => {
            bad.push(format!(
                "no result.json ({e}); exit {code:?}, stderr {:?}",
                stderr.trim()
            ));
            return bad;
        }
    };
    let v: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            bad.push(format!("result.json is not JSON: {e}"));
            return bad;
        }
    };
    let missing: Vec<&str> = CONTRACT_KEYS.iter().copied().filter(|k| v.get(k).is_none()).collect();
    if !missing.is_empty() {
        bad.push(format!("result.json lacks the contract keys {missing:?}"));
    }
    // The fixtures' labels carry no provenance: a private loss (one with an eps) gets the note.
    let want_note = usize::from(!v["eps"].is_null() && v["guarantee"].is_null());
    if notes != want_note {
        bad.push(format!("{notes} no-guarantee notes on stderr, want {want_note}"));
    }
    // Echoed metadata.
    if v["loss"].as_str() != Some(fx.loss.as_str()) {
        bad.push(format!("loss = {}, want {}", v["loss"], fx.loss));
    }
    if v["solver"].as_str() != Some("newton") {
        bad.push(format!("solver = {}, want \"newton\"", v["solver"]));
    }
    if v["constraint"].as_str() != Some(fx.constraint.as_str()) {
        bad.push(format!("constraint = {}, want {}", v["constraint"], fx.constraint));
    }
    if v["n"].as_u64() != Some(fx.n as u64) || v["d"].as_u64() != Some(fx.d as u64) {
        bad.push(format!("(n, d) = ({}, {}), want ({}, {})", v["n"], v["d"], fx.n, fx.d));
    }
    if !v["elapsed_s"].as_f64().is_some_and(|t| t >= 0.0 && t.is_finite()) {
        bad.push(format!("elapsed_s = {}", v["elapsed_s"]));
    }
    if v["iterations"].as_u64().is_none() {
        bad.push(format!("iterations = {}", v["iterations"]));
    }
    let theta = floats(&v["theta"]);
    match &theta {
        Some(t) if t.len() == fx.d => {}
        _ => bad.push(format!("theta = {} is not {} numbers", v["theta"], fx.d)),
    }

    match fx.status.as_str() {
        "converged" => {
            if code != Some(0) {
                bad.push(format!("exit {code:?}, want 0; stderr {:?}", stderr.trim()));
            }
            if !stderr.is_empty() {
                bad.push(format!("stderr not empty on success: {:?}", stderr.trim()));
            }
            if v["converged"] != Value::Bool(true) || v["termination"].as_str() != Some("converged") {
                bad.push(format!(
                    "converged = {}, termination = {}",
                    v["converged"], v["termination"]
                ));
            }
            let objective = v["objective"].as_f64();
            let on_boundary = v["on_boundary"].as_bool();
            match (&theta, objective, on_boundary) {
                (Some(t), Some(f), Some(ob)) if t.len() == fx.d => {
                    bad.extend(check_answer(fx, t, f, ob));
                    let lib = library_theta(fx);
                    if t.iter().zip(&lib).any(|(a, b)| a.to_bits() != b.to_bits()) {
                        bad.push(format!("CLI theta {t:?} differs from the library's {lib:?}"));
                    }
                }
                _ => bad.push(format!(
                    "theta/objective/on_boundary missing: {} / {} / {}",
                    v["theta"], v["objective"], v["on_boundary"]
                )),
            }
            match (v["kkt_residual"].as_f64(), v["kkt_tol"].as_f64()) {
                (Some(r), Some(t)) if r <= t => {}
                (r, t) => bad.push(format!("KKT residual {r:?} not within its tolerance {t:?}")),
            }
            if let (Some(mu), Some(true), Some(m)) = (fx.multiplier, on_boundary, v["multiplier"].as_f64()) {
                if (m - mu).abs() > 1e-7 * mu.abs().max(1e-3) {
                    bad.push(format!("multiplier {m} vs {mu}"));
                }
            }
            if fx.loss != "mle-rr" && v["certified_global"] != Value::Bool(true) {
                bad.push(format!(
                    "convex problem not certified global ({})",
                    v["certified_global"]
                ));
            }
        }
        "no-minimizer" => {
            if code != Some(3) {
                bad.push(format!("exit {code:?}, want 3"));
            }
            if v["converged"] != Value::Bool(false) || v["termination"].as_str() != Some("no-minimizer") {
                bad.push(format!(
                    "converged = {}, termination = {}",
                    v["converged"], v["termination"]
                ));
            }
            let lines: Vec<&str> = stderr.lines().collect();
            if lines.len() != 1 || lines[0].trim().is_empty() {
                bad.push(format!("want exactly one stderr line, got {lines:?}"));
            }
        }
        other => panic!("unknown status {other}"),
    }
    // The returned point is always feasible.
    if let Some(t) = &theta {
        if fx.constraint == "theta-b" && t.iter().sum::<f64>().abs() > FEAS_TOL {
            bad.push(format!("infeasible: Σθ = {:e}", t.iter().sum::<f64>()));
        }
    }
    bad
}

#[test]
fn cli_fit_matches_every_reference_fixture() {
    let all = fixtures();
    let mut failures = Vec::new();
    let (mut converged, mut unbounded) = (0, 0);
    for (idx, fx) in all.iter().enumerate() {
        match fx.status.as_str() {
            "converged" => converged += 1,
            _ => unbounded += 1,
        }
        let bad = check_fixture(fx, idx);
        if !bad.is_empty() {
            failures.push(format!("{} [{}]: {}", fx.name, fx.source, bad.join("; ")));
        }
    }
    eprintln!(
        "{} fixtures through the CLI ({converged} converged, {unbounded} no-minimizer)",
        all.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed through the CLI:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn cli_fit_writes_json_to_stdout_without_out() {
    // Without --out the same result goes to stdout (and nothing to stderr).
    let fx = fixtures().into_iter().find(|f| f.status == "converged").unwrap();
    let dir = TempDir::new("stdout");
    let out = dir.path("result.json");
    let mut args = command_line(&fx, &dir, &out);
    args.truncate(args.len() - 2); // drop `--out result.json`
    let o = run(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (_, rest) = split_guarantee_note(&String::from_utf8_lossy(&o.stderr));
    assert!(rest.is_empty(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.exists());
    let v: Value = serde_json::from_slice(&o.stdout).expect("stdout is the JSON result");
    for k in CONTRACT_KEYS {
        assert!(v.get(k).is_some(), "missing key {k}");
    }
    assert!(check_answer(
        &fx,
        &floats(&v["theta"]).unwrap(),
        v["objective"].as_f64().unwrap(),
        v["on_boundary"].as_bool().unwrap()
    )
    .is_empty());
}

fn le_bytes<T: Copy, const K: usize>(v: &[T], to: impl Fn(T) -> [u8; K]) -> Vec<u8> {
    v.iter().flat_map(|&x| to(x)).collect()
}

/// `privpref fit` on the given data files (weights optional) and the fixture's problem; returns θ.
fn fit_files(fx: &Fixture, dir: &TempDir, x: &Path, y: &Path, w: Option<&Path>, what: &str) -> Vec<f64> {
    let out = dir.path("layout.json");
    let mut args: Vec<String> = vec!["fit".into(), "--x".into(), path_arg(x), "--y".into(), path_arg(y)];
    args.extend(problem_args(fx, dir));
    if let Some(w) = w {
        args.extend(["--weights".into(), path_arg(w)]);
    }
    args.extend(["--out".into(), path_arg(&out)]);
    let o = run(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{} with {what}: stderr {}",
        fx.name,
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    floats(&v["theta"]).unwrap()
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits())
}

#[test]
fn equivalent_input_layouts_give_identical_answers() {
    // The same data as Fortran-order x, bool or int64 (n × 1) labels, (n × 1) weights, or float32
    // features and weights (against their exact float64 widening) must give the same bits.
    let all = fixtures();
    let picked: Vec<&Fixture> = all
        .iter()
        .filter(|f| f.status == "converged" && f.weights.is_some() && f.n >= 2 && f.d >= 2)
        .collect();
    assert!(picked.len() >= 3, "too few weighted fixtures: {}", picked.len());
    for (k, fx) in picked.into_iter().enumerate() {
        let dir = TempDir::new(&format!("layout-{k}"));
        let (n, d) = (fx.n, fx.d);
        let w = fx.weights.as_ref().unwrap();
        let p = |s: &str| dir.path(s);
        npy::write_f64(p("x.npy"), &fx.x, &[n, d]).unwrap();
        npy::write_u8(p("y.npy"), &fx.y).unwrap();
        npy::write_f64(p("w.npy"), w, &[n]).unwrap();
        let reference = fit_files(fx, &dir, &p("x.npy"), &p("y.npy"), Some(&p("w.npy")), "C-order float64");

        // Fortran order: column after column.
        let xt: Vec<f64> = (0..d).flat_map(|j| (0..n).map(move |i| fx.x[i * d + j])).collect();
        write_npy_raw(&p("x_f.npy"), "<f8", true, &[n, d], &le_bytes(&xt, f64::to_le_bytes));
        write_npy_raw(&p("y_bool.npy"), "|b1", false, &[n], &fx.y);
        let yi: Vec<i64> = fx.y.iter().map(|&v| i64::from(v)).collect();
        write_npy_raw(
            &p("y_i8_col.npy"),
            "<i8",
            false,
            &[n, 1],
            &le_bytes(&yi, i64::to_le_bytes),
        );
        npy::write_f64(p("w_col.npy"), w, &[n, 1]).unwrap();
        let variants = [
            ("Fortran-order x", "x_f.npy", "y.npy", "w.npy"),
            ("bool y", "x.npy", "y_bool.npy", "w.npy"),
            (
                "int64 (n × 1) y and (n × 1) weights",
                "x.npy",
                "y_i8_col.npy",
                "w_col.npy",
            ),
        ];
        for (what, x, y, wf) in variants {
            let t = fit_files(fx, &dir, &p(x), &p(y), Some(&p(wf)), what);
            assert!(
                same_bits(&t, &reference),
                "{}: {what} gave {t:?}, C order {reference:?}",
                fx.name
            );
        }

        // float32 inputs are widened exactly.
        let x32: Vec<f32> = fx.x.iter().map(|&v| v as f32).collect();
        let w32: Vec<f32> = w.iter().map(|&v| v as f32).collect();
        write_npy_raw(&p("x32.npy"), "<f4", false, &[n, d], &le_bytes(&x32, f32::to_le_bytes));
        write_npy_raw(&p("w32.npy"), "<f4", false, &[n], &le_bytes(&w32, f32::to_le_bytes));
        let x64: Vec<f64> = x32.iter().map(|&v| f64::from(v)).collect();
        let w64: Vec<f64> = w32.iter().map(|&v| f64::from(v)).collect();
        npy::write_f64(p("x32as64.npy"), &x64, &[n, d]).unwrap();
        npy::write_f64(p("w32as64.npy"), &w64, &[n]).unwrap();
        let a = fit_files(
            fx,
            &dir,
            &p("x32.npy"),
            &p("y.npy"),
            Some(&p("w32.npy")),
            "float32 x and weights",
        );
        let b = fit_files(
            fx,
            &dir,
            &p("x32as64.npy"),
            &p("y.npy"),
            Some(&p("w32as64.npy")),
            "widened float32",
        );
        assert!(
            same_bits(&a, &b),
            "{}: float32 files gave {a:?}, their float64 widening {b:?}",
            fx.name
        );
    }
}

/// The count of `privpref: note: no local privacy guarantee: …` lines in `stderr` (the note of a
/// private loss on labels without provenance, checked in `cli_notes`) and the rest of it.
fn split_guarantee_note(stderr: &str) -> (usize, String) {
    let note = |l: &str| l.starts_with("privpref: note: no local privacy guarantee: ");
    let rest: String = stderr.lines().filter(|l| !note(l)).map(|l| format!("{l}\n")).collect();
    (stderr.lines().filter(|l| note(l)).count(), rest)
}

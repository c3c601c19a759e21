//! Memory-mapped input and atomic output of the binary.
//!
//! * `privpref fit` on a C-order file (memory-mapped) returns the θ of the library's fit on the
//!   copy `read_matrix_keep` reads, bit for bit, for `float64` and `float32` features, and the
//!   same JSON, key for key, as on the same matrix stored in Fortran order (which cannot be
//!   mapped and is read as a copy); the same holds for `fit --central` and `covariance`.
//! * Output files are renamed into place whole: a new file replaces the old one, no temporary
//!   file is left next to them, and a failed write names the output and leaves it as it was.

use crate::{common, support};
use common::write_npy_raw;
use privpref::data::npy::{self, Matrix};
use privpref::data::PairwiseView;
use privpref::estimator::{fit, FitOptions, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::simulation_rng;
use privpref::sim::{btl_pairs, theta_star};
use serde_json::Value;
use support::{json_of, run, TempDir};

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn theta_bits(v: &Value) -> Vec<u64> {
    v["theta"]
        .as_array()
        .expect("theta")
        .iter()
        .map(|t| t.as_f64().expect("float").to_bits())
        .collect()
}

/// `v` without its wall time (the only field that may differ between two runs).
fn timeless(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("elapsed_s");
    }
    v
}

/// Writes `x` (`n × d`, row-major, rounded to f32 when `f32_data`) in C order to `c.npy` and in
/// Fortran order to `f.npy`.
fn write_both_orders(dir: &TempDir, x: &[f64], n: usize, d: usize, f32_data: bool) {
    let bytes = |order: &mut dyn Iterator<Item = usize>| -> Vec<u8> {
        order
            .flat_map(|k| {
                if f32_data {
                    (x[k] as f32).to_le_bytes().to_vec()
                } else {
                    x[k].to_le_bytes().to_vec()
                }
            })
            .collect()
    };
    let descr = if f32_data { "<f4" } else { "<f8" };
    let c = bytes(&mut (0..n * d));
    let f = bytes(&mut (0..d).flat_map(|j| (0..n).map(move |i| i * d + j)));
    write_npy_raw(&dir.path("c.npy"), descr, false, &[n, d], &c);
    write_npy_raw(&dir.path("f.npy"), descr, true, &[n, d], &f);
}

#[test]
fn fit_on_a_mapped_file_returns_the_theta_of_the_copy() {
    let (n, d) = (4000, 6);
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(1)).unwrap();
    let p = btl_pairs(n, &theta, &mut simulation_rng(2)).unwrap();
    for f32_data in [false, true] {
        let dir = TempDir::new("mmap-fit");
        write_both_orders(&dir, &p.x, n, d, f32_data);
        npy::write_u8(dir.path("y.npy"), &p.y).unwrap();
        assert!(npy::load_matrix(dir.path("c.npy")).unwrap().is_mapped());
        assert!(!npy::load_matrix(dir.path("f.npy")).unwrap().is_mapped());
        // The expected θ: the library's fit on the copy the reader makes of the C-order file.
        let (m, _, _) = npy::read_matrix_keep(dir.path("c.npy")).unwrap();
        let view = match &m {
            Matrix::F64(v) => PairwiseView::new(v, n, d, &p.y, None).unwrap(),
            Matrix::F32(v) => PairwiseView::new_f32(v, n, d, &p.y, None).unwrap(),
        };
        for solver in ["newton", "lbfgs"] {
            let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
            o.solver = SolverKind::parse(solver).unwrap().into();
            let want = fit(view, &o).unwrap();
            let cli = |x: &str| {
                json_of(&run(&[
                    "fit",
                    "--x",
                    &dir.arg(x),
                    "--y",
                    &dir.arg("y.npy"),
                    "--loss",
                    "mle",
                    "--radius",
                    "2",
                    "--solver",
                    solver,
                    "--threads",
                    "2",
                ]))
            };
            let (mapped, copied) = (cli("c.npy"), cli("f.npy"));
            assert_eq!(theta_bits(&mapped), bits(&want.theta), "{solver}, f32 = {f32_data}");
            assert_eq!(mapped["x_dtype"], if f32_data { "float32" } else { "float64" });
            assert_eq!(timeless(mapped), timeless(copied), "{solver}, f32 = {f32_data}");
        }
        // The central fit and the covariance read the features the same way.
        for args in [
            &[
                "fit",
                "--loss",
                "mle",
                "--y",
                &dir.arg("y.npy"),
                "--central",
                "--eps",
                "1",
                "--delta",
                "1e-9",
                "--feature-bound",
                "10",
                "--radius",
                "2",
                "--seed",
                "3",
            ][..],
            &[
                "covariance",
                "--eps",
                "1",
                "--delta",
                "1e-9",
                "--feature-bound",
                "10",
                "--seed",
                "3",
            ][..],
        ] {
            let cli = |x: &str| {
                let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
                a.extend(["--x".into(), dir.arg(x)]);
                timeless(json_of(&run(&a)))
            };
            assert_eq!(cli("c.npy"), cli("f.npy"), "{} f32 = {f32_data}", args[0]);
        }
    }
}

#[cfg(unix)] // inode numbers
#[test]
fn outputs_are_written_whole_and_leave_no_temporary_files() {
    let dir = TempDir::new("atomic");
    let (n, d) = (500, 3);
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(1)).unwrap();
    let p = btl_pairs(n, &theta, &mut simulation_rng(2)).unwrap();
    npy::write_f64(dir.path("x.npy"), &p.x, &[n, d]).unwrap();
    npy::write_u8(dir.path("y.npy"), &p.y).unwrap();
    let listing = || {
        let mut v: Vec<String> = std::fs::read_dir(dir.path(""))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    // privatize: the labels and their side-car, nothing else.
    let o = run(&[
        "privatize",
        "--y",
        &dir.arg("y.npy"),
        "--eps",
        "1",
        "--seed",
        "4",
        "--out",
        &dir.arg("yp.npy"),
    ]);
    json_of(&o);
    assert_eq!(listing(), ["x.npy", "y.npy", "yp.npy", "yp.npy.provenance.json"]);
    assert_eq!(npy::read_labels(dir.path("yp.npy"), 2).unwrap().len(), n);
    // fit --out over an existing file replaces it whole.
    std::fs::write(dir.path("r.json"), "old contents that are longer than nothing at all").unwrap();
    let fit_to = |out: &str| {
        run(&[
            "fit",
            "--x",
            &dir.arg("x.npy"),
            "--y",
            &dir.arg("yp.npy"),
            "--loss",
            "debiased-rr",
            "--eps",
            "1",
            "--radius",
            "2",
            "--out",
            out,
        ])
    };
    let inode = |name: &str| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(dir.path(name)).unwrap().ino()
    };
    let before = inode("r.json");
    let o = fit_to(&dir.arg("r.json"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A new file renamed over the old one, not the old one rewritten in place.
    assert_ne!(inode("r.json"), before);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(dir.path("r.json")).unwrap()).unwrap();
    assert_eq!(v["n"], n);
    assert_eq!(
        listing(),
        ["r.json", "x.npy", "y.npy", "yp.npy", "yp.npy.provenance.json"]
    );
    // A write that fails (the target is a directory) names the target, leaves it as it was and
    // leaves no temporary file.
    std::fs::create_dir(dir.path("taken")).unwrap();
    let o = fit_to(&dir.arg("taken"));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("taken") && err.lines().count() == 1, "{err}");
    assert!(dir.path("taken").is_dir());
    assert_eq!(
        listing(),
        ["r.json", "taken", "x.npy", "y.npy", "yp.npy", "yp.npy.provenance.json"]
    );
    // A missing directory: an error naming the output, no file.
    let o = fit_to(&dir.arg("no/such/dir/r.json"));
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no/such/dir/r.json"));
}

/// A feature file truncated by another process while `fit` has it mapped: the run ends with
/// exit 1 and one line naming the file (the SIGBUS handler of `npy::sigbus`), not death by
/// SIGBUS (status 135) with no message. The truncation is made once the child's
/// `/proc/PID/maps` lists the file, during an SGD run of many epochs, each of which reads every
/// row again from the map.
#[cfg(target_os = "linux")]
#[test]
fn a_feature_file_truncated_under_the_map_ends_the_run_with_one_line_naming_it() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = TempDir::new("mmap-truncate");
    let (n, d) = (20_000, 8);
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(1)).unwrap();
    let p = btl_pairs(n, &theta, &mut simulation_rng(2)).unwrap();
    npy::write_f64(dir.path("x.npy"), &p.x, &[n, d]).unwrap();
    npy::write_u8(dir.path("y.npy"), &p.y).unwrap();
    assert!(npy::load_matrix(dir.path("x.npy")).unwrap().is_mapped());
    let x = dir.arg("x.npy");
    let mut child = Command::new(env!("CARGO_BIN_EXE_privpref"))
        .args([
            "fit",
            "--x",
            &x,
            "--y",
            &dir.arg("y.npy"),
            "--loss",
            "mle",
            "--radius",
            "2",
            "--solver",
            "sgd",
            "--epochs",
            "1000000",
            "--threads",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn privpref");
    // Bounds on waiting only (the run ends at the first read after the truncation): a run that
    // ignored the truncation would take far longer than the limit and be killed, failing.
    let limit = Duration::from_secs(120);
    let start = Instant::now();
    let maps = format!("/proc/{}/maps", child.id());
    let canonical = std::fs::canonicalize(dir.path("x.npy")).unwrap();
    let canonical = canonical.to_string_lossy().into_owned();
    loop {
        let listed = std::fs::read_to_string(&maps).unwrap_or_default();
        if listed.contains(&canonical) {
            break;
        }
        if child.try_wait().unwrap().is_some() || start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "the run ended before it mapped x.npy: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Only the header is left: every data page is gone.
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path("x.npy"))
        .unwrap()
        .set_len(64)
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run went on after its feature file was truncated");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{:?}: {err}", o.status);
    assert_eq!(
        err,
        format!(
            "privpref: {x}: the file shrank while it was memory-mapped (truncated by another \
             process); its data are gone\n"
        )
    );
    assert!(o.stdout.is_empty());
}

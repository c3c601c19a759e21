//! No command writes over one of its inputs: an output path that is an input (by any spelling,
//! a symbolic or a hard link) is refused with one line on stderr and exit 1, before any work, and
//! the input is left as it was.

use crate::support::{run, TempDir};
use privpref::data::npy;

fn inputs(dir: &TempDir) {
    npy::write_f64(dir.path("x.npy"), &[0.5, -1.0, 1.5, 0.25, -0.5, 1.0], &[3, 2]).unwrap();
    npy::write_u8(dir.path("y.npy"), &[1, 0, 1]).unwrap();
    std::fs::write(dir.path("y.npy.provenance.json"), b"{}").unwrap();
    std::fs::write(dir.path("fit.json"), b"{\"theta\": [0.1, 0.2]}").unwrap();
    std::fs::write(dir.path("states.npy"), b"not read before the check").unwrap();
}

fn refused(dir: &TempDir, args: &[String], victim: &str) {
    let before = std::fs::read(dir.path(victim)).unwrap();
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains("an output never replaces an input"), "{args:?}: {err}");
    assert_eq!(
        std::fs::read(dir.path(victim)).unwrap(),
        before,
        "{args:?} changed {victim}"
    );
}

#[test]
fn every_command_refuses_an_output_that_is_one_of_its_inputs() {
    let dir = TempDir::new("no-overwrite");
    inputs(&dir);
    let a = |s: &str| s.to_string();
    let (x, y, fit) = (dir.arg("x.npy"), dir.arg("y.npy"), dir.arg("fit.json"));
    let fit_args = |out: String| {
        vec![
            a("fit"),
            a("--x"),
            x.clone(),
            a("--y"),
            y.clone(),
            a("--loss"),
            a("mle"),
            a("--radius"),
            a("2"),
            a("--out"),
            out,
        ]
    };
    refused(&dir, &fit_args(x.clone()), "x.npy");
    refused(&dir, &fit_args(y.clone()), "y.npy");
    refused(
        &dir,
        &fit_args(dir.arg("y.npy.provenance.json")),
        "y.npy.provenance.json",
    );
    // Another spelling of the same path.
    refused(&dir, &fit_args(format!("{}/./x.npy", dir.arg(""))), "x.npy");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path("x.npy"), dir.path("link.npy")).unwrap();
        std::fs::hard_link(dir.path("x.npy"), dir.path("hard.npy")).unwrap();
        refused(&dir, &fit_args(dir.arg("link.npy")), "x.npy");
        refused(&dir, &fit_args(dir.arg("hard.npy")), "x.npy");
    }
    refused(
        &dir,
        &[
            a("privatize"),
            a("--y"),
            y.clone(),
            a("--eps"),
            a("1"),
            a("--out"),
            y.clone(),
        ],
        "y.npy",
    );
    refused(
        &dir,
        &[
            a("covariance"),
            a("--x"),
            x.clone(),
            a("--eps"),
            a("1"),
            a("--delta"),
            a("1e-6"),
            a("--feature-bound"),
            a("2"),
            a("--out"),
            x.clone(),
        ],
        "x.npy",
    );
    let states = dir.arg("states.npy");
    let policy = |outputs: &[&str]| {
        let mut v = vec![a("policy"), a("--theta"), fit.clone(), a("--states"), states.clone()];
        v.extend(outputs.iter().map(|o| a(o)));
        v
    };
    refused(&dir, &policy(&["--out", &fit]), "fit.json");
    refused(&dir, &policy(&["--actions-out", &states]), "states.npy");
    // Two outputs of one command that are one file.
    let p = dir.arg("p.json");
    let o = run(&policy(&["--out", &p, "--actions-out", &p]));
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is also the output --out"));
    // A fit whose output is a new file still runs.
    std::fs::remove_file(dir.path("y.npy.provenance.json")).unwrap();
    let o = run(&fit_args(dir.arg("new.json")));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

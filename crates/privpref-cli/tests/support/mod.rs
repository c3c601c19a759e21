#![allow(dead_code)]

//! Helpers for the tests that run the `privpref` binary: a scratch directory and the call.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory under the system temp dir, removed on drop. Named by the test process's
/// id, a per-process counter and `tag`, so no two live directories collide.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        // Tests of one binary run in parallel in one process: a counter keeps
        // two tests that use the same tag out of each other's directory.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("privpref-test-{}-{k}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }

    /// The path of `name` in this directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The path of `name` in this directory, as a command-line argument.
    pub fn arg(&self, name: &str) -> String {
        self.path(name).to_str().expect("UTF-8 temp path").to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The key directory of the tests (`PRIVPREF_KEY_DIR`): under the target's scratch directory,
/// so that `privatize` never creates a key pair in the user's home.
pub fn key_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("privpref-keys")
}

/// The `privpref` binary built for these tests, with the tests' key directory.
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_privpref"));
    c.env("PRIVPREF_KEY_DIR", key_dir());
    c
}

/// Runs the `privpref` binary built for these tests with `args` and waits for it.
pub fn run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    command().args(args).output().expect("spawn privpref")
}

/// The JSON a successful run wrote on stdout; fails the test, with the exit code and stderr,
/// when the run failed or stdout is not JSON.
pub fn json_of(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

/// `privpref policy --theta FIT --states STATES --covariance COV --max-passes P --out OUT` (the
/// radius rule of a private-MLE fit with its private covariance): the run must end converged
/// (exit 0) or at the pass limit (exit 3); returns the JSON it wrote to `out`.
pub fn policy_with_covariance(fit: &str, states: &str, cov: &str, max_passes: &str, out: &str) -> serde_json::Value {
    let o = run(&[
        "policy",
        "--theta",
        fit,
        "--states",
        states,
        "--covariance",
        cov,
        "--max-passes",
        max_passes,
        "--out",
        out,
    ]);
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(out).expect("the policy JSON")).expect("JSON in --out")
}

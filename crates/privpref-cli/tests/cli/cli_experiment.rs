//! `privpref experiment`: one command per paper experiment writes its Markdown, CSV and SVG
//! files; bad input is one stderr line and exit 1.

use crate::support;
use std::path::PathBuf;
use std::process::Output;
use support::run;

fn one_line_error(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "stderr: {err}");
    assert!(err.contains(needle), "expected `{needle}` in: {err}");
}

#[test]
fn dpo_experiment_writes_its_files() {
    let dir: PathBuf = std::env::temp_dir().join(format!("privpref-cli-exp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = run(&["experiment", "dpo", "--reps", "2", "--out-dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(dir.join("dpo.md")).unwrap();
    assert!(md.contains("predicted slope") && md.contains("Wall time"));
    let csv = std::fs::read_to_string(dir.join("dpo.csv")).unwrap();
    // Header + 3 privacy levels × 4 sizes × 2 repetitions.
    assert_eq!(csv.lines().count(), 1 + 3 * 4 * 2);
    let svg = std::fs::read_to_string(dir.join("dpo.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_one_line() {
    one_line_error(&run(&["experiment", "fig2"]), "unknown experiment 'fig2'");
    one_line_error(&run(&["experiment", "dpo", "--reps", "0"]), "reps");
    one_line_error(&run(&["experiment", "dpo", "--threads", "0"]), "threads");
}

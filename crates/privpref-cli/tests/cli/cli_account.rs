//! `privpref account` and `privpref calibrate`: JSON output against the library and the mpmath
//! reference, conservative calibration, one-line errors with non-zero exits.

use crate::{common, support};
use serde_json::Value;
use std::process::Output;
use support::{json_of, run};

fn one_line_error(o: &Output, code: i32, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "stderr: {err}");
    assert!(err.contains(needle), "expected `{needle}` in: {err}");
    assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
    assert!(o.stdout.is_empty());
}

fn reference_point(q: f64, grid: &str, conv: &str) -> (f64, f64) {
    let p = common::data_dir().join("rdp_reference.json");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let c = r["reference_points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["q"].as_f64() == Some(q) && c["grid"] == grid && c["conversion"] == conv)
        .unwrap()
        .clone();
    (c["epsilon"]["value"].as_f64().unwrap(), c["order"].as_f64().unwrap())
}

#[test]
fn account_reproduces_the_reference_points() {
    for (q, s, t, grid, orders) in [
        ("0.01", "1.0", "1000", "default", "default"),
        ("0.1", "2.0", "100", "default", "default"),
        ("0.1", "2.0", "100", "int256", "integers:256"),
    ] {
        for conv in ["improved", "classic"] {
            let o = run(&[
                "account",
                "--sampling-rate",
                q,
                "--noise-multiplier",
                s,
                "--steps",
                t,
                "--delta",
                "1e-5",
                "--neighbours",
                "add-remove",
                "--conversion",
                conv,
                "--orders",
                orders,
            ]);
            let v = json_of(&o);
            let (want, order) = reference_point(q.parse().unwrap(), grid, conv);
            let got = v["epsilon"].as_f64().unwrap();
            assert!(
                ((got - want) / want).abs() <= 1e-9,
                "{q} {s} {t} {grid} {conv}: {got} vs {want}"
            );
            assert_eq!(v["order"].as_f64().unwrap(), order);
            assert_eq!(v["neighbours"], "add-remove");
            assert_eq!(v["neighbours_proven"], true);
            assert_eq!(v["conversion"], conv);
            assert_eq!(v["steps"].as_u64().unwrap(), t.parse::<u64>().unwrap());
        }
    }
}

#[test]
fn account_defaults_to_the_replace_relation() {
    let base = [
        "account",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "1.0",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
    ];
    let v = json_of(&run(&base));
    assert_eq!(v["neighbours"], "replace");
    assert_eq!(v["num_orders"], 156);
    let mut ar = base.to_vec();
    ar.extend(["--neighbours", "add-remove"]);
    let w = json_of(&run(&ar));
    assert!(v["epsilon"].as_f64().unwrap() > w["epsilon"].as_f64().unwrap());
    let mut num = base.to_vec();
    num.extend(["--neighbours", "replace-numeric", "--orders", "1.5,2,4,8,16,32"]);
    let n = json_of(&run(&num));
    assert_eq!(n["neighbours_proven"], false);
    assert_eq!(n["orders"], "list");
}

#[test]
fn calibrate_is_conservative() {
    for (q, t, e, d, nb) in [
        ("0.01", "1000", "1", "1e-5", "add-remove"),
        ("0.02", "500", "3", "1e-5", "replace"),
        ("1", "10", "2", "1e-6", "add-remove"),
    ] {
        let v = json_of(&run(&[
            "calibrate",
            "--sampling-rate",
            q,
            "--steps",
            t,
            "--delta",
            d,
            "--epsilon",
            e,
            "--neighbours",
            nb,
        ]));
        let sigma = v["noise_multiplier"].as_f64().unwrap();
        let target: f64 = e.parse().unwrap();
        assert!(v["epsilon"].as_f64().unwrap() <= target);
        assert_eq!(v["target_epsilon"].as_f64().unwrap(), target);
        // Accounting the returned σ gives the same ε, below the target.
        let s = format!("{sigma:e}");
        let w = json_of(&run(&[
            "account",
            "--sampling-rate",
            q,
            "--noise-multiplier",
            &s,
            "--steps",
            t,
            "--delta",
            d,
            "--neighbours",
            nb,
        ]));
        assert!(w["epsilon"].as_f64().unwrap() <= target, "{w}");
    }
    // dp_accounting: 1.51312 (orders 2..256).
    let v = json_of(&run(&[
        "calibrate",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
        "--epsilon",
        "1",
        "--neighbours",
        "add-remove",
        "--orders",
        "integers:256",
    ]));
    assert!((v["noise_multiplier"].as_f64().unwrap() - 1.51312).abs() < 6e-6);
}

#[test]
fn invalid_input_is_one_line_and_non_zero() {
    let acc = |extra: &[&str]| {
        let mut a = vec![
            "account",
            "--sampling-rate",
            "0.01",
            "--noise-multiplier",
            "1.0",
            "--steps",
            "100",
            "--delta",
            "1e-5",
        ];
        a.extend_from_slice(extra);
        run(&a)
    };
    let set = |name: &str, val: &str| {
        let mut a = vec![
            "account",
            "--sampling-rate",
            "0.01",
            "--noise-multiplier",
            "1.0",
            "--steps",
            "100",
            "--delta",
            "1e-5",
        ];
        let i = a.iter().position(|x| *x == name).unwrap();
        a[i + 1] = val;
        run(&a)
    };
    one_line_error(&set("--sampling-rate", "0"), 1, "sampling-rate");
    one_line_error(&set("--sampling-rate", "1.5"), 1, "sampling-rate");
    one_line_error(&set("--sampling-rate", "nan"), 1, "sampling-rate");
    one_line_error(&set("--noise-multiplier", "-1"), 1, "noise-multiplier");
    one_line_error(&set("--noise-multiplier", "inf"), 1, "noise-multiplier");
    one_line_error(&set("--steps", "0"), 1, "steps");
    one_line_error(&set("--delta", "1"), 1, "delta");
    one_line_error(&set("--delta", "-0.1"), 1, "delta");
    one_line_error(&acc(&["--neighbours", "bogus"]), 1, "neighbours");
    one_line_error(&acc(&["--conversion", "bogus"]), 1, "conversion");
    one_line_error(&acc(&["--orders", "1.5,abc"]), 1, "orders");
    one_line_error(&acc(&["--orders", "0.5,2"]), 1, "orders");
    one_line_error(&acc(&["--orders", "integers:1"]), 1, "orders");
    // Malformed command lines: clap, exit 2, still one line.
    one_line_error(&set("--steps", "1.5"), 2, "steps");
    one_line_error(
        &run(&["account", "--sampling-rate", "0.1", "--steps", "10"]),
        2,
        "required",
    );
    // Calibration: invalid target, unreachable target.
    let cal = |e: &str, orders: &str| {
        run(&[
            "calibrate",
            "--sampling-rate",
            "0.1",
            "--steps",
            "10",
            "--delta",
            "1e-5",
            "--epsilon",
            e,
            "--orders",
            orders,
        ])
    };
    one_line_error(&cal("0", "default"), 1, "eps");
    one_line_error(&cal("-2", "default"), 1, "eps");
    one_line_error(&cal("0.001", "2,3"), 1, "cannot be certified");
}

/// At σ = 1e8 the fractional orders' series cancels to nothing; `account` still answers, with
/// an upper bound: no more than the unsampled Gaussian (q = 1, the closed form α/(2σ²)) on the
/// same orders, and the same as the integer order 1024 alone (its positive binomial sum), which
/// is the best order there.
#[test]
fn account_answers_at_a_huge_noise_multiplier() {
    let eps = |q: &str, orders: &str| {
        let o = run(&[
            "account",
            "--sampling-rate",
            q,
            "--noise-multiplier",
            "1e8",
            "--steps",
            "1000",
            "--delta",
            "1e-5",
            "--orders",
            orders,
        ]);
        let v = json_of(&o);
        (v["epsilon"].as_f64().unwrap(), v["order"].as_f64().unwrap())
    };
    let (e, order) = eps("0.01", "default");
    let (gauss, _) = eps("1", "default");
    let (alone, _) = eps("0.01", "1024");
    assert!(e.is_finite() && e > 0.0 && e <= gauss, "{e} vs the Gaussian's {gauss}");
    assert_eq!(order, 1024.0);
    assert_eq!(e.to_bits(), alone.to_bits(), "{e} vs {alone}");
}

/// Extreme numbers in messages are written with an exponent (`1e300`, not 301 digits; `1e-310`,
/// not 310 zeros), and a huge σ is answered, its JSON echo `1e+300` (serde_json's shortest form).
#[test]
fn extreme_numbers_are_echoed_with_an_exponent() {
    let o = run(&[
        "account",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "-1e300",
        "--steps",
        "10",
        "--delta",
        "1e-5",
    ]);
    one_line_error(&o, 1, "must be finite and > 0, got -1e300");
    assert!(String::from_utf8_lossy(&o.stderr).len() < 200);
    let o = run(&[
        "account",
        "--sampling-rate",
        "2e300",
        "--noise-multiplier",
        "2",
        "--steps",
        "10",
        "--delta",
        "1e-5",
    ]);
    one_line_error(&o, 1, "must be in (0, 1], got 2e300");
    assert!(String::from_utf8_lossy(&o.stderr).len() < 200);
    let o = run(&[
        "account",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "1e300",
        "--steps",
        "10",
        "--delta",
        "1e-5",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("\"noise_multiplier\": 1e+300"), "{text}");
}

//! The PLD accountant (`privpref::privacy::pld`): pessimism and accuracy against the exact
//! profile of the Gaussian mechanism (`q = 1`), never looser than the RDP accountant, agreement
//! with Google's `dp_accounting` (`tests/reference/gen_pld.py` → `tests/data/pld_reference.json`),
//! the σ calibration round trip, and typed errors.
//!
//! `cargo test --release --test library pld -- --nocapture` prints the measured gaps.

use privpref::privacy::calibrate::gaussian_profile_delta;
use privpref::privacy::pld::{Discretisation, PldAccountant};
use privpref::privacy::rdp::{Accountant, Accounting, Neighbours};
use privpref::Error;
use serde_json::Value;

fn reference() -> Value {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/pld_reference.json");
    serde_json::from_str(&std::fs::read_to_string(p).expect("tests/data/pld_reference.json")).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// At `q = 1`, `T` steps of the Gaussian mechanism with noise multiplier `σ` are one Gaussian
/// mechanism with `σ/√T` (sensitivity 1 for add/remove, 2 for the antipodal replace pair), whose
/// profile is exact (Balle & Wang 2018). The PLD's `δ(ε)` must lie above it (pessimism) and within
/// 1e-3 relative (connect-the-dots) or within the `T·h` shift of rounding up.
#[test]
fn q1_is_above_the_exact_gaussian_profile_and_close() {
    let mut worst = 0.0f64;
    for (neighbours, sens) in [(Neighbours::AddRemove, 1.0), (Neighbours::ReplaceNumeric, 2.0)] {
        let acc = PldAccountant::new(neighbours);
        for &(sigma, steps) in &[(1.0, 1u64), (2.0, 10), (5.0, 100), (10.0, 1000)] {
            let pld = acc.distribution(1.0, sigma, steps).unwrap();
            let std = sigma / (steps as f64).sqrt();
            for &eps in &[0.0, 0.3, 1.0, 2.0, 4.0] {
                let exact = gaussian_profile_delta(sens, std, eps);
                if exact < 1e-12 {
                    continue;
                }
                let got = pld.delta(eps);
                assert!(
                    got >= exact,
                    "{neighbours:?} σ={sigma} T={steps} ε={eps}: {got} < exact {exact}"
                );
                let r = got / exact - 1.0;
                worst = worst.max(r);
                assert!(
                    r <= 1e-3,
                    "{neighbours:?} σ={sigma} T={steps} ε={eps}: {got} vs exact {exact} ({r:e})"
                );
            }
        }
    }
    println!("q = 1, connect-the-dots: worst relative excess of δ over the exact profile {worst:.2e}");
    // Rounding up is sound too, and its error is the T·h shift: δ(ε) ≤ exact δ(ε − T·h).
    let acc = PldAccountant::new(Neighbours::AddRemove).with_discretisation(Discretisation::RoundUp);
    let (sigma, steps) = (2.0, 50u64);
    let pld = acc.distribution(1.0, sigma, steps).unwrap();
    let std = sigma / (steps as f64).sqrt();
    for &eps in &[0.5, 1.0, 2.0] {
        let got = pld.delta(eps);
        assert!(got >= gaussian_profile_delta(1.0, std, eps));
        assert!(got <= gaussian_profile_delta(1.0, std, eps - steps as f64 * 1e-4) * (1.0 + 1e-9));
    }
}

/// The PLD is never looser than the RDP accountant (improved conversion, default orders) at any
/// tested point, for add/remove and for the replace relation (against RDP's numerical
/// antipodal bound and its proven bound).
#[test]
fn never_looser_than_rdp() {
    let pts = [
        (0.001, 0.8, 10_000u64, 1e-5),
        (0.05, 3.1739, 400, 1e-5),
        (0.05, 1.557, 400, 1e-5),
        (0.01, 1.1, 1000, 1e-5),
        (0.1, 2.0, 100, 1e-5),
        (0.3, 1.5, 50, 1e-6),
    ];
    for &(q, s, t, d) in &pts {
        let pair = |n: Neighbours| {
            let mut acc = Accountant::default();
            acc.neighbours = n;
            let rdp = acc.epsilon(q, s, t, d).unwrap().epsilon;
            acc.accounting = Accounting::Pld;
            let r = acc.epsilon(q, s, t, d).unwrap();
            assert_eq!(r.accounting, Accounting::Pld);
            (r.epsilon, rdp)
        };
        let (pld_ar, rdp_ar) = pair(Neighbours::AddRemove);
        let (pld_rep, rdp_num) = pair(Neighbours::ReplaceNumeric);
        let (_, rdp_proven) = pair(Neighbours::Replace);
        println!(
            "q={q} σ={s} T={t} δ={d}: add/remove PLD {pld_ar:.4} RDP {rdp_ar:.4}; replace PLD {pld_rep:.4} RDP numeric {rdp_num:.4} proven {rdp_proven:.4}"
        );
        assert!(
            pld_ar <= rdp_ar,
            "add/remove at {q} {s} {t}: PLD {pld_ar} > RDP {rdp_ar}"
        );
        assert!(
            pld_rep <= rdp_num,
            "replace at {q} {s} {t}: PLD {pld_rep} > RDP {rdp_num}"
        );
        assert!(pld_rep <= rdp_proven);
    }
}

/// `ε` agrees with `dp_accounting`'s PLD accountant (same grid 1e-4) to `|Δε| ≤ 1e-3`.
#[test]
fn matches_dp_accounting() {
    let r = reference();
    let pts = r["points"].as_array().unwrap();
    assert!(pts.len() >= 12);
    let mut worst = 0.0f64;
    for p in pts {
        let (q, s, t, d) = (f(&p["q"]), f(&p["sigma"]), p["steps"].as_u64().unwrap(), f(&p["delta"]));
        let n = Neighbours::parse(p["neighbours"].as_str().unwrap()).unwrap();
        let want = f(&p["epsilon"]);
        let got = PldAccountant::new(n).epsilon(q, s, t, d).unwrap().epsilon;
        println!(
            "{} q={q} σ={s} T={t} δ={d}: ours {got:.6} dp_accounting {want:.6}",
            n.name()
        );
        worst = worst.max((got - want).abs());
        assert!((got - want).abs() <= 1e-3, "{n:?} q={q} σ={s} T={t}: {got} vs {want}");
    }
    println!("worst |Δε| = {worst:.2e}");
}

/// The calibrated σ meets the target, and 2e-6 less noise does not (the bisection stops at
/// relative width 1e-6): a σ that overshot by more, or undershot, fails.
#[test]
fn calibration_round_trip() {
    for n in [Neighbours::AddRemove, Neighbours::ReplaceNumeric] {
        let acc = PldAccountant::new(n);
        let (q, t, eps, d) = (0.05, 400u64, 3.0, 1e-5);
        let (sigma, rep) = acc.calibrate_sigma(q, t, eps, d).unwrap();
        assert!(rep.epsilon <= eps && rep.noise_multiplier == sigma);
        assert!(acc.epsilon(q, sigma, t, d).unwrap().epsilon <= eps);
        let below = acc.epsilon(q, sigma * (1.0 - 2e-6), t, d).unwrap().epsilon;
        assert!(
            below > eps,
            "{n:?}: σ = {sigma} is not the smallest (ε at 0.999998σ = {below})"
        );
        // The same through the accountant choice.
        let mut a = Accountant::default();
        a.neighbours = n;
        a.accounting = Accounting::Pld;
        let c = a.calibrate_sigma(q, t, eps, d).unwrap();
        assert_eq!(c.noise_multiplier, sigma);
    }
}

#[test]
fn bad_inputs_are_typed_errors() {
    let acc = PldAccountant::new(Neighbours::AddRemove);
    let bad = |r: Result<f64, Error>, name: &str| match r {
        Err(Error::InvalidParam { name: n, .. }) => assert_eq!(n, name),
        other => panic!("expected InvalidParam {name}, got {other:?}"),
    };
    let e = |q, s, t, d| acc.epsilon(q, s, t, d).map(|r| r.epsilon);
    bad(e(0.0, 1.0, 10, 1e-5), "sampling-rate");
    bad(e(1.5, 1.0, 10, 1e-5), "sampling-rate");
    bad(e(f64::NAN, 1.0, 10, 1e-5), "sampling-rate");
    bad(e(0.1, 0.0, 10, 1e-5), "noise-multiplier");
    bad(e(0.1, -1.0, 10, 1e-5), "noise-multiplier");
    bad(e(0.1, f64::INFINITY, 10, 1e-5), "noise-multiplier");
    bad(e(0.1, 1.0, 0, 1e-5), "steps");
    bad(e(0.1, 1.0, 10, 0.0), "delta");
    bad(e(0.1, 1.0, 10, 1.0), "delta");
    bad(e(0.1, 1.0, 10, f64::NAN), "delta");
    bad(acc.delta(0.1, 1.0, 10, f64::NAN), "eps");
    bad(acc.delta(0.1, 1.0, 10, -1.0), "eps");
    bad(acc.calibrate_sigma(0.1, 10, f64::INFINITY, 1e-5).map(|r| r.0), "eps");
    bad(acc.calibrate_sigma(0.1, 10, 0.0, 1e-5).map(|r| r.0), "eps");
    bad(acc.calibrate_sigma(0.1, 0, 1.0, 1e-5).map(|r| r.0), "steps");
    bad(acc.with_grid(0.0).map(|a| a.grid), "pld-grid");
    bad(acc.with_grid(f64::NAN).map(|a| a.grid), "pld-grid");
    assert!(matches!(
        Accounting::parse("moments"),
        Err(Error::InvalidParam { name: "accountant", .. })
    ));
    // Far too little noise: the mass at +∞ alone exceeds δ, or the grid is too long.
    assert!(acc.epsilon(0.5, 0.01, 1000, 1e-5).is_err());
}

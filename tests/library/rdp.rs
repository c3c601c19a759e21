//! The RDP accountant (`privpref::privacy::rdp`) against an independent 40-digit mpmath
//! computation (`tests/reference/gen_rdp.py` → `tests/data/rdp_reference.json`: direct binomial
//! sums and quadrature of the defining integrals), monotonicity in every argument, the validity
//! of the (ε, δ) conversion against the exact Gaussian privacy profile, and the conservative σ
//! search (never under-noised).
//!
//! `cargo test --release --test library rdp -- --nocapture` prints the worst relative errors.

use privpref::privacy::calibrate::gaussian_profile_delta;
use privpref::privacy::rdp::{
    default_orders, integer_orders, parse_orders, replace_numeric_rdp, sgm_rdp, step_rdp, Accountant, Conversion,
    Neighbours, RdpCurve, MAX_ORDERS,
};
use privpref::Error;
use serde_json::Value;

/// Acceptance bound of the issue: ≤ 1e-9 relative to the high-precision reference.
const TOL: f64 = 1e-9;

fn reference() -> Value {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/rdp_reference.json");
    serde_json::from_str(&std::fs::read_to_string(p).expect("tests/data/rdp_reference.json")).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        ((a - b) / b).abs()
    }
}

fn grid(r: &Value, name: &str) -> Vec<f64> {
    r["orders"][name].as_array().unwrap().iter().map(f).collect()
}

fn accountant(r: &Value, grid_name: &str, neighbours: &str, conversion: &str) -> Accountant {
    let mut a = Accountant::new(grid(r, grid_name), Neighbours::parse(neighbours).unwrap()).unwrap();
    a.conversion = Conversion::parse(conversion).unwrap();
    a
}

#[test]
fn the_order_grids_are_the_reference_grids() {
    let r = reference();
    assert_eq!(default_orders(), grid(&r, "default"));
    assert_eq!(integer_orders(256), grid(&r, "int256"));
    assert_eq!(default_orders().len(), 156);
}

/// The order specs of the front ends: the two named grids, a list, and the rejected specs.
#[test]
fn order_specs_name_their_grids() {
    assert_eq!(
        parse_orders("default").unwrap(),
        (default_orders(), "default".to_string())
    );
    assert_eq!(
        parse_orders("integers:256").unwrap(),
        (integer_orders(256), "integers:256".to_string())
    );
    let (max, _) = parse_orders(&format!("integers:{MAX_ORDERS}")).unwrap();
    assert_eq!(max.len(), MAX_ORDERS - 1);
    assert_eq!(parse_orders("integers:2").unwrap().0, vec![2.0]);
    assert_eq!(
        parse_orders("1.5, 2,4 ").unwrap(),
        (vec![1.5, 2.0, 4.0], "list".to_string())
    );
    // A list is only parsed: the accountant checks its orders.
    let (low, _) = parse_orders("0.5,2").unwrap();
    assert!(Accountant::new(low, Neighbours::AddRemove).is_err());
    for bad in [
        "integers:1",
        "integers:0",
        "integers:-3",
        "integers:x",
        "integers:",
        &format!("integers:{}", MAX_ORDERS + 1),
        "1.5,abc",
        "many",
        "",
        "2,,4",
    ] {
        match parse_orders(bad) {
            Err(Error::InvalidParam { name, .. }) => assert_eq!(name, "orders", "{bad:?}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

#[test]
fn per_order_rdp_matches_mpmath() {
    let r = reference();
    let mut worst = (0.0f64, String::new());
    let mut worst_frac = 0.0f64;
    let cases = r["sgm_per_order"].as_array().unwrap();
    for c in cases {
        let (q, s, a) = (f(&c["q"]), f(&c["sigma"]), f(&c["order"]));
        let want = f(&c["rdp"]["value"]);
        let got = sgm_rdp(q, s, a).unwrap();
        let e = rel(got, want);
        assert!(e <= TOL, "q={q} σ={s} α={a}: {got} vs {want} ({e:e})");
        if e > worst.0 {
            worst = (e, format!("q={q} σ={s} α={a}"));
        }
        if a.fract() != 0.0 {
            worst_frac = worst_frac.max(e);
        }
    }
    println!(
        "sampled Gaussian RDP, {} points: worst relative error {:.2e} at {} (fractional orders {:.2e})",
        cases.len(),
        worst.0,
        worst.1,
        worst_frac
    );
}

#[test]
fn replace_numeric_matches_mpmath() {
    let r = reference();
    let mut worst = 0.0f64;
    for c in r["replace_numeric_per_order"].as_array().unwrap() {
        let (q, s, a) = (f(&c["q"]), f(&c["sigma"]), f(&c["order"]));
        let want = f(&c["rdp"]["value"]);
        let got = replace_numeric_rdp(q, s, a).unwrap();
        let e = rel(got, want);
        assert!(e <= TOL, "q={q} σ={s} α={a}: {got} vs {want} ({e:e})");
        worst = worst.max(e);
        // The numeric replace divergence sits above add/remove and below the proven bound.
        let ar = sgm_rdp(q, s, a).unwrap();
        let tri = step_rdp(q, s, a, Neighbours::Replace).unwrap();
        let s2 = step_rdp(q, s, a, Neighbours::ReplaceSensitivity2).unwrap();
        assert!(
            ar <= got && got <= tri && got <= s2 * (1.0 + 1e-12),
            "q={q} σ={s} α={a}"
        );
    }
    println!("replace-numeric RDP: worst relative error {worst:.2e}");
}

#[test]
fn epsilon_grid_matches_mpmath() {
    let r = reference();
    let cases = r["epsilon"].as_array().unwrap();
    let mut worst = 0.0f64;
    for c in cases {
        let acc = accountant(
            &r,
            c["grid"].as_str().unwrap(),
            c["neighbours"].as_str().unwrap(),
            c["conversion"].as_str().unwrap(),
        );
        let (q, s, t, d) = (f(&c["q"]), f(&c["sigma"]), c["steps"].as_u64().unwrap(), f(&c["delta"]));
        let rep = acc.epsilon(q, s, t, d).unwrap();
        let want = f(&c["epsilon"]["value"]);
        let e = if want == 0.0 {
            rep.epsilon
        } else {
            rel(rep.epsilon, want)
        };
        assert!(e <= TOL, "{c}: got {} ({e:e})", rep.epsilon);
        if want > 0.0 {
            assert_eq!(rep.order, f(&c["order"]), "{c}: best order");
        }
        worst = worst.max(e);
    }
    println!("epsilon, {} cases: worst relative error {worst:.2e}", cases.len());
}

/// Two reference points (add/remove, δ = 1e-5), pinned to the mpmath values, and the
/// `dp_accounting` numbers for the second one (integer orders 2..256).
#[test]
fn reference_points() {
    let r = reference();
    for c in r["reference_points"].as_array().unwrap() {
        let grid_name = c["grid"].as_str().unwrap();
        let conv = c["conversion"].as_str().unwrap();
        let acc = accountant(&r, grid_name, "add-remove", conv);
        let (q, s, t) = (f(&c["q"]), f(&c["sigma"]), c["steps"].as_u64().unwrap());
        let rep = acc.epsilon(q, s, t, 1e-5).unwrap();
        let want = f(&c["epsilon"]["value"]);
        assert!(rel(rep.epsilon, want) <= TOL, "{c}: {}", rep.epsilon);
        assert_eq!(rep.order, f(&c["order"]));
        println!(
            "q={q} σ={s} T={t} δ=1e-5 {grid_name} {conv}: ε = {} at order {} (mpmath {})",
            rep.epsilon,
            rep.order,
            c["epsilon"]["digits"].as_str().unwrap()
        );
    }
    // Pinned (mpmath, 40 digits; see tests/data/rdp_reference.json).
    let acc = Accountant::new(default_orders(), Neighbours::AddRemove).unwrap();
    let a = acc.epsilon(0.01, 1.0, 1000, 1e-5).unwrap();
    let b = acc.epsilon(0.1, 2.0, 100, 1e-5).unwrap();
    let pinned = |grid_name: &str, q: f64, conv: &str| -> f64 {
        r["reference_points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["grid"] == grid_name && f(&c["q"]) == q && c["conversion"] == conv)
            .map(|c| f(&c["epsilon"]["value"]))
            .unwrap()
    };
    assert!(rel(a.epsilon, pinned("default", 0.01, "improved")) <= TOL);
    assert!(rel(b.epsilon, pinned("default", 0.1, "improved")) <= TOL);
    // dp_accounting (orders 2..256) gives for (0.1, 2.0, 100, 1e-5): 2.586652 / 3.017247.
    assert!((pinned("int256", 0.1, "improved") - 2.586_652).abs() < 5e-7);
    assert!((pinned("int256", 0.1, "classic") - 3.017_247).abs() < 5e-7);
}

#[test]
fn calibration_never_undershoots_the_exact_boundary() {
    let r = reference();
    for c in r["calibration"].as_array().unwrap() {
        let acc = accountant(&r, "int256", "add-remove", "improved");
        let (q, t, e, d) = (
            f(&c["q"]),
            c["steps"].as_u64().unwrap(),
            f(&c["epsilon"]),
            f(&c["delta"]),
        );
        let star = f(&c["sigma_star"]["value"]);
        let cal = acc.calibrate_sigma(q, t, e, d).unwrap();
        // Never below the exact boundary (mpmath, 1e-22): the true ε at the returned σ is ≤ target.
        assert!(
            cal.noise_multiplier >= star,
            "{c}: σ = {} < σ* = {star}",
            cal.noise_multiplier
        );
        // ... and tight: within 1e-8 relative.
        assert!(
            cal.noise_multiplier / star - 1.0 <= 1e-8,
            "{c}: σ = {}",
            cal.noise_multiplier
        );
        assert!(cal.epsilon <= e);
        assert_eq!(cal.order, f(&c["order"]));
        println!(
            "calibrate q={q} T={t} ε={e} δ={d}: σ = {} (exact boundary {}), order {}",
            cal.noise_multiplier,
            c["sigma_star"]["digits"].as_str().unwrap(),
            cal.order
        );
    }
    // dp_accounting values (orders 2..256, 6 significant digits).
    let acc = Accountant::new(integer_orders(256), Neighbours::AddRemove).unwrap();
    for &(q, t, e, d, want) in &[
        (0.02, 500, 3.0, 1e-5, 1.02260),
        (0.01, 1000, 1.0, 1e-5, 1.51312),
        (1.0, 1, 1.0, 1e-5, 4.04539),
        (1.0, 100, 8.0, 1e-5, 6.38087),
        (0.02, 500, 1.5, 5e-6, 1.55226),
    ] {
        let s = acc.calibrate_sigma(q, t, e, d).unwrap().noise_multiplier;
        assert!((s - want).abs() < 6e-6, "({q}, {t}, {e}, {d}): {s} vs {want}");
    }
}

#[test]
fn calibration_is_conservative_and_tight_on_a_grid() {
    // The full grid for add/remove; a corner of it for the (slower: orders 2α, 2α − 1) replace bound.
    for (neighbours, full) in [(Neighbours::AddRemove, true), (Neighbours::Replace, false)] {
        let acc = Accountant::new(default_orders(), neighbours).unwrap();
        let pick =
            |v: &[f64], keep: &[f64]| -> Vec<f64> { v.iter().copied().filter(|x| full || keep.contains(x)).collect() };
        for &q in &pick(&[0.001, 0.02, 0.3, 1.0], &[0.02, 1.0]) {
            for &t in &[1u64, 100, 5000] {
                if !full && t != 100 {
                    continue;
                }
                for &e in &pick(&[0.3, 1.0, 8.0], &[1.0]) {
                    for &d in &pick(&[1e-6, 1e-3], &[1e-6]) {
                        let c = acc.calibrate_sigma(q, t, e, d).unwrap();
                        let s = c.noise_multiplier;
                        let at = acc.epsilon(q, s, t, d).unwrap().epsilon;
                        assert!(at <= e, "{neighbours:?} q={q} T={t} ε={e} δ={d}: ε(σ) = {at} > {e}");
                        assert_eq!(at, c.epsilon);
                        // One part in 1e8 less noise already fails the target.
                        let below = acc.epsilon(q, s * (1.0 - 1e-8), t, d).unwrap().epsilon;
                        assert!(
                            below > e * (1.0 - 1e-10),
                            "{neighbours:?} q={q} T={t} ε={e} δ={d}: not tight"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn monotone_in_every_argument() {
    let orders = default_orders();
    let qs = [1e-4, 1e-3, 0.01, 0.03, 0.1, 0.3, 0.6, 1.0];
    let ss = [0.6, 0.8, 1.0, 1.3, 2.0, 4.0, 10.0];
    let ts = [1u64, 3, 10, 100, 1000, 10_000];
    let ds = [1e-10, 1e-7, 1e-5, 1e-3, 0.1];
    // One-step curves per (q, σ); T steps and δ only enter through the composition/conversion.
    let curves: Vec<Vec<RdpCurve>> = qs
        .iter()
        .map(|&q| {
            ss.iter()
                .map(|&s| RdpCurve::sampled_gaussian(&orders, q, s, 1, Neighbours::AddRemove).unwrap())
                .collect()
        })
        .collect();
    let eps =
        |i: usize, j: usize, t: u64, d: f64| curves[i][j].times(t).epsilon(d, Conversion::Improved).unwrap().epsilon;
    // Strictly where ε > 0; ties allowed only at the floor ε = 0 of the improved conversion.
    let up = |a: f64, b: f64, what: &str| assert!(a < b || (a == 0.0 && b == 0.0), "{what}: {a} !< {b}");
    for i in 0..qs.len() {
        for j in 0..ss.len() {
            for &t in &ts {
                for &d in &ds {
                    let here = eps(i, j, t, d);
                    let at = format!("q={} σ={} T={t} δ={d}", qs[i], ss[j]);
                    if i + 1 < qs.len() {
                        up(here, eps(i + 1, j, t, d), &format!("q up from {at}"));
                    }
                    if j + 1 < ss.len() {
                        up(eps(i, j + 1, t, d), here, &format!("σ up from {at}"));
                    }
                }
                for w in ds.windows(2) {
                    up(
                        eps(i, j, t, w[1]),
                        eps(i, j, t, w[0]),
                        &format!("δ {w:?} q={} σ={} T={t}", qs[i], ss[j]),
                    );
                }
            }
            for &d in &ds {
                for w in ts.windows(2) {
                    up(
                        eps(i, j, w[0], d),
                        eps(i, j, w[1], d),
                        &format!("T {w:?} q={} σ={} δ={d}", qs[i], ss[j]),
                    );
                }
            }
        }
    }
    // The accountant agrees with the cached curves.
    let acc = Accountant::new(orders.clone(), Neighbours::AddRemove).unwrap();
    assert_eq!(
        acc.epsilon(qs[2], ss[2], 100, 1e-5).unwrap().epsilon,
        eps(2, 2, 100, 1e-5)
    );
    // Per-order RDP: increasing in q and in the order, decreasing in σ.
    for &s in &ss {
        for &a in &[1.1, 1.5, 2.0, 2.7, 5.0, 10.9, 32.0, 256.0] {
            for w in qs.windows(2) {
                assert!(
                    sgm_rdp(w[0], s, a).unwrap() < sgm_rdp(w[1], s, a).unwrap(),
                    "q {w:?} σ={s} α={a}"
                );
            }
        }
        for w in orders.windows(2) {
            assert!(sgm_rdp(0.05, s, w[0]).unwrap() <= sgm_rdp(0.05, s, w[1]).unwrap() * (1.0 + 1e-14));
        }
    }
    for &a in &[1.1, 2.5, 7.0, 64.0] {
        for w in ss.windows(2) {
            assert!(sgm_rdp(0.05, w[1], a).unwrap() < sgm_rdp(0.05, w[0], a).unwrap());
        }
    }
}

/// The improved conversion is a valid (ε, δ) bound: at q = 1, T Gaussian steps are one Gaussian
/// mechanism with noise σ/√T, whose exact privacy profile (Balle & Wang 2018) must not exceed δ
/// at the reported ε.
#[test]
fn conversion_never_undercuts_the_exact_gaussian_profile() {
    for conversion in [Conversion::Improved, Conversion::Classic] {
        let mut acc = Accountant::new(default_orders(), Neighbours::AddRemove).unwrap();
        acc.conversion = conversion;
        for &s in &[0.5, 1.0, 2.0, 5.0, 20.0] {
            for &t in &[1u64, 10, 100] {
                for &d in &[1e-9, 1e-5, 1e-2] {
                    let e = acc.epsilon(1.0, s, t, d).unwrap().epsilon;
                    let exact = gaussian_profile_delta(1.0, s / (t as f64).sqrt(), e);
                    assert!(
                        exact <= d * (1.0 + 1e-9),
                        "{conversion:?} σ={s} T={t} δ={d}: exact δ(ε={e}) = {exact}"
                    );
                }
            }
        }
    }
}

#[test]
fn relations_are_ordered_and_compose() {
    let orders = default_orders();
    for &(q, s, t) in &[(0.01, 1.0, 1000u64), (0.1, 2.0, 100), (0.05, 0.9, 300)] {
        let e = |n| {
            RdpCurve::sampled_gaussian(&orders, q, s, t, n)
                .unwrap()
                .epsilon(1e-5, Conversion::Improved)
                .unwrap()
                .epsilon
        };
        let (ar, rep, num) = (
            e(Neighbours::AddRemove),
            e(Neighbours::Replace),
            e(Neighbours::ReplaceNumeric),
        );
        assert!(ar < num && num < rep, "q={q}: {ar} {num} {rep}");
        // Composition: T steps = T single-step curves composed.
        let mut c = RdpCurve::zero(&orders).unwrap();
        let one = RdpCurve::sampled_gaussian(&orders, q, s, 1, Neighbours::AddRemove).unwrap();
        for _ in 0..t {
            c.compose(&one).unwrap();
        }
        let tt = RdpCurve::sampled_gaussian(&orders, q, s, t, Neighbours::AddRemove).unwrap();
        for (x, y) in c.values().iter().zip(tt.values()) {
            assert!(rel(*x, *y) < 1e-12);
        }
        // Adding a pure-DP part never lowers ε, and adds at most ε₀ (basic composition).
        let mut p = tt.clone();
        p.add_pure_dp(0.5).unwrap();
        let (e0, e1) = (
            tt.epsilon(1e-5, Conversion::Improved).unwrap().epsilon,
            p.epsilon(1e-5, Conversion::Improved).unwrap().epsilon,
        );
        assert!(e0 < e1 && e1 <= e0 + 0.5 + 1e-12);
    }
}

/// A reconstruction of Table 2 of Zhang et al. (2025) ("effective noise" of user-wise DP-SGD on
/// TL;DR, a term the paper does not define) as the add/remove noise multiplier with
/// `mn = 90 000` items, `n = 90 000/m` users, `ñ = 96`, 5 epochs (`T = ⌈5n/ñ⌉`), δ = 1e-5, default
/// orders; this reading matches the table to about 1.5 %. The values below are `dp_accounting`'s
/// σ to 3 decimals; ours must agree to rounding (and sit at or above, being conservative).
#[test]
fn table2_reconstruction_matches_dp_accounting() {
    let acc = Accountant::new(default_orders(), Neighbours::AddRemove).unwrap();
    let ms = [5usize, 10, 20, 50];
    for (eps, want) in [
        (1.0, [1.099, 1.280, 1.617, 2.391]),
        (3.0, [0.724, 0.807, 0.926, 1.180]),
        (8.0, [0.531, 0.578, 0.638, 0.750]),
    ] {
        for (&m, &w) in ms.iter().zip(&want) {
            let n = 90_000 / m;
            let t = (5 * n).div_ceil(96) as u64;
            let s = acc
                .calibrate_sigma(96.0 / n as f64, t, eps, 1e-5)
                .unwrap()
                .noise_multiplier;
            assert!((s - w).abs() <= 6e-4, "ε={eps} m={m}: σ = {s} vs {w}");
        }
    }
}

//! The confidence radius under the corrupt–privatise–corrupt (CLC) order (Zhou, Wu & Orabona
//! (2025), proof of Thm 5.4, CLC case): its limits (`α₂ = 0` is CTL, `α₁ = 0` is LTC, exactly),
//! monotonicity in both fractions, and an independent recomputation from the four terms of the
//! proof's gradient decomposition.

use privpref::policy::radius::{clc_f, ctl_f, local_radius, ltc_f, CorruptionOrder, LocalRadius};
use privpref::Error;

fn base(eps: f64) -> LocalRadius {
    LocalRadius::new(Some(eps), 5000, 4, 2.0, 1.5)
}

fn clc(eps: f64, a1: f64, a2: f64) -> privpref::policy::radius::Calibration {
    let mut p = base(eps);
    p.order = CorruptionOrder::Clc;
    p.corruption = a1;
    p.corruption_after = a2;
    local_radius(&p).unwrap()
}

fn order(eps: f64, o: CorruptionOrder, a: f64) -> privpref::policy::radius::Calibration {
    let mut p = base(eps);
    p.order = o;
    p.corruption = a;
    local_radius(&p).unwrap()
}

#[test]
fn limits_are_ctl_and_ltc_exactly() {
    for eps in [0.1, 0.5, 1.0, 4.0] {
        for a in [0.0, 1e-6, 0.01, 0.2, 0.49] {
            // α₂ = 0: corruption then RR, nothing after: CTL.
            let (c, t) = (clc(eps, a, 0.0), order(eps, CorruptionOrder::Ctl, a));
            if a > 0.0 {
                assert_eq!(c.radius, t.radius, "eps {eps} α₁ {a}");
                assert_eq!(c.terms[0].1, t.terms[0].1);
            }
            // α₁ = 0: RR then corruption: LTC.
            let (c, l) = (clc(eps, 0.0, a), order(eps, CorruptionOrder::Ltc, a));
            assert_eq!(c.radius, l.radius, "eps {eps} α₂ {a}");
            assert_eq!(c.lambda, l.lambda);
        }
    }
}

#[test]
fn monotone_in_both_fractions() {
    let grid: Vec<f64> = (0..50).map(|i| i as f64 / 100.0).collect();
    for eps in [0.2, 1.0, 3.0] {
        for &a2 in &grid {
            let r: Vec<f64> = grid.iter().map(|&a1| clc(eps, a1, a2).radius).collect();
            assert!(
                r.windows(2).all(|w| w[1] > w[0]),
                "not increasing in α₁ at eps {eps}, α₂ {a2}: {r:?}"
            );
        }
        for &a1 in &grid {
            let r: Vec<f64> = grid.iter().map(|&a2| clc(eps, a1, a2).radius).collect();
            assert!(
                r.windows(2).all(|w| w[1] > w[0]),
                "not increasing in α₂ at eps {eps}, α₁ {a1}: {r:?}"
            );
        }
        // CLC at (α₁, α₂) is at least each single-corruption order at its own fraction.
        for (a1, a2) in [(0.01, 0.02), (0.1, 0.1), (0.3, 0.05)] {
            let c = clc(eps, a1, a2).radius;
            assert!(c >= order(eps, CorruptionOrder::Ctl, a1).radius);
            assert!(c >= order(eps, CorruptionOrder::Ltc, a2).radius);
        }
    }
}

#[test]
fn independent_recomputation() {
    // f = √α₁ (corruption before RR, ζ = 1) + c√α₂ (after RR, ζ = c) + the privacy term given
    // the corrupted label (sub-Gaussian c/2) + the standard term (1/2), each at failure η/2,
    // with c = (e^ε + 1)/(e^ε − 1); Γ = 2f/γ + 2B√λ, γ = 1/(2 + e^{X B} + e^{−X B}),
    // λ = X² d ln(n/η)/n.
    let (n, d, x, b, eta) = (5000.0f64, 4.0f64, 2.0f64, 1.5f64, 0.05f64);
    for eps in [0.1f64, 1.0, 4.0] {
        for (a1, a2) in [(0.01f64, 0.0f64), (0.05, 0.2), (0.3, 0.4), (1e-4, 1e-4)] {
            let c = (eps.exp() + 1.0) / (eps.exp() - 1.0);
            let sub_gaussian = |param: f64| param * (d.sqrt() + (2.0 * (2.0 / eta).ln()).sqrt()) / n.sqrt();
            let f = a1.sqrt() + c * a2.sqrt() + sub_gaussian(c / 2.0) + sub_gaussian(0.5);
            let gamma = 1.0 / (2.0 + (x * b).exp() + (-x * b).exp());
            let lambda = x * x * d * (n / eta).ln() / n;
            let want = 2.0 * f / gamma + 2.0 * b * lambda.sqrt();
            let got = clc(eps, a1, a2);
            assert!(
                (got.terms[0].1 - f).abs() < 1e-13 * f,
                "f eps {eps} ({a1}, {a2}): {} vs {f}",
                got.terms[0].1
            );
            assert!(
                (got.radius - want).abs() < 1e-12 * want,
                "Γ eps {eps}: {} vs {want}",
                got.radius
            );
            assert_eq!(got.terms[0].0, "f_CLC");
            // The public helpers agree with the radius and with each other.
            assert_eq!(
                clc_f(c, a1, a2, 5000, 4, eta),
                ctl_f(c, a1, 5000, 4, eta) + c * a2.sqrt()
            );
            assert_eq!(clc_f(c, 0.0, a2, 5000, 4, eta), ltc_f(c, a2, 5000, 4, eta));
        }
    }
}

#[test]
fn invalid_inputs_are_typed_errors() {
    let mut p = base(1.0);
    p.corruption_after = 0.1; // a second fraction without the CLC order
    assert!(matches!(
        local_radius(&p),
        Err(Error::InvalidParam {
            name: "corruption-after",
            ..
        })
    ));
    p.order = CorruptionOrder::Ctl;
    assert!(matches!(
        local_radius(&p),
        Err(Error::InvalidParam {
            name: "corruption-after",
            ..
        })
    ));
    p.order = CorruptionOrder::Clc;
    assert!(local_radius(&p).is_ok());
    for bad in [0.5, -0.1, f64::NAN] {
        p.corruption_after = bad;
        assert!(matches!(
            local_radius(&p),
            Err(Error::InvalidParam {
                name: "corruption-after",
                ..
            })
        ));
    }
    p.corruption_after = 0.1;
    p.corruption = 0.5;
    assert!(matches!(
        local_radius(&p),
        Err(Error::InvalidParam { name: "corruption", .. })
    ));
    p.corruption = 0.1;
    p.eps = None; // CLC needs the RR level
    assert!(matches!(
        local_radius(&p),
        Err(Error::InvalidParam { name: "order", .. })
    ));
}
